/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A device's 64-bit memory BARs (docs/guest-numa.md, "Large BARs"): read
 * from sysfs `resource`, carried by snapshots, summed to size the
 * guest's 64-bit PCI hole when devices sit behind expander buses.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The standard BARs of a `resource` file: its first six lines. */
#define VPA_BARS_STD 6

/* The bytes of the 64-bit memory BARs among the first VPA_BARS_STD
 * lines of a sysfs `resource` file ("0xSTART 0xEND 0xFLAGS" a line;
 * the ROM and SR-IOV lines after them are not the device's own BARs).
 * FALSE with *bad a copy of the offending line (at most 80 bytes)
 * when a line is not three hex numbers or ends before it starts. */
gboolean vpa_bars_parse_resource (const char *buf, guint64 *mem64, char **bad);

/* The 64-bit PCI hole for bytes of BARs: the next power of two, 0 for
 * none; G_MAXUINT64 when no power of two holds it. */
guint64 vpa_bars_window (guint64 bytes);

G_END_DECLS
