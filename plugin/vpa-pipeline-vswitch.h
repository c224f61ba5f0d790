/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NUMA-aware vSwitch ports in the pipeline (docs/vswitch.md): the
 * guest's network rules for the whole-guest fit, and the check of a
 * bound guest against them (`check`, the hook's prepare).
 */
#pragma once

#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-fit.h"
#include "vpa-pipeline.h"
#include "vpa-bind.h"

G_BEGIN_DECLS

/* VpaNetRule* of every vSwitch port, and every SR-IOV port with a
 * physnet (as in Nova), whose network has [physnet]/[tunnel] affinity in
 * config; the effective policy is the port's, else the flavor's or the
 * image's, else legacy. Empty when none. */
GPtrArray *vpa_pipeline_net_rules (const VpaDomain *dom, const VpaConfig *config);

/* A NUMA guest, bound by bind (vpa-bind.h), against its network rules, one VpaCheckResult per
 * rule appended to results: a hard rule no host node of the guest meets
 * is VPA_CHECK_POLICY (naming the port, the network and the nodes), a
 * preferred one a note. [physnet]/[tunnel] nodes host lacks are
 * VPA_ERROR_INVALID. */
gboolean vpa_pipeline_check_vswitch (const VpaHost *host, const VpaConfig *config,
                                     const VpaDomain *dom, const VpaBind *bind,
                                     GPtrArray *results, gboolean *ok, GError **error);

G_END_DECLS
