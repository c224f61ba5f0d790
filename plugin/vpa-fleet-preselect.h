/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What SQL decides before the filter reads a row back (docs/fleet.md,
 * "Pre-selection"): the devices no request's spec can match, the hosts
 * with too few free devices of a request's spec, and the hosts lacking a
 * trait the domain needs are never read back. The SQL narrows, it never
 * decides alone: every condition is one a device or host the filter's
 * own rules (vpa_fleet_request_match, policy/) accept also meets, so a
 * host's verdict is the same as on every row.
 */
#pragma once

#include "vpa-fleet.h"

G_BEGIN_DECLS

/* A boolean SQL expression over one devices row that holds for every
 * device whose pool vpa_fleet_request_match accepts for req ("1 = 1"
 * where a pair cannot be written safely in SQL). */
char *vpa_fleet_preselect_match_sql (const VpaRequest *req);

/* SELECT host_id, request, free: one row per host with free devices
 * whose count of free devices matching a request is below the
 * request's count; request is 1 + the index of the first such request,
 * free that count. NULL when no request asks for a device. */
char *vpa_fleet_preselect_ruled_out_sql (const VpaFleetQuery *query);

/* Row host_id, request, free: marks the host (VpaFleetHost.ruled_out). */
gboolean vpa_fleet_host_add_ruled_out_row (GHashTable *by_id, const char *const *values);

/* The free pools query (vpa_fleet_sql_free_pools) restricted to devices
 * a request can match, of hosts neither ruled out nor lacking a trait. */
char *vpa_fleet_preselect_pools_sql (const VpaFleetQuery *query, GPtrArray *hosts);

/* vpa_fleet_store_load_hosts for the filter of query: with
 * VPA_FLEET_LOAD_POOLS, only the rows above are read back. A query
 * with numa_auto loads every row (the fit needs them). */
GPtrArray *vpa_fleet_store_load_candidates (VpaFleetStore *store, const VpaFleetQuery *query,
                                            guint flags, GError **error);

G_END_DECLS
