/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * vSwitch ports in the domain: <vpa:port vnic-type="normal"> naming a
 * vhostuser, bridge, network or ethernet <interface> by user alias
 * (docs/vswitch.md). Read only: nothing in the interface is rewritten.
 */
#pragma once

#include "vpa-domain.h"

G_BEGIN_DECLS

/* Parses node (a <vpa:port vnic-type="normal">) into dom->vswitch_ports.
 * devices holds the user aliases other ports already name (borrowed
 * keys); the port's is added. Errors are VPA_ERROR_INVALID naming the
 * element, the attribute and the value. */
gboolean vpa_domain_parse_vswitch_port (VpaDomain *dom, xmlNode *node, const char *what,
                                        GHashTable *devices, GError **error);

/* Each vSwitch port of dom names an <interface> of type vhostuser,
 * bridge, network or ethernet in domain's <devices> by its user alias;
 * sets the port's iface_type. */
gboolean vpa_domain_check_vswitch_ports (VpaDomain *dom, xmlNode *domain, const char *what,
                                         GError **error);

G_END_DECLS
