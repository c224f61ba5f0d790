/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The domain model's lifetime and lookups (vpa-domain-model.h).
 */
#include "vpa-domain-model.h"

#include <string.h>

void
vpa_vswitch_port_free (VpaVswitchPort *port)
{
  if (port == NULL)
    return;
  g_free (port->device);
  g_free (port->physnet);
  g_free (port->iface_type);
  g_free (port);
}

void
vpa_device_request_free (VpaDeviceRequest *req)
{
  if (req == NULL)
    return;
  g_free (req->alias);
  g_free (req->name);
  g_free (req->locality_group);
  g_free (req);
}

void
vpa_locality_group_free (VpaLocalityGroup *group)
{
  if (group == NULL)
    return;
  g_free (group->name);
  g_free (group);
}

const VpaLocalityGroup *
vpa_domain_model_locality_group (const VpaDomain *dom, const char *name)
{
  for (guint i = 0; name != NULL && i < dom->locality_groups->len; i++)
    {
      const VpaLocalityGroup *g = g_ptr_array_index (dom->locality_groups, i);
      if (strcmp (g->name, name) == 0)
        return g;
    }
  return NULL;
}

static void
port_request_free (VpaPortRequest *port)
{
  g_free (port->device);
  g_free (port->physnet);
  g_free (port->pf_group);
  g_free (port->locality_group);
  g_free (port->network);
  g_free (port);
}

static void
alias_request_free (VpaAliasRequest *req)
{
  g_free (req->name);
  g_free (req);
}

static void
domain_hostdev_free (VpaDomainHostdev *hd)
{
  g_free (hd->alias);
  g_free (hd);
}

static void
placed_record_free (VpaPlacedRecord *rec)
{
  g_free (rec->device);
  g_free (rec->locality_group);
  g_free (rec->network);
  g_free (rec);
}

static void
domain_cell_free (VpaDomainCell *cell)
{
  vpa_cpuset_bits_free (cell->vcpus);
  vpa_cpuset_bits_free (cell->nodeset);
  vpa_cpuset_bits_free (cell->cpuset);
  g_free (cell);
}

void
vpa_placed_cell_clear (VpaPlacedCell *pc)
{
  g_clear_pointer (&pc->cpus, g_array_unref);
  g_clear_pointer (&pc->reserved, g_array_unref);
  g_clear_pointer (&pc->emulator, g_array_unref);
}

static void
placed_cell_clear (gpointer p)
{
  vpa_placed_cell_clear (p);
}

VpaDomain *
vpa_domain_new (const char *what)
{
  VpaDomain *dom = g_new0 (VpaDomain, 1);
  dom->source = g_strdup (what);
  dom->alias_requests = g_ptr_array_new_with_free_func ((GDestroyNotify) alias_request_free);
  dom->ports = g_ptr_array_new_with_free_func ((GDestroyNotify) port_request_free);
  dom->vswitch_ports = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_vswitch_port_free);
  dom->implicit_nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  dom->hostdevs = g_ptr_array_new_with_free_func ((GDestroyNotify) domain_hostdev_free);
  dom->placed = g_ptr_array_new_with_free_func ((GDestroyNotify) placed_record_free);
  dom->cells = g_ptr_array_new_with_free_func ((GDestroyNotify) domain_cell_free);
  dom->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_request_free);
  dom->locality_groups =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_locality_group_free);
  dom->placed_cells = g_array_new (FALSE, TRUE, sizeof (VpaPlacedCell));
  g_array_set_clear_func (dom->placed_cells, placed_cell_clear);
  dom->n_vcpus = 1;
  return dom;
}

void
vpa_domain_free (VpaDomain *dom)
{
  if (dom == NULL)
    return;
  g_free (dom->name);
  g_free (dom->uuid);
  g_free (dom->source);
  g_ptr_array_unref (dom->alias_requests);
  g_ptr_array_unref (dom->ports);
  g_ptr_array_unref (dom->vswitch_ports);
  g_array_unref (dom->implicit_nodes);
  g_ptr_array_unref (dom->hostdevs);
  g_ptr_array_unref (dom->placed);
  g_ptr_array_unref (dom->cells);
  g_ptr_array_unref (dom->devices);
  g_ptr_array_unref (dom->locality_groups);
  vpa_cpuset_bits_free (dom->memory_nodeset);
  g_array_unref (dom->placed_cells);
  vpa_guest_bus_free (dom->bus);
  g_free (dom);
}

const VpaBits *
vpa_domain_model_cell_nodeset (const VpaDomain *dom, const VpaDomainCell *cell)
{
  return cell->nodeset != NULL ? cell->nodeset : dom->memory_nodeset;
}
