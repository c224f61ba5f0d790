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
#include "vpa-bind.h"

/* Sorted, unique nodes; one node list per cell. */
static void
check_bind (const VpaDomain *dom, const VpaBind *bind)
{
  VPA_FUZZ_CHECK (bind->guest_nodes != NULL && bind->cell_nodes != NULL);
  VPA_FUZZ_CHECK (bind->cell_nodes->len == dom->cells->len || bind->cell_nodes->len == 0);
  for (guint i = 1; i < bind->guest_nodes->len; i++)
    {
      VPA_FUZZ_CHECK (g_array_index (bind->guest_nodes, gint, i - 1) <
                      g_array_index (bind->guest_nodes, gint, i));
    }
}

static void
check_domain (const VpaDomain *dom)
{
  VPA_FUZZ_CHECK (dom->source != NULL);
  VPA_FUZZ_CHECK (dom->alias_requests != NULL && dom->ports != NULL);
  VPA_FUZZ_CHECK (dom->hostdevs != NULL && dom->placed != NULL && dom->cells != NULL);
  VPA_FUZZ_CHECK (dom->implicit_nodes != NULL);
  VPA_FUZZ_CHECK (dom->numa_guest || dom->cells->len == 0);
  VPA_FUZZ_CHECK (!dom->has_flavor_policy || dom->flavor_policy < VPA_POLICY_LAST);
  VPA_FUZZ_CHECK (!dom->has_image_policy || dom->image_policy < VPA_POLICY_LAST);
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
  g_autoptr (VpaBind) unbound = NULL;
  g_autoptr (VpaBind) bind = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok;

  vpa_fuzz_init ();
  dom = vpa_domain_parse (&(VpaDoc){ (const char *) data, size, "fuzz-domain.xml" }, &error);
  VPA_FUZZ_CHECK_RESULT (dom != NULL, error);
  if (dom == NULL)
    return 0;
  check_domain (dom);
  /* without a host only the nodesets bind, which never fails */
  unbound = vpa_bind_nodes (dom, NULL, &error);
  VPA_FUZZ_CHECK (unbound != NULL && error == NULL);
  check_bind (dom, unbound);
  ok = vpa_guest_bus_rules_check (dom->bus, dom->source, &error);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (!ok)
    return 0;
  host = vpa_fuzz_small_host ();
  bind = vpa_bind_nodes (dom, host, &error);
  VPA_FUZZ_CHECK_RESULT (bind != NULL, error);
  if (bind != NULL)
    check_bind (dom, bind);
  return 0;
}
