/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-domain-mode.h"

#include "vpa-constants.h"
#include "vpa-types.h"
#include "vpa-xml.h"

gboolean
vpa_domain_mode_parse_attr (xmlNode *affinity, const char *what, VpaDomainMode *mode,
                            GError **error)
{
  g_autofree char *value = vpa_xml_prop (affinity, "mode");

  *mode = VPA_DOMAIN_MODE_UNSET;
  if (value == NULL)
    return TRUE;
  if (g_strcmp0 (value, "enforce") == 0)
    {
      *mode = VPA_DOMAIN_MODE_ENFORCE;
    }
  else if (g_strcmp0 (value, "audit") == 0)
    {
      *mode = VPA_DOMAIN_MODE_AUDIT;
    }
  else
    {
      g_autofree char *shown = vpa_message_bound (value, 64);

      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:affinity> mode='%s': expected enforce or audit", what, shown);
      return FALSE;
    }
  return TRUE;
}

VpaDomainMode
vpa_domain_mode_read (const char *xml, gsize len)
{
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, len, "stdin" }, NULL);
  xmlNode *root = doc != NULL ? xmlDocGetRootElement (doc) : NULL;
  xmlNode *metadata = root != NULL ? vpa_xml_child (root, "metadata", NULL) : NULL;
  VpaDomainMode mode = VPA_DOMAIN_MODE_UNSET;

  if (root == NULL || !vpa_xml_is (root, "domain", NULL))
    return VPA_DOMAIN_MODE_UNKNOWN;
  for (xmlNode *c = metadata != NULL ? metadata->children : NULL; c != NULL; c = c->next)
    {
      if (c->type != XML_ELEMENT_NODE || !vpa_xml_is (c, "affinity", VPA_XMLNS))
        continue;
      if (mode != VPA_DOMAIN_MODE_UNSET || !vpa_domain_mode_parse_attr (c, "stdin", &mode, NULL))
        return VPA_DOMAIN_MODE_UNKNOWN;
    }
  return mode;
}
