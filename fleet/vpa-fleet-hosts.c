/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hosts of a fleet store: summaries, removal, last_sync, staleness.
 * The SQL is written once for both backends (parameters $1..$n).
 */
#include "vpa-fleet-hosts.h"

#include <string.h>

#define SQL_LIST_HOSTS                                              \
  "SELECT h.name, h.traits, h.last_sync, COUNT(d.address),"         \
  " COALESCE(SUM(CASE WHEN d.state = 'free' THEN 1 ELSE 0 END), 0)" \
  " FROM hosts AS h LEFT JOIN devices AS d ON d.host_id = h.id"     \
  " GROUP BY h.id, h.name, h.traits, h.last_sync ORDER BY h.name"

void
vpa_fleet_host_summary_free (VpaFleetHostSummary *summary)
{
  if (summary == NULL)
    return;
  g_free (summary->name);
  g_strfreev (summary->traits);
  g_free (summary->last_sync);
  g_free (summary);
}

static guint
count_value (const char *text)
{
  guint64 v = text != NULL ? g_ascii_strtoull (text, NULL, 10) : 0;

  return (guint) MIN (v, G_MAXUINT);
}

static void
summary_row (const char *const *v, guint n, gpointer data)
{
  GPtrArray *out = data;
  VpaFleetHostSummary *s;

  if (n < 5 || v[0] == NULL)
    return;
  s = g_new0 (VpaFleetHostSummary, 1);
  s->name = g_strdup (v[0]);
  s->traits = vpa_fleet_traits_parse (v[1] != NULL ? v[1] : "");
  s->last_sync = g_strdup (v[2]);
  s->devices = count_value (v[3]);
  s->free = count_value (v[4]);
  g_ptr_array_add (out, s);
}

GPtrArray *
vpa_fleet_hosts_list (VpaFleetStore *store, GError **error)
{
  g_autoptr (GPtrArray) out =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_host_summary_free);

  if (!store->ops->statement (store, SQL_LIST_HOSTS, NULL, 0, summary_row, out, NULL, error))
    return NULL;
  return g_steal_pointer (&out);
}

/* One statement naming the host in $1 (and now in $2 when n_params is
 * 2); no such host is VPA_ERROR_INVALID. */
static gboolean
host_statement (VpaFleetStore *store, const char *sql, const char *name, guint n_params,
                GError **error)
{
  g_autofree char *now = vpa_fleet_now ();
  const char *params[] = { name, now };
  gint64 changes = 0;

  if (!store->ops->statement (store, sql, params, n_params, NULL, NULL, &changes, error))
    return FALSE;
  if (changes == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "store '%s': no host '%s'",
                   store->uri, name);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_fleet_hosts_remove (VpaFleetStore *store, const char *name, GError **error)
{
  return host_statement (store, "DELETE FROM hosts WHERE name = $1", name, 1, error);
}

gboolean
vpa_fleet_hosts_touch (VpaFleetStore *store, const char *name, GError **error)
{
  return host_statement (store, "UPDATE hosts SET last_sync = $2 WHERE name = $1", name, 2, error);
}

gint64
vpa_fleet_hosts_sync_age (const char *last_sync, GDateTime *now)
{
  g_autoptr (GDateTime) t = NULL;

  if (last_sync == NULL || (t = g_date_time_new_from_iso8601 (last_sync, NULL)) == NULL)
    return -1;
  return MAX (0, g_date_time_difference (now, t) / G_TIME_SPAN_SECOND);
}

static VpaFleetVerdict *
stale_verdict (const VpaFleetHost *host, gint64 age, gint64 max_age)
{
  VpaFleetVerdict *v = g_new0 (VpaFleetVerdict, 1);

  v->host = g_strdup (host->name);
  if (age < 0)
    {
      v->reason = g_strdup_printf ("the host's rows have no valid last sync ('%s'; --max-age %" G_GINT64_FORMAT ")",
                                   host->last_sync != NULL ? host->last_sync : "null", max_age);
    }
  else
    {
      v->reason = g_strdup_printf ("the host's rows are %" G_GINT64_FORMAT " s old (last sync %s; --max-age %" G_GINT64_FORMAT ")",
                                   age, host->last_sync, max_age);
    }
  return v;
}

GPtrArray *
vpa_fleet_hosts_take_stale (GPtrArray *hosts, gint64 max_age, GDateTime *now)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_filter_verdict_free);

  for (guint i = 0; i < hosts->len;)
    {
      const VpaFleetHost *host = g_ptr_array_index (hosts, i);
      gint64 age = vpa_fleet_hosts_sync_age (host->last_sync, now);

      if (age >= 0 && age <= max_age)
        {
          i++;
          continue;
        }
      g_ptr_array_add (out, stale_verdict (host, age, max_age));
      g_ptr_array_remove_index (hosts, i);
    }
  return out;
}

static gint
verdict_cmp (gconstpointer a, gconstpointer b)
{
  const VpaFleetVerdict *va = *(VpaFleetVerdict *const *) a;
  const VpaFleetVerdict *vb = *(VpaFleetVerdict *const *) b;

  if (va->passes != vb->passes)
    return va->passes ? -1 : 1;
  if (va->weight != vb->weight)
    return va->weight > vb->weight ? -1 : 1;
  return strcmp (va->host, vb->host);
}

void
vpa_fleet_hosts_verdicts_merge (GPtrArray *verdicts, GPtrArray *extra)
{
  while (extra->len > 0)
    g_ptr_array_add (verdicts, g_ptr_array_steal_index (extra, 0));
  g_ptr_array_sort (verdicts, verdict_cmp);
}
