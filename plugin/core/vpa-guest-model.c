/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest's PCI layout and its plan (vpa-guest-model.h).
 */
#include "vpa-guest-model.h"

void
vpa_guest_controller_free (VpaGuestController *c)
{
  g_free (c->model);
  g_free (c->alias);
  g_free (c);
}

static void
guest_device_addr_free (VpaGuestDeviceAddr *d)
{
  g_free (d->alias);
  g_free (d);
}

void
vpa_guest_element_free (VpaGuestElement *e)
{
  g_free (e->name);
  g_free (e->type);
  g_free (e->mode);
  g_free (e->index);
  g_free (e->model);
  g_free (e->alias);
  for (guint i = 0; i < G_N_ELEMENTS (e->address); i++)
    g_free (e->address[i]);
  g_free (e->bus_nr);
  g_free (e->node);
  g_free (e);
}

VpaGuestFacts *
vpa_guest_facts_new (void)
{
  VpaGuestFacts *facts = g_new0 (VpaGuestFacts, 1);

  facts->cell_ids = g_ptr_array_new_with_free_func (g_free);
  facts->elements = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_guest_element_free);
  return facts;
}

void
vpa_guest_facts_free (VpaGuestFacts *facts)
{
  if (facts == NULL)
    return;
  g_ptr_array_unref (facts->cell_ids);
  g_ptr_array_unref (facts->elements);
  g_free (facts);
}

void
vpa_guest_bus_free (VpaGuestBus *bus)
{
  if (bus == NULL)
    return;
  vpa_guest_facts_free (bus->facts);
  g_free (bus->machine_name);
  g_ptr_array_unref (bus->controllers);
  g_ptr_array_unref (bus->devices);
  g_ptr_array_unref (bus->occupants);
  g_free (bus);
}

VpaTopoDevice *
vpa_topo_device_new (const char *device, gint cell, gint host_node)
{
  VpaTopoDevice *d = g_new0 (VpaTopoDevice, 1);

  d->device = g_strdup (device);
  d->cell = cell;
  d->host_node = host_node;
  return d;
}

void
vpa_topo_device_free (VpaTopoDevice *dev)
{
  if (dev == NULL)
    return;
  g_free (dev->device);
  g_free (dev);
}

static void
topo_controller_free (VpaTopoController *c)
{
  g_free (c->alias);
  g_free (c->device);
  g_free (c);
}

void
vpa_topo_placement_free (VpaTopoPlacement *p)
{
  g_free (p->device);
  g_free (p);
}

void
vpa_guest_topology_free (VpaGuestTopology *topo)
{
  if (topo == NULL)
    return;
  g_ptr_array_unref (topo->controllers);
  g_ptr_array_unref (topo->placements);
  g_ptr_array_unref (topo->unplaced);
  g_free (topo);
}

VpaGuestTopology *
vpa_guest_topology_new (VpaMachineKind machine)
{
  VpaGuestTopology *t = g_new0 (VpaGuestTopology, 1);

  t->machine = machine;
  t->controllers = g_ptr_array_new_with_free_func ((GDestroyNotify) topo_controller_free);
  t->placements = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_topo_placement_free);
  t->unplaced = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_topo_device_free);
  return t;
}

VpaGuestBus *
vpa_guest_bus_new (void)
{
  VpaGuestBus *bus = g_new0 (VpaGuestBus, 1);

  bus->controllers = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_guest_controller_free);
  bus->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) guest_device_addr_free);
  bus->occupants = g_ptr_array_new_with_free_func ((GDestroyNotify) guest_device_addr_free);
  return bus;
}

gboolean
vpa_guest_model_topology_owns (const char *alias)
{
  return alias != NULL &&
         (g_str_has_prefix (alias, VPA_TOPO_PXB_PREFIX) || g_str_has_prefix (alias, VPA_TOPO_RP_PREFIX));
}

gboolean
vpa_guest_model_bus_has_own (const VpaGuestBus *bus)
{
  for (guint i = 0; i < bus->controllers->len; i++)
    {
      if (vpa_guest_model_topology_owns (((const VpaGuestController *) g_ptr_array_index (bus->controllers, i))->alias))
        return TRUE;
    }
  return FALSE;
}

gint
vpa_guest_model_cell_of_node (const GArray *cells, gint node)
{
  if (node < 0 || cells == NULL)
    return -1;
  for (guint i = 0; i < cells->len; i++)
    {
      const VpaCellNodes *c = &g_array_index (cells, VpaCellNodes, i);
      for (guint j = 0; c->nodes != NULL && j < c->nodes->len; j++)
        {
          if (g_array_index (c->nodes, gint, j) == node)
            return (gint) c->cell;
        }
    }
  return -1;
}

const char *
vpa_guest_model_expander_name (VpaMachineKind m)
{
  return m == VPA_MACHINE_Q35 ? "pcie-expander-bus" : "pci-expander-bus";
}
