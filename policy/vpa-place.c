/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Placement: all requests of a domain assigned together (docs/placement.md).
 *
 * Free devices fall into classes of interchangeable devices (same
 * match-relevant properties, NUMA node and parent PF). Requests are
 * routed to classes by a min-cost flow whose cost per device is, in
 * lexicographic order, its tier (affine, socket, unknown, remote), a
 * penalty for breaking a whole PF, and the class rank (lowest address
 * first). PF/VF exclusivity is not a flow constraint, so requests that
 * may take PFs are routed in a separate phase, before or after the
 * others (whichever gives the cheaper result), with a last resort of
 * one request after the other in domain order, which is what Nova does.
 *
 * The classes, eligibility and weights are vpa-place-classes.c, the flow
 * itself is vpa-flow.c; why a placement fails and each candidate's
 * verdict are vpa-explain.c (vpa-place-private.h between them).
 */
#include "vpa-place-private.h"

#include <string.h>

#include "vpa-flow.h"

/* ------------------------------------------------------------------ */
/* Requests, candidates, results                                       */
/* ------------------------------------------------------------------ */

void
vpa_candidate_free (VpaCandidate *cand)
{
  if (cand == NULL)
    return;
  g_free (cand->pool);
  g_free (cand->verdict);
  g_free (cand);
}

static void
assignment_free (VpaAssignment *asg)
{
  if (asg == NULL)
    return;
  g_array_unref (asg->devices);
  g_ptr_array_unref (asg->candidates);
  g_free (asg);
}

void
vpa_placement_free (VpaPlacement *placement)
{
  if (placement == NULL)
    return;
  g_ptr_array_unref (placement->assignments);
  if (placement->groups != NULL)
    g_ptr_array_unref (placement->groups);
  g_free (placement);
}

static gint
index_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

static PlaceState *
state_new (const Place *pl)
{
  PlaceState *st = g_new0 (PlaceState, 1);

  st->cap = g_new (gint64, MAX (pl->n_cls, 1));
  st->broken = g_new0 (gboolean, MAX (pl->n_cls, 1));
  st->alloc = g_new0 (guint, MAX ((gsize) pl->n_req * pl->n_cls, 1));
  st->group_used = g_new0 (gboolean, MAX ((gsize) pl->n_groups * pl->n_pf_ids, 1));
  for (guint c = 0; c < pl->n_cls; c++)
    st->cap[c] = CLASS (pl, c)->free_devs->len;
  return st;
}

void
vpa_place_state_free (PlaceState *st)
{
  if (st == NULL)
    return;
  g_free (st->cap);
  g_free (st->broken);
  g_free (st->alloc);
  g_free (st->group_used);
  g_free (st);
}

/* The per-device cost of class c in state st. */
static gint64
class_cost (const Place *pl, const PlaceState *st, guint c)
{
  const PlaceClass *k = CLASS (pl, c);
  gint64 pen = 0;

  if (k->dev->dev_type == VPA_DEV_TYPE_VF && k->pf_class >= 0 && k->pf_whole &&
      !st->broken[k->pf_class] && st->cap[k->pf_class] > 0)
    {
      pen = pl->pf_wanted[k->pf_class] ? 2 : 1;
    }
  else if (k->dev->dev_type == VPA_DEV_TYPE_PF && pl->vf_wanted[c])
    {
      pen = 1;
    }
  return (gint64) k->tier * pl->w_tier + (gint64) k->dist * pl->w_dist + pen * pl->w_pen +
         (gint64) c * pl->w_rank;
}

/* ------------------------------------------------------------------ */
/* Phases and strategies                                               */
/* ------------------------------------------------------------------ */

/* Bookkeeping for pf-group nodes: one capacity-1 node per (group, PF). */
typedef struct {
  guint in_edge;     /* in -> out, capacity 1 */
  GArray *req_edges; /* guint: request -> in edges, paired with req_ids */
  GArray *req_ids;
  GArray *cls_edges; /* guint: out -> class edges, paired with cls_ids */
  GArray *cls_ids;
  guint out_node;
} GroupNode;

static void
group_node_free (GroupNode *g)
{
  g_array_unref (g->req_edges);
  g_array_unref (g->req_ids);
  g_array_unref (g->cls_edges);
  g_array_unref (g->cls_ids);
  g_free (g);
}

static GroupNode *
group_node_get (const Place *pl, VpaFlow *f, GPtrArray *gnodes, gint *gindex, guint g, guint c)
{
  gsize slot = (gsize) g * pl->n_pf_ids + CLASS (pl, c)->pf_id;
  GroupNode *gn;
  guint in_node;

  if (gindex[slot] >= 0)
    return g_ptr_array_index (gnodes, gindex[slot]);
  gn = g_new0 (GroupNode, 1);
  in_node = vpa_flow_add_node (f);
  gn->out_node = vpa_flow_add_node (f);
  gn->in_edge = vpa_flow_add_edge (f, in_node, gn->out_node, 1, 0);
  gn->req_edges = g_array_new (FALSE, FALSE, sizeof (guint));
  gn->req_ids = g_array_new (FALSE, FALSE, sizeof (guint));
  gn->cls_edges = g_array_new (FALSE, FALSE, sizeof (guint));
  gn->cls_ids = g_array_new (FALSE, FALSE, sizeof (guint));
  gindex[slot] = (gint) gnodes->len;
  g_ptr_array_add (gnodes, gn);
  return gn;
}

static void
group_link (VpaFlow *f, GroupNode *gn, guint r, guint r_node, guint c, guint c_node,
            gint64 cost)
{
  guint in_node = g_array_index (f->edges, VpaFlowEdge, gn->in_edge ^ 1).to;
  gboolean have_r = FALSE, have_c = FALSE;
  guint e;

  for (guint i = 0; i < gn->req_ids->len && !have_r; i++)
    have_r = g_array_index (gn->req_ids, guint, i) == r;
  for (guint i = 0; i < gn->cls_ids->len && !have_c; i++)
    have_c = g_array_index (gn->cls_ids, guint, i) == c;
  if (!have_r)
    {
      e = vpa_flow_add_edge (f, r_node, in_node, 1, 0);
      g_array_append_val (gn->req_edges, e);
      g_array_append_val (gn->req_ids, r);
    }
  if (!have_c)
    {
      e = vpa_flow_add_edge (f, gn->out_node, c_node, 1, cost);
      g_array_append_val (gn->cls_edges, e);
      g_array_append_val (gn->cls_ids, c);
    }
}

/* Takes n devices of class c for request r: capacity, cost, and PF/VF
 * exclusivity inside this placement. */
static void
state_take (const Place *pl, PlaceState *st, guint r, guint c, guint n)
{
  const PlaceClass *k = CLASS (pl, c);

  if (n == 0)
    return;
  st->cost += class_cost (pl, st, c) * (gint64) n;
  ALLOC (pl, st, r, c) += n;
  st->cap[c] -= n;
  if (k->dev->dev_type == VPA_DEV_TYPE_PF)
    {
      for (guint v = 0; v < pl->n_cls; v++)
        {
          if (CLASS (pl, v)->pf_class == (gint) c)
            st->cap[v] = 0;
        }
    }
  else if (k->pf_class >= 0)
    {
      st->cap[k->pf_class] = 0;
      st->broken[k->pf_class] = TRUE;
    }
}

/* Routes the requests reqs[0..n) over what st has left. FALSE when they
 * cannot all be met (st is then unusable). */
static gboolean
place_phase (const Place *pl, PlaceState *st, const guint *reqs, guint n, gboolean groups,
             const gboolean *forbid, gboolean *unsat)
{
  VpaFlow f;
  guint base_cls = 2 + n;
  g_autoptr (GPtrArray) gnodes = g_ptr_array_new_with_free_func ((GDestroyNotify) group_node_free);
  g_autofree gint *gindex = NULL;
  g_autoptr (GArray) req_edges = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) req_pairs = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree guint *src_edges = g_new (guint, MAX (n, 1));
  g_autofree gint64 *cost = g_new (gint64, MAX (pl->n_cls, 1));
  gint64 need = 0, got;
  gboolean ok = TRUE;

  if (n == 0)
    return TRUE;
  gindex = g_new (gint, MAX ((gsize) pl->n_groups * pl->n_pf_ids, 1));
  memset (gindex, 0xff, sizeof (gint) * MAX ((gsize) pl->n_groups * pl->n_pf_ids, 1));
  vpa_flow_init (&f, base_cls + pl->n_cls);
  for (guint c = 0; c < pl->n_cls; c++)
    {
      cost[c] = class_cost (pl, st, c);
      if (st->cap[c] > 0)
        vpa_flow_add_edge (&f, base_cls + c, 1, st->cap[c], 0);
    }
  for (guint i = 0; i < n; i++)
    {
      guint r = reqs[i];
      gint g = groups ? pl->group[r] : -1;

      need += REQ (pl, r)->count;
      src_edges[i] = vpa_flow_add_edge (&f, 0, 2 + i, REQ (pl, r)->count, 0);
      for (guint c = 0; c < pl->n_cls; c++)
        {
          guint e;
          if (ELIG (pl, r, c) != ELIG_OK || st->cap[c] <= 0 || (forbid && forbid[c]))
            continue;
          if (g >= 0)
            {
              GroupNode *gn;
              /* An earlier phase gave this PF to the group already. */
              if (st->group_used[(gsize) g * pl->n_pf_ids + CLASS (pl, c)->pf_id])
                continue;
              gn = group_node_get (pl, &f, gnodes, gindex, (guint) g, c);
              group_link (&f, gn, r, 2 + i, c, base_cls + c, cost[c]);
              continue;
            }
          e = vpa_flow_add_edge (&f, 2 + i, base_cls + c, REQ (pl, r)->count, cost[c]);
          g_array_append_val (req_edges, e);
          g_array_append_val (req_pairs, r);
          g_array_append_val (req_pairs, c);
        }
    }
  got = vpa_flow_run (&f, 0, 1, need);
  if (got < need)
    ok = FALSE;
  for (guint i = 0; !ok && unsat != NULL && i < n; i++)
    {
      if (vpa_flow_of (&f, src_edges[i]) < REQ (pl, reqs[i])->count)
        unsat[reqs[i]] = TRUE;
    }
  for (guint i = 0; ok && i < req_edges->len; i++)
    {
      state_take (pl, st, g_array_index (req_pairs, guint, 2 * i),
                  g_array_index (req_pairs, guint, 2 * i + 1),
                  (guint) vpa_flow_of (&f, g_array_index (req_edges, guint, i)));
    }
  for (guint i = 0; ok && i < gnodes->len; i++)
    {
      GroupNode *gn = g_ptr_array_index (gnodes, i);
      gint r = -1, c = -1;

      if (vpa_flow_of (&f, gn->in_edge) == 0)
        continue;
      for (guint j = 0; j < gn->req_edges->len; j++)
        {
          if (vpa_flow_of (&f, g_array_index (gn->req_edges, guint, j)) > 0)
            r = (gint) g_array_index (gn->req_ids, guint, j);
        }
      for (guint j = 0; j < gn->cls_edges->len; j++)
        {
          if (vpa_flow_of (&f, g_array_index (gn->cls_edges, guint, j)) > 0)
            c = (gint) g_array_index (gn->cls_ids, guint, j);
        }
      /* The (group, PF) node forgets which request entered it; a class
       * that request may not use makes this routing invalid. */
      if (r < 0 || c < 0 || ELIG (pl, r, c) != ELIG_OK)
        {
          ok = FALSE;
        }
      else
        {
          state_take (pl, st, (guint) r, (guint) c, 1);
          st->group_used[(gsize) pl->group[r] * pl->n_pf_ids + CLASS (pl, c)->pf_id] = TRUE;
        }
    }
  vpa_flow_clear (&f);
  return ok;
}

/* A PF and one of its VFs taken inside the same phase. */
static gboolean
state_valid (const Place *pl, const PlaceState *st)
{
  g_autofree guint *used = g_new0 (guint, MAX (pl->n_cls, 1));

  for (guint r = 0; r < pl->n_req; r++)
    {
      for (guint c = 0; c < pl->n_cls; c++)
        used[c] += ALLOC (pl, st, r, c);
    }
  for (guint c = 0; c < pl->n_cls; c++)
    {
      const PlaceClass *k = CLASS (pl, c);
      if (used[c] > k->free_devs->len)
        return FALSE;
      if (used[c] > 0 && k->pf_class >= 0 && used[k->pf_class] > 0)
        return FALSE;
    }
  return TRUE;
}

/* Runs the phases in order. On failure returns NULL; *failed (if not
 * NULL) is the phase that failed, *fail_st the state it left and unsat
 * the requests it could not meet. */
static PlaceState *
place_run_phases (const Place *pl, GPtrArray *phases, gboolean groups,
                  const gboolean *forbid, guint *failed, PlaceState **fail_st,
                  gboolean *unsat)
{
  g_autoptr (PlaceState) st = state_new (pl);

  for (guint i = 0; i < phases->len; i++)
    {
      GArray *ph = g_ptr_array_index (phases, i);
      if (!place_phase (pl, st, (const guint *) (void *) ph->data, ph->len, groups, forbid,
                        unsat))
        {
          if (failed != NULL)
            *failed = i;
          if (fail_st != NULL)
            *fail_st = g_steal_pointer (&st);
          return NULL;
        }
    }
  if (!state_valid (pl, st))
    return NULL;
  return g_steal_pointer (&st);
}

static gboolean
state_uses (const Place *pl, const PlaceState *st, guint c)
{
  for (guint r = 0; r < pl->n_req; r++)
    {
      if (ALLOC (pl, st, r, c) > 0)
        return TRUE;
    }
  return FALSE;
}

/* After a failed second phase: what to keep away from the first one.
 * PFs first: the PFs whose VFs the unmet requests needed. VFs first: the
 * VFs of the PFs the unmet PF requests could have taken. */
static gboolean
place_refine (const Place *pl, const PlaceState *st, const gboolean *unsat,
              gboolean pfs_first, gboolean *forbid)
{
  gboolean added = FALSE;

  for (guint r = 0; r < pl->n_req; r++)
    {
      for (guint c = 0; unsat[r] && c < pl->n_cls; c++)
        {
          const PlaceClass *k = CLASS (pl, c);
          if (ELIG (pl, r, c) != ELIG_OK)
            continue;
          if (pfs_first && k->pf_class >= 0 && !forbid[k->pf_class] &&
              state_uses (pl, st, (guint) k->pf_class))
            {
              forbid[k->pf_class] = TRUE;
              added = TRUE;
            }
          if (!pfs_first && k->dev->dev_type == VPA_DEV_TYPE_PF && st->broken[c])
            {
              for (guint v = 0; v < pl->n_cls; v++)
                {
                  if (CLASS (pl, v)->pf_class == (gint) c && !forbid[v])
                    {
                      forbid[v] = TRUE;
                      added = TRUE;
                    }
                }
            }
        }
    }
  return added;
}

/* Two phases, refined until they fit or nothing more can be kept away
 * from the first: at most one round per class. */
static PlaceState *
place_two_phases (const Place *pl, GArray *first, GArray *second, gboolean groups,
                  gboolean pfs_first)
{
  g_autoptr (GPtrArray) phases = g_ptr_array_new ();
  g_autofree gboolean *forbid = g_new0 (gboolean, MAX (pl->n_cls, 1));
  g_autofree gboolean *unsat = g_new0 (gboolean, MAX (pl->n_req, 1));

  g_ptr_array_add (phases, first);
  g_ptr_array_add (phases, second);
  for (guint round = 0; round <= pl->n_cls; round++)
    {
      g_autoptr (PlaceState) fail_st = NULL;
      guint failed = 0;
      PlaceState *st;

      memset (unsat, 0, sizeof (gboolean) * MAX (pl->n_req, 1));
      st = place_run_phases (pl, phases, groups, forbid, &failed, &fail_st, unsat);
      if (st != NULL)
        return st;
      if (fail_st == NULL || failed != 1 ||
          !place_refine (pl, fail_st, unsat, pfs_first, forbid))
        return NULL;
    }
  return NULL;
}

GArray *
vpa_place_req_list_new (void)
{
  return g_array_new (FALSE, FALSE, sizeof (guint));
}

/* The best placement of the requests subset[0..n), or NULL. */
PlaceState *
vpa_place_solve (const Place *pl, const guint *subset, guint n, gboolean groups)
{
  g_autoptr (GPtrArray) seq = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GArray) pfs = vpa_place_req_list_new ();
  g_autoptr (GArray) rest = vpa_place_req_list_new ();
  g_autoptr (PlaceState) a = NULL;
  g_autoptr (PlaceState) b = NULL;

  for (guint i = 0; i < n; i++)
    g_array_append_val (pl->wants_pf[subset[i]] ? pfs : rest, subset[i]);
  /* PF requests first, so that they pick PFs whose VFs nobody needs... */
  a = place_two_phases (pl, pfs, rest, groups, TRUE);
  if (pfs->len > 0 && rest->len > 0)
    {
      /* ...or last, so that the others keep whole PFs free for them. */
      b = place_two_phases (pl, rest, pfs, groups, FALSE);
      if (b != NULL && (a == NULL || b->cost < a->cost))
        return g_steal_pointer (&b);
    }
  if (a != NULL)
    return g_steal_pointer (&a);
  if (pfs->len == 0 && !groups)
    return NULL;
  /* Last resort, Nova's own shape: one request after the other. */
  for (guint i = 0; i < n; i++)
    {
      GArray *one = vpa_place_req_list_new ();
      g_array_append_val (one, subset[i]);
      g_ptr_array_add (seq, one);
    }
  return place_run_phases (pl, seq, groups, NULL, NULL, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Locality groups (the search is in vpa-locality.c)                   */
/* ------------------------------------------------------------------ */

static void
apply_mask (Place *pl, const guint8 *mask)
{
  gsize n = (gsize) pl->n_req * pl->n_cls;

  for (gsize i = 0; i < n; i++)
    {
      pl->elig[i] = mask != NULL && mask[i] && pl->elig_base[i] == ELIG_OK ? ELIG_LOCALITY
                                                                           : pl->elig_base[i];
    }
}

static gboolean
locality_solve (gpointer data, const guint8 *mask, gint64 *tier, gint64 *cost)
{
  Place *pl = data;
  const guint n = pl->requests->len;
  g_autofree guint *all = g_new (guint, MAX (n, 1));
  g_autoptr (PlaceState) st = NULL;
  gint64 tiers = 0, dists = 0, units = 0;

  apply_mask (pl, mask);
  for (guint r = 0; r < n; r++)
    all[r] = r;
  st = vpa_place_solve (pl, all, n, TRUE);
  if (st == NULL)
    return FALSE;
  /* The search's first key: the tier total, then (NUMA distance within
   * the tiers, before locality) the distance total. */
  for (guint r = 0; r < pl->n_req; r++)
    {
      for (guint c = 0; c < pl->n_cls; c++)
        {
          tiers += (gint64) ALLOC (pl, st, r, c) * CLASS (pl, c)->tier;
          dists += (gint64) ALLOC (pl, st, r, c) * CLASS (pl, c)->dist;
          units += ALLOC (pl, st, r, c);
        }
    }
  *tier = tiers * (units * VPA_PLACE_DIST_MAX + 1) + dists;
  *cost = st->cost;
  return TRUE;
}

static char *
group_members (const Place *pl, const VpaLocalityGroupState *g)
{
  GString *s = g_string_new (NULL);

  for (guint m = 0; m < g->members->len; m++)
    {
      g_string_append_printf (s, "%s%s", m > 0 ? ", " : "",
                              REQ (pl, g_array_index (g->members, guint, m))->label);
    }
  return g_string_free (s, FALSE);
}

/* Why the search failed; NULL when the requests fail without groups too
 * (the usual diagnosis then speaks). */
static char *
locality_failure (Place *pl)
{
  gint64 tier, cost;

  apply_mask (pl, NULL);
  if (!locality_solve (pl, NULL, &tier, &cost))
    return NULL;
  apply_mask (pl, NULL);
  for (guint g = 0; g < pl->lgroups->len; g++)
    {
      const VpaLocalityGroupState *gs = g_ptr_array_index (pl->lgroups, g);
      g_autofree char *members = group_members (pl, gs);

      if (gs->required && gs->alone == VPA_LOCALITY_LAST)
        {
          return g_strdup_printf ("locality group '%s' (level %s, policy required): no %s holds "
                                  "enough free devices their NUMA policies allow for %s",
                                  gs->name, vpa_locality_to_string (gs->level),
                                  vpa_locality_to_string (gs->level), members);
        }
    }
  return g_strdup ("the required locality groups cannot all be met together with the other "
                   "requests");
}

/* Runs the search and leaves elig masked with its choice. FALSE with
 * *msg set when the required groups cannot be met. */
static gboolean
place_locality (Place *pl, char **msg)
{
  VpaLocalityProblem p = { pl->n_req, pl->n_cls, pl->host, pl->requests };
  g_autofree guint *rep = g_new (guint, MAX (pl->n_cls, 1));
  g_autofree guint *free_n = g_new (guint, MAX (pl->n_cls, 1));
  gsize n = (gsize) pl->n_req * pl->n_cls;
  g_autofree gboolean *ok = g_new (gboolean, MAX (n, 1));
  g_autofree guint8 *mask = g_new0 (guint8, MAX (n, 1));

  *msg = NULL;
  pl->elig_base = g_memdup2 (pl->elig, MAX (n, 1));
  pl->lgroups = vpa_locality_groups (pl->requests);
  for (guint c = 0; c < pl->n_cls; c++)
    {
      rep[c] = CLASS (pl, c)->rep;
      free_n[c] = CLASS (pl, c)->free_devs->len;
    }
  for (gsize i = 0; i < n; i++)
    ok[i] = pl->elig[i] == ELIG_OK;
  p.class_rep = rep;
  p.class_free = free_n;
  p.ok = ok;
  p.solve = locality_solve;
  p.data = pl;
  if (!vpa_locality_search (&p, pl->lgroups, mask, &pl->solves))
    {
      *msg = locality_failure (pl);
      return FALSE;
    }
  apply_mask (pl, mask);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

/* st NULL: candidates only (a failed placement). */
static VpaPlacement *
place_result (const Place *pl, const PlaceState *st)
{
  VpaPlacement *res = g_new0 (VpaPlacement, 1);
  g_autofree guint *cursor = g_new0 (guint, MAX (pl->n_cls, 1));

  res->assignments = g_ptr_array_new_with_free_func ((GDestroyNotify) assignment_free);
  for (guint r = 0; r < pl->n_req; r++)
    {
      VpaAssignment *asg = g_new0 (VpaAssignment, 1);

      asg->request = REQ (pl, r);
      asg->devices = g_array_new (FALSE, FALSE, sizeof (guint));
      asg->candidates = vpa_explain_candidates (pl, r, st);
      for (guint c = 0; st != NULL && c < pl->n_cls; c++)
        {
          GArray *free_devs = CLASS (pl, c)->free_devs;
          for (guint n = ALLOC (pl, st, r, c); n > 0; n--)
            {
              g_array_append_val (asg->devices,
                                  g_array_index (free_devs, guint, cursor[c]++));
            }
        }
      g_array_sort (asg->devices, index_cmp);
      g_ptr_array_add (res->assignments, asg);
    }
  if (st != NULL && pl->lgroups != NULL)
    res->groups = vpa_locality_place_group_results (pl->inv, res, pl->lgroups);
  res->locality_solves = pl->solves;
  return res;
}

/* The classes are built once; each run sets the guest's nodes, which
 * only change the tiers and what follows from them. */
struct _VpaPlacer {
  Place pl;
};

static const VpaGuestNodes no_guest = { FALSE, NULL, 0 };

VpaPlacer *
vpa_placer_new (const VpaInventory *inv, GPtrArray *requests)
{
  VpaPlacer *p;

  g_return_val_if_fail (inv != NULL && inv->host != NULL && inv->host->sealed, NULL);
  g_return_val_if_fail (requests != NULL, NULL);
  p = g_new0 (VpaPlacer, 1);
  p->pl.inv = inv;
  p->pl.host = inv->host;
  p->pl.requests = requests;
  p->pl.guest = &no_guest;
  p->pl.n_req = requests->len;
  for (guint r = 0; r < p->pl.n_req; r++)
    p->pl.split_pcie |= REQ (&p->pl, r)->locality_group != NULL;
  vpa_place_build_classes (&p->pl);
  return p;
}

void
vpa_placer_free (VpaPlacer *p)
{
  if (p == NULL)
    return;
  vpa_place_clear (&p->pl);
  g_free (p);
}

gboolean
vpa_place_has_classes (const VpaPlacer *p, gint node)
{
  for (guint c = 0; c < p->pl.n_cls; c++)
    {
      if (CLASS (&p->pl, c)->numa_node == node && CLASS (&p->pl, c)->free_devs->len > 0)
        return TRUE;
    }
  return FALSE;
}

VpaPlacement *
vpa_place_run (VpaPlacer *p, const VpaGuestNodes *guest, VpaPlacement **explain,
               GError **error)
{
  Place *pl = &p->pl;
  g_autoptr (PlaceState) st = NULL;
  g_autofree guint *all = NULL;
  g_autofree char *msg = NULL;

  g_return_val_if_fail (guest != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  pl->guest = guest;
  for (guint c = 0; c < pl->n_cls; c++)
    vpa_place_class_set_tier (pl, CLASS (pl, c));
  vpa_place_clear_derived (pl);
  pl->solves = 0;
  vpa_place_build_eligibility (pl);
  vpa_place_build_demand (pl);
  vpa_place_weights (pl);

  if (pl->split_pcie && !place_locality (pl, &msg) && msg != NULL)
    {
      g_set_error_literal (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, msg);
      if (explain != NULL)
        *explain = place_result (pl, NULL);
      pl->guest = &no_guest;
      return NULL;
    }
  all = g_new (guint, MAX (pl->n_req, 1));
  for (guint r = 0; r < pl->n_req; r++)
    all[r] = r;
  st = vpa_place_solve (pl, all, pl->n_req, TRUE);
  pl->guest = &no_guest;
  if (st != NULL)
    {
      VpaPlacement *res;
      pl->guest = guest;
      res = place_result (pl, st);
      pl->guest = &no_guest;
      return res;
    }

  pl->guest = guest;
  msg = vpa_explain_diagnose (pl);
  g_set_error_literal (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, msg);
  if (explain != NULL)
    *explain = place_result (pl, NULL);
  pl->guest = &no_guest;
  return NULL;
}

VpaPlacement *
vpa_place_explain (const VpaInventory *inv, GPtrArray *requests,
                   const VpaGuestNodes *guest, VpaPlacement **explain, GError **error)
{
  g_autoptr (VpaPlacer) p = NULL;

  g_return_val_if_fail (inv != NULL && inv->host != NULL && inv->host->sealed, NULL);
  g_return_val_if_fail (requests != NULL && guest != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  p = vpa_placer_new (inv, requests);
  return vpa_place_run (p, guest, explain, error);
}

VpaPlacement *
vpa_place (const VpaInventory *inv, GPtrArray *requests, const VpaGuestNodes *guest,
           GError **error)
{
  return vpa_place_explain (inv, requests, guest, NULL, error);
}
