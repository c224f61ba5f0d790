/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The trait prefilter of `fleet filter` for vSwitch ports (docs/fleet.md,
 * "Filter"; docs/vswitch.md), on SQLite and PostgreSQL: a vSwitch port
 * with its own policy needs COMPUTE_NET_NUMA_AFFINITY on the host, as an
 * SR-IOV port with one does; a port without a policy does not.
 */
#include <string.h>

#include "fleet-fixture.h"
#include "vpa-constants.h"

#define DS_XML VPA_TEST_DATA "/hosts/dual-socket.xml"
#define DS_CONF VPA_TEST_DATA "/hosts/dual-socket.conf"

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
  return fleet_fixture_cli (VPA_FLEET_CLI, &out, err, "filter", "--store", fx->uri, "--config",
                            DS_CONF, path, NULL);
}

static void
test_trait_prefilter (FleetFixture *fx, gconstpointer data)
{
  g_autofree char *err = NULL;

  if (fleet_fixture_skip (fx))
    return;
  g_assert_cmpint (fleet_fixture_cli (VPA_FLEET_CLI, NULL, NULL, "sync", "--store", fx->uri,
                                      "--inventory", DS_XML, "--config", DS_CONF, "--host",
                                      "ds1", NULL),
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

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  fleet_fixture_add ("fleet-vswitch", "trait-prefilter", test_trait_prefilter);
  fleet_pg_start ();
  rc = g_test_run ();
  fleet_pg_stop ();
  return rc;
}
