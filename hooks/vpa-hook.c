/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The qemu hook's work (vpa-hook.h): for "prepare|start|migrate|restore
 * begin" of a domain whose XML mentions our namespace or a PCI device,
 * checks the domain (prepare, start) or places it again on this host
 * (migrate, restore). Fails closed: on any error it prints one line on
 * stderr, nothing on stdout, and returns 1.
 */
#include "vpa-hook.h"
#include "vpa-file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vpa-config.h"
#include "vpa-domain.h"
#include "vpa-hook-claims.h"
#include "vpa-hook-verdict.h"
#include "vpa-pcie.h"
#include "vpa-pipeline.h"
#include "vpa-reserve-apply.h"
#include "vpa-source.h"
#include "vpa-statedirs.h"
#include "vpa-sysfs.h"
#include "vpa-xml.h"

#define PROG VPA_PROG

typedef enum {
  HOOK_OP_PREPARE,
  HOOK_OP_START,
  HOOK_OP_MIGRATE,
  HOOK_OP_RESTORE,
} HookOp;

typedef struct {
  const char *guest;
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

G_STATIC_ASSERT ((int) HOOK_OP_RESTORE == (int) VPA_VERDICT_OP_RESTORE);

/* libvirt shows the hook's stderr in its error ("Hook script execution
 * failed: ..."): one line, naming us and the domain. In audit mode a
 * failure that may be audited lets the operation go on; every one is
 * logged and counted (vpa-hook-verdict.h). */
static int
refuse (const HookRun *run, VpaVerdictReason reason, gboolean auditable, const char *message)
{
  VpaHookVerdict v = { run->guest, (VpaVerdictOp) run->op, run->xml, run->len, run->config,
                       reason, auditable };

  return vpa_hook_verdict (&v, message);
}

static int
fail (const HookRun *run, VpaVerdictReason reason, const char *message)
{
  return refuse (run, reason, TRUE, message);
}

/* The installed file, else the defaults; VPA_CONFIG only for the
 * program in its build tree (vpa_hook_input_env_allowed). */
static VpaConfig *
load_config (GError **error)
{
  return vpa_config_lookup (NULL, vpa_hook_input_env_allowed (), error);
}

/* The domain's devices and their PFs from sysfs; with extra (VpaAddr,
 * may be NULL) added to the addresses read. */
static VpaHost *
load_domain_devices (const char *root, const VpaDomain *dom, const GArray *extra,
                     GError **error)
{
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      if (hd->addr != VPA_ADDR_NONE)
        g_array_append_val (addrs, hd->addr);
    }
  if (extra != NULL)
    g_array_append_vals (addrs, extra->data, extra->len);
  return vpa_sysfs_load_devices (root, (const VpaAddr *) (gpointer) addrs->data, addrs->len,
                                 error);
}

/* A domain holding a whole PF (holds_pf) needs the VFs of it that another
 * domain holds (claims) or that a reservation keeps: either makes the PF
 * unusable (docs/reservations.md). *h, read without them, is read again
 * with them when there are any; addrs are check_addrs()'s. */
static gboolean
load_blocking_vfs (const char *root, const VpaConfig *config, const VpaDomain *dom,
                   gboolean holds_pf, const GArray *addrs, const GPtrArray *claims, VpaHost **h,
                   GError **error)
{
  g_autoptr (GArray) extra = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  for (guint i = 0; holds_pf && i < claims->len; i++)
    g_array_append_val (extra, ((const VpaClaim *) g_ptr_array_index (claims, i))->addr);
  for (guint i = 0; holds_pf && i < addrs->len; i++)
    {
      VpaAddr a = g_array_index (addrs, VpaAddr, i);
      if (vpa_reserve_set_find (config->reservations, a) != NULL && vpa_host_lookup (*h, a) < 0)
        g_array_append_val (extra, a);
    }
  if (extra->len == 0)
    return TRUE;
  g_clear_pointer (h, vpa_host_free);
  *h = load_domain_devices (root, dom, extra, error);
  return *h != NULL;
}

/* The addresses whose holders a check needs: every device of h (the
 * domain's and their PFs) and the VFs of the PFs the domain holds whole
 * (a held VF of such a PF makes it unusable). */
static GArray *
check_addrs (const char *root, const VpaHost *h, const VpaDomain *dom, gboolean *holds_pf,
             GError **error)
{
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  *holds_pf = FALSE;
  for (guint i = 0; i < h->devices->len; i++)
    g_array_append_val (addrs, vpa_host_device (h, i)->addr);
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      gint idx = hd->addr != VPA_ADDR_NONE ? vpa_host_lookup (h, hd->addr) : -1;

      if (idx < 0 || vpa_host_device (h, (guint) idx)->dev_type != VPA_DEV_TYPE_PF)
        continue;
      *holds_pf = TRUE;
      if (!vpa_sysfs_vf_addrs (root, hd->addr, addrs, error))
        return NULL;
    }
  return g_steal_pointer (&addrs);
}

/* The hook runs inside libvirtd's own request: it must never connect
 * back to it (a deadlock), so a libvirt URI cannot be its source. */
static gboolean
source_usable (const VpaConfig *config, GError **error)
{
  const char *source = config->inventory_source;

  if (strstr (source, "://") == NULL || g_str_has_prefix (source, "test:///"))
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: [inventory] source='%s': the hook cannot use a libvirt connection (it runs "
               "inside libvirtd's request); use sysfs:/ or a host snapshot",
               config->path, source);
  return FALSE;
}

static void
add_source_claims (GPtrArray *claims, const VpaHost *h, const char *guest)
{
  for (guint i = 0; h->claims != NULL && i < h->claims->len; i++)
    {
      const VpaClaim *cl = g_ptr_array_index (h->claims, i);
      if (g_strcmp0 (cl->domain, guest) != 0)
        g_ptr_array_add (claims, vpa_claim_new (cl->domain, cl->addr, cl->running));
    }
}

/* This host's inventory and the claims of the other domains. A check
 * (dom given) on sysfs reads only the devices it judges: the domain's
 * and their PFs, which is all PF/VF exclusivity needs for VFs (a held
 * PF is among them; a held VF elsewhere blocks nothing of ours). Its
 * claims are those of the running domains that may hold one of them or
 * a VF of a PF it holds whole (vpa_hook_claims): on a host where they
 * are bound to host drivers, no state file is read at all. Only a domain
 * holding a whole PF then also reads the held and the reserved devices,
 * to find such VFs of that PF. A placement reads every device and every
 * claim. */
static gboolean
load_host (const HookRun *run, const VpaDomain *dom, VpaHost **host, GPtrArray **claims,
           GPtrArray *skipped, GError **error)
{
  const char *source = run->config->inventory_source;
  VpaHookClaimsQuery q = { (const char *const *) run->config->state_dirs, run->guest };
  g_autoptr (VpaHost) h = NULL;
  g_autoptr (GPtrArray) c = NULL;

  q.skipped = skipped;
  if (dom != NULL && g_str_has_prefix (source, "sysfs:") && source[6] != '\0')
    {
      g_autoptr (GArray) addrs = NULL;
      gboolean holds_pf = FALSE;

      q.sysfs_root = source + 6;
      h = load_domain_devices (q.sysfs_root, dom, NULL, error);
      if (h == NULL || (addrs = check_addrs (q.sysfs_root, h, dom, &holds_pf, error)) == NULL)
        return FALSE;
      q.addrs = (const VpaAddr *) (gpointer) addrs->data;
      q.n_addrs = addrs->len;
      q.known = h;
      q.running_only = TRUE;
      /* A recorded whole-guest binding: the CPUs other domains pin, from
       * every state file. */
      q.nodes = dom->placed_cells->len > 0;
      c = vpa_hook_claims (&q, error);
      if (c != NULL &&
          !load_blocking_vfs (q.sysfs_root, run->config, dom, holds_pf, addrs, c, &h, error))
        return FALSE;
    }
  else
    {
      if (!source_usable (run->config, error))
        return FALSE;
      c = vpa_hook_claims (&q, error);
      if (c != NULL)
        h = vpa_source_load (source, error);
      /* A snapshot's <domain> children are claims, as for the CLI: one
       * source gives the same claims everywhere. */
      if (h != NULL)
        add_source_claims (c, h, run->guest);
    }
  if (h == NULL || c == NULL)
    return FALSE;
  *host = g_steal_pointer (&h);
  *claims = g_steal_pointer (&c);
  return TRUE;
}

static gint
str_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* A warning line, escaped and bounded as fail()'s line is (the domain's
 * name and a file's may hold any byte). */
static void
warn (const HookRun *run, const char *message)
{
  g_autofree char *line = g_strdup_printf ("%s: domain '%s': warning: %s", PROG, run->guest,
                                           message);
  g_autofree char *bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);

  fprintf (stderr, "%s\n", bounded);
}

/* The state files skipped (not libvirt's: links, FIFOs, directories),
 * on stderr after a call that succeeded (a refusal stays one line). */
static void
warn_skipped (const HookRun *run, GPtrArray *skipped)
{
  const guint max = 8;

  g_ptr_array_sort (skipped, str_cmp);
  for (guint i = 0; i < skipped->len && i < max; i++)
    warn (run, (const char *) g_ptr_array_index (skipped, i));
  if (skipped->len > max)
    {
      g_autofree char *more = g_strdup_printf ("[claims] state-dirs: %u more files skipped",
                                               skipped->len - max);
      warn (run, more);
    }
}

/* What a check that passed still reports (a locality group farther
 * than its records say), one warning line each, bounded. */
static void
warn_notes (const HookRun *run, GPtrArray *results)
{
  for (guint i = 0; i < results->len; i++)
    {
      const VpaCheckResult *res = g_ptr_array_index (results, i);
      g_autofree char *line = NULL;
      g_autofree char *bounded = NULL;

      if (!res->note)
        continue;
      line = g_strdup_printf ("%s: domain '%s': warning: %s", PROG, run->guest, res->line);
      bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);
      fprintf (stderr, "%s\n", bounded);
    }
}

/* Joins every failed check into the one line libvirt shows; *reason is
 * the first one's. */
static char *
check_failures (GPtrArray *results, VpaVerdictReason *reason)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < results->len; i++)
    {
      const VpaCheckResult *res = g_ptr_array_index (results, i);
      if (res->status == VPA_CHECK_OK)
        continue;
      if (s->len == 0)
        *reason = vpa_verdict_reason_from_check (res->status);
      if (s->len > 0)
        g_string_append (s, "; ");
      g_string_append (s, res->line);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* A domain with requests and not one <vpa:placed> was never placed
 * (defined with virsh, virt-install or virt-manager): its refusal says
 * the command that places and defines it again (docs/virsh.md). */
static char *
unplaced_hint (const VpaDomain *dom, VpaVerdictReason reason, const char *failures)
{
  g_autofree char *quoted = NULL;
  const char *name = dom->name != NULL ? dom->name : "";
  gboolean plain = name[0] != '\0' && name[0] != '-';

  if (strlen (name) > 64)
    name = "DOMAIN"; /* the hint stays readable in the bounded line */

  if (reason != VPA_VERDICT_REASON_UNPLACED || dom->placed->len > 0)
    return g_strdup (failures);
  for (const char *c = name; *c != '\0' && plain; c++)
    plain = g_ascii_isalnum (*c) || strchr ("._-", *c) != NULL;
  quoted = plain ? g_strdup (name) : g_shell_quote (name);
  /* First, so that the bounded line keeps it whatever the failures. */
  return g_strdup_printf ("never placed: place and define it with: virsh dumpxml %s | virt-pci-affinity define -; %s",
                          quoted, failures);
}

/* After a prepare that lets the domain start: its one-time-use devices
 * (otu, NULL outside prepare) are recorded (docs/reservations.md); a
 * record that cannot be written fails the start like any check. */
static int
record_one_time_use (const HookRun *run, const VpaDomain *dom, const GArray *otu)
{
  g_autoptr (GError) error = NULL;

  if (otu == NULL || vpa_reserve_apply_record (run->config, dom, otu,
                                               g_get_real_time () / G_USEC_PER_SEC, &error))
    return 0;
  return fail (run, VPA_VERDICT_REASON_INVENTORY, error->message);
}

/* prepare begin / start begin: refuse a domain whose devices break their
 * policy, are not on this host, are reserved, or that another running
 * domain holds. */
static int
hook_check (HookRun *run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GPtrArray) results = NULL;
  g_autoptr (GPtrArray) skipped = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *failures = NULL;
  g_autofree char *hinted = NULL;
  g_autoptr (GArray) otu = NULL;
  VpaVerdictReason reason = VPA_VERDICT_REASON_INPUT;
  gboolean ok = FALSE;
  int rc;

  dom = vpa_pipeline_parse (&(VpaDoc){ run->xml, run->len, "stdin" }, &error);
  if (dom == NULL)
    {
      /* A request we cannot read is refused; so is a document without
       * our namespace that we cannot read, since it mentions a PCI
       * device (vpa_hook_input_relevant): whatever libxml2's limits, a device
       * we cannot check never starts. */
      if (memmem (run->xml, run->len, VPA_XMLNS_PREFIX, strlen (VPA_XMLNS_PREFIX)) != NULL)
        return fail (run, VPA_VERDICT_REASON_INPUT, error->message);
      g_prefix_error (&error, "the domain XML mentions a PCI device (<hostdev> or type='hostdev') but cannot be read, so it cannot be checked: ");
      return fail (run, VPA_VERDICT_REASON_INPUT, error->message);
    }
  if (!dom->has_affinity && dom->hostdevs->len == 0)
    return 0;

  /* a device whose reservation cannot be checked is not handed out */
  if (!vpa_reserve_apply_load (run->config, &error) ||
      !load_host (run, dom, &host, &claims, skipped, &error))
    return fail (run, VPA_VERDICT_REASON_INVENTORY, error->message);
  if (run->op == HOOK_OP_PREPARE &&
      (otu = vpa_reserve_apply_wanted (run->config, host, dom, &error)) == NULL)
    return fail (run, VPA_VERDICT_REASON_INVENTORY, error->message);
  results = vpa_pipeline_check (g_steal_pointer (&host), claims, run->config, dom,
                                TRUE, &ok, &error);
  if (results == NULL)
    return fail (run, VPA_VERDICT_REASON_INPUT, error->message);
  if (ok)
    {
      warn_skipped (run, skipped);
      warn_notes (run, results);
      return record_one_time_use (run, dom, otu);
    }
  failures = check_failures (results, &reason);
  hinted = unplaced_hint (dom, reason, failures);
  rc = fail (run, reason, hinted);
  /* audited: the domain starts all the same */
  return rc == 0 ? record_one_time_use (run, dom, otu) : rc;
}

/* The addresses whose claims a keeping re-placement needs: those of
 * check_addrs() but the bridges. A claim on a bridge holds it and
 * nothing else (it has no PF or VF), and a bridge is never kept for a
 * request; the guest-side <address>es of other domains' own controllers
 * (bus 0x00, slot 0x02, ...) often equal a host root port's, which would
 * make their files parsed for nothing. */
static void
drop_bridges (GArray *addrs, const VpaHost *h)
{
  for (guint i = addrs->len; i > 0; i--)
    {
      gint idx = vpa_host_lookup (h, g_array_index (addrs, VpaAddr, i - 1));
      if (idx >= 0 && vpa_pcie_is_bridge (vpa_host_device (h, (guint) idx)))
        g_array_remove_index_fast (addrs, i - 1);
    }
}

/* Whether a running domain may hold one of addrs (all devices of h):
 * QEMU holds a device only through VFIO, as a check reasons
 * (vpa_hook_claims_may_be_assigned). */
static gboolean
any_may_be_assigned (const VpaHost *h, const GArray *addrs)
{
  for (guint i = 0; i < addrs->len; i++)
    {
      gint idx = vpa_host_lookup (h, g_array_index (addrs, VpaAddr, i));
      if (idx < 0 || vpa_hook_claims_may_be_assigned (vpa_host_device (h, (guint) idx)))
        return TRUE;
    }
  return FALSE;
}

/* The fast path of a re-placement: TRUE when the domain keeps every
 * device it holds, on exactly what the full re-placement would see of
 * them, so that it would print nothing. Reads from sysfs only the
 * domain's devices, their PFs, the bridges above them and the VFs of the
 * PFs it holds whole (as a check does), and parses only the state files
 * that may name one of those (vpa_statedirs_may_name: the claims on them
 * are exactly those of every file, running or defined). FALSE, with
 * nothing printed, whenever something must move or cannot be told here:
 * the full re-placement then answers, errors included. */
static gboolean
place_unchanged (const HookRun *run, GPtrArray *skipped)
{
  const char *source = run->config->inventory_source;
  const char *root = source + 6;
  VpaPlaceOptions opts = { .claims = NULL, .config = run->config, .keep_guest_topology = TRUE, .keep_only = TRUE };
  VpaPlaceReport report = { 0 };
  VpaStatedirsQuery sq = { (const char *const *) run->config->state_dirs, run->guest };
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaHost) h = NULL;
  g_autoptr (GArray) addrs = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autofree char *out = NULL;
  gboolean holds_pf = FALSE;

  if (!g_str_has_prefix (source, "sysfs:") || *root == '\0')
    return FALSE;
  dom = vpa_pipeline_parse (&(VpaDoc){ run->xml, run->len, "stdin" }, &error);
  if (dom == NULL || !dom->has_affinity || dom->numa_auto)
    return FALSE;
  h = load_domain_devices (root, dom, NULL, &error);
  if (h == NULL || (addrs = check_addrs (root, h, dom, &holds_pf, &error)) == NULL)
    return FALSE;
  drop_bridges (addrs, h);
  sq.skipped = skipped;
  sq.addrs = (const VpaAddr *) (gpointer) addrs->data;
  sq.n_addrs = addrs->len;
  sq.defined_only = !holds_pf && !any_may_be_assigned (h, addrs);
  if ((claims = vpa_statedirs_query (&sq, &error)) == NULL)
    return FALSE;
  /* A held or reserved VF of a PF the domain holds whole blocks it. */
  if (!load_blocking_vfs (root, run->config, dom, holds_pf, addrs, claims, &h, &error))
    return FALSE;
  opts.claims = claims;
  out = vpa_pipeline_place_parsed (g_steal_pointer (&h), &opts, g_steal_pointer (&dom), run->xml,
                                   run->len, &report, &error);
  if (out == NULL || report.changed)
    {
      g_debug ("domain '%s': re-placement: the full path answers: %s", run->guest,
               out == NULL ? error->message : "the document changes");
    }
  return out != NULL && !report.changed;
}

/* Tests and benchmarks (VPA_HOOK_REPLACE=full, honoured where VPA_CONFIG
 * is) compare the fast path with the full re-placement alone. */
static gboolean
fast_path_allowed (void)
{
  return !vpa_hook_input_env_allowed () || g_strcmp0 (g_getenv ("VPA_HOOK_REPLACE"), "full") != 0;
}

/* migrate begin / restore begin: place every request again on this host;
 * print the rewritten document only when it changed. */
static int
hook_place (HookRun *run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GPtrArray) skipped = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *out = NULL;
  /* the guest ABI keeps its PCI controllers across migrate and restore */
  VpaPlaceOptions opts = { .config = run->config, .keep_guest_topology = TRUE };
  VpaPlaceReport report = { 0 };

  if (memmem (run->xml, run->len, VPA_XMLNS_PREFIX, strlen (VPA_XMLNS_PREFIX)) == NULL)
    return 0;
  if (!vpa_reserve_apply_load (run->config, &error))
    return fail (run, VPA_VERDICT_REASON_INVENTORY, error->message);
  if (fast_path_allowed ())
    {
      if (place_unchanged (run, skipped))
        {
          g_debug ("domain '%s': re-placement: every device kept (fast path)", run->guest);
          warn_skipped (run, skipped);
          return 0;
        }
      g_ptr_array_set_size (skipped, 0);
    }
  if (!load_host (run, NULL, &host, &claims, skipped, &error))
    return fail (run, VPA_VERDICT_REASON_INVENTORY, error->message);
  opts.claims = claims;
  out = vpa_pipeline_place (g_steal_pointer (&host), &opts, &(VpaDoc){ run->xml, run->len, "stdin" }, &report, &error);
  if (out == NULL)
    return fail (run, VPA_VERDICT_REASON_PLACEMENT, error->message);
  if (report.changed && !vpa_file_write_all (STDOUT_FILENO, out, strlen (out)))
    {
      g_autofree char *msg = g_strdup_printf ("cannot write the rewritten domain XML: %s",
                                              g_strerror (errno));
      return refuse (run, VPA_VERDICT_REASON_PLACEMENT, FALSE, msg); /* stdout is half written */
    }
  warn_skipped (run, skipped);
  return 0;
}

static HookOp
parse_op (const char *op)
{
  static const struct {
    const char *name;
    HookOp op;
  } ops[] = {
    { "prepare", HOOK_OP_PREPARE },
    { "start", HOOK_OP_START },
    { "migrate", HOOK_OP_MIGRATE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      if (g_strcmp0 (op, ops[i].name) == 0)
        return ops[i].op;
    }
  return HOOK_OP_RESTORE; /* vpa_hook_input_handled() let nothing else through */
}

static int
hook_dispatch (HookRun *run)
{
  g_autoptr (GError) error = NULL;

  if ((run->config = load_config (&error)) == NULL)
    return fail (run, VPA_VERDICT_REASON_CONFIG, error->message); /* NOLINT(clang-analyzer-core.NullDereference): load_config sets error when it returns NULL */

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
vpa_hook_run (char **argv, const char *xml, size_t len)
{
  g_auto (HookRun) run = { 0 };
  int argc = 0;

  while (argv != NULL && argv[argc] != NULL)
    argc++;
  if (argc != 5)
    {
      fprintf (stderr, "%s: usage: %s GUEST OPERATION SUB-OPERATION EXTRA (libvirtd runs it with the domain XML on stdin); got %d arguments\n",
               PROG, PROG, argc > 0 ? argc - 1 : 0);
      return 2;
    }
  /* libc only up to here: the common cases never touch GLib. */
  if (!vpa_hook_input_handled (argv[2], argv[3]) || !vpa_hook_input_relevant (xml, len))
    return 0;
  /* stdout is the document libvirt reads back (migrate, restore): GLib's
   * debug and info messages (G_MESSAGES_DEBUG) go to stderr. */
  g_log_writer_default_set_use_stderr (TRUE);
  run.guest = argv[1];
  run.op = parse_op (argv[2]);
  run.xml = xml;
  run.len = len;
  return hook_dispatch (&run);
}
