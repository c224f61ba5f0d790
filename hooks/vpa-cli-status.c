/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity status: the hook installed where libvirtd reads
 * hooks, the running daemon started after it, the configuration, the
 * hook's inventory against -c, the mode, the last verdicts. Every path
 * is under st->root, so that a test can build the host it looks at.
 */
#include "vpa-cli-status.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpa-config-lint.h"
#include "vpa-config.h"
#include "vpa-output-verdicts.h"
#include "vpa-reserve.h"
#include "vpa-source.h"
#include "vpa-verdict.h"

#define HOOK_LINK VPA_HOOK_QEMU_D "/virt-pci-affinity"

typedef struct {
  const VpaCliStatus *st;
  guint fixes;
  gint64 hook_time; /* when the hook link was made, 0 when missing */
} Status;

static void say_ok (Status *s, const char *area, const char *fmt, ...) G_GNUC_PRINTF (3, 4);
static void say_fix (Status *s, const char *area, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static void
say_ok (Status *s, const char *area, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;

  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  printf ("ok   %s: %s\n", area, text);
}

static void
say_fix (Status *s, const char *area, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL, *bounded = NULL;

  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  bounded = vpa_message_bound (text, VPA_MESSAGE_MAX);
  printf ("FIX  %s: %s\n", area, bounded);
  s->fixes++;
}

static char *
under_root (const Status *s, const char *path)
{
  return g_strconcat (s->st->root, path, NULL);
}

static char *
format_time (gint64 t)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (t);

  return dt != NULL ? g_date_time_format (dt, "%Y-%m-%d %H:%M:%S UTC") : g_strdup ("?");
}

/* The link libvirtd runs: there, a link or program that can be run. */
static void
check_hook (Status *s)
{
  g_autofree char *path = under_root (s, HOOK_LINK);
  g_autofree char *target = NULL;
  struct stat lst, st;

  if (lstat (path, &lst) < 0)
    {
      say_fix (s, "hook", "%s is missing, so libvirtd runs no check: install the package "
                          "again (apt-get install --reinstall virt-pci-affinity) or run meson install",
               HOOK_LINK);
      return;
    }
  /* Its change time: dpkg gives an extracted link the package's mtime,
   * but the inode changes when it is made, whatever the mtime says. */
  s->hook_time = MAX (lst.st_mtime, lst.st_ctime);
  target = S_ISLNK (lst.st_mode) ? g_file_read_link (path, NULL) : NULL;
  if (stat (path, &st) < 0 || !S_ISREG (st.st_mode) || (st.st_mode & 0111) == 0 ||
      access (path, X_OK) < 0)
    {
      say_fix (s, "hook", "%s%s%s is not a program libvirtd can run (libvirtd skips it): "
                          "install the package again (apt-get install --reinstall virt-pci-affinity)",
               HOOK_LINK, target != NULL ? " -> " : "", target != NULL ? target : "");
      return;
    }
  say_ok (s, "hook", "%s%s%s, where libvirtd reads qemu hooks", HOOK_LINK,
          target != NULL ? " -> " : "", target != NULL ? target : "");
}

/* When process pid started (seconds since the epoch), from
 * /proc/PID/stat's starttime and /proc/stat's btime; -1 when unknown. */
static gint64
process_start (const Status *s, gint64 pid)
{
  g_autofree char *stat_path = g_strdup_printf ("%s/proc/%" G_GINT64_FORMAT "/stat", s->st->root, pid);
  g_autofree char *boot_path = under_root (s, "/proc/stat");
  g_autofree char *text = NULL, *boot = NULL, *btime_text = NULL;
  g_auto (GStrv) fields = NULL;
  const char *paren, *btime;
  guint64 ticks, btime_s;
  long hz = sysconf (_SC_CLK_TCK);

  if (!g_file_get_contents (stat_path, &text, NULL, NULL) ||
      !g_file_get_contents (boot_path, &boot, NULL, NULL) || hz <= 0 ||
      (paren = strrchr (text, ')')) == NULL || paren[1] != ' ' || (btime = strstr (boot, "\nbtime ")) == NULL)
    return -1;
  /* after "pid (comm)": state is field 3, starttime field 22 */
  fields = g_strsplit (paren + 2, " ", 22);
  btime_text = g_strndup (btime + 7, strcspn (btime + 7, "\n"));
  if (g_strv_length (fields) < 21 ||
      !g_ascii_string_to_unsigned (fields[19], 10, 0, G_MAXUINT64, &ticks, NULL) ||
      !g_ascii_string_to_unsigned (btime_text, 10, 0, G_MAXUINT64, &btime_s, NULL))
    return -1;
  return (gint64) (btime_s + ticks / (guint64) hz);
}

/* The running libvirtd or virtqemud, from its pid file: its name, pid
 * and start; FALSE when none runs. */
static gboolean
find_daemon (const Status *s, const char **name, gint64 *pid, gint64 *start)
{
  static const char *const daemons[][2] = { { "libvirtd", "/run/libvirtd.pid" },
                                            { "virtqemud", "/run/virtqemud.pid" } };

  for (guint i = 0; i < G_N_ELEMENTS (daemons); i++)
    {
      g_autofree char *path = under_root (s, daemons[i][1]);
      g_autofree char *text = NULL;

      if (!g_file_get_contents (path, &text, NULL, NULL) ||
          !g_ascii_string_to_signed (g_strstrip (text), 10, 1, G_MAXINT32, pid, NULL) ||
          (*start = process_start (s, *pid)) < 0)
        continue;
      *name = daemons[i][0];
      return TRUE;
    }
  return FALSE;
}

static void
check_daemon (Status *s)
{
  const char *name = NULL;
  gint64 pid = 0, start = 0;
  g_autofree char *started = NULL, *installed = NULL;

  if (!find_daemon (s, &name, &pid, &start))
    {
      say_ok (s, "daemon", "no libvirtd or virtqemud runs; it reads the hook when it starts");
      return;
    }
  started = format_time (start);
  if (s->hook_time == 0)
    {
      say_ok (s, "daemon", "%s (pid %" G_GINT64_FORMAT ") started %s", name, pid, started);
      return;
    }
  installed = format_time (s->hook_time);
  /* a second of slack: both times are whole seconds, and start.sh-like
   * scripts make the link and start the daemon within one */
  if (start + 1 < s->hook_time)
    {
      say_fix (s, "daemon",
               "%s (pid %" G_GINT64_FORMAT ") started %s, before the hook was installed (%s), "
               "so it does not run it: restart libvirtd (systemctl restart %s)",
               name, pid, started, installed, name);
    }
  else
    {
      say_ok (s, "daemon", "%s (pid %" G_GINT64_FORMAT ") started %s, after the hook (%s): it runs it",
              name, pid, started, installed);
    }
}

/* config check's errors, and the configuration itself (NULL when it
 * cannot be used). */
static VpaConfig *
check_config (Status *s)
{
  const char *path = s->st->config_path;
  g_autoptr (GPtrArray) findings =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_lint_finding_free);
  g_autoptr (GError) error = NULL;
  g_autofree char *buf = NULL;
  VpaConfig *config = NULL;
  gsize len = 0;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      say_fix (s, "config", "%s does not exist, so the hook admits no device: write device "
                            "specs there (docs/operations.md), then run virt-pci-affinity config check",
               path);
      return NULL;
    }
  if (!g_file_get_contents (path, &buf, &len, &error))
    {
      say_fix (s, "config", "%s: make it readable by root", error->message);
      return NULL;
    }
  vpa_config_lint_text (&(VpaDoc){ buf, len, path }, findings);
  config = vpa_config_load_data (buf, len, path, &error);
  if (config == NULL)
    {
      say_fix (s, "config", "%s: fix it (virt-pci-affinity config check lists every mistake); "
                            "meanwhile the hook refuses every domain with a device",
               error->message);
      return NULL;
    }
  if (vpa_config_lint_worst (findings) >= VPA_LINT_WARNING)
    {
      say_fix (s, "config", "%s parses, with %u finding(s): run virt-pci-affinity config check",
               path, findings->len);
    }
  else
    {
      say_ok (s, "config", "%s parses (%u device spec(s), %u alias(es))", path,
              config->device_specs->len, config->aliases->len);
    }
  return config;
}

static gint
addr_cmp (gconstpointer a, gconstpointer b)
{
  VpaAddr x = *(const VpaAddr *) a, y = *(const VpaAddr *) b;

  return x < y ? -1 : x > y;
}

static GArray *
sorted_addrs (const VpaHost *h)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (VpaAddr));

  for (guint i = 0; i < h->devices->len; i++)
    g_array_append_val (a, vpa_host_device (h, i)->addr);
  g_array_sort (a, addr_cmp);
  return a;
}

/* The first address in a and not in b, or VPA_ADDR_NONE. */
static VpaAddr
first_missing (const GArray *a, const GArray *b)
{
  for (guint i = 0; i < a->len; i++)
    {
      if (bsearch (&g_array_index (a, VpaAddr, i), b->data, b->len, sizeof (VpaAddr), addr_cmp) ==
          NULL)
        return g_array_index (a, VpaAddr, i);
    }
  return VPA_ADDR_NONE;
}

static void
check_inventory (Status *s, const VpaConfig *config)
{
  const char *source = config->inventory_source;
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaHost) hook = vpa_source_load (source, &error);
  g_autoptr (GArray) a = NULL, b = NULL;
  VpaAddr only_hook, only_uri;
  char buf[VPA_ADDR_BUFLEN];

  if (hook == NULL)
    {
      say_fix (s, "inventory", "the hook's [inventory] source='%s' cannot be read: %s: set it "
                               "to sysfs:/ (the default)",
               source, error->message);
      return;
    }
  if (s->st->host == NULL)
    {
      say_fix (s, "inventory", "%s cannot be read, so the hook's inventory is not compared: %s",
               s->st->uri, s->st->host_error);
      return;
    }
  a = sorted_addrs (hook);
  b = sorted_addrs (s->st->host);
  only_hook = first_missing (a, b);
  only_uri = first_missing (b, a);
  if (only_hook == VPA_ADDR_NONE && only_uri == VPA_ADDR_NONE)
    {
      say_ok (s, "inventory", "the hook's source %s sees the same %u PCI devices as %s", source,
              a->len, s->st->uri);
      return;
    }
  say_fix (s, "inventory",
           "the hook's source %s sees %u PCI devices, %s sees %u (%s %s only in %s): point "
           "[inventory] source at this host (sysfs:/, the default)",
           source, a->len, s->st->uri, b->len, "first:",
           vpa_addr_format (only_hook != VPA_ADDR_NONE ? only_hook : only_uri, buf),
           only_hook != VPA_ADDR_NONE ? "the hook's" : s->st->uri);
}

static void
check_verdicts (Status *s, const VpaConfig *config)
{
  g_autoptr (GError) error = NULL;
  gboolean exists = FALSE;
  g_autoptr (VpaVerdictCounts) c = vpa_verdict_counts_load (config->hook_state_dir, &exists,
                                                            &error);
  g_autofree char *text = NULL;

  if (c == NULL)
    {
      say_fix (s, "verdicts", "%s: remove the file; the hook starts it again at its next verdict",
               error->message);
      return;
    }
  if (!exists)
    {
      say_ok (s, "verdicts", "none yet (%s/%s)", config->hook_state_dir, VPA_VERDICT_FILE);
      return;
    }
  text = vpa_output_verdicts_text (c);
  say_ok (s, "verdicts", "%s", text);
}

/* The reservations (docs/reservations.md): a file that cannot be read
 * stops every start with a PCI device and every command that hands one
 * out, so it is a fault here too. */
static void
check_reservations (Status *s, const VpaConfig *config)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaReserveSet) set = vpa_reserve_set_load (config->hook_state_dir, &error);
  guint n_quarantined = 0;

  if (set == NULL)
    {
      say_fix (s, "reservations", "%s: until it reads, the hook refuses every domain with a PCI "
                                  "device and no command hands one out; move it aside (its "
                                  "reservations are then forgotten) and quarantine the failing "
                                  "devices again",
               error->message);
      return;
    }
  if (set->items->len == 0)
    {
      say_ok (s, "reservations", "no device reserved (%s)", set->path);
      return;
    }
  for (guint i = 0; i < set->items->len; i++)
    {
      if (((const VpaReservation *) g_ptr_array_index (set->items, i))->kind ==
          VPA_RESERVE_QUARANTINE)
        n_quarantined++;
    }
  say_ok (s, "reservations", "%u reservation(s), %u one-time-use and %u quarantine (%s): "
                             "virt-pci-affinity device list",
          set->items->len, set->items->len - n_quarantined, n_quarantined, set->path);
}

guint
vpa_cli_status_run (const VpaCliStatus *st)
{
  Status s = { st, 0, 0 };
  g_autoptr (VpaConfig) config = NULL;

  check_hook (&s);
  check_daemon (&s);
  config = check_config (&s);
  if (config != NULL)
    {
      check_inventory (&s, config);
      check_reservations (&s, config);
      say_ok (&s, "mode", "%s",
              config->hook_audit ? "audit: nothing is refused; what would be is logged and counted"
                                 : "enforce");
      check_verdicts (&s, config);
    }
  return s.fixes;
}
