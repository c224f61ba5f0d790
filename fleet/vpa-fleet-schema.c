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

/* Version 6: the filter's pre-selection groups the free devices by
 * these columns and reads each group's tags and lowest address
 * (vpa_fleet_preselect_pools_sql): with every column it reads in this
 * partial index, the groups come from an index-only scan in order, not
 * from every row's heap tuple and a sort. The included tags bound a
 * row's tags (VPA_FLEET_TAGS_MAX: PostgreSQL refuses an index entry
 * past about 2.7 kB). PostgreSQL's estimate of the groups (the product
 * of each column's) is orders of magnitude high without the columns'
 * joint statistics, and with it the planner never reads in parallel. */
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
  (void) id_type;
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
    default:
      return NULL;
    }
}
