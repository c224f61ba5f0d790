/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline.h"
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-place.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pipeline-locality.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-attach-locality.h"
#include "vpa-policy.h"
#include "vpa-requests.h"
#include "vpa-rewrite.h"
#include "vpa-xml.h"
#include "vpa-pipeline-distances.h"
#include "vpa-pipeline-hole64.h"
#include "vpa-pipeline-topology.h"
#include "vpa-reserve-apply.h"

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

      g_string_append_printf (out, "locality group '%s': level %s, policy %s: %s, %s%s%s\n",
                              g->name, vpa_locality_to_string (g->level),
                              g->required ? "required" : "preferred",
                              vpa_locality_to_string (g->reached), g->where,
                              g->why != NULL ? ": " : "", g->why != NULL ? g->why : "");
      if (g->rows != NULL)
        g_string_append_printf (out, "  topology rows: %s\n", g->rows);
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
static gboolean
config_admits_devices (const VpaConfig *config, GPtrArray *requests, GError **error)
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

static gboolean request_matches (const VpaInventory *inv, guint idx, const VpaRequest *r);

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
  if (!vpa_inventory_has (inv, (guint) idx) || !request_matches (inv, (guint) idx, r))
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
  if (!config_admits_devices (config, requests, error))
    return NULL;
  if (dom->numa_auto && report != NULL && report->keep_only)
    return must_move (report, "placement='auto' fits the guest again", error);
  if (dom->numa_auto)
    return place_numa (dom, inv, config, claims, requests, buf, len, what, nets, report, error);
  guest_from_domain (dom, &guest);
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
  if (dev->parent_index >= 0 && inv->state[dev->parent_index] == VPA_DEV_STATE_RESERVED)
    return g_strdup_printf ("is unusable: its PF %s is reserved",
                            vpa_addr_format (vpa_host_device (inv->host, (guint) dev->parent_index)->addr, buf));
  if (dev->parent_index >= 0 && inv->held_by[dev->parent_index] != NULL)
    return g_strdup_printf ("is unusable: its PF %s is held by domain '%s'",
                            vpa_addr_format (vpa_host_device (inv->host, (guint) dev->parent_index)->addr, buf),
                            inv->held_by[dev->parent_index]);
  for (guint i = 0; dev->vf_indices != NULL && i < dev->vf_indices->len; i++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, i);
      if (inv->state[vf] == VPA_DEV_STATE_RESERVED)
        return g_strdup_printf ("is unusable as a whole PF: its VF %s is reserved",
                                vpa_addr_format (vpa_host_device (inv->host, vf)->addr, buf));
      if (inv->held_by[vf] != NULL)
        return g_strdup_printf ("is unusable as a whole PF: its VF %s is held by domain '%s'",
                                vpa_addr_format (vpa_host_device (inv->host, vf)->addr, buf),
                                inv->held_by[vf]);
    }
  return g_strdup ("is not free");
}

/* One unit of a request: a port, or device N of an alias. Every unit
 * must be filled by the hostdev whose user alias is exactly its key. */
typedef struct {
  const VpaRequest *request;
  guint index; /* device number of an alias (ua-vpa-NAME-N) */
  gboolean filled;
} RequestUnit;

/* Full user alias -> RequestUnit*: a port by its device, alias units as
 * ua-vpa-NAME-N numbered per alias name across requests (the numbering
 * the rewrite writes). Exact keys: aliases 'a' and 'a-b' never meet. */
static GHashTable *
index_request_units (GPtrArray *requests, GPtrArray *order)
{
  GHashTable *units = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      guint n = r->kind == VPA_REQUEST_ALIAS
                  ? GPOINTER_TO_UINT (g_hash_table_lookup (next_index, r->device))
                  : 0;
      guint count = r->kind != VPA_REQUEST_ALIAS ? 1 : r->count;

      for (guint j = 0; j < count; j++)
        {
          RequestUnit *u = g_new0 (RequestUnit, 1);
          char *key = r->kind != VPA_REQUEST_ALIAS
                        ? g_strdup (r->device)
                        : g_strdup_printf (VPA_ALIAS_PREFIX "%s-%u", r->device, n + j);

          u->request = r;
          u->index = n + j;
          if (g_hash_table_contains (units, key))
            {
              g_free (key);
              g_free (u);
              continue;
            }
          g_hash_table_insert (units, key, u);
          g_ptr_array_add (order, u);
        }
      if (r->kind == VPA_REQUEST_ALIAS)
        g_hash_table_insert (next_index, r->device, GUINT_TO_POINTER (n + count));
    }
  return units;
}

/* The line for a unit no hostdev fills. */
static char *
unfilled_line (const RequestUnit *u)
{
  const VpaRequest *r = u->request;

  if (r->kind != VPA_REQUEST_ALIAS)
    return g_strdup_printf ("%s: no device element with this alias", r->label);
  return g_strdup_printf ("%s: no device element has the user alias '" VPA_ALIAS_PREFIX
                          "%s-%u' (the flavor asks for %s:%u)",
                          r->label, r->device, u->index, r->device, r->count);
}

static gboolean
request_matches (const VpaInventory *inv, guint idx, const VpaRequest *r)
{
  for (guint i = 0; i < r->specs->len; i++)
    if (vpa_inventory_spec_match (inv, idx, g_ptr_array_index (r->specs, i)))
      return TRUE;
  return FALSE;
}

/* Adds one problem to the device's line; the first one sets the status. */
static void
add_problem (VpaCheckResult *res, GString *problems, VpaCheckStatus status, char *text)
{
  if (res->status == VPA_CHECK_OK)
    res->status = status;
  g_string_append_printf (problems, "%s%s", problems->len > 0 ? "; " : "", text);
  g_free (text);
}

static VpaCheckResult *
check_one (const VpaInventory *inv, const VpaGuestNodes *guest, const VpaDomainHostdev *hd,
           const VpaRequest *r)
{
  VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
  g_autofree char *nodes = format_nodes (guest);
  g_autofree char *policy = NULL;
  g_autoptr (GString) problems = g_string_new (NULL);
  char addr[VPA_ADDR_BUFLEN] = "-";
  char numa[16] = "-";
  gint idx;

  res->device = g_strdup (hd->alias != NULL ? hd->alias : vpa_addr_format (hd->addr, addr));
  res->addr = hd->addr;
  res->numa_node = VPA_NUMA_NONE;
  res->status = VPA_CHECK_OK;
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

  /* Every problem of the device, not only the first. */
  if (inv->state[idx] == VPA_DEV_STATE_RESERVED)
    add_problem (res, problems, VPA_CHECK_RESERVED,
                 vpa_reserve_describe (vpa_reserve_apply_of (inv, (guint) idx)));
  else if (inv->state[idx] != VPA_DEV_STATE_FREE)
    add_problem (res, problems, VPA_CHECK_CLAIMED, holder_of (inv, (guint) idx));
  if (r != NULL && (!vpa_inventory_has (inv, (guint) idx) || !request_matches (inv, (guint) idx, r)))
    add_problem (res, problems, VPA_CHECK_POLICY, g_strdup_printf ("does not match %s", r->label));
  else if (r != NULL &&
           !vpa_policy_allows (r->policy, inv->host, guest,
                               vpa_policy_tier (inv->host, guest, res->numa_node)))
    add_problem (res, problems, VPA_CHECK_POLICY,
                 g_strdup_printf ("breaks %s: guest host nodes %s", policy, nodes));
  if (res->status != VPA_CHECK_OK)
    {
      res->line = g_strdup_printf ("%s: device %s on NUMA node %s %s", res->device, addr, numa,
                                   problems->str);
      return res;
    }
  res->line = g_strdup_printf ("%s: device %s on NUMA node %s: ok (%s, guest host nodes %s)",
                               res->device, addr, numa, policy, nodes);
  return res;
}

/* The domain (other than self) that pins cpu, dedicated or in any
 * other form (docs/placement.md, "Claims of CPUs and memory"), or NULL. */
static const char *
cpu_holder (GPtrArray *others, guint cpu)
{
  for (guint i = 0; others != NULL && i < others->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (others, i);
      if (c->numa != NULL && vpa_numa_use_holds (c->numa, cpu))
        return c->domain;
    }
  return NULL;
}

static gboolean
cell_has_cpu (const VpaCell *cell, guint cpu)
{
  for (guint i = 0; i < cell->cpus->len; i++)
    if (g_array_index (cell->cpus, guint, i) == cpu)
      return TRUE;
  return FALSE;
}

/* FALSE with res's line when cpu (whose: "dedicated" or "the
 * emulator's dedicated") is not on the cell's node or another domain
 * pins it. */
static gboolean
check_cell_cpu (VpaCheckResult *res, const VpaCell *cell, GPtrArray *others,
                const VpaPlacedCell *pc, guint cpu, const char *whose)
{
  const char *holder = cpu_holder (others, cpu);

  if (!cell_has_cpu (cell, cpu))
    {
      res->status = VPA_CHECK_POLICY;
      res->line = g_strdup_printf ("guest cell %u: CPU %u is not on host node %d", pc->cell, cpu, pc->node);
      return FALSE;
    }
  if (holder != NULL)
    {
      res->status = VPA_CHECK_CLAIMED;
      res->line = g_strdup_printf ("guest cell %u: %s CPU %u on host node %d is pinned by domain '%s'", pc->cell, whose, cpu, pc->node, holder);
      return FALSE;
    }
  return TRUE;
}

/* One line per recorded guest cell: its node is on this host, and (a
 * dedicated guest) each of its CPUs, and the emulator's of
 * emulator-threads="isolate", is on that node and pinned by no other
 * domain (running ones only for a start). */
static VpaCheckResult *
check_cell (const VpaHost *host, GPtrArray *others, const VpaDomain *dom, const VpaPlacedCell *pc)
{
  VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
  const VpaCell *cell = vpa_host_cell (host, pc->node);

  res->device = g_strdup_printf ("cell %u", pc->cell);
  res->addr = VPA_ADDR_NONE;
  res->numa_node = pc->node;
  if (cell == NULL)
    {
      res->status = VPA_CHECK_MISSING;
      res->line = g_strdup_printf ("guest cell %u: host node %d is not on this host", pc->cell, pc->node);
      return res;
    }
  for (guint i = 0; dom->cpu_policy == VPA_CPU_POLICY_DEDICATED && i < pc->cpus->len; i++)
    if (!check_cell_cpu (res, cell, others, pc, g_array_index (pc->cpus, guint, i), "dedicated"))
      return res;
  for (guint i = 0; dom->cpu_policy == VPA_CPU_POLICY_DEDICATED && pc->emulator != NULL &&
                    i < pc->emulator->len;
       i++)
    if (!check_cell_cpu (res, cell, others, pc, g_array_index (pc->emulator, guint, i),
                         "the emulator's dedicated"))
      return res;
  res->status = VPA_CHECK_OK;
  res->line = g_strdup_printf ("guest cell %u: host node %d, %s CPUs %u: ok", pc->cell, pc->node,
                               vpa_cpu_policy_to_string (dom->cpu_policy), pc->cpus->len);
  return res;
}

static void
check_cells (const VpaHost *host, GPtrArray *claims, const VpaDomain *dom, gboolean running_only,
             GPtrArray *results, gboolean *ok)
{
  g_autoptr (GPtrArray) others = vpa_claims_filter (claims, dom->name, running_only);

  for (guint i = 0; i < dom->placed_cells->len; i++)
    {
      VpaCheckResult *res = check_cell (host, others, dom, &g_array_index (dom->placed_cells, VpaPlacedCell, i));
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
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
      res->line = g_strdup_printf ("%s: network '%s': libvirt picks the VF when the domain starts, checked then", r->device, port->network);
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
                : g_strdup_printf ("%s: network '%s' is not an active libvirt hostdev network of this host", r->device, port->network);
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
  g_autoptr (GHashTable) units = NULL;
  g_autoptr (GPtrArray) order = NULL;
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
  inv = vpa_inventory_new_for (g_steal_pointer (&owned), config,
                               vpa_claims_filter (claims, dom->name, running_only), dom, error);
  if (inv == NULL)
    return NULL;
  guest_from_domain (dom, &guest);

  results = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_check_result_free);
  order = g_ptr_array_new ();
  units = index_request_units (requests, order);
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      RequestUnit *u = hd->alias != NULL ? g_hash_table_lookup (units, hd->alias) : NULL;
      VpaCheckResult *res = check_one (inv, &guest, hd, u != NULL ? u->request : NULL);

      if (u != NULL)
        u->filled = TRUE;
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  /* Every unit of every request needs its device: a port whose device
   * element is gone, an alias device never added, are broken requests. */
  for (guint i = 0; i < order->len; i++)
    {
      const RequestUnit *u = g_ptr_array_index (order, i);
      const VpaPortRequest *port = NULL;
      VpaCheckResult *res;

      if (u->filled)
        continue;
      /* A port on a hostdev network has no device element of its own:
       * the VF libvirt takes from the network is checked instead. */
      if (u->request->kind == VPA_REQUEST_PORT)
        port = vpa_netpool_port (dom, u->request->device);
      if (port != NULL && port->network != NULL)
        {
          res = check_network_port (inv, &guest, u->request, port, nets);
          if (res->status != VPA_CHECK_OK)
            *ok = FALSE;
          g_ptr_array_add (results, res);
          continue;
        }
      res = g_new0 (VpaCheckResult, 1);
      res->device = u->request->kind != VPA_REQUEST_ALIAS
                      ? g_strdup (u->request->device)
                      : g_strdup_printf (VPA_ALIAS_PREFIX "%s-%u", u->request->device, u->index);
      res->addr = VPA_ADDR_NONE;
      res->numa_node = VPA_NUMA_NONE;
      res->status = VPA_CHECK_UNPLACED;
      res->line = unfilled_line (u);
      *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  vpa_pipeline_check_locality (inv, dom, requests, results, ok);
  check_cells (inv->host, claims, dom, running_only, results, ok);
  if (!vpa_pipeline_check_vswitch (inv->host, config, dom, results, ok, error))
    return NULL;
  return g_steal_pointer (&results);
}

/* ------------------------------------------------------------------ */

/* The port as place would record it: a VF for an <interface
 * type='hostdev'> is vnic-type direct. */
static void
attach_record (VpaAttachRecord *record, const VpaPortRequest *port, const VpaRequest *r,
               const VpaDevice *dev)
{
  record->device = g_strdup (port->device);
  record->physnet = g_strdup (port->physnet);
  record->vnic_type = g_strdup (port->want_pf ? "direct-physical" : "direct");
  record->trusted = port->trusted;
  record->locality_group = g_strdup (port->locality_group);
  record->has_policy = port->has_policy;
  record->policy = port->policy;
  record->addr = dev->addr;
  record->numa_node = dev->numa_node;
  record->placed_policy = r->policy;
  record->placed_source = r->policy_source;
}

char *
vpa_pipeline_attach_request (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                             VpaDomain *dom, const VpaPortRequest *want, const char *mac,
                             VpaAddr *out_addr, VpaAttachRecord *record, GError **error)
{
  const char *alias = want->device;
  g_autoptr (VpaHost) owned = host;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (GPtrArray) mine = g_ptr_array_new ();
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaPlacement) placement = NULL;
  VpaPortRequest *port;
  const VpaAssignment *a;
  const VpaDevice *dev;
  VpaGuestNodes guest;
  g_autofree char *guest_addr = NULL;
  g_autofree char *head = NULL;
  g_autofree char *mac_xml = NULL;

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

  if (want->locality_group != NULL && vpa_domain_locality_group (dom, want->locality_group) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --locality-group '%s': domain '%s' has no <vpa:locality-group name='%s'>",
                   want->locality_group, dom->name, want->locality_group);
      return NULL;
    }

  port = g_new0 (VpaPortRequest, 1);
  port->device = g_strdup (alias);
  port->physnet = g_strdup (want->physnet);
  port->want_pf = want->want_pf;
  port->trusted = want->trusted;
  port->has_policy = want->has_policy;
  port->policy = want->has_policy ? want->policy : VPA_POLICY_LEGACY;
  port->locality_group = g_strdup (want->locality_group);
  g_ptr_array_add (dom->ports, port);

  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  g_ptr_array_add (mine, g_ptr_array_index (requests, requests->len - 1));

  /* The domain's own devices stay held: only the new port moves. */
  inv = vpa_inventory_new_for (g_steal_pointer (&owned), config,
                               vpa_claims_filter (claims, NULL, FALSE), dom, error);
  if (inv == NULL)
    return NULL;
  if (!config_admits_devices (config, mine, error))
    return NULL;
  guest_from_domain (dom, &guest);
  /* The guest's nodes are its binding (<numatune>, for a placed
   * placement="auto" guest the one its <vpa:placed-cell>s record): the
   * port is placed under its policy relative to them, and the binding
   * stays as it is. */
  if (((VpaRequest *) g_ptr_array_index (mine, 0))->locality_group != NULL)
    vpa_attach_locality_restrict (inv, dom, g_ptr_array_index (mine, 0));
  placement = vpa_place (inv, mine, &guest, error);
  if (placement == NULL)
    {
      /* attach never binds: a placement="auto" guest nothing placed
       * yet gets its nodes from place/define. */
      if (dom->numa_auto && guest.n_nodes == 0)
        g_prefix_error (error, "attach: domain '%s' (placement=\"auto\", no binding recorded: place or define it with virt-pci-affinity first): ", dom->name);
      else
        g_prefix_error (error, "attach: domain '%s': ", dom->name);
      return NULL;
    }
  a = g_ptr_array_index (placement->assignments, 0);
  dev = vpa_host_device (inv->host, g_array_index (a->devices, guint, 0));
  *out_addr = dev->addr;
  if (!vpa_pipeline_attach_guest_address (dom, alias, dev, &guest_addr, error))
    return NULL;
  if (record != NULL)
    {
      const VpaRequest *r = g_ptr_array_index (mine, 0);

      attach_record (record, port, r, dev);
      if (r->locality_group != NULL)
        record->locality = (gint) vpa_attach_locality_reached (
          inv, dom, r, g_array_index (a->devices, guint, 0));
    }
  head = g_markup_printf_escaped (
    "<interface type='hostdev' managed='yes'>\n"
    "  <source>\n"
    "    <address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>\n"
    "  </source>\n"
    "  <alias name='%s'/>\n",
    VPA_ADDR_DOMAIN (dev->addr), VPA_ADDR_BUS (dev->addr), VPA_ADDR_SLOT (dev->addr),
    VPA_ADDR_FUNCTION (dev->addr), alias);
  if (mac != NULL)
    mac_xml = g_markup_printf_escaped ("  <mac address='%s'/>\n", mac);
  return g_strconcat (head, mac_xml != NULL ? mac_xml : "", guest_addr != NULL ? guest_addr : "",
                      "</interface>\n", NULL);
}

char *
vpa_pipeline_attach_port (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                          VpaDomain *dom, const char *alias, const char *physnet,
                          const VpaPolicy *policy, VpaAddr *out_addr,
                          VpaAttachRecord *record, GError **error)
{
  VpaPortRequest want = { .device = (char *) alias, .physnet = (char *) physnet, .trusted = -1, .has_policy = policy != NULL };

  if (policy != NULL)
    want.policy = *policy;
  return vpa_pipeline_attach_request (host, claims, config, dom, &want, NULL, out_addr, record,
                                      error);
}
