/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt's capabilities XML (virsh capabilities): the host's NUMA cells.
 */
#pragma once

#include "vpa-xml.h"

G_BEGIN_DECLS

/* Adds the NUMA cells of a <capabilities> element (host/topology/cells)
 * to host, sockets by Nova's rule. */
gboolean vpa_capabilities_parse (xmlNode *caps, const char *what,
                                 VpaHost *host, GError **error);

G_END_DECLS
