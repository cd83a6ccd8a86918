/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The reducer: hand-written event sequences give the expected blocks, and a
 * session replayed from the store gives exactly the transcript the live run
 * built (golden), for text, thinking, tool calls and an error. */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "tally-event.h"
#include "tally-session.h"
#include "tally-store.h"
#include "tally-test-mock.h"
#include "tally-transcript.h"
#include "tally-transcript-export.h"

static JsonObject *
ev (const char *json)
{
  g_autoptr(GError) error = NULL;
  JsonObject *event = tally_event_from_json (json, &error);

  g_assert_no_error (error);
  return event;
}

static void
apply_all (TallyTranscript    *transcript,
           const char * const *events)
{
  for (guint i = 0; events[i] != NULL; i++)
    {
      g_autoptr(JsonObject) event = ev (events[i]);
      tally_transcript_apply (transcript, event);
    }
}

static void
test_reducer_blocks (void)
{
  static const char * const events[] = {
    "{\"type\":\"session_created\",\"seq\":1,\"turn_id\":null,\"title\":\"Stores\"}",
    "{\"type\":\"turn_started\",\"seq\":2,\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"How many stores?\"}",
    "{\"type\":\"thinking_delta\",\"seq\":3,\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"Count the \"}",
    "{\"type\":\"thinking_delta\",\"seq\":4,\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"stores table.\"}",
    "{\"type\":\"block_done\",\"seq\":5,\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}",
    "{\"type\":\"text_delta\",\"seq\":6,\"turn_id\":\"t1\",\"call\":0,\"block\":1,\"text\":\"Let me look.\"}",
    "{\"type\":\"block_done\",\"seq\":7,\"turn_id\":\"t1\",\"call\":0,\"block\":1,\"kind\":\"text\"}",
    "{\"type\":\"block_done\",\"seq\":8,\"turn_id\":\"t1\",\"call\":0,\"block\":2,\"kind\":\"tool_use\"}",
    "{\"type\":\"tool_use_start\",\"seq\":9,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT count(*) FROM stores\"}}",
    "{\"type\":\"approval_resolved\",\"seq\":10,\"turn_id\":\"t1\",\"approval_id\":null,\"tool_id\":\"tu1\",\"decision\":\"allow\",\"reason\":\"mode\"}",
    "{\"type\":\"tool_result\",\"seq\":11,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"count(*)\\n4\\n(1 row)\",\"is_error\":false,\"duration_ms\":3}",
    "{\"type\":\"text_delta\",\"seq\":12,\"turn_id\":\"t1\",\"call\":1,\"block\":0,\"text\":\"There are four \"}",
    "{\"type\":\"text_delta\",\"seq\":13,\"turn_id\":\"t1\",\"call\":1,\"block\":0,\"text\":\"sto\"}",
    "{\"type\":\"error\",\"seq\":14,\"turn_id\":\"t1\",\"kind\":\"stream\",\"message\":\"Overloaded\",\"retryable\":true,\"request_id\":\"req_2\"}",
    "{\"type\":\"turn_finished\",\"seq\":15,\"turn_id\":\"t1\",\"status\":\"failed\",\"cost_usd\":0.0123,\"duration_ms\":900,\"api_calls\":1,\"usage\":{\"input_tokens\":10,\"output_tokens\":5,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0}}",
    NULL
  };
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autofree char *trace = NULL;
  g_autoptr(TallyBlock) thinking = NULL;

  apply_all (transcript, events);
  trace = tally_transcript_dup_trace (transcript);

  g_assert_cmpstr (tally_transcript_get_title (transcript), ==, "Stores");
  g_assert_cmpint (tally_transcript_get_last_seq (transcript), ==, 15);
  g_assert_cmpstr (trace, ==,
    "user\task\tfinished\twhole\t-\tok\tHow many stores?\t-\n"
    "thinking\t-\tfinished\twhole\t-\tok\tCount the stores table.\t-\n"
    "text\t-\tfinished\twhole\t-\tok\tLet me look.\t-\n"
    "tool-call\tdone\tfinished\twhole\tquery_database\tok\t\tcount(*)\\n4\\n(1 row)\n"
    "text\t-\topen\tincomplete\t-\tok\tThere are four sto\t-\n"
    "incomplete\t-\topen\twhole\t-\tok\t\t-\n"
    "error\tstream\tfinished\twhole\t-\tok\tOverloaded\t-\n"
    "receipt\tfailed\tfinished\twhole\t-\tok\t\t-\n");

  thinking = g_list_model_get_item (G_LIST_MODEL (transcript), 1);
  g_assert_cmpuint (tally_block_get_word_count (thinking), ==, 4);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (transcript)), ==, 8);
}

static void
test_reducer_cards_and_denials (void)
{
  static const char * const events[] = {
    "{\"type\":\"turn_started\",\"seq\":1,\"turn_id\":\"t1\",\"mode\":\"plan\",\"text\":\"Plan it\"}",
    "{\"type\":\"tool_use_start\",\"seq\":2,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"a.txt\",\"content\":\"x\"}}",
    "{\"type\":\"approval_resolved\",\"seq\":3,\"turn_id\":\"t1\",\"approval_id\":null,\"tool_id\":\"tu1\",\"decision\":\"deny\",\"reason\":\"mode\",\"message\":\"Plan mode is on\"}",
    "{\"type\":\"tool_result\",\"seq\":4,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"Plan mode is on\",\"is_error\":true,\"duration_ms\":0}",
    "{\"type\":\"tool_use_start\",\"seq\":5,\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"tool_name\":\"ExitPlanMode\",\"tool_input\":{\"plan\":\"# Plan\"}}",
    "{\"type\":\"plan_proposed\",\"seq\":6,\"turn_id\":\"t1\",\"plan_id\":\"p1\",\"markdown\":\"# Plan\",\"version\":1}",
    "{\"type\":\"tool_use_start\",\"seq\":7,\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}",
    "{\"type\":\"approval_request\",\"seq\":8,\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"tu3\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"suggestions\":[]}",
    "{\"type\":\"approval_resolved\",\"seq\":9,\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"tu3\",\"decision\":\"allow\",\"reason\":\"user\"}",
    "{\"type\":\"tool_result\",\"seq\":10,\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"content\":\"a.txt\",\"is_error\":false,\"duration_ms\":4}",
    "{\"type\":\"turn_finished\",\"seq\":11,\"turn_id\":\"t1\",\"status\":\"done\",\"cost_usd\":null,\"duration_ms\":10,\"api_calls\":2,\"usage\":{}}",
    NULL
  };
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autofree char *trace = NULL;

  apply_all (transcript, events);
  trace = tally_transcript_dup_trace (transcript);
  g_assert_cmpstr (trace, ==,
    "user\tplan\tfinished\twhole\t-\tok\tPlan it\t-\n"
    "tool-call\tdenied\tfinished\twhole\tWrite\terror\t\tPlan mode is on\n"
    "plan\t-\tfinished\twhole\t-\tok\t# Plan\t-\n"
    "tool-call\tdone\tfinished\twhole\tBash\tok\t\ta.txt\n"
    "approval\tallow\tfinished\twhole\tBash\tok\t\t-\n"
    "receipt\tdone\tfinished\twhole\t-\tok\t\t-\n");
}

/* chart_created becomes a chart block after its tool call, with the
 * event as details (the spec and rows inline), and the Markdown export
 * shows the SVG and names the query (issue 12 §1, §3). */
static void
test_reducer_chart (void)
{
  static const char * const events[] = {
    "{\"type\":\"turn_started\",\"seq\":1,\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"Chart it\"}",
    "{\"type\":\"tool_use_start\",\"seq\":2,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"create_chart\",\"tool_input\":{}}",
    "{\"type\":\"approval_resolved\",\"seq\":3,\"turn_id\":\"t1\",\"approval_id\":null,\"tool_id\":\"tu1\",\"decision\":\"allow\",\"reason\":\"mode\"}",
    "{\"type\":\"tool_result\",\"seq\":4,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"A bar chart.\",\"is_error\":false,\"duration_ms\":40}",
    "{\"type\":\"chart_created\",\"seq\":5,\"turn_id\":\"t1\",\"chart_id\":\"c1\",\"tool_id\":\"tu1\",\"title\":\"Revenue by store\","
    "\"spec\":{\"title\":\"Revenue by store\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"store\",\"type\":\"nominal\"},"
    "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\"}},\"data\":{\"values\":[{\"store\":\"York\",\"revenue\":12.5}]}},"
    "\"files\":[\"charts/revenue-by-store.svg\",\"charts/revenue-by-store.png\"],\"rows\":1,"
    "\"sql\":\"SELECT store,\\n revenue FROM r\"}",
    "{\"type\":\"turn_finished\",\"seq\":6,\"turn_id\":\"t1\",\"status\":\"done\",\"cost_usd\":null,\"duration_ms\":10,\"api_calls\":1,\"usage\":{}}",
    NULL
  };
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(TallyBlock) chart = NULL;
  g_autofree char *trace = NULL;
  g_autofree char *markdown = NULL;
  TallyTranscriptExportHeader header = { .title = "Charts" };
  JsonObject *details;

  apply_all (transcript, events);
  trace = tally_transcript_dup_trace (transcript);
  g_assert_cmpstr (trace, ==,
    "user\task\tfinished\twhole\t-\tok\tChart it\t-\n"
    "tool-call\tdone\tfinished\twhole\tcreate_chart\tok\t\tA bar chart.\n"
    "chart\t-\tfinished\twhole\tcreate_chart\tok\tRevenue by store\t-\n"
    "file\t-\tfinished\twhole\tcreate_chart\tok\tcharts/revenue-by-store.svg\t-\n"
    "file\t-\tfinished\twhole\tcreate_chart\tok\tcharts/revenue-by-store.png\t-\n"
    "receipt\tdone\tfinished\twhole\t-\tok\t\t-\n");

  chart = g_list_model_get_item (G_LIST_MODEL (transcript), 2);
  g_assert_cmpint (tally_block_get_kind (chart), ==, TALLY_BLOCK_CHART);
  g_assert_cmpstr (tally_block_get_tool_id (chart), ==, "tu1");
  details = tally_block_get_details (chart);
  g_assert_cmpstr (json_object_get_string_member (details, "chart_id"), ==, "c1");
  g_assert_cmpint (json_object_get_int_member (details, "rows"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (
                      json_object_get_object_member (json_object_get_object_member (details, "spec"), "data"),
                      "values")), ==, 1);

  markdown = tally_transcript_export_markdown (transcript, &header);
  g_assert_nonnull (strstr (markdown, "![Revenue by store](charts/revenue-by-store.svg)\n\n"
                                      "*Source: [1]*\n\n"));
  g_assert_nonnull (strstr (markdown, "## Sources\n\n[1] SQL on database (not recorded):\n\n"
                                      "```sql\nSELECT store,\n revenue FROM r\n```\n"));
  g_assert_true (g_str_has_prefix (markdown, "# Charts\n\n"));

  /* A title the analyst typed is text, not Markdown or HTML. */
  {
    TallyTranscriptExportHeader typed = { .title = "Q2 <b>bold</b> & *all* [stores]",
                                          .database = "/data/sales_q2.db" };
    g_autofree char *escaped = tally_transcript_export_markdown (transcript, &typed);

    g_assert_true (g_str_has_prefix (escaped, "# Q2 \\<b\\>bold\\</b\\> \\& \\*all\\* \\[stores\\]\n\n"));
    g_assert_nonnull (strstr (escaped, "- **Database:** sales\\_q2.db\n"));
  }
}

/* Files a tool wrote: Write and Edit by their input's file_path, once per
 * path and turn; nothing for a failed or denied call, nor for Bash. */
static void
test_reducer_files (void)
{
  static const char * const events[] = {
    "{\"type\":\"turn_started\",\"seq\":1,\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"Write it up\"}",
    "{\"type\":\"tool_use_start\",\"seq\":2,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"report.md\",\"content\":\"# Q2\"}}",
    "{\"type\":\"tool_use_start\",\"seq\":3,\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"/etc/x.txt\",\"content\":\"x\"}}",
    "{\"type\":\"tool_use_start\",\"seq\":4,\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"echo a > b.txt\"}}",
    "{\"type\":\"tool_use_start\",\"seq\":5,\"turn_id\":\"t1\",\"tool_id\":\"tu4\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"bad.md\",\"content\":\"x\"}}",
    "{\"type\":\"tool_use_start\",\"seq\":6,\"turn_id\":\"t1\",\"tool_id\":\"tu5\",\"tool_name\":\"Write\",\"tool_input\":{\"content\":\"no path\"}}",
    "{\"type\":\"approval_resolved\",\"seq\":7,\"turn_id\":\"t1\",\"approval_id\":null,\"tool_id\":\"tu1\",\"decision\":\"allow\",\"reason\":\"mode\"}",
    "{\"type\":\"tool_result\",\"seq\":8,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"Wrote report.md\",\"is_error\":false,\"duration_ms\":2}",
    "{\"type\":\"approval_resolved\",\"seq\":9,\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"tu2\",\"decision\":\"deny\",\"reason\":\"user\"}",
    "{\"type\":\"tool_result\",\"seq\":10,\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"content\":\"Denied\",\"is_error\":false,\"duration_ms\":0}",
    "{\"type\":\"approval_resolved\",\"seq\":11,\"turn_id\":\"t1\",\"approval_id\":null,\"tool_id\":\"tu3\",\"decision\":\"allow\",\"reason\":\"rule\"}",
    "{\"type\":\"tool_result\",\"seq\":12,\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"content\":\"\",\"is_error\":false,\"duration_ms\":5}",
    "{\"type\":\"approval_resolved\",\"seq\":13,\"turn_id\":\"t1\",\"approval_id\":null,\"tool_id\":\"tu4\",\"decision\":\"allow\",\"reason\":\"mode\"}",
    "{\"type\":\"tool_result\",\"seq\":14,\"turn_id\":\"t1\",\"tool_id\":\"tu4\",\"content\":\"Disk full\",\"is_error\":true,\"duration_ms\":1}",
    "{\"type\":\"tool_result\",\"seq\":15,\"turn_id\":\"t1\",\"tool_id\":\"tu5\",\"content\":\"ok\",\"is_error\":false,\"duration_ms\":1}",
    "{\"type\":\"tool_use_start\",\"seq\":16,\"turn_id\":\"t1\",\"tool_id\":\"tu6\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"report.md\",\"old_string\":\"Q2\",\"new_string\":\"Q3\"}}",
    "{\"type\":\"tool_result\",\"seq\":17,\"turn_id\":\"t1\",\"tool_id\":\"tu6\",\"content\":\"Edited\",\"is_error\":false,\"duration_ms\":1}",
    "{\"type\":\"turn_finished\",\"seq\":18,\"turn_id\":\"t1\",\"status\":\"done\",\"cost_usd\":null,\"duration_ms\":10,\"api_calls\":1,\"usage\":{}}",
    "{\"type\":\"turn_started\",\"seq\":19,\"turn_id\":\"t2\",\"mode\":\"ask\",\"text\":\"Shorter\"}",
    "{\"type\":\"tool_use_start\",\"seq\":20,\"turn_id\":\"t2\",\"tool_id\":\"tu7\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"report.md\",\"old_string\":\"Q3\",\"new_string\":\"Q\"}}",
    "{\"type\":\"tool_result\",\"seq\":21,\"turn_id\":\"t2\",\"tool_id\":\"tu7\",\"content\":\"Edited\",\"is_error\":false,\"duration_ms\":1}",
    NULL
  };
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(TallyBlock) file = NULL;
  g_autofree char *trace = NULL;
  JsonObject *details;

  apply_all (transcript, events);
  trace = tally_transcript_dup_trace (transcript);
  g_assert_cmpstr (trace, ==,
    "user\task\tfinished\twhole\t-\tok\tWrite it up\t-\n"
    "tool-call\tdone\tfinished\twhole\tWrite\tok\t\tWrote report.md\n"
    "tool-call\tdenied\tfinished\twhole\tWrite\tok\t\tDenied\n"
    "tool-call\tdone\tfinished\twhole\tBash\tok\t\t\n"
    "tool-call\terror\tfinished\twhole\tWrite\terror\t\tDisk full\n"
    "tool-call\tdone\tfinished\twhole\tWrite\tok\t\tok\n"
    "file\t-\tfinished\twhole\tWrite\tok\treport.md\t-\n"
    "tool-call\tdone\tfinished\twhole\tEdit\tok\t\tEdited\n"
    "receipt\tdone\tfinished\twhole\t-\tok\t\t-\n"
    "user\task\tfinished\twhole\t-\tok\tShorter\t-\n"
    "tool-call\tdone\tfinished\twhole\tEdit\tok\t\tEdited\n"
    "file\t-\tfinished\twhole\tEdit\tok\treport.md\t-\n");

  file = g_list_model_get_item (G_LIST_MODEL (transcript), 6);
  g_assert_cmpint (tally_block_get_kind (file), ==, TALLY_BLOCK_FILE);
  g_assert_cmpstr (tally_block_get_turn_id (file), ==, "t1");
  g_assert_cmpstr (tally_block_get_tool_id (file), ==, "tu1");
  details = tally_block_get_details (file);
  g_assert_cmpstr (json_object_get_string_member (details, "path"), ==, "report.md");
  g_assert_cmpstr (json_object_get_string_member (details, "tool_name"), ==, "Write");
}

/* Live versus replayed, through a real session, store and mock. */

typedef struct {
  GMainLoop       *loop;
  TallyTurnStatus  status;
} Wait;

static void
sent_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Wait *wait = user_data;

  wait->status = tally_session_send_finish (TALLY_SESSION (object), result, NULL);
  g_main_loop_quit (wait->loop);
}

static void
test_replay_equals_live (void)
{
  g_autofree char *dir = g_dir_make_tmp ("tally-transcript-XXXXXX", NULL);
  g_autofree char *store_path = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *chinook = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  g_autofree char *golden_path = g_test_build_filename (G_TEST_DIST, "golden", "transcript", "replay.trace", NULL);
  g_autofree char *golden = NULL;
  g_autofree char *live_trace = NULL;
  g_autofree char *replay_trace = NULL;
  g_autofree char *session_id = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(TallyClient) client = NULL;
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new_default ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Wait wait = { loop, TALLY_TURN_DONE };

  mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"The genre table first.\",\"signature\":\"c2ln\"},"
    "{\"type\":\"text\",\"text\":\"I'll count the **genres**.\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_G1\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT count(*) AS genres FROM Genre\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_G2\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT nothing FROM Genre\"}}"
    "],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":900,\"output_tokens\":60}}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"There are\\n\\n| genres |\\n|---|\\n| 25 |\\n\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":1000,\"output_tokens\":20}}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Half a seco\"},{\"type\":\"text\",\"text\":\"nd reply\"}],"
    "\"stop_reason\":\"end_turn\"},\"error_event\":{\"type\":\"api_error\",\"message\":\"Internal server error\"},\"error_after_blocks\":1}"
    "]}", &error);
  g_assert_no_error (error);
  client = tally_client_new (tally_test_mock_get_base_url (mock), "sk-test-key");

  {
    g_autoptr(TallyStore) store = tally_store_open (store_path, &error);
    g_autoptr(TallySession) live = NULL;

    g_assert_no_error (error);
    live = tally_session_new (store, client, tools);
    tally_agent_set_database (tally_session_get_agent (live), chinook);

    tally_session_send_async (live,
                              &(TallyTurnRequest) { .text = "How many genres?", .mode = TALLY_MODE_ASK,
                                                    .thinking = TRUE },
                              NULL, sent_cb, &wait);
    g_main_loop_run (loop);
    g_assert_cmpint (wait.status, ==, TALLY_TURN_DONE);

    tally_session_send_async (live, &(TallyTurnRequest) { .text = "And again?", .mode = TALLY_MODE_ASK },
                              NULL, sent_cb, &wait);
    g_main_loop_run (loop);
    g_assert_cmpint (wait.status, ==, TALLY_TURN_FAILED);

    live_trace = tally_transcript_dup_trace (tally_session_get_transcript (live));
    session_id = g_strdup (tally_session_get_id (live));
    g_assert_true (tally_store_flush (store, &error));
  }

  {
    g_autoptr(TallyStore) store = tally_store_open (store_path, &error);
    g_autoptr(TallySession) replayed = NULL;

    g_assert_no_error (error);
    replayed = tally_session_open (store, session_id, NULL, tools, &error);
    g_assert_no_error (error);
    replay_trace = tally_transcript_dup_trace (tally_session_get_transcript (replayed));
  }

  g_assert_cmpstr (replay_trace, ==, live_trace);

  /* And both equal the golden trace checked into the tree
   * (TALLY_UPDATE_GOLDEN=1 rewrites it after a deliberate change). */
  if (g_getenv ("TALLY_UPDATE_GOLDEN") != NULL)
    g_assert_true (g_file_set_contents (golden_path, live_trace, -1, NULL));
  g_assert_true (g_file_get_contents (golden_path, &golden, NULL, &error));
  g_assert_cmpstr (live_trace, ==, golden);

  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 3);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/transcript/reducer-blocks", test_reducer_blocks);
  g_test_add_func ("/tally/transcript/reducer-cards-and-denials", test_reducer_cards_and_denials);
  g_test_add_func ("/tally/transcript/reducer-chart", test_reducer_chart);
  g_test_add_func ("/tally/transcript/reducer-files", test_reducer_files);
  g_test_add_func ("/tally/transcript/replay-equals-live", test_replay_equals_live);

  return g_test_run ();
}
