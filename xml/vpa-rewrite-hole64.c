/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The root controller's 64-bit PCI hole written into a domain
 * (vpa-rewrite.h, vpa_rewrite_pcihole64).
 */
#include "vpa-rewrite-private.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* The 64-bit PCI hole                                                 */
/* ------------------------------------------------------------------ */

/* <pcihole64 unit='U'>N</pcihole64> in KiB (libvirt's units; default
 * KiB; G_MAXUINT64 when it overflows), or FALSE when it is not a size. */
static gboolean
hole64_kib (xmlNode *hole, guint64 *kib)
{
  static const struct {
    const char *unit;
    guint64 bytes;
  } units[] = { { "b", 1 },
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
                { "TiB", G_GUINT64_CONSTANT (1) << 40 } };
  g_autofree char *unit = vpa_xml_prop (hole, "unit");
  g_autofree char *text = (char *) xmlNodeGetContent (hole);
  guint64 v;

  if (text == NULL ||
      !g_ascii_string_to_unsigned (g_strstrip (text), 10, 0, G_MAXUINT64, &v, NULL))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    {
      if (g_strcmp0 (unit != NULL ? unit : "KiB", units[i].unit) == 0)
        {
          *kib = v > G_MAXUINT64 / units[i].bytes ? G_MAXUINT64 : v * units[i].bytes / 1024;
          return TRUE;
        }
    }
  return FALSE;
}

static xmlNode *
root_controller (xmlNode *devices, const char *model)
{
  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *type = NULL, *m = NULL;

      if (!vpa_xml_is (c, "controller", NULL))
        continue;
      type = vpa_xml_prop (c, "type");
      m = vpa_xml_prop (c, "model");
      if (g_strcmp0 (type, "pci") == 0 && g_strcmp0 (m, model) == 0)
        return c;
    }
  return NULL;
}

static Elem *
hole64_elem (Rewrite *rw, guint64 kib)
{
  Elem *e = vpa_rewrite_elem_new ("pcihole64", NULL);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "unit", "KiB");
  e->text = g_strdup_printf ("%" G_GUINT64_FORMAT, kib);
  return e;
}

static void
rewrite_hole64 (Rewrite *rw, xmlNode *devices, const char *model, guint64 kib)
{
  xmlNode *root = root_controller (devices, model);
  xmlNode *hole = root != NULL ? vpa_xml_child (root, "pcihole64", NULL) : NULL;
  guint64 have = 0;
  Elem *e;

  if (hole != NULL && hole64_kib (hole, &have) && have >= kib)
    return;
  e = hole64_elem (rw, kib);
  if (hole != NULL)
    {
      g_autofree char *indent = vpa_rewrite_own_indent (rw, hole);
      vpa_rewrite_replace_element (rw, hole, e, indent);
      vpa_rewrite_elem_free (e);
    }
  else if (root != NULL)
    {
      vpa_rewrite_insert_child (rw, root, AT_START, NULL, e);
      vpa_rewrite_elem_free (e);
    }
  else
    {
      Elem *c = vpa_rewrite_elem_new ("controller", NULL);
      xmlNode *last = NULL;

      vpa_rewrite_elem_attr (c, rw->dev_quote, "type", "pci");
      vpa_rewrite_elem_attr (c, rw->dev_quote, "index", "0");
      vpa_rewrite_elem_attr (c, rw->dev_quote, "model", model);
      g_ptr_array_add (c->children, e);
      for (xmlNode *n = devices->children; n != NULL; n = n->next)
        {
          if (vpa_xml_is (n, "controller", NULL))
            last = n;
        }
      vpa_rewrite_insert_child (rw, devices, last != NULL ? AFTER : AT_END, last, c);
      vpa_rewrite_elem_free (c);
    }
}

/* As rewrite_distances_of. */
static char *
rewrite_pcihole64_of (const char *buf, gsize len, const char *what, const char *model,
                      guint64 kib, gsize *out_len, Growth *added, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (Span));
  g_autoptr (GArray) edits = g_array_new (FALSE, FALSE, sizeof (Edit));
  char *out;
  Rewrite rw = { buf, len, what, spans, edits };
  xmlNode *root, *domain, *devices;

  g_array_set_clear_func (edits, vpa_rewrite_edit_clear);
  if ((doc = vpa_xml_parse_memory_grown (&(VpaDoc){ buf, len, what }, added->elements, added->attributes, error)) == NULL ||
      !vpa_rewrite_check_encoding (doc, what, error) || !vpa_rewrite_map_document (&rw, doc, error))
    return NULL;
  root = xmlDocGetRootElement (doc);
  domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL) : root;
  devices = domain != NULL ? vpa_xml_child (domain, "devices", NULL) : NULL;
  if (devices == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: no <devices> to size <pcihole64> in", what);
      return NULL;
    }
  vpa_rewrite_learn_layout (&rw, root);
  rewrite_hole64 (&rw, devices, model, kib);
  out = vpa_rewrite_edits_apply (&rw, out_len, error);
  g_free (rw.step);
  vpa_rewrite_grow (added, &rw.added);
  return out;
}

char *
vpa_rewrite_pcihole64 (const VpaDoc *doc, const char *model, guint64 kib, gsize *out_len,
                       GError **error)
{
  return vpa_rewrite_pcihole64_grown (doc, model, kib, NULL, out_len, error);
}

char *
vpa_rewrite_pcihole64_grown (const VpaDoc *doc, const char *model, guint64 kib,
                             const VpaXmlGrowth *grown, gsize *out_len, GError **error)
{
  g_autoptr (VpaDomain) check = NULL;
  g_autofree char *out = NULL;
  Growth added = { 0, 0 };

  g_return_val_if_fail (model != NULL && out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (grown != NULL)
    added = *grown;
  out = rewrite_pcihole64_of (doc->buf, doc->len, doc->what, model, kib, out_len, &added, error);
  if (out == NULL || (check = vpa_rewrite_parse_output (out, *out_len, doc->what, &added, error)) == NULL)
    return NULL;
  return g_steal_pointer (&out);
}
