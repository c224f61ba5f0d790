/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a request asks for beyond its specs' values: Nova's rules on the
 * devices a request must name to get them.
 */
#pragma once

#include "vpa-request.h"

G_BEGIN_DECLS

/* Nova hides PFs and remote-managed devices from a request that does not
 * ask for them (docs/nova.md, "Devices a request did not ask for"): whether
 * some spec of req has dev_type 'type-PF', or a truthy remote_managed. */
gboolean vpa_request_wants_pf (const VpaRequest *req);
gboolean vpa_request_wants_remote_managed (const VpaRequest *req);

G_END_DECLS
