/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-hook-sysfs.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <glib/gstdio.h>

static const guint pf_bus[] = { 0x18, 0x1a, 0x1c, 0x1e, 0x86, 0x88, 0x8a, 0x8c };

/* What a tree has beyond devices and topology. */
typedef struct {
  gboolean iommu; /* an IOMMU group per function */
  guint next_group;
} Tree;

/* Held by the running domain of data/hook/state/pfvf: with IOMMU groups
 * they are bound to vfio-pci, as a running QEMU domain's devices are. */
static const char *const vfio_bound[] = { "0000:18:00.0", "0000:1b:00.5" };

/* Plain writes: g_file_set_contents() syncs, and a tree has ~10000 files. */
static gboolean
put (const char *dir, const char *name, const char *value, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = g_strconcat (value, "\n", NULL);
  FILE *f = fopen (path, "w");

  if (f == NULL || fputs (text, f) < 0 || fclose (f) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "write %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
link_to (const char *dir, const char *name, const char *target, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  if (symlink (target, path) < 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "symlink %s: %s",
                   path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static char *
pci_dir (const char *devices, guint bus, guint slot, guint fn)
{
  g_autofree char *name = g_strdup_printf ("0000:%02x:%02x.%x", bus, slot, fn);
  char *dir = g_build_filename (devices, name, NULL);

  g_mkdir_with_parents (dir, 0755);
  return dir;
}

static gboolean
add_iommu_group (Tree *t, const char *root, const char *dir, const char **driver,
                 GError **error)
{
  g_autofree char *base = g_path_get_basename (dir);
  g_autofree char *num = g_strdup_printf ("%u", t->next_group++);
  g_autofree char *group = g_build_filename (root, "sys", "kernel", "iommu_groups", num, NULL);

  g_mkdir_with_parents (group, 0755);
  for (guint i = 0; i < G_N_ELEMENTS (vfio_bound); i++)
    {
      if (g_str_equal (base, vfio_bound[i]))
        *driver = "vfio-pci";
    }
  return link_to (dir, "iommu_group", group, error);
}

static gboolean
add_device (Tree *t, const char *root, const char *dir, const char *product, guint node,
            const char *driver, GError **error)
{
  g_autofree char *numa = g_strdup_printf ("%u", node);
  g_autofree char *drv = NULL;

  if (t->iommu && !add_iommu_group (t, root, dir, &driver, error))
    return FALSE;
  drv = g_build_filename (root, "sys", "bus", "pci", "drivers", driver, NULL);
  g_mkdir_with_parents (drv, 0755);
  return put (dir, "vendor", "0x8086", error) && put (dir, "device", product, error) &&
         put (dir, "class", "0x020000", error) && put (dir, "numa_node", numa, error) &&
         link_to (dir, "driver", drv, error);
}

static gboolean
add_pf (Tree *t, const char *root, const char *devices, guint k, guint n_vfs, GError **error)
{
  guint bus = pf_bus[k], node = k < 4 ? 0 : 1;
  g_autofree char *pf = pci_dir (devices, bus, 0, 0);
  g_autofree char *pf_link = g_strdup_printf ("../0000:%02x:00.0", bus);
  g_autofree char *total = g_strdup_printf ("%u", n_vfs);
  g_autofree char *net = g_strdup_printf ("%s/net/ens%uf0", pf, k + 1);

  g_mkdir_with_parents (net, 0755);
  if (!add_device (t, root, pf, "0x1572", node, "i40e", error) ||
      !put (pf, "sriov_totalvfs", total, error) || !put (pf, "sriov_numvfs", total, error))
    return FALSE;
  for (guint v = 0; v < n_vfs; v++)
    {
      g_autofree char *vf = pci_dir (devices, bus + 1, v / 8, v % 8);
      g_autofree char *vf_link = g_strdup_printf ("../0000:%02x:%02x.%x", bus + 1, v / 8, v % 8);
      g_autofree char *virtfn = g_strdup_printf ("virtfn%u", v);

      if (!add_device (t, root, vf, "0x154c", node, "iavf", error) ||
          !link_to (vf, "physfn", pf_link, error) || !link_to (pf, virtfn, vf_link, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
add_topology (const char *root, GError **error)
{
  g_autofree char *nodes = g_build_filename (root, "sys", "devices", "system", "node", NULL);
  g_autofree char *cpus = g_build_filename (root, "sys", "devices", "system", "cpu", NULL);

  g_mkdir_with_parents (nodes, 0755);
  if (!put (nodes, "online", "0-1", error) || !put (nodes, "possible", "0-1", error))
    return FALSE;
  for (guint n = 0; n < 2; n++)
    {
      g_autofree char *name = g_strdup_printf ("node%u", n);
      g_autofree char *dir = g_build_filename (nodes, name, NULL);
      g_autofree char *list = g_strdup_printf ("%u-%u", 2 * n, 2 * n + 1);

      g_mkdir_with_parents (dir, 0755);
      if (!put (dir, "cpulist", list, error) || !put (dir, "meminfo", "", error))
        return FALSE;
    }
  g_mkdir_with_parents (cpus, 0755);
  if (!put (cpus, "online", "0-3", error) || !put (cpus, "possible", "0-3", error))
    return FALSE;
  for (guint c = 0; c < 4; c++)
    {
      g_autofree char *name = g_strdup_printf ("cpu%u", c);
      g_autofree char *topo = g_build_filename (cpus, name, "topology", NULL);
      g_autofree char *socket = g_strdup_printf ("%u", c / 2);

      g_mkdir_with_parents (topo, 0755);
      if (!put (topo, "physical_package_id", socket, error))
        return FALSE;
    }
  return TRUE;
}

/* Real sysfs lives in memory: a tmpfs tree measures the hook, not the
 * disk (and is built in well under a second). */
static const char *
tree_base (void)
{
  if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) && access ("/dev/shm", W_OK) == 0)
    return "/dev/shm";
  return g_get_tmp_dir ();
}

static char *
make_tree (Tree *t, guint n_vfs, GError **error)
{
  g_autofree char *root = g_build_filename (tree_base (), "vpa-hook-sysfs-XXXXXX", NULL);
  g_autofree char *devices = NULL;

  if (g_mkdtemp (root) == NULL)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "mkdtemp %s: %s",
                   root, g_strerror (saved));
      return NULL;
    }
  devices = g_build_filename (root, "sys", "bus", "pci", "devices", NULL);
  g_mkdir_with_parents (devices, 0755);
  if (!add_topology (root, error))
    return NULL;
  for (guint k = 0; k < G_N_ELEMENTS (pf_bus); k++)
    {
      guint share = n_vfs / G_N_ELEMENTS (pf_bus) + (k < n_vfs % G_N_ELEMENTS (pf_bus));
      if (!add_pf (t, root, devices, k, share, error))
        return NULL;
    }
  return g_steal_pointer (&root);
}

char *
vpa_test_sysfs_tree (guint n_vfs, GError **error)
{
  Tree t = { FALSE, 0 };

  return make_tree (&t, n_vfs, error);
}

char *
vpa_test_sysfs_tree_iommu (guint n_vfs, GError **error)
{
  Tree t = { TRUE, 0 };

  return make_tree (&t, n_vfs, error);
}

static void
remove_tree (const char *path)
{
  GDir *d;
  const char *name;

  if (g_file_test (path, G_FILE_TEST_IS_SYMLINK) || !g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_unlink (path);
      return;
    }
  if ((d = g_dir_open (path, 0, NULL)) != NULL)
    {
      while ((name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
      g_dir_close (d);
    }
  g_rmdir (path);
}

void
vpa_test_sysfs_remove (const char *root)
{
  if (root != NULL && g_str_has_prefix (root, tree_base ()))
    remove_tree (root);
}

gint
vpa_test_name_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

gint
vpa_test_double_cmp (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return x < y ? -1 : x > y;
}
