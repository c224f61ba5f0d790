/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The configuration's [host] group (Nova's names): the dedicated and
 * shared CPU sets, reserved memory and huge pages, and how cells are
 * allocated, for whole-guest placement.
 */
#include "vpa-config.h"
#include "vpa-config-private.h"

#include <string.h>

#include "vpa-cpuset.h"

/* A page size: KiB, or with a unit (K, M, G, KB, MB, GB, as Nova's
 * string_to_bytes reads them: binary). */
static gboolean
parse_page_size (const char *s, guint64 *kib)
{
  guint64 v, scale = 1;
  char *end = NULL;

  if (!g_ascii_isdigit (*s))
    return FALSE;
  v = g_ascii_strtoull (s, &end, 10);
  if (*end != '\0')
    {
      if (g_ascii_strcasecmp (end, "K") == 0 || g_ascii_strcasecmp (end, "KB") == 0)
        {
          scale = 1;
        }
      else if (g_ascii_strcasecmp (end, "M") == 0 || g_ascii_strcasecmp (end, "MB") == 0)
        {
          scale = 1024;
        }
      else if (g_ascii_strcasecmp (end, "G") == 0 || g_ascii_strcasecmp (end, "GB") == 0)
        {
          scale = 1024 * 1024;
        }
      else
        {
          return FALSE;
        }
    }
  if (v == 0 || v > G_MAXUINT32)
    return FALSE;
  *kib = v * scale;
  return TRUE;
}

/* "node:0,size:2048,count:64" */
static gboolean
parse_reserved_entry (const Loc *loc, const char *entry, VpaReservedPages *out, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (entry, ",", -1);
  gboolean has_node = FALSE, has_size = FALSE, has_count = FALSE;

  for (guint i = 0; parts[i] != NULL; i++)
    {
      char *kv = g_strstrip (parts[i]);
      char *colon = strchr (kv, ':');
      guint64 v;

      if (colon == NULL)
        return vpa_config_loc_error (error, loc, "'%s' is not KEY:VALUE (node, size, count)", kv);
      *colon = '\0';
      if (strcmp (kv, "node") == 0 &&
          g_ascii_string_to_unsigned (colon + 1, 10, 0, G_MAXINT, &v, NULL))
        {
          out->node = (gint) v;
          has_node = TRUE;
        }
      else if (strcmp (kv, "size") == 0 && parse_page_size (colon + 1, &out->size_kib))
        {
          has_size = TRUE;
        }
      else if (strcmp (kv, "count") == 0 &&
               g_ascii_string_to_unsigned (colon + 1, 10, 0, G_MAXUINT32, &out->count, NULL))
        {
          has_count = TRUE;
        }
      else
        {
          return vpa_config_loc_error (error, loc, "'%s:%s' is not a node, a page size or a count", kv, colon + 1);
        }
    }
  if (!has_node || !has_size || !has_count)
    return vpa_config_loc_error (error, loc, "'%s' needs node, size and count", entry);
  return TRUE;
}

static gboolean
parse_host_cpuset (const Loc *loc, const char *value, GArray **out, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!vpa_cpuset_parse (value, out, &local))
    return vpa_config_loc_error (error, loc, "%s", local->message);
  return TRUE;
}

static gboolean
parse_host_key (VpaConfig *config, GKeyFile *kf, const Loc *kloc, GError **error)
{
  g_autofree char *value = vpa_config_get_value (kf, kloc, error);
  Loc loc = *kloc;
  guint64 v;

  if (value == NULL)
    return FALSE;
  loc.value = value;
  if (strcmp (loc.key, "cpu-dedicated-set") == 0)
    return parse_host_cpuset (&loc, value, &config->cpu_dedicated_set, error);
  if (strcmp (loc.key, "cpu-shared-set") == 0)
    return parse_host_cpuset (&loc, value, &config->cpu_shared_set, error);
  if (strcmp (loc.key, "reserved-memory-mb") == 0)
    {
      if (!g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT32, &v, NULL))
        return vpa_config_loc_error (error, &loc, "not a size in MiB");
      config->reserved_memory_kib = v * 1024;
      return TRUE;
    }
  if (strcmp (loc.key, "cell-allocation") == 0)
    {
      if (strcmp (value, "spread") != 0 && strcmp (value, "pack") != 0)
        return vpa_config_loc_error (error, &loc, "expected spread or pack");
      config->cell_pack = strcmp (value, "pack") == 0;
      return TRUE;
    }
  {
    g_auto (GStrv) entries = g_strsplit (value, ";", -1);
    for (guint i = 0; entries[i] != NULL; i++)
      {
        VpaReservedPages r = { 0, 0, 0 };
        char *e = g_strstrip (entries[i]);
        if (*e == '\0')
          continue;
        if (!parse_reserved_entry (&loc, e, &r, error))
          return FALSE;
        g_array_append_val (config->reserved_huge_pages, r);
      }
  }
  return TRUE;
}

gboolean
vpa_config_host_parse (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  static const char *const known[] = { "cpu-dedicated-set", "cpu-shared-set",
                                       "reserved-memory-mb", "reserved-huge-pages",
                                       "cell-allocation", NULL };
  Loc loc = { config->path, group, NULL, NULL };
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);

  if (!vpa_config_check_keys (kf, &loc, known, error))
    return FALSE;
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      Loc kloc = { config->path, group, keys[i], NULL };
      if (!parse_host_key (config, kf, &kloc, error))
        return FALSE;
    }
  if (config->cpu_dedicated_set != NULL && config->cpu_shared_set != NULL)
    {
      for (guint i = 0; i < config->cpu_dedicated_set->len; i++)
        {
          for (guint j = 0; j < config->cpu_shared_set->len; j++)
            {
              if (g_array_index (config->cpu_dedicated_set, guint, i) ==
                  g_array_index (config->cpu_shared_set, guint, j))
                {
                  Loc oloc = { config->path, group, "cpu-shared-set", NULL };
                  return vpa_config_loc_error (error, &oloc, "CPU %u is also in cpu-dedicated-set",
                                               g_array_index (config->cpu_dedicated_set, guint, i));
                }
            }
        }
    }
  return TRUE;
}
