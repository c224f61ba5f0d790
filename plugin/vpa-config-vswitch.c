/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * [physnet NAME] and [tunnel]: the NUMA affinity of NUMA-aware vSwitches
 * (OVS-DPDK, vhost-user), Nova's [neutron_physnet_NAME] numa_nodes and
 * [neutron_tunnel] numa_nodes (docs/vswitch.md). Errors are one line:
 * "FILE: [GROUP] KEY='VALUE': reason", as the rest of the loader's.
 */
#include "vpa-config.h"
#include "vpa-cpuset.h"

#include <string.h>

#define PHYSNET_NAME_MAX 256
#define NODES_TEXT_MAX 200

void
vpa_config_vswitch_affinity_free (VpaVswitchAffinity *aff)
{
  if (aff == NULL)
    return;
  g_free (aff->physnet);
  g_free (aff->group);
  g_clear_pointer (&aff->nodes, g_array_unref);
  g_free (aff);
}

static gboolean G_GNUC_PRINTF (6, 7)
  vswitch_error (GError **error, const char *path, const char *group, const char *key,
                 const char *value, const char *fmt, ...)
{
  g_autofree char *reason = NULL;
  va_list ap;

  va_start (ap, fmt);
  reason = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (key == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s]: %s", path, group, reason);
    }
  else if (value == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s] %s: %s", path, group, key,
                   reason);
    }
  else
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s] %s='%s': %s", path, group,
                   key, value, reason);
    }
  return FALSE;
}

/* The group's name: NULL for [tunnel]; *name set for [physnet NAME]. */
static gboolean
vswitch_group_name (const VpaConfig *config, const char *group, char **name, GError **error)
{
  const char *rest;

  *name = NULL;
  if (g_str_has_prefix (group, "tunnel"))
    {
      rest = group + strlen ("tunnel");
      if (*rest != '\0')
        {
          return vswitch_error (error, config->path, group, NULL, NULL,
                                "[tunnel] takes no name (one tunnel affinity per host)");
        }
      return TRUE;
    }
  *name = g_strstrip (g_strdup (group + strlen ("physnet")));
  if (**name == '\0')
    return vswitch_error (error, config->path, group, NULL, NULL, "missing physnet name");
  if (strlen (*name) > PHYSNET_NAME_MAX)
    {
      return vswitch_error (error, config->path, group, NULL, NULL,
                            "physnet name longer than %d characters", PHYSNET_NAME_MAX);
    }
  for (const char *p = *name; *p != '\0'; p++)
    {
      if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p))
        {
          return vswitch_error (error, config->path, group, NULL, NULL,
                                "physnet names cannot contain blanks or control characters");
        }
    }
  return TRUE;
}

static gboolean
vswitch_check_keys (const VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autofree char *value = NULL;

      if (strcmp (keys[i], "numa-nodes") == 0)
        continue;
      value = g_key_file_get_value (kf, group, keys[i], NULL);
      if (strcmp (keys[i], "numa_nodes") == 0)
        {
          return vswitch_error (error, config->path, group, keys[i], value,
                                "unknown key (the key is numa-nodes)");
        }
      return vswitch_error (error, config->path, group, keys[i], value,
                            "unknown key (expected numa-nodes)");
    }
  return TRUE;
}

/* numa-nodes: a libvirt nodeset ("0", "0,2", "0-1"), or empty for none
 * (Nova's default: the network has no NUMA affinity). */
static gboolean
vswitch_parse_nodes (const VpaConfig *config, GKeyFile *kf, const char *group, GArray **nodes,
                     GError **error)
{
  g_autofree char *raw = g_key_file_get_value (kf, group, "numa-nodes", NULL);
  g_autoptr (GError) local = NULL;
  const char *value;

  *nodes = NULL;
  if (raw == NULL)
    return TRUE;
  value = g_strstrip (raw);
  if (*value == '\0')
    return TRUE;
  if (strlen (value) > NODES_TEXT_MAX)
    {
      return vswitch_error (error, config->path, group, "numa-nodes", NULL,
                            "longer than %d characters", NODES_TEXT_MAX);
    }
  if (!vpa_cpuset_parse (value, nodes, &local))
    {
      return vswitch_error (error, config->path, group, "numa-nodes", value, "%s",
                            local->message);
    }
  return TRUE;
}

gboolean
vpa_config_parse_vswitch (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  g_autoptr (VpaVswitchAffinity) aff = g_new0 (VpaVswitchAffinity, 1);
  g_autofree char *name = NULL;

  g_return_val_if_fail (config != NULL && kf != NULL && group != NULL, FALSE);

  if (!vswitch_group_name (config, group, &name, error))
    return FALSE;
  if (vpa_config_vswitch (config, name) != NULL)
    {
      return vswitch_error (error, config->path, group, NULL, NULL, "%s%s%s written twice",
                            name != NULL ? "physnet '" : "the tunnel", name != NULL ? name : "",
                            name != NULL ? "'" : "");
    }
  if (!vswitch_check_keys (config, kf, group, error) ||
      !vswitch_parse_nodes (config, kf, group, &aff->nodes, error))
    return FALSE;
  if (aff->nodes == NULL)
    aff->nodes = g_array_new (FALSE, FALSE, sizeof (guint));
  aff->physnet = g_steal_pointer (&name);
  aff->group = g_strdup (group);
  g_ptr_array_add (config->vswitch, g_steal_pointer (&aff));
  return TRUE;
}

const VpaVswitchAffinity *
vpa_config_vswitch (const VpaConfig *config, const char *physnet)
{
  g_return_val_if_fail (config != NULL, NULL);

  /* A host has a handful of physnets: a linear look-up is enough, and
   * the group count is bounded by the configuration's size. */
  for (guint i = 0; i < config->vswitch->len; i++)
    {
      const VpaVswitchAffinity *aff = config->vswitch->pdata[i];
      if (g_strcmp0 (aff->physnet, physnet) == 0)
        return aff;
    }
  return NULL;
}

static char *
host_nodes_text (const VpaHost *host)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *cell = &g_array_index (host->cells, VpaCell, i);
      if (out->len > NODES_TEXT_MAX)
        {
          g_string_append (out, ",...");
          break;
        }
      g_string_append_printf (out, "%s%d", i > 0 ? "," : "", cell->id);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

gint64
vpa_config_vswitch_affinity_missing_node (const VpaVswitchAffinity *aff, const VpaHost *host)
{
  g_return_val_if_fail (aff != NULL && host != NULL, -1);

  for (guint j = 0; j < aff->nodes->len; j++)
    {
      guint node = g_array_index (aff->nodes, guint, j);
      if (node > G_MAXINT || vpa_host_cell (host, (gint) node) == NULL)
        return node;
    }
  return -1;
}

gboolean
vpa_config_check_vswitch_nodes (const VpaConfig *config, const VpaHost *host, GError **error)
{
  g_return_val_if_fail (config != NULL && host != NULL, FALSE);

  for (guint i = 0; i < config->vswitch->len; i++)
    {
      const VpaVswitchAffinity *aff = config->vswitch->pdata[i];
      gint64 node = vpa_config_vswitch_affinity_missing_node (aff, host);
      g_autofree char *have = NULL;

      if (node < 0)
        continue;
      have = host_nodes_text (host);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: [%s] numa-nodes: node %" G_GINT64_FORMAT
                   " is not on host %s (its nodes: %s)",
                   config->path, aff->group, node, host->source, have);
      return FALSE;
    }
  return TRUE;
}
