/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rewrite's byte-preserving machinery (vpa-rewrite-private.h): the
 * byte span of every element, edits spliced into the original bytes,
 * the document's layout conventions, and new elements rendered in them.
 */
#include "vpa-rewrite-private.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Byte spans of elements                                              */
/* ------------------------------------------------------------------ */

static gboolean
find_str (const char *buf, gsize len, gsize from, const char *needle, gsize *out)
{
  gsize n = strlen (needle);

  for (gsize i = from; i + n <= len; i++)
    {
      if (memcmp (buf + i, needle, n) == 0)
        {
          *out = i + n;
          return TRUE;
        }
    }
  return FALSE;
}

/* Scans one start tag at buf[i] == '<'; '>' may occur in attribute
 * values, '<' may not. */
static gboolean
scan_start_tag (Rewrite *rw, gsize i, GArray *stack, gsize *next)
{
  Span span = { .start = i };
  char quote = 0;
  gsize j = i + 1;

  while (j < rw->len && !g_ascii_isspace (rw->buf[j]) && rw->buf[j] != '/' && rw->buf[j] != '>')
    j++;
  span.name_len = j - i - 1;
  for (; j < rw->len; j++)
    {
      char c = rw->buf[j];
      if (quote != 0)
        {
          quote = c == quote ? 0 : quote;
        }
      else if (c == '"' || c == '\'')
        {
          quote = c;
        }
      else if (c == '>')
        {
          break;
        }
    }
  if (j >= rw->len)
    return FALSE;
  span.start_end = j + 1;
  span.empty = rw->buf[j - 1] == '/';
  span.end = span.end_tag = span.start_end;
  g_array_append_val (rw->spans, span);
  if (!span.empty)
    {
      guint idx = rw->spans->len - 1;
      g_array_append_val (stack, idx);
    }
  *next = span.start_end;
  return TRUE;
}

/* Maps the elements of a document libxml2 has accepted as well-formed
 * (and without a DTD) to their spans. */
gboolean
vpa_rewrite_scan_spans (Rewrite *rw)
{
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));
  gsize i = 0;

  while (i < rw->len)
    {
      const char *p = rw->buf + i;
      gsize rest = rw->len - i;

      if (*p != '<')
        {
          i++;
        }
      else if (rest >= 4 && memcmp (p, "<!--", 4) == 0)
        {
          if (!find_str (rw->buf, rw->len, i + 4, "-->", &i))
            return FALSE;
        }
      else if (rest >= 9 && memcmp (p, "<![CDATA[", 9) == 0)
        {
          if (!find_str (rw->buf, rw->len, i + 9, "]]>", &i))
            return FALSE;
        }
      else if (rest >= 2 && p[1] == '?')
        {
          if (!find_str (rw->buf, rw->len, i + 2, "?>", &i))
            return FALSE;
        }
      else if (rest >= 2 && p[1] == '/')
        {
          gsize close;
          Span *span;
          if (stack->len == 0 || !find_str (rw->buf, rw->len, i, ">", &close))
            return FALSE;
          span = &g_array_index (rw->spans, Span, g_array_index (stack, guint, stack->len - 1));
          g_array_set_size (stack, stack->len - 1);
          span->end_tag = i;
          span->end = close;
          i = close;
        }
      else if (rest >= 2 && p[1] == '!')
        { /* NOLINT(bugprone-branch-clone): <!DOCTYPE, refused before we get here */
          return FALSE;
        }
      else if (!scan_start_tag (rw, i, stack, &i))
        {
          return FALSE;
        }
    }
  return stack->len == 0;
}

/* Points every element's _private at its span; the scanner's start tags
 * and libxml2's elements are both in document order. */
gboolean
vpa_rewrite_attach_spans (Rewrite *rw, xmlNode *node, guint *next)
{
  for (; node != NULL; node = node->next)
    {
      Span *span;
      g_autofree char *qname = NULL;

      if (node->type != XML_ELEMENT_NODE)
        continue;
      if (*next >= rw->spans->len)
        return FALSE;
      span = &g_array_index (rw->spans, Span, (*next)++);
      qname = node->ns != NULL && node->ns->prefix != NULL
                ? g_strdup_printf ("%s:%s", node->ns->prefix, node->name)
                : g_strdup ((const char *) node->name);
      if (strlen (qname) != span->name_len ||
          memcmp (qname, rw->buf + span->start + 1, span->name_len) != 0)
        return FALSE;
      node->_private = span;
      if (!vpa_rewrite_attach_spans (rw, node->children, next))
        return FALSE;
    }
  return TRUE;
}

const Span *
vpa_rewrite_span_of (xmlNode *node)
{
  return node->_private;
}

/* ------------------------------------------------------------------ */
/* Edits                                                               */
/* ------------------------------------------------------------------ */

void
vpa_rewrite_edit_add (Rewrite *rw, gsize start, gsize end, char *text)
{
  Edit e = { start, end, text, rw->edits->len };
  g_array_append_val (rw->edits, e);
}

void
vpa_rewrite_edit_clear (gpointer data)
{
  g_free (((Edit *) data)->text);
}

/* By position; at one position insertions go before a replacement, in
 * the order they were made. */
static gint
edit_cmp (gconstpointer a, gconstpointer b)
{
  const Edit *x = a, *y = b;

  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if ((x->end == x->start) != (y->end == y->start))
    return x->end == x->start ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

char *
vpa_rewrite_edits_apply (Rewrite *rw, gsize *out_len, GError **error)
{
  g_autoptr (GString) out = g_string_sized_new (rw->len + 1024);
  gsize pos = 0;

  g_array_sort (rw->edits, edit_cmp);
  for (guint i = 0; i < rw->edits->len; i++)
    {
      const Edit *e = &g_array_index (rw->edits, Edit, i);
      /* the edits are built never to overlap */
      if (e->start < pos)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: internal error: overlapping changes at byte %" G_GSIZE_FORMAT,
                       rw->what, e->start);
          return NULL;
        }
      guint elements, attributes;

      g_string_append_len (out, rw->buf + pos, (gssize) (e->start - pos));
      g_string_append (out, e->text);
      pos = e->end;
      vpa_xml_count_markup (e->text, strlen (e->text), &elements, &attributes);
      rw->added.elements = MIN ((guint64) rw->added.elements + elements, G_MAXUINT);
      rw->added.attributes = MIN ((guint64) rw->added.attributes + attributes, G_MAXUINT);
    }
  g_string_append_len (out, rw->buf + pos, (gssize) (rw->len - pos));
  *out_len = out->len;
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* ------------------------------------------------------------------ */
/* Layout                                                              */
/* ------------------------------------------------------------------ */

/* Start of the whitespace run before offset. */
static gsize
ws_before (Rewrite *rw, gsize offset)
{
  while (offset > 0 && g_ascii_isspace (rw->buf[offset - 1]))
    offset--;
  return offset;
}

/* The indentation of the line the element starts, if it starts one. */
char *
vpa_rewrite_own_indent (Rewrite *rw, xmlNode *node)
{
  gsize start = vpa_rewrite_span_of (node)->start, i = start;

  while (i > 0 && (rw->buf[i - 1] == ' ' || rw->buf[i - 1] == '\t'))
    i--;
  if (i > 0 && rw->buf[i - 1] != '\n')
    return g_strdup ("");
  return g_strndup (rw->buf + i, start - i);
}

static xmlNode *
first_element (xmlNode *parent)
{
  for (xmlNode *c = parent->children; c != NULL; c = c->next)
    {
      if (c->type == XML_ELEMENT_NODE)
        return c;
    }
  return NULL;
}

/* The attribute quote of the element's start tag, or fallback. */
char
vpa_rewrite_quote_of (Rewrite *rw, xmlNode *node, char fallback)
{
  const Span *span = vpa_rewrite_span_of (node);

  for (gsize i = span->start; i + 1 < span->start_end; i++)
    {
      if (rw->buf[i] == '=')
        {
          gsize j = i + 1;
          while (g_ascii_isspace (rw->buf[j]))
            j++;
          return rw->buf[j];
        }
    }
  return fallback;
}

/* Learns the document's conventions from its root element's first child. */
void
vpa_rewrite_learn_layout (Rewrite *rw, xmlNode *root)
{
  xmlNode *child = first_element (root);
  g_autofree char *outer = NULL;
  g_autofree char *inner = NULL;
  gsize ws;

  rw->dev_quote = vpa_rewrite_quote_of (rw, root, '\'');
  rw->newlines = TRUE;
  rw->step = g_strdup ("  ");
  if (child == NULL)
    return;
  outer = vpa_rewrite_own_indent (rw, root);
  inner = vpa_rewrite_own_indent (rw, child);
  ws = ws_before (rw, vpa_rewrite_span_of (child)->start);
  rw->newlines = memchr (rw->buf + ws, '\n', vpa_rewrite_span_of (child)->start - ws) != NULL;
  if (g_str_has_prefix (inner, outer) && strlen (inner) > strlen (outer))
    {
      g_free (rw->step);
      rw->step = g_strdup (inner + strlen (outer));
    }
}

/* ------------------------------------------------------------------ */
/* New elements                                                        */
/* ------------------------------------------------------------------ */

void
vpa_rewrite_elem_free (Elem *e)
{
  if (e == NULL)
    return;
  g_free (e->name);
  g_free (e->text);
  g_string_free (e->attrs, TRUE);
  g_ptr_array_unref (e->children);
  g_free (e);
}

Elem *
vpa_rewrite_elem_new (const char *name, Elem *parent)
{
  Elem *e = g_new0 (Elem, 1);
  e->name = g_strdup (name);
  e->attrs = g_string_new (NULL);
  e->children = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_rewrite_elem_free);
  if (parent != NULL)
    g_ptr_array_add (parent->children, e);
  return e;
}

/* value as the text of an attribute quoted with quote: a tab, newline
 * or carriage return as a character reference (raw, a parser would read
 * each as a space). */
void
vpa_rewrite_append_attr_value (GString *out, char quote, const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '&')
        {
          g_string_append (out, "&amp;");
        }
      else if (*p == '<')
        {
          g_string_append (out, "&lt;");
        }
      else if (*p == quote)
        {
          g_string_append (out, quote == '"' ? "&quot;" : "&apos;");
        }
      else if (*p == '\t' || *p == '\n' || *p == '\r')
        {
          g_string_append_printf (out, "&#%d;", *p);
        }
      else
        {
          g_string_append_c (out, *p);
        }
    }
}

void
vpa_rewrite_elem_attr (Elem *e, char quote, const char *name, const char *value)
{
  g_string_append_printf (e->attrs, " %s=%c", name, quote);
  vpa_rewrite_append_attr_value (e->attrs, quote, value);
  g_string_append_c (e->attrs, quote);
}

void
vpa_rewrite_elem_render (Rewrite *rw, const Elem *e, const char *indent, GString *out)
{
  g_autofree char *inner = g_strconcat (indent, rw->step, NULL);

  g_string_append_printf (out, "<%s%s", e->name, e->attrs->str);
  if (e->children->len == 0 && e->text != NULL)
    {
      g_string_append_printf (out, ">%s</%s>", e->text, e->name);
      return;
    }
  if (e->children->len == 0)
    {
      g_string_append (out, "/>");
      return;
    }
  g_string_append_c (out, '>');
  for (guint i = 0; i < e->children->len; i++)
    {
      if (rw->newlines)
        g_string_append_printf (out, "\n%s", inner);
      vpa_rewrite_elem_render (rw, g_ptr_array_index (e->children, i), inner, out);
    }
  if (rw->newlines)
    g_string_append_printf (out, "\n%s", indent);
  g_string_append_printf (out, "</%s>", e->name);
}

/* <address domain='0x0000' bus='0x81' slot='0x10' function='0x2'/>, with
 * type='pci' in an <interface> as libvirt writes it. */
Elem *
vpa_rewrite_address_elem (Rewrite *rw, VpaAddr addr, gboolean with_type, Elem *parent)
{
  Elem *e = vpa_rewrite_elem_new ("address", parent);
  g_autofree char *dom = g_strdup_printf ("0x%04x", VPA_ADDR_DOMAIN (addr));
  g_autofree char *bus = g_strdup_printf ("0x%02x", VPA_ADDR_BUS (addr));
  g_autofree char *slot = g_strdup_printf ("0x%02x", VPA_ADDR_SLOT (addr));
  g_autofree char *fn = g_strdup_printf ("0x%x", VPA_ADDR_FUNCTION (addr));

  if (with_type)
    vpa_rewrite_elem_attr (e, rw->dev_quote, "type", "pci");
  vpa_rewrite_elem_attr (e, rw->dev_quote, "domain", dom);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "bus", bus);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "slot", slot);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "function", fn);
  return e;
}

/* Inserts elems as children of parent (at its start, its end, or after
 * its child `after`), indented like parent's other children. One edit,
 * so that an empty <parent/> is opened only once. */
void
vpa_rewrite_insert_children (Rewrite *rw, xmlNode *parent, Where where, xmlNode *after, GPtrArray *elems)
{
  const Span *ps = vpa_rewrite_span_of (parent);
  xmlNode *first = first_element (parent);
  g_autofree char *own = vpa_rewrite_own_indent (rw, parent);
  g_autofree char *indent = NULL;
  g_autofree char *sep = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  gsize at;

  if (first != NULL)
    {
      gsize ws = ws_before (rw, vpa_rewrite_span_of (first)->start);
      const char *nl;
      sep = g_strndup (rw->buf + ws, vpa_rewrite_span_of (first)->start - ws);
      nl = strrchr (sep, '\n');
      indent = g_strdup (nl != NULL ? nl + 1 : "");
    }
  else
    {
      indent = g_strconcat (own, rw->step, NULL);
      sep = rw->newlines ? g_strconcat ("\n", indent, NULL) : g_strdup ("");
    }
  for (guint i = 0; i < elems->len; i++)
    {
      g_string_append (text, sep);
      vpa_rewrite_elem_render (rw, g_ptr_array_index (elems, i), indent, text);
    }

  if (ps->empty)
    {
      /* <parent a='1'/> becomes <parent a='1'>...</parent> */
      gsize slash = ws_before (rw, ps->start_end - 2);
      g_autofree char *qname = g_strndup (rw->buf + ps->start + 1, ps->name_len);
      vpa_rewrite_edit_add (rw, slash, ps->start_end,
                            g_strdup_printf (">%s%s%s</%s>", text->str, rw->newlines ? "\n" : "",
                                             rw->newlines ? own : "", qname));
      return;
    }
  if (where == AFTER)
    {
      at = vpa_rewrite_span_of (after)->end;
    }
  else if (where == AT_START && first != NULL)
    {
      at = ps->start_end;
    }
  else
    {
      at = ws_before (rw, ps->end_tag);
      if (at < ps->start_end)
        at = ps->start_end;
      /* the end tag keeps its own line */
      if (rw->newlines && memchr (rw->buf + at, '\n', ps->end_tag - at) == NULL)
        g_string_append_printf (text, "\n%s", own);
    }
  vpa_rewrite_edit_add (rw, at, at, g_string_free (g_steal_pointer (&text), FALSE));
}

void
vpa_rewrite_insert_child (Rewrite *rw, xmlNode *parent, Where where, xmlNode *after, Elem *elem)
{
  g_autoptr (GPtrArray) one = g_ptr_array_new ();

  g_ptr_array_add (one, elem);
  vpa_rewrite_insert_children (rw, parent, where, after, one);
}

/* Removes an element with the whitespace that indents it. */
void
vpa_rewrite_remove_element (Rewrite *rw, xmlNode *node)
{
  const Span *span = vpa_rewrite_span_of (node);
  if (rw->removed != NULL)
    g_hash_table_add (rw->removed, node);
  vpa_rewrite_edit_add (rw, ws_before (rw, span->start), span->end, g_strdup (""));
}

void
vpa_rewrite_replace_element (Rewrite *rw, xmlNode *node, Elem *elem, const char *indent)
{
  GString *text = g_string_new (NULL);

  vpa_rewrite_elem_render (rw, elem, indent, text);
  vpa_rewrite_edit_add (rw, vpa_rewrite_span_of (node)->start, vpa_rewrite_span_of (node)->end, g_string_free (text, FALSE));
}
