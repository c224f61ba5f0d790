/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The sysfs inventory source: ROOT/sys/bus/pci/devices and the NUMA
 * topology under ROOT/sys/devices/system.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

VpaHost *vpa_sysfs_load (const char *root, GError **error);
/* Only the devices at addrs (missing ones are left out) and their parent
 * PFs, plus the topology without the capacity (the cells' CPUs, sockets
 * and distances; topo and pages NULL, memory_kib 0: one CPU per node is
 * read, no meminfo, no hugepages): what a check of a few devices and the
 * hook's keeping re-placement need, without reading every device or CPU
 * of a large host. */
VpaHost *vpa_sysfs_load_devices (const char *root, const VpaAddr *addrs, guint n_addrs,
                                 GError **error);

/* Appends to vfs (VpaAddr) the VFs of the PF at pf (its virtfn* links);
 * none for a device that is not a PF or is gone. */
gboolean vpa_sysfs_vf_addrs (const char *root, VpaAddr pf, GArray *vfs, GError **error);

G_END_DECLS
