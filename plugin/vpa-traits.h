/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host's capability traits (docs/interface.md, "Commands").
 */
#pragma once

#include "vpa-inventory.h"

G_BEGIN_DECLS

/* SR-IOV VFs are in the inventory (the port-scoped SR-IOV spec's trait). */
#define VPA_TRAIT_NET_NUMA_AFFINITY "COMPUTE_NET_NUMA_AFFINITY"
/* Every host NUMA cell has a socket id, so the socket policy can work. */
#define VPA_TRAIT_SOCKET_PCI_NUMA_AFFINITY "COMPUTE_SOCKET_PCI_NUMA_AFFINITY"

/* The traits of the inventory's host, sorted, NULL-terminated. */
char **vpa_traits_compute (const VpaInventory *inv);

G_END_DECLS
