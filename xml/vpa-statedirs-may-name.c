/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Which state files may name an address, from their bytes alone
 * (vpa_statedirs_may_name): one forward pass that never says no for a
 * file whose parse names one of the addresses, so a scan for a few
 * devices parses only the files that may hold them.
 */
#include "vpa-statedirs.h"
#include "vpa-statedirs-private.h"

#include <string.h>

#include "vpa-xml.h"

/* Whether the parser could read the document in another encoding than
 * the bytes show: libxml2 decides from the first four bytes (UTF-16,
 * UCS-4, EBCDIC signatures and byte-order marks) and from an encoding
 * declaration. Only UTF-8 (with or without its mark) and no declaration
 * of another encoding leave the bytes as the parser reads them. */
gboolean
vpa_statedirs_bytes_are_text (const char *buf, gsize len, gsize *start)
{
  const char *decl_end;
  const char *enc;

  *start = 0;
  if (len >= 3 && memcmp (buf, "\xef\xbb\xbf", 3) == 0)
    *start = 3;
  for (gsize i = *start; i < MIN (len, *start + 4); i++)
    {
      if (buf[i] == '\0' || (guchar) buf[i] >= 0x80)
        return FALSE;
    }
  if (len - *start < 5 || memcmp (buf + *start, "<?xml", 5) != 0)
    return TRUE;
  decl_end = memmem (buf + *start, len - *start, "?>", 2);
  if (decl_end == NULL)
    return FALSE;
  enc = memmem (buf + *start, (gsize) (decl_end - (buf + *start)), "encoding", 8);
  if (enc == NULL)
    return TRUE;
  enc += 8;
  while (enc < decl_end && (*enc == ' ' || *enc == '\t' || *enc == '\r' || *enc == '\n' || *enc == '='))
    enc++;
  return decl_end - enc >= 7 && (enc[0] == '\'' || enc[0] == '"') &&
         g_ascii_strncasecmp (enc + 1, "UTF-8", 5) == 0 && enc[6] == enc[0];
}

/* FALSE when the prolog has a document type declaration (its attribute
 * defaults could give an <address> fields its bytes do not show), or
 * cannot be followed to the root element; *body is the root's '<'. */
gboolean
vpa_statedirs_prolog_plain (const char *buf, gsize len, gsize start, const char **body)
{
  const char *p = buf + start;
  const char *end = buf + len;

  while (p < end)
    {
      const char *close;
      gsize close_len;

      if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        {
          p++;
          continue;
        }
      if (end - p >= 4 && memcmp (p, "<!--", 4) == 0)
        {
          close = memmem (p + 4, (gsize) (end - p - 4), "-->", 3);
          close_len = 3;
        }
      else if (end - p >= 2 && memcmp (p, "<?", 2) == 0)
        {
          close = memmem (p + 2, (gsize) (end - p - 2), "?>", 2);
          close_len = 2;
        }
      else
        {
          *body = p;
          return *p == '<' && end - p >= 2 && p[1] != '!';
        }
      if (close == NULL)
        return FALSE;
      p = close + close_len;
    }
  return TRUE;
}

gboolean
vpa_statedirs_is_blank (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

typedef enum {
  TAG_NONE,     /* the occurrence is not in a start tag: it names nothing */
  TAG_OTHER,    /* a start tag that names no address of the set */
  TAG_MAY_NAME, /* a start tag that may name one (or cannot be told) */
} TagVerdict;

static gboolean
addr_in (const VpaAddr *addrs, guint n, VpaAddr a)
{
  guint lo = 0, hi = n;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (addrs[mid] == a)
        return TRUE;
      if (addrs[mid] < a)
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

/* The field an attribute name is (its local part: the parser reads
 * unprefixed attributes only, a prefixed one is counted too, which can
 * only make a file read), or -1. */
static gint
field_of (const char *name, gsize len)
{
  static const struct {
    const char *name;
    gsize len;
  } fields[] = { { "domain", 6 }, { "bus", 3 }, { "slot", 4 }, { "function", 8 } };

  for (gsize i = len; i > 0; i--)
    {
      if (name[i - 1] == ':')
        {
          name += i;
          len -= i;
          break;
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      if (fields[i].len == len && memcmp (name, fields[i].name, len) == 0)
        return (gint) i;
    }
  return -1;
}

/* A field's value as it stands between its quotes. */
typedef struct {
  const char *p;
  gsize len;
} Field;

/* "0x" and two hex digits, libvirt's form of a bus: its value, else -1. */
static gint
canonical_bus (const Field *f)
{
  if (f->len != 4 || f->p[0] != '0' || (f->p[1] != 'x' && f->p[1] != 'X') ||
      !g_ascii_isxdigit (f->p[2]) || !g_ascii_isxdigit (f->p[3]))
    return -1;
  return g_ascii_xdigit_value (f->p[2]) * 16 + g_ascii_xdigit_value (f->p[3]);
}

/* The fields decoded as the parser decodes them; FALSE when one does
 * not parse (the parser then claims nothing there). */
static gboolean
decode_fields (const Field fields[4], VpaAddr *out)
{
  /* g_autofree on an array frees its first element only */
  char *values[4] = { NULL, NULL, NULL, NULL };
  gboolean ok;

  for (guint i = 0; i < 4; i++)
    {
      if (fields[i].p != NULL)
        values[i] = g_strndup (fields[i].p, fields[i].len);
    }
  ok = vpa_xml_pci_address_fields ((const char *const *) values, out, NULL);
  for (guint i = 0; i < 4; i++)
    g_free (values[i]);
  return ok;
}

typedef enum {
  VALUE_NO_EQ,    /* no '=' follows: no attribute */
  VALUE_UNQUOTED, /* '=' without a quoted value that ends */
  VALUE_OK,
} ValueScan;

/* After an attribute's name at *pp: blanks, '=', blanks and a quoted
 * value, which *value receives; *pp is then past its closing quote. */
static ValueScan
scan_value (const char **pp, const char *end, Field *value)
{
  const char *p = *pp;
  const char *q;
  char quote;

  while (p < end && vpa_statedirs_is_blank (*p))
    p++;
  if (p >= end || *p != '=')
    return VALUE_NO_EQ;
  p++;
  while (p < end && vpa_statedirs_is_blank (*p))
    p++;
  if (p >= end || (*p != '\'' && *p != '"'))
    return VALUE_UNQUOTED;
  quote = *p++;
  if ((q = memchr (p, quote, (gsize) (end - p))) == NULL)
    return VALUE_UNQUOTED;
  value->p = p;
  value->len = (gsize) (q - p);
  *pp = q + 1;
  return VALUE_OK;
}

/* The next attribute of a start tag from *pp: its name and value, or
 * FALSE at the tag's end (*pp then past it; *closed TRUE) or when the
 * bytes do not scan as an attribute (*closed FALSE). */
static gboolean
next_attr (const char **pp, const char *end, Field *name, Field *value, gboolean *closed)
{
  const char *p = *pp;

  *closed = FALSE;
  while (p < end && vpa_statedirs_is_blank (*p))
    p++;
  if (p < end && (*p == '>' || (*p == '/' && p + 1 < end && p[1] == '>')))
    {
      *pp = p + (*p == '>' ? 1 : 2);
      *closed = TRUE;
      return FALSE;
    }
  name->p = p;
  while (p < end && !vpa_statedirs_is_blank (*p) && *p != '=' && *p != '>' && *p != '/')
    p++;
  name->len = (gsize) (p - name->p);
  if (name->len == 0 || scan_value (&p, end, value) != VALUE_OK)
    return FALSE;
  *pp = p;
  return TRUE;
}

/* The start tag at tag ('<' and a name): its address fields decoded
 * as the parser would, when the occurrence at hit lies inside it. */
static TagVerdict
judge_tag (const char *tag, const char *end, const char *hit, const VpaAddr *addrs, guint n,
           const guint8 *buses)
{
  const char *p = tag + 1;
  Field fields[4] = { { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 } };
  Field name, value;
  gboolean closed = FALSE;
  VpaAddr a = VPA_ADDR_NONE;
  gint bus;

  while (p < end && !vpa_statedirs_is_blank (*p) && *p != '>' && *p != '/')
    p++;
  while (next_attr (&p, end, &name, &value, &closed))
    {
      gint f = field_of (name.p, name.len);

      if (f < 0)
        continue;
      /* a reference can make any value; a field twice is not libvirt's */
      if (fields[f].p != NULL || memchr (value.p, '&', value.len) != NULL)
        return TAG_MAY_NAME;
      fields[f] = value;
    }
  if (!closed)
    return TAG_MAY_NAME;
  if (hit >= p)
    return TAG_NONE;
  if (fields[1].p == NULL)
    return TAG_OTHER; /* no bus: not an address the parser reads */
  /* Most addresses in a domain (its own controllers' and disks') are on
   * other buses: libvirt's form tells at once. */
  bus = canonical_bus (&fields[1]);
  if (bus >= 0 && !(buses[bus / 8] & (1u << (bus % 8))))
    return TAG_OTHER;
  if (!decode_fields (fields, &a))
    return TAG_OTHER;
  return addr_in (addrs, n, a) ? TAG_MAY_NAME : TAG_OTHER;
}

/* The occurrence of "bus" at hit, when it is the name of an attribute
 * (after a blank or a prefix, before '='): FALSE when its value shows
 * that the tag names no address on one of buses (the parser reads the
 * bus of an <address> from exactly this value), TRUE when the tag must
 * be judged whole. Any other occurrence is no attribute named bus: the
 * one of the tag's own bus attribute is judged where it stands. */
static gboolean
bus_attr_may_name (const char *buf, const char *end, const char *hit, const guint8 *buses)
{
  const char *p = hit + 3;
  Field f = { NULL, 0 };
  char value[16];
  const char *fields[] = { NULL, value, "0", "0" };
  VpaAddr a = VPA_ADDR_NONE;
  guint bad = 0;

  if (hit == buf || (!vpa_statedirs_is_blank (hit[-1]) && hit[-1] != ':'))
    return FALSE;
  switch (scan_value (&p, end, &f))
    {
    case VALUE_NO_EQ:
      return FALSE;
    case VALUE_UNQUOTED:
      return TRUE;
    case VALUE_OK:
      break;
    }
  if (f.len >= sizeof value || memchr (f.p, '&', f.len) != NULL)
    return TRUE;
  {
    gint bus = canonical_bus (&f);
    if (bus >= 0)
      return (buses[bus / 8] & (1u << (bus % 8))) != 0;
  }
  memcpy (value, f.p, f.len);
  value[f.len] = '\0';
  if (!vpa_xml_pci_address_fields (fields, &a, &bad))
    return bad != 1; /* a bus that does not parse: no address here */
  return (buses[VPA_ADDR_BUS (a) / 8] & (1u << (VPA_ADDR_BUS (a) % 8))) != 0;
}

/* The '>' ending the tag that starts at tag (quotes honoured: a value
 * may hold '>'), or NULL. Bounded by end, with no search that runs to
 * the buffer's NUL: a sanitizer's string interceptors measure the whole
 * rest of the buffer on every call, which is quadratic over a file of
 * many tags. */
static const char *
tag_end (const char *tag, const char *end)
{
  for (const char *p = tag + 1; p < end; p++)
    {
      if (*p == '>')
        return p;
      if (*p == '\'' || *p == '"')
        {
          p = memchr (p + 1, *p, (gsize) (end - p - 1));
          if (p == NULL)
            return NULL;
        }
    }
  return NULL;
}

/* The length of the element name at name: up to the first blank, '/'
 * or '>', or end. */
static gsize
name_span (const char *name, const char *end)
{
  const char *p = name;

  while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && *p != '/' && *p != '>')
    p++;
  return (gsize) (p - name);
}

/* Whether a name's local part (after its last ':') is want: compared
 * from its end, so a long name costs no more than want. */
gboolean
vpa_statedirs_local_name_is (const char *name, gsize len, const char *want)
{
  gsize n = strlen (want);

  return len >= n && memcmp (name + len - n, want, n) == 0 &&
         (len == n || name[len - n - 1] == ':');
}

/* The elements open at a point of the document, followed forward from
 * its start and never back: every byte is looked at a bounded number of
 * times, whatever the document (markup only: text and values hold no
 * '<'). */
typedef struct {
  const char *pos; /* the first byte not yet followed */
  const char *end;
  guint depth;
  const char *names[256]; /* libxml2's limit: deeper does not parse */
  gsize lens[256];
} Walker;

typedef enum {
  WALK_ON,     /* followed to the point: the hit is in text or a tag below */
  WALK_IN_TAG, /* the hit is in the start tag at *tag; the walker is past it */
  WALK_LOST,   /* markup the walker cannot follow: the bytes cannot tell */
} WalkStep;

/* Follows one item of markup at w->pos ('<'): a comment, CDATA section
 * or processing instruction, an end tag, or a start tag (*tag then its
 * '<'). */
static WalkStep
walk_item (Walker *w, const char **tag)
{
  const char *p = w->pos;
  const char *q;
  gsize name_len;

  *tag = NULL;
  if (p[1] == '!' || p[1] == '?')
    {
      /* the close is searched after the opening: "<!--->" opens a
       * comment, it does not close one */
      gsize open = p[1] == '?' ? 2 : strncmp (p, "<!--", 4) == 0 ? 4
                                                                 : 9;
      const char *close = p[1] == '?' ? "?>" : open == 4                        ? "-->"
                                             : strncmp (p, "<![CDATA[", 9) == 0 ? "]]>"
                                                                                : NULL;
      if (close == NULL || (gsize) (w->end - p) < open ||
          (q = vpa_statedirs_find (p + open, (gsize) (w->end - p) - open, close, strlen (close))) ==
            NULL)
        return WALK_LOST;
      w->pos = q + strlen (close);
      return WALK_ON;
    }
  if (p[1] == '/')
    {
      if (w->depth == 0 || (q = memchr (p, '>', (gsize) (w->end - p))) == NULL)
        return WALK_LOST;
      w->depth--;
      w->pos = q + 1;
      return WALK_ON;
    }
  name_len = name_span (p + 1, w->end);
  if (name_len == 0 || (q = tag_end (p, w->end)) == NULL)
    return WALK_LOST;
  *tag = p;
  w->pos = q + 1;
  if (q[-1] == '/')
    return WALK_ON;
  if (w->depth == G_N_ELEMENTS (w->names))
    return WALK_LOST;
  w->names[w->depth] = p + 1;
  w->lens[w->depth++] = name_len;
  return WALK_ON;
}

/* Follows the document up to hit: WALK_IN_TAG when hit lies in a start
 * tag (*tag), whose element is then open (or closed, if empty) on the
 * walker; WALK_ON when it lies in text or other markup. */
static WalkStep
walk_to (Walker *w, const char *hit, const char **tag)
{
  *tag = NULL;
  while (w->pos <= hit)
    {
      const char *lt = memchr (w->pos, '<', (gsize) (w->end - w->pos));
      WalkStep step;

      if (lt == NULL || lt > hit)
        {
          /* text up to the next markup: no claim in it */
          w->pos = lt != NULL ? lt : w->end;
          return WALK_ON;
        }
      w->pos = lt;
      if ((step = walk_item (w, tag)) == WALK_LOST)
        return WALK_LOST;
      if (*tag != NULL && w->pos > hit)
        return WALK_IN_TAG;
    }
  return WALK_ON;
}

/* Whether the start tag at tag, just followed by w, is an <address>
 * directly inside a <source>: the only place the parser reads a
 * device's address from (a domain's own controllers and devices carry
 * guest <address>es that may equal a host device's). */
static gboolean
in_source (const Walker *w, const char *tag)
{
  gsize len = name_span (tag + 1, w->end);
  gboolean empty = w->pos[-2] == '/';
  guint parent = empty ? w->depth : w->depth - 1;

  return vpa_statedirs_local_name_is (tag + 1, len, "address") && parent > 0 &&
         vpa_statedirs_local_name_is (w->names[parent - 1], w->lens[parent - 1], "source");
}

gboolean
vpa_statedirs_may_name (const char *buf, gsize len, const VpaAddr *addrs, guint n_addrs)
{
  const char *end = buf + len;
  const char *p = buf;
  const char *body = NULL;
  guint8 buses[32] = { 0 };
  gsize start = 0;
  g_autofree Walker *w = NULL;

  for (guint i = 0; i < n_addrs; i++)
    buses[VPA_ADDR_BUS (addrs[i]) / 8] |= (guint8) (1u << (VPA_ADDR_BUS (addrs[i]) % 8));
  if (!vpa_statedirs_bytes_are_text (buf, len, &start) || !vpa_statedirs_prolog_plain (buf, len, start, &body))
    return TRUE;
  /* One strstr() over the whole buffer (glibc's is vectorised, its
   * memmem() is not); the buffer ends with a NUL and holds none before.
   * Searches repeated along the buffer use vpa_statedirs_find(), bounded
   * by end. */
  if (buf[len] != '\0' || memchr (buf, '\0', len) != NULL)
    return TRUE;
  /* A claim is a <hostdev>, an <interface type='hostdev'> or an <actual
   * type='hostdev'>: without those bytes, or a reference that could
   * spell them, the file claims nothing (most domains hold no device). */
  if (strstr (buf, "hostdev") == NULL && memchr (buf, '&', len) == NULL)
    return FALSE;
  w = g_new0 (Walker, 1);
  w->pos = buf + start;
  w->end = end;
  /* Every <address> the parser reads has a bus attribute (without one it
   * does not parse), and a name cannot be written with a reference. Each
   * occurrence of "bus" whose value may name a bus of the set has the
   * walker follow the document up to it (forward only: what it has
   * passed is never looked at again, so a hit it passed is skipped). */
  for (; (p = vpa_statedirs_find (p, (gsize) (end - p), "bus", 3)) != NULL; p += 3)
    {
      const char *tag = NULL;

      if (p < w->pos || !bus_attr_may_name (buf, end, p, buses))
        continue;
      switch (walk_to (w, p, &tag))
        {
        case WALK_LOST:
          return TRUE;
        case WALK_ON:
          break;
        case WALK_IN_TAG:
          if (judge_tag (tag, end, p, addrs, n_addrs, buses) == TAG_MAY_NAME && in_source (w, tag))
            return TRUE;
          break;
        }
    }
  return FALSE;
}
