/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-file.h"

#include <sys/stat.h>

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
