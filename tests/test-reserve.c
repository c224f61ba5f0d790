/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reservations' state file (vpa-reserve.h): format and parse are
 * inverse (data/reserve/good), every damaged file is refused in one line
 * (data/reserve/bad/NAME.reservations beside NAME.err), the bounds hold,
 * a link, a FIFO or a directory is never read, and an update is atomic
 * and never overwrites a file it cannot read.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vpa-reserve-apply.h"
#include "vpa-test-util.h"

static void
test_good (gconstpointer data)
{
  const char *path = data;
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  g_autofree char *text = vpa_test_read_fixture (path, &len);
  g_autoptr (VpaReserveSet) set = vpa_reserve_set_parse (text, len, path, &error);
  g_autofree char *again = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (set);
  again = vpa_reserve_set_format (set);
  g_assert_cmpstr (again, ==, text);
}

static void
test_bad (gconstpointer data)
{
  const char *path = data;
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  g_autofree char *text = vpa_test_read_fixture (path, &len);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *stem = g_strndup (path, strlen (path) - strlen (".reservations"));
  g_autofree char *golden = g_strconcat (stem, ".err", NULL);
  g_autoptr (VpaReserveSet) set = NULL;
  g_autofree char *got = NULL;

  set = vpa_reserve_set_parse (text, len, base, &error);
  g_assert_null (set);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  got = g_strconcat (error->message, "\n", NULL);
  vpa_test_assert_golden (golden, got);
}

static VpaAddr
addr (const char *s)
{
  VpaAddr a = VPA_ADDR_NONE;

  g_assert_true (vpa_addr_parse (s, &a));
  return a;
}

static void
test_set (void)
{
  g_autoptr (VpaReserveSet) set = vpa_reserve_set_new ("t");
  g_autofree char *text = NULL;
  const VpaReservation *r;

  vpa_reserve_set_put (set, vpa_reserve_item_new (addr ("0000:82:00.0"), VPA_RESERVE_QUARANTINE,
                                                  5, NULL, NULL, "fan"));
  vpa_reserve_set_put (set, vpa_reserve_item_new (addr ("0000:81:00.0"), VPA_RESERVE_ONE_TIME_USE,
                                                  7, "web1", NULL, NULL));
  vpa_reserve_set_put (set, vpa_reserve_item_new (addr ("0000:82:00.0"), VPA_RESERVE_QUARANTINE,
                                                  9, NULL, NULL, "dead"));
  g_assert_cmpuint (set->items->len, ==, 2);
  text = vpa_reserve_set_format (set);
  g_assert_cmpstr (text, ==,
                   "# virt-pci-affinity reservations 1\n"
                   "0000:81:00.0 one-time-use 7 - web1\n"
                   "0000:82:00.0 quarantine 9 dead\n");
  r = vpa_reserve_set_find (set, addr ("0000:82:00.0"));
  g_assert_nonnull (r);
  g_assert_cmpstr (r->reason, ==, "dead");
  g_assert_null (vpa_reserve_set_find (set, addr ("0000:83:00.0")));
  g_assert_true (vpa_reserve_set_remove (set, addr ("0000:81:00.0")));
  g_assert_false (vpa_reserve_set_remove (set, addr ("0000:81:00.0")));
  g_assert_cmpuint (set->items->len, ==, 1);
}

static void
test_blocks (void)
{
  g_autoptr (VpaReservation) q =
    vpa_reserve_item_new (addr ("0000:81:00.0"), VPA_RESERVE_QUARANTINE, 0, NULL, NULL, "x");
  g_autoptr (VpaReservation) otu = vpa_reserve_item_new (
    addr ("0000:81:00.1"), VPA_RESERVE_ONE_TIME_USE, 0, "web1", "AAAA-1", NULL);
  g_autoptr (VpaReservation) otu_no_uuid = vpa_reserve_item_new (
    addr ("0000:81:00.2"), VPA_RESERVE_ONE_TIME_USE, 0, "web1", NULL, NULL);
  g_autofree char *why = NULL;

  g_assert_true (vpa_reserve_blocks (q, "web1", NULL));
  g_assert_true (vpa_reserve_blocks (q, NULL, NULL));
  g_assert_false (vpa_reserve_blocks (otu, "web1", NULL));
  g_assert_false (vpa_reserve_blocks (otu, "web1", "aaaa-1"));
  g_assert_true (vpa_reserve_blocks (otu, "web1", "bbbb-2"));
  g_assert_true (vpa_reserve_blocks (otu, "web2", "aaaa-1"));
  g_assert_true (vpa_reserve_blocks (otu, NULL, NULL));
  g_assert_false (vpa_reserve_blocks (otu_no_uuid, "web1", "bbbb-2"));

  why = vpa_reserve_describe (otu);
  g_assert_cmpstr (why, ==,
                   "is reserved: one-time-use, used by domain 'web1' since "
                   "1970-01-01T00:00:00Z (virt-pci-affinity device release 0000:81:00.1 "
                   "returns it)");
}

/* The bounds: the most reservations a file may hold parse, one more is
 * refused; a file over the byte bound is refused before it is read. */
static void
test_bounds (void)
{
  GString *s = g_string_new ("# virt-pci-affinity reservations 1\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaReserveSet) set = NULL;
  g_autofree char *text = NULL;

  for (guint i = 0; i < VPA_RESERVE_MAX; i++)
    {
      g_string_append_printf (s, "0001:%02x:%02x.%u one-time-use 1 - dom%u\n", i / 256,
                              (i / 8) % 32, i % 8, i);
    }
  set = vpa_reserve_set_parse (s->str, s->len, "t", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (set->items->len, ==, VPA_RESERVE_MAX);
  g_clear_pointer (&set, vpa_reserve_set_free);
  g_string_append (s, "0002:00:00.0 quarantine 1 x\n");
  set = vpa_reserve_set_parse (s->str, s->len, "t", &error);
  g_assert_null (set);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, "more than 4096 reservations"));
  g_clear_error (&error);
  text = g_string_free (s, FALSE);
  set = vpa_reserve_set_parse (text, VPA_RESERVE_FILE_MAX + 1, "t", &error);
  g_assert_null (set);
  g_assert_cmpstr (error->message, ==, "t: over 1048576 bytes");
}

typedef struct {
  char *dir;
} Tmp;

static void
tmp_setup (Tmp *t, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  t->dir = g_dir_make_tmp ("vpa-reserve-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
tmp_teardown (Tmp *t, gconstpointer data)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", t->dir);

  g_assert_cmpint (system (cmd), ==, 0);
  g_free (t->dir);
}

static gboolean
put_quarantine (VpaReserveSet *set, gpointer data, gboolean *changed, GError **error)
{
  vpa_reserve_set_put (set, vpa_reserve_item_new (addr (data), VPA_RESERVE_QUARANTINE, 3, NULL,
                                                  NULL, "bad fan"));
  *changed = TRUE;
  return TRUE;
}

static void
test_load_missing (Tmp *t, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *gone = g_build_filename (t->dir, "nowhere", NULL);
  g_autoptr (VpaReserveSet) set = vpa_reserve_set_load (gone, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (set->items->len, ==, 0);
}

static void
test_update (Tmp *t, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *state = g_build_filename (t->dir, "state", NULL);
  g_autofree char *path = g_build_filename (state, "reservations", NULL);
  g_autofree char *text = NULL;
  g_autoptr (VpaReserveSet) set = NULL;
  g_autoptr (GDir) dir = NULL;
  const char *name;
  struct stat st;

  g_assert_true (vpa_reserve_set_update (state, put_quarantine, (gpointer) "0000:81:00.0", &error));
  g_assert_no_error (error);
  g_assert_true (vpa_reserve_set_update (state, put_quarantine, (gpointer) "0000:05:00.0", &error));
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==,
                   "# virt-pci-affinity reservations 1\n"
                   "0000:05:00.0 quarantine 3 bad fan\n"
                   "0000:81:00.0 quarantine 3 bad fan\n");
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0644);
  set = vpa_reserve_set_load (state, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (set->items->len, ==, 2);
  /* no temporary file left behind */
  dir = g_dir_open (state, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_true (strcmp (name, "reservations") == 0 || strcmp (name, "reservations.lock") == 0);
}

/* A file that cannot be read stops an update: it is never replaced by
 * one that forgets what it held. */
static void
test_update_damaged (Tmp *t, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (t->dir, "reservations", NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_set_contents (path, "garbage\n", -1, NULL));
  g_assert_false (vpa_reserve_set_update (t->dir, put_quarantine, (gpointer) "0000:81:00.0", &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "garbage\n");
}

/* A link (even to a good file), a FIFO and a directory are refused
 * without blocking or following. */
static void
test_load_hostile (Tmp *t, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (t->dir, "reservations", NULL);
  g_autofree char *target = g_build_filename (t->dir, "elsewhere", NULL);
  g_autoptr (VpaReserveSet) set = NULL;

  g_assert_true (g_file_set_contents (target, "# virt-pci-affinity reservations 1\n", -1, NULL));
  g_assert_cmpint (symlink (target, path), ==, 0);
  set = vpa_reserve_set_load (t->dir, &error);
  g_assert_null (set);
  g_assert_nonnull (strstr (error->message, "a symbolic link"));
  g_clear_error (&error);
  g_assert_cmpint (g_unlink (path), ==, 0);

  g_assert_cmpint (mkfifo (path, 0600), ==, 0);
  set = vpa_reserve_set_load (t->dir, &error);
  g_assert_null (set);
  g_assert_nonnull (strstr (error->message, "a FIFO, not a regular file"));
  g_clear_error (&error);
  g_assert_cmpint (g_unlink (path), ==, 0);

  g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
  set = vpa_reserve_set_load (t->dir, &error);
  g_assert_null (set);
  g_assert_nonnull (strstr (error->message, "a directory, not a regular file"));
}

/* A PF 0000:81:00.0 with VFs .1 and .2, and a device 0000:3d:00.0. */
static VpaHost *
small_host (void)
{
  VpaHost *host = vpa_host_new ("t");
  VpaAddr pf = addr ("0000:81:00.0");

  vpa_test_add_device (host, pf, "8086:1572", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 0, "ens1");
  vpa_test_add_device (host, addr ("0000:81:00.1"), "8086:154c", VPA_DEV_TYPE_VF, pf, 0, NULL);
  vpa_test_add_device (host, addr ("0000:81:00.2"), "8086:154c", VPA_DEV_TYPE_VF, pf, 0, NULL);
  vpa_test_add_device (host, addr ("0000:3d:00.0"), "8086:0443", VPA_DEV_TYPE_PCI,
                       VPA_ADDR_NONE, 0, NULL);
  return host;
}

/* The states of the four devices as letters: Free, Held, Blocked,
 * Reserved, in address order (3d:00.0, 81:00.0, 81:00.1, 81:00.2). */
static char *
states (VpaConfig *config, GPtrArray *claims, const char *viewer_xml)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) viewer = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  GString *s = g_string_new (NULL);

  if (viewer_xml != NULL)
    {
      viewer = vpa_domain_parse (&(VpaDoc){ viewer_xml, strlen (viewer_xml), "viewer" }, &error);
      g_assert_no_error (error);
    }
  inv = vpa_inventory_new_for (small_host (), config, claims, viewer, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < inv->host->devices->len; i++)
    g_string_append_c (s, "FHBR"[inv->state[i]]);
  return g_string_free (s, FALSE);
}

static GPtrArray *
claims_of (const char *domain, const char *where)
{
  GPtrArray *claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);

  if (domain != NULL)
    g_ptr_array_add (claims, vpa_claim_new (domain, addr (where), TRUE));
  return claims;
}

#define WEB1_NAMING_3D                                                                 \
  "<domain type='kvm'><name>web1</name><devices><hostdev mode='subsystem' type='pci'>" \
  "<source><address domain='0x0000' bus='0x3d' slot='0x00' function='0x0'/></source>"  \
  "</hostdev></devices></domain>"

/* Reservations in the inventory: a quarantined VF is reserved and keeps
 * its PF from being handed out whole; a one-time-use device is held
 * (used) while the domain that used it names it, free for that domain
 * when it is placed or checked again, reserved for everyone else. */
static void
test_apply (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load ("[device-spec all]\naddress=*:*:*.*\n");
  g_autofree char *s1 = NULL, *s2 = NULL, *s3 = NULL, *s4 = NULL, *s5 = NULL, *s6 = NULL;

  config->reservations = vpa_reserve_set_new ("t");
  s1 = states (config, NULL, NULL);
  g_assert_cmpstr (s1, ==, "FFFF");
  vpa_reserve_set_put (config->reservations,
                       vpa_reserve_item_new (addr ("0000:81:00.1"), VPA_RESERVE_QUARANTINE, 1,
                                             NULL, NULL, "flaps"));
  vpa_reserve_set_put (config->reservations,
                       vpa_reserve_item_new (addr ("0000:3d:00.0"), VPA_RESERVE_ONE_TIME_USE, 1,
                                             "web1", NULL, NULL));
  s2 = states (config, claims_of (NULL, NULL), NULL);
  g_assert_cmpstr (s2, ==, "RBRF");
  s3 = states (config, claims_of ("web1", "0000:3d:00.0"), NULL);
  g_assert_cmpstr (s3, ==, "HBRF");
  s4 = states (config, claims_of ("web2", "0000:3d:00.0"), NULL);
  g_assert_cmpstr (s4, ==, "RBRF");
  s5 = states (config, claims_of (NULL, NULL), WEB1_NAMING_3D);
  g_assert_cmpstr (s5, ==, "FBRF");
  s6 = states (config, claims_of (NULL, NULL),
               "<domain type='kvm'><name>web1</name><devices/></domain>");
  g_assert_cmpstr (s6, ==, "RBRF");
}

int
main (int argc, char **argv)
{
  g_autofree char *good = g_build_filename (VPA_TEST_DATA, "reserve", "good", NULL);
  g_autofree char *bad = g_build_filename (VPA_TEST_DATA, "reserve", "bad", NULL);

  g_test_init (&argc, &argv, NULL);
  vpa_test_add_fixture_cases (good, "*.reservations", "/reserve/good", test_good);
  vpa_test_add_fixture_cases (bad, "*.reservations", "/reserve/bad", test_bad);
  g_test_add_func ("/reserve/set", test_set);
  g_test_add_func ("/reserve/blocks", test_blocks);
  g_test_add_func ("/reserve/bounds", test_bounds);
  g_test_add_func ("/reserve/apply", test_apply);
  g_test_add ("/reserve/load-missing", Tmp, NULL, tmp_setup, test_load_missing, tmp_teardown);
  g_test_add ("/reserve/update", Tmp, NULL, tmp_setup, test_update, tmp_teardown);
  g_test_add ("/reserve/update-damaged", Tmp, NULL, tmp_setup, test_update_damaged, tmp_teardown);
  g_test_add ("/reserve/load-hostile", Tmp, NULL, tmp_setup, test_load_hostile, tmp_teardown);
  return g_test_run ();
}
