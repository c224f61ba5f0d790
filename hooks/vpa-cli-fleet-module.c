/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity-fleet.so: the fleet commands and their store
 * (sqlite3, libpq), loaded only by `virt-pci-affinity fleet`
 * (vpa-cli-module.h).
 */
#include "vpa-cli-module.h"

const VpaCliFleetModule *
vpa_cli_fleet_module (void)
{
  static const VpaCliFleetModule module = {
    .version = VPA_CLI_MODULE_VERSION,
    .run = vpa_cli_fleet,
    .set_claims_loader = vpa_cli_fleet_set_claims_loader,
    .set_watcher = vpa_cli_fleet_set_watcher,
  };

  return &module;
}
