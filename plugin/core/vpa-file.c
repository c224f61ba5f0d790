/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-file.h"
#include "vpa-types.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
vpa_file_kind (mode_t mode)
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

char *
vpa_file_read_bounded (int fd, const char *path, gsize max, gint bad, gsize *len, GError **error)
{
  struct stat st;
  g_autofree char *buf = NULL;
  gsize got = 0;

  if (fstat (fd, &st) < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read: %s", path,
                   g_strerror (errno));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, VPA_ERROR, bad, "%s: %s, not a regular file", path,
                   vpa_file_kind (st.st_mode));
      return NULL;
    }
  if ((guint64) st.st_size > max)
    {
      g_set_error (error, VPA_ERROR, bad, "%s: over %" G_GSIZE_FORMAT " bytes", path, max);
      return NULL;
    }
  buf = g_malloc ((gsize) st.st_size + 2);
  while (got <= (gsize) st.st_size)
    {
      ssize_t n = read (fd, buf + got, (gsize) st.st_size + 1 - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: cannot read: %s", path,
                       g_strerror (errno));
          return NULL;
        }
      if (n == 0)
        break;
      got += (gsize) n;
    }
  if (got > (gsize) st.st_size)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s: grew while it was read", path);
      return NULL;
    }
  buf[got] = '\0';
  *len = got;
  return g_steal_pointer (&buf);
}

gboolean
vpa_file_write_all (int fd, const char *buf, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      buf += n;
      len -= (gsize) n;
    }
  return TRUE;
}
