/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whole-guest NUMA placement: every guest cell on a host node of its
 * own, with its CPUs, memory and pages there, and every device request
 * met under its policy with the guest on those nodes
 * (docs/placement.md, "Whole-guest NUMA placement"). Pure over the
 * capacity, the inventory and the requests.
 */
#pragma once

#include "vpa-capacity-model.h"
#include "vpa-place.h"

G_BEGIN_DECLS

typedef struct {
  guint id;      /* guest cell id */
  GArray *vcpus; /* guint guest vCPUs, ascending (borrowed) */
  guint64 memory_kib;
  guint emulator_cpus; /* dedicated CPUs more for the emulator threads
                        * (emulator-threads="isolate": 1 on cell 0) */
} VpaFitCell;

/* One network the guest has a port on whose host nodes have NUMA
 * affinity ([physnet NAME]/[tunnel] numa-nodes): Nova's
 * network_metadata, with the port's policy deciding how hard it is
 * (docs/vswitch.md). */
typedef struct {
  char *port;       /* the port's user alias, for messages */
  char *physnet;    /* NULL: the tunnel */
  VpaPolicy policy; /* effective: required/legacy hard, socket hard at the
                     * socket's level, preferred a tie-breaker */
  GArray *nodes;    /* gint: the host nodes with affinity (not empty) */
} VpaNetRule;

VpaNetRule *vpa_fit_net_rule_new (const char *port, const char *physnet, VpaPolicy policy,
                                  const GArray *nodes);
void vpa_fit_net_rule_free (VpaNetRule *rule);
/* "port P: physnet N is served from host nodes 0,2 (policy required)" */
char *vpa_fit_net_rule_describe (const VpaNetRule *rule);
/* The first hard rule of rules (not preferred) that no node of nodes
 * meets on host (its cells' ids and sockets), as the fit judges the
 * nodes it chooses: a node the network is served from, or for policy
 * socket a node on the known socket of one; NULL when every hard rule
 * is met. A rule none of host's nodes is served from constrains
 * nothing. */
const VpaNetRule *vpa_fit_net_rules_unmet (const VpaHost *host, GPtrArray *rules, const gint *nodes,
                                           guint n_nodes);
/* Whether host node node meets rule, by the same test: one of the
 * nodes the network is served from, or for policy socket on the known
 * socket of one. */
gboolean vpa_fit_net_node_meets (const VpaHost *host, const VpaNetRule *rule, gint node);

typedef struct {
  GArray *cells; /* VpaFitCell, guest order */
  VpaCpuPolicy cpu_policy;
  VpaThreadPolicy thread_policy;
  guint64 page_kib;     /* hugepage size backing the guest, 0: none */
  gboolean cell_pack;   /* [host] cell-allocation=pack */
  const gint *fixed;    /* per cell: the only host node allowed, or -1; NULL: none */
  GPtrArray *net_rules; /* VpaNetRule*, or NULL: none */
} VpaFitGuest;

typedef struct {
  guint cell;       /* guest cell id */
  gint node;        /* host node */
  GArray *cpus;     /* guint: dedicated: the host CPU of each vCPU, in
                     * the cell's vCPU order; shared: the node's shared CPUs */
  GArray *reserved; /* guint: dedicated isolate: the pinned cores' other
                     * threads, kept from other guests; else empty */
  GArray *emulator; /* guint: the CPUs dedicated to the emulator threads
                     * (emulator_cpus of the cell); else empty */
  guint64 memory_kib;
} VpaCellBinding;

typedef struct {
  GArray *bindings;        /* VpaCellBinding, guest cell order */
  GArray *nodes;           /* gint: the chosen host nodes, ascending */
  VpaPlacement *placement; /* the devices (NULL without requests) */
  guint tier_total;        /* sum of the devices' tiers */
  guint net_misses;        /* preferred network rules no chosen node meets */
  guint n_runs;            /* device placements tried (for the benchmark) */
} VpaFit;

void vpa_fit_free (VpaFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaFit, vpa_fit_free)

/* Fits guest onto the capacity
 * with requests (VpaRequest*, may be empty) over inv. Among the fits,
 * the one with the lowest device tier total, then the first in Nova's
 * order of host cells. explain (if not NULL) receives the per-cell
 * report. VPA_ERROR_UNSATISFIABLE naming per cell what no node gives. */
VpaFit *vpa_fit (const VpaCapacity *cap, const VpaInventory *inv, GPtrArray *requests,
                 const VpaFitGuest *guest, GString *explain, GError **error);

/* Whether the pair can hold the cell on its own (CPUs, memory, pages);
 * fills binding (if not NULL) or *why with what the node lacks. */
gboolean vpa_fit_cell (const VpaNodeCap *nc, const VpaFitCell *cell, const VpaFitGuest *guest,
                       VpaCellBinding *binding, char **why);

void vpa_cell_binding_clear (VpaCellBinding *b);

G_END_DECLS
