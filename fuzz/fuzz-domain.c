/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Domain XML with vpa:affinity metadata: the document the hook reads
 * from stdin and the CLI from a file. A parsed domain must be
 * consistent, and binding its cells to a small host must keep the
 * error contract.
 */
#include "vpa-fuzz.h"
#include "vpa-domain.h"
#include "vpa-guest-bus-rules.h"

static void
check_domain (const VpaDomain *dom)
{
  VPA_FUZZ_CHECK (dom->source != NULL);
  VPA_FUZZ_CHECK (dom->alias_requests != NULL && dom->ports != NULL);
  VPA_FUZZ_CHECK (dom->hostdevs != NULL && dom->placed != NULL && dom->cells != NULL);
  VPA_FUZZ_CHECK (dom->guest_nodes != NULL);
  VPA_FUZZ_CHECK (dom->numa_guest || dom->cells->len == 0);
  VPA_FUZZ_CHECK (!dom->has_flavor_policy || dom->flavor_policy < VPA_POLICY_LAST);
  VPA_FUZZ_CHECK (!dom->has_image_policy || dom->image_policy < VPA_POLICY_LAST);
  for (guint i = 1; i < dom->guest_nodes->len; i++)
    VPA_FUZZ_CHECK (g_array_index (dom->guest_nodes, gint, i - 1) <
                    g_array_index (dom->guest_nodes, gint, i));
  for (guint i = 0; i < dom->alias_requests->len; i++)
    {
      const VpaAliasRequest *r = g_ptr_array_index (dom->alias_requests, i);
      VPA_FUZZ_CHECK (r->name != NULL && r->name[0] != '\0');
    }
  for (guint i = 0; i < dom->ports->len; i++)
    {
      const VpaPortRequest *p = g_ptr_array_index (dom->ports, i);
      VPA_FUZZ_CHECK (p->device != NULL);
      VPA_FUZZ_CHECK (!p->has_policy || p->policy < VPA_POLICY_LAST);
      VPA_FUZZ_CHECK (p->trusted >= -1 && p->trusted <= 1);
    }
  for (guint i = 0; i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *r = g_ptr_array_index (dom->placed, i);
      VPA_FUZZ_CHECK (r->device != NULL);
      VPA_FUZZ_CHECK (r->policy < VPA_POLICY_LAST && r->source < VPA_POLICY_SOURCE_LAST);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok;

  vpa_fuzz_init ();
  dom = vpa_domain_parse ((const char *) data, size, "fuzz-domain.xml", &error);
  VPA_FUZZ_CHECK_RESULT (dom != NULL, error);
  if (dom == NULL)
    return 0;
  check_domain (dom);
  ok = vpa_guest_bus_rules_check (dom->bus, dom->source, &error);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (!ok)
    return 0;
  host = vpa_fuzz_small_host ();
  ok = vpa_domain_bind_nodes (dom, host, &error);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (ok)
    check_domain (dom);
  return 0;
}
