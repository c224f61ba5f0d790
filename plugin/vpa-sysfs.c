/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The "sysfs:ROOT" inventory source: what libvirt's udev node device
 * driver and capabilities would report, read from ROOT/sys directly, so
 * the hook never calls back into the daemon. ROOT is a parameter so tests
 * point it at a fake tree. The NUMA topology is vpa-sysfs-topology.c.
 */
#include "vpa-sysfs.h"
#include "vpa-sysfs-private.h"
#include "vpa-file.h"
#include "vpa-bars.h"
#include "vpa-source.h"
#include "vpa-pcie.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* errno values that mean "the device went away while we looked": VFs are
 * destroyed and re-created when sriov_numvfs changes. */
static gboolean
is_vanished (int e)
{
  return e == ENOENT || e == ENODEV;
}

static void
reader_clear (Reader *r)
{
  g_clear_error (&r->refused);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reader, reader_clear)

/* ok, unless an attribute was refused: then that is the error, in place
 * of what its caller made of it. */
static gboolean
reader_done (Reader *r, gboolean ok, GError **error)
{
  if (r->refused == NULL)
    return ok;
  g_clear_error (error);
  g_propagate_error (error, g_steal_pointer (&r->refused));
  return FALSE;
}

/* Records the first attribute refused; its path from the directory's
 * descriptor (what the kernel says it is), else as the caller named it. */
static void
reader_refuse (Reader *r, int dfd, const char *name, mode_t mode)
{
  g_autofree char *proc = g_strdup_printf ("/proc/self/fd/%d", dfd);
  g_autofree char *dir = g_file_read_link (proc, NULL);
  g_autofree char *path = dir != NULL ? g_build_filename (dir, name, NULL) : g_strdup (name);

  if (r->refused != NULL)
    return;
  g_set_error (&r->refused, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
               "%s: cannot read: %s, not a regular file (sysfs attributes are regular files)",
               path, vpa_file_kind (mode));
}

/* Reads a small attribute below dfd into buf, trailing blanks stripped;
 * 0 or an errno. Opened without blocking and read only when a regular
 * file (a directory fails its read with EISDIR, as before); anything
 * else is refused through r and reads as ENXIO. */
int
vpa_sysfs_read_attr (Reader *r, int dfd, const char *name, char *buf, gsize len)
{
  struct stat st;
  ssize_t n;
  gsize got = 0;
  char extra = 0;
  int e = 0;
  int fd;

  buf[0] = '\0'; /* never handed back unset, whatever errno says */
  fd = openat (dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  if (fstat (fd, &st) != 0)
    {
      e = errno;
    }
  else if (!S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
    {
      reader_refuse (r, dfd, name, st.st_mode);
      e = ENXIO;
    }
  if (e != 0)
    {
      close (fd);
      return e;
    }
  /* Until EOF: a value longer than buf is EFBIG, never cut silently. */
  while (e == 0 && got < len)
    {
      char *dst = got < len - 1 ? buf + got : &extra;
      gsize want = got < len - 1 ? len - 1 - got : 1;

      n = read (fd, dst, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          e = errno;
        }
      else if (n == 0)
        {
          break;
        }
      else if (dst == &extra)
        {
          e = EFBIG;
        }
      else
        {
          got += (gsize) n;
        }
    }
  close (fd);
  if (e != 0)
    return e;
  buf[got] = '\0';
  g_strchomp (buf);
  return 0;
}

/* The basename of the symlink dfd/name into buf; 0 or an errno. */
static int
read_link_base (int dfd, const char *name, char *buf, gsize len)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (dfd, name, target, sizeof target - 1);
  const char *base;

  if (n < 0)
    return errno;
  target[n] = '\0';
  base = strrchr (target, '/');
  g_strlcpy (buf, base != NULL ? base + 1 : target, len);
  return 0;
}

static gboolean
parse_hex (const char *s, guint64 max, guint64 *out)
{
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2;
  return g_ascii_string_to_unsigned (s, 16, 0, max, out, NULL);
}

/* A device's attribute path, for messages. */
typedef struct {
  const char *dir;  /* ROOT/sys/bus/pci/devices */
  const char *name; /* the entry, e.g. 0000:81:00.0 */
} DevPath;

static gboolean
set_read_error (GError **error, const DevPath *p, const char *attr, int e)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s/%s: cannot read: %s", p->dir,
               p->name, attr, g_strerror (e));
  return FALSE;
}

static gboolean
set_value_error (GError **error, const DevPath *p, const char *attr, const char *value,
                 const char *expected)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s/%s/%s: '%s' is not %s", p->dir,
               p->name, attr, value, expected);
  return FALSE;
}

/* vendor, device, class: every PCI device has them, so a missing one
 * means the device vanished (*gone). */
static gboolean
read_ids (Reader *r, int dfd, const DevPath *p, VpaDevice *dev, gboolean *gone, GError **error)
{
  static const char *const attrs[] = { "vendor", "device", "class" };
  static const guint64 max[] = { 0xffff, 0xffff, 0xffffff };
  guint64 v[3];

  for (guint i = 0; i < G_N_ELEMENTS (attrs); i++)
    {
      char buf[32];
      int e = vpa_sysfs_read_attr (r, dfd, attrs[i], buf, sizeof buf);

      if (is_vanished (e))
        {
          *gone = TRUE;
          return TRUE;
        }
      if (e != 0)
        return set_read_error (error, p, attrs[i], e);
      if (!parse_hex (buf, max[i], &v[i]))
        return set_value_error (error, p, attrs[i], buf, "a hex PCI id");
    }
  g_snprintf (dev->vendor_id, sizeof dev->vendor_id, "%04x", (guint) v[0]);
  g_snprintf (dev->product_id, sizeof dev->product_id, "%04x", (guint) v[1]);
  dev->class_code = (guint32) v[2];
  return TRUE;
}

static gboolean
read_numa_node (Reader *r, int dfd, const DevPath *p, VpaDevice *dev, GError **error)
{
  char buf[32];
  gint64 v;
  int e = vpa_sysfs_read_attr (r, dfd, "numa_node", buf, sizeof buf);

  if (is_vanished (e))
    return TRUE;
  if (e != 0)
    return set_read_error (error, p, "numa_node", e);
  if (!g_ascii_string_to_signed (buf, 10, -1, G_MAXINT, &v, NULL))
    return set_value_error (error, p, "numa_node", buf, "a NUMA node number");
  dev->numa_node = v < 0 ? VPA_NUMA_NONE : (gint) v;
  return TRUE;
}

/* The device type as libvirt's udev driver sees it: a physfn link gives
 * a phys_function capability, printed before virt_functions (so it wins
 * in document order); sriov_totalvfs > 0 gives virt_functions with
 * maxCount, even with no VFs enabled. */
static gboolean
read_sriov (Reader *r, int dfd, const DevPath *p, VpaDevice *dev, GError **error)
{
  char buf[NAME_MAX + 1];
  guint64 v;
  int e = read_link_base (dfd, "physfn", buf, sizeof buf);

  if (e == 0)
    {
      if (!vpa_addr_parse (buf, &dev->parent_addr))
        return set_value_error (error, p, "physfn", buf, "a link to a PCI device");
      dev->dev_type = VPA_DEV_TYPE_VF;
      return TRUE;
    }
  if (!is_vanished (e) && e != EINVAL)
    return set_read_error (error, p, "physfn", e);

  e = vpa_sysfs_read_attr (r, dfd, "sriov_totalvfs", buf, sizeof buf);
  if (is_vanished (e))
    return TRUE;
  if (e != 0)
    return set_read_error (error, p, "sriov_totalvfs", e);
  if (!g_ascii_string_to_unsigned (buf, 10, 0, G_MAXUINT, &v, NULL))
    return set_value_error (error, p, "sriov_totalvfs", buf, "a number of VFs");
  if (v > 0)
    {
      dev->dev_type = VPA_DEV_TYPE_PF;
      dev->max_vfs = (guint) v;
    }
  return TRUE;
}

static gboolean
read_links (int dfd, const DevPath *p, VpaDevice *dev, GError **error)
{
  char buf[NAME_MAX + 1];
  guint64 v;
  int e;

  e = read_link_base (dfd, "driver", buf, sizeof buf);
  if (e == 0)
    {
      dev->driver = g_strdup (buf);
    }
  else if (!is_vanished (e))
    {
      return set_read_error (error, p, "driver", e);
    }

  e = read_link_base (dfd, "iommu_group", buf, sizeof buf);
  if (e == 0)
    {
      if (!g_ascii_string_to_unsigned (buf, 10, 0, G_MAXINT, &v, NULL))
        return set_value_error (error, p, "iommu_group", buf, "a link to an IOMMU group");
      dev->iommu_group = (gint) v;
    }
  else if (!is_vanished (e))
    return set_read_error (error, p, "iommu_group", e);
  return TRUE;
}

/* net/IFNAME: the smallest name when there are several, so the snapshot
 * reader (which picks the same way) agrees. */
static void
read_netdev (int dfd, VpaDevice *dev)
{
  int fd = openat (dfd, "net", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir;
  struct dirent *ent;

  if (fd < 0)
    return;
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return;
    }
  while ((ent = readdir (dir)) != NULL)
    {
      if (ent->d_name[0] == '.')
        continue;
      if (dev->netdev == NULL || strcmp (ent->d_name, dev->netdev) < 0)
        {
          g_free (dev->netdev);
          dev->netdev = g_strdup (ent->d_name);
        }
    }
  closedir (dir);
}

/* current_link_speed "16.0 GT/s PCIe" / current_link_width "16", as
 * libvirt's <link validity='sta'> reports them; "Unknown" (VFs) or
 * absent is unknown. */
static void
read_link (Reader *r, int dfd, VpaDevice *dev)
{
  char buf[64];
  guint64 v;

  if (vpa_sysfs_read_attr (r, dfd, "current_link_speed", buf, sizeof buf) == 0)
    {
      guint16 tenths;
      if (vpa_pcie_parse_speed (buf, &tenths))
        dev->link_speed = tenths;
    }
  if (vpa_sysfs_read_attr (r, dfd, "current_link_width", buf, sizeof buf) == 0 &&
      g_ascii_string_to_unsigned (buf, 10, 0, G_MAXUINT16, &v, NULL))
    dev->link_width = (guint16) v;
}

/* resource: the 64-bit memory BARs (vpa-bars.h); absent leaves them
 * unknown, as libvirt's nodedev XML has them. */
static gboolean
read_bars (Reader *r, int dfd, const DevPath *p, VpaDevice *dev, GError **error)
{
  char buf[2048]; /* 17 lines of 57 bytes at most (PCI_NUM_RESOURCES) */
  g_autofree char *bad = NULL;
  int e = vpa_sysfs_read_attr (r, dfd, "resource", buf, sizeof buf);

  if (e != 0)
    return is_vanished (e) ? TRUE : set_read_error (error, p, "resource", e);
  if (!vpa_bars_parse_resource (buf, &dev->bar64_bytes, &bad))
    return set_value_error (error, p, "resource", bad, "a BAR line '0xSTART 0xEND 0xFLAGS'");
  dev->bars_known = TRUE;
  return TRUE;
}

/* Where the device sits in the PCIe tree: the target of its
 * ROOT/sys/bus/pci/devices/NAME link, "../../../devices/pci0000:5d/
 * 0000:5d:02.0/0000:5e:00.0". An entry that is not a link (a flat test
 * tree) leaves the tree unknown. */
static gboolean
read_tree (int devs_fd, const DevPath *p, VpaDevice *dev, GError **error)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (devs_fd, p->name, target, sizeof target - 1);

  if (n < 0)
    {
      if (errno == EINVAL || is_vanished (errno))
        return TRUE;
      return set_read_error (error, p, "", errno);
    }
  target[n] = '\0';
  if (!vpa_pcie_parse_sysfs_path (target, dev->addr, &dev->pcie_root, &dev->pcie_parent))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s/%s: broken PCIe path '%s': not a devices/pciDDDD:BB/.../%s path of PCI addresses",
                   p->dir, p->name, target, p->name);
      return FALSE;
    }
  return TRUE;
}

/* One device; *out stays NULL when it vanished under us. */
static gboolean
read_device_at (Reader *r, int dfd, const DevPath *p, VpaAddr addr, VpaDevice **out, GError **error)
{
  g_autoptr (VpaDevice) dev = vpa_device_new ();
  gboolean gone = FALSE;

  dev->addr = addr;
  if (!read_ids (r, dfd, p, dev, &gone, error))
    return FALSE;
  if (gone)
    return TRUE;
  if (!read_numa_node (r, dfd, p, dev, error) || !read_sriov (r, dfd, p, dev, error) ||
      !read_links (dfd, p, dev, error) || !read_bars (r, dfd, p, dev, error))
    return FALSE;
  read_netdev (dfd, dev);
  /* A VF's link is its PF's (libvirt reports it without speed, width 0):
   * not read, which keeps the thousands of VFs at their cost. */
  if (dev->dev_type != VPA_DEV_TYPE_VF)
    read_link (r, dfd, dev);
  *out = g_steal_pointer (&dev);
  return TRUE;
}

static gboolean
read_device (Reader *r, int devs_fd, const DevPath *p, VpaAddr addr, VpaDevice **out, GError **error)
{
  int dfd = openat (devs_fd, p->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok;

  *out = NULL;
  if (dfd < 0)
    {
      int e = errno;
      /* A dangling link, or a directory gone since readdir. */
      if (is_vanished (e))
        return TRUE;
      if (e == ELOOP)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s/%s: cyclic PCIe path: the link resolves to itself", p->dir, p->name);
          return FALSE;
        }
      return set_read_error (error, p, "", e);
    }
  ok = read_device_at (r, dfd, p, addr, out, error);
  close (dfd);
  if (ok && *out != NULL && !read_tree (devs_fd, p, *out, error))
    {
      g_clear_pointer (out, vpa_device_free);
      return FALSE;
    }
  return ok;
}

static gboolean
read_devices (Reader *r, VpaHost *host, const char *root, GError **error)
{
  g_autofree char *path = g_build_filename (root, PCI_DEVICES, NULL);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir;
  struct dirent *ent;
  gboolean ok = TRUE;

  if (fd < 0 || (dir = fdopendir (fd)) == NULL)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read PCI devices: %s",
                   path, g_strerror (e));
      return FALSE;
    }
  while (ok && (ent = readdir (dir)) != NULL)
    {
      DevPath p = { path, ent->d_name };
      VpaDevice *dev = NULL;
      VpaAddr addr;

      if (!vpa_addr_parse (ent->d_name, &addr))
        continue;
      ok = read_device (r, dirfd (dir), &p, addr, &dev, error);
      if (dev != NULL)
        vpa_host_add_device (host, dev);
    }
  closedir (dir);
  return ok;
}

static gboolean
read_one_with_parent (Reader *r, VpaHost *host, int devs_fd, const char *path, GHashTable *seen,
                      VpaAddr addr, GError **error)
{
  g_autoptr (GArray) todo = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  g_array_append_val (todo, addr);
  while (todo->len > 0)
    {
      char name[VPA_ADDR_BUFLEN];
      DevPath p = { path, name };
      VpaDevice *dev = NULL;
      VpaAddr *key;

      addr = g_array_index (todo, VpaAddr, todo->len - 1);
      g_array_set_size (todo, todo->len - 1);
      if (addr == VPA_ADDR_NONE || g_hash_table_contains (seen, &addr))
        continue;
      key = g_new (VpaAddr, 1);
      *key = addr;
      g_hash_table_add (seen, key);
      vpa_addr_format (addr, name);
      if (!read_device (r, devs_fd, &p, addr, &dev, error))
        return FALSE;
      if (dev == NULL)
        continue;
      g_array_append_val (todo, dev->parent_addr);
      g_array_append_val (todo, dev->pcie_parent);
      vpa_host_add_device (host, dev);
    }
  return TRUE;
}

static gboolean
check_root (const char *root, GError **error)
{
  struct stat st;
  int e = 0;

  if (stat (root, &st) != 0)
    {
      e = errno;
    }
  else if (!S_ISDIR (st.st_mode))
    {
      e = ENOTDIR;
    }
  /* As for a snapshot: a root that does not exist (or is no directory)
   * is a wrong argument, one that cannot be read the environment. */
  if (e != 0)
    {
      g_set_error (error, VPA_ERROR,
                   e == ENOENT || e == ENOTDIR ? VPA_ERROR_INVALID : VPA_ERROR_ENVIRONMENT,
                   "%s: cannot read sysfs root: %s", root, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

VpaHost *
vpa_sysfs_load_devices (const char *root, const VpaAddr *addrs, guint n_addrs, GError **error)
{
  g_autofree char *source = NULL;
  g_autofree char *path = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GHashTable) seen = NULL;
  g_auto (Reader) reader = { NULL };
  Reader *r = &reader;
  gboolean ok = TRUE;
  int fd;

  g_return_val_if_fail (root != NULL, NULL);
  g_return_val_if_fail (addrs != NULL || n_addrs == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_root (root, error))
    return NULL;
  source = g_strconcat ("sysfs:", root, NULL);
  host = vpa_host_new (source);
  path = g_build_filename (root, PCI_DEVICES, NULL);
  fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read PCI devices: %s",
                   path, g_strerror (errno));
      return NULL;
    }
  seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; ok && i < n_addrs; i++)
    ok = read_one_with_parent (r, host, fd, path, seen, addrs[i], error);
  close (fd);
  ok = ok && vpa_sysfs_topology_read (r, host, root, FALSE, error);
  if (!reader_done (r, ok, error) || !vpa_host_seal (host, error))
    return NULL;
  return g_steal_pointer (&host);
}

gboolean
vpa_sysfs_vf_addrs (const char *root, VpaAddr pf, GArray *vfs, GError **error)
{
  char name[VPA_ADDR_BUFLEN];
  g_autofree char *path = NULL;
  struct dirent *ent;
  int fd, e;
  DIR *dir;

  g_return_val_if_fail (root != NULL && vfs != NULL, FALSE);

  path = g_build_filename (root, PCI_DEVICES, vpa_addr_format (pf, name), NULL);
  fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || (dir = fdopendir (fd)) == NULL)
    {
      e = errno;
      if (fd >= 0)
        close (fd);
      if (is_vanished (e))
        return TRUE;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  while ((ent = readdir (dir)) != NULL)
    {
      char vf[NAME_MAX + 1];
      VpaAddr addr;

      if (!g_str_has_prefix (ent->d_name, "virtfn"))
        continue;
      e = read_link_base (dirfd (dir), ent->d_name, vf, sizeof vf);
      if (e == 0 && vpa_addr_parse (vf, &addr))
        g_array_append_val (vfs, addr);
    }
  closedir (dir);
  return TRUE;
}

VpaHost *
vpa_sysfs_load (const char *root, GError **error)
{
  g_autofree char *source = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_auto (Reader) reader = { NULL };
  Reader *r = &reader;
  gboolean ok;

  g_return_val_if_fail (root != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_root (root, error))
    return NULL;
  source = g_strconcat ("sysfs:", root, NULL);
  host = vpa_host_new (source);
  ok = read_devices (r, host, root, error) && vpa_sysfs_topology_read (r, host, root, TRUE, error);
  if (!reader_done (r, ok, error) || !vpa_host_seal (host, error))
    return NULL;
  return g_steal_pointer (&host);
}
