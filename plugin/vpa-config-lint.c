/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-config-lint.h"

#include <string.h>

static const char *const level_names[] = { "note", "warning", "error" };

void
vpa_lint_finding_free (VpaLintFinding *f)
{
  if (f == NULL)
    return;
  g_free (f->line);
  g_free (f);
}

static void G_GNUC_PRINTF (5, 6)
  add (GPtrArray *findings, VpaLintLevel level, const char *path, guint line, const char *fmt,
       ...)
{
  VpaLintFinding *f = g_new0 (VpaLintFinding, 1);
  g_autofree char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  f->level = level;
  f->line = line > 0 ? g_strdup_printf ("%s:%u: %s: %s", path, line, level_names[level], msg)
                     : g_strdup_printf ("%s: %s: %s", path, level_names[level], msg);
  g_ptr_array_add (findings, f);
}

gint
vpa_config_lint_worst (GPtrArray *findings)
{
  gint worst = -1;

  for (guint i = 0; i < findings->len; i++)
    worst = MAX (worst, (gint) ((VpaLintFinding *) findings->pdata[i])->level);
  return worst;
}

/* ------------------------------------------------------------------ */
/* The raw file: groups and keys with their line numbers               */
/* ------------------------------------------------------------------ */

typedef struct {
  char *group;
  char *key; /* NULL for the group header itself */
  guint line;
} RawEntry;

static void
raw_entry_free (RawEntry *e)
{
  g_free (e->group);
  g_free (e->key);
  g_free (e);
}

/* GKeyFile's own syntax: "[name]" headers, "key=value" lines, '#'
 * comments; keys are stripped of blanks around them. */
static GPtrArray *
raw_scan (const char *data, gsize len)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) raw_entry_free);
  g_autofree char *text = g_strndup (data != NULL ? data : "", len);
  char *end = text + strlen (text);
  g_autofree char *group = NULL;
  char *next = text;

  /* One pass, line by line in place (a split with strstr would rescan
   * the rest of the text per line under sanitizers' interceptors). */
  for (guint i = 0; next != NULL; i++)
    {
      char *l = next;
      char *nl = memchr (l, '\n', (gsize) (end - l));
      char *eq;
      RawEntry *e;

      if (nl != NULL)
        {
          *nl = '\0';
          next = nl + 1;
        }
      else
        next = NULL;
      l = g_strstrip (l);

      if (*l == '\0' || *l == '#')
        continue;
      if (*l == '[' && l[strlen (l) - 1] == ']')
        {
          g_free (group);
          group = g_strndup (l + 1, strlen (l) - 2);
          e = g_new0 (RawEntry, 1);
          e->group = g_strdup (group);
          e->line = i + 1;
          g_ptr_array_add (out, e);
          continue;
        }
      if (group == NULL || (eq = strchr (l, '=')) == NULL)
        continue;
      *eq = '\0';
      e = g_new0 (RawEntry, 1);
      e->group = g_strdup (group);
      e->key = g_strdup (g_strstrip (l));
      e->line = i + 1;
      g_ptr_array_add (out, e);
    }
  return out;
}

/* Levenshtein distance, bounded: short keys only. */
static guint
distance (const char *a, const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  g_autofree guint *prev = NULL, *cur = NULL;

  if (la > 64 || lb > 64)
    return G_MAXUINT;
  prev = g_new (guint, lb + 1);
  cur = g_new (guint, lb + 1);
  for (gsize j = 0; j <= lb; j++)
    prev[j] = (guint) j;
  for (gsize i = 1; i <= la; i++)
    {
      guint *t;

      cur[0] = (guint) i;
      for (gsize j = 1; j <= lb; j++)
        {
          guint sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
          cur[j] = MIN (MIN (prev[j] + 1, cur[j - 1] + 1), sub);
          /* a swap of two neighbours is one mistake, not two */
          if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
            cur[j] = MIN (cur[j], prev[j - 1]);
        }
      t = prev;
      prev = cur;
      cur = t;
    }
  return prev[lb];
}

/* The keys of a [device-spec] group and the tags Nova gives a meaning. */
static const char *const spec_keys[] = {
  "address",
  "vendor-id",
  "product-id",
  "devname",
  "physical-network",
  "trusted",
  "remote-managed",
  NULL,
};

static const char *
near_miss (const char *key)
{
  g_autofree char *k = g_strdelimit (g_ascii_strdown (key, -1), "_", '-');

  for (guint i = 0; spec_keys[i] != NULL; i++)
    {
      guint d;

      if (strcmp (k, spec_keys[i]) == 0)
        return NULL;
      d = distance (k, spec_keys[i]);
      if (d > 0 && d <= (strlen (spec_keys[i]) > 8 ? 2u : 1u))
        return spec_keys[i];
    }
  return NULL;
}

static void
lint_text (const char *data, gsize len, const char *path, GPtrArray *findings)
{
  g_autoptr (GPtrArray) raw = raw_scan (data, len);
  g_autoptr (GHashTable) first = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < raw->len; i++)
    {
      const RawEntry *e = raw->pdata[i];
      const char *miss;

      if (e->key == NULL)
        {
          const RawEntry *seen = g_hash_table_lookup (first, e->group);
          if (seen != NULL)
            {
              add (findings, VPA_LINT_ERROR, path, e->line,
                   "group [%s] written twice (first at line %u): GKeyFile merges them into one",
                   e->group, seen->line);
            }
          else
            {
              g_hash_table_insert (first, e->group, (gpointer) e);
            }
          continue;
        }
      if (!g_str_has_prefix (e->group, "device-spec"))
        continue;
      if ((miss = vpa_config_key_alias (e->key)) != NULL)
        {
          add (findings, VPA_LINT_ERROR, path, e->line,
               "[%s] key '%s' is another name for '%s' (did you mean '%s'?): as written it "
               "is a tag, and the spec matches more devices than meant",
               e->group, e->key, miss, miss);
        }
      else if ((miss = near_miss (e->key)) != NULL)
        {
          add (findings, VPA_LINT_ERROR, path, e->line,
               "[%s] key '%s' is close to '%s': as written it is a tag, and the spec matches "
               "more devices than meant",
               e->group, e->key, miss);
        }
    }
}

void
vpa_config_lint_text (const VpaDoc *doc, GPtrArray *findings)
{
  g_return_if_fail (doc != NULL);
  lint_text (doc->buf, doc->len, doc->what, findings);
}

/* ------------------------------------------------------------------ */
/* Against the inventory                                               */
/* ------------------------------------------------------------------ */

/* Each group header's line, by group name (the first, when written twice). */
static GHashTable *
group_lines (GPtrArray *raw)
{
  GHashTable *lines = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < raw->len; i++)
    {
      const RawEntry *e = raw->pdata[i];
      if (e->key == NULL && !g_hash_table_contains (lines, e->group))
        g_hash_table_insert (lines, e->group, GUINT_TO_POINTER (e->line));
    }
  return lines;
}

static void
lint_specs (const VpaConfig *config, const VpaInventory *inv, GHashTable *lines,
            GPtrArray *findings)
{
  g_autoptr (GHashTable) used = g_hash_table_new (g_direct_hash, g_direct_equal);

  /* Each device's spec once: the specs that take a device. */
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaDeviceSpec *spec = vpa_config_match_device (config, inv->host, i);
      if (spec != NULL)
        g_hash_table_add (used, (gpointer) spec);
    }
  for (guint s = 0; s < config->device_specs->len; s++)
    {
      const VpaDeviceSpec *spec = config->device_specs->pdata[s];
      g_autofree char *group = g_strdup_printf ("device-spec %s", spec->name);

      if (!g_hash_table_contains (used, spec))
        {
          add (findings, VPA_LINT_WARNING, config->path,
               GPOINTER_TO_UINT (g_hash_table_lookup (lines, group)),
               "[%s] matches no device of the inventory %s (or only devices an earlier spec "
               "took)",
               group, inv->host->source);
        }
    }
}

static void
lint_aliases (const VpaConfig *config, const VpaInventory *inv, GHashTable *lines,
              GPtrArray *findings)
{
  for (guint a = 0; a < config->aliases->len; a++)
    {
      const VpaAlias *alias = config->aliases->pdata[a];
      g_autofree char *group = g_strdup_printf ("alias %s", alias->name);
      gboolean found = FALSE;

      for (guint s = 0; s < alias->specs->len && !found; s++)
        {
          for (guint i = 0; i < inv->host->devices->len && !found; i++)
            {
              found = vpa_inventory_has (inv, i) &&
                      vpa_inventory_model_spec_match (inv, i, alias->specs->pdata[s]);
            }
        }
      if (!found)
        {
          add (findings, VPA_LINT_WARNING, config->path,
               GPOINTER_TO_UINT (g_hash_table_lookup (lines, group)),
               "[%s] no device of the inventory %s satisfies it (no device spec admits a "
               "matching device): a request for '%s' always fails",
               group, inv->host->source,
               alias->name);
        }
    }
}

/* [physnet]/[tunnel] numa-nodes naming a node the host lacks: every
 * whole-guest fit refuses the configuration (exit 2). */
static void
lint_vswitch (const VpaConfig *config, const VpaInventory *inv, GHashTable *lines,
              GPtrArray *findings)
{
  for (guint i = 0; i < config->vswitch->len; i++)
    {
      const VpaVswitchAffinity *aff = config->vswitch->pdata[i];
      gint64 node = vpa_config_vswitch_affinity_missing_node (aff, inv->host);

      if (node >= 0)
        {
          add (findings, VPA_LINT_ERROR, config->path,
               GPOINTER_TO_UINT (g_hash_table_lookup (lines, aff->group)),
               "[%s] numa-nodes: node %" G_GINT64_FORMAT " is not on host %s", aff->group, node,
               inv->host->source);
        }
    }
}

void
vpa_config_lint_inventory (const VpaConfig *config, const VpaInventory *inv, const char *data,
                           gsize len, GPtrArray *findings)
{
  g_autoptr (GPtrArray) raw = raw_scan (data, len);
  g_autoptr (GHashTable) lines = group_lines (raw);

  lint_specs (config, inv, lines, findings);
  lint_aliases (config, inv, lines, findings);
  lint_vswitch (config, inv, lines, findings);
  for (guint i = 0; i < raw->len; i++)
    {
      const RawEntry *e = raw->pdata[i];

      if (e->key != NULL &&
          (strcmp (e->group, "inventory") == 0 || strcmp (e->group, "claims") == 0))
        {
          add (findings, VPA_LINT_NOTE, config->path, e->line,
               "[%s] %s is read by the hook only; the command takes --inventory and --connect",
               e->group, e->key);
        }
    }
}
