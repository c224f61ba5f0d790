/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "vpa-inventory.h"
#include "vpa-test-util.h"

#define PF1 VPA_ADDR (0, 0x81, 0, 0)
#define PF2 VPA_ADDR (0, 0x82, 0, 0)
#define GPU VPA_ADDR (0, 0x3b, 0, 0)

/* PF1 (ens1f0, node 0) with VFs 81:10.0-3, PF2 (ens2f0, node 1) with VFs
 * 82:10.0-1, a GPU without NUMA information. Added out of order. */
static VpaHost *
make_host (void)
{
  VpaHost *host = vpa_host_new ("test");

  for (guint f = 0; f < 2; f++)
    {
      vpa_test_add_device (host, VPA_ADDR (0, 0x82, 0x10, f), "8086:1889", VPA_DEV_TYPE_VF, PF2,
                           1, NULL);
    }
  vpa_test_add_device (host, GPU, "10de:2236", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, VPA_NUMA_NONE,
                       NULL);
  vpa_test_add_device (host, PF2, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 1, "ens2f0");
  for (guint f = 0; f < 4; f++)
    {
      vpa_test_add_device (host, VPA_ADDR (0, 0x81, 0x10, f), "8086:1889", VPA_DEV_TYPE_VF, PF1,
                           0, f == 0 ? "ens1f0v0" : NULL);
    }
  vpa_test_add_device (host, PF1, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 0, "ens1f0");
  return host;
}

static const char vf_only_conf[] =
  "[device-spec vfs]\nproduct-id=1889\nphysical-network=physnet1\n"
  "[device-spec gpu]\nvendor-id=10de\nremote-managed=true\n";

/* One letter per device in address order: F free, H held, B blocked. */
static char *
states (const VpaInventory *inv)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < inv->host->devices->len; i++)
    g_string_append_c (s, "FHB"[inv->state[i]]);
  return g_string_free (s, FALSE);
}

static gint
idx (const VpaInventory *inv, VpaAddr addr)
{
  gint i = vpa_host_lookup (inv->host, addr);
  g_assert_cmpint (i, >=, 0);
  return i;
}

static VpaInventory *
make_inventory (const VpaConfig *config, GPtrArray *claims)
{
  g_autoptr (GError) error = NULL;
  VpaInventory *inv = vpa_inventory_new (make_host (), config, claims, &error);
  g_assert_no_error (error);
  g_assert_nonnull (inv);
  return inv;
}

static void
test_specs (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (vf_only_conf);
  g_autoptr (VpaConfig) all = vpa_config_new_default ();
  g_autoptr (VpaInventory) inv = make_inventory (config, NULL);
  g_autoptr (VpaInventory) inv_all = make_inventory (all, NULL);

  g_assert_true (inv->host->sealed);
  g_assert_cmpuint (inv->n_devices, ==, 7);
  g_assert_cmpint (inv->tagset[idx (inv, GPU)], ==, 2);
  g_assert_cmpint (inv->tagset[idx (inv, PF1)], ==, -1);
  g_assert_false (vpa_inventory_has (inv, (guint) idx (inv, PF2)));
  g_assert_cmpint (inv->tagset[idx (inv, VPA_ADDR (0, 0x81, 0x10, 3))], ==, 1);

  /* No device spec: nothing is assignable (Nova's empty whitelist). */
  g_assert_cmpuint (inv_all->n_devices, ==, 0);
  for (guint i = 0; i < 9; i++)
    g_assert_cmpint (inv_all->tagset[i], ==, -1);
}

static void
test_claim_vf (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (vf_only_conf);
  GPtrArray *claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (VpaInventory) inv = NULL;
  g_autofree char *s = NULL;
  gint vf;

  g_ptr_array_add (claims, vpa_claim_new ("vm1", VPA_ADDR (0, 0x81, 0x10, 1), TRUE));
  inv = make_inventory (config, claims);
  /* 3b:00.0 81:00.0 81:10.0-3 82:00.0 82:10.0-1: the PF is blocked though
   * the device specs leave it out of the inventory */
  s = states (inv);
  g_assert_cmpstr (s, ==, "FBFHFFFFF");
  vf = idx (inv, VPA_ADDR (0, 0x81, 0x10, 1));
  g_assert_cmpstr (inv->held_by[vf], ==, "vm1");
  g_assert_null (inv->held_by[idx (inv, PF1)]);
  g_assert_cmpstr (vpa_dev_state_to_string (inv->state[idx (inv, PF1)]), ==, "blocked");
}

static void
test_claim_pf (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  g_autoptr (VpaHost) host = make_host ();
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *s = NULL;

  /* without explicit claims the host's own are used */
  vpa_host_add_claim (host, vpa_claim_new ("vm2", PF2, FALSE));
  vpa_host_add_claim (host, vpa_claim_new ("vm3", GPU, TRUE));
  inv = vpa_inventory_new (g_steal_pointer (&host), config, NULL, &error);
  g_assert_no_error (error);
  s = states (inv);
  g_assert_cmpstr (s, ==, "HFFFFFHBB");
  g_assert_cmpstr (inv->held_by[idx (inv, PF2)], ==, "vm2");
  g_assert_cmpstr (inv->held_by[idx (inv, GPU)], ==, "vm3");
  g_assert_cmpuint (inv->claims->len, ==, 2);
}

static void
test_claim_both (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  GPtrArray *claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (VpaInventory) inv = NULL;
  g_autofree char *s = NULL;

  /* a held device stays held when a relative's claim would block it; a
   * second claim of the same device keeps the first holder */
  g_ptr_array_add (claims, vpa_claim_new ("vm1", VPA_ADDR (0, 0x82, 0x10, 1), TRUE));
  g_ptr_array_add (claims, vpa_claim_new ("vm2", PF2, TRUE));
  g_ptr_array_add (claims, vpa_claim_new ("vm3", PF2, TRUE));
  inv = make_inventory (config, claims);
  s = states (inv);
  g_assert_cmpstr (s, ==, "FFFFFFHBH");
  g_assert_cmpstr (inv->held_by[idx (inv, PF2)], ==, "vm2");
}

static void
test_claim_absent (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  GPtrArray *claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (VpaInventory) inv = NULL;
  g_autofree char *s = NULL;

  g_ptr_array_add (claims, vpa_claim_new ("vm1", VPA_ADDR (0, 0x99, 0, 0), TRUE));
  g_ptr_array_add (claims, vpa_claim_new ("vm1", VPA_ADDR (0, 0x81, 0x11, 0), TRUE));
  inv = make_inventory (config, claims);
  s = states (inv);
  g_assert_cmpstr (s, ==, "FFFFFFFFF");
  g_assert_cmpuint (inv->claims->len, ==, 2);
}

static void
test_hold (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  g_autoptr (VpaInventory) inv = make_inventory (config, NULL);
  g_autofree char *s = NULL;
  g_autofree char *name = g_strdup ("placed");
  gint pf = idx (inv, PF1);

  vpa_inventory_hold (inv, (guint) pf, name);
  g_clear_pointer (&name, g_free);
  s = states (inv);
  g_assert_cmpstr (s, ==, "FHBBBBFFF");
  g_assert_cmpstr (inv->held_by[pf], ==, "placed");
  g_assert_cmpuint (inv->claims->len, ==, 1);
}

static void
test_seal_error (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  VpaHost *host = make_host ();
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaInventory) inv = NULL;

  vpa_test_add_device (host, GPU, "10de:2236", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 0, NULL);
  inv = vpa_inventory_new (host, config, NULL, &error);
  g_assert_null (inv);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "test: PCI device '0000:3b:00.0' appears twice");
}

static void
test_prop (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (vf_only_conf);
  g_autoptr (VpaInventory) inv = make_inventory (config, NULL);
  guint vf0 = (guint) idx (inv, VPA_ADDR (0, 0x81, 0x10, 0));
  guint vf1 = (guint) idx (inv, VPA_ADDR (0, 0x81, 0x10, 1));
  guint pf = (guint) idx (inv, PF1), gpu = (guint) idx (inv, GPU);

  g_assert_cmpstr (vpa_inventory_model_prop (inv, vf0, "vendor_id"), ==, "8086");
  g_assert_cmpstr (vpa_inventory_model_prop (inv, vf0, "product_id"), ==, "1889");
  g_assert_cmpstr (vpa_inventory_model_prop (inv, vf0, "dev_type"), ==, "type-VF");
  g_assert_cmpstr (vpa_inventory_model_prop (inv, vf0, "physical_network"), ==, "physnet1");
  g_assert_cmpstr (vpa_inventory_model_prop (inv, vf0, "parent_ifname"), ==, "ens1f0");
  g_assert_null (vpa_inventory_model_prop (inv, vf1, "parent_ifname"));
  g_assert_null (vpa_inventory_model_prop (inv, vf0, "numa_node"));
  g_assert_null (vpa_inventory_model_prop (inv, vf0, "trusted"));
  g_assert_cmpstr (vpa_inventory_model_prop (inv, vf0, "remote_managed"), ==, "false");
  /* out of the inventory: no tags, but the implicit remote_managed */
  g_assert_cmpstr (vpa_inventory_model_prop (inv, pf, "dev_type"), ==, "type-PF");
  g_assert_null (vpa_inventory_model_prop (inv, pf, "physical_network"));
  g_assert_cmpstr (vpa_inventory_model_prop (inv, pf, "remote_managed"), ==, "false");
  /* a tag beats the implicit value; type-PCI has none of its own */
  g_assert_cmpstr (vpa_inventory_model_prop (inv, gpu, "remote_managed"), ==, "true");
  g_assert_null (vpa_inventory_model_prop (inv, gpu, "parent_ifname"));
}

static gboolean
match (const VpaInventory *inv, VpaAddr addr, const char *const *pairs)
{
  g_autoptr (VpaSpec) spec = vpa_spec_new ();

  for (guint p = 0; pairs[p] != NULL; p += 2)
    vpa_spec_set (spec, pairs[p], *pairs[p + 1] == '\0' ? NULL : pairs[p + 1]);
  return vpa_inventory_model_spec_match (inv, (guint) idx (inv, addr), spec);
}

static void
test_spec_match (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (vf_only_conf);
  g_autoptr (VpaConfig) all = vpa_config_new_default ();
  g_autoptr (VpaInventory) inv = make_inventory (config, NULL);
  g_autoptr (VpaInventory) untagged = make_inventory (all, NULL);
  VpaAddr vf = VPA_ADDR (0, 0x81, 0x10, 2);
  /* "" stands for None */
  const char *const empty[] = { NULL };
  const char *const port[] = { "physical_network", "PhysNet1", "remote_managed", "False", NULL };
  const char *const tunnel[] = { "physical_network", "", "remote_managed", "False", NULL };
  const char *const trusted[] = { "trusted", "False", NULL };
  const char *const no_trusted[] = { "trusted", "", NULL };
  const char *const ids[] = { "vendor_id", "8086", "product_id", "1889", "dev_type", "type-VF", NULL };
  const char *const pf_type[] = { "vendor_id", "8086", "dev_type", "type-PF", NULL };
  const char *const numa[] = { "numa_node", "0", NULL };
  const char *const numa_none[] = { "numa_node", "", NULL };
  const char *const gpu_port[] = { "remote_managed", "False", NULL };

  g_assert_true (match (inv, vf, empty));
  g_assert_true (match (inv, vf, port));
  g_assert_false (match (inv, vf, tunnel));
  g_assert_true (match (untagged, vf, tunnel));
  g_assert_false (match (inv, vf, trusted));
  g_assert_true (match (inv, vf, no_trusted));
  g_assert_true (match (inv, vf, ids));
  g_assert_false (match (inv, vf, pf_type));
  g_assert_true (match (inv, PF1, pf_type));
  g_assert_false (match (inv, vf, numa));
  g_assert_false (match (inv, vf, numa_none));
  g_assert_true (match (inv, GPU, numa_none));
  /* a port request never matches an untagged type-PCI device */
  g_assert_false (match (untagged, GPU, gpu_port));
  g_assert_false (match (inv, GPU, gpu_port));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/inventory/specs", test_specs);
  g_test_add_func ("/inventory/claim-vf", test_claim_vf);
  g_test_add_func ("/inventory/claim-pf", test_claim_pf);
  g_test_add_func ("/inventory/claim-both", test_claim_both);
  g_test_add_func ("/inventory/claim-absent", test_claim_absent);
  g_test_add_func ("/inventory/hold", test_hold);
  g_test_add_func ("/inventory/seal-error", test_seal_error);
  g_test_add_func ("/inventory/prop", test_prop);
  g_test_add_func ("/inventory/spec-match", test_spec_match);
  return g_test_run ();
}
