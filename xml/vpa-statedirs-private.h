/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The state-file scan's own byte helpers, shared by the scan
 * (vpa-statedirs.c) and the test of which files may name an address
 * (vpa-statedirs-may-name.c). Not for other files.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* memmem() for short needles (vpa-statedirs.c). */
const char *vpa_statedirs_find (const char *hay, gsize len, const char *needle, gsize n);

/* The rest are vpa-statedirs-may-name.c's. Whether the parser reads the
 * bytes as they are (UTF-8, no other encoding declared); *start skips a
 * byte-order mark. */
gboolean vpa_statedirs_bytes_are_text (const char *buf, gsize len, gsize *start);
/* FALSE when the prolog has a document type declaration or cannot be
 * followed to the root element; *body is the root's '<'. */
gboolean vpa_statedirs_prolog_plain (const char *buf, gsize len, gsize start, const char **body);
gboolean vpa_statedirs_is_blank (char c);
/* Whether a name's local part (after its last ':') is want. */
gboolean vpa_statedirs_local_name_is (const char *name, gsize len, const char *want);

G_END_DECLS
