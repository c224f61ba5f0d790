/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups outside a whole placement (docs/placement.md,
 * "Locality groups"): attach --locality-group, a hot-plugged port
 * joining a group whose other members are already placed (their devices
 * stay; the port's candidates are narrowed to those close enough), and
 * the check of a placed domain's groups (the level its members' devices
 * share now, against the group's level and its <vpa:placed> records).
 */
#pragma once

#include "vpa-domain-model.h"
#include "vpa-inventory-model.h"
#include "vpa-locality.h"

G_BEGIN_DECLS

/* The free devices (ascending host indices) matching r that r's group
 * rules out: for a required group those farther from the members'
 * devices (dom's <vpa:placed> records of the group) than its level; for
 * a preferred one those farther than the closest level a candidate
 * reaches. Empty when the group has no placed member on this host. The
 * caller holds them (holding a PF also blocks its VFs). */
GArray *vpa_locality_judge_excluded (const VpaInventory *inv, const VpaDomain *dom,
                                     const VpaRequest *r);

/* The level the group's placed members and device i share. */
VpaLocality vpa_locality_judge_reached (const VpaInventory *inv, const VpaDomain *dom,
                                        const VpaRequest *r, guint i);

/* What a placed group's members hold now, as gathered. */
typedef struct {
  GArray *devices;     /* guint host indices */
  const char *members; /* "ua-gpu0 0000:1a:00.0, ua-rdma0 0000:3b:00.1" */
  guint missing;       /* members without a device on this host */
  gint recorded;       /* the closest level its <vpa:placed> records say, -1: none */
} VpaLocalityGroupNow;

typedef struct {
  gboolean refused; /* a required group farther than its level */
  gboolean note;    /* within its policy, farther than its records say */
  char *line;
} VpaLocalityVerdict;

void vpa_locality_verdict_free (VpaLocalityVerdict *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaLocalityVerdict, vpa_locality_verdict_free)

/* The verdict on group g of host's devices now, or NULL when it cannot be
 * judged yet: a group with a member that has no device on this host is
 * judged only when the others are already too far apart (the member's
 * own line reports it). */
VpaLocalityVerdict *vpa_locality_judge_group (const VpaHost *host,
                                              const VpaLocalityGroupState *g,
                                              const VpaLocalityGroupNow *now);

G_END_DECLS
