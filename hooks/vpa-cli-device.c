/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity device list|release|quarantine: the reservations of
 * this host (docs/reservations.md). They read and change only the state
 * file of the configuration's [hook] state-dir, never libvirt, so that a
 * failing device can be quarantined while libvirtd is down.
 */
#include <stdio.h>
#include <string.h>

#include "vpa-cli-common.h"
#include "vpa-cli-device.h"
#include "vpa-output.h"
#include "vpa-reserve.h"

typedef struct {
  VpaCliCommon common;
  char *reason;
} DeviceCli;

static void
device_cli_clear (DeviceCli *cli)
{
  vpa_cli_common_clear (&cli->common);
  g_free (cli->reason);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (DeviceCli, device_cli_clear)

static int
fail (GError *error)
{
  return vpa_cli_common_fail ("virt-pci-affinity: ", error);
}

/* The configuration alone: its state directory is where the
 * reservations are; they are read (or changed) by the command itself. */
static VpaConfig *
load_config (const DeviceCli *cli, GError **error)
{
  return vpa_config_lookup (cli->common.config_path, TRUE, error);
}

/* The one ADDRESS argument of release and quarantine. */
static gboolean
one_address (const DeviceCli *cli, const char *cmd, VpaAddr *addr, GError **error)
{
  char **args = cli->common.args;

  if (args == NULL || g_strv_length (args) != 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "device %s: expected one ADDRESS", cmd);
      return FALSE;
    }
  if (!vpa_addr_parse (args[0], addr))
    {
      g_autofree char *shown = vpa_message_bound (args[0], 64);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "device %s: '%s' is not a PCI address (expected DDDD:BB:SS.F, as "
                   "0000:81:00.0)",
                   cmd, shown);
      return FALSE;
    }
  return TRUE;
}

/* ---- list ----------------------------------------------------------- */

static char *
list_text (const VpaReserveSet *set)
{
  static const char *const header[] = { "ADDRESS", "KIND", "SINCE", "DOMAIN", "REASON", NULL };
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);

  g_ptr_array_add (rows, g_strdupv ((char **) header));
  for (guint i = 0; i < set->items->len; i++)
    {
      const VpaReservation *r = set->items->pdata[i];
      char **row = g_new0 (char *, 6);

      row[0] = vpa_addr_to_string (r->addr);
      row[1] = g_strdup (vpa_reserve_kind_to_string (r->kind));
      row[2] = vpa_reserve_since_text (r);
      row[3] = g_strdup (r->domain != NULL ? r->domain : "-");
      row[4] = g_strdup (r->reason != NULL && r->reason[0] != '\0' ? r->reason : "-");
      g_ptr_array_add (rows, row);
    }
  return vpa_output_table_text (rows, 5, NULL, 5);
}

static void
add_string_or_null (JsonBuilder *b, const char *key, const char *value)
{
  json_builder_set_member_name (b, key);
  if (value == NULL)
    {
      json_builder_add_null_value (b);
    }
  else
    {
      json_builder_add_string_value (b, value);
    }
}

static char *
list_json (const VpaReserveSet *set)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "reservations");
  json_builder_begin_array (b);
  for (guint i = 0; i < set->items->len; i++)
    {
      const VpaReservation *r = set->items->pdata[i];
      g_autofree char *addr = vpa_addr_to_string (r->addr);
      g_autofree char *since = vpa_reserve_since_text (r);

      json_builder_begin_object (b);
      add_string_or_null (b, "address", addr);
      add_string_or_null (b, "kind", vpa_reserve_kind_to_string (r->kind));
      add_string_or_null (b, "since", since);
      add_string_or_null (b, "domain", r->domain);
      add_string_or_null (b, "uuid", r->uuid);
      add_string_or_null (b, "reason", r->reason);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

static gboolean
cmd_list (DeviceCli *cli, GError **error)
{
  g_autoptr (VpaConfig) config = NULL;
  g_autoptr (VpaReserveSet) set = NULL;
  g_autofree char *out = NULL;
  gboolean json;

  if (cli->common.args != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "device list: unexpected argument '%s'",
                   cli->common.args[0]);
      return FALSE;
    }
  if (!vpa_cli_common_format_is_json (&cli->common, &json, error) ||
      (config = load_config (cli, error)) == NULL ||
      (set = vpa_reserve_set_load (config->hook_state_dir, error)) == NULL)
    return FALSE;
  out = json ? list_json (set) : list_text (set);
  return vpa_cli_common_write_stdout (out, error);
}

/* ---- release, quarantine -------------------------------------------- */

typedef struct {
  VpaAddr addr;
  const char *reason; /* quarantine; NULL: release */
  gint64 now;
} Change;

static gboolean
release_edit (VpaReserveSet *set, gpointer data, gboolean *changed, GError **error)
{
  const Change *c = data;
  char buf[VPA_ADDR_BUFLEN];

  if (!vpa_reserve_set_remove (set, c->addr))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "device release: %s is not reserved ('virt-pci-affinity device list' lists "
                   "the reserved devices)",
                   vpa_addr_format (c->addr, buf));
      return FALSE;
    }
  *changed = TRUE;
  return TRUE;
}

static gboolean
quarantine_edit (VpaReserveSet *set, gpointer data, gboolean *changed, GError **error)
{
  const Change *c = data;

  if (vpa_reserve_set_find (set, c->addr) == NULL && set->items->len >= VPA_RESERVE_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "device quarantine: %s holds %d reservations already; release some first",
                   set->path, VPA_RESERVE_MAX);
      return FALSE;
    }
  vpa_reserve_set_put (set, vpa_reserve_item_new (c->addr, VPA_RESERVE_QUARANTINE, c->now, NULL,
                                                  NULL, c->reason));
  *changed = TRUE;
  return TRUE;
}

static gboolean
reason_valid (const char *reason, GError **error)
{
  if (reason == NULL || *reason == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "device quarantine: --reason REASON is required (what is wrong with the "
                   "device, as 'Xid 79: fell off the bus')");
      return FALSE;
    }
  if (strlen (reason) > VPA_RESERVE_REASON_MAX || !g_utf8_validate (reason, -1, NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "device quarantine: --reason: expected UTF-8 text of at most %d bytes, got "
                   "%zu bytes",
                   VPA_RESERVE_REASON_MAX, strlen (reason));
      return FALSE;
    }
  return TRUE;
}

static gboolean
cmd_change (DeviceCli *cli, const char *cmd, GError **error)
{
  g_autoptr (VpaConfig) config = NULL;
  gboolean quarantine = strcmp (cmd, "quarantine") == 0;
  Change c = { VPA_ADDR_NONE, quarantine ? cli->reason : NULL,
               g_get_real_time () / G_USEC_PER_SEC };
  char buf[VPA_ADDR_BUFLEN];

  if (!one_address (cli, cmd, &c.addr, error) || (quarantine && !reason_valid (c.reason, error)) ||
      (config = load_config (cli, error)) == NULL)
    return FALSE;
  if (!vpa_reserve_set_update (config->hook_state_dir, quarantine ? quarantine_edit : release_edit,
                               &c, error))
    return FALSE;
  printf ("%s %s\n", vpa_addr_format (c.addr, buf), quarantine ? "quarantined" : "released");
  return TRUE;
}

static gboolean
cmd_release (DeviceCli *cli, GError **error)
{
  return cmd_change (cli, "release", error);
}

static gboolean
cmd_quarantine (DeviceCli *cli, GError **error)
{
  return cmd_change (cli, "quarantine", error);
}

/* ---- dispatch ------------------------------------------------------- */

typedef struct {
  const char *name;
  const char *args;
  const char *summary;
  gboolean (*run) (DeviceCli *cli, GError **error);
} DeviceCommand;

static const DeviceCommand commands[] = {
  { "list", "", "the reserved devices: one-time-use ones a domain used, quarantined ones",
    cmd_list },
  { "release", "ADDRESS", "return a reserved device (cleaned, repaired) to the pools",
    cmd_release },
  { "quarantine", "ADDRESS --reason REASON", "reserve any device by hand (a failing GPU)",
    cmd_quarantine },
};

static void
usage (FILE *f)
{
  fprintf (f, "Usage: virt-pci-affinity device COMMAND [OPTIONS] [ARGS]\n\nCommands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (f, "  %-11s %-24s %s\n", commands[i].name, commands[i].args, commands[i].summary);
  fprintf (f, "\nOptions: --config FILE (its [hook] state-dir holds the reservations).\n");
}

static int
run_one (const DeviceCommand *cmd, int argc, char **argv)
{
  g_auto (DeviceCli) cli = { 0 };
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *prog = g_strdup_printf ("virt-pci-affinity device %s", cmd->name);
  GOptionEntry common[] = {
    { "config", 0, 0, G_OPTION_ARG_FILENAME, &cli.common.config_path,
      "configuration file (its [hook] state-dir holds the reservations)", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &cli.common.args, NULL, NULL },
    { NULL }
  };
  GOptionEntry list[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &cli.common.format, "text (default) or json",
      "FORMAT" },
    { NULL }
  };
  GOptionEntry quarantine[] = {
    { "reason", 0, 0, G_OPTION_ARG_STRING, &cli.reason,
      "why the device is kept from every domain (shown by device list and in refusals)",
      "REASON" },
    { NULL }
  };

  argv[0] = prog;
  ctx = g_option_context_new (cmd->args);
  g_option_context_set_summary (ctx, cmd->summary);
  g_option_context_add_main_entries (ctx, common, NULL);
  if (cmd->run == cmd_list)
    g_option_context_add_main_entries (ctx, list, NULL);
  if (cmd->run == cmd_quarantine)
    g_option_context_add_main_entries (ctx, quarantine, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return fail (error);
  if (!cmd->run (&cli, &error))
    return fail (error);
  return 0;
}

int
vpa_cli_device_run (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? VPA_ERROR_INVALID : 0;
    }
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      if (strcmp (argv[1], commands[i].name) == 0)
        return run_one (&commands[i], argc - 1, argv + 1);
    }
  {
    g_autofree char *shown = vpa_message_bound (argv[1], 64);
    fprintf (stderr, "virt-pci-affinity: device: unknown command '%s' (expected list, release "
                     "or quarantine)\n",
             shown);
  }
  return VPA_ERROR_INVALID;
}
