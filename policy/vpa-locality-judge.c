/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups outside a whole placement (vpa-locality-judge.h): a
 * hot-plugged port joining a placed group, and the check of a placed
 * group.
 */
#include "vpa-locality-judge.h"

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
    {
      if (vpa_inventory_model_spec_match (inv, i, g_ptr_array_index (r->specs, s)))
        return TRUE;
    }
  return FALSE;
}

GArray *
vpa_locality_judge_excluded (const VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r)
{
  g_autoptr (GArray) m = NULL;
  VpaLocality limit = VPA_LOCALITY_SYSTEM;
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (guint));

  g_return_val_if_fail (r->locality_group != NULL, NULL);
  m = members (inv, dom, r);
  if (m->len == 0)
    return g_steal_pointer (&out);
  if (r->locality_required)
    {
      limit = r->locality_level;
    }
  else
    {
      for (guint i = 0; i < inv->host->devices->len; i++)
        {
          if (candidate (inv, r, i))
            limit = MIN (limit, with (inv, m, i));
        }
    }
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      if (candidate (inv, r, i) && with (inv, m, i) > limit)
        g_array_append_val (out, i);
    }
  return g_steal_pointer (&out);
}

VpaLocality
vpa_locality_judge_reached (const VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r,
                            guint i)
{
  g_autoptr (GArray) m = members (inv, dom, r);

  return with (inv, m, i);
}

static const char *
share_text (VpaLocality level)
{
  static const char *const texts[] = { "one switch", "one root-complex", "one numa-node",
                                       "one socket", "no socket (system)" };
  G_STATIC_ASSERT (G_N_ELEMENTS (texts) == VPA_LOCALITY_LAST);

  return level < VPA_LOCALITY_LAST ? texts[level] : "-";
}

void
vpa_locality_verdict_free (VpaLocalityVerdict *v)
{
  if (v == NULL)
    return;
  g_free (v->line);
  g_free (v);
}

VpaLocalityVerdict *
vpa_locality_judge_group (const VpaHost *host, const VpaLocalityGroupState *g,
                          const VpaLocalityGroupNow *now)
{
  VpaLocality found = vpa_pcie_locality_of (host, (const guint *) (void *) now->devices->data,
                                            now->devices->len);
  VpaLocalityVerdict *v;
  g_autofree char *head = g_strdup_printf ("locality group '%s' (level %s, policy %s): %s",
                                           g->name, vpa_locality_to_string (g->level),
                                           g->required ? "required" : "preferred",
                                           now->members);

  /* A member without its device fails on its own line; the others are
   * judged only when they are too far apart already. */
  if (now->devices->len == 0 || (now->missing > 0 && (!g->required || found <= g->level)))
    return NULL;
  v = g_new0 (VpaLocalityVerdict, 1);
  if (g->required && found > g->level)
    {
      v->refused = TRUE;
      v->line = g_strdup_printf ("%s: they share %s, farther than its level %s", head,
                                 share_text (found), vpa_locality_to_string (g->level));
    }
  else if (now->recorded >= 0 && (gint) found > now->recorded)
    {
      v->note = TRUE;
      v->line = g_strdup_printf ("%s: ok, but they share %s, farther than the %s its records "
                                 "say (a group farther than recorded but within its policy is "
                                 "reported, not refused)",
                                 head, share_text (found),
                                 vpa_locality_to_string ((VpaLocality) now->recorded));
    }
  else
    v->line = g_strdup_printf ("%s: ok, they share %s", head, share_text (found));
  return v;
}
