/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NUMA-aware vSwitch ports (docs/vswitch.md): the [physnet NAME] and
 * [tunnel] groups of the configuration and their nodes against a host.
 */
#include <string.h>

#include "vpa-capacity.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-pipeline.h"
#include "vpa-source.h"
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

  g_assert_cmpint (vpa_vswitch_affinity_missing_node (vpa_config_vswitch (config, "physnet1"), two),
                   ==, -1);
  g_assert_cmpint (vpa_vswitch_affinity_missing_node (vpa_config_vswitch (config, NULL), two), ==,
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
  claims = vpa_claims_filter (host->claims, NULL, FALSE);
  out = vpa_pipeline_place (g_steal_pointer (&host), claims, config, buf, len, "vswitch.xml",
                            NULL, &error);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/vswitch/config-groups", test_config_groups);
  g_test_add_func ("/vswitch/config-absent-node", test_config_absent_node);
  g_test_add_func ("/vswitch/ports-untouched", test_ports_untouched);
  return g_test_run ();
}
