/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What libvirt 9.0 refuses to define, in the parts of a domain the guest
 * PCI layout planner reads: controllers (type, index, model, busNr,
 * <node>, the bus they plug into), the guest <address type='pci'> of
 * every device and the user aliases. A document libvirt refuses never
 * reaches the planner, so the planner only sees layouts libvirt can have
 * (docs/guest-numa.md, "What libvirt refuses").
 */
#include "vpa-guest-topology.h"
#include "vpa-xml.h"
#include "vpa-domain.h"

#include <errno.h>
#include <string.h>

/* libvirt's controller types (virDomainControllerType, 9.0); no type
 * attribute is "ide". */
static const char *const controller_types[] = {
  "ide",
  "fdc",
  "scsi",
  "sata",
  "virtio-serial",
  "ccid",
  "usb",
  "pci",
  "xenbus",
  "isa",
  NULL,
};

/* libvirt's PCI controller models (virDomainControllerModelPCI, 9.0). */
static const char *const pci_models[] = {
  "pci-root",
  "pcie-root",
  "pci-bridge",
  "dmi-to-pci-bridge",
  "pcie-root-port",
  "pcie-switch-upstream-port",
  "pcie-switch-downstream-port",
  "pci-expander-bus",
  "pcie-expander-bus",
  "pcie-to-pci-bridge",
  NULL,
};

/* The elements of <devices> whose <alias> and <address> libvirt reads
 * (every device with a virDomainDeviceInfo). <console> is left out: a
 * console that is the first serial port shares that port's alias. */
static const char *const info_devices[] = {
  "disk",
  "controller",
  "filesystem",
  "interface",
  "input",
  "sound",
  "video",
  "hostdev",
  "redirdev",
  "smartcard",
  "serial",
  "parallel",
  "channel",
  "hub",
  "memballoon",
  "rng",
  "tpm",
  "panic",
  "shmem",
  "memory",
  "watchdog",
  "nvram",
  "vsock",
  "crypto",
  NULL,
};

static gboolean
in_list (const char *const *list, const char *s)
{
  for (guint i = 0; s != NULL && list[i] != NULL; i++)
    if (strcmp (list[i], s) == 0)
      return TRUE;
  return FALSE;
}

/* A number as libvirt's virStrToLong_* reads it (strtol: leading
 * blanks and a sign allowed, nothing after the digits). */
static gboolean
lv_signed (const char *s, guint base, gint64 *out)
{
  char *end = NULL;

  errno = 0;
  *out = g_ascii_strtoll (s, &end, base);
  return errno == 0 && end != s && *end == '\0' && *out >= G_MININT && *out <= G_MAXINT;
}

/* virStrToLong_uip: as above, no minus sign. */
static gboolean
lv_unsigned (const char *s, guint base, guint64 *out)
{
  const char *p = s;
  char *end = NULL;

  while (g_ascii_isspace (*p))
    p++;
  if (*p == '-')
    return FALSE;
  errno = 0;
  *out = g_ascii_strtoull (s, &end, base);
  return errno == 0 && end != s && *end == '\0' && *out <= G_MAXUINT;
}

static char *
user_alias (xmlNode *node)
{
  xmlNode *alias = vpa_xml_child (node, "alias", NULL);
  char *name = alias != NULL ? vpa_xml_prop (alias, "name") : NULL;

  /* libvirt keeps only user aliases ("ua-") of a document it defines */
  if (name != NULL && !g_str_has_prefix (name, "ua-"))
    g_clear_pointer (&name, g_free);
  return name;
}

/* "<hostdev type='pci'> (alias 'ua-x')", for messages. */
static char *
device_label (xmlNode *node)
{
  g_autofree char *type = vpa_xml_prop (node, "type");
  g_autofree char *index = vpa_xml_prop (node, "index");
  g_autofree char *alias = user_alias (node);
  g_autoptr (GString) s = g_string_new (NULL);

  g_string_append_printf (s, "<%s", (const char *) node->name);
  if (type != NULL)
    g_string_append_printf (s, " type='%s'", type);
  if (index != NULL && vpa_xml_is (node, "controller", NULL))
    g_string_append_printf (s, " index='%s'", index);
  g_string_append_c (s, '>');
  if (alias != NULL)
    g_string_append_printf (s, " (alias '%s')", alias);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

typedef struct {
  const char *what;
  const VpaGuestBus *bus;
  guint n_cells;
  GHashTable *indexes;   /* "type/index" -> label of its controller */
  GHashTable *aliases;   /* user alias -> label of its element */
  GHashTable *addresses; /* "domain:bus:slot.function" -> label */
} Check;

/* One field of a guest <address type='pci'>: absent is 0, as libvirt
 * reads it. */
static gboolean
address_field (const Check *c, xmlNode *dev, xmlNode *addr, const char *name, guint max,
               guint *out, GError **error)
{
  g_autofree char *s = vpa_xml_prop (addr, name);
  g_autofree char *label = NULL;
  guint64 v = 0;

  *out = 0;
  if (s == NULL)
    return TRUE;
  if (lv_unsigned (s, 0, &v) && v <= max)
    {
      *out = (guint) v;
      return TRUE;
    }
  label = device_label (dev);
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s <address type='pci' %s='%s'>: not a guest PCI address field libvirt accepts (a number from 0 to 0x%x)",
               c->what, label, name, s, max);
  return FALSE;
}

/* The element's guest PCI address: fields in range, domain 0 (QEMU has
 * one), and no other element on the same function. An address of all
 * zeros (domain, bus, slot) is no address: libvirt assigns one. */
static gboolean
check_address (Check *c, xmlNode *dev, guint *bus_out, GError **error)
{
  xmlNode *addr = vpa_xml_child (dev, "address", NULL);
  g_autofree char *type = addr != NULL ? vpa_xml_prop (addr, "type") : NULL;
  g_autofree char *label = NULL;
  g_autofree char *key = NULL;
  guint domain, bus, slot, function;
  const char *other;

  *bus_out = G_MAXUINT;
  if (g_strcmp0 (type, "pci") != 0)
    return TRUE;
  if (!address_field (c, dev, addr, "domain", G_MAXUINT, &domain, error) ||
      !address_field (c, dev, addr, "bus", 0xff, &bus, error) ||
      !address_field (c, dev, addr, "slot", 0x1f, &slot, error) ||
      !address_field (c, dev, addr, "function", 7, &function, error))
    return FALSE;
  if (domain == 0 && bus == 0 && slot == 0)
    return TRUE;
  label = device_label (dev);
  if (domain != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s <address type='pci' domain='0x%04x'>: a QEMU guest has PCI domain 0 only",
                   c->what, label, domain);
      return FALSE;
    }
  key = g_strdup_printf ("%04x:%02x:%02x.%x", domain, bus, slot, function);
  if ((other = g_hash_table_lookup (c->addresses, key)) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s <address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'>: %s has that guest address too (libvirt refuses a PCI address used twice)",
                   c->what, label, domain, bus, slot, function, other);
      return FALSE;
    }
  g_hash_table_insert (c->addresses, g_steal_pointer (&key), g_steal_pointer (&label));
  *bus_out = bus;
  return TRUE;
}

/* The aliases this program writes are its own: ua-vpa-pxb-* and
 * ua-vpa-rp-* on a <controller type='pci'>, the other ua-vpa-* on a PCI
 * <hostdev>. On another element the rewrite would add a second element
 * of that alias, which libvirt refuses. */
static gboolean
check_own_alias (Check *c, xmlNode *dev, const char *alias, GError **error)
{
  g_autofree char *type = vpa_xml_prop (dev, "type");
  g_autofree char *mode = vpa_xml_prop (dev, "mode");
  g_autofree char *label = NULL;
  const char *owner;

  if (!g_str_has_prefix (alias, VPA_ALIAS_PREFIX))
    return TRUE;
  owner = vpa_guest_topology_owns (alias) ? "controller" : "hostdev";
  /* a hostdev of ours is a PCI one in subsystem mode (the rewrite's
   * test): another mode would get a second hostdev of that alias */
  if (vpa_xml_is (dev, owner, NULL) && g_strcmp0 (type, "pci") == 0 &&
      (strcmp (owner, "controller") == 0 || mode == NULL || strcmp (mode, "subsystem") == 0))
    return TRUE;
  label = device_label (dev);
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s <alias name='%s'>: the alias is one virt-pci-affinity writes on a <%s type='pci'>%s of its own (another element of that alias would be a second one)",
               c->what, label, alias, owner, strcmp (owner, "hostdev") == 0 ? " mode='subsystem'" : "");
  return FALSE;
}

static gboolean
check_alias (Check *c, xmlNode *dev, GError **error)
{
  g_autofree char *alias = user_alias (dev);
  const char *other;

  if (alias == NULL)
    return TRUE;
  if (!check_own_alias (c, dev, alias, error))
    return FALSE;
  if ((other = g_hash_table_lookup (c->aliases, alias)) != NULL)
    {
      g_autofree char *label = device_label (dev);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s <alias name='%s'>: %s has that user alias too (libvirt refuses a repeated alias)",
                   c->what, label, alias, other);
      return FALSE;
    }
  g_hash_table_insert (c->aliases, g_steal_pointer (&alias), device_label (dev));
  return TRUE;
}

/* type, index and the index's uniqueness among controllers of that
 * type (USB controllers may share one). *index_out: -1 when absent
 * (libvirt picks one). */
static gboolean
check_controller_index (Check *c, xmlNode *ctl, const char *type, gint *index_out,
                        GError **error)
{
  g_autofree char *index = vpa_xml_prop (ctl, "index");
  g_autofree char *key = NULL;
  const char *other;
  gint64 v;

  *index_out = -1;
  if (!in_list (controller_types, type))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='%s'>: not a controller type libvirt knows (ide, fdc, scsi, sata, virtio-serial, ccid, usb, pci, xenbus, isa)",
                   c->what, type);
      return FALSE;
    }
  if (index == NULL)
    return TRUE;
  if (!lv_signed (index, 10, &v) || v < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='%s' index='%s'>: the index is not a non-negative decimal number",
                   c->what, type, index);
      return FALSE;
    }
  *index_out = (gint) v;
  if (strcmp (type, "usb") == 0)
    return TRUE;
  key = g_strdup_printf ("%s/%d", type, *index_out);
  if ((other = g_hash_table_lookup (c->indexes, key)) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='%s' index='%s'>: another <controller type='%s'> has index %d (libvirt refuses two)",
                   c->what, type, index, type, *index_out);
      return FALSE;
    }
  g_hash_table_insert (c->indexes, g_steal_pointer (&key), g_strdup (index));
  return TRUE;
}

/* <target busNr> and <target><node> of a PCI controller. */
static gboolean
check_pci_target (Check *c, xmlNode *ctl, gint index, GError **error)
{
  xmlNode *target = vpa_xml_child (ctl, "target", NULL);
  xmlNode *node = target != NULL ? vpa_xml_child (target, "node", NULL) : NULL;
  g_autofree char *busnr = target != NULL ? vpa_xml_prop (target, "busNr") : NULL;
  g_autofree char *cell = node != NULL ? vpa_xml_text (node) : NULL;
  gint64 v;
  guint64 n;

  if (busnr != NULL && (!lv_signed (busnr, 0, &v) || v < 1 || v > VPA_TOPO_BUSNR_MAX))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d'> <target busNr='%s'>: expected a bus number from 1 to %d",
                   c->what, index, busnr, VPA_TOPO_BUSNR_MAX);
      return FALSE;
    }
  if (cell != NULL && (!lv_unsigned (cell, 10, &n) || n >= c->n_cells))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d'> <target><node>%s</node>: not a guest NUMA cell (the domain has %u in <cpu><numa>)",
                   c->what, index, cell, c->n_cells);
      return FALSE;
    }
  return TRUE;
}

/* A PCI controller's model, index range, root at index 0, the expander
 * model of the machine type. */
static gboolean
check_pci_controller (Check *c, xmlNode *ctl, gint index, GError **error)
{
  g_autofree char *model = vpa_xml_prop (ctl, "model");
  gboolean root = g_strcmp0 (model, "pci-root") == 0 || g_strcmp0 (model, "pcie-root") == 0;

  if (model != NULL && !in_list (pci_models, model))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d' model='%s'>: not a PCI controller model libvirt knows",
                   c->what, index, model);
      return FALSE;
    }
  if (index > VPA_TOPO_INDEX_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d'>: above %d, the highest PCI controller index",
                   c->what, index, VPA_TOPO_INDEX_MAX);
      return FALSE;
    }
  if (root && index > 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d' model='%s'>: the root bus has index 0",
                   c->what, index, model);
      return FALSE;
    }
  if (c->bus->known_machine &&
      ((g_strcmp0 (model, "pcie-expander-bus") == 0 && c->bus->machine != VPA_MACHINE_Q35) ||
       (g_strcmp0 (model, "pci-expander-bus") == 0 && c->bus->machine != VPA_MACHINE_I440FX)))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d' model='%s'>: not an expander bus of this machine type (%s has %s)",
                   c->what, index, model, c->bus->machine == VPA_MACHINE_Q35 ? "q35" : "i440fx",
                   vpa_guest_expander_model (c->bus->machine));
      return FALSE;
    }
  return check_pci_target (c, ctl, index, error);
}

static gboolean
check_controller (Check *c, xmlNode *ctl, guint bus, GError **error)
{
  g_autofree char *type = vpa_xml_prop (ctl, "type");
  gint index;

  if (!check_controller_index (c, ctl, type != NULL ? type : "ide", &index, error))
    return FALSE;
  if (g_strcmp0 (type, "pci") != 0)
    return TRUE;
  if (!check_pci_controller (c, ctl, index, error))
    return FALSE;
  /* a PCI controller plugs into a bus of lower index (no cycles) */
  if (index >= 0 && bus != G_MAXUINT && bus >= (guint) index)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d'> <address type='pci' bus='0x%02x'>: a PCI controller plugs into a bus of lower index",
                   c->what, index, bus);
      return FALSE;
    }
  return TRUE;
}

/* The <cell>s of <cpu><numa>, the guest NUMA nodes an expander's
 * <node> names: libvirt wants their ids 0 to N-1, each once (a cell
 * without an id is its position). c->n_cells receives N. */
static gboolean
check_cells (Check *c, xmlNode *domain, GError **error)
{
  xmlNode *cpu = vpa_xml_child (domain, "cpu", NULL);
  xmlNode *numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  guint n = 0, pos = 0;

  for (xmlNode *e = numa != NULL ? numa->children : NULL; e != NULL; e = e->next)
    n += vpa_xml_is (e, "cell", NULL) ? 1 : 0;
  c->n_cells = n;
  for (xmlNode *e = numa != NULL ? numa->children : NULL; e != NULL; e = e->next)
    {
      g_autofree char *id = NULL;
      guint64 v = pos;

      if (!vpa_xml_is (e, "cell", NULL))
        continue;
      id = vpa_xml_prop (e, "id");
      pos++;
      if (id != NULL && !lv_unsigned (id, 10, &v))
        v = G_MAXUINT; /* the domain parse names a bad id */
      if (v >= n || g_hash_table_contains (seen, GUINT_TO_POINTER ((guint) v + 1)))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <cpu><numa><cell id='%s'>: libvirt wants the cell ids 0 to %u, each once",
                       c->what, id != NULL ? id : "", n - 1);
          return FALSE;
        }
      g_hash_table_add (seen, GUINT_TO_POINTER ((guint) v + 1));
    }
  return TRUE;
}

gboolean
vpa_guest_bus_check (xmlNode *domain, const VpaGuestBus *bus, const char *what, GError **error)
{
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);
  g_autoptr (GHashTable) indexes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) addresses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                            g_free);
  Check c = { what, bus, 0, indexes, aliases, addresses };

  if (!check_cells (&c, domain, error))
    return FALSE;
  for (xmlNode *d = devices != NULL ? devices->children : NULL; d != NULL; d = d->next)
    {
      guint on;

      if (d->type != XML_ELEMENT_NODE || !in_list (info_devices, (const char *) d->name))
        continue;
      if (!check_alias (&c, d, error) || !check_address (&c, d, &on, error))
        return FALSE;
      if (vpa_xml_is (d, "controller", NULL) && !check_controller (&c, d, on, error))
        return FALSE;
    }
  return TRUE;
}
