/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Traits follow docs/interface.md ("Commands"), not Nova: Nova defines no
 * COMPUTE_NET_NUMA_AFFINITY and its libvirt driver reports
 * COMPUTE_SOCKET_PCI_NUMA_AFFINITY unconditionally, though a host cell
 * without a socket id makes every socket request fail.
 */
#include "vpa-traits.h"

#include <string.h>

static gboolean
has_vfs (const VpaInventory *inv)
{
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      if (vpa_inventory_has (inv, i) &&
          vpa_host_device (inv->host, i)->dev_type == VPA_DEV_TYPE_VF)
        return TRUE;
    }
  return FALSE;
}

/* A [physnet]/[tunnel] group with nodes: a NUMA-aware vSwitch
 * (docs/vswitch.md). */
static gboolean
has_vswitch_affinity (const VpaConfig *config)
{
  for (guint i = 0; config != NULL && i < config->vswitch->len; i++)
    {
      if (((const VpaVswitchAffinity *) config->vswitch->pdata[i])->nodes->len > 0)
        return TRUE;
    }
  return FALSE;
}

static gint
str_ptr_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
vpa_traits_compute (const VpaInventory *inv)
{
  g_autoptr (GPtrArray) traits = g_ptr_array_new_with_free_func (g_free);

  g_return_val_if_fail (inv != NULL, NULL);

  if (has_vfs (inv) || has_vswitch_affinity (inv->config))
    g_ptr_array_add (traits, g_strdup (VPA_TRAIT_NET_NUMA_AFFINITY));
  if (vpa_host_sockets_known (inv->host))
    g_ptr_array_add (traits, g_strdup (VPA_TRAIT_SOCKET_PCI_NUMA_AFFINITY));
  g_ptr_array_sort (traits, str_ptr_cmp);
  g_ptr_array_add (traits, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&traits), FALSE);
}
