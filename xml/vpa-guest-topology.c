/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest's PCI layout read from a domain (vpa-guest-topology.h); its
 * plan is policy/vpa-guest-plan.c.
 */
#include "vpa-guest-topology.h"
#include "vpa-xml.h"
#include "vpa-domain.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Parse                                                               */
/* ------------------------------------------------------------------ */

/* A number as libvirt reads it (strtoul: leading blanks and a plus
 * sign allowed; base 0: "0x1f", "31"; base 10 for a controller's index:
 * "010" is 10); -1 if absent or bad. */
static gint
num_attr_base (xmlNode *node, const char *name, guint max, guint base)
{
  g_autofree char *s = node != NULL ? vpa_xml_prop (node, name) : NULL;
  const char *p = s;
  char *end = NULL;
  guint64 v;

  if (s == NULL)
    return -1;
  while (g_ascii_isspace (*p))
    p++;
  if (*p == '+')
    p++;
  if (!g_ascii_isdigit (*p))
    return -1;
  v = g_ascii_strtoull (p, &end, base);
  if (end == p || *end != '\0' || v > max)
    return -1;
  return (gint) v;
}

gint
vpa_guest_topology_controller_index (xmlNode *controller)
{
  return num_attr_base (controller, "index", G_MAXINT, 10);
}

static gint
num_attr (xmlNode *node, const char *name, guint max)
{
  return num_attr_base (node, name, max, 0);
}

static gint
num_text (xmlNode *node, guint max)
{
  g_autofree char *s = node != NULL ? vpa_xml_text (node) : NULL;
  char *end = NULL;
  guint64 v;

  if (s == NULL || !g_ascii_isdigit (*s))
    return -1;
  v = g_ascii_strtoull (s, &end, 10);
  if (*end != '\0' || v > max)
    return -1;
  return (gint) v;
}

static char *
alias_of (xmlNode *node)
{
  xmlNode *alias = vpa_xml_child (node, "alias", NULL);
  return alias != NULL ? vpa_xml_prop (alias, "name") : NULL;
}

/* The element's own <address type='pci'>: bus and slot, -1 when none. */
static void
pci_address_of (xmlNode *node, gint *bus, gint *slot)
{
  xmlNode *addr = vpa_xml_child (node, "address", NULL);
  g_autofree char *type = addr != NULL ? vpa_xml_prop (addr, "type") : NULL;

  *bus = *slot = -1;
  if (g_strcmp0 (type, "pci") != 0)
    return;
  /* Unlike a hostdev's <source><address>, a guest address may leave out
   * its slot and function (libvirt fills them): read field by field. */
  *bus = num_attr (addr, "bus", 255);
  *slot = num_attr (addr, "slot", 31);
}

static void
parse_controller (VpaGuestBus *bus, xmlNode *c)
{
  g_autofree char *type = vpa_xml_prop (c, "type");
  xmlNode *target = vpa_xml_child (c, "target", NULL);
  VpaGuestController *gc;
  gint index = vpa_guest_topology_controller_index (c);

  if (g_strcmp0 (type, "pci") != 0 || index < 0)
    return;
  gc = g_new0 (VpaGuestController, 1);
  gc->index = (guint) index;
  gc->model = vpa_xml_prop (c, "model");
  gc->alias = alias_of (c);
  gc->bus_nr = num_attr (target, "busNr", 255);
  gc->node = num_text (target != NULL ? vpa_xml_child (target, "node", NULL) : NULL, G_MAXINT);
  pci_address_of (c, &gc->parent, &gc->slot);
  g_ptr_array_add (bus->controllers, gc);
}

static void
parse_machine (VpaGuestBus *bus, xmlNode *domain)
{
  xmlNode *os = vpa_xml_child (domain, "os", NULL);
  xmlNode *type = os != NULL ? vpa_xml_child (os, "type", NULL) : NULL;
  g_autofree char *arch = type != NULL ? vpa_xml_prop (type, "arch") : NULL;
  const char *m;

  bus->machine_name = type != NULL ? vpa_xml_prop (type, "machine") : NULL;
  m = bus->machine_name;
  bus->known_machine = TRUE;
  /* no machine on x86: libvirt's default, pc */
  gboolean default_pc = m == NULL && (arch == NULL || strcmp (arch, "x86_64") == 0 ||
                                      strcmp (arch, "i686") == 0);
  gboolean pc = m != NULL && (strcmp (m, "pc") == 0 || g_str_has_prefix (m, "pc-i440fx-") ||
                              (g_str_has_prefix (m, "pc-") && g_ascii_isdigit (m[3])));

  if (m != NULL && (strcmp (m, "q35") == 0 || g_str_has_prefix (m, "pc-q35-")))
    {
      bus->machine = VPA_MACHINE_Q35;
    }
  else if (pc || default_pc)
    {
      bus->machine = VPA_MACHINE_I440FX;
    }
  else
    {
      bus->known_machine = FALSE;
    }
  /* a pcie-root says q35 whatever the machine is called */
  for (guint i = 0; m == NULL && i < bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (bus->controllers, i);
      if (c->index == 0 && g_strcmp0 (c->model, "pcie-root") == 0)
        bus->machine = VPA_MACHINE_Q35;
    }
}

VpaGuestBus *
vpa_guest_topology_bus_parse (xmlNode *domain)
{
  VpaGuestBus *bus = vpa_guest_bus_new ();
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);
  xmlNode *features = vpa_xml_child (domain, "features", NULL);

  bus->acpi = features != NULL && vpa_xml_child (features, "acpi", NULL) != NULL;
  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      char *alias;
      VpaGuestDeviceAddr *d;
      gint on, slot;

      if (c->type != XML_ELEMENT_NODE)
        continue;
      pci_address_of (c, &on, &slot);
      if (on >= 0)
        {
          VpaGuestDeviceAddr *o = g_new0 (VpaGuestDeviceAddr, 1);
          gboolean is_pci = FALSE;
          VpaAddr addr;
          o->alias = alias_of (c);
          o->bus = on;
          o->slot = slot;
          o->ours = o->alias != NULL && g_str_has_prefix (o->alias, VPA_ALIAS_PREFIX) &&
                    vpa_xml_is (c, "hostdev", NULL) &&
                    vpa_xml_hostdev_address (c, "", &is_pci, &addr, NULL) && is_pci;
          g_ptr_array_add (bus->occupants, o);
        }
      if (vpa_xml_is (c, "controller", NULL))
        {
          parse_controller (bus, c);
          continue;
        }
      if (!vpa_xml_is (c, "hostdev", NULL) && !vpa_xml_is (c, "interface", NULL))
        continue;
      if ((alias = alias_of (c)) == NULL)
        continue;
      d = g_new0 (VpaGuestDeviceAddr, 1);
      d->alias = alias;
      pci_address_of (c, &d->bus, &d->slot);
      g_ptr_array_add (bus->devices, d);
    }
  parse_machine (bus, domain);
  return bus;
}

/* ------------------------------------------------------------------ */
/* For the rewrite                                                     */
/* ------------------------------------------------------------------ */

gint
vpa_guest_topology_address_bus (xmlNode *node, gint *slot)
{
  gint bus;

  pci_address_of (node, &bus, slot);
  return bus;
}

gboolean
vpa_guest_topology_controller_matches (xmlNode *controller, const VpaTopoController *tc)
{
  g_autoptr (GPtrArray) one = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_guest_controller_free);
  VpaGuestBus tmp = { .controllers = one };
  const VpaGuestController *gc;
  const char *model = tc->kind == VPA_TOPO_EXPANDER ? vpa_guest_model_expander_name (tc->machine)
                                                    : "pcie-root-port";

  parse_controller (&tmp, controller);
  if (one->len != 1)
    return FALSE;
  gc = g_ptr_array_index (one, 0);
  if (gc->index != tc->index || g_strcmp0 (gc->model, model) != 0 ||
      g_strcmp0 (gc->alias, tc->alias) != 0)
    return FALSE;
  if (tc->kind == VPA_TOPO_EXPANDER)
    return gc->bus_nr == (gint) tc->bus_nr && gc->node == (gint) tc->cell;
  return gc->parent == (gint) tc->parent && gc->slot == (gint) tc->slot;
}
