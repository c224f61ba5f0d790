/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-statedirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpa-state-reduce.h"
#include "vpa-xml.h"
#include "vpa-file.h"

/* The state file's document: whole when it is within the bounds of a
 * parsed document; else (libvirt keeps thousands of disks, a large
 * <metadata>) only what the claims read (vpa_state_reduce), so that one
 * such domain neither hides its claims nor blocks every start. */
static xmlDoc *
parse_state_file (const char *buf, gsize len, const char *what, GError **error)
{
  g_autoptr (GError) local = NULL;
  xmlDoc *doc = vpa_xml_parse_memory (buf, len, what, &local);

  if (doc != NULL)
    return doc;
  /* The pre-scan stops at the first bound crossed: the files that fail
   * for another reason pay one more linear pass, and keep their error. */
  if (len == 0 || len > (gsize) VPA_XML_MAX_DOCUMENT || memchr (buf, '\0', len) != NULL ||
      vpa_xml_prescan (buf, len, what, NULL))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  return vpa_state_reduce (buf, len, what, error);
}

gboolean
vpa_statedirs_parse (const char *buf, gsize len, const char *what,
                     const char *exclude, GPtrArray *claims, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;

  g_return_val_if_fail (claims != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((doc = parse_state_file (buf, len, what, error)) == NULL)
    return FALSE;
  return vpa_statedirs_claims (doc, what, exclude, claims, error);
}

gboolean
vpa_statedirs_claims (xmlDoc *doc, const char *what, const char *exclude, GPtrArray *claims,
                      GError **error)
{
  g_autofree char *name = NULL;
  g_autoptr (GArray) devs = NULL;
  VpaClaim *numa = NULL;
  xmlNode *root, *dom, *n;
  gboolean running;

  g_return_val_if_fail (doc != NULL && claims != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  root = xmlDocGetRootElement (doc);
  running = vpa_xml_is (root, "domstatus", NULL);
  dom = running ? vpa_xml_child (root, "domain", NULL) : root;
  if (!vpa_xml_is (dom, "domain", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: root element <%s> is neither <domain> nor <domstatus><domain>",
                   what, (const char *) root->name);
      return FALSE;
    }
  n = vpa_xml_child (dom, "name", NULL);
  name = n != NULL ? vpa_xml_name (n) : NULL;
  if (name == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <domain> without <name>", what);
      return FALSE;
    }
  if (g_strcmp0 (name, exclude) == 0)
    return TRUE;
  if (!vpa_xml_numa_claim (dom, name, running, what, &numa, error))
    return FALSE;
  if (numa != NULL)
    g_ptr_array_add (claims, numa);
  /* An address that does not parse claims nothing: libvirt would not
   * have written it. */
  devs = vpa_xml_domain_pci_devices (dom, what, VPA_XML_PCI_ACTUAL, NULL);
  for (guint i = 0; i < devs->len; i++)
    {
      VpaAddr addr = g_array_index (devs, VpaXmlPciDevice, i).addr;
      if (addr != VPA_ADDR_NONE)
        g_ptr_array_add (claims, vpa_claim_new (name, addr, running));
    }
  return TRUE;
}

/* memmem() for the short needles below: memchr() on the needle's first
 * byte (vectorised in glibc, where its memmem is not) and a compare;
 * the same answer, several times faster on state files. */
static const char *
find (const char *hay, gsize len, const char *needle, gsize n)
{
  const char *p = hay;
  const char *end = hay + len;

  while (n > 0 && (gsize) (end - p) >= n &&
         (p = memchr (p, needle[0], (gsize) (end - p) - n + 1)) != NULL)
    {
      gsize i = 1;

      while (i < n && p[i] == needle[i])
        i++;
      if (i == n)
        return p;
      p++;
    }
  return NULL;
}

/* What one pass over the state directories is asked for. */
typedef struct {
  const char *exclude;
  const char *const *needles; /* NULL: every file */
  gboolean running_only;
  GPtrArray *claims;
  GPtrArray *skipped;   /* may be NULL */
  const VpaAddr *addrs; /* sorted; NULL: no address filter */
  guint n_addrs;
  gboolean defined_only; /* with addrs: skip <domstatus> files */
} Scan;

/* One entry of a state directory, listed with its directory's others and
 * then read (take_entry), in name order: the claims, the first error and
 * the skipped lines are those of one pass. */
typedef struct {
  int dfd;
  const char *dir;
  char *name;         /* NULL: error says why the directory cannot be read */
  unsigned char type; /* readdir's d_type */
  char *skipped;      /* the line telling why it was skipped */
  GError *error;
} Entry;

static void
entry_clear (Entry *e)
{
  g_free (e->name);
  g_free (e->skipped);
  g_clear_error (&e->error);
}

/* A worker's buffer: the file read last, NUL-terminated. */
typedef struct {
  char *data;
  gsize cap;
} Scratch;

/* libvirt's state files are a few tens of kilobytes. */
#define SCRATCH_FIRST (64 * 1024)

static char *
skip_line (const char *path, const char *why)
{
  g_debug ("%s: skipped: %s", path, why);
  return g_strdup_printf ("[claims] state-dirs: skipped '%s': %s", path, why);
}

/* A dangling link is a file that vanished, as when the daemon removes
 * it while we read (stat() reads nothing and never blocks); any other
 * link or special file is told. */
static void
skip_entry (Entry *e, unsigned char type)
{
  g_autofree char *path = g_build_filename (e->dir, e->name, NULL);
  struct stat st;

  if (type != DT_LNK)
    e->skipped = skip_line (path, vpa_file_kind (DTTOIF (type)));
  else if (fstatat (e->dfd, e->name, &st, 0) == 0 || errno != ENOENT)
    e->skipped = skip_line (path, "a symbolic link (libvirt writes none)");
}

static void
entry_error (Entry *e, int err, const char *why)
{
  g_autofree char *path = g_build_filename (e->dir, e->name, NULL);

  if (why != NULL)
    g_set_error (&e->error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                 "[claims] state-dirs: '%s' is larger than %d bytes: cannot know which devices it holds",
                 path, VPA_XML_MAX_DOCUMENT);
  else
    g_set_error (&e->error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                 "[claims] state-dirs: cannot read '%s': %s", path, g_strerror (err));
}

/* TRUE when fd is not a regular file: e->skipped then says what it is. */
static gboolean
skip_special (Entry *e, int fd, int *err)
{
  struct stat st;

  if (fstat (fd, &st) != 0)
    {
      *err = errno;
      return FALSE;
    }
  if (S_ISREG (st.st_mode))
    return FALSE;
  {
    g_autofree char *path = g_build_filename (e->dir, e->name, NULL);
    e->skipped = skip_line (path, vpa_file_kind (st.st_mode));
  }
  return TRUE;
}

/* Reads fd to its end into s, one byte past VPA_XML_MAX_DOCUMENT at most
 * (which shows a file too large); *err is errno on a failed read. */
static gsize
read_all (int fd, Scratch *s, gboolean regular, int *err)
{
  gsize off = 0;

  *err = 0;
  for (;;)
    {
      gsize want;
      ssize_t n;

      if (off + 1 >= s->cap)
        {
          if (s->cap >= (gsize) VPA_XML_MAX_DOCUMENT + 2)
            return off;
          s->cap = MIN (MAX (s->cap * 2, (gsize) SCRATCH_FIRST), (gsize) VPA_XML_MAX_DOCUMENT + 2);
          s->data = g_realloc (s->data, s->cap);
        }
      want = s->cap - 1 - off;
      n = read (fd, s->data + off, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        *err = errno;
      if (n <= 0)
        return off;
      off += (gsize) n;
      /* A regular file reads short only at its end: no read for the 0. */
      if (regular && (gsize) n < want)
        return off;
    }
}

/* Reads e's file without following a link and without blocking (a FIFO
 * opens at once and is then seen for what it is) into s: a regular file
 * of at most VPA_XML_MAX_DOCUMENT bytes. readdir's type is trusted for a
 * regular file (no stat: each system call counts in the hook); whatever
 * reads unlike one is looked at again. FALSE when the file vanished or
 * is skipped (e->skipped), or exists but cannot be read or is too large
 * to know what it holds (e->error). */
static gboolean
read_state_file (Entry *e, Scratch *s, gsize *len)
{
  int fd = openat (e->dfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  gboolean regular = e->type == DT_REG;
  int err = 0;

  if (fd < 0)
    {
      err = errno;
      if (err == ELOOP)
        skip_entry (e, DT_LNK);
      else if (err != ENOENT)
        entry_error (e, err, NULL);
      return FALSE;
    }
  if (!regular && (skip_special (e, fd, &err) || err != 0))
    {
      close (fd);
      if (err != 0)
        entry_error (e, err, NULL);
      return FALSE;
    }
  *len = read_all (fd, s, regular, &err);
  /* Only what is not a regular file after all reads like this. */
  if (regular && (err != 0 || *len > VPA_XML_MAX_DOCUMENT) && skip_special (e, fd, &err))
    {
      close (fd);
      return FALSE;
    }
  close (fd);
  if (err != 0)
    entry_error (e, err, NULL);
  else if (*len > VPA_XML_MAX_DOCUMENT)
    entry_error (e, 0, "too large");
  if (e->error != NULL)
    return FALSE;
  s->data[*len] = '\0';
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Which files may name an address, from their bytes                   */
/* ------------------------------------------------------------------ */

/* Whether the parser could read the document in another encoding than
 * the bytes show: libxml2 decides from the first four bytes (UTF-16,
 * UCS-4, EBCDIC signatures and byte-order marks) and from an encoding
 * declaration. Only UTF-8 (with or without its mark) and no declaration
 * of another encoding leave the bytes as the parser reads them. */
static gboolean
bytes_are_text (const char *buf, gsize len, gsize *start)
{
  const char *decl_end;
  const char *enc;

  *start = 0;
  if (len >= 3 && memcmp (buf, "\xef\xbb\xbf", 3) == 0)
    *start = 3;
  for (gsize i = *start; i < MIN (len, *start + 4); i++)
    if (buf[i] == '\0' || (guchar) buf[i] >= 0x80)
      return FALSE;
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
static gboolean
prolog_plain (const char *buf, gsize len, gsize start, const char **body)
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

static gboolean
is_blank (char c)
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
        lo = mid + 1;
      else
        hi = mid;
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
    if (name[i - 1] == ':')
      {
        name += i;
        len -= i;
        break;
      }
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].len == len && memcmp (name, fields[i].name, len) == 0)
      return (gint) i;
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
    if (fields[i].p != NULL)
      values[i] = g_strndup (fields[i].p, fields[i].len);
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

  while (p < end && is_blank (*p))
    p++;
  if (p >= end || *p != '=')
    return VALUE_NO_EQ;
  p++;
  while (p < end && is_blank (*p))
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
  while (p < end && is_blank (*p))
    p++;
  if (p < end && (*p == '>' || (*p == '/' && p + 1 < end && p[1] == '>')))
    {
      *pp = p + (*p == '>' ? 1 : 2);
      *closed = TRUE;
      return FALSE;
    }
  name->p = p;
  while (p < end && !is_blank (*p) && *p != '=' && *p != '>' && *p != '/')
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

  while (p < end && !is_blank (*p) && *p != '>' && *p != '/')
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

  if (hit == buf || (!is_blank (hit[-1]) && hit[-1] != ':'))
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
static gboolean
local_name_is (const char *name, gsize len, const char *want)
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
      const char *close = p[1] == '?' ? "?>" : strncmp (p, "<!--", 4) == 0      ? "-->"
                                             : strncmp (p, "<![CDATA[", 9) == 0 ? "]]>"
                                                                                : NULL;
      if (close == NULL || w->end - p < 2 ||
          (q = find (p + 2, (gsize) (w->end - p - 2), close, strlen (close))) == NULL)
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

  return local_name_is (tag + 1, len, "address") && parent > 0 &&
         local_name_is (w->names[parent - 1], w->lens[parent - 1], "source");
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
  if (!bytes_are_text (buf, len, &start) || !prolog_plain (buf, len, start, &body))
    return TRUE;
  /* One strstr() over the whole buffer (glibc's is vectorised, its
   * memmem() is not); the buffer ends with a NUL and holds none before.
   * Searches repeated along the buffer use find(), bounded by end. */
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
  for (; (p = find (p, (gsize) (end - p), "bus", 3)) != NULL; p += 3)
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

/* libvirt's status files start with <domstatus> (after an XML
 * declaration or a comment at most). */
static gboolean
is_domstatus (const char *buf, gsize len)
{
  const char *p = memmem (buf, MIN (len, 4096), "<domstatus", strlen ("<domstatus"));
  const char *d = memmem (buf, MIN (len, 4096), "<domain", strlen ("<domain"));

  return p != NULL && (d == NULL || p < d);
}

/* TRUE only when the parser would find the root element <domstatus>
 * (no namespace prefix), decided as vpa_statedirs_may_name() reads the
 * prolog; FALSE whenever the bytes cannot tell. */
static gboolean
root_is_domstatus (const char *buf, gsize len)
{
  const char *body = NULL;
  gsize start = 0;
  gsize rest;

  if (!bytes_are_text (buf, len, &start) || !prolog_plain (buf, len, start, &body) ||
      body == NULL)
    return FALSE;
  rest = (gsize) (buf + len - body);
  return rest > strlen ("<domstatus") && memcmp (body, "<domstatus", strlen ("<domstatus")) == 0 &&
         (is_blank (body[10]) || body[10] == '>' || body[10] == '/');
}

/* Whether the file read into buf must be parsed for the scan. */
static gboolean
wanted (const Scan *scan, const char *buf, gsize len)
{
  /* Most domains hold no PCI device and pin nothing: skip them without
   * parsing. (With addrs the scan below decides alone: a file it lets
   * through that this test would skip can only add claims, on which the
   * caller falls back to reading every file.) */
  if (scan->addrs == NULL && find (buf, len, "hostdev", strlen ("hostdev")) == NULL &&
      find (buf, len, "cpuset", strlen ("cpuset")) == NULL &&
      find (buf, len, "numatune", strlen ("numatune")) == NULL)
    return FALSE;
  if (scan->running_only && !is_domstatus (buf, len))
    return FALSE;
  if (scan->needles != NULL)
    {
      gboolean any = FALSE;
      for (guint i = 0; !any && scan->needles[i] != NULL; i++)
        any = find (buf, len, scan->needles[i], strlen (scan->needles[i])) != NULL;
      if (!any)
        return FALSE;
    }
  if (scan->addrs != NULL && scan->defined_only && root_is_domstatus (buf, len))
    return FALSE;
  return scan->addrs == NULL || vpa_statedirs_may_name (buf, len, scan->addrs, scan->n_addrs);
}

typedef enum {
  FILE_PARTIAL,  /* no root, or its end tag is not where the bytes end */
  FILE_COMPLETE, /* a <domain> or <domstatus> that ends where it should */
  FILE_NOT_OURS, /* a complete document of another root: not libvirt's domain */
} FileShape;

/* What a state file that did not parse is, from its bytes: libvirt
 * writes each whole (to a new file, then renamed), so a file caught
 * half-written by another writer ends before its root's end tag. When
 * the bytes cannot tell (another encoding, a document type
 * declaration) the file counts as complete: it must be read. */
static FileShape
file_shape (const char *buf, gsize len)
{
  const char *body = NULL;
  const char *end = buf + len;
  gsize start = 0, name_len;

  if (!bytes_are_text (buf, len, &start) || !prolog_plain (buf, len, start, &body))
    return FILE_COMPLETE;
  if (body == NULL || body >= end)
    return FILE_PARTIAL;
  name_len = MIN (strcspn (body + 1, " \t\r\n/>"), (gsize) (end - body - 1));
  while (end > body && is_blank (end[-1]))
    end--;
  /* a root element that closes itself, or its end tag last */
  if (!(end - body >= 2 && end[-1] == '>' &&
        (memchr (body, '>', (gsize) (end - body)) == end - 1
           ? end[-2] == '/'
           : ((gsize) (end - body) >= name_len + 3 &&
              memcmp (end - name_len - 1, body + 1, name_len) == 0 &&
              end[-name_len - 2] == '/' && end[-name_len - 3] == '<'))))
    return FILE_PARTIAL;
  if (!local_name_is (body + 1, name_len, "domain") && !local_name_is (body + 1, name_len, "domstatus"))
    return FILE_NOT_OURS;
  return FILE_COMPLETE;
}

static gint
entry_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (((const Entry *) a)->name, ((const Entry *) b)->name);
}

/* Lists dir's "*.xml" entries into entries, in name order. A directory
 * that does not exist has none; one that cannot be read is an entry
 * whose error says so. *dirp is the open directory (NULL when none). */
static void
list_dir (const char *dir, GArray *entries, DIR **dirp)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  guint first = entries->len;
  struct dirent *ent;
  DIR *d;

  *dirp = NULL;
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      int e = errno;
      Entry bad = { -1, dir, NULL, DT_UNKNOWN, NULL, NULL };

      if (fd >= 0)
        close (fd);
      if (e == ENOENT)
        return;
      g_set_error (&bad.error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", dir, g_strerror (e));
      g_array_append_val (entries, bad);
      return;
    }
  *dirp = d;
  while ((ent = readdir (d)) != NULL)
    if (g_str_has_suffix (ent->d_name, ".xml") && ent->d_name[0] != '.')
      {
        Entry e = { dirfd (d), dir, g_strdup (ent->d_name), ent->d_type, NULL, NULL };

        /* What readdir already tells is never opened (a device node's
         * open may act); read_state_file() checks again what reads
         * unlike a regular file. */
        if (ent->d_type != DT_REG && ent->d_type != DT_UNKNOWN)
          skip_entry (&e, ent->d_type);
        g_array_append_val (entries, e);
      }
  /* Name order keeps the claims (and messages naming them) stable. */
  if (entries->len - first > 1)
    qsort (&g_array_index (entries, Entry, first), entries->len - first, sizeof (Entry),
           entry_cmp);
}

/* Reads one entry into s and parses it when the scan wants it; FALSE on
 * an error, which ends the pass. */
static gboolean
take_entry (const Scan *scan, Entry *e, Scratch *s, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *path = NULL;
  gboolean read = FALSE;
  gsize len = 0;

  if (e->name != NULL && e->skipped == NULL)
    read = read_state_file (e, s, &len);
  if (e->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&e->error));
      return FALSE;
    }
  if (e->skipped != NULL && scan->skipped != NULL)
    g_ptr_array_add (scan->skipped, g_steal_pointer (&e->skipped));
  if (!read || !wanted (scan, s->data, len))
    return TRUE;
  path = g_build_filename (e->dir, e->name, NULL);
  if (vpa_statedirs_parse (s->data, len, path, scan->exclude, scan->claims, &local))
    return TRUE;
  /* Only a file caught half-written, or one that is no domain at all,
   * holds nothing: a complete domain whose claims cannot be read may
   * hold a device or a dedicated CPU, so nothing can be checked. */
  switch (file_shape (s->data, len))
    {
    case FILE_PARTIAL:
    case FILE_NOT_OURS:
      g_debug ("skipped: %s", local->message);
      return TRUE;
    case FILE_COMPLETE:
      break;
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
               "[claims] state-dirs: a complete state file cannot be read, so the devices and CPUs it holds cannot be checked: %s",
               local->message);
  return FALSE;
}

static void
close_dir (gpointer d)
{
  closedir (d);
}

/* Reads every directory of dirs for scan: listed, then each file read
 * and parsed in turn (one file's bytes held at a time). */
static gboolean
scan_dirs (const Scan *scan, const char *const *dirs, GError **error)
{
  g_autoptr (GArray) entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  g_autoptr (GPtrArray) opened = g_ptr_array_new_with_free_func (close_dir);
  Scratch s = { NULL, 0 };
  gboolean ok = TRUE;

  g_array_set_clear_func (entries, (GDestroyNotify) entry_clear);
  for (guint i = 0; dirs != NULL && dirs[i] != NULL; i++)
    {
      DIR *d = NULL;

      if (*dirs[i] == '\0')
        continue;
      list_dir (dirs[i], entries, &d);
      if (d != NULL)
        g_ptr_array_add (opened, d);
    }
  for (guint i = 0; ok && i < entries->len; i++)
    ok = take_entry (scan, &g_array_index (entries, Entry, i), &s, error);
  g_free (s.data);
  return ok;
}

GPtrArray *
vpa_statedirs_load (const char *const *dirs, const char *exclude, GError **error)
{
  return vpa_statedirs_load_buses (dirs, exclude, NULL, 0, error);
}

GPtrArray *
vpa_statedirs_load_buses (const char *const *dirs, const char *exclude, const guint *buses,
                          guint n_buses, GError **error)
{
  VpaStatedirsQuery q = { dirs, exclude, buses, n_buses, FALSE, NULL };

  return vpa_statedirs_query (&q, error);
}

static gint
addr_cmp (gconstpointer a, gconstpointer b)
{
  VpaAddr x = *(const VpaAddr *) a, y = *(const VpaAddr *) b;

  return x < y ? -1 : x > y ? 1
                            : 0;
}

GPtrArray *
vpa_statedirs_query (const VpaStatedirsQuery *q, GError **error)
{
  g_auto (GStrv) needles = NULL;
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (GArray) sorted = NULL;
  Scan scan = { q->exclude, NULL, q->running_only, claims, q->skipped, NULL, 0, q->defined_only };

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (q->buses != NULL)
    {
      /* libvirt writes its own files' PCI addresses as bus='0x81'; the
       * other quote is accepted for files edited by hand. */
      needles = g_new0 (char *, 2 * q->n_buses + 1);
      for (guint i = 0; i < q->n_buses; i++)
        {
          needles[2 * i] = g_strdup_printf ("bus='0x%02x'", q->buses[i]);
          needles[2 * i + 1] = g_strdup_printf ("bus=\"0x%02x\"", q->buses[i]);
        }
      scan.needles = (const char *const *) needles;
    }
  if (q->addrs != NULL)
    {
      sorted = g_array_sized_new (FALSE, FALSE, sizeof (VpaAddr), q->n_addrs);
      g_array_append_vals (sorted, q->addrs, q->n_addrs);
      g_array_sort (sorted, addr_cmp);
      scan.addrs = (const VpaAddr *) (gpointer) sorted->data;
      scan.n_addrs = sorted->len;
    }
  if (!scan_dirs (&scan, q->dirs, error))
    return NULL;
  return g_steal_pointer (&claims);
}
