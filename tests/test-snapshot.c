/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The snapshot of settled blocks (docs/architecture.md §10.2, `snapshots`):
 * a session opened from its snapshot equals the same session replayed from
 * its whole log, for the bundled sample session and for generated sessions
 * with every block kind; a missing, stale, damaged or foreign-format
 * snapshot is rebuilt from the log and loses nothing; a version 4 store
 * gains the table. */

#include "config.h"

#include <sqlite3.h>
#include <glib/gstdio.h>

#include "tally-event.h"
#include "tally-session.h"
#include "tally-session-load.h"
#include "tally-store-snapshot.h"
#include "tally-test-util.h"
#include "tally-tool-registry.h"

#define SESSION_ID "5a9e0c55-0000-4000-8000-00000000f00d"

typedef struct {
  char       *dir;
  char       *path;
  TallyStore *store;
  gint64      seq;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = g_dir_make_tmp ("tally-test-snapshot-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "tally.db", NULL);
  f->store = tally_store_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_clear_object (&f->store);
  tally_test_rm_rf (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

static void
reopen (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  /* The snapshots live sessions asked for are built in a worker thread
   * (docs/architecture.md §3.3): queued first, then committed. */
  tally_session_wait_snapshots ();
  g_assert_true (tally_store_flush (f->store, &error));
  g_assert_no_error (error);
  g_clear_object (&f->store);
  f->store = tally_store_open (f->path, &error);
  g_assert_no_error (error);
}

/* Appends one event; @fields is the event's JSON without the stamp. */
static void
add (Fixture    *f,
     const char *turn_id,
     const char *fields)
{
  g_autoptr(JsonObject) object = tally_test_parse_object (fields);
  g_autoptr(JsonObject) event = NULL;
  g_autoptr(GError) error = NULL;

  f->seq++;
  event = tally_event_stamp (object, f->seq, 1796200229000000 + f->seq, SESSION_ID, turn_id);

  g_assert_true (tally_store_append_event (f->store, event, &error));
  g_assert_no_error (error);
}

static void
add_turn_finished (Fixture    *f,
                   const char *turn_id,
                   const char *status)
{
  g_autofree char *fields = g_strdup_printf ("{\"type\":\"turn_finished\",\"status\":\"%s\",\"cost_usd\":0.0123,"
                                             "\"duration_ms\":4200,\"api_calls\":1,\"usage\":{\"input_tokens\":30,"
                                             "\"output_tokens\":2,\"cache_creation_input_tokens\":0,"
                                             "\"cache_read_input_tokens\":0}}", status);

  add (f, turn_id, fields);
}

/* A session with every block kind: prompts with notes, thinking and text,
 * tool calls done, failed, denied and interrupted, approval and question
 * cards, a plan, a chart with its files, a file written, a redirect, an
 * error with a retry, and a cut reply. */
static void
add_generated_turns (Fixture *f,
                     guint    first,
                     guint    turns)
{
  for (guint t = first; t < first + turns; t++)
    {
      g_autofree char *turn = g_strdup_printf ("turn-%u", t);
      g_autofree char *retry = g_strdup_printf ("turn-%u-retry", t);
      g_autofree char *tool = g_strdup_printf ("{\"type\":\"tool_use_start\",\"tool_id\":\"toolu_%u_a\","
                                               "\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT 1\"}}", t);
      g_autofree char *result = g_strdup_printf ("{\"type\":\"tool_result\",\"tool_id\":\"toolu_%u_a\","
                                                 "\"content\":\"x\\n1\\n(1 row)\",\"is_error\":false,\"duration_ms\":3}", t);
      g_autofree char *write = g_strdup_printf ("{\"type\":\"tool_use_start\",\"tool_id\":\"toolu_%u_w\","
                                                "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"report-%u.md\","
                                                "\"content\":\"# R\"}}", t, t);
      g_autofree char *approval = g_strdup_printf ("{\"type\":\"approval_request\",\"approval_id\":\"ap_%u\","
                                                   "\"tool_id\":\"toolu_%u_w\",\"tool_name\":\"Write\","
                                                   "\"tool_input\":{\"file_path\":\"report-%u.md\"},\"rule\":\"Write(*)\"}",
                                                   t, t, t);
      g_autofree char *approved = g_strdup_printf ("{\"type\":\"approval_resolved\",\"approval_id\":\"ap_%u\","
                                                   "\"tool_id\":\"toolu_%u_w\",\"decision\":\"%s\"}",
                                                   t, t, t % 2 == 0 ? "allow" : "deny");
      g_autofree char *written = g_strdup_printf ("{\"type\":\"tool_result\",\"tool_id\":\"toolu_%u_w\","
                                                  "\"content\":\"Wrote report\",\"is_error\":%s,\"duration_ms\":1}",
                                                  t, t % 2 == 0 ? "false" : "true");
      g_autofree char *question = g_strdup_printf ("{\"type\":\"question_request\",\"question_id\":\"q_%u\","
                                                   "\"questions\":[{\"question\":\"Which store?\",\"options\":"
                                                   "[{\"label\":\"York\"},{\"label\":\"Leeds\"}]}]}", t);
      g_autofree char *answered = g_strdup_printf ("{\"type\":\"question_resolved\",\"question_id\":\"q_%u\","
                                                   "\"reason\":\"answered\",\"answers\":{\"Which store?\":\"York\"}}", t);
      g_autofree char *chart = g_strdup_printf ("{\"type\":\"chart_created\",\"tool_id\":\"toolu_%u_c\",\"title\":"
                                                "\"Revenue by month\",\"files\":[\"charts/c%u.svg\",\"charts/c%u.png\"],"
                                                "\"spec\":{\"mark\":\"bar\"},\"rows\":[[1,2]]}", t, t, t);
      g_autofree char *plan = g_strdup_printf ("{\"type\":\"plan_proposed\",\"plan_id\":\"plan-1\",\"version\":%u,"
                                               "\"markdown\":\"1. Count\\n2. Compare\"}", t + 1);
      g_autofree char *pending = g_strdup_printf ("{\"type\":\"tool_use_start\",\"tool_id\":\"toolu_%u_p\","
                                                  "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}", t);

      add (f, turn, t == 1 ? "{\"type\":\"turn_started\",\"mode\":\"plan\",\"thinking\":true,\"budget_tokens\":2048,"
                             "\"model\":\"claude-opus-5\",\"text\":\"Compare the stores\",\"notes\":\"Now in pounds.\"}"
                           : "{\"type\":\"turn_started\",\"mode\":\"ask\",\"thinking\":false,\"budget_tokens\":0,"
                             "\"model\":\"claude-sonnet-5\",\"text\":\"How did York do?\"}");
      add (f, turn, "{\"type\":\"request_sent\",\"call\":0,\"bytes\":100,\"results\":[]}");
      add (f, turn, "{\"type\":\"thinking_delta\",\"call\":0,\"block\":0,\"text\":\"Look at the \"}");
      add (f, turn, "{\"type\":\"thinking_delta\",\"call\":0,\"block\":0,\"text\":\"stores table.\"}");
      add (f, turn, "{\"type\":\"block_done\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}");
      add (f, turn, "{\"type\":\"text_delta\",\"call\":0,\"block\":1,\"text\":\"## Week\\n\\n\"}");
      add (f, turn, "{\"type\":\"text_delta\",\"call\":0,\"block\":1,\"text\":\"York sold **more**.\"}");
      add (f, turn, "{\"type\":\"block_done\",\"call\":0,\"block\":1,\"kind\":\"text\"}");
      add (f, turn, tool);
      add (f, turn, "{\"type\":\"api_call\",\"call\":0,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}");
      add (f, turn, result);
      add (f, turn, write);
      add (f, turn, approval);
      add (f, turn, approved);
      add (f, turn, written);
      add (f, turn, question);
      add (f, turn, answered);
      add (f, turn, "{\"type\":\"redirect\",\"text\":\"Only March, please\"}");
      add (f, turn, chart);
      add (f, turn, plan);
      add (f, turn, pending);
      add (f, turn, "{\"type\":\"text_delta\",\"call\":1,\"block\":0,\"text\":\"Half a rep\"}");
      add (f, turn, "{\"type\":\"retry\",\"attempt\":1,\"delay_ms\":500}");
      add (f, turn, "{\"type\":\"error\",\"kind\":\"http\",\"message\":\"Overloaded\",\"retryable\":true,"
                    "\"request_id\":null}");
      add_turn_finished (f, turn, "failed");

      /* The failed turn run again in place. */
      {
        g_autofree char *again = g_strdup_printf ("{\"type\":\"turn_started\",\"mode\":\"ask\",\"thinking\":false,"
                                                  "\"budget_tokens\":0,\"model\":\"claude-sonnet-5\","
                                                  "\"text\":\"How did York do?\",\"retry_of\":\"%s\"}", turn);

        add (f, retry, again);
        add (f, retry, "{\"type\":\"text_delta\",\"call\":0,\"block\":0,\"text\":\"York did well.\"}");
        add (f, retry, "{\"type\":\"block_done\",\"call\":0,\"block\":0,\"kind\":\"text\"}");
        add_turn_finished (f, retry, "done");
      }
    }
}

static void
add_generated_session (Fixture *f,
                       guint    turns)
{
  add (f, NULL, "{\"type\":\"session_created\",\"title\":\"Every kind\",\"model\":\"claude-sonnet-5\","
                "\"notes\":\"Revenue is in pence.\",\"workspace\":null,\"database\":null}");
  add_generated_turns (f, 0, turns);
}

/* The sample session the window shows on first launch. */
static void
add_sample_session (Fixture *f)
{
  g_autofree char *path = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "data", "sample-session",
                                            "beanline-sample.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  g_assert_no_error (error);
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonObject) event = NULL;
      g_autoptr(JsonObject) fields = NULL;
      GList *members;

      if (*lines[i] == '\0')
        continue;
      event = tally_event_from_json (lines[i], &error);
      g_assert_no_error (error);
      /* Under this test's session id, keeping every field. */
      fields = json_object_new ();
      members = json_object_get_members (event);
      for (const GList *l = members; l != NULL; l = l->next)
        if (!g_str_equal (l->data, "seq") && !g_str_equal (l->data, "ts") &&
            !g_str_equal (l->data, "session_id") && !g_str_equal (l->data, "turn_id"))
          json_object_set_member (fields, l->data, json_node_copy (json_object_get_member (event, l->data)));
      g_list_free (members);
      {
        g_autoptr(JsonObject) stamped = tally_event_stamp (fields, ++f->seq, json_object_get_int_member (event, "ts"),
                                                           SESSION_ID, tally_event_get_turn_id (event));

        g_assert_true (tally_store_append_event (f->store, stamped, &error));
        g_assert_no_error (error);
      }
    }
}

/* Everything a load produced, as one text: the blocks in their full JSON
 * form (every field, not only the trace's), the trace and the state. */
static char *
describe (TallySessionLoad *load)
{
  g_autoptr(JsonNode) blocks = tally_transcript_to_snapshot (load->transcript);
  g_autoptr(JsonNode) state = json_node_init_object (json_node_alloc (),
                                                     tally_session_state_to_json (&load->state,
                                                                                  tally_transcript_get_title (load->transcript)));
  g_autofree char *blocks_text = json_to_string (blocks, TRUE);
  g_autofree char *state_text = json_to_string (state, TRUE);
  g_autofree char *trace = tally_transcript_dup_trace (load->transcript);

  json_object_unref (json_node_get_object (state));
  return g_strdup_printf ("%s\n%s\n%s\nlast seq %" G_GINT64_FORMAT "\n", blocks_text, trace, state_text,
                          tally_transcript_get_last_seq (load->transcript));
}

/* Loads the session; @expect_snapshot says whether the snapshot must have
 * been used. */
static char *
load_and_describe (Fixture  *f,
                   gboolean  expect_snapshot,
                   GError  **problem)
{
  TallySessionLoad load;
  g_autoptr(GError) error = NULL;
  char *text;

  g_assert_true (tally_session_load (f->store, SESSION_ID, &load, &error));
  g_assert_no_error (error);
  g_assert_cmpint (load.from_snapshot, ==, expect_snapshot);
  g_assert_cmpuint (load.warnings->len, ==, 0);
  text = describe (&load);
  if (problem != NULL)
    *problem = g_steal_pointer (&load.snapshot_problem);
  tally_session_load_clear (&load);
  return text;
}

static gint64
snapshot_seq (Fixture *f)
{
  g_autoptr(TallyStoreSnapshot) snapshot = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (tally_store_load_snapshot (f->store, SESSION_ID, &snapshot, &error));
  g_assert_no_error (error);
  return snapshot != NULL ? snapshot->seq : 0;
}

/* The whole-log replay writes the snapshot; the next load uses it and
 * gives exactly the same transcript and state. */
static void
check_replay_equals_snapshot (Fixture *f,
                              gint64   settled_seq)
{
  g_autofree char *replayed = NULL;
  g_autofree char *restored = NULL;
  g_autoptr(GError) problem = NULL;

  reopen (f);
  g_assert_cmpint (snapshot_seq (f), ==, 0);
  replayed = load_and_describe (f, FALSE, &problem);
  g_assert_null (problem);
  reopen (f);
  g_assert_cmpint (snapshot_seq (f), ==, settled_seq);
  restored = load_and_describe (f, TRUE, &problem);
  g_assert_null (problem);
  g_assert_cmpstr (restored, ==, replayed);
}

static void
test_generated (Fixture       *f,
                gconstpointer  data)
{
  add_generated_session (f, 3);
  check_replay_equals_snapshot (f, f->seq);
}

/* A turn still running when the app stopped: the snapshot ends at the last
 * settled turn and the open turn's events replay on top of it. */
static void
test_unsettled_tail (Fixture       *f,
                     gconstpointer  data)
{
  gint64 settled;

  add_generated_session (f, 2);
  settled = f->seq;
  add (f, "turn-open", "{\"type\":\"turn_started\",\"mode\":\"ask\",\"thinking\":false,\"budget_tokens\":0,"
                       "\"model\":\"claude-sonnet-5\",\"text\":\"And Leeds?\"}");
  add (f, "turn-open", "{\"type\":\"text_delta\",\"call\":0,\"block\":0,\"text\":\"Leeds \"}");
  add (f, "turn-open", "{\"type\":\"tool_use_start\",\"tool_id\":\"toolu_open\",\"tool_name\":\"query_database\","
                       "\"tool_input\":{}}");
  check_replay_equals_snapshot (f, settled);
}

static void
test_sample_session (Fixture       *f,
                     gconstpointer  data)
{
  add_sample_session (f);
  g_assert_cmpint (f->seq, ==, 116);
  check_replay_equals_snapshot (f, 116);
}

/* The live session writes the snapshot when a turn settles: here the
 * repair of an interrupted turn at open (its failed turn_finished). */
static void
test_written_when_turn_settles (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *replayed = NULL;
  g_autofree char *restored = NULL;
  g_autofree char *opened_trace = NULL;
  gint64 before;

  add_generated_session (f, 1);
  add (f, "turn-cut", "{\"type\":\"turn_started\",\"mode\":\"ask\",\"thinking\":false,\"budget_tokens\":0,"
                      "\"model\":\"claude-sonnet-5\",\"text\":\"And Leeds?\"}");
  add (f, "turn-cut", "{\"type\":\"tool_use_start\",\"tool_id\":\"toolu_cut\",\"tool_name\":\"query_database\","
                      "\"tool_input\":{}}");
  reopen (f);
  before = f->seq;

  {
    g_autoptr(TallySession) session = tally_session_open (f->store, SESSION_ID, NULL, tools, &error);

    g_assert_no_error (error);
    opened_trace = tally_transcript_dup_trace (tally_session_get_transcript (session));
  }
  reopen (f);

  /* The repair appended a tool result, an error and turn_finished, and
   * the snapshot followed the last of them. */
  g_assert_cmpint (snapshot_seq (f), ==, before + 3);
  restored = load_and_describe (f, TRUE, NULL);
  {
    TallySessionLoad load;
    g_autofree char *trace = NULL;

    g_assert_true (tally_session_load (f->store, SESSION_ID, &load, &error));
    trace = tally_transcript_dup_trace (load.transcript);
    g_assert_cmpstr (trace, ==, opened_trace);
    tally_session_load_clear (&load);
  }

  /* The same as the whole log replayed. */
  g_assert_true (tally_store_save_snapshot (f->store, SESSION_ID, 1, 99, "{}", "[]", &error));
  reopen (f);
  replayed = load_and_describe (f, FALSE, NULL);
  g_assert_cmpstr (restored, ==, replayed);
}

/* The live session's snapshot writer, which builds snapshots in a thread
 * of its own (docs/architecture.md §3.3): from the stored snapshot and the
 * events after it, then from its own copy; the last of two settled turns
 * asked for in a row wins; a turn the log does not reach writes nothing;
 * every snapshot it writes equals the whole log replayed. */
static void
test_writer (Fixture       *f,
             gconstpointer  data)
{
  TallySnapshotWriter *writer;
  g_autofree char *restored = NULL;
  g_autofree char *replayed = NULL;
  g_autoptr(GError) error = NULL;
  gint64 first, last;

  add_generated_session (f, 2);
  first = f->seq;
  check_replay_equals_snapshot (f, first);

  add_generated_turns (f, 2, 1);
  add_generated_turns (f, 3, 1);
  writer = tally_snapshot_writer_new (f->store, SESSION_ID);
  tally_snapshot_writer_settled (writer, f->seq);
  add_generated_turns (f, 4, 1);
  tally_snapshot_writer_settled (writer, f->seq);
  last = f->seq;
  tally_snapshot_writer_close (writer);
  reopen (f);
  g_assert_cmpint (snapshot_seq (f), ==, last);

  /* Past the end of the log: nothing is written for it. */
  writer = tally_snapshot_writer_new (f->store, SESSION_ID);
  tally_snapshot_writer_settled (writer, last + 10);
  tally_snapshot_writer_close (writer);
  reopen (f);
  g_assert_cmpint (snapshot_seq (f), ==, last);
  restored = load_and_describe (f, TRUE, NULL);

  /* The same as the whole log replayed. */
  g_assert_true (tally_store_save_snapshot (f->store, SESSION_ID, 1, 99, "{}", "[]", &error));
  g_assert_no_error (error);
  reopen (f);
  replayed = load_and_describe (f, FALSE, NULL);
  g_assert_cmpstr (restored, ==, replayed);
}

/* A snapshot that cannot be used is an error that loses nothing: the log
 * replays, and the snapshot is written again. */
static void
check_rebuilt (Fixture    *f,
               gint64      seq,
               gint64      format,
               const char *state,
               const char *blocks,
               int         code)
{
  g_autofree char *expected = NULL;
  g_autofree char *replayed = NULL;
  g_autofree char *restored = NULL;
  g_autoptr(GError) problem = NULL;
  g_autoptr(GError) error = NULL;

  expected = load_and_describe (f, TRUE, NULL);

  g_assert_true (tally_store_save_snapshot (f->store, SESSION_ID, seq, format, state, blocks, &error));
  g_assert_no_error (error);
  reopen (f);
  replayed = load_and_describe (f, FALSE, &problem);
  g_assert_error (problem, TALLY_SNAPSHOT_ERROR, code);
  g_assert_cmpstr (replayed, ==, expected);

  reopen (f);
  g_assert_cmpint (snapshot_seq (f), ==, f->seq);
  restored = load_and_describe (f, TRUE, NULL);
  g_assert_cmpstr (restored, ==, expected);
}

static void
test_rebuilt (Fixture       *f,
              gconstpointer  data)
{
  g_autofree char *good_state = NULL;
  g_autofree char *good_blocks = NULL;
  gint64 first_settled;

  add_generated_session (f, 1);
  first_settled = f->seq;
  add_generated_turns (f, 1, 1);
  {
    g_autofree char *turn = g_strdup ("turn-last");

    add (f, turn, "{\"type\":\"turn_started\",\"mode\":\"ask\",\"text\":\"Last\"}");
    add (f, turn, "{\"type\":\"text_delta\",\"call\":0,\"block\":0,\"text\":\"Done.\"}");
    add_turn_finished (f, turn, "done");
  }
  reopen (f);
  g_free (load_and_describe (f, FALSE, NULL));
  reopen (f);

  {
    g_autoptr(TallyStoreSnapshot) snapshot = NULL;
    g_autoptr(GError) error = NULL;

    g_assert_true (tally_store_load_snapshot (f->store, SESSION_ID, &snapshot, &error));
    g_assert_nonnull (snapshot);
    good_state = g_strdup (snapshot->state);
    good_blocks = g_strdup (snapshot->blocks);
  }

  /* Damaged blocks, a damaged state, a block of a kind nobody knows,
   * another format, a state for another event, and a stale snapshot (a
   * turn settled after it). */
  check_rebuilt (f, f->seq, TALLY_SNAPSHOT_FORMAT, good_state, "[{\"kind\":\"text\",", TALLY_SNAPSHOT_ERROR_INVALID);
  check_rebuilt (f, f->seq, TALLY_SNAPSHOT_FORMAT, "{\"max_seq\":", good_blocks, TALLY_SNAPSHOT_ERROR_INVALID);
  check_rebuilt (f, f->seq, TALLY_SNAPSHOT_FORMAT, good_state, "[{\"kind\":\"hologram\",\"text\":\"\"}]",
                 TALLY_SNAPSHOT_ERROR_INVALID);
  check_rebuilt (f, f->seq, TALLY_SNAPSHOT_FORMAT, good_state, "[{\"kind\":\"text\",\"text\":7}]",
                 TALLY_SNAPSHOT_ERROR_INVALID);
  check_rebuilt (f, f->seq, TALLY_SNAPSHOT_FORMAT, good_state, "{}", TALLY_SNAPSHOT_ERROR_INVALID);
  check_rebuilt (f, f->seq, TALLY_SNAPSHOT_FORMAT + 1, good_state, good_blocks, TALLY_SNAPSHOT_ERROR_FORMAT);
  check_rebuilt (f, f->seq - 1, TALLY_SNAPSHOT_FORMAT, good_state, good_blocks, TALLY_SNAPSHOT_ERROR_INVALID);
  check_rebuilt (f, first_settled, TALLY_SNAPSHOT_FORMAT, good_state, good_blocks, TALLY_SNAPSHOT_ERROR_INVALID);
  {
    /* A snapshot that was right at an earlier turn, with a turn after it. */
    g_autoptr(GError) error = NULL;
    g_autofree char *early_state = NULL;
    g_autofree char *early_blocks = NULL;
    gint64 keep = f->seq;

    /* Take the snapshot of the first turn: the log as it was then. */
    {
      g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
      g_autoptr(GPtrArray) events = tally_store_load_events (f->store, SESSION_ID, NULL, &error);
      TallySessionState state = { 0 };
      g_autoptr(JsonNode) blocks = NULL;
      g_autoptr(JsonNode) state_node = NULL;

      for (guint i = 0; i < events->len && tally_event_get_seq (g_ptr_array_index (events, i)) <= first_settled; i++)
        {
          tally_session_state_fold (&state, g_ptr_array_index (events, i));
          tally_transcript_apply (transcript, g_ptr_array_index (events, i));
        }
      blocks = tally_transcript_to_snapshot (transcript);
      state_node = json_node_init_object (json_node_alloc (),
                                          tally_session_state_to_json (&state, tally_transcript_get_title (transcript)));
      json_object_unref (json_node_get_object (state_node));
      early_blocks = json_to_string (blocks, FALSE);
      early_state = json_to_string (state_node, FALSE);
      tally_session_state_clear (&state);
    }
    check_rebuilt (f, first_settled, TALLY_SNAPSHOT_FORMAT, early_state, early_blocks, TALLY_SNAPSHOT_ERROR_STALE);
    g_assert_cmpint (f->seq, ==, keep);
  }
}

static void
opened_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static TallySession *
open_async (TallyStore  *store,
            const char  *session_id,
            GError     **error)
{
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();
  g_autoptr(GAsyncResult) result = NULL;

  tally_session_open_async (store, session_id, NULL, tools, NULL, opened_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return tally_session_open_finish (result, error);
}

/* The session opens in a worker thread and is handed over whole: the
 * same transcript and state as the blocking open, and the writer lock. */
static void
test_open_async (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) other = NULL;
  g_autofree char *sync_trace = NULL;
  g_autofree char *async_trace = NULL;

  add_generated_session (f, 2);
  reopen (f);
  {
    g_autoptr(TallySession) session = tally_session_open (f->store, SESSION_ID, NULL, tools, &error);

    g_assert_no_error (error);
    sync_trace = tally_transcript_dup_trace (tally_session_get_transcript (session));
  }
  reopen (f);
  other = tally_store_open (f->path, &error);
  g_assert_no_error (error);
  {
    g_autoptr(TallySession) session = open_async (f->store, SESSION_ID, &error);
    g_autoptr(TallySession) elsewhere = NULL;

    g_assert_no_error (error);
    g_assert_cmpstr (tally_session_get_id (session), ==, SESSION_ID);
    g_assert_cmpint (tally_session_get_mode (session), ==, TALLY_MODE_ASK);
    async_trace = tally_transcript_dup_trace (tally_session_get_transcript (session));
    g_assert_cmpstr (async_trace, ==, sync_trace);

    /* It holds the session's writer lock against another store object. */
    elsewhere = open_async (other, SESSION_ID, &error);
    g_assert_null (elsewhere);
    g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED);
    g_clear_error (&error);
  }

  /* Closed, the lock is free again; an unknown session is an error. */
  {
    g_autoptr(TallySession) session = open_async (other, SESSION_ID, &error);

    g_assert_no_error (error);
    g_assert_nonnull (session);
  }
  g_assert_null (open_async (f->store, "ffffffff-0000-4000-8000-000000000000", &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
}

/* Blocks keep every field through their JSON form. */
static void
test_block_round_trip (void)
{
  g_autoptr(JsonObject) details = tally_test_parse_object ("{\"approval_id\":\"ap_1\",\"resolution\":{\"decision\":\"allow\"}}");

  for (int kind = TALLY_BLOCK_USER; kind <= TALLY_BLOCK_FILE; kind++)
    {
      g_autoptr(TallyBlock) block = tally_block_new (kind, kind == TALLY_BLOCK_NOTICE ? NULL : "turn-1");
      g_autoptr(TallyBlock) back = NULL;
      g_autoptr(JsonObject) object = NULL;
      g_autoptr(JsonObject) again = NULL;
      g_autoptr(JsonNode) node1 = NULL;
      g_autoptr(JsonNode) node2 = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *text1 = NULL;
      g_autofree char *text2 = NULL;

      tally_block_set_text (block, "Line one\nline “two”\t\\");
      tally_block_set_state (block, kind % 2 ? "done" : NULL);
      tally_block_set_finished (block, kind % 3 == 0);
      tally_block_set_incomplete (block, kind % 4 == 0);
      if (kind == TALLY_BLOCK_TOOL_CALL || kind == TALLY_BLOCK_APPROVAL || kind == TALLY_BLOCK_FILE)
        tally_block_set_tool (block, "toolu_1", "Write", kind == TALLY_BLOCK_FILE ? NULL : "{\"file_path\":\"a.md\"}");
      if (kind == TALLY_BLOCK_TOOL_CALL)
        tally_block_set_result (block, "ok", TRUE, 1234);
      if (kind != TALLY_BLOCK_TEXT)
        tally_block_set_details (block, details);

      object = tally_block_to_json (block);
      back = tally_block_new_from_json (object, &error);
      g_assert_no_error (error);
      again = tally_block_to_json (back);
      node1 = json_node_init_object (json_node_alloc (), object);
      node2 = json_node_init_object (json_node_alloc (), again);
      text1 = json_to_string (node1, FALSE);
      text2 = json_to_string (node2, FALSE);
      g_assert_cmpstr (text2, ==, text1);

      g_assert_cmpint (tally_block_get_kind (back), ==, kind);
      g_assert_cmpstr (tally_block_get_turn_id (back), ==, tally_block_get_turn_id (block));
      g_assert_cmpstr (tally_block_get_text (back), ==, "Line one\nline “two”\t\\");
      g_assert_cmpstr (tally_block_get_state (back), ==, tally_block_get_state (block));
      g_assert_cmpint (tally_block_get_finished (back), ==, tally_block_get_finished (block));
      g_assert_cmpint (tally_block_get_incomplete (back), ==, tally_block_get_incomplete (block));
      g_assert_cmpstr (tally_block_get_tool_id (back), ==, tally_block_get_tool_id (block));
      g_assert_cmpstr (tally_block_get_tool_name (back), ==, tally_block_get_tool_name (block));
      g_assert_cmpstr (tally_block_get_tool_input (back), ==, tally_block_get_tool_input (block));
      g_assert_cmpstr (tally_block_get_result (back), ==, tally_block_get_result (block));
      g_assert_cmpint (tally_block_get_is_error (back), ==, tally_block_get_is_error (block));
      g_assert_cmpint (tally_block_get_duration_ms (back), ==, tally_block_get_duration_ms (block));
      g_assert_true ((tally_block_get_details (back) == NULL) == (kind == TALLY_BLOCK_TEXT));
    }
}

/* Bad block JSON is an error naming what is wrong, never a crash. */
static void
test_block_bad_json (void)
{
  const struct {
    const char *json;
    const char *message;
  } cases[] = {
    { "{}", "The block's “kind” is missing" },
    { "{\"kind\":3,\"text\":\"\"}", "The block's “kind” is not a string" },
    { "{\"kind\":\"unicorn\",\"text\":\"\"}", "“unicorn” is not a kind of block" },
    { "{\"kind\":\"text\"}", "The block's “text” is missing" },
    { "{\"kind\":\"text\",\"text\":\"\",\"finished\":1}", "The block's “finished” is not true or false" },
    { "{\"kind\":\"text\",\"text\":\"\",\"duration_ms\":1.5}", "The block's “duration_ms” is not a whole number" },
    { "{\"kind\":\"text\",\"text\":\"\",\"details\":[]}", "The block's “details” is not an object" },
    { "{\"kind\":\"text\",\"text\":\"\",\"state\":null}", "The block's “state” is not a string" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonObject) object = tally_test_parse_object (cases[i].json);
      g_autoptr(GError) error = NULL;
      g_autoptr(TallyBlock) block = tally_block_new_from_json (object, &error);

      g_assert_null (block);
      g_assert_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==, cases[i].message);
    }
}

/* A version 4 store (before snapshots) gains the table on open and its
 * sessions open from their log, then from a snapshot. */
static void
test_migration_from_v4 (Fixture       *f,
                        gconstpointer  data)
{
  sqlite3 *db = NULL;
  g_autofree char *replayed = NULL;
  g_autofree char *restored = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = NULL;

  add_generated_session (f, 2);
  g_assert_true (tally_store_flush (f->store, &error));
  g_clear_object (&f->store);

  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE snapshots; PRAGMA user_version = 4;", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  f->store = tally_store_open (f->path, &error);
  g_assert_no_error (error);
  g_assert_false (tally_store_is_read_only (f->store));
  replayed = load_and_describe (f, FALSE, NULL);
  reopen (f);
  restored = load_and_describe (f, TRUE, NULL);
  g_assert_cmpstr (restored, ==, replayed);

  /* The upgrade kept a copy of the version 4 file. */
  {
    g_autoptr(GDir) dir = g_dir_open (f->dir, 0, &error);
    const char *name;
    guint backups = 0;

    g_assert_no_error (error);
    while ((name = g_dir_read_name (dir)) != NULL)
      if (g_str_has_prefix (name, "tally.db.bak-v4-"))
        backups++;
    g_assert_cmpuint (backups, ==, 1);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/snapshot/block-round-trip", test_block_round_trip);
  g_test_add_func ("/tally/snapshot/block-bad-json", test_block_bad_json);
  g_test_add ("/tally/snapshot/generated", Fixture, NULL, fixture_set_up, test_generated, fixture_tear_down);
  g_test_add ("/tally/snapshot/unsettled-tail", Fixture, NULL, fixture_set_up, test_unsettled_tail, fixture_tear_down);
  g_test_add ("/tally/snapshot/sample-session", Fixture, NULL, fixture_set_up, test_sample_session, fixture_tear_down);
  g_test_add ("/tally/snapshot/written-when-turn-settles", Fixture, NULL, fixture_set_up,
              test_written_when_turn_settles, fixture_tear_down);
  g_test_add ("/tally/snapshot/writer", Fixture, NULL, fixture_set_up, test_writer, fixture_tear_down);
  g_test_add ("/tally/snapshot/rebuilt", Fixture, NULL, fixture_set_up, test_rebuilt, fixture_tear_down);
  g_test_add ("/tally/snapshot/open-async", Fixture, NULL, fixture_set_up, test_open_async, fixture_tear_down);
  g_test_add ("/tally/snapshot/migration-from-v4", Fixture, NULL, fixture_set_up, test_migration_from_v4,
              fixture_tear_down);

  return g_test_run ();
}
