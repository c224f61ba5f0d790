/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reading the domain XML from stdin: libc only, shared by the hook's
 * front and its module (vpa-hook.h).
 */
#include "vpa-hook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Grows buf to hold at least one more byte past len; at most
 * VPA_HOOK_MAX_INPUT + 1 bytes of data, so that an oversized input shows. */
static int
grow (char **buf, size_t *cap)
{
  size_t ncap = *cap * 2 > VPA_HOOK_MAX_INPUT ? VPA_HOOK_MAX_INPUT + 1 : *cap * 2;
  char *nbuf;

  if (*cap > VPA_HOOK_MAX_INPUT)
    {
      errno = EFBIG;
      return -1;
    }
  if ((nbuf = realloc (*buf, ncap + 1)) == NULL)
    return -1;
  *buf = nbuf;
  *cap = ncap;
  return 0;
}

/* Returns 0, or -1 with errno set (EFBIG: more than VPA_HOOK_MAX_INPUT). */
static int
read_all (int fd, char **out, size_t *out_len)
{
  struct stat st;
  size_t cap = 64 * 1024, len = 0;
  char *buf;

  /* A regular file (the front's memfd, tests, manual runs) tells its
   * size up front: one read. */
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0)
    cap = (size_t) st.st_size < VPA_HOOK_MAX_INPUT ? (size_t) st.st_size + 1
                                                   : VPA_HOOK_MAX_INPUT + 1;
  if ((buf = malloc (cap + 1)) == NULL)
    return -1;
  for (;;)
    {
      ssize_t n;

      if (len == cap && grow (&buf, &cap) < 0)
        break;
      n = read (fd, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        break;
      if (n == 0)
        {
          if (len > VPA_HOOK_MAX_INPUT)
            {
              errno = EFBIG;
              break;
            }
          buf[len] = '\0';
          *out = buf;
          *out_len = len;
          return 0;
        }
      len += (size_t) n;
    }
  {
    int saved = errno;
    free (buf);
    errno = saved;
  }
  return -1;
}

int
vpa_hook_read_domain (char **argv, char **out, size_t *out_len)
{
  if (read_all (STDIN_FILENO, out, out_len) == 0)
    return 0;
  if (errno == EFBIG)
    fprintf (stderr, "%s: domain '%s': the domain XML on stdin exceeds %d bytes; refusing "
             "'%s %s'\n", VPA_HOOK_PROG, argv[1], VPA_HOOK_MAX_INPUT, argv[2], argv[3]);
  else
    fprintf (stderr, "%s: domain '%s': cannot read the domain XML on stdin: %s\n",
             VPA_HOOK_PROG, argv[1], strerror (errno));
  return -1;
}
