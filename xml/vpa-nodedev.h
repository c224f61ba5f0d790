/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt's node device XML (virsh nodedev-dumpxml) into the core structs.
 */
#pragma once

#include "vpa-xml.h"

G_BEGIN_DECLS

typedef enum {
  VPA_NODEDEV_OTHER,
  VPA_NODEDEV_PCI,
  VPA_NODEDEV_NET,
} VpaNodedevKind;

typedef struct {
  VpaNodedevKind kind;
  char *name;      /* <name>, e.g. pci_0000_81_00_0 */
  char *parent;    /* <parent>, or NULL */
  VpaDevice *pci;  /* kind PCI: the device (owned) */
  char *interface; /* kind NET: <capability type='net'><interface> */
} VpaNodedev;

void vpa_nodedev_clear (VpaNodedev *nd);

/* The address of a PCI node device named as libvirt names them,
 * pci_DDDD_BB_SS_F; FALSE for any other name. */
gboolean vpa_nodedev_name_to_addr (const char *name, VpaAddr *out);

/* Parses one <device> element as virsh nodedev-dumpxml prints it.
 * what names the source in messages. */
gboolean vpa_nodedev_parse (xmlNode *device, const char *what,
                            VpaNodedev *out, GError **error);

G_END_DECLS
