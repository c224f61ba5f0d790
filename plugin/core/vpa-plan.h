/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a placement decided, as xml/vpa-rewrite.h writes it into a
 * domain: one decision per placed device, the whole-guest NUMA binding
 * and the distances between guest cells. Made once by the layers that
 * decide, then only read.
 */
#pragma once

#include "vpa-types.h"
#include "vpa-domain-model.h"

G_BEGIN_DECLS

typedef enum {
  VPA_DECISION_PORT,   /* fills the source of a <vpa:port>'s device */
  VPA_DECISION_ALIAS,  /* one device of a flavor alias: ua-vpa-NAME-N */
  VPA_DECISION_DEVICE, /* a <vpa:device>: fills its named device, or adds a
                        * <hostdev> with that user alias */
} VpaDecisionKind;

typedef struct {
  VpaDecisionKind kind;
  char *device; /* port: user alias; alias: alias name */
  guint index;  /* alias: N in ua-vpa-NAME-N, counted per name from 0 */
  VpaAddr addr;
  gint numa_node; /* VPA_NUMA_NONE when unknown */
  VpaPolicy policy;
  VpaPolicySource source;
  char *locality_group; /* NULL when none */
  gint locality;        /* VpaLocality the group reached, -1 when none */
  char *network;        /* port on an <interface type='network'>: the hostdev
                         * network chosen (addr is then the VF placement
                         * counted on; libvirt picks one of that PF's VFs) */
} VpaDecision;

VpaDecision *vpa_plan_decision_new (VpaDecisionKind kind, const char *device, guint index,
                                    VpaAddr addr, gint numa_node, VpaPolicy policy,
                                    VpaPolicySource source);
void vpa_plan_decision_free (VpaDecision *decision);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaDecision, vpa_plan_decision_free)

/* The user alias the decision fills: the port's device, or
 * ua-vpa-NAME-N. */
char *vpa_plan_decision_user_alias (const VpaDecision *decision);

/* A whole-guest NUMA binding to write (docs/domain-xml.md). */
typedef struct {
  gboolean dedicated; /* cpu-policy dedicated: one host CPU per vCPU */
  gboolean memnodes;  /* the guest has <cpu><numa> cells: one <memnode> each */
  GArray *cells;      /* VpaPlacedCell (vpa-domain-model.h), guest order */
  GPtrArray *vcpus;   /* per cell: GArray of guint guest vCPUs (cpus parallel when dedicated) */
  GArray *emulator;   /* guint host CPUs of <emulatorpin> */
} VpaNumaBinding;

/* The distances between guest NUMA cells (docs/guest-numa.md). */
typedef struct {
  guint n;
  const guint *ids;    /* guest cell ids */
  const guint *values; /* n * n: values[i * n + j] from cell ids[i] to ids[j] */
} VpaCellDistances;

G_END_DECLS
