/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The filter's pre-selection in SQL (vpa-fleet-preselect.h).
 */
#include "vpa-fleet-preselect.h"
#include "vpa-fleet-rows.h"

#include <string.h>

/* Characters a key or value may have to be written into the SQL as a
 * literal: no quote, no LIKE wildcard but '_', nothing JSON escapes. */
static gboolean
sql_safe (const char *s)
{
  if (s == NULL || *s == '\0' || strlen (s) > 128)
    return FALSE;
  for (const char *p = s; *p != '\0'; p++)
    {
      if (!g_ascii_isalnum (*p) && strchr ("._:-", *p) == NULL)
        return FALSE;
    }
  return TRUE;
}

/* s lowercased, '_' escaped for LIKE ... ESCAPE '!'. */
static void
append_like (GString *out, const char *s)
{
  for (const char *p = s; *p != '\0'; p++)
    {
      if (*p == '_')
        g_string_append_c (out, '!');
      g_string_append_c (out, g_ascii_tolower (*p));
    }
}

/* One pair of a spec dict as a condition, or NULL when SQL cannot tell
 * (the filter decides). Values compare case-insensitively (ASCII), as
 * spec_match does; lower() is ASCII-only in SQLite and under COLLATE
 * "C" in PostgreSQL. */
static char *
pair_sql (const VpaSpecPair *pair)
{
  static const char *const columns[] = { "vendor_id", "product_id", "dev_type" };
  g_autoptr (GString) out = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (columns); i++)
    {
      if (strcmp (pair->key, columns[i]) != 0)
        continue;
      /* The columns are never NULL: a None value matches nothing. */
      if (pair->value == NULL)
        return g_strdup ("1 = 0");
      if (!sql_safe (pair->value))
        return NULL;
      out = g_string_new (NULL);
      g_string_append_printf (out, "lower(%s) = '", columns[i]);
      for (const char *p = pair->value; *p != '\0'; p++)
        g_string_append_c (out, g_ascii_tolower (*p));
      g_string_append_c (out, '\'');
      return g_string_free (g_steal_pointer (&out), FALSE);
    }
  /* remote_managed is implicit for VFs and PFs; a None value needs the
   * key's absence, which a case-folding LIKE cannot say exactly. */
  if (strcmp (pair->key, "remote_managed") == 0 || pair->value == NULL ||
      !sql_safe (pair->key) || !sql_safe (pair->value))
    return NULL;
  /* tags is canonical JSON: "key":"value" with nothing between. */
  out = g_string_new ("lower(tags) LIKE '%\"");
  append_like (out, pair->key);
  g_string_append (out, "\":\"");
  append_like (out, pair->value);
  g_string_append (out, "\"%' ESCAPE '!'");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The request's match as SQL, on a device kind's columns. */
static char *
match_sql (const VpaRequest *req)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < req->specs->len; i++)
    {
      const VpaSpec *spec = g_ptr_array_index (req->specs, i);
      g_autoptr (GString) dict = g_string_new (NULL);

      for (guint j = 0; j < spec->pairs->len; j++)
        {
          g_autofree char *cond = pair_sql (g_ptr_array_index (spec->pairs, j));
          if (cond != NULL)
            g_string_append_printf (dict, "%s%s", dict->len > 0 ? " AND " : "", cond);
        }
      /* A dict SQL cannot narrow matches any device: so does the OR. */
      if (dict->len == 0)
        return g_strdup ("1 = 1");
      g_string_append_printf (out, "%s(%s)", out->len > 0 ? " OR " : "", dict->str);
    }
  /* No dict: vpa_fleet_filter_request_match accepts nothing. */
  if (out->len == 0)
    return g_strdup ("1 = 0");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char *
vpa_fleet_preselect_match_sql (const VpaRequest *req)
{
  return match_sql (req);
}

/* The requests' matches as one OR, each distinct one once (two ports
 * of one physnet share theirs). */
static char *
matches_sql (const VpaFleetQuery *query)
{
  g_autoptr (GPtrArray) matches = g_ptr_array_new_with_free_func (g_free);
  GString *out = g_string_new (NULL);

  for (guint r = 0; query->requests != NULL && r < query->requests->len; r++)
    {
      char *match = match_sql (g_ptr_array_index (query->requests, r));
      if (!g_ptr_array_find_with_equal_func (matches, match, g_str_equal, NULL))
        {
          g_ptr_array_add (matches, match);
        }
      else
        {
          g_free (match);
        }
    }
  for (guint i = 0; i < matches->len; i++)
    {
      g_string_append_printf (out, "%s(%s)", i > 0 ? " OR " : "",
                              (const char *) g_ptr_array_index (matches, i));
    }
  if (matches->len == 0)
    g_string_append (out, "1 = 0");
  return g_string_free (out, FALSE);
}

/* Per host, the first request with too few free matching devices
 * ("which") and how many it has ("free"), over the pool rows p. */
static void
append_ruled_out (GString *out, const VpaFleetQuery *query)
{
  g_autoptr (GString) which = g_string_new (NULL);
  g_autoptr (GString) free = g_string_new (NULL);

  for (guint r = 0; query->requests != NULL && r < query->requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (query->requests, r);
      g_autofree char *match = NULL;
      g_autofree char *sum = NULL;

      if (req->count == 0)
        continue;
      match = vpa_fleet_preselect_match_sql (req);
      sum = g_strdup_printf ("SUM(CASE WHEN %s THEN p.n_free ELSE 0 END) OVER w", match);
      g_string_append_printf (which, " WHEN %s < %u THEN %u", sum, req->count, r + 1);
      g_string_append_printf (free, " WHEN %s < %u THEN %s", sum, req->count, sum);
    }
  if (which->len == 0)
    {
      g_string_append (out, "NULL AS ruled, NULL AS ruled_free");
    }
  else
    {
      g_string_append_printf (out, "CASE%s END AS ruled, CASE%s END AS ruled_free", which->str,
                              free->str);
    }
}

char *
vpa_fleet_preselect_pools_sql (const VpaFleetQuery *query, GPtrArray *hosts, gboolean addresses,
                               const char *only_hosts)
{
  g_autoptr (GString) skip = g_string_new (NULL);
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree char *kinds = matches_sql (query);
  g_autofree char *pools = NULL;

  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHost *host = g_ptr_array_index (hosts, i);
      g_autofree char *trait = vpa_fleet_filter_trait_unmet (query, host);

      if (trait != NULL)
        {
          g_string_append_printf (skip, "%s(%" G_GINT64_FORMAT ")", skip->len > 0 ? ", " : "",
                                  host->id);
        }
    }
  /* The free pools of the device kinds a request can match (a tag pair
   * is tested once on a kind's tags, not on each row), of the hosts not
   * lacking a trait: a subquery, which both databases hash, not a list
   * compared in turn. */
  pools = vpa_fleet_rows_free_pools_sql (&(VpaFleetRowsFreePools){
    strcmp (kinds, "(1 = 1)") != 0 ? kinds : NULL, skip->len > 0 ? skip->str : NULL, only_hosts,
    addresses });

  /* Each host's sums over its pools; a host short of a request keeps one
   * row, which carries only that. */
  g_string_append (out, "SELECT " VPA_FLEET_ROWS_FREE_POOL_NAMES ", ruled, ruled_free"
                        " FROM (SELECT p.*, ");
  append_ruled_out (out, query);
  g_string_append_printf (out, ", ROW_NUMBER () OVER w AS nth FROM (%s) AS p"
                               " WINDOW w AS (PARTITION BY p.host_id)) AS q"
                               " WHERE ruled IS NULL OR nth = 1",
                          pools);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

gboolean
vpa_fleet_preselect_read_pools (VpaFleetStore *store, const VpaFleetQuery *query,
                                GPtrArray *hosts, GHashTable *by_id, GError **error)
{
  g_autofree char *sql = vpa_fleet_preselect_pools_sql (query, hosts, FALSE, NULL);
  g_autoptr (GPtrArray) pools = vpa_fleet_rows_read_pools (store, sql, NULL, 0, by_id, error);
  g_autoptr (GPtrArray) ordered = g_ptr_array_new ();
  g_autoptr (GString) ids = g_string_new (NULL);

  if (pools == NULL || !vpa_fleet_rows_attach_pools (hosts, pools))
    return FALSE;
  /* Pool order on demand (docs/fleet.md): the lowest addresses cost a
   * scan of one index entry per free device, and only a verdict that
   * takes from two pools of the same keys depends on them. Those
   * hosts' pools are read again with them, in the same transaction
   * (the same rows). */
  for (guint i = 0; i < hosts->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (hosts, i);

      if (host->ruled_out == 0 && host->pools->len >= 2 &&
          vpa_fleet_filter_needs_order (host, query))
        {
          g_string_append_printf (ids, "%s(%" G_GINT64_FORMAT ")", ids->len > 0 ? ", " : "",
                                  host->id);
          g_clear_pointer (&host->pools, g_ptr_array_unref);
          g_ptr_array_add (ordered, host);
        }
    }
  if (ordered->len == 0)
    return TRUE;
  g_clear_pointer (&sql, g_free);
  g_clear_pointer (&pools, g_ptr_array_unref);
  /* Past half the hosts, all of them: a scan of the index costs the
   * same, and a long list of hosts to match each row with does not. */
  if (ordered->len > hosts->len / 2)
    {
      for (guint i = 0; i < hosts->len; i++)
        {
          VpaFleetHost *host = g_ptr_array_index (hosts, i);
          g_clear_pointer (&host->pools, g_ptr_array_unref);
        }
      g_ptr_array_set_size (ordered, 0);
      g_ptr_array_extend (ordered, hosts, NULL, NULL);
    }
  sql = vpa_fleet_preselect_pools_sql (query, hosts, TRUE, ordered->len < hosts->len ? ids->str : NULL);
  pools = vpa_fleet_rows_read_pools (store, sql, NULL, 0, by_id, error);
  return pools != NULL && vpa_fleet_rows_attach_pools (ordered, pools);
}

gboolean
vpa_fleet_preselect_add_row (GHashTable *by_id, GPtrArray *pools, GHashTable *tagsets,
                             const char *const *v, const char *uri, GError **error)
{
  VpaPool *pool;
  gint64 id;
  guint64 which, free;
  VpaFleetHost *host;

  if (v[VPA_FLEET_ROWS_POOL_COLUMNS] == NULL)
    {
      if ((pool = vpa_fleet_rows_pool (v, tagsets, uri, error)) == NULL)
        return FALSE;
      g_ptr_array_add (pools, pool);
      return TRUE;
    }
  if (v[0] == NULL || v[VPA_FLEET_ROWS_POOL_COLUMNS + 1] == NULL ||
      !g_ascii_string_to_signed (v[0], 10, G_MININT64, G_MAXINT64, &id, NULL) ||
      !g_ascii_string_to_unsigned (v[VPA_FLEET_ROWS_POOL_COLUMNS], 10, 1, G_MAXUINT, &which,
                                   NULL) ||
      !g_ascii_string_to_unsigned (v[VPA_FLEET_ROWS_POOL_COLUMNS + 1], 10, 0, G_MAXUINT, &free,
                                   NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': malformed pre-selection row", uri);
      return FALSE;
    }
  if ((host = g_hash_table_lookup (by_id, &id)) != NULL)
    {
      host->ruled_out = (guint) which;
      host->ruled_out_free = (guint) free;
    }
  return TRUE;
}

GPtrArray *
vpa_fleet_preselect_load_candidates (VpaFleetStore *store, const VpaFleetQuery *query,
                                     guint flags, GError **error)
{
  GPtrArray *hosts;

  if (query->numa_auto != NULL)
    return vpa_fleet_store_load_hosts (store, flags, error);
  store->preselect = query;
  hosts = vpa_fleet_store_load_hosts (store, flags, error);
  store->preselect = NULL;
  return hosts;
}
