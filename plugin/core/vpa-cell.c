/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A host's NUMA cells (vpa-cell.h).
 */
#include "vpa-cell.h"
#include "vpa-types.h"

gint
vpa_cell_socket_from_cpu_sockets (const gint *sockets, guint n)
{
  if (n == 0)
    return VPA_SOCKET_NONE;
  for (guint i = 0; i < n; i++)
    {
      if (sockets[i] < 0 || sockets[i] != sockets[0])
        return VPA_SOCKET_NONE;
    }
  return sockets[0];
}

const VpaPages *
vpa_cell_pages (const VpaCell *cell, guint64 size_kib)
{
  for (guint i = 0; cell->pages != NULL && i < cell->pages->len; i++)
    {
      const VpaPages *p = &g_array_index (cell->pages, VpaPages, i);
      if (p->size_kib == size_kib)
        return p;
    }
  return NULL;
}
