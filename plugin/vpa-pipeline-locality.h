/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The check of a placed domain's locality groups (docs/placement.md,
 * "Locality groups"): the level its members' devices share now, against
 * the group's level and against what its <vpa:placed> records say.
 * `check` and the hook's prepare/start call it through
 * vpa_pipeline_check().
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-inventory.h"
#include "vpa-pipeline.h"

G_BEGIN_DECLS

/* Appends one VpaCheckResult per locality group of requests (VpaRequest*
 * of dom) whose members' devices are on inv's host: a required group
 * farther than its level is VPA_CHECK_LOCALITY (and *ok becomes FALSE);
 * any other group is VPA_CHECK_OK, its line saying when it is farther
 * than its records say. A group with a member that has no device on
 * this host yet is judged only when the others are already too far
 * apart (the member's own line reports it). */
void vpa_pipeline_check_locality (const VpaInventory *inv, const VpaDomain *dom,
                                  GPtrArray *requests, GPtrArray *results, gboolean *ok);

G_END_DECLS
