/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Messages as one bounded line (vpa-message.h).
 */
#include "vpa-message.h"

#include <string.h>

static void
append_escaped (GString *out, const char *p, gsize len)
{
  if (len == 1 && *p == '\n')
    {
      g_string_append (out, "\\n");
    }
  else if (len == 1 && *p == '\t')
    {
      g_string_append (out, "\\t");
    }
  else if (len == 1 && ((guchar) *p < 0x20 || *p == 0x7f || (guchar) *p >= 0x80))
    {
      g_string_append_printf (out, "\\x%02x", (guchar) *p);
    }
  else
    {
      g_string_append_len (out, p, (gssize) len);
    }
}

char *
vpa_message_bound (const char *message, gsize max)
{
  static const char ellipsis[] = "…";
  const gsize ell = sizeof ellipsis - 1;
  const char *p, *end;
  gsize fit = 0; /* longest prefix (in out) that leaves room for the ellipsis */
  GString *out;

  g_return_val_if_fail (message != NULL, NULL);
  g_return_val_if_fail (max > ell + 4, NULL);

  end = message + strlen (message);
  out = g_string_sized_new (MIN ((gsize) (end - message), max) + 1);
  for (p = message; p < end && out->len <= max;)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      gsize len = c == (gunichar) -1 || c == (gunichar) -2 ? 1
                                                           : (gsize) g_utf8_skip[*(const guchar *) p];

      if (out->len + ell <= max)
        fit = out->len;
      append_escaped (out, p, len);
      p += len;
    }
  if (p < end || out->len > max)
    {
      g_string_truncate (out, fit);
      g_string_append (out, ellipsis);
    }
  return g_string_free (out, FALSE);
}

char *
vpa_message_escape (const char *text)
{
  g_return_val_if_fail (text != NULL, NULL);
  return vpa_message_bound (text, G_MAXSIZE);
}
