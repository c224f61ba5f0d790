/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The libvirt side of libvpa: the inventory source for libvirt URIs,
 * claims from a connection's domains, and define/attach under a
 * per-connection lock with a verify step (docs/libvirt.md).
 */
#include "vpa-virt.h"
#include "vpa-file.h"

#include <errno.h>
#include <fcntl.h>
#include <libvirt/virterror.h>
#include <libxml/xmlreader.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void
virt_init (void)
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

static int
virt_last_code (void)
{
  virErrorPtr err = virGetLastError ();
  return err != NULL ? err->code : VIR_ERR_OK;
}

/* libvirt's last message on one line. */
static char *
virt_last_message (void)
{
  virErrorPtr err = virGetLastError ();
  char *msg = g_strdup (err != NULL && err->message != NULL ? err->message
                                                            : "unknown libvirt error");
  return g_strdelimit (msg, "\r\n", ' ');
}

static void virt_set_error (GError **error, VpaErrorCode code, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);

/* Sets "<fmt>: <libvirt's message>". */
static void
virt_set_error (GError **error, VpaErrorCode code, const char *fmt, ...)
{
  g_autofree char *what = NULL;
  g_autofree char *msg = virt_last_message ();
  va_list ap;

  va_start (ap, fmt);
  what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, VPA_ERROR, code, "%s: %s", what, msg);
}

/* A domain XML libvirt refuses is bad input; anything else is the
 * environment (daemon gone, permission denied, ...). */
static VpaErrorCode
virt_define_error_code (void)
{
  switch (virt_last_code ())
    {
    case VIR_ERR_XML_ERROR:
    case VIR_ERR_XML_DETAIL:
    case VIR_ERR_CONFIG_UNSUPPORTED:
    case VIR_ERR_INVALID_ARG:
    case VIR_ERR_OPERATION_INVALID:
    case VIR_ERR_NO_DOMAIN:
      return VPA_ERROR_INVALID;
    default:
      return VPA_ERROR_ENVIRONMENT;
    }
}

/* The connection's canonical URI, or fallback. */
static char *
virt_conn_uri (virConnectPtr conn, const char *fallback)
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

  virt_init ();
  conn = read_only ? virConnectOpenReadOnly (uri) : virConnectOpen (uri);
  if (conn == NULL)
    {
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "cannot connect to '%s'",
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
    if (vpa_addr_same (((VpaClaim *) g_ptr_array_index (claims, i))->addr, addr))
      return TRUE;
  return FALSE;
}

static gboolean
claims_have_numa (GPtrArray *claims, guint from)
{
  for (guint i = from; i < claims->len; i++)
    if (((VpaClaim *) g_ptr_array_index (claims, i))->numa != NULL)
      return TRUE;
  return FALSE;
}

/* Adds the PCI hostdevs of one domain XML not yet claimed since from,
 * and its CPUs and memory (the first XML read of the domain). */
static gboolean
claims_from_xml (const char *xml, const char *name, gboolean running,
                 GPtrArray *claims, guint from, GError **error)
{
  g_autofree char *what = g_strdup_printf ("domain '%s'", name);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (xml, strlen (xml), what, error);
  g_autoptr (GArray) devs = NULL;

  if (doc == NULL)
    return FALSE;
  if (!claims_have_numa (claims, from))
    {
      VpaClaim *numa = NULL;
      if (!vpa_xml_numa_claim (xmlDocGetRootElement (doc), name, running, what, &numa, error))
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
  if (virt_last_code () == VIR_ERR_NO_DOMAIN)
    {
      *gone = TRUE;
      return TRUE;
    }
  virt_set_error (error, VPA_ERROR_ENVIRONMENT, "cannot read the XML of domain '%s'",
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
      if (virt_last_code () == VIR_ERR_NO_DOMAIN)
        return TRUE;
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "cannot read the state of domain '%s'",
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

  virt_init ();
  n = virConnectListAllDomains (conn, &doms, 0);
  if (n < 0)
    {
      g_autofree char *uri = virt_conn_uri (conn, NULL);
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot list domains", uri);
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
      if (virt_last_code () == VIR_ERR_NO_NODE_DEVICE)
        return TRUE;
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read node device '%s'",
                      ld->uri, name);
      return FALSE;
    }
  what = g_strdup_printf ("%s: node device '%s'", ld->uri, name);
  doc = vpa_xml_parse_memory (xml, strlen (xml), what, error);
  if (doc == NULL)
    return FALSE;
  if (!vpa_xml_nodedev_parse (xmlDocGetRootElement (doc), ld->uri, &nd, error))
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
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot list node devices", uri);
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
            ok = vpa_xml_capabilities_parse (caps, path, host, error);
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
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read the capabilities", uri);
      return FALSE;
    }
  what = g_strdup_printf ("%s: capabilities", uri);
  doc = vpa_xml_parse_memory (caps, strlen (caps), what, error);
  if (doc == NULL)
    return FALSE;
  return vpa_xml_capabilities_parse (xmlDocGetRootElement (doc), uri, host, error);
}

VpaHost *
vpa_virt_load_host (virConnectPtr conn, const char *uri, GError **error)
{
  g_autofree char *name = virt_conn_uri (conn, uri);
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;

  g_return_val_if_fail (conn != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  virt_init ();
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

/* ------------------------------------------------------------------ */
/* The define lock                                                     */
/* ------------------------------------------------------------------ */

struct _VpaVirtLock {
  int fd;
  char *path;
};

/* A connection to a privileged daemon (".../system") is one resource
 * for everyone allowed on it: root and the members of libvirt's group
 * must take the same lock, named by the URI alone. Its file lives where
 * only root can create one, libvirt's own run directory, so no other
 * user can hold it or put something else in its place; root creates it,
 * the group's members open it read-only. Other connections (a session,
 * the test driver) belong to one user: a directory of their own. */
#define VPA_VIRT_SYSTEM_LOCK_DIR "/run/libvirt"

static gboolean
uri_is_system (const char *canonical_uri)
{
  g_autoptr (GUri) uri = g_uri_parse (canonical_uri, G_URI_FLAGS_NONE, NULL);

  return uri != NULL && g_strcmp0 (g_uri_get_path (uri), "/system") == 0;
}

/* $XDG_RUNTIME_DIR (the user's, mode 0700), else the user's cache
 * directory under their home: never a directory others can write. */
static char *
private_lock_dir (void)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");

  if (runtime != NULL && g_path_is_absolute (runtime))
    return g_build_filename (runtime, "virt-pci-affinity", NULL);
  return g_build_filename (g_get_user_cache_dir (), "virt-pci-affinity", NULL);
}

char *
vpa_virt_lock_path (const char *canonical_uri)
{
  g_autofree char *sum = NULL;
  g_autofree char *readable = NULL;
  g_autofree char *dir = NULL;

  g_return_val_if_fail (canonical_uri != NULL, NULL);

  sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, canonical_uri, -1);
  readable = g_strndup (canonical_uri, 48);
  g_strcanon (readable, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "-", '_');
  if (uri_is_system (canonical_uri))
    return g_strdup_printf (VPA_VIRT_SYSTEM_LOCK_DIR "/virt-pci-affinity-define-%s-%.16s.lock",
                            readable, sum);
  dir = private_lock_dir ();
  return g_strdup_printf ("%s/define-%s-%.16s.lock", dir, readable, sum);
}

/* The lock's directory, created if missing (0755 for root's system
 * directory, 0700 for a user's): a directory, no link, owned by owner
 * and writable by nobody else, or whoever can write it could hold the
 * lock or swap the file under us. */
static gboolean
lock_dir_ensure (const char *dir, uid_t owner, GError **error)
{
  struct stat st;

  if (g_mkdir_with_parents (dir, owner == 0 ? 0755 : 0700) < 0 && errno != EACCES)
    {
      int saved = errno;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "cannot create the define lock's directory '%s': %s", dir, g_strerror (saved));
      return FALSE;
    }
  if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != owner)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "the define lock's directory '%s' is not a directory owned by uid %u",
                   dir, (guint) owner);
      return FALSE;
    }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "the define lock's directory '%s' is writable by others (mode %04o): "
                   "they could hold or replace the lock",
                   dir, (guint) (st.st_mode & 07777));
      return FALSE;
    }
  return TRUE;
}

static int
lock_refuse (int fd, GError **error, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static int
lock_refuse (int fd, GError **error, const char *fmt, ...)
{
  g_autofree char *message = NULL;
  va_list ap;

  if (fd >= 0)
    close (fd);
  va_start (ap, fmt);
  message = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, message);
  return -1;
}

/* Opens the lock file: read-write, created 0644 (so that libvirt's
 * group can lock root's file too), else read-only when the user cannot
 * write it (flock needs no write access). Never through a link, never
 * blocking on a FIFO; only a regular file owned by owner. */
static int
lock_open (const char *path, uid_t owner, GError **error)
{
  const int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  struct stat st;
  int fd = open (path, O_RDWR | O_CREAT | flags, 0644);

  if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
    fd = open (path, O_RDONLY | flags);
  if (fd < 0)
    {
      int saved = errno;
      if (lstat (path, &st) == 0 && !S_ISREG (st.st_mode))
        return lock_refuse (-1, error, "the define lock '%s' is %s, not a regular file", path,
                            vpa_file_kind (st.st_mode));
      if (saved == ENOENT && owner == 0)
        return lock_refuse (-1, error,
                            "the define lock '%s' does not exist, and only root can create it: "
                            "run one define or attach as root first",
                            path);
      return lock_refuse (-1, error, "cannot open the define lock '%s': %s", path,
                          g_strerror (saved));
    }
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return lock_refuse (fd, error, "the define lock '%s' is %s, not a regular file", path,
                        vpa_file_kind (st.st_mode));
  if (st.st_uid != owner)
    return lock_refuse (fd, error,
                        "the define lock '%s' is owned by uid %u, not uid %u: its owner could "
                        "hold it for ever",
                        path, (guint) st.st_uid, (guint) owner);
  return fd;
}

/* TRUE if path still names the file fd locked (its owner may have
 * replaced it in the shared directory). */
static gboolean
lock_is_current (int fd, const char *path)
{
  struct stat a, b;

  return fstat (fd, &a) == 0 && lstat (path, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

/* The pid the holder wrote, for the timeout message; 0 if unknown. */
static gint64
lock_holder (int fd)
{
  char buf[32] = { 0 };
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);

  if (n <= 0)
    return 0;
  return g_ascii_strtoll (buf, NULL, 10);
}

static void
lock_write_pid (int fd)
{
  g_autofree char *pid = g_strdup_printf ("%d\n", (int) getpid ());

  /* Diagnostics only: a failure here must not fail the define. */
  if (ftruncate (fd, 0) == 0 && pwrite (fd, pid, strlen (pid), 0) < 0)
    return;
}

/* Polls with a growing back-off: flock has no timeout of its own, and a
 * holder killed by SIGKILL releases it when its fd closes. */
static gboolean
lock_wait (int fd, const char *path, const char *uri, guint timeout_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gulong pause_us = 1000;

  while (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      int saved = errno;
      gint64 now;

      if (saved == EINTR)
        continue;
      if (saved != EWOULDBLOCK)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "cannot lock '%s' for '%s': %s", path, uri, g_strerror (saved));
          return FALSE;
        }
      now = g_get_monotonic_time ();
      if (now >= deadline)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "timed out after %u ms waiting for the define lock '%s' on '%s' (held by pid %" G_GINT64_FORMAT ")",
                       timeout_ms, path, uri, lock_holder (fd));
          return FALSE;
        }
      g_usleep (MIN ((gint64) pause_us, deadline - now));
      pause_us = MIN (pause_us * 2, 20000);
    }
  return TRUE;
}

VpaVirtLock *
vpa_virt_lock_acquire (virConnectPtr conn, const char *uri, guint timeout_ms,
                       GError **error)
{
  g_autofree char *canonical = NULL;
  g_autofree char *path = NULL;
  g_autofree char *dir = NULL;
  VpaVirtLock *lock;
  uid_t owner;
  int fd;

  g_return_val_if_fail (conn != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* The canonical URI, so "qemu:///system" and the default URI share a lock. */
  canonical = virt_conn_uri (conn, uri);
  path = vpa_virt_lock_path (canonical);
  dir = g_path_get_dirname (path);
  owner = uri_is_system (canonical) ? 0 : geteuid ();
  if (!lock_dir_ensure (dir, owner, error))
    return NULL;
  for (;;)
    {
      if ((fd = lock_open (path, owner, error)) < 0)
        return NULL;
      if (!lock_wait (fd, path, canonical, timeout_ms, error))
        {
          close (fd);
          return NULL;
        }
      if (lock_is_current (fd, path))
        break;
      close (fd);
    }
  lock_write_pid (fd);
  lock = g_new0 (VpaVirtLock, 1);
  lock->fd = fd;
  lock->path = g_steal_pointer (&path);
  return lock;
}

void
vpa_virt_lock_release (VpaVirtLock *lock)
{
  if (lock == NULL)
    return;
  /* Leave the file: unlinking a lock file races with the next opener. */
  close (lock->fd);
  g_free (lock->path);
  g_free (lock);
}

/* ------------------------------------------------------------------ */
/* Define and attach                                                   */
/* ------------------------------------------------------------------ */

/* Appends addr to addrs; an address used twice is bad input. */
static gboolean
add_addr (GArray *addrs, VpaAddr addr, const char *what, GError **error)
{
  for (guint i = 0; i < addrs->len; i++)
    if (g_array_index (addrs, VpaAddr, i) == addr)
      {
        char buf[VPA_ADDR_BUFLEN];
        g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                     "%s: device '%s' is used twice", what, vpa_addr_format (addr, buf));
        return FALSE;
      }
  g_array_append_val (addrs, addr);
  return TRUE;
}

/* Appends the PCI addresses of node: a <domain>'s devices (whole_domain)
 * or one device element; an address used twice is bad input. */
static gboolean
collect_addrs (xmlNode *node, gboolean whole_domain, const char *what, GArray *addrs,
               GError **error)
{
  g_autoptr (GArray) devs = NULL;

  if (!whole_domain)
    {
      gboolean is_pci;
      VpaAddr addr;

      if (!vpa_xml_hostdev_address (node, what, &is_pci, &addr, error))
        return FALSE;
      return !is_pci || addr == VPA_ADDR_NONE || add_addr (addrs, addr, what, error);
    }
  if ((devs = vpa_xml_domain_pci_devices (node, what, VPA_XML_PCI_STRICT, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < devs->len; i++)
    {
      VpaAddr addr = g_array_index (devs, VpaXmlPciDevice, i).addr;
      if (addr != VPA_ADDR_NONE && !add_addr (addrs, addr, what, error))
        return FALSE;
    }
  return TRUE;
}

/* The name and PCI addresses of a placed domain XML. */
static gboolean
placed_domain_parse (const char *xml, const char *uri, char **name, GArray *addrs,
                     GArray *cpus, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: placed domain", uri);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (xml, strlen (xml), what, error);
  xmlNode *root, *name_node;

  if (doc == NULL)
    return FALSE;
  root = xmlDocGetRootElement (doc);
  name_node = vpa_xml_is (root, "domain", NULL) ? vpa_xml_child (root, "name", NULL) : NULL;
  *name = name_node != NULL ? vpa_xml_name (name_node) : NULL;
  if (*name == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <domain><name> missing", what);
      return FALSE;
    }
  g_free (what);
  what = g_strdup_printf ("%s: domain '%s'", uri, *name);
  if (cpus != NULL)
    {
      g_autoptr (VpaClaim) numa = NULL;
      if (!vpa_xml_numa_claim (root, *name, FALSE, what, &numa, error))
        return FALSE;
      if (numa != NULL)
        g_array_append_vals (cpus, numa->numa->dedicated->data, numa->numa->dedicated->len);
    }
  return collect_addrs (root, TRUE, what, addrs, error);
}

/* TRUE if a and b cannot be held by two domains: the same function, or
 * a VF and its PF (needs the inventory to know the relation). */
static gboolean
addrs_conflict (const VpaHost *inventory, VpaAddr a, VpaAddr b)
{
  gint ia, ib;

  if (vpa_addr_same (a, b))
    return TRUE;
  if (inventory == NULL)
    return FALSE;
  ia = vpa_host_lookup (inventory, a);
  ib = vpa_host_lookup (inventory, b);
  if (ia >= 0 && vpa_addr_same (vpa_host_device (inventory, ia)->parent_addr, b))
    return TRUE;
  return ib >= 0 && vpa_addr_same (vpa_host_device (inventory, ib)->parent_addr, a);
}

/* The first claim of another domain that conflicts with addrs, or NULL. */
static const VpaClaim *
find_conflict (GPtrArray *claims, const char *name, GArray *addrs,
               const VpaHost *inventory, VpaAddr *mine)
{
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *claim = g_ptr_array_index (claims, i);

      /* A redefined domain's own old claims do not count against it. */
      if (strcmp (claim->domain, name) == 0)
        continue;
      for (guint j = 0; j < addrs->len; j++)
        if (addrs_conflict (inventory, g_array_index (addrs, VpaAddr, j), claim->addr))
          {
            *mine = g_array_index (addrs, VpaAddr, j);
            return claim;
          }
    }
  return NULL;
}

/* The dedicated CPUs of the defined domain another domain also pins:
 * two defines never get the same dedicated CPU. */
static gboolean
check_cpus_unclaimed (GPtrArray *claims, const char *uri, const char *name, GArray *cpus,
                      const char *when, GError **error)
{
  for (guint i = 0; cpus != NULL && i < claims->len; i++)
    {
      const VpaClaim *claim = g_ptr_array_index (claims, i);

      if (claim->numa == NULL || strcmp (claim->domain, name) == 0)
        continue;
      for (guint k = 0; k < cpus->len; k++)
        if (vpa_numa_use_holds (claim->numa, g_array_index (cpus, guint, k)))
          {
            g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "%s: dedicated CPU %u for domain '%s' is pinned by domain '%s'%s", uri, g_array_index (cpus, guint, k), name, claim->domain, when);
            return FALSE;
          }
    }
  return TRUE;
}

static gboolean
check_unclaimed (GPtrArray *claims, const char *uri, const char *name, GArray *addrs,
                 GArray *cpus, const VpaHost *inventory, const char *when, GError **error)
{
  VpaAddr mine = VPA_ADDR_NONE;
  const VpaClaim *claim = find_conflict (claims, name, addrs, inventory, &mine);
  char buf[VPA_ADDR_BUFLEN], other[VPA_ADDR_BUFLEN];

  if (claim == NULL)
    return check_cpus_unclaimed (claims, uri, name, cpus, when, error);
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
               "%s: device '%s' for domain '%s' conflicts with device '%s' held by domain '%s'%s",
               uri, vpa_addr_format (mine, buf), name, vpa_addr_format (claim->addr, other),
               claim->domain, when);
  return FALSE;
}

/* Takes the define lock of conn; a NULL *uri becomes the connection's
 * canonical URI (owned by *canonical). */
static VpaVirtLock *
lock_for_change (virConnectPtr conn, const char **uri, char **canonical, GError **error)
{
  virt_init ();
  *canonical = virt_conn_uri (conn, *uri);
  if (*uri == NULL)
    *uri = *canonical;
  return vpa_virt_lock_acquire (conn, *uri, VPA_VIRT_LOCK_TIMEOUT_MS, error);
}

/* Under the lock: loads the claims into *claims, runs place on them and
 * returns its XML; error if place returned NULL without setting one. */
static char *
run_place (virConnectPtr conn, VpaVirtPlaceFunc place, gpointer user_data,
           GPtrArray **claims, const char *uri, GError **error)
{
  GError *place_error = NULL;
  char *xml;

  if ((*claims = vpa_virt_load_claims (conn, error)) == NULL)
    return NULL;
  xml = place (*claims, user_data, &place_error);

  if (xml != NULL)
    {
      g_clear_error (&place_error);
      /* cppcheck-suppress returnDanglingLifetime ; xml is the callback's, not &place_error */
      return xml;
    }
  if (place_error == NULL)
    g_set_error (&place_error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                 "%s: placement produced no XML", uri);
  g_propagate_error (error, place_error);
  return NULL;
}

#define VPA_VIRT_BYPASS_NOTE " (defined meanwhile without the define lock)"

/* After the change, with *claims reloaded: a define that bypassed the
 * lock may have taken one of addrs. */
static gboolean
recheck_unclaimed (virConnectPtr conn, const char *uri, const char *name, GArray *addrs,
                   GArray *cpus, const VpaHost *inventory, GPtrArray **claims, GError **error)
{
  g_clear_pointer (claims, g_ptr_array_unref);
  *claims = vpa_virt_load_claims (conn, error);
  return *claims != NULL &&
         check_unclaimed (*claims, uri, name, addrs, cpus, inventory, VPA_VIRT_BYPASS_NOTE, error);
}

/* What a define replaced, to undo it. */
typedef struct {
  gboolean persistent; /* a persistent definition of that name existed */
  char *xml;           /* its inactive XML */
} PrevDef;

static gboolean
previous_definition (virConnectPtr conn, const char *uri, const char *name, PrevDef *prev,
                     GError **error)
{
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, name);
  int persistent;

  if (dom == NULL)
    {
      if (virt_last_code () == VIR_ERR_NO_DOMAIN)
        return TRUE;
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot look up domain '%s'", uri, name);
      return FALSE;
    }
  persistent = virDomainIsPersistent (dom);
  if (persistent == 1)
    prev->xml = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
  if (persistent < 0 || (persistent == 1 && prev->xml == NULL))
    {
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read domain '%s'", uri, name);
      return FALSE;
    }
  prev->persistent = persistent == 1;
  return TRUE;
}

static void
append_message (GError *error, const char *suffix)
{
  char *old;

  if (error == NULL)
    return;
  old = error->message;
  error->message = g_strconcat (old, suffix, NULL);
  g_free (old);
}

/* Restores what was there before our define: the replaced persistent
 * definition, or nothing (a new domain, or one that was transient). */
static void
rollback_define (virConnectPtr conn, virDomainPtr dom, const PrevDef *prev, GError *error)
{
  g_autofree char *msg = NULL;
  gboolean ok;

  if (prev->persistent)
    {
      g_autoptr (virDomain) restored = virDomainDefineXML (conn, prev->xml);
      ok = restored != NULL;
    }
  else
    {
      /* A new definition has no NVRAM file yet; keep any that exists. */
      ok = virDomainUndefineFlags (dom, VIR_DOMAIN_UNDEFINE_KEEP_NVRAM) == 0;
      if (!ok && (virt_last_code () == VIR_ERR_INVALID_ARG ||
                  virt_last_code () == VIR_ERR_NO_SUPPORT))
        ok = virDomainUndefine (dom) == 0;
    }
  if (ok)
    {
      append_message (error, prev->persistent ? "; the previous definition was restored"
                                              : "; the new definition was undefined");
      return;
    }
  msg = virt_last_message ();
  append_message (error, "; rolling back failed: ");
  append_message (error, msg);
}

gboolean
vpa_virt_define_placed_full (virConnectPtr conn, const char *uri, const VpaHost *inventory,
                             VpaVirtPlaceFunc place, gpointer user_data, char **out_name,
                             GError **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr (VpaVirtLock) lock = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (virDomain) dom = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *name = NULL;
  g_autofree char *prev_xml = NULL;
  PrevDef prev = { 0 };
  gboolean ok;

  g_return_val_if_fail (conn != NULL, FALSE);
  g_return_val_if_fail (place != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((lock = lock_for_change (conn, &uri, &canonical, error)) == NULL)
    return FALSE;
  if ((xml = run_place (conn, place, user_data, &claims, uri, error)) == NULL)
    return FALSE;
  if (!placed_domain_parse (xml, uri, &name, addrs, cpus, error) ||
      !check_unclaimed (claims, uri, name, addrs, cpus, inventory, "", error))
    return FALSE;
  ok = previous_definition (conn, uri, name, &prev, error);
  prev_xml = prev.xml;
  if (!ok)
    return FALSE;

  dom = virDomainDefineXML (conn, xml);
  if (dom == NULL)
    {
      virt_set_error (error, virt_define_error_code (), "%s: cannot define domain '%s'", uri,
                      name);
      return FALSE;
    }

  if (!recheck_unclaimed (conn, uri, name, addrs, cpus, inventory, &claims, error))
    {
      rollback_define (conn, dom, &prev, error != NULL ? *error : NULL);
      return FALSE;
    }
  if (out_name != NULL)
    *out_name = g_steal_pointer (&name);
  return TRUE;
}

gboolean
vpa_virt_define_placed (virConnectPtr conn, const char *uri, VpaVirtPlaceFunc place,
                        gpointer user_data, char **out_name, GError **error)
{
  return vpa_virt_define_placed_full (conn, uri, NULL, place, user_data, out_name, error);
}

/* The one PCI address of a placed device element. */
static gboolean
placed_device_parse (const char *xml, const char *uri, const char *domain, GArray *addrs,
                     GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: device for domain '%s'", uri, domain);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (xml, strlen (xml), what, error);

  if (doc == NULL || !collect_addrs (xmlDocGetRootElement (doc), FALSE, what, addrs, error))
    return FALSE;
  if (addrs->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: not a PCI <hostdev> or <interface type='hostdev'> with a source address",
                   what);
      return FALSE;
    }
  return TRUE;
}

static void
rollback_attach (virDomainPtr dom, const char *xml, guint flags, GError *error)
{
  g_autofree char *msg = NULL;

  if (virDomainDetachDeviceFlags (dom, xml, flags) == 0)
    {
      append_message (error, "; the device was detached again");
      return;
    }
  msg = virt_last_message ();
  append_message (error, "; detaching it again failed: ");
  append_message (error, msg);
}

/* run_place for an attach: the callback also fills the records. */
typedef struct {
  VpaVirtAttachFunc place;
  gpointer user_data;
  VpaAttachRecord *record;
} AttachPlace;

static char *
attach_place (GPtrArray *claims, gpointer user_data, GError **error)
{
  AttachPlace *ap = user_data;
  return ap->place (claims, ap->user_data, ap->record, error);
}

/* The persistent definition, defined again with the device and its
 * records; prev receives the one it replaces. */
static gboolean
attach_config (virConnectPtr conn, const char *uri, const char *domain, const char *device,
               const VpaAttachRecord *rec, PrevDef *prev, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: domain '%s'", uri, domain);
  g_autofree char *xml = NULL;
  g_autoptr (virDomain) defined = NULL;

  if (!previous_definition (conn, uri, domain, prev, error))
    return FALSE;
  if (!prev->persistent)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: domain '%s' is transient: it has no persistent definition to attach to", uri, domain);
      return FALSE;
    }
  if ((xml = vpa_attach_domain (prev->xml, strlen (prev->xml), what, device, rec, error)) == NULL)
    return FALSE;
  if ((defined = virDomainDefineXML (conn, xml)) == NULL)
    {
      /* The device XML is ours: libvirt refusing it (not running, no
       * hot-plug, no free slot) is the host's state, not bad input. */
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot attach to domain '%s'", uri,
                      domain);
      return FALSE;
    }
  return TRUE;
}

/* The running domain: the device hot-plugged, its records added to the
 * live <vpa:affinity> (the device detached again when that fails). */
static gboolean
attach_live (virDomainPtr dom, const char *uri, const char *domain, const char *device,
             const VpaAttachRecord *rec, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: domain '%s'", uri, domain);
  g_autofree char *cur = virDomainGetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, VPA_XMLNS,
                                               VIR_DOMAIN_AFFECT_LIVE);
  g_autofree char *affinity = NULL;

  if (cur == NULL && virt_last_code () != VIR_ERR_NO_DOMAIN_METADATA)
    {
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read the metadata of domain '%s'",
                      uri, domain);
      return FALSE;
    }
  if ((affinity = vpa_attach_affinity (cur, what, rec, error)) == NULL)
    return FALSE;
  if (virDomainAttachDeviceFlags (dom, device, VIR_DOMAIN_AFFECT_LIVE) < 0)
    {
      /* The device XML is ours: libvirt refusing it (not running, no
       * hot-plug, no free slot) is the host's state, not bad input. */
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot attach to domain '%s'", uri,
                      domain);
      return FALSE;
    }
  if (virDomainSetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, affinity, "vpa", VPA_XMLNS,
                            VIR_DOMAIN_AFFECT_LIVE) < 0)
    {
      virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot record port '%s' in the metadata of domain '%s'", uri, rec->device, domain);
      rollback_attach (dom, device, VIR_DOMAIN_AFFECT_LIVE, error != NULL ? *error : NULL);
      return FALSE;
    }
  return TRUE;
}

/* VIR_DOMAIN_AFFECT_CURRENT as libvirt reads it: the running domain, or
 * the persistent definition of one that is not running. */
static guint
attach_flags (virDomainPtr dom, guint flags)
{
  if ((flags & (VIR_DOMAIN_AFFECT_LIVE | VIR_DOMAIN_AFFECT_CONFIG)) != 0)
    return flags;
  return virDomainIsActive (dom) == 1 ? VIR_DOMAIN_AFFECT_LIVE : VIR_DOMAIN_AFFECT_CONFIG;
}

/* Undoes attach_live and attach_config after a failed verification. */
static void
rollback_attached (virConnectPtr conn, virDomainPtr dom, const char *device, guint flags,
                   const PrevDef *prev, GError *error)
{
  if (flags & VIR_DOMAIN_AFFECT_LIVE)
    rollback_attach (dom, device, VIR_DOMAIN_AFFECT_LIVE, error);
  if (flags & VIR_DOMAIN_AFFECT_CONFIG)
    rollback_define (conn, dom, prev, error);
}

static gboolean
attach_both (virConnectPtr conn, virDomainPtr dom, const char *uri, const char *domain,
             const char *device, const VpaAttachRecord *rec, guint flags, PrevDef *prev,
             GError **error)
{
  if ((flags & VIR_DOMAIN_AFFECT_LIVE) && !attach_live (dom, uri, domain, device, rec, error))
    return FALSE;
  if ((flags & VIR_DOMAIN_AFFECT_CONFIG) &&
      !attach_config (conn, uri, domain, device, rec, prev, error))
    {
      if (flags & VIR_DOMAIN_AFFECT_LIVE)
        rollback_attach (dom, device, VIR_DOMAIN_AFFECT_LIVE, error != NULL ? *error : NULL);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_virt_attach (virConnectPtr conn, const char *uri, const char *domain, guint flags,
                 const VpaHost *inventory, VpaVirtAttachFunc place, gpointer user_data,
                 VpaAddr *out_addr, GError **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr (VpaVirtLock) lock = NULL;
  g_autoptr (virDomain) dom = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  g_autofree char *xml = NULL;
  g_autofree char *prev_xml = NULL;
  g_auto (VpaAttachRecord) rec = { .numa_node = VPA_NUMA_NONE };
  AttachPlace ap = { place, user_data, &rec };
  PrevDef prev = { 0 };
  gboolean ok;

  g_return_val_if_fail (conn != NULL, FALSE);
  g_return_val_if_fail (domain != NULL, FALSE);
  g_return_val_if_fail (place != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((lock = lock_for_change (conn, &uri, &canonical, error)) == NULL)
    return FALSE;
  dom = virDomainLookupByName (conn, domain);
  if (dom == NULL)
    {
      virt_set_error (error, virt_define_error_code (), "%s: cannot find domain '%s'", uri,
                      domain);
      return FALSE;
    }
  if ((xml = run_place (conn, attach_place, &ap, &claims, uri, error)) == NULL)
    return FALSE;
  if (!placed_device_parse (xml, uri, domain, addrs, error) ||
      !check_unclaimed (claims, uri, domain, addrs, NULL, inventory, "", error))
    return FALSE;
  flags = attach_flags (dom, flags);
  ok = attach_both (conn, dom, uri, domain, xml, &rec, flags, &prev, error);
  prev_xml = prev.xml;
  if (!ok)
    return FALSE;
  if (!recheck_unclaimed (conn, uri, domain, addrs, NULL, inventory, &claims, error))
    {
      rollback_attached (conn, dom, xml, flags, &prev, error != NULL ? *error : NULL);
      return FALSE;
    }
  if (out_addr != NULL)
    *out_addr = g_array_index (addrs, VpaAddr, 0);
  return TRUE;
}
