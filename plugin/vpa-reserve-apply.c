/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reserved devices in the inventory (vpa-reserve-apply.h).
 */
#include "vpa-reserve-apply.h"

#include <string.h>

gboolean
vpa_reserve_apply_load (VpaConfig *config, GError **error)
{
  VpaReserveSet *set;

  g_return_val_if_fail (config != NULL, FALSE);

  set = vpa_reserve_set_load (config->hook_state_dir, error);
  if (set == NULL)
    {
      g_prefix_error (error, "cannot check reserved devices, so none is handed out: ");
      return FALSE;
    }
  vpa_reserve_set_free (config->reservations);
  config->reservations = set;
  return TRUE;
}

/* Whether the viewer names addr among its devices. */
static gboolean
viewer_names (const VpaDomain *viewer, VpaAddr addr)
{
  for (guint i = 0; i < viewer->hostdevs->len; i++)
    {
      if (((const VpaDomainHostdev *) g_ptr_array_index (viewer->hostdevs, i))->addr == addr)
        return TRUE;
    }
  return FALSE;
}

/* A reserved device's relatives, like a held one's: a free PF of a
 * reserved VF, the free VFs of a reserved PF. */
static void
block_relatives (VpaInventory *inv, guint i)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);

  if (dev->parent_index >= 0 && inv->state[dev->parent_index] == VPA_DEV_STATE_FREE)
    inv->state[dev->parent_index] = VPA_DEV_STATE_BLOCKED;
  for (guint v = 0; dev->vf_indices != NULL && v < dev->vf_indices->len; v++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, v);
      if (inv->state[vf] == VPA_DEV_STATE_FREE)
        inv->state[vf] = VPA_DEV_STATE_BLOCKED;
    }
}

void
vpa_reserve_apply (VpaInventory *inv, const VpaDomain *viewer)
{
  const VpaReserveSet *set;

  g_return_if_fail (inv != NULL);

  set = inv->config->reservations;
  for (guint k = 0; set != NULL && k < set->items->len; k++)
    {
      const VpaReservation *r = g_ptr_array_index (set->items, k);
      gint i = vpa_host_lookup (inv->host, r->addr);

      if (i < 0)
        continue;
      if (viewer != NULL && !vpa_reserve_blocks (r, viewer->name, viewer->uuid) &&
          viewer_names (viewer, r->addr))
        continue;
      /* held by the domain that started with it: used, not reserved
       * (claims carry names only; the hook compares UUIDs as viewer) */
      if (inv->state[i] == VPA_DEV_STATE_HELD && !vpa_reserve_blocks (r, inv->held_by[i], NULL))
        continue;
      vpa_reserve_apply_one (inv, (guint) i);
    }
}

void
vpa_reserve_apply_one (VpaInventory *inv, guint i)
{
  g_return_if_fail (inv != NULL && i < inv->host->devices->len);

  inv->state[i] = VPA_DEV_STATE_RESERVED;
  block_relatives (inv, i);
}

const VpaReservation *
vpa_reserve_apply_of (const VpaInventory *inv, guint i)
{
  g_return_val_if_fail (inv != NULL && i < inv->host->devices->len, NULL);

  if (inv->state[i] != VPA_DEV_STATE_RESERVED)
    return NULL;
  return vpa_reserve_set_find (inv->config->reservations, vpa_host_device (inv->host, i)->addr);
}

GArray *
vpa_reserve_apply_wanted (const VpaConfig *config, VpaHost *host, const VpaDomain *dom,
                          GError **error)
{
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  g_return_val_if_fail (config != NULL && host != NULL && dom != NULL, NULL);

  if (!host->sealed && !vpa_host_seal (host, error))
    return NULL;
  for (guint h = 0; h < dom->hostdevs->len; h++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, h);
      gint i = hd->addr != VPA_ADDR_NONE ? vpa_host_lookup (host, hd->addr) : -1;
      const VpaDeviceSpec *spec = i >= 0 ? vpa_config_match_device (config, host, (guint) i)
                                         : NULL;

      if (spec != NULL && spec->one_time_use &&
          vpa_reserve_set_find (config->reservations, hd->addr) == NULL)
        g_array_append_val (addrs, hd->addr);
    }
  return g_steal_pointer (&addrs);
}

typedef struct {
  const VpaDomain *dom;
  const GArray *addrs;
  gint64 now;
} Record;

static gboolean
record_edit (VpaReserveSet *set, gpointer data, gboolean *changed, GError **error)
{
  const Record *rec = data;

  for (guint k = 0; k < rec->addrs->len; k++)
    {
      VpaAddr addr = g_array_index (rec->addrs, VpaAddr, k);

      /* another process may have recorded it meanwhile: the first wins */
      if (vpa_reserve_set_find (set, addr) != NULL)
        continue;
      vpa_reserve_set_put (set, vpa_reserve_item_new (addr, VPA_RESERVE_ONE_TIME_USE, rec->now,
                                                      rec->dom->name, rec->dom->uuid, NULL));
      *changed = TRUE;
    }
  if (set->items->len > VPA_RESERVE_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "%s: more than %d reservations; release some (virt-pci-affinity device list)",
                   set->path, VPA_RESERVE_MAX);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_reserve_apply_record (const VpaConfig *config, const VpaDomain *dom, const GArray *addrs,
                          gint64 now, GError **error)
{
  Record rec = { dom, addrs, now };

  g_return_val_if_fail (config != NULL && dom != NULL && addrs != NULL, FALSE);

  if (addrs->len == 0)
    return TRUE;
  if (dom->name == NULL || dom->name[0] == '\0' || strlen (dom->name) > VPA_RESERVE_DOMAIN_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "cannot record its one-time-use devices: a domain name that is empty or "
                   "longer than %d bytes",
                   VPA_RESERVE_DOMAIN_MAX);
      return FALSE;
    }
  if (!vpa_reserve_set_update (config->hook_state_dir, record_edit, &rec, error))
    {
      g_prefix_error (error, "cannot record its one-time-use devices: ");
      return FALSE;
    }
  return TRUE;
}
