/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The min-cost flow placement routes requests with (vpa-place.c): a
 * network of nodes and paired residual edges, filled by successive
 * shortest paths. Knows nothing of devices or requests.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define VPA_FLOW_INF G_MAXINT64

typedef struct {
  guint to;
  gint next;
  gint64 cap;
  gint64 cost;
} VpaFlowEdge;

typedef struct {
  GArray *edges; /* VpaFlowEdge; edge e and e ^ 1 are a pair */
  GArray *head;  /* gint per node */
} VpaFlow;

/* An empty network of n_nodes nodes; vpa_flow_clear() frees it. */
void vpa_flow_init (VpaFlow *f, guint n_nodes);
void vpa_flow_clear (VpaFlow *f);
/* A new node; returns its index. */
guint vpa_flow_add_node (VpaFlow *f);
/* An edge from -> to of capacity cap and cost per unit; returns its index
 * (its residual twin is index ^ 1). */
guint vpa_flow_add_edge (VpaFlow *f, guint from, guint to, gint64 cap, gint64 cost);
/* The flow on edge e. */
gint64 vpa_flow_of (const VpaFlow *f, guint e);
/* Pushes up to need units from s to t at minimum cost; returns the flow. */
gint64 vpa_flow_run (VpaFlow *f, guint s, guint t, gint64 need);

G_END_DECLS
