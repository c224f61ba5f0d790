/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The configuration's [alias NAME] groups: Nova's [pci] alias, one spec
 * a group, further specs of one alias in [alias NAME:2], ... (which
 * must agree on device type and NUMA policy), and their lookup by name.
 */
#include "vpa-config.h"
#include "vpa-config-private.h"

#include <string.h>

#define ALIAS_NAME_MAX 256

static VpaAlias *
alias_new (const char *name)
{
  VpaAlias *alias = g_new0 (VpaAlias, 1);
  alias->name = g_strdup (name);
  alias->specs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_spec_free);
  alias->policy = VPA_POLICY_LEGACY;
  return alias;
}

void
vpa_config_alias_free (VpaAlias *alias)
{
  if (alias == NULL)
    return;
  g_free (alias->name);
  g_ptr_array_unref (alias->specs);
  g_free (alias);
}

const VpaAlias *
vpa_config_alias (const VpaConfig *config, const char *name)
{
  g_return_val_if_fail (config != NULL && name != NULL, NULL);
  return g_hash_table_lookup (config->alias_by_name, name);
}

static gboolean
parse_alias_key (VpaSpec *spec, gboolean *has_policy, VpaPolicy *policy, const Loc *loc,
                 GError **error)
{
  char id[8];
  VpaDevType type;

  if (strcmp (loc->key, "vendor-id") == 0 || strcmp (loc->key, "product-id") == 0)
    {
      if (!vpa_config_parse_id (loc, TRUE, id, error))
        return FALSE;
      vpa_spec_set (spec, loc->key[0] == 'v' ? "vendor_id" : "product_id", id);
      return TRUE;
    }
  if (strcmp (loc->key, "device-type") == 0)
    {
      if (!vpa_dev_type_from_string (loc->value, &type))
        return vpa_config_loc_error (error, loc, "expected type-PCI, type-PF or type-VF");
      vpa_spec_set (spec, "dev_type", loc->value);
      return TRUE;
    }
  if (strcmp (loc->key, "numa-policy") == 0)
    {
      /* Nova: an empty numa_policy is legacy, the default */
      if (*loc->value == '\0')
        return TRUE;
      if (!vpa_policy_from_string (loc->value, policy))
        return vpa_config_loc_error (error, loc, "expected required, legacy, preferred or socket");
      *has_policy = TRUE;
      return TRUE;
    }
  return vpa_config_loc_error (error, loc, "unknown key");
}

/* Repeated specs of one alias must agree (Nova's "NUMA policy mismatch"
 * and "Device type mismatch"); Nova also fails when one omits
 * device_type, so every spec of a repeated alias must give it. */
static gboolean
check_alias_agrees (VpaAlias *alias, VpaSpec *spec, gboolean has_policy,
                    VpaPolicy policy, const Loc *group, GError **error)
{
  const VpaSpec *first = g_ptr_array_index (alias->specs, 0);
  const char *type = vpa_spec_get (spec, "dev_type", NULL);
  const char *first_type = vpa_spec_get (first, "dev_type", NULL);
  VpaPolicy first_policy = alias->policy;
  Loc loc = *group;

  if (type == NULL)
    {
      loc.key = "device-type";
      return vpa_config_loc_error (error, &loc, "required: alias '%s' has several specs",
                                   alias->name);
    }
  if (first_type == NULL)
    {
      return vpa_config_loc_error (error, &loc,
                                   "alias '%s' has several specs, so each must set device-type (an earlier one does not)", alias->name);
    }
  if (strcmp (type, first_type) != 0)
    {
      loc.key = "device-type";
      loc.value = type;
      return vpa_config_loc_error (error, &loc, "differs from '%s' in another spec of alias '%s'",
                                   first_type, alias->name);
    }
  if ((has_policy ? policy : VPA_POLICY_LEGACY) != first_policy)
    {
      loc.key = "numa-policy";
      loc.value = has_policy ? vpa_policy_to_string (policy) : "";
      return vpa_config_loc_error (error, &loc, "differs from '%s' in another spec of alias '%s'",
                                   vpa_policy_to_string (first_policy), alias->name);
    }
  return TRUE;
}

gboolean
vpa_config_alias_parse (VpaConfig *config, GKeyFile *kf, const char *group, const char *name,
                        GError **error)
{
  g_autoptr (VpaSpec) spec = vpa_spec_new ();
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  VpaAlias *alias = (VpaAlias *) vpa_config_alias (config, name);
  gboolean has_policy = FALSE;
  VpaPolicy policy = VPA_POLICY_LEGACY;
  Loc loc = { config->path, group, NULL, NULL };

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      Loc kloc = { config->path, group, keys[i], NULL };
      g_autofree char *value = vpa_config_get_value (kf, &kloc, error);

      if (value == NULL)
        return FALSE;
      kloc.value = value;
      if (!parse_alias_key (spec, &has_policy, &policy, &kloc, error))
        return FALSE;
    }
  if (alias == NULL)
    {
      alias = alias_new (name);
      alias->has_policy = has_policy;
      alias->policy = policy;
      g_ptr_array_add (config->aliases, alias);
      g_hash_table_insert (config->alias_by_name, alias->name, alias);
    }
  else if (!check_alias_agrees (alias, spec, has_policy, policy, &loc, error))
    return FALSE;
  alias->has_policy |= has_policy;
  g_ptr_array_add (alias->specs, g_steal_pointer (&spec));
  return TRUE;
}

/* "NAME" or "NAME:N" (N >= 2, a further spec of the same alias). */
gboolean
vpa_config_alias_parse_name (const Loc *loc, const char *rest, char **name, GError **error)
{
  const char *colon = strchr (rest, ':');
  g_autofree char *base = g_strstrip (g_strndup (rest, colon ? (gsize) (colon - rest)
                                                             : strlen (rest)));
  guint64 n = 0;

  if (colon != NULL &&
      (!g_ascii_string_to_unsigned (colon + 1, 10, 2, G_MAXUINT, &n, NULL)))
    {
      return vpa_config_loc_error (error, loc,
                                   "alias names cannot contain ':' (further specs of alias NAME are [alias NAME:2], [alias NAME:3], ...)");
    }
  if (*base == '\0')
    return vpa_config_loc_error (error, loc, "missing alias name");
  if (strlen (base) > ALIAS_NAME_MAX)
    return vpa_config_loc_error (error, loc, "alias name longer than %d characters", ALIAS_NAME_MAX);
  if (strchr (base, ',') != NULL)
    return vpa_config_loc_error (error, loc, "alias names cannot contain ','");
  *name = g_steal_pointer (&base);
  return TRUE;
}
