/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * vpa-bench-lib: the algorithm alone. Loads a host snapshot, a
 * configuration and a domain once, then times, many times over,
 *   vpa_inventory_new + vpa_pools_generate + vpa_place
 * on the devices already in memory, and prints one JSON object: the
 * per-iteration times of each phase (ns) and the devices the last
 * iteration chose, so that bench/run can compare them with Nova's.
 *
 *   vpa-bench-lib SNAPSHOT CONFIG DOMAIN.xml [MIN_ITERATIONS [BUDGET_MS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-inventory.h"
#include "vpa-pipeline.h"
#include "vpa-bind.h"
#include "vpa-place.h"
#include "vpa-pools.h"
#include "vpa-requests.h"
#include "vpa-source.h"

#define MAX_ITERATIONS 100000

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

typedef struct {
  GArray *inventory; /* gint64 ns per iteration, per phase */
  GArray *pools;
  GArray *place;
  GArray *total;
  guint n_pools;
  GString *chosen; /* JSON list of the last iteration's devices */
} BenchTimes;

static void
bench_times_clear (BenchTimes *t)
{
  g_clear_pointer (&t->inventory, g_array_unref);
  g_clear_pointer (&t->pools, g_array_unref);
  g_clear_pointer (&t->place, g_array_unref);
  g_clear_pointer (&t->total, g_array_unref);
  if (t->chosen != NULL)
    g_string_free (g_steal_pointer (&t->chosen), TRUE);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BenchTimes, bench_times_clear)

static void
append_ns (GArray *a, gint64 ns)
{
  g_array_append_val (a, ns);
}

static void
print_series (const char *key, GArray *a, gboolean last)
{
  printf ("  \"%s\": [", key);
  for (guint i = 0; i < a->len; i++)
    printf ("%s%" G_GINT64_FORMAT, i > 0 ? "," : "", g_array_index (a, gint64, i));
  printf ("]%s\n", last ? "" : ",");
}

static void
record_choice (BenchTimes *t, const VpaInventory *inv, const VpaPlacement *placement)
{
  g_string_truncate (t->chosen, 0);
  for (guint r = 0; r < placement->assignments->len; r++)
    {
      const VpaAssignment *a = g_ptr_array_index (placement->assignments, r);

      for (guint k = 0; k < a->devices->len; k++)
        {
          const VpaDevice *dev = vpa_host_device (inv->host, g_array_index (a->devices, guint, k));
          char buf[VPA_ADDR_BUFLEN];

          g_string_append_printf (t->chosen, "%s{\"request\": \"%s\", \"address\": \"%s\", "
                                             "\"numa_node\": %d}",
                                  t->chosen->len > 0 ? ", " : "", a->request->label,
                                  vpa_addr_format (dev->addr, buf), dev->numa_node);
        }
    }
}

/* One timed iteration. The inventory takes ownership of the host; it is
 * taken back afterwards so that every iteration starts from the same
 * devices in memory without copying them. */
static gboolean
iterate (VpaHost **host, const VpaConfig *config, GPtrArray *requests,
         const VpaGuestNodes *guest, BenchTimes *t, GError **error)
{
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GArray) pools = NULL;
  g_autoptr (VpaPlacement) placement = NULL;
  gint64 t0, t1, t2, t3;

  t0 = now_ns ();
  inv = vpa_inventory_new (g_steal_pointer (host), config, NULL, error);
  if (inv == NULL)
    return FALSE;
  t1 = now_ns ();
  pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT);
  t2 = now_ns ();
  placement = vpa_place (inv, requests, guest, error);
  t3 = now_ns ();
  if (placement != NULL)
    {
      append_ns (t->inventory, t1 - t0);
      append_ns (t->pools, t2 - t1);
      append_ns (t->place, t3 - t2);
      append_ns (t->total, t3 - t0);
      t->n_pools = pools->len;
      record_choice (t, inv, placement);
    }
  *host = g_steal_pointer (&inv->host);
  return placement != NULL;
}

static gboolean
run (int argc, char **argv, GError **error)
{
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaBind) bind = NULL;
  g_autoptr (GPtrArray) requests = NULL;
  g_autofree char *xml = NULL;
  gsize len = 0;
  guint min_iterations = argc > 4 ? (guint) atoi (argv[4]) : 11;
  gint64 budget_ns = (argc > 5 ? atoll (argv[5]) : 1000) * G_GINT64_CONSTANT (1000000);
  VpaGuestNodes guest;
  g_auto (BenchTimes) t = { 0 };
  gint64 start;
  guint n_devices;

  if ((host = vpa_snapshot_load (argv[1], error)) == NULL ||
      !vpa_host_seal (host, error) ||
      (config = vpa_config_load_file (argv[2], error)) == NULL ||
      !g_file_get_contents (argv[3], &xml, &len, error) ||
      (dom = vpa_pipeline_parse (&(VpaDoc){ xml, len, argv[3] }, error)) == NULL ||
      (bind = vpa_bind_nodes (dom, host, error)) == NULL ||
      (requests = vpa_requests_from_domain (dom, config, error)) == NULL)
    return FALSE;
  guest.numa_guest = dom->numa_guest;
  guest.nodes = (const gint *) (gpointer) bind->guest_nodes->data;
  guest.n_nodes = bind->guest_nodes->len;
  n_devices = host->devices->len;

  t.inventory = g_array_new (FALSE, FALSE, sizeof (gint64));
  t.pools = g_array_new (FALSE, FALSE, sizeof (gint64));
  t.place = g_array_new (FALSE, FALSE, sizeof (gint64));
  t.total = g_array_new (FALSE, FALSE, sizeof (gint64));
  t.chosen = g_string_new (NULL);

  /* One untimed warm-up, then at least min_iterations and at most the
   * time budget (whichever is more). */
  if (!iterate (&host, config, requests, &guest, &t, error))
    return FALSE;
  g_array_set_size (t.inventory, 0);
  g_array_set_size (t.pools, 0);
  g_array_set_size (t.place, 0);
  g_array_set_size (t.total, 0);
  start = now_ns ();
  while (t.total->len < MAX_ITERATIONS &&
         (t.total->len < min_iterations || now_ns () - start < budget_ns))
    {
      if (!iterate (&host, config, requests, &guest, &t, error))
        return FALSE;
    }

  printf ("{\n  \"devices\": %u,\n  \"requests\": %u,\n  \"pools\": %u,\n",
          n_devices, requests->len, t.n_pools);
  print_series ("inventory_ns", t.inventory, FALSE);
  print_series ("pools_ns", t.pools, FALSE);
  print_series ("place_ns", t.place, FALSE);
  print_series ("total_ns", t.total, FALSE);
  printf ("  \"chosen\": [%s]\n}\n", t.chosen->str);
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;

  if (argc < 4)
    {
      fprintf (stderr, "usage: %s SNAPSHOT CONFIG DOMAIN.xml [MIN_ITERATIONS [BUDGET_MS]]\n",
               argv[0]);
      return 2;
    }
  if (!run (argc, argv, &error))
    {
      fprintf (stderr, "vpa-bench-lib: %s\n", error->message);
      return error->domain == VPA_ERROR ? error->code : 3;
    }
  return 0;
}
