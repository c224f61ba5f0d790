/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host snapshots: libvirt's test-driver format (root <node>, <device>
 * children as `virsh nodedev-dumpxml` prints them, optional <domain>
 * children whose PCI hostdevs are claims) plus one <capabilities> child
 * holding `virsh capabilities` output, which the test driver ignores.
 *
 * A snapshot can hold tens of thousands of devices (17 MiB), so it is
 * streamed with xmlTextReader: one top-level child is expanded into a
 * small tree, turned into structs, and freed before the next is read.
 */
#include "vpa-snapshot.h"
#include "vpa-capabilities.h"
#include "vpa-nodedev.h"
#include "vpa-pcie.h"
#include "vpa-xml.h"

#include <errno.h>
#include <fcntl.h>
#include <libxml/xmlreader.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* libvirt's test driver namespace, and its VIR_DOMAIN_SHUTOFF run state. */
#define TEST_NS "http://libvirt.org/schemas/domain/test/1.0"
#define TEST_RUNSTATE_SHUTOFF 5

G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlTextReader, xmlFreeTextReader)

typedef struct {
  char *parent; /* the net device's <parent> nodedev name */
  char *ifname;
} NetLink;

typedef struct {
  const char *what;
  VpaHost *host;
  GArray *nets;           /* NetLink */
  GHashTable *odd_names;  /* PCI nodedev names not of the pci_DDDD_BB_SS_F form */
  GPtrArray *odd_parents; /* VpaDevice*, parent name pairs: <parent> of another form */
  gboolean have_caps;
  GError *xml_error; /* the first error libxml2 reported */
} SnapshotReader;

static void
net_link_clear (gpointer data)
{
  NetLink *link = data;
  g_free (link->parent);
  g_free (link->ifname);
}

static void
snapshot_reader_clear (SnapshotReader *r)
{
  g_clear_pointer (&r->host, vpa_host_free);
  g_clear_pointer (&r->nets, g_array_unref);
  g_clear_pointer (&r->odd_names, g_hash_table_unref);
  for (guint i = 1; r->odd_parents != NULL && i < r->odd_parents->len; i += 2)
    g_free (r->odd_parents->pdata[i]);
  g_clear_pointer (&r->odd_parents, g_ptr_array_unref);
  g_clear_error (&r->xml_error);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SnapshotReader, snapshot_reader_clear)

static void
reader_error (void *arg, xmlErrorPtr err)
{
  SnapshotReader *r = arg;
  g_autofree char *msg = NULL;

  if (r->xml_error != NULL || err == NULL || err->level < XML_ERR_ERROR)
    return;
  msg = g_strdup (err->message != NULL ? err->message : "not well-formed");
  g_strchomp (msg);
  g_set_error (&r->xml_error, VPA_ERROR, VPA_ERROR_INVALID, "%s:%d: malformed XML: %s",
               r->what, err->line, msg);
}

static void
canonical_name (VpaAddr addr, char buf[32])
{
  g_snprintf (buf, 32, "pci_%04x_%02x_%02x_%x", VPA_ADDR_DOMAIN (addr),
              VPA_ADDR_BUS (addr), VPA_ADDR_SLOT (addr), VPA_ADDR_FUNCTION (addr));
}

/* libvirt names PCI node devices after their address; only names that
 * differ need remembering to attach net children to them. */
static void
add_pci (SnapshotReader *r, VpaNodedev *nd)
{
  char buf[32];
  VpaDevice *dev = g_steal_pointer (&nd->pci);

  if (nd->parent != NULL && dev->pcie_parent == VPA_ADDR_NONE &&
      strcmp (nd->parent, "computer") != 0)
    {
      if (r->odd_parents == NULL)
        r->odd_parents = g_ptr_array_new ();
      g_ptr_array_add (r->odd_parents, dev);
      g_ptr_array_add (r->odd_parents, g_steal_pointer (&nd->parent));
    }
  canonical_name (dev->addr, buf);
  if (strcmp (buf, nd->name) != 0)
    {
      if (r->odd_names == NULL)
        r->odd_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_insert (r->odd_names, g_steal_pointer (&nd->name), dev);
    }
  vpa_host_add_device (r->host, dev);
}

static gboolean
handle_device (SnapshotReader *r, xmlNode *node, GError **error)
{
  VpaNodedev nd;

  if (!vpa_nodedev_parse (node, r->what, &nd, error))
    return FALSE;
  if (nd.kind == VPA_NODEDEV_PCI)
    {
      add_pci (r, &nd);
    }
  else if (nd.kind == VPA_NODEDEV_NET && nd.parent != NULL)
    {
      NetLink link = { g_steal_pointer (&nd.parent), g_steal_pointer (&nd.interface) };
      g_array_append_val (r->nets, link);
    }
  vpa_nodedev_clear (&nd);
  return TRUE;
}

/* The test driver starts every domain of its file unless <test:runstate>
 * says shut off (testParseDomains). */
static gboolean
domain_running (SnapshotReader *r, xmlNode *dom, const char *name, gboolean *running,
                GError **error)
{
  xmlNode *rs = vpa_xml_child (dom, "runstate", TEST_NS);
  g_autofree char *s = NULL;
  guint64 v;

  *running = TRUE;
  if (rs == NULL)
    return TRUE;
  s = vpa_xml_text (rs);
  if (s == NULL || !g_ascii_string_to_unsigned (s, 10, 0, 7, &v, NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: domain '%s': <test:runstate> '%s' is not a domain state (0-7)",
                   r->what, name, s != NULL ? s : "");
      return FALSE;
    }
  *running = v != TEST_RUNSTATE_SHUTOFF;
  return TRUE;
}

static gboolean
handle_domain (SnapshotReader *r, xmlNode *dom, GError **error)
{
  xmlNode *c = vpa_xml_child (dom, "name", NULL);
  g_autofree char *name = c != NULL ? vpa_xml_name (c) : NULL;
  g_autofree char *what = NULL;
  VpaClaim *numa = NULL;
  g_autoptr (GArray) devs = NULL;
  gboolean running;

  if (name == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <domain> at line %ld has no <name>", r->what, xmlGetLineNo (dom));
      return FALSE;
    }
  if (!domain_running (r, dom, name, &running, error))
    return FALSE;
  what = g_strdup_printf ("%s: domain '%s'", r->what, name);
  if (!vpa_numa_claim (dom, name, running, what, &numa, error))
    return FALSE;
  if (numa != NULL)
    vpa_host_add_claim (r->host, numa);
  if ((devs = vpa_xml_domain_pci_devices (dom, what, VPA_XML_PCI_STRICT, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < devs->len; i++)
    {
      VpaAddr addr = g_array_index (devs, VpaXmlPciDevice, i).addr;
      if (addr != VPA_ADDR_NONE)
        vpa_host_add_claim (r->host, vpa_claim_new (name, addr, running));
    }
  return TRUE;
}

static gboolean
handle_child (SnapshotReader *r, xmlNode *node, GError **error)
{
  g_autofree char *file = vpa_xml_prop (node, "file");

  /* The test driver can pull children from other files; a snapshot is
   * one self-contained file, and following paths from it is not our
   * business. */
  if (file != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <%s file='%s'> at line %ld: references to other files are not supported in a snapshot",
                   r->what, (const char *) node->name, file, xmlGetLineNo (node));
      return FALSE;
    }
  if (vpa_xml_is (node, "device", NULL))
    return handle_device (r, node, error);
  if (vpa_xml_is (node, "domain", NULL))
    return handle_domain (r, node, error);
  if (vpa_xml_is (node, "capabilities", NULL))
    {
      if (r->have_caps)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <capabilities> at line %ld: a snapshot holds only one",
                       r->what, xmlGetLineNo (node));
          return FALSE;
        }
      r->have_caps = TRUE;
      return vpa_capabilities_parse (node, r->what, r->host, error);
    }
  /* The test driver's other children (<cpu>, <network>, <pool>...) carry
   * nothing we use. */
  return TRUE;
}

/* A net child's <parent> names a PCI device: pci_DDDD_BB_SS_F, or a name
 * remembered in odd_names. */
static VpaDevice *
find_pci_parent (SnapshotReader *r, const char *parent)
{
  guint d, b, s, f;
  char buf[32];
  gint i;
  VpaAddr addr;

  if (r->odd_names != NULL)
    {
      VpaDevice *dev = g_hash_table_lookup (r->odd_names, parent);
      if (dev != NULL)
        return dev;
    }
  /* Field widths bound every value; the round trip below refuses the rest. */
  if (sscanf (parent, "pci_%4x_%2x_%2x_%1x", &d, &b, &s, &f) != 4) /* NOLINT(cert-err34-c) */
    return NULL;
  addr = VPA_ADDR (d, b, s, f);
  canonical_name (addr, buf);
  if (strcmp (buf, parent) != 0)
    return NULL;
  i = vpa_host_lookup (r->host, addr);
  return i < 0 ? NULL : vpa_host_device (r->host, (guint) i);
}

/* A <parent> naming a PCI device by another name than its address:
 * the device of that name, if the snapshot has one (a parent that is no
 * PCI device leaves the device on a root bus). */
static void
resolve_odd_parents (SnapshotReader *r)
{
  for (guint i = 0; r->odd_parents != NULL && i + 1 < r->odd_parents->len; i += 2)
    {
      VpaDevice *dev = r->odd_parents->pdata[i];
      VpaDevice *parent =
        r->odd_names != NULL ? g_hash_table_lookup (r->odd_names, r->odd_parents->pdata[i + 1])
                             : NULL;
      if (parent != NULL)
        dev->pcie_parent = parent->addr;
    }
}

/* Net devices give their PCI parent its netdev; several (rare) keep the
 * smallest name, as the sysfs reader does, so both agree. */
static void
attach_netdevs (SnapshotReader *r)
{
  for (guint i = 0; i < r->nets->len; i++)
    {
      NetLink *link = &g_array_index (r->nets, NetLink, i);
      VpaDevice *dev = find_pci_parent (r, link->parent);

      if (dev == NULL)
        continue;
      if (dev->netdev == NULL || strcmp (link->ifname, dev->netdev) < 0)
        {
          g_free (dev->netdev);
          dev->netdev = g_steal_pointer (&link->ifname);
        }
    }
}

static gboolean
check_special_node (SnapshotReader *r, int type, GError **error)
{
  if (type == XML_READER_TYPE_DOCUMENT_TYPE || type == XML_READER_TYPE_ENTITY ||
      type == XML_READER_TYPE_ENTITY_REFERENCE)
    {
      /* No line: the parser is already past the declaration. */
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: document type declarations and entities are not accepted (entity declarations could expand without bound)",
                   r->what);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_root (SnapshotReader *r, xmlTextReader *reader, GError **error)
{
  const char *name = (const char *) xmlTextReaderConstLocalName (reader);

  if (g_strcmp0 (name, "node") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: root element is <%s>, not <node>: a host snapshot is in libvirt's test driver format",
                   r->what, name != NULL ? name : "");
      return FALSE;
    }
  return TRUE;
}

/* Reads the document: the root, then each of its element children
 * expanded on its own (xmlTextReaderNext frees it again). */
static gboolean
read_document (SnapshotReader *r, xmlTextReader *reader, GError **error)
{
  int ret = xmlTextReaderRead (reader);

  while (ret == 1)
    {
      int type = xmlTextReaderNodeType (reader);
      int depth = xmlTextReaderDepth (reader);

      if (!check_special_node (r, type, error))
        return FALSE;
      if (type == XML_READER_TYPE_ELEMENT && depth == 0 && !check_root (r, reader, error))
        return FALSE;
      if (type == XML_READER_TYPE_ELEMENT && depth == 1)
        {
          xmlNode *node = xmlTextReaderExpand (reader);

          if (node == NULL)
            {
              ret = -1;
              break;
            }
          if (!handle_child (r, node, error))
            return FALSE;
          ret = xmlTextReaderNext (reader);
          continue;
        }
      ret = xmlTextReaderRead (reader);
    }
  if (ret < 0)
    {
      if (r->xml_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&r->xml_error));
        }
      else
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s:%d: malformed XML",
                       r->what, xmlTextReaderGetParserLineNumber (reader));
        }
      return FALSE;
    }
  return TRUE;
}

static VpaHost *
snapshot_read (xmlTextReader *reader, const char *what, GError **error)
{
  g_auto (SnapshotReader) r = { what, vpa_host_new (what), NULL, NULL, NULL, FALSE, NULL };

  r.nets = g_array_new (FALSE, FALSE, sizeof (NetLink));
  g_array_set_clear_func (r.nets, net_link_clear);
  xmlTextReaderSetStructuredErrorHandler (reader, reader_error, &r);

  if (!read_document (&r, reader, error))
    return NULL;
  if (!r.have_caps || r.host->cells->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: no <capabilities> with NUMA cells: a host snapshot needs 'virsh capabilities' output as a <capabilities> child of <node>",
                   what);
      return NULL;
    }
  resolve_odd_parents (&r);
  if (!vpa_host_seal (r.host, error))
    return NULL;
  attach_netdevs (&r);
  return g_steal_pointer (&r.host);
}

VpaHost *
vpa_snapshot_load_memory (const VpaDoc *doc, GError **error)
{
  g_autoptr (xmlTextReader) reader = NULL;

  g_return_val_if_fail (doc != NULL, NULL);
  g_return_val_if_fail (doc->buf != NULL || doc->len == 0, NULL);
  g_return_val_if_fail (doc->what != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (doc->len == 0 || doc->len > G_MAXINT)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s snapshot", doc->what,
                   doc->len == 0 ? "empty" : "oversized");
      return NULL;
    }
  reader = xmlReaderForMemory (doc->buf, (int) doc->len, doc->what, NULL,
                               vpa_xml_parse_options ());
  if (reader == NULL)
    g_error ("out of memory");
  return snapshot_read (reader, doc->what, error);
}

VpaHost *
vpa_snapshot_load (const char *path, GError **error)
{
  g_autoptr (xmlTextReader) reader = NULL;
  struct stat st;
  VpaHost *host;
  int fd;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Opened here rather than by libxml2 to tell a missing file (bad
   * input) from an unreadable one (environment). */
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, VPA_ERROR,
                   e == ENOENT || e == ENOTDIR ? VPA_ERROR_INVALID : VPA_ERROR_ENVIRONMENT,
                   "%s: cannot open snapshot: %s", path, g_strerror (e));
      return NULL;
    }
  if (fstat (fd, &st) == 0 && S_ISDIR (st.st_mode))
    {
      close (fd);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: cannot open snapshot: %s", path, g_strerror (EISDIR));
      return NULL;
    }
  reader = xmlReaderForFd (fd, path, NULL, vpa_xml_parse_options ());
  if (reader == NULL)
    g_error ("out of memory");
  host = snapshot_read (reader, path, error);
  g_clear_pointer (&reader, xmlFreeTextReader);
  close (fd);
  return host;
}

/* ------------------------------------------------------------------ */
/* Writer: the inverse of the reader, loadable by the test driver.     */
/* ------------------------------------------------------------------ */

static void
write_address (FILE *out, const char *indent, VpaAddr addr)
{
  fprintf (out, "%s<address domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>\n",
           indent, VPA_ADDR_DOMAIN (addr), VPA_ADDR_BUS (addr), VPA_ADDR_SLOT (addr),
           VPA_ADDR_FUNCTION (addr));
}

static void
write_function_caps (FILE *out, const VpaHost *host, const VpaDevice *dev)
{
  if (dev->dev_type == VPA_DEV_TYPE_VF && dev->parent_addr != VPA_ADDR_NONE)
    {
      fprintf (out, "      <capability type='phys_function'>\n");
      write_address (out, "        ", dev->parent_addr);
      fprintf (out, "      </capability>\n");
    }
  else if (dev->dev_type == VPA_DEV_TYPE_PF)
    {
      guint n = dev->vf_indices != NULL ? dev->vf_indices->len : 0;

      /* As libvirt prints it: maxCount only when known. */
      fprintf (out, "      <capability type='virt_functions'");
      if (dev->max_vfs > 0)
        fprintf (out, " maxCount='%u'", dev->max_vfs);
      if (n == 0)
        {
          fprintf (out, "/>\n");
          return;
        }
      fprintf (out, ">\n");
      for (guint i = 0; i < n; i++)
        {
          guint vf = g_array_index (dev->vf_indices, guint, i);
          write_address (out, "        ", vpa_host_device (host, vf)->addr);
        }
      fprintf (out, "      </capability>\n");
    }
}

/* A net child named as libvirt names them (net_IFNAME_MAC); the MAC is
 * made up from the PCI address, locally administered, so names stay
 * unique and stable. */
static void
write_net_device (FILE *out, const VpaDevice *dev, const char *pci_name)
{
  g_autofree char *ifname = g_markup_escape_text (dev->netdev, -1);
  guint32 dom = VPA_ADDR_DOMAIN (dev->addr);
  g_autofree char *mac = g_strdup_printf ("02:%02x:%02x:%02x:%02x:%02x", (dom >> 8) & 0xff,
                                          dom & 0xff, VPA_ADDR_BUS (dev->addr),
                                          VPA_ADDR_SLOT (dev->addr),
                                          VPA_ADDR_FUNCTION (dev->addr));
  g_autofree char *mac_ = g_strdelimit (g_strdup (mac), ":", '_');

  fprintf (out,
           "  <device>\n"
           "    <name>net_%s_%s</name>\n"
           "    <parent>%s</parent>\n"
           "    <capability type='net'>\n"
           "      <interface>%s</interface>\n"
           "      <address>%s</address>\n"
           "      <capability type='80203'/>\n"
           "    </capability>\n"
           "  </device>\n",
           ifname, mac_, pci_name, ifname, mac);
}

/* <pci-express> with the negotiated link, when known. */
static void
write_pci_express (FILE *out, const VpaDevice *dev)
{
  char speed[16];

  if (dev->link_speed == 0 && dev->link_width == 0)
    return;
  fprintf (out, "      <pci-express>\n        <link validity='sta'");
  if (dev->link_speed != 0)
    fprintf (out, " speed='%s'", vpa_pcie_format_speed (dev->link_speed, speed));
  fprintf (out, " width='%u'/>\n      </pci-express>\n", dev->link_width);
}

/* <path> and <parent>: where the device sits in the PCIe tree. */
static void
write_tree (FILE *out, const VpaHost *host, guint i)
{
  const VpaDevice *dev = vpa_host_device (host, i);
  g_autofree char *path = vpa_pcie_sysfs_path (host, i);
  char parent[32];

  if (path != NULL)
    fprintf (out, "    <path>%s</path>\n", path);
  if (dev->pcie_parent_index >= 0)
    {
      canonical_name (vpa_host_device (host, (guint) dev->pcie_parent_index)->addr, parent);
    }
  else
    {
      g_strlcpy (parent, "computer", sizeof parent);
    }
  fprintf (out, "    <parent>%s</parent>\n", parent);
}

static void
write_device (FILE *out, const VpaHost *host, guint i)
{
  const VpaDevice *dev = vpa_host_device (host, i);
  char name[32];

  canonical_name (dev->addr, name);
  fprintf (out, "  <device>\n    <name>%s</name>\n", name);
  write_tree (out, host, i);
  if (dev->driver != NULL)
    {
      g_autofree char *drv = g_markup_escape_text (dev->driver, -1);
      fprintf (out, "    <driver>\n      <name>%s</name>\n    </driver>\n", drv);
    }
  fprintf (out, "    <capability type='pci'>\n");
  if (dev->class_code != 0)
    fprintf (out, "      <class>0x%06x</class>\n", dev->class_code);
  fprintf (out,
           "      <domain>%u</domain>\n      <bus>%u</bus>\n      <slot>%u</slot>\n"
           "      <function>%u</function>\n      <product id='0x%s'/>\n"
           "      <vendor id='0x%s'/>\n",
           VPA_ADDR_DOMAIN (dev->addr), VPA_ADDR_BUS (dev->addr), VPA_ADDR_SLOT (dev->addr),
           VPA_ADDR_FUNCTION (dev->addr), dev->product_id, dev->vendor_id);
  write_function_caps (out, host, dev);
  if ((dev->class_code >> 8) == 0x0604)
    fprintf (out, "      <capability type='pci-bridge'/>\n");
  /* libvirt drops an <iommuGroup> without members: list the device. */
  if (dev->iommu_group >= 0)
    {
      fprintf (out, "      <iommuGroup number='%d'>\n", dev->iommu_group);
      write_address (out, "        ", dev->addr);
      fprintf (out, "      </iommuGroup>\n");
    }
  if (dev->numa_node != VPA_NUMA_NONE)
    fprintf (out, "      <numa node='%d'/>\n", dev->numa_node);
  write_pci_express (out, dev);
  if (dev->bars_known)
    {
      fprintf (out, "      <vpa:bars xmlns:vpa='%s' mem64-bytes='%" G_GUINT64_FORMAT "'/>\n",
               VPA_XMLNS, dev->bar64_bytes);
    }
  fprintf (out, "    </capability>\n  </device>\n");
  if (dev->netdev != NULL)
    write_net_device (out, dev, name);
}

/* A NUMA claim as a domain that claims exactly it again: one guest cell
 * per bound (node, page size), bound strictly by <memnode>; every vCPU
 * pinned to one dedicated CPU. */
static void
write_numa_head (FILE *out, const VpaNumaUse *use)
{
  guint n_cells = use->memory->len;
  guint n_vcpus = MAX (MAX (use->dedicated->len, n_cells), 1);
  guint64 total = 0;
  gboolean huge = FALSE;

  for (guint k = 0; k < n_cells; k++)
    {
      const VpaMemClaim *m = &g_array_index (use->memory, VpaMemClaim, k);
      total += m->kib;
      huge = huge || m->page_kib != 0;
    }
  fprintf (out, "    <memory unit='KiB'>%" G_GUINT64_FORMAT "</memory>\n",
           n_cells > 0 ? total : 1048576);
  if (huge)
    {
      fprintf (out, "    <memoryBacking>\n      <hugepages>\n");
      for (guint k = 0; k < n_cells; k++)
        {
          const VpaMemClaim *m = &g_array_index (use->memory, VpaMemClaim, k);
          if (m->page_kib != 0)
            {
              fprintf (out, "        <page size='%" G_GUINT64_FORMAT "' unit='KiB' nodeset='%u'/>\n",
                       m->page_kib, k);
            }
        }
      fprintf (out, "      </hugepages>\n    </memoryBacking>\n");
    }
  fprintf (out, "    <vcpu>%u</vcpu>\n", n_vcpus);
  if (use->dedicated->len > 0 || use->pinned->len > 0)
    {
      fprintf (out, "    <cputune>\n");
      for (guint v = 0; use->dedicated->len > 0 && v < n_vcpus; v++)
        {
          fprintf (out, "      <vcpupin vcpu='%u' cpuset='%u'/>\n", v,
                   g_array_index (use->dedicated, guint, MIN (v, use->dedicated->len - 1)));
        }
      /* the other pinned CPUs, as the emulator's: read back as pinned */
      for (guint k = 0; k < use->pinned->len; k++)
        {
          fprintf (out, "%s%u%s", k == 0 ? "      <emulatorpin cpuset='" : ",",
                   g_array_index (use->pinned, guint, k), k + 1 == use->pinned->len ? "'/>\n" : "");
        }
      fprintf (out, "    </cputune>\n");
    }
  if (n_cells == 0)
    return;
  fprintf (out, "    <numatune>\n");
  for (guint k = 0; k < n_cells; k++)
    {
      fprintf (out, "      <memnode cellid='%u' mode='strict' nodeset='%d'/>\n", k,
               g_array_index (use->memory, VpaMemClaim, k).node);
    }
  fprintf (out, "    </numatune>\n");
}

static void
write_numa_cells (FILE *out, const VpaNumaUse *use)
{
  guint n_cells = use->memory->len;
  guint n_vcpus = MAX (MAX (use->dedicated->len, n_cells), 1);

  if (n_cells == 0)
    return;
  fprintf (out, "    <cpu>\n      <numa>\n");
  for (guint k = 0; k < n_cells; k++)
    {
      GString *cpus = g_string_new (NULL);
      for (guint v = k; v < n_vcpus; v += n_cells)
        g_string_append_printf (cpus, "%s%u", cpus->len > 0 ? "," : "", v);
      fprintf (out, "        <cell id='%u' cpus='%s' memory='%" G_GUINT64_FORMAT "' unit='KiB'/>\n",
               k, cpus->str, g_array_index (use->memory, VpaMemClaim, k).kib);
      g_string_free (cpus, TRUE);
    }
  fprintf (out, "      </numa>\n    </cpu>\n");
}

static void
write_domain (FILE *out, const VpaHost *host, GArray *claims)
{
  const VpaClaim *first = g_ptr_array_index (host->claims, g_array_index (claims, guint, 0));
  g_autofree char *name = g_markup_escape_text (first->domain, -1);
  const VpaNumaUse *use = NULL;

  for (guint i = 0; i < claims->len && use == NULL; i++)
    use = ((const VpaClaim *) g_ptr_array_index (host->claims, g_array_index (claims, guint, i)))->numa;
  fprintf (out,
           "  <domain type='test' xmlns:test='" TEST_NS "'>\n"
           "    <name>%s</name>\n",
           name);
  if (use != NULL)
    {
      write_numa_head (out, use);
    }
  else
    {
      fprintf (out, "    <memory unit='KiB'>1048576</memory>\n"
                    "    <vcpu>1</vcpu>\n");
    }
  fprintf (out, "    <os>\n      <type>hvm</type>\n    </os>\n");
  if (use != NULL)
    write_numa_cells (out, use);
  fprintf (out, "    <devices>\n");
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (host->claims, g_array_index (claims, guint, i));
      if (c->addr == VPA_ADDR_NONE)
        continue;
      fprintf (out, "      <hostdev mode='subsystem' type='pci' managed='yes'>\n"
                    "        <source>\n");
      write_address (out, "          ", c->addr);
      fprintf (out, "        </source>\n      </hostdev>\n");
    }
  fprintf (out, "    </devices>\n");
  if (!first->running)
    fprintf (out, "    <test:runstate>%d</test:runstate>\n", TEST_RUNSTATE_SHUTOFF);
  fprintf (out, "  </domain>\n");
}

/* One minimal domain per claiming domain, its claims as managed PCI
 * hostdevs, domains and claims in the order the claims came. */
static void
write_domains (FILE *out, const VpaHost *host)
{
  g_autoptr (GHashTable) by_name =
    g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_array_unref);
  g_autoptr (GPtrArray) order = g_ptr_array_new ();

  for (guint i = 0; i < host->claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (host->claims, i);
      GArray *claims;

      if (c->addr == VPA_ADDR_NONE && c->numa == NULL)
        continue;
      claims = g_hash_table_lookup (by_name, c->domain);
      if (claims == NULL)
        {
          claims = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (by_name, c->domain, claims);
          g_ptr_array_add (order, claims);
        }
      g_array_append_val (claims, i);
    }
  for (guint i = 0; i < order->len; i++)
    write_domain (out, host, g_ptr_array_index (order, i));
}

/* The thread siblings of CPU j of cell: the cell's online CPUs with the
 * same sibling group, as libvirt's list. */
static char *
cpu_siblings (const VpaCell *cell, guint j)
{
  guint group = g_array_index (cell->topo, VpaCpuTopo, j).siblings;
  GString *s = g_string_new (NULL);

  for (guint k = 0; k < cell->cpus->len; k++)
    {
      const VpaCpuTopo *t = &g_array_index (cell->topo, VpaCpuTopo, k);
      if (t->online && t->siblings == group)
        {
          g_string_append_printf (s, "%s%u", s->len > 0 ? "," : "",
                                  g_array_index (cell->cpus, guint, k));
        }
    }
  return g_string_free (s, FALSE);
}

static void
write_cpu (FILE *out, const VpaCell *cell, guint j)
{
  guint cpu = g_array_index (cell->cpus, guint, j);
  const VpaCpuTopo *t = cell->topo != NULL ? &g_array_index (cell->topo, VpaCpuTopo, j) : NULL;
  g_autofree char *sibs = NULL;

  if (t == NULL)
    {
      if (cell->socket != VPA_SOCKET_NONE)
        {
          fprintf (out, "              <cpu id='%u' socket_id='%d'/>\n", cpu, cell->socket);
        }
      else
        {
          fprintf (out, "              <cpu id='%u'/>\n", cpu);
        }
      return;
    }
  if (!t->online)
    {
      fprintf (out, "              <cpu id='%u'/>\n", cpu);
      return;
    }
  sibs = cpu_siblings (cell, j);
  fprintf (out, "              <cpu id='%u'", cpu);
  if (t->socket >= 0)
    fprintf (out, " socket_id='%d'", t->socket);
  if (t->core >= 0)
    fprintf (out, " core_id='%d'", t->core);
  fprintf (out, " siblings='%s'/>\n", sibs);
}

/* Pages and distances as libvirt prints them; free pages, which
 * capabilities do not carry, in a free attribute when they differ. */
static void
write_cell_capacity (FILE *out, const VpaCell *cell)
{
  for (guint j = 0; cell->pages != NULL && j < cell->pages->len; j++)
    {
      const VpaPages *p = &g_array_index (cell->pages, VpaPages, j);
      fprintf (out, "            <pages unit='KiB' size='%" G_GUINT64_FORMAT "'", p->size_kib);
      if (p->free != p->total)
        fprintf (out, " free='%" G_GUINT64_FORMAT "'", p->free);
      fprintf (out, ">%" G_GUINT64_FORMAT "</pages>\n", p->total);
    }
  if (cell->distances == NULL)
    return;
  fprintf (out, "            <distances>\n");
  for (guint j = 0; j < cell->distances->len; j++)
    {
      const VpaDistance *d = &g_array_index (cell->distances, VpaDistance, j);
      fprintf (out, "              <sibling id='%d' value='%u'/>\n", d->node, d->value);
    }
  fprintf (out, "            </distances>\n");
}

/* Cells without per-CPU topology keep only their socket: a cell with a
 * socket writes it on every CPU, one without writes its CPUs without
 * socket_id (as libvirt prints offline CPUs), which reads back as no
 * socket. */
static void
write_capabilities (FILE *out, const VpaHost *host)
{
  fprintf (out, "  <capabilities>\n    <host>\n      <topology>\n        <cells num='%u'>\n",
           host->cells->len);
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *cell = &g_array_index (host->cells, VpaCell, i);

      fprintf (out, "          <cell id='%d'>\n            <memory unit='KiB'>%" G_GUINT64_FORMAT "</memory>\n",
               cell->id, cell->memory_kib);
      write_cell_capacity (out, cell);
      fprintf (out, "            <cpus num='%u'>\n", cell->cpus->len);
      for (guint j = 0; j < cell->cpus->len; j++)
        write_cpu (out, cell, j);
      fprintf (out, "            </cpus>\n          </cell>\n");
    }
  fprintf (out, "        </cells>\n      </topology>\n    </host>\n  </capabilities>\n");
}

gboolean
vpa_snapshot_write (const VpaHost *host, FILE *out, GError **error)
{
  g_return_val_if_fail (host != NULL && host->sealed, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  fprintf (out, "<node>\n");
  for (guint i = 0; i < host->devices->len; i++)
    write_device (out, host, i);
  write_domains (out, host);
  write_capabilities (out, host);
  fprintf (out, "</node>\n");
  if (fflush (out) != 0 || ferror (out))
    {
      int e = errno;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot write snapshot of %s: %s",
                   host->source, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}
