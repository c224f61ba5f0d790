/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The qemu hook's module: run by the front (vpa-hook-front.c) only for
 * "prepare|start|migrate|restore begin" of a domain whose XML mentions our
 * namespace or a PCI device, with the hook's arguments and the domain XML
 * on stdin (vpa-hook.h). Checks the domain (prepare, start) or places
 * it again on this host (migrate, restore). Fails closed: on any error it
 * prints one line on stderr, nothing on stdout, and returns 1.
 */
#include "vpa-hook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-pipeline.h"
#include "vpa-source.h"
#include "vpa-statedirs.h"
#include "vpa-xml.h"

#define PROG VPA_HOOK_PROG
#define VPA_HOOK_DEFAULT_CONFIG VPA_SYSCONFDIR "/virt-pci-affinity/virt-pci-affinity.conf"

G_STATIC_ASSERT (VPA_HOOK_MAX_INPUT == VPA_XML_MAX_DOCUMENT);

typedef enum {
  HOOK_OP_PREPARE,
  HOOK_OP_START,
  HOOK_OP_MIGRATE,
  HOOK_OP_RESTORE,
} HookOp;

typedef struct {
  const char *guest;
  const char *op_name;
  HookOp op;
  const char *xml;
  gsize len;
  VpaConfig *config;
} HookRun;

static void
hook_run_clear (HookRun *run)
{
  g_clear_pointer (&run->config, vpa_config_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HookRun, hook_run_clear)

/* libvirt shows the hook's stderr in its error ("Hook script execution
 * failed: ..."): one line, naming us and the domain. */
static int
fail (const HookRun *run, const char *message)
{
  g_autofree char *line = g_strdup (message);

  g_strdelimit (line, "\n", ' ');
  fprintf (stderr, "%s: domain '%s': %s\n", PROG, run->guest, line);
  return 1;
}

/* VPA_CONFIG (tests), else the installed file, else the defaults. */
static VpaConfig *
load_config (GError **error)
{
  const char *path = g_getenv ("VPA_CONFIG");

  if (path != NULL && *path != '\0')
    return vpa_config_load_file (path, error);
  if (g_file_test (VPA_HOOK_DEFAULT_CONFIG, G_FILE_TEST_EXISTS))
    return vpa_config_load_file (VPA_HOOK_DEFAULT_CONFIG, error);
  return vpa_config_new_default ();
}

/* The domain's devices and their PFs from sysfs; with extra (may be NULL)
 * added to the addresses read. */
static VpaHost *
load_domain_devices (const char *root, const VpaDomain *dom, GPtrArray *extra, GError **error)
{
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      if (hd->addr != VPA_ADDR_NONE)
        g_array_append_val (addrs, hd->addr);
    }
  for (guint i = 0; extra != NULL && i < extra->len; i++)
    g_array_append_val (addrs, ((const VpaClaim *) g_ptr_array_index (extra, i))->addr);
  return vpa_sysfs_load_devices (root, (const VpaAddr *) (gpointer) addrs->data, addrs->len,
                                 error);
}

static gboolean
domain_holds_pf (const VpaHost *host, const VpaDomain *dom)
{
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      gint idx = hd->addr != VPA_ADDR_NONE ? vpa_host_lookup (host, hd->addr) : -1;

      if (idx >= 0 && vpa_host_device (host, (guint) idx)->dev_type == VPA_DEV_TYPE_PF)
        return TRUE;
    }
  return FALSE;
}

/* The PCI buses of every device of h: a claim elsewhere cannot touch them
 * (a VF's PF is in h; a whole PF's VFs are handled by the caller). */
static GArray *
host_buses (const VpaHost *h)
{
  GArray *buses = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < h->devices->len; i++)
    {
      guint bus = VPA_ADDR_BUS (vpa_host_device (h, i)->addr);
      gboolean seen = FALSE;

      for (guint j = 0; !seen && j < buses->len; j++)
        seen = g_array_index (buses, guint, j) == bus;
      if (!seen)
        g_array_append_val (buses, bus);
    }
  return buses;
}

/* This host's inventory and the claims of every other domain. A check
 * (dom given) on sysfs reads only the devices it judges: the domain's
 * and their PFs, which is all PF/VF exclusivity needs for VFs (a held
 * PF is among them; a held VF elsewhere blocks nothing of ours). Only a
 * domain holding a whole PF also reads the held devices, to find held
 * VFs of that PF. Never every VF of the host,
 * and only the state files that mention those devices' PCI buses. */
static gboolean
load_host (const HookRun *run, const VpaDomain *dom, VpaHost **host, GPtrArray **claims,
           GError **error)
{
  const char *source = run->config->inventory_source;
  const char *const *dirs = (const char *const *) run->config->state_dirs;
  g_autoptr (VpaHost) h = NULL;
  g_autoptr (GPtrArray) c = NULL;

  if (dom != NULL && g_str_has_prefix (source, "sysfs:") && source[6] != '\0')
    {
      h = load_domain_devices (source + 6, dom, NULL, error);
      if (h == NULL)
        return FALSE;
      if (domain_holds_pf (h, dom))
        {
          /* The held VFs of a whole PF can be on any bus: read every
           * claim, then the held devices too. */
          c = vpa_statedirs_load (dirs, run->guest, error);
          g_clear_pointer (&h, vpa_host_free);
          if (c != NULL)
            h = load_domain_devices (source + 6, dom, c, error);
        }
      else
        {
          g_autoptr (GArray) buses = host_buses (h);
          c = vpa_statedirs_load_buses (dirs, run->guest, (const guint *) (gpointer) buses->data,
                                        buses->len, error);
        }
    }
  else
    {
      c = vpa_statedirs_load (dirs, run->guest, error);
      if (c != NULL)
        h = vpa_source_load (source, error);
    }
  if (h == NULL || c == NULL)
    return FALSE;
  *host = g_steal_pointer (&h);
  *claims = g_steal_pointer (&c);
  return TRUE;
}

/* Joins every failed check into the one line libvirt shows. */
static char *
check_failures (GPtrArray *results)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < results->len; i++)
    {
      const VpaCheckResult *res = g_ptr_array_index (results, i);
      if (res->status == VPA_CHECK_OK)
        continue;
      if (s->len > 0)
        g_string_append (s, "; ");
      g_string_append (s, res->line);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* prepare begin / start begin: refuse a domain whose devices break their
 * policy, are not on this host, or that another running domain holds. */
static int
hook_check (HookRun *run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GPtrArray) results = NULL;
  g_autofree char *failures = NULL;
  gboolean ok = FALSE;

  dom = vpa_domain_parse (run->xml, run->len, "stdin", &error);
  if (dom == NULL)
    {
      /* Without our namespace a document libvirt's parser would refuse is
       * not ours to judge; with it, a request we cannot read is refused. */
      if (memmem (run->xml, run->len, VPA_HOOK_XMLNS, strlen (VPA_HOOK_XMLNS)) == NULL)
        return 0;
      return fail (run, error->message);
    }
  if (!dom->has_affinity && dom->hostdevs->len == 0)
    return 0;

  if (!load_host (run, dom, &host, &claims, &error))
    return fail (run, error->message);
  results = vpa_pipeline_check (g_steal_pointer (&host), claims, run->config, dom,
                                TRUE, &ok, &error);
  if (results == NULL)
    return fail (run, error->message);
  if (ok)
    return 0;
  failures = check_failures (results);
  return fail (run, failures);
}

static gboolean
write_all (int fd, const char *buf, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      buf += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* migrate begin / restore begin: place every request again on this host;
 * print the rewritten document only when it changed. */
static int
hook_place (HookRun *run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autofree char *out = NULL;
  VpaPlaceReport report = { 0 };

  if (memmem (run->xml, run->len, VPA_HOOK_XMLNS, strlen (VPA_HOOK_XMLNS)) == NULL)
    return 0;
  if (!load_host (run, NULL, &host, &claims, &error))
    return fail (run, error->message);
  out = vpa_pipeline_place (g_steal_pointer (&host), claims, run->config, run->xml,
                            run->len, "stdin", &report, &error);
  if (out == NULL)
    return fail (run, error->message);
  if (!report.changed)
    return 0;
  if (!write_all (STDOUT_FILENO, out, strlen (out)))
    {
      g_autofree char *msg = g_strdup_printf ("cannot write the rewritten domain XML: %s",
                                              g_strerror (errno));
      return fail (run, msg);
    }
  return 0;
}

static gboolean
parse_op (const char *op, const char *subop, HookOp *out)
{
  static const struct { const char *name; HookOp op; } ops[] = {
    { "prepare", HOOK_OP_PREPARE },
    { "start", HOOK_OP_START },
    { "migrate", HOOK_OP_MIGRATE },
    { "restore", HOOK_OP_RESTORE },
  };

  if (g_strcmp0 (subop, "begin") != 0)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (g_strcmp0 (op, ops[i].name) == 0)
      {
        *out = ops[i].op;
        return TRUE;
      }
  return FALSE;
}

static int
hook_run (HookRun *run)
{
  g_autoptr (GError) error = NULL;

  if ((run->config = load_config (&error)) == NULL)
    return fail (run, error->message); /* NOLINT(clang-analyzer-core.NullDereference): load_config sets error when it returns NULL */

  switch (run->op)
    {
    case HOOK_OP_PREPARE:
    case HOOK_OP_START:
      return hook_check (run);
    case HOOK_OP_MIGRATE:
    case HOOK_OP_RESTORE:
      return hook_place (run);
    default:
      g_assert_not_reached ();
    }
}

int
main (int argc, char **argv)
{
  g_auto (HookRun) run = { 0 };
  char *xml = NULL;
  size_t len = 0;
  int ret;

  if (argc != 5)
    {
      fprintf (stderr, "%s: usage: virt-pci-affinity-hook-module GUEST OPERATION SUB-OPERATION "
               "EXTRA (run by the hook with the domain XML on stdin); got %d arguments\n",
               PROG, argc > 0 ? argc - 1 : 0);
      return 2;
    }
  if (!parse_op (argv[2], argv[3], &run.op))
    return 0;
  if (vpa_hook_read_domain (argv, &xml, &len) < 0)
    return 1;
  run.guest = argv[1];
  run.op_name = argv[2];
  run.xml = xml;
  run.len = len;
  ret = hook_run (&run);
  free (xml);
  return ret;
}
