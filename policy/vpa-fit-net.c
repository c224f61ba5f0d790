/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-fit-net.h"

VpaNetRule *
vpa_fit_net_rule_new (const char *port, const char *physnet, VpaPolicy policy, const GArray *nodes)
{
  VpaNetRule *rule = g_new0 (VpaNetRule, 1);

  rule->port = g_strdup (port);
  rule->physnet = g_strdup (physnet);
  rule->policy = policy;
  rule->nodes = g_array_copy ((GArray *) nodes);
  return rule;
}

void
vpa_fit_net_rule_free (VpaNetRule *rule)
{
  if (rule == NULL)
    return;
  g_free (rule->port);
  g_free (rule->physnet);
  g_clear_pointer (&rule->nodes, g_array_unref);
  g_free (rule);
}

static guint64
bit (guint k)
{
  return G_GUINT64_CONSTANT (1) << k;
}

/* A host node as the rules see it: its id and socket. */
typedef struct {
  gint node;
  gint socket;
} NetNode;

/* Whether node (one of nodes) has the rule's affinity, or (socket)
 * shares a known socket with a node of nodes that has. */
static gboolean
net_node_meets (const NetNode *nodes, guint n_nodes, const VpaNetRule *rule, const NetNode *node)
{
  for (guint i = 0; i < rule->nodes->len; i++)
    {
      gint served = g_array_index (rule->nodes, gint, i);

      if (served == node->node)
        return TRUE;
      if (rule->policy != VPA_POLICY_SOCKET || node->socket == VPA_SOCKET_NONE)
        continue;
      for (guint k = 0; k < n_nodes; k++)
        {
          if (nodes[k].node == served && nodes[k].socket == node->socket)
            return TRUE;
        }
    }
  return FALSE;
}

/* The indices of nodes that meet the rule. */
static guint64
rule_mask (const NetNode *nodes, guint n_nodes, const VpaNetRule *rule)
{
  guint64 mask = 0;

  for (guint k = 0; k < n_nodes && k < 64; k++)
    {
      if (net_node_meets (nodes, n_nodes, rule, &nodes[k]))
        mask |= bit (k);
    }
  return mask;
}

/* The host's cells as the rules see them (n: host->cells->len). */
static NetNode *
host_net_nodes (const VpaHost *host)
{
  NetNode *cells = g_new0 (NetNode, MAX (host->cells->len, 1));

  for (guint k = 0; k < host->cells->len; k++)
    {
      const VpaCell *cell = &g_array_index (host->cells, VpaCell, k);
      cells[k] = (NetNode){ cell->id, cell->socket };
    }
  return cells;
}

gboolean
vpa_fit_net_node_meets (const VpaHost *host, const VpaNetRule *rule, gint node)
{
  g_autofree NetNode *cells = host_net_nodes (host);
  const VpaCell *cell = vpa_host_cell (host, node);
  NetNode self = { node, cell != NULL ? cell->socket : VPA_SOCKET_NONE };

  return net_node_meets (cells, host->cells->len, rule, &self);
}

static VpaNetMasks *
net_masks_new (const NetNode *nodes, guint n_nodes, GPtrArray *rules)
{
  g_autoptr (VpaNetMasks) m = g_new0 (VpaNetMasks, 1);
  guint n = rules != NULL ? rules->len : 0;

  m->mask = g_new0 (guint64, MAX (n, 1));
  m->soft = g_new0 (gboolean, MAX (n, 1));
  m->rule = g_new0 (const VpaNetRule *, MAX (n, 1));
  m->count = g_new0 (guint, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const VpaNetRule *rule = g_ptr_array_index (rules, i);
      guint64 mask = rule_mask (nodes, n_nodes, rule);
      gboolean soft = rule->policy == VPA_POLICY_PREFERRED;
      guint j;

      /* Nova: a network no node has affinity to constrains nothing */
      if (mask == 0)
        continue;
      m->n_soft += soft ? 1 : 0;
      /* Rules of one mask are one constraint: the walk's work depends
       * on the distinct masks, not on the number of ports. */
      for (j = 0; j < m->n; j++)
        {
          if (m->mask[j] == mask && m->soft[j] == soft)
            break;
        }
      if (j < m->n)
        {
          m->count[j]++;
          continue;
        }
      m->mask[m->n] = mask;
      m->soft[m->n] = soft;
      m->rule[m->n] = rule;
      m->count[m->n] = 1;
      m->n++;
    }
  if (m->n == 0)
    return NULL;
  return g_steal_pointer (&m);
}

VpaNetMasks *
vpa_fit_net_masks_new (const VpaCapacity *cap, GPtrArray *rules)
{
  g_autofree NetNode *nodes = g_new0 (NetNode, MAX (cap->nodes->len, 1));

  for (guint k = 0; k < cap->nodes->len; k++)
    {
      const VpaNodeCap *nc = g_ptr_array_index (cap->nodes, k);
      nodes[k] = (NetNode){ nc->node, nc->socket };
    }
  return net_masks_new (nodes, cap->nodes->len, rules);
}

const VpaNetRule *
vpa_fit_net_rules_unmet (const VpaHost *host, GPtrArray *rules, const gint *nodes, guint n_nodes)
{
  g_autofree NetNode *cells = host_net_nodes (host);
  g_autoptr (VpaNetMasks) m = NULL;
  guint64 used = 0;

  for (guint k = 0; k < host->cells->len && k < 64; k++)
    {
      for (guint i = 0; i < n_nodes; i++)
        {
          if (nodes[i] == cells[k].node)
            used |= bit (k);
        }
    }
  m = net_masks_new (cells, host->cells->len, rules);
  for (guint i = 0; m != NULL && i < m->n; i++)
    {
      if (!m->soft[i] && (m->mask[i] & used) == 0)
        return m->rule[i];
    }
  return NULL;
}

void
vpa_fit_net_masks_free (VpaNetMasks *m)
{
  if (m == NULL)
    return;
  g_free (m->mask);
  g_free (m->soft);
  g_free (m->rule);
  g_free (m->count);
  g_free (m);
}

gboolean
vpa_fit_net_masks_hard_met (const VpaNetMasks *m, guint64 used)
{
  for (guint i = 0; m != NULL && i < m->n; i++)
    {
      if (!m->soft[i] && (m->mask[i] & used) == 0)
        return FALSE;
    }
  return TRUE;
}

guint
vpa_fit_net_masks_soft_misses (const VpaNetMasks *m, guint64 used)
{
  guint misses = 0;

  for (guint i = 0; m != NULL && i < m->n; i++)
    {
      if (m->soft[i] && (m->mask[i] & used) == 0)
        misses += m->count[i];
    }
  return misses;
}

static void
append_nodes (GString *out, const VpaCapacity *cap, guint64 mask)
{
  gboolean first = TRUE;

  for (guint k = 0; k < cap->nodes->len && k < 64; k++)
    {
      if (!(mask & bit (k)))
        continue;
      g_string_append_printf (out, "%s%d", first ? "" : ",",
                              ((const VpaNodeCap *) g_ptr_array_index (cap->nodes, k))->node);
      first = FALSE;
    }
}

char *
vpa_fit_net_rule_describe (const VpaNetRule *rule)
{
  g_autoptr (GString) out = g_string_new (NULL);

  g_string_append_printf (out, "port %s: ", rule->port);
  if (rule->physnet != NULL)
    {
      g_string_append_printf (out, "physnet %s", rule->physnet);
    }
  else
    {
      g_string_append (out, "the tunnel");
    }
  g_string_append (out, " is served from host node");
  g_string_append (out, rule->nodes->len > 1 ? "s " : " ");
  for (guint i = 0; i < rule->nodes->len; i++)
    g_string_append_printf (out, "%s%d", i > 0 ? "," : "", g_array_index (rule->nodes, gint, i));
  g_string_append_printf (out, " (policy %s)", vpa_policy_to_string (rule->policy));
  return g_string_free (g_steal_pointer (&out), FALSE);
}

void
vpa_fit_net_masks_explain (const VpaNetMasks *m, const VpaCapacity *cap, guint64 chosen,
                           GString *out)
{
  for (guint i = 0; m != NULL && i < m->n; i++)
    {
      g_autofree char *what = vpa_fit_net_rule_describe (m->rule[i]);

      if (m->count[i] > 1)
        {
          g_string_append_printf (out, "%s and %u more port%s like it", what, m->count[i] - 1,
                                  m->count[i] > 2 ? "s" : "");
        }
      else
        {
          g_string_append (out, what);
        }
      g_string_append (out, ": the guest needs a cell on host node");
      g_string_append (out, __builtin_popcountll (m->mask[i]) > 1 ? "s " : " ");
      append_nodes (out, cap, m->mask[i]);
      g_string_append (out, m->soft[i] ? " if it can" : "");
      if (chosen == 0 && m->soft[i])
        {
          g_string_append (out, " (a tie-breaker after the devices' tiers)\n");
        }
      else if (chosen == 0)
        {
          g_string_append (out, "; rules out every set of nodes without one\n");
        }
      else if (m->mask[i] & chosen)
        {
          g_string_append (out, ": met\n");
        }
      else
        {
          g_string_append (out, ": not met (preferred)\n");
        }
    }
}
