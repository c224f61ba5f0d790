/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where a command's inputs come from: the configuration, the inventory,
 * the claims of --connect and its hostdev networks (libvirt's module
 * loaded only for a live connection), the domain XML read from a file
 * or stdin within bounds.
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

const char *
vpa_cli_world_connect_uri (const VpaCli *cli)
{
  return vpa_cli_common_connect_uri (&cli->common);
}

const char *
vpa_cli_world_inventory_uri (const VpaCli *cli)
{
  return vpa_cli_common_inventory_uri (&cli->common);
}

VpaConfig *
vpa_cli_world_load_config (const VpaCli *cli, GError **error)
{
  return vpa_cli_common_load_config (&cli->common, error);
}

/* libvirt, loaded by the first command that needs a live connection. */
const VpaCliVirtModule *
vpa_cli_world_virt_module (GError **error)
{
  static const VpaCliVirtModule *virt;

  if (virt == NULL)
    virt = vpa_cli_common_module_load (VPA_CLI_VIRT_MODULE, VPA_CLI_VIRT_ENTRY, error);
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
  virt = vpa_cli_world_virt_module (NULL);
  return virt == NULL || virt->probe (uri);
}

static VpaHost *
virt_stub_load (const char *uri, GError **error)
{
  const VpaCliVirtModule *virt = vpa_cli_world_virt_module (error);

  return virt != NULL ? virt->load_host (uri, error) : NULL;
}

const VpaSourceOps vpa_cli_world_virt_stub_ops = { "libvirt", virt_stub_probe, virt_stub_load };

/* The claims of the domains on a connection. A snapshot URI is read by our
 * own reader (its <domain> children), so read-only commands on a snapshot
 * never start libvirt's test driver. */
GPtrArray *
vpa_cli_world_claims_from_uri (const char *uri, GError **error)
{
  g_autofree char *snap = vpa_source_snapshot_path (uri);

  if (snap != NULL)
    {
      g_autoptr (VpaHost) host = vpa_snapshot_load (snap, error);
      return host != NULL ? vpa_claim_filter (host->claims, NULL, FALSE) : NULL;
    }
  {
    const VpaCliVirtModule *virt = vpa_cli_world_virt_module (error);
    return virt != NULL ? virt->load_claims (uri, error) : NULL;
  }
}

/* The claims: the domains on the --connect connection. */
static GPtrArray *
load_claims (const VpaCli *cli, VpaHost *inventory_host, GError **error)
{
  const char *uri = vpa_cli_world_connect_uri (cli);
  g_autofree char *snap = vpa_source_snapshot_path (uri);

  if (snap != NULL && g_strcmp0 (vpa_cli_world_inventory_uri (cli), uri) == 0)
    return vpa_claim_filter (inventory_host->claims, NULL, FALSE);
  return vpa_cli_world_claims_from_uri (uri, error);
}

char *
vpa_cli_world_domain_xml (const char *uri, const char *name, GError **error)
{
  const VpaCliVirtModule *virt = vpa_cli_world_virt_module (error);

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
  const char *uri = vpa_cli_world_connect_uri (cli);
  g_autofree char *snap = vpa_source_snapshot_path (uri);
  g_autofree char *test_uri = NULL;
  const VpaCliVirtModule *virt;

  if (snap != NULL)
    {
      g_autoptr (GError) local = NULL;

      if (!file_mentions (snap, "<network", &local))
        {
          if (local == NULL)
            return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_netpool_hostdev_net_free);
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s", local->message);
          return NULL;
        }
      uri = test_uri = g_strconcat ("test://", snap, NULL);
    }
  if ((virt = vpa_cli_world_virt_module (error)) == NULL)
    return NULL;
  return virt->load_networks (uri, error);
}

/* For pools and devices, which only show them: a connection whose
 * networks cannot be listed (a host without libvirt's network daemon)
 * shows none, with one warning line. */
GPtrArray *
vpa_cli_world_load_networks_shown (const VpaCli *cli)
{
  g_autoptr (GError) local = NULL;
  GPtrArray *nets = load_networks (cli, &local);

  if (nets != NULL)
    return nets;
  {
    g_autofree char *message = g_strdup_printf ("hostdev networks not shown: %s",
                                                local != NULL ? local->message : "unknown error");
    vpa_cli_common_warn (message);
  }
  return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_netpool_hostdev_net_free);
}

/* For place, define and check: the networks only when the domain has an
 * <interface type='network'> a port may name (then they are needed, and
 * failing to list them is an error). */
GPtrArray *
vpa_cli_world_load_networks_for (const VpaCli *cli, const char *buf, GError **error)
{
  if (buf != NULL && strstr (buf, "type='network'") == NULL &&
      strstr (buf, "type=\"network\"") == NULL)
    return g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_netpool_hostdev_net_free);
  return load_networks (cli, error);
}

void
vpa_cli_world_clear (VpaCliWorld *w)
{
  g_clear_pointer (&w->config, vpa_config_free);
  g_clear_pointer (&w->host, vpa_host_free);
  g_clear_pointer (&w->claims, g_ptr_array_unref);
}

gboolean
vpa_cli_world_load (const VpaCli *cli, VpaCliWorld *w, GError **error)
{
  w->config = vpa_cli_world_load_config (cli, error);
  if (w->config == NULL)
    return FALSE;
  w->host = vpa_source_load (vpa_cli_world_inventory_uri (cli), error);
  if (w->host == NULL)
    return FALSE;
  w->claims = load_claims (cli, w->host, error);
  return w->claims != NULL;
}

VpaInventory *
vpa_cli_world_inventory (VpaCliWorld *w, GError **error)
{
  VpaInventory *inv = vpa_inventory_new (g_steal_pointer (&w->host), w->config,
                                         g_steal_pointer (&w->claims), error);
  return inv;
}

/* A FILE is bounded like stdin: a FIFO, /dev/zero or a runaway file must
 * not exhaust memory before the XML parser's own size limit refuses it. */
gboolean
vpa_cli_world_read_file_bounded (const char *path, char **buf, gsize *len, GError **error)
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

gboolean
vpa_cli_world_read_input (const char *path, char **buf, gsize *len, GError **error)
{
  if (g_strcmp0 (path, "-") == 0)
    return vpa_cli_common_read_stdin (buf, len, error);
  return vpa_cli_world_read_file_bounded (path, buf, len, error);
}
