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

/* Parses a whole domain document (safely, see vpa-xml.h); doc->what
 * names it in messages ("domain.xml", "stdin"). Malformed vpa metadata
 * is VPA_ERROR_INVALID naming the element, attribute and value. */
VpaDomain *vpa_domain_parse (const VpaDoc *doc, GError **error);
/* The same on a <domain> element (or a <domstatus> wrapping one). */
VpaDomain *vpa_domain_parse_node (xmlNode *node, const char *what, GError **error);

G_END_DECLS
