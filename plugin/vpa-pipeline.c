/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline.h"
#include "vpa-pipeline-private.h"
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-place.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pipeline-locality.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-attach-locality.h"
#include "vpa-locality-rows.h"
#include "vpa-policy.h"
#include "vpa-requests.h"
#include "vpa-rewrite.h"
#include "vpa-xml.h"
#include "vpa-pipeline-distances.h"
#include "vpa-pipeline-hole64.h"
#include "vpa-pipeline-topology.h"
#include "vpa-reserve-apply.h"

void
vpa_pipeline_guest_from_domain (const VpaDomain *dom, VpaGuestNodes *guest)
{
  guest->numa_guest = dom->numa_guest;
  guest->nodes = dom->guest_nodes != NULL ? (const gint *) (gpointer) dom->guest_nodes->data : NULL;
  guest->n_nodes = dom->guest_nodes != NULL ? dom->guest_nodes->len : 0;
}

char *
vpa_pipeline_format_nodes (const VpaGuestNodes *guest)
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
  g_autofree char *nodes = vpa_pipeline_format_nodes (guest);

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
                                         ? vpa_netpool_port (dom, r->device)
                                         : NULL;
          const VpaHostdevNet *net = port != NULL && port->network != NULL
                                       ? vpa_netpool_network_of (inv, nets, idx)
                                       : NULL;
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
      g_autofree char *rows = vpa_locality_rows (inv, g->devices);

      g_string_append_printf (out, "locality group '%s': level %s, policy %s: %s, %s%s%s\n",
                              g->name, vpa_locality_to_string (g->level),
                              g->required ? "required" : "preferred",
                              vpa_locality_to_string (g->reached), g->where,
                              g->why != NULL ? ": " : "", g->why != NULL ? g->why : "");
      g_string_append_printf (out, "  topology rows: %s\n", rows);
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
                                     ? vpa_netpool_port (dom, r->device)
                                     : NULL;

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
decisions_from_assignments (const VpaInventory *inv, GPtrArray *assignments,
                            const VpaDomain *dom, GPtrArray *nets)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_decision_free);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < assignments->len; i++)
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
              dec->locality = (gint) vpa_assignments_group_locality (inv, assignments,
                                                                     r->locality_group);
            }
          if (r->kind == VPA_REQUEST_PORT)
            decide_network (dec, inv, dom, nets, g_array_index (a->devices, guint, j));
          g_ptr_array_add (out, dec);
        }
    }
  return g_steal_pointer (&out);
}

/* Without a device spec nothing is assignable (Nova's empty whitelist):
 * say that rather than "no device matches" for every request. */
gboolean
vpa_pipeline_config_admits_devices (const VpaConfig *config, GPtrArray *requests, GError **error)
{
  if (requests->len == 0 || config->device_specs->len > 0)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
               "%s: no device is assignable: the configuration has no [device-spec NAME] "
               "group (add one per set of devices to pass through)",
               config->path);
  return FALSE;
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

/* ------------------------------------------------------------------ */
/* Placing again: keep what is still good                              */
/* ------------------------------------------------------------------ */

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
vpa_pipeline_request_matches (const VpaInventory *inv, guint idx, const VpaRequest *r)
{
  for (guint i = 0; i < r->specs->len; i++)
    if (vpa_inventory_spec_match (inv, idx, g_ptr_array_index (r->specs, i)))
      return TRUE;
  return FALSE;
}

/* Whether a device element with user alias belongs to a request (a
 * port's or <vpa:device>'s device, a flavor alias's ua-vpa-NAME-N). */
static gboolean
alias_requested (GPtrArray *requests, const char *alias)
{
  if (alias == NULL)
    return FALSE;
  if (g_str_has_prefix (alias, VPA_ALIAS_PREFIX))
    return TRUE;
  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      if (r->kind != VPA_REQUEST_ALIAS && g_strcmp0 (r->device, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

/* The domain's own devices that no request names (a plain <hostdev>)
 * stay its own: never handed to one of its requests. */
static void
hold_unrequested (VpaInventory *inv, const VpaDomain *dom, GPtrArray *requests)
{
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      gint idx;

      if (hd->addr == VPA_ADDR_NONE || alias_requested (requests, hd->alias))
        continue;
      idx = vpa_host_lookup (inv->host, hd->addr);
      if (idx >= 0)
        vpa_inventory_hold (inv, (guint) idx, dom->name != NULL ? dom->name : "(this domain)");
    }
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
  if (!vpa_inventory_has (inv, (guint) idx) || !vpa_pipeline_request_matches (inv, (guint) idx, r))
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
    if (g_hash_table_contains (taken, GINT_TO_POINTER (g_array_index (dev->vf_indices, guint, v))))
      return TRUE;
  return FALSE;
}

typedef struct {
  gboolean *keep;   /* per request */
  GArray **devices; /* per request: kept inventory indices */
  char **why;       /* per request: why it moves (NULL if kept or new) */
} Sticky;

static void
sticky_clear (Sticky *st, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      if (st->devices[i] != NULL)
        g_array_unref (st->devices[i]);
      g_free (st->why[i]);
    }
  g_free (st->keep);
  g_free (st->devices);
  g_free (st->why);
}

static gboolean sticky_groups (const VpaInventory *inv, GPtrArray *requests, Sticky *st);
static gboolean sticky_locality (const VpaInventory *inv, GPtrArray *requests, Sticky *st);

/* Decides, request by request, what stays: a request keeps its devices
 * when every unit's device may stay; a pf-group only as a whole, on
 * distinct PFs. */
static void
sticky_decide (const VpaInventory *inv, const VpaDomain *dom, const VpaGuestNodes *guest,
               GPtrArray *requests, Sticky *st)
{
  g_autoptr (GHashTable) by_alias = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) taken = g_hash_table_new (NULL, NULL);
  guint n = requests->len;

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
                st->why[i] = why;
              else
                g_free (why);
              break;
            }
          idx = (guint) vpa_host_lookup (inv->host, addr);
          g_array_append_val (st->devices[i], idx);
          g_hash_table_add (taken, GINT_TO_POINTER (idx));
        }
      if (!st->keep[i])
        for (guint d = 0; d < st->devices[i]->len; d++)
          g_hash_table_remove (taken, GINT_TO_POINTER (g_array_index (st->devices[i], guint, d)));
    }
  /* A request a group gives up can break another group it is in. */
  while (sticky_groups (inv, requests, st) | sticky_locality (inv, requests, st))
    ;
}

/* A pf-group stays only whole and on distinct PFs. TRUE if it gave
 * up a request. */
static gboolean
sticky_groups (const VpaInventory *inv, GPtrArray *requests, Sticky *st)
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
sticky_locality (const VpaInventory *inv, GPtrArray *requests, Sticky *st)
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

static void
explain_sticky (GString *out, const VpaInventory *inv, GPtrArray *requests, const Sticky *st)
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

/* The kept requests' devices and the new placement's, in request order. */
static GPtrArray *
merge_assignments (GPtrArray *requests, const Sticky *st, const VpaPlacement *placement)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) assignment_free);
  guint next = 0;

  for (guint i = 0; i < requests->len; i++)
    {
      VpaAssignment *a = g_new0 (VpaAssignment, 1);

      a->request = g_ptr_array_index (requests, i);
      if (st->keep[i])
        a->devices = g_array_ref (st->devices[i]);
      else
        {
          const VpaAssignment *p = g_ptr_array_index (placement->assignments, next++);
          a->devices = g_array_ref (p->devices);
        }
      g_ptr_array_add (out, a);
    }
  return out;
}

/* out, our rewrite of buf, may pass the bounds buf was within by what
 * the rewrites added: *grown. */
static const VpaXmlGrowth *
grown_since (const char *buf, gsize len, const char *out, gsize out_len, VpaXmlGrowth *grown)
{
  vpa_xml_growth (buf, len, out, out_len, grown);
  return grown;
}

/* <vpa:numa placement="auto">: the fit chooses the nodes, then the
 * devices and the binding are written. */
static char *
place_numa (const VpaDomain *dom, const VpaInventory *inv, const VpaConfig *config,
            GPtrArray *claims, GPtrArray *requests, const char *buf, gsize len, const char *what,
            GPtrArray *nets, VpaPlaceReport *report, GError **error)
{
  g_autoptr (VpaNumaResult) res = NULL;
  g_autoptr (GPtrArray) decisions = NULL;
  g_autofree char *mid = NULL;
  g_autofree guint *ids = NULL;
  g_autofree gint *nodes = NULL;
  g_autoptr (GPtrArray) owner = NULL;
  g_autoptr (GArray) cells = NULL;
  GString *explain = report != NULL ? report->explain : NULL;
  VpaGuestNodes guest;
  VpaXmlGrowth grown;
  gsize mid_len = 0, out_len = 0;
  char *out;

  res = vpa_pipeline_numa_fit (dom, inv, config, claims, requests, explain, error);
  if (res == NULL)
    return NULL;
  guest.numa_guest = TRUE;
  guest.nodes = (const gint *) (gpointer) res->nodes->data;
  guest.n_nodes = res->nodes->len;
  if (res->fit->placement != NULL)
    {
      if (explain != NULL)
        explain_placement (explain, inv, &guest, res->fit->placement, dom, nets);
      decisions = decisions_from_assignments (inv, res->fit->placement->assignments, dom, nets);
    }
  else
    decisions = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_decision_free);
  if (nets == NULL)
    {
      keep_network_decisions (dom, decisions);
      order_decisions (dom, decisions);
    }
  /* The devices, and their guest PCI layout (<vpa:guest-numa>) on the
   * cells' chosen nodes. */
  ids = g_new (guint, MAX (res->fit->bindings->len, 1));
  nodes = g_new (gint, MAX (res->fit->bindings->len, 1));
  for (guint i = 0; i < res->fit->bindings->len; i++)
    {
      ids[i] = g_array_index (res->fit->bindings, VpaCellBinding, i).cell;
      nodes[i] = g_array_index (res->fit->bindings, VpaCellBinding, i).node;
    }
  cells = vpa_pipeline_guest_cells_of (ids, nodes, res->fit->bindings->len, &owner);
  mid = vpa_pipeline_rewrite_placed (dom, config, buf, len, what, decisions, cells, report, &mid_len,
                                     error);
  if (mid == NULL)
    return NULL;
  out = vpa_pipeline_rewrite_binding (buf, len, mid, mid_len, what, &res->binding, &out_len,
                                      error);
  if (out != NULL)
    out = vpa_pipeline_rewrite_hole64 (dom, inv->host, decisions, cells, out, &out_len, what,
                                       report, grown_since (buf, len, out, out_len, &grown),
                                       error);
  if (out != NULL)
    out = vpa_pipeline_rewrite_distances (dom, inv->host, cells, out, &out_len, what, report,
                                          grown_since (buf, len, out, out_len, &grown), error);
  if (out != NULL && report != NULL)
    report->changed = out_len != len || memcmp (out, buf, len) != 0;
  return out;
}

/* keep_only: something must be placed. */
static char *
must_move (VpaPlaceReport *report, const char *why, GError **error)
{
  report->must_move = TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "not kept: %s", why);
  return NULL;
}

char *
vpa_pipeline_place (VpaHost *host, GPtrArray *claims, const VpaConfig *config, const char *buf,
                    gsize len, const char *what, VpaPlaceReport *report, GError **error)
{
  return vpa_pipeline_place_nets (host, claims, config, buf, len, what, NULL, report, error);
}

static char *place_domain (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                           VpaDomain *parsed, const char *buf, gsize len, const char *what,
                           GPtrArray *nets, VpaPlaceReport *report, GError **error);

char *
vpa_pipeline_place_parsed (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                           VpaDomain *dom, const char *buf, gsize len, const char *what,
                           VpaPlaceReport *report, GError **error)
{
  g_return_val_if_fail (dom != NULL, NULL);
  return place_domain (host, claims, config, dom, buf, len, what, NULL, report, error);
}

char *
vpa_pipeline_place_nets (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                         const char *buf, gsize len, const char *what, GPtrArray *nets,
                         VpaPlaceReport *report, GError **error)
{
  return place_domain (host, claims, config, NULL, buf, len, what, nets, report, error);
}

/* parsed: buf's domain (transfer full), or NULL to parse it here. */
static char *
place_domain (VpaHost *host, GPtrArray *claims, const VpaConfig *config, VpaDomain *parsed,
              const char *buf, gsize len, const char *what, GPtrArray *nets,
              VpaPlaceReport *report, GError **error)
{
  g_autoptr (VpaHost) owned = host;
  g_autoptr (VpaDomain) dom = parsed;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaPlacement) placement = NULL;
  g_autoptr (VpaPlacement) failed = NULL;
  g_autoptr (GPtrArray) decisions = NULL;
  g_autoptr (GPtrArray) rest = NULL;
  g_autoptr (GPtrArray) assignments = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (GArray) cells = NULL;
  VpaGuestNodes guest;
  Sticky st = { NULL, NULL, NULL };
  VpaXmlGrowth grown;
  gboolean explain;
  gsize out_len = 0;
  char *out;

  g_return_val_if_fail (host != NULL && config != NULL && buf != NULL, NULL);

  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  if (dom == NULL)
    dom = parse_and_bind (owned, buf, len, what, error);
  else if (!vpa_domain_bind_nodes (dom, owned, error))
    return NULL;
  if (dom == NULL)
    return NULL;
  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  if (nets == NULL)
    drop_network_requests (requests, dom);
  else if (!vpa_netpool_restrict (requests, dom, nets, error))
    return NULL;
  inv = vpa_inventory_new_for (g_steal_pointer (&owned), config,
                               vpa_claims_filter (claims, dom->name, FALSE), dom, error);
  if (inv == NULL)
    return NULL;
  hold_unrequested (inv, dom, requests);
  if (!vpa_pipeline_config_admits_devices (config, requests, error))
    return NULL;
  if (dom->numa_auto && report != NULL && report->keep_only)
    return must_move (report, "placement='auto' fits the guest again", error);
  if (dom->numa_auto)
    return place_numa (dom, inv, config, claims, requests, buf, len, what, nets, report, error);
  vpa_pipeline_guest_from_domain (dom, &guest);
  explain = report != NULL && report->explain != NULL;
  /* Placing again keeps what is still good; only the rest is placed,
   * around the kept devices. */
  sticky_decide (inv, dom, &guest, requests, &st);
  rest = g_ptr_array_new ();
  for (guint i = 0; report != NULL && report->keep_only && i < requests->len; i++)
    if (!st.keep[i])
      {
        sticky_clear (&st, requests->len);
        return must_move (report, "a request is placed again", error);
      }
  for (guint i = 0; i < requests->len; i++)
    if (st.keep[i])
      for (guint d = 0; d < st.devices[i]->len; d++)
        vpa_inventory_hold (inv, g_array_index (st.devices[i], guint, d),
                            dom->name != NULL ? dom->name : "(this domain)");
    else
      g_ptr_array_add (rest, g_ptr_array_index (requests, i));
  if (explain)
    explain_sticky (report->explain, inv, requests, &st);
  /* A failure is explained too: every request's candidates and their
   * verdicts, no devices. */
  placement = vpa_place_explain (inv, rest, &guest, explain ? &failed : NULL, &local);
  if (explain && (placement != NULL || failed != NULL))
    explain_placement (report->explain, inv, &guest, placement != NULL ? placement : failed, dom,
                       nets);
  if (placement == NULL)
    {
      sticky_clear (&st, requests->len);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  assignments = merge_assignments (requests, &st, placement);
  sticky_clear (&st, requests->len);
  decisions = decisions_from_assignments (inv, assignments, dom, nets);
  if (nets == NULL)
    {
      keep_network_decisions (dom, decisions);
      order_decisions (dom, decisions);
    }
  cells = vpa_pipeline_guest_cells (dom);
  out = vpa_pipeline_rewrite_placed (dom, config, buf, len, what, decisions, cells, report, &out_len,
                                     error);
  if (out != NULL)
    out = vpa_pipeline_rewrite_hole64 (dom, inv->host, decisions, cells, out, &out_len, what,
                                       report, grown_since (buf, len, out, out_len, &grown),
                                       error);
  if (out != NULL)
    out = vpa_pipeline_rewrite_distances (dom, inv->host, cells, out, &out_len, what, report,
                                          grown_since (buf, len, out, out_len, &grown), error);
  if (out != NULL && report != NULL)
    report->changed = out_len != len || memcmp (out, buf, len) != 0;
  return out;
}
