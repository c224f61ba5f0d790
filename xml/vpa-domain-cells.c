/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A domain's guest NUMA cells (vpa-domain.h): <cpu><numa> cells, their
 * memory, <numatune> and the pins of their vCPUs.
 */
#include "vpa-domain-private.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Guest NUMA cells                                                    */
/* ------------------------------------------------------------------ */

/* A set-valued attribute of libvirt's content; *out stays NULL when it is
 * absent, or bad in a domain we do not manage. */
static gboolean
parse_set_attr (ParseCtx *ctx, xmlNode *node, const char *attr, const char *label,
                VpaBits **out, GError **error)
{
  g_autofree char *s = vpa_xml_prop (node, attr);
  g_autoptr (GError) local = NULL;

  *out = NULL;
  if (s == NULL || (*out = vpa_cpuset_parse_bits (s, &local)) != NULL)
    return TRUE;
  if (!ctx->strict)
    {
      g_debug ("%s: %s %s: %s", ctx->what, label, attr, local->message);
      return TRUE;
    }
  /* vpa_cpuset_parse's errors are VPA_ERROR_INVALID already. */
  g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: %s %s: ", ctx->what, label,
                              attr);
  return FALSE;
}

/* An id attribute of libvirt's content; *found is FALSE when it is
 * absent, or bad in a domain we do not manage. */
static gboolean
parse_id_attr (ParseCtx *ctx, xmlNode *node, const char *attr, const char *label,
               gboolean *found, guint *out, GError **error)
{
  g_autofree char *s = vpa_xml_prop (node, attr);
  guint64 v;

  *found = FALSE;
  if (s == NULL)
    return TRUE;
  if (g_ascii_isdigit (*s) && g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT, &v, NULL))
    {
      *found = TRUE;
      *out = (guint) v;
      return TRUE;
    }
  if (!ctx->strict)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s %s='%s': expected a non-negative integer", ctx->what, label, attr, s);
  return FALSE;
}

/* Past a bound: an error in a domain we manage; in another one the rest
 * is ignored (it binds nothing we judge). */
static gboolean
over_bound (ParseCtx *ctx, const char *label, const char *what_counted, guint max,
            GError **error)
{
  if (!ctx->strict)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: more than %u %s", ctx->what,
               label, max, what_counted);
  return FALSE;
}

/* The cell index of guest vCPU v (ctx->vcpu_cell), or -1. */
static gint
vcpu_cell (const ParseCtx *ctx, guint v)
{
  return v < ctx->vcpu_cell->len ? g_array_index (ctx->vcpu_cell, gint16, v) : -1;
}

static void
map_cell_vcpus (ParseCtx *ctx, const VpaBits *vcpus, guint cell_index)
{
  for (gint v = vpa_cpuset_bits_next (vcpus, 0); v >= 0; v = vpa_cpuset_bits_next (vcpus, (guint) v + 1))
    {
      while (ctx->vcpu_cell->len <= (guint) v)
        {
          gint16 none = -1;
          g_array_append_val (ctx->vcpu_cell, none);
        }
      if (g_array_index (ctx->vcpu_cell, gint16, v) < 0) /* libvirt refuses overlaps */
        g_array_index (ctx->vcpu_cell, gint16, v) = (gint16) cell_index;
    }
}

/* A scaled size in KiB; strict only for domains with our metadata. */
static gboolean
parse_size (ParseCtx *ctx, const char *label, const char *value, const char *unit,
            guint64 *kib, GError **error)
{
  guint64 v, scale;

  if (value == NULL)
    return TRUE;
  if (vpa_capabilities_unit_scale (unit, &scale) &&
      g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT64 / scale, &v, NULL))
    {
      *kib = v * scale / 1024;
      return TRUE;
    }
  if (!ctx->strict)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s '%s' unit '%s': expected a size", ctx->what, label, value, unit != NULL ? unit : "KiB");
  return FALSE;
}

static gboolean
parse_cell_memory (ParseCtx *ctx, xmlNode *c, VpaDomainCell *cell, GError **error)
{
  g_autofree char *mem = vpa_xml_prop (c, "memory");
  g_autofree char *unit = vpa_xml_prop (c, "unit");
  g_autofree char *label = g_strdup_printf ("<cpu><numa><cell id='%u' memory>", cell->id);

  return parse_size (ctx, label, mem, unit, &cell->memory_kib, error);
}

/* <vcpu>, <memory>, <memoryBacking><hugepages>, and whether the domain
 * binds itself (<numatune>, <vcpupin>, <emulatorpin>). */
gboolean
vpa_domain_parse_resources (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *n = vpa_xml_child (domain, "vcpu", NULL);
  xmlNode *cputune = vpa_xml_child (domain, "cputune", NULL);
  xmlNode *mb = vpa_xml_child (domain, "memoryBacking", NULL);
  xmlNode *hp = mb != NULL ? vpa_xml_child (mb, "hugepages", NULL) : NULL;
  VpaDomain *dom = ctx->dom;

  if (n != NULL)
    {
      g_autofree char *text = vpa_xml_text (n);
      guint64 v;
      if (text != NULL && g_ascii_string_to_unsigned (text, 10, 1, VPA_CPUSET_MAX, &v, NULL))
        {
          dom->n_vcpus = (guint) v;
        }
      else if (ctx->strict && dom->numa_auto)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <vcpu> '%s': expected a vCPU count", ctx->what, text != NULL ? text : "");
          return FALSE;
        }
    }
  if ((n = vpa_xml_child (domain, "memory", NULL)) != NULL)
    {
      g_autofree char *text = vpa_xml_text (n);
      g_autofree char *unit = vpa_xml_prop (n, "unit");
      if (!parse_size (ctx, "<memory>", text, unit, &dom->memory_kib, error))
        return FALSE;
    }
  if (hp != NULL)
    {
      xmlNode *page = vpa_xml_child (hp, "page", NULL);
      dom->page_kib = 2048; /* libvirt's default: the host's default hugepage size */
      if (page != NULL)
        {
          g_autofree char *size = vpa_xml_prop (page, "size");
          g_autofree char *unit = vpa_xml_prop (page, "unit");
          if (size == NULL && ctx->strict)
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <memoryBacking><hugepages><page>: no size attribute", ctx->what);
              return FALSE;
            }
          if (!parse_size (ctx, "<memoryBacking><hugepages><page size>", size, unit, &dom->page_kib, error))
            return FALSE;
        }
    }
  dom->has_binding = vpa_xml_child (domain, "numatune", NULL) != NULL ||
                     (cputune != NULL && (vpa_xml_child (cputune, "vcpupin", NULL) != NULL ||
                                          vpa_xml_child (cputune, "emulatorpin", NULL) != NULL));
  return TRUE;
}

/* A placement="auto" guest without cells is one implicit cell (Nova's
 * implicit topology): a NUMA guest, bound by <numatune><memory>. */
gboolean
vpa_domain_parse_implicit_cell (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  xmlNode *memory = numatune != NULL ? vpa_xml_child (numatune, "memory", NULL) : NULL;
  g_autoptr (VpaBits) set = NULL;

  if (!ctx->dom->numa_auto || ctx->dom->cells->len > 0)
    return TRUE;
  ctx->dom->numa_guest = TRUE;
  if (memory != NULL && !parse_set_attr (ctx, memory, "nodeset", "<numatune><memory>", &set, error))
    return FALSE;
  for (gint v = vpa_cpuset_bits_next (set, 0); v >= 0; v = vpa_cpuset_bits_next (set, (guint) v + 1))
    g_array_append_val (ctx->dom->implicit_nodes, v);
  return TRUE;
}

gboolean
vpa_domain_parse_cells (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *cpu = vpa_xml_child (domain, "cpu", NULL);
  xmlNode *numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;

  if (numa == NULL)
    return TRUE;
  for (xmlNode *c = numa->children; c != NULL; c = c->next)
    {
      VpaDomainCell *cell;
      gboolean has_id;

      if (!vpa_xml_is (c, "cell", NULL))
        continue;
      if (ctx->dom->cells->len == VPA_DOMAIN_MAX_CELLS)
        {
          if (!over_bound (ctx, "<cpu><numa>", "<cell> elements", VPA_DOMAIN_MAX_CELLS, error))
            return FALSE;
          break;
        }
      cell = g_new0 (VpaDomainCell, 1);
      cell->id = ctx->dom->cells->len; /* libvirt numbers cells without id by position */
      g_ptr_array_add (ctx->dom->cells, cell);
      if (!parse_id_attr (ctx, c, "id", "<cpu><numa><cell>", &has_id, &cell->id, error))
        return FALSE;
      if (!parse_set_attr (ctx, c, "cpus", "<cpu><numa><cell>", &cell->vcpus, error))
        return FALSE;
      if (!parse_cell_memory (ctx, c, cell, error))
        return FALSE;
      if (cell->vcpus == NULL)
        cell->vcpus = vpa_cpuset_bits_new ();
      map_cell_vcpus (ctx, cell->vcpus, ctx->dom->cells->len - 1);
    }
  ctx->dom->numa_guest = ctx->dom->cells->len > 0;
  return TRUE;
}

/* Cell id -> cell; the first of a repeated id wins. */
static GHashTable *
cells_by_id (VpaDomain *dom)
{
  GHashTable *ret = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < dom->cells->len; i++)
    {
      VpaDomainCell *cell = g_ptr_array_index (dom->cells, i);
      if (!g_hash_table_contains (ret, GUINT_TO_POINTER (cell->id)))
        g_hash_table_insert (ret, GUINT_TO_POINTER (cell->id), cell);
    }
  return ret;
}

/* A cell's nodeset comes from its <memnode>, else the one <memory>
 * nodeset every such cell shares (never copied per cell). */
gboolean
vpa_domain_parse_numatune (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  xmlNode *memory;
  g_autoptr (GHashTable) cells = NULL;

  if (numatune == NULL || ctx->dom->cells->len == 0)
    return TRUE;
  cells = cells_by_id (ctx->dom);
  for (xmlNode *c = numatune->children; c != NULL; c = c->next)
    {
      g_autofree char *label = NULL;
      VpaDomainCell *cell;
      gboolean found;
      guint id;

      if (!vpa_xml_is (c, "memnode", NULL))
        continue;
      if (!parse_id_attr (ctx, c, "cellid", "<numatune><memnode>", &found, &id, error))
        return FALSE;
      if (!found || (cell = g_hash_table_lookup (cells, GUINT_TO_POINTER (id))) == NULL || cell->nodeset != NULL)
        continue; /* libvirt refuses these; nothing of ours to bind */
      label = g_strdup_printf ("<numatune><memnode cellid='%u'>", id);
      if (!parse_set_attr (ctx, c, "nodeset", label, &cell->nodeset, error))
        return FALSE;
    }
  memory = vpa_xml_child (numatune, "memory", NULL);
  if (memory != NULL &&
      !parse_set_attr (ctx, memory, "nodeset", "<numatune><memory>", &ctx->dom->memory_nodeset, error))
    return FALSE;
  return TRUE;
}

/* Each cell's host CPUs: the union of its vCPUs' <vcpupin cpuset>, and
 * <vcpu cpuset> when one of its vCPUs has no pin. Each pin is parsed once
 * and merged into its vCPU's cell: the work is linear in the pins. */
gboolean
vpa_domain_parse_pins (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *vcpu = vpa_xml_child (domain, "vcpu", NULL);
  xmlNode *cputune = vpa_xml_child (domain, "cputune", NULL);
  g_autoptr (VpaBits) fallback = NULL;
  g_autoptr (VpaBits) pinned = vpa_cpuset_bits_new ();
  g_autofree gboolean *needs_fallback = NULL;
  guint n_pins = 0;

  if (ctx->dom->cells->len == 0)
    return TRUE;
  if (vcpu != NULL && !parse_set_attr (ctx, vcpu, "cpuset", "<vcpu>", &fallback, error))
    return FALSE;
  for (xmlNode *c = cputune != NULL ? cputune->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *label = NULL;
      g_autoptr (VpaBits) set = NULL;
      VpaDomainCell *cell;
      gboolean found;
      guint id;
      gint ci;

      if (!vpa_xml_is (c, "vcpupin", NULL))
        continue;
      if (++n_pins > VPA_DOMAIN_MAX_PINS)
        {
          if (!over_bound (ctx, "<cputune>", "<vcpupin> elements", VPA_DOMAIN_MAX_PINS, error))
            return FALSE;
          break;
        }
      if (!parse_id_attr (ctx, c, "vcpu", "<cputune><vcpupin>", &found, &id, error))
        return FALSE;
      if (!found || id > VPA_CPUSET_MAX || vpa_cpuset_bits_has (pinned, id))
        continue; /* libvirt refuses a second pin of one vCPU */
      label = g_strdup_printf ("<cputune><vcpupin vcpu='%u'>", id);
      if (!parse_set_attr (ctx, c, "cpuset", label, &set, error))
        return FALSE;
      if (set == NULL || (ci = vcpu_cell (ctx, id)) < 0)
        continue;
      vpa_cpuset_bits_set_range (pinned, id, id, TRUE);
      cell = g_ptr_array_index (ctx->dom->cells, ci);
      if (cell->cpuset == NULL)
        cell->cpuset = vpa_cpuset_bits_new ();
      vpa_cpuset_bits_or (cell->cpuset, set);
    }
  if (fallback == NULL)
    return TRUE;
  needs_fallback = g_new0 (gboolean, ctx->dom->cells->len);
  for (guint v = 0; v < ctx->vcpu_cell->len; v++)
    {
      if (vcpu_cell (ctx, v) >= 0 && !vpa_cpuset_bits_has (pinned, v))
        needs_fallback[vcpu_cell (ctx, v)] = TRUE;
    }
  for (guint i = 0; i < ctx->dom->cells->len; i++)
    {
      VpaDomainCell *cell = g_ptr_array_index (ctx->dom->cells, i);
      if (!needs_fallback[i])
        continue;
      if (cell->cpuset == NULL)
        cell->cpuset = vpa_cpuset_bits_new ();
      vpa_cpuset_bits_or (cell->cpuset, fallback);
    }
  return TRUE;
}
