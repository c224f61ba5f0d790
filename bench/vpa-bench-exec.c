/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * vpa-bench-exec: runs programs the way libvirt runs a hook, many times,
 * and prints the wall time and peak RSS of each run as JSON: fork +
 * execve with only the environment given, the contents of a file written
 * to its stdin through a pipe (as virCommand does), stdout discarded,
 * until the child has exited (wait4 gives its rusage).
 *
 *   vpa-bench-exec SPEC.ini
 *
 * The spec (GKeyFile) names the commands; they run interleaved, round
 * after round, so that a change in the machine's load between rounds
 * touches all of them alike and their ratios stay meaningful:
 *
 *   [bench]
 *   runs=11
 *   warmup=1
 *   environment=LC_ALL=C;PATH=/usr/bin:/bin;HOME=/
 *
 *   [command NAME]
 *   argv=/usr/bin/xmllint;--noout;/tmp/host.xml
 *   stdin=/tmp/domain.xml        (optional; else /dev/null)
 *   environment=VPA_CONFIG=/tmp/host.conf   (optional, added)
 *   status=0                     (optional; the expected exit status)
 *
 * A run whose exit status is not the expected one stops the benchmark
 * with the child's stderr, so a broken input never yields a figure.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

typedef struct {
  char *name;
  GStrv argv;
  GStrv envp;
  char *input; /* NULL: stdin is /dev/null */
  gsize input_len;
  int expected;
  GArray *wall_ns;    /* gint64 per run */
  GArray *maxrss_kib; /* glong per run */
} BenchCommand;

static void
bench_command_free (BenchCommand *cmd)
{
  g_free (cmd->name);
  g_strfreev (cmd->argv);
  g_strfreev (cmd->envp);
  g_free (cmd->input);
  g_array_unref (cmd->wall_ns);
  g_array_unref (cmd->maxrss_kib);
  g_free (cmd);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (BenchCommand, bench_command_free)

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static void
child (const BenchCommand *cmd, int in_fd, int err_fd)
{
  int null_fd = open ("/dev/null", O_RDWR);

  if (null_fd < 0 || dup2 (in_fd >= 0 ? in_fd : null_fd, 0) < 0 ||
      dup2 (null_fd, 1) < 0 || dup2 (err_fd, 2) < 0)
    _exit (126);
  execve (cmd->argv[0], cmd->argv, cmd->envp);
  _exit (127);
}

/* Writes the whole input, tolerating a child that exits without reading
 * it (SIGPIPE is ignored: EPIPE ends the write). */
static void
feed (int fd, const char *buf, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      buf += n;
      len -= (gsize) n;
    }
}

/* One run: its wall time in ns and peak RSS in KiB; FALSE (with the
 * child's stderr printed) when it fails. */
static gboolean
run_once (const BenchCommand *cmd, gint64 *wall_ns, glong *maxrss_kib)
{
  FILE *err = tmpfile ();
  int pipe_fd[2] = { -1, -1 };
  struct rusage ru;
  int status = 0;
  gint64 t0;
  pid_t pid;

  if (err == NULL || (cmd->input != NULL && pipe (pipe_fd) < 0))
    return FALSE;
  t0 = now_ns ();
  pid = fork ();
  if (pid < 0)
    return FALSE;
  if (pid == 0)
    {
      if (pipe_fd[1] >= 0)
        close (pipe_fd[1]);
      child (cmd, pipe_fd[0], fileno (err));
    }
  if (pipe_fd[0] >= 0)
    {
      close (pipe_fd[0]);
      feed (pipe_fd[1], cmd->input, cmd->input_len);
      close (pipe_fd[1]);
    }
  while (wait4 (pid, &status, 0, &ru) < 0)
    {
      if (errno != EINTR)
        return FALSE;
    }
  *wall_ns = now_ns () - t0;
  *maxrss_kib = ru.ru_maxrss;

  if (!WIFEXITED (status) || WEXITSTATUS (status) != cmd->expected)
    {
      char line[4096];

      fprintf (stderr, "vpa-bench-exec: %s (%s): exit status %d, not %d\n", cmd->name,
               cmd->argv[0],
               WIFEXITED (status) ? WEXITSTATUS (status) : -1, cmd->expected);
      rewind (err);
      while (fgets (line, sizeof line, err) != NULL)
        fputs (line, stderr);
      fclose (err);
      return FALSE;
    }
  fclose (err);
  return TRUE;
}

static BenchCommand *
command_load (GKeyFile *spec, const char *group, GStrv base_env, GError **error)
{
  g_autoptr (BenchCommand) cmd = g_new0 (BenchCommand, 1);
  g_autoptr (GStrvBuilder) env = g_strv_builder_new ();
  g_auto (GStrv) extra = NULL;
  g_autofree char *input = NULL;

  cmd->name = g_strdup (group + strlen ("command "));
  cmd->wall_ns = g_array_new (FALSE, FALSE, sizeof (gint64));
  cmd->maxrss_kib = g_array_new (FALSE, FALSE, sizeof (glong));
  if ((cmd->argv = g_key_file_get_string_list (spec, group, "argv", NULL, error)) == NULL)
    return NULL;
  if (g_key_file_has_key (spec, group, "status", NULL))
    cmd->expected = g_key_file_get_integer (spec, group, "status", NULL);
  input = g_key_file_get_string (spec, group, "stdin", NULL);
  if (input != NULL && !g_file_get_contents (input, &cmd->input, &cmd->input_len, error))
    return NULL;
  g_strv_builder_addv (env, (const char **) base_env);
  extra = g_key_file_get_string_list (spec, group, "environment", NULL, NULL);
  if (extra != NULL)
    g_strv_builder_addv (env, (const char **) extra);
  cmd->envp = g_strv_builder_end (env);
  return g_steal_pointer (&cmd);
}

static void
print_results (GPtrArray *cmds)
{
  printf ("{");
  for (guint c = 0; c < cmds->len; c++)
    {
      const BenchCommand *cmd = g_ptr_array_index (cmds, c);

      printf ("%s\n \"%s\": {\"wall_ns\": [", c > 0 ? "," : "", cmd->name);
      for (guint i = 0; i < cmd->wall_ns->len; i++)
        printf ("%s%" G_GINT64_FORMAT, i > 0 ? "," : "", g_array_index (cmd->wall_ns, gint64, i));
      printf ("], \"maxrss_kib\": [");
      for (guint i = 0; i < cmd->maxrss_kib->len; i++)
        printf ("%s%ld", i > 0 ? "," : "", g_array_index (cmd->maxrss_kib, glong, i));
      printf ("]}");
    }
  printf ("\n}\n");
}

int
main (int argc, char **argv)
{
  g_autoptr (GKeyFile) spec = g_key_file_new ();
  g_autoptr (GPtrArray) cmds = g_ptr_array_new_with_free_func ((GDestroyNotify) bench_command_free);
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) groups = NULL;
  g_auto (GStrv) base_env = NULL;
  guint runs, warmup;

  if (argc != 2)
    {
      fprintf (stderr, "usage: vpa-bench-exec SPEC.ini\n");
      return 2;
    }
  if (!g_key_file_load_from_file (spec, argv[1], G_KEY_FILE_NONE, &error))
    {
      fprintf (stderr, "vpa-bench-exec: %s: %s\n", argv[1], error->message);
      return 2;
    }
  runs = (guint) MAX (1, g_key_file_get_integer (spec, "bench", "runs", NULL));
  warmup = (guint) g_key_file_get_integer (spec, "bench", "warmup", NULL);
  base_env = g_key_file_get_string_list (spec, "bench", "environment", NULL, NULL);
  if (base_env == NULL)
    base_env = g_new0 (char *, 1);
  groups = g_key_file_get_groups (spec, NULL);
  for (guint g = 0; groups[g] != NULL; g++)
    {
      BenchCommand *cmd;

      if (!g_str_has_prefix (groups[g], "command "))
        continue;
      if ((cmd = command_load (spec, groups[g], base_env, &error)) == NULL)
        {
          fprintf (stderr, "vpa-bench-exec: %s: [%s]: %s\n", argv[1], groups[g], error->message);
          return 2;
        }
      g_ptr_array_add (cmds, cmd);
    }
  signal (SIGPIPE, SIG_IGN);

  for (guint round = 0; round < warmup + runs; round++)
    {
      for (guint c = 0; c < cmds->len; c++)
        {
          BenchCommand *cmd = g_ptr_array_index (cmds, c);
          gint64 wall;
          glong rss;

          if (!run_once (cmd, &wall, &rss))
            return 1;
          if (round < warmup)
            continue;
          g_array_append_val (cmd->wall_ns, wall);
          g_array_append_val (cmd->maxrss_kib, rss);
        }
    }
  print_results (cmds);
  return 0;
}
