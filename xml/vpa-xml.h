/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * XML boundary: safe parsing of untrusted documents and the small
 * accessors every reader of libvirt XML shares (the readers have their
 * own headers: vpa-nodedev.h, vpa-capabilities.h, vpa-domain.h,
 * vpa-snapshot.h, vpa-statedirs.h).
 */
#pragma once

#include <libxml/tree.h>
#include "vpa-types.h"

G_BEGIN_DECLS

/* Largest document we accept (the hook's stdin, a domain file). */
#define VPA_XML_MAX_DOCUMENT (16 * 1024 * 1024)

/* libxml2 parser options for untrusted input: no network, no entity
 * substitution, no DTD loading, no huge-document relaxation. */
int vpa_xml_parse_options (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlDoc, xmlFreeDoc)

/* Parses buf (what names it in messages); refuses documents over
 * VPA_XML_MAX_DOCUMENT, DTDs and entities; VPA_ERROR_INVALID with
 * "WHAT:LINE: message". */
xmlDoc *vpa_xml_parse_memory (const char *buf, gsize len, const char *what,
                              GError **error);

/* Small accessors shared by every parser. Element names are compared
 * without namespace unless ns is given. */
/* The attribute's value (free with g_free), or NULL. */
char *vpa_xml_prop (xmlNode *node, const char *name);
/* The first child element with this name (and namespace href if ns), or NULL. */
xmlNode *vpa_xml_child (xmlNode *node, const char *name, const char *ns);
/* Next sibling element (any name) after node, or NULL. */
xmlNode *vpa_xml_next_element (xmlNode *node);
/* The element's text content, stripped (free with g_free), or NULL if empty. */
char *vpa_xml_text (xmlNode *node);
/* TRUE if node is an element called name (and in namespace ns if given). */
gboolean vpa_xml_is (xmlNode *node, const char *name, const char *ns);

/* The PCI address of a <hostdev mode='subsystem' type='pci'> or an
 * <interface type='hostdev'>: its <source><address domain= bus= slot=
 * function=> (hex "0x81" or decimal, as libvirt accepts). *out is
 * VPA_ADDR_NONE when the element has no source address yet (place fills
 * it). FALSE with VPA_ERROR_INVALID for an address that does not parse;
 * *is_pci is FALSE for elements that are not PCI hostdevs (usb, scsi,
 * other interface types), which callers skip. */
gboolean vpa_xml_hostdev_address (xmlNode *node, const char *what,
                                  gboolean *is_pci, VpaAddr *out, GError **error);

G_END_DECLS
