/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The XML boundary itself: safe parsing of any document, then every
 * element through the shared accessors and the hostdev address parser,
 * which domain, snapshot and claim parsing all use.
 */
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-xml.h"

static void
walk (xmlNode *node, guint depth)
{
  for (xmlNode *n = node; n != NULL; n = vpa_xml_next_element (n))
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *text = NULL;
      gboolean is_pci = TRUE;
      VpaAddr addr = 0;
      gboolean ok;

      if (n->type != XML_ELEMENT_NODE)
        continue;
      ok = vpa_xml_hostdev_address (n, "fuzz.xml", &is_pci, &addr, &error);
      VPA_FUZZ_CHECK_RESULT (ok, error);
      /* Not a PCI hostdev: nothing parsed, nothing refused. */
      VPA_FUZZ_CHECK (is_pci || (ok && addr == VPA_ADDR_NONE));
      if (ok && addr != VPA_ADDR_NONE)
        {
          char buf[VPA_ADDR_BUFLEN];
          VpaAddr again;
          VPA_FUZZ_CHECK (vpa_addr_parse (vpa_addr_format (addr, buf), &again) && again == addr);
        }
      text = vpa_xml_text (n);
      VPA_FUZZ_CHECK (text == NULL || (text[0] != '\0' && !g_ascii_isspace (text[0])));
      if (n->children != NULL && depth < 64)
        walk (n->children, depth + 1);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (GError) error = NULL;
  xmlNode *root;

  vpa_fuzz_init ();
  doc = vpa_xml_parse_memory (&(VpaDoc){ (const char *) data, size, "fuzz.xml" }, &error);
  VPA_FUZZ_CHECK_RESULT (doc != NULL, error);
  if (doc == NULL)
    {
      VPA_FUZZ_CHECK (strstr (error->message, "fuzz.xml") != NULL);
      return 0;
    }
  VPA_FUZZ_CHECK (doc->intSubset == NULL && doc->extSubset == NULL);
  root = xmlDocGetRootElement (doc);
  VPA_FUZZ_CHECK (root != NULL);
  walk (root, 0);
  return 0;
}
