/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt cpuset/nodeset strings ("0-3,^2,8") from <vcpu cpuset>,
 * <vcpupin> and <numatune>. Besides the error contract, a set in the
 * plain grammar (entries N, N-M or ^N in decimal, no blanks) must give
 * exactly what applying its entries left to right gives.
 */
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-cpuset.h"

/* The reference: FALSE when str is outside the plain grammar. */
static gboolean
reference_parse (const char *str, guint8 *bits)
{
  g_auto (GStrv) entries = g_strsplit (str, ",", -1);

  for (guint i = 0; entries[i] != NULL; i++)
    {
      const char *p = entries[i];
      gboolean neg = FALSE;
      guint64 lo = 0, hi;
      const char *dash;

      if (*p == '^')
        {
          neg = TRUE;
          p++;
        }
      dash = strchr (p, '-');
      if (neg && dash != NULL)
        return FALSE;
      for (const char *q = p; *q != '\0'; q++)
        {
          if (!g_ascii_isdigit (*q) && q != dash)
            return FALSE;
        }
      if (*p == '\0' || p == dash || (dash != NULL && dash[1] == '\0') ||
          strlen (p) > 12)
        return FALSE;
      lo = g_ascii_strtoull (p, NULL, 10);
      hi = dash != NULL ? g_ascii_strtoull (dash + 1, NULL, 10) : lo;
      if (hi > VPA_CPUSET_MAX || lo > hi)
        return FALSE;
      memset (bits + lo, neg ? 0 : 1, (gsize) (hi - lo + 1));
    }
  return TRUE;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *str = NULL;
  g_autofree guint8 *bits = NULL;
  g_autoptr (GArray) set = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok, plain;
  guint n = 0;

  vpa_fuzz_init ();
  if (size > 4096)
    return 0;
  str = vpa_fuzz_strndup (data, size);
  ok = vpa_cpuset_parse (str, &set, &error);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  VPA_FUZZ_CHECK (ok == (set != NULL));
  if (ok)
    {
      VPA_FUZZ_CHECK (set->len > 0);
      for (guint i = 0; i < set->len; i++)
        {
          guint v = g_array_index (set, guint, i);
          VPA_FUZZ_CHECK (v <= VPA_CPUSET_MAX);
          VPA_FUZZ_CHECK (i == 0 || g_array_index (set, guint, i - 1) < v);
        }
    }
  else
    VPA_FUZZ_CHECK (strstr (error->message, "CPU or node set") != NULL);

  bits = g_malloc0 (VPA_CPUSET_MAX + 1);
  plain = str[0] != '\0' && reference_parse (str, bits);
  for (guint v = 0; plain && v <= VPA_CPUSET_MAX; v++)
    {
      if (bits[v])
        {
          VPA_FUZZ_CHECK (ok && n < set->len && g_array_index (set, guint, n) == v);
          n++;
        }
    }
  if (plain)
    VPA_FUZZ_CHECK (n == 0 ? !ok : n == set->len);
  return 0;
}
