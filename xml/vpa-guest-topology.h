/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Guest-visible device NUMA (<vpa:guest-numa devices='expander-bus'>,
 * docs/guest-numa.md): the guest's PCI controllers as the domain
 * document has them (vpa-guest-model.h), read from libvirt's elements.
 * The plan is policy/vpa-guest-plan.h; vpa-rewrite.h writes it into the
 * document.
 */
#pragma once

#include <libxml/tree.h>
#include "vpa-types.h"
#include "vpa-guest-model.h"

G_BEGIN_DECLS

/* Reads the <domain> element's PCI controllers, machine type, ACPI and
 * the guest addresses of its devices. libvirt's content: what does not
 * parse is left out. */
VpaGuestBus *vpa_guest_topology_bus_parse (xmlNode *domain);

/* What libvirt's bus rules (policy/vpa-guest-bus-rules.h) read of the
 * <domain> element: its cells' ids, and the attributes, user alias,
 * guest PCI address and <target> of every element of <devices> libvirt
 * gives an address, raw. */
VpaGuestFacts *vpa_guest_facts_parse (xmlNode *domain);

/* For the rewrite: whether the <controller> element is exactly tc
 * (model, index, busNr and node, or the bus and slot it plugs into);
 * other content libvirt added is allowed. */
gboolean vpa_guest_topology_controller_matches (xmlNode *controller, const VpaTopoController *tc);
/* The bus (controller index) of the element's own <address type='pci'>,
 * or -1; *slot receives its slot (-1). */
gint vpa_guest_topology_address_bus (xmlNode *node, gint *slot);
/* A <controller>'s index as libvirt reads it (decimal, leading blanks
 * allowed), or -1 when absent or not a number. */
gint vpa_guest_topology_controller_index (xmlNode *controller);

G_END_DECLS
