/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The sysfs source's own helpers, shared by its devices (vpa-sysfs.c)
 * and its topology (vpa-sysfs-topology.c). Not for other files.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

#define PCI_DEVICES "sys/bus/pci/devices"
#define NODE_DIR "sys/devices/system/node"
#define CPU_DIR "sys/devices/system/cpu"

/* One read of a tree. An attribute that is neither a regular file nor a
 * directory (a FIFO would block the read for ever, a device node read
 * without end) is never read: the first one is the read's error,
 * whatever its caller makes of a missing value (sysfs has none). */
typedef struct {
  GError *refused;
} Reader;

/* Reads a small attribute below dfd into buf, trailing blanks stripped;
 * 0 or an errno. Anything but a regular file or a directory is refused
 * through r and reads as ENXIO (vpa-sysfs.c). */
int vpa_sysfs_read_attr (Reader *r, int dfd, const char *name, char *buf, gsize len);

/* The NUMA cells of root into host; with capacity also their SMT
 * siblings, memory and pages (vpa-sysfs-topology.c). */
gboolean vpa_sysfs_topology_read (Reader *r, VpaHost *host, const char *root, gboolean capacity,
                                  GError **error);

G_END_DECLS
