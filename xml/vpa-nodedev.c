/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One <device> element as `virsh nodedev-dumpxml` prints it (libvirt 9.0)
 * into a VpaNodedev, read the way Nova's LibvirtConfigNodeDevice reads it.
 *
 * A snapshot holds tens of thousands of these, so the numeric fields are
 * read straight from the tree without copying; only the strings we keep
 * (name, parent, driver, interface) are allocated.
 */
#include "vpa-nodedev.h"
#include "vpa-pcie.h"

#include <stdio.h>
#include <string.h>

#define PCI_CAP "<capability type='pci'>"

void
vpa_nodedev_clear (VpaNodedev *nd)
{
  if (nd == NULL)
    return;
  g_clear_pointer (&nd->name, g_free);
  g_clear_pointer (&nd->parent, g_free);
  g_clear_pointer (&nd->pci, vpa_device_free);
  g_clear_pointer (&nd->interface, g_free);
  nd->kind = VPA_NODEDEV_OTHER;
}

/* The element's text when it is one text node (the usual case), else a
 * stripped copy in *owned; NULL when empty. */
static const char *
node_text (xmlNode *node, char **owned)
{
  xmlNode *c = node->children;

  *owned = NULL;
  if (c != NULL && c->next == NULL && c->type == XML_TEXT_NODE)
    return (const char *) c->content;
  *owned = vpa_xml_text (node);
  return *owned;
}

/* An attribute's value without copying when it is one text node, else a
 * copy in *owned; NULL when absent. */
static const char *
attr_value (xmlNode *node, const char *name, char **owned)
{
  *owned = NULL;
  for (xmlAttr *a = node->properties; a != NULL; a = a->next)
    {
      if (a->ns != NULL || !xmlStrEqual (a->name, (const xmlChar *) name))
        continue;
      if (a->children == NULL)
        return "";
      if (a->children->next == NULL && a->children->type == XML_TEXT_NODE)
        return (const char *) a->children->content;
      *owned = vpa_xml_prop (node, name);
      return *owned;
    }
  return NULL;
}

/* An unsigned number with optional surrounding blanks; base 16 takes an
 * optional "0x". */
static gboolean
parse_number (const char *s, guint base, guint64 max, guint64 *out)
{
  guint64 v = 0;
  const char *p = s;
  const char *digits;

  if (s == NULL)
    return FALSE;
  while (g_ascii_isspace (*p))
    p++;
  if (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
    p += 2;
  digits = p;
  for (; *p != '\0' && !g_ascii_isspace (*p); p++)
    {
      int d = base == 16 ? g_ascii_xdigit_value (*p) : g_ascii_digit_value (*p);
      if (d < 0)
        return FALSE;
      v = v * base + (guint) d;
      if (v > max)
        return FALSE;
    }
  if (p == digits)
    return FALSE;
  while (g_ascii_isspace (*p))
    p++;
  if (*p != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean
parse_addr_element (xmlNode *pci, const char *elem, guint64 max,
                    guint64 *out, const char *what, const char *name, GError **error)
{
  xmlNode *node = vpa_xml_child (pci, elem, NULL);
  g_autofree char *owned = NULL;
  const char *text;

  if (node == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <%s> missing in " PCI_CAP, what, name, elem);
      return FALSE;
    }
  text = node_text (node, &owned);
  if (!parse_number (text, 10, max, out))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <%s> '%s' in " PCI_CAP
                   " is not a decimal number from 0 to %" G_GUINT64_FORMAT,
                   what, name, elem, text != NULL ? text : "", max);
      return FALSE;
    }
  return TRUE;
}

/* <vendor id='0x8086'> / <product id='0x1889'>: 4 lowercase hex digits. */
static gboolean
parse_id (xmlNode *pci, const char *elem, char out[8], const char *what,
          const char *name, GError **error)
{
  xmlNode *node = vpa_xml_child (pci, elem, NULL);
  g_autofree char *owned = NULL;
  const char *id;
  guint64 v;

  if (node == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <%s> missing in " PCI_CAP, what, name, elem);
      return FALSE;
    }
  id = attr_value (node, "id", &owned);
  if (id == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <%s> in " PCI_CAP " has no 'id'", what, name, elem);
      return FALSE;
    }
  if (!parse_number (id, 16, 0xffff, &v))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <%s id='%s'> is not a hex PCI id from 0x0000 to 0xffff",
                   what, name, elem, id);
      return FALSE;
    }
  g_snprintf (out, 8, "%04x", (guint) v);
  return TRUE;
}

/* <address domain='0x0000' bus='0x81' slot='0x00' function='0x0'/> inside
 * a phys_function capability: hex, as Nova reads it (int(x, 16)). */
static gboolean
parse_hex_address (xmlNode *addr, const char *captype, VpaAddr *out,
                   const char *what, const char *name, GError **error)
{
  static const char *const fields[] = { "domain", "bus", "slot", "function" };
  static const guint64 max[] = { G_MAXUINT32, 0xff, 0x1f, 7 };
  guint64 v[4];

  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_autofree char *owned = NULL;
      const char *s = attr_value (addr, fields[i], &owned);

      if (s == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: device '%s': <address> in <capability type='%s'> has no '%s'",
                       what, name, captype, fields[i]);
          return FALSE;
        }
      if (!parse_number (s, 16, max[i], &v[i]))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: device '%s': <address %s='%s'> in <capability type='%s'> is not a hex PCI address field",
                       what, name, fields[i], s, captype);
          return FALSE;
        }
    }
  *out = VPA_ADDR (v[0], v[1], v[2], v[3]);
  return TRUE;
}

/* Nova's _get_device_type: the nested function capabilities in document
 * order; virt_functions makes a PF (even with no VFs enabled), a
 * phys_function with an address a VF; the first decisive one wins. */
static gboolean
parse_function_caps (xmlNode *pci, VpaDevice *dev, const char *what,
                     const char *name, GError **error)
{
  for (xmlNode *c = pci->children; c != NULL; c = c->next)
    {
      g_autofree char *owned = NULL;
      const char *type;

      if (!vpa_xml_is (c, "capability", NULL))
        continue;
      type = attr_value (c, "type", &owned);
      if (g_strcmp0 (type, "virt_functions") == 0)
        {
          g_autofree char *owned_max = NULL;
          const char *max = attr_value (c, "maxCount", &owned_max);
          guint64 v = 0;

          if (max != NULL && !parse_number (max, 10, G_MAXUINT, &v))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: device '%s': <capability type='virt_functions' maxCount='%s'> is not a decimal number",
                           what, name, max);
              return FALSE;
            }
          dev->dev_type = VPA_DEV_TYPE_PF;
          dev->max_vfs = (guint) v;
          return TRUE;
        }
      if (g_strcmp0 (type, "phys_function") == 0)
        {
          xmlNode *addr = vpa_xml_child (c, "address", NULL);

          if (addr == NULL)
            continue;
          if (!parse_hex_address (addr, "phys_function", &dev->parent_addr, what,
                                  name, error))
            return FALSE;
          dev->dev_type = VPA_DEV_TYPE_VF;
          return TRUE;
        }
    }
  return TRUE;
}

/* libvirt omits <numa> for the kernel's -1 ("no affinity"); accept an
 * explicit -1 as the same. */
static gboolean
parse_numa_node (const char *s, gint *out)
{
  guint64 v;

  while (s != NULL && g_ascii_isspace (*s))
    s++;
  if (s != NULL && s[0] == '-')
    {
      if (!parse_number (s + 1, 10, 1, &v) || v != 1)
        return FALSE;
      *out = VPA_NUMA_NONE;
      return TRUE;
    }
  if (!parse_number (s, 10, G_MAXINT, &v))
    return FALSE;
  *out = (gint) v;
  return TRUE;
}

/* <pci-express><link validity='sta' speed='16' width='8'/>: the
 * negotiated link (a VF's has no speed and width 0). */
static gboolean
parse_pci_express (xmlNode *pcie, VpaDevice *dev, const char *what, const char *name,
                   GError **error)
{
  for (xmlNode *c = pcie->children; c != NULL; c = c->next)
    {
      g_autofree char *o1 = NULL, *o2 = NULL, *o3 = NULL;
      const char *validity, *speed, *width;
      guint64 v = 0;
      guint16 tenths = 0;

      if (!vpa_xml_is (c, "link", NULL))
        continue;
      validity = attr_value (c, "validity", &o1);
      if (g_strcmp0 (validity, "sta") != 0)
        continue;
      speed = attr_value (c, "speed", &o2);
      width = attr_value (c, "width", &o3);
      if ((speed != NULL && !vpa_pcie_parse_speed (speed, &tenths)) ||
          (width != NULL && !parse_number (width, 10, G_MAXUINT16, &v)))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: device '%s': <link validity='sta' speed='%s' width='%s'> in <pci-express> is not a link speed in GT/s and a width",
                       what, name, speed != NULL ? speed : "", width != NULL ? width : "");
          return FALSE;
        }
      dev->link_speed = tenths;
      dev->link_width = (guint16) v;
    }
  return TRUE;
}

/* <vpa:bars mem64-bytes='N'/>: ours, in snapshots (libvirt's nodedev
 * XML has no BARs; its test driver ignores the element). */
static gboolean
parse_bars (xmlNode *bars, VpaDevice *dev, const char *what, const char *name, GError **error)
{
  g_autofree char *owned = NULL;
  const char *s = attr_value (bars, "mem64-bytes", &owned);
  guint64 v;

  /* bounded so that parse_number's v * 10 cannot wrap */
  if (!parse_number (s, 10, G_MAXUINT64 / 16, &v))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <vpa:bars mem64-bytes='%s'> is not a number of bytes",
                   what, name, s != NULL ? s : "");
      return FALSE;
    }
  dev->bars_known = TRUE;
  dev->bar64_bytes = v;
  return TRUE;
}

gboolean
vpa_nodedev_name_to_addr (const char *name, VpaAddr *out)
{
  guint d, b, s, f;
  char buf[32];
  VpaAddr addr;

  /* Field widths bound every value; the round trip refuses the rest. */
  if (name == NULL ||
      sscanf (name, "pci_%4x_%2x_%2x_%1x", &d, &b, &s, &f) != 4) /* NOLINT(cert-err34-c) */
    return FALSE;
  addr = VPA_ADDR (d, b, s, f);
  g_snprintf (buf, sizeof buf, "pci_%04x_%02x_%02x_%x", d, b, s, f);
  if (strcmp (buf, name) != 0 || s > 0x1f || f > 7)
    return FALSE;
  *out = addr;
  return TRUE;
}

/* Where the device sits in the PCIe tree: the host bridge from <path>
 * (/sys/devices/pci0000:5d/...), the bridge above from <parent> when it
 * names a PCI device (pci_DDDD_BB_SS_F; readers resolve other names). */
static gboolean
parse_tree (xmlNode *device, VpaDevice *dev, const char *parent, const char *what,
            const char *name, GError **error)
{
  xmlNode *node = vpa_xml_child (device, "path", NULL);
  VpaAddr path_parent;

  if (node != NULL)
    {
      g_autofree char *owned = NULL;
      const char *path = node_text (node, &owned);

      if (!vpa_pcie_parse_sysfs_path (path, dev->addr, &dev->pcie_root, &path_parent))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: device '%s': broken PCIe path: <path> '%s' is not a /sys/devices/pciDDDD:BB/.../ path ending in its address",
                       what, name, path != NULL ? path : "");
          return FALSE;
        }
    }
  if (parent != NULL && strcmp (parent, "computer") != 0)
    {
      VpaAddr p;
      if (vpa_nodedev_name_to_addr (parent, &p))
        {
          if (p == dev->addr)
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: device '%s': cyclic PCIe tree: <parent> '%s' is the device itself",
                           what, name, parent);
              return FALSE;
            }
          dev->pcie_parent = p;
        }
    }
  return TRUE;
}

/* <class>, <iommuGroup number>, <numa node>: all optional. */
static gboolean
parse_pci_optional (xmlNode *pci, VpaDevice *dev, const char *what, const char *name,
                    GError **error)
{
  for (xmlNode *c = pci->children; c != NULL; c = c->next)
    {
      g_autofree char *owned = NULL;
      const char *s;
      guint64 v;

      if (c->type != XML_ELEMENT_NODE)
        continue;
      if (vpa_xml_is (c, "class", NULL))
        {
          s = node_text (c, &owned);
          if (!parse_number (s, 16, 0xffffff, &v))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: device '%s': <class> '%s' in " PCI_CAP
                           " is not a hex PCI class from 0x000000 to 0xffffff",
                           what, name, s != NULL ? s : "");
              return FALSE;
            }
          dev->class_code = (guint32) v;
        }
      else if (vpa_xml_is (c, "iommuGroup", NULL))
        {
          s = attr_value (c, "number", &owned);
          if (!parse_number (s, 10, G_MAXINT, &v))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: device '%s': <iommuGroup number='%s'> is not a decimal number",
                           what, name, s != NULL ? s : "");
              return FALSE;
            }
          dev->iommu_group = (gint) v;
        }
      else if (vpa_xml_is (c, "capability", NULL))
        {
          /* A bridge without <class> is still a bridge. */
          const char *type = attr_value (c, "type", &owned);
          if (g_strcmp0 (type, "pci-bridge") == 0 && dev->class_code == 0)
            dev->class_code = 0x060400;
        }
      else if (vpa_xml_is (c, "pci-express", NULL))
        {
          if (!parse_pci_express (c, dev, what, name, error))
            return FALSE;
        }
      else if (vpa_xml_is (c, "bars", VPA_XMLNS))
        {
          if (!parse_bars (c, dev, what, name, error))
            return FALSE;
        }
      else if (vpa_xml_is (c, "numa", NULL))
        {
          s = attr_value (c, "node", &owned);
          if (!parse_numa_node (s, &dev->numa_node))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: device '%s': <numa node='%s'> is not a NUMA node number",
                           what, name, s != NULL ? s : "");
              return FALSE;
            }
        }
    }
  return TRUE;
}

static gboolean
parse_pci (xmlNode *device, xmlNode *pci, VpaNodedev *out, const char *what,
           GError **error)
{
  g_autoptr (VpaDevice) dev = vpa_device_new ();
  const char *name = out->name;
  guint64 d, b, s, f;
  xmlNode *drv;

  if (!parse_addr_element (pci, "domain", G_MAXUINT32, &d, what, name, error) ||
      !parse_addr_element (pci, "bus", 0xff, &b, what, name, error) ||
      !parse_addr_element (pci, "slot", 0x1f, &s, what, name, error) ||
      !parse_addr_element (pci, "function", 7, &f, what, name, error))
    return FALSE;
  dev->addr = VPA_ADDR (d, b, s, f);

  if (!parse_id (pci, "vendor", dev->vendor_id, what, name, error) ||
      !parse_id (pci, "product", dev->product_id, what, name, error) ||
      !parse_function_caps (pci, dev, what, name, error) ||
      !parse_pci_optional (pci, dev, what, name, error) ||
      !parse_tree (device, dev, out->parent, what, name, error))
    return FALSE;

  drv = vpa_xml_child (device, "driver", NULL);
  if (drv != NULL && (drv = vpa_xml_child (drv, "name", NULL)) != NULL)
    dev->driver = vpa_xml_text (drv);

  out->kind = VPA_NODEDEV_PCI;
  out->pci = g_steal_pointer (&dev);
  return TRUE;
}

static gboolean
parse_net (xmlNode *net, VpaNodedev *out, const char *what, GError **error)
{
  xmlNode *iface = vpa_xml_child (net, "interface", NULL);

  out->interface = iface != NULL ? vpa_xml_text (iface) : NULL;
  if (out->interface == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: device '%s': <interface> missing in <capability type='net'>",
                   what, out->name);
      return FALSE;
    }
  out->kind = VPA_NODEDEV_NET;
  return TRUE;
}

gboolean
vpa_nodedev_parse (xmlNode *device, const char *what, VpaNodedev *out,
                   GError **error)
{
  VpaNodedev nd = { VPA_NODEDEV_OTHER, NULL, NULL, NULL, NULL };
  xmlNode *c;

  g_return_val_if_fail (device != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!vpa_xml_is (device, "device", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: expected a <device> element, not <%s>", what,
                   (const char *) device->name);
      return FALSE;
    }
  c = vpa_xml_child (device, "name", NULL);
  nd.name = c != NULL ? vpa_xml_text (c) : NULL;
  if (nd.name == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <device> at line %ld has no <name>", what, xmlGetLineNo (device));
      return FALSE;
    }
  if ((c = vpa_xml_child (device, "parent", NULL)) != NULL)
    nd.parent = vpa_xml_text (c);

  for (c = device->children; c != NULL; c = c->next)
    {
      g_autofree char *owned = NULL;
      const char *type;
      gboolean ok = TRUE;

      if (!vpa_xml_is (c, "capability", NULL))
        continue;
      type = attr_value (c, "type", &owned);
      if (g_strcmp0 (type, "pci") == 0)
        {
          ok = parse_pci (device, c, &nd, what, error);
        }
      else if (g_strcmp0 (type, "net") == 0)
        {
          ok = parse_net (c, &nd, what, error);
        }
      else
        {
          continue;
        }
      if (!ok)
        {
          vpa_nodedev_clear (&nd);
          return FALSE;
        }
      break;
    }

  *out = nd;
  return TRUE;
}
