/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * XML boundary: safe parsing of untrusted documents and the small
 * accessors every reader of libvirt XML shares (the readers have their
 * own headers: vpa-nodedev.h, vpa-capabilities.h, vpa-domain.h,
 * vpa-snapshot.h, vpa-statedirs.h).
 */
#pragma once

#include <libxml/tree.h>
#include "vpa-constants.h"
#include "vpa-types.h"

G_BEGIN_DECLS

/* VPA_XML_MAX_DOCUMENT, the largest document we accept (the hook's
 * stdin, a domain file, a state file), is in vpa-constants.h. */

/* Most attributes one element may carry (libvirt's have a handful; ours
 * at most six). */
#define VPA_XML_MAX_ATTRIBUTES 256
/* Most elements and attributes a whole document may have: the status XML
 * of a domain with 4096 pinned vCPUs and a hundred devices stays well
 * below, and libxml2's tree of the most stays around 40 MiB. */
#define VPA_XML_MAX_ELEMENTS 32768
#define VPA_XML_MAX_ATTRIBUTES_TOTAL 131072

/* A linear pre-scan of an untrusted document, before libxml2 sees it:
 * VPA_ERROR_INVALID "WHAT:LINE: element <NAME> has N attributes ..." for
 * an element over VPA_XML_MAX_ATTRIBUTES, and "WHAT:LINE: the document
 * has more than N elements|attributes ..." past the document's bounds
 * (LINE: where the bound was crossed). Called by
 * vpa_xml_parse_memory(). */
gboolean vpa_xml_prescan (const VpaDoc *doc, GError **error);

/* libxml2 parser options for untrusted input: no network, no entity
 * substitution, no DTD loading, no huge-document relaxation. */
int vpa_xml_parse_options (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlDoc, xmlFreeDoc)

/* Parses doc (doc->what names it in messages); refuses documents over
 * VPA_XML_MAX_DOCUMENT, DTDs and entities; VPA_ERROR_INVALID with
 * "WHAT:LINE: message". */
xmlDoc *vpa_xml_parse_memory (const VpaDoc *doc, GError **error);
/* As vpa_xml_parse_memory, with the document's bounds raised by what a
 * rewrite of ours added to a document that was within them (counted by
 * vpa_xml_count_markup), so that our own output of a domain at the
 * bounds can be parsed back. */
xmlDoc *vpa_xml_parse_memory_grown (const VpaDoc *doc, guint extra_elements,
                                    guint extra_attributes, GError **error);
/* The start tags and attributes of a fragment as the pre-scan counts
 * them (G_MAXUINT both for an element over VPA_XML_MAX_ATTRIBUTES). */
void vpa_xml_count_markup (const char *buf, gsize len, guint *elements, guint *attributes);

/* How far a document of ours may pass the bounds: the elements and
 * attributes our rewrites added to one that was within them. */
typedef struct {
  guint elements;
  guint attributes;
} VpaXmlGrowth;

/* What after (our rewrite of before) added to before, counted as the
 * pre-scan counts (0 where it has fewer). */
void vpa_xml_growth (const char *before, gsize before_len, const char *after, gsize after_len,
                     VpaXmlGrowth *growth);

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
/* A domain's <name> exactly as libvirt keeps it (libvirt does not strip
 * it: 'guest ' and 'guest' are two domains), or NULL if empty. */
char *vpa_xml_name (xmlNode *node);
/* TRUE if node is an element called name (and in namespace ns if given). */
gboolean vpa_xml_is (xmlNode *node, const char *name, const char *ns);

/* The largest PCI domain a device <address> may name: libvirt reads it
 * as an unsigned int and checks no bound (Intel VMD domains start at
 * 0x10000). */
#define VPA_XML_PCI_DOMAIN_MAX G_MAXUINT32

/* The one parser of a PCI <address domain= bus= slot= function=>, modelled
 * on libvirt's virPCIDeviceAddressParseXML: each field "0x" (or "0X") and
 * hex digits, or decimal digits without a leading zero; the whole value,
 * no blanks, no sign; domain <= 0xffffffff (absent: 0), bus <= 0xff, slot <=
 * 0x1f, function <= 7. FALSE with VPA_ERROR_INVALID "WHAT: CONTEXT<address
 * FIELD='VALUE'>: not a PCI address field" otherwise (context names the
 * element holding it, e.g. "<hostdev alias='ua-x'> <source>"). */
gboolean vpa_xml_pci_address_parse (xmlNode *address, const char *what, const char *context,
                                    VpaAddr *out, GError **error);

/* The same rules on the four field values (domain, bus, slot, function;
 * domain may be NULL, for 0), as they stand in the attributes: FALSE
 * when one does not parse, *bad (may be NULL) then says which. */
gboolean vpa_xml_pci_address_fields (const char *const fields[4], VpaAddr *out, guint *bad);

/* The PCI address of a <hostdev mode='subsystem' type='pci'> or an
 * <interface type='hostdev'>: its <source><address> (see
 * vpa_xml_pci_address_parse). *out is VPA_ADDR_NONE when the element has
 * no source address yet (place fills it). FALSE with VPA_ERROR_INVALID
 * for an address that does not parse; *is_pci is FALSE for elements that
 * are not PCI hostdevs (usb, scsi, other interface types), which callers
 * skip. */
gboolean vpa_xml_hostdev_address (xmlNode *node, const char *what,
                                  gboolean *is_pci, VpaAddr *out, GError **error);

/* The one walker of a domain's PCI devices. */
typedef enum {
  /* An address that does not parse is an error. Without it the device
   * is still reported, with VPA_ADDR_NONE (and a debug message): in a
   * domain libvirt accepted, a bad address only loses that address. */
  VPA_XML_PCI_STRICT = 1 << 0,
  /* Also <interface type='network'> with <actual type='hostdev'>: the VF
   * libvirt took from a hostdev network, as its status files record it. */
  VPA_XML_PCI_ACTUAL = 1 << 1,
} VpaXmlPciFlags;

typedef struct {
  xmlNode *node;         /* the <hostdev> or <interface> */
  VpaAddr addr;          /* VPA_ADDR_NONE: no (valid) source address */
  gboolean is_interface; /* an <interface> */
} VpaXmlPciDevice;

/* The PCI devices among the <devices> children of a <domain> element, in
 * document order (an empty array when it has none). NULL with error only
 * under VPA_XML_PCI_STRICT. */
GArray *vpa_xml_domain_pci_devices (xmlNode *domain, const char *what, VpaXmlPciFlags flags,
                                    GError **error);

/* libvirt's scaled-integer unit names ("KiB", "M", ...; NULL is KiB):
 * bytes per unit. */
gboolean vpa_capabilities_unit_scale (const char *unit, guint64 *scale);

/* The CPUs and memory a domain (<domain> or <domstatus>) holds on the
 * host's NUMA nodes (see docs/placement.md, "Claims of CPUs and
 * memory") into *out, NULL when it holds none. Tolerant: what libvirt
 * would have refused holds nothing. VPA_ERROR_INVALID "WHAT: <ELEMENT>
 * has more than N <CHILD> elements ..." over the bounds a domain on
 * stdin has (vpa-domain.h): what it holds cannot be known. */
gboolean vpa_numa_claim (xmlNode *domain, const char *name, gboolean running,
                         const char *what, VpaClaim **out, GError **error);

G_END_DECLS
