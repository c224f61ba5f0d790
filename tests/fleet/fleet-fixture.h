/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A fresh fleet store per test on SQLite and on a private PostgreSQL
 * (tests/fleet/pg-start), and `fleet ARGS` run through tests/fleet/fleet-cli,
 * for every fleet test.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum { FLEET_BACKEND_SQLITE,
               FLEET_BACKEND_PG } FleetBackend;

typedef struct {
  FleetBackend backend;
  char *uri;
  char *tmpdir;
} FleetFixture;

/* Adds /PREFIX/sqlite/NAME and /PREFIX/pg/NAME. */
void fleet_fixture_add (const char *prefix, const char *name,
                        void (*fn) (FleetFixture *, gconstpointer));
/* A store on the backend outside g_test_add (one a whole program
 * shares), and its removal; FALSE when the backend is not available. */
gboolean fleet_fixture_open (FleetFixture *fx, FleetBackend backend);
void fleet_fixture_close (FleetFixture *fx);
/* TRUE (and the test skipped) when the backend is not available. */
gboolean fleet_fixture_skip (FleetFixture *fx);
/* Runs SQL on the store behind the library's back; returns what it
 * printed (one row a line, columns separated by '|'), stripped. */
char *fleet_fixture_sql (FleetFixture *fx, const char *sql);
/* Asserts that sql prints expected (as fleet_fixture_sql returns it). */
#define fleet_fixture_assert_sql(fx, sql, expected)            \
  G_STMT_START                                                 \
  {                                                            \
    g_autofree char *fleet_out_ = fleet_fixture_sql (fx, sql); \
    g_assert_cmpstr (fleet_out_, ==, expected);                \
  }                                                            \
  G_STMT_END
/* The same when the output does not matter. */
void fleet_fixture_exec (FleetFixture *fx, const char *sql);

/* Starts and stops the private PostgreSQL around g_test_run (). */
void fleet_pg_start (void);
void fleet_pg_stop (void);

/* Runs fleet-cli ARGS... (NULL-terminated); returns the exit status. */
gint fleet_fixture_cli (const char *cli, char **out, char **err, ...) G_GNUC_NULL_TERMINATED;

G_END_DECLS
