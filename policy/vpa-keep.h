/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Keeping or moving: which requests of an already placed domain keep the
 * devices they hold (vpa-keep.c). The rest is placed around them.
 */
#pragma once

#include "vpa-domain-model.h"
#include "vpa-inventory-model.h"
#include "vpa-place.h"

G_BEGIN_DECLS

typedef struct {
  guint n;          /* requests */
  gboolean *keep;   /* per request */
  GArray **devices; /* per request: kept inventory indices */
  char **why;       /* per request: why it moves (NULL if kept or new) */
} VpaKeep;

void vpa_keep_free (VpaKeep *keep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaKeep, vpa_keep_free)

/* Decides, request by request, what stays: a request keeps its devices
 * when every unit's device (the hostdev of its user alias in dom) may
 * stay: on this host, free in inv, admitted by the specs, matching the
 * request, allowed by its policy at its tier for guest, not named twice,
 * not the PF or a VF of another kept device; a pf-group only as a whole,
 * on distinct PFs; a locality group only whole and, when required, still
 * within its level. */
VpaKeep *vpa_keep_decide (const VpaInventory *inv, const VpaDomain *dom,
                          const VpaGuestNodes *guest, GPtrArray *requests);

/* The --explain lines: each kept request with its devices, each one
 * placed again with why. */
void vpa_keep_explain (GString *out, const VpaInventory *inv, GPtrArray *requests,
                       const VpaKeep *keep);

/* VpaAssignment* per request, in request order: the kept requests'
 * devices and, for the others in turn, placement's (which placed only
 * them). */
GPtrArray *vpa_keep_merge (GPtrArray *requests, const VpaKeep *keep,
                           const VpaPlacement *placement);

/* Whether inventory device idx matches one of r's specs. */
gboolean vpa_keep_request_matches (const VpaInventory *inv, guint idx, const VpaRequest *r);

G_END_DECLS
