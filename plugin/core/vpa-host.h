/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host an inventory source fills: its devices, NUMA cells and
 * claims, sealed (sorted, indexed, VFs linked to their PFs) before it is
 * read. vpa-types.h includes this header at its end (it needs
 * VpaDevice from there), so every file that includes vpa-types.h sees
 * the host.
 */
#pragma once

#include "vpa-types.h"
#include "vpa-cell.h"
#include "vpa-claim.h"

G_BEGIN_DECLS

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

/* The distance between two nodes from the host's matrix: 10 for a node
 * to itself, G_MAXUINT when unknown. */
guint vpa_host_distance (const VpaHost *host, gint from, gint to);

G_END_DECLS
