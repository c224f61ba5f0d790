/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store on SQLite (always) and PostgreSQL (a private server on
 * a Unix socket, tests/fleet/fleet-fixture.h), and the host filter over
 * pool rows.
 */
#include <string.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include "vpa-fleet-filter.h"
#include "vpa-fleet-store.h"
#include "vpa-fleet-preselect.h"
#include "vpa-fleet-schema.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-output.h"
#include "vpa-pools.h"
#include "vpa-pipeline.h"
#include "vpa-pipeline-numa.h"
#include "vpa-requests.h"
#include "vpa-source.h"
#include "vpa-test-util.h"
#include "fleet-fixture.h"
#include "fleet-locality.h"

/* fleet ARGS... through tests/fleet/fleet-cli; returns the exit status. */
#define fleet_cli(out, err, ...) fleet_fixture_cli (VPA_FLEET_CLI, out, err, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Hand-made requests (the public structs, filled directly)            */
/* ------------------------------------------------------------------ */

static void
spec_pair_free (VpaSpecPair *pair)
{
  g_free (pair->key);
  g_free (pair->value);
  g_free (pair);
}

static void
spec_free (VpaSpec *spec)
{
  g_ptr_array_unref (spec->pairs);
  g_free (spec);
}

static void
request_free (VpaRequest *req)
{
  g_free (req->device);
  g_free (req->label);
  g_ptr_array_unref (req->specs);
  g_free (req->pf_group);
  g_free (req);
}

/* specs: "k=v,k=v|k=v" (ORed dicts of ANDed pairs); "k=" is None. */
static VpaRequest *
request_new (const char *label, const char *specs, guint count, VpaPolicy policy,
             VpaPolicySource source)
{
  VpaRequest *req = g_new0 (VpaRequest, 1);
  g_auto (GStrv) dicts = g_strsplit (specs, "|", -1);

  req->kind = source == VPA_POLICY_SOURCE_PORT ? VPA_REQUEST_PORT : VPA_REQUEST_ALIAS;
  req->device = g_strdup (label);
  req->label = g_strdup (label);
  req->count = count;
  req->policy = policy;
  req->policy_source = source;
  req->specs = g_ptr_array_new_with_free_func ((GDestroyNotify) spec_free);
  for (guint i = 0; dicts[i] != NULL; i++)
    {
      VpaSpec *spec = g_new0 (VpaSpec, 1);
      g_auto (GStrv) pairs = g_strsplit (dicts[i], ",", -1);

      spec->pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) spec_pair_free);
      for (guint j = 0; pairs[j] != NULL; j++)
        {
          VpaSpecPair *pair = g_new0 (VpaSpecPair, 1);
          const char *eq = strchr (pairs[j], '=');
          pair->key = g_strndup (pairs[j], (gsize) (eq - pairs[j]));
          pair->value = eq[1] != '\0' ? g_strdup (eq + 1) : NULL;
          g_ptr_array_add (spec->pairs, pair);
        }
      g_ptr_array_add (req->specs, spec);
    }
  return req;
}

static GPtrArray *
requests_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) request_free);
}

/* ------------------------------------------------------------------ */
/* Hand-made hosts                                                     */
/* ------------------------------------------------------------------ */

static void
add_cell (VpaFleetHostData *data, gint node, gint socket)
{
  VpaFleetCell cell = { node, socket };
  g_array_append_val (data->cells, cell);
}

/* n devices of one kind at bus:slot.0 upwards. */
static void
add_devices (VpaFleetHostData *data, guint bus, guint n, const char *product,
             VpaDevType type, gint numa, const char *tags, guint n_held)
{
  for (guint i = 0; i < n; i++)
    {
      VpaFleetDevice dev = { 0 };

      dev.addr = VPA_ADDR (0, bus, i / 8, i % 8);
      g_strlcpy (dev.vendor_id, "8086", sizeof dev.vendor_id);
      g_strlcpy (dev.product_id, product, sizeof dev.product_id);
      dev.dev_type = type;
      dev.numa_node = numa;
      dev.parent_addr = type == VPA_DEV_TYPE_VF ? VPA_ADDR (0, bus - 1, 0, 0) : VPA_ADDR_NONE;
      dev.tags = (char *) tags;
      dev.state = i < n_held ? VPA_DEV_STATE_HELD : VPA_DEV_STATE_FREE;
      dev.held_by = i < n_held ? (char *) "guest1" : NULL;
      vpa_fleet_host_data_add (data, &dev);
    }
}

static void
set_traits (VpaFleetHostData *data, const char *traits)
{
  g_strfreev (data->traits);
  data->traits = vpa_fleet_traits_parse (traits);
}

#define PHYSNET1 "{\"physical_network\":\"physnet1\"}"

/* Two nodes on two sockets: 8 VFs (2 held) on node 0, 4 on node 1, 2
 * untagged PCI devices of unknown node. */
static VpaFleetHostData *
host_two_nodes (const char *name)
{
  VpaFleetHostData *data = vpa_fleet_host_data_new (name);

  add_cell (data, 0, 0);
  add_cell (data, 1, 1);
  set_traits (data, VPA_FLEET_TRAIT_SOCKET " " VPA_FLEET_TRAIT_NET_NUMA);
  add_devices (data, 0x81, 8, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 2);
  add_devices (data, 0xc1, 4, "1889", VPA_DEV_TYPE_VF, 1, PHYSNET1, 0);
  add_devices (data, 0x05, 2, "0443", VPA_DEV_TYPE_PCI, VPA_NUMA_NONE, NULL, 0);
  return data;
}

/* ------------------------------------------------------------------ */
/* Stores                                                              */
/* ------------------------------------------------------------------ */

/* "host vendor:product type numa/socket tags total/free/held/blocked" */
static char *
pools_to_string (GPtrArray *pools)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < pools->len; i++)
    {
      const VpaPool *p = g_ptr_array_index (pools, i);
      g_autofree char *tags = vpa_fleet_tags_canonical (p->tags);
      g_string_append_printf (out, "%s %s:%s %s %d/%d %s %u/%u/%u/%u\n", p->host,
                              p->vendor_id, p->product_id, vpa_dev_type_to_string (p->dev_type),
                              p->numa_node, p->socket, tags, p->total, p->free,
                              p->used, p->blocked);
    }
  return g_string_free (out, FALSE);
}

static char *
store_pools (VpaFleetStore *store, const char *host)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) pools = vpa_fleet_store_query_pools (store, host, &error);

  g_assert_no_error (error);
  g_assert_nonnull (pools);
  return pools_to_string (pools);
}

static VpaFleetStore *
store_open (const FleetFixture *fx, VpaFleetOpenMode mode)
{
  g_autoptr (GError) error = NULL;
  VpaFleetStore *store = vpa_fleet_store_open (fx->uri, mode, &error);

  g_assert_no_error (error);
  g_assert_nonnull (store);
  return store;
}

static void
store_sync (VpaFleetStore *store, const VpaFleetHostData *data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (vpa_fleet_store_sync_host (store, data, &error));
  g_assert_no_error (error);
}

/* ------------------------------------------------------------------ */
/* Store tests, run on each backend                                    */
/* ------------------------------------------------------------------ */

static void
test_sync_pools (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaFleetHostData) h1 = host_two_nodes ("h1");
  g_autoptr (VpaFleetHostData) h2 = vpa_fleet_host_data_new ("h2.example-2_b");
  g_autofree char *one = NULL, *all = NULL, *again = NULL;

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  add_cell (h2, 0, VPA_SOCKET_NONE);
  add_devices (h2, 0x3b, 3, "0443", VPA_DEV_TYPE_PCI, 0, NULL, 1);
  store_sync (store, h1);
  store_sync (store, h2);

  one = store_pools (store, "h1");
  g_assert_cmpstr (one, ==,
                   "h1 8086:0443 type-PCI -1/-1 {} 2/2/0/0\n"
                   "h1 8086:1889 type-VF 0/0 " PHYSNET1 " 8/6/2/0\n"
                   "h1 8086:1889 type-VF 1/1 " PHYSNET1 " 4/4/0/0\n");
  all = store_pools (store, NULL);
  g_assert_true (g_str_has_prefix (all, one));
  g_assert_cmpstr (all + strlen (one), ==, "h2.example-2_b 8086:0443 type-PCI 0/-1 {} 3/2/1/0\n");

  /* Idempotent; and a second sync replaces, never adds. */
  store_sync (store, h1);
  store_sync (store, h1);
  again = store_pools (store, NULL);
  g_assert_cmpstr (again, ==, all);
}

static void
test_resync_replaces (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaFleetHostData) before = host_two_nodes ("h1");
  g_autoptr (VpaFleetHostData) after = vpa_fleet_host_data_new ("h1");
  g_autoptr (GPtrArray) hosts = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *pools = NULL;
  const VpaFleetHost *h;

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  store_sync (store, before);
  add_cell (after, 0, 3);
  add_devices (after, 0x81, 2, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 0);
  store_sync (store, after);
  pools = store_pools (store, "h1");
  g_assert_cmpstr (pools, ==, "h1 8086:1889 type-VF 0/3 " PHYSNET1 " 2/2/0/0\n");

  hosts = vpa_fleet_store_load_hosts (store, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hosts->len, ==, 1);
  h = g_ptr_array_index (hosts, 0);
  g_assert_cmpstr (h->name, ==, "h1");
  g_assert_cmpuint (h->cells->len, ==, 1);
  g_assert_cmpint (g_array_index (h->cells, VpaFleetCell, 0).socket, ==, 3);
  g_assert_cmpuint (g_strv_length (h->traits), ==, 0);
  g_assert_nonnull (h->last_sync);
  g_assert_null (h->pools);
}

static void
test_atomic_replace (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaFleetHostData) good = host_two_nodes ("h1");
  g_autoptr (VpaFleetHostData) bad = vpa_fleet_host_data_new ("h1");
  g_autoptr (GError) error = NULL;
  g_autofree char *before = NULL, *after = NULL;

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  store_sync (store, good);
  before = store_pools (store, NULL);

  /* Fails after the old rows were deleted and 300 new ones written:
   * the last device repeats an address (primary key). */
  add_cell (bad, 0, 0);
  add_devices (bad, 0x90, 200, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 0);
  add_devices (bad, 0x91, 100, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 0);
  add_devices (bad, 0x90, 1, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 0);
  g_assert_false (vpa_fleet_store_sync_host (store, bad, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "h1"));

  after = store_pools (store, NULL);
  g_assert_cmpstr (after, ==, before);
  /* The connection is usable after the rollback. */
  store_sync (store, good);
}

typedef struct {
  const char *uri;
  const char *host;
  guint rounds;
  GError *error;
} SyncThread;

static gpointer
sync_thread (gpointer user_data)
{
  SyncThread *t = user_data;
  g_autoptr (VpaFleetStore) store = vpa_fleet_store_open (t->uri, VPA_FLEET_OPEN_CREATE, &t->error);

  for (guint i = 0; store != NULL && i < t->rounds; i++)
    {
      g_autoptr (VpaFleetHostData) data = host_two_nodes (t->host);
      /* Odd rounds drop the PCI devices: the final round's rows win. */
      if (i % 2 == 1)
        g_array_set_size (data->devices, 12);
      if (!vpa_fleet_store_sync_host (store, data, &t->error))
        break;
    }
  return NULL;
}

static void
test_concurrent_syncs (FleetFixture *fx, gconstpointer data)
{
  SyncThread t[4] = {
    { fx->uri, "h1", 20, NULL },
    { fx->uri, "h2", 20, NULL },
    { fx->uri, "h1", 20, NULL },
    { fx->uri, "h3", 20, NULL },
  };
  GThread *threads[G_N_ELEMENTS (t)];
  g_autoptr (VpaFleetStore) store = NULL;
  g_autofree char *pools = NULL;
  g_autofree char *expect = NULL;
  g_autoptr (GString) want = g_string_new (NULL);

  if (fleet_fixture_skip (fx))
    return;
  /* Even the schema's creation races. */
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    threads[i] = g_thread_new ("sync", sync_thread, &t[i]);
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    {
      g_thread_join (threads[i]);
      g_assert_no_error (t[i].error);
    }
  store = store_open (fx, VPA_FLEET_OPEN_READ);
  pools = store_pools (store, NULL);
  for (guint i = 1; i <= 3; i++)
    {
      g_string_append_printf (want,
                              "h%u 8086:1889 type-VF 0/0 " PHYSNET1 " 8/6/2/0\n"
                              "h%u 8086:1889 type-VF 1/1 " PHYSNET1 " 4/4/0/0\n",
                              i, i);
    }
  g_assert_cmpstr (pools, ==, want->str);
}

static void
test_schema_version (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  VpaFleetStore *store;

  if (fleet_fixture_skip (fx))
    return;
  /* Reading a store that has no schema yet is refused, and creates none. */
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_assert_null (store);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_clear_error (&error);

  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  vpa_fleet_store_close (store);
  store = store_open (fx, VPA_FLEET_OPEN_READ);
  vpa_fleet_store_close (store);

  /* A newer schema. */
  fleet_fixture_exec (fx, "UPDATE schema_version SET version = 99");
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_null (store);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, "schema version '99' is newer"));
  g_clear_error (&error);

  /* Another program's schema_version. */
  fleet_fixture_exec (fx, "UPDATE schema_version SET version = 1, application = 'other-tool'");
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_assert_null (store);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, "belongs to 'other-tool'"));
  g_clear_error (&error);

  /* Tables like ours without a schema_version. */
  fleet_fixture_exec (fx, "DROP TABLE schema_version");
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_null (store);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, "not a fleet store"));
}

/* A version 1 store (no PCIe columns) is upgraded by the next sync and
 * refused by readers until then. */
static void
test_schema_upgrade (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  VpaFleetStore *store;

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  vpa_fleet_store_close (store);
  /* what versions 7 and 6 added (7 replaced 6's index and statistics) */
  fleet_fixture_exec (fx, "DROP INDEX devices_free_pools");
  fleet_fixture_exec (fx, "DROP INDEX devices_free_kinds");
  fleet_fixture_exec (fx, "ALTER TABLE devices DROP COLUMN kind_id");
  fleet_fixture_exec (fx, "DROP TABLE device_kinds");
  fleet_fixture_exec (fx, "ALTER TABLE devices DROP COLUMN pcie_root");
  fleet_fixture_exec (fx, "ALTER TABLE devices DROP COLUMN pcie_port");
  fleet_fixture_exec (fx, "ALTER TABLE devices DROP COLUMN pcie_switch");
  /* and what version 3 added */
  fleet_fixture_exec (fx, "DROP TABLE host_numa_claims");
  fleet_fixture_exec (fx, "ALTER TABLE host_cells DROP COLUMN memory_kib");
  fleet_fixture_exec (fx, "ALTER TABLE host_cells DROP COLUMN cpus");
  fleet_fixture_exec (fx, "ALTER TABLE host_cells DROP COLUMN pages");
  fleet_fixture_exec (fx, "ALTER TABLE host_cells DROP COLUMN distances");
  /* and what version 5 added */
  fleet_fixture_exec (fx, "DROP TABLE host_networks");
  fleet_fixture_exec (fx, "ALTER TABLE hosts DROP COLUMN sync_version");
  fleet_fixture_exec (fx, "UPDATE schema_version SET version = 1");

  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_assert_null (store);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, "schema version '1' is older than this program's "));
  g_assert_nonnull (strstr (error->message, "'fleet sync' upgrades it"));
  g_clear_error (&error);

  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  vpa_fleet_store_close (store);
  store = store_open (fx, VPA_FLEET_OPEN_READ);
  vpa_fleet_store_close (store);
  fleet_fixture_exec (fx, "UPDATE devices SET pcie_root = 'pci0000:15', pcie_port = NULL, pcie_switch = NULL");
}

static void
test_unknown_host (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) pools = NULL;
  g_autoptr (VpaFleetHostData) bad = vpa_fleet_host_data_new ("h1;drop");

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  pools = vpa_fleet_store_query_pools (store, "nohost", &error);
  g_assert_null (pools);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (strstr (error->message, "no host 'nohost'"), !=, NULL);
  g_clear_error (&error);
  g_assert_false (vpa_fleet_store_sync_host (store, bad, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
}

/* A device's tags are at most VPA_FLEET_TAGS_MAX bytes: at the limit
 * they are stored (in the free devices' index too) and read back; one
 * byte more is refused, naming the host, the device and the length,
 * and the host's rows stay as they were. */
static void
test_tags_limit (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) pools = NULL;
  g_autoptr (VpaFleetHostData) fits = vpa_fleet_host_data_new ("h1");
  g_autoptr (VpaFleetHostData) over = vpa_fleet_host_data_new ("h1");
  /* {"k":"xx...x"}: 8 bytes around the value */
  g_autofree char *value = g_strnfill (VPA_FLEET_TAGS_MAX - 8, 'x');
  g_autofree char *at_limit = g_strdup_printf ("{\"k\":\"%s\"}", value);
  g_autofree char *past = g_strdup_printf ("{\"k\":\"%sy\"}", value);
  g_autofree char *expected = NULL;
  const VpaPool *pool;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_cmpuint (strlen (at_limit), ==, VPA_FLEET_TAGS_MAX);
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  add_cell (fits, 0, 0);
  add_devices (fits, 0x81, 4, "1889", VPA_DEV_TYPE_VF, 0, at_limit, 0);
  g_assert_true (vpa_fleet_store_sync_host (store, fits, &error));
  g_assert_no_error (error);

  add_cell (over, 0, 0);
  add_devices (over, 0x81, 2, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 0);
  add_devices (over, 0x82, 1, "1889", VPA_DEV_TYPE_VF, 0, past, 0);
  g_assert_false (vpa_fleet_store_sync_host (store, over, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  expected = g_strdup_printf ("host 'h1': device 0000:82:00.0: tags of %d bytes exceed the fleet"
                              " store's limit of %d (its [device-spec] tags)",
                              VPA_FLEET_TAGS_MAX + 1, VPA_FLEET_TAGS_MAX);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);

  pools = vpa_fleet_store_query_pools (store, "h1", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (pools->len, ==, 1);
  pool = g_ptr_array_index (pools, 0);
  g_assert_cmpuint (pool->total, ==, 4);
  g_assert_cmpuint (pool->tags->len, ==, 1);
  g_assert_cmpuint (strlen (((const VpaSpecPair *) g_ptr_array_index (pool->tags, 0))->value), ==,
                    VPA_FLEET_TAGS_MAX - 8);
}

/* The free pools the filter reads, of host name. */
static GPtrArray *
free_pools_of (VpaFleetStore *store, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) hosts = vpa_fleet_store_load_hosts (store, VPA_FLEET_LOAD_POOLS, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHost *host = g_ptr_array_index (hosts, i);
      if (strcmp (host->name, name) == 0)
        return g_ptr_array_ref (host->pools);
    }
  g_assert_not_reached ();
  return NULL;
}

/* Syncs name: 6 VFs on node 0 with tags0 (2 of them held), 3 without a
 * NUMA node or PCIe tree (NULLs), physnet1. */
static void
sync_kinds_host (VpaFleetStore *store, const char *name, const char *tags0)
{
  g_autoptr (VpaFleetHostData) host = vpa_fleet_host_data_new (name);
  g_autoptr (GError) error = NULL;

  add_cell (host, 0, 0);
  add_devices (host, 0x81, 6, "1889", VPA_DEV_TYPE_VF, 0, tags0, 2);
  add_devices (host, 0x82, 3, "1889", VPA_DEV_TYPE_VF, VPA_NUMA_NONE, PHYSNET1, 0);
  g_assert_true (vpa_fleet_store_sync_host (store, host, &error));
  g_assert_no_error (error);
}

/* The free pool of host name on node 0, as the filter reads it: its
 * free devices and its physical_network. */
static void
assert_node0_pool (VpaFleetStore *store, const char *name, guint free, const char *physnet)
{
  g_autoptr (GPtrArray) pools = free_pools_of (store, name);
  const VpaPool *pool = NULL;

  g_assert_cmpuint (pools->len, ==, 2);
  for (guint i = 0; i < pools->len; i++)
    {
      const VpaPool *p = g_ptr_array_index (pools, i);
      if (p->numa_node == 0)
        pool = p;
      else
        g_assert_cmpint (p->numa_node, ==, VPA_NUMA_NONE);
    }
  g_assert_nonnull (pool);
  g_assert_cmpuint (pool->free, ==, free);
  g_assert_cmpuint (pool->tags->len, ==, 1);
  g_assert_cmpstr (((const VpaSpecPair *) g_ptr_array_index (pool->tags, 0))->value, ==, physnet);
}

/* Every device row names the kind of its own columns (NULL matching
 * NULL); hosts of the same hardware share kinds; a sync that changes a
 * device's description gives it another kind, and the filter's pools
 * (counted by host and kind) follow the rows. */
static void
test_device_kinds (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  const char *same = fx->backend == FLEET_BACKEND_PG ? "IS NOT DISTINCT FROM" : "IS";
  g_autofree char *mismatched = g_strdup_printf (
    "SELECT COUNT(*) FROM devices AS d JOIN device_kinds AS k ON k.id = d.kind_id"
    " WHERE NOT (k.vendor_id = d.vendor_id AND k.product_id = d.product_id"
    " AND k.dev_type = d.dev_type AND k.numa_node %1$s d.numa_node AND k.tagset = d.tagset"
    " AND k.tags = d.tags AND k.pcie_root %1$s d.pcie_root AND k.pcie_port %1$s d.pcie_port)",
    same);

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  sync_kinds_host (store, "h1", PHYSNET1);
  sync_kinds_host (store, "h2", PHYSNET1);
  fleet_fixture_assert_sql (fx, "SELECT COUNT(*) FROM device_kinds", "2");
  fleet_fixture_assert_sql (fx, "SELECT COUNT(*) FROM devices WHERE kind_id IS NULL", "0");
  fleet_fixture_assert_sql (fx, mismatched, "0");
  assert_node0_pool (store, "h1", 4, "physnet1");

  /* h1's node-0 VFs move to other tags: a third kind, h2 keeps its own */
  sync_kinds_host (store, "h1", "{\"physical_network\":\"physnet2\"}");
  fleet_fixture_assert_sql (fx, "SELECT COUNT(*) FROM device_kinds", "3");
  fleet_fixture_assert_sql (fx, "SELECT COUNT(DISTINCT kind_id) FROM devices", "3");
  fleet_fixture_assert_sql (fx, mismatched, "0");
  assert_node0_pool (store, "h1", 4, "physnet2");
  assert_node0_pool (store, "h2", 4, "physnet1");
}

static const VpaFleetVerdict *
verdict_of (GPtrArray *verdicts, const char *host)
{
  for (guint i = 0; i < verdicts->len; i++)
    {
      const VpaFleetVerdict *v = g_ptr_array_index (verdicts, i);
      if (strcmp (v->host, host) == 0)
        return v;
    }
  g_assert_not_reached ();
  return NULL;
}

/* The filter as `fleet filter` runs it, on the rows SQL pre-selects;
 * every verdict must be the one every row gives. */
static GPtrArray *
store_filter (VpaFleetStore *store, const VpaFleetQuery *query)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) all = vpa_fleet_store_load_hosts (store, VPA_FLEET_LOAD_POOLS, &error);
  g_autoptr (GPtrArray) some = NULL;
  g_autoptr (GPtrArray) expected = NULL;
  GPtrArray *verdicts;

  g_assert_no_error (error);
  some = vpa_fleet_preselect_load_candidates (store, query, VPA_FLEET_LOAD_POOLS, &error);
  g_assert_no_error (error);
  expected = vpa_fleet_filter (all, query);
  verdicts = vpa_fleet_filter (some, query);
  g_assert_cmpuint (verdicts->len, ==, expected->len);
  for (guint i = 0; i < verdicts->len; i++)
    {
      const VpaFleetVerdict *v = g_ptr_array_index (verdicts, i);
      const VpaFleetVerdict *e = g_ptr_array_index (expected, i);

      g_assert_cmpstr (v->host, ==, e->host);
      g_assert_cmpint (v->passes, ==, e->passes);
      g_assert_cmpfloat (v->weight, ==, e->weight);
      g_assert_cmpstr (v->reason, ==, e->reason);
      g_assert_cmpstr (v->nodes, ==, e->nodes);
    }
  return verdicts;
}

/* Whether the pre-selection read the lowest addresses of each host's
 * pools: of those named in read, not of the others. */
static void
assert_addresses_read (VpaFleetStore *store, const VpaFleetQuery *query, const char *const *read)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) hosts =
    vpa_fleet_preselect_load_candidates (store, query, VPA_FLEET_LOAD_POOLS, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHost *host = g_ptr_array_index (hosts, i);
      gboolean want = g_strv_contains (read, host->name);

      g_assert_cmpuint (host->pools->len, ==, 2);
      for (guint p = 0; p < host->pools->len; p++)
        {
          const VpaPool *pool = g_ptr_array_index (host->pools, p);
          g_assert_cmpint (pool->first_addr != VPA_ADDR_NONE, ==, want);
        }
    }
}

/* A host of two VF pools of the same keys: n1 physnet1 VFs on node 0
 * and n2 physnet2 VFs on node 1, the physnet1 ones at the lower
 * addresses with low1. */
static void
sync_two_pools (VpaFleetStore *store, const char *name, guint n1, guint n2, gboolean low1)
{
  g_autoptr (VpaFleetHostData) host = vpa_fleet_host_data_new (name);
  g_autoptr (GError) error = NULL;

  add_cell (host, 0, 0);
  add_cell (host, 1, 1);
  add_devices (host, low1 ? 0x81 : 0x83, n1, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 0);
  add_devices (host, low1 ? 0x83 : 0x81, n2, "1889", VPA_DEV_TYPE_VF, 1,
               "{\"physical_network\":\"physnet2\"}", 0);
  g_assert_true (vpa_fleet_store_sync_host (store, host, &error));
  g_assert_no_error (error);
}

/* Pool order on demand: the filter reads the pools without their lowest
 * addresses, and reads them for the hosts whose verdict depends on
 * Nova's pool order (the lowest address first), checked against the
 * verdicts of every row. A port both pools serve, then two only the
 * physnet2 pool can: the host whose physnet1 VFs come first passes,
 * the other fails, though no take empties a pool. One port both serve
 * alike: only where it could empty one (tight) are they read. A NUMA
 * guest whose policy leaves one pool per take: never. */
static void
test_filter_pool_order (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GPtrArray) reqs = requests_new ();
  g_autoptr (GPtrArray) verdicts = NULL;
  VpaFleetQuery query = { reqs, FALSE, NULL, 0, FALSE, FALSE };
  const gint node0[] = { 0 };
  const char *const both[] = { "first1", "first2", NULL };
  const char *const tight[] = { "tight", NULL };
  const char *const none[] = { NULL };
  const VpaFleetVerdict *v;

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  sync_two_pools (store, "first1", 5, 2, TRUE);
  sync_two_pools (store, "first2", 5, 2, FALSE);
  g_ptr_array_add (reqs, request_new ("port a", "product_id=1889", 1, VPA_POLICY_LEGACY,
                                      VPA_POLICY_SOURCE_DEFAULT));
  g_ptr_array_add (reqs, request_new ("port b", "physical_network=physnet2", 2,
                                      VPA_POLICY_LEGACY, VPA_POLICY_SOURCE_DEFAULT));
  verdicts = store_filter (store, &query);
  v = verdict_of (verdicts, "first1");
  g_assert_true (v->passes);
  g_assert_cmpfloat (v->weight, ==, 4.0);
  v = verdict_of (verdicts, "first2");
  g_assert_false (v->passes);
  g_assert_cmpstr (v->reason, ==, "port b: needs 2, 1 free devices match its spec (policy"
                                  " legacy from default)");
  assert_addresses_read (store, &query, both);
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  sync_two_pools (store, "tight", 1, 1, TRUE);
  g_ptr_array_remove_index (reqs, 1);
  verdicts = store_filter (store, &query);
  for (guint i = 0; i < verdicts->len; i++)
    g_assert_true (((const VpaFleetVerdict *) g_ptr_array_index (verdicts, i))->passes);
  g_assert_cmpfloat (verdict_of (verdicts, "first2")->weight, ==, 6.0);
  assert_addresses_read (store, &query, tight);
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  ((VpaRequest *) g_ptr_array_index (reqs, 0))->policy = VPA_POLICY_REQUIRED;
  query.numa_guest = TRUE;
  query.guest_nodes = node0;
  query.n_guest_nodes = 1;
  verdicts = store_filter (store, &query);
  for (guint i = 0; i < verdicts->len; i++)
    g_assert_true (((const VpaFleetVerdict *) g_ptr_array_index (verdicts, i))->passes);
  assert_addresses_read (store, &query, none);
}

/* The gpu-server sample in the store: its devices keep host bridge, root
 * port and switch; a required locality group passes only where a root
 * port holds free devices for all its members. */
static void
test_filter_locality (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *snap = g_build_filename (VPA_TEST_DATA, "hosts", "gpu-server.xml", NULL);
  g_autofree char *conf = g_build_filename (VPA_TEST_DATA, "hosts", "gpu-server.conf", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (conf, &error);
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaFleetHostData) hd = NULL;
  g_autoptr (GPtrArray) reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  g_autoptr (GPtrArray) verdicts = NULL;
  VpaFleetQuery query = { reqs, FALSE, NULL, 0, FALSE, FALSE };
  const VpaFleetDevice *gpu0 = NULL;
  VpaRequest *gpu, *net;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_no_error (error);
  inv = vpa_inventory_new (vpa_source_load (snap, &error), config, NULL, &error);
  g_assert_no_error (error);
  hd = vpa_fleet_host_data_from_inventory ("gpu-server", inv);
  for (guint i = 0; i < hd->devices->len; i++)
    {
      if (g_array_index (hd->devices, VpaFleetDevice, i).addr == VPA_ADDR (0, 0x18, 0, 0))
        gpu0 = &g_array_index (hd->devices, VpaFleetDevice, i);
    }
  g_assert_nonnull (gpu0);
  g_assert_cmpstr (gpu0->pcie_root, ==, "pci0000:15");
  g_assert_cmpstr (gpu0->pcie_port, ==, "0000:15:01.0");
  g_assert_cmpstr (gpu0->pcie_switch, ==, "0000:16:00.0");
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  store_sync (store, hd);

  gpu = request_new ("device 'ua-gpu0'", "vendor_id=10de", 1, VPA_POLICY_LEGACY,
                     VPA_POLICY_SOURCE_DEFAULT);
  net = request_new ("port 'ua-net0'", "physical_network=frontend", 1, VPA_POLICY_LEGACY,
                     VPA_POLICY_SOURCE_DEFAULT);
  g_ptr_array_add (reqs, gpu);
  g_ptr_array_add (reqs, net);
  gpu->locality_group = g_strdup ("g0");
  net->locality_group = g_strdup ("g0");
  gpu->locality_required = net->locality_required = TRUE;
  gpu->locality_level = net->locality_level = VPA_LOCALITY_SWITCH;
  verdicts = store_filter (store, &query);
  g_assert_false (verdict_of (verdicts, "gpu-server")->passes);
  g_assert_cmpstr (verdict_of (verdicts, "gpu-server")->reason, ==,
                   "locality group 'g0' (level switch, policy required): no switch has free "
                   "devices for all of device 'ua-gpu0', port 'ua-net0'");
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  /* The front-end card shares its host bridge with sw0. */
  gpu->locality_level = net->locality_level = VPA_LOCALITY_ROOT_COMPLEX;
  verdicts = store_filter (store, &query);
  g_assert_true (verdict_of (verdicts, "gpu-server")->passes);
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  /* The RDMA NICs sit next to the GPUs. */
  gpu->locality_level = net->locality_level = VPA_LOCALITY_SWITCH;
  g_free (((VpaSpecPair *) g_ptr_array_index (
             ((VpaSpec *) g_ptr_array_index (net->specs, 0))->pairs, 0))
            ->value);
  ((VpaSpecPair *) g_ptr_array_index (((VpaSpec *) g_ptr_array_index (net->specs, 0))->pairs, 0))
    ->value = g_strdup ("rdma");
  verdicts = store_filter (store, &query);
  g_assert_true (verdict_of (verdicts, "gpu-server")->passes);
}

/* Two required groups that each fit alone on the one switch with two
 * free GPUs, but not both at once: the host fails, naming both; with
 * one GPU for the second group it passes (the first on sw0, the second
 * on a switch with one free). */
static void
test_filter_locality_joint (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *snap = g_build_filename (VPA_TEST_DATA, "hosts", "gpu-server.xml", NULL);
  g_autofree char *conf = g_build_filename (VPA_TEST_DATA, "hosts", "gpu-server.conf", NULL);
  const VpaAddr held[] = { VPA_ADDR (0, 0x3c, 0, 0), VPA_ADDR (0, 0x9c, 0, 0),
                           VPA_ADDR (0, 0xba, 0, 0), VPA_ADDR (0, 0xbc, 0, 0) };
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (conf, &error);
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaFleetHostData) hd = NULL;
  g_autoptr (GPtrArray) reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  g_autoptr (GPtrArray) verdicts = NULL;
  VpaFleetQuery query = { reqs, FALSE, NULL, 0, FALSE, FALSE };
  guint n_held = 0;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_no_error (error);
  inv = vpa_inventory_new (vpa_source_load (snap, &error), config, NULL, &error);
  g_assert_no_error (error);
  hd = vpa_fleet_host_data_from_inventory ("gpu-server", inv);
  for (guint i = 0; i < hd->devices->len; i++)
    {
      VpaFleetDevice *dev = &g_array_index (hd->devices, VpaFleetDevice, i);
      for (guint h = 0; h < G_N_ELEMENTS (held); h++)
        {
          if (dev->addr == held[h])
            {
              dev->state = VPA_DEV_STATE_HELD;
              g_free (dev->held_by);
              dev->held_by = g_strdup ("other");
              n_held++;
            }
        }
    }
  g_assert_cmpuint (n_held, ==, G_N_ELEMENTS (held));
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  store_sync (store, hd);

  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *label = g_strdup_printf ("device 'ua-gpu%u'", i);
      VpaRequest *gpu = request_new (label, "vendor_id=10de", 2, VPA_POLICY_LEGACY,
                                     VPA_POLICY_SOURCE_DEFAULT);
      gpu->locality_group = g_strdup (i == 0 ? "a" : "b");
      gpu->locality_required = TRUE;
      gpu->locality_level = VPA_LOCALITY_SWITCH;
      g_ptr_array_add (reqs, gpu);
    }
  verdicts = store_filter (store, &query);
  g_assert_false (verdict_of (verdicts, "gpu-server")->passes);
  g_assert_cmpstr (verdict_of (verdicts, "gpu-server")->reason, ==,
                   "locality groups 'a' (level switch), 'b' (level switch) (policy required): "
                   "each has a domain with free devices for it alone, but no choice of domains "
                   "has free devices for all of them and the other requests together");
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  ((VpaRequest *) g_ptr_array_index (reqs, 1))->count = 1;
  verdicts = store_filter (store, &query);
  g_assert_true (verdict_of (verdicts, "gpu-server")->passes);
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  /* At the host bridge's level sw0 and sw1 are apart too (one bridge
   * each): still one bridge with two free GPUs for the 2 + 2. */
  ((VpaRequest *) g_ptr_array_index (reqs, 1))->count = 2;
  for (guint i = 0; i < 2; i++)
    ((VpaRequest *) g_ptr_array_index (reqs, i))->locality_level = VPA_LOCALITY_ROOT_COMPLEX;
  verdicts = store_filter (store, &query);
  g_assert_false (verdict_of (verdicts, "gpu-server")->passes);
}

static void
test_filter_store (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaFleetHostData) big = host_two_nodes ("big");
  g_autoptr (VpaFleetHostData) small = vpa_fleet_host_data_new ("small");
  g_autoptr (VpaFleetHostData) nosock = host_two_nodes ("nosocket");
  g_autoptr (VpaFleetHostData) remote = vpa_fleet_host_data_new ("remote");
  g_autoptr (GPtrArray) reqs = requests_new ();
  g_autoptr (GPtrArray) verdicts = NULL;
  const gint node0[] = { 0 };
  VpaFleetQuery query = { reqs, TRUE, node0, 1, FALSE, FALSE };
  const VpaFleetVerdict *v;

  if (fleet_fixture_skip (fx))
    return;
  store = store_open (fx, VPA_FLEET_OPEN_CREATE);
  add_cell (small, 0, 0);
  set_traits (small, VPA_FLEET_TRAIT_SOCKET " " VPA_FLEET_TRAIT_NET_NUMA);
  add_devices (small, 0x81, 3, "1889", VPA_DEV_TYPE_VF, 0, PHYSNET1, 1);
  set_traits (nosock, VPA_FLEET_TRAIT_NET_NUMA);
  add_cell (remote, 0, 0);
  add_cell (remote, 1, 0);
  set_traits (remote, VPA_FLEET_TRAIT_SOCKET);
  add_devices (remote, 0xc1, 8, "1889", VPA_DEV_TYPE_VF, 1, PHYSNET1, 0);
  store_sync (store, big);
  store_sync (store, small);
  store_sync (store, nosock);
  store_sync (store, remote);

  /* Three required VFs on node 0: big (6 free there, 3 left) and nosocket
   * (same) pass, small has 2 free, remote none on node 0. */
  g_ptr_array_add (reqs, request_new ("port ua-data0", "physical_network=physnet1,remote_managed=False",
                                      3, VPA_POLICY_REQUIRED, VPA_POLICY_SOURCE_FLAVOR));
  verdicts = store_filter (store, &query);
  g_assert_cmpuint (verdicts->len, ==, 4);
  v = g_ptr_array_index (verdicts, 0);
  g_assert_cmpstr (v->host, ==, "big");
  g_assert_true (v->passes);
  g_assert_cmpfloat (v->weight, ==, 3.0);
  g_assert_cmpstr (((VpaFleetVerdict *) g_ptr_array_index (verdicts, 1))->host, ==, "nosocket");
  v = verdict_of (verdicts, "small");
  g_assert_false (v->passes);
  g_assert_cmpstr (v->reason, ==,
                   "port ua-data0: needs 3, 2 free devices match its spec (policy required from flavor, guest nodes 0)");
  g_assert_false (verdict_of (verdicts, "remote")->passes);
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  /* socket: remote's node 1 shares socket 0 with node 0. The flavor
   * policy socket needs COMPUTE_SOCKET_PCI_NUMA_AFFINITY: nosocket fails
   * on the trait, naming it. */
  ((VpaRequest *) g_ptr_array_index (reqs, 0))->policy = VPA_POLICY_SOCKET;
  query.need_socket_trait = TRUE;
  verdicts = store_filter (store, &query);
  g_assert_true (verdict_of (verdicts, "remote")->passes);
  g_assert_true (verdict_of (verdicts, "big")->passes);
  v = verdict_of (verdicts, "nosocket");
  g_assert_false (v->passes);
  g_assert_nonnull (strstr (v->reason, VPA_FLEET_TRAIT_SOCKET));
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  /* A port with its own policy needs COMPUTE_NET_NUMA_AFFINITY. */
  query.need_socket_trait = FALSE;
  query.need_net_numa_trait = TRUE;
  verdicts = store_filter (store, &query);
  v = verdict_of (verdicts, "remote");
  g_assert_false (v->passes);
  g_assert_nonnull (strstr (v->reason, VPA_FLEET_TRAIT_NET_NUMA));
  g_assert_true (verdict_of (verdicts, "big")->passes);
  g_clear_pointer (&verdicts, g_ptr_array_unref);

  /* An unbound NUMA guest: any node may be the guest's. remote passes
   * on node 1, small fails everywhere. */
  query.need_net_numa_trait = FALSE;
  query.n_guest_nodes = 0;
  ((VpaRequest *) g_ptr_array_index (reqs, 0))->policy = VPA_POLICY_REQUIRED;
  ((VpaRequest *) g_ptr_array_index (reqs, 0))->count = 7;
  verdicts = store_filter (store, &query);
  v = g_ptr_array_index (verdicts, 0);
  g_assert_cmpstr (v->host, ==, "remote");
  g_assert_true (v->passes);
  g_assert_cmpstr (v->nodes, ==, "1");
  g_assert_cmpfloat (v->weight, ==, 1.0);
  v = verdict_of (verdicts, "big");
  g_assert_false (v->passes);
  g_assert_nonnull (strstr (v->reason, "no host node or socket"));
}

/* ------------------------------------------------------------------ */
/* Filter semantics (no database)                                      */
/* ------------------------------------------------------------------ */

/* A host with cells 0,1 (socket 0) and 2 (socket s2), and pools of free
 * devices: "product:type:numa:count[:tags]" each. */
static VpaFleetHost *
filter_host (const char *name, gint s2, const char *const *pools)
{
  VpaFleetHost *host = g_new0 (VpaFleetHost, 1);
  VpaFleetCell cells[] = { { 0, 0 }, { 1, 0 }, { 2, s2 } };

  host->name = g_strdup (name);
  host->traits = g_new0 (char *, 1);
  host->cells = g_array_new (FALSE, FALSE, sizeof (VpaFleetCell));
  g_array_append_vals (host->cells, cells, G_N_ELEMENTS (cells));
  host->pools = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_pool_free);
  for (guint i = 0; pools[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (pools[i], ":", 5);
      VpaPool *p = vpa_pool_new ();

      p->keys = VPA_POOL_KEYS_FLEET;
      p->host = g_strdup (name);
      g_strlcpy (p->vendor_id, "8086", sizeof p->vendor_id);
      g_strlcpy (p->product_id, f[0], sizeof p->product_id);
      g_assert_true (vpa_dev_type_from_string (f[1], &p->dev_type));
      p->numa_node = atoi (f[2]);
      p->socket = 0;
      p->free = p->total = (guint) atoi (f[3]);
      p->tags = vpa_fleet_tags_parse (f[4] != NULL ? f[4] : "{}");
      p->first_addr = VPA_ADDR (0, 0x10 + i, 0, 0);
      g_ptr_array_add (host->pools, p);
    }
  return host;
}

static gboolean
supports (const VpaFleetHost *host, GPtrArray *reqs, const gint *nodes, guint n,
          gdouble *weight)
{
  return vpa_fleet_filter_supports_requests (host, reqs, nodes != NULL, nodes, n, weight, NULL);
}

static void
test_filter_policies (void)
{
  /* Nova's demo (docs/nova.md, "Nova's own tests"): identical devices on nodes 0, 1,
   * unknown and 2; the guest on node 0; nodes 0 and 1 share a socket. */
  const char *const pools[] = { "0001:type-PCI:0:1", "0001:type-PCI:1:1",
                                "0001:type-PCI:-1:1", "0001:type-PCI:2:1", NULL };
  g_autoptr (VpaFleetHost) host = filter_host ("h", 1, pools);
  const gint node0[] = { 0 };
  struct {
    VpaPolicy policy;
    guint count;
    gboolean ok;
  } cases[] = {
    { VPA_POLICY_REQUIRED, 1, TRUE },
    { VPA_POLICY_REQUIRED, 2, FALSE },
    { VPA_POLICY_LEGACY, 2, TRUE },
    { VPA_POLICY_LEGACY, 3, FALSE },
    { VPA_POLICY_PREFERRED, 3, TRUE },
    { VPA_POLICY_PREFERRED, 4, TRUE },
    { VPA_POLICY_PREFERRED, 5, FALSE },
    { VPA_POLICY_SOCKET, 2, TRUE },
    { VPA_POLICY_SOCKET, 3, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GPtrArray) reqs = requests_new ();
      g_ptr_array_add (reqs, request_new ("alias a", "vendor_id=8086,product_id=0001",
                                          cases[i].count, cases[i].policy,
                                          VPA_POLICY_SOURCE_ALIAS));
      g_assert_cmpint (supports (host, reqs, node0, 1, NULL), ==, cases[i].ok);
      /* Without guest cells NUMA is ignored: up to 4 fit. */
      g_assert_cmpint (supports (host, reqs, NULL, 0, NULL), ==, cases[i].count <= 4);
    }
}

static void
test_filter_socket_unknown (void)
{
  /* One cell without a socket disables socket host-wide (docs/nova.md,
   * "The socket policy"). */
  const char *const pools[] = { "0001:type-PCI:0:1", "0001:type-PCI:1:1", NULL };
  g_autoptr (VpaFleetHost) host = filter_host ("h", VPA_SOCKET_NONE, pools);
  g_autoptr (GPtrArray) reqs = requests_new ();
  const gint node0[] = { 0 };

  g_ptr_array_add (reqs, request_new ("alias a", "product_id=0001", 2, VPA_POLICY_SOCKET,
                                      VPA_POLICY_SOURCE_FLAVOR));
  g_assert_false (supports (host, reqs, node0, 1, NULL));
  ((VpaRequest *) g_ptr_array_index (reqs, 0))->count = 1;
  g_assert_true (supports (host, reqs, node0, 1, NULL));
}

static void
test_filter_exclusions (void)
{
  /* A PF with the VFs' product id counts at the NUMA stage and is then
   * dropped (docs/nova.md, "The filter order"): legacy for 1 VF fails
   * although a None VF exists. */
  const char *const pools[] = { "1515:type-PF:0:1", "1515:type-VF:-1:1", NULL };
  const char *const rm[] = { "101e:type-VF:0:2:{\"remote_managed\":\"true\"}",
                             "101e:type-VF:0:1", NULL };
  g_autoptr (VpaFleetHost) host = filter_host ("h", 1, pools);
  g_autoptr (VpaFleetHost) rmhost = filter_host ("r", 1, rm);
  g_autoptr (GPtrArray) reqs = requests_new ();
  g_autoptr (GPtrArray) pf = requests_new ();
  g_autoptr (GPtrArray) zero = requests_new ();
  g_autoptr (GPtrArray) none = requests_new ();
  const gint node0[] = { 0 };
  gdouble weight = -1;

  g_ptr_array_add (reqs, request_new ("alias vf", "product_id=1515", 1, VPA_POLICY_LEGACY,
                                      VPA_POLICY_SOURCE_ALIAS));
  g_assert_false (supports (host, reqs, node0, 1, NULL));
  g_assert_true (supports (host, reqs, NULL, 0, NULL));
  /* PF pools only for requests asking type-PF. */
  g_ptr_array_add (pf, request_new ("alias pf", "product_id=1515,dev_type=type-PF", 1,
                                    VPA_POLICY_REQUIRED, VPA_POLICY_SOURCE_ALIAS));
  g_assert_true (supports (host, pf, node0, 1, &weight));
  g_assert_cmpfloat (weight, ==, 0.0);
  /* A count=0 request fails when nothing matches (docs/nova.md,
   * "Scheduler and compute claim"). */
  g_ptr_array_add (zero, request_new ("alias z", "product_id=1515", 0, VPA_POLICY_LEGACY,
                                      VPA_POLICY_SOURCE_ALIAS));
  g_assert_true (supports (host, zero, NULL, 0, NULL));
  g_ptr_array_add (none, request_new ("alias z", "product_id=ffff", 0, VPA_POLICY_LEGACY,
                                      VPA_POLICY_SOURCE_ALIAS));
  g_assert_false (supports (host, none, NULL, 0, NULL));
  /* remote-managed pools only for requests asking for them. */
  g_ptr_array_set_size (reqs, 0);
  g_ptr_array_add (reqs, request_new ("alias vf", "product_id=101e", 2, VPA_POLICY_LEGACY,
                                      VPA_POLICY_SOURCE_ALIAS));
  g_assert_false (supports (rmhost, reqs, NULL, 0, NULL));
  g_ptr_array_set_size (reqs, 0);
  g_ptr_array_add (reqs, request_new ("port p", "product_id=101e,remote_managed=True", 2,
                                      VPA_POLICY_LEGACY, VPA_POLICY_SOURCE_PORT));
  g_assert_true (supports (rmhost, reqs, NULL, 0, NULL));
}

static void
test_filter_sequential (void)
{
  /* A legacy request listed first takes the only affine device (pool
   * order), so a later required one fails; the other order passes. */
  const char *const pools[] = { "0001:type-PCI:0:1", "0001:type-PCI:-1:1", NULL };
  g_autoptr (VpaFleetHost) host = filter_host ("h", 1, pools);
  g_autoptr (GPtrArray) reqs = requests_new ();
  const gint node0[] = { 0 };

  g_ptr_array_add (reqs, request_new ("alias a", "product_id=0001", 1, VPA_POLICY_LEGACY,
                                      VPA_POLICY_SOURCE_ALIAS));
  g_ptr_array_add (reqs, request_new ("alias b", "product_id=0001", 1, VPA_POLICY_REQUIRED,
                                      VPA_POLICY_SOURCE_ALIAS));
  g_assert_false (supports (host, reqs, node0, 1, NULL));
  g_ptr_array_add (reqs, g_ptr_array_steal_index (reqs, 0));
  g_assert_true (supports (host, reqs, node0, 1, NULL));
}

static void
test_filter_case_and_tags (void)
{
  /* physnet matches case-insensitively; a missing tag matches only a
   * None spec value (a tunnelled port wants untagged pools). */
  const char *const pools[] = { "1889:type-VF:0:1:" PHYSNET1, "1889:type-VF:0:1", NULL };
  g_autoptr (VpaFleetHost) host = filter_host ("h", 1, pools);
  g_autoptr (GPtrArray) reqs = requests_new ();
  gdouble weight = 0;

  g_ptr_array_add (reqs, request_new ("port a", "physical_network=PhysNet1,remote_managed=False",
                                      1, VPA_POLICY_LEGACY, VPA_POLICY_SOURCE_DEFAULT));
  g_ptr_array_add (reqs, request_new ("port b", "physical_network=,remote_managed=False",
                                      1, VPA_POLICY_LEGACY, VPA_POLICY_SOURCE_DEFAULT));
  g_assert_true (supports (host, reqs, NULL, 0, &weight));
  g_assert_cmpfloat (weight, ==, 0.0);
  ((VpaRequest *) g_ptr_array_index (reqs, 1))->count = 2;
  g_assert_false (supports (host, reqs, NULL, 0, NULL));
}

/* ------------------------------------------------------------------ */
/* Names and URIs                                                      */
/* ------------------------------------------------------------------ */

static void
test_host_names (void)
{
  const char *ok[] = { "h1", "compute-01.example.org", "a_b", "0", NULL };
  const char *bad[] = { "", "h 1", "h;1", "h/1", "h\n1", "h'1", "é", NULL };
  g_autofree char *longest = g_strnfill (253, 'a');
  g_autofree char *too_long = g_strnfill (254, 'a');

  for (guint i = 0; ok[i] != NULL; i++)
    g_assert_true (vpa_fleet_host_name_valid (ok[i], NULL));
  g_assert_true (vpa_fleet_host_name_valid (longest, NULL));
  for (guint i = 0; bad[i] != NULL; i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (vpa_fleet_host_name_valid (bad[i], &error));
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
    }
  g_assert_false (vpa_fleet_host_name_valid (too_long, NULL));
}

static void
test_store_uris (void)
{
  const char *invalid[] = { "", "sqlite:relative.db", "sqlite://host/x.db", "sqlite:///",
                            "mysql://db/x", "redis:x", "postgresql://[bad", NULL };
  const char *unreachable[] = { "/nonexistent-dir/fleet.db",
                                "sqlite:///nonexistent-dir/fleet.db",
                                "postgresql:///x?host=/nonexistent-dir&connect_timeout=2", NULL };
  g_autofree char *redacted = vpa_fleet_store_uri_redact ("postgresql://u:secret@db:5432/f?password=x&a=b");
  g_autofree char *redacted2 = vpa_fleet_store_uri_redact ("postgresql://db/f?password=***&password=y");
  static const char *const libpq[][3] = {
    { "postgresql://u:s3cret@[::1/db", "in URI: \"postgresql://u:s3cret@[::1/db\"",
      "in URI: \"postgresql://u:***@[::1/db\"" },
    { "postgresql://u@h/db?password=a%zz", "invalid percent-encoded token: \"a%zz\"",
      "invalid percent-encoded token: \"***\"" },
    { "postgresql://u:p%40ss@h/db", "password \"p@ss\" or \"p%40ss\"",
      "password \"***\" or \"***\"" },
    { "postgresql://h/db?a=1", "no password: \"postgresql://h/db?a=1\"",
      "no password: \"postgresql://h/db?a=1\"" },
  };

  for (guint i = 0; invalid[i] != NULL; i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (vpa_fleet_store_open (invalid[i], VPA_FLEET_OPEN_CREATE, &error));
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
    }
  for (guint i = 0; unreachable[i] != NULL; i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (vpa_fleet_store_open (unreachable[i], VPA_FLEET_OPEN_CREATE, &error));
      g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
    }
  /* the password shown as ***, not dropped; every password= of the query */
  g_assert_cmpstr (redacted, ==, "postgresql://u:***@db:5432/f?password=***&a=b");
  g_assert_cmpstr (redacted2, ==, "postgresql://db/f?password=***&password=***");
  /* what libpq says about a URI: the URI redacted, each password (as
   * written and decoded) hidden */
  for (guint i = 0; i < G_N_ELEMENTS (libpq); i++)
    {
      g_autofree char *out = vpa_fleet_store_message_redact (libpq[i][1], libpq[i][0]);
      g_assert_cmpstr (out, ==, libpq[i][2]);
    }
}

static void
test_tags_canonical (void)
{
  VpaSpecPair a = { (char *) "trusted", (char *) "true" };
  VpaSpecPair b = { (char *) "physical_network", (char *) "net\"1" };
  g_autoptr (GPtrArray) pairs = g_ptr_array_new ();
  g_autoptr (GPtrArray) reversed = g_ptr_array_new ();
  g_autofree char *s1 = NULL, *s2 = NULL;

  g_ptr_array_add (pairs, &a);
  g_ptr_array_add (pairs, &b);
  g_ptr_array_add (reversed, &b);
  g_ptr_array_add (reversed, &a);
  s1 = vpa_fleet_tags_canonical (pairs);
  s2 = vpa_fleet_tags_canonical (reversed);
  g_assert_cmpstr (s1, ==, "{\"physical_network\":\"net\\\"1\",\"trusted\":\"true\"}");
  g_assert_cmpstr (s1, ==, s2);
  g_assert_cmpint (vpa_fleet_tagset_key (s1), ==, vpa_fleet_tagset_key (s2));
  g_assert_cmpint (vpa_fleet_tagset_key (s1), >, 0);
  g_assert_cmpint (vpa_fleet_tagset_key ("{}"), ==, 0);
  g_assert_cmpint (vpa_fleet_tagset_key (PHYSNET1), !=, vpa_fleet_tagset_key (s1));
}

/* ------------------------------------------------------------------ */
/* Whole-guest placement on the node capacity rows                     */
/* ------------------------------------------------------------------ */

/* The inventory of data/hosts/NAME.xml under NAME.conf, as sync and
 * place read it. */
static VpaInventory *
sample_inventory (const char *name, VpaConfig **config)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *xml = g_strdup_printf ("%s/hosts/%s.xml", VPA_TEST_DATA, name);
  g_autofree char *conf = g_strdup_printf ("%s/hosts/%s.conf", VPA_TEST_DATA, name);
  g_autoptr (VpaHost) host = NULL;
  VpaInventory *inv;

  *config = vpa_config_load_file (conf, &error);
  g_assert_no_error (error);
  host = vpa_source_load (xml, &error);
  g_assert_no_error (error);
  inv = vpa_inventory_new (g_steal_pointer (&host), *config, NULL, &error);
  g_assert_no_error (error);
  return inv;
}

static void
sync_sample (VpaFleetStore *store, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample_inventory (name, &config);
  g_autoptr (VpaFleetHostData) data = vpa_fleet_host_data_from_inventory (name, inv);

  g_assert_true (vpa_fleet_store_sync_host (store, data, &error));
  g_assert_no_error (error);
}

static VpaDomain *
domain_parse (const char *path, const char *text)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *buf = NULL;
  gsize len;
  VpaDomain *dom;

  if (text != NULL)
    {
      buf = g_strdup (text);
    }
  else
    {
      g_assert_true (g_file_get_contents (path, &buf, &len, NULL));
    }
  dom = vpa_domain_parse (&(VpaDoc){ buf, strlen (buf), path }, &error);
  g_assert_no_error (error);
  return dom;
}

/* The filter's verdict on host for the domain (the hosts loaded as the
 * command line loads them for a placement="auto" guest). */
static VpaFleetVerdict *
fit_verdict (VpaFleetStore *store, const VpaConfig *config, const VpaDomain *dom,
             const char *host)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) requests = vpa_requests_from_domain (dom, config, &error);
  g_autoptr (GPtrArray) hosts = NULL;
  g_autoptr (GPtrArray) verdicts = NULL;
  VpaFleetQuery query = { 0 };

  g_assert_no_error (error);
  hosts = vpa_fleet_store_load_hosts (store, VPA_FLEET_LOAD_POOLS | VPA_FLEET_LOAD_CAPACITY,
                                      &error);
  g_assert_no_error (error);
  query.requests = requests;
  query.numa_guest = dom->numa_guest;
  query.numa_auto = dom->numa_auto ? dom : NULL;
  query.config = config;
  verdicts = vpa_fleet_filter (hosts, &query);
  for (guint i = 0; i < verdicts->len; i++)
    {
      if (strcmp (((VpaFleetVerdict *) g_ptr_array_index (verdicts, i))->host, host) == 0)
        return g_ptr_array_steal_index (verdicts, i);
    }
  g_assert_not_reached ();
}

/* The inventory of a snapshot with its configuration and the claims
 * of its <domain>s, as place sees it. */
static VpaInventory *
snapshot_inventory (const char *xml, const char *conf, VpaConfig **config)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;
  GPtrArray *claims;
  VpaInventory *inv;

  *config = vpa_config_load_file (conf, &error);
  g_assert_no_error (error);
  host = vpa_source_load (xml, &error);
  g_assert_no_error (error);
  claims = vpa_claim_filter (host->claims, NULL, FALSE);
  inv = vpa_inventory_new (g_steal_pointer (&host), *config, claims, &error);
  g_assert_no_error (error);
  return inv;
}

/* One guest (text, or the file path) on one synced host: the host
 * passes iff place places the guest on the same snapshot, on the nodes
 * place chooses, and a failure says what place says. */
static void
fit_equals_place_one (VpaFleetStore *store, const char *name, VpaInventory *inv,
                      const VpaConfig *config, const char *path, const char *text,
                      guint *passed, guint *failed)
{
  g_autoptr (VpaDomain) dom = domain_parse (path, text);
  g_autoptr (GPtrArray) requests = vpa_requests_from_domain (dom, config, NULL);
  g_autoptr (VpaNumaResult) res = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) fit_error = NULL;
  g_autoptr (GError) place_error = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autofree char *buf = NULL;
  g_autofree char *placed = NULL;
  VpaFleetVerdict *v;
  gsize len;

  g_assert_nonnull (requests);
  res = vpa_pipeline_numa_fit (dom, inv, config, inv->claims, requests, NULL, &fit_error);
  /* place itself, end to end, on the same snapshot */
  if (text != NULL)
    {
      buf = g_strdup (text);
    }
  else
    {
      g_assert_true (g_file_get_contents (path, &buf, NULL, NULL));
    }
  len = strlen (buf);
  host = vpa_source_load (inv->host->source, &error);
  g_assert_no_error (error);
  claims = vpa_claim_filter (host->claims, NULL, FALSE);
  placed = vpa_pipeline_place (g_steal_pointer (&host), &(VpaPlaceOptions){ .claims = claims, .config = config }, &(VpaDoc){ buf, len, path }, NULL, &place_error);
  g_assert_cmpint (placed != NULL, ==, res != NULL);

  v = fit_verdict (store, config, dom, name);
  g_test_message ("%s on %s: %s %s", path, name, v->passes ? "pass" : "fail",
                  v->passes ? v->nodes : v->reason);
  if (v->passes != (res != NULL))
    {
      g_error ("%s on %s: the filter says %s (%s), place %s (%s)", path, name,
               v->passes ? "pass" : "fail", v->passes ? v->nodes : v->reason,
               res != NULL ? "places it" : "fails", res != NULL ? "-" : fit_error->message);
    }
  if (res != NULL)
    {
      g_autoptr (GString) nodes = g_string_new (NULL);
      for (guint n = 0; n < res->nodes->len; n++)
        {
          g_string_append_printf (nodes, "%s%d", n > 0 ? "," : "",
                                  g_array_index (res->nodes, gint, n));
        }
      g_assert_cmpstr (v->nodes, ==, nodes->str);
      (*passed)++;
    }
  else
    {
      g_assert_cmpstr (v->reason, ==, fit_error->message);
      g_assert_nonnull (strstr (place_error->message, fit_error->message));
      (*failed)++;
    }
  vpa_fleet_filter_verdict_free (v);
}

/* Every locality scenario (tests/fleet-locality.c) on one snapshot. */
static void
fit_equals_place_locality (VpaFleetStore *store, const char *name, const char *xml,
                           const char *conf, const char *physnet, const char *frontend,
                           guint *passed, guint *failed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = snapshot_inventory (xml, conf, &config);
  g_autoptr (VpaFleetHostData) data = vpa_fleet_host_data_from_inventory (name, inv);
  g_autoptr (GPtrArray) domains = vpa_test_fleet_locality_domains (physnet, frontend);

  g_assert_true (vpa_fleet_store_sync_host (store, data, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < domains->len; i++)
    {
      fit_equals_place_one (store, name, inv, config, vpa_test_fleet_locality_name (i),
                            g_ptr_array_index (domains, i),
                            passed, failed);
    }
}

/* For every data/numa guest on pinned and dual-socket, and every
 * locality scenario on gpu-server and on generated hosts with GPUs
 * below switches: the host passes iff place places the guest on the
 * same snapshot, on the nodes place chooses, and a failure says what
 * place says. */
static void
test_fit_equals_place (FleetFixture *fx, gconstpointer data)
{
  static const char *const samples[] = { "pinned", "dual-socket" };
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GPtrArray) names = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL;
  guint passed = 0, failed = 0;

  if (fleet_fixture_skip (fx))
    return;
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_no_error (error);
  for (guint s = 0; s < G_N_ELEMENTS (samples); s++)
    sync_sample (store, samples[s]);
  names = vpa_test_list_fixtures (VPA_TEST_DATA "/numa", "*.xml");
  g_assert_cmpuint (names->len, >, 0);
  for (guint s = 0; s < G_N_ELEMENTS (samples); s++)
    {
      for (guint i = 0; i < names->len; i++)
        {
          g_autofree char *path = g_strdup_printf ("%s/numa/%s.xml", VPA_TEST_DATA,
                                                   (const char *) g_ptr_array_index (names, i));
          g_autoptr (VpaConfig) config = NULL;
          g_autoptr (VpaInventory) inv = sample_inventory (samples[s], &config);

          fit_equals_place_one (store, samples[s], inv, config, path, NULL, &passed, &failed);
        }
    }
  g_assert_cmpuint (passed, >, 0);
  g_assert_cmpuint (failed, >, 0);

  /* Locality groups with automatic placement. */
  passed = failed = 0;
  fit_equals_place_locality (store, "gpu-server", VPA_TEST_DATA "/hosts/gpu-server.xml",
                             VPA_TEST_DATA "/hosts/gpu-server.conf", "rdma", "frontend",
                             &passed, &failed);
  dir = g_dir_make_tmp ("vpa-fleet-locality-XXXXXX", &error);
  g_assert_no_error (error);
  for (guint i = 0; i < vpa_test_fleet_locality_n_generated (); i++)
    {
      const char *name = vpa_test_fleet_locality_generate (i, dir);
      g_autofree char *xml = g_strdup_printf ("%s/%s.xml", dir, name);
      g_autofree char *conf = g_strdup_printf ("%s/%s.conf", dir, name);

      fit_equals_place_locality (store, name, xml, conf, "physnet1", "physnet2", &passed,
                                 &failed);
      g_unlink (xml);
      g_unlink (conf);
    }
  g_rmdir (dir);
  g_test_message ("locality scenarios: the filter and place pass %u, fail %u", passed, failed);
  g_assert_cmpuint (passed, >, 0);
  g_assert_cmpuint (failed, >, 0);
}

/* A dedicated guest of one cell on pinned: VCPUS vCPUs, MEM KiB in
 * PAGE-KiB pages (0: none), asking for ALIASES (or ""). */
static char *
auto_domain (guint vcpus, guint64 mem, guint64 page, const char *aliases)
{
  g_autofree char *size = g_strdup_printf ("%" G_GUINT64_FORMAT, page);

  return g_strdup_printf (
    "<domain type='kvm'><name>fit</name>"
    "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
    "<vpa:numa placement='auto' cpu-policy='dedicated'/>%s%s%s"
    "</vpa:affinity></metadata>"
    "<memory unit='KiB'>%" G_GUINT64_FORMAT "</memory>%s%s%s<vcpu>%u</vcpu>"
    "<cpu><numa><cell id='0' cpus='0-%u' memory='%" G_GUINT64_FORMAT "' unit='KiB'/></numa></cpu>"
    "</domain>",
    aliases[0] != '\0' ? "<vpa:flavor aliases='" : "", aliases, aliases[0] != '\0' ? "'/>" : "",
    mem, page != 0 ? "<memoryBacking><hugepages><page size='" : "",
    page != 0 ? size : "",
    page != 0 ? "' unit='KiB'/></hugepages></memoryBacking>" : "", vcpus, vcpus - 1, mem);
}

/* A host with room passes; one without CPUs, memory, pages or devices on
 * a node that has the rest fails, saying what the best node lacks. */
static void
test_fit_lacks (FleetFixture *fx, gconstpointer data)
{
  static const struct {
    guint vcpus;
    guint64 mem, page;
    const char *aliases;
    const char *lacks; /* NULL: passes */
  } cases[] = {
    { 2, 1048576, 0, "", NULL },
    { 2, 2097152, 1048576, "", NULL },
    { 12, 1048576, 0, "", "free dedicated CPUs" },
    { 2, 67108864, 0, "", "of memory" },
    { 2, 16777216, 1048576, "", "pages" },
  };
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) error = NULL;

  if (fleet_fixture_skip (fx))
    return;
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_no_error (error);
  sync_sample (store, "pinned");
  inv = sample_inventory ("pinned", &config);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = auto_domain (cases[i].vcpus, cases[i].mem, cases[i].page,
                                           cases[i].aliases);
      g_autoptr (VpaDomain) dom = domain_parse ("fit.xml", text);
      VpaFleetVerdict *v = fit_verdict (store, config, dom, "pinned");

      g_test_message ("case %u: %s", i, v->passes ? v->nodes : v->reason);
      g_assert_cmpint (v->passes, ==, cases[i].lacks == NULL);
      if (cases[i].lacks != NULL)
        {
          g_assert_nonnull (strstr (v->reason, "guest cell 0"));
          g_assert_nonnull (strstr (v->reason, cases[i].lacks));
        }
      vpa_fleet_filter_verdict_free (v);
    }
}

/* The schema of version 1 as that program created it (%1$s the id
 * column, %2$s text, %3$s table options), with one host, its cells and
 * a device: a store synced before node capacity existed. */
static const char schema_v1[] =
  "CREATE TABLE schema_version ("
  " application %2$s NOT NULL, version INTEGER NOT NULL, applied_at %2$s NOT NULL);"
  "CREATE TABLE hosts ("
  " id %1$s, name %2$s NOT NULL UNIQUE, traits %2$s NOT NULL DEFAULT '',"
  " last_sync %2$s);"
  "CREATE TABLE host_cells ("
  " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
  " node INTEGER NOT NULL, socket INTEGER,"
  " PRIMARY KEY (host_id, node))%3$s;"
  "CREATE TABLE devices ("
  " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
  " address %2$s NOT NULL,"
  " vendor_id %2$s NOT NULL, product_id %2$s NOT NULL,"
  " dev_type %2$s NOT NULL CHECK (dev_type IN ('type-PCI', 'type-PF', 'type-VF')),"
  " numa_node INTEGER, parent_addr %2$s,"
  " tags %2$s NOT NULL, tagset BIGINT NOT NULL,"
  " netdev %2$s, held_by %2$s,"
  " state %2$s NOT NULL CHECK (state IN ('free', 'held', 'blocked')),"
  " PRIMARY KEY (host_id, address))%3$s;"
  "CREATE INDEX devices_pools ON devices"
  " (host_id, vendor_id, product_id, dev_type, numa_node, tagset, state);"
  "INSERT INTO schema_version VALUES ('virt-pci-affinity-fleet', 1, '2026-01-01T00:00:00Z');"
  "INSERT INTO hosts (id, name, traits, last_sync) VALUES (1, 'pinned', '', '2026-01-01T00:00:00Z');"
  "INSERT INTO host_cells VALUES (1, 0, 0), (1, 1, 1);"
  "INSERT INTO devices VALUES (1, '0000:17:00.0', '8086', '159b', 'type-PF', 0, NULL, '{}', 0,"
  " NULL, NULL, 'free');";

/* A store of schema version 1 opened by this program migrates (reader
 * or writer, once): its rows stay, a placement="auto" guest is refused
 * for want of capacity rows until the host syncs, then fits. */
static void
test_migration (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *sql = NULL;
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaFleetStore) again = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) pools = NULL;
  g_autoptr (VpaDomain) dom = domain_parse (VPA_TEST_DATA "/numa/dedicated-prefer.xml", NULL);
  VpaFleetVerdict *v;

  if (fleet_fixture_skip (fx))
    return;
  if (fx->backend == FLEET_BACKEND_SQLITE)
    {
      sql = g_strdup_printf (schema_v1, "INTEGER PRIMARY KEY", "TEXT", " WITHOUT ROWID");
    }
  else
    {
      sql = g_strdup_printf (schema_v1, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                             "TEXT COLLATE \"C\"", "");
    }
  fleet_fixture_exec (fx, sql);

  /* A reader refuses it; sync migrates it through every step (1 -> 2,
   * the PCIe columns, 2 -> 3, node capacity, 3 -> 4, reserved devices,
   * 4 -> 5, networks, 5 -> 6, the free devices' index). */
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_assert_null (store);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, "'fleet sync' upgrades it"));
  g_clear_error (&error);
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_no_error (error);
  pools = vpa_fleet_store_query_pools (store, "pinned", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (pools->len, ==, 1);
  inv = sample_inventory ("pinned", &config);
  v = fit_verdict (store, config, dom, "pinned");
  g_assert_false (v->passes);
  g_assert_nonnull (strstr (v->reason, "no node capacity"));
  vpa_fleet_filter_verdict_free (v);

  /* Opened again: already at the current version (a second migration
   * would fail adding columns that exist). */
  again = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_no_error (error);
  sync_sample (again, "pinned");
  v = fit_verdict (again, config, dom, "pinned");
  g_assert_true (v->passes);
  g_assert_cmpstr (v->nodes, ==, "1");
  vpa_fleet_filter_verdict_free (v);

  /* The version row says so. */
  {
    g_autofree char *del = g_strdup_printf ("DELETE FROM schema_version WHERE version = %d",
                                            VPA_FLEET_SCHEMA_VERSION);
    fleet_fixture_exec (fx, del);
  }
  g_clear_pointer (&again, vpa_fleet_store_close);
  again = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_null (again);
}

/* Devices on the node: 5 dedicated vCPUs only node 1 has, 5 physnet1
 * VF ports required on the guest's node: node 1 has 4 such VFs. With 4
 * ports it passes on node 1. */
static void
test_fit_lacks_devices (FleetFixture *fx, gconstpointer data)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) error = NULL;

  if (fleet_fixture_skip (fx))
    return;
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_CREATE, &error);
  g_assert_no_error (error);
  sync_sample (store, "pinned");
  inv = sample_inventory ("pinned", &config);
  for (guint ports = 4; ports <= 5; ports++)
    {
      g_autoptr (GString) text = g_string_new (
        "<domain type='kvm'><name>fit</name>"
        "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
        "<vpa:numa placement='auto' cpu-policy='dedicated'/>");
      g_autoptr (VpaDomain) dom = NULL;
      VpaFleetVerdict *v;

      for (guint p = 0; p < ports; p++)
        g_string_append_printf (text, "<vpa:port device='ua-net%u' physnet='physnet1' policy='required'/>", p);
      g_string_append (text, "</vpa:affinity></metadata><memory unit='KiB'>1048576</memory>"
                             "<vcpu>5</vcpu><cpu><numa><cell id='0' cpus='0-4' memory='1048576'"
                             " unit='KiB'/></numa></cpu><devices>");
      for (guint p = 0; p < ports; p++)
        g_string_append_printf (text, "<interface type='hostdev'><alias name='ua-net%u'/></interface>", p);
      g_string_append (text, "</devices></domain>");
      dom = domain_parse ("fit.xml", text->str);
      v = fit_verdict (store, config, dom, "pinned");
      g_test_message ("%u ports: %s", ports, v->passes ? v->nodes : v->reason);
      if (ports == 4)
        {
          g_assert_true (v->passes);
          g_assert_cmpstr (v->nodes, ==, "1");
        }
      else
        {
          g_assert_false (v->passes);
          g_assert_nonnull (strstr (v->reason, "port 'ua-net"));
        }
      vpa_fleet_filter_verdict_free (v);
    }
}

/* ------------------------------------------------------------------ */
/* The command line (tests/fleet/fleet-cli)                            */
/* ------------------------------------------------------------------ */

/* pools' JSON of the in-process pools, with "host" first in each pool:
 * what `fleet pools --format json` must print after a sync. */
static char *
inprocess_pools_json (const char *xml, const char *conf, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (conf, &error);
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GArray) pools = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  g_assert_no_error (error);
  host = vpa_snapshot_load (xml, &error);
  g_assert_no_error (error);
  inv = vpa_inventory_new (g_steal_pointer (&host), config, NULL, &error);
  g_assert_no_error (error);
  pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_SOCKET);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "pools");
  json_builder_begin_array (b);
  for (guint i = 0; i < pools->len; i++)
    {
      VpaPool *pool = &g_array_index (pools, VpaPool, i);
      pool->keys |= VPA_POOL_KEY_HOST;
      pool->host = g_strdup (name);
      vpa_output_pool_json_add (b, config, pool);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

/* After a sync, fleet pools --host H prints the in-process pools of H's
 * inventory, for every sample host. */
static void
test_samples_consistency (FleetFixture *fx, gconstpointer data)
{
  const char *dir = VPA_TEST_DATA "/hosts";
  g_autoptr (GPtrArray) names = NULL;

  if (fleet_fixture_skip (fx))
    return;
  names = vpa_test_list_fixtures (dir, "*.xml");
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *xml = g_strdup_printf ("%s/%s.xml", dir, name);
      g_autofree char *conf = g_strdup_printf ("%s/%s.conf", dir, name);
      g_autofree char *expect = inprocess_pools_json (xml, conf, name);
      g_autofree char *out = NULL, *err = NULL;

      g_assert_cmpint (fleet_cli (&out, &err, "sync", "--store", fx->uri, "--inventory", xml,
                                  "--config", conf, "--host", name, NULL),
                       ==, 0);
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
      g_assert_cmpint (fleet_cli (&out, &err, "pools", "--store", fx->uri, "--host", name,
                                  "--format", "json", NULL),
                       ==, 0);
      g_assert_cmpstr (err, ==, "");
      g_assert_cmpstr (out, ==, expect);
    }
}

/* A guest with one cell, bound to the host node between head and tail. */
static const char filter_domain_head[] =
  "<domain type='kvm'><name>g1</name><vcpu>2</vcpu>"
  "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
  "<vpa:flavor aliases='QuickAssist:1'/>"
  "<vpa:port device='ua-net0' physnet='physnet1' policy='required'/>"
  "</vpa:affinity></metadata>"
  "<cpu><numa><cell id='0' cpus='0-1' memory='1048576'/></numa></cpu>"
  "<numatune><memnode cellid='0' mode='strict' nodeset='";
static const char filter_domain_tail[] =
  "'/></numatune>"
  "<devices><interface type='hostdev'><alias name='ua-net0'/></interface></devices>"
  "</domain>";

static void
test_cli (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *xml = g_build_filename (VPA_TEST_DATA, "hosts", "dual-socket.xml", NULL);
  g_autofree char *conf = g_build_filename (VPA_TEST_DATA, "hosts", "dual-socket.conf", NULL);
  g_autofree char *dom0 = g_build_filename (fx->tmpdir, "node0.xml", NULL);
  g_autofree char *dom1 = g_build_filename (fx->tmpdir, "node1.xml", NULL);
  g_autofree char *text0 = g_strconcat (filter_domain_head, "0", filter_domain_tail, NULL);
  g_autofree char *text1 = g_strconcat (filter_domain_head, "1", filter_domain_tail, NULL);
  g_autofree char *out = NULL, *err = NULL;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_true (g_file_set_contents (dom0, text0, -1, NULL));
  g_assert_true (g_file_set_contents (dom1, text1, -1, NULL));

  /* Bad host names and stores: 2; a store that cannot be opened: 3. */
  g_assert_cmpint (fleet_cli (&out, &err, "sync", "--store", fx->uri, "--inventory", xml,
                              "--host", "a b", NULL),
                   ==, 2);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "'a b'"));
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (fleet_cli (NULL, NULL, "pools", "--store", "mysql://x/y", NULL), ==, 2);
  g_assert_cmpint (fleet_cli (NULL, NULL, "pools", "--store", "sqlite:relative", NULL), ==, 2);
  g_assert_cmpint (fleet_cli (NULL, NULL, "pools", "--store", "/nonexistent/f.db", NULL), ==, 3);
  g_assert_cmpint (fleet_cli (NULL, NULL, "sync", "--store", fx->uri, "--inventory",
                              "/nonexistent/h.xml", "--host", "h", NULL),
                   !=, 0);
  g_assert_cmpint (fleet_cli (NULL, NULL, "pools", "--store", fx->uri, "--format", "yaml", NULL), ==, 2);
  g_assert_cmpint (fleet_cli (NULL, NULL, "frobnicate", NULL), ==, 2);
  /* Reading a store nobody synced yet. */
  g_assert_cmpint (fleet_cli (NULL, NULL, "pools", "--store", fx->uri, NULL), ==, 3);

  g_assert_cmpint (fleet_cli (NULL, NULL, "sync", "--store", fx->uri, "--inventory", xml,
                              "--config", conf, "--host", "ds1", NULL),
                   ==, 0);
  g_assert_cmpint (fleet_cli (NULL, NULL, "pools", "--store", fx->uri, "--host", "ds2", NULL), ==, 2);

  /* QuickAssist (node 0, required) and a physnet1 VF on node 0: the
   * guest on node 0 fits, on node 1 it does not. */
  g_assert_cmpint (fleet_cli (&out, &err, "filter", "--store", fx->uri, "--config", conf,
                              dom0, "--format", "json", NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "\"host\": \"ds1\",\n      \"passes\": true,\n      \"weight\": "));
  g_assert_nonnull (strstr (out, "\"reason\": null"));
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (fleet_cli (&out, &err, "filter", "--store", fx->uri, "--config", conf,
                              dom1, NULL),
                   ==, 1);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "no host passes: ds1: "));
}

/* The command line: fleet sync fills the capacity rows, fleet filter fits
 * a placement="auto" guest on them (exit 0 with the node, exit 1 with
 * the reason and nothing on stdout). */
static void
test_fit_cli (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *xml = g_build_filename (VPA_TEST_DATA, "hosts", "pinned.xml", NULL);
  g_autofree char *conf = g_build_filename (VPA_TEST_DATA, "hosts", "pinned.conf", NULL);
  g_autofree char *fits = g_build_filename (VPA_TEST_DATA, "numa", "dedicated-prefer.xml", NULL);
  g_autofree char *big = g_build_filename (fx->tmpdir, "big.xml", NULL);
  g_autofree char *text = auto_domain (12, 1048576, 0, "");
  g_autofree char *out = NULL, *err = NULL;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_true (g_file_set_contents (big, text, -1, NULL));
  g_assert_cmpint (fleet_cli (NULL, NULL, "sync", "--store", fx->uri, "--inventory", xml,
                              "--config", conf, "--host", "pinned", NULL),
                   ==, 0);
  g_assert_cmpint (fleet_cli (&out, &err, "filter", "--store", fx->uri, "--config", conf,
                              fits, "--format", "json", NULL),
                   ==, 0);
  g_assert_nonnull (strstr (out, "\"passes\": true"));
  {
    g_autoptr (GRegex) re = g_regex_new ("\"nodes\": \\[\\s*1\\s*\\]", 0, 0, NULL);

    g_assert_true (g_regex_match (re, out, 0, NULL));
  }
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (fleet_cli (&out, &err, "filter", "--store", fx->uri, "--config", conf,
                              big, NULL),
                   ==, 1);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "no host passes: pinned: "));
  g_assert_nonnull (strstr (err, "lacks 12 free dedicated CPUs"));
  g_unlink (big);
}

/* ------------------------------------------------------------------ */

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fleet/host-names", test_host_names);
  g_test_add_func ("/fleet/store-uris", test_store_uris);
  g_test_add_func ("/fleet/tags-canonical", test_tags_canonical);
  g_test_add_func ("/fleet/filter/policies", test_filter_policies);
  g_test_add_func ("/fleet/filter/socket-unknown", test_filter_socket_unknown);
  g_test_add_func ("/fleet/filter/exclusions", test_filter_exclusions);
  g_test_add_func ("/fleet/filter/sequential", test_filter_sequential);
  g_test_add_func ("/fleet/filter/case-and-tags", test_filter_case_and_tags);
  fleet_fixture_add ("fleet", "schema-version", test_schema_version);
  fleet_fixture_add ("fleet", "schema-upgrade", test_schema_upgrade);
  fleet_fixture_add ("fleet", "filter-locality", test_filter_locality);
  fleet_fixture_add ("fleet", "filter-locality-joint", test_filter_locality_joint);
  fleet_fixture_add ("fleet", "sync-pools", test_sync_pools);
  fleet_fixture_add ("fleet", "resync-replaces", test_resync_replaces);
  fleet_fixture_add ("fleet", "atomic-replace", test_atomic_replace);
  fleet_fixture_add ("fleet", "concurrent-syncs", test_concurrent_syncs);
  fleet_fixture_add ("fleet", "unknown-host", test_unknown_host);
  fleet_fixture_add ("fleet", "tags-limit", test_tags_limit);
  fleet_fixture_add ("fleet", "device-kinds", test_device_kinds);
  fleet_fixture_add ("fleet", "pool-order", test_filter_pool_order);
  fleet_fixture_add ("fleet", "filter", test_filter_store);
  fleet_fixture_add ("fleet", "samples-consistency", test_samples_consistency);
  fleet_fixture_add ("fleet", "cli", test_cli);
  fleet_fixture_add ("fleet", "fit-equals-place", test_fit_equals_place);
  fleet_fixture_add ("fleet", "fit-lacks", test_fit_lacks);
  fleet_fixture_add ("fleet", "fit-lacks-devices", test_fit_lacks_devices);
  fleet_fixture_add ("fleet", "migration", test_migration);
  fleet_fixture_add ("fleet", "fit-cli", test_fit_cli);

  fleet_pg_start ();
  rc = g_test_run ();
  fleet_pg_stop ();
  return rc;
}
