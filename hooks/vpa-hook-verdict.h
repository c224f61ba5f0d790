/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hook's answer to a failed check or re-placement (docs/hook.md,
 * "Audit mode and the trace of every verdict"): refuse, or in audit mode
 * let it through; either way one log line and one count.
 */
#pragma once

#include "vpa-config.h"
#include "vpa-verdict.h"

typedef struct {
  const char *guest;
  VpaVerdictOp op;
  const char *xml; /* the domain document, for its mode */
  gsize len;
  const VpaConfig *config; /* NULL: it could not be read (enforce) */
  VpaVerdictReason reason;
  gboolean auditable; /* FALSE: refused whatever the mode */
} VpaHookVerdict;

/* Prints the line libvirt shows (refused) or a warning (audit), logs and
 * counts the verdict; returns the hook's exit status, 1 or 0. */
int vpa_hook_verdict (const VpaHookVerdict *v, const char *message);
