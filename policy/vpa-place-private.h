/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Placement's own state, shared by the classes (vpa-place-classes.c),
 * the solver (vpa-place.c) and the diagnosis of a failure
 * (vpa-explain.c). Not for other files.
 */
#pragma once

#include "vpa-place.h"
#include "vpa-locality.h"

G_BEGIN_DECLS

typedef struct {
  guint rep;            /* lowest host index in the class */
  const VpaDevice *dev; /* the representative device */
  gint tagset;
  gint numa_node;
  VpaAddr pf_addr;     /* VF: its PF; PF and PCI: itself */
  gboolean has_netdev; /* VF: gives it a parent_ifname */
  guint pf_id;         /* small id of pf_addr, for pf-groups */
  gint pf_class;       /* VF: the class of its PF when that is in the inventory */
  gboolean pf_whole;   /* VF: its PF is in the inventory and free */
  gboolean remote_managed;
  gint pcie_port;    /* with locality groups: root port index, else -1 */
  VpaAddr pcie_root; /* with locality groups: host bridge, else VPA_ADDR_NONE */
  GArray *free_devs; /* guint host indices, ascending */
  guint n_held, n_blocked, n_reserved;
  VpaTier tier;
  guint dist;        /* socket/remote tier: distance to the nearest guest
                      * node less 10 (VPA_PLACE_DIST_MAX unknown); else 0 */
  char *label;       /* "8086:1889 type-VF physnet1 PF 0000:81:00.0" */
  char *short_label; /* "8086:1889 physnet1 on node 1" */
} PlaceClass;

typedef enum {
  ELIG_NONE, /* no spec matches: not a candidate */
  ELIG_OK,
  ELIG_NO_PF,    /* a PF the request does not ask for */
  ELIG_NO_RM,    /* remote-managed, not requested */
  ELIG_POLICY,   /* the NUMA policy refuses it */
  ELIG_LOCALITY, /* outside the domain chosen for the request's locality group */
} Elig;

typedef struct {
  const VpaInventory *inv;
  const VpaHost *host;
  GPtrArray *requests;
  const VpaGuestNodes *guest;
  GPtrArray *classes; /* PlaceClass*, by lowest member address */
  guint n_req, n_cls, n_pf_ids;
  guint8 *elig;       /* n_req * n_cls of Elig */
  gboolean *wants_pf; /* per request: some spec asks for type-PF */
  gint *group;        /* per request: pf-group id, or -1 */
  guint n_groups;
  gboolean *pf_wanted; /* per class (PFs): some request may take this PF */
  gboolean *vf_wanted; /* per class (PFs): some request may take one of its VFs */
  gint64 w_tier, w_dist, w_pen, w_rank;
  gboolean split_pcie; /* some request is in a locality group */
  guint8 *elig_base;   /* elig before the locality search's masks */
  GPtrArray *lgroups;  /* VpaLocalityGroupState*, or NULL */
  guint solves;        /* solver runs of the locality search */
} Place;

#define VPA_PLACE_DIST_MAX 254

/* vpa-place-classes.c: */

/* Frees what the build functions below allocate. */
void vpa_place_clear (Place *pl);
/* Frees what is built from the classes for one guest (eligibility,
 * demand, groups), keeping the classes: before building them again. */
void vpa_place_clear_derived (Place *pl);
/* The classes of the inventory's free devices (once per placer). */
void vpa_place_build_classes (Place *pl);
/* Which request may use which class, for pl->guest. */
void vpa_place_build_eligibility (Place *pl);
/* Which PFs, or their VFs, some request may take. */
void vpa_place_build_demand (Place *pl);
/* The flow's lexicographic weights. */
void vpa_place_weights (Place *pl);

/* Sets the class's tier and distance for pl->guest. */
void vpa_place_class_set_tier (const Place *pl, PlaceClass *c);

/* What one strategy has left and taken. */
typedef struct {
  gint64 *cap;          /* per class: free devices left */
  gboolean *broken;     /* per class (PFs): one of its VFs was taken */
  guint *alloc;         /* n_req * n_cls: devices of the class per request */
  gboolean *group_used; /* n_groups * n_pf_ids: a group member has this PF */
  gint64 cost;
} PlaceState;

#define ELIG(pl, r, c) ((Elig) (pl)->elig[(gsize) (r) * (pl)->n_cls + (c)])
#define ALLOC(pl, st, r, c) ((st)->alloc[(gsize) (r) * (pl)->n_cls + (c)])
#define CLASS(pl, c) ((PlaceClass *) g_ptr_array_index ((pl)->classes, (c)))
#define REQ(pl, r) ((const VpaRequest *) g_ptr_array_index ((pl)->requests, (r)))

void vpa_place_state_free (PlaceState *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PlaceState, vpa_place_state_free)

/* An empty list of request indices (GArray of guint). */
GArray *vpa_place_req_list_new (void);

/* The best placement of the requests subset[0..n), or NULL. */
PlaceState *vpa_place_solve (const Place *pl, const guint *subset, guint n, gboolean groups);

/* vpa-explain.c: */

/* Names the first request, group or competition that makes it fail. */
char *vpa_explain_diagnose (const Place *pl);

/* Every candidate pool of request r and its verdict (VpaCandidate*); st
 * NULL for a failed placement. */
GPtrArray *vpa_explain_candidates (const Place *pl, guint r, const PlaceState *st);

G_END_DECLS
