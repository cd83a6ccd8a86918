/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The session store: schema and migrations, durable appends (also across a
 * killed process), damaged rows, byte-exact conversations, search, export,
 * and write failures that are reported and retried instead of lost. */

#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tally-block.h"
#include "tally-event.h"
#include "tally-export.h"
#include "tally-session.h"
#include "tally-session-load.h"
#include "tally-store.h"
#include "tally-store-private.h"
#include "tally-test-mock.h"
#include "tally-transcript.h"
#include "tally-test-util.h"

#define TS_BASE G_GINT64_CONSTANT (1700000000000000)

/* {{{ Helpers */

typedef struct {
  char *dir;
  char *path;
} TmpStore;

static void
tmp_store_init (TmpStore *tmp)
{
  g_autoptr(GError) error = NULL;

  tmp->dir = g_dir_make_tmp ("tally-store-XXXXXX", &error);
  g_assert_no_error (error);
  tmp->path = g_build_filename (tmp->dir, "tally.db", NULL);
}

static void
tmp_store_clear (TmpStore *tmp)
{
  g_autoptr(GDir) dir = g_dir_open (tmp->dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = g_build_filename (tmp->dir, name, NULL);

      g_chmod (file, 0600);
      g_unlink (file);
    }
  g_chmod (tmp->dir, 0700);
  g_rmdir (tmp->dir);
  g_free (tmp->dir);
  g_free (tmp->path);
}

static guint
count_backups (TmpStore *tmp,
               char    **first)
{
  g_autoptr(GDir) dir = g_dir_open (tmp->dir, 0, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "tally.db.bak-v"))
      {
        if (first != NULL && *first == NULL)
          *first = g_build_filename (tmp->dir, name, NULL);
        n++;
      }
  return n;
}

static void
sql_exec (const char *path,
          const char *sql)
{
  sqlite3 *db = NULL;
  char *message = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("SQL failed: %s\n%s", message, sql);
  sqlite3_close (db);
}

static gint64
sql_int (const char *path,
         const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 value;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

static char *
sql_text (const char *path,
          const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *value;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

static JsonObject *
stamp (JsonObject *fields,
       const char *session_id,
       gint64      seq,
       const char *turn_id)
{
  JsonObject *event = tally_event_stamp (fields, seq, TS_BASE + seq * 1000, session_id, turn_id);

  json_object_unref (fields);
  return event;
}

static JsonObject *
ev_session_created (const char *session_id,
                    gint64      seq,
                    const char *title,
                    const char *model)
{
  JsonObject *fields = tally_event_new (TALLY_EVENT_SESSION_CREATED);

  json_object_set_string_member (fields, "title", title);
  json_object_set_string_member (fields, "model", model);
  json_object_set_string_member (fields, "workspace", "/tmp/ws");
  json_object_set_string_member (fields, "database", "/data/beanline.sqlite");
  return stamp (fields, session_id, seq, NULL);
}

static JsonObject *
ev_turn_started (const char *session_id,
                 gint64      seq,
                 const char *turn_id,
                 const char *text,
                 const char *mode)
{
  JsonObject *fields = tally_event_new (TALLY_EVENT_TURN_STARTED);

  json_object_set_string_member (fields, "mode", mode);
  json_object_set_boolean_member (fields, "thinking", FALSE);
  json_object_set_int_member (fields, "budget_tokens", 0);
  json_object_set_string_member (fields, "model", "claude-sonnet-5");
  json_object_set_string_member (fields, "text", text);
  return stamp (fields, session_id, seq, turn_id);
}

static JsonObject *
ev_text_delta (const char *session_id,
               gint64      seq,
               const char *turn_id,
               const char *text)
{
  JsonObject *fields = tally_event_new (TALLY_EVENT_TEXT_DELTA);

  json_object_set_int_member (fields, "call", 0);
  json_object_set_int_member (fields, "block", 0);
  json_object_set_string_member (fields, "text", text);
  return stamp (fields, session_id, seq, turn_id);
}

static JsonObject *
ev_tool_use (const char *session_id,
             gint64      seq,
             const char *turn_id,
             const char *tool_id,
             const char *sql)
{
  JsonObject *fields = tally_event_new (TALLY_EVENT_TOOL_USE_START);
  JsonObject *input = json_object_new ();

  json_object_set_string_member (input, "sql", sql);
  json_object_set_string_member (fields, "tool_id", tool_id);
  json_object_set_string_member (fields, "tool_name", "query_database");
  json_object_set_object_member (fields, "tool_input", input);
  return stamp (fields, session_id, seq, turn_id);
}

static JsonObject *
ev_tool_result (const char *session_id,
                gint64      seq,
                const char *turn_id,
                const char *tool_id,
                const char *content)
{
  JsonObject *fields = tally_event_new (TALLY_EVENT_TOOL_RESULT);

  json_object_set_string_member (fields, "tool_id", tool_id);
  json_object_set_string_member (fields, "content", content);
  json_object_set_boolean_member (fields, "is_error", FALSE);
  json_object_set_int_member (fields, "duration_ms", 12);
  return stamp (fields, session_id, seq, turn_id);
}

static JsonObject *
ev_turn_finished (const char *session_id,
                  gint64      seq,
                  const char *turn_id,
                  double      cost,
                  gint64      input_tokens,
                  gint64      output_tokens,
                  gint64      cache_read,
                  gint64      cache_write)
{
  JsonObject *fields = tally_event_new (TALLY_EVENT_TURN_FINISHED);

  json_object_set_string_member (fields, "status", "done");
  if (isnan (cost))
    json_object_set_null_member (fields, "cost_usd");
  else
    json_object_set_double_member (fields, "cost_usd", cost);
  json_object_set_int_member (fields, "duration_ms", 4200);
  json_object_set_int_member (fields, "api_calls", 2);
  tally_event_set_usage (fields, "usage", input_tokens, output_tokens, cache_write, cache_read);
  return stamp (fields, session_id, seq, turn_id);
}

/* Appends @event (taken) and remembers its line in @lines when given */
static void
append (TallyStore *store,
        JsonObject *event,
        GPtrArray  *lines)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) owned = event;

  if (lines != NULL)
    g_ptr_array_add (lines, tally_event_to_json (owned));
  g_assert_true (tally_store_append_event (store, owned, &error));
  g_assert_no_error (error);
}

static TallyStore *
open_store (const char *path)
{
  g_autoptr(GError) error = NULL;
  TallyStore *store = tally_store_open (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (store);
  return store;
}

static void
flush_ok (TallyStore *store)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);
}

typedef struct {
  GError   *error;
  guint     count;
  gboolean  timed_out;
} Failure;

static void
write_failed_cb (TallyStore *store,
                 GError     *error,
                 Failure    *failure)
{
  failure->count++;
  if (failure->error == NULL)
    failure->error = g_error_copy (error);
}

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Waits for the first write-failed report (bounded, so a missing signal
 * fails the test instead of hanging it) */
static void
wait_for_failure (Failure *failure)
{
  guint id = g_timeout_add_seconds (20, timeout_cb, &failure->timed_out);

  while (failure->error == NULL && !failure->timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!failure->timed_out)
    g_source_remove (id);
  g_assert_false (failure->timed_out);
}

static gboolean
has_table (const char *path,
           const char *name)
{
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM sqlite_schema WHERE name = '%s'", name);

  return sql_int (path, sql) == 1;
}

/* The frozen SQL of schema versions 1 and 2, as released */
static const char old_schema_v1[] =
  "CREATE TABLE sessions (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL DEFAULT '',"
  "  created_us INTEGER NOT NULL, updated_us INTEGER NOT NULL, model TEXT, workspace TEXT,"
  "  database TEXT, cost_usd REAL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0,"
  "  output_tokens INTEGER NOT NULL DEFAULT 0, turns INTEGER NOT NULL DEFAULT 0);"
  "CREATE INDEX sessions_by_created ON sessions (created_us);"
  "CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
  "  seq INTEGER NOT NULL CHECK (seq > 0), ts INTEGER NOT NULL, type TEXT NOT NULL,"
  "  payload TEXT NOT NULL, PRIMARY KEY (session_id, seq));"
  "CREATE TRIGGER events_append_only BEFORE UPDATE ON events "
  "BEGIN SELECT RAISE (ABORT, 'events are append-only'); END;"
  "CREATE TRIGGER events_seq_increases BEFORE INSERT ON events "
  "WHEN NEW.seq <= (SELECT max (seq) FROM events WHERE session_id = NEW.session_id) "
  "BEGIN SELECT RAISE (ABORT, 'seq must increase within a session'); END;";

static const char old_schema_v2[] =
  "ALTER TABLE sessions ADD COLUMN cache_read INTEGER NOT NULL DEFAULT 0;"
  "ALTER TABLE sessions ADD COLUMN cache_write INTEGER NOT NULL DEFAULT 0;"
  "ALTER TABLE sessions ADD COLUMN last_mode TEXT;"
  "CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
  "  msg_index INTEGER NOT NULL CHECK (msg_index >= 0), block_index INTEGER NOT NULL CHECK (block_index >= 0),"
  "  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')), block TEXT NOT NULL,"
  "  PRIMARY KEY (session_id, msg_index, block_index));"
  "CREATE TABLE rules (id INTEGER PRIMARY KEY, pattern TEXT NOT NULL,"
  "  decision TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),"
  "  scope TEXT NOT NULL CHECK (scope IN ('global', 'workspace')), workspace TEXT, created_us INTEGER NOT NULL);"
  "CREATE TABLE plans (plan_id TEXT NOT NULL, version INTEGER NOT NULL CHECK (version > 0),"
  "  session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE, markdown TEXT NOT NULL,"
  "  created_us INTEGER NOT NULL, PRIMARY KEY (plan_id, version));"
  "CREATE INDEX plans_by_session ON plans (session_id);";

/* One session as an old Tally wrote it: a prompt and split assistant text */
static void
insert_old_session (const char *path)
{
  static const char *payloads[] = {
    "{\"type\":\"session_created\",\"seq\":1,\"ts\":1700000000001000,\"session_id\":\"old-session-1\",\"turn_id\":null,\"title\":\"Quarterly roastery review\",\"model\":\"claude-sonnet-5\",\"workspace\":null,\"database\":null}",
    "{\"type\":\"turn_started\",\"seq\":2,\"ts\":1700000000002000,\"session_id\":\"old-session-1\",\"turn_id\":\"t1\",\"mode\":\"ask\",\"thinking\":false,\"budget_tokens\":0,\"model\":\"claude-sonnet-5\",\"text\":\"Which espresso blend sold best?\"}",
    "{\"type\":\"text_delta\",\"seq\":3,\"ts\":1700000000003000,\"session_id\":\"old-session-1\",\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"The Harb\"}",
    "{\"type\":\"text_delta\",\"seq\":4,\"ts\":1700000000004000,\"session_id\":\"old-session-1\",\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"orside blend led.\"}",
  };
  g_autoptr(GString) sql = g_string_new (
    "INSERT INTO sessions (id, title, created_us, updated_us, model, cost_usd, input_tokens, output_tokens, turns) "
    "VALUES ('old-session-1', 'Quarterly roastery review', 1700000000001000, 1700000000004000, 'claude-sonnet-5', 0.25, 100, 50, 1);");

  for (guint i = 0; i < G_N_ELEMENTS (payloads); i++)
    {
      g_autoptr(JsonObject) event = tally_event_from_json (payloads[i], NULL);
      char *quoted = sqlite3_mprintf ("INSERT INTO events VALUES ('old-session-1', %u, %lld, '%q', '%q');",
                                      i + 1, (long long)(1700000000001000 + i * 1000),
                                      tally_event_get_type_name (event), payloads[i]);
      g_string_append (sql, quoted);
      sqlite3_free (quoted);
    }
  sql_exec (path, sql->str);
}

/* }}} */
/* {{{ Schema and migrations */

static void
test_fresh (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autofree char *journal = NULL;
  g_autofree char *default_path = tally_store_get_default_path ();
  TmpStore tmp;
  static const char *tables[] = { "sessions", "events", "messages", "rules", "plans", "transcript", "transcript_fts" };

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  flush_ok (store);

  g_assert_true (g_str_has_suffix (default_path, "/tally/tally.db"));
  g_assert_true (g_str_has_prefix (default_path, g_get_user_data_dir ()));
  g_assert_cmpstr (tally_store_get_path (store), ==, tmp.path);
  g_assert_false (tally_store_is_read_only (store));
  g_assert_null (tally_store_get_read_only_reason (store));

  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, TALLY_STORE_SCHEMA_VERSION);
  journal = sql_text (tmp.path, "PRAGMA journal_mode");
  g_assert_cmpstr (journal, ==, "wal");
  for (guint i = 0; i < G_N_ELEMENTS (tables); i++)
    g_assert_true (has_table (tmp.path, tables[i]));
  g_assert_cmpuint (count_backups (&tmp, NULL), ==, 0);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static void
test_migrate_v1 (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backup = NULL;
  TmpStore tmp;
  gint64 transcript_rows;

  tmp_store_init (&tmp);
  sql_exec (tmp.path, old_schema_v1);
  insert_old_session (tmp.path);
  sql_exec (tmp.path, "PRAGMA user_version = 1");

  store = open_store (tmp.path);
  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, TALLY_STORE_SCHEMA_VERSION);

  /* A backup of the v1 file, readable and still at v1 */
  g_assert_cmpuint (count_backups (&tmp, &backup), ==, 1);
  g_assert_true (strstr (backup, "tally.db.bak-v1-") != NULL);
  g_assert_cmpint (sql_int (backup, "PRAGMA user_version"), ==, 1);
  g_assert_cmpint (sql_int (backup, "SELECT count(*) FROM events"), ==, 4);

  /* Rows kept, new columns with their defaults */
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM events"), ==, 4);
  g_assert_cmpint (sql_int (tmp.path, "SELECT input_tokens FROM sessions"), ==, 100);
  g_assert_cmpint (sql_int (tmp.path, "SELECT cache_read FROM sessions"), ==, 0);
  events = tally_store_load_events (store, "old-session-1", &warnings, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (events->len, ==, 4);
  g_assert_cmpuint (warnings->len, ==, 0);

  /* The search index was filled from the old rows: title, prompt, and the
   * assistant text joined across its deltas */
  transcript_rows = sql_int (tmp.path, "SELECT count(*) FROM transcript");
  g_assert_cmpint (transcript_rows, ==, 3);
  hits = tally_store_search (store, "espresso", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_assert_cmpstr (((TallySessionInfo *)hits->pdata[0])->id, ==, "old-session-1");
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = tally_store_search (store, "Harborside", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = tally_store_search (store, "roastery", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_clear_pointer (&hits, g_ptr_array_unref);

  /* Opening again migrates nothing and backs nothing up */
  g_clear_object (&store);
  store = open_store (tmp.path);
  g_assert_cmpuint (count_backups (&tmp, NULL), ==, 1);
  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, TALLY_STORE_SCHEMA_VERSION);
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM transcript"), ==, transcript_rows);
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM events"), ==, 4);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static void
test_migrate_v2 (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallyConversation) conversation = tally_conversation_new ();
  g_autoptr(GPtrArray) rules = NULL;
  g_autoptr(GPtrArray) plans = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backup = NULL;
  g_autofree char *messages = NULL;
  TmpStore tmp;

  tmp_store_init (&tmp);
  sql_exec (tmp.path, old_schema_v1);
  sql_exec (tmp.path, old_schema_v2);
  insert_old_session (tmp.path);
  sql_exec (tmp.path,
            "INSERT INTO messages VALUES ('old-session-1', 0, 0, 'user', '{\"type\":\"text\",\"text\":\"Which espresso blend sold best?\"}');"
            "INSERT INTO messages VALUES ('old-session-1', 1, 0, 'assistant', '{\"type\":\"text\",\"text\":\"The Harborside blend led.\"}');"
            "INSERT INTO rules VALUES (7, 'query_database', 'allow', 'global', NULL, 1700000000000000);"
            "INSERT INTO plans VALUES ('plan-1', 1, 'old-session-1', '# Plan', 1700000000000000);"
            "UPDATE sessions SET cache_read = 40, last_mode = 'plan';"
            "PRAGMA user_version = 2;");

  store = open_store (tmp.path);
  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, TALLY_STORE_SCHEMA_VERSION);
  g_assert_cmpuint (count_backups (&tmp, &backup), ==, 1);
  g_assert_true (strstr (backup, "tally.db.bak-v2-") != NULL);
  g_assert_cmpint (sql_int (tmp.path, "SELECT cache_read FROM sessions"), ==, 40);

  g_assert_true (tally_store_load_conversation (store, "old-session-1", conversation, &error));
  g_assert_no_error (error);
  messages = tally_conversation_dup_messages_json (conversation);
  g_assert_cmpstr (messages, ==,
                   "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Which espresso blend sold best?\"}]},"
                   "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The Harborside blend led.\"}]}]");

  rules = tally_store_list_rules (store, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rules->len, ==, 1);
  g_assert_cmpint (((TallyRule *)rules->pdata[0])->id, ==, 7);
  plans = tally_store_load_plan_versions (store, "plan-1", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plans->len, ==, 1);

  hits = tally_store_search (store, "harborside", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* Version 6 makes the search index again with the prefix option: the same
 * text is found, also by the one- and two-letter prefixes the option
 * indexes, and the triggers still keep the index in step. */
static void
test_migrate_v6 (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backup = NULL;
  g_autofree char *fts_sql = NULL;
  TmpStore tmp;
  static const char *texts[] = { "c", "co", "cold", "sixty", "s", "pricing" };

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("s1", 1, "Cold brew pricing", "claude-sonnet-5"), NULL);
  append (store, ev_turn_started ("s1", 2, "t1", "What is the margin on cold brew?", "ask"), NULL);
  append (store, ev_text_delta ("s1", 3, "t1", "About sixty percent."), NULL);
  append (store, ev_turn_finished ("s1", 4, "t1", 0.01, 10, 5, 0, 0), NULL);
  append (store, ev_session_created ("s2", 101, "Leeds footfall", "claude-sonnet-5"), NULL);
  flush_ok (store);
  g_clear_object (&store);

  /* The index as version 5 left it */
  sql_exec (tmp.path, "DROP TABLE transcript_fts;"
                      "CREATE VIRTUAL TABLE transcript_fts USING fts5 ("
                      "  text, content='transcript', content_rowid='id',"
                      "  tokenize='unicode61 remove_diacritics 2');"
                      "INSERT INTO transcript_fts (transcript_fts) VALUES ('rebuild');"
                      "PRAGMA user_version = 5;");

  store = open_store (tmp.path);
  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, TALLY_STORE_SCHEMA_VERSION);
  g_assert_cmpuint (count_backups (&tmp, &backup), ==, 1);
  g_assert_true (strstr (backup, "tally.db.bak-v5-") != NULL);
  fts_sql = sql_text (tmp.path, "SELECT sql FROM sqlite_master WHERE name = 'transcript_fts'");
  g_assert_nonnull (strstr (fts_sql, "prefix='1 2 3'"));
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM transcript_fts WHERE transcript_fts MATCH '\"co\"*'"), ==, 2);

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autoptr(GPtrArray) hits = tally_store_search (store, texts[i], &error);

      g_assert_no_error (error);
      g_assert_cmpuint (hits->len, ==, 1);
      g_assert_cmpstr (((TallySessionInfo *)g_ptr_array_index (hits, 0))->id, ==, "s1");
    }

  /* The triggers write to the new index */
  append (store, ev_turn_started ("s2", 102, "t1", "Footfall by weekday", "ask"), NULL);
  append (store, ev_text_delta ("s2", 103, "t1", "Saturdays are busiest."), NULL);
  append (store, ev_turn_finished ("s2", 104, "t1", 0.01, 10, 5, 0, 0), NULL);
  flush_ok (store);
  {
    g_autoptr(GPtrArray) hits = tally_store_search (store, "sa", &error);

    g_assert_no_error (error);
    g_assert_cmpuint (hits->len, ==, 1);
    g_assert_cmpstr (((TallySessionInfo *)g_ptr_array_index (hits, 0))->id, ==, "s2");
  }

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* Every step run again over a schema that already has its objects must
 * change nothing and duplicate nothing */
static void
test_migrate_rerun (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GError) error = NULL;
  TmpStore tmp;
  gint64 rows;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("s1", 1, "Cold brew pricing", "claude-sonnet-5"), NULL);
  append (store, ev_turn_started ("s1", 2, "t1", "What is the margin on cold brew?", "ask"), NULL);
  append (store, ev_text_delta ("s1", 3, "t1", "About sixty percent."), NULL);
  append (store, ev_turn_finished ("s1", 4, "t1", 0.01, 10, 5, 0, 0), NULL);
  flush_ok (store);
  g_clear_object (&store);
  rows = sql_int (tmp.path, "SELECT count(*) FROM transcript");
  g_assert_cmpint (rows, ==, 3);

  /* Back to 2 (step 3 again), then to 1 (steps 2 and 3 again) */
  for (int version = 2; version >= 1; version--)
    {
      g_autofree char *sql = g_strdup_printf ("PRAGMA user_version = %d", version);

      sql_exec (tmp.path, sql);
      store = open_store (tmp.path);
      g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, TALLY_STORE_SCHEMA_VERSION);
      g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM transcript"), ==, rows);
      g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM events"), ==, 4);
      g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM pragma_table_info ('sessions')"), ==, 15);
      hits = tally_store_search (store, "sixty", &error);
      g_assert_no_error (error);
      g_assert_cmpuint (hits->len, ==, 1);
      g_clear_pointer (&hits, g_ptr_array_unref);
      g_clear_object (&store);
    }

  g_assert_cmpuint (count_backups (&tmp, NULL), ==, 2);
  tmp_store_clear (&tmp);
}

static void
test_newer_schema (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autoptr(GError) error = NULL;
  Failure failure = { 0 };
  TmpStore tmp;

  tmp_store_init (&tmp);
  sql_exec (tmp.path, old_schema_v1);
  insert_old_session (tmp.path);
  sql_exec (tmp.path, "CREATE TABLE future_things (x); PRAGMA user_version = 99;");
  before = tally_test_read_bytes (tmp.path);

  store = open_store (tmp.path);
  g_assert_true (tally_store_is_read_only (store));
  g_assert_cmpstr (tally_store_get_read_only_reason (store), ==,
                   "This store was written by a newer version of Tally (schema 99; this build "
                   "knows 6). It is open read-only.");

  /* Reading what it can still works */
  {
    g_autoptr(GPtrArray) lines = tally_store_load_event_lines (store, "old-session-1", &error);

    g_assert_no_error (error);
    g_assert_cmpuint (lines->len, ==, 4);
  }

  g_signal_connect (store, "write-failed", G_CALLBACK (write_failed_cb), &failure);
  append (store, ev_text_delta ("old-session-1", 5, "t1", "more"), NULL);
  wait_for_failure (&failure);
  g_assert_error (failure.error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY);
  g_assert_true (strstr (failure.error->message, "newer version of Tally") != NULL);

  g_assert_false (tally_store_flush (store, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY);
  g_clear_error (&error);
  g_assert_false (tally_store_rename_session (store, "old-session-1", "x", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY);
  g_clear_error (&error);

  g_clear_object (&store);
  after = tally_test_read_bytes (tmp.path);
  g_assert_true (g_bytes_equal (before, after));
  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, 99);
  g_clear_error (&failure.error);
  tmp_store_clear (&tmp);
}

static void
test_migrate_failure (void)
{
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backup = NULL;
  TallyStore *store;
  TmpStore tmp;

  tmp_store_init (&tmp);
  sql_exec (tmp.path, old_schema_v1);
  sql_exec (tmp.path, old_schema_v2);
  insert_old_session (tmp.path);
  /* An object in the way of version 3, of a shape it cannot use */
  sql_exec (tmp.path, "CREATE TABLE transcript_fts (x INTEGER); INSERT INTO transcript_fts VALUES (1);"
                      "PRAGMA user_version = 2;");
  before = tally_test_read_bytes (tmp.path);

  store = tally_store_open (tmp.path, &error);
  g_assert_null (store);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED);

  g_assert_cmpuint (count_backups (&tmp, &backup), ==, 1);
  g_assert_true (strstr (error->message, backup) != NULL);
  g_assert_true (strstr (error->message, "transcript_fts") != NULL);
  g_assert_cmpint (sql_int (backup, "PRAGMA user_version"), ==, 2);

  after = tally_test_read_bytes (tmp.path);
  g_assert_true (g_bytes_equal (before, after));
  g_assert_cmpint (sql_int (tmp.path, "PRAGMA user_version"), ==, 2);

  tmp_store_clear (&tmp);
}

static void
test_corrupt (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autofree char *foreign = NULL;
  g_autofree char *folder = NULL;
  guint8 noise[8192];
  TallyStore *store;
  TmpStore tmp;

  tmp_store_init (&tmp);
  for (guint i = 0; i < sizeof noise; i++)
    noise[i] = g_rand_int_range (rand, 0, 256);
  g_assert_true (g_file_set_contents (tmp.path, (const char *)noise, sizeof noise, NULL));
  before = tally_test_read_bytes (tmp.path);

  store = tally_store_open (tmp.path, &error);
  g_assert_null (store);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT);
  g_assert_true (strstr (error->message, tmp.path) != NULL);
  after = tally_test_read_bytes (tmp.path);
  g_assert_true (g_bytes_equal (before, after));
  g_clear_error (&error);

  /* A SQLite database that is not a store is refused, not written into */
  foreign = g_build_filename (tmp.dir, "sales.db", NULL);
  sql_exec (foreign, "CREATE TABLE sales (amount REAL); INSERT INTO sales VALUES (3.5);");
  store = tally_store_open (foreign, &error);
  g_assert_null (store);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT);
  g_assert_true (strstr (error->message, "not a Tally session store") != NULL);
  g_assert_cmpint (sql_int (foreign, "SELECT count(*) FROM sqlite_schema"), ==, 1);
  g_clear_error (&error);

  /* A folder where the file should be */
  folder = g_build_filename (tmp.dir, "folder.db", NULL);
  g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
  store = tally_store_open (folder, &error);
  g_assert_null (store);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO);
  g_rmdir (folder);

  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Appending and loading */

static void
test_append_reload (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) lines_a = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) lines_b = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;
  TallySessionInfo *a, *b;
  TmpStore tmp;
  gint64 seq_a = 1, seq_b = 1;
  double cost_a = 0;
  gint64 in_a = 0, out_a = 0, read_a = 0, write_a = 0;
  guint turns_a = 0;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);

  append (store, ev_session_created ("session-a", seq_a++, "Espresso sales", "claude-sonnet-5"), lines_a);
  append (store, ev_session_created ("session-b", seq_b++ + 10000, "Muffin stock", "mystery-model"), lines_b);
  seq_b += 10000;

  /* Interleave the two sessions: 500 events each */
  while (lines_a->len < 500 || lines_b->len < 500)
    {
      if (lines_a->len < 500)
        {
          g_autofree char *turn = g_strdup_printf ("a-turn-%u", turns_a);

          if (lines_a->len % 25 == 1)
            {
              append (store, ev_turn_started ("session-a", seq_a++, turn, "How did espresso sell?",
                                              turns_a % 2 ? "plan" : "ask"), lines_a);
            }
          else if (lines_a->len % 25 == 10)
            append (store, ev_tool_use ("session-a", seq_a++, turn, "toolu_1", "SELECT 1"), lines_a);
          else if (lines_a->len % 25 == 11)
            append (store, ev_tool_result ("session-a", seq_a++, turn, "toolu_1", "1\n"), lines_a);
          else if (lines_a->len % 25 == 24)
            {
              append (store, ev_turn_finished ("session-a", seq_a++, turn, 0.0125, 1000, 200, 300, 40), lines_a);
              cost_a += 0.0125;
              in_a += 1000;
              out_a += 200;
              read_a += 300;
              write_a += 40;
              turns_a++;
            }
          else
            append (store, ev_text_delta ("session-a", seq_a++, turn, "Espresso é ☕ \"sold\"\n well. "), lines_a);
        }
      if (lines_b->len < 500)
        {
          if (lines_b->len == 1)
            append (store, ev_turn_started ("session-b", seq_b++, "b1", "Muffins?", "auto"), lines_b);
          else if (lines_b->len == 499)
            append (store, ev_turn_finished ("session-b", seq_b++, "b1", NAN, 5, 6, 0, 0), lines_b);
          else
            append (store, ev_text_delta ("session-b", seq_b++, "b1", "muffin "), lines_b);
        }
    }
  flush_ok (store);

  /* Byte-identical lines in order, and the same events parsed */
  for (guint s = 0; s < 2; s++)
    {
      const char *id = s == 0 ? "session-a" : "session-b";
      GPtrArray *expected = s == 0 ? lines_a : lines_b;
      g_autoptr(GPtrArray) lines = tally_store_load_event_lines (store, id, &error);
      g_autoptr(GPtrArray) events = NULL;
      g_autoptr(GPtrArray) warnings = NULL;

      g_assert_no_error (error);
      g_assert_cmpuint (lines->len, ==, expected->len);
      for (guint i = 0; i < lines->len; i++)
        g_assert_cmpstr (lines->pdata[i], ==, expected->pdata[i]);

      events = tally_store_load_events (store, id, &warnings, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (warnings->len, ==, 0);
      g_assert_cmpuint (events->len, ==, expected->len);
      for (guint i = 0; i < events->len; i++)
        {
          g_autofree char *line = tally_event_to_json (events->pdata[i]);

          g_assert_cmpstr (line, ==, expected->pdata[i]);
        }
    }

  sessions = tally_store_list_sessions (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 2);
  b = sessions->pdata[0];   /* created later (its first seq carries a later ts) */
  a = sessions->pdata[1];
  g_assert_cmpstr (b->id, ==, "session-b");
  g_assert_cmpstr (a->id, ==, "session-a");
  g_assert_cmpint (b->created_us, >, a->created_us);

  g_assert_cmpstr (a->title, ==, "Espresso sales");
  g_assert_cmpstr (a->model, ==, "claude-sonnet-5");
  g_assert_cmpstr (a->workspace, ==, "/tmp/ws");
  g_assert_cmpstr (a->database, ==, "/data/beanline.sqlite");
  g_assert_cmpint (a->created_us, ==, TS_BASE + 1000);
  g_assert_cmpint (a->updated_us, ==, TS_BASE + (seq_a - 1) * 1000);
  g_assert_true (tally_session_info_has_cost (a));
  g_assert_cmpfloat_with_epsilon (a->cost_usd, cost_a, 1e-9);
  g_assert_cmpint (a->input_tokens, ==, in_a);
  g_assert_cmpint (a->output_tokens, ==, out_a);
  g_assert_cmpint (a->cache_read_tokens, ==, read_a);
  g_assert_cmpint (a->cache_write_tokens, ==, write_a);
  g_assert_cmpint (a->turns, ==, 20);
  g_assert_cmpstr (a->last_mode, ==, "plan");

  g_assert_cmpstr (b->title, ==, "Muffin stock");
  g_assert_false (tally_session_info_has_cost (b));
  g_assert_true (isnan (b->cost_usd));
  g_assert_cmpint (b->input_tokens, ==, 5);
  g_assert_cmpint (b->output_tokens, ==, 6);
  g_assert_cmpint (b->turns, ==, 1);
  g_assert_cmpstr (b->last_mode, ==, "auto");
  g_assert_cmpstr (b->model, ==, "claude-sonnet-5");   /* the turn's model */

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static void
test_seq_order (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) again = NULL;
  g_autoptr(JsonObject) bad = NULL;
  g_autoptr(JsonObject) stale = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  Failure failure = { 0 };
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("s", 1, "t", "m"), NULL);
  append (store, ev_text_delta ("s", 2, "t1", "a"), NULL);
  append (store, ev_text_delta ("s", 5, "t1", "b"), NULL);   /* gaps are fine */

  again = ev_text_delta ("s", 5, "t1", "again");
  g_assert_false (tally_store_append_event (store, again, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_clear_pointer (&again, json_object_unref);
  again = ev_text_delta ("s", 3, "t1", "back");
  g_assert_false (tally_store_append_event (store, again, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);

  /* Events without the stamp members are refused at once */
  bad = tally_event_new (TALLY_EVENT_TEXT_DELTA);
  g_assert_false (tally_store_append_event (store, bad, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);
  flush_ok (store);
  g_clear_object (&store);

  /* A second writer that does not know the session learns it from the
   * file: a step back is refused there and reported */
  store = open_store (tmp.path);
  g_signal_connect (store, "write-failed", G_CALLBACK (write_failed_cb), &failure);
  stale = ev_text_delta ("s", 4, "t1", "stale");
  g_assert_true (tally_store_append_event (store, stale, &error));
  g_assert_no_error (error);
  append (store, ev_text_delta ("s", 6, "t1", "fresh"), NULL);
  g_assert_false (tally_store_flush (store, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_assert_true (strstr (error->message, "Event 4 of session s") != NULL);
  g_clear_error (&error);
  wait_for_failure (&failure);
  g_assert_error (failure.error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  flush_ok (store);   /* reported once */

  lines = tally_store_load_event_lines (store, "s", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lines->len, ==, 4);
  g_assert_true (strstr (lines->pdata[3], "\"seq\":6") != NULL);

  g_clear_error (&failure.error);
  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static void
test_damaged_rows (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  g_autoptr(GError) error = NULL;
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("sess-dmg", 1, "Damage", "m"), NULL);
  for (gint64 seq = 2; seq <= 10; seq++)
    append (store, ev_text_delta ("sess-dmg", seq, "t", "x"), NULL);
  flush_ok (store);
  g_clear_object (&store);

  /* Damage rows in the middle (invalid JSON; a seq that disagrees with the
   * row) and add two at the end (JSON that is not an object; invalid JSON
   * as the very last row). The store's own trigger refuses inserts behind
   * the newest seq, so it is dropped first, as real damage would not ask. */
  sql_exec (tmp.path,
            "DROP TRIGGER events_seq_increases;"
            "DELETE FROM events WHERE seq IN (5, 8);"
            "INSERT INTO events VALUES ('sess-dmg', 5, 0, 'text_delta', '{\"type\":\"text_delta\",\"seq\":5,\"te');"
            "INSERT INTO events VALUES ('sess-dmg', 8, 0, 'text_delta', '{\"type\":\"text_delta\",\"seq\":99,\"session_id\":\"sess-dmg\"}');"
            "INSERT INTO events VALUES ('sess-dmg', 11, 0, 'text_delta', '[1,2,3]');"
            "INSERT INTO events VALUES ('sess-dmg', 12, 0, 'text_delta', '{\"type\":\"text_delta\",\"seq\":12,\"session_id\":\"sess-dmg\",\"text\":\"cut');"
            /* A `type` that is not a string (found by fuzz-store) */
            "INSERT INTO events VALUES ('sess-dmg', 13, 0, 'text_delta', '{\"type\":{\"type\":\"text_delta\"},\"seq\":13}');");

  store = open_store (tmp.path);
  events = tally_store_load_events (store, "sess-dmg", &warnings, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (events->len, ==, 8);
  for (guint i = 0, seq = 1; i < events->len; i++, seq++)
    {
      if (seq == 5 || seq == 8)
        seq++;
      g_assert_cmpint (json_object_get_int_member (events->pdata[i], "seq"), ==, seq);
    }
  g_assert_cmpuint (warnings->len, ==, 5);
  g_assert_true (g_str_has_prefix (warnings->pdata[0], "event 5 of session sess-dmg is damaged and was skipped: "));
  g_assert_true (g_str_has_prefix (warnings->pdata[1], "event 8 of session sess-dmg is damaged and was skipped: "
                                                       "its seq does not match"));
  g_assert_true (g_str_has_prefix (warnings->pdata[2], "event 11 of session sess-dmg is damaged and was skipped: "));
  g_assert_true (g_str_has_prefix (warnings->pdata[3], "event 12 of session sess-dmg is damaged and was skipped: "));
  g_assert_cmpstr (warnings->pdata[4], ==, "event 13 of session sess-dmg is damaged and was skipped: "
                                           "An event must have a string member “type”");

  /* Replay prints what is stored, damage included */
  lines = tally_store_load_event_lines (store, "sess-dmg", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lines->len, ==, 13);
  g_assert_cmpstr (lines->pdata[10], ==, "[1,2,3]");

  /* Export still works around the damage */
  {
    g_autofree char *markdown = tally_export_session_markdown (store, "sess-dmg", &error);

    g_assert_no_error (error);
    g_assert_true (strstr (markdown, "5 damaged events were left out") != NULL);
  }

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Crash safety */

#define CRASH_REPORT_AGE_US (60 * G_TIME_SPAN_MILLISECOND)

/* The child: appends one event every 2 ms and reports on stdout the
 * newest seq it handed to the store more than 60 ms ago */
static int
crash_child (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) handed_at = g_array_new (FALSE, TRUE, sizeof (gint64));
  TallyStore *store = tally_store_open (path, &error);
  gint64 reported = 0;
  gint64 started = g_get_monotonic_time ();

  if (store == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }

  g_array_set_size (handed_at, 1);
  for (gint64 seq = 1; g_get_monotonic_time () - started < 30 * G_USEC_PER_SEC; seq++)
    {
      g_autoptr(JsonObject) event = seq == 1 ? ev_session_created ("crash", 1, "Crash test", "m")
                                             : ev_text_delta ("crash", seq, "t1", "some streamed text of a typical length");
      gint64 now;

      if (!tally_store_append_event (store, event, &error))
        {
          g_printerr ("%s\n", error->message);
          return 1;
        }
      now = g_get_monotonic_time ();
      g_array_append_val (handed_at, now);

      while (reported + 1 < seq && now - g_array_index (handed_at, gint64, reported + 1) > CRASH_REPORT_AGE_US)
        reported++;
      if (reported > 0)
        {
          printf ("%" G_GINT64_FORMAT "\n", reported);
          fflush (stdout);
        }
      g_usleep (2000);
    }

  return 2;   /* not killed in time */
}

static void
test_crash (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) child = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autofree char *self_exe = g_file_read_link ("/proc/self/exe", NULL);
  gint64 reported = 0;
  guint reports = 0;
  char *line;
  TmpStore tmp;

  tmp_store_init (&tmp);
  g_assert_nonnull (self_exe);

  child = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                            self_exe, "--crash-child", tmp.path, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (child));

  /* Let it run for a while (a few hundred reports), then kill it */
  while (reports < 150 && (line = g_data_input_stream_read_line (out, NULL, NULL, &error)) != NULL)
    {
      reported = MAX (reported, g_ascii_strtoll (line, NULL, 10));
      reports++;
      g_free (line);
    }
  g_assert_no_error (error);
  g_assert_cmpuint (reports, ==, 150);

  g_subprocess_send_signal (child, SIGKILL);

  /* Whatever it printed before dying counts too */
  while ((line = g_data_input_stream_read_line (out, NULL, NULL, NULL)) != NULL)
    {
      reported = MAX (reported, g_ascii_strtoll (line, NULL, 10));
      g_free (line);
    }
  g_assert_true (g_subprocess_wait (child, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_signaled (child));
  g_assert_cmpint (g_subprocess_get_term_sig (child), ==, SIGKILL);

  store = open_store (tmp.path);
  events = tally_store_load_events (store, "crash", &warnings, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (warnings->len, ==, 0);
  g_test_message ("child reported seq %" G_GINT64_FORMAT " as handed over > 60 ms ago; "
                  "%u events survived", reported, events->len);
  g_assert_cmpint (reported, >, 0);
  g_assert_cmpint (events->len, >=, reported);
  for (guint i = 0; i < events->len; i++)
    g_assert_cmpint (json_object_get_int_member (events->pdata[i], "seq"), ==, i + 1);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Conversations */

static void
test_conversation (void)
{
  static const char *user_blocks[] = {
    "{\"type\":\"text\",\"text\":\"Café ☕ — 東京 😀 \\u00e9 \\\"quoted\\\" \\\\ back\\nslash \\u0001\"}",
  };
  static const char *assistant_blocks[] = {
    "{\"type\":\"thinking\",\"thinking\":\"Let me think…\\n\\tindented\",\"signature\":\"EqQBCkgIARABGAIiQL+/5n0x==\"}",
    "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP\"}",
    "{\"type\":\"text\",\"text\":\"Here   are  the\\r\\nnumbers\"}",
    "{\"type\":\"tool_use\",\"id\":\"toolu_01A\",\"name\":\"query_database\",\"input\": { \"sql\" : \"SELECT 1\" } }",
  };
  static const char *result_blocks[] = {
    "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_01A\",\"content\":\"1\",\"is_error\":false}",
  };
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallyConversation) original = tally_conversation_new ();
  g_autoptr(TallyConversation) loaded = tally_conversation_new ();
  g_autoptr(TallyConversation) truncated = tally_conversation_new ();
  g_autoptr(GPtrArray) user = g_ptr_array_new ();
  g_autoptr(GPtrArray) assistant = g_ptr_array_new ();
  g_autoptr(GPtrArray) result = g_ptr_array_new ();
  g_autoptr(GPtrArray) other = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *actual = NULL;
  g_autofree char *after_truncate = NULL;
  TmpStore tmp;

  for (guint i = 0; i < G_N_ELEMENTS (user_blocks); i++)
    g_ptr_array_add (user, (char *)user_blocks[i]);
  for (guint i = 0; i < G_N_ELEMENTS (assistant_blocks); i++)
    g_ptr_array_add (assistant, (char *)assistant_blocks[i]);
  for (guint i = 0; i < G_N_ELEMENTS (result_blocks); i++)
    g_ptr_array_add (result, (char *)result_blocks[i]);
  g_ptr_array_add (other, "{\"type\":\"text\",\"text\":\"draft\"}");

  for (guint m = 0; m < 3; m++)
    {
      GPtrArray *blocks = m == 0 ? user : m == 1 ? assistant : result;
      g_autoptr(GString) content = g_string_new ("[");

      for (guint i = 0; i < blocks->len; i++)
        g_string_append_printf (content, "%s%s", i ? "," : "", (char *)blocks->pdata[i]);
      g_string_append_c (content, ']');
      g_assert_true (tally_conversation_append_message_json (original, m == 1 ? "assistant" : "user",
                                                             content->str, &error));
      g_assert_no_error (error);
    }
  expected = tally_conversation_dup_messages_json (original);

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("conv", 1, "Conversation", "m"), NULL);
  g_assert_true (tally_store_save_message (store, "conv", 0, "user", user, &error));
  g_assert_true (tally_store_save_message (store, "conv", 1, "assistant", other, &error));
  /* Replacing a message replaces all of its blocks */
  g_assert_true (tally_store_save_message (store, "conv", 1, "assistant", assistant, &error));
  g_assert_true (tally_store_save_message (store, "conv", 2, "user", result, &error));
  g_assert_true (tally_store_save_message (store, "conv", 3, "assistant", other, &error));
  g_assert_no_error (error);
  g_assert_true (tally_store_truncate_messages (store, "conv", 3, &error));
  g_assert_false (tally_store_save_message (store, "conv", 4, "system", other, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);
  flush_ok (store);

  g_assert_true (tally_store_load_conversation (store, "conv", loaded, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (tally_conversation_get_n_messages (loaded), ==, 3);
  actual = tally_conversation_dup_messages_json (loaded);
  g_assert_cmpstr (actual, ==, expected);
  for (guint i = 0; i < assistant->len; i++)
    g_assert_cmpstr (g_ptr_array_index (tally_conversation_get_blocks (loaded, 1), i), ==, assistant_blocks[i]);

  /* Blocks are stored verbatim in the table too */
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM messages WHERE session_id = 'conv'"), ==, 6);

  g_assert_true (tally_store_truncate_messages (store, "conv", 1, &error));
  flush_ok (store);
  g_assert_true (tally_store_load_conversation (store, "conv", truncated, &error));
  after_truncate = tally_conversation_dup_messages_json (truncated);
  g_assert_cmpuint (tally_conversation_get_n_messages (truncated), ==, 1);
  {
    g_autofree char *first = tally_conversation_dup_message_json (original, 0);
    g_autofree char *only_first = g_strdup_printf ("[%s]", first);

    g_assert_cmpstr (after_truncate, ==, only_first);
  }

  g_assert_false (tally_store_load_conversation (store, "nope", loaded, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Search and export */

static void
fill_search_sessions (TallyStore *store)
{
  append (store, ev_session_created ("search-a", 1, "Weekly numbers", "claude-sonnet-5"), NULL);
  append (store, ev_turn_started ("search-a", 2, "t1", "Show weekly espresso revenue", "ask"), NULL);
  append (store, ev_text_delta ("search-a", 3, "t1", "The Har"), NULL);
  append (store, ev_text_delta ("search-a", 4, "t1", "bor store outsold the rest."), NULL);
  append (store, ev_turn_finished ("search-a", 5, "t1", 0.02, 1, 1, 0, 0), NULL);

  append (store, ev_session_created ("search-b", 101, "Inventory", "claude-sonnet-5"), NULL);
  append (store, ev_turn_started ("search-b", 102, "t1", "How many muffins are left?", "ask"), NULL);
  append (store, ev_text_delta ("search-b", 103, "t1", "Forty-two blueberry muffins."), NULL);
  /* turn still running: its text is indexed on flush */
}

static guint
search_count (TallyStore *store,
              const char *text,
              const char *expect_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) hits = tally_store_search (store, text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (hits);
  if (expect_id != NULL)
    {
      g_assert_cmpuint (hits->len, >=, 1);
      g_assert_cmpstr (((TallySessionInfo *)hits->pdata[0])->id, ==, expect_id);
      g_assert_nonnull (((TallySessionInfo *)hits->pdata[0])->snippet);
    }
  return hits->len;
}

static void
search_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  GPtrArray **out = user_data;
  g_autoptr(GError) error = NULL;

  *out = tally_store_search_finish (TALLY_STORE (object), result, &error);
  g_assert_no_error (error);
}

static void
test_search (void)
{
  static const char *hostile[] = {
    "\"", "*", "AND", "(", "espresso AND (", "NEAR(", "\"unbalanced", "a:b", "-", "^x", "OR OR",
    "espresso\"", "{col}", "   ", "",
  };
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GPtrArray) async_hits = NULL;
  g_autoptr(GError) error = NULL;
  TallySessionInfo *hit;
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  fill_search_sessions (store);
  flush_ok (store);

  /* A word of a prompt */
  hits = tally_store_search (store, "espresso", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  hit = hits->pdata[0];
  g_assert_cmpstr (hit->id, ==, "search-a");
  g_assert_cmpstr (hit->title, ==, "Weekly numbers");
  g_assert_true (strstr (hit->snippet, "«espresso»") != NULL);

  /* A word only in assistant text, split across two deltas */
  g_assert_cmpuint (search_count (store, "harbor", "search-a"), ==, 1);
  g_assert_cmpuint (search_count (store, "outsold", "search-a"), ==, 1);
  /* A running turn's text after a flush; a title; a prefix; diacritics */
  g_assert_cmpuint (search_count (store, "blueberry", "search-b"), ==, 1);
  g_assert_cmpuint (search_count (store, "Inventory", "search-b"), ==, 1);
  g_assert_cmpuint (search_count (store, "muff", "search-b"), ==, 1);
  g_assert_cmpuint (search_count (store, "weekly", NULL), ==, 1);
  g_assert_cmpuint (search_count (store, "espresso muffins", NULL), ==, 0);
  g_assert_cmpuint (search_count (store, "croissant", NULL), ==, 0);

  /* FTS5 syntax is taken literally and never fails */
  for (guint i = 0; i < G_N_ELEMENTS (hostile); i++)
    search_count (store, hostile[i], NULL);
  g_assert_cmpuint (search_count (store, "espresso\"", "search-a"), ==, 1);
  g_assert_cmpuint (search_count (store, "(espresso)", "search-a"), ==, 1);

  /* The same through a worker thread */
  tally_store_search_async (store, "harbor", NULL, search_done_cb, &async_hits);
  while (async_hits == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (async_hits->len, ==, 1);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static void
test_export (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) expected_jsonl = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *markdown = NULL;
  g_autofree char *jsonl = NULL;
  g_autoptr(GString) long_result = g_string_new (NULL);
  TmpStore tmp;

  for (guint i = 0; i < 100; i++)
    g_string_append_printf (long_result, "store %u | %u.00\n", i, i * 10);

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("exp", 1, "Revenue by store", "claude-sonnet-5"), lines);
  append (store, ev_turn_started ("exp", 2, "t1", "Which store earned most\nlast month?", "ask"), lines);
  append (store, ev_text_delta ("exp", 3, "t1", "Let me check the sales table."), lines);
  append (store, ev_tool_use ("exp", 4, "t1", "toolu_9",
                              "SELECT store, sum(amount) FROM sales GROUP BY store ORDER BY 2 DESC"), lines);
  append (store, ev_tool_result ("exp", 5, "t1", "toolu_9", long_result->str), lines);
  {
    JsonObject *fields = tally_event_new (TALLY_EVENT_ERROR);

    json_object_set_string_member (fields, "kind", "stream");
    json_object_set_string_member (fields, "message", "Overloaded");
    json_object_set_boolean_member (fields, "retryable", TRUE);
    json_object_set_null_member (fields, "request_id");
    append (store, stamp (fields, "exp", 6, "t1"), lines);
  }
  {
    JsonObject *fields = tally_event_new (TALLY_EVENT_TEXT_DELTA);

    json_object_set_int_member (fields, "call", 1);
    json_object_set_int_member (fields, "block", 0);
    json_object_set_string_member (fields, "text", "**Harbor** earned the most.");
    append (store, stamp (fields, "exp", 7, "t1"), lines);
  }
  append (store, ev_turn_finished ("exp", 8, "t1", 0.0123, 1200, 345, 0, 0), lines);
  flush_ok (store);

  markdown = tally_export_session_markdown (store, "exp", &error);
  g_assert_no_error (error);
  g_test_message ("%s", markdown);
  g_assert_true (g_str_has_prefix (markdown, "# Revenue by store\n"));
  g_assert_true (strstr (markdown, "- **Date:** 2023-11-14 22:13 UTC\n") != NULL);
  g_assert_true (strstr (markdown, "- **Model:** claude-sonnet-5\n") != NULL);
  g_assert_true (strstr (markdown, "- **Database:** beanline.sqlite\n") != NULL);
  g_assert_true (strstr (markdown, "**You:**\n\n> Which store earned most\n> last month?\n") != NULL);
  g_assert_true (strstr (markdown, "Let me check the sales table.\n") != NULL);
  g_assert_true (strstr (markdown, "**Tool:** `query_database`\n\n```sql\n"
                                   "SELECT store, sum(amount) FROM sales GROUP BY store ORDER BY 2 DESC\n```\n") != NULL);
  g_assert_true (strstr (markdown, "Result:\n\n```\nstore 0 | 0.00\n") != NULL);
  g_assert_true (strstr (markdown, "store 19 | 190.00\n… (80 more lines)\n```\n") != NULL);
  g_assert_null (strstr (markdown, "store 20 |"));
  g_assert_true (strstr (markdown, "> **Error** (stream): Overloaded\n") != NULL);
  g_assert_true (strstr (markdown, "**Harbor** earned the most.\n") != NULL);
  g_assert_true (strstr (markdown, "*Receipt: $0.0123 · 1,200 input + 345 output tokens · 4.2 s*\n") != NULL);

  jsonl = tally_store_export_jsonl (store, "exp", &error);
  g_assert_no_error (error);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (expected_jsonl, "%s\n", (char *)lines->pdata[i]);
  g_assert_cmpstr (jsonl, ==, expected_jsonl->str);

  g_assert_null (tally_export_session_markdown (store, "missing", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static JsonObject *
ev_stream_delta (TallyEventType type,
                 gint64         seq,
                 gint64         block,
                 const char    *text)
{
  JsonObject *fields = tally_event_new (type);

  json_object_set_int_member (fields, "call", 0);
  json_object_set_int_member (fields, "block", block);
  json_object_set_string_member (fields, "text", text);
  return stamp (fields, "exp2", seq, "t1");
}

/* The export walks the reducer's blocks: thinking is counted over its whole
 * text (a word split across two deltas is one word, as in the thinking
 * drawer), and a denial stands between its tool call and the result. */
static void
test_export_thinking_and_denial (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *markdown = NULL;
  const char *tool, *denied, *result;
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("exp2", 1, "Quarterly", "claude-sonnet-5"), NULL);
  append (store, ev_turn_started ("exp2", 2, "t1", "Sum the quarter", "ask"), NULL);
  append (store, ev_stream_delta (TALLY_EVENT_THINKING_DELTA, 3, 0, "The quar"), NULL);
  append (store, ev_stream_delta (TALLY_EVENT_THINKING_DELTA, 4, 0, "terly sum"), NULL);
  {
    JsonObject *fields = tally_event_new (TALLY_EVENT_BLOCK_DONE);

    json_object_set_int_member (fields, "call", 0);
    json_object_set_int_member (fields, "block", 0);
    json_object_set_string_member (fields, "kind", "thinking");
    append (store, stamp (fields, "exp2", 5, "t1"), NULL);
  }
  append (store, ev_stream_delta (TALLY_EVENT_TEXT_DELTA, 6, 1, "Deleting the old file."), NULL);
  {
    JsonObject *fields = tally_event_new (TALLY_EVENT_TOOL_USE_START);
    JsonObject *input = json_object_new ();

    json_object_set_string_member (input, "command", "rm old.csv");
    json_object_set_string_member (fields, "tool_id", "toolu_rm");
    json_object_set_string_member (fields, "tool_name", "Bash");
    json_object_set_object_member (fields, "tool_input", input);
    append (store, stamp (fields, "exp2", 7, "t1"), NULL);
  }
  {
    JsonObject *fields = tally_event_new (TALLY_EVENT_APPROVAL_REQUEST);
    JsonObject *input = json_object_new ();

    json_object_set_string_member (input, "command", "rm old.csv");
    json_object_set_string_member (fields, "approval_id", "appr_1");
    json_object_set_string_member (fields, "tool_id", "toolu_rm");
    json_object_set_string_member (fields, "tool_name", "Bash");
    json_object_set_object_member (fields, "tool_input", input);
    append (store, stamp (fields, "exp2", 8, "t1"), NULL);
  }
  {
    JsonObject *fields = tally_event_new (TALLY_EVENT_APPROVAL_RESOLVED);

    json_object_set_string_member (fields, "approval_id", "appr_1");
    json_object_set_string_member (fields, "tool_id", "toolu_rm");
    json_object_set_string_member (fields, "decision", "deny");
    json_object_set_string_member (fields, "reason", "user");
    json_object_set_string_member (fields, "message", "keep it");
    append (store, stamp (fields, "exp2", 9, "t1"), NULL);
  }
  append (store, ev_tool_result ("exp2", 10, "t1", "toolu_rm", "The analyst denied this: keep it"), NULL);
  flush_ok (store);

  markdown = tally_export_session_markdown (store, "exp2", &error);
  g_assert_no_error (error);
  g_test_message ("%s", markdown);
  g_assert_nonnull (strstr (markdown, "*Thought for 3 words.*\n\nDeleting the old file.\n\n"));
  tool = strstr (markdown, "**Tool:** `Bash`\n\n```sh\nrm old.csv\n```\n");
  denied = strstr (markdown, "*Denied (user): keep it*\n");
  result = strstr (markdown, "Result:\n\n```\nThe analyst denied this: keep it\n```\n");
  g_assert_nonnull (tool);
  g_assert_nonnull (denied);
  g_assert_nonnull (result);
  g_assert_true (tool < denied && denied < result);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Write failures */

static void
test_write_failure (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *big = g_strnfill (3000, 'x');
  Failure failure = { 0 };
  gint64 pages = 0;
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  g_signal_connect (store, "write-failed", G_CALLBACK (write_failed_cb), &failure);

  append (store, ev_session_created ("full", 1, "Full disk", "m"), lines);
  for (gint64 seq = 2; seq <= 20; seq++)
    append (store, ev_text_delta ("full", seq, "t", "before"), lines);
  flush_ok (store);
  g_assert_null (tally_store_dup_write_error (store));

  /* No room to grow */
  g_assert_true (tally_store_set_max_page_count_for_testing (store, 1, &pages, &error));
  g_assert_no_error (error);
  g_assert_cmpint (pages, >, 1);

  for (gint64 seq = 21; seq <= 220; seq++)
    append (store, ev_text_delta ("full", seq, "t", big), lines);

  wait_for_failure (&failure);
  g_assert_error (failure.error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_FULL);
  g_assert_true (strstr (failure.error->message, tmp.path) != NULL);

  g_assert_false (tally_store_flush (store, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_FULL);
  g_clear_error (&error);
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM events"), ==, 20);
  error = tally_store_dup_write_error (store);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_FULL);
  g_clear_error (&error);

  /* Room again: the kept events are written by the next flush */
  g_assert_true (tally_store_set_max_page_count_for_testing (store, 1073741823, &pages, &error));
  g_assert_no_error (error);
  flush_ok (store);
  g_assert_null (tally_store_dup_write_error (store));

  stored = tally_store_load_event_lines (store, "full", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (stored->len, ==, 220);
  for (guint i = 0; i < stored->len; i++)
    g_assert_cmpstr (stored->pdata[i], ==, lines->pdata[i]);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (failure.count, >=, 2);   /* the first failure and the failed flush */

  g_clear_error (&failure.error);
  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* Item 10 of issue 10: a session's writer lock is held by one store object
 * at a time (other processes open their own), shared within one, and gone
 * with its holder. */
static void
test_session_lock (void)
{
  g_autoptr(TallyStore) one = NULL;
  g_autoptr(TallyStore) two = NULL;
  g_autoptr(GError) error = NULL;
  TmpStore tmp;

  tmp_store_init (&tmp);
  one = open_store (tmp.path);
  two = open_store (tmp.path);

  g_assert_true (tally_store_lock_session (one, "session-a", &error));
  g_assert_no_error (error);
  g_assert_true (tally_store_lock_session (one, "session-a", &error));   /* a second holder here */
  g_assert_no_error (error);

  g_assert_false (tally_store_lock_session (two, "session-a", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED);
  g_assert_nonnull (strstr (error->message, "This session is open in another Tally window or process"));
  g_clear_error (&error);
  /* Asking takes nothing: open elsewhere for the other store, not for
   * the holder, and not for a session nobody holds. */
  g_assert_true (tally_store_session_is_open_elsewhere (two, "session-a"));
  g_assert_false (tally_store_session_is_open_elsewhere (one, "session-a"));
  g_assert_false (tally_store_session_is_open_elsewhere (two, "session-c"));
  g_assert_true (tally_store_lock_session (two, "session-c", &error));
  g_assert_no_error (error);
  tally_store_unlock_session (two, "session-c");

  /* Another session is free */
  g_assert_true (tally_store_lock_session (two, "session-b", &error));
  g_assert_no_error (error);

  /* The last of the two holds lets go */
  tally_store_unlock_session (one, "session-a");
  g_assert_false (tally_store_lock_session (two, "session-a", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED);
  g_clear_error (&error);
  tally_store_unlock_session (one, "session-a");
  g_assert_true (tally_store_lock_session (two, "session-a", &error));
  g_assert_no_error (error);

  /* A holder that goes away (here: finalized; a crash closes it too) */
  g_assert_false (tally_store_lock_session (one, "session-b", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED);
  g_clear_error (&error);
  g_clear_object (&two);
  g_assert_true (tally_store_lock_session (one, "session-b", &error));
  g_assert_no_error (error);

  g_clear_object (&one);
  tmp_store_clear (&tmp);
}

/* Item 11 of issue 10: a store damaged in the middle is refused, and
 * salvage copies every readable session into a new store, says what was
 * lost, and never writes to the damaged file. */
static void
test_salvage (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *lines[3] = { NULL };
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autofree char *out = NULL;
  g_autofree char *wal = NULL;
  g_autofree char *leaf_sql = NULL;
  g_autofree char *filler = g_strnfill (300, 'q');
  const char *ids[3] = { "salvage-a", "salvage-b", "salvage-c" };
  TallySalvageReport report = { 0 };
  gint64 sessions_root, leaves, first_b, last_b, damaged_leaf;
  guint64 total = 0;
  TmpStore tmp;

  tmp_store_init (&tmp);
  out = g_build_filename (tmp.dir, "salvaged.db", NULL);
  wal = g_strconcat (tmp.path, "-wal", NULL);

  /* Three sessions of 200 events each, one after the other in the file */
  store = open_store (tmp.path);
  for (guint s = 0; s < 3; s++)
    {
      lines[s] = g_ptr_array_new_with_free_func (g_free);
      append (store, ev_session_created (ids[s], 1, ids[s], "claude-sonnet-5"), lines[s]);
      append (store, ev_turn_started (ids[s], 2, "t1", "How much?", "ask"), lines[s]);
      for (gint64 seq = 3; seq <= 200; seq++)
        {
          g_autofree char *text = g_strdup_printf ("%s %" G_GINT64_FORMAT " %s", ids[s], seq, filler);

          append (store, ev_text_delta (ids[s], seq, "t1", text), lines[s]);
        }
      flush_ok (store);
    }
  g_clear_object (&store);
  sql_exec (tmp.path, "PRAGMA wal_checkpoint (TRUNCATE)");
  g_unlink (wal);

  /* Damage the sessions table and an events page in the middle of b's run */
  sessions_root = sql_int (tmp.path, "SELECT rootpage FROM sqlite_schema WHERE name = 'sessions'");
  leaves = sql_int (tmp.path, "SELECT count (*) FROM dbstat WHERE name = 'events' AND pagetype = 'leaf'");
  g_assert_cmpint (leaves, >, 20);
  first_b = sql_int (tmp.path, "SELECT min (rowid) FROM events WHERE session_id = 'salvage-b'");
  last_b = sql_int (tmp.path, "SELECT max (rowid) FROM events WHERE session_id = 'salvage-b'");
  leaf_sql = g_strdup_printf ("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' "
                              "ORDER BY path LIMIT 1 OFFSET %" G_GINT64_FORMAT, leaves / 2);
  damaged_leaf = sql_int (tmp.path, leaf_sql);
  g_assert_cmpint (first_b, <, last_b);
  tally_test_damage_page (tmp.path, sessions_root, 7);
  tally_test_damage_page (tmp.path, damaged_leaf, 8);
  before = tally_test_read_bytes (tmp.path);

  g_assert_null (tally_store_open (tmp.path, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT);
  g_clear_error (&error);

  g_assert_true (tally_store_salvage (tmp.path, out, &report, &error));
  g_assert_no_error (error);

  /* The damaged file was only read */
  after = tally_test_read_bytes (tmp.path);
  g_assert_true (g_bytes_equal (before, after));
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));

  g_assert_cmpuint (report.sessions_salvaged, ==, 3);
  g_assert_cmpuint (report.sessions_rebuilt, ==, 3);   /* their rows were on the damaged page */
  g_assert_cmpuint (report.sessions_lost, ==, 0);
  g_assert_cmpuint (report.damaged_regions, >=, 2);
  g_assert_cmpuint (report.events_lost, >, 0);
  g_assert_cmpuint (report.events_salvaged + report.events_lost, ==, 600);

  /* A store that opens; a and c whole, b with a gap, its title rebuilt */
  store = open_store (out);
  sessions = tally_store_list_sessions (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 3);
  for (guint s = 0; s < 3; s++)
    {
      g_autoptr(GPtrArray) stored = tally_store_load_event_lines (store, ids[s], &error);
      g_autoptr(TallySessionInfo) info = tally_store_find_session (store, ids[s], &error);
      guint j = 0;

      g_assert_no_error (error);
      g_assert_cmpstr (info->title, ==, ids[s]);
      g_assert_cmpint (info->turns, ==, 1);
      for (guint i = 0; i < stored->len; i++)
        {
          while (j < lines[s]->len && g_strcmp0 (lines[s]->pdata[j], stored->pdata[i]) != 0)
            j++;
          g_assert_cmpuint (j, <, lines[s]->len);   /* every salvaged line is an original, in order */
        }
      if (s != 1)
        g_assert_cmpuint (stored->len, ==, 200);
      total += stored->len;
    }
  g_assert_cmpuint (total, ==, report.events_salvaged);

  /* Salvage never replaces a file */
  g_assert_false (tally_store_salvage (tmp.path, out, &report, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO);

  for (guint s = 0; s < 3; s++)
    g_ptr_array_unref (lines[s]);
  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Sessions the store cannot keep, conversations salvage lost */

#define TWO_ANSWERS \
  "{\"responses\":[" \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"One.\"}],\"stop_reason\":\"end_turn\"}}," \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Two.\"}],\"stop_reason\":\"end_turn\"}}" \
  "]}"

typedef struct {
  GMainLoop       *loop;
  GError          *error;
  TallyTurnStatus  status;
  GPtrArray       *events;   /* JsonObject*, the turn's events */
} TurnRun;

static void
turn_event_cb (TallyAgent *agent,
               JsonObject *event,
               TurnRun    *run)
{
  g_ptr_array_add (run->events, json_object_ref (event));
}

static void
turn_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  TurnRun *run = user_data;

  run->status = tally_session_send_finish (TALLY_SESSION (object), result, &run->error);
  g_main_loop_quit (run->loop);
}

/* Runs one turn of @session; its events and outcome are in @run */
static void
run_session_turn (TallySession *session,
                  const char   *text,
                  TurnRun      *run)
{
  TallyAgent *agent = tally_session_get_agent (session);
  gulong handler;

  run->loop = g_main_loop_new (NULL, FALSE);
  run->events = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  handler = g_signal_connect (agent, "event", G_CALLBACK (turn_event_cb), run);
  tally_session_send_async (session, &(TallyTurnRequest) { .text = text, .mode = TALLY_MODE_ASK },
                            NULL, turn_done_cb, run);
  g_main_loop_run (run->loop);
  g_signal_handler_disconnect (agent, handler);
}

static void
turn_run_clear (TurnRun *run)
{
  g_clear_pointer (&run->loop, g_main_loop_unref);
  g_clear_pointer (&run->events, g_ptr_array_unref);
  g_clear_error (&run->error);
}

/* A session of one finished turn, made by a real session against @mock
 * and kept in the store at @path, which is closed again */
static char *
make_one_turn_session (const char    *path,
                       TallyTestMock *mock)
{
  g_autoptr(TallyStore) store = open_store (path);
  g_autoptr(TallyClient) client = tally_client_new (tally_test_mock_get_base_url (mock), "sk-test-key");
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new_default ();
  g_autoptr(TallySession) session = tally_session_new (store, client, tools);
  TurnRun run = { 0 };
  char *id;

  run_session_turn (session, "How much did we sell?", &run);
  g_assert_no_error (run.error);
  g_assert_cmpint (run.status, ==, TALLY_TURN_DONE);
  turn_run_clear (&run);
  id = g_strdup (tally_session_get_id (session));
  tally_session_wait_snapshots ();
  return id;
}

static guint
count_event_type (GPtrArray  *events,
                  const char *type)
{
  guint n = 0;

  for (guint i = 0; i < events->len; i++)
    n += g_strcmp0 (tally_event_get_type_name (g_ptr_array_index (events, i)), type) == 0;
  return n;
}

/* Found by a reviewer: a session resumed on a store that opened read-only
 * (a file system remounted read-only; here a store written by a newer
 * Tally, which takes the same path) sent its turn, ended it `done` and
 * kept nothing. The turn fails at its first event, before any request,
 * with an `error` of kind `store` naming the file, and the log is as it
 * was. (tally-cli refuses such a resume before even opening the session:
 * /tally/cli/resume-read-only-store; the window sends through this path.) */
static void
test_read_only_turn (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (TWO_ANSWERS, &error);
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallyClient) client = NULL;
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new_default ();
  g_autoptr(TallySession) session = NULL;
  g_autoptr(GPtrArray) lines_before = NULL;
  g_autoptr(GPtrArray) lines_after = NULL;
  g_autofree char *id = NULL;
  JsonObject *event;
  TurnRun run = { 0 };
  TmpStore tmp;

  g_assert_no_error (error);
  tmp_store_init (&tmp);
  id = make_one_turn_session (tmp.path, mock);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  sql_exec (tmp.path, "PRAGMA user_version = 99");

  store = open_store (tmp.path);
  g_assert_true (tally_store_is_read_only (store));
  lines_before = tally_store_load_event_lines (store, id, &error);
  g_assert_no_error (error);
  client = tally_client_new (tally_test_mock_get_base_url (mock), "sk-test-key");
  session = tally_session_open (store, id, client, tools, &error);
  g_assert_no_error (error);

  run_session_turn (session, "And the month before?", &run);
  g_assert_cmpint (run.status, ==, TALLY_TURN_FAILED);
  g_assert_error (run.error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (run.error->message, tmp.path));

  /* Nothing was sent */
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  g_assert_cmpuint (count_event_type (run.events, "request_sent"), ==, 0);
  g_assert_cmpuint (count_event_type (run.events, "api_call"), ==, 0);
  g_assert_cmpuint (run.events->len, ==, 3);
  g_assert_cmpstr (tally_event_get_type_name (g_ptr_array_index (run.events, 0)), ==, "turn_started");
  event = g_ptr_array_index (run.events, 1);
  g_assert_cmpstr (tally_event_get_type_name (event), ==, "error");
  g_assert_cmpstr (json_object_get_string_member (event, "kind"), ==, "store");
  g_assert_false (json_object_get_boolean_member (event, "retryable"));
  g_assert_nonnull (strstr (json_object_get_string_member (event, "message"), tmp.path));
  event = g_ptr_array_index (run.events, 2);
  g_assert_cmpstr (tally_event_get_type_name (event), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (event, "status"), ==, "failed");
  turn_run_clear (&run);

  /* The log is as it was */
  lines_after = tally_store_load_event_lines (store, id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lines_after->len, ==, lines_before->len);

  g_clear_object (&session);
  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* Overwrites page @page (1-based, 4096 bytes) of @path with 0x55, as the
 * reviewer did */
static void
fill_page (const char *path,
           gint64      page)
{
  guint8 bytes[4096];
  FILE *file;

  memset (bytes, 0x55, sizeof bytes);
  file = fopen (path, "r+b");
  g_assert_nonnull (file);
  g_assert_cmpint (fseek (file, (page - 1) * 4096, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (bytes, 1, sizeof bytes, file), ==, sizeof bytes);
  fclose (file);
}

/* Found by a reviewer: with the page of the `messages` table damaged,
 * salvage kept no conversation block and reported "0 conversation blocks
 * left out", and a resumed session sent only the new prompt while its
 * transcript showed everything. The primary key's index still names the
 * blocks: they are counted lost, the sessions' logs end with an error
 * saying so, and the opened session tells it. */
static void
test_salvage_lost_conversation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (TWO_ANSWERS, &error);
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new_default ();
  g_autoptr(TallySession) session = NULL;
  char *ids[2] = { NULL };
  g_autofree char *out = NULL;
  g_autofree char *wal = NULL;
  TallySalvageReport report = { 0 };
  gint64 blocks, root;
  TmpStore tmp;

  g_assert_no_error (error);
  tmp_store_init (&tmp);
  out = g_build_filename (tmp.dir, "salvaged.db", NULL);
  wal = g_strconcat (tmp.path, "-wal", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    ids[i] = make_one_turn_session (tmp.path, mock);
  sql_exec (tmp.path, "PRAGMA wal_checkpoint (TRUNCATE)");
  g_unlink (wal);

  blocks = sql_int (tmp.path, "SELECT count (*) FROM messages");
  g_assert_cmpint (blocks, >=, 4);   /* each: the prompt and the answer */
  root = sql_int (tmp.path, "SELECT rootpage FROM sqlite_schema WHERE name = 'messages'");
  fill_page (tmp.path, root);

  g_assert_true (tally_store_salvage (tmp.path, out, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.sessions_salvaged, ==, 2);
  g_assert_cmpuint (report.sessions_lost, ==, 0);
  g_assert_cmpuint (report.events_lost, ==, 0);
  g_assert_cmpuint (report.messages_lost, ==, (guint64)blocks);
  g_assert_cmpuint (report.messages_dropped, ==, 0);
  g_assert_cmpuint (report.conversations_cut, ==, 2);
  g_assert_cmpuint (report.damaged_regions, >=, 1);
  g_assert_cmpint (sql_int (out, "SELECT count (*) FROM messages"), ==, 0);

  /* Each log ends with the error that says so */
  store = open_store (out);
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autoptr(GPtrArray) events = tally_store_load_events (store, ids[i], NULL, &error);
      JsonObject *marker;

      g_assert_no_error (error);
      g_assert_cmpuint (events->len, ==, report.events_salvaged / 2 + 1);
      marker = g_ptr_array_index (events, events->len - 1);
      g_assert_cmpstr (tally_event_get_type_name (marker), ==, "error");
      g_assert_cmpstr (json_object_get_string_member (marker, "kind"), ==, "store");
      g_assert_true (json_object_get_boolean_member (marker, "context_lost"));
      g_assert_cmpint (json_object_get_int_member (marker, "seq"), ==, (gint64)events->len);
    }

  /* A resumed session tells it, and shows it */
  session = tally_session_open (store, ids[0], NULL, tools, &error);
  g_assert_no_error (error);
  g_assert_nonnull (tally_session_get_lost_context (session));
  g_assert_nonnull (strstr (tally_session_get_lost_context (session), "model"));
  g_assert_cmpuint (tally_conversation_get_n_messages (tally_agent_get_conversation (tally_session_get_agent (session))),
                    ==, 0);
  {
    GListModel *blocks_model = G_LIST_MODEL (tally_session_get_transcript (session));
    g_autoptr(TallyBlock) block = g_list_model_get_item (blocks_model, g_list_model_get_n_items (blocks_model) - 1);

    g_assert_cmpint (tally_block_get_kind (block), ==, TALLY_BLOCK_ERROR);
    g_assert_cmpstr (tally_block_get_text (block), ==, tally_session_get_lost_context (session));
  }

  /* Salvaging a whole store says nothing of the kind, also for sessions
   * whose conversation was gone before (the salvaged one) */
  g_clear_object (&session);
  g_clear_object (&store);
  {
    g_autofree char *again = g_build_filename (tmp.dir, "again.db", NULL);
    TallySalvageReport whole = { 0 };

    g_assert_true (tally_store_salvage (out, again, &whole, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (whole.sessions_salvaged, ==, 2);
    g_assert_cmpuint (whole.messages_lost, ==, 0);
    g_assert_cmpuint (whole.conversations_cut, ==, 0);
    g_assert_cmpuint (whole.damaged_regions, ==, 0);
    g_assert_cmpint (sql_int (again, "SELECT count (*) FROM events"), ==,
                     sql_int (out, "SELECT count (*) FROM events"));
  }

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    g_free (ids[i]);
  tmp_store_clear (&tmp);
}

/* }}} */
/* {{{ Sessions, rules, plans, async */

static void
test_sessions_manage (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallySessionInfo) found = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;
  TallySessionInfo *none;
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  append (store, ev_session_created ("7f3a9c00-0001", 1, "First", "m"), NULL);
  append (store, ev_session_created ("7f3a9c00-0002", 2, "Second", "m"), NULL);
  append (store, ev_turn_started ("7f3a9c00-0002", 3, "t", "cappuccino", "ask"), NULL);
  append (store, ev_session_created ("b0b0cafe", 4, "Third", "m"), NULL);
  flush_ok (store);

  found = tally_store_find_session (store, "b0b0", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (found->id, ==, "b0b0cafe");
  g_clear_pointer (&found, tally_session_info_unref);
  found = tally_store_find_session (store, "7f3a9c00-0001", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (found->title, ==, "First");

  none = tally_store_find_session (store, "7f3a", &error);
  g_assert_null (none);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_AMBIGUOUS);
  g_assert_true (strstr (error->message, "7f3a9c00-0001") != NULL);
  g_clear_error (&error);
  none = tally_store_find_session (store, "b0b", &error);
  g_assert_null (none);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  none = tally_store_find_session (store, "zzzzzz", &error);
  g_assert_null (none);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Rename: list and search follow */
  g_assert_true (tally_store_rename_session (store, "b0b0cafe", "Flat white forecast", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (search_count (store, "forecast", "b0b0cafe"), ==, 1);
  g_assert_cmpuint (search_count (store, "Third", NULL), ==, 0);
  g_assert_false (tally_store_rename_session (store, "missing", "x", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Delete cascades to events and search text */
  g_assert_true (tally_store_save_plan (store, "plan-x", 1, "7f3a9c00-0002", "# Plan", &error));
  g_assert_true (tally_store_delete_session (store, "7f3a9c00-0002", &error));
  g_assert_no_error (error);
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM events WHERE session_id = '7f3a9c00-0002'"), ==, 0);
  g_assert_cmpint (sql_int (tmp.path, "SELECT count(*) FROM plans"), ==, 0);
  g_assert_cmpuint (search_count (store, "cappuccino", NULL), ==, 0);
  g_assert_null (tally_store_load_events (store, "7f3a9c00-0002", NULL, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (tally_store_delete_session (store, "7f3a9c00-0002", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* The id can be used again from seq 1 */
  append (store, ev_session_created ("7f3a9c00-0002", 1, "Reborn", "m"), NULL);
  flush_ok (store);

  sessions = tally_store_list_sessions (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 3);
  g_assert_cmpstr (((TallySessionInfo *)sessions->pdata[0])->title, ==, "Flat white forecast");
  /* Same creation time as "First": the later row comes first */
  g_assert_cmpstr (((TallySessionInfo *)sessions->pdata[1])->title, ==, "Reborn");
  g_assert_cmpstr (((TallySessionInfo *)sessions->pdata[2])->title, ==, "First");

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

static void
test_rules_plans (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) rules = NULL;
  g_autoptr(GPtrArray) plans = NULL;
  g_autoptr(GError) error = NULL;
  gint64 global_id, ws_id, other_id;
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);

  global_id = tally_store_add_rule (store, "query_database", "allow", "global", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (global_id, >, 0);
  ws_id = tally_store_add_rule (store, "Write(reports/**)", "allow", "workspace", "/home/a/ws", &error);
  g_assert_no_error (error);
  other_id = tally_store_add_rule (store, "Bash(rm:*)", "deny", "workspace", "/home/a/other", &error);
  g_assert_no_error (error);
  g_assert_cmpint (tally_store_add_rule (store, "query_database", "allow", "global", NULL, &error), ==, global_id);
  g_assert_cmpint (tally_store_add_rule (store, "x", "maybe", "global", NULL, &error), ==, 0);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_cmpint (tally_store_add_rule (store, "x", "allow", "workspace", NULL, &error), ==, 0);
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);

  rules = tally_store_list_rules (store, "/home/a/ws", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rules->len, ==, 2);
  g_assert_cmpint (((TallyRule *)rules->pdata[0])->id, ==, global_id);
  g_assert_cmpstr (((TallyRule *)rules->pdata[1])->pattern, ==, "Write(reports/**)");
  g_assert_cmpstr (((TallyRule *)rules->pdata[1])->workspace, ==, "/home/a/ws");
  g_clear_pointer (&rules, g_ptr_array_unref);

  g_assert_true (tally_store_remove_rule (store, ws_id, &error));
  g_assert_false (tally_store_remove_rule (store, ws_id, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  rules = tally_store_list_rules (store, NULL, &error);
  g_assert_cmpuint (rules->len, ==, 2);
  g_assert_cmpint (((TallyRule *)rules->pdata[1])->id, ==, other_id);
  g_assert_cmpstr (((TallyRule *)rules->pdata[1])->decision, ==, "deny");

  g_assert_true (tally_store_save_plan (store, "plan-1", 1, NULL, "1. Look", &error));
  g_assert_true (tally_store_save_plan (store, "plan-1", 2, NULL, "1. Look\n2. Chart", &error));
  g_assert_no_error (error);
  g_assert_false (tally_store_save_plan (store, "plan-1", 2, NULL, "dup", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID);
  g_clear_error (&error);
  plans = tally_store_load_plan_versions (store, "plan-1", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plans->len, ==, 2);
  g_assert_cmpint (((TallyPlanVersion *)plans->pdata[0])->version, ==, 1);
  g_assert_cmpstr (((TallyPlanVersion *)plans->pdata[1])->markdown, ==, "1. Look\n2. Chart");
  g_assert_null (tally_store_load_plan_versions (store, "plan-2", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);

  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

typedef struct {
  GPtrArray *sessions;
  GPtrArray *events;
  GPtrArray *warnings;
  guint      pending;
} AsyncResults;

static void
list_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  AsyncResults *r = user_data;
  g_autoptr(GError) error = NULL;

  r->sessions = tally_store_list_sessions_finish (TALLY_STORE (object), result, &error);
  g_assert_no_error (error);
  r->pending--;
}

static void
events_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  AsyncResults *r = user_data;
  g_autoptr(GError) error = NULL;

  r->events = tally_store_load_events_finish (TALLY_STORE (object), result, &r->warnings, &error);
  g_assert_no_error (error);
  r->pending--;
}

static void
test_async (void)
{
  g_autoptr(TallyStore) store = NULL;
  AsyncResults r = { 0 };
  TmpStore tmp;

  tmp_store_init (&tmp);
  store = open_store (tmp.path);
  fill_search_sessions (store);
  flush_ok (store);

  r.pending = 2;
  tally_store_list_sessions_async (store, NULL, list_done_cb, &r);
  tally_store_load_events_async (store, "search-a", NULL, events_done_cb, &r);
  while (r.pending > 0)
    g_main_context_iteration (NULL, TRUE);

  g_assert_cmpuint (r.sessions->len, ==, 2);
  g_assert_cmpuint (r.events->len, ==, 5);
  g_assert_cmpuint (r.warnings->len, ==, 0);

  g_ptr_array_unref (r.sessions);
  g_ptr_array_unref (r.events);
  g_ptr_array_unref (r.warnings);
  g_clear_object (&store);
  tmp_store_clear (&tmp);
}

/* }}} */

int
main (int   argc,
      char *argv[])
{
  if (argc == 3 && g_str_equal (argv[1], "--crash-child"))
    return crash_child (argv[2]);

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/store/fresh", test_fresh);
  g_test_add_func ("/tally/store/migrate/v1", test_migrate_v1);
  g_test_add_func ("/tally/store/migrate/v2", test_migrate_v2);
  g_test_add_func ("/tally/store/migrate/v6", test_migrate_v6);
  g_test_add_func ("/tally/store/migrate/rerun", test_migrate_rerun);
  g_test_add_func ("/tally/store/migrate/failure", test_migrate_failure);
  g_test_add_func ("/tally/store/newer-schema", test_newer_schema);
  g_test_add_func ("/tally/store/corrupt", test_corrupt);
  g_test_add_func ("/tally/store/append-reload", test_append_reload);
  g_test_add_func ("/tally/store/seq-order", test_seq_order);
  g_test_add_func ("/tally/store/damaged-rows", test_damaged_rows);
  g_test_add_func ("/tally/store/crash", test_crash);
  g_test_add_func ("/tally/store/conversation", test_conversation);
  g_test_add_func ("/tally/store/search", test_search);
  g_test_add_func ("/tally/store/export", test_export);
  g_test_add_func ("/tally/store/export-thinking-and-denial", test_export_thinking_and_denial);
  g_test_add_func ("/tally/store/write-failure", test_write_failure);
  g_test_add_func ("/tally/store/session-lock", test_session_lock);
  g_test_add_func ("/tally/store/salvage", test_salvage);
  g_test_add_func ("/tally/store/salvage-lost-conversation", test_salvage_lost_conversation);
  g_test_add_func ("/tally/store/read-only-turn", test_read_only_turn);
  g_test_add_func ("/tally/store/sessions", test_sessions_manage);
  g_test_add_func ("/tally/store/rules-plans", test_rules_plans);
  g_test_add_func ("/tally/store/async", test_async);

  return g_test_run ();
}
