/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A fleet's hosts over their life (docs/fleet.md, "Keeping the fleet
 * current"), on SQLite and PostgreSQL: `fleet hosts`, `fleet remove`,
 * `fleet sync` without --host and with no device, `fleet filter
 * --max-age`, and one stderr line per failing host.
 */
#include <string.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>

#include "fleet-fixture.h"
#include "vpa-constants.h"
#include "vpa-fleet-hosts.h"

#define DS_XML VPA_TEST_DATA "/hosts/dual-socket.xml"
#define DS_CONF VPA_TEST_DATA "/hosts/dual-socket.conf"
#define OLD_SYNC "2000-01-01T00:00:00Z"

/* A guest on node 0 that dual-socket.xml can take under dual-socket.conf. */
static const char guest_node0[] =
  "<domain type='kvm'><name>g1</name><vcpu>2</vcpu>"
  "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
  "<vpa:flavor aliases='QuickAssist:1'/>"
  "</vpa:affinity></metadata>"
  "<cpu><numa><cell id='0' cpus='0-1' memory='1048576'/></numa></cpu>"
  "<numatune><memnode cellid='0' mode='strict' nodeset='0'/></numatune>"
  "</domain>";

static gint
cli (char **out, char **err, const char *first, ...)
{
  const char *a[16] = { first };
  va_list ap;
  guint n = 1;

  va_start (ap, first);
  while (n < G_N_ELEMENTS (a) - 1 && (a[n] = va_arg (ap, const char *)) != NULL)
    n++;
  va_end (ap);
  g_assert_null (a[n]);
  return fleet_fixture_cli (VPA_FLEET_CLI, out, err, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                            a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], NULL);
}

static void
sync_ok (FleetFixture *fx, const char *name, const char *conf)
{
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (cli (&out, &err, "sync", "--store", fx->uri, "--inventory", DS_XML,
                        "--config", conf, "--host", name, NULL),
                   ==, 0);
}

/* The object of `fleet hosts --format json` for host, or NULL. */
static JsonObject *
hosts_entry (JsonParser *parser, const char *text, const char *host)
{
  JsonArray *hosts;
  g_autoptr (GError) error = NULL;

  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  hosts = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                        "hosts");
  for (guint i = 0; i < json_array_get_length (hosts); i++)
    {
      JsonObject *o = json_array_get_object_element (hosts, i);
      if (strcmp (json_object_get_string_member (o, "host"), host) == 0)
        return o;
    }
  return NULL;
}

static gint64
sql_count (FleetFixture *fx, const char *sql)
{
  g_autofree char *out = fleet_fixture_sql (fx, sql);

  return g_ascii_strtoll (out, NULL, 10);
}

/* fleet hosts counts what the device rows say; fleet sync without
 * --host uses this machine's name; a host synced with no device warns. */
static void
test_hosts_list (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *out = NULL, *err = NULL;
  JsonObject *o;

  if (fleet_fixture_skip (fx))
    return;
  sync_ok (fx, "ds1", DS_CONF);
  g_assert_cmpint (cli (&out, &err, "sync", "--store", fx->uri, "--inventory", DS_XML, NULL),
                   ==, 0);
  g_assert_nonnull (strstr (err, "warning: host '"));
  g_assert_nonnull (strstr (err, "synced with no device"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (&out, &err, "hosts", "--store", fx->uri, "--format", "json", NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  o = hosts_entry (parser, out, "ds1");
  g_assert_nonnull (o);
  g_assert_cmpint (json_object_get_int_member (o, "devices"), ==,
                   sql_count (fx, "SELECT COUNT(*) FROM devices AS d JOIN hosts AS h"
                                  " ON h.id = d.host_id WHERE h.name = 'ds1'"));
  g_assert_cmpint (json_object_get_int_member (o, "devices"), >, 0);
  g_assert_cmpint (json_object_get_int_member (o, "free"), ==,
                   sql_count (fx, "SELECT COUNT(*) FROM devices AS d JOIN hosts AS h"
                                  " ON h.id = d.host_id WHERE h.name = 'ds1' AND d.state = 'free'"));
  g_assert_cmpint (json_object_get_int_member (o, "free"), <,
                   json_object_get_int_member (o, "devices"));
  g_assert_cmpint (json_object_get_int_member (o, "age_seconds"), <=, 60);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "traits")), >, 0);
  o = hosts_entry (parser, out, g_get_host_name ());
  g_assert_nonnull (o);
  g_assert_cmpint (json_object_get_int_member (o, "devices"), ==, 0);

  /* Text: one line per host after the header, the age with its unit. */
  fleet_fixture_exec (fx, "UPDATE hosts SET last_sync = '" OLD_SYNC "' WHERE name = 'ds1'");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (&out, &err, "hosts", "--store", fx->uri, NULL), ==, 0);
  g_assert_true (g_str_has_prefix (out, "HOST "));
  g_assert_nonnull (strstr (out, "\nds1 "));
  g_assert_nonnull (strstr (out, OLD_SYNC));
  g_assert_true (g_regex_match_simple ("\nds1 .* " OLD_SYNC " +[0-9]{9,}s ", out, 0, 0));
  g_assert_cmpint (cli (NULL, NULL, "hosts", "--store", fx->uri, "--host", "ds1", NULL), ==, 2);
}

/* fleet remove deletes the host and every row it owns; an unknown host
 * is exit 2 and changes nothing. */
static void
test_remove (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  gint64 rows_ds2;

  if (fleet_fixture_skip (fx))
    return;
  sync_ok (fx, "ds1", DS_CONF);
  sync_ok (fx, "ds2", DS_CONF);
  rows_ds2 = sql_count (fx, "SELECT COUNT(*) FROM devices");
  g_assert_cmpint (rows_ds2 % 2, ==, 0);
  g_assert_cmpint (cli (&out, &err, "remove", "--store", fx->uri, "--host", "ds1", NULL), ==, 0);
  g_assert_cmpstr (out, ==, "ds1: removed\n");
  g_assert_cmpint (sql_count (fx, "SELECT COUNT(*) FROM hosts"), ==, 1);
  g_assert_cmpint (sql_count (fx, "SELECT COUNT(*) FROM devices"), ==, rows_ds2 / 2);
  g_assert_cmpint (sql_count (fx, "SELECT COUNT(*) FROM host_cells AS c LEFT JOIN hosts AS h"
                                  " ON h.id = c.host_id WHERE h.id IS NULL"),
                   ==, 0);
  g_assert_cmpint (sql_count (fx, "SELECT COUNT(*) FROM host_numa_claims AS c LEFT JOIN hosts"
                                  " AS h ON h.id = c.host_id WHERE h.id IS NULL"),
                   ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (&out, &err, "remove", "--store", fx->uri, "--host", "ds1", NULL), ==, 2);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "no host 'ds1'"));
  g_assert_cmpint (sql_count (fx, "SELECT COUNT(*) FROM devices"), ==, rows_ds2 / 2);
  g_assert_cmpint (cli (NULL, NULL, "remove", "--store", fx->uri, NULL), ==, 2);
  g_assert_cmpint (cli (NULL, NULL, "remove", "--store", fx->uri, "--host", "a b", NULL), ==, 2);
}

/* --max-age fails the hosts whose rows are older, saying how old; the
 * others are judged as before. With none passing, stderr has one line
 * per host. */
static void
test_max_age (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *dom = g_build_filename (fx->tmpdir, "g.xml", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_auto (GStrv) lines = NULL;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_true (g_file_set_contents (dom, guest_node0, -1, NULL));
  sync_ok (fx, "fresh", DS_CONF);
  sync_ok (fx, "stale", DS_CONF);
  fleet_fixture_exec (fx, "UPDATE hosts SET last_sync = '" OLD_SYNC "' WHERE name = 'stale'");

  /* Without --max-age both pass. */
  g_assert_cmpint (cli (&out, &err, "filter", "--store", fx->uri, "--config", DS_CONF, dom,
                        "--format", "json", NULL),
                   ==, 0);
  g_assert_null (strstr (out, "\"passes\": false"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (&out, &err, "filter", "--store", fx->uri, "--config", DS_CONF, dom,
                        "--max-age", "3600", NULL),
                   ==, 0);
  g_assert_true (g_regex_match_simple ("^fresh +pass ", strstr (out, "\n") + 1, 0, 0));
  g_assert_true (g_regex_match_simple ("\nstale +fail .*the host's rows are [0-9]{9,} s old"
                                       " \\(last sync " OLD_SYNC "; --max-age 3600\\)\n",
                                       out, 0, 0));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* Both stale: exit 1, nothing on stdout, one line per host. */
  fleet_fixture_exec (fx, "UPDATE hosts SET last_sync = '" OLD_SYNC "'");
  g_assert_cmpint (cli (&out, &err, "filter", "--store", fx->uri, "--config", DS_CONF, dom,
                        "--max-age", "0", NULL),
                   ==, 1);
  g_assert_cmpstr (out, ==, "");
  lines = g_strsplit (err, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[2], ==, "");
  g_assert_true (g_str_has_prefix (lines[0], "virt-pci-affinity: fleet: "));
  g_assert_nonnull (strstr (lines[0], "g.xml: no host passes: fresh: the host's rows are "));
  g_assert_nonnull (strstr (lines[1], "g.xml: no host passes: stale: the host's rows are "));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (&out, &err, "filter", "--store", fx->uri, dom, "--max-age", "-1", NULL),
                   ==, 2);
  g_assert_nonnull (strstr (err, "--max-age '-1'"));
  g_assert_cmpint (cli (NULL, NULL, "pools", "--store", fx->uri, "--max-age", "5", NULL), ==, 2);
}

/* The watcher's heartbeat: last_sync moves, the rows do not. */
static void
test_touch (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *before = NULL, *after = NULL, *sync = NULL;

  if (fleet_fixture_skip (fx))
    return;
  sync_ok (fx, "ds1", DS_CONF);
  fleet_fixture_exec (fx, "UPDATE hosts SET last_sync = '" OLD_SYNC "'");
  before = fleet_fixture_sql (fx, "SELECT address, state FROM devices ORDER BY address");
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_assert_no_error (error);
  g_assert_true (vpa_fleet_hosts_touch (store, "ds1", &error));
  g_assert_no_error (error);
  g_assert_false (vpa_fleet_hosts_touch (store, "nohost", &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  after = fleet_fixture_sql (fx, "SELECT address, state FROM devices ORDER BY address");
  g_assert_cmpstr (before, ==, after);
  sync = fleet_fixture_sql (fx, "SELECT last_sync FROM hosts WHERE name = 'ds1'");
  g_assert_cmpint (vpa_fleet_hosts_sync_age (sync, now), <=, 60);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  fleet_fixture_add ("fleet-hosts", "list", test_hosts_list);
  fleet_fixture_add ("fleet-hosts", "remove", test_remove);
  fleet_fixture_add ("fleet-hosts", "max-age", test_max_age);
  fleet_fixture_add ("fleet-hosts", "touch", test_touch);
  fleet_pg_start ();
  rc = g_test_run ();
  fleet_pg_stop ();
  return rc;
}
