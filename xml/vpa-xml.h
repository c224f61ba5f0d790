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

/* Parses one <device> element as virsh nodedev-dumpxml prints it.
 * what names the source in messages. */
gboolean vpa_xml_nodedev_parse (xmlNode *device, const char *what,
                                VpaNodedev *out, GError **error);

/* Adds the NUMA cells of a <capabilities> element (host/topology/cells)
 * to host, sockets by Nova's rule. */
gboolean vpa_xml_capabilities_parse (xmlNode *caps, const char *what,
                                     VpaHost *host, GError **error);

G_END_DECLS
