/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What SQL decides before the filter reads a row back (docs/fleet.md,
 * "Pre-selection"): the devices no request's spec can match, the hosts
 * with too few free devices of a request's spec, and the hosts lacking a
 * trait the domain needs are never read back. The SQL narrows, it never
 * decides alone: every condition is one a device or host the filter's
 * own rules (vpa_fleet_filter_request_match, policy/) accept also meets, so a
 * host's verdict is the same as on every row.
 */
#pragma once

#include "vpa-fleet-filter.h"
#include "vpa-fleet-rows.h"
#include "vpa-fleet-store.h"

G_BEGIN_DECLS

/* A boolean SQL expression over one device_kinds row (or devices row:
 * the columns are named alike) that holds for every device whose pool
 * vpa_fleet_filter_request_match accepts for req ("1 = 1" where a pair
 * cannot be written safely in SQL). */
char *vpa_fleet_preselect_match_sql (const VpaRequest *req);

/* The free pools query (vpa_fleet_rows_free_pools_sql) restricted to the
 * device kinds a request can match, of hosts not lacking a trait (and
 * with only_hosts, "(1), (7)", of those only); with addresses, each
 * pool's lowest address. A host with fewer free matching devices than a
 * request's count (in SQL's count, over the whole host) comes back as
 * one row that says so instead of its pools. VPA_FLEET_PRESELECT_COLUMNS
 * columns: the pool's, then the request (1 + its index) and the count,
 * NULL for a pool. */
char *vpa_fleet_preselect_pools_sql (const VpaFleetQuery *query, GPtrArray *hosts,
                                     gboolean addresses, const char *only_hosts);
#define VPA_FLEET_PRESELECT_COLUMNS (VPA_FLEET_ROWS_POOL_COLUMNS + 2)

/* Inside the hosts' read transaction: the pools of that query, without
 * their lowest addresses, attached to hosts; then, for the hosts whose
 * verdict depends on the order of their pools
 * (vpa_fleet_filter_needs_order), read again with them. */
gboolean vpa_fleet_preselect_read_pools (VpaFleetStore *store, const VpaFleetQuery *query,
                                         GPtrArray *hosts, GHashTable *by_id, GError **error);

/* One row of it: a pool appended to pools (its host column the host's
 * id, as vpa_fleet_rows_attach_pools takes them), or the host marked
 * (VpaFleetHost.ruled_out). */
gboolean vpa_fleet_preselect_add_row (GHashTable *by_id, GPtrArray *pools, GHashTable *tagsets,
                                      const char *const *values, const char *uri,
                                      GError **error);

/* vpa_fleet_store_load_hosts for the filter of query: with
 * VPA_FLEET_LOAD_POOLS, only the rows above are read back. A query
 * with numa_auto loads every row (the fit needs them). */
GPtrArray *vpa_fleet_preselect_load_candidates (VpaFleetStore *store, const VpaFleetQuery *query,
                                                guint flags, GError **error);

G_END_DECLS
