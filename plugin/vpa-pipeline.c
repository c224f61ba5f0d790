/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline.h"
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-place.h"
#include "vpa-policy.h"
#include "vpa-requests.h"
#include "vpa-rewrite.h"
#include "vpa-pipeline-topology.h"

static void
guest_from_domain (const VpaDomain *dom, VpaGuestNodes *guest)
{
  guest->numa_guest = dom->numa_guest;
  guest->nodes = dom->guest_nodes != NULL ? (const gint *) (gpointer) dom->guest_nodes->data : NULL;
  guest->n_nodes = dom->guest_nodes != NULL ? dom->guest_nodes->len : 0;
}

static char *
format_nodes (const VpaGuestNodes *guest)
{
  GString *s;

  if (!guest->numa_guest)
    return g_strdup ("none (not a NUMA guest)");
  if (guest->n_nodes == 0)
    return g_strdup ("unbound");
  s = g_string_new (NULL);
  for (guint i = 0; i < guest->n_nodes; i++)
    g_string_append_printf (s, "%s%d", i > 0 ? "," : "", guest->nodes[i]);
  return g_string_free (s, FALSE);
}

static void
explain_placement (GString *out, const VpaInventory *inv, const VpaGuestNodes *guest,
                   const VpaPlacement *placement, const VpaDomain *dom, GPtrArray *nets)
{
  g_autofree char *nodes = format_nodes (guest);

  g_string_append_printf (out, "guest host nodes: %s\n", nodes);
  for (guint i = 0; i < placement->assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (placement->assignments, i);
      const VpaRequest *r = a->request;

      g_string_append_printf (out, "%s: count %u, policy %s from %s%s%s\n", r->label, r->count,
                              vpa_policy_to_string (r->policy),
                              vpa_policy_source_to_string (r->policy_source),
                              r->pf_group ? ", pf-group " : "", r->pf_group ? r->pf_group : "");
      for (guint j = 0; a->candidates != NULL && j < a->candidates->len; j++)
        {
          const VpaCandidate *c = g_ptr_array_index (a->candidates, j);
          char numa[16], sock[16];

          if (c->numa_node == VPA_NUMA_NONE)
            g_strlcpy (numa, "-", sizeof numa);
          else
            g_snprintf (numa, sizeof numa, "%d", c->numa_node);
          if (c->socket == VPA_SOCKET_NONE)
            g_strlcpy (sock, "-", sizeof sock);
          else
            g_snprintf (sock, sizeof sock, "%d", c->socket);
          g_string_append_printf (out, "  pool %s node %s socket %s free %u: %s\n", c->pool,
                                  numa, sock, c->free, c->verdict);
        }
      for (guint j = 0; a->devices != NULL && j < a->devices->len; j++)
        {
          guint idx = g_array_index (a->devices, guint, j);
          const VpaDevice *d = vpa_host_device (inv->host, idx);
          const VpaPortRequest *port = r->kind == VPA_REQUEST_PORT
                                         ? vpa_netpool_port (dom, r->device) : NULL;
          const VpaHostdevNet *net = port != NULL && port->network != NULL
                                       ? vpa_netpool_network_of (inv, nets, idx) : NULL;
          char buf[VPA_ADDR_BUFLEN];

          if (net != NULL)
            g_string_append_printf (out, "  -> network %s (node %d; libvirt picks the VF, "
                                         "counted on %s)\n",
                                    net->name, d->numa_node, vpa_addr_format (d->addr, buf));
          else
            g_string_append_printf (out, "  -> %s (node %d)\n", vpa_addr_format (d->addr, buf),
                                    d->numa_node);
        }
    }
  for (guint i = 0; placement->groups != NULL && i < placement->groups->len; i++)
    {
      const VpaGroupPlacement *g = g_ptr_array_index (placement->groups, i);

      g_string_append_printf (out, "locality group '%s': level %s, policy %s: %s, %s%s%s\n",
                              g->name, vpa_locality_to_string (g->level),
                              g->required ? "required" : "preferred",
                              vpa_locality_to_string (g->reached), g->where,
                              g->why != NULL ? ": " : "", g->why != NULL ? g->why : "");
    }
}

/* A network port's decision names the network of the chosen VF's PF;
 * without nets, the network its record names. */
static void
decide_network (VpaDecision *dec, const VpaInventory *inv, const VpaDomain *dom,
                GPtrArray *nets, guint idx)
{
  const VpaPortRequest *port = vpa_netpool_port (dom, dec->device);
  const VpaHostdevNet *net;

  if (port == NULL || port->network == NULL)
    return;
  net = vpa_netpool_network_of (inv, nets, idx);
  dec->network = g_strdup (net != NULL ? net->name : port->network);
}

/* Without the networks (the hook), a network port keeps what its
 * <vpa:placed network=...> record says, or is left to libvirt. */
static void
keep_network_decisions (const VpaDomain *dom, GPtrArray *decisions)
{
  for (guint i = 0; i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *rec = g_ptr_array_index (dom->placed, i);
      const VpaPortRequest *port = vpa_netpool_port (dom, rec->device);
      VpaDecision *dec;

      if (rec->network == NULL || port == NULL || port->network == NULL)
        continue;
      dec = vpa_decision_new (VPA_DECISION_PORT, rec->device, 0, VPA_ADDR_NONE, rec->numa_node,
                              rec->policy, rec->source);
      dec->network = g_strdup (port->network);
      g_ptr_array_add (decisions, dec);
    }
}

/* The requests placement works on: without nets, none for network ports. */
static void
drop_network_requests (GPtrArray *requests, const VpaDomain *dom)
{
  for (guint i = requests->len; i > 0; i--)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i - 1);
      const VpaPortRequest *port = r->kind == VPA_REQUEST_PORT
                                     ? vpa_netpool_port (dom, r->device) : NULL;

      if (port != NULL && port->network != NULL)
        g_ptr_array_remove_index (requests, i - 1);
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
    for (guint i = 0; i < dom->ports->len; i++)
      if (strcmp (((VpaPortRequest *) dom->ports->pdata[i])->device, d->device) == 0)
        return (gint) (decisions->len + i);
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
decisions_from_placement (const VpaInventory *inv, const VpaPlacement *placement,
                          const VpaDomain *dom, GPtrArray *nets)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_decision_free);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < placement->assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (placement->assignments, i);
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
              dec->locality = (gint) vpa_placement_group_locality (inv, placement,
                                                                   r->locality_group);
            }
          if (r->kind == VPA_REQUEST_PORT)
            decide_network (dec, inv, dom, nets, g_array_index (a->devices, guint, j));
          g_ptr_array_add (out, dec);
        }
    }
  return g_steal_pointer (&out);
}

static VpaDomain *
parse_and_bind (const VpaHost *host, const char *buf, gsize len, const char *what,
                GError **error)
{
  g_autoptr (VpaDomain) dom = vpa_domain_parse (buf, len, what, error);

  if (dom == NULL)
    return NULL;
  if (!vpa_domain_bind_nodes (dom, host, error))
    return NULL;
  return g_steal_pointer (&dom);
}

char *
vpa_pipeline_place (VpaHost *host, GPtrArray *claims, const VpaConfig *config, const char *buf,
                    gsize len, const char *what, VpaPlaceReport *report, GError **error)
{
  return vpa_pipeline_place_nets (host, claims, config, buf, len, what, NULL, report, error);
}

char *
vpa_pipeline_place_nets (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                         const char *buf, gsize len, const char *what, GPtrArray *nets,
                         VpaPlaceReport *report, GError **error)
{
  g_autoptr (VpaHost) owned = host;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaPlacement) placement = NULL;
  g_autoptr (VpaPlacement) failed = NULL;
  g_autoptr (GPtrArray) decisions = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (GArray) cells = NULL;
  VpaGuestNodes guest;
  gboolean explain;
  gsize out_len = 0;
  char *out;

  g_return_val_if_fail (host != NULL && config != NULL && buf != NULL, NULL);

  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  dom = parse_and_bind (owned, buf, len, what, error);
  if (dom == NULL)
    return NULL;
  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  if (nets == NULL)
    drop_network_requests (requests, dom);
  else if (!vpa_netpool_restrict (requests, dom, nets, error))
    return NULL;
  inv = vpa_inventory_new (g_steal_pointer (&owned), config,
                           vpa_claims_filter (claims, dom->name, FALSE), error);
  if (inv == NULL)
    return NULL;
  guest_from_domain (dom, &guest);
  explain = report != NULL && report->explain != NULL;
  /* A failure is explained too: every request's candidates and their
   * verdicts, no devices. */
  placement = vpa_place_explain (inv, requests, &guest, explain ? &failed : NULL, &local);
  if (explain && (placement != NULL || failed != NULL))
    explain_placement (report->explain, inv, &guest, placement != NULL ? placement : failed, dom,
                       nets);
  if (placement == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  decisions = decisions_from_placement (inv, placement, dom, nets);
  if (nets == NULL)
    {
      keep_network_decisions (dom, decisions);
      order_decisions (dom, decisions);
    }
  cells = vpa_pipeline_guest_cells (dom);
  out = vpa_pipeline_rewrite_placed (dom, buf, len, what, decisions, cells, report, &out_len,
                                     error);
  if (out != NULL && report != NULL)
    report->changed = out_len != len || memcmp (out, buf, len) != 0;
  return out;
}

/* ------------------------------------------------------------------ */

void
vpa_check_result_free (VpaCheckResult *res)
{
  if (res == NULL)
    return;
  g_free (res->device);
  g_free (res->line);
  g_free (res);
}

/* Why device idx is not free: which domain holds it or its relative. */
static char *
holder_of (const VpaInventory *inv, guint idx)
{
  const VpaDevice *dev = vpa_host_device (inv->host, idx);
  char buf[VPA_ADDR_BUFLEN];

  if (inv->state[idx] == VPA_DEV_STATE_HELD)
    return g_strdup_printf ("is held by domain '%s'", inv->held_by[idx]);
  if (dev->parent_index >= 0 && inv->held_by[dev->parent_index] != NULL)
    return g_strdup_printf ("is unusable: its PF %s is held by domain '%s'",
                            vpa_addr_format (vpa_host_device (inv->host, (guint) dev->parent_index)->addr, buf),
                            inv->held_by[dev->parent_index]);
  for (guint i = 0; dev->vf_indices != NULL && i < dev->vf_indices->len; i++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, i);
      if (inv->held_by[vf] != NULL)
        return g_strdup_printf ("is unusable as a whole PF: its VF %s is held by domain '%s'",
                                vpa_addr_format (vpa_host_device (inv->host, vf)->addr, buf),
                                inv->held_by[vf]);
    }
  return g_strdup ("is not free");
}

static const VpaRequest *
request_for_hostdev (GPtrArray *requests, const VpaDomainHostdev *hd, gint *alias_n)
{
  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);

      if (hd->alias == NULL)
        return NULL;
      if (r->kind != VPA_REQUEST_ALIAS && g_strcmp0 (r->device, hd->alias) == 0)
        return r;
      if (r->kind == VPA_REQUEST_ALIAS && g_str_has_prefix (hd->alias, VPA_ALIAS_PREFIX))
        {
          const char *rest = hd->alias + strlen (VPA_ALIAS_PREFIX);
          gsize n = strlen (r->device);
          if (strncmp (rest, r->device, n) == 0 && rest[n] == '-')
            {
              *alias_n = (gint) g_ascii_strtoll (rest + n + 1, NULL, 10);
              return r;
            }
        }
    }
  return NULL;
}

static gboolean
request_matches (const VpaInventory *inv, guint idx, const VpaRequest *r)
{
  for (guint i = 0; i < r->specs->len; i++)
    if (vpa_inventory_spec_match (inv, idx, g_ptr_array_index (r->specs, i)))
      return TRUE;
  return FALSE;
}

static VpaCheckResult *
check_one (const VpaInventory *inv, const VpaGuestNodes *guest, const VpaDomainHostdev *hd,
           const VpaRequest *r)
{
  VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
  g_autofree char *nodes = format_nodes (guest);
  g_autofree char *policy = NULL;
  char addr[VPA_ADDR_BUFLEN] = "-";
  char numa[16] = "-";
  gint idx;

  res->device = g_strdup (hd->alias != NULL ? hd->alias : vpa_addr_format (hd->addr, addr));
  res->addr = hd->addr;
  res->numa_node = VPA_NUMA_NONE;
  if (r != NULL)
    policy = g_strdup_printf ("policy %s from %s", vpa_policy_to_string (r->policy),
                              vpa_policy_source_to_string (r->policy_source));
  else
    policy = g_strdup ("no request");

  if (hd->addr == VPA_ADDR_NONE)
    {
      res->status = VPA_CHECK_UNPLACED;
      res->line = g_strdup_printf ("%s: no device placed yet (%s)", res->device, policy);
      return res;
    }
  vpa_addr_format (hd->addr, addr);
  idx = vpa_host_lookup (inv->host, hd->addr);
  if (idx < 0)
    {
      res->status = VPA_CHECK_MISSING;
      res->line = g_strdup_printf ("%s: device %s is not on this host (%s)", res->device, addr,
                                   policy);
      return res;
    }
  res->numa_node = vpa_host_device (inv->host, (guint) idx)->numa_node;
  if (res->numa_node != VPA_NUMA_NONE)
    g_snprintf (numa, sizeof numa, "%d", res->numa_node);

  if (inv->state[idx] != VPA_DEV_STATE_FREE)
    {
      g_autofree char *why = holder_of (inv, (guint) idx);
      res->status = VPA_CHECK_CLAIMED;
      res->line = g_strdup_printf ("%s: device %s (NUMA node %s) %s", res->device, addr, numa,
                                   why);
      return res;
    }
  if (r != NULL)
    {
      VpaTier tier = vpa_policy_tier (inv->host, guest, res->numa_node);

      if (!vpa_inventory_has (inv, (guint) idx) || !request_matches (inv, (guint) idx, r))
        {
          res->status = VPA_CHECK_POLICY;
          res->line = g_strdup_printf ("%s: device %s (NUMA node %s) does not match %s",
                                       res->device, addr, numa, r->label);
          return res;
        }
      if (!vpa_policy_allows (r->policy, inv->host, guest, tier))
        {
          res->status = VPA_CHECK_POLICY;
          res->line = g_strdup_printf ("%s: device %s on NUMA node %s breaks %s: guest host "
                                       "nodes %s",
                                       res->device, addr, numa, policy, nodes);
          return res;
        }
    }
  res->status = VPA_CHECK_OK;
  res->line = g_strdup_printf ("%s: device %s on NUMA node %s: ok (%s, guest host nodes %s)",
                               res->device, addr, numa, policy, nodes);
  return res;
}

/* A port on a hostdev network with no VF yet (a defined domain): checked
 * on a free VF of its network's PF, which all share the PF's node. */
static VpaCheckResult *
check_network_port (const VpaInventory *inv, const VpaGuestNodes *guest, const VpaRequest *r,
                    const VpaPortRequest *port, GPtrArray *nets)
{
  const VpaHostdevNet *net = vpa_netpool_find (nets, port->network);
  VpaCheckResult *res;
  char pfaddr[VPA_ADDR_BUFLEN] = "-";

  if (nets == NULL)
    {
      res = g_new0 (VpaCheckResult, 1);
      res->device = g_strdup (r->device);
      res->addr = VPA_ADDR_NONE;
      res->numa_node = VPA_NUMA_NONE;
      res->status = VPA_CHECK_OK;
      res->line = g_strdup_printf ("%s: network '%s': libvirt picks the VF when the domain "
                                   "starts, checked then", r->device, port->network);
      return res;
    }
  for (guint p = 0; net != NULL && net->active && net->pf_devs[p] != NULL; p++)
    for (guint i = 0; i < inv->host->devices->len; i++)
      {
        const VpaDevice *d = vpa_host_device (inv->host, i);
        VpaDomainHostdev hd = { (char *) r->device, d->addr, TRUE };
        g_autofree char *line = NULL;
        char vf[VPA_ADDR_BUFLEN];
        const char *rest;

        if (d->parent_index < 0 || inv->state[i] != VPA_DEV_STATE_FREE ||
            g_strcmp0 (vpa_host_device (inv->host, (guint) d->parent_index)->netdev,
                       net->pf_devs[p]) != 0 ||
            !vpa_inventory_has (inv, i) || !request_matches (inv, i, r))
          continue;
        res = check_one (inv, guest, &hd, r);
        /* "DEV: device VF on NUMA node N: ..." -> "DEV: network 'NET' (PF's VFs) on ..." */
        vpa_addr_format (d->addr, vf);
        vpa_addr_format (vpa_host_device (inv->host, (guint) d->parent_index)->addr, pfaddr);
        rest = strstr (res->line, vf);
        line = g_strdup_printf ("%s: network '%s' (VFs of PF %s)%s", r->device, net->name, pfaddr,
                                rest != NULL ? rest + strlen (vf) : "");
        g_free (res->line);
        res->line = g_steal_pointer (&line);
        res->addr = VPA_ADDR_NONE;
        return res;
      }
  res = g_new0 (VpaCheckResult, 1);
  res->device = g_strdup (r->device);
  res->addr = VPA_ADDR_NONE;
  res->numa_node = VPA_NUMA_NONE;
  res->status = net != NULL && net->active ? VPA_CHECK_CLAIMED : VPA_CHECK_MISSING;
  res->line = net != NULL && net->active
                ? g_strdup_printf ("%s: network '%s' has no free VF that matches %s", r->device,
                                   port->network, r->label)
                : g_strdup_printf ("%s: network '%s' is not an active libvirt hostdev network of "
                                   "this host", r->device, port->network);
  return res;
}

GPtrArray *
vpa_pipeline_check (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                    const VpaDomain *dom, gboolean running_only, gboolean *ok, GError **error)
{
  return vpa_pipeline_check_nets (host, claims, config, dom, NULL, running_only, ok, error);
}

GPtrArray *
vpa_pipeline_check_nets (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                         const VpaDomain *dom, GPtrArray *nets, gboolean running_only,
                         gboolean *ok, GError **error)
{
  g_autoptr (VpaHost) owned = host;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (GPtrArray) results = NULL;
  g_autoptr (GHashTable) seen = NULL;
  VpaGuestNodes guest;

  g_return_val_if_fail (host != NULL && config != NULL && dom != NULL && ok != NULL, NULL);

  *ok = TRUE;
  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  if (!vpa_domain_bind_nodes ((VpaDomain *) dom, owned, error))
    return NULL;
  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  /* Other domains' claims (running ones only for a start), with PF/VF
   * exclusivity: a VF whose PF another domain holds is not ours either. */
  inv = vpa_inventory_new (g_steal_pointer (&owned), config,
                           vpa_claims_filter (claims, dom->name, running_only), error);
  if (inv == NULL)
    return NULL;
  guest_from_domain (dom, &guest);

  results = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_check_result_free);
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      gint n = -1;
      const VpaRequest *r = request_for_hostdev (requests, hd, &n);
      VpaCheckResult *res = check_one (inv, &guest, hd, r);

      if (r != NULL && r->kind != VPA_REQUEST_ALIAS)
        g_hash_table_add (seen, r->device);
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  /* A port whose device element is gone is a broken request too. */
  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      const VpaPortRequest *port;
      if (r->kind == VPA_REQUEST_ALIAS || g_hash_table_contains (seen, r->device))
        continue;
      port = r->kind == VPA_REQUEST_PORT ? vpa_netpool_port (dom, r->device) : NULL;
      if (port != NULL && port->network != NULL)
        {
          VpaCheckResult *nres = check_network_port (inv, &guest, r, port, nets);
          if (nres->status != VPA_CHECK_OK)
            *ok = FALSE;
          g_ptr_array_add (results, nres);
          continue;
        }
      VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
      res->device = g_strdup (r->device);
      res->addr = VPA_ADDR_NONE;
      res->numa_node = VPA_NUMA_NONE;
      res->status = VPA_CHECK_UNPLACED;
      res->line = g_strdup_printf ("%s: no device element with this alias", r->label);
      *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  return g_steal_pointer (&results);
}

/* ------------------------------------------------------------------ */

char *
vpa_pipeline_attach_port (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                          VpaDomain *dom, const char *alias, const char *physnet,
                          const VpaPolicy *policy, VpaAddr *out_addr, GError **error)
{
  g_autoptr (VpaHost) owned = host;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (GPtrArray) mine = g_ptr_array_new ();
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaPlacement) placement = NULL;
  VpaPortRequest *port;
  const VpaAssignment *a;
  const VpaDevice *dev;
  VpaGuestNodes guest;
  char addr[VPA_ADDR_BUFLEN];
  g_autofree char *guest_addr = NULL;
  g_autofree char *head = NULL;

  g_return_val_if_fail (host != NULL && dom != NULL && alias != NULL, NULL);

  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      if (g_strcmp0 (hd->alias, alias) == 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "attach: domain '%s' already has a device with alias '%s'", dom->name,
                       alias);
          return NULL;
        }
    }
  if (!g_str_has_prefix (alias, "ua-"))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --port '%s': a libvirt user alias must start with 'ua-'", alias);
      return NULL;
    }
  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  if (!vpa_domain_bind_nodes (dom, owned, error))
    return NULL;

  port = g_new0 (VpaPortRequest, 1);
  port->device = g_strdup (alias);
  port->physnet = g_strdup (physnet);
  port->trusted = -1;
  port->has_policy = policy != NULL;
  port->policy = policy != NULL ? *policy : VPA_POLICY_LEGACY;
  g_ptr_array_add (dom->ports, port);

  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  g_ptr_array_add (mine, g_ptr_array_index (requests, requests->len - 1));

  /* The domain's own devices stay held: only the new port moves. */
  inv = vpa_inventory_new (g_steal_pointer (&owned), config,
                           vpa_claims_filter (claims, NULL, FALSE), error);
  if (inv == NULL)
    return NULL;
  guest_from_domain (dom, &guest);
  placement = vpa_place (inv, mine, &guest, error);
  if (placement == NULL)
    return NULL;
  a = g_ptr_array_index (placement->assignments, 0);
  dev = vpa_host_device (inv->host, g_array_index (a->devices, guint, 0));
  *out_addr = dev->addr;
  vpa_addr_format (dev->addr, addr);
  if (!vpa_pipeline_attach_guest_address (dom, alias, dev, &guest_addr, error))
    return NULL;
  head = g_markup_printf_escaped (
    "<interface type='hostdev' managed='yes'>\n"
    "  <source>\n"
    "    <address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>\n"
    "  </source>\n"
    "  <alias name='%s'/>\n",
    VPA_ADDR_DOMAIN (dev->addr), VPA_ADDR_BUS (dev->addr), VPA_ADDR_SLOT (dev->addr),
    VPA_ADDR_FUNCTION (dev->addr), alias);
  return g_strconcat (head, guest_addr != NULL ? guest_addr : "", "</interface>\n", NULL);
}
