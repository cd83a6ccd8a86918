/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tally-event.h"
#include "tally-store-private.h"
#include "tally-store-snapshot.h"

/*
 * Reads (docs/architecture.md §10): sessions, events, the API conversation,
 * rules, plans and full-text search. They run in the caller's thread on the
 * read-only connection, serialised by the store's read lock.
 */

#define MIN_PREFIX_CHARS  4
#define MAX_SEARCH_HITS   100
/* A search ranks its matches by bm25 only when at most this many
 * transcript rows match (docs/architecture.md §10.2). */
#define MAX_RANKED_ROWS   1000

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
  "s.input_tokens, s.output_tokens, s.cache_read, s.cache_write, s.turns, s.last_mode, s.pinned"

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
  info->pinned = sqlite3_column_int (stmt, 14) != 0;
  return info;
}

static gpointer
rule_from_row (sqlite3_stmt *stmt)
{
  TallyRule *rule = g_new0 (TallyRule, 1);

  rule->id = sqlite3_column_int64 (stmt, 0);
  rule->pattern = column_dup (stmt, 1);
  rule->decision = column_dup (stmt, 2);
  rule->scope = column_dup (stmt, 3);
  rule->workspace = column_dup (stmt, 4);
  rule->created_us = sqlite3_column_int64 (stmt, 5);
  return rule;
}

static gpointer
plan_version_from_row (sqlite3_stmt *stmt)
{
  TallyPlanVersion *plan = g_new0 (TallyPlanVersion, 1);

  plan->plan_id = column_dup (stmt, 0);
  plan->version = sqlite3_column_int64 (stmt, 1);
  plan->session_id = column_dup (stmt, 2);
  plan->markdown = column_dup (stmt, 3);
  plan->created_us = sqlite3_column_int64 (stmt, 4);
  return plan;
}

typedef gpointer (*FromRow) (sqlite3_stmt *stmt);

/* With the read lock held: runs @sql, with its ?1 (if it has one) bound to
 * @arg, and makes one element of every row with @from_row */
static GPtrArray *
read_rows (TallyStore     *self,
           const char     *sql,
           const char     *arg,
           FromRow         from_row,
           GDestroyNotify  element_free,
           GError        **error)
{
  g_autoptr(sqlite3_stmt) stmt = read_prepare (self, sql, error);
  g_autoptr(GPtrArray) rows = NULL;
  int rc;

  if (stmt == NULL)
    return NULL;
  if (sqlite3_bind_parameter_count (stmt) > 0)
    BIND_TEXT (stmt, 1, arg);

  rows = g_ptr_array_new_with_free_func (element_free);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (rows, from_row (stmt));
  if (!read_done (self, rc, error))
    return NULL;

  return g_steal_pointer (&rows);
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

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  return read_rows (self, "SELECT " SESSION_COLUMNS " FROM sessions s "
                    "ORDER BY s.created_us DESC, s.rowid DESC", NULL,
                    (FromRow)session_info_from_row, (GDestroyNotify)tally_session_info_unref, error);
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
  matches = read_rows (self, "SELECT " SESSION_COLUMNS " FROM sessions s "
                       "WHERE substr (s.id, 1, length (?1)) = ?1 ORDER BY s.created_us DESC LIMIT 6",
                       id_or_prefix, (FromRow)session_info_from_row,
                       (GDestroyNotify)tally_session_info_unref, error);
  if (matches == NULL)
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
                 gint64       after_seq,
                 GError     **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->read_lock);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GArray) rows = NULL;
  int rc;

  if (!session_exists (self, session_id, error))
    return NULL;

  stmt = read_prepare (self, "SELECT seq, payload FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq", error);
  if (stmt == NULL)
    return NULL;
  BIND_TEXT (stmt, 1, session_id);
  sqlite3_bind_int64 (stmt, 2, after_seq);

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
      else if (!tally_json_object_lookup_int (event, "seq", &seq) || seq != row->seq)
        problem = g_strdup ("its seq does not match its place in the log");
      else if (g_strcmp0 (tally_json_object_get_string (event, "session_id", NULL), session_id) != 0)
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
  return tally_store_load_events_after (self, session_id, 0, warnings, error);
}

/**
 * tally_store_load_events_after:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @after_seq: load only events whose `seq` is above this (0: all)
 * @warnings: (out) (optional) (transfer container) (element-type utf8):
 *   as for tally_store_load_events()
 * @error: return location for a #GError
 *
 * tally_store_load_events() for the tail of the log after @after_seq:
 * what a session replays on top of its snapshot (tally-store-snapshot.h).
 *
 * Returns: (transfer container) (element-type JsonObject) (nullable): the
 *   events; %NULL with %TALLY_STORE_ERROR_NOT_FOUND or a read error
 */
GPtrArray *
tally_store_load_events_after (TallyStore  *self,
                               const char  *session_id,
                               gint64       after_seq,
                               GPtrArray  **warnings,
                               GError     **error)
{
  g_autoptr(GArray) rows = NULL;
  g_autoptr(GPtrArray) local_warnings = NULL;
  GPtrArray *events;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  rows = read_event_rows (self, session_id, after_seq, error);
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
 * tally_store_load_snapshot:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @snapshot: (out) (transfer full) (nullable): the session's snapshot, or
 *   %NULL when it has none
 * @error: return location for a #GError
 *
 * Reads the session's snapshot of settled blocks as stored
 * (tally_store_save_snapshot()), committed so far. A row whose texts are
 * not text (a damaged row) is reported as missing: the log rebuilds it.
 *
 * Returns: %TRUE with *@snapshot set or %NULL; %FALSE with a read error
 */
gboolean
tally_store_load_snapshot (TallyStore          *self,
                           const char          *session_id,
                           TallyStoreSnapshot **snapshot,
                           GError             **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(TallyStoreSnapshot) found = NULL;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (snapshot != NULL, FALSE);

  *snapshot = NULL;
  locker = g_mutex_locker_new (&self->read_lock);
  stmt = read_prepare (self, "SELECT seq, format, state, blocks FROM snapshots WHERE session_id = ?1", error);
  if (stmt == NULL)
    return FALSE;
  BIND_TEXT (stmt, 1, session_id);

  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      if (sqlite3_column_type (stmt, 2) != SQLITE_TEXT || sqlite3_column_type (stmt, 3) != SQLITE_TEXT)
        return TRUE;
      found = g_new0 (TallyStoreSnapshot, 1);
      found->seq = sqlite3_column_int64 (stmt, 0);
      found->format = sqlite3_column_int64 (stmt, 1);
      found->state = column_dup (stmt, 2);
      found->blocks = column_dup (stmt, 3);
      rc = sqlite3_step (stmt);
    }
  if (!read_done (self, rc, error))
    return FALSE;

  *snapshot = g_steal_pointer (&found);
  return TRUE;
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

  rows = read_event_rows (self, session_id, 0, error);
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

/* How many SQLite virtual-machine steps a search runs between two looks
 * at its cancellable. */
#define SEARCH_PROGRESS_STEPS 1000

/* SQLite's progress handler during a search: a non-zero return interrupts
 * the statement running on the read connection (SQLITE_INTERRUPT). */
static int
search_progress_cb (gpointer data)
{
  return g_cancellable_is_cancelled (data);
}

/* @rc's error, or %G_IO_ERROR_CANCELLED when @cancellable stopped it */
static void
search_set_error (TallyStore    *self,
                  int            rc,
                  GCancellable  *cancellable,
                  GError       **error)
{
  if (rc == SQLITE_INTERRUPT && g_cancellable_set_error_if_cancelled (cancellable, error))
    return;
  tally_store_set_sqlite_error (error, self->read_db, rc, self->path, "read");
}

/* Sets the snippet of each hit (@hits and @rowids in the same order) from
 * its best transcript row, in one statement: FTS5 builds the doclist of a
 * prefix query at every run of a statement, so a statement per row cost
 * that build once per hit (seconds for a one-letter prefix over 1,000
 * sessions). The unary plus keeps SQLite from handing the rowid list to
 * FTS5 as a constraint, which would run the query again for every rowid;
 * it is checked on each matching row instead, and only the rows listed
 * are given a snippet. The rows' range (`rowid BETWEEN`), which FTS5 does
 * take as a constraint, spares walking the matches outside it: for a word
 * in most sessions the hits are among the newest rows, and walking all
 * 20,000-40,000 matches of a short prefix over the bench's 1,000 sessions
 * cost 2-3 ms of the search. A row no longer matching (changed since the
 * ranking read) keeps no snippet. */
static gboolean
search_snippets (TallyStore    *self,
                 const char    *query,
                 GPtrArray     *hits,
                 GArray        *rowids,
                 GCancellable  *cancellable,
                 GError       **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GHashTable) by_rowid = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr(GString) sql = g_string_new ("SELECT rowid, snippet (transcript_fts, 0, '«', '»', '…', 12) "
                                         "FROM transcript_fts WHERE transcript_fts MATCH ?1 "
                                         "AND rowid BETWEEN ?2 AND ?3 AND +rowid IN (");
  gint64 first = G_MAXINT64, last = G_MININT64;
  int rc;

  if (hits->len == 0)
    return TRUE;

  for (guint i = 0; i < hits->len; i++)
    {
      gint64 *rowid = &g_array_index (rowids, gint64, i);

      g_string_append_printf (sql, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "", *rowid);
      g_hash_table_insert (by_rowid, rowid, g_ptr_array_index (hits, i));
      first = MIN (first, *rowid);
      last = MAX (last, *rowid);
    }
  g_string_append_c (sql, ')');

  stmt = read_prepare (self, sql->str, error);
  if (stmt == NULL)
    return FALSE;
  BIND_TEXT (stmt, 1, query);
  sqlite3_bind_int64 (stmt, 2, first);
  sqlite3_bind_int64 (stmt, 3, last);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 rowid = sqlite3_column_int64 (stmt, 0);
      TallySessionInfo *info = g_hash_table_lookup (by_rowid, &rowid);

      if (info != NULL && info->snippet == NULL)
        info->snippet = column_dup (stmt, 1);
    }
  if (rc != SQLITE_DONE)
    {
      search_set_error (self, rc, cancellable, error);
      return FALSE;
    }
  return TRUE;
}

/* The ranking read of a search: every matching transcript row in bm25
 * order, each session at its best row (at most MAX_SEARCH_HITS sessions),
 * into @hits and @rowids. Only run when at most MAX_RANKED_ROWS rows
 * match, so bm25 never scores more than that many. */
static gboolean
search_ranked (TallyStore    *self,
               const char    *query,
               GPtrArray     *hits,
               GArray        *rowids,
               GCancellable  *cancellable,
               GError       **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  int rc = SQLITE_DONE;

  stmt = read_prepare (self,
                       "SELECT " SESSION_COLUMNS ", transcript_fts.rowid "
                       "FROM transcript_fts "
                       "JOIN transcript t ON t.id = transcript_fts.rowid "
                       "JOIN sessions s ON s.id = t.session_id "
                       "WHERE transcript_fts MATCH ?1 ORDER BY rank LIMIT " G_STRINGIFY (MAX_RANKED_ROWS),
                       error);
  if (stmt == NULL)
    return FALSE;
  BIND_TEXT (stmt, 1, query);

  while (hits->len < MAX_SEARCH_HITS && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TallySessionInfo *info;
      gint64 rowid = sqlite3_column_int64 (stmt, 15);

      if (sqlite3_column_text (stmt, 0) == NULL ||
          g_hash_table_contains (seen, sqlite3_column_text (stmt, 0)))
        continue;
      info = session_info_from_row (stmt);
      g_ptr_array_add (hits, info);
      g_hash_table_add (seen, info->id);
      g_array_append_val (rowids, rowid);
    }
  if (hits->len < MAX_SEARCH_HITS && rc != SQLITE_DONE)
    {
      search_set_error (self, rc, cancellable, error);
      return FALSE;
    }
  return TRUE;
}

/* The sessions of @ids (in that order) into @hits; a session deleted since
 * its rows were read is left out with its entry of @rowids. */
static gboolean
search_sessions (TallyStore    *self,
                 GPtrArray     *ids,
                 GPtrArray     *hits,
                 GArray        *rowids,
                 GCancellable  *cancellable,
                 GError       **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GArray) found_rowids = g_array_sized_new (FALSE, FALSE, sizeof (gint64), ids->len);

  stmt = read_prepare (self, "SELECT " SESSION_COLUMNS " FROM sessions s WHERE s.id = ?1", error);
  if (stmt == NULL)
    return FALSE;

  for (guint i = 0; i < ids->len; i++)
    {
      int rc;

      sqlite3_reset (stmt);
      BIND_TEXT (stmt, 1, g_ptr_array_index (ids, i));
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          g_ptr_array_add (hits, session_info_from_row (stmt));
          g_array_append_val (found_rowids, g_array_index (rowids, gint64, i));
        }
      else if (rc != SQLITE_DONE)
        {
          search_set_error (self, rc, cancellable, error);
          return FALSE;
        }
    }

  g_array_set_size (rowids, 0);
  g_array_append_vals (rowids, found_rowids->data, found_rowids->len);
  return TRUE;
}

/* Runs the search with the read lock held (docs/architecture.md §10.2).
 * First the matching rows newest first (rowid order, which FTS5 walks
 * without scoring or sorting and can stop early): when more than
 * MAX_RANKED_ROWS rows match, the hits are the sessions of the newest
 * matching rows, each at its newest one, since bm25 would score and sort
 * every match (60-260 ms for a common word or a short prefix over 1,000
 * sessions); otherwise the few matches are ranked by bm25, each session at
 * its best row, as before. Then the snippets of only the sessions listed,
 * which spares tokenizing the text of rows that are never shown. */
static GPtrArray *
search_locked (TallyStore    *self,
               const char    *query,
               GCancellable  *cancellable,
               GError       **error)
{
  g_autoptr(sqlite3_stmt) recent_stmt = NULL;
  g_autoptr(GPtrArray) hits = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_session_info_unref);
  g_autoptr(GArray) rowids = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint n_rows = 0;
  int rc = SQLITE_DONE;

  recent_stmt = read_prepare (self,
                              "SELECT t.session_id, transcript_fts.rowid "
                              "FROM transcript_fts JOIN transcript t ON t.id = transcript_fts.rowid "
                              "WHERE transcript_fts MATCH ?1 ORDER BY transcript_fts.rowid DESC",
                              error);
  if (recent_stmt == NULL)
    return NULL;
  BIND_TEXT (recent_stmt, 1, query);

  /* Read until it is known that more than MAX_RANKED_ROWS rows match and
   * the newest rows have given MAX_SEARCH_HITS sessions, or to the end. */
  while ((n_rows <= MAX_RANKED_ROWS || ids->len < MAX_SEARCH_HITS) &&
         (rc = sqlite3_step (recent_stmt)) == SQLITE_ROW)
    {
      const char *id = (const char *)sqlite3_column_text (recent_stmt, 0);
      gint64 rowid = sqlite3_column_int64 (recent_stmt, 1);

      n_rows++;
      if (id == NULL || ids->len >= MAX_SEARCH_HITS || g_hash_table_contains (seen, id))
        continue;
      g_ptr_array_add (ids, g_strdup (id));
      g_hash_table_add (seen, g_ptr_array_index (ids, ids->len - 1));
      g_array_append_val (rowids, rowid);
    }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      search_set_error (self, rc, cancellable, error);
      return NULL;
    }
  g_clear_pointer (&recent_stmt, sqlite3_finalize);

  if (n_rows > MAX_RANKED_ROWS)
    {
      if (!search_sessions (self, ids, hits, rowids, cancellable, error))
        return NULL;
    }
  else
    {
      g_array_set_size (rowids, 0);
      if (n_rows > 0 && !search_ranked (self, query, hits, rowids, cancellable, error))
        return NULL;
    }

  if (!search_snippets (self, query, hits, rowids, cancellable, error))
    return NULL;

  return g_steal_pointer (&hits);
}

/**
 * tally_store_search_cancellable:
 * @self: a #TallyStore
 * @text: as for tally_store_search()
 * @cancellable: (nullable): a #GCancellable; cancelling it from any thread
 *   interrupts the search's statement on the read connection within a
 *   thousand SQLite steps, and a search still waiting for the read lock
 *   gives up when it gets it
 * @error: return location for a #GError
 *
 * tally_store_search() that can be cancelled: the sidebar cancels the
 * search of each keystroke when the next one comes, so that the read
 * connection is free for the newest text at once.
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   as tally_store_search(); %NULL with a read error or
 *   %G_IO_ERROR_CANCELLED
 */
GPtrArray *
tally_store_search_cancellable (TallyStore    *self,
                                const char    *text,
                                GCancellable  *cancellable,
                                GError       **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  g_autofree char *query = NULL;
  GPtrArray *hits;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  query = build_match_query (text);
  if (query == NULL)
    return g_ptr_array_new_with_free_func ((GDestroyNotify)tally_session_info_unref);

  locker = g_mutex_locker_new (&self->read_lock);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  if (cancellable != NULL)
    sqlite3_progress_handler (self->read_db, SEARCH_PROGRESS_STEPS, search_progress_cb, cancellable);
  hits = search_locked (self, query, cancellable, error);
  if (cancellable != NULL)
    sqlite3_progress_handler (self->read_db, 0, NULL, NULL);

  return hits;
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
 * At most 1,000 matching texts are ranked by bm25 and each session comes
 * at its best-ranked text; when more match, the sessions are those of the
 * most recently written matching texts, newest first, each at its newest
 * one, since ranking every match of a common word or a short prefix costs
 * too much for a keystroke (docs/architecture.md §10.2).
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   matching sessions in that order (at most 100), each with its @snippet
 *   set (the text it comes at, matches between « and »); empty when @text
 *   has no word; %NULL with a read error
 */
GPtrArray *
tally_store_search (TallyStore  *self,
                    const char  *text,
                    GError     **error)
{
  return tally_store_search_cancellable (self, text, NULL, error);
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

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  return read_rows (self, "SELECT id, pattern, decision, scope, workspace, created_us FROM rules "
                    "WHERE ?1 IS NULL OR scope = 'global' OR workspace = ?1 ORDER BY id", workspace,
                    rule_from_row, (GDestroyNotify)tally_rule_free, error);
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
  g_autoptr(GPtrArray) plans = NULL;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (plan_id != NULL, NULL);

  locker = g_mutex_locker_new (&self->read_lock);
  plans = read_rows (self, "SELECT plan_id, version, session_id, markdown, created_us FROM plans "
                     "WHERE plan_id = ?1 ORDER BY version", plan_id,
                     plan_version_from_row, (GDestroyNotify)tally_plan_version_free, error);
  if (plans == NULL)
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
