/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NUMA-aware vSwitch ports (docs/vswitch.md): the [physnet NAME] and
 * [tunnel] groups of the configuration and their nodes against a host.
 */
#include <string.h>

#include "vpa-capacity.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-fit.h"
#include "vpa-policy.h"
#include "vpa-pipeline.h"
#include "vpa-source.h"
#include "vpa-traits.h"
#include "vpa-test-util.h"

static VpaConfig *
load_fixture (const char *name, GError **error)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "config", name, NULL);
  gsize len = 0;
  g_autofree char *data = vpa_test_read_fixture (path, &len);

  return vpa_config_load_data (data, len, name, error);
}

/* A sealed host of n_nodes nodes, two CPUs and 4 GiB each. */
static VpaHost *
host_new (guint n_nodes)
{
  g_autoptr (VpaHost) host = vpa_host_new ("test-host");
  g_autoptr (GError) error = NULL;

  for (guint n = 0; n < n_nodes; n++)
    {
      VpaCell cell = { .id = (gint) n, .socket = (gint) n };
      guint cpus[] = { 2 * n, 2 * n + 1 };

      cell.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
      g_array_append_vals (cell.cpus, cpus, 2);
      cell.memory_kib = 4 * 1024 * 1024;
      vpa_host_add_cell (host, &cell);
    }
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&host);
}

static void
assert_nodes (const VpaVswitchAffinity *aff, const char *expected)
{
  g_autoptr (GString) got = g_string_new (NULL);

  g_assert_nonnull (aff);
  for (guint i = 0; i < aff->nodes->len; i++)
    g_string_append_printf (got, "%s%u", i > 0 ? "," : "", g_array_index (aff->nodes, guint, i));
  g_assert_cmpstr (got->str, ==, expected);
}

static void
test_config_groups (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = load_fixture ("good-vswitch.conf", &error);
  g_autoptr (VpaConfig) defaults = vpa_config_new_default ();

  g_assert_no_error (error);
  g_assert_cmpuint (config->vswitch->len, ==, 4);
  assert_nodes (vpa_config_vswitch (config, "physnet1"), "0");
  assert_nodes (vpa_config_vswitch (config, "physnet2"), "0,1");
  /* an empty numa-nodes is Nova's default: no affinity */
  assert_nodes (vpa_config_vswitch (config, "physnet3"), "");
  assert_nodes (vpa_config_vswitch (config, NULL), "1");
  g_assert_cmpstr (vpa_config_vswitch (config, NULL)->group, ==, "tunnel");
  /* physnet names are exact, as Nova's network_metadata compares them */
  g_assert_null (vpa_config_vswitch (config, "PHYSNET1"));
  g_assert_null (vpa_config_vswitch (config, "physnet4"));
  g_assert_cmpuint (defaults->vswitch->len, ==, 0);
  g_assert_null (vpa_config_vswitch (defaults, NULL));
}

/* A node the host lacks is an error naming the group, the node and the
 * host's nodes, from the capacity every whole-guest fit builds. */
static void
test_config_absent_node (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load ("[physnet physnet1]\n"
                                                       "numa-nodes=0\n"
                                                       "[tunnel]\n"
                                                       "numa-nodes=0,3\n");
  g_autoptr (VpaHost) two = host_new (2);
  g_autoptr (VpaHost) four = host_new (4);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaCapacity) cap = NULL;

  g_assert_cmpint (vpa_config_vswitch_affinity_missing_node (vpa_config_vswitch (config, "physnet1"), two),
                   ==, -1);
  g_assert_cmpint (vpa_config_vswitch_affinity_missing_node (vpa_config_vswitch (config, NULL), two), ==,
                   3);
  g_assert_false (vpa_config_check_vswitch_nodes (config, two, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_true (g_str_has_suffix (error->message,
                                   ": [tunnel] numa-nodes: node 3 is not on host test-host "
                                   "(its nodes: 0,1)"));
  g_clear_error (&error);
  cap = vpa_capacity_new (two, config, NULL, NULL, &error);
  g_assert_null (cap);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_true (vpa_config_check_vswitch_nodes (config, four, &error));
  g_assert_no_error (error);
  cap = vpa_capacity_new (four, config, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (cap);
}

/* The <interface> elements of buf, in order, as written. */
static GPtrArray *
interfaces_of (const char *buf)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  for (const char *p = strstr (buf, "<interface "); p != NULL; p = strstr (p + 1, "<interface "))
    {
      const char *end = strstr (p, "</interface>");
      g_assert_nonnull (end);
      g_ptr_array_add (out, g_strndup (p, (gsize) (end - p)));
    }
  return out;
}

/* A vSwitch port is read, never rewritten: placing the domain leaves its
 * vhostuser, bridge, network and ethernet interfaces byte-identical
 * (only the SR-IOV port's <interface type='hostdev'> gets a VF). */
static void
test_ports_untouched (void)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "domain", "parse", "vswitch.xml", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/dual-socket.xml", &error);
  g_autoptr (VpaConfig) config =
    vpa_config_load_file (VPA_TEST_DATA "/hosts/dual-socket.conf", &error);
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GPtrArray) before = NULL;
  g_autoptr (GPtrArray) after = NULL;
  g_autofree char *out = NULL;
  g_autofree char *buf = NULL;
  gsize len = 0;

  g_assert_no_error (error);
  buf = vpa_test_read_fixture (path, &len);
  claims = vpa_claim_filter (host->claims, NULL, FALSE);
  out = vpa_pipeline_place (g_steal_pointer (&host), &(VpaPlaceOptions){ .claims = claims, .config = config }, &(VpaDoc){ buf, len, "vswitch.xml" }, NULL, &error);
  g_assert_no_error (error);
  before = interfaces_of (buf);
  after = interfaces_of (out);
  g_assert_cmpuint (before->len, ==, 6);
  g_assert_cmpuint (after->len, ==, before->len);
  for (guint i = 0; i < before->len; i++)
    {
      if (g_str_has_prefix (before->pdata[i], "<interface type='hostdev'"))
        continue;
      g_assert_cmpstr (after->pdata[i], ==, before->pdata[i]);
    }
}

/* The guest's host nodes as place writes them: <numatune><memory nodeset>. */
static char *
place_nodeset (const char *domain, const char *extra_config, GError **error)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "vswitch", domain, NULL);
  g_autofree char *base = NULL;
  g_autofree char *text = NULL;
  g_autofree char *buf = NULL;
  g_autofree char *out = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/dual-socket.xml", error);
  g_autoptr (GPtrArray) claims = NULL;
  gsize len = 0;
  const char *at, *end;

  g_assert_nonnull (host);
  base = vpa_test_read_fixture (VPA_TEST_DATA "/hosts/dual-socket.conf", &len);
  text = g_strconcat (base, "\n", extra_config, NULL);
  config = vpa_test_config_load (text);
  buf = vpa_test_read_fixture (path, &len);
  claims = vpa_claim_filter (host->claims, NULL, FALSE);
  out = vpa_pipeline_place (g_steal_pointer (&host), &(VpaPlaceOptions){ .claims = claims, .config = config }, &(VpaDoc){ buf, len, domain }, NULL, error);
  if (out == NULL)
    return NULL;
  at = strstr (out, "<memory mode='strict' nodeset='");
  g_assert_nonnull (at);
  at += strlen ("<memory mode='strict' nodeset='");
  end = strchr (at, '\'');
  return g_strndup (at, (gsize) (end - at));
}

/* place: the guest's cell goes to the node whose vSwitch serves the
 * port's physnet, both ways round; an SR-IOV port's physnet counts too
 * (as in Nova); a preferred port loses to nothing but still steers. */
static void
test_place_follows_physnet (void)
{
  static const struct {
    const char *domain;
    const char *config;
    const char *nodeset;
  } cases[] = {
    { "vhu.xml", "[physnet physnet9]\nnuma-nodes=0\n", "0" },
    { "vhu.xml", "[physnet physnet9]\nnuma-nodes=1\n", "1" },
    { "vhu.xml", "[tunnel]\nnuma-nodes=1\n[physnet physnet9]\nnuma-nodes=0-1\n", "0" },
    { "vhu-tunnel.xml", "[tunnel]\nnuma-nodes=1\n", "1" },
    { "vhu-tunnel.xml", "[tunnel]\nnuma-nodes=0\n", "0" },
    { "sriov.xml", "[physnet physnet1]\nnuma-nodes=1\n", "1" },
    { "sriov.xml", "[physnet physnet1]\nnuma-nodes=0\n", "0" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *nodes = place_nodeset (cases[i].domain, cases[i].config, &error);

      g_assert_no_error (error);
      g_test_message ("%s with %s: %s", cases[i].domain, cases[i].config, nodes);
      g_assert_cmpstr (nodes, ==, cases[i].nodeset);
    }
}

/* --explain ends with one line per rule: its nodes and whether the
 * chosen ones meet it; when the rules alone rule out every set, it says
 * so, and the error names the ports. */
static void
test_explain (void)
{
  static const char *const configs[] = {
    "[physnet physnet9]\nnuma-nodes=1\n",
    "[physnet physnet9]\nnuma-nodes=0\n[tunnel]\nnuma-nodes=1\n",
  };

  for (guint i = 0; i < G_N_ELEMENTS (configs); i++)
    {
      g_autofree char *path = g_build_filename (VPA_TEST_DATA, "vswitch",
                                                i == 0 ? "vhu.xml" : "vhu-both.xml", NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/dual-socket.xml", &error);
      g_autoptr (GString) explain = g_string_new (NULL);
      g_autoptr (GPtrArray) claims = NULL;
      g_autoptr (VpaConfig) config = NULL;
      g_autofree char *base = NULL;
      g_autofree char *text = NULL;
      g_autofree char *buf = NULL;
      g_autofree char *out = NULL;
      gsize len = 0;

      base = vpa_test_read_fixture (VPA_TEST_DATA "/hosts/dual-socket.conf", &len);
      text = g_strconcat (base, "\n", configs[i], NULL);
      config = vpa_test_config_load (text);
      buf = vpa_test_read_fixture (path, &len);
      claims = vpa_claim_filter (host->claims, NULL, FALSE);
      out = vpa_pipeline_place (g_steal_pointer (&host), &(VpaPlaceOptions){ .claims = claims, .config = config, .explain = explain }, &(VpaDoc){ buf, len, "vhu.xml" }, NULL, &error);
      if (i == 0)
        {
          g_assert_no_error (error);
          g_assert_nonnull (strstr (explain->str,
                                    "port ua-vhu0: physnet physnet9 is served from host node 1 "
                                    "(policy legacy): the guest needs a cell on host node 1: "
                                    "met\n"));
          continue;
        }
      g_assert_null (out);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
      g_assert_nonnull (strstr (error->message, "port ua-vhu0: physnet physnet9 is served from "
                                                "host node 0 (policy legacy); port ua-vhu1: the "
                                                "tunnel is served from host node 1"));
      g_assert_nonnull (strstr (explain->str, "port ua-vhu1: the tunnel is served from host node "
                                              "1 (policy legacy): the guest needs a cell on host "
                                              "node 1; rules out every set of nodes without "
                                              "one\n"));
    }
}

/* ------------------------------------------------------------------ */
/* The rule in the fit against a brute force                           */
/* ------------------------------------------------------------------ */

typedef struct {
  VpaConfig *config;
  VpaInventory *inv;
  VpaCapacity *cap;
  GPtrArray *reqs;      /* VpaRequest* */
  GPtrArray *rules;     /* VpaNetRule* */
  GArray *cells;        /* VpaFitCell */
  GPtrArray *vcpu_sets; /* the cells' vCPU arrays */
  VpaFitGuest guest;
} NetCase;

static void
net_case_clear (NetCase *c)
{
  g_clear_pointer (&c->cap, vpa_capacity_free);
  g_clear_pointer (&c->inv, vpa_inventory_free);
  g_clear_pointer (&c->config, vpa_config_free);
  g_clear_pointer (&c->reqs, g_ptr_array_unref);
  g_clear_pointer (&c->rules, g_ptr_array_unref);
  g_clear_pointer (&c->cells, g_array_unref);
  g_clear_pointer (&c->vcpu_sets, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NetCase, net_case_clear)

static void
random_cell (VpaHost *host, GRand *r, gint id, guint *cpu)
{
  VpaCell cell = { .id = id, .socket = id / 2 };
  guint n = (guint) g_rand_int_range (r, 1, 4);

  cell.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < n; i++, (*cpu)++)
    g_array_append_val (cell.cpus, *cpu);
  cell.memory_kib = (guint64) g_rand_int_range (r, 1, 4) * 1048576;
  vpa_host_add_cell (host, &cell);
}

static void
random_nic (VpaHost *host, GRand *r, guint bus, gint node)
{
  VpaAddr pf = VPA_ADDR (0, bus, 0, 0);
  guint n = (guint) g_rand_int_range (r, 1, 3);

  vpa_test_add_device (host, pf, "8086:1528", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, node, NULL);
  for (guint i = 0; i < n; i++)
    {
      vpa_test_add_device (host, VPA_ADDR (0, bus, 0x10, i), "8086:1515", VPA_DEV_TYPE_VF, pf,
                           node, NULL);
    }
}

/* A random rule: one or two nodes of n_nodes, any policy. */
static VpaNetRule *
random_rule (GRand *r, guint i, guint n_nodes)
{
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autofree char *port = g_strdup_printf ("ua-vhu%u", i);
  g_autofree char *physnet = g_strdup_printf ("physnet%u", i);
  gint a = g_rand_int_range (r, 0, (gint) n_nodes);
  gint b = g_rand_int_range (r, 0, (gint) n_nodes);

  g_array_append_val (nodes, a);
  if (b != a && g_rand_boolean (r))
    g_array_append_val (nodes, b);
  return vpa_fit_net_rule_new (port, g_rand_int_range (r, 0, 4) == 0 ? NULL : physnet,
                               (VpaPolicy) g_rand_int_range (r, 0, VPA_POLICY_LAST), nodes);
}

static void
random_net_case (NetCase *c, GRand *r)
{
  g_autoptr (VpaHost) host = vpa_host_new ("random");
  g_autoptr (GError) error = NULL;
  guint n_nodes = (guint) g_rand_int_range (r, 2, 6);
  guint cpu = 0;

  memset (c, 0, sizeof *c);
  c->reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  c->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fit_net_rule_free);
  c->cells = g_array_new (FALSE, TRUE, sizeof (VpaFitCell));
  c->vcpu_sets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint n = 0; n < n_nodes; n++)
    {
      random_cell (host, r, (gint) n, &cpu);
      if (g_rand_boolean (r))
        random_nic (host, r, 0x10 + n, (gint) n);
    }
  g_assert_true (vpa_host_seal (host, &error));
  c->config = vpa_test_config_load ("[device-spec nics]\nvendor-id=8086\n"
                                    "physical-network=physnet1\n");
  c->inv = vpa_inventory_new (g_steal_pointer (&host), c->config, NULL, &error);
  g_assert_no_error (error);
  c->cap = vpa_capacity_new (c->inv->host, c->config, NULL, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0, n = (guint) g_rand_int_range (r, 1, (gint) n_nodes + 1), v = 0; i < n; i++)
    {
      GArray *vcpus = g_array_new (FALSE, FALSE, sizeof (guint));
      VpaFitCell cell = { i, vcpus, (guint64) g_rand_int_range (r, 1, 3) * 1048576 };
      for (guint j = 0, k = (guint) g_rand_int_range (r, 1, 3); j < k; j++, v++)
        g_array_append_val (vcpus, v);
      g_ptr_array_add (c->vcpu_sets, vcpus);
      g_array_append_val (c->cells, cell);
    }
  for (guint i = 0, n = (guint) g_rand_int_range (r, 0, 3); i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("ua-p%u", i);
      VpaRequest *req = vpa_request_new (VPA_REQUEST_PORT, name, 1);
      VpaSpec *spec = vpa_spec_new ();

      vpa_spec_set (spec, "physical_network", "physnet1");
      g_ptr_array_add (req->specs, spec);
      req->policy = (VpaPolicy) g_rand_int_range (r, 0, VPA_POLICY_LAST);
      req->policy_source = VPA_POLICY_SOURCE_PORT;
      g_ptr_array_add (c->reqs, req);
    }
  for (guint i = 0, n = (guint) g_rand_int_range (r, 1, 5); i < n; i++)
    g_ptr_array_add (c->rules, random_rule (r, i, n_nodes));
  c->guest.cells = c->cells;
  c->guest.cpu_policy = VPA_CPU_POLICY_SHARED;
  c->guest.net_rules = c->rules;
}

/* The brute force's own reading of a rule: a chosen node of the rule, or
 * (socket) on the socket of one. */
static gboolean
brute_rule_met (const NetCase *c, const VpaNetRule *rule, const guint *map)
{
  for (guint i = 0; i < c->cells->len; i++)
    {
      const VpaNodeCap *nc = g_ptr_array_index (c->cap->nodes, map[i]);
      for (guint j = 0; j < rule->nodes->len; j++)
        {
          gint n = g_array_index (rule->nodes, gint, j);
          if (n == nc->node || (rule->policy == VPA_POLICY_SOCKET &&
                                vpa_capacity_model_node (c->cap, n)->socket == nc->socket))
            return TRUE;
        }
    }
  return FALSE;
}

/* (device tiers, preferred rules missed) of the mapping, or -1. */
static gint64
brute_cost (const NetCase *c, const guint *map)
{
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (VpaPlacement) pl = NULL;
  gint64 tiers = 0, misses = 0;
  VpaGuestNodes g;

  for (guint i = 0; i < c->rules->len; i++)
    {
      const VpaNetRule *rule = g_ptr_array_index (c->rules, i);
      gboolean met = brute_rule_met (c, rule, map);
      if (!met && rule->policy != VPA_POLICY_PREFERRED)
        return -1;
      misses += !met;
    }
  for (guint k = 0; k < c->cap->nodes->len; k++)
    {
      for (guint i = 0; i < c->cells->len; i++)
        {
          if (map[i] == k)
            g_array_append_val (nodes, ((VpaNodeCap *) g_ptr_array_index (c->cap->nodes, k))->node);
        }
    }
  g.numa_guest = TRUE;
  g.nodes = (const gint *) (gpointer) nodes->data;
  g.n_nodes = nodes->len;
  if (c->reqs->len > 0)
    {
      pl = vpa_place (c->inv, c->reqs, &g, NULL);
      if (pl == NULL)
        return -1;
      for (guint i = 0; i < pl->assignments->len; i++)
        {
          const VpaAssignment *a = g_ptr_array_index (pl->assignments, i);
          for (guint j = 0; j < a->devices->len; j++)
            {
              tiers += vpa_policy_tier (
                c->inv->host, &g,
                vpa_host_device (c->inv->host, g_array_index (a->devices, guint, j))->numa_node);
            }
        }
    }
  return tiers * 1000 + misses;
}

static void
brute_walk (const NetCase *c, guint *map, gboolean *used, guint depth, gint64 *best)
{
  if (depth == c->cells->len)
    {
      gint64 cost = brute_cost (c, map);
      if (cost >= 0 && (*best < 0 || cost < *best))
        *best = cost;
      return;
    }
  for (guint k = 0; k < c->cap->nodes->len; k++)
    {
      if (used[k] || !vpa_fit_cell (g_ptr_array_index (c->cap->nodes, k),
                                    &g_array_index (c->cells, VpaFitCell, depth), &c->guest,
                                    NULL, NULL))
        continue;
      used[k] = TRUE;
      map[depth] = k;
      brute_walk (c, map, used, depth + 1, best);
      used[k] = FALSE;
    }
}

/* On random small hosts: a fit exists iff the brute force finds one, and
 * it has the least device tiers, then the fewest preferred rules missed;
 * every hard rule holds on the fit's nodes. */
static void
test_fit_brute_force (void)
{
  const char *env = g_getenv ("VPA_FIT_SEED");
  guint32 seed = env != NULL ? (guint32) g_ascii_strtoull (env, NULL, 10) : (guint32) g_test_rand_int ();
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  guint fits = 0, fails = 0, soft_missed = 0;

  g_test_message ("seed %u", seed);
  for (guint n = 0; n < 600; n++)
    {
      g_auto (NetCase) c;
      g_autoptr (VpaFit) fit = NULL;
      g_autoptr (GError) error = NULL;
      g_autofree guint *map = NULL;
      g_autofree gboolean *used = NULL;
      gint64 best = -1;

      random_net_case (&c, r);
      map = g_new0 (guint, c.cells->len);
      used = g_new0 (gboolean, c.cap->nodes->len);
      brute_walk (&c, map, used, 0, &best);
      fit = vpa_fit (c.cap, c.inv, c.reqs, &c.guest, NULL, &error);
      if (best < 0)
        {
          if (fit != NULL)
            g_error ("case %u (seed %u): we fit where nothing does", n, seed);
          g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
          g_assert_null (strchr (error->message, '\n'));
          fails++;
          continue;
        }
      if (fit == NULL)
        g_error ("case %u (seed %u): a fit exists, we found none: %s", n, seed, error->message);
      g_assert_cmpint ((gint64) fit->tier_total * 1000 + fit->net_misses, ==, best);
      {
        g_autofree guint *got = g_new0 (guint, c.cells->len);
        for (guint i = 0; i < c.cells->len; i++)
          {
            for (guint k = 0; k < c.cap->nodes->len; k++)
              {
                if (((VpaNodeCap *) g_ptr_array_index (c.cap->nodes, k))->node ==
                    g_array_index (fit->bindings, VpaCellBinding, i).node)
                  got[i] = k;
              }
          }
        g_assert_cmpint (brute_cost (&c, got), ==, best);
      }
      fits++;
      soft_missed += fit->net_misses > 0;
    }
  g_test_message ("%u fit (%u missing a preferred network), %u fail", fits, soft_missed, fails);
  g_assert_cmpuint (fits, >, 100);
  g_assert_cmpuint (fails, >, 50);
}

/* COMPUTE_NET_NUMA_AFFINITY also for a NUMA-aware vSwitch: a host
 * without VFs has it once a [physnet] or [tunnel] group has nodes. */
static void
test_traits (void)
{
  static const struct {
    const char *config;
    gboolean has;
  } cases[] = {
    { "", FALSE },
    { "[physnet physnet1]\nnuma-nodes=\n", FALSE },
    { "[physnet physnet1]\nnuma-nodes=0\n", TRUE },
    { "[tunnel]\nnuma-nodes=1\n", TRUE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaConfig) config = vpa_test_config_load (cases[i].config);
      g_autoptr (VpaInventory) inv = vpa_inventory_new (host_new (2), config, NULL, &error);
      g_auto (GStrv) traits = NULL;

      g_assert_no_error (error);
      traits = vpa_traits_compute (inv);
      g_assert_cmpint (g_strv_contains ((const char *const *) traits,
                                        "COMPUTE_NET_NUMA_AFFINITY"),
                       ==, cases[i].has);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/vswitch/config-groups", test_config_groups);
  g_test_add_func ("/vswitch/config-absent-node", test_config_absent_node);
  g_test_add_func ("/vswitch/ports-untouched", test_ports_untouched);
  g_test_add_func ("/vswitch/fit-brute-force", test_fit_brute_force);
  g_test_add_func ("/vswitch/place-follows-physnet", test_place_follows_physnet);
  g_test_add_func ("/vswitch/explain", test_explain);
  g_test_add_func ("/vswitch/traits", test_traits);
  return g_test_run ();
}
