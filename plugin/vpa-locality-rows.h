/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A locality group's devices as rows of the topology view, for
 * --explain (docs/placement.md, "Locality groups"): the labels come
 * from the configuration's aliases, so the plan carries the devices and
 * this renders them.
 */
#pragma once

#include "vpa-inventory.h"

G_BEGIN_DECLS

/* "GPU0 0000:18:00.0, NIC0 0000:19:00.2 (a VF of 0000:19:00.0)" for
 * devices (guint host indices of inv), as `topology` labels them. */
char *vpa_locality_rows (const VpaInventory *inv, const GArray *devices);

G_END_DECLS
