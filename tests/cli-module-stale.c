/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A libvirt module of the next interface version, which the CLI must
 * refuse (tests/test-cli-modules.sh).
 */
#include "vpa-cli-module.h"

const VpaCliVirtModule *
vpa_cli_virt_module (void)
{
  static const VpaCliVirtModule module = { .version = VPA_CLI_MODULE_VERSION + 1 };

  return &module;
}
