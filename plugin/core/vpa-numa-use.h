/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a domain pins and binds on the host's NUMA nodes: the CPUs no
 * dedicated guest may take and the memory bound to each node.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

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

VpaNumaUse *vpa_numa_use_new (void);
/* Whether cpu is one no dedicated guest may take: in dedicated or in
 * pinned (both ascending: a binary search each). */
gboolean vpa_numa_use_holds (const VpaNumaUse *use, guint cpu);
void vpa_numa_use_free (VpaNumaUse *use);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaNumaUse, vpa_numa_use_free)

G_END_DECLS
