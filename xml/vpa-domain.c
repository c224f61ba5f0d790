/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Domain XML → VpaDomain. The vpa:affinity metadata is ours and is
 * validated strictly. The rest of the document belongs to libvirt, which
 * has validated it already: it is checked only for domains that carry
 * vpa:affinity, so that the hook never refuses a domain it does not
 * manage because of content it does not understand.
 */
#include "vpa-domain.h"
#include "vpa-domain-locality.h"
#include "vpa-xml.h"

#include <string.h>

/* Bounds a flavor's count so that one attribute cannot make the rewrite
 * add an unbounded number of <hostdev> elements. */
#define VPA_ALIAS_COUNT_MAX 256

typedef struct {
  const char *what;
  gboolean strict;          /* the domain has vpa:affinity */
  VpaDomain *dom;
  GHashTable *port_devices; /* borrowed VpaPortRequest.device */
  GHashTable *placed_devices; /* borrowed VpaPlacedRecord.device */
  GHashTable *net_ifaces;   /* user alias -> <source network> of <interface type='network'> */
} ParseCtx;

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */
/* ------------------------------------------------------------------ */

static void
port_request_free (VpaPortRequest *port)
{
  g_free (port->device);
  g_free (port->physnet);
  g_free (port->pf_group);
  g_free (port->locality_group);
  g_free (port->network);
  g_free (port);
}

static void
alias_request_free (VpaAliasRequest *req)
{
  g_free (req->name);
  g_free (req);
}

static void
domain_hostdev_free (VpaDomainHostdev *hd)
{
  g_free (hd->alias);
  g_free (hd);
}

static void
placed_record_free (VpaPlacedRecord *rec)
{
  g_free (rec->device);
  g_free (rec->locality_group);
  g_free (rec->network);
  g_free (rec);
}

static void
domain_cell_free (VpaDomainCell *cell)
{
  g_clear_pointer (&cell->vcpus, g_array_unref);
  g_clear_pointer (&cell->nodeset, g_array_unref);
  g_clear_pointer (&cell->cpuset, g_array_unref);
  g_clear_pointer (&cell->host_nodes, g_array_unref);
  g_free (cell);
}

static VpaDomain *
domain_new (const char *what)
{
  VpaDomain *dom = g_new0 (VpaDomain, 1);
  dom->source = g_strdup (what);
  dom->alias_requests = g_ptr_array_new_with_free_func ((GDestroyNotify) alias_request_free);
  dom->ports = g_ptr_array_new_with_free_func ((GDestroyNotify) port_request_free);
  dom->guest_nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  dom->hostdevs = g_ptr_array_new_with_free_func ((GDestroyNotify) domain_hostdev_free);
  dom->placed = g_ptr_array_new_with_free_func ((GDestroyNotify) placed_record_free);
  dom->cells = g_ptr_array_new_with_free_func ((GDestroyNotify) domain_cell_free);
  dom->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_request_free);
  dom->locality_groups =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_locality_group_free);
  return dom;
}

void
vpa_domain_free (VpaDomain *dom)
{
  if (dom == NULL)
    return;
  g_free (dom->name);
  g_free (dom->uuid);
  g_free (dom->source);
  g_ptr_array_unref (dom->alias_requests);
  g_ptr_array_unref (dom->ports);
  g_array_unref (dom->guest_nodes);
  g_ptr_array_unref (dom->hostdevs);
  g_ptr_array_unref (dom->placed);
  g_ptr_array_unref (dom->cells);
  g_ptr_array_unref (dom->devices);
  g_ptr_array_unref (dom->locality_groups);
  vpa_guest_bus_free (dom->bus);
  g_free (dom);
}

/* ------------------------------------------------------------------ */
/* <vpa:affinity>                                                      */
/* ------------------------------------------------------------------ */

/* "<vpa:port device='ua-data0'>", for messages */
static char *
element_label (xmlNode *node)
{
  g_autofree char *device = vpa_xml_prop (node, "device");

  if (device != NULL)
    return g_strdup_printf ("<vpa:%s device='%s'>", (const char *) node->name, device);
  return g_strdup_printf ("<vpa:%s>", (const char *) node->name);
}

/* "vpa:port" whatever prefix the document binds our namespace to. */
static char *
qualified_name (xmlNode *node)
{
  if (node->ns != NULL && xmlStrEqual (node->ns->href, (const xmlChar *) VPA_XMLNS))
    return g_strdup_printf ("vpa:%s", (const char *) node->name);
  if (node->ns != NULL && node->ns->prefix != NULL)
    return g_strdup_printf ("%s:%s", (const char *) node->ns->prefix, (const char *) node->name);
  return g_strdup ((const char *) node->name);
}

/* Our elements are small and closed: a misspelt attribute ("polcy")
 * would otherwise silently fall back to a default. Attributes in other
 * namespaces are left to their owners. */
static gboolean
check_attributes (ParseCtx *ctx, xmlNode *node, const char *const *known, GError **error)
{
  for (xmlAttr *a = node->properties; a != NULL; a = a->next)
    {
      if (a->ns != NULL)
        continue;
      if (!g_strv_contains (known, (const char *) a->name))
        {
          g_autofree char *label = element_label (node);
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: unknown attribute '%s'",
                       ctx->what, label, (const char *) a->name);
          return FALSE;
        }
    }
  for (xmlNode *c = node->children; c != NULL; c = c->next)
    {
      if (c->type == XML_ELEMENT_NODE)
        {
          g_autofree char *label = element_label (node);
          g_autofree char *child = qualified_name (c);
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: unexpected child element <%s>",
                       ctx->what, label, child);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
parse_policy_attr (ParseCtx *ctx, xmlNode *node, gboolean *has, VpaPolicy *out, GError **error)
{
  g_autofree char *s = vpa_xml_prop (node, "policy");

  *has = FALSE;
  if (s == NULL)
    return TRUE;
  if (!vpa_policy_from_string (s, out))
    {
      g_autofree char *label = element_label (node);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s policy='%s': unknown NUMA affinity policy (expected required, "
                   "legacy, preferred or socket)",
                   ctx->what, label, s);
      return FALSE;
    }
  *has = TRUE;
  return TRUE;
}

static gboolean
alias_name_valid (const char *name)
{
  /* The name becomes part of the user alias ua-vpa-NAME-N, and libvirt
   * accepts only these characters in user aliases. */
  return *name != '\0' &&
         strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
           strlen (name);
}

/* Nova's pci_passthrough:alias: NAME:COUNT[,NAME:COUNT...], spaces
 * around entries allowed; the same name twice is two requests. */
static gboolean
parse_aliases (ParseCtx *ctx, const char *value, GError **error)
{
  g_auto (GStrv) entries = g_strsplit (value, ",", -1);

  if (entries[0] == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:flavor> aliases='': expected NAME:COUNT[,NAME:COUNT...]", ctx->what);
      return FALSE;
    }
  for (guint i = 0; entries[i] != NULL; i++)
    {
      g_auto (GStrv) kv = g_strsplit (entries[i], ":", -1);
      VpaAliasRequest *req;
      guint64 count;

      if (g_strv_length (kv) != 2 || *g_strstrip (kv[0]) == '\0')
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:flavor> aliases='%s': entry '%s' is not NAME:COUNT "
                       "(expected NAME:COUNT[,NAME:COUNT...])",
                       ctx->what, value, g_strstrip (entries[i]));
          return FALSE;
        }
      g_strstrip (kv[1]);
      if (kv[1][0] == '\0' || strspn (kv[1], "0123456789") != strlen (kv[1]))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:flavor> aliases='%s': count '%s' of alias '%s' is not a "
                       "non-negative integer",
                       ctx->what, value, kv[1], kv[0]);
          return FALSE;
        }
      if (!g_ascii_string_to_unsigned (kv[1], 10, 0, VPA_ALIAS_COUNT_MAX, &count, NULL))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:flavor> aliases='%s': count '%s' of alias '%s' exceeds %d",
                       ctx->what, value, kv[1], kv[0], VPA_ALIAS_COUNT_MAX);
          return FALSE;
        }
      if (!alias_name_valid (kv[0]))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:flavor> aliases='%s': alias name '%s' cannot form the user "
                       "alias ua-vpa-NAME-N (letters, digits, '_' and '-' only)",
                       ctx->what, value, kv[0]);
          return FALSE;
        }
      req = g_new0 (VpaAliasRequest, 1);
      req->name = g_strdup (kv[0]);
      req->count = (guint) count;
      g_ptr_array_add (ctx->dom->alias_requests, req);
    }
  return TRUE;
}

static gboolean
parse_flavor (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "policy", "aliases", NULL };
  g_autofree char *aliases = vpa_xml_prop (node, "aliases");
  VpaDomain *dom = ctx->dom;

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  if (!parse_policy_attr (ctx, node, &dom->has_flavor_policy, &dom->flavor_policy, error))
    return FALSE;
  return aliases == NULL || parse_aliases (ctx, aliases, error);
}

static gboolean
parse_image (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "policy", NULL };
  VpaDomain *dom = ctx->dom;

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  return parse_policy_attr (ctx, node, &dom->has_image_policy, &dom->image_policy, error);
}

static gboolean
parse_port_attrs (ParseCtx *ctx, xmlNode *node, VpaPortRequest *port, GError **error)
{
  g_autofree char *label = element_label (node);
  g_autofree char *vnic = vpa_xml_prop (node, "vnic-type");
  g_autofree char *trusted = vpa_xml_prop (node, "trusted");

  if (vnic != NULL && strcmp (vnic, "direct") != 0 && strcmp (vnic, "direct-physical") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s vnic-type='%s': unknown vnic type (expected direct or "
                   "direct-physical)",
                   ctx->what, label, vnic);
      return FALSE;
    }
  port->want_pf = g_strcmp0 (vnic, "direct-physical") == 0;
  port->trusted = -1;
  if (trusted != NULL)
    {
      if (strcmp (trusted, "true") != 0 && strcmp (trusted, "false") != 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: %s trusted='%s': expected true or false", ctx->what, label, trusted);
          return FALSE;
        }
      port->trusted = strcmp (trusted, "true") == 0;
    }
  port->physnet = vpa_xml_prop (node, "physnet");
  port->pf_group = vpa_xml_prop (node, "pf-group");
  port->locality_group = vpa_xml_prop (node, "locality-group");
  if ((port->physnet != NULL && *port->physnet == '\0') ||
      (port->pf_group != NULL && *port->pf_group == '\0') ||
      (port->locality_group != NULL && *port->locality_group == '\0'))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s %s='': empty value", ctx->what,
                   label,
                   port->physnet != NULL && *port->physnet == '\0'   ? "physnet"
                   : port->pf_group != NULL && *port->pf_group == '\0' ? "pf-group"
                                                                       : "locality-group");
      return FALSE;
    }
  return parse_policy_attr (ctx, node, &port->has_policy, &port->policy, error);
}

static gboolean
parse_port (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "device", "physnet", "vnic-type", "trusted",
                                       "pf-group", "policy", "locality-group", NULL };
  VpaPortRequest *port;

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  port = g_new0 (VpaPortRequest, 1);
  g_ptr_array_add (ctx->dom->ports, port);
  port->device = vpa_xml_prop (node, "device");
  if (port->device == NULL || *port->device == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port>: attribute 'device' is missing (the user alias of an "
                   "<interface type='hostdev'> or <hostdev>)",
                   ctx->what);
      return FALSE;
    }
  if (g_str_has_prefix (port->device, VPA_ALIAS_PREFIX))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port device='%s'>: the prefix '%s' is reserved for the devices of "
                   "flavor aliases",
                   ctx->what, port->device, VPA_ALIAS_PREFIX);
      return FALSE;
    }
  if (!g_hash_table_add (ctx->port_devices, port->device))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port device='%s'>: device '%s' is already requested by another "
                   "<vpa:port>",
                   ctx->what, port->device, port->device);
      return FALSE;
    }
  return parse_port_attrs (ctx, node, port, error);
}

static gboolean
placed_fail (ParseCtx *ctx, xmlNode *node, const char *attr, const char *value,
             const char *expected, GError **error)
{
  g_autofree char *label = element_label (node);

  if (value == NULL)
    g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: attribute '%s' is missing",
                 ctx->what, label, attr);
  else
    g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s %s='%s': expected %s", ctx->what,
                 label, attr, value, expected);
  return FALSE;
}

static gboolean
parse_placed (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "device", "address", "network", "numa-node", "policy",
                                       "source", "locality-group", "locality", NULL };
  g_autofree char *device = vpa_xml_prop (node, "device");
  g_autofree char *address = vpa_xml_prop (node, "address");
  g_autofree char *network = vpa_xml_prop (node, "network");
  g_autofree char *numa = vpa_xml_prop (node, "numa-node");
  g_autofree char *policy = vpa_xml_prop (node, "policy");
  g_autofree char *source = vpa_xml_prop (node, "source");
  VpaPlacedRecord rec = { .numa_node = VPA_NUMA_NONE, .locality = -1 };
  gint64 node_id;

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  if (device == NULL || *device == '\0')
    return placed_fail (ctx, node, "device", NULL, NULL, error);
  /* a network placement names the network; libvirt picks the VF */
  if (network != NULL && *network == '\0')
    return placed_fail (ctx, node, "network", network, "a libvirt network name", error);
  rec.addr = VPA_ADDR_NONE;
  if (network == NULL && (address == NULL || !vpa_addr_parse (address, &rec.addr)))
    return placed_fail (ctx, node, "address", address, "a PCI address DDDD:BB:SS.F", error);
  if (network != NULL && address != NULL)
    return placed_fail (ctx, node, "address", address, "no address with network=", error);
  if (numa != NULL)
    {
      if (!g_ascii_string_to_signed (numa, 10, -1, G_MAXINT, &node_id, NULL))
        return placed_fail (ctx, node, "numa-node", numa, "a NUMA node id or -1", error);
      rec.numa_node = (gint) node_id;
    }
  if (policy == NULL || !vpa_policy_from_string (policy, &rec.policy))
    return placed_fail (ctx, node, "policy", policy, "required, legacy, preferred or socket",
                        error);
  if (source == NULL || !vpa_policy_source_from_string (source, &rec.source))
    return placed_fail (ctx, node, "source", source, "port, flavor, image, alias or default",
                        error);
  if (g_hash_table_contains (ctx->placed_devices, device))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:placed device='%s'>: device '%s' is recorded twice", ctx->what,
                   device, device);
      return FALSE;
    }
  if (!vpa_domain_parse_placed_locality (node, ctx->what, &rec, error))
    return FALSE;
  rec.device = g_steal_pointer (&device);
  rec.network = g_steal_pointer (&network);
  g_hash_table_add (ctx->placed_devices, rec.device);
  g_ptr_array_add (ctx->dom->placed, g_memdup2 (&rec, sizeof rec));
  return TRUE;
}

/* A <vpa:device name> is a user alias like a port's device: unique
 * among both, never one of ours. */
static gboolean
check_device_name (ParseCtx *ctx, GError **error)
{
  const VpaDeviceRequest *dev = g_ptr_array_index (ctx->dom->devices, ctx->dom->devices->len - 1);
  const char *name = dev->name;

  if (g_str_has_prefix (name, VPA_ALIAS_PREFIX))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:device name='%s'>: the prefix '%s' is reserved for the devices of "
                   "flavor aliases",
                   ctx->what, name, VPA_ALIAS_PREFIX);
      return FALSE;
    }
  if (g_hash_table_contains (ctx->port_devices, name))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:device name='%s'>: device '%s' is already requested by another "
                   "<vpa:port> or <vpa:device>",
                   ctx->what, name, name);
      return FALSE;
    }
  g_hash_table_add (ctx->port_devices, (gpointer) name);
  return TRUE;
}

/* <vpa:guest-numa devices='expander-bus' spare-ports='N'/> */
static gboolean
parse_guest_numa (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "devices", "spare-ports", NULL };
  g_autofree char *devices = vpa_xml_prop (node, "devices");
  g_autofree char *spare = vpa_xml_prop (node, "spare-ports");
  guint64 n = 1;

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  if (ctx->dom->guest_numa)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:affinity>: more than one <vpa:guest-numa>", ctx->what);
      return FALSE;
    }
  if (g_strcmp0 (devices, "expander-bus") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:guest-numa> devices='%s': expected expander-bus", ctx->what,
                   devices != NULL ? devices : "");
      return FALSE;
    }
  if (spare != NULL &&
      (!g_ascii_isdigit (*spare) || strspn (spare, "0123456789") != strlen (spare) ||
       !g_ascii_string_to_unsigned (spare, 10, 0, VPA_TOPO_SPARE_MAX, &n, NULL)))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:guest-numa> spare-ports='%s': expected a number from 0 to %d",
                   ctx->what, spare, VPA_TOPO_SPARE_MAX);
      return FALSE;
    }
  ctx->dom->guest_numa = TRUE;
  ctx->dom->guest_numa_spare = (guint) n;
  return TRUE;
}

static gboolean
parse_affinity (ParseCtx *ctx, xmlNode *affinity, GError **error)
{
  gboolean seen_flavor = FALSE, seen_image = FALSE;

  for (xmlNode *c = affinity->children; c != NULL; c = c->next)
    {
      gboolean ok;

      if (c->type != XML_ELEMENT_NODE)
        continue;
      if (c->ns == NULL || !xmlStrEqual (c->ns->href, (const xmlChar *) VPA_XMLNS))
        continue; /* other namespaces' extensions are theirs */
      if ((vpa_xml_is (c, "flavor", NULL) && seen_flavor) ||
          (vpa_xml_is (c, "image", NULL) && seen_image))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:affinity>: more than one <vpa:%s>", ctx->what,
                       (const char *) c->name);
          return FALSE;
        }
      if (vpa_xml_is (c, "flavor", NULL))
        ok = seen_flavor = parse_flavor (ctx, c, error);
      else if (vpa_xml_is (c, "image", NULL))
        ok = seen_image = parse_image (ctx, c, error);
      else if (vpa_xml_is (c, "port", NULL))
        ok = parse_port (ctx, c, error);
      else if (vpa_xml_is (c, "placed", NULL))
        ok = parse_placed (ctx, c, error);
      else if (vpa_xml_is (c, "device", NULL))
        ok = vpa_domain_parse_device (ctx->dom, c, ctx->what, error) &&
             check_device_name (ctx, error);
      else if (vpa_xml_is (c, "locality-group", NULL))
        ok = vpa_domain_parse_locality_group (ctx->dom, c, ctx->what, error);
      else if (vpa_xml_is (c, "guest-numa", NULL))
        ok = parse_guest_numa (ctx, c, error);
      else
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:affinity>: unknown element <vpa:%s> (expected flavor, image, "
                       "port, device, locality-group, guest-numa or placed)",
                       ctx->what, (const char *) c->name);
          return FALSE;
        }
      if (!ok)
        return FALSE;
    }
  return vpa_domain_check_locality (ctx->dom, ctx->what, error);
}

/* Finds <metadata><vpa:affinity>; any other element of our namespace
 * there is a mistake worth reporting. */
static gboolean
parse_metadata (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *metadata = vpa_xml_child (domain, "metadata", NULL);
  xmlNode *affinity = NULL;

  if (metadata == NULL)
    return TRUE;
  for (xmlNode *c = metadata->children; c != NULL; c = c->next)
    {
      if (c->type != XML_ELEMENT_NODE || c->ns == NULL ||
          !xmlStrEqual (c->ns->href, (const xmlChar *) VPA_XMLNS))
        continue;
      if (!vpa_xml_is (c, "affinity", NULL))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <metadata>: unknown element <vpa:%s> (expected <vpa:affinity>)",
                       ctx->what, (const char *) c->name);
          return FALSE;
        }
      if (affinity != NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <metadata>: more than one <vpa:affinity>", ctx->what);
          return FALSE;
        }
      affinity = c;
    }
  if (affinity == NULL)
    return TRUE;
  ctx->dom->has_affinity = TRUE;
  ctx->strict = TRUE;
  return parse_affinity (ctx, affinity, error);
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

/* libvirt's content: in a domain we do not manage a bad address only
 * loses that address (libvirt would not have accepted it anyway). */
/* An <interface type='network'> with a user alias and a <source network>:
 * a port may name it (a hostdev network's VF, picked by libvirt). */
static void
note_network_interface (ParseCtx *ctx, xmlNode *iface)
{
  g_autofree char *type = NULL;
  xmlNode *alias, *source;
  char *name, *network;

  if (!vpa_xml_is (iface, "interface", NULL) ||
      g_strcmp0 (type = vpa_xml_prop (iface, "type"), "network") != 0)
    return;
  alias = vpa_xml_child (iface, "alias", NULL);
  source = vpa_xml_child (iface, "source", NULL);
  name = alias != NULL ? vpa_xml_prop (alias, "name") : NULL;
  network = source != NULL ? vpa_xml_prop (source, "network") : NULL;
  if (name == NULL || network == NULL || *network == '\0' ||
      g_hash_table_contains (ctx->net_ifaces, name))
    {
      g_free (name);
      g_free (network);
      return;
    }
  g_hash_table_insert (ctx->net_ifaces, name, network);
}

static gboolean
parse_hostdevs (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  g_autoptr (GArray) devs = vpa_xml_domain_pci_devices (
      domain, ctx->what, ctx->strict ? VPA_XML_PCI_STRICT : 0, error);
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);

  if (devs == NULL)
    return FALSE;
  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    note_network_interface (ctx, c);
  for (guint i = 0; i < devs->len; i++)
    {
      const VpaXmlPciDevice *d = &g_array_index (devs, VpaXmlPciDevice, i);
      VpaDomainHostdev *hd = g_new0 (VpaDomainHostdev, 1);
      xmlNode *alias = vpa_xml_child (d->node, "alias", NULL);

      hd->alias = alias != NULL ? vpa_xml_prop (alias, "name") : NULL;
      hd->addr = d->addr;
      hd->is_interface = d->is_interface;
      g_ptr_array_add (ctx->dom->hostdevs, hd);
    }
  return TRUE;
}

static gboolean
check_ports (ParseCtx *ctx, GError **error)
{
  g_autoptr (GHashTable) aliases = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint j = 0; j < ctx->dom->hostdevs->len; j++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (ctx->dom->hostdevs, j);
      if (hd->alias != NULL)
        g_hash_table_add (aliases, hd->alias);
    }
  for (guint i = 0; i < ctx->dom->ports->len; i++)
    {
      VpaPortRequest *port = g_ptr_array_index (ctx->dom->ports, i);
      const char *network = g_hash_table_lookup (ctx->net_ifaces, port->device);

      if (!g_hash_table_contains (aliases, port->device) && network != NULL)
        {
          port->network = g_strdup (network);
          continue;
        }
      if (!g_hash_table_contains (aliases, port->device))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:port device='%s'>: no <interface type='hostdev'> or PCI "
                       "<hostdev> has the user alias '%s'",
                       ctx->what, port->device, port->device);
          return FALSE;
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Guest NUMA cells                                                    */
/* ------------------------------------------------------------------ */

/* A set-valued attribute of libvirt's content; *out stays NULL when it is
 * absent, or bad in a domain we do not manage. */
static gboolean
parse_set_attr (ParseCtx *ctx, xmlNode *node, const char *attr, const char *label,
                GArray **out, GError **error)
{
  g_autofree char *s = vpa_xml_prop (node, attr);
  g_autoptr (GError) local = NULL;

  *out = NULL;
  if (s == NULL || vpa_parse_cpuset (s, out, &local))
    return TRUE;
  if (!ctx->strict)
    {
      g_debug ("%s: %s %s: %s", ctx->what, label, attr, local->message);
      return TRUE;
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s %s: %s", ctx->what, label, attr,
               local->message);
  return FALSE;
}

/* An id attribute of libvirt's content; *found is FALSE when it is
 * absent, or bad in a domain we do not manage. */
static gboolean
parse_id_attr (ParseCtx *ctx, xmlNode *node, const char *attr, const char *label,
               gboolean *found, guint *out, GError **error)
{
  g_autofree char *s = vpa_xml_prop (node, attr);
  guint64 v;

  *found = FALSE;
  if (s == NULL)
    return TRUE;
  if (g_ascii_isdigit (*s) && g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT, &v, NULL))
    {
      *found = TRUE;
      *out = (guint) v;
      return TRUE;
    }
  if (!ctx->strict)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s %s='%s': expected a non-negative integer", ctx->what, label, attr, s);
  return FALSE;
}

static gboolean
parse_cells (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *cpu = vpa_xml_child (domain, "cpu", NULL);
  xmlNode *numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;

  if (numa == NULL)
    return TRUE;
  for (xmlNode *c = numa->children; c != NULL; c = c->next)
    {
      VpaDomainCell *cell;
      gboolean has_id;

      if (!vpa_xml_is (c, "cell", NULL))
        continue;
      cell = g_new0 (VpaDomainCell, 1);
      cell->id = ctx->dom->cells->len; /* libvirt numbers cells without id by position */
      g_ptr_array_add (ctx->dom->cells, cell);
      if (!parse_id_attr (ctx, c, "id", "<cpu><numa><cell>", &has_id, &cell->id, error))
        return FALSE;
      if (!parse_set_attr (ctx, c, "cpus", "<cpu><numa><cell>", &cell->vcpus, error))
        return FALSE;
      if (cell->vcpus == NULL)
        cell->vcpus = g_array_new (FALSE, FALSE, sizeof (guint));
    }
  ctx->dom->numa_guest = ctx->dom->cells->len > 0;
  return TRUE;
}

/* Cell id -> cell; the first of a repeated id wins. */
static GHashTable *
cells_by_id (VpaDomain *dom)
{
  GHashTable *ret = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < dom->cells->len; i++)
    {
      VpaDomainCell *cell = g_ptr_array_index (dom->cells, i);
      if (!g_hash_table_contains (ret, GUINT_TO_POINTER (cell->id)))
        g_hash_table_insert (ret, GUINT_TO_POINTER (cell->id), cell);
    }
  return ret;
}

static gboolean
parse_numatune (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  xmlNode *memory;
  g_autoptr (GArray) all = NULL;
  g_autoptr (GHashTable) cells = NULL;

  if (numatune == NULL || ctx->dom->cells->len == 0)
    return TRUE;
  cells = cells_by_id (ctx->dom);
  for (xmlNode *c = numatune->children; c != NULL; c = c->next)
    {
      g_autofree char *label = NULL;
      VpaDomainCell *cell;
      gboolean found;
      guint id;

      if (!vpa_xml_is (c, "memnode", NULL))
        continue;
      if (!parse_id_attr (ctx, c, "cellid", "<numatune><memnode>", &found, &id, error))
        return FALSE;
      if (!found || (cell = g_hash_table_lookup (cells, GUINT_TO_POINTER (id))) == NULL || cell->nodeset != NULL)
        continue; /* libvirt refuses these; nothing of ours to bind */
      label = g_strdup_printf ("<numatune><memnode cellid='%u'>", id);
      if (!parse_set_attr (ctx, c, "nodeset", label, &cell->nodeset, error))
        return FALSE;
    }
  memory = vpa_xml_child (numatune, "memory", NULL);
  if (memory != NULL && !parse_set_attr (ctx, memory, "nodeset", "<numatune><memory>", &all, error))
    return FALSE;
  for (guint i = 0; all != NULL && i < ctx->dom->cells->len; i++)
    {
      VpaDomainCell *cell = g_ptr_array_index (ctx->dom->cells, i);
      if (cell->nodeset == NULL)
        cell->nodeset = g_array_copy (all);
    }
  return TRUE;
}

/* A pinned CPU set, stamped with the last cell it was merged into so
 * that vCPUs sharing one set cost one merge per cell. */
typedef struct {
  GArray *set;
  guint stamp;
} PinSet;

static void
pin_set_free (PinSet *p)
{
  g_array_unref (p->set);
  g_free (p);
}

/* The cell's CPU set from the union bitmap, or NULL if empty. */
static GArray *
bitmap_to_set (const GByteArray *bits)
{
  GArray *ret = NULL;

  for (guint i = 0; i < bits->len; i++)
    {
      if (!bits->data[i])
        continue;
      if (ret == NULL)
        ret = g_array_new (FALSE, FALSE, sizeof (guint));
      g_array_append_val (ret, i);
    }
  return ret;
}

static void
bind_cell_pins (VpaDomainCell *cell, guint stamp, GHashTable *pins, PinSet *fallback)
{
  g_autoptr (GByteArray) bits = g_byte_array_new ();

  for (guint j = 0; j < cell->vcpus->len; j++)
    {
      guint v = g_array_index (cell->vcpus, guint, j);
      PinSet *p = g_hash_table_lookup (pins, GUINT_TO_POINTER (v));

      if (p == NULL)
        p = fallback;
      if (p == NULL || p->stamp == stamp)
        continue;
      p->stamp = stamp;
      for (guint k = 0; k < p->set->len; k++)
        {
          guint cpu = g_array_index (p->set, guint, k);
          if (bits->len <= cpu)
            {
              guint old = bits->len;
              g_byte_array_set_size (bits, cpu + 1);
              memset (bits->data + old, 0, cpu + 1 - old);
            }
          bits->data[cpu] = 1;
        }
    }
  cell->cpuset = bitmap_to_set (bits);
}

/* Each cell's host CPUs: its vCPUs' <vcpupin cpuset>, else <vcpu cpuset>. */
static gboolean
parse_pins (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  xmlNode *vcpu = vpa_xml_child (domain, "vcpu", NULL);
  xmlNode *cputune = vpa_xml_child (domain, "cputune", NULL);
  g_autoptr (GHashTable) pins = NULL;
  g_autoptr (GArray) fallback_set = NULL;
  PinSet fallback = { NULL, 0 };

  if (ctx->dom->cells->len == 0)
    return TRUE;
  if (vcpu != NULL && !parse_set_attr (ctx, vcpu, "cpuset", "<vcpu>", &fallback_set, error))
    return FALSE;
  fallback.set = fallback_set;
  pins = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) pin_set_free);
  for (xmlNode *c = cputune != NULL ? cputune->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *label = NULL;
      GArray *set = NULL;
      gboolean found;
      guint id;

      if (!vpa_xml_is (c, "vcpupin", NULL))
        continue;
      if (!parse_id_attr (ctx, c, "vcpu", "<cputune><vcpupin>", &found, &id, error))
        return FALSE;
      if (!found)
        continue;
      label = g_strdup_printf ("<cputune><vcpupin vcpu='%u'>", id);
      if (!parse_set_attr (ctx, c, "cpuset", label, &set, error))
        return FALSE;
      if (set != NULL)
        {
          PinSet *p = g_new0 (PinSet, 1);
          p->set = set;
          g_hash_table_replace (pins, GUINT_TO_POINTER (id), p);
        }
    }
  for (guint i = 0; i < ctx->dom->cells->len; i++)
    bind_cell_pins (g_ptr_array_index (ctx->dom->cells, i), i + 1, pins,
                    fallback_set != NULL ? &fallback : NULL);
  return TRUE;
}

static gint
int_cmp (gconstpointer a, gconstpointer b)
{
  gint x = *(const gint *) a, y = *(const gint *) b;
  return x < y ? -1 : x > y;
}

static void
sort_unique_nodes (GArray *nodes)
{
  guint out = 0;

  g_array_sort (nodes, int_cmp);
  for (guint i = 0; i < nodes->len; i++)
    if (out == 0 || g_array_index (nodes, gint, i) != g_array_index (nodes, gint, out - 1))
      g_array_index (nodes, gint, out++) = g_array_index (nodes, gint, i);
  g_array_set_size (nodes, out);
}

static void
add_nodeset (GArray *nodes, const GArray *nodeset)
{
  for (guint i = 0; i < nodeset->len; i++)
    {
      gint n = (gint) g_array_index (nodeset, guint, i);
      g_array_append_val (nodes, n);
    }
}

/* Host CPU -> NUMA node (-1: in no cell), indexed by CPU id. */
static GArray *
host_cpu_nodes (const VpaHost *host)
{
  GArray *map = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      for (guint j = 0; c->cpus != NULL && j < c->cpus->len; j++)
        {
          guint cpu = g_array_index (c->cpus, guint, j);
          if (cpu > VPA_CPUSET_MAX)
            continue; /* no guest can pin to it */
          while (map->len <= cpu)
            {
              gint none = -1;
              g_array_append_val (map, none);
            }
          g_array_index (map, gint, cpu) = c->id;
        }
    }
  return map;
}

/* "0-3,8" */
static char *
format_set (const GArray *set)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < set->len;)
    {
      guint lo = g_array_index (set, guint, i), j = i;
      while (j + 1 < set->len && g_array_index (set, guint, j + 1) == g_array_index (set, guint, j) + 1)
        j++;
      g_string_append_printf (s, "%s%u", s->len ? "," : "", lo);
      if (j > i)
        g_string_append_printf (s, "-%u", g_array_index (set, guint, j));
      i = j + 1;
    }
  return g_string_free (s, FALSE);
}

static gboolean
bind_cell_cpus (VpaDomain *dom, const VpaDomainCell *cell, const VpaHost *host,
                const GArray *cpu_nodes, GArray *nodes, GError **error)
{
  guint found = 0;

  for (guint i = 0; i < cell->cpuset->len; i++)
    {
      guint cpu = g_array_index (cell->cpuset, guint, i);
      gint n = cpu < cpu_nodes->len ? g_array_index (cpu_nodes, gint, cpu) : -1;
      /* An offline or absent CPU is skipped: libvirt decides whether the
       * domain can run with it; the others still bind the cell. */
      if (n < 0)
        continue;
      g_array_append_val (nodes, n);
      found++;
    }
  if (found == 0 && dom->has_affinity)
    {
      g_autofree char *cpus = format_set (cell->cpuset);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <cpu><numa><cell id='%u'>: its vCPUs are pinned to host CPUs '%s', none "
                   "of which is in a NUMA cell of %s",
                   dom->source, cell->id, cpus, host->source);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_domain_bind_nodes (VpaDomain *dom, const VpaHost *host, GError **error)
{
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GArray) cpu_nodes = NULL;

  g_return_val_if_fail (dom != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (host != NULL && host->cells->len > 0)
    cpu_nodes = host_cpu_nodes (host);
  for (guint i = 0; i < dom->cells->len; i++)
    {
      VpaDomainCell *cell = g_ptr_array_index (dom->cells, i);
      g_autoptr (GArray) own = g_array_new (FALSE, FALSE, sizeof (gint));

      if (cell->nodeset != NULL)
        add_nodeset (own, cell->nodeset);
      else if (cell->cpuset != NULL && cpu_nodes != NULL &&
               !bind_cell_cpus (dom, cell, host, cpu_nodes, own, error))
        return FALSE;
      sort_unique_nodes (own);
      g_array_append_vals (nodes, own->data, own->len);
      g_clear_pointer (&cell->host_nodes, g_array_unref);
      cell->host_nodes = g_steal_pointer (&own);
    }
  sort_unique_nodes (nodes);
  g_array_unref (dom->guest_nodes);
  dom->guest_nodes = g_steal_pointer (&nodes);
  return TRUE;
}

/* The guest's PCI layout, for a domain we manage; <vpa:guest-numa>
 * needs guest NUMA cells, ACPI (the guest learns an expander's node
 * from its _PXM) and a machine type with expander buses. */
static gboolean
parse_guest_bus (ParseCtx *ctx, xmlNode *domain, GError **error)
{
  VpaDomain *dom = ctx->dom;

  if (!dom->has_affinity)
    return TRUE;
  dom->bus = vpa_guest_bus_parse (domain);
  if (!dom->guest_numa)
    return TRUE;
  /* cells written in the document: an implicit one is no guest NUMA node */
  if (dom->cells->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:guest-numa devices='expander-bus'>: the domain has no guest NUMA "
                   "cells (<cpu><numa><cell>) to bind expander buses to",
                   ctx->what);
      return FALSE;
    }
  if (!dom->bus->acpi)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:guest-numa devices='expander-bus'>: <features> has no <acpi/>, "
                   "without which the guest cannot see an expander bus's NUMA node",
                   ctx->what);
      return FALSE;
    }
  if (!dom->bus->known_machine)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <os><type machine='%s'>: the machine type has no PCI expander bus "
                   "(expected q35 or pc, for <vpa:guest-numa>)",
                   ctx->what, dom->bus->machine_name != NULL ? dom->bus->machine_name : "");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */

static void
parse_identity (VpaDomain *dom, xmlNode *domain)
{
  xmlNode *n;

  if ((n = vpa_xml_child (domain, "name", NULL)) != NULL)
    dom->name = vpa_xml_text (n);
  if ((n = vpa_xml_child (domain, "uuid", NULL)) != NULL)
    dom->uuid = vpa_xml_text (n);
}

VpaDomain *
vpa_domain_parse_node (xmlNode *node, const char *what, GError **error)
{
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GHashTable) port_devices = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) placed_devices = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) net_ifaces = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  ParseCtx ctx = { .what = what, .port_devices = port_devices, .placed_devices = placed_devices,
                   .net_ifaces = net_ifaces };

  g_return_val_if_fail (node != NULL, NULL);
  g_return_val_if_fail (what != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (vpa_xml_is (node, "domstatus", NULL))
    {
      xmlNode *inner = vpa_xml_child (node, "domain", NULL);
      if (inner == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <domstatus> holds no <domain>",
                       what);
          return NULL;
        }
      node = inner;
    }
  if (!vpa_xml_is (node, "domain", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: root element <%s> is not <domain> or <domstatus>", what,
                   (const char *) node->name);
      return NULL;
    }

  dom = domain_new (what);
  ctx.dom = dom;
  parse_identity (dom, node);
  if (!parse_metadata (&ctx, node, error) || !parse_hostdevs (&ctx, node, error) ||
      !check_ports (&ctx, error) || !parse_cells (&ctx, node, error) ||
      !parse_numatune (&ctx, node, error) || !parse_pins (&ctx, node, error) ||
      !parse_guest_bus (&ctx, node, error))
    return NULL;
  /* Without a host only the nodesets bind; vpa_domain_bind_nodes() adds
   * the pinned CPUs' nodes. */
  if (!vpa_domain_bind_nodes (dom, NULL, error))
    return NULL;
  return g_steal_pointer (&dom);
}

VpaDomain *
vpa_domain_parse (const char *buf, gsize len, const char *what, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;

  g_return_val_if_fail (what != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  doc = vpa_xml_parse_memory (buf, len, what, error);
  if (doc == NULL)
    return NULL;
  return vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error);
}
