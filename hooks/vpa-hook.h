/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The contract between the qemu hook's front (vpa-hook-front.c, libc
 * only) and the module it dlopen()s (vpa-hook.c: GLib, libxml2, libvpa).
 * Plain C on purpose: the front must not include GLib.
 */
#pragma once

#include <stddef.h>

/* The metadata namespace (equal to VPA_XMLNS in xml/vpa-domain.h). */
#define VPA_HOOK_XMLNS "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0"

/* Largest domain XML the hook reads from stdin (VPA_XML_MAX_DOCUMENT). */
#define VPA_HOOK_MAX_INPUT (16 * 1024 * 1024)

#define VPA_HOOK_ENTRY_POINT "vpa_hook_main"

/* Called with the hook's argv (argc == 5: program, guest, operation,
 * sub-operation, extra) and the whole of stdin (len bytes, NUL-terminated).
 * Returns the exit status: 0, or 1 after one line on stderr. Writes to
 * stdout only on success, and only a complete document. */
typedef int (*VpaHookMainFunc) (int argc, char **argv, const char *xml, size_t len);

int vpa_hook_main (int argc, char **argv, const char *xml, size_t len);
