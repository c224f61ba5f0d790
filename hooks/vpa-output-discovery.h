/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `devices --all`: every PCI function of the host, admitted or not, with
 * what a [device-spec] is written from (docs/operations.md,
 * "Discovery").
 */
#pragma once

#include "vpa-config.h"

G_BEGIN_DECLS

/* One row per device of host (sealed): ADDRESS ID CLASS TYPE NUMA SOCKET
 * PF NETDEV DRIVER IOMMU SPEC ('-' for unknown or none; SPEC the
 * [device-spec] that admits it, "bridge" for one none can). */
char *vpa_output_discovery_text (const VpaHost *host, const VpaConfig *config);

/* {"devices": [{"address", "vendor_id", "product_id", "class",
 * "dev_type", "numa_node", "socket", "pf", "netdev", "driver",
 * "iommu_group", "spec"}, ...]}: unknown values and no spec are null. */
char *vpa_output_discovery_json (const VpaHost *host, const VpaConfig *config);

G_END_DECLS
