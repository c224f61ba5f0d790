/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * PCI addresses: parsing, formatting, comparing (vpa-addr.h).
 */
#include "vpa-addr.h"

#include <string.h>

static gboolean
parse_hex_field (const char *s, gsize len, guint64 max, guint64 *out)
{
  guint64 v = 0;

  if (len == 0 || len > 8)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      int d = g_ascii_xdigit_value (s[i]);
      if (d < 0)
        return FALSE;
      v = v * 16 + (guint64) d;
    }
  if (v > max)
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
vpa_addr_parse (const char *str, VpaAddr *out)
{
  const char *colon1, *colon2, *dot;
  guint64 dom = 0, bus, slot, fn;

  g_return_val_if_fail (out != NULL, FALSE);
  if (str == NULL)
    return FALSE;

  dot = strrchr (str, '.');
  colon2 = strrchr (str, ':');
  if (dot == NULL || colon2 == NULL || dot < colon2)
    return FALSE;
  colon1 = colon2 == str ? NULL : memrchr (str, ':', (gsize) (colon2 - str));

  if (colon1 != NULL)
    {
      if (!parse_hex_field (str, (gsize) (colon1 - str), G_MAXUINT32, &dom))
        return FALSE;
      if (!parse_hex_field (colon1 + 1, (gsize) (colon2 - colon1 - 1), 0xff, &bus))
        return FALSE;
    }
  else if (!parse_hex_field (str, (gsize) (colon2 - str), 0xff, &bus))
    return FALSE;
  if (!parse_hex_field (colon2 + 1, (gsize) (dot - colon2 - 1), 0x1f, &slot))
    return FALSE;
  if (!parse_hex_field (dot + 1, strlen (dot + 1), 7, &fn))
    return FALSE;

  *out = VPA_ADDR (dom, bus, slot, fn);
  return TRUE;
}

const char *
vpa_addr_format (VpaAddr addr, char buf[VPA_ADDR_BUFLEN])
{
  if (!VPA_ADDR_IS_VALID (addr))
    {
      g_strlcpy (buf, VPA_ADDR_NONE_TEXT, VPA_ADDR_BUFLEN);
      return buf;
    }
  g_snprintf (buf, VPA_ADDR_BUFLEN, "%04x:%02x:%02x.%x", VPA_ADDR_DOMAIN (addr),
              VPA_ADDR_BUS (addr), VPA_ADDR_SLOT (addr), VPA_ADDR_FUNCTION (addr));
  return buf;
}

G_STATIC_ASSERT (sizeof VPA_ADDR_NONE_TEXT <= VPA_ADDR_BUFLEN);
G_STATIC_ASSERT (VPA_ADDR (G_MAXUINT32, 0xff, 0x1f, 7) == VPA_ADDR_MAX);
G_STATIC_ASSERT (!VPA_ADDR_IS_VALID (VPA_ADDR_NONE));

gboolean
vpa_addr_same (VpaAddr a, VpaAddr b)
{
  return VPA_ADDR_IS_VALID (a) && a == b;
}

char *
vpa_addr_to_string (VpaAddr addr)
{
  char buf[VPA_ADDR_BUFLEN];
  return g_strdup (vpa_addr_format (addr, buf));
}

guint
vpa_addr_hash (gconstpointer p)
{
  VpaAddr a = *(const VpaAddr *) p;
  return (guint) (a ^ (a >> 32));
}

gboolean
vpa_addr_equal (gconstpointer a, gconstpointer b)
{
  return *(const VpaAddr *) a == *(const VpaAddr *) b;
}
