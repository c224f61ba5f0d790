/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups in placement: the gpu-server sample (pairs of a GPU and
 * a NIC below one switch, held devices, required groups that cannot be
 * met, every level) and a brute force over every assignment on small
 * random hosts that proves the placement optimal: no assignment has a
 * smaller tier total, nor the same tier total and a smaller locality
 * cost, and the placement fails only when no assignment meets the
 * required groups.
 */
#include <string.h>

#include "vpa-pcie.h"
#include "vpa-pipeline.h"
#include "vpa-place.h"
#include "vpa-place-private.h"
#include "vpa-requests.h"
#include "vpa-source.h"
#include "vpa-test-util.h"

/* ------------------------------------------------------------------ */
/* The gpu-server sample through the whole pipeline                    */
/* ------------------------------------------------------------------ */

static char *
pair_domain (guint node, guint pairs, const char *level, const char *policy,
             const char *physnet, const char *numa_policy)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s,
                          "<domain type='kvm'><name>train</name><memory unit='GiB'>8</memory>"
                          "<vcpu>8</vcpu><metadata><vpa:affinity xmlns:vpa='"
                          "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'>"
                          "<vpa:flavor policy='%s'/>",
                          numa_policy);
  for (guint i = 0; i < pairs; i++)
    {
      g_string_append_printf (s, "<vpa:locality-group name='g%u' level='%s' policy='%s'/>", i,
                              level, policy);
    }
  for (guint i = 0; i < pairs; i++)
    {
      g_string_append_printf (s, "<vpa:device alias='GPU' name='ua-gpu%u' locality-group='g%u'/>",
                              i, i);
    }
  for (guint i = 0; i < pairs; i++)
    {
      g_string_append_printf (s, "<vpa:port device='ua-net%u' physnet='%s' locality-group='g%u'/>",
                              i, physnet, i);
    }
  g_string_append_printf (s,
                          "</vpa:affinity></metadata><os><type arch='x86_64'>hvm</type></os>"
                          "<cpu><numa><cell id='0' cpus='0-7' memory='8' unit='GiB'/></numa>"
                          "</cpu><numatune><memory nodeset='%u'/></numatune><devices>",
                          node);
  for (guint i = 0; i < pairs; i++)
    {
      g_string_append_printf (s, "<interface type='hostdev' managed='yes'><alias name='ua-net%u'/>"
                                 "</interface>",
                              i);
    }
  g_string_append (s, "</devices></domain>");
  return g_string_free (s, FALSE);
}

typedef struct {
  char *out;
  VpaHost *host;
  GError *error;
  GPtrArray *placed; /* device, address, locality-group, locality quadruples */
  GString *explain;  /* the --explain report */
} Placed;

static void
placed_clear (Placed *p)
{
  g_free (p->out);
  g_clear_pointer (&p->host, vpa_host_free);
  g_clear_error (&p->error);
  g_clear_pointer (&p->placed, g_ptr_array_unref);
  if (p->explain != NULL)
    g_string_free (p->explain, TRUE);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Placed, placed_clear)

static void
place_sample (Placed *p, const char *xml)
{
  g_autofree char *snap = g_build_filename (VPA_TEST_DATA, "hosts", "gpu-server.xml", NULL);
  g_autofree char *conf = g_build_filename (VPA_TEST_DATA, "hosts", "gpu-server.conf", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (conf, &error);
  VpaHost *host;
  g_autoptr (GRegex) re = g_regex_new ("<vpa:placed device=.([^'\"]+). address=.([^'\"]+)."
                                       "[^>]*locality-group=.([^'\"]+). locality=.([^'\"]+).",
                                       0, 0, NULL);
  g_autoptr (GMatchInfo) m = NULL;

  g_assert_no_error (error);
  host = vpa_source_load (snap, &error);
  g_assert_no_error (error);
  p->host = vpa_source_load (snap, &error);
  p->placed = g_ptr_array_new_with_free_func (g_free);
  /* The pipeline takes the host; the claims are borrowed from the copy. */
  p->explain = g_string_new (NULL);
  {
    VpaPlaceOptions opts = { .claims = p->host->claims, .config = config, .explain = p->explain };
    p->out = vpa_pipeline_place (host, &opts, &(VpaDoc){ xml, strlen (xml), "train.xml" }, NULL, &p->error);
  }
  for (g_regex_match (re, p->out != NULL ? p->out : "", 0, &m); g_match_info_matches (m);
       g_match_info_next (m, NULL))
    {
      for (guint k = 1; k <= 4; k++)
        g_ptr_array_add (p->placed, g_match_info_fetch (m, (gint) k));
    }
}

static const char *
placed_field (const Placed *p, const char *device, guint field)
{
  for (guint i = 0; i + 3 < p->placed->len; i += 4)
    {
      if (strcmp (p->placed->pdata[i], device) == 0)
        return p->placed->pdata[i + field];
    }
  g_error ("no <vpa:placed device='%s'>", device);
  return NULL;
}

static guint
index_of (const VpaHost *host, const char *addr_str)
{
  VpaAddr a;
  gint i;

  g_assert_true (vpa_addr_parse (addr_str, &a));
  i = vpa_host_lookup (host, a);
  g_assert_cmpint (i, >=, 0);
  return (guint) i;
}

/* Four GPU+NIC pairs on node 0: sw0 has two GPUs and two NICs, sw1 two
 * GPUs and one NIC: every pair below one switch (PIX). */
static void
test_sample_pairs (void)
{
  g_autofree char *xml = pair_domain (0, 4, "switch", "preferred", "rdma", "required");
  g_auto (Placed) p = { 0 };

  place_sample (&p, xml);
  g_assert_no_error (p.error);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *gpu = g_strdup_printf ("ua-gpu%u", i);
      g_autofree char *net = g_strdup_printf ("ua-net%u", i);
      guint a = index_of (p.host, placed_field (&p, gpu, 1));
      guint b = index_of (p.host, placed_field (&p, net, 1));

      g_assert_cmpstr (placed_field (&p, gpu, 3), ==, "switch");
      g_assert_cmpstr (placed_field (&p, net, 3), ==, "switch");
      g_assert_cmpint (vpa_host_device (p.host, a)->numa_node, ==, 0);
      g_assert_cmpint (vpa_host_device (p.host, b)->numa_node, ==, 0);
      g_assert_cmpint (vpa_pcie_distance (p.host, a, b), ==, VPA_PCIE_PIX);
    }
}

/* Node 1 has three free GPUs (infer1 holds gpu6): three pairs below a
 * switch; the fourth GPU is remote (preferred), and its NIC stays on the
 * guest's node rather than follow it, since the tier outranks locality. */
static void
test_sample_held (void)
{
  g_autofree char *xml = pair_domain (1, 4, "switch", "preferred", "rdma", "preferred");
  g_auto (Placed) p = { 0 };
  guint at_switch = 0, at_system = 0;

  place_sample (&p, xml);
  g_assert_no_error (p.error);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *gpu = g_strdup_printf ("ua-gpu%u", i);
      g_autofree char *net = g_strdup_printf ("ua-net%u", i);
      const char *level = placed_field (&p, gpu, 3);
      guint b = index_of (p.host, placed_field (&p, net, 1));

      g_assert_cmpint (vpa_host_device (p.host, b)->numa_node, ==, 1);
      g_assert_cmpstr (placed_field (&p, gpu, 1), !=, "0000:ba:00.0");
      at_switch += strcmp (level, "switch") == 0;
      at_system += strcmp (level, "system") == 0;
    }
  g_assert_cmpuint (at_switch, ==, 3);
  g_assert_cmpuint (at_system, ==, 1);
}

/* The front-end NICs sit on root ports without GPUs: a required switch
 * group fails, naming the group; preferred, it gets the host bridge the
 * front-end card shares with sw0 (PHB); level numa-node is met. */
static void
test_sample_levels (void)
{
  g_autofree char *req = pair_domain (0, 1, "switch", "required", "frontend", "required");
  g_autofree char *pref = pair_domain (0, 1, "switch", "preferred", "frontend", "required");
  g_autofree char *node = pair_domain (0, 1, "numa-node", "required", "frontend", "required");
  g_auto (Placed) a = { 0 };
  g_auto (Placed) b = { 0 };
  g_auto (Placed) c = { 0 };

  place_sample (&a, req);
  g_assert_error (a.error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_cmpstr (a.error->message, ==,
                   "locality group 'g0' (level switch, policy required): no switch holds enough "
                   "free devices their NUMA policies allow for device 'ua-gpu0', port 'ua-net0'");
  g_assert_null (a.out);

  place_sample (&b, pref);
  g_assert_no_error (b.error);
  g_assert_cmpstr (placed_field (&b, "ua-gpu0", 3), ==, "root-complex");
  g_assert_cmpint (vpa_pcie_distance (b.host, index_of (b.host, placed_field (&b, "ua-gpu0", 1)),
                                      index_of (b.host, placed_field (&b, "ua-net0", 1))),
                   ==, VPA_PCIE_PHB);
  g_assert_nonnull (strstr (b.explain->str,
                            "locality group 'g0': level switch, policy preferred: root-complex, "
                            "host bridge pci0000:15: no switch has enough free devices their NUMA "
                            "policies allow for all its members\n"));
  /* The explain names each member's row of `topology`: the VF's is its
   * PF's NIC row. */
  g_assert_true (g_regex_match_simple ("\n  topology rows: GPU[01] 0000:1[8a]:00\\.0, NIC[23] "
                                       "0000:20:[0-9a-f]{2}\\.[0-7] \\(a VF of 0000:20:00\\.[01]\\)\n",
                                       b.explain->str, 0, 0));

  place_sample (&c, node);
  g_assert_no_error (c.error);
  g_assert_cmpstr (placed_field (&c, "ua-net0", 2), ==, "g0");
}

/* Placing the output again changes nothing. */
static void
test_sample_idempotent (void)
{
  g_autofree char *xml = pair_domain (0, 2, "switch", "preferred", "rdma", "required");
  g_auto (Placed) p = { 0 };
  g_auto (Placed) q = { 0 };

  place_sample (&p, xml);
  g_assert_no_error (p.error);
  place_sample (&q, p.out);
  g_assert_no_error (q.error);
  g_assert_cmpstr (q.out, ==, p.out);
}

/* A VF on node 0 of a switch NIC (not the front-end card on bus 0x20)
 * below another host bridge than device gpu. */
static guint
far_vf (const VpaHost *host, guint gpu)
{
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDevice *d = vpa_host_device (host, i);
      if (d->dev_type == VPA_DEV_TYPE_VF && d->numa_node == 0 &&
          VPA_ADDR_BUS (d->parent_addr) != 0x20 &&
          vpa_pcie_distance (host, gpu, i) == VPA_PCIE_NODE)
        return i;
    }
  g_error ("no far VF");
  return 0;
}

/* Placing again keeps a locality group that is still met; a required
 * group whose port was moved off its switch is placed again whole. */
static void
test_sample_sticky (void)
{
  g_autofree char *xml = pair_domain (0, 1, "switch", "required", "rdma", "required");
  g_auto (Placed) p = { 0 };
  g_auto (Placed) q = { 0 };
  g_auto (Placed) r = { 0 };
  g_autoptr (GString) moved = NULL;
  g_autofree char *from = NULL, *to = NULL;
  guint gpu, net, far;
  const VpaDevice *fd;

  place_sample (&p, xml);
  g_assert_no_error (p.error);
  place_sample (&q, p.out);
  g_assert_no_error (q.error);
  g_assert_cmpstr (q.out, ==, p.out);
  g_assert_nonnull (strstr (q.explain->str, "port 'ua-net0': kept"));
  g_assert_nonnull (strstr (q.explain->str, "device 'ua-gpu0': kept"));

  gpu = index_of (p.host, placed_field (&p, "ua-gpu0", 1));
  net = index_of (p.host, placed_field (&p, "ua-net0", 1));
  far = far_vf (p.host, gpu);
  fd = vpa_host_device (p.host, far);
  from = g_strdup_printf ("bus='0x%02x' slot='0x%02x' function='0x%x'",
                          VPA_ADDR_BUS (vpa_host_device (p.host, net)->addr),
                          VPA_ADDR_SLOT (vpa_host_device (p.host, net)->addr),
                          VPA_ADDR_FUNCTION (vpa_host_device (p.host, net)->addr));
  to = g_strdup_printf ("bus='0x%02x' slot='0x%02x' function='0x%x'", VPA_ADDR_BUS (fd->addr),
                        VPA_ADDR_SLOT (fd->addr), VPA_ADDR_FUNCTION (fd->addr));
  moved = g_string_new (p.out);
  g_assert_cmpuint (g_string_replace (moved, from, to, 1), ==, 1);
  place_sample (&r, moved->str);
  g_assert_no_error (r.error);
  g_assert_nonnull (strstr (r.explain->str,
                            "placed again: its locality group 'g0' is no longer within one "
                            "switch"));
  g_assert_cmpstr (placed_field (&r, "ua-net0", 3), ==, "switch");
  g_assert_cmpint (vpa_pcie_distance (r.host, index_of (r.host, placed_field (&r, "ua-gpu0", 1)),
                                      index_of (r.host, placed_field (&r, "ua-net0", 1))),
                   ==, VPA_PCIE_PIX);
}

/* A <vpa:device> and a port of one group behind the guest's expander
 * bus: the added <hostdev> gets its root port like any placed device. */
static void
test_sample_guest_numa (void)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "guest-numa", "q35-two-cells.xml", NULL);
  g_autofree char *orig = NULL;
  g_autoptr (GString) xml = NULL;
  g_auto (Placed) p = { 0 };
  g_auto (Placed) q = { 0 };

  g_assert_true (g_file_get_contents (path, &orig, NULL, NULL));
  xml = g_string_new (orig);
  g_assert_cmpuint (g_string_replace (xml, "<vpa:flavor aliases=\"GPU:1,QuickAssist:1\" policy=\"required\"/>",
                                      "<vpa:flavor policy=\"preferred\"/><vpa:locality-group name=\"g0\"/>"
                                      "<vpa:device alias=\"GPU\" name=\"ua-gpu0\" locality-group=\"g0\"/>",
                                      1),
                    ==, 1);
  g_assert_cmpuint (g_string_replace (xml, "<vpa:port device=\"ua-data0\" physnet=\"physnet2\" policy=\"preferred\"/>",
                                      "<vpa:port device=\"ua-data0\" physnet=\"rdma\" locality-group=\"g0\"/>",
                                      1),
                    ==, 1);
  place_sample (&p, xml->str);
  g_assert_no_error (p.error);
  g_assert_cmpstr (placed_field (&p, "ua-gpu0", 3), ==, "switch");
  g_assert_nonnull (strstr (p.out, "<alias name='ua-vpa-rp-ua-gpu0'/>"));
  g_assert_nonnull (strstr (p.out, "<alias name='ua-gpu0'/>"));
  place_sample (&q, p.out);
  g_assert_no_error (q.error);
  g_assert_cmpstr (q.out, ==, p.out);
}

/* ------------------------------------------------------------------ */
/* Brute force on small random hosts                                   */
/* ------------------------------------------------------------------ */

#define N_SCENARIOS 300
#define MAX_ASSIGNMENTS 400000

typedef struct {
  GRand *rand;
  VpaHost *host;
  guint bus;
} Gen;

static VpaDevice *
gen_device (Gen *g, VpaAddr addr, const char *ids, VpaDevType type, VpaAddr pf, gint node,
            VpaAddr root, VpaAddr parent, guint32 klass)
{
  VpaDevice *d = vpa_test_add_device (g->host, addr, ids, type, pf, node, NULL);

  d->pcie_root = root;
  d->pcie_parent = parent;
  d->class_code = klass;
  return d;
}

/* An endpoint on bus below parent: a GPU or a NIC PF with 1-3 VFs. */
static void
gen_endpoint (Gen *g, VpaAddr root, VpaAddr parent, gint node)
{
  guint bus = g->bus++;

  if (g_rand_boolean (g->rand))
    {
      gen_device (g, VPA_ADDR (0, bus, 0, 0), "10de:2330", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, node,
                  root, parent, 0x030200);
    }
  else
    {
      VpaAddr pf = VPA_ADDR (0, bus, 0, 0);
      guint n = (guint) g_rand_int_range (g->rand, 1, 4);

      gen_device (g, pf, "15b3:1021", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, node, root, parent,
                  0x020000);
      for (guint v = 0; v < n; v++)
        {
          gen_device (g, VPA_ADDR (0, bus, 0, v + 1), "15b3:101e", VPA_DEV_TYPE_VF, pf, node, root,
                      parent, 0x020000);
        }
    }
}

static void
gen_root_port (Gen *g, VpaAddr root, guint slot, gint node)
{
  VpaAddr rp = VPA_ADDR (0, VPA_ADDR_BUS (root), slot, 0);

  gen_device (g, rp, "8086:352a", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, node, root, VPA_ADDR_NONE,
              0x060400);
  if (g_rand_int_range (g->rand, 0, 3) == 0)
    {
      gen_endpoint (g, root, rp, node);
      return;
    }
  /* A switch: upstream port, 2-3 downstream ports with an endpoint each. */
  {
    guint ubus = g->bus++, dbus = g->bus++;
    VpaAddr usp = VPA_ADDR (0, ubus, 0, 0);
    guint n = (guint) g_rand_int_range (g->rand, 2, 4);

    gen_device (g, usp, "1000:c030", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, node, root, rp, 0x060400);
    for (guint k = 0; k < n; k++)
      {
        VpaAddr dsp = VPA_ADDR (0, dbus, k, 0);
        gen_device (g, dsp, "1000:c030", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, node, root, usp,
                    0x060400);
        gen_endpoint (g, root, dsp, node);
      }
  }
}

static VpaHost *
gen_host (GRand *rand, GPtrArray *claims)
{
  Gen g = { rand, vpa_host_new ("random"), 0x10 };
  guint sockets = (guint) g_rand_int_range (rand, 1, 3);
  guint per = (guint) g_rand_int_range (rand, 1, 3);
  g_autoptr (GError) error = NULL;

  for (guint n = 0; n < sockets * per; n++)
    {
      VpaCell cell = { (gint) n, (gint) (n / per), g_array_new (FALSE, FALSE, sizeof (guint)),
                       0 };
      guint bridges = (guint) g_rand_int_range (rand, 1, 3);

      /* A random distance matrix: the NUMA distance ranks devices
       * within the tiers, before locality. */
      cell.distances = g_array_new (FALSE, FALSE, sizeof (VpaDistance));
      for (guint m = 0; m < sockets * per; m++)
        {
          VpaDistance d = { (gint) m, m == n ? 10 : (guint) g_rand_int_range (rand, 11, 41) };
          g_array_append_val (cell.distances, d);
        }

      vpa_host_add_cell (g.host, &cell);
      for (guint b = 0; b < bridges; b++)
        {
          VpaAddr root = VPA_PCIE_ROOT (0, g.bus++);
          guint ports = (guint) g_rand_int_range (rand, 1, 3);
          for (guint p = 0; p < ports; p++)
            gen_root_port (&g, root, p + 1, (gint) n);
        }
    }
  g_assert_true (vpa_host_seal (g.host, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < g.host->devices->len; i++)
    {
      const VpaDevice *d = vpa_host_device (g.host, i);
      if (!vpa_pcie_is_bridge (d) && d->dev_type != VPA_DEV_TYPE_PF &&
          g_rand_int_range (rand, 0, 6) == 0)
        g_ptr_array_add (claims, vpa_claim_new ("other", d->addr, TRUE));
    }
  return g.host;
}

static VpaRequest *
gen_request (GRand *rand, GPtrArray *reqs, gboolean gpu, guint n, const char *group,
             VpaLocality level, gboolean required)
{
  g_autofree char *name = g_strdup_printf ("%s%u", gpu ? "gpu" : "net", n);
  VpaRequest *req = vpa_request_new (gpu ? VPA_REQUEST_DEVICE : VPA_REQUEST_PORT, name, 1);
  VpaSpec *spec = vpa_spec_new ();
  static const VpaPolicy policies[] = { VPA_POLICY_PREFERRED, VPA_POLICY_REQUIRED,
                                        VPA_POLICY_LEGACY, VPA_POLICY_SOCKET };

  if (gpu)
    {
      vpa_spec_set (spec, "vendor_id", "10de");
    }
  else
    {
      vpa_spec_set (spec, "physical_network", "rdma");
      vpa_spec_set (spec, "remote_managed", "false");
    }
  g_ptr_array_add (req->specs, spec);
  req->policy = policies[g_rand_int_range (rand, 0, G_N_ELEMENTS (policies))];
  req->policy_source = VPA_POLICY_SOURCE_PORT;
  if (group != NULL)
    {
      req->locality_group = g_strdup (group);
      req->locality_level = level;
      req->locality_required = required;
    }
  g_ptr_array_add (reqs, req);
  return req;
}

typedef struct {
  const VpaInventory *inv;
  GPtrArray *reqs;
  const VpaGuestNodes *guest;
  GArray **cands; /* per request: guint host indices it may take */
  guint *pick;    /* per request: host index */
  gboolean *used; /* per host index */
  guint n_groups;
  char **group_names;
  gboolean found;
  gint64 best_tier, best_loc;
  guint64 visited;
} Brute;

/* Tier total and locality cost of a complete assignment; FALSE when a
 * required group is farther than its level. Locality cost as the
 * placement defines it: sum of W^(levels farther than asked). */
static gboolean
evaluate (const Brute *b, const guint *pick, gint64 *tier, gint64 *loc)
{
  const VpaHost *host = b->inv->host;

  gint64 tiers = 0, dists = 0;

  *loc = 0;
  /* The tier total, then (within the tiers) the NUMA distance total
   * to the nearest guest node, as one key: both come before locality. */
  for (guint r = 0; r < b->reqs->len; r++)
    {
      gint node = vpa_host_device (host, pick[r])->numa_node;
      VpaTier t = vpa_policy_tier (host, b->guest, node);
      guint dist = VPA_PLACE_DIST_MAX;

      tiers += t;
      if (t != VPA_TIER_SOCKET && t != VPA_TIER_REMOTE)
        continue;
      for (guint i = 0; i < b->guest->n_nodes; i++)
        {
          guint d = vpa_host_distance (host, b->guest->nodes[i], node);
          if (d != G_MAXUINT)
            dist = MIN (dist, d > 10 ? MIN (d - 10, VPA_PLACE_DIST_MAX) : 0);
        }
      dists += dist;
    }
  *tier = tiers * ((gint64) b->reqs->len * VPA_PLACE_DIST_MAX + 1) + dists;
  for (guint g = 0; g < b->n_groups; g++)
    {
      guint devs[16], n = 0;
      VpaLocality level = VPA_LOCALITY_SWITCH, reached;
      gboolean required = FALSE;
      gint64 w = 1;

      for (guint r = 0; r < b->reqs->len; r++)
        {
          const VpaRequest *req = g_ptr_array_index (b->reqs, r);
          if (g_strcmp0 (req->locality_group, b->group_names[g]) != 0)
            continue;
          devs[n++] = pick[r];
          level = req->locality_level;
          required = req->locality_required;
        }
      reached = vpa_pcie_locality_of (host, devs, n);
      if (required && reached > level)
        return FALSE;
      for (guint e = level; e < reached; e++)
        w *= b->n_groups + 1;
      *loc += w;
    }
  return TRUE;
}

static void
brute (Brute *b, guint r)
{
  if (r == b->reqs->len)
    {
      gint64 tier, loc;

      b->visited++;
      if (!evaluate (b, b->pick, &tier, &loc))
        return;
      if (!b->found || tier < b->best_tier || (tier == b->best_tier && loc < b->best_loc))
        {
          b->found = TRUE;
          b->best_tier = tier;
          b->best_loc = loc;
        }
      return;
    }
  for (guint k = 0; k < b->cands[r]->len; k++)
    {
      guint i = g_array_index (b->cands[r], guint, k);
      if (b->used[i])
        continue;
      b->used[i] = TRUE;
      b->pick[r] = i;
      brute (b, r + 1);
      b->used[i] = FALSE;
    }
}

/* What a request may take: free, matching, not a PF, allowed by its policy. */
static GArray *
candidates (const VpaInventory *inv, const VpaRequest *req, const VpaGuestNodes *guest)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaDevice *d = vpa_host_device (inv->host, i);
      if (!vpa_inventory_has (inv, i) || inv->state[i] != VPA_DEV_STATE_FREE ||
          d->dev_type == VPA_DEV_TYPE_PF ||
          !vpa_inventory_model_spec_match (inv, i, g_ptr_array_index (req->specs, 0)) ||
          !vpa_policy_allows (req->policy, inv->host, guest,
                              vpa_policy_tier (inv->host, guest, d->numa_node)))
        continue;
      g_array_append_val (out, i);
    }
  return out;
}

static void
test_brute_force (void)
{
  static const char conf[] = "[device-spec gpu]\nvendor-id=10de\n"
                             "[device-spec nic]\nvendor-id=15b3\nphysical-network=rdma\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_data (conf, strlen (conf), "t.conf", &error);
  guint checked = 0, placed = 0, failed = 0, at_level[VPA_LOCALITY_LAST] = { 0 };

  g_assert_no_error (error);
  for (guint seed = 1; seed <= N_SCENARIOS; seed++)
    {
      g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
      GPtrArray *claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
      VpaHost *host = gen_host (rand, claims);
      g_autoptr (VpaInventory) inv = vpa_inventory_new (host, config, claims, &error);
      g_autoptr (GPtrArray) reqs =
        g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
      guint n_groups = (guint) g_rand_int_range (rand, 1, 4), n_nodes = host->cells->len;
      gint node = g_rand_int_range (rand, 0, (gint) n_nodes);
      VpaGuestNodes guest = { TRUE, &node, 1 };
      g_autofree char **names = g_new0 (char *, n_groups + 1);
      g_autoptr (VpaPlacement) pl = NULL;
      g_autoptr (GError) perr = NULL;
      Brute b = { 0 };
      guint64 space = 1;

      g_assert_no_error (error);
      for (guint gi = 0; gi < n_groups; gi++)
        {
          VpaLocality level = (VpaLocality) g_rand_int_range (rand, 0, VPA_LOCALITY_SYSTEM);
          gboolean required = g_rand_int_range (rand, 0, 3) == 0;
          names[gi] = g_strdup_printf ("g%u", gi);
          gen_request (rand, reqs, TRUE, gi, names[gi], level, required);
          gen_request (rand, reqs, FALSE, gi, names[gi], level, required);
        }
      if (g_rand_boolean (rand))
        gen_request (rand, reqs, FALSE, 99, NULL, VPA_LOCALITY_SWITCH, FALSE);

      b.inv = inv;
      b.reqs = reqs;
      b.guest = &guest;
      b.n_groups = n_groups;
      b.group_names = names;
      b.cands = g_new0 (GArray *, reqs->len);
      b.pick = g_new0 (guint, reqs->len);
      b.used = g_new0 (gboolean, inv->host->devices->len);
      for (guint r = 0; r < reqs->len; r++)
        {
          b.cands[r] = candidates (inv, g_ptr_array_index (reqs, r), &guest);
          space *= MAX (b.cands[r]->len, 1);
        }
      if (space <= MAX_ASSIGNMENTS)
        {
          brute (&b, 0);
          pl = vpa_place (inv, reqs, &guest, &perr);
          checked++;
          if (!b.found)
            {
              g_assert_null (pl);
              g_assert_error (perr, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
              failed++;
            }
          else
            {
              g_autofree guint *pick = g_new0 (guint, reqs->len);
              gint64 tier, loc;

              if (pl == NULL)
                {
                  g_error ("seed %u: no placement, but one exists (tier %" G_GINT64_FORMAT
                           ", locality %" G_GINT64_FORMAT "): %s",
                           seed, b.best_tier, b.best_loc, perr->message);
                }
              for (guint r = 0; r < reqs->len; r++)
                {
                  const VpaAssignment *a = g_ptr_array_index (pl->assignments, r);
                  g_assert_cmpuint (a->devices->len, ==, 1);
                  pick[r] = g_array_index (a->devices, guint, 0);
                }
              g_assert_true (evaluate (&b, pick, &tier, &loc));
              if (tier != b.best_tier || loc != b.best_loc)
                {
                  g_error ("seed %u: placed with tier %" G_GINT64_FORMAT " locality %" G_GINT64_FORMAT
                           ", the best is tier %" G_GINT64_FORMAT " locality %" G_GINT64_FORMAT,
                           seed, tier, loc, b.best_tier, b.best_loc);
                }
              for (guint gi = 0; gi < pl->groups->len; gi++)
                at_level[((const VpaGroupPlacement *) g_ptr_array_index (pl->groups, gi))->reached]++;
              placed++;
            }
        }
      for (guint r = 0; r < reqs->len; r++)
        g_array_unref (b.cands[r]);
      g_free (b.cands);
      g_free (b.pick);
      g_free (b.used);
      for (guint gi = 0; gi < n_groups; gi++)
        g_free (names[gi]);
    }
  g_test_message ("brute force: %u scenarios checked, %u placed, %u fail as they must; groups "
                  "at switch %u, root-complex %u, numa-node %u, socket %u, system %u",
                  checked, placed, failed, at_level[0], at_level[1], at_level[2], at_level[3],
                  at_level[4]);
  g_assert_cmpuint (checked, >=, N_SCENARIOS / 2);
  g_assert_cmpuint (failed, >, 0);
  for (guint l = 0; l < VPA_LOCALITY_LAST; l++)
    g_assert_cmpuint (at_level[l], >, 0);
}

/* Guest on node 0, which has no devices; a GPU+NIC pair may go to node 1
 * (distance 20), each below its own host bridge, or to node 2 (distance
 * 30), both below one root port. NUMA distance comes before locality:
 * node 1, the group at level numa-node. */
static void
test_distance_first (void)
{
  static const char conf[] = "[device-spec gpu]\nvendor-id=10de\n"
                             "[device-spec nic]\nvendor-id=15b3\nphysical-network=rdma\n";
  static const guint dist[3][3] = { { 10, 20, 30 }, { 20, 10, 20 }, { 30, 20, 10 } };
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_data (conf, strlen (conf), "t.conf", &error);
  Gen g = { NULL, vpa_host_new ("distance"), 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GPtrArray) reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  g_autoptr (VpaPlacement) pl = NULL;
  gint node = 0;
  VpaGuestNodes guest = { TRUE, &node, 1 };
  VpaRequest *gpu, *net;
  VpaSpec *spec;
  const VpaGroupPlacement *gp;

  g_assert_no_error (error);
  for (guint n = 0; n < 3; n++)
    {
      VpaCell cell = { (gint) n, (gint) n, g_array_new (FALSE, FALSE, sizeof (guint)), 0 };
      cell.distances = g_array_new (FALSE, FALSE, sizeof (VpaDistance));
      for (guint m = 0; m < 3; m++)
        {
          VpaDistance d = { (gint) m, dist[n][m] };
          g_array_append_val (cell.distances, d);
        }
      vpa_host_add_cell (g.host, &cell);
    }
  /* node 1: the GPU below host bridge 10, the NIC below host bridge 20 */
  gen_device (&g, VPA_ADDR (0, 0x10, 1, 0), "8086:352a", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 1,
              VPA_PCIE_ROOT (0, 0x10), VPA_ADDR_NONE, 0x060400);
  gen_device (&g, VPA_ADDR (0, 0x11, 0, 0), "10de:2330", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 1,
              VPA_PCIE_ROOT (0, 0x10), VPA_ADDR (0, 0x10, 1, 0), 0x030200);
  gen_device (&g, VPA_ADDR (0, 0x20, 1, 0), "8086:352a", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 1,
              VPA_PCIE_ROOT (0, 0x20), VPA_ADDR_NONE, 0x060400);
  gen_device (&g, VPA_ADDR (0, 0x21, 0, 0), "15b3:1021", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 1,
              VPA_PCIE_ROOT (0, 0x20), VPA_ADDR (0, 0x20, 1, 0), 0x020000);
  gen_device (&g, VPA_ADDR (0, 0x21, 0, 1), "15b3:101e", VPA_DEV_TYPE_VF, VPA_ADDR (0, 0x21, 0, 0),
              1, VPA_PCIE_ROOT (0, 0x20), VPA_ADDR (0, 0x20, 1, 0), 0x020000);
  /* node 2: both below root port 30:01.0 */
  gen_device (&g, VPA_ADDR (0, 0x30, 1, 0), "8086:352a", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 2,
              VPA_PCIE_ROOT (0, 0x30), VPA_ADDR_NONE, 0x060400);
  gen_device (&g, VPA_ADDR (0, 0x31, 0, 0), "10de:2330", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 2,
              VPA_PCIE_ROOT (0, 0x30), VPA_ADDR (0, 0x30, 1, 0), 0x030200);
  gen_device (&g, VPA_ADDR (0, 0x32, 0, 0), "15b3:1021", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 2,
              VPA_PCIE_ROOT (0, 0x30), VPA_ADDR (0, 0x30, 1, 0), 0x020000);
  gen_device (&g, VPA_ADDR (0, 0x32, 0, 1), "15b3:101e", VPA_DEV_TYPE_VF, VPA_ADDR (0, 0x32, 0, 0),
              2, VPA_PCIE_ROOT (0, 0x30), VPA_ADDR (0, 0x30, 1, 0), 0x020000);
  g_assert_true (vpa_host_seal (g.host, &error));
  g_assert_no_error (error);
  inv = vpa_inventory_new (g.host, config, g_ptr_array_new (), &error);
  g_assert_no_error (error);

  gpu = vpa_request_new (VPA_REQUEST_DEVICE, "ua-gpu0", 1);
  spec = vpa_spec_new ();
  vpa_spec_set (spec, "vendor_id", "10de");
  g_ptr_array_add (gpu->specs, spec);
  net = vpa_request_new (VPA_REQUEST_PORT, "ua-net0", 1);
  spec = vpa_spec_new ();
  vpa_spec_set (spec, "physical_network", "rdma");
  vpa_spec_set (spec, "remote_managed", "false");
  g_ptr_array_add (net->specs, spec);
  for (guint i = 0; i < 2; i++)
    {
      VpaRequest *r = i == 0 ? gpu : net;
      r->policy = VPA_POLICY_PREFERRED;
      r->policy_source = VPA_POLICY_SOURCE_PORT;
      r->locality_group = g_strdup ("g0");
      r->locality_level = VPA_LOCALITY_SWITCH;
      g_ptr_array_add (reqs, r);
    }
  pl = vpa_place (inv, reqs, &guest, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 2; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (pl->assignments, i);
      g_assert_cmpuint (a->devices->len, ==, 1);
      g_assert_cmpint (vpa_host_device (inv->host, g_array_index (a->devices, guint, 0))->numa_node,
                       ==, 1);
    }
  g_assert_cmpuint (pl->groups->len, ==, 1);
  gp = g_ptr_array_index (pl->groups, 0);
  g_assert_cmpint (gp->reached, ==, VPA_LOCALITY_NUMA_NODE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/locality/sample/pairs", test_sample_pairs);
  g_test_add_func ("/locality/sample/held", test_sample_held);
  g_test_add_func ("/locality/sample/levels", test_sample_levels);
  g_test_add_func ("/locality/sample/idempotent", test_sample_idempotent);
  g_test_add_func ("/locality/sample/sticky", test_sample_sticky);
  g_test_add_func ("/locality/sample/guest-numa", test_sample_guest_numa);
  g_test_add_func ("/locality/brute-force", test_brute_force);
  g_test_add_func ("/locality/distance-first", test_distance_first);
  return g_test_run ();
}
