/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvpa-virt against libvirt's in-process test driver: test:///default
 * and test:///ABS/PATH.xml snapshots. The concurrency proof needs a real
 * daemon and lives in tests/libvirtd/.
 */
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libvirt/virterror.h>

#include "vpa-source.h"
#include "vpa-virt.h"
#include "vpa-attach.h"
#include "vpa-pipeline.h"
#include "vpa-test-util.h"

#define FIXTURE VPA_TEST_DATA "/virt/host.xml"

static VpaAddr
addr_of (const char *s)
{
  VpaAddr a = VPA_ADDR_NONE;
  g_assert_true (vpa_addr_parse (s, &a));
  return a;
}

static virConnectPtr
open_rw (const char *uri)
{
  g_autoptr (GError) error = NULL;
  virConnectPtr conn = vpa_virt_open (uri, FALSE, &error);

  g_assert_no_error (error);
  g_assert_nonnull (conn);
  return conn;
}

static gint
claim_order (gconstpointer a, gconstpointer b)
{
  const VpaClaim *ca = *(VpaClaim *const *) a;
  const VpaClaim *cb = *(VpaClaim *const *) b;
  int c = strcmp (ca->domain, cb->domain);

  return c != 0 ? c : (ca->addr < cb->addr ? -1 : ca->addr > cb->addr);
}

/* "name@addr[+running]" per claim; easy to compare and to read. */
static char *
claims_string_raw (GPtrArray *claims, gboolean sort)
{
  g_autoptr (GPtrArray) sorted = g_ptr_array_copy (claims, NULL, NULL);
  GString *s = g_string_new (NULL);

  /* The copy inherits the free function; it only borrows the claims. */
  g_ptr_array_set_free_func (sorted, NULL);
  if (sort)
    g_ptr_array_sort (sorted, claim_order);
  for (guint i = 0; i < sorted->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (sorted, i);
      char buf[VPA_ADDR_BUFLEN];
      g_string_append_printf (s, "%s%s@%s%s", i ? " " : "", c->domain,
                              vpa_addr_format (c->addr, buf), c->running ? "+running" : "");
    }
  return g_string_free (s, FALSE);
}

static char *
claims_string (GPtrArray *claims)
{
  return claims_string_raw (claims, TRUE);
}

static char *
conn_claims (virConnectPtr conn)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) claims = vpa_virt_load_claims (conn, &error);

  g_assert_no_error (error);
  return claims_string_raw (claims, FALSE);
}

/* ------------------------------------------------------------------ */

static void
test_open_error (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (virConnect) conn = vpa_virt_open ("test:///nonexistent/host.xml", TRUE, &error);

  g_assert_null (conn);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_true (g_str_has_prefix (error->message,
                                   "cannot connect to 'test:///nonexistent/host.xml': "));
  g_assert_null (strchr (error->message, '\n'));
}

/* The fixture through libvirt, field by field against what the file says. */
static void
test_load_fixture (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (virConnect) conn = vpa_virt_open ("test://" FIXTURE, TRUE, &error);
  g_autoptr (VpaHost) host = NULL;
  g_autofree char *claims = NULL;
  const VpaDevice *d;
  const VpaCell *c;

  g_assert_no_error (error);
  host = vpa_virt_load_host (conn, "test://" FIXTURE, &error);
  g_assert_no_error (error);
  g_assert_true (host->sealed);
  g_assert_cmpuint (host->devices->len, ==, 13);

  d = vpa_test_device_at (host, "0000:81:00.1");
  g_assert_cmpint (d->dev_type, ==, VPA_DEV_TYPE_PF);
  g_assert_cmpstr (d->vendor_id, ==, "8086");
  g_assert_cmpstr (d->product_id, ==, "1572");
  g_assert_cmphex (d->class_code, ==, 0x020000);
  g_assert_cmpint (d->numa_node, ==, 1);
  g_assert_cmpuint (d->max_vfs, ==, 64);
  g_assert_cmpint (d->iommu_group, ==, 41);
  g_assert_cmpstr (d->netdev, ==, "ens1f1");
  g_assert_cmpuint (d->vf_indices->len, ==, 4);

  d = vpa_test_device_at (host, "0000:81:03.2");
  g_assert_cmpint (d->dev_type, ==, VPA_DEV_TYPE_VF);
  g_assert_cmpuint (d->parent_addr, ==, addr_of ("0000:81:00.1"));
  g_assert_cmpstr (d->netdev, ==, "ens1f1v2");
  g_assert_null (vpa_test_device_at (host, "0000:81:03.1")->netdev);

  g_assert_cmpint (vpa_test_device_at (host, "0000:3c:00.0")->numa_node, ==, VPA_NUMA_NONE);
  g_assert_cmpint (vpa_test_device_at (host, "0000:3b:00.0")->dev_type, ==, VPA_DEV_TYPE_PCI);
  g_assert_cmpint (vpa_test_device_at (host, "0001:05:00.0")->numa_node, ==, 0);

  /* Cells come from the file's <capabilities>: the test driver has none. */
  g_assert_cmpuint (host->cells->len, ==, 3);
  c = vpa_host_cell (host, 1);
  g_assert_nonnull (c);
  g_assert_cmpint (c->socket, ==, 1);
  g_assert_cmpuint (c->cpus->len, ==, 4);
  g_assert_cmpuint (g_array_index (c->cpus, guint, 0), ==, 4);
  g_assert_cmpint (vpa_host_cell (host, 2)->socket, ==, VPA_SOCKET_NONE);

  claims = claims_string (host->claims);
  g_assert_cmpstr (claims, ==,
                   "vm-running@0000:3b:00.0+running vm-running@0000:81:02.1+running "
                   "vm-stopped@0000:81:03.2 vm-stopped@0001:05:00.0");
}

/* test:///default: topology from libvirt's capabilities. */
static void
test_load_default (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (virConnect) conn = vpa_virt_open ("test:///default", TRUE, &error);
  g_autoptr (VpaHost) host = vpa_virt_load_host (conn, "test:///default", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (host->devices->len, ==, 0);
  g_assert_cmpuint (host->cells->len, ==, 2);
  g_assert_cmpint (vpa_host_cell (host, 0)->socket, ==, 0);
  g_assert_cmpint (vpa_host_cell (host, 1)->socket, ==, 1);
  g_assert_cmpuint (vpa_host_cell (host, 1)->cpus->len, ==, 8);
  g_assert_cmpuint (host->claims->len, ==, 0);
}

static void
test_source_register (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;

  vpa_virt_register ();
  vpa_virt_register ();
  host = vpa_source_load ("test:///default", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (host->cells->len, ==, 2);
  g_assert_cmpstr (host->source, ==, "test:///default");
  g_clear_pointer (&host, vpa_host_free);

  /* Not libvirt's: a fleet store's URI stays unknown here. */
  host = vpa_source_load ("sqlite:///var/lib/fleet.db", &error);
  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
}

/* ------------------------------------------------------------------ */
/* The snapshot equivalence proof                                      */
/* ------------------------------------------------------------------ */

static void
assert_devices_equal (const VpaDevice *theirs, const VpaDevice *ours)
{
  /* libvirt's test driver does not keep <driver> (a real daemon reads it
   * from sysfs), so the driver is compared only when libvirt has one. */
  gboolean with_driver = theirs->driver != NULL;
  g_autofree char *a = vpa_test_device_string (theirs, with_driver);
  g_autofree char *b = vpa_test_device_string (ours, with_driver);

  g_assert_cmpstr (a, ==, b);
}

static void
test_equivalence (gconstpointer data)
{
  const char *path = data;
  g_autofree char *uri = g_strconcat ("test://", path, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) ours = vpa_snapshot_load (path, &error);
  g_autoptr (virConnect) conn = NULL;
  g_autoptr (VpaHost) theirs = NULL;
  g_autofree char *ours_claims = NULL;
  g_autofree char *theirs_claims = NULL;

  g_assert_no_error (error);
  conn = vpa_virt_open (uri, TRUE, &error);
  g_assert_no_error (error);
  theirs = vpa_virt_load_host (conn, uri, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (theirs->devices->len, ==, ours->devices->len);
  g_assert_cmpuint (theirs->devices->len, >, 0);
  for (guint i = 0; i < ours->devices->len; i++)
    assert_devices_equal (vpa_host_device (theirs, i), vpa_host_device (ours, i));

  g_assert_cmpuint (theirs->cells->len, ==, ours->cells->len);
  for (guint i = 0; i < ours->cells->len; i++)
    {
      vpa_test_assert_cells_equal (&g_array_index (theirs->cells, VpaCell, i),
                                   &g_array_index (ours->cells, VpaCell, i));
    }

  ours_claims = claims_string (ours->claims);
  theirs_claims = claims_string (theirs->claims);
  g_assert_cmpstr (theirs_claims, ==, ours_claims);
}

/* ------------------------------------------------------------------ */
/* Claims                                                              */
/* ------------------------------------------------------------------ */

/* A UUID from the name, so that a redefinition keeps it (libvirt
 * refuses a new UUID for an existing name). */
static char *
name_uuid (const char *name)
{
  g_autofree char *h = g_compute_checksum_for_string (G_CHECKSUM_MD5, name, -1);

  return g_strdup_printf ("%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

static char *
domain_xml (const char *name, const char *addr, const char *extra)
{
  VpaAddr a = addr_of (addr);
  g_autofree char *uuid = name_uuid (name);

  return g_strdup_printf (
    "<domain type='test'><name>%s</name><uuid>%s</uuid><memory>65536</memory>"
    "<os><type>hvm</type></os>"
    "<devices><hostdev mode='subsystem' type='pci' managed='yes'><source>"
    "<address domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/></source>"
    "</hostdev>%s</devices></domain>",
    name, uuid, VPA_ADDR_DOMAIN (a), VPA_ADDR_BUS (a), VPA_ADDR_SLOT (a), VPA_ADDR_FUNCTION (a),
    extra != NULL ? extra : "");
}

static void
define_raw (virConnectPtr conn, const char *xml)
{
  g_autoptr (virDomain) dom = virDomainDefineXML (conn, xml);

  if (dom == NULL)
    g_test_message ("define failed: %s", virGetLastErrorMessage ());
  g_assert_nonnull (dom);
}

static gboolean
domain_exists (virConnectPtr conn, const char *name)
{
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, name);
  return dom != NULL;
}

static void
test_claims_states (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *run = domain_xml (
    "d-run", "0000:81:10.0",
    "<interface type='hostdev' managed='yes'><source><address type='pci' domain='0' "
    "bus='0x81' slot='0x10' function='1'/></source></interface>"
    "<interface type='network'><source network='default'/></interface>"
    "<hostdev mode='subsystem' type='usb'><source><vendor id='0x1'/><product id='0x2'/>"
    "</source></hostdev>");
  g_autofree char *next_boot = domain_xml ("d-run", "0000:81:10.4", NULL);
  g_autofree char *def = domain_xml ("d-def", "0000:81:10.2", NULL);
  g_autofree char *trans = domain_xml ("d-trans", "0000:81:10.3", NULL);
  g_autoptr (virDomain) dom = NULL;
  g_autoptr (virDomain) transient = NULL;
  g_autofree char *claims = NULL;

  define_raw (conn, run);
  dom = virDomainLookupByName (conn, "d-run");
  g_assert_cmpint (virDomainCreate (dom), ==, 0);
  /* A running domain's next-boot configuration holds its devices too. */
  define_raw (conn, next_boot);
  define_raw (conn, def);
  transient = virDomainCreateXML (conn, trans, 0);
  g_assert_nonnull (transient);

  claims = conn_claims (conn);
  g_assert_cmpstr (claims, ==,
                   "d-def@0000:81:10.2 d-run@0000:81:10.0+running "
                   "d-run@0000:81:10.1+running d-run@0000:81:10.4 "
                   "d-trans@0000:81:10.3+running");
}

/* ------------------------------------------------------------------ */
/* Define                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
  const char *name;
  const char *const *candidates;
  gboolean ignore_claims; /* place the first candidate regardless */
  virConnectPtr sneak_conn;
  const char *sneak_xml; /* defined during placement, bypassing the lock */
} PlaceData;

static gboolean
claimed (GPtrArray *claims, VpaAddr addr)
{
  for (guint i = 0; i < claims->len; i++)
    {
      if (((VpaClaim *) g_ptr_array_index (claims, i))->addr == addr)
        return TRUE;
    }
  return FALSE;
}

static char *
place_first_free (GPtrArray *claims, gpointer user_data, GError **error)
{
  PlaceData *pd = user_data;

  if (pd->sneak_xml != NULL)
    define_raw (pd->sneak_conn, pd->sneak_xml);
  for (guint i = 0; pd->candidates[i] != NULL; i++)
    {
      if (pd->ignore_claims || !claimed (claims, addr_of (pd->candidates[i])))
        return domain_xml (pd->name, pd->candidates[i], NULL);
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "no free device for '%s'",
               pd->name);
  return NULL;
}

static const char *const three[] = { "0000:81:10.0", "0000:81:10.1", "0000:81:10.2", NULL };

static void
test_define_distinct (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *claims = NULL;

  for (guint i = 0; i < 4; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *name = g_strdup_printf ("vm%u", i);
      g_autofree char *out = NULL;
      PlaceData pd = { .name = name, .candidates = three };
      gboolean ok = vpa_virt_define_placed (conn, "test:///default", place_first_free, &pd,
                                            &out, &error);
      if (i < 3)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_cmpstr (out, ==, name);
        }
      else
        {
          g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
          g_assert_cmpstr (error->message, ==, "no free device for 'vm3'");
          g_assert_false (ok);
          g_assert_null (out);
          g_assert_false (domain_exists (conn, name));
        }
    }
  claims = conn_claims (conn);
  g_assert_cmpstr (claims, ==, "vm0@0000:81:10.0 vm1@0000:81:10.1 vm2@0000:81:10.2");
}

/* Whole-guest placement under the define lock: the fit sees the CPUs the
 * connection's domains pin, so two dedicated guests never share a CPU. */
typedef struct {
  const char *name;
  gboolean ignore_claims;
} NumaPlace;

static char *
place_numa_guest (GPtrArray *claims, gpointer user_data, GError **error)
{
  NumaPlace *np = user_data;
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", &local);
  g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/pinned.conf", &local);
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_autofree char *xml = g_strdup_printf (
    "<domain type='test'><name>%s</name><metadata>"
    "<vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
    "<vpa:numa placement='auto' cpu-policy='dedicated'/></vpa:affinity></metadata>"
    "<memory unit='KiB'>1048576</memory><vcpu>6</vcpu><os><type>hvm</type></os></domain>",
    np->name);

  g_assert_no_error (local);
  g_ptr_array_set_size (host->claims, 0);
  return vpa_pipeline_place (g_steal_pointer (&host), &(VpaPlaceOptions){ .claims = np->ignore_claims ? none : claims, .config = config }, &(VpaDoc){ xml, strlen (xml), np->name }, NULL, error);
}

static void
test_define_dedicated_cpus (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr (GError) error = NULL;
  NumaPlace a = { "ded0", FALSE }, b = { "ded1", FALSE }, c = { "ded2", FALSE }, d = { "ded3", TRUE };

  /* two nodes of 6 dedicated CPUs: two guests of 6 fit, a third does not */
  g_assert_true (vpa_virt_define_placed (conn, NULL, place_numa_guest, &a, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (vpa_virt_define_placed (conn, NULL, place_numa_guest, &b, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (vpa_virt_define_placed (conn, NULL, place_numa_guest, &c, NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_nonnull (strstr (error->message, "no host node has it"));
  g_assert_false (domain_exists (conn, "ded2"));
  g_clear_error (&error);
  /* a placer that ignores the claims is caught before the define */
  g_assert_false (vpa_virt_define_placed (conn, NULL, place_numa_guest, &d, NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_nonnull (strstr (error->message, "for domain 'ded3' is pinned by domain 'ded"));
  g_assert_false (domain_exists (conn, "ded3"));
  g_clear_error (&error);

  claims = vpa_virt_load_claims (conn, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *cl = g_ptr_array_index (claims, i);
      for (guint j = 0; cl->numa != NULL && j < cl->numa->dedicated->len; j++)
        {
          guint cpu = g_array_index (cl->numa->dedicated, guint, j);
          g_assert_false (g_hash_table_contains (seen, GUINT_TO_POINTER (cpu + 1)));
          g_hash_table_add (seen, GUINT_TO_POINTER (cpu + 1));
        }
    }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 12);
}

static void
test_define_precheck (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *holder = domain_xml ("holder", "0000:81:10.0", NULL);
  g_autoptr (GError) error = NULL;
  PlaceData pd = { .name = "vmx", .candidates = three, .ignore_claims = TRUE };

  define_raw (conn, holder);
  g_assert_false (vpa_virt_define_placed (conn, NULL, place_first_free, &pd, NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_cmpstr (error->message, ==,
                   "test:///default: device '0000:81:10.0' for domain 'vmx' conflicts with "
                   "device '0000:81:10.0' held by domain 'holder'");
  g_assert_false (domain_exists (conn, "vmx"));
}

/* A define that bypasses the lock between our claims read and our
 * define: verify must catch it and undefine the new domain. */
static void
test_define_bypass_new (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *bypass = domain_xml ("bypasser", "0000:81:10.0", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *claims = NULL;
  PlaceData pd = { .name = "vmn", .candidates = three, .sneak_conn = conn, .sneak_xml = bypass };

  g_assert_false (vpa_virt_define_placed (conn, NULL, place_first_free, &pd, NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_cmpstr (error->message, ==,
                   "test:///default: device '0000:81:10.0' for domain 'vmn' conflicts with "
                   "device '0000:81:10.0' held by domain 'bypasser' (defined meanwhile "
                   "without the define lock); the new definition was undefined");
  g_assert_false (domain_exists (conn, "vmn"));
  claims = conn_claims (conn);
  g_assert_cmpstr (claims, ==, "bypasser@0000:81:10.0");
}

/* The same when the define replaced an existing definition: the old
 * definition comes back, it is not undefined. */
static void
test_define_bypass_redefine (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *old = domain_xml ("vmr", "0000:81:10.1", NULL);
  g_autofree char *bypass = domain_xml ("bypasser", "0000:81:10.0", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *claims = NULL;
  PlaceData pd = { .name = "vmr", .candidates = three, .sneak_conn = conn, .sneak_xml = bypass };

  define_raw (conn, old);
  g_assert_false (vpa_virt_define_placed (conn, NULL, place_first_free, &pd, NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_true (g_str_has_suffix (error->message, "; the previous definition was restored"));
  claims = conn_claims (conn);
  g_assert_cmpstr (claims, ==, "bypasser@0000:81:10.0 vmr@0000:81:10.1");
}

/* A domain's own old claims do not count against its redefinition. */
static void
test_define_redefine_own (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *old = domain_xml ("vmr", "0000:81:10.0", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (virDomain) dom = NULL;
  g_autofree char *claims = NULL;
  PlaceData pd = { .name = "vmr", .candidates = three, .ignore_claims = TRUE };

  define_raw (conn, old);
  dom = virDomainLookupByName (conn, "vmr");
  g_assert_cmpint (virDomainCreate (dom), ==, 0);
  g_assert_true (vpa_virt_define_placed (conn, NULL, place_first_free, &pd, NULL, &error));
  g_assert_no_error (error);
  claims = conn_claims (conn);
  g_assert_cmpstr (claims, ==, "vmr@0000:81:10.0+running");
}

/* With the inventory, a PF conflicts with its VF held elsewhere. */
static void
test_define_pf_vf (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" FIXTURE);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) inventory = vpa_virt_load_host (conn, NULL, &error);
  const char *const pf[] = { "0000:81:00.0", NULL };
  PlaceData pd = { .name = "vm-pf", .candidates = pf, .ignore_claims = TRUE };

  g_assert_no_error (error);
  g_assert_false (vpa_virt_define_placed_full (conn, NULL, inventory, place_first_free, &pd,
                                               NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_true (strstr (error->message, "device '0000:81:00.0' for domain 'vm-pf' conflicts "
                                         "with device '0000:81:02.1' held by domain "
                                         "'vm-running'") != NULL);
  g_assert_false (domain_exists (conn, "vm-pf"));
  g_clear_error (&error);

  /* Without it only the same address conflicts. */
  g_assert_true (vpa_virt_define_placed (conn, NULL, place_first_free, &pd, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (domain_exists (conn, "vm-pf"));
}

/* As the CLI's define does: the request placed on the sample host
 * against the connection's claims. */
typedef struct {
  const char *name;
  const char *request; /* the <vpa:affinity> children */
} DefineRequest;

#define DUAL VPA_TEST_DATA "/hosts/dual-socket.xml"

static char *
place_request (GPtrArray *claims, gpointer user_data, GError **error)
{
  DefineRequest *dr = user_data;
  g_autoptr (GError) local = NULL;
  VpaHost *host = vpa_source_load (DUAL, &local);
  g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/dual-socket.conf",
                                                       &local);
  g_autofree char *xml = g_strdup_printf (
    "<domain type='test'><name>%s</name><metadata>"
    "<vpa:affinity xmlns:vpa='" VPA_XMLNS "'>%s</vpa:affinity></metadata>"
    "<memory unit='KiB'>1048576</memory><vcpu>2</vcpu><os><type>hvm</type></os>"
    "<devices/></domain>",
    dr->name, dr->request);

  g_assert_no_error (local);
  g_ptr_array_set_size (host->claims, 0);
  return vpa_pipeline_place (host, &(VpaPlaceOptions){ .claims = claims, .config = config }, &(VpaDoc){ xml, strlen (xml), dr->name }, NULL, error);
}

/* A domain with a NUMA binding and no device claims no device: a GPU
 * (a device without a PF) defined next to it is no conflict. */
static void
test_define_numa_only_neighbour (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" DUAL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) inventory = vpa_virt_load_host (conn, NULL, &error);
  g_autoptr (GPtrArray) claims = NULL;
  DefineRequest numaonly = { "numaonly", "<vpa:numa placement='auto'/>" };
  DefineRequest gpu = { "gpu1", "<vpa:flavor aliases='GPU:1'/>" };
  DefineRequest qat = { "qat1", "<vpa:flavor aliases='QuickAssist:1'/>" };
  gboolean numa_claim = FALSE;

  g_assert_no_error (error);
  g_assert_true (vpa_virt_define_placed_full (conn, NULL, inventory, place_request, &numaonly,
                                              NULL, &error));
  g_assert_no_error (error);
  claims = vpa_virt_load_claims (conn, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      if (strcmp (c->domain, "numaonly") == 0)
        {
          g_assert_false (VPA_ADDR_IS_VALID (c->addr));
          numa_claim = c->numa != NULL;
        }
    }
  g_assert_true (numa_claim);
  g_assert_true (vpa_virt_define_placed_full (conn, NULL, inventory, place_request, &gpu, NULL,
                                              &error));
  g_assert_no_error (error);
  g_assert_true (vpa_virt_define_placed_full (conn, NULL, inventory, place_request, &qat, NULL,
                                              &error));
  g_assert_no_error (error);
  g_assert_true (domain_exists (conn, "gpu1"));
  g_assert_true (domain_exists (conn, "qat1"));
}

/* ------------------------------------------------------------------ */
/* Attach to a bound guest                                             */
/* ------------------------------------------------------------------ */

#define SNC4 VPA_TEST_DATA "/hosts/snc-4.xml"

/* A guest placed with <vpa:numa placement="auto">: one shared cell per
 * node of nodes (its binding as place writes it: <numatune> and a
 * <vpa:placed-cell> per cell). */
static char *
bound_guest_xml (const char *name, const gint *nodes, guint n)
{
  g_autoptr (GString) placed = g_string_new (NULL);
  g_autoptr (GString) memnodes = g_string_new (NULL);
  g_autoptr (GString) cells = g_string_new (NULL);
  g_autoptr (GString) all = g_string_new (NULL);
  g_autofree char *uuid = name_uuid (name);

  for (guint i = 0; i < n; i++)
    {
      g_string_append_printf (placed, "<vpa:placed-cell cell='%u' host-node='%d' cpus='%d' memory-kib='1048576'/>", i, nodes[i], nodes[i] * 8);
      g_string_append_printf (memnodes, "<memnode cellid='%u' mode='strict' nodeset='%d'/>", i,
                              nodes[i]);
      g_string_append_printf (cells, "<cell id='%u' cpus='%u' memory='1048576' unit='KiB'/>", i,
                              i);
      g_string_append_printf (all, "%s%d", i > 0 ? "," : "", nodes[i]);
    }
  return g_strdup_printf (
    "<domain type='test'><name>%s</name><uuid>%s</uuid><metadata>"
    "<vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
    "<vpa:numa placement='auto' cpu-policy='shared'/>%s</vpa:affinity></metadata>"
    "<memory unit='KiB'>%u</memory><vcpu>%u</vcpu>"
    "<numatune><memory mode='strict' nodeset='%s'/>%s</numatune>"
    "<os><type>hvm</type></os><cpu><numa>%s</numa></cpu></domain>",
    name, uuid, placed->str, 1048576 * n, n, all->str, memnodes->str, cells->str);
}

typedef struct {
  virConnectPtr conn;
  const char *domain;
  const VpaPolicy *policy;
  char *xml;       /* what the placer returned */
  VpaAddr addr;    /* the device it chose */
  gboolean locked; /* the define lock was held while it ran */
} AttachData;

/* As the CLI does: the domain's XML and the placement under the lock. */
static char *
place_attach (GPtrArray *claims, gpointer user_data, VpaAttachRecord *record, GError **error)
{
  AttachData *ad = user_data;
  g_autoptr (GError) local = NULL;
  g_autoptr (virDomain) dom = virDomainLookupByName (ad->conn, ad->domain);
  g_autofree char *xml = virDomainGetXMLDesc (dom, 0);
  g_autoptr (VpaDomain) parsed = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), ad->domain }, &local);
  g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/snc-4.conf", &local);
  g_autoptr (VpaVirtLock) second = vpa_virt_lock_acquire (ad->conn, NULL, 10, NULL);
  VpaHost *host = vpa_source_load (SNC4, &local);
  char *out;

  g_assert_no_error (local);
  ad->locked = second == NULL;
  {
    VpaPortRequest want = { .device = "ua-hot", .physnet = "physnet1", .trusted = -1, .has_policy = ad->policy != NULL };
    VpaPlaceOptions opts = { .claims = claims, .config = config };
    g_auto (VpaAttachRecord) own = { 0 };

    if (ad->policy != NULL)
      want.policy = *ad->policy;
    if (record == NULL)
      record = &own;
    out = vpa_pipeline_attach_request (host, &opts, parsed, &want, NULL, record, error);
    ad->addr = out != NULL ? record->addr : VPA_ADDR_NONE;
  }
  ad->xml = g_strdup (out);
  return out;
}

/* Attaches a port under policy to domain on conn (its persistent
 * definition, which is defined again with it); the chosen address, or
 * NULL with error. The definition is put back as it was afterwards, so
 * that each attach starts from the same domain. */
static char *
attach_bound (virConnectPtr conn, const char *domain, VpaPolicy policy, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaHost) inventory = vpa_source_load (SNC4, NULL);
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, domain);
  g_autofree char *before = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE);
  AttachData ad = { conn, domain, &policy, NULL, VPA_ADDR_NONE, FALSE };
  VpaAddr addr = VPA_ADDR_NONE;
  g_autofree char *placed = NULL;
  char buf[VPA_ADDR_BUFLEN];
  gboolean ok;

  ok = vpa_virt_attach (conn, NULL,
                        &(VpaVirtAttachTarget){ domain, VIR_DOMAIN_AFFECT_CONFIG, inventory },
                        place_attach, &ad, &addr, &local);
  placed = ad.xml;
  g_assert_true (ad.locked);
  if (placed == NULL)
    {
      g_assert_false (ok);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  /* One <interface> element: the guest's binding is not touched. */
  g_assert_true (g_str_has_prefix (placed, "<interface type='hostdev' managed='yes'>"));
  g_assert_null (strstr (placed, "numatune"));
  g_assert_null (strstr (placed, "cputune"));
  if (!ok)
    {
      g_assert_nonnull (local);
      g_assert_nonnull (strstr (local->message, "cannot attach to domain"));
    }
  if (ok)
    {
      g_assert_cmpuint (addr, ==, ad.addr);
      define_raw (conn, before);
    }
  return g_strdup (vpa_addr_format (ad.addr, buf));
}

static gint
snc4_node_of (const char *addr)
{
  g_autoptr (VpaHost) host = vpa_source_load (SNC4, NULL);
  const VpaDevice *d = vpa_test_device_at (host, addr);

  g_assert_nonnull (d);
  return d->numa_node;
}

/* Holders of the physnet1 VFs of nodes, every one but keep. */
static void
hold_physnet1 (virConnectPtr conn, const char *prefix, const gint *nodes, guint n,
               const char *keep)
{
  static const char *const bus[] = { "18", "38", "58", "", "98", "b8", "d8" };

  for (guint i = 0; i < n; i++)
    {
      for (guint f = 0; f < 4; f++)
        {
          g_autofree char *addr = g_strdup_printf ("0000:%s:01.%u", bus[nodes[i]], f);
          g_autofree char *name = g_strdup_printf ("%s-%d-%u", prefix, nodes[i], f);
          g_autofree char *xml = NULL;

          if (g_strcmp0 (addr, keep) == 0 || strcmp (addr, "0000:18:01.0") == 0 ||
              strcmp (addr, "0000:98:01.0") == 0) /* db1 holds those */
            continue;
          xml = domain_xml (name, addr, NULL);
          define_raw (conn, xml);
        }
    }
}

static void
define_bound (virConnectPtr conn, const char *name, const gint *nodes, guint n, gboolean start)
{
  g_autofree char *xml = bound_guest_xml (name, nodes, n);
  g_autoptr (virDomain) dom = NULL;

  define_raw (conn, xml);
  dom = virDomainLookupByName (conn, name);
  if (start)
    g_assert_cmpint (virDomainCreate (dom), ==, 0);
}

/* required: a VF on the guest's node, never elsewhere; the other
 * domains' VFs are not handed out; none left there: refused. */
static void
test_attach_required (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (GError) error = NULL;
  g_autofree char *addr = NULL;
  const gint one[] = { 1 };

  define_bound (conn, "g1", one, 1, TRUE);
  addr = attach_bound (conn, "g1", VPA_POLICY_REQUIRED, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), ==, 1);
  g_clear_pointer (&addr, g_free);

  /* three of node 1's four held by other domains: the fourth */
  hold_physnet1 (conn, "h", one, 1, "0000:38:01.2");
  addr = attach_bound (conn, "g1", VPA_POLICY_REQUIRED, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (addr, ==, "0000:38:01.2");
  g_clear_pointer (&addr, g_free);

  /* all four held: refused, one line naming domain, port, policy, node */
  g_free (addr);
  addr = domain_xml ("h-last", "0000:38:01.2", NULL);
  define_raw (conn, addr);
  g_clear_pointer (&addr, g_free);
  addr = attach_bound (conn, "g1", VPA_POLICY_REQUIRED, &error);
  g_assert_null (addr);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_null (strchr (error->message, '\n'));
  g_assert_true (g_str_has_prefix (error->message, "attach: domain 'g1': port 'ua-hot' (policy required from port): no free device"));
  g_assert_nonnull (strstr (error->message, "node 0 is not the guest's (1)"));
}

/* preferred and legacy: the guest's node first; preferred then the
 * nearest node by the host's distances (same socket, 12) before the
 * far ones (21), even where those have more free VFs; legacy never
 * goes off the guest's nodes for a device with NUMA information. */
static void
test_attach_preferred_legacy (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (GError) error = NULL;
  g_autofree char *addr = NULL;
  const gint zero[] = { 0 }, node3[] = { 3 }, near[] = { 0, 1, 2 };

  define_bound (conn, "g0", zero, 1, FALSE);
  define_bound (conn, "g3", node3, 1, TRUE);
  addr = attach_bound (conn, "g0", VPA_POLICY_PREFERRED, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), ==, 0);
  g_clear_pointer (&addr, g_free);
  addr = attach_bound (conn, "g0", VPA_POLICY_LEGACY, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), ==, 0);
  g_clear_pointer (&addr, g_free);

  /* node 3 has no NIC: one VF left on the near nodes, 11 on the far ones */
  hold_physnet1 (conn, "h", near, 3, "0000:58:01.3");
  addr = attach_bound (conn, "g3", VPA_POLICY_PREFERRED, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (addr, ==, "0000:58:01.3");
  g_clear_pointer (&addr, g_free);
  addr = attach_bound (conn, "g3", VPA_POLICY_LEGACY, &error);
  g_assert_null (addr);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_true (g_str_has_prefix (error->message, "attach: domain 'g3': port 'ua-hot' (policy legacy from port): no free device"));
  g_assert_nonnull (strstr (error->message, "node 4 is not the guest's (3)"));
  g_clear_error (&error);

  /* near ones all held: preferred goes to the far socket */
  addr = domain_xml ("h-last", "0000:58:01.3", NULL);
  define_raw (conn, addr);
  g_clear_pointer (&addr, g_free);
  addr = attach_bound (conn, "g3", VPA_POLICY_PREFERRED, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), >=, 4);
}

/* socket: the guest's socket, whichever node of it; never the other. */
static void
test_attach_socket (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (GError) error = NULL;
  g_autofree char *addr = NULL;
  const gint seven[] = { 7 }, far[] = { 4, 5, 6 };

  define_bound (conn, "g7", seven, 1, TRUE);
  addr = attach_bound (conn, "g7", VPA_POLICY_SOCKET, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), >=, 4);
  g_assert_cmpint (snc4_node_of (addr), <=, 6);
  g_clear_pointer (&addr, g_free);

  hold_physnet1 (conn, "h", far, 3, NULL);
  addr = attach_bound (conn, "g7", VPA_POLICY_SOCKET, &error);
  g_assert_null (addr);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_null (strchr (error->message, '\n'));
  g_assert_true (g_str_has_prefix (error->message, "attach: domain 'g7': port 'ua-hot' (policy socket from port): no free device"));
  g_assert_nonnull (strstr (error->message, "(7)"));
}

/* A guest of two cells bound to nodes 3 and 1: required takes node 1
 * (the only one of its nodes with a NIC), socket any node of socket 0,
 * and with node 1's VFs gone required is refused naming both nodes. */
static void
test_attach_two_cells (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (GError) error = NULL;
  g_autofree char *addr = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autoptr (virDomain) dom = NULL;
  const gint nodes[] = { 3, 1 }, one[] = { 1 };

  define_bound (conn, "g31", nodes, 2, FALSE);
  dom = virDomainLookupByName (conn, "g31");
  before = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE);
  addr = attach_bound (conn, "g31", VPA_POLICY_REQUIRED, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), ==, 1);
  g_clear_pointer (&addr, g_free);
  addr = attach_bound (conn, "g31", VPA_POLICY_SOCKET, &error);
  g_assert_no_error (error);
  g_assert_cmpint (snc4_node_of (addr), <=, 2);
  g_clear_pointer (&addr, g_free);

  hold_physnet1 (conn, "h", one, 1, NULL);
  addr = attach_bound (conn, "g31", VPA_POLICY_REQUIRED, &error);
  g_assert_null (addr);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_nonnull (strstr (error->message, "node 0 is not the guest's (1,3)"));
  /* the binding is the guest's own: nothing rewrote it */
  after = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE);
  g_assert_cmpstr (before, ==, after);
}

/* attach never binds: a placement="auto" guest defined around us (no
 * binding recorded) is told to be placed first. */
static void
test_attach_unplaced (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (GError) error = NULL;
  g_autofree char *addr = NULL;
  g_autofree char *xml = g_strdup_printf (
    "<domain type='test'><name>gu</name><metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
    "<vpa:numa placement='auto'/></vpa:affinity></metadata>"
    "<memory unit='KiB'>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>");

  define_raw (conn, xml);
  addr = attach_bound (conn, "gu", VPA_POLICY_REQUIRED, &error);
  g_assert_null (addr);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_null (strchr (error->message, '\n'));
  g_assert_true (g_str_has_prefix (error->message, "attach: domain 'gu' (placement=\"auto\", no binding recorded: place or define it with virt-pci-affinity first): port 'ua-hot' (policy required from port)"));
}

/* ------------------------------------------------------------------ */
/* The lock                                                            */
/* ------------------------------------------------------------------ */

/* attach --config records the port it was given, as place would have:
 * the persistent definition holds the interface, <vpa:port> and
 * <vpa:placed>; check passes on it, and placing it again keeps the VF. */
static void
test_attach_records (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) inventory = vpa_source_load (SNC4, NULL);
  g_autoptr (virDomain) dom = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/snc-4.conf", &error);
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GPtrArray) results = NULL;
  g_autoptr (VpaDomain) parsed = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *port = NULL;
  g_autofree char *placed = NULL;
  g_autofree char *again = NULL;
  g_autofree char *expect_source = NULL;
  VpaPolicy policy = VPA_POLICY_REQUIRED;
  AttachData ad = { conn, "g1", &policy, NULL, VPA_ADDR_NONE, FALSE };
  VpaPlaceReport report = { 0 };
  const gint one[] = { 1 };
  char buf[VPA_ADDR_BUFLEN];
  gboolean ok = FALSE;

  define_bound (conn, "g1", one, 1, FALSE);
  dom = virDomainLookupByName (conn, "g1");
  /* neither --live nor --config: a domain that is not running is its
   * persistent definition */
  g_assert_true (vpa_virt_attach (conn, NULL, &(VpaVirtAttachTarget){ "g1", 0, inventory },
                                  place_attach, &ad, NULL, &error));
  g_assert_no_error (error);
  g_free (ad.xml);
  xml = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE);
  port = g_strdup ("<vpa:port device=\"ua-hot\" physnet=\"physnet1\" policy=\"required\" vnic-type=\"direct\"/>");
  placed = g_strdup_printf ("<vpa:placed device=\"ua-hot\" address=\"%s\" numa-node=\"1\" policy=\"required\" source=\"port\"/>",
                            vpa_addr_format (ad.addr, buf));
  expect_source = g_strdup_printf ("bus='0x%02x' slot='0x%02x' function='0x%x'",
                                   VPA_ADDR_BUS (ad.addr), VPA_ADDR_SLOT (ad.addr),
                                   VPA_ADDR_FUNCTION (ad.addr));
  g_test_message ("%s", xml);
  g_assert_nonnull (strstr (xml, port));
  g_assert_nonnull (strstr (xml, placed));
  g_assert_nonnull (strstr (xml, "<alias name='ua-hot'/>"));
  g_assert_nonnull (strstr (xml, expect_source));

  /* check on the result: the port, its device, its policy */
  claims = vpa_virt_load_claims (conn, &error);
  g_assert_no_error (error);
  parsed = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "g1" }, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (parsed->ports->len, ==, 1);
  results = vpa_pipeline_check (vpa_source_load (SNC4, NULL), claims, config, parsed, FALSE, &ok,
                                &error);
  g_assert_no_error (error);
  for (guint i = 0; i < results->len; i++)
    g_test_message ("%s", ((VpaCheckResult *) g_ptr_array_index (results, i))->line);
  g_assert_true (ok);
  g_assert_cmpstr (((VpaCheckResult *) g_ptr_array_index (results, 0))->device, ==, "ua-hot");

  /* placing again keeps the device and its records (the fixture's
   * binding is not the one place writes: the guest's cell is placed
   * again, its port is not) */
  again = vpa_pipeline_place (vpa_source_load (SNC4, NULL), &(VpaPlaceOptions){ .claims = claims, .config = config }, &(VpaDoc){ xml, strlen (xml), "g1" }, &report, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (again, port));
  g_assert_nonnull (strstr (again, placed));
  g_assert_nonnull (strstr (again, expect_source));
  g_assert_null (strstr (strstr (again, placed) + 1, "<vpa:placed device=\"ua-hot\""));
}

static void
test_lock (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaVirtLock) held = vpa_virt_lock_acquire (conn, NULL, 1000, &error);
  g_autoptr (VpaVirtLock) second = NULL;
  g_autofree char *pid = g_strdup_printf ("(held by pid %d)", (int) getpid ());
  g_autofree char *p1 = vpa_virt_lock_path ("qemu:///system");
  g_autofree char *p2 = vpa_virt_lock_path ("qemu:///system");
  g_autofree char *p3 = vpa_virt_lock_path ("qemu:///session");
  g_autofree char *p4 = vpa_virt_lock_path ("qemu+ssh://host/system");
  gint64 start;

  g_assert_no_error (error);
  g_assert_nonnull (held);

  /* flock conflicts between two open files even in one process. */
  start = g_get_monotonic_time ();
  second = vpa_virt_lock_acquire (conn, NULL, 50, &error);
  g_assert_null (second);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 50000);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_true (g_str_has_prefix (error->message, "timed out after 50 ms waiting for the "
                                                   "define lock '"));
  g_assert_true (g_str_has_suffix (error->message, pid));
  g_clear_error (&error);

  g_clear_pointer (&held, vpa_virt_lock_release);
  second = vpa_virt_lock_acquire (conn, NULL, 50, &error);
  g_assert_no_error (error);
  g_assert_nonnull (second);

  g_assert_cmpstr (p1, ==, p2);
  g_assert_cmpstr (p1, !=, p3);
  g_assert_true (g_str_has_suffix (p1, ".lock"));
  /* One lock for everyone on a system daemon, whatever the euid: root
   * and a member of libvirt's group must serialise with each other. */
  g_assert_true (g_str_has_prefix (p1, "/run/libvirt/virt-pci-affinity-define-qemu____system-"));
  g_assert_true (g_str_has_prefix (p4, "/run/libvirt/virt-pci-affinity-define-qemu_ssh___host_system-"));
  g_assert_false (g_str_has_prefix (p3, "/run/"));
  g_assert_true (g_str_has_prefix (p3, g_getenv ("XDG_RUNTIME_DIR")));
}

/* The lock cannot be pre-empted: whatever stands at its path that is not
 * a regular file of the lock's owner, or a directory others can write,
 * is refused at once, naming it (it used to make every define wait its
 * 30 s, or open what the squatter chose). */
static void
assert_lock_refused (virConnectPtr conn, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaVirtLock) lock = NULL;
  gint64 start = g_get_monotonic_time ();

  lock = vpa_virt_lock_acquire (conn, NULL, 5000, &error);
  g_assert_null (lock);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_cmpstr (error->message, ==, message);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 1000000);
}

static void
test_lock_refused (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autofree char *path = vpa_virt_lock_path ("test:///default");
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *other = g_strconcat (path, ".other", NULL);
  g_autofree char *msg = NULL;
  g_autoptr (VpaVirtLock) lock = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_unlink (path);

  g_assert_cmpint (mkfifo (path, 0666), ==, 0);
  msg = g_strdup_printf ("the define lock '%s' is a FIFO, not a regular file", path);
  assert_lock_refused (conn, msg);
  g_assert_cmpint (g_unlink (path), ==, 0);

  g_assert_cmpint (g_mkdir (path, 0755), ==, 0);
  g_free (msg);
  msg = g_strdup_printf ("the define lock '%s' is a directory, not a regular file", path);
  assert_lock_refused (conn, msg);
  g_assert_cmpint (g_rmdir (path), ==, 0);

  g_assert_true (g_file_set_contents (other, "", 0, NULL));
  g_assert_cmpint (symlink (other, path), ==, 0);
  g_free (msg);
  msg = g_strdup_printf ("the define lock '%s' is a symbolic link, not a regular file", path);
  assert_lock_refused (conn, msg);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_unlink (other), ==, 0);

  if (geteuid () == 0)
    {
      g_assert_true (g_file_set_contents (path, "", 0, NULL));
      g_assert_cmpint (chown (path, 65534, 65534), ==, 0);
      g_free (msg);
      msg = g_strdup_printf ("the define lock '%s' is owned by uid 65534, not uid 0: its owner "
                             "could hold it for ever",
                             path);
      assert_lock_refused (conn, msg);
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  else
    g_test_message ("not root: a lock file of another user is not made");

  g_assert_cmpint (g_chmod (dir, 0777), ==, 0);
  g_free (msg);
  msg = g_strdup_printf ("the define lock's directory '%s' is writable by others (mode 0777): "
                         "they could hold or replace the lock",
                         dir);
  assert_lock_refused (conn, msg);
  g_assert_cmpint (g_chmod (dir, 0700), ==, 0);

  lock = vpa_virt_lock_acquire (conn, NULL, 1000, NULL);
  g_assert_nonnull (lock);
}

static void
rm_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        {
          rm_tree (child);
        }
      else
        {
          g_unlink (child);
        }
    }
  g_rmdir (path);
}

/* A --live attach libvirt refuses (a domain that is not running, a
 * driver that cannot hot-plug) is the environment's refusal, exit 3:
 * the device XML is ours, not the caller's input. */
static void
test_attach_live_refused (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (VpaHost) inventory = vpa_source_load (SNC4, NULL);
  VpaPolicy policy = VPA_POLICY_REQUIRED;
  const gint one[] = { 1 };
  const char *const names[] = { "stopped", "running" };

  define_bound (conn, "stopped", one, 1, FALSE);
  define_bound (conn, "running", one, 1, TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GError) error = NULL;
      AttachData ad = { conn, names[i], &policy, NULL, VPA_ADDR_NONE, FALSE };

      g_assert_false (vpa_virt_attach (
        conn, NULL, &(VpaVirtAttachTarget){ names[i], VIR_DOMAIN_AFFECT_LIVE, inventory },
        place_attach, &ad, NULL, &error));
      g_free (ad.xml);
      g_test_message ("%s", error->message);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
      g_assert_nonnull (strstr (error->message, names[i]));
    }
}

/* The live <vpa:affinity> as libvirt hands it back (without its
 * namespace) takes the port's records and goes back in: attach --live
 * refused it as "no <vpa:affinity>" (exit 2) before. */
static void
test_attach_live_metadata (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" SNC4);
  g_autoptr (virDomain) dom = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *cur = NULL;
  g_autofree char *affinity = NULL;
  g_autofree char *back = NULL;
  g_auto (VpaAttachRecord) rec = { .device = g_strdup ("ua-hot"), .numa_node = 1 };
  const gint one[] = { 1 };

  define_bound (conn, "g1", one, 1, TRUE);
  dom = virDomainLookupByName (conn, "g1");
  cur = virDomainGetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, VPA_XMLNS,
                              VIR_DOMAIN_AFFECT_LIVE);
  g_assert_nonnull (cur);
  affinity = vpa_attach_affinity (cur, "g1", &rec, &error);
  g_assert_no_error (error);
  g_assert_cmpint (virDomainSetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, affinity, "vpa",
                                         VPA_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                   ==, 0);
  back = virDomainGetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, VPA_XMLNS,
                               VIR_DOMAIN_AFFECT_LIVE);
  g_assert_nonnull (strstr (back, "<port device=\"ua-hot\"/>"));
  g_assert_nonnull (strstr (back, "<numa placement=\"auto\""));
}

/* A running domain without any <vpa:affinity>: the new element goes in
 * as virDomainSetMetadata takes it (libvirt refused one that declared
 * the namespace itself: "failed to create a new XML namespace"). */
static void
test_attach_live_metadata_new (void)
{
  g_autoptr (virConnect) conn = open_rw ("test:///default");
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, "test");
  g_autoptr (GError) error = NULL;
  g_autofree char *affinity = NULL;
  g_autofree char *back = NULL;
  g_auto (VpaAttachRecord) rec = { .device = g_strdup ("ua-hot"), .numa_node = 0 };

  g_assert_null (virDomainGetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, VPA_XMLNS,
                                       VIR_DOMAIN_AFFECT_LIVE));
  affinity = vpa_attach_affinity (NULL, "test", &rec, &error);
  g_assert_no_error (error);
  g_assert_cmpint (virDomainSetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, affinity, "vpa",
                                         VPA_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                   ==, 0);
  back = virDomainGetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, VPA_XMLNS,
                               VIR_DOMAIN_AFFECT_LIVE);
  g_assert_nonnull (strstr (back, "<port device=\"ua-hot\"/>"));
}

/* attach's --trusted, --vnic-type and --mac: the port's request as a
 * <vpa:port> with them says it (trusted, a whole PF), the MAC in the
 * interface element, the record as place writes it. */
static void
test_attach_request_options (void)
{
  g_autoptr (virConnect) conn = open_rw ("test://" VPA_TEST_DATA "/hosts/dual-socket.xml");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config =
    vpa_config_load_file (VPA_TEST_DATA "/hosts/dual-socket.conf", &error);
  g_autoptr (GPtrArray) claims = vpa_virt_load_claims (conn, &error);
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, "web1");
  g_autofree char *xml = virDomainGetXMLDesc (dom, 0);
  g_autoptr (VpaDomain) parsed = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "web1" }, &error);
  g_auto (VpaAttachRecord) rec = { 0 };
  g_auto (VpaAttachRecord) pf_rec = { 0 };
  VpaPortRequest want = { .device = "ua-t", .physnet = "physnet1", .trusted = 1 };
  g_autofree char *iface = NULL;
  g_autofree char *pf_iface = NULL;
  g_autofree char *affinity = NULL;
  char buf[VPA_ADDR_BUFLEN];

  g_assert_no_error (error);
  iface = vpa_pipeline_attach_request (vpa_source_load ("test://" VPA_TEST_DATA "/hosts/dual-socket.xml", NULL),
                                       &(VpaPlaceOptions){ .claims = claims, .config = config },
                                       parsed, &want, "52:54:00:aa:bb:cc", &rec, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (vpa_addr_format (rec.addr, buf), ==, "0000:98:00.3");
  g_assert_nonnull (strstr (iface, "  <mac address='52:54:00:aa:bb:cc'/>\n"));
  affinity = vpa_attach_affinity (NULL, "web1", &rec, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (affinity, "<port device=\"ua-t\" physnet=\"physnet1\" vnic-type=\"direct\" trusted=\"true\"/>"));

  g_clear_pointer (&parsed, vpa_domain_free);
  parsed = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "web1" }, &error);
  want = (VpaPortRequest){ .device = "ua-pf", .physnet = "physnet2", .trusted = -1, .want_pf = TRUE };
  pf_iface = vpa_pipeline_attach_request (vpa_source_load ("test://" VPA_TEST_DATA "/hosts/dual-socket.xml", NULL),
                                          &(VpaPlaceOptions){ .claims = claims, .config = config },
                                          parsed, &want, NULL, &pf_rec, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (vpa_addr_format (pf_rec.addr, buf), ==, "0000:98:00.1");
  g_assert_null (strstr (pf_iface, "<mac"));
  g_assert_cmpstr (pf_rec.vnic_type, ==, "direct-physical");
}

/* s with every from replaced by to. */
static char *
replace (char *s, const char *from, const char *to)
{
  g_auto (GStrv) parts = g_strsplit (s, from, -1);

  g_free (s);
  return g_strjoinv (to, parts);
}

/* attach --locality-group: the port joins group g0 (switch, required)
 * of a placed GPU server domain, whose GPU and port were placed below
 * the switch of 0000:3a/3b, and gets a VF there, recorded with the level
 * reached; without the group the first free VF (bus 0x19) would do. A
 * group the domain lacks is refused. */
static char *
attach_gpu1 (const char *group, VpaAddr *addr, VpaAttachRecord *rec, GError **error)
{
  g_autoptr (virConnect) conn = open_rw ("test://" VPA_TEST_DATA "/hosts/gpu-server.xml");
  char *xml = vpa_test_read_fixture (VPA_TEST_DATA "/hook/domains/locality-placed.xml", NULL);
  g_autoptr (virDomain) dom = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (VpaConfig) config =
    vpa_config_load_file (VPA_TEST_DATA "/hosts/gpu-server.conf", NULL);
  g_autoptr (VpaDomain) parsed = NULL;
  VpaPortRequest want = { .device = "ua-rdma2", .physnet = "rdma", .trusted = -1, .locality_group = (char *) group };
  char *out;

  xml = replace (xml, "type='kvm'", "type='test'");
  xml = replace (xml, "0000:1a:00.0", "0000:3a:00.0");
  xml = replace (xml, "bus='0x1a'", "bus='0x3a'");
  xml = replace (xml, "0000:19:00.1", "0000:3b:00.1");
  xml = replace (xml, "bus='0x19' slot='0x00' function='0x1'", "bus='0x3b' slot='0x00' function='0x1'");
  dom = virDomainDefineXML (conn, xml);
  g_assert_nonnull (dom);
  claims = vpa_virt_load_claims (conn, NULL);
  parsed = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "gpu1" }, NULL);
  g_assert_nonnull (parsed);
  out = vpa_pipeline_attach_request (
    vpa_source_load ("test://" VPA_TEST_DATA "/hosts/gpu-server.xml", NULL),
    &(VpaPlaceOptions){ .claims = claims, .config = config }, parsed, &want, NULL, rec, error);
  *addr = out != NULL ? rec->addr : VPA_ADDR_NONE;
  g_free (xml);
  return out;
}

static void
test_attach_locality_group (void)
{
  g_auto (VpaAttachRecord) rec = { 0 };
  g_auto (VpaAttachRecord) plain_rec = { 0 };
  g_auto (VpaAttachRecord) bad_rec = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *iface = NULL;
  g_autofree char *plain = NULL;
  g_autofree char *affinity = NULL;
  VpaAddr addr = VPA_ADDR_NONE, plain_addr = VPA_ADDR_NONE;
  char buf[VPA_ADDR_BUFLEN];

  iface = attach_gpu1 ("g0", &addr, &rec, &error);
  g_assert_no_error (error);
  g_test_message ("g0: %s", vpa_addr_format (addr, buf));
  g_assert_cmpint (VPA_ADDR_BUS (addr), ==, 0x3b);
  g_assert_cmpstr (rec.locality_group, ==, "g0");
  g_assert_cmpint (rec.locality, ==, VPA_LOCALITY_SWITCH);
  affinity = vpa_attach_affinity (NULL, "gpu1", &rec, &error);
  g_assert_nonnull (strstr (affinity, "locality-group=\"g0\" locality=\"switch\"/>"));
  plain = attach_gpu1 (NULL, &plain_addr, &plain_rec, &error);
  g_assert_no_error (error);
  g_test_message ("no group: %s", vpa_addr_format (plain_addr, buf));
  g_assert_cmpint (VPA_ADDR_BUS (plain_addr), ==, 0x19);
  g_assert_null (plain_rec.locality_group);
  g_assert_null (attach_gpu1 ("g9", &addr, &bad_rec, &error));
  g_assert_cmpstr (error->message, ==,
                   "attach: --locality-group 'g9': domain 'guest' has no <vpa:locality-group name='g9'>");
}

int
main (int argc, char **argv)
{
  g_autofree char *runtime = g_dir_make_tmp ("vpa-test-virt-XXXXXX", NULL);
  int status;

  g_test_init (&argc, &argv, NULL);
  /* The locks of test:/// connections go here, not to the user's. */
  g_assert_nonnull (runtime);
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);

  g_test_add_func ("/virt/open/error", test_open_error);
  g_test_add_func ("/virt/load/fixture", test_load_fixture);
  g_test_add_func ("/virt/load/default", test_load_default);
  g_test_add_func ("/virt/source/register", test_source_register);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/virt", "*.xml", "/virt/equivalence/virt",
                              test_equivalence);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/hosts", "*.xml", "/virt/equivalence/hosts",
                              test_equivalence);
  g_test_add_func ("/virt/claims/states", test_claims_states);
  g_test_add_func ("/virt/define/distinct", test_define_distinct);
  g_test_add_func ("/virt/define/precheck", test_define_precheck);
  g_test_add_func ("/virt/define/dedicated-cpus", test_define_dedicated_cpus);
  g_test_add_func ("/virt/define/bypass-new", test_define_bypass_new);
  g_test_add_func ("/virt/define/bypass-redefine", test_define_bypass_redefine);
  g_test_add_func ("/virt/define/redefine-own", test_define_redefine_own);
  g_test_add_func ("/virt/define/pf-vf", test_define_pf_vf);
  g_test_add_func ("/virt/define/numa-only-neighbour", test_define_numa_only_neighbour);
  g_test_add_func ("/virt/lock", test_lock);
  g_test_add_func ("/virt/lock/refused", test_lock_refused);
  g_test_add_func ("/virt/attach/bound-required", test_attach_required);
  g_test_add_func ("/virt/attach/bound-preferred-legacy", test_attach_preferred_legacy);
  g_test_add_func ("/virt/attach/bound-socket", test_attach_socket);
  g_test_add_func ("/virt/attach/bound-two-cells", test_attach_two_cells);
  g_test_add_func ("/virt/attach/unplaced-auto", test_attach_unplaced);
  g_test_add_func ("/virt/attach/records", test_attach_records);
  g_test_add_func ("/virt/attach/live-refused", test_attach_live_refused);
  g_test_add_func ("/virt/attach/live-metadata", test_attach_live_metadata);
  g_test_add_func ("/virt/attach/live-metadata-new", test_attach_live_metadata_new);
  g_test_add_func ("/virt/attach/request-options", test_attach_request_options);
  g_test_add_func ("/virt/attach/locality-group", test_attach_locality_group);

  status = g_test_run ();
  rm_tree (runtime);
  return status;
}
