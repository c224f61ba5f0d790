/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups in placement (docs/placement.md, "Locality groups"):
 * the search over where each group goes. vpa-place.c states the problem
 * (classes, which request may use which, a solver under a mask); this
 * file chooses, per group, a domain at some level (a root port, a host
 * bridge, a NUMA node, a socket, or nowhere in particular) that all its
 * members must be placed in, the best joint choice by the cost order
 * tier > locality > the rest. Internal to placement.
 */
#pragma once

#include "vpa-place.h"

G_BEGIN_DECLS

typedef struct {
  guint n_req, n_cls;
  const VpaHost *host;
  GPtrArray *requests;     /* VpaRequest* */
  const guint *class_rep;  /* per class: a host index of a member (all members of a class
                            * share root port, host bridge and NUMA node) */
  const guint *class_free; /* per class: free devices */
  const gboolean *ok;      /* n_req * n_cls: the class may serve the request */
  /* The whole placement with mask[r * n_cls + c] keeping class c away
   * from request r: FALSE when it fails, else the tier total and the
   * whole cost of the result. */
  gboolean (*solve) (gpointer data, const guint8 *mask, gint64 *tier, gint64 *cost);
  gpointer data;
} VpaLocalityProblem;

typedef struct {
  char *name;
  VpaLocality level; /* asked */
  gboolean required;
  GArray *members;    /* guint request indices */
  VpaLocality alone;  /* the closest level whose free devices could hold the group
                       * on its own; VPA_LOCALITY_LAST when none can */
  VpaLocality chosen; /* level of the domain chosen (SYSTEM: unrestricted) */
  gint chosen_class;  /* a class of the chosen domain, -1 for SYSTEM */
} VpaLocalityGroupState;

void vpa_locality_group_state_free (VpaLocalityGroupState *g);

/* The groups of the requests, in order of first member. */
GPtrArray *vpa_locality_groups (GPtrArray *requests);

/* Chooses a domain per group and fills mask (n_req * n_cls) with the
 * best choice. FALSE when no choice meets every required group (or the
 * requests cannot be placed at all); *solves counts solver runs. */
gboolean vpa_locality_search (const VpaLocalityProblem *p, GPtrArray *groups, guint8 *mask,
                              guint *solves);

/* One VpaGroupPlacement per group of a placement (only its assignments
 * are read): the level its devices reached, where, and why not closer. */
GPtrArray *vpa_locality_place_group_results (const VpaInventory *inv, const VpaPlacement *placement,
                                             GPtrArray *groups);

G_END_DECLS
