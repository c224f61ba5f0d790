/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity-hook: the libvirt qemu hook's front, installed as
 * $sysconfdir/libvirt/hooks/qemu.d/virt-pci-affinity.
 *
 * libvirt runs every qemu.d hook synchronously for every life-cycle step
 * of every domain, so this front links libc only: it answers the
 * operations it does not handle and the domains that hold no PCI device
 * and no vpa request without loading GLib or libxml2. Only then does it
 * dlopen() the module that does the real work (vpa-hook.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpa-hook.h"

#ifndef VPA_HOOK_MODULE_PATH
#error "VPA_HOOK_MODULE_PATH must be defined by the build"
#endif

#define PROG "virt-pci-affinity"

/* The operations the module handles; every other one exits 0 at once
 * without reading stdin (libvirt ignores EPIPE on the hook's stdin). */
static int
handled (const char *op, const char *subop)
{
  static const char *const ops[] = { "prepare", "start", "migrate", "restore" };

  if (strcmp (subop, "begin") != 0)
    return 0;
  for (size_t i = 0; i < sizeof (ops) / sizeof (ops[0]); i++)
    if (strcmp (op, ops[i]) == 0)
      return 1;
  return 0;
}

/* Reads all of stdin into a NUL-terminated buffer. Returns 0, or -1 with
 * errno set (EFBIG: more than VPA_HOOK_MAX_INPUT bytes). */
static int
read_stdin (char **out, size_t *out_len)
{
  struct stat st;
  size_t cap = 64 * 1024, len = 0;
  char *buf;

  /* A regular file (tests, manual runs) tells its size up front. */
  if (fstat (STDIN_FILENO, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0)
    cap = (size_t) st.st_size < VPA_HOOK_MAX_INPUT ? (size_t) st.st_size + 1
                                                   : VPA_HOOK_MAX_INPUT + 1;
  if ((buf = malloc (cap + 1)) == NULL)
    return -1;
  for (;;)
    {
      ssize_t n;

      if (len == cap)
        {
          char *nbuf;

          if (cap > VPA_HOOK_MAX_INPUT)
            {
              free (buf);
              errno = EFBIG;
              return -1;
            }
          cap = cap * 2 > VPA_HOOK_MAX_INPUT ? VPA_HOOK_MAX_INPUT + 1 : cap * 2;
          if ((nbuf = realloc (buf, cap + 1)) == NULL)
            {
              free (buf);
              return -1;
            }
          buf = nbuf;
        }
      n = read (STDIN_FILENO, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          free (buf);
          errno = saved;
          return -1;
        }
      if (n == 0)
        break;
      len += (size_t) n;
    }
  if (len > VPA_HOOK_MAX_INPUT)
    {
      free (buf);
      errno = EFBIG;
      return -1;
    }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
  return 0;
}

/* TRUE when the document may hold a vpa request or a PCI device: our
 * namespace, a <hostdev>, or an <interface type='hostdev'> (a VF libvirt
 * took from a hostdev network shows as one in the live XML). */
static int
relevant (const char *buf, size_t len)
{
  static const char *const needles[] = {
    VPA_HOOK_XMLNS, "<hostdev", "type='hostdev'", "type=\"hostdev\"",
  };

  for (size_t i = 0; i < sizeof (needles) / sizeof (needles[0]); i++)
    if (memmem (buf, len, needles[i], strlen (needles[i])) != NULL)
      return 1;
  return 0;
}

int
main (int argc, char **argv)
{
  const char *path;
  VpaHookMainFunc entry;
  void *module;
  char *xml = NULL;
  size_t len = 0;
  int ret;

  if (argc != 5)
    {
      fprintf (stderr, "%s: usage: %s GUEST OPERATION SUB-OPERATION EXTRA (libvirtd runs it "
               "with the domain XML on stdin); got %d arguments\n",
               PROG, PROG, argc > 0 ? argc - 1 : 0);
      return 2;
    }
  if (!handled (argv[2], argv[3]))
    return 0;

  if (read_stdin (&xml, &len) < 0)
    {
      if (errno == EFBIG)
        fprintf (stderr, "%s: domain '%s': the domain XML on stdin exceeds %d bytes; refusing "
                 "'%s %s'\n", PROG, argv[1], VPA_HOOK_MAX_INPUT, argv[2], argv[3]);
      else
        fprintf (stderr, "%s: domain '%s': cannot read the domain XML on stdin: %s\n",
                 PROG, argv[1], strerror (errno));
      return 1;
    }
  if (!relevant (xml, len))
    {
      free (xml);
      return 0;
    }

  path = getenv ("VPA_HOOK_MODULE");
  if (path == NULL || *path == '\0')
    path = VPA_HOOK_MODULE_PATH;
  if ((module = dlopen (path, RTLD_NOW | RTLD_LOCAL)) == NULL)
    {
      fprintf (stderr, "%s: domain '%s': cannot load the hook module: %s\n", PROG, argv[1],
               dlerror ());
      free (xml);
      return 1;
    }
  *(void **) (&entry) = dlsym (module, VPA_HOOK_ENTRY_POINT);
  if (entry == NULL)
    {
      fprintf (stderr, "%s: domain '%s': '%s' has no '%s'\n", PROG, argv[1], path,
               VPA_HOOK_ENTRY_POINT);
      free (xml);
      return 1;
    }
  ret = entry (argc, argv, xml, len);
  free (xml);
  return ret;
}
