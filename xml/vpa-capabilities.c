/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The NUMA cells of `virsh capabilities`:
 * <host><topology><cells><cell id><memory unit><cpus><cpu id socket_id>.
 * A cell's socket follows Nova's _get_host_numa_topology: the one
 * socket_id all its CPUs share, else none (libvirt prints an offline CPU
 * without socket_id, which Nova counts as None).
 */
#include "vpa-capabilities.h"
#include "vpa-cpuset.h"
#include "vpa-xml.h"

#include <errno.h>

static gboolean
parse_uint (const char *s, guint64 max, guint64 *out)
{
  guint64 v;
  char *end = NULL;

  if (s == NULL)
    return FALSE;
  while (g_ascii_isspace (*s))
    s++;
  if (!g_ascii_isdigit (*s))
    return FALSE;
  errno = 0;
  v = g_ascii_strtoull (s, &end, 10);
  if (errno != 0 || v > max)
    return FALSE;
  while (g_ascii_isspace (*end))
    end++;
  if (*end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

/* libvirt's scaled-integer units (virScaleInteger). */
gboolean
vpa_capabilities_unit_scale (const char *unit, guint64 *scale)
{
  static const struct {
    const char *name;
    guint64 scale;
  } units[] = {
    { "b", 1 },
    { "bytes", 1 },
    { "KB", 1000 },
    { "k", 1024 },
    { "KiB", 1024 },
    { "MB", 1000000 },
    { "M", 1 << 20 },
    { "MiB", 1 << 20 },
    { "GB", 1000000000 },
    { "G", 1 << 30 },
    { "GiB", 1 << 30 },
    { "TB", G_GUINT64_CONSTANT (1000000000000) },
    { "T", G_GUINT64_CONSTANT (1) << 40 },
    { "TiB", G_GUINT64_CONSTANT (1) << 40 },
  };

  if (unit == NULL)
    {
      *scale = 1024;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    {
      if (g_ascii_strcasecmp (unit, units[i].name) == 0)
        {
          *scale = units[i].scale;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
parse_memory (xmlNode *mem, const char *what, gint id, guint64 *kib, GError **error)
{
  g_autofree char *unit = vpa_xml_prop (mem, "unit");
  g_autofree char *text = vpa_xml_text (mem);
  guint64 scale, v;

  if (!vpa_capabilities_unit_scale (unit, &scale))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <cell id='%d'>: <memory unit='%s'> is not a known unit", what,
                   id, unit);
      return FALSE;
    }
  if (!parse_uint (text, G_MAXUINT64 / scale, &v))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <cell id='%d'>: <memory> '%s' is not a decimal size", what, id,
                   text != NULL ? text : "");
      return FALSE;
    }
  *kib = v * scale / 1024;
  return TRUE;
}

/* core_id and siblings of one <cpu>. libvirt prints an offline CPU with
 * no attributes but its id. */
static gboolean
parse_cpu_topo (xmlNode *c, const char *what, gint cell, guint cpu, gint socket,
                VpaCpuTopo *t, GError **error)
{
  g_autofree char *core_s = vpa_xml_prop (c, "core_id");
  g_autofree char *sib_s = vpa_xml_prop (c, "siblings");
  g_autoptr (GArray) sibs = NULL;
  g_autoptr (GError) local = NULL;
  guint64 core;

  t->online = socket >= 0 || core_s != NULL || sib_s != NULL;
  t->socket = socket;
  t->core = -1;
  t->siblings = cpu;
  if (core_s != NULL)
    {
      if (!parse_uint (core_s, G_MAXINT, &core))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cell id='%d'>: <cpu id='%u' core_id='%s'> is not a core number", what, cell, cpu, core_s);
          return FALSE;
        }
      t->core = (gint) core;
    }
  if (sib_s != NULL)
    {
      if (!vpa_cpuset_parse (sib_s, &sibs, &local))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cell id='%d'>: <cpu id='%u' siblings='%s'>: %s", what, cell, cpu, sib_s, local->message);
          return FALSE;
        }
      t->siblings = MIN (cpu, g_array_index (sibs, guint, 0));
    }
  return TRUE;
}

/* Sorts cpus ascending, keeping topo parallel. */
static void
sort_cpus (GArray *cpus, GArray *topo)
{
  for (guint i = 1; i < cpus->len; i++)
    {
      for (guint j = i; j > 0 && g_array_index (cpus, guint, j - 1) > g_array_index (cpus, guint, j); j--)
        {
          guint c = g_array_index (cpus, guint, j);
          VpaCpuTopo t = g_array_index (topo, VpaCpuTopo, j);
          g_array_index (cpus, guint, j) = g_array_index (cpus, guint, j - 1);
          g_array_index (topo, VpaCpuTopo, j) = g_array_index (topo, VpaCpuTopo, j - 1);
          g_array_index (cpus, guint, j - 1) = c;
          g_array_index (topo, VpaCpuTopo, j - 1) = t;
        }
    }
}

/* <pages unit size>COUNT</pages>: the cell's pages per size. */
static gboolean
parse_pages (xmlNode *node, const char *what, VpaCell *cell, GError **error)
{
  g_autoptr (GArray) pages = g_array_new (FALSE, FALSE, sizeof (VpaPages));

  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      g_autofree char *unit = NULL;
      g_autofree char *size_s = NULL;
      g_autofree char *text = NULL;
      guint64 scale, size, count;
      VpaPages p;

      if (!vpa_xml_is (c, "pages", NULL))
        continue;
      unit = vpa_xml_prop (c, "unit");
      size_s = vpa_xml_prop (c, "size");
      text = vpa_xml_text (c);
      if (!vpa_capabilities_unit_scale (unit, &scale) || !parse_uint (size_s, G_MAXUINT64 / scale, &size) ||
          size * scale < 1024 || !parse_uint (text, G_MAXUINT64, &count))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cell id='%d'>: <pages unit='%s' size='%s'>%s</pages> is not a page count", what, cell->id, unit != NULL ? unit : "KiB", size_s != NULL ? size_s : "", text != NULL ? text : "");
          return FALSE;
        }
      p.size_kib = size * scale / 1024;
      p.total = p.free = count;
      {
        /* Our snapshots' extension: free pages where they differ. */
        g_autofree char *free_s = vpa_xml_prop (c, "free");
        guint64 f;
        if (free_s != NULL && parse_uint (free_s, count, &f))
          p.free = f;
      }
      g_array_append_val (pages, p);
    }
  for (guint i = 1; i < pages->len; i++)
    {
      for (guint j = i; j > 0 && g_array_index (pages, VpaPages, j - 1).size_kib > g_array_index (pages, VpaPages, j).size_kib; j--)
        {
          VpaPages t = g_array_index (pages, VpaPages, j);
          g_array_index (pages, VpaPages, j) = g_array_index (pages, VpaPages, j - 1);
          g_array_index (pages, VpaPages, j - 1) = t;
        }
    }
  if (pages->len > 0)
    cell->pages = g_steal_pointer (&pages);
  return TRUE;
}

/* <distances><sibling id value/></distances> */
static gboolean
parse_distances (xmlNode *node, const char *what, VpaCell *cell, GError **error)
{
  g_autoptr (GArray) dist = g_array_new (FALSE, FALSE, sizeof (VpaDistance));

  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      g_autofree char *id_s = NULL;
      g_autofree char *value_s = NULL;
      guint64 id, value;
      VpaDistance d;

      if (!vpa_xml_is (c, "sibling", NULL))
        continue;
      id_s = vpa_xml_prop (c, "id");
      value_s = vpa_xml_prop (c, "value");
      if (!parse_uint (id_s, G_MAXINT, &id) || !parse_uint (value_s, G_MAXINT, &value))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cell id='%d'>: <distances><sibling id='%s' value='%s'> is not a node distance", what, cell->id, id_s != NULL ? id_s : "", value_s != NULL ? value_s : "");
          return FALSE;
        }
      d.node = (gint) id;
      d.value = (guint) value;
      g_array_append_val (dist, d);
    }
  if (dist->len > 0)
    cell->distances = g_steal_pointer (&dist);
  return TRUE;
}

/* <cpus><cpu id='N' socket_id='S'/>...: fills cell->cpus (ascending) and
 * cell->socket. */
static gboolean
parse_cpus (xmlNode *cpus, const char *what, VpaCell *cell, GError **error)
{
  g_autoptr (GArray) sockets = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GArray) topo = g_array_new (FALSE, FALSE, sizeof (VpaCpuTopo));

  for (xmlNode *c = cpus->children; c != NULL; c = c->next)
    {
      g_autofree char *id_s = NULL;
      g_autofree char *sock_s = NULL;
      guint64 id, sock;
      guint cpu;
      gint socket = -1;
      VpaCpuTopo t;

      if (!vpa_xml_is (c, "cpu", NULL))
        continue;
      id_s = vpa_xml_prop (c, "id");
      if (!parse_uint (id_s, G_MAXINT, &id))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cell id='%d'>: <cpu id='%s'> is not a CPU number", what,
                       cell->id, id_s != NULL ? id_s : "");
          return FALSE;
        }
      sock_s = vpa_xml_prop (c, "socket_id");
      if (sock_s != NULL)
        {
          if (!parse_uint (sock_s, G_MAXINT, &sock))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: <cell id='%d'>: <cpu id='%s' socket_id='%s'> is not a socket number",
                           what, cell->id, id_s, sock_s);
              return FALSE;
            }
          socket = (gint) sock;
        }
      cpu = (guint) id;
      if (!parse_cpu_topo (c, what, cell->id, cpu, socket, &t, error))
        return FALSE;
      g_array_append_val (cell->cpus, cpu);
      g_array_append_val (sockets, socket);
      g_array_append_val (topo, t);
    }

  sort_cpus (cell->cpus, topo);
  for (guint i = 1; i < cell->cpus->len; i++)
    {
      if (g_array_index (cell->cpus, guint, i) == g_array_index (cell->cpus, guint, i - 1))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cell id='%d'>: <cpu id='%u'> appears twice", what, cell->id,
                       g_array_index (cell->cpus, guint, i));
          return FALSE;
        }
    }
  cell->socket = vpa_cell_socket_from_cpu_sockets ((const gint *) sockets->data,
                                                   sockets->len);
  cell->topo = g_steal_pointer (&topo);
  return TRUE;
}

static gboolean
parse_cell (xmlNode *node, const char *what, VpaCell *cell, GError **error)
{
  g_autofree char *id_s = vpa_xml_prop (node, "id");
  guint64 id;
  xmlNode *c;

  if (!parse_uint (id_s, G_MAXINT, &id))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <cell id='%s'> in <capabilities> is not a NUMA cell number", what,
                   id_s != NULL ? id_s : "");
      return FALSE;
    }
  cell->id = (gint) id;
  cell->socket = VPA_SOCKET_NONE;
  cell->cpus = g_array_new (FALSE, FALSE, sizeof (guint));

  if ((c = vpa_xml_child (node, "memory", NULL)) != NULL &&
      !parse_memory (c, what, cell->id, &cell->memory_kib, error))
    return FALSE;
  if ((c = vpa_xml_child (node, "cpus", NULL)) != NULL &&
      !parse_cpus (c, what, cell, error))
    return FALSE;
  if (!parse_pages (node, what, cell, error))
    return FALSE;
  if ((c = vpa_xml_child (node, "distances", NULL)) != NULL &&
      !parse_distances (c, what, cell, error))
    return FALSE;
  return TRUE;
}

static void
cell_clear (gpointer data)
{
  VpaCell *cell = data;
  g_clear_pointer (&cell->cpus, g_array_unref);
  g_clear_pointer (&cell->topo, g_array_unref);
  g_clear_pointer (&cell->pages, g_array_unref);
  g_clear_pointer (&cell->distances, g_array_unref);
}

gboolean
vpa_capabilities_parse (xmlNode *caps, const char *what, VpaHost *host,
                        GError **error)
{
  g_autoptr (GArray) cells = NULL;
  xmlNode *node;

  g_return_val_if_fail (caps != NULL && host != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!vpa_xml_is (caps, "capabilities", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: expected a <capabilities> element, not <%s>", what,
                   (const char *) caps->name);
      return FALSE;
    }
  /* No topology is not an error here: whoever needs cells decides. */
  if ((node = vpa_xml_child (caps, "host", NULL)) == NULL ||
      (node = vpa_xml_child (node, "topology", NULL)) == NULL ||
      (node = vpa_xml_child (node, "cells", NULL)) == NULL)
    return TRUE;

  /* Parsed aside and added at the end, so a failure leaves host as it was. */
  cells = g_array_new (FALSE, TRUE, sizeof (VpaCell));
  g_array_set_clear_func (cells, cell_clear);
  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      VpaCell cell = { 0 };

      if (!vpa_xml_is (c, "cell", NULL))
        continue;
      g_array_append_val (cells, cell);
      if (!parse_cell (c, what, &g_array_index (cells, VpaCell, cells->len - 1), error))
        return FALSE;
    }

  for (guint i = 0; i < cells->len; i++)
    {
      VpaCell *cell = &g_array_index (cells, VpaCell, i);
      vpa_host_add_cell (host, cell);
      cell->cpus = cell->topo = cell->pages = cell->distances = NULL;
    }
  return TRUE;
}
