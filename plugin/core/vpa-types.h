/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity: the core data model shared by every layer.
 *
 * Data flows one way: an inventory source fills a VpaHost (devices,
 * NUMA cells, claims); vpa-inventory applies the configuration (device
 * specs, tags) and the claims; pools and placement read that view.
 * Nothing in this header does I/O. It holds the error domain, the
 * enums and the device; it includes the headers of the rest of the
 * model (addresses, cells, claims, hosts, messages), so that one
 * include gives all of it.
 */
#pragma once

#include <glib.h>

#include "vpa-addr.h"
#include "vpa-cell.h"
#include "vpa-claim.h"
#include "vpa-message.h"
#include "vpa-numa-use.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

#define VPA_ERROR (vpa_error_quark ())
GQuark vpa_error_quark (void);

/* The codes are the CLI exit statuses (docs/interface.md, "Exit status"). */
typedef enum {
  VPA_ERROR_UNSATISFIABLE = 1, /* a request cannot be met */
  VPA_ERROR_INVALID = 2,       /* bad input or usage */
  VPA_ERROR_ENVIRONMENT = 3,   /* cannot connect, cannot read sysfs */
} VpaErrorCode;

/* ------------------------------------------------------------------ */
/* Documents                                                           */
/* ------------------------------------------------------------------ */

/* A document read into memory: its len bytes (not necessarily
 * NUL-terminated) and the name messages give it (a path, "stdin",
 * "domain 'web1'"). Borrowed: a VpaDoc owns neither. */
typedef struct {
  const char *buf;
  gsize len;
  const char *what;
} VpaDoc;

/* ------------------------------------------------------------------ */
/* Enums, each with a string table                                     */
/* ------------------------------------------------------------------ */

typedef enum {
  VPA_DEV_TYPE_PCI,
  VPA_DEV_TYPE_PF,
  VPA_DEV_TYPE_VF,
  VPA_DEV_TYPE_LAST
} VpaDevType;

/* "type-PCI", "type-PF", "type-VF" */
const char *vpa_dev_type_to_string (VpaDevType type);
gboolean vpa_dev_type_from_string (const char *str, VpaDevType *out);

typedef enum {
  VPA_POLICY_LEGACY,
  VPA_POLICY_REQUIRED,
  VPA_POLICY_PREFERRED,
  VPA_POLICY_SOCKET,
  VPA_POLICY_LAST
} VpaPolicy;

/* Case-sensitive, as in Nova. */
const char *vpa_policy_to_string (VpaPolicy policy);
gboolean vpa_policy_from_string (const char *str, VpaPolicy *out);

/* Where an effective policy came from. */
typedef enum {
  VPA_POLICY_SOURCE_PORT,
  VPA_POLICY_SOURCE_FLAVOR,
  VPA_POLICY_SOURCE_IMAGE,
  VPA_POLICY_SOURCE_ALIAS,
  VPA_POLICY_SOURCE_DEFAULT,
  VPA_POLICY_SOURCE_LAST
} VpaPolicySource;

/* "port", "flavor", "image", "alias", "default" */
const char *vpa_policy_source_to_string (VpaPolicySource source);
gboolean vpa_policy_source_from_string (const char *str, VpaPolicySource *out);

/* Whole-guest NUMA placement: <vpa:numa cpu-policy cpu-thread-policy> */
typedef enum {
  VPA_CPU_POLICY_SHARED,
  VPA_CPU_POLICY_DEDICATED,
  VPA_CPU_POLICY_LAST
} VpaCpuPolicy;

typedef enum {
  VPA_THREAD_POLICY_PREFER,
  VPA_THREAD_POLICY_ISOLATE,
  VPA_THREAD_POLICY_REQUIRE,
  VPA_THREAD_POLICY_LAST
} VpaThreadPolicy;

/* "shared", "dedicated"; "prefer", "isolate", "require" */
const char *vpa_cpu_policy_to_string (VpaCpuPolicy p);
gboolean vpa_cpu_policy_from_string (const char *s, VpaCpuPolicy *out);
const char *vpa_thread_policy_to_string (VpaThreadPolicy p);
gboolean vpa_thread_policy_from_string (const char *s, VpaThreadPolicy *out);

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

#define VPA_NUMA_NONE (-1)   /* no NUMA information (Nova's None) */
#define VPA_SOCKET_NONE (-1) /* cell without a single socket id */

typedef struct {
  VpaAddr addr;
  char vendor_id[8];  /* 4 lowercase hex digits, e.g. "8086" */
  char product_id[8]; /* 4 lowercase hex digits, e.g. "1889" */
  guint32 class_code; /* e.g. 0x020000; 0 when unknown */
  VpaDevType dev_type;
  gint numa_node;      /* VPA_NUMA_NONE when absent or -1 */
  VpaAddr parent_addr; /* a VF's PF; VPA_ADDR_NONE otherwise */
  guint max_vfs;       /* a PF's sriov_totalvfs / maxCount */
  gint iommu_group;    /* -1 when unknown */
  char *netdev;        /* its network interface name, or NULL */
  char *driver;        /* bound kernel driver, or NULL */
  /* The PCIe tree (vpa-pcie.h), as the source reports it: */
  VpaAddr pcie_root;   /* its host bridge pciDDDD:BB as VPA_ADDR (DDDD, BB, 0, 0);
                        * VPA_ADDR_NONE: taken from the bridge above, else unknown */
  VpaAddr pcie_parent; /* the bridge directly above it; VPA_ADDR_NONE on a root bus */
  guint16 link_speed;  /* negotiated PCIe link speed in tenths of GT/s (160 is
                        * 16 GT/s); 0 when unknown */
  guint16 link_width;  /* negotiated link width in lanes; 0 when unknown */

  /* Its 64-bit memory BARs (vpa-bars.h): sysfs `resource` and snapshots
   * know them, libvirt's nodedev XML does not (bars_known FALSE). */
  gboolean bars_known;
  guint64 bar64_bytes;

  /* Filled by vpa_host_seal(): */
  gint parent_index;      /* index of the parent PF in host->devices, or -1 */
  GArray *vf_indices;     /* PF: guint indices of its VFs, ascending; or NULL */
  gint pcie_parent_index; /* index of the bridge above it, or -1 */
} VpaDevice;

VpaDevice *vpa_device_new (void);
void vpa_device_free (VpaDevice *dev);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaDevice, vpa_device_free)

G_END_DECLS

/* Last: the host needs VpaDevice (see vpa-host.h). */
#include "vpa-host.h"
