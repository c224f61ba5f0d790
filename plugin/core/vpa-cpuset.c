/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt cpuset/nodeset strings (vpa-cpuset.h).
 */
#include "vpa-cpuset.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* cpusets                                                             */
/* ------------------------------------------------------------------ */

static gboolean
cpuset_number (const char *s, guint *out)
{
  guint64 v;

  if (*s == '\0' || !g_ascii_isdigit (*s))
    return FALSE;
  if (!g_ascii_string_to_unsigned (s, 10, 0, VPA_CPUSET_MAX, &v, NULL))
    return FALSE;
  *out = (guint) v;
  return TRUE;
}

/* One comma-separated entry: "N", "N-M" or "^N", spaces around allowed. */
static gboolean
cpuset_entry (const char *str, char *entry, GByteArray *bits, GError **error)
{
  gboolean neg = FALSE;
  char *dash;
  guint lo, hi;

  g_strstrip (entry);
  if (*entry == '^')
    {
      neg = TRUE;
      entry++;
    }
  dash = neg ? NULL : strchr (entry, '-');
  if (dash != NULL)
    *dash = '\0';
  if (!cpuset_number (entry, &lo) || (dash != NULL && !cpuset_number (dash + 1, &hi)))
    {
      if (dash != NULL)
        *dash = '-';
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "invalid CPU or node set '%s': entry '%s%s' is not N, N-M or ^N "
                   "with N and M at most %u",
                   str, neg ? "^" : "", entry, VPA_CPUSET_MAX);
      return FALSE;
    }
  if (dash == NULL)
    hi = lo;
  if (hi < lo)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "invalid CPU or node set '%s': range '%u-%u' is reversed", str, lo, hi);
      return FALSE;
    }
  if (bits->len <= hi)
    {
      guint old = bits->len;
      g_byte_array_set_size (bits, hi + 1);
      memset (bits->data + old, 0, hi + 1 - old);
    }
  memset (bits->data + lo, neg ? 0 : 1, hi - lo + 1);
  return TRUE;
}

gboolean
vpa_parse_cpuset (const char *str, GArray **out, GError **error)
{
  g_autoptr (GByteArray) bits = g_byte_array_new ();
  g_auto (GStrv) entries = NULL;
  g_autoptr (GArray) ret = g_array_new (FALSE, FALSE, sizeof (guint));

  g_return_val_if_fail (str != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (*str == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "invalid CPU or node set '': it is empty");
      return FALSE;
    }
  entries = g_strsplit (str, ",", -1);
  for (guint i = 0; entries[i] != NULL; i++)
    if (!cpuset_entry (str, entries[i], bits, error))
      return FALSE;
  for (guint i = 0; i < bits->len; i++)
    if (bits->data[i])
      g_array_append_val (ret, i);
  if (ret->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "invalid CPU or node set '%s': it selects nothing", str);
      return FALSE;
    }
  *out = g_steal_pointer (&ret);
  return TRUE;
}
