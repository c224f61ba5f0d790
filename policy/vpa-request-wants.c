/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a request asks for (vpa-request-wants.h; docs/nova.md, "Devices
 * a request did not ask for").
 */
#include "vpa-request-wants.h"
#include "vpa-policy.h"

static gboolean
request_spec_value (const VpaRequest *req, const char *key, gboolean (*pred) (const char *value))
{
  for (guint s = 0; s < req->specs->len; s++)
    {
      gboolean present = FALSE;
      const char *v = vpa_spec_get (g_ptr_array_index (req->specs, s), key, &present);
      if (present && pred (v))
        return TRUE;
    }
  return FALSE;
}

gboolean
vpa_request_wants_pf (const VpaRequest *req)
{
  return request_spec_value (req, "dev_type", vpa_policy_wants_pf);
}

gboolean
vpa_request_wants_remote_managed (const VpaRequest *req)
{
  return request_spec_value (req, "remote_managed", vpa_policy_truthy);
}
