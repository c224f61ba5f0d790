/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The decisions of a placement (vpa-decide.h), made once and final: the
 * pipeline hands them to the rewrite as they are.
 */
#include "vpa-decide.h"

#include <string.h>

static const VpaPortRequest *
port_of (const VpaDomain *dom, const char *device)
{
  for (guint i = 0; i < dom->ports->len; i++)
    {
      const VpaPortRequest *port = g_ptr_array_index (dom->ports, i);
      if (strcmp (port->device, device) == 0)
        return port;
    }
  return NULL;
}

/* A network port's decision names the network of the chosen VF's PF;
 * without networks, the network its record names. */
static void
decide_network (VpaDecision *dec, const VpaDomain *dom, const char *const *networks, guint idx)
{
  const VpaPortRequest *port = port_of (dom, dec->device);
  const char *net;

  if (port == NULL || port->network == NULL)
    return;
  net = networks != NULL ? networks[idx] : NULL;
  dec->network = g_strdup (net != NULL ? net : port->network);
}

/* Without the networks (the hook), a network port keeps what its
 * <vpa:placed network=...> record says, or is left to libvirt. */
static void
keep_network_decisions (const VpaDomain *dom, GPtrArray *decisions)
{
  for (guint i = 0; i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *rec = g_ptr_array_index (dom->placed, i);
      const VpaPortRequest *port = port_of (dom, rec->device);
      VpaDecision *dec;

      if (rec->network == NULL || port == NULL || port->network == NULL)
        continue;
      dec = vpa_plan_decision_new (VPA_DECISION_PORT, rec->device, 0, VPA_ADDR_NONE, rec->numa_node,
                                   rec->policy, rec->source);
      dec->network = g_strdup (port->network);
      g_ptr_array_add (decisions, dec);
    }
}

/* Request order (aliases, then ports as the document lists them), as
 * the records were written: kept network decisions go back among the
 * ports, so that re-placing a placed domain changes nothing. */
static gint
decision_rank (const VpaDomain *dom, GPtrArray *decisions, const VpaDecision *d)
{
  guint pos = 0;

  if (d->kind == VPA_DECISION_PORT)
    {
      for (guint i = 0; i < dom->ports->len; i++)
        {
          if (strcmp (((VpaPortRequest *) dom->ports->pdata[i])->device, d->device) == 0)
            return (gint) (decisions->len + i);
        }
    }
  g_ptr_array_find (decisions, d, &pos);
  return (gint) pos;
}

static void
order_decisions (const VpaDomain *dom, GPtrArray *decisions)
{
  g_autoptr (GPtrArray) sorted = g_ptr_array_new ();
  g_autofree gint *rank = g_new (gint, MAX (decisions->len, 1));

  for (guint i = 0; i < decisions->len; i++)
    rank[i] = decision_rank (dom, decisions, decisions->pdata[i]);
  /* a small insertion sort by rank: stable, and n is the domain's device count */
  for (guint i = 0; i < decisions->len; i++)
    {
      guint j = sorted->len;
      while (j > 0 && rank[GPOINTER_TO_UINT (sorted->pdata[j - 1])] > rank[i])
        j--;
      g_ptr_array_insert (sorted, (gint) j, GUINT_TO_POINTER (i));
    }
  {
    g_autofree gpointer *copy = g_memdup2 (decisions->pdata, decisions->len * sizeof (gpointer));
    for (guint i = 0; i < sorted->len; i++)
      decisions->pdata[i] = copy[GPOINTER_TO_UINT (sorted->pdata[i])];
  }
}

/* One decision per device; alias devices are numbered per alias name
 * across requests (the same alias listed twice continues N). */
static GPtrArray *
decisions_from_assignments (const VpaInventory *inv, GPtrArray *assignments,
                            const VpaDomain *dom, const char *const *networks)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_plan_decision_free);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; assignments != NULL && i < assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (assignments, i);
      const VpaRequest *r = a->request;

      for (guint j = 0; j < a->devices->len; j++)
        {
          const VpaDevice *d = vpa_host_device (inv->host, g_array_index (a->devices, guint, j));
          VpaDecision *dec = g_new0 (VpaDecision, 1);

          dec->kind = r->kind == VPA_REQUEST_PORT     ? VPA_DECISION_PORT
                      : r->kind == VPA_REQUEST_DEVICE ? VPA_DECISION_DEVICE
                                                      : VPA_DECISION_ALIAS;
          dec->device = g_strdup (r->device);
          if (r->kind == VPA_REQUEST_ALIAS)
            {
              guint n = GPOINTER_TO_UINT (g_hash_table_lookup (next_index, r->device));
              dec->index = n;
              g_hash_table_insert (next_index, r->device, GUINT_TO_POINTER (n + 1));
            }
          dec->addr = d->addr;
          dec->numa_node = d->numa_node;
          dec->policy = r->policy;
          dec->source = r->policy_source;
          dec->locality = -1;
          if (r->locality_group != NULL)
            {
              dec->locality_group = g_strdup (r->locality_group);
              dec->locality = (gint) vpa_locality_assignments_group (inv, assignments,
                                                                     r->locality_group);
            }
          if (r->kind == VPA_REQUEST_PORT)
            decide_network (dec, dom, networks, g_array_index (a->devices, guint, j));
          g_ptr_array_add (out, dec);
        }
    }
  return g_steal_pointer (&out);
}

GPtrArray *
vpa_decide (const VpaInventory *inv, GPtrArray *assignments, const VpaDomain *dom,
            const char *const *networks)
{
  GPtrArray *decisions;

  g_return_val_if_fail (inv != NULL && dom != NULL, NULL);

  decisions = decisions_from_assignments (inv, assignments, dom, networks);
  if (networks == NULL)
    {
      keep_network_decisions (dom, decisions);
      order_decisions (dom, decisions);
    }
  return decisions;
}
