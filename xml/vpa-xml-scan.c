/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The markup scan of the pre-scans (vpa-xml-scan.h).
 */
#include "vpa-xml-scan.h"

#include <string.h>

/* Skips from p past the first occurrence of end (or to stop). */
static const char *
skip_past (const char *p, const char *stop, const char *end)
{
  gsize n = strlen (end);
  const char *hit = (gsize) (stop - p) >= n ? memmem (p, (gsize) (stop - p), end, n) : NULL;

  return hit != NULL ? hit + n : stop;
}

/* The end of the start tag at p, its attributes in *n_attrs. */
static const char *
scan_start_tag (const char *p, const char *stop, guint *n_attrs)
{
  char quote = '\0';

  *n_attrs = 0;
  for (p++; p < stop; p++)
    {
      if (quote != '\0')
        {
          if (*p == quote)
            quote = '\0';
        }
      else if (*p == '"' || *p == '\'')
        {
          quote = *p;
        }
      else if (*p == '=')
        {
          (*n_attrs)++;
        }
      else if (*p == '>')
        {
          return p + 1;
        }
    }
  return stop;
}

void
vpa_xml_scan_init (VpaXmlScan *scan, const char *buf, gsize len, GArray *misleading)
{
  scan->pos = buf;
  scan->stop = buf + len;
  scan->end_tags = 0;
  scan->misleading = misleading;
  scan->base = buf;
}

gboolean
vpa_xml_scan_comment_misleads (const char *text, const char *stop)
{
  return text < stop && (*text == '>' || (stop - text >= 2 && text[0] == '-' && text[1] == '>'));
}

const char *
vpa_xml_scan_next (VpaXmlScan *scan, guint *n_attrs)
{
  const char *p = scan->pos, *stop = scan->stop;

  scan->end_tags = 0;
  while (p < stop && (p = memchr (p, '<', (gsize) (stop - p))) != NULL)
    {
      const char *tag = p;

      if (stop - p >= 4 && memcmp (p, "<!--", 4) == 0)
        {
          if (scan->misleading != NULL && vpa_xml_scan_comment_misleads (p + 4, stop))
            {
              gsize at = (gsize) (p + 4 - scan->base);
              g_array_append_val (scan->misleading, at);
            }
          p = skip_past (p + 4, stop, "-->");
        }
      else if (stop - p >= 9 && memcmp (p, "<![CDATA[", 9) == 0)
        {
          p = skip_past (p + 9, stop, "]]>");
        }
      else if (stop - p >= 2 && p[1] == '?')
        {
          p = skip_past (p + 2, stop, "?>");
        }
      else if (stop - p >= 2 && (p[1] == '!' || p[1] == '/'))
        {
          scan->end_tags += p[1] == '/';
          p = skip_past (p + 2, stop, ">");
        }
      else
        {
          scan->pos = scan_start_tag (p, stop, n_attrs);
          return tag;
        }
    }
  scan->pos = stop;
  return NULL;
}

guint
vpa_xml_scan_line (const char *buf, const char *p)
{
  guint line = 1;

  for (const char *q = buf; q < p; q++)
    line += *q == '\n';
  return line;
}
