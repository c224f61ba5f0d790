/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `config check`: what the loader accepts but an operator most likely did
 * not mean, one finding a line. The text checks (duplicate groups,
 * near-miss keys) need only the file; the inventory checks (specs that
 * match no device, aliases no device can satisfy) need the host.
 */
#pragma once

#include "vpa-config.h"
#include "vpa-inventory.h"

G_BEGIN_DECLS

typedef enum {
  VPA_LINT_NOTE,    /* informational: does not change the exit status */
  VPA_LINT_WARNING, /* exit 1 */
  VPA_LINT_ERROR,   /* exit 2 */
} VpaLintLevel;

typedef struct {
  VpaLintLevel level;
  char *line; /* "FILE:LINE: error: ..." */
} VpaLintFinding;

void vpa_lint_finding_free (VpaLintFinding *f);

/* The text checks over the raw file doc (doc->what is the path the
 * findings name): a group written twice (GKeyFile merges them: the
 * first one's keys are lost or mixed), and in [device-spec] groups a key
 * that is a near miss of a known one (`adress`, `phyiscal-network`: it
 * would become a tag and the spec match far more than meant). Appends
 * VpaLintFinding* to findings. Shareable with the loader: a finding at
 * ERROR level is what it should refuse. */
void vpa_config_lint_text (const VpaDoc *doc, GPtrArray *findings);

/* The inventory checks: device specs that admit no device of inv (first
 * match wins, so a spec shadowed by an earlier one counts as none),
 * aliases no inventory device can satisfy, and the settings only the
 * hook reads ([inventory], [claims]). */
void vpa_config_lint_inventory (const VpaConfig *config, const VpaInventory *inv,
                                const char *data, gsize len, GPtrArray *findings);

/* The highest level among findings, or -1 when there are none. */
gint vpa_config_lint_worst (GPtrArray *findings);

G_END_DECLS
