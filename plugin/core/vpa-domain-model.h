/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A libvirt domain as every layer reads it: the vpa:affinity requests
 * in its metadata, the guest NUMA cells and the host nodes they are
 * bound to, the PCI devices it holds, the guest's PCI layout, and the
 * decisions recorded by earlier placements. vpa-domain.h (xml/) parses
 * it; policy/ decides over it.
 */
#pragma once

#include "vpa-constants.h"
#include "vpa-types.h"
#include "vpa-cpuset.h"
#include "vpa-pcie.h"
#include "vpa-guest-model.h"

G_BEGIN_DECLS

typedef enum {
  VPA_DOMAIN_MODE_UNSET,   /* no mode attribute: the host's [hook] mode */
  VPA_DOMAIN_MODE_ENFORCE, /* refuse, even on a host in audit mode */
  VPA_DOMAIN_MODE_AUDIT,   /* the host's audit mode (never loosens enforce) */
  VPA_DOMAIN_MODE_UNKNOWN, /* the document cannot be read */
  VPA_DOMAIN_MODE_LAST
} VpaDomainMode;

/* What a domain may describe for us to read: QEMU's most NUMA nodes and
 * libvirt's most vCPUs are below these. Over them, a domain we manage is
 * refused; in another one the rest is not read; the claims of another
 * domain (vpa_numa_claim) cannot be known. */
#define VPA_DOMAIN_MAX_CELLS 256
#define VPA_DOMAIN_MAX_PINS 4096

/* VPA_XMLNS, our metadata namespace, is in vpa-constants.h. */
#define VPA_ALIAS_PREFIX "ua-vpa-" /* ua-vpa-NAME-N */

typedef struct {
  char *device;     /* user alias of the interface/hostdev it fills */
  char *physnet;    /* NULL: a port without physical network */
  gboolean want_pf; /* vnic-type direct-physical */
  gint trusted;     /* -1 unset, 0 false, 1 true */
  char *pf_group;   /* NULL when none */
  gboolean has_policy;
  VpaPolicy policy;
  char *locality_group; /* NULL when none */
  char *network;        /* the device is an <interface type='network'>: its
                         * <source network>, a libvirt hostdev network whose
                         * VF libvirt picks (docs/domain-xml.md); else NULL */
} VpaPortRequest;

/* <vpa:port device='ua-vhu0' vnic-type='normal' physnet='physnet1'|
 * tunneled='yes' policy='...'/>: a port a NUMA-aware vSwitch serves
 * (docs/vswitch.md). Its <interface> is read, never rewritten. */
typedef struct {
  char *device;  /* user alias of its <interface> */
  char *physnet; /* NULL when tunneled */
  gboolean tunneled;
  gboolean has_policy;
  VpaPolicy policy;
  char *iface_type; /* the <interface type>: vhostuser, bridge, network,
                     * ethernet (set once the document is checked) */
} VpaVswitchPort;

void vpa_vswitch_port_free (VpaVswitchPort *port);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaVswitchPort, vpa_vswitch_port_free)

/* <vpa:device alias='GPU' name='ua-gpu0' locality-group='g0'/>: one
 * device of a PCI alias as a request of its own. */
typedef struct {
  char *alias;          /* the alias of the configuration */
  char *name;           /* user alias of the <hostdev> it fills or adds */
  char *locality_group; /* NULL when none */
} VpaDeviceRequest;

void vpa_device_request_free (VpaDeviceRequest *req);

/* <vpa:locality-group name='g0' level='switch' policy='preferred'/> */
typedef struct {
  char *name;
  VpaLocality level; /* default switch */
  gboolean required; /* policy required; default preferred */
} VpaLocalityGroup;

void vpa_locality_group_free (VpaLocalityGroup *group);

typedef struct {
  char *name; /* alias name */
  guint count;
} VpaAliasRequest;

/* A PCI device the domain uses: <hostdev type='pci'> or
 * <interface type='hostdev'>. */
typedef struct {
  char *alias;  /* its <alias name>, or NULL */
  VpaAddr addr; /* its <source><address>, or VPA_ADDR_NONE */
  gboolean is_interface;
} VpaDomainHostdev;

/* A guest NUMA cell (<cpu><numa><cell>) and what binds it to host
 * nodes, in the order docs/placement.md gives. */
typedef struct {
  guint id;           /* <cell id>, or its position when absent */
  VpaBits *vcpus;     /* guest vCPU ids of <cell cpus> */
  VpaBits *nodeset;   /* host nodes of <numatune><memnode cellid>; NULL
                       * when none (see vpa_domain_model_cell_nodeset) */
  VpaBits *cpuset;    /* host CPUs its vCPUs are pinned to
                       * (<vcpupin>, else <vcpu cpuset>); NULL if none */
  guint64 memory_kib; /* <cell memory unit> */
} VpaDomainCell;

/* <vpa:placed-cell cell host-node cpus memory-kib/>: one guest cell's
 * binding as whole-guest placement recorded it. */
typedef struct {
  guint cell;
  gint node;
  GArray *cpus; /* guint: dedicated: the host CPU of each vCPU in
                 * the cell's vCPU order; shared: the node's set */
  guint64 memory_kib;
  GArray *reserved; /* guint: reserved-cpus, the thread siblings isolate
                     * keeps idle (never in <emulatorpin>); NULL: none */
  GArray *emulator; /* guint: emulator-cpus, the CPUs emulator-threads=
                     * "isolate" dedicates to the emulator; NULL: none */
} VpaPlacedCell;

void vpa_placed_cell_clear (VpaPlacedCell *pc);

/* <vpa:placed .../> */
typedef struct {
  char *device;
  VpaAddr addr;  /* VPA_ADDR_NONE for a network placement */
  char *network; /* a hostdev network chosen for a port, or NULL */
  gint numa_node;
  VpaPolicy policy;
  VpaPolicySource source;
  char *locality_group; /* NULL when none */
  gint locality;        /* VpaLocality reached, -1 when none recorded */
} VpaPlacedRecord;

typedef struct {
  char *name;
  char *uuid;
  gboolean has_affinity; /* <vpa:affinity> present */
  VpaDomainMode mode;    /* its mode attribute (docs/hook.md, "Audit mode") */
  gboolean has_flavor_policy;
  VpaPolicy flavor_policy;
  gboolean has_image_policy;
  VpaPolicy image_policy;
  GPtrArray *alias_requests;  /* VpaAliasRequest*, flavor order */
  GPtrArray *ports;           /* VpaPortRequest*, document order */
  GPtrArray *vswitch_ports;   /* VpaVswitchPort*, document order */
  gboolean numa_guest;        /* has <cpu><numa> */
  GArray *implicit_nodes;     /* placement="auto" without cells: gint host nodes
                               * of <numatune><memory>, ascending (the host
                               * nodes of every cell: policy/vpa-bind.h) */
  GPtrArray *hostdevs;        /* VpaDomainHostdev* */
  GPtrArray *placed;          /* VpaPlacedRecord* */
  GPtrArray *cells;           /* VpaDomainCell*, document order; empty if not numa_guest */
  VpaBits *memory_nodeset;    /* <numatune><memory nodeset>, or NULL */
  char *source;               /* what, for messages */
  GPtrArray *devices;         /* VpaDeviceRequest*, document order */
  GPtrArray *locality_groups; /* VpaLocalityGroup*, document order */
  /* Whole-guest NUMA placement (<vpa:numa placement="auto">) */
  gboolean numa_auto;
  VpaCpuPolicy cpu_policy;
  VpaThreadPolicy thread_policy;
  /* emulator-threads="share": <emulatorpin> is the host's shared CPUs */
  gboolean emulator_share;
  /* emulator-threads="isolate": one more dedicated CPU on guest cell 0's
   * node, the emulator's alone (Nova's cpuset_reserved) */
  gboolean emulator_isolate;
  guint n_vcpus;          /* <vcpu>, default 1 */
  guint64 memory_kib;     /* <memory> */
  guint64 page_kib;       /* <memoryBacking><hugepages>: page size, 0 none */
  gboolean has_binding;   /* a <numatune>, <vcpupin> or <emulatorpin> */
  GArray *placed_cells;   /* VpaPlacedCell, record order */
  gboolean guest_numa;    /* <vpa:guest-numa devices='expander-bus'> */
  guint guest_numa_spare; /* its spare-ports (default 1) */
  VpaGuestBus *bus;       /* the guest's PCI layout; NULL without vpa:affinity */

  /* <vpa:numa distances='keep'> (has_numa: a <vpa:numa>): the guest's
   * own <distances> stay; default host: the host's are written. */
  gboolean has_numa;
  gboolean keep_distances;
} VpaDomain;

/* The group of this name, or NULL. */
const VpaLocalityGroup *vpa_domain_model_locality_group (const VpaDomain *dom, const char *name);

/* An empty domain; what names it in messages (the parser fills it). */
VpaDomain *vpa_domain_new (const char *what);
void vpa_domain_free (VpaDomain *dom);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaDomain, vpa_domain_free)

/* The cell's host nodes: its <memnode> nodeset, else <memory>'s, or NULL. */
const VpaBits *vpa_domain_model_cell_nodeset (const VpaDomain *dom, const VpaDomainCell *cell);

G_END_DECLS
