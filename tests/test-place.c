/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "vpa-pipeline.h"
#include "vpa-place.h"
#include "vpa-requests.h"
#include "vpa-snapshot.h"
#include "vpa-test-util.h"

/* ------------------------------------------------------------------ */
/* Fixtures built in code: hosts, configs, requests                    */
/* ------------------------------------------------------------------ */

/* Host nodes 0,1 on socket 0, nodes 2,3 on socket 1. */
static VpaHost *
host_new (void)
{
  VpaHost *host = vpa_host_new ("test");

  for (gint i = 0; i < 4; i++)
    {
      VpaCell cell = { i, i / 2, NULL, 0 };
      vpa_host_add_cell (host, &cell);
    }
  return host;
}

/* A PF at bus:00.0 (product 1528) with n VFs at bus:10.x (product 1515). */
static void
add_nic (VpaHost *host, guint bus, gint node, guint n_vfs)
{
  VpaAddr pf = VPA_ADDR (0, bus, 0, 0);

  vpa_test_add_device (host, pf, "8086:1528", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, node, NULL);
  for (guint i = 0; i < n_vfs; i++)
    {
      vpa_test_add_device (host, VPA_ADDR (0, bus, 0x10 + i / 8, i % 8), "8086:1515",
                           VPA_DEV_TYPE_VF, pf, node, NULL);
    }
}

typedef struct {
  VpaConfig *config;
  VpaInventory *inv;
  GPtrArray *reqs;
} Fixture;

static void
fixture_clear (Fixture *fx)
{
  g_clear_pointer (&fx->reqs, g_ptr_array_unref);
  g_clear_pointer (&fx->inv, vpa_inventory_free);
  g_clear_pointer (&fx->config, vpa_config_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Fixture, fixture_clear)

#define CONFIG_PHYSNET "[device-spec nics]\nvendor-id=8086\nphysical-network=physnet1\n"

static void
fixture_init (Fixture *fx, VpaHost *host, const char *config, GPtrArray *claims)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);
  fx->config = vpa_config_load_data (config, strlen (config), "test.conf", &error);
  g_assert_no_error (error);
  fx->inv = vpa_inventory_new (host, fx->config, claims, &error);
  g_assert_no_error (error);
  fx->reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
}

static VpaRequest *
add_port (Fixture *fx, const char *name, VpaPolicy policy, const char *group, gboolean pf)
{
  VpaRequest *req = vpa_request_new (VPA_REQUEST_PORT, name, 1);
  VpaSpec *spec = vpa_spec_new ();

  vpa_spec_set (spec, "physical_network", "physnet1");
  vpa_spec_set (spec, "remote_managed", "false");
  if (pf)
    vpa_spec_set (spec, "dev_type", "type-PF");
  g_ptr_array_add (req->specs, spec);
  req->policy = policy;
  req->policy_source = VPA_POLICY_SOURCE_PORT;
  req->pf_group = g_strdup (group);
  g_ptr_array_add (fx->reqs, req);
  return req;
}

static VpaRequest *
add_alias (Fixture *fx, const char *name, const char *product, const char *type,
           guint count, VpaPolicy policy)
{
  VpaRequest *req = vpa_request_new (VPA_REQUEST_ALIAS, name, count);
  VpaSpec *spec = vpa_spec_new ();

  vpa_spec_set (spec, "vendor_id", "8086");
  vpa_spec_set (spec, "product_id", product);
  if (type != NULL)
    vpa_spec_set (spec, "dev_type", type);
  g_ptr_array_add (req->specs, spec);
  req->policy = policy;
  req->policy_source = VPA_POLICY_SOURCE_ALIAS;
  g_ptr_array_add (fx->reqs, req);
  return req;
}

static const VpaDevice *
chosen (const Fixture *fx, const VpaPlacement *pl, guint r, guint k)
{
  const VpaAssignment *a = g_ptr_array_index (pl->assignments, r);

  g_assert_cmpuint (k, <, a->devices->len);
  return vpa_host_device (fx->inv->host, g_array_index (a->devices, guint, k));
}

static guint
n_chosen (const VpaPlacement *pl, guint r)
{
  return ((const VpaAssignment *) g_ptr_array_index (pl->assignments, r))->devices->len;
}

/* The placement must never hand out a device twice, nor a PF together
 * with one of its VFs. */
static void
assert_consistent (const Fixture *fx, const VpaPlacement *pl)
{
  g_autoptr (GHashTable) used = g_hash_table_new (NULL, NULL);

  for (guint r = 0; r < pl->assignments->len; r++)
    {
      for (guint k = 0; k < n_chosen (pl, r); k++)
        {
          const VpaAssignment *a = g_ptr_array_index (pl->assignments, r);
          guint i = g_array_index (a->devices, guint, k);
          g_assert_false (g_hash_table_contains (used, GUINT_TO_POINTER (i + 1)));
          g_hash_table_add (used, GUINT_TO_POINTER (i + 1));
        }
    }
  for (guint r = 0; r < pl->assignments->len; r++)
    {
      for (guint k = 0; k < n_chosen (pl, r); k++)
        {
          const VpaDevice *d = chosen (fx, pl, r, k);
          if (d->parent_index >= 0)
            {
              g_assert_false (g_hash_table_contains (used,
                                                     GUINT_TO_POINTER (d->parent_index + 1)));
            }
        }
    }
}

static VpaPlacement *
place_ok (Fixture *fx, const gint *nodes, guint n_nodes)
{
  g_autoptr (GError) error = NULL;
  VpaGuestNodes guest = { TRUE, nodes, n_nodes };
  VpaPlacement *pl = vpa_place (fx->inv, fx->reqs, &guest, &error);

  g_assert_no_error (error);
  g_assert_nonnull (pl);
  assert_consistent (fx, pl);
  return pl;
}

static char *
place_fail (Fixture *fx, const gint *nodes, guint n_nodes)
{
  g_autoptr (GError) error = NULL;
  VpaGuestNodes guest = { TRUE, nodes, n_nodes };
  g_autoptr (VpaPlacement) pl = vpa_place (fx->inv, fx->reqs, &guest, &error);

  g_assert_null (pl);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  return g_strdup (error->message);
}

/* ------------------------------------------------------------------ */

static void
test_affine_first (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 1 };

  add_nic (host, 0x81, 0, 4);
  add_nic (host, 0x82, VPA_NUMA_NONE, 4);
  add_nic (host, 0x83, 1, 4);
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  /* Nova's legacy takes whole pools in pool order once the affine set is
   * short; we take the affine VFs first, then unknown ones. */
  add_alias (&fx, "vf", "1515", "type-VF", 6, VPA_POLICY_LEGACY);
  pl = place_ok (&fx, nodes, 1);
  g_assert_cmpuint (n_chosen (pl, 0), ==, 6);
  /* Devices come in address order: the two unknown ones (bus 82), then
   * all four affine ones (bus 83). */
  for (guint k = 0; k < 2; k++)
    g_assert_cmpint (chosen (&fx, pl, 0, k)->numa_node, ==, VPA_NUMA_NONE);
  for (guint k = 2; k < 6; k++)
    g_assert_cmpint (chosen (&fx, pl, 0, k)->numa_node, ==, 1);
  /* Lowest addresses first among the unknown ones. */
  g_assert_cmpuint (chosen (&fx, pl, 0, 0)->addr, ==, VPA_ADDR (0, 0x82, 0x10, 0));
  g_assert_cmpuint (chosen (&fx, pl, 0, 1)->addr, ==, VPA_ADDR (0, 0x82, 0x10, 1));
}

static void
test_tier_ranking (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 0 };

  add_nic (host, 0x81, 2, 1);             /* remote */
  add_nic (host, 0x82, VPA_NUMA_NONE, 1); /* unknown */
  add_nic (host, 0x83, 1, 1);             /* same socket */
  add_nic (host, 0x84, 0, 1);             /* affine */
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  add_alias (&fx, "vf", "1515", "type-VF", 4, VPA_POLICY_PREFERRED);
  pl = place_ok (&fx, nodes, 1);
  g_assert_cmpuint (n_chosen (pl, 0), ==, 4);
  /* All four, whatever the order; the tiers show up in the candidates. */
  {
    const VpaAssignment *a = g_ptr_array_index (pl->assignments, 0);
    guint seen = 0;
    for (guint i = 0; i < a->candidates->len; i++)
      {
        const VpaCandidate *c = g_ptr_array_index (a->candidates, i);
        if (c->taken > 0)
          seen |= 1u << c->tier;
      }
    g_assert_cmpuint (seen, ==, 0xf);
  }
  g_clear_pointer (&pl, vpa_placement_free);

  /* Three of them: the remote one stays. */
  ((VpaRequest *) g_ptr_array_index (fx.reqs, 0))->count = 3;
  pl = place_ok (&fx, nodes, 1);
  for (guint k = 0; k < 3; k++)
    g_assert_cmpint (chosen (&fx, pl, 0, k)->numa_node, !=, 2);
  g_clear_pointer (&pl, vpa_placement_free);

  /* Socket: affine and same-socket, never unknown. */
  ((VpaRequest *) g_ptr_array_index (fx.reqs, 0))->count = 2;
  ((VpaRequest *) g_ptr_array_index (fx.reqs, 0))->policy = VPA_POLICY_SOCKET;
  pl = place_ok (&fx, nodes, 1);
  g_assert_cmpint (chosen (&fx, pl, 0, 0)->numa_node, ==, 1);
  g_assert_cmpint (chosen (&fx, pl, 0, 1)->numa_node, ==, 0);
}

static void
test_order_independent (void)
{
  const gint nodes[] = { 0 };

  /* One affine VF, two unknown. Nova, legacy count 2 listed first, takes
   * pools in order and may leave the required request nothing. */
  for (guint order = 0; order < 2; order++)
    {
      g_auto (Fixture) fx = { 0 };
      g_autoptr (VpaPlacement) pl = NULL;
      VpaHost *host = host_new ();
      guint req_index = order == 0 ? 1 : 0;

      add_nic (host, 0x81, VPA_NUMA_NONE, 2);
      add_nic (host, 0x82, 0, 1);
      fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
      if (order == 0)
        {
          add_alias (&fx, "wide", "1515", "type-VF", 2, VPA_POLICY_LEGACY);
          add_port (&fx, "ua-strict", VPA_POLICY_REQUIRED, NULL, FALSE);
        }
      else
        {
          add_port (&fx, "ua-strict", VPA_POLICY_REQUIRED, NULL, FALSE);
          add_alias (&fx, "wide", "1515", "type-VF", 2, VPA_POLICY_LEGACY);
        }
      pl = place_ok (&fx, nodes, 1);
      g_assert_cmpint (chosen (&fx, pl, req_index, 0)->numa_node, ==, 0);
      g_assert_cmpint (chosen (&fx, pl, 1 - req_index, 0)->numa_node, ==, VPA_NUMA_NONE);
      g_assert_cmpint (chosen (&fx, pl, 1 - req_index, 1)->numa_node, ==, VPA_NUMA_NONE);
    }
}

static void
test_pf_group_spread (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  g_autofree char *msg = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 0 };

  add_nic (host, 0x81, 0, 4);
  add_nic (host, 0x82, 0, 4);
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  add_port (&fx, "ua-bond0", VPA_POLICY_REQUIRED, "bond0", FALSE);
  add_port (&fx, "ua-bond1", VPA_POLICY_REQUIRED, "bond0", FALSE);
  add_port (&fx, "ua-plain", VPA_POLICY_REQUIRED, NULL, FALSE);
  pl = place_ok (&fx, nodes, 1);
  g_assert_cmpuint (chosen (&fx, pl, 0, 0)->parent_addr, !=, chosen (&fx, pl, 1, 0)->parent_addr);

  /* A third member cannot be spread over two PFs. */
  add_port (&fx, "ua-bond2", VPA_POLICY_REQUIRED, "bond0", FALSE);
  msg = place_fail (&fx, nodes, 1);
  g_assert_cmpstr (msg, ==,
                   "pf-group 'bond0': port 'ua-bond0', port 'ua-bond1', port 'ua-bond2' need "
                   "devices of 3 distinct PFs, but the free devices their policies allow are "
                   "on 2 PFs (0000:81:00.0, 0000:82:00.0)");
}

static void
test_pf_vf_exclusive (void)
{
  const gint nodes[] = { 0 };

  /* Nova's test_consume_VF_and_PF_requests with four VFs: it takes the
   * last VFs of the pool, which span both PFs, and the PF request fails.
   * Both orders work here: the VFs come from one PF. */
  for (guint order = 0; order < 2; order++)
    {
      g_auto (Fixture) fx = { 0 };
      g_autoptr (VpaPlacement) pl = NULL;
      VpaHost *host = host_new ();
      guint vf_req = order == 0 ? 0 : 1;
      VpaAddr parent;

      add_nic (host, 0x81, 0, 4);
      add_nic (host, 0x82, 0, 4);
      fixture_init (&fx, host, "[device-spec all]\nvendor-id=8086\n", NULL);
      if (order == 1)
        add_alias (&fx, "pf", "1528", "type-PF", 1, VPA_POLICY_LEGACY);
      add_alias (&fx, "vf", "1515", NULL, 4, VPA_POLICY_LEGACY);
      if (order == 0)
        add_alias (&fx, "pf", "1528", "type-PF", 1, VPA_POLICY_LEGACY);
      pl = place_ok (&fx, nodes, 1);
      parent = chosen (&fx, pl, vf_req, 0)->parent_addr;
      for (guint k = 1; k < 4; k++)
        g_assert_cmpuint (chosen (&fx, pl, vf_req, k)->parent_addr, ==, parent);
      g_assert_cmpuint (chosen (&fx, pl, 1 - vf_req, 0)->addr, !=, parent);
    }
}

/* PFs 81:00.0 on node 0 and 82:00.0 on node second_node, four VFs
 * each; another domain holds VF 82:10.0, so the second PF is broken. */
static void
fixture_init_broken_pf (Fixture *fx, gint second_node)
{
  GPtrArray *claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  VpaHost *host = host_new ();

  add_nic (host, 0x81, 0, 4);
  add_nic (host, 0x82, second_node, 4);
  g_ptr_array_add (claims, vpa_claim_new ("other", VPA_ADDR (0, 0x82, 0x10, 0), TRUE));
  fixture_init (fx, host, CONFIG_PHYSNET, claims);
}

static void
test_keep_pf_whole (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  const gint nodes[] = { 0 };

  fixture_init_broken_pf (&fx, 0);
  add_port (&fx, "ua-data0", VPA_POLICY_REQUIRED, NULL, FALSE);
  add_port (&fx, "ua-data1", VPA_POLICY_REQUIRED, NULL, FALSE);
  pl = place_ok (&fx, nodes, 1);
  g_assert_cmpuint (chosen (&fx, pl, 0, 0)->addr, ==, VPA_ADDR (0, 0x82, 0x10, 1));
  g_assert_cmpuint (chosen (&fx, pl, 1, 0)->addr, ==, VPA_ADDR (0, 0x82, 0x10, 2));
}

static void
test_keep_pf_whole_unless_remote (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  const gint nodes[] = { 0 };

  fixture_init_broken_pf (&fx, 1);
  /* The tier wins over keeping a PF whole. */
  add_port (&fx, "ua-data0", VPA_POLICY_PREFERRED, NULL, FALSE);
  pl = place_ok (&fx, nodes, 1);
  g_assert_cmpuint (chosen (&fx, pl, 0, 0)->addr, ==, VPA_ADDR (0, 0x81, 0x10, 0));
}

static void
test_unrequested_pf (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autofree char *msg = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 0 };

  /* PF and VFs share the product id: the PF is not handed out. */
  vpa_test_add_device (host, VPA_ADDR (0, 0x81, 0, 0), "8086:1515", VPA_DEV_TYPE_PF,
                       VPA_ADDR_NONE, 0, NULL);
  vpa_test_add_device (host, VPA_ADDR (0, 0x81, 0x10, 0), "8086:1515", VPA_DEV_TYPE_VF,
                       VPA_ADDR (0, 0x81, 0, 0), 0, NULL);
  fixture_init (&fx, host, "[device-spec all]\nvendor-id=8086\n", NULL);
  add_alias (&fx, "QuickAssist", "1515", NULL, 2, VPA_POLICY_REQUIRED);
  msg = place_fail (&fx, nodes, 1);
  g_assert_cmpstr (msg, ==,
                   "alias 'QuickAssist' (policy required from alias): 2 devices needed, not "
                   "enough free: 8086:1515 on node 0: 1 free");
  g_clear_pointer (&msg, g_free);

  /* Asking for type-PF makes it usable. */
  vpa_spec_set (g_ptr_array_index (((VpaRequest *) g_ptr_array_index (fx.reqs, 0))->specs, 0),
                "dev_type", "type-PF");
  ((VpaRequest *) g_ptr_array_index (fx.reqs, 0))->count = 1;
  {
    g_autoptr (VpaPlacement) pl = place_ok (&fx, nodes, 1);
    g_assert_cmpuint (chosen (&fx, pl, 0, 0)->addr, ==, VPA_ADDR (0, 0x81, 0, 0));
  }
}

static void
test_failure_message (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autofree char *msg = NULL;
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  VpaHost *host = host_new ();
  const gint nodes[] = { 0 };

  add_nic (host, 0x81, 0, 1);
  add_nic (host, 0x82, 1, 2);
  add_nic (host, 0x83, 1, 2);
  g_ptr_array_add (claims, vpa_claim_new ("other", VPA_ADDR (0, 0x81, 0x10, 0), TRUE));
  fixture_init (&fx, host, CONFIG_PHYSNET, g_steal_pointer (&claims));
  add_port (&fx, "ua-data0", VPA_POLICY_REQUIRED, NULL, FALSE);
  msg = place_fail (&fx, nodes, 1);
  /* The VFs of both PFs on node 1 make one part. */
  g_assert_cmpstr (msg, ==,
                   "port 'ua-data0' (policy required from port): no free device: "
                   "8086:1515 physnet1 on node 0: 0 free; "
                   "8086:1515 physnet1 on node 1 refused: node 1 is not the guest's (0)");
}

static void
test_competition_message (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autofree char *msg = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 0 };

  add_nic (host, 0x81, 0, 2);
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  add_port (&fx, "ua-data0", VPA_POLICY_REQUIRED, NULL, FALSE);
  add_port (&fx, "ua-data1", VPA_POLICY_REQUIRED, NULL, FALSE);
  add_port (&fx, "ua-data2", VPA_POLICY_REQUIRED, NULL, FALSE);
  msg = place_fail (&fx, nodes, 1);
  g_assert_cmpstr (msg, ==,
                   "port 'ua-data2' (policy required from port): not enough free devices "
                   "for it besides port 'ua-data0', port 'ua-data1': 8086:1515 physnet1 on "
                   "node 0: 2 free"); /* the competitors once, not twice */
}

static void
test_explain_on_failure (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaPlacement) pl = NULL;
  g_autoptr (VpaPlacement) explain = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 2 };
  VpaGuestNodes guest = { TRUE, nodes, 1 };
  const VpaAssignment *a;
  const VpaCandidate *c;

  add_nic (host, 0x81, 0, 2);
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  add_port (&fx, "ua-data0", VPA_POLICY_SOCKET, NULL, FALSE);
  pl = vpa_place_explain (fx.inv, fx.reqs, &guest, &explain, &error);
  g_assert_null (pl);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_nonnull (explain);
  a = g_ptr_array_index (explain->assignments, 0);
  g_assert_cmpuint (a->devices->len, ==, 0);
  g_assert_cmpuint (a->candidates->len, ==, 2); /* the VFs, and the PF refused */
  c = g_ptr_array_index (a->candidates, 0);
  g_assert_cmpstr (c->pool, ==, "8086:1528 type-PF physnet1 0000:81:00.0");
  g_assert_cmpstr (c->verdict, ==, "refused: a type-PF, which the request does not ask for");
  c = g_ptr_array_index (a->candidates, 1);
  g_assert_cmpstr (c->pool, ==, "8086:1515 type-VF physnet1 PF 0000:81:00.0");
  g_assert_cmpint (c->socket, ==, 0);
  g_assert_cmpint (c->tier, ==, VPA_TIER_REMOTE);
  g_assert_cmpstr (c->verdict, ==,
                   "refused: node 0 is on socket 0, which holds none of the guest's nodes (2)");
}

static void
test_non_numa_and_unbound (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaPlacement) pl = NULL;
  VpaHost *host = host_new ();
  VpaGuestNodes plain = { FALSE, NULL, 0 };
  VpaGuestNodes unbound = { TRUE, NULL, 0 };

  add_nic (host, 0x81, 3, 1);
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  add_port (&fx, "ua-data0", VPA_POLICY_REQUIRED, NULL, FALSE);
  pl = vpa_place (fx.inv, fx.reqs, &plain, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n_chosen (pl, 0), ==, 1);
  g_clear_pointer (&pl, vpa_placement_free);

  pl = vpa_place (fx.inv, fx.reqs, &unbound, &error);
  g_assert_null (pl);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_nonnull (strstr (error->message, "<numatune><memory nodeset="));
  g_clear_error (&error);

  ((VpaRequest *) g_ptr_array_index (fx.reqs, 0))->policy = VPA_POLICY_LEGACY;
  pl = vpa_place (fx.inv, fx.reqs, &unbound, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n_chosen (pl, 0), ==, 1);
}

static void
test_direct_physical (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 0 };

  add_nic (host, 0x81, 0, 2);
  add_nic (host, 0x82, 0, 2);
  add_nic (host, 0x83, 0, 0);
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  add_port (&fx, "ua-vf", VPA_POLICY_REQUIRED, NULL, FALSE);
  add_port (&fx, "ua-pf", VPA_POLICY_REQUIRED, NULL, TRUE);
  pl = place_ok (&fx, nodes, 1);
  /* The PF without VFs is taken: no request needs its VFs. */
  g_assert_cmpuint (chosen (&fx, pl, 1, 0)->addr, ==, VPA_ADDR (0, 0x83, 0, 0));
  g_assert_cmpuint (chosen (&fx, pl, 0, 0)->addr, ==, VPA_ADDR (0, 0x81, 0x10, 0));
}

static void
test_speed (void)
{
  g_auto (Fixture) fx = { 0 };
  g_autoptr (VpaPlacement) pl = NULL;
  VpaHost *host = host_new ();
  const gint nodes[] = { 1 };
  gint64 start, elapsed;

  /* 64 PFs x 256 VFs on four nodes: 16384 VFs. */
  for (guint b = 0; b < 64; b++)
    {
      VpaAddr pf = VPA_ADDR (0, 0x40 + b, 0, 0);
      vpa_test_add_device (host, pf, "8086:1528", VPA_DEV_TYPE_PF, VPA_ADDR_NONE,
                           (gint) (b % 4), NULL);
      for (guint i = 0; i < 256; i++)
        {
          vpa_test_add_device (host, VPA_ADDR (1 + b, 0, i / 8, i % 8), "8086:1515",
                               VPA_DEV_TYPE_VF, pf, (gint) (b % 4), NULL);
        }
    }
  fixture_init (&fx, host, CONFIG_PHYSNET, NULL);
  for (guint i = 0; i < 32; i++)
    {
      g_autofree char *name = g_strdup_printf ("ua-data%u", i);
      add_port (&fx, name, i % 2 ? VPA_POLICY_REQUIRED : VPA_POLICY_PREFERRED,
                i < 8 ? "bond0" : NULL, FALSE);
    }
  start = g_get_monotonic_time ();
  pl = place_ok (&fx, nodes, 1);
  elapsed = g_get_monotonic_time () - start;
  g_test_message ("32 requests over 16384 VFs placed in %.2f ms", elapsed / 1000.0);
  for (guint r = 0; r < 32; r++)
    g_assert_cmpint (chosen (&fx, pl, r, 0)->numa_node, ==, 1);
  /* Generous bound (valgrind, loaded CI); typically a few ms. */
  g_assert_cmpint (elapsed, <, 500 * 1000);
}

/* ------------------------------------------------------------------ */
/* Requests from a domain                                              */
/* ------------------------------------------------------------------ */

#define DOMAIN_HEAD                               \
  "<domain type='kvm'><name>vm1</name><metadata>" \
  "<vpa:affinity xmlns:vpa='http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'>"
#define DOMAIN_TAIL                                                \
  "</vpa:affinity></metadata><devices>"                            \
  "<interface type='hostdev'><alias name='ua-data0'/></interface>" \
  "<interface type='hostdev'><alias name='ua-data1'/></interface>" \
  "<interface type='hostdev'><alias name='ua-pf'/></interface>"    \
  "</devices></domain>"

static const char *requests_config =
  "[alias QuickAssist]\nvendor-id=8086\nproduct-id=0443\ndevice-type=type-PCI\n"
  "numa-policy=required\n"
  "[alias GPU]\nvendor-id=10de\nproduct-id=1db4\n";

static GPtrArray *
requests_for (const char *metadata, GError **error)
{
  g_autofree char *xml = g_strconcat (DOMAIN_HEAD, metadata, DOMAIN_TAIL, NULL);
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_data (requests_config,
                                                       strlen (requests_config),
                                                       "test.conf", &local);
  g_autoptr (VpaDomain) dom = NULL;

  g_assert_no_error (local);
  dom = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "domain.xml" }, &local);
  g_assert_no_error (local);
  return vpa_requests_from_domain (dom, config, error);
}

static void
test_requests_build (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) reqs = requests_for (
    "<vpa:flavor aliases='QuickAssist:2,GPU:1'/>"
    "<vpa:port device='ua-data0' physnet='physnet1' policy='preferred' trusted='true'/>"
    "<vpa:port device='ua-pf' physnet='physnet2' vnic-type='direct-physical' "
    "pf-group='g'/>",
    &error);
  const VpaRequest *r;
  gboolean present;

  g_assert_no_error (error);
  g_assert_cmpuint (reqs->len, ==, 4);
  r = g_ptr_array_index (reqs, 0);
  g_assert_cmpstr (r->label, ==, "alias 'QuickAssist'");
  g_assert_cmpuint (r->count, ==, 2);
  g_assert_cmpint (r->policy, ==, VPA_POLICY_REQUIRED);
  g_assert_cmpint (r->policy_source, ==, VPA_POLICY_SOURCE_ALIAS);
  g_assert_cmpstr (vpa_spec_get (g_ptr_array_index (r->specs, 0), "dev_type", NULL), ==,
                   "type-PCI");
  r = g_ptr_array_index (reqs, 1);
  g_assert_cmpint (r->policy, ==, VPA_POLICY_LEGACY);
  g_assert_cmpint (r->policy_source, ==, VPA_POLICY_SOURCE_DEFAULT);
  r = g_ptr_array_index (reqs, 2);
  g_assert_cmpstr (r->label, ==, "port 'ua-data0'");
  g_assert_cmpint (r->policy, ==, VPA_POLICY_PREFERRED);
  g_assert_cmpint (r->policy_source, ==, VPA_POLICY_SOURCE_PORT);
  g_assert_cmpstr (vpa_spec_get (g_ptr_array_index (r->specs, 0), "physical_network", NULL),
                   ==, "physnet1");
  g_assert_cmpstr (vpa_spec_get (g_ptr_array_index (r->specs, 0), "remote_managed", NULL),
                   ==, "false");
  g_assert_cmpstr (vpa_spec_get (g_ptr_array_index (r->specs, 0), "trusted", NULL), ==,
                   "true");
  g_assert_null (vpa_spec_get (g_ptr_array_index (r->specs, 0), "dev_type", &present));
  g_assert_false (present);
  r = g_ptr_array_index (reqs, 3);
  g_assert_cmpstr (vpa_spec_get (g_ptr_array_index (r->specs, 0), "dev_type", NULL), ==,
                   "type-PF");
  g_assert_cmpstr (r->pf_group, ==, "g");
}

static void
test_requests_precedence (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) reqs = requests_for (
    "<vpa:flavor policy='socket' aliases='QuickAssist:1'/>"
    "<vpa:image policy='socket'/>"
    "<vpa:port device='ua-data0'/>"
    "<vpa:port device='ua-data1' physnet='physnet1' policy='legacy'/>",
    &error);
  const VpaRequest *r;

  g_assert_no_error (error);
  r = g_ptr_array_index (reqs, 0);
  g_assert_cmpint (r->policy, ==, VPA_POLICY_SOCKET);
  g_assert_cmpint (r->policy_source, ==, VPA_POLICY_SOURCE_FLAVOR);
  r = g_ptr_array_index (reqs, 1);
  g_assert_cmpint (r->policy, ==, VPA_POLICY_SOCKET);
  g_assert_cmpint (r->policy_source, ==, VPA_POLICY_SOURCE_FLAVOR);
  /* A tunnelled port: physical_network None, which only untagged
   * devices match. */
  {
    gboolean present = FALSE;
    g_assert_null (vpa_spec_get (g_ptr_array_index (r->specs, 0), "physical_network",
                                 &present));
    g_assert_true (present);
  }
  r = g_ptr_array_index (reqs, 2);
  g_assert_cmpint (r->policy, ==, VPA_POLICY_LEGACY);
  g_assert_cmpint (r->policy_source, ==, VPA_POLICY_SOURCE_PORT);
}

static void
test_requests_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) reqs = requests_for ("<vpa:flavor aliases='Nope:1'/>", &error);

  g_assert_null (reqs);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "domain.xml: alias 'Nope' in <vpa:flavor aliases> is not defined in "
                   "test.conf");
  g_clear_error (&error);
  reqs = requests_for ("<vpa:flavor policy='legacy'/><vpa:image policy='required'/>", &error);
  g_assert_null (reqs);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "domain.xml: image policy 'required' is not permitted to override the "
                   "flavor policy 'legacy'");
}

/* place --explain explains a failure too: the pipeline fills the report
 * with every request's candidates and verdicts, no devices, and fails
 * with the diagnosis (data/explain/NAME.xml on the dual-socket host, the
 * report in NAME.explain). */
static void
test_pipeline_explain_failure (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/dual-socket.conf", &error);
  g_autoptr (GPtrArray) claims = NULL;
  VpaHost *host = NULL;
  g_autofree char *buf = NULL;
  g_autofree char *out = NULL;
  gsize len = 0;
  VpaPlaceOptions opts = { .explain = g_string_new (NULL) };

  g_assert_no_error (error);
  host = vpa_snapshot_load (VPA_TEST_DATA "/hosts/dual-socket.xml", &error);
  g_assert_no_error (error);
  claims = vpa_claim_filter (host->claims, NULL, FALSE);
  buf = vpa_test_read_fixture (VPA_TEST_DATA "/explain/unsatisfiable.xml", &len);
  opts.claims = claims;
  opts.config = config;
  out = vpa_pipeline_place (host, &opts, &(VpaDoc){ buf, len, "unsatisfiable.xml" }, NULL, &error);
  g_assert_null (out);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_cmpstr (error->message, ==,
                   "alias 'GPU' (policy required from flavor): 4 devices needed, not enough "
                   "free: 10de:20b5 on node 1 refused: node 1 is not the guest's (0)");
  vpa_test_assert_golden (VPA_TEST_DATA "/explain/unsatisfiable.explain", opts.explain->str);
  g_string_free (opts.explain, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/place/affine-first", test_affine_first);
  g_test_add_func ("/place/tier-ranking", test_tier_ranking);
  g_test_add_func ("/place/order-independent", test_order_independent);
  g_test_add_func ("/place/pf-group", test_pf_group_spread);
  g_test_add_func ("/place/pf-vf-exclusive", test_pf_vf_exclusive);
  g_test_add_func ("/place/keep-pf-whole", test_keep_pf_whole);
  g_test_add_func ("/place/keep-pf-whole-unless-remote", test_keep_pf_whole_unless_remote);
  g_test_add_func ("/place/unrequested-pf", test_unrequested_pf);
  g_test_add_func ("/place/direct-physical", test_direct_physical);
  g_test_add_func ("/place/failure-message", test_failure_message);
  g_test_add_func ("/place/competition-message", test_competition_message);
  g_test_add_func ("/place/explain-on-failure", test_explain_on_failure);
  g_test_add_func ("/place/pipeline-explain-failure", test_pipeline_explain_failure);
  g_test_add_func ("/place/non-numa-and-unbound", test_non_numa_and_unbound);
  g_test_add_func ("/place/speed", test_speed);
  g_test_add_func ("/requests/build", test_requests_build);
  g_test_add_func ("/requests/precedence", test_requests_precedence);
  g_test_add_func ("/requests/errors", test_requests_errors);
  return g_test_run ();
}
