/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The domain rewrite, end to end: parse, place on a fixed small host
 * with libvirt hostdev networks on its PFs, rewrite. The output must
 * parse again, and placing it again must give the same bytes (a
 * placement is a fixed point: the hook re-places on migrate and
 * restore, and prints nothing when nothing changes).
 */
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-netpool.h"
#include "vpa-pipeline.h"

static const char fuzz_config[] =
  "[device-spec physnet1]\n"
  "devname=ens1f0\n"
  "physical-network=physnet1\n"
  "[device-spec physnet2]\n"
  "devname=ens2f0\n"
  "physical-network=physnet2\n"
  "trusted=true\n"
  "[device-spec pfs]\n"
  "vendor-id=8086\n"
  "product-id=1572\n"
  "physical-network=physnet1\n"
  "[device-spec qat]\n"
  "vendor-id=8086\n"
  "product-id=0443\n"
  "[alias QuickAssist]\n"
  "vendor-id=8086\n"
  "product-id=0443\n"
  "device-type=type-PCI\n"
  "[alias QAT-required]\n"
  "vendor-id=8086\n"
  "product-id=0443\n"
  "numa-policy=required\n";

static VpaConfig *
config_get (void)
{
  static VpaConfig *config = NULL;

  if (config == NULL)
    {
      g_autoptr (GError) error = NULL;
      config = vpa_config_load_data (fuzz_config, strlen (fuzz_config), "fuzz.conf", &error);
      if (config == NULL)
        g_error ("fuzz.conf: %s", error->message);
    }
  return config;
}

/* As place reads them from the connection: one active network per PF
 * of the small host (ens1f0 on node 0 is physnet1, ens2f0 on node 1
 * physnet2), and an inactive one. */
static GPtrArray *
nets_get (void)
{
  static GPtrArray *nets = NULL;
  static const char *const defs[][2] = {
    { "net-a", "ens1f0" },
    { "net-b", "ens2f0" },
    { "net-off", "ens1f0" },
  };

  if (nets == NULL)
    {
      nets = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_netpool_hostdev_net_free);
      for (guint i = 0; i < G_N_ELEMENTS (defs); i++)
        {
          char *pf[] = { (char *) defs[i][1], NULL };
          g_ptr_array_add (nets, vpa_netpool_hostdev_net_new (defs[i][0], i < 2, pf));
        }
    }
  return nets;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GPtrArray) claims = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autofree char *out = NULL;
  g_autofree char *again = NULL;
  VpaPlaceReport report = { 0 };

  vpa_fuzz_init ();
  out = vpa_pipeline_place (vpa_fuzz_small_host (), &(VpaPlaceOptions){ .claims = claims, .config = config_get (), .nets = nets_get () }, &(VpaDoc){ (const char *) data, size, "fuzz-domain.xml" }, &report, &error);
  VPA_FUZZ_CHECK_RESULT (out != NULL, error);
  if (out == NULL)
    {
      /* a refusal names the input's fault; an internal error is the
       * rewrite refusing its own output (e.g. one libvirt would not
       * define), which is a gap as much as a second placement differing */
      gboolean internal = g_str_has_prefix (error->message, "fuzz-domain.xml: internal error:");
      if (internal)
        fprintf (stderr, "refused with an internal error: %s\n", error->message);
      VPA_FUZZ_CHECK (!internal);
      VPA_FUZZ_CHECK (error->domain == VPA_ERROR);
      VPA_FUZZ_CHECK (error->code == VPA_ERROR_INVALID || error->code == VPA_ERROR_UNSATISFIABLE);
      return 0;
    }

  dom = vpa_domain_parse (&(VpaDoc){ out, strlen (out), "placed.xml" }, &error);
  if (dom == NULL)
    fprintf (stderr, "placed document does not parse: %s\n", error->message);
  VPA_FUZZ_CHECK (dom != NULL);

  again = vpa_pipeline_place (vpa_fuzz_small_host (), &(VpaPlaceOptions){ .claims = claims, .config = config_get (), .nets = nets_get () }, &(VpaDoc){ out, strlen (out), "placed.xml" }, &report, &error);
  if (again == NULL)
    fprintf (stderr, "placed document does not place again: %s\n", error->message);
  VPA_FUZZ_CHECK (again != NULL);
  if (strcmp (out, again) != 0)
    fprintf (stderr, "placed once:\n%s\nplaced again:\n%s\n", out, again);
  VPA_FUZZ_CHECK (strcmp (out, again) == 0);
  VPA_FUZZ_CHECK (!report.changed);
  return 0;
}
