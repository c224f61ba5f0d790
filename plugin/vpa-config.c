/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The GKeyFile configuration. Validation follows Nova's devspec.py and
 * the [pci] alias schema; every error is one line naming the file, the
 * group, the key and the offending value.
 */
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-reserve.h"

#include <stdarg.h>
#include <string.h>

#define DEFAULT_SOURCE "sysfs:/"
#define BUILTIN_PATH "(built-in defaults)"
#define ALIAS_NAME_MAX 256
#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */
#define ANY (-1)

/* ------------------------------------------------------------------ */
/* Spec dicts                                                          */
/* ------------------------------------------------------------------ */

static VpaSpecPair *
spec_pair_new (const char *key, const char *value)
{
  VpaSpecPair *pair = g_new0 (VpaSpecPair, 1);
  pair->key = g_strdup (key);
  pair->value = g_strdup (value);
  return pair;
}

static void
spec_pair_free (VpaSpecPair *pair)
{
  if (pair == NULL)
    return;
  g_free (pair->key);
  g_free (pair->value);
  g_free (pair);
}

VpaSpec *
vpa_spec_new (void)
{
  VpaSpec *spec = g_new0 (VpaSpec, 1);
  spec->pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) spec_pair_free);
  return spec;
}

void
vpa_spec_free (VpaSpec *spec)
{
  if (spec == NULL)
    return;
  g_ptr_array_unref (spec->pairs);
  g_free (spec);
}

static VpaSpecPair *
spec_find (const VpaSpec *spec, const char *key)
{
  for (guint i = 0; i < spec->pairs->len; i++)
    {
      VpaSpecPair *pair = g_ptr_array_index (spec->pairs, i);
      if (strcmp (pair->key, key) == 0)
        return pair;
    }
  return NULL;
}

void
vpa_spec_set (VpaSpec *spec, const char *key, const char *value)
{
  VpaSpecPair *pair;

  g_return_if_fail (spec != NULL && key != NULL);
  pair = spec_find (spec, key);
  if (pair == NULL)
    {
      g_ptr_array_add (spec->pairs, spec_pair_new (key, value));
      return;
    }
  g_free (pair->value);
  pair->value = g_strdup (value);
}

const char *
vpa_spec_get (const VpaSpec *spec, const char *key, gboolean *present)
{
  VpaSpecPair *pair;

  g_return_val_if_fail (spec != NULL && key != NULL, NULL);
  pair = spec_find (spec, key);
  if (present != NULL)
    *present = pair != NULL;
  return pair == NULL ? NULL : pair->value;
}

gboolean
vpa_spec_value_match (const char *spec_value, const char *dev_value)
{
  if (spec_value == NULL || dev_value == NULL)
    return spec_value == dev_value;
  /* Nova lowercases both strings; every value we compare is ASCII. */
  return g_ascii_strcasecmp (spec_value, dev_value) == 0;
}

/* ------------------------------------------------------------------ */
/* Object life cycle                                                   */
/* ------------------------------------------------------------------ */

static VpaDeviceSpec *
device_spec_new (const char *name)
{
  VpaDeviceSpec *spec = g_new0 (VpaDeviceSpec, 1);
  spec->name = g_strdup (name);
  spec->exact_addr = VPA_ADDR_NONE;
  spec->tags = g_ptr_array_new_with_free_func ((GDestroyNotify) spec_pair_free);
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

static VpaAlias *
alias_new (const char *name)
{
  VpaAlias *alias = g_new0 (VpaAlias, 1);
  alias->name = g_strdup (name);
  alias->specs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_spec_free);
  alias->policy = VPA_POLICY_LEGACY;
  return alias;
}

static void
alias_free (VpaAlias *alias)
{
  if (alias == NULL)
    return;
  g_free (alias->name);
  g_ptr_array_unref (alias->specs);
  g_free (alias);
}

static VpaConfig *
config_new (const char *path)
{
  VpaConfig *config = g_new0 (VpaConfig, 1);
  const char *dirs[] = { "/run/libvirt/qemu", "/etc/libvirt/qemu", NULL };

  config->path = g_strdup (path);
  config->inventory_source = g_strdup (DEFAULT_SOURCE);
  config->device_specs = g_ptr_array_new_with_free_func ((GDestroyNotify) device_spec_free);
  config->aliases = g_ptr_array_new_with_free_func ((GDestroyNotify) alias_free);
  config->state_dirs = g_strdupv ((char **) dirs);
  config->hook_state_dir = g_strdup (VPA_CONFIG_STATE_DIR_DEFAULT);
  config->tagsets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_ptr_array_add (config->tagsets, g_ptr_array_new ());
  config->reserved_huge_pages = g_array_new (FALSE, FALSE, sizeof (VpaReservedPages));
  config->vswitch = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_vswitch_affinity_free);
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

const VpaAlias *
vpa_config_alias (const VpaConfig *config, const char *name)
{
  g_return_val_if_fail (config != NULL && name != NULL, NULL);
  return g_hash_table_lookup (config->alias_by_name, name);
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

/* Where a message points: "FILE: [GROUP] KEY='VALUE': reason". */
typedef struct {
  const char *path;
  const char *group;
  const char *key;   /* NULL: the whole group */
  const char *value; /* NULL: the key is missing */
} Loc;

static gboolean loc_error (GError **error, const Loc *loc, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);

static gboolean
loc_error (GError **error, const Loc *loc, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *reason = NULL;

  va_start (ap, fmt);
  reason = g_strdup_vprintf (fmt, ap);
  va_end (ap);

  if (loc->key == NULL)
    g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s]: %s", loc->path,
                 loc->group, reason);
  else if (loc->value == NULL)
    g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s] %s: %s", loc->path,
                 loc->group, loc->key, reason);
  else
    g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: [%s] %s='%s': %s", loc->path,
                 loc->group, loc->key, loc->value, reason);
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
        return loc_error (error, loc, "escape character at end of line");
      if (strchr ("sntr\\", *p) == NULL)
        return loc_error (error, loc, "invalid escape sequence '\\%c'", *p);
    }
  return TRUE;
}

/* The value of key, whitespace-stripped. */
static char *
get_value (GKeyFile *kf, const Loc *loc, GError **error)
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
      loc_error (error, &raw_loc, "%s", local->message);
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
        for (const char *h = p + 1; h < eol; h++)
          if (*h == '#' && g_ascii_isspace (h[-1]))
            {
              cut = h;
              break;
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
static gboolean
parse_id (const Loc *loc, gboolean alias, char out[8], GError **error)
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
    return loc_error (error, loc, "expected %s hexadecimal digits", alias ? "4" : "1 to 4");
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isxdigit (v[i]))
      return loc_error (error, loc, "not a hexadecimal number");
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
    if (!g_ascii_isxdigit (s[i]))
      return loc_error (error, loc, "%s '%s' is not a hexadecimal number", what, s);
  n = len > 8 ? G_MAXUINT64 : g_ascii_strtoull (s, NULL, 16);
  if (n > max)
    return loc_error (error, loc, "%s '%s' is greater than the maximum %x", what, s, max);
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
    return loc_error (error, loc, "empty address");
  if (n > 3)
    return loc_error (error, loc,
                      "expected [[[[domain]:]bus]:][slot][.[function]]");
  for (guint i = 0; i < n; i++)
    parts[3 - n + i] = fields[i];
  for (guint i = 0; i < 4; i++)
    if (!parse_addr_field (loc, what[i], parts[i], max[i], &spec->glob[i], error))
      return FALSE;

  /* GKeyFile lists a key written twice in a group twice (the last value
   * wins on lookup), so this can run again for the same spec. */
  g_free (spec->address);
  spec->address = g_strdup (loc->value);
  if (spec->glob[0] != ANY && spec->glob[1] != ANY && spec->glob[2] != ANY &&
      spec->glob[3] != ANY)
    spec->exact_addr = VPA_ADDR (spec->glob[0], spec->glob[1], spec->glob[2],
                                 spec->glob[3]);
  return TRUE;
}

static gboolean
valid_tag_key (const char *key)
{
  if (*key == '\0')
    return FALSE;
  for (const char *p = key; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
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
        g_string_append (s, "-;");
      else
        g_string_append_printf (s, "%zu:%s;", strlen (pair->value), pair->value);
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
    if (strcmp (k, key_aliases[i].name) == 0)
      return key_aliases[i].key;
  return NULL;
}

static gboolean
check_near_miss (const char *tag, const Loc *loc, GError **error)
{
  g_autofree char *lower = g_ascii_strdown (tag, -1);
  gsize len = strlen (lower);
  const char *alias = vpa_config_key_alias (tag);

  if (alias != NULL)
    return loc_error (error, loc,
                      "unknown key; did you mean '%s'? ('%s' is another name for it, "
                      "refused rather than taken as a tag)",
                      alias, loc->key);

  /* physical_network, the usual tag, is one of them: no distance to
   * compute; nor where the lengths alone are more than 2 apart. */
  for (guint i = 0; i < G_N_ELEMENTS (near_miss_keys); i++)
    if (strcmp (lower, near_miss_keys[i]) == 0)
      return TRUE;
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
          return loc_error (error, loc,
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
    return loc_error (error, loc, "a tag name takes letters, digits, '-' and '_' only");
  g_strdelimit (tag, "-", '_');
  if (!check_near_miss (tag, loc, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (reserved_tags); i++)
    if (strcmp (tag, reserved_tags[i].tag) == 0)
      return loc_error (error, loc, "'%s' is a device property, not a tag%s", tag,
                        reserved_tags[i].hint);
  for (guint i = 0; i < spec->tags->len; i++)
    if (strcmp (((VpaSpecPair *) g_ptr_array_index (spec->tags, i))->key, tag) == 0)
      return loc_error (error, loc, "tag '%s' is set twice", tag);
  /* Nova's one_time_use, a tag normalised to true or false (vpa-reserve.h) */
  if (strcmp (tag, "one_time_use") == 0 &&
      !vpa_reserve_one_time_use_value (loc->value, &spec->one_time_use))
    return loc_error (error, loc, "expected true or false");
  g_ptr_array_add (spec->tags,
                   spec_pair_new (tag, strcmp (tag, "one_time_use") != 0 ? loc->value
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
    return parse_id (loc, FALSE, spec->vendor_id, error);
  if (strcmp (loc->key, "product-id") == 0)
    return parse_id (loc, FALSE, spec->product_id, error);
  if (strcmp (loc->key, "devname") == 0)
    {
      if (*loc->value == '\0' || strlen (loc->value) > IFNAME_MAX ||
          strpbrk (loc->value, "/: \t") != NULL)
        return loc_error (error, loc, "not a network interface name");
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
      g_autofree char *value = get_value (kf, &loc, error);

      if (value == NULL)
        return FALSE;
      loc.value = value;
      if (!parse_device_spec_key (spec, &loc, error))
        return FALSE;
    }
  if (spec->address != NULL && spec->devname != NULL)
    {
      Loc loc = { config->path, group, "devname", spec->devname };
      return loc_error (error, &loc, "cannot be combined with address='%s'",
                        spec->address);
    }
  g_ptr_array_sort (spec->tags, pair_cmp);
  spec->tagset = intern_tagset (config, spec->tags);
  g_hash_table_insert (config->spec_by_name, spec->name, spec);
  g_ptr_array_add (config->device_specs, g_steal_pointer (&spec));
  return TRUE;
}

static gboolean
parse_alias_key (VpaSpec *spec, gboolean *has_policy, VpaPolicy *policy, const Loc *loc,
                 GError **error)
{
  char id[8];
  VpaDevType type;

  if (strcmp (loc->key, "vendor-id") == 0 || strcmp (loc->key, "product-id") == 0)
    {
      if (!parse_id (loc, TRUE, id, error))
        return FALSE;
      vpa_spec_set (spec, loc->key[0] == 'v' ? "vendor_id" : "product_id", id);
      return TRUE;
    }
  if (strcmp (loc->key, "device-type") == 0)
    {
      if (!vpa_dev_type_from_string (loc->value, &type))
        return loc_error (error, loc, "expected type-PCI, type-PF or type-VF");
      vpa_spec_set (spec, "dev_type", loc->value);
      return TRUE;
    }
  if (strcmp (loc->key, "numa-policy") == 0)
    {
      /* Nova: an empty numa_policy is legacy, the default */
      if (*loc->value == '\0')
        return TRUE;
      if (!vpa_policy_from_string (loc->value, policy))
        return loc_error (error, loc, "expected required, legacy, preferred or socket");
      *has_policy = TRUE;
      return TRUE;
    }
  return loc_error (error, loc, "unknown key");
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
      return loc_error (error, &loc, "required: alias '%s' has several specs",
                        alias->name);
    }
  if (first_type == NULL)
    return loc_error (error, &loc,
                      "alias '%s' has several specs, so each must set device-type (an earlier one does not)", alias->name);
  if (strcmp (type, first_type) != 0)
    {
      loc.key = "device-type";
      loc.value = type;
      return loc_error (error, &loc, "differs from '%s' in another spec of alias '%s'",
                        first_type, alias->name);
    }
  if ((has_policy ? policy : VPA_POLICY_LEGACY) != first_policy)
    {
      loc.key = "numa-policy";
      loc.value = has_policy ? vpa_policy_to_string (policy) : "";
      return loc_error (error, &loc, "differs from '%s' in another spec of alias '%s'",
                        vpa_policy_to_string (first_policy), alias->name);
    }
  return TRUE;
}

static gboolean
parse_alias (VpaConfig *config, GKeyFile *kf, const char *group, const char *name,
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
      g_autofree char *value = get_value (kf, &kloc, error);

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
static gboolean
parse_alias_group_name (const Loc *loc, const char *rest, char **name, GError **error)
{
  const char *colon = strchr (rest, ':');
  g_autofree char *base = g_strstrip (g_strndup (rest, colon ? (gsize) (colon - rest)
                                                             : strlen (rest)));
  guint64 n = 0;

  if (colon != NULL &&
      (!g_ascii_string_to_unsigned (colon + 1, 10, 2, G_MAXUINT, &n, NULL)))
    return loc_error (error, loc,
                      "alias names cannot contain ':' (further specs of alias NAME are [alias NAME:2], [alias NAME:3], ...)");
  if (*base == '\0')
    return loc_error (error, loc, "missing alias name");
  if (strlen (base) > ALIAS_NAME_MAX)
    return loc_error (error, loc, "alias name longer than %d characters", ALIAS_NAME_MAX);
  if (strchr (base, ',') != NULL)
    return loc_error (error, loc, "alias names cannot contain ','");
  *name = g_steal_pointer (&base);
  return TRUE;
}

static gboolean
check_keys (GKeyFile *kf, const Loc *group, const char *const *known, GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group->group, NULL, NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      if (!g_strv_contains (known, keys[i]))
        {
          g_autofree char *value = g_key_file_get_value (kf, group->group, keys[i], NULL);
          Loc loc = { group->path, group->group, keys[i], value };
          return loc_error (error, &loc, "unknown key");
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

  if (!check_keys (kf, &loc, known, error))
    return FALSE;
  if (!g_key_file_has_key (kf, group, "source", NULL))
    return TRUE;
  value = get_value (kf, &loc, error);
  if (value == NULL)
    return FALSE;
  loc.value = value;
  if (*value == '\0')
    return loc_error (error, &loc, "empty inventory source");
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

  if (!check_keys (kf, &loc, known, error))
    return FALSE;
  if (!g_key_file_has_key (kf, group, "state-dirs", NULL))
    return TRUE;
  value = get_value (kf, &loc, error);
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
        return loc_error (error, &loc, "'%s' is not an absolute path", dir);
      g_ptr_array_add (dirs, g_strdup (dir));
    }
  g_ptr_array_add (dirs, NULL);
  g_strfreev (config->state_dirs);
  config->state_dirs = (GStrv) g_ptr_array_free (g_steal_pointer (&dirs), FALSE);
  return TRUE;
}

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
        scale = 1;
      else if (g_ascii_strcasecmp (end, "M") == 0 || g_ascii_strcasecmp (end, "MB") == 0)
        scale = 1024;
      else if (g_ascii_strcasecmp (end, "G") == 0 || g_ascii_strcasecmp (end, "GB") == 0)
        scale = 1024 * 1024;
      else
        return FALSE;
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
        return loc_error (error, loc, "'%s' is not KEY:VALUE (node, size, count)", kv);
      *colon = '\0';
      if (strcmp (kv, "node") == 0 &&
          g_ascii_string_to_unsigned (colon + 1, 10, 0, G_MAXINT, &v, NULL))
        {
          out->node = (gint) v;
          has_node = TRUE;
        }
      else if (strcmp (kv, "size") == 0 && parse_page_size (colon + 1, &out->size_kib))
        has_size = TRUE;
      else if (strcmp (kv, "count") == 0 &&
               g_ascii_string_to_unsigned (colon + 1, 10, 0, G_MAXUINT32, &out->count, NULL))
        has_count = TRUE;
      else
        return loc_error (error, loc, "'%s:%s' is not a node, a page size or a count", kv, colon + 1);
    }
  if (!has_node || !has_size || !has_count)
    return loc_error (error, loc, "'%s' needs node, size and count", entry);
  return TRUE;
}

static gboolean
parse_host_cpuset (const Loc *loc, const char *value, GArray **out, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!vpa_parse_cpuset (value, out, &local))
    return loc_error (error, loc, "%s", local->message);
  return TRUE;
}

static gboolean
parse_host_key (VpaConfig *config, GKeyFile *kf, const Loc *kloc, GError **error)
{
  g_autofree char *value = get_value (kf, kloc, error);
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
        return loc_error (error, &loc, "not a size in MiB");
      config->reserved_memory_kib = v * 1024;
      return TRUE;
    }
  if (strcmp (loc.key, "cell-allocation") == 0)
    {
      if (strcmp (value, "spread") != 0 && strcmp (value, "pack") != 0)
        return loc_error (error, &loc, "expected spread or pack");
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

static gboolean
parse_host (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  static const char *const known[] = { "cpu-dedicated-set", "cpu-shared-set",
                                       "reserved-memory-mb", "reserved-huge-pages",
                                       "cell-allocation", NULL };
  Loc loc = { config->path, group, NULL, NULL };
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);

  if (!check_keys (kf, &loc, known, error))
    return FALSE;
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      Loc kloc = { config->path, group, keys[i], NULL };
      if (!parse_host_key (config, kf, &kloc, error))
        return FALSE;
    }
  if (config->cpu_dedicated_set != NULL && config->cpu_shared_set != NULL)
    for (guint i = 0; i < config->cpu_dedicated_set->len; i++)
      for (guint j = 0; j < config->cpu_shared_set->len; j++)
        if (g_array_index (config->cpu_dedicated_set, guint, i) ==
            g_array_index (config->cpu_shared_set, guint, j))
          {
            Loc oloc = { config->path, group, "cpu-shared-set", NULL };
            return loc_error (error, &oloc, "CPU %u is also in cpu-dedicated-set",
                              g_array_index (config->cpu_dedicated_set, guint, i));
          }
  return TRUE;
}

static gboolean
parse_group (VpaConfig *config, GKeyFile *kf, const char *group, GError **error)
{
  Loc loc = { config->path, group, NULL, NULL };
  g_autofree char *name = NULL;

  if (strcmp (group, "host") == 0)
    return parse_host (config, kf, group, error);
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
        return loc_error (error, &loc, "missing device spec name");
      if (vpa_config_device_spec (config, name) != NULL)
        return loc_error (error, &loc, "device spec '%s' defined twice", name);
      return parse_device_spec (config, kf, group, name, error);
    }
  if (g_str_has_prefix (group, "physnet ") || strcmp (group, "physnet") == 0 ||
      g_str_has_prefix (group, "tunnel ") || strcmp (group, "tunnel") == 0)
    return vpa_config_parse_vswitch (config, kf, group, error);
  if (g_str_has_prefix (group, "alias ") || strcmp (group, "alias") == 0)
    {
      if (!parse_alias_group_name (&loc, group + strlen ("alias"), &name, error))
        return FALSE;
      return parse_alias (config, kf, group, name, error);
    }
  return loc_error (error, &loc,
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
    if (!parse_group (config, kf, groups[i], error))
      return NULL;
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
    if (spec->glob[i] != ANY && spec->glob[i] != fields[i])
      return FALSE;
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
