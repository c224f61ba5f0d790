/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The bad-input corpus (every directory of data/bad-input): each case runs the built CLI
 * or hook on a bad input and must exit with the expected status, print
 * nothing on stdout and exactly the expected line on stderr. A case
 * directory holds a GKeyFile named "case":
 *
 *   [case]
 *   # why the input is bad; what the user must be told
 *   command=virt-pci-affinity place --inventory @DATA@/hosts/x.xml @CASE@/domain.xml
 *   stdin=domain.xml            # optional: a file of the case (or an
 *                               # absolute path, e.g. /dev/zero) on stdin
 *   env=VPA_CONFIG=@CASE@/c.conf  # optional: NAME=VALUE;NAME=VALUE
 *   status=2
 *   stderr=virt-pci-affinity: @CASE@/domain.xml: ...   # a glob (* and ?)
 *   multiline=false             # optional: true allows lines after it
 *   unchanged=@CASE@/host.xml   # optional: files that must be untouched
 *   stdout=report.txt           # optional: a file of the case holding the
 *                               # exact stdout (@CASE@/@DATA@ expanded); only
 *                               # `check`, whose report is its answer,
 *                               # or a command that succeeds
 *
 * @CASE@ is the case directory, @DATA@ the data directory, @BUILD@ the
 * build directory. A command
 * whose binary is not built is skipped, saying so. VPA_TEST_WRAPPER (set
 * by the valgrind test setup) is prepended to every command.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "vpa-types.h"

typedef struct {
  char *name;
  char *dir;
} BadCase;

static void
bad_case_free (gpointer data)
{
  BadCase *c = data;
  g_free (c->name);
  g_free (c->dir);
  g_free (c);
}

static char *
expand (const char *s, const char *dir)
{
  g_autoptr (GString) out = g_string_new (s);

  g_string_replace (out, "@CASE@", dir, 0);
  g_string_replace (out, "@DATA@", VPA_TEST_DATA, 0);
  if (g_getenv ("G_TEST_BUILDDIR") != NULL)
    {
      g_autofree char *build = g_path_get_dirname (g_getenv ("G_TEST_BUILDDIR"));
      g_string_replace (out, "@BUILD@", build, 0);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* build/hooks/NAME, from the tests' build directory. */
static char *
binary_path (const char *name)
{
  const char *builddir = g_getenv ("G_TEST_BUILDDIR");

  if (builddir == NULL)
    return NULL;
  return g_build_filename (builddir, "..", "hooks", name, NULL);
}

static GStrv
case_env (GKeyFile *kf, const char *dir)
{
  g_auto (GStrv) env = g_get_environ ();
  g_autofree char *spec = g_key_file_get_string (kf, "case", "env", NULL);
  g_auto (GStrv) items = NULL;

  /* Nothing from the caller's shell may change what the binary reads. */
  env = g_environ_unsetenv (g_steal_pointer (&env), "LIBVIRT_DEFAULT_URI");
  env = g_environ_unsetenv (g_steal_pointer (&env), "VPA_CONFIG");
  env = g_environ_setenv (g_steal_pointer (&env), "LC_ALL", "C", TRUE);
  if (spec == NULL)
    return g_steal_pointer (&env);
  items = g_strsplit (spec, ";", -1);
  for (guint i = 0; items[i] != NULL; i++)
    {
      g_autofree char *item = expand (g_strstrip (items[i]), dir);
      char *eq = strchr (item, '=');

      if (*item == '\0')
        continue;
      if (eq == NULL)
        {
          g_test_fail_printf ("env: '%s' is not NAME=VALUE", item);
          continue;
        }
      *eq = '\0';
      env = g_environ_setenv (g_steal_pointer (&env), item, eq + 1, TRUE);
    }
  return g_steal_pointer (&env);
}

static GStrv
case_argv (const char *command, const char *dir, char **skip_reason)
{
  g_autofree char *expanded = expand (command, dir);
  g_auto (GStrv) argv = NULL;
  g_autoptr (GStrvBuilder) full = g_strv_builder_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *binary = NULL;
  const char *wrapper = g_getenv ("VPA_TEST_WRAPPER");

  g_assert_true (g_shell_parse_argv (expanded, NULL, &argv, &error));
  g_assert_no_error (error);
  binary = binary_path (argv[0]);
  if (binary == NULL || !g_file_test (binary, G_FILE_TEST_IS_EXECUTABLE))
    {
      *skip_reason = g_strdup_printf ("%s is not built yet (hooks/%s)", argv[0], argv[0]);
      return NULL;
    }
  if (wrapper != NULL && *wrapper != '\0')
    {
      g_auto (GStrv) wargv = NULL;
      g_assert_true (g_shell_parse_argv (wrapper, NULL, &wargv, NULL));
      g_strv_builder_addv (full, (const char **) wargv);
    }
  g_strv_builder_add (full, binary);
  g_strv_builder_addv (full, (const char **) argv + 1);
  return g_strv_builder_end (full);
}

static GHashTable *
snapshot_files (GKeyFile *kf, const char *dir)
{
  g_autofree char *spec = g_key_file_get_string (kf, "case", "unchanged", NULL);
  GHashTable *files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto (GStrv) items = NULL;

  if (spec == NULL)
    return files;
  items = g_strsplit (spec, ";", -1);
  for (guint i = 0; items[i] != NULL; i++)
    {
      char *path = expand (g_strstrip (items[i]), dir);
      char *contents = NULL;

      g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      g_hash_table_insert (files, path, contents);
    }
  return files;
}

static void
check_unchanged (GHashTable *files)
{
  GHashTableIter iter;
  gpointer path, before;

  g_hash_table_iter_init (&iter, files);
  while (g_hash_table_iter_next (&iter, &path, &before))
    {
      g_autofree char *after = NULL;
      g_assert_true (g_file_get_contents (path, &after, NULL, NULL));
      g_assert_cmpstr (after, ==, before);
    }
}

/* "" unless the case names a file of its exact stdout. */
static const char *
expected_stdout (GKeyFile *kf, const char *dir)
{
  static char *expected;
  g_autofree char *name = g_key_file_get_string (kf, "case", "stdout", NULL);
  g_autofree char *path = NULL, *raw = NULL;

  g_clear_pointer (&expected, g_free);
  if (name == NULL)
    return "";
  path = g_build_filename (dir, name, NULL);
  if (!g_file_get_contents (path, &raw, NULL, NULL))
    {
      g_test_fail_printf ("%s: cannot read the expected stdout", path);
      return "";
    }
  expected = expand (raw, dir);
  return expected;
}

static int
temp_fd (char **path)
{
  g_autoptr (GError) error = NULL;
  int fd = g_file_open_tmp ("vpa-bad-input-XXXXXX", path, &error);

  g_assert_no_error (error);
  return fd;
}

static char *
slurp (const char *path)
{
  char *s = NULL;

  if (!g_file_get_contents (path, &s, NULL, NULL))
    s = g_strdup ("");
  g_unlink (path);
  return s;
}

/* Output goes to files, not pipes: a failing case under valgrind can
 * write more than a pipe holds. Exit status -1 when killed by a signal. */
static void
run (GStrv argv, GStrv env, const char *cwd, const char *stdin_path, int *exit_status,
     char **out, char **err)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out_path = NULL, *err_path = NULL;
  int in_fd = open (stdin_path, O_RDONLY | O_CLOEXEC);
  int out_fd = temp_fd (&out_path), err_fd = temp_fd (&err_path);
  GPid pid;
  int wstatus = 0;

  g_assert_cmpint (in_fd, >=, 0);
  /* SEARCH_PATH: the wrapper ("valgrind ...") is named by its name. */
  if (!g_spawn_async_with_pipes_and_fds (cwd, (const char *const *) argv,
                                         (const char *const *) env,
                                         G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH, NULL,
                                         NULL, in_fd, out_fd, err_fd, NULL, NULL, 0, &pid, NULL,
                                         NULL, NULL, &error))
    {
      g_test_fail_printf ("cannot run %s: %s", argv[0], error->message);
      close (in_fd);
      close (out_fd);
      close (err_fd);
      *exit_status = -1;
      *out = slurp (out_path);
      *err = slurp (err_path);
      return;
    }
  close (in_fd);
  close (out_fd);
  close (err_fd);
  while (waitpid (pid, &wstatus, 0) < 0)
    {
      if (errno != EINTR)
        {
          g_test_fail_printf ("waitpid %d: %s", (int) pid, g_strerror (errno));
          break;
        }
    }
  g_spawn_close_pid (pid);
  *exit_status = WIFEXITED (wstatus) ? WEXITSTATUS (wstatus) : -1;
  *out = slurp (out_path);
  *err = slurp (err_path);
}

static void
run_case (gconstpointer data)
{
  const BadCase *c = data;
  g_autofree char *case_file = g_build_filename (c->dir, "case", NULL);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *command = NULL, *stdin_name = NULL, *pattern = NULL, *raw = NULL;
  g_autofree char *skip = NULL, *out = NULL, *err = NULL, *stdin_path = NULL;
  g_auto (GStrv) argv = NULL;
  g_auto (GStrv) env = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GHashTable) before = NULL;
  gint status, exit_status;

  /* A broken case file is a failure of that case, not of the run. */
  if (!g_key_file_load_from_file (kf, case_file, G_KEY_FILE_NONE, &error) ||
      (command = g_key_file_get_string (kf, "case", "command", &error)) == NULL ||
      (raw = g_key_file_get_string (kf, "case", "stderr", &error)) == NULL)
    {
      g_test_fail_printf ("%s: %s", case_file, error->message);
      return;
    }
  status = g_key_file_get_integer (kf, "case", "status", &error);
  if (error != NULL)
    {
      g_test_fail_printf ("%s: %s", case_file, error->message);
      return;
    }
  pattern = expand (raw, c->dir);

  argv = case_argv (command, c->dir, &skip);
  if (argv == NULL)
    {
      g_test_skip (skip);
      return;
    }
  env = case_env (kf, c->dir);
  before = snapshot_files (kf, c->dir);
  stdin_name = g_key_file_get_string (kf, "case", "stdin", NULL);
  /* stdin= names a file of the case, or an absolute path (/dev/zero for
   * endless input). */
  if (stdin_name == NULL)
    {
      stdin_path = g_strdup ("/dev/null");
    }
  else if (g_path_is_absolute (stdin_name))
    {
      stdin_path = g_strdup (stdin_name);
    }
  else
    {
      stdin_path = g_build_filename (c->dir, stdin_name, NULL);
    }

  run (argv, env, c->dir, stdin_path, &exit_status, &out, &err);
  g_test_message ("%s: exit %d\nstdout: %s\nstderr: %s", c->name, exit_status, out, err);
  g_assert_cmpint (exit_status, ==, status);
  g_assert_cmpstr (out, ==, expected_stdout (kf, c->dir));
  if (*pattern == '\0')
    {
      /* stderr= empty: a command that succeeds silently */
      g_assert_cmpstr (err, ==, "");
      check_unchanged (before);
      return;
    }
  lines = g_strsplit (err, "\n", -1);
  if (lines[0] == NULL || !g_pattern_match_simple (pattern, lines[0]))
    {
      g_test_fail_printf ("stderr line\n  '%s'\ndoes not match\n  '%s'",
                          lines[0] != NULL ? lines[0] : "", pattern);
      return;
    }
  if (!g_key_file_get_boolean (kf, "case", "multiline", NULL))
    {
      /* One line, newline-terminated: what libvirt shows the user. */
      g_assert_cmpuint (g_strv_length (lines), ==, 2);
      g_assert_cmpstr (lines[1], ==, "");
    }
  check_unchanged (before);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

int
main (int argc, char **argv)
{
  g_autofree char *root = g_build_filename (VPA_TEST_DATA, "bad-input", NULL);
  g_autoptr (GDir) dir = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_test_init (&argc, &argv, NULL);
  /* Every case reports on its own line rather than the first failure
   * ending the run. */
  g_test_set_nonfatal_assertions ();
  dir = g_dir_open (root, 0, NULL);
  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      BadCase *c = g_new0 (BadCase, 1);
      g_autofree char *path = NULL;

      c->name = g_strdup (g_ptr_array_index (names, i));
      c->dir = g_build_filename (root, c->name, NULL);
      path = g_strdup_printf ("/bad-input/%s", c->name);
      g_test_add_data_func_full (path, c, run_case, bad_case_free);
    }
  return g_test_run ();
}
