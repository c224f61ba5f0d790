/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet's host filter: Nova's support_requests over the pool rows of
 * every host (docs/nova.md, "The filter order"), judged by policy/'s
 * steps and tiers as place judges them, the locality groups
 * (vpa-fleet-locality.c), and the whole-guest fit on a host rebuilt
 * from its rows for <vpa:numa placement="auto">.
 */
#include "vpa-fleet-filter.h"
#include "vpa-fleet-rows.h"
#include "vpa-fleet-schema.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-policy.h"
#include "vpa-requests.h"

#include <string.h>

void
vpa_fleet_filter_verdict_free (VpaFleetVerdict *verdict)
{
  if (verdict == NULL)
    return;
  g_free (verdict->host);
  g_free (verdict->reason);
  g_free (verdict->nodes);
  g_free (verdict);
}

/* Nova's pool key view (docs/nova.md, "Pool keys"): numa_node is an integer and
 * never equals a string, so it reads as absent here. */
static const char *
pool_tag (const VpaPool *pool, const char *key)
{
  /* A fleet's pool carries its own tags (no configuration). */
  return pool->tags != NULL ? vpa_pools_tag (pool, NULL, key) : NULL;
}

static const char *
pool_prop (const VpaPool *pool, const char *key)
{
  const char *tag = pool_tag (pool, key);

  if (tag != NULL)
    return tag;
  if (strcmp (key, "vendor_id") == 0)
    return pool->vendor_id;
  if (strcmp (key, "product_id") == 0)
    return pool->product_id;
  if (strcmp (key, "dev_type") == 0)
    return vpa_dev_type_to_string (pool->dev_type);
  if (strcmp (key, "remote_managed") == 0 && pool->dev_type != VPA_DEV_TYPE_PCI)
    return "false";
  return NULL;
}

static guint
pool_key_count (const VpaPool *pool)
{
  guint n = 4; /* vendor_id, product_id, numa_node, dev_type */

  if (pool->tags != NULL)
    n += pool->tags->len;
  /* the implicit remote_managed='false' of VFs and PFs */
  if (pool->dev_type != VPA_DEV_TYPE_PCI && pool_tag (pool, "remote_managed") == NULL)
    n++;
  return n;
}

static gboolean
spec_match (const VpaPool *pool, const VpaSpec *spec)
{
  for (guint i = 0; i < spec->pairs->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (spec->pairs, i);
      const char *have = pool_prop (pool, pair->key);

      if (pair->value == NULL ? have != NULL
                              : have == NULL || g_ascii_strcasecmp (pair->value, have) != 0)
        return FALSE;
    }
  return TRUE;
}

gboolean
vpa_fleet_filter_request_match (const VpaPool *pool, const VpaRequest *req)
{
  for (guint i = 0; i < req->specs->len; i++)
    {
      if (spec_match (pool, g_ptr_array_index (req->specs, i)))
        return TRUE;
    }
  return FALSE;
}

/* Per-evaluation state of one pool. */
typedef struct {
  const VpaPool *pool;
  guint count;
  gboolean gone; /* apply_requests deleted it */
  VpaTier tier;  /* of its NUMA node for the guest */
  guint index;   /* in the host's pools */
} Slot;

/* The guest as policy/ sees it, on the fleet host's cells; order_used
 * (or NULL) is set when a take depended on an order of pools the rows
 * did not give (take_order_matters). */
typedef struct {
  VpaHost *host; /* the cells only */
  VpaGuestNodes guest;
  GPtrArray *requests; /* all of them, VpaRequest* */
  gboolean *order_used;
  guint taken; /* devices the takes so far took, from any pool */
} Guest;

static VpaHost *
host_of_cells (const VpaFleetHost *host)
{
  VpaHost *out = vpa_host_new (host->name);

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaFleetCell *fc = &g_array_index (host->cells, VpaFleetCell, i);
      VpaCell cell = { .id = fc->node, .socket = fc->socket };
      vpa_host_add_cell (out, &cell);
    }
  return out;
}

static guint
slots_sum (GPtrArray *cand)
{
  guint sum = 0;

  for (guint i = 0; i < cand->len; i++)
    sum += ((Slot *) g_ptr_array_index (cand, i))->count;
  return sum;
}

static GPtrArray *
slots_keep (GPtrArray *cand, gboolean (*keep) (const Slot *, gconstpointer), gconstpointer data)
{
  GPtrArray *out = g_ptr_array_sized_new (cand->len);

  for (guint i = 0; i < cand->len; i++)
    {
      if (keep (g_ptr_array_index (cand, i), data))
        g_ptr_array_add (out, g_ptr_array_index (cand, i));
    }
  return out;
}

static gboolean
keep_not_pf (const Slot *s, gconstpointer data)
{
  return s->pool->dev_type != VPA_DEV_TYPE_PF;
}

static gboolean
keep_not_remote_managed (const Slot *s, gconstpointer data)
{
  return !vpa_policy_truthy (pool_prop (s->pool, "remote_managed"));
}

/* The candidates of one policy step: those of its first tiers, then
 * the rest of its tiers, each in pool order. */
static GPtrArray *
slots_of_step (GPtrArray *cand, const VpaPolicyStep *step)
{
  GPtrArray *out = g_ptr_array_sized_new (cand->len);

  for (guint pass = 0; pass < 2; pass++)
    {
      for (guint i = 0; i < cand->len; i++)
        {
          Slot *s = g_ptr_array_index (cand, i);
          guint bit = VPA_TIER_BIT (s->tier);

          if ((step->tiers & bit) != 0 && ((step->first & bit) != 0) == (pass == 0))
            g_ptr_array_add (out, s);
        }
    }
  return out;
}

/* Nova's NUMA filter: policy/'s steps, the first that holds enough
 * devices (docs/nova.md, "NUMA affinity policies"). Returns a new
 * array. */
static GPtrArray *
filter_numa (GPtrArray *cand, const VpaRequest *req, const Guest *g)
{
  VpaPolicyStep steps[VPA_POLICY_STEPS_MAX];
  guint n = vpa_policy_steps (req->policy, g->host, &g->guest, steps);
  GPtrArray *out = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_clear_pointer (&out, g_ptr_array_unref);
      out = slots_of_step (cand, &steps[i]);
      if (slots_sum (out) >= req->count)
        break;
    }
  return out != NULL ? out : g_ptr_array_new ();
}

static char *
nodes_to_string (const gint *nodes, guint n)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "%s%d", i > 0 ? "," : "", nodes[i]);
  return g_string_free (out, FALSE);
}

static char *
count_reason (const VpaRequest *req, guint sum, const char *stage, const Guest *g)
{
  const VpaGuestNodes *guest = &g->guest;
  g_autofree char *nodes = nodes_to_string (guest->nodes, guest->n_nodes);

  return g_strdup_printf ("%s: needs %u, %u free %s (policy %s from %s%s%s)",
                          req->label != NULL ? req->label : req->device, req->count, sum,
                          stage, vpa_policy_to_string (req->policy),
                          vpa_policy_source_to_string (req->policy_source),
                          guest->numa_guest && guest->n_nodes > 0 ? ", guest nodes " : "",
                          guest->numa_guest && guest->n_nodes > 0 ? nodes : "");
}

static gboolean
count_check (GPtrArray *cand, const VpaRequest *req, const char *stage,
             const Guest *g, char **reason)
{
  guint sum = slots_sum (cand);

  if (sum >= req->count)
    return TRUE;
  if (reason != NULL)
    *reason = count_reason (req, sum, stage, g);
  return FALSE;
}

/* Whether nothing after a take tells the two pools apart: the same
 * tier, both PFs or neither, both remote-managed or neither, and each
 * request matching both or neither (the steps, exclusions, sums and
 * weight read nothing else of a pool). */
static gboolean
slots_alike (const Slot *a, const Slot *b, GPtrArray *requests)
{
  if (a->tier != b->tier ||
      (a->pool->dev_type == VPA_DEV_TYPE_PF) != (b->pool->dev_type == VPA_DEV_TYPE_PF) ||
      keep_not_remote_managed (a, NULL) != keep_not_remote_managed (b, NULL))
    return FALSE;
  for (guint r = 0; requests != NULL && r < requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (requests, r);

      if (vpa_fleet_filter_request_match (a->pool, req) !=
          vpa_fleet_filter_request_match (b->pool, req))
        return FALSE;
    }
  return TRUE;
}

/* Whether taking needed devices from step could end otherwise in
 * Nova's order than in the order the slots are in, where the rows did
 * not give it (docs/fleet.md, "Pool order on demand"): two pools with
 * the same number of keys, one of them without its lowest address, that
 * something after the take tells apart, or one of which this take with
 * all before it (taken) could have emptied in some order. Otherwise
 * every pool of unknown order is alike all those it could swap places
 * with and none is ever emptied: each sum over them, and so every
 * check, the verdict and the weight, is the same in any order. */
static gboolean
take_order_matters (GPtrArray *step, guint needed, guint taken, GPtrArray *requests)
{
  for (guint i = 0; i < step->len; i++)
    {
      const Slot *a = g_ptr_array_index (step, i);

      for (guint j = i + 1; j < step->len; j++)
        {
          const Slot *b = g_ptr_array_index (step, j);

          if ((a->pool->first_addr != VPA_ADDR_NONE && b->pool->first_addr != VPA_ADDR_NONE) ||
              pool_key_count (a->pool) != pool_key_count (b->pool))
            continue;
          if (taken + needed >= MIN (a->pool->free, b->pool->free) ||
              !slots_alike (a, b, requests))
            return TRUE;
        }
    }
  return FALSE;
}

/* _filter_pools (docs/nova.md, "The filter order") then apply_requests'
 * taking. */
static gboolean
apply_request (GPtrArray *slots, const VpaRequest *req, Guest *g, char **reason)
{
  g_autoptr (GPtrArray) cand = g_ptr_array_new ();
  g_autoptr (GPtrArray) step = NULL;
  guint needed = req->count;

  for (guint i = 0; i < slots->len; i++)
    {
      Slot *s = g_ptr_array_index (slots, i);
      if (!s->gone && vpa_fleet_filter_request_match (s->pool, req))
        g_ptr_array_add (cand, s);
    }
  if (!count_check (cand, req, "devices match its spec", g, reason))
    return FALSE;
  step = filter_numa (cand, req, g);
  if (!count_check (step, req, "on the nodes its policy allows", g, reason))
    return FALSE;
  if (!vpa_request_wants_pf (req))
    {
      g_autoptr (GPtrArray) next = slots_keep (step, keep_not_pf, NULL);
      g_ptr_array_unref (step);
      step = g_steal_pointer (&next);
      if (!count_check (step, req, "left once PFs are excluded", g, reason))
        return FALSE;
    }
  if (!vpa_request_wants_remote_managed (req))
    {
      g_autoptr (GPtrArray) next = slots_keep (step, keep_not_remote_managed, NULL);
      g_ptr_array_unref (step);
      step = g_steal_pointer (&next);
      if (!count_check (step, req, "left once remote-managed devices are excluded", g, reason))
        return FALSE;
    }
  if (step->len == 0)
    {
      /* A count=0 request fails when nothing matches (docs/nova.md,
       * "Scheduler and compute claim"). */
      if (reason != NULL)
        {
          *reason = g_strdup_printf ("%s: no pool matches",
                                     req->label != NULL ? req->label : req->device);
        }
      return FALSE;
    }
  if (g->order_used != NULL && take_order_matters (step, needed, g->taken, g->requests))
    *g->order_used = TRUE;
  g->taken += needed;
  for (guint i = 0; i < step->len && needed > 0; i++)
    {
      Slot *s = g_ptr_array_index (step, i);
      if (s->count <= needed)
        {
          needed -= s->count;
          s->count = 0;
          s->gone = TRUE;
        }
      else
        {
          s->count -= needed;
          needed = 0;
        }
    }
  return TRUE;
}

/* Nova's pool order: fewer keys first, then the lowest member address
 * (the order after a nova-compute restart, docs/nova.md, "Pool order").
 * Pools read without their lowest address go in the reverse of the
 * rows' order: an order the rows do not give, so that a verdict which
 * depends on it and was not found so (order_used) differs in tests. */
static gint
slot_nova_cmp (gconstpointer a, gconstpointer b)
{
  const Slot *sa = a, *sb = b;
  const VpaPool *pa = sa->pool;
  const VpaPool *pb = sb->pool;
  guint ka = pool_key_count (pa), kb = pool_key_count (pb);

  if (ka != kb)
    return ka < kb ? -1 : 1;
  if (pa->first_addr == VPA_ADDR_NONE || pb->first_addr == VPA_ADDR_NONE)
    return sa->index > sb->index ? -1 : sa->index < sb->index;
  return pa->first_addr < pb->first_addr ? -1 : pa->first_addr > pb->first_addr;
}

/* vpa_fleet_filter_supports_requests, with *order_used (or NULL) set when
 * the answer depends on an order of the pools the rows did not give. */
static gboolean
supports (const VpaFleetHost *host, GPtrArray *requests, const VpaGuestNodes *guest,
          gdouble *weight, char **reason, gboolean *order_used)
{
  g_autoptr (GArray) store = g_array_new (FALSE, FALSE, sizeof (Slot));
  g_autoptr (GPtrArray) slots = NULL;
  g_autoptr (VpaHost) cells = host_of_cells (host);
  Guest g = { cells, *guest, requests, order_used, 0 };
  gboolean numa_guest = guest->numa_guest;
  guint n_nodes = guest->n_nodes;
  guint left = 0;

  /* SQL counted too few free devices of a request's spec on the whole
   * host: the first count check fails, and no row was read back. */
  if (requests != NULL && host->ruled_out > 0 && host->ruled_out <= requests->len)
    {
      if (weight != NULL)
        *weight = 0;
      if (reason != NULL)
        {
          *reason = count_reason (g_ptr_array_index (requests, host->ruled_out - 1),
                                  host->ruled_out_free, "devices match its spec", &g);
        }
      return FALSE;
    }
  for (guint i = 0; host->pools != NULL && i < host->pools->len; i++)
    {
      Slot s = { g_ptr_array_index (host->pools, i), 0, FALSE, VPA_TIER_REMOTE, i };
      s.count = s.pool->free;
      s.tier = vpa_policy_tier (cells, &g.guest, s.pool->numa_node);
      if (s.count > 0)
        g_array_append_val (store, s);
    }
  g_array_sort (store, slot_nova_cmp);
  slots = g_ptr_array_sized_new (store->len);
  for (guint i = 0; i < store->len; i++)
    g_ptr_array_add (slots, &g_array_index (store, Slot, i));

  for (guint r = 0; requests != NULL && r < requests->len; r++)
    {
      if (!apply_request (slots, g_ptr_array_index (requests, r), &g, reason))
        {
          if (weight != NULL)
            *weight = 0;
          return FALSE;
        }
    }

  /* Weight: matching devices still free where the guest runs. */
  for (guint i = 0; i < slots->len; i++)
    {
      const Slot *s = g_ptr_array_index (slots, i);
      gboolean wanted = FALSE;

      if (s->gone || (numa_guest && n_nodes > 0 && s->tier != VPA_TIER_AFFINE))
        continue;
      for (guint r = 0; requests != NULL && r < requests->len && !wanted; r++)
        wanted = vpa_fleet_filter_request_match (s->pool, g_ptr_array_index (requests, r));
      if (wanted)
        left += s->count;
    }
  if (weight != NULL)
    *weight = left;
  return TRUE;
}

gboolean
vpa_fleet_filter_supports_requests (const VpaFleetHost *host, GPtrArray *requests,
                                    gboolean numa_guest, const gint *nodes, guint n_nodes,
                                    gdouble *weight, char **reason)
{
  VpaGuestNodes guest = { numa_guest, nodes, n_nodes };

  return supports (host, requests, &guest, weight, reason, NULL);
}

static VpaFleetVerdict *
verdict_new (const VpaFleetHost *host, gboolean passes, gdouble weight,
             char *reason, char *nodes)
{
  VpaFleetVerdict *v = g_new0 (VpaFleetVerdict, 1);

  v->host = g_strdup (host->name);
  v->passes = passes;
  v->weight = passes ? weight : 0;
  v->reason = reason;
  v->nodes = nodes;
  return v;
}

/* The vSwitch rule on one host (docs/vswitch.md): the guest's network
 * rules built from the [physnet]/[tunnel] groups the host synced, as
 * its own place builds them from its configuration. */
typedef struct {
  VpaConfig config; /* the filter's, with the host's groups (a view) */
  char *path;       /* the view's name in messages */
  GPtrArray *rules; /* VpaNetRule*, or NULL: none */
  VpaHost *cells;   /* the host's cells, for the rules */
} HostNet;

static void
host_net_clear (HostNet *net)
{
  g_clear_pointer (&net->path, g_free);
  g_clear_pointer (&net->rules, g_ptr_array_unref);
  g_clear_pointer (&net->cells, vpa_host_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HostNet, host_net_clear)

/* A port of the domain names a network (a vSwitch port, or an SR-IOV
 * port with a physnet), as vpa_pipeline_net_rules reads them. */
static gboolean
domain_names_network (const VpaDomain *dom)
{
  if (dom->vswitch_ports != NULL && dom->vswitch_ports->len > 0)
    return TRUE;
  for (guint i = 0; dom->ports != NULL && i < dom->ports->len; i++)
    {
      if (((const VpaPortRequest *) g_ptr_array_index (dom->ports, i))->physnet != NULL)
        return TRUE;
    }
  return FALSE;
}

/* Fills net for host; FALSE with *reason when the host fails before any
 * node is tried: the store does not know its networks (synced before
 * version 5), or a group names a node the host lacks (place's error). */
static gboolean
host_net_init (HostNet *net, const VpaFleetHost *host, const VpaFleetQuery *query,
               char **reason)
{
  g_autoptr (GError) error = NULL;

  memset (net, 0, sizeof *net);
  if (query->config == NULL || query->domain == NULL || host->networks == NULL)
    return TRUE;
  /* A shallow copy: it borrows everything and is never freed. */
  net->config = *query->config;
  net->config.vswitch = host->networks;
  net->path = g_strdup_printf ("host '%s' (its synced configuration)", host->name);
  net->config.path = net->path;
  if (!domain_names_network (query->domain))
    return TRUE;
  if (host->sync_version < VPA_FLEET_SCHEMA_NETWORKS)
    {
      *reason = g_strdup ("the store has no network affinity for the host (sync it again)");
      return FALSE;
    }
  net->rules = vpa_pipeline_net_rules (query->domain, &net->config);
  net->cells = host_of_cells (host);
  if (net->rules->len > 0 && !vpa_config_check_vswitch_nodes (&net->config, net->cells, &error))
    {
      *reason = g_strdup (error->message);
      return FALSE;
    }
  return TRUE;
}

/* The configuration the host is judged with: the view once made. */
static const VpaConfig *
host_net_config (const HostNet *net, const VpaFleetQuery *query)
{
  return net->path != NULL ? &net->config : query->config;
}

/* NULL when the guest on nodes meets every hard network rule (policy/'s
 * judgement, the fit's); else why not, as check says it. */
static char *
net_unmet (const HostNet *net, const gint *nodes, guint n_nodes)
{
  const VpaNetRule *rule;
  g_autofree char *what = NULL;
  g_autofree char *have = NULL;

  if (net->rules == NULL || net->rules->len == 0 ||
      (rule = vpa_fit_net_rules_unmet (net->cells, net->rules, nodes, n_nodes)) == NULL)
    return NULL;
  what = vpa_fit_net_rule_describe (rule);
  have = nodes_to_string (nodes, n_nodes);
  return g_strdup_printf ("%s, but the guest's cells are on host node%s %s", what,
                          n_nodes > 1 ? "s" : "", have);
}

/* A NUMA guest not bound to host nodes: the scheduler would pick its
 * nodes, so try each host node, then each socket's nodes, and keep the
 * best that passes. */
static VpaFleetVerdict *
filter_unbound (const VpaFleetHost *host, const VpaFleetQuery *query, const HostNet *net,
                gboolean *order_used)
{
  g_autoptr (GPtrArray) sets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autofree char *first_reason = NULL;
  g_autofree char *best_nodes = NULL;
  gdouble best = -1;

  for (guint i = 0; i < host->cells->len; i++)
    {
      GArray *set = g_array_new (FALSE, FALSE, sizeof (gint));
      g_array_append_val (set, g_array_index (host->cells, VpaFleetCell, i).node);
      g_ptr_array_add (sets, set);
    }
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaFleetCell *c = &g_array_index (host->cells, VpaFleetCell, i);
      GArray *set;
      gboolean seen = FALSE;

      for (guint j = 0; j < i && !seen; j++)
        seen = g_array_index (host->cells, VpaFleetCell, j).socket == c->socket;
      if (seen || c->socket == VPA_SOCKET_NONE)
        continue;
      set = g_array_new (FALSE, FALSE, sizeof (gint));
      for (guint j = i; j < host->cells->len; j++)
        {
          if (g_array_index (host->cells, VpaFleetCell, j).socket == c->socket)
            g_array_append_val (set, g_array_index (host->cells, VpaFleetCell, j).node);
        }
      if (set->len > 1)
        {
          g_ptr_array_add (sets, set);
        }
      else
        {
          g_array_unref (set);
        }
    }

  for (guint i = 0; i < sets->len; i++)
    {
      GArray *set = g_ptr_array_index (sets, i);
      g_autofree char *reason = NULL;
      gdouble weight = 0;

      /* Nova checks the networks before the devices. */
      if ((reason = net_unmet (net, (const gint *) set->data, set->len)) != NULL)
        {
          if (first_reason == NULL)
            {
              first_reason = g_strdup_printf ("no host node or socket takes the requests; on node %d: %s",
                                              g_array_index (set, gint, 0), reason);
            }
          continue;
        }
      if (supports (host, query->requests,
                    &(VpaGuestNodes){ TRUE, (const gint *) set->data, set->len }, &weight,
                    first_reason == NULL ? &reason : NULL, order_used))
        {
          if (weight > best)
            {
              best = weight;
              g_free (best_nodes);
              best_nodes = nodes_to_string ((const gint *) set->data, set->len);
            }
        }
      else if (first_reason == NULL)
        {
          first_reason = g_strdup_printf ("no host node or socket takes the requests; on node %d: %s",
                                          g_array_index (set, gint, 0), reason);
        }
    }
  if (best >= 0)
    return verdict_new (host, TRUE, best, NULL, g_steal_pointer (&best_nodes));
  return verdict_new (host, FALSE, 0, g_steal_pointer (&first_reason), NULL);
}

/* <vpa:numa placement="auto">: the host passes iff the whole-guest fit
 * place runs succeeds on the host rebuilt from its rows. */
static VpaFleetVerdict *
filter_fit (const VpaFleetHost *host, const VpaFleetQuery *query, const HostNet *net)
{
  const VpaConfig *config = host_net_config (net, query);
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaNumaResult) res = NULL;
  g_autoptr (GError) error = NULL;
  const gint *nodes;
  gdouble weight = 0;

  if (host->cells->len == 0)
    return verdict_new (host, FALSE, 0, g_strdup ("the host has no NUMA topology"), NULL);
  if (g_array_index (host->cells, VpaFleetCell, 0).cpus == NULL)
    return verdict_new (host, FALSE, 0, g_strdup ("the store has no node capacity for the host (sync it again)"), NULL);
  if ((inv = vpa_fleet_rows_inventory (host, config, &error)) == NULL ||
      (res = vpa_pipeline_numa_fit (query->numa_auto, inv, config, inv->claims,
                                    query->requests, NULL, &error)) == NULL)
    return verdict_new (host, FALSE, 0, g_strdup (error->message), NULL);
  nodes = (const gint *) (gpointer) res->nodes->data;
  /* The rebuilt host has the synced host's PCIe tree: the fit placed the
   * locality groups as place does there, so its verdict is place's. */
  vpa_fleet_filter_supports_requests (host, query->requests, TRUE, nodes, res->nodes->len, &weight,
                                      NULL);
  return verdict_new (host, TRUE, weight, NULL, nodes_to_string (nodes, res->nodes->len));
}

char *
vpa_fleet_filter_trait_unmet (const VpaFleetQuery *query, const VpaFleetHost *host)
{
  if (query->need_net_numa_trait && !vpa_fleet_host_has_trait (host, VPA_FLEET_TRAIT_NET_NUMA))
    return g_strdup ("missing trait " VPA_FLEET_TRAIT_NET_NUMA " (a port has a NUMA affinity policy)");
  if (query->need_socket_trait && !vpa_fleet_host_has_trait (host, VPA_FLEET_TRAIT_SOCKET))
    return g_strdup ("missing trait " VPA_FLEET_TRAIT_SOCKET " (the flavor/image policy is socket)");
  return NULL;
}

static VpaFleetVerdict *
filter_host (const VpaFleetHost *host, const VpaFleetQuery *query, gboolean *order_used)
{
  g_auto (HostNet) net = { 0 };
  g_autofree char *reason = NULL;
  gdouble weight = 0;

  if ((reason = vpa_fleet_filter_trait_unmet (query, host)) != NULL)
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  if (query->numa_auto != NULL)
    {
      /* The fit judges the rules itself, as place's does. */
      if (host->cells->len > 0 && g_array_index (host->cells, VpaFleetCell, 0).cpus != NULL &&
          !host_net_init (&net, host, query, &reason))
        return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
      return filter_fit (host, query, &net);
    }
  if (!query->numa_guest)
    {
      gboolean ok = supports (host, query->requests, &(VpaGuestNodes){ FALSE, NULL, 0 },
                              &weight, &reason, order_used);
      if (ok && (reason = vpa_fleet_locality_unmet (host, query->requests, FALSE, NULL, 0)) != NULL)
        ok = FALSE;
      return verdict_new (host, ok, ok ? weight : 0, g_steal_pointer (&reason), NULL);
    }
  /* A NUMA guest needs a host with NUMA topology (NUMATopologyFilter). */
  if (host->cells->len == 0)
    return verdict_new (host, FALSE, 0, g_strdup ("the host has no NUMA topology"), NULL);
  /* Only NUMA guests are held to their ports' networks, as in Nova. */
  if (!host_net_init (&net, host, query, &reason))
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  if (query->n_guest_nodes == 0)
    return filter_unbound (host, query, &net, order_used);
  for (guint i = 0; i < query->n_guest_nodes; i++)
    {
      gboolean found = FALSE;
      for (guint j = 0; j < host->cells->len && !found; j++)
        found = g_array_index (host->cells, VpaFleetCell, j).node == query->guest_nodes[i];
      if (!found)
        {
          return verdict_new (host, FALSE, 0,
                              g_strdup_printf ("the guest is bound to host node '%d', which the host does not have",
                                               query->guest_nodes[i]),
                              NULL);
        }
    }
  if ((reason = net_unmet (&net, query->guest_nodes, query->n_guest_nodes)) != NULL)
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  if (!supports (host, query->requests,
                 &(VpaGuestNodes){ TRUE, query->guest_nodes, query->n_guest_nodes }, &weight,
                 &reason, order_used))
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  if ((reason = vpa_fleet_locality_unmet (host, query->requests, TRUE, query->guest_nodes,
                                          query->n_guest_nodes)) != NULL)
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  return verdict_new (host, TRUE, weight, NULL,
                      nodes_to_string (query->guest_nodes, query->n_guest_nodes));
}

gboolean
vpa_fleet_filter_needs_order (const VpaFleetHost *host, const VpaFleetQuery *query)
{
  gboolean order_used = FALSE;

  vpa_fleet_filter_verdict_free (filter_host (host, query, &order_used));
  return order_used;
}

static gint
verdict_cmp (gconstpointer a, gconstpointer b)
{
  const VpaFleetVerdict *va = *(VpaFleetVerdict *const *) a;
  const VpaFleetVerdict *vb = *(VpaFleetVerdict *const *) b;

  if (va->passes != vb->passes)
    return va->passes ? -1 : 1;
  if (va->weight != vb->weight)
    return va->weight > vb->weight ? -1 : 1;
  return strcmp (va->host, vb->host);
}

GPtrArray *
vpa_fleet_filter (GPtrArray *hosts, const VpaFleetQuery *query)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_filter_verdict_free);

  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHost *host = g_ptr_array_index (hosts, i);
      gboolean order_used = FALSE;
      VpaFleetVerdict *v = filter_host (host, query, &order_used);

      /* The reader gives the lowest addresses of every host whose
       * verdict depends on them (vpa_fleet_filter_needs_order): never
       * pass a host on an order it guessed. */
      if (order_used)
        {
          vpa_fleet_filter_verdict_free (v);
          v = verdict_new (host, FALSE, 0,
                           g_strdup ("the order of the host's pools was not read"), NULL);
        }
      g_ptr_array_add (out, v);
    }
  g_ptr_array_sort (out, verdict_cmp);
  return out;
}
