/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands that show the host and the configuration: pools, devices,
 * config check, status, topology, nodes, traits and snapshot.
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vpa-types.h"
#include "vpa-cli-common.h"
#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-inventory.h"
#include "vpa-cli-status.h"
#include "vpa-cli-request.h"
#include "vpa-output-discovery.h"
#include "vpa-output-verdicts.h"
#include "vpa-output.h"
#include "vpa-output-ops.h"
#include "vpa-config-lint.h"
#include "vpa-netpool.h"
#include "vpa-pipeline.h"
#include "vpa-pools.h"
#include "vpa-source.h"
#include "vpa-traits.h"
#include "vpa-xml.h"
#include "vpa-cli-module.h"
#include "vpa-output-topology.h"
#include "vpa-cli.h"
#include "vpa-cli-world.h"

/* Nothing whitelisted means nothing assignable (Nova's empty whitelist):
 * say so, and how to whitelist, rather than print an empty table only. */
static void
command_hint (const char *command, const VpaInventory *inv)
{
  if (inv->config->device_specs->len > 0 || inv->host->devices->len == 0)
    return;
  fprintf (stderr,
           "virt-pci-affinity: %s: none of the %u PCI devices of %s is assignable: %s has no "
           "[device-spec NAME] group; add one per set of devices to pass through (e.g. "
           "address=0000:3b:00.0 and physical-network=physnet1; bridges never are; "
           "'devices --all' lists them)\n",
           command, inv->host->devices->len, inv->host->source, inv->config->path);
}

static void
pools_hint (const VpaInventory *inv)
{
  command_hint ("pools", inv);
}

/* stdout, or --output FILE written atomically. */
static gboolean
emit (const VpaCli *cli, const char *out, GError **error)
{
  if (cli->output != NULL)
    return vpa_output_ops_write_file (cli->output, out, error);
  return vpa_cli_common_write_stdout (out, error);
}

/* The pools and host gauges as OpenMetrics (docs/operations.md). */
static char *
pools_openmetrics (const VpaInventory *inv, GArray *netrows, double read_seconds,
                   const VpaConfig *config)
{
  g_autoptr (VpaMetrics) m = vpa_output_ops_metrics_new (FALSE);
  g_autoptr (GError) verdicts_error = NULL;
  g_autoptr (GArray) pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_SOCKET);

  vpa_output_ops_metrics_add_pools (m, inv, pools);
  vpa_output_ops_metrics_add_netpool (m, netrows);
  vpa_output_ops_metrics_set_gauge (m, NULL, "inventory_read_seconds",
                                    "Seconds taken to read the inventory, the claims and the configuration.",
                                    read_seconds);
  vpa_output_ops_metrics_set_gauge (m, NULL, "inventory_devices",
                                    "PCI devices in the inventory (admitted by a device spec).",
                                    inv->n_devices);
  vpa_output_ops_metrics_set_gauge (m, NULL, "devices_unassignable",
                                    "PCI devices of the host that no device spec admits.",
                                    vpa_inventory_count_unassignable (inv));
  /* the hook's verdicts on this host (docs/operations.md) */
  if (!vpa_output_verdicts_add (m, config->hook_state_dir, &verdicts_error))
    {
      g_printerr ("virt-pci-affinity: warning: hook verdicts not shown: %s\n",
                  verdicts_error->message);
    }
  return vpa_output_ops_metrics_to_string (m);
}

gboolean
vpa_cli_show_pools (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GArray) pools = NULL;
  g_autofree char *out = NULL;
  VpaPoolKeys keys = VPA_POOL_KEYS_DEFAULT;
  const char *format = cli->common.format != NULL ? cli->common.format : "text";
  g_autoptr (GPtrArray) nets = NULL;
  g_autoptr (GArray) netrows = NULL;
  gint64 t0;

  if (cli->group_by != NULL && !vpa_pools_keys_parse (cli->group_by, &keys, error))
    {
      g_prefix_error (error, "--group-by: ");
      return FALSE;
    }
  if (strcmp (format, "text") != 0 && strcmp (format, "json") != 0 &&
      strcmp (format, "openmetrics") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--format '%s': expected text, json or openmetrics", format);
      return FALSE;
    }
  if (strcmp (format, "openmetrics") == 0 && cli->group_by != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--group-by: not with --format openmetrics (its labels are fixed)");
      return FALSE;
    }
  t0 = g_get_monotonic_time ();
  if (!vpa_cli_world_load (cli, &w, error) || (inv = vpa_cli_world_inventory (&w, error)) == NULL ||
      (nets = vpa_cli_world_load_networks_shown (cli)) == NULL)
    return FALSE;
  netrows = vpa_netpool_rows (inv, nets);
  if (strcmp (format, "openmetrics") == 0)
    {
      out = pools_openmetrics (inv, netrows,
                               (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC, w.config);
    }
  else if (strcmp (format, "json") == 0)
    {
      pools = vpa_pools_generate (inv, keys);
      out = vpa_output_ops_pools_json_networks (inv, pools, netrows);
    }
  else
    {
      g_autofree char *table = NULL, *more = NULL;

      pools = vpa_pools_generate (inv, keys);
      table = vpa_output_pools_text_ordered (inv, pools, cli->group_by);
      more = vpa_output_ops_netpool_text (inv, netrows);
      out = g_strconcat (table, more, NULL);
    }
  if (!emit (cli, out, error))
    return FALSE;
  pools_hint (inv);
  return TRUE;
}

/* devices --all: every PCI function, admitted or not, and the spec that
 * admits it, to write specs from. */
static gboolean
devices_all (const VpaCli *cli, VpaCliWorld *w, gboolean json, GError **error)
{
  g_autofree char *out = NULL;

  if (cli->alias != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "devices: --all lists every device; --alias '%s' selects inventory devices",
                   cli->alias);
      return FALSE;
    }
  if (!w->host->sealed && !vpa_host_seal (w->host, error))
    return FALSE;
  out = json ? vpa_output_discovery_json (w->host, w->config)
             : vpa_output_discovery_text (w->host, w->config);
  return emit (cli, out, error);
}

gboolean
vpa_cli_show_devices (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_autofree char *out = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  g_autoptr (GArray) netrows = NULL;
  const VpaAlias *alias = NULL;
  gboolean json;

  if (!vpa_cli_common_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (!vpa_cli_world_load (cli, &w, error))
    return FALSE;
  if (cli->alias != NULL && (alias = vpa_config_alias (w.config, cli->alias)) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "--alias '%s': %s has no [alias %s]",
                   cli->alias, w.config->path, cli->alias);
      return FALSE;
    }
  if (cli->all)
    return devices_all (cli, &w, json, error);
  if ((inv = vpa_cli_world_inventory (&w, error)) == NULL || (nets = vpa_cli_world_load_networks_shown (cli)) == NULL)
    return FALSE;
  command_hint ("devices", inv);
  netrows = vpa_netpool_rows (inv, nets);
  if (json)
    {
      out = vpa_output_ops_devices_json (inv, alias, netrows);
    }
  else
    {
      g_autofree char *table = vpa_output_ops_devices_text (inv, alias);
      g_autofree char *more = vpa_output_ops_netpool_text (inv, netrows);
      out = g_strconcat (table, more, NULL);
    }
  return emit (cli, out, error);
}

/* config check: the findings of the text checks, the loader's error, and
 * the inventory checks, one a line on stdout; exit 0 clean, 1 warnings,
 * 2 errors (docs/operations.md). */
gboolean
vpa_cli_show_config (VpaCli *cli, GError **error)
{
  g_autoptr (GPtrArray) findings =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_lint_finding_free);
  g_autofree char *buf = NULL;
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GError) local = NULL;
  const char *path = cli->common.config_path;
  gsize len = 0;
  gint worst;

  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1 ||
      strcmp (cli->common.args[0], "check") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "config: expected 'check'");
      return FALSE;
    }
  if (path == NULL)
    path = g_getenv ("VPA_CONFIG");
  if (path == NULL || *path == '\0')
    path = VPA_SYSCONFDIR "/virt-pci-affinity/virt-pci-affinity.conf";
  if (!vpa_cli_world_read_file_bounded (path, &buf, &len, error))
    return FALSE;
  vpa_config_lint_text (&(VpaDoc){ buf, len, path }, findings);
  config = vpa_config_load_data (buf, len, path, &local);
  if (config == NULL)
    {
      VpaLintFinding *f = g_new0 (VpaLintFinding, 1);
      f->level = VPA_LINT_ERROR;
      f->line = g_strdup_printf ("%s", local->message);
      g_ptr_array_add (findings, f);
    }
  else
    {
      VpaHost *host = vpa_source_load (vpa_cli_world_inventory_uri (cli), &local);
      if (host != NULL)
        inv = vpa_inventory_new (host, config, NULL, &local);
      if (inv != NULL)
        {
          vpa_config_lint_inventory (config, inv, buf, len, findings);
        }
      else
        {
          VpaLintFinding *f = g_new0 (VpaLintFinding, 1);
          f->level = VPA_LINT_WARNING;
          f->line = g_strdup_printf ("%s: warning: not checked against the inventory: %s", path,
                                     local->message);
          g_ptr_array_add (findings, f);
        }
    }
  for (guint i = 0; i < findings->len; i++)
    printf ("%s\n", ((VpaLintFinding *) findings->pdata[i])->line);
  worst = vpa_config_lint_worst (findings);
  if (worst < VPA_LINT_WARNING)
    {
      printf ("%s: ok\n", path);
      return TRUE;
    }
  g_set_error (error, VPA_ERROR,
               worst == VPA_LINT_ERROR ? VPA_ERROR_INVALID : VPA_ERROR_UNSATISFIABLE,
               "config check: %s: %u finding(s) on stdout", path, findings->len);
  return FALSE;
}

/* Whether the hook guards this host, and what to do when it does not
 * (vpa-cli-status.c): exit 1 with one stdout line per thing to fix. */
gboolean
vpa_cli_show_status (VpaCli *cli, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (vpa_cli_world_inventory_uri (cli), &local);
  const char *root = cli->root != NULL ? cli->root : "";
  const char *env = g_getenv ("VPA_CONFIG");
  g_autofree char *path = g_strconcat (root, VPA_CONFIG_DEFAULT_PATH, NULL);
  VpaCliStatus st = { root, path, vpa_cli_world_inventory_uri (cli), host, NULL };
  guint fixes;

  if (cli->common.args != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "status: unexpected argument '%s'",
                   cli->common.args[0]);
      return FALSE;
    }
  if (cli->common.config_path != NULL)
    {
      st.config_path = cli->common.config_path;
    }
  else if (env != NULL && *env != '\0')
    {
      st.config_path = env;
    }
  st.host_error = local != NULL ? local->message : NULL;
  fixes = vpa_cli_status_run (&st);
  if (fixes == 0)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "status: %u thing%s to fix, each on stdout",
               fixes, fixes == 1 ? "" : "s");
  return FALSE;
}

/* The PCIe distance matrix between devices, as nvidia-smi topo -m. */
gboolean
vpa_cli_show_topology (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaTopology) topo = NULL;
  g_autofree char *out = NULL;
  gboolean json;

  if (!vpa_cli_common_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (!vpa_cli_world_load (cli, &w, error) || (inv = vpa_cli_world_inventory (&w, error)) == NULL)
    return FALSE;
  command_hint ("topology", inv);
  topo = vpa_topology_new (inv, cli->devices, error);
  if (topo == NULL)
    return FALSE;
  out = json ? vpa_output_topology_json (inv, topo) : vpa_output_topology_text (inv, topo);
  return vpa_cli_common_write_stdout (out, error);
}

gboolean
vpa_cli_show_nodes (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaCapacity) cap = NULL;
  g_autofree char *out = NULL;
  gboolean json;

  if (cli->group_by != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "nodes: --group-by applies to pools only");
      return FALSE;
    }
  if (!vpa_cli_common_format_is_json (&cli->common, &json, error) || !vpa_cli_world_load (cli, &w, error))
    return FALSE;
  if (!w.host->sealed && !vpa_host_seal (w.host, error))
    return FALSE;
  cap = vpa_capacity_new (w.host, w.config, w.claims, NULL, error);
  if (cap == NULL)
    return FALSE;
  out = json ? vpa_output_nodes_json (cap) : vpa_output_nodes_text (cap);
  return vpa_cli_common_write_stdout (out, error);
}

gboolean
vpa_cli_show_traits (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_auto (GStrv) traits = NULL;
  g_autofree char *out = NULL;
  gboolean json;

  if (!vpa_cli_common_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (!vpa_cli_world_load (cli, &w, error) || (inv = vpa_cli_world_inventory (&w, error)) == NULL)
    return FALSE;
  traits = vpa_traits_compute (inv);
  out = json ? vpa_output_ops_traits_json (traits) : vpa_output_traits_text (traits);
  return vpa_cli_common_write_stdout (out, error);
}

gboolean
vpa_cli_show_snapshot (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };

  if (!vpa_cli_world_load (cli, &w, error))
    return FALSE;
  /* The snapshot's domains are the claims of the --connect connection. */
  g_ptr_array_set_size (w.host->claims, 0);
  for (guint i = 0; i < w.claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (w.claims, i);
      vpa_host_add_claim (w.host, vpa_claim_copy (c));
    }
  return vpa_snapshot_write (w.host, stdout, error);
}
