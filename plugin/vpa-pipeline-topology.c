/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline-topology.h"
#include "vpa-guest-bus-rules.h"

#include <string.h>

#include "vpa-pipeline-vswitch.h"
#include "vpa-guest-plan.h"
#include "vpa-xml.h"

/* Each guest cell with the host nodes that back it. Today these are the
 * domain's own binding; whole-guest placement hands its chosen nodes in
 * the same shape. The nodes are borrowed from bind. */
GArray *
vpa_pipeline_guest_cells (const VpaDomain *dom, const VpaBind *bind)
{
  GArray *cells = g_array_new (FALSE, FALSE, sizeof (VpaCellNodes));

  for (guint i = 0; i < dom->cells->len; i++)
    {
      const VpaDomainCell *c = g_ptr_array_index (dom->cells, i);
      VpaCellNodes cn = { c->id, vpa_bind_cell_nodes (bind, i) };
      g_array_append_val (cells, cn);
    }
  return cells;
}

GArray *
vpa_pipeline_guest_cells_of (const guint *cells, const gint *nodes, guint n, GPtrArray **owner)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (VpaCellNodes));

  *owner = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint i = 0; i < n; i++)
    {
      GArray *one = g_array_new (FALSE, FALSE, sizeof (gint));
      VpaCellNodes cn = { cells[i], one };

      g_array_append_val (one, nodes[i]);
      g_ptr_array_add (*owner, one);
      g_array_append_val (out, cn);
    }
  return out;
}

/* The rule of the vSwitch port called alias, or NULL (its network has
 * no NUMA affinity). */
static const VpaNetRule *
rule_of_port (GPtrArray *rules, const char *alias)
{
  for (guint i = 0; i < rules->len; i++)
    {
      const VpaNetRule *r = g_ptr_array_index (rules, i);
      if (g_strcmp0 (r->port, alias) == 0)
        return r;
    }
  return NULL;
}

/* Each vSwitch port's <interface> goes behind the expander of the first
 * guest cell on a host node that serves its network (docs/guest-numa.md);
 * a port whose network no cell's node serves, or has no affinity, stays
 * where libvirt puts it. */
static void
add_vswitch_ports (const VpaDomain *dom, const VpaConfig *config, const GArray *cells,
                   GPtrArray *devices)
{
  g_autoptr (GPtrArray) rules = NULL;

  if (config == NULL || dom->vswitch_ports == NULL || dom->vswitch_ports->len == 0)
    return;
  rules = vpa_pipeline_net_rules (dom, config);
  for (guint i = 0; i < dom->vswitch_ports->len; i++)
    {
      const VpaVswitchPort *p = g_ptr_array_index (dom->vswitch_ports, i);
      const VpaNetRule *r = rule_of_port (rules, p->device);
      gint cell = -1, node = -1;

      /* the cell first in guest order among those that serve it */
      for (guint c = 0; r != NULL && c < cells->len; c++)
        {
          const VpaCellNodes *cn = &g_array_index (cells, VpaCellNodes, c);
          gint hit = -1;
          for (guint k = 0; hit < 0 && k < r->nodes->len; k++)
            {
              if (vpa_guest_model_cell_of_node (cells, g_array_index (r->nodes, gint, k)) == (gint) cn->cell)
                hit = g_array_index (r->nodes, gint, k);
            }
          if (hit >= 0)
            {
              cell = (gint) cn->cell;
              node = hit;
              break;
            }
        }
      g_ptr_array_add (devices, vpa_topo_device_new (p->device, cell, cell >= 0 ? node : -1));
    }
}

/* The guest PCI layout for the decisions, or NULL (no error) when the
 * domain has none of it to write. cells: VpaCellNodes. */
static VpaGuestTopology *
plan_guest_topology (const VpaDomain *dom, const VpaConfig *config, GPtrArray *decisions,
                     const GArray *cells, gboolean keep, GError **error)
{
  g_autoptr (GPtrArray) devices = NULL;

  if (dom->bus == NULL || (!dom->guest_numa && (keep || !vpa_guest_model_bus_has_own (dom->bus))))
    return NULL;
  devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_topo_device_free);
  for (guint i = 0; dom->guest_numa && i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      g_autofree char *alias = vpa_plan_decision_user_alias (d);
      g_ptr_array_add (devices, vpa_topo_device_new (alias, vpa_guest_model_cell_of_node (cells, d->numa_node),
                                                     d->numa_node));
    }
  /* keep (migration, restore): a vSwitch port stays where it is, as the
   * running guest sees it; placing again moves it */
  if (dom->guest_numa && !keep)
    add_vswitch_ports (dom, config, cells, devices);
  return vpa_guest_plan_topology (dom->bus, devices, dom->guest_numa_spare, keep, dom->source,
                                  error);
}

/* The rewritten document, as the rewrite parses it back, must meet
 * libvirt's guest bus rules too: the planner's layout is checked where
 * it is written, not only where it is planned. */
static gboolean
output_meets_bus_rules (const VpaDomain *dom, GError **error)
{
  return vpa_guest_bus_rules_check (dom->bus, dom->source, error);
}

char *
vpa_pipeline_rewrite_placed (const VpaRewriteInput *in, gsize *out_len, GError **error)
{
  g_autoptr (VpaGuestTopology) topo = NULL;
  g_autoptr (GError) local = NULL;

  topo = plan_guest_topology (in->dom, in->config, in->decisions, in->cells,
                              in->keep_guest_topology, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (topo != NULL && in->explain != NULL)
    vpa_guest_plan_explain (topo, in->explain);
  const VpaDoc doc = { in->buf, in->len, in->what };
  return vpa_rewrite_domain_topology (&doc, in->decisions, topo, output_meets_bus_rules, out_len,
                                      error);
}

char *
vpa_pipeline_rewrite_binding (const VpaRewriteInput *in, const char *mid, gsize mid_len,
                              const VpaNumaBinding *binding, gsize *out_len, GError **error)
{
  const VpaDoc doc = { mid, mid_len, in->what };
  VpaXmlGrowth grown;

  vpa_xml_growth (in->buf, in->len, mid, mid_len, &grown);
  return vpa_rewrite_numa_grown (&doc, binding, grown.elements,
                                 grown.attributes, out_len, error);
}

/* With <vpa:guest-numa> on q35, a hot-plugged device goes into a free
 * spare root port of its cell's expander (expanders and root ports
 * cannot be hot-plugged): *out is its guest <address> line. A device
 * whose node backs no guest cell, or an i440fx guest (QEMU's pxb takes
 * no hot-plug), is left where libvirt puts it. */
gboolean
vpa_pipeline_attach_guest_address (const VpaDomain *dom, const VpaBind *bind, const char *alias,
                                   const VpaDevice *dev, gint *out_bus, GError **error)
{
  g_autoptr (GArray) cells = NULL;
  const VpaGuestController *spare;
  char buf[VPA_ADDR_BUFLEN];
  gint cell;

  *out_bus = -1;
  if (!dom->guest_numa || dom->bus == NULL || dom->bus->machine != VPA_MACHINE_Q35)
    return TRUE;
  cells = vpa_pipeline_guest_cells (dom, bind);
  if ((cell = vpa_guest_model_cell_of_node (cells, dev->numa_node)) < 0)
    return TRUE;
  spare = vpa_guest_plan_bus_free_spare (dom->bus, (guint) cell);
  if (spare == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                   "attach: port '%s': device %s on host node %d backs guest cell %d, whose expander bus has no free spare root port (expanders and root ports cannot be hot-plugged): raise spare-ports in <vpa:guest-numa> and place the domain again before it starts",
                   alias, vpa_addr_format (dev->addr, buf), dev->numa_node, cell);
      return FALSE;
    }
  *out_bus = (gint) spare->index;
  return TRUE;
}
