/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The filter's pre-selection (docs/fleet.md, "Pre-selection"), on SQLite
 * and PostgreSQL: a host with too few free devices of a request's spec,
 * or lacking a trait the domain needs, has no row read back; a device no
 * request can match is not read back; and every verdict is the one all
 * the rows give.
 */
#include <string.h>

#include "fleet-fixture.h"
#include "vpa-constants.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-fleet-preselect.h"
#include "vpa-requests.h"

#define DS_XML VPA_TEST_DATA "/hosts/dual-socket.xml"
#define DS_CONF VPA_TEST_DATA "/hosts/dual-socket.conf"
#define NN_XML VPA_TEST_DATA "/hosts/no-numa.xml"
#define NN_CONF VPA_TEST_DATA "/hosts/no-numa.conf"

/* A non-NUMA guest asking for AFFINITY (its port ua-net0 may be one of
 * the requests). */
#define GUEST(AFFINITY)                                                     \
  "<domain type='kvm'><name>g1</name><vcpu>2</vcpu>"                        \
  "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>" AFFINITY             \
  "</vpa:affinity></metadata><devices>"                                     \
  "<interface type='hostdev'><alias name='ua-net0'/></interface></devices>" \
  "</domain>"

typedef struct {
  VpaConfig *config;
  VpaDomain *dom;
  GPtrArray *requests;
  VpaFleetQuery query;
} Query;

static void
query_clear (Query *q)
{
  g_clear_pointer (&q->requests, g_ptr_array_unref);
  g_clear_pointer (&q->dom, vpa_domain_free);
  g_clear_pointer (&q->config, vpa_config_free);
}

static void
query_init (Query *q, const char *xml)
{
  g_autoptr (GError) error = NULL;

  q->config = vpa_config_load_file (DS_CONF, &error);
  g_assert_no_error (error);
  q->dom = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "guest.xml" }, &error);
  g_assert_no_error (error);
  q->requests = vpa_requests_from_domain (q->dom, q->config, &error);
  g_assert_no_error (error);
  q->query.requests = q->requests;
  q->query.config = q->config;
  for (guint i = 0; q->dom->ports != NULL && i < q->dom->ports->len; i++)
    {
      if (((const VpaPortRequest *) g_ptr_array_index (q->dom->ports, i))->has_policy)
        q->query.need_net_numa_trait = TRUE;
    }
}

static void
sync_host (FleetFixture *fx, const char *name, const char *xml, const char *conf)
{
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (fleet_fixture_cli (VPA_FLEET_CLI, &out, &err, "sync", "--store", fx->uri,
                                      "--inventory", xml, "--config", conf, "--host", name,
                                      NULL),
                   ==, 0);
}

static const VpaFleetHost *
host_of (GPtrArray *hosts, const char *name)
{
  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHost *h = g_ptr_array_index (hosts, i);
      if (strcmp (h->name, name) == 0)
        return h;
    }
  g_assert_not_reached ();
  return NULL;
}

static guint
n_pools (const VpaFleetHost *host)
{
  return host->pools != NULL ? host->pools->len : 0;
}

/* Loads the hosts both ways; checks that the verdicts agree, and
 * returns the pre-selected hosts. */
static GPtrArray *
load_both (FleetFixture *fx, const VpaFleetQuery *query, GPtrArray **all_out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaFleetStore) store = vpa_fleet_store_open (fx->uri, VPA_FLEET_OPEN_READ, &error);
  g_autoptr (GPtrArray) all = NULL;
  g_autoptr (GPtrArray) some = NULL;
  g_autoptr (GPtrArray) va = NULL;
  g_autoptr (GPtrArray) vs = NULL;

  g_assert_no_error (error);
  all = vpa_fleet_store_load_hosts (store, VPA_FLEET_LOAD_POOLS, &error);
  g_assert_no_error (error);
  some = vpa_fleet_preselect_load_candidates (store, query, VPA_FLEET_LOAD_POOLS, &error);
  g_assert_no_error (error);
  va = vpa_fleet_filter (all, query);
  vs = vpa_fleet_filter (some, query);
  g_assert_cmpuint (va->len, ==, vs->len);
  for (guint i = 0; i < va->len; i++)
    {
      const VpaFleetVerdict *a = g_ptr_array_index (va, i);
      const VpaFleetVerdict *s = g_ptr_array_index (vs, i);
      g_assert_cmpstr (a->host, ==, s->host);
      g_assert_cmpint (a->passes, ==, s->passes);
      g_assert_cmpfloat (a->weight, ==, s->weight);
      g_assert_cmpstr (a->reason, ==, s->reason);
    }
  *all_out = g_steal_pointer (&all);
  return g_steal_pointer (&some);
}

/* QuickAssist: dual-socket has one, no-numa none. */
static void
test_too_few (FleetFixture *fx, gconstpointer data)
{
  Query q = { 0 };
  g_autoptr (GPtrArray) all = NULL;
  g_autoptr (GPtrArray) some = NULL;
  const VpaFleetHost *ds, *nn;

  if (fleet_fixture_skip (fx))
    return;
  sync_host (fx, "ds", DS_XML, DS_CONF);
  sync_host (fx, "nn", NN_XML, NN_CONF);

  query_init (&q, GUEST ("<vpa:flavor aliases='QuickAssist:1'/>"));
  some = load_both (fx, &q.query, &all);
  ds = host_of (some, "ds");
  nn = host_of (some, "nn");
  /* no-numa: no device a request matches, so no row came back. */
  g_assert_cmpuint (n_pools (nn), ==, 0);
  g_assert_cmpuint (n_pools (host_of (all, "nn")), >, 0);
  /* dual-socket: only the QuickAssist pool, of its ten. */
  g_assert_cmpuint (ds->ruled_out, ==, 0);
  g_assert_cmpuint (n_pools (ds), ==, 1);
  g_assert_cmpuint (n_pools (host_of (all, "ds")), >, 1);
  g_clear_pointer (&some, g_ptr_array_unref);
  g_clear_pointer (&all, g_ptr_array_unref);
  query_clear (&q);

  /* Two: dual-socket has one free, and says so as the filter does. */
  query_init (&q, GUEST ("<vpa:flavor aliases='QuickAssist:2'/>"));
  some = load_both (fx, &q.query, &all);
  ds = host_of (some, "ds");
  g_assert_cmpuint (ds->ruled_out, ==, 1);
  g_assert_cmpuint (ds->ruled_out_free, ==, 1);
  g_assert_cmpuint (n_pools (ds), ==, 0);
  query_clear (&q);
}

/* A port with its own policy needs COMPUTE_NET_NUMA_AFFINITY: a host
 * without it has no row read back, though its devices would do. */
static void
test_trait (FleetFixture *fx, gconstpointer data)
{
  Query q = { 0 };
  g_autoptr (GPtrArray) all = NULL;
  g_autoptr (GPtrArray) some = NULL;

  if (fleet_fixture_skip (fx))
    return;
  sync_host (fx, "ds", DS_XML, DS_CONF);
  sync_host (fx, "bare", DS_XML, DS_CONF);
  fleet_fixture_exec (fx, "UPDATE hosts SET traits = '' WHERE name = 'bare'");

  query_init (&q, GUEST ("<vpa:port device='ua-net0' physnet='physnet2' policy='preferred'/>"));
  g_assert_true (q.query.need_net_numa_trait);
  some = load_both (fx, &q.query, &all);
  g_assert_cmpuint (n_pools (host_of (some, "bare")), ==, 0);
  g_assert_cmpuint (n_pools (host_of (all, "bare")), >, 0);
  g_assert_cmpuint (host_of (some, "ds")->ruled_out, ==, 0);
  g_assert_cmpuint (n_pools (host_of (some, "ds")), >, 0);
  query_clear (&q);
}

/* The conditions written for spec pairs: exact where SQL can say it,
 * none (the filter decides) where it cannot. */
static void
test_match_sql (void)
{
  Query q = { 0 };
  g_autofree char *sql = NULL;

  query_init (&q, GUEST ("<vpa:port device='ua-net0' physnet='physnet2'/>"));
  sql = vpa_fleet_preselect_match_sql (g_ptr_array_index (q.requests, 0));
  g_assert_nonnull (strstr (sql, "lower(tags) LIKE '%\"physical!_network\":\"physnet2\"%' ESCAPE '!'"));
  g_assert_null (strstr (sql, "remote_managed"));
  query_clear (&q);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fleet-preselect/match-sql", test_match_sql);
  fleet_fixture_add ("fleet-preselect", "too-few", test_too_few);
  fleet_fixture_add ("fleet-preselect", "trait", test_trait);
  fleet_pg_start ();
  rc = g_test_run ();
  fleet_pg_stop ();
  return rc;
}
