/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * vpa-bench-cat: the floor for a qemu hook. It reads its stdin to the end
 * and exits 0, which is the least any hook must do; libc only, so its
 * cost is fork + execve + the dynamic loader + the read.
 */
#include <unistd.h>

int
main (void)
{
  char buf[65536];

  while (read (0, buf, sizeof buf) > 0)
    ;
  return 0;
}
