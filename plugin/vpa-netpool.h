/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt hostdev networks (<forward mode='hostdev'> with <pf dev=...>):
 * libvirt's own VF pools, one per PF in the usual layout. libvpa-virt
 * reads them from a connection; this module relates them to the
 * inventory (which PF, how many of its VFs are free) without libvirt.
 */
#pragma once

#include "vpa-inventory.h"

G_BEGIN_DECLS

typedef struct {
  char *name;
  gboolean active;
  GStrv pf_devs;   /* the <pf dev> names, in document order */
} VpaHostdevNet;

VpaHostdevNet *vpa_hostdev_net_new (const char *name, gboolean active, GStrv pf_devs);
void vpa_hostdev_net_free (VpaHostdevNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaHostdevNet, vpa_hostdev_net_free)

/* A network document's hostdev pool: NULL (without error) when it is not
 * a <forward mode='hostdev'> network with a <pf dev>. */
VpaHostdevNet *vpa_hostdev_net_parse (const char *xml, gsize len, gboolean active,
                                      const char *what, GError **error);

/* One row per (network, PF): the PF's inventory index (-1 when the host
 * has no PF with that netdev), its VFs in the inventory and the free ones. */
typedef struct {
  const VpaHostdevNet *net;
  const char *pf_dev;
  gint pf_index;
  guint vfs, free;
} VpaNetPoolRow;

GArray *vpa_netpool_rows (const VpaInventory *inv, GPtrArray *nets);

G_END_DECLS
