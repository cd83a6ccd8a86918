/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include <string.h>

#include "tally-event.h"
#include "tally-store-private.h"

/*
 * The writer thread (docs/architecture.md §10.1): it owns the read-write
 * connection and commits whatever arrived within BATCH_WINDOW_US of the
 * first queued item as one transaction. Operations whose caller needs an
 * answer travel the same queue, and their caller waits on a Completion.
 * A batch that cannot be written is rolled back and its data stays queued;
 * the writer tries again on the next flush or operation, or after
 * RETRY_INTERVAL_US.
 */

#define BATCH_WINDOW_US   (25 * G_TIME_SPAN_MILLISECOND)
#define RETRY_INTERVAL_US (5 * G_TIME_SPAN_SECOND)

/* {{{ Queue items */

Item *
tally_store_item_new (ItemKind kind)
{
  Item *item = g_new0 (Item, 1);

  item->kind = kind;
  return item;
}

void
tally_store_item_free (Item *item)
{
  g_free (item->session_id);
  g_free (item->type);
  g_free (item->payload);
  g_free (item->turn_id);
  g_free (item->text);
  g_free (item->model);
  g_free (item->workspace);
  g_free (item->database);
  g_free (item->mode);
  g_free (item->scope);
  g_free (item->role);
  g_clear_pointer (&item->blocks, g_ptr_array_unref);
  g_clear_error (&item->error);
  g_free (item);
}

static gboolean
item_is_data (const Item *item)
{
  return item->kind == ITEM_EVENT || item->kind == ITEM_MESSAGE || item->kind == ITEM_TRUNCATE ||
         item->kind == ITEM_SNAPSHOT;
}

static void
completion_init (Completion *completion)
{
  memset (completion, 0, sizeof *completion);
  g_mutex_init (&completion->lock);
  g_cond_init (&completion->cond);
}

static void
completion_clear (Completion *completion)
{
  g_mutex_clear (&completion->lock);
  g_cond_clear (&completion->cond);
  g_clear_error (&completion->error);
}

/* Called by the writer; @error is taken. After this the writer must not
 * touch @completion: it lives on the waiting caller's stack. */
static void
completion_finish (Completion *completion,
                   gint64      result,
                   GError     *error)
{
  g_mutex_lock (&completion->lock);
  completion->result = result;
  completion->error = error;
  completion->done = TRUE;
  g_cond_signal (&completion->cond);
  g_mutex_unlock (&completion->lock);
}

static void
completion_wait (Completion *completion)
{
  g_mutex_lock (&completion->lock);
  while (!completion->done)
    g_cond_wait (&completion->cond, &completion->lock);
  g_mutex_unlock (&completion->lock);
}

/* }}} */
/* {{{ The writer thread */

enum {
  STMT_ENSURE_SESSION,
  STMT_MAX_SEQ,
  STMT_INSERT_EVENT,
  STMT_SESSION_CREATED,
  STMT_TURN_STARTED,
  STMT_TURN_FINISHED,
  STMT_TOUCH,
  STMT_UPSERT_TEXT,
  STMT_DELETE_TEXT,
  STMT_DELETE_MESSAGE,
  STMT_INSERT_BLOCK,
  STMT_TRUNCATE,
  STMT_INSERT_PLAN,
  STMT_RENAME,
  STMT_PIN,
  STMT_DELETE_SESSION,
  STMT_FIND_RULE,
  STMT_INSERT_RULE,
  STMT_DELETE_RULE,
  STMT_SAVE_SNAPSHOT,
  N_STMTS
};

static const char * const stmt_sql[N_STMTS] = {
  [STMT_ENSURE_SESSION] =
    "INSERT INTO sessions (id, created_us, updated_us) VALUES (?1, ?2, ?2) "
    "ON CONFLICT (id) DO NOTHING",
  [STMT_MAX_SEQ] =
    "SELECT coalesce (max (seq), 0) FROM events WHERE session_id = ?1",
  [STMT_INSERT_EVENT] =
    "INSERT INTO events (session_id, seq, ts, type, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
  [STMT_SESSION_CREATED] =
    "UPDATE sessions SET title = ?2, model = ?3, workspace = ?4, database = ?5, created_us = ?6 "
    "WHERE id = ?1",
  [STMT_TURN_STARTED] =
    "UPDATE sessions SET turns = turns + 1, last_mode = coalesce (?2, last_mode), "
    "model = coalesce (?3, model) WHERE id = ?1",
  [STMT_TURN_FINISHED] =
    "UPDATE sessions SET cost_usd = cost_usd + ?2, input_tokens = input_tokens + ?3, "
    "output_tokens = output_tokens + ?4, cache_read = cache_read + ?5, "
    "cache_write = cache_write + ?6 WHERE id = ?1",
  [STMT_TOUCH] =
    "UPDATE sessions SET updated_us = max (updated_us, ?2) WHERE id = ?1",
  [STMT_UPSERT_TEXT] =
    "INSERT INTO transcript (session_id, turn_id, kind, text) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (session_id, turn_id, kind) DO UPDATE SET text = excluded.text "
    "WHERE transcript.text <> excluded.text",
  [STMT_DELETE_TEXT] =
    "DELETE FROM transcript WHERE session_id = ?1 AND turn_id = ?2 AND kind = ?3",
  [STMT_DELETE_MESSAGE] =
    "DELETE FROM messages WHERE session_id = ?1 AND msg_index = ?2",
  [STMT_INSERT_BLOCK] =
    "INSERT INTO messages (session_id, msg_index, block_index, role, block) "
    "VALUES (?1, ?2, ?3, ?4, ?5)",
  [STMT_TRUNCATE] =
    "DELETE FROM messages WHERE session_id = ?1 AND msg_index >= ?2",
  [STMT_INSERT_PLAN] =
    "INSERT INTO plans (plan_id, version, session_id, markdown, created_us) "
    "VALUES (?1, ?2, ?3, ?4, ?5)",
  [STMT_RENAME] =
    "UPDATE sessions SET title = ?2 WHERE id = ?1",
  [STMT_PIN] =
    "UPDATE sessions SET pinned = ?2 WHERE id = ?1",
  [STMT_DELETE_SESSION] =
    "DELETE FROM sessions WHERE id = ?1",
  [STMT_FIND_RULE] =
    "SELECT id FROM rules WHERE pattern = ?1 AND decision = ?2 AND scope = ?3 AND workspace IS ?4",
  [STMT_INSERT_RULE] =
    "INSERT INTO rules (pattern, decision, scope, workspace, created_us) VALUES (?1, ?2, ?3, ?4, ?5)",
  [STMT_DELETE_RULE] =
    "DELETE FROM rules WHERE id = ?1",
  [STMT_SAVE_SNAPSHOT] =
    "INSERT INTO snapshots (session_id, seq, format, state, blocks) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, format = excluded.format, "
    "state = excluded.state, blocks = excluded.blocks",
};

typedef struct {
  char    *session_id;
  char    *turn_id;
  GString *text;       /* the turn's assistant text so far */
  gint64   last_seq;   /* the newest text_delta applied, so a retried batch adds nothing twice */
  gboolean finished;   /* turn_finished seen; dropped once that commit succeeded */
} TurnText;

static void
turn_text_free (gpointer data)
{
  TurnText *turn = data;

  g_free (turn->session_id);
  g_free (turn->turn_id);
  g_string_free (turn->text, TRUE);
  g_free (turn);
}

typedef struct {
  sqlite3      *db;
  char         *path;
  GAsyncQueue  *queue;
  SignalTarget *target;
  GPtrArray    *pending;        /* Item*, in arrival order */
  GHashTable   *last_seq;       /* session_id -> gint64*: the newest seq in the file or batch */
  GHashTable   *turns;          /* "session\037turn" -> TurnText* */
  GHashTable   *touched;        /* session_id -> gint64*: the newest ts of this batch */
  GError       *failure;        /* set while queued data cannot be written */
  gint64        failed_at;      /* monotonic µs of the failure */
  GError       *rejected;       /* the first item refused since the last flush */
  gboolean      batch_flush;    /* the open batch holds a flush (or quit) */
  sqlite3_stmt *stmts[N_STMTS];
} Writer;

typedef enum {
  APPLY_OK,
  APPLY_REJECTED,  /* this item only: the batch goes on */
  APPLY_FAILED,    /* the batch is rolled back */
} Apply;

static void
writer_free (Writer *w)
{
  for (guint i = 0; i < N_STMTS; i++)
    sqlite3_finalize (w->stmts[i]);
  sqlite3_close (w->db);
  g_free (w->path);
  g_async_queue_unref (w->queue);
  tally_store_target_unref (w->target);
  g_ptr_array_unref (w->pending);
  g_hash_table_unref (w->last_seq);
  g_hash_table_unref (w->turns);
  g_hash_table_unref (w->touched);
  g_clear_error (&w->failure);
  g_clear_error (&w->rejected);
  g_free (w);
}

static sqlite3_stmt *
writer_stmt (Writer  *w,
             guint    which,
             GError **error)
{
  if (w->stmts[which] == NULL)
    {
      int rc = sqlite3_prepare_v3 (w->db, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                   &w->stmts[which], NULL);

      if (rc != SQLITE_OK)
        {
          tally_store_set_sqlite_error (error, w->db, rc, w->path, "prepare a statement for");
          return NULL;
        }
    }

  return w->stmts[which];
}

static void
writer_reset (sqlite3_stmt *stmt)
{
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
}

/* Steps @stmt once (a statement that returns no row) and resets it */
static Apply
writer_run (Writer       *w,
            sqlite3_stmt *stmt,
            const char   *what,
            GError      **error)
{
  int rc = sqlite3_step (stmt);
  Apply result = APPLY_OK;

  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    {
      tally_store_set_sqlite_error (error, w->db, rc, w->path, what);
      result = (rc & 0xff) == SQLITE_CONSTRAINT ? APPLY_REJECTED : APPLY_FAILED;
    }
  writer_reset (stmt);
  return result;
}

/* Makes sure the session row exists (events and messages refer to it) and
 * learns the session's newest stored seq. */
static Apply
writer_ensure_session (Writer      *w,
                       const char  *session_id,
                       gint64       ts,
                       gint64     **last,
                       GError     **error)
{
  sqlite3_stmt *stmt;
  gint64 *value;
  Apply result;
  int rc;

  value = g_hash_table_lookup (w->last_seq, session_id);
  if (value != NULL)
    {
      *last = value;
      return APPLY_OK;
    }

  if ((stmt = writer_stmt (w, STMT_ENSURE_SESSION, error)) == NULL)
    return APPLY_FAILED;
  BIND_TEXT (stmt, 1, session_id);
  sqlite3_bind_int64 (stmt, 2, ts);
  if ((result = writer_run (w, stmt, "write to", error)) != APPLY_OK)
    return result;

  if ((stmt = writer_stmt (w, STMT_MAX_SEQ, error)) == NULL)
    return APPLY_FAILED;
  BIND_TEXT (stmt, 1, session_id);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      tally_store_set_sqlite_error (error, w->db, rc, w->path, "read");
      writer_reset (stmt);
      return APPLY_FAILED;
    }
  value = g_new (gint64, 1);
  *value = sqlite3_column_int64 (stmt, 0);
  writer_reset (stmt);

  g_hash_table_insert (w->last_seq, g_strdup (session_id), value);
  *last = value;
  return APPLY_OK;
}

static void
writer_touch (Writer     *w,
              const char *session_id,
              gint64      ts)
{
  gint64 *newest = g_hash_table_lookup (w->touched, session_id);

  if (newest == NULL)
    {
      newest = g_new (gint64, 1);
      *newest = ts;
      g_hash_table_insert (w->touched, g_strdup (session_id), newest);
    }
  else if (ts > *newest)
    *newest = ts;
}

static Apply
writer_upsert_text (Writer      *w,
                    const char  *session_id,
                    const char  *turn_id,
                    const char  *kind,
                    const char  *text,
                    GError     **error)
{
  sqlite3_stmt *stmt;

  if (text == NULL || *text == '\0')
    {
      if ((stmt = writer_stmt (w, STMT_DELETE_TEXT, error)) == NULL)
        return APPLY_FAILED;
    }
  else
    {
      if ((stmt = writer_stmt (w, STMT_UPSERT_TEXT, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 4, text);
    }
  BIND_TEXT (stmt, 1, session_id);
  BIND_TEXT (stmt, 2, turn_id != NULL ? turn_id : "");
  BIND_TEXT (stmt, 3, kind);
  return writer_run (w, stmt, "index the text of", error);
}

static TurnText *
writer_get_turn (Writer     *w,
                 const char *session_id,
                 const char *turn_id,
                 gboolean    create)
{
  g_autofree char *key = g_strconcat (session_id, "\037", turn_id != NULL ? turn_id : "", NULL);
  TurnText *turn = g_hash_table_lookup (w->turns, key);

  if (turn == NULL && create)
    {
      turn = g_new0 (TurnText, 1);
      turn->session_id = g_strdup (session_id);
      turn->turn_id = g_strdup (turn_id != NULL ? turn_id : "");
      turn->text = g_string_new (NULL);
      g_hash_table_insert (w->turns, g_steal_pointer (&key), turn);
    }

  return turn;
}

static Apply
writer_apply_event (Writer  *w,
                    Item    *item,
                    GError **error)
{
  sqlite3_stmt *stmt;
  gint64 *last = NULL;
  Apply result;

  if ((result = writer_ensure_session (w, item->session_id, item->ts, &last, error)) != APPLY_OK)
    return result;

  if (item->seq <= *last)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                   "Event %" G_GINT64_FORMAT " of session %s was refused: the session already "
                   "has an event with seq %" G_GINT64_FORMAT " (seq must increase)",
                   item->seq, item->session_id, *last);
      return APPLY_REJECTED;
    }

  if ((stmt = writer_stmt (w, STMT_INSERT_EVENT, error)) == NULL)
    return APPLY_FAILED;
  BIND_TEXT (stmt, 1, item->session_id);
  sqlite3_bind_int64 (stmt, 2, item->seq);
  sqlite3_bind_int64 (stmt, 3, item->ts);
  BIND_TEXT (stmt, 4, item->type);
  BIND_TEXT (stmt, 5, item->payload);
  if ((result = writer_run (w, stmt, "write an event to", error)) != APPLY_OK)
    return result;

  *last = item->seq;
  writer_touch (w, item->session_id, item->ts);

  switch (item->projection)
    {
    case PROJECT_SESSION_CREATED:
      if ((stmt = writer_stmt (w, STMT_SESSION_CREATED, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      BIND_TEXT (stmt, 2, item->text != NULL ? item->text : "");
      BIND_TEXT (stmt, 3, item->model);
      BIND_TEXT (stmt, 4, item->workspace);
      BIND_TEXT (stmt, 5, item->database);
      sqlite3_bind_int64 (stmt, 6, item->ts);
      if ((result = writer_run (w, stmt, "write to", error)) != APPLY_OK)
        return result;
      return writer_upsert_text (w, item->session_id, "", "title", item->text, error);

    case PROJECT_TURN_STARTED:
      if ((stmt = writer_stmt (w, STMT_TURN_STARTED, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      BIND_TEXT (stmt, 2, item->mode);
      BIND_TEXT (stmt, 3, item->model);
      if ((result = writer_run (w, stmt, "write to", error)) != APPLY_OK)
        return result;
      writer_get_turn (w, item->session_id, item->turn_id, TRUE);
      return writer_upsert_text (w, item->session_id, item->turn_id, "prompt", item->text, error);

    case PROJECT_TEXT_DELTA:
      {
        TurnText *turn = writer_get_turn (w, item->session_id, item->turn_id, TRUE);

        if (item->seq > turn->last_seq && item->text != NULL)
          {
            g_string_append (turn->text, item->text);
            turn->last_seq = item->seq;
          }
      }
      break;

    case PROJECT_TURN_FINISHED:
      {
        TurnText *turn;

        if ((stmt = writer_stmt (w, STMT_TURN_FINISHED, error)) == NULL)
          return APPLY_FAILED;
        BIND_TEXT (stmt, 1, item->session_id);
        if (item->cost_known)
          sqlite3_bind_double (stmt, 2, item->cost);
        else
          sqlite3_bind_null (stmt, 2);
        for (guint i = 0; i < 4; i++)
          sqlite3_bind_int64 (stmt, 3 + i, item->usage[i]);
        if ((result = writer_run (w, stmt, "write to", error)) != APPLY_OK)
          return result;

        turn = writer_get_turn (w, item->session_id, item->turn_id, FALSE);
        if (turn != NULL)
          {
            turn->finished = TRUE;
            if (turn->text->len > 0)
              return writer_upsert_text (w, item->session_id, item->turn_id, "assistant", turn->text->str, error);
          }
      }
      break;

    case PROJECT_NONE:
      break;
    }

  return APPLY_OK;
}

static Apply
writer_apply_message (Writer  *w,
                      Item    *item,
                      GError **error)
{
  sqlite3_stmt *stmt;
  gint64 *last = NULL;
  Apply result;

  if ((result = writer_ensure_session (w, item->session_id, g_get_real_time (), &last, error)) != APPLY_OK)
    return result;

  if (item->kind == ITEM_TRUNCATE)
    {
      if ((stmt = writer_stmt (w, STMT_TRUNCATE, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      sqlite3_bind_int64 (stmt, 2, item->number);
      return writer_run (w, stmt, "write to", error);
    }

  if ((stmt = writer_stmt (w, STMT_DELETE_MESSAGE, error)) == NULL)
    return APPLY_FAILED;
  BIND_TEXT (stmt, 1, item->session_id);
  sqlite3_bind_int64 (stmt, 2, item->number);
  if ((result = writer_run (w, stmt, "write to", error)) != APPLY_OK)
    return result;

  for (guint i = 0; i < item->blocks->len; i++)
    {
      if ((stmt = writer_stmt (w, STMT_INSERT_BLOCK, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      sqlite3_bind_int64 (stmt, 2, item->number);
      sqlite3_bind_int64 (stmt, 3, i);
      BIND_TEXT (stmt, 4, item->role);
      BIND_TEXT (stmt, 5, g_ptr_array_index (item->blocks, i));
      if ((result = writer_run (w, stmt, "write a message to", error)) != APPLY_OK)
        return result;
    }

  return APPLY_OK;
}

/* A session's snapshot of settled blocks (tally-store-snapshot.c):
 * replaces the one before. A session deleted meanwhile refuses it. */
static Apply
writer_apply_snapshot (Writer  *w,
                       Item    *item,
                       GError **error)
{
  sqlite3_stmt *stmt;

  if ((stmt = writer_stmt (w, STMT_SAVE_SNAPSHOT, error)) == NULL)
    return APPLY_FAILED;
  BIND_TEXT (stmt, 1, item->session_id);
  sqlite3_bind_int64 (stmt, 2, item->seq);
  sqlite3_bind_int64 (stmt, 3, item->number);
  BIND_TEXT (stmt, 4, item->text);
  BIND_TEXT (stmt, 5, item->payload);
  return writer_run (w, stmt, "save a snapshot in", error);
}

static void
writer_forget_session (Writer     *w,
                       const char *session_id)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_remove (w->last_seq, session_id);
  g_hash_table_iter_init (&iter, w->turns);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_str_equal (((TurnText *)value)->session_id, session_id))
      g_hash_table_iter_remove (&iter);
}

/* After an UPDATE or DELETE of one session's row: FALSE with
 * %TALLY_STORE_ERROR_NOT_FOUND when it touched no row. */
static gboolean
writer_session_changed (Writer      *w,
                        const char  *session_id,
                        GError     **error)
{
  if (sqlite3_changes (w->db) > 0)
    return TRUE;
  g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
               "There is no session %s in the store", session_id);
  return FALSE;
}

static Apply
writer_apply_operation (Writer  *w,
                        Item    *item,
                        GError **error)
{
  sqlite3_stmt *stmt;
  gint64 *last = NULL;
  Apply result;
  int rc;

  switch (item->kind)
    {
    case ITEM_PLAN:
      if (item->session_id != NULL &&
          (result = writer_ensure_session (w, item->session_id, g_get_real_time (), &last, error)) != APPLY_OK)
        return result;
      if ((stmt = writer_stmt (w, STMT_INSERT_PLAN, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->text);
      sqlite3_bind_int64 (stmt, 2, item->number);
      BIND_TEXT (stmt, 3, item->session_id);
      BIND_TEXT (stmt, 4, item->payload);
      sqlite3_bind_int64 (stmt, 5, g_get_real_time ());
      result = writer_run (w, stmt, "save a plan in", error);
      if (result == APPLY_REJECTED)
        {
          g_clear_error (error);
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                       "Plan %s already has a version %" G_GINT64_FORMAT, item->text, item->number);
        }
      return result;

    case ITEM_RENAME:
      if ((stmt = writer_stmt (w, STMT_RENAME, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      BIND_TEXT (stmt, 2, item->payload);
      if ((result = writer_run (w, stmt, "rename a session in", error)) != APPLY_OK)
        return result;
      if (!writer_session_changed (w, item->session_id, error))
        return APPLY_REJECTED;
      return writer_upsert_text (w, item->session_id, "", "title", item->payload, error);

    case ITEM_PIN:
      if ((stmt = writer_stmt (w, STMT_PIN, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      sqlite3_bind_int (stmt, 2, item->number != 0);
      if ((result = writer_run (w, stmt, "pin a session in", error)) != APPLY_OK)
        return result;
      if (!writer_session_changed (w, item->session_id, error))
        return APPLY_REJECTED;
      return APPLY_OK;

    case ITEM_DELETE:
      if ((stmt = writer_stmt (w, STMT_DELETE_SESSION, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      if ((result = writer_run (w, stmt, "delete a session from", error)) != APPLY_OK)
        return result;
      if (!writer_session_changed (w, item->session_id, error))
        return APPLY_REJECTED;
      writer_forget_session (w, item->session_id);
      return APPLY_OK;

    case ITEM_ADD_RULE:
      if ((stmt = writer_stmt (w, STMT_FIND_RULE, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->payload);
      BIND_TEXT (stmt, 2, item->mode);
      BIND_TEXT (stmt, 3, item->scope);
      BIND_TEXT (stmt, 4, item->workspace);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        item->number = sqlite3_column_int64 (stmt, 0);
      writer_reset (stmt);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        {
          tally_store_set_sqlite_error (error, w->db, rc, w->path, "read");
          return APPLY_FAILED;
        }
      if (item->number > 0)
        return APPLY_OK;

      if ((stmt = writer_stmt (w, STMT_INSERT_RULE, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->payload);
      BIND_TEXT (stmt, 2, item->mode);
      BIND_TEXT (stmt, 3, item->scope);
      BIND_TEXT (stmt, 4, item->workspace);
      sqlite3_bind_int64 (stmt, 5, g_get_real_time ());
      if ((result = writer_run (w, stmt, "save a rule in", error)) != APPLY_OK)
        return result;
      item->number = sqlite3_last_insert_rowid (w->db);
      return APPLY_OK;

    case ITEM_REMOVE_RULE:
      if ((stmt = writer_stmt (w, STMT_DELETE_RULE, error)) == NULL)
        return APPLY_FAILED;
      sqlite3_bind_int64 (stmt, 1, item->number);
      if ((result = writer_run (w, stmt, "remove a rule from", error)) != APPLY_OK)
        return result;
      if (sqlite3_changes (w->db) == 0)
        {
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                       "There is no rule %" G_GINT64_FORMAT " in the store", item->number);
          return APPLY_REJECTED;
        }
      return APPLY_OK;

    case ITEM_EVENT:
    case ITEM_MESSAGE:
    case ITEM_TRUNCATE:
    case ITEM_SNAPSHOT:
    case ITEM_FLUSH:
    case ITEM_QUIT:
    case ITEM_HOOK_MAX_PAGES:
    default:
      g_assert_not_reached ();
    }

  return APPLY_OK;
}

/* Writes the assistant text of the turns still running, so a flush makes
 * them searchable too; turn_finished writes the final text. */
static Apply
writer_index_open_turns (Writer  *w,
                         GError **error)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, w->turns);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      TurnText *turn = value;
      Apply result;

      if (turn->finished || turn->text->len == 0)
        continue;
      result = writer_upsert_text (w, turn->session_id, turn->turn_id, "assistant", turn->text->str, error);
      if (result == APPLY_FAILED)
        return APPLY_FAILED;
      if (result == APPLY_REJECTED)
        {
          /* The session is gone (deleted elsewhere): forget its text */
          g_clear_error (error);
          g_hash_table_iter_remove (&iter);
        }
    }

  return APPLY_OK;
}

static gboolean
writer_begin (Writer  *w,
              GError **error)
{
  g_hash_table_remove_all (w->touched);
  w->batch_flush = FALSE;
  return tally_store_exec (w->db, w->path, "BEGIN IMMEDIATE", error);
}

static void
writer_rollback (Writer *w)
{
  sqlite3_exec (w->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Applies one item inside the open transaction. Returns FALSE when the
 * batch must be rolled back (@error set); an item refused on its own
 * merits keeps its error in item->error and the batch goes on. */
static gboolean
writer_apply (Writer  *w,
              Item    *item,
              GError **error)
{
  Apply result;

  g_clear_error (&item->error);
  switch (item->kind)
    {
    case ITEM_EVENT:
      result = writer_apply_event (w, item, &item->error);
      break;
    case ITEM_MESSAGE:
    case ITEM_TRUNCATE:
      result = writer_apply_message (w, item, &item->error);
      break;
    case ITEM_SNAPSHOT:
      result = writer_apply_snapshot (w, item, &item->error);
      break;
    case ITEM_FLUSH:
    case ITEM_QUIT:
      w->batch_flush = TRUE;
      result = APPLY_OK;
      break;
    case ITEM_PLAN:
    case ITEM_RENAME:
    case ITEM_PIN:
    case ITEM_DELETE:
    case ITEM_ADD_RULE:
    case ITEM_REMOVE_RULE:
      result = writer_apply_operation (w, item, &item->error);
      break;
    case ITEM_HOOK_MAX_PAGES:
    default:
      g_assert_not_reached ();
    }

  if (result == APPLY_FAILED)
    {
      g_propagate_error (error, g_steal_pointer (&item->error));
      return FALSE;
    }
  return TRUE;
}

/* Ends the batch: the search text of running turns on a flush, the
 * sessions' `updated_us`, then COMMIT. Rolls back on failure. */
static gboolean
writer_finish (Writer  *w,
               GError **error)
{
  GHashTableIter iter;
  gpointer key, value;

  if (w->batch_flush && writer_index_open_turns (w, error) != APPLY_OK)
    {
      writer_rollback (w);
      return FALSE;
    }

  g_hash_table_iter_init (&iter, w->touched);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      sqlite3_stmt *stmt = writer_stmt (w, STMT_TOUCH, error);

      if (stmt == NULL)
        {
          writer_rollback (w);
          return FALSE;
        }
      BIND_TEXT (stmt, 1, key);
      sqlite3_bind_int64 (stmt, 2, *(gint64 *)value);
      if (writer_run (w, stmt, "write to", error) != APPLY_OK)
        {
          writer_rollback (w);
          return FALSE;
        }
    }

  if (!tally_store_exec (w->db, w->path, "COMMIT", error))
    {
      writer_rollback (w);
      return FALSE;
    }

  return TRUE;
}

/* Writes everything pending as one transaction (a retry after a failure) */
static gboolean
writer_write_pending (Writer  *w,
                      GError **error)
{
  if (!writer_begin (w, error))
    return FALSE;

  for (guint i = 0; i < w->pending->len; i++)
    if (!writer_apply (w, g_ptr_array_index (w->pending, i), error))
      {
        writer_rollback (w);
        return FALSE;
      }

  return writer_finish (w, error);
}

static void
writer_after_success (Writer *w)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, w->turns);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((TurnText *)value)->finished)
      g_hash_table_iter_remove (&iter);

  if (w->failure != NULL)
    tally_store_target_set_failure (w->target, NULL);
  g_clear_error (&w->failure);

  for (guint i = 0; i < w->pending->len; i++)
    {
      Item *item = g_ptr_array_index (w->pending, i);

      if (item_is_data (item))
        {
          if (item->error != NULL)
            {
              g_message ("%s", item->error->message);
              tally_store_target_report (w->target, item->error);
              if (w->rejected == NULL)
                w->rejected = g_error_copy (item->error);
            }
        }
      else if (item->kind == ITEM_FLUSH || item->kind == ITEM_QUIT)
        completion_finish (item->completion, 0, g_steal_pointer (&w->rejected));
      else
        completion_finish (item->completion, item->number, g_steal_pointer (&item->error));
    }

  g_ptr_array_set_size (w->pending, 0);
}

static void
writer_after_failure (Writer *w,
                      GError *error)
{
  gpointer *items;
  gsize n_items = 0;

  g_message ("%s (the queued data is kept and will be written later)", error->message);
  tally_store_target_report (w->target, error);
  tally_store_target_set_failure (w->target, error);

  g_clear_error (&w->failure);
  w->failure = error;
  w->failed_at = g_get_monotonic_time ();

  /* The rollback undid what this batch learnt about the file */
  g_hash_table_remove_all (w->last_seq);

  /* Keep the data, in order; answer the waiting operations */
  items = g_ptr_array_steal (w->pending, &n_items);
  for (gsize i = 0; i < n_items; i++)
    {
      Item *item = items[i];

      g_clear_error (&item->error);
      if (item_is_data (item))
        g_ptr_array_add (w->pending, item);
      else
        {
          completion_finish (item->completion, 0, g_error_copy (error));
          tally_store_item_free (item);
        }
    }
  g_free (items);
}

static void
writer_run_hook (Writer *w,
                 Item   *item)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = g_strdup_printf ("PRAGMA max_page_count = %" G_GINT64_FORMAT, item->number);
  GError *error = NULL;
  gint64 result = 0;
  int rc;

  rc = sqlite3_prepare_v2 (w->db, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    result = sqlite3_column_int64 (stmt, 0);
  else
    tally_store_set_sqlite_error (&error, w->db, rc, w->path, "change a limit of");

  completion_finish (item->completion, result, error);
  tally_store_item_free (item);
}

/* The next item, waiting until @deadline (monotonic µs; 0 waits without
 * limit). Test hooks are run here, between items, and never returned. */
static Item *
writer_pop (Writer *w,
            gint64  deadline)
{
  for (;;)
    {
      Item *item;

      if (deadline == 0)
        item = g_async_queue_pop (w->queue);
      else
        {
          gint64 remaining = deadline - g_get_monotonic_time ();

          if (remaining <= 0)
            return NULL;
          item = g_async_queue_timeout_pop (w->queue, remaining);
          if (item == NULL)
            return NULL;
        }

      if (item->kind != ITEM_HOOK_MAX_PAGES)
        return item;
      writer_run_hook (w, item);
    }
}

static gboolean
item_ends_batch (const Item *item)
{
  return !item_is_data (item);
}

/*
 * Normally a batch opens a transaction when its first item arrives and
 * applies every item as it is taken, so that at the end of the window only
 * the COMMIT is left: the commit lands about BATCH_WINDOW_US after the
 * first item. An operation or a flush ends the window early.
 *
 * After a failure the kept items are not tried again one by one: new items
 * are gathered until a flush or an operation asks for a retry, or
 * RETRY_INTERVAL_US has passed, and then everything is written as one
 * transaction.
 */
static gpointer
writer_thread_func (gpointer data)
{
  Writer *w = data;
  gboolean quit = FALSE;

  while (!quit)
    {
      GError *error = NULL;
      gboolean ok;
      Item *item;

      if (w->failure != NULL)
        {
          gint64 deadline = MAX (w->failed_at + RETRY_INTERVAL_US, 1);

          while ((item = writer_pop (w, deadline)) != NULL)
            {
              quit = quit || item->kind == ITEM_QUIT;
              g_ptr_array_add (w->pending, item);
              if (item_ends_batch (item))
                break;
            }
          if (w->pending->len == 0)
            continue;
          ok = writer_write_pending (w, &error);
        }
      else
        {
          gboolean began;
          gint64 deadline;

          g_assert (w->pending->len == 0);
          item = writer_pop (w, 0);
          deadline = g_get_monotonic_time () + BATCH_WINDOW_US;
          ok = began = writer_begin (w, &error);

          while (item != NULL)
            {
              quit = quit || item->kind == ITEM_QUIT;
              g_ptr_array_add (w->pending, item);
              if (ok)
                ok = writer_apply (w, item, &error);
              if (!ok || item_ends_batch (item))
                break;
              item = writer_pop (w, deadline);
            }

          if (ok)
            ok = writer_finish (w, &error);
          else if (began)
            writer_rollback (w);
        }

      if (ok)
        writer_after_success (w);
      else
        writer_after_failure (w, error);
    }

  /* Already reported through "write-failed" and the failed flush */
  if (w->pending->len > 0)
    g_message ("%u queued writes to the session store “%s” could not be written and are lost: %s",
               w->pending->len, w->path, w->failure ? w->failure->message : "unknown error");

  writer_free (w);
  return NULL;
}

/* }}} */

/* Queues @item (taken) and waits for the writer to commit it */
gboolean
tally_store_run_operation (TallyStore  *self,
                           Item        *item,
                           gint64      *result,
                           GError     **error)
{
  Completion completion;
  gboolean ok;

  if (self->writer == NULL)
    {
      tally_store_item_free (item);
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                   "%s", self->read_only_reason ? self->read_only_reason : "The store is closed.");
      return FALSE;
    }

  completion_init (&completion);
  item->completion = &completion;
  g_async_queue_push (self->queue, item);
  completion_wait (&completion);

  if (result != NULL)
    *result = completion.result;
  ok = completion.error == NULL;
  if (!ok)
    g_propagate_error (error, g_steal_pointer (&completion.error));
  completion_clear (&completion);

  return ok;
}

/*
 * Hands @db (taken) to a new writer thread that serves @self's queue.
 *
 * Returns: (transfer full): the thread, joined by dispose
 */
GThread *
tally_store_writer_start (TallyStore *self,
                          sqlite3    *db)
{
  Writer *w = g_new0 (Writer, 1);

  w->db = db;
  w->path = g_strdup (self->path);
  w->queue = g_async_queue_ref (self->queue);
  w->target = tally_store_target_ref (self->target);
  w->pending = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_store_item_free);
  w->last_seq = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  w->turns = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, turn_text_free);
  w->touched = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  return g_thread_new ("tally-store-writer", writer_thread_func, w);
}

/* }}} */
