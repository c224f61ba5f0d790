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
#include "vpa-domain.h"

G_BEGIN_DECLS

typedef enum {
  VPA_DEV_STATE_FREE,     /* assignable */
  VPA_DEV_STATE_HELD,     /* a domain holds it */
  VPA_DEV_STATE_BLOCKED,  /* a PF with a held VF, or a VF whose PF is held */
  VPA_DEV_STATE_RESERVED, /* a reservation keeps it (vpa-reserve-apply.h) */
  VPA_DEV_STATE_LAST
} VpaDevState;

const char *vpa_dev_state_to_string (VpaDevState state);

typedef struct {
  VpaHost *host;           /* owned */
  const VpaConfig *config; /* borrowed: must outlive the inventory */
  gint *tagset;            /* per device: tag set id, -1 when no spec matches */
  guint8 *state;           /* per device: VpaDevState */
  const char **held_by;    /* per device: holding domain (into claims), or NULL */
  GPtrArray *claims;       /* VpaClaim*, owned */
  guint n_devices;         /* devices in the inventory (tagset >= 0) */
} VpaInventory;

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

static inline gboolean
vpa_inventory_has (const VpaInventory *inv, guint i)
{
  return inv->tagset[i] >= 0;
}

/* Nova's pool view of device i: "vendor_id", "product_id", "dev_type",
 * "numa_node" (never matches a string, as in Nova: returns NULL),
 * "parent_ifname" (a VF's PF netdev), the device spec's tags, and the
 * implicit "remote_managed" = "false" for VFs and PFs. NULL when absent. */
const char *vpa_inventory_prop (const VpaInventory *inv, guint i, const char *key);

/* Ours, not Nova's: a VF's PF netdev whether or not the VF has a netdev
 * of its own (parent_ifname needs one); restricts a port to the PFs of
 * libvirt hostdev networks (vpa-netpool.c). */
#define VPA_PROP_PF_NETDEV "vpa:pf_netdev"

/* Nova's pci_device_prop_match of device i against one spec dict. */
gboolean vpa_inventory_spec_match (const VpaInventory *inv, guint i,
                                   const VpaSpec *spec);

/* Marks device i held by domain (placement results, tests) and applies
 * PF/VF exclusivity to its relatives. */
void vpa_inventory_hold (VpaInventory *inv, guint i, const char *domain);

G_END_DECLS
