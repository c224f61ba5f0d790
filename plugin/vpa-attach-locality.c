/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-attach-locality.h"

#include "vpa-pcie.h"

/* The host indices of the group's placed members, then room for one. */
static GArray *
members (const VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r)
{
  GArray *idx = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *p = g_ptr_array_index (dom->placed, i);
      gint at;

      if (g_strcmp0 (p->locality_group, r->locality_group) != 0 || p->addr == VPA_ADDR_NONE ||
          g_strcmp0 (p->device, r->device) == 0)
        continue;
      if ((at = vpa_host_lookup (inv->host, p->addr)) >= 0)
        g_array_append_val (idx, at);
    }
  return idx;
}

static VpaLocality
with (const VpaInventory *inv, GArray *m, guint i)
{
  VpaLocality l;

  g_array_append_val (m, i);
  l = vpa_pcie_locality_of (inv->host, (const guint *) (void *) m->data, m->len);
  g_array_set_size (m, m->len - 1);
  return l;
}

static gboolean
candidate (const VpaInventory *inv, const VpaRequest *r, guint i)
{
  if (inv->state[i] != VPA_DEV_STATE_FREE || !vpa_inventory_has (inv, i))
    return FALSE;
  for (guint s = 0; s < r->specs->len; s++)
    if (vpa_inventory_spec_match (inv, i, g_ptr_array_index (r->specs, s)))
      return TRUE;
  return FALSE;
}

void
vpa_attach_locality_restrict (VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r)
{
  g_autoptr (GArray) m = NULL;
  VpaLocality limit = VPA_LOCALITY_SYSTEM;
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (guint));

  g_return_if_fail (r->locality_group != NULL);
  m = members (inv, dom, r);
  if (m->len == 0)
    return;
  if (r->locality_required)
    limit = r->locality_level;
  else
    for (guint i = 0; i < inv->host->devices->len; i++)
      if (candidate (inv, r, i))
        limit = MIN (limit, with (inv, m, i));
  for (guint i = 0; i < inv->host->devices->len; i++)
    if (candidate (inv, r, i) && with (inv, m, i) > limit)
      g_array_append_val (out, i);
  /* Held after the loop: holding a PF also blocks its VFs. */
  for (guint k = 0; k < out->len; k++)
    vpa_inventory_hold (inv, g_array_index (out, guint, k), "(farther than its locality group)");
}

VpaLocality
vpa_attach_locality_reached (const VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r,
                             guint i)
{
  g_autoptr (GArray) m = members (inv, dom, r);

  return with (inv, m, i);
}
