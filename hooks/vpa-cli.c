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
#include "vpa-cli.h"
#include "vpa-cli-world.h"
#include "vpa-output-topology.h"

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
  return vpa_cli_common_fail ("virt-pci-affinity: ", error);
}

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
  { "pools", "", "PCI device pools generated on demand from the inventory", vpa_cli_show_pools,
    OPT_GROUP_BY | OPT_OUTPUT },
  { "devices", "", "every inventory device, its state and the domain holding it", vpa_cli_show_devices,
    OPT_FORMAT | OPT_OUTPUT | OPT_ALIAS },
  { "place", "FILE|-", "fill every request of a domain with a device; print the XML", vpa_cli_domain_place,
    OPT_PLACE },
  { "check", "DOMAIN|FILE", "verify placed devices meet their policies (report on stdout, also on exit 1)", vpa_cli_domain_check,
    OPT_FORMAT | OPT_LIVE },
  { "define", "FILE", "place and define a domain, never handing out a held device", vpa_cli_domain_define,
    0 },
  { "attach", "DOMAIN --port ALIAS", "hot-plug a VF for a port by the same rules", vpa_cli_domain_attach,
    OPT_ATTACH },
  { "snapshot", "", "write a host snapshot of the inventory and claims", vpa_cli_show_snapshot, 0 },
  { "traits", "", "the host's capability traits", vpa_cli_show_traits, OPT_FORMAT },
  { "config", "check", "report configuration mistakes (exit 0 clean, 1 warnings, 2 errors)",
    vpa_cli_show_config, 0 },
  { "topology", "", "PCIe distances between devices, as nvidia-smi topo -m", vpa_cli_show_topology,
    OPT_FORMAT | OPT_DEVICES },
  { "nodes", "", "per NUMA node: CPUs, memory and pages still free", vpa_cli_show_nodes, OPT_FORMAT },
  { "status", "", "is the hook installed, run by libvirtd, configured? (exit 1: what to fix)",
    vpa_cli_show_status, OPT_STATUS },
  { "request", "DOMAIN show|add-port|add-alias|set-numa|remove|place",
    "edit a defined domain's requests (its persistent definition)", vpa_cli_domain_request, OPT_REQUEST },
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
    {
      common[2] = (GOptionEntry){ "config-file", 0, 0, G_OPTION_ARG_FILENAME,
                                  &cli.common.config_path, "configuration file", "FILE" };
    }
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
  const VpaCliVirtModule *virt = vpa_cli_world_virt_module (error);

  return virt != NULL && virt->watch (uri, ops, error);
}

/* The fleet commands live in their module with sqlite3 and libpq; a
 * live --connect's claims come from the libvirt one. */
static int
run_fleet (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  const VpaCliFleetModule *fleet;

  fleet = vpa_cli_common_module_load (VPA_CLI_FLEET_MODULE, VPA_CLI_FLEET_ENTRY, &error);
  if (fleet == NULL)
    return fail (error);
  fleet->set_claims_loader (vpa_cli_world_claims_from_uri);
  fleet->set_watcher (watch_via_module);
  return fleet->run (argc, argv);
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  vpa_source_register (&vpa_cli_world_virt_stub_ops);

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
    {
      if (strcmp (argv[1], commands[i].name) == 0)
        return run_command (&commands[i], argc - 1, argv + 1);
    }
  fprintf (stderr, "virt-pci-affinity: unknown command '%s'\n", argv[1]);
  usage (stderr);
  return VPA_ERROR_INVALID;
}
