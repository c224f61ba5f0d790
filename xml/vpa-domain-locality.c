/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * <vpa:device>, <vpa:locality-group> and locality-group= (vpa-domain-locality.h).
 */
#include "vpa-domain-locality.h"
#include "vpa-xml.h"

#include <string.h>

/* Our elements are closed: an unknown attribute or a child is an error. */
static gboolean
check_closed (xmlNode *node, const char *label, const char *what, const char *const *known,
              GError **error)
{
  for (xmlAttr *a = node->properties; a != NULL; a = a->next)
    {
      if (a->ns == NULL && !g_strv_contains (known, (const char *) a->name))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: unknown attribute '%s'",
                       what, label, (const char *) a->name);
          return FALSE;
        }
    }
  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      if (c->type == XML_ELEMENT_NODE)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: %s: unexpected child element <%s>", what, label,
                       (const char *) c->name);
          return FALSE;
        }
    }
  return TRUE;
}

/* The characters libvirt accepts in a user alias, and alias names. */
static gboolean
name_valid (const char *name)
{
  return *name != '\0' &&
         strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
           strlen (name);
}

static gboolean
required_name (xmlNode *node, const char *attr, const char *label, const char *what,
               char **out, GError **error)
{
  *out = vpa_xml_prop (node, attr);
  if (*out == NULL || !name_valid (*out))
    {
      if (*out == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: attribute '%s' is missing",
                       what, label, attr);
        }
      else
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: %s %s='%s': expected letters, digits, '_' and '-' only", what, label,
                       attr, *out);
        }
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_domain_parse_device (VpaDomain *dom, xmlNode *node, const char *what, GError **error)
{
  static const char *const known[] = { "alias", "name", "locality-group", NULL };
  g_autofree char *name = vpa_xml_prop (node, "name");
  g_autofree char *label = name != NULL ? g_strdup_printf ("<vpa:device name='%s'>", name)
                                        : g_strdup ("<vpa:device>");
  VpaDeviceRequest *req;

  if (!check_closed (node, label, what, known, error))
    return FALSE;
  req = g_new0 (VpaDeviceRequest, 1);
  g_ptr_array_add (dom->devices, req);
  if (!required_name (node, "name", label, what, &req->name, error) ||
      !required_name (node, "alias", label, what, &req->alias, error))
    return FALSE;
  req->locality_group = vpa_xml_prop (node, "locality-group");
  if (req->locality_group != NULL && *req->locality_group == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s locality-group='': empty value",
                   what, label);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_domain_parse_locality_group (VpaDomain *dom, xmlNode *node, const char *what,
                                 GError **error)
{
  static const char *const known[] = { "name", "level", "policy", NULL };
  g_autofree char *name = vpa_xml_prop (node, "name");
  g_autofree char *level = vpa_xml_prop (node, "level");
  g_autofree char *policy = vpa_xml_prop (node, "policy");
  g_autofree char *label = name != NULL
                             ? g_strdup_printf ("<vpa:locality-group name='%s'>", name)
                             : g_strdup ("<vpa:locality-group>");
  VpaLocalityGroup *group;

  if (!check_closed (node, label, what, known, error))
    return FALSE;
  group = g_new0 (VpaLocalityGroup, 1);
  if (!required_name (node, "name", label, what, &group->name, error))
    {
      vpa_locality_group_free (group);
      return FALSE;
    }
  if (vpa_domain_model_locality_group (dom, group->name) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s: locality group '%s' is defined twice", what, label, group->name);
      vpa_locality_group_free (group);
      return FALSE;
    }
  g_ptr_array_add (dom->locality_groups, group);
  group->level = VPA_LOCALITY_SWITCH;
  if (level != NULL && !vpa_locality_from_string (level, &group->level))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s level='%s': unknown locality level (expected switch, root-complex, "
                   "numa-node or socket)",
                   what, label, level);
      return FALSE;
    }
  if (policy != NULL && strcmp (policy, "required") != 0 && strcmp (policy, "preferred") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s policy='%s': unknown locality policy (expected required or preferred)",
                   what, label, policy);
      return FALSE;
    }
  group->required = g_strcmp0 (policy, "required") == 0;
  return TRUE;
}

static gboolean
check_reference (const VpaDomain *dom, const char *element, const char *who,
                 const char *group, guint *counts, const char *what, GError **error)
{
  if (group == NULL)
    return TRUE;
  for (guint i = 0; i < dom->locality_groups->len; i++)
    {
      if (strcmp (((const VpaLocalityGroup *) g_ptr_array_index (dom->locality_groups, i))->name,
                  group) == 0)
        {
          counts[i]++;
          return TRUE;
        }
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: <vpa:%s %s> locality-group='%s': no <vpa:locality-group name='%s'>", what,
               element, who, group, group);
  return FALSE;
}

gboolean
vpa_domain_check_locality (const VpaDomain *dom, const char *what, GError **error)
{
  g_autofree guint *counts = g_new0 (guint, MAX (dom->locality_groups->len, 1));

  for (guint i = 0; i < dom->ports->len; i++)
    {
      const VpaPortRequest *p = g_ptr_array_index (dom->ports, i);
      g_autofree char *who = g_strdup_printf ("device='%s'", p->device);
      if (!check_reference (dom, "port", who, p->locality_group, counts, what, error))
        return FALSE;
    }
  for (guint i = 0; i < dom->devices->len; i++)
    {
      const VpaDeviceRequest *d = g_ptr_array_index (dom->devices, i);
      g_autofree char *who = g_strdup_printf ("name='%s'", d->name);
      if (!check_reference (dom, "device", who, d->locality_group, counts, what, error))
        return FALSE;
    }
  for (guint i = 0; i < dom->locality_groups->len; i++)
    {
      if (counts[i] < 2)
        {
          const VpaLocalityGroup *g = g_ptr_array_index (dom->locality_groups, i);
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:locality-group name='%s'>: %u member%s (locality-group='%s' on "
                       "<vpa:port> or <vpa:device>); a group needs at least two",
                       what, g->name, counts[i], counts[i] == 1 ? "" : "s", g->name);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
vpa_domain_parse_placed_locality (xmlNode *node, const char *what, VpaPlacedRecord *rec,
                                  GError **error)
{
  g_autofree char *group = vpa_xml_prop (node, "locality-group");
  g_autofree char *level = vpa_xml_prop (node, "locality");
  g_autofree char *device = vpa_xml_prop (node, "device");
  guint i;

  rec->locality = -1;
  if (group == NULL && level == NULL)
    return TRUE;
  for (i = 0; level != NULL && i < VPA_LOCALITY_LAST; i++)
    {
      if (strcmp (level, vpa_locality_to_string ((VpaLocality) i)) == 0)
        break;
    }
  if (group == NULL || level == NULL || i == VPA_LOCALITY_LAST || *group == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:placed device='%s'> locality-group='%s' locality='%s': expected a "
                   "group name and switch, root-complex, numa-node, socket or system",
                   what, device != NULL ? device : "", group != NULL ? group : "",
                   level != NULL ? level : "");
      return FALSE;
    }
  rec->locality_group = g_steal_pointer (&group);
  rec->locality = (gint) i;
  return TRUE;
}
