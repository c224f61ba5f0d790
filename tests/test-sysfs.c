/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The sysfs source: data/sysfs-mini (a sysfs-shaped tree with relative
 * links, the same host as data/snapshot/mini.xml) and small trees built
 * in a temporary directory for the edge cases.
 */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "vpa-source.h"
#include "vpa-sysfs.h"
#include "vpa-test-util.h"

static VpaHost *
load_ok (const char *root)
{
  g_autoptr (GError) error = NULL;
  VpaHost *host = vpa_sysfs_load (root, &error);

  g_assert_no_error (error);
  g_assert_nonnull (host);
  g_assert_true (host->sealed);
  return host;
}

static void
test_mini (void)
{
  g_autoptr (VpaHost) host = load_ok (VPA_TEST_DATA "/sysfs-mini");
  const VpaDevice *pf, *pf1, *vf, *gpu, *nic;

  g_assert_cmpuint (host->devices->len, ==, 9);
  pf = vpa_test_device_at (host, "0000:81:00.0");
  g_assert_cmpint (pf->dev_type, ==, VPA_DEV_TYPE_PF);
  g_assert_cmpuint (pf->max_vfs, ==, 64);
  g_assert_cmpstr (pf->vendor_id, ==, "8086");
  g_assert_cmpstr (pf->product_id, ==, "1572");
  g_assert_cmphex (pf->class_code, ==, 0x020000);
  g_assert_cmpstr (pf->driver, ==, "i40e");
  g_assert_cmpstr (pf->netdev, ==, "ens1f0");
  g_assert_cmpint (pf->iommu_group, ==, 50);
  g_assert_cmpuint (pf->vf_indices->len, ==, 2);

  vf = vpa_test_device_at (host, "0000:81:02.0");
  g_assert_cmpint (vf->dev_type, ==, VPA_DEV_TYPE_VF);
  g_assert_cmphex (vf->parent_addr, ==, pf->addr);
  g_assert_true (vpa_host_device (host, (guint) vf->parent_index) == pf);
  g_assert_cmpstr (vf->netdev, ==, "ens1f0v0");
  g_assert_cmpstr (vf->driver, ==, "iavf");

  /* SR-IOV capable with no VFs enabled: still a PF, as libvirt says. */
  pf1 = vpa_test_device_at (host, "0000:81:00.1");
  g_assert_cmpint (pf1->dev_type, ==, VPA_DEV_TYPE_PF);
  g_assert_null (pf1->vf_indices);

  gpu = vpa_test_device_at (host, "0000:3b:00.0");
  g_assert_cmpint (gpu->dev_type, ==, VPA_DEV_TYPE_PCI);
  g_assert_cmpint (gpu->numa_node, ==, 0);
  nic = vpa_test_device_at (host, "0000:00:1f.6");
  g_assert_cmpint (nic->numa_node, ==, VPA_NUMA_NONE);
  g_assert_cmpstr (nic->netdev, ==, "eno1");
  g_assert_null (vpa_test_device_at (host, "0000:00:00.0")->driver);

  g_assert_cmpuint (host->cells->len, ==, 2);
  g_assert_cmpint (vpa_host_node_socket (host, 0), ==, 0);
  g_assert_cmpint (vpa_host_node_socket (host, 1), ==, 1);
  g_assert_cmpuint (vpa_host_cell (host, 0)->memory_kib, ==, 16777216);
  g_assert_cmpuint (vpa_host_cell (host, 1)->cpus->len, ==, 4);
  g_assert_cmpuint (g_array_index (vpa_host_cell (host, 1)->cpus, guint, 0), ==, 4);
  g_assert_cmpuint (host->claims->len, ==, 0);
}

/* sysfs and a snapshot of the same host give the same inventory. */
static void
assert_same_host (const char *sysfs_root, const char *snapshot)
{
  g_autoptr (VpaHost) a = load_ok (sysfs_root);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) b = vpa_snapshot_load (snapshot, &error);

  g_assert_no_error (error);
  vpa_test_assert_hosts_equal (a, b);
}

static void
test_same_as_snapshot (void)
{
  assert_same_host (VPA_TEST_DATA "/sysfs-mini", VPA_TEST_DATA "/snapshot/mini.xml");
}

/* data/hosts/NAME.sysfs beside NAME.xml: the sample hosts' two forms. */
static void
test_sample_host (gconstpointer data)
{
  const char *root = data;
  g_autofree char *stem = g_strndup (root, strlen (root) - strlen (".sysfs"));
  g_autofree char *snapshot = g_strconcat (stem, ".xml", NULL);

  assert_same_host (root, snapshot);
}

/* ------------------------------------------------------------------ */
/* Trees built on the fly                                              */
/* ------------------------------------------------------------------ */

static void
put (const char *root, const char *rel, const char *content)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_file_set_contents (path, content, -1, &error);
  g_assert_no_error (error);
}

static void
put_link (const char *root, const char *rel, const char *target)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_cmpint (symlink (target, path), ==, 0);
}

/* A plain PCI device as a directory under sys/devices, linked from
 * sys/bus/pci/devices. */
static void
put_device (const char *root, const char *addr, const char *vendor, const char *numa)
{
  const char *attrs[][2] = {
    { "vendor", vendor },
    { "device", "0x1234\n" },
    { "class", "0x020000\n" },
    { "numa_node", numa },
  };
  g_autofree char *link = g_strdup_printf ("sys/bus/pci/devices/%s", addr);
  g_autofree char *target = g_strdup_printf ("../../../devices/pci0000:00/%s", addr);

  for (guint i = 0; i < G_N_ELEMENTS (attrs); i++)
    {
      g_autofree char *f = g_strdup_printf ("sys/devices/pci0000:00/%s/%s", addr, attrs[i][0]);
      put (root, f, attrs[i][1]);
    }
  put_link (root, link, target);
}

static void
rm_rf (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            {
              rm_rf (child);
            }
          else
            {
              g_unlink (child);
            }
        }
    }
  g_rmdir (path);
}

/* A dangling link (a VF removed while we list), a device whose attributes
 * are gone, and a stray entry are skipped; without node directories the
 * host is one cell 0 holding every CPU, as libvirt reports it. */
static void
test_vanished_and_no_numa (void)
{
  g_autofree char *root = g_dir_make_tmp ("vpa-sysfs-XXXXXX", NULL);
  g_autoptr (VpaHost) host = NULL;
  const VpaCell *cell;

  put_device (root, "0000:00:02.0", "0x8086\n", "-1\n");
  put_device (root, "0000:00:03.0", "0x15b3\n", "0\n");
  put_link (root, "sys/bus/pci/devices/0000:00:04.0", "../../../devices/pci0000:00/0000:00:04.0");
  put (root, "sys/devices/pci0000:00/0000:00:05.0/numa_node", "0\n");
  put_link (root, "sys/bus/pci/devices/0000:00:05.0", "../../../devices/pci0000:00/0000:00:05.0");
  put (root, "sys/bus/pci/devices/README", "not a device\n");
  put (root, "sys/devices/system/cpu/present", "0-3\n");
  for (guint c = 0; c < 4; c++)
    {
      g_autofree char *f = g_strdup_printf ("sys/devices/system/cpu/cpu%u/topology/physical_package_id", c);
      put (root, f, "0\n");
    }
  put (root, "proc/meminfo", "MemTotal:       8038040 kB\nMemFree:         1000 kB\n");

  host = load_ok (root);
  g_assert_cmpuint (host->devices->len, ==, 2);
  g_assert_cmpint (vpa_test_device_at (host, "0000:00:02.0")->numa_node, ==, VPA_NUMA_NONE);
  g_assert_cmpstr (vpa_test_device_at (host, "0000:00:03.0")->vendor_id, ==, "15b3");
  g_assert_cmpint (vpa_host_lookup (host, VPA_ADDR (0, 0, 5, 0)), ==, -1);
  g_assert_cmpuint (host->cells->len, ==, 1);
  cell = vpa_host_cell (host, 0);
  g_assert_nonnull (cell);
  g_assert_cmpuint (cell->cpus->len, ==, 4);
  g_assert_cmpint (cell->socket, ==, 0);
  g_assert_cmpuint (cell->memory_kib, ==, 8038040);
  rm_rf (root);
}

/* Nova's socket rule on sysfs: an offline CPU (online = 0, no topology
 * directory) and a memory-only node leave their cells without a socket. */
static void
test_offline_cpu_and_memory_node (void)
{
  g_autofree char *root = g_dir_make_tmp ("vpa-sysfs-XXXXXX", NULL);
  g_autoptr (VpaHost) host = NULL;

  put (root, "sys/bus/pci/devices/.keep", "");
  put (root, "sys/devices/system/node/node0/cpulist", "0-1\n");
  put (root, "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 1024 kB\n");
  put (root, "sys/devices/system/node/node1/cpulist", "2,3\n");
  put (root, "sys/devices/system/node/node2/cpulist", "\n");
  put (root, "sys/devices/system/node/node2/meminfo", "Node 2 MemTotal: 4096 kB\n");
  put (root, "sys/devices/system/node/online", "0-2\n");
  put (root, "sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
  put (root, "sys/devices/system/cpu/cpu1/topology/physical_package_id", "0\n");
  put (root, "sys/devices/system/cpu/cpu1/online", "1\n");
  put (root, "sys/devices/system/cpu/cpu2/topology/physical_package_id", "1\n");
  put (root, "sys/devices/system/cpu/cpu3/online", "0\n");

  host = load_ok (root);
  g_assert_cmpuint (host->devices->len, ==, 0);
  g_assert_cmpuint (host->cells->len, ==, 3);
  g_assert_cmpint (vpa_host_node_socket (host, 0), ==, 0);
  g_assert_cmpint (vpa_host_node_socket (host, 1), ==, VPA_SOCKET_NONE);
  g_assert_cmpint (vpa_host_node_socket (host, 2), ==, VPA_SOCKET_NONE);
  g_assert_cmpuint (vpa_host_cell (host, 0)->memory_kib, ==, 1024);
  g_assert_cmpuint (vpa_host_cell (host, 1)->memory_kib, ==, 0);
  g_assert_cmpuint (vpa_host_cell (host, 1)->cpus->len, ==, 2);
  g_assert_cmpuint (vpa_host_cell (host, 2)->cpus->len, ==, 0);
  g_assert_cmpuint (vpa_host_cell (host, 2)->memory_kib, ==, 4096);
  g_assert_false (vpa_host_sockets_known (host));
  rm_rf (root);
}

static void
assert_load_fails (const char *root, gint code, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = vpa_sysfs_load (root, &error);

  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, code);
  g_assert_cmpstr (error->message, ==, message);
}

/* With the kernel's lists (cpu/online, each CPU's package_cpus_list or,
 * before Linux 5.5, core_siblings_list) a node's socket is read from its
 * first CPU alone: the same sockets as from every CPU, an offline CPU
 * still leaves its node without one, and so does a node across two
 * packages. Node 0's second CPU has no topology files at all: only the
 * first is read. */
static void
test_socket_from_first_cpu (void)
{
  g_autofree char *root = g_dir_make_tmp ("vpa-sysfs-XXXXXX", NULL);
  g_autoptr (VpaHost) host = NULL;

  put (root, "sys/bus/pci/devices/.keep", "");
  put (root, "sys/devices/system/node/node0/cpulist", "0-1\n");
  put (root, "sys/devices/system/node/node1/cpulist", "2-3\n");
  put (root, "sys/devices/system/node/node2/cpulist", "4-5\n");
  put (root, "sys/devices/system/node/node3/cpulist", "6-7\n");
  put (root, "sys/devices/system/cpu/online", "0-5,7\n");
  put (root, "sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
  put (root, "sys/devices/system/cpu/cpu0/topology/package_cpus_list", "0-1\n");
  put (root, "sys/devices/system/cpu/cpu2/topology/physical_package_id", "1\n");
  put (root, "sys/devices/system/cpu/cpu2/topology/core_siblings_list", "2-3\n");
  /* Node 2 spans packages 1 and 2. */
  put (root, "sys/devices/system/cpu/cpu4/topology/physical_package_id", "1\n");
  put (root, "sys/devices/system/cpu/cpu4/topology/package_cpus_list", "2-4\n");
  put (root, "sys/devices/system/cpu/cpu5/topology/physical_package_id", "2\n");
  put (root, "sys/devices/system/cpu/cpu5/topology/package_cpus_list", "5\n");
  /* Node 3: CPU 6 is offline. */
  put (root, "sys/devices/system/cpu/cpu7/topology/physical_package_id", "3\n");
  put (root, "sys/devices/system/cpu/cpu7/topology/package_cpus_list", "7\n");

  host = load_ok (root);
  g_assert_cmpint (vpa_host_node_socket (host, 0), ==, 0);
  g_assert_cmpint (vpa_host_node_socket (host, 1), ==, 1);
  g_assert_cmpint (vpa_host_node_socket (host, 2), ==, VPA_SOCKET_NONE);
  g_assert_cmpint (vpa_host_node_socket (host, 3), ==, VPA_SOCKET_NONE);
  rm_rf (root);
}

static void
test_errors (void)
{
  g_autofree char *root = g_dir_make_tmp ("vpa-sysfs-XXXXXX", NULL);
  g_autofree char *msg = NULL;

  assert_load_fails ("/nonexistent-root", VPA_ERROR_INVALID,
                     "/nonexistent-root: cannot read sysfs root: No such file or directory");

  msg = g_strdup_printf ("%s/sys/bus/pci/devices: cannot read PCI devices: %s", root,
                         g_strerror (ENOENT));
  assert_load_fails (root, VPA_ERROR_ENVIRONMENT, msg);

  put_device (root, "0000:00:02.0", "0xabcde\n", "0\n");
  g_free (msg);
  msg = g_strdup_printf ("%s/sys/bus/pci/devices/0000:00:02.0/vendor: '0xabcde' is not a hex "
                         "PCI id",
                         root);
  assert_load_fails (root, VPA_ERROR_INVALID, msg);
  put (root, "sys/devices/pci0000:00/0000:00:02.0/vendor", "0x8086\n");

  put (root, "sys/devices/system/node/node0/cpulist", "0-x\n");
  g_free (msg);
  msg = g_strdup_printf ("%s/sys/devices/system/node/node0/cpulist: '0-x' is not a CPU list",
                         root);
  assert_load_fails (root, VPA_ERROR_INVALID, msg);
  rm_rf (root);
}

/* An attribute that is not a regular file is never read (a FIFO blocked
 * the read for ever, /dev/zero read without end): the load is refused,
 * naming the file, wherever the attribute is, even one whose absence
 * the reader would otherwise shrug off. */
static void
assert_refused (const char *root, const char *rel, const char *kind, gboolean devices)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autofree char *msg = g_strdup_printf ("%s/%s: cannot read: %s, not a regular file (sysfs "
                                          "attributes are regular files)",
                                          root, rel, kind);
  VpaAddr addr = VPA_ADDR (0, 0, 2, 0);

  host = devices ? vpa_sysfs_load_devices (root, &addr, 1, &error) : vpa_sysfs_load (root, &error);
  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_cmpstr (error->message, ==, msg);
}

static void
test_special_files (void)
{
  static const char *const attrs[] = {
    "sys/devices/pci0000:00/0000:00:02.0/vendor",
    "sys/devices/pci0000:00/0000:00:02.0/current_link_speed",
    "sys/devices/system/node/node0/cpulist",
    "sys/devices/system/node/node0/meminfo",
    "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
    "sys/devices/system/cpu/cpu0/topology/core_id",
  };
  g_autofree char *tmp = g_dir_make_tmp ("vpa-sysfs-XXXXXX", NULL);
  g_autofree char *root = g_canonicalize_filename (tmp, NULL);

  put_device (root, "0000:00:02.0", "0x8086\n", "0\n");
  put (root, "sys/devices/pci0000:00/0000:00:02.0/current_link_speed", "8.0 GT/s PCIe\n");
  put (root, "sys/devices/system/node/node0/cpulist", "0\n");
  put (root, "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 1024 kB\n");
  put (root, "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "0\n");
  put (root, "sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
  put (root, "sys/devices/system/cpu/cpu0/topology/core_id", "0\n");
  for (guint i = 0; i < G_N_ELEMENTS (attrs); i++)
    {
      g_autofree char *path = g_build_filename (root, attrs[i], NULL);
      g_autofree char *saved = NULL;

      g_assert_true (g_file_get_contents (path, &saved, NULL, NULL));
      g_assert_cmpint (g_unlink (path), ==, 0);
      g_assert_cmpint (mkfifo (path, 0644), ==, 0);
      assert_refused (root, attrs[i], "a FIFO", FALSE);
      if (i == 0)
        assert_refused (root, attrs[i], "a FIFO", TRUE);
      g_assert_cmpint (g_unlink (path), ==, 0);
      /* followed: sysfs attributes are no links, a tree may hold some */
      g_assert_cmpint (symlink ("/dev/zero", path), ==, 0);
      assert_refused (root, attrs[i], "a device node", FALSE);
      g_assert_cmpint (g_unlink (path), ==, 0);
      put (root, attrs[i], saved);
    }
  vpa_host_free (load_ok (root));
  rm_rf (root);
}

/* The hook reads only the devices it needs: a VF brings its PF and the
 * root port above them, so the partial host seals with its PCIe tree. */
static void
test_load_devices_bridges (void)
{
  g_autoptr (GError) error = NULL;
  VpaAddr vf;
  g_autoptr (VpaHost) host = NULL;
  gint rp;

  g_assert_true (vpa_addr_parse ("0000:17:01.0", &vf));
  host = vpa_sysfs_load_devices (VPA_TEST_DATA "/hosts/pinned.sysfs", &vf, 1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (host);
  g_assert_cmpuint (host->devices->len, ==, 3);
  g_assert_cmpint (vpa_host_lookup (host, VPA_ADDR (0, 0x17, 0, 0)), >=, 0);
  rp = vpa_host_lookup (host, VPA_ADDR (0, 0x16, 1, 0));
  g_assert_cmpint (rp, >=, 0);
  g_assert_cmpint (vpa_host_device (host, (guint) vpa_host_lookup (host, vf))->pcie_parent_index,
                   ==, rp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sysfs/mini", test_mini);
  g_test_add_func ("/sysfs/same-as-snapshot", test_same_as_snapshot);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/hosts", "*.sysfs", "/sysfs/sample-host",
                              test_sample_host);
  g_test_add_func ("/sysfs/vanished-and-no-numa", test_vanished_and_no_numa);
  g_test_add_func ("/sysfs/offline-cpu-and-memory-node", test_offline_cpu_and_memory_node);
  g_test_add_func ("/sysfs/socket-from-first-cpu", test_socket_from_first_cpu);
  g_test_add_func ("/sysfs/errors", test_errors);
  g_test_add_func ("/sysfs/special-files", test_special_files);
  g_test_add_func ("/sysfs/load-devices-bridges", test_load_devices_bridges);
  return g_test_run ();
}
