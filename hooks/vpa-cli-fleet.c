/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity fleet sync|pools|filter: the front end of the fleet
 * store. argv, stdout and exit statuses happen here; the store and the
 * filter live in libvpa_fleet.
 */
#include "vpa-cli-fleet.h"

#include <stdio.h>
#include <string.h>

#include "vpa-cli-common.h"
#include "vpa-cli-fleet-hosts.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-fleet-filter.h"
#include "vpa-fleet-store.h"
#include "vpa-fleet-hosts.h"
#include "vpa-fleet-preselect.h"
#include "vpa-inventory.h"
#include "vpa-output.h"
#include "vpa-output-ops.h"
#include "vpa-pipeline.h"
#include "vpa-bind.h"
#include "vpa-requests.h"
#include "vpa-reserve.h"
#include "vpa-source.h"

static VpaFleetClaimsLoader claims_loader;
static VpaFleetWatcher watcher;

void
vpa_cli_fleet_set_claims_loader (VpaFleetClaimsLoader loader)
{
  claims_loader = loader;
}

void
vpa_cli_fleet_set_watcher (VpaFleetWatcher w)
{
  watcher = w;
}

typedef struct {
  VpaCliCommon common;
  char *store;
  char *host;
  char *output;
  gint64 max_age; /* filter --max-age; G_MININT64: not given */
  gboolean watch; /* sync --watch */
} FleetCli;

static void
fleet_cli_clear (FleetCli *cli)
{
  vpa_cli_common_clear (&cli->common);
  g_free (cli->store);
  g_free (cli->host);
  g_free (cli->output);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (FleetCli, fleet_cli_clear)

static int
fail (const GError *error)
{
  return vpa_cli_common_fail ("virt-pci-affinity: fleet: ", error);
}

static gboolean
require (const char *value, const char *option, GError **error)
{
  if (value == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s is required", option);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* sync                                                                */
/* ------------------------------------------------------------------ */

/* The claims: the domains of the --connect connection. A snapshot's own
 * <domain> children; a live connection's domains through the loader the
 * CLI registers (libvpa-virt); without one, the inventory's own. */
static GPtrArray *
load_claims (const FleetCli *cli, const char *source, VpaHost *host, GError **error)
{
  const char *uri = vpa_cli_common_connect_uri (&cli->common);
  g_autofree char *snap = vpa_source_snapshot_path (uri);

  if (snap != NULL && g_strcmp0 (uri, source) != 0)
    {
      g_autoptr (VpaHost) other = vpa_snapshot_load (snap, error);
      return other != NULL ? vpa_claim_filter (other->claims, NULL, FALSE) : NULL;
    }
  if (snap == NULL && claims_loader != NULL &&
      (cli->common.connect != NULL || cli->common.inventory == NULL))
    return claims_loader (uri, error);
  return vpa_claim_filter (host->claims, NULL, FALSE);
}

static gboolean
sync_once (FleetCli *cli, GError **error)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaFleetHostData) data = NULL;
  g_autoptr (VpaFleetStore) store = NULL;
  g_autofree char *out = NULL;
  const char *source;

  source = vpa_cli_common_inventory_uri (&cli->common);
  if ((config = vpa_cli_common_load_config (&cli->common, error)) == NULL ||
      (host = vpa_source_load (source, error)) == NULL ||
      (claims = load_claims (cli, source, host, error)) == NULL ||
      (inv = vpa_inventory_new (g_steal_pointer (&host), config,
                                g_steal_pointer (&claims), error)) == NULL)
    return FALSE;
  data = vpa_fleet_host_data_from_inventory (cli->host, inv);
  if ((store = vpa_fleet_store_open (cli->store, VPA_FLEET_OPEN_CREATE, error)) == NULL ||
      !vpa_fleet_store_sync_host (store, data, error))
    return FALSE;
  if (data->devices->len == 0)
    {
      g_autofree char *line = g_strdup_printf (
        "virt-pci-affinity: fleet: warning: host '%s': synced with no device (no device of"
        " the inventory '%s' matches a [device-spec] of the configuration)",
        cli->host, source);
      g_autofree char *bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);
      fprintf (stderr, "%s\n", bounded);
    }
  /* The watcher stays quiet but for warnings: a line per event would
   * flood the journal. */
  if (cli->watch)
    return TRUE;
  out = g_strdup_printf ("%s: %u devices\n", cli->host, data->devices->len);
  return vpa_cli_common_write_stdout (out, error);
}

static gboolean
watch_sync (gpointer data, GError **error)
{
  return sync_once (data, error);
}

static gboolean
watch_touch (gpointer data, GError **error)
{
  FleetCli *cli = data;
  g_autoptr (VpaFleetStore) store = vpa_fleet_store_open (cli->store, VPA_FLEET_OPEN_CREATE,
                                                          error);

  return store != NULL && vpa_fleet_hosts_touch (store, cli->host, error);
}

/* What a sync reads besides libvirt, for the watcher to monitor: the
 * configuration (as vpa_config_lookup finds it; the default path even
 * when it does not exist yet) and the reservations of its [hook]
 * state-dir (docs/fleet.md, "The watcher"). */
static GPtrArray *
watch_files (FleetCli *cli, GError **error)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VpaConfig) config = vpa_config_lookup (cli->common.config_path, TRUE, error);
  const char *env = g_getenv ("VPA_CONFIG");
  const char *path = cli->common.config_path;

  if (config == NULL)
    return NULL;
  if (path == NULL)
    path = env != NULL && *env != '\0' ? env : VPA_CONFIG_DEFAULT_PATH;
  g_ptr_array_add (files, g_strdup (path));
  g_ptr_array_add (files, g_build_filename (config->hook_state_dir, VPA_RESERVE_FILE, NULL));
  g_ptr_array_add (files, NULL);
  return g_steal_pointer (&files);
}

static gboolean
cmd_sync (FleetCli *cli, GError **error)
{
  VpaVirtWatchOps ops = { watch_sync, watch_touch, cli, NULL };
  g_autoptr (GPtrArray) files = NULL;

  if (!require (cli->store, "--store", error))
    return FALSE;
  if (cli->host == NULL && (cli->host = vpa_cli_fleet_hosts_default (error)) == NULL)
    return FALSE;
  if (!vpa_fleet_host_name_valid (cli->host, error))
    return FALSE;
  if (!cli->watch)
    return sync_once (cli, error);
  if (watcher == NULL)
    {
      g_set_error_literal (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                           "sync --watch: this program has no libvirt watcher");
      return FALSE;
    }
  if ((files = watch_files (cli, error)) == NULL)
    return FALSE;
  ops.files = (const char *const *) files->pdata;
  /* Events come from the connection whose domains hold the devices. */
  return watcher (vpa_cli_common_connect_uri (&cli->common), &ops, error);
}

/* ------------------------------------------------------------------ */
/* pools                                                               */
/* ------------------------------------------------------------------ */

/* The pools of every host with a host label, and each host's last sync
 * (docs/operations.md). */
static char *
pools_openmetrics (VpaFleetStore *store, GPtrArray *pools, const char *only, GError **error)
{
  g_autoptr (VpaMetrics) m = vpa_output_ops_metrics_new (TRUE);
  g_autoptr (GPtrArray) hosts = vpa_fleet_store_load_hosts (store, FALSE, error);

  if (hosts == NULL)
    return NULL;
  for (guint i = 0; i < pools->len; i++)
    vpa_output_ops_metrics_add_pool (m, NULL, NULL, g_ptr_array_index (pools, i));
  for (guint i = 0; i < hosts->len; i++)
    {
      const VpaFleetHost *h = g_ptr_array_index (hosts, i);
      g_autoptr (GDateTime) t = NULL;

      if (only != NULL && strcmp (h->name, only) != 0)
        continue;
      t = h->last_sync != NULL ? g_date_time_new_from_iso8601 (h->last_sync, NULL) : NULL;
      if (t != NULL)
        {
          vpa_output_ops_metrics_set_gauge (m, h->name, "fleet_last_sync_timestamp_seconds",
                                            "When the host's device rows were last replaced (Unix time).",
                                            (double) g_date_time_to_unix (t));
        }
    }
  return vpa_output_ops_metrics_to_string (m);
}

static gboolean
cmd_pools (FleetCli *cli, GError **error)
{
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GPtrArray) pools = NULL;
  g_autofree char *out = NULL;
  gboolean json = FALSE, metrics;

  metrics = g_strcmp0 (cli->common.format, "openmetrics") == 0;
  if (cli->common.format != NULL && !metrics && strcmp (cli->common.format, "text") != 0 &&
      strcmp (cli->common.format, "json") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--format '%s': expected text, json or openmetrics", cli->common.format);
      return FALSE;
    }
  json = g_strcmp0 (cli->common.format, "json") == 0;
  if (!require (cli->store, "--store", error) ||
      (cli->host != NULL && !vpa_fleet_host_name_valid (cli->host, error)))
    return FALSE;
  if ((store = vpa_fleet_store_open (cli->store, VPA_FLEET_OPEN_READ, error)) == NULL ||
      (pools = vpa_fleet_store_query_pools (store, cli->host, error)) == NULL)
    return FALSE;
  if (metrics)
    {
      out = pools_openmetrics (store, pools, cli->host, error);
    }
  else if (json)
    {
      out = vpa_output_pools_json_list (NULL, (const VpaPool *const *) pools->pdata, pools->len);
    }
  else
    {
      out = vpa_output_pools_table (NULL, (const VpaPool *const *) pools->pdata, pools->len,
                                    VPA_POOL_KEYS_FLEET, NULL);
    }
  if (out == NULL)
    return FALSE;
  if (cli->output != NULL)
    return vpa_output_ops_write_file (cli->output, out, error);
  return vpa_cli_common_write_stdout (out, error);
}

/* ------------------------------------------------------------------ */
/* filter                                                              */
/* ------------------------------------------------------------------ */

static gboolean
read_domain (const char *path, char **buf, gsize *len, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (strcmp (path, "-") == 0)
    return vpa_cli_common_read_stdin (buf, len, error);
  if (!g_file_get_contents (path, buf, len, &local))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: cannot read: %s", path,
                   local->message);
      return FALSE;
    }
  return TRUE;
}

/* The domain as the filter sees it. Traits as Nova's scheduler asks for
 * them (docs/nova.md, "Traits"), plus COMPUTE_NET_NUMA_AFFINITY for ports with
 * their own policy (the port-scoped SR-IOV spec), SR-IOV or vSwitch
 * (docs/vswitch.md). */
static void
query_from_domain (const VpaDomain *dom, const VpaBind *bind, GPtrArray *requests,
                   VpaFleetQuery *query)
{
  query->requests = requests;
  query->numa_guest = dom->numa_guest;
  query->guest_nodes = (const gint *) (gpointer) bind->guest_nodes->data;
  query->n_guest_nodes = bind->guest_nodes->len;
  query->need_socket_trait =
    (dom->has_flavor_policy && dom->flavor_policy == VPA_POLICY_SOCKET) ||
    (dom->has_image_policy && dom->image_policy == VPA_POLICY_SOCKET);
  query->need_net_numa_trait = FALSE;
  for (guint i = 0; dom->ports != NULL && i < dom->ports->len; i++)
    {
      if (((const VpaPortRequest *) g_ptr_array_index (dom->ports, i))->has_policy)
        query->need_net_numa_trait = TRUE;
    }
  for (guint i = 0; dom->vswitch_ports != NULL && i < dom->vswitch_ports->len; i++)
    {
      if (((const VpaVswitchPort *) g_ptr_array_index (dom->vswitch_ports, i))->has_policy)
        query->need_net_numa_trait = TRUE;
    }
}

/* "0,1" as [0, 1]: the nodes a host was judged with, as numbers. */
static void
add_node_list (JsonBuilder *b, const char *nodes)
{
  g_auto (GStrv) parts = g_strsplit (nodes, ",", -1);

  json_builder_begin_array (b);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (*parts[i] != '\0')
        json_builder_add_int_value (b, g_ascii_strtoll (parts[i], NULL, 10));
    }
  json_builder_end_array (b);
}

static void
verdict_json (JsonBuilder *b, gconstpointer item, gpointer data)
{
  const VpaFleetVerdict *v = item;

  vpa_output_json_add_string_or_null (b, "host", v->host);
  json_builder_set_member_name (b, "passes");
  json_builder_add_boolean_value (b, v->passes);
  json_builder_set_member_name (b, "weight");
  json_builder_add_double_value (b, v->weight);
  vpa_output_json_add_string_or_null (b, "reason", v->reason);
  json_builder_set_member_name (b, "nodes");
  if (v->nodes != NULL)
    {
      add_node_list (b, v->nodes);
    }
  else
    {
      json_builder_add_null_value (b);
    }
}

static char *
verdicts_text (GPtrArray *verdicts)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  const char *header[] = { "HOST", "RESULT", "WEIGHT", "NODES", "REASON", NULL };

  g_ptr_array_add (rows, g_strdupv ((char **) header));
  for (guint i = 0; i < verdicts->len; i++)
    {
      const VpaFleetVerdict *v = g_ptr_array_index (verdicts, i);
      char **row = g_new0 (char *, 6);

      row[0] = g_strdup (v->host);
      row[1] = g_strdup (v->passes ? "pass" : "fail");
      row[2] = g_strdup_printf ("%.1f", v->weight);
      row[3] = g_strdup (v->nodes != NULL ? v->nodes : "-");
      row[4] = g_strdup (v->reason != NULL ? v->reason : "-");
      g_ptr_array_add (rows, row);
    }
  /* Only WEIGHT right-aligned would need a column range; keep it simple. */
  return vpa_output_table_text (rows, 5, NULL, 5);
}

/* What the filter reads: the free pools; the capacity rows for the
 * whole-guest fit; each host's networks for a NUMA guest. */
static guint
load_flags (const VpaDomain *dom)
{
  return VPA_FLEET_LOAD_POOLS | (dom->numa_auto ? VPA_FLEET_LOAD_CAPACITY : 0) |
         (dom->numa_guest || dom->numa_auto ? VPA_FLEET_LOAD_NETWORKS : 0);
}

static gboolean
cmd_filter (FleetCli *cli, GError **error)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaBind) bind = NULL;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (VpaFleetStore) store = NULL;
  g_autoptr (GPtrArray) hosts = NULL;
  g_autoptr (GPtrArray) verdicts = NULL;
  g_autoptr (GPtrArray) stale = NULL;
  g_autofree char *buf = NULL;
  g_autofree char *out = NULL;
  VpaFleetQuery query = { 0 };
  gboolean json;
  gsize len;

  if (!require (cli->store, "--store", error) ||
      !vpa_cli_common_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (cli->common.args == NULL || cli->common.args[0] == NULL || cli->common.args[1] != NULL)
    {
      g_set_error_literal (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "filter takes one DOMAIN.xml (or - for stdin)");
      return FALSE;
    }
  if (cli->max_age != G_MININT64 && cli->max_age < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--max-age '%" G_GINT64_FORMAT "': expected seconds, 0 or more", cli->max_age);
      return FALSE;
    }
  /* Without this host's reservations: the store's rows say which
   * devices of each host are reserved. */
  if ((config = vpa_config_lookup (cli->common.config_path, TRUE, error)) == NULL ||
      !read_domain (cli->common.args[0], &buf, &len, error) ||
      (dom = vpa_pipeline_parse (&(VpaDoc){ buf, len, cli->common.args[0] }, error)) == NULL ||
      (bind = vpa_bind_nodes (dom, NULL, error)) == NULL ||
      (requests = vpa_requests_from_domain (dom, config, error)) == NULL)
    return FALSE;
  query_from_domain (dom, bind, requests, &query);
  /* placement="auto": the whole-guest fit on each host's capacity rows. */
  query.numa_auto = dom->numa_auto ? dom : NULL;
  query.config = config;
  /* A NUMA guest's nodes must serve its ports' networks: each host's
   * [physnet]/[tunnel] groups as it synced them (docs/vswitch.md). */
  query.domain = dom;

  if ((store = vpa_fleet_store_open (cli->store, VPA_FLEET_OPEN_READ, error)) == NULL ||
      (hosts = vpa_fleet_preselect_load_candidates (store, &query, load_flags (dom), error)) == NULL)
    return FALSE;
  if (cli->max_age != G_MININT64)
    {
      g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
      stale = vpa_fleet_hosts_take_stale (hosts, cli->max_age, now);
    }
  verdicts = vpa_fleet_filter (hosts, &query);
  if (stale != NULL)
    vpa_fleet_hosts_verdicts_merge (verdicts, stale);
  /* Nothing on stdout on a non-zero exit: the reasons go to stderr. */
  if (verdicts->len == 0 || !((VpaFleetVerdict *) g_ptr_array_index (verdicts, 0))->passes)
    return vpa_cli_fleet_hosts_filter_failed (cli->common.args[0], verdicts, error);
  out = json ? vpa_cli_fleet_hosts_json (verdicts, verdict_json, NULL) : verdicts_text (verdicts);
  return vpa_cli_common_write_stdout (out, error);
}

/* ------------------------------------------------------------------ */
/* hosts, remove                                                       */
/* ------------------------------------------------------------------ */

static gboolean
cmd_hosts (FleetCli *cli, GError **error)
{
  gboolean json;

  return require (cli->store, "--store", error) &&
         vpa_cli_common_format_is_json (&cli->common, &json, error) &&
         vpa_cli_fleet_hosts (cli->store, json, error);
}

static gboolean
cmd_remove (FleetCli *cli, GError **error)
{
  return require (cli->store, "--store", error) && require (cli->host, "--host", error) &&
         vpa_cli_fleet_hosts_remove (cli->store, cli->host, error);
}

/* ------------------------------------------------------------------ */

typedef struct {
  const char *name;
  const char *args;
  const char *summary;
  gboolean (*run) (FleetCli *cli, GError **error);
} FleetCommand;

static const FleetCommand commands[] = {
  { "sync", "--store STORE [--host NAME] [--watch]", "replace one host's device rows in the store", cmd_sync },
  { "pools", "--store STORE", "pools of every host (or --host) by SQL GROUP BY", cmd_pools },
  { "filter", "--store STORE DOMAIN.xml", "the hosts whose pools can take the domain", cmd_filter },
  { "hosts", "--store STORE", "every host: devices, free, last sync, age, traits", cmd_hosts },
  { "remove", "--store STORE --host NAME", "delete a host and all its rows", cmd_remove },
};

static void
usage (FILE *f)
{
  fprintf (f, "Usage: virt-pci-affinity fleet COMMAND [OPTIONS]\n\nCommands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (f, "  %-7s %-27s %s\n", commands[i].name, commands[i].args, commands[i].summary);
  fprintf (f, "\nSTORE: a file path, sqlite:///ABS/PATH or postgresql://...\n");
}

static int
run_command (const FleetCommand *cmd, int argc, char **argv)
{
  g_auto (FleetCli) cli = { .max_age = G_MININT64 };
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *param = g_strdup_printf ("%s %s", cmd->name, cmd->args);
  g_autofree char *prog = g_strdup_printf ("virt-pci-affinity fleet %s", cmd->name);
  gboolean sync = cmd->run == cmd_sync, filter = cmd->run == cmd_filter;
  gboolean formatted = cmd->run == cmd_pools || filter || cmd->run == cmd_hosts;
  gboolean pools = cmd->run == cmd_pools, hosts = cmd->run == cmd_hosts;
  /* --help (and so the completion) shows only the options cmd takes;
   * the others are still parsed, and refused below with the usage. */
#define FLEET_TAKES(yes) ((yes) ? 0 : G_OPTION_FLAG_HIDDEN)
  GOptionEntry entries[] = {
    { "store", 0, 0, G_OPTION_ARG_STRING, &cli.store, "the fleet store", "STORE" },
    { "host", 0, FLEET_TAKES (!filter && !hosts), G_OPTION_ARG_STRING, &cli.host,
      "the host's name in the store", "NAME" },
    { "format", 0, FLEET_TAKES (formatted), G_OPTION_ARG_STRING, &cli.common.format,
      "text (default) or json; pools: also openmetrics", "FORMAT" },
    { "output", 'o', FLEET_TAKES (pools), G_OPTION_ARG_FILENAME, &cli.output,
      "pools: write to FILE atomically (temporary file, rename) instead of stdout", "FILE" },
    { "config", 0, FLEET_TAKES (sync || filter), G_OPTION_ARG_FILENAME,
      &cli.common.config_path, "configuration file", "FILE" },
    { "connect", 'c', FLEET_TAKES (sync), G_OPTION_ARG_STRING, &cli.common.connect,
      "libvirt URI of the domains (claims)", "URI" },
    { "inventory", 0, FLEET_TAKES (sync), G_OPTION_ARG_STRING, &cli.common.inventory,
      "where devices and topology come from (default: the --connect URI)", "SOURCE" },
    { "watch", 0, FLEET_TAKES (sync), G_OPTION_ARG_NONE, &cli.watch,
      "sync: stay connected and sync on every libvirt event until SIGTERM", NULL },
    { "max-age", 0, FLEET_TAKES (filter), G_OPTION_ARG_INT64, &cli.max_age,
      "filter: fail hosts whose rows are older than SECONDS", "SECONDS" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &cli.common.args, NULL, NULL },
    { NULL }
  };
#undef FLEET_TAKES

  argv[0] = prog; /* "Usage: virt-pci-affinity fleet pools [OPTION…] ..." */
  ctx = g_option_context_new (cmd->args);
  g_option_context_set_summary (ctx, cmd->summary);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return fail (error);
  if ((!sync && (cli.common.connect != NULL || cli.common.inventory != NULL)) ||
      (!sync && !filter && cli.common.config_path != NULL) || (filter && cli.host != NULL) ||
      (!formatted && cli.common.format != NULL) || (!filter && cli.common.args != NULL) ||
      (cmd->run == cmd_hosts && cli.host != NULL) || (!filter && cli.max_age != G_MININT64) || (!sync && cli.watch) ||
      (cli.output != NULL && cmd->run != cmd_pools))
    {
      g_set_error (&error, VPA_ERROR, VPA_ERROR_INVALID,
                   "fleet %s: an option or argument it does not take (usage: fleet %s)",
                   cmd->name, param);
      return fail (error);
    }
  if (!cmd->run (&cli, &error))
    return fail (error);
  return 0;
}

int
vpa_cli_fleet (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? VPA_ERROR_INVALID : 0;
    }
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      if (strcmp (argv[1], commands[i].name) == 0)
        return run_command (&commands[i], argc - 1, argv + 1);
    }
  fprintf (stderr, "virt-pci-affinity: fleet: unknown command '%s'\n", argv[1]);
  usage (stderr);
  return VPA_ERROR_INVALID;
}
