/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Constants every layer shares, the hook's libc-only entry included:
 * plain C, no GLib, so that any file may include it.
 */
#pragma once

/* The namespace of our domain metadata (<vpa:affinity>, <vpa:placed>). */
#define VPA_XMLNS "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0"
/* Every namespace of ours starts so; one that is not VPA_XMLNS (another
 * version) is refused, never skipped as someone else's. */
#define VPA_XMLNS_PREFIX "http://virt-pci-affinity.org/xmlns/"

/* The largest XML document read from stdin, a file or a state directory:
 * 16 MiB, far above any domain libvirt formats. */
#define VPA_XML_MAX_DOCUMENT (16 * 1024 * 1024)

/* The name every message of the CLI and the hook starts with. */
#define VPA_PROG "virt-pci-affinity"
