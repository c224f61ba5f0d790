/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A fleet store (docs/fleet.md): SQLite or PostgreSQL behind one table of
 * operations, opened from a STORE string, and what callers ask of it.
 */
#pragma once

#include "vpa-fleet.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* The store                                                           */
/* ------------------------------------------------------------------ */

typedef struct _VpaFleetStore VpaFleetStore;
/* One result row of VpaFleetStoreOps.statement, n columns. */
typedef void (*VpaFleetRowFunc) (const char *const *values, guint n, gpointer data);
/* One result row of VpaFleetStoreOps.each: FALSE stops the reading, with
 * error set. */
typedef gboolean (*VpaFleetEachFunc) (const char *const *values, gpointer data, GError **error);

typedef struct {
  const char *name;
  void (*close) (VpaFleetStore *store);
  /* Creates or upgrades the schema; refuses another application's or a
   * newer schema. */
  gboolean (*migrate) (VpaFleetStore *store, GError **error);
  /* Refuses a store without our schema at the current version. */
  gboolean (*check) (VpaFleetStore *store, GError **error);
  /* Replaces the host's rows, cells and traits in one transaction. */
  gboolean (*sync_host) (VpaFleetStore *store, const VpaFleetHostData *data,
                         GError **error);
  /* Pools of one host (host != NULL) or all, by one GROUP BY, ordered by
   * host, vendor, product, dev_type, numa_node (null last), tags. */
  GPtrArray *(*query_pools) (VpaFleetStore *store, const char *host,
                             GError **error);
  /* Every host by name with its cells; with_pools: also the pools of its
   * free devices, all hosts' pools loaded by one query. */
  GPtrArray *(*load_hosts) (VpaFleetStore *store, guint flags /* VpaFleetLoadFlags */,
                            GError **error);
  /* One statement with text parameters $1..$n (vpa-fleet-hosts.c): each
   * row's columns as text (NULL for NULL) to row, or with row NULL the
   * number of rows changed into *changes. */
  gboolean (*statement) (VpaFleetStore *store, const char *sql, const char *const *params,
                         guint n_params, VpaFleetRowFunc row, gpointer data,
                         gint64 *changes, GError **error);
  /* Every row of a query with text parameters $1..$n, in order: its
   * first n_columns columns as text (NULL for NULL) to fn. what names
   * the reading in an error of the store. What both backends read back
   * is read through this (vpa-fleet-rows.c). */
  gboolean (*each) (VpaFleetStore *store, const char *sql, const char *const *params,
                    guint n_params, guint n_columns, const char *what, VpaFleetEachFunc fn,
                    gpointer data, GError **error);
} VpaFleetStoreOps;

struct _VpaFleetStore {
  const VpaFleetStoreOps *ops;
  char *uri; /* for messages; any password removed */
  /* const VpaFleetQuery*: while set, load_hosts with VPA_FLEET_LOAD_POOLS
   * reads back only the rows the query can use (vpa-fleet-preselect.h). */
  gconstpointer preselect;
};

typedef enum {
  VPA_FLEET_OPEN_READ = 0,   /* the store must exist with our schema */
  VPA_FLEET_OPEN_CREATE = 1, /* create the store and migrate the schema */
} VpaFleetOpenMode;

/* STORE: a file path or sqlite:///ABS/PATH, or postgresql://... /
 * postgres://... (libpq). A malformed STORE is VPA_ERROR_INVALID; a store
 * that cannot be opened, or has a schema that is not ours or newer, is
 * VPA_ERROR_ENVIRONMENT. */
VpaFleetStore *vpa_fleet_store_open (const char *store, VpaFleetOpenMode mode,
                                     GError **error);
void vpa_fleet_store_close (VpaFleetStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaFleetStore, vpa_fleet_store_close)

gboolean vpa_fleet_store_sync_host (VpaFleetStore *store,
                                    const VpaFleetHostData *data, GError **error);
/* VpaPool* (VPA_POOL_KEYS_FLEET); host NULL for every host. */
GPtrArray *vpa_fleet_store_query_pools (VpaFleetStore *store, const char *host,
                                        GError **error);
/* VpaFleetHost*, by name. */
GPtrArray *vpa_fleet_store_load_hosts (VpaFleetStore *store, guint flags,
                                       GError **error);

/* The STORE string with a password (user:PASS@ or password=PASS) removed. */
char *vpa_fleet_store_uri_redact (const char *store);
/* message with every trace of STORE's secrets hidden: STORE itself shown
 * redacted, each password (as written and decoded) as ***. For what a
 * client library says about STORE (libpq quotes the URI or a value). */
char *vpa_fleet_store_message_redact (const char *message, const char *store);

/* Backends (vpa-fleet-sqlite.c, vpa-fleet-pg.c). */
VpaFleetStore *vpa_fleet_sqlite_open (const char *path, const char *uri,
                                      VpaFleetOpenMode mode, GError **error);
VpaFleetStore *vpa_fleet_pg_open (const char *conninfo, const char *uri,
                                  VpaFleetOpenMode mode, GError **error);

G_END_DECLS
