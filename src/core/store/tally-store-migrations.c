/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "tally-store-private.h"

/*
 * Schema migrations, one function per `PRAGMA user_version` step.
 *
 * Every step checks before it changes anything (`IF NOT EXISTS`, a column
 * looked up with `pragma_table_info` before `ALTER TABLE … ADD COLUMN`), so
 * running a step over a schema that already has its objects changes
 * nothing; derived data (the full-text index) is rebuilt whole rather than
 * added to. tally_store_migrate() runs the pending steps inside one
 * transaction, each step in its own savepoint: a failure anywhere rolls the
 * whole upgrade back and the file keeps the schema it had. The caller makes
 * a backup copy (tally_store_backup()) before the first step.
 *
 * The SQL of old versions is frozen: a step never changes once released,
 * a later step makes the change instead.
 */

typedef gboolean (*MigrationFunc) (sqlite3     *db,
                                   const char  *path,
                                   GError     **error);

/* Version 1: the flight recorder itself. `events` holds each event's JSON
 * line verbatim; it is append-only and its seq increases per session,
 * which the triggers enforce even against other writers. */
static const char schema_v1[] =
  "CREATE TABLE IF NOT EXISTS sessions ("
  "  id            TEXT PRIMARY KEY NOT NULL,"
  "  title         TEXT NOT NULL DEFAULT '',"
  "  created_us    INTEGER NOT NULL,"
  "  updated_us    INTEGER NOT NULL,"
  "  model         TEXT,"
  "  workspace     TEXT,"
  "  database      TEXT,"
  "  cost_usd      REAL DEFAULT 0,"
  "  input_tokens  INTEGER NOT NULL DEFAULT 0,"
  "  output_tokens INTEGER NOT NULL DEFAULT 0,"
  "  turns         INTEGER NOT NULL DEFAULT 0"
  ");"
  "CREATE INDEX IF NOT EXISTS sessions_by_created ON sessions (created_us);"
  "CREATE TABLE IF NOT EXISTS events ("
  "  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
  "  seq        INTEGER NOT NULL CHECK (seq > 0),"
  "  ts         INTEGER NOT NULL,"
  "  type       TEXT NOT NULL,"
  "  payload    TEXT NOT NULL,"
  "  PRIMARY KEY (session_id, seq)"
  ");"
  "CREATE TRIGGER IF NOT EXISTS events_append_only BEFORE UPDATE ON events "
  "BEGIN SELECT RAISE (ABORT, 'events are append-only'); END;"
  "CREATE TRIGGER IF NOT EXISTS events_seq_increases BEFORE INSERT ON events "
  "WHEN NEW.seq <= (SELECT max (seq) FROM events WHERE session_id = NEW.session_id) "
  "BEGIN SELECT RAISE (ABORT, 'seq must increase within a session'); END;";

/* Version 2: the API conversation block by block, permission rules and
 * plans; the sessions row learns cache tokens and the last mode. */
static const char schema_v2[] =
  "CREATE TABLE IF NOT EXISTS messages ("
  "  session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
  "  msg_index   INTEGER NOT NULL CHECK (msg_index >= 0),"
  "  block_index INTEGER NOT NULL CHECK (block_index >= 0),"
  "  role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),"
  "  block       TEXT NOT NULL,"
  "  PRIMARY KEY (session_id, msg_index, block_index)"
  ");"
  "CREATE TABLE IF NOT EXISTS rules ("
  "  id         INTEGER PRIMARY KEY,"
  "  pattern    TEXT NOT NULL,"
  "  decision   TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),"
  "  scope      TEXT NOT NULL CHECK (scope IN ('global', 'workspace')),"
  "  workspace  TEXT,"
  "  created_us INTEGER NOT NULL"
  ");"
  "CREATE TABLE IF NOT EXISTS plans ("
  "  plan_id    TEXT NOT NULL,"
  "  version    INTEGER NOT NULL CHECK (version > 0),"
  "  session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,"
  "  markdown   TEXT NOT NULL,"
  "  created_us INTEGER NOT NULL,"
  "  PRIMARY KEY (plan_id, version)"
  ");"
  "CREATE INDEX IF NOT EXISTS plans_by_session ON plans (session_id);";

/* Version 3: full-text search. `transcript` holds one row per searchable
 * text (a session's title, a turn's prompt, a turn's assistant text) and
 * `transcript_fts` indexes it as an external-content FTS5 table kept in
 * step by triggers. Both are derived from `sessions` and `events`. */
static const char schema_v3_tables[] =
  "CREATE TABLE IF NOT EXISTS transcript ("
  "  id         INTEGER PRIMARY KEY,"
  "  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
  "  turn_id    TEXT NOT NULL DEFAULT '',"
  "  kind       TEXT NOT NULL CHECK (kind IN ('title', 'prompt', 'assistant')),"
  "  text       TEXT NOT NULL,"
  "  UNIQUE (session_id, turn_id, kind)"
  ");"
  "CREATE VIRTUAL TABLE IF NOT EXISTS transcript_fts USING fts5 ("
  "  text, content='transcript', content_rowid='id',"
  "  tokenize='unicode61 remove_diacritics 2'"
  ");"
  "DROP TRIGGER IF EXISTS transcript_ai;"
  "DROP TRIGGER IF EXISTS transcript_ad;"
  "DROP TRIGGER IF EXISTS transcript_au;"
  "DELETE FROM transcript;";

static const char schema_v3_triggers[] =
  "INSERT INTO transcript_fts (transcript_fts) VALUES ('rebuild');"
  "CREATE TRIGGER transcript_ai AFTER INSERT ON transcript BEGIN"
  "  INSERT INTO transcript_fts (rowid, text) VALUES (NEW.id, NEW.text);"
  "END;"
  "CREATE TRIGGER transcript_ad AFTER DELETE ON transcript BEGIN"
  "  INSERT INTO transcript_fts (transcript_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);"
  "END;"
  "CREATE TRIGGER transcript_au AFTER UPDATE ON transcript BEGIN"
  "  INSERT INTO transcript_fts (transcript_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);"
  "  INSERT INTO transcript_fts (rowid, text) VALUES (NEW.id, NEW.text);"
  "END;";

/**
 * tally_store_set_sqlite_error:
 * @error: return location for a #GError
 * @db: the connection that failed
 * @rc: the SQLite result code
 * @path: the database file, named in the message
 * @what: what was being done, e.g. "write to"
 *
 * Sets @error in %TALLY_STORE_ERROR with the code that matches @rc:
 * %TALLY_STORE_ERROR_FULL, %TALLY_STORE_ERROR_READ_ONLY,
 * %TALLY_STORE_ERROR_CORRUPT, %TALLY_STORE_ERROR_INVALID (a constraint) or
 * %TALLY_STORE_ERROR_IO.
 */
void
tally_store_set_sqlite_error (GError     **error,
                              sqlite3     *db,
                              int          rc,
                              const char  *path,
                              const char  *what)
{
  TallyStoreError code;
  const char *detail;

  switch (rc & 0xff)
    {
    case SQLITE_FULL:
      code = TALLY_STORE_ERROR_FULL;
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
      code = TALLY_STORE_ERROR_READ_ONLY;
      break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      code = TALLY_STORE_ERROR_CORRUPT;
      break;
    case SQLITE_CONSTRAINT:
      code = TALLY_STORE_ERROR_INVALID;
      break;
    default:
      code = TALLY_STORE_ERROR_IO;
      break;
    }

  detail = (db != NULL && sqlite3_errcode (db) == rc) ? sqlite3_errmsg (db) : sqlite3_errstr (rc);
  g_set_error (error, TALLY_STORE_ERROR, code,
               "Could not %s the session store “%s”: %s",
               what, path, detail);
}

/**
 * tally_store_exec:
 * @db: a connection
 * @path: the database file, for messages
 * @sql: one or more SQL statements without parameters
 * @error: return location for a #GError
 *
 * Runs @sql. Failures are mapped by tally_store_set_sqlite_error().
 *
 * Returns: %TRUE on success
 */
gboolean
tally_store_exec (sqlite3     *db,
                  const char  *path,
                  const char  *sql,
                  GError     **error)
{
  int rc = sqlite3_exec (db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, db, rc, path, "write to");
      return FALSE;
    }
  return TRUE;
}

static gboolean
has_column (sqlite3    *db,
            const char *table,
            const char *column)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM pragma_table_info (?1) WHERE name = ?2",
                          -1, &stmt, NULL) != SQLITE_OK)
    return FALSE;
  sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 2, column, -1, SQLITE_STATIC);
  return sqlite3_step (stmt) == SQLITE_ROW;
}

/* Returns the `sql` of the schema object @name, or NULL when there is none */
static char *
dup_object_sql (sqlite3    *db,
                const char *name,
                char      **type)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (db, "SELECT type, sql FROM sqlite_schema WHERE name = ?1",
                          -1, &stmt, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) != SQLITE_ROW)
    return NULL;
  if (type != NULL)
    *type = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
  return g_strdup (sqlite3_column_text (stmt, 1) ? (const char *)sqlite3_column_text (stmt, 1) : "");
}

static gboolean
migrate_v1 (sqlite3     *db,
            const char  *path,
            GError     **error)
{
  return tally_store_exec (db, path, schema_v1, error);
}

static gboolean
add_column_if_missing (sqlite3     *db,
                       const char  *path,
                       const char  *table,
                       const char  *column,
                       const char  *definition,
                       GError     **error)
{
  g_autofree char *sql = NULL;

  if (has_column (db, table, column))
    return TRUE;

  sql = g_strdup_printf ("ALTER TABLE %s ADD COLUMN %s %s", table, column, definition);
  return tally_store_exec (db, path, sql, error);
}

static gboolean
migrate_v2 (sqlite3     *db,
            const char  *path,
            GError     **error)
{
  return add_column_if_missing (db, path, "sessions", "cache_read", "INTEGER NOT NULL DEFAULT 0", error) &&
         add_column_if_missing (db, path, "sessions", "cache_write", "INTEGER NOT NULL DEFAULT 0", error) &&
         add_column_if_missing (db, path, "sessions", "last_mode", "TEXT", error) &&
         tally_store_exec (db, path, schema_v2, error);
}

static void
string_free (gpointer data)
{
  g_string_free (data, TRUE);
}

typedef struct {
  sqlite3_stmt *insert;
  GHashTable   *assistant;   /* turn_id -> GString, of the current session */
  GPtrArray    *order;       /* turn_ids in the order they first appeared */
  char         *session_id;
} Fill;

static gboolean
fill_insert (Fill        *fill,
             sqlite3     *db,
             const char  *path,
             const char  *session_id,
             const char  *turn_id,
             const char  *kind,
             const char  *text,
             GError     **error)
{
  int rc;

  sqlite3_reset (fill->insert);
  sqlite3_bind_text (fill->insert, 1, session_id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text (fill->insert, 2, turn_id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text (fill->insert, 3, kind, -1, SQLITE_STATIC);
  sqlite3_bind_text (fill->insert, 4, text, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step (fill->insert);
  if (rc != SQLITE_DONE)
    {
      tally_store_set_sqlite_error (error, db, rc, path, "fill the search index of");
      return FALSE;
    }
  return TRUE;
}

static gboolean
fill_finish_session (Fill        *fill,
                     sqlite3     *db,
                     const char  *path,
                     GError     **error)
{
  for (guint i = 0; i < fill->order->len; i++)
    {
      const char *turn_id = g_ptr_array_index (fill->order, i);
      GString *text = g_hash_table_lookup (fill->assistant, turn_id);

      if (text->len > 0 &&
          !fill_insert (fill, db, path, fill->session_id, turn_id, "assistant", text->str, error))
        return FALSE;
    }
  g_hash_table_remove_all (fill->assistant);
  g_ptr_array_set_size (fill->order, 0);
  return TRUE;
}

/* Fills `transcript` from the sessions' titles and, reading every stored
 * event in order, the turns' prompts and their assistant text (the
 * `text_delta` texts of a turn, concatenated). Damaged event rows are
 * skipped here: loading reports them. */
static gboolean
fill_transcript (sqlite3     *db,
                 const char  *path,
                 GError     **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(sqlite3_stmt) insert = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GHashTable) assistant = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, string_free);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  Fill fill = { 0 };
  gboolean ok = TRUE;
  int rc;

  if (!tally_store_exec (db, path,
                         "INSERT INTO transcript (session_id, turn_id, kind, text) "
                         "SELECT id, '', 'title', title FROM sessions WHERE title <> ''",
                         error))
    return FALSE;

  if (sqlite3_prepare_v2 (db,
                          "INSERT INTO transcript (session_id, turn_id, kind, text) VALUES (?1, ?2, ?3, ?4) "
                          "ON CONFLICT (session_id, turn_id, kind) DO UPDATE SET text = excluded.text",
                          -1, &insert, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db,
                          "SELECT session_id, payload FROM events "
                          "WHERE type IN (?1, ?2) ORDER BY session_id, seq",
                          -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_bind_text (stmt, 1, tally_event_type_to_name (TALLY_EVENT_TURN_STARTED), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text (stmt, 2, tally_event_type_to_name (TALLY_EVENT_TEXT_DELTA), -1, SQLITE_STATIC) != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, db, sqlite3_errcode (db), path, "read");
      return FALSE;
    }

  fill.insert = insert;
  fill.assistant = assistant;
  fill.order = order;

  while (ok && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *session_id = (const char *)sqlite3_column_text (stmt, 0);
      const char *payload = (const char *)sqlite3_column_text (stmt, 1);
      JsonNode *root;
      JsonObject *event;
      const char *type;
      TallyEventType event_type;
      const char *turn_id;
      const char *text;

      if (session_id == NULL || payload == NULL)
        continue;

      if (g_strcmp0 (fill.session_id, session_id) != 0)
        {
          ok = fill_finish_session (&fill, db, path, error);
          g_free (fill.session_id);
          fill.session_id = g_strdup (session_id);
        }

      if (!json_parser_load_from_data (parser, payload, -1, NULL) ||
          (root = json_parser_get_root (parser)) == NULL ||
          !JSON_NODE_HOLDS_OBJECT (root))
        continue;
      event = json_node_get_object (root);
      type = tally_json_object_get_string (event, "type", NULL);
      turn_id = tally_json_object_get_string (event, "turn_id", NULL);
      text = tally_json_object_get_string (event, "text", NULL);
      if (type == NULL || text == NULL)
        continue;
      if (turn_id == NULL)
        turn_id = "";

      event_type = tally_event_type_from_name (type);
      if (event_type == TALLY_EVENT_TURN_STARTED)
        ok = ok && fill_insert (&fill, db, path, session_id, turn_id, "prompt", text, error);
      else if (event_type == TALLY_EVENT_TEXT_DELTA)
        {
          GString *acc = g_hash_table_lookup (assistant, turn_id);

          if (acc == NULL)
            {
              char *key = g_strdup (turn_id);

              acc = g_string_new (NULL);
              g_hash_table_insert (assistant, key, acc);
              g_ptr_array_add (order, key);
            }
          g_string_append (acc, text);
        }
    }

  if (ok && rc != SQLITE_DONE)
    {
      tally_store_set_sqlite_error (error, db, rc, path, "read");
      ok = FALSE;
    }
  if (ok)
    ok = fill_finish_session (&fill, db, path, error);

  g_free (fill.session_id);

  return ok;
}

/**
 * tally_store_fill_transcript:
 * @db: a read-write connection to a store with the current schema and an
 *   empty `transcript` (its triggers keep `transcript_fts` in step)
 * @path: the database file, for messages
 * @error: return location for a #GError
 *
 * Fills the search text from `sessions` and `events`, as the v3 migration
 * does (used by salvage, docs/architecture.md §10.9).
 *
 * Returns: %TRUE on success
 */
gboolean
tally_store_fill_transcript (sqlite3     *db,
                             const char  *path,
                             GError     **error)
{
  return fill_transcript (db, path, error);
}

/* Version 3's objects must have the shape this build expects. A table of
 * another kind under one of their names is data this build does not know:
 * fail rather than drop it. */
static gboolean
check_v3_shapes (sqlite3     *db,
                 const char  *path,
                 GError     **error)
{
  g_autofree char *fts_sql = NULL;
  g_autofree char *fts_type = NULL;
  g_autofree char *table_sql = NULL;
  g_autofree char *table_type = NULL;

  fts_sql = dup_object_sql (db, "transcript_fts", &fts_type);
  if (fts_sql != NULL)
    {
      g_autofree char *lower = g_ascii_strdown (fts_sql, -1);

      if (!g_str_equal (fts_type, "table") || strstr (lower, "virtual") == NULL ||
          strstr (lower, "fts5") == NULL || strstr (lower, "content='transcript'") == NULL)
        {
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                       "“transcript_fts” in “%s” already exists and is not the search index "
                       "this version creates (%s)", path, fts_sql);
          return FALSE;
        }
    }

  table_sql = dup_object_sql (db, "transcript", &table_type);
  if (table_sql != NULL &&
      (!g_str_equal (table_type, "table") ||
       !has_column (db, "transcript", "session_id") || !has_column (db, "transcript", "turn_id") ||
       !has_column (db, "transcript", "kind") || !has_column (db, "transcript", "text")))
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                   "“transcript” in “%s” already exists with another shape (%s)",
                   path, table_sql);
      return FALSE;
    }

  return TRUE;
}

static gboolean
migrate_v3 (sqlite3     *db,
            const char  *path,
            GError     **error)
{
  return check_v3_shapes (db, path, error) &&
         tally_store_exec (db, path, schema_v3_tables, error) &&
         fill_transcript (db, path, error) &&
         tally_store_exec (db, path, schema_v3_triggers, error);
}

/* Version 4: the analyst can pin a session to the top of the sidebar. */
static gboolean
migrate_v4 (sqlite3     *db,
            const char  *path,
            GError     **error)
{
  return add_column_if_missing (db, path, "sessions", "pinned", "INTEGER NOT NULL DEFAULT 0", error);
}

/* Version 5: a snapshot of each session's settled blocks, so a long
 * session opens without replaying its whole log (docs/architecture.md
 * §10.2). Derived from `events`: a missing, stale or damaged row is
 * rebuilt from the log, so the step starts every session without one. */
static const char schema_v5[] =
  "CREATE TABLE IF NOT EXISTS snapshots ("
  "  session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
  "  seq        INTEGER NOT NULL CHECK (seq > 0),"
  "  format     INTEGER NOT NULL,"
  "  state      TEXT NOT NULL,"
  "  blocks     TEXT NOT NULL"
  ");";

static gboolean
migrate_v5 (sqlite3     *db,
            const char  *path,
            GError     **error)
{
  return tally_store_exec (db, path, schema_v5, error);
}

/* Version 6: the search index keeps the doclists of every one-, two- and
 * three-character prefix (FTS5's `prefix` option), so the first letters
 * typed into the sidebar's search read one doclist instead of merging
 * those of every word they start (docs/architecture.md §10.2). The option
 * is fixed when the table is made: the index is made again and rebuilt
 * from `transcript`, whose triggers name it and stay. */
static const char schema_v6[] =
  "DROP TABLE IF EXISTS transcript_fts;"
  "CREATE VIRTUAL TABLE transcript_fts USING fts5 ("
  "  text, content='transcript', content_rowid='id',"
  "  tokenize='unicode61 remove_diacritics 2', prefix='1 2 3'"
  ");"
  "INSERT INTO transcript_fts (transcript_fts) VALUES ('rebuild');";

static gboolean
migrate_v6 (sqlite3     *db,
            const char  *path,
            GError     **error)
{
  return check_v3_shapes (db, path, error) &&
         tally_store_exec (db, path, schema_v6, error);
}

static const MigrationFunc migrations[] = {
  NULL,         /* version 0: the empty file */
  migrate_v1,
  migrate_v2,
  migrate_v3,
  migrate_v4,
  migrate_v5,
  migrate_v6,
};

G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == TALLY_STORE_SCHEMA_VERSION + 1);

/**
 * tally_store_migrate:
 * @db: a read-write connection with no open transaction
 * @path: the database file, for messages
 * @from_version: the file's current `user_version`
 * @error: return location for a #GError
 *
 * Brings the schema from @from_version to %TALLY_STORE_SCHEMA_VERSION in
 * one transaction, each step in a savepoint, setting `user_version` after
 * each. On failure everything is rolled back.
 *
 * Returns: %TRUE on success; %FALSE with the failing step's error
 */
gboolean
tally_store_migrate (sqlite3     *db,
                     const char  *path,
                     int          from_version,
                     GError     **error)
{
  g_return_val_if_fail (from_version >= 0 && from_version <= TALLY_STORE_SCHEMA_VERSION, FALSE);

  if (!tally_store_exec (db, path, "BEGIN IMMEDIATE", error))
    return FALSE;

  for (int version = from_version + 1; version <= TALLY_STORE_SCHEMA_VERSION; version++)
    {
      g_autofree char *set_version = g_strdup_printf ("PRAGMA user_version = %d", version);
      g_autoptr(GError) step_error = NULL;

      if (!tally_store_exec (db, path, "SAVEPOINT migration", &step_error) ||
          !migrations[version] (db, path, &step_error) ||
          !tally_store_exec (db, path, set_version, &step_error) ||
          !tally_store_exec (db, path, "RELEASE migration", &step_error))
        {
          sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                       "step to schema %d failed: %s", version, step_error->message);
          return FALSE;
        }
    }

  if (!tally_store_exec (db, path, "COMMIT", error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_store_backup:
 * @db: a connection to the database to copy
 * @path: the database file
 * @from_version: the file's schema version, part of the backup's name
 * @backup_path: (out) (transfer full): where the copy was written
 * @error: return location for a #GError
 *
 * Copies the database with SQLite's online backup API to
 * `<path>.bak-v<from_version>-<UTC timestamp>` (with a `-N` suffix when
 * that name is taken), a consistent snapshot even in WAL mode.
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_IO or
 *   %TALLY_STORE_ERROR_FULL
 */
gboolean
tally_store_backup (sqlite3     *db,
                    const char  *path,
                    int          from_version,
                    char       **backup_path,
                    GError     **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%dT%H%M%SZ");
  g_autofree char *target = g_strdup_printf ("%s.bak-v%d-%s", path, from_version, stamp);
  sqlite3 *dest = NULL;
  sqlite3_backup *backup;
  int rc;

  for (guint n = 1; g_file_test (target, G_FILE_TEST_EXISTS); n++)
    {
      g_free (target);
      target = g_strdup_printf ("%s.bak-v%d-%s-%u", path, from_version, stamp, n);
    }

  rc = sqlite3_open_v2 (target, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc == SQLITE_OK)
    {
      backup = sqlite3_backup_init (dest, "main", db, "main");
      if (backup == NULL)
        rc = sqlite3_errcode (dest);
      else
        {
          rc = sqlite3_backup_step (backup, -1);
          sqlite3_backup_finish (backup);
          if (rc == SQLITE_DONE)
            rc = SQLITE_OK;
        }
    }

  if (rc != SQLITE_OK)
    {
      g_autofree char *what = g_strdup_printf ("back up (to “%s”)", target);

      tally_store_set_sqlite_error (error, dest, rc, path, what);
      if (error != NULL && *error != NULL && (*error)->code != TALLY_STORE_ERROR_FULL)
        (*error)->code = TALLY_STORE_ERROR_IO;
      sqlite3_close (dest);
      g_unlink (target);
      return FALSE;
    }

  sqlite3_close (dest);
  *backup_path = g_steal_pointer (&target);
  return TRUE;
}
