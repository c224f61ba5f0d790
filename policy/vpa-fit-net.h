/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fit's network rules (VpaNetRule) as masks over the capacity's node
 * indices: which chosen sets of nodes meet each (docs/vswitch.md). Only
 * vpa-fit.c includes it.
 */
#pragma once

#include "vpa-fit.h"

G_BEGIN_DECLS

typedef struct {
  guint n;                 /* rules that constrain anything */
  guint64 *mask;           /* per rule: the node indices meeting it */
  gboolean *soft;          /* per rule: preferred (a tie-breaker) */
  const VpaNetRule **rule; /* per rule: the first with its mask */
  guint *count;            /* per rule: the rules with that mask and hardness */
  guint n_soft;            /* soft rules, with their counts */
} VpaNetMasks;

/* NULL when no rule constrains anything on cap's nodes. */
VpaNetMasks *vpa_fit_net_masks_new (const VpaCapacity *cap, GPtrArray *rules);
void vpa_fit_net_masks_free (VpaNetMasks *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaNetMasks, vpa_fit_net_masks_free)

/* Every hard rule has a node in used. */
gboolean vpa_fit_net_masks_hard_met (const VpaNetMasks *m, guint64 used);
/* Soft rules without a node in used. */
guint vpa_fit_net_masks_soft_misses (const VpaNetMasks *m, guint64 used);
/* One line per rule: its nodes, and whether the nodes of chosen (a
 * mask; 0: not chosen yet) meet it. */
void vpa_fit_net_masks_explain (const VpaNetMasks *m, const VpaCapacity *cap, guint64 chosen,
                                GString *out);

G_END_DECLS
