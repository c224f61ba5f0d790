/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host filter (docs/fleet.md): which hosts of the store can take a
 * domain's requests, from the pool rows of all hosts, and why the others
 * cannot.
 */
#pragma once

#include "vpa-fleet.h"

G_BEGIN_DECLS

/* What the filter asks of every host: a domain's requests (with their
 * effective policies) and its guest NUMA placement. */
typedef struct {
  GPtrArray *requests;          /* VpaRequest*, in Nova's order (borrowed) */
  gboolean numa_guest;          /* the domain has <cpu><numa> */
  const gint *guest_nodes;      /* host nodes the guest is bound to, sorted */
  guint n_guest_nodes;          /* 0: unbound, any node/socket is tried */
  gboolean need_net_numa_trait; /* a port carries its own NUMA policy */
  gboolean need_socket_trait;   /* the flavor/image policy is socket */
  /* <vpa:numa placement="auto">: the whole-guest fit on each host's
   * capacity rows decides (hosts loaded with VPA_FLEET_LOAD_CAPACITY). */
  const VpaDomain *numa_auto; /* or NULL */
  const VpaConfig *config;    /* [host] and device specs for the fit */
  /* The domain whose ports' networks a NUMA guest's nodes must serve
   * (the vSwitch rule, docs/vswitch.md), judged on each host with the
   * [physnet]/[tunnel] groups it synced (hosts loaded with
   * VPA_FLEET_LOAD_NETWORKS; config needed too); or NULL: no rule. */
  const VpaDomain *domain;
} VpaFleetQuery;

typedef struct {
  char *host;
  gboolean passes;
  gdouble weight; /* free affine devices left; 0 when it fails */
  char *reason;   /* why it fails, or NULL */
  char *nodes;    /* the guest nodes it was judged with ("0", "0,1"), or NULL */
} VpaFleetVerdict;

void vpa_fleet_filter_verdict_free (VpaFleetVerdict *verdict);

/* Why the host lacks a trait the query needs, or NULL. */
char *vpa_fleet_filter_trait_unmet (const VpaFleetQuery *query, const VpaFleetHost *host);

/* A pool matches one of the request's spec dicts (Nova's prop match). */
gboolean vpa_fleet_filter_request_match (const VpaPool *pool, const VpaRequest *req);

/* vpa-fleet-locality.c: NULL when every required locality group of the
 * requests has a domain at its level (a root port, host bridge, NUMA
 * node or socket) whose free devices their NUMA policies allow could
 * hold all its members, and one such domain per group can be chosen so
 * that all requests are met from the free pools at once; else why not. */
char *vpa_fleet_locality_unmet (const VpaFleetHost *host, GPtrArray *requests,
                                gboolean numa_guest, const gint *nodes, guint n_nodes);

/* Nova's support_requests over the host's pools (docs/nova.md, "The
 * filter order", "NUMA affinity policies", "The socket policy",
 * "Scheduler and compute claim") for the guest nodes given (NULL/0 with numa_guest FALSE: no
 * NUMA filtering). Returns whether every request applies; *weight gets
 * the free devices matching a request left on the guest nodes; *reason
 * (if not NULL) why not. */
gboolean vpa_fleet_filter_supports_requests (const VpaFleetHost *host,
                                             GPtrArray *requests, gboolean numa_guest,
                                             const gint *nodes, guint n_nodes,
                                             gdouble *weight, char **reason);

/* Whether the host's verdict depends on the order of its pools where
 * the rows did not give it: two pools with the same number of keys, one
 * of them without its lowest address (read without, docs/fleet.md,
 * "Pool order on demand"), in one take. */
gboolean vpa_fleet_filter_needs_order (const VpaFleetHost *host, const VpaFleetQuery *query);

/* One verdict per host: those that pass first by weight (descending),
 * then the others; ties by host name. A host whose verdict depends on
 * an order of its pools the rows did not give fails, saying so. */
GPtrArray *vpa_fleet_filter (GPtrArray *hosts /* VpaFleetHost* with pools */,
                             const VpaFleetQuery *query);

G_END_DECLS
