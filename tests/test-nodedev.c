/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The nodedev and capabilities parsers, one test case per fixture:
 * data/nodedev/{devices,capabilities}/NAME.xml with NAME.expected (what
 * was parsed) or NAME.err (the error message). VPA_TEST_REGENERATE=1
 * rewrites them; review the diff.
 */
#include <glib/gstdio.h>
#include <string.h>
#include "vpa-capabilities.h"
#include "vpa-nodedev.h"
#include "vpa-xml.h"
#include "vpa-test-util.h"

static const char *
num_or_none (gint v, char buf[16])
{
  if (v < 0)
    return "none";
  g_snprintf (buf, 16, "%d", v);
  return buf;
}

static void
dump_pci (GString *s, const VpaDevice *dev)
{
  char a[VPA_ADDR_BUFLEN], p[VPA_ADDR_BUFLEN], n1[16], n2[16];

  g_string_append_printf (s,
                          "address: %s\nvendor_id: %s\nproduct_id: %s\nclass: 0x%06x\n"
                          "dev_type: %s\nnuma_node: %s\nparent_addr: %s\nmax_vfs: %u\n"
                          "iommu_group: %s\ndriver: %s\nnetdev: %s\n",
                          vpa_addr_format (dev->addr, a), dev->vendor_id, dev->product_id,
                          dev->class_code, vpa_dev_type_to_string (dev->dev_type),
                          num_or_none (dev->numa_node, n1),
                          dev->parent_addr == VPA_ADDR_NONE
                            ? "none"
                            : vpa_addr_format (dev->parent_addr, p),
                          dev->max_vfs, num_or_none (dev->iommu_group, n2),
                          dev->driver ? dev->driver : "none",
                          dev->netdev ? dev->netdev : "none");
}

static char *
dump_nodedev (const VpaNodedev *nd)
{
  static const char *const kinds[] = { "other", "pci", "net" };
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "kind: %s\nname: %s\nparent: %s\n", kinds[nd->kind], nd->name,
                          nd->parent ? nd->parent : "none");
  if (nd->kind == VPA_NODEDEV_PCI)
    {
      dump_pci (s, nd->pci);
    }
  else if (nd->kind == VPA_NODEDEV_NET)
    {
      g_string_append_printf (s, "interface: %s\n", nd->interface);
    }
  return g_string_free (s, FALSE);
}

static char *
dump_cells (const VpaHost *host)
{
  GString *s = g_string_new (NULL);
  char n[16];

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      g_string_append_printf (s, "cell %d: socket %s, memory %" G_GUINT64_FORMAT " KiB, cpus",
                              c->id, num_or_none (c->socket, n), c->memory_kib);
      for (guint j = 0; j < c->cpus->len; j++)
        g_string_append_printf (s, "%s%u", j ? "," : " ", g_array_index (c->cpus, guint, j));
      g_string_append_c (s, '\n');
    }
  if (host->cells->len == 0)
    g_string_append (s, "no cells\n");
  return g_string_free (s, FALSE);
}

/* Compares actual with the golden file stem.expected (ok) or stem.err
 * (failed), or rewrites it when VPA_TEST_REGENERATE=1. */
static void
golden_check (const char *stem, gboolean ok, const char *actual)
{
  g_autofree char *exp_path = g_strconcat (stem, ".expected", NULL);
  g_autofree char *err_path = g_strconcat (stem, ".err", NULL);
  const char *want_path = ok ? exp_path : err_path;
  const char *other_path = ok ? err_path : exp_path;

  if (g_strcmp0 (g_getenv ("VPA_TEST_REGENERATE"), "1") == 0)
    (void) g_remove (other_path);
  vpa_test_assert_golden (want_path, actual);
}

static xmlDoc *
load_fixture (const char *path, char **base)
{
  gsize len;
  g_autofree char *buf = vpa_test_read_fixture (path, &len);
  g_autoptr (GError) error = NULL;
  xmlDoc *doc;

  *base = g_path_get_basename (path);
  doc = vpa_xml_parse_memory (&(VpaDoc){ buf, len, *base }, &error);
  g_assert_no_error (error);
  return doc;
}

static void
test_device_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = NULL;
  g_autoptr (xmlDoc) doc = load_fixture (path, &base);
  g_autofree char *stem = g_strndup (path, strlen (path) - strlen (".xml"));
  g_autoptr (GError) error = NULL;
  g_autofree char *actual = NULL;
  VpaNodedev nd;
  gboolean ok;

  ok = vpa_nodedev_parse (xmlDocGetRootElement (doc), base, &nd, &error);
  g_assert_true (ok == (error == NULL));
  if (ok)
    {
      actual = dump_nodedev (&nd);
      vpa_nodedev_clear (&nd);
    }
  else
    {
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_true (g_str_has_prefix (error->message, base));
      actual = g_strconcat (error->message, "\n", NULL);
    }
  golden_check (stem, ok, actual);
}

static void
test_capabilities_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = NULL;
  g_autoptr (xmlDoc) doc = load_fixture (path, &base);
  g_autofree char *stem = g_strndup (path, strlen (path) - strlen (".xml"));
  g_autoptr (VpaHost) host = vpa_host_new (base);
  g_autoptr (GError) error = NULL;
  g_autofree char *actual = NULL;
  gboolean ok;

  ok = vpa_capabilities_parse (xmlDocGetRootElement (doc), base, host, &error);
  g_assert_true (ok == (error == NULL));
  if (ok)
    {
      g_assert_true (vpa_host_seal (host, &error));
      actual = dump_cells (host);
    }
  else
    {
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      /* Nothing half-parsed is left behind. */
      g_assert_cmpuint (host->cells->len, ==, 0);
      actual = g_strconcat (error->message, "\n", NULL);
    }
  golden_check (stem, ok, actual);
}

/* The rules the fixtures exist for, spelled out so a wrong golden file
 * cannot hide them. */
static VpaDevice *
parse_device_file (const char *name, VpaNodedev *nd)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "nodedev", "devices", name, NULL);
  g_autofree char *base = NULL;
  g_autoptr (xmlDoc) doc = load_fixture (path, &base);
  g_autoptr (GError) error = NULL;

  g_assert_true (vpa_nodedev_parse (xmlDocGetRootElement (doc), base, nd, &error));
  g_assert_no_error (error);
  return nd->pci;
}

static void
test_device_type_rules (void)
{
  struct {
    const char *file;
    VpaDevType type;
    guint max_vfs;
    const char *parent;
  } cases[] = {
    { "pf-zero-vfs.xml", VPA_DEV_TYPE_PF, 64, NULL },
    { "pf-i40e.xml", VPA_DEV_TYPE_PF, 64, NULL },
    { "vf-iavf.xml", VPA_DEV_TYPE_VF, 0, "0000:81:00.0" },
    { "vf-before-pf.xml", VPA_DEV_TYPE_VF, 0, "0000:82:00.0" },
    { "pf-before-vf.xml", VPA_DEV_TYPE_PF, 4, NULL },
    { "phys-function-no-address.xml", VPA_DEV_TYPE_PCI, 0, NULL },
    { "gpu.xml", VPA_DEV_TYPE_PCI, 0, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      VpaNodedev nd;
      VpaDevice *dev = parse_device_file (cases[i].file, &nd);
      char buf[VPA_ADDR_BUFLEN];

      g_assert_cmpint (nd.kind, ==, VPA_NODEDEV_PCI);
      g_assert_cmpstr (vpa_dev_type_to_string (dev->dev_type), ==,
                       vpa_dev_type_to_string (cases[i].type));
      g_assert_cmpuint (dev->max_vfs, ==, cases[i].max_vfs);
      if (cases[i].parent == NULL)
        {
          g_assert_cmpuint (dev->parent_addr, ==, VPA_ADDR_NONE);
        }
      else
        {
          g_assert_cmpstr (vpa_addr_format (dev->parent_addr, buf), ==, cases[i].parent);
        }
      vpa_nodedev_clear (&nd);
    }
}

static void
test_device_fields (void)
{
  VpaNodedev nd;
  VpaDevice *dev = parse_device_file ("vgpu-mdev-types.xml", &nd);

  /* Decimal <domain> 65536 is PCI domain 0x10000; uppercase hex ids are
   * normalised; <numa node='-1'> means none. */
  g_assert_cmpuint (dev->addr, ==, VPA_ADDR (0x10000, 0xe1, 0, 0));
  g_assert_cmpstr (dev->vendor_id, ==, "10de");
  g_assert_cmpstr (dev->product_id, ==, "20b5");
  g_assert_cmpint (dev->numa_node, ==, VPA_NUMA_NONE);
  g_assert_cmpuint (dev->class_code, ==, 0x030000);
  g_assert_cmpstr (dev->driver, ==, "nvidia");
  vpa_nodedev_clear (&nd);
  g_assert_null (nd.name);

  dev = parse_device_file ("bridge-no-numa.xml", &nd);
  g_assert_cmpint (dev->numa_node, ==, VPA_NUMA_NONE);
  g_assert_null (dev->driver);
  g_assert_cmpint (dev->iommu_group, ==, 0);
  vpa_nodedev_clear (&nd);

  parse_device_file ("net.xml", &nd);
  g_assert_cmpint (nd.kind, ==, VPA_NODEDEV_NET);
  g_assert_cmpstr (nd.interface, ==, "ens1f0");
  g_assert_cmpstr (nd.parent, ==, "pci_0000_81_00_0");
  g_assert_null (nd.pci);
  vpa_nodedev_clear (&nd);

  parse_device_file ("usb.xml", &nd);
  g_assert_cmpint (nd.kind, ==, VPA_NODEDEV_OTHER);
  g_assert_null (nd.pci);
  vpa_nodedev_clear (&nd);
}

static void
test_capabilities_rules (void)
{
  struct {
    const char *file;
    gint sockets[4];
    guint n;
    gboolean known;
  } cases[] = {
    { "two-sockets.xml", { 0, 1 }, 2, TRUE },
    { "sub-numa-clusters.xml", { 0, 0, 1, 1 }, 4, TRUE },
    { "mixed-sockets.xml", { VPA_SOCKET_NONE }, 1, FALSE },
    { "offline-cpu.xml", { VPA_SOCKET_NONE, 1 }, 2, FALSE },
    { "memory-only-node.xml", { 0, VPA_SOCKET_NONE }, 2, FALSE },
    { "no-topology.xml", { 0 }, 0, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path =
        g_build_filename (VPA_TEST_DATA, "nodedev", "capabilities", cases[i].file, NULL);
      g_autofree char *base = NULL;
      g_autoptr (xmlDoc) doc = load_fixture (path, &base);
      g_autoptr (VpaHost) host = vpa_host_new (base);
      g_autoptr (GError) error = NULL;

      g_assert_true (vpa_capabilities_parse (xmlDocGetRootElement (doc), base, host, &error));
      g_assert_no_error (error);
      g_assert_true (vpa_host_seal (host, &error));
      g_assert_cmpuint (host->cells->len, ==, cases[i].n);
      for (guint j = 0; j < cases[i].n; j++)
        {
          const VpaCell *c = &g_array_index (host->cells, VpaCell, j);
          g_assert_cmpint (c->id, ==, (gint) j);
          g_assert_cmpint (c->socket, ==, cases[i].sockets[j]);
        }
      g_assert_cmpint (vpa_host_sockets_known (host), ==, cases[i].known);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/nodedev/devices", "*.xml", "/nodedev/devices",
                              test_device_fixture);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/nodedev/capabilities", "*.xml",
                              "/nodedev/capabilities", test_capabilities_fixture);
  g_test_add_func ("/nodedev/rules/device-type", test_device_type_rules);
  g_test_add_func ("/nodedev/rules/fields", test_device_fields);
  g_test_add_func ("/nodedev/rules/capabilities-sockets", test_capabilities_rules);
  return g_test_run ();
}
