/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A placement request, as every layer reads it: what one port, one
 * alias entry of the flavor or one <vpa:device> asks for. vpa-requests.h
 * (plugin/) builds them from a domain; policy/ places them.
 */
#pragma once

#include "vpa-types.h"
#include "vpa-pcie.h"
#include "vpa-spec.h"

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

G_END_DECLS
