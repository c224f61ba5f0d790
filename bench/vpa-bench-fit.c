/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * vpa-bench-fit: the whole-guest fit alone. Loads a host snapshot, a
 * configuration and a domain with <vpa:numa placement="auto"> once,
 * builds the inventory once, then times, many times over,
 *   vpa_capacity_new + vpa_fit
 * (CPUs, memory, pages and every device request together) and prints one
 * JSON object: the per-iteration times (ns), the host node of each guest
 * cell and how many device placements the search ran.
 *
 *   vpa-bench-fit SNAPSHOT CONFIG DOMAIN.xml [MIN_ITERATIONS [BUDGET_MS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vpa-fit.h"
#include "vpa-capacity.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-requests.h"
#include "vpa-snapshot.h"

#define MAX_ITERATIONS 100000

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static VpaFit *
iterate (const VpaInventory *inv, const VpaConfig *config, GPtrArray *requests,
         const VpaFitGuest *guest, GArray *times, GError **error)
{
  g_autoptr (VpaCapacity) cap = NULL;
  VpaFit *fit;
  gint64 t0 = now_ns ();

  cap = vpa_capacity_new (inv->host, config, inv->claims, NULL, error);
  if (cap == NULL)
    return NULL;
  fit = vpa_fit (cap, inv, requests, guest, NULL, error);
  if (fit != NULL)
    {
      gint64 ns = now_ns () - t0;
      g_array_append_val (times, ns);
    }
  return fit;
}

static gboolean
run (int argc, char **argv, GError **error)
{
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GArray) cells = NULL;
  g_autoptr (GPtrArray) net_rules = NULL;
  g_autoptr (GArray) times = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (VpaFit) fit = NULL;
  g_autofree char *xml = NULL;
  gsize len = 0;
  guint min_iterations = argc > 4 ? (guint) atoi (argv[4]) : 11;
  gint64 budget_ns = (argc > 5 ? atoll (argv[5]) : 1000) * G_GINT64_CONSTANT (1000000);
  VpaFitGuest guest = { 0 };
  gint64 start;

  if ((host = vpa_snapshot_load (argv[1], error)) == NULL ||
      !vpa_host_seal (host, error) ||
      (config = vpa_config_load_file (argv[2], error)) == NULL ||
      !g_file_get_contents (argv[3], &xml, &len, error) ||
      (dom = vpa_pipeline_parse (&(VpaDoc){ xml, len, argv[3] }, error)) == NULL ||
      (requests = vpa_requests_from_domain (dom, config, error)) == NULL)
    return FALSE;
  inv = vpa_inventory_new (g_steal_pointer (&host), config, NULL, error);
  if (inv == NULL)
    return FALSE;
  cells = vpa_pipeline_numa_cells (dom, keep);
  guest.cells = cells;
  guest.cpu_policy = dom->cpu_policy;
  guest.thread_policy = dom->thread_policy;
  guest.page_kib = dom->page_kib;
  guest.cell_pack = config->cell_pack;
  /* the domain's vSwitch ports, as the pipeline builds their rules */
  net_rules = vpa_pipeline_net_rules (dom, config);
  guest.net_rules = net_rules->len > 0 ? net_rules : NULL;

  /* One untimed warm-up, then at least min_iterations and at most the
   * time budget (whichever is more). */
  fit = iterate (inv, config, requests, &guest, times, error);
  if (fit == NULL)
    return FALSE;
  g_array_set_size (times, 0);
  start = now_ns ();
  while (times->len < MAX_ITERATIONS && (times->len < min_iterations || now_ns () - start < budget_ns))
    {
      g_clear_pointer (&fit, vpa_fit_free);
      if ((fit = iterate (inv, config, requests, &guest, times, error)) == NULL)
        return FALSE;
    }
  printf ("{\n  \"devices\": %u,\n  \"requests\": %u,\n  \"cells\": %u,\n  \"device_runs\": %u,\n  \"tier_total\": %u,\n  \"host_cells\": [",
          inv->host->devices->len, requests->len, cells->len, fit->n_runs, fit->tier_total);
  for (guint i = 0; i < fit->bindings->len; i++)
    printf ("%s%d", i > 0 ? ", " : "", g_array_index (fit->bindings, VpaCellBinding, i).node);
  printf ("],\n  \"fit_ns\": [");
  for (guint i = 0; i < times->len; i++)
    printf ("%s%" G_GINT64_FORMAT, i > 0 ? "," : "", g_array_index (times, gint64, i));
  printf ("]\n}\n");
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;

  if (argc < 4)
    {
      fprintf (stderr, "usage: %s SNAPSHOT CONFIG DOMAIN.xml [MIN_ITERATIONS [BUDGET_MS]]\n", argv[0]);
      return 2;
    }
  if (!run (argc, argv, &error))
    {
      fprintf (stderr, "vpa-bench-fit: %s\n", error->message);
      return error->domain == VPA_ERROR ? error->code : 3;
    }
  return 0;
}
