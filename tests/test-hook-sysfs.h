/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Fake sysfs trees for the hook tests (docs/interface.md, "Inventory
 * sources", sysfs:ROOT)
 * and the hook's performance measurement.
 */
#pragma once

#include <glib.h>

/* Builds ROOT/sys with two NUMA nodes (CPUs 0-1 on node 0 / socket 0,
 * 2-3 on node 1 / socket 1) and 8 Intel PFs, four per node, sharing n_vfs
 * VFs: PF 0000:BB:00.0 has its VFs on bus BB+1 (0000:19:00.0 ... for the
 * first PF, bus 0x18, node 0). Returns ROOT, a new temporary directory. */
char *vpa_test_sysfs_tree (guint n_vfs, GError **error);
/* The same with an IOMMU group per function (sys/kernel/iommu_groups/N),
 * and the PF 0000:18:00.0 and the VF 0000:1b:00.5, which the running
 * domain of data/hook/state/pfvf holds, bound to vfio-pci. */
char *vpa_test_sysfs_tree_iommu (guint n_vfs, GError **error);
void vpa_test_sysfs_remove (const char *root);

gint vpa_test_name_cmp (gconstpointer a, gconstpointer b);

gint vpa_test_double_cmp (gconstpointer a, gconstpointer b);
