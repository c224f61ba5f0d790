/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every committed conformance scenario (data/conformance/) against
 * Nova's recorded outcome: where Nova places, we place too, with a tier
 * total no worse; where Nova fails, we fail, unless a valid assignment
 * exists (found by brute force on small scenarios, or ours, checked
 * independently), which then counts as a documented improvement.
 */
#include <string.h>
#include "place-scenario.h"

typedef struct {
  guint scenarios, skipped, policy_errors, matched_ok, matched_fail, unverified_fail;
  guint better_tiers, exact, unique_optimum, nova_splits_group;
  GHashTable *improved; /* category -> count */
} Counts;

static Counts counts;

static void
check_policy_error (const Scenario *sc)
{
  /* Nova refused the requests: so must we, as bad input. */
  g_assert_nonnull (sc->policy_error);
  g_assert_error (sc->policy_error, VPA_ERROR, VPA_ERROR_INVALID);
  if (strcmp (sc->nova_error, "ImagePCINUMAPolicyForbidden") == 0)
    {
      g_assert_nonnull (strstr (sc->policy_error->message, "not permitted to override"));
    }
  else
    {
      g_assert_cmpstr (sc->nova_error, ==, "InvalidPCINUMAAffinity");
    }
  counts.policy_errors++;
}

static gboolean
same_alloc (GPtrArray *a, GPtrArray *b)
{
  for (guint r = 0; r < a->len; r++)
    {
      GArray *x = g_ptr_array_index (a, r), *y = g_ptr_array_index (b, r);
      g_autoptr (GHashTable) set = g_hash_table_new (NULL, NULL);
      if (x->len != y->len)
        return FALSE;
      for (guint k = 0; k < x->len; k++)
        g_hash_table_add (set, GUINT_TO_POINTER (g_array_index (x, guint, k) + 1));
      for (guint k = 0; k < y->len; k++)
        {
          if (!g_hash_table_contains (set, GUINT_TO_POINTER (g_array_index (y, guint, k) + 1)))
            return FALSE;
        }
    }
  return TRUE;
}

static void
count_improved (const char *category)
{
  gpointer n = g_hash_table_lookup (counts.improved, category);
  g_hash_table_insert (counts.improved, g_strdup (category),
                       GUINT_TO_POINTER (GPOINTER_TO_UINT (n) + 1));
}

static void
check_scenario (gconstpointer data)
{
  const Scenario *sc = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaPlacement) pl = NULL;
  g_autoptr (GPtrArray) ours = NULL;
  g_autoptr (GPtrArray) best_alloc = NULL;
  guint n_valid = 0, best = G_MAXUINT, n_best = 0;
  gboolean small;

  counts.scenarios++;
  if (sc->skip != NULL)
    {
      counts.skipped++;
      g_test_skip (sc->skip);
      return;
    }
  if (sc->nova_error != NULL)
    {
      check_policy_error (sc);
      return;
    }
  g_assert_no_error (sc->policy_error);
  if (!sc->policies_match)
    g_error ("%s: %s", sc->name, sc->policy_mismatch);

  pl = vpa_place (sc->inv, sc->requests, &sc->guest, &error);
  g_assert_true ((pl == NULL) == (error != NULL));
  if (pl != NULL)
    {
      g_autofree char *why = NULL;
      ours = placement_alloc (pl);
      why = scenario_check (sc, ours);
      if (why != NULL)
        g_error ("%s: our placement is invalid: %s", sc->name, why);
    }
  else
    g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  small = scenario_brute_force (sc, &n_valid, &best, &n_best, &best_alloc);

  if (small && ours != NULL)
    {
      /* Minimal total tier among all valid assignments. */
      g_assert_cmpuint (scenario_tier_cost (sc, ours), ==, best);
      if (n_best == 1)
        {
          counts.unique_optimum++;
          g_assert_true (same_alloc (ours, best_alloc));
        }
    }
  if (small && ours == NULL && n_valid > 0)
    g_error ("%s: a valid assignment exists but we failed: %s", sc->name, error->message);

  if (sc->nova_ok)
    {
      guint nova_cost;
      g_autofree char *why = scenario_check (sc, sc->nova_alloc);

      /* Nova has no pf-group: its choice may put a group on one PF. */
      if (why != NULL && strstr (why, "pf-group") != NULL)
        {
          counts.nova_splits_group++;
          return;
        }
      if (ours == NULL)
        g_error ("%s: Nova places it, we fail: %s", sc->name, error->message);
      /* Nova's choice is valid in our model, so ours is no worse. */
      g_assert_null (why);
      nova_cost = scenario_tier_cost (sc, sc->nova_alloc);
      g_assert_cmpuint (scenario_tier_cost (sc, ours), <=, nova_cost);
      if (scenario_tier_cost (sc, ours) < nova_cost)
        counts.better_tiers++;
      if (same_alloc (ours, sc->nova_alloc))
        counts.exact++;
      counts.matched_ok++;
      return;
    }
  if (ours != NULL)
    {
      count_improved (sc->nova_failure ? sc->nova_failure : "joint-assignment");
      return;
    }
  if (small)
    {
      counts.matched_fail++;
    }
  else
    {
      counts.unverified_fail++;
    }
}

static void
report (void)
{
  GHashTableIter it;
  gpointer k, v;
  guint improved = 0;
  g_autoptr (GString) cats = g_string_new (NULL);

  g_hash_table_iter_init (&it, counts.improved);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      improved += GPOINTER_TO_UINT (v);
      g_string_append_printf (cats, " %s=%u", (char *) k, GPOINTER_TO_UINT (v));
    }
  g_test_message ("conformance: %u scenarios: matched %u (both place %u, of which %u "
                  "identical and %u with better tiers; both fail %u, %u of them too large "
                  "to prove by brute force); improved %u:%s; policy errors %u; "
                  "unique optimum checked %u; Nova ignoring a pf-group %u; skipped %u",
                  counts.scenarios, counts.matched_ok + counts.matched_fail + counts.unverified_fail, counts.matched_ok, counts.exact,
                  counts.better_tiers, counts.matched_fail + counts.unverified_fail,
                  counts.unverified_fail, improved, cats->str, counts.policy_errors,
                  counts.unique_optimum, counts.nova_splits_group, counts.skipped);
}

int
main (int argc, char **argv)
{
  const char *files[] = { "nova-tests.json", "random.json", "targeted.json",
                          "regressions.json" };
  g_autoptr (GPtrArray) all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  int ret;

  g_test_init (&argc, &argv, NULL);
  counts.improved = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree char *path = g_build_filename (VPA_TEST_DATA, "conformance", files[f], NULL);
      g_autoptr (GError) error = NULL;
      GPtrArray *scs = scenarios_load (path, &error);

      g_assert_no_error (error);
      for (guint i = 0; i < scs->len; i++)
        {
          const Scenario *sc = g_ptr_array_index (scs, i);
          g_autofree char *name = g_strdup_printf ("/conformance/%s/%u", files[f], i);
          g_test_add_data_func (name, sc, check_scenario);
        }
      g_ptr_array_add (all, scs);
    }
  ret = g_test_run ();
  report ();
  g_hash_table_unref (counts.improved);
  return ret;
}
