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
  gboolean numa_guest;      /* FALSE: policies do not apply */
  const gint *nodes;        /* host nodes, sorted; n_nodes 0 = unbound */
  guint n_nodes;
} VpaGuestNodes;

VpaTier vpa_policy_tier (const VpaHost *host, const VpaGuestNodes *guest,
                         gint dev_numa_node);

/* Whether policy allows a device of this tier for this guest (Nova's
 * NOVA-SEMANTICS 3.2/3.3 sets; socket also needs every host cell to have
 * a socket). */
gboolean vpa_policy_allows (VpaPolicy policy, const VpaHost *host,
                            const VpaGuestNodes *guest, VpaTier tier);

/* "affine", "socket", "unknown", "remote" */
const char *vpa_tier_to_string (VpaTier tier);

/* Why policy refuses a device on dev_numa_node, as one phrase for
 * messages ("node 1 is not the guest's (0)"); NULL when it allows it. */
char *vpa_policy_refusal (VpaPolicy policy, const VpaHost *host,
                          const VpaGuestNodes *guest, gint dev_numa_node);

G_END_DECLS
