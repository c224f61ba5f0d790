/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline-numa.h"
#include "vpa-capacity.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-fit-bind.h"

#include <string.h>

void
vpa_numa_result_free (VpaNumaResult *res)
{
  if (res == NULL)
    return;
  if (res->binding.cells != NULL)
    g_array_unref (res->binding.cells);
  if (res->binding.vcpus != NULL)
    g_ptr_array_unref (res->binding.vcpus);
  if (res->binding.emulator != NULL)
    g_array_unref (res->binding.emulator);
  vpa_fit_free (res->fit);
  g_free (res);
}

/* emulator-threads="isolate": one more dedicated CPU on the node of
 * guest cell 0 (the first in guest order), as Nova's cpuset_reserved. */
static GArray *
emulator_on_cell0 (const VpaDomain *dom, GArray *cells)
{
  if (dom->emulator_isolate && cells->len > 0)
    g_array_index (cells, VpaFitCell, 0).emulator_cpus = 1;
  return cells;
}

/* The guest's cells as the fit sees them; a guest without cells is one
 * cell 0 of every vCPU and all memory. The cells borrow their vCPU
 * arrays, which vcpus_out holds. */
GArray *
vpa_pipeline_numa_cells (const VpaDomain *dom, GPtrArray *vcpus_out)
{
  GArray *cells = g_array_new (FALSE, TRUE, sizeof (VpaFitCell));

  if (dom->cells->len == 0)
    {
      GArray *all = g_array_new (FALSE, FALSE, sizeof (guint));
      VpaFitCell c = { 0, all, dom->memory_kib };
      for (guint v = 0; v < dom->n_vcpus; v++)
        g_array_append_val (all, v);
      g_ptr_array_add (vcpus_out, all);
      g_array_append_val (cells, c);
      return emulator_on_cell0 (dom, cells);
    }
  for (guint i = 0; i < dom->cells->len; i++)
    {
      const VpaDomainCell *dc = g_ptr_array_index (dom->cells, i);
      GArray *vcpus = vpa_cpuset_bits_to_array (dc->vcpus);
      VpaFitCell c = { dc->id, vcpus, dc->memory_kib };
      g_ptr_array_add (vcpus_out, vcpus);
      g_array_append_val (cells, c);
    }
  return emulator_on_cell0 (dom, cells);
}

/* Every vCPU in exactly one cell: an unpinned vCPU of a dedicated guest
 * would float over CPUs other guests are given. */
static gboolean
check_vcpus (const VpaDomain *dom, GError **error)
{
  g_autofree guint8 *seen = NULL;

  if (dom->cells->len == 0)
    return TRUE;
  seen = g_new0 (guint8, dom->n_vcpus);
  for (guint i = 0; i < dom->cells->len; i++)
    {
      const VpaDomainCell *c = g_ptr_array_index (dom->cells, i);
      for (gint b = vpa_cpuset_bits_next (c->vcpus, 0); b >= 0; b = vpa_cpuset_bits_next (c->vcpus, (guint) b + 1))
        {
          guint v = (guint) b;
          if (v >= dom->n_vcpus || seen[v])
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <cpu><numa><cell id='%u'> cpus: vCPU %u is %s", dom->source, c->id, v, v >= dom->n_vcpus ? "beyond <vcpu>" : "in two cells");
              return FALSE;
            }
          seen[v] = 1;
        }
    }
  for (guint v = 0; v < dom->n_vcpus; v++)
    {
      if (!seen[v])
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <vpa:numa placement='auto'>: vCPU %u is in no <cpu><numa><cell>", dom->source, v);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_request (const VpaDomain *dom, GError **error)
{
  if (dom->has_binding && dom->placed_cells->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <vpa:numa placement='auto'> together with a hand-written <numatune>, <vcpupin> or <emulatorpin>: remove one", dom->source);
      return FALSE;
    }
  if (!check_vcpus (dom, error))
    return FALSE;
  if (dom->page_kib != 0 && dom->page_kib <= 4)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <memoryBacking><hugepages><page size='%" G_GUINT64_FORMAT "' KiB>: not a hugepage size", dom->source, dom->page_kib);
      return FALSE;
    }
  return TRUE;
}

VpaNumaResult *
vpa_pipeline_numa_fit (const VpaDomain *dom, const VpaInventory *inv, const VpaConfig *config,
                       GPtrArray *claims, GPtrArray *requests, GString *explain, GError **error)
{
  g_autoptr (VpaNumaResult) res = g_new0 (VpaNumaResult, 1);
  g_autoptr (VpaCapacity) cap = NULL;
  g_autoptr (GPtrArray) vcpus = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GArray) cells = NULL;
  g_autofree gint *fixed = NULL;
  g_autoptr (GPtrArray) net_rules = NULL;
  VpaFitGuest guest = { 0 };

  g_return_val_if_fail (dom != NULL && dom->numa_auto, NULL);
  if (!check_request (dom, error))
    return NULL;
  cap = vpa_capacity_new (inv->host, config, claims, dom->name, error);
  if (cap == NULL)
    return NULL;
  cells = vpa_pipeline_numa_cells (dom, vcpus);
  guest.cells = cells;
  guest.cpu_policy = dom->cpu_policy;
  guest.thread_policy = dom->thread_policy;
  guest.page_kib = dom->page_kib;
  guest.cell_pack = config->cell_pack;
  net_rules = vpa_pipeline_net_rules (dom, config);
  guest.net_rules = net_rules->len > 0 ? net_rules : NULL;
  fixed = vpa_fit_bind_recorded_nodes (dom, cells);
  if (fixed != NULL)
    {
      /* Sticky: the recorded nodes, while they still fit. */
      gsize mark = explain != NULL ? explain->len : 0;
      guest.fixed = fixed;
      res->fit = vpa_fit (cap, inv, requests, &guest, explain, NULL);
      guest.fixed = NULL;
      if (explain != NULL && res->fit == NULL)
        {
          g_string_truncate (explain, mark);
        }
      else if (explain != NULL)
        {
          g_string_append (explain, "guest cells: the recorded host nodes still fit: kept\n");
        }
    }
  if (res->fit == NULL)
    res->fit = vpa_fit (cap, inv, requests, &guest, explain, error);
  if (res->fit == NULL)
    {
      g_prefix_error (error, "%s: ", dom->source);
      return NULL;
    }
  if (!vpa_fit_bind (dom, cap, res->fit, fixed != NULL, vcpus, &res->binding, error))
    return NULL;
  res->nodes = res->fit->nodes;
  return g_steal_pointer (&res);
}
