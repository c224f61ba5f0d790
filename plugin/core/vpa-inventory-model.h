/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inventory as every layer reads it: a sealed VpaHost, the tag set
 * each device spec gave each device, and which devices the claims hold
 * or block. vpa-inventory.h (plugin/) builds it from the configuration
 * and the claims; pools read it and policy/ decides over it.
 */
#pragma once

#include "vpa-types.h"
#include "vpa-spec.h"

G_BEGIN_DECLS

typedef enum {
  VPA_DEV_STATE_FREE,     /* assignable */
  VPA_DEV_STATE_HELD,     /* a domain holds it */
  VPA_DEV_STATE_BLOCKED,  /* a PF with a held VF, or a VF whose PF is held */
  VPA_DEV_STATE_RESERVED, /* a reservation keeps it (plugin/vpa-reserve-apply.h) */
  VPA_DEV_STATE_LAST
} VpaDevState;

const char *vpa_dev_state_to_string (VpaDevState state);

/* The configuration the inventory was built with (vpa-config.h); only
 * plugin/ and above look inside it. */
typedef struct _VpaConfig VpaConfig;

typedef struct {
  VpaHost *host;           /* owned */
  const VpaConfig *config; /* borrowed: must outlive the inventory */
  GPtrArray *tagsets;      /* borrowed from config: GPtrArray* of VpaSpecPair*
                            * per tag set id; [0] is the empty set */
  gint *tagset;            /* per device: tag set id, -1 when no spec matches */
  guint8 *state;           /* per device: VpaDevState */
  const char **held_by;    /* per device: holding domain (into claims), or NULL */
  GPtrArray *claims;       /* VpaClaim*, owned */
  guint n_devices;         /* devices in the inventory (tagset >= 0) */
} VpaInventory;

static inline gboolean
vpa_inventory_has (const VpaInventory *inv, guint i)
{
  return inv->tagset[i] >= 0;
}

/* Nova's pool view of device i: "vendor_id", "product_id", "dev_type",
 * "numa_node" (never matches a string, as in Nova: returns NULL),
 * "parent_ifname" (a VF's PF netdev), the device spec's tags, and the
 * implicit "remote_managed" = "false" for VFs and PFs. NULL when absent. */
const char *vpa_inventory_model_prop (const VpaInventory *inv, guint i, const char *key);

/* Ours, not Nova's: a VF's PF netdev whether or not the VF has a netdev
 * of its own (parent_ifname needs one); restricts a port to the PFs of
 * libvirt hostdev networks (vpa-netpool.c). */
#define VPA_PROP_PF_NETDEV "vpa:pf_netdev"

/* Nova's pci_device_prop_match of device i against one spec dict. */
gboolean vpa_inventory_model_spec_match (const VpaInventory *inv, guint i, const VpaSpec *spec);

G_END_DECLS
