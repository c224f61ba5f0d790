/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A host's NUMA cells: their CPUs with their topology, memory, pages
 * and distances to the other nodes, as the sources fill them.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

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

/* Computes a cell's socket by Nova's rule: the one socket_id all its
 * CPUs share; VPA_SOCKET_NONE for an empty cell, mixed sockets, or a CPU
 * without a socket id (pass -1 for those). */
gint vpa_cell_socket_from_cpu_sockets (const gint *sockets, guint n);

/* The cell's pages of size_kib, or NULL. */
const VpaPages *vpa_cell_pages (const VpaCell *cell, guint64 size_kib);

G_END_DECLS
