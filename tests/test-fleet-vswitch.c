/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The NUMA-aware vSwitch rule in `fleet filter` (docs/fleet.md,
 * "Filter"; docs/vswitch.md), on SQLite and PostgreSQL: the trait
 * prefilter for ports with their own policy; each host judged by the
 * [physnet]/[tunnel] groups it synced (schema version 5), with the
 * single-host message; the filter's verdict equal to place's (the
 * whole-guest fit) and check's (a bound guest) on the same host; the
 * rows' life (resync, remove, a malformed row) and the migration of a
 * version 4 store.
 */
#include <string.h>

#include "fleet-fixture.h"
#include "vpa-config.h"
#include "vpa-constants.h"
#include "vpa-bind.h"
#include "vpa-domain.h"
#include "vpa-fleet-filter.h"
#include "vpa-fleet-preselect.h"
#include "vpa-fleet-schema.h"
#include "vpa-fleet-store.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-inventory.h"
#include "vpa-requests.h"
#include "vpa-source.h"

#define DS_XML VPA_TEST_DATA "/hosts/dual-socket.xml"
#define DS_CONF VPA_TEST_DATA "/hosts/dual-socket.conf"
#define SNC_XML VPA_TEST_DATA "/hosts/snc-4.xml"
#define SNC_CONF VPA_TEST_DATA "/hosts/snc-4.conf"

#define fleet_cli(out, err, ...) fleet_fixture_cli (VPA_FLEET_CLI, out, err, __VA_ARGS__)

/* A guest with one vhost-user port; %s: the port's policy attribute. */
#define GUEST                                                            \
  "<domain type='kvm'><name>g1</name><vcpu>1</vcpu>"                     \
  "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"                   \
  "<vpa:port device='ua-vhu0' vnic-type='normal' physnet='physnet1'%s/>" \
  "</vpa:affinity></metadata>"                                           \
  "<devices><interface type='vhostuser'>"                                \
  "<source type='unix' path='/run/openvswitch/vhu0' mode='server'/>"     \
  "<model type='virtio'/><alias name='ua-vhu0'/></interface></devices>"  \
  "</domain>"

/* fleet filter of a guest whose port carries policy (NULL: none). */
static gint
filter (FleetFixture *fx, const char *policy, char **err)
{
  g_autofree char *attr = policy != NULL ? g_strdup_printf (" policy='%s'", policy) : g_strdup ("");
  g_autofree char *text = g_strdup_printf (GUEST, attr);
  g_autofree char *path = g_build_filename (fx->tmpdir, "g1.xml", NULL);
  g_autofree char *out = NULL;

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return fleet_cli (&out, err, "filter", "--store", fx->uri, "--config", DS_CONF, path, NULL);
}

static void
test_trait_prefilter (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *err = NULL;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_cmpint (fleet_cli (NULL, NULL, "sync", "--store", fx->uri, "--inventory", DS_XML,
                              "--config", DS_CONF, "--host", "ds1", NULL),
                   ==, 0);
  /* a host that does not report the trait */
  fleet_fixture_exec (fx, "UPDATE hosts SET traits = '' WHERE name = 'ds1'");
  g_assert_cmpint (filter (fx, NULL, &err), ==, 0);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (filter (fx, "preferred", &err), ==, 1);
  g_assert_nonnull (strstr (err, "ds1: missing trait COMPUTE_NET_NUMA_AFFINITY"));
  g_clear_pointer (&err, g_free);
  /* the trait back: the port with its policy passes */
  fleet_fixture_exec (fx, "UPDATE hosts SET traits = 'COMPUTE_NET_NUMA_AFFINITY' WHERE name = 'ds1'");
  g_assert_cmpint (filter (fx, "required", &err), ==, 0);
}

/* ------------------------------------------------------------------ */
/* Guests and hosts                                                    */
/* ------------------------------------------------------------------ */

/* A guest of n_cells cells of 1 GiB each (0: no cells, a non-NUMA guest
 * unless auto), <vpa:numa placement='auto'> or bound by <numatune> to
 * bind (NULL: not bound), with ports "vhu:NET:POLICY" (a vhost-user
 * port) or "sriov:NET:POLICY" (an SR-IOV port on a VF), NET a physnet
 * or "tunnel", POLICY empty for none. */
static char *
guest_new (guint n_cells, gboolean numa_auto, const char *bind, const char *const *ports)
{
  g_autoptr (GString) meta = g_string_new (NULL);
  g_autoptr (GString) devices = g_string_new (NULL);
  g_autoptr (GString) cells = g_string_new (NULL);

  if (numa_auto)
    g_string_append (meta, "<vpa:numa placement='auto'/>");
  for (guint i = 0; ports != NULL && ports[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (ports[i], ":", 3);
      gboolean vhu = strcmp (f[0], "vhu") == 0;
      g_autofree char *net = strcmp (f[1], "tunnel") == 0
                               ? g_strdup ("tunneled='yes'")
                               : g_strdup_printf ("physnet='%s'", f[1]);
      g_autofree char *policy = f[2][0] != '\0' ? g_strdup_printf (" policy='%s'", f[2])
                                                : g_strdup ("");

      g_string_append_printf (meta, "<vpa:port device='ua-%s%u'%s %s%s/>", f[0], i,
                              vhu ? " vnic-type='normal'" : "", net, policy);
      if (vhu)
        {
          g_string_append_printf (devices,
                                  "<interface type='vhostuser'><source type='unix'"
                                  " path='/run/openvswitch/vhu%u' mode='server'/>"
                                  "<model type='virtio'/><alias name='ua-vhu%u'/></interface>",
                                  i, i);
        }
      else
        {
          g_string_append_printf (devices,
                                  "<interface type='hostdev' managed='yes'>"
                                  "<mac address='52:54:00:00:00:%02u'/><alias name='ua-sriov%u'/>"
                                  "</interface>",
                                  i + 1, i);
        }
    }
  for (guint i = 0; i < n_cells; i++)
    g_string_append_printf (cells, "<cell id='%u' cpus='%u' memory='1024' unit='MiB'/>", i, i);
  return g_strdup_printf (
    "<domain type='kvm'><name>g1</name>"
    "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>%s</vpa:affinity></metadata>"
    "<memory unit='MiB'>%u</memory><vcpu>%u</vcpu>"
    "<os><type arch='x86_64' machine='q35'>hvm</type></os>%s%s%s%s%s%s"
    "<devices>%s</devices></domain>",
    meta->str, 1024 * MAX (n_cells, 1), MAX (n_cells, 1),
    n_cells > 0 ? "<cpu><numa>" : "", cells->str, n_cells > 0 ? "</numa></cpu>" : "",
    bind != NULL ? "<numatune><memory mode='strict' nodeset='" : "", bind != NULL ? bind : "",
    bind != NULL ? "'/></numatune>" : "", devices->str);
}

/* base with groups ("[physnet physnet1]\nnuma-nodes=1\n") after it, as
 * a file in the test's directory. */
static char *
config_write (FleetFixture *fx, const char *name, const char *base, const char *groups)
{
  g_autofree char *text = NULL;
  char *path = g_strdup_printf ("%s/%s.conf", fx->tmpdir, name);

  g_assert_true (g_file_get_contents (base, &text, NULL, NULL));
  if (groups != NULL)
    {
      g_autofree char *all = g_strconcat (text, "\n", groups, NULL);
      g_assert_true (g_file_set_contents (path, all, -1, NULL));
    }
  else
    g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

/* fleet sync of the snapshot xml as host name, with base + groups. */
static void
sync_host (FleetFixture *fx, const char *name, const char *xml, const char *base,
           const char *groups)
{
  g_autofree char *conf = config_write (fx, name, base, groups);
  g_autofree char *err = NULL;

  if (fleet_cli (NULL, &err, "sync", "--store", fx->uri, "--inventory", xml, "--config", conf,
                 "--host", name, NULL) != 0)
    g_error ("sync %s: %s", name, err);
}

/* fleet filter of the guest text with --config DS_CONF (no [physnet]
 * group of its own: each host is judged by what it synced). */
static gint
filter_text (FleetFixture *fx, const char *text, char **out, char **err)
{
  g_autofree char *path = g_build_filename (fx->tmpdir, "guest.xml", NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return fleet_cli (out, err, "filter", "--store", fx->uri, "--config", DS_CONF, path, NULL);
}

/* The text output's line of host (its "HOST RESULT ..." row). */
static char *
line_of (const char *out, const char *host)
{
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  g_autofree char *prefix = g_strdup_printf ("%s ", host);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], prefix))
        return g_strdup (lines[i]);
    }
  g_error ("no line for %s in: %s", host, out);
}

/* ------------------------------------------------------------------ */
/* Refused and accepted                                                */
/* ------------------------------------------------------------------ */

#define PHYSNET1_ON_1 "[physnet physnet1]\nnuma-nodes=1\n[tunnel]\nnuma-nodes=0\n"
#define PHYSNET1_ON_0 "[physnet physnet1]\nnuma-nodes=0\n"

/* dual-socket reports COMPUTE_NET_NUMA_AFFINITY (it has VFs): the
 * trait passes, and the host's physnet nodes decide. */
static void
test_refused_accepted (FleetFixture *fx, gconstpointer data)
{
  static const char *const required[] = { "vhu:physnet1:required", NULL };
  static const char *const preferred[] = { "vhu:physnet1:preferred", NULL };
  static const char *const tunnel[] = { "vhu:tunnel:", NULL };
  static const char *const physnet2[] = { "vhu:physnet2:required", NULL };
  g_autofree char *g0 = guest_new (1, FALSE, "0", required);
  g_autofree char *g1 = guest_new (1, FALSE, "1", required);
  g_autofree char *unbound = guest_new (1, FALSE, NULL, required);
  g_autofree char *soft = guest_new (1, FALSE, "0", preferred);
  g_autofree char *tun = guest_new (1, FALSE, "1", tunnel);
  g_autofree char *other = guest_new (1, FALSE, "0", physnet2);
  g_autofree char *plain = guest_new (0, FALSE, NULL, required);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *line = NULL;

  if (fleet_fixture_skip (fx))
    return;
  sync_host (fx, "ds1", DS_XML, DS_CONF, PHYSNET1_ON_1);

  /* bound to node 0, physnet1 served from node 1: refused with the
   * single-host check's message */
  g_assert_cmpint (filter_text (fx, g0, &out, &err), ==, 1);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "no host passes: ds1: port ua-vhu0: physnet physnet1 is served"
                                 " from host node 1 (policy required), but the guest's cells"
                                 " are on host node 0\n"));
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&out, g_free);
  /* bound to node 1: accepted */
  g_assert_cmpint (filter_text (fx, g1, &out, NULL), ==, 0);
  line = line_of (out, "ds1");
  g_assert_nonnull (strstr (line, "pass"));
  g_clear_pointer (&line, g_free);
  g_clear_pointer (&out, g_free);
  /* unbound: node 0 fails the rule, node 1 takes it */
  g_assert_cmpint (filter_text (fx, unbound, &out, NULL), ==, 0);
  line = line_of (out, "ds1");
  g_assert_true (g_regex_match_simple ("^ds1 +pass +[0-9.]+ +1 +-$", line, 0, 0));
  g_clear_pointer (&line, g_free);
  g_clear_pointer (&out, g_free);
  /* preferred: never refused */
  g_assert_cmpint (filter_text (fx, soft, &out, NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  /* the tunnel, served from node 0 only */
  g_assert_cmpint (filter_text (fx, tun, NULL, &err), ==, 1);
  g_assert_nonnull (strstr (err, "ds1: port ua-vhu0: the tunnel is served from host node 0"
                                 " (policy legacy), but the guest's cells are on host node 1"));
  g_clear_pointer (&err, g_free);
  /* a physnet the host gives no affinity constrains nothing; nor does
   * any network a non-NUMA guest */
  g_assert_cmpint (filter_text (fx, other, NULL, NULL), ==, 0);
  g_assert_cmpint (filter_text (fx, plain, NULL, NULL), ==, 0);

  /* A second host serving physnet1 from node 0: each host is judged by
   * its own groups, in one filter. */
  sync_host (fx, "ds2", DS_XML, DS_CONF, PHYSNET1_ON_0);
  g_assert_cmpint (filter_text (fx, g0, &out, NULL), ==, 0);
  line = line_of (out, "ds2");
  g_assert_nonnull (strstr (line, " pass "));
  g_clear_pointer (&line, g_free);
  line = line_of (out, "ds1");
  g_assert_nonnull (strstr (line, " fail "));
  g_assert_nonnull (strstr (line, "physnet physnet1 is served from host node 1"));
  g_clear_pointer (&line, g_free);
  g_clear_pointer (&out, g_free);

  /* A group naming a node the host lacks fails the host with place's
   * configuration error, for a guest whose rules it reads. */
  sync_host (fx, "ds3", DS_XML, DS_CONF, "[physnet physnet1]\nnuma-nodes=7\n");
  g_assert_cmpint (filter_text (fx, g0, &out, NULL), ==, 0);
  line = line_of (out, "ds3");
  g_assert_nonnull (strstr (line, " fail "));
  g_assert_nonnull (strstr (line, "[physnet physnet1] numa-nodes: node 7 is not on host"));
}

/* ------------------------------------------------------------------ */
/* The rows' life                                                      */
/* ------------------------------------------------------------------ */

/* A resync rewrites the host's networks, remove drops them, and a row
 * that does not read back is an error naming the host and the value. */
static void
test_rows (FleetFixture *fx, gconstpointer data)
{
  static const char *const required[] = { "vhu:physnet1:required", NULL };
  g_autofree char *g0 = guest_new (1, FALSE, "0", required);
  g_autofree char *rows = NULL;
  g_autofree char *err = NULL;

  if (fleet_fixture_skip (fx))
    return;
  sync_host (fx, "ds1", DS_XML, DS_CONF, PHYSNET1_ON_1 "[physnet physnet2]\nnuma-nodes=\n");
  rows = fleet_fixture_sql (fx, "SELECT kind, name, numa_nodes FROM host_networks"
                                " ORDER BY kind, name");
  g_assert_cmpstr (rows, ==, "physnet|physnet1|1\nphysnet|physnet2|\ntunnel||0");
  g_clear_pointer (&rows, g_free);
  rows = fleet_fixture_sql (fx, "SELECT sync_version = " G_STRINGIFY (VPA_FLEET_SCHEMA_VERSION) " FROM hosts");
  g_assert_true (strcmp (rows, "1") == 0 || strcmp (rows, "t") == 0);
  g_clear_pointer (&rows, g_free);
  g_assert_cmpint (filter_text (fx, g0, NULL, NULL), ==, 1);

  /* A malformed node list */
  fleet_fixture_exec (fx, "UPDATE host_networks SET numa_nodes = '1 x' WHERE name = 'physnet1'");
  g_assert_cmpint (filter_text (fx, g0, NULL, &err), ==, 3);
  g_assert_nonnull (strstr (err, "host 'ds1': malformed network row (physnet 'physnet1',"
                                 " numa_nodes '1 x')"));
  g_clear_pointer (&err, g_free);
  fleet_fixture_exec (fx, "UPDATE host_networks SET numa_nodes = '1 0' WHERE name = 'physnet1'");
  g_assert_cmpint (filter_text (fx, g0, NULL, &err), ==, 3);
  g_assert_nonnull (strstr (err, "numa_nodes '1 0'"));
  g_clear_pointer (&err, g_free);

  /* Synced again without the groups: the rows go, the guest passes. */
  sync_host (fx, "ds1", DS_XML, DS_CONF, NULL);
  rows = fleet_fixture_sql (fx, "SELECT COUNT(*) FROM host_networks");
  g_assert_cmpstr (rows, ==, "0");
  g_clear_pointer (&rows, g_free);
  g_assert_cmpint (filter_text (fx, g0, NULL, NULL), ==, 0);

  /* and back; then removed with the host */
  sync_host (fx, "ds1", DS_XML, DS_CONF, PHYSNET1_ON_1);
  g_assert_cmpint (filter_text (fx, g0, NULL, NULL), ==, 1);
  g_assert_cmpint (fleet_cli (NULL, NULL, "remove", "--store", fx->uri, "--host", "ds1", NULL),
                   ==, 0);
  rows = fleet_fixture_sql (fx, "SELECT COUNT(*) FROM host_networks");
  g_assert_cmpstr (rows, ==, "0");
}

/* ------------------------------------------------------------------ */
/* The filter agrees with place and check                              */
/* ------------------------------------------------------------------ */

static VpaDomain *
domain_parse (const char *text)
{
  g_autoptr (GError) error = NULL;
  VpaDomain *dom = vpa_domain_parse (&(VpaDoc){ text, strlen (text), "guest.xml" }, &error);

  g_assert_no_error (error);
  return dom;
}

/* The filter's verdict on host, the hosts loaded as fleet filter loads
 * them; config is the filter's (no [physnet] group of its own). */
static VpaFleetVerdict *
verdict_of (VpaFleetStore *store, const VpaConfig *config, const VpaDomain *dom,
            GPtrArray *requests, const char *host)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) hosts = NULL;
  g_autoptr (GPtrArray) verdicts = NULL;
  g_autoptr (VpaBind) bind = vpa_bind_nodes (dom, NULL, &error);
  VpaFleetQuery query = { 0 };

  g_assert_no_error (error);
  query.requests = requests;
  query.numa_guest = dom->numa_guest;
  query.guest_nodes = (const gint *) (gpointer) bind->guest_nodes->data;
  query.n_guest_nodes = bind->guest_nodes->len;
  query.numa_auto = dom->numa_auto ? dom : NULL;
  query.config = config;
  query.domain = dom;
  hosts = vpa_fleet_preselect_load_candidates (store, &query,
                                               VPA_FLEET_LOAD_POOLS | VPA_FLEET_LOAD_CAPACITY |
                                                 VPA_FLEET_LOAD_NETWORKS,
                                               &error);
  g_assert_no_error (error);
  verdicts = vpa_fleet_filter (hosts, &query);
  for (guint i = 0; i < verdicts->len; i++)
    {
      if (strcmp (((VpaFleetVerdict *) g_ptr_array_index (verdicts, i))->host, host) == 0)
        return g_ptr_array_steal_index (verdicts, i);
    }
  g_assert_not_reached ();
}

static char *
nodes_text (const GArray *nodes)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < nodes->len; i++)
    g_string_append_printf (out, "%s%d", i > 0 ? "," : "", g_array_index (nodes, gint, i));
  return g_string_free (out, FALSE);
}

/* One guest on one host: a placement="auto" guest passes iff the
 * whole-guest fit place runs places it, on the same nodes, and fails
 * with its message; a bound guest passes iff check finds every hard
 * rule met, and fails with check's line. Returns whether it passed. */
static gboolean
agree_one (VpaFleetStore *store, const char *host, VpaInventory *inv,
           const VpaConfig *host_config, const VpaConfig *filter_config, const char *text)
{
  g_autoptr (VpaDomain) dom = domain_parse (text);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) requests = vpa_requests_from_domain (dom, host_config, &error);
  VpaFleetVerdict *v;
  gboolean passes;

  g_assert_no_error (error);
  v = verdict_of (store, filter_config, dom, requests, host);
  if (dom->numa_auto)
    {
      g_autoptr (VpaNumaResult) res =
        vpa_pipeline_numa_fit (dom, inv, host_config, inv->claims, requests, NULL, &error);
      if (v->passes != (res != NULL))
        {
          g_error ("%s on %s: the filter says %s (%s), place %s", text, host,
                   v->passes ? "pass" : "fail", v->passes ? v->nodes : v->reason,
                   res != NULL ? "places it" : error->message);
        }
      if (res != NULL)
        {
          g_autofree char *nodes = nodes_text (res->nodes);
          g_assert_cmpstr (v->nodes, ==, nodes);
        }
      else
        g_assert_cmpstr (v->reason, ==, error->message);
    }
  else
    {
      g_autoptr (GPtrArray) results =
        g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_pipeline_check_result_free);
      const char *line = NULL;
      gboolean ok = TRUE;

      g_autoptr (VpaBind) bind = vpa_bind_nodes (dom, inv->host, &error);

      g_assert_no_error (error);
      g_assert_true (
        vpa_pipeline_check_vswitch (inv->host, host_config, dom, bind, results, &ok, &error));
      g_assert_no_error (error);
      for (guint i = 0; i < results->len && line == NULL; i++)
        {
          const VpaCheckResult *r = g_ptr_array_index (results, i);
          if (r->status != VPA_CHECK_OK)
            line = r->line;
        }
      if (v->passes != ok)
        {
          g_error ("%s on %s: the filter says %s (%s), check %s", text, host,
                   v->passes ? "pass" : "fail", v->passes ? v->nodes : v->reason,
                   ok ? "ok" : line);
        }
      if (!ok)
        g_assert_cmpstr (v->reason, ==, line);
    }
  passes = v->passes;
  vpa_fleet_filter_verdict_free (v);
  return passes;
}

/* The guests every host is tried with: one or two cells, placed by the
 * fit or bound, ports of every policy on physnets and the tunnel. */
static GPtrArray *
agree_guests (const char *const *binds)
{
  static const char *const port_sets[][4] = {
    { "vhu:physnet1:", NULL },
    { "vhu:physnet1:required", NULL },
    { "vhu:physnet1:socket", NULL },
    { "vhu:physnet1:preferred", NULL },
    { "vhu:tunnel:required", NULL },
    { "vhu:physnet1:required", "vhu:tunnel:", NULL },
    { "vhu:physnet1:preferred", "vhu:tunnel:socket", NULL },
    { "sriov:physnet1:required", NULL },
    { "sriov:physnet1:", "vhu:tunnel:required", NULL },
  };
  GPtrArray *guests = g_ptr_array_new_with_free_func (g_free);

  for (guint p = 0; p < G_N_ELEMENTS (port_sets); p++)
    {
      for (guint cells = 1; cells <= 2; cells++)
        {
          g_ptr_array_add (guests, guest_new (cells, TRUE, NULL, port_sets[p]));
          /* check judges vSwitch ports only: bound guests without VFs */
          if (g_str_has_prefix (port_sets[p][0], "sriov"))
            continue;
          for (guint b = 0; binds[b] != NULL; b++)
            g_ptr_array_add (guests, guest_new (cells, FALSE, binds[b], port_sets[p]));
        }
    }
  return guests;
}

static void
test_fit_equals_place (FleetFixture *fx, gconstpointer data)
{
  static const struct {
    const char *xml, *conf;
    const char *groups;
    const char *binds[4];
  } hosts[] = {
    { DS_XML, DS_CONF, "[physnet physnet1]\nnuma-nodes=0\n", { "0", "1", "0-1", NULL } },
    { DS_XML, DS_CONF, PHYSNET1_ON_1, { "0", "1", "0-1", NULL } },
    { DS_XML, DS_CONF, "[physnet physnet1]\nnuma-nodes=0-1\n[tunnel]\nnuma-nodes=1\n", { "0", "1", NULL } },
    { DS_XML, DS_CONF, NULL, { "0", NULL } },
    { SNC_XML, SNC_CONF, "[physnet physnet1]\nnuma-nodes=5\n[tunnel]\nnuma-nodes=2\n", { "0", "5", "4-5", NULL } },
    { SNC_XML, SNC_CONF, "[physnet physnet1]\nnuma-nodes=0,6\n[tunnel]\nnuma-nodes=7\n", { "1", "6", "2-3", NULL } },
  };
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GError) error = NULL;
  guint passed = 0, failed = 0;

  if (fleet_fixture_skip (fx))
    return;
  for (guint h = 0; h < G_N_ELEMENTS (hosts); h++)
    {
      g_autofree char *name = g_strdup_printf ("h%u", h);
      sync_host (fx, name, hosts[h].xml, hosts[h].conf, hosts[h].groups);
    }
  store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_assert_no_error (error);
  for (guint h = 0; h < G_N_ELEMENTS (hosts); h++)
    {
      g_autofree char *name = g_strdup_printf ("h%u", h);
      g_autofree char *conf = g_strdup_printf ("%s/%s.conf", fx->tmpdir, name);
      g_autoptr (VpaConfig) host_config = vpa_config_load_file (conf, &error);
      g_autoptr (VpaConfig) filter_config = vpa_config_load_file (hosts[h].conf, &error);
      g_autoptr (VpaHost) snap = vpa_source_load (hosts[h].xml, &error);
      g_autoptr (VpaInventory) inv = NULL;
      g_autoptr (GPtrArray) guests = agree_guests (hosts[h].binds);
      GPtrArray *claims;

      g_assert_no_error (error);
      /* the claims of its <domain>s, as sync and place read them */
      claims = vpa_claim_filter (snap->claims, NULL, FALSE);
      inv = vpa_inventory_new (g_steal_pointer (&snap), host_config, claims, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < guests->len; i++)
        {
          if (agree_one (store, name, inv, host_config, filter_config,
                         g_ptr_array_index (guests, i)))
            {
              passed++;
            }
          else
            {
              failed++;
            }
        }
    }
  g_test_message ("the filter, place and check agree: %u pass, %u fail", passed, failed);
  g_assert_cmpuint (passed, >, 0);
  g_assert_cmpuint (failed, >, 0);
}

/* ------------------------------------------------------------------ */
/* Migration from version 4                                            */
/* ------------------------------------------------------------------ */

/* The schema of version 4 as that program left it (version 2's tables,
 * version 3's step, devices with version 4's states; %1$s the id
 * column, %2$s text, %3$s table options), with a host synced then: two
 * cells on two sockets and a reserved VF. */
static const char schema_v4[] =
  "CREATE TABLE schema_version ("
  " application %2$s NOT NULL, version INTEGER NOT NULL, applied_at %2$s NOT NULL);"
  "CREATE TABLE hosts ("
  " id %1$s, name %2$s NOT NULL UNIQUE, traits %2$s NOT NULL DEFAULT '',"
  " last_sync %2$s);"
  "CREATE TABLE host_cells ("
  " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
  " node INTEGER NOT NULL, socket INTEGER,"
  " PRIMARY KEY (host_id, node))%3$s;"
  "CREATE TABLE devices ("
  " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
  " address %2$s NOT NULL,"
  " vendor_id %2$s NOT NULL, product_id %2$s NOT NULL,"
  " dev_type %2$s NOT NULL CHECK (dev_type IN ('type-PCI', 'type-PF', 'type-VF')),"
  " numa_node INTEGER, parent_addr %2$s,"
  " tags %2$s NOT NULL, tagset BIGINT NOT NULL,"
  " netdev %2$s, held_by %2$s,"
  " state %2$s NOT NULL CHECK (state IN ('free', 'held', 'blocked', 'reserved')),"
  " pcie_root %2$s, pcie_port %2$s, pcie_switch %2$s,"
  " PRIMARY KEY (host_id, address))%3$s;"
  "CREATE INDEX devices_pools ON devices"
  " (host_id, vendor_id, product_id, dev_type, numa_node, tagset, state);"
  "ALTER TABLE host_cells ADD COLUMN memory_kib BIGINT;"
  "ALTER TABLE host_cells ADD COLUMN cpus %2$s;"
  "ALTER TABLE host_cells ADD COLUMN pages %2$s;"
  "ALTER TABLE host_cells ADD COLUMN distances %2$s;"
  "CREATE TABLE host_numa_claims ("
  " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
  " domain %2$s NOT NULL, running INTEGER NOT NULL,"
  " dedicated %2$s NOT NULL, memory %2$s NOT NULL,"
  " PRIMARY KEY (host_id, domain))%3$s;"
  "INSERT INTO schema_version VALUES ('virt-pci-affinity-fleet', 3, '2026-01-01T00:00:00Z');"
  "INSERT INTO schema_version VALUES ('virt-pci-affinity-fleet', 4, '2026-02-01T00:00:00Z');"
  /* ids as the store hands them out (PostgreSQL's identity counts on) */
  "INSERT INTO hosts (name, traits, last_sync)"
  " VALUES ('old', 'COMPUTE_NET_NUMA_AFFINITY', '2026-01-01T00:00:00Z');"
  "INSERT INTO host_cells SELECT id, 0, 0, 1048576, '0/1/0/0/0', '4/262144/262144', '0/10 1/21'"
  " FROM hosts WHERE name = 'old';"
  "INSERT INTO host_cells SELECT id, 1, 1, 1048576, '1/1/1/0/1', '4/262144/262144', '0/21 1/10'"
  " FROM hosts WHERE name = 'old';"
  "INSERT INTO devices SELECT id, '0000:3b:02.0', '8086', '1889', 'type-VF', 0, NULL, '{}', 0,"
  " NULL, NULL, 'reserved', NULL, NULL, NULL FROM hosts WHERE name = 'old';";

/* A version 4 store: readers refuse it, the next sync migrates it in
 * place. Its host keeps working for every guest its networks do not
 * matter to, and a NUMA guest with a port naming a network fails on it
 * until it syncs again. */
static void
test_migration (FleetFixture *fx, gconstpointer data)
{
  static const char *const required[] = { "vhu:physnet1:required", NULL };
  g_autofree char *g0 = guest_new (1, FALSE, "0", required);
  g_autofree char *g1 = guest_new (1, FALSE, "1", required);
  g_autofree char *plain = guest_new (0, FALSE, NULL, required);
  g_autofree char *bare = guest_new (1, FALSE, "0", NULL);
  g_autofree char *sql = NULL;
  g_autofree char *rows = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *line = NULL;

  if (fleet_fixture_skip (fx))
    return;
  if (fx->backend == FLEET_BACKEND_SQLITE)
    {
      sql = g_strdup_printf (schema_v4, "INTEGER PRIMARY KEY", "TEXT", " WITHOUT ROWID");
    }
  else
    {
      sql = g_strdup_printf (schema_v4, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                             "TEXT COLLATE \"C\"", "");
    }
  fleet_fixture_exec (fx, sql);

  g_assert_cmpint (filter_text (fx, g1, NULL, &err), ==, 3);
  g_assert_nonnull (strstr (err, "schema version '4' is older than this program's " G_STRINGIFY (VPA_FLEET_SCHEMA_VERSION) ": 'fleet sync'"
                                                                                                                           " upgrades it"));
  g_clear_pointer (&err, g_free);

  /* The next sync (of another host) migrates it. */
  sync_host (fx, "ds1", DS_XML, DS_CONF, PHYSNET1_ON_1);
  rows = fleet_fixture_sql (fx, "SELECT version FROM schema_version ORDER BY version");
  g_assert_cmpstr (rows, ==, "3\n4\n" G_STRINGIFY (VPA_FLEET_SCHEMA_VERSION));
  g_clear_pointer (&rows, g_free);
  rows = fleet_fixture_sql (fx, "SELECT name, COALESCE(sync_version, -1) FROM hosts ORDER BY name");
  g_assert_cmpstr (rows, ==, "ds1|" G_STRINGIFY (VPA_FLEET_SCHEMA_VERSION) "\nold|-1");
  g_clear_pointer (&rows, g_free);
  /* the rows of version 4 as they were */
  rows = fleet_fixture_sql (fx, "SELECT d.address, d.state FROM devices AS d JOIN hosts AS h"
                                " ON h.id = d.host_id WHERE h.name = 'old'");
  g_assert_cmpstr (rows, ==, "0000:3b:02.0|reserved");
  g_clear_pointer (&rows, g_free);

  /* Its rows still serve: a non-NUMA guest, a NUMA guest without a
   * port naming a network. */
  g_assert_cmpint (filter_text (fx, plain, &out, NULL), ==, 0);
  line = line_of (out, "old");
  g_assert_nonnull (strstr (line, " pass "));
  g_clear_pointer (&line, g_free);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (filter_text (fx, bare, &out, NULL), ==, 0);
  line = line_of (out, "old");
  g_assert_nonnull (strstr (line, " pass "));
  g_clear_pointer (&line, g_free);
  g_clear_pointer (&out, g_free);
  /* Its networks are not known: */
  g_assert_cmpint (filter_text (fx, g1, &out, NULL), ==, 0);
  line = line_of (out, "ds1");
  g_assert_nonnull (strstr (line, " pass "));
  g_clear_pointer (&line, g_free);
  line = line_of (out, "old");
  g_assert_nonnull (strstr (line, " fail "));
  g_assert_nonnull (strstr (line, "the store has no network affinity for the host (sync it again)"));
  g_clear_pointer (&line, g_free);
  g_clear_pointer (&out, g_free);

  /* Synced again (as dual-socket with the same groups): judged. */
  sync_host (fx, "old", DS_XML, DS_CONF, PHYSNET1_ON_1);
  g_assert_cmpint (filter_text (fx, g1, NULL, NULL), ==, 0);
  g_assert_cmpint (filter_text (fx, g0, NULL, &err), ==, 1);
  g_assert_nonnull (strstr (err, "no host passes: old: port ua-vhu0: physnet physnet1"));
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  fleet_fixture_add ("fleet-vswitch", "trait-prefilter", test_trait_prefilter);
  fleet_fixture_add ("fleet-vswitch", "refused-accepted", test_refused_accepted);
  fleet_fixture_add ("fleet-vswitch", "rows", test_rows);
  fleet_fixture_add ("fleet-vswitch", "fit-equals-place", test_fit_equals_place);
  fleet_fixture_add ("fleet-vswitch", "migration", test_migration);
  fleet_pg_start ();
  rc = g_test_run ();
  fleet_pg_stop ();
  return rc;
}
