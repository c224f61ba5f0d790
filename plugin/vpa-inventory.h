/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inventory view: a sealed VpaHost with the configuration's device
 * specs (which devices, which tags) and the claims applied. Pools and
 * placement read only this. Nothing here is stored: it is derived anew
 * from the host and the claims whenever it is needed.
 */
#pragma once

#include "vpa-types.h"
#include "vpa-config.h"
#include "vpa-inventory-model.h"
#include "vpa-domain-model.h"

G_BEGIN_DECLS

/* Takes ownership of host (sealed or not) and of claims (may be NULL: then
 * host->claims are used). Claims naming an address not on the host are
 * kept but change nothing. */
VpaInventory *vpa_inventory_new (VpaHost *host, const VpaConfig *config,
                                 GPtrArray *claims, GError **error);
/* The same for the domain viewer (may be NULL) being placed or checked,
 * whose claims are left out of claims: the reservations of
 * config->reservations are applied for it (vpa_reserve_apply). */
VpaInventory *vpa_inventory_new_for (VpaHost *host, const VpaConfig *config,
                                     GPtrArray *claims, const VpaDomain *viewer,
                                     GError **error);
void vpa_inventory_free (VpaInventory *inv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaInventory, vpa_inventory_free)

/* Marks device i held by domain (placement results, tests) and applies
 * PF/VF exclusivity to its relatives. */
void vpa_inventory_hold (VpaInventory *inv, guint i, const char *domain);

/* Host devices no device spec admits (not assignable). */
guint vpa_inventory_count_unassignable (const VpaInventory *inv);

G_END_DECLS
