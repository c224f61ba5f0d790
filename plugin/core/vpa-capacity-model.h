/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What each host NUMA node can still give a guest: its CPUs (shared and
 * dedicated, less those other domains pin), its memory and its pages
 * per size, after the [host] reservations and the other domains' claims
 * (docs/placement.md, "Whole-guest NUMA placement"). vpa-capacity.h
 * (plugin/) counts it; the whole-guest fit (policy/) reads it.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

typedef struct {
  guint64 size_kib;
  guint64 total;
  guint64 reserved; /* [host] reserved-huge-pages */
  guint64 claimed;  /* bound by other domains */
  guint64 avail;    /* min (total - reserved - claimed, free) */
} VpaNodePages;

typedef struct {
  gint node;
  gint socket;
  guint n_cpus;           /* online CPUs */
  GArray *shared;         /* guint: shared CPUs not pinned dedicated by others */
  GArray *dedicated;      /* guint: the node's CPUs of cpu-dedicated-set */
  GArray *free_dedicated; /* guint: of those, not pinned by another domain */
  GArray *free_groups;    /* guint, parallel: thread-sibling group of each */
  guint threads_per_core; /* most threads of one core among dedicated CPUs */
  guint64 memory_kib;     /* ordinary memory: total less hugepages */
  guint64 reserved_kib;
  guint64 claimed_kib;
  guint64 avail_kib;
  GArray *pages;     /* VpaNodePages, hugepage sizes only, ascending */
  guint shared_used; /* shared vCPUs other guests run there: Nova's
                      * cpu_usage; 0 (the project does not count them) */
  guint shared_room; /* most shared vCPUs one cell may add (G_MAXUINT: no
                      * limit but the shared set's size) */
} VpaNodeCap;

/* Frees a node's capacity and its arrays. */
void vpa_node_cap_free (VpaNodeCap *nc);

typedef struct {
  GPtrArray *nodes; /* VpaNodeCap*, ascending node id */
} VpaCapacity;

void vpa_capacity_free (VpaCapacity *cap);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaCapacity, vpa_capacity_free)

const VpaNodeCap *vpa_capacity_model_node (const VpaCapacity *cap, gint node);
const VpaNodePages *vpa_capacity_model_node_pages (const VpaNodeCap *nc, guint64 size_kib);

G_END_DECLS
