/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-request-edit.h"

#include <string.h>
#include <libxml/tree.h>

#include "vpa-constants.h"
#include "vpa-domain.h"
#include "vpa-xml.h"

void
vpa_request_edit_result_clear (VpaRequestEditResult *res)
{
  g_return_if_fail (res != NULL);
  g_clear_pointer (&res->affinity, g_free);
  g_clear_pointer (&res->document, g_free);
}

static char *
dump_node (xmlDoc *doc, xmlNode *node)
{
  xmlBuffer *buf = xmlBufferCreate ();
  char *out;

  xmlNodeDump (buf, doc, node, 0, 1);
  out = g_strndup ((const char *) xmlBufferContent (buf), xmlBufferLength (buf));
  xmlBufferFree (buf);
  return out;
}

/* node and its descendants out of our namespace, without the blanks
 * between elements (the dump indents them anew). */
static void
strip_ns (xmlNode *node)
{
  xmlNode *next_child;
  xmlNs *next;

  for (xmlNs *ns = node->nsDef; ns != NULL; ns = next)
    {
      next = ns->next;
      ns->next = NULL;
      xmlFreeNs (ns);
    }
  node->nsDef = NULL;
  node->ns = NULL;
  for (xmlNode *c = node->children; c != NULL; c = next_child)
    {
      next_child = c->next;
      if (c->type == XML_ELEMENT_NODE)
        {
          strip_ns (c);
        }
      else if (xmlIsBlankNode (c))
        {
          xmlUnlinkNode (c);
          xmlFreeNode (c);
        }
    }
}

/* The element alone, as virDomainGetMetadata returns it and
 * virDomainSetMetadata takes it: without a namespace (libvirt puts its
 * own declaration on it, and refuses one already there). */
static char *
dump_standalone (xmlNode *node)
{
  g_autoptr (xmlDoc) doc = xmlNewDoc ((const xmlChar *) "1.0");
  xmlNode *copy = xmlDocCopyNode (node, doc, 1);

  xmlDocSetRootElement (doc, copy);
  strip_ns (copy);
  return dump_node (doc, copy);
}

static xmlNode *
child_or_new (xmlNode *parent, const char *name, xmlNs *ns)
{
  xmlNode *c = vpa_xml_child (parent, name, ns != NULL ? (const char *) ns->href : NULL);

  return c != NULL ? c : xmlNewChild (parent, ns, (const xmlChar *) name, NULL);
}

static xmlNode *
affinity_of (xmlNode *root)
{
  xmlNode *metadata = child_or_new (root, "metadata", NULL);
  xmlNode *affinity = vpa_xml_child (metadata, "affinity", VPA_XMLNS);
  xmlNs *ns;

  if (affinity != NULL)
    return affinity;
  affinity = xmlNewChild (metadata, NULL, (const xmlChar *) "affinity", NULL);
  ns = xmlNewNs (affinity, (const xmlChar *) VPA_XMLNS, (const xmlChar *) "vpa");
  xmlSetNs (affinity, ns);
  return affinity;
}

/* The first element child of parent named name (our namespace) whose
 * attribute attr is value. */
static xmlNode *
find_by (xmlNode *parent, const char *name, const char *attr, const char *value)
{
  for (xmlNode *c = parent->children; c != NULL; c = c->next)
    {
      g_autofree char *v = NULL;

      if (!vpa_xml_is (c, name, VPA_XMLNS))
        continue;
      v = vpa_xml_prop (c, attr);
      if (g_strcmp0 (v, value) == 0)
        return c;
    }
  return NULL;
}

/* A device of <devices> (an <interface> or <hostdev>) with user alias. */
static gboolean
has_device (xmlNode *root, const char *alias)
{
  xmlNode *devices = vpa_xml_child (root, "devices", NULL);

  for (xmlNode *d = devices != NULL ? devices->children : NULL; d != NULL; d = d->next)
    {
      xmlNode *a = d->type == XML_ELEMENT_NODE ? vpa_xml_child (d, "alias", NULL) : NULL;
      g_autofree char *name = a != NULL ? vpa_xml_prop (a, "name") : NULL;

      if (g_strcmp0 (name, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
add_interface (xmlNode *root, const char *alias, const char *mac)
{
  xmlNode *devices = child_or_new (root, "devices", NULL);
  xmlNode *iface = xmlNewChild (devices, NULL, (const xmlChar *) "interface", NULL);

  xmlNewProp (iface, (const xmlChar *) "type", (const xmlChar *) "hostdev");
  xmlNewProp (iface, (const xmlChar *) "managed", (const xmlChar *) "yes");
  if (mac != NULL)
    {
      xmlNewProp (xmlNewChild (iface, NULL, (const xmlChar *) "mac", NULL),
                  (const xmlChar *) "address", (const xmlChar *) mac);
    }
  xmlNewProp (xmlNewChild (iface, NULL, (const xmlChar *) "alias", NULL),
              (const xmlChar *) "name", (const xmlChar *) alias);
}

static void
set_attrs (xmlNode *node, const char *const *attrs)
{
  for (guint i = 0; attrs != NULL && attrs[i] != NULL && attrs[i + 1] != NULL; i += 2)
    xmlSetProp (node, (const xmlChar *) attrs[i], (const xmlChar *) attrs[i + 1]);
}

static gboolean
add_port (xmlNode *root, xmlNode *affinity, const char *what, const VpaRequestEdit *edit,
          VpaRequestEditResult *out, GError **error)
{
  xmlNode *port;

  if (find_by (affinity, "port", "device", edit->name) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port device='%s'> is already there (remove it first)", what,
                   edit->name);
      return FALSE;
    }
  port = xmlNewChild (affinity, affinity->ns, (const xmlChar *) "port", NULL);
  xmlNewProp (port, (const xmlChar *) "device", (const xmlChar *) edit->name);
  set_attrs (port, edit->attrs);
  if (!has_device (root, edit->name))
    {
      add_interface (root, edit->name, edit->mac);
      out->added_device = TRUE;
    }
  return TRUE;
}

/* An <interface> for every port that names no device. */
static void
complete_ports (xmlNode *root, xmlNode *affinity, VpaRequestEditResult *out)
{
  for (xmlNode *c = affinity->children; c != NULL; c = c->next)
    {
      g_autofree char *device = NULL;

      if (!vpa_xml_is (c, "port", VPA_XMLNS) || (device = vpa_xml_prop (c, "device")) == NULL)
        continue;
      if (!has_device (root, device))
        {
          add_interface (root, device, NULL);
          out->added_device = TRUE;
        }
    }
}

/* NAME of NAME:COUNT entries, comma separated. */
static char **
alias_entries (xmlNode *flavor)
{
  g_autofree char *list = flavor != NULL ? vpa_xml_prop (flavor, "aliases") : NULL;

  return list != NULL && list[0] != '\0' ? g_strsplit (list, ",", -1) : g_new0 (char *, 1);
}

static gssize
alias_index (char **entries, const char *name)
{
  gsize n = strlen (name);

  for (guint i = 0; entries[i] != NULL; i++)
    {
      const char *e = g_strstrip (entries[i]);
      if (strncmp (e, name, n) == 0 && (e[n] == ':' || e[n] == '\0'))
        return i;
    }
  return -1;
}

static gboolean
add_alias (xmlNode *affinity, const char *what, const char *spec, GError **error)
{
  xmlNode *flavor = child_or_new (affinity, "flavor", affinity->ns);
  g_auto (GStrv) entries = alias_entries (flavor);
  g_autofree char *name = g_strndup (spec, strcspn (spec, ":"));
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_auto (GStrv) joined = NULL;
  g_autofree char *list = NULL;

  if (alias_index (entries, name) >= 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:flavor aliases> already asks for alias '%s' (remove it first)", what,
                   name);
      return FALSE;
    }
  g_strv_builder_addv (b, (const char **) entries);
  g_strv_builder_add (b, spec);
  joined = g_strv_builder_end (b);
  list = g_strjoinv (",", joined);
  xmlSetProp (flavor, (const xmlChar *) "aliases", (const xmlChar *) list);
  return TRUE;
}

/* Unlinks every child of affinity named name whose attribute attr is
 * value (or, with prefix, starts with it). */
static guint
drop_records (xmlNode *affinity, const char *name, const char *attr, const char *value,
              gboolean prefix)
{
  xmlNode *next;
  guint n = 0;

  for (xmlNode *c = affinity->children; c != NULL; c = next)
    {
      g_autofree char *v = NULL;

      next = c->next;
      if (!vpa_xml_is (c, name, VPA_XMLNS) || (v = vpa_xml_prop (c, attr)) == NULL)
        continue;
      if (prefix ? g_str_has_prefix (v, value) : strcmp (v, value) == 0)
        {
          xmlUnlinkNode (c);
          xmlFreeNode (c);
          n++;
        }
    }
  return n;
}

static gboolean
remove_alias (xmlNode *affinity, const char *name)
{
  xmlNode *flavor = vpa_xml_child (affinity, "flavor", VPA_XMLNS);
  g_auto (GStrv) entries = alias_entries (flavor);
  gssize at = alias_index (entries, name);
  g_autofree char *prefix = g_strdup_printf (VPA_ALIAS_PREFIX "%s-", name);
  g_autofree char *list = NULL;

  if (at < 0)
    return FALSE;
  g_free (entries[at]);
  memmove (&entries[at], &entries[at + 1], (g_strv_length (entries) - at) * sizeof (char *));
  list = g_strjoinv (",", entries);
  if (list[0] != '\0')
    {
      xmlSetProp (flavor, (const xmlChar *) "aliases", (const xmlChar *) list);
    }
  else
    {
      xmlUnsetProp (flavor, (const xmlChar *) "aliases");
    }
  drop_records (affinity, "placed", "device", prefix, TRUE);
  return TRUE;
}

static gboolean
remove_request (xmlNode *affinity, const char *what, const char *name, GError **error)
{
  if (drop_records (affinity, "port", "device", name, FALSE) > 0)
    {
      drop_records (affinity, "placed", "device", name, FALSE);
      return TRUE;
    }
  if (remove_alias (affinity, name))
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: no <vpa:port device='%s'> and no flavor alias '%s' to remove", what, name,
               name);
  return FALSE;
}

static gboolean
apply_op (xmlNode *root, xmlNode *affinity, const char *what, const VpaRequestEdit *edit,
          VpaRequestEditResult *out, GError **error)
{
  switch (edit->op)
    {
    case VPA_REQUEST_EDIT_ADD_PORT:
      return add_port (root, affinity, what, edit, out, error);
    case VPA_REQUEST_EDIT_ADD_ALIAS:
      return add_alias (affinity, what, edit->name, error);
    case VPA_REQUEST_EDIT_SET_NUMA:
      set_attrs (child_or_new (affinity, "numa", affinity->ns), edit->attrs);
      return TRUE;
    case VPA_REQUEST_EDIT_REMOVE:
      return remove_request (affinity, what, edit->name, error);
    case VPA_REQUEST_EDIT_PLACE:
      return TRUE;
    }
  g_return_val_if_reached (FALSE);
}

gboolean
vpa_request_edit_apply (const VpaDoc *doc, const VpaRequestEdit *edit,
                        VpaRequestEditResult *out, GError **error)
{
  g_autoptr (xmlDoc) parsed = NULL;
  g_autoptr (VpaDomain) check = NULL;
  xmlNode *root, *affinity;

  g_return_val_if_fail (edit != NULL && out != NULL, FALSE);
  g_return_val_if_fail (edit->name != NULL || edit->op == VPA_REQUEST_EDIT_PLACE ||
                          edit->op == VPA_REQUEST_EDIT_SET_NUMA,
                        FALSE);
  if ((parsed = vpa_xml_parse_memory (doc, error)) == NULL)
    return FALSE;
  root = xmlDocGetRootElement (parsed);
  affinity = affinity_of (root);
  if (!apply_op (root, affinity, doc->what, edit, out, error))
    return FALSE;
  complete_ports (root, affinity, out);
  out->document = dump_node (parsed, root);
  /* The requests as the hook and place will read them. */
  check = vpa_domain_parse (&(VpaDoc){ out->document, strlen (out->document), doc->what }, error);
  if (check == NULL)
    {
      vpa_request_edit_result_clear (out);
      return FALSE;
    }
  out->affinity = dump_standalone (affinity);
  return TRUE;
}

char *
vpa_request_edit_show (const VpaDoc *doc, GError **error)
{
  g_autoptr (xmlDoc) parsed = vpa_xml_parse_memory (doc, error);
  xmlNode *metadata, *affinity;

  if (parsed == NULL)
    return NULL;
  metadata = vpa_xml_child (xmlDocGetRootElement (parsed), "metadata", NULL);
  affinity = metadata != NULL ? vpa_xml_child (metadata, "affinity", VPA_XMLNS) : NULL;
  return affinity != NULL ? dump_standalone (affinity) : NULL;
}
