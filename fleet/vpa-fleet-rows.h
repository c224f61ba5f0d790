/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What both backends read back (vpa-fleet-sqlite.c, vpa-fleet-pg.c): the
 * pool queries and their rows, the hosts with their cells, claims and
 * devices, and a host rebuilt from its rows for the whole-guest fit.
 */
#pragma once

#include "vpa-fleet-store.h"

G_BEGIN_DECLS

/* Which free pools vpa_fleet_rows_free_pools_sql reads. */
typedef struct {
  const char *kinds;      /* only of the device kinds meeting this SQL condition, or NULL */
  const char *skip_hosts; /* not of these host ids ("(1), (7)"), or NULL */
  const char *only_hosts; /* only of these, or NULL */
  gboolean addresses;     /* each pool's lowest address; else first_addr is NULL */
} VpaFleetRowsFreePools;

/* The pools GROUP BY, for one host ($1 = its id) or all; and the free
 * pools of all hosts for the filter. Both return the columns
 * vpa_fleet_rows_pool() decodes, as text; the free pools' are named
 * host_id, vendor_id, product_id, dev_type, numa_node, socket, tagset,
 * tags, tags_max, total, n_free, n_held, n_blocked, n_reserved,
 * first_addr, pcie_root, pcie_port (VPA_FLEET_ROWS_FREE_POOL_NAMES). */
const char *vpa_fleet_rows_pools_sql (gboolean one_host);
char *vpa_fleet_rows_free_pools_sql (const VpaFleetRowsFreePools *which);
#define VPA_FLEET_ROWS_FREE_POOL_NAMES                                              \
  "host_id, vendor_id, product_id, dev_type, numa_node, socket, tagset, tags,"      \
  " tags_max, total, n_free, n_held, n_blocked, n_reserved, first_addr, pcie_root," \
  " pcie_port"
#define VPA_FLEET_ROWS_POOL_COLUMNS 17
/* The tag sets of the pools one query reads back: each canonical string
 * parsed once (vpa_fleet_rows_pool's tagsets). */
GHashTable *vpa_fleet_rows_tagsets_new (void);
/* A pool (VPA_POOL_KEYS_FLEET) of those columns; its tags from tagsets. */
VpaPool *vpa_fleet_rows_pool (const char *const *values, GHashTable *tagsets, const char *uri,
                              GError **error);
/* Row id, name, traits, last_sync, sync_version. */
VpaFleetHost *vpa_fleet_rows_host (const char *const *values);
#define VPA_FLEET_ROWS_SQL_HOSTS "SELECT id, name, traits, last_sync, sync_version FROM hosts" \
                                 " ORDER BY name"
#define VPA_FLEET_ROWS_SQL_HOSTS_COLUMNS 5
/* The vpa_fleet_rows_add_* functions take one row of their query; by_id
 * maps &host->id to hosts. FALSE for a malformed row, with error set
 * when they can say more than that (naming the host and the value). */
typedef gboolean (*VpaFleetRowsAdd) (GHashTable *by_id, const char *const *values,
                                     GError **error);
/* After add failed on a row of sql: error names the store and what add
 * said, or (add said nothing) the query. */
void vpa_fleet_rows_malformed (const char *uri, const char *sql, GError **error);
/* Row host_id, node, socket, memory_kib, cpus, pages, distances. */
gboolean vpa_fleet_rows_add_cell (GHashTable *by_id, const char *const *values, GError **error);
#define VPA_FLEET_ROWS_SQL_CELLS "SELECT host_id, node, socket, memory_kib, cpus, pages, distances" \
                                 " FROM host_cells ORDER BY host_id, node"
/* Row host_id, domain, running, dedicated, memory. */
gboolean vpa_fleet_rows_add_claim (GHashTable *by_id, const char *const *values,
                                   GError **error);
#define VPA_FLEET_ROWS_SQL_CLAIMS "SELECT host_id, domain, running, dedicated, memory" \
                                  " FROM host_numa_claims ORDER BY host_id, domain"
/* Row host_id, address, vendor_id, product_id, dev_type, numa_node,
 * parent_addr, netdev, held_by, pcie_root, pcie_port, pcie_switch,
 * state. */
gboolean vpa_fleet_rows_add_device (GHashTable *by_id, const char *const *values,
                                    GError **error);
#define VPA_FLEET_ROWS_SQL_DEVICES "SELECT host_id, address, vendor_id, product_id, dev_type,"       \
                                   " numa_node, parent_addr, netdev, held_by, pcie_root, pcie_port," \
                                   " pcie_switch, state FROM devices ORDER BY host_id, address"
#define VPA_FLEET_ROWS_SQL_DEVICES_COLUMNS 13
/* Gives every host empty devices and claims arrays (before the rows). */
void vpa_fleet_rows_init_capacity (GPtrArray *hosts);
/* Row host_id, kind, name, numa_nodes: into host->networks as a
 * VpaVswitchAffinity; a node list that is not ascending node numbers is
 * malformed. */
gboolean vpa_fleet_rows_add_network (GHashTable *by_id, const char *const *values,
                                     GError **error);
#define VPA_FLEET_ROWS_SQL_NETWORKS "SELECT host_id, kind, name, numa_nodes FROM host_networks" \
                                    " ORDER BY host_id, kind, name"
/* Gives every host an empty networks array (before the rows). */
void vpa_fleet_rows_init_networks (GPtrArray *hosts);
/* Moves the free pools (host column = host id) into their hosts. */
gboolean vpa_fleet_rows_attach_pools (GPtrArray *hosts, GPtrArray *pools);

/* The most columns a query read back through VpaFleetStoreOps.each has. */
#define VPA_FLEET_ROWS_MAX_COLUMNS 24
/* The pools of sql's rows (vpa_fleet_rows_pool), or with by_id (hosts by
 * &host->id) the pre-selection's rows (vpa_fleet_preselect_add_row). */
GPtrArray *vpa_fleet_rows_read_pools (VpaFleetStore *store, const char *sql,
                                      const char *const *params, guint n_params,
                                      GHashTable *by_id, GError **error);
/* Every host by name into hosts (VpaFleetHost*) with its cells and what
 * flags ask (VpaFleetLoadFlags): the reading of load_hosts, within the
 * backend's read transaction. */
gboolean vpa_fleet_rows_read_hosts (VpaFleetStore *store, GPtrArray *hosts, guint flags,
                                    GError **error);

/* The host as place would see it: its cells with their capacity, its
 * devices and claims, its reserved rows reserved, under config's device
 * specs (config's own reservations, of the host that reads the store,
 * must be none). */
VpaInventory *vpa_fleet_rows_inventory (const VpaFleetHost *host, const VpaConfig *config,
                                        GError **error);

G_END_DECLS
