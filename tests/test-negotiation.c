/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Negotiation in the core: the gate's order, approval decisions, timeouts
 * and cancels that resolve closed, plan mode and plans, structured
 * questions, redirects — against the mock Messages API, asserting what the
 * model is sent. */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "tally-event.h"
#include "tally-questions.h"
#include "tally-session.h"
#include "tally-store.h"
#include "tally-test-mock.h"
#include "tally-test-util.h"

typedef void (*CardFunc) (TallyAgent *agent, JsonObject *event, gpointer data);

typedef struct {
  TallyTestMock     *mock;
  TallyClient       *client;
  TallyToolRegistry *tools;
  TallyStore        *store;
  TallySession      *session;
  TallyAgent        *agent;
  GPtrArray         *events;
  GMainLoop         *loop;
  GCancellable      *cancellable;
  TallyTurnStatus    status;
  char              *dir;
  char              *workspace;
  CardFunc           on_card;
  gpointer           card_data;
  gboolean           cancel_on_card;
} Fixture;

static void
event_cb (TallyAgent *agent,
          JsonObject *event,
          Fixture    *f)
{
  const char *type = tally_event_get_type_name (event);

  g_ptr_array_add (f->events, json_object_ref (event));

  if (g_str_equal (type, "approval_request") || g_str_equal (type, "question_request"))
    {
      if (f->cancel_on_card)
        g_cancellable_cancel (f->cancellable);
      else if (f->on_card != NULL)
        f->on_card (agent, event, f->card_data);
    }
}

static void
fixture_start (Fixture    *f,
               const char *scenario)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *store_path = NULL;
  g_autofree char *chinook = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);

  memset (f, 0, sizeof *f);
  f->dir = g_dir_make_tmp ("tally-negotiation-XXXXXX", &error);
  g_assert_no_error (error);
  f->workspace = g_build_filename (f->dir, "ws", NULL);
  g_assert_cmpint (g_mkdir (f->workspace, 0755), ==, 0);
  store_path = g_build_filename (f->dir, "tally.db", NULL);

  f->mock = tally_test_mock_start (scenario, &error);
  g_assert_no_error (error);
  f->client = tally_client_new (tally_test_mock_get_base_url (f->mock), "sk-test-key");
  f->tools = tally_tool_registry_new_default ();
  f->store = tally_store_open (store_path, &error);
  g_assert_no_error (error);
  f->session = tally_session_new (f->store, f->client, f->tools);
  f->agent = tally_session_get_agent (f->session);
  tally_agent_set_database (f->agent, chinook);
  tally_agent_set_workspace (f->agent, f->workspace);
  f->events = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  f->loop = g_main_loop_new (NULL, FALSE);
  f->cancellable = g_cancellable_new ();
  g_signal_connect (f->agent, "event", G_CALLBACK (event_cb), f);
}

static void
fixture_stop (Fixture *f)
{
  tally_test_mock_free (f->mock);
  g_clear_object (&f->session);
  g_clear_object (&f->store);
  g_clear_object (&f->tools);
  g_clear_object (&f->client);
  g_clear_pointer (&f->events, g_ptr_array_unref);
  g_clear_pointer (&f->loop, g_main_loop_unref);
  g_clear_object (&f->cancellable);
  tally_test_rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->workspace);
}

static void
sent_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Fixture *f = user_data;

  f->status = tally_session_send_finish (TALLY_SESSION (object), result, NULL);
  g_main_loop_quit (f->loop);
}

static void
run_turn (Fixture    *f,
          const char *text,
          TallyMode   mode)
{
  g_cancellable_reset (f->cancellable);
  tally_session_send_async (f->session, &(TallyTurnRequest) { .text = text, .mode = mode },
                            f->cancellable, sent_cb, f);
  g_main_loop_run (f->loop);
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

static guint
count_events (Fixture    *f,
              const char *type)
{
  guint n = 0;

  while (find_event (f, type, n) != NULL)
    n++;
  return n;
}

static JsonObject *
request_body (Fixture *f,
              guint    n)
{
  g_autoptr(JsonArray) requests = tally_test_mock_dup_requests (f->mock);
  JsonObject *request;

  g_assert_cmpuint (json_array_get_length (requests), >, n);
  request = json_array_get_object_element (requests, n);
  g_assert_cmpint (json_object_get_int_member (request, "status"), ==, 200);
  return json_object_ref (json_object_get_object_member (request, "body"));
}

/* The content of the newest user message of request n. */
static JsonArray *
last_user_content (Fixture *f,
                   guint    n)
{
  g_autoptr(JsonObject) body = request_body (f, n);
  JsonArray *messages = json_object_get_array_member (body, "messages");
  JsonObject *last = json_array_get_object_element (messages, json_array_get_length (messages) - 1);

  g_assert_cmpstr (json_object_get_string_member (last, "role"), ==, "user");
  return json_array_ref (json_object_get_array_member (last, "content"));
}

static char *
tool_use_json (const char *id,
               const char *name,
               const char *input_json)
{
  return g_strdup_printf ("{\"type\":\"tool_use\",\"id\":\"%s\",\"name\":\"%s\",\"input\":%s}", id, name, input_json);
}

/* A scenario: first reply calls the given tools, then a closing text. */
static char *
scenario_calls (const char *tool_uses_json,
                guint       n_closing)
{
  GString *s = g_string_new ("{\"responses\":[{\"message\":{\"content\":[");

  g_string_append (s, tool_uses_json);
  g_string_append (s, "],\"stop_reason\":\"tool_use\"}}");
  for (guint i = 0; i < n_closing; i++)
    g_string_append (s, ",{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}],\"stop_reason\":\"end_turn\"}}");
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

typedef struct {
  TallyDecision decision;
  const char   *edited;
  const char   *message;
  gboolean      take_first_suggestion;
} Answer;

static void
resolve_cb (TallyAgent *agent,
            JsonObject *event,
            gpointer    data)
{
  Answer *answer = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) edited = NULL;
  const char *rule = NULL;
  const char *scope = NULL;

  g_assert_cmpstr (tally_event_get_type_name (event), ==, "approval_request");
  if (answer->edited != NULL)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, answer->edited, -1, NULL));
      edited = json_object_ref (json_node_get_object (json_parser_get_root (parser)));
    }
  if (answer->take_first_suggestion)
    {
      JsonObject *first = json_array_get_object_element (json_object_get_array_member (event, "suggestions"), 0);
      rule = json_object_get_string_member (first, "rule");
      scope = json_object_get_string_member (first, "scope");
    }

  g_assert_true (tally_agent_resolve_approval (agent, json_object_get_string_member (event, "approval_id"),
                                               &(TallyApprovalAnswer) {
                                                 .decision = answer->decision, .updated_input = edited,
                                                 .rule = rule, .scope = scope, .message = answer->message,
                                               },
                                               &error));
  g_assert_no_error (error);
}

/* Bash asks in ask mode; "Allow once" runs it. */
static void
test_allow_once (void)
{
  g_autofree char *use = tool_use_json ("toolu_B1", "Bash", "{\"command\":\"echo hello from bash\"}");
  g_autofree char *scenario = scenario_calls (use, 1);
  Fixture f;
  Answer answer = { TALLY_DECISION_ALLOW };
  JsonObject *request;
  JsonObject *resolved;
  JsonObject *result;
  JsonArray *suggestions;

  fixture_start (&f, scenario);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  run_turn (&f, "Say hello", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  request = find_event (&f, "approval_request", 0);
  g_assert_nonnull (request);
  g_assert_cmpstr (json_object_get_string_member (request, "tool_name"), ==, "Bash");
  suggestions = json_object_get_array_member (request, "suggestions");
  g_assert_cmpuint (json_array_get_length (suggestions), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 0), "rule"), ==,
                   "Bash(echo hello from bash)");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 1), "rule"), ==,
                   "Bash(echo hello:*)");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 0), "scope"), ==,
                   "workspace");

  resolved = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "approval_id"), ==,
                   json_object_get_string_member (request, "approval_id"));
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "allow");
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "user");
  g_assert_cmpstr (json_object_get_string_member (resolved, "tool_id"), ==, "toolu_B1");

  result = find_event (&f, "tool_result", 0);
  g_assert_false (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "hello from bash"));
  fixture_stop (&f);
}

/* "Allow with changes": the edited input runs; history keeps the model's. */
static void
test_allow_edited (void)
{
  g_autofree char *use = tool_use_json ("toolu_E1", "Bash", "{\"command\":\"rm -rf everything\"}");
  g_autofree char *scenario = scenario_calls (use, 1);
  Fixture f;
  Answer answer = { TALLY_DECISION_ALLOW_EDITED, "{\"command\":\"echo edited instead\"}" };
  g_autoptr(JsonObject) body = NULL;
  JsonObject *assistant_use;
  JsonObject *resolved;

  fixture_start (&f, scenario);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  run_turn (&f, "Clean up", TALLY_MODE_ASK);

  resolved = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "allow_edited");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (resolved, "updated_input"), "command"),
                   ==, "echo edited instead");
  g_assert_nonnull (strstr (json_object_get_string_member (find_event (&f, "tool_result", 0), "content"),
                            "edited instead"));

  body = request_body (&f, 1);
  assistant_use = json_array_get_object_element (
    json_object_get_array_member (json_array_get_object_element (json_object_get_array_member (body, "messages"), 1),
                                  "content"), 0);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (assistant_use, "input"), "command"),
                   ==, "rm -rf everything");
  fixture_stop (&f);
}

/* "Always allow" keeps the exact rule; the next identical call runs by rule,
 * in this turn and in a later session on the same store and workspace. */
static void
test_always_allow_persists (void)
{
  g_autofree char *use1 = tool_use_json ("toolu_A1", "Bash", "{\"command\":\"echo ok\"}");
  g_autofree char *use2 = tool_use_json ("toolu_A2", "Bash", "{\"command\":\"echo ok\"}");
  g_autofree char *uses = g_strdup_printf ("%s,%s", use1, use2);
  g_autofree char *scenario = NULL;
  Fixture f;
  Answer answer = { TALLY_DECISION_ALLOW_ALWAYS, NULL, NULL, TRUE };
  g_autoptr(GPtrArray) rules = NULL;
  JsonObject *first;
  JsonObject *second;

  scenario = g_strdup_printf ("{\"responses\":[{\"message\":{\"content\":[%s],\"stop_reason\":\"tool_use\"}},"
                              "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}],\"stop_reason\":\"end_turn\"}},"
                              "{\"message\":{\"content\":[%s],\"stop_reason\":\"tool_use\"}},"
                              "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}],\"stop_reason\":\"end_turn\"}}]}",
                              uses, use1);
  fixture_start (&f, scenario);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  run_turn (&f, "Check twice", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 1);
  first = find_event (&f, "approval_resolved", 0);
  second = find_event (&f, "approval_resolved", 1);
  g_assert_cmpstr (json_object_get_string_member (first, "decision"), ==, "allow_always");
  g_assert_cmpstr (json_object_get_string_member (first, "rule"), ==, "Bash(echo ok)");
  g_assert_cmpstr (json_object_get_string_member (first, "scope"), ==, "workspace");
  g_assert_cmpstr (json_object_get_string_member (second, "decision"), ==, "allow");
  g_assert_cmpstr (json_object_get_string_member (second, "reason"), ==, "rule");
  g_assert_cmpstr (json_object_get_string_member (second, "rule"), ==, "Bash(echo ok)");

  g_assert_true (tally_store_flush (f.store, NULL));
  rules = tally_store_list_rules (f.store, tally_agent_get_workspace (f.agent), NULL);
  g_assert_cmpuint (rules->len, ==, 1);
  g_assert_cmpstr (((TallyRule *)g_ptr_array_index (rules, 0))->pattern, ==, "Bash(echo ok)");

  /* A new session in the same workspace asks nothing. */
  g_clear_object (&f.session);
  f.session = tally_session_new (f.store, f.client, f.tools);
  f.agent = tally_session_get_agent (f.session);
  tally_agent_set_workspace (f.agent, f.workspace);
  g_signal_connect (f.agent, "event", G_CALLBACK (event_cb), &f);
  g_ptr_array_set_size (f.events, 0);
  f.on_card = NULL;
  run_turn (&f, "Once more", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "reason"), ==, "rule");
  fixture_stop (&f);
}

/* Deny: the analyst's message verbatim; without one, a non-empty default. */
static void
test_deny_messages (void)
{
  g_autofree char *use1 = tool_use_json ("toolu_D1", "Bash", "{\"command\":\"curl example.org\"}");
  g_autofree char *scenario1 = scenario_calls (use1, 1);
  Fixture f;
  Answer with_message = { TALLY_DECISION_DENY, NULL, "Use the database instead, not the network." };
  Answer without = { TALLY_DECISION_DENY, NULL, NULL };
  g_autoptr(JsonArray) content = NULL;
  JsonObject *result;

  fixture_start (&f, scenario1);
  f.on_card = resolve_cb;
  f.card_data = &with_message;
  run_turn (&f, "Fetch it", TALLY_MODE_ASK);
  result = find_event (&f, "tool_result", 0);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "Use the database instead, not the network.");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "message"), ==,
                   "Use the database instead, not the network.");
  content = last_user_content (&f, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "content"), ==,
                   "Use the database instead, not the network.");
  g_assert_true (json_object_get_boolean_member (json_array_get_object_element (content, 0), "is_error"));
  fixture_stop (&f);

  fixture_start (&f, scenario1);
  f.on_card = resolve_cb;
  f.card_data = &without;
  run_turn (&f, "Fetch it", TALLY_MODE_ASK);
  result = find_event (&f, "tool_result", 0);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_cmpuint (strlen (json_object_get_string_member (result, "content")), >, 20);
  fixture_stop (&f);
}

/* Deny and stop answers every pending call and ends the turn. */
static void
test_deny_and_stop (void)
{
  g_autofree char *use1 = tool_use_json ("toolu_S1", "Bash", "{\"command\":\"make all\"}");
  g_autofree char *use2 = tool_use_json ("toolu_S2", "Bash", "{\"command\":\"make install\"}");
  g_autofree char *uses = g_strdup_printf ("%s,%s", use1, use2);
  g_autofree char *scenario = scenario_calls (uses, 1);
  Fixture f;
  Answer answer = { TALLY_DECISION_DENY_STOP, NULL, "Stop building." };

  fixture_start (&f, scenario);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  run_turn (&f, "Build", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_CANCELLED);
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 2);
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 2);
  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 1);
  g_assert_true (json_object_get_boolean_member (find_event (&f, "approval_resolved", 0), "stop"));
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "tool_result", 0), "content"), ==, "Stop building.");
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 1);
  fixture_stop (&f);
}

/* A timeout denies; a cancel resolves the pending card; neither runs. */
static void
test_timeout_and_cancel_resolve_closed (void)
{
  g_autofree char *use = tool_use_json ("toolu_T1", "Write", "{\"file_path\":\"out.txt\",\"content\":\"x\"}");
  g_autofree char *scenario = scenario_calls (use, 1);
  g_autofree char *target = NULL;
  Fixture f;
  JsonObject *resolved;

  fixture_start (&f, scenario);
  target = g_build_filename (f.workspace, "out.txt", NULL);
  tally_agent_set_timeouts (f.agent, 1, 1);
  run_turn (&f, "Write it", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  resolved = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "timeout");
  g_assert_nonnull (strstr (json_object_get_string_member (find_event (&f, "tool_result", 0), "content"), "guess"));
  g_assert_false (g_file_test (target, G_FILE_TEST_EXISTS));
  fixture_stop (&f);

  fixture_start (&f, scenario);
  g_free (target);
  target = g_build_filename (f.workspace, "out.txt", NULL);
  f.cancel_on_card = TRUE;
  run_turn (&f, "Write it", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_CANCELLED);
  resolved = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "cancel");
  g_assert_cmpuint (count_events (&f, "tool_result"), ==, 1);
  g_assert_false (g_file_test (target, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 1);
  fixture_stop (&f);
}

/* Plan mode: reads run, writes are refused without asking, ExitPlanMode
 * becomes a versioned plan; refinements keep the plan id. */
static void
test_plan_mode (void)
{
  Fixture f;
  JsonObject *denied;
  JsonObject *plan1;
  JsonObject *plan2;
  g_autoptr(JsonArray) content = NULL;
  g_autofree char *target = NULL;
  const char *scenario =
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_P1\",\"name\":\"get_schema\",\"input\":{\"table\":\"Genre\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_P2\",\"name\":\"Write\",\"input\":{\"file_path\":\"report.md\",\"content\":\"# R\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_P3\",\"name\":\"ExitPlanMode\",\"input\":{\"plan\":\"# Plan\\n1. Query genres\\n2. Write report.md\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"The plan is ready for you.\"}],\"stop_reason\":\"end_turn\"}},"
    "{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_P4\",\"name\":\"ExitPlanMode\",\"input\":{\"plan\":\"# Plan\\n1. Query genres\\n2. Chart\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Updated.\"}],\"stop_reason\":\"end_turn\"}}]}";

  fixture_start (&f, scenario);
  target = g_build_filename (f.workspace, "report.md", NULL);
  run_turn (&f, "Plan a genre report", TALLY_MODE_PLAN);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "decision"), ==, "allow");
  denied = find_event (&f, "approval_resolved", 1);
  g_assert_cmpstr (json_object_get_string_member (denied, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (denied, "reason"), ==, "mode");
  g_assert_nonnull (strstr (json_object_get_string_member (find_event (&f, "tool_result", 1), "content"),
                            "Plan mode is on"));
  g_assert_false (g_file_test (target, G_FILE_TEST_EXISTS));
  /* The card-backed tool gets no approval_resolved. */
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 2);

  plan1 = find_event (&f, "plan_proposed", 0);
  g_assert_cmpint (json_object_get_int_member (plan1, "version"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (plan1, "markdown"), ==, "# Plan\n1. Query genres\n2. Write report.md");
  g_assert_nonnull (strstr (json_object_get_string_member (find_event (&f, "tool_result", 2), "content"),
                            "with the analyst"));
  content = last_user_content (&f, 1);
  g_assert_cmpuint (json_array_get_length (content), ==, 3);

  run_turn (&f, "Add a chart instead of the report", TALLY_MODE_PLAN);
  plan2 = find_event (&f, "plan_proposed", 1);
  g_assert_cmpint (json_object_get_int_member (plan2, "version"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (plan2, "plan_id"), ==, json_object_get_string_member (plan1, "plan_id"));
  g_assert_cmpint (tally_session_get_mode (f.session), ==, TALLY_MODE_PLAN);

  {
    g_autoptr(GPtrArray) versions = NULL;

    g_assert_true (tally_store_flush (f.store, NULL));
    versions = tally_store_load_plan_versions (f.store, json_object_get_string_member (plan1, "plan_id"), NULL);
    g_assert_cmpuint (versions->len, ==, 2);
  }
  fixture_stop (&f);
}

/* Auto mode runs edits inside the workspace; outside it always asks. */
static void
test_auto_mode_and_outside_paths (void)
{
  Fixture f;
  g_autofree char *outside_dir = g_dir_make_tmp ("tally-outside-XXXXXX", NULL);
  g_autofree char *outside_file = g_build_filename (outside_dir, "notes.txt", NULL);
  g_autofree char *inside_file = NULL;
  g_autofree char *use_in = tool_use_json ("toolu_W1", "Write", "{\"file_path\":\"notes/in.txt\",\"content\":\"inside\"}");
  g_autofree char *use_out = NULL;
  g_autofree char *uses = NULL;
  g_autofree char *scenario = NULL;
  g_autofree char *content = NULL;
  Answer answer = { TALLY_DECISION_ALLOW };
  JsonObject *request;

  use_out = g_strdup_printf ("{\"type\":\"tool_use\",\"id\":\"toolu_W2\",\"name\":\"Write\",\"input\":"
                             "{\"file_path\":\"%s\",\"content\":\"outside\"}}", outside_file);
  uses = g_strdup_printf ("%s,%s", use_in, use_out);
  scenario = scenario_calls (uses, 1);

  fixture_start (&f, scenario);
  inside_file = g_build_filename (f.workspace, "notes", "in.txt", NULL);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  run_turn (&f, "Write notes", TALLY_MODE_AUTO);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 0), "reason"), ==, "mode");
  g_assert_true (g_file_get_contents (inside_file, &content, NULL, NULL));
  g_assert_cmpstr (content, ==, "inside");
  g_clear_pointer (&content, g_free);

  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 1);
  request = find_event (&f, "approval_request", 0);
  g_assert_cmpstr (json_object_get_string_member (request, "tool_id"), ==, "toolu_W2");
  g_assert_true (json_object_get_boolean_member (request, "outside_workspace"));
  g_assert_true (g_file_get_contents (outside_file, &content, NULL, NULL));
  g_assert_cmpstr (content, ==, "outside");

  g_unlink (outside_file);
  g_rmdir (outside_dir);
  fixture_stop (&f);
}

/* Read, Glob and Grep on a path outside the workspace always ask; an
 * explicit Allow runs them there, a Deny keeps them out. */
static void
run_outside_read (TallyDecision decision,
                  gboolean      expect_ran)
{
  Fixture f;
  g_autofree char *outside_dir = g_dir_make_tmp ("tally-outside-XXXXXX", NULL);
  g_autofree char *outside_file = g_build_filename (outside_dir, "q3.csv", NULL);
  g_autofree char *uses = NULL;
  g_autofree char *scenario = NULL;
  Answer answer = { decision };
  const char *tools[] = { "Read", "Glob", "Grep" };

  g_assert_true (g_file_set_contents (outside_file, "store,revenue\nLeeds,4200\n", -1, NULL));
  uses = g_strdup_printf (
    "{\"type\":\"tool_use\",\"id\":\"toolu_O1\",\"name\":\"Read\",\"input\":{\"file_path\":\"%s\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_O2\",\"name\":\"Glob\",\"input\":{\"pattern\":\"*.csv\",\"path\":\"%s\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_O3\",\"name\":\"Grep\",\"input\":{\"pattern\":\"Leeds\",\"path\":\"%s\"}}",
    outside_file, outside_dir, outside_dir);
  scenario = scenario_calls (uses, 1);

  fixture_start (&f, scenario);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  /* Auto mode would run them without a card inside the workspace. */
  run_turn (&f, "Compare with my Q3 export", TALLY_MODE_AUTO);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      JsonObject *request = find_event (&f, "approval_request", i);
      JsonObject *result = find_event (&f, "tool_result", i);
      const char *content = json_object_get_string_member (result, "content");

      g_assert_cmpstr (json_object_get_string_member (request, "tool_name"), ==, tools[i]);
      g_assert_true (json_object_get_boolean_member (request, "outside_workspace"));
      g_assert_cmpint (json_object_get_boolean_member (result, "is_error"), ==, !expect_ran);
      if (!expect_ran)
        {
          g_assert_null (strstr (content, "Leeds,4200"));
          continue;
        }
      g_assert_null (strstr (content, "outside the workspace"));
      if (i == 0)
        g_assert_nonnull (strstr (content, "2\tLeeds,4200"));
      else if (i == 1)
        {
          g_autofree char *line = g_strconcat (outside_file, "\n", NULL);
          g_assert_cmpstr (content, ==, line);
        }
      else
        g_assert_nonnull (strstr (content, ":2:Leeds,4200"));
    }

  g_unlink (outside_file);
  g_rmdir (outside_dir);
  fixture_stop (&f);
}

static void
test_outside_read_tools (void)
{
  run_outside_read (TALLY_DECISION_ALLOW, TRUE);
  run_outside_read (TALLY_DECISION_DENY, FALSE);
}

/* Deny rules win over the mode; allow rules never open the outside. */
static void
test_rules_order (void)
{
  g_autofree char *use1 = tool_use_json ("toolu_R1", "Bash", "{\"command\":\"rm -rf data\"}");
  g_autofree char *use2 = tool_use_json ("toolu_R2", "query_database", "{\"sql\":\"SELECT 1\"}");
  g_autofree char *uses = g_strdup_printf ("%s,%s", use1, use2);
  g_autofree char *scenario = scenario_calls (uses, 1);
  Fixture f;
  JsonObject *first;

  fixture_start (&f, scenario);
  g_assert_cmpint (tally_store_add_rule (f.store, "Bash(rm:*)", "deny", "global", NULL, NULL), >, 0);
  g_assert_cmpint (tally_store_add_rule (f.store, "query_database", "deny", "workspace", f.workspace, NULL), >, 0);
  g_assert_true (tally_store_flush (f.store, NULL));
  run_turn (&f, "Tidy", TALLY_MODE_AUTO);

  g_assert_cmpuint (count_events (&f, "approval_request"), ==, 0);
  first = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (first, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (first, "reason"), ==, "rule");
  g_assert_cmpstr (json_object_get_string_member (first, "rule"), ==, "Bash(rm:*)");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "approval_resolved", 1), "rule"), ==, "query_database");
  fixture_stop (&f);
}

/* A command rule is a command, not a prefix of a string (issue 10, item 1):
 * "Bash(ls:*)" runs a plain `ls -la` without a card, but `ls && touch …`,
 * `ls; …`, `ls | sh`, `ls $(…)`, backticks, `ls > file` and a newline after
 * `ls` all go to a card (denied here, so none of them runs), with no
 * "always allow" offer; a deny rule still finds `rm` inside `ls; rm …`. */
static void
test_command_rules (void)
{
  static const char *const compound[] = {
    "ls && touch pwned1",
    "ls; touch pwned2",
    "ls | sh -c 'touch pwned3'",
    "ls $(touch pwned4)",
    "ls `touch pwned5`",
    "ls > pwned6",
    "ls\ntouch pwned7",
    "ls & touch pwned8",
  };
  g_autoptr(GString) uses = g_string_new (NULL);
  g_autofree char *scenario = NULL;
  Answer answer = { TALLY_DECISION_DENY };
  guint n = G_N_ELEMENTS (compound);
  Fixture f;
  JsonObject *resolved;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("toolu_C%u", i);
      g_autofree char *input = g_strdup_printf ("{\"command\":\"%s\"}", compound[i]);
      g_autofree char *use = tool_use_json (id, "Bash", input);

      g_string_append_printf (uses, "%s,", use);
    }
  g_string_append (uses, "{\"type\":\"tool_use\",\"id\":\"toolu_CA\",\"name\":\"Bash\",\"input\":{\"command\":\"ls -la\"}},");
  g_string_append (uses, "{\"type\":\"tool_use\",\"id\":\"toolu_CD\",\"name\":\"Bash\",\"input\":{\"command\":\"ls; rm -rf data\"}}");
  scenario = scenario_calls (uses->str, 1);

  fixture_start (&f, scenario);
  f.on_card = resolve_cb;
  f.card_data = &answer;
  g_assert_cmpint (tally_store_add_rule (f.store, "Bash(ls:*)", "allow", "workspace", f.workspace, NULL), >, 0);
  g_assert_cmpint (tally_store_add_rule (f.store, "Bash(rm:*)", "deny", "global", NULL, NULL), >, 0);
  g_assert_true (tally_store_flush (f.store, NULL));
  run_turn (&f, "Look around", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  /* Every compound command asked, and none was offered as a rule. */
  g_assert_cmpuint (count_events (&f, "approval_request"), ==, n);
  for (guint i = 0; i < n; i++)
    {
      JsonObject *request = find_event (&f, "approval_request", i);
      g_autofree char *expected = g_strcompress (compound[i]);
      g_autofree char *pwned = g_strdup_printf ("%s/pwned%u", f.workspace, i + 1);

      g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "tool_input"), "command"),
                       ==, expected);
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (request, "suggestions")), ==, 0);
      resolved = find_event (&f, "approval_resolved", i);
      g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "deny");
      g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "user");
      g_assert_false (g_file_test (pwned, G_FILE_TEST_EXISTS));
    }

  /* The simple command ran by the rule. */
  resolved = find_event (&f, "approval_resolved", n);
  g_assert_cmpstr (json_object_get_string_member (resolved, "tool_id"), ==, "toolu_CA");
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "allow");
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "rule");
  g_assert_cmpstr (json_object_get_string_member (resolved, "rule"), ==, "Bash(ls:*)");
  g_assert_false (json_object_get_boolean_member (find_event (&f, "tool_result", n), "is_error"));

  /* The deny rule found `rm` after the separator. */
  resolved = find_event (&f, "approval_resolved", n + 1);
  g_assert_cmpstr (json_object_get_string_member (resolved, "tool_id"), ==, "toolu_CD");
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "rule");
  g_assert_cmpstr (json_object_get_string_member (resolved, "rule"), ==, "Bash(rm:*)");
  fixture_stop (&f);
}

static void
answer_questions_cb (TallyAgent *agent,
                     JsonObject *event,
                     gpointer    data)
{
  g_autoptr(JsonObject) answers = json_object_new ();
  g_autoptr(GError) error = NULL;
  const char *const labels[] = { "Leeds", "York", NULL };
  g_autofree char *multi = tally_questions_join_answer (labels, "and the new Briggate store");

  json_object_set_string_member (answers, "Which period?", "March");
  json_object_set_string_member (answers, "Which cities?", multi);
  g_assert_true (tally_agent_answer_question (agent, json_object_get_string_member (event, "question_id"),
                                              answers, &error));
  g_assert_no_error (error);
}

static void
dismiss_questions_cb (TallyAgent *agent,
                      JsonObject *event,
                      gpointer    data)
{
  g_assert_true (tally_agent_answer_question (agent, json_object_get_string_member (event, "question_id"),
                                              NULL, NULL));
}

static const char *questions_input =
  "{\"questions\":["
  "{\"question\":\"Which period?\",\"header\":\"Period\",\"options\":["
  "{\"label\":\"March\",\"description\":\"Only March\"},{\"label\":\"Q1\",\"description\":\"January to March\"}]},"
  "{\"question\":\"Which cities?\",\"header\":\"Cities\",\"multiSelect\":true,\"options\":["
  "{\"label\":\"Leeds\",\"description\":\"Leeds stores\"},{\"label\":\"York\",\"description\":\"York stores\"}]}]}";

/* Questions: answers in plain words; dismissal tells the model not to guess. */
static void
test_questions (void)
{
  g_autofree char *use = tool_use_json ("toolu_Q1", "AskUserQuestion", questions_input);
  g_autofree char *scenario = scenario_calls (use, 1);
  Fixture f;
  JsonObject *request;
  JsonObject *resolved;
  const char *result;

  fixture_start (&f, scenario);
  f.on_card = answer_questions_cb;
  run_turn (&f, "Compare sales", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  request = find_event (&f, "question_request", 0);
  g_assert_cmpstr (json_object_get_string_member (request, "tool_id"), ==, "toolu_Q1");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (request, "questions")), ==, 2);
  g_assert_cmpuint (count_events (&f, "approval_resolved"), ==, 0);
  resolved = find_event (&f, "question_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "user");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (resolved, "answers"), "Which cities?"),
                   ==, "Leeds, York, and the new Briggate store");
  result = json_object_get_string_member (find_event (&f, "tool_result", 0), "content");
  g_assert_false (json_object_get_boolean_member (find_event (&f, "tool_result", 0), "is_error"));
  g_assert_nonnull (strstr (result, "“Which period?” → March"));
  g_assert_nonnull (strstr (result, "“Which cities?” → Leeds, York, and the new Briggate store"));
  fixture_stop (&f);

  fixture_start (&f, scenario);
  f.on_card = dismiss_questions_cb;
  run_turn (&f, "Compare sales", TALLY_MODE_ASK);
  resolved = find_event (&f, "question_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "reason"), ==, "dismissed");
  g_assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (resolved, "answers")));
  g_assert_true (json_object_get_boolean_member (find_event (&f, "tool_result", 0), "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (find_event (&f, "tool_result", 0), "content"),
                            "Do not assume an answer"));
  fixture_stop (&f);
}

/* Invalid question input: an is_error result naming the problem, no card. */
static void
test_invalid_questions (void)
{
  static const struct { const char *input; const char *words; } cases[] = {
    { "{\"questions\":[]}", "1 to 4 questions" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]},"
      "{\"question\":\"B?\",\"header\":\"B\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]},"
      "{\"question\":\"C?\",\"header\":\"C\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]},"
      "{\"question\":\"D?\",\"header\":\"D\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]},"
      "{\"question\":\"E?\",\"header\":\"E\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]}]}", "this call had 5" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"only\",\"description\":\"one\"}]}]}", "has 1 options" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"1\",\"description\":\"\"},{\"label\":\"2\",\"description\":\"\"},"
      "{\"label\":\"3\",\"description\":\"\"},{\"label\":\"4\",\"description\":\"\"},{\"label\":\"5\",\"description\":\"\"}]}]}", "has 5 options" },
    { "{\"questions\":[{\"question\":\"A?\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]}]}", "“header”" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"x\"},{\"label\":\"y\",\"description\":\"\"}]}]}", "“description”" },
    /* Issue 10, item 4: Tally's limits and types, each named for the model. */
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"Revenue period\",\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]}]}",
      "“header” is 14 characters long; it may have at most 12" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"March\",\"description\":\"\"},{\"label\":\"march\",\"description\":\"\"}]}]}",
      "options 1 and 2 have the same label" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"x\\ny\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]}]}",
      "“label” contains the control character U+000A" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":7,\"options\":[{\"label\":\"x\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]}]}",
      "“header” must be a string, not a number" },
    { "{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":[{\"label\":\"0123456789012345678901234567890123456789012345678901234567890\",\"description\":\"\"},{\"label\":\"y\",\"description\":\"\"}]}]}",
      "“label” is 61 characters long; it may have at most 60" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *use = tool_use_json ("toolu_QX", "AskUserQuestion", cases[i].input);
      g_autofree char *scenario = scenario_calls (use, 1);
      Fixture f;
      JsonObject *result;

      fixture_start (&f, scenario);
      run_turn (&f, "Ask badly", TALLY_MODE_ASK);
      g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
      g_assert_cmpuint (count_events (&f, "question_request"), ==, 0);
      /* The refusal went back to the model and the loop went on. */
      g_assert_cmpuint (count_events (&f, "api_call"), ==, 2);
      result = find_event (&f, "tool_result", 0);
      g_assert_true (json_object_get_boolean_member (result, "is_error"));
      if (strstr (json_object_get_string_member (result, "content"), cases[i].words) == NULL)
        g_error ("case %u: “%s” lacks “%s”", i, json_object_get_string_member (result, "content"), cases[i].words);
      fixture_stop (&f);
    }
}

static void
redirect_cb (TallyAgent *agent,
             JsonObject *event,
             gpointer    data)
{
  g_assert_true (tally_agent_redirect (agent, "Actually, only look at York."));
}

/* A message typed during a pending approval denies it with that text and
 * goes to the model with the tool results. */
static void
test_redirect (void)
{
  g_autofree char *use = tool_use_json ("toolu_X1", "Bash", "{\"command\":\"ls -la\"}");
  g_autofree char *scenario = scenario_calls (use, 1);
  Fixture f;
  g_autoptr(JsonArray) content = NULL;
  JsonObject *resolved;

  fixture_start (&f, scenario);
  f.on_card = redirect_cb;
  run_turn (&f, "Look around", TALLY_MODE_ASK);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);

  resolved = find_event (&f, "approval_resolved", 0);
  g_assert_cmpstr (json_object_get_string_member (resolved, "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (resolved, "message"), ==, "Actually, only look at York.");
  g_assert_cmpstr (json_object_get_string_member (find_event (&f, "redirect", 0), "text"), ==,
                   "Actually, only look at York.");

  content = last_user_content (&f, 1);
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "type"), ==, "tool_result");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"), ==,
                   "Actually, only look at York.");
  g_assert_null (tally_agent_take_redirect (f.agent));
  fixture_stop (&f);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/negotiation/allow-once", test_allow_once);
  g_test_add_func ("/tally/negotiation/allow-edited", test_allow_edited);
  g_test_add_func ("/tally/negotiation/always-allow-persists", test_always_allow_persists);
  g_test_add_func ("/tally/negotiation/deny-messages", test_deny_messages);
  g_test_add_func ("/tally/negotiation/deny-and-stop", test_deny_and_stop);
  g_test_add_func ("/tally/negotiation/timeout-and-cancel", test_timeout_and_cancel_resolve_closed);
  g_test_add_func ("/tally/negotiation/plan-mode", test_plan_mode);
  g_test_add_func ("/tally/negotiation/auto-mode-outside", test_auto_mode_and_outside_paths);
  g_test_add_func ("/tally/negotiation/outside-read-tools", test_outside_read_tools);
  g_test_add_func ("/tally/negotiation/rules-order", test_rules_order);
  g_test_add_func ("/tally/negotiation/command-rules", test_command_rules);
  g_test_add_func ("/tally/negotiation/questions", test_questions);
  g_test_add_func ("/tally/negotiation/invalid-questions", test_invalid_questions);
  g_test_add_func ("/tally/negotiation/redirect", test_redirect);

  return g_test_run ();
}
