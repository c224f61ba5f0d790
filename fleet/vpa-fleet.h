/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store (docs/interface.md, "Fleet"): the device rows of many hosts
 * in SQLite or PostgreSQL. The rows are the per-device truth; pools are
 * generated from them by one SQL GROUP BY whenever they are asked for
 * (the "pci-stats-generate" design with what docs/nova.md, "Pools from
 * SQL", says it must add: state, dev_type and tags in the key, NULL NUMA as its
 * own group, a deterministic order). A host filter decides, from the pool
 * rows of all hosts, which hosts can take a domain's requests.
 *
 * libvpa_fleet (fleet/) is a library of its own above libvpa: neither
 * libvpa nor the hook links sqlite3 or libpq. The store is
 * vpa-fleet-store.h, its schema vpa-fleet-schema.h, what the backends
 * read back vpa-fleet-rows.h.
 */
#pragma once

#include "vpa-types.h"
#include "vpa-inventory.h"
#include "vpa-place.h"
#include "vpa-pools.h"
#include "vpa-traits.h"
#include "vpa-domain.h"

G_BEGIN_DECLS

#define VPA_FLEET_HOST_NAME_MAX 253
/* The longest tags string (canonical JSON) a device row may carry: the
 * free devices' index of schema version 6 included it, and a store
 * bounds what one sync writes (docs/fleet.md, versions 6 and 7). */
#define VPA_FLEET_TAGS_MAX 2048

#define VPA_FLEET_TRAIT_NET_NUMA VPA_TRAIT_NET_NUMA_AFFINITY
#define VPA_FLEET_TRAIT_SOCKET VPA_TRAIT_SOCKET_PCI_NUMA_AFFINITY

/* ------------------------------------------------------------------ */
/* What a sync writes                                                  */
/* ------------------------------------------------------------------ */

/* One host NUMA node with its raw capacity (docs/fleet.md, "Node
 * capacity"): the encodings are vpa_fleet_cell_encode()'s; NULL where the
 * inventory source does not know it (and in a store migrated from
 * version 1 until the host syncs again). */
typedef struct {
  gint node;
  gint socket; /* VPA_SOCKET_NONE = NULL */
  guint64 memory_kib;
  char *cpus;      /* "cpu/online/socket/core/siblings ..." or "cpu ..." */
  char *pages;     /* "size_kib/total/free ..." */
  char *distances; /* "node/value ..." */
} VpaFleetCell;

/* The CPUs and memory one domain of the host pins and binds. */
typedef struct {
  char *domain;
  gboolean running;
  char *dedicated; /* "cpu cpu ..." */
  char *memory;    /* "node/page_kib/kib ..." */
} VpaFleetNumaClaim;

/* The rows of a VpaCell (copies its capacity into the encodings). */
void vpa_fleet_cell_encode (const VpaCell *cell, VpaFleetCell *out);
void vpa_fleet_cell_clear (VpaFleetCell *cell);
void vpa_fleet_numa_claim_clear (VpaFleetNumaClaim *claim);

/* A [physnet NAME] or [tunnel] group of the host's configuration: the
 * host nodes its vSwitch serves the network from (docs/vswitch.md). */
typedef struct {
  char *physnet; /* NULL: the tunnel */
  char *nodes;   /* "0 2", ascending; "": no affinity (Nova's default) */
} VpaFleetNetwork;

void vpa_fleet_network_clear (VpaFleetNetwork *net);

/* One row of the devices table. */
typedef struct {
  VpaAddr addr;
  char vendor_id[8];
  char product_id[8];
  VpaDevType dev_type;
  gint numa_node;      /* VPA_NUMA_NONE = NULL */
  VpaAddr parent_addr; /* VPA_ADDR_NONE = NULL */
  char *tags;          /* canonical JSON object, see vpa_fleet_tags_canonical() */
  gint64 tagset;       /* vpa_fleet_tagset_key (tags) */
  char *netdev;        /* or NULL */
  char *held_by;       /* or NULL */
  VpaDevState state;
  char *pcie_root;   /* host bridge "pci0000:15", or NULL when unknown */
  char *pcie_port;   /* root port above it, or NULL */
  char *pcie_switch; /* switch (upstream port) above it, or NULL */
} VpaFleetDevice;

typedef struct {
  char *name;
  GArray *cells;    /* VpaFleetCell, ascending node */
  GStrv traits;     /* sorted */
  GArray *devices;  /* VpaFleetDevice, ascending address */
  GArray *claims;   /* VpaFleetNumaClaim, one per domain */
  GArray *networks; /* VpaFleetNetwork, in the configuration's order */
} VpaFleetHostData;

VpaFleetHostData *vpa_fleet_host_data_new (const char *name);
void vpa_fleet_host_data_free (VpaFleetHostData *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaFleetHostData, vpa_fleet_host_data_free)

/* Appends a row; copies the strings. tags NULL is the empty tag set. */
void vpa_fleet_host_data_add (VpaFleetHostData *data, const VpaFleetDevice *dev);

/* The rows of every device in the inventory (devices no device spec
 * matches are not in it, as they are in no pool), its NUMA cells, the
 * traits the host reports (vpa_traits_compute) and the [physnet] and
 * [tunnel] groups of its configuration. */
VpaFleetHostData *vpa_fleet_host_data_from_inventory (const char *name,
                                                      const VpaInventory *inv);

/* {"k":"v",...}, keys sorted, values strings: equal tag sets give equal
 * strings, and the string is valid JSON for the output. */
char *vpa_fleet_tags_canonical (GPtrArray *pairs /* VpaSpecPair* */);
/* A stable 63-bit key of a canonical tag string (0 for "{}"). */
gint64 vpa_fleet_tagset_key (const char *tags);

/* Letters, digits, '.', '-', '_'; 1 to 253 characters. */
gboolean vpa_fleet_host_name_valid (const char *name, GError **error);

/* ------------------------------------------------------------------ */
/* What queries return                                                 */
/* ------------------------------------------------------------------ */

/* A pool's canonical tag string (vpa_fleet_tags_canonical) as its tags:
 * VpaSpecPair*, sorted by key. Configuration tags are strings; anything
 * else is not a tag we wrote and is left out. */
GPtrArray *vpa_fleet_tags_parse (const char *tags);

typedef struct {
  gint64 id;
  char *name;
  GStrv traits;
  char *last_sync;     /* ISO 8601 UTC */
  gint64 sync_version; /* the schema version of the sync that wrote its
                        * rows; 0: synced before version 5 */
  GArray *cells;       /* VpaFleetCell, ascending node */
  GPtrArray *pools;    /* VpaPool* of free devices (filter), or NULL */
  /* With VPA_FLEET_LOAD_CAPACITY: */
  GPtrArray *devices; /* VpaDevice* of its device rows, or NULL */
  GPtrArray *bridges; /* VpaDevice*: the root ports and switches above
                       * them (their PCIe tree, rebuilt from the rows) */
  GPtrArray *claims;  /* VpaClaim*: device holds and CPU/memory claims */
  GArray *reserved;   /* VpaAddr of its rows in state reserved */
  /* Pre-selection (vpa-fleet-preselect.h): 1 + the index of the first
   * request the host has too few free devices of, by SQL's count, or 0;
   * its rows were then not read back. */
  guint ruled_out;
  guint ruled_out_free; /* how many free devices match that request */
  /* With VPA_FLEET_LOAD_NETWORKS: the [physnet]/[tunnel] groups it
   * synced, VpaVswitchAffinity* (group "physnet NAME" or "tunnel"). */
  GPtrArray *networks;
} VpaFleetHost;

typedef enum {
  VPA_FLEET_LOAD_POOLS = 1 << 0,    /* the free pools (the filter) */
  VPA_FLEET_LOAD_CAPACITY = 1 << 1, /* device rows and claims (the fit) */
  VPA_FLEET_LOAD_NETWORKS = 1 << 2, /* [physnet]/[tunnel] affinity (the vSwitch rule) */
} VpaFleetLoadFlags;

void vpa_fleet_host_free (VpaFleetHost *host);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaFleetHost, vpa_fleet_host_free)
gboolean vpa_fleet_host_has_trait (const VpaFleetHost *host, const char *trait);

/* Parses "a b c" into a sorted GStrv. */
GStrv vpa_fleet_traits_parse (const char *str);
/* The current UTC time as ISO 8601. */
char *vpa_fleet_now (void);

G_END_DECLS
