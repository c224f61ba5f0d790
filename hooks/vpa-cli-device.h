/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity device list|release|quarantine (vpa-cli-device.c).
 */
#pragma once

/* argv[0] is "device"; returns the exit status. */
int vpa_cli_device_run (int argc, char **argv);
