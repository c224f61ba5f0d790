/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The whole flow for one domain, shared by the CLI and the hook:
 * domain XML -> requests (with effective policies) -> placement over the
 * inventory (minus the domain's own claims) -> rewritten domain XML
 * (vpa-pipeline.c); the check of an already placed domain
 * (vpa-pipeline-check.c); one port placed for a hot-plug
 * (vpa-pipeline-attach.c).
 */
#pragma once

#include "vpa-inventory.h"
#include "vpa-domain.h"
#include "vpa-attach.h"

G_BEGIN_DECLS

/* What placing one domain takes besides the host and its document:
 * the caller's inputs, read only. */
typedef struct {
  GPtrArray *claims;       /* every domain's claims (borrowed); the domain's own are ignored */
  const VpaConfig *config; /* required */
  /* libvirt's hostdev networks (VpaHostdevNet*, vpa-netpool.h), or NULL:
   * with them a port whose device is an <interface type='network'> takes
   * a VF of one of their PFs, and the interface's <source network>
   * becomes that PF's network (libvirt then picks the VF); without them
   * (the hook) such a port keeps the network it was placed on. */
  GPtrArray *nets;
  GString *explain;             /* if not NULL: receives the --explain report, also on failure */
  gboolean keep_guest_topology; /* the guest's PCI controllers must not
                                 * change (migration, restore) */
  /* only keep, never place: unless every request keeps the devices it
   * holds (and the domain is not placement="auto"), fail with
   * VPA_ERROR_UNSATISFIABLE and the report's must_move set. host may then
   * hold only the domain's devices and their relatives (the hook's fast
   * path). */
  gboolean keep_only;
} VpaPlaceOptions;

/* What placing one domain reports besides the document. */
typedef struct {
  gboolean changed;   /* the rewritten document differs from the input */
  gboolean must_move; /* with keep_only: something must be placed */
} VpaPlaceReport;

/* Parses a domain document (vpa_domain_parse) and refuses what libvirt
 * would refuse in the guest PCI layout the planner reads
 * (vpa-guest-bus-rules.h): a caller that goes on to place, check or
 * attach parses with it. */
VpaDomain *vpa_pipeline_parse (const VpaDoc *doc, GError **error);

/* Places every request of the domain document doc (doc->what names it
 * in messages) on host (transfer full) as opts say. Returns the rewritten
 * document; report (may be NULL) receives what happened. Errors:
 * VPA_ERROR_INVALID (bad document/metadata), VPA_ERROR_UNSATISFIABLE (a
 * request cannot be met). */
char *vpa_pipeline_place (VpaHost *host, const VpaPlaceOptions *opts, const VpaDoc *doc,
                          VpaPlaceReport *report, GError **error);

/* vpa_pipeline_place of a document already parsed: dom (transfer full)
 * is vpa_pipeline_parse() of buf, not yet bound to a host; its source
 * names it in messages. */
char *vpa_pipeline_place_parsed (VpaHost *host, const VpaPlaceOptions *opts, VpaDomain *dom,
                                 const char *buf, gsize len, VpaPlaceReport *report,
                                 GError **error);

/* Picks a device for one new port of a domain (hot-plug) by the same
 * rules, the port as want describes it (device, physnet, want_pf for
 * vnic-type direct-physical, trusted, policy, locality_group; its other
 * fields are not read): the domain's existing devices stay held
 * (opts->claims are used as they are; opts->config; nets, explain and
 * the keep flags are not read), only the new port is placed; dom is
 * bound to host here. Returns the <interface type='hostdev'> element to
 * attach, given mac (NULL: libvirt picks one); *record (clear it with
 * vpa_attach_record_clear) receives the chosen address and the port's
 * request and placement as place records them. */
char *vpa_pipeline_attach_request (VpaHost *host, const VpaPlaceOptions *opts, VpaDomain *dom,
                                   const VpaPortRequest *want, const char *mac,
                                   VpaAttachRecord *record, GError **error);

typedef enum {
  VPA_CHECK_OK,
  VPA_CHECK_MISSING,  /* the device is not on this host */
  VPA_CHECK_POLICY,   /* its NUMA node breaks the request's policy */
  VPA_CHECK_CLAIMED,  /* another domain holds it */
  VPA_CHECK_UNPLACED, /* a request without a device yet */
  VPA_CHECK_LOCALITY, /* a required locality group is farther than its level */
  VPA_CHECK_RESERVED, /* a reservation keeps it (docs/reservations.md) */
  VPA_CHECK_LAST
} VpaCheckStatus;

typedef struct {
  char *device; /* user alias or address ("locality group 'g0'" for a group) */
  VpaAddr addr;
  gint numa_node;
  VpaCheckStatus status;
  char *line;    /* one human-readable line */
  gboolean note; /* VPA_CHECK_OK, but worth a warning: a locality group
                  * farther than its records say */
} VpaCheckResult;

/* Checks every request the domain's metadata names and every PCI device it
 * holds against host (transfer full) and claims (borrowed; the domain's
 * own are ignored; only claims with running == TRUE count when
 * running_only). Returns VpaCheckResult*, one per device; *ok is FALSE if
 * any is not VPA_CHECK_OK. */
GPtrArray *vpa_pipeline_check (VpaHost *host, GPtrArray *claims,
                               const VpaConfig *config, const VpaDomain *dom,
                               gboolean running_only, gboolean *ok,
                               GError **error);

/* vpa_pipeline_check against opts' claims and config and libvirt's
 * hostdev networks (opts->nets; explain and the keep flags are not read):
 * a port on an <interface type='network'> (no VF yet: a defined domain)
 * is checked on a free VF of its network's PF. Without nets (the hook at
 * prepare begin, before libvirt allocates the VF) it is accepted as
 * such; the VF libvirt picked is checked at start begin, where the live
 * XML shows it as an <interface type='hostdev'>. */
GPtrArray *vpa_pipeline_check_nets (VpaHost *host, const VpaPlaceOptions *opts,
                                    const VpaDomain *dom, gboolean running_only, gboolean *ok,
                                    GError **error);

void vpa_pipeline_check_result_free (VpaCheckResult *res);

G_END_DECLS
