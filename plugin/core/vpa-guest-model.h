/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Guest-visible device NUMA (<vpa:guest-numa devices='expander-bus'>,
 * docs/guest-numa.md) as every layer reads it: the guest's PCI
 * controllers as the domain document has them (VpaGuestBus, which
 * vpa-guest-topology.h parses), and the plan that puts every placed
 * device behind an expander bus bound to the guest cell its host node
 * backs (VpaGuestTopology, which policy/ makes and vpa-rewrite.h
 * writes).
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

#define VPA_TOPO_PXB_PREFIX "ua-vpa-pxb-"        /* ua-vpa-pxb-CELL */
#define VPA_TOPO_RP_PREFIX "ua-vpa-rp-"          /* ua-vpa-rp-DEVICE */
#define VPA_TOPO_SPARE_PREFIX "ua-vpa-rp-spare-" /* ua-vpa-rp-spare-CELL-N */
#define VPA_TOPO_SPARE_MAX 16                    /* spare-ports */
#define VPA_TOPO_BUSNR_MAX 254                   /* libvirt's highest busNr */
#define VPA_TOPO_INDEX_MAX 255                   /* highest PCI controller index */
#define VPA_TOPO_SLOTS 32                        /* slots of one expander bus */

typedef enum {
  VPA_MACHINE_Q35,    /* pcie-root: pcie-expander-bus + pcie-root-port */
  VPA_MACHINE_I440FX, /* pci-root: pci-expander-bus, devices on it */
} VpaMachineKind;

/* A <controller type='pci'> of the document. */
typedef struct {
  guint index;
  char *model; /* NULL when absent */
  char *alias; /* its <alias name>, or NULL */
  gint bus_nr; /* <target busNr>, -1 when absent */
  gint node;   /* <target><node>, -1 when absent */
  gint parent; /* <address type='pci' bus>: the index it plugs into, -1 */
  gint slot;   /* <address slot>, -1 */
} VpaGuestController;

void vpa_guest_controller_free (VpaGuestController *c);

/* The guest <address type='pci'> of a device with a user alias. */
typedef struct {
  char *alias;
  gint bus; /* controller index, -1 when it has no PCI address */
  gint slot;
  gboolean ours; /* a PCI <hostdev> ua-vpa-NAME-N: placed again or removed */
} VpaGuestDeviceAddr;

/* An element of <devices> as libvirt's bus rules read it
 * (policy/vpa-guest-bus-rules.h): raw strings as the document has
 * them, NULL when absent. */
typedef struct {
  char *name; /* "hostdev", "controller", ... */
  char *type; /* its type, mode, index and model attributes */
  char *mode;
  char *index;
  char *model;
  char *alias; /* its user alias ("ua-"), else NULL */
  gboolean pci_address;
  char *address[4]; /* <address type='pci'>: domain, bus, slot, function */
  char *bus_nr;     /* a controller's <target busNr> */
  char *node;       /* a controller's <target><node> text */
} VpaGuestElement;

void vpa_guest_element_free (VpaGuestElement *e);

/* What libvirt's bus rules read of a domain. */
typedef struct {
  GPtrArray *cell_ids; /* char* per <cpu><numa><cell>: its id, NULL when absent */
  GPtrArray *elements; /* VpaGuestElement* of the devices with an address
                        * and an alias in libvirt, document order */
} VpaGuestFacts;

VpaGuestFacts *vpa_guest_facts_new (void);
void vpa_guest_facts_free (VpaGuestFacts *facts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaGuestFacts, vpa_guest_facts_free)

/* The guest's PCI layout. */
typedef struct {
  gboolean known_machine; /* FALSE: a machine type without expander buses */
  VpaMachineKind machine;
  char *machine_name;     /* <os><type machine>, or NULL */
  gboolean acpi;          /* <features><acpi/> */
  GPtrArray *controllers; /* VpaGuestController*, document order */
  GPtrArray *devices;     /* VpaGuestDeviceAddr*, document order */
  GPtrArray *occupants;   /* VpaGuestDeviceAddr* of every element of <devices>
                           * with an <address type='pci'> (alias may be NULL):
                           * what sits on each bus, libvirt's own devices too */
  VpaGuestFacts *facts;   /* what libvirt's bus rules must pass before the
                           * planner reads the layout; NULL: nothing to check */
} VpaGuestBus;

void vpa_guest_bus_free (VpaGuestBus *bus);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaGuestBus, vpa_guest_bus_free)

/* An empty layout (vpa_guest_topology_bus_parse fills it). */
VpaGuestBus *vpa_guest_bus_new (void);

/* Whether the document holds one of the plan's controllers. */
gboolean vpa_guest_model_bus_has_own (const VpaGuestBus *bus);

/* TRUE for the user aliases of the controllers a plan owns. */
gboolean vpa_guest_model_topology_owns (const char *alias);

/* A guest cell and the host nodes backing it: the domain's own binding
 * (<numatune>, pins) today, the chosen nodes under whole-guest
 * placement. nodes is borrowed. */
typedef struct {
  guint cell;
  const GArray *nodes; /* gint host nodes */
} VpaCellNodes;

/* The guest cell whose host nodes hold node (the first in cells'
 * order), or -1: a device on that node stays where libvirt puts it. */
gint vpa_guest_model_cell_of_node (const GArray *cells, gint node);

/* A placed device, in decision order. */
typedef struct {
  char *device; /* its user alias */
  gint cell;    /* the guest cell its host node backs, -1 none */
  gint host_node;
} VpaTopoDevice;

VpaTopoDevice *vpa_topo_device_new (const char *device, gint cell, gint host_node);
void vpa_topo_device_free (VpaTopoDevice *dev);

typedef enum {
  VPA_TOPO_EXPANDER,
  VPA_TOPO_ROOT_PORT,
} VpaTopoKind;

/* A controller of the plan. */
typedef struct {
  VpaTopoKind kind;
  VpaMachineKind machine;
  char *alias;
  guint index;
  guint cell;
  guint bus_nr;      /* expander: its busNr */
  guint bus_count;   /* expander: bus numbers it holds, busNr and up */
  guint parent;      /* root port: its expander's index */
  guint slot;        /* root port: its slot on the expander */
  char *device;      /* root port: the device on it, NULL when spare */
  gboolean occupied; /* spare: a device not placed by us sits on it */
} VpaTopoController;

/* Where a device goes: slot of the controller with index bus. */
typedef struct {
  char *device;
  guint bus;
  guint slot;
  gint cell;
  gint host_node;
} VpaTopoPlacement;

void vpa_topo_placement_free (VpaTopoPlacement *p);

typedef struct {
  VpaMachineKind machine;
  gboolean keep;          /* the document's controllers stay as they are */
  GPtrArray *controllers; /* VpaTopoController*: by cell, the expander then its ports;
                           * empty when keep */
  GPtrArray *placements;  /* VpaTopoPlacement*, decision order */
  GPtrArray *unplaced;    /* VpaTopoDevice* that stay where libvirt puts them */
} VpaGuestTopology;

void vpa_guest_topology_free (VpaGuestTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaGuestTopology, vpa_guest_topology_free)

/* The model libvirt names the plan's expanders by. */
const char *vpa_guest_model_expander_name (VpaMachineKind machine);

/* An empty plan for machine (the planner fills it). */
VpaGuestTopology *vpa_guest_topology_new (VpaMachineKind machine);

G_END_DECLS
