/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A claim: a device a domain holds, or the CPUs and memory it holds;
 * and the one claims filter.
 */
#pragma once

#include "vpa-addr.h"
#include "vpa-numa-use.h"

G_BEGIN_DECLS

/* A device held by a domain (a <hostdev> or <interface type='hostdev'>),
 * or (addr VPA_ADDR_NONE, numa set) the CPUs and memory it holds. */
typedef struct {
  char *domain; /* the domain's name */
  VpaAddr addr;
  gboolean running; /* the domain is running (FALSE: defined only) */
  VpaNumaUse *numa; /* NULL for a device claim */
} VpaClaim;

VpaClaim *vpa_claim_new (const char *domain, VpaAddr addr, gboolean running);
/* A claim of CPUs and memory; takes ownership of use. */
VpaClaim *vpa_claim_new_numa (const char *domain, gboolean running, VpaNumaUse *use);
VpaClaim *vpa_claim_copy (const VpaClaim *claim);
void vpa_claim_free (VpaClaim *claim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaClaim, vpa_claim_free)

/* The one claims filter: copies of claims (may be NULL), in order,
 * without those of the domain named exclude (NULL: keeps every domain's;
 * a domain never competes with itself when it is placed again) and, if
 * running_only, without those of domains that are not running. Returns a
 * new array of VpaClaim*. */
GPtrArray *vpa_claim_filter (GPtrArray *claims, const char *exclude, gboolean running_only);

G_END_DECLS
