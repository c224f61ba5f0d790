/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host nodes backing a domain's guest cells, once the host is known:
 * a decision beside the parsed VpaDomain (which is not changed after
 * parsing), that the pipeline, the fleet's filter and the hook pass
 * along with it.
 */
#pragma once

#include "vpa-domain-model.h"

G_BEGIN_DECLS

typedef struct {
  GArray *guest_nodes;   /* gint host nodes, sorted, unique; empty if unbound */
  GPtrArray *cell_nodes; /* per dom->cells entry: GArray of gint host nodes
                          * backing it (nodeset, else its pins' nodes), sorted */
} VpaBind;

void vpa_bind_free (VpaBind *bind);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaBind, vpa_bind_free)

/* Binds every cell of dom to host nodes: its nodeset, else the nodes of
 * host that hold its cpuset; guest_nodes is their union (a placement="auto"
 * guest without cells: its <numatune><memory> nodes). A pinned CPU no host
 * cell holds is VPA_ERROR_INVALID, and so is, in a domain with
 * vpa:affinity, a node the host does not have. host NULL, or one without
 * NUMA cells, binds by nodeset only and never fails. */
VpaBind *vpa_bind_nodes (const VpaDomain *dom, const VpaHost *host, GError **error);

/* The host nodes of dom->cells entry i, or NULL. */
const GArray *vpa_bind_cell_nodes (const VpaBind *bind, guint i);

G_END_DECLS
