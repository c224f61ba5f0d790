/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whole-guest NUMA placement (docs/placement.md).
 *
 * Per pair (guest cell, host node) the CPUs, memory and pages decide
 * alone: distinct cells take distinct nodes, so those resources never
 * couple cells. What couples them is the device requests, whose policies
 * depend on the SET of nodes chosen. The search is a depth-first walk
 * over the cells in guest order and the nodes in Nova's order, pruned by
 * (1) a bipartite matching of the remaining cells into the remaining
 * nodes, (2) the device placement with the guest on every node still
 * reachable (allowed devices and tiers only grow with the node set, so
 * it is a bound), and (3) memoised (depth, used nodes) states. Without
 * device requests (1) makes the walk greedy: no backtracking.
 */
#include "vpa-fit.h"
#include "vpa-fit-net.h"

#include <string.h>

#define MAX_NODES 64
#define MAX_RUNS 4096 /* device placements: bounds the hook on untrusted XML */
/* walk states with network rules, whose sets of nodes a matching alone
 * cannot decide (docs/vswitch.md, "Cost") */
#define MAX_NET_STATES 16384

void
vpa_cell_binding_clear (VpaCellBinding *b)
{
  g_clear_pointer (&b->cpus, g_array_unref);
  g_clear_pointer (&b->reserved, g_array_unref);
  g_clear_pointer (&b->emulator, g_array_unref);
}

void
vpa_fit_free (VpaFit *fit)
{
  if (fit == NULL)
    return;
  if (fit->bindings != NULL)
    {
      for (guint i = 0; i < fit->bindings->len; i++)
        vpa_cell_binding_clear (&g_array_index (fit->bindings, VpaCellBinding, i));
      g_array_unref (fit->bindings);
    }
  g_clear_pointer (&fit->nodes, g_array_unref);
  vpa_placement_free (fit->placement);
  g_free (fit);
}

/* ------------------------------------------------------------------ */
/* The search                                                          */
/* ------------------------------------------------------------------ */

typedef struct {
  const VpaCapacity *cap;
  const VpaInventory *inv;
  GPtrArray *requests;
  const VpaFitGuest *guest;
  guint n, h;        /* cells, nodes */
  guint *order;      /* node indices in Nova's order */
  guint64 *feasible; /* per cell: bitmask of node indices */
  VpaPlacer *placer;
  GHashTable *visited; /* used node masks already walked */
  GHashTable *costs;   /* node mask -> device tier total + 1 (0: none) */
  guint *choice;       /* per cell: node index (current path) */
  guint *best;         /* per cell: node index of the best fit */
  gint64 best_cost;    /* -1: none yet */
  gint64 lower;        /* the root bound */
  VpaPlacement *root;  /* the devices with the guest on every reachable node */
  guint n_runs;
  guint run_limit; /* device placements this walk may run */
  guint64 must;    /* nodes every leaf must hold (the first walk), or 0 */
  gboolean done;
  VpaNetMasks *net;   /* the guest's network rules, or NULL */
  guint64 net_weight; /* cost = device tiers * net_weight + preferred misses */
  guint n_net_states; /* walk states visited with network rules */
} Search;

/* Kuhn's augmenting paths: can cells from..n-1 each take a distinct
 * node of avail? */
static gboolean
augment (const Search *s, guint c, guint64 avail, guint64 *seen, gint *owner)
{
  for (guint k = 0; k < s->h; k++)
    {
      guint64 bit = G_GUINT64_CONSTANT (1) << k;
      if (!(s->feasible[c] & avail & bit) || (*seen & bit))
        continue;
      *seen |= bit;
      if (owner[k] < 0 || augment (s, (guint) owner[k], avail, seen, owner))
        {
          owner[k] = (gint) c;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
can_complete (const Search *s, guint from, guint64 avail)
{
  gint owner[MAX_NODES];

  for (guint k = 0; k < s->h; k++)
    owner[k] = -1;
  for (guint c = from; c < s->n; c++)
    {
      guint64 seen = 0;
      if (!augment (s, c, avail, &seen, owner))
        return FALSE;
    }
  return TRUE;
}

/* Kuhn's augmenting paths from the node side: can node k take a
 * distinct cell of from..n-1? */
static gboolean
augment_node (const Search *s, guint k, guint from, guint64 *seen, gint *owner)
{
  for (guint c = from; c < s->n; c++)
    {
      guint64 bit = G_GUINT64_CONSTANT (1) << c;
      if (!(s->feasible[c] & (G_GUINT64_CONSTANT (1) << k)) || (*seen & bit))
        continue;
      *seen |= bit;
      if (owner[c] < 0 || augment_node (s, (guint) owner[c], from, seen, owner))
        {
          owner[c] = (gint) k;
          return TRUE;
        }
    }
  return FALSE;
}

static guint64
full_mask_of (guint h)
{
  return h >= 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT (1) << h) - 1;
}

/* Can cells from..n-1 take distinct nodes of avail such that every node
 * of must is taken? A matching saturating the cells and one covering
 * must together give one doing both (Mendelsohn-Dulmage), so each is
 * checked on its own. */
static gboolean
can_cover (const Search *s, guint from, guint64 avail, guint64 must)
{
  gint owner[MAX_NODES];

  if ((guint) __builtin_popcountll (must) > s->n - from)
    return FALSE;
  for (guint c = 0; c < s->n; c++)
    owner[c] = -1;
  for (guint k = 0; k < s->h; k++)
    {
      guint64 seen = 0;
      if ((must & (G_GUINT64_CONSTANT (1) << k)) && !augment_node (s, k, from, &seen, owner))
        return FALSE;
    }
  return can_complete (s, from, avail);
}

/* Can cells from..n-1 take distinct free nodes so that, with used, every
 * hard network rule has a node? The rules of one node are nodes the
 * cells must cover together (with the first walk's must); each rule of
 * several nodes needs one of them on top, tried node by node for the
 * first NET_MULTI_CHECKS such rules. Exact at the leaves, where the walk
 * checks every rule again: a pruning that never cuts a fit. */
#define NET_MULTI_CHECKS 8

static gboolean
net_can_meet (const Search *s, guint from, guint64 used)
{
  guint64 avail = ~used & full_mask_of (s->h);
  guint64 must = s->must & ~used;
  guint64 reach = 0;
  guint multi = 0;

  for (guint c = from; c < s->n; c++)
    reach |= s->feasible[c] & avail;
  for (guint i = 0; i < s->net->n; i++)
    {
      if (s->net->soft[i] || (s->net->mask[i] & used) != 0)
        continue;
      if ((s->net->mask[i] & reach) == 0)
        return FALSE;
      if (__builtin_popcountll (s->net->mask[i]) == 1)
        must |= s->net->mask[i];
    }
  if (must != 0 && !can_cover (s, from, avail, must))
    return FALSE;
  for (guint i = 0; i < s->net->n && multi < NET_MULTI_CHECKS; i++)
    {
      guint64 open = s->net->mask[i] & reach & ~must;
      gboolean ok = FALSE;

      if (s->net->soft[i] || (s->net->mask[i] & (used | must)) != 0)
        continue;
      multi++;
      for (guint k = 0; k < s->h && !ok; k++)
        {
          if (open & (G_GUINT64_CONSTANT (1) << k))
            ok = can_cover (s, from, avail, must | (G_GUINT64_CONSTANT (1) << k));
        }
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static GArray *
mask_nodes (const Search *s, guint64 mask)
{
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint k = 0; k < s->h; k++)
    {
      if (mask & (G_GUINT64_CONSTANT (1) << k))
        g_array_append_val (nodes, ((const VpaNodeCap *) g_ptr_array_index (s->cap->nodes, k))->node);
    }
  return nodes;
}

static guint
placement_tiers (const VpaInventory *inv, const VpaGuestNodes *g, const VpaPlacement *pl)
{
  guint total = 0;

  for (guint i = 0; i < pl->assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (pl->assignments, i);
      for (guint j = 0; j < a->devices->len; j++)
        {
          total += vpa_policy_tier (inv->host, g,
                                    vpa_host_device (inv->host, g_array_index (a->devices, guint, j))->numa_node);
        }
    }
  return total;
}

/* The devices' tier total with the guest on the nodes of mask, or -1;
 * remembered per mask (the bounds of many states share one). */
static gint64
device_cost (Search *s, guint64 mask, VpaPlacement **out, GError **error)
{
  g_autoptr (GArray) nodes = NULL;
  g_autoptr (VpaPlacement) pl = NULL;
  VpaGuestNodes g;
  gpointer cached;

  if (s->requests == NULL || s->requests->len == 0)
    return 0;
  if (out == NULL && error == NULL && g_hash_table_lookup_extended (s->costs, &mask, NULL, &cached))
    return GPOINTER_TO_INT (cached) - 1;
  nodes = mask_nodes (s, mask);
  g.numa_guest = TRUE;
  g.nodes = (const gint *) (gpointer) nodes->data;
  g.n_nodes = nodes->len;
  s->n_runs++;
  pl = vpa_place_run (s->placer, &g, NULL, error);
  {
    gint64 cost = pl != NULL ? (gint64) placement_tiers (s->inv, &g, pl) : -1;
    if (out != NULL)
      *out = g_steal_pointer (&pl);
    g_hash_table_insert (s->costs, g_memdup2 (&mask, sizeof mask), GINT_TO_POINTER ((gint) cost + 1));
    return cost;
  }
}

/* Device tiers, then preferred network rules missed, as one number; -1
 * when the devices do not fit. Both only fall as the nodes grow, so the
 * cost of a superset bounds the cost of every leaf below it. */
static gint64
mask_cost (Search *s, guint64 mask)
{
  gint64 dc = device_cost (s, mask, NULL, NULL);

  if (dc < 0 || s->net == NULL)
    return dc;
  return dc * (gint64) s->net_weight + vpa_fit_net_masks_soft_misses (s->net, mask);
}

static gboolean
has_cost (const Search *s)
{
  return (s->requests != NULL && s->requests->len > 0) || (s->net != NULL && s->net->n_soft > 0);
}

/* Nodes some cell from..n-1 could still take. */
static guint64
reachable (const Search *s, guint from, guint64 used)
{
  guint64 m = 0;
  for (guint c = from; c < s->n; c++)
    m |= s->feasible[c];
  return m & ~used;
}

static void
walk (Search *s, guint depth, guint64 used)
{
  gpointer key;

  if (s->done)
    return;
  if (s->n_runs >= s->run_limit)
    return;
  if (s->net != NULL && ++s->n_net_states > MAX_NET_STATES)
    return;
  if (depth == s->n)
    {
      gint64 cost;

      if (!vpa_fit_net_masks_hard_met (s->net, used))
        return;
      cost = mask_cost (s, used);
      if (cost >= 0 && (s->best_cost < 0 || cost < s->best_cost))
        {
          s->best_cost = cost;
          memcpy (s->best, s->choice, s->n * sizeof (guint));
          s->done = cost <= s->lower;
        }
      return;
    }
  /* The used nodes decide everything below (depth is their count):
   * visited once, first in order. */
  key = g_memdup2 (&used, sizeof used);
  if (g_hash_table_contains (s->visited, key))
    {
      g_free (key);
      return;
    }
  g_hash_table_add (s->visited, key);
  if (depth > 0 && has_cost (s))
    {
      gint64 bound = mask_cost (s, used | reachable (s, depth, used));
      if (bound < 0 || (s->best_cost >= 0 && bound >= s->best_cost))
        return;
    }
  for (guint i = 0; i < s->h && !s->done; i++)
    {
      guint k = s->order[i];
      guint64 bit = G_GUINT64_CONSTANT (1) << k;

      if ((used & bit) || !(s->feasible[depth] & bit))
        continue;
      if (!can_complete (s, depth + 1, ~(used | bit)))
        continue;
      if (s->must != 0 && !can_cover (s, depth + 1, ~(used | bit), s->must & ~(used | bit)))
        continue;
      if (s->net != NULL && !net_can_meet (s, depth + 1, used | bit))
        continue;
      s->choice[depth] = k;
      walk (s, depth + 1, used | bit);
    }
}

/* The nodes of the devices the root placement chose. */
static guint64
root_nodes (const Search *s)
{
  guint64 m = 0;

  for (guint i = 0; s->root != NULL && i < s->root->assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (s->root->assignments, i);
      for (guint j = 0; j < a->devices->len; j++)
        {
          gint node = vpa_host_device (s->inv->host, g_array_index (a->devices, guint, j))->numa_node;
          for (guint k = 0; k < s->h; k++)
            {
              if (((const VpaNodeCap *) g_ptr_array_index (s->cap->nodes, k))->node == node)
                m |= G_GUINT64_CONSTANT (1) << k;
            }
        }
    }
  return m;
}

/* The walk in Nova's order finds the first mapping of least tiers. When
 * that takes more than a few device placements (large hosts, where the
 * root bound is loose), the mappings holding every node the root
 * placement used come first: each of them reaches the root bound, so
 * the first of them in Nova's order ends the search; only when none
 * exists does the exhaustive walk go on. */
#define FIRST_WALK_RUNS 3

static void
search_all (Search *s)
{
  s->run_limit = FIRST_WALK_RUNS;
  walk (s, 0, 0);
  if (s->done || s->n_runs < s->run_limit || s->requests == NULL || s->requests->len == 0)
    return;
  s->must = root_nodes (s);
  g_hash_table_remove_all (s->visited);
  s->run_limit = MAX_RUNS;
  if ((guint) __builtin_popcountll (s->must) <= s->n)
    walk (s, 0, 0);
  s->must = 0;
  if (s->done)
    return;
  g_hash_table_remove_all (s->visited);
  walk (s, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Nova's order of host cells                                          */
/* ------------------------------------------------------------------ */

typedef struct {
  const Search *s;
  const guint *n_dev;
} OrderCtx;

static gint
order_cmp (gconstpointer a, gconstpointer b, gpointer data)
{
  const OrderCtx *o = data;
  guint x = *(const guint *) a, y = *(const guint *) b;
  const VpaNodeCap *nx = g_ptr_array_index (o->s->cap->nodes, x);
  const VpaNodeCap *ny = g_ptr_array_index (o->s->cap->nodes, y);
  gboolean pack = o->s->guest->cell_pack;
  gboolean has_req = o->s->requests != NULL && o->s->requests->len > 0;
  guint64 mx, my;

  /* Nova sorts three times, stably: by free memory, then by CPU use,
   * then by PCI devices; the last sort decides first. */
  if (o->n_dev[x] != o->n_dev[y])
    return (o->n_dev[x] > o->n_dev[y]) == has_req ? -1 : 1;
  if (o->s->guest->cpu_policy == VPA_CPU_POLICY_DEDICATED &&
      nx->free_dedicated->len != ny->free_dedicated->len)
    return (nx->free_dedicated->len > ny->free_dedicated->len) != pack ? -1 : 1;
  if (o->s->guest->cpu_policy == VPA_CPU_POLICY_SHARED && nx->shared_used != ny->shared_used)
    return (nx->shared_used < ny->shared_used) != pack ? -1 : 1;
  /* Nova's avail_memory: ordinary memory, also for a hugepage guest */
  mx = nx->avail_kib;
  my = ny->avail_kib;
  if (mx != my)
    return (mx > my) != pack ? -1 : 1;
  return x < y ? -1 : x > y;
}

static void
nova_order (Search *s)
{
  g_autofree guint *n_dev = g_new0 (guint, s->h);
  const VpaHost *host = s->inv->host;
  OrderCtx o = { s, n_dev };

  for (guint i = 0; i < host->devices->len; i++)
    {
      gint node = vpa_host_device (host, i)->numa_node;
      if (!vpa_inventory_has (s->inv, i) || s->inv->state[i] != VPA_DEV_STATE_FREE)
        continue;
      for (guint k = 0; k < s->h; k++)
        {
          if (((const VpaNodeCap *) g_ptr_array_index (s->cap->nodes, k))->node == node)
            n_dev[k]++;
        }
    }
  for (guint k = 0; k < s->h; k++)
    s->order[k] = k;
  /* Nova sorts only when the host has more cells than the guest. */
  if (s->h > s->n)
    g_qsort_with_data (s->order, (gint) s->h, sizeof (guint), order_cmp, &o);
}

/* ------------------------------------------------------------------ */
/* Reports                                                             */
/* ------------------------------------------------------------------ */

static char *
cell_needs (const VpaFitCell *cell, const VpaFitGuest *guest)
{
  return g_strdup_printf ("%u %s vCPUs%s%s%s, %" G_GUINT64_FORMAT " KiB%s", cell->vcpus->len,
                          vpa_cpu_policy_to_string (guest->cpu_policy),
                          guest->cpu_policy == VPA_CPU_POLICY_DEDICATED ? " thread policy " : "",
                          guest->cpu_policy == VPA_CPU_POLICY_DEDICATED
                            ? vpa_thread_policy_to_string (guest->thread_policy)
                            : "",
                          cell->emulator_cpus > 0 ? " and a dedicated CPU for the emulator threads" : "",
                          cell->memory_kib, guest->page_kib != 0 ? " in hugepages" : "");
}

static void
explain_cells (const Search *s, GString *out, const guint *chosen)
{
  for (guint c = 0; c < s->n; c++)
    {
      const VpaFitCell *cell = &g_array_index (s->guest->cells, VpaFitCell, c);
      g_autofree char *needs = cell_needs (cell, s->guest);

      g_string_append_printf (out, "guest cell %u: needs %s\n", cell->id, needs);
      for (guint i = 0; i < s->h; i++)
        {
          guint k = s->order[i];
          const VpaNodeCap *nc = g_ptr_array_index (s->cap->nodes, k);
          g_autofree char *why = NULL;
          gboolean ok = vpa_fit_cell (nc, cell, s->guest, NULL, &why);

          g_string_append_printf (out, "  host node %d: %u shared CPUs, %u of %u dedicated free, %" G_GUINT64_FORMAT " KiB free", nc->node, nc->shared->len, nc->free_dedicated->len, nc->dedicated->len, nc->avail_kib);
          for (guint p = 0; p < nc->pages->len; p++)
            {
              const VpaNodePages *np = &g_array_index (nc->pages, VpaNodePages, p);
              g_string_append_printf (out, ", %" G_GUINT64_FORMAT " pages of %" G_GUINT64_FORMAT " KiB free", np->avail, np->size_kib);
            }
          if (!ok)
            {
              g_string_append_printf (out, ": lacks %s\n", why);
            }
          else if (chosen != NULL && chosen[c] == k)
            {
              g_string_append (out, ": chosen\n");
            }
          else
            {
              g_string_append (out, ": fits\n");
            }
        }
    }
}

/* Per cell what no node gives, naming the node that comes closest. */
static char *
failure_message (const Search *s)
{
  GString *msg = g_string_new (NULL);

  for (guint c = 0; c < s->n; c++)
    {
      const VpaFitCell *cell = &g_array_index (s->guest->cells, VpaFitCell, c);
      g_autofree char *needs = NULL;
      g_autofree char *first_why = NULL;
      gint first_node = -1;

      if (s->feasible[c] != 0)
        continue;
      for (guint i = 0; i < s->h && first_why == NULL; i++)
        {
          const VpaNodeCap *nc = g_ptr_array_index (s->cap->nodes, s->order[i]);
          vpa_fit_cell (nc, cell, s->guest, NULL, &first_why);
          first_node = nc->node;
        }
      needs = cell_needs (cell, s->guest);
      g_string_append_printf (msg, "%sguest cell %u (%s): no host node has it (node %d lacks %s)", msg->len > 0 ? "; " : "", cell->id, needs, first_node, first_why != NULL ? first_why : "everything");
    }
  if (msg->len == 0)
    g_string_append_printf (msg, "the %u guest cells cannot each have a host node of their own", s->n);
  return g_string_free (msg, FALSE);
}

static void
search_clear (Search *s)
{
  g_free (s->order);
  g_free (s->feasible);
  g_free (s->choice);
  g_free (s->best);
  g_clear_pointer (&s->visited, g_hash_table_unref);
  g_clear_pointer (&s->costs, g_hash_table_unref);
  g_clear_pointer (&s->placer, vpa_placer_free);
  g_clear_pointer (&s->root, vpa_placement_free);
  g_clear_pointer (&s->net, vpa_fit_net_masks_free);
}

static guint64
chosen_mask (const Search *s)
{
  guint64 mask = 0;

  for (guint c = 0; c < s->n; c++)
    mask |= G_GUINT64_CONSTANT (1) << s->best[c];
  return mask;
}

/* The first hard network rule no guest cell can meet on its own, or all
 * of them when only their combination cannot be met. */
static char *
net_failure_message (const Search *s)
{
  GString *msg = g_string_new (NULL);
  g_autoptr (GString) all = g_string_new (NULL);

  for (guint i = 0; i < s->net->n; i++)
    {
      g_autofree char *what = NULL;
      gboolean ok = FALSE;

      if (s->net->soft[i])
        continue;
      what = vpa_fit_net_rule_describe (s->net->rule[i]);
      g_string_append_printf (all, "%s%s", all->len > 0 ? "; " : "", what);
      for (guint k = 0; k < s->h && !ok; k++)
        {
          if (s->net->mask[i] & (G_GUINT64_CONSTANT (1) << k))
            ok = can_cover (s, 0, full_mask_of (s->h), G_GUINT64_CONSTANT (1) << k);
        }
      if (!ok && msg->len == 0)
        {
          g_string_append_printf (msg, "%s, and no guest cell can take %s", what,
                                  s->net->rule[i]->policy == VPA_POLICY_SOCKET
                                    ? "a host node on its socket"
                                    : "one of them");
        }
    }
  if (msg->len == 0)
    g_string_append_printf (msg, "the guest cells cannot take host nodes serving all of their ports' networks together: %s", all->str);
  return g_string_free (msg, FALSE);
}

static guint64
full_mask (guint h)
{
  return h >= 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT (1) << h) - 1;
}

static VpaFit *
fit_result (Search *s, GError **error)
{
  g_autoptr (VpaFit) fit = g_new0 (VpaFit, 1);
  guint64 mask = 0;

  fit->bindings = g_array_new (FALSE, TRUE, sizeof (VpaCellBinding));
  for (guint c = 0; c < s->n; c++)
    {
      VpaCellBinding b = { 0 };
      const VpaNodeCap *nc = g_ptr_array_index (s->cap->nodes, s->best[c]);
      vpa_fit_cell (nc, &g_array_index (s->guest->cells, VpaFitCell, c), s->guest, &b, NULL);
      g_array_append_val (fit->bindings, b);
      mask |= G_GUINT64_CONSTANT (1) << s->best[c];
    }
  fit->nodes = mask_nodes (s, mask);
  if (s->requests != NULL && s->requests->len > 0 &&
      device_cost (s, mask, &fit->placement, error) < 0)
    return NULL;
  fit->tier_total = (guint) (MAX (s->best_cost, 0) / (gint64) s->net_weight);
  fit->net_misses = (guint) (MAX (s->best_cost, 0) % (gint64) s->net_weight);
  fit->n_runs = s->n_runs;
  return g_steal_pointer (&fit);
}

VpaFit *
vpa_fit (const VpaCapacity *cap, const VpaInventory *inv, GPtrArray *requests,
         const VpaFitGuest *guest, GString *explain, GError **error)
{
  Search s = { 0 };
  VpaFit *fit = NULL;
  gboolean has_req = requests != NULL && requests->len > 0;

  g_return_val_if_fail (cap != NULL && inv != NULL && guest != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  s.cap = cap;
  s.inv = inv;
  s.requests = requests;
  s.guest = guest;
  s.n = guest->cells->len;
  s.h = cap->nodes->len;
  if (s.h > MAX_NODES)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "host %s: whole-guest placement handles at most %d NUMA nodes, not %u", inv->host->source, MAX_NODES, s.h);
      return NULL;
    }
  s.order = g_new0 (guint, MAX (s.h, 1));
  s.feasible = g_new0 (guint64, MAX (s.n, 1));
  s.choice = g_new0 (guint, MAX (s.n, 1));
  s.best = g_new0 (guint, MAX (s.n, 1));
  s.best_cost = -1;
  s.visited = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  s.costs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  s.net = vpa_fit_net_masks_new (cap, guest->net_rules);
  s.net_weight = s.net != NULL ? s.net->n_soft + 1 : 1;
  nova_order (&s);
  for (guint c = 0; c < s.n; c++)
    {
      for (guint k = 0; k < s.h; k++)
        {
          if (vpa_fit_cell (g_ptr_array_index (cap->nodes, k), &g_array_index (guest->cells, VpaFitCell, c), guest, NULL, NULL))
            s.feasible[c] |= G_GUINT64_CONSTANT (1) << k;
        }
    }
  for (guint c = 0; guest->fixed != NULL && c < s.n; c++)
    {
      for (guint k = 0; k < s.h; k++)
        {
          if (guest->fixed[c] >= 0 && ((const VpaNodeCap *) g_ptr_array_index (cap->nodes, k))->node != guest->fixed[c])
            s.feasible[c] &= ~(G_GUINT64_CONSTANT (1) << k);
        }
    }

  if (s.n > s.h || !can_complete (&s, 0, full_mask (s.h)))
    {
      g_autofree char *msg = failure_message (&s);
      if (explain != NULL)
        explain_cells (&s, explain, NULL);
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "%s", msg);
      search_clear (&s);
      return NULL;
    }
  if (s.net != NULL && !net_can_meet (&s, 0, 0))
    {
      g_autofree char *msg = net_failure_message (&s);
      if (explain != NULL)
        {
          explain_cells (&s, explain, NULL);
          vpa_fit_net_masks_explain (s.net, cap, 0, explain);
        }
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "%s", msg);
      search_clear (&s);
      return NULL;
    }
  if (has_req)
    {
      g_autoptr (GError) local = NULL;
      s.placer = vpa_placer_new (inv, requests);
      s.lower = device_cost (&s, reachable (&s, 0, 0), &s.root, &local);
      if (s.lower < 0)
        {
          if (explain != NULL)
            explain_cells (&s, explain, NULL);
          g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "no host nodes for the guest cells meet the device requests, even all together: %s", local->message);
          search_clear (&s);
          return NULL;
        }
    }
  if (s.net != NULL)
    {
      s.lower = s.lower * (gint64) s.net_weight +
                vpa_fit_net_masks_soft_misses (s.net, reachable (&s, 0, 0));
    }
  search_all (&s);
  if (s.best_cost < 0)
    {
      if (explain != NULL)
        explain_cells (&s, explain, NULL);
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "no set of %u host nodes holds the guest cells and meets the device requests together%s%s", s.n, s.net != NULL ? " with the ports' networks" : "", s.n_runs >= MAX_RUNS || s.n_net_states > MAX_NET_STATES ? " (search bound reached)" : "");
      search_clear (&s);
      return NULL;
    }
  if (explain != NULL)
    explain_cells (&s, explain, s.best);
  fit = fit_result (&s, error);
  if (explain != NULL && fit != NULL && s.net != NULL)
    vpa_fit_net_masks_explain (s.net, cap, chosen_mask (&s), explain);
  search_clear (&s);
  return fit;
}
