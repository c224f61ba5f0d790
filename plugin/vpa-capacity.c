/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-capacity.h"

#include <string.h>

static gboolean
set_has (const GArray *set, guint v)
{
  for (guint i = 0; set != NULL && i < set->len; i++)
    {
      if (g_array_index (set, guint, i) == v)
        return TRUE;
    }
  return FALSE;
}

static gboolean
host_has_cpu (const VpaHost *host, guint cpu)
{
  for (guint i = 0; i < host->cells->len; i++)
    {
      if (set_has (g_array_index (host->cells, VpaCell, i).cpus, cpu))
        return TRUE;
    }
  return FALSE;
}

static gboolean
check_cpuset (const VpaHost *host, const VpaConfig *config, const char *key, const GArray *set,
              GError **error)
{
  for (guint i = 0; set != NULL && i < set->len; i++)
    {
      if (!host_has_cpu (host, g_array_index (set, guint, i)))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [host] %s: CPU %u is not on host %s", config->path, key, g_array_index (set, guint, i), host->source);
          return FALSE;
        }
    }
  return TRUE;
}

/* CPUs other domains pin, one NUMA claim per domain: cpu + 1 -> 1 for
 * a CPU one of them holds dedicated (taken from the shared CPUs too),
 * 2 for one a pin lets its threads run on (no dedicated guest takes it;
 * shared guests float on it as they do on every shared CPU). */
static GHashTable *
pinned_cpus (GPtrArray *claims, const char *exclude, GHashTable *seen)
{
  GHashTable *pinned = g_hash_table_new (NULL, NULL);

  for (guint i = 0; claims != NULL && i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);

      if (c->numa == NULL || g_strcmp0 (c->domain, exclude) == 0 ||
          g_hash_table_contains (seen, c->domain))
        continue;
      g_hash_table_add (seen, c->domain);
      for (guint j = 0; j < c->numa->dedicated->len; j++)
        {
          g_hash_table_insert (pinned, GUINT_TO_POINTER (g_array_index (c->numa->dedicated, guint, j) + 1),
                               GUINT_TO_POINTER (1));
        }
      for (guint j = 0; j < c->numa->pinned->len; j++)
        {
          gpointer key = GUINT_TO_POINTER (g_array_index (c->numa->pinned, guint, j) + 1);
          if (!g_hash_table_contains (pinned, key))
            g_hash_table_insert (pinned, key, GUINT_TO_POINTER (2));
        }
    }
  return pinned;
}

static void
claimed_memory (GPtrArray *claims, GHashTable *counted, gint node, guint64 page_kib,
                guint64 *kib)
{
  *kib = 0;
  for (guint i = 0; claims != NULL && i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);

      if (c->numa == NULL || g_hash_table_lookup (counted, c->domain) != c)
        continue;
      for (guint j = 0; j < c->numa->memory->len; j++)
        {
          const VpaMemClaim *m = &g_array_index (c->numa->memory, VpaMemClaim, j);
          if (m->node == node && m->page_kib == page_kib)
            *kib += m->kib;
        }
    }
}

static void
node_cpus (VpaNodeCap *nc, const VpaCell *cell, const VpaConfig *config, GHashTable *pinned)
{
  g_autoptr (GHashTable) group_size = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < cell->cpus->len; i++)
    {
      guint cpu = g_array_index (cell->cpus, guint, i);
      const VpaCpuTopo *t = cell->topo != NULL ? &g_array_index (cell->topo, VpaCpuTopo, i) : NULL;
      guint held = GPOINTER_TO_UINT (g_hash_table_lookup (pinned, GUINT_TO_POINTER (cpu + 1)));
      gboolean taken = held != 0;
      gboolean dedicated = set_has (config->cpu_dedicated_set, cpu);
      guint group = t != NULL ? t->siblings : cpu;

      if (t != NULL && !t->online)
        continue;
      nc->n_cpus++;
      if (dedicated)
        {
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (group_size, GUINT_TO_POINTER (group + 1)));
          g_hash_table_insert (group_size, GUINT_TO_POINTER (group + 1), GUINT_TO_POINTER (n + 1));
          nc->threads_per_core = MAX (nc->threads_per_core, n + 1);
          g_array_append_val (nc->dedicated, cpu);
          if (!taken)
            {
              g_array_append_val (nc->free_dedicated, cpu);
              g_array_append_val (nc->free_groups, group);
            }
        }
      else if (held != 1 && (config->cpu_shared_set == NULL || set_has (config->cpu_shared_set, cpu)))
        g_array_append_val (nc->shared, cpu);
    }
}

static guint64
reserved_pages (const VpaConfig *config, gint node, guint64 size_kib)
{
  guint64 n = 0;
  for (guint i = 0; i < config->reserved_huge_pages->len; i++)
    {
      const VpaReservedPages *r = &g_array_index (config->reserved_huge_pages, VpaReservedPages, i);
      if (r->node == node && r->size_kib == size_kib)
        n += r->count;
    }
  return n;
}

static void
node_memory (VpaNodeCap *nc, const VpaCell *cell, const VpaConfig *config, GPtrArray *claims,
             GHashTable *counted)
{
  guint64 huge_kib = 0;

  for (guint i = 0; cell->pages != NULL && i < cell->pages->len; i++)
    {
      const VpaPages *p = &g_array_index (cell->pages, VpaPages, i);
      VpaNodePages np = { p->size_kib, p->total, 0, 0, 0 };
      guint64 kib, left;

      if (p->size_kib <= 4)
        continue;
      huge_kib += p->total * p->size_kib;
      np.reserved = reserved_pages (config, cell->id, p->size_kib);
      claimed_memory (claims, counted, cell->id, p->size_kib, &kib);
      np.claimed = (kib + p->size_kib - 1) / p->size_kib;
      left = np.total > np.reserved + np.claimed ? np.total - np.reserved - np.claimed : 0;
      np.avail = MIN (left, p->free);
      g_array_append_val (nc->pages, np);
    }
  nc->memory_kib = cell->memory_kib > huge_kib ? cell->memory_kib - huge_kib : 0;
  nc->reserved_kib = config->reserved_memory_kib;
  claimed_memory (claims, counted, cell->id, 0, &nc->claimed_kib);
  nc->avail_kib = nc->memory_kib > nc->reserved_kib + nc->claimed_kib
                    ? nc->memory_kib - nc->reserved_kib - nc->claimed_kib
                    : 0;
}

/* The first NUMA claim of each domain but exclude. */
static GHashTable *
counted_claims (GPtrArray *claims, const char *exclude)
{
  GHashTable *counted = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; claims != NULL && i < claims->len; i++)
    {
      VpaClaim *c = g_ptr_array_index (claims, i);
      if (c->numa != NULL && g_strcmp0 (c->domain, exclude) != 0 &&
          !g_hash_table_contains (counted, c->domain))
        g_hash_table_insert (counted, c->domain, c);
    }
  return counted;
}

static gboolean
check_reserved_pages (const VpaHost *host, const VpaConfig *config, GError **error)
{
  for (guint i = 0; i < config->reserved_huge_pages->len; i++)
    {
      const VpaReservedPages *r = &g_array_index (config->reserved_huge_pages, VpaReservedPages, i);
      const VpaCell *cell = vpa_host_cell (host, r->node);

      if (cell == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [host] reserved-huge-pages: node %d is not on host %s", config->path, r->node, host->source);
          return FALSE;
        }
      if (vpa_cell_pages (cell, r->size_kib) == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [host] reserved-huge-pages: node %d of host %s has no pages of %" G_GUINT64_FORMAT " KiB", config->path, r->node, host->source, r->size_kib);
          return FALSE;
        }
    }
  return TRUE;
}

VpaCapacity *
vpa_capacity_new (const VpaHost *host, const VpaConfig *config, GPtrArray *claims,
                  const char *exclude, GError **error)
{
  g_autoptr (VpaCapacity) cap = g_new0 (VpaCapacity, 1);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) pinned = NULL;
  g_autoptr (GHashTable) counted = NULL;

  g_return_val_if_fail (host != NULL && config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_cpuset (host, config, "cpu-dedicated-set", config->cpu_dedicated_set, error) ||
      !check_cpuset (host, config, "cpu-shared-set", config->cpu_shared_set, error) ||
      !check_reserved_pages (host, config, error) ||
      !vpa_config_check_vswitch_nodes (config, host, error))
    return NULL;
  pinned = pinned_cpus (claims, exclude, seen);
  counted = counted_claims (claims, exclude);
  cap->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_node_cap_free);
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *cell = &g_array_index (host->cells, VpaCell, i);
      VpaNodeCap *nc = g_new0 (VpaNodeCap, 1);

      nc->node = cell->id;
      nc->socket = cell->socket;
      nc->shared_room = G_MAXUINT;
      nc->shared = g_array_new (FALSE, FALSE, sizeof (guint));
      nc->dedicated = g_array_new (FALSE, FALSE, sizeof (guint));
      nc->free_dedicated = g_array_new (FALSE, FALSE, sizeof (guint));
      nc->free_groups = g_array_new (FALSE, FALSE, sizeof (guint));
      nc->pages = g_array_new (FALSE, FALSE, sizeof (VpaNodePages));
      node_cpus (nc, cell, config, pinned);
      node_memory (nc, cell, config, claims, counted);
      g_ptr_array_add (cap->nodes, nc);
    }
  return g_steal_pointer (&cap);
}
