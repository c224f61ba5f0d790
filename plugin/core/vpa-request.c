/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A placement request (vpa-request.h).
 */
#include "vpa-request.h"

VpaRequest *
vpa_request_new (VpaRequestKind kind, const char *device, guint count)
{
  VpaRequest *req;

  g_return_val_if_fail (device != NULL, NULL);
  req = g_new0 (VpaRequest, 1);
  req->kind = kind;
  req->device = g_strdup (device);
  req->label = g_strdup_printf ("%s '%s'",
                                kind == VPA_REQUEST_PORT     ? "port"
                                : kind == VPA_REQUEST_DEVICE ? "device"
                                                             : "alias",
                                device);
  req->specs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_spec_free);
  req->count = count;
  req->policy = VPA_POLICY_LEGACY;
  req->policy_source = VPA_POLICY_SOURCE_DEFAULT;
  return req;
}

void
vpa_request_free (VpaRequest *req)
{
  if (req == NULL)
    return;
  g_free (req->device);
  g_free (req->label);
  g_ptr_array_unref (req->specs);
  g_free (req->pf_group);
  g_free (req->locality_group);
  g_free (req);
}
