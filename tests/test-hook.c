/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The qemu hook, run exactly as libvirtd runs it: argv GUEST OP SUBOP
 * EXTRA, the domain XML written to a pipe on stdin, and a clean
 * environment (LC_ALL, PATH, HOME) plus VPA_CONFIG (which only the hook
 * in its build tree honours).
 *
 * One case per data/hook/cases/NAME.case key file, in the format of the
 * bad-input corpus (tests/test-bad-input.c: command, stdin, status), with
 * the expected output in golden files and a host made for the case:
 *   [case]
 *   command=virt-pci-affinity-hook guest prepare begin -
 *                                  split on spaces; the first word is the hook
 *   stdin=../domains/x.xml         relative to the case (absent: empty)
 *   status=1                       the exit status
 *   stdin-bytes=N                  instead of stdin: N bytes of filler
 *   pad=N                          N spaces before the stdin document
 *   comment-bytes=N                a comment of N bytes after the stdin
 *                                  document's first tag
 *   config=../configs/two-node.conf  the default; @DATA@, @SYSFS@, @STATE@ replaced
 *   sysfs=VFS                      generate a fake sysfs tree with VFS VFs
 *   sysfs-iommu=true               ... with IOMMU groups, and the devices
 *                                  data/hook/state/pfvf holds bound to vfio-pci
 *   state=KIND:NAME;...            a state directory made at run time
 *                                  (@STATE@): KIND fifo, dir, link-zero
 *                                  (a link to /dev/zero) or oversized (a
 *                                  sparse file past the 16 MiB bound)
 *   reservations=../reserve/x.txt  copied to @STATE@/reservations (made
 *                                  empty when there is no state=); the
 *                                  file after the run is compared with
 *                                  NAME.reservations, its times as @NOW@
 * and the expected NAME.stdout / NAME.stderr beside it (absent: empty).
 * The former keys are still read: args= (the words after the program)
 * for command=, exit= for status=, and with them stdin= and config=
 * relative to data/hook.
 * Absolute paths in the output read @DATA@, @CONFIG@, @SYSFS@ and @STATE@.
 * VPA_TEST_REGENERATE=1 rewrites the expected files.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vpa-constants.h"
#include "vpa-hook.h"
#include "vpa-hook-claims.h"
#include "vpa-types.h"
#include "test-hook-sysfs.h"

/* The 2048-VF trees, built once for every case and the measurement:
 * without IOMMU groups, and with them (as a host with an IOMMU has). */
static char *sysfs_tree;
static char *sysfs_iommu_tree;

static const char *
shared_sysfs_tree (guint n_vfs, gboolean iommu)
{
  g_autoptr (GError) error = NULL;
  char **tree = iommu ? &sysfs_iommu_tree : &sysfs_tree;

  g_assert_cmpuint (n_vfs, ==, 2048);
  if (*tree == NULL)
    *tree = iommu ? vpa_test_sysfs_tree_iommu (n_vfs, &error) : vpa_test_sysfs_tree (n_vfs, &error);
  g_assert_no_error (error);
  return *tree;
}

/* state=KIND:NAME;...: the hostile entries of a state directory. */
static char *
make_state_dir (const char *spec)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("vpa-hook-state-XXXXXX", &error);
  g_auto (GStrv) items = g_strsplit (spec, ";", -1);

  g_assert_no_error (error);
  for (guint i = 0; items[i] != NULL; i++)
    {
      const char *colon = strchr (items[i], ':');
      g_autofree char *kind = NULL, *path = NULL;
      int fd;

      g_assert_nonnull (colon);
      kind = g_strndup (items[i], (gsize) (colon - items[i]));
      path = g_build_filename (dir, colon + 1, NULL);
      if (g_str_equal (kind, "fifo"))
        {
          g_assert_cmpint (mkfifo (path, 0600), ==, 0);
        }
      else if (g_str_equal (kind, "dir"))
        {
          g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
        }
      else if (g_str_equal (kind, "link-zero"))
        {
          g_assert_cmpint (symlink ("/dev/zero", path), ==, 0);
        }
      else if (g_str_equal (kind, "oversized"))
        {
          fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL, 0600);
          g_assert_cmpint (fd, >=, 0);
          g_assert_cmpint (ftruncate (fd, VPA_XML_MAX_DOCUMENT + 1), ==, 0);
          close (fd);
        }
      else
        g_error ("state=%s: unknown kind '%s'", spec, kind);
    }
  return g_steal_pointer (&dir);
}

static void
remove_state_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_remove (path) != 0)
        g_rmdir (path);
    }
  g_rmdir (dir);
}

typedef struct {
  char *input;
  gsize len;
  int fd;
} Feeder;

/* Writes the input to the hook's stdin like libvirt: all of it unless the
 * hook exits first (EPIPE, which libvirt ignores too). */
static gpointer
feed (gpointer data)
{
  Feeder *f = data;
  gsize off = 0;

  while (off < f->len)
    {
      ssize_t n = write (f->fd, f->input + off, f->len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      off += (gsize) n;
    }
  close (f->fd);
  return NULL;
}

static char *
read_fd_all (int fd)
{
  g_autoptr (GString) s = g_string_new (NULL);
  char buf[65536];
  ssize_t n;

  lseek (fd, 0, SEEK_SET);
  while ((n = read (fd, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static int
tmp_fd (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("vpa-hook-out-XXXXXX", &path, &error);

  g_assert_no_error (error);
  g_unlink (path);
  return fd;
}

typedef struct {
  int status;
  char *out;
  char *err;
  gdouble cpu_ms; /* the child's user + system time */
} HookResult;

static void
hook_result_clear (HookResult *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HookResult, hook_result_clear)

/* Runs prog with argv args, input on a pipe, and env added to the
 * clean environment libvirt gives hooks. */
static void
run_prog (const char *prog, const char *const *args, const char *input, gsize len,
          const char *const *env, HookResult *res)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GStrvBuilder) argv_b = g_strv_builder_new ();
  g_autoptr (GStrvBuilder) env_b = g_strv_builder_new ();
  g_auto (GStrv) argv = NULL;
  g_auto (GStrv) envp = NULL;
  Feeder feeder = { (char *) input, len, -1 };
  GThread *thread;
  int pipefd[2], out_fd = tmp_fd (), err_fd = tmp_fd (), wstatus = 0;
  struct rusage usage;
  GPid pid;

  g_strv_builder_add (argv_b, prog);
  g_strv_builder_addv (argv_b, (const char **) args);
  argv = g_strv_builder_end (argv_b);
  g_strv_builder_add_many (env_b, "LC_ALL=C", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                                              "/usr/bin:/sbin:/bin",
                           "HOME=/root", NULL);
  g_strv_builder_addv (env_b, (const char **) env);
  envp = g_strv_builder_end (env_b);

  g_assert_cmpint (pipe (pipefd), ==, 0);
  g_spawn_async_with_pipes_and_fds (NULL, (const char *const *) argv,
                                    (const char *const *) envp, G_SPAWN_DO_NOT_REAP_CHILD,
                                    NULL, NULL, pipefd[0], out_fd, err_fd, NULL, NULL, 0,
                                    &pid, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  close (pipefd[0]);
  feeder.fd = pipefd[1];
  thread = g_thread_new ("feeder", feed, &feeder);
  g_assert_cmpint (wait4 (pid, &wstatus, 0, &usage), ==, pid);
  g_thread_join (thread);
  g_spawn_close_pid (pid);

  g_assert_true (WIFEXITED (wstatus));
  res->status = WEXITSTATUS (wstatus);
  res->cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000.0 +
                (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000.0;
  res->out = read_fd_all (out_fd);
  res->err = read_fd_all (err_fd);
  close (out_fd);
  close (err_fd);
}

static char *
replace_all (const char *s, const char *from, const char *to)
{
  g_auto (GStrv) parts = NULL;

  if (from == NULL || *from == '\0')
    return g_strdup (s);
  parts = g_strsplit (s, from, -1);
  return g_strjoinv (to, parts);
}

static void
run_hook (const char *const *args, const char *input, gsize len, const char *const *env,
          HookResult *res)
{
  run_prog (g_getenv ("VPA_HOOK_BIN"), args, input, len, env, res);
}

/* Compares with the expected file, or rewrites it when regenerating. */
static void
compare_golden (const char *path, const char *actual)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *expected = NULL;

  if (g_strcmp0 (g_getenv ("VPA_TEST_REGENERATE"), "1") == 0)
    {
      if (*actual == '\0')
        {
          g_unlink (path);
        }
      else
        {
          g_assert_true (g_file_set_contents (path, actual, -1, &error));
        }
      g_assert_no_error (error);
      return;
    }
  if (!g_file_get_contents (path, &expected, NULL, NULL))
    expected = g_strdup ("");
  if (g_strcmp0 (expected, actual) != 0)
    g_test_message ("%s differs; VPA_TEST_REGENERATE=1 rewrites it", path);
  g_assert_cmpstr (actual, ==, expected);
}

typedef struct {
  char *name;
  char *path; /* the .case file */
} HookCase;

static void
hook_case_free (gpointer data)
{
  HookCase *c = data;
  g_free (c->name);
  g_free (c->path);
  g_free (c);
}

/* Where a case's relative paths start: the case's directory, or
 * data/hook for a case in the former keys. */
static const char *
case_base (GKeyFile *kf)
{
  return g_key_file_has_key (kf, "case", "command", NULL) ? "cases" : ".";
}

static char *
load_config (GKeyFile *kf, const char *sysfs, const char *state, GError **error)
{
  g_autofree char *rel = g_key_file_get_string (kf, "case", "config", NULL);
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "hook", "cases",
                                            "../configs/two-node.conf", NULL);
  g_autofree char *text = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL, *out = NULL;
  int fd;

  if (rel != NULL)
    {
      g_free (path);
      path = g_build_filename (VPA_TEST_DATA, "hook", case_base (kf), rel, NULL);
    }

  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  t1 = replace_all (text, "@DATA@", VPA_TEST_DATA);
  t2 = replace_all (t1, "@SYSFS@", sysfs ? sysfs : "/nonexistent");
  t3 = replace_all (t2, "@STATE@", state ? state : "/nonexistent");
  /* A configuration without [claims] would read libvirt's own state
   * directories, where the libvirtd suites' domains may hold the sample
   * hosts' devices while this test runs: the cases read none. */
  if (strstr (t3, "[claims]") == NULL)
    {
      char *with = g_strconcat (t3, "\n[claims]\nstate-dirs=/nonexistent\n", NULL);

      g_free (t3);
      t3 = with;
    }
  if ((fd = g_file_open_tmp ("vpa-hook-XXXXXX.conf", &out, error)) < 0)
    return NULL;
  close (fd);
  if (!g_file_set_contents (out, t3, -1, error))
    return NULL;
  return g_steal_pointer (&out);
}

/* state/reservations after a run, each one-time-use record's time as
 * @NOW@ (the hook writes the time of the start); "" when absent. */
static char *
read_reservations (const char *state)
{
  g_autofree char *path = g_build_filename (state, "reservations", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GRegex) re = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return g_strdup ("");
  re = g_regex_new ("^(\\S+ one-time-use )[0-9]+ ", G_REGEX_MULTILINE, 0, NULL);
  return g_regex_replace (re, text, -1, 0, "\\1@NOW@ ", 0, NULL);
}

/* reservations=REL: the case's reservations file in state. */
static void
copy_reservations (GKeyFile *kf, const char *state)
{
  g_autofree char *rel = g_key_file_get_string (kf, "case", "reservations", NULL);
  g_autofree char *src = NULL, *text = NULL, *dst = NULL;
  gsize len = 0;

  if (rel == NULL || g_str_equal (rel, "none"))
    return;
  src = g_build_filename (VPA_TEST_DATA, "hook", "cases", rel, NULL);
  dst = g_build_filename (state, "reservations", NULL);
  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  g_assert_true (g_file_set_contents (dst, text, (gssize) len, NULL));
}

static void
test_case (gconstpointer data)
{
  const HookCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *command = NULL, *stdin_rel = NULL, *config = NULL;
  g_autofree char *input = NULL, *base = NULL, *golden = NULL;
  const char *sysfs = NULL;
  g_autofree char *env_config = NULL, *out = NULL, *err = NULL;
  g_autofree char *tmp1 = NULL, *tmp2 = NULL, *tmp3 = NULL, *state_spec = NULL;
  g_autofree char *state = NULL;
  g_auto (GStrv) args = NULL;
  g_auto (HookResult) res = { 0 };
  gsize len = 0;
  guint64 bytes;
  gint vfs;

  g_assert_true (g_key_file_load_from_file (kf, c->path, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  command = g_key_file_get_string (kf, "case", "command", NULL);
  if (command == NULL)
    {
      g_autofree char *words = g_key_file_get_string (kf, "case", "args", &error);
      g_assert_no_error (error);
      command = g_strconcat ("virt-pci-affinity-hook", *words != '\0' ? " " : "", words, NULL);
    }
  g_assert_true (g_str_has_prefix (command, "virt-pci-affinity-hook"));
  args = strchr (command, ' ') != NULL ? g_strsplit (strchr (command, ' ') + 1, " ", -1)
                                       : g_new0 (char *, 1);

  stdin_rel = g_key_file_get_string (kf, "case", "stdin", NULL);
  bytes = g_key_file_get_uint64 (kf, "case", "stdin-bytes", NULL);
  if (stdin_rel != NULL)
    {
      g_autofree char *p = g_build_filename (VPA_TEST_DATA, "hook", case_base (kf), stdin_rel,
                                             NULL);
      g_autofree char *doc = NULL;
      gsize doc_len = 0, pad = g_key_file_get_uint64 (kf, "case", "pad", NULL);

      gsize comment = g_key_file_get_uint64 (kf, "case", "comment-bytes", NULL);
      const char *tag_end;
      gsize head;

      g_assert_true (g_file_get_contents (p, &doc, &doc_len, &error));
      g_assert_no_error (error);
      tag_end = strchr (doc, '>');
      head = comment > 0 && tag_end != NULL ? (gsize) (tag_end + 1 - doc) : doc_len;
      len = pad + doc_len + (comment > 0 ? comment + 7 : 0);
      input = g_malloc (len);
      memset (input, ' ', pad);
      memcpy (input + pad, doc, head);
      if (comment > 0)
        {
          memcpy (input + pad + head, "<!--", 4);
          memset (input + pad + head + 4, 'x', comment);
          memcpy (input + pad + head + 4 + comment, "-->", 3);
        }
      memcpy (input + len - (doc_len - head), doc + head, doc_len - head);
    }
  else if (bytes > 0)
    {
      input = g_malloc (bytes);
      memset (input, ' ', bytes);
      len = bytes;
    }

  if ((vfs = g_key_file_get_integer (kf, "case", "sysfs", NULL)) > 0)
    {
      sysfs = shared_sysfs_tree ((guint) vfs,
                                 g_key_file_get_boolean (kf, "case", "sysfs-iommu", NULL));
    }
  if ((state_spec = g_key_file_get_string (kf, "case", "state", NULL)) != NULL)
    state = make_state_dir (state_spec);
  if (g_key_file_has_key (kf, "case", "reservations", NULL))
    {
      if (state == NULL)
        state = g_dir_make_tmp ("vpa-hook-state-XXXXXX", NULL);
      copy_reservations (kf, state);
    }
  config = load_config (kf, sysfs, state, &error);
  g_assert_no_error (error);
  env_config = g_strconcat ("VPA_CONFIG=", config, NULL);
  {
    const char *env[] = { env_config, NULL };
    run_hook ((const char *const *) args, input, len, env, &res);
  }
  g_unlink (config);
  base = g_strndup (c->path, strlen (c->path) - strlen (".case"));
  if (g_key_file_has_key (kf, "case", "reservations", NULL))
    {
      g_autofree char *after = read_reservations (state);
      g_autofree char *want = g_strconcat (base, ".reservations", NULL);
      compare_golden (want, after);
    }
  if (state != NULL)
    remove_state_dir (state);

  /* Paths differ between machines: name them by role. */
  tmp1 = replace_all (res.err, config, "@CONFIG@");
  tmp2 = sysfs ? replace_all (tmp1, sysfs, "@SYSFS@") : g_strdup (tmp1);
  tmp3 = state ? replace_all (tmp2, state, "@STATE@") : g_strdup (tmp2);
  err = replace_all (tmp3, VPA_TEST_DATA, "@DATA@");
  out = g_strdup (res.out);

  golden = g_strconcat (base, ".stderr", NULL);
  compare_golden (golden, err);
  g_free (golden);
  golden = g_strconcat (base, ".stdout", NULL);
  compare_golden (golden, out);
  g_assert_cmpint (res.status, ==,
                   g_key_file_get_integer (kf, "case",
                                           g_key_file_has_key (kf, "case", "status", NULL)
                                             ? "status"
                                             : "exit",
                                           NULL));
  /* Fail closed: never a partial document on stdout. */
  if (res.status != 0)
    g_assert_cmpstr (res.out, ==, "");
}

/* The hook links as the build chose (VPA_HOOK_MODULE_LINK, from
 * -Dhook_module_link): statically, GLib, libxml2 and ICU are not loaded
 * at run time, which is what keeps a check within its budget; never
 * libvirt. */
static void
test_hook_links (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL, *all = NULL;
  const char *link = g_getenv ("VPA_HOOK_MODULE_LINK");
  const char *argv[] = { "ldd", g_getenv ("VPA_HOOK_BIN"), NULL };
  gint status = 0;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                     &status, &error))
    {
      g_test_skip (error->message);
      return;
    }
  all = g_strconcat (out, err, NULL);
  g_assert_null (strstr (all, "libvirt"));
  if (link == NULL || g_strcmp0 (link, "shared") == 0)
    return;
  g_assert_null (strstr (all, "libglib"));
  g_assert_null (strstr (all, "libxml2"));
  g_assert_null (strstr (all, "libicu"));
  /* ldd says either, depending on the glibc. */
  if (g_strcmp0 (link, "static") == 0)
    {
      g_assert_true (strstr (all, "statically linked") != NULL ||
                     strstr (all, "not a dynamic executable") != NULL);
    }
  else
    {
      g_assert_nonnull (strstr (all, "libc.so"));
    }
}

/* A domain with n ports placed on the first VFs of the generated sysfs
 * tree's node-0 PF, policy required. */
static char *
perf_domain (guint n)
{
  g_autoptr (GString) md = g_string_new (NULL), devs = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      g_string_append_printf (md, "<vpa:port device='ua-p%u' physnet='physnet1' "
                                  "policy='required'/>",
                              i);
      g_string_append_printf (devs, "<interface type='hostdev' managed='yes'><source>"
                                    "<address type='pci' domain='0x0000' bus='0x19' slot='0x00' "
                                    "function='0x%x'/></source><alias name='ua-p%u'/></interface>",
                              i, i);
    }
  return g_strdup_printf ("<domain type='kvm'><name>perf</name><metadata><vpa:affinity "
                          "xmlns:vpa='http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'>"
                          "%s</vpa:affinity></metadata><memory unit='KiB'>1048576</memory>"
                          "<vcpu>2</vcpu><numatune><memory nodeset='0'/></numatune><os><type "
                          "arch='x86_64' machine='pc'>hvm</type></os><cpu><numa><cell id='0' "
                          "cpus='0-1' memory='1048576' unit='KiB'/></numa></cpu><devices>%s"
                          "</devices></domain>",
                          md->str, devs->str);
}

typedef struct {
  const char *prog;
  const char *const *args;
  const char *input;
  GArray *cpu; /* gdouble ms per run */
} PerfRun;

/* Runs every program in turn, runs times, so that the load of the
 * machine affects all alike; records each run's CPU time (user +
 * system: wall time on a shared machine measures the neighbours). */
static void
time_runs (PerfRun *runs, guint n_runs, const char *const *env, guint runs_each)
{
  for (guint k = 0; k < runs_each; k++)
    {
      for (guint i = 0; i < n_runs; i++)
        {
          g_auto (HookResult) res = { 0 };

          run_prog (runs[i].prog, runs[i].args, runs[i].input, strlen (runs[i].input), env, &res);
          if (res.status != 0)
            g_error ("%s exited %d: %s", runs[i].prog, res.status, res.err);
          g_array_append_val (runs[i].cpu, res.cpu_ms);
        }
    }
}

static gdouble
median (GArray *a)
{
  g_array_sort (a, (GCompareFunc) vpa_test_double_cmp);
  return g_array_index (a, gdouble, a->len / 2);
}

/* Quick figures (-m perf): prepare begin of a domain with 4 ports on a
 * 2048-VF sysfs tree and of a domain without our metadata, against a
 * trivial program reading stdin (cat). */
static void
test_perf (void)
{
  g_autoptr (GError) error = NULL;
  const char *root = shared_sysfs_tree (2048, FALSE);
  g_autofree char *conf = NULL, *conf_text = NULL, *env_config = NULL;
  g_autofree char *dom = perf_domain (4), *plain = NULL, *plain_path = NULL;
  const char *args[] = { "perf", "prepare", "begin", "-", NULL };
  const char *no_args[] = { NULL };
  gdouble t_cat, t_plain, t_ports;
  int fd;

  g_assert_no_error (error);
  conf_text = g_strdup_printf ("[inventory]\nsource=sysfs:%s\n[device-spec physnet1]\n"
                               "vendor-id=8086\nproduct-id=154c\nphysical-network=physnet1\n"
                               "[claims]\nstate-dirs=/nonexistent\n",
                               root);
  fd = g_file_open_tmp ("vpa-hook-perf-XXXXXX.conf", &conf, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (conf, conf_text, -1, &error));
  plain_path = g_build_filename (VPA_TEST_DATA, "hook", "domains", "plain.xml", NULL);
  g_assert_true (g_file_get_contents (plain_path, &plain, NULL, &error));
  env_config = g_strconcat ("VPA_CONFIG=", conf, NULL);
  {
    const char *env[] = { env_config, NULL };
    PerfRun runs[] = {
      { "/bin/cat", no_args, plain, g_array_new (FALSE, FALSE, sizeof (gdouble)) },
      { g_getenv ("VPA_HOOK_BIN"), args, plain, g_array_new (FALSE, FALSE, sizeof (gdouble)) },
      { g_getenv ("VPA_HOOK_BIN"), args, dom, g_array_new (FALSE, FALSE, sizeof (gdouble)) },
    };

    time_runs (runs, G_N_ELEMENTS (runs), env, 40);
    t_cat = median (runs[0].cpu);
    t_plain = median (runs[1].cpu);
    t_ports = median (runs[2].cpu);
    for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
      g_array_unref (runs[i].cpu);
  }
  g_test_message ("median CPU time: cat %.2f ms, hook (no metadata) %.2f ms (%.2fx), "
                  "hook (4 ports, 2048 VFs) %.2f ms (%.2fx)",
                  t_cat, t_plain, t_plain / t_cat, t_ports, t_ports / t_cat);
  g_test_minimized_result (t_ports / 1000.0, "prepare begin, 4 ports, 2048 VFs");
  g_unlink (conf);
  /* Figures only: the targets are judged by the benchmark (bench/run),
   * never by a timed test. */
  g_test_message ("targets: no metadata <= 1.5x (%s), 4 ports <= 3x (%s)",
                  t_plain <= 1.5 * t_cat ? "met" : "not met",
                  t_ports <= 3.0 * t_cat ? "met" : "not met");
}

/* vpa_hook_run() in-process, as the hook's main() calls it: the cases
 * it answers before any configuration is read (a broken VPA_CONFIG is
 * then never noticed) and the ones it does not. */
static void
test_run_in_process (void)
{
  g_autofree char *broken = g_build_filename (VPA_TEST_DATA, "hook", "configs", "broken.conf",
                                              NULL);
  char *usage[] = { (char *) "hook", (char *) "guest", (char *) "prepare", NULL };
  char *prepare[] = { (char *) "hook", (char *) "guest", (char *) "prepare", (char *) "begin",
                      (char *) "-", NULL };
  char *started[] = { (char *) "hook", (char *) "guest", (char *) "started", (char *) "begin",
                      (char *) "-", NULL };
  const char *plain = "<domain><name>guest</name><devices><disk/></devices></domain>";
  const char *hostdev = "<domain><name>guest</name><devices><hostdev mode='subsystem' "
                        "type='pci'><source><address domain='0' bus='0x3d' slot='0' "
                        "function='0'/></source></hostdev></devices></domain>";

  g_setenv ("VPA_CONFIG", broken, TRUE);
  g_assert_cmpint (vpa_hook_run (usage, NULL, 0), ==, 2);
  g_assert_cmpint (vpa_hook_run (started, hostdev, strlen (hostdev)), ==, 0);
  g_assert_cmpint (vpa_hook_run (prepare, NULL, 0), ==, 0);
  g_assert_cmpint (vpa_hook_run (prepare, plain, strlen (plain)), ==, 0);
  /* A PCI device: the configuration is read, and it does not parse. */
  g_assert_cmpint (vpa_hook_run (prepare, hostdev, strlen (hostdev)), ==, 1);
  g_unsetenv ("VPA_CONFIG");
}

/* Which devices a running QEMU domain may hold, from sysfs: only a
 * device in an IOMMU group bound to a driver that is not a VFIO one is
 * ruled out; whatever tells nothing keeps it a candidate. */
static void
test_may_be_assigned (void)
{
  static const struct {
    gint group;
    const char *driver;
    gboolean may;
  } cases[] = {
    { 7, "iavf", FALSE },
    { 7, "mlx5_core", FALSE },
    { 7, "vfio-pci", TRUE },
    { 7, "mlx5_vfio_pci", TRUE },
    { 7, "pci-stub", TRUE },
    { 7, NULL, TRUE },    /* unbound */
    { -1, "iavf", TRUE }, /* no IOMMU group: sysfs tells nothing */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (VpaDevice) dev = vpa_device_new ();

      dev->iommu_group = cases[i].group;
      dev->driver = g_strdup (cases[i].driver);
      g_assert_cmpint (vpa_hook_claims_may_be_assigned (dev), ==, cases[i].may);
    }
}

static void
add_cases (void)
{
  g_autofree char *dir = g_build_filename (VPA_TEST_DATA, "hook", "cases", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;

  g_assert_no_error (error);
  while ((entry = g_dir_read_name (d)) != NULL)
    {
      if (g_str_has_suffix (entry, ".case"))
        g_ptr_array_add (names, g_strdup (entry));
    }
  g_ptr_array_sort (names, vpa_test_name_cmp);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      HookCase *c = g_new0 (HookCase, 1);
      g_autofree char *testpath = NULL;

      c->name = g_strndup (name, strlen (name) - strlen (".case"));
      c->path = g_build_filename (dir, name, NULL);
      testpath = g_strconcat ("/hook/case/", c->name, NULL);
      g_test_add_data_func_full (testpath, c, test_case, hook_case_free);
    }
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  /* Report every case that differs, not only the first. */
  g_test_set_nonfatal_assertions ();
  /* The hook may exit without reading stdin, as libvirt allows. */
  signal (SIGPIPE, SIG_IGN);
  if (g_getenv ("VPA_HOOK_BIN") == NULL)
    g_error ("VPA_HOOK_BIN must name the built hook");

  g_test_add_func ("/hook/links", test_hook_links);
  g_test_add_func ("/hook/run-in-process", test_run_in_process);
  g_test_add_func ("/hook/may-be-assigned", test_may_be_assigned);
  add_cases ();
  if (g_test_perf ())
    g_test_add_func ("/hook/perf", test_perf);
  ret = g_test_run ();
  vpa_test_sysfs_remove (sysfs_tree);
  vpa_test_sysfs_remove (sysfs_iommu_tree);
  g_free (sysfs_tree);
  g_free (sysfs_iommu_tree);
  return ret;
}
