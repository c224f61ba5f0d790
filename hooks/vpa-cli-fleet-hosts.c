/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host lifecycle commands of the fleet: list, remove, and the host
 * name a sync uses by default.
 */
#include "vpa-cli-fleet-hosts.h"

#include "vpa-cli-common.h"
#include "vpa-fleet-hosts.h"
#include "vpa-output.h"

char *
vpa_cli_fleet_hosts_json (GPtrArray *items, VpaCliFleetHostJson add, gpointer data)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "hosts");
  json_builder_begin_array (b);
  for (guint i = 0; i < items->len; i++)
    {
      json_builder_begin_object (b);
      add (b, g_ptr_array_index (items, i), data);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

static void
host_json (JsonBuilder *b, gconstpointer item, gpointer data)
{
  const VpaFleetHostSummary *h = item;
  gint64 age = vpa_fleet_hosts_sync_age (h->last_sync, data);

  vpa_output_json_add_string_or_null (b, "host", h->name);
  json_builder_set_member_name (b, "devices");
  json_builder_add_int_value (b, h->devices);
  json_builder_set_member_name (b, "free");
  json_builder_add_int_value (b, h->free);
  vpa_output_json_add_string_or_null (b, "last_sync", h->last_sync);
  json_builder_set_member_name (b, "age_seconds");
  if (age >= 0)
    {
      json_builder_add_int_value (b, age);
    }
  else
    {
      json_builder_add_null_value (b);
    }
  json_builder_set_member_name (b, "traits");
  json_builder_begin_array (b);
  for (guint t = 0; h->traits != NULL && h->traits[t] != NULL; t++)
    json_builder_add_string_value (b, h->traits[t]);
  json_builder_end_array (b);
}

static char *
hosts_text (GPtrArray *hosts, GDateTime *now)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  const char *header[] = { "HOST", "DEVICES", "FREE", "LAST-SYNC", "AGE", "TRAITS", NULL };

  g_ptr_array_add (rows, g_strdupv ((char **) header));
  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHostSummary *h = g_ptr_array_index (hosts, i);
      gint64 age = vpa_fleet_hosts_sync_age (h->last_sync, now);
      char **row = g_new0 (char *, 7);

      row[0] = g_strdup (h->name);
      row[1] = g_strdup_printf ("%u", h->devices);
      row[2] = g_strdup_printf ("%u", h->free);
      row[3] = g_strdup (h->last_sync != NULL ? h->last_sync : "-");
      row[4] = age >= 0 ? g_strdup_printf ("%" G_GINT64_FORMAT "s", age) : g_strdup ("-");
      row[5] = h->traits != NULL && h->traits[0] != NULL ? g_strjoinv (",", h->traits)
                                                         : g_strdup ("-");
      g_ptr_array_add (rows, row);
    }
  return vpa_output_table_text (rows, 6, NULL, 6);
}

gboolean
vpa_cli_fleet_hosts (const char *store_uri, gboolean json, GError **error)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GPtrArray) hosts = NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *out = NULL;

  if ((store = vpa_fleet_store_open (store_uri, VPA_FLEET_OPEN_READ, error)) == NULL ||
      (hosts = vpa_fleet_hosts_list (store, error)) == NULL)
    return FALSE;
  out = json ? vpa_cli_fleet_hosts_json (hosts, host_json, now) : hosts_text (hosts, now);
  return vpa_cli_common_write_stdout (out, error);
}

gboolean
vpa_cli_fleet_hosts_remove (const char *store_uri, const char *host, GError **error)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autofree char *out = NULL;

  if (!vpa_fleet_host_name_valid (host, error) ||
      (store = vpa_fleet_store_open (store_uri, VPA_FLEET_OPEN_READ, error)) == NULL ||
      !vpa_fleet_hosts_remove (store, host, error))
    return FALSE;
  out = g_strdup_printf ("%s: removed\n", host);
  return vpa_cli_common_write_stdout (out, error);
}

char *
vpa_cli_fleet_hosts_default (GError **error)
{
  const char *name = g_get_host_name ();

  if (!vpa_fleet_host_name_valid (name, error))
    {
      g_prefix_error (error, "this machine's host name (give --host NAME): ");
      return NULL;
    }
  return g_strdup (name);
}

gboolean
vpa_cli_fleet_hosts_filter_failed (const char *domain, GPtrArray *verdicts, GError **error)
{
  if (verdicts->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                   "%s: no host passes (the store has no hosts)", domain);
      return FALSE;
    }
  /* One bounded line per host, so that a long reason never hides the
   * next host's; the last one is the command's error. */
  for (guint i = 0; i + 1 < verdicts->len; i++)
    {
      const VpaFleetVerdict *v = g_ptr_array_index (verdicts, i);
      g_autoptr (GError) line = g_error_new (VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                                             "%s: no host passes: %s: %s", domain, v->host,
                                             v->reason != NULL ? v->reason : "-");
      vpa_cli_common_fail ("virt-pci-affinity: fleet: ", line);
    }
  {
    const VpaFleetVerdict *v = g_ptr_array_index (verdicts, verdicts->len - 1);
    g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "%s: no host passes: %s: %s",
                 domain, v->host, v->reason != NULL ? v->reason : "-");
  }
  return FALSE;
}
