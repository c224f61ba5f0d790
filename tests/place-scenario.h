/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Conformance scenarios (data/conformance/ (JSON), docs/placement.md):
 * loading one into our model, and an independent checker of
 * placements (validity, tiers, brute force over small scenarios).
 */
#pragma once

#include <json-glib/json-glib.h>
#include "vpa-place.h"
#include "vpa-inventory.h"

G_BEGIN_DECLS

typedef struct {
  char *name;
  char *skip;           /* why the scenario does not apply, or NULL */
  char *nova_error;     /* Nova rejected the requests: its exception name */
  GError *policy_error; /* our policy resolution/parsing failed */
  VpaConfig *config;
  VpaInventory *inv;
  GPtrArray *requests;     /* VpaRequest* */
  gboolean policies_match; /* our resolution equals the recorded policy/source */
  char *policy_mismatch;
  GArray *guest_nodes; /* gint */
  VpaGuestNodes guest;
  gboolean nova_ok;
  gboolean has_nova_support;
  gboolean nova_support; /* Nova's support_requests (the scheduler's view) */
  GPtrArray *nova_alloc; /* per request: GArray of guint host indices */
  char *nova_failure;    /* why Nova failed (category), or NULL */
} Scenario;

void scenario_free (Scenario *sc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Scenario, scenario_free)

Scenario *scenario_from_json (JsonObject *obj, GError **error);
/* Scenario* from a file holding one scenario or a list. */
GPtrArray *scenarios_load (const char *path, GError **error);

/* Whether request r may take device i (free, in the inventory, spec,
 * Nova's unrequested-PF and remote-managed rules, the policy). */
gboolean scenario_device_ok (const Scenario *sc, guint r, guint i);

/* NULL when alloc (per request: GArray of guint) is a valid placement of
 * every request, else why not. */
char *scenario_check (const Scenario *sc, GPtrArray *alloc);

/* Sum of tiers over alloc. */
guint scenario_tier_cost (const Scenario *sc, GPtrArray *alloc);

/* Exhaustive search on small scenarios: FALSE when too big to try. Sets
 * *n_valid (capped) and *best (minimum tier cost; G_MAXUINT if none);
 * *n_best counts the assignments at that cost and *best_alloc receives
 * one of them. */
gboolean scenario_brute_force (const Scenario *sc, guint *n_valid, guint *best,
                               guint *n_best, GPtrArray **best_alloc);

GPtrArray *placement_alloc (const VpaPlacement *pl);

G_END_DECLS
