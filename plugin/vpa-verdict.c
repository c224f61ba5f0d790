/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hook's verdicts: audit or refuse, the log line, the counter file
 * (vpa-verdict.h). The file is small, bounded and ours: a header line,
 * one "count OP VERDICT REASON N" line per series that is not zero and
 * at most VPA_VERDICT_RECENT "recent WHEN OP VERDICT REASON DOMAIN"
 * lines (the domain escaped as a C string).
 */
#include "vpa-verdict.h"
#include "vpa-file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vpa-enum.h"
#include "vpa-types.h"

#define HEADER "# virt-pci-affinity hook verdicts 1\n"
#define DOMAIN_MAX 128 /* bytes of a domain name kept in the file */

VPA_ENUM_IMPL (vpa_verdict, VpaVerdict, VPA_VERDICT_LAST, "refused", "would-refuse")
VPA_ENUM_IMPL (vpa_verdict_reason, VpaVerdictReason, VPA_VERDICT_REASON_LAST, "config",
               "input", "inventory", "missing", "policy", "claimed", "unplaced", "placement",
               "reserved")
VPA_ENUM_IMPL (vpa_verdict_op, VpaVerdictOp, VPA_VERDICT_OP_LAST, "prepare", "start",
               "migrate", "restore")

VpaVerdictReason
vpa_verdict_reason_from_check (VpaCheckStatus status)
{
  switch (status)
    {
    case VPA_CHECK_MISSING:
      return VPA_VERDICT_REASON_MISSING;
    case VPA_CHECK_POLICY:
      return VPA_VERDICT_REASON_POLICY;
    case VPA_CHECK_CLAIMED:
      return VPA_VERDICT_REASON_CLAIMED;
    case VPA_CHECK_UNPLACED:
      return VPA_VERDICT_REASON_UNPLACED;
    case VPA_CHECK_RESERVED:
      return VPA_VERDICT_REASON_RESERVED;
    default:
      return VPA_VERDICT_REASON_INPUT;
    }
}

gboolean
vpa_verdict_audits (gboolean host_audit, VpaDomainMode mode, gboolean has_namespace)
{
  if (!host_audit || mode == VPA_DOMAIN_MODE_ENFORCE)
    return FALSE;
  return mode != VPA_DOMAIN_MODE_UNKNOWN || !has_namespace;
}

char *
vpa_verdict_log_message (const VpaVerdictEvent *ev)
{
  g_autofree char *line =
    g_strdup_printf ("domain '%s': %s: %s (%s): %s", ev->domain,
                     vpa_verdict_op_to_string (ev->op), vpa_verdict_to_string (ev->verdict),
                     vpa_verdict_reason_to_string (ev->reason), ev->message);

  return vpa_message_bound (line, VPA_MESSAGE_MAX);
}

gboolean
vpa_verdict_syslog_send (const char *path, const VpaVerdictEvent *ev, GError **error)
{
  g_autofree char *msg = vpa_verdict_log_message (ev);
  g_autofree char *datagram = NULL;
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  char stamp[32];
  time_t now = (time_t) ev->when;
  struct tm tm;
  int fd, saved;
  ssize_t n;

  if (strlen (path) >= sizeof sa.sun_path)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: socket path too long", path);
      return FALSE;
    }
  memcpy (sa.sun_path, path, strlen (path) + 1);
  strftime (stamp, sizeof stamp, "%b %e %H:%M:%S", localtime_r (&now, &tm));
  /* facility daemon (3), priority warning (4) */
  datagram = g_strdup_printf ("<%d>%s virt-pci-affinity[%d]: %s", 3 * 8 + 4, stamp,
                              (int) getpid (), msg);
  fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  n = fd < 0 ? -1
             : sendto (fd, datagram, strlen (datagram), MSG_DONTWAIT, (struct sockaddr *) &sa,
                       sizeof sa);
  saved = errno;
  if (fd >= 0)
    close (fd);
  if (n < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot send the log line: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static void
recent_free (VpaVerdictRecent *r)
{
  g_free (r->domain);
  g_free (r);
}

VpaVerdictCounts *
vpa_verdict_counts_new (void)
{
  VpaVerdictCounts *c = g_new0 (VpaVerdictCounts, 1);

  c->recent = g_ptr_array_new_with_free_func ((GDestroyNotify) recent_free);
  return c;
}

void
vpa_verdict_counts_free (VpaVerdictCounts *c)
{
  if (c == NULL)
    return;
  g_ptr_array_unref (c->recent);
  g_free (c);
}

char *
vpa_verdict_counts_format (const VpaVerdictCounts *c)
{
  GString *s = g_string_new (HEADER);

  for (guint op = 0; op < VPA_VERDICT_OP_LAST; op++)
    {
      for (guint v = 0; v < VPA_VERDICT_LAST; v++)
        {
          for (guint r = 0; r < VPA_VERDICT_REASON_LAST; r++)
            {
              if (c->count[op][v][r] > 0)
                {
                  g_string_append_printf (s, "count %s %s %s %" G_GUINT64_FORMAT "\n",
                                          vpa_verdict_op_to_string (op), vpa_verdict_to_string (v),
                                          vpa_verdict_reason_to_string (r), c->count[op][v][r]);
                }
            }
        }
    }
  for (guint i = 0; i < c->recent->len; i++)
    {
      const VpaVerdictRecent *r = g_ptr_array_index (c->recent, i);
      g_autofree char *dom = g_strescape (r->domain, NULL);

      g_string_append_printf (s, "recent %" G_GINT64_FORMAT " %s %s %s %s\n", r->when,
                              vpa_verdict_op_to_string (r->op), vpa_verdict_to_string (r->verdict),
                              vpa_verdict_reason_to_string (r->reason), dom);
    }
  return g_string_free (s, FALSE);
}

static gboolean
line_error (GError **error, const char *path, guint line_no, const char *line, const char *why)
{
  g_autofree char *shown = vpa_message_bound (line, 128);

  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s:%u: '%s': %s", path, line_no, shown, why);
  return FALSE;
}

/* OP VERDICT REASON, the first three words of w. */
static gboolean
parse_labels (char **w, VpaVerdictOp *op, VpaVerdict *v, VpaVerdictReason *r)
{
  return vpa_verdict_op_from_string (w[0], op) && vpa_verdict_from_string (w[1], v) &&
         vpa_verdict_reason_from_string (w[2], r);
}

/* A field g_strescape wrote: never ending in a lone backslash, which
 * g_strcompress would warn about. */
static gboolean
escaped_ok (const char *w)
{
  gsize n = strlen (w), k = 0;

  while (k < n && w[n - 1 - k] == '\\')
    k++;
  return k % 2 == 0 && n <= 4 * DOMAIN_MAX;
}

static gboolean
parse_line (VpaVerdictCounts *c, const char *line, const char *path, guint no, GError **error)
{
  g_auto (GStrv) w = g_strsplit (line, " ", 6);
  guint n = g_strv_length (w);
  VpaVerdictOp op;
  VpaVerdict v;
  VpaVerdictReason r;
  guint64 value;
  gint64 when;

  if (n == 5 && strcmp (w[0], "count") == 0 && parse_labels (w + 1, &op, &v, &r) &&
      g_ascii_string_to_unsigned (w[4], 10, 0, G_MAXUINT64, &value, NULL))
    {
      c->count[op][v][r] = value;
      return TRUE;
    }
  if (n == 6 && strcmp (w[0], "recent") == 0 && parse_labels (w + 2, &op, &v, &r) &&
      g_ascii_string_to_signed (w[1], 10, 0, G_MAXINT64, &when, NULL) &&
      c->recent->len < VPA_VERDICT_RECENT && escaped_ok (w[5]))
    {
      VpaVerdictRecent *rec = g_new0 (VpaVerdictRecent, 1);

      *rec = (VpaVerdictRecent){ when, op, v, r, g_strcompress (w[5]) };
      g_ptr_array_add (c->recent, rec);
      return TRUE;
    }
  return line_error (error, path, no, line, "not a verdict counter line");
}

static VpaVerdictCounts *
counts_parse (const char *data, gsize len, const char *path, GError **error)
{
  g_autoptr (VpaVerdictCounts) c = vpa_verdict_counts_new ();
  g_autofree char *text = g_strndup (data, len);
  g_auto (GStrv) lines = NULL;

  if (len < strlen (HEADER) || memcmp (data, HEADER, strlen (HEADER)) != 0 ||
      memchr (data, '\0', len) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: not a verdict counter file (expected the line '%.*s')", path,
                   (int) strlen (HEADER) - 1, HEADER);
      return NULL;
    }
  lines = g_strsplit (text + strlen (HEADER), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (lines[i][0] != '\0' && !parse_line (c, lines[i], path, i + 2, error))
        return NULL;
    }
  return g_steal_pointer (&c);
}

VpaVerdictCounts *
vpa_verdict_counts_parse (const VpaDoc *doc, GError **error)
{
  g_return_val_if_fail (doc != NULL, NULL);
  return counts_parse (doc->buf, doc->len, doc->what, error);
}

VpaVerdictCounts *
vpa_verdict_counts_load (const char *state_dir, gboolean *exists, GError **error)
{
  g_autofree char *path = g_build_filename (state_dir, VPA_VERDICT_FILE, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

  if (exists != NULL)
    *exists = fd >= 0;
  if (fd < 0 && errno == ENOENT)
    return vpa_verdict_counts_new ();
  if (fd < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot open: %s", path,
                   g_strerror (errno));
      return NULL;
    }
  data = vpa_file_read_bounded (fd, path, VPA_VERDICT_FILE_MAX, VPA_ERROR_INVALID, &len, error);
  close (fd);
  return data != NULL ? vpa_verdict_counts_parse (&(VpaDoc){ data, len, path }, error) : NULL;
}

/* An exclusive lock on STATE_DIR/verdicts.lock, waiting at most about a
 * second: -1 with error when it cannot be had. */
static int
lock_dir (const char *state_dir, GError **error)
{
  g_autofree char *path = g_build_filename (state_dir, VPA_VERDICT_FILE ".lock", NULL);
  int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

  for (guint i = 0; fd >= 0 && i < 100; i++)
    {
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
      if (errno != EWOULDBLOCK && errno != EINTR)
        break;
      g_usleep (10 * 1000);
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot lock: %s", path,
               fd < 0 ? g_strerror (errno) : "held by another process");
  if (fd >= 0)
    close (fd);
  return -1;
}

static void
add_event (VpaVerdictCounts *c, const VpaVerdictEvent *ev)
{
  VpaVerdictRecent *rec = g_new0 (VpaVerdictRecent, 1);
  g_autofree char *dom = g_utf8_make_valid (ev->domain, -1);

  c->count[ev->op][ev->verdict][ev->reason]++;
  if (strlen (dom) > DOMAIN_MAX)
    dom[DOMAIN_MAX] = '\0';
  *rec = (VpaVerdictRecent){ ev->when, ev->op, ev->verdict, ev->reason, g_steal_pointer (&dom) };
  g_ptr_array_add (c->recent, rec);
  if (c->recent->len > VPA_VERDICT_RECENT)
    g_ptr_array_remove_range (c->recent, 0, c->recent->len - VPA_VERDICT_RECENT);
}

/* text to STATE_DIR/verdicts through a new file renamed over it: a
 * reader sees the old file or the new one, whole. No fsync: it took up
 * to 0.4 s on a busy disk, inside libvirtd's request, for counters whose
 * loss in a power cut only resets them (a damaged file starts again
 * from zero, and Prometheus takes a counter reset in its stride). */
static gboolean
replace_file (const char *state_dir, const char *text, GError **error)
{
  g_autofree char *path = g_build_filename (state_dir, VPA_VERDICT_FILE, NULL);
  g_autofree char *tmp = g_build_filename (state_dir, VPA_VERDICT_FILE ".XXXXXX", NULL);
  gsize len = strlen (text);
  int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0644);
  gboolean ok = fd >= 0 && write (fd, text, len) == (ssize_t) len && fchmod (fd, 0644) == 0;
  int saved = errno;

  if (fd >= 0)
    ok = close (fd) == 0 && ok;
  if (ok && rename (tmp, path) == 0)
    return TRUE;
  saved = errno != 0 ? errno : saved;
  if (fd >= 0)
    g_unlink (tmp);
  g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot write: %s", path, g_strerror (saved));
  return FALSE;
}

gboolean
vpa_verdict_count (const char *state_dir, const VpaVerdictEvent *ev, GError **error)
{
  g_autoptr (VpaVerdictCounts) c = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *text = NULL;
  gboolean ok;
  int lock;

  if (g_mkdir_with_parents (state_dir, 0755) < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot create: %s", state_dir,
                   g_strerror (errno));
      return FALSE;
    }
  if ((lock = lock_dir (state_dir, error)) < 0)
    return FALSE;
  /* A file we cannot read (damaged, from a newer version) starts over
   * rather than stopping the count for good. */
  c = vpa_verdict_counts_load (state_dir, NULL, &local);
  if (c == NULL)
    {
      g_debug ("%s; its counters start again from zero",
               local != NULL ? local->message : "unreadable");
      c = vpa_verdict_counts_new ();
    }
  add_event (c, ev);
  text = vpa_verdict_counts_format (c);
  ok = replace_file (state_dir, text, error);
  close (lock);
  return ok;
}
