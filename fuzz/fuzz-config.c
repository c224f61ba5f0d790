/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The GKeyFile configuration: device specs, aliases, claims. A loaded
 * configuration must be consistent, and matching it against a small host
 * must not trip over anything it accepted.
 */
#include "vpa-fuzz.h"
#include <string.h>

#include "vpa-config.h"
#include "vpa-config-lint.h"
#include "vpa-inventory.h"

static void
check_config (const VpaConfig *config, const VpaHost *host)
{
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) error = NULL;

  VPA_FUZZ_CHECK (config->path != NULL);
  VPA_FUZZ_CHECK (config->inventory_source != NULL);
  VPA_FUZZ_CHECK (config->device_specs != NULL && config->aliases != NULL);
  VPA_FUZZ_CHECK (config->tagsets != NULL && config->tagsets->len >= 1);
  for (guint i = 0; i < config->device_specs->len; i++)
    {
      const VpaDeviceSpec *ds = g_ptr_array_index (config->device_specs, i);

      VPA_FUZZ_CHECK (ds->name != NULL);
      VPA_FUZZ_CHECK (ds->tagset < config->tagsets->len);
      VPA_FUZZ_CHECK (vpa_config_device_spec (config, ds->name) != NULL);
      for (guint t = 1; t < ds->tags->len; t++)
        {
          const VpaSpecPair *a = g_ptr_array_index (ds->tags, t - 1);
          const VpaSpecPair *b = g_ptr_array_index (ds->tags, t);
          VPA_FUZZ_CHECK (g_strcmp0 (a->key, b->key) < 0);
        }
    }
  for (guint i = 0; i < config->aliases->len; i++)
    {
      const VpaAlias *alias = g_ptr_array_index (config->aliases, i);

      VPA_FUZZ_CHECK (alias->name != NULL && alias->specs->len > 0);
      VPA_FUZZ_CHECK (vpa_config_alias (config, alias->name) == alias);
      VPA_FUZZ_CHECK (!alias->has_policy || alias->policy < VPA_POLICY_LAST);
    }
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDeviceSpec *ds = vpa_config_match_device (config, host, i);
      VPA_FUZZ_CHECK (ds == NULL || config->device_specs->len > 0);
      VPA_FUZZ_CHECK (ds == NULL || !vpa_config_never_assignable (vpa_host_device (host, i)));
    }

  /* The inventory takes the host; the caller's copy stays usable. */
  inv = vpa_inventory_new (vpa_fuzz_small_host (), config, NULL, &error);
  VPA_FUZZ_CHECK_RESULT (inv != NULL, error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GError) error = NULL;

  vpa_fuzz_init ();
  /* config check's text checks take any bytes, one finding a line. */
  {
    g_autoptr (GPtrArray) findings =
      g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_lint_finding_free);
    vpa_config_lint_text (&(VpaDoc){ (const char *) data, size, "fuzz.conf" }, findings);
    for (guint i = 0; i < findings->len; i++)
      g_assert_null (strchr (((VpaLintFinding *) findings->pdata[i])->line, '\n'));
  }
  config = vpa_config_load_data ((const char *) data, size, "fuzz.conf", &error);
  VPA_FUZZ_CHECK_RESULT (config != NULL, error);
  if (config == NULL)
    return 0;
  host = vpa_fuzz_small_host ();
  check_config (config, host);
  {
    g_autoptr (GPtrArray) findings =
      g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_lint_finding_free);
    g_autoptr (GError) local = NULL;
    g_autoptr (VpaInventory) inv = vpa_inventory_new (vpa_fuzz_small_host (), config, NULL,
                                                      &local);
    if (inv != NULL)
      vpa_config_lint_inventory (config, inv, (const char *) data, size, findings);
  }
  return 0;
}
