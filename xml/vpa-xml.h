/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * XML boundary: safe parsing of untrusted documents and the parsers of
 * libvirt's nodedev and capabilities XML into the core structs.
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

typedef enum {
  VPA_NODEDEV_OTHER,
  VPA_NODEDEV_PCI,
  VPA_NODEDEV_NET,
} VpaNodedevKind;

typedef struct {
  VpaNodedevKind kind;
  char *name;       /* <name>, e.g. pci_0000_81_00_0 */
  char *parent;     /* <parent>, or NULL */
  VpaDevice *pci;   /* kind PCI: the device (owned) */
  char *interface;  /* kind NET: <capability type='net'><interface> */
} VpaNodedev;

void vpa_nodedev_clear (VpaNodedev *nd);

/* The address of a PCI node device named as libvirt names them,
 * pci_DDDD_BB_SS_F; FALSE for any other name. */
gboolean vpa_nodedev_name_to_addr (const char *name, VpaAddr *out);

/* Parses one <device> element as virsh nodedev-dumpxml prints it.
 * what names the source in messages. */
gboolean vpa_xml_nodedev_parse (xmlNode *device, const char *what,
                                VpaNodedev *out, GError **error);

/* Adds the NUMA cells of a <capabilities> element (host/topology/cells)
 * to host, sockets by Nova's rule. */
gboolean vpa_xml_capabilities_parse (xmlNode *caps, const char *what,
                                     VpaHost *host, GError **error);

G_END_DECLS
