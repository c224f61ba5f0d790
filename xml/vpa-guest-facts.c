/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What libvirt's bus rules (policy/vpa-guest-bus-rules.h) read of a
 * domain, as raw strings: the ids of the <cpu><numa> cells and, of every
 * element of <devices> that libvirt gives an alias and an address, its
 * type, mode, index, model, user alias, guest <address type='pci'>
 * fields and a controller's <target>. Read only: the rules decide.
 */
#include "vpa-guest-topology.h"
#include "vpa-xml.h"

#include <string.h>

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
is_info_device (const char *name)
{
  for (guint i = 0; info_devices[i] != NULL; i++)
    {
      if (strcmp (info_devices[i], name) == 0)
        return TRUE;
    }
  return FALSE;
}

static char *
user_alias (xmlNode *node)
{
  xmlNode *alias = vpa_xml_child (node, "alias", NULL);
  char *name = alias != NULL ? vpa_xml_prop (alias, "name") : NULL;

  /* libvirt keeps only user aliases ("ua-") of a document it defines */
  if (name != NULL && !g_str_has_prefix (name, "ua-"))
    {
      g_clear_pointer (&name, g_free);
    }
  return name;
}

static void
read_address (VpaGuestElement *e, xmlNode *dev)
{
  static const char *const fields[] = { "domain", "bus", "slot", "function" };
  xmlNode *addr = vpa_xml_child (dev, "address", NULL);
  g_autofree char *type = addr != NULL ? vpa_xml_prop (addr, "type") : NULL;

  if (g_strcmp0 (type, "pci") != 0)
    return;
  e->pci_address = TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    e->address[i] = vpa_xml_prop (addr, fields[i]);
}

static void
read_target (VpaGuestElement *e, xmlNode *ctl)
{
  xmlNode *target = vpa_xml_child (ctl, "target", NULL);
  xmlNode *node = target != NULL ? vpa_xml_child (target, "node", NULL) : NULL;

  e->bus_nr = target != NULL ? vpa_xml_prop (target, "busNr") : NULL;
  e->node = node != NULL ? vpa_xml_text (node) : NULL;
}

static VpaGuestElement *
read_element (xmlNode *dev)
{
  VpaGuestElement *e = g_new0 (VpaGuestElement, 1);

  e->name = g_strdup ((const char *) dev->name);
  e->type = vpa_xml_prop (dev, "type");
  e->mode = vpa_xml_prop (dev, "mode");
  e->index = vpa_xml_prop (dev, "index");
  e->model = vpa_xml_prop (dev, "model");
  e->alias = user_alias (dev);
  read_address (e, dev);
  if (vpa_xml_is (dev, "controller", NULL))
    read_target (e, dev);
  return e;
}

VpaGuestFacts *
vpa_guest_facts_parse (xmlNode *domain)
{
  VpaGuestFacts *facts = vpa_guest_facts_new ();
  xmlNode *cpu = vpa_xml_child (domain, "cpu", NULL);
  xmlNode *numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);

  for (xmlNode *e = numa != NULL ? numa->children : NULL; e != NULL; e = e->next)
    {
      if (vpa_xml_is (e, "cell", NULL))
        g_ptr_array_add (facts->cell_ids, vpa_xml_prop (e, "id"));
    }
  for (xmlNode *d = devices != NULL ? devices->children : NULL; d != NULL; d = d->next)
    {
      if (d->type == XML_ELEMENT_NODE && is_info_device ((const char *) d->name))
        g_ptr_array_add (facts->elements, read_element (d));
    }
  return facts;
}
