/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Safe parsing of untrusted XML: the hook runs as root on documents any
 * user allowed to define domains controls.
 */
#include "vpa-xml.h"
#include "vpa-xml-scan.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <string.h>

int
vpa_xml_parse_options (void)
{
  /* No XML_PARSE_NOENT (entities stay unexpanded), no XML_PARSE_DTDLOAD,
   * no XML_PARSE_HUGE (keeps libxml2's depth and size limits). */
  return XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
         XML_PARSE_NOCDATA;
}

static void
silent_structured_error (void *ctx, xmlErrorPtr err)
{
  (void) ctx;
  (void) err;
}

/* Refuses a DTD (internal subset) outright: libvirt never writes one, and
 * it is the only way to declare entities (billion laughs, XXE). */
static gboolean
check_no_dtd (xmlDoc *doc, const char *what, GError **error)
{
  if (doc->intSubset != NULL || doc->extSubset != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: document type declarations are not accepted (entity declarations could expand without bound)",
                   what);
      return FALSE;
    }
  return TRUE;
}

static gboolean
too_many_attributes (GError **error, const char *what, const char *buf, const char *tag, guint n)
{
  gsize name_len = strcspn (tag + 1, " \t\r\n/>=");
  g_autofree char *name = g_strndup (tag + 1, MIN (name_len, (gsize) 64));

  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s:%u: element <%s> has %u attributes (at most %d are accepted)", what,
               vpa_xml_scan_line (buf, tag), name, n, VPA_XML_MAX_ATTRIBUTES);
  return FALSE;
}

static gboolean
prescan_fail (GError **error, const char *what, const char *buf, const char *at,
              const char *bound, guint max)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s:%u: the document has more than %u %s (libvirt's documents have far fewer)",
               what, vpa_xml_scan_line (buf, at), max, bound);
  return FALSE;
}

/* Counts the document's start tags and attributes into *elements and
 * *attributes, failing past max_elements and max_attributes. */
static gboolean
prescan_within (const char *buf, gsize len, const char *what, guint max_elements,
                guint max_attributes, guint *elements_out, guint *attributes_out,
                GError **error)
{
  VpaXmlScan scan;
  const char *tag;
  guint elements = 0, attributes = 0, n;

  /* One linear pass before libxml2, whose duplicate-attribute check is
   * quadratic in the attributes of one element (100 000 cost 23 s) and
   * whose tree costs about 1 KiB per element (16 MiB of "<a/>" would be
   * 4 GiB). */
  vpa_xml_scan_init (&scan, buf, len, NULL);
  while ((tag = vpa_xml_scan_next (&scan, &n)) != NULL)
    {
      if (++elements > max_elements)
        return prescan_fail (error, what, buf, tag, "elements", max_elements);
      if (n > VPA_XML_MAX_ATTRIBUTES)
        return too_many_attributes (error, what, buf, tag, n);
      attributes += n;
      if (attributes > max_attributes)
        return prescan_fail (error, what, buf, tag, "attributes", max_attributes);
    }
  *elements_out = elements;
  *attributes_out = attributes;
  return TRUE;
}

gboolean
vpa_xml_prescan (const VpaDoc *doc, GError **error)
{
  guint elements, attributes;

  g_return_val_if_fail (doc != NULL, FALSE);
  return prescan_within (doc->buf, doc->len, doc->what, VPA_XML_MAX_ELEMENTS, VPA_XML_MAX_ATTRIBUTES_TOTAL,
                         &elements, &attributes, error);
}

void
vpa_xml_count_markup (const char *buf, gsize len, guint *elements, guint *attributes)
{
  g_autoptr (GError) error = NULL;

  g_return_if_fail (elements != NULL && attributes != NULL);
  *elements = *attributes = 0;
  /* only an element over VPA_XML_MAX_ATTRIBUTES stops the count */
  if (!prescan_within (buf, len, "fragment", G_MAXUINT, G_MAXUINT, elements, attributes,
                       &error))
    *elements = *attributes = G_MAXUINT;
}

void
vpa_xml_growth (const char *before, gsize before_len, const char *after, gsize after_len,
                VpaXmlGrowth *growth)
{
  guint elements, attributes, after_elements, after_attributes;

  vpa_xml_count_markup (before, before_len, &elements, &attributes);
  vpa_xml_count_markup (after, after_len, &after_elements, &after_attributes);
  growth->elements = after_elements > elements ? after_elements - elements : 0;
  growth->attributes = after_attributes > attributes ? after_attributes - attributes : 0;
}

static xmlDoc *
parse_memory (const char *buf, gsize len, const char *what, guint extra_elements,
              guint extra_attributes, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  guint elements, attributes;
  xmlParserCtxtPtr ctxt;
  const xmlError *err;
  const char *nul;

  g_return_val_if_fail (buf != NULL || len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: empty document", what);
      return NULL;
    }
  if (len > (gsize) VPA_XML_MAX_DOCUMENT)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: document of %" G_GSIZE_FORMAT " bytes exceeds the limit of %d bytes",
                   what, len, VPA_XML_MAX_DOCUMENT);
      return NULL;
    }

  /* XML has no NUL character; libxml2 may stop at one and parse what
   * is before it, while the rewrite maps every byte */
  if ((nul = memchr (buf, '\0', len)) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: NUL byte at offset %" G_GSIZE_FORMAT ": not an XML document", what,
                   (gsize) (nul - buf));
      return NULL;
    }
  if (!prescan_within (buf, len, what, VPA_XML_MAX_ELEMENTS + MIN (extra_elements, G_MAXUINT / 2),
                       VPA_XML_MAX_ATTRIBUTES_TOTAL + MIN (extra_attributes, G_MAXUINT / 2),
                       &elements, &attributes, error))
    return NULL;
  ctxt = xmlNewParserCtxt ();
  if (ctxt == NULL)
    g_error ("out of memory");
  xmlSetStructuredErrorFunc (NULL, silent_structured_error);
  doc = xmlCtxtReadMemory (ctxt, buf, (int) len, what, NULL, vpa_xml_parse_options ());
  err = xmlCtxtGetLastError (ctxt);
  if (doc == NULL || (err != NULL && err->level >= XML_ERR_ERROR))
    {
      g_autofree char *msg = g_strdup (err != NULL && err->message != NULL
                                         ? err->message
                                         : "not well-formed");
      g_strchomp (msg);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s:%d: malformed XML: %s",
                   what, err != NULL ? err->line : 0, msg);
      xmlFreeParserCtxt (ctxt);
      return NULL;
    }
  xmlFreeParserCtxt (ctxt);

  if (!check_no_dtd (doc, what, error))
    return NULL;
  if (xmlDocGetRootElement (doc) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: no root element", what);
      return NULL;
    }
  return g_steal_pointer (&doc);
}

xmlDoc *
vpa_xml_parse_memory (const VpaDoc *doc, GError **error)
{
  return vpa_xml_parse_memory_grown (doc, 0, 0, error);
}

xmlDoc *
vpa_xml_parse_memory_grown (const VpaDoc *doc, guint extra_elements, guint extra_attributes,
                            GError **error)
{
  g_return_val_if_fail (doc != NULL, NULL);
  return parse_memory (doc->buf, doc->len, doc->what, extra_elements, extra_attributes, error);
}

/* ------------------------------------------------------------------ */

gboolean
vpa_xml_is (xmlNode *node, const char *name, const char *ns)
{
  if (node == NULL || node->type != XML_ELEMENT_NODE)
    return FALSE;
  if (!xmlStrEqual (node->name, (const xmlChar *) name))
    return FALSE;
  if (ns != NULL)
    return node->ns != NULL && xmlStrEqual (node->ns->href, (const xmlChar *) ns);
  return TRUE;
}

char *
vpa_xml_prop (xmlNode *node, const char *name)
{
  xmlChar *v = xmlGetNoNsProp (node, (const xmlChar *) name);
  char *ret;

  if (v == NULL)
    return NULL;
  ret = g_strdup ((const char *) v);
  xmlFree (v);
  return ret;
}

xmlNode *
vpa_xml_next_element (xmlNode *node)
{
  for (node = node->next; node != NULL; node = node->next)
    {
      if (node->type == XML_ELEMENT_NODE)
        return node;
    }
  return NULL;
}

xmlNode *
vpa_xml_child (xmlNode *node, const char *name, const char *ns)
{
  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, name, ns))
        return c;
    }
  return NULL;
}

char *
vpa_xml_text (xmlNode *node)
{
  xmlChar *v = xmlNodeGetContent (node);
  g_autofree char *s = NULL;

  if (v == NULL)
    return NULL;
  s = g_strstrip (g_strdup ((const char *) v));
  xmlFree (v);
  if (*s == '\0')
    return NULL;
  return g_steal_pointer (&s);
}

char *
vpa_xml_name (xmlNode *node)
{
  xmlChar *v = xmlNodeGetContent (node);
  char *s;

  if (v == NULL)
    return NULL;
  s = *v != '\0' ? g_strdup ((const char *) v) : NULL;
  xmlFree (v);
  return s;
}

/* One field of a PCI <address>, as libvirt writes it ("0x81") or a
 * person may ("129"): "0x" or "0X" and hex digits, or decimal digits
 * without a leading zero (libvirt would read "010" as octal). The whole
 * string: no blanks, no sign, nothing after the digits; at most max. */
static gboolean
parse_addr_field (const char *s, guint64 max, guint64 *out)
{
  gboolean hex;
  const char *digits;

  if (s == NULL)
    return FALSE;
  hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  digits = hex ? s + 2 : s;
  if (*digits == '\0' || (!hex && digits[0] == '0' && digits[1] != '\0'))
    return FALSE;
  for (const char *p = digits; *p != '\0'; p++)
    {
      if (hex ? !g_ascii_isxdigit (*p) : !g_ascii_isdigit (*p))
        return FALSE;
    }
  return g_ascii_string_to_unsigned (digits, hex ? 16 : 10, 0, max, out, NULL);
}

gboolean
vpa_xml_pci_address_fields (const char *const fields[4], VpaAddr *out, guint *bad)
{
  const guint64 max[] = { VPA_XML_PCI_DOMAIN_MAX, 0xff, 0x1f, 7 };
  guint64 v[4];

  for (guint i = 0; i < G_N_ELEMENTS (max); i++)
    {
      if (fields[i] == NULL && i == 0)
        {
          v[i] = 0;
          continue;
        }
      if (!parse_addr_field (fields[i], max[i], &v[i]))
        {
          if (bad != NULL)
            *bad = i;
          return FALSE;
        }
    }
  *out = VPA_ADDR (v[0], v[1], v[2], v[3]);
  return TRUE;
}

gboolean
vpa_xml_pci_address_parse (xmlNode *address, const char *what, const char *context,
                           VpaAddr *out, GError **error)
{
  const char *names[] = { "domain", "bus", "slot", "function" };
  g_autofree char *domain = vpa_xml_prop (address, names[0]);
  g_autofree char *bus = vpa_xml_prop (address, names[1]);
  g_autofree char *slot = vpa_xml_prop (address, names[2]);
  g_autofree char *function = vpa_xml_prop (address, names[3]);
  const char *fields[] = { domain, bus, slot, function };
  guint bad = 0;

  if (!vpa_xml_pci_address_fields (fields, out, &bad))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s<address %s='%s'>: not a PCI address field", what, context, names[bad], fields[bad] ? fields[bad] : "");
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_xml_hostdev_address (xmlNode *node, const char *what, gboolean *is_pci,
                         VpaAddr *out, GError **error)
{
  g_autofree char *type = vpa_xml_prop (node, "type");
  g_autofree char *alias = NULL;
  g_autofree char *context = NULL;
  xmlNode *source, *addr, *a;

  *is_pci = FALSE;
  *out = VPA_ADDR_NONE;
  if (vpa_xml_is (node, "hostdev", NULL))
    {
      g_autofree char *mode = vpa_xml_prop (node, "mode");
      if (g_strcmp0 (type, "pci") != 0 || (mode != NULL && strcmp (mode, "subsystem") != 0))
        return TRUE;
    }
  else if (!vpa_xml_is (node, "interface", NULL) || g_strcmp0 (type, "hostdev") != 0)
    return TRUE;
  *is_pci = TRUE;

  source = vpa_xml_child (node, "source", NULL);
  addr = source != NULL ? vpa_xml_child (source, "address", NULL) : NULL;
  if (addr == NULL)
    return TRUE;

  if ((a = vpa_xml_child (node, "alias", NULL)) != NULL)
    alias = vpa_xml_prop (a, "name");
  context = g_strdup_printf ("<%s%s%s%s> <source>", (const char *) node->name,
                             alias ? " alias='" : "", alias ? alias : "", alias ? "'" : "");
  return vpa_xml_pci_address_parse (addr, what, context, out, error);
}

/* <actual type='hostdev'><source><address .../></source></actual> inside
 * an <interface type='network'> of a running domain's status file: the
 * VF libvirt took from a hostdev network. *out stays VPA_ADDR_NONE for
 * any other interface. */
static gboolean
actual_hostdev_address (xmlNode *iface, const char *what, VpaAddr *out, GError **error)
{
  xmlNode *actual = vpa_xml_child (iface, "actual", NULL);
  g_autofree char *type = actual != NULL ? vpa_xml_prop (actual, "type") : NULL;
  xmlNode *source, *addr;

  *out = VPA_ADDR_NONE;
  if (g_strcmp0 (type, "hostdev") != 0)
    return TRUE;
  source = vpa_xml_child (actual, "source", NULL);
  addr = source != NULL ? vpa_xml_child (source, "address", NULL) : NULL;
  if (addr == NULL)
    return TRUE;
  return vpa_xml_pci_address_parse (addr, what, "<interface type='network'> <actual> <source>",
                                    out, error);
}

/* One <devices> child: FALSE with error for an address that does not
 * parse; *is_pci FALSE for everything that is not a PCI device. */
static gboolean
walk_device (xmlNode *c, const char *what, VpaXmlPciFlags flags, gboolean *is_pci,
             VpaAddr *addr, GError **error)
{
  if (!vpa_xml_hostdev_address (c, what, is_pci, addr, error))
    return FALSE;
  if (*is_pci || !(flags & VPA_XML_PCI_ACTUAL) || !vpa_xml_is (c, "interface", NULL))
    return TRUE;
  if (!actual_hostdev_address (c, what, addr, error))
    return FALSE;
  *is_pci = *addr != VPA_ADDR_NONE;
  return TRUE;
}

GArray *
vpa_xml_domain_pci_devices (xmlNode *domain, const char *what, VpaXmlPciFlags flags,
                            GError **error)
{
  g_autoptr (GArray) devs = g_array_new (FALSE, FALSE, sizeof (VpaXmlPciDevice));
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      g_autoptr (GError) local = NULL;
      VpaXmlPciDevice dev = { c, VPA_ADDR_NONE, vpa_xml_is (c, "interface", NULL) };
      gboolean is_pci = FALSE;

      if (!vpa_xml_is (c, "hostdev", NULL) && !dev.is_interface)
        continue;
      if (!walk_device (c, what, flags, &is_pci, &dev.addr, &local))
        {
          if (flags & VPA_XML_PCI_STRICT)
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return NULL;
            }
          /* libvirt's content, in a domain we need not refuse: a bad
           * address only loses that address. */
          g_debug ("%s", local->message);
          dev.addr = VPA_ADDR_NONE;
          is_pci = TRUE;
        }
      if (is_pci)
        g_array_append_val (devs, dev);
    }
  return g_steal_pointer (&devs);
}
