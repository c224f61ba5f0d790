/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Stores for the fleet tests (see fleet-fixture.h).
 */
#include "fleet-fixture.h"

#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

static char *pg_dir;      /* the private server's directory, or NULL */
static char *pg_base_uri; /* its "postgres" database */
static guint pg_databases;

/* sh -c "pg-stop DIR; rm -rf DIR", built before any signal needs it. */
static char *pg_stop_argv[6];
static const int pg_stop_signals[] = { SIGABRT, SIGTRAP, SIGSEGV, SIGBUS, SIGTERM, SIGINT };

/* A failed assertion aborts (or traps), and meson's timeout sends SIGTERM: stop the
 * server (fork, exec and wait are async-signal-safe), then die of the
 * signal as before, so that no failing run leaves a server behind. */
static void
pg_stop_on_signal (int sig)
{
  pid_t pid = fork ();

  if (pid == 0)
    {
      execv ("/bin/sh", pg_stop_argv);
      _exit (127);
    }
  if (pid > 0)
    waitpid (pid, NULL, 0);
  signal (sig, SIG_DFL);
  raise (sig);
}

static void
pg_stop_on_signals (gboolean on)
{
  for (guint i = 0; i < G_N_ELEMENTS (pg_stop_signals); i++)
    signal (pg_stop_signals[i], on ? pg_stop_on_signal : SIG_DFL);
}

gboolean
fleet_fixture_skip (FleetFixture *fx)
{
  if (fx->backend == FLEET_BACKEND_PG && pg_base_uri == NULL)
    {
      g_test_skip ("PostgreSQL server binaries not found: PostgreSQL store tests skipped");
      return TRUE;
    }
  return FALSE;
}

static char *
run_ok (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  gint status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s: %s", argv[0], err);
  return g_strstrip (g_steal_pointer (&out));
}

static void
fixture_setup (FleetFixture *fx, gconstpointer data)
{
  fx->backend = GPOINTER_TO_INT (data);
  fx->tmpdir = g_dir_make_tmp ("vpa-fleet-XXXXXX", NULL);
  g_assert_nonnull (fx->tmpdir);
  if (fx->backend == FLEET_BACKEND_SQLITE)
    {
      fx->uri = g_strdup_printf ("sqlite://%s/fleet.db", fx->tmpdir);
    }
  else if (pg_base_uri != NULL)
    {
      g_autofree char *db = g_strdup_printf ("vpa_test_%u", ++pg_databases);
      g_autofree char *sql = g_strdup_printf ("CREATE DATABASE %s", db);
      const char *argv[] = { "psql", "-q", "-v", "ON_ERROR_STOP=1", pg_base_uri, "-c", sql, NULL };

      g_free (run_ok (argv));
      fx->uri = g_strdup_printf ("postgresql:///%s?host=%s&user=vpa", db, pg_dir);
    }
}

static void
fixture_teardown (FleetFixture *fx, gconstpointer data)
{
  if (fx->tmpdir != NULL)
    {
      g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", fx->tmpdir);
      g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL);
    }
  g_free (fx->tmpdir);
  g_free (fx->uri);
}

gboolean
fleet_fixture_open (FleetFixture *fx, FleetBackend backend)
{
  memset (fx, 0, sizeof *fx);
  if (backend == FLEET_BACKEND_PG && pg_base_uri == NULL)
    return FALSE;
  fixture_setup (fx, GINT_TO_POINTER (backend));
  return TRUE;
}

void
fleet_fixture_close (FleetFixture *fx)
{
  fixture_teardown (fx, NULL);
  memset (fx, 0, sizeof *fx);
}

void
fleet_fixture_add (const char *prefix, const char *name,
                   void (*fn) (FleetFixture *, gconstpointer))
{
  static const char *const backends[] = { "sqlite", "pg" };

  for (guint b = 0; b < G_N_ELEMENTS (backends); b++)
    {
      g_autofree char *path = g_strdup_printf ("/%s/%s/%s", prefix, backends[b], name);
      g_test_add (path, FleetFixture, GINT_TO_POINTER (b), fixture_setup, fn, fixture_teardown);
    }
}

char *
fleet_fixture_sql (FleetFixture *fx, const char *sql)
{
  if (fx->backend == FLEET_BACKEND_SQLITE)
    {
      g_autofree char *path = g_build_filename (fx->tmpdir, "fleet.db", NULL);
      const char *argv[] = { "sqlite3", path, sql, NULL };
      return run_ok (argv);
    }
  else
    {
      g_autofree char *uri = g_strdup (fx->uri);
      const char *argv[] = { "psql", "-qAt", "-v", "ON_ERROR_STOP=1", uri, "-c", sql, NULL };
      return run_ok (argv);
    }
}

void
fleet_fixture_exec (FleetFixture *fx, const char *sql)
{
  g_free (fleet_fixture_sql (fx, sql));
}

void
fleet_pg_start (void)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "fleet", "pg-start", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  gint status = 0;
  const char *argv[] = { script, NULL, NULL };

  pg_dir = g_dir_make_tmp ("vpa-pg-XXXXXX", &error);
  g_assert_no_error (error);
  argv[1] = pg_dir;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error))
    g_error ("%s: %s", script, error->message);
  if (g_spawn_check_wait_status (status, NULL))
    {
      pg_base_uri = g_strstrip (g_steal_pointer (&out));
      pg_stop_argv[0] = g_strdup ("sh");
      pg_stop_argv[1] = g_strdup ("-c");
      pg_stop_argv[2] = g_strdup ("\"$0\" \"$1\"; rm -rf \"$1\"");
      pg_stop_argv[3] = g_test_build_filename (G_TEST_DIST, "fleet", "pg-stop", NULL);
      pg_stop_argv[4] = g_strdup (pg_dir);
      pg_stop_on_signals (TRUE);
    }
  else if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    {
      g_test_message ("%s", g_strstrip (err));
    }
  else
    {
      g_error ("%s failed: %s", script, err);
    }
}

void
fleet_pg_stop (void)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "fleet", "pg-stop", NULL);
  g_autofree char *rm = NULL;

  pg_stop_on_signals (FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (pg_stop_argv); i++)
    g_clear_pointer (&pg_stop_argv[i], g_free);
  if (pg_base_uri != NULL)
    {
      const char *argv[] = { script, pg_dir, NULL };
      g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                    NULL, NULL);
    }
  rm = g_strdup_printf ("rm -rf '%s'", pg_dir);
  g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL);
  g_clear_pointer (&pg_dir, g_free);
  g_clear_pointer (&pg_base_uri, g_free);
}

gint
fleet_fixture_cli (const char *cli, char **out, char **err, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *o = NULL, *e = NULL;
  gint status = 0;
  const char *arg;
  va_list ap;

  g_ptr_array_add (argv, (char *) cli);
  va_start (ap, err);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (argv, (char *) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &o, &e, &status, &error));
  g_assert_no_error (error);
  if (out != NULL)
    *out = g_steal_pointer (&o);
  if (err != NULL)
    *err = g_steal_pointer (&e);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}
