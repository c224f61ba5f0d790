/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity-hook: the libvirt qemu hook's front, installed as
 * $sysconfdir/libvirt/hooks/qemu.d/virt-pci-affinity.
 *
 * libvirt runs every qemu.d hook synchronously for every life-cycle step
 * of every domain, so this front links libc only: it answers the
 * operations it does not handle and the domains that hold no PCI device
 * and no vpa request without loading GLib or libxml2. Only then does it
 * exec() the module that does the real work (vpa-hook.c), linked so that
 * the dynamic loader has next to nothing to do (docs/hook.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vpa-hook.h"

#ifndef VPA_HOOK_MODULE_PATH
#error "VPA_HOOK_MODULE_PATH must be defined by the build"
#endif

#define PROG VPA_HOOK_PROG

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

/* The module reads the document from stdin: a memfd holding exactly the
 * bytes read here (a pipe could not hold a large document without a
 * second process to write it). Returns 0, or -1 with errno set. */
static int
domain_to_stdin (const char *xml, size_t len)
{
  int fd = memfd_create ("virt-pci-affinity-domain", MFD_CLOEXEC);
  size_t off = 0;

  if (fd < 0)
    return -1;
  while (off < len)
    {
      ssize_t n = write (fd, xml + off, len - off);

      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        errno = EIO;
      if (n <= 0)
        break;
      off += (size_t) n;
    }
  /* dup2() leaves the new descriptor open across exec. */
  if (off < len || lseek (fd, 0, SEEK_SET) != 0 || dup2 (fd, STDIN_FILENO) < 0)
    {
      int saved = errno;
      close (fd);
      errno = saved;
      return -1;
    }
  close (fd);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *path;
  char *xml = NULL;
  size_t len = 0;

  if (argc != 5)
    {
      fprintf (stderr, "%s: usage: %s GUEST OPERATION SUB-OPERATION EXTRA (libvirtd runs it "
               "with the domain XML on stdin); got %d arguments\n",
               PROG, PROG, argc > 0 ? argc - 1 : 0);
      return 2;
    }
  if (!handled (argv[2], argv[3]))
    return 0;

  if (vpa_hook_read_domain (argv, &xml, &len) < 0)
    return 1;
  if (!relevant (xml, len))
    {
      free (xml);
      return 0;
    }

  path = getenv ("VPA_HOOK_MODULE");
  if (path == NULL || *path == '\0')
    path = VPA_HOOK_MODULE_PATH;
  if (domain_to_stdin (xml, len) < 0)
    {
      fprintf (stderr, "%s: domain '%s': cannot pass the domain XML to the hook module: %s\n",
               PROG, argv[1], strerror (errno));
      free (xml);
      return 1;
    }
  free (xml);
  argv[0] = (char *) path;
  execv (path, argv);
  fprintf (stderr, "%s: domain '%s': cannot run the hook module '%s': %s\n", PROG, argv[1],
           path, strerror (errno));
  return 1;
}
