/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Safe parsing of untrusted XML: the hook runs as root on documents any
 * user allowed to define domains controls.
 */
#include "vpa-xml.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

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
                   "%s: document type declarations are not accepted (entity "
                   "declarations could expand without bound)",
                   what);
      return FALSE;
    }
  return TRUE;
}

xmlDoc *
vpa_xml_parse_memory (const char *buf, gsize len, const char *what, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  xmlParserCtxtPtr ctxt;
  const xmlError *err;

  g_return_val_if_fail (buf != NULL || len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: empty document", what);
      return NULL;
    }
  if (len > VPA_XML_MAX_DOCUMENT)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: document of %" G_GSIZE_FORMAT " bytes exceeds the limit of %d bytes",
                   what, len, VPA_XML_MAX_DOCUMENT);
      return NULL;
    }

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
