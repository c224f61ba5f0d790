/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The "sysfs:ROOT" inventory source: what libvirt's udev node device
 * driver and capabilities would report, read from ROOT/sys directly, so
 * the hook never calls back into the daemon. ROOT is a parameter so tests
 * point it at a fake tree.
 */
#include "vpa-sysfs.h"
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

#define PCI_DEVICES "sys/bus/pci/devices"
#define NODE_DIR "sys/devices/system/node"
#define CPU_DIR "sys/devices/system/cpu"

/* errno values that mean "the device went away while we looked": VFs are
 * destroyed and re-created when sriov_numvfs changes. */
static gboolean
is_vanished (int e)
{
  return e == ENOENT || e == ENODEV;
}

/* One read of a tree. An attribute that is neither a regular file nor a
 * directory (a FIFO would block the read for ever, a device node read
 * without end) is never read: the first one is the read's error,
 * whatever its caller makes of a missing value (sysfs has none). */
typedef struct {
  GError *refused;
} Reader;

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
static int
read_attr (Reader *r, int dfd, const char *name, char *buf, gsize len)
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
    e = errno;
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
        e = errno;
      else if (n == 0)
        break;
      else if (dst == &extra)
        e = EFBIG;
      else
        got += (gsize) n;
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
      int e = read_attr (r, dfd, attrs[i], buf, sizeof buf);

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
  int e = read_attr (r, dfd, "numa_node", buf, sizeof buf);

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

  e = read_attr (r, dfd, "sriov_totalvfs", buf, sizeof buf);
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
    dev->driver = g_strdup (buf);
  else if (!is_vanished (e))
    return set_read_error (error, p, "driver", e);

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

  if (read_attr (r, dfd, "current_link_speed", buf, sizeof buf) == 0)
    {
      guint16 tenths;
      if (vpa_pcie_parse_speed (buf, &tenths))
        dev->link_speed = tenths;
    }
  if (read_attr (r, dfd, "current_link_width", buf, sizeof buf) == 0 &&
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
  int e = read_attr (r, dfd, "resource", buf, sizeof buf);

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

/* ------------------------------------------------------------------ */
/* Topology                                                            */
/* ------------------------------------------------------------------ */

static gint
uint_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

/* The kernel's cpulist format, "0-3,8-11" (empty for a memory-only node),
 * into ascending unique ids. */
static gboolean
parse_cpulist (const char *s, GArray *cpus)
{
  g_auto (GStrv) parts = NULL;
  guint n = 0;

  if (*s == '\0')
    return TRUE;
  parts = g_strsplit (s, ",", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      char *dash = strchr (parts[i], '-');
      guint64 lo, hi;

      if (dash != NULL)
        *dash = '\0';
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, G_MAXINT, &lo, NULL))
        return FALSE;
      hi = lo;
      if (dash != NULL && !g_ascii_string_to_unsigned (dash + 1, 10, lo, lo + 65535, &hi, NULL))
        return FALSE;
      for (guint64 c = lo; c <= hi; c++)
        {
          guint cpu = (guint) c;
          g_array_append_val (cpus, cpu);
        }
    }
  g_array_sort (cpus, uint_cmp);
  for (guint i = 0; i < cpus->len; i++)
    if (n == 0 || g_array_index (cpus, guint, i) != g_array_index (cpus, guint, n - 1))
      g_array_index (cpus, guint, n++) = g_array_index (cpus, guint, i);
  g_array_set_size (cpus, n);
  return TRUE;
}

/* A CPU's socket, or -1 when offline: libvirt prints offline CPUs without
 * socket_id, and the kernel removes their topology directory. */
static gint
cpu_socket (Reader *r, int cpu_fd, guint cpu)
{
  char path[64];
  char buf[32];
  gint64 v;

  if (cpu_fd < 0)
    return -1;
  g_snprintf (path, sizeof path, "cpu%u/online", cpu);
  if (read_attr (r, cpu_fd, path, buf, sizeof buf) == 0 && strcmp (buf, "0") == 0)
    return -1;
  g_snprintf (path, sizeof path, "cpu%u/topology/physical_package_id", cpu);
  if (read_attr (r, cpu_fd, path, buf, sizeof buf) != 0 ||
      !g_ascii_string_to_signed (buf, 10, -1, G_MAXINT, &v, NULL))
    return -1;
  return (gint) v;
}

/* TRUE when every CPU of cpus (ascending) is in set (ascending). */
static gboolean
cpus_within (const GArray *cpus, const GArray *set)
{
  guint j = 0;

  for (guint i = 0; i < cpus->len; i++)
    {
      guint c = g_array_index (cpus, guint, i);
      while (j < set->len && g_array_index (set, guint, j) < c)
        j++;
      if (j == set->len || g_array_index (set, guint, j) != c)
        return FALSE;
    }
  return TRUE;
}

/* The socket of a node whose CPUs are all online, from its first CPU
 * alone: its physical_package_id, when its package's CPU list (the
 * kernel's package_cpus_list, core_siblings_list before Linux 5.5) holds
 * every CPU of the node. -2 when that cannot be told this way. */
/* A package read for an earlier node: its physical_package_id and CPU
 * list, the same for every CPU of it. */
typedef struct {
  gint id;
  GArray *cpus;
} Package;

static void
package_free (Package *p)
{
  g_array_unref (p->cpus);
  g_free (p);
}

static gint
cell_socket_from_first (Reader *r, const VpaCell *cell, int cpu_fd, GPtrArray *packages)
{
  g_autoptr (GArray) package = g_array_new (FALSE, FALSE, sizeof (guint));
  guint first = g_array_index (cell->cpus, guint, 0);
  char path[64];
  char buf[4096];
  gint64 v;

  /* A node within a package already read is in it: what its first CPU's
   * files would say (nodes of one socket cost one read). */
  for (guint i = 0; packages != NULL && i < packages->len; i++)
    {
      const Package *p = g_ptr_array_index (packages, i);
      if (cpus_within (cell->cpus, p->cpus))
        return p->id;
    }
  g_snprintf (path, sizeof path, "cpu%u/topology/physical_package_id", first);
  if (read_attr (r, cpu_fd, path, buf, sizeof buf) != 0 ||
      !g_ascii_string_to_signed (buf, 10, -1, G_MAXINT, &v, NULL))
    return -2;
  g_snprintf (path, sizeof path, "cpu%u/topology/package_cpus_list", first);
  if (read_attr (r, cpu_fd, path, buf, sizeof buf) != 0)
    {
      g_snprintf (path, sizeof path, "cpu%u/topology/core_siblings_list", first);
      if (read_attr (r, cpu_fd, path, buf, sizeof buf) != 0)
        return -2;
    }
  if (!parse_cpulist (buf, package) || !cpus_within (cell->cpus, package))
    return -2;
  if (packages != NULL && v >= 0)
    {
      Package *p = g_new (Package, 1);
      p->id = (gint) v;
      p->cpus = g_steal_pointer (&package);
      g_ptr_array_add (packages, p);
    }
  return (gint) v;
}

/* A cell's socket: the one all its CPUs share, VPA_SOCKET_NONE when one
 * is offline or they differ. online (may be NULL) is cpu/online: with
 * it, one CPU per node is read (cell_socket_from_first), else every CPU. */
static void
cell_set_socket (Reader *r, VpaCell *cell, int cpu_fd, const GArray *online, GPtrArray *packages)
{
  g_autofree gint *sockets = NULL;

  if (cpu_fd >= 0 && online != NULL && cell->cpus->len > 0)
    {
      gint socket;

      if (!cpus_within (cell->cpus, online))
        {
          cell->socket = VPA_SOCKET_NONE;
          return;
        }
      if ((socket = cell_socket_from_first (r, cell, cpu_fd, packages)) >= -1)
        {
          cell->socket = socket >= 0 ? socket : VPA_SOCKET_NONE;
          return;
        }
    }
  sockets = g_new (gint, MAX (cell->cpus->len, 1));
  for (guint i = 0; i < cell->cpus->len; i++)
    sockets[i] = cpu_socket (r, cpu_fd, g_array_index (cell->cpus, guint, i));
  cell->socket = vpa_cell_socket_from_cpu_sockets (sockets, cell->cpus->len);
}

/* cpu/online, or NULL when it cannot be read. */
static GArray *
read_online (Reader *r, int cpu_fd)
{
  g_autoptr (GArray) online = g_array_new (FALSE, FALSE, sizeof (guint));
  char buf[4096];

  if (cpu_fd < 0 || read_attr (r, cpu_fd, "online", buf, sizeof buf) != 0 ||
      !parse_cpulist (buf, online))
    return NULL;
  return g_steal_pointer (&online);
}

/* "Node 0 MemTotal:  65855432 kB" (node meminfo) or "MemTotal: N kB"
 * (/proc/meminfo); 0 when absent. */
static guint64
meminfo_total_kib (const char *text)
{
  const char *p = strstr (text, "MemTotal:");

  if (p == NULL)
    return 0;
  return g_ascii_strtoull (p + strlen ("MemTotal:"), NULL, 10);
}

/* Each CPU's core and thread siblings (cpuN/topology/core_id,
 * thread_siblings_list); an offline CPU has neither. */
static void
cell_set_topo (Reader *r, VpaCell *cell, int cpu_fd)
{
  cell->topo = g_array_sized_new (FALSE, TRUE, sizeof (VpaCpuTopo), cell->cpus->len);
  for (guint i = 0; i < cell->cpus->len; i++)
    {
      guint cpu = g_array_index (cell->cpus, guint, i);
      VpaCpuTopo t = { FALSE, -1, -1, cpu };
      char path[96];
      char buf[4096];
      gint64 v;

      t.socket = cpu_socket (r, cpu_fd, cpu);
      t.online = t.socket >= 0;
      g_snprintf (path, sizeof path, "cpu%u/topology/core_id", cpu);
      if (t.online && read_attr (r, cpu_fd, path, buf, sizeof buf) == 0 &&
          g_ascii_string_to_signed (buf, 10, 0, G_MAXINT, &v, NULL))
        t.core = (gint) v;
      g_snprintf (path, sizeof path, "cpu%u/topology/thread_siblings_list", cpu);
      if (t.online && read_attr (r, cpu_fd, path, buf, sizeof buf) == 0)
        {
          g_autoptr (GArray) sibs = g_array_new (FALSE, FALSE, sizeof (guint));
          if (parse_cpulist (buf, sibs) && sibs->len > 0)
            t.siblings = MIN (cpu, g_array_index (sibs, guint, 0));
        }
      g_array_append_val (cell->topo, t);
    }
}

/* "Node 0 KEY: N" of a node's meminfo; 0 when absent. */
static guint64
meminfo_value (const char *text, const char *key)
{
  const char *p = strstr (text, key);

  if (p == NULL)
    return 0;
  return g_ascii_strtoull (p + strlen (key), NULL, 10);
}

static gint
pages_cmp (gconstpointer a, gconstpointer b)
{
  const VpaPages *x = a, *y = b;
  return x->size_kib < y->size_kib ? -1 : x->size_kib > y->size_kib;
}

/* nodeN/hugepages/hugepages-SkB/{nr,free}_hugepages, and the ordinary
 * pages as libvirt counts them: the memory no hugepage holds, in 4 KiB
 * pages. */
static void
cell_set_pages (Reader *r, VpaCell *cell, int node_fd)
{
  int fd = openat (node_fd, "hugepages", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  guint64 huge_kib = 0;
  VpaPages small = { 4, 0, 0 };
  struct dirent *ent;

  cell->pages = g_array_new (FALSE, FALSE, sizeof (VpaPages));
  if (fd >= 0 && dir == NULL)
    close (fd);
  while (dir != NULL && (ent = readdir (dir)) != NULL)
    {
      VpaPages p = { 0, 0, 0 };
      char path[NAME_MAX + 32];
      char buf[64];
      guint64 v;
      const char *end;

      if (!g_str_has_prefix (ent->d_name, "hugepages-") ||
          !g_str_has_suffix (ent->d_name, "kB"))
        continue;
      end = ent->d_name + strlen (ent->d_name) - 2;
      {
        g_autofree char *num = g_strndup (ent->d_name + 10, (gsize) (end - ent->d_name - 10));
        if (!g_ascii_string_to_unsigned (num, 10, 8, G_MAXUINT32, &p.size_kib, NULL))
          continue;
      }
      g_snprintf (path, sizeof path, "%s/nr_hugepages", ent->d_name);
      if (read_attr (r, dirfd (dir), path, buf, sizeof buf) == 0 &&
          g_ascii_string_to_unsigned (buf, 10, 0, G_MAXUINT32, &v, NULL))
        p.total = v;
      g_snprintf (path, sizeof path, "%s/free_hugepages", ent->d_name);
      p.free = p.total;
      if (read_attr (r, dirfd (dir), path, buf, sizeof buf) == 0 &&
          g_ascii_string_to_unsigned (buf, 10, 0, p.total, &v, NULL))
        p.free = v;
      huge_kib += p.total * p.size_kib;
      g_array_append_val (cell->pages, p);
    }
  if (dir != NULL)
    closedir (dir);
  small.total = small.free = cell->memory_kib > huge_kib ? (cell->memory_kib - huge_kib) / 4 : 0;
  g_array_append_val (cell->pages, small);
  g_array_sort (cell->pages, pages_cmp);
}

/* nodeN/distance: one value per node, in ascending node order (the
 * node ids are filled in once every cell is known). */
static void
cell_set_distances (Reader *r, VpaCell *cell, int dfd, const char *path)
{
  char buf[4096];
  g_auto (GStrv) parts = NULL;

  if (read_attr (r, dfd, path, buf, sizeof buf) != 0 || buf[0] == '\0')
    return;
  parts = g_strsplit_set (buf, " \t", -1);
  cell->distances = g_array_new (FALSE, FALSE, sizeof (VpaDistance));
  for (guint i = 0; parts[i] != NULL; i++)
    {
      VpaDistance d;
      guint64 v;

      if (parts[i][0] == '\0')
        continue;
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, G_MAXINT, &v, NULL))
        {
          g_clear_pointer (&cell->distances, g_array_unref);
          return;
        }
      d.node = (gint) cell->distances->len;
      d.value = (guint) v;
      g_array_append_val (cell->distances, d);
    }
}

/* Distances were read by position: give them the node ids. */
static void
number_distances (VpaHost *host)
{
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint i = 0; i < host->cells->len; i++)
    g_array_append_val (ids, g_array_index (host->cells, VpaCell, i).id);
  g_array_sort (ids, uint_cmp);
  for (guint i = 0; i < host->cells->len; i++)
    {
      VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->distances == NULL)
        continue;
      if (c->distances->len != ids->len)
        {
          g_clear_pointer (&c->distances, g_array_unref);
          continue;
        }
      for (guint j = 0; j < c->distances->len; j++)
        g_array_index (c->distances, VpaDistance, j).node = g_array_index (ids, gint, j);
    }
}

/* One node: its CPUs, distances and socket; with capacity its memory
 * and pages too. Without capacity its files are read through nodes_fd
 * ("node3/cpulist"): the node's directory is never opened. */
static gboolean
read_cell (Reader *r, int nodes_fd, const char *nodes_path, const char *name, int cpu_fd,
           const GArray *online, gboolean capacity, GPtrArray *packages, VpaCell *cell,
           GError **error)
{
  g_autofree char *cpulist_path = g_strconcat (name, "/cpulist", NULL);
  g_autofree char *distance_path = g_strconcat (name, "/distance", NULL);
  char cpulist[4096];
  char meminfo[4096];
  int fd = -1;
  int e;

  if (capacity && (fd = openat (nodes_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s: cannot read: %s",
                   nodes_path, name, g_strerror (errno));
      return FALSE;
    }
  e = read_attr (r, nodes_fd, cpulist_path, cpulist, sizeof cpulist);
  if (e == 0 && capacity && read_attr (r, fd, "meminfo", meminfo, sizeof meminfo) == 0)
    cell->memory_kib = meminfo_value (meminfo, "MemTotal:");
  if (e == 0 && capacity)
    cell_set_pages (r, cell, fd);
  if (e == 0)
    cell_set_distances (r, cell, nodes_fd, distance_path);
  if (fd >= 0)
    close (fd);
  if (e == ENOTDIR && !capacity)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s: cannot read: %s",
                   nodes_path, name, g_strerror (e));
      return FALSE;
    }
  if (e != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s/cpulist: cannot read: %s",
                   nodes_path, name, g_strerror (e));
      return FALSE;
    }
  if (!parse_cpulist (cpulist, cell->cpus))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s/%s/cpulist: '%s' is not a CPU list", nodes_path, name, cpulist);
      return FALSE;
    }
  cell_set_socket (r, cell, cpu_fd, online, packages);
  if (capacity)
    cell_set_topo (r, cell, cpu_fd);
  return TRUE;
}

/* Without NUMA (no node directories) libvirt reports one cell 0 holding
 * every CPU and all memory (virCapabilitiesHostNUMAInitFake); do the same
 * from cpu/present and /proc/meminfo. */
static gboolean
add_fake_cell (Reader *r, VpaHost *host, const char *root, int cpu_fd, const GArray *online,
               gboolean capacity, GError **error)
{
  VpaCell cell = { 0, VPA_SOCKET_NONE, g_array_new (FALSE, FALSE, sizeof (guint)), 0 };
  g_autofree char *proc = g_build_filename (root, "proc", NULL);
  char buf[4096];
  int fd;

  if (cpu_fd >= 0 && read_attr (r, cpu_fd, "present", buf, sizeof buf) == 0 &&
      !parse_cpulist (buf, cell.cpus))
    {
      g_array_unref (cell.cpus);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s/%s/present: '%s' is not a CPU list",
                   root, CPU_DIR, buf);
      return FALSE;
    }
  fd = open (proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && read_attr (r, fd, "meminfo", buf, sizeof buf) == 0)
    cell.memory_kib = meminfo_total_kib (buf);
  if (fd >= 0)
    close (fd);
  cell_set_socket (r, &cell, cpu_fd, online, NULL);
  if (capacity)
    cell_set_topo (r, &cell, cpu_fd);
  vpa_host_add_cell (host, &cell);
  return TRUE;
}

static gboolean
read_cells (Reader *r, VpaHost *host, const char *root, int nodes_fd, const char *nodes_path,
            int cpu_fd, const GArray *online, gboolean capacity, GError **error)
{
  g_autoptr (GPtrArray) packages = g_ptr_array_new_with_free_func ((GDestroyNotify) package_free);
  DIR *dir = fdopendir (nodes_fd);
  struct dirent *ent;
  gboolean ok = TRUE;

  if (dir == NULL)
    {
      close (nodes_fd);
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read: %s",
                   nodes_path, g_strerror (errno));
      return FALSE;
    }
  while (ok && (ent = readdir (dir)) != NULL)
    {
      VpaCell cell = { 0, VPA_SOCKET_NONE, NULL, 0 };
      guint64 id;

      if (!g_str_has_prefix (ent->d_name, "node") ||
          !g_ascii_string_to_unsigned (ent->d_name + 4, 10, 0, G_MAXINT, &id, NULL))
        continue;
      cell.id = (gint) id;
      cell.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
      ok = read_cell (r, dirfd (dir), nodes_path, ent->d_name, cpu_fd, online, capacity, packages,
                      &cell, error);
      if (ok)
        vpa_host_add_cell (host, &cell);
      else
        {
          g_array_unref (cell.cpus);
          g_clear_pointer (&cell.pages, g_array_unref);
          g_clear_pointer (&cell.distances, g_array_unref);
        }
    }
  closedir (dir);
  number_distances (host);
  if (ok && host->cells->len == 0)
    return add_fake_cell (r, host, root, cpu_fd, online, capacity, error);
  return ok;
}

/* The cells; with capacity their capacity too: each CPU's core and
 * thread siblings (VpaCell.topo, four files per CPU), each node's memory
 * and pages (meminfo, hugepages), which only a capacity needs (the
 * whole-guest fit, `capacity`, the fleet); without, topo and pages are
 * NULL and memory_kib 0 ("not known"). */
static gboolean
read_topology (Reader *r, VpaHost *host, const char *root, gboolean capacity, GError **error)
{
  g_autofree char *nodes_path = g_build_filename (root, NODE_DIR, NULL);
  g_autofree char *cpu_path = g_build_filename (root, CPU_DIR, NULL);
  int cpu_fd = open (cpu_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int nodes_fd = open (nodes_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int nodes_errno = nodes_fd < 0 ? errno : 0;
  g_autoptr (GArray) online = read_online (r, cpu_fd);
  gboolean ok;

  if (nodes_fd >= 0)
    ok = read_cells (r, host, root, nodes_fd, nodes_path, cpu_fd, online, capacity, error);
  else if (nodes_errno == ENOENT)
    ok = add_fake_cell (r, host, root, cpu_fd, online, capacity, error);
  else
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read: %s", nodes_path,
                   g_strerror (nodes_errno));
      ok = FALSE;
    }
  if (cpu_fd >= 0)
    close (cpu_fd);
  return ok;
}

/* Reads the device at addr unless already read, then its parent PF and
 * the bridges above it (the PCIe tree the host is sealed with). */
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
    e = errno;
  else if (!S_ISDIR (st.st_mode))
    e = ENOTDIR;
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
  ok = ok && read_topology (r, host, root, FALSE, error);
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
  ok = read_devices (r, host, root, error) && read_topology (r, host, root, TRUE, error);
  if (!reader_done (r, ok, error) || !vpa_host_seal (host, error))
    return NULL;
  return g_steal_pointer (&host);
}
