/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The pipeline's own helpers, defined in vpa-pipeline.c (place) and
 * shared with check (vpa-pipeline-check.c) and attach
 * (vpa-pipeline-attach.c). Not for other files.
 */
#pragma once

#include "vpa-pipeline.h"
#include "vpa-place.h"
#include "vpa-bind.h"

G_BEGIN_DECLS

/* The guest's NUMA nodes as bind (vpa-bind.h, of dom) has them; guest
 * borrows bind's nodes. */
void vpa_pipeline_guest_from_domain (const VpaDomain *dom, const VpaBind *bind,
                                     VpaGuestNodes *guest);
/* The guest's nodes for messages: "0,1", "unbound" or "none (...)". */
char *vpa_pipeline_format_nodes (const VpaGuestNodes *guest);
/* Without a device spec nothing is assignable (Nova's empty whitelist):
 * VPA_ERROR_UNSATISFIABLE saying so when there are requests. */
gboolean vpa_pipeline_config_admits_devices (const VpaConfig *config, GPtrArray *requests,
                                             GError **error);

G_END_DECLS
