/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Words for what a file is, for the one-line refusals of the readers
 * that accept only regular files (state files, sysfs attributes, the
 * define lock), and the bounded read and the whole write those readers
 * and writers share.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* "a directory", "a FIFO", "a symbolic link", "a device node",
 * "a socket", else "not a regular file": what MODE (st_mode) is. */
const char *vpa_file_kind (mode_t mode);

/* The bytes of the open file fd (named path in messages), NUL-terminated,
 * *len without the NUL: only a regular file of at most max bytes that
 * does not grow while it is read. A file of another kind or over max is
 * an error of code bad (VpaErrorCode); a failing read is
 * VPA_ERROR_ENVIRONMENT. */
char *vpa_file_read_bounded (int fd, const char *path, gsize max, gint bad, gsize *len,
                             GError **error);

/* Writes all of buf to fd, retrying on EINTR; FALSE (errno set) when a
 * write fails. */
gboolean vpa_file_write_all (int fd, const char *buf, gsize len);

G_END_DECLS
