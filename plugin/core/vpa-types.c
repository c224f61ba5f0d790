/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The error domain, the enums' string tables and a device's lifecycle
 * (vpa-types.h). Addresses, cells, claims, hosts and messages have
 * files of their own.
 */
#include "vpa-types.h"
#include "vpa-enum.h"

/* The quark's name is the macro's argument made a string. */
/* clang-format off */
G_DEFINE_QUARK (vpa-error-quark, vpa_error)
/* clang-format on */

/* ------------------------------------------------------------------ */

VPA_ENUM_IMPL (vpa_dev_type, VpaDevType, VPA_DEV_TYPE_LAST, "type-PCI", "type-PF", "type-VF")
VPA_ENUM_IMPL (vpa_policy, VpaPolicy, VPA_POLICY_LAST, "legacy", "required", "preferred",
               "socket")
VPA_ENUM_IMPL (vpa_policy_source, VpaPolicySource, VPA_POLICY_SOURCE_LAST, "port", "flavor",
               "image", "alias", "default")
VPA_ENUM_IMPL (vpa_cpu_policy, VpaCpuPolicy, VPA_CPU_POLICY_LAST, "shared", "dedicated")
VPA_ENUM_IMPL (vpa_thread_policy, VpaThreadPolicy, VPA_THREAD_POLICY_LAST, "prefer", "isolate",
               "require")

/* ------------------------------------------------------------------ */

VpaDevice *
vpa_device_new (void)
{
  VpaDevice *dev = g_new0 (VpaDevice, 1);
  dev->addr = VPA_ADDR_NONE;
  dev->dev_type = VPA_DEV_TYPE_PCI;
  dev->numa_node = VPA_NUMA_NONE;
  dev->parent_addr = VPA_ADDR_NONE;
  dev->iommu_group = -1;
  dev->parent_index = -1;
  dev->pcie_root = VPA_ADDR_NONE;
  dev->pcie_parent = VPA_ADDR_NONE;
  dev->pcie_parent_index = -1;
  return dev;
}

void
vpa_device_free (VpaDevice *dev)
{
  if (dev == NULL)
    return;
  g_free (dev->netdev);
  g_free (dev->driver);
  if (dev->vf_indices != NULL)
    g_array_unref (dev->vf_indices);
  g_free (dev);
}
