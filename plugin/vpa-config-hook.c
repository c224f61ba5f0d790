/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The configuration's [hook] group (docs/operations.md): mode=enforce|audit
 * and state-dir, where the hook keeps its verdict counters.
 */
#include <string.h>

#include "vpa-config.h"
#include "vpa-types.h"

/* The raw value of key, stripped; NULL when absent. */
static char *
raw_value (GKeyFile *kf, const char *group, const char *key)
{
  char *value = g_key_file_get_value (kf, group, key, NULL);

  return value != NULL ? g_strstrip (value) : NULL;
}

static gboolean
key_error (GError **error, const VpaConfig *config, const char *key, const char *value,
           const char *reason)
{
  g_autofree char *shown = vpa_message_bound (value, 256);

  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [hook] %s='%s': %s", config->path,
               key, shown, reason);
  return FALSE;
}

static gboolean
parse_mode (VpaConfig *config, const char *value, GError **error)
{
  if (strcmp (value, "enforce") == 0 || strcmp (value, "audit") == 0)
    {
      config->hook_audit = strcmp (value, "audit") == 0;
      return TRUE;
    }
  return key_error (error, config, "mode", value, "expected enforce or audit");
}

static gboolean
parse_state_dir (VpaConfig *config, char *value, GError **error)
{
  if (!g_path_is_absolute (value))
    return key_error (error, config, "state-dir", value, "not an absolute path");
  g_free (config->hook_state_dir);
  config->hook_state_dir = g_strdup (value);
  return TRUE;
}

gboolean
vpa_config_parse_hook (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autofree char *value = raw_value (kf, group, keys[i]);
      gboolean ok;

      if (strcmp (keys[i], "mode") == 0)
        {
          ok = parse_mode (config, value, error);
        }
      else if (strcmp (keys[i], "state-dir") == 0)
        {
          ok = parse_state_dir (config, value, error);
        }
      else
        {
          ok = key_error (error, config, keys[i], value,
                          "unknown key (expected mode or state-dir)");
        }
      if (!ok)
        return FALSE;
    }
  return TRUE;
}
