/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity-virt.so: the CLI's libvirt back end (libvpa-virt),
 * loaded only by commands on a live connection (vpa-cli-module.h).
 */
#include <string.h>

#include "vpa-cli-module.h"
#include "vpa-live.h"
#include "vpa-virt-watch.h"
#include "vpa-virt.h"
#include "vpa-virt-request.h"
#include "vpa-pipeline.h"

static gboolean
virt_probe (const char *uri)
{
  return vpa_virt_source_ops ()->probe (uri);
}

static VpaHost *
virt_load_host (const char *uri, GError **error)
{
  return vpa_virt_source_ops ()->load (uri, error);
}

static GPtrArray *
virt_load_claims (const char *uri, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, TRUE, error);

  if (conn == NULL)
    return NULL;
  return vpa_virt_load_claims (conn, error);
}

static char *
virt_domain_xml (const char *uri, const char *name, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, TRUE, error);
  g_autoptr (virDomain) dom = NULL;
  char *xml;

  if (conn == NULL)
    return NULL;
  dom = virDomainLookupByName (conn, name);
  if (dom == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "no domain or file '%s' on '%s'", name, uri);
      return NULL;
    }
  xml = virDomainGetXMLDesc (dom, 0);
  if (xml == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "cannot read the XML of domain '%s' on '%s'", name, uri);
      return NULL;
    }
  return xml;
}

static gboolean
virt_define (const char *uri, const char *inventory_uri, VpaCliPlaceFunc place,
             gpointer user_data, char **out_name, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, FALSE, error);
  g_autoptr (VpaHost) inventory = NULL;

  if (conn == NULL)
    return FALSE;
  if ((inventory = vpa_source_load (inventory_uri, error)) == NULL)
    return FALSE;
  return vpa_virt_define_placed_full (conn, uri, inventory, place, user_data, out_name, error);
}

static gboolean
virt_attach (const char *uri, const char *inventory_uri, const char *domain, gboolean live,
             gboolean persistent, VpaCliAttachFunc place, gpointer user_data, VpaAddr *out_addr,
             GError **error)
{
  g_autoptr (virConnect) conn = NULL;
  g_autoptr (VpaHost) inventory = NULL;
  guint flags = 0;

  if (live)
    flags |= VIR_DOMAIN_AFFECT_LIVE;
  if (persistent)
    flags |= VIR_DOMAIN_AFFECT_CONFIG;
  if (flags == 0)
    flags = VIR_DOMAIN_AFFECT_CURRENT;
  if ((conn = vpa_virt_open (uri, FALSE, error)) == NULL)
    return FALSE;
  if ((inventory = vpa_source_load (inventory_uri, error)) == NULL)
    return FALSE;
  return vpa_virt_attach (conn, uri, &(VpaVirtAttachTarget){ domain, flags, inventory }, place,
                          user_data, out_addr, error);
}

static GPtrArray *
virt_load_networks (const char *uri, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, TRUE, error);

  if (conn == NULL)
    return NULL;
  return vpa_virt_load_hostdev_networks (conn, uri, error);
}

static gboolean
virt_request_edit (const char *uri, const char *domain, const VpaRequestEdit *edit,
                   VpaRequestEditResult *out, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, FALSE, error);

  return conn != NULL && vpa_virt_request_edit (conn, uri, domain, edit, out, error);
}

static char *
virt_request_show (const char *uri, const char *domain, GError **error)
{
  g_autoptr (virConnect) conn = vpa_virt_open (uri, TRUE, error);

  return conn != NULL ? vpa_virt_request_show (conn, uri, domain, error) : NULL;
}

/* check --live: the QEMU process from libvirt's pid file (docs/live.md). */
static char *
virt_check_live (const char *name, const char *xml, const char *format, char **failure,
                 GError **error)
{
  g_autofree char *pid_path = g_strdup_printf ("/run/libvirt/qemu/%s.pid", name);
  g_autofree char *pid_text = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaLiveReport) report = NULL;
  VpaLiveEnv env = { .proc_root = "/proc", .sysfs_root = "/sys" };
  guint64 pid;

  if (!g_file_get_contents (pid_path, &pid_text, NULL, NULL) ||
      !g_ascii_string_to_unsigned (g_strstrip (pid_text), 10, 1, G_MAXINT, &pid, NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "check --live: domain '%s': no QEMU process id in %s: is it running?", name,
                   pid_path);
      return NULL;
    }
  if ((dom = vpa_pipeline_parse (&(VpaDoc){ xml, strlen (xml), name }, error)) == NULL)
    return NULL;
  if ((report = vpa_live_check (dom, (int) pid, &env, error)) == NULL)
    return NULL;
  *failure = vpa_live_failure (report);
  return vpa_live_format (report, format);
}

const VpaCliVirtModule *
vpa_cli_virt_module (void)
{
  static const VpaCliVirtModule module = {
    .version = VPA_CLI_MODULE_VERSION,
    .probe = virt_probe,
    .load_host = virt_load_host,
    .load_claims = virt_load_claims,
    .watch = vpa_virt_watch_run,
    .domain_xml = virt_domain_xml,
    .define = virt_define,
    .attach = virt_attach,
    .load_networks = virt_load_networks,
    .request_edit = virt_request_edit,
    .request_show = virt_request_show,
    .check_live = virt_check_live,
  };
  return &module;
}
