/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Domain XML parsing. Data-driven: every data/domain/parse/NAME.xml is
 * parsed, bound to a fixed four-node host, and dumped as text compared
 * with NAME.txt; every data/domain/bad/NAME.xml must fail with exactly
 * the line in NAME.err. VPA_TEST_REGENERATE=1 rewrites the expected
 * files (review the diff before committing).
 */
#include <string.h>
#include "vpa-domain.h"
#include "vpa-bind.h"
#include "vpa-xml.h"
#include "vpa-test-util.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* Nodes 0-3, each with eight CPUs (node n: 8n..8n+7); CPUs 32-39 exist
 * in no cell (offline). */
static VpaHost *
test_host (void)
{
  g_autoptr (VpaHost) host = vpa_host_new ("host.xml");
  g_autoptr (GError) error = NULL;

  for (gint n = 0; n < 4; n++)
    {
      VpaCell cell = { .id = n, .socket = n / 2 };
      cell.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint c = (guint) n * 8; c < (guint) n * 8 + 8; c++)
        g_array_append_val (cell.cpus, c);
      vpa_host_add_cell (host, &cell);
    }
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&host);
}

static void
dump_uset (GString *s, const GArray *set)
{
  if (set == NULL)
    {
      g_string_append (s, "-");
      return;
    }
  for (guint i = 0; i < set->len; i++)
    g_string_append_printf (s, "%s%u", i ? "," : "", g_array_index (set, guint, i));
}

static void
dump_bits (GString *s, const VpaBits *bits)
{
  g_autoptr (GArray) set = vpa_cpuset_bits_to_array (bits);

  dump_uset (s, set);
}

static void
dump_nodes (GString *s, const GArray *nodes)
{
  if (nodes->len == 0)
    g_string_append (s, "unbound");
  for (guint i = 0; i < nodes->len; i++)
    g_string_append_printf (s, "%s%d", i ? "," : "", g_array_index (nodes, gint, i));
}

static const char *
policy_str (gboolean has, VpaPolicy p)
{
  return has ? vpa_policy_to_string (p) : "-";
}

static void
dump_requests (GString *s, const VpaDomain *dom)
{
  g_string_append_printf (s, "affinity: %s\n", dom->has_affinity ? "yes" : "no");
  g_string_append_printf (s, "flavor-policy: %s\n",
                          policy_str (dom->has_flavor_policy, dom->flavor_policy));
  g_string_append_printf (s, "image-policy: %s\n",
                          policy_str (dom->has_image_policy, dom->image_policy));
  for (guint i = 0; i < dom->alias_requests->len; i++)
    {
      const VpaAliasRequest *a = g_ptr_array_index (dom->alias_requests, i);
      g_string_append_printf (s, "alias: %s count=%u\n", a->name, a->count);
    }
  for (guint i = 0; i < dom->ports->len; i++)
    {
      const VpaPortRequest *p = g_ptr_array_index (dom->ports, i);
      g_string_append_printf (s, "port: %s physnet=%s want-pf=%s trusted=%s pf-group=%s policy=%s\n",
                              p->device, p->physnet ? p->physnet : "-",
                              p->want_pf ? "yes" : "no",
                              p->trusted < 0 ? "-" : p->trusted ? "true"
                                                                : "false",
                              p->pf_group ? p->pf_group : "-",
                              policy_str (p->has_policy, p->policy));
      if (p->locality_group != NULL)
        g_string_append_printf (s, "  locality-group=%s\n", p->locality_group);
    }
  for (guint i = 0; i < dom->vswitch_ports->len; i++)
    {
      const VpaVswitchPort *v = g_ptr_array_index (dom->vswitch_ports, i);
      g_string_append_printf (s, "vswitch-port: %s interface=%s %s%s policy=%s\n", v->device,
                              v->iface_type, v->tunneled ? "tunneled" : "physnet=",
                              v->tunneled ? "" : v->physnet,
                              policy_str (v->has_policy, v->policy));
    }
  for (guint i = 0; i < dom->devices->len; i++)
    {
      const VpaDeviceRequest *d = g_ptr_array_index (dom->devices, i);
      g_string_append_printf (s, "device: %s alias=%s locality-group=%s\n", d->name, d->alias,
                              d->locality_group ? d->locality_group : "-");
    }
  for (guint i = 0; i < dom->locality_groups->len; i++)
    {
      const VpaLocalityGroup *g = g_ptr_array_index (dom->locality_groups, i);
      g_string_append_printf (s, "locality-group: %s level=%s policy=%s\n", g->name,
                              vpa_locality_to_string (g->level),
                              g->required ? "required" : "preferred");
    }
}

static void
dump_devices (GString *s, const VpaDomain *dom)
{
  char buf[VPA_ADDR_BUFLEN];

  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *h = g_ptr_array_index (dom->hostdevs, i);
      g_string_append_printf (s, "hostdev: %s %s %s\n", h->alias ? h->alias : "-",
                              h->is_interface ? "interface" : "hostdev",
                              h->addr == VPA_ADDR_NONE ? "-" : vpa_addr_format (h->addr, buf));
    }
  for (guint i = 0; i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *r = g_ptr_array_index (dom->placed, i);
      g_string_append_printf (s, "placed: %s %s node=%d policy=%s source=%s\n", r->device,
                              vpa_addr_format (r->addr, buf), r->numa_node,
                              vpa_policy_to_string (r->policy),
                              vpa_policy_source_to_string (r->source));
      if (r->locality_group != NULL)
        {
          g_string_append_printf (s, "  locality-group=%s locality=%s\n", r->locality_group,
                                  vpa_locality_to_string ((VpaLocality) r->locality));
        }
    }
}

static void
dump_numa (GString *s, const VpaDomain *dom)
{
  g_autoptr (VpaBind) unbound = NULL;
  g_autoptr (GError) error = NULL;

  g_string_append_printf (s, "numa-guest: %s\n", dom->numa_guest ? "yes" : "no");
  for (guint i = 0; i < dom->cells->len; i++)
    {
      const VpaDomainCell *c = g_ptr_array_index (dom->cells, i);
      g_string_append_printf (s, "cell %u: vcpus=", c->id);
      dump_bits (s, c->vcpus);
      g_string_append (s, " nodeset=");
      dump_bits (s, vpa_domain_model_cell_nodeset (dom, c));
      g_string_append (s, " cpuset=");
      dump_bits (s, c->cpuset);
      g_string_append_c (s, '\n');
    }
  /* as parsed: without a host only the nodesets bind */
  unbound = vpa_bind_nodes (dom, NULL, &error);
  g_assert_no_error (error);
  g_string_append (s, "guest-nodes: ");
  dump_nodes (s, unbound->guest_nodes);
  g_string_append_c (s, '\n');
}

/* ------------------------------------------------------------------ */
/* Fixture cases                                                       */
/* ------------------------------------------------------------------ */

static void
test_parse_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *golden = g_strdup_printf ("%.*s.txt", (int) (strlen (path) - 4), path);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = test_host ();
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaBind) bind = NULL;
  g_autoptr (GString) s = g_string_new (NULL);
  g_autofree char *buf = NULL;
  gsize len;

  buf = vpa_test_read_fixture (path, &len);
  dom = vpa_domain_parse (&(VpaDoc){ buf, len, base }, &error);
  g_assert_no_error (error);
  g_assert_nonnull (dom);
  g_assert_cmpstr (dom->source, ==, base);

  g_string_append_printf (s, "name: %s\nuuid: %s\n", dom->name ? dom->name : "-",
                          dom->uuid ? dom->uuid : "-");
  dump_requests (s, dom);
  dump_devices (s, dom);
  dump_numa (s, dom);
  bind = vpa_bind_nodes (dom, host, &error);
  g_assert_no_error (error);
  g_string_append (s, "bound-nodes: ");
  dump_nodes (s, bind->guest_nodes);
  g_string_append_c (s, '\n');
  vpa_test_assert_golden (golden, s->str);
}

static void
test_bad_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *errfile = g_strdup_printf ("%.*s.err", (int) (strlen (path) - 4), path);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaHost) host = test_host ();
  g_autofree char *buf = NULL;
  g_autofree char *line = NULL;
  gsize len;

  buf = vpa_test_read_fixture (path, &len);
  dom = vpa_domain_parse (&(VpaDoc){ buf, len, base }, &error);
  /* A few errors need the host (pins to CPUs it does not have). */
  if (dom != NULL)
    g_assert_null (vpa_bind_nodes (dom, host, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_null (strchr (error->message, '\n'));
  line = g_strdup_printf ("%s\n", error->message);
  vpa_test_assert_golden (errfile, line);
}

/* ------------------------------------------------------------------ */
/* Unit cases                                                          */
/* ------------------------------------------------------------------ */

static void
test_cpuset (void)
{
  struct {
    const char *in, *out;
  } ok[] = {
    { "0", "0" },
    { "0-3", "0,1,2,3" },
    { "0-3,^2,8", "0,1,3,8" },
    { " 8 , 1-2 ", "1,2,8" },
    { "3,3,1-3", "1,2,3" },
    { "^2,0-3", "0,1,2,3" }, /* left to right, as libvirt */
    { "0-4,^1,^3", "0,2,4" },
    { "65535", "65535" },
  };
  struct {
    const char *in, *msg;
  } bad[] = {
    { "", "invalid CPU or node set '': it is empty" },
    { " ", "invalid CPU or node set ' ': entry '' is not N, N-M or ^N with N and M at most 65535" },
    { "0-x", "invalid CPU or node set '0-x': entry '0-x' is not N, N-M or ^N with N and M at most 65535" },
    { "1,,2", "invalid CPU or node set '1,,2': entry '' is not N, N-M or ^N with N and M at most 65535" },
    { "3-1", "invalid CPU or node set '3-1': range '3-1' is reversed" },
    { "^1-2", "invalid CPU or node set '^1-2': entry '^1-2' is not N, N-M or ^N with N and M at most 65535" },
    { "-1", "invalid CPU or node set '-1': entry '-1' is not N, N-M or ^N with N and M at most 65535" },
    { "+1", "invalid CPU or node set '+1': entry '+1' is not N, N-M or ^N with N and M at most 65535" },
    { "65536", "invalid CPU or node set '65536': entry '65536' is not N, N-M or ^N with N and M at most 65535" },
    { "0-4294967296", "invalid CPU or node set '0-4294967296': entry '0-4294967296' is not N, N-M or ^N with N and M at most 65535" },
    { "1,^1", "invalid CPU or node set '1,^1': it selects nothing" },
    { "^0", "invalid CPU or node set '^0': it selects nothing" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) set = NULL;
      g_autoptr (GString) s = g_string_new (NULL);

      g_assert_true (vpa_cpuset_parse (ok[i].in, &set, &error));
      g_assert_no_error (error);
      dump_uset (s, set);
      g_assert_cmpstr (s->str, ==, ok[i].out);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      GArray *set = NULL;

      g_assert_false (vpa_cpuset_parse (bad[i].in, &set, &error));
      g_assert_null (set);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==, bad[i].msg);
    }
}

/* vpa_domain_parse_node on the inner <domain> and on its <domstatus>
 * wrapper give the same domain. */
static void
test_parse_node (void)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "domain", "parse", "domstatus.xml", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (VpaDomain) outer = NULL;
  g_autoptr (VpaDomain) inner = NULL;
  g_autofree char *buf = NULL;
  xmlNode *root;
  gsize len;

  buf = vpa_test_read_fixture (path, &len);
  doc = vpa_xml_parse_memory (&(VpaDoc){ buf, len, "status.xml" }, &error);
  g_assert_no_error (error);
  root = xmlDocGetRootElement (doc);
  g_assert_cmpstr ((const char *) root->name, ==, "domstatus");
  outer = vpa_domain_parse_node (root, "status.xml", &error);
  g_assert_no_error (error);
  inner = vpa_domain_parse_node (vpa_xml_child (root, "domain", NULL), "status.xml", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (outer->name, ==, inner->name);
  g_assert_true (outer->has_affinity);
  g_assert_cmpuint (outer->ports->len, ==, inner->ports->len);
  g_assert_cmpuint (outer->hostdevs->len, ==, inner->hostdevs->len);
  g_assert_cmpuint (outer->placed->len, ==, inner->placed->len);
  g_assert_cmpuint (outer->placed->len, >, 0);
}

/* Pinning changes which host nodes a cell binds to. */
static void
test_bind_follows_pins (void)
{
  struct {
    const char *cpuset, *nodes;
  } cases[] = {
    { "0-7", "0" },
    { "8", "1" },
    { "7-8", "0,1" },
    { "31,24", "3" },
    { "30-33", "3" },
  };
  g_autoptr (VpaHost) host = test_host ();

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *xml =
        g_strdup_printf ("<domain><name>p</name><vcpu cpuset='%s'>2</vcpu><cpu><numa>"
                         "<cell id='0' cpus='0-1' memory='1024'/></numa></cpu></domain>",
                         cases[i].cpuset);
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaDomain) dom = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "p.xml" }, &error);
      g_autoptr (GString) s = g_string_new (NULL);

      g_assert_no_error (error);
      g_assert_true (dom->numa_guest);
      g_autoptr (VpaBind) unbound = vpa_bind_nodes (dom, NULL, &error);
      g_autoptr (VpaBind) bind = NULL;

      g_assert_cmpuint (unbound->guest_nodes->len, ==, 0); /* no nodeset: needs the host */
      bind = vpa_bind_nodes (dom, host, &error);
      g_assert_no_error (error);
      dump_nodes (s, bind->guest_nodes);
      g_assert_cmpstr (s->str, ==, cases[i].nodes);
    }
}

/* A domain without our namespace never fails on libvirt's content. */
static void
test_foreign_tolerated (void)
{
  const char *xml =
    "<domain><name>f</name><vcpu cpuset='x'>2</vcpu>"
    "<cpu><numa><cell id='zero' cpus='0-' memory='1'/></numa></cpu>"
    "<numatune><memory nodeset='q'/><memnode cellid='0' nodeset='-'/></numatune>"
    "<cputune><vcpupin vcpu='a' cpuset='1'/><vcpupin vcpu='0' cpuset='z'/></cputune>"
    "<devices><hostdev mode='subsystem' type='pci'><source><address bus='0x1ff' slot='0' "
    "function='0'/></source><alias name='ua-x'/></hostdev></devices></domain>";
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "f.xml" }, &error);
  g_autoptr (VpaHost) host = test_host ();

  g_assert_no_error (error);
  g_assert_false (dom->has_affinity);
  g_assert_true (dom->numa_guest);
  g_assert_cmpuint (dom->hostdevs->len, ==, 1);
  g_assert_cmpuint (((VpaDomainHostdev *) g_ptr_array_index (dom->hostdevs, 0))->addr, ==,
                    VPA_ADDR_NONE);
  g_autoptr (VpaBind) bind = vpa_bind_nodes (dom, host, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (bind->guest_nodes->len, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/domain/cpuset", test_cpuset);
  g_test_add_func ("/domain/parse-node", test_parse_node);
  g_test_add_func ("/domain/bind-follows-pins", test_bind_follows_pins);
  g_test_add_func ("/domain/foreign-tolerated", test_foreign_tolerated);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/domain/parse", "*.xml", "/domain/parse",
                              test_parse_fixture);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/domain/bad", "*.xml", "/domain/bad",
                              test_bad_fixture);
  return g_test_run ();
}
