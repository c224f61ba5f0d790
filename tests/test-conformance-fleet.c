/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet filter over every committed conformance scenario
 * (data/conformance/): each scenario's host is synced into one fleet
 * store on SQLite and one on PostgreSQL (the fleet tests' private
 * server; skipped when its binaries are missing) as host "conf-FILE-N",
 * loaded back with its free pools,
 * and the filter's support_requests must give Nova's recorded verdict
 * (the scheduler's support_requests). Where the filter lets a host pass,
 * `place` must place the domain there too, unless Nova's own placement
 * fails as well (the scheduler's view is optimistic in the same cases);
 * so `place` and `fleet filter` cannot drift apart. Each verdict the
 * filter finds independent of the pools' order is also judged without
 * their lowest addresses, as the pre-selection first reads them.
 */
#include <string.h>
#include <glib/gstdio.h>
#include "fleet-fixture.h"
#include "place-scenario.h"
#include "vpa-fleet-filter.h"
#include "vpa-fleet-store.h"

typedef struct {
  const Scenario *sc;
  const char *file;
  guint index;
  char *host_name;
  GHashTable *hosts; /* of the case's store: name -> VpaFleetHost* */
  gboolean place;    /* also check place (once: it reads no store) */
} Case;

typedef struct {
  guint checked, pass, fail, place_better, optimistic, order_read;
} Counts;

static Counts counts;

static void
case_free (Case *c)
{
  g_free (c->host_name);
  g_free (c);
}

static gboolean
scenario_applies (const Scenario *sc)
{
  return sc->skip == NULL && sc->nova_error == NULL && sc->policy_error == NULL &&
         sc->has_nova_support;
}

/* Pool order on demand (docs/fleet.md): the host's pools as the
 * pre-selection first reads them, without their lowest addresses. Where
 * the filter finds the verdict does not depend on the order, judging
 * them so must give Nova's verdict and the same weight. */
static void
check_order_on_demand (const VpaFleetHost *host, const Scenario *sc, gboolean passes,
                       gdouble weight)
{
  VpaFleetQuery query = { sc->requests, sc->guest.numa_guest, sc->guest.nodes,
                          sc->guest.n_nodes };
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  gdouble unordered_weight = -1;

  for (guint i = 0; i < host->pools->len; i++)
    {
      VpaPool *pool = g_ptr_array_index (host->pools, i);
      g_array_append_val (addrs, pool->first_addr);
      pool->first_addr = VPA_ADDR_NONE;
    }
  if (vpa_fleet_filter_needs_order (host, &query))
    {
      counts.order_read++;
    }
  else
    {
      g_assert_cmpint (vpa_fleet_filter_supports_requests (host, sc->requests,
                                                           sc->guest.numa_guest, sc->guest.nodes,
                                                           sc->guest.n_nodes, &unordered_weight,
                                                           NULL),
                       ==, passes);
      g_assert_cmpfloat (unordered_weight, ==, weight);
    }
  for (guint i = 0; i < host->pools->len; i++)
    ((VpaPool *) g_ptr_array_index (host->pools, i))->first_addr = g_array_index (addrs, VpaAddr, i);
}

static void
check_case (gconstpointer data)
{
  const Case *c = data;
  const Scenario *sc = c->sc;
  const VpaFleetHost *host = g_hash_table_lookup (c->hosts, c->host_name);
  g_autoptr (VpaPlacement) pl = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = NULL;
  gdouble weight = -1;
  gboolean passes;

  g_assert_nonnull (host);
  passes = vpa_fleet_filter_supports_requests (host, sc->requests, sc->guest.numa_guest,
                                               sc->guest.nodes, sc->guest.n_nodes, &weight, &reason);
  counts.checked++;
  if (passes != sc->nova_support)
    {
      g_error ("%s (%s #%u): fleet filter says %s, Nova's support_requests %s%s%s", sc->name,
               c->file, c->index, passes ? "pass" : "fail", sc->nova_support ? "pass" : "fail",
               reason != NULL ? ": " : "", reason != NULL ? reason : "");
    }
  g_assert_true (passes == (reason == NULL));
  g_assert_cmpfloat (weight, >=, 0);
  if (!passes)
    g_assert_cmpfloat (weight, ==, 0);
  check_order_on_demand (host, sc, passes, weight);
  if (!c->place)
    return;

  pl = vpa_place (sc->inv, sc->requests, &sc->guest, &error);
  g_assert_true ((pl == NULL) == (error != NULL));
  if (passes)
    {
      counts.pass++;
      if (pl == NULL)
        {
          /* The scheduler's view passes a host the compute claim then
           * refuses: only where Nova's own claim fails too. */
          if (sc->nova_ok)
            {
              g_error ("%s: the fleet filter and Nova place it, place fails: %s", sc->name,
                       error->message);
            }
          counts.optimistic++;
        }
    }
  else
    {
      counts.fail++;
      /* Nova's verdict is greedy; place may still find an assignment
       * (docs/placement.md), never the other way round. */
      if (pl != NULL)
        counts.place_better++;
    }
}

/* The cases of scs (applicable scenarios of file) for one store. */
static void
add_cases (GPtrArray *cases, GPtrArray *scs, const char *file)
{
  for (guint i = 0; i < scs->len; i++)
    {
      const Scenario *sc = g_ptr_array_index (scs, i);
      Case *c;

      if (!scenario_applies (sc))
        continue;
      c = g_new0 (Case, 1);
      c->sc = sc;
      c->file = file;
      c->index = i;
      c->host_name = g_strdup_printf ("conf-%s-%u", file, i);
      g_ptr_array_add (cases, c);
    }
}

/* Syncs every case's host into the store at uri, loads them back with
 * their pools into hosts (by name), and adds the cases' tests. */
static VpaFleetStore *
store_cases (const char *uri, const char *backend, GPtrArray *cases, GPtrArray *hosts,
             GHashTable *by_name, gboolean place)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) loaded = NULL;
  VpaFleetStore *store = vpa_fleet_store_open (uri, VPA_FLEET_OPEN_CREATE, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < cases->len; i++)
    {
      Case *c = g_ptr_array_index (cases, i);
      g_autoptr (VpaFleetHostData) data = vpa_fleet_host_data_from_inventory (c->host_name,
                                                                              c->sc->inv);

      g_assert_true (vpa_fleet_store_sync_host (store, data, &error));
      g_assert_no_error (error);
    }
  loaded = vpa_fleet_store_load_hosts (store, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (loaded->len, ==, cases->len);
  for (guint i = 0; i < loaded->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (loaded, i);
      g_hash_table_insert (by_name, host->name, host);
    }
  g_ptr_array_extend_and_steal (hosts, g_steal_pointer (&loaded));
  for (guint i = 0; i < cases->len; i++)
    {
      Case *c = g_ptr_array_index (cases, i);
      g_autofree char *test = g_strdup_printf ("/conformance-fleet/%s/%s/%u", backend, c->file,
                                               c->index);
      c->hosts = by_name;
      c->place = place;
      g_test_add_data_func (test, c, check_case);
    }
  return store;
}

int
main (int argc, char **argv)
{
  const char *files[] = { "nova-tests", "random", "targeted", "regressions" };
  g_autoptr (GPtrArray) all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr (GPtrArray) hosts =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_host_free);
  GPtrArray *cases[2];
  GHashTable *by_name[2];
  VpaFleetStore *stores[2] = { NULL, NULL };
  FleetFixture fx[2];
  guint n_stores = 0;
  g_autoptr (GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, NULL);
  fleet_pg_start ();
  for (guint b = 0; b < 2; b++)
    {
      cases[b] = g_ptr_array_new_with_free_func ((GDestroyNotify) case_free);
      by_name[b] = g_hash_table_new (g_str_hash, g_str_equal);
    }
  for (guint f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree char *name = g_strconcat (files[f], ".json", NULL);
      g_autofree char *path = g_build_filename (VPA_TEST_DATA, "conformance", name, NULL);
      GPtrArray *scs = scenarios_load (path, &error);

      g_assert_no_error (error);
      g_ptr_array_add (all, scs);
      for (guint b = 0; b < 2; b++)
        add_cases (cases[b], scs, files[f]);
    }
  for (guint b = 0; b < 2; b++)
    {
      if (!fleet_fixture_open (&fx[b], b == 0 ? FLEET_BACKEND_SQLITE : FLEET_BACKEND_PG))
        {
          g_test_message ("PostgreSQL server binaries not found: the scenarios on SQLite only");
          continue;
        }
      stores[b] = store_cases (fx[b].uri, b == 0 ? "sqlite" : "pg", cases[b], hosts,
                               by_name[b], b == 0);
      n_stores++;
    }

  ret = g_test_run ();
  g_test_message ("conformance-fleet: %u scenarios on %u stores: the filter passes %u and "
                  "fails %u, as Nova's support_requests; place also places %u the filter "
                  "fails; the filter passes %u that neither place nor Nova's claim can place; "
                  "%u verdicts need the pools' order (the others are also judged without it)",
                  counts.checked / MAX (n_stores, 1), n_stores, counts.pass, counts.fail,
                  counts.place_better, counts.optimistic, counts.order_read / MAX (n_stores, 1));
  for (guint b = 0; b < 2; b++)
    {
      if (stores[b] != NULL)
        {
          g_clear_pointer (&stores[b], vpa_fleet_store_close);
          fleet_fixture_close (&fx[b]);
        }
      g_ptr_array_unref (cases[b]);
      g_hash_table_unref (by_name[b]);
    }
  fleet_pg_stop ();
  return ret;
}
