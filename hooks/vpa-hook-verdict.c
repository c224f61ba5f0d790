/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The verdict of a failed check (vpa-hook-verdict.h). The log line goes
 * to the journal through its native API when the hook is built with
 * libsystemd and journald answers, else to syslog(3); the program in its
 * build tree sends it to VPA_SYSLOG_SOCKET instead when that is set
 * (tests), as it honours VPA_CONFIG (vpa_hook_input_env_allowed).
 */
#include "vpa-hook-verdict.h"

#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#ifdef VPA_HAVE_JOURNAL
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#endif

#include "vpa-constants.h"
#include "vpa-hook.h"
#include "vpa-types.h"

static gboolean
audits (const VpaHookVerdict *v)
{
  gboolean has_ns;

  if (!v->auditable || v->config == NULL || !v->config->hook_audit)
    return FALSE;
  has_ns = v->xml != NULL && memmem (v->xml, v->len, VPA_XMLNS, strlen (VPA_XMLNS)) != NULL;
  return vpa_verdict_audits (TRUE, vpa_domain_mode_read (v->xml, v->len), has_ns);
}

#ifdef VPA_HAVE_JOURNAL
/* sd_journal_send drops the line and reports success when journald's
 * socket does not exist: without it, syslog(3) has the line. */
static gboolean
journal_send (const VpaVerdictEvent *ev, const char *msg)
{
  if (access ("/run/systemd/journal/socket", W_OK) != 0)
    return FALSE;
  return sd_journal_send ("MESSAGE=%s", msg, "PRIORITY=%d", LOG_WARNING,
                          "SYSLOG_IDENTIFIER=virt-pci-affinity", "VPA_DOMAIN=%s", ev->domain,
                          "VPA_OP=%s", vpa_verdict_op_to_string (ev->op), "VPA_VERDICT=%s",
                          vpa_verdict_to_string (ev->verdict), "VPA_REASON=%s",
                          vpa_verdict_reason_to_string (ev->reason), NULL) == 0;
}
#endif

static void
log_line (const VpaVerdictEvent *ev)
{
  const char *sock = vpa_hook_input_env_allowed () ? g_getenv ("VPA_SYSLOG_SOCKET") : NULL;
  g_autofree char *msg = NULL;
  g_autoptr (GError) error = NULL;

  if (sock != NULL && *sock != '\0')
    {
      if (!vpa_verdict_syslog_send (sock, ev, &error))
        g_debug ("%s", error->message);
      return;
    }
  msg = vpa_verdict_log_message (ev);
#ifdef VPA_HAVE_JOURNAL
  if (journal_send (ev, msg))
    return;
#endif
  openlog ("virt-pci-affinity", LOG_PID, LOG_DAEMON);
  syslog (LOG_WARNING, "%s", msg);
  closelog ();
}

/* [hook] state-dir; the program in its build tree (tests, fuzzing,
 * benchmarks) keeps the default one in the build tree instead. */
static const char *
state_dir (const VpaConfig *config)
{
  const char *dir = config != NULL ? config->hook_state_dir : VPA_CONFIG_STATE_DIR_DEFAULT;

  if (vpa_hook_input_env_allowed () && strcmp (dir, VPA_CONFIG_STATE_DIR_DEFAULT) == 0)
    return VPA_HOOK_BUILD_ROOT "/hook-state";
  return dir;
}

int
vpa_hook_verdict (const VpaHookVerdict *v, const char *message)
{
  gboolean audit = audits (v);
  VpaVerdictEvent ev = { v->guest, v->op, audit ? VPA_VERDICT_WOULD_REFUSE : VPA_VERDICT_REFUSED,
                         v->reason, message, g_get_real_time () / G_USEC_PER_SEC };
  const char *dir = state_dir (v->config);
  g_autofree char *line = g_strdup_printf ("%s: domain '%s': %s%s", VPA_PROG, v->guest,
                                           audit ? "audit: would refuse: " : "", message);
  g_autofree char *bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);
  g_autoptr (GError) error = NULL;

  log_line (&ev);
  /* A refusal stays the one line libvirt shows; the counter's trouble
   * is said only when the start goes on. */
  if (!vpa_verdict_count (dir, &ev, &error) && audit)
    fprintf (stderr, "%s: domain '%s': warning: %s\n", VPA_PROG, v->guest, error->message);
  fprintf (stderr, "%s\n", bounded);
  return audit ? 0 : 1;
}
