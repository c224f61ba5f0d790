/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What each host NUMA node can still give a guest (vpa-capacity-model.h),
 * counted from the host, the [host] reservations and the other domains'
 * claims (docs/placement.md, "Whole-guest NUMA placement"). Pure: no I/O.
 */
#pragma once

#include "vpa-config.h"
#include "vpa-capacity-model.h"

G_BEGIN_DECLS

/* The capacity of host (sealed) under config's [host] group, less the
 * NUMA claims (VpaClaim with numa set; one per domain counts, the first)
 * of every domain but exclude. A [host] value naming a CPU, node or page
 * size the host does not have is VPA_ERROR_INVALID. */
VpaCapacity *vpa_capacity_new (const VpaHost *host, const VpaConfig *config,
                               GPtrArray *claims, const char *exclude, GError **error);

G_END_DECLS
