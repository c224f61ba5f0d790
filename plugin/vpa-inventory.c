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
#include "vpa-reserve-apply.h"

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
    {
      for (guint v = 0; v < dev->vf_indices->len; v++)
        block (inv, g_array_index (dev->vf_indices, guint, v));
    }
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
  inv->tagsets = config->tagsets;
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

guint
vpa_inventory_count_unassignable (const VpaInventory *inv)
{
  guint n = 0;

  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      if (!vpa_inventory_has (inv, i))
        n++;
    }
  return n;
}
