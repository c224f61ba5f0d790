/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The topology view: the PCIe distance between selected inventory
 * devices, as `nvidia-smi topo -m` prints it (docs/pools.md, "Topology").
 */
#pragma once

#include "vpa-inventory.h"
#include "vpa-pcie.h"

G_BEGIN_DECLS

typedef struct {
  GArray *devices;   /* guint host indices, ascending address */
  GPtrArray *labels; /* char*: GPU0 (an alias name and a count), NIC0, DEV0 */
  guint8 *matrix;    /* n * n VpaPcieDistance; the diagonal is the device itself */
} VpaTopology;

void vpa_topology_free (VpaTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaTopology, vpa_topology_free)

/* selectors: NULL for every inventory device but VFs and every PF whose
 * VFs are in the inventory (a NIC row, also when the PF itself is not
 * assignable), else a comma separated list, each an alias of the
 * configuration (the devices its specs match), an address glob (contains
 * ':'; VFs too) or a physical network (the devices but VFs tagged with
 * it, and the PFs of VFs tagged with it). VPA_ERROR_INVALID naming a
 * selector that selects nothing. */
VpaTopology *vpa_topology_new (const VpaInventory *inv, const char *selectors, GError **error);

static inline VpaPcieDistance
vpa_topology_at (const VpaTopology *topo, guint row, guint col)
{
  return (VpaPcieDistance) topo->matrix[(gsize) row * topo->devices->len + col];
}

/* The label of every host device in the view without selectors, by
 * host index (a VF has its PF's: the NIC row it sits in), NULL for
 * those outside it: host->devices->len char*. */
GPtrArray *vpa_topology_labels (const VpaInventory *inv);

/* Device i's VFs in the inventory: how many (*total) and how many are
 * free; FALSE (both 0) when it has none there. */
gboolean vpa_topology_vfs (const VpaInventory *inv, guint i, guint *free_vfs, guint *total);

/* The CPUs of a NUMA node as a cpulist ("0-23,48-71"), "-" when none. */
char *vpa_topology_node_cpus (const VpaHost *host, gint node);

G_END_DECLS
