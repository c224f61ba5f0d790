/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The whole-guest fit against the committed scenarios of
 * data/conformance/fit (tools/conformance/FIT-FORMAT.md): Nova's own
 * numa_fit_instance_to_host and an independent brute force recorded
 * each outcome. Per scenario: where the brute force finds no fit we find
 * none; where it finds one we find one, a mapping it lists, with its
 * least device tier total (so never worse than Nova's); where Nova fails
 * and we fit, the scenario counts as a place we beat Nova. Scenarios
 * outside what a libvirt domain can say (page sizes "large"/"any") are
 * counted and skipped.
 */
#include <string.h>

#include "place-scenario.h"
#include "vpa-fit.h"
#include "vpa-test-util.h"

typedef struct {
  guint total, skipped, both_fit, both_fail, beats_nova, nova_invalid, preferred, isolate_smt;
  guint better_tiers;
  guint cat_cache, cat_pci;
} Counts;

static GArray *
uint_list (JsonObject *o, const char *key)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint));
  JsonArray *arr = json_object_has_member (o, key) ? json_object_get_array_member (o, key) : NULL;

  for (guint i = 0; arr != NULL && i < json_array_get_length (arr); i++)
    {
      guint v = (guint) json_array_get_int_element (arr, i);
      g_array_append_val (a, v);
    }
  return a;
}

static gboolean
has (const GArray *a, guint v)
{
  for (guint i = 0; i < a->len; i++)
    if (g_array_index (a, guint, i) == v)
      return TRUE;
  return FALSE;
}

static gint64
int_member (JsonObject *o, const char *key, gint64 dflt)
{
  return json_object_has_member (o, key) && !JSON_NODE_HOLDS_NULL (json_object_get_member (o, key))
           ? json_object_get_int_member (o, key)
           : dflt;
}

static guint
sibling_group (JsonObject *hc, guint cpu, guint *set_len)
{
  JsonArray *sibs = json_object_has_member (hc, "siblings") ? json_object_get_array_member (hc, "siblings") : NULL;

  *set_len = 1;
  for (guint i = 0; sibs != NULL && i < json_array_get_length (sibs); i++)
    {
      JsonArray *set = json_array_get_array_element (sibs, i);
      guint lowest = G_MAXUINT;
      gboolean in = FALSE;
      for (guint j = 0; j < json_array_get_length (set); j++)
        {
          guint c = (guint) json_array_get_int_element (set, j);
          lowest = MIN (lowest, c);
          in = in || c == cpu;
        }
      if (in)
        {
          *set_len = json_array_get_length (set);
          return lowest;
        }
    }
  return cpu;
}

/* Nova's inputs in our model: the node as the capacity would be after
 * [host] and the claims; Nova's allocation ratios and shared vCPU usage
 * (which the project does not count) become the room left. */
static VpaNodeCap *
node_from_json (JsonObject *hc, JsonObject *limits, const char *cpu_policy, gboolean *smt_split)
{
  VpaNodeCap *nc = g_new0 (VpaNodeCap, 1);
  g_autoptr (GArray) cpus = uint_list (hc, "cpus");
  g_autoptr (GArray) pinned = uint_list (hc, "pinned");
  guint64 mem = (guint64) int_member (hc, "memory_mb", 0) * 1024;
  guint64 used = (guint64) int_member (hc, "memory_used_mb", 0) * 1024;
  JsonArray *pages = json_object_has_member (hc, "mempages") ? json_object_get_array_member (hc, "mempages") : NULL;
  guint64 small_total = G_MAXUINT64;

  nc->node = (gint) json_object_get_int_member (hc, "id");
  nc->socket = (gint) int_member (hc, "socket", -1);
  nc->shared = uint_list (hc, "shared");
  nc->dedicated = uint_list (hc, "dedicated");
  nc->free_dedicated = g_array_new (FALSE, FALSE, sizeof (guint));
  nc->free_groups = g_array_new (FALSE, FALSE, sizeof (guint));
  nc->pages = g_array_new (FALSE, FALSE, sizeof (VpaNodePages));
  nc->n_cpus = cpus->len;
  nc->shared_room = G_MAXUINT;
  for (guint i = 0; i < cpus->len; i++)
    {
      guint cpu = g_array_index (cpus, guint, i), len;
      guint group = sibling_group (hc, cpu, &len);
      nc->threads_per_core = MAX (nc->threads_per_core, len);
      if (has (nc->dedicated, cpu) && !has (pinned, cpu))
        {
          g_array_append_val (nc->free_dedicated, cpu);
          g_array_append_val (nc->free_groups, group);
        }
    }
  *smt_split = nc->threads_per_core > 1 && nc->shared->len != nc->dedicated->len;
  for (guint i = 0; !*smt_split && nc->threads_per_core > 1 && i < nc->shared->len; i++)
    *smt_split = !has (nc->dedicated, g_array_index (nc->shared, guint, i));
  for (guint i = 0; pages != NULL && i < json_array_get_length (pages); i++)
    {
      JsonObject *p = json_array_get_object_element (pages, i);
      VpaNodePages np = { (guint64) int_member (p, "size_kb", 0), (guint64) int_member (p, "total", 0),
                          (guint64) int_member (p, "reserved", 0), (guint64) int_member (p, "used", 0), 0 };
      np.avail = np.total > np.reserved + np.claimed ? np.total - np.reserved - np.claimed : 0;
      if (np.size_kib <= 4)
        {
          small_total = np.total * np.size_kib;
          continue;
        }
      g_array_append_val (nc->pages, np);
    }
  nc->memory_kib = mem;
  nc->claimed_kib = used;
  if (g_strcmp0 (cpu_policy, "dedicated") == 0)
    nc->avail_kib = MIN (mem > used ? mem - used : 0, small_total);
  else if (limits != NULL)
    {
      gdouble ram = json_object_get_double_member (limits, "ram_allocation_ratio");
      gdouble cpu = json_object_get_double_member (limits, "cpu_allocation_ratio");
      gdouble room_kib = (gdouble) mem * ram - (gdouble) used;
      gdouble room_cpu = (gdouble) nc->shared->len * cpu - (gdouble) int_member (hc, "cpu_usage", 0);
      nc->avail_kib = MIN (room_kib > 0 ? (guint64) room_kib : 0, small_total);
      nc->shared_room = room_cpu > 0 ? (guint) room_cpu : 0;
      nc->shared_used = (guint) int_member (hc, "cpu_usage", 0);
    }
  else
    nc->avail_kib = MIN (mem, small_total);
  return nc;
}

static void
node_free (VpaNodeCap *nc)
{
  g_array_unref (nc->shared);
  g_array_unref (nc->dedicated);
  g_array_unref (nc->free_dedicated);
  g_array_unref (nc->free_groups);
  g_array_unref (nc->pages);
  g_free (nc);
}

/* Whether mapping (host nodes per cell) is in brute.mappings, and its tier cost. */
static gboolean
brute_has (JsonObject *brute, const VpaFit *fit, gint64 *cost)
{
  JsonArray *maps = json_object_get_array_member (brute, "mappings");

  for (guint i = 0; i < json_array_get_length (maps); i++)
    {
      JsonObject *m = json_array_get_object_element (maps, i);
      JsonArray *cells = json_object_get_array_member (m, "cells");
      gboolean same = json_array_get_length (cells) == fit->bindings->len;
      for (guint c = 0; same && c < fit->bindings->len; c++)
        same = json_array_get_int_element (cells, c) == g_array_index (fit->bindings, VpaCellBinding, c).node;
      if (same)
        {
          *cost = json_object_get_int_member (m, "tier_cost");
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
is_preferred (JsonObject *brute, const VpaFit *fit)
{
  JsonArray *pref = json_object_has_member (brute, "preferred") && !JSON_NODE_HOLDS_NULL (json_object_get_member (brute, "preferred"))
                      ? json_object_get_array_member (brute, "preferred")
                      : NULL;
  for (guint c = 0; pref != NULL && c < fit->bindings->len; c++)
    if (json_array_get_int_element (pref, c) != g_array_index (fit->bindings, VpaCellBinding, c).node)
      return FALSE;
  return pref != NULL;
}

/* Guest cells; FALSE for a page size a domain cannot ask for. */
static gboolean
guest_from_json (JsonObject *g, GArray *cells, GPtrArray *keep, VpaFitGuest *guest)
{
  JsonArray *arr = json_object_get_array_member (g, "cells");
  const char *tp = json_object_has_member (g, "cpu_thread_policy") ? json_object_get_string_member (g, "cpu_thread_policy") : "prefer";

  guest->cpu_policy = strcmp (json_object_get_string_member (g, "cpu_policy"), "dedicated") == 0
                        ? VPA_CPU_POLICY_DEDICATED
                        : VPA_CPU_POLICY_SHARED;
  g_assert_true (vpa_thread_policy_from_string (tp, &guest->thread_policy));
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      JsonObject *c = json_array_get_object_element (arr, i);
      VpaFitCell cell = { i, uint_list (c, "cpus"), (guint64) json_object_get_int_member (c, "memory_mb") * 1024 };
      JsonNode *ps = json_object_get_member (c, "pagesize");

      g_ptr_array_add (keep, cell.vcpus);
      g_array_append_val (cells, cell);
      if (ps == NULL || JSON_NODE_HOLDS_NULL (ps))
        continue;
      if (json_node_get_value_type (ps) == G_TYPE_STRING)
        {
          if (strcmp (json_node_get_string (ps), "small") != 0)
            return FALSE;
          continue; /* the smallest pages: ordinary memory */
        }
      guest->page_kib = (guint64) json_node_get_int (ps);
    }
  guest->cells = cells;
  return TRUE;
}

static void
run_scenario (JsonObject *obj, Counts *n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) sc = scenario_from_json (obj, &error);
  JsonObject *brute = json_object_get_object_member (obj, "brute");
  JsonObject *nova = json_object_get_object_member (obj, "nova");
  const char *verdict = json_object_get_string_member (json_object_get_object_member (obj, "compare"), "verdict");
  const char *name = json_object_get_string_member (obj, "name");
  JsonObject *limits = json_object_has_member (obj, "limits") ? json_object_get_object_member (obj, "limits") : NULL;
  JsonArray *hcs = json_object_get_array_member (obj, "host_cells");
  g_autoptr (GArray) cells = g_array_new (FALSE, TRUE, sizeof (VpaFitCell));
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  VpaCapacity cap = { g_ptr_array_new_with_free_func ((GDestroyNotify) node_free) };
  VpaFitGuest guest = { 0 };
  g_autoptr (VpaFit) fit = NULL;
  g_autoptr (GError) fit_error = NULL;
  gboolean brute_fits = json_object_get_boolean_member (brute, "fits");
  gboolean nova_fits = json_object_get_boolean_member (nova, "fits");
  gboolean smt_split = FALSE;
  gint64 cost = -1;

  n->total++;
  g_assert_no_error (error);
  g_assert_nonnull (sc);
  guest.cell_pack = json_object_has_member (obj, "cell_allocation") &&
                    strcmp (json_object_get_string_member (obj, "cell_allocation"), "pack") == 0;
  if (!guest_from_json (json_object_get_object_member (obj, "guest"), cells, keep, &guest))
    {
      n->skipped++;
      g_ptr_array_unref (cap.nodes);
      return;
    }
  for (guint i = 0; i < json_array_get_length (hcs); i++)
    {
      gboolean split;
      g_ptr_array_add (cap.nodes, node_from_json (json_array_get_object_element (hcs, i), limits,
                                                  json_object_get_string_member (json_object_get_object_member (obj, "guest"), "cpu_policy"), &split));
      smt_split = smt_split || split;
    }
  fit = vpa_fit (&cap, sc->inv, sc->requests, &guest, NULL, &fit_error);
  g_ptr_array_unref (cap.nodes);

  if (!brute_fits && fit != NULL && guest.thread_policy == VPA_THREAD_POLICY_ISOLATE && smt_split)
    {
      /* Deliberate: isolate on SMT nodes takes whole cores (docs/placement.md) */
      n->isolate_smt++;
      return;
    }
  if (!brute_fits)
    {
      if (fit != NULL)
        g_error ("%s: we fit where no mapping does", name);
      n->both_fail++;
      return;
    }
  if (fit == NULL)
    {
      g_autoptr (GString) ex = g_string_new (NULL);
      g_autoptr (VpaFit) again = NULL;
      cap.nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) node_free);
      for (guint i = 0; i < json_array_get_length (hcs); i++)
        g_ptr_array_add (cap.nodes, node_from_json (json_array_get_object_element (hcs, i), limits,
                                                    json_object_get_string_member (json_object_get_object_member (obj, "guest"), "cpu_policy"), &smt_split));
      again = vpa_fit (&cap, sc->inv, sc->requests, &guest, ex, NULL);
      g_ptr_array_unref (cap.nodes);
      g_error ("%s: the brute force fits, we do not: %s\n%s", name, fit_error->message, ex->str);
    }
  if (!brute_has (brute, fit, &cost))
    g_error ("%s: our mapping is not one the brute force accepts", name);
  g_assert_cmpint (cost, ==, json_object_get_int_member (brute, "best_tier_cost"));
  g_assert_cmpint ((gint64) fit->tier_total, ==, cost);
  if (nova_fits && g_strcmp0 (verdict, "both-fit") == 0)
    {
      gint64 nova_cost = int_member (brute, "nova_tier_cost", G_MAXINT64);
      g_assert_cmpint (cost, <=, nova_cost);
      n->both_fit++;
      n->better_tiers += cost < nova_cost;
    }
  else if (g_strcmp0 (verdict, "nova-invalid") == 0)
    n->nova_invalid++;
  else
    {
      const char *cat = json_object_get_string_member (json_object_get_object_member (obj, "compare"), "category");
      n->beats_nova++;
      if (g_strcmp0 (cat, "fit-cache") == 0)
        n->cat_cache++;
      else
        n->cat_pci++;
    }
  n->preferred += is_preferred (brute, fit);
}

static void
test_family (gconstpointer data)
{
  const char *path = data;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonArray *arr;
  Counts n = { 0 };

  g_assert_true (json_parser_load_from_file (parser, path, &error));
  arr = json_node_get_array (json_parser_get_root (parser));
  for (guint i = 0; i < json_array_get_length (arr); i++)
    run_scenario (json_array_get_object_element (arr, i), &n);
  g_test_message ("%s: %u scenarios: both fit %u (better tiers than Nova's %u), both fail %u, beats Nova %u (fit caches %u, PCI checks %u), Nova invalid %u; our mapping is Nova's order's first of least tiers in %u of %u fits; isolate on SMT %u; skipped %u (page size large/any)",
                  path, n.total, n.both_fit, n.better_tiers, n.both_fail, n.beats_nova, n.cat_cache, n.cat_pci, n.nova_invalid, n.preferred, n.both_fit + n.beats_nova + n.nova_invalid, n.isolate_smt, n.skipped);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/conformance/fit", "*.json", "/fit-conformance", test_family);
  return g_test_run ();
}
