/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

/* F_OFD_SETLK (open file description locks) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tally-event.h"
#include "tally-store-private.h"

/*
 * TallyStore is the flight recorder: one SQLite file in WAL mode holding
 * the sessions, their event logs, their API conversations, the permission
 * rules and the plans.
 *
 * Writes never block the caller. They are queued (a GAsyncQueue) to one
 * writer thread, which owns the read-write connection and commits whatever
 * arrived within BATCH_WINDOW_US of the first item as one transaction. With
 * `synchronous=NORMAL` a WAL commit is in the operating system's hands as
 * soon as it returns, so a killed process loses at most the events of the
 * batch being gathered. Operations whose caller needs an answer (rename,
 * delete, rules, plans, flush) travel the same queue, so they keep their
 * order relative to the events, and the caller waits for their commit.
 *
 * A batch that cannot be written (disk full, read-only file, damage) is
 * rolled back and its data stays queued in memory: the failure is reported
 * through the "write-failed" signal on the main context that opened the
 * store, and the writer tries again on the next flush or operation, or
 * after RETRY_INTERVAL_US. An item the database refuses on its own merits
 * (a seq that does not increase) is dropped and reported the same way.
 *
 * Reads run in the caller's thread on a second, read-only connection,
 * serialised by a mutex; the _async variants run the same code in a GTask
 * thread.
 */

#define BATCH_WINDOW_US   (25 * G_TIME_SPAN_MILLISECOND)
#define RETRY_INTERVAL_US (5 * G_TIME_SPAN_SECOND)
#define BUSY_TIMEOUT_MS   5000
#define MIN_PREFIX_CHARS  4
#define MAX_SEARCH_HITS   100

/**
 * tally_store_error_quark:
 *
 * Returns: the #GQuark of %TALLY_STORE_ERROR
 */
G_DEFINE_QUARK (tally-store-error-quark, tally_store_error)

/* {{{ Boxed records */

/**
 * tally_rule_get_type:
 *
 * Returns: the boxed #GType of #TallyRule
 */
G_DEFINE_BOXED_TYPE (TallyRule, tally_rule, tally_rule_copy, tally_rule_free)

/**
 * tally_plan_version_get_type:
 *
 * Returns: the boxed #GType of #TallyPlanVersion
 */
G_DEFINE_BOXED_TYPE (TallyPlanVersion, tally_plan_version, tally_plan_version_copy, tally_plan_version_free)

/**
 * tally_rule_copy:
 * @rule: a #TallyRule
 *
 * Returns: (transfer full): a deep copy of @rule
 */
TallyRule *
tally_rule_copy (const TallyRule *rule)
{
  TallyRule *copy;

  g_return_val_if_fail (rule != NULL, NULL);

  copy = g_new0 (TallyRule, 1);
  copy->id = rule->id;
  copy->pattern = g_strdup (rule->pattern);
  copy->decision = g_strdup (rule->decision);
  copy->scope = g_strdup (rule->scope);
  copy->workspace = g_strdup (rule->workspace);
  copy->created_us = rule->created_us;
  return copy;
}

/**
 * tally_rule_free:
 * @rule: (transfer full) (nullable): a #TallyRule
 *
 * Frees @rule and its strings.
 */
void
tally_rule_free (TallyRule *rule)
{
  if (rule == NULL)
    return;
  g_free (rule->pattern);
  g_free (rule->decision);
  g_free (rule->scope);
  g_free (rule->workspace);
  g_free (rule);
}

/**
 * tally_plan_version_copy:
 * @plan: a #TallyPlanVersion
 *
 * Returns: (transfer full): a deep copy of @plan
 */
TallyPlanVersion *
tally_plan_version_copy (const TallyPlanVersion *plan)
{
  TallyPlanVersion *copy;

  g_return_val_if_fail (plan != NULL, NULL);

  copy = g_new0 (TallyPlanVersion, 1);
  copy->plan_id = g_strdup (plan->plan_id);
  copy->version = plan->version;
  copy->session_id = g_strdup (plan->session_id);
  copy->markdown = g_strdup (plan->markdown);
  copy->created_us = plan->created_us;
  return copy;
}

/**
 * tally_plan_version_free:
 * @plan: (transfer full) (nullable): a #TallyPlanVersion
 *
 * Frees @plan and its strings.
 */
void
tally_plan_version_free (TallyPlanVersion *plan)
{
  if (plan == NULL)
    return;
  g_free (plan->plan_id);
  g_free (plan->session_id);
  g_free (plan->markdown);
  g_free (plan);
}

/* }}} */
/* {{{ JSON helpers that never warn on unexpected shapes */

static const char *
json_string (JsonObject *object,
             const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static gboolean
json_int (JsonObject *object,
          const char *member,
          gint64     *out)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE ||
      json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_int (node);
  return TRUE;
}

static gboolean
json_number (JsonObject *object,
             const char *member,
             double     *out)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    *out = json_node_get_double (node);
  else if (json_node_get_value_type (node) == G_TYPE_INT64)
    *out = (double)json_node_get_int (node);
  else
    return FALSE;
  return TRUE;
}

static gint64
json_int_or (JsonObject *object,
             const char *member,
             gint64      fallback)
{
  gint64 value;

  return json_int (object, member, &value) ? value : fallback;
}

static JsonObject *
json_object_member (JsonObject *object,
                    const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  return json_node_get_object (node);
}

/* }}} */
/* {{{ Queue items */

typedef enum {
  /* Data: kept in memory until written */
  ITEM_EVENT,
  ITEM_MESSAGE,
  ITEM_TRUNCATE,
  /* Operations: the caller waits for the outcome */
  ITEM_PLAN,
  ITEM_RENAME,
  ITEM_DELETE,
  ITEM_ADD_RULE,
  ITEM_REMOVE_RULE,
  ITEM_FLUSH,
  ITEM_QUIT,
  /* Run as soon as it is taken, outside any batch */
  ITEM_HOOK_MAX_PAGES,
} ItemKind;

typedef struct {
  GMutex    lock;
  GCond     cond;
  gboolean  done;
  GError   *error;
  gint64    result;
} Completion;

typedef struct {
  ItemKind    kind;
  char       *session_id;
  gint64      seq;
  gint64      ts;
  char       *type;
  char       *payload;     /* event line; plan markdown; new title; rule pattern */
  char       *turn_id;
  char       *text;        /* title, prompt or delta text */
  char       *model;
  char       *workspace;   /* also a rule's workspace */
  char       *database;
  char       *mode;        /* also a rule's decision */
  char       *scope;
  gboolean    cost_known;
  double      cost;
  gint64      usage[4];    /* input, output, cache read, cache write */
  gint64      number;      /* msg index, n messages, plan version, rule id, pages */
  char       *role;
  GPtrArray  *blocks;
  Completion *completion;
  GError     *error;       /* this item's outcome in the current attempt */
} Item;

static Item *
item_new (ItemKind kind)
{
  Item *item = g_new0 (Item, 1);

  item->kind = kind;
  return item;
}

static void
item_free (Item *item)
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
  return item->kind == ITEM_EVENT || item->kind == ITEM_MESSAGE || item->kind == ITEM_TRUNCATE;
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
/* {{{ Signal delivery */

enum {
  WRITE_FAILED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The writer thread reports failures through this shared record, so that a
 * report still queued on the main context when the store goes away finds
 * no store instead of a freed one. */
typedef struct {
  gatomicrefcount  ref_count;
  GMutex           lock;
  TallyStore      *store;     /* not a reference; cleared in dispose */
  GMainContext    *context;
  GError          *failure;   /* while queued data waits for a retry */
} SignalTarget;

static SignalTarget *
signal_target_ref (SignalTarget *target)
{
  g_atomic_ref_count_inc (&target->ref_count);
  return target;
}

static void
signal_target_unref (SignalTarget *target)
{
  if (!g_atomic_ref_count_dec (&target->ref_count))
    return;
  g_mutex_clear (&target->lock);
  g_clear_error (&target->failure);
  g_main_context_unref (target->context);
  g_free (target);
}

typedef struct {
  SignalTarget *target;
  GError       *error;
} Report;

static void
report_free (gpointer data)
{
  Report *report = data;

  signal_target_unref (report->target);
  g_error_free (report->error);
  g_free (report);
}

static gboolean
report_dispatch_cb (gpointer data)
{
  Report *report = data;
  TallyStore *store = NULL;

  g_mutex_lock (&report->target->lock);
  if (report->target->store != NULL)
    store = g_object_ref (report->target->store);
  g_mutex_unlock (&report->target->lock);

  if (store != NULL)
    {
      g_signal_emit (store, signals[WRITE_FAILED], 0, report->error);
      g_object_unref (store);
    }

  return G_SOURCE_REMOVE;
}

/* Always deferred to an idle of the store's main context, also when called
 * on that context's thread, so the signal never runs inside the caller's
 * append. @error is copied. */
/* The failure tally_store_dup_write_error() tells; %NULL clears it */
static void
signal_target_set_failure (SignalTarget *target,
                           const GError *error)
{
  g_mutex_lock (&target->lock);
  g_clear_error (&target->failure);
  if (error != NULL)
    target->failure = g_error_copy (error);
  g_mutex_unlock (&target->lock);
}

static void
signal_target_report (SignalTarget *target,
                      const GError *error)
{
  g_autoptr(GSource) source = g_idle_source_new ();
  Report *report = g_new0 (Report, 1);

  report->target = signal_target_ref (target);
  report->error = g_error_copy (error);
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, report_dispatch_cb, report, report_free);
  g_source_set_static_name (source, "[tally] store write-failed");
  g_source_attach (source, target->context);
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
  STMT_DELETE_SESSION,
  STMT_FIND_RULE,
  STMT_INSERT_RULE,
  STMT_DELETE_RULE,
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
  [STMT_DELETE_SESSION] =
    "DELETE FROM sessions WHERE id = ?1",
  [STMT_FIND_RULE] =
    "SELECT id FROM rules WHERE pattern = ?1 AND decision = ?2 AND scope = ?3 AND workspace IS ?4",
  [STMT_INSERT_RULE] =
    "INSERT INTO rules (pattern, decision, scope, workspace, created_us) VALUES (?1, ?2, ?3, ?4, ?5)",
  [STMT_DELETE_RULE] =
    "DELETE FROM rules WHERE id = ?1",
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
  signal_target_unref (w->target);
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

#define BIND_TEXT(stmt, n, value) sqlite3_bind_text ((stmt), (n), (value), -1, SQLITE_STATIC)

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

  if (g_str_equal (item->type, "session_created"))
    {
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
    }
  else if (g_str_equal (item->type, "turn_started"))
    {
      if ((stmt = writer_stmt (w, STMT_TURN_STARTED, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      BIND_TEXT (stmt, 2, item->mode);
      BIND_TEXT (stmt, 3, item->model);
      if ((result = writer_run (w, stmt, "write to", error)) != APPLY_OK)
        return result;
      writer_get_turn (w, item->session_id, item->turn_id, TRUE);
      return writer_upsert_text (w, item->session_id, item->turn_id, "prompt", item->text, error);
    }
  else if (g_str_equal (item->type, "text_delta"))
    {
      TurnText *turn = writer_get_turn (w, item->session_id, item->turn_id, TRUE);

      if (item->seq > turn->last_seq && item->text != NULL)
        {
          g_string_append (turn->text, item->text);
          turn->last_seq = item->seq;
        }
    }
  else if (g_str_equal (item->type, "turn_finished"))
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
      if (sqlite3_changes (w->db) == 0)
        {
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                       "There is no session %s in the store", item->session_id);
          return APPLY_REJECTED;
        }
      return writer_upsert_text (w, item->session_id, "", "title", item->payload, error);

    case ITEM_DELETE:
      if ((stmt = writer_stmt (w, STMT_DELETE_SESSION, error)) == NULL)
        return APPLY_FAILED;
      BIND_TEXT (stmt, 1, item->session_id);
      if ((result = writer_run (w, stmt, "delete a session from", error)) != APPLY_OK)
        return result;
      if (sqlite3_changes (w->db) == 0)
        {
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                       "There is no session %s in the store", item->session_id);
          return APPLY_REJECTED;
        }
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
    case ITEM_FLUSH:
    case ITEM_QUIT:
      w->batch_flush = TRUE;
      result = APPLY_OK;
      break;
    case ITEM_PLAN:
    case ITEM_RENAME:
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
    signal_target_set_failure (w->target, NULL);
  g_clear_error (&w->failure);

  for (guint i = 0; i < w->pending->len; i++)
    {
      Item *item = g_ptr_array_index (w->pending, i);

      if (item_is_data (item))
        {
          if (item->error != NULL)
            {
              g_message ("%s", item->error->message);
              signal_target_report (w->target, item->error);
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
  signal_target_report (w->target, error);
  signal_target_set_failure (w->target, error);

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
          item_free (item);
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
  item_free (item);
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
/* {{{ TallyStore */

/**
 * TallyStore:
 *
 * The session store (docs/architecture.md §10): one SQLite file holding every
 * session's event log (append-only, one JSON line per event, `seq`
 * increasing), its API conversation block by block, permission rules and
 * plans, with a full-text index over titles, prompts and assistant text.
 *
 * Writes (tally_store_append_event(), tally_store_save_message()) return at
 * once and are committed by a writer thread within about 25 ms; failures
 * arrive through #TallyStore::write-failed and tally_store_flush(). Reads
 * run in the calling thread, or in a worker thread through the `_async`
 * variants, on a separate read-only connection.
 */
struct _TallyStore
{
  GObject       parent_instance;

  char         *path;
  gboolean      read_only;
  char         *read_only_reason;
  SignalTarget *target;

  /* Reads */
  GMutex        read_lock;
  sqlite3      *read_db;

  /* Writes */
  sqlite3      *write_db;      /* until the writer thread takes it */
  GThread      *writer;
  GAsyncQueue  *queue;
  int           refused;       /* atomic: an append was refused as read-only since the last flush */

  /* The newest seq handed over per session, to refuse a step back at once */
  GMutex        seq_lock;
  GHashTable   *handed_seq;

  /* Session locks (one writer per session): the `<path>-lock` file and how
   * many holders each locked session has in this store object */
  GMutex        session_lock;
  int           lock_fd;
  GHashTable   *locked;        /* session_id -> GUINT_TO_POINTER (holders) */
};

G_DEFINE_FINAL_TYPE (TallyStore, tally_store, G_TYPE_OBJECT)

static gboolean
run_operation (TallyStore  *self,
               Item        *item,
               gint64      *result,
               GError     **error)
{
  Completion completion;
  gboolean ok;

  if (self->writer == NULL)
    {
      item_free (item);
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

static void
tally_store_dispose (GObject *object)
{
  TallyStore *self = (TallyStore *)object;

  if (self->target != NULL)
    {
      g_mutex_lock (&self->target->lock);
      self->target->store = NULL;
      g_mutex_unlock (&self->target->lock);
    }

  if (self->writer != NULL)
    {
      g_autoptr(GError) error = NULL;

      if (!run_operation (self, item_new (ITEM_QUIT), NULL, &error))
        g_message ("Closing the session store: %s", error->message);
      g_thread_join (g_steal_pointer (&self->writer));
    }

  G_OBJECT_CLASS (tally_store_parent_class)->dispose (object);
}

static void
tally_store_finalize (GObject *object)
{
  TallyStore *self = (TallyStore *)object;

  g_clear_pointer (&self->read_db, sqlite3_close);
  g_clear_pointer (&self->write_db, sqlite3_close);
  g_clear_pointer (&self->queue, g_async_queue_unref);
  g_clear_pointer (&self->target, signal_target_unref);
  g_clear_pointer (&self->handed_seq, g_hash_table_unref);
  g_clear_pointer (&self->locked, g_hash_table_unref);
  if (self->lock_fd >= 0)
    close (self->lock_fd);     /* releases every lock this store held */
  g_mutex_clear (&self->read_lock);
  g_mutex_clear (&self->seq_lock);
  g_mutex_clear (&self->session_lock);
  g_free (self->path);
  g_free (self->read_only_reason);

  G_OBJECT_CLASS (tally_store_parent_class)->finalize (object);
}

static void
tally_store_class_init (TallyStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_store_dispose;
  object_class->finalize = tally_store_finalize;

  /**
   * TallyStore::write-failed:
   * @self: the store
   * @error: the failure, in %TALLY_STORE_ERROR: %TALLY_STORE_ERROR_FULL,
   *   %TALLY_STORE_ERROR_READ_ONLY, %TALLY_STORE_ERROR_CORRUPT,
   *   %TALLY_STORE_ERROR_IO (the data stays queued in memory and is
   *   written by a later flush), or %TALLY_STORE_ERROR_INVALID (one item,
   *   such as an event whose seq does not increase, was refused and
   *   dropped)
   *
   * Emitted on the main context that opened the store (from an idle, never
   * inside the call that queued the write) whenever queued data could not
   * be written. A read-only store emits it once for the first refused
   * append after opening or after each tally_store_flush().
   */
  signals[WRITE_FAILED] =
    g_signal_new ("write-failed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
tally_store_init (TallyStore *self)
{
  g_mutex_init (&self->read_lock);
  g_mutex_init (&self->seq_lock);
  g_mutex_init (&self->session_lock);
  self->handed_seq = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->locked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->lock_fd = -1;
  self->queue = g_async_queue_new_full ((GDestroyNotify)item_free);

  self->target = g_new0 (SignalTarget, 1);
  g_atomic_ref_count_init (&self->target->ref_count);
  g_mutex_init (&self->target->lock);
  self->target->store = self;
  self->target->context = g_main_context_ref_thread_default ();
}

/**
 * tally_store_get_default_path:
 *
 * The store used when no path is given: `tally/tally.db` under
 * g_get_user_data_dir() (`$XDG_DATA_HOME`, by default `~/.local/share`).
 *
 * Returns: (transfer full) (type filename): the default store path
 */
char *
tally_store_get_default_path (void)
{
  return g_build_filename (g_get_user_data_dir (), "tally", "tally.db", NULL);
}

static int
read_user_version (sqlite3 *db,
                   int     *version)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    return rc;
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    return rc;
  *version = sqlite3_column_int (stmt, 0);
  return SQLITE_OK;
}

static void
set_corrupt_error (GError     **error,
                   const char  *path,
                   const char  *detail)
{
  g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT,
               "The session store “%s” is not a SQLite database or is damaged (%s). "
               "Move it aside to start a new store, or open another one with --store.",
               path, detail);
}

/* PRAGMA quick_check(1): the first problem only, enough to refuse */
static gboolean
check_integrity (sqlite3     *db,
                 const char  *path,
                 GError     **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  const char *answer;
  int rc;

  rc = sqlite3_prepare_v2 (db, "PRAGMA quick_check (1)", -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        set_corrupt_error (error, path, sqlite3_errmsg (db));
      else
        tally_store_set_sqlite_error (error, db, rc, path, "check");
      return FALSE;
    }

  answer = (const char *)sqlite3_column_text (stmt, 0);
  if (g_strcmp0 (answer, "ok") != 0)
    {
      set_corrupt_error (error, path, answer ? answer : "quick_check failed");
      return FALSE;
    }

  return TRUE;
}

static gboolean
has_schema_objects (sqlite3 *db)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM sqlite_schema LIMIT 1", -1, &stmt, NULL) != SQLITE_OK)
    return TRUE;
  return sqlite3_step (stmt) == SQLITE_ROW;
}

static gboolean
pragma_text (sqlite3    *db,
             const char *sql,
             char      **out)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK || sqlite3_step (stmt) != SQLITE_ROW)
    return FALSE;
  *out = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
  return TRUE;
}

static gboolean
open_connection (const char  *path,
                 int          flags,
                 sqlite3    **db,
                 GError     **error)
{
  int rc = sqlite3_open_v2 (path, db, flags | SQLITE_OPEN_FULLMUTEX, NULL);

  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, *db, rc, path, "open");
      g_clear_pointer (db, sqlite3_close);
      return FALSE;
    }

  sqlite3_extended_result_codes (*db, 1);
  sqlite3_busy_timeout (*db, BUSY_TIMEOUT_MS);
  return TRUE;
}

/* A store that this build must not change: reads go through the one
 * connection, which refuses writes itself too. */
static void
become_read_only (TallyStore *self,
                  sqlite3    *db,
                  char       *reason)
{
  sqlite3_exec (db, "PRAGMA query_only = ON", NULL, NULL, NULL);
  self->read_db = db;
  self->read_only = TRUE;
  self->read_only_reason = reason;
  g_message ("%s", reason);
}

/**
 * tally_store_open:
 * @path: (nullable) (type filename): the store file, or %NULL for
 *   tally_store_get_default_path()
 * @error: return location for a #GError
 *
 * Opens the store at @path, creating it (and its folder) when missing, and
 * brings its schema up to %TALLY_STORE_SCHEMA_VERSION. Before upgrading an
 * existing file, a backup copy is written beside it as
 * `<path>.bak-v<old version>-<UTC timestamp>`.
 *
 * A file written by a newer Tally (a higher `user_version`), or one that
 * cannot be written, opens read-only: see tally_store_is_read_only() and
 * tally_store_get_read_only_reason(); such an open does not fail.
 *
 * The store's "write-failed" signal is delivered on the thread-default main
 * context of the calling thread.
 *
 * Returns: (transfer full) (nullable): the store, or %NULL with @error set
 *   in %TALLY_STORE_ERROR: %TALLY_STORE_ERROR_CORRUPT (not a SQLite
 *   database, damaged, or a database that is not a Tally store),
 *   %TALLY_STORE_ERROR_MIGRATION_FAILED (the upgrade was rolled back; the
 *   message names the backup), %TALLY_STORE_ERROR_READ_ONLY (an old schema
 *   in a file that cannot be written), %TALLY_STORE_ERROR_IO
 */
TallyStore *
tally_store_open (const char  *path,
                  GError     **error)
{
  g_autoptr(TallyStore) self = NULL;
  g_autofree char *default_path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *journal = NULL;
  g_autofree char *backup_path = NULL;
  sqlite3 *db = NULL;
  GStatBuf st;
  gboolean existed;
  Writer *w;
  int version = 0;
  int rc;

  if (path == NULL)
    path = default_path = tally_store_get_default_path ();

  self = g_object_new (TALLY_TYPE_STORE, NULL);
  self->path = g_strdup (path);

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "The session store “%s” is a folder, not a file", path);
      return NULL;
    }

  dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "Could not create the folder “%s” for the session store: %s",
                   dir, g_strerror (saved_errno));
      return NULL;
    }

  existed = g_stat (path, &st) == 0 && st.st_size > 0;

  if (!open_connection (path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, error))
    return NULL;

  if (existed && !check_integrity (db, path, error))
    {
      sqlite3_close (db);
      return NULL;
    }

  rc = read_user_version (db, &version);
  if (rc != SQLITE_OK)
    {
      if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        set_corrupt_error (error, path, sqlite3_errmsg (db));
      else
        tally_store_set_sqlite_error (error, db, rc, path, "read");
      sqlite3_close (db);
      return NULL;
    }

  if (version > TALLY_STORE_SCHEMA_VERSION)
    {
      become_read_only (self, db,
                        g_strdup_printf ("This store was written by a newer version of Tally "
                                         "(schema %d; this build knows %d). It is open read-only.",
                                         version, TALLY_STORE_SCHEMA_VERSION));
      return g_steal_pointer (&self);
    }

  if (version == 0 && existed && has_schema_objects (db))
    {
      sqlite3_close (db);
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT,
                   "“%s” is a SQLite database but not a Tally session store; "
                   "it was left untouched", path);
      return NULL;
    }

  if (sqlite3_db_readonly (db, "main") == 1)
    {
      if (version < TALLY_STORE_SCHEMA_VERSION)
        {
          sqlite3_close (db);
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                       "The session store “%s” needs an upgrade to schema %d but the file "
                       "cannot be written", path, TALLY_STORE_SCHEMA_VERSION);
          return NULL;
        }
      become_read_only (self, db,
                        g_strdup_printf ("The session store “%s” cannot be written. It is open read-only.",
                                         path));
      return g_steal_pointer (&self);
    }

  if (version < TALLY_STORE_SCHEMA_VERSION)
    {
      g_autoptr(GError) local_error = NULL;

      if (existed && (version > 0 || has_schema_objects (db)) &&
          !tally_store_backup (db, path, version, &backup_path, &local_error))
        {
          sqlite3_close (db);
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                       "The session store “%s” needs an upgrade from schema %d to %d, "
                       "but no backup copy could be made first, so it was left as it was: %s",
                       path, version, TALLY_STORE_SCHEMA_VERSION, local_error->message);
          return NULL;
        }

      if (!tally_store_migrate (db, path, version, &local_error))
        {
          sqlite3_close (db);
          if (backup_path != NULL)
            g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                         "Could not upgrade the session store “%s” from schema %d to %d (%s). "
                         "The file was left as it was; a backup copy is at “%s”.",
                         path, version, TALLY_STORE_SCHEMA_VERSION, local_error->message, backup_path);
          else
            g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                         "Could not create the session store “%s” (%s)",
                         path, local_error->message);
          return NULL;
        }

      if (backup_path != NULL)
        g_message ("Upgraded the session store %s from schema %d to %d; backup at %s",
                   path, version, TALLY_STORE_SCHEMA_VERSION, backup_path);
    }

  /* WAL: readers never block the writer, and with synchronous=NORMAL a
   * commit survives a crash of the process (not of the machine). */
  if (!pragma_text (db, "PRAGMA journal_mode = WAL", &journal) || g_ascii_strcasecmp (journal, "wal") != 0)
    g_warning ("The session store %s could not switch to WAL mode (journal mode %s)",
               path, journal ? journal : "unknown");
  if (!tally_store_exec (db, path, "PRAGMA synchronous = NORMAL", error) ||
      !tally_store_exec (db, path, "PRAGMA foreign_keys = ON", error))
    {
      sqlite3_close (db);
      return NULL;
    }

  if (!open_connection (path, SQLITE_OPEN_READONLY, &self->read_db, error))
    {
      sqlite3_close (db);
      return NULL;
    }

  w = g_new0 (Writer, 1);
  w->db = db;
  w->path = g_strdup (path);
  w->queue = g_async_queue_ref (self->queue);
  w->target = signal_target_ref (self->target);
  w->pending = g_ptr_array_new_with_free_func ((GDestroyNotify)item_free);
  w->last_seq = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  w->turns = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, turn_text_free);
  w->touched = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->writer = g_thread_new ("tally-store-writer", writer_thread_func, w);

  return g_steal_pointer (&self);
}

/**
 * tally_store_get_path:
 * @self: a #TallyStore
 *
 * Returns: (transfer none) (type filename): the store's file
 */
const char *
tally_store_get_path (TallyStore *self)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  return self->path;
}

/**
 * tally_store_dup_write_error:
 * @self: a #TallyStore
 *
 * The failure that keeps queued data from being written, as last reported
 * by #TallyStore::write-failed, for a UI that shows the state later (an
 * info bar after a window opens). It is cleared by the next successful
 * commit. Refused items (%TALLY_STORE_ERROR_INVALID) and the refusals of a
 * read-only store are not kept here (see tally_store_is_read_only()).
 *
 * Returns: (transfer full) (nullable): a copy of the failure, or %NULL
 *   when nothing is waiting to be written
 */
GError *
tally_store_dup_write_error (TallyStore *self)
{
  GError *error = NULL;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  g_mutex_lock (&self->target->lock);
  if (self->target->failure != NULL)
    error = g_error_copy (self->target->failure);
  g_mutex_unlock (&self->target->lock);

  return error;
}

/**
 * tally_store_is_read_only:
 * @self: a #TallyStore
 *
 * Returns: %TRUE when the store was opened read-only: it was written by a
 *   newer Tally, or its file cannot be written. Writes then fail with
 *   %TALLY_STORE_ERROR_READ_ONLY.
 */
gboolean
tally_store_is_read_only (TallyStore *self)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), TRUE);

  return self->read_only;
}

/**
 * tally_store_get_read_only_reason:
 * @self: a #TallyStore
 *
 * Returns: (transfer none) (nullable): a sentence for the user saying why
 *   the store is read-only, such as "This store was written by a newer
 *   version of Tally (schema 7; this build knows 3). It is open
 *   read-only."; %NULL when it is writable
 */
const char *
tally_store_get_read_only_reason (TallyStore *self)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  return self->read_only_reason;
}

static void
refuse_read_only (TallyStore *self)
{
  g_autoptr(GError) error = NULL;

  if (!g_atomic_int_compare_and_exchange (&self->refused, 0, 1))
    return;

  error = g_error_new_literal (TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY, self->read_only_reason);
  signal_target_report (self->target, error);
}

/**
 * tally_store_append_event:
 * @self: a #TallyStore
 * @event: a TallyEvent (see tally-event.h): a JSON object with a string
 *   `type`, a string `session_id`, an integer `seq` (≥ 1) and an integer
 *   `ts` (µs since the Unix epoch)
 * @error: return location for a #GError
 *
 * Queues @event for the writer thread and returns at once: the event is
 * serialised here (tally_event_to_json(), the text stored verbatim and
 * printed by `--replay`) and committed within about 25 ms, together with
 * whatever else arrived meanwhile. The writer also keeps the session's row
 * up to date: `session_created` sets its title, model, workspace and
 * database; `turn_started` counts a turn and sets the mode and model;
 * `turn_finished` adds the turn's cost and usage; every event moves
 * `updated_us`. Prompts, assistant text and titles go into the search
 * index.
 *
 * Failures of the file itself (full disk, read-only store) are not
 * returned here: they are reported by the "write-failed" signal and by
 * tally_store_flush(), and the event stays queued in memory.
 *
 * Returns: %TRUE when the event was queued; %FALSE with
 *   %TALLY_STORE_ERROR_INVALID when @event lacks a required member or its
 *   `seq` is not greater than the last one handed over for its session
 *   (a step back detected only against the file is reported through
 *   "write-failed" instead)
 */
gboolean
tally_store_append_event (TallyStore  *self,
                          JsonObject  *event,
                          GError     **error)
{
  const char *session_id;
  const char *type;
  gint64 seq, ts;
  gint64 *handed;
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (event != NULL, FALSE);

  session_id = json_string (event, "session_id");
  type = json_string (event, "type");
  if (session_id == NULL || *session_id == '\0' || type == NULL ||
      !json_int (event, "seq", &seq) || seq < 1 || !json_int (event, "ts", &ts))
    {
      g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                           "An event needs a string type and session_id, an integer seq of at "
                           "least 1 and an integer ts");
      return FALSE;
    }

  if (self->read_only)
    {
      refuse_read_only (self);
      return TRUE;
    }

  g_mutex_lock (&self->seq_lock);
  handed = g_hash_table_lookup (self->handed_seq, session_id);
  if (handed != NULL && seq <= *handed)
    {
      gint64 previous = *handed;

      g_mutex_unlock (&self->seq_lock);
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                   "Event %" G_GINT64_FORMAT " of session %s was refused: seq %" G_GINT64_FORMAT
                   " came before it (seq must increase)", seq, session_id, previous);
      return FALSE;
    }
  if (handed == NULL)
    {
      handed = g_new (gint64, 1);
      g_hash_table_insert (self->handed_seq, g_strdup (session_id), handed);
    }
  *handed = seq;
  g_mutex_unlock (&self->seq_lock);

  item = item_new (ITEM_EVENT);
  item->session_id = g_strdup (session_id);
  item->seq = seq;
  item->ts = ts;
  item->type = g_strdup (type);
  item->payload = tally_event_to_json (event);
  item->turn_id = g_strdup (json_string (event, "turn_id"));

  if (g_str_equal (type, "session_created"))
    {
      item->text = g_strdup (json_string (event, "title"));
      item->model = g_strdup (json_string (event, "model"));
      item->workspace = g_strdup (json_string (event, "workspace"));
      item->database = g_strdup (json_string (event, "database"));
    }
  else if (g_str_equal (type, "turn_started"))
    {
      item->text = g_strdup (json_string (event, "text"));
      item->mode = g_strdup (json_string (event, "mode"));
      item->model = g_strdup (json_string (event, "model"));
    }
  else if (g_str_equal (type, "text_delta"))
    item->text = g_strdup (json_string (event, "text"));
  else if (g_str_equal (type, "turn_finished"))
    {
      JsonObject *usage = json_object_member (event, "usage");

      item->cost_known = json_number (event, "cost_usd", &item->cost);
      if (usage != NULL)
        {
          item->usage[0] = json_int_or (usage, "input_tokens", 0);
          item->usage[1] = json_int_or (usage, "output_tokens", 0);
          item->usage[2] = json_int_or (usage, "cache_read_input_tokens", 0);
          item->usage[3] = json_int_or (usage, "cache_creation_input_tokens", 0);
        }
    }

  g_async_queue_push (self->queue, item);
  return TRUE;
}

/**
 * tally_store_save_message:
 * @self: a #TallyStore
 * @session_id: the session
 * @msg_index: the message's 0-based index in the API conversation
 * @role: `"user"` or `"assistant"`
 * @blocks: (element-type utf8): the message's content blocks, each the
 *   exact JSON text of one block (as kept by #TallyConversation)
 * @error: return location for a #GError
 *
 * Queues the replacement of message @msg_index's stored blocks with
 * @blocks (an empty array removes them), in order with the events. The
 * texts are stored byte for byte; tally_store_load_conversation() gives
 * them back unchanged.
 *
 * Returns: %TRUE when queued; %FALSE with %TALLY_STORE_ERROR_INVALID for an
 *   unknown role or a %NULL block. Write failures are reported as for
 *   tally_store_append_event().
 */
gboolean
tally_store_save_message (TallyStore  *self,
                          const char  *session_id,
                          guint        msg_index,
                          const char  *role,
                          GPtrArray   *blocks,
                          GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (blocks != NULL, FALSE);

  if (g_strcmp0 (role, "user") != 0 && g_strcmp0 (role, "assistant") != 0)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                   "Unknown message role “%s”", role ? role : "(null)");
      return FALSE;
    }

  for (guint i = 0; i < blocks->len; i++)
    if (g_ptr_array_index (blocks, i) == NULL)
      {
        g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                     "Block %u of message %u is missing", i, msg_index);
        return FALSE;
      }

  if (self->read_only)
    {
      refuse_read_only (self);
      return TRUE;
    }

  item = item_new (ITEM_MESSAGE);
  item->session_id = g_strdup (session_id);
  item->number = msg_index;
  item->role = g_strdup (role);
  item->blocks = g_ptr_array_new_full (blocks->len, g_free);
  for (guint i = 0; i < blocks->len; i++)
    g_ptr_array_add (item->blocks, g_strdup (g_ptr_array_index (blocks, i)));
  g_async_queue_push (self->queue, item);

  return TRUE;
}

/**
 * tally_store_truncate_messages:
 * @self: a #TallyStore
 * @session_id: the session
 * @n_messages: how many messages to keep
 * @error: return location for a #GError
 *
 * Queues the removal of the session's stored messages from index
 * @n_messages on (for a conversation that dropped an incomplete message).
 *
 * Returns: %TRUE when queued. Write failures are reported as for
 *   tally_store_append_event().
 */
gboolean
tally_store_truncate_messages (TallyStore  *self,
                               const char  *session_id,
                               guint        n_messages,
                               GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  if (self->read_only)
    {
      refuse_read_only (self);
      return TRUE;
    }

  item = item_new (ITEM_TRUNCATE);
  item->session_id = g_strdup (session_id);
  item->number = n_messages;
  g_async_queue_push (self->queue, item);

  return TRUE;
}

/**
 * tally_store_flush:
 * @self: a #TallyStore
 * @error: return location for a #GError
 *
 * Blocks until everything queued before the call is committed, also the
 * assistant text of running turns into the search index. After a write
 * failure this retries the kept data at once. Call it before exiting (the
 * store's dispose flushes too, but cannot report).
 *
 * Returns: %TRUE when everything queued is in the file; %FALSE when data is
 *   still unwritten (the failure's error: %TALLY_STORE_ERROR_FULL,
 *   %TALLY_STORE_ERROR_IO, …; the data stays queued), when an item was
 *   refused since the previous flush (%TALLY_STORE_ERROR_INVALID), or when
 *   appends were refused because the store is read-only
 *   (%TALLY_STORE_ERROR_READ_ONLY)
 */
gboolean
tally_store_flush (TallyStore  *self,
                   GError     **error)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  if (self->read_only)
    {
      if (g_atomic_int_compare_and_exchange (&self->refused, 1, 0))
        {
          g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                               self->read_only_reason);
          return FALSE;
        }
      return TRUE;
    }

  return run_operation (self, item_new (ITEM_FLUSH), NULL, error);
}

/**
 * tally_store_rename_session:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @title: the new title (may be empty)
 * @error: return location for a #GError
 *
 * Sets the session's title (in order with queued writes; waits for the
 * commit). The search index follows.
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error (%TALLY_STORE_ERROR_READ_ONLY, %TALLY_STORE_ERROR_FULL, …)
 */
gboolean
tally_store_rename_session (TallyStore  *self,
                            const char  *session_id,
                            const char  *title,
                            GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (title != NULL, FALSE);

  item = item_new (ITEM_RENAME);
  item->session_id = g_strdup (session_id);
  item->payload = g_strdup (title);
  return run_operation (self, item, NULL, error);
}

/**
 * tally_store_delete_session:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Deletes the session with its events, messages, plans and search text
 * (in order with queued writes; waits for the commit).
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error
 */
gboolean
tally_store_delete_session (TallyStore  *self,
                            const char  *session_id,
                            GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  item = item_new (ITEM_DELETE);
  item->session_id = g_strdup (session_id);
  if (!run_operation (self, item, NULL, error))
    return FALSE;

  g_mutex_lock (&self->seq_lock);
  g_hash_table_remove (self->handed_seq, session_id);
  g_mutex_unlock (&self->seq_lock);

  return TRUE;
}

/**
 * tally_store_add_rule:
 * @self: a #TallyStore
 * @pattern: the rule's pattern, e.g. `Bash(git status)` or `query_database`
 * @decision: `"allow"` or `"deny"`
 * @scope: `"global"` or `"workspace"`
 * @workspace: (nullable): the workspace folder; required for the
 *   `workspace` scope, ignored for `global`
 * @error: return location for a #GError
 *
 * Persists a permission rule (waits for the commit). Adding a rule equal to
 * an existing one returns the existing rule's id.
 *
 * Returns: the rule's id (> 0), or 0 with %TALLY_STORE_ERROR_INVALID for
 *   bad arguments or a write error
 */
gint64
tally_store_add_rule (TallyStore  *self,
                      const char  *pattern,
                      const char  *decision,
                      const char  *scope,
                      const char  *workspace,
                      GError     **error)
{
  Item *item;
  gint64 id = 0;

  g_return_val_if_fail (TALLY_IS_STORE (self), 0);

  if (pattern == NULL || *pattern == '\0' ||
      (g_strcmp0 (decision, "allow") != 0 && g_strcmp0 (decision, "deny") != 0) ||
      (g_strcmp0 (scope, "global") != 0 && g_strcmp0 (scope, "workspace") != 0) ||
      (g_str_equal (scope, "workspace") && (workspace == NULL || *workspace == '\0')))
    {
      g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                           "A rule needs a pattern, the decision allow or deny, and the scope "
                           "global or workspace (with a workspace folder)");
      return 0;
    }

  item = item_new (ITEM_ADD_RULE);
  item->payload = g_strdup (pattern);
  item->mode = g_strdup (decision);
  item->scope = g_strdup (scope);
  item->workspace = g_str_equal (scope, "workspace") ? g_strdup (workspace) : NULL;
  if (!run_operation (self, item, &id, error))
    return 0;

  return id;
}

/**
 * tally_store_remove_rule:
 * @self: a #TallyStore
 * @rule_id: a rule's id, from tally_store_add_rule() or
 *   tally_store_list_rules()
 * @error: return location for a #GError
 *
 * Removes a rule (waits for the commit).
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error
 */
gboolean
tally_store_remove_rule (TallyStore  *self,
                         gint64       rule_id,
                         GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  item = item_new (ITEM_REMOVE_RULE);
  item->number = rule_id;
  return run_operation (self, item, NULL, error);
}

/**
 * tally_store_save_plan:
 * @self: a #TallyStore
 * @plan_id: the plan's id (kept across refinements)
 * @version: the version, ≥ 1
 * @session_id: (nullable): the session the plan belongs to; deleting the
 *   session deletes its plans
 * @markdown: the plan's text
 * @error: return location for a #GError
 *
 * Stores one version of a plan (in order with queued writes; waits for the
 * commit).
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_INVALID (bad
 *   arguments, or that version exists already) or a write error
 */
gboolean
tally_store_save_plan (TallyStore  *self,
                       const char  *plan_id,
                       gint64       version,
                       const char  *session_id,
                       const char  *markdown,
                       GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  if (plan_id == NULL || *plan_id == '\0' || version < 1 || markdown == NULL)
    {
      g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                           "A plan needs an id, a version of at least 1 and its text");
      return FALSE;
    }

  item = item_new (ITEM_PLAN);
  item->text = g_strdup (plan_id);
  item->number = version;
  item->session_id = g_strdup (session_id);
  item->payload = g_strdup (markdown);
  return run_operation (self, item, NULL, error);
}

/* {{{ Session locks */

/*
 * One writer per session (docs/architecture.md §10.8). Each session has one
 * byte in the file `<path>-lock`, at an offset taken from a hash of its id,
 * and whoever writes to the session holds an open-file-description lock
 * (F_OFD_SETLK) on that byte. The kernel drops the lock when its holder
 * closes the file or dies, so a crash leaves nothing to clean up; the file
 * itself is never removed (removing a lock file races with the next
 * holder). Offsets are 62 bits of a SHA-256, so two sessions sharing a byte
 * is not a practical concern.
 */

static off_t
session_lock_offset (const char *session_id)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize length = sizeof digest;
  guint64 offset = 0;

  g_checksum_update (checksum, (const guchar *)session_id, -1);
  g_checksum_get_digest (checksum, digest, &length);
  for (guint i = 0; i < 8; i++)
    offset = (offset << 8) | digest[i];
  return (off_t)(offset & G_GUINT64_CONSTANT (0x3fffffffffffffff));
}

static int
session_lock_set (int         fd,
                  const char *session_id,
                  short       type)
{
  struct flock lock = { 0 };

  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = session_lock_offset (session_id);
  lock.l_len = 1;
  return fcntl (fd, F_OFD_SETLK, &lock);
}

/**
 * tally_store_lock_session:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Takes the session's writer lock, so that no other store object — in
 * another Tally window's process, another tally-cli, or this process —
 * appends to it meanwhile. Holders in the same store object share the
 * lock: each successful call needs one tally_store_unlock_session(). The
 * lock lives until then, or until the store is finalized or the process
 * ends (also by a crash). A read-only store takes no lock and succeeds.
 * Reading a session never needs its lock.
 *
 * Returns: %TRUE when the lock is held; %FALSE with
 *   %TALLY_STORE_ERROR_LOCKED when another holder has it, or
 *   %TALLY_STORE_ERROR_IO when the lock file cannot be opened or locked
 */
gboolean
tally_store_lock_session (TallyStore  *self,
                          const char  *session_id,
                          GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  guint holders;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL && *session_id != '\0', FALSE);

  if (self->read_only)
    return TRUE;

  locker = g_mutex_locker_new (&self->session_lock);

  holders = GPOINTER_TO_UINT (g_hash_table_lookup (self->locked, session_id));
  if (holders > 0)
    {
      g_hash_table_insert (self->locked, g_strdup (session_id), GUINT_TO_POINTER (holders + 1));
      return TRUE;
    }

  if (self->lock_fd < 0)
    {
      g_autofree char *lock_path = g_strconcat (self->path, "-lock", NULL);

      self->lock_fd = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (self->lock_fd < 0)
        {
          int saved_errno = errno;

          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                       "Could not open the lock file “%s” of the session store: %s",
                       lock_path, g_strerror (saved_errno));
          return FALSE;
        }
    }

  if (session_lock_set (self->lock_fd, session_id, F_WRLCK) != 0)
    {
      int saved_errno = errno;

      if (saved_errno == EAGAIN || saved_errno == EACCES)
        g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED,
                     "This session is open in another Tally window or process (session %s in “%s”)",
                     session_id, self->path);
      else
        g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                     "Could not lock session %s in the session store “%s”: %s",
                     session_id, self->path, g_strerror (saved_errno));
      return FALSE;
    }

  g_hash_table_insert (self->locked, g_strdup (session_id), GUINT_TO_POINTER (1));
  return TRUE;
}

/**
 * tally_store_unlock_session:
 * @self: a #TallyStore
 * @session_id: a session locked with tally_store_lock_session()
 *
 * Gives back one hold on the session's writer lock; the last one releases
 * it. Unlocking a session that is not locked does nothing.
 */
void
tally_store_unlock_session (TallyStore *self,
                            const char *session_id)
{
  g_autoptr(GMutexLocker) locker = NULL;
  guint holders;

  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  locker = g_mutex_locker_new (&self->session_lock);
  holders = GPOINTER_TO_UINT (g_hash_table_lookup (self->locked, session_id));
  if (holders == 0)
    return;
  if (holders > 1)
    {
      g_hash_table_insert (self->locked, g_strdup (session_id), GUINT_TO_POINTER (holders - 1));
      return;
    }

  g_hash_table_remove (self->locked, session_id);
  if (self->lock_fd >= 0 && session_lock_set (self->lock_fd, session_id, F_UNLCK) != 0)
    g_message ("Could not unlock session %s in %s: %s", session_id, self->path, g_strerror (errno));
}

/* }}} */

/**
 * tally_store_set_max_page_count_for_testing:
 * @self: a writable #TallyStore
 * @max_pages: the new `PRAGMA max_page_count` of the writer's connection
 * @result: (out) (optional): the limit in force afterwards (SQLite never
 *   sets it below the current size)
 * @error: return location for a #GError
 *
 * Test hook: limits the file's size so that writes fail with SQLITE_FULL.
 * Runs on the writer thread between batches, ahead of any retry.
 *
 * Returns: %TRUE on success
 */
gboolean
tally_store_set_max_page_count_for_testing (TallyStore  *self,
                                            gint64       max_pages,
                                            gint64      *result,
                                            GError     **error)
{
  Item *item;
  gint64 value = 0;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  item = item_new (ITEM_HOOK_MAX_PAGES);
  item->number = max_pages;
  if (!run_operation (self, item, &value, error))
    return FALSE;
  if (result != NULL)
    *result = value;
  return TRUE;
}

/* }}} */
/* {{{ Reads */

static sqlite3_stmt *
read_prepare (TallyStore  *self,
              const char  *sql,
              GError     **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (self->read_db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, self->read_db, rc, self->path, "read");
      return NULL;
    }
  return stmt;
}

static gboolean
read_done (TallyStore   *self,
           int           rc,
           GError      **error)
{
  if (rc == SQLITE_DONE)
    return TRUE;
  tally_store_set_sqlite_error (error, self->read_db, rc, self->path, "read");
  return FALSE;
}

static char *
column_dup (sqlite3_stmt *stmt,
            int           column)
{
  const char *text = (const char *)sqlite3_column_text (stmt, column);

  return text != NULL ? g_strdup (text) : NULL;
}

#define SESSION_COLUMNS \
  "s.id, s.title, s.created_us, s.updated_us, s.model, s.workspace, s.database, s.cost_usd, " \
  "s.input_tokens, s.output_tokens, s.cache_read, s.cache_write, s.turns, s.last_mode"

static TallySessionInfo *
session_info_from_row (sqlite3_stmt *stmt)
{
  TallySessionInfo *info = tally_session_info_new ((const char *)sqlite3_column_text (stmt, 0));

  g_free (info->title);
  info->title = g_strdup (sqlite3_column_text (stmt, 1) ? (const char *)sqlite3_column_text (stmt, 1) : "");
  info->created_us = sqlite3_column_int64 (stmt, 2);
  info->updated_us = sqlite3_column_int64 (stmt, 3);
  info->model = column_dup (stmt, 4);
  info->workspace = column_dup (stmt, 5);
  info->database = column_dup (stmt, 6);
  info->cost_usd = sqlite3_column_type (stmt, 7) == SQLITE_NULL ? NAN : sqlite3_column_double (stmt, 7);
  info->input_tokens = sqlite3_column_int64 (stmt, 8);
  info->output_tokens = sqlite3_column_int64 (stmt, 9);
  info->cache_read_tokens = sqlite3_column_int64 (stmt, 10);
  info->cache_write_tokens = sqlite3_column_int64 (stmt, 11);
  info->turns = sqlite3_column_int64 (stmt, 12);
  info->last_mode = column_dup (stmt, 13);
  return info;
}

/**
 * tally_store_list_sessions:
 * @self: a #TallyStore
 * @error: return location for a #GError
 *
 * Lists every session, newest first (by creation time). Runs in the
 * caller's thread; see tally_store_list_sessions_async() for the UI.
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   the sessions, or %NULL with %TALLY_STORE_ERROR_IO (or another read
 *   error) set
 */
GPtrArray *
tally_store_list_sessions (TallyStore  *self,
                           GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  stmt = read_prepare (self, "SELECT " SESSION_COLUMNS " FROM sessions s "
                       "ORDER BY s.created_us DESC, s.rowid DESC", error);
  if (stmt == NULL)
    return NULL;

  sessions = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_session_info_unref);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (sessions, session_info_from_row (stmt));
  if (!read_done (self, rc, error))
    return NULL;

  return g_steal_pointer (&sessions);
}

/**
 * tally_store_find_session:
 * @self: a #TallyStore
 * @id_or_prefix: a session's full id, or a prefix of at least 4
 *   characters that only one session's id starts with
 * @error: return location for a #GError
 *
 * Looks a session up the way `--replay` and `--resume` take their
 * argument.
 *
 * Returns: (transfer full) (nullable): the session; %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND (no match, or a prefix shorter than 4
 *   characters that is not a full id), %TALLY_STORE_ERROR_AMBIGUOUS (the
 *   prefix matches several sessions; the message lists some) or a read
 *   error
 */
TallySessionInfo *
tally_store_find_session (TallyStore  *self,
                          const char  *id_or_prefix,
                          GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GPtrArray) matches = NULL;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (id_or_prefix != NULL, NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  stmt = read_prepare (self, "SELECT " SESSION_COLUMNS " FROM sessions s WHERE s.id = ?1", error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, id_or_prefix);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return session_info_from_row (stmt);
  if (!read_done (self, rc, error))
    return NULL;

  if (g_utf8_strlen (id_or_prefix, -1) < MIN_PREFIX_CHARS)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                   "No session has the id “%s” (a shortened id needs at least %d characters)",
                   id_or_prefix, MIN_PREFIX_CHARS);
      return NULL;
    }

  g_clear_pointer (&stmt, sqlite3_finalize);
  stmt = read_prepare (self, "SELECT " SESSION_COLUMNS " FROM sessions s "
                       "WHERE substr (s.id, 1, length (?1)) = ?1 ORDER BY s.created_us DESC LIMIT 6",
                       error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, id_or_prefix);

  matches = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_session_info_unref);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (matches, session_info_from_row (stmt));
  if (!read_done (self, rc, error))
    return NULL;

  if (matches->len == 0)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                   "No session id is or starts with “%s”", id_or_prefix);
      return NULL;
    }
  if (matches->len > 1)
    {
      g_autoptr(GString) ids = g_string_new (NULL);

      for (guint i = 0; i < MIN (matches->len, 5); i++)
        g_string_append_printf (ids, "%s%s", i > 0 ? ", " : "",
                                ((TallySessionInfo *)g_ptr_array_index (matches, i))->id);
      if (matches->len > 5)
        g_string_append (ids, ", …");
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_AMBIGUOUS,
                   "“%s” starts more than one session id (%s); give more characters",
                   id_or_prefix, ids->str);
      return NULL;
    }

  return tally_session_info_ref (g_ptr_array_index (matches, 0));
}

/* With the read lock held */
static gboolean
session_exists (TallyStore  *self,
                const char  *session_id,
                GError     **error)
{
  g_autoptr(sqlite3_stmt) stmt = read_prepare (self, "SELECT 1 FROM sessions WHERE id = ?1", error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  BIND_TEXT (stmt, 1, session_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return TRUE;
  if (read_done (self, rc, error))
    g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                 "There is no session %s in the store", session_id);
  return FALSE;
}

typedef struct {
  gint64  seq;
  char   *payload;   /* NULL when the column is not text */
} Row;

static void
row_clear (gpointer data)
{
  g_free (((Row *)data)->payload);
}

static GArray *
read_event_rows (TallyStore  *self,
                 const char  *session_id,
                 GError     **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->read_lock);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GArray) rows = NULL;
  int rc;

  if (!session_exists (self, session_id, error))
    return NULL;

  stmt = read_prepare (self, "SELECT seq, payload FROM events WHERE session_id = ?1 ORDER BY seq", error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, session_id);

  rows = g_array_new (FALSE, FALSE, sizeof (Row));
  g_array_set_clear_func (rows, row_clear);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Row row;

      row.seq = sqlite3_column_int64 (stmt, 0);
      row.payload = sqlite3_column_type (stmt, 1) == SQLITE_TEXT ? column_dup (stmt, 1) : NULL;
      g_array_append_val (rows, row);
    }
  if (!read_done (self, rc, error))
    return NULL;

  return g_steal_pointer (&rows);
}

static GPtrArray *
parse_event_rows (GArray     *rows,
                  const char *session_id,
                  GPtrArray  *warnings)
{
  GPtrArray *events = g_ptr_array_new_full (rows->len, (GDestroyNotify)json_object_unref);

  for (guint i = 0; i < rows->len; i++)
    {
      Row *row = &g_array_index (rows, Row, i);
      g_autoptr(GError) local_error = NULL;
      g_autoptr(JsonObject) event = NULL;
      g_autofree char *problem = NULL;
      gint64 seq;

      if (row->payload == NULL)
        problem = g_strdup ("its payload is not text");
      else if ((event = tally_event_from_json (row->payload, &local_error)) == NULL)
        problem = g_strdup (local_error->message);
      else if (!json_int (event, "seq", &seq) || seq != row->seq)
        problem = g_strdup ("its seq does not match its place in the log");
      else if (g_strcmp0 (json_string (event, "session_id"), session_id) != 0)
        problem = g_strdup ("it belongs to another session");

      if (problem != NULL)
        {
          g_ptr_array_add (warnings,
                           g_strdup_printf ("event %" G_GINT64_FORMAT " of session %s is damaged "
                                            "and was skipped: %s", row->seq, session_id, problem));
          continue;
        }

      g_ptr_array_add (events, g_steal_pointer (&event));
    }

  return events;
}

/**
 * tally_store_load_events:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @warnings: (out) (optional) (transfer container) (element-type utf8):
 *   one sentence per stored event that was skipped because it is damaged,
 *   e.g. "event 57 of session … is damaged and was skipped: …"
 * @error: return location for a #GError
 *
 * Loads the session's event log in seq order, as committed so far (call
 * tally_store_flush() first to include queued events). A row whose payload
 * is not a JSON object with a string `type`, or whose `seq` or
 * `session_id` disagree with the row, is skipped and named in @warnings:
 * a damaged row never hides the rest of the session.
 *
 * Returns: (transfer container) (element-type JsonObject) (nullable): the
 *   events; %NULL with %TALLY_STORE_ERROR_NOT_FOUND or a read error
 */
GPtrArray *
tally_store_load_events (TallyStore  *self,
                         const char  *session_id,
                         GPtrArray  **warnings,
                         GError     **error)
{
  g_autoptr(GArray) rows = NULL;
  g_autoptr(GPtrArray) local_warnings = NULL;
  GPtrArray *events;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  rows = read_event_rows (self, session_id, error);
  if (rows == NULL)
    return NULL;

  /* Parse outside the read lock */
  local_warnings = g_ptr_array_new_with_free_func (g_free);
  events = parse_event_rows (rows, session_id, local_warnings);
  if (warnings != NULL)
    *warnings = g_steal_pointer (&local_warnings);

  return events;
}

/**
 * tally_store_load_event_lines:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Loads the session's stored event lines verbatim, in seq order, for
 * `tally-cli --replay` (which prints them exactly as stored). Damaged rows
 * are included as they are; use tally_store_load_events() to check them.
 *
 * Returns: (transfer container) (element-type utf8) (nullable): the JSON
 *   lines without newlines; %NULL with %TALLY_STORE_ERROR_NOT_FOUND or a
 *   read error
 */
GPtrArray *
tally_store_load_event_lines (TallyStore  *self,
                              const char  *session_id,
                              GError     **error)
{
  g_autoptr(GArray) rows = NULL;
  GPtrArray *lines;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  rows = read_event_rows (self, session_id, error);
  if (rows == NULL)
    return NULL;

  lines = g_ptr_array_new_full (rows->len, g_free);
  for (guint i = 0; i < rows->len; i++)
    {
      Row *row = &g_array_index (rows, Row, i);

      g_ptr_array_add (lines, row->payload != NULL ? g_steal_pointer (&row->payload) : g_strdup (""));
    }

  return lines;
}

/**
 * tally_store_export_jsonl:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the stored event lines verbatim,
 *   each followed by a newline (JSON Lines); %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND or a read error
 */
char *
tally_store_export_jsonl (TallyStore  *self,
                          const char  *session_id,
                          GError     **error)
{
  g_autoptr(GPtrArray) lines = NULL;
  GString *out;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  lines = tally_store_load_event_lines (self, session_id, error);
  if (lines == NULL)
    return NULL;

  out = g_string_new (NULL);
  for (guint i = 0; i < lines->len; i++)
    {
      g_string_append (out, g_ptr_array_index (lines, i));
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

/**
 * tally_store_load_conversation:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @into: the conversation to append the stored messages to (normally empty)
 * @error: return location for a #GError
 *
 * Appends the session's stored API messages to @into, in order, each block
 * byte for byte as saved by tally_store_save_message() (thinking
 * signatures and redacted thinking included).
 *
 * Returns: %TRUE on success (also when no message was stored); %FALSE with
 *   %TALLY_STORE_ERROR_NOT_FOUND, %TALLY_STORE_ERROR_CORRUPT (a stored
 *   message is not valid; @into then holds the messages before it) or a
 *   read error
 */
gboolean
tally_store_load_conversation (TallyStore         *self,
                               const char         *session_id,
                               TallyConversation  *into,
                               GError            **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GPtrArray) indexes = g_ptr_array_new ();
  g_autoptr(GPtrArray) roles = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) contents = g_ptr_array_new_with_free_func (g_free);
  GString *content = NULL;
  gint64 current = -1;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (TALLY_IS_CONVERSATION (into), FALSE);

  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->read_lock);

    if (!session_exists (self, session_id, error))
      return FALSE;

    stmt = read_prepare (self, "SELECT msg_index, role, block FROM messages WHERE session_id = ?1 "
                         "ORDER BY msg_index, block_index", error);
    if (stmt == NULL)
      return FALSE;
    BIND_TEXT (stmt, 1, session_id);

    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
      {
        gint64 index = sqlite3_column_int64 (stmt, 0);
        const char *block = (const char *)sqlite3_column_text (stmt, 2);

        if (index != current)
          {
            if (content != NULL)
              {
                g_string_append_c (content, ']');
                g_ptr_array_add (contents, g_string_free (g_steal_pointer (&content), FALSE));
              }
            content = g_string_new ("[");
            current = index;
            g_ptr_array_add (indexes, GSIZE_TO_POINTER ((gsize)index));
            g_ptr_array_add (roles, column_dup (stmt, 1));
          }
        else
          g_string_append_c (content, ',');
        g_string_append (content, block != NULL ? block : "");
      }
    if (content != NULL)
      {
        g_string_append_c (content, ']');
        g_ptr_array_add (contents, g_string_free (g_steal_pointer (&content), FALSE));
      }
    if (!read_done (self, rc, error))
      return FALSE;
  }

  for (guint i = 0; i < contents->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      const char *text = g_ptr_array_index (contents, i);

      if (!tally_conversation_append_message_json (into, g_ptr_array_index (roles, i), text, &local_error))
        {
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT,
                       "Message %" G_GSIZE_FORMAT " of session %s in “%s” is damaged: %s",
                       GPOINTER_TO_SIZE (g_ptr_array_index (indexes, i)), session_id, self->path,
                       local_error->message);
          return FALSE;
        }
    }

  return TRUE;
}

/* Each word of the user's text becomes a quoted FTS5 string (inner quotes
 * doubled), so no character of it can be FTS5 syntax; words without a
 * letter or digit are dropped, and the last word matches as a prefix. */
static char *
build_match_query (const char *text)
{
  g_auto(GStrv) words = g_strsplit_set (text, " \t\r\n\f\v", -1);
  GString *query = g_string_new (NULL);

  for (guint i = 0; words[i] != NULL; i++)
    {
      const char *word = words[i];
      gboolean has_alnum = FALSE;

      if (!g_utf8_validate (word, -1, NULL))
        continue;
      for (const char *p = word; *p != '\0'; p = g_utf8_next_char (p))
        if (g_unichar_isalnum (g_utf8_get_char (p)))
          {
            has_alnum = TRUE;
            break;
          }
      if (!has_alnum)
        continue;

      if (query->len > 0)
        g_string_append_c (query, ' ');
      g_string_append_c (query, '"');
      for (const char *p = word; *p != '\0'; p++)
        {
          if (*p == '"')
            g_string_append_c (query, '"');
          g_string_append_c (query, *p);
        }
      g_string_append_c (query, '"');
    }

  if (query->len == 0)
    {
      g_string_free (query, TRUE);
      return NULL;
    }

  g_string_append_c (query, '*');
  return g_string_free (query, FALSE);
}

/**
 * tally_store_search:
 * @self: a #TallyStore
 * @text: what the user typed: words, all of which must occur (the last one
 *   may be the start of a word); any FTS5 syntax in it is taken literally
 * @error: return location for a #GError
 *
 * Full-text search (SQLite FTS5, `unicode61` tokenizer without diacritics)
 * over session titles, prompts and assistant text. Assistant text of a
 * running turn is searchable after its turn finished or a flush.
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   matching sessions, best match first (at most 100), each with its
 *   @snippet set; empty when @text has no word; %NULL with a read error
 */
GPtrArray *
tally_store_search (TallyStore  *self,
                    const char  *text,
                    GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GHashTable) seen = NULL;
  g_autofree char *query = NULL;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (text != NULL, NULL);

  hits = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_session_info_unref);
  query = build_match_query (text);
  if (query == NULL)
    return g_steal_pointer (&hits);

  locker = g_mutex_locker_new (&self->read_lock);
  stmt = read_prepare (self,
                       "SELECT " SESSION_COLUMNS ", "
                       "  snippet (transcript_fts, 0, '«', '»', '…', 12) "
                       "FROM transcript_fts "
                       "JOIN transcript t ON t.id = transcript_fts.rowid "
                       "JOIN sessions s ON s.id = t.session_id "
                       "WHERE transcript_fts MATCH ?1 ORDER BY rank LIMIT 1000",
                       error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, query);

  seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW && hits->len < MAX_SEARCH_HITS)
    {
      const char *id = (const char *)sqlite3_column_text (stmt, 0);
      TallySessionInfo *info;

      if (id == NULL || g_hash_table_contains (seen, id))
        continue;
      g_hash_table_add (seen, g_strdup (id));
      info = session_info_from_row (stmt);
      info->snippet = column_dup (stmt, 14);
      g_ptr_array_add (hits, info);
    }
  if (rc != SQLITE_ROW && !read_done (self, rc, error))
    return NULL;

  return g_steal_pointer (&hits);
}

/**
 * tally_store_list_rules:
 * @self: a #TallyStore
 * @workspace: (nullable): a workspace folder: list the global rules and
 *   that workspace's; %NULL lists every rule
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type TallyRule) (nullable): the
 *   rules, oldest first; %NULL with a read error
 */
GPtrArray *
tally_store_list_rules (TallyStore  *self,
                        const char  *workspace,
                        GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GPtrArray) rules = NULL;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  stmt = read_prepare (self, "SELECT id, pattern, decision, scope, workspace, created_us FROM rules "
                       "WHERE ?1 IS NULL OR scope = 'global' OR workspace = ?1 ORDER BY id", error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, workspace);

  rules = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_rule_free);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TallyRule *rule = g_new0 (TallyRule, 1);

      rule->id = sqlite3_column_int64 (stmt, 0);
      rule->pattern = column_dup (stmt, 1);
      rule->decision = column_dup (stmt, 2);
      rule->scope = column_dup (stmt, 3);
      rule->workspace = column_dup (stmt, 4);
      rule->created_us = sqlite3_column_int64 (stmt, 5);
      g_ptr_array_add (rules, rule);
    }
  if (!read_done (self, rc, error))
    return NULL;

  return g_steal_pointer (&rules);
}

/**
 * tally_store_load_plan_versions:
 * @self: a #TallyStore
 * @plan_id: a plan's id
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type TallyPlanVersion) (nullable):
 *   the plan's versions, oldest first; %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND when no version is stored, or a read error
 */
GPtrArray *
tally_store_load_plan_versions (TallyStore  *self,
                                const char  *plan_id,
                                GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GPtrArray) plans = NULL;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (plan_id != NULL, NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  stmt = read_prepare (self, "SELECT plan_id, version, session_id, markdown, created_us FROM plans "
                       "WHERE plan_id = ?1 ORDER BY version", error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, plan_id);

  plans = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_plan_version_free);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TallyPlanVersion *plan = g_new0 (TallyPlanVersion, 1);

      plan->plan_id = column_dup (stmt, 0);
      plan->version = sqlite3_column_int64 (stmt, 1);
      plan->session_id = column_dup (stmt, 2);
      plan->markdown = column_dup (stmt, 3);
      plan->created_us = sqlite3_column_int64 (stmt, 4);
      g_ptr_array_add (plans, plan);
    }
  if (!read_done (self, rc, error))
    return NULL;

  if (plans->len == 0)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND,
                   "There is no plan %s in the store", plan_id);
      return NULL;
    }

  return g_steal_pointer (&plans);
}

/* }}} */
/* {{{ Markdown export */

#define RESULT_MAX_LINES 20
#define RESULT_MAX_BYTES 2000
#define INPUT_MAX_BYTES  300

/* A fence longer than any run of backticks in @text */
static char *
fence_for (const char *text)
{
  guint longest = 0, run = 0;

  for (const char *p = text; *p != '\0'; p++)
    {
      run = *p == '`' ? run + 1 : 0;
      longest = MAX (longest, run);
    }
  return g_strnfill (MAX (3, longest + 1), '`');
}

static void
append_fenced (GString    *out,
               const char *lang,
               const char *text)
{
  g_autofree char *fence = fence_for (text);
  gsize len = strlen (text);

  g_string_append_printf (out, "%s%s\n%s", fence, lang, text);
  if (len == 0 || text[len - 1] != '\n')
    g_string_append_c (out, '\n');
  g_string_append_printf (out, "%s\n\n", fence);
}

static void
append_inline_code (GString    *out,
                    const char *text)
{
  guint longest = 0, run = 0;
  g_autofree char *ticks = NULL;

  for (const char *p = text; *p != '\0'; p++)
    {
      run = *p == '`' ? run + 1 : 0;
      longest = MAX (longest, run);
    }
  ticks = g_strnfill (longest + 1, '`');
  g_string_append_printf (out, "%s%s%s%s%s", ticks, longest > 0 ? " " : "", text,
                          longest > 0 ? " " : "", ticks);
}

/* Cuts @text to RESULT_MAX_LINES lines and about RESULT_MAX_BYTES bytes
 * (at a character boundary) and says how much was left out. */
static char *
truncate_result (const char *text)
{
  GString *out = g_string_new (NULL);
  const char *p = text;
  guint lines = 0, total_lines = 0;

  for (const char *q = text; *q != '\0'; q++)
    if (*q == '\n')
      total_lines++;
  if (*text != '\0' && text[strlen (text) - 1] != '\n')
    total_lines++;

  while (*p != '\0' && lines < RESULT_MAX_LINES && out->len < RESULT_MAX_BYTES)
    {
      const char *end = strchr (p, '\n');
      gsize len = end != NULL ? (gsize)(end - p) : strlen (p);

      if (out->len + len > RESULT_MAX_BYTES)
        {
          const char *cut = g_utf8_find_prev_char (p, p + (RESULT_MAX_BYTES - out->len));

          len = cut != NULL ? (gsize)(cut - p) : 0;
          g_string_append_len (out, p, len);
          g_string_append (out, "…\n");
          lines++;
          p += len;
          break;
        }
      g_string_append_len (out, p, len);
      g_string_append_c (out, '\n');
      lines++;
      p += len;
      if (*p == '\n')
        p++;
    }

  if (*p != '\0' && total_lines > lines)
    g_string_append_printf (out, "… (%u more lines)\n", total_lines - lines);
  else if (*p != '\0')
    g_string_append (out, "… (cut)\n");

  return g_string_free (out, FALSE);
}

static void
append_quoted (GString    *out,
               const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    g_string_append_printf (out, ">%s%s\n", *lines[i] ? " " : "", lines[i]);
  g_string_append_c (out, '\n');
}

static char *
format_count (gint64 value)
{
  g_autofree char *digits = g_strdup_printf ("%" G_GINT64_FORMAT, value < 0 ? -value : value);
  GString *out = g_string_new (value < 0 ? "-" : "");
  gsize len = strlen (digits);

  for (gsize i = 0; i < len; i++)
    {
      if (i > 0 && (len - i) % 3 == 0)
        g_string_append_c (out, ',');
      g_string_append_c (out, digits[i]);
    }
  return g_string_free (out, FALSE);
}

static char *
format_time_utc (gint64 us)
{
  g_autoptr(GDateTime) time = g_date_time_new_from_unix_utc (us / G_USEC_PER_SEC);

  if (time == NULL)
    return g_strdup ("unknown date");
  return g_date_time_format (time, "%Y-%m-%d %H:%M UTC");
}

typedef struct {
  GString    *out;
  GString    *text;          /* assistant text being gathered */
  gint64      text_call;
  gint64      text_block;
  guint       thinking_words;
  GHashTable *card_tools;    /* tool ids of AskUserQuestion and ExitPlanMode */
} Export;

static void
export_flush_text (Export *export)
{
  if (export->text->len > 0)
    {
      g_string_append (export->out, export->text->str);
      if (export->text->str[export->text->len - 1] != '\n')
        g_string_append_c (export->out, '\n');
      g_string_append_c (export->out, '\n');
      g_string_truncate (export->text, 0);
    }
  export->text_call = -1;
  export->text_block = -1;
}

static guint
count_words (const char *text)
{
  guint words = 0;
  gboolean in_word = FALSE;

  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gboolean space = g_unichar_isspace (g_utf8_get_char (p));

      if (!space && !in_word)
        words++;
      in_word = !space;
    }
  return words;
}

static void
export_receipt (Export     *export,
                JsonObject *event)
{
  JsonObject *usage = json_object_member (event, "usage");
  const char *status = json_string (event, "status");
  g_autofree char *input = NULL;
  g_autofree char *output = NULL;
  double cost;
  gint64 duration_ms = json_int_or (event, "duration_ms", 0);
  char seconds[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (export->out, "*Receipt: ");
  if (json_number (event, "cost_usd", &cost))
    {
      char dollars[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (export->out, "$%s",
                              g_ascii_formatd (dollars, sizeof dollars, "%.4f", cost));
    }
  else
    g_string_append (export->out, "price unknown");

  input = format_count (usage ? json_int_or (usage, "input_tokens", 0) : 0);
  output = format_count (usage ? json_int_or (usage, "output_tokens", 0) : 0);
  g_string_append_printf (export->out, " · %s input + %s output tokens", input, output);
  if (usage != NULL)
    {
      gint64 read = json_int_or (usage, "cache_read_input_tokens", 0);
      gint64 written = json_int_or (usage, "cache_creation_input_tokens", 0);

      if (read > 0 || written > 0)
        {
          g_autofree char *r = format_count (read);
          g_autofree char *wr = format_count (written);

          g_string_append_printf (export->out, " (cache: %s read, %s written)", r, wr);
        }
    }
  g_string_append_printf (export->out, " · %s s",
                          g_ascii_formatd (seconds, sizeof seconds, "%.1f", duration_ms / 1000.0));
  if (status != NULL && !g_str_equal (status, "done"))
    g_string_append_printf (export->out, " · %s", status);
  g_string_append (export->out, "*\n\n");
}

static void
export_tool_use (Export     *export,
                 JsonObject *event)
{
  const char *name = json_string (event, "tool_name");
  const char *tool_id = json_string (event, "tool_id");
  JsonObject *input = json_object_member (event, "tool_input");
  const char *sql = input ? json_string (input, "sql") : NULL;
  const char *command = input ? json_string (input, "command") : NULL;

  if (name == NULL)
    name = "tool";

  if (g_str_equal (name, "AskUserQuestion") || g_str_equal (name, "ExitPlanMode"))
    {
      if (tool_id != NULL)
        g_hash_table_add (export->card_tools, g_strdup (tool_id));
      return;
    }

  g_string_append (export->out, "**Tool:** ");
  append_inline_code (export->out, name);
  if (sql != NULL)
    {
      g_string_append (export->out, "\n\n");
      append_fenced (export->out, "sql", sql);
    }
  else if (command != NULL)
    {
      g_string_append (export->out, "\n\n");
      append_fenced (export->out, "sh", command);
    }
  else if (input != NULL && json_object_get_size (input) > 0)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *json = NULL;

      json_node_set_object (node, input);
      json = json_to_string (node, FALSE);
      if (strlen (json) > INPUT_MAX_BYTES)
        {
          const char *cut = g_utf8_find_prev_char (json, json + INPUT_MAX_BYTES);
          gsize keep = cut != NULL ? (gsize)(cut - json) : 0;

          json[keep] = '\0';
          json = g_realloc (json, keep + sizeof "…");
          strcat (json, "…");
        }
      g_string_append_c (export->out, ' ');
      append_inline_code (export->out, json);
      g_string_append (export->out, "\n\n");
    }
  else
    g_string_append (export->out, "\n\n");
}

static void
export_event (Export     *export,
              JsonObject *event)
{
  const char *type = tally_event_get_event_type (event);
  GString *out = export->out;

  if (g_str_equal (type, "text_delta"))
    {
      gint64 call = json_int_or (event, "call", 0);
      gint64 block = json_int_or (event, "block", 0);
      const char *text = json_string (event, "text");

      if (export->text->len > 0 && (call != export->text_call || block != export->text_block))
        g_string_append (export->text, "\n\n");
      export->text_call = call;
      export->text_block = block;
      if (text != NULL)
        g_string_append (export->text, text);
      return;
    }

  if (g_str_equal (type, "thinking_delta"))
    {
      const char *text = json_string (event, "text");

      export->thinking_words += text ? count_words (text) : 0;
      return;
    }

  if (g_str_equal (type, "block_done"))
    {
      if (g_strcmp0 (json_string (event, "kind"), "thinking") == 0)
        {
          export_flush_text (export);
          g_string_append_printf (out, "*Thought for %u words.*\n\n", export->thinking_words);
          export->thinking_words = 0;
        }
      return;
    }

  /* Every other event ends the text gathered so far */
  export_flush_text (export);

  if (g_str_equal (type, "turn_started"))
    {
      const char *text = json_string (event, "text");
      const char *mode = json_string (event, "mode");

      g_string_append (out, "---\n\n**You:**");
      if (g_strcmp0 (mode, "plan") == 0)
        g_string_append (out, " *(plan mode)*");
      g_string_append (out, "\n\n");
      append_quoted (out, text != NULL ? text : "");
    }
  else if (g_str_equal (type, "tool_use_start"))
    export_tool_use (export, event);
  else if (g_str_equal (type, "tool_result"))
    {
      const char *tool_id = json_string (event, "tool_id");
      const char *content = json_string (event, "content");
      gboolean is_error = FALSE;
      JsonNode *node = json_object_get_member (event, "is_error");
      g_autofree char *cut = NULL;

      if (tool_id != NULL && g_hash_table_contains (export->card_tools, tool_id))
        return;
      if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN)
        is_error = json_node_get_boolean (node);

      cut = truncate_result (content != NULL ? content : "");
      g_string_append (out, is_error ? "**Tool error:**\n\n" : "Result:\n\n");
      append_fenced (out, "", cut);
    }
  else if (g_str_equal (type, "approval_resolved"))
    {
      const char *decision = json_string (event, "decision");
      const char *message = json_string (event, "message");
      const char *reason = json_string (event, "reason");

      if (g_strcmp0 (decision, "deny") == 0)
        {
          g_string_append_printf (out, "*Denied (%s)", reason ? reason : "user");
          if (message != NULL && *message != '\0')
            g_string_append_printf (out, ": %s", message);
          g_string_append (out, "*\n\n");
        }
      else if (g_strcmp0 (decision, "allow_edited") == 0)
        g_string_append (out, "*Allowed with changes.*\n\n");
    }
  else if (g_str_equal (type, "question_request"))
    {
      JsonNode *node = json_object_get_member (event, "questions");
      JsonArray *questions = node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;

      for (guint i = 0; questions != NULL && i < json_array_get_length (questions); i++)
        {
          JsonNode *qnode = json_array_get_element (questions, i);
          JsonObject *q = JSON_NODE_HOLDS_OBJECT (qnode) ? json_node_get_object (qnode) : NULL;
          JsonNode *onode = q ? json_object_get_member (q, "options") : NULL;
          JsonArray *options = onode && JSON_NODE_HOLDS_ARRAY (onode) ? json_node_get_array (onode) : NULL;
          const char *question = q ? json_string (q, "question") : NULL;

          g_string_append_printf (out, "**Question:** %s\n\n", question ? question : "");
          for (guint j = 0; options != NULL && j < json_array_get_length (options); j++)
            {
              JsonNode *option_node = json_array_get_element (options, j);
              JsonObject *option = JSON_NODE_HOLDS_OBJECT (option_node) ? json_node_get_object (option_node) : NULL;
              const char *label = option ? json_string (option, "label") : NULL;
              const char *description = option ? json_string (option, "description") : NULL;

              g_string_append_printf (out, "- %s%s%s\n", label ? label : "",
                                      description ? " — " : "", description ? description : "");
            }
          if (options != NULL)
            g_string_append_c (out, '\n');
        }
    }
  else if (g_str_equal (type, "question_resolved"))
    {
      JsonObject *answers = json_object_member (event, "answers");

      if (answers == NULL)
        g_string_append_printf (out, "*The question was not answered (%s).*\n\n",
                                json_string (event, "reason") ? json_string (event, "reason") : "dismissed");
      else
        {
          g_autoptr(GList) members = json_object_get_members (answers);

          for (GList *l = members; l != NULL; l = l->next)
            {
              const char *answer = json_string (answers, l->data);

              g_string_append_printf (out, "**Answer:** %s\n\n", answer ? answer : "");
            }
        }
    }
  else if (g_str_equal (type, "plan_proposed"))
    {
      const char *markdown = json_string (event, "markdown");

      g_string_append_printf (out, "**Plan** (version %" G_GINT64_FORMAT "):\n\n",
                              json_int_or (event, "version", 1));
      append_quoted (out, markdown != NULL ? markdown : "");
    }
  else if (g_str_equal (type, "error"))
    {
      const char *kind = json_string (event, "kind");
      const char *message = json_string (event, "message");

      g_string_append_printf (out, "> **Error** (%s): %s\n\n",
                              kind ? kind : "unknown", message ? message : "");
    }
  else if (g_str_equal (type, "turn_finished"))
    export_receipt (export, event);
}

/**
 * tally_store_export_markdown:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Renders the session as Markdown for sharing, from its event log (so any
 * stored session can be exported): a `#` title, the date, model and
 * database, then each turn: the prompt as a quoted block under "**You:**",
 * the assistant text as written, tool calls as short lines (SQL and shell
 * commands in fenced blocks), tool results cut to 20 lines in fenced
 * blocks, denials, questions and answers, plans, errors, and the turn's
 * receipt (cost, tokens, duration). Thinking is summarised as a word
 * count. Damaged events are skipped and counted at the end.
 *
 * Returns: (transfer full) (nullable): the Markdown text; %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND or a read error
 */
char *
tally_store_export_markdown (TallyStore  *self,
                             const char  *session_id,
                             GError     **error)
{
  g_autoptr(TallySessionInfo) info = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(GHashTable) card_tools = NULL;
  g_autofree char *date = NULL;
  Export export = { 0 };
  GString *out;
  const char *title;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  events = tally_store_load_events (self, session_id, &warnings, error);
  if (events == NULL)
    return NULL;
  info = tally_store_find_session (self, session_id, error);
  if (info == NULL)
    return NULL;

  out = g_string_new (NULL);
  title = info->title != NULL && *info->title != '\0' ? info->title : "Untitled session";
  g_string_append_printf (out, "# %s\n\n", title);

  date = format_time_utc (info->created_us);
  g_string_append_printf (out, "- **Date:** %s\n", date);
  if (info->model != NULL)
    g_string_append_printf (out, "- **Model:** %s\n", info->model);
  if (info->database != NULL)
    {
      g_autofree char *base = g_path_get_basename (info->database);

      g_string_append_printf (out, "- **Database:** %s\n", base);
    }
  if (info->turns > 0)
    {
      char dollars[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (out, "- **Turns:** %" G_GINT64_FORMAT " · **Cost:** %s%s\n", info->turns,
                              tally_session_info_has_cost (info) ? "$" : "",
                              tally_session_info_has_cost (info)
                                ? g_ascii_formatd (dollars, sizeof dollars, "%.4f", info->cost_usd)
                                : "price unknown");
    }
  g_string_append_c (out, '\n');

  card_tools = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  export.out = out;
  export.text = g_string_new (NULL);
  export.text_call = -1;
  export.text_block = -1;
  export.card_tools = card_tools;

  for (guint i = 0; i < events->len; i++)
    export_event (&export, g_ptr_array_index (events, i));
  export_flush_text (&export);
  g_string_free (export.text, TRUE);

  if (warnings->len > 0)
    g_string_append_printf (out, "*%u damaged events were left out of this export.*\n", warnings->len);

  return g_string_free (out, FALSE);
}

/* }}} */
/* {{{ Async reads */

typedef struct {
  char      *session_id;
  char      *text;
  GPtrArray *warnings;
} ReadData;

static void
read_data_free (gpointer data)
{
  ReadData *read = data;

  g_free (read->session_id);
  g_free (read->text);
  g_clear_pointer (&read->warnings, g_ptr_array_unref);
  g_free (read);
}

static GTask *
read_task_new (TallyStore          *self,
               gpointer             source_tag,
               const char          *session_id,
               const char          *text,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  ReadData *read = g_new0 (ReadData, 1);

  read->session_id = g_strdup (session_id);
  read->text = g_strdup (text);
  g_task_set_source_tag (task, source_tag);
  g_task_set_task_data (task, read, read_data_free);
  return task;
}

static void
list_sessions_thread (GTask        *task,
                      gpointer      source_object,
                      gpointer      task_data,
                      GCancellable *cancellable)
{
  GError *error = NULL;
  GPtrArray *sessions;

  if (g_task_return_error_if_cancelled (task))
    return;
  sessions = tally_store_list_sessions (source_object, &error);
  if (sessions == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, sessions, (GDestroyNotify)g_ptr_array_unref);
}

/**
 * tally_store_list_sessions_async:
 * @self: a #TallyStore
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_list_sessions() in a worker thread.
 */
void
tally_store_list_sessions_async (TallyStore          *self,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TALLY_IS_STORE (self));

  task = read_task_new (self, tally_store_list_sessions_async, NULL, NULL, cancellable, callback, user_data);
  g_task_run_in_thread (task, list_sessions_thread);
}

/**
 * tally_store_list_sessions_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   as tally_store_list_sessions(); %NULL with an error (also
 *   %G_IO_ERROR_CANCELLED)
 */
GPtrArray *
tally_store_list_sessions_finish (TallyStore    *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_store_list_sessions_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
load_events_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  ReadData *read = task_data;
  GError *error = NULL;
  GPtrArray *events;

  if (g_task_return_error_if_cancelled (task))
    return;
  events = tally_store_load_events (source_object, read->session_id, &read->warnings, &error);
  if (events == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, events, (GDestroyNotify)g_ptr_array_unref);
}

/**
 * tally_store_load_events_async:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_load_events() in a worker thread.
 */
void
tally_store_load_events_async (TallyStore          *self,
                               const char          *session_id,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  task = read_task_new (self, tally_store_load_events_async, session_id, NULL, cancellable, callback, user_data);
  g_task_run_in_thread (task, load_events_thread);
}

/**
 * tally_store_load_events_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @warnings: (out) (optional) (transfer container) (element-type utf8):
 *   the damaged-row warnings, as for tally_store_load_events()
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type JsonObject) (nullable): as
 *   tally_store_load_events(); %NULL with an error
 */
GPtrArray *
tally_store_load_events_finish (TallyStore    *self,
                                GAsyncResult  *result,
                                GPtrArray    **warnings,
                                GError       **error)
{
  ReadData *read;
  GPtrArray *events;

  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_store_load_events_async, NULL);

  events = g_task_propagate_pointer (G_TASK (result), error);
  read = g_task_get_task_data (G_TASK (result));
  if (events != NULL && warnings != NULL)
    *warnings = read->warnings != NULL ? g_steal_pointer (&read->warnings)
                                       : g_ptr_array_new_with_free_func (g_free);
  return events;
}

static void
search_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  ReadData *read = task_data;
  GError *error = NULL;
  GPtrArray *hits;

  if (g_task_return_error_if_cancelled (task))
    return;
  hits = tally_store_search (source_object, read->text, &error);
  if (hits == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, hits, (GDestroyNotify)g_ptr_array_unref);
}

/**
 * tally_store_search_async:
 * @self: a #TallyStore
 * @text: what the user typed
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_search() in a worker thread.
 */
void
tally_store_search_async (TallyStore          *self,
                          const char          *text,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (text != NULL);

  task = read_task_new (self, tally_store_search_async, NULL, text, cancellable, callback, user_data);
  g_task_run_in_thread (task, search_thread);
}

/**
 * tally_store_search_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   as tally_store_search(); %NULL with an error
 */
GPtrArray *
tally_store_search_finish (TallyStore    *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_store_search_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
export_markdown_thread (GTask        *task,
                        gpointer      source_object,
                        gpointer      task_data,
                        GCancellable *cancellable)
{
  ReadData *read = task_data;
  GError *error = NULL;
  char *markdown;

  if (g_task_return_error_if_cancelled (task))
    return;
  markdown = tally_store_export_markdown (source_object, read->session_id, &error);
  if (markdown == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, markdown, g_free);
}

/**
 * tally_store_export_markdown_async:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_export_markdown() in a worker thread.
 */
void
tally_store_export_markdown_async (TallyStore          *self,
                                   const char          *session_id,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  task = read_task_new (self, tally_store_export_markdown_async, session_id, NULL, cancellable, callback, user_data);
  g_task_run_in_thread (task, export_markdown_thread);
}

/**
 * tally_store_export_markdown_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): as tally_store_export_markdown();
 *   %NULL with an error
 */
char *
tally_store_export_markdown_finish (TallyStore    *self,
                                    GAsyncResult  *result,
                                    GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_store_export_markdown_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* }}} */
