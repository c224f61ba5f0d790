/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-statedirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpa-xml.h"

gboolean
vpa_statedirs_parse (const char *buf, gsize len, const char *what,
                     const char *exclude, GPtrArray *claims, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autofree char *name = NULL;
  g_autoptr (GArray) devs = NULL;
  xmlNode *root, *dom, *n;
  gboolean running;

  g_return_val_if_fail (claims != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((doc = vpa_xml_parse_memory (buf, len, what, error)) == NULL)
    return FALSE;
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
  {
    VpaClaim *numa = vpa_xml_numa_claim (dom, name, running);
    if (numa != NULL)
      g_ptr_array_add (claims, numa);
  }
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

/* What one pass over the state directories is asked for. */
typedef struct {
  const char *exclude;
  const char *const *needles; /* NULL: every file */
  gboolean running_only;
  GPtrArray *claims;
  GPtrArray *skipped; /* may be NULL */
} Scan;

static void
skip_file (const Scan *scan, const char *path, const char *why)
{
  g_debug ("%s: skipped: %s", path, why);
  if (scan->skipped != NULL)
    g_ptr_array_add (scan->skipped, g_strdup_printf ("[claims] state-dirs: skipped '%s': %s",
                                                     path, why));
}

static const char *
file_kind (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISLNK (mode))
    return "a symbolic link";
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return "a device node";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a regular file";
}

/* A dangling link is a file that vanished, as when the daemon removes
 * it while we read (stat() reads nothing and never blocks); any other
 * link or special file is told. */
static void
skip_entry (const Scan *scan, int dfd, const char *path, const char *name, unsigned char type)
{
  struct stat st;

  if (type != DT_LNK)
    skip_file (scan, path, file_kind (DTTOIF (type)));
  else if (fstatat (dfd, name, &st, 0) == 0 || errno != ENOENT)
    skip_file (scan, path, "a symbolic link (libvirt writes none)");
}

/* Reads dir/name without following a link and without blocking (a FIFO
 * opens at once and is then seen for what it is): a regular file of at
 * most VPA_XML_MAX_DOCUMENT bytes into *buf. *buf stays NULL for a file
 * that vanished or is skipped (told in scan->skipped); FALSE for one that
 * exists but cannot be read, or is too large to know what it holds. */
static gboolean
read_state_file (const Scan *scan, int dfd, const char *dir, const char *name, char **buf,
                 gsize *len, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *data = NULL;
  struct stat st;
  gsize off = 0;
  int fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  int e = 0;

  *buf = NULL;
  if (fd < 0)
    {
      e = errno;
      if (e == ENOENT)
        return TRUE;
      if (e == ELOOP)
        {
          skip_entry (scan, dfd, path, name, DT_LNK);
          return TRUE;
        }
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", path, g_strerror (e));
      return FALSE;
    }
  if (fstat (fd, &st) != 0)
    {
      e = errno;
      close (fd);
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", path, g_strerror (e));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      skip_file (scan, path, file_kind (st.st_mode));
      return TRUE;
    }
  /* One byte more than the limit shows a file that grew past it. */
  data = g_malloc ((gsize) MIN (st.st_size, VPA_XML_MAX_DOCUMENT) + 2);
  while (off <= (gsize) MIN (st.st_size, VPA_XML_MAX_DOCUMENT))
    {
      ssize_t n = read (fd, data + off, (gsize) MIN (st.st_size, VPA_XML_MAX_DOCUMENT) + 1 - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        e = errno;
      if (n <= 0)
        break;
      off += (gsize) n;
    }
  close (fd);
  if (e != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", path, g_strerror (e));
      return FALSE;
    }
  if (off > VPA_XML_MAX_DOCUMENT)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: '%s' is larger than %d bytes: cannot know which devices it holds",
                   path, VPA_XML_MAX_DOCUMENT);
      return FALSE;
    }
  data[off] = '\0';
  *len = off;
  *buf = g_steal_pointer (&data);
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

/* Reads one state file into claims; a file that vanished, is skipped or
 * does not parse adds nothing. */
static gboolean
load_file (const Scan *scan, int dfd, const char *dir, const char *name, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *buf = NULL;
  g_autofree char *path = NULL;
  gsize len = 0;

  if (!read_state_file (scan, dfd, dir, name, &buf, &len, error))
    return FALSE;
  if (buf == NULL)
    return TRUE;
  /* Most domains hold no PCI device and pin nothing: skip them without
   * parsing. */
  if (memmem (buf, len, "hostdev", strlen ("hostdev")) == NULL &&
      memmem (buf, len, "vcpupin", strlen ("vcpupin")) == NULL &&
      memmem (buf, len, "numatune", strlen ("numatune")) == NULL)
    return TRUE;
  if (scan->running_only && !is_domstatus (buf, len))
    return TRUE;
  if (scan->needles != NULL)
    {
      gboolean any = FALSE;
      for (guint i = 0; !any && scan->needles[i] != NULL; i++)
        any = memmem (buf, len, scan->needles[i], strlen (scan->needles[i])) != NULL;
      if (!any)
        return TRUE;
    }
  path = g_build_filename (dir, name, NULL);
  if (!vpa_statedirs_parse (buf, len, path, scan->exclude, scan->claims, &local))
    g_debug ("skipped: %s", local->message);
  return TRUE;
}

static gint
name_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static gboolean
load_dir (const Scan *scan, const char *dir, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct dirent *ent;
  gboolean ok = TRUE;
  DIR *d;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      if (e == ENOENT)
        return TRUE;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", dir, g_strerror (e));
      return FALSE;
    }
  while ((ent = readdir (d)) != NULL)
    if (g_str_has_suffix (ent->d_name, ".xml") && ent->d_name[0] != '.')
      {
        /* What readdir already tells is never opened (a device node's
         * open may act); read_state_file() checks again what it opens. */
        if (ent->d_type != DT_REG && ent->d_type != DT_UNKNOWN)
          {
            g_autofree char *path = g_build_filename (dir, ent->d_name, NULL);
            skip_entry (scan, dirfd (d), path, ent->d_name, ent->d_type);
            continue;
          }
        g_ptr_array_add (names, g_strdup (ent->d_name));
      }
  /* Name order keeps the claims (and messages naming them) stable. */
  g_ptr_array_sort (names, name_cmp);
  for (guint i = 0; ok && i < names->len; i++)
    ok = load_file (scan, dirfd (d), dir, g_ptr_array_index (names, i), error);
  closedir (d);
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

GPtrArray *
vpa_statedirs_query (const VpaStatedirsQuery *q, GError **error)
{
  g_auto (GStrv) needles = NULL;
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  Scan scan = { q->exclude, NULL, q->running_only, claims, q->skipped };

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
  for (guint i = 0; q->dirs != NULL && q->dirs[i] != NULL; i++)
    {
      if (*q->dirs[i] == '\0')
        continue;
      if (!load_dir (&scan, q->dirs[i], error))
        return NULL;
    }
  return g_steal_pointer (&claims);
}
