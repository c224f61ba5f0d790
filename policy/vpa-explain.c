/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Why a placement fails, and every candidate pool of each request with
 * its verdict (docs/placement.md, "The algorithm", step 6): the messages of
 * VPA_ERROR_UNSATISFIABLE and the candidates --explain shows.
 */
#include "vpa-place-private.h"

/* ------------------------------------------------------------------ */
/* Explanations                                                        */
/* ------------------------------------------------------------------ */

static char *
request_header (const VpaRequest *req)
{
  return g_strdup_printf ("%s (policy %s from %s)", req->label,
                          vpa_policy_to_string (req->policy),
                          vpa_policy_source_to_string (req->policy_source));
}

/* Why class c does not serve request r, or NULL when it may. */
static char *
class_refusal (const Place *pl, guint r, guint c)
{
  const PlaceClass *k = CLASS (pl, c);
  g_autofree char *why = NULL;

  switch ((Elig) ELIG (pl, r, c))
    {
    case ELIG_NO_PF:
      return g_strdup ("refused: a type-PF, which the request does not ask for");
    case ELIG_NO_RM:
      return g_strdup ("refused: remote-managed, which the request does not ask for");
    case ELIG_POLICY:
      why = vpa_policy_refusal (REQ (pl, r)->policy, pl->host, pl->guest, k->numa_node);
      return g_strdup_printf ("refused: %s", why ? why : "not allowed by the policy");
    case ELIG_LOCALITY:
      return g_strdup_printf ("refused: outside where locality group '%s' is placed",
                              REQ (pl, r)->locality_group);
    case ELIG_NONE:
    case ELIG_OK:
    default:
      return NULL;
    }
}

static char *
format_specs (const VpaRequest *req)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < req->specs->len; i++)
    {
      const VpaSpec *spec = g_ptr_array_index (req->specs, i);
      g_string_append (s, i > 0 ? " or " : "");
      for (guint j = 0; j < spec->pairs->len; j++)
        {
          const VpaSpecPair *p = g_ptr_array_index (spec->pairs, j);
          /* None is Nova's: the device must not have the key (a port
           * without physnet wants a device without physical_network). */
          if (p->value != NULL)
            {
              g_string_append_printf (s, "%s%s='%s'", j > 0 ? ", " : "", p->key, p->value);
            }
          else
            {
              g_string_append_printf (s, "%s%s unset", j > 0 ? ", " : "", p->key);
            }
        }
    }
  return g_string_free (s, FALSE);
}

/* "POOL refused: WHY; POOL: N free" with classes of the same short label
 * and verdict merged (VFs of many PFs make one part). */
static char *
request_parts (const Place *pl, guint r)
{
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) verdicts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) frees = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GString *s = g_string_new (NULL);
  gboolean skip_pfs = FALSE;

  /* Unrequested PFs sharing the spec are noise next to real candidates. */
  for (guint c = 0; c < pl->n_cls && !skip_pfs; c++)
    skip_pfs = ELIG (pl, r, c) != ELIG_NONE && ELIG (pl, r, c) != ELIG_NO_PF;
  for (guint c = 0; c < pl->n_cls; c++)
    {
      const PlaceClass *k = CLASS (pl, c);
      char *why;
      char *key;
      gpointer idx;
      guint n = k->free_devs->len;

      if (ELIG (pl, r, c) == ELIG_NONE || (ELIG (pl, r, c) == ELIG_NO_PF && skip_pfs))
        continue;
      why = class_refusal (pl, r, c);
      key = g_strdup_printf ("%s\x1f%s", k->short_label, why ? why : "");
      if (g_hash_table_lookup_extended (seen, key, NULL, &idx))
        {
          g_array_index (frees, guint, GPOINTER_TO_UINT (idx)) += n;
          g_free (key);
          g_free (why);
          continue;
        }
      g_hash_table_insert (seen, key, GUINT_TO_POINTER (labels->len));
      g_ptr_array_add (labels, g_strdup (k->short_label));
      g_ptr_array_add (verdicts, why);
      g_array_append_val (frees, n);
    }
  for (guint i = 0; i < labels->len; i++)
    {
      const char *why = g_ptr_array_index (verdicts, i);
      guint n = g_array_index (frees, guint, i);
      g_string_append (s, i > 0 ? "; " : "");
      if (why != NULL)
        {
          g_string_append_printf (s, "%s %s", (char *) g_ptr_array_index (labels, i), why);
        }
      else
        {
          g_string_append_printf (s, "%s: %u free", (char *) g_ptr_array_index (labels, i), n);
        }
    }
  return g_string_free (s, FALSE);
}

static char *
request_failure (const Place *pl, guint r, const char *busy)
{
  const VpaRequest *req = REQ (pl, r);
  g_autofree char *head = request_header (req);
  g_autofree char *parts = request_parts (pl, r);
  g_autofree char *specs = NULL;

  if (*parts == '\0')
    {
      specs = format_specs (req);
      return g_strdup_printf ("%s: no device in the inventory matches %s", head, specs);
    }
  /* The competitors once, in the head; the count asked for when more
   * than one ("1 free" alone hides that 3 are needed). */
  if (busy != NULL && req->count > 1)
    {
      return g_strdup_printf ("%s: not enough free devices for its %u besides %s: %s", head,
                              req->count, busy, parts);
    }
  if (busy != NULL)
    {
      return g_strdup_printf ("%s: not enough free devices for it besides %s: %s", head, busy,
                              parts);
    }
  if (req->count > 1)
    {
      return g_strdup_printf ("%s: %u devices needed, not enough free: %s", head, req->count,
                              parts);
    }
  return g_strdup_printf ("%s: no free device: %s", head, parts);
}

static char *
group_failure (const Place *pl, guint g)
{
  g_autoptr (GString) ports = g_string_new (NULL);
  g_autoptr (GString) pfs = g_string_new (NULL);
  g_autofree gboolean *pf_seen = g_new0 (gboolean, MAX (pl->n_pf_ids, 1));
  const char *name = NULL;
  guint n_ports = 0, n_pfs = 0;

  for (guint r = 0; r < pl->n_req; r++)
    {
      if (pl->group[r] != (gint) g)
        continue;
      name = REQ (pl, r)->pf_group;
      g_string_append_printf (ports, "%s%s", n_ports++ > 0 ? ", " : "", REQ (pl, r)->label);
      for (guint c = 0; c < pl->n_cls; c++)
        {
          const PlaceClass *k = CLASS (pl, c);
          char buf[VPA_ADDR_BUFLEN];
          if (ELIG (pl, r, c) != ELIG_OK || k->free_devs->len == 0 || pf_seen[k->pf_id])
            continue;
          pf_seen[k->pf_id] = TRUE;
          g_string_append_printf (pfs, "%s%s", n_pfs++ > 0 ? ", " : "",
                                  vpa_addr_format (k->pf_addr, buf));
        }
    }
  return g_strdup_printf ("pf-group '%s': %s need devices of %u distinct PFs, but the free devices their policies allow are on %u PF%s%s%s%s",
                          name, ports->str, n_ports, n_pfs, n_pfs == 1 ? "" : "s",
                          n_pfs > 0 ? " (" : "", pfs->str, n_pfs > 0 ? ")" : "");
}

static gboolean
place_solvable (const Place *pl, const guint *subset, guint n, gboolean groups)
{
  g_autoptr (PlaceState) st = vpa_place_solve (pl, subset, n, groups);
  return st != NULL;
}

/* Names the first request, group or competition that makes it fail. */
char *
vpa_explain_diagnose (const Place *pl)
{
  g_autofree guint *all = g_new (guint, MAX (pl->n_req, 1));
  g_autoptr (GString) busy = g_string_new (NULL);

  for (guint r = 0; r < pl->n_req; r++)
    {
      all[r] = r;
      if (!place_solvable (pl, &r, 1, TRUE))
        return request_failure (pl, r, NULL);
    }
  for (guint g = 0; g < pl->n_groups; g++)
    {
      g_autoptr (GArray) members = vpa_place_req_list_new ();
      for (guint r = 0; r < pl->n_req; r++)
        {
          if (pl->group[r] == (gint) g)
            g_array_append_val (members, r);
        }
      if (!place_solvable (pl, (const guint *) (void *) members->data, members->len, TRUE))
        return group_failure (pl, g);
    }
  for (guint k = 2; k <= pl->n_req; k++)
    {
      if (place_solvable (pl, all, k, TRUE))
        continue;
      if (place_solvable (pl, all, k, FALSE) && pl->group[k - 1] >= 0)
        return group_failure (pl, (guint) pl->group[k - 1]);
      /* Those before it that compete for the same classes. */
      for (guint r = 0; r + 1 < k; r++)
        {
          gboolean shares = FALSE;
          for (guint c = 0; c < pl->n_cls && !shares; c++)
            shares = ELIG (pl, r, c) == ELIG_OK && ELIG (pl, k - 1, c) == ELIG_OK;
          if (shares)
            {
              g_string_append_printf (busy, "%s%s", busy->len > 0 ? ", " : "",
                                      REQ (pl, r)->label);
            }
        }
      return request_failure (pl, k - 1, busy->len > 0 ? busy->str : "the other requests");
    }
  return request_failure (pl, pl->n_req > 0 ? pl->n_req - 1 : 0, "the other requests");
}

GPtrArray *
vpa_explain_candidates (const Place *pl, guint r, const PlaceState *st)
{
  GPtrArray *cands = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_candidate_free);

  for (guint c = 0; c < pl->n_cls; c++)
    {
      const PlaceClass *k = CLASS (pl, c);
      VpaCandidate *cand;
      char *why;

      if (ELIG (pl, r, c) == ELIG_NONE)
        continue;
      cand = g_new0 (VpaCandidate, 1);
      cand->pool = g_strdup (k->label);
      cand->numa_node = k->numa_node;
      cand->socket = k->numa_node == VPA_NUMA_NONE
                       ? VPA_SOCKET_NONE
                       : vpa_host_node_socket (pl->host, k->numa_node);
      cand->free = k->free_devs->len;
      cand->tier = k->tier;
      cand->taken = st != NULL ? ALLOC (pl, st, r, c) : 0;
      why = class_refusal (pl, r, c);
      if (why != NULL)
        {
          cand->verdict = why;
        }
      else if (cand->taken > 0)
        {
          cand->verdict = k->dist > 0 && k->dist < VPA_PLACE_DIST_MAX
                            ? g_strdup_printf ("taken %u (nearest allowed: distance %u)", cand->taken, k->dist + 10)
                            : g_strdup_printf ("taken %u", cand->taken);
        }
      else if (cand->free == 0 && k->n_reserved > 0)
        {
          cand->verdict = g_strdup_printf ("0 free (%u held, %u blocked, %u reserved)", k->n_held,
                                           k->n_blocked, k->n_reserved);
        }
      else if (cand->free == 0)
        {
          cand->verdict = g_strdup_printf ("0 free (%u held, %u blocked)", k->n_held,
                                           k->n_blocked);
        }
      else if (st != NULL)
        {
          cand->verdict = g_strdup ("not needed");
        }
      else
        {
          cand->verdict = g_strdup_printf ("%u free", cand->free);
        }
      g_ptr_array_add (cands, cand);
    }
  return cands;
}
