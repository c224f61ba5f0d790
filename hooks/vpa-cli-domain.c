/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands on one domain: place, check, define, attach and request
 * (the last three through libvirt's module, under its define lock).
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

gboolean
vpa_cli_domain_place (VpaCli *cli, GError **error)
{
  g_auto (VpaCliWorld) w = { 0 };
  g_autofree char *buf = NULL;
  g_autofree char *out = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  const char *path;
  gsize len;
  VpaPlaceOptions opts = { 0 };

  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "place: expected one FILE (or - for stdin)");
      return FALSE;
    }
  path = cli->common.args[0];
  if (!vpa_cli_world_read_input (path, &buf, &len, error))
    return FALSE;
  if (!vpa_cli_world_load (cli, &w, error) || (nets = vpa_cli_world_load_networks_for (cli, buf, error)) == NULL)
    return FALSE;
  if (cli->explain)
    opts.explain = g_string_new (NULL);
  opts.claims = w.claims;
  opts.config = w.config;
  opts.nets = nets;
  out = vpa_pipeline_place (g_steal_pointer (&w.host), &opts, &(VpaDoc){ buf, len, strcmp (path, "-") == 0 ? "stdin" : path }, NULL, error);
  if (opts.explain != NULL)
    {
      fputs (opts.explain->str, stderr);
      g_string_free (opts.explain, TRUE);
    }
  if (out == NULL)
    return FALSE;
  return vpa_cli_common_write_stdout (out, error);
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
  const VpaCliVirtModule *virt = vpa_cli_world_virt_module (error);
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
  if (virt == NULL || (xml = vpa_cli_world_domain_xml (vpa_cli_world_connect_uri (cli), name, error)) == NULL)
    return FALSE;
  if ((out = virt->check_live (name, xml, format, &failure, error)) == NULL ||
      !vpa_cli_common_write_stdout (out, error))
    return FALSE;
  if (failure != NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                   "check --live: domain '%s': %s (the report is on stdout)", name, failure);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_cli_domain_check (VpaCli *cli, GError **error)
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
  if (!vpa_cli_common_format_is_json (&cli->common, &json, error))
    return FALSE;
  if (check_arg_is_file (arg))
    {
      if (!vpa_cli_world_read_input (arg, &buf, &len, error))
        return FALSE;
    }
  else if ((buf = vpa_cli_world_domain_xml (vpa_cli_world_connect_uri (cli), arg, error)) == NULL)
    {
      return FALSE;
    }
  else
    {
      len = strlen (buf);
    }

  if (!vpa_cli_world_load (cli, &w, error) || (nets = vpa_cli_world_load_networks_for (cli, buf, error)) == NULL)
    return FALSE;
  dom = vpa_pipeline_parse (&(VpaDoc){ buf, len, strcmp (arg, "-") == 0 ? "stdin" : arg }, error);
  if (dom == NULL)
    return FALSE;
  results = vpa_pipeline_check_nets (g_steal_pointer (&w.host),
                                     &(VpaPlaceOptions){ .claims = w.claims, .config = w.config, .nets = nets },
                                     dom, TRUE, &ok, error);
  if (results == NULL)
    return FALSE;
  if (json)
    {
      g_autofree char *out = vpa_output_ops_check_json (dom->name, results, ok);
      if (!vpa_cli_common_write_stdout (out, error))
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
  VpaHost *host = vpa_source_load (vpa_cli_world_inventory_uri (ctx->cli), error);
  VpaPlaceOptions opts = { .claims = claims, .config = ctx->config, .nets = ctx->nets };

  if (host == NULL)
    return NULL;
  return vpa_pipeline_place (host, &opts, &(VpaDoc){ ctx->buf, ctx->len, ctx->what }, NULL, error);
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

  if ((defined = virt->domain_xml (vpa_cli_world_connect_uri (cli), name, error)) == NULL)
    return FALSE;
  /* a running domain's XML is its live one: leave its next boot alone */
  if ((doc = vpa_xml_parse_memory (&(VpaDoc){ defined, strlen (defined), name }, error)) == NULL)
    return FALSE;
  if (xmlHasProp (xmlDocGetRootElement (doc), (const xmlChar *) "id") != NULL)
    return TRUE;
  second.buf = defined;
  second.len = strlen (defined);
  return virt->define (vpa_cli_world_connect_uri (cli), vpa_cli_world_inventory_uri (cli), define_place_cb, &second, &again,
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
      vpa_cli_common_warn (message);
    }
}

static gboolean define_document (VpaCli *cli, const char *buf, gsize len, const char *what,
                                 GError **error);

gboolean
vpa_cli_domain_define (VpaCli *cli, GError **error)
{
  g_autofree char *buf = NULL;
  gsize len;

  if (cli->common.args == NULL || g_strv_length (cli->common.args) != 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "define: expected one FILE");
      return FALSE;
    }
  if (!vpa_cli_world_read_input (cli->common.args[0], &buf, &len, error))
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

  if ((config = vpa_cli_world_load_config (cli, error)) == NULL ||
      (nets = vpa_cli_world_load_networks_for (cli, buf, error)) == NULL)
    return FALSE;
  ctx = (DefineCtx){ cli, config, buf, len, what, nets };
  if ((virt = vpa_cli_world_virt_module (error)) == NULL ||
      !virt->define (vpa_cli_world_connect_uri (cli), vpa_cli_world_inventory_uri (cli), define_place_cb, &ctx, &name,
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
  VpaPlaceOptions opts = { .claims = claims, .config = ctx->config };
  g_auto (VpaAttachRecord) own = { 0 };

  if ((xml = vpa_cli_world_domain_xml (vpa_cli_world_connect_uri (ctx->cli), ctx->cli->common.args[0], error)) == NULL)
    return NULL;
  dom = vpa_pipeline_parse (&(VpaDoc){ xml, strlen (xml), ctx->cli->common.args[0] }, error);
  if (dom == NULL)
    return NULL;
  if ((host = vpa_source_load (vpa_cli_world_inventory_uri (ctx->cli), error)) == NULL)
    return NULL;
  return vpa_pipeline_attach_request (host, &opts, dom, &ctx->want, ctx->cli->mac,
                                      record != NULL ? record : &own, error);
}

/* A MAC address as libvirt's <mac address>: six hex pairs, ':' apart. */
static gboolean
mac_valid (const char *mac)
{
  if (strlen (mac) != 17)
    return FALSE;
  for (guint i = 0; i < 17; i++)
    {
      if (i % 3 == 2 ? mac[i] != ':' : !g_ascii_isxdigit (mac[i]))
        return FALSE;
    }
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
    {
      if (g_file_test (cli->common.args[i], G_FILE_TEST_IS_REGULAR))
        return cli->common.args[i];
    }
  return NULL;
}

gboolean
vpa_cli_domain_attach (VpaCli *cli, GError **error)
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
  if ((config = vpa_cli_world_load_config (cli, error)) == NULL)
    return FALSE;
  /* The domain must exist before the lock is taken (exit 2 otherwise);
   * its XML is read again under the lock. */
  if ((xml = vpa_cli_world_domain_xml (vpa_cli_world_connect_uri (cli), cli->common.args[0], error)) == NULL)
    return FALSE;
  ctx.cli = cli;
  ctx.config = config;
  if ((virt = vpa_cli_world_virt_module (error)) == NULL ||
      !virt->attach (vpa_cli_world_connect_uri (cli), vpa_cli_world_inventory_uri (cli), cli->common.args[0], cli->live,
                     cli->persistent, attach_place_cb, &ctx, &addr, error))
    return FALSE;
  printf ("%s\n", vpa_addr_format (addr, buf));
  return TRUE;
}

/* request DOMAIN show|add-port|add-alias|set-numa|remove|place: the
 * requests of a defined domain edited in its persistent definition;
 * place (or --place) places and defines it as define does. */
gboolean
vpa_cli_domain_request (VpaCli *cli, GError **error)
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
      (virt = vpa_cli_world_virt_module (error)) == NULL)
    return FALSE;
  if (show)
    {
      if ((affinity = virt->request_show (vpa_cli_world_connect_uri (cli), cli->common.args[0], error)) == NULL)
        return FALSE;
      printf ("%s%s", affinity, affinity[0] != '\0' ? "\n" : "");
      return TRUE;
    }
  if (!virt->request_edit (vpa_cli_world_connect_uri (cli), cli->common.args[0], &edit, &res, error))
    return FALSE;
  if (cli->place || edit.op == VPA_REQUEST_EDIT_PLACE)
    return define_document (cli, res.document, strlen (res.document), cli->common.args[0], error);
  summary = vpa_cli_request_summary (cli->common.args[0], &edit, &res);
  printf ("%s\n", summary);
  return TRUE;
}
