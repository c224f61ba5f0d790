/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a domain holds: a device or its CPUs and memory (vpa-claim.h).
 */
#include "vpa-claim.h"

VpaClaim *
vpa_claim_new (const char *domain, VpaAddr addr, gboolean running)
{
  VpaClaim *claim = g_new0 (VpaClaim, 1);
  claim->domain = g_strdup (domain);
  claim->addr = addr;
  claim->running = running;
  return claim;
}

VpaClaim *
vpa_claim_new_numa (const char *domain, gboolean running, VpaNumaUse *use)
{
  VpaClaim *claim = vpa_claim_new (domain, VPA_ADDR_NONE, running);
  claim->numa = use;
  return claim;
}

VpaClaim *
vpa_claim_copy (const VpaClaim *claim)
{
  VpaClaim *copy = vpa_claim_new (claim->domain, claim->addr, claim->running);

  if (claim->numa != NULL)
    {
      copy->numa = g_new0 (VpaNumaUse, 1);
      copy->numa->dedicated = g_array_copy (claim->numa->dedicated);
      copy->numa->pinned = g_array_copy (claim->numa->pinned);
      copy->numa->memory = g_array_copy (claim->numa->memory);
    }
  return copy;
}

void
vpa_claim_free (VpaClaim *claim)
{
  if (claim == NULL)
    return;
  g_free (claim->domain);
  vpa_numa_use_free (claim->numa);
  g_free (claim);
}

GPtrArray *
vpa_claim_filter (GPtrArray *claims, const char *exclude, gboolean running_only)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);

  for (guint i = 0; claims != NULL && i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      if (g_strcmp0 (c->domain, exclude) == 0 || (running_only && !c->running))
        continue;
      g_ptr_array_add (out, vpa_claim_copy (c));
    }
  return out;
}
