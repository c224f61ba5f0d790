/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fleet sync --watch` in process on libvirt's test:///default driver,
 * whose connections in one process share their domains and deliver
 * domain lifecycle events: the watcher runs the real CLI in a thread; this
 * thread defines and undefines a domain holding a VF of the host and
 * waits for its row to say so, then ends the watcher with SIGTERM. On
 * SQLite and PostgreSQL. The real daemon's case (restarts, node device
 * events) is tests/libvirtd/test-fleet-watch.sh.
 */
#include <signal.h>
#include <string.h>
#include <glib/gstdio.h>
#include <libvirt/libvirt.h>

#include "fleet-fixture.h"
#include "vpa-cli-fleet.h"
#include "vpa-fleet-hosts.h"
#include "vpa-reserve.h"
#include "vpa-virt.h"
#include "vpa-virt-watch.h"

#define DS_XML VPA_TEST_DATA "/hosts/dual-socket.xml"
#define DS_CONF VPA_TEST_DATA "/hosts/dual-socket.conf"
#define WATCH_URI "test:///default"
#define HOST "w1"
#define DEADLINE_US (2 * G_USEC_PER_SEC)

static GPtrArray *
claims_loader (const char *uri, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, TRUE, error);

  return conn != NULL ? vpa_virt_load_claims (conn, error) : NULL;
}

typedef struct {
  char *uri;
  char *conf;
  int rc;
} WatchThread;

static gpointer
watch_thread (gpointer data)
{
  WatchThread *t = data;
  char *argv[] = { (char *) "fleet", (char *) "sync", (char *) "--watch", (char *) "--store",
                   t->uri, (char *) "-c", (char *) WATCH_URI, (char *) "--inventory",
                   (char *) DS_XML, (char *) "--config", t->conf, (char *) "--host",
                   (char *) HOST, NULL };

  t->rc = vpa_cli_fleet (G_N_ELEMENTS (argv) - 1, argv);
  return NULL;
}

static void
first_value (const char *const *values, guint n, gpointer data)
{
  char **out = data;

  if (*out == NULL)
    *out = g_strdup (n > 0 && values[0] != NULL ? values[0] : "");
}

/* The first column of the first row of sql ($1 = arg), or NULL. */
static char *
store_value (VpaFleetStore *store, const char *sql, const char *arg)
{
  g_autoptr (GError) error = NULL;
  char *out = NULL;
  const char *params[] = { arg };

  g_assert_true (store->ops->statement (store, sql, params, arg != NULL ? 1 : 0, first_value,
                                        &out, NULL, &error));
  g_assert_no_error (error);
  return out;
}

#define HELD_BY "SELECT COALESCE(d.held_by, '-') FROM devices AS d JOIN hosts AS h" \
                " ON h.id = d.host_id WHERE h.name = '" HOST "' AND d.address = $1"

#define STATE "SELECT d.state FROM devices AS d JOIN hosts AS h" \
              " ON h.id = d.host_id WHERE h.name = '" HOST "' AND d.address = $1"

/* Waits until sql ($1 = arg) reads want; returns the wait in µs. */
static gint64
wait_value (VpaFleetStore *store, const char *sql, const char *arg, const char *want)
{
  gint64 start = g_get_monotonic_time ();

  for (;;)
    {
      g_autofree char *got = store_value (store, sql, arg);
      gint64 waited = g_get_monotonic_time () - start;

      if (g_strcmp0 (got, want) == 0)
        return waited;
      if (waited > 4 * DEADLINE_US)
        {
          g_error ("%s (%s): '%s', expected '%s' after %" G_GINT64_FORMAT " µs", sql, arg, got,
                   want, waited);
        }
      g_usleep (10 * 1000);
    }
}

static gint64
wait_held_by (VpaFleetStore *store, const char *addr, const char *want)
{
  return wait_value (store, HELD_BY, addr, want);
}

/* Quarantines addr (data) as `device quarantine` does. */
static gboolean
quarantine_edit (VpaReserveSet *set, gpointer data, gboolean *changed, GError **error)
{
  VpaAddr addr;

  g_assert_true (vpa_addr_parse (data, &addr));
  vpa_reserve_set_put (set, vpa_reserve_item_new (addr, VPA_RESERVE_QUARANTINE, 1, NULL, NULL,
                                                  "watch test"));
  *changed = TRUE;
  return TRUE;
}

static gboolean
release_edit (VpaReserveSet *set, gpointer data, gboolean *changed, GError **error)
{
  VpaAddr addr;

  g_assert_true (vpa_addr_parse (data, &addr));
  *changed = vpa_reserve_set_remove (set, addr);
  return TRUE;
}

static char *
domain_xml (const char *addr)
{
  guint dom, bus, slot, fn;

  g_assert_cmpint (sscanf (addr, "%x:%x:%x.%x", &dom, &bus, &slot, &fn), ==, 4);
  return g_strdup_printf ("<domain type='test'><name>watched</name><memory>1048576</memory>"
                          "<vcpu>1</vcpu><os><type>hvm</type></os><devices>"
                          "<hostdev mode='subsystem' type='pci' managed='yes'><source>"
                          "<address domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>"
                          "</source></hostdev></devices></domain>",
                          dom, bus, slot, fn);
}

static gint
cmp_gint64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* dual-socket.conf with a [physnet] group on nodes, and its state
 * directory, in dir (written as an editor would: a new file renamed
 * over the old). */
static char *
config_with_physnet (const char *dir, const char *nodes)
{
  g_autofree char *text = NULL;
  g_autofree char *all = NULL;
  g_autofree char *state = g_build_filename (dir, "state", NULL);
  char *path = g_build_filename (dir, "watch.conf", NULL);

  g_assert_true (g_file_get_contents (DS_CONF, &text, NULL, NULL));
  all = g_strconcat (text, "\n[physnet physnet1]\nnuma-nodes=", nodes, "\n[hook]\nstate-dir=",
                     state, "\n", NULL);
  g_assert_true (g_file_set_contents (path, all, -1, NULL));
  return path;
}

#define NETWORKS "SELECT COUNT(*) FROM host_networks"

static void
test_watch (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *conf = config_with_physnet (fx->tmpdir, "1");
  g_autofree char *state = g_build_filename (fx->tmpdir, "state", NULL);
  g_autofree char *conf2 = NULL;
  WatchThread t = { fx->uri, conf, -1 };
  g_autoptr (GThread) thread = NULL;
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (virConnect) conn = NULL;
  g_autoptr (GArray) waits = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GError) error = NULL;
  g_autofree char *addr = NULL, *xml = NULL, *count = NULL;
  guint rounds = g_test_slow () ? 50 : 5;

  if (fleet_fixture_skip (fx))
    return;
  vpa_cli_fleet_set_claims_loader (claims_loader);
  vpa_cli_fleet_set_watcher (vpa_virt_watch_run);
  /* as the package installs it; the file itself does not exist yet */
  g_assert_cmpint (g_mkdir (state, 0755), ==, 0);
  thread = g_thread_new ("watch", watch_thread, &t);

  /* The first sync creates the store and the host's rows. */
  for (gint64 start = g_get_monotonic_time (); store == NULL; g_usleep (20 * 1000))
    {
      g_clear_error (&error);
      g_clear_pointer (&count, g_free);
      store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
      if (store != NULL && (count = store_value (store, "SELECT COUNT(*) FROM hosts", NULL)) != NULL &&
          strcmp (count, "1") != 0)
        {
          g_clear_pointer (&store, vpa_fleet_store_close);
        }
      g_assert_cmpint (g_get_monotonic_time () - start, <, 30 * G_USEC_PER_SEC);
    }
  addr = store_value (store, "SELECT MIN(address) FROM devices WHERE state = 'free'"
                             " AND dev_type = 'type-VF'",
                      NULL);
  g_assert_nonnull (addr);
  xml = domain_xml (addr);
  conn = virConnectOpen (WATCH_URI);
  g_assert_nonnull (conn);

  for (guint i = 0; i < rounds; i++)
    {
      virDomainPtr dom = virDomainDefineXML (conn, xml);
      gint64 w;

      g_assert_nonnull (dom);
      w = wait_held_by (store, addr, "watched");
      g_array_append_val (waits, w);
      g_assert_cmpint (virDomainUndefine (dom), ==, 0);
      virDomainFree (dom);
      w = wait_held_by (store, addr, "-");
      g_array_append_val (waits, w);
      /* Every sync rewrites the host's networks with its other rows. */
      if (i == 0)
        {
          g_autofree char *n = store_value (store, NETWORKS, NULL);
          g_assert_cmpstr (n, ==, "1");
          g_assert_true (store->ops->statement (store, "DELETE FROM host_networks", NULL, 0,
                                                NULL, NULL, NULL, &error));
          g_assert_no_error (error);
        }
    }
  g_clear_pointer (&count, g_free);
  count = store_value (store, NETWORKS, NULL);
  g_assert_cmpstr (count, ==, "1");
  g_array_sort (waits, cmp_gint64);
  g_test_message ("event to row: %u events, median %" G_GINT64_FORMAT " ms, max %" G_GINT64_FORMAT " ms",
                  waits->len, g_array_index (waits, gint64, waits->len / 2) / 1000,
                  g_array_index (waits, gint64, waits->len - 1) / 1000);
  g_assert_cmpint (g_array_index (waits, gint64, waits->len - 1), <, DEADLINE_US);

  /* What a sync reads besides libvirt: a quarantine and its release
   * (the reservations file, created then replaced), and an edit of the
   * configuration, each reach the rows without a libvirt event. */
  g_assert_cmpint (wait_value (store, STATE, addr, "free"), <, DEADLINE_US);
  g_assert_true (vpa_reserve_set_update (state, quarantine_edit, addr, &error));
  g_assert_no_error (error);
  g_assert_cmpint (wait_value (store, STATE, addr, "reserved"), <, DEADLINE_US);
  g_assert_true (vpa_reserve_set_update (state, release_edit, addr, &error));
  g_assert_no_error (error);
  g_assert_cmpint (wait_value (store, STATE, addr, "free"), <, DEADLINE_US);
  conf2 = config_with_physnet (fx->tmpdir, "0");
  g_assert_cmpstr (conf2, ==, conf);
  g_assert_cmpint (wait_value (store, "SELECT numa_nodes FROM host_networks", NULL, "0"), <,
                   DEADLINE_US);

  /* SIGTERM ends it cleanly. */
  kill (getpid (), SIGTERM);
  g_thread_join (g_steal_pointer (&thread));
  g_assert_cmpint (t.rc, ==, 0);
}

/* The watcher's own logic, on counting callbacks: a burst of events is
 * one sync, and the heartbeat refreshes without syncing. */
static gboolean
count_sync (gpointer data, GError **error)
{
  ((guint *) data)[0]++;
  return TRUE;
}

static gboolean
count_touch (gpointer data, GError **error)
{
  ((guint *) data)[1]++;
  return TRUE;
}

static void
iterate_for (gint64 usec)
{
  gint64 end = g_get_monotonic_time () + usec;

  while (g_get_monotonic_time () < end)
    {
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (5 * 1000);
    }
}

static void
test_coalesce (void)
{
  guint counts[2] = { 0, 0 };
  VpaVirtWatchOps ops = { count_sync, count_touch, counts };
  VpaVirtWatchTimes times = { 300, 1, 100, 1000 };
  g_autoptr (VpaVirtWatch) w = vpa_virt_watch_new (WATCH_URI, &ops, &times);
  g_autoptr (GError) error = NULL;
  g_autoptr (virConnect) conn = NULL;
  g_autofree char *xml = domain_xml ("0000:81:00.1");
  VpaVirtWatchStats stats;

  g_assert_true (vpa_virt_watch_start (w, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (counts[0], ==, 1); /* the full sync at start */
  conn = virConnectOpen (WATCH_URI);
  g_assert_nonnull (conn);

  /* define, undefine, define, undefine within the settle time: one sync. */
  for (guint i = 0; i < 2; i++)
    {
      virDomainPtr dom = virDomainDefineXML (conn, xml);
      g_assert_nonnull (dom);
      g_assert_cmpint (virDomainUndefine (dom), ==, 0);
      virDomainFree (dom);
    }
  iterate_for (G_USEC_PER_SEC * 2 + G_USEC_PER_SEC / 2);
  vpa_virt_watch_get_stats (w, &stats);
  g_assert_cmpuint (stats.events, ==, 4);
  g_assert_cmpuint (counts[0], ==, 2);
  g_assert_cmpuint (stats.syncs, ==, 2);
  /* One heartbeat a second: at least two within a bounded wait (a loaded
   * machine may run the loop late; the count, not the clock, is tested). */
  for (guint i = 0; i < 40 && counts[1] < 2; i++)
    iterate_for (G_USEC_PER_SEC / 4);
  vpa_virt_watch_get_stats (w, &stats);
  g_assert_cmpuint (counts[1], >=, 2);
  g_assert_cmpuint (stats.syncs, ==, 2);
  g_assert_cmpuint (stats.touches, ==, counts[1]);
  g_assert_cmpuint (stats.failures, ==, 0);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fleet-watch/coalesce", test_coalesce);
  fleet_fixture_add ("fleet-watch", "define-undefine", test_watch);
  fleet_pg_start ();
  rc = g_test_run ();
  fleet_pg_stop ();
  return rc;
}
