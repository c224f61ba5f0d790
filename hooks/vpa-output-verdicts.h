/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hook's verdict counters (plugin/vpa-verdict.h) as OpenMetrics and
 * as the text `status` shows.
 */
#pragma once

#include "vpa-output-ops.h"
#include "vpa-verdict.h"

/* The counter virt_pci_affinity_hook_verdicts_total (named with its
 * suffix, as the text format node_exporter and promtool read wants): one
 * sample for every op, verdict and
 * reason, zeros included, so that a series exists before it first
 * moves. */
char *vpa_output_verdicts_openmetrics (const VpaVerdictCounts *c);

/* "N refused, M would-refuse" and one line per recent verdict, newest
 * first, each indented by two spaces. */
char *vpa_output_verdicts_text (const VpaVerdictCounts *c);

/* Adds the family to m when STATE_DIR/verdicts exists (the hook writes
 * it at its first refusal or would-refuse); FALSE with error when it
 * exists but cannot be read. */
gboolean vpa_output_verdicts_add (VpaMetrics *m, const char *state_dir, GError **error);
