/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host's PCIe tree: host bridges (root complexes), root ports,
 * switch upstream and downstream ports, endpoints. Every source fills
 * VpaDevice.pcie_root / pcie_parent; vpa_pcie_seal() (called by
 * vpa_host_seal()) links each device to the bridge above it and refuses
 * broken and cyclic chains. The rest reads the sealed tree: distances as
 * nvidia-smi topo prints them and the locality levels of placement.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

/* Distance between two devices, closest first (NCCL's path types). */
typedef enum {
  VPA_PCIE_PIX,  /* below one root port, at most one switch between them */
  VPA_PCIE_PXB,  /* below one root port, through several switches */
  VPA_PCIE_PHB,  /* one host bridge, different root ports */
  VPA_PCIE_NODE, /* different host bridges of one NUMA node */
  VPA_PCIE_SYS,  /* anything farther: across NUMA nodes or unknown */
  VPA_PCIE_LAST
} VpaPcieDistance;

/* "PIX", "PXB", "PHB", "NODE", "SYS" */
const char *vpa_pcie_distance_to_string (VpaPcieDistance d);

/* Locality levels of a group of devices, closest first. SYSTEM is what a
 * preferred group gets when no level holds all its members. */
typedef enum {
  VPA_LOCALITY_SWITCH,       /* below one root port: one switch, or one link */
  VPA_LOCALITY_ROOT_COMPLEX, /* one host bridge */
  VPA_LOCALITY_NUMA_NODE,
  VPA_LOCALITY_SOCKET,
  VPA_LOCALITY_SYSTEM,
  VPA_LOCALITY_LAST
} VpaLocality;

/* "switch", "root-complex", "numa-node", "socket", "system"; from_string
 * accepts only the first four (the levels a group may ask for). */
const char *vpa_locality_to_string (VpaLocality level);
gboolean vpa_locality_from_string (const char *str, VpaLocality *out);

/* Class 0x06xxxx: host, PCI-to-PCI and other bridges. Never assignable. */
static inline gboolean
vpa_pcie_is_bridge (const VpaDevice *dev)
{
  return (dev->class_code >> 16) == 0x06;
}

/* A host bridge as a VpaAddr key, and its sysfs name "pci0000:5d". */
#define VPA_PCIE_ROOT(domain, bus) VPA_ADDR ((domain), (bus), 0, 0)
char *vpa_pcie_root_name (VpaAddr root);
/* Parses "pci0000:5d" (the sysfs directory of a host bridge). */
gboolean vpa_pcie_root_parse (const char *str, VpaAddr *out);

/* Links pcie_parent_index, fills pcie_root from the chain above, refuses
 * a parent that is not a device of the host and cyclic chains
 * (VPA_ERROR_INVALID naming the device and its chain). */
gboolean vpa_pcie_seal (VpaHost *host, GError **error);

/* The root port above device i (the topmost bridge of its chain), or -1
 * for a device on a root bus. */
gint vpa_pcie_root_port (const VpaHost *host, guint i);
/* The switch above device i: the upstream port directly below its root
 * port, or -1 when it is not behind a switch. */
gint vpa_pcie_switch (const VpaHost *host, guint i);

/* The distance between devices a and b (a != b). */
VpaPcieDistance vpa_pcie_distance (const VpaHost *host, guint a, guint b);

/* Device i's domain at a level, as a number comparable between devices:
 * the root port index, the host bridge, the NUMA node, the socket. FALSE
 * when device i has none at that level (no root port, tree or NUMA node
 * unknown). SYSTEM always has key 0. */
gboolean vpa_pcie_locality_key (const VpaHost *host, guint i, VpaLocality level,
                                gint64 *key);

/* The closest level holding all of devices[0..n) (SYSTEM when none). */
VpaLocality vpa_pcie_locality_of (const VpaHost *host, const guint *devices, guint n);

/* The sysfs path the tree gives device i, "/sys/devices/pci0000:5d/
 * 0000:5d:02.0/0000:5e:00.0", or NULL when its root is unknown. */
char *vpa_pcie_sysfs_path (const VpaHost *host, guint i);

/* Parses a sysfs device path ("../../../devices/pci0000:5d/0000:5d:02.0/
 * 0000:5e:00.0", or absolute) into the root and the device's parent
 * bridge (VPA_ADDR_NONE on the root bus); the last component must be
 * addr. FALSE when it is not of that form. */
gboolean vpa_pcie_parse_sysfs_path (const char *path, VpaAddr addr, VpaAddr *root,
                                    VpaAddr *parent);

/* A link speed in GT/s as libvirt ("16", "2.5") or sysfs ("16.0 GT/s
 * PCIe") print it, in tenths; FALSE otherwise ("Unknown"). */
gboolean vpa_pcie_parse_speed (const char *s, guint16 *tenths);
/* As libvirt prints it: "16", "2.5". */
const char *vpa_pcie_format_speed (guint16 tenths, char buf[16]);

G_END_DECLS
