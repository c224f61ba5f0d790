/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store's schema (docs/fleet.md): its version, whether a store
 * can be used as it is, created, or migrated, and the scripts that do it.
 */
#pragma once

#include "vpa-fleet-store.h"

G_BEGIN_DECLS

/* 1: devices, cells, traits. 2: devices.pcie_root, pcie_port,
 * pcie_switch. 3: per-node capacity (cells gain memory, CPUs, pages,
 * distances) and the CPU/memory claims of domains. 4: devices.state
 * 'reserved'. 5: host_networks, the [physnet]/[tunnel] NUMA affinity of
 * each host, and hosts.sync_version. 6: the free devices' covering index
 * the filter's pre-selection reads (and, on PostgreSQL, the statistics
 * of its groups). 7: device_kinds and devices.kind_id, and that index
 * narrowed to the host, kind and address. Older stores are migrated by
 * the next sync. */
#define VPA_FLEET_SCHEMA_VERSION 7
/* The first version whose sync records a host's networks (a host whose
 * hosts.sync_version is older has none recorded). */
#define VPA_FLEET_SCHEMA_NETWORKS 5
/* Written into schema_version.application, so that a database another
 * program versions with a table of the same name is refused. */
#define VPA_FLEET_APPLICATION "virt-pci-affinity-fleet"

/* What a store holds of a schema. */
typedef struct {
  const char *application; /* of the schema_version row; NULL: no such table */
  gint64 version;          /* its version; 0 without one */
  gboolean has_tables;     /* one of our other tables exists */
} VpaFleetSchemaFound;

typedef enum {
  VPA_FLEET_SCHEMA_REFUSE,  /* error set */
  VPA_FLEET_SCHEMA_USE,     /* at this program's version */
  VPA_FLEET_SCHEMA_CREATE,  /* empty: create the schema */
  VPA_FLEET_SCHEMA_UPGRADE, /* an older version of ours: migrate it */
} VpaFleetSchemaAction;

/* Decides from what a store holds whether it can be used as it is,
 * created or migrated (creating and migrating only with
 * VPA_FLEET_OPEN_CREATE: a reader is refused). */
VpaFleetSchemaAction vpa_fleet_schema_check (const char *uri, const VpaFleetSchemaFound *found,
                                             VpaFleetOpenMode mode, GError **error);
/* The SQL a migration is written in: SQLite cannot alter a constraint. */
typedef enum {
  VPA_FLEET_SQL_SQLITE,
  VPA_FLEET_SQL_PG,
} VpaFleetSqlDialect;

/* The script taking the schema from version - 1 to version (2 ..
 * VPA_FLEET_SCHEMA_VERSION; vpa_fleet_schema_sql creates version 2),
 * without the schema_version row. */
char *vpa_fleet_schema_migration (gint64 version, VpaFleetSqlDialect dialect,
                                  const char *id_type, const char *text_type,
                                  const char *table_options);
/* The statement finding the kind (the lowest id) of a description, or
 * with insert, adding one and returning its id; parameters $1 .. $8:
 * vendor_id, product_id, dev_type, numa_node, tagset, tags, pcie_root,
 * pcie_port, as text, NULL for a missing value. */
char *vpa_fleet_schema_kind_sql (VpaFleetSqlDialect dialect, gboolean insert);
/* Inside a sync's transaction: the kind id of each of data's devices, in
 * order, each distinct description looked up once and added when the
 * store has none. */
GArray *vpa_fleet_schema_kind_ids (VpaFleetStore *store, VpaFleetSqlDialect dialect,
                                   const VpaFleetHostData *data, GError **error);
/* The schema of version 2 as one script (then vpa_fleet_schema_migration). */
char *vpa_fleet_schema_sql (const char *id_type, const char *text_type,
                            const char *table_options);

G_END_DECLS
