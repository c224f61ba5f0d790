/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups in placement: the search (vpa-locality.h).
 *
 * A group's members all go below one domain: a root port (level
 * switch), a host bridge (root-complex), a NUMA node, a socket, or, for
 * a preferred group that can have none of these, anywhere (system). A
 * choice of one domain per group is a mask on the placement's classes,
 * and the placement under a mask is the existing min-cost flow; the
 * cost order is the tier total, then the locality cost, then the rest of
 * the flow's cost. The locality cost is the sum over groups of W^e, e
 * the number of levels a group ends farther than it asked, W one more
 * than the number of groups: one group a level farther outweighs any
 * number of groups a level closer, so the best choice is the best
 * multiset of levels, the worst-off group first.
 *
 * The search: the unrestricted placement first; then each group's
 * domains in order of level, each checked by counting free devices
 * (enough for every member, and for all together); a greedy choice
 * (first domain whose counts still fit after the groups before it),
 * which is optimal and ends the search when its tier total is the
 * unrestricted one and every group has its closest countable level;
 * otherwise a depth-first branch and bound over the groups, solving the
 * placement at every node (a restriction never lowers the cost, so a
 * partial solution bounds all its completions).
 */
#include "vpa-locality.h"

#include <string.h>

/* Bounds the branch and bound: beyond this many solver runs the best
 * choice found so far is taken. */
#define SEARCH_MAX_SOLVES 2000

typedef struct {
  VpaLocality level;
  gint64 key;
  guint cls; /* the first class of the domain (describes it) */
} Anchor;

typedef struct {
  const VpaLocalityProblem *p;
  GPtrArray *groups; /* VpaLocalityGroupState* */
  GArray **options;  /* per group: Anchor, best first */
  gint64 *lb;        /* per group: locality cost of its first option */
  gint64 weight[VPA_LOCALITY_LAST + 1];
  guint8 *mask;
  guint *choice, *best;
  gboolean have_best;
  gint64 best_tier, best_loc, best_cost;
  gint64 tier0; /* the unrestricted tier total: no choice has less */
  guint solves;
} Search;

void
vpa_locality_group_state_free (VpaLocalityGroupState *g)
{
  if (g == NULL)
    return;
  g_free (g->name);
  g_array_unref (g->members);
  g_free (g);
}

GPtrArray *
vpa_locality_groups (GPtrArray *requests)
{
  GPtrArray *out =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_locality_group_state_free);

  for (guint r = 0; r < requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (requests, r);
      VpaLocalityGroupState *g = NULL;

      if (req->locality_group == NULL)
        continue;
      for (guint i = 0; i < out->len && g == NULL; i++)
        {
          if (strcmp (((VpaLocalityGroupState *) g_ptr_array_index (out, i))->name,
                      req->locality_group) == 0)
            g = g_ptr_array_index (out, i);
        }
      if (g == NULL)
        {
          g = g_new0 (VpaLocalityGroupState, 1);
          g->name = g_strdup (req->locality_group);
          g->level = req->locality_level;
          g->required = req->locality_required;
          g->members = g_array_new (FALSE, FALSE, sizeof (guint));
          g->alone = VPA_LOCALITY_LAST;
          g->chosen = VPA_LOCALITY_LAST;
          g->chosen_class = -1;
          g_ptr_array_add (out, g);
        }
      g_array_append_val (g->members, r);
    }
  return out;
}

#define OK(p, r, c) ((p)->ok[(gsize) (r) * (p)->n_cls + (c)])

static gboolean
in_domain (const VpaLocalityProblem *p, guint c, const Anchor *a)
{
  gint64 key;

  if (a->level == VPA_LOCALITY_SYSTEM)
    return TRUE;
  return vpa_pcie_locality_key (p->host, p->class_rep[c], a->level, &key) && key == a->key;
}

static guint
member_count (const VpaLocalityProblem *p, guint r)
{
  return ((const VpaRequest *) g_ptr_array_index (p->requests, r))->count;
}

/* Whether the domain's free devices (less used[]) could hold every member
 * of g: each on its own, and all of them together. */
static gboolean
domain_fits (const VpaLocalityProblem *p, const VpaLocalityGroupState *g, const Anchor *a,
             const guint *used)
{
  guint need = 0, have = 0;

  for (guint c = 0; c < p->n_cls; c++)
    {
      gboolean any = FALSE;
      for (guint m = 0; m < g->members->len && !any; m++)
        any = OK (p, g_array_index (g->members, guint, m), c);
      if (any && in_domain (p, c, a))
        have += p->class_free[c] - (used != NULL ? used[c] : 0);
    }
  for (guint m = 0; m < g->members->len; m++)
    {
      guint r = g_array_index (g->members, guint, m), mine = 0;
      need += member_count (p, r);
      for (guint c = 0; c < p->n_cls; c++)
        {
          if (OK (p, r, c) && in_domain (p, c, a))
            mine += p->class_free[c] - (used != NULL ? used[c] : 0);
        }
      if (mine < member_count (p, r))
        return FALSE;
    }
  return have >= need;
}

/* The classes of a domain that the group may use, as a string, to drop
 * a domain whose classes a closer one already has. */
static char *
domain_signature (const VpaLocalityProblem *p, const VpaLocalityGroupState *g, const Anchor *a)
{
  GString *s = g_string_new (NULL);

  for (guint c = 0; c < p->n_cls; c++)
    {
      gboolean any = FALSE;
      for (guint m = 0; m < g->members->len && !any; m++)
        any = OK (p, g_array_index (g->members, guint, m), c);
      if (any && in_domain (p, c, a))
        g_string_append_printf (s, "%u,", c);
    }
  return g_string_free (s, FALSE);
}

static GArray *
group_options (const VpaLocalityProblem *p, VpaLocalityGroupState *g)
{
  GArray *opts = g_array_new (FALSE, FALSE, sizeof (Anchor));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  VpaLocality last = g->required ? g->level : VPA_LOCALITY_SOCKET;

  for (guint level = g->level; level <= last; level++)
    {
      g_autoptr (GHashTable) keys = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                           NULL);
      for (guint c = 0; c < p->n_cls; c++)
        {
          Anchor a = { (VpaLocality) level, 0, c };
          gboolean any = FALSE;
          char *sig;

          for (guint m = 0; m < g->members->len && !any; m++)
            any = OK (p, g_array_index (g->members, guint, m), c);
          if (!any || !vpa_pcie_locality_key (p->host, p->class_rep[c], a.level, &a.key) ||
              g_hash_table_contains (keys, &a.key))
            continue;
          g_hash_table_add (keys, g_memdup2 (&a.key, sizeof a.key));
          if (!domain_fits (p, g, &a, NULL))
            continue;
          sig = domain_signature (p, g, &a);
          if (!g_hash_table_add (seen, sig))
            continue; /* a closer domain holds the same devices */
          g_array_append_val (opts, a);
        }
    }
  if (!g->required)
    {
      Anchor any = { VPA_LOCALITY_SYSTEM, 0, 0 };
      g_array_append_val (opts, any);
    }
  g->alone = opts->len > 0 ? g_array_index (opts, Anchor, 0).level : VPA_LOCALITY_LAST;
  return opts;
}

static gint64
option_cost (const Search *s, guint g, const Anchor *a)
{
  const VpaLocalityGroupState *gs = g_ptr_array_index (s->groups, g);
  return s->weight[a->level - gs->level];
}

/* Sets the mask rows of group g's members for anchor a (NULL: none). */
static void
apply_anchor (Search *s, guint g, const Anchor *a)
{
  const VpaLocalityProblem *p = s->p;
  const VpaLocalityGroupState *gs = g_ptr_array_index (s->groups, g);

  for (guint m = 0; m < gs->members->len; m++)
    {
      guint r = g_array_index (gs->members, guint, m);
      for (guint c = 0; c < p->n_cls; c++)
        s->mask[(gsize) r * p->n_cls + c] = a != NULL && OK (p, r, c) && !in_domain (p, c, a);
    }
}

static gboolean
run (Search *s, gint64 *tier, gint64 *cost)
{
  s->solves++;
  return s->p->solve (s->p->data, s->mask, tier, cost);
}

static gboolean
better (const Search *s, gint64 tier, gint64 loc, gint64 cost)
{
  if (!s->have_best)
    return TRUE;
  if (tier != s->best_tier)
    return tier < s->best_tier;
  if (loc != s->best_loc)
    return loc < s->best_loc;
  return cost < s->best_cost;
}

static void
record (Search *s, gint64 tier, gint64 loc, gint64 cost)
{
  if (!better (s, tier, loc, cost))
    return;
  s->have_best = TRUE;
  s->best_tier = tier;
  s->best_loc = loc;
  s->best_cost = cost;
  memcpy (s->best, s->choice, sizeof (guint) * MAX (s->groups->len, 1));
}

static void
branch (Search *s, guint g, gint64 loc)
{
  gint64 rest = 0;

  for (guint h = g + 1; h < s->groups->len; h++)
    rest += s->lb[h];
  for (guint i = 0; i < s->options[g]->len && s->solves < SEARCH_MAX_SOLVES; i++)
    {
      const Anchor *a = &g_array_index (s->options[g], Anchor, i);
      gint64 l = loc + option_cost (s, g, a), tier, cost;

      /* Options come closest first: once even the unrestricted tier
       * total with this locality cannot win, neither can the rest. */
      if (!better (s, s->tier0, l + rest, G_MININT64))
        break;
      s->choice[g] = i;
      apply_anchor (s, g, a);
      if (run (s, &tier, &cost) && better (s, tier, l + rest, cost))
        {
          if (g + 1 == s->groups->len)
            {
              record (s, tier, l, cost);
            }
          else
            {
              branch (s, g + 1, l);
            }
        }
      apply_anchor (s, g, NULL);
    }
}

/* The first domain of each group whose counts fit next to the groups
 * before it. */
static gboolean
greedy (Search *s, gint64 *loc)
{
  const VpaLocalityProblem *p = s->p;
  g_autofree guint *used = g_new0 (guint, MAX (p->n_cls, 1));

  *loc = 0;
  for (guint g = 0; g < s->groups->len; g++)
    {
      const VpaLocalityGroupState *gs = g_ptr_array_index (s->groups, g);
      gboolean found = FALSE;

      for (guint i = 0; i < s->options[g]->len && !found; i++)
        {
          const Anchor *a = &g_array_index (s->options[g], Anchor, i);
          if (!domain_fits (p, gs, a, used))
            continue;
          found = TRUE;
          s->choice[g] = i;
          *loc += option_cost (s, g, a);
          /* Take the members' devices from the domain, lowest class first. */
          for (guint m = 0; m < gs->members->len; m++)
            {
              guint r = g_array_index (gs->members, guint, m), left = member_count (p, r);
              for (guint c = 0; c < p->n_cls && left > 0; c++)
                {
                  guint n;
                  if (!OK (p, r, c) || !in_domain (p, c, a))
                    continue;
                  n = MIN (left, p->class_free[c] - used[c]);
                  used[c] += n;
                  left -= n;
                }
            }
        }
      if (!found)
        return FALSE;
    }
  return TRUE;
}

static void
search_clear (Search *s)
{
  for (guint g = 0; s->options != NULL && g < s->groups->len; g++)
    g_array_unref (s->options[g]);
  g_free (s->options);
  g_free (s->lb);
  g_free (s->choice);
  g_free (s->best);
}

static void
finish (Search *s, guint8 *mask)
{
  memset (mask, 0, (gsize) s->p->n_req * s->p->n_cls);
  s->mask = mask;
  for (guint g = 0; g < s->groups->len; g++)
    {
      VpaLocalityGroupState *gs = g_ptr_array_index (s->groups, g);
      const Anchor *a = &g_array_index (s->options[g], Anchor, s->best[g]);

      gs->chosen = a->level;
      gs->chosen_class = a->level == VPA_LOCALITY_SYSTEM ? -1 : (gint) a->cls;
      apply_anchor (s, g, a);
    }
}

gboolean
vpa_locality_search (const VpaLocalityProblem *p, GPtrArray *groups, guint8 *mask,
                     guint *solves)
{
  Search s = { p, groups };
  g_autofree guint8 *work = g_new0 (guint8, MAX ((gsize) p->n_req * p->n_cls, 1));
  gint64 tier0, cost0, loc, tier, cost, lb_total = 0;
  gboolean feasible = TRUE;

  s.mask = work;
  s.weight[0] = 1;
  for (guint e = 1; e <= VPA_LOCALITY_LAST; e++)
    s.weight[e] = s.weight[e - 1] * ((gint64) groups->len + 1);
  s.options = g_new0 (GArray *, MAX (groups->len, 1));
  s.lb = g_new0 (gint64, MAX (groups->len, 1));
  s.choice = g_new0 (guint, MAX (groups->len, 1));
  s.best = g_new0 (guint, MAX (groups->len, 1));
  for (guint g = 0; g < groups->len; g++)
    {
      s.options[g] = group_options (p, g_ptr_array_index (groups, g));
      if (s.options[g]->len == 0)
        {
          feasible = FALSE;
        }
      else
        {
          s.lb[g] = option_cost (&s, g, &g_array_index (s.options[g], Anchor, 0));
        }
      lb_total += s.lb[g];
    }
  if (!feasible || !run (&s, &tier0, &cost0))
    {
      /* nothing fits, or the requests cannot be placed at all */
      *solves = s.solves;
      search_clear (&s);
      return FALSE;
    }
  s.tier0 = tier0;
  if (greedy (&s, &loc))
    {
      for (guint g = 0; g < groups->len; g++)
        apply_anchor (&s, g, &g_array_index (s.options[g], Anchor, s.choice[g]));
      if (run (&s, &tier, &cost))
        record (&s, tier, loc, cost);
      memset (work, 0, (gsize) p->n_req * p->n_cls);
    }
  /* The greedy choice has every lower bound: nothing can beat it but the
   * rest of the cost, which only a tie on both could improve. */
  if (!(s.have_best && s.best_tier == tier0 && s.best_loc == lb_total))
    branch (&s, 0, 0);
  *solves = s.solves;
  if (!s.have_best)
    {
      search_clear (&s);
      return FALSE;
    }
  finish (&s, mask);
  search_clear (&s);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

static void
group_placement_free (VpaGroupPlacement *g)
{
  if (g == NULL)
    return;
  g_free (g->name);
  g_free (g->where);
  g_free (g->why);
  if (g->devices != NULL)
    g_array_unref (g->devices);
  g_free (g);
}

/* The host indices of the devices of the group's requests. */
static GArray *
assignments_group_devices (GPtrArray *assignments, const char *group)
{
  GArray *devs = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (assignments, i);
      if (g_strcmp0 (a->request->locality_group, group) == 0)
        g_array_append_vals (devs, a->devices->data, a->devices->len);
    }
  return devs;
}

static GArray *
group_devices (const VpaPlacement *placement, const char *group)
{
  return assignments_group_devices (placement->assignments, group);
}

VpaLocality
vpa_locality_assignments_group (const VpaInventory *inv, GPtrArray *assignments,
                                const char *group)
{
  g_autoptr (GArray) devs = assignments_group_devices (assignments, group);

  return vpa_pcie_locality_of (inv->host, (const guint *) (void *) devs->data, devs->len);
}

VpaLocality
vpa_locality_placement_group (const VpaInventory *inv, const VpaPlacement *placement,
                              const char *group)
{
  return vpa_locality_assignments_group (inv, placement->assignments, group);
}

static char *
describe_where (const VpaHost *host, const GArray *devs, VpaLocality level)
{
  guint first = devs->len > 0 ? g_array_index (devs, guint, 0) : 0;
  const VpaDevice *dev = devs->len > 0 ? vpa_host_device (host, first) : NULL;
  char a[VPA_ADDR_BUFLEN], b[VPA_ADDR_BUFLEN];
  gint sw = -1, rp;

  if (dev == NULL)
    return g_strdup ("-");
  switch (level)
    {
    case VPA_LOCALITY_SWITCH:
      rp = vpa_pcie_root_port (host, first);
      sw = vpa_pcie_switch (host, first);
      for (guint k = 1; k < devs->len && sw >= 0; k++)
        {
          if (vpa_pcie_switch (host, g_array_index (devs, guint, k)) != sw)
            sw = -1;
        }
      if (sw >= 0)
        {
          return g_strdup_printf ("switch %s (root port %s)",
                                  vpa_addr_format (vpa_host_device (host, (guint) sw)->addr, a),
                                  vpa_addr_format (vpa_host_device (host, (guint) rp)->addr, b));
        }
      return g_strdup_printf ("root port %s",
                              vpa_addr_format (vpa_host_device (host, (guint) rp)->addr, a));
    case VPA_LOCALITY_ROOT_COMPLEX:
      {
        g_autofree char *root = vpa_pcie_root_name (dev->pcie_root);
        return g_strdup_printf ("host bridge %s", root);
      }
    case VPA_LOCALITY_NUMA_NODE:
      return g_strdup_printf ("NUMA node %d", dev->numa_node);
    case VPA_LOCALITY_SOCKET:
      return g_strdup_printf ("socket %d", vpa_host_node_socket (host, dev->numa_node));
    case VPA_LOCALITY_SYSTEM:
    case VPA_LOCALITY_LAST:
    default:
      return g_strdup ("-");
    }
}

static const char *const level_nouns[] = { "switch", "host bridge", "NUMA node", "socket",
                                           "system" };
G_STATIC_ASSERT (G_N_ELEMENTS (level_nouns) == VPA_LOCALITY_LAST);

static char *
describe_why (const VpaLocalityGroupState *g, VpaLocality reached)
{
  GString *s;

  if (reached <= g->level)
    return NULL;
  s = g_string_new (NULL);
  if (g->alone > g->level)
    {
      g_string_append (s, "no ");
      for (guint l = g->level; l < g->alone && l < VPA_LOCALITY_SYSTEM; l++)
        g_string_append_printf (s, "%s%s", l > g->level ? " or " : "", level_nouns[l]);
      g_string_append (s, " has enough free devices their NUMA policies allow for all its "
                          "members");
    }
  if (reached > g->alone && g->alone < VPA_LOCALITY_LAST)
    {
      g_string_append_printf (s, "%sa %s would cost a worse NUMA tier, or another locality "
                                 "group a closer level",
                              s->len > 0 ? "; " : "", level_nouns[g->alone]);
    }
  return g_string_free (s, FALSE);
}

GPtrArray *
vpa_locality_place_group_results (const VpaInventory *inv, const VpaPlacement *placement,
                                  GPtrArray *groups)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) group_placement_free);

  for (guint i = 0; i < groups->len; i++)
    {
      const VpaLocalityGroupState *g = g_ptr_array_index (groups, i);
      GArray *devs = group_devices (placement, g->name);
      VpaGroupPlacement *gp = g_new0 (VpaGroupPlacement, 1);

      gp->name = g_strdup (g->name);
      gp->level = g->level;
      gp->required = g->required;
      gp->reached = vpa_pcie_locality_of (inv->host, (const guint *) (void *) devs->data,
                                          devs->len);
      gp->where = describe_where (inv->host, devs, gp->reached);
      gp->why = describe_why (g, gp->reached);
      gp->devices = devs;
      g_ptr_array_add (out, gp);
    }
  return out;
}
