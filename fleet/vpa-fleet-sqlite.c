/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store in an SQLite file. Writers take the database lock up
 * front (BEGIN IMMEDIATE) and wait for each other through the busy
 * timeout; WAL lets readers run while a host syncs.
 */
#include "vpa-fleet-rows.h"
#include "vpa-fleet-schema.h"
#include "vpa-fleet-preselect.h"

#include <sqlite3.h>

#define BUSY_TIMEOUT_MS 60000

typedef struct {
  VpaFleetStore parent;
  sqlite3 *db;
} VpaFleetSqlite;

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

static gboolean
sql_fail (VpaFleetSqlite *self, const char *what, GError **error)
{
  int code = sqlite3_extended_errcode (self->db);

  /* A constraint violation means bad rows; anything else is the store. */
  g_set_error (error, VPA_ERROR,
               (code & 0xff) == SQLITE_CONSTRAINT ? VPA_ERROR_INVALID : VPA_ERROR_ENVIRONMENT,
               "store '%s': %s: %s", self->parent.uri, what, sqlite3_errmsg (self->db));
  return FALSE;
}

static gboolean
sql_exec (VpaFleetSqlite *self, const char *sql, GError **error)
{
  if (sqlite3_exec (self->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return sql_fail (self, sql, error);
  return TRUE;
}

static sqlite3_stmt *
sql_prepare (VpaFleetSqlite *self, const char *sql, GError **error)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      sql_fail (self, "prepare", error);
      return NULL;
    }
  return stmt;
}

/* Steps a statement that returns no rows, then resets it for reuse. */
static gboolean
sql_step_done (VpaFleetSqlite *self, sqlite3_stmt *stmt, const char *what, GError **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return sql_fail (self, what, error);
  return TRUE;
}

static void
row_texts (sqlite3_stmt *stmt, const char **v, int n)
{
  for (int i = 0; i < n; i++)
    v[i] = (const char *) sqlite3_column_text (stmt, i);
}

static void
sqlite_close (VpaFleetStore *store)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;

  sqlite3_close_v2 (self->db);
  g_free (store->uri);
  g_free (self);
}

/* What the file holds: our tables, and the schema_version row. */
static gboolean
sqlite_schema_state (VpaFleetSqlite *self, char **application, gint64 *version,
                     gboolean *has_tables, GError **error)
{
  g_autoptr (sqlite3_stmt) tables = NULL;
  g_autoptr (sqlite3_stmt) row = NULL;
  gboolean has_version = FALSE;
  int rc;

  *application = NULL;
  *version = 0;
  *has_tables = FALSE;
  tables = sql_prepare (self, "SELECT name FROM sqlite_master WHERE type = 'table'"
                              " AND name IN ('schema_version', 'hosts', 'host_cells', 'devices')",
                        error);
  if (tables == NULL)
    return FALSE;
  while ((rc = sqlite3_step (tables)) == SQLITE_ROW)
    {
      if (g_strcmp0 ((const char *) sqlite3_column_text (tables, 0), "schema_version") == 0)
        {
          has_version = TRUE;
        }
      else
        {
          *has_tables = TRUE;
        }
    }
  if (rc != SQLITE_DONE)
    return sql_fail (self, "reading the schema", error);
  if (!has_version)
    return TRUE;
  row = sql_prepare (self, "SELECT application, version FROM schema_version"
                           " ORDER BY version DESC LIMIT 1",
                     error);
  if (row == NULL)
    return FALSE;
  rc = sqlite3_step (row);
  if (rc == SQLITE_ROW)
    {
      *application = g_strdup ((const char *) sqlite3_column_text (row, 0));
      *version = sqlite3_column_int64 (row, 1);
    }
  else if (rc != SQLITE_DONE)
    return sql_fail (self, "reading schema_version", error);
  if (*application == NULL)
    *application = g_strdup ("");
  return TRUE;
}

static gboolean
sqlite_schema (VpaFleetSqlite *self, VpaFleetOpenMode mode, GError **error)
{
  g_autofree char *application = NULL;
  g_autofree char *ddl = NULL;
  g_autofree char *now = NULL;
  g_autofree char *insert = NULL;
  gint64 version;
  gboolean has_tables;
  VpaFleetSchemaAction action;

  if (!sqlite_schema_state (self, &application, &version, &has_tables, error))
    return FALSE;
  action = vpa_fleet_schema_check (
    self->parent.uri, &(VpaFleetSchemaFound){ application, version, has_tables }, mode, error);
  if (action == VPA_FLEET_SCHEMA_REFUSE || action == VPA_FLEET_SCHEMA_USE)
    return action == VPA_FLEET_SCHEMA_USE;

  if (action == VPA_FLEET_SCHEMA_CREATE)
    {
      ddl = vpa_fleet_schema_sql ("INTEGER PRIMARY KEY", "TEXT", " WITHOUT ROWID");
      if (!sql_exec (self, ddl, error))
        return FALSE;
      version = 2;
    }
  /* Every migration after the store's version, in order. */
  for (gint64 v = version + 1; v <= VPA_FLEET_SCHEMA_VERSION; v++)
    {
      g_autofree char *step = vpa_fleet_schema_migration (v, VPA_FLEET_SQL_SQLITE, "INTEGER PRIMARY KEY", "TEXT",
                                                          " WITHOUT ROWID");
      if (step == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "store '%s': no migration to schema version %" G_GINT64_FORMAT,
                       self->parent.uri, v);
          return FALSE;
        }
      if (!sql_exec (self, step, error))
        {
          g_prefix_error (error, "migrating to schema version %" G_GINT64_FORMAT ": ", v);
          return FALSE;
        }
    }
  now = vpa_fleet_now ();
  /* Constants and a timestamp: nothing to quote. */
  insert = g_strdup_printf ("INSERT INTO schema_version VALUES ('%s', %d, '%s')",
                            VPA_FLEET_APPLICATION, VPA_FLEET_SCHEMA_VERSION, now);
  return sql_exec (self, insert, error);
}

static int
journal_mode_cb (void *data, int n, char **values, char **names)
{
  gboolean *wal = data;
  (void) names;
  *wal = n > 0 && values[0] != NULL && g_ascii_strcasecmp (values[0], "wal") == 0;
  return 0;
}

/* WAL: readers do not wait for a sync; persistent in the file. Switching
 * needs the file to itself, and SQLite reports a concurrent opener as
 * busy without calling the busy handler: retry within the busy timeout. */
static gboolean
sqlite_enable_wal (VpaFleetSqlite *self, GError **error)
{
  for (guint waited = 0;; waited += 10)
    {
      gboolean wal = FALSE;
      int rc = sqlite3_exec (self->db, "PRAGMA journal_mode = WAL", journal_mode_cb, &wal, NULL);

      if (rc == SQLITE_OK && wal)
        return TRUE;
      if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED && rc != SQLITE_OK)
        break;
      if (waited >= BUSY_TIMEOUT_MS)
        break;
      g_usleep (10 * 1000);
    }
  return sql_exec (self, "PRAGMA journal_mode = WAL", error);
}

static gboolean
sqlite_migrate (VpaFleetStore *store, GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;

  if (!sqlite_enable_wal (self, error))
    return FALSE;
  /* Decide and create under the write lock: two first syncs race here. */
  if (!sql_exec (self, "BEGIN IMMEDIATE", error))
    return FALSE;
  if (!sqlite_schema (self, VPA_FLEET_OPEN_CREATE, error))
    {
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return sql_exec (self, "COMMIT", error);
}

/* A reader migrates an older store too, under the same write lock. */
static gboolean
sqlite_check (VpaFleetStore *store, GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;

  if (!sql_exec (self, "BEGIN IMMEDIATE", error))
    return FALSE;
  if (!sqlite_schema (self, VPA_FLEET_OPEN_READ, error))
    {
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return sql_exec (self, "COMMIT", error);
}

static void
bind_text_or_null (sqlite3_stmt *stmt, int i, const char *value)
{
  if (value != NULL)
    {
      sqlite3_bind_text (stmt, i, value, -1, SQLITE_TRANSIENT);
    }
  else
    {
      sqlite3_bind_null (stmt, i);
    }
}

/* Binds params to $1..$n by name (SQLite numbers named parameters by
 * first appearance). */
static void
bind_params (sqlite3_stmt *stmt, const char *const *params, guint n_params)
{
  for (guint i = 0; i < n_params; i++)
    {
      g_autofree char *name = g_strdup_printf ("$%u", i + 1);
      int index = sqlite3_bind_parameter_index (stmt, name);
      if (index > 0)
        bind_text_or_null (stmt, index, params[i]);
    }
}

static gboolean
sqlite_insert_cells (VpaFleetSqlite *self, gint64 id, const VpaFleetHostData *data,
                     GError **error)
{
  g_autoptr (sqlite3_stmt) ins = NULL;

  ins = sql_prepare (self, "INSERT INTO host_cells (host_id, node, socket, memory_kib, cpus,"
                           " pages, distances) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     error);
  if (ins == NULL)
    return FALSE;
  for (guint i = 0; i < data->cells->len; i++)
    {
      const VpaFleetCell *c = &g_array_index (data->cells, VpaFleetCell, i);
      sqlite3_bind_int64 (ins, 1, id);
      sqlite3_bind_int (ins, 2, c->node);
      if (c->socket != VPA_SOCKET_NONE)
        sqlite3_bind_int (ins, 3, c->socket);
      sqlite3_bind_int64 (ins, 4, (sqlite3_int64) c->memory_kib);
      bind_text_or_null (ins, 5, c->cpus);
      bind_text_or_null (ins, 6, c->pages);
      bind_text_or_null (ins, 7, c->distances);
      if (!sql_step_done (self, ins, "inserting host_cells", error))
        return FALSE;
    }
  g_clear_pointer (&ins, sqlite3_finalize);
  ins = sql_prepare (self, "INSERT INTO host_numa_claims (host_id, domain, running, dedicated,"
                           " memory) VALUES (?, ?, ?, ?, ?)",
                     error);
  if (ins == NULL)
    return FALSE;
  for (guint i = 0; i < data->claims->len; i++)
    {
      const VpaFleetNumaClaim *c = &g_array_index (data->claims, VpaFleetNumaClaim, i);
      sqlite3_bind_int64 (ins, 1, id);
      sqlite3_bind_text (ins, 2, c->domain, -1, SQLITE_STATIC);
      sqlite3_bind_int (ins, 3, c->running ? 1 : 0);
      sqlite3_bind_text (ins, 4, c->dedicated, -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 5, c->memory, -1, SQLITE_STATIC);
      if (!sql_step_done (self, ins, "inserting host_numa_claims", error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
sqlite_insert_networks (VpaFleetSqlite *self, gint64 id, const VpaFleetHostData *data,
                        GError **error)
{
  g_autoptr (sqlite3_stmt) ins = NULL;

  ins = sql_prepare (self, "INSERT INTO host_networks (host_id, kind, name, numa_nodes)"
                           " VALUES (?, ?, ?, ?)",
                     error);
  if (ins == NULL)
    return FALSE;
  for (guint i = 0; i < data->networks->len; i++)
    {
      const VpaFleetNetwork *n = &g_array_index (data->networks, VpaFleetNetwork, i);
      sqlite3_bind_int64 (ins, 1, id);
      sqlite3_bind_text (ins, 2, n->physnet != NULL ? "physnet" : "tunnel", -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 3, n->physnet != NULL ? n->physnet : "", -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 4, n->nodes, -1, SQLITE_STATIC);
      if (!sql_step_done (self, ins, "inserting host_networks", error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
sqlite_insert_devices (VpaFleetSqlite *self, gint64 id, const VpaFleetHostData *data,
                       GError **error)
{
  g_autoptr (sqlite3_stmt) ins = NULL;
  g_autoptr (GArray) kinds = vpa_fleet_schema_kind_ids (&self->parent, VPA_FLEET_SQL_SQLITE,
                                                        data, error);

  if (kinds == NULL)
    return FALSE;
  ins = sql_prepare (self, "INSERT INTO devices (host_id, address, vendor_id, product_id,"
                           " dev_type, numa_node, parent_addr, tags, tagset, netdev,"
                           " held_by, state, pcie_root, pcie_port, pcie_switch, kind_id)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     error);
  if (ins == NULL)
    return FALSE;
  for (guint i = 0; i < data->devices->len; i++)
    {
      const VpaFleetDevice *d = &g_array_index (data->devices, VpaFleetDevice, i);
      char addr[VPA_ADDR_BUFLEN], parent[VPA_ADDR_BUFLEN];

      sqlite3_bind_int64 (ins, 1, id);
      sqlite3_bind_text (ins, 2, vpa_addr_format (d->addr, addr), -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 3, d->vendor_id, -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 4, d->product_id, -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 5, vpa_dev_type_to_string (d->dev_type), -1, SQLITE_STATIC);
      if (d->numa_node != VPA_NUMA_NONE)
        sqlite3_bind_int (ins, 6, d->numa_node);
      bind_text_or_null (ins, 7, d->parent_addr != VPA_ADDR_NONE ? vpa_addr_format (d->parent_addr, parent) : NULL);
      sqlite3_bind_text (ins, 8, d->tags, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (ins, 9, d->tagset);
      bind_text_or_null (ins, 10, d->netdev);
      bind_text_or_null (ins, 11, d->held_by);
      sqlite3_bind_text (ins, 12, vpa_dev_state_to_string (d->state), -1, SQLITE_STATIC);
      bind_text_or_null (ins, 13, d->pcie_root);
      bind_text_or_null (ins, 14, d->pcie_port);
      bind_text_or_null (ins, 15, d->pcie_switch);
      sqlite3_bind_int64 (ins, 16, g_array_index (kinds, gint64, i));
      if (!sql_step_done (self, ins, "inserting devices", error))
        {
          g_prefix_error (error, "host '%s': device '%s': ", data->name, addr);
          return FALSE;
        }
    }
  return TRUE;
}

/* Inside the write transaction: the host's row (created on first sync)
 * and the replacement of everything it owns. */
static gboolean
sqlite_replace_host (VpaFleetSqlite *self, const VpaFleetHostData *data, GError **error)
{
  g_autoptr (sqlite3_stmt) upsert = NULL;
  g_autoptr (sqlite3_stmt) del = NULL;
  g_autofree char *traits = g_strjoinv (" ", data->traits);
  g_autofree char *now = vpa_fleet_now ();
  gint64 id;

  upsert = sql_prepare (self, "INSERT INTO hosts (name, traits, last_sync, sync_version)"
                              " VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
                              " traits = excluded.traits, last_sync = excluded.last_sync,"
                              " sync_version = excluded.sync_version RETURNING id",
                        error);
  if (upsert == NULL)
    return FALSE;
  sqlite3_bind_text (upsert, 1, data->name, -1, SQLITE_STATIC);
  sqlite3_bind_text (upsert, 2, traits, -1, SQLITE_STATIC);
  sqlite3_bind_text (upsert, 3, now, -1, SQLITE_STATIC);
  sqlite3_bind_int (upsert, 4, VPA_FLEET_SCHEMA_VERSION);
  if (sqlite3_step (upsert) != SQLITE_ROW)
    return sql_fail (self, "updating hosts", error);
  id = sqlite3_column_int64 (upsert, 0);
  if (sqlite3_step (upsert) != SQLITE_DONE)
    return sql_fail (self, "updating hosts", error);

  del = sql_prepare (self, "DELETE FROM devices WHERE host_id = ?", error);
  if (del == NULL)
    return FALSE;
  sqlite3_bind_int64 (del, 1, id);
  if (!sql_step_done (self, del, "deleting devices", error))
    return FALSE;
  g_clear_pointer (&del, sqlite3_finalize);
  del = sql_prepare (self, "DELETE FROM host_cells WHERE host_id = ?", error);
  if (del == NULL)
    return FALSE;
  sqlite3_bind_int64 (del, 1, id);
  if (!sql_step_done (self, del, "deleting host_cells", error))
    return FALSE;
  g_clear_pointer (&del, sqlite3_finalize);
  del = sql_prepare (self, "DELETE FROM host_numa_claims WHERE host_id = ?", error);
  if (del == NULL)
    return FALSE;
  sqlite3_bind_int64 (del, 1, id);
  if (!sql_step_done (self, del, "deleting host_numa_claims", error))
    return FALSE;
  g_clear_pointer (&del, sqlite3_finalize);
  del = sql_prepare (self, "DELETE FROM host_networks WHERE host_id = ?", error);
  if (del == NULL)
    return FALSE;
  sqlite3_bind_int64 (del, 1, id);
  if (!sql_step_done (self, del, "deleting host_networks", error))
    return FALSE;
  return sqlite_insert_cells (self, id, data, error) &&
         sqlite_insert_networks (self, id, data, error) &&
         sqlite_insert_devices (self, id, data, error);
}

static gboolean
sqlite_sync_host (VpaFleetStore *store, const VpaFleetHostData *data, GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;

  if (!sql_exec (self, "BEGIN IMMEDIATE", error))
    return FALSE;
  if (!sqlite_replace_host (self, data, error))
    {
      /* The previous rows stay. */
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return sql_exec (self, "COMMIT", error);
}

/* The host's id; VPA_ERROR_INVALID when the store does not know it. */
static gboolean
sqlite_host_id (VpaFleetSqlite *self, const char *host, gint64 *id, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = sql_prepare (self, "SELECT id FROM hosts WHERE name = ?", error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, host, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_DONE)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "store '%s': no host '%s' (sync it first)", self->parent.uri, host);
      return FALSE;
    }
  if (rc != SQLITE_ROW)
    return sql_fail (self, "looking up the host", error);
  *id = sqlite3_column_int64 (stmt, 0);
  return TRUE;
}

/* by_id: the rows are vpa_fleet_preselect_pools_sql's. */
static GPtrArray *
sqlite_query_pools (VpaFleetStore *store, const char *host, GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;
  gint64 id = 0;
  g_autofree char *id_text = NULL;
  const char *params[1];

  if (host != NULL && !sqlite_host_id (self, host, &id, error))
    return NULL;
  params[0] = id_text = g_strdup_printf ("%" G_GINT64_FORMAT, id);
  return vpa_fleet_rows_read_pools (store, vpa_fleet_rows_pools_sql (host != NULL), params,
                                    host != NULL ? 1 : 0, NULL, error);
}

static GPtrArray *
sqlite_load_hosts (VpaFleetStore *store, guint flags, GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;
  g_autoptr (GPtrArray) hosts =
    g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_host_free);

  /* One read transaction: hosts, cells and pools agree. */
  if (!sql_exec (self, "BEGIN", error))
    return NULL;
  if (!vpa_fleet_rows_read_hosts (store, hosts, flags, error))
    {
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return NULL;
    }
  if (!sql_exec (self, "COMMIT", error))
    return NULL;
  return g_steal_pointer (&hosts);
}

/* Parameters are named $1..$n in the SQL (bind_params). */
static gboolean
sqlite_statement (VpaFleetStore *store, const char *sql, const char *const *params,
                  guint n_params, VpaFleetRowFunc row, gpointer data, gint64 *changes,
                  GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;
  g_autoptr (sqlite3_stmt) stmt = sql_prepare (self, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  bind_params (stmt, params, n_params);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *v[16];
      int n = MIN (sqlite3_column_count (stmt), (int) G_N_ELEMENTS (v));

      row_texts (stmt, v, n);
      if (row != NULL)
        row (v, n, data);
    }
  if (rc != SQLITE_DONE)
    return sql_fail (self, sql, error);
  if (changes != NULL)
    *changes = sqlite3_changes (self->db);
  return TRUE;
}

static gboolean
sqlite_each (VpaFleetStore *store, const char *sql, const char *const *params, guint n_params,
             guint n_columns, const char *what, VpaFleetEachFunc fn, gpointer data,
             GError **error)
{
  VpaFleetSqlite *self = (VpaFleetSqlite *) store;
  g_autoptr (sqlite3_stmt) stmt = sql_prepare (self, sql, error);
  const char *v[VPA_FLEET_ROWS_MAX_COLUMNS];
  int rc;

  g_return_val_if_fail (n_columns <= G_N_ELEMENTS (v), FALSE);
  if (stmt == NULL)
    return FALSE;
  bind_params (stmt, params, n_params);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      row_texts (stmt, v, (int) n_columns);
      if (!fn (v, data, error))
        return FALSE;
    }
  if (rc != SQLITE_DONE)
    return sql_fail (self, what, error);
  return TRUE;
}

static const VpaFleetStoreOps sqlite_ops = {
  .name = "sqlite",
  .close = sqlite_close,
  .migrate = sqlite_migrate,
  .check = sqlite_check,
  .sync_host = sqlite_sync_host,
  .query_pools = sqlite_query_pools,
  .load_hosts = sqlite_load_hosts,
  .statement = sqlite_statement,
  .each = sqlite_each,
};

VpaFleetStore *
vpa_fleet_sqlite_open (const char *path, const char *uri, VpaFleetOpenMode mode,
                       GError **error)
{
  g_autoptr (VpaFleetStore) store = NULL;
  VpaFleetSqlite *self = g_new0 (VpaFleetSqlite, 1);
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  int rc;

  self->parent.ops = &sqlite_ops;
  self->parent.uri = g_strdup (uri);
  store = &self->parent;
  if (mode == VPA_FLEET_OPEN_CREATE)
    flags |= SQLITE_OPEN_CREATE;
  rc = sqlite3_open_v2 (path, &self->db, flags, NULL);
  if (rc != SQLITE_OK && mode != VPA_FLEET_OPEN_CREATE && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': no such store (run 'fleet sync' first)", uri);
      return NULL;
    }
  if (rc != SQLITE_OK)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "store '%s': cannot open: %s",
                   uri, self->db != NULL ? sqlite3_errmsg (self->db) : sqlite3_errstr (rc));
      return NULL;
    }
  sqlite3_busy_timeout (self->db, BUSY_TIMEOUT_MS);
  sqlite3_extended_result_codes (self->db, 1);
  if (!sql_exec (self, "PRAGMA foreign_keys = ON", error))
    return NULL;
  if (mode == VPA_FLEET_OPEN_CREATE ? !sqlite_migrate (store, error)
                                    : !sqlite_check (store, error))
    return NULL;
  return g_steal_pointer (&store);
}
