/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * check --live (vpa-live.h): guest RAM found in /proc/PID/maps, a sample
 * of its pages asked of move_pages(2) in query mode, and the CPU each
 * vCPU thread last ran on, per guest cell against its bound nodes.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vpa-live.h"
#include "vpa-types.h"

static void
live_cell_free (gpointer p)
{
  VpaLiveCell *c = p;

  g_array_unref (c->bound);
  g_array_unref (c->vcpus);
  g_free (c);
}

void
vpa_live_report_free (VpaLiveReport *report)
{
  if (report == NULL)
    return;
  g_free (report->domain);
  g_ptr_array_unref (report->cells);
  g_array_unref (report->dev_nodes);
  g_free (report);
}

/* rw-p or rw-s, and no path, a memfd or a hugetlbfs file: where QEMU's
 * memory backends put guest RAM. Files and stacks are left out, and so
 * is anything executable: TCG's code buffer is an anonymous rwx mapping
 * whose size (an eighth of the host's memory) can equal a cell's. */
static gboolean
maps_line_is_ram (const char *perms, const char *path)
{
  if (strncmp (perms, "rw-", 3) != 0 || g_str_has_prefix (path, "/memfd:tcg-jit"))
    return FALSE;
  if (path[0] == '\0')
    return TRUE;
  return g_str_has_prefix (path, "/memfd:") || strstr (path, "hugepages") != NULL ||
         strstr (path, "hugetlbfs") != NULL;
}

/* "LO-HI PERMS OFFSET DEV INODE [PATH]" of /proc/PID/maps: the two
 * addresses (hex), the permissions and where the path starts ("" for an
 * anonymous mapping). */
static gboolean
parse_map_line (char *l, guint64 *lo, guint64 *hi, char perms[8], char **path)
{
  char *end;
  char *p = l;
  gsize k;

  *lo = g_ascii_strtoull (p, &end, 16);
  if (end == p || *end != '-')
    return FALSE;
  p = end + 1;
  *hi = g_ascii_strtoull (p, &end, 16);
  if (end == p || *end != ' ')
    return FALSE;
  p = end + 1;
  k = strcspn (p, " ");
  if (k == 0 || k > 7)
    return FALSE;
  memcpy (perms, p, k);
  perms[k] = '\0';
  p += k;
  for (guint f = 0; f < 3; f++)
    {
      p += strspn (p, " ");
      if (*p == '\0')
        return FALSE;
      p += strcspn (p, " ");
    }
  p += strspn (p, " ");
  *path = p;
  return TRUE;
}

GArray *
vpa_live_maps_parse (const VpaDoc *doc, GError **error)
{
  g_autoptr (GArray) maps = g_array_new (FALSE, FALSE, sizeof (VpaLiveMapping));
  g_autofree char *copy = g_strndup (doc->buf, doc->len);
  g_auto (GStrv) lines = g_strsplit (copy, "\n", VPA_LIVE_MAPS_MAX + 1);
  guint n = g_strv_length (lines);

  if (n > VPA_LIVE_MAPS_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "%s: more than %u mappings", doc->what, VPA_LIVE_MAPS_MAX);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      VpaLiveMapping m;
      char perms[8] = "";
      char *path = NULL;
      guint64 lo, hi;

      if (lines[i][0] == '\0')
        continue;
      if (!parse_map_line (lines[i], &lo, &hi, perms, &path) || hi <= lo)
        {
          g_autofree char *line = vpa_message_bound (lines[i], 120);
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "%s: line %u: not a mapping: '%s'", doc->what, i + 1, line);
          return NULL;
        }
      if (!maps_line_is_ram (perms, g_strchomp (path)))
        continue;
      m.start = lo;
      m.end = hi;
      g_array_append_val (maps, m);
    }
  return g_steal_pointer (&maps);
}

gboolean
vpa_live_stat_cpu (const char *buf, gint *out_cpu)
{
  /* comm may hold spaces and parentheses: fields count from its last ')'. */
  const char *p = strrchr (buf, ')');
  g_auto (GStrv) fields = NULL;
  gint64 cpu;

  if (p == NULL)
    return FALSE;
  fields = g_strsplit_set (p + 1, " \n", 0);
  /* fields[0] is "" (the space after ')'), fields[1] state = field 3. */
  if (g_strv_length (fields) < 38 || !g_ascii_string_to_signed (fields[37], 10, 0, G_MAXINT,
                                                                &cpu, NULL))
    return FALSE;
  *out_cpu = (gint) cpu;
  return TRUE;
}

static gint
int_compare (gconstpointer a, gconstpointer b)
{
  return *(const gint *) a - *(const gint *) b;
}

/* The host node of each CPU, from SYSFS/devices/system/node/nodeN/cpulist. */
static GHashTable *
cpu_nodes (const char *sysfs_root)
{
  GHashTable *nodes = g_hash_table_new (NULL, NULL);

  for (gint n = 0; n < VPA_LIVE_NODES_MAX; n++)
    {
      g_autofree char *path =
        g_strdup_printf ("%s/devices/system/node/node%d/cpulist", sysfs_root, n);
      g_autofree char *text = NULL;
      g_autoptr (VpaBits) cpus = NULL;

      if (!g_file_get_contents (path, &text, NULL, NULL) ||
          (cpus = vpa_cpuset_parse_bits (g_strstrip (text), NULL)) == NULL)
        continue;
      for (gint c = vpa_cpuset_bits_next (cpus, 0); c >= 0; c = vpa_cpuset_bits_next (cpus, c + 1))
        g_hash_table_insert (nodes, GINT_TO_POINTER (c + 1), GINT_TO_POINTER (n + 1));
    }
  return nodes;
}

/* vCPU threads by their names, "CPU 3/KVM", "CPU 3/TCG", or the one
 * "ALL CPUs/TCG" thread of single-threaded TCG (vcpu -1). */
static gboolean
comm_vcpu (const char *comm, gint *out_vcpu)
{
  guint64 id;
  g_autofree char *num = NULL;
  const char *slash;

  if (g_str_has_prefix (comm, "ALL CPUs/"))
    {
      *out_vcpu = -1;
      return TRUE;
    }
  if (!g_str_has_prefix (comm, "CPU ") || (slash = strchr (comm, '/')) == NULL)
    return FALSE;
  num = g_strndup (comm + 4, slash - comm - 4);
  if (!g_ascii_string_to_unsigned (num, 10, 0, G_MAXINT, &id, NULL))
    return FALSE;
  *out_vcpu = (gint) id;
  return TRUE;
}

static GArray *
read_vcpus (int pid, const VpaLiveEnv *env)
{
  GArray *vcpus = g_array_new (FALSE, FALSE, sizeof (VpaLiveVcpu));
  g_autofree char *dir = g_strdup_printf ("%s/%d/task", env->proc_root, pid);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GHashTable) nodes = cpu_nodes (env->sysfs_root);
  const char *tid;
  guint seen = 0;

  while (d != NULL && seen++ < VPA_LIVE_THREADS_MAX && (tid = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *comm_path = g_build_filename (dir, tid, "comm", NULL);
      g_autofree char *stat_path = g_build_filename (dir, tid, "stat", NULL);
      g_autofree char *comm = NULL;
      g_autofree char *stat = NULL;
      VpaLiveVcpu v;

      if (!g_file_get_contents (comm_path, &comm, NULL, NULL) ||
          !comm_vcpu (g_strchomp (comm), &v.vcpu) ||
          !g_file_get_contents (stat_path, &stat, NULL, NULL) ||
          !vpa_live_stat_cpu (stat, &v.cpu))
        continue;
      v.node = GPOINTER_TO_INT (g_hash_table_lookup (nodes, GINT_TO_POINTER (v.cpu + 1))) - 1;
      g_array_append_val (vcpus, v);
    }
  return vcpus;
}

static int
numa_query (int pid, gulong count, void **pages, int *status, gpointer user_data)
{
  if (numa_available () < 0)
    {
      errno = ENOSYS;
      return -1;
    }
  return numa_move_pages (pid, count, pages, NULL, status, 0);
}

/* The cell's mapping: one of exactly its size (the highest unused: QEMU
 * makes the cells' backends in order and mmap places each below the
 * last), else the smallest larger one (an adjacent mapping merged). */
static gint
pick_mapping (GArray *maps, gboolean *used, guint64 size)
{
  gint best = -1;

  for (guint i = 0; i < maps->len; i++)
    {
      const VpaLiveMapping *m = &g_array_index (maps, VpaLiveMapping, i);
      if (!used[i] && m->end - m->start == size)
        best = i;
    }
  for (guint i = 0; best < 0 && i < maps->len; i++)
    {
      const VpaLiveMapping *m = &g_array_index (maps, VpaLiveMapping, i);
      guint64 s = m->end - m->start;

      if (!used[i] && s > size)
        {
          guint j;
          for (j = 0; j < maps->len; j++)
            {
              const VpaLiveMapping *o = &g_array_index (maps, VpaLiveMapping, j);
              if (!used[j] && o->end - o->start > size && o->end - o->start < s)
                break;
            }
          if (j == maps->len)
            best = i;
        }
    }
  return best;
}

static gboolean
sample_cell (VpaLiveCell *c, int pid, const VpaLiveEnv *env, GError **error)
{
  gsize page = env->page_size != 0 ? env->page_size : (gsize) sysconf (_SC_PAGESIZE);
  guint64 pages = c->size / page;
  guint n = MIN (pages, VPA_LIVE_SAMPLE_MAX);
  g_autofree void **addrs = g_new0 (void *, MAX (n, 1));
  g_autofree int *status = g_new0 (int, MAX (n, 1));
  VpaLivePageQuery query = env->query != NULL ? env->query : numa_query;

  for (guint i = 0; i < n; i++)
    addrs[i] = GSIZE_TO_POINTER (c->start + (pages / n) * i * page);
  if (n > 0 && query (pid, n, addrs, status, env->query_data) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "process %d: cannot query the nodes of cell %u's pages at 0x%" G_GINT64_MODIFIER
                   "x: %s",
                   pid, c->cell, c->start, g_strerror (errno));
      return FALSE;
    }
  c->sampled = n;
  for (guint i = 0; i < n; i++)
    {
      if (status[i] >= 0 && status[i] < VPA_LIVE_NODES_MAX)
        {
          c->resident++;
          c->on_node[status[i]]++;
        }
    }
  return TRUE;
}

static GArray *
bits_nodes (const VpaBits *bits)
{
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (gint));

  for (gint n = bits != NULL ? vpa_cpuset_bits_next (bits, 0) : -1; n >= 0;
       n = vpa_cpuset_bits_next (bits, n + 1))
    g_array_append_val (nodes, n);
  return nodes;
}

/* The cell's bound nodes: its nodeset, else its vpa:placed-cell node. */
static GArray *
cell_bound (const VpaDomain *dom, const VpaDomainCell *cell)
{
  GArray *nodes = bits_nodes (cell != NULL ? vpa_domain_model_cell_nodeset (dom, cell)
                                           : dom->memory_nodeset);

  for (guint i = 0; nodes->len == 0 && dom->placed_cells != NULL && cell != NULL &&
                    i < dom->placed_cells->len;
       i++)
    {
      const VpaPlacedCell *pc = &g_array_index (dom->placed_cells, VpaPlacedCell, i);
      if (pc->cell == cell->id && pc->node >= 0)
        g_array_append_val (nodes, pc->node);
    }
  return nodes;
}

static void
cell_verdict (VpaLiveCell *c)
{
  guint on = 0;

  if (c->bound->len == 0)
    return;
  for (guint i = 0; i < c->bound->len; i++)
    {
      gint n = g_array_index (c->bound, gint, i);
      if (n < VPA_LIVE_NODES_MAX)
        on += c->on_node[n];
    }
  /* Off: more than half the resident sample elsewhere, or nothing
   * resident to tell (fail closed). */
  c->off = c->resident == 0 || (c->resident - on) * 2 > c->resident;
}

static void
cell_vcpus (VpaLiveCell *c, const VpaDomainCell *cell, GArray *threads)
{
  for (guint i = 0; i < threads->len; i++)
    {
      const VpaLiveVcpu *v = &g_array_index (threads, VpaLiveVcpu, i);
      if (v->vcpu < 0 || cell == NULL || vpa_cpuset_bits_has (cell->vcpus, v->vcpu))
        g_array_append_val (c->vcpus, *v);
    }
}

static GArray *
device_nodes (const VpaDomain *dom)
{
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint i = 0; dom->placed != NULL && i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *r = g_ptr_array_index (dom->placed, i);
      gboolean have = FALSE;

      for (guint j = 0; j < nodes->len; j++)
        have = have || g_array_index (nodes, gint, j) == r->numa_node;
      if (r->numa_node >= 0 && !have)
        g_array_append_val (nodes, r->numa_node);
    }
  g_array_sort (nodes, int_compare);
  return nodes;
}

VpaLiveReport *
vpa_live_check (const VpaDomain *dom, int pid, const VpaLiveEnv *env, GError **error)
{
  g_autoptr (VpaLiveReport) r = g_new0 (VpaLiveReport, 1);
  g_autofree char *maps_path = g_strdup_printf ("%s/%d/maps", env->proc_root, pid);
  g_autofree char *buf = NULL;
  g_autoptr (GArray) maps = NULL;
  g_autoptr (GArray) threads = NULL;
  g_autofree gboolean *used = NULL;
  guint ncells = dom->cells->len > 0 ? dom->cells->len : 1;
  gsize len;

  r->domain = g_strdup (dom->name != NULL ? dom->name : "(unnamed)");
  r->pid = pid;
  r->cells = g_ptr_array_new_with_free_func (live_cell_free);
  r->dev_nodes = device_nodes (dom);
  r->ok = TRUE;
  if (!g_file_get_contents (maps_path, &buf, &len, NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "domain '%s': cannot read %s: is it running?", r->domain, maps_path);
      return NULL;
    }
  if ((maps = vpa_live_maps_parse (&(VpaDoc){ buf, len, maps_path }, error)) == NULL)
    return NULL;
  used = g_new0 (gboolean, maps->len + 1);
  threads = read_vcpus (pid, env);
  for (guint i = 0; i < ncells; i++)
    {
      const VpaDomainCell *cell = dom->cells->len > 0 ? g_ptr_array_index (dom->cells, i) : NULL;
      VpaLiveCell *c = g_new0 (VpaLiveCell, 1);
      guint64 kib = cell != NULL ? cell->memory_kib : dom->memory_kib;
      gint m;

      c->cell = cell != NULL ? cell->id : 0;
      c->bound = cell_bound (dom, cell);
      c->vcpus = g_array_new (FALSE, FALSE, sizeof (VpaLiveVcpu));
      g_ptr_array_add (r->cells, c);
      if ((m = pick_mapping (maps, used, kib * 1024)) < 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "domain '%s': %s: no mapping of cell %u's memory (%" G_GUINT64_FORMAT
                       " KiB)",
                       r->domain, maps_path, c->cell, kib);
          return NULL;
        }
      used[m] = TRUE;
      c->start = g_array_index (maps, VpaLiveMapping, m).start;
      c->size = g_array_index (maps, VpaLiveMapping, m).end - c->start;
      if (!sample_cell (c, pid, env, error))
        return NULL;
      cell_verdict (c);
      cell_vcpus (c, cell, threads);
      r->ok = r->ok && !c->off;
    }
  return g_steal_pointer (&r);
}

static void append_nodes (GString *s, GArray *nodes, const char *sep);

char *
vpa_live_failure (const VpaLiveReport *r)
{
  for (guint i = 0; i < r->cells->len; i++)
    {
      const VpaLiveCell *c = g_ptr_array_index (r->cells, i);
      GString *s;
      guint on = 0;

      if (!c->off)
        continue;
      s = g_string_new (NULL);
      if (c->resident == 0)
        {
          g_string_append_printf (s, "cell %u: none of %u sampled pages resident, bound node ",
                                  c->cell, c->sampled);
          append_nodes (s, c->bound, ",");
          return g_string_free (s, FALSE);
        }
      for (guint j = 0; j < c->bound->len; j++)
        on += c->on_node[g_array_index (c->bound, gint, j)];
      g_string_append_printf (s, "cell %u: %.0f%% of %u resident sampled pages off bound node ",
                              c->cell, 100.0 * (c->resident - on) / c->resident, c->resident);
      append_nodes (s, c->bound, ",");
      return g_string_free (s, FALSE);
    }
  return NULL;
}

static void
append_nodes (GString *s, GArray *nodes, const char *sep)
{
  for (guint i = 0; i < nodes->len; i++)
    g_string_append_printf (s, "%s%d", i > 0 ? sep : "", g_array_index (nodes, gint, i));
  if (nodes->len == 0)
    g_string_append (s, "-");
}

static void
format_text_cell (GString *s, const VpaLiveReport *r, const VpaLiveCell *c)
{
  g_string_append_printf (s, "%s: cell %u: bound ", c->off ? "FAIL" : "OK", c->cell);
  append_nodes (s, c->bound, ",");
  g_string_append_printf (s, ": %u/%u sampled pages resident:", c->resident, c->sampled);
  for (guint n = 0; n < VPA_LIVE_NODES_MAX; n++)
    {
      if (c->on_node[n] > 0)
        g_string_append_printf (s, " node %u %.0f%%", n, 100.0 * c->on_node[n] / c->resident);
    }
  g_string_append (s, "; vCPUs:");
  for (guint i = 0; i < c->vcpus->len; i++)
    {
      const VpaLiveVcpu *v = &g_array_index (c->vcpus, VpaLiveVcpu, i);
      if (v->vcpu < 0)
        {
          g_string_append_printf (s, " all on CPU %d (node %d)", v->cpu, v->node);
        }
      else
        {
          g_string_append_printf (s, " %d on CPU %d (node %d)", v->vcpu, v->cpu, v->node);
        }
    }
  if (c->vcpus->len == 0)
    g_string_append (s, " -");
  g_string_append (s, "; devices on node ");
  append_nodes (s, r->dev_nodes, ",");
  g_string_append_c (s, '\n');
}

static void
format_json_cell (GString *s, const VpaLiveReport *r, const VpaLiveCell *c, gboolean last)
{
  gboolean first = TRUE;

  g_string_append_printf (s, "    {\"cell\": %u, \"ok\": %s, \"bound\": [", c->cell,
                          c->off ? "false" : "true");
  append_nodes (s, c->bound, ", ");
  if (c->bound->len == 0)
    g_string_truncate (s, s->len - 1);
  g_string_append_printf (s, "], \"sampled\": %u, \"resident\": %u, \"nodes\": {", c->sampled,
                          c->resident);
  for (guint n = 0; n < VPA_LIVE_NODES_MAX; n++)
    {
      if (c->on_node[n] > 0)
        {
          g_string_append_printf (s, "%s\"%u\": %u", first ? "" : ", ", n, c->on_node[n]);
          first = FALSE;
        }
    }
  g_string_append (s, "}, \"vcpus\": [");
  for (guint i = 0; i < c->vcpus->len; i++)
    {
      const VpaLiveVcpu *v = &g_array_index (c->vcpus, VpaLiveVcpu, i);
      g_string_append_printf (s, "%s{\"vcpu\": %d, \"cpu\": %d, \"node\": %d}", i > 0 ? ", " : "",
                              v->vcpu, v->cpu, v->node);
    }
  g_string_append_printf (s, "]}%s\n", last ? "" : ",");
}

static void
format_metrics (GString *s, const VpaLiveReport *r)
{
  g_autofree char *dom = g_strescape (r->domain, NULL);

  g_string_append (s, "# HELP virt_pci_affinity_live_cell_pages Sampled resident guest pages "
                      "of a cell per host node.\n"
                      "# TYPE virt_pci_affinity_live_cell_pages gauge\n");
  for (guint i = 0; i < r->cells->len; i++)
    {
      const VpaLiveCell *c = g_ptr_array_index (r->cells, i);
      for (guint n = 0; n < VPA_LIVE_NODES_MAX; n++)
        {
          if (c->on_node[n] > 0)
            {
              g_string_append_printf (s, "virt_pci_affinity_live_cell_pages{domain=\"%s\",cell=\"%u\",node=\"%u\"} %u\n",
                                      dom, c->cell, n, c->on_node[n]);
            }
        }
    }
  g_string_append (s, "# HELP virt_pci_affinity_live_cell_off_node 1 when more than half a "
                      "cell's resident sample is off its bound nodes.\n"
                      "# TYPE virt_pci_affinity_live_cell_off_node gauge\n");
  for (guint i = 0; i < r->cells->len; i++)
    {
      const VpaLiveCell *c = g_ptr_array_index (r->cells, i);
      g_string_append_printf (s, "virt_pci_affinity_live_cell_off_node{domain=\"%s\",cell=\"%u\"} %d\n", dom,
                              c->cell, c->off ? 1 : 0);
    }
  g_string_append (s, "# EOF\n");
}

char *
vpa_live_format (const VpaLiveReport *r, const char *format)
{
  GString *s = g_string_new (NULL);

  if (g_strcmp0 (format, "openmetrics") == 0)
    {
      format_metrics (s, r);
    }
  else if (g_strcmp0 (format, "json") == 0)
    {
      g_autofree char *dom = g_strescape (r->domain, NULL);
      g_string_append_printf (s, "{\"domain\": \"%s\", \"pid\": %d, \"ok\": %s, \"devices\": [",
                              dom, r->pid, r->ok ? "true" : "false");
      append_nodes (s, r->dev_nodes, ", ");
      if (r->dev_nodes->len == 0)
        g_string_truncate (s, s->len - 1);
      g_string_append (s, "], \"cells\": [\n");
      for (guint i = 0; i < r->cells->len; i++)
        format_json_cell (s, r, g_ptr_array_index (r->cells, i), i + 1 == r->cells->len);
      g_string_append (s, "]}\n");
    }
  else
    {
      for (guint i = 0; i < r->cells->len; i++)
        format_text_cell (s, r, g_ptr_array_index (r->cells, i));
    }
  return g_string_free (s, FALSE);
}
