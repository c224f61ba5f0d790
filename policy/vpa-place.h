/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Placement: every request of a domain assigned together over the
 * inventory, honouring each request's effective NUMA policy.
 */
#pragma once

#include "vpa-inventory-model.h"
#include "vpa-policy.h"
#include "vpa-request.h"

G_BEGIN_DECLS

/* Why a candidate pool was taken or refused, for --explain and errors. */
typedef struct {
  char *pool; /* "8086:1889 type-VF physnet1 PF 0000:81:00.0" */
  gint numa_node;
  gint socket;
  guint free;
  VpaTier tier;
  guint taken;
  char *verdict; /* "taken 2", "refused: node 1 is not the guest's (required)" */
} VpaCandidate;

typedef struct {
  const VpaRequest *request;
  GArray *devices;       /* guint inventory indices chosen, count of them */
  GPtrArray *candidates; /* VpaCandidate* */
} VpaAssignment;

/* Where a locality group ended, for --explain and <vpa:placed>. */
typedef struct {
  char *name;
  VpaLocality level; /* asked */
  gboolean required;
  VpaLocality reached; /* the closest level holding all its members' devices */
  char *where;         /* "switch 0000:16:00.0 (root port 0000:15:01.0)", "host bridge
                        * pci0000:15", "NUMA node 0", "socket 0"; "-" for system */
  char *why;           /* why no closer level, or NULL */
  GArray *devices;     /* guint host indices of its members' devices, request
                        * order (their topology rows: vpa-locality-rows.h) */
} VpaGroupPlacement;

typedef struct {
  GPtrArray *assignments; /* VpaAssignment*, one per request, request order */
  GPtrArray *groups;      /* VpaGroupPlacement*, one per locality group; NULL if none */
  guint locality_solves;  /* solver runs the locality search took */
} VpaPlacement;

void vpa_placement_free (VpaPlacement *placement);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaPlacement, vpa_placement_free)

/* Assigns all requests together. On failure VPA_ERROR_UNSATISFIABLE with
 * one line naming the request, its policy and source, and why each
 * candidate pool was refused; explain (if not NULL) then still receives
 * the candidates. Does not change inv. */
VpaPlacement *vpa_place (const VpaInventory *inv, GPtrArray *requests,
                         const VpaGuestNodes *guest, GError **error);

/* vpa_place() that also hands out the candidates on failure: *explain
 * (if explain is not NULL) receives a placement whose assignments hold
 * the candidates and no devices. */
VpaPlacement *vpa_place_explain (const VpaInventory *inv, GPtrArray *requests,
                                 const VpaGuestNodes *guest, VpaPlacement **explain,
                                 GError **error);

void vpa_candidate_free (VpaCandidate *cand);

/* The closest level holding the devices of every request of the group. */
VpaLocality vpa_locality_placement_group (const VpaInventory *inv,
                                          const VpaPlacement *placement, const char *group);
/* The same over assignments (VpaAssignment*), e.g. kept and new ones. */
VpaLocality vpa_locality_assignments_group (const VpaInventory *inv, GPtrArray *assignments,
                                            const char *group);
/* The same placement run repeatedly for different guest node sets over
 * one inventory and one request list (both borrowed, kept alive by the
 * caller): the device classes are built once. Whole-guest NUMA
 * placement (vpa-fit.h) tries several node sets. */
typedef struct _VpaPlacer VpaPlacer;

VpaPlacer *vpa_placer_new (const VpaInventory *inv, GPtrArray *requests);
void vpa_placer_free (VpaPlacer *placer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaPlacer, vpa_placer_free)
/* vpa_place_explain() for guest; the guest is only borrowed during the
 * call. */
VpaPlacement *vpa_place_run (VpaPlacer *placer, const VpaGuestNodes *guest,
                             VpaPlacement **explain, GError **error);
/* Whether some free device of the inventory is on node. */
gboolean vpa_place_has_classes (const VpaPlacer *placer, gint node);

G_END_DECLS
