/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The lookup behind VPA_ENUM_IMPL's from_string (vpa-enum.h).
 */
#include "vpa-enum.h"

#include <string.h>

gint
vpa_enum_lookup (const char *const *names, guint n, const char *str)
{
  for (guint i = 0; str != NULL && i < n; i++)
    {
      if (strcmp (names[i], str) == 0)
        return (gint) i;
    }
  return -1;
}
