/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One guest cell on one host node (docs/placement.md): its dedicated or
 * shared CPUs packed onto the node's cores under the thread policy, the
 * emulator threads' CPUs, its memory and its huge pages. Cells never
 * couple here; vpa-fit.c searches the sets of nodes.
 */
#include "vpa-fit.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* One cell on one node                                                */
/* ------------------------------------------------------------------ */

/* The node's free dedicated CPUs as thread-sibling sets, each ascending,
 * sets by their first CPU. */
static GPtrArray *
free_sibling_sets (const VpaNodeCap *nc)
{
  GPtrArray *sets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GHashTable) by_group = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < nc->free_dedicated->len; i++)
    {
      guint cpu = g_array_index (nc->free_dedicated, guint, i);
      guint group = g_array_index (nc->free_groups, guint, i);
      GArray *set = g_hash_table_lookup (by_group, GUINT_TO_POINTER (group + 1));

      if (set == NULL)
        {
          set = g_array_new (FALSE, FALSE, sizeof (guint));
          g_ptr_array_add (sets, set);
          g_hash_table_insert (by_group, GUINT_TO_POINTER (group + 1), set);
        }
      g_array_append_val (set, cpu);
    }
  return sets;
}

/* Nova's _get_pinning: the first threads_no threads of each set, in
 * order, for n vCPUs; NULL if short. */
static GArray *
pin_from_sets (GPtrArray *sets, guint min_len, guint threads_no, guint n)
{
  GArray *pins = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint s = 0; s < sets->len && pins->len < n; s++)
    {
      GArray *set = g_ptr_array_index (sets, s);
      if (set->len < min_len)
        continue;
      for (guint t = 0; t < MIN (threads_no, set->len) && pins->len < n; t++)
        g_array_append_val (pins, g_array_index (set, guint, t));
    }
  if (pins->len < n)
    {
      g_clear_pointer (&pins, g_array_unref);
    }
  return pins;
}

/* Nova's _pack_instance_onto_cores over the node's free dedicated CPUs. */
static GArray *
pack_onto_cores (const VpaNodeCap *nc, guint n, VpaThreadPolicy policy, GArray **reserved,
                 char **why)
{
  g_autoptr (GPtrArray) sets = free_sibling_sets (nc);
  guint tpc = MAX (nc->threads_per_core, 1);
  GArray *pins = NULL;

  *reserved = g_array_new (FALSE, FALSE, sizeof (guint));
  if (policy == VPA_THREAD_POLICY_ISOLATE)
    {
      pins = pin_from_sets (sets, tpc, 1, n);
      if (pins == NULL)
        *why = g_strdup_printf ("%u whole free cores (isolate)", n);
      for (guint s = 0; pins != NULL && s < sets->len; s++)
        {
          GArray *set = g_ptr_array_index (sets, s);
          gboolean used = FALSE;
          for (guint p = 0; p < pins->len && !used; p++)
            used = set->len >= tpc && g_array_index (set, guint, 0) == g_array_index (pins, guint, p);
          for (guint t = 1; used && t < set->len; t++)
            g_array_append_val (*reserved, g_array_index (set, guint, t));
        }
      return pins;
    }
  if (policy == VPA_THREAD_POLICY_REQUIRE && tpc <= 1)
    {
      *why = g_strdup ("thread siblings (require), and its CPUs have none");
      return NULL;
    }
  for (guint t = tpc; t >= 1 && pins == NULL; t--)
    {
      if (policy == VPA_THREAD_POLICY_REQUIRE && t <= 1)
        break;
      pins = pin_from_sets (sets, t, t, n);
    }
  /* Nova's last resort: every free CPU as a core of its own, in order. */
  if (pins == NULL && policy != VPA_THREAD_POLICY_REQUIRE)
    pins = pin_from_sets (sets, 1, G_MAXUINT, n);
  if (pins == NULL)
    {
      *why = g_strdup_printf ("%u free dedicated CPUs%s", n,
                              policy == VPA_THREAD_POLICY_REQUIRE ? " on sibling threads (require)" : "");
    }
  return pins;
}

static gboolean
contains (const GArray *set, guint v)
{
  for (guint i = 0; set != NULL && i < set->len; i++)
    {
      if (g_array_index (set, guint, i) == v)
        return TRUE;
    }
  return FALSE;
}

/* Nova's _get_reserved: the first k free dedicated CPUs, cores in order,
 * that no vCPU is pinned to and, with isolate, off the cores the vCPUs
 * pin (whose other threads are kept); NULL if short. */
static GArray *
emulator_cpus (const VpaNodeCap *nc, const GArray *pins, const GArray *kept, guint k)
{
  g_autoptr (GPtrArray) sets = free_sibling_sets (nc);
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint s = 0; s < sets->len && out->len < k; s++)
    {
      GArray *set = g_ptr_array_index (sets, s);
      for (guint t = 0; t < set->len && out->len < k; t++)
        {
          guint cpu = g_array_index (set, guint, t);
          if (!contains (pins, cpu) && !contains (kept, cpu))
            g_array_append_val (out, cpu);
        }
    }
  return out->len < k ? NULL : g_steal_pointer (&out);
}

/* The vCPUs' CPUs and, with emulator_cpus, the emulator's (Nova's
 * num_cpu_reserved): NULL and *why when the node has not both. */
static GArray *
dedicated_cpus (const VpaNodeCap *nc, const VpaFitCell *cell, const VpaFitGuest *guest,
                GArray **reserved, GArray **emulator, char **why)
{
  guint n = cell->vcpus->len, k = cell->emulator_cpus;
  g_autoptr (GArray) cpus = NULL;

  if (nc->free_dedicated->len < n + k)
    {
      if (k == 0)
        {
          *why = g_strdup_printf ("%u free dedicated CPUs (%u of %u free)", n, nc->free_dedicated->len, nc->dedicated->len);
        }
      else
        {
          *why = g_strdup_printf ("%u free dedicated CPUs, %u of them the emulator's (%u of %u free)", n + k, k, nc->free_dedicated->len, nc->dedicated->len);
        }
      return NULL;
    }
  cpus = pack_onto_cores (nc, n, guest->thread_policy, reserved, why);
  if (cpus == NULL || k == 0)
    {
      *emulator = g_array_new (FALSE, FALSE, sizeof (guint));
      return g_steal_pointer (&cpus);
    }
  *emulator = emulator_cpus (nc, cpus, *reserved, k);
  if (*emulator == NULL)
    {
      *why = g_strdup_printf ("a free dedicated CPU for the emulator threads off the %u cores the vCPUs take (isolate)", n);
      return NULL;
    }
  return g_steal_pointer (&cpus);
}

static gboolean
cell_memory (const VpaNodeCap *nc, const VpaFitCell *cell, const VpaFitGuest *guest, char **why)
{
  if (guest->page_kib != 0)
    {
      const VpaNodePages *p = vpa_capacity_model_node_pages (nc, guest->page_kib);
      guint64 need = (cell->memory_kib + guest->page_kib - 1) / guest->page_kib;

      if (p == NULL)
        {
          *why = g_strdup_printf ("pages of %" G_GUINT64_FORMAT " KiB (it has none)", guest->page_kib);
          return FALSE;
        }
      if (cell->memory_kib % guest->page_kib != 0)
        {
          *why = g_strdup_printf ("a whole number of %" G_GUINT64_FORMAT " KiB pages (the cell has %" G_GUINT64_FORMAT " KiB)", guest->page_kib, cell->memory_kib);
          return FALSE;
        }
      if (p->avail < need)
        {
          *why = g_strdup_printf ("%" G_GUINT64_FORMAT " pages of %" G_GUINT64_FORMAT " KiB (%" G_GUINT64_FORMAT " free)", need, guest->page_kib, p->avail);
          return FALSE;
        }
      return TRUE;
    }
  if (nc->avail_kib < cell->memory_kib)
    {
      *why = g_strdup_printf ("%" G_GUINT64_FORMAT " KiB of memory (%" G_GUINT64_FORMAT " free)", cell->memory_kib, nc->avail_kib);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_fit_cell (const VpaNodeCap *nc, const VpaFitCell *cell, const VpaFitGuest *guest,
              VpaCellBinding *binding, char **why)
{
  guint n = cell->vcpus->len;
  g_autoptr (GArray) cpus = NULL;
  g_autoptr (GArray) reserved = NULL;
  g_autoptr (GArray) emulator = NULL;
  g_autofree char *lack = NULL;

  if (!cell_memory (nc, cell, guest, &lack))
    {
      ;
    }
  else if (guest->cpu_policy == VPA_CPU_POLICY_SHARED)
    {
      if (nc->shared->len < MAX (n, 1))
        {
          lack = g_strdup_printf ("%u shared CPUs (it has %u)", MAX (n, 1), nc->shared->len);
        }
      else if (nc->shared_room < n)
        {
          lack = g_strdup_printf ("room for %u shared vCPUs (%u left)", n, nc->shared_room);
        }
      else
        {
          cpus = g_array_copy (nc->shared);
          reserved = g_array_new (FALSE, FALSE, sizeof (guint));
          emulator = g_array_new (FALSE, FALSE, sizeof (guint));
        }
    }
  else
    cpus = dedicated_cpus (nc, cell, guest, &reserved, &emulator, &lack);
  if (cpus == NULL)
    {
      if (why != NULL)
        *why = g_steal_pointer (&lack);
      return FALSE;
    }
  if (binding != NULL)
    {
      binding->cell = cell->id;
      binding->node = nc->node;
      binding->cpus = g_steal_pointer (&cpus);
      binding->reserved = g_steal_pointer (&reserved);
      binding->emulator = g_steal_pointer (&emulator);
      binding->memory_kib = cell->memory_kib;
    }
  return TRUE;
}
