/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline-distances.h"
#include "vpa-guest-topology.h"
#include "vpa-rewrite.h"

/* The host's distance from node a to node b, 0 when it has none. libvirt
 * takes 10 (local) to 255 (unreachable). */
static guint
host_distance (const VpaHost *host, gint a, gint b)
{
  const VpaCell *cell = vpa_host_cell (host, a);

  for (guint i = 0; cell != NULL && cell->distances != NULL && i < cell->distances->len; i++)
    {
      const VpaDistance *d = &g_array_index (cell->distances, VpaDistance, i);
      if (d->node == b)
        return d->value >= 10 && d->value <= 255 ? d->value : 0;
    }
  return 0;
}

gboolean
vpa_pipeline_cell_distances (const VpaHost *host, const GArray *cells, guint **ids,
                             guint **values, const char **why)
{
  guint n = cells->len;
  g_autofree guint *id = NULL;
  g_autofree guint *v = NULL;

  *why = NULL;
  if (n < 2)
    {
      *why = "fewer than two cells";
      return FALSE;
    }
  id = g_new (guint, n);
  v = g_new (guint, (gsize) n * n);
  for (guint i = 0; i < n; i++)
    {
      const VpaCellNodes *ci = &g_array_index (cells, VpaCellNodes, i);
      id[i] = ci->cell;
      if (ci->nodes == NULL || ci->nodes->len != 1)
        {
          *why = "a cell is bound to no host node or to several";
          return FALSE;
        }
    }
  for (guint i = 0; i < n; i++)
    {
      for (guint j = 0; j < n; j++)
        {
          gint a = g_array_index (g_array_index (cells, VpaCellNodes, i).nodes, gint, 0);
          gint b = g_array_index (g_array_index (cells, VpaCellNodes, j).nodes, gint, 0);

          if (i != j && a == b)
            {
              *why = "two cells are bound to one host node";
              return FALSE;
            }
          v[(gsize) i * n + j] = i == j ? 10 : host_distance (host, a, b);
          if (v[(gsize) i * n + j] == 0 || (i != j && v[(gsize) i * n + j] == 10))
            {
              *why = "the host has no distance between two of the cells' nodes";
              return FALSE;
            }
        }
    }
  *ids = g_steal_pointer (&id);
  *values = g_steal_pointer (&v);
  return TRUE;
}

char *
vpa_pipeline_rewrite_distances (const VpaRewriteInput *rw, char *buf, gsize *len,
                                const VpaXmlGrowth *grown, GError **error)
{
  const VpaDomain *dom = rw->dom;
  const GArray *cells = rw->cells;
  g_autofree char *in = buf;
  g_autofree guint *ids = NULL;
  g_autofree guint *values = NULL;
  const char *why = NULL;
  VpaCellDistances d;

  if (dom->keep_distances || dom->cells->len == 0 ||
      rw->keep_guest_topology)
    return g_steal_pointer (&in);
  if (!vpa_pipeline_cell_distances (rw->host, cells, &ids, &values, &why))
    {
      if (rw->explain != NULL && cells->len > 1)
        g_string_append_printf (rw->explain, "guest distances: not written: %s\n", why);
      return g_steal_pointer (&in);
    }
  d.n = cells->len;
  d.ids = ids;
  d.values = values;
  const VpaDoc doc = { in, *len, rw->what };
  return vpa_rewrite_distances_grown (&doc, &d, grown, len, error);
}
