/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tally-store-private.h"

/*
 * Salvage (docs/architecture.md §10.9): a store damaged in the middle is
 * refused by tally_store_open(), but most of its b-trees usually still
 * read. Salvage copies the damaged file (and its WAL) into a scratch
 * folder, never opening the original with SQLite, and reads the copy table
 * by table and row by row in rowid order. Where a step fails, the scan
 * probes further rowids (doubling the distance, then bisecting back) until
 * a seek succeeds, and goes on from the first rowid that reads: the rows of
 * a damaged page are lost, the rest are kept. What was read goes into a
 * new store with the current schema; sessions whose `sessions` row was
 * lost are rebuilt from their events; conversations are cut before their
 * first missing part; the search index is rebuilt.
 */

typedef gboolean (*RowFunc) (sqlite3_stmt *row,
                             gpointer      data);

typedef struct {
  sqlite3            *src;
  sqlite3            *out;
  const char         *out_path;
  TallySalvageReport *report;
  sqlite3_stmt       *insert;
  JsonParser         *parser;
  gboolean            messages_damaged;  /* the scan of `messages` met damage */
  GHashTable         *cut;               /* session id -> its conversation lost a part */
} Salvage;

static gboolean
is_error (int rc)
{
  return rc != SQLITE_ROW && rc != SQLITE_DONE;
}

/* Steps "SELECT rowid, … WHERE rowid > ?1 ORDER BY rowid" once from @after */
static int
probe (sqlite3    *db,
       const char *sql,
       gint64      after)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_int64 (stmt, 1, after);
  return sqlite3_step (stmt);
}

/* After a failure past @failed: the smallest start beyond it from which a
 * seek reads (a row or the end), or FALSE when none is left. */
static gboolean
find_readable (sqlite3    *db,
               const char *sql,
               gint64      failed,
               gint64     *start)
{
  gint64 step = 1;
  gint64 good;
  gint64 bad = failed;

  for (;;)
    {
      if (failed > G_MAXINT64 - step)
        return FALSE;
      good = failed + step;
      if (!is_error (probe (db, sql, good)))
        break;
      bad = good;
      if (step > G_MAXINT64 / 2)
        return FALSE;
      step *= 2;
    }

  /* The first readable start in (bad, good] */
  while (good - bad > 1)
    {
      gint64 middle = bad + (good - bad) / 2;

      if (is_error (probe (db, sql, middle)))
        bad = middle;
      else
        good = middle;
    }

  *start = good;
  return TRUE;
}

/* Reads every row that can be read; @sql selects rowid first and takes the
 * rowid to start after as ?1. Returns FALSE only when @func fails. */
static gboolean
scan_table (Salvage    *salvage,
            const char *sql,
            RowFunc     func)
{
  gint64 after = G_MININT64;

  for (;;)
    {
      g_autoptr(sqlite3_stmt) stmt = NULL;
      int rc;

      rc = sqlite3_prepare_v2 (salvage->src, sql, -1, &stmt, NULL);
      if (rc != SQLITE_OK)
        {
          /* The table itself cannot be found or read (damaged schema) */
          g_message ("Salvage: cannot read with “%s”: %s", sql, sqlite3_errmsg (salvage->src));
          salvage->report->damaged_regions++;
          return TRUE;
        }
      sqlite3_bind_int64 (stmt, 1, after);

      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          gint64 rowid = sqlite3_column_int64 (stmt, 0);

          if (rowid <= after)
            continue;
          after = rowid;
          if (!func (stmt, salvage))
            return FALSE;
        }
      if (rc == SQLITE_DONE)
        return TRUE;

      /* Each search starts past the last rowid read or the last start, so
       * the scan always moves on */
      salvage->report->damaged_regions++;
      if (!find_readable (salvage->src, sql, after, &after))
        return TRUE;
    }
}

static const char *
column_text (sqlite3_stmt *stmt,
             int           column)
{
  return (const char *)sqlite3_column_text (stmt, column);
}

/* Binds column @from of @row to parameter @to of @insert, as is */
static void
bind_value (sqlite3_stmt *insert,
            int           to,
            sqlite3_stmt *row,
            int           from)
{
  sqlite3_bind_value (insert, to, sqlite3_column_value (row, from));
}

/* Runs the prepared insert; a row the new store refuses (a constraint,
 * garbage read from a damaged page) is skipped, FALSE on a real failure. */
static gboolean
run_insert (Salvage *salvage,
            int     *changes)
{
  int rc = sqlite3_step (salvage->insert);

  sqlite3_reset (salvage->insert);
  sqlite3_clear_bindings (salvage->insert);
  if (rc == SQLITE_DONE)
    {
      *changes = sqlite3_changes (salvage->out);
      return TRUE;
    }
  *changes = 0;
  return (rc & 0xff) == SQLITE_CONSTRAINT || (rc & 0xff) == SQLITE_MISMATCH;
}

/*
 * out_step:
 * @salvage: the salvage under way
 * @stmt: a statement that writes to the new store (@salvage->out), its
 *   parameters bound
 * @error: return location for a #GError
 *
 * Runs @stmt to its end and makes it ready for the next row: reset, its
 * bindings cleared. Unlike run_insert(), which skips a row the new store
 * refuses, every failure counts.
 *
 * Returns: %TRUE when @stmt ran to its end; %FALSE with the store's error
 *   (tally_store_set_sqlite_error(), "write to") set
 */
static gboolean
out_step (Salvage       *salvage,
          sqlite3_stmt  *stmt,
          GError       **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  if (rc != SQLITE_DONE)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "write to");
      return FALSE;
    }
  return TRUE;
}

/* Whether the damaged store's sessions table has the pinned column
 * (version 4); FALSE when its schema cannot be read. */
static gboolean
src_has_pinned (Salvage *salvage)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (salvage->src, "SELECT 1 FROM pragma_table_info ('sessions') WHERE name = 'pinned'",
                          -1, &stmt, NULL) != SQLITE_OK)
    return FALSE;
  return sqlite3_step (stmt) == SQLITE_ROW;
}

static gboolean
copy_session (sqlite3_stmt *row,
              gpointer      data)
{
  Salvage *salvage = data;
  int changes;

  if (column_text (row, 1) == NULL)
    return TRUE;
  for (int i = 1; i <= 15; i++)
    bind_value (salvage->insert, i, row, i);
  return run_insert (salvage, &changes);
}

static gboolean
copy_event (sqlite3_stmt *row,
            gpointer      data)
{
  Salvage *salvage = data;
  const char *session_id = column_text (row, 1);
  gint64 seq = sqlite3_column_int64 (row, 2);
  const char *type = column_text (row, 4);
  const char *payload = column_text (row, 5);
  JsonNode *root;
  JsonObject *event;
  int changes;

  /* Keep only what is still the event it claims to be */
  if (session_id == NULL || type == NULL || payload == NULL ||
      !json_parser_load_from_data (salvage->parser, payload, -1, NULL) ||
      (root = json_parser_get_root (salvage->parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return TRUE;
  event = json_node_get_object (root);
  if (g_strcmp0 (json_object_get_string_member_with_default (event, "session_id", NULL), session_id) != 0 ||
      json_object_get_int_member_with_default (event, "seq", -1) != seq ||
      g_strcmp0 (json_object_get_string_member_with_default (event, "type", NULL), type) != 0)
    return TRUE;

  for (int i = 1; i <= 5; i++)
    bind_value (salvage->insert, i, row, i);
  if (!run_insert (salvage, &changes))
    return FALSE;
  salvage->report->events_salvaged += changes;
  return TRUE;
}

static gboolean
copy_plain (sqlite3_stmt *row,
            gpointer      data)
{
  Salvage *salvage = data;
  int n = sqlite3_bind_parameter_count (salvage->insert);
  int changes;

  for (int i = 1; i <= n; i++)
    bind_value (salvage->insert, i, row, i);
  return run_insert (salvage, &changes);
}

static gboolean
copy_table (Salvage     *salvage,
            const char  *select_sql,
            const char  *insert_sql,
            RowFunc      func,
            GError     **error)
{
  g_autoptr(sqlite3_stmt) insert = NULL;
  int rc = sqlite3_prepare_v2 (salvage->out, insert_sql, -1, &insert, NULL);
  gboolean ok;

  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "write to");
      return FALSE;
    }

  salvage->insert = insert;
  ok = scan_table (salvage, select_sql, func);
  salvage->insert = NULL;
  if (!ok)
    tally_store_set_sqlite_error (error, salvage->out, sqlite3_errcode (salvage->out), salvage->out_path,
                                  "write to");
  return ok;
}

static gint64
out_int (Salvage    *salvage,
         const char *sql)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (salvage->out, sql, -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step (stmt) != SQLITE_ROW)
    return 0;
  return sqlite3_column_int64 (stmt, 0);
}

/* The conversation blocks the damaged file had, from the primary key's
 * index of `messages` (sqlite_autoindex_messages_1), which is a b-tree of
 * its own: a damaged page of the table leaves it readable, so a block the
 * table scan could not read is still known to have existed. The keys go
 * into a temporary table of the new store. An index that cannot be read
 * (or only in part) tells less: the events are asked then too
 * (note_lost_conversations()). */
static gboolean
read_message_keys (Salvage  *salvage,
                   GError  **error)
{
  g_autoptr(sqlite3_stmt) keys = NULL;
  g_autoptr(sqlite3_stmt) insert = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (salvage->out, "INSERT OR IGNORE INTO salvage_keys VALUES (?1, ?2, ?3)", -1,
                           &insert, NULL);
  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "write to");
      return FALSE;
    }

  if (sqlite3_prepare_v2 (salvage->src,
                          "SELECT session_id, msg_index, block_index "
                          "FROM messages INDEXED BY sqlite_autoindex_messages_1",
                          -1, &keys, NULL) != SQLITE_OK)
    {
      g_message ("Salvage: the index of the conversation blocks cannot be read: %s", sqlite3_errmsg (salvage->src));
      salvage->messages_damaged = TRUE;
      return TRUE;
    }

  while ((rc = sqlite3_step (keys)) == SQLITE_ROW)
    {
      if (sqlite3_column_type (keys, 0) != SQLITE_TEXT ||
          sqlite3_column_type (keys, 1) != SQLITE_INTEGER || sqlite3_column_type (keys, 2) != SQLITE_INTEGER)
        continue;
      for (int i = 0; i < 3; i++)
        bind_value (insert, i + 1, keys, i);
      if (!out_step (salvage, insert, error))
        return FALSE;
    }
  if (rc != SQLITE_DONE)
    {
      /* The keys after the damage stay unknown */
      g_message ("Salvage: the index of the conversation blocks is damaged: %s", sqlite3_errmsg (salvage->src));
      salvage->report->damaged_regions++;
      salvage->messages_damaged = TRUE;
    }

  return TRUE;
}

/* A conversation with a lost part is cut before it, and further back to
 * the end of its last complete exchange (an assistant message without a
 * tool call), so that a resumed session sends a history the API accepts.
 * A part is lost where the blocks read skip a message or a block, and
 * where the index names a block the table scan could not read — also at
 * the end of a conversation, or all of it. */
static gboolean
cut_conversations (Salvage  *salvage,
                   GError  **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(sqlite3_stmt) cut = NULL;
  g_autoptr(GHashTable) keep = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *session = NULL;
  gint64 expect_msg = 0, expect_block = 0, last_complete = -1;
  gboolean assistant = FALSE, tool_use = FALSE;
  gboolean broken = FALSE;
  GHashTableIter iter;
  gpointer key, value;
  int rc;

  rc = sqlite3_prepare_v2 (salvage->out,
                           "SELECT session_id, msg_index, block_index, role, "
                           "       instr (block, '\"type\":\"tool_use\"') > 0, 1 "
                           "FROM messages "
                           "UNION ALL "
                           "SELECT k.session_id, k.msg_index, k.block_index, NULL, 0, 0 FROM salvage_keys k "
                           "WHERE k.session_id IN (SELECT id FROM sessions) AND NOT EXISTS "
                           "  (SELECT 1 FROM messages m WHERE m.session_id = k.session_id "
                           "   AND m.msg_index = k.msg_index AND m.block_index = k.block_index) "
                           "ORDER BY 1, 2, 3",
                           -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2 (salvage->out,
                             "DELETE FROM messages WHERE session_id = ?1 AND msg_index > ?2", -1, &cut, NULL);
  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "read");
      return FALSE;
    }

  for (;;)
    {
      gboolean more = (rc = sqlite3_step (stmt)) == SQLITE_ROW;
      const char *id = more ? column_text (stmt, 0) : NULL;
      gint64 msg, block;

      if (!more || g_strcmp0 (id, session) != 0)
        {
          if (session != NULL && broken)
            g_hash_table_insert (keep, g_steal_pointer (&session), GINT_TO_POINTER ((int)last_complete));
          if (!more)
            break;
          g_free (session);
          session = g_strdup (id);
          expect_msg = -1;
          expect_block = 0;
          last_complete = -1;
          broken = FALSE;
        }

      /* A block the index names and the table scan could not read */
      if (sqlite3_column_int (stmt, 5) == 0)
        {
          salvage->report->messages_lost++;
          broken = TRUE;
        }
      if (broken)
        continue;

      msg = sqlite3_column_int64 (stmt, 1);
      block = sqlite3_column_int64 (stmt, 2);

      if (msg == expect_msg && block == expect_block)
        expect_block++;
      else if (msg == expect_msg + 1 && block == 0)
        {
          /* The previous message is whole: an exchange ends with it when
           * it is the assistant's and calls no tool */
          if (expect_msg >= 0 && assistant && !tool_use)
            last_complete = expect_msg;
          expect_msg = msg;
          expect_block = 1;
          assistant = g_strcmp0 (column_text (stmt, 3), "assistant") == 0;
          tool_use = FALSE;
        }
      else
        {
          broken = TRUE;
          continue;
        }
      tool_use = tool_use || sqlite3_column_int (stmt, 4) != 0;
    }
  if (rc != SQLITE_DONE)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "read");
      return FALSE;
    }

  g_hash_table_iter_init (&iter, keep);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      sqlite3_bind_text (cut, 1, key, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (cut, 2, GPOINTER_TO_INT (value));
      if (!out_step (salvage, cut, error))
        return FALSE;
      salvage->report->messages_dropped += sqlite3_changes (salvage->out);
      g_hash_table_add (salvage->cut, g_strdup (key));
    }

  return TRUE;
}

/* When the table of conversation blocks was damaged and its index could
 * not say what it held, the events still tell that a session had a
 * conversation: an API call that got its whole answer puts at least that
 * answer into it. Such a session with no block left lost its
 * conversation. */
static gboolean
note_lost_conversations (Salvage  *salvage,
                         GError  **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  if (!salvage->messages_damaged)
    return TRUE;

  rc = sqlite3_prepare_v2 (salvage->out,
                           "SELECT id FROM sessions s "
                           "WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) "
                           "  AND EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id AND e.type = ?1 "
                           "              AND json_extract (e.payload, '$.stop_reason') IS NOT NULL)",
                           -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text (stmt, 1, tally_event_type_to_name (TALLY_EVENT_API_CALL), -1, SQLITE_STATIC);
  while (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_hash_table_add (salvage->cut, g_strdup (column_text (stmt, 0)));
      rc = SQLITE_OK;
    }
  if (rc != SQLITE_DONE)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "read");
      return FALSE;
    }

  return TRUE;
}

/* Each session whose conversation lost a part gets one more event at the
 * end of its log: an `error` of kind `store` with `context_lost` set. Its
 * transcript shows it where the loss begins to matter, `--replay` prints
 * it, and tally_session_open() tells it (tally_session_get_lost_context()):
 * a resumed session does not silently send a shorter history than its
 * transcript shows. */
static gboolean
mark_lost_conversations (Salvage  *salvage,
                         GError  **error)
{
  g_autoptr(sqlite3_stmt) last = NULL;
  g_autoptr(sqlite3_stmt) insert = NULL;
  const char *type = tally_event_type_to_name (TALLY_EVENT_ERROR);
  GHashTableIter iter;
  gpointer key;
  int rc;

  rc = sqlite3_prepare_v2 (salvage->out, "SELECT max (seq), max (ts) FROM events WHERE session_id = ?1", -1,
                           &last, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2 (salvage->out,
                             "INSERT INTO events (session_id, seq, ts, type, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
                             -1, &insert, NULL);
  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "write to");
      return FALSE;
    }

  g_hash_table_iter_init (&iter, salvage->cut);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      const char *session_id = key;
      g_autoptr(JsonObject) fields = NULL;
      g_autoptr(JsonObject) event = NULL;
      g_autofree char *payload = NULL;
      gint64 seq, ts;

      sqlite3_bind_text (last, 1, session_id, -1, SQLITE_STATIC);
      if (sqlite3_step (last) != SQLITE_ROW)
        {
          sqlite3_reset (last);
          continue;
        }
      seq = sqlite3_column_int64 (last, 0) + 1;
      ts = MAX (sqlite3_column_int64 (last, 1), g_get_real_time ());
      sqlite3_reset (last);

      fields = tally_event_new_error ("store",
                                      "Salvage could not recover all of this session's conversation with "
                                      "the model. The transcript above is kept, but the model no longer "
                                      "sees all of it: what it was told before the damaged part is lost "
                                      "to it.",
                                      FALSE, NULL);
      json_object_set_boolean_member (fields, "context_lost", TRUE);
      event = tally_event_stamp (fields, seq, ts, session_id, NULL);
      payload = tally_event_to_json (event);

      sqlite3_bind_text (insert, 1, session_id, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (insert, 2, seq);
      sqlite3_bind_int64 (insert, 3, ts);
      sqlite3_bind_text (insert, 4, type, -1, SQLITE_STATIC);
      sqlite3_bind_text (insert, 5, payload, -1, SQLITE_STATIC);
      if (!out_step (salvage, insert, error))
        return FALSE;
    }

  salvage->report->conversations_cut = g_hash_table_size (salvage->cut);
  return TRUE;
}

static gboolean
copy_file (const char  *from,
           const char  *to,
           GError     **error)
{
  g_autoptr(GFile) source = g_file_new_for_path (from);
  g_autoptr(GFile) target = g_file_new_for_path (to);

  return g_file_copy (source, target, G_FILE_COPY_NONE, NULL, NULL, NULL, error);
}

static void
remove_scratch (const char *dir)
{
  g_autoptr(GDir) listing = g_dir_open (dir, 0, NULL);
  const char *name;

  while (listing != NULL && (name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_unlink (path);
    }
  g_rmdir (dir);
}

/* The event types are bound by name (:turn_started, …) from the event
 * module, the one place that spells them. */
static const char rebuild_sessions_sql[] =
  "INSERT INTO sessions (id, title, created_us, updated_us, model, workspace, database, cost_usd, "
  "                      input_tokens, output_tokens, turns, cache_read, cache_write, last_mode) "
  "SELECT e.session_id,"
  "       coalesce ((SELECT json_extract (payload, '$.title') FROM events c"
  "                  WHERE c.session_id = e.session_id AND c.type = :session_created), ''),"
  "       min (e.ts), max (e.ts),"
  "       (SELECT json_extract (payload, '$.model') FROM events c"
  "        WHERE c.session_id = e.session_id AND c.type = :turn_started ORDER BY seq DESC LIMIT 1),"
  "       (SELECT json_extract (payload, '$.workspace') FROM events c"
  "        WHERE c.session_id = e.session_id AND c.type = :session_created),"
  "       (SELECT json_extract (payload, '$.database') FROM events c"
  "        WHERE c.session_id = e.session_id AND c.type = :session_created),"
  "       total (CASE WHEN e.type = :turn_finished THEN json_extract (e.payload, '$.cost_usd') END),"
  "       total (CASE WHEN e.type = :turn_finished THEN json_extract (e.payload, '$.usage.input_tokens') END),"
  "       total (CASE WHEN e.type = :turn_finished THEN json_extract (e.payload, '$.usage.output_tokens') END),"
  "       sum (e.type = :turn_started),"
  "       total (CASE WHEN e.type = :turn_finished THEN json_extract (e.payload, '$.usage.cache_read_input_tokens') END),"
  "       total (CASE WHEN e.type = :turn_finished THEN json_extract (e.payload, '$.usage.cache_creation_input_tokens') END),"
  "       (SELECT json_extract (payload, '$.mode') FROM events c"
  "        WHERE c.session_id = e.session_id AND c.type = :turn_started ORDER BY seq DESC LIMIT 1) "
  "FROM events e WHERE e.session_id NOT IN (SELECT id FROM sessions) GROUP BY e.session_id";

static gboolean
rebuild_sessions (Salvage  *salvage,
                  GError  **error)
{
  static const TallyEventType bound[] = {
    TALLY_EVENT_SESSION_CREATED, TALLY_EVENT_TURN_STARTED, TALLY_EVENT_TURN_FINISHED,
  };
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (salvage->out, rebuild_sessions_sql, -1, &stmt, NULL);
  for (guint i = 0; rc == SQLITE_OK && i < G_N_ELEMENTS (bound); i++)
    {
      g_autofree char *parameter = g_strconcat (":", tally_event_type_to_name (bound[i]), NULL);

      rc = sqlite3_bind_text (stmt, sqlite3_bind_parameter_index (stmt, parameter),
                              tally_event_type_to_name (bound[i]), -1, SQLITE_STATIC);
    }
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc != SQLITE_DONE)
    {
      tally_store_set_sqlite_error (error, salvage->out, rc, salvage->out_path, "write");
      return FALSE;
    }

  return TRUE;
}

/* The conversation blocks as read, then what the index says existed */
static gboolean
copy_messages (Salvage  *salvage,
               GError  **error)
{
  g_autoptr(sqlite3_stmt) exists = NULL;
  guint damaged = salvage->report->damaged_regions;

  if (!tally_store_exec (salvage->out, salvage->out_path,
                         "CREATE TEMP TABLE salvage_keys (session_id TEXT NOT NULL, msg_index INTEGER NOT NULL, "
                         "  block_index INTEGER NOT NULL, PRIMARY KEY (session_id, msg_index, block_index)) "
                         "WITHOUT ROWID",
                         error))
    return FALSE;

  /* A store older than version 2 has no conversation to lose */
  if (sqlite3_prepare_v2 (salvage->src, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'messages'",
                          -1, &exists, NULL) == SQLITE_OK &&
      sqlite3_step (exists) == SQLITE_DONE)
    return TRUE;

  if (!copy_table (salvage,
                   "SELECT rowid, session_id, msg_index, block_index, role, block FROM messages "
                   "WHERE rowid > ?1 ORDER BY rowid",
                   "INSERT OR IGNORE INTO messages (session_id, msg_index, block_index, role, block) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)",
                   copy_plain, error))
    return FALSE;
  salvage->messages_damaged = salvage->report->damaged_regions > damaged;

  return read_message_keys (salvage, error);
}

static gboolean
salvage_into (Salvage     *salvage,
              GError     **error)
{
  TallySalvageReport *report = salvage->report;
  g_autofree char *select_sessions = NULL;
  gint64 known_sessions;

  if (!tally_store_exec (salvage->out, salvage->out_path, "BEGIN IMMEDIATE", error))
    return FALSE;

  /* A store older than version 4 has no pins. */
  select_sessions = g_strdup_printf ("SELECT rowid, id, title, created_us, updated_us, model, workspace, database, "
                                     "       cost_usd, input_tokens, output_tokens, turns, cache_read, cache_write, "
                                     "       last_mode, %s "
                                     "FROM sessions WHERE rowid > ?1 ORDER BY rowid",
                                     src_has_pinned (salvage) ? "pinned" : "0");
  if (!copy_table (salvage, select_sessions,
                   "INSERT OR IGNORE INTO sessions (id, title, created_us, updated_us, model, workspace, "
                   "  database, cost_usd, input_tokens, output_tokens, turns, cache_read, cache_write, last_mode, "
                   "  pinned) "
                   "VALUES (?1, coalesce (?2, ''), coalesce (?3, 0), coalesce (?4, 0), ?5, ?6, ?7, ?8, "
                   "  coalesce (?9, 0), coalesce (?10, 0), coalesce (?11, 0), coalesce (?12, 0), "
                   "  coalesce (?13, 0), ?14, coalesce (?15, 0) <> 0)",
                   copy_session, error) ||
      !copy_table (salvage,
                   "SELECT rowid, session_id, seq, ts, type, payload FROM events WHERE rowid > ?1 ORDER BY rowid",
                   "INSERT OR IGNORE INTO events (session_id, seq, ts, type, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
                   copy_event, error) ||
      !copy_messages (salvage, error) ||
      !copy_table (salvage,
                   "SELECT rowid, pattern, decision, scope, workspace, created_us FROM rules "
                   "WHERE rowid > ?1 ORDER BY rowid",
                   "INSERT OR IGNORE INTO rules (pattern, decision, scope, workspace, created_us) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)",
                   copy_plain, error) ||
      !copy_table (salvage,
                   "SELECT rowid, plan_id, version, session_id, markdown, created_us FROM plans "
                   "WHERE rowid > ?1 ORDER BY rowid",
                   "INSERT OR IGNORE INTO plans (plan_id, version, session_id, markdown, created_us) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)",
                   copy_plain, error))
    goto fail;

  /* Sessions known from any readable row; those without a single event
   * are lost (a title without its log would open as a blank session) */
  known_sessions = out_int (salvage,
                            "SELECT count (*) FROM (SELECT id FROM sessions UNION SELECT session_id FROM events "
                            "UNION SELECT session_id FROM messages UNION SELECT session_id FROM plans "
                            "WHERE session_id IS NOT NULL)");

  if (!rebuild_sessions (salvage, error))
    goto fail;
  report->sessions_rebuilt = sqlite3_changes (salvage->out);

  if (!tally_store_exec (salvage->out, salvage->out_path,
                         "DELETE FROM messages WHERE session_id NOT IN (SELECT session_id FROM events);"
                         "DELETE FROM plans WHERE session_id IS NOT NULL "
                         "  AND session_id NOT IN (SELECT session_id FROM events);"
                         "DELETE FROM sessions WHERE id NOT IN (SELECT session_id FROM events);",
                         error))
    goto fail;

  report->sessions_salvaged = out_int (salvage, "SELECT count (*) FROM sessions");
  report->sessions_lost = known_sessions - report->sessions_salvaged;
  report->events_lost = out_int (salvage,
                                 "SELECT total (m - n) FROM (SELECT max (seq) AS m, count (*) AS n "
                                 "FROM events GROUP BY session_id)");
  report->rules_salvaged = out_int (salvage, "SELECT count (*) FROM rules");
  report->plans_salvaged = out_int (salvage, "SELECT count (*) FROM plans");

  if (!cut_conversations (salvage, error) ||
      !note_lost_conversations (salvage, error) ||
      !mark_lost_conversations (salvage, error) ||
      !tally_store_exec (salvage->out, salvage->out_path, "DROP TABLE temp.salvage_keys", error) ||
      !tally_store_fill_transcript (salvage->out, salvage->out_path, error) ||
      !tally_store_exec (salvage->out, salvage->out_path, "COMMIT", error))
    goto fail;

  return TRUE;

fail:
  sqlite3_exec (salvage->out, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

/**
 * tally_store_salvage:
 * @damaged_path: (type filename): a store that tally_store_open() refuses
 *   as damaged (any store works)
 * @out_path: (type filename): where to write the new store; must not exist
 * @report: (out caller-allocates) (optional): what was copied and lost
 * @error: return location for a #GError
 *
 * Copies every readable session of @damaged_path — its events, its
 * conversation, its plans — and every readable rule into a new store at
 * @out_path (docs/architecture.md §10.9). @damaged_path is only read, as a
 * byte copy (with its `-wal`) taken into a scratch folder beside
 * @out_path: the damaged file, its WAL and its lock are never written or
 * opened by SQLite. The new store has the current schema and opens with
 * tally_store_open().
 *
 * Returns: %TRUE when the new store was written (also when little could be
 *   read: see @report); %FALSE with @error in %TALLY_STORE_ERROR:
 *   %TALLY_STORE_ERROR_IO (@out_path exists, a file cannot be copied or
 *   written), %TALLY_STORE_ERROR_CORRUPT (@damaged_path is not a SQLite
 *   database at all), %TALLY_STORE_ERROR_FULL; nothing is left at
 *   @out_path then
 */
gboolean
tally_store_salvage (const char          *damaged_path,
                     const char          *out_path,
                     TallySalvageReport  *report,
                     GError             **error)
{
  g_autofree char *out_dir = NULL;
  g_autofree char *scratch = NULL;
  g_autofree char *copy = NULL;
  g_autofree char *wal = NULL;
  g_autofree char *copy_wal = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  TallySalvageReport local_report = { 0 };
  Salvage salvage = { 0 };
  gboolean ok = FALSE;
  int rc;

  g_return_val_if_fail (damaged_path != NULL, FALSE);
  g_return_val_if_fail (out_path != NULL, FALSE);

  if (!g_file_test (damaged_path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "There is no session store at “%s” to salvage", damaged_path);
      return FALSE;
    }
  if (g_file_test (out_path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "“%s” exists already; salvage writes a new store and never replaces a file", out_path);
      return FALSE;
    }

  out_dir = g_path_get_dirname (out_path);
  scratch = g_build_filename (out_dir, ".tally-salvage-XXXXXX", NULL);
  if (g_mkdtemp (scratch) == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "Could not make a scratch folder in “%s” for the salvage: %s", out_dir, g_strerror (saved_errno));
      return FALSE;
    }

  copy = g_build_filename (scratch, "damaged.db", NULL);
  wal = g_strconcat (damaged_path, "-wal", NULL);
  copy_wal = g_strconcat (copy, "-wal", NULL);
  if (!copy_file (damaged_path, copy, &local_error) ||
      (g_file_test (wal, G_FILE_TEST_IS_REGULAR) && !copy_file (wal, copy_wal, &local_error)))
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "Could not copy the damaged store “%s” to salvage it: %s", damaged_path, local_error->message);
      goto out;
    }

  rc = sqlite3_open_v2 (copy, &salvage.src, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (salvage.src, "PRAGMA cell_size_check = ON; PRAGMA query_only = ON", NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    {
      g_autoptr(sqlite3_stmt) stmt = NULL;

      rc = sqlite3_prepare_v2 (salvage.src, "SELECT count (*) FROM sqlite_schema", -1, &stmt, NULL);
      if (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
        rc = SQLITE_OK;
    }
  if (rc != SQLITE_OK)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT,
                   "Nothing can be salvaged from “%s”: its first page, which lists the tables, cannot be "
                   "read (%s)", damaged_path, salvage.src ? sqlite3_errmsg (salvage.src) : sqlite3_errstr (rc));
      goto out;
    }

  rc = sqlite3_open_v2 (out_path, &salvage.out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, salvage.out, rc, out_path, "create");
      goto out;
    }
  sqlite3_extended_result_codes (salvage.out, 1);

  salvage.out_path = out_path;
  salvage.report = &local_report;
  salvage.parser = parser;
  salvage.cut = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (!tally_store_migrate (salvage.out, out_path, 0, error) || !salvage_into (&salvage, error))
    goto out;

  ok = TRUE;
  if (report != NULL)
    *report = local_report;

out:
  g_clear_pointer (&salvage.cut, g_hash_table_unref);
  g_clear_pointer (&salvage.src, sqlite3_close);
  g_clear_pointer (&salvage.out, sqlite3_close);
  remove_scratch (scratch);
  if (!ok && salvage.out_path != NULL)
    {
      g_autofree char *journal = g_strconcat (out_path, "-journal", NULL);

      g_unlink (out_path);
      g_unlink (journal);
    }
  return ok;
}

typedef struct {
  char *damaged_path;
  char *out_path;
} SalvageData;

static void
salvage_data_free (gpointer data)
{
  SalvageData *salvage = data;

  g_free (salvage->damaged_path);
  g_free (salvage->out_path);
  g_free (salvage);
}

static void
salvage_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  SalvageData *data = task_data;
  TallySalvageReport *report = g_new0 (TallySalvageReport, 1);
  GError *error = NULL;

  if (tally_store_salvage (data->damaged_path, data->out_path, report, &error))
    g_task_return_pointer (task, report, g_free);
  else
    {
      g_free (report);
      g_task_return_error (task, error);
    }
}

/**
 * tally_store_salvage_async:
 * @damaged_path: (type filename): the damaged store
 * @out_path: (type filename): the new store to write; must not exist
 * @cancellable: (nullable): a #GCancellable (checked before starting only)
 * @callback: called in the thread-default main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_salvage() in a worker thread.
 */
void
tally_store_salvage_async (const char          *damaged_path,
                           const char          *out_path,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  SalvageData *data;

  g_return_if_fail (damaged_path != NULL);
  g_return_if_fail (out_path != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_store_salvage_async);
  data = g_new0 (SalvageData, 1);
  data->damaged_path = g_strdup (damaged_path);
  data->out_path = g_strdup (out_path);
  g_task_set_task_data (task, data, salvage_data_free);
  g_task_run_in_thread (task, salvage_thread);
}

/**
 * tally_store_salvage_finish:
 * @result: the result given to the callback
 * @report: (out caller-allocates) (optional): what was copied and lost
 * @error: return location for a #GError
 *
 * Returns: %TRUE when the new store was written; %FALSE with @error as for
 *   tally_store_salvage()
 */
gboolean
tally_store_salvage_finish (GAsyncResult        *result,
                            TallySalvageReport  *report,
                            GError             **error)
{
  g_autofree TallySalvageReport *value = NULL;

  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);

  value = g_task_propagate_pointer (G_TASK (result), error);
  if (value == NULL)
    return FALSE;
  if (report != NULL)
    *report = *value;
  return TRUE;
}
