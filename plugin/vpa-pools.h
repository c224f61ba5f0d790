/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pools generated on demand from the inventory: the seed's
 *   SELECT vendor, product, numa_node, dev_type, tags, COUNT(*) ... GROUP BY
 * made correct (docs/nova.md, "Pools from SQL"): only devices in the inventory,
 * dev_type and tags in the key, NULL NUMA as its own group, free/used/
 * blocked split from the claims, deterministic order.
 */
#pragma once

#include "vpa-inventory.h"

G_BEGIN_DECLS

typedef enum {
  VPA_POOL_KEY_VENDOR = 1 << 0,
  VPA_POOL_KEY_PRODUCT = 1 << 1,
  VPA_POOL_KEY_NUMA_NODE = 1 << 2,
  VPA_POOL_KEY_SOCKET = 1 << 3,
  VPA_POOL_KEY_DEV_TYPE = 1 << 4,
  VPA_POOL_KEY_TAGS = 1 << 5,
  VPA_POOL_KEY_PF = 1 << 6,          /* a VF's parent PF address; a PF/PCI device's own */
  VPA_POOL_KEY_PCIE_ROOT = 1 << 7,   /* the host bridge (root complex) above it */
  VPA_POOL_KEY_PCIE_SWITCH = 1 << 8, /* the PCIe switch above it, if any */
  VPA_POOL_KEY_HOST = 1 << 9,        /* a fleet's pools (fleet/): the host they are on */
} VpaPoolKeys;

/* The key a --group-by name stands for ("numa_node"), or 0. */
VpaPoolKeys vpa_pools_key_from_name (const char *name);

#define VPA_POOL_KEYS_DEFAULT                                            \
  (VPA_POOL_KEY_VENDOR | VPA_POOL_KEY_PRODUCT | VPA_POOL_KEY_NUMA_NODE | \
   VPA_POOL_KEY_DEV_TYPE | VPA_POOL_KEY_TAGS)

/* The keys of a fleet's pools: the host, then the default keys and the
 * socket (docs/fleet.md). */
#define VPA_POOL_KEYS_FLEET (VPA_POOL_KEY_HOST | VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_SOCKET)

/* "vendor,product,numa_node,socket,dev_type,tags,pf,pcie-root,pcie-switch"
 * (also vendor_id, product_id); errors name the unknown key. */
gboolean vpa_pools_keys_parse (const char *str, VpaPoolKeys *out, GError **error);

/* One pool: of this host (vpa_pools_generate) or of a host of the fleet
 * store (fleet/, which reads them back from SQL). The front ends format
 * both alike. */
typedef struct {
  VpaPoolKeys keys; /* which fields below are meaningful */
  char *host;       /* VPA_POOL_KEY_HOST: the host's name in the fleet; else NULL */
  char vendor_id[8];
  char product_id[8];
  gint numa_node; /* VPA_NUMA_NONE = null */
  gint socket;    /* VPA_SOCKET_NONE = null; derived from numa_node when grouped by it */
  VpaDevType dev_type;
  gint tagset;     /* index into config->tagsets; -1: the pool's own tags */
  GPtrArray *tags; /* VpaSpecPair*, sorted by key: the pool's own tag set (a fleet
                    * pool's, read back from its JSON), or NULL */
  VpaAddr pf;
  VpaAddr pcie_root;   /* VPA_PCIE_ROOT of its host bridge; VPA_ADDR_NONE = unknown */
  VpaAddr pcie_port;   /* a fleet's free pools: the root port above them, or VPA_ADDR_NONE */
  VpaAddr pcie_switch; /* the switch's upstream port; VPA_ADDR_NONE = not behind one */
  guint total, free, used, blocked;
  guint reserved;     /* kept by a reservation (docs/reservations.md) */
  VpaAddr first_addr; /* lowest member address (for ordering) */
} VpaPool;

/* A pool with no key, unknown NUMA node and socket, no address and no
 * tags. */
VpaPool *vpa_pool_new (void);
/* Frees what the pool owns (host, tags), not the pool. */
void vpa_pool_clear (VpaPool *pool);
void vpa_pool_free (VpaPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaPool, vpa_pool_free)

/* The pool's tags (VpaSpecPair*): its own, else its tag set of config;
 * NULL when it has none (config may be NULL for a pool with its own). */
GPtrArray *vpa_pools_tags (const VpaPool *pool, const VpaConfig *config);
/* The value of the pool's tag key, or NULL. */
const char *vpa_pools_tag (const VpaPool *pool, const VpaConfig *config, const char *key);
/* Tag sets pair by pair, key then value, a prefix first (NULL is the
 * empty set): the order of pools of the same other keys. */
gint vpa_pools_tags_cmp (GPtrArray *a, GPtrArray *b);

/* Pools ordered by (vendor, product, dev_type, numa_node with null last,
 * tags, pf): deterministic whatever the source's device order. The
 * array clears its pools (vpa_pool_clear). */
GArray *vpa_pools_generate (const VpaInventory *inv, VpaPoolKeys keys);

/* NUMA nodes and sockets as pools are ordered by them: unknown (-1)
 * after every known value. */
gint vpa_pools_null_last_cmp (gint a, gint b);

G_END_DECLS
