/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The whole-guest binding a fit decides (vpa-fit-bind.h): sticky CPUs,
 * the emulator threads' CPUs, the plan the rewrite writes.
 */
#include "vpa-fit-bind.h"

/* The recorded node of each cell, when every cell has a record. */
gint *
vpa_fit_bind_recorded_nodes (const VpaDomain *dom, const GArray *cells)
{
  g_autofree gint *fixed = g_new (gint, MAX (cells->len, 1));

  for (guint c = 0; c < cells->len; c++)
    {
      guint id = g_array_index (cells, VpaFitCell, c).id;
      fixed[c] = -1;
      for (guint r = 0; r < dom->placed_cells->len; r++)
        {
          if (g_array_index (dom->placed_cells, VpaPlacedCell, r).cell == id)
            fixed[c] = g_array_index (dom->placed_cells, VpaPlacedCell, r).node;
        }
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
        {
          if (g_array_index (pc->cpus, guint, j) == cpu)
            return TRUE;
        }
      for (guint j = 0; pc->reserved != NULL && j < pc->reserved->len; j++)
        {
          if (g_array_index (pc->reserved, guint, j) == cpu)
            return TRUE;
        }
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
      const VpaNodeCap *nc = vpa_capacity_model_node (cap, b->node);

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
  for (guint i = 0; from != NULL && i < from->len; i++)
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
make_binding (const VpaDomain *dom, const VpaFit *fit, GPtrArray *vcpus, VpaNumaBinding *b)
{
  b->dedicated = dom->cpu_policy == VPA_CPU_POLICY_DEDICATED;
  b->memnodes = dom->cells->len > 0;
  b->cells = g_array_new (FALSE, TRUE, sizeof (VpaPlacedCell));
  g_array_set_clear_func (b->cells, (GDestroyNotify) vpa_placed_cell_clear);
  b->vcpus = g_ptr_array_ref (vcpus);
  b->emulator = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint c = 0; c < fit->bindings->len; c++)
    {
      const VpaCellBinding *cb = &g_array_index (fit->bindings, VpaCellBinding, c);
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
  if (dom->emulator_isolate && fit->bindings->len > 0)
    {
      const VpaCellBinding *cb0 = &g_array_index (fit->bindings, VpaCellBinding, 0);
      g_array_set_size (b->emulator, 0);
      add_unique (b->emulator, cb0->emulator);
    }
}

gboolean
vpa_fit_bind (const VpaDomain *dom, const VpaCapacity *cap, VpaFit *fit, gboolean sticky,
              GPtrArray *vcpus, VpaNumaBinding *out, GError **error)
{
  g_return_val_if_fail (dom != NULL && cap != NULL && fit != NULL && out != NULL, FALSE);

  if (sticky)
    keep_recorded_cpus (dom, cap, fit);
  make_binding (dom, fit, vcpus, out);
  return !dom->emulator_share || shared_emulator (dom, cap, out->emulator, error);
}
