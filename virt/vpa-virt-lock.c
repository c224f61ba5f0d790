/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The define lock: one advisory lock per connection serialising define
 * and attach (docs/libvirt.md).
 */
#include "vpa-virt.h"
#include "vpa-virt-private.h"
#include "vpa-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* The define lock                                                     */
/* ------------------------------------------------------------------ */

struct _VpaVirtLock {
  int fd;
  char *path;
};

/* A connection to a privileged daemon (".../system") is one resource
 * for everyone allowed on it: root and the members of libvirt's group
 * must take the same lock, named by the URI alone. Its file lives where
 * only root can create one, libvirt's own run directory, so no other
 * user can hold it or put something else in its place; root creates it,
 * the group's members open it read-only. Other connections (a session,
 * the test driver) belong to one user: a directory of their own. */
#define VPA_VIRT_SYSTEM_LOCK_DIR "/run/libvirt"

static gboolean
uri_is_system (const char *canonical_uri)
{
  g_autoptr (GUri) uri = g_uri_parse (canonical_uri, G_URI_FLAGS_NONE, NULL);

  return uri != NULL && g_strcmp0 (g_uri_get_path (uri), "/system") == 0;
}

/* $XDG_RUNTIME_DIR (the user's, mode 0700), else the user's cache
 * directory under their home: never a directory others can write. */
static char *
private_lock_dir (void)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");

  if (runtime != NULL && g_path_is_absolute (runtime))
    return g_build_filename (runtime, "virt-pci-affinity", NULL);
  return g_build_filename (g_get_user_cache_dir (), "virt-pci-affinity", NULL);
}

char *
vpa_virt_lock_path (const char *canonical_uri)
{
  g_autofree char *sum = NULL;
  g_autofree char *readable = NULL;
  g_autofree char *dir = NULL;

  g_return_val_if_fail (canonical_uri != NULL, NULL);

  sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, canonical_uri, -1);
  readable = g_strndup (canonical_uri, 48);
  g_strcanon (readable, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "-", '_');
  if (uri_is_system (canonical_uri))
    {
      return g_strdup_printf (VPA_VIRT_SYSTEM_LOCK_DIR "/virt-pci-affinity-define-%s-%.16s.lock",
                              readable, sum);
    }
  dir = private_lock_dir ();
  return g_strdup_printf ("%s/define-%s-%.16s.lock", dir, readable, sum);
}

/* The lock's directory, created if missing (0755 for root's system
 * directory, 0700 for a user's): a directory, no link, owned by owner
 * and writable by nobody else, or whoever can write it could hold the
 * lock or swap the file under us. */
static gboolean
lock_dir_ensure (const char *dir, uid_t owner, GError **error)
{
  struct stat st;

  if (g_mkdir_with_parents (dir, owner == 0 ? 0755 : 0700) < 0 && errno != EACCES)
    {
      int saved = errno;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "cannot create the define lock's directory '%s': %s", dir, g_strerror (saved));
      return FALSE;
    }
  if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != owner)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "the define lock's directory '%s' is not a directory owned by uid %u",
                   dir, (guint) owner);
      return FALSE;
    }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "the define lock's directory '%s' is writable by others (mode %04o): "
                   "they could hold or replace the lock",
                   dir, (guint) (st.st_mode & 07777));
      return FALSE;
    }
  return TRUE;
}

static int
lock_refuse (int fd, GError **error, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static int
lock_refuse (int fd, GError **error, const char *fmt, ...)
{
  g_autofree char *message = NULL;
  va_list ap;

  if (fd >= 0)
    close (fd);
  va_start (ap, fmt);
  message = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, message);
  return -1;
}

/* Opens the lock file: read-write, created 0644 (so that libvirt's
 * group can lock root's file too), else read-only when the user cannot
 * write it (flock needs no write access). Never through a link, never
 * blocking on a FIFO; only a regular file owned by owner. */
static int
lock_open (const char *path, uid_t owner, GError **error)
{
  const int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  struct stat st;
  int fd = open (path, O_RDWR | O_CREAT | flags, 0644);

  if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
    fd = open (path, O_RDONLY | flags);
  if (fd < 0)
    {
      int saved = errno;
      if (lstat (path, &st) == 0 && !S_ISREG (st.st_mode))
        {
          return lock_refuse (-1, error, "the define lock '%s' is %s, not a regular file", path,
                              vpa_file_kind (st.st_mode));
        }
      if (saved == ENOENT && owner == 0)
        {
          return lock_refuse (-1, error,
                              "the define lock '%s' does not exist, and only root can create it: "
                              "run one define or attach as root first",
                              path);
        }
      return lock_refuse (-1, error, "cannot open the define lock '%s': %s", path,
                          g_strerror (saved));
    }
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      return lock_refuse (fd, error, "the define lock '%s' is %s, not a regular file", path,
                          vpa_file_kind (st.st_mode));
    }
  if (st.st_uid != owner)
    {
      return lock_refuse (fd, error,
                          "the define lock '%s' is owned by uid %u, not uid %u: its owner could "
                          "hold it for ever",
                          path, (guint) st.st_uid, (guint) owner);
    }
  return fd;
}

/* TRUE if path still names the file fd locked (its owner may have
 * replaced it in the shared directory). */
static gboolean
lock_is_current (int fd, const char *path)
{
  struct stat a, b;

  return fstat (fd, &a) == 0 && lstat (path, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

/* The pid the holder wrote, for the timeout message; 0 if unknown. */
static gint64
lock_holder (int fd)
{
  char buf[32] = { 0 };
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);

  if (n <= 0)
    return 0;
  return g_ascii_strtoll (buf, NULL, 10);
}

static void
lock_write_pid (int fd)
{
  g_autofree char *pid = g_strdup_printf ("%d\n", (int) getpid ());

  /* Diagnostics only: a failure here must not fail the define. */
  if (ftruncate (fd, 0) == 0 && pwrite (fd, pid, strlen (pid), 0) < 0)
    return;
}

/* Polls with a growing back-off: flock has no timeout of its own, and a
 * holder killed by SIGKILL releases it when its fd closes. */
static gboolean
lock_wait (int fd, const char *path, const char *uri, guint timeout_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gulong pause_us = 1000;

  while (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      int saved = errno;
      gint64 now;

      if (saved == EINTR)
        continue;
      if (saved != EWOULDBLOCK)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "cannot lock '%s' for '%s': %s", path, uri, g_strerror (saved));
          return FALSE;
        }
      now = g_get_monotonic_time ();
      if (now >= deadline)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "timed out after %u ms waiting for the define lock '%s' on '%s' (held by pid %" G_GINT64_FORMAT ")",
                       timeout_ms, path, uri, lock_holder (fd));
          return FALSE;
        }
      g_usleep (MIN ((gint64) pause_us, deadline - now));
      pause_us = MIN (pause_us * 2, 20000);
    }
  return TRUE;
}

VpaVirtLock *
vpa_virt_lock_acquire (virConnectPtr conn, const char *uri, guint timeout_ms,
                       GError **error)
{
  g_autofree char *canonical = NULL;
  g_autofree char *path = NULL;
  g_autofree char *dir = NULL;
  VpaVirtLock *lock;
  uid_t owner;
  int fd;

  g_return_val_if_fail (conn != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* The canonical URI, so "qemu:///system" and the default URI share a lock. */
  canonical = vpa_virt_conn_uri (conn, uri);
  path = vpa_virt_lock_path (canonical);
  dir = g_path_get_dirname (path);
  owner = uri_is_system (canonical) ? 0 : geteuid ();
  if (!lock_dir_ensure (dir, owner, error))
    return NULL;
  for (;;)
    {
      if ((fd = lock_open (path, owner, error)) < 0)
        return NULL;
      if (!lock_wait (fd, path, canonical, timeout_ms, error))
        {
          close (fd);
          return NULL;
        }
      if (lock_is_current (fd, path))
        break;
      close (fd);
    }
  lock_write_pid (fd);
  lock = g_new0 (VpaVirtLock, 1);
  lock->fd = fd;
  lock->path = g_steal_pointer (&path);
  return lock;
}

void
vpa_virt_lock_release (VpaVirtLock *lock)
{
  if (lock == NULL)
    return;
  /* Leave the file: unlinking a lock file races with the next opener. */
  close (lock->fd);
  g_free (lock->path);
  g_free (lock);
}
