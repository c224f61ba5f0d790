/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Audit mode and the trace of every verdict (docs/hook.md): the hook run
 * as libvirtd runs it (argv, the domain on stdin, a clean environment)
 * with VPA_CONFIG and VPA_SYSLOG_SOCKET, which only the program in its
 * build tree honours; the log line is read back from a datagram socket
 * the test binds, the counters from the state directory the config names.
 * Also the counter file's own contract: bounded, parsed strictly, format
 * and parse inverse, a link refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vpa-verdict.h"

typedef struct {
  char *dir;  /* a temporary directory: config, state, socket */
  int sock;   /* bound at dir/log */
  char *conf; /* dir/hook.conf */
} Fixture;

static void
fixture_setup (Fixture *f, const char *config, const char *hook_group)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmpl = NULL, *base = NULL, *text = NULL, *sock_path = NULL;
  g_autofree char *data = g_build_filename (VPA_TEST_DATA, NULL);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_auto (GStrv) parts = NULL;

  f->dir = g_dir_make_tmp ("vpa-verdict-XXXXXX", &error);
  g_assert_no_error (error);
  tmpl = g_build_filename (VPA_TEST_DATA, "hook", "configs", config, NULL);
  g_file_get_contents (tmpl, &base, NULL, &error);
  g_assert_no_error (error);
  parts = g_strsplit (base, "@DATA@", -1);
  g_free (base);
  base = g_strjoinv (data, parts);
  text = g_strdup_printf ("%s\n[hook]\nstate-dir=%s/state\n%s", base, f->dir, hook_group);
  f->conf = g_build_filename (f->dir, "hook.conf", NULL);
  g_file_set_contents (f->conf, text, -1, &error);
  g_assert_no_error (error);
  sock_path = g_build_filename (f->dir, "log", NULL);
  g_assert_cmpuint (strlen (sock_path), <, sizeof sa.sun_path);
  strcpy (sa.sun_path, sock_path);
  f->sock = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (f->sock, >=, 0);
  g_assert_cmpint (bind (f->sock, (struct sockaddr *) &sa, sizeof sa), ==, 0);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->dir);

  close (f->sock);
  g_assert_cmpint (system (cmd), ==, 0);
  g_free (f->dir);
  g_free (f->conf);
}

/* The log lines sent so far, joined by newlines. */
static char *
read_log (const Fixture *f)
{
  GString *s = g_string_new (NULL);
  char buf[4096];
  ssize_t n;

  while ((n = recv (f->sock, buf, sizeof buf - 1, MSG_DONTWAIT)) > 0)
    {
      buf[n] = '\0';
      g_string_append_printf (s, "%s\n", buf);
    }
  return g_string_free (s, FALSE);
}

/* Runs the hook on the domain file (replace: from -> to in it, or NULL). */
static int
run_hook (const Fixture *f, const char *op, const char *domain, const char *from,
          const char *to, char **err)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "hook", "domains", domain, NULL);
  g_autofree char *xml = NULL, *in = NULL, *out = NULL;
  g_autofree char *in_path = g_build_filename (f->dir, "in.xml", NULL);
  g_autofree char *env_conf = g_strdup_printf ("VPA_CONFIG=%s", f->conf);
  g_autofree char *env_log = g_strdup_printf ("VPA_SYSLOG_SOCKET=%s/log", f->dir);
  const char *argv[] = { g_getenv ("VPA_HOOK_BIN"), "guest", op, "begin", "-", NULL };
  const char *envp[] = { "LC_ALL=C", "PATH=/usr/bin:/bin", "HOME=/root", env_conf, env_log, NULL };
  int status = 0;

  g_file_get_contents (path, &xml, NULL, &error);
  g_assert_no_error (error);
  if (from != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (xml, from, 2);
      g_assert_cmpuint (g_strv_length (parts), ==, 2);
      in = g_strjoinv (to, parts);
    }
  in = in != NULL ? in : g_strdup (xml);
  g_file_set_contents (in_path, in, -1, &error);
  g_assert_no_error (error);
  {
    g_autofree char *cmd = g_strdup_printf ("exec \"$0\" \"$@\" < '%s'", in_path);
    const char *sh[] = { "/bin/sh", "-c", cmd, argv[0], argv[1], argv[2], argv[3], argv[4], NULL };

    g_spawn_sync (NULL, (char **) sh, (char **) envp, G_SPAWN_DEFAULT, NULL, NULL, &out, err,
                  &status, &error);
  }
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "");
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static VpaVerdictCounts *
load_counts (const Fixture *f, gboolean *exists)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_build_filename (f->dir, "state", NULL);
  VpaVerdictCounts *c = vpa_verdict_counts_load (dir, exists, &error);

  g_assert_no_error (error);
  return c;
}

#define BAD_LINE "ua-data0: device 0000:82:10.0 on NUMA node 1 breaks policy required from port: guest host nodes 0"
#define AFFINITY "<vpa:affinity "

/* [hook] mode=enforce (the default): refused, logged, counted. */
static void
test_enforce (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL, *log = NULL;
  g_autoptr (VpaVerdictCounts) c = NULL;

  g_assert_cmpint (run_hook (f, "prepare", "required-bad.xml", NULL, NULL, &err), ==, 1);
  g_assert_cmpstr (err, ==, "virt-pci-affinity: domain 'guest': " BAD_LINE "\n");
  log = read_log (f);
  g_assert_true (g_str_has_prefix (log, "<28>"));
  g_assert_nonnull (strstr (log, " virt-pci-affinity["));
  g_assert_nonnull (strstr (log, "]: domain 'guest': prepare: refused (policy): " BAD_LINE "\n"));
  c = load_counts (f, NULL);
  g_assert_cmpuint (c->count[VPA_VERDICT_OP_PREPARE][VPA_VERDICT_REFUSED][VPA_VERDICT_REASON_POLICY],
                    ==, 1);
  g_assert_cmpuint (c->recent->len, ==, 1);
  g_assert_cmpstr (((VpaVerdictRecent *) c->recent->pdata[0])->domain, ==, "guest");
}

/* mode=audit: the start goes on; the would-refuse is logged and counted. */
static void
test_audit (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL, *log = NULL;
  g_autoptr (VpaVerdictCounts) c = NULL;

  g_assert_cmpint (run_hook (f, "start", "required-bad.xml", NULL, NULL, &err), ==, 0);
  g_assert_cmpstr (err, ==, "virt-pci-affinity: domain 'guest': audit: would refuse: " BAD_LINE "\n");
  log = read_log (f);
  g_assert_nonnull (strstr (log, "]: domain 'guest': start: would-refuse (policy): " BAD_LINE "\n"));
  c = load_counts (f, NULL);
  g_assert_cmpuint (
    c->count[VPA_VERDICT_OP_START][VPA_VERDICT_WOULD_REFUSE][VPA_VERDICT_REASON_POLICY], ==, 1);
  g_assert_cmpuint (c->count[VPA_VERDICT_OP_START][VPA_VERDICT_REFUSED][VPA_VERDICT_REASON_POLICY],
                    ==, 0);
}

/* A domain's enforce beats the host's audit; a domain's audit never
 * loosens an enforcing host. */
static void
test_domain_enforce (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;
  gboolean host_audit = GPOINTER_TO_INT (data);
  const char *to = host_audit ? AFFINITY "mode='enforce' " : AFFINITY "mode=\"audit\" ";

  g_assert_cmpint (run_hook (f, "prepare", "required-bad.xml", AFFINITY, to, &err), ==, 1);
  g_assert_cmpstr (err, ==, "virt-pci-affinity: domain 'guest': " BAD_LINE "\n");
}

/* A document that carries our namespace but cannot be read may ask for
 * enforce: refused even in audit mode. One without it is audited. */
static void
test_audit_unreadable (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL, *err2 = NULL;

  g_assert_cmpint (run_hook (f, "prepare", "malformed-ns.xml", NULL, NULL, &err), ==, 1);
  g_assert_false (g_str_has_prefix (err, "virt-pci-affinity: domain 'guest': audit"));
  g_assert_cmpint (run_hook (f, "prepare", "malformed-plain.xml", NULL, NULL, &err2), ==, 0);
  g_assert_true (g_str_has_prefix (err2, "virt-pci-affinity: domain 'guest': audit: would refuse: "));
}

/* A pass writes nothing: no log line, no counter file. */
static void
test_pass_writes_nothing (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL, *log = NULL;
  g_autoptr (VpaVerdictCounts) c = NULL;
  gboolean exists = TRUE;

  g_assert_cmpint (run_hook (f, "prepare", "required-ok.xml", NULL, NULL, &err), ==, 0);
  g_assert_cmpstr (err, ==, "");
  log = read_log (f);
  g_assert_cmpstr (log, ==, "");
  c = load_counts (f, &exists);
  g_assert_false (exists);
}

/* Many verdicts: the counts add up, the recent list stays bounded, a
 * domain name is bounded and escaped, and the file reads back. */
static void
test_counts_bounded (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("vpa-verdict-XXXXXX", &error);
  g_autofree char *name = g_strnfill (4000, 'x');
  g_autoptr (VpaVerdictCounts) c = NULL;
  g_autofree char *text = NULL, *path = NULL, *cmd = NULL;

  g_assert_no_error (error);
  name[0] = '\n';
  for (guint i = 0; i < 50; i++)
    {
      VpaVerdictEvent ev = { i == 49 ? name : "vm", i % VPA_VERDICT_OP_LAST, i % 2, i % 3,
                             "m", 1000 + i };
      g_assert_true (vpa_verdict_count (dir, &ev, &error));
      g_assert_no_error (error);
    }
  c = vpa_verdict_counts_load (dir, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->recent->len, ==, VPA_VERDICT_RECENT);
  g_assert_cmpint (((VpaVerdictRecent *) c->recent->pdata[0])->when, ==, 1040);
  g_assert_cmpuint (strlen (((VpaVerdictRecent *) c->recent->pdata[9])->domain), ==, 128);
  g_assert_cmpint (((VpaVerdictRecent *) c->recent->pdata[9])->domain[0], ==, '\n');
  text = vpa_verdict_counts_format (c);
  g_assert_cmpuint (strlen (text), <, 4096);
  {
    g_autoptr (VpaVerdictCounts) again = vpa_verdict_counts_parse (&(VpaDoc){ text, strlen (text), "t" }, &error);
    g_autofree char *text2 = NULL;

    g_assert_no_error (error);
    text2 = vpa_verdict_counts_format (again);
    g_assert_cmpstr (text, ==, text2);
  }
  /* a link in its place is refused, not followed */
  path = g_build_filename (dir, VPA_VERDICT_FILE, NULL);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (symlink ("/etc/passwd", path), ==, 0);
  g_assert_null (vpa_verdict_counts_load (dir, NULL, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  cmd = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

static void
test_counts_parse_errors (void)
{
  static const char *const bad[] = {
    "",
    "# something else\n",
    "# virt-pci-affinity hook verdicts 1\ncount prepare refused nonsense 1\n",
    "# virt-pci-affinity hook verdicts 1\ncount prepare refused policy -1\n",
    "# virt-pci-affinity hook verdicts 1\nrecent x prepare refused policy vm\n",
    "# virt-pci-affinity hook verdicts 1\ntotal 3\n",
    "# virt-pci-affinity hook verdicts 1\nrecent 1 start refused policy vm\\\n",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaVerdictCounts) c = vpa_verdict_counts_parse (&(VpaDoc){ bad[i], strlen (bad[i]), "f" }, &error);
      g_assert_null (c);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_true (g_str_has_prefix (error->message, "f"));
    }
}

/* Mutations of a good file: the error contract always holds, and a file
 * that parses formats back to something that parses to the same text. */
static void
test_counts_parse_mutations (void)
{
  static const char good[] = "# virt-pci-affinity hook verdicts 1\n"
                             "count prepare refused policy 3\n"
                             "count migrate would-refuse placement 18446744073709551615\n"
                             "recent 1764633600 start would-refuse policy vm\\n1\n";
  const char alphabet[] = " \n\\x9#-0123456789abcdefghijklmnopqrstuvwxyz";
  GRand *rand = g_rand_new_with_seed (24);

  for (guint i = 0; i < 2000; i++)
    {
      g_autofree char *buf = g_strdup (good);
      gsize len = strlen (buf);
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaVerdictCounts) c = NULL;

      for (guint m = g_rand_int_range (rand, 1, 4); m > 0; m--)
        {
          buf[g_rand_int_range (rand, 0, (gint32) len)] =
            alphabet[g_rand_int_range (rand, 0, sizeof alphabet - 1)];
        }
      c = vpa_verdict_counts_parse (&(VpaDoc){ buf, len, "m" }, &error);
      g_assert_true ((c == NULL) == (error != NULL));
      if (c != NULL)
        {
          g_autofree char *text = vpa_verdict_counts_format (c);
          g_autoptr (VpaVerdictCounts) again =
            vpa_verdict_counts_parse (&(VpaDoc){ text, strlen (text), "m" }, &error);
          g_autofree char *text2 = NULL;

          g_assert_no_error (error);
          text2 = vpa_verdict_counts_format (again);
          g_assert_cmpstr (text, ==, text2);
        }
      else
        g_assert_true (g_str_has_prefix (error->message, "m"));
    }
  g_rand_free (rand);
}

static void
test_audits_rule (void)
{
  g_assert_false (vpa_verdict_audits (FALSE, VPA_DOMAIN_MODE_AUDIT, TRUE));
  g_assert_false (vpa_verdict_audits (TRUE, VPA_DOMAIN_MODE_ENFORCE, TRUE));
  g_assert_false (vpa_verdict_audits (TRUE, VPA_DOMAIN_MODE_UNKNOWN, TRUE));
  g_assert_true (vpa_verdict_audits (TRUE, VPA_DOMAIN_MODE_UNKNOWN, FALSE));
  g_assert_true (vpa_verdict_audits (TRUE, VPA_DOMAIN_MODE_UNSET, TRUE));
  g_assert_true (vpa_verdict_audits (TRUE, VPA_DOMAIN_MODE_AUDIT, TRUE));
}

static void
setup_enforce (Fixture *f, gconstpointer data)
{
  fixture_setup (f, "two-node.conf", "");
}

static void
setup_audit (Fixture *f, gconstpointer data)
{
  fixture_setup (f, "two-node.conf", "mode=audit\n");
}

static void
setup_audit_destination (Fixture *f, gconstpointer data)
{
  fixture_setup (f, "destination.conf", "mode=audit\n");
}

/* A re-placement that fails in audit mode: exit 0 with nothing on
 * stdout, so that libvirt migrates with its own XML; counted as a
 * would-refuse of the placement. */
static void
test_audit_migrate (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL, *log = NULL;
  g_autoptr (VpaVerdictCounts) c = NULL;

  g_assert_cmpint (run_hook (f, "migrate", "placed-two-node.xml", NULL, NULL, &err), ==, 0);
  g_assert_true (g_str_has_prefix (err, "virt-pci-affinity: domain 'guest': audit: would refuse: "
                                        "alias 'QuickAssist' (policy required from flavor)"));
  log = read_log (f);
  g_assert_nonnull (strstr (log, "]: domain 'guest': migrate: would-refuse (placement): alias"));
  c = load_counts (f, NULL);
  g_assert_cmpuint (
    c->count[VPA_VERDICT_OP_MIGRATE][VPA_VERDICT_WOULD_REFUSE][VPA_VERDICT_REASON_PLACEMENT], ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/verdict/enforce", Fixture, NULL, setup_enforce, test_enforce, fixture_teardown);
  g_test_add ("/verdict/audit", Fixture, NULL, setup_audit, test_audit, fixture_teardown);
  g_test_add ("/verdict/domain-enforce-beats-audit", Fixture, GINT_TO_POINTER (TRUE), setup_audit,
              test_domain_enforce, fixture_teardown);
  g_test_add ("/verdict/domain-audit-never-loosens", Fixture, GINT_TO_POINTER (FALSE),
              setup_enforce, test_domain_enforce, fixture_teardown);
  g_test_add ("/verdict/audit-unreadable", Fixture, NULL, setup_audit, test_audit_unreadable,
              fixture_teardown);
  g_test_add ("/verdict/pass-writes-nothing", Fixture, NULL, setup_audit,
              test_pass_writes_nothing, fixture_teardown);
  g_test_add ("/verdict/audit-migrate", Fixture, NULL, setup_audit_destination,
              test_audit_migrate, fixture_teardown);
  g_test_add_func ("/verdict/counts-bounded", test_counts_bounded);
  g_test_add_func ("/verdict/counts-parse-errors", test_counts_parse_errors);
  g_test_add_func ("/verdict/counts-parse-mutations", test_counts_parse_mutations);
  g_test_add_func ("/verdict/audits-rule", test_audits_rule);
  return g_test_run ();
}
