/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inventory view: which devices the device specs admit, with which
 * tag set, and which are held or blocked by the claims.
 *
 * PF/VF exclusivity follows the physical links of the host, also when
 * the relative is not in the inventory: Nova only links PFs that its
 * whitelist admits, and so hands out a VF of a PF that a guest holds.
 */
#include "vpa-inventory.h"
#include "vpa-pcie.h"
#include "vpa-enum.h"
#include "vpa-reserve-apply.h"

#include <string.h>

VPA_ENUM_TO_STRING (vpa_dev_state, VpaDevState, VPA_DEV_STATE_LAST, "free", "held", "blocked",
                    "reserved")

static void
block (VpaInventory *inv, guint i)
{
  if (inv->state[i] == VPA_DEV_STATE_FREE)
    inv->state[i] = VPA_DEV_STATE_BLOCKED;
}

static void
hold (VpaInventory *inv, guint i, const char *domain)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);

  /* the first claim names the holder; a second one is check's business */
  if (inv->held_by[i] == NULL)
    inv->held_by[i] = domain;
  inv->state[i] = VPA_DEV_STATE_HELD;

  if (dev->parent_index >= 0)
    block (inv, (guint) dev->parent_index);
  if (dev->vf_indices != NULL)
    for (guint v = 0; v < dev->vf_indices->len; v++)
      block (inv, g_array_index (dev->vf_indices, guint, v));
}

static void
apply_specs (VpaInventory *inv)
{
  const VpaHost *host = inv->host;

  inv->n_devices = 0;
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDeviceSpec *spec;

      /* Bridges (root ports, switch ports) carry the tree, never a guest. */
      if (vpa_pcie_is_bridge (vpa_host_device (host, i)))
        {
          inv->tagset[i] = -1;
          continue;
        }
      spec = vpa_config_match_device (inv->config, host, i);
      inv->tagset[i] = spec != NULL ? (gint) spec->tagset : -1;
      if (inv->tagset[i] >= 0)
        inv->n_devices++;
    }
}

VpaInventory *
vpa_inventory_new (VpaHost *host, const VpaConfig *config, GPtrArray *claims,
                   GError **error)
{
  return vpa_inventory_new_for (host, config, claims, NULL, error);
}

VpaInventory *
vpa_inventory_new_for (VpaHost *host, const VpaConfig *config, GPtrArray *claims,
                       const VpaDomain *viewer, GError **error)
{
  g_autoptr (VpaHost) owned_host = host;
  g_autoptr (GPtrArray) owned_claims = claims;
  g_autoptr (VpaInventory) inv = NULL;
  guint n;

  g_return_val_if_fail (host != NULL && config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!host->sealed && !vpa_host_seal (host, error))
    return NULL;

  n = host->devices->len;
  inv = g_new0 (VpaInventory, 1);
  inv->host = g_steal_pointer (&owned_host);
  inv->config = config;
  inv->tagset = g_new (gint, MAX (n, 1));
  inv->state = g_new0 (guint8, MAX (n, 1));
  inv->held_by = g_new0 (const char *, MAX (n, 1));
  inv->claims = owned_claims != NULL ? g_steal_pointer (&owned_claims)
                                     : g_ptr_array_ref (host->claims);
  apply_specs (inv);

  for (guint c = 0; c < inv->claims->len; c++)
    {
      const VpaClaim *claim = g_ptr_array_index (inv->claims, c);
      gint i = vpa_host_lookup (host, claim->addr);

      if (i >= 0)
        hold (inv, (guint) i, claim->domain);
    }
  vpa_reserve_apply (inv, viewer);
  return g_steal_pointer (&inv);
}

void
vpa_inventory_free (VpaInventory *inv)
{
  if (inv == NULL)
    return;
  g_free (inv->tagset);
  g_free (inv->state);
  g_free (inv->held_by);
  if (inv->claims != NULL)
    g_ptr_array_unref (inv->claims);
  vpa_host_free (inv->host);
  g_free (inv);
}

void
vpa_inventory_hold (VpaInventory *inv, guint i, const char *domain)
{
  VpaClaim *claim;

  g_return_if_fail (inv != NULL && domain != NULL);
  g_return_if_fail (i < inv->host->devices->len);

  /* held_by points into a claim, so the name lives as long as inv */
  claim = vpa_claim_new (domain, vpa_host_device (inv->host, i)->addr, FALSE);
  g_ptr_array_add (inv->claims, claim);
  hold (inv, i, claim->domain);
}

static const char *
tag_value (const VpaInventory *inv, guint i, const char *key, gboolean *present)
{
  GPtrArray *set;

  *present = FALSE;
  if (inv->tagset[i] < 0)
    return NULL;
  set = g_ptr_array_index (inv->config->tagsets, inv->tagset[i]);
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
vpa_inventory_prop (const VpaInventory *inv, guint i, const char *key)
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
vpa_inventory_spec_match (const VpaInventory *inv, guint i, const VpaSpec *spec)
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
      if (!vpa_spec_value_match (pair->value, vpa_inventory_prop (inv, i, pair->key)))
        return FALSE;
    }
  return TRUE;
}
