/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-statedirs.h"
#include "vpa-statedirs-private.h"

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
  xmlDoc *doc = vpa_xml_parse_memory (&(VpaDoc){ buf, len, what }, &local);

  if (doc != NULL)
    return doc;
  /* The pre-scan stops at the first bound crossed: the files that fail
   * for another reason pay one more linear pass, and keep their error. */
  if (len == 0 || len > (gsize) VPA_XML_MAX_DOCUMENT || memchr (buf, '\0', len) != NULL ||
      vpa_xml_prescan (&(VpaDoc){ buf, len, what }, NULL))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  return vpa_state_reduce (&(VpaDoc){ buf, len, what }, error);
}

gboolean
vpa_statedirs_parse (const VpaDoc *doc, const char *exclude, GPtrArray *claims, GError **error)
{
  g_autoptr (xmlDoc) xml = NULL;

  g_return_val_if_fail (doc != NULL && claims != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((xml = parse_state_file (doc->buf, doc->len, doc->what, error)) == NULL)
    return FALSE;
  return vpa_statedirs_claims (xml, doc->what, exclude, claims, error);
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
  if (!vpa_numa_claim (dom, name, running, what, &numa, error))
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
const char *
vpa_statedirs_find (const char *hay, gsize len, const char *needle, gsize n)
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
    {
      e->skipped = skip_line (path, vpa_file_kind (DTTOIF (type)));
    }
  else if (fstatat (e->dfd, e->name, &st, 0) == 0 || errno != ENOENT)
    {
      e->skipped = skip_line (path, "a symbolic link (libvirt writes none)");
    }
}

static void
entry_error (Entry *e, int err, const char *why)
{
  g_autofree char *path = g_build_filename (e->dir, e->name, NULL);

  if (why != NULL)
    {
      g_set_error (&e->error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: '%s' is larger than %d bytes: cannot know which devices it holds",
                   path, VPA_XML_MAX_DOCUMENT);
    }
  else
    {
      g_set_error (&e->error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", path, g_strerror (err));
    }
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
        {
          skip_entry (e, DT_LNK);
        }
      else if (err != ENOENT)
        {
          entry_error (e, err, NULL);
        }
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
    {
      entry_error (e, err, NULL);
    }
  else if (*len > VPA_XML_MAX_DOCUMENT)
    {
      entry_error (e, 0, "too large");
    }
  if (e->error != NULL)
    return FALSE;
  s->data[*len] = '\0';
  return TRUE;
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

  if (!vpa_statedirs_bytes_are_text (buf, len, &start) || !vpa_statedirs_prolog_plain (buf, len, start, &body) ||
      body == NULL)
    return FALSE;
  rest = (gsize) (buf + len - body);
  return rest > strlen ("<domstatus") && memcmp (body, "<domstatus", strlen ("<domstatus")) == 0 &&
         (vpa_statedirs_is_blank (body[10]) || body[10] == '>' || body[10] == '/');
}

/* Whether the file read into buf must be parsed for the scan. */
static gboolean
wanted (const Scan *scan, const char *buf, gsize len)
{
  /* Most domains hold no PCI device and pin nothing: skip them without
   * parsing. (With addrs the scan below decides alone: a file it lets
   * through that this test would skip can only add claims, on which the
   * caller falls back to reading every file.) */
  if (scan->addrs == NULL && vpa_statedirs_find (buf, len, "hostdev", strlen ("hostdev")) == NULL &&
      vpa_statedirs_find (buf, len, "cpuset", strlen ("cpuset")) == NULL &&
      vpa_statedirs_find (buf, len, "numatune", strlen ("numatune")) == NULL)
    return FALSE;
  if (scan->running_only && !is_domstatus (buf, len))
    return FALSE;
  if (scan->needles != NULL)
    {
      gboolean any = FALSE;
      for (guint i = 0; !any && scan->needles[i] != NULL; i++)
        any = vpa_statedirs_find (buf, len, scan->needles[i], strlen (scan->needles[i])) != NULL;
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

  if (!vpa_statedirs_bytes_are_text (buf, len, &start) || !vpa_statedirs_prolog_plain (buf, len, start, &body))
    return FILE_COMPLETE;
  if (body == NULL || body >= end)
    return FILE_PARTIAL;
  name_len = MIN (strcspn (body + 1, " \t\r\n/>"), (gsize) (end - body - 1));
  while (end > body && vpa_statedirs_is_blank (end[-1]))
    end--;
  /* a root element that closes itself, or its end tag last */
  if (!(end - body >= 2 && end[-1] == '>' &&
        (memchr (body, '>', (gsize) (end - body)) == end - 1
           ? end[-2] == '/'
           : ((gsize) (end - body) >= name_len + 3 &&
              memcmp (end - name_len - 1, body + 1, name_len) == 0 &&
              end[-name_len - 2] == '/' && end[-name_len - 3] == '<'))))
    return FILE_PARTIAL;
  if (!vpa_statedirs_local_name_is (body + 1, name_len, "domain") && !vpa_statedirs_local_name_is (body + 1, name_len, "domstatus"))
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
    {
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
    }
  /* Name order keeps the claims (and messages naming them) stable. */
  if (entries->len - first > 1)
    {
      qsort (&g_array_index (entries, Entry, first), entries->len - first, sizeof (Entry),
             entry_cmp);
    }
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
  if (vpa_statedirs_parse (&(VpaDoc){ s->data, len, path }, scan->exclude, scan->claims, &local))
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
