/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The pipeline's side of guest-visible device NUMA (<vpa:guest-numa>,
 * docs/guest-numa.md): which guest cell each decided device's host node
 * backs, the plan of expander buses and root ports for them
 * (vpa-guest-topology.h), and the rewrite that writes both. The cells'
 * host nodes come in as VpaCellNodes so that any binding feeds it: the
 * domain's own (vpa_pipeline_guest_cells) or one whole-guest placement
 * chose.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-guest-topology.h"
#include "vpa-pipeline.h"
#include "vpa-rewrite.h"
#include "vpa-bind.h"

G_BEGIN_DECLS

/* VpaCellNodes of every guest cell of dom, from its own binding bind
 * (vpa-bind.h); the node arrays are borrowed from bind. */
GArray *vpa_pipeline_guest_cells (const VpaDomain *dom, const VpaBind *bind);

/* VpaCellNodes of a binding given as n (guest cell, host node) pairs, as
 * whole-guest placement chooses one node per cell. The node arrays live
 * in *owner (free it after the result). */
GArray *vpa_pipeline_guest_cells_of (const guint *cells, const gint *nodes, guint n,
                                     GPtrArray **owner);

/* What every step of one domain's rewrite reads: the domain, the
 * document as given, the plan, and the caller's wishes. */
typedef struct {
  const VpaDomain *dom;
  const VpaHost *host;
  const VpaConfig *config; /* may be NULL */
  const char *buf;         /* the document as given, len bytes, what in messages */
  gsize len;
  const char *what;
  GPtrArray *decisions;         /* VpaDecision*, final (policy/vpa-decide.h) */
  const GArray *cells;          /* VpaCellNodes: which guest cell each host node backs */
  gboolean keep_guest_topology; /* the guest's PCI controllers must not change */
  GString *explain;             /* may be NULL */
} VpaRewriteInput;

/* vpa_rewrite_domain() of in->decisions, plus the guest PCI layout they
 * need when the domain asks for <vpa:guest-numa> (or still has our
 * controllers): in->config (may be NULL) gives the vSwitch ports'
 * networks their nodes, and each port's <interface> goes behind the
 * expander of the first cell on one of them. keep_guest_topology keeps
 * the guest's controllers (an error when a device would need a change);
 * explain receives the topology. */
char *vpa_pipeline_rewrite_placed (const VpaRewriteInput *in, gsize *out_len, GError **error);

/* vpa_rewrite_numa() of binding into mid, the rewrite of in->buf
 * by vpa_pipeline_rewrite_placed(): mid may pass the document's bounds
 * in->buf was within by what that rewrite added. */
char *vpa_pipeline_rewrite_binding (const VpaRewriteInput *in, const char *mid, gsize mid_len,
                                    const VpaNumaBinding *binding, gsize *out_len,
                                    GError **error);

/* For attach: *out_bus is the bus of a free spare root port of dev's
 * cell's expander, whose slot 0 the device is put into
 * (vpa_attach_interface), or -1 (no guest-numa, an i440fx guest, a node
 * backing no cell). No free spare: VPA_ERROR_UNSATISFIABLE
 * saying to raise spare-ports. */
gboolean vpa_pipeline_attach_guest_address (const VpaDomain *dom, const VpaBind *bind, const char *alias,
                                            const VpaDevice *dev, gint *out_bus, GError **error);

G_END_DECLS
