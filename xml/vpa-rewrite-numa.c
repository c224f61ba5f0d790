/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A whole-guest NUMA binding written into a domain (vpa-rewrite.h,
 * vpa_rewrite_numa): <numatune>, <cputune> pins and the
 * <vpa:placed-cell> records.
 */
#include "vpa-rewrite-private.h"
#include "vpa-cpuset.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Whole-guest NUMA binding                                            */
/* ------------------------------------------------------------------ */

static gint
guint_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

/* The pins in vCPU order: (vcpu, cpuset text). */
typedef struct {
  guint vcpu;
  char *cpuset;
} Pin;

static void
pin_clear (gpointer p)
{
  g_free (((Pin *) p)->cpuset);
}

static gint
pin_cmp (gconstpointer a, gconstpointer b)
{
  return guint_cmp (&((const Pin *) a)->vcpu, &((const Pin *) b)->vcpu);
}

static GArray *
binding_pins (const VpaNumaBinding *b)
{
  GArray *pins = g_array_new (FALSE, TRUE, sizeof (Pin));

  g_array_set_clear_func (pins, pin_clear);
  for (guint c = 0; c < b->cells->len; c++)
    {
      const VpaPlacedCell *pc = &g_array_index (b->cells, VpaPlacedCell, c);
      GArray *vcpus = g_ptr_array_index (b->vcpus, c);
      g_autofree char *shared = vpa_cpuset_format (pc->cpus);

      for (guint v = 0; v < vcpus->len; v++)
        {
          Pin pin = { g_array_index (vcpus, guint, v), NULL };
          pin.cpuset = b->dedicated && v < pc->cpus->len
                         ? g_strdup_printf ("%u", g_array_index (pc->cpus, guint, v))
                         : g_strdup (shared);
          g_array_append_val (pins, pin);
        }
    }
  g_array_sort (pins, pin_cmp);
  return pins;
}

static GArray *
binding_nodes (const VpaNumaBinding *b)
{
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint c = 0; c < b->cells->len; c++)
    {
      guint n = (guint) g_array_index (b->cells, VpaPlacedCell, c).node;
      g_array_append_val (nodes, n);
    }
  return nodes;
}

static Elem *
numatune_elem (Rewrite *rw, const VpaNumaBinding *b)
{
  Elem *e = vpa_rewrite_elem_new ("numatune", NULL);
  g_autoptr (GArray) nodes = binding_nodes (b);
  g_autofree char *all = vpa_cpuset_format (nodes);
  Elem *m = vpa_rewrite_elem_new ("memory", e);

  vpa_rewrite_elem_attr (m, rw->dev_quote, "mode", "strict");
  vpa_rewrite_elem_attr (m, rw->dev_quote, "nodeset", all);
  for (guint c = 0; b->memnodes && c < b->cells->len; c++)
    {
      const VpaPlacedCell *pc = &g_array_index (b->cells, VpaPlacedCell, c);
      g_autofree char *id = g_strdup_printf ("%u", pc->cell);
      g_autofree char *node = g_strdup_printf ("%d", pc->node);
      Elem *mn = vpa_rewrite_elem_new ("memnode", e);
      vpa_rewrite_elem_attr (mn, rw->dev_quote, "cellid", id);
      vpa_rewrite_elem_attr (mn, rw->dev_quote, "mode", "strict");
      vpa_rewrite_elem_attr (mn, rw->dev_quote, "nodeset", node);
    }
  return e;
}

/* vcpupin per vCPU and the emulatorpin, as elements to add. */
static GPtrArray *
pin_elems (Rewrite *rw, const VpaNumaBinding *b)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_rewrite_elem_free);
  g_autoptr (GArray) pins = binding_pins (b);
  g_autofree char *emu = vpa_cpuset_format (b->emulator);
  Elem *e;

  for (guint i = 0; i < pins->len; i++)
    {
      const Pin *p = &g_array_index (pins, Pin, i);
      g_autofree char *v = g_strdup_printf ("%u", p->vcpu);
      e = vpa_rewrite_elem_new ("vcpupin", NULL);
      vpa_rewrite_elem_attr (e, rw->dev_quote, "vcpu", v);
      vpa_rewrite_elem_attr (e, rw->dev_quote, "cpuset", p->cpuset);
      g_ptr_array_add (out, e);
    }
  e = vpa_rewrite_elem_new ("emulatorpin", NULL);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "cpuset", emu);
  g_ptr_array_add (out, e);
  return out;
}

/* Whether <cputune> already pins exactly as b says. */
static gboolean
pins_match (xmlNode *cputune, const VpaNumaBinding *b)
{
  g_autoptr (GArray) pins = binding_pins (b);
  g_autofree char *emu = vpa_cpuset_format (b->emulator);
  guint i = 0;
  gboolean emu_ok = FALSE;

  for (xmlNode *c = cputune != NULL ? cputune->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *v = NULL;
      g_autofree char *set = NULL;
      g_autofree char *want = NULL;

      if (vpa_xml_is (c, "emulatorpin", NULL))
        {
          set = vpa_xml_prop (c, "cpuset");
          emu_ok = g_strcmp0 (set, emu) == 0;
          continue;
        }
      if (!vpa_xml_is (c, "vcpupin", NULL))
        continue;
      if (i >= pins->len)
        return FALSE;
      v = vpa_xml_prop (c, "vcpu");
      set = vpa_xml_prop (c, "cpuset");
      want = g_strdup_printf ("%u", g_array_index (pins, Pin, i).vcpu);
      if (g_strcmp0 (v, want) != 0 || g_strcmp0 (set, g_array_index (pins, Pin, i).cpuset) != 0)
        return FALSE;
      i++;
    }
  return i == pins->len && emu_ok;
}

static gboolean
only_pins (xmlNode *cputune)
{
  for (xmlNode *c = cputune->children; c != NULL; c = c->next)
    {
      if (c->type == XML_ELEMENT_NODE && !vpa_xml_is (c, "vcpupin", NULL) &&
          !vpa_xml_is (c, "emulatorpin", NULL))
        return FALSE;
    }
  return TRUE;
}

static void
rewrite_cputune (Rewrite *rw, xmlNode *domain, xmlNode *anchor, const VpaNumaBinding *b)
{
  xmlNode *cputune = vpa_xml_child (domain, "cputune", NULL);
  g_autoptr (GPtrArray) elems = NULL;

  if (pins_match (cputune, b))
    return;
  elems = pin_elems (rw, b);
  if (cputune == NULL || only_pins (cputune))
    {
      g_autoptr (Elem) e = vpa_rewrite_elem_new ("cputune", NULL);
      g_autofree char *indent = NULL;
      for (guint i = 0; i < elems->len; i++)
        g_ptr_array_add (e->children, g_steal_pointer (&elems->pdata[i]));
      if (cputune != NULL)
        {
          indent = vpa_rewrite_own_indent (rw, cputune);
          vpa_rewrite_replace_element (rw, cputune, e, indent);
        }
      else
        vpa_rewrite_insert_child (rw, domain, anchor != NULL ? AFTER : AT_END, anchor, e);
      return;
    }
  for (xmlNode *c = cputune->children; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, "vcpupin", NULL) || vpa_xml_is (c, "emulatorpin", NULL))
        vpa_rewrite_remove_element (rw, c);
    }
  vpa_rewrite_insert_children (rw, cputune, AT_END, NULL, elems);
}

static void
rewrite_numatune (Rewrite *rw, xmlNode *domain, xmlNode *anchor, const VpaNumaBinding *b)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  g_autoptr (Elem) e = numatune_elem (rw, b);

  if (numatune != NULL)
    {
      g_autofree char *indent = vpa_rewrite_own_indent (rw, numatune);
      GString *text = g_string_new (NULL);
      const Span *sp = vpa_rewrite_span_of (numatune);
      gboolean same;

      vpa_rewrite_elem_render (rw, e, indent, text);
      same = text->len == sp->end - sp->start && memcmp (text->str, rw->buf + sp->start, text->len) == 0;
      g_string_free (text, TRUE);
      if (!same)
        vpa_rewrite_replace_element (rw, numatune, e, indent);
      return;
    }
  vpa_rewrite_insert_child (rw, domain, anchor != NULL ? AFTER : AT_END, anchor, e);
}

static gboolean
placed_cells_match (const VpaDomain *dom, const VpaNumaBinding *b)
{
  if (dom->placed_cells->len != b->cells->len)
    return FALSE;
  for (guint c = 0; c < b->cells->len; c++)
    {
      const VpaPlacedCell *x = &g_array_index (dom->placed_cells, VpaPlacedCell, c);
      const VpaPlacedCell *y = &g_array_index (b->cells, VpaPlacedCell, c);
      guint xr = x->reserved != NULL ? x->reserved->len : 0;
      guint yr = y->reserved != NULL ? y->reserved->len : 0;

      if (x->cell != y->cell || x->node != y->node || x->memory_kib != y->memory_kib ||
          x->cpus->len != y->cpus->len ||
          memcmp (x->cpus->data, y->cpus->data, x->cpus->len * sizeof (guint)) != 0 ||
          xr != yr ||
          (xr > 0 && memcmp (x->reserved->data, y->reserved->data, xr * sizeof (guint)) != 0))
        return FALSE;
    }
  return TRUE;
}

static char *
cpus_attr (const GArray *cpus)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < cpus->len; i++)
    g_string_append_printf (s, "%s%u", i > 0 ? "," : "", g_array_index (cpus, guint, i));
  return g_string_free (s, FALSE);
}

static void
rewrite_placed_cells (Rewrite *rw, const VpaDomain *dom, xmlNode *affinity,
                      const VpaNumaBinding *b)
{
  g_autoptr (GPtrArray) elems = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_rewrite_elem_free);
  g_autofree char *qname = NULL;

  if (placed_cells_match (dom, b))
    return;
  for (xmlNode *c = affinity->children; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, "placed-cell", VPA_XMLNS))
        vpa_rewrite_remove_element (rw, c);
    }
  qname = affinity->ns->prefix != NULL
            ? g_strdup_printf ("%s:placed-cell", (const char *) affinity->ns->prefix)
            : g_strdup ("placed-cell");
  for (guint c = 0; c < b->cells->len; c++)
    {
      const VpaPlacedCell *pc = &g_array_index (b->cells, VpaPlacedCell, c);
      Elem *e = vpa_rewrite_elem_new (qname, NULL);
      g_autofree char *cell = g_strdup_printf ("%u", pc->cell);
      g_autofree char *node = g_strdup_printf ("%d", pc->node);
      g_autofree char *cpus = cpus_attr (pc->cpus);
      g_autofree char *mem = g_strdup_printf ("%" G_GUINT64_FORMAT, pc->memory_kib);

      vpa_rewrite_elem_attr (e, rw->vpa_quote, "cell", cell);
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "host-node", node);
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "cpus", cpus);
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "memory-kib", mem);
      if (pc->reserved != NULL && pc->reserved->len > 0)
        {
          g_autofree char *reserved = cpus_attr (pc->reserved);
          vpa_rewrite_elem_attr (e, rw->vpa_quote, "reserved-cpus", reserved);
        }
      if (pc->emulator != NULL && pc->emulator->len > 0)
        {
          g_autofree char *emulator = cpus_attr (pc->emulator);
          vpa_rewrite_elem_attr (e, rw->vpa_quote, "emulator-cpus", emulator);
        }
      g_ptr_array_add (elems, e);
    }
  vpa_rewrite_insert_children (rw, affinity, AT_END, NULL, elems);
}

/* As rewrite_placement: the tree is freed before the output is parsed.
 * *added: in, how far buf may pass the bounds; out, how far the output
 * may. */
static char *
rewrite_binding (const char *buf, gsize len, const char *what, const VpaNumaBinding *binding,
                 gsize *out_len, Growth *added, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (Span));
  g_autoptr (GArray) edits = g_array_new (FALSE, FALSE, sizeof (Edit));
  Rewrite rw = { buf, len, what, spans, edits };
  xmlNode *root, *domain, *affinity, *anchor;
  char *out;

  g_array_set_clear_func (edits, vpa_rewrite_edit_clear);
  if ((doc = vpa_xml_parse_memory_grown (&(VpaDoc){ buf, len, what }, added->elements, added->attributes, error)) == NULL ||
      !vpa_rewrite_check_encoding (doc, what, error) ||
      (dom = vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error)) == NULL)
    return NULL;
  root = xmlDocGetRootElement (doc);
  domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL) : root;
  affinity = vpa_rewrite_find_affinity (domain);
  if (affinity == NULL || !vpa_rewrite_map_document (&rw, doc, error))
    {
      if (affinity == NULL)
        g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <metadata> has no <vpa:affinity> to record the binding in", what);
      return NULL;
    }
  vpa_rewrite_learn_layout (&rw, root);
  rw.vpa_quote = vpa_rewrite_quote_of (&rw, affinity, '"');
  /* New elements go after <vcpu> (else <memory>), where libvirt writes them. */
  anchor = vpa_xml_child (domain, "vcpu", NULL);
  if (anchor == NULL)
    anchor = vpa_xml_child (domain, "memory", NULL);
  rewrite_cputune (&rw, domain, anchor, binding);
  rewrite_numatune (&rw, domain, anchor, binding);
  rewrite_placed_cells (&rw, dom, affinity, binding);
  out = vpa_rewrite_edits_apply (&rw, out_len, error);
  g_free (rw.step);
  vpa_rewrite_grow (added, &rw.added);
  return out;
}

char *
vpa_rewrite_numa (const VpaDoc *doc, const VpaNumaBinding *binding, gsize *out_len, GError **error)
{
  return vpa_rewrite_numa_grown (doc, binding, 0, 0, out_len, error);
}

char *
vpa_rewrite_numa_grown (const VpaDoc *doc, const VpaNumaBinding *binding, guint extra_elements,
                        guint extra_attributes, gsize *out_len, GError **error)
{
  g_autoptr (VpaDomain) check = NULL;
  g_autofree char *out = NULL;
  Growth added = { extra_elements, extra_attributes };

  g_return_val_if_fail (binding != NULL && binding->cells != NULL && out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  out = rewrite_binding (doc->buf, doc->len, doc->what, binding, out_len, &added, error);
  if (out == NULL)
    return NULL;
  check = vpa_rewrite_parse_output (out, *out_len, doc->what, &added, NULL);
  if (check == NULL || !placed_cells_match (check, binding))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: internal error: the rewritten document does not hold the binding", doc->what);
      return NULL;
    }
  return g_steal_pointer (&out);
}
