/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity fleet sync|pools|filter (docs/interface.md, "Fleet").
 */
#pragma once

#include <glib.h>

#include "vpa-virt-watch.h"

G_BEGIN_DECLS

/* argv[0] is "fleet", argv[1] the subcommand. Prints results on stdout
 * and errors as one line on stderr; returns the exit status (0 success,
 * 1 no host passes the filter, 2 bad input or usage, 3 the store or the
 * inventory source failed). */
int vpa_cli_fleet (int argc, char **argv);

/* Where `fleet sync` gets the claims of a live --connect URI (the CLI
 * registers libvpa-virt's loader; this library does not link libvirt).
 * Without one, the inventory source's own claims are used. Returns
 * VpaClaim*. */
typedef GPtrArray *(*VpaFleetClaimsLoader) (const char *uri, GError **error);
void vpa_cli_fleet_set_claims_loader (VpaFleetClaimsLoader loader);

/* What runs `fleet sync --watch` on uri (libvpa-virt's
 * vpa_virt_watch_run, registered by the CLI like the claims loader):
 * returns TRUE when a signal ends it. Without one, --watch is exit 3. */
typedef gboolean (*VpaFleetWatcher) (const char *uri, const VpaVirtWatchOps *ops, GError **error);
void vpa_cli_fleet_set_watcher (VpaFleetWatcher watcher);

G_END_DECLS
