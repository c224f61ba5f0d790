/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A domain's vpa:affinity metadata turned into placement requests, as
 * Nova builds InstancePCIRequests: flavor aliases first, then ports.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-config.h"

G_BEGIN_DECLS

/* One placement request: a port, or one entry of the flavor's aliases. */
typedef enum {
  VPA_REQUEST_PORT,
  VPA_REQUEST_ALIAS,
  VPA_REQUEST_DEVICE, /* <vpa:device>: one device of an alias, named */
} VpaRequestKind;

typedef struct {
  VpaRequestKind kind;
  char *device;     /* port, device: the user alias it fills; alias: its name */
  char *label;      /* for messages: "port ua-data0", "alias QuickAssist" */
  GPtrArray *specs; /* VpaSpec*, ORed (Nova's request spec) */
  guint count;
  VpaPolicy policy; /* effective */
  VpaPolicySource policy_source;
  char *pf_group;             /* NULL when none */
  char *locality_group;       /* NULL when none; then the two below apply */
  VpaLocality locality_level; /* the group's level */
  gboolean locality_required; /* the group's policy is required */
} VpaRequest;

VpaRequest *vpa_request_new (VpaRequestKind kind, const char *device, guint count);
void vpa_request_free (VpaRequest *req);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaRequest, vpa_request_free)

/* Nova hides PFs and remote-managed devices from a request that does not
 * ask for them (docs/nova.md, "Devices a request did not ask for"): whether
 * some spec of req has dev_type 'type-PF', or a truthy remote_managed. */
gboolean vpa_request_wants_pf (const VpaRequest *req);
gboolean vpa_request_wants_remote_managed (const VpaRequest *req);

/* VpaRequest* (free with vpa_request_free): one per alias entry of the
 * flavor (in flavor order), then one per <vpa:device>, then one per port
 * (both in document order), each
 * with its effective policy and where it came from. VPA_ERROR_INVALID for
 * an unknown alias or a flavor/image policy conflict. */
GPtrArray *vpa_requests_from_domain (const VpaDomain *dom, const VpaConfig *config,
                                     GError **error);

G_END_DECLS
