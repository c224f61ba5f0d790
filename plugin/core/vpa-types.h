/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity: the core data model shared by every layer.
 *
 * Data flows one way: an inventory source fills a VpaHost (devices,
 * NUMA cells, claims); vpa-inventory applies the configuration (device
 * specs, tags) and the claims; pools and placement read that view.
 * Nothing in this header does I/O.
 */
#pragma once

#include <glib.h>

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
/* PCI addresses                                                       */
/* ------------------------------------------------------------------ */

/* domain:32 | bus:8 | slot:5 | function:3, in the low 48 bits: libvirt
 * reads a PCI domain as an unsigned int (Intel VMD domains start at
 * 0x10000). VPA_ADDR_NONE, "no address", lies beyond those 48 bits, so
 * no address equals it; test it with VPA_ADDR_IS_VALID, compare with
 * vpa_addr_same, and never print it as an address. */
typedef guint64 VpaAddr;
#define VPA_ADDR_NONE G_MAXUINT64
#define VPA_ADDR_MAX G_GUINT64_CONSTANT (0xffffffffffff)
#define VPA_ADDR_IS_VALID(a) ((a) <= VPA_ADDR_MAX)
#define VPA_ADDR(d, b, s, f)                                \
  ((((guint64) (d)) << 16) | (((guint64) (b) &0xff) << 8) | \
   (((guint64) (s) &0x1f) << 3) | ((guint64) (f) &0x7))
#define VPA_ADDR_DOMAIN(a) ((guint32) ((a) >> 16))
#define VPA_ADDR_BUS(a) ((guint) (((a) >> 8) & 0xff))
#define VPA_ADDR_SLOT(a) ((guint) (((a) >> 3) & 0x1f))
#define VPA_ADDR_FUNCTION(a) ((guint) ((a) &0x7))
/* "ffffffff:ff:1f.7" plus NUL */
#define VPA_ADDR_BUFLEN 20
/* What vpa_addr_format writes for VPA_ADDR_NONE. */
#define VPA_ADDR_NONE_TEXT "(no address)"

/* Parses "0000:81:00.1" (hex fields, the domain up to 32 bits; it may be
 * omitted). */
gboolean vpa_addr_parse (const char *str, VpaAddr *out);
/* Formats as %04x:%02x:%02x.%x into buf, returns buf; an address that
 * is not VPA_ADDR_IS_VALID as VPA_ADDR_NONE_TEXT. */
const char *vpa_addr_format (VpaAddr addr, char buf[VPA_ADDR_BUFLEN]);
char *vpa_addr_to_string (VpaAddr addr);
/* TRUE if a and b are the same address: "no address" is the same as
 * nothing, not even itself (a claim without an address names no
 * device, a device without a PF has no PF to share). */
gboolean vpa_addr_same (VpaAddr a, VpaAddr b);
/* GHashTable functions for keys that point at a VpaAddr. */
guint vpa_addr_hash (gconstpointer p);
gboolean vpa_addr_equal (gconstpointer a, gconstpointer b);

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
/* Devices and host topology                                           */
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

/* One logical CPU of a cell, parallel to VpaCell.cpus. */
typedef struct {
  gboolean online; /* offline CPUs are listed but never used */
  gint socket;     /* VPA_SOCKET_NONE when unknown */
  gint core;       /* core id, -1 when unknown */
  guint siblings;  /* the lowest CPU id of its thread siblings (itself
                    * when it has none or they are unknown) */
} VpaCpuTopo;

/* Pages of one size on a cell (capabilities <pages>, sysfs hugepages). */
typedef struct {
  guint64 size_kib;
  guint64 total;
  guint64 free; /* sysfs free_hugepages; equal to total elsewhere */
} VpaPages;

/* The distance from a cell to another node (capabilities <distances>,
 * sysfs nodeN/distance). */
typedef struct {
  gint node;
  guint value;
} VpaDistance;

typedef struct {
  gint id;
  gint socket;  /* VPA_SOCKET_NONE unless all its CPUs share one socket */
  GArray *cpus; /* guint cpu ids, ascending */
  guint64 memory_kib;
  /* Capacity (filled by the sources that know it, else NULL): */
  GArray *topo;      /* VpaCpuTopo, parallel to cpus */
  GArray *pages;     /* VpaPages, ascending size */
  GArray *distances; /* VpaDistance, ascending node */
} VpaCell;

/* What a domain pins and binds on the host's NUMA nodes. */
typedef struct {
  gint node;
  guint64 page_kib; /* 0: ordinary memory; else a hugepage size */
  guint64 kib;      /* memory bound strictly to node (pages * page_kib) */
} VpaMemClaim;

typedef struct {
  GArray *dedicated; /* guint host CPUs it pins dedicated, ascending */
  /* guint host CPUs, ascending, not in dedicated, that a pin of it lets
   * one of its threads run on (vCPUs, emulator, I/O threads): no
   * dedicated guest may take them (docs/placement.md) */
  GArray *pinned;
  GArray *memory; /* VpaMemClaim */
} VpaNumaUse;

/* A device held by a domain (a <hostdev> or <interface type='hostdev'>),
 * or (addr VPA_ADDR_NONE, numa set) the CPUs and memory it holds. */
typedef struct {
  char *domain; /* the domain's name */
  VpaAddr addr;
  gboolean running; /* the domain is running (FALSE: defined only) */
  VpaNumaUse *numa; /* NULL for a device claim */
} VpaClaim;

VpaClaim *vpa_claim_new (const char *domain, VpaAddr addr, gboolean running);
/* A claim of CPUs and memory; takes ownership of use. */
VpaClaim *vpa_claim_new_numa (const char *domain, gboolean running, VpaNumaUse *use);
VpaClaim *vpa_claim_copy (const VpaClaim *claim);
void vpa_claim_free (VpaClaim *claim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaClaim, vpa_claim_free)
VpaNumaUse *vpa_numa_use_new (void);
/* Whether cpu is one no dedicated guest may take: in dedicated or in
 * pinned (both ascending: a binary search each). */
gboolean vpa_numa_use_holds (const VpaNumaUse *use, guint cpu);
void vpa_numa_use_free (VpaNumaUse *use);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaNumaUse, vpa_numa_use_free)

/* The one claims filter: copies of claims (may be NULL), in order,
 * without those of the domain named exclude (NULL: keeps every domain's;
 * a domain never competes with itself when it is placed again) and, if
 * running_only, without those of domains that are not running. Returns a
 * new array of VpaClaim*. */
GPtrArray *vpa_claims_filter (GPtrArray *claims, const char *exclude, gboolean running_only);

typedef struct {
  char *source;        /* where it came from, for messages */
  char *hostname;      /* may be NULL */
  GPtrArray *devices;  /* VpaDevice*, sorted by address once sealed */
  GArray *cells;       /* VpaCell, sorted by id once sealed */
  GPtrArray *claims;   /* VpaClaim* from the source's domains, if it has any */
  GHashTable *by_addr; /* VpaAddr* -> index + 1 (GUINT_TO_POINTER) */
  gboolean sealed;
} VpaHost;

VpaHost *vpa_host_new (const char *source);
void vpa_host_free (VpaHost *host);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaHost, vpa_host_free)

/* Takes ownership of dev. Duplicate addresses are an error at seal time. */
void vpa_host_add_device (VpaHost *host, VpaDevice *dev);
/* Takes ownership of cell->cpus, topo, pages and distances. */
void vpa_host_add_cell (VpaHost *host, const VpaCell *cell);
void vpa_host_add_claim (VpaHost *host, VpaClaim *claim);

/* Sorts devices by address and cells by id, builds the address index,
 * links VFs to their PFs (parent_index, vf_indices). A VF whose PF is
 * not in the inventory keeps parent_index -1. */
gboolean vpa_host_seal (VpaHost *host, GError **error);

/* Index of the device at addr, or -1. The host must be sealed. */
gint vpa_host_lookup (const VpaHost *host, VpaAddr addr);
static inline VpaDevice *
vpa_host_device (const VpaHost *host, guint i)
{
  return g_ptr_array_index (host->devices, i);
}
/* The cell with this id, or NULL. */
const VpaCell *vpa_host_cell (const VpaHost *host, gint id);
/* The socket of a NUMA node, or VPA_SOCKET_NONE. */
gint vpa_host_node_socket (const VpaHost *host, gint node);
/* TRUE when the host has cells and every cell has a socket id. */
gboolean vpa_host_sockets_known (const VpaHost *host);

/* Computes a cell's socket by Nova's rule: the one socket_id all its
 * CPUs share; VPA_SOCKET_NONE for an empty cell, mixed sockets, or a CPU
 * without a socket id (pass -1 for those). */
gint vpa_cell_socket_from_cpu_sockets (const gint *sockets, guint n);

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

/* The distance between two nodes from the host's matrix: 10 for a node
 * to itself, G_MAXUINT when unknown. */
guint vpa_host_distance (const VpaHost *host, gint from, gint to);
/* The cell's pages of size_kib, or NULL. */
const VpaPages *vpa_cell_pages (const VpaCell *cell, guint64 size_kib);

G_END_DECLS
