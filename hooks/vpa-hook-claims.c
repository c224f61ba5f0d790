/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-hook-claims.h"

#include <string.h>

#include "vpa-sysfs.h"
#include "vpa-statedirs.h"

gboolean
vpa_hook_claims_may_be_assigned (const VpaDevice *dev)
{
  if (dev->iommu_group < 0 || dev->driver == NULL)
    return TRUE;
  return strstr (dev->driver, "vfio") != NULL || strcmp (dev->driver, "pci-stub") == 0;
}

static void
add_bus (GArray *buses, guint bus)
{
  for (guint i = 0; i < buses->len; i++)
    {
      if (g_array_index (buses, guint, i) == bus)
        return;
    }
  g_array_append_val (buses, bus);
}

static const VpaDevice *
find (const VpaHost *a, const VpaHost *b, VpaAddr addr)
{
  gint i = a != NULL ? vpa_host_lookup (a, addr) : -1;

  if (i >= 0)
    return vpa_host_device (a, (guint) i);
  i = b != NULL ? vpa_host_lookup (b, addr) : -1;
  return i >= 0 ? vpa_host_device (b, (guint) i) : NULL;
}

/* The PCI buses of the devices of q that a running domain may hold:
 * the state files that matter mention one of them. */
static GArray *
candidate_buses (const VpaHookClaimsQuery *q, GError **error)
{
  g_autoptr (GArray) buses = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) unknown = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  g_autoptr (VpaHost) extra = NULL;

  for (guint i = 0; q->sysfs_root != NULL && i < q->n_addrs; i++)
    {
      if (q->known == NULL || vpa_host_lookup (q->known, q->addrs[i]) < 0)
        g_array_append_val (unknown, q->addrs[i]);
    }
  if (unknown->len > 0)
    {
      extra = vpa_sysfs_load_devices (q->sysfs_root, (const VpaAddr *) (gpointer) unknown->data,
                                      unknown->len, error);
      if (extra == NULL)
        return NULL;
    }
  for (guint i = 0; i < q->n_addrs; i++)
    {
      const VpaDevice *dev = q->sysfs_root != NULL ? find (q->known, extra, q->addrs[i]) : NULL;

      /* Gone from sysfs, or no sysfs: nothing tells it is free. */
      if (!q->running_only || dev == NULL || vpa_hook_claims_may_be_assigned (dev))
        add_bus (buses, VPA_ADDR_BUS (q->addrs[i]));
    }
  return g_steal_pointer (&buses);
}

GPtrArray *
vpa_hook_claims (const VpaHookClaimsQuery *q, GError **error)
{
  VpaStatedirsQuery sq = { q->state_dirs, q->exclude, NULL, 0, q->running_only, q->skipped };
  g_autoptr (GArray) buses = NULL;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (q->addrs != NULL && !q->nodes)
    {
      if ((buses = candidate_buses (q, error)) == NULL)
        return NULL;
      if (buses->len == 0)
        return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
      sq.buses = (const guint *) (gpointer) buses->data;
      sq.n_buses = buses->len;
    }
  return vpa_statedirs_query (&sq, error);
}
