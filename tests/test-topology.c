/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The topology view on the gpu-server sample: the distance matrix
 * against one checked by hand from the host's description (which switch,
 * host bridge and socket each card sits below), the committed text and
 * JSON outputs, selectors, and refused selectors.
 */
#include <string.h>

#include "vpa-output.h"
#include "vpa-output-topology.h"
#include "vpa-pools.h"
#include "vpa-source.h"
#include "vpa-test-util.h"

static VpaInventory *
sample_host (const char *name, VpaConfig **config)
{
  g_autofree char *snap_name = g_strconcat (name, ".xml", NULL);
  g_autofree char *conf_name = g_strconcat (name, ".conf", NULL);
  g_autofree char *snap = g_build_filename (VPA_TEST_DATA, "hosts", snap_name, NULL);
  g_autofree char *conf = g_build_filename (VPA_TEST_DATA, "hosts", conf_name, NULL);
  g_autoptr (GError) error = NULL;
  VpaHost *host;
  VpaInventory *inv;

  *config = vpa_config_load_file (conf, &error);
  g_assert_no_error (error);
  host = vpa_source_load (snap, &error);
  g_assert_no_error (error);
  inv = vpa_inventory_new (host, *config, NULL, &error);
  g_assert_no_error (error);
  return inv;
}

static VpaInventory *
sample (VpaConfig **config)
{
  return sample_host ("gpu-server", config);
}

/* The eight GPUs and one NIC per place that matters: cx7-0 (sw0, next
 * to gpu0/gpu1), cx7-fe0 port 0 (root port 15:05.0, host bridge of sw0),
 * cx7-2 (sw1), cx7-3 (sw2). Rows in address order. */
static const char *const hand_checked[] = {
  /*            GPU0 NIC0 GPU1 NIC1 GPU2 NIC2 GPU3 GPU4 NIC3 GPU5 GPU6 GPU7 */
  /* GPU0 18 */ "X    PIX  PIX  PHB  NODE NODE NODE SYS  SYS  SYS  SYS  SYS",
  /* NIC0 19 */ "PIX  X    PIX  PHB  NODE NODE NODE SYS  SYS  SYS  SYS  SYS",
  /* GPU1 1a */ "PIX  PIX  X    PHB  NODE NODE NODE SYS  SYS  SYS  SYS  SYS",
  /* NIC1 20 */ "PHB  PHB  PHB  X    NODE NODE NODE SYS  SYS  SYS  SYS  SYS",
  /* GPU2 3a */ "NODE NODE NODE NODE X    PIX  PIX  SYS  SYS  SYS  SYS  SYS",
  /* NIC2 3b */ "NODE NODE NODE NODE PIX  X    PIX  SYS  SYS  SYS  SYS  SYS",
  /* GPU3 3c */ "NODE NODE NODE NODE PIX  PIX  X    SYS  SYS  SYS  SYS  SYS",
  /* GPU4 9a */ "SYS  SYS  SYS  SYS  SYS  SYS  SYS  X    PIX  PIX  NODE NODE",
  /* NIC3 9b */ "SYS  SYS  SYS  SYS  SYS  SYS  SYS  PIX  X    PIX  NODE NODE",
  /* GPU5 9c */ "SYS  SYS  SYS  SYS  SYS  SYS  SYS  PIX  PIX  X    NODE NODE",
  /* GPU6 ba */ "SYS  SYS  SYS  SYS  SYS  SYS  SYS  NODE NODE NODE X    PIX",
  /* GPU7 bc */ "SYS  SYS  SYS  SYS  SYS  SYS  SYS  NODE NODE NODE PIX  X",
};

static void
test_hand_checked (void)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample (&config);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaTopology) topo =
    vpa_topology_new (inv, "GPU,0000:19:00.0,0000:20:00.0,0000:3b:00.0,0000:9b:00.0", &error);
  static const char *const labels[] = { "GPU0", "NIC0", "GPU1", "NIC1", "GPU2", "NIC2",
                                        "GPU3", "GPU4", "NIC3", "GPU5", "GPU6", "GPU7" };

  g_assert_no_error (error);
  g_assert_cmpuint (topo->devices->len, ==, G_N_ELEMENTS (hand_checked));
  for (guint r = 0; r < topo->devices->len; r++)
    {
      g_auto (GStrv) want = g_strsplit_set (hand_checked[r], " ", -1);
      guint c = 0;

      g_assert_cmpstr (topo->labels->pdata[r], ==, labels[r]);
      for (guint k = 0; want[k] != NULL; k++)
        {
          if (*want[k] == '\0')
            continue;
          g_assert_cmpstr (r == c ? "X" : vpa_pcie_distance_to_string (vpa_topology_at (topo, r, c)),
                           ==, want[k]);
          c++;
        }
      g_assert_cmpuint (c, ==, topo->devices->len);
    }
}

/* Every device but VFs, as the command prints it, text and JSON. */
static void
test_golden (void)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample (&config);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaTopology) all = vpa_topology_new (inv, NULL, &error);
  g_autoptr (VpaTopology) rdma = NULL;
  g_autofree char *text = NULL, *json = NULL;
  g_autofree char *text_path = g_build_filename (VPA_TEST_DATA, "topology", "gpu-server.txt", NULL);
  g_autofree char *json_path =
    g_build_filename (VPA_TEST_DATA, "topology", "gpu-server-rdma.json", NULL);

  g_assert_no_error (error);
  g_assert_cmpuint (all->devices->len, ==, 18); /* 8 GPUs, 10 PFs */
  text = vpa_output_topology_text (inv, all);
  vpa_test_assert_golden (text_path, text);
  /* A physical network selects its PFs; GPU the alias's devices. */
  rdma = vpa_topology_new (inv, "rdma,GPU", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rdma->devices->len, ==, 14);
  json = vpa_output_topology_json (inv, rdma);
  vpa_test_assert_golden (json_path, json);
}

/* pools --group-by pcie-root,pcie-switch */
static void
test_pools_by_tree (void)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample (&config);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) pools = NULL;
  g_autofree char *text = NULL;
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "topology", "gpu-server-pools.txt", NULL);
  VpaPoolKeys keys;

  g_assert_true (vpa_pools_keys_parse ("vendor,product,dev_type,pcie-root,pcie-switch", &keys,
                                       &error));
  g_assert_no_error (error);
  pools = vpa_pools_generate (inv, keys);
  text = vpa_output_pools_text (inv, pools);
  vpa_test_assert_golden (path, text);
}

static void
test_bad_selector (void)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample (&config);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaTopology) topo = vpa_topology_new (inv, "GPU,physnet9", &error);

  g_assert_null (topo);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "--devices 'GPU,physnet9': 'physnet9' selects no device of the inventory "
                   "(expected an alias, a physical network or an address glob)");
}

/* Every sample host with its own configuration, text and JSON: a NIC row
 * for every PF whose VFs the configuration admits. */
static void
test_sample_host (gconstpointer data)
{
  const char *name = data;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample_host (name, &config);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaTopology) topo = vpa_topology_new (inv, NULL, &error);
  g_autofree char *text_name = g_strconcat (name, "-host.txt", NULL);
  g_autofree char *json_name = g_strconcat (name, "-host.json", NULL);
  g_autofree char *text_path = g_build_filename (VPA_TEST_DATA, "topology", text_name, NULL);
  g_autofree char *json_path = g_build_filename (VPA_TEST_DATA, "topology", json_name, NULL);
  g_autofree char *text = NULL, *json = NULL;

  g_assert_no_error (error);
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaDevice *dev = vpa_host_device (inv->host, i);
      guint free_vfs, total;
      gboolean row = FALSE;

      for (guint r = 0; r < topo->devices->len; r++)
        row = row || g_array_index (topo->devices, guint, r) == i;
      if (vpa_topology_vfs (inv, i, &free_vfs, &total))
        {
          g_assert_true (row);
        }
      else
        {
          g_assert_true (row == (vpa_inventory_has (inv, i) && dev->dev_type != VPA_DEV_TYPE_VF));
        }
    }
  text = vpa_output_topology_text (inv, topo);
  vpa_test_assert_golden (text_path, text);
  json = vpa_output_topology_json (inv, topo);
  vpa_test_assert_golden (json_path, json);
}

/* snc-4 admits the E810 VFs and not their PFs: the PFs are the NIC rows,
 * with their free VFs, and a physical network selects them. */
static void
test_vf_parents (void)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = sample_host ("snc-4", &config);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaTopology) all = vpa_topology_new (inv, NULL, &error);
  g_autoptr (VpaTopology) net = NULL;
  guint nics = 0;

  g_assert_no_error (error);
  for (guint r = 0; r < all->devices->len; r++)
    {
      guint i = g_array_index (all->devices, guint, r);
      const VpaDevice *dev = vpa_host_device (inv->host, i);
      guint free_vfs, total;

      if (dev->dev_type != VPA_DEV_TYPE_PF)
        continue;
      g_assert_false (vpa_inventory_has (inv, i));
      g_assert_true (vpa_topology_vfs (inv, i, &free_vfs, &total));
      g_assert_cmpuint (free_vfs, <=, total);
      g_assert_true (g_str_has_prefix (all->labels->pdata[r], "NIC"));
      g_assert_nonnull (dev->netdev);
      nics++;
    }
  g_assert_cmpuint (nics, >, 0);
  net = vpa_topology_new (inv, "physnet1", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (net->devices->len, >, 0);
  for (guint r = 0; r < net->devices->len; r++)
    {
      g_assert_cmpint (vpa_host_device (inv->host, g_array_index (net->devices, guint, r))->dev_type,
                       ==, VPA_DEV_TYPE_PF);
    }
}

int
main (int argc, char **argv)
{
  /* gpu-server's is /topology/golden */
  static const char *const hosts[] = { "dual-socket", "no-numa", "pinned", "snc-4", "socketless" };

  g_test_init (&argc, &argv, NULL);
  for (guint h = 0; h < G_N_ELEMENTS (hosts); h++)
    {
      g_autofree char *path = g_strconcat ("/topology/host/", hosts[h], NULL);
      g_test_add_data_func (path, hosts[h], test_sample_host);
    }
  g_test_add_func ("/topology/vf-parents", test_vf_parents);
  g_test_add_func ("/topology/hand-checked", test_hand_checked);
  g_test_add_func ("/topology/golden", test_golden);
  g_test_add_func ("/topology/bad-selector", test_bad_selector);
  g_test_add_func ("/topology/pools-by-tree", test_pools_by_tree);
  return g_test_run ();
}
