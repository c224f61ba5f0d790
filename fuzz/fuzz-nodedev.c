/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Node device XML as `virsh nodedev-dumpxml` prints it: the root
 * <device>, or every <device> child of a root (as in a snapshot).
 */
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-nodedev.h"

static gboolean
is_hex4 (const char *s)
{
  if (strlen (s) != 4)
    return FALSE;
  for (guint i = 0; i < 4; i++)
    {
      if (!g_ascii_isxdigit (s[i]) || g_ascii_isupper (s[i]))
        return FALSE;
    }
  return TRUE;
}

static void
parse_one (xmlNode *node)
{
  VpaNodedev nd = { 0 };
  g_autoptr (GError) error = NULL;
  gboolean ok = vpa_nodedev_parse (node, "fuzz-nodedev.xml", &nd, &error);

  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (ok)
    {
      VPA_FUZZ_CHECK (nd.name != NULL);
      VPA_FUZZ_CHECK ((nd.kind == VPA_NODEDEV_PCI) == (nd.pci != NULL));
      if (nd.pci != NULL)
        {
          VPA_FUZZ_CHECK (nd.pci->addr != VPA_ADDR_NONE);
          VPA_FUZZ_CHECK (is_hex4 (nd.pci->vendor_id) && is_hex4 (nd.pci->product_id));
          VPA_FUZZ_CHECK (nd.pci->dev_type < VPA_DEV_TYPE_LAST);
          VPA_FUZZ_CHECK (nd.pci->numa_node >= VPA_NUMA_NONE);
          VPA_FUZZ_CHECK ((nd.pci->dev_type == VPA_DEV_TYPE_VF) ==
                          (nd.pci->parent_addr != VPA_ADDR_NONE));
        }
      if (nd.kind == VPA_NODEDEV_NET)
        VPA_FUZZ_CHECK (nd.interface != NULL);
    }
  else
    VPA_FUZZ_CHECK (nd.name == NULL && nd.pci == NULL && nd.interface == NULL);
  vpa_nodedev_clear (&nd);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (GError) error = NULL;
  xmlNode *root;

  vpa_fuzz_init ();
  doc = vpa_xml_parse_memory (&(VpaDoc){ (const char *) data, size, "fuzz-nodedev.xml" }, &error);
  VPA_FUZZ_CHECK_RESULT (doc != NULL, error);
  if (doc == NULL)
    return 0;
  root = xmlDocGetRootElement (doc);
  if (vpa_xml_is (root, "device", NULL))
    {
      parse_one (root);
    }
  else
    {
      for (xmlNode *c = root->children; c != NULL; c = c->next)
        {
          if (vpa_xml_is (c, "device", NULL))
            parse_one (c);
        }
    }
  return 0;
}
