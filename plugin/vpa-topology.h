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

/* selectors: NULL for every inventory device but VFs, else a comma
 * separated list, each an alias of the configuration (the devices its
 * specs match), an address glob (contains ':'; VFs too) or a physical
 * network (the devices but VFs tagged with it). VPA_ERROR_INVALID naming
 * a selector that selects nothing. */
VpaTopology *vpa_topology_new (const VpaInventory *inv, const char *selectors, GError **error);

static inline VpaPcieDistance
vpa_topology_at (const VpaTopology *topo, guint row, guint col)
{
  return (VpaPcieDistance) topo->matrix[(gsize) row * topo->devices->len + col];
}

/* The CPUs of a NUMA node as a cpulist ("0-23,48-71"), "-" when none. */
char *vpa_topology_node_cpus (const VpaHost *host, gint node);

G_END_DECLS
