/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hook's libc-only helpers (vpa-hook.h): which operations and
 * documents it handles, whether the environment may name its
 * configuration, and reading the domain XML from stdin.
 */
#include "vpa-hook.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

int
vpa_hook_input_handled (const char *op, const char *subop)
{
  static const char *const ops[] = { "prepare", "start", "migrate", "restore" };

  if (op == NULL || subop == NULL || strcmp (subop, "begin") != 0)
    return 0;
  for (size_t i = 0; i < sizeof (ops) / sizeof (ops[0]); i++)
    {
      if (strcmp (op, ops[i]) == 0)
        return 1;
    }
  return 0;
}

int
vpa_hook_input_relevant (const char *xml, size_t len)
{
  static const char *const needles[] = {
    VPA_XMLNS_PREFIX, /* another version of it is refused, not passed */
    "<hostdev",
    "type='hostdev'",
    "type=\"hostdev\"",
  };

  if (xml == NULL)
    return 0;
  for (size_t i = 0; i < sizeof (needles) / sizeof (needles[0]); i++)
    {
      if (memmem (xml, len, needles[i], strlen (needles[i])) != NULL)
        return 1;
    }
  return 0;
}

int
vpa_hook_input_env_allowed (void)
{
#ifdef VPA_HOOK_BUILD_ROOT
  static const char root[] = VPA_HOOK_BUILD_ROOT "/";
  char exe[PATH_MAX];
  ssize_t n;

  if (getauxval (AT_SECURE) != 0)
    return 0;
  n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return 0;
  exe[n] = '\0';
  return strncmp (exe, root, sizeof root - 1) == 0;
#else
  return 0;
#endif
}

/* Grows buf to hold at least one more byte past len; at most
 * VPA_XML_MAX_DOCUMENT + 1 bytes of data, so that an oversized input shows. */
static int
grow (char **buf, size_t *cap)
{
  size_t ncap = *cap * 2 > VPA_XML_MAX_DOCUMENT ? VPA_XML_MAX_DOCUMENT + 1 : *cap * 2;
  char *nbuf;

  if (*cap > VPA_XML_MAX_DOCUMENT)
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

/* Returns 0, or -1 with errno set (EFBIG: more than VPA_XML_MAX_DOCUMENT). */
static int
read_all (int fd, char **out, size_t *out_len)
{
  struct stat st;
  size_t cap = 64 * 1024, len = 0;
  char *buf;

  /* A regular file (the front's memfd, tests, manual runs) tells its
   * size up front: one read. */
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0)
    {
      cap = (size_t) st.st_size < VPA_XML_MAX_DOCUMENT ? (size_t) st.st_size + 1
                                                       : VPA_XML_MAX_DOCUMENT + 1;
    }
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
          if (len > VPA_XML_MAX_DOCUMENT)
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

/* The domain's name for a line of libvirt's log, without GLib: control
 * characters escaped as every error line escapes them (\t, \n, \xNN),
 * cut at 256 bytes of name with "...". */
static const char *
escape_name (const char *name, char *buf, size_t size)
{
  size_t o = 0;

  for (size_t i = 0; name[i] != '\0' && o + 8 < size; i++)
    {
      unsigned char c = (unsigned char) name[i];

      if (i >= 256)
        {
          memcpy (buf + o, "...", 3);
          o += 3;
          break;
        }
      if (c == '\t' || c == '\n')
        {
          buf[o++] = '\\';
          buf[o++] = c == '\t' ? 't' : 'n';
        }
      else if (c < 0x20 || c == 0x7f)
        {
          o += (size_t) snprintf (buf + o, size - o, "\\x%02x", c);
        }
      else
        {
          buf[o++] = (char) c;
        }
    }
  buf[o] = '\0';
  return buf;
}

int
vpa_hook_input_read_domain (char **argv, char **out, size_t *out_len)
{
  char name[1100];
  int saved;

  if (read_all (STDIN_FILENO, out, out_len) == 0)
    return 0;
  saved = errno;
  escape_name (argv[1], name, sizeof name);
  if (saved == EFBIG)
    {
      fprintf (stderr, "%s: domain '%s': the domain XML on stdin exceeds %d bytes; refusing '%s %s'\n",
               VPA_PROG, name, VPA_XML_MAX_DOCUMENT, argv[2], argv[3]);
    }
  else
    {
      fprintf (stderr, "%s: domain '%s': cannot read the domain XML on stdin: %s\n",
               VPA_PROG, name, strerror (saved));
    }
  return -1;
}
