/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-bars.h"

#include <string.h>

/* The kernel's IORESOURCE_MEM and IORESOURCE_MEM_64 (linux/ioport.h). */
#define IORESOURCE_MEM 0x00000200
#define IORESOURCE_MEM_64 0x00100000

static gboolean
parse_hex (const char **p, guint64 *out)
{
  char *end = NULL;
  guint64 v;

  while (**p == ' ' || **p == '\t')
    (*p)++;
  if ((*p)[0] != '0' || ((*p)[1] != 'x' && (*p)[1] != 'X') || !g_ascii_isxdigit ((*p)[2]))
    return FALSE;
  v = g_ascii_strtoull (*p + 2, &end, 16);
  if (end == *p + 2 || (end - (*p + 2)) > 16)
    return FALSE;
  *out = v;
  *p = end;
  return TRUE;
}

gboolean
vpa_bars_parse_resource (const char *buf, guint64 *mem64, char **bad)
{
  const char *line = buf;
  guint64 sum = 0;

  *mem64 = 0;
  *bad = NULL;
  for (guint i = 0; i < VPA_BARS_STD && line != NULL && *line != '\0'; i++)
    {
      const char *nl = strchr (line, '\n');
      const char *p = line;
      guint64 start, end, flags;

      if (!parse_hex (&p, &start) || !parse_hex (&p, &end) || !parse_hex (&p, &flags) ||
          (*p != '\n' && *p != '\0') || (end < start && (start != 0 || end != 0)))
        {
          *bad = g_strndup (line, MIN (nl != NULL ? (gsize) (nl - line) : strlen (line), 80));
          return FALSE;
        }
      if ((flags & IORESOURCE_MEM) != 0 && (flags & IORESOURCE_MEM_64) != 0 && end > start)
        {
          guint64 size = end - start + 1;
          if (size == 0 || sum > G_MAXUINT64 - size)
            {
              *bad = g_strndup (line, MIN (nl != NULL ? (gsize) (nl - line) : strlen (line), 80));
              return FALSE;
            }
          sum += size;
        }
      line = nl != NULL ? nl + 1 : NULL;
    }
  *mem64 = sum;
  return TRUE;
}

guint64
vpa_bars_window (guint64 bytes)
{
  guint64 w = 1;

  if (bytes == 0)
    return 0;
  while (w < bytes)
    {
      if (w > G_MAXUINT64 / 2)
        return G_MAXUINT64;
      w <<= 1;
    }
  return w;
}
