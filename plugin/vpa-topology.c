/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The topology view (vpa-topology.h).
 */
#include "vpa-topology.h"

#include <fnmatch.h>
#include <string.h>

void
vpa_topology_free (VpaTopology *topo)
{
  if (topo == NULL)
    return;
  g_array_unref (topo->devices);
  g_ptr_array_unref (topo->labels);
  g_free (topo->matrix);
  g_free (topo);
}

static gboolean
matches_alias (const VpaInventory *inv, guint i, const VpaAlias *alias)
{
  for (guint s = 0; s < alias->specs->len; s++)
    {
      if (vpa_inventory_model_spec_match (inv, i, g_ptr_array_index (alias->specs, s)))
        return TRUE;
    }
  return FALSE;
}

gboolean
vpa_topology_vfs (const VpaInventory *inv, guint i, guint *free_vfs, guint *total)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);

  *free_vfs = *total = 0;
  for (guint k = 0; dev->vf_indices != NULL && k < dev->vf_indices->len; k++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, k);
      if (!vpa_inventory_has (inv, vf))
        continue;
      (*total)++;
      if (inv->state[vf] == VPA_DEV_STATE_FREE)
        (*free_vfs)++;
    }
  return *total > 0;
}

/* A PF whose VFs are in the inventory: a NIC row whether or not the PF
 * itself is assignable. */
static gboolean
is_vf_parent (const VpaInventory *inv, guint i)
{
  guint free_vfs, total;

  return vpa_topology_vfs (inv, i, &free_vfs, &total);
}

/* Rows the view can have: inventory devices and PFs of inventory VFs. */
static gboolean
is_row (const VpaInventory *inv, guint i)
{
  return vpa_inventory_has (inv, i) || is_vf_parent (inv, i);
}

/* A physical network selects the devices but VFs tagged with it and the
 * PFs of VFs tagged with it. */
static gboolean
on_physnet (const VpaInventory *inv, guint i, const char *physnet)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);

  if (dev->dev_type == VPA_DEV_TYPE_VF)
    return FALSE;
  if (vpa_inventory_has (inv, i) &&
      g_strcmp0 (vpa_inventory_model_prop (inv, i, "physical_network"), physnet) == 0)
    return TRUE;
  for (guint k = 0; dev->vf_indices != NULL && k < dev->vf_indices->len; k++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, k);
      if (vpa_inventory_has (inv, vf) &&
          g_strcmp0 (vpa_inventory_model_prop (inv, vf, "physical_network"), physnet) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Marks the devices one selector selects; their number. */
static guint
select_one (const VpaInventory *inv, const char *sel, gboolean *chosen)
{
  const VpaAlias *alias = inv->config != NULL ? vpa_config_alias (inv->config, sel) : NULL;
  gboolean glob = strchr (sel, ':') != NULL;
  guint n = 0;

  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaDevice *dev = vpa_host_device (inv->host, i);
      gboolean take;
      char buf[VPA_ADDR_BUFLEN];

      if (!is_row (inv, i))
        continue;
      if (alias != NULL)
        {
          take = vpa_inventory_has (inv, i) && matches_alias (inv, i, alias);
        }
      else if (glob)
        {
          take = fnmatch (sel, vpa_addr_format (dev->addr, buf), 0) == 0;
        }
      else
        {
          take = on_physnet (inv, i, sel);
        }
      if (take)
        {
          chosen[i] = TRUE;
          n++;
        }
    }
  return n;
}

/* GPU0 for the first device of alias GPU, NIC0 for a network device or
 * a PF of inventory VFs. */
static char *
label_of (const VpaInventory *inv, guint i, GHashTable *counters)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);
  const char *prefix =
    (dev->class_code >> 16) == 0x02 || is_vf_parent (inv, i) ? "NIC" : "DEV";
  guint n;

  for (guint a = 0; vpa_inventory_has (inv, i) && inv->config != NULL &&
                    a < inv->config->aliases->len;
       a++)
    {
      const VpaAlias *alias = g_ptr_array_index (inv->config->aliases, a);
      if (matches_alias (inv, i, alias))
        {
          prefix = alias->name;
          break;
        }
    }
  n = GPOINTER_TO_UINT (g_hash_table_lookup (counters, prefix));
  g_hash_table_insert (counters, (gpointer) prefix, GUINT_TO_POINTER (n + 1));
  return g_strdup_printf ("%s%u", prefix, n);
}

static void
choose_default (const VpaInventory *inv, gboolean *chosen)
{
  for (guint i = 0; i < inv->host->devices->len; i++)
    chosen[i] = is_row (inv, i) && vpa_host_device (inv->host, i)->dev_type != VPA_DEV_TYPE_VF;
}

GPtrArray *
vpa_topology_labels (const VpaInventory *inv)
{
  guint n = inv->host->devices->len;
  g_autofree gboolean *chosen = g_new0 (gboolean, MAX (n, 1));
  g_autoptr (GHashTable) counters = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *labels = g_ptr_array_new_full (n, g_free);

  choose_default (inv, chosen);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (labels, chosen[i] ? label_of (inv, i, counters) : NULL);
  for (guint i = 0; i < n; i++)
    {
      gint pf = vpa_host_device (inv->host, i)->parent_index;
      if (labels->pdata[i] == NULL && pf >= 0 && labels->pdata[pf] != NULL)
        labels->pdata[i] = g_strdup (labels->pdata[pf]);
    }
  return labels;
}

VpaTopology *
vpa_topology_new (const VpaInventory *inv, const char *selectors, GError **error)
{
  g_autoptr (VpaTopology) topo = g_new0 (VpaTopology, 1);
  g_autofree gboolean *chosen = g_new0 (gboolean, MAX (inv->host->devices->len, 1));
  g_autoptr (GHashTable) counters = g_hash_table_new (g_str_hash, g_str_equal);
  guint n;

  g_return_val_if_fail (inv != NULL && inv->host->sealed, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  topo->devices = g_array_new (FALSE, FALSE, sizeof (guint));
  topo->labels = g_ptr_array_new_with_free_func (g_free);
  if (selectors == NULL)
    {
      choose_default (inv, chosen);
    }
  else
    {
      g_auto (GStrv) items = g_strsplit (selectors, ",", -1);
      for (guint k = 0; items[k] != NULL; k++)
        {
          g_strstrip (items[k]);
          if (*items[k] == '\0' || select_one (inv, items[k], chosen) == 0)
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "--devices '%s': '%s' selects no device of the inventory (expected an "
                           "alias, a physical network or an address glob)",
                           selectors, items[k]);
              return NULL;
            }
        }
    }
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      if (chosen[i])
        {
          g_array_append_val (topo->devices, i);
          g_ptr_array_add (topo->labels, label_of (inv, i, counters));
        }
    }
  n = topo->devices->len;
  topo->matrix = g_new0 (guint8, MAX ((gsize) n * n, 1));
  for (guint r = 0; r < n; r++)
    {
      for (guint c = r + 1; c < n; c++)
        {
          VpaPcieDistance d = vpa_pcie_distance (inv->host, g_array_index (topo->devices, guint, r),
                                                 g_array_index (topo->devices, guint, c));
          topo->matrix[(gsize) r * n + c] = topo->matrix[(gsize) c * n + r] = (guint8) d;
        }
    }
  return g_steal_pointer (&topo);
}

char *
vpa_topology_node_cpus (const VpaHost *host, gint node)
{
  const VpaCell *cell = node >= 0 ? vpa_host_cell (host, node) : NULL;
  GString *s;

  if (cell == NULL || cell->cpus == NULL || cell->cpus->len == 0)
    return g_strdup ("-");
  s = g_string_new (NULL);
  for (guint i = 0; i < cell->cpus->len;)
    {
      guint lo = g_array_index (cell->cpus, guint, i), hi = lo;
      while (i + 1 < cell->cpus->len && g_array_index (cell->cpus, guint, i + 1) == hi + 1)
        hi = g_array_index (cell->cpus, guint, ++i);
      i++;
      if (hi == lo)
        {
          g_string_append_printf (s, "%s%u", s->len > 0 ? "," : "", lo);
        }
      else
        {
          g_string_append_printf (s, "%s%u-%u", s->len > 0 ? "," : "", lo, hi);
        }
    }
  return g_string_free (s, FALSE);
}
