/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The qemu hook (docs/hook.md): one program, installed as
 * $sysconfdir/libvirt/hooks/qemu.d/virt-pci-affinity. Its main()
 * (vpa-hook-main.c) and the helpers below are libc only, so that the
 * operations and the domains the hook has nothing to do with are answered
 * before GLib or libxml2 is touched; vpa_hook_run() does the rest.
 * Plain C on purpose: vpa-hook-main.c must not include GLib.
 */
#pragma once

#include <stddef.h>

#include "vpa-constants.h"

/* TRUE (1) for the operations the hook handles ("prepare", "start",
 * "migrate", "restore" with sub-operation "begin"); every other one exits
 * 0 at once without reading stdin (libvirt ignores EPIPE on a hook's
 * stdin). */
int vpa_hook_input_handled (const char *op, const char *subop);

/* TRUE (1) when the document may hold a vpa request or a PCI device: our
 * namespace (any version of it), a <hostdev>, or an <interface
 * type='hostdev'> (a VF libvirt took from a hostdev network shows as one
 * in the live XML). Decided from the bytes, without parsing. */
int vpa_hook_input_relevant (const char *xml, size_t len);

/* TRUE (1) when VPA_CONFIG may name the configuration: only the program
 * in its build tree (tests, benchmarks), never an installed copy, and
 * never under a setuid/setgid/capability launch (AT_SECURE). */
int vpa_hook_input_env_allowed (void);

/* Reads all of stdin into a new NUL-terminated buffer (free() it). argv
 * is the hook's (argc == 5). On failure prints the one line libvirt
 * shows (naming the domain; a document over VPA_XML_MAX_DOCUMENT bytes
 * is refused) and returns -1. */
int vpa_hook_input_read_domain (char **argv, char **out, size_t *out_len);

/* The whole hook for one call: argv is the hook's NULL-terminated argv
 * (argv[0] the program, then GUEST OP SUBOP EXTRA), xml/len the domain
 * XML read from stdin (may be NULL/0 for the operations not handled).
 * Prints the rewritten document on stdout (migrate, restore) or one line
 * on stderr; returns the hook's exit status: 0, 1 (refused) or 2 (not
 * four arguments). */
int vpa_hook_run (char **argv, const char *xml, size_t len);
