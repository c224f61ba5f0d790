/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Words for what a file is, for the one-line refusals of the readers
 * that accept only regular files (state files, sysfs attributes, the
 * define lock).
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* "a directory", "a FIFO", "a symbolic link", "a device node",
 * "a socket", else "not a regular file": what MODE (st_mode) is. */
const char *vpa_file_kind (mode_t mode);

G_END_DECLS
