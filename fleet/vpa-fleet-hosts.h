/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A fleet's hosts as an operator keeps them (docs/fleet.md, "Keeping the
 * fleet current"): what each host holds and how old its rows are, the
 * removal of a host, the refresh of its last_sync, and the failure of
 * hosts whose rows are older than the filter accepts.
 */
#pragma once

#include "vpa-fleet-filter.h"
#include "vpa-fleet-store.h"

G_BEGIN_DECLS

/* One row of `fleet hosts`. */
typedef struct {
  char *name;
  GStrv traits;    /* sorted */
  char *last_sync; /* ISO 8601 UTC, or NULL */
  guint devices;   /* device rows */
  guint free;      /* rows in state free */
} VpaFleetHostSummary;

void vpa_fleet_host_summary_free (VpaFleetHostSummary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaFleetHostSummary, vpa_fleet_host_summary_free)

/* VpaFleetHostSummary* of every host, by name: one GROUP BY. */
GPtrArray *vpa_fleet_hosts_list (VpaFleetStore *store, GError **error);

/* Deletes the host with every row it owns (ON DELETE CASCADE), in one
 * statement. VPA_ERROR_INVALID when the store has no such host. */
gboolean vpa_fleet_hosts_remove (VpaFleetStore *store, const char *name, GError **error);

/* Sets the host's last_sync to now without touching its rows (a watcher
 * whose host did not change). VPA_ERROR_INVALID when there is no such
 * host. */
gboolean vpa_fleet_hosts_touch (VpaFleetStore *store, const char *name, GError **error);

/* Seconds from last_sync to now; -1 when last_sync is NULL or not a
 * time. */
gint64 vpa_fleet_hosts_sync_age (const char *last_sync, GDateTime *now);

/* Steals from hosts (VpaFleetHost*) those whose rows are more than
 * max_age seconds old at now (or were never synced) and returns a
 * failing verdict for each, the age in its reason. */
GPtrArray *vpa_fleet_hosts_take_stale (GPtrArray *hosts, gint64 max_age, GDateTime *now);

/* Moves extra's verdicts into verdicts and orders them as
 * vpa_fleet_filter does: passing first by weight, then by name. */
void vpa_fleet_hosts_verdicts_merge (GPtrArray *verdicts, GPtrArray *extra);

G_END_DECLS
