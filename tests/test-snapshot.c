/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host snapshots: the streaming reader on data/snapshot/mini.xml, the
 * writer (round trip), refused snapshots (data/snapshot/bad-*.xml with
 * the expected message in bad-*.err, VPA_TEST_REGENERATE=1 rewrites
 * them) and the source registry.
 */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include "vpa-source.h"
#include "vpa-test-util.h"

static char *
data_path (const char *name)
{
  return g_build_filename (VPA_TEST_DATA, "snapshot", name, NULL);
}

/* The same host: devices, cells and claims. */
static void
assert_hosts_equal (const VpaHost *a, const VpaHost *b)
{
  vpa_test_assert_hosts_equal (a, b);
  g_assert_cmpuint (a->claims->len, ==, b->claims->len);
  for (guint i = 0; i < a->claims->len; i++)
    {
      const VpaClaim *x = g_ptr_array_index (a->claims, i);
      const VpaClaim *y = g_ptr_array_index (b->claims, i);
      g_assert_cmpstr (x->domain, ==, y->domain);
      g_assert_cmphex (x->addr, ==, y->addr);
      g_assert_cmpint (x->running, ==, y->running);
    }
}

static VpaHost *
load_mini (void)
{
  g_autofree char *path = data_path ("mini.xml");
  g_autoptr (GError) error = NULL;
  VpaHost *host = vpa_snapshot_load (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (host);
  return host;
}

static void
test_mini (void)
{
  g_autoptr (VpaHost) host = load_mini ();
  const VpaDevice *pf, *pf1, *vf0, *vf1, *gpu, *nic;
  const VpaClaim *claim;

  g_assert_true (host->sealed);
  g_assert_cmpuint (host->devices->len, ==, 9);

  pf = vpa_test_device_at (host, "0000:81:00.0");
  g_assert_cmpint (pf->dev_type, ==, VPA_DEV_TYPE_PF);
  g_assert_cmpuint (pf->max_vfs, ==, 64);
  g_assert_cmpstr (pf->netdev, ==, "ens1f0"); /* its net device comes before it */
  g_assert_cmpstr (pf->driver, ==, "i40e");
  g_assert_cmpint (pf->numa_node, ==, 1);
  g_assert_nonnull (pf->vf_indices);
  g_assert_cmpuint (pf->vf_indices->len, ==, 2);

  vf0 = vpa_test_device_at (host, "0000:81:02.0");
  vf1 = vpa_test_device_at (host, "0000:81:02.1");
  g_assert_true (vpa_host_device (host, g_array_index (pf->vf_indices, guint, 0)) == vf0);
  g_assert_true (vpa_host_device (host, g_array_index (pf->vf_indices, guint, 1)) == vf1);
  g_assert_cmpint (vf0->dev_type, ==, VPA_DEV_TYPE_VF);
  g_assert_true (vpa_host_device (host, (guint) vf0->parent_index) == pf);
  g_assert_cmpstr (vf0->netdev, ==, "ens1f0v0");
  g_assert_null (vf1->netdev);
  g_assert_cmpint (vf1->iommu_group, ==, 61);

  pf1 = vpa_test_device_at (host, "0000:81:00.1");
  g_assert_cmpint (pf1->dev_type, ==, VPA_DEV_TYPE_PF);
  g_assert_null (pf1->vf_indices);
  g_assert_cmpstr (pf1->netdev, ==, "ens1f1");

  gpu = vpa_test_device_at (host, "0000:3b:00.0");
  g_assert_cmpint (gpu->dev_type, ==, VPA_DEV_TYPE_PCI);
  g_assert_cmpstr (gpu->vendor_id, ==, "10de");
  g_assert_cmphex (gpu->class_code, ==, 0x030200);
  g_assert_cmpint (gpu->numa_node, ==, 0);

  nic = vpa_test_device_at (host, "0000:00:1f.6");
  g_assert_cmpint (nic->numa_node, ==, VPA_NUMA_NONE);
  g_assert_cmpstr (nic->netdev, ==, "eno1");

  g_assert_cmpuint (host->cells->len, ==, 2);
  g_assert_cmpint (vpa_host_node_socket (host, 0), ==, 0);
  g_assert_cmpint (vpa_host_node_socket (host, 1), ==, 1);
  g_assert_cmpuint (vpa_host_cell (host, 1)->cpus->len, ==, 4);
  g_assert_cmpuint (vpa_host_cell (host, 1)->memory_kib, ==, 16777216);

  /* vm-a: the <interface type='hostdev'> (not the network one, not the
   * USB hostdev), running; vm-b: shut off by <test:runstate>. */
  g_assert_cmpuint (host->claims->len, ==, 2);
  claim = g_ptr_array_index (host->claims, 0);
  g_assert_cmpstr (claim->domain, ==, "vm-a");
  g_assert_cmphex (claim->addr, ==, VPA_ADDR (0, 0x81, 2, 1));
  g_assert_true (claim->running);
  claim = g_ptr_array_index (host->claims, 1);
  g_assert_cmpstr (claim->domain, ==, "vm-b");
  g_assert_cmphex (claim->addr, ==, VPA_ADDR (0, 0x3b, 0, 0));
  g_assert_false (claim->running);
}

static void
test_memory (void)
{
  g_autofree char *path = data_path ("mini.xml");
  gsize len;
  g_autofree char *buf = vpa_test_read_fixture (path, &len);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) a = load_mini ();
  g_autoptr (VpaHost) b = NULL;

  b = vpa_snapshot_load_memory (&(VpaDoc){ buf, len, "mini" }, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (b->source, ==, "mini");
  assert_hosts_equal (a, b);
}

static char *
write_to_string (const VpaHost *host, gsize *len)
{
  g_autoptr (GError) error = NULL;
  char *buf = NULL;
  FILE *out = open_memstream (&buf, len);

  g_assert_nonnull (out);
  g_assert_true (vpa_snapshot_write (host, out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (fclose (out), ==, 0);
  return buf;
}

/* load → write → load gives the same host; writing again, the same text. */
static void
test_round_trip (gconstpointer data)
{
  const char *path = data;
  g_autoptr (VpaHost) a = NULL;
  g_autoptr (VpaHost) b = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text1 = NULL;
  g_autofree char *text2 = NULL;
  gsize len1, len2;

  a = vpa_snapshot_load (path, &error);
  g_assert_no_error (error);
  text1 = write_to_string (a, &len1);
  b = vpa_snapshot_load_memory (&(VpaDoc){ text1, len1, "written" }, &error);
  g_assert_no_error (error);
  assert_hosts_equal (a, b);
  /* The output is stable when fed back in. */
  text2 = write_to_string (b, &len2);
  g_assert_cmpstr (text1, ==, text2);
}

/* A generated host with many VFs: exercises the reader across many
 * buffer refills and the writer's VF lists. */
static void
test_many_vfs (void)
{
  g_autoptr (VpaHost) host = vpa_host_new ("generated");
  g_autoptr (VpaHost) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  VpaCell cell = { 0, 0, g_array_new (FALSE, FALSE, sizeof (guint)), 1024 };
  guint cpu = 0;
  gsize len;

  g_array_append_val (cell.cpus, cpu);
  vpa_host_add_cell (host, &cell);
  for (guint p = 0; p < 16; p++)
    {
      VpaDevice *pf = vpa_device_new ();
      pf->addr = VPA_ADDR (0, 0x40 + p, 0, 0);
      pf->dev_type = VPA_DEV_TYPE_PF;
      pf->max_vfs = 256;
      strcpy (pf->vendor_id, "15b3");
      strcpy (pf->product_id, "101d");
      pf->netdev = g_strdup_printf ("enp%us0", p);
      vpa_host_add_device (host, pf);
      for (guint v = 0; v < 248; v++)
        {
          VpaDevice *vf = vpa_device_new ();
          vf->addr = VPA_ADDR (0, 0x40 + p, 1 + v / 8, v % 8);
          vf->dev_type = VPA_DEV_TYPE_VF;
          vf->parent_addr = pf->addr;
          vf->numa_node = (gint) (p % 2);
          strcpy (vf->vendor_id, "15b3");
          strcpy (vf->product_id, "101e");
          vpa_host_add_device (host, vf);
        }
    }
  vpa_host_add_claim (host, vpa_claim_new ("big", VPA_ADDR (0, 0x4f, 0x20, 7), TRUE));
  g_assert_true (vpa_host_seal (host, &error));

  text = write_to_string (host, &len);
  back = vpa_snapshot_load_memory (&(VpaDoc){ text, len, "generated" }, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->devices->len, ==, 16 * 249);
  assert_hosts_equal (host, back);
}

/* NUMA claims and capacity survive a snapshot written and read back. */
static void
test_numa_round_trip (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", &error);
  g_autoptr (VpaHost) back = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  guint n_numa = 0;

  g_assert_no_error (error);
  g_assert_true (vpa_host_seal (host, &error));
  text = write_to_string (host, &len);
  back = vpa_snapshot_load_memory (&(VpaDoc){ text, len, "replayed" }, &error);
  g_assert_no_error (error);
  vpa_test_assert_capacity_equal (host, back);
  g_assert_cmpuint (host->claims->len, ==, back->claims->len);
  for (guint i = 0; i < host->claims->len; i++)
    {
      const VpaClaim *a = g_ptr_array_index (host->claims, i);
      const VpaClaim *b = NULL;
      for (guint j = 0; j < back->claims->len && b == NULL; j++)
        {
          const VpaClaim *c = g_ptr_array_index (back->claims, j);
          if (strcmp (c->domain, a->domain) == 0 && c->addr == a->addr)
            b = c;
        }
      if (b == NULL)
        g_error ("claim of '%s' lost in the round trip", a->domain);
      g_assert_true ((a->numa == NULL) == (b->numa == NULL));
      if (a->numa == NULL || b->numa == NULL)
        continue;
      n_numa++;
      g_assert_cmpmem (a->numa->dedicated->data, a->numa->dedicated->len * sizeof (guint),
                       b->numa->dedicated->data, b->numa->dedicated->len * sizeof (guint));
      g_assert_cmpuint (a->numa->memory->len, ==, b->numa->memory->len);
      for (guint k = 0; k < a->numa->memory->len; k++)
        {
          const VpaMemClaim *x = &g_array_index (a->numa->memory, VpaMemClaim, k);
          const VpaMemClaim *y = &g_array_index (b->numa->memory, VpaMemClaim, k);
          g_assert_cmpint (x->node, ==, y->node);
          g_assert_cmpuint (x->page_kib, ==, y->page_kib);
          g_assert_cmpuint (x->kib, ==, y->kib);
        }
    }
  g_assert_cmpuint (n_numa, ==, 2);
}

static void
test_bad_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *stem = g_strndup (path, strlen (path) - strlen (".xml"));
  g_autofree char *err_path = g_strconcat (stem, ".err", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autofree char *actual = NULL;
  g_autofree char *prefix = g_strconcat (dir, "/", NULL);

  host = vpa_snapshot_load (path, &error);
  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  /* Messages name the file; the golden file holds it without the
   * directory. */
  g_assert_true (g_str_has_prefix (error->message, path));
  actual = g_strconcat (error->message + strlen (prefix), "\n", NULL);
  vpa_test_assert_golden (err_path, actual);
}

static void
test_open_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autofree char *tmpdir = g_dir_make_tmp ("vpa-snapshot-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (tmpdir, "locked.xml", NULL);
  g_autofree char *msg = NULL;

  host = vpa_snapshot_load ("/nonexistent/host.xml", &error);
  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "/nonexistent/host.xml: cannot open snapshot: No such file or directory");
  g_clear_error (&error);

  host = vpa_snapshot_load (tmpdir, &error);
  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_clear_error (&error);

  host = vpa_snapshot_load_memory (&(VpaDoc){ "", 0, "empty" }, &error);
  g_assert_null (host);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_clear_error (&error);

  g_assert_true (g_file_set_contents (file, "<node/>", -1, NULL));
  g_assert_cmpint (g_chmod (file, 0), ==, 0);
  host = vpa_snapshot_load (file, &error);
  if (geteuid () == 0)
    {
      /* root reads it anyway; it then fails for having no cells. */
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_test_message ("running as root: unreadable-file case not checked");
    }
  else
    {
      g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
      msg = g_strdup_printf ("%s: cannot open snapshot: %s", file, g_strerror (EACCES));
      g_assert_cmpstr (error->message, ==, msg);
    }
  g_assert_null (host);
  g_unlink (file);
  g_rmdir (tmpdir);
}

static void
test_snapshot_path (void)
{
  g_autofree char *mini = data_path ("mini.xml");
  g_autofree char *test_uri = g_strconcat ("test://", mini, NULL);
  g_autofree char *p = NULL;
  struct {
    const char *uri;
    const char *path;
  } cases[] = {
    { "test:///srv/hosts/h1.xml", "/srv/hosts/h1.xml" },
    { "test:///default", NULL },
    { "test://relative.xml", NULL },
    { "qemu:///system", NULL },
    { "sysfs:/", NULL },
    { "hosts/h1.xml", "hosts/h1.xml" },
    { "/no/such/file", NULL },
    { "", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = vpa_source_snapshot_path (cases[i].uri);
      g_assert_cmpstr (got, ==, cases[i].path);
    }
  p = vpa_source_snapshot_path (test_uri);
  g_assert_cmpstr (p, ==, mini);
}

static gboolean fake_probe_called;

static gboolean
fake_probe (const char *uri)
{
  fake_probe_called = TRUE;
  return TRUE; /* greedy, like the libvirt source */
}

static VpaHost *
fake_load (const char *uri, GError **error)
{
  VpaHost *host = vpa_host_new (uri);
  g_assert_true (vpa_host_seal (host, error));
  return host;
}

static const VpaSourceOps fake_ops = { "fake", fake_probe, fake_load };

static void
test_registry (void)
{
  g_autofree char *mini = data_path ("mini.xml");
  g_autofree char *test_uri = g_strconcat ("test://", mini, NULL);
  g_autofree char *sysfs_uri =
    g_strconcat ("sysfs:", VPA_TEST_DATA, "/sysfs-mini", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) h1 = NULL;
  g_autoptr (VpaHost) h2 = NULL;
  g_autoptr (VpaHost) h3 = NULL;
  g_autoptr (VpaHost) h4 = NULL;

  h1 = vpa_source_load ("qemu:///system", &error);
  g_assert_null (h1);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "unknown inventory source 'qemu:///system' (expected sysfs:ROOT, "
                   "test:///ABS/PATH.xml or a libvirt URI)");
  g_clear_error (&error);

  /* Registered sources come after the built-ins. */
  vpa_source_register (&fake_ops);
  h1 = vpa_source_load (test_uri, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (h1->devices->len, ==, 9);
  g_assert_false (fake_probe_called);
  h2 = vpa_source_load (mini, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (h2->claims->len, ==, 2);
  h3 = vpa_source_load (sysfs_uri, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (h3->source, ==, sysfs_uri);
  g_assert_false (fake_probe_called);
  h4 = vpa_source_load ("qemu:///system", &error);
  g_assert_no_error (error);
  g_assert_true (fake_probe_called);
  g_assert_cmpstr (h4->source, ==, "qemu:///system");
}

static void
add_round_trips (void)
{
  g_test_add_data_func_full ("/snapshot/round-trip/mini", data_path ("mini.xml"),
                             test_round_trip, g_free);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/hosts", "*.xml", "/snapshot/round-trip",
                              test_round_trip);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/snapshot/mini", test_mini);
  g_test_add_func ("/snapshot/numa-round-trip", test_numa_round_trip);
  g_test_add_func ("/snapshot/memory", test_memory);
  add_round_trips ();
  g_test_add_func ("/snapshot/many-vfs", test_many_vfs);
  g_test_add_func ("/snapshot/open-errors", test_open_errors);
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/snapshot", "bad-*.xml", "/snapshot/bad",
                              test_bad_fixture);
  g_test_add_func ("/source/snapshot-path", test_snapshot_path);
  g_test_add_func ("/source/registry", test_registry);
  return g_test_run ();
}
