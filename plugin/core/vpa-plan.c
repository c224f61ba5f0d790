/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Decisions (vpa-plan.h).
 */
#include "vpa-plan.h"

VpaDecision *
vpa_plan_decision_new (VpaDecisionKind kind, const char *device, guint index, VpaAddr addr,
                       gint numa_node, VpaPolicy policy, VpaPolicySource source)
{
  VpaDecision *d;

  g_return_val_if_fail (device != NULL, NULL);
  d = g_new0 (VpaDecision, 1);
  d->kind = kind;
  d->device = g_strdup (device);
  d->index = index;
  d->addr = addr;
  d->numa_node = numa_node;
  d->policy = policy;
  d->source = source;
  d->locality = -1;
  return d;
}

void
vpa_plan_decision_free (VpaDecision *decision)
{
  if (decision == NULL)
    return;
  g_free (decision->device);
  g_free (decision->locality_group);
  g_free (decision->network);
  g_free (decision);
}

char *
vpa_plan_decision_user_alias (const VpaDecision *decision)
{
  g_return_val_if_fail (decision != NULL, NULL);
  if (decision->kind != VPA_DECISION_ALIAS)
    return g_strdup (decision->device);
  return g_strdup_printf (VPA_ALIAS_PREFIX "%s-%u", decision->device, decision->index);
}
