/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The domain rewrite edits the original bytes instead of serialising a
 * tree: libxml2 parses and validates the document and finds what to
 * change, a scanner maps every element to its byte span, and the
 * changes are spliced in. Whatever a placement does not own — comments,
 * quoting, attribute order, whitespace, character references, the XML
 * declaration, libvirt's <domstatus> — is copied byte for byte.
 */
#include "vpa-rewrite.h"
#include "vpa-domain.h"
#include "vpa-guest-topology.h"
#include "vpa-xml.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Byte spans of elements                                              */
/* ------------------------------------------------------------------ */

typedef struct {
  gsize start;     /* '<' of the start tag */
  gsize start_end; /* after its '>' */
  gsize end;       /* after the end tag ('>'), or start_end when empty */
  gsize end_tag;   /* '<' of the end tag, or start_end when empty */
  gsize name_len;  /* the qualified name follows start + 1 */
  gboolean empty;  /* <x/> */
} Span;

typedef struct {
  gsize start, end; /* replaced range of the original */
  char *text;
  guint seq;
} Edit;

/* The elements and attributes a rewrite inserts: an upper bound of how
 * far its output may pass the bounds its input was within. */
typedef VpaXmlGrowth Growth;

typedef struct {
  const char *buf;
  gsize len;
  const char *what;
  GArray *spans;                /* Span, document order of start tags */
  GArray *edits;                /* Edit */
  gboolean newlines;            /* the document puts elements on their own lines */
  char *step;                   /* one level of indentation */
  char dev_quote;               /* quote of attributes in libvirt's elements */
  char vpa_quote;               /* quote of attributes in <vpa:affinity> */
  const VpaGuestTopology *topo; /* NULL: the guest's PCI layout is not ours to write */
  GHashTable *removed;          /* xmlNode* removed by an edit */
  Growth added;                 /* markup the edits insert */
} Rewrite;

static gboolean
find_str (const char *buf, gsize len, gsize from, const char *needle, gsize *out)
{
  gsize n = strlen (needle);

  for (gsize i = from; i + n <= len; i++)
    if (memcmp (buf + i, needle, n) == 0)
      {
        *out = i + n;
        return TRUE;
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
        quote = c == quote ? 0 : quote;
      else if (c == '"' || c == '\'')
        quote = c;
      else if (c == '>')
        break;
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
static gboolean
scan_spans (Rewrite *rw)
{
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));
  gsize i = 0;

  while (i < rw->len)
    {
      const char *p = rw->buf + i;
      gsize rest = rw->len - i;

      if (*p != '<')
        i++;
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
        return FALSE; /* <!DOCTYPE: refused before we get here; NOLINT(bugprone-branch-clone) */
      else if (!scan_start_tag (rw, i, stack, &i))
        return FALSE;
    }
  return stack->len == 0;
}

/* Points every element's _private at its span; the scanner's start tags
 * and libxml2's elements are both in document order. */
static gboolean
attach_spans (Rewrite *rw, xmlNode *node, guint *next)
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
      if (!attach_spans (rw, node->children, next))
        return FALSE;
    }
  return TRUE;
}

static const Span *
span_of (xmlNode *node)
{
  return node->_private;
}

/* ------------------------------------------------------------------ */
/* Edits                                                               */
/* ------------------------------------------------------------------ */

static void
edit_add (Rewrite *rw, gsize start, gsize end, char *text)
{
  Edit e = { start, end, text, rw->edits->len };
  g_array_append_val (rw->edits, e);
}

static void
edit_clear (gpointer data)
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

static char *
edits_apply (Rewrite *rw, gsize *out_len, GError **error)
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
static char *
own_indent (Rewrite *rw, xmlNode *node)
{
  gsize start = span_of (node)->start, i = start;

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
    if (c->type == XML_ELEMENT_NODE)
      return c;
  return NULL;
}

/* The attribute quote of the element's start tag, or fallback. */
static char
quote_of (Rewrite *rw, xmlNode *node, char fallback)
{
  const Span *span = span_of (node);

  for (gsize i = span->start; i + 1 < span->start_end; i++)
    if (rw->buf[i] == '=')
      {
        gsize j = i + 1;
        while (g_ascii_isspace (rw->buf[j]))
          j++;
        return rw->buf[j];
      }
  return fallback;
}

/* Learns the document's conventions from its root element's first child. */
static void
learn_layout (Rewrite *rw, xmlNode *root)
{
  xmlNode *child = first_element (root);
  g_autofree char *outer = NULL;
  g_autofree char *inner = NULL;
  gsize ws;

  rw->dev_quote = quote_of (rw, root, '\'');
  rw->newlines = TRUE;
  rw->step = g_strdup ("  ");
  if (child == NULL)
    return;
  outer = own_indent (rw, root);
  inner = own_indent (rw, child);
  ws = ws_before (rw, span_of (child)->start);
  rw->newlines = memchr (rw->buf + ws, '\n', span_of (child)->start - ws) != NULL;
  if (g_str_has_prefix (inner, outer) && strlen (inner) > strlen (outer))
    {
      g_free (rw->step);
      rw->step = g_strdup (inner + strlen (outer));
    }
}

/* ------------------------------------------------------------------ */
/* New elements                                                        */
/* ------------------------------------------------------------------ */

typedef struct {
  char *name;          /* qualified */
  GString *attrs;      /* " a='1' b='2'" */
  GPtrArray *children; /* Elem* */
  char *text;          /* character content (escaped already), or NULL */
} Elem;

static void
elem_free (Elem *e)
{
  if (e == NULL)
    return;
  g_free (e->name);
  g_free (e->text);
  g_string_free (e->attrs, TRUE);
  g_ptr_array_unref (e->children);
  g_free (e);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Elem, elem_free)

static Elem *
elem_new (const char *name, Elem *parent)
{
  Elem *e = g_new0 (Elem, 1);
  e->name = g_strdup (name);
  e->attrs = g_string_new (NULL);
  e->children = g_ptr_array_new_with_free_func ((GDestroyNotify) elem_free);
  if (parent != NULL)
    g_ptr_array_add (parent->children, e);
  return e;
}

/* value as the text of an attribute quoted with quote: a tab, newline
 * or carriage return as a character reference (raw, a parser would read
 * each as a space). */
static void
append_attr_value (GString *out, char quote, const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '&')
        g_string_append (out, "&amp;");
      else if (*p == '<')
        g_string_append (out, "&lt;");
      else if (*p == quote)
        g_string_append (out, quote == '"' ? "&quot;" : "&apos;");
      else if (*p == '\t' || *p == '\n' || *p == '\r')
        g_string_append_printf (out, "&#%d;", *p);
      else
        g_string_append_c (out, *p);
    }
}

static void
elem_attr (Elem *e, char quote, const char *name, const char *value)
{
  g_string_append_printf (e->attrs, " %s=%c", name, quote);
  append_attr_value (e->attrs, quote, value);
  g_string_append_c (e->attrs, quote);
}

static void
elem_render (Rewrite *rw, const Elem *e, const char *indent, GString *out)
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
      elem_render (rw, g_ptr_array_index (e->children, i), inner, out);
    }
  if (rw->newlines)
    g_string_append_printf (out, "\n%s", indent);
  g_string_append_printf (out, "</%s>", e->name);
}

/* <address domain='0x0000' bus='0x81' slot='0x10' function='0x2'/>, with
 * type='pci' in an <interface> as libvirt writes it. */
static Elem *
address_elem (Rewrite *rw, VpaAddr addr, gboolean with_type, Elem *parent)
{
  Elem *e = elem_new ("address", parent);
  g_autofree char *dom = g_strdup_printf ("0x%04x", VPA_ADDR_DOMAIN (addr));
  g_autofree char *bus = g_strdup_printf ("0x%02x", VPA_ADDR_BUS (addr));
  g_autofree char *slot = g_strdup_printf ("0x%02x", VPA_ADDR_SLOT (addr));
  g_autofree char *fn = g_strdup_printf ("0x%x", VPA_ADDR_FUNCTION (addr));

  if (with_type)
    elem_attr (e, rw->dev_quote, "type", "pci");
  elem_attr (e, rw->dev_quote, "domain", dom);
  elem_attr (e, rw->dev_quote, "bus", bus);
  elem_attr (e, rw->dev_quote, "slot", slot);
  elem_attr (e, rw->dev_quote, "function", fn);
  return e;
}

typedef enum {
  AT_START,
  AT_END,
  AFTER,
} Where;

/* Inserts elems as children of parent (at its start, its end, or after
 * its child `after`), indented like parent's other children. One edit,
 * so that an empty <parent/> is opened only once. */
static void
insert_children (Rewrite *rw, xmlNode *parent, Where where, xmlNode *after, GPtrArray *elems)
{
  const Span *ps = span_of (parent);
  xmlNode *first = first_element (parent);
  g_autofree char *own = own_indent (rw, parent);
  g_autofree char *indent = NULL;
  g_autofree char *sep = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  gsize at;

  if (first != NULL)
    {
      gsize ws = ws_before (rw, span_of (first)->start);
      const char *nl;
      sep = g_strndup (rw->buf + ws, span_of (first)->start - ws);
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
      elem_render (rw, g_ptr_array_index (elems, i), indent, text);
    }

  if (ps->empty)
    {
      /* <parent a='1'/> becomes <parent a='1'>...</parent> */
      gsize slash = ws_before (rw, ps->start_end - 2);
      g_autofree char *qname = g_strndup (rw->buf + ps->start + 1, ps->name_len);
      edit_add (rw, slash, ps->start_end,
                g_strdup_printf (">%s%s%s</%s>", text->str, rw->newlines ? "\n" : "",
                                 rw->newlines ? own : "", qname));
      return;
    }
  if (where == AFTER)
    at = span_of (after)->end;
  else if (where == AT_START && first != NULL)
    at = ps->start_end;
  else
    {
      at = ws_before (rw, ps->end_tag);
      if (at < ps->start_end)
        at = ps->start_end;
      /* the end tag keeps its own line */
      if (rw->newlines && memchr (rw->buf + at, '\n', ps->end_tag - at) == NULL)
        g_string_append_printf (text, "\n%s", own);
    }
  edit_add (rw, at, at, g_string_free (g_steal_pointer (&text), FALSE));
}

static void
insert_child (Rewrite *rw, xmlNode *parent, Where where, xmlNode *after, Elem *elem)
{
  g_autoptr (GPtrArray) one = g_ptr_array_new ();

  g_ptr_array_add (one, elem);
  insert_children (rw, parent, where, after, one);
}

/* Removes an element with the whitespace that indents it. */
static void
remove_element (Rewrite *rw, xmlNode *node)
{
  const Span *span = span_of (node);
  if (rw->removed != NULL)
    g_hash_table_add (rw->removed, node);
  edit_add (rw, ws_before (rw, span->start), span->end, g_strdup (""));
}

static void
replace_element (Rewrite *rw, xmlNode *node, Elem *elem, const char *indent)
{
  GString *text = g_string_new (NULL);

  elem_render (rw, elem, indent, text);
  edit_add (rw, span_of (node)->start, span_of (node)->end, g_string_free (text, FALSE));
}

/* ------------------------------------------------------------------ */
/* The rewrite                                                         */
/* ------------------------------------------------------------------ */

static char *
user_alias_of (xmlNode *node)
{
  xmlNode *alias = vpa_xml_child (node, "alias", NULL);
  return alias != NULL ? vpa_xml_prop (alias, "name") : NULL;
}

static gboolean
is_pci_device (Rewrite *rw, xmlNode *node)
{
  gboolean is_pci = FALSE;
  VpaAddr addr;

  return (vpa_xml_is (node, "hostdev", NULL) || vpa_xml_is (node, "interface", NULL)) &&
         vpa_xml_hostdev_address (node, rw->what, &is_pci, &addr, NULL) && is_pci;
}

/* User alias -> PCI <interface>/<hostdev> of <devices>; the first of a
 * repeated alias wins (libvirt refuses repeats). */
static GHashTable *
devices_by_alias (Rewrite *rw, xmlNode *devices)
{
  GHashTable *ret = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      char *name;
      if (!is_pci_device (rw, c) || (name = user_alias_of (c)) == NULL)
        continue;
      if (g_hash_table_contains (ret, name))
        g_free (name);
      else
        g_hash_table_insert (ret, name, c);
    }
  return ret;
}

/* Gives a device the decided <source><address>, changing nothing when
 * it has that address already. */
static gboolean
fill_source (Rewrite *rw, xmlNode *node, VpaAddr addr, GError **error)
{
  gboolean is_iface = vpa_xml_is (node, "interface", NULL);
  gboolean is_pci;
  VpaAddr cur;
  xmlNode *source, *address, *after;
  g_autoptr (Elem) src = NULL;

  if (!vpa_xml_hostdev_address (node, rw->what, &is_pci, &cur, error))
    return FALSE;
  if (cur == addr)
    return TRUE;
  source = vpa_xml_child (node, "source", NULL);
  address = source != NULL ? vpa_xml_child (source, "address", NULL) : NULL;
  if (address != NULL)
    {
      g_autoptr (Elem) a = address_elem (rw, addr, is_iface, NULL);
      replace_element (rw, address, a, "");
    }
  else if (source != NULL)
    {
      g_autoptr (Elem) a = address_elem (rw, addr, is_iface, NULL);
      insert_child (rw, source, AT_START, NULL, a);
    }
  else
    {
      /* where libvirt writes it: after <mac> or <driver> */
      src = elem_new ("source", NULL);
      address_elem (rw, addr, is_iface, src);
      after = vpa_xml_child (node, is_iface ? "mac" : "driver", NULL);
      insert_child (rw, node, after != NULL ? AFTER : AT_START, after, src);
    }
  return TRUE;
}

/* The <interface type='network'> of <devices> with this user alias. */
static xmlNode *
network_interface (xmlNode *devices, const char *alias)
{
  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *type = NULL;
      g_autofree char *name = NULL;

      if (vpa_xml_is (c, "interface", NULL) &&
          g_strcmp0 (type = vpa_xml_prop (c, "type"), "network") == 0 &&
          g_strcmp0 (name = user_alias_of (c), alias) == 0)
        return c;
    }
  return NULL;
}

static gsize
skip_blanks (Rewrite *rw, gsize i, gsize stop)
{
  while (i < stop && g_ascii_isspace (rw->buf[i]))
    i++;
  return i;
}

/* The value of the attribute called name (no prefix) in node's start
 * tag, as the bytes between its quotes: [*start, *end), *quote its
 * quote. FALSE when the tag has no such attribute. The document is
 * well-formed: every attribute is NAME blanks = blanks QUOTED. */
static gboolean
attr_value_span (Rewrite *rw, xmlNode *node, const char *name, gsize *start, gsize *end,
                 char *quote)
{
  const Span *span = span_of (node);
  gsize stop = span->start_end - 1, i = span->start + 1 + span->name_len;
  gsize n = strlen (name);

  while ((i = skip_blanks (rw, i, stop)) < stop)
    {
      gsize name_start = i, name_end;

      while (i < stop && rw->buf[i] != '=' && rw->buf[i] != '/' && !g_ascii_isspace (rw->buf[i]))
        i++;
      name_end = i;
      i = skip_blanks (rw, i, stop);
      if (i >= stop || rw->buf[i] != '=')
        return FALSE; /* the '/' of an empty element */
      i = skip_blanks (rw, i + 1, stop);
      if (i >= stop || (rw->buf[i] != '"' && rw->buf[i] != '\''))
        return FALSE;
      *quote = rw->buf[i];
      *start = ++i;
      while (i < stop && rw->buf[i] != *quote)
        i++;
      *end = i++;
      if (name_end - name_start == n && memcmp (rw->buf + name_start, name, n) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Points an <interface type='network'> at the decided network: the
 * value of its <source network> changes, every other byte of the
 * element stays (prefixed attributes, character references, quotes). */
static gboolean
fill_network (Rewrite *rw, xmlNode *devices, const VpaDecision *d, GError **error)
{
  xmlNode *node = network_interface (devices, d->device);
  xmlNode *source = node != NULL ? vpa_xml_child (node, "source", NULL) : NULL;
  g_autofree char *cur = source != NULL ? vpa_xml_prop (source, "network") : NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  gsize start, end;
  char quote;

  if (source == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: port '%s': no <interface type='network'> with a <source> has this user alias", rw->what, d->device);
      return FALSE;
    }
  if (g_strcmp0 (cur, d->network) == 0)
    return TRUE;
  if (attr_value_span (rw, source, "network", &start, &end, &quote))
    append_attr_value (text, quote, d->network);
  else
    {
      /* no network attribute: one after the element's name */
      start = end = span_of (source)->start + 1 + span_of (source)->name_len;
      quote = quote_of (rw, source, '\'');
      g_string_append_printf (text, " network=%c", quote);
      append_attr_value (text, quote, d->network);
      g_string_append_c (text, quote);
    }
  edit_add (rw, start, end, g_string_free (g_steal_pointer (&text), FALSE));
  return TRUE;
}

static gboolean
rewrite_ports (Rewrite *rw, xmlNode *devices, GPtrArray *decisions, GHashTable *by_alias,
               GError **error)
{
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      xmlNode *node;

      if (d->kind == VPA_DECISION_ALIAS)
        continue;
      if (d->network != NULL)
        {
          if (!fill_network (rw, devices, d, error))
            return FALSE;
          continue;
        }
      node = g_str_has_prefix (d->device, VPA_ALIAS_PREFIX)
               ? NULL
               : g_hash_table_lookup (by_alias, d->device);
      if (node == NULL && d->kind == VPA_DECISION_DEVICE)
        continue; /* rewrite_alias_hostdevs adds it */
      if (node == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: port '%s': no <interface type='hostdev'> or PCI <hostdev> has this user alias",
                       rw->what, d->device);
          return FALSE;
        }
      if (!fill_source (rw, node, d->addr, error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* The guest's PCI layout (<vpa:guest-numa>)                            */
/* ------------------------------------------------------------------ */

static const VpaTopoPlacement *
placement_of (Rewrite *rw, const char *alias)
{
  for (guint i = 0; rw->topo != NULL && alias != NULL && i < rw->topo->placements->len; i++)
    {
      const VpaTopoPlacement *pl = g_ptr_array_index (rw->topo->placements, i);
      if (strcmp (pl->device, alias) == 0)
        return pl;
    }
  return NULL;
}

/* <address type='pci' domain='0x0000' bus='0x05' slot='0x00' function='0x0'/> */
static Elem *
guest_address_elem (Rewrite *rw, guint bus, guint slot, Elem *parent)
{
  Elem *e = elem_new ("address", parent);
  g_autofree char *b = g_strdup_printf ("0x%02x", bus);
  g_autofree char *sl = g_strdup_printf ("0x%02x", slot);

  elem_attr (e, rw->dev_quote, "type", "pci");
  elem_attr (e, rw->dev_quote, "domain", "0x0000");
  elem_attr (e, rw->dev_quote, "bus", b);
  elem_attr (e, rw->dev_quote, "slot", sl);
  elem_attr (e, rw->dev_quote, "function", "0x0");
  return e;
}

static Elem *
controller_elem (Rewrite *rw, const VpaTopoController *tc)
{
  Elem *c = elem_new ("controller", NULL);
  g_autofree char *index = g_strdup_printf ("%u", tc->index);
  Elem *alias;

  elem_attr (c, rw->dev_quote, "type", "pci");
  elem_attr (c, rw->dev_quote, "index", index);
  if (tc->kind == VPA_TOPO_EXPANDER)
    {
      g_autofree char *busnr = g_strdup_printf ("%u", tc->bus_nr);
      Elem *target, *node;

      elem_attr (c, rw->dev_quote, "model", vpa_guest_expander_model (tc->machine));
      target = elem_new ("target", c);
      elem_attr (target, rw->dev_quote, "busNr", busnr);
      node = elem_new ("node", target);
      node->text = g_strdup_printf ("%u", tc->cell);
    }
  else
    elem_attr (c, rw->dev_quote, "model", "pcie-root-port");
  alias = elem_new ("alias", c);
  elem_attr (alias, rw->dev_quote, "name", tc->alias);
  if (tc->kind == VPA_TOPO_ROOT_PORT)
    guest_address_elem (rw, tc->parent, tc->slot, c);
  return c;
}

static char *
controller_alias (xmlNode *node)
{
  g_autofree char *type = vpa_xml_prop (node, "type");

  if (!vpa_xml_is (node, "controller", NULL) || g_strcmp0 (type, "pci") != 0)
    return NULL;
  return user_alias_of (node);
}

/* Index + 1 -> user alias of our controllers as the document has them. */
static GHashTable *
owned_indexes (xmlNode *devices)
{
  GHashTable *ret = g_hash_table_new_full (NULL, NULL, NULL, g_free);

  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *alias = controller_alias (c);
      gint index;

      if (!vpa_guest_topology_owns (alias))
        continue;
      if ((index = vpa_guest_controller_index (c)) >= 0)
        g_hash_table_insert (ret, GUINT_TO_POINTER ((guint) index + 1), g_steal_pointer (&alias));
    }
  return ret;
}

/* Our controllers: kept when they are exactly the plan's, replaced when
 * they differ, removed when the plan has none of that alias; the plan's
 * others go after the document's last <controller>. */
static void
rewrite_controllers (Rewrite *rw, xmlNode *devices)
{
  GPtrArray *plan = rw->topo->controllers;
  g_autoptr (GHashTable) done = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func ((GDestroyNotify) elem_free);
  xmlNode *last = NULL;

  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *alias = controller_alias (c);
      const VpaTopoController *tc = NULL;

      if (vpa_xml_is (c, "controller", NULL))
        last = c;
      if (!vpa_guest_topology_owns (alias))
        continue;
      for (guint i = 0; i < plan->len && tc == NULL; i++)
        {
          const VpaTopoController *t = g_ptr_array_index (plan, i);
          if (strcmp (t->alias, alias) == 0 && !g_hash_table_contains (done, t))
            tc = t;
        }
      if (tc == NULL)
        {
          remove_element (rw, c);
          continue;
        }
      g_hash_table_add (done, (gpointer) tc);
      if (!vpa_guest_controller_matches (c, tc))
        {
          g_autoptr (Elem) e = controller_elem (rw, tc);
          g_autofree char *indent = own_indent (rw, c);
          replace_element (rw, c, e, indent);
        }
    }
  for (guint i = 0; i < plan->len; i++)
    if (!g_hash_table_contains (done, g_ptr_array_index (plan, i)))
      g_ptr_array_add (added, controller_elem (rw, g_ptr_array_index (plan, i)));
  if (added->len == 0)
    return;
  if (last == NULL)
    last = vpa_xml_child (devices, "emulator", NULL);
  insert_children (rw, devices, last != NULL ? AFTER : AT_START, last, added);
}

static gboolean
is_unplaced (Rewrite *rw, const char *alias)
{
  for (guint i = 0; i < rw->topo->unplaced->len; i++)
    if (strcmp (((const VpaTopoDevice *) g_ptr_array_index (rw->topo->unplaced, i))->device, alias) == 0)
      return TRUE;
  return FALSE;
}

/* Whether the plan keeps our controller called alias at index. */
static gboolean
plan_keeps (Rewrite *rw, const char *alias, guint index)
{
  for (guint i = 0; i < rw->topo->controllers->len; i++)
    {
      const VpaTopoController *tc = g_ptr_array_index (rw->topo->controllers, i);
      if (tc->index == index && g_strcmp0 (tc->alias, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Each placed device's guest <address> on its root port (or expander).
 * A device of ours left where libvirt puts it loses an address on one of
 * our controllers; another device (hot-plugged into a spare) keeps its
 * address while the plan keeps that controller. */
static void
rewrite_guest_addresses (Rewrite *rw, xmlNode *devices)
{
  g_autoptr (GHashTable) ours = owned_indexes (devices);

  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *alias = NULL;
      const VpaTopoPlacement *pl;
      xmlNode *addr;
      gint bus, slot;

      if ((!vpa_xml_is (c, "hostdev", NULL) && !vpa_xml_is (c, "interface", NULL)) ||
          g_hash_table_contains (rw->removed, c) || (alias = user_alias_of (c)) == NULL)
        continue;
      pl = placement_of (rw, alias);
      addr = vpa_xml_child (c, "address", NULL);
      bus = vpa_guest_address_bus (c, &slot);
      if (pl == NULL)
        {
          const char *on = bus >= 0 ? g_hash_table_lookup (ours, GUINT_TO_POINTER ((guint) bus + 1))
                                    : NULL;
          if (!rw->topo->keep && addr != NULL && on != NULL &&
              (is_unplaced (rw, alias) || !plan_keeps (rw, on, (guint) bus)))
            {
              /* every <address>: libvirt reads the first, and a second
               * would become the first */
              for (xmlNode *a = addr; a != NULL; a = a->next)
                if (vpa_xml_is (a, "address", NULL))
                  remove_element (rw, a);
            }
          continue;
        }
      if (bus == (gint) pl->bus && slot == (gint) pl->slot)
        continue;
      {
        g_autoptr (Elem) e = guest_address_elem (rw, pl->bus, pl->slot, NULL);
        if (addr != NULL)
          replace_element (rw, addr, e, "");
        else
          insert_child (rw, c, AT_END, NULL, e);
      }
    }
}

static void
rewrite_topology (Rewrite *rw, xmlNode *devices)
{
  if (rw->topo == NULL || devices == NULL)
    return;
  if (!rw->topo->keep)
    rewrite_controllers (rw, devices);
  rewrite_guest_addresses (rw, devices);
}

static Elem *
alias_hostdev_elem (Rewrite *rw, const VpaDecision *d)
{
  Elem *hd = elem_new ("hostdev", NULL);
  Elem *src, *alias;
  g_autofree char *name = vpa_decision_user_alias (d);
  const VpaTopoPlacement *pl;

  elem_attr (hd, rw->dev_quote, "mode", "subsystem");
  elem_attr (hd, rw->dev_quote, "type", "pci");
  elem_attr (hd, rw->dev_quote, "managed", "yes");
  src = elem_new ("source", hd);
  address_elem (rw, d->addr, FALSE, src);
  alias = elem_new ("alias", hd);
  elem_attr (alias, rw->dev_quote, "name", name);
  if ((pl = placement_of (rw, name)) != NULL)
    guest_address_elem (rw, pl->bus, pl->slot, hd);
  return hd;
}

/* Reuses the ua-vpa-NAME-N hostdevs the decisions name, removes the
 * others (ours by their prefix), and adds the missing ones after the
 * last remaining <hostdev>. */
static gboolean
rewrite_alias_hostdevs (Rewrite *rw, xmlNode *domain, xmlNode *devices, GPtrArray *decisions,
                        GHashTable *by_alias, GError **error)
{
  g_autoptr (GHashTable) wanted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func ((GDestroyNotify) elem_free);
  xmlNode *last_kept = NULL;

  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      if (d->kind == VPA_DECISION_ALIAS)
        g_hash_table_insert (wanted, vpa_decision_user_alias (d), (gpointer) d);
    }
  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *name = NULL;
      const VpaDecision *d;

      if (!vpa_xml_is (c, "hostdev", NULL) || !is_pci_device (rw, c))
        continue;
      name = user_alias_of (c);
      if (name == NULL || !g_str_has_prefix (name, VPA_ALIAS_PREFIX))
        {
          last_kept = c;
          continue;
        }
      d = g_hash_table_lookup (wanted, name);
      if (d == NULL)
        {
          remove_element (rw, c);
          continue;
        }
      if (!fill_source (rw, c, d->addr, error))
        return FALSE;
      g_hash_table_remove (wanted, name); /* a second one of that name goes */
      last_kept = c;
    }
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      g_autofree char *name = NULL;

      if (d->kind == VPA_DECISION_DEVICE && !g_hash_table_contains (by_alias, d->device))
        g_ptr_array_add (added, alias_hostdev_elem (rw, d));
      if (d->kind != VPA_DECISION_ALIAS)
        continue;
      name = vpa_decision_user_alias (d);
      if (g_hash_table_contains (wanted, name))
        g_ptr_array_add (added, alias_hostdev_elem (rw, d));
    }
  if (added->len == 0)
    return TRUE;
  if (devices == NULL)
    {
      g_autoptr (Elem) devs = elem_new ("devices", NULL);
      for (guint i = 0; rw->topo != NULL && !rw->topo->keep && i < rw->topo->controllers->len; i++)
        g_ptr_array_add (devs->children, controller_elem (rw, g_ptr_array_index (rw->topo->controllers, i)));
      g_ptr_array_extend_and_steal (devs->children, g_steal_pointer (&added));
      insert_child (rw, domain, AT_END, NULL, devs);
      return TRUE;
    }
  insert_children (rw, devices, last_kept != NULL ? AFTER : AT_END, last_kept, added);
  return TRUE;
}

static gboolean
placed_matches (const VpaDomain *dom, GPtrArray *decisions)
{
  if (dom->placed->len != decisions->len)
    return FALSE;
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      const VpaPlacedRecord *r = g_ptr_array_index (dom->placed, i);
      g_autofree char *name = vpa_decision_user_alias (d);

      if (strcmp (name, r->device) != 0 || g_strcmp0 (r->network, d->network) != 0 ||
          (d->network == NULL && r->addr != d->addr) || r->numa_node != d->numa_node ||
          r->policy != d->policy || r->source != d->source ||
          g_strcmp0 (r->locality_group, d->locality_group) != 0 ||
          (d->locality_group != NULL && r->locality != d->locality))
        return FALSE;
    }
  return TRUE;
}

static Elem *
placed_elem (Rewrite *rw, const char *qname, const VpaDecision *d)
{
  Elem *e = elem_new (qname, NULL);
  g_autofree char *name = vpa_decision_user_alias (d);
  g_autofree char *node = g_strdup_printf ("%d", d->numa_node);
  char addr[VPA_ADDR_BUFLEN];

  elem_attr (e, rw->vpa_quote, "device", name);
  if (d->network != NULL)
    elem_attr (e, rw->vpa_quote, "network", d->network);
  else
    elem_attr (e, rw->vpa_quote, "address", vpa_addr_format (d->addr, addr));
  elem_attr (e, rw->vpa_quote, "numa-node", node);
  elem_attr (e, rw->vpa_quote, "policy", vpa_policy_to_string (d->policy));
  elem_attr (e, rw->vpa_quote, "source", vpa_policy_source_to_string (d->source));
  if (d->locality_group != NULL)
    {
      elem_attr (e, rw->vpa_quote, "locality-group", d->locality_group);
      elem_attr (e, rw->vpa_quote, "locality",
                 vpa_locality_to_string ((VpaLocality) CLAMP (d->locality, 0,
                                                              VPA_LOCALITY_LAST - 1)));
    }
  return e;
}

/* Replaces the <vpa:placed> records, unless they say exactly this. */
static void
rewrite_placed (Rewrite *rw, const VpaDomain *dom, xmlNode *affinity, GPtrArray *decisions)
{
  g_autoptr (GPtrArray) elems = g_ptr_array_new_with_free_func ((GDestroyNotify) elem_free);
  g_autofree char *qname = NULL;

  if (placed_matches (dom, decisions))
    return;
  for (xmlNode *c = affinity->children; c != NULL; c = c->next)
    if (vpa_xml_is (c, "placed", VPA_XMLNS))
      remove_element (rw, c);
  /* the prefix the document gave our namespace */
  qname = affinity->ns->prefix != NULL
            ? g_strdup_printf ("%s:placed", (const char *) affinity->ns->prefix)
            : g_strdup ("placed");
  for (guint i = 0; i < decisions->len; i++)
    g_ptr_array_add (elems, placed_elem (rw, qname, g_ptr_array_index (decisions, i)));
  if (elems->len > 0)
    insert_children (rw, affinity, AT_END, NULL, elems);
}

static gboolean
check_decisions (const char *what, GPtrArray *decisions, GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      g_autofree char *name = NULL;

      g_return_val_if_fail (d != NULL && d->device != NULL, FALSE);
      g_return_val_if_fail (d->policy < VPA_POLICY_LAST, FALSE);
      g_return_val_if_fail (d->source < VPA_POLICY_SOURCE_LAST, FALSE);
      name = vpa_decision_user_alias (d);
      if (*d->device == '\0' ||
          (d->kind == VPA_DECISION_ALIAS &&
           strspn (d->device, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
             strlen (d->device)))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: decision for device '%s': not a valid libvirt user alias", what, name);
          return FALSE;
        }
      if (d->addr == VPA_ADDR_NONE && d->network == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: decision for device '%s': no PCI address", what, name);
          return FALSE;
        }
      if (g_hash_table_contains (seen, name))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: two decisions for device '%s'", what, name);
          return FALSE;
        }
      g_hash_table_add (seen, g_steal_pointer (&name));
    }
  return TRUE;
}

static xmlNode *
find_affinity (xmlNode *domain)
{
  xmlNode *metadata = vpa_xml_child (domain, "metadata", NULL);
  return metadata != NULL ? vpa_xml_child (metadata, "affinity", VPA_XMLNS) : NULL;
}

/* The scanner reads bytes: only encodings whose markup is ASCII. */
static gboolean
check_encoding (xmlDoc *doc, const char *what, GError **error)
{
  const char *enc = (const char *) doc->encoding;

  if (enc == NULL || g_ascii_strcasecmp (enc, "UTF-8") == 0 ||
      g_ascii_strcasecmp (enc, "UTF8") == 0 || g_ascii_strcasecmp (enc, "US-ASCII") == 0 ||
      g_ascii_strcasecmp (enc, "ASCII") == 0)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: <?xml encoding='%s'?>: only UTF-8 documents can be rewritten", what, enc);
  return FALSE;
}

static gboolean
map_document (Rewrite *rw, xmlDoc *doc, GError **error)
{
  guint next = 0;

  if (!scan_spans (rw) || !attach_spans (rw, doc->children, &next) || next != rw->spans->len)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: internal error: cannot map the document's elements to its bytes",
                   rw->what);
      return FALSE;
    }
  return TRUE;
}

static void
grow (Growth *total, const Growth *more)
{
  total->elements = MIN ((guint64) total->elements + more->elements, G_MAXUINT);
  total->attributes = MIN ((guint64) total->attributes + more->attributes, G_MAXUINT);
}

/* Our own output, parsed within the input's bounds grown by what the
 * edits added (a domain at the bounds stays placeable). */
static VpaDomain *
parse_output (const char *out, gsize out_len, const char *what, const Growth *added,
              GError **error)
{
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory_grown (out, out_len, what, added->elements,
                                                       added->attributes, error);

  if (doc == NULL)
    return NULL;
  return vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error);
}

/* Our own output must parse and record exactly the decisions. */
static gboolean
verify_output (const char *out, gsize out_len, const char *what, const Growth *added,
               GPtrArray *decisions, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaDomain) dom = parse_output (out, out_len, what, added, &local);

  if (dom != NULL && placed_matches (dom, decisions))
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: internal error: the rewritten document does not hold the placement%s%s",
               what, local != NULL ? ": " : "", local != NULL ? local->message : "");
  return FALSE;
}

static char *
rewrite_tree (Rewrite *rw, xmlDoc *doc, const VpaDomain *dom, GPtrArray *decisions,
              gsize *out_len, GError **error)
{
  xmlNode *root = xmlDocGetRootElement (doc);
  xmlNode *domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL)
                                                         : root;
  xmlNode *affinity = find_affinity (domain);
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);
  g_autoptr (GHashTable) by_alias = NULL;

  if (affinity == NULL)
    {
      if (decisions->len > 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <metadata> has no <vpa:affinity> to record the placement in",
                       rw->what);
          return NULL;
        }
      *out_len = rw->len;
      return g_strndup (rw->buf, rw->len);
    }
  if (!map_document (rw, doc, error))
    return NULL;
  learn_layout (rw, root);
  rw->vpa_quote = quote_of (rw, affinity, '"');
  by_alias = devices_by_alias (rw, devices);
  if (!rewrite_ports (rw, devices, decisions, by_alias, error) ||
      !rewrite_alias_hostdevs (rw, domain, devices, decisions, by_alias, error))
    return NULL;
  rewrite_topology (rw, devices);
  rewrite_placed (rw, dom, affinity, decisions);
  return edits_apply (rw, out_len, error);
}

char *
vpa_domain_rewrite (const char *buf, gsize len, const char *what, GPtrArray *decisions,
                    gsize *out_len, GError **error)
{
  return vpa_domain_rewrite_topology (buf, len, what, decisions, NULL, out_len, error);
}

/* Parses and rewrites buf; its tree and the maps into it are freed on
 * return, before the caller parses the output to verify it, so that
 * one libxml2 tree is alive at a time (see docs/reliability.md). */
static char *
rewrite_placement (const char *buf, gsize len, const char *what, GPtrArray *decisions,
                   const VpaGuestTopology *topo, gsize *out_len, Growth *added,
                   GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (Span));
  g_autoptr (GArray) edits = g_array_new (FALSE, FALSE, sizeof (Edit));
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);
  Rewrite rw = { buf, len, what, spans, edits };
  char *out;

  rw.topo = topo;
  rw.removed = removed;
  g_array_set_clear_func (edits, edit_clear);
  if ((doc = vpa_xml_parse_memory (buf, len, what, error)) == NULL ||
      !check_encoding (doc, what, error) ||
      (dom = vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error)) == NULL ||
      !check_decisions (what, decisions, error))
    return NULL;
  out = rewrite_tree (&rw, doc, dom, decisions, out_len, error);
  g_free (rw.step);
  *added = rw.added;
  return out;
}

char *
vpa_domain_rewrite_topology (const char *buf, gsize len, const char *what, GPtrArray *decisions,
                             const VpaGuestTopology *topo, gsize *out_len, GError **error)
{
  g_autofree char *out = NULL;
  Growth added = { 0, 0 };

  g_return_val_if_fail (what != NULL, NULL);
  g_return_val_if_fail (decisions != NULL, NULL);
  g_return_val_if_fail (out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  out = rewrite_placement (buf, len, what, decisions, topo, out_len, &added, error);
  if (out == NULL || !verify_output (out, *out_len, what, &added, decisions, error))
    return NULL;
  return g_steal_pointer (&out);
}

/* ------------------------------------------------------------------ */
/* Whole-guest NUMA binding                                            */
/* ------------------------------------------------------------------ */

static gint
guint_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

char *
vpa_format_cpuset (const GArray *set)
{
  g_autoptr (GArray) sorted = g_array_copy ((GArray *) set);
  GString *out = g_string_new (NULL);

  g_array_sort (sorted, guint_cmp);
  for (guint i = 0; i < sorted->len;)
    {
      guint lo = g_array_index (sorted, guint, i), hi = lo, j = i + 1;
      while (j < sorted->len && g_array_index (sorted, guint, j) <= hi + 1)
        hi = g_array_index (sorted, guint, j++);
      if (out->len > 0)
        g_string_append_c (out, ',');
      if (hi == lo)
        g_string_append_printf (out, "%u", lo);
      else
        g_string_append_printf (out, "%u-%u", lo, hi);
      i = j;
    }
  return g_string_free (out, FALSE);
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
      g_autofree char *shared = vpa_format_cpuset (pc->cpus);

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
  Elem *e = elem_new ("numatune", NULL);
  g_autoptr (GArray) nodes = binding_nodes (b);
  g_autofree char *all = vpa_format_cpuset (nodes);
  Elem *m = elem_new ("memory", e);

  elem_attr (m, rw->dev_quote, "mode", "strict");
  elem_attr (m, rw->dev_quote, "nodeset", all);
  for (guint c = 0; b->memnodes && c < b->cells->len; c++)
    {
      const VpaPlacedCell *pc = &g_array_index (b->cells, VpaPlacedCell, c);
      g_autofree char *id = g_strdup_printf ("%u", pc->cell);
      g_autofree char *node = g_strdup_printf ("%d", pc->node);
      Elem *mn = elem_new ("memnode", e);
      elem_attr (mn, rw->dev_quote, "cellid", id);
      elem_attr (mn, rw->dev_quote, "mode", "strict");
      elem_attr (mn, rw->dev_quote, "nodeset", node);
    }
  return e;
}

/* vcpupin per vCPU and the emulatorpin, as elements to add. */
static GPtrArray *
pin_elems (Rewrite *rw, const VpaNumaBinding *b)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) elem_free);
  g_autoptr (GArray) pins = binding_pins (b);
  g_autofree char *emu = vpa_format_cpuset (b->emulator);
  Elem *e;

  for (guint i = 0; i < pins->len; i++)
    {
      const Pin *p = &g_array_index (pins, Pin, i);
      g_autofree char *v = g_strdup_printf ("%u", p->vcpu);
      e = elem_new ("vcpupin", NULL);
      elem_attr (e, rw->dev_quote, "vcpu", v);
      elem_attr (e, rw->dev_quote, "cpuset", p->cpuset);
      g_ptr_array_add (out, e);
    }
  e = elem_new ("emulatorpin", NULL);
  elem_attr (e, rw->dev_quote, "cpuset", emu);
  g_ptr_array_add (out, e);
  return out;
}

/* Whether <cputune> already pins exactly as b says. */
static gboolean
pins_match (xmlNode *cputune, const VpaNumaBinding *b)
{
  g_autoptr (GArray) pins = binding_pins (b);
  g_autofree char *emu = vpa_format_cpuset (b->emulator);
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
    if (c->type == XML_ELEMENT_NODE && !vpa_xml_is (c, "vcpupin", NULL) &&
        !vpa_xml_is (c, "emulatorpin", NULL))
      return FALSE;
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
      g_autoptr (Elem) e = elem_new ("cputune", NULL);
      g_autofree char *indent = NULL;
      for (guint i = 0; i < elems->len; i++)
        g_ptr_array_add (e->children, g_steal_pointer (&elems->pdata[i]));
      if (cputune != NULL)
        {
          indent = own_indent (rw, cputune);
          replace_element (rw, cputune, e, indent);
        }
      else
        insert_child (rw, domain, anchor != NULL ? AFTER : AT_END, anchor, e);
      return;
    }
  for (xmlNode *c = cputune->children; c != NULL; c = c->next)
    if (vpa_xml_is (c, "vcpupin", NULL) || vpa_xml_is (c, "emulatorpin", NULL))
      remove_element (rw, c);
  insert_children (rw, cputune, AT_END, NULL, elems);
}

static void
rewrite_numatune (Rewrite *rw, xmlNode *domain, xmlNode *anchor, const VpaNumaBinding *b)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  g_autoptr (Elem) e = numatune_elem (rw, b);

  if (numatune != NULL)
    {
      g_autofree char *indent = own_indent (rw, numatune);
      GString *text = g_string_new (NULL);
      const Span *sp = span_of (numatune);
      gboolean same;

      elem_render (rw, e, indent, text);
      same = text->len == sp->end - sp->start && memcmp (text->str, rw->buf + sp->start, text->len) == 0;
      g_string_free (text, TRUE);
      if (!same)
        replace_element (rw, numatune, e, indent);
      return;
    }
  insert_child (rw, domain, anchor != NULL ? AFTER : AT_END, anchor, e);
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
  g_autoptr (GPtrArray) elems = g_ptr_array_new_with_free_func ((GDestroyNotify) elem_free);
  g_autofree char *qname = NULL;

  if (placed_cells_match (dom, b))
    return;
  for (xmlNode *c = affinity->children; c != NULL; c = c->next)
    if (vpa_xml_is (c, "placed-cell", VPA_XMLNS))
      remove_element (rw, c);
  qname = affinity->ns->prefix != NULL
            ? g_strdup_printf ("%s:placed-cell", (const char *) affinity->ns->prefix)
            : g_strdup ("placed-cell");
  for (guint c = 0; c < b->cells->len; c++)
    {
      const VpaPlacedCell *pc = &g_array_index (b->cells, VpaPlacedCell, c);
      Elem *e = elem_new (qname, NULL);
      g_autofree char *cell = g_strdup_printf ("%u", pc->cell);
      g_autofree char *node = g_strdup_printf ("%d", pc->node);
      g_autofree char *cpus = cpus_attr (pc->cpus);
      g_autofree char *mem = g_strdup_printf ("%" G_GUINT64_FORMAT, pc->memory_kib);

      elem_attr (e, rw->vpa_quote, "cell", cell);
      elem_attr (e, rw->vpa_quote, "host-node", node);
      elem_attr (e, rw->vpa_quote, "cpus", cpus);
      elem_attr (e, rw->vpa_quote, "memory-kib", mem);
      if (pc->reserved != NULL && pc->reserved->len > 0)
        {
          g_autofree char *reserved = cpus_attr (pc->reserved);
          elem_attr (e, rw->vpa_quote, "reserved-cpus", reserved);
        }
      if (pc->emulator != NULL && pc->emulator->len > 0)
        {
          g_autofree char *emulator = cpus_attr (pc->emulator);
          elem_attr (e, rw->vpa_quote, "emulator-cpus", emulator);
        }
      g_ptr_array_add (elems, e);
    }
  insert_children (rw, affinity, AT_END, NULL, elems);
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

  g_array_set_clear_func (edits, edit_clear);
  if ((doc = vpa_xml_parse_memory_grown (buf, len, what, added->elements, added->attributes,
                                         error)) == NULL ||
      !check_encoding (doc, what, error) ||
      (dom = vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error)) == NULL)
    return NULL;
  root = xmlDocGetRootElement (doc);
  domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL) : root;
  affinity = find_affinity (domain);
  if (affinity == NULL || !map_document (&rw, doc, error))
    {
      if (affinity == NULL)
        g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <metadata> has no <vpa:affinity> to record the binding in", what);
      return NULL;
    }
  learn_layout (&rw, root);
  rw.vpa_quote = quote_of (&rw, affinity, '"');
  /* New elements go after <vcpu> (else <memory>), where libvirt writes them. */
  anchor = vpa_xml_child (domain, "vcpu", NULL);
  if (anchor == NULL)
    anchor = vpa_xml_child (domain, "memory", NULL);
  rewrite_cputune (&rw, domain, anchor, binding);
  rewrite_numatune (&rw, domain, anchor, binding);
  rewrite_placed_cells (&rw, dom, affinity, binding);
  out = edits_apply (&rw, out_len, error);
  g_free (rw.step);
  grow (added, &rw.added);
  return out;
}

char *
vpa_domain_rewrite_numa (const char *buf, gsize len, const char *what,
                         const VpaNumaBinding *binding, gsize *out_len, GError **error)
{
  return vpa_domain_rewrite_numa_grown (buf, len, what, binding, 0, 0, out_len, error);
}

char *
vpa_domain_rewrite_numa_grown (const char *buf, gsize len, const char *what,
                               const VpaNumaBinding *binding, guint extra_elements,
                               guint extra_attributes, gsize *out_len, GError **error)
{
  g_autoptr (VpaDomain) check = NULL;
  g_autofree char *out = NULL;
  Growth added = { extra_elements, extra_attributes };

  g_return_val_if_fail (binding != NULL && binding->cells != NULL && out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  out = rewrite_binding (buf, len, what, binding, out_len, &added, error);
  if (out == NULL)
    return NULL;
  check = parse_output (out, *out_len, what, &added, NULL);
  if (check == NULL || !placed_cells_match (check, binding))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: internal error: the rewritten document does not hold the binding", what);
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ------------------------------------------------------------------ */
/* Guest NUMA distances                                                */
/* ------------------------------------------------------------------ */

static gint
distances_row (const VpaCellDistances *d, guint id)
{
  for (guint i = 0; i < d->n; i++)
    if (d->ids[i] == id)
      return (gint) i;
  return -1;
}

static Elem *
distances_elem (Rewrite *rw, const VpaCellDistances *d, guint row)
{
  Elem *e = elem_new ("distances", NULL);

  for (guint j = 0; j < d->n; j++)
    {
      g_autofree char *id = g_strdup_printf ("%u", d->ids[j]);
      g_autofree char *value = g_strdup_printf ("%u", d->values[row * d->n + j]);
      Elem *s = elem_new ("sibling", e);
      elem_attr (s, rw->dev_quote, "id", id);
      elem_attr (s, rw->dev_quote, "value", value);
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
      insert_child (rw, cell, AT_START, NULL, e);
      return;
    }
  indent = own_indent (rw, old);
  sp = span_of (old);
  elem_render (rw, e, indent, text);
  if (text->len != sp->end - sp->start || memcmp (text->str, rw->buf + sp->start, text->len) != 0)
    replace_element (rw, old, e, indent);
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

  g_array_set_clear_func (edits, edit_clear);
  if ((doc = vpa_xml_parse_memory_grown (buf, len, what, added->elements, added->attributes,
                                         error)) == NULL ||
      !check_encoding (doc, what, error) || !map_document (&rw, doc, error))
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
  learn_layout (&rw, root);
  ok = rewrite_distances (&rw, numa, distances, error);
  if (ok)
    out = edits_apply (&rw, out_len, error);
  g_free (rw.step);
  grow (added, &rw.added);
  return out;
}

char *
vpa_domain_rewrite_distances (const char *buf, gsize len, const char *what,
                              const VpaCellDistances *distances, gsize *out_len, GError **error)
{
  return vpa_domain_rewrite_distances_grown (buf, len, what, distances, NULL, out_len, error);
}

char *
vpa_domain_rewrite_distances_grown (const char *buf, gsize len, const char *what,
                                    const VpaCellDistances *distances, const VpaXmlGrowth *grown,
                                    gsize *out_len, GError **error)
{
  g_autoptr (VpaDomain) check = NULL;
  g_autofree char *out = NULL;
  Growth added = { 0, 0 };

  g_return_val_if_fail (distances != NULL && out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (grown != NULL)
    added = *grown;
  out = rewrite_distances_of (buf, len, what, distances, out_len, &added, error);
  if (out == NULL || (check = parse_output (out, *out_len, what, &added, error)) == NULL)
    return NULL;
  return g_steal_pointer (&out);
}

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
    if (g_strcmp0 (unit != NULL ? unit : "KiB", units[i].unit) == 0)
      {
        *kib = v > G_MAXUINT64 / units[i].bytes ? G_MAXUINT64 : v * units[i].bytes / 1024;
        return TRUE;
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
  Elem *e = elem_new ("pcihole64", NULL);
  elem_attr (e, rw->dev_quote, "unit", "KiB");
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
      g_autofree char *indent = own_indent (rw, hole);
      replace_element (rw, hole, e, indent);
      elem_free (e);
    }
  else if (root != NULL)
    {
      insert_child (rw, root, AT_START, NULL, e);
      elem_free (e);
    }
  else
    {
      Elem *c = elem_new ("controller", NULL);
      xmlNode *last = NULL;

      elem_attr (c, rw->dev_quote, "type", "pci");
      elem_attr (c, rw->dev_quote, "index", "0");
      elem_attr (c, rw->dev_quote, "model", model);
      g_ptr_array_add (c->children, e);
      for (xmlNode *n = devices->children; n != NULL; n = n->next)
        if (vpa_xml_is (n, "controller", NULL))
          last = n;
      insert_child (rw, devices, last != NULL ? AFTER : AT_END, last, c);
      elem_free (c);
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

  g_array_set_clear_func (edits, edit_clear);
  if ((doc = vpa_xml_parse_memory_grown (buf, len, what, added->elements, added->attributes,
                                         error)) == NULL ||
      !check_encoding (doc, what, error) || !map_document (&rw, doc, error))
    return NULL;
  root = xmlDocGetRootElement (doc);
  domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL) : root;
  devices = domain != NULL ? vpa_xml_child (domain, "devices", NULL) : NULL;
  if (devices == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: no <devices> to size <pcihole64> in", what);
      return NULL;
    }
  learn_layout (&rw, root);
  rewrite_hole64 (&rw, devices, model, kib);
  out = edits_apply (&rw, out_len, error);
  g_free (rw.step);
  grow (added, &rw.added);
  return out;
}

char *
vpa_domain_rewrite_pcihole64 (const char *buf, gsize len, const char *what, const char *model,
                              guint64 kib, gsize *out_len, GError **error)
{
  return vpa_domain_rewrite_pcihole64_grown (buf, len, what, model, kib, NULL, out_len, error);
}

char *
vpa_domain_rewrite_pcihole64_grown (const char *buf, gsize len, const char *what,
                                    const char *model, guint64 kib, const VpaXmlGrowth *grown,
                                    gsize *out_len, GError **error)
{
  g_autoptr (VpaDomain) check = NULL;
  g_autofree char *out = NULL;
  Growth added = { 0, 0 };

  g_return_val_if_fail (model != NULL && out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (grown != NULL)
    added = *grown;
  out = rewrite_pcihole64_of (buf, len, what, model, kib, out_len, &added, error);
  if (out == NULL || (check = parse_output (out, *out_len, what, &added, error)) == NULL)
    return NULL;
  return g_steal_pointer (&out);
}
