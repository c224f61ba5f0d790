/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fleet hosts`, `fleet remove` and `fleet sync`'s default host name
 * (docs/fleet.md, "Keeping the fleet current").
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The members of one host's object in vpa_cli_fleet_hosts_json. */
typedef void (*VpaCliFleetHostJson) (JsonBuilder *builder, gconstpointer item, gpointer data);

/* {"hosts": [{...}, ...]}, one object per item, its members added by add:
 * the JSON of `fleet hosts` and of `fleet filter`'s verdicts. */
char *vpa_cli_fleet_hosts_json (GPtrArray *items, VpaCliFleetHostJson add, gpointer data);

/* Prints every host of store (name, devices, free, last sync, age,
 * traits) as text or JSON. */
gboolean vpa_cli_fleet_hosts (const char *store, gboolean json, GError **error);

/* Removes host and its rows from store; prints "NAME: removed". */
gboolean vpa_cli_fleet_hosts_remove (const char *store, const char *host, GError **error);

/* The name `fleet sync` uses without --host: this machine's host name
 * (gethostname), which must be a valid fleet host name. */
char *vpa_cli_fleet_hosts_default (GError **error);

/* When no host passes: one line on stderr per host but the last,
 * "DOMAIN: no host passes: HOST: REASON", whose line is the error set
 * (VPA_ERROR_UNSATISFIABLE). Returns FALSE. */
gboolean vpa_cli_fleet_hosts_filter_failed (const char *domain, GPtrArray *verdicts /* VpaFleetVerdict* */,
                                            GError **error);

G_END_DECLS
