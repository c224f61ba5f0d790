/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whole-guest placement's last decisions (docs/domain-xml.md): the fit's
 * cells keep their recorded CPUs while those are free, the emulator
 * threads get their CPUs, and the binding the rewrite writes
 * (VpaNumaBinding, vpa-plan.h) is made. Final when vpa_fit_bind returns.
 */
#pragma once

#include "vpa-fit.h"
#include "vpa-plan.h"

G_BEGIN_DECLS

/* The recorded host node of each of cells (VpaFitCell), from dom's
 * <vpa:placed-cell>s, when every cell has a record; else NULL. */
gint *vpa_fit_bind_recorded_nodes (const VpaDomain *dom, const GArray *cells);

/* Finishes fit, a fit of dom on cap, and fills out (the caller frees its
 * arrays): sticky (the recorded nodes were kept): a dedicated cell whose
 * recorded CPUs are all still free keeps them, and isolate's recorded
 * emulator CPU while free and clear of the cell's; vcpus (per cell, a
 * GArray of guint guest vCPUs, referenced) the guest's cells' vCPUs. The
 * emulator threads: isolate's CPU on cell 0, share's the host's shared
 * CPUs (none: VPA_ERROR_UNSATISFIABLE), else every cell's CPUs. */
gboolean vpa_fit_bind (const VpaDomain *dom, const VpaCapacity *cap, VpaFit *fit, gboolean sticky,
                       GPtrArray *vcpus, VpaNumaBinding *out, GError **error);

G_END_DECLS
