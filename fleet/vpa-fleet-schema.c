/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store's schema: whether a store's schema_version lets this
 * program use it, the schema's creation, and its migrations.
 */
#include "vpa-fleet-schema.h"

#include <string.h>

VpaFleetSchemaAction
vpa_fleet_schema_check (const char *uri, const VpaFleetSchemaFound *found, VpaFleetOpenMode mode,
                        GError **error)
{
  const char *application = found->application;
  gint64 version = found->version;
  if (application == NULL)
    {
      if (found->has_tables)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "store '%s': not a fleet store: it has tables of ours but no schema_version",
                       uri);
          return VPA_FLEET_SCHEMA_REFUSE;
        }
      if (mode != VPA_FLEET_OPEN_CREATE)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "store '%s': no fleet schema (run 'fleet sync' first)", uri);
          return VPA_FLEET_SCHEMA_REFUSE;
        }
      return VPA_FLEET_SCHEMA_CREATE;
    }
  if (strcmp (application, VPA_FLEET_APPLICATION) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': schema_version belongs to '%s', not '%s'",
                   uri, application, VPA_FLEET_APPLICATION);
      return VPA_FLEET_SCHEMA_REFUSE;
    }
  if (version >= 1 && version < VPA_FLEET_SCHEMA_VERSION && mode == VPA_FLEET_OPEN_CREATE)
    {
      /* sync migrates an older store of ours through every step. */
      return VPA_FLEET_SCHEMA_UPGRADE;
    }
  if (version >= 1 && version < VPA_FLEET_SCHEMA_VERSION)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': schema version '%" G_GINT64_FORMAT "' is older than this program's %d: 'fleet sync' upgrades it",
                   uri, version, VPA_FLEET_SCHEMA_VERSION);
      return VPA_FLEET_SCHEMA_REFUSE;
    }
  if (version != VPA_FLEET_SCHEMA_VERSION)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': schema version '%" G_GINT64_FORMAT "' is %s than this program's %d; refusing to use it",
                   uri, version, version > VPA_FLEET_SCHEMA_VERSION ? "newer" : "older",
                   VPA_FLEET_SCHEMA_VERSION);
      return VPA_FLEET_SCHEMA_REFUSE;
    }
  return VPA_FLEET_SCHEMA_USE;
}

/* From version 1 to 2: the PCIe columns (rows keep NULL until synced). */
static const char *
schema_upgrade_1_2 (void)
{
  return "ALTER TABLE devices ADD COLUMN pcie_root TEXT;"
         "ALTER TABLE devices ADD COLUMN pcie_port TEXT;"
         "ALTER TABLE devices ADD COLUMN pcie_switch TEXT;";
}

/* The devices table named name, its state one of states (an SQL list). */
static char *
devices_table_sql (const char *name, const char *text_type, const char *table_options,
                   const char *states)
{
  return g_strdup_printf (
    "CREATE TABLE %1$s ("
    " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
    " address %2$s NOT NULL,"
    " vendor_id %2$s NOT NULL, product_id %2$s NOT NULL,"
    " dev_type %2$s NOT NULL CHECK (dev_type IN ('type-PCI', 'type-PF', 'type-VF')),"
    " numa_node INTEGER, parent_addr %2$s,"
    " tags %2$s NOT NULL, tagset BIGINT NOT NULL,"
    " netdev %2$s, held_by %2$s,"
    " state %2$s NOT NULL CHECK (state IN (%4$s)),"
    " pcie_root %2$s, pcie_port %2$s, pcie_switch %2$s,"
    " PRIMARY KEY (host_id, address))%3$s;",
    name, text_type, table_options, states);
}

/* The GROUP BY's columns in its order: pools come from an index scan
 * without a sort, and per-host deletes use the primary key. */
#define DEVICES_POOLS_INDEX               \
  "CREATE INDEX devices_pools ON devices" \
  " (host_id, vendor_id, product_id, dev_type, numa_node, tagset, state);"

/* Version 6: an index of the free devices by their pool's columns
 * with their tags and addresses. Version 7 replaces it (below); its
 * name is kept, so the step from 5 to 6 still creates it. */
#define FREE_POOL_COLUMNS \
  "host_id, vendor_id, product_id, dev_type, numa_node, tagset, pcie_root, pcie_port"
#define DEVICES_FREE_POOLS_PG                                                                \
  "CREATE INDEX devices_free_pools ON devices (" FREE_POOL_COLUMNS ")"                       \
  " INCLUDE (tags, address) WHERE state = 'free';"                                           \
  "CREATE STATISTICS devices_pool_groups (ndistinct) ON " FREE_POOL_COLUMNS " FROM devices;" \
  "ANALYZE devices;"
#define DEVICES_FREE_POOLS_SQLITE                                                     \
  "CREATE INDEX devices_free_pools ON devices (" FREE_POOL_COLUMNS ", tags, address)" \
  " WHERE state = 'free';"

/* A device_kinds row's columns, those of devices its pool groups by. */
#define KIND_COLUMNS "vendor_id, product_id, dev_type, numa_node, tagset, tags, pcie_root, pcie_port"

/* Version 7: device_kinds, one row per distinct description of a device
 * (the columns its pool groups by), and devices.kind_id naming the
 * device's. The filter counts the free devices of each host and kind
 * from devices_free_kinds (whose entries the database deduplicates),
 * reads their lowest addresses from devices_free_pools only where a
 * verdict depends on them, and joins the few kinds for their columns
 * (docs/fleet.md, "Device kinds"): the covering index of version 6 held
 * every column of every free device. A kind holds no
 * count: nothing in it can drift from the rows. Rows of an older store
 * get the kinds of their columns here; NULL matches NULL (same). */
static char *
schema_upgrade_kinds (VpaFleetSqlDialect dialect, const char *id_type, const char *text_type)
{
  const char *same = dialect == VPA_FLEET_SQL_PG ? "IS NOT DISTINCT FROM" : "IS";

  return g_strdup_printf (
    "CREATE TABLE device_kinds ("
    " id %1$s,"
    " vendor_id %2$s NOT NULL, product_id %2$s NOT NULL, dev_type %2$s NOT NULL,"
    " numa_node INTEGER, tagset BIGINT NOT NULL, tags %2$s NOT NULL,"
    " pcie_root %2$s, pcie_port %2$s);"
    "CREATE INDEX device_kinds_lookup ON device_kinds (vendor_id, product_id, tagset);"
    "INSERT INTO device_kinds (" KIND_COLUMNS ") SELECT DISTINCT " KIND_COLUMNS " FROM devices;"
    "ALTER TABLE devices ADD COLUMN kind_id BIGINT REFERENCES device_kinds (id);"
    "UPDATE devices SET kind_id = (SELECT MIN(k.id) FROM device_kinds AS k"
    " WHERE k.vendor_id = devices.vendor_id AND k.product_id = devices.product_id"
    " AND k.dev_type = devices.dev_type AND k.numa_node %3$s devices.numa_node"
    " AND k.tagset = devices.tagset AND k.tags = devices.tags"
    " AND k.pcie_root %3$s devices.pcie_root AND k.pcie_port %3$s devices.pcie_port);"
    "DROP INDEX devices_free_pools;"
    "%4$s"
    "CREATE INDEX devices_free_pools ON devices (host_id, kind_id, address)"
    " WHERE state = 'free';"
    "CREATE INDEX devices_free_kinds ON devices (host_id, kind_id) WHERE state = 'free';"
    "%5$s",
    id_type, text_type, same,
    dialect == VPA_FLEET_SQL_PG ? "DROP STATISTICS devices_pool_groups;"
                                  "ALTER TABLE devices ALTER COLUMN kind_id SET NOT NULL;"
                                : "",
    dialect == VPA_FLEET_SQL_PG ? "ANALYZE devices; ANALYZE device_kinds;" : "");
}

/* Devices of one kind: the columns of KIND_COLUMNS are equal. */
static guint
kind_hash (gconstpointer p)
{
  const VpaFleetDevice *d = p;
  guint h = g_str_hash (d->vendor_id);

  h = h * 31 + g_str_hash (d->product_id);
  h = h * 31 + (guint) d->dev_type;
  h = h * 31 + (guint) d->numa_node;
  h = h * 31 + (guint) d->tagset;
  return h * 31 + (d->pcie_port != NULL ? g_str_hash (d->pcie_port) : 0);
}

static gboolean
kind_equal (gconstpointer pa, gconstpointer pb)
{
  const VpaFleetDevice *a = pa, *b = pb;

  return strcmp (a->vendor_id, b->vendor_id) == 0 && strcmp (a->product_id, b->product_id) == 0 &&
         a->dev_type == b->dev_type && a->numa_node == b->numa_node && a->tagset == b->tagset &&
         g_strcmp0 (a->tags, b->tags) == 0 && g_strcmp0 (a->pcie_root, b->pcie_root) == 0 &&
         g_strcmp0 (a->pcie_port, b->pcie_port) == 0;
}

static void
kind_id_row (const char *const *values, guint n, gpointer data)
{
  gint64 *id = data;

  if (n > 0 && values[0] != NULL)
    *id = g_ascii_strtoll (values[0], NULL, 10);
}

/* The id of d's kind, added when the store has none. */
static gboolean
kind_id (VpaFleetStore *store, VpaFleetSqlDialect dialect, const VpaFleetDevice *d,
         gint64 *id, GError **error)
{
  char numa[16], tagset[24];
  const char *p[8];
  g_autofree char *find = vpa_fleet_schema_kind_sql (dialect, FALSE);
  g_autofree char *add = vpa_fleet_schema_kind_sql (dialect, TRUE);

  g_snprintf (numa, sizeof numa, "%d", d->numa_node);
  g_snprintf (tagset, sizeof tagset, "%" G_GINT64_FORMAT, d->tagset);
  p[0] = d->vendor_id;
  p[1] = d->product_id;
  p[2] = vpa_dev_type_to_string (d->dev_type);
  p[3] = d->numa_node != VPA_NUMA_NONE ? numa : NULL;
  p[4] = tagset;
  p[5] = d->tags;
  p[6] = d->pcie_root;
  p[7] = d->pcie_port;
  *id = 0;
  if (!store->ops->statement (store, find, p, G_N_ELEMENTS (p), kind_id_row, id, NULL, error))
    return FALSE;
  if (*id == 0 &&
      !store->ops->statement (store, add, p, G_N_ELEMENTS (p), kind_id_row, id, NULL, error))
    return FALSE;
  if (*id == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': no device kind was added", store->uri);
      return FALSE;
    }
  return TRUE;
}

GArray *
vpa_fleet_schema_kind_ids (VpaFleetStore *store, VpaFleetSqlDialect dialect,
                           const VpaFleetHostData *data, GError **error)
{
  g_autoptr (GHashTable) kinds = g_hash_table_new (kind_hash, kind_equal);
  g_autoptr (GArray) ids = g_array_sized_new (FALSE, FALSE, sizeof (gint64), data->devices->len);

  for (guint i = 0; i < data->devices->len; i++)
    {
      const VpaFleetDevice *d = &g_array_index (data->devices, VpaFleetDevice, i);
      gpointer first;
      gint64 id;

      if (g_hash_table_lookup_extended (kinds, d, NULL, &first))
        {
          id = g_array_index (ids, gint64, GPOINTER_TO_UINT (first));
        }
      else
        {
          if (!kind_id (store, dialect, d, &id, error))
            {
              g_prefix_error (error, "host '%s': ", data->name);
              return NULL;
            }
          g_hash_table_insert (kinds, (gpointer) d, GUINT_TO_POINTER (i));
        }
      g_array_append_val (ids, id);
    }
  return g_steal_pointer (&ids);
}

char *
vpa_fleet_schema_kind_sql (VpaFleetSqlDialect dialect, gboolean insert)
{
  const char *same = dialect == VPA_FLEET_SQL_PG ? "IS NOT DISTINCT FROM" : "IS";

  if (insert)
    {
      return g_strdup ("INSERT INTO device_kinds (" KIND_COLUMNS ")"
                       " VALUES ($1, $2, $3, CAST($4 AS INTEGER), CAST($5 AS BIGINT), $6, $7, $8)"
                       " RETURNING id");
    }
  return g_strdup_printf ("SELECT MIN(id) FROM device_kinds WHERE vendor_id = $1"
                          " AND product_id = $2 AND dev_type = $3"
                          " AND numa_node %1$s CAST($4 AS INTEGER)"
                          " AND tagset = CAST($5 AS BIGINT) AND tags = $6"
                          " AND pcie_root %1$s CAST($7 AS TEXT)"
                          " AND pcie_port %1$s CAST($8 AS TEXT)",
                          same);
}

/* The states of a device row from version 4 on (before: no 'reserved'). */
#define DEVICE_STATES "'free', 'held', 'blocked', 'reserved'"

/* Version 4: devices in state 'reserved' (docs/reservations.md). A
 * CHECK constraint is dropped and added again on PostgreSQL (named by
 * its table and column); SQLite cannot alter one, so the table is
 * rebuilt with the same columns in the same order (the copy refuses a
 * table that has others) within the migration's transaction. */
static char *
schema_upgrade_reserved (VpaFleetSqlDialect dialect, const char *text_type,
                         const char *table_options)
{
  g_autofree char *rebuilt = NULL;

  if (dialect == VPA_FLEET_SQL_PG)
    {
      return g_strdup ("ALTER TABLE devices DROP CONSTRAINT devices_state_check,"
                       " ADD CONSTRAINT devices_state_check CHECK (state IN (" DEVICE_STATES "));");
    }
  rebuilt = devices_table_sql ("devices_new", text_type, table_options, DEVICE_STATES);
  return g_strconcat (rebuilt,
                      "INSERT INTO devices_new SELECT * FROM devices;"
                      "DROP TABLE devices;"
                      "ALTER TABLE devices_new RENAME TO devices;" DEVICES_POOLS_INDEX,
                      NULL);
}

char *
vpa_fleet_schema_sql (const char *id_type, const char *text_type, const char *table_options)
{
  g_autofree char *devices = devices_table_sql ("devices", text_type, table_options,
                                                "'free', 'held', 'blocked'");

  return g_strdup_printf (
    "CREATE TABLE schema_version ("
    " application %2$s NOT NULL, version INTEGER NOT NULL, applied_at %2$s NOT NULL);"
    "CREATE TABLE hosts ("
    " id %1$s, name %2$s NOT NULL UNIQUE, traits %2$s NOT NULL DEFAULT '',"
    " last_sync %2$s);"
    "CREATE TABLE host_cells ("
    " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
    " node INTEGER NOT NULL, socket INTEGER,"
    " PRIMARY KEY (host_id, node))%3$s;"
    "%4$s%5$s",
    id_type, text_type, table_options, devices, DEVICES_POOLS_INDEX);
}

/* vpa_fleet_schema_sql creates version 2; each later version is one
 * script, and version 2 is also reached from 1 by its upgrade. */
char *
vpa_fleet_schema_migration (gint64 version, VpaFleetSqlDialect dialect, const char *id_type,
                            const char *text_type, const char *table_options)
{
  switch (version)
    {
    case 2:
      return g_strdup (schema_upgrade_1_2 ());
    case 3:
      /* Node capacity (raw, as the inventory source reports it) and the
       * CPU/memory claims of the host's domains. */
      return g_strdup_printf (
        "ALTER TABLE host_cells ADD COLUMN memory_kib BIGINT;"
        "ALTER TABLE host_cells ADD COLUMN cpus %1$s;"
        "ALTER TABLE host_cells ADD COLUMN pages %1$s;"
        "ALTER TABLE host_cells ADD COLUMN distances %1$s;"
        "CREATE TABLE host_numa_claims ("
        " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
        " domain %1$s NOT NULL, running INTEGER NOT NULL,"
        " dedicated %1$s NOT NULL, memory %1$s NOT NULL,"
        " PRIMARY KEY (host_id, domain))%2$s;",
        text_type, table_options);
    case 4:
      return schema_upgrade_reserved (dialect, text_type, table_options);
    case 5:
      /* The [physnet NAME] and [tunnel] groups of each host's
       * configuration (the vSwitch rule), and which schema version's
       * sync wrote a host's rows (NULL: one before this step). */
      return g_strdup_printf (
        "ALTER TABLE hosts ADD COLUMN sync_version INTEGER;"
        "CREATE TABLE host_networks ("
        " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
        " kind %1$s NOT NULL CHECK (kind IN ('physnet', 'tunnel')),"
        " name %1$s NOT NULL, numa_nodes %1$s NOT NULL,"
        " PRIMARY KEY (host_id, kind, name))%2$s;",
        text_type, table_options);
    case 6:
      return g_strdup (dialect == VPA_FLEET_SQL_PG ? DEVICES_FREE_POOLS_PG : DEVICES_FREE_POOLS_SQLITE);
    case 7:
      return schema_upgrade_kinds (dialect, id_type, text_type);
    default:
      return NULL;
    }
}
