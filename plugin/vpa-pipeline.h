/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The whole flow for one domain, shared by the CLI and the hook:
 * domain XML -> requests (with effective policies) -> placement over the
 * inventory (minus the domain's own claims) -> rewritten domain XML; and
 * the check of an already placed domain.
 */
#pragma once

#include "vpa-inventory.h"
#include "vpa-domain.h"

G_BEGIN_DECLS

typedef struct {
  gboolean changed;     /* the rewritten document differs from the input */
  GString *explain;     /* if not NULL on input: the --explain report, also on failure */
  gboolean keep_guest_topology; /* in: the guest's PCI controllers must not
                                 * change (migration, restore) */
} VpaPlaceReport;

/* Places every request of the domain document buf on host (transfer full)
 * with claims (borrowed; the domain's own claims are ignored). Returns the
 * rewritten document. Errors: VPA_ERROR_INVALID (bad document/metadata),
 * VPA_ERROR_UNSATISFIABLE (a request cannot be met). */
char *vpa_pipeline_place (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                          const char *buf, gsize len, const char *what,
                          VpaPlaceReport *report, GError **error);

/* Picks a device for one new port of a domain (hot-plug) by the same
 * rules: the domain's existing devices stay held (claims are used as
 * they are), only the new port is placed. dom is bound to host here.
 * Returns the <interface type='hostdev'> element to attach; *out_addr
 * receives the chosen address. */
char *vpa_pipeline_attach_port (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                                VpaDomain *dom, const char *alias, const char *physnet,
                                const VpaPolicy *policy, VpaAddr *out_addr,
                                GError **error);

typedef enum {
  VPA_CHECK_OK,
  VPA_CHECK_MISSING,     /* the device is not on this host */
  VPA_CHECK_POLICY,      /* its NUMA node breaks the request's policy */
  VPA_CHECK_CLAIMED,     /* another domain holds it */
  VPA_CHECK_UNPLACED,    /* a request without a device yet */
  VPA_CHECK_LAST
} VpaCheckStatus;

typedef struct {
  char *device;          /* user alias or address */
  VpaAddr addr;
  gint numa_node;
  VpaCheckStatus status;
  char *line;            /* one human-readable line */
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

void vpa_check_result_free (VpaCheckResult *res);

G_END_DECLS
