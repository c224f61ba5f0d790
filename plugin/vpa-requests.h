/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A domain's vpa:affinity metadata turned into placement requests, as
 * Nova builds InstancePCIRequests: flavor aliases first, then ports.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-config.h"
#include "vpa-request.h"
#include "vpa-request-wants.h"

G_BEGIN_DECLS

/* VpaRequest* (free with vpa_request_free): one per alias entry of the
 * flavor (in flavor order), then one per <vpa:device>, then one per port
 * (both in document order), each
 * with its effective policy and where it came from. VPA_ERROR_INVALID for
 * an unknown alias or a flavor/image policy conflict. */
GPtrArray *vpa_requests_from_domain (const VpaDomain *dom, const VpaConfig *config,
                                     GError **error);

G_END_DECLS
