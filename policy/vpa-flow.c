/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Min-cost flow for placement (vpa-flow.h): successive shortest paths
 * (Bellman-Ford with a FIFO queue, as residual costs go negative).
 * Polynomial: each augmenting path carries at least one device, and the
 * flow is at most the sum of the request counts.
 */
#include "vpa-flow.h"

void
vpa_flow_init (VpaFlow *f, guint n_nodes)
{
  gint none = -1;

  f->edges = g_array_new (FALSE, FALSE, sizeof (VpaFlowEdge));
  f->head = g_array_new (FALSE, FALSE, sizeof (gint));
  for (guint i = 0; i < n_nodes; i++)
    g_array_append_val (f->head, none);
}

void
vpa_flow_clear (VpaFlow *f)
{
  g_clear_pointer (&f->edges, g_array_unref);
  g_clear_pointer (&f->head, g_array_unref);
}

guint
vpa_flow_add_node (VpaFlow *f)
{
  gint none = -1;

  g_array_append_val (f->head, none);
  return f->head->len - 1;
}

guint
vpa_flow_add_edge (VpaFlow *f, guint from, guint to, gint64 cap, gint64 cost)
{
  VpaFlowEdge fwd = { to, g_array_index (f->head, gint, from), cap, cost };
  VpaFlowEdge rev = { from, g_array_index (f->head, gint, to), 0, -cost };
  guint e = f->edges->len;

  g_array_append_val (f->edges, fwd);
  g_array_index (f->head, gint, from) = (gint) e;
  g_array_append_val (f->edges, rev);
  g_array_index (f->head, gint, to) = (gint) e + 1;
  return e;
}

gint64
vpa_flow_of (const VpaFlow *f, guint e)
{
  return g_array_index (f->edges, VpaFlowEdge, e ^ 1).cap;
}

/* Shortest path from s to t in the residual graph; FALSE if none. */
static gboolean
flow_shortest (VpaFlow *f, guint s, guint t, gint64 *dist, gint *prev, gboolean *queued,
               guint *queue)
{
  guint n = f->head->len, qh = 0, qt = 0, qn = 0;
  VpaFlowEdge *edges = (VpaFlowEdge *) (void *) f->edges->data;
  const gint *head = (const gint *) (void *) f->head->data;

  for (guint i = 0; i < n; i++)
    {
      dist[i] = VPA_FLOW_INF;
      prev[i] = -1;
      queued[i] = FALSE;
    }
  dist[s] = 0;
  queue[qt++] = s;
  qn = 1;
  queued[s] = TRUE;
  while (qn > 0)
    {
      guint u = queue[qh];
      qh = (qh + 1) % n;
      qn--;
      queued[u] = FALSE;
      for (gint e = head[u]; e >= 0; e = edges[e].next)
        {
          guint v = edges[e].to;
          if (edges[e].cap <= 0 || dist[u] + edges[e].cost >= dist[v])
            continue;
          dist[v] = dist[u] + edges[e].cost;
          prev[v] = e;
          if (!queued[v])
            {
              queue[qt] = v;
              qt = (qt + 1) % n;
              qn++;
              queued[v] = TRUE;
            }
        }
    }
  return dist[t] != VPA_FLOW_INF;
}

/* Pushes up to need units from s to t at minimum cost; returns the flow. */
gint64
vpa_flow_run (VpaFlow *f, guint s, guint t, gint64 need)
{
  guint n = f->head->len;
  g_autofree gint64 *dist = g_new (gint64, n);
  g_autofree gint *prev = g_new (gint, n);
  g_autofree gboolean *queued = g_new (gboolean, n);
  g_autofree guint *queue = g_new (guint, n);
  gint64 done = 0;

  while (done < need && flow_shortest (f, s, t, dist, prev, queued, queue))
    {
      VpaFlowEdge *edges = (VpaFlowEdge *) (void *) f->edges->data;
      gint64 push = need - done;

      for (guint v = t; v != s; v = edges[prev[v] ^ 1].to)
        push = MIN (push, edges[prev[v]].cap);
      for (guint v = t; v != s; v = edges[prev[v] ^ 1].to)
        {
          edges[prev[v]].cap -= push;
          edges[prev[v] ^ 1].cap += push;
        }
      done += push;
    }
  return done;
}
