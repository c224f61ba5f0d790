/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The distances between guest NUMA cells written into a domain
 * (vpa-rewrite.h, vpa_rewrite_distances).
 */
#include "vpa-rewrite-private.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Guest NUMA distances                                                */
/* ------------------------------------------------------------------ */

static gint
distances_row (const VpaCellDistances *d, guint id)
{
  for (guint i = 0; i < d->n; i++)
    {
      if (d->ids[i] == id)
        return (gint) i;
    }
  return -1;
}

static Elem *
distances_elem (Rewrite *rw, const VpaCellDistances *d, guint row)
{
  Elem *e = vpa_rewrite_elem_new ("distances", NULL);

  for (guint j = 0; j < d->n; j++)
    {
      g_autofree char *id = g_strdup_printf ("%u", d->ids[j]);
      g_autofree char *value = g_strdup_printf ("%u", d->values[row * d->n + j]);
      Elem *s = vpa_rewrite_elem_new ("sibling", e);
      vpa_rewrite_elem_attr (s, rw->dev_quote, "id", id);
      vpa_rewrite_elem_attr (s, rw->dev_quote, "value", value);
    }
  return e;
}

/* The cell's <distances> becomes e, kept byte for byte when it is. */
static void
rewrite_cell_distances (Rewrite *rw, xmlNode *cell, Elem *e)
{
  xmlNode *old = vpa_xml_child (cell, "distances", NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *indent = NULL;
  const Span *sp;

  if (old == NULL)
    {
      vpa_rewrite_insert_child (rw, cell, AT_START, NULL, e);
      return;
    }
  indent = vpa_rewrite_own_indent (rw, old);
  sp = vpa_rewrite_span_of (old);
  vpa_rewrite_elem_render (rw, e, indent, text);
  if (text->len != sp->end - sp->start || memcmp (text->str, rw->buf + sp->start, text->len) != 0)
    vpa_rewrite_replace_element (rw, old, e, indent);
}

static gboolean
rewrite_distances (Rewrite *rw, xmlNode *numa, const VpaCellDistances *d, GError **error)
{
  guint position = 0;

  for (xmlNode *c = numa->children; c != NULL; c = c->next)
    {
      g_autofree char *id = NULL;
      g_autoptr (Elem) e = NULL;
      guint64 v = position;
      gint row;

      if (!vpa_xml_is (c, "cell", NULL))
        continue;
      id = vpa_xml_prop (c, "id");
      if (id != NULL && !g_ascii_string_to_unsigned (id, 10, 0, G_MAXUINT, &v, NULL))
        v = G_MAXUINT;
      position++;
      if ((row = distances_row (d, (guint) v)) < 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <cpu><numa><cell id='%s'>: no distances for this cell", rw->what, id != NULL ? id : "");
          return FALSE;
        }
      e = distances_elem (rw, d, (guint) row);
      rewrite_cell_distances (rw, c, e);
    }
  return TRUE;
}

/* As rewrite_binding: the tree is freed before the output is parsed;
 * *added: in, how far buf may pass the bounds; out, how far the output
 * may. */
static char *
rewrite_distances_of (const char *buf, gsize len, const char *what,
                      const VpaCellDistances *distances, gsize *out_len, Growth *added,
                      GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (Span));
  g_autoptr (GArray) edits = g_array_new (FALSE, FALSE, sizeof (Edit));
  char *out = NULL;
  Rewrite rw = { buf, len, what, spans, edits };
  xmlNode *root, *domain, *cpu, *numa;
  gboolean ok;

  g_array_set_clear_func (edits, vpa_rewrite_edit_clear);
  if ((doc = vpa_xml_parse_memory_grown (&(VpaDoc){ buf, len, what }, added->elements, added->attributes, error)) == NULL ||
      !vpa_rewrite_check_encoding (doc, what, error) || !vpa_rewrite_map_document (&rw, doc, error))
    return NULL;
  root = xmlDocGetRootElement (doc);
  domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL) : root;
  cpu = domain != NULL ? vpa_xml_child (domain, "cpu", NULL) : NULL;
  numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;
  if (numa == NULL)
    {
      *out_len = len;
      return g_strndup (buf, len);
    }
  vpa_rewrite_learn_layout (&rw, root);
  ok = rewrite_distances (&rw, numa, distances, error);
  if (ok)
    out = vpa_rewrite_edits_apply (&rw, out_len, error);
  g_free (rw.step);
  vpa_rewrite_grow (added, &rw.added);
  return out;
}

char *
vpa_rewrite_distances (const VpaDoc *doc, const VpaCellDistances *distances, gsize *out_len, GError **error)
{
  return vpa_rewrite_distances_grown (doc, distances, NULL, out_len, error);
}

char *
vpa_rewrite_distances_grown (const VpaDoc *doc, const VpaCellDistances *distances,
                             const VpaXmlGrowth *grown, gsize *out_len, GError **error)
{
  g_autoptr (VpaDomain) check = NULL;
  g_autofree char *out = NULL;
  Growth added = { 0, 0 };

  g_return_val_if_fail (distances != NULL && out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (grown != NULL)
    added = *grown;
  out = rewrite_distances_of (doc->buf, doc->len, doc->what, distances, out_len, &added, error);
  if (out == NULL || (check = vpa_rewrite_parse_output (out, *out_len, doc->what, &added, error)) == NULL)
    return NULL;
  return g_steal_pointer (&out);
}
