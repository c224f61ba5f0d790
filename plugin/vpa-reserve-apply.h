/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reserved devices in the inventory (docs/reservations.md): which
 * devices the reservations of the state file (vpa-reserve.h) keep from
 * whom, and what the hook records when a domain starts with a
 * one-time-use device.
 *
 * A reservation makes its device VPA_DEV_STATE_RESERVED (never handed
 * out, counted apart from used) unless a one-time-use device is still
 * named by the domain that started with it: that domain holds it (used),
 * may keep it when placed again and may start with it again. Like a
 * held device, a reserved one makes its relatives unavailable (a PF's
 * VFs, a VF's PF as a whole).
 */
#pragma once

#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-inventory.h"
#include "vpa-reserve.h"

G_BEGIN_DECLS

/* Reads config's [hook] state-dir reservations into config->reservations
 * (replacing any read before). An error when they cannot be read: whoever
 * hands devices out then stops (fails closed). */
gboolean vpa_reserve_apply_load (VpaConfig *config, GError **error);

/* Applies inv->config->reservations (none when NULL) to inv, whose claims
 * are applied already. viewer (may be NULL) is the domain being placed or
 * checked, whose claims the inventory leaves out: its own one-time-use
 * devices that it still names (its hostdevs) stay free for it. */
void vpa_reserve_apply (VpaInventory *inv, const VpaDomain *viewer);

/* Makes device i reserved as a reservation does (its free relatives
 * blocked): for an inventory whose reservations are known otherwise
 * (the fleet's rows). */
void vpa_reserve_apply_one (VpaInventory *inv, guint i);

/* The reservation that makes device i reserved, or NULL. */
const VpaReservation *vpa_reserve_apply_of (const VpaInventory *inv, guint i);

/* The addresses of dom's devices on host that a one-time-use device spec
 * admits and that have no reservation yet: what the hook records when
 * the domain starts. Seals host. */
GArray *vpa_reserve_apply_wanted (const VpaConfig *config, VpaHost *host, const VpaDomain *dom,
                                  GError **error);

/* Records addrs (VpaAddr) as one-time-use devices dom started with, at
 * now, in config's state directory (vpa_reserve_set_update): those
 * without a reservation only. Nothing is read or written when addrs is
 * empty. */
gboolean vpa_reserve_apply_record (const VpaConfig *config, const VpaDomain *dom,
                                   const GArray *addrs, gint64 now, GError **error);

G_END_DECLS
