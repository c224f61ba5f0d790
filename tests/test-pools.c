/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "vpa-output.h"
#include "vpa-pools.h"
#include "vpa-source.h"
#include "vpa-traits.h"
#include "vpa-test-util.h"

#define PF1 VPA_ADDR (0, 0x81, 0, 0)
#define PF2 VPA_ADDR (0, 0x82, 0, 0)
#define PF3 VPA_ADDR (0, 0x85, 0, 0)

/* data/pools/NAME holds the expected text. */
static void
assert_golden (const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "pools", name, NULL);

  vpa_test_assert_golden (path, text);
}

static void
add_dev (GPtrArray *devs, VpaAddr addr, const char *ids, VpaDevType type, VpaAddr parent,
         gint numa, const char *netdev)
{
  g_ptr_array_add (devs, vpa_test_device_new (addr, ids, type, parent, numa, netdev));
}

static void
add_cell (VpaHost *host, gint id, gint socket)
{
  VpaCell cell = { .id = id, .socket = socket, .cpus = NULL, .memory_kib = 1 << 20 };
  vpa_host_add_cell (host, &cell);
}

/* Cells 0 (socket 0), 1 (socket 1), 2 (memory only: no socket); PF1 with
 * 4 VFs on node 0, PF2 (ens2f0) with 4 VFs on node 1, GPUs on node 0 and
 * without NUMA information, a QuickAssist on node 2, PF3 with 2 VFs
 * that no device spec admits. Claims: vm1 a VF of PF1, vm2 PF2, vm3 a
 * GPU. Devices are added in a random order when shuffle is set. */
static VpaHost *
make_host (gboolean shuffle, gboolean cells_known)
{
  VpaHost *host = vpa_host_new ("handmade");
  g_autoptr (GPtrArray) devs = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;

  add_dev (devs, PF1, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 0, "ens1f0");
  add_dev (devs, PF2, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 1, "ens2f0");
  add_dev (devs, PF3, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, 1, "ens3f0");
  for (guint f = 0; f < 4; f++)
    {
      add_dev (devs, VPA_ADDR (0, 0x81, 0x10, f), "8086:1889", VPA_DEV_TYPE_VF, PF1, 0, NULL);
      add_dev (devs, VPA_ADDR (0, 0x82, 0x10, f), "8086:1889", VPA_DEV_TYPE_VF, PF2, 1, NULL);
    }
  for (guint f = 0; f < 2; f++)
    add_dev (devs, VPA_ADDR (0, 0x85, 0x10, f), "8086:1889", VPA_DEV_TYPE_VF, PF3, 1, NULL);
  add_dev (devs, VPA_ADDR (0, 0x3b, 0, 0), "10de:2236", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE,
           VPA_NUMA_NONE, NULL);
  add_dev (devs, VPA_ADDR (0, 0x3c, 0, 0), "10de:2236", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 0,
           NULL);
  add_dev (devs, VPA_ADDR (0, 0x84, 0, 0), "8086:0443", VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, 2,
           NULL);

  /* Fisher-Yates with GTest's seeded generator */
  for (guint i = devs->len; shuffle && i > 1; i--)
    {
      guint j = (guint) g_test_rand_int_range (0, (gint32) i);
      gpointer t = devs->pdata[i - 1];
      devs->pdata[i - 1] = devs->pdata[j];
      devs->pdata[j] = t;
    }
  for (guint i = 0; i < devs->len; i++)
    vpa_host_add_device (host, devs->pdata[i]);
  add_cell (host, 2, cells_known ? 1 : VPA_SOCKET_NONE);
  add_cell (host, 0, 0);
  add_cell (host, 1, 1);
  vpa_host_add_claim (host, vpa_claim_new ("vm1", VPA_ADDR (0, 0x81, 0x10, 1), TRUE));
  vpa_host_add_claim (host, vpa_claim_new ("vm2", PF2, TRUE));
  vpa_host_add_claim (host, vpa_claim_new ("vm3", VPA_ADDR (0, 0x3c, 0, 0), FALSE));
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);
  return host;
}

static const char handmade_conf[] =
  "[device-spec physnet1]\naddress=0000:81:00.0\nphysical-network=physnet1\ntrusted=true\n"
  "[device-spec physnet2]\ndevname=ens2f0\nphysical-network=physnet2\n"
  "[device-spec gpu]\nvendor-id=10de\n"
  "[device-spec qat]\nproduct-id=0443\n";

/* The same device sets, the specs in the opposite order. */
static const char handmade_conf_reversed[] =
  "[device-spec qat]\nproduct-id=0443\n"
  "[device-spec gpu]\nvendor-id=10de\n"
  "[device-spec physnet2]\ndevname=ens2f0\nphysical-network=physnet2\n"
  "[device-spec physnet1]\naddress=0000:81:00.0\nphysical-network=physnet1\ntrusted=true\n";

static VpaInventory *
make_inventory (const VpaConfig *config, gboolean shuffle, gboolean cells_known)
{
  g_autoptr (GError) error = NULL;
  VpaInventory *inv = vpa_inventory_new (make_host (shuffle, cells_known), config, NULL,
                                         &error);
  g_assert_no_error (error);
  return inv;
}

static VpaPoolKeys
keys_from (const char *str)
{
  VpaPoolKeys keys = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (vpa_pools_keys_parse (str, &keys, &error));
  g_assert_no_error (error);
  return keys;
}

/* ------------------------------------------------------------------ */

static void
test_keys_parse (void)
{
  VpaPoolKeys keys = 0;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (keys_from ("vendor,product,numa_node,dev_type,tags"), ==,
                   VPA_POOL_KEYS_DEFAULT);
  g_assert_cmpint (keys_from (" vendor_id , product_id,numa_node,dev_type,tags,tags"), ==,
                   VPA_POOL_KEYS_DEFAULT);
  g_assert_cmpint (keys_from ("socket,pf"), ==, VPA_POOL_KEY_SOCKET | VPA_POOL_KEY_PF);
  g_assert_false (vpa_pools_keys_parse ("vendor,numa", &keys, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "pool keys 'vendor,numa': unknown key 'numa' (expected vendor, product, "
                   "numa_node, socket, dev_type, tags, pf, pcie-root or pcie-switch)");
  g_clear_error (&error);
  g_assert_false (vpa_pools_keys_parse ("", &keys, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
}

/* One line per pool: its fields and counts, for compact assertions. */
static char *
summary (const VpaInventory *inv, GArray *pools)
{
  GString *s = g_string_new (NULL);

  for (guint p = 0; p < pools->len; p++)
    {
      const VpaPool *pool = &g_array_index (pools, VpaPool, p);
      char buf[VPA_ADDR_BUFLEN];

      g_assert_cmpuint (pool->total, ==, pool->free + pool->used + pool->blocked);
      g_string_append_printf (s, "%s %s %s n%d s%d t%d %s %u/%u/%u/%u\n", pool->vendor_id,
                              pool->product_id, vpa_dev_type_to_string (pool->dev_type),
                              pool->numa_node, pool->socket, pool->tagset,
                              pool->pf == VPA_ADDR_NONE ? "-" : vpa_addr_format (pool->pf, buf),
                              pool->total, pool->free, pool->used, pool->blocked);
    }
  return g_string_free (s, FALSE);
}

static void
test_default_keys (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (handmade_conf);
  g_autoptr (VpaInventory) inv = make_inventory (config, FALSE, TRUE);
  g_autoptr (GArray) pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT);
  g_autofree char *s = summary (inv, pools);

  /* PF3 and its VFs are out; PF1 blocked by vm1's VF, PF2's VFs by vm2 */
  g_assert_cmpstr (s, ==,
                   "10de 2236 type-PCI n0 s0 t0 - 1/0/1/0\n"
                   "10de 2236 type-PCI n-1 s-1 t0 - 1/1/0/0\n"
                   "8086 0443 type-PCI n2 s1 t0 - 1/1/0/0\n"
                   "8086 1593 type-PF n0 s0 t1 - 1/0/0/1\n"
                   "8086 1593 type-PF n1 s1 t2 - 1/0/1/0\n"
                   "8086 1889 type-VF n0 s0 t1 - 4/3/1/0\n"
                   "8086 1889 type-VF n1 s1 t2 - 4/0/0/4\n");
  for (guint p = 0; p < pools->len; p++)
    {
      g_assert_cmpint (g_array_index (pools, VpaPool, p).keys, ==,
                       VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_SOCKET);
    }
}

static void
test_other_keys (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (handmade_conf);
  g_autoptr (VpaInventory) inv = make_inventory (config, FALSE, FALSE);
  struct {
    const char *keys;
    const char *expected;
  } cases[] = {
    { "vendor", "10de  type-PCI n-1 s-1 t0 - 2/1/1/0\n"
                "8086  type-PCI n-1 s-1 t0 - 11/4/2/5\n" },
    { "product,dev_type", " 0443 type-PCI n-1 s-1 t0 - 1/1/0/0\n"
                          " 1593 type-PF n-1 s-1 t0 - 2/0/1/1\n"
                          " 1889 type-VF n-1 s-1 t0 - 8/3/1/4\n"
                          " 2236 type-PCI n-1 s-1 t0 - 2/1/1/0\n" },
    /* node 2 has no socket here: it joins the devices without NUMA */
    { "socket", "  type-PCI n-1 s0 t0 - 6/3/2/1\n"
                "  type-PCI n-1 s1 t0 - 5/0/1/4\n"
                "  type-PCI n-1 s-1 t0 - 2/2/0/0\n" },
    { "numa_node", "  type-PCI n0 s0 t0 - 6/3/2/1\n"
                   "  type-PCI n1 s1 t0 - 5/0/1/4\n"
                   "  type-PCI n2 s-1 t0 - 1/1/0/0\n"
                   "  type-PCI n-1 s-1 t0 - 1/1/0/0\n" },
    { "tags", "  type-PCI n-1 s-1 t0 - 3/2/1/0\n"
              "  type-PCI n-1 s-1 t1 - 5/3/1/1\n"
              "  type-PCI n-1 s-1 t2 - 5/0/1/4\n" },
    { "pf,dev_type", "  type-PCI n-1 s-1 t0 0000:3b:00.0 1/1/0/0\n"
                     "  type-PCI n-1 s-1 t0 0000:3c:00.0 1/0/1/0\n"
                     "  type-PCI n-1 s-1 t0 0000:84:00.0 1/1/0/0\n"
                     "  type-PF n-1 s-1 t0 0000:81:00.0 1/0/0/1\n"
                     "  type-PF n-1 s-1 t0 0000:82:00.0 1/0/1/0\n"
                     "  type-VF n-1 s-1 t0 0000:81:00.0 4/3/1/0\n"
                     "  type-VF n-1 s-1 t0 0000:82:00.0 4/0/0/4\n" },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GArray) pools = vpa_pools_generate (inv, keys_from (cases[c].keys));
      g_autofree char *s = summary (inv, pools);
      g_test_message ("keys %s", cases[c].keys);
      g_assert_cmpstr (s, ==, cases[c].expected);
    }
}

static void
test_order_independent (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (handmade_conf);
  g_autoptr (VpaConfig) reversed = vpa_test_config_load (handmade_conf_reversed);
  g_autoptr (VpaInventory) inv = make_inventory (config, FALSE, TRUE);
  g_autoptr (GArray) pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_PF);
  g_autofree char *expected = vpa_output_pools_json (inv, pools);

  for (guint round = 0; round < 20; round++)
    {
      g_autoptr (VpaInventory) other = make_inventory (round % 2 ? reversed : config, TRUE,
                                                       TRUE);
      g_autoptr (GArray) p = vpa_pools_generate (other, VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_PF);
      g_autofree char *got = vpa_output_pools_json (other, p);
      g_assert_cmpstr (got, ==, expected);
    }
}

static void
test_golden (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (handmade_conf);
  g_autoptr (VpaInventory) inv = make_inventory (config, TRUE, FALSE);
  struct {
    const char *keys;
    const char *name;
  } cases[] = {
    { "vendor,product,numa_node,dev_type,tags", "handmade" },
    { "vendor,product,dev_type,tags,pf", "handmade-pf" },
    { "socket,dev_type", "handmade-socket" },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GArray) pools = vpa_pools_generate (inv, keys_from (cases[c].keys));
      g_autofree char *text = vpa_output_pools_text (inv, pools);
      g_autofree char *json = vpa_output_pools_json (inv, pools);
      g_autofree char *text_name = g_strdup_printf ("%s.txt", cases[c].name);
      g_autofree char *json_name = g_strdup_printf ("%s.json", cases[c].name);
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_autoptr (GError) error = NULL;

      assert_golden (text_name, text);
      assert_golden (json_name, json);
      g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
      g_assert_no_error (error);
    }
}

static void
test_output_empty (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load ("[device-spec none]\nvendor-id=1234\n");
  g_autoptr (VpaInventory) inv = make_inventory (config, FALSE, TRUE);
  g_autoptr (GArray) pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT);
  g_autofree char *json = vpa_output_pools_json (inv, pools);
  g_autofree char *text = vpa_output_pools_text (inv, pools);

  g_assert_cmpuint (pools->len, ==, 0);
  g_assert_cmpuint (inv->n_devices, ==, 0);
  assert_golden ("empty.json", json);
  assert_golden ("empty.txt", text);
}

static void
test_traits (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (handmade_conf);
  g_autoptr (VpaConfig) no_vfs = vpa_test_config_load ("[device-spec gpu]\nvendor-id=10de\n");
  g_autoptr (VpaInventory) both = make_inventory (config, FALSE, TRUE);
  g_autoptr (VpaInventory) no_socket = make_inventory (config, FALSE, FALSE);
  g_autoptr (VpaInventory) none = make_inventory (no_vfs, FALSE, FALSE);
  g_autoptr (VpaInventory) socket_only = make_inventory (no_vfs, FALSE, TRUE);
  g_auto (GStrv) t1 = vpa_traits_compute (both);
  g_auto (GStrv) t2 = vpa_traits_compute (no_socket);
  g_auto (GStrv) t3 = vpa_traits_compute (none);
  g_auto (GStrv) t4 = vpa_traits_compute (socket_only);
  g_autofree char *text = vpa_output_traits_text (t1);
  const char *e1[] = { "COMPUTE_NET_NUMA_AFFINITY", "COMPUTE_SOCKET_PCI_NUMA_AFFINITY", NULL };
  const char *e2[] = { "COMPUTE_NET_NUMA_AFFINITY", NULL };
  const char *e4[] = { "COMPUTE_SOCKET_PCI_NUMA_AFFINITY", NULL };

  g_assert_true (g_strv_equal ((const char *const *) t1, e1));
  g_assert_true (g_strv_equal ((const char *const *) t2, e2));
  g_assert_cmpuint (g_strv_length (t3), ==, 0);
  g_assert_true (g_strv_equal ((const char *const *) t4, e4));
  g_assert_cmpstr (text, ==,
                   "COMPUTE_NET_NUMA_AFFINITY\nCOMPUTE_SOCKET_PCI_NUMA_AFFINITY\n");
}

/* 256 PFs x 63 VFs over 4 nodes, four VF products, every 7th VF held. */
static void
test_large_host (void)
{
  g_autoptr (VpaConfig) config = vpa_test_config_load (
    "[device-spec intel]\nvendor-id=8086\nphysical-network=physnet0\n");
  VpaHost *host = vpa_host_new ("speed");
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) error = NULL;
  guint total = 0;

  for (guint pf = 0; pf < 256; pf++)
    {
      VpaAddr pfa = VPA_ADDR (0, pf, 0, 0);
      g_autoptr (GPtrArray) devs = g_ptr_array_new ();

      add_dev (devs, pfa, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, (gint) (pf % 4), NULL);
      for (guint v = 0; v < 63; v++)
        {
          VpaAddr a = VPA_ADDR (0, pf, 1 + v / 8, v % 8);
          g_autofree char *ids = g_strdup_printf ("8086:%04x", 0x1889 + pf / 64);
          add_dev (devs, a, ids, VPA_DEV_TYPE_VF, pfa, (gint) (pf % 4), NULL);
          if (v % 7 == 0)
            vpa_host_add_claim (host, vpa_claim_new ("vm", a, TRUE));
        }
      for (guint i = 0; i < devs->len; i++)
        vpa_host_add_device (host, devs->pdata[i]);
    }
  for (gint n = 0; n < 4; n++)
    add_cell (host, n, n / 2);
  inv = vpa_inventory_new (host, config, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (inv->n_devices, ==, 16384);

  /* Speed is measured by the benchmark, not here: this checks the
   * large-host result only. */
  {
    g_autoptr (GArray) pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT);
    g_assert_cmpuint (pools->len, ==, 20);
    for (guint p = 0; p < pools->len; p++)
      total += g_array_index (pools, VpaPool, p).total;
    g_assert_cmpuint (total, ==, 16384);
  }
}

static void
test_json_printer (void)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  JsonObject *obj;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "s");
  json_builder_add_string_value (b, "a\"b\\c\nd\x01\u00e9");
  json_builder_set_member_name (b, "weight");
  json_builder_add_double_value (b, 12.0);
  json_builder_set_member_name (b, "half");
  json_builder_add_double_value (b, 0.5);
  json_builder_set_member_name (b, "ok");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_set_member_name (b, "reason");
  json_builder_add_null_value (b);
  json_builder_set_member_name (b, "list");
  json_builder_begin_array (b);
  json_builder_add_int_value (b, -3);
  json_builder_begin_object (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = vpa_output_json_to_string (root);

  g_assert_cmpstr (text, ==,
                   "{\n"
                   "  \"s\": \"a\\\"b\\\\c\\nd\\u0001\u00e9\",\n"
                   "  \"weight\": 12.0,\n"
                   "  \"half\": 0.5,\n"
                   "  \"ok\": false,\n"
                   "  \"reason\": null,\n"
                   "  \"list\": [\n"
                   "    -3,\n"
                   "    {}\n"
                   "  ]\n"
                   "}\n");
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  obj = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (obj, "s"), ==, "a\"b\\c\nd\x01\u00e9");
}

/* Every sample host in data/hosts with its configuration: pools by the
 * default keys and by PF, as text and JSON, and the traits. */
static void
test_sample_host (gconstpointer data)
{
  const char *xml = data;
  g_autofree char *base = g_path_get_basename (xml);
  g_autofree char *name = g_strndup (base, strlen (base) - strlen (".xml"));
  g_autofree char *stem = g_strndup (xml, strlen (xml) - strlen (".xml"));
  g_autofree char *conf = g_strconcat (stem, ".conf", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GArray) pools = NULL;
  g_autoptr (GArray) by_pf = NULL;
  g_auto (GStrv) traits = NULL;
  VpaHost *host;
  struct {
    GArray *pools;
    const char *suffix;
  } outputs[2];

  config = g_file_test (conf, G_FILE_TEST_EXISTS) ? vpa_config_load_file (conf, &error)
                                                  : vpa_config_new_default ();
  g_assert_no_error (error);
  host = vpa_snapshot_load (xml, &error);
  g_assert_no_error (error);
  inv = vpa_inventory_new (host, config, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (inv->n_devices, >, 0);

  pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT);
  by_pf = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_PF);
  outputs[0].pools = pools;
  outputs[0].suffix = "";
  outputs[1].pools = by_pf;
  outputs[1].suffix = "-pf";
  for (guint o = 0; o < G_N_ELEMENTS (outputs); o++)
    {
      g_autofree char *text = vpa_output_pools_text (inv, outputs[o].pools);
      g_autofree char *json = vpa_output_pools_json (inv, outputs[o].pools);
      g_autofree char *text_name = g_strdup_printf ("hosts/%s%s.txt", name, outputs[o].suffix);
      g_autofree char *json_name = g_strdup_printf ("hosts/%s%s.json", name, outputs[o].suffix);
      assert_golden (text_name, text);
      assert_golden (json_name, json);
    }
  traits = vpa_traits_compute (inv);
  {
    g_autofree char *text = vpa_output_traits_text (traits);
    g_autofree char *traits_name = g_strdup_printf ("hosts/%s.traits", name);
    assert_golden (traits_name, text);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pools/keys-parse", test_keys_parse);
  g_test_add_func ("/pools/default-keys", test_default_keys);
  g_test_add_func ("/pools/other-keys", test_other_keys);
  g_test_add_func ("/pools/order-independent", test_order_independent);
  g_test_add_func ("/pools/golden", test_golden);
  g_test_add_func ("/pools/output-empty", test_output_empty);
  g_test_add_func ("/pools/traits", test_traits);
  g_test_add_func ("/pools/json-printer", test_json_printer);
  g_test_add_func ("/pools/large-host", test_large_host);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/hosts", "*.xml", "/pools/host",
                              test_sample_host);
  return g_test_run ();
}
