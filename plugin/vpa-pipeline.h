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

typedef struct {
  gboolean changed;             /* the rewritten document differs from the input */
  GString *explain;             /* if not NULL on input: the --explain report, also on failure */
  gboolean keep_guest_topology; /* in: the guest's PCI controllers must not
                                 * change (migration, restore) */
  /* in: only keep, never place: unless every request keeps the devices
   * it holds (and the domain is not placement="auto"), fail with
   * VPA_ERROR_UNSATISFIABLE and must_move set. host may then hold only
   * the domain's devices and their relatives (the hook's fast path). */
  gboolean keep_only;
  gboolean must_move; /* out, with keep_only */
} VpaPlaceReport;

/* Places every request of the domain document buf on host (transfer full)
 * with claims (borrowed; the domain's own claims are ignored). Returns the
 * rewritten document. Errors: VPA_ERROR_INVALID (bad document/metadata),
 * VPA_ERROR_UNSATISFIABLE (a request cannot be met). */
char *vpa_pipeline_place (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                          const char *buf, gsize len, const char *what,
                          VpaPlaceReport *report, GError **error);

/* vpa_pipeline_place of a document already parsed: dom (transfer full)
 * is vpa_domain_parse() of buf, not yet bound to a host. */
char *vpa_pipeline_place_parsed (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                                 VpaDomain *dom, const char *buf, gsize len, const char *what,
                                 VpaPlaceReport *report, GError **error);

/* vpa_pipeline_place with libvirt's hostdev networks (VpaHostdevNet*,
 * vpa-netpool.h): a port whose device is an <interface type='network'>
 * takes a VF of one of their PFs, and the interface's <source network>
 * becomes that PF's network (libvirt then picks the VF). Without nets
 * (the hook) such a port keeps the network it was placed on. */
char *vpa_pipeline_place_nets (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                               const char *buf, gsize len, const char *what, GPtrArray *nets,
                               VpaPlaceReport *report, GError **error);

/* Picks a device for one new port of a domain (hot-plug) by the same
 * rules: the domain's existing devices stay held (claims are used as
 * they are), only the new port is placed. dom is bound to host here.
 * Returns the <interface type='hostdev'> element to attach; *out_addr
 * receives the chosen address, *record (optional; clear it with
 * vpa_attach_record_clear) the port's request and placement as place
 * records them. */
char *vpa_pipeline_attach_port (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                                VpaDomain *dom, const char *alias, const char *physnet,
                                const VpaPolicy *policy, VpaAddr *out_addr,
                                VpaAttachRecord *record, GError **error);

/* vpa_pipeline_attach_port for a port as want describes it (device,
 * physnet, want_pf for vnic-type direct-physical, trusted, policy; its
 * other fields are not read), the interface given mac (NULL: libvirt
 * picks one). */
char *vpa_pipeline_attach_request (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                                   VpaDomain *dom, const VpaPortRequest *want, const char *mac,
                                   VpaAddr *out_addr, VpaAttachRecord *record, GError **error);

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

/* vpa_pipeline_check with libvirt's hostdev networks: a port on an
 * <interface type='network'> (no VF yet: a defined domain) is checked on
 * a free VF of its network's PF. Without nets (the hook at prepare
 * begin, before libvirt allocates the VF) it is accepted as such; the
 * VF libvirt picked is checked at start begin, where the live XML shows
 * it as an <interface type='hostdev'>. */
GPtrArray *vpa_pipeline_check_nets (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                                    const VpaDomain *dom, GPtrArray *nets,
                                    gboolean running_only, gboolean *ok, GError **error);

void vpa_pipeline_check_result_free (VpaCheckResult *res);

G_END_DECLS
