/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Placing again keeps what is still good (docs/placement.md): whether an
 * already placed domain's requests keep the devices they hold or are
 * placed again, decided on the inventory (the domain's own claims
 * ignored) and the guest's nodes.
 */
#include "vpa-keep.h"

#include "vpa-policy.h"

/* The device a request unit holds now: the hostdev whose user alias is
 * the unit's (ua-vpa-NAME-N for device N of an alias), or VPA_ADDR_NONE. */
static VpaAddr
current_addr (GHashTable *by_alias, const VpaRequest *r, guint n)
{
  g_autofree char *alias = r->kind != VPA_REQUEST_ALIAS
                             ? g_strdup (r->device)
                             : g_strdup_printf (VPA_ALIAS_PREFIX "%s-%u", r->device, n);
  const VpaDomainHostdev *hd = g_hash_table_lookup (by_alias, alias);

  return hd != NULL ? hd->addr : VPA_ADDR_NONE;
}

/* Whether device idx matches one of r's specs. */
gboolean
vpa_keep_request_matches (const VpaInventory *inv, guint idx, const VpaRequest *r)
{
  for (guint i = 0; i < r->specs->len; i++)
    {
      if (vpa_inventory_model_spec_match (inv, idx, g_ptr_array_index (r->specs, i)))
        return TRUE;
    }
  return FALSE;
}

/* NULL when the unit's current device may stay: on this host, free,
 * admitted by the specs, matching the request, allowed by its policy at
 * its tier, not taken twice. Else why it must move. */
static char *
why_move (const VpaInventory *inv, const VpaGuestNodes *guest, const VpaRequest *r,
          VpaAddr addr, GHashTable *taken)
{
  char buf[VPA_ADDR_BUFLEN];
  gint idx;

  if (addr == VPA_ADDR_NONE)
    return g_strdup ("no device yet");
  vpa_addr_format (addr, buf);
  idx = vpa_host_lookup (inv->host, addr);
  if (idx < 0)
    return g_strdup_printf ("%s is not on this host", buf);
  if (inv->state[idx] == VPA_DEV_STATE_RESERVED)
    return g_strdup_printf ("%s is reserved", buf);
  if (inv->state[idx] != VPA_DEV_STATE_FREE)
    return g_strdup_printf ("%s is not free", buf);
  if (!vpa_inventory_has (inv, (guint) idx) || !vpa_keep_request_matches (inv, (guint) idx, r))
    return g_strdup_printf ("%s no longer matches", buf);
  if (!vpa_policy_allows (r->policy, inv->host, guest,
                          vpa_policy_tier (inv->host, guest,
                                           vpa_host_device (inv->host, (guint) idx)->numa_node)))
    return g_strdup_printf ("%s breaks policy %s", buf, vpa_policy_to_string (r->policy));
  if (g_hash_table_contains (taken, GINT_TO_POINTER (idx)))
    return g_strdup_printf ("%s is named twice", buf);
  return NULL;
}

/* A device kept and its relatives: a kept PF and a kept VF of it cannot
 * both be passed through. */
static gboolean
related_taken (const VpaInventory *inv, guint idx, GHashTable *taken)
{
  const VpaDevice *dev = vpa_host_device (inv->host, idx);

  if (dev->parent_index >= 0 && g_hash_table_contains (taken, GINT_TO_POINTER (dev->parent_index)))
    return TRUE;
  for (guint v = 0; dev->vf_indices != NULL && v < dev->vf_indices->len; v++)
    {
      if (g_hash_table_contains (taken, GINT_TO_POINTER (g_array_index (dev->vf_indices, guint, v))))
        return TRUE;
    }
  return FALSE;
}

void
vpa_keep_free (VpaKeep *st)
{
  if (st == NULL)
    return;
  for (guint i = 0; i < st->n; i++)
    {
      if (st->devices[i] != NULL)
        g_array_unref (st->devices[i]);
      g_free (st->why[i]);
    }
  g_free (st->keep);
  g_free (st->devices);
  g_free (st->why);
  g_free (st);
}

static gboolean keep_groups (const VpaInventory *inv, GPtrArray *requests, VpaKeep *st);
static gboolean keep_locality (const VpaInventory *inv, GPtrArray *requests, VpaKeep *st);

VpaKeep *
vpa_keep_decide (const VpaInventory *inv, const VpaDomain *dom, const VpaGuestNodes *guest,
                 GPtrArray *requests)
{
  VpaKeep *st = g_new0 (VpaKeep, 1);
  g_autoptr (GHashTable) by_alias = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) taken = g_hash_table_new (NULL, NULL);
  guint n = requests->len;

  st->n = n;
  st->keep = g_new0 (gboolean, MAX (n, 1));
  st->devices = g_new0 (GArray *, MAX (n, 1));
  st->why = g_new0 (char *, MAX (n, 1));
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      if (hd->alias != NULL && !g_hash_table_contains (by_alias, hd->alias))
        g_hash_table_insert (by_alias, hd->alias, (gpointer) hd);
    }
  for (guint i = 0; i < n; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      guint first = r->kind == VPA_REQUEST_ALIAS
                      ? GPOINTER_TO_UINT (g_hash_table_lookup (next_index, r->device))
                      : 0;
      guint count = r->kind != VPA_REQUEST_ALIAS ? 1 : r->count;
      gboolean had = FALSE;

      if (r->kind == VPA_REQUEST_ALIAS)
        g_hash_table_insert (next_index, r->device, GUINT_TO_POINTER (first + count));
      st->devices[i] = g_array_new (FALSE, FALSE, sizeof (guint));
      st->keep[i] = count > 0;
      for (guint u = 0; u < count && st->keep[i]; u++)
        {
          VpaAddr addr = current_addr (by_alias, r, first + u);
          char *why = why_move (inv, guest, r, addr, taken);
          guint idx;

          had |= addr != VPA_ADDR_NONE;
          if (why == NULL && related_taken (inv, (guint) vpa_host_lookup (inv->host, addr), taken))
            why = g_strdup ("its PF or a VF of it is kept for another request");
          if (why != NULL)
            {
              st->keep[i] = FALSE;
              if (had)
                {
                  st->why[i] = why;
                }
              else
                {
                  g_free (why);
                }
              break;
            }
          idx = (guint) vpa_host_lookup (inv->host, addr);
          g_array_append_val (st->devices[i], idx);
          g_hash_table_add (taken, GINT_TO_POINTER (idx));
        }
      if (!st->keep[i])
        {
          for (guint d = 0; d < st->devices[i]->len; d++)
            g_hash_table_remove (taken, GINT_TO_POINTER (g_array_index (st->devices[i], guint, d)));
        }
    }
  /* A request a group gives up can break another group it is in. */
  while (keep_groups (inv, requests, st) | keep_locality (inv, requests, st))
    ;
  return st;
}

/* A pf-group stays only whole and on distinct PFs. TRUE if it gave
 * up a request. */
static gboolean
keep_groups (const VpaInventory *inv, GPtrArray *requests, VpaKeep *st)
{
  gboolean changed = FALSE;

  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      g_autoptr (GHashTable) pfs = NULL;
      gboolean whole = TRUE;

      if (r->pf_group == NULL)
        continue;
      pfs = g_hash_table_new (NULL, NULL);
      for (guint j = 0; j < requests->len && whole; j++)
        {
          const VpaRequest *o = g_ptr_array_index (requests, j);
          if (g_strcmp0 (o->pf_group, r->pf_group) != 0)
            continue;
          whole = st->keep[j];
          for (guint d = 0; whole && d < st->devices[j]->len; d++)
            {
              const VpaDevice *dev = vpa_host_device (inv->host, g_array_index (st->devices[j], guint, d));
              VpaAddr pf = dev->dev_type == VPA_DEV_TYPE_VF ? dev->parent_addr : dev->addr;
              whole = g_hash_table_add (pfs, GSIZE_TO_POINTER ((gsize) pf));
            }
        }
      if (!whole && st->keep[i])
        {
          st->keep[i] = FALSE;
          st->why[i] = g_strdup_printf ("its pf-group '%s' is placed again", r->pf_group);
          changed = TRUE;
        }
    }
  return changed;
}

/* A locality group stays only whole and, when required, still met: its
 * kept devices within its level (a preferred group's devices stay, as a
 * preferred NUMA policy's do). TRUE if it gave up a request. */
static gboolean
keep_locality (const VpaInventory *inv, GPtrArray *requests, VpaKeep *st)
{
  gboolean changed = FALSE;

  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      g_autoptr (GArray) devs = NULL;
      gboolean whole = TRUE;

      if (r->locality_group == NULL || !st->keep[i])
        continue;
      devs = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint j = 0; j < requests->len && whole; j++)
        {
          const VpaRequest *o = g_ptr_array_index (requests, j);
          if (g_strcmp0 (o->locality_group, r->locality_group) != 0)
            continue;
          whole = st->keep[j];
          g_array_append_vals (devs, st->devices[j]->data, st->devices[j]->len);
        }
      if (whole && r->locality_required &&
          vpa_pcie_locality_of (inv->host, (const guint *) (void *) devs->data, devs->len) >
            r->locality_level)
        {
          st->keep[i] = FALSE;
          st->why[i] = g_strdup_printf ("its locality group '%s' is no longer within one %s",
                                        r->locality_group,
                                        vpa_locality_to_string (r->locality_level));
          changed = TRUE;
        }
      else if (!whole)
        {
          st->keep[i] = FALSE;
          st->why[i] = g_strdup_printf ("its locality group '%s' is placed again",
                                        r->locality_group);
          changed = TRUE;
        }
    }
  return changed;
}

void
vpa_keep_explain (GString *out, const VpaInventory *inv, GPtrArray *requests, const VpaKeep *st)
{
  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);

      if (st->keep[i])
        {
          g_string_append_printf (out, "%s: kept", r->label);
          for (guint d = 0; d < st->devices[i]->len; d++)
            {
              char buf[VPA_ADDR_BUFLEN];
              const VpaDevice *dev = vpa_host_device (inv->host, g_array_index (st->devices[i], guint, d));
              g_string_append_printf (out, " %s", vpa_addr_format (dev->addr, buf));
            }
          g_string_append (out, " (still free, matching and allowed by its policy)\n");
        }
      else if (st->why[i] != NULL)
        g_string_append_printf (out, "%s: placed again: %s\n", r->label, st->why[i]);
    }
}

static void
assignment_free (VpaAssignment *a)
{
  if (a->devices != NULL)
    g_array_unref (a->devices);
  g_free (a);
}

GPtrArray *
vpa_keep_merge (GPtrArray *requests, const VpaKeep *st, const VpaPlacement *placement)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) assignment_free);
  guint next = 0;

  for (guint i = 0; i < requests->len; i++)
    {
      VpaAssignment *a = g_new0 (VpaAssignment, 1);

      a->request = g_ptr_array_index (requests, i);
      if (st->keep[i])
        {
          a->devices = g_array_ref (st->devices[i]);
        }
      else
        {
          const VpaAssignment *p = g_ptr_array_index (placement->assignments, next++);
          a->devices = g_array_ref (p->devices);
        }
      g_ptr_array_add (out, a);
    }
  return out;
}
