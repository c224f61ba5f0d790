/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Messages as one bounded line: every path that prints a message
 * quoting user data goes through vpa_message_bound.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Longest message line we print (the hook's goes to libvirtd's log). */
#define VPA_MESSAGE_MAX 1024

/* message as one bounded line: control characters and bytes that are not
 * UTF-8 escaped ("\n", "\t", "\xNN"), then cut at a character boundary so
 * that it takes at most max bytes, ending in "…" when cut. Every path
 * that prints a message quoting user data goes through it. */
char *vpa_message_bound (const char *message, gsize max);
/* text escaped as vpa_message_bound escapes, never cut: for a value shown
 * whole in a table cell (a domain name with a TAB or CR). */
char *vpa_message_escape (const char *text);

G_END_DECLS
