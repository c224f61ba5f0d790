/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt hostdev networks (<forward mode='hostdev'> with <pf dev=...>):
 * libvirt's own VF pools, one per PF in the usual layout. libvpa-virt
 * reads them from a connection; this module relates them to the
 * inventory (which PF, how many of its VFs are free) without libvirt.
 */
#pragma once

#include "vpa-inventory.h"
#include "vpa-domain.h"
#include "vpa-place.h"

G_BEGIN_DECLS

typedef struct {
  char *name;
  gboolean active;
  GStrv pf_devs; /* the <pf dev> names, in document order */
} VpaHostdevNet;

VpaHostdevNet *vpa_netpool_hostdev_net_new (const char *name, gboolean active, GStrv pf_devs);
void vpa_netpool_hostdev_net_free (VpaHostdevNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaHostdevNet, vpa_netpool_hostdev_net_free)

/* A network document's hostdev pool: NULL (without error) when it is not
 * a <forward mode='hostdev'> network with a <pf dev>; doc->what names
 * the document in messages. */
VpaHostdevNet *vpa_netpool_hostdev_net_parse (const VpaDoc *doc, gboolean active,
                                              GError **error);

/* One row per (network, PF): the PF's inventory index (-1 when the host
 * has no PF with that netdev), its VFs in the inventory and the free ones. */
typedef struct {
  const VpaHostdevNet *net;
  const char *pf_dev;
  gint pf_index;
  guint vfs, free;
} VpaNetPoolRow;

GArray *vpa_netpool_rows (const VpaInventory *inv, GPtrArray *nets);

/* The active network of nets whose <pf dev> is the PF of device i (a VF),
 * or NULL. */
const VpaHostdevNet *vpa_netpool_network_of (const VpaInventory *inv, GPtrArray *nets, guint i);

/* The network of nets called name, or NULL. */
const VpaHostdevNet *vpa_netpool_find (GPtrArray *nets, const char *name);

/* The port of dom that fills device (a user alias), or NULL. */
const VpaPortRequest *vpa_netpool_port (const VpaDomain *dom, const char *device);

/* Each port request whose port names an <interface type='network'> may
 * only take a VF of an active hostdev network's PF: its specs become one
 * per (spec, PF), the spec and VPA_PROP_PF_NETDEV=PF. VPA_ERROR_UNSATISFIABLE
 * naming the port when there is no such network. */
gboolean vpa_netpool_restrict (GPtrArray *requests, const VpaDomain *dom, GPtrArray *nets,
                               GError **error);

G_END_DECLS
