/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The contract between the qemu hook's front (vpa-hook-front.c, libc
 * only) and the module it exec()s (vpa-hook.c: GLib, libxml2, libvpa).
 * Plain C on purpose: the front must not include GLib.
 *
 * The front runs the module with the hook's own four arguments (argv[0]
 * is the module's path), the same environment, and the domain XML it
 * already read as stdin (a memfd holding exactly the bytes the front
 * scanned). The module's exit status is the hook's.
 */
#pragma once

#include <stddef.h>

/* The metadata namespace (equal to VPA_XMLNS in xml/vpa-domain.h). */
#define VPA_HOOK_XMLNS "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0"

/* Largest domain XML the hook reads from stdin (VPA_XML_MAX_DOCUMENT). */
#define VPA_HOOK_MAX_INPUT (16 * 1024 * 1024)

#define VPA_HOOK_PROG "virt-pci-affinity"

/* Reads all of stdin into a new NUL-terminated buffer (free() it). argv
 * is the hook's (argc == 5). On failure prints the one line libvirt
 * shows (naming the domain; a document over VPA_HOOK_MAX_INPUT bytes is
 * refused) and returns -1. Libc only: both programs use it. */
int vpa_hook_read_domain (char **argv, char **out, size_t *out_len);
