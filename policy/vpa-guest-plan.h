/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest PCI layout planner (docs/guest-numa.md): where every placed
 * device goes behind an expander bus bound to the guest cell its host
 * node backs, planned from the layout the domain has
 * (vpa-guest-model.h). Pure: xml/vpa-rewrite.h writes the plan.
 */
#pragma once

#include "vpa-guest-model.h"

G_BEGIN_DECLS

/* Plans the expanders, root ports and device addresses for devices
 * (VpaTopoDevice*) with spares spare root ports per expander. Our
 * controllers already in bus keep their indexes, bus numbers and slots
 * where they still fit, so that placing again changes nothing; new
 * indexes never collide with the domain's own controllers, and every
 * expander's bus numbers lie above the main hierarchy's and outside
 * the domain's own expanders'. With keep (migration, restore: the guest
 * ABI keeps its controllers) nothing may be added, removed or moved:
 * a device that would need that is an error naming it. Errors:
 * VPA_ERROR_INVALID naming what (no bus number or index left),
 * VPA_ERROR_UNSATISFIABLE for keep. */
VpaGuestTopology *vpa_guest_plan_topology (const VpaGuestBus *bus, GPtrArray *devices,
                                           guint spares, gboolean keep, const char *what,
                                           GError **error);

/* The spare root port of cell's expander that no device uses (lowest N),
 * or NULL. */
const VpaGuestController *vpa_guest_plan_bus_free_spare (const VpaGuestBus *bus, guint cell);

/* --explain: cell -> expander -> root port -> device -> host node. */
void vpa_guest_plan_explain (const VpaGuestTopology *topo, GString *out);

G_END_DECLS
