/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host: its devices, cells and claims, sealed (vpa-host.h).
 */
#include "vpa-host.h"
#include "vpa-pcie.h"

static void
cell_clear (gpointer data)
{
  VpaCell *cell = data;
  if (cell->cpus != NULL)
    g_array_unref (cell->cpus);
  if (cell->topo != NULL)
    g_array_unref (cell->topo);
  if (cell->pages != NULL)
    g_array_unref (cell->pages);
  if (cell->distances != NULL)
    g_array_unref (cell->distances);
}

VpaHost *
vpa_host_new (const char *source)
{
  VpaHost *host = g_new0 (VpaHost, 1);
  host->source = g_strdup (source);
  host->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_free);
  host->cells = g_array_new (FALSE, TRUE, sizeof (VpaCell));
  g_array_set_clear_func (host->cells, cell_clear);
  host->claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  return host;
}

void
vpa_host_free (VpaHost *host)
{
  if (host == NULL)
    return;
  g_free (host->source);
  g_free (host->hostname);
  g_ptr_array_unref (host->devices);
  g_array_unref (host->cells);
  g_ptr_array_unref (host->claims);
  if (host->by_addr != NULL)
    g_hash_table_unref (host->by_addr);
  g_free (host);
}

void
vpa_host_add_device (VpaHost *host, VpaDevice *dev)
{
  g_return_if_fail (host != NULL && dev != NULL);
  g_ptr_array_add (host->devices, dev);
  host->sealed = FALSE;
}

void
vpa_host_add_cell (VpaHost *host, const VpaCell *cell)
{
  VpaCell copy = *cell;
  if (copy.cpus == NULL)
    copy.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  g_array_append_val (host->cells, copy);
  host->sealed = FALSE;
}

void
vpa_host_add_claim (VpaHost *host, VpaClaim *claim)
{
  g_ptr_array_add (host->claims, claim);
}

static gint
device_cmp (gconstpointer a, gconstpointer b)
{
  const VpaDevice *da = *(VpaDevice *const *) a;
  const VpaDevice *db = *(VpaDevice *const *) b;
  return da->addr < db->addr ? -1 : da->addr > db->addr;
}

static gint
cell_cmp (gconstpointer a, gconstpointer b)
{
  const VpaCell *ca = a, *cb = b;
  return ca->id < cb->id ? -1 : ca->id > cb->id;
}

gboolean
vpa_host_seal (VpaHost *host, GError **error)
{
  g_return_val_if_fail (host != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_ptr_array_sort (host->devices, device_cmp);
  g_array_sort (host->cells, cell_cmp);

  for (guint i = 1; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->id == g_array_index (host->cells, VpaCell, i - 1).id)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: NUMA cell id '%d' appears twice", host->source, c->id);
          return FALSE;
        }
    }

  if (host->by_addr != NULL)
    g_hash_table_unref (host->by_addr);
  host->by_addr = g_hash_table_new (vpa_addr_hash, vpa_addr_equal);

  for (guint i = 0; i < host->devices->len; i++)
    {
      VpaDevice *dev = vpa_host_device (host, i);
      char buf[VPA_ADDR_BUFLEN];

      if (i > 0 && vpa_host_device (host, i - 1)->addr == dev->addr)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: PCI device '%s' appears twice", host->source,
                       vpa_addr_format (dev->addr, buf));
          return FALSE;
        }
      dev->parent_index = -1;
      if (dev->vf_indices != NULL)
        g_array_set_size (dev->vf_indices, 0);
      g_hash_table_insert (host->by_addr, &dev->addr, GUINT_TO_POINTER (i + 1));
    }

  for (guint i = 0; i < host->devices->len; i++)
    {
      VpaDevice *dev = vpa_host_device (host, i);
      gint p;
      VpaDevice *pf;

      if (dev->dev_type != VPA_DEV_TYPE_VF || dev->parent_addr == VPA_ADDR_NONE)
        continue;
      p = vpa_host_lookup (host, dev->parent_addr);
      if (p < 0)
        continue;
      pf = vpa_host_device (host, (guint) p);
      if (pf->dev_type != VPA_DEV_TYPE_PF)
        continue;
      dev->parent_index = p;
      if (pf->vf_indices == NULL)
        pf->vf_indices = g_array_new (FALSE, FALSE, sizeof (guint));
      g_array_append_val (pf->vf_indices, i);
    }

  if (!vpa_pcie_seal (host, error))
    return FALSE;
  host->sealed = TRUE;
  return TRUE;
}

gint
vpa_host_lookup (const VpaHost *host, VpaAddr addr)
{
  gpointer v;

  g_return_val_if_fail (host != NULL && host->by_addr != NULL, -1);
  v = g_hash_table_lookup (host->by_addr, &addr);
  return v == NULL ? -1 : (gint) GPOINTER_TO_UINT (v) - 1;
}

const VpaCell *
vpa_host_cell (const VpaHost *host, gint id)
{
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->id == id)
        return c;
    }
  return NULL;
}

gint
vpa_host_node_socket (const VpaHost *host, gint node)
{
  const VpaCell *c = vpa_host_cell (host, node);
  return c == NULL ? VPA_SOCKET_NONE : c->socket;
}

gboolean
vpa_host_sockets_known (const VpaHost *host)
{
  if (host->cells->len == 0)
    return FALSE;
  for (guint i = 0; i < host->cells->len; i++)
    {
      if (g_array_index (host->cells, VpaCell, i).socket == VPA_SOCKET_NONE)
        return FALSE;
    }
  return TRUE;
}

guint
vpa_host_distance (const VpaHost *host, gint from, gint to)
{
  const VpaCell *c = vpa_host_cell (host, from);

  if (from == to)
    return 10;
  for (guint i = 0; c != NULL && c->distances != NULL && i < c->distances->len; i++)
    {
      const VpaDistance *d = &g_array_index (c->distances, VpaDistance, i);
      if (d->node == to)
        return d->value;
    }
  return G_MAXUINT;
}
