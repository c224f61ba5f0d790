/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Domain XML -> VpaDomain (vpa-domain-model.h): the vpa:affinity
 * requests in its metadata, the guest NUMA cells and the host nodes
 * they are bound to, the PCI devices it holds, and the decisions
 * recorded by earlier placements. Parse only; vpa-rewrite.h writes
 * decisions back.
 */
#pragma once

#include "vpa-domain-mode.h"
#include <libxml/tree.h>
#include "vpa-domain-model.h"
#include "vpa-guest-topology.h"

G_BEGIN_DECLS

/* Parses a whole domain document (safely, see vpa-xml.h). what names it
 * in messages ("domain.xml", "stdin"). Malformed vpa metadata is
 * VPA_ERROR_INVALID naming the element, attribute and value. */
VpaDomain *vpa_domain_parse (const char *buf, gsize len, const char *what,
                             GError **error);
/* The same on a <domain> element (or a <domstatus> wrapping one). */
VpaDomain *vpa_domain_parse_node (xmlNode *node, const char *what, GError **error);

/* Sets dom->guest_nodes to the union of every cell's host nodes: its
 * nodeset, else the nodes of host that hold its cpuset. Parsing already
 * fills guest_nodes from the nodesets; callers that know the host call
 * this before placing. A pinned CPU no host cell holds is
 * VPA_ERROR_INVALID, and so is, in a domain with vpa:affinity, a node
 * the host does not have. A host
 * without NUMA cells binds only by nodeset. */
gboolean vpa_domain_bind_nodes (VpaDomain *dom, const VpaHost *host, GError **error);

G_END_DECLS
