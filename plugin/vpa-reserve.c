/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reserved devices: the records and their state file (vpa-reserve.h).
 * Parsing is one pass over bounded bytes, each line checked whole; a
 * field that g_strescape did not write (a lone backslash, an octal
 * escape past a byte, a byte it would have escaped) is an error, so that
 * formatting what was parsed gives back the same bytes.
 */
#include "vpa-reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vpa-enum.h"
#include "vpa-file.h"

#define HEADER "# virt-pci-affinity reservations 1\n"
#define HEADER_PREFIX "# virt-pci-affinity reservations "
#define UUID_MAX 64
#define LOCK_TRIES 200 /* of 10 ms */

VPA_ENUM_IMPL (vpa_reserve_kind, VpaReserveKind, VPA_RESERVE_LAST, "one-time-use", "quarantine")

gboolean
vpa_reserve_one_time_use_value (const char *value, gboolean *out)
{
  static const char *const yes[] = { "1", "t", "true", "on", "y", "yes" };
  static const char *const no[] = { "0", "f", "false", "off", "n", "no" };
  g_autofree char *v = g_strstrip (g_ascii_strdown (value, -1));

  for (guint i = 0; i < G_N_ELEMENTS (yes); i++)
    {
      if (strcmp (v, yes[i]) == 0 || strcmp (v, no[i]) == 0)
        {
          *out = strcmp (v, yes[i]) == 0;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean uuid_ok (const char *w);

VpaReservation *
vpa_reserve_item_new (VpaAddr addr, VpaReserveKind kind, gint64 since, const char *domain,
                      const char *uuid, const char *reason)
{
  VpaReservation *r = g_new0 (VpaReservation, 1);

  r->addr = addr;
  r->kind = kind;
  r->since = since;
  r->domain = g_strdup (domain);
  /* a UUID the file could not hold is as none (libvirt never gives one) */
  r->uuid = uuid != NULL && uuid_ok (uuid) ? g_strdup (uuid) : NULL;
  r->reason = g_strdup (reason);
  return r;
}

void
vpa_reserve_item_free (VpaReservation *r)
{
  if (r == NULL)
    return;
  g_free (r->domain);
  g_free (r->uuid);
  g_free (r->reason);
  g_free (r);
}

gboolean
vpa_reserve_blocks (const VpaReservation *r, const char *name, const char *uuid)
{
  g_return_val_if_fail (r != NULL, TRUE);

  if (r->kind != VPA_RESERVE_ONE_TIME_USE || name == NULL || r->domain == NULL)
    return TRUE;
  if (strcmp (r->domain, name) != 0)
    return TRUE;
  return uuid != NULL && r->uuid != NULL && g_ascii_strcasecmp (uuid, r->uuid) != 0;
}

char *
vpa_reserve_since_text (const VpaReservation *r)
{
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_utc (r->since);

  return t != NULL ? g_date_time_format (t, "%Y-%m-%dT%H:%M:%SZ") : g_strdup ("?");
}

char *
vpa_reserve_describe (const VpaReservation *r)
{
  g_autofree char *since = vpa_reserve_since_text (r);
  g_autofree char *what = NULL;
  char buf[VPA_ADDR_BUFLEN];

  if (r->kind == VPA_RESERVE_QUARANTINE)
    {
      what = g_strdup_printf ("quarantined since %s: '%s'", since, r->reason != NULL ? r->reason : "");
    }
  else
    {
      what = g_strdup_printf ("one-time-use, used by domain '%s' since %s", r->domain, since);
    }
  return g_strdup_printf ("is reserved: %s (virt-pci-affinity device release %s returns it)",
                          what, vpa_addr_format (r->addr, buf));
}

/* ------------------------------------------------------------------ */
/* The set                                                             */
/* ------------------------------------------------------------------ */

VpaReserveSet *
vpa_reserve_set_new (const char *path)
{
  VpaReserveSet *set = g_new0 (VpaReserveSet, 1);

  set->path = g_strdup (path != NULL ? path : "(reservations)");
  set->items = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_reserve_item_free);
  return set;
}

void
vpa_reserve_set_free (VpaReserveSet *set)
{
  if (set == NULL)
    return;
  g_free (set->path);
  g_ptr_array_unref (set->items);
  g_free (set);
}

/* The index of addr, or where it would go (*found FALSE). */
static guint
lower_bound (const VpaReserveSet *set, VpaAddr addr, gboolean *found)
{
  guint lo = 0, hi = set->items->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (((const VpaReservation *) set->items->pdata[mid])->addr < addr)
        {
          lo = mid + 1;
        }
      else
        {
          hi = mid;
        }
    }
  *found = lo < set->items->len && ((const VpaReservation *) set->items->pdata[lo])->addr == addr;
  return lo;
}

const VpaReservation *
vpa_reserve_set_find (const VpaReserveSet *set, VpaAddr addr)
{
  gboolean found;
  guint i;

  if (set == NULL)
    return NULL;
  i = lower_bound (set, addr, &found);
  return found ? set->items->pdata[i] : NULL;
}

void
vpa_reserve_set_put (VpaReserveSet *set, VpaReservation *r)
{
  gboolean found;
  guint i;

  g_return_if_fail (set != NULL && r != NULL);
  i = lower_bound (set, r->addr, &found);
  if (found)
    {
      vpa_reserve_item_free (set->items->pdata[i]);
      set->items->pdata[i] = r;
    }
  else
    g_ptr_array_insert (set->items, (gint) i, r);
}

gboolean
vpa_reserve_set_remove (VpaReserveSet *set, VpaAddr addr)
{
  gboolean found;
  guint i;

  g_return_val_if_fail (set != NULL, FALSE);
  i = lower_bound (set, addr, &found);
  if (found)
    g_ptr_array_remove_index (set->items, i);
  return found;
}

/* ------------------------------------------------------------------ */
/* The file's text                                                     */
/* ------------------------------------------------------------------ */

char *
vpa_reserve_set_format (const VpaReserveSet *set)
{
  GString *s = g_string_new (HEADER);

  for (guint i = 0; i < set->items->len; i++)
    {
      const VpaReservation *r = set->items->pdata[i];
      char buf[VPA_ADDR_BUFLEN];

      g_string_append_printf (s, "%s %s %" G_GINT64_FORMAT " ", vpa_addr_format (r->addr, buf),
                              vpa_reserve_kind_to_string (r->kind), r->since);
      if (r->kind == VPA_RESERVE_ONE_TIME_USE)
        {
          g_autofree char *dom = g_strescape (r->domain != NULL ? r->domain : "", NULL);
          g_string_append_printf (s, "%s %s\n", r->uuid != NULL ? r->uuid : "-", dom);
        }
      else
        {
          g_autofree char *reason = g_strescape (r->reason != NULL ? r->reason : "", NULL);
          g_string_append_printf (s, "%s\n", reason);
        }
    }
  return g_string_free (s, FALSE);
}

/* Sets error for line line_no; returns NULL. */
static gpointer
line_error (GError **error, const char *path, guint line_no, const char *line, const char *why)
{
  g_autofree char *shown = vpa_message_bound (line, 128);

  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s:%u: '%s': %s", path, line_no, shown,
               why);
  return NULL;
}

/* A field g_strescape wrote, decoded into *out: at most max bytes once
 * decoded, and escaped again it is the same text (no lone backslash, no
 * byte g_strescape would have escaped, no octal escape past a byte). */
static gboolean
unescape_field (const char *field, gsize max, char **out)
{
  g_autofree char *plain = NULL;
  g_autofree char *again = NULL;
  gsize n = strlen (field), k = 0;

  if (n > 4 * max)
    return FALSE;
  while (k < n && field[n - 1 - k] == '\\')
    k++;
  if (k % 2 != 0)
    return FALSE;
  plain = g_strcompress (field);
  if (strlen (plain) > max)
    return FALSE;
  again = g_strescape (plain, NULL);
  if (strcmp (again, field) != 0)
    return FALSE;
  *out = g_steal_pointer (&plain);
  return TRUE;
}

static gboolean
uuid_ok (const char *w)
{
  gsize n = strlen (w);

  if (n == 0 || n > UUID_MAX)
    return FALSE;
  for (const char *p = w; *p != '\0'; p++)
    {
      if (!g_ascii_isxdigit (*p) && *p != '-')
        return FALSE;
    }
  return TRUE;
}

/* One line: ADDR KIND SINCE REST. */
static VpaReservation *
parse_line (const char *line, const char *path, guint no, GError **error)
{
  g_auto (GStrv) w = g_strsplit (line, " ", 4);
  g_autoptr (VpaReservation) r = g_new0 (VpaReservation, 1);
  char buf[VPA_ADDR_BUFLEN];

  if (g_strv_length (w) != 4)
    return line_error (error, path, no, line, "expected ADDRESS KIND SINCE and more");
  if (!vpa_addr_parse (w[0], &r->addr) || strcmp (vpa_addr_format (r->addr, buf), w[0]) != 0)
    return line_error (error, path, no, line, "not a PCI address as DDDD:BB:SS.F");
  if (!vpa_reserve_kind_from_string (w[1], &r->kind))
    return line_error (error, path, no, line, "expected one-time-use or quarantine");
  if (!g_ascii_string_to_signed (w[2], 10, 0, G_MAXINT64, &r->since, NULL) ||
      !g_ascii_isdigit (w[2][0]) || (w[2][0] == '0' && w[2][1] != '\0'))
    return line_error (error, path, no, line, "not a time in seconds");
  if (r->kind == VPA_RESERVE_QUARANTINE)
    {
      if (!unescape_field (w[3], VPA_RESERVE_REASON_MAX, &r->reason))
        return line_error (error, path, no, line, "not a reason as this program writes one");
      return g_steal_pointer (&r);
    }
  {
    const char *sp = strchr (w[3], ' ');
    g_autofree char *uuid = sp != NULL ? g_strndup (w[3], (gsize) (sp - w[3])) : NULL;

    if (uuid == NULL || (strcmp (uuid, "-") != 0 && !uuid_ok (uuid)))
      return line_error (error, path, no, line, "expected a UUID (or '-') and a domain");
    if (!unescape_field (sp + 1, VPA_RESERVE_DOMAIN_MAX, &r->domain) || r->domain[0] == '\0')
      return line_error (error, path, no, line, "not a domain name as this program writes one");
    if (strcmp (uuid, "-") != 0)
      r->uuid = g_steal_pointer (&uuid);
  }
  return g_steal_pointer (&r);
}

static gint
item_cmp (gconstpointer a, gconstpointer b)
{
  VpaAddr x = (*(const VpaReservation *const *) a)->addr;
  VpaAddr y = (*(const VpaReservation *const *) b)->addr;

  return x < y ? -1 : x > y;
}

static gboolean
check_header (const char *data, gsize len, const char *path, GError **error)
{
  if (len >= strlen (HEADER) && memcmp (data, HEADER, strlen (HEADER)) == 0)
    return TRUE;
  if (len >= strlen (HEADER_PREFIX) && memcmp (data, HEADER_PREFIX, strlen (HEADER_PREFIX)) == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "%s: written by another version of virt-pci-affinity (this one reads version 1)",
                   path);
    }
  else
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "%s: not a reservations file (expected the line '%.*s')", path,
                   (int) strlen (HEADER) - 1, HEADER);
    }
  return FALSE;
}

VpaReserveSet *
vpa_reserve_set_parse (const char *data, gsize len, const char *path, GError **error)
{
  g_autoptr (VpaReserveSet) set = vpa_reserve_set_new (path);
  const char *p, *end = data + len;
  guint no = 1;

  g_return_val_if_fail (data != NULL || len == 0, NULL);

  if (len > VPA_RESERVE_FILE_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: over %d bytes", path,
                   VPA_RESERVE_FILE_MAX);
      return NULL;
    }
  if (!check_header (data, len, path, error))
    return NULL;
  if (memchr (data, '\0', len) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: holds a NUL byte", path);
      return NULL;
    }
  for (p = data + strlen (HEADER); p < end;)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      g_autofree char *line = g_strndup (p, nl != NULL ? (gsize) (nl - p) : (gsize) (end - p));
      VpaReservation *r;

      no++;
      p = nl != NULL ? nl + 1 : end;
      if (nl == NULL)
        return line_error (error, path, no, line, "the last line is not complete");
      if (set->items->len >= VPA_RESERVE_MAX)
        return line_error (error, path, no, line, "more than 4096 reservations");
      if ((r = parse_line (line, path, no, error)) == NULL)
        return NULL;
      g_ptr_array_add (set->items, r);
    }
  g_ptr_array_sort (set->items, item_cmp);
  for (guint i = 1; i < set->items->len; i++)
    {
      if (((VpaReservation *) set->items->pdata[i - 1])->addr ==
          ((VpaReservation *) set->items->pdata[i])->addr)
        {
          char buf[VPA_ADDR_BUFLEN];
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: device %s is listed twice",
                       path, vpa_addr_format (((VpaReservation *) set->items->pdata[i])->addr, buf));
          return NULL;
        }
    }
  return g_steal_pointer (&set);
}

/* ------------------------------------------------------------------ */
/* The file                                                            */
/* ------------------------------------------------------------------ */

VpaReserveSet *
vpa_reserve_set_load (const char *state_dir, GError **error)
{
  g_autofree char *path = NULL;
  g_autofree char *data = NULL;
  gsize len = 0;
  int fd;

  g_return_val_if_fail (state_dir != NULL, NULL);

  path = g_build_filename (state_dir, VPA_RESERVE_FILE, NULL);
  fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return vpa_reserve_set_new (path);
  if (fd < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot open: %s", path,
                   errno == ELOOP ? "a symbolic link" : g_strerror (errno));
      return NULL;
    }
  data = vpa_file_read_bounded (fd, path, VPA_RESERVE_FILE_MAX, VPA_ERROR_ENVIRONMENT, &len, error);
  close (fd);
  return data != NULL ? vpa_reserve_set_parse (data, len, path, error) : NULL;
}

/* An exclusive lock on STATE_DIR/reservations.lock: -1 with error when it
 * cannot be had within about two seconds. */
static int
lock_dir (const char *state_dir, GError **error)
{
  g_autofree char *path = g_build_filename (state_dir, VPA_RESERVE_FILE ".lock", NULL);
  int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  int saved = errno;

  for (guint i = 0; fd >= 0 && i < LOCK_TRIES; i++)
    {
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
      saved = errno;
      if (errno != EWOULDBLOCK && errno != EINTR)
        break;
      g_usleep (10 * 1000);
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot lock: %s", path,
               fd < 0 || (saved != EWOULDBLOCK && saved != EINTR) ? g_strerror (saved)
                                                                  : "held by another process");
  if (fd >= 0)
    close (fd);
  return -1;
}

static gboolean
sync_dir (const char *dir)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok = fd >= 0 && fsync (fd) == 0;

  if (fd >= 0)
    close (fd);
  return ok;
}

/* text to STATE_DIR/reservations: a new file, written and fsynced,
 * renamed over the old one, then the directory fsynced. The fsyncs cost
 * a few milliseconds and only when a reservation changes (a one-time-use
 * device's first start, an operator's command); a record lost in a power
 * cut would hand out a device nobody has cleaned. */
static gboolean
replace_file (const char *state_dir, const char *text, GError **error)
{
  g_autofree char *path = g_build_filename (state_dir, VPA_RESERVE_FILE, NULL);
  g_autofree char *tmp = g_build_filename (state_dir, VPA_RESERVE_FILE ".XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0644);
  gboolean ok = fd >= 0 && vpa_file_write_all (fd, text, strlen (text)) && fchmod (fd, 0644) == 0 &&
                fsync (fd) == 0;
  int saved = errno;

  if (fd >= 0 && close (fd) != 0 && ok)
    {
      ok = FALSE;
      saved = errno;
    }
  if (ok && rename (tmp, path) == 0)
    {
      if (sync_dir (state_dir))
        return TRUE;
      saved = errno;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: written, but its directory "
                                                            "cannot be synced: %s",
                   path, g_strerror (saved));
      return FALSE;
    }
  if (ok)
    saved = errno;
  if (fd >= 0)
    g_unlink (tmp);
  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot write: %s", path,
               g_strerror (saved));
  return FALSE;
}

gboolean
vpa_reserve_set_update (const char *state_dir, VpaReserveEdit edit, gpointer data, GError **error)
{
  g_autoptr (VpaReserveSet) set = NULL;
  g_autofree char *text = NULL;
  gboolean changed = FALSE;
  gboolean ok;
  int lock;

  g_return_val_if_fail (state_dir != NULL && edit != NULL, FALSE);

  if (g_mkdir_with_parents (state_dir, 0755) < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot create: %s", state_dir,
                   g_strerror (errno));
      return FALSE;
    }
  if ((lock = lock_dir (state_dir, error)) < 0)
    return FALSE;
  ok = (set = vpa_reserve_set_load (state_dir, error)) != NULL &&
       edit (set, data, &changed, error);
  if (ok && changed)
    {
      g_autoptr (VpaReserveSet) again = NULL;

      text = vpa_reserve_set_format (set);
      /* never a file that would stop every reader: what is written must
       * read back */
      again = vpa_reserve_set_parse (text, strlen (text), set->path, error);
      ok = again != NULL && replace_file (state_dir, text, error);
    }
  close (lock);
  return ok;
}
