/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt's rules for the guest's controllers, addresses and aliases
 * (vpa-guest-bus-rules.h): a document libvirt refuses never reaches the
 * planner, so the planner only sees layouts libvirt can have
 * (docs/guest-numa.md, "What libvirt refuses").
 */
#include "vpa-guest-bus-rules.h"
#include "vpa-domain-model.h"

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

static gboolean
in_list (const char *const *list, const char *s)
{
  for (guint i = 0; s != NULL && list[i] != NULL; i++)
    {
      if (strcmp (list[i], s) == 0)
        return TRUE;
    }
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

static gboolean
is_controller (const VpaGuestElement *e)
{
  return strcmp (e->name, "controller") == 0;
}

/* "<hostdev type='pci'> (alias 'ua-x')", for messages. */
static char *
element_label (const VpaGuestElement *e)
{
  g_autoptr (GString) s = g_string_new (NULL);

  g_string_append_printf (s, "<%s", e->name);
  if (e->type != NULL)
    g_string_append_printf (s, " type='%s'", e->type);
  if (e->index != NULL && is_controller (e))
    g_string_append_printf (s, " index='%s'", e->index);
  g_string_append_c (s, '>');
  if (e->alias != NULL)
    g_string_append_printf (s, " (alias '%s')", e->alias);
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
address_field (const Check *c, const VpaGuestElement *e, guint field, guint max, guint *out,
               GError **error)
{
  static const char *const names[] = { "domain", "bus", "slot", "function" };
  const char *s = e->address[field];
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
  label = element_label (e);
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s <address type='pci' %s='%s'>: not a guest PCI address field libvirt accepts (a number from 0 to 0x%x)",
               c->what, label, names[field], s, max);
  return FALSE;
}

/* The element's guest PCI address: fields in range, domain 0 (QEMU has
 * one), and no other element on the same function. An address of all
 * zeros (domain, bus, slot) is no address: libvirt assigns one. */
static gboolean
check_address (Check *c, const VpaGuestElement *e, guint *bus_out, GError **error)
{
  g_autofree char *label = NULL;
  g_autofree char *key = NULL;
  guint domain, bus, slot, function;
  const char *other;

  *bus_out = G_MAXUINT;
  if (!e->pci_address)
    return TRUE;
  if (!address_field (c, e, 0, G_MAXUINT, &domain, error) ||
      !address_field (c, e, 1, 0xff, &bus, error) ||
      !address_field (c, e, 2, 0x1f, &slot, error) ||
      !address_field (c, e, 3, 7, &function, error))
    return FALSE;
  if (domain == 0 && bus == 0 && slot == 0)
    return TRUE;
  label = element_label (e);
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
check_own_alias (Check *c, const VpaGuestElement *e, GError **error)
{
  g_autofree char *label = NULL;
  const char *owner;

  if (!g_str_has_prefix (e->alias, VPA_ALIAS_PREFIX))
    return TRUE;
  owner = vpa_guest_model_topology_owns (e->alias) ? "controller" : "hostdev";
  /* a hostdev of ours is a PCI one in subsystem mode (the rewrite's
   * test): another mode would get a second hostdev of that alias */
  if (strcmp (e->name, owner) == 0 && g_strcmp0 (e->type, "pci") == 0 &&
      (strcmp (owner, "controller") == 0 || e->mode == NULL || strcmp (e->mode, "subsystem") == 0))
    return TRUE;
  label = element_label (e);
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s <alias name='%s'>: the alias is one virt-pci-affinity writes on a <%s type='pci'>%s of its own (another element of that alias would be a second one)",
               c->what, label, e->alias, owner, strcmp (owner, "hostdev") == 0 ? " mode='subsystem'" : "");
  return FALSE;
}

static gboolean
check_alias (Check *c, const VpaGuestElement *e, GError **error)
{
  const char *other;

  if (e->alias == NULL)
    return TRUE;
  if (!check_own_alias (c, e, error))
    return FALSE;
  if ((other = g_hash_table_lookup (c->aliases, e->alias)) != NULL)
    {
      g_autofree char *label = element_label (e);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s <alias name='%s'>: %s has that user alias too (libvirt refuses a repeated alias)",
                   c->what, label, e->alias, other);
      return FALSE;
    }
  g_hash_table_insert (c->aliases, g_strdup (e->alias), element_label (e));
  return TRUE;
}

/* type, index and the index's uniqueness among controllers of that
 * type (USB controllers may share one). *index_out: -1 when absent
 * (libvirt picks one). */
static gboolean
check_controller_index (Check *c, const VpaGuestElement *e, const char *type, gint *index_out,
                        GError **error)
{
  const char *index = e->index;
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
check_pci_target (Check *c, const VpaGuestElement *e, gint index, GError **error)
{
  gint64 v;
  guint64 n;

  if (e->bus_nr != NULL && (!lv_signed (e->bus_nr, 0, &v) || v < 1 || v > VPA_TOPO_BUSNR_MAX))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d'> <target busNr='%s'>: expected a bus number from 1 to %d",
                   c->what, index, e->bus_nr, VPA_TOPO_BUSNR_MAX);
      return FALSE;
    }
  if (e->node != NULL && (!lv_unsigned (e->node, 10, &n) || n >= c->n_cells))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <controller type='pci' index='%d'> <target><node>%s</node>: not a guest NUMA cell (the domain has %u in <cpu><numa>)",
                   c->what, index, e->node, c->n_cells);
      return FALSE;
    }
  return TRUE;
}

/* A PCI controller's model, index range, root at index 0, the expander
 * model of the machine type. */
static gboolean
check_pci_controller (Check *c, const VpaGuestElement *e, gint index, GError **error)
{
  const char *model = e->model;
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
                   vpa_guest_model_expander_name (c->bus->machine));
      return FALSE;
    }
  return check_pci_target (c, e, index, error);
}

static gboolean
check_controller (Check *c, const VpaGuestElement *e, guint bus, GError **error)
{
  gint index;

  if (!check_controller_index (c, e, e->type != NULL ? e->type : "ide", &index, error))
    return FALSE;
  if (g_strcmp0 (e->type, "pci") != 0)
    return TRUE;
  if (!check_pci_controller (c, e, index, error))
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
 * without an id is its position). */
static gboolean
check_cells (Check *c, const GPtrArray *ids, GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  guint n = ids->len;

  for (guint pos = 0; pos < n; pos++)
    {
      const char *id = g_ptr_array_index (ids, pos);
      guint64 v = pos;

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
vpa_guest_bus_rules_check (const VpaGuestBus *bus, const char *what, GError **error)
{
  g_autoptr (GHashTable) indexes = NULL;
  g_autoptr (GHashTable) aliases = NULL;
  g_autoptr (GHashTable) addresses = NULL;
  Check c = { what, bus, 0, NULL, NULL, NULL };

  g_return_val_if_fail (what != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (bus == NULL || bus->facts == NULL)
    return TRUE;
  indexes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  addresses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  c.indexes = indexes;
  c.aliases = aliases;
  c.addresses = addresses;
  c.n_cells = bus->facts->cell_ids->len;
  if (!check_cells (&c, bus->facts->cell_ids, error))
    return FALSE;
  for (guint i = 0; i < bus->facts->elements->len; i++)
    {
      const VpaGuestElement *e = g_ptr_array_index (bus->facts->elements, i);
      guint on;

      if (!check_alias (&c, e, error) || !check_address (&c, e, &on, error))
        return FALSE;
      if (is_controller (e) && !check_controller (&c, e, on, error))
        return FALSE;
    }
  return TRUE;
}
