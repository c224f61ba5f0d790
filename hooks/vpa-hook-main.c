/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity-hook: the libvirt qemu hook's main(), installed as
 * $sysconfdir/libvirt/hooks/qemu.d/virt-pci-affinity.
 *
 * libvirt runs every qemu.d hook synchronously for every life-cycle step
 * of every domain. Until it calls vpa_hook_run() this file uses libc
 * only: the operations the hook does not handle exit without reading
 * stdin, and vpa_hook_run() answers a domain that holds no PCI device
 * and no vpa request before it touches GLib or libxml2.
 */
#include <stdlib.h>

#include "vpa-hook.h"

int
main (int argc, char **argv)
{
  char *xml = NULL;
  size_t len = 0;
  int ret;

  /* A usage error or an operation we ignore: without reading stdin. */
  if (argc != 5 || !vpa_hook_input_handled (argv[2], argv[3]))
    return vpa_hook_run (argv, NULL, 0);
  if (vpa_hook_input_read_domain (argv, &xml, &len) < 0)
    return 1;
  ret = vpa_hook_run (argv, xml, len);
  free (xml);
  return ret;
}
