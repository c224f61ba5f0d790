/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-attach.h"

#include <string.h>
#include <libxml/tree.h>

#include "vpa-constants.h"
#include "vpa-xml.h"
#include "vpa-pcie.h"

void
vpa_attach_record_clear (VpaAttachRecord *rec)
{
  g_return_if_fail (rec != NULL);
  g_clear_pointer (&rec->device, g_free);
  g_clear_pointer (&rec->physnet, g_free);
  g_clear_pointer (&rec->vnic_type, g_free);
  g_clear_pointer (&rec->locality_group, g_free);
}

static void
set_prop (xmlNode *node, const char *name, const char *value)
{
  xmlNewProp (node, (const xmlChar *) name, (const xmlChar *) value);
}

/* <vpa:port device physnet policy vnic-type/> and <vpa:placed device
 * address numa-node policy source/>, in place's order of attributes. */
static void
add_records (xmlNode *affinity, const VpaAttachRecord *rec)
{
  xmlNode *port = xmlNewChild (affinity, affinity->ns, (const xmlChar *) "port", NULL);
  xmlNode *placed = xmlNewChild (affinity, affinity->ns, (const xmlChar *) "placed", NULL);
  g_autofree char *node = g_strdup_printf ("%d", rec->numa_node);
  char addr[VPA_ADDR_BUFLEN];

  set_prop (port, "device", rec->device);
  if (rec->physnet != NULL)
    set_prop (port, "physnet", rec->physnet);
  if (rec->has_policy)
    set_prop (port, "policy", vpa_policy_to_string (rec->policy));
  if (rec->vnic_type != NULL)
    set_prop (port, "vnic-type", rec->vnic_type);
  if (rec->trusted == 1)
    set_prop (port, "trusted", "true");
  if (rec->locality_group != NULL)
    set_prop (port, "locality-group", rec->locality_group);
  set_prop (placed, "device", rec->device);
  set_prop (placed, "address", vpa_addr_format (rec->addr, addr));
  set_prop (placed, "numa-node", node);
  set_prop (placed, "policy", vpa_policy_to_string (rec->placed_policy));
  set_prop (placed, "source", vpa_policy_source_to_string (rec->placed_source));
  if (rec->locality_group != NULL)
    {
      set_prop (placed, "locality-group", rec->locality_group);
      set_prop (placed, "locality", vpa_locality_to_string ((VpaLocality) rec->locality));
    }
}

static xmlNode *
new_affinity (xmlNode *parent)
{
  xmlNode *affinity = xmlNewChild (parent, NULL, (const xmlChar *) "affinity", NULL);
  xmlNs *ns = xmlNewNs (affinity, (const xmlChar *) VPA_XMLNS, (const xmlChar *) "vpa");

  xmlSetNs (affinity, ns);
  return affinity;
}

static xmlNode *
child_or_new (xmlNode *parent, const char *name)
{
  xmlNode *c = vpa_xml_child (parent, name, NULL);
  return c != NULL ? c : xmlNewChild (parent, NULL, (const xmlChar *) name, NULL);
}

static char *
dump_node (xmlDoc *doc, xmlNode *node)
{
  g_autoptr (GString) out = g_string_new (NULL);
  xmlBuffer *buf = xmlBufferCreate ();

  xmlNodeDump (buf, doc, node, 0, 0);
  g_string_append_len (out, (const char *) xmlBufferContent (buf), xmlBufferLength (buf));
  xmlBufferFree (buf);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char *
vpa_attach_domain (const VpaDoc *doc, const char *device_xml, const VpaAttachRecord *rec,
                   GError **error)
{
  g_autoptr (xmlDoc) parsed = vpa_xml_parse_memory (doc, error);
  g_autoptr (xmlDoc) dev = NULL;
  xmlNode *root, *metadata, *affinity;

  g_return_val_if_fail (device_xml != NULL && rec != NULL, NULL);
  if (parsed == NULL)
    return NULL;
  if ((dev = vpa_xml_parse_memory (&(VpaDoc){ device_xml, strlen (device_xml), doc->what }, error)) == NULL)
    return NULL;
  root = xmlDocGetRootElement (parsed);
  xmlAddChild (child_or_new (root, "devices"),
               xmlDocCopyNode (xmlDocGetRootElement (dev), parsed, 1));
  metadata = child_or_new (root, "metadata");
  affinity = vpa_xml_child (metadata, "affinity", VPA_XMLNS);
  add_records (affinity != NULL ? affinity : new_affinity (metadata), rec);
  return dump_node (parsed, root);
}

char *
vpa_attach_affinity (const char *affinity_xml, const char *what, const VpaAttachRecord *rec,
                     GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  xmlNode *affinity;

  g_return_val_if_fail (rec != NULL, NULL);
  if (affinity_xml == NULL)
    {
      /* Without a namespace, as libvirt returns it: virDomainSetMetadata
       * declares it and refuses an element that already does. */
      doc = xmlNewDoc ((const xmlChar *) "1.0");
      affinity = xmlNewNode (NULL, (const xmlChar *) "affinity");
      xmlDocSetRootElement (doc, affinity);
    }
  else
    {
      doc = vpa_xml_parse_memory (&(VpaDoc){ affinity_xml, strlen (affinity_xml), what }, error);
      if (doc == NULL)
        return NULL;
      affinity = xmlDocGetRootElement (doc);
      /* virDomainGetMetadata returns the element without its namespace;
       * virDomainSetMetadata puts it back. */
      if (!vpa_xml_is (affinity, "affinity", VPA_XMLNS) &&
          !(affinity->ns == NULL && xmlStrEqual (affinity->name, (const xmlChar *) "affinity")))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: its metadata in " VPA_XMLNS " is no <vpa:affinity>", what);
          return NULL;
        }
    }
  add_records (affinity, rec);
  return dump_node (doc, affinity);
}

char *
vpa_attach_interface (VpaAddr addr, const char *alias, const char *mac, gint guest_bus)
{
  g_autofree char *head = NULL;
  g_autofree char *mac_xml = NULL;
  g_autofree char *guest_addr = NULL;

  g_return_val_if_fail (alias != NULL, NULL);

  head = g_markup_printf_escaped (
    "<interface type='hostdev' managed='yes'>\n"
    "  <source>\n"
    "    <address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>\n"
    "  </source>\n"
    "  <alias name='%s'/>\n",
    VPA_ADDR_DOMAIN (addr), VPA_ADDR_BUS (addr), VPA_ADDR_SLOT (addr), VPA_ADDR_FUNCTION (addr),
    alias);
  if (mac != NULL)
    mac_xml = g_markup_printf_escaped ("  <mac address='%s'/>\n", mac);
  if (guest_bus >= 0)
    {
      guest_addr = g_strdup_printf ("  <address type='pci' domain='0x0000' bus='0x%02x' slot='0x00' "
                                    "function='0x0'/>\n",
                                    (guint) guest_bus);
    }
  return g_strconcat (head, mac_xml != NULL ? mac_xml : "", guest_addr != NULL ? guest_addr : "",
                      "</interface>\n", NULL);
}
