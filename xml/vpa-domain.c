/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Domain XML → VpaDomain. The vpa:affinity metadata is ours and is
 * validated strictly. The rest of the document belongs to libvirt, which
 * has validated it already: it is checked only for domains that carry
 * vpa:affinity, so that the hook never refuses a domain it does not
 * manage because of content it does not understand.
 */
#include "vpa-domain-private.h"
#include "vpa-domain-vswitch.h"
#include "vpa-domain-locality.h"

#include <string.h>

/* Bounds a flavor's count so that one attribute cannot make the rewrite
 * add an unbounded number of <hostdev> elements. */
#define VPA_ALIAS_COUNT_MAX 256

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
                   "%s: %s policy='%s': unknown NUMA affinity policy (expected required, legacy, preferred or socket)",
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
/* Devices one domain may request (its ports and the devices of its
 * aliases): a guest has a few; this bounds the placement's work. */
#define VPA_DOMAIN_MAX_REQUESTS 1024

static gboolean
too_many_requests (ParseCtx *ctx, GError **error)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: <vpa:affinity>: more than %d devices requested (ports, devices and alias devices)",
               ctx->what, VPA_DOMAIN_MAX_REQUESTS);
  return FALSE;
}

/* A group holds two requests at least: no more groups than requests. */
static gboolean
too_many_groups (ParseCtx *ctx, GError **error)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: <vpa:affinity>: more than %d locality groups", ctx->what,
               VPA_DOMAIN_MAX_REQUESTS);
  return FALSE;
}

static gboolean
parse_aliases (ParseCtx *ctx, const char *value, GError **error)
{
  g_auto (GStrv) entries = NULL;
  guint commas = 0;

  for (const char *p = value; *p != '\0'; p++)
    commas += *p == ',';
  if (commas >= VPA_DOMAIN_MAX_REQUESTS)
    return too_many_requests (ctx, error);
  entries = g_strsplit (value, ",", -1);

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
                       "%s: <vpa:flavor> aliases='%s': entry '%s' is not NAME:COUNT (expected NAME:COUNT[,NAME:COUNT...])",
                       ctx->what, value, g_strstrip (entries[i]));
          return FALSE;
        }
      g_strstrip (kv[1]);
      if (kv[1][0] == '\0' || strspn (kv[1], "0123456789") != strlen (kv[1]))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:flavor> aliases='%s': count '%s' of alias '%s' is not a non-negative integer",
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
                       "%s: <vpa:flavor> aliases='%s': alias name '%s' cannot form the user alias ua-vpa-NAME-N (letters, digits, '_' and '-' only)",
                       ctx->what, value, kv[0]);
          return FALSE;
        }
      ctx->n_requested += (guint) count;
      if (ctx->n_requested > VPA_DOMAIN_MAX_REQUESTS)
        return too_many_requests (ctx, error);
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
                   "%s: %s vnic-type='%s': unknown vnic type (expected direct, direct-physical or normal)",
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
                   port->physnet != NULL && *port->physnet == '\0'     ? "physnet"
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
  g_autofree char *vnic = vpa_xml_prop (node, "vnic-type");
  VpaPortRequest *port;

  if (g_strcmp0 (vnic, "normal") == 0)
    return vpa_domain_parse_vswitch_port (ctx->dom, node, ctx->what, ctx->port_devices, error);
  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  port = g_new0 (VpaPortRequest, 1);
  g_ptr_array_add (ctx->dom->ports, port);
  port->device = vpa_xml_prop (node, "device");
  if (port->device == NULL || *port->device == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port>: attribute 'device' is missing (the user alias of an <interface type='hostdev'> or <hostdev>)",
                   ctx->what);
      return FALSE;
    }
  if (g_str_has_prefix (port->device, VPA_ALIAS_PREFIX))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port device='%s'>: the prefix '%s' is reserved for the devices of flavor aliases",
                   ctx->what, port->device, VPA_ALIAS_PREFIX);
      return FALSE;
    }
  if (!g_hash_table_add (ctx->port_devices, port->device))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:port device='%s'>: device '%s' is already requested by another <vpa:port>",
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
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s: attribute '%s' is missing",
                   ctx->what, label, attr);
    }
  else
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s %s='%s': expected %s", ctx->what,
                   label, attr, value, expected);
    }
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
    {
      return placed_fail (ctx, node, "policy", policy, "required, legacy, preferred or socket",
                          error);
    }
  if (source == NULL || !vpa_policy_source_from_string (source, &rec.source))
    {
      return placed_fail (ctx, node, "source", source, "port, flavor, image, alias or default",
                          error);
    }
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
parse_numa (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "placement", "cpu-policy", "cpu-thread-policy",
                                       "distances", "emulator-threads", NULL };
  g_autofree char *emulator = vpa_xml_prop (node, "emulator-threads");
  g_autofree char *placement = vpa_xml_prop (node, "placement");
  g_autofree char *cpu = vpa_xml_prop (node, "cpu-policy");
  g_autofree char *thread = vpa_xml_prop (node, "cpu-thread-policy");
  g_autofree char *distances = vpa_xml_prop (node, "distances");

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  if (ctx->dom->has_numa)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <vpa:affinity>: more than one <vpa:numa>", ctx->what);
      return FALSE;
    }
  ctx->dom->has_numa = TRUE;
  if (distances != NULL && strcmp (distances, "host") != 0 && strcmp (distances, "keep") != 0)
    return placed_fail (ctx, node, "distances", distances, "host or keep", error);
  ctx->dom->keep_distances = g_strcmp0 (distances, "keep") == 0;
  /* <vpa:numa distances='...'/> alone: a guest bound by hand. */
  if (placement == NULL && distances != NULL && cpu == NULL && thread == NULL && emulator == NULL)
    return TRUE;
  if (placement == NULL || strcmp (placement, "auto") != 0)
    return placed_fail (ctx, node, "placement", placement, "auto", error);
  if (cpu != NULL && !vpa_cpu_policy_from_string (cpu, &ctx->dom->cpu_policy))
    return placed_fail (ctx, node, "cpu-policy", cpu, "shared or dedicated", error);
  if (thread != NULL && !vpa_thread_policy_from_string (thread, &ctx->dom->thread_policy))
    return placed_fail (ctx, node, "cpu-thread-policy", thread, "prefer, isolate or require", error);
  if (emulator != NULL && strcmp (emulator, "share") != 0 && strcmp (emulator, "isolate") != 0)
    return placed_fail (ctx, node, "emulator-threads", emulator, "share or isolate", error);
  /* isolate dedicates a CPU: only a dedicated guest has one to give, as
   * Nova refuses hw:emulator_threads_policy=isolate without pinning */
  if (g_strcmp0 (emulator, "isolate") == 0 && ctx->dom->cpu_policy != VPA_CPU_POLICY_DEDICATED)
    {
      return placed_fail (ctx, node, "emulator-threads", emulator,
                          "share (isolate needs cpu-policy='dedicated')", error);
    }
  ctx->dom->emulator_share = g_strcmp0 (emulator, "share") == 0;
  ctx->dom->emulator_isolate = g_strcmp0 (emulator, "isolate") == 0;
  ctx->dom->numa_auto = TRUE;
  return TRUE;
}

/* "4,6,7": host CPU ids separated by ','; NULL when it is not. */
static GArray *
parse_cpu_list (const char *s)
{
  g_auto (GStrv) parts = g_strsplit (s, ",", -1);
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (guint));
  guint64 v;

  for (guint i = 0; parts[i] != NULL; i++)
    {
      guint cpu;
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, VPA_CPUSET_MAX, &v, NULL))
        return NULL;
      cpu = (guint) v;
      g_array_append_val (out, cpu);
    }
  return g_steal_pointer (&out);
}

static gboolean
parse_placed_cell (ParseCtx *ctx, xmlNode *node, GError **error)
{
  static const char *const known[] = { "cell", "host-node", "cpus", "memory-kib",
                                       "reserved-cpus", "emulator-cpus", NULL };
  g_autofree char *reserved = vpa_xml_prop (node, "reserved-cpus");
  g_autofree char *emulator = vpa_xml_prop (node, "emulator-cpus");
  g_autofree char *cell = vpa_xml_prop (node, "cell");
  g_autofree char *host_node = vpa_xml_prop (node, "host-node");
  g_autofree char *cpus = vpa_xml_prop (node, "cpus");
  g_autofree char *mem = vpa_xml_prop (node, "memory-kib");
  VpaPlacedCell pc = { 0 };
  guint64 v;

  if (!check_attributes (ctx, node, known, error))
    return FALSE;
  if (cell == NULL || !g_ascii_string_to_unsigned (cell, 10, 0, G_MAXINT, &v, NULL))
    return placed_fail (ctx, node, "cell", cell, "a guest cell id", error);
  pc.cell = (guint) v;
  if (host_node == NULL || !g_ascii_string_to_unsigned (host_node, 10, 0, G_MAXINT, &v, NULL))
    return placed_fail (ctx, node, "host-node", host_node, "a host NUMA node id", error);
  pc.node = (gint) v;
  if (mem == NULL || !g_ascii_string_to_unsigned (mem, 10, 0, G_MAXUINT64, &pc.memory_kib, NULL))
    return placed_fail (ctx, node, "memory-kib", mem, "a size in KiB", error);
  if (cpus == NULL)
    return placed_fail (ctx, node, "cpus", NULL, NULL, error);
  if ((pc.cpus = parse_cpu_list (cpus)) == NULL)
    return placed_fail (ctx, node, "cpus", cpus, "host CPU ids separated by ','", error);
  if (reserved != NULL && (pc.reserved = parse_cpu_list (reserved)) == NULL)
    {
      g_array_unref (pc.cpus);
      return placed_fail (ctx, node, "reserved-cpus", reserved, "host CPU ids separated by ','",
                          error);
    }
  if (emulator != NULL && (pc.emulator = parse_cpu_list (emulator)) == NULL)
    {
      vpa_placed_cell_clear (&pc);
      return placed_fail (ctx, node, "emulator-cpus", emulator, "host CPU ids separated by ','",
                          error);
    }
  g_array_append_val (ctx->dom->placed_cells, pc);
  return TRUE;
}

/* FALSE with error for an element in a namespace of ours that is not
 * the one we read: another version of it must not look like a domain
 * without requests. */
static gboolean
check_namespace_version (ParseCtx *ctx, xmlNode *c, const char *where, GError **error)
{
  const char *href = c->ns != NULL ? (const char *) c->ns->href : NULL;

  if (href == NULL || strcmp (href, VPA_XMLNS) == 0 || !g_str_has_prefix (href, VPA_XMLNS_PREFIX))
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s: <%s%s%s> is in namespace '%s', which this version does not read; it reads '" VPA_XMLNS "'",
               ctx->what, where, c->ns->prefix != NULL ? (const char *) c->ns->prefix : "",
               c->ns->prefix != NULL ? ":" : "", (const char *) c->name, href);
  return FALSE;
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
      if (!check_namespace_version (ctx, c, "<vpa:affinity>", error))
        return FALSE;
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
        {
          ok = seen_flavor = parse_flavor (ctx, c, error);
        }
      else if (vpa_xml_is (c, "image", NULL))
        {
          ok = seen_image = parse_image (ctx, c, error);
        }
      else if (vpa_xml_is (c, "port", NULL))
        {
          ok = ++ctx->n_requested <= VPA_DOMAIN_MAX_REQUESTS ? parse_port (ctx, c, error)
                                                             : too_many_requests (ctx, error);
        }
      else if (vpa_xml_is (c, "placed", NULL))
        {
          ok = parse_placed (ctx, c, error);
        }
      else if (vpa_xml_is (c, "device", NULL))
        {
          ok = ++ctx->n_requested <= VPA_DOMAIN_MAX_REQUESTS
                 ? vpa_domain_parse_device (ctx->dom, c, ctx->what, error) &&
                     check_device_name (ctx, error)
                 : too_many_requests (ctx, error);
        }
      else if (vpa_xml_is (c, "locality-group", NULL))
        {
          ok = ctx->dom->locality_groups->len < VPA_DOMAIN_MAX_REQUESTS
                 ? vpa_domain_parse_locality_group (ctx->dom, c, ctx->what, error)
                 : too_many_groups (ctx, error);
        }
      else if (vpa_xml_is (c, "numa", NULL))
        {
          ok = parse_numa (ctx, c, error);
        }
      else if (vpa_xml_is (c, "placed-cell", NULL))
        {
          ok = parse_placed_cell (ctx, c, error);
        }
      else if (vpa_xml_is (c, "guest-numa", NULL))
        {
          ok = parse_guest_numa (ctx, c, error);
        }
      else
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:affinity>: unknown element <vpa:%s> (expected flavor, image, port, device, locality-group, guest-numa, placed, numa or placed-cell)",
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
      if (c->type == XML_ELEMENT_NODE && !check_namespace_version (ctx, c, "<metadata>", error))
        return FALSE;
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
  if (!vpa_domain_mode_parse_attr (affinity, ctx->what, &ctx->dom->mode, error))
    return FALSE;
  return parse_affinity (ctx, affinity, error);
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

/* The user alias of a device that is not a PCI device (an <interface
 * type='network'>, a USB <hostdev>), for the message of a port naming it. */
static void
remember_other_alias (ParseCtx *ctx, xmlNode *dev);

/* Every <hostdev>/<interface> alias with its element (only consulted for
 * an alias no PCI device has). */
static void
remember_other_aliases (ParseCtx *ctx, xmlNode *domain)
{
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);

  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, "hostdev", NULL) || vpa_xml_is (c, "interface", NULL))
        remember_other_alias (ctx, c);
    }
}

static void
remember_other_alias (ParseCtx *ctx, xmlNode *dev)
{
  xmlNode *alias = vpa_xml_child (dev, "alias", NULL);
  g_autofree char *name = alias != NULL ? vpa_xml_prop (alias, "name") : NULL;
  g_autofree char *type = vpa_xml_prop (dev, "type");

  if (name != NULL && !g_hash_table_contains (ctx->other_aliases, name))
    {
      g_hash_table_insert (ctx->other_aliases, g_steal_pointer (&name),
                           g_strdup_printf ("<%s type='%s'>", (const char *) dev->name,
                                            type != NULL ? type : ""));
    }
}

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
  remember_other_aliases (ctx, domain);
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
      const char *other = g_hash_table_lookup (ctx->other_aliases, port->device);

      if (!g_hash_table_contains (aliases, port->device) && network != NULL)
        {
          port->network = g_strdup (network);
          continue;
        }
      if (!g_hash_table_contains (aliases, port->device) && other != NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:port device='%s'>: the device with that user alias, %s, is "
                       "not a PCI device (a port fills an <interface type='hostdev'>, a PCI "
                       "<hostdev> or an <interface type='network'> with a <source network>)",
                       ctx->what, port->device, other);
          return FALSE;
        }
      if (!g_hash_table_contains (aliases, port->device))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:port device='%s'>: no <interface type='hostdev'> or PCI <hostdev> has the user alias '%s'",
                       ctx->what, port->device, port->device);
          return FALSE;
        }
    }
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
  dom->bus = vpa_guest_topology_bus_parse (domain);
  if (!dom->guest_numa)
    {
      /* our controllers without <vpa:guest-numa>: the planner removes
       * them, from what libvirt would define (policy's bus rules) */
      if (vpa_guest_model_bus_has_own (dom->bus))
        dom->bus->facts = vpa_guest_facts_parse (domain);
      return TRUE;
    }
  /* cells written in the document: an implicit one is no guest NUMA node */
  if (dom->cells->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:guest-numa devices='expander-bus'>: the domain has no guest NUMA cells (<cpu><numa><cell>) to bind expander buses to",
                   ctx->what);
      return FALSE;
    }
  if (!dom->bus->acpi)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <vpa:guest-numa devices='expander-bus'>: <features> has no <acpi/>, without which the guest cannot see an expander bus's NUMA node",
                   ctx->what);
      return FALSE;
    }
  if (!dom->bus->known_machine)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <os><type machine='%s'>: the machine type has no PCI expander bus (expected q35 or pc, for <vpa:guest-numa>)",
                   ctx->what, dom->bus->machine_name != NULL ? dom->bus->machine_name : "");
      return FALSE;
    }
  /* the planner sees only what libvirt would define (policy's bus rules) */
  dom->bus->facts = vpa_guest_facts_parse (domain);
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
    dom->name = vpa_xml_name (n);
  if ((n = vpa_xml_child (domain, "uuid", NULL)) != NULL)
    dom->uuid = vpa_xml_text (n);
}

VpaDomain *
vpa_domain_parse_node (xmlNode *node, const char *what, GError **error)
{
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GHashTable) port_devices = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) placed_devices = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) vcpu_cell = g_array_new (FALSE, FALSE, sizeof (gint16));
  g_autoptr (GHashTable) other_aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                                g_free);
  g_autoptr (GHashTable) net_ifaces = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  ParseCtx ctx = { .what = what, .port_devices = port_devices, .placed_devices = placed_devices, .vcpu_cell = vcpu_cell, .other_aliases = other_aliases, .net_ifaces = net_ifaces };

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

  dom = vpa_domain_new (what);
  ctx.dom = dom;
  parse_identity (dom, node);
  if (!parse_metadata (&ctx, node, error) || !parse_hostdevs (&ctx, node, error) ||
      !check_ports (&ctx, error) ||
      !vpa_domain_check_vswitch_ports (dom, node, what, error) || !vpa_domain_parse_cells (&ctx, node, error) ||
      !vpa_domain_parse_numatune (&ctx, node, error) || !vpa_domain_parse_pins (&ctx, node, error) ||
      !vpa_domain_parse_resources (&ctx, node, error) || !vpa_domain_parse_implicit_cell (&ctx, node, error) ||
      !parse_guest_bus (&ctx, node, error))
    return NULL;
  return g_steal_pointer (&dom);
}

VpaDomain *
vpa_domain_parse (const VpaDoc *doc, GError **error)
{
  g_autoptr (xmlDoc) xml = NULL;

  g_return_val_if_fail (doc != NULL && doc->what != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  xml = vpa_xml_parse_memory (doc, error);
  if (xml == NULL)
    return NULL;
  return vpa_domain_parse_node (xmlDocGetRootElement (xml), doc->what, error);
}
