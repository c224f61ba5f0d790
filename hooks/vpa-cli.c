/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity: the command-line front end. argv, stdin/stdout, exit
 * statuses and GError -> one stderr line happen here and nowhere else.
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
#include "vpa-cli-device.h"
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

typedef struct {
  VpaCliCommon common;
  char *group_by;
  char *devices;
  gboolean explain;
  char *port;
  char *physnet;
  char *policy;
  gboolean live;
  gboolean persistent;
  char *vnic_type; /* attach, request */
  gboolean trusted;
  char *mac;
  char *pf_group; /* request */
  char *locality_group;
  gboolean place;
  gboolean all; /* devices --all */
  char *output;
  char *alias;
  char *root; /* status --root */
} VpaCli;

static void
vpa_cli_clear (VpaCli *cli)
{
  vpa_cli_common_clear (&cli->common);
  g_free (cli->group_by);
  g_free (cli->devices);
  g_free (cli->port);
  g_free (cli->physnet);
  g_free (cli->policy);
  g_free (cli->vnic_type);
  g_free (cli->mac);
  g_free (cli->pf_group);
  g_free (cli->locality_group);
  g_free (cli->root);
  g_free (cli->output);
  g_free (cli->alias);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VpaCli, vpa_cli_clear)

static int
fail (GError *error)
{
  return vpa_cli_fail ("virt-pci-affinity: ", error);
}

/* ------------------------------------------------------------------ */
/* Where things come from                                              */
/* ------------------------------------------------------------------ */

static const char *
connect_uri (const VpaCli *cli)
{
  return vpa_cli_connect_uri (&cli->common);
}

static const char *
inventory_uri (const VpaCli *cli)
{
  return vpa_cli_inventory_uri (&cli->common);
}

static VpaConfig *
load_config (const VpaCli *cli, GError **error)
{
  return vpa_cli_load_config (&cli->common, error);
}

/* libvirt, loaded by the first command that needs a live connection. */
static const VpaCliVirtModule *
virt_module (GError **error)
{
  static const VpaCliVirtModule *virt;

  if (virt == NULL)
    virt = vpa_cli_module_load (VPA_CLI_VIRT_MODULE, VPA_CLI_VIRT_ENTRY, error);
  return virt;
}

/* The libvirt inventory source without loading libvirt for the built-in
 * sources (tried first): a URI reaches this one only when it is neither a
 * snapshot nor sysfs. The probe of libvpa-virt wants a "://"; with the
 * module missing, the URI is taken so that load reports why. */
static gboolean
virt_stub_probe (const char *uri)
{
  const VpaCliVirtModule *virt;

  if (strstr (uri, "://") == NULL)
    return FALSE;
  virt = virt_module (NULL);
  return virt == NULL || virt->probe (uri);
}

static VpaHost *
virt_stub_load (const char *uri, GError **error)
{
  const VpaCliVirtModule *virt = virt_module (error);

  return virt != NULL ? virt->load_host (uri, error) : NULL;
}

static const VpaSourceOps virt_stub_ops = { "libvirt", virt_stub_probe, virt_stub_load };

/* The claims of the domains on a connection. A snapshot URI is read by our
 * own reader (its <domain> children), so read-only commands on a snapshot
 * never start libvirt's test driver. */
static GPtrArray *
claims_from_uri (const char *uri, GError **error)
{
  g_autofree char *snap = vpa_source_snapshot_path (uri);

  if (snap != NULL)
    {
      g_autoptr (VpaHost) host = vpa_snapshot_load (snap, error);
      return host != NULL ? vpa_claims_filter (host->claims, NULL, FALSE) : NULL;
    }
  {
    const VpaCliVirtModule *virt = virt_module (error);
    return virt != NULL ? virt->load_claims (uri, error) : NULL;
  }
}

/* The claims: the domains on the --connect connection. */
static GPtrArray *
load_claims (const VpaCli *cli, VpaHost *inventory_host, GError **error)
{
  const char *uri = connect_uri (cli);
  g_autofree char *snap = vpa_source_snapshot_path (uri);

  if (snap != NULL && g_strcmp0 (inventory_uri (cli), uri) == 0)
    return vpa_claims_filter (inventory_host->claims, NULL, FALSE);
  return claims_from_uri (uri, error);
}

static char *
domain_xml (const char *uri, const char *name, GError **error)
{
  const VpaCliVirtModule *virt = virt_module (error);

  return virt != NULL ? virt->domain_xml (uri, name, error) : NULL;
}

/* TRUE when the file at path mentions needle: read in chunks, so that a
 * snapshot of any size costs one pass and constant memory. */
static gboolean
file_mentions (const char *path, const char *needle, GError **error)
{
  g_autoptr (GFileInputStream) in = NULL;
  g_autoptr (GFile) file = g_file_new_for_path (path);
  gsize n = strlen (needle), keep = 0;
  char buf[65536];

  g_return_val_if_fail (n > 0 && n < sizeof buf / 2, FALSE);
  if ((in = g_file_read (file, NULL, error)) == NULL)
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  for (;;)
    {
      gssize got = g_input_stream_read (G_INPUT_STREAM (in), buf + keep, sizeof buf - keep, NULL,
                                        error);
      gsize have;

      if (got < 0)
        {
          g_prefix_error (error, "%s: ", path);
          return FALSE;
        }
      have = keep + (gsize) got;
      if (memmem (buf, have, needle, n) != NULL)
        return TRUE;
      if (got == 0)
        return FALSE;
      /* a needle across two chunks */
      keep = MIN (have, n - 1);
      memmove (buf, buf + have - keep, keep);
    }
}

/* libvirt's hostdev networks on the --connect connection. A snapshot is
 * asked (through libvirt's test driver, which reads its <network>
 * children) only when it has any, so that a snapshot without networks
 * never loads libvirt. */
static GPtrArray *
load_networks (const VpaCli *cli, GError **error)
{
  const char *uri = connect_uri (cli);
  g_autofree char *snap = vpa_source_snapshot_path (uri);
  g_autofree char *test_uri = NULL;
  const VpaCliVirtModule *virt;

  if (snap != NULL)
    {
      g_autoptr (GError) local = NULL;

      if (!file_mentions (snap, "<network", &local))
        {
          if (local == NULL)
            return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_hostdev_net_free);
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s", local->message);
          return NULL;
        }
      uri = test_uri = g_strconcat ("test://", snap, NULL);
    }
  if ((virt = virt_module (error)) == NULL)
    return NULL;
  return virt->load_networks (uri, error);
}

/* For pools and devices, which only show them: a connection whose
 * networks cannot be listed (a host without libvirt's network daemon)
 * shows none, with one warning line. */
static GPtrArray *
load_networks_shown (const VpaCli *cli)
{
  g_autoptr (GError) local = NULL;
  GPtrArray *nets = load_networks (cli, &local);

  if (nets != NULL)
    return nets;
  {
    g_autofree char *message = g_strdup_printf ("hostdev networks not shown: %s",
                                                local != NULL ? local->message : "unknown error");
    vpa_cli_warn (message);
  }
  return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_hostdev_net_free);
}

/* For place, define and check: the networks only when the domain has an
 * <interface type='network'> a port may name (then they are needed, and
 * failing to list them is an error). */
static GPtrArray *
load_networks_for (const VpaCli *cli, const char *buf, GError **error)
{
  if (buf != NULL && strstr (buf, "type='network'") == NULL &&
      strstr (buf, "type=\"network\"") == NULL)
    return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_hostdev_net_free);
  return load_networks (cli, error);
}

typedef struct {
  VpaConfig *config;
  VpaHost *host;
  GPtrArray *claims;
} VpaCliWorld;

static void
world_clear (VpaCliWorld *w)
{
  g_clear_pointer (&w->config, vpa_config_free);
  g_clear_pointer (&w->host, vpa_host_free);
  g_clear_pointer (&w->claims, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VpaCliWorld, world_clear)

static gboolean
world_load (const VpaCli *cli, VpaCliWorld *w, GError **error)
{
  w->config = load_config (cli, error);
  if (w->config == NULL)
    return FALSE;
  w->host = vpa_source_load (inventory_uri (cli), error);
  if (w->host == NULL)
    return FALSE;
  w->claims = load_claims (cli, w->host, error);
  return w->claims != NULL;
}

static VpaInventory *
world_inventory (VpaCliWorld *w, GError **error)
{
  VpaInventory *inv = vpa_inventory_new (g_steal_pointer (&w->host), w->config,
                                         g_steal_pointer (&w->claims), error);
  return inv;
}

/* A FILE is bounded like stdin: a FIFO, /dev/zero or a runaway file must
 * not exhaust memory before the XML parser's own size limit refuses it. */
static gboolean
read_file_bounded (const char *path, char **buf, gsize *len, GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  FILE *f = fopen (path, "re");
  char chunk[65536];
  size_t n;
  int e = 0;

  if (f == NULL)
    {
      e = errno;
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: cannot read: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  while (s->len <= VPA_XML_MAX_DOCUMENT && (n = fread (chunk, 1, sizeof chunk, f)) > 0)
    g_string_append_len (s, chunk, (gssize) n);
  if (ferror (f))
    e = errno != 0 ? errno : EIO;
  fclose (f);
  if (e != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: cannot read: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  if (s->len > VPA_XML_MAX_DOCUMENT)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: input exceeds the limit of 16 MiB", path);
      return FALSE;
    }
  *len = s->len;
  *buf = g_string_free (g_steal_pointer (&s), FALSE);
  return TRUE;
}

static gboolean
read_input (const char *path, char **buf, gsize *len, GError **error)
{
  if (g_strcmp0 (path, "-") == 0)
    return vpa_cli_read_stdin (buf, len, error);
  return read_file_bounded (path, buf, len, error);
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

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
    return vpa_output_write_file (cli->output, out, error);
  return vpa_cli_write_stdout (out, error);
}

/* The pools and host gauges as OpenMetrics (docs/operations.md). */
static char *
pools_openmetrics (const VpaInventory *inv, GArray *netrows, double read_seconds,
                   const VpaConfig *config)
{
  g_autoptr (VpaMetrics) m = vpa_metrics_new (FALSE);
  g_autoptr (GError) verdicts_error = NULL;
  g_autoptr (GArray) pools = vpa_pools_generate (inv, VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_SOCKET);

  vpa_metrics_add_pools (m, inv, pools);
  vpa_metrics_add_netpool (m, netrows);
  vpa_metrics_set_gauge (m, NULL, "inventory_read_seconds",
                         "Seconds taken to read the inventory, the claims and the configuration.",
                         read_seconds);
  vpa_metrics_set_gauge (m, NULL, "inventory_devices",
                         "PCI devices in the inventory (admitted by a device spec).",
                         inv->n_devices);
  vpa_metrics_set_gauge (m, NULL, "devices_unassignable",
                         "PCI devices of the host that no device spec admits.",
                         vpa_inventory_count_unassignable (inv));
  /* the hook's verdicts on this host (docs/operations.md) */
  if (!vpa_output_verdicts_add (m, config->hook_state_dir, &verdicts_error))
    g_printerr ("virt-pci-affinity: warning: hook verdicts not shown: %s\n",
                verdicts_error->message);
  return vpa_metrics_to_string (m);
}

static gboolean
cmd_pools (VpaCli *cli, GError **error)
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

  if (cli->group_by != NULL && !vpa_pool_keys_parse (cli->group_by, &keys, error))
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
  if (!world_load (cli, &w, error) || (inv = world_inventory (&w, error)) == NULL ||
      (nets = load_networks_shown (cli)) == NULL)
    return FALSE;
  netrows = vpa_netpool_rows (inv, nets);
  if (strcmp (format, "openmetrics") == 0)
    out = pools_openmetrics (inv, netrows,
                             (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC, w.config);
  else if (strcmp (format, "json") == 0)
    {
      pools = vpa_pools_generate (inv, keys);
      out = vpa_output_pools_json_networks (inv, pools, netrows);
    }
  else
    {
      g_autofree char *table = NULL, *more = NULL;

      pools = vpa_pools_generate (inv, keys);
      table = vpa_output_pools_text_ordered (inv, pools, cli->group_by);
      more = vpa_output_netpool_text (inv, netrows);
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

static gboolean
cmd_devices (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_autofree char *out = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  g_autoptr (GArray) netrows = NULL;
  const VpaAlias *alias = NULL;
  gboolean json;

  if (!vpa_cli_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (!world_load (cli, &w, error))
    return FALSE;
  if (cli->alias != NULL && (alias = vpa_config_alias (w.config, cli->alias)) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "--alias '%s': %s has no [alias %s]",
                   cli->alias, w.config->path, cli->alias);
      return FALSE;
    }
  if (cli->all)
    return devices_all (cli, &w, json, error);
  if ((inv = world_inventory (&w, error)) == NULL || (nets = load_networks_shown (cli)) == NULL)
    return FALSE;
  command_hint ("devices", inv);
  netrows = vpa_netpool_rows (inv, nets);
  if (json)
    out = vpa_output_devices_json (inv, alias, netrows);
  else
    {
      g_autofree char *table = vpa_output_devices_text (inv, alias);
      g_autofree char *more = vpa_output_netpool_text (inv, netrows);
      out = g_strconcat (table, more, NULL);
    }
  return emit (cli, out, error);
}

/* config check: the findings of the text checks, the loader's error, and
 * the inventory checks, one a line on stdout; exit 0 clean, 1 warnings,
 * 2 errors (docs/operations.md). */
static gboolean
cmd_config (VpaCli *cli, GError **error)
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
  if (!read_file_bounded (path, &buf, &len, error))
    return FALSE;
  vpa_config_lint_text (buf, len, path, findings);
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
      VpaHost *host = vpa_source_load (inventory_uri (cli), &local);
      if (host != NULL)
        inv = vpa_inventory_new (host, config, NULL, &local);
      if (inv != NULL)
        vpa_config_lint_inventory (config, inv, buf, len, findings);
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
  worst = vpa_lint_worst (findings);
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
static gboolean
cmd_status (VpaCli *cli, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaHost) host = vpa_source_load (inventory_uri (cli), &local);
  const char *root = cli->root != NULL ? cli->root : "";
  const char *env = g_getenv ("VPA_CONFIG");
  g_autofree char *path = g_strconcat (root, VPA_CONFIG_DEFAULT_PATH, NULL);
  VpaCliStatus st = { root, path, inventory_uri (cli), host, NULL };
  guint fixes;

  if (cli->common.args != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "status: unexpected argument '%s'",
                   cli->common.args[0]);
      return FALSE;
    }
  if (cli->common.config_path != NULL)
    st.config_path = cli->common.config_path;
  else if (env != NULL && *env != '\0')
    st.config_path = env;
  st.host_error = local != NULL ? local->message : NULL;
  fixes = vpa_cli_status_run (&st);
  if (fixes == 0)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "status: %u thing%s to fix, each on stdout",
               fixes, fixes == 1 ? "" : "s");
  return FALSE;
}

/* The PCIe distance matrix between devices, as nvidia-smi topo -m. */
static gboolean
cmd_topology (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaTopology) topo = NULL;
  g_autofree char *out = NULL;
  gboolean json;

  if (!vpa_cli_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (!world_load (cli, &w, error) || (inv = world_inventory (&w, error)) == NULL)
    return FALSE;
  command_hint ("topology", inv);
  topo = vpa_topology_new (inv, cli->devices, error);
  if (topo == NULL)
    return FALSE;
  out = json ? vpa_output_topology_json (inv, topo) : vpa_output_topology_text (inv, topo);
  return vpa_cli_write_stdout (out, error);
}

static gboolean
cmd_nodes (VpaCli *cli, GError **error)
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
  if (!vpa_cli_format_is_json (&cli->common, &json, error) || !world_load (cli, &w, error))
    return FALSE;
  if (!w.host->sealed && !vpa_host_seal (w.host, error))
    return FALSE;
  cap = vpa_capacity_new (w.host, w.config, w.claims, NULL, error);
  if (cap == NULL)
    return FALSE;
  out = json ? vpa_output_nodes_json (cap) : vpa_output_nodes_text (cap);
  return vpa_cli_write_stdout (out, error);
}

static gboolean
cmd_traits (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autoptr (VpaInventory) inv = NULL;
  g_auto (GStrv) traits = NULL;
  g_autofree char *out = NULL;
  gboolean json;

  if (!vpa_cli_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (!world_load (cli, &w, error) || (inv = world_inventory (&w, error)) == NULL)
    return FALSE;
  traits = vpa_traits_compute (inv);
  out = json ? vpa_output_traits_json (traits) : vpa_output_traits_text (traits);
  return vpa_cli_write_stdout (out, error);
}

static gboolean
cmd_snapshot (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };

  if (!world_load (cli, &w, error))
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

static gboolean
cmd_place (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autofree char *buf = NULL;
  g_autofree char *out = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  const char *path;
  gsize len;
  VpaPlaceReport report = { 0 };

  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "place: expected one FILE (or - for stdin)");
      return FALSE;
    }
  path = cli->common.args[0];
  if (!read_input (path, &buf, &len, error))
    return FALSE;
  if (!world_load (cli, &w, error) || (nets = load_networks_for (cli, buf, error)) == NULL)
    return FALSE;
  if (cli->explain)
    report.explain = g_string_new (NULL);
  out = vpa_pipeline_place_nets (g_steal_pointer (&w.host), w.claims, w.config, buf, len,
                                 strcmp (path, "-") == 0 ? "stdin" : path, nets, &report, error);
  if (report.explain != NULL)
    {
      fputs (report.explain->str, stderr);
      g_string_free (report.explain, TRUE);
    }
  if (out == NULL)
    return FALSE;
  return vpa_cli_write_stdout (out, error);
}

/* check's argument by its form, never by what the current directory
 * holds: a FILE is "-", has a '/' or ends in ".xml" (./NAME for any
 * other file); anything else names a domain (libvirt's names have no
 * '/'). */
static gboolean
check_arg_is_file (const char *arg)
{
  return strcmp (arg, "-") == 0 || strchr (arg, '/') != NULL || g_str_has_suffix (arg, ".xml");
}

/* check --live DOMAIN: the running truth, from the libvirt module. */
static gboolean
check_live (VpaCli *cli, const char *name, GError **error)
{
  const VpaCliVirtModule *virt = virt_module (error);
  const char *format = cli->common.format != NULL ? cli->common.format : "text";
  g_autofree char *xml = NULL;
  g_autofree char *out = NULL;
  g_autofree char *failure = NULL;

  if (strcmp (format, "text") != 0 && strcmp (format, "json") != 0 &&
      strcmp (format, "openmetrics") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "check --live: --format: expected text, json or openmetrics, not '%s'",
                   format);
      return FALSE;
    }
  if (virt == NULL || (xml = domain_xml (connect_uri (cli), name, error)) == NULL)
    return FALSE;
  if ((out = virt->check_live (name, xml, format, &failure, error)) == NULL ||
      !vpa_cli_write_stdout (out, error))
    return FALSE;
  if (failure != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                   "check --live: domain '%s': %s (the report is on stdout)", name, failure);
      return FALSE;
    }
  return TRUE;
}

static gboolean
cmd_check (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autofree char *buf = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GPtrArray) results = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  const char *arg;
  gsize len;
  gboolean ok = TRUE;
  guint problems = 0;
  gboolean json;

  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "check: expected one DOMAIN or FILE");
      return FALSE;
    }
  arg = cli->common.args[0];
  if (cli->live && check_arg_is_file (arg))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "check --live: expected a running DOMAIN, not the file '%s'", arg);
      return FALSE;
    }
  if (cli->live)
    return check_live (cli, arg, error);
  if (!vpa_cli_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (check_arg_is_file (arg))
    {
      if (!read_input (arg, &buf, &len, error))
        return FALSE;
    }
  else if ((buf = domain_xml (connect_uri (cli), arg, error)) == NULL)
    return FALSE;
  else
    len = strlen (buf);

  if (!world_load (cli, &w, error) || (nets = load_networks_for (cli, buf, error)) == NULL)
    return FALSE;
  dom = vpa_domain_parse (buf, len, strcmp (arg, "-") == 0 ? "stdin" : arg, error);
  if (dom == NULL)
    return FALSE;
  results = vpa_pipeline_check_nets (g_steal_pointer (&w.host), w.claims, w.config, dom, nets,
                                     TRUE, &ok, error);
  if (results == NULL)
    return FALSE;
  if (json)
    {
      g_autofree char *out = vpa_output_check_json (dom->name, results, ok);
      if (!vpa_cli_write_stdout (out, error))
        return FALSE;
    }
  for (guint i = 0; i < results->len; i++)
    {
      const VpaCheckResult *r = g_ptr_array_index (results, i);
      g_autofree char *line = json ? NULL : vpa_message_bound (r->line, VPA_MESSAGE_MAX);

      if (line != NULL)
        printf ("%s\n", line);
      if (r->status != VPA_CHECK_OK)
        problems++;
    }
  /* The report is check's answer, on stdout even when it is "no" (exit
   * 1); stderr says so in one line, wherever stdout goes. */
  if (fflush (stdout) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "check: cannot write the report: %s",
                   g_strerror (errno));
      return FALSE;
    }
  if (!ok)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                   "check: domain '%s' breaks its placement: %u problem%s (the report is on stdout)",
                   dom->name != NULL ? dom->name : "(unnamed)", problems, problems == 1 ? "" : "s");
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  const VpaCli *cli;
  VpaConfig *config;
  const char *buf;
  gsize len;
  const char *what;
  GPtrArray *nets;
} DefineCtx;

/* Called with the connection's current claims, under the define lock. */
static char *
define_place_cb (GPtrArray *claims, gpointer user_data, GError **error)
{
  DefineCtx *ctx = user_data;
  VpaHost *host = vpa_source_load (inventory_uri (ctx->cli), error);

  if (host == NULL)
    return NULL;
  return vpa_pipeline_place_nets (host, claims, ctx->config, ctx->buf, ctx->len, ctx->what,
                                  ctx->nets, NULL, error);
}

/* libvirt gives the devices it adds at define time (a USB controller, the
 * memory balloon) and those without an address free root ports, the
 * spare ones of <vpa:guest-numa> too. Placing libvirt's own XML of an
 * inactive domain again adds spares for those taken; defining that
 * settles it (libvirt has nothing left to put anywhere). */
static gboolean
settle_guest_numa (const VpaCli *cli, const VpaCliVirtModule *virt, const DefineCtx *ctx,
                   const char *name, GError **error)
{
  g_autofree char *defined = NULL;
  g_autofree char *again = NULL;
  g_autoptr (xmlDoc) doc = NULL;
  DefineCtx second = *ctx;

  if ((defined = virt->domain_xml (connect_uri (cli), name, error)) == NULL)
    return FALSE;
  /* a running domain's XML is its live one: leave its next boot alone */
  if ((doc = vpa_xml_parse_memory (defined, strlen (defined), name, error)) == NULL)
    return FALSE;
  if (xmlHasProp (xmlDocGetRootElement (doc), (const xmlChar *) "id") != NULL)
    return TRUE;
  second.buf = defined;
  second.len = strlen (defined);
  return virt->define (connect_uri (cli), inventory_uri (cli), define_place_cb, &second, &again,
                       error);
}

/* The domain is defined and sound already: a failure to settle only
 * costs spares, which a later `place` and define restore. */
static void
define_settle_guest_numa (const VpaCli *cli, const VpaCliVirtModule *virt, const DefineCtx *ctx,
                          const char *name)
{
  g_autoptr (GError) local = NULL;

  if (memmem (ctx->buf, ctx->len, "guest-numa", strlen ("guest-numa")) == NULL)
    return;
  if (!settle_guest_numa (cli, virt, ctx, name, &local))
    {
      g_autofree char *message = g_strdup_printf ("domain '%s' is defined, but the spare root ports libvirt gave its own devices were not replaced: %s",
                                                  name, local->message);
      vpa_cli_warn (message);
    }
}

static gboolean define_document (VpaCli *cli, const char *buf, gsize len, const char *what,
                                 GError **error);

static gboolean
cmd_define (VpaCli *cli, GError **error)
{
  g_autofree char *buf = NULL;
  gsize len;

  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "define: expected one FILE");
      return FALSE;
    }
  if (!read_input (cli->common.args[0], &buf, &len, error))
    return FALSE;
  return define_document (cli, buf, len, cli->common.args[0], error);
}

/* define's work on a document read: placed and defined under the lock,
 * the domain's name on stdout. */
static gboolean
define_document (VpaCli *cli, const char *buf, gsize len, const char *what, GError **error)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autofree char *name = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  const VpaCliVirtModule *virt;
  DefineCtx ctx;

  if ((config = load_config (cli, error)) == NULL ||
      (nets = load_networks_for (cli, buf, error)) == NULL)
    return FALSE;
  ctx = (DefineCtx){ cli, config, buf, len, what, nets };
  if ((virt = virt_module (error)) == NULL ||
      !virt->define (connect_uri (cli), inventory_uri (cli), define_place_cb, &ctx, &name,
                     error))
    return FALSE;
  define_settle_guest_numa (cli, virt, &ctx, name);
  printf ("%s\n", name);
  return TRUE;
}

typedef struct {
  const VpaCli *cli;
  VpaConfig *config;
  VpaPortRequest want; /* the port as the options describe it */
} AttachCtx;

/* Called with the connection's current claims, under the lock: the
 * domain's XML is read here too, so that the nodes a concurrent define
 * bound it to are the ones the port is placed against. */
static char *
attach_place_cb (GPtrArray *claims, gpointer user_data, VpaAttachRecord *record,
                 GError **error)
{
  AttachCtx *ctx = user_data;
  g_autoptr (VpaDomain) dom = NULL;
  g_autofree char *xml = NULL;
  VpaHost *host;
  VpaAddr addr;

  if ((xml = domain_xml (connect_uri (ctx->cli), ctx->cli->common.args[0], error)) == NULL)
    return NULL;
  dom = vpa_domain_parse (xml, strlen (xml), ctx->cli->common.args[0], error);
  if (dom == NULL)
    return NULL;
  if ((host = vpa_source_load (inventory_uri (ctx->cli), error)) == NULL)
    return NULL;
  return vpa_pipeline_attach_request (host, claims, ctx->config, dom, &ctx->want, ctx->cli->mac,
                                      &addr, record, error);
}

/* A MAC address as libvirt's <mac address>: six hex pairs, ':' apart. */
static gboolean
mac_valid (const char *mac)
{
  if (strlen (mac) != 17)
    return FALSE;
  for (guint i = 0; i < 17; i++)
    if (i % 3 == 2 ? mac[i] != ':' : !g_ascii_isxdigit (mac[i]))
      return FALSE;
  return TRUE;
}

/* The port attach's options describe (its strings are cli's). */
static gboolean
attach_want (const VpaCli *cli, VpaPortRequest *want, GError **error)
{
  *want = (VpaPortRequest){ .locality_group = cli->locality_group,
                            .device = cli->port,
                            .physnet = cli->physnet,
                            .trusted = cli->trusted ? 1 : -1 };
  if (cli->policy != NULL && !vpa_policy_from_string (cli->policy, &want->policy))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --policy '%s': unknown NUMA affinity policy (expected required, legacy, preferred or socket)",
                   cli->policy);
      return FALSE;
    }
  want->has_policy = cli->policy != NULL;
  if (cli->vnic_type != NULL && strcmp (cli->vnic_type, "direct") != 0 &&
      strcmp (cli->vnic_type, "direct-physical") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --vnic-type '%s': unknown vnic type (expected direct or direct-physical)",
                   cli->vnic_type);
      return FALSE;
    }
  want->want_pf = g_strcmp0 (cli->vnic_type, "direct-physical") == 0;
  if (cli->mac != NULL && !mac_valid (cli->mac))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --mac '%.40s': expected a MAC address as 52:54:00:12:34:56", cli->mac);
      return FALSE;
    }
  return TRUE;
}

/* The file an "attach --config FILE" meant as the configuration (an
 * argument besides DOMAIN that is a regular file), or NULL. */
static const char *
attach_config_value (const VpaCli *cli)
{
  if (!cli->persistent || cli->common.args == NULL || g_strv_length (cli->common.args) < 2)
    return NULL;
  for (guint i = 0; cli->common.args[i] != NULL; i++)
    if (g_file_test (cli->common.args[i], G_FILE_TEST_IS_REGULAR))
      return cli->common.args[i];
  return NULL;
}

static gboolean
cmd_attach (VpaCli *cli, GError **error)
{
  const char *file;
  g_autoptr (VpaConfig) config = NULL;
  g_autofree char *xml = NULL;
  const VpaCliVirtModule *virt;
  AttachCtx ctx = { 0 };
  VpaAddr addr = VPA_ADDR_NONE;
  char buf[VPA_ADDR_BUFLEN];

  if ((file = attach_config_value (cli)) != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --config '%s': attach's --config takes no value (virsh's persistent definition); the configuration file is --config-file FILE",
                   file);
      return FALSE;
    }
  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1 || cli->port == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: expected DOMAIN --port ALIAS [--physnet N] [--policy P]");
      return FALSE;
    }
  if (!attach_want (cli, &ctx.want, error))
    return FALSE;
  if ((config = load_config (cli, error)) == NULL)
    return FALSE;
  /* The domain must exist before the lock is taken (exit 2 otherwise);
   * its XML is read again under the lock. */
  if ((xml = domain_xml (connect_uri (cli), cli->common.args[0], error)) == NULL)
    return FALSE;
  ctx.cli = cli;
  ctx.config = config;
  if ((virt = virt_module (error)) == NULL ||
      !virt->attach (connect_uri (cli), inventory_uri (cli), cli->common.args[0], cli->live,
                     cli->persistent, attach_place_cb, &ctx, &addr, error))
    return FALSE;
  printf ("%s\n", vpa_addr_format (addr, buf));
  return TRUE;
}

/* request DOMAIN show|add-port|add-alias|set-numa|remove|place: the
 * requests of a defined domain edited in its persistent definition;
 * place (or --place) places and defines it as define does. */
static gboolean
cmd_request (VpaCli *cli, GError **error)
{
  VpaCliRequestPort port = { cli->physnet, cli->policy, cli->vnic_type, cli->pf_group,
                             cli->locality_group, cli->trusted, cli->mac };
  g_auto (VpaRequestEditResult) res = { 0 };
  g_autoptr (GPtrArray) attrs = NULL;
  g_autofree char *affinity = NULL;
  g_autofree char *summary = NULL;
  const VpaCliVirtModule *virt;
  VpaRequestEdit edit;
  gboolean show;

  if (!vpa_cli_request_parse (cli->common.args, &port, &show, &edit, &attrs, error) ||
      (virt = virt_module (error)) == NULL)
    return FALSE;
  if (show)
    {
      if ((affinity = virt->request_show (connect_uri (cli), cli->common.args[0], error)) == NULL)
        return FALSE;
      printf ("%s%s", affinity, affinity[0] != '\0' ? "\n" : "");
      return TRUE;
    }
  if (!virt->request_edit (connect_uri (cli), cli->common.args[0], &edit, &res, error))
    return FALSE;
  if (cli->place || edit.op == VPA_REQUEST_EDIT_PLACE)
    return define_document (cli, res.document, strlen (res.document), cli->common.args[0], error);
  summary = vpa_cli_request_summary (cli->common.args[0], &edit, &res);
  printf ("%s\n", summary);
  return TRUE;
}

/* ------------------------------------------------------------------ */

/* The one list of commands and which option groups each takes: --help,
 * the man page's test and the bash completion all read it (through
 * --help), so a new command or option appears in each. */
enum {
  OPT_FORMAT = 1 << 0,   /* --format text|json */
  OPT_GROUP_BY = 1 << 1, /* --group-by KEYS, --format also openmetrics */
  OPT_OUTPUT = 1 << 2,   /* --output FILE */
  OPT_PLACE = 1 << 3,    /* --explain */
  OPT_ATTACH = 1 << 4,   /* --port, --physnet, --policy, --live, --config (virsh's) */
  OPT_ALIAS = 1 << 5,    /* --alias NAME */
  OPT_DEVICES = 1 << 6,  /* --devices SEL */
  OPT_STATUS = 1 << 7,   /* --root DIR */
  OPT_REQUEST = 1 << 8,  /* a port's options, --place */
  OPT_LIVE = 1 << 9,     /* check --live */
};

typedef struct {
  const char *name;
  const char *args;
  const char *summary;
  gboolean (*run) (VpaCli *cli, GError **error);
  guint options;
} VpaCommand;

static const VpaCommand commands[] = {
  { "pools", "", "PCI device pools generated on demand from the inventory", cmd_pools,
    OPT_GROUP_BY | OPT_OUTPUT },
  { "devices", "", "every inventory device, its state and the domain holding it", cmd_devices,
    OPT_FORMAT | OPT_OUTPUT | OPT_ALIAS },
  { "place", "FILE|-", "fill every request of a domain with a device; print the XML", cmd_place,
    OPT_PLACE },
  { "check", "DOMAIN|FILE", "verify placed devices meet their policies (report on stdout, also on exit 1)", cmd_check,
    OPT_FORMAT | OPT_LIVE },
  { "define", "FILE", "place and define a domain, never handing out a held device", cmd_define,
    0 },
  { "attach", "DOMAIN --port ALIAS", "hot-plug a VF for a port by the same rules", cmd_attach,
    OPT_ATTACH },
  { "snapshot", "", "write a host snapshot of the inventory and claims", cmd_snapshot, 0 },
  { "traits", "", "the host's capability traits", cmd_traits, OPT_FORMAT },
  { "config", "check", "report configuration mistakes (exit 0 clean, 1 warnings, 2 errors)",
    cmd_config, 0 },
  { "topology", "", "PCIe distances between devices, as nvidia-smi topo -m", cmd_topology,
    OPT_FORMAT | OPT_DEVICES },
  { "nodes", "", "per NUMA node: CPUs, memory and pages still free", cmd_nodes, OPT_FORMAT },
  { "status", "", "is the hook installed, run by libvirtd, configured? (exit 1: what to fix)",
    cmd_status, OPT_STATUS },
  { "request", "DOMAIN show|add-port|add-alias|set-numa|remove|place",
    "edit a defined domain's requests (its persistent definition)", cmd_request, OPT_REQUEST },
};

static void
usage (FILE *f)
{
  fprintf (f, "Usage: virt-pci-affinity COMMAND [OPTIONS] [ARGS]\n\nCommands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (f, "  %-9s %-20s %s\n", commands[i].name, commands[i].args, commands[i].summary);
  fprintf (f, "  %-9s %-20s %s\n", "fleet", "sync|pools|filter", "pools and filters of many hosts");
  fprintf (f, "  %-9s %-20s %s\n", "device", "list|release|quarantine",
           "reserved devices: one-time-use, quarantined");
  fprintf (f, "\nCommon options: -c/--connect URI, --inventory SOURCE, --config FILE.\n"
              "Run 'virt-pci-affinity COMMAND --help' for a command's options.\n");
}

static int
run_command (const VpaCommand *cmd, int argc, char **argv)
{
  g_auto (VpaCli) cli = { 0 };
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *prog = g_strdup_printf ("virt-pci-affinity %s", cmd->name);
  GOptionEntry common[] = {
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &cli.common.connect,
      "libvirt URI of the domains (claims)", "URI" },
    { "inventory", 0, 0, G_OPTION_ARG_STRING, &cli.common.inventory,
      "where devices and topology come from (default: the --connect URI)", "SOURCE" },
    { "config", 0, 0, G_OPTION_ARG_FILENAME, &cli.common.config_path,
      "configuration file", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &cli.common.args, NULL, NULL },
    { NULL }
  };
  GOptionEntry format[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &cli.common.format, "text (default) or json", "FORMAT" },
    { NULL }
  };
  GOptionEntry pools[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &cli.common.format,
      "text (default), json or openmetrics", "FORMAT" },
    { "group-by", 0, 0, G_OPTION_ARG_STRING, &cli.group_by,
      "pool keys: vendor,product,numa_node,socket,dev_type,tags,pf,pcie-root,pcie-switch",
      "KEYS" },
    { NULL }
  };
  GOptionEntry topology[] = {
    { "devices", 0, 0, G_OPTION_ARG_STRING, &cli.devices,
      "aliases, physical networks or address globs, comma separated (default: all but VFs)",
      "SEL" },
    { NULL }
  };
  GOptionEntry live[] = {
    { "live", 0, 0, G_OPTION_ARG_NONE, &cli.live,
      "where the running domain's memory and vCPUs are, per cell (--format also openmetrics)",
      NULL },
    { NULL }
  };
  GOptionEntry output[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &cli.output,
      "write to FILE atomically (temporary file, rename) instead of stdout", "FILE" },
    { NULL }
  };
  GOptionEntry status[] = {
    { "root", 0, 0, G_OPTION_ARG_FILENAME, &cli.root,
      "look at the system under DIR (its etc, run and proc) instead of /", "DIR" },
    { NULL }
  };
  GOptionEntry alias[] = {
    { "alias", 0, 0, G_OPTION_ARG_STRING, &cli.alias,
      "only the devices a PCI alias of the configuration matches", "NAME" },
    { "all", 0, 0, G_OPTION_ARG_NONE, &cli.all,
      "every PCI function of the host, admitted or not, and the spec admitting it", NULL },
    { NULL }
  };
  GOptionEntry place[] = {
    { "explain", 0, 0, G_OPTION_ARG_NONE, &cli.explain,
      "print each request's policy, source and candidate pools to stderr", NULL },
    { NULL }
  };
  GOptionEntry attach[] = {
    { "port", 0, 0, G_OPTION_ARG_STRING, &cli.port, "user alias of the new interface", "ALIAS" },
    { "physnet", 0, 0, G_OPTION_ARG_STRING, &cli.physnet, "physical network", "NAME" },
    { "policy", 0, 0, G_OPTION_ARG_STRING, &cli.policy, "the port's NUMA affinity policy", "POLICY" },
    { "vnic-type", 0, 0, G_OPTION_ARG_STRING, &cli.vnic_type,
      "direct (a VF, the default) or direct-physical (a whole PF)", "TYPE" },
    { "trusted", 0, 0, G_OPTION_ARG_NONE, &cli.trusted,
      "only a device a spec with trusted=true admits", NULL },
    { "mac", 0, 0, G_OPTION_ARG_STRING, &cli.mac, "the interface's MAC address", "MAC" },
    { "locality-group", 0, 0, G_OPTION_ARG_STRING, &cli.locality_group,
      "the <vpa:locality-group> the port joins, near its placed members", "GROUP" },
    { "live", 0, 0, G_OPTION_ARG_NONE, &cli.live, "affect the running domain", NULL },
    { "config", 0, 0, G_OPTION_ARG_NONE, &cli.persistent,
      "affect the persistent definition (as virsh attach-device --config)", NULL },
    { NULL }
  };

  GOptionEntry request[] = {
    { "physnet", 0, 0, G_OPTION_ARG_STRING, &cli.physnet, "add-port: physical network", "NAME" },
    { "policy", 0, 0, G_OPTION_ARG_STRING, &cli.policy, "add-port: NUMA affinity policy",
      "POLICY" },
    { "vnic-type", 0, 0, G_OPTION_ARG_STRING, &cli.vnic_type,
      "add-port: direct (a VF, the default) or direct-physical (a whole PF)", "TYPE" },
    { "trusted", 0, 0, G_OPTION_ARG_NONE, &cli.trusted,
      "add-port: only a device a spec with trusted=true admits", NULL },
    { "pf-group", 0, 0, G_OPTION_ARG_STRING, &cli.pf_group,
      "add-port: ports of a group get VFs of distinct PFs", "GROUP" },
    { "locality-group", 0, 0, G_OPTION_ARG_STRING, &cli.locality_group,
      "add-port: the <vpa:locality-group> it belongs to", "GROUP" },
    { "mac", 0, 0, G_OPTION_ARG_STRING, &cli.mac, "add-port: the new interface's MAC address",
      "MAC" },
    { "place", 0, 0, G_OPTION_ARG_NONE, &cli.place,
      "then place and define the domain, as define does", NULL },
    { NULL }
  };

  /* "Usage: virt-pci-affinity check [OPTION…] DOMAIN|FILE": GOption
   * names the program by argv[0]. */
  argv[0] = prog;
  ctx = g_option_context_new (cmd->args);
  g_option_context_set_summary (ctx, cmd->summary);
  /* attach's --config is virsh's "affect the persistent definition";
   * its configuration file is --config-file (docs/interface.md). */
  if (cmd->options & OPT_ATTACH)
    common[2] = (GOptionEntry){ "config-file", 0, 0, G_OPTION_ARG_FILENAME,
                                &cli.common.config_path, "configuration file", "FILE" };
  g_option_context_add_main_entries (ctx, common, NULL);
  if (cmd->options & OPT_FORMAT)
    g_option_context_add_main_entries (ctx, format, NULL);
  if (cmd->options & OPT_GROUP_BY)
    g_option_context_add_main_entries (ctx, pools, NULL);
  if (cmd->options & OPT_OUTPUT)
    g_option_context_add_main_entries (ctx, output, NULL);
  if (cmd->options & OPT_ALIAS)
    g_option_context_add_main_entries (ctx, alias, NULL);
  if (cmd->options & OPT_PLACE)
    g_option_context_add_main_entries (ctx, place, NULL);
  if (cmd->options & OPT_ATTACH)
    g_option_context_add_main_entries (ctx, attach, NULL);
  if (cmd->options & OPT_DEVICES)
    g_option_context_add_main_entries (ctx, topology, NULL);
  if (cmd->options & OPT_STATUS)
    g_option_context_add_main_entries (ctx, status, NULL);
  if (cmd->options & OPT_REQUEST)
    g_option_context_add_main_entries (ctx, request, NULL);
  if (cmd->options & OPT_LIVE)
    g_option_context_add_main_entries (ctx, live, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return fail (error);
  if (cli.common.args != NULL && cmd->args[0] == '\0')
    {
      g_set_error (&error, VPA_ERROR, VPA_ERROR_INVALID, "%s: unexpected argument '%s'",
                   cmd->name, cli.common.args[0]);
      return fail (error);
    }
  if (!cmd->run (&cli, &error))
    return fail (error);
  return 0;
}

/* fleet sync --watch: the libvirt module's watcher, loaded only then. */
static gboolean
watch_via_module (const char *uri, const VpaVirtWatchOps *ops, GError **error)
{
  const VpaCliVirtModule *virt = virt_module (error);

  return virt != NULL && virt->watch (uri, ops, error);
}

/* The fleet commands live in their module with sqlite3 and libpq; a
 * live --connect's claims come from the libvirt one. */
static int
run_fleet (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  const VpaCliFleetModule *fleet;

  fleet = vpa_cli_module_load (VPA_CLI_FLEET_MODULE, VPA_CLI_FLEET_ENTRY, &error);
  if (fleet == NULL)
    return fail (error);
  fleet->set_claims_loader (claims_from_uri);
  fleet->set_watcher (watch_via_module);
  return fleet->run (argc, argv);
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  vpa_source_register (&virt_stub_ops);

  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? VPA_ERROR_INVALID : 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("virt-pci-affinity %s\n", VPA_VERSION);
      return 0;
    }
  if (strcmp (argv[1], "fleet") == 0)
    return run_fleet (argc - 1, argv + 1);
  if (strcmp (argv[1], "device") == 0)
    return vpa_cli_device_run (argc - 1, argv + 1);
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      return run_command (&commands[i], argc - 1, argv + 1);
  fprintf (stderr, "virt-pci-affinity: unknown command '%s'\n", argv[1]);
  usage (stderr);
  return VPA_ERROR_INVALID;
}
