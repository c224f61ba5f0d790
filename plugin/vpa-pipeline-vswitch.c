/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline-vswitch.h"

static VpaPolicy
effective_policy (const VpaDomain *dom, gboolean has_policy, VpaPolicy policy)
{
  if (has_policy)
    return policy;
  if (dom->has_flavor_policy)
    return dom->flavor_policy;
  if (dom->has_image_policy)
    return dom->image_policy;
  return VPA_POLICY_LEGACY;
}

static void
add_rule (GPtrArray *rules, const VpaConfig *config, const char *port, const char *physnet,
          VpaPolicy policy)
{
  const VpaVswitchAffinity *aff = vpa_config_vswitch (config, physnet);
  g_autoptr (GArray) nodes = NULL;

  /* Nova: a network no node has affinity to constrains nothing */
  if (aff == NULL || aff->nodes->len == 0)
    return;
  nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  for (guint i = 0; i < aff->nodes->len; i++)
    {
      gint n = (gint) g_array_index (aff->nodes, guint, i);
      g_array_append_val (nodes, n);
    }
  g_ptr_array_add (rules, vpa_fit_net_rule_new (port, physnet, policy, nodes));
}

GPtrArray *
vpa_pipeline_net_rules (const VpaDomain *dom, const VpaConfig *config)
{
  GPtrArray *rules = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fit_net_rule_free);

  g_return_val_if_fail (dom != NULL && config != NULL, rules);

  if (config->vswitch->len == 0)
    return rules;
  for (guint i = 0; i < dom->vswitch_ports->len; i++)
    {
      const VpaVswitchPort *p = g_ptr_array_index (dom->vswitch_ports, i);
      add_rule (rules, config, p->device, p->tunneled ? NULL : p->physnet,
                effective_policy (dom, p->has_policy, p->policy));
    }
  for (guint i = 0; i < dom->ports->len; i++)
    {
      const VpaPortRequest *p = g_ptr_array_index (dom->ports, i);
      if (p->physnet != NULL)
        {
          add_rule (rules, config, p->device, p->physnet,
                    effective_policy (dom, p->has_policy, p->policy));
        }
    }
  return rules;
}

static char *
nodes_text (const GArray *nodes)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < nodes->len; i++)
    g_string_append_printf (out, "%s%d", i > 0 ? "," : "", g_array_index (nodes, gint, i));
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static VpaCheckResult *
check_rule (const VpaHost *host, const GArray *nodes, const VpaNetRule *rule)
{
  VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
  g_autofree char *what = vpa_fit_net_rule_describe (rule);
  g_autofree char *have = nodes_text (nodes);
  gboolean met = FALSE;

  for (guint i = 0; i < nodes->len && !met; i++)
    met = vpa_fit_net_node_meets (host, rule, g_array_index (nodes, gint, i));
  res->device = g_strdup (rule->port);
  res->addr = VPA_ADDR_NONE;
  res->numa_node = VPA_NUMA_NONE;
  res->status = met || rule->policy == VPA_POLICY_PREFERRED ? VPA_CHECK_OK : VPA_CHECK_POLICY;
  res->note = !met && rule->policy == VPA_POLICY_PREFERRED;
  if (met)
    {
      res->line = g_strdup_printf ("%s: guest on host node%s %s: ok", what,
                                   nodes->len > 1 ? "s" : "", have);
    }
  else if (nodes->len == 0)
    {
      res->line = g_strdup_printf ("%s, but the guest's cells are bound to no host node (bind "
                                   "them: <vpa:numa placement='auto'> or <numatune>)",
                                   what);
    }
  else
    {
      res->line = g_strdup_printf ("%s, but the guest's cells are on host node%s %s%s", what,
                                   nodes->len > 1 ? "s" : "", have,
                                   res->note ? " (preferred: accepted)" : "");
    }
  return res;
}

gboolean
vpa_pipeline_check_vswitch (const VpaHost *host, const VpaConfig *config, const VpaDomain *dom,
                            const VpaBind *bind, GPtrArray *results, gboolean *ok, GError **error)
{
  g_autoptr (GPtrArray) rules = NULL;

  g_return_val_if_fail (host != NULL && config != NULL && dom != NULL, FALSE);

  /* Only NUMA guests are constrained, as in Nova. */
  if (!dom->numa_guest && !dom->numa_auto)
    return TRUE;
  rules = vpa_pipeline_net_rules (dom, config);
  if (rules->len == 0)
    return TRUE;
  if (!vpa_config_check_vswitch_nodes (config, host, error))
    return FALSE;
  for (guint i = 0; i < rules->len; i++)
    {
      VpaCheckResult *res = check_rule (host, bind->guest_nodes, g_ptr_array_index (rules, i));
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  return TRUE;
}
