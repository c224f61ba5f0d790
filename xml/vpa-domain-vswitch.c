/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-domain-vswitch.h"
#include "vpa-xml.h"

#include <string.h>

/* The interface types a vSwitch serves (docs/vswitch.md). */
static const char *const vswitch_iface_types[] = { "vhostuser", "bridge", "network", "ethernet",
                                                   NULL };

static char *
port_label (const VpaVswitchPort *port)
{
  if (port->device != NULL)
    return g_strdup_printf ("<vpa:port device='%s'>", port->device);
  return g_strdup ("<vpa:port>");
}

static gboolean
check_vswitch_attributes (xmlNode *node, const char *what, const char *label, GError **error)
{
  static const char *const known[] = { "device", "vnic-type", "physnet", "tunneled", "policy",
                                       NULL };

  for (xmlAttr *a = node->properties; a != NULL; a = a->next)
    {
      if (a->ns != NULL || g_strv_contains (known, (const char *) a->name))
        continue;
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s: unknown attribute '%s' (a vnic-type='normal' port takes device, "
                   "physnet or tunneled, and policy)",
                   what, label, (const char *) a->name);
      return FALSE;
    }
  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      if (c->type != XML_ELEMENT_NODE)
        continue;
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: unexpected child element <%s>",
                   what, label, (const char *) c->name);
      return FALSE;
    }
  return TRUE;
}

/* physnet='NAME' or tunneled='yes': exactly one. */
static gboolean
parse_network (VpaVswitchPort *port, xmlNode *node, const char *what, const char *label,
               GError **error)
{
  g_autofree char *tunneled = vpa_xml_prop (node, "tunneled");

  port->physnet = vpa_xml_prop (node, "physnet");
  if (tunneled != NULL && strcmp (tunneled, "yes") != 0 && strcmp (tunneled, "no") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s tunneled='%s': expected yes or no", what, label, tunneled);
      return FALSE;
    }
  port->tunneled = g_strcmp0 (tunneled, "yes") == 0;
  if (port->physnet != NULL && *port->physnet == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s physnet='': empty value", what,
                   label);
      return FALSE;
    }
  if ((port->physnet != NULL) == port->tunneled)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s: a vnic-type='normal' port needs %s", what, label,
                   port->tunneled ? "physnet or tunneled='yes', not both"
                                  : "physnet='NAME' or tunneled='yes' (the network it is on)");
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_vswitch_policy (VpaVswitchPort *port, xmlNode *node, const char *what, const char *label,
                      GError **error)
{
  g_autofree char *s = vpa_xml_prop (node, "policy");

  if (s == NULL)
    return TRUE;
  if (!vpa_policy_from_string (s, &port->policy))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s policy='%s': unknown NUMA affinity policy (expected required, "
                   "legacy, preferred or socket)",
                   what, label, s);
      return FALSE;
    }
  port->has_policy = TRUE;
  return TRUE;
}

gboolean
vpa_domain_parse_vswitch_port (VpaDomain *dom, xmlNode *node, const char *what,
                               GHashTable *devices, GError **error)
{
  g_autoptr (VpaVswitchPort) port = g_new0 (VpaVswitchPort, 1);
  g_autofree char *label = NULL;

  g_return_val_if_fail (dom != NULL && node != NULL && devices != NULL, FALSE);

  port->device = vpa_xml_prop (node, "device");
  label = port_label (port);
  if (!check_vswitch_attributes (node, what, label, error))
    return FALSE;
  if (port->device == NULL || *port->device == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port vnic-type='normal'>: attribute 'device' is missing (the user "
                   "alias of a vhostuser, bridge, network or ethernet <interface>)",
                   what);
      return FALSE;
    }
  if (!parse_network (port, node, what, label, error) ||
      !parse_vswitch_policy (port, node, what, label, error))
    return FALSE;
  if (g_hash_table_contains (devices, port->device))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s: device '%s' is already requested by another <vpa:port>", what,
                   label, port->device);
      return FALSE;
    }
  g_hash_table_add (devices, port->device);
  g_ptr_array_add (dom->vswitch_ports, g_steal_pointer (&port));
  return TRUE;
}

/* user alias -> the first element of devices that has it: one pass,
 * whatever the number of ports. */
static GHashTable *
aliases_of (xmlNode *devices)
{
  GHashTable *by_alias = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      xmlNode *a;
      char *name;

      if (c->type != XML_ELEMENT_NODE || (a = vpa_xml_child (c, "alias", NULL)) == NULL ||
          (name = vpa_xml_prop (a, "name")) == NULL)
        continue;
      if (g_hash_table_contains (by_alias, name))
        {
          g_free (name);
        }
      else
        {
          g_hash_table_insert (by_alias, name, c);
        }
    }
  return by_alias;
}

static gboolean
check_one (VpaVswitchPort *port, GHashTable *by_alias, const char *what, GError **error)
{
  g_autofree char *label = port_label (port);
  g_autofree char *type = NULL;
  xmlNode *iface = g_hash_table_lookup (by_alias, port->device);
  xmlNode *other = NULL;

  if (iface != NULL && !vpa_xml_is (iface, "interface", NULL))
    {
      other = iface;
      iface = NULL;
    }
  if (iface == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s: no <interface> has the user alias '%s'%s%s%s (a vnic-type='normal' "
                   "port names a vhostuser, bridge, network or ethernet <interface>)",
                   what, label, port->device, other != NULL ? " (a <" : "",
                   other != NULL ? (const char *) other->name : "", other != NULL ? "> has)" : "");
      return FALSE;
    }
  type = vpa_xml_prop (iface, "type");
  if (type == NULL || !g_strv_contains (vswitch_iface_types, type))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s: <interface type='%s'> with that user alias is not served by a "
                   "vSwitch (expected vhostuser, bridge, network or ethernet; an SR-IOV port "
                   "has vnic-type direct or direct-physical)",
                   what, label, type != NULL ? type : "");
      return FALSE;
    }
  port->iface_type = g_steal_pointer (&type);
  return TRUE;
}

gboolean
vpa_domain_check_vswitch_ports (VpaDomain *dom, xmlNode *domain, const char *what,
                                GError **error)
{
  g_autoptr (GHashTable) by_alias = NULL;

  g_return_val_if_fail (dom != NULL && domain != NULL, FALSE);

  if (dom->vswitch_ports->len == 0)
    return TRUE;
  by_alias = aliases_of (vpa_xml_child (domain, "devices", NULL));
  for (guint i = 0; i < dom->vswitch_ports->len; i++)
    {
      if (!check_one (dom->vswitch_ports->pdata[i], by_alias, what, error))
        return FALSE;
    }
  return TRUE;
}
