/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The capacity model (vpa-capacity-model.h).
 */
#include "vpa-capacity-model.h"

void
vpa_node_cap_free (VpaNodeCap *nc)
{
  g_array_unref (nc->shared);
  g_array_unref (nc->dedicated);
  g_array_unref (nc->free_dedicated);
  g_array_unref (nc->free_groups);
  g_array_unref (nc->pages);
  g_free (nc);
}

void
vpa_capacity_free (VpaCapacity *cap)
{
  if (cap == NULL)
    return;
  g_clear_pointer (&cap->nodes, g_ptr_array_unref);
  g_free (cap);
}

const VpaNodeCap *
vpa_capacity_model_node (const VpaCapacity *cap, gint node)
{
  for (guint i = 0; i < cap->nodes->len; i++)
    {
      const VpaNodeCap *nc = g_ptr_array_index (cap->nodes, i);
      if (nc->node == node)
        return nc;
    }
  return NULL;
}

const VpaNodePages *
vpa_capacity_model_node_pages (const VpaNodeCap *nc, guint64 size_kib)
{
  for (guint i = 0; i < nc->pages->len; i++)
    {
      const VpaNodePages *p = &g_array_index (nc->pages, VpaNodePages, i);
      if (p->size_kib == size_kib)
        return p;
    }
  return NULL;
}
