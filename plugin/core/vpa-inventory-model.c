/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inventory model (vpa-inventory-model.h): Nova's pool view of a
 * device and its spec match.
 */
#include "vpa-inventory-model.h"
#include "vpa-enum.h"

#include <string.h>

VPA_ENUM_TO_STRING (vpa_dev_state, VpaDevState, VPA_DEV_STATE_LAST, "free", "held", "blocked",
                    "reserved")

static const char *
tag_value (const VpaInventory *inv, guint i, const char *key, gboolean *present)
{
  GPtrArray *set;

  *present = FALSE;
  if (inv->tagset[i] < 0)
    return NULL;
  set = g_ptr_array_index (inv->tagsets, inv->tagset[i]);
  for (guint t = 0; t < set->len; t++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (set, t);
      if (strcmp (pair->key, key) == 0)
        {
          *present = TRUE;
          return pair->value;
        }
    }
  return NULL;
}

const char *
vpa_inventory_model_prop (const VpaInventory *inv, guint i, const char *key)
{
  const VpaDevice *dev;
  const char *value;
  gboolean present;

  g_return_val_if_fail (inv != NULL && key != NULL, NULL);
  g_return_val_if_fail (i < inv->host->devices->len, NULL);

  dev = vpa_host_device (inv->host, i);
  if (strcmp (key, "vendor_id") == 0)
    return dev->vendor_id;
  if (strcmp (key, "product_id") == 0)
    return dev->product_id;
  if (strcmp (key, "dev_type") == 0)
    return vpa_dev_type_to_string (dev->dev_type);
  if (strcmp (key, "numa_node") == 0)
    return NULL;
  if (strcmp (key, "parent_ifname") == 0)
    {
      /* libvirt/Nova set it only for a VF that has a netdev of its own */
      if (dev->dev_type != VPA_DEV_TYPE_VF || dev->netdev == NULL || dev->parent_index < 0)
        return NULL;
      return vpa_host_device (inv->host, (guint) dev->parent_index)->netdev;
    }
  if (strcmp (key, VPA_PROP_PF_NETDEV) == 0)
    {
      if (dev->dev_type != VPA_DEV_TYPE_VF || dev->parent_index < 0)
        return NULL;
      return vpa_host_device (inv->host, (guint) dev->parent_index)->netdev;
    }
  value = tag_value (inv, i, key, &present);
  if (present)
    return value;
  if (strcmp (key, "remote_managed") == 0 && dev->dev_type != VPA_DEV_TYPE_PCI)
    return "false";
  return NULL;
}

gboolean
vpa_inventory_model_spec_match (const VpaInventory *inv, guint i, const VpaSpec *spec)
{
  g_return_val_if_fail (inv != NULL && spec != NULL, FALSE);
  g_return_val_if_fail (i < inv->host->devices->len, FALSE);

  for (guint p = 0; p < spec->pairs->len; p++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (spec->pairs, p);

      if (strcmp (pair->key, "numa_node") == 0)
        {
          /* Nova's pool value is an int or None: a string never equals it */
          if (pair->value != NULL ||
              vpa_host_device (inv->host, i)->numa_node != VPA_NUMA_NONE)
            return FALSE;
          continue;
        }
      if (!vpa_spec_value_match (pair->value, vpa_inventory_model_prop (inv, i, pair->key)))
        return FALSE;
    }
  return TRUE;
}
