/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * attach --locality-group: a hot-plugged port joins a locality group
 * whose other members are already placed (docs/placement.md, "Locality
 * groups"). Their devices stay; the port's candidates are narrowed to
 * those close enough to them before it is placed.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-inventory.h"
#include "vpa-requests.h"

G_BEGIN_DECLS

/* Holds, in inv, every free device matching r that r's group rules out:
 * for a required group those farther from the members' devices (dom's
 * <vpa:placed> records of the group) than its level; for a preferred one
 * those farther than the closest level a candidate reaches. Nothing when
 * the group has no placed member on this host. */
void vpa_attach_locality_restrict (VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r);

/* The level the group's members and device i share. */
VpaLocality vpa_attach_locality_reached (const VpaInventory *inv, const VpaDomain *dom,
                                         const VpaRequest *r, guint i);

G_END_DECLS
