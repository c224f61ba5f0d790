/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whole-guest NUMA placement inside the pipeline: from a parsed domain
 * with <vpa:numa placement="auto"> to the fit and the binding to write.
 */
#pragma once

#include "vpa-fit.h"
#include "vpa-domain.h"
#include "vpa-rewrite.h"

G_BEGIN_DECLS

typedef struct {
  VpaFit *fit;            /* cells -> nodes, CPUs; devices */
  VpaNumaBinding binding; /* what to write */
  GArray *nodes;          /* gint, the guest's host nodes (borrowed from fit) */
} VpaNumaResult;

void vpa_numa_result_free (VpaNumaResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaNumaResult, vpa_numa_result_free)

/* The fit's cells (VpaFitCell) of a parsed domain: its <cpu><numa>
 * cells, or one implicit cell of every vCPU and the whole memory. Each
 * cell's vCPU array is added to vcpus_out, which owns it (free func
 * g_array_unref). */
GArray *vpa_pipeline_numa_cells (const VpaDomain *dom, GPtrArray *vcpus_out);

/* Checks the domain's whole-guest request (a hand-written binding is
 * VPA_ERROR_INVALID) and fits it on inv's host with claims (the domain's
 * own are ignored) and requests. A recorded binding still valid is kept
 * (sticky). explain (if not NULL) receives the per-cell report. */
VpaNumaResult *vpa_pipeline_numa_fit (const VpaDomain *dom, const VpaInventory *inv,
                                      const VpaConfig *config, GPtrArray *claims,
                                      GPtrArray *requests, GString *explain, GError **error);

G_END_DECLS
