/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host nodes backing a domain's guest cells (vpa-bind.h): decided
 * beside the parsed domain, which stays as parsed.
 */
#include "vpa-bind.h"
#include "vpa-cpuset.h"

#include <string.h>

/* "0-3,8" */
static char *
format_bits (const VpaBits *set, guint max_len)
{
  GString *s = g_string_new (NULL);

  for (gint lo = vpa_cpuset_bits_next (set, 0); lo >= 0;)
    {
      gint hi = lo;
      while (vpa_cpuset_bits_has (set, (guint) hi + 1))
        hi++;
      if (s->len > max_len)
        {
          g_string_append (s, ",…");
          break;
        }
      g_string_append_printf (s, "%s%d", s->len ? "," : "", lo);
      if (hi > lo)
        g_string_append_printf (s, "-%d", hi);
      lo = vpa_cpuset_bits_next (set, (guint) hi + 1);
    }
  return g_string_free (s, FALSE);
}

/* The host's NUMA nodes and which node holds each CPU (-1: none), and
 * one past its highest CPU. */
typedef struct {
  VpaBits *nodes;
  GArray *cpu_node; /* gint, indexed by CPU id */
} HostTopo;

static void
host_topo_clear (HostTopo *t)
{
  g_clear_pointer (&t->nodes, vpa_cpuset_bits_free);
  g_clear_pointer (&t->cpu_node, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HostTopo, host_topo_clear)

static void
host_topo_init (HostTopo *t, const VpaHost *host)
{
  t->nodes = vpa_cpuset_bits_new ();
  t->cpu_node = g_array_new (FALSE, FALSE, sizeof (gint));
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->id >= 0 && c->id <= VPA_CPUSET_MAX)
        vpa_cpuset_bits_set_range (t->nodes, (guint) c->id, (guint) c->id, TRUE);
      for (guint j = 0; c->cpus != NULL && j < c->cpus->len; j++)
        {
          guint cpu = g_array_index (c->cpus, guint, j);
          if (cpu > VPA_CPUSET_MAX)
            continue; /* no guest can pin to it */
          while (t->cpu_node->len <= cpu)
            {
              gint none = -1;
              g_array_append_val (t->cpu_node, none);
            }
          g_array_index (t->cpu_node, gint, cpu) = c->id;
        }
    }
}

/* Node ids beyond the host's are an error in a domain we manage (libvirt
 * would start it on a host that lacks the node only to fail later). */
static gboolean
check_nodeset (const VpaDomain *dom, const VpaDomainCell *cell, const VpaHost *host,
               const HostTopo *topo, GError **error)
{
  const VpaBits *set = vpa_domain_model_cell_nodeset (dom, cell);
  g_autofree char *label = NULL;
  g_autofree char *have = NULL;

  for (gint n = vpa_cpuset_bits_next (set, 0); n >= 0; n = vpa_cpuset_bits_next (set, (guint) n + 1))
    {
      if (vpa_cpuset_bits_has (topo->nodes, (guint) n))
        continue;
      label = cell->nodeset != NULL ? g_strdup_printf ("<numatune><memnode cellid='%u'>", cell->id)
                                    : g_strdup ("<numatune><memory>");
      have = format_bits (topo->nodes, 200);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: %s nodeset: host NUMA node %d does not exist on %s (its nodes: %s)",
                   dom->source, label, n, host->source, have);
      return FALSE;
    }
  return TRUE;
}

static gboolean
bind_cell_cpus (const VpaDomain *dom, const VpaDomainCell *cell, const VpaHost *host,
                const HostTopo *topo, VpaBits *nodes, GError **error)
{
  guint found = 0;
  guint n_cpus = topo->cpu_node->len;

  for (gint cpu = vpa_cpuset_bits_next (cell->cpuset, 0); cpu >= 0;
       cpu = vpa_cpuset_bits_next (cell->cpuset, (guint) cpu + 1))
    {
      gint n = (guint) cpu < n_cpus ? g_array_index (topo->cpu_node, gint, cpu) : -1;

      /* An offline or absent CPU is skipped (a host without SMT has its
       * high-numbered siblings offline): libvirt decides whether the
       * domain can run with it; the others still bind the cell. */
      if (n < 0)
        continue;
      vpa_cpuset_bits_set_range (nodes, (guint) n, (guint) n, TRUE);
      found++;
    }
  if (found == 0 && dom->has_affinity)
    {
      g_autofree char *cpus = format_bits (cell->cpuset, 200);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <cpu><numa><cell id='%u'>: its vCPUs are pinned to host CPUs '%s', none of which is in a NUMA cell of %s",
                   dom->source, cell->id, cpus, host->source);
      return FALSE;
    }
  return TRUE;
}

/* No Linux host has a node id of 1024 or more (MAX_NUMNODES). */
#define VPA_HOST_NODE_ID_MAX 1023

/* A cell's host nodes as a sorted array: those the host has when it is
 * known, else those any host can have; a few entries, whatever the
 * nodeset says. */
static GArray *
cell_host_nodes (const VpaBits *own, const VpaBits *host_nodes)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gint));

  for (gint n = vpa_cpuset_bits_next (own, 0); n >= 0 && n <= VPA_HOST_NODE_ID_MAX;
       n = vpa_cpuset_bits_next (own, (guint) n + 1))
    {
      if (host_nodes == NULL || vpa_cpuset_bits_has (host_nodes, (guint) n))
        g_array_append_val (out, n);
    }
  return out;
}

void
vpa_bind_free (VpaBind *bind)
{
  if (bind == NULL)
    return;
  g_array_unref (bind->guest_nodes);
  g_ptr_array_unref (bind->cell_nodes);
  g_free (bind);
}

static VpaBind *
bind_new (void)
{
  VpaBind *bind = g_new0 (VpaBind, 1);

  bind->guest_nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  bind->cell_nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  return bind;
}

VpaBind *
vpa_bind_nodes (const VpaDomain *dom, const VpaHost *host, GError **error)
{
  g_autoptr (VpaBind) bind = NULL;
  g_autoptr (VpaBits) nodes = vpa_cpuset_bits_new ();
  g_auto (HostTopo) topo = { NULL, NULL };
  gboolean known = host != NULL && host->cells->len > 0;

  g_return_val_if_fail (dom != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  bind = bind_new ();
  /* The implicit cell of a placement="auto" guest is bound by its
   * <numatune><memory> alone, as parsed. */
  if (dom->numa_auto && dom->cells->len == 0)
    {
      g_array_append_vals (bind->guest_nodes, dom->implicit_nodes->data,
                           dom->implicit_nodes->len);
      return g_steal_pointer (&bind);
    }
  if (known)
    host_topo_init (&topo, host);
  for (guint i = 0; i < dom->cells->len; i++)
    {
      const VpaDomainCell *cell = g_ptr_array_index (dom->cells, i);
      const VpaBits *nodeset = vpa_domain_model_cell_nodeset (dom, cell);
      g_autoptr (VpaBits) own = vpa_cpuset_bits_new ();

      if (nodeset != NULL)
        {
          if (known && dom->has_affinity && !check_nodeset (dom, cell, host, &topo, error))
            return NULL;
          vpa_cpuset_bits_or (own, nodeset);
        }
      else if (cell->cpuset != NULL && known &&
               !bind_cell_cpus (dom, cell, host, &topo, own, error))
        return NULL;
      vpa_cpuset_bits_or (nodes, own);
      g_ptr_array_add (bind->cell_nodes, cell_host_nodes (own, known ? topo.nodes : NULL));
    }
  for (gint n = vpa_cpuset_bits_next (nodes, 0); n >= 0; n = vpa_cpuset_bits_next (nodes, (guint) n + 1))
    g_array_append_val (bind->guest_nodes, n);
  return g_steal_pointer (&bind);
}

const GArray *
vpa_bind_cell_nodes (const VpaBind *bind, guint i)
{
  g_return_val_if_fail (bind != NULL, NULL);
  return i < bind->cell_nodes->len ? g_ptr_array_index (bind->cell_nodes, i) : NULL;
}
