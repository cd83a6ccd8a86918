/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The agent loop against the mock Messages API: events, the tool loop on
 * real data, history sent back to the API, failures and cancellation. */

#include "config.h"

#include <string.h>
#include <glib/gstdio.h>

#include "tally-agent.h"
#include "tally-api-error.h"
#include "tally-event.h"
#include "tally-pricing.h"
#include "tally-test-mock.h"

typedef struct {
  TallyTestMock     *mock;
  TallyClient       *client;
  TallyToolRegistry *tools;
  TallyAgent        *agent;
  GPtrArray         *events;     /* JsonObject* */
  GMainLoop         *loop;
  TallyTurnStatus    status;
  GError            *error;
  GCancellable      *cancellable;
  guint              cancel_after_ms;
  char              *cancel_on_event;
  char              *workspace;
} Fixture;

static void
event_cb (TallyAgent *agent,
          JsonObject *event,
          Fixture    *f)
{
  g_ptr_array_add (f->events, json_object_ref (event));

  if (f->cancel_on_event != NULL &&
      g_str_equal (tally_event_get_type_name (event), f->cancel_on_event))
    g_cancellable_cancel (f->cancellable);
}

static void
fixture_start (Fixture    *f,
               const char *scenario)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *chinook = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);

  f->mock = tally_test_mock_start (scenario, &error);
  g_assert_no_error (error);
  f->client = tally_client_new (tally_test_mock_get_base_url (f->mock), "sk-test-key");
  f->tools = tally_tool_registry_new_default ();
  f->agent = tally_agent_new (f->client, f->tools);
  f->events = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  f->loop = g_main_loop_new (NULL, FALSE);
  f->cancellable = g_cancellable_new ();
  f->workspace = g_dir_make_tmp ("tally-agent-XXXXXX", &error);
  g_assert_no_error (error);

  tally_agent_set_database (f->agent, chinook);
  tally_agent_set_workspace (f->agent, f->workspace);
  g_signal_connect (f->agent, "event", G_CALLBACK (event_cb), f);
}

static void
fixture_stop (Fixture *f)
{
  g_autofree char *cmd = NULL;

  tally_test_mock_free (f->mock);
  g_clear_object (&f->agent);
  g_clear_object (&f->tools);
  g_clear_object (&f->client);
  g_clear_pointer (&f->events, g_ptr_array_unref);
  g_clear_pointer (&f->loop, g_main_loop_unref);
  g_clear_object (&f->cancellable);
  g_clear_error (&f->error);
  g_free (f->cancel_on_event);
  if (f->workspace != NULL)
    {
      g_autoptr(GFile) dir = g_file_new_for_path (f->workspace);
      g_file_delete (dir, NULL, NULL);
    }
  g_free (f->workspace);
}

static void
send_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Fixture *f = user_data;

  g_clear_error (&f->error);
  f->status = tally_agent_send_finish (TALLY_AGENT (object), result, &f->error);
  g_main_loop_quit (f->loop);
}

static gboolean
cancel_cb (gpointer user_data)
{
  Fixture *f = user_data;

  g_cancellable_cancel (f->cancellable);
  return G_SOURCE_REMOVE;
}

static void
run_turn (Fixture    *f,
          const char *text,
          TallyMode   mode,
          gboolean    thinking)
{
  g_cancellable_reset (f->cancellable);
  tally_agent_send_async (f->agent, &(TallyTurnRequest) { .text = text, .mode = mode, .thinking = thinking },
                          f->cancellable, send_done_cb, f);
  if (f->cancel_after_ms > 0)
    g_timeout_add (f->cancel_after_ms, cancel_cb, f);
  g_main_loop_run (f->loop);
}

static guint
count_events (Fixture    *f,
              const char *type)
{
  guint n = 0;

  for (guint i = 0; i < f->events->len; i++)
    if (g_str_equal (tally_event_get_type_name (g_ptr_array_index (f->events, i)), type))
      n++;
  return n;
}

static JsonObject *
find_event (Fixture    *f,
            const char *type,
            guint       nth)
{
  for (guint i = 0; i < f->events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (f->events, i);

      if (g_str_equal (tally_event_get_type_name (event), type) && nth-- == 0)
        return event;
    }
  return NULL;
}

static JsonObject *
last_event (Fixture *f)
{
  g_assert_cmpuint (f->events->len, >, 0);
  return g_ptr_array_index (f->events, f->events->len - 1);
}

static char *
streamed_text (Fixture *f)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < f->events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (f->events, i);

      if (g_str_equal (tally_event_get_type_name (event), "text_delta"))
        g_string_append (text, json_object_get_string_member (event, "text"));
    }
  return g_string_free (text, FALSE);
}

static JsonObject *
request_body (Fixture *f,
              guint    n)
{
  g_autoptr(JsonArray) requests = tally_test_mock_dup_requests (f->mock);
  JsonObject *request;

  g_assert_cmpuint (json_array_get_length (requests), >, n);
  request = json_array_get_object_element (requests, n);
  return json_object_ref (json_object_get_object_member (request, "body"));
}

static char *
node_to_string (JsonNode *node)
{
  return json_to_string (node, FALSE);
}

/* A plain text reply: the event sequence and its receipt. */
static void
test_text_reply (void)
{
  Fixture f = { 0 };
  g_autofree char *text = NULL;
  JsonObject *finished;
  JsonObject *usage;
  TallyUsage u = { 0 };
  double expected_cost = 0;

  fixture_start (&f,
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Beanline has four stores.\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":1200,\"output_tokens\":30}}}]}");
  run_turn (&f, "How many stores are there?", TALLY_MODE_ASK, FALSE);

  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  g_assert_cmpstr (tally_event_get_type_name (g_ptr_array_index (f.events, 0)), ==, "session_created");
  g_assert_cmpstr (tally_event_get_type_name (g_ptr_array_index (f.events, 1)), ==, "turn_started");
  g_assert_cmpstr (json_object_get_string_member (g_ptr_array_index (f.events, 0), "title"), ==,
                   "How many stores are there?");
  g_assert_cmpstr (json_object_get_string_member (g_ptr_array_index (f.events, 1), "mode"), ==, "ask");

  /* seq counts up by one from 1; every event names the session. */
  for (guint i = 0; i < f.events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (f.events, i);

      g_assert_cmpint (json_object_get_int_member (event, "seq"), ==, i + 1);
      g_assert_cmpstr (json_object_get_string_member (event, "session_id"), ==,
                       tally_agent_get_session_id (f.agent));
      g_assert_cmpint (json_object_get_int_member (event, "ts"), >, 1700000000000000);
    }

  text = streamed_text (&f);
  g_assert_cmpstr (text, ==, "Beanline has four stores.");
  g_assert_cmpuint (count_events (&f, "block_done"), ==, 1);
  g_assert_cmpuint (count_events (&f, "api_call"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "api_call", 0), "request_id"), ==, "req_mock_1");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "api_call", 0), "stop_reason"), ==, "end_turn");

  finished = last_event (&f);
  g_assert_cmpstr (tally_event_get_type_name (finished), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (finished, "status"), ==, "done");
  g_assert_cmpint (json_object_get_int_member (finished, "api_calls"), ==, 1);
  usage = json_object_get_object_member (finished, "usage");
  g_assert_cmpint (json_object_get_int_member (usage, "input_tokens"), ==, 1200);
  g_assert_cmpint (json_object_get_int_member (usage, "output_tokens"), ==, 30);

  /* Sonnet 5 at $3 in / $15 out per million tokens. */
  u.input_tokens = 1200;
  u.output_tokens = 30;
  u.cache_creation_5m = u.cache_creation_1h = -1;
  g_assert_true (tally_pricing_compute_cost ("claude-sonnet-5", &u, &expected_cost));
  g_assert_cmpfloat_with_epsilon (expected_cost, (1200 * 3.0 + 30 * 15.0) / 1e6, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (finished, "cost_usd"), expected_cost, 1e-12);

  g_assert_cmpuint (tally_conversation_get_n_messages (tally_agent_get_conversation (f.agent)), ==, 2);

  fixture_stop (&f);
}

/* The whole tool loop on Chinook: get_schema, then query_database, then an
 * answer quoting the real result. */
static void
test_tool_loop_chinook (void)
{
  Fixture f = { 0 };
  g_autofree char *scenario_path = g_test_build_filename (G_TEST_DIST, "scenarios", "genre-revenue.json", NULL);
  g_autofree char *scenario = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonObject) second = NULL;
  g_autoptr(JsonObject) third = NULL;
  JsonArray *messages;
  JsonObject *result;
  JsonArray *content;
  JsonObject *block;

  g_assert_true (g_file_get_contents (scenario_path, &scenario, NULL, NULL));
  fixture_start (&f, scenario);
  run_turn (&f, "Which genre earned the most revenue?", TALLY_MODE_ASK, FALSE);

  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 3);

  g_assert_cmpuint (count_events (&f, "tool_use_start"), ==, 2);
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 2);
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "tool_use_start", 0), "tool_name"), ==, "get_schema");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "decision"), ==, "allow");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "reason"), ==, "mode");

  /* get_schema saw the real tables. */
  result = find_event (&f, "tool_result", 0);
  g_assert_false (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "InvoiceLine"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "TABLE Track (3,503 rows)"));

  /* query_database computed Rock's revenue from the invoice lines. */
  result = find_event (&f, "tool_result", 1);
  g_assert_false (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "Rock"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "826.65"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "382.14"));

  /* The answer quotes what the tool computed. */
  text = streamed_text (&f);
  g_assert_nonnull (strstr (text, "Rock"));
  g_assert_nonnull (strstr (text, "826.65"));

  /* The second request echoes the first reply and answers its tool call
   * first in the next user message. */
  second = request_body (&f, 1);
  messages = json_object_get_array_member (second, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 1), "role"), ==, "assistant");
  content = json_object_get_array_member (json_array_get_object_element (messages, 1), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  block = json_array_get_object_element (content, 1);
  g_assert_cmpstr (json_object_get_string_member (block, "type"), ==, "tool_use");
  g_assert_cmpstr (json_object_get_string_member (block, "id"), ==, "toolu_01Schema");
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  block = json_array_get_object_element (content, 0);
  g_assert_cmpstr (json_object_get_string_member (block, "type"), ==, "tool_result");
  g_assert_cmpstr (json_object_get_string_member (block, "tool_use_id"), ==, "toolu_01Schema");

  /* system and tools are byte-identical across the calls of a turn. */
  third = request_body (&f, 2);
  {
    g_autofree char *s2 = node_to_string (json_object_get_member (second, "system"));
    g_autofree char *s3 = node_to_string (json_object_get_member (third, "system"));
    g_autofree char *t2 = node_to_string (json_object_get_member (second, "tools"));
    g_autofree char *t3 = node_to_string (json_object_get_member (third, "tools"));

    g_assert_cmpstr (s2, ==, s3);
    g_assert_cmpstr (t2, ==, t3);
  }

  g_assert_cmpint (json_object_get_int_member (last_event (&f), "api_calls"), ==, 3);
  fixture_stop (&f);
}

/* Request shape: headers' body fields, cache breakpoints, stream flag. */
static void
test_request_shape (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;
  JsonArray *system;
  JsonArray *messages;
  JsonArray *content;
  JsonArray *tools;

  fixture_start (&f,
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}");
  run_turn (&f, "Hello", TALLY_MODE_ASK, FALSE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  body = request_body (&f, 0);
  g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "claude-sonnet-5");
  g_assert_cmpint (json_object_get_int_member (body, "max_tokens"), ==, 16000);
  g_assert_true (json_object_get_boolean_member (body, "stream"));

  system = json_object_get_array_member (body, "system");
  g_assert_cmpuint (json_array_get_length (system), ==, 1);
  g_assert_true (json_object_has_member (json_array_get_object_element (system, 0), "cache_control"));
  g_assert_nonnull (strstr (json_object_get_string_member (json_array_get_object_element (system, 0), "text"),
                            "chinook.sqlite"));

  tools = json_object_get_array_member (body, "tools");
  g_assert_cmpuint (json_array_get_length (tools), >=, 5);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (tools, 0), "name"), ==,
                   "query_database");

  /* Thinking off on Sonnet 5 is sent explicitly. */
  {
    JsonObject *thinking = json_object_get_object_member (body, "thinking");
    g_assert_nonnull (thinking);
    g_assert_cmpstr (json_object_get_string_member (thinking, "type"), ==, "disabled");
  }

  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 1);
  content = json_object_get_array_member (json_array_get_object_element (messages, 0), "content");
  /* First turn in ask mode: no reminder, the breakpoint on the text. */
  g_assert_cmpuint (json_array_get_length (content), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==, "Hello");
  g_assert_true (json_object_has_member (json_array_get_object_element (content, 0), "cache_control"));

  fixture_stop (&f);
}

/* Thinking is sent in the form each model takes, and a thinking block is
 * echoed with its signature unchanged. */
static void
test_thinking_forms (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) first = NULL;
  g_autoptr(JsonObject) second = NULL;
  g_autoptr(JsonObject) third = NULL;
  JsonArray *messages;
  JsonObject *thinking_block;
  guint n_thinking = 0;

  fixture_start (&f,
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"thinking\",\"thinking\":\"Stores first.\",\"signature\":\"c2lnbmF0dXJlLTE=\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_T1\",\"name\":\"get_schema\",\"input\":{\"table\":\"Genre\"}}],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"There are 25 genres.\"}],\"stop_reason\":\"end_turn\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Fine.\"}],\"stop_reason\":\"end_turn\"}}]}");

  tally_agent_set_model (f.agent, "claude-sonnet-4-5");
  run_turn (&f, "How many genres?", TALLY_MODE_ASK, TRUE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  first = request_body (&f, 0);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (first, "thinking"), "type"), ==, "enabled");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (first, "thinking"), "budget_tokens"), ==, 8000);
  g_assert_cmpint (json_object_get_int_member (find_event (&f, "turn_started", 0), "budget_tokens"), ==, 8000);

  for (guint i = 0; i < f.events->len; i++)
    if (g_str_equal (tally_event_get_type_name (g_ptr_array_index (f.events, i)), "thinking_delta"))
      n_thinking++;
  g_assert_cmpuint (n_thinking, >, 0);

  /* The tool loop keeps the turn's thinking mode and echoes the block. */
  second = request_body (&f, 1);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (second, "thinking"), "type"), ==, "enabled");
  messages = json_object_get_array_member (second, "messages");
  thinking_block = json_array_get_object_element (
    json_object_get_array_member (json_array_get_object_element (messages, 1), "content"), 0);
  g_assert_cmpstr (json_object_get_string_member (thinking_block, "type"), ==, "thinking");
  g_assert_cmpstr (json_object_get_string_member (thinking_block, "thinking"), ==, "Stores first.");
  g_assert_cmpstr (json_object_get_string_member (thinking_block, "signature"), ==, "c2lnbmF0dXJlLTE=");

  /* Adaptive models get adaptive thinking with a summarised display. */
  tally_agent_set_model (f.agent, "claude-fable-5");
  run_turn (&f, "And thanks.", TALLY_MODE_ASK, TRUE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  third = request_body (&f, 2);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (third, "thinking"), "type"), ==, "adaptive");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (third, "thinking"), "display"), ==, "summarized");

  fixture_stop (&f);
}

/* Fable rejects an explicit "disabled": off leaves the field out. */
static void
test_thinking_off_omitted (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;

  fixture_start (&f,
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}");
  tally_agent_set_model (f.agent, "fable");
  run_turn (&f, "Hello", TALLY_MODE_ASK, FALSE);
  body = request_body (&f, 0);
  g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "claude-fable-5");
  g_assert_false (json_object_has_member (body, "thinking"));
  fixture_stop (&f);
}

/* Tool failures are answered with is_error results and the loop goes on. */
static void
test_tool_errors (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;
  JsonArray *messages;
  JsonArray *content;
  JsonObject *result;

  fixture_start (&f,
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_E1\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT Nope FROM Genre\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_E2\",\"name\":\"launch_rockets\",\"input\":{}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_E3\",\"name\":\"query_database\",\"input\":{\"sql\":\"DELETE FROM Genre\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_E4\",\"name\":\"query_database\",\"input\":{\"query\":\"SELECT 1\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Sorry.\"}],\"stop_reason\":\"end_turn\"}}]}");
  run_turn (&f, "Break things", TALLY_MODE_ASK, FALSE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 4);
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 4);

  result = find_event (&f, "tool_result", 0);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "no such column"));

  result = find_event (&f, "tool_result", 1);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "launch_rockets"));
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 1), "decision"), ==, "deny");

  result = find_event (&f, "tool_result", 2);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));

  result = find_event (&f, "tool_result", 3);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "sql"));

  /* All four results went back in one user message, in order, first. */
  body = request_body (&f, 1);
  messages = json_object_get_array_member (body, "messages");
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      JsonObject *block = json_array_get_object_element (content, i);
      g_autofree char *id = g_strdup_printf ("toolu_E%u", i + 1);

      g_assert_cmpstr (json_object_get_string_member (block, "type"), ==, "tool_result");
      g_assert_cmpstr (json_object_get_string_member (block, "tool_use_id"), ==, id);
      g_assert_true (json_object_get_boolean_member (block, "is_error"));
      g_assert_cmpstr (json_object_get_string_member (block, "content"), !=, "");
    }

  fixture_stop (&f);
}

/* An error after content fails the turn; the partial reply stays out of the
 * history and the next prompt joins the unanswered user message. */
static void
test_failure_keeps_history_valid (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;
  JsonObject *error_event;
  JsonArray *messages;
  JsonArray *content;

  fixture_start (&f,
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Half an answer that\"},{\"type\":\"text\",\"text\":\"never ends\"}],"
    "\"stop_reason\":\"end_turn\"},\"error_event\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"error_after_blocks\":1},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Second try.\"}],\"stop_reason\":\"end_turn\"}}]}");

  run_turn (&f, "First question", TALLY_MODE_ASK, FALSE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_FAILED);
  g_assert_error (f.error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 1);

  error_event = find_event (&f, "error", 0);
  g_assert_nonnull (error_event);
  g_assert_cmpstr (json_object_get_string_member (error_event, "kind"), ==, "stream");
  g_assert_cmpstr (json_object_get_string_member (error_event, "message"), ==, "Overloaded");
  g_assert_cmpstr (json_object_get_string_member (last_event (&f), "status"), ==, "failed");

  run_turn (&f, "Second question", TALLY_MODE_ASK, FALSE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  body = request_body (&f, 1);
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 1);
  content = json_object_get_array_member (json_array_get_object_element (messages, 0), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==, "First question");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"), ==, "Second question");

  fixture_stop (&f);
}

/* Cancelling while a tool runs ends the turn as cancelled, answers the tool
 * call as interrupted, and the next turn's request is accepted. */
static void
test_cancel_during_tool (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;
  JsonObject *result;
  JsonArray *messages;
  JsonArray *content;

  fixture_start (&f,
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_Slow\",\"name\":\"query_database\",\"input\":{\"sql\":"
    "\"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500000000) SELECT count(*) FROM c\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_Next\",\"name\":\"get_schema\",\"input\":{}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Understood.\"}],\"stop_reason\":\"end_turn\"}}]}");

  f.cancel_on_event = g_strdup ("approval_resolved");
  run_turn (&f, "Count a lot", TALLY_MODE_ASK, FALSE);
  g_clear_pointer (&f.cancel_on_event, g_free);

  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_CANCELLED);
  g_assert_cmpstr (json_object_get_string_member (last_event (&f), "status"), ==, "cancelled");

  /* Both tool calls got exactly one result event. */
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 2);
  result = find_event (&f, "tool_result", 0);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_Slow");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "interrupted"));
  result = find_event (&f, "tool_result", 1);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_Next");
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "never ran"));

  run_turn (&f, "Never mind, stop.", TALLY_MODE_ASK, FALSE);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  body = request_body (&f, 1);
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 3);
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "tool_use_id"), ==, "toolu_Slow");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "tool_use_id"), ==, "toolu_Next");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 2), "text"), ==, "Never mind, stop.");

  fixture_stop (&f);
}

static void
cancel_after_approval_cb (TallyAgent *agent,
                          JsonObject *event,
                          Fixture    *f)
{
  g_assert (TALLY_IS_AGENT (agent));

  if (g_str_equal (tally_event_get_type_name (event), "approval_resolved"))
    g_timeout_add (300, cancel_cb, f);
}

/* Stops waiting for a turn that does not end. */
static gboolean
quit_on_guard_cb (gpointer user_data)
{
  Fixture *f = user_data;

  g_main_loop_quit (f->loop);
  return G_SOURCE_REMOVE;
}

/* Cancelling while Grep matches a pattern that backtracks for a quarter
 * of a second or more on each of 400 lines (Grep runs without a card in
 * every mode) ends the turn as cancelled at once, with the call answered
 * as interrupted, rather than minutes later, once the whole file has been
 * searched. */
static void
test_cancel_during_grep (void)
{
  Fixture f = { 0 };
  g_autoptr(GString) big = g_string_new (NULL);
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *result;
  guint guard;

  fixture_start (&f,
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_Grep\",\"name\":\"Grep\",\"input\":{\"pattern\":\"(a|aa)+$\"}}"
    "],\"stop_reason\":\"tool_use\"}}]}");
  for (guint i = 0; i < 400; i++)
    g_string_append (big, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\n");
  path = g_build_filename (f.workspace, "big.txt", NULL);
  g_file_set_contents (path, big->str, big->len, &error);
  g_assert_no_error (error);

  /* The cancel comes while the search runs; the guard only keeps a search
   * that ignores it from hanging the test (and fails it: the whole file
   * takes far longer). */
  g_signal_connect (f.agent, "event", G_CALLBACK (cancel_after_approval_cb), &f);
  guard = g_timeout_add_seconds (20, quit_on_guard_cb, &f);
  run_turn (&f, "Find the a's", TALLY_MODE_PLAN, FALSE);
  g_assert_cmpuint (count_events (&f, "turn_finished"), ==, 1);
  g_source_remove (guard);

  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_CANCELLED);
  g_assert_cmpstr (json_object_get_string_member (last_event (&f), "status"), ==, "cancelled");
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 1);
  result = find_event (&f, "tool_result", 0);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_Grep");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "interrupted"));

  g_assert_cmpint (g_unlink (path), ==, 0);
  fixture_stop (&f);
}

/* Plan mode is restated in every plan turn; leaving it is said once. */
static void
test_mode_reminders (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) first = NULL;
  g_autoptr(JsonObject) second = NULL;
  g_autoptr(JsonObject) third = NULL;
  g_autofree char *tools1 = NULL;
  g_autofree char *tools3 = NULL;
  g_autofree char *system1 = NULL;
  g_autofree char *system3 = NULL;
  JsonArray *messages;
  JsonArray *content;
  const char *reply = "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}";
  g_autofree char *scenario = g_strdup_printf ("{\"responses\":[%s,%s,%s]}", reply, reply, reply);

  fixture_start (&f, scenario);
  run_turn (&f, "Plan a report", TALLY_MODE_PLAN, FALSE);
  run_turn (&f, "Refine it", TALLY_MODE_PLAN, FALSE);
  run_turn (&f, "Go ahead", TALLY_MODE_ASK, FALSE);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  first = request_body (&f, 0);
  messages = json_object_get_array_member (first, "messages");
  content = json_object_get_array_member (json_array_get_object_element (messages, 0), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_nonnull (strstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"),
                            "Plan mode is on"));

  second = request_body (&f, 1);
  messages = json_object_get_array_member (second, "messages");
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_nonnull (strstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"),
                            "Plan mode is on"));

  third = request_body (&f, 2);
  messages = json_object_get_array_member (third, "messages");
  content = json_object_get_array_member (json_array_get_object_element (messages, 4), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  {
    const char *text = json_object_get_string_member (json_array_get_object_element (content, 1), "text");

    /* Leaving plan mode says so, and that the analyst approved going on. */
    g_assert_nonnull (strstr (text, "Plan mode has ended"));
    g_assert_nonnull (strstr (text, "approved going ahead"));
    g_assert_nonnull (strstr (text, "Ask mode is on"));
    g_assert_null (strstr (text, "Plan mode is on"));
    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==,
                     "Go ahead");
  }

  /* system and tools never change with the mode. */
  tools1 = node_to_string (json_object_get_member (first, "tools"));
  tools3 = node_to_string (json_object_get_member (third, "tools"));
  system1 = node_to_string (json_object_get_member (first, "system"));
  system3 = node_to_string (json_object_get_member (third, "system"));
  g_assert_cmpstr (tools1, ==, tools3);
  g_assert_cmpstr (system1, ==, system3);

  fixture_stop (&f);
}

/* A model missing from the price table gets no made-up cost. */
static void
test_unknown_price (void)
{
  Fixture f = { 0 };
  JsonObject *finished;

  fixture_start (&f,
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}");
  tally_agent_set_model (f.agent, "claude-imaginary-9");
  run_turn (&f, "Hello", TALLY_MODE_ASK, FALSE);
  finished = last_event (&f);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (finished, "cost_usd")));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (finished, "usage"), "input_tokens"), >, 0);
  fixture_stop (&f);
}

/* A cut inside a tool_use input: no tool runs, no tool events, failed turn. */
static void
test_cut_inside_tool_input (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonArray) requests = NULL;

  fixture_start (&f,
    "{\"responses\":[{\"message\":{\"content\":["
    "{\"type\":\"text\",\"text\":\"Let me query.\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_Cut\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT Name FROM Genre ORDER BY Name LIMIT 20\"}}"
    "],\"stop_reason\":\"tool_use\",\"chunk\":4},\"cut_after_bytes\":1500}]}");
  run_turn (&f, "List genres", TALLY_MODE_ASK, FALSE);

  g_assert_cmpint (f.status, ==, TALLY_TURN_FAILED);
  g_assert_cmpuint (count_events (&f, "tool_use_start"), ==, 0);
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 0);
  g_assert_cmpuint (count_events (&f, "error"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "error", 0), "kind"), ==, "network");
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 1);
  g_assert_cmpuint (tally_conversation_get_n_messages (tally_agent_get_conversation (f.agent)), ==, 1);
  fixture_stop (&f);
}

/* The model repeats a tool_use id, within one message and in a later one:
 * the repeated calls never run, they are answered under a fresh id, and
 * every request (the mock checks the history like the API) is accepted,
 * in this turn and the next. */
static void
test_duplicate_tool_ids (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;
  g_autofree char *history = NULL;
  JsonObject *start;
  JsonObject *result;
  JsonArray *messages;
  guint ran = 0;

  fixture_start (&f,
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_D1\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT COUNT(*) AS n FROM Genre\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_D1\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT 'second' AS s\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_D1\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT 'third' AS s\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"There are 25 genres.\"}],\"stop_reason\":\"end_turn\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Still here.\"}],\"stop_reason\":\"end_turn\"}}]}");

  run_turn (&f, "How many genres?", TALLY_MODE_ASK, FALSE);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 3);
  g_assert_cmpuint (count_events (&f, "error"), ==, 0);

  /* Three calls announced, each with an id of its own. */
  g_assert_cmpuint (count_events (&f, "tool_use_start"), ==, 3);
  start = find_event (&f, "tool_use_start", 0);
  g_assert_cmpstr (json_object_get_string_member (start, "tool_id"), ==, "toolu_D1");
  g_assert_false (json_object_has_member (start, "duplicate_of"));
  start = find_event (&f, "tool_use_start", 1);
  g_assert_cmpstr (json_object_get_string_member (start, "tool_id"), ==, "toolu_D1_dup1");
  g_assert_cmpstr (json_object_get_string_member (start, "duplicate_of"), ==, "toolu_D1");
  start = find_event (&f, "tool_use_start", 2);
  g_assert_cmpstr (json_object_get_string_member (start, "tool_id"), ==, "toolu_D1_dup2");
  g_assert_cmpstr (json_object_get_string_member (start, "duplicate_of"), ==, "toolu_D1");

  /* Only the first ran; the others were refused with a reason. */
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 3);
  for (guint i = 0; i < 3; i++)
    if (!json_object_get_boolean_member (find_event (&f, "tool_result", i), "is_error"))
      ran++;
  g_assert_cmpuint (ran, ==, 1);
  result = find_event (&f, "tool_result", 0);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_D1");
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "25"));
  result = find_event (&f, "tool_result", 1);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_D1_dup1");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "reused the id “toolu_D1”"));
  g_assert_null (strstr (json_object_get_string_member (result, "content"), "second"));
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 1), "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 1), "tool_id"), ==, "toolu_D1_dup1");
  result = find_event (&f, "tool_result", 2);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_D1_dup2");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));

  /* The history sent keeps the model's inputs and renames only the id. */
  body = request_body (&f, 2);
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 5);
  history = tally_conversation_dup_messages_json (tally_agent_get_conversation (f.agent));
  g_assert_nonnull (strstr (history, "{\"type\":\"tool_use\",\"id\":\"toolu_D1_dup1\",\"name\":\"query_database\","
                                     "\"input\":{\"sql\":\"SELECT 'second' AS s\"}}"));
  g_assert_nonnull (strstr (history, "\"tool_use_id\":\"toolu_D1_dup2\""));

  /* The session stays usable. */
  run_turn (&f, "Thanks", TALLY_MODE_ASK, FALSE);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 4);

  fixture_stop (&f);
}

/* One streamed tool_use content block whose input arrives as a single
 * input_json_delta; @partial is the delta's partial_json as a JSON string
 * literal. */
#define STREAMED_TOOL_USE(index, id, name, partial) \
    "{\"event\":\"content_block_start\",\"data\":{\"type\":\"content_block_start\",\"index\":" index "," \
    "\"content_block\":{\"type\":\"tool_use\",\"id\":\"" id "\",\"name\":\"" name "\",\"input\":{}}}}," \
    "{\"event\":\"content_block_delta\",\"data\":{\"type\":\"content_block_delta\",\"index\":" index "," \
    "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" partial "}}}," \
    "{\"event\":\"content_block_stop\",\"data\":{\"type\":\"content_block_stop\",\"index\":" index "}},"

/* A mock scenario of two responses: a streamed message of @blocks
 * (STREAMED_TOOL_USE()s) that stops for tool_use, then a final @text. */
#define TOOL_USES_THEN_TEXT(message_id, blocks, text) \
    "{\"responses\":[" \
    "{\"events\":[" \
    "{\"event\":\"message_start\",\"data\":{\"type\":\"message_start\",\"message\":{\"id\":\"" message_id "\"," \
    "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-5\",\"stop_reason\":null," \
    "\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}}," \
    blocks \
    "{\"event\":\"message_delta\",\"data\":{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"," \
    "\"stop_sequence\":null},\"usage\":{\"output_tokens\":20}}}," \
    "{\"event\":\"message_stop\",\"data\":{\"type\":\"message_stop\"}}]}," \
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"" text "\"}],\"stop_reason\":\"end_turn\"}}]}"

/* Tool inputs that are JSON but not objects (an array, null, a string) are
 * the model's mistake: each call gets an is_error result that says what
 * arrived, the history echoes {} and the loop goes on. */
static void
test_non_object_tool_input (void)
{
  Fixture f = { 0 };
  g_autoptr(JsonObject) body = NULL;
  JsonArray *messages;
  JsonArray *content;
  JsonObject *result;
  JsonObject *block;

  fixture_start (&f, TOOL_USES_THEN_TEXT ("msg_bad",
                                          STREAMED_TOOL_USE ("0", "toolu_Arr", "query_database", "\"[\\\"SELECT 1\\\"]\"")
                                          STREAMED_TOOL_USE ("1", "toolu_Null", "query_database", "\"null\"")
                                          STREAMED_TOOL_USE ("2", "toolu_Str", "query_database", "\"\\\"SELECT 2\\\"\""),
                                          "I will pass an object next time."));

  run_turn (&f, "Count something", TALLY_MODE_ASK, FALSE);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (count_events (&f, "error"), ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 2);
  g_assert_cmpuint (count_events (&f, "tool_use_start"), ==, 3);
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 3);

  result = find_event (&f, "tool_result", 0);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_Arr");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==,
                   "The input of query_database must be a JSON object with named arguments, but it was an "
                   "array: [\"SELECT 1\"]. The call did not run; call the tool again with an object as its input.");
  result = find_event (&f, "tool_result", 1);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "but it was null: null."));
  result = find_event (&f, "tool_result", 2);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "but it was a string: \"SELECT 2\"."));
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "decision"), ==, "deny");

  /* The echoed calls carry {} and are answered first in the next message. */
  body = request_body (&f, 1);
  messages = json_object_get_array_member (body, "messages");
  content = json_object_get_array_member (json_array_get_object_element (messages, 1), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 3);
  block = json_array_get_object_element (content, 0);
  g_assert_cmpstr (json_object_get_string_member (block, "id"), ==, "toolu_Arr");
  g_assert_cmpuint (json_object_get_size (json_object_get_object_member (block, "input")), ==, 0);
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 2), "tool_use_id"), ==, "toolu_Str");

  fixture_stop (&f);
}

/* A call whose input breaks its tool's schema is refused before the gate:
 * no approval card (whose "always" offer could not name a file), a denial
 * recorded as a rule's, and an is_error result that says what was wrong
 * (docs/security.md, "Tool input"). */
static void
test_schema_refused_before_card (void)
{
  Fixture f = { 0 };
  JsonObject *result;
  JsonObject *resolved;

  fixture_start (&f, TOOL_USES_THEN_TEXT ("msg_schema",
                                          STREAMED_TOOL_USE ("0", "toolu_W", "Write",
                                                             "\"{\\\"file_path\\\":[\\\"a\\\"],\\\"content\\\":\\\"x\\\"}\"")
                                          STREAMED_TOOL_USE ("1", "toolu_E", "Edit",
                                                             "\"{\\\"file_path\\\":\\\"\\\",\\\"old_string\\\":\\\"a\\\","
                                                             "\\\"new_string\\\":\\\"b\\\"}\"")
                                          STREAMED_TOOL_USE ("2", "toolu_C", "create_chart",
                                                             "\"{\\\"spec\\\":\\\"bar chart\\\"}\""),
                                          "I will name the file next time."));

  run_turn (&f, "Write the report", TALLY_MODE_ASK, FALSE);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 2);
  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 0);
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 3);
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 3);

  result = find_event (&f, "tool_result", 0);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_W");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==,
                   "The input of Write does not match the tool's input schema: `file_path` must be a string, "
                   "not an array. The call did not run; call Write again with an input that matches the schema.");
  result = find_event (&f, "tool_result", 1);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_E");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "`file_path` must not be empty."));
  /* A tool's own guidance follows the schema's verdict. */
  result = find_event (&f, "tool_result", 2);
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"),
                            "`spec` must be an object, not a string. The call did not run; call create_chart "
                            "again with an input that matches the schema. Supported: mark bar, line,"));

  resolved = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "rule");
  /* No card was shown: the decision names none. */
  g_assert_true (json_object_has_member (resolved, "approval_id"));
  g_assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (resolved, "approval_id")));

  fixture_stop (&f);
}

/* ExitPlanMode checks its own input: a plan that is not a string is
 * refused saying what arrived, with no critical and no plan shown. */
static void
test_plan_not_a_string (void)
{
  Fixture f = { 0 };
  JsonObject *result;

  fixture_start (&f, TOOL_USES_THEN_TEXT ("msg_plan",
                                          STREAMED_TOOL_USE ("0", "toolu_P", "ExitPlanMode",
                                                             "\"{\\\"plan\\\":[\\\"Query\\\"]}\""),
                                          "I will write the plan as text."));

  run_turn (&f, "Plan the report", TALLY_MODE_PLAN, FALSE);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (count_events (&f, "plan_proposed"), ==, 0);
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 0);
  result = find_event (&f, "tool_result", 0);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==,
                   "ExitPlanMode needs “plan”: the plan as Markdown, a string that is not blank (it was an "
                   "array). Nothing was shown to the analyst.");

  fixture_stop (&f);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/agent/text-reply", test_text_reply);
  g_test_add_func ("/tally/agent/tool-loop-chinook", test_tool_loop_chinook);
  g_test_add_func ("/tally/agent/request-shape", test_request_shape);
  g_test_add_func ("/tally/agent/thinking-forms", test_thinking_forms);
  g_test_add_func ("/tally/agent/thinking-off-omitted", test_thinking_off_omitted);
  g_test_add_func ("/tally/agent/tool-errors", test_tool_errors);
  g_test_add_func ("/tally/agent/failure-keeps-history-valid", test_failure_keeps_history_valid);
  g_test_add_func ("/tally/agent/cancel-during-tool", test_cancel_during_tool);
  g_test_add_func ("/tally/agent/cancel-during-grep", test_cancel_during_grep);
  g_test_add_func ("/tally/agent/mode-reminders", test_mode_reminders);
  g_test_add_func ("/tally/agent/unknown-price", test_unknown_price);
  g_test_add_func ("/tally/agent/cut-inside-tool-input", test_cut_inside_tool_input);
  g_test_add_func ("/tally/agent/duplicate-tool-ids", test_duplicate_tool_ids);
  g_test_add_func ("/tally/agent/non-object-tool-input", test_non_object_tool_input);
  g_test_add_func ("/tally/agent/schema-refused-before-card", test_schema_refused_before_card);
  g_test_add_func ("/tally/agent/plan-not-a-string", test_plan_not_a_string);

  return g_test_run ();
}
