/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The libvirt side of libvpa: the inventory source for libvirt URIs and
 * claims from a connection's domains (docs/libvirt.md), and libvirt's
 * errors as this library reports them. The define lock is
 * vpa-virt-lock.c; define and attach are vpa-virt-define.c and
 * vpa-virt-attach.c.
 */
#include "vpa-virt.h"
#include "vpa-virt-private.h"

#include <libvirt/virterror.h>
#include <libxml/xmlreader.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vpa-source.h"
#include "vpa-capabilities.h"
#include "vpa-nodedev.h"
#include "vpa-xml.h"

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

static void
virt_silent_error (void *opaque, virErrorPtr err)
{
  /* libvirt's default handler prints to stderr; we report through
   * GError instead, so the front ends print exactly one line. */
}

static void virt_silent_xml_error (void *ctx, const char *msg, ...) G_GNUC_PRINTF (2, 3);

static void
virt_silent_xml_error (void *ctx, const char *msg, ...)
{
}

void
vpa_virt_init (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      virSetErrorFunc (NULL, virt_silent_error);
      /* libvirt's own XML parsing (the test driver's file) would print
       * libxml2 warnings ("I/O warning : failed to load ...") too. */
      xmlSetGenericErrorFunc (NULL, virt_silent_xml_error);
      g_once_init_leave (&once, 1);
    }
}

int
vpa_virt_last_code (void)
{
  virErrorPtr err = virGetLastError ();
  return err != NULL ? err->code : VIR_ERR_OK;
}

/* libvirt's last message on one line. */
char *
vpa_virt_last_message (void)
{
  virErrorPtr err = virGetLastError ();
  char *msg = g_strdup (err != NULL && err->message != NULL ? err->message
                                                            : "unknown libvirt error");
  return g_strdelimit (msg, "\r\n", ' ');
}

/* Sets "<fmt>: <libvirt's message>". */
void
vpa_virt_set_error (GError **error, VpaErrorCode code, const char *fmt, ...)
{
  g_autofree char *what = NULL;
  g_autofree char *msg = vpa_virt_last_message ();
  va_list ap;

  va_start (ap, fmt);
  what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, VPA_ERROR, code, "%s: %s", what, msg);
}

/* The connection's canonical URI, or fallback. */
char *
vpa_virt_conn_uri (virConnectPtr conn, const char *fallback)
{
  char *uri = virConnectGetURI (conn);

  if (uri != NULL)
    return uri;
  return g_strdup (fallback != NULL ? fallback : "(default)");
}

virConnectPtr
vpa_virt_open (const char *uri, gboolean read_only, GError **error)
{
  virConnectPtr conn;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  vpa_virt_init ();
  conn = read_only ? virConnectOpenReadOnly (uri) : virConnectOpen (uri);
  if (conn == NULL)
    {
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "cannot connect to '%s'",
                          uri != NULL ? uri : "(default)");
      return NULL;
    }
  return conn;
}

/* ------------------------------------------------------------------ */
/* Claims                                                              */
/* ------------------------------------------------------------------ */

static gboolean
claims_contain (GPtrArray *claims, guint from, VpaAddr addr)
{
  for (guint i = from; i < claims->len; i++)
    {
      if (vpa_addr_same (((VpaClaim *) g_ptr_array_index (claims, i))->addr, addr))
        return TRUE;
    }
  return FALSE;
}

static gboolean
claims_have_numa (GPtrArray *claims, guint from)
{
  for (guint i = from; i < claims->len; i++)
    {
      if (((VpaClaim *) g_ptr_array_index (claims, i))->numa != NULL)
        return TRUE;
    }
  return FALSE;
}

/* Adds the PCI hostdevs of one domain XML not yet claimed since from,
 * and its CPUs and memory (the first XML read of the domain). */
static gboolean
claims_from_xml (const char *xml, const char *name, gboolean running,
                 GPtrArray *claims, guint from, GError **error)
{
  g_autofree char *what = g_strdup_printf ("domain '%s'", name);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), what }, error);
  g_autoptr (GArray) devs = NULL;

  if (doc == NULL)
    return FALSE;
  if (!claims_have_numa (claims, from))
    {
      VpaClaim *numa = NULL;
      if (!vpa_numa_claim (xmlDocGetRootElement (doc), name, running, what, &numa, error))
        return FALSE;
      if (numa != NULL)
        g_ptr_array_add (claims, numa);
    }
  devs = vpa_xml_domain_pci_devices (xmlDocGetRootElement (doc), what, VPA_XML_PCI_STRICT, error);
  if (devs == NULL)
    return FALSE;
  for (guint i = 0; i < devs->len; i++)
    {
      VpaAddr addr = g_array_index (devs, VpaXmlPciDevice, i).addr;

      if (addr == VPA_ADDR_NONE || claims_contain (claims, from, addr))
        continue;
      g_ptr_array_add (claims, vpa_claim_new (name, addr, running));
    }
  return TRUE;
}

/* FALSE with error unless the domain merely vanished (then *gone). */
static gboolean
domain_xml (virDomainPtr dom, guint flags, char **out, gboolean *gone, GError **error)
{
  *out = virDomainGetXMLDesc (dom, flags);
  if (*out != NULL)
    return TRUE;
  if (vpa_virt_last_code () == VIR_ERR_NO_DOMAIN)
    {
      *gone = TRUE;
      return TRUE;
    }
  vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "cannot read the XML of domain '%s'",
                      virDomainGetName (dom));
  return FALSE;
}

/* A running domain holds its live devices and, if persistent, those of
 * its next-boot configuration too. */
static gboolean
domain_claims (virDomainPtr dom, GPtrArray *claims, GError **error)
{
  const char *name = virDomainGetName (dom);
  guint from = claims->len;
  gboolean gone = FALSE;
  int active = virDomainIsActive (dom);
  int persistent = virDomainIsPersistent (dom);

  if (active < 0 || persistent < 0)
    {
      if (vpa_virt_last_code () == VIR_ERR_NO_DOMAIN)
        return TRUE;
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "cannot read the state of domain '%s'",
                          name);
      return FALSE;
    }
  if (active)
    {
      g_autofree char *xml = NULL;
      if (!domain_xml (dom, 0, &xml, &gone, error))
        return FALSE;
      if (!gone && !claims_from_xml (xml, name, TRUE, claims, from, error))
        return FALSE;
    }
  if (!gone && (!active || persistent))
    {
      g_autofree char *xml = NULL;
      if (!domain_xml (dom, VIR_DOMAIN_XML_INACTIVE, &xml, &gone, error))
        return FALSE;
      if (!gone && !claims_from_xml (xml, name, FALSE, claims, from, error))
        return FALSE;
    }
  if (gone)
    g_ptr_array_set_size (claims, from);
  return TRUE;
}

static gint
claim_compare (gconstpointer a, gconstpointer b)
{
  const VpaClaim *ca = *(VpaClaim *const *) a;
  const VpaClaim *cb = *(VpaClaim *const *) b;
  int c = strcmp (ca->domain, cb->domain);

  if (c != 0)
    return c;
  return ca->addr < cb->addr ? -1 : ca->addr > cb->addr;
}

GPtrArray *
vpa_virt_load_claims (virConnectPtr conn, GError **error)
{
  g_autoptr (GPtrArray) claims = NULL;
  virDomainPtr *doms = NULL;
  gboolean ok = TRUE;
  int n;

  g_return_val_if_fail (conn != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  vpa_virt_init ();
  n = virConnectListAllDomains (conn, &doms, 0);
  if (n < 0)
    {
      g_autofree char *uri = vpa_virt_conn_uri (conn, NULL);
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot list domains", uri);
      return NULL;
    }
  claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  for (int i = 0; i < n; i++)
    {
      if (ok)
        ok = domain_claims (doms[i], claims, error);
      virDomainFree (doms[i]);
    }
  free (doms);
  if (!ok)
    return NULL;
  g_ptr_array_sort (claims, claim_compare);
  return g_steal_pointer (&claims);
}

/* ------------------------------------------------------------------ */
/* Devices and topology                                                */
/* ------------------------------------------------------------------ */

typedef struct {
  VpaHost *host;
  const char *uri;
  GHashTable *pci_by_name; /* nodedev name -> VpaDevice* (host owns) */
  GPtrArray *nets;         /* parent name, interface name, ... pairs */
  GPtrArray *parents;      /* device name, parent name, ... pairs: <parent> not pci_D_B_S_F */
} DeviceLoad;

/* One node device; a device removed since the listing is skipped. */
static gboolean
load_one_device (DeviceLoad *ld, virNodeDevicePtr dev, GError **error)
{
  const char *name = virNodeDeviceGetName (dev);
  g_autofree char *xml = virNodeDeviceGetXMLDesc (dev, 0);
  g_autofree char *what = NULL;
  g_autoptr (xmlDoc) doc = NULL;
  VpaNodedev nd = { 0 };

  if (xml == NULL)
    {
      if (vpa_virt_last_code () == VIR_ERR_NO_NODE_DEVICE)
        return TRUE;
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read node device '%s'",
                          ld->uri, name);
      return FALSE;
    }
  what = g_strdup_printf ("%s: node device '%s'", ld->uri, name);
  doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), what }, error);
  if (doc == NULL)
    return FALSE;
  if (!vpa_nodedev_parse (xmlDocGetRootElement (doc), ld->uri, &nd, error))
    {
      vpa_nodedev_clear (&nd);
      return FALSE;
    }
  if (nd.kind == VPA_NODEDEV_PCI && nd.pci != NULL)
    {
      VpaDevice *pci = g_steal_pointer (&nd.pci);
      if (nd.parent != NULL && pci->pcie_parent == VPA_ADDR_NONE &&
          strcmp (nd.parent, "computer") != 0)
        {
          g_ptr_array_add (ld->parents, g_strdup (nd.name));
          g_ptr_array_add (ld->parents, g_strdup (nd.parent));
        }
      g_hash_table_insert (ld->pci_by_name, g_strdup (nd.name), pci);
      vpa_host_add_device (ld->host, pci);
    }
  else if (nd.kind == VPA_NODEDEV_NET && nd.parent != NULL && nd.interface != NULL)
    {
      g_ptr_array_add (ld->nets, g_steal_pointer (&nd.parent));
      g_ptr_array_add (ld->nets, g_steal_pointer (&nd.interface));
    }
  vpa_nodedev_clear (&nd);
  return TRUE;
}

/* A function with several netdevs (mlx4's two ports) gets the first by
 * name, so the result does not depend on the daemon's listing order. */
static void
attach_netdevs (DeviceLoad *ld)
{
  for (guint i = 0; i + 1 < ld->nets->len; i += 2)
    {
      VpaDevice *dev = g_hash_table_lookup (ld->pci_by_name, ld->nets->pdata[i]);
      const char *iface = ld->nets->pdata[i + 1];

      if (dev == NULL)
        continue;
      if (dev->netdev == NULL || strcmp (iface, dev->netdev) < 0)
        {
          g_free (dev->netdev);
          dev->netdev = g_strdup (iface);
        }
    }
}

/* A <parent> naming a PCI device by another name than its address; a
 * parent that is no PCI device leaves the device on a root bus. */
static void
resolve_parents (DeviceLoad *ld)
{
  for (guint i = 0; i + 1 < ld->parents->len; i += 2)
    {
      VpaDevice *dev = g_hash_table_lookup (ld->pci_by_name, ld->parents->pdata[i]);
      VpaDevice *parent = g_hash_table_lookup (ld->pci_by_name, ld->parents->pdata[i + 1]);

      if (dev != NULL && parent != NULL)
        dev->pcie_parent = parent->addr;
    }
}

static gboolean
load_devices (virConnectPtr conn, const char *uri, VpaHost *host, GError **error)
{
  g_autoptr (GHashTable) by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) nets = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) parents = g_ptr_array_new_with_free_func (g_free);
  DeviceLoad ld = { host, uri, by_name, nets, parents };
  virNodeDevicePtr *devs = NULL;
  gboolean ok = TRUE;
  int n;

  n = virConnectListAllNodeDevices (conn, &devs,
                                    VIR_CONNECT_LIST_NODE_DEVICES_CAP_PCI_DEV |
                                      VIR_CONNECT_LIST_NODE_DEVICES_CAP_NET);
  if (n < 0)
    {
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot list node devices", uri);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (ok)
        ok = load_one_device (&ld, devs[i], error);
      virNodeDeviceFree (devs[i]);
    }
  free (devs);
  if (!ok)
    return FALSE;
  attach_netdevs (&ld);
  resolve_parents (&ld);
  return TRUE;
}

/* The snapshot file behind a test:///ABS/PATH.xml connection, or NULL. */
static char *
test_driver_file (virConnectPtr conn)
{
  g_autofree char *uri = virConnectGetURI (conn);

  if (uri == NULL || !g_str_has_prefix (uri, "test:///") ||
      strcmp (uri, "test:///default") == 0)
    return NULL;
  return g_strdup (uri + strlen ("test://"));
}

/* libvirt's test driver reports no NUMA cells for a custom file, so
 * the snapshot's own <capabilities> child (a root child) is the
 * topology. Streams past the devices: the file can be large. */
static gboolean
load_cells_from_file (const char *path, VpaHost *host, GError **error)
{
  xmlTextReaderPtr reader = xmlReaderForFile (path, NULL, vpa_xml_parse_options ());
  gboolean ok = TRUE;
  int ret;

  if (reader == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read the snapshot",
                   path);
      return FALSE;
    }
  ret = xmlTextReaderRead (reader);
  if (ret == 1)
    ret = xmlTextReaderRead (reader);
  while (ret == 1)
    {
      if (xmlTextReaderDepth (reader) != 1 ||
          xmlTextReaderNodeType (reader) != XML_READER_TYPE_ELEMENT)
        {
          ret = xmlTextReaderRead (reader);
          continue;
        }
      if (xmlStrEqual (xmlTextReaderConstLocalName (reader), BAD_CAST "capabilities"))
        {
          xmlNode *caps = xmlTextReaderExpand (reader);
          ret = caps != NULL ? 0 : -1;
          if (caps != NULL)
            ok = vpa_capabilities_parse (caps, path, host, error);
          break;
        }
      ret = xmlTextReaderNext (reader);
    }
  xmlFreeTextReader (reader);
  if (ok && ret < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: malformed XML", path);
      return FALSE;
    }
  return ok;
}

static gboolean
load_cells (virConnectPtr conn, const char *uri, VpaHost *host, GError **error)
{
  g_autofree char *file = test_driver_file (conn);
  g_autofree char *caps = NULL;
  g_autoptr (xmlDoc) doc = NULL;
  g_autofree char *what = NULL;

  if (file != NULL)
    return load_cells_from_file (file, host, error);
  caps = virConnectGetCapabilities (conn);
  if (caps == NULL)
    {
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read the capabilities", uri);
      return FALSE;
    }
  what = g_strdup_printf ("%s: capabilities", uri);
  doc = vpa_xml_parse_memory (&(VpaDoc){ caps, strlen (caps), what }, error);
  if (doc == NULL)
    return FALSE;
  return vpa_capabilities_parse (xmlDocGetRootElement (doc), uri, host, error);
}

VpaHost *
vpa_virt_load_host (virConnectPtr conn, const char *uri, GError **error)
{
  g_autofree char *name = vpa_virt_conn_uri (conn, uri);
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;

  g_return_val_if_fail (conn != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  vpa_virt_init ();
  if (uri == NULL)
    uri = name;
  host = vpa_host_new (uri);
  host->hostname = virConnectGetHostname (conn);
  if (!load_devices (conn, uri, host, error))
    return NULL;
  if (!load_cells (conn, uri, host, error))
    return NULL;
  claims = vpa_virt_load_claims (conn, error);
  if (claims == NULL)
    return NULL;
  for (guint i = 0; i < claims->len; i++)
    vpa_host_add_claim (host, g_steal_pointer (&claims->pdata[i]));
  if (!vpa_host_seal (host, error))
    return NULL;
  return g_steal_pointer (&host);
}

/* ------------------------------------------------------------------ */
/* The inventory source                                                */
/* ------------------------------------------------------------------ */

/* libvirt's driver names (the scheme before any "+transport"). */
static const char *const virt_drivers[] = {
  "qemu",
  "test",
  "lxc",
  "xen",
  "libxl",
  "vbox",
  "vmwareplayer",
  "vmwarews",
  "vmwarefusion",
  "esx",
  "gsx",
  "vpx",
  "hyperv",
  "bhyve",
  "ch",
  "openvz",
  "vz",
  "parallels",
  "remote",
  "vserver",
  NULL,
};

static gboolean
virt_probe (const char *uri)
{
  g_autofree char *scheme = NULL;
  g_autofree char *snapshot = NULL;
  char *plus;

  if (uri == NULL || strstr (uri, "://") == NULL)
    return FALSE;
  scheme = g_uri_parse_scheme (uri);
  if (scheme == NULL)
    return FALSE;
  for (char *c = scheme; *c != '\0'; c++)
    *c = g_ascii_tolower (*c);
  if ((plus = strchr (scheme, '+')) != NULL)
    *plus = '\0';
  if (!g_strv_contains (virt_drivers, scheme))
    return FALSE;
  /* test:///ABS/PATH.xml as an inventory is read by our streaming reader. */
  snapshot = vpa_source_snapshot_path (uri);
  return snapshot == NULL;
}

static VpaHost *
virt_load (const char *uri, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, TRUE, error);

  if (conn == NULL)
    return NULL;
  return vpa_virt_load_host (conn, uri, error);
}

static const VpaSourceOps virt_source_ops = {
  .name = "libvirt",
  .probe = virt_probe,
  .load = virt_load,
};

const VpaSourceOps *
vpa_virt_source_ops (void)
{
  return &virt_source_ops;
}

void
vpa_virt_register (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      vpa_source_register (&virt_source_ops);
      g_once_init_leave (&once, 1);
    }
}
