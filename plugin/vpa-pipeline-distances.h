/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest's NUMA distances (docs/guest-numa.md, "Distances"): each
 * guest cell's <distances> from the host's distances between the nodes
 * the cells are bound to, so that the guest kernel sees the host's SLIT
 * instead of assuming 10/20.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-pipeline.h"
#include "vpa-pipeline-topology.h"
#include "vpa-xml.h"

G_BEGIN_DECLS

/* The distances between the guest's cells (VpaCellNodes), or FALSE
 * with *why (static) when none are to be written: fewer than two cells,
 * a cell bound to no host node or to several, two cells on one node, or
 * a pair of nodes the host has no distance for. On TRUE, *ids and
 * *values (n * n) are new arrays, in cells' order. */
gboolean vpa_pipeline_cell_distances (const VpaHost *host, const GArray *cells, guint **ids,
                                      guint **values, const char **why);

/* buf (transfer full, *len bytes) with the distances between in's cells
 * written into its <cpu><numa> cells, or buf itself when none are to be
 * written: <vpa:numa distances='keep'>, and in->keep_guest_topology (the
 * view of a running guest does not change under it). in->explain (may
 * be NULL) says why none are written when the guest has two cells or
 * more. buf, our rewrite, may pass the document's bounds by grown. */
char *vpa_pipeline_rewrite_distances (const VpaRewriteInput *in, char *buf, gsize *len,
                                      const VpaXmlGrowth *grown, GError **error);

G_END_DECLS
