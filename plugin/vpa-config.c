/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The GKeyFile configuration. Validation follows Nova's devspec.py and
 * the [pci] alias schema; every error is one line naming the file, the
 * group, the key and the offending value.
 */
#include "vpa-config.h"
#include "vpa-config-private.h"
#include "vpa-domain.h"
#include "vpa-reserve.h"

#include <stdarg.h>
#include <string.h>

#define DEFAULT_SOURCE "sysfs:/"
#define BUILTIN_PATH "(built-in defaults)"
#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */
#define ANY (-1)

/* ------------------------------------------------------------------ */
/* Object life cycle                                                   */
/* ------------------------------------------------------------------ */

static VpaDeviceSpec *
device_spec_new (const char *name)
{
  VpaDeviceSpec *spec = g_new0 (VpaDeviceSpec, 1);
  spec->name = g_strdup (name);
  spec->exact_addr = VPA_ADDR_NONE;
  spec->tags = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_spec_pair_free);
  for (guint i = 0; i < G_N_ELEMENTS (spec->glob); i++)
    spec->glob[i] = ANY;
  return spec;
}

static void
device_spec_free (VpaDeviceSpec *spec)
{
  if (spec == NULL)
    return;
  g_free (spec->name);
  g_free (spec->address);
  g_free (spec->devname);
  g_ptr_array_unref (spec->tags);
  g_free (spec);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaDeviceSpec, device_spec_free)

static VpaConfig *
config_new (const char *path)
{
  VpaConfig *config = g_new0 (VpaConfig, 1);
  const char *dirs[] = { "/run/libvirt/qemu", "/etc/libvirt/qemu", NULL };

  config->path = g_strdup (path);
  config->inventory_source = g_strdup (DEFAULT_SOURCE);
  config->device_specs = g_ptr_array_new_with_free_func ((GDestroyNotify) device_spec_free);
  config->aliases = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_config_alias_free);
  config->state_dirs = g_strdupv ((char **) dirs);
  config->hook_state_dir = g_strdup (VPA_CONFIG_STATE_DIR_DEFAULT);
  config->tagsets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_ptr_array_add (config->tagsets, g_ptr_array_new ());
  config->reserved_huge_pages = g_array_new (FALSE, FALSE, sizeof (VpaReservedPages));
  config->vswitch = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_config_vswitch_affinity_free);
  config->spec_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  config->alias_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  config->tagset_by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return config;
}

VpaConfig *
vpa_config_new_default (void)
{
  return config_new (BUILTIN_PATH);
}

void
vpa_config_free (VpaConfig *config)
{
  if (config == NULL)
    return;
  g_free (config->path);
  g_free (config->inventory_source);
  g_hash_table_unref (config->spec_by_name);
  g_hash_table_unref (config->alias_by_name);
  g_hash_table_unref (config->tagset_by_key);
  /* tagsets borrow the device specs' pairs: drop them first */
  g_ptr_array_unref (config->tagsets);
  g_ptr_array_unref (config->device_specs);
  g_ptr_array_unref (config->aliases);
  g_strfreev (config->state_dirs);
  g_free (config->hook_state_dir);
  g_clear_pointer (&config->cpu_dedicated_set, g_array_unref);
  g_clear_pointer (&config->cpu_shared_set, g_array_unref);
  g_array_unref (config->reserved_huge_pages);
  g_ptr_array_unref (config->vswitch);
  vpa_reserve_set_free (config->reservations);
  g_free (config);
}

const VpaDeviceSpec *
vpa_config_device_spec (const VpaConfig *config, const char *name)
{
  g_return_val_if_fail (config != NULL && name != NULL, NULL);
  return g_hash_table_lookup (config->spec_by_name, name);
}

/* ------------------------------------------------------------------ */
/* Parsing helpers                                                     */
/* ------------------------------------------------------------------ */

gboolean
vpa_config_loc_error (GError **error, const Loc *loc, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *reason = NULL;

  va_start (ap, fmt);
  reason = g_strdup_vprintf (fmt, ap);
  va_end (ap);

  if (loc->key == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s]: %s", loc->path,
                   loc->group, reason);
    }
  else if (loc->value == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s] %s: %s", loc->path,
                   loc->group, loc->key, reason);
    }
  else
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s] %s='%s': %s", loc->path,
                   loc->group, loc->key, loc->value, reason);
    }
  return FALSE;
}

/* GKeyFile's string escapes (\s \n \t \r \\). GLib 2.74 sets its error
 * twice for a value with an invalid escape followed by a trailing
 * backslash, so escapes are checked here first. */
static gboolean
check_escapes (const Loc *loc, const char *raw, GError **error)
{
  for (const char *p = raw; p != NULL && *p != '\0'; p++)
    {
      if (*p != '\\')
        continue;
      p++;
      if (*p == '\0')
        return vpa_config_loc_error (error, loc, "escape character at end of line");
      if (strchr ("sntr\\", *p) == NULL)
        return vpa_config_loc_error (error, loc, "invalid escape sequence '\\%c'", *p);
    }
  return TRUE;
}

/* The value of key, whitespace-stripped. */
char *
vpa_config_get_value (GKeyFile *kf, const Loc *loc, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *raw = g_key_file_get_value (kf, loc->group, loc->key, NULL);
  g_autofree char *value = NULL;

  {
    Loc raw_loc = *loc;
    raw_loc.value = raw;
    if (!check_escapes (&raw_loc, raw, error))
      return NULL;
  }
  value = g_key_file_get_string (kf, loc->group, loc->key, &local);

  if (value == NULL)
    {
      Loc raw_loc = *loc;
      raw_loc.value = raw;
      vpa_config_loc_error (error, &raw_loc, "%s", local->message);
      return NULL;
    }
  return g_strstrip (g_steal_pointer (&value));
}

/* Drops inline "  # comments" from group and key lines: the documented
 * example has them, GKeyFile only knows whole-line comments. A '#' that
 * does not follow white space is kept. */
static char *
strip_inline_comments (const char *data, gsize len)
{
  GString *out = g_string_sized_new (len + 1);
  const char *end = data + len;

  for (const char *line = data; line < end;)
    {
      const char *nl = memchr (line, '\n', (gsize) (end - line));
      const char *eol = nl != NULL ? nl : end;
      const char *p = line, *cut = eol;

      while (p < eol && g_ascii_isspace (*p))
        p++;
      if (p < eol && *p != '#')
        {
          for (const char *h = p + 1; h < eol; h++)
            {
              if (*h == '#' && g_ascii_isspace (h[-1]))
                {
                  cut = h;
                  break;
                }
            }
        }
      while (cut > line && cut != eol && g_ascii_isspace (cut[-1]))
        cut--;
      g_string_append_len (out, line, cut - line);
      if (nl != NULL)
        g_string_append_c (out, '\n');
      line = eol + 1;
    }
  return g_string_free (out, FALSE);
}

/* Nova's vendor_id/product_id: hex, at most 0xffff, normalised to four
 * lowercase digits. Device specs also take "*" (any) and fewer digits,
 * as int(value, 16) does; aliases want exactly four digits (the schema). */
gboolean
vpa_config_parse_id (const Loc *loc, gboolean alias, char out[8], GError **error)
{
  const char *v = loc->value;
  gsize len = strlen (v);
  guint64 n;

  if (!alias && strcmp (v, "*") == 0)
    {
      out[0] = '\0';
      return TRUE;
    }
  if (len == 0 || len > 4 || (alias && len != 4))
    return vpa_config_loc_error (error, loc, "expected %s hexadecimal digits", alias ? "4" : "1 to 4");
  for (gsize i = 0; i < len; i++)
    {
      if (!g_ascii_isxdigit (v[i]))
        return vpa_config_loc_error (error, loc, "not a hexadecimal number");
    }
  n = g_ascii_strtoull (v, NULL, 16);
  g_snprintf (out, 8, "%04x", (guint) n);
  return TRUE;
}

/* One field of an address glob: "" or "*" is any (-1). */
static gboolean
parse_addr_field (const Loc *loc, const char *what, const char *field, guint max,
                  gint64 *out, GError **error)
{
  g_autofree char *s = g_strstrip (g_strdup (field));
  gsize len = strlen (s);
  guint64 n;

  if (len == 0 || strcmp (s, "*") == 0)
    {
      *out = ANY;
      return TRUE;
    }
  for (gsize i = 0; i < len; i++)
    {
      if (!g_ascii_isxdigit (s[i]))
        return vpa_config_loc_error (error, loc, "%s '%s' is not a hexadecimal number", what, s);
    }
  n = len > 8 ? G_MAXUINT64 : g_ascii_strtoull (s, NULL, 16);
  if (n > max)
    return vpa_config_loc_error (error, loc, "%s '%s' is greater than the maximum %x", what, s, max);
  *out = (gint64) n;
  return TRUE;
}

/* Nova's PciAddressGlobSpec: [[[[domain]:]bus]:][slot][.[function]]. */
static gboolean
parse_address (VpaDeviceSpec *spec, const Loc *loc, GError **error)
{
  static const char *const what[] = { "domain", "bus", "slot", "function" };
  static const guint max[] = { 0xffff, 0xff, 0x1f, 0x7 };
  const char *dot = strchr (loc->value, '.');
  g_autofree char *dbs = g_strndup (loc->value, dot ? (gsize) (dot - loc->value)
                                                    : strlen (loc->value));
  g_auto (GStrv) fields = g_strsplit (dbs, ":", -1);
  guint n = g_strv_length (fields);
  const char *parts[4] = { "", "", "", dot ? dot + 1 : "" };

  if (*loc->value == '\0')
    return vpa_config_loc_error (error, loc, "empty address");
  if (n > 3)
    {
      return vpa_config_loc_error (error, loc,
                                   "expected [[[[domain]:]bus]:][slot][.[function]]");
    }
  for (guint i = 0; i < n; i++)
    parts[3 - n + i] = fields[i];
  for (guint i = 0; i < 4; i++)
    {
      if (!parse_addr_field (loc, what[i], parts[i], max[i], &spec->glob[i], error))
        return FALSE;
    }

  /* GKeyFile lists a key written twice in a group twice (the last value
   * wins on lookup), so this can run again for the same spec. */
  g_free (spec->address);
  spec->address = g_strdup (loc->value);
  if (spec->glob[0] != ANY && spec->glob[1] != ANY && spec->glob[2] != ANY &&
      spec->glob[3] != ANY)
    {
      spec->exact_addr = VPA_ADDR (spec->glob[0], spec->glob[1], spec->glob[2],
                                   spec->glob[3]);
    }
  return TRUE;
}

static gboolean
valid_tag_key (const char *key)
{
  if (*key == '\0')
    return FALSE;
  for (const char *p = key; *p != '\0'; p++)
    {
      if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
        return FALSE;
    }
  return TRUE;
}

static gint
pair_cmp (gconstpointer a, gconstpointer b)
{
  const VpaSpecPair *pa = *(VpaSpecPair *const *) a;
  const VpaSpecPair *pb = *(VpaSpecPair *const *) b;
  return strcmp (pa->key, pb->key);
}

/* A tag set's content as one string, each key and value preceded by its
 * length (a value may hold any character), so equal sets have equal keys. */
static char *
tagset_key (GPtrArray *tags)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < tags->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (tags, i);
      g_string_append_printf (s, "%zu:%s", strlen (pair->key), pair->key);
      if (pair->value == NULL)
        {
          g_string_append (s, "-;");
        }
      else
        {
          g_string_append_printf (s, "%zu:%s;", strlen (pair->value), pair->value);
        }
    }
  return g_string_free (s, FALSE);
}

/* Equal tag sets share one id, so pools group on an integer. */
static guint
intern_tagset (VpaConfig *config, GPtrArray *tags)
{
  g_autofree char *key = tagset_key (tags);
  gpointer found = g_hash_table_lookup (config->tagset_by_key, key);
  GPtrArray *set;

  /* [0], the empty set, is there from the start, not in the table. */
  if (tags->len == 0)
    return 0;
  if (found != NULL)
    return GPOINTER_TO_UINT (found) - 1;
  set = g_ptr_array_new ();
  for (guint i = 0; i < tags->len; i++)
    g_ptr_array_add (set, g_ptr_array_index (tags, i));
  g_ptr_array_add (config->tagsets, set);
  g_hash_table_insert (config->tagset_by_key, g_steal_pointer (&key),
                       GUINT_TO_POINTER (config->tagsets->len));
  return config->tagsets->len - 1;
}

/* ------------------------------------------------------------------ */
/* Groups                                                              */
/* ------------------------------------------------------------------ */

/* Device properties a tag must not shadow, and how to write them. */
static const struct {
  const char *tag;
  const char *hint;
} reserved_tags[] = {
  { "vendor_id", " (the key is vendor-id)" },
  { "product_id", " (the key is product-id)" },
  { "address", "" },
  { "devname", "" },
  { "dev_type", "" },
  { "numa_node", "" },
};

/* Levenshtein distance of two short strings (longer ones: far apart). */
static guint
edit_distance (const char *a, const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  guint row[65];

  if (la > 64 || lb > 64)
    return G_MAXUINT;
  for (gsize j = 0; j <= lb; j++)
    row[j] = (guint) j;
  for (gsize i = 1; i <= la; i++)
    {
      guint diag = row[0];
      row[0] = (guint) i;
      for (gsize j = 1; j <= lb; j++)
        {
          guint up = row[j];
          guint best = MIN (row[j] + 1, row[j - 1] + 1);
          row[j] = MIN (best, diag + (a[i - 1] != b[j - 1]));
          diag = up;
        }
    }
  return row[lb];
}

/* The keys a misspelling of which would silently become a tag that then
 * matches every device (adress=, phyiscal-network=). '-' and '_' alike. */
static const char *const near_miss_keys[] = {
  "address",
  "vendor_id",
  "product_id",
  "devname",
  "physical_network",
  "trusted",
  "one_time_use",
};

/* Other names for the keys above, too far from them for the distance:
 * what people write for them, in Nova's configuration and elsewhere. */
static const struct {
  const char *name;
  const char *key;
} key_aliases[] = {
  { "physnet", "physical-network" },
  { "phys-net", "physical-network" },
  { "physical-net", "physical-network" },
  { "phys-network", "physical-network" },
  { "vendor", "vendor-id" },
  { "product", "product-id" },
  { "device-id", "product-id" },
  { "addr", "address" },
  { "pci-address", "address" },
  { "netdev", "devname" },
};

const char *
vpa_config_key_alias (const char *key)
{
  g_autofree char *k = g_strdelimit (g_ascii_strdown (key, -1), "_", '-');

  for (guint i = 0; i < G_N_ELEMENTS (key_aliases); i++)
    {
      if (strcmp (k, key_aliases[i].name) == 0)
        return key_aliases[i].key;
    }
  return NULL;
}

static gboolean
check_near_miss (const char *tag, const Loc *loc, GError **error)
{
  g_autofree char *lower = g_ascii_strdown (tag, -1);
  gsize len = strlen (lower);
  const char *alias = vpa_config_key_alias (tag);

  if (alias != NULL)
    {
      return vpa_config_loc_error (error, loc,
                                   "unknown key; did you mean '%s'? ('%s' is another name for it, "
                                   "refused rather than taken as a tag)",
                                   alias, loc->key);
    }

  /* physical_network, the usual tag, is one of them: no distance to
   * compute; nor where the lengths alone are more than 2 apart. */
  for (guint i = 0; i < G_N_ELEMENTS (near_miss_keys); i++)
    {
      if (strcmp (lower, near_miss_keys[i]) == 0)
        return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (near_miss_keys); i++)
    {
      gsize klen = strlen (near_miss_keys[i]);
      guint d = (len > klen ? len - klen : klen - len) > 2
                  ? G_MAXUINT
                  : edit_distance (lower, near_miss_keys[i]);
      if (d > 0 && d <= 2)
        {
          g_autofree char *want = g_strdup (near_miss_keys[i]);
          g_strdelimit (want, "_", '-');
          return vpa_config_loc_error (error, loc,
                                       "unknown key; did you mean '%s'? (a key this close to it is "
                                       "refused rather than taken as a tag)",
                                       want);
        }
    }
  return TRUE;
}

static gboolean
parse_device_spec_tag (VpaDeviceSpec *spec, const Loc *loc, GError **error)
{
  g_autofree char *tag = g_strdup (loc->key);

  if (!valid_tag_key (loc->key))
    return vpa_config_loc_error (error, loc, "a tag name takes letters, digits, '-' and '_' only");
  g_strdelimit (tag, "-", '_');
  if (!check_near_miss (tag, loc, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (reserved_tags); i++)
    {
      if (strcmp (tag, reserved_tags[i].tag) == 0)
        {
          return vpa_config_loc_error (error, loc, "'%s' is a device property, not a tag%s", tag,
                                       reserved_tags[i].hint);
        }
    }
  for (guint i = 0; i < spec->tags->len; i++)
    {
      if (strcmp (((VpaSpecPair *) g_ptr_array_index (spec->tags, i))->key, tag) == 0)
        return vpa_config_loc_error (error, loc, "tag '%s' is set twice", tag);
    }
  /* Nova's one_time_use, a tag normalised to true or false (vpa-reserve.h) */
  if (strcmp (tag, "one_time_use") == 0 &&
      !vpa_reserve_one_time_use_value (loc->value, &spec->one_time_use))
    return vpa_config_loc_error (error, loc, "expected true or false");
  g_ptr_array_add (spec->tags,
                   vpa_spec_pair_new (tag, strcmp (tag, "one_time_use") != 0 ? loc->value
                                           : spec->one_time_use              ? "true"
                                                                             : "false"));
  return TRUE;
}

static gboolean
parse_device_spec_key (VpaDeviceSpec *spec, const Loc *loc, GError **error)
{
  if (strcmp (loc->key, "address") == 0)
    return parse_address (spec, loc, error);
  if (strcmp (loc->key, "vendor-id") == 0)
    return vpa_config_parse_id (loc, FALSE, spec->vendor_id, error);
  if (strcmp (loc->key, "product-id") == 0)
    return vpa_config_parse_id (loc, FALSE, spec->product_id, error);
  if (strcmp (loc->key, "devname") == 0)
    {
      if (*loc->value == '\0' || strlen (loc->value) > IFNAME_MAX ||
          strpbrk (loc->value, "/: \t") != NULL)
        return vpa_config_loc_error (error, loc, "not a network interface name");
      g_free (spec->devname); /* a key written twice: see parse_address */
      spec->devname = g_strdup (loc->value);
      return TRUE;
    }
  return parse_device_spec_tag (spec, loc, error);
}

static gboolean
parse_device_spec (VpaConfig *config, GKeyFile *kf, const char *group, const char *name,
                   GError **error)
{
  g_autoptr (VpaDeviceSpec) spec = device_spec_new (name);
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      Loc loc = { config->path, group, keys[i], NULL };
      g_autofree char *value = vpa_config_get_value (kf, &loc, error);

      if (value == NULL)
        return FALSE;
      loc.value = value;
      if (!parse_device_spec_key (spec, &loc, error))
        return FALSE;
    }
  if (spec->address != NULL && spec->devname != NULL)
    {
      Loc loc = { config->path, group, "devname", spec->devname };
      return vpa_config_loc_error (error, &loc, "cannot be combined with address='%s'",
                                   spec->address);
    }
  g_ptr_array_sort (spec->tags, pair_cmp);
  spec->tagset = intern_tagset (config, spec->tags);
  g_hash_table_insert (config->spec_by_name, spec->name, spec);
  g_ptr_array_add (config->device_specs, g_steal_pointer (&spec));
  return TRUE;
}

gboolean
vpa_config_check_keys (GKeyFile *kf, const Loc *group, const char *const *known, GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group->group, NULL, NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      if (!g_strv_contains (known, keys[i]))
        {
          g_autofree char *value = g_key_file_get_value (kf, group->group, keys[i], NULL);
          Loc loc = { group->path, group->group, keys[i], value };
          return vpa_config_loc_error (error, &loc, "unknown key");
        }
    }
  return TRUE;
}

static gboolean
parse_inventory (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  static const char *const known[] = { "source", NULL };
  Loc loc = { config->path, group, "source", NULL };
  g_autofree char *value = NULL;

  if (!vpa_config_check_keys (kf, &loc, known, error))
    return FALSE;
  if (!g_key_file_has_key (kf, group, "source", NULL))
    return TRUE;
  value = vpa_config_get_value (kf, &loc, error);
  if (value == NULL)
    return FALSE;
  loc.value = value;
  if (*value == '\0')
    return vpa_config_loc_error (error, &loc, "empty inventory source");
  g_free (config->inventory_source);
  config->inventory_source = g_steal_pointer (&value);
  return TRUE;
}

static gboolean
parse_claims (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  static const char *const known[] = { "state-dirs", NULL };
  Loc loc = { config->path, group, "state-dirs", NULL };
  g_autofree char *value = NULL;
  g_autoptr (GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) items = NULL;

  if (!vpa_config_check_keys (kf, &loc, known, error))
    return FALSE;
  if (!g_key_file_has_key (kf, group, "state-dirs", NULL))
    return TRUE;
  value = vpa_config_get_value (kf, &loc, error);
  if (value == NULL)
    return FALSE;
  loc.value = value;
  items = g_strsplit (value, ";", -1);
  for (guint i = 0; items[i] != NULL; i++)
    {
      char *dir = g_strstrip (items[i]);
      if (*dir == '\0')
        continue;
      if (!g_path_is_absolute (dir))
        return vpa_config_loc_error (error, &loc, "'%s' is not an absolute path", dir);
      g_ptr_array_add (dirs, g_strdup (dir));
    }
  g_ptr_array_add (dirs, NULL);
  g_strfreev (config->state_dirs);
  config->state_dirs = (GStrv) g_ptr_array_free (g_steal_pointer (&dirs), FALSE);
  return TRUE;
}

static gboolean
parse_group (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  Loc loc = { config->path, group, NULL, NULL };
  g_autofree char *name = NULL;

  if (strcmp (group, "host") == 0)
    return vpa_config_host_parse (config, kf, group, error);
  if (strcmp (group, "inventory") == 0)
    return parse_inventory (config, kf, group, error);
  if (strcmp (group, "claims") == 0)
    return parse_claims (config, kf, group, error);
  if (strcmp (group, "hook") == 0)
    return vpa_config_parse_hook (config, kf, group, error);
  if (g_str_has_prefix (group, "device-spec ") || strcmp (group, "device-spec") == 0)
    {
      name = g_strstrip (g_strdup (group + strlen ("device-spec")));
      if (*name == '\0')
        return vpa_config_loc_error (error, &loc, "missing device spec name");
      if (vpa_config_device_spec (config, name) != NULL)
        return vpa_config_loc_error (error, &loc, "device spec '%s' defined twice", name);
      return parse_device_spec (config, kf, group, name, error);
    }
  if (g_str_has_prefix (group, "physnet ") || strcmp (group, "physnet") == 0 ||
      g_str_has_prefix (group, "tunnel ") || strcmp (group, "tunnel") == 0)
    return vpa_config_parse_vswitch (config, kf, group, error);
  if (g_str_has_prefix (group, "alias ") || strcmp (group, "alias") == 0)
    {
      if (!vpa_config_alias_parse_name (&loc, group + strlen ("alias"), &name, error))
        return FALSE;
      return vpa_config_alias_parse (config, kf, group, name, error);
    }
  return vpa_config_loc_error (error, &loc,
                               "unknown group (expected inventory, device-spec NAME, alias NAME, claims, host, "
                               "hook, physnet NAME or tunnel)");
}

/* GKeyFile merges a group written twice into one, silently (the second
 * [device-spec x]'s address replaces the first's): refuse it. */
static gboolean
check_group_headers (const char *text, const char *path, GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint line_no = 0;

  for (const char *line = text; *line != '\0';)
    {
      const char *nl = strchr (line, '\n');
      const char *eol = nl != NULL ? nl : line + strlen (line);
      const char *p = line, *q = eol;

      line_no++;
      while (p < eol && g_ascii_isspace (*p))
        p++;
      while (q > p && g_ascii_isspace (q[-1]))
        q--;
      if (q - p >= 2 && *p == '[' && q[-1] == ']')
        {
          char *name = g_strndup (p + 1, (gsize) (q - p - 2));
          gpointer first = g_hash_table_lookup (seen, name);

          if (first != NULL)
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s:%u: [%s]: the group is written twice (first at line %u); "
                           "write each group once",
                           path, line_no, name, GPOINTER_TO_UINT (first));
              g_free (name);
              return FALSE;
            }
          g_hash_table_insert (seen, name, GUINT_TO_POINTER (line_no));
        }
      if (nl == NULL)
        break;
      line = nl + 1;
    }
  return TRUE;
}

VpaConfig *
vpa_config_load_data (const char *data, gsize len, const char *path, GError **error)
{
  g_autoptr (VpaConfig) config = config_new (path != NULL ? path : "(config)");
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local = NULL;
  g_auto (GStrv) groups = NULL;
  g_autofree char *text = NULL;
  const char *nul;

  g_return_val_if_fail (data != NULL || len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Everything after a NUL would be dropped without a word. */
  if (len > 0 && (nul = memchr (data, '\0', len)) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: NUL byte at offset %" G_GSIZE_FORMAT ": not a text file", config->path,
                   (gsize) (nul - data));
      return NULL;
    }
  text = strip_inline_comments (data != NULL ? data : "", len);
  if (!check_group_headers (text, config->path, error))
    return NULL;
  if (!g_key_file_load_from_data (kf, text, (gsize) -1, G_KEY_FILE_NONE, &local))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: %s", config->path,
                   local->message);
      return NULL;
    }
  groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      if (!parse_group (config, kf, groups[i], error))
        return NULL;
    }
  return g_steal_pointer (&config);
}

VpaConfig *
vpa_config_load_file (const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr (GError) local = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  if (!g_file_get_contents (path, &data, &len, &local))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: cannot read: %s", path,
                   local->message);
      return NULL;
    }
  return vpa_config_load_data (data, len, path, error);
}

/* ------------------------------------------------------------------ */
/* Device matching (Nova's PciDeviceSpec.match, first match wins)      */
/* ------------------------------------------------------------------ */

static gboolean
glob_match (const VpaDeviceSpec *spec, VpaAddr addr)
{
  const gint64 fields[4] = { VPA_ADDR_DOMAIN (addr), VPA_ADDR_BUS (addr),
                             VPA_ADDR_SLOT (addr), VPA_ADDR_FUNCTION (addr) };

  for (guint i = 0; i < 4; i++)
    {
      if (spec->glob[i] != ANY && spec->glob[i] != fields[i])
        return FALSE;
    }
  return TRUE;
}

static gboolean
spec_matches (const VpaDeviceSpec *spec, const VpaHost *host, const VpaDevice *dev)
{
  if (spec->vendor_id[0] != '\0' && strcmp (spec->vendor_id, dev->vendor_id) != 0)
    return FALSE;
  if (spec->product_id[0] != '\0' && strcmp (spec->product_id, dev->product_id) != 0)
    return FALSE;
  if (spec->exact_addr != VPA_ADDR_NONE)
    {
      /* A PF's address also matches its VFs: the VF names its PF. */
      return dev->addr == spec->exact_addr ||
             (dev->dev_type == VPA_DEV_TYPE_VF && dev->parent_addr == spec->exact_addr);
    }
  if (spec->address != NULL)
    return glob_match (spec, dev->addr);
  if (spec->devname != NULL)
    {
      const VpaDevice *pf;

      if (g_strcmp0 (dev->netdev, spec->devname) == 0)
        return TRUE;
      if (dev->dev_type != VPA_DEV_TYPE_VF || dev->parent_index < 0)
        return FALSE;
      pf = vpa_host_device (host, (guint) dev->parent_index);
      return g_strcmp0 (pf->netdev, spec->devname) == 0;
    }
  return TRUE;
}

/* PCI class 0x06: host, ISA, PCI-to-PCI bridges and the like. Handing one
 * to a guest takes the devices behind it from the host. */
#define VPA_PCI_CLASS_BRIDGE 0x06

gboolean
vpa_config_never_assignable (const VpaDevice *dev)
{
  return (dev->class_code >> 16) == VPA_PCI_CLASS_BRIDGE;
}

const VpaDeviceSpec *
vpa_config_match_device (const VpaConfig *config, const VpaHost *host, guint i)
{
  const VpaDevice *dev;

  g_return_val_if_fail (config != NULL && host != NULL, NULL);
  g_return_val_if_fail (i < host->devices->len, NULL);

  /* Nova's empty whitelist: without a device spec nothing is assignable. */
  dev = vpa_host_device (host, i);
  if (vpa_config_never_assignable (dev))
    return NULL;
  for (guint s = 0; s < config->device_specs->len; s++)
    {
      const VpaDeviceSpec *spec = g_ptr_array_index (config->device_specs, s);
      if (spec_matches (spec, host, dev))
        return spec;
    }
  return NULL;
}

VpaConfig *
vpa_config_lookup (const char *path, gboolean use_env, GError **error)
{
  const char *env = use_env ? g_getenv ("VPA_CONFIG") : NULL;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (path == NULL && env != NULL && *env != '\0')
    path = env;
  if (path == NULL && g_file_test (VPA_CONFIG_DEFAULT_PATH, G_FILE_TEST_EXISTS))
    path = VPA_CONFIG_DEFAULT_PATH;
  if (path == NULL)
    return vpa_config_new_default ();
  return vpa_config_load_file (path, error);
}
