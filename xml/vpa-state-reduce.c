/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reduced reading of a state file (vpa-state-reduce.h). The rules
 * below name what vpa_statedirs_parse(), vpa_numa_claim() and
 * vpa_xml_domain_pci_devices() read; an element they read that is not
 * kept here would lose a claim, so a change to those readers changes
 * these rules too (tests/test-state-reduce.c compares both on every
 * state file of data/).
 */
#include "vpa-state-reduce.h"

#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <string.h>

#include "vpa-xml.h"
#include "vpa-xml-scan.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlTextReader, xmlFreeTextReader)

typedef enum {
  KEEP_ATTRIBUTES, /* the element and its attributes; children by rules */
  KEEP_SUBTREE,    /* the element, its attributes, text and descendants */
} KeepMode;

typedef struct Rule Rule;
struct Rule {
  const char *name; /* local name; NULL ends a list */
  const char *ns;   /* namespace href, or NULL for any */
  KeepMode mode;
  const Rule *children; /* with KEEP_ATTRIBUTES: which children; NULL none */
};

#define ATTRS(n)                   \
  {                                \
    n, NULL, KEEP_ATTRIBUTES, NULL \
  }
#define WHOLE(n)                \
  {                             \
    n, NULL, KEEP_SUBTREE, NULL \
  }
#define SOME(n, c)              \
  {                             \
    n, NULL, KEEP_ATTRIBUTES, c \
  }
#define END                           \
  {                                   \
    NULL, NULL, KEEP_ATTRIBUTES, NULL \
  }

static const Rule pins[] = { ATTRS ("vcpupin"), ATTRS ("emulatorpin"), ATTRS ("iothreadpin"), END };
static const Rule numatune[] = { ATTRS ("memory"), ATTRS ("memnode"), END };
static const Rule cells[] = { ATTRS ("cell"), END };
static const Rule numa[] = { SOME ("numa", cells), END };
static const Rule pages[] = { ATTRS ("page"), END };
static const Rule hugepages[] = { SOME ("hugepages", pages), END };
static const Rule vpa_numa[] = { { "numa", VPA_XMLNS, KEEP_ATTRIBUTES, NULL }, END };
static const Rule affinity[] = { { "affinity", VPA_XMLNS, KEEP_ATTRIBUTES, vpa_numa }, END };
static const Rule devices[] = { WHOLE ("hostdev"), WHOLE ("interface"), END };
static const Rule domain[] = {
  WHOLE ("name"),
  WHOLE ("vcpu"),
  WHOLE ("iothreads"),
  WHOLE ("memory"),
  SOME ("cputune", pins),
  SOME ("numatune", numatune),
  SOME ("cpu", numa),
  SOME ("memoryBacking", hugepages),
  SOME ("metadata", affinity),
  SOME ("devices", devices),
  END,
};
static const Rule domstatus[] = { SOME ("domain", domain), END };

typedef struct {
  xmlNode *node;
  const Rule *children; /* NULL: keeps no child element */
  gboolean subtree;
} Frame;

typedef struct {
  const char *what;
  xmlTextReader *reader;
  xmlDoc *doc;
  GArray *stack; /* Frame: the kept elements open */
  guint elements, attributes;
  GError *xml_error; /* the first error libxml2 reported */
} Reduce;

static void
reader_error (void *arg, xmlErrorPtr err)
{
  Reduce *r = arg;
  g_autofree char *msg = NULL;

  if (r->xml_error != NULL || err == NULL || err->level < XML_ERR_ERROR)
    return;
  msg = g_strdup (err->message != NULL ? err->message : "not well-formed");
  g_strchomp (msg);
  g_set_error (&r->xml_error, VPA_ERROR, VPA_ERROR_INVALID, "%s:%d: malformed XML: %s", r->what,
               err->line, msg);
}

static const char *
local_name (Reduce *r)
{
  const char *name = (const char *) xmlTextReaderConstLocalName (r->reader);
  return name != NULL ? name : "";
}

/* The line of the reader's node (the parser reads ahead). */
static int
line (Reduce *r)
{
  xmlNode *node = xmlTextReaderCurrentNode (r->reader);
  long n = node != NULL ? xmlGetLineNo (node) : -1;

  return n > 0 ? (int) n : xmlTextReaderGetParserLineNumber (r->reader);
}

static gboolean
over_bounds (Reduce *r, const char *bound, guint max, GError **error)
{
  g_autofree char *name = g_strndup (local_name (r), 64);

  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s:%d: element <%s>: the claims read more than %u %s (libvirt's documents have far fewer)",
               r->what, line (r), name, max, bound);
  return FALSE;
}

/* The rule among rules that the reader's element matches, or NULL. */
static const Rule *
match (Reduce *r, const Rule *rules)
{
  const char *name = local_name (r);
  const char *ns = (const char *) xmlTextReaderConstNamespaceUri (r->reader);

  for (const Rule *rule = rules; rule != NULL && rule->name != NULL; rule++)
    {
      if (strcmp (rule->name, name) == 0 &&
          (rule->ns == NULL || (ns != NULL && strcmp (rule->ns, ns) == 0)))
        return rule;
    }
  return NULL;
}

/* Copies the attributes without a namespace (the only ones the claims
 * read, with xmlGetNoNsProp), counting every attribute. */
static gboolean
copy_attributes (Reduce *r, xmlNode *node, GError **error)
{
  guint n = (guint) MAX (xmlTextReaderAttributeCount (r->reader), 0);

  if (n > VPA_XML_MAX_ATTRIBUTES)
    {
      g_autofree char *name = g_strndup (local_name (r), 64);

      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s:%d: element <%s> has %u attributes (at most %d are accepted)", r->what,
                   line (r), name, n, VPA_XML_MAX_ATTRIBUTES);
      return FALSE;
    }
  if ((r->attributes += n) > VPA_XML_MAX_ATTRIBUTES_TOTAL)
    return over_bounds (r, "attributes", VPA_XML_MAX_ATTRIBUTES_TOTAL, error);
  while (xmlTextReaderMoveToNextAttribute (r->reader) == 1)
    {
      if (!xmlTextReaderIsNamespaceDecl (r->reader) &&
          xmlTextReaderConstNamespaceUri (r->reader) == NULL)
        {
          xmlNewProp (node, xmlTextReaderConstLocalName (r->reader),
                      xmlTextReaderConstValue (r->reader));
        }
    }
  xmlTextReaderMoveToElement (r->reader);
  return TRUE;
}

/* Builds the reader's element under parent (the root when NULL). */
static gboolean
keep_element (Reduce *r, xmlNode *parent, const Rule *rule, gboolean subtree, GError **error)
{
  const xmlChar *ns = xmlTextReaderConstNamespaceUri (r->reader);
  xmlNode *node;
  Frame f;

  if (++r->elements > VPA_XML_MAX_ELEMENTS)
    return over_bounds (r, "elements", VPA_XML_MAX_ELEMENTS, error);
  node = xmlNewDocNode (r->doc, NULL, (const xmlChar *) local_name (r), NULL);
  if (parent != NULL)
    {
      xmlAddChild (parent, node);
    }
  else
    {
      xmlDocSetRootElement (r->doc, node);
    }
  if (ns != NULL)
    xmlSetNs (node, xmlNewNs (node, ns, xmlTextReaderConstPrefix (r->reader)));
  if (!copy_attributes (r, node, error))
    return FALSE;
  if (xmlTextReaderIsEmptyElement (r->reader))
    return TRUE;
  f.node = node;
  f.subtree = subtree;
  f.children = rule != NULL ? rule->children : NULL;
  g_array_append_val (r->stack, f);
  return TRUE;
}

/* The root: a <domstatus> keeps its <domain>, anything else is read as
 * a <domain> (whose name vpa_statedirs_parse() then checks). */
static gboolean
keep_root (Reduce *r, GError **error)
{
  Rule root = { NULL, NULL, KEEP_ATTRIBUTES, domain };

  if (strcmp (local_name (r), "domstatus") == 0)
    root.children = domstatus;
  return keep_element (r, NULL, &root, FALSE, error);
}

/* One element of the stream: kept (built), or skipped whole; *skip
 * says the reader must move past it. */
static gboolean
on_element (Reduce *r, gboolean *skip, GError **error)
{
  Frame *top;
  const Rule *rule;

  *skip = FALSE;
  if (r->stack->len == 0)
    {
      if (xmlDocGetRootElement (r->doc) == NULL)
        return keep_root (r, error);
      *skip = TRUE;
      return TRUE;
    }
  top = &g_array_index (r->stack, Frame, r->stack->len - 1);
  if (top->subtree)
    return keep_element (r, top->node, NULL, TRUE, error);
  if ((rule = match (r, top->children)) == NULL)
    {
      *skip = TRUE;
      return TRUE;
    }
  return keep_element (r, top->node, rule, rule->mode == KEEP_SUBTREE, error);
}

static void
on_text (Reduce *r)
{
  Frame *top;

  if (r->stack->len == 0)
    return;
  top = &g_array_index (r->stack, Frame, r->stack->len - 1);
  if (top->subtree)
    xmlAddChild (top->node, xmlNewDocText (r->doc, xmlTextReaderConstValue (r->reader)));
}

static gboolean
on_node (Reduce *r, int type, gboolean *skip, GError **error)
{
  *skip = FALSE;
  switch (type)
    {
    case XML_READER_TYPE_ELEMENT:
      return on_element (r, skip, error);
    case XML_READER_TYPE_END_ELEMENT:
      if (r->stack->len > 0)
        g_array_set_size (r->stack, r->stack->len - 1);
      return TRUE;
    case XML_READER_TYPE_TEXT:
    case XML_READER_TYPE_CDATA:
    case XML_READER_TYPE_WHITESPACE:
    case XML_READER_TYPE_SIGNIFICANT_WHITESPACE:
      on_text (r);
      return TRUE;
    case XML_READER_TYPE_DOCUMENT_TYPE:
    case XML_READER_TYPE_ENTITY:
    case XML_READER_TYPE_ENTITY_REFERENCE:
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: document type declarations are not accepted (entity declarations could expand without bound)",
                   r->what);
      return FALSE;
    default:
      return TRUE;
    }
}

static gboolean
read_stream (Reduce *r, GError **error)
{
  int ret = xmlTextReaderRead (r->reader);

  while (ret == 1)
    {
      gboolean skip;

      if (!on_node (r, xmlTextReaderNodeType (r->reader), &skip, error))
        return FALSE;
      ret = skip ? xmlTextReaderNext (r->reader) : xmlTextReaderRead (r->reader);
    }
  if (ret < 0 || r->xml_error != NULL)
    {
      if (r->xml_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&r->xml_error));
        }
      else
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s:%d: malformed XML", r->what,
                       xmlTextReaderGetParserLineNumber (r->reader));
        }
      return FALSE;
    }
  if (xmlDocGetRootElement (r->doc) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: no root element", r->what);
      return FALSE;
    }
  return TRUE;
}

/* A name as it stands in the bytes. */
typedef struct {
  const char *p;
  gsize len;
} Slice;

static guint
slice_hash (gconstpointer key)
{
  const Slice *s = key;
  guint h = 5381;

  for (gsize i = 0; i < s->len; i++)
    h = h * 33 + (guchar) s->p[i];
  return h;
}

static gboolean
slice_equal (gconstpointer a, gconstpointer b)
{
  const Slice *x = a, *y = b;
  return x->len == y->len && memcmp (x->p, y->p, x->len) == 0;
}

/* What libxml2's work grows with faster than the bytes: the attribute
 * pairs its duplicate check compares, the distinct names its
 * dictionary holds (libxml2 2.9's lookups slow down with them: 400 000
 * distinct element names cost 3 s), and the namespace declarations in
 * scope it searches one by one for every element and prefixed
 * attribute (30 000 elements under 40 000 declarations cost 0.4 s). */
typedef struct {
  GHashTable *names; /* Slice*, pointing into the document */
  guint64 pairs;
  GArray *scope;    /* guint: the declarations of each open element */
  guint64 in_scope; /* their sum */
  guint64 lookups;  /* declarations searched, at most */
} Census;

/* FALSE once past VPA_STATE_REDUCE_MAX_NAMES distinct names. */
static gboolean
census_add (Census *c, const char *p, gsize len)
{
  Slice key = { p, len };
  Slice *s;

  if (len == 0 || g_hash_table_contains (c->names, &key))
    return TRUE;
  if (g_hash_table_size (c->names) >= VPA_STATE_REDUCE_MAX_NAMES)
    return FALSE;
  s = g_new (Slice, 1);
  *s = key;
  g_hash_table_add (c->names, s);
  return TRUE;
}

/* A qualified name: its prefix and local part, as libxml2 keeps them. */
static gboolean
census_qname (Census *c, const char *p, gsize len)
{
  const char *colon = memchr (p, ':', len);

  if (colon == NULL)
    return census_add (c, p, len);
  return census_add (c, p, (gsize) (colon - p)) &&
         census_add (c, colon + 1, len - (gsize) (colon - p) - 1);
}

static gsize
span_name (const char *p, const char *end)
{
  const char *q = p;

  while (q < end && !g_ascii_isspace (*q) && *q != '=' && *q != '/' && *q != '>')
    q++;
  return (gsize) (q - p);
}

static const char *
skip_blanks (const char *p, const char *end)
{
  while (p < end && g_ascii_isspace (*p))
    p++;
  return p;
}

/* The names of the start tag [tag, end): the element's, its
 * attributes', and the namespaces it declares. A tag that does not
 * scan stops the count (libxml2 refuses it). */
static gboolean
census_tag (Census *c, const char *tag, const char *end, guint *decls)
{
  const char *p = tag + 1;
  gsize n = span_name (p, end);

  *decls = 0;
  if (!census_qname (c, p, n))
    return FALSE;
  for (p = skip_blanks (p + n, end); p < end && *p != '/' && *p != '>';
       p = skip_blanks (p, end))
    {
      const char *name = p, *value;
      char quote;

      n = span_name (p, end);
      if (n == 0 || !census_qname (c, name, n))
        return n == 0;
      p = skip_blanks (p + n, end);
      if (p >= end || *p != '=' || (p = skip_blanks (p + 1, end)) >= end ||
          (*p != '"' && *p != '\''))
        return TRUE;
      quote = *p++;
      value = p;
      while (p < end && *p != quote)
        p++;
      if (n >= 5 && memcmp (name, "xmlns", 5) == 0)
        {
          (*decls)++;
          if (!census_add (c, value, (gsize) (p - value)))
            return FALSE;
        }
      p++;
    }
  return TRUE;
}

static gboolean
census_fail (const char *what, const char *buf, const char *tag, const char *bound,
             guint64 max, GError **error)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s:%u: the document has more than %" G_GUINT64_FORMAT
               " %s (libvirt's documents have far fewer)",
               what, vpa_xml_scan_line (buf, tag), max, bound);
  return FALSE;
}

/* The scope after ends end tags, then the start tag [tag, end) with n
 * attributes declaring decls namespaces: libxml2 searches every
 * declaration in scope for the element's namespace and each of its
 * attributes'. */
static void
census_scope (Census *c, guint ends, const char *tag, const char *end, guint n, guint decls)
{
  for (; ends > 0 && c->scope->len > 0; ends--)
    {
      c->in_scope -= g_array_index (c->scope, guint, c->scope->len - 1);
      g_array_set_size (c->scope, c->scope->len - 1);
    }
  c->in_scope += decls;
  c->lookups += c->in_scope * (1 + (guint64) n);
  if (end - tag >= 2 && end[-1] == '>' && end[-2] == '/')
    {
      c->in_scope -= decls;
    }
  else
    {
      g_array_append_val (c->scope, decls);
    }
}

/* One linear pass before libxml2, as vpa_xml_prescan() is for a whole
 * parse, with the bounds of what a streaming pass costs. */
static gboolean
census (const char *buf, gsize len, const char *what, GArray *fixups, GError **error)
{
  Census c = { g_hash_table_new_full (slice_hash, slice_equal, g_free, NULL), 0,
               g_array_new (FALSE, FALSE, sizeof (guint)), 0, 0 };
  VpaXmlScan scan;
  const char *tag;
  gboolean ok = TRUE;
  guint n, decls;

  vpa_xml_scan_init (&scan, buf, len, fixups);
  while (ok && (tag = vpa_xml_scan_next (&scan, &n)) != NULL)
    {
      c.pairs += (guint64) n * (n - (n > 0)) / 2;
      if (c.pairs > VPA_STATE_REDUCE_MAX_PAIRS)
        {
          ok = census_fail (what, buf, tag, "pairs of attributes on one element to compare",
                            VPA_STATE_REDUCE_MAX_PAIRS, error);
        }
      else if (!census_tag (&c, tag, scan.pos, &decls))
        {
          ok = census_fail (what, buf, tag, "distinct names of elements, attributes and namespaces",
                            VPA_STATE_REDUCE_MAX_NAMES, error);
        }
      else
        {
          census_scope (&c, scan.end_tags, tag, scan.pos, n, decls);
          if (c.lookups > VPA_STATE_REDUCE_MAX_LOOKUPS)
            {
              ok = census_fail (what, buf, tag, "namespace declarations in scope to search",
                                VPA_STATE_REDUCE_MAX_LOOKUPS, error);
            }
        }
    }
  g_hash_table_unref (c.names);
  g_array_unref (c.scope);
  return ok;
}

/* What libxml2 is not given: the checks vpa_xml_parse_memory() makes
 * before parsing, with the census in place of the bounds. */
static gboolean
check_bytes (const char *buf, gsize len, const char *what, GArray *fixups, GError **error)
{
  const char *nul;

  if (len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: empty document", what);
      return FALSE;
    }
  if (len > (gsize) VPA_XML_MAX_DOCUMENT)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: document of %" G_GSIZE_FORMAT " bytes exceeds the limit of %d bytes",
                   what, len, VPA_XML_MAX_DOCUMENT);
      return FALSE;
    }
  if ((nul = memchr (buf, '\0', len)) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: NUL byte at offset %" G_GSIZE_FORMAT ": not an XML document", what,
                   (gsize) (nul - buf));
      return FALSE;
    }
  return census (buf, len, what, fixups, error);
}

static xmlDoc *
reduce_memory (const char *buf, gsize len, const char *what, GError **error)
{
  g_autoptr (GArray) fixups = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autofree char *fixed = NULL; /* freed after the reader */
  g_autoptr (xmlTextReader) reader = NULL;
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (Frame));
  Reduce r = { what, NULL, NULL, stack, 0, 0, NULL };
  gboolean ok;

  g_return_val_if_fail (buf != NULL || len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_bytes (buf, len, what, fixups, error))
    return NULL;
  /* The reader is given a copy with a blank in place of the first
   * character of each comment that misleads it: the text of a comment
   * is never read (vpa_xml_scan_comment_misleads). */
  if (fixups->len > 0)
    {
      fixed = g_memdup2 (buf, len);
      for (guint i = 0; i < fixups->len; i++)
        fixed[g_array_index (fixups, gsize, i)] = ' ';
      buf = fixed;
    }
  reader = xmlReaderForMemory (buf, (int) len, what, NULL, vpa_xml_parse_options ());
  if (reader == NULL)
    g_error ("out of memory");
  r.reader = reader;
  r.doc = xmlNewDoc ((const xmlChar *) "1.0");
  xmlTextReaderSetStructuredErrorHandler (reader, reader_error, &r);
  ok = read_stream (&r, error);
  g_clear_error (&r.xml_error);
  if (!ok)
    {
      xmlFreeDoc (r.doc);
      return NULL;
    }
  return r.doc;
}

xmlDoc *
vpa_state_reduce (const VpaDoc *doc, GError **error)
{
  g_return_val_if_fail (doc != NULL, NULL);
  return reduce_memory (doc->buf, doc->len, doc->what, error);
}
