/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whole-guest NUMA placement: the capacity of a node after [host] and
 * claims, Nova's core packing per thread policy, and the search, which
 * a brute force over every injective cell -> node mapping checks on
 * random small hosts: a fit exists iff we find one, with the minimum
 * device tier total.
 */
#include <string.h>

#include "vpa-cpuset.h"
#include "vpa-fit.h"
#include "vpa-output.h"
#include "vpa-pipeline.h"
#include "vpa-rewrite.h"
#include "vpa-source.h"
#include "vpa-test-util.h"

/* ------------------------------------------------------------------ */
/* Random small hosts                                                  */
/* ------------------------------------------------------------------ */

typedef struct {
  VpaConfig *config;
  VpaInventory *inv;
  VpaCapacity *cap;
  GPtrArray *claims;
  GPtrArray *reqs;
  GArray *cells;        /* VpaFitCell */
  GPtrArray *vcpu_sets; /* the cells' vCPU arrays */
  VpaFitGuest guest;
} Case;

static void
case_clear (Case *c)
{
  g_clear_pointer (&c->cap, vpa_capacity_free);
  g_clear_pointer (&c->inv, vpa_inventory_free);
  g_clear_pointer (&c->config, vpa_config_free);
  g_clear_pointer (&c->claims, g_ptr_array_unref);
  g_clear_pointer (&c->reqs, g_ptr_array_unref);
  g_clear_pointer (&c->cells, g_array_unref);
  g_clear_pointer (&c->vcpu_sets, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Case, case_clear)

static void
add_cell (VpaHost *host, gint id, gint socket, guint first_cpu, guint n_cpus, guint threads,
          guint64 mem_kib, guint64 huge_1g)
{
  VpaCell cell = { id, socket, g_array_new (FALSE, FALSE, sizeof (guint)), mem_kib };
  VpaPages small = { 4, 0, 0 }, huge = { 1048576, huge_1g, huge_1g };

  cell.topo = g_array_new (FALSE, FALSE, sizeof (VpaCpuTopo));
  cell.pages = g_array_new (FALSE, FALSE, sizeof (VpaPages));
  for (guint i = 0; i < n_cpus; i++)
    {
      guint cpu = first_cpu + i;
      VpaCpuTopo t = { TRUE, socket, (gint) (i / threads), first_cpu + (i / threads) * threads };
      g_array_append_val (cell.cpus, cpu);
      g_array_append_val (cell.topo, t);
    }
  small.total = small.free = (mem_kib - huge_1g * 1048576) / 4;
  g_array_append_val (cell.pages, small);
  g_array_append_val (cell.pages, huge);
  vpa_host_add_cell (host, &cell);
}

static void
add_nic (VpaHost *host, guint bus, gint node, guint n_vfs)
{
  VpaAddr pf = VPA_ADDR (0, bus, 0, 0);

  vpa_test_add_device (host, pf, "8086:1528", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, node, NULL);
  for (guint i = 0; i < n_vfs; i++)
    {
      vpa_test_add_device (host, VPA_ADDR (0, bus, 0x10, i), "8086:1515", VPA_DEV_TYPE_VF, pf,
                           node, NULL);
    }
}

static VpaRequest *
port_request (const char *name, VpaPolicy policy)
{
  VpaRequest *req = vpa_request_new (VPA_REQUEST_PORT, name, 1);
  VpaSpec *spec = vpa_spec_new ();

  vpa_spec_set (spec, "physical_network", "physnet1");
  g_ptr_array_add (req->specs, spec);
  req->policy = policy;
  req->policy_source = VPA_POLICY_SOURCE_PORT;
  return req;
}

static void
case_finish (Case *c, VpaHost *host, const char *config)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (vpa_host_seal (host, &error));
  c->config = vpa_test_config_load (config);
  c->inv = vpa_inventory_new (host, c->config, vpa_claim_filter (c->claims, NULL, FALSE), &error);
  g_assert_no_error (error);
  c->cap = vpa_capacity_new (c->inv->host, c->config, c->claims, NULL, &error);
  g_assert_no_error (error);
  c->guest.cells = c->cells;
}

static void
guest_cell (Case *c, guint id, guint n_vcpus, guint64 mem_kib)
{
  GArray *v = g_array_new (FALSE, FALSE, sizeof (guint));
  VpaFitCell cell = { id, v, mem_kib };
  guint first = 0;

  for (guint i = 0; i < c->cells->len; i++)
    first += g_array_index (c->cells, VpaFitCell, i).vcpus->len;
  for (guint i = 0; i < n_vcpus; i++)
    {
      guint x = first + i;
      g_array_append_val (v, x);
    }
  g_ptr_array_add (c->vcpu_sets, v);
  g_array_append_val (c->cells, cell);
}

static void
case_init (Case *c)
{
  memset (c, 0, sizeof *c);
  c->claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  c->reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  c->cells = g_array_new (FALSE, TRUE, sizeof (VpaFitCell));
  c->vcpu_sets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
}

/* A random host of 2-4 nodes, its claims, config and a random guest. */
static void
random_case (Case *c, GRand *r)
{
  VpaHost *host = vpa_host_new ("random");
  guint n_nodes = (guint) g_rand_int_range (r, 2, 5);
  guint threads = (guint) g_rand_int_range (r, 1, 3);
  guint cpu = 0;
  g_autoptr (GString) conf = g_string_new ("[device-spec nics]\nvendor-id=8086\nphysical-network=physnet1\n[host]\ncpu-dedicated-set=");
  g_autoptr (VpaNumaUse) use = vpa_numa_use_new ();
  guint n_ded = 0;

  case_init (c);
  for (guint n = 0; n < n_nodes; n++)
    {
      guint n_cpus = threads * (guint) g_rand_int_range (r, 2, 5);
      guint64 huge = (guint64) g_rand_int_range (r, 0, 4);

      add_cell (host, (gint) n, (gint) n / 2, cpu, n_cpus, threads,
                (guint64) g_rand_int_range (r, 3, 7) * 1048576, huge);
      for (guint i = 0; i < n_cpus; i++, cpu++)
        {
          /* the node's first CPU stays shared; the others are dedicated,
           * some of them pinned by another domain */
          if (i == 0)
            continue;
          g_string_append_printf (conf, "%s%u", n_ded++ > 0 ? "," : "", cpu);
          if (g_rand_int_range (r, 0, 4) == 0)
            g_array_append_val (use->dedicated, cpu);
        }
      if (g_rand_boolean (r))
        {
          VpaMemClaim m = { (gint) n, g_rand_boolean (r) ? 1048576 : 0, 1048576 };
          g_array_append_val (use->memory, m);
        }
      if (g_rand_int_range (r, 0, 3) > 0)
        add_nic (host, 0x10 + n, (gint) n, (guint) g_rand_int_range (r, 1, 3));
    }
  if (n_ded == 0)
    g_string_append (conf, "0");
  g_ptr_array_add (c->claims, vpa_claim_new_numa ("other", TRUE, g_steal_pointer (&use)));
  case_finish (c, host, conf->str);

  for (guint i = 0, n = (guint) g_rand_int_range (r, 1, (gint) n_nodes + 1); i < n; i++)
    {
      guest_cell (c, i, (guint) g_rand_int_range (r, 1, 4),
                  (guint64) g_rand_int_range (r, 1, 4) * 524288);
    }
  c->guest.cpu_policy = g_rand_boolean (r) ? VPA_CPU_POLICY_DEDICATED : VPA_CPU_POLICY_SHARED;
  c->guest.thread_policy = (VpaThreadPolicy) g_rand_int_range (r, 0, VPA_THREAD_POLICY_LAST);
  c->guest.page_kib = g_rand_int_range (r, 0, 4) == 0 ? 1048576 : 0;
  c->guest.cell_pack = g_rand_boolean (r);
  for (guint i = 0, n = (guint) g_rand_int_range (r, 0, 3); i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("ua-p%u", i);
      g_ptr_array_add (c->reqs, port_request (name, (VpaPolicy) g_rand_int_range (r, 0, VPA_POLICY_LAST)));
    }
}

/* ------------------------------------------------------------------ */
/* Brute force                                                         */
/* ------------------------------------------------------------------ */

typedef struct {
  const Case *c;
  guint *map; /* cell -> node index */
  gboolean *used;
  gint64 best; /* lowest tier total, -1 none */
  guint n_fits;
} Brute;

static gint64
tiers_for (const Case *c, const guint *map)
{
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (VpaPlacement) pl = NULL;
  VpaGuestNodes g;
  gint64 total = 0;

  for (guint k = 0; k < c->cap->nodes->len; k++)
    {
      for (guint i = 0; i < c->cells->len; i++)
        {
          if (map[i] == k)
            g_array_append_val (nodes, ((VpaNodeCap *) g_ptr_array_index (c->cap->nodes, k))->node);
        }
    }
  if (c->reqs->len == 0)
    return 0;
  g.numa_guest = TRUE;
  g.nodes = (const gint *) (gpointer) nodes->data;
  g.n_nodes = nodes->len;
  pl = vpa_place (c->inv, c->reqs, &g, NULL);
  if (pl == NULL)
    return -1;
  for (guint i = 0; i < pl->assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (pl->assignments, i);
      for (guint j = 0; j < a->devices->len; j++)
        {
          total += vpa_policy_tier (c->inv->host, &g,
                                    vpa_host_device (c->inv->host, g_array_index (a->devices, guint, j))->numa_node);
        }
    }
  return total;
}

static void
brute (Brute *b, guint depth)
{
  const Case *c = b->c;

  if (depth == c->cells->len)
    {
      gint64 t = tiers_for (c, b->map);
      if (t >= 0)
        {
          b->n_fits++;
          if (b->best < 0 || t < b->best)
            b->best = t;
        }
      return;
    }
  for (guint k = 0; k < c->cap->nodes->len; k++)
    {
      if (b->used[k] ||
          !vpa_fit_cell (g_ptr_array_index (c->cap->nodes, k), &g_array_index (c->cells, VpaFitCell, depth), &c->guest, NULL, NULL))
        continue;
      b->used[k] = TRUE;
      b->map[depth] = k;
      brute (b, depth + 1);
      b->used[k] = FALSE;
    }
}

/* What the fit returns is a valid binding: distinct nodes, each pair
 * fits, dedicated CPUs free and not shared between cells. */
static void
assert_valid (const Case *c, const VpaFit *fit)
{
  g_autoptr (GHashTable) cpus = g_hash_table_new (NULL, NULL);

  g_assert_cmpuint (fit->bindings->len, ==, c->cells->len);
  for (guint i = 0; i < fit->bindings->len; i++)
    {
      const VpaCellBinding *b = &g_array_index (fit->bindings, VpaCellBinding, i);
      const VpaNodeCap *nc = vpa_capacity_model_node (c->cap, b->node);

      g_assert_nonnull (nc);
      for (guint j = 0; j < i; j++)
        g_assert_cmpint (g_array_index (fit->bindings, VpaCellBinding, j).node, !=, b->node);
      g_assert_true (vpa_fit_cell (nc, &g_array_index (c->cells, VpaFitCell, i), &c->guest, NULL, NULL));
      if (c->guest.cpu_policy != VPA_CPU_POLICY_DEDICATED)
        continue;
      g_assert_cmpuint (b->cpus->len, ==, g_array_index (c->cells, VpaFitCell, i).vcpus->len);
      for (guint j = 0; j < b->cpus->len; j++)
        {
          guint cpu = g_array_index (b->cpus, guint, j);
          gboolean free_cpu = FALSE;
          for (guint k = 0; k < nc->free_dedicated->len; k++)
            free_cpu = free_cpu || g_array_index (nc->free_dedicated, guint, k) == cpu;
          g_assert_true (free_cpu);
          g_assert_false (g_hash_table_contains (cpus, GUINT_TO_POINTER (cpu + 1)));
          g_hash_table_add (cpus, GUINT_TO_POINTER (cpu + 1));
        }
    }
}

static void
test_brute_force (void)
{
  const char *env = g_getenv ("VPA_FIT_SEED");
  guint32 seed = env != NULL ? (guint32) g_ascii_strtoull (env, NULL, 10) : (guint32) g_test_rand_int ();
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  guint fits = 0, fails = 0, with_devices = 0;

  g_test_message ("seed %u", seed);
  for (guint n = 0; n < 400; n++)
    {
      g_auto (Case) c;
      g_autoptr (VpaFit) fit = NULL;
      g_autoptr (GError) error = NULL;
      g_autofree guint *map = NULL;
      g_autofree gboolean *used = NULL;
      Brute b = { 0 };

      random_case (&c, r);
      map = g_new0 (guint, c.cells->len);
      used = g_new0 (gboolean, c.cap->nodes->len);
      b.c = &c;
      b.map = map;
      b.used = used;
      b.best = -1;
      brute (&b, 0);
      fit = vpa_fit (c.cap, c.inv, c.reqs, &c.guest, NULL, &error);
      if (b.best < 0)
        {
          if (fit != NULL)
            g_error ("case %u (seed %u): we fit where nothing does", n, seed);
          g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
          fails++;
          continue;
        }
      if (fit == NULL && g_getenv ("VPA_FIT_DEBUG") != NULL)
        {
          g_autoptr (GString) ex = g_string_new (NULL);
          g_autoptr (GError) e2 = NULL;
          g_autoptr (VpaFit) f2 = vpa_fit (c.cap, c.inv, c.reqs, &c.guest, ex, &e2);
          g_printerr ("%s", ex->str);
          for (guint i = 0; i < c.reqs->len; i++)
            g_printerr ("req %s policy %s\n", ((VpaRequest *) c.reqs->pdata[i])->device, vpa_policy_to_string (((VpaRequest *) c.reqs->pdata[i])->policy));
          for (guint i = 0; i < c.inv->host->devices->len; i++)
            g_printerr ("dev %s node %d state %d\n", vpa_dev_type_to_string (vpa_host_device (c.inv->host, i)->dev_type), vpa_host_device (c.inv->host, i)->numa_node, c.inv->state[i]);
          for (guint i = 0; i < c.cells->len; i++)
            g_printerr ("cell %u map %u\n", i, map[i]);
        }
      if (fit == NULL)
        g_error ("case %u (seed %u): %u fits exist, we found none: %s", n, seed, b.n_fits, error->message);
      g_assert_cmpint ((gint64) fit->tier_total, ==, b.best);
      assert_valid (&c, fit);
      fits++;
      with_devices += c.reqs->len > 0;
    }
  g_test_message ("%u fit (%u with devices), %u fail", fits, with_devices, fails);
  g_assert_cmpuint (fits, >, 50);
  g_assert_cmpuint (fails, >, 20);
}

/* ------------------------------------------------------------------ */
/* Thread policies (Nova's _pack_instance_onto_cores)                  */
/* ------------------------------------------------------------------ */

/* One node, 4 cores x threads, every CPU dedicated; pinned CPUs taken. */
static void
one_node_case (Case *c, guint threads, const guint *pinned, guint n_pinned)
{
  VpaHost *host = vpa_host_new ("one");
  g_autoptr (VpaNumaUse) use = vpa_numa_use_new ();

  case_init (c);
  add_cell (host, 0, 0, 0, 4 * threads, threads, 4 * 1048576, 0);
  g_array_append_vals (use->dedicated, pinned, n_pinned);
  g_ptr_array_add (c->claims, vpa_claim_new_numa ("other", TRUE, g_steal_pointer (&use)));
  case_finish (c, host, threads == 2 ? "[host]\ncpu-dedicated-set=0-7\n" : "[host]\ncpu-dedicated-set=0-3\n");
  c->guest.cpu_policy = VPA_CPU_POLICY_DEDICATED;
}

static char *
fit_cpus (Case *c, VpaThreadPolicy policy, guint n_vcpus, char **reserved, GError **error)
{
  g_autoptr (VpaFit) fit = NULL;
  const VpaCellBinding *b;

  guest_cell (c, 0, n_vcpus, 1048576);
  c->guest.cells = c->cells;
  c->guest.thread_policy = policy;
  fit = vpa_fit (c->cap, c->inv, c->reqs, &c->guest, NULL, error);
  if (fit == NULL)
    return NULL;
  b = &g_array_index (fit->bindings, VpaCellBinding, 0);
  if (reserved != NULL)
    *reserved = vpa_cpuset_format (b->reserved);
  {
    GString *s = g_string_new (NULL);
    for (guint i = 0; i < b->cpus->len; i++)
      g_string_append_printf (s, "%s%u", i > 0 ? "," : "", g_array_index (b->cpus, guint, i));
    return g_string_free (s, FALSE);
  }
}

static void
test_thread_policies (void)
{
  static const guint pin1[] = { 1 };
  static const guint one_per_core[] = { 1, 3, 5, 7 };

  {
    /* prefer: siblings first, the first threads of each core in turn */
    g_auto (Case) c;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 2, NULL, 0);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_PREFER, 3, NULL, NULL);
    g_assert_cmpstr (cpus, ==, "0,1,2");
  }
  {
    /* prefer with core 0 half taken: whole cores come first */
    g_auto (Case) c;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 2, pin1, 1);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_PREFER, 3, NULL, NULL);
    g_assert_cmpstr (cpus, ==, "2,3,4");
  }
  {
    /* prefer falls back to single threads when no core has two free */
    g_auto (Case) c;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 2, one_per_core, 4);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_PREFER, 3, NULL, NULL);
    g_assert_cmpstr (cpus, ==, "0,2,4");
  }
  {
    /* isolate: one thread of each whole free core, the other kept */
    g_auto (Case) c;
    g_autofree char *cpus = NULL;
    g_autofree char *reserved = NULL;
    one_node_case (&c, 2, pin1, 1);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_ISOLATE, 2, &reserved, NULL);
    g_assert_cmpstr (cpus, ==, "2,4");
    g_assert_cmpstr (reserved, ==, "3,5");
  }
  {
    /* isolate needs whole cores: 4 vCPUs, 3 whole free cores */
    g_auto (Case) c;
    g_autoptr (GError) error = NULL;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 2, pin1, 1);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_ISOLATE, 4, NULL, &error);
    g_assert_null (cpus);
    g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
    g_assert_nonnull (strstr (error->message, "whole free cores (isolate)"));
  }
  {
    /* require: siblings only */
    g_auto (Case) c;
    g_autoptr (GError) error = NULL;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 2, one_per_core, 4);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_REQUIRE, 2, NULL, &error);
    g_assert_null (cpus);
    g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  }
  {
    g_auto (Case) c;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 2, pin1, 1);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_REQUIRE, 2, NULL, NULL);
    g_assert_cmpstr (cpus, ==, "2,3");
  }
  {
    /* require on a host without SMT */
    g_auto (Case) c;
    g_autoptr (GError) error = NULL;
    g_autofree char *cpus = NULL;
    one_node_case (&c, 1, NULL, 0);
    cpus = fit_cpus (&c, VPA_THREAD_POLICY_REQUIRE, 1, NULL, &error);
    g_assert_null (cpus);
    g_assert_nonnull (strstr (error->message, "thread siblings (require), and its CPUs have none"));
  }
}

/* ------------------------------------------------------------------ */
/* Which nodes                                                         */
/* ------------------------------------------------------------------ */

/* Three nodes, 4 shared CPUs each; node 0 with the most free memory;
 * NICs on the nodes in nics. */
static void
three_nodes (Case *c, const gint *nics, guint n_nics)
{
  VpaHost *host = vpa_host_new ("three");

  case_init (c);
  add_cell (host, 0, 0, 0, 4, 1, 8 * 1048576, 0);
  add_cell (host, 1, 0, 4, 4, 1, 4 * 1048576, 0);
  add_cell (host, 2, 1, 8, 4, 1, 6 * 1048576, 0);
  for (guint i = 0; i < n_nics; i++)
    add_nic (host, 0x10 + (guint) nics[i], nics[i], 2);
  case_finish (c, host, "[device-spec nics]\nvendor-id=8086\nphysical-network=physnet1\n");
}

static gint
fit_node (Case *c, guint cell)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaFit) fit = NULL;

  c->guest.cells = c->cells;
  fit = vpa_fit (c->cap, c->inv, c->reqs, &c->guest, NULL, &error);
  g_assert_no_error (error);
  return g_array_index (fit->bindings, VpaCellBinding, cell).node;
}

static void
test_order (void)
{
  static const gint nic1[] = { 1 };

  {
    /* spread: the most free memory first */
    g_auto (Case) c;
    three_nodes (&c, NULL, 0);
    guest_cell (&c, 0, 2, 1048576);
    g_assert_cmpint (fit_node (&c, 0), ==, 0);
  }
  {
    /* pack: the least */
    g_auto (Case) c;
    three_nodes (&c, NULL, 0);
    guest_cell (&c, 0, 2, 1048576);
    c.guest.cell_pack = TRUE;
    g_assert_cmpint (fit_node (&c, 0), ==, 1);
  }
  {
    /* a guest without devices keeps off the device nodes */
    g_auto (Case) c;
    three_nodes (&c, nic1, 1);
    guest_cell (&c, 0, 2, 1048576);
    guest_cell (&c, 1, 2, 1048576);
    g_assert_cmpint (fit_node (&c, 0), ==, 0);
    g_assert_cmpint (fit_node (&c, 1), ==, 2);
  }
  {
    /* a guest with devices goes to them first, even a preferred one */
    g_auto (Case) c;
    three_nodes (&c, nic1, 1);
    guest_cell (&c, 0, 2, 1048576);
    g_ptr_array_add (c.reqs, port_request ("ua-p", VPA_POLICY_PREFERRED));
    g_assert_cmpint (fit_node (&c, 0), ==, 1);
  }
  {
    /* required devices pull a cell whose Nova order would be elsewhere:
     * cell 0 cannot go to node 1 (too little memory), cell 1 must */
    g_auto (Case) c;
    three_nodes (&c, nic1, 1);
    guest_cell (&c, 0, 2, 5 * 1048576);
    guest_cell (&c, 1, 2, 1048576);
    g_ptr_array_add (c.reqs, port_request ("ua-p", VPA_POLICY_REQUIRED));
    g_assert_cmpint (fit_node (&c, 0), ==, 0);
    g_assert_cmpint (fit_node (&c, 1), ==, 1);
  }
}

/* The failure names each cell no node can hold, and what the first
 * node lacks. */
static void
test_failure_message (void)
{
  g_auto (Case) c;
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaFit) fit = NULL;

  three_nodes (&c, NULL, 0);
  guest_cell (&c, 0, 2, 1048576);
  guest_cell (&c, 1, 8, 1048576);
  c.guest.cells = c.cells;
  fit = vpa_fit (c.cap, c.inv, c.reqs, &c.guest, NULL, &error);
  g_assert_null (fit);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_cmpstr (error->message, ==, "guest cell 1 (8 shared vCPUs, 1048576 KiB): no host node has it (node 0 lacks 8 shared CPUs (it has 4))");
}

/* The capacity of the pinned sample: claims, reservations, golden. */
static void
test_nodes_view (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", &error);
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaCapacity) cap = NULL;
  g_autofree char *text = NULL, *json = NULL;

  g_assert_no_error (error);
  config = vpa_config_load_file (VPA_TEST_DATA "/hosts/pinned.conf", &error);
  g_assert_no_error (error);
  g_assert_true (vpa_host_seal (host, &error));
  cap = vpa_capacity_new (host, config, host->claims, NULL, &error);
  g_assert_no_error (error);
  text = vpa_output_nodes_text (cap);
  json = vpa_output_nodes_json (cap);
  vpa_test_assert_golden (VPA_TEST_DATA "/nodes/pinned.txt", text);
  vpa_test_assert_golden (VPA_TEST_DATA "/nodes/pinned.json", json);
  /* the domain being placed does not compete with itself */
  g_clear_pointer (&cap, vpa_capacity_free);
  cap = vpa_capacity_new (host, config, host->claims, "db", &error);
  g_assert_cmpuint (vpa_capacity_model_node (cap, 0)->free_dedicated->len, ==, 6);
}

static void
test_bad_host_config (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", &error);
  g_autoptr (VpaConfig) config = vpa_test_config_load ("[host]\ncpu-dedicated-set=12-20\n");
  g_autoptr (VpaConfig) pages = vpa_test_config_load ("[host]\nreserved-huge-pages=node:0,size:4M,count:1\n");
  g_autoptr (VpaCapacity) cap = NULL;

  g_assert_true (vpa_host_seal (host, &error));
  cap = vpa_capacity_new (host, config, NULL, NULL, &error);
  g_assert_null (cap);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "t.conf: [host] cpu-dedicated-set: CPU 16 is not on host " VPA_TEST_DATA "/hosts/pinned.xml");
  g_clear_error (&error);
  cap = vpa_capacity_new (host, pages, NULL, NULL, &error);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "has no pages of 4096 KiB"));
}

/* ------------------------------------------------------------------ */
/* The binding written (data/numa: NAME.xml -> NAME.out, NAME.explain)  */
/* ------------------------------------------------------------------ */

static char *
place_file (const char *path, const char *buf, gsize len, GString *explain, GError **error)
{
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", error);
  g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/pinned.conf", error);
  g_autoptr (GPtrArray) claims = NULL;
  VpaPlaceOptions opts = { .explain = explain };

  g_assert_nonnull (host);
  g_assert_nonnull (config);
  claims = vpa_claim_filter (host->claims, NULL, FALSE);
  opts.claims = claims;
  opts.config = config;
  return vpa_pipeline_place (g_steal_pointer (&host), &opts, &(VpaDoc){ buf, len, path }, NULL, error);
}

static void
test_binding_golden (gconstpointer data)
{
  const char *path = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) explain = g_string_new (NULL);
  g_autofree char *base = g_strndup (path, strlen (path) - 4);
  g_autofree char *want_out = g_strconcat (base, ".out", NULL);
  g_autofree char *want_explain = g_strconcat (base, ".explain", NULL);
  g_autofree char *buf = NULL;
  g_autofree char *out = NULL;
  g_autofree char *again = NULL;
  gsize len = 0;

  buf = vpa_test_read_fixture (path, &len);
  out = place_file (path, buf, len, explain, &error);
  g_assert_no_error (error);
  vpa_test_assert_golden (want_out, out);
  vpa_test_assert_golden (want_explain, explain->str);
  /* idempotent: placing the output again changes nothing */
  again = place_file (path, out, strlen (out), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again, ==, out);
}

/* check (and the hook's prepare) verify a recorded binding: a
 * dedicated CPU another domain pins is refused. */
static void
test_check_binding (void)
{
  static const struct {
    const char *file;
    gboolean ok;
    const char *line;
  } cases[] = {
    { "sticky.out", TRUE, "guest cell 0: host node 0, dedicated CPUs 3: ok" },
    { "sticky-stale.xml", FALSE, "guest cell 0: dedicated CPU 1 on host node 0 is pinned by domain 'db'" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *path = g_strdup_printf (VPA_TEST_DATA "/numa/%s", cases[i].file);
      g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", &error);
      g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/pinned.conf", &error);
      g_autoptr (GPtrArray) claims = vpa_claim_filter (host->claims, NULL, FALSE);
      g_autofree char *buf = NULL;
      g_autoptr (VpaDomain) dom = NULL;
      g_autoptr (GPtrArray) results = NULL;
      const VpaCheckResult *last;
      gsize len = 0;
      gboolean ok = FALSE;

      buf = vpa_test_read_fixture (path, &len);
      dom = vpa_domain_parse (&(VpaDoc){ buf, len, path }, &error);
      g_assert_no_error (error);
      results = vpa_pipeline_check (g_steal_pointer (&host), claims, config, dom, TRUE, &ok, &error);
      g_assert_no_error (error);
      g_assert_cmpint (ok, ==, cases[i].ok);
      last = g_ptr_array_index (results, results->len - 1);
      g_assert_cmpstr (last->line, ==, cases[i].line);
    }
}

/* Where a policy allows devices off the guest's nodes, the nearest by
 * the distance matrix first: node 1 (distance 20) before node 2 (30),
 * although node 2's devices have the lower addresses. */
static void
test_distance (void)
{
  VpaHost *host = vpa_host_new ("distances");
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GPtrArray) reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  g_autoptr (VpaPlacement) pl = NULL;
  g_autoptr (GError) error = NULL;
  static const guint dist[3][3] = { { 10, 20, 30 }, { 20, 10, 30 }, { 30, 30, 10 } };
  static const gint guest_nodes[] = { 0 };
  VpaGuestNodes guest = { TRUE, guest_nodes, 1 };
  const VpaAssignment *a;

  for (guint n = 0; n < 3; n++)
    {
      VpaCell cell = { (gint) n, (gint) n, g_array_new (FALSE, FALSE, sizeof (guint)), 1048576 };
      cell.distances = g_array_new (FALSE, FALSE, sizeof (VpaDistance));
      for (guint m = 0; m < 3; m++)
        {
          VpaDistance d = { (gint) m, dist[n][m] };
          g_array_append_val (cell.distances, d);
        }
      g_array_append_val (cell.cpus, n);
      vpa_host_add_cell (host, &cell);
    }
  add_nic (host, 0x20, 1, 2);
  add_nic (host, 0x10, 2, 2);
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_cmpuint (vpa_host_distance (host, 0, 2), ==, 30);
  config = vpa_test_config_load ("[device-spec nics]\nvendor-id=8086\nphysical-network=physnet1\n");
  inv = vpa_inventory_new (host, config, NULL, &error);
  g_assert_no_error (error);
  g_ptr_array_add (reqs, port_request ("ua-p", VPA_POLICY_PREFERRED));
  pl = vpa_place (inv, reqs, &guest, &error);
  g_assert_no_error (error);
  a = g_ptr_array_index (pl->assignments, 0);
  g_assert_cmpint (vpa_host_device (inv->host, g_array_index (a->devices, guint, 0))->numa_node, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fit/brute-force", test_brute_force);
  g_test_add_func ("/fit/thread-policies", test_thread_policies);
  g_test_add_func ("/fit/order", test_order);
  g_test_add_func ("/fit/failure-message", test_failure_message);
  g_test_add_func ("/fit/nodes-view", test_nodes_view);
  g_test_add_func ("/fit/bad-host-config", test_bad_host_config);
  g_test_add_func ("/fit/check-binding", test_check_binding);
  g_test_add_func ("/fit/distance", test_distance);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/numa", "*.xml", "/fit/binding", test_binding_golden);
  return g_test_run ();
}
