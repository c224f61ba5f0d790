/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPUs and memory a domain holds (vpa-numa-use.h).
 */
#include "vpa-numa-use.h"

VpaNumaUse *
vpa_numa_use_new (void)
{
  VpaNumaUse *use = g_new0 (VpaNumaUse, 1);
  use->dedicated = g_array_new (FALSE, FALSE, sizeof (guint));
  use->pinned = g_array_new (FALSE, FALSE, sizeof (guint));
  use->memory = g_array_new (FALSE, FALSE, sizeof (VpaMemClaim));
  return use;
}

static gboolean
sorted_has (const GArray *a, guint v)
{
  guint lo = 0, hi = a->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      guint x = g_array_index (a, guint, mid);
      if (x == v)
        return TRUE;
      if (x < v)
        {
          lo = mid + 1;
        }
      else
        {
          hi = mid;
        }
    }
  return FALSE;
}

gboolean
vpa_numa_use_holds (const VpaNumaUse *use, guint cpu)
{
  return sorted_has (use->dedicated, cpu) || sorted_has (use->pinned, cpu);
}

void
vpa_numa_use_free (VpaNumaUse *use)
{
  if (use == NULL)
    return;
  g_array_unref (use->dedicated);
  g_array_unref (use->pinned);
  g_array_unref (use->memory);
  g_free (use);
}
