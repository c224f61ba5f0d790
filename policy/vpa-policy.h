/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NUMA affinity policy: precedence, which devices a policy allows, and
 * how they rank. Pure functions: no I/O, no XML.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

/* Precedence: port > flavor = image > alias > legacy. Flavor and image
 * that differ is VPA_ERROR_INVALID (Nova's ImagePCINUMAPolicyForbidden). */
gboolean vpa_policy_resolve (const VpaPolicy *port, const VpaPolicy *flavor,
                             const VpaPolicy *image, const VpaPolicy *alias,
                             VpaPolicy *out, VpaPolicySource *out_source,
                             GError **error);

/* How close a device is to the guest. Lower is better. */
typedef enum {
  VPA_TIER_AFFINE,  /* on one of the guest's host nodes */
  VPA_TIER_SOCKET,  /* on a node of a socket that holds a guest node */
  VPA_TIER_UNKNOWN, /* no NUMA information */
  VPA_TIER_REMOTE,  /* anywhere else */
  VPA_TIER_LAST
} VpaTier;

/* The guest as the policy sees it. */
typedef struct {
  gboolean numa_guest; /* FALSE: policies do not apply */
  const gint *nodes;   /* host nodes, sorted; n_nodes 0 = unbound */
  guint n_nodes;
} VpaGuestNodes;

VpaTier vpa_policy_tier (const VpaHost *host, const VpaGuestNodes *guest,
                         gint dev_numa_node);

#define VPA_TIER_BIT(tier) (1u << (tier))
#define VPA_TIER_ALL (VPA_TIER_BIT (VPA_TIER_LAST) - 1)

/* One step of Nova's widening (docs/nova.md, "NUMA affinity policies"):
 * the tiers a request may take devices from, and of those the tiers
 * whose devices go first (Nova sorts only its last, "preferred" step;
 * elsewhere the order is the pools'). */
typedef struct {
  guint tiers; /* VPA_TIER_BIT()s */
  guint first; /* VPA_TIER_BIT()s, a subset of tiers */
} VpaPolicyStep;

#define VPA_POLICY_STEPS_MAX 3

/* Nova's _filter_pools_for_numa_cells as data: the steps, strictest
 * first, into steps[VPA_POLICY_STEPS_MAX]; returns how many. A request
 * uses the first step whose devices are enough for it, else the last. A
 * guest without NUMA cells, or not bound to host nodes, has one step of
 * every tier (Nova filters nothing without cells). */
guint vpa_policy_steps (VpaPolicy policy, const VpaHost *host,
                        const VpaGuestNodes *guest, VpaPolicyStep *steps);

/* Whether policy allows a device of this tier for this guest: the union
 * of its steps (a guest not bound to host nodes: only the policies that
 * can fall back to any node). */
gboolean vpa_policy_allows (VpaPolicy policy, const VpaHost *host,
                            const VpaGuestNodes *guest, VpaTier tier);

/* oslo's bool_from_string, which Nova applies to a remote_managed tag
 * or request value: "1", "t", "true", "on", "y", "yes", any case. */
gboolean vpa_policy_truthy (const char *value);

/* Whether a request's dev_type value asks for a PF: Nova compares with
 * ==, not case-folded, so only "type-PF". */
gboolean vpa_policy_wants_pf (const char *dev_type);

/* "affine", "socket", "unknown", "remote" */
const char *vpa_tier_to_string (VpaTier tier);

/* Why policy refuses a device on dev_numa_node, as one phrase for
 * messages ("node 1 is not the guest's (0)"); NULL when it allows it. */
char *vpa_policy_refusal (VpaPolicy policy, const VpaHost *host,
                          const VpaGuestNodes *guest, gint dev_numa_node);

G_END_DECLS
