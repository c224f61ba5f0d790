/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The "sysfs:ROOT" source's topology: NUMA cells from
 * ROOT/sys/devices/system/node with their CPUs, sockets and distances
 * and, for a capacity, their SMT siblings, memory and huge pages (a host
 * without NUMA gets one cell of every online CPU).
 */
#include "vpa-sysfs.h"
#include "vpa-sysfs-private.h"
#include "vpa-file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    {
      if (n == 0 || g_array_index (cpus, guint, i) != g_array_index (cpus, guint, n - 1))
        g_array_index (cpus, guint, n++) = g_array_index (cpus, guint, i);
    }
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
  if (vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) == 0 && strcmp (buf, "0") == 0)
    return -1;
  g_snprintf (path, sizeof path, "cpu%u/topology/physical_package_id", cpu);
  if (vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) != 0 ||
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
  if (vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) != 0 ||
      !g_ascii_string_to_signed (buf, 10, -1, G_MAXINT, &v, NULL))
    return -2;
  g_snprintf (path, sizeof path, "cpu%u/topology/package_cpus_list", first);
  if (vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) != 0)
    {
      g_snprintf (path, sizeof path, "cpu%u/topology/core_siblings_list", first);
      if (vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) != 0)
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

  if (cpu_fd < 0 || vpa_sysfs_read_attr (r, cpu_fd, "online", buf, sizeof buf) != 0 ||
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
      if (t.online && vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) == 0 &&
          g_ascii_string_to_signed (buf, 10, 0, G_MAXINT, &v, NULL))
        t.core = (gint) v;
      g_snprintf (path, sizeof path, "cpu%u/topology/thread_siblings_list", cpu);
      if (t.online && vpa_sysfs_read_attr (r, cpu_fd, path, buf, sizeof buf) == 0)
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
      if (vpa_sysfs_read_attr (r, dirfd (dir), path, buf, sizeof buf) == 0 &&
          g_ascii_string_to_unsigned (buf, 10, 0, G_MAXUINT32, &v, NULL))
        p.total = v;
      g_snprintf (path, sizeof path, "%s/free_hugepages", ent->d_name);
      p.free = p.total;
      if (vpa_sysfs_read_attr (r, dirfd (dir), path, buf, sizeof buf) == 0 &&
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

  if (vpa_sysfs_read_attr (r, dfd, path, buf, sizeof buf) != 0 || buf[0] == '\0')
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

/* One walk over the node directories: what every node's read takes. */
typedef struct {
  Reader *r;
  const char *root;
  const char *nodes_path;
  int cpu_fd;
  const GArray *online;
  gboolean capacity;
} Walk;

/* One node: its CPUs, distances and socket; with capacity its memory
 * and pages too. Without capacity its files are read through nodes_fd
 * ("node3/cpulist"): the node's directory is never opened. */
static gboolean
read_cell (const Walk *w, int nodes_fd, const char *name, GPtrArray *packages, VpaCell *cell,
           GError **error)
{
  g_autofree char *cpulist_path = g_strconcat (name, "/cpulist", NULL);
  g_autofree char *distance_path = g_strconcat (name, "/distance", NULL);
  char cpulist[4096];
  char meminfo[4096];
  int fd = -1;
  int e;

  if (w->capacity && (fd = openat (nodes_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s: cannot read: %s",
                   w->nodes_path, name, g_strerror (errno));
      return FALSE;
    }
  e = vpa_sysfs_read_attr (w->r, nodes_fd, cpulist_path, cpulist, sizeof cpulist);
  if (e == 0 && w->capacity && vpa_sysfs_read_attr (w->r, fd, "meminfo", meminfo, sizeof meminfo) == 0)
    cell->memory_kib = meminfo_value (meminfo, "MemTotal:");
  if (e == 0 && w->capacity)
    cell_set_pages (w->r, cell, fd);
  if (e == 0)
    cell_set_distances (w->r, cell, nodes_fd, distance_path);
  if (fd >= 0)
    close (fd);
  if (e == ENOTDIR && !w->capacity)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s: cannot read: %s",
                   w->nodes_path, name, g_strerror (e));
      return FALSE;
    }
  if (e != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s/%s/cpulist: cannot read: %s",
                   w->nodes_path, name, g_strerror (e));
      return FALSE;
    }
  if (!parse_cpulist (cpulist, cell->cpus))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s/%s/cpulist: '%s' is not a CPU list", w->nodes_path, name, cpulist);
      return FALSE;
    }
  cell_set_socket (w->r, cell, w->cpu_fd, w->online, packages);
  if (w->capacity)
    cell_set_topo (w->r, cell, w->cpu_fd);
  return TRUE;
}

/* Without NUMA (no node directories) libvirt reports one cell 0 holding
 * every CPU and all memory (virCapabilitiesHostNUMAInitFake); do the same
 * from cpu/present and /proc/meminfo. */
static gboolean
add_fake_cell (const Walk *w, VpaHost *host, GError **error)
{
  VpaCell cell = { 0, VPA_SOCKET_NONE, g_array_new (FALSE, FALSE, sizeof (guint)), 0 };
  g_autofree char *proc = g_build_filename (w->root, "proc", NULL);
  char buf[4096];
  int fd;

  if (w->cpu_fd >= 0 && vpa_sysfs_read_attr (w->r, w->cpu_fd, "present", buf, sizeof buf) == 0 &&
      !parse_cpulist (buf, cell.cpus))
    {
      g_array_unref (cell.cpus);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s/%s/present: '%s' is not a CPU list",
                   w->root, CPU_DIR, buf);
      return FALSE;
    }
  fd = open (proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && vpa_sysfs_read_attr (w->r, fd, "meminfo", buf, sizeof buf) == 0)
    cell.memory_kib = meminfo_total_kib (buf);
  if (fd >= 0)
    close (fd);
  cell_set_socket (w->r, &cell, w->cpu_fd, w->online, NULL);
  if (w->capacity)
    cell_set_topo (w->r, &cell, w->cpu_fd);
  vpa_host_add_cell (host, &cell);
  return TRUE;
}

static gboolean
read_cells (const Walk *w, VpaHost *host, int nodes_fd, GError **error)
{
  g_autoptr (GPtrArray) packages = g_ptr_array_new_with_free_func ((GDestroyNotify) package_free);
  DIR *dir = fdopendir (nodes_fd);
  struct dirent *ent;
  gboolean ok = TRUE;

  if (dir == NULL)
    {
      close (nodes_fd);
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read: %s",
                   w->nodes_path, g_strerror (errno));
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
      ok = read_cell (w, dirfd (dir), ent->d_name, packages, &cell, error);
      if (ok)
        {
          vpa_host_add_cell (host, &cell);
        }
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
    return add_fake_cell (w, host, error);
  return ok;
}

/* The cells; with capacity their capacity too: each CPU's core and
 * thread siblings (VpaCell.topo, four files per CPU), each node's memory
 * and pages (meminfo, hugepages), which only a capacity needs (the
 * whole-guest fit, `capacity`, the fleet); without, topo and pages are
 * NULL and memory_kib 0 ("not known"). */
gboolean
vpa_sysfs_topology_read (Reader *r, VpaHost *host, const char *root, gboolean capacity, GError **error)
{
  g_autofree char *nodes_path = g_build_filename (root, NODE_DIR, NULL);
  g_autofree char *cpu_path = g_build_filename (root, CPU_DIR, NULL);
  int cpu_fd = open (cpu_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int nodes_fd = open (nodes_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int nodes_errno = nodes_fd < 0 ? errno : 0;
  g_autoptr (GArray) online = read_online (r, cpu_fd);
  gboolean ok;

  Walk w = { r, root, nodes_path, cpu_fd, online, capacity };

  if (nodes_fd >= 0)
    {
      ok = read_cells (&w, host, nodes_fd, error);
    }
  else if (nodes_errno == ENOENT)
    {
      ok = add_fake_cell (&w, host, error);
    }
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
