/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What libvirt 9.0 refuses to define, in the parts of a domain the guest
 * PCI layout planner reads (docs/guest-numa.md, "What libvirt refuses"),
 * judged on what xml/ read of them (VpaGuestFacts, vpa-guest-model.h).
 */
#pragma once

#include "vpa-guest-model.h"

G_BEGIN_DECLS

/* Refuses, when bus->facts says there is something to check (bus NULL or
 * without facts: TRUE): an unknown controller type or PCI model, a
 * controller index that is not a decimal number, two controllers of one
 * type (USB aside) with one index, a PCI index above 255, a root bus not
 * at index 0, the other machine type's expander bus, a busNr outside
 * 1-254, a <node> that is no guest cell, a PCI controller plugged into a
 * bus not below its index, a guest PCI address field out of range or
 * outside domain 0, two devices on one guest PCI address, a user alias
 * twice, and cell ids other than 0 to N-1. VPA_ERROR_INVALID naming the
 * element, attribute and value; what names the document. Every caller of
 * the domain parser that goes on to place runs it right after parsing. */
gboolean vpa_guest_bus_rules_check (const VpaGuestBus *bus, const char *what, GError **error);

G_END_DECLS
