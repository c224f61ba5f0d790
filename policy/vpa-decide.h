/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * From a placement to its decisions (VpaDecision, vpa-plan.h): one per
 * placed device, as the rewrite records them. policy/ makes them once;
 * nothing edits them afterwards.
 */
#pragma once

#include "vpa-plan.h"
#include "vpa-place.h"

G_BEGIN_DECLS

/* VpaDecision* (owned) of every device of assignments (VpaAssignment*,
 * request order; NULL: none), alias devices numbered per alias name
 * across requests. networks: per inventory device, the libvirt hostdev
 * network its PF serves (NULL entries: none), for the ports of dom on an
 * <interface type='network'>; NULL without the networks (the hook): such
 * a port then keeps what its <vpa:placed network> record says, and the
 * decisions come in request order (aliases, then ports as the document
 * lists them), as the records were written. */
GPtrArray *vpa_decide (const VpaInventory *inv, GPtrArray *assignments, const VpaDomain *dom,
                       const char *const *networks);

G_END_DECLS
