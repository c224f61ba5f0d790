/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline-numa.h"
#include "vpa-capacity.h"
#include "vpa-pipeline-vswitch.h"

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
      GArray *vcpus = vpa_bits_to_array (dc->vcpus);
      VpaFitCell c = { dc->id, vcpus, dc->memory_kib };
      g_ptr_array_add (vcpus_out, vcpus);
      g_array_append_val (cells, c);
    }
  return emulator_on_cell0 (dom, cells);
}

/* The recorded node of each cell, when every cell has a record. */
static gint *
recorded_nodes (const VpaDomain *dom, const GArray *cells)
{
  g_autofree gint *fixed = g_new (gint, MAX (cells->len, 1));

  for (guint c = 0; c < cells->len; c++)
    {
      guint id = g_array_index (cells, VpaFitCell, c).id;
      fixed[c] = -1;
      for (guint r = 0; r < dom->placed_cells->len; r++)
        if (g_array_index (dom->placed_cells, VpaPlacedCell, r).cell == id)
          fixed[c] = g_array_index (dom->placed_cells, VpaPlacedCell, r).node;
      if (fixed[c] < 0)
        return NULL;
    }
  return g_steal_pointer (&fixed);
}

static gboolean
all_free (const VpaNodeCap *nc, const GArray *cpus)
{
  for (guint i = 0; i < cpus->len; i++)
    {
      gboolean found = FALSE;
      for (guint j = 0; j < nc->free_dedicated->len && !found; j++)
        found = g_array_index (nc->free_dedicated, guint, j) == g_array_index (cpus, guint, i);
      if (!found)
        return FALSE;
    }
  return TRUE;
}

/* Whether the emulator's CPUs are among a record's vCPU CPUs or kept
 * siblings: then the cell takes the fresh ones, which do not clash. */
static gboolean
overlaps (const GArray *emulator, const VpaPlacedCell *pc)
{
  for (guint i = 0; emulator != NULL && i < emulator->len; i++)
    {
      guint cpu = g_array_index (emulator, guint, i);
      for (guint j = 0; j < pc->cpus->len; j++)
        if (g_array_index (pc->cpus, guint, j) == cpu)
          return TRUE;
      for (guint j = 0; pc->reserved != NULL && j < pc->reserved->len; j++)
        if (g_array_index (pc->reserved, guint, j) == cpu)
          return TRUE;
    }
  return FALSE;
}

/* isolate's recorded emulator CPU stays while it is free and clear of
 * the cell's vCPUs and kept siblings. */
static void
keep_recorded_emulator (const VpaNodeCap *nc, const VpaPlacedCell *pc, VpaCellBinding *b)
{
  VpaPlacedCell kept = { 0 };

  if (pc->emulator == NULL || b->emulator == NULL || pc->emulator->len != b->emulator->len ||
      !all_free (nc, pc->emulator))
    return;
  kept.cpus = b->cpus;
  kept.reserved = b->reserved;
  if (overlaps (pc->emulator, &kept))
    return;
  g_array_set_size (b->emulator, 0);
  g_array_append_vals (b->emulator, pc->emulator->data, pc->emulator->len);
}

/* Sticky CPUs: a dedicated cell whose recorded CPUs are all still free
 * keeps them. */
static void
keep_recorded_cpus (const VpaDomain *dom, const VpaCapacity *cap, VpaFit *fit)
{
  for (guint c = 0; c < fit->bindings->len; c++)
    {
      VpaCellBinding *b = &g_array_index (fit->bindings, VpaCellBinding, c);
      const VpaNodeCap *nc = vpa_capacity_node (cap, b->node);

      for (guint r = 0; r < dom->placed_cells->len; r++)
        {
          const VpaPlacedCell *pc = &g_array_index (dom->placed_cells, VpaPlacedCell, r);
          if (pc->cell != b->cell || pc->node != b->node || pc->cpus->len != b->cpus->len ||
              nc == NULL || !all_free (nc, pc->cpus) || overlaps (b->emulator, pc))
            continue;
          g_array_set_size (b->cpus, 0);
          g_array_append_vals (b->cpus, pc->cpus->data, pc->cpus->len);
          keep_recorded_emulator (nc, pc, b);
        }
    }
}

static gint
uint_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

static void
add_unique (GArray *set, const GArray *from)
{
  for (guint i = 0; i < from->len; i++)
    {
      guint v = g_array_index (from, guint, i);
      gboolean seen = FALSE;
      for (guint j = 0; j < set->len && !seen; j++)
        seen = g_array_index (set, guint, j) == v;
      if (!seen)
        g_array_append_val (set, v);
    }
}

/* emulator-threads="share": the host's shared CPUs (cpu-shared-set,
 * less what other domains hold dedicated), as Nova's
 * hw:emulator_threads_policy=share with [compute] cpu_shared_set. */
static gboolean
shared_emulator (const VpaDomain *dom, const VpaCapacity *cap, GArray *emulator, GError **error)
{
  g_array_set_size (emulator, 0);
  for (guint i = 0; i < cap->nodes->len; i++)
    add_unique (emulator, ((const VpaNodeCap *) g_ptr_array_index (cap->nodes, i))->shared);
  if (emulator->len > 0)
    {
      g_array_sort (emulator, (GCompareFunc) uint_cmp);
      return TRUE;
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
               "%s: <vpa:numa emulator-threads='share'>: the host has no shared CPU for the "
               "emulator threads (cpu-shared-set is empty or every shared CPU is held)",
               dom->source);
  return FALSE;
}

static void
make_binding (const VpaDomain *dom, VpaNumaResult *res, GPtrArray *vcpus)
{
  VpaNumaBinding *b = &res->binding;

  b->dedicated = dom->cpu_policy == VPA_CPU_POLICY_DEDICATED;
  b->memnodes = dom->cells->len > 0;
  b->cells = g_array_new (FALSE, TRUE, sizeof (VpaPlacedCell));
  g_array_set_clear_func (b->cells, (GDestroyNotify) vpa_placed_cell_clear);
  b->vcpus = g_ptr_array_ref (vcpus);
  b->emulator = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint c = 0; c < res->fit->bindings->len; c++)
    {
      const VpaCellBinding *cb = &g_array_index (res->fit->bindings, VpaCellBinding, c);
      VpaPlacedCell pc = { cb->cell, cb->node, g_array_copy (cb->cpus), cb->memory_kib, NULL, NULL };

      /* isolate's kept siblings are recorded, never given to the
       * emulator threads: they are the noise isolate keeps away */
      if (cb->reserved != NULL && cb->reserved->len > 0)
        pc.reserved = g_array_copy (cb->reserved);
      /* isolate's emulator CPU, recorded as Nova's cpuset_reserved */
      if (cb->emulator != NULL && cb->emulator->len > 0)
        pc.emulator = g_array_copy (cb->emulator);
      g_array_append_val (b->cells, pc);
      add_unique (b->emulator, cb->cpus);
    }
  /* isolate: the emulator threads on their own dedicated CPU, which
   * cell 0's binding holds */
  if (dom->emulator_isolate && res->fit->bindings->len > 0)
    {
      const VpaCellBinding *cb0 = &g_array_index (res->fit->bindings, VpaCellBinding, 0);
      g_array_set_size (b->emulator, 0);
      add_unique (b->emulator, cb0->emulator);
    }
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
      for (gint b = vpa_bits_next (c->vcpus, 0); b >= 0; b = vpa_bits_next (c->vcpus, (guint) b + 1))
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
    if (!seen[v])
      {
        g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <vpa:numa placement='auto'>: vCPU %u is in no <cpu><numa><cell>", dom->source, v);
        return FALSE;
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
  fixed = recorded_nodes (dom, cells);
  if (fixed != NULL)
    {
      /* Sticky: the recorded nodes, while they still fit. */
      gsize mark = explain != NULL ? explain->len : 0;
      guest.fixed = fixed;
      res->fit = vpa_fit (cap, inv, requests, &guest, explain, NULL);
      guest.fixed = NULL;
      if (explain != NULL && res->fit == NULL)
        g_string_truncate (explain, mark);
      else if (explain != NULL)
        g_string_append (explain, "guest cells: the recorded host nodes still fit: kept\n");
    }
  if (res->fit == NULL)
    res->fit = vpa_fit (cap, inv, requests, &guest, explain, error);
  if (res->fit == NULL)
    {
      g_prefix_error (error, "%s: ", dom->source);
      return NULL;
    }
  if (fixed != NULL)
    keep_recorded_cpus (dom, cap, res->fit);
  res->nodes = res->fit->nodes;
  make_binding (dom, res, vcpus);
  if (dom->emulator_share && !shared_emulator (dom, cap, res->binding.emulator, error))
    return NULL;
  return g_steal_pointer (&res);
}
