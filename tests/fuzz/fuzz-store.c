/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: the store's event loader (src/core/store/tally-store.h)
 * and the replay of what it loads.
 *
 * One store is made at start-up with one session (its `session_created`
 * event has seq 1). For each input, every line of the input becomes a row
 * of that session's `events` table (seq 2, 3, …), written with a second
 * SQLite connection as a damaged or foreign file would hold it:
 *
 * - a line that is a JSON object without `seq` or `session_id` gets the
 *   row's ones added, so that the fuzzer easily reaches the replay;
 * - any other line is stored verbatim; a line that starts with byte 0x01
 *   is stored as a BLOB rather than TEXT;
 * - a line that starts with "msg:" goes to the `messages` table instead
 *   (the API conversation, one block per line).
 *
 * The session is then loaded through the public API — load_events (whose
 * events are applied to a TallyTranscript, as opening a session does),
 * load_event_lines, the Markdown and JSON Lines exports, load_conversation,
 * find_session, list_sessions and a full-text search for the first line —
 * and the rows are deleted again.
 *
 * Checked: nothing crashes or logs a critical; every loaded event is an
 * object with a string `type` and the row's `seq`; loaded events and
 * warnings together account for every row.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>

#include "tally-conversation.h"
#include "tally-event.h"
#include "tally-export.h"
#include "tally-fuzz.h"
#include "tally-json.h"
#include "tally-store.h"
#include "tally-transcript.h"

#define SESSION_ID "5e551011-f022-4c0d-9e11-0123456789ab"

static TallyStore *store;
static sqlite3 *db;
static sqlite3_stmt *insert_event;
static sqlite3_stmt *insert_message;

static void
exec_or_die (const char *sql)
{
  char *message = NULL;

  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    {
      g_printerr ("fuzz-store: %s: %s\n", sql, message);
      abort ();
    }
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) fields = NULL;
  g_autoptr(JsonObject) event = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;

  tally_fuzz_quiet_logs ();

  /* The folder stays in $TMPDIR after the run: a store of a few pages. */
  dir = g_dir_make_tmp ("tally-fuzz-store-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "sessions.db", NULL);

  store = tally_store_open (path, &error);
  g_assert_no_error (error);

  fields = tally_event_new (TALLY_EVENT_SESSION_CREATED);
  json_object_set_string_member (fields, "title", "Fuzz");
  json_object_set_string_member (fields, "model", "claude-sonnet-4-5");
  json_object_set_string_member (fields, "workspace", dir);
  json_object_set_null_member (fields, "database");
  event = tally_event_stamp (fields, 1, 1, SESSION_ID, NULL);
  if (!tally_store_append_event (store, event, &error) || !tally_store_flush (store, &error))
    g_error ("fuzz-store: %s", error->message);

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    g_error ("fuzz-store: cannot open %s", path);
  sqlite3_busy_timeout (db, 5000);
  exec_or_die ("PRAGMA synchronous = OFF");
  if (sqlite3_prepare_v2 (db, "INSERT INTO events (session_id, seq, ts, type, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
                          -1, &insert_event, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db, "INSERT OR REPLACE INTO messages (session_id, msg_index, block_index, role, block) "
                          "VALUES (?1, ?2, ?3, ?4, ?5)", -1, &insert_message, NULL) != SQLITE_OK)
    g_error ("fuzz-store: %s", sqlite3_errmsg (db));

  return 0;
}

/* The row's payload: @line itself, or with `seq` and `session_id` added
 * when it is an object without them. Sets @type to the event's type when
 * there is one. */
static char *
row_payload (const char  *line,
             gsize        len,
             gint64       seq,
             char       **type)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonObject *object;
  gboolean changed = FALSE;

  *type = NULL;
  if (!json_parser_load_from_data (parser, line, (gssize) len, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return g_strndup (line, len);

  object = json_node_get_object (root);
  /* Any member may be of any kind here: a `type` that is an object or a
   * number is stored as "unknown", as the loader must cope with that too. */
  *type = g_strdup (tally_json_object_get_string (object, "type", NULL));
  if (!json_object_has_member (object, "seq"))
    {
      json_object_set_int_member (object, "seq", seq);
      changed = TRUE;
    }
  if (!json_object_has_member (object, "session_id"))
    {
      json_object_set_string_member (object, "session_id", SESSION_ID);
      changed = TRUE;
    }
  if (!changed)
    return g_strndup (line, len);
  return json_to_string (root, FALSE);
}

static void
store_rows (const guint8 *data,
            gsize         size,
            guint        *n_events)
{
  gsize start = 0;
  gint64 seq = 2;
  guint msg_index = 0;

  *n_events = 0;
  exec_or_die ("BEGIN");
  while (start <= size)
    {
      const guint8 *nl = memchr (data + start, '\n', size - start);
      gsize len = (nl != NULL ? (gsize) (nl - data) : size) - start;
      const char *line = (const char *) data + start;

      if (len >= 4 && memcmp (line, "msg:", 4) == 0)
        {
          sqlite3_bind_text (insert_message, 1, SESSION_ID, -1, SQLITE_STATIC);
          sqlite3_bind_int (insert_message, 2, msg_index / 2);
          sqlite3_bind_int (insert_message, 3, msg_index % 2);
          sqlite3_bind_text (insert_message, 4, (msg_index / 2) % 2 == 0 ? "user" : "assistant", -1, SQLITE_STATIC);
          sqlite3_bind_text (insert_message, 5, line + 4, (int) (len - 4), SQLITE_TRANSIENT);
          sqlite3_step (insert_message);
          sqlite3_reset (insert_message);
          msg_index++;
        }
      else if (len > 0 || nl != NULL)
        {
          g_autofree char *type = NULL;
          g_autofree char *payload = NULL;

          sqlite3_bind_text (insert_event, 1, SESSION_ID, -1, SQLITE_STATIC);
          sqlite3_bind_int64 (insert_event, 2, seq);
          sqlite3_bind_int64 (insert_event, 3, seq);
          if (len > 0 && line[0] == '\x01')
            {
              sqlite3_bind_text (insert_event, 4, "text_delta", -1, SQLITE_STATIC);
              sqlite3_bind_blob (insert_event, 5, line + 1, (int) (len - 1), SQLITE_TRANSIENT);
            }
          else
            {
              payload = row_payload (line, len, seq, &type);
              sqlite3_bind_text (insert_event, 4, type != NULL ? type : "unknown", -1, SQLITE_TRANSIENT);
              sqlite3_bind_text (insert_event, 5, payload, -1, SQLITE_TRANSIENT);
            }
          if (sqlite3_step (insert_event) != SQLITE_DONE)
            {
              g_printerr ("fuzz-store: insert failed: %s\n", sqlite3_errmsg (db));
              abort ();
            }
          sqlite3_reset (insert_event);
          seq++;
          (*n_events)++;
        }

      if (nl == NULL)
        break;
      start += len + 1;
    }
  exec_or_die ("COMMIT");
}

static void
check_events (GPtrArray *events,
              GPtrArray *warnings,
              guint      n_rows)
{
  gint64 last = 0;

  if (events->len + warnings->len != n_rows)
    {
      g_printerr ("%u rows loaded as %u events and %u warnings\n", n_rows, events->len, warnings->len);
      abort ();
    }

  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);
      JsonNode *seq = json_object_get_member (event, "seq");

      if (tally_event_get_type_name (event) == NULL || seq == NULL ||
          json_node_get_value_type (seq) != G_TYPE_INT64 || json_node_get_int (seq) <= last)
        {
          g_autofree char *json = tally_event_to_json (event);

          g_printerr ("loaded an event without a type or an increasing seq: %s\n", json);
          abort ();
        }
      last = json_node_get_int (seq);
    }
}

static void
load_all (const char *query,
          guint       n_rows)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(TallyConversation) conversation = tally_conversation_new ();
  g_autoptr(TallySessionInfo) info = NULL;
  g_autofree char *trace = NULL;
  g_autofree char *markdown = NULL;
  g_autofree char *jsonl = NULL;

  events = tally_store_load_events (store, SESSION_ID, &warnings, &error);
  g_assert_no_error (error);
  /* The session_created row is one of them. */
  check_events (events, warnings, n_rows + 1);

  for (guint i = 0; i < events->len; i++)
    tally_transcript_apply (transcript, g_ptr_array_index (events, i));
  trace = tally_transcript_dup_trace (transcript);

  lines = tally_store_load_event_lines (store, SESSION_ID, &error);
  g_assert_no_error (error);

  markdown = tally_export_session_markdown (store, SESSION_ID, &error);
  g_assert_no_error (error);
  jsonl = tally_store_export_jsonl (store, SESSION_ID, &error);
  g_assert_no_error (error);

  /* A damaged message is reported as an error, not a crash. */
  tally_store_load_conversation (store, SESSION_ID, conversation, NULL);

  info = tally_store_find_session (store, "5e55", &error);
  g_assert_no_error (error);
  sessions = tally_store_list_sessions (store, &error);
  g_assert_no_error (error);
  hits = tally_store_search (store, query, NULL);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = tally_fuzz_dup_text (data, size);
  g_autofree char *query = NULL;
  const char *nl = strchr (text, '\n');
  guint n_rows;

  query = nl != NULL ? g_strndup (text, nl - text) : g_strdup (text);

  store_rows (data, size, &n_rows);
  load_all (query, n_rows);

  exec_or_die ("DELETE FROM events WHERE seq > 1; DELETE FROM messages");

  return 0;
}
