/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A state file past the bounds of a parsed document (vpa-xml.h), read
 * in one streaming pass into a small tree of only what the claims read:
 * libvirt keeps a domain's thousands of disks or a large <metadata>
 * verbatim, and those say nothing about the PCI devices, CPUs and
 * memory it holds.
 */
#pragma once

#include <libxml/tree.h>
#include "vpa-types.h"

G_BEGIN_DECLS

/* Most pairs of attributes of one element libxml2's duplicate check
 * may compare over a document (n attributes on an element: n(n-1)/2):
 * what 131 072 attributes in elements of 256 each make. */
#define VPA_STATE_REDUCE_MAX_PAIRS (512ULL * 256 * 255 / 2)
/* Most distinct names (of elements, attributes, namespace prefixes and
 * namespaces) a document may have: libxml2's dictionary slows down
 * with them (quadratically in 2.9), and libvirt's domains have a few
 * hundred, however many devices. */
#define VPA_STATE_REDUCE_MAX_NAMES 65536
/* Most namespace declarations libxml2 may search, one by one, for the
 * elements and attributes of a document (the declarations in scope at
 * each, once for the element and once for each attribute): a tenth of
 * a second. libvirt's domains declare a few namespaces, in
 * <metadata>. */
#define VPA_STATE_REDUCE_MAX_LOOKUPS (1ULL << 28)

/* Parses the state file doc (doc->what names it in messages) with
 * xmlTextReader (no DTD, no entities, no network: the options of
 * vpa_xml_parse_options), building only the root, <domstatus>'s
 * <domain> and, in a <domain>, <name>, <vcpu>, <iothreads>, <memory>,
 * <cputune>'s pins, <numatune>'s <memory> and <memnode>, <cpu><numa>'s
 * <cell>, <memoryBacking><hugepages>'s <page>, <metadata>'s
 * <vpa:affinity><vpa:numa>, and <devices>' <hostdev> and <interface>
 * (the last four whole, the others' attributes); every other subtree
 * is skipped without being built, costing time linear in its bytes.
 * The claims read from the result are those read from the whole
 * document. What is built keeps the bounds of a parsed document.
 * VPA_ERROR_INVALID "WHAT:LINE: ..." for a document that is empty, over
 * VPA_XML_MAX_DOCUMENT, holds a NUL byte, a document type declaration,
 * more attribute pairs than VPA_STATE_REDUCE_MAX_PAIRS, distinct names
 * than VPA_STATE_REDUCE_MAX_NAMES or namespace lookups than
 * VPA_STATE_REDUCE_MAX_LOOKUPS (counted in one pass
 * before libxml2 sees the bytes), is not
 * well-formed (libxml2's own limits: nesting past 256, a text node
 * past 10 MB), or whose kept elements are past the bounds. */
xmlDoc *vpa_state_reduce (const VpaDoc *doc, GError **error);

G_END_DECLS
