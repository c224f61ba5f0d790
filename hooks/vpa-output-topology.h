/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The topology view's formats: the distance matrix as nvidia-smi topo -m
 * prints it, with NUMA node and local CPUs, then the devices; or JSON.
 */
#pragma once

#include "vpa-topology.h"

G_BEGIN_DECLS

char *vpa_output_topology_text (const VpaInventory *inv, const VpaTopology *topo);

/* {"devices": [{"label", "address", "vendor_id", "product_id", "dev_type",
 * "numa_node", "cpus", "pcie_root", "root_port", "pcie_switch",
 * "link_speed", "link_width", "netdev"}, ...], "matrix": [["X", "PIX",
 * ...], ...]}: unknown values are null. */
char *vpa_output_topology_json (const VpaInventory *inv, const VpaTopology *topo);

G_END_DECLS
