/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally-cli end to end against the mock Messages API: the JSON event lines,
 * the readable output and the exit status contract (0, 1, 2, 130). */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>

#include "tally-test-mock.h"
#include "tally-test-util.h"

typedef struct {
  int        exit_status;
  char      *out;
  char      *err;
  GPtrArray *events;   /* JsonObject*, parsed from out when --json */
} CliRun;

static void
cli_run_clear (CliRun *run)
{
  g_free (run->out);
  g_free (run->err);
  g_clear_pointer (&run->events, g_ptr_array_unref);
}

static GSubprocessLauncher *
make_launcher (GSubprocessFlags flags)
{
  GSubprocessLauncher *launcher = g_subprocess_launcher_new (flags);

  g_subprocess_launcher_setenv (launcher, "ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "ANTHROPIC_BASE_URL");
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  return launcher;
}

static void
parse_events (CliRun *run)
{
  g_auto(GStrv) lines = g_strsplit (run->out, "\n", -1);

  run->events = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;

      if (lines[i][0] == '\0')
        {
          /* Only the very end may be empty: stdout is events and nothing else. */
          g_assert_null (lines[i + 1]);
          continue;
        }
      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
      g_ptr_array_add (run->events, json_object_ref (json_node_get_object (json_parser_get_root (parser))));
    }
}

static void
run_cli (CliRun             *run,
         const char * const *args)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  gboolean json = FALSE;

  g_ptr_array_add (argv, (gpointer)TALLY_TEST_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    {
      g_ptr_array_add (argv, (gpointer)args[i]);
      if (g_str_equal (args[i], "--json"))
        json = TRUE;
    }
  g_ptr_array_add (argv, NULL);

  launcher = make_launcher (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *)argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &run->out, &run->err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  run->exit_status = g_subprocess_get_exit_status (process);

  if (json)
    parse_events (run);
}

static const char *
event_type (JsonObject *event)
{
  return json_object_get_string_member (event, "type");
}

static JsonObject *
find_event (CliRun     *run,
            const char *type)
{
  for (guint i = 0; i < run->events->len; i++)
    if (g_str_equal (event_type (g_ptr_array_index (run->events, i)), type))
      return g_ptr_array_index (run->events, i);
  return NULL;
}

static TallyTestMock *
start_scenario_file (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "scenarios", name, NULL);
  g_autoptr(GError) error = NULL;
  TallyTestMock *mock;

  mock = tally_test_mock_start_file (path, &error);
  g_assert_no_error (error);
  return mock;
}

static char *
chinook_path (void)
{
  return g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
}

/* The "done" example: a real answer built from real tool calls. */
static void
test_json_tool_loop (void)
{
  g_autoptr(TallyTestMock) mock = start_scenario_file ("genre-revenue.json");
  g_autofree char *db = chinook_path ();
  CliRun run = { 0 };
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--db", db, "--json",
                         "Which genre earned the most revenue?", NULL };
  g_autoptr(GString) text = g_string_new (NULL);
  JsonObject *last;
  const char *session_id;

  run_cli (&run, args);
  g_assert_cmpint (run.exit_status, ==, 0);
  g_assert_cmpuint (run.events->len, >, 10);

  g_assert_cmpstr (event_type (g_ptr_array_index (run.events, 0)), ==, "session_created");
  session_id = json_object_get_string_member (g_ptr_array_index (run.events, 0), "session_id");
  for (guint i = 0; i < run.events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (run.events, i);

      g_assert_cmpint (json_object_get_int_member (event, "seq"), ==, i + 1);
      g_assert_cmpstr (json_object_get_string_member (event, "session_id"), ==, session_id);
      if (g_str_equal (event_type (event), "text_delta"))
        g_string_append (text, json_object_get_string_member (event, "text"));
    }

  g_assert_nonnull (strstr (text->str, "Rock"));
  g_assert_nonnull (strstr (text->str, "826.65"));
  g_assert_cmpstr (json_object_get_string_member (find_event (&run, "tool_use_start"), "tool_name"), ==, "get_schema");

  last = g_ptr_array_index (run.events, run.events->len - 1);
  g_assert_cmpstr (event_type (last), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "done");
  g_assert_cmpint (json_object_get_int_member (last, "api_calls"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (last, "usage"), "input_tokens"), ==,
                   1850 + 2400 + 2600);

  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 3);
  cli_run_clear (&run);
}

/* Without --json: the answer streams on stdout and ends with the receipt. */
static void
test_readable_output (void)
{
  g_autoptr(TallyTestMock) mock = start_scenario_file ("genre-revenue.json");
  g_autofree char *db = chinook_path ();
  CliRun run = { 0 };
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--db", db,
                         "Which genre earned the most revenue?", NULL };
  g_auto(GStrv) lines = NULL;
  guint n;

  run_cli (&run, args);
  g_assert_cmpint (run.exit_status, ==, 0);
  g_assert_nonnull (strstr (run.out, "Rock | 826.65"));
  g_assert_nonnull (strstr (run.err, "▸ get_schema"));
  g_assert_nonnull (strstr (run.err, "▸ query_database SELECT g.Name"));

  lines = g_strsplit (g_strchomp (run.out), "\n", -1);
  n = g_strv_length (lines);
  g_assert_cmpuint (n, >, 2);
  g_assert_true (g_str_has_prefix (lines[n - 1], "— done · $"));
  /* 6,850 input and 255 output tokens at Sonnet 5 prices. */
  g_assert_nonnull (strstr (lines[n - 1], "6,850 in"));
  g_assert_nonnull (strstr (lines[n - 1], "255 out"));
  g_assert_nonnull (strstr (lines[n - 1], "$0.0244"));
  g_assert_nonnull (strstr (lines[n - 1], "3 API calls"));
  cli_run_clear (&run);
}

/* A 400 fails the turn: exit 1, its message surfaced. */
static void
test_failed_exit (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"status\":400,\"error\":{\"type\":\"invalid_request_error\","
    "\"message\":\"max_tokens: 16000 > 8192, which is the maximum allowed\"}}]}", &error);
  CliRun run = { 0 };
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--json", "Hello", NULL };
  JsonObject *error_event;
  JsonObject *last;

  g_assert_no_error (error);
  run_cli (&run, args);
  g_assert_cmpint (run.exit_status, ==, 1);

  error_event = find_event (&run, "error");
  g_assert_nonnull (error_event);
  g_assert_cmpstr (json_object_get_string_member (error_event, "kind"), ==, "http");
  g_assert_cmpstr (json_object_get_string_member (error_event, "message"), ==,
                   "max_tokens: 16000 > 8192, which is the maximum allowed");
  g_assert_false (json_object_get_boolean_member (error_event, "retryable"));
  g_assert_cmpstr (json_object_get_string_member (error_event, "request_id"), ==, "req_mock_1");
  last = g_ptr_array_index (run.events, run.events->len - 1);
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "failed");
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  cli_run_clear (&run);

  /* Readable form: the message on stderr, a receipt still on stdout. */
  {
    g_autoptr(TallyTestMock) mock2 = tally_test_mock_start (
      "{\"responses\":[{\"status\":401,\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}]}",
      &error);
    const char *args2[] = { "--base-url", tally_test_mock_get_base_url (mock2), "Hello", NULL };

    g_assert_no_error (error);
    run_cli (&run, args2);
    g_assert_cmpint (run.exit_status, ==, 1);
    g_assert_nonnull (strstr (run.err, "invalid x-api-key"));
    g_assert_nonnull (strstr (run.out, "— failed"));
    cli_run_clear (&run);
  }
}

static JsonObject *
request_body (JsonArray *requests,
              guint      index)
{
  return json_object_get_object_member (json_array_get_object_element (requests, index), "body");
}

static const char *
first_user_text (JsonObject *body)
{
  JsonArray *messages = json_object_get_array_member (body, "messages");
  JsonNode *content = json_object_get_member (json_array_get_object_element (messages, 0), "content");

  if (JSON_NODE_HOLDS_VALUE (content))
    return json_node_get_string (content);
  return json_object_get_string_member (json_array_get_object_element (json_node_get_array (content), 0),
                                        "text");
}

/* `--thinking[=BUDGET]` follows the GNU rule: the budget only after `=`, so
 * a bare `--thinking` turns thinking on and the next word is the prompt. */
static void
test_thinking_optional_budget (void)
{
  const char *reply =
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Album 141.\"}]}}]}";
  g_autoptr(GError) error = NULL;

  {
    g_autoptr(TallyTestMock) mock = tally_test_mock_start (reply, &error);
    g_autoptr(JsonArray) requests = NULL;
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--model", "claude-sonnet-4-5",
                           "--thinking", "Which album has the most tracks?", NULL };
    CliRun run = { 0 };
    JsonObject *thinking;

    g_assert_no_error (error);
    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 0);
    g_assert_nonnull (strstr (run.out, "Album 141."));
    requests = tally_test_mock_dup_requests (mock);
    g_assert_cmpuint (json_array_get_length (requests), ==, 1);
    g_assert_cmpstr (first_user_text (request_body (requests, 0)), ==, "Which album has the most tracks?");
    thinking = json_object_get_object_member (request_body (requests, 0), "thinking");
    g_assert_nonnull (thinking);
    g_assert_cmpstr (json_object_get_string_member (thinking, "type"), ==, "enabled");
    g_assert_cmpint (json_object_get_int_member (thinking, "budget_tokens"), ==, 8000);
    cli_run_clear (&run);
  }

  /* The budget after `=`; the prompt may come first, and a word after `--`
   * that reads `--thinking` is prompt text. */
  {
    g_autoptr(TallyTestMock) mock = tally_test_mock_start (reply, &error);
    g_autoptr(JsonArray) requests = NULL;
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--model", "claude-sonnet-4-5",
                           "--thinking=2048", "--", "Explain", "--thinking", NULL };
    CliRun run = { 0 };
    JsonObject *thinking;

    g_assert_no_error (error);
    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 0);
    requests = tally_test_mock_dup_requests (mock);
    g_assert_cmpuint (json_array_get_length (requests), ==, 1);
    g_assert_cmpstr (first_user_text (request_body (requests, 0)), ==, "Explain --thinking");
    thinking = json_object_get_object_member (request_body (requests, 0), "thinking");
    g_assert_cmpint (json_object_get_int_member (thinking, "budget_tokens"), ==, 2048);
    cli_run_clear (&run);
  }

  /* Without the flag: no thinking for a manual-budget model that needs
   * nothing sent to keep it off, or an explicit `disabled`. */
  {
    g_autoptr(TallyTestMock) mock = tally_test_mock_start (reply, &error);
    g_autoptr(JsonArray) requests = NULL;
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--model", "claude-sonnet-4-5",
                           "Which album has the most tracks?", NULL };
    CliRun run = { 0 };
    JsonObject *body;

    g_assert_no_error (error);
    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 0);
    requests = tally_test_mock_dup_requests (mock);
    body = request_body (requests, 0);
    g_assert_true (!json_object_has_member (body, "thinking") ||
                   g_str_equal (json_object_get_string_member (json_object_get_object_member (body, "thinking"), "type"),
                                "disabled"));
    cli_run_clear (&run);
  }
}

/* `--mode ask` after a plan turn, in a new process: the reminder says that
 * plan mode ended and the analyst approved going ahead, as its own text
 * block after the prompt; no stale "Plan mode is on". */
static void
test_leave_plan_mode_on_resume (void)
{
  const char *reply = "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}";
  g_autofree char *scenario = g_strdup_printf ("{\"responses\":[%s,%s]}", reply, reply);
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (scenario, &error);
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-plan-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (dir, "store.db", NULL);
  g_autofree char *session_id = NULL;
  g_autoptr(JsonArray) requests = NULL;
  CliRun run = { 0 };
  JsonArray *messages;
  JsonArray *content;
  const char *reminder;

  g_assert_no_error (error);
  {
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--store", store,
                           "--mode", "plan", "--json", "Plan a report on March", NULL };
    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 0);
    session_id = g_strdup (json_object_get_string_member (find_event (&run, "session_created"), "session_id"));
    cli_run_clear (&run);
  }
  {
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--store", store,
                           "--resume", session_id, "--mode", "ask", "--json", "Go ahead", NULL };
    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 0);
    cli_run_clear (&run);
  }

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);
  messages = json_object_get_array_member (request_body (requests, 1), "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 3);
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==,
                   "Go ahead");
  reminder = json_object_get_string_member (json_array_get_object_element (content, 1), "text");
  g_assert_nonnull (strstr (reminder, "Plan mode has ended"));
  g_assert_nonnull (strstr (reminder, "approved going ahead"));
  g_assert_nonnull (strstr (reminder, "Ask mode is on"));

  g_unlink (store);
  {
    g_autofree char *wal = g_strconcat (store, "-wal", NULL);
    g_autofree char *shm = g_strconcat (store, "-shm", NULL);
    g_unlink (wal);
    g_unlink (shm);
  }
  g_rmdir (dir);
}

/* Usage errors exit 2 and talk to no server. */
static void
test_usage_exit (void)
{
  const char *bad_mode[] = { "--mode", "yolo", "Hello", NULL };
  const char *no_prompt[] = { "--json", NULL };
  const char *bad_budget[] = { "--thinking=12", "Hello", NULL };
  const char *bad_db[] = { "--db", "/nonexistent/tally.db", "Hello", NULL };
  const char *bad_option[] = { "--frobnicate", "Hello", NULL };
  const char *empty_model[] = { "--model", "", "Hello", NULL };
  const char *negative_timeout[] = { "--idle-timeout", "-1", "Hello", NULL };
  const char *nan_cost[] = { "--max-cost", "nan", "Hello", NULL };
  const char *store_folder[] = { "--store", "/tmp", "Hello", NULL };
  const char *store_nowhere[] = { "--store", "/nonexistent/tally/s.db", "Hello", NULL };
  g_autofree char *corrupt_db = g_build_filename (g_get_tmp_dir (), "tally-cli-corrupt.db", NULL);
  const char *corrupt[] = { "--db", corrupt_db, "Hello", NULL };
  const char *const *cases[] = { bad_mode, no_prompt, bad_budget, bad_db, bad_option, empty_model,
                                 negative_timeout, store_folder, store_nowhere, corrupt, nan_cost };
  g_autofree char *garbage = g_strnfill (8192, 'x');

  /* Not a database: random-looking bytes where a SQLite header should be. */
  for (guint i = 0; i < 8192; i++)
    garbage[i] = (char)(37 * i + 11);
  g_assert_true (g_file_set_contents (corrupt_db, garbage, 8192, NULL));

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      CliRun run = { 0 };

      run_cli (&run, cases[i]);
      g_assert_cmpint (run.exit_status, ==, 2);
      g_assert_cmpstr (run.out, ==, "");
      g_assert_true (g_str_has_prefix (run.err, "tally-cli: "));
      cli_run_clear (&run);
    }
  g_unlink (corrupt_db);
  g_assert_false (g_file_test ("/nonexistent/tally", G_FILE_TEST_EXISTS));
}

typedef struct {
  GMainLoop   *loop;
  GSubprocess *process;
  GDataInputStream *stdout_lines;
  GString     *out;
  gboolean     signalled;
} SigintRun;

static void read_line_cb (GObject *object, GAsyncResult *result, gpointer user_data);

static void
read_next_line (SigintRun *r)
{
  g_data_input_stream_read_line_async (r->stdout_lines, G_PRIORITY_DEFAULT, NULL, read_line_cb, r);
}

static void
read_line_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  SigintRun *r = user_data;
  g_autofree char *line = NULL;

  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result, NULL, NULL);
  if (line == NULL)
    {
      g_main_loop_quit (r->loop);
      return;
    }

  g_string_append (r->out, line);
  g_string_append_c (r->out, '\n');

  /* Interrupt once the answer has started streaming. */
  if (!r->signalled && strstr (line, "\"type\":\"text_delta\"") != NULL)
    {
      r->signalled = TRUE;
      g_subprocess_send_signal (r->process, SIGINT);
    }
  read_next_line (r);
}

/* Ctrl+C mid-stream: the turn ends cancelled with its receipt, exit 130. */
static void
test_sigint_exit (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"A long answer that keeps coming for a while.\"}],"
    "\"stop_reason\":\"end_turn\",\"chunk\":2},\"drip_ms\":200,\"drip_bytes\":200}]}", &error);
  g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  SigintRun r = { 0 };
  g_auto(GStrv) lines = NULL;
  guint n;

  g_assert_no_error (error);
  r.loop = loop;
  r.out = g_string_new (NULL);
  r.process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI, "--base-url",
                                           tally_test_mock_get_base_url (mock), "--json", "Talk", NULL);
  g_assert_no_error (error);
  r.stdout_lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (r.process));
  read_next_line (&r);
  g_main_loop_run (loop);

  g_subprocess_wait (r.process, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (r.signalled);
  g_assert_true (g_subprocess_get_if_exited (r.process));
  g_assert_cmpint (g_subprocess_get_exit_status (r.process), ==, 130);

  lines = g_strsplit (g_strchomp (r.out->str), "\n", -1);
  n = g_strv_length (lines);
  g_assert_nonnull (strstr (lines[n - 1], "\"type\":\"turn_finished\""));
  g_assert_nonnull (strstr (lines[n - 1], "\"status\":\"cancelled\""));

  g_string_free (r.out, TRUE);
  g_object_unref (r.stdout_lines);
  g_object_unref (r.process);
}

/* A stalled stream after content: --idle-timeout fails the turn. */
static void
test_idle_timeout (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Starting the answer and then silence\"}],"
    "\"stop_reason\":\"end_turn\"},\"stall_after_bytes\":700}]}", &error);
  CliRun run = { 0 };
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--idle-timeout", "0.5",
                         "--json", "Hello", NULL };
  JsonObject *error_event;

  g_assert_no_error (error);
  run_cli (&run, args);
  g_assert_cmpint (run.exit_status, ==, 1);
  error_event = find_event (&run, "error");
  g_assert_nonnull (error_event);
  g_assert_cmpstr (json_object_get_string_member (error_event, "kind"), ==, "stalled");
  g_assert_nonnull (find_event (&run, "text_delta"));
  cli_run_clear (&run);
}

/* --list-models reads GET /v1/models. */
static void
test_list_models (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"models\":[{\"type\":\"model\",\"id\":\"claude-sonnet-5\",\"display_name\":\"Claude Sonnet 5\"},"
    "{\"type\":\"model\",\"id\":\"claude-opus-5\",\"display_name\":\"Claude Opus 5\"}],\"responses\":[]}", &error);
  CliRun run = { 0 };
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--list-models", NULL };

  g_assert_no_error (error);
  run_cli (&run, args);
  g_assert_cmpint (run.exit_status, ==, 0);
  g_assert_cmpstr (run.out, ==, "claude-sonnet-5\tClaude Sonnet 5\nclaude-opus-5\tClaude Opus 5\n");
  cli_run_clear (&run);
}

/* Output that cannot be written fails the command (exit 1, a line on
 * stderr), for a command that prints at once (--version) and for one that
 * prints from the main loop (--list-models): a script piping an export or
 * a list to a full disk must not see success. */
static void
test_output_full (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"models\":[{\"type\":\"model\",\"id\":\"claude-sonnet-5\",\"display_name\":\"Claude Sonnet 5\"}],"
    "\"responses\":[]}", &error);
  const char *version[] = { TALLY_TEST_CLI, "--version", NULL };
  const char *models[] = { TALLY_TEST_CLI, "--base-url", tally_test_mock_get_base_url (mock), "--list-models", NULL };
  const char * const *cases[] = { version, models };

  g_assert_no_error (error);
  if (!g_file_test ("/dev/full", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no /dev/full on this machine");
      return;
    }

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDERR_PIPE);
      g_autoptr(GSubprocess) process = NULL;
      g_autofree char *err = NULL;

      g_subprocess_launcher_set_stdout_file_path (launcher, "/dev/full");
      process = g_subprocess_launcher_spawnv (launcher, cases[i], &error);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (process, NULL, NULL, NULL, &err, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (process));
      g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 1);
      g_assert_nonnull (strstr (err, "tally-cli: the output could not be written: "));
    }
}

/* Ends the write transaction after a second, from a thread of its own
 * while the test waits for the child */
static gpointer
release_lock_thread (gpointer user_data)
{
  g_usleep (G_USEC_PER_SEC);
  g_assert_cmpint (sqlite3_exec (user_data, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
  return NULL;
}

/* A --db that another program holds locked for a moment: the start-up
 * check waits for the lock, as queries do, instead of calling it an
 * unreadable database (exit 2). */
static void
test_db_locked_briefly (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],"
    "\"stop_reason\":\"end_turn\"}}]}", &error);
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-lock-XXXXXX", NULL);
  g_autofree char *db_path = g_build_filename (dir, "locked.db", NULL);
  g_autofree char *store = g_build_filename (dir, "store.db", NULL);
  g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  GThread *releaser;
  sqlite3 *db = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (sqlite3_open (db_path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);",
                                 NULL, NULL, NULL), ==, SQLITE_OK);

  process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI,
                                         "--base-url", tally_test_mock_get_base_url (mock),
                                         "--db", db_path, "--store", store, "--workspace", dir,
                                         "--json", "Hello", NULL);
  g_assert_no_error (error);
  /* the lock goes after a second, while the check waits for it */
  releaser = g_thread_new ("release-lock", release_lock_thread, db);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
  g_thread_join (releaser);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpstr (err != NULL && g_subprocess_get_exit_status (process) != 0 ? err : "", ==, "");
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  g_assert_nonnull (strstr (out, "\"type\":\"turn_finished\""));
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);

  sqlite3_close (db);
  tally_test_rm_rf (dir);
}

/* Cards answered on stdin, as docs/architecture.md §11.2 says. */
static void
run_cli_with_input (CliRun             *run,
                    const char * const *args,
                    const char         *input)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (argv, (gpointer)TALLY_TEST_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);

  launcher = make_launcher (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                            G_SUBPROCESS_FLAGS_STDERR_PIPE);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *)argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, input, NULL, &run->out, &run->err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  run->exit_status = g_subprocess_get_exit_status (process);
  parse_events (run);
}

static JsonObject *
nth_event (CliRun     *run,
           const char *type,
           guint       nth)
{
  for (guint i = 0; i < run->events->len; i++)
    if (g_str_equal (event_type (g_ptr_array_index (run->events, i)), type) && nth-- == 0)
      return g_ptr_array_index (run->events, i);
  return NULL;
}

static void
test_stdin_approvals (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = g_dir_make_tmp ("tally-cli-ws-XXXXXX", NULL);
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"command\":\"echo one\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"Bash\",\"input\":{\"command\":\"echo two\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_3\",\"name\":\"Bash\",\"input\":{\"command\":\"rm -rf /\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_4\",\"name\":\"Bash\",\"input\":{\"command\":\"echo four\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_5\",\"name\":\"Bash\",\"input\":{\"command\":\"echo five\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}", &error);
  g_autofree char *store = g_build_filename (workspace, "store.db", NULL);
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--workspace", workspace,
                         "--store", store, "--json", "Run things", NULL };
  CliRun run = { 0 };

  g_assert_no_error (error);
  /* y; maybe (malformed: a hint, then) n: message; e: edited; a; then EOF. */
  run_cli_with_input (&run, args, "y\nmaybe\nn: Never touch the root folder.\ne: {\"command\":\"echo edited\"}\n");
  g_assert_cmpint (run.exit_status, ==, 0);
  g_assert_nonnull (strstr (run.err, "Answer y, a, n"));

  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 0), "decision"), ==, "allow");
  g_assert_nonnull (strstr (json_object_get_string_member (nth_event (&run, "tool_result", 0), "content"), "one"));
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 1), "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "tool_result", 1), "content"), ==,
                   "Never touch the root folder.");
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 2), "decision"), ==, "allow_edited");
  g_assert_nonnull (strstr (json_object_get_string_member (nth_event (&run, "tool_result", 2), "content"), "edited"));
  /* End of input: the rest are dismissed, never allowed. */
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 3), "decision"), ==, "deny");
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 3), "reason"), ==, "dismissed");
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 4), "reason"), ==, "dismissed");
  g_assert_true (json_object_get_boolean_member (nth_event (&run, "tool_result", 4), "is_error"));
  cli_run_clear (&run);

  g_unlink (store);
  g_rmdir (workspace);
}

static void
test_stdin_always_and_questions (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = g_dir_make_tmp ("tally-cli-ws-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (workspace, "store.db", NULL);
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"command\":\"echo always\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"AskUserQuestion\",\"input\":{\"questions\":["
    "{\"question\":\"Which period?\",\"header\":\"Period\",\"options\":[{\"label\":\"March\",\"description\":\"\"},{\"label\":\"Q1\",\"description\":\"\"}]},"
    "{\"question\":\"Which cities?\",\"header\":\"Cities\",\"multiSelect\":true,\"options\":[{\"label\":\"Leeds\",\"description\":\"\"},{\"label\":\"York\",\"description\":\"\"}]},"
    "{\"question\":\"Anything else?\",\"header\":\"Notes\",\"options\":[{\"label\":\"No\",\"description\":\"\"},{\"label\":\"Yes\",\"description\":\"\"}]}]}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}", &error);
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--workspace", workspace,
                         "--store", store, "--json", "Compare", NULL };
  CliRun run = { 0 };
  JsonObject *answers;

  g_assert_no_error (error);
  run_cli_with_input (&run, args, "A\n2\n7\n1,5 + typo\n1,2,1 + the new store\nweekends only, please\n");
  g_assert_cmpint (run.exit_status, ==, 0);
  /* Every question is shown before its line is read; 7 is no option, nor
   * is 5 before own words (not taken as the typed answer); an option named
   * twice is picked once. */
  g_assert_nonnull (strstr (run.err, "[Period] Which period?"));
  g_assert_nonnull (strstr (run.err, "[Cities] Which cities?"));
  g_assert_nonnull (strstr (run.err, "[Notes] Anything else?"));
  {
    const char *hint = strstr (run.err, "Pick option numbers from 1 to 2.");

    g_assert_nonnull (hint);
    g_assert_nonnull (strstr (hint + 1, "Pick option numbers from 1 to 2."));
  }

  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 0), "decision"), ==, "allow_always");
  g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "approval_resolved", 0), "rule"), ==, "Bash(echo always)");

  answers = json_object_get_object_member (nth_event (&run, "question_resolved", 0), "answers");
  g_assert_cmpstr (json_object_get_string_member (answers, "Which period?"), ==, "Q1");
  g_assert_cmpstr (json_object_get_string_member (answers, "Which cities?"), ==, "Leeds, York, the new store");
  g_assert_cmpstr (json_object_get_string_member (answers, "Anything else?"), ==, "weekends only, please");
  cli_run_clear (&run);

  /* An empty line dismisses the card. */
  {
    g_autoptr(TallyTestMock) mock2 = tally_test_mock_start (
      "{\"responses\":[{\"message\":{\"content\":["
      "{\"type\":\"tool_use\",\"id\":\"toolu_Q\",\"name\":\"AskUserQuestion\",\"input\":{\"questions\":["
      "{\"question\":\"Which period?\",\"header\":\"Period\",\"options\":[{\"label\":\"March\",\"description\":\"\"},{\"label\":\"Q1\",\"description\":\"\"}]}]}}"
      "],\"stop_reason\":\"tool_use\"}},"
      "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}", &error);
    const char *args2[] = { "--base-url", tally_test_mock_get_base_url (mock2), "--store", store, "--json", "Ask", NULL };

    g_assert_no_error (error);
    run_cli_with_input (&run, args2, "\n");
    g_assert_cmpint (run.exit_status, ==, 0);
    g_assert_cmpstr (json_object_get_string_member (nth_event (&run, "question_resolved", 0), "reason"), ==, "dismissed");
    g_assert_true (json_object_get_boolean_member (nth_event (&run, "tool_result", 0), "is_error"));
    cli_run_clear (&run);
  }

  g_unlink (store);
  g_rmdir (workspace);
}

/* The child may not grow any file past 32 KiB (RLIMIT_FSIZE binds root
 * too): the store's `-shm` (32 KiB) still fits, the turn's WAL frames do
 * not, so a commit fails in the middle of the turn with a real write error
 * from SQLite. SIGXFSZ is ignored so that write() fails instead. */
static void
limit_file_size_cb (gpointer user_data)
{
  struct rlimit limit = { 32768, 32768 };

  signal (SIGXFSZ, SIG_IGN);
  setrlimit (RLIMIT_FSIZE, &limit);
}

static void
run_cli_limited (CliRun             *run,
                 const char * const *args)
{
  g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (argv, (gpointer)TALLY_TEST_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);

  g_subprocess_launcher_set_child_setup (launcher, limit_file_size_cb, NULL, NULL);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *)argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &run->out, &run->err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  run->exit_status = g_subprocess_get_exit_status (process);
  parse_events (run);
}

/* Item 9 of issue 10: a turn whose events the store cannot write ends
 * failed with an `error` of kind `store` naming the file, the CLI exits 1,
 * and what was committed before is intact. */
static void
test_store_write_failure (void)
{
  g_autoptr(TallyTestMock) mock = start_scenario_file ("genre-revenue.json");
  g_autoptr(TallyTestMock) mock2 = start_scenario_file ("genre-revenue.json");
  g_autofree char *db = chinook_path ();
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-full-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *first_id = NULL;
  g_autofree char *replay_before = NULL;
  const char *first[] = { "--base-url", tally_test_mock_get_base_url (mock), "--db", db, "--store", store,
                          "--json", "Which genre earned the most revenue?", NULL };
  const char *second[] = { "--base-url", tally_test_mock_get_base_url (mock2), "--db", db, "--store", store,
                           "--json", "Which genre earned the most revenue?", NULL };
  CliRun run = { 0 };
  JsonObject *error_event = NULL;
  JsonObject *last;
  g_autoptr(GDir) listing = NULL;
  const char *name;

  /* A session committed before the disk fills */
  run_cli (&run, first);
  g_assert_cmpint (run.exit_status, ==, 0);
  first_id = g_strdup (json_object_get_string_member (g_ptr_array_index (run.events, 0), "session_id"));
  cli_run_clear (&run);
  {
    const char *replay[] = { "--store", store, "--replay", first_id, "--json", NULL };

    run_cli (&run, replay);
    g_assert_cmpint (run.exit_status, ==, 0);
    replay_before = g_steal_pointer (&run.out);
    g_assert_cmpuint (strlen (replay_before), >, 1000);
    cli_run_clear (&run);
  }

  run_cli_limited (&run, second);
  g_assert_cmpint (run.exit_status, ==, 1);
  for (guint i = 0; i < run.events->len; i++)
    if (g_str_equal (event_type (g_ptr_array_index (run.events, i)), "error"))
      error_event = g_ptr_array_index (run.events, i);
  g_assert_nonnull (error_event);
  g_assert_cmpstr (json_object_get_string_member (error_event, "kind"), ==, "store");
  g_assert_nonnull (strstr (json_object_get_string_member (error_event, "message"), store));
  g_assert_false (json_object_get_boolean_member (error_event, "retryable"));
  last = g_ptr_array_index (run.events, run.events->len - 1);
  g_assert_cmpstr (event_type (last), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "failed");
  cli_run_clear (&run);

  /* Nothing committed before was damaged */
  {
    const char *replay[] = { "--store", store, "--replay", first_id, "--json", NULL };

    run_cli (&run, replay);
    g_assert_cmpint (run.exit_status, ==, 0);
    g_assert_cmpstr (run.out, ==, replay_before);
    cli_run_clear (&run);
  }

  listing = g_dir_open (dir, 0, NULL);
  while ((name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

/* Found by a reviewer: --resume on a store that opens read-only (there a
 * tmpfs remounted read-only; here a store written by a newer Tally, which
 * takes the same read-only path and needs no mount) sent the turn, exited
 * 0 "done" and kept nothing. It is refused before anything is sent, as a
 * new session is: exit 1, with --json one `error` of kind `store`, seq 0. */
static void
test_resume_read_only_store (void)
{
  g_autoptr(TallyTestMock) mock = start_scenario_file ("genre-revenue.json");
  g_autoptr(TallyTestMock) mock2 = start_scenario_file ("genre-revenue.json");
  g_autofree char *db = chinook_path ();
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-ro-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *id = NULL;
  g_autofree char *replay_before = NULL;
  const char *first[] = { "--base-url", tally_test_mock_get_base_url (mock), "--db", db, "--store", store,
                          "--json", "Which genre earned the most revenue?", NULL };
  CliRun run = { 0 };
  JsonObject *event;
  sqlite3 *handle = NULL;

  run_cli (&run, first);
  g_assert_cmpint (run.exit_status, ==, 0);
  id = g_strdup (json_object_get_string_member (g_ptr_array_index (run.events, 0), "session_id"));
  cli_run_clear (&run);
  {
    const char *replay[] = { "--store", store, "--replay", id, "--json", NULL };

    run_cli (&run, replay);
    g_assert_cmpint (run.exit_status, ==, 0);
    replay_before = g_steal_pointer (&run.out);
    cli_run_clear (&run);
  }

  g_assert_cmpint (sqlite3_open (store, &handle), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (handle, "PRAGMA user_version = 99", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (handle);

  {
    const char *resume[] = { "--base-url", tally_test_mock_get_base_url (mock2), "--store", store,
                             "--resume", id, "--json", "And the least?", NULL };

    run_cli (&run, resume);
    g_assert_cmpint (run.exit_status, ==, 1);
    g_assert_cmpuint (run.events->len, ==, 1);
    event = g_ptr_array_index (run.events, 0);
    g_assert_cmpstr (event_type (event), ==, "error");
    g_assert_cmpstr (json_object_get_string_member (event, "kind"), ==, "store");
    g_assert_cmpint (json_object_get_int_member (event, "seq"), ==, 0);
    g_assert_cmpstr (json_object_get_string_member (event, "session_id"), ==, id);
    g_assert_nonnull (strstr (json_object_get_string_member (event, "message"), store));
    g_assert_nonnull (strstr (run.err, "cannot resume"));
    cli_run_clear (&run);
  }
  /* Nothing was sent, nothing changed */
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock2), ==, 0);
  {
    const char *replay[] = { "--store", store, "--replay", id, "--json", NULL };

    run_cli (&run, replay);
    g_assert_cmpint (run.exit_status, ==, 0);
    g_assert_cmpstr (run.out, ==, replay_before);
    cli_run_clear (&run);
  }

  tally_test_rm_rf (dir);
}

/* Removes the files (not folders) directly in @dir. */
static void
rm_files_in (const char *dir)
{
  g_autoptr(GDir) handle = g_dir_open (dir, 0, NULL);
  const char *name;

  while (handle != NULL && (name = g_dir_read_name (handle)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_unlink (path);
    }
}

/* A mock playing @scenario (JSON), which must start. */
static TallyTestMock *
start_json_mock (const char *scenario)
{
  g_autoptr(GError) error = NULL;
  TallyTestMock *mock = tally_test_mock_start (scenario, &error);

  g_assert_no_error (error);
  return mock;
}

/* Processes and secrets (docs/security.md) ------------------------------ */

#define BASH_CARD_SCENARIO \
  "{\"responses\":[{\"message\":{\"content\":[" \
  "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"command\":%s}}" \
  "],\"stop_reason\":\"tool_use\"}}," \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}"

static TallyTestMock *
start_bash_mock (const char *command)
{
  g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), command);
  g_autofree char *quoted = json_to_string (node, FALSE);
  g_autofree char *scenario = g_strdup_printf (BASH_CARD_SCENARIO, quoted);

  return start_json_mock (scenario);
}

/* The readable approval prompt shows the command that runs, whatever
 * other members the input has, and no control character reaches the
 * terminal (found by a reviewer: `{"sql":"ls reports","command":…}` was
 * shown as "Approve Bash: ls reports"). */
static void
test_approval_shows_what_runs (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = start_json_mock (
    "{\"responses\":[{\"message\":{\"content\":["
    "{\"type\":\"text\",\"text\":\"Listing \\u001b]52;c;cm0gLXJmIH4=\\u0007now\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\","
    " \"input\":{\"sql\":\"ls reports\",\"command\":\"echo first-ran\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"Bash\","
    " \"input\":{\"command\":\"echo second-ran #\\u001b[1G\\u001b[2KApprove Bash: ls\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}");
  g_autofree char *workspace = g_dir_make_tmp ("tally-cli-spoof-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (workspace, "store.db", NULL);
  g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  const char *first;
  const char *second;

  process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI,
                                         "--base-url", tally_test_mock_get_base_url (mock),
                                         "--workspace", workspace, "--store", store,
                                         "List the reports", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, "y\ny\n", NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);

  first = strstr (err, "Approve Bash, which runs this command:\n    echo first-ran\n");
  g_assert_nonnull (first);
  second = strstr (first + 1, "Approve Bash, which runs this command:\n"
                              "    echo second-ran #\\x1b[1G\\x1b[2KApprove Bash: ls\n");
  g_assert_nonnull (second);
  g_assert_null (strstr (err, "ls reports"));
  /* Escaped on stderr and stdout alike; the model's text is all there. */
  g_assert_null (strchr (err, '\033'));
  g_assert_null (strchr (out, '\033'));
  g_assert_null (strchr (out, '\007'));
  g_assert_nonnull (strstr (out, "Listing \\x1b]52;c;cm0gLXJmIH4=\\x07now"));

  tally_test_rm_rf (workspace);
}

/* Runs one --json turn of @prompt against @mock, with @dir as the
 * workspace and the store in it, resuming @resume_id when it is not NULL;
 * the run must end with exit status 0. */
static void
run_json_prompt (CliRun        *run,
                 TallyTestMock *mock,
                 const char    *dir,
                 const char    *resume_id,
                 const char    *prompt)
{
  g_autofree char *store = g_build_filename (dir, "store.db", NULL);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  g_ptr_array_add (args, (gpointer) "--base-url");
  g_ptr_array_add (args, (gpointer) tally_test_mock_get_base_url (mock));
  g_ptr_array_add (args, (gpointer) "--store");
  g_ptr_array_add (args, store);
  g_ptr_array_add (args, (gpointer) "--workspace");
  g_ptr_array_add (args, (gpointer) dir);
  if (resume_id != NULL)
    {
      g_ptr_array_add (args, (gpointer) "--resume");
      g_ptr_array_add (args, (gpointer) resume_id);
    }
  g_ptr_array_add (args, (gpointer) "--json");
  g_ptr_array_add (args, (gpointer) prompt);
  g_ptr_array_add (args, NULL);
  run_cli (run, (const char * const *) args->pdata);
  g_assert_cmpint (run->exit_status, ==, 0);
}

/* A refusal's partial output is never echoed (docs/protocol.md §9.3):
 * the next request replays the prompts, not the refused reply. */
static void
test_refusal_not_echoed (void)
{
  g_autoptr(TallyTestMock) mock = start_json_mock (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Step 1: obtain the\"}],"
    " \"stop_reason\":\"refusal\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Here is the March total.\"}],"
    " \"stop_reason\":\"end_turn\"}}]}");
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-refusal-XXXXXX", NULL);
  g_autofree char *session_id = NULL;
  g_autoptr(JsonArray) requests = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  CliRun run = { 0 };
  JsonArray *messages;
  JsonArray *content;

  run_json_prompt (&run, mock, dir, NULL, "First question");
  session_id = g_strdup (json_object_get_string_member (find_event (&run, "session_created"), "session_id"));
  /* Shown and kept all the same. */
  for (guint i = 0; i < run.events->len; i++)
    if (g_str_equal (event_type (g_ptr_array_index (run.events, i)), "text_delta"))
      g_string_append (text, json_object_get_string_member (g_ptr_array_index (run.events, i), "text"));
  g_assert_cmpstr (text->str, ==, "Step 1: obtain the");
  cli_run_clear (&run);

  run_json_prompt (&run, mock, dir, session_id, "Second question");
  cli_run_clear (&run);

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);
  messages = json_object_get_array_member (request_body (requests, 1), "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 0), "role"), ==, "user");
  content = json_object_get_array_member (json_array_get_object_element (messages, 0), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==,
                   "First question");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"), ==,
                   "Second question");

  tally_test_rm_rf (dir);
}

/* A tool input holding a NUL character is not run: the tool would read
 * its string cut at the NUL (docs/protocol.md §9.2). The stream is written
 * as SSE, since a scenario's JSON cannot hold a NUL either. */
static void
test_tool_input_nul_not_run (void)
{
  static const char sse[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
    "\"content\":[],\"model\":\"claude-sonnet-5\",\"stop_reason\":null,\"stop_sequence\":null,"
    "\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\","
    "\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"{\\\"command\\\":\\\"echo cut\\\\u0000; touch NUL-RAN\\\"}\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":7}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-nul-XXXXXX", NULL);
  g_autofree char *sse_path = g_build_filename (dir, "nul.sse", NULL);
  g_autofree char *scenario = NULL;
  g_autoptr(TallyTestMock) mock = NULL;
  g_autofree char *ran = g_build_filename (dir, "NUL-RAN", NULL);
  CliRun run = { 0 };
  JsonObject *result;

  g_assert_true (g_file_set_contents (sse_path, sse, -1, &error));
  scenario = g_strdup_printf ("{\"responses\":[{\"sse_file\":\"%s\"},"
                              "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],"
                              "\"stop_reason\":\"end_turn\"}}]}", sse_path);
  mock = start_json_mock (scenario);
  run_json_prompt (&run, mock, dir, NULL, "Run it");
  g_assert_cmpint (run.exit_status, ==, 0);
  result = find_event (&run, "tool_result");
  g_assert_nonnull (result);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), "NUL character"));
  /* Refused before any card: nothing to approve, nothing ran. */
  g_assert_null (find_event (&run, "approval_request"));
  g_assert_false (g_file_test (ran, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);

  cli_run_clear (&run);
  tally_test_rm_rf (dir);
}

/* A call with an empty id gets a fresh one and is not run; the model is
 * told its id was empty, not that it reused one (docs/protocol.md §5.4). */
static void
test_empty_tool_id (void)
{
  g_autoptr(TallyTestMock) mock = start_json_mock (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"\",\"name\":\"get_schema\",\"input\":{}}],"
    " \"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}}]}");
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-emptyid-XXXXXX", NULL);
  CliRun run = { 0 };
  JsonObject *result;
  const char *content;

  run_json_prompt (&run, mock, dir, NULL, "Look");
  result = find_event (&run, "tool_result");
  g_assert_nonnull (result);
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  content = json_object_get_string_member (result, "content");
  g_assert_nonnull (strstr (content, "had an empty id"));
  g_assert_nonnull (strstr (content, json_object_get_string_member (result, "tool_id")));
  g_assert_null (strstr (content, "reused"));
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), !=, "");

  cli_run_clear (&run);
  tally_test_rm_rf (dir);
}

/* stop_reason "tool_use" with no tool_use block ends the turn: another
 * call would end with the assistant's message, a prefill the API refuses. */
static void
test_tool_use_stop_without_block (void)
{
  g_autoptr(TallyTestMock) mock = start_json_mock (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Let me look.\"}],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never asked\"}],\"stop_reason\":\"end_turn\"}}]}");
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-nouse-XXXXXX", NULL);
  CliRun run = { 0 };
  JsonObject *last;

  run_json_prompt (&run, mock, dir, NULL, "Look");
  last = g_ptr_array_index (run.events, run.events->len - 1);
  g_assert_cmpstr (event_type (last), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "done");
  g_assert_cmpint (json_object_get_int_member (last, "api_calls"), ==, 1);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  g_assert_null (find_event (&run, "error"));

  cli_run_clear (&run);
  tally_test_rm_rf (dir);
}

/* An approved command reads tally-cli's own /proc/PID/environ and its own
 * environment: no key, no connection string; a --pass-env name does pass;
 * the requests still carry the key. */
static void
test_key_out_of_reach (void)
{
  g_autoptr(TallyTestMock) mock = start_bash_mock ("tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; env");
  g_autofree char *workspace = g_dir_make_tmp ("tally-cli-env-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (workspace, "store.db", NULL);
  g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(JsonArray) requests = NULL;
  g_autoptr(GError) error = NULL;
  CliRun run = { 0 };
  const char *content;
  const char *separator;

  g_subprocess_launcher_setenv (launcher, "DATABASE_URL", "postgres://a:hunter2@db/sales", TRUE);
  g_subprocess_launcher_setenv (launcher, "TALLY_SHARED", "shared-value", TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI,
                                         "--base-url", tally_test_mock_get_base_url (mock),
                                         "--workspace", workspace, "--store", store,
                                         "--pass-env", "TALLY_SHARED", "--json", "Look around", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, "y\n", NULL, &run.out, &run.err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  parse_events (&run);

  content = json_object_get_string_member (nth_event (&run, "tool_result", 0), "content");
  separator = strstr (content, "---\n");
  g_assert_nonnull (separator);
  /* /proc/PID/environ still lists the other variables, so it was read. */
  g_assert_nonnull (strstr (content, "DATABASE_URL=postgres://a:hunter2@db/sales\n"));
  g_assert_null (strstr (content, "sk-test-key"));
  g_assert_null (strstr (content, "ANTHROPIC_API_KEY=s"));
  /* The command's own environment: the allow-list and the passed name. */
  g_assert_null (strstr (separator, "DATABASE_URL"));
  g_assert_null (strstr (separator, "ANTHROPIC_API_KEY"));
  g_assert_nonnull (strstr (separator, "TALLY_SHARED=shared-value\n"));

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *headers = json_object_get_object_member (json_array_get_object_element (requests, i),
                                                           "headers");

      g_assert_cmpstr (json_object_get_string_member (headers, "x-api-key"), ==, "sk-test-key");
    }

  cli_run_clear (&run);
  g_unlink (store);
  rm_files_in (workspace);
  g_rmdir (workspace);
}

typedef struct {
  GMainLoop        *loop;
  GSubprocess      *process;
  GDataInputStream *lines;
  GString          *out;
  const char       *workspace;
  const int        *signals;     /* 0-terminated, sent back to back */
  gboolean          sent;
} SignalRun;

static void signal_line_cb (GObject *object, GAsyncResult *result, gpointer user_data);

static gboolean
send_signals_when_running_cb (gpointer user_data)
{
  SignalRun *r = user_data;
  g_autofree char *path = g_build_filename (r->workspace, "child.pid", NULL);
  g_autofree char *text = NULL;

  /* The command runs once it wrote its child's pid. */
  if (!g_file_get_contents (path, &text, NULL, NULL) || strchr (text, '\n') == NULL)
    return G_SOURCE_CONTINUE;

  for (guint i = 0; r->signals[i] != 0; i++)
    g_subprocess_send_signal (r->process, r->signals[i]);
  r->sent = TRUE;
  return G_SOURCE_REMOVE;
}

static void
signal_line_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  SignalRun *r = user_data;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object),
                                                                     result, NULL, NULL);

  if (line == NULL)
    {
      g_main_loop_quit (r->loop);
      return;
    }
  g_string_append_printf (r->out, "%s\n", line);
  if (strstr (line, "\"type\":\"approval_resolved\"") != NULL)
    g_timeout_add (20, send_signals_when_running_cb, r);
  g_data_input_stream_read_line_async (r->lines, G_PRIORITY_DEFAULT, NULL, signal_line_cb, r);
}

/* Runs an approved `sleep` and stops tally-cli with @signals while it
 * runs; returns the exit status and the events. */
static int
run_and_signal (const int *signals,
                CliRun    *run,
                pid_t     *child)
{
  g_autoptr(TallyTestMock) mock = start_bash_mock ("sleep 300 & echo $! > child.pid; wait");
  g_autofree char *workspace = g_dir_make_tmp ("tally-cli-sig-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (workspace, "store.db", NULL);
  g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                           G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  g_autofree char *pid_text = NULL;
  g_autofree char *pid_path = NULL;
  SignalRun r = { 0 };
  int status;

  r.loop = loop;
  r.out = g_string_new (NULL);
  r.workspace = workspace;
  r.signals = signals;
  r.process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI,
                                           "--base-url", tally_test_mock_get_base_url (mock),
                                           "--workspace", workspace, "--store", store,
                                           "--json", "Wait a while", NULL);
  g_assert_no_error (error);
  g_assert_true (g_output_stream_write_all (g_subprocess_get_stdin_pipe (r.process), "y\n", 2,
                                            NULL, NULL, &error));
  g_assert_no_error (error);
  r.lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (r.process));
  g_data_input_stream_read_line_async (r.lines, G_PRIORITY_DEFAULT, NULL, signal_line_cb, &r);
  g_main_loop_run (loop);

  g_subprocess_wait (r.process, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (r.sent);
  g_assert_true (g_subprocess_get_if_exited (r.process));
  status = g_subprocess_get_exit_status (r.process);

  pid_path = g_build_filename (workspace, "child.pid", NULL);
  g_assert_true (g_file_get_contents (pid_path, &pid_text, NULL, NULL));
  *child = (pid_t) g_ascii_strtoll (pid_text, NULL, 10);
  g_assert_cmpint (*child, >, 1);

  run->out = g_string_free (r.out, FALSE);
  parse_events (run);

  g_object_unref (r.lines);
  g_object_unref (r.process);
  g_unlink (store);
  rm_files_in (workspace);
  g_rmdir (workspace);
  return status;
}

static void
check_cancelled_run (CliRun *run,
                     pid_t   child)
{
  JsonObject *result = nth_event (run, "tool_result", 0);
  JsonObject *last = g_ptr_array_index (run->events, run->events->len - 1);

  /* The running command was stopped and its result recorded… */
  g_assert_nonnull (result);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, "toolu_1");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  /* …with everything it started, before tally-cli exited… */
  g_assert_cmpint (kill (child, 0), ==, -1);
  g_assert_cmpint (errno, ==, ESRCH);
  /* …and the turn ended cancelled, with its receipt. */
  g_assert_cmpstr (event_type (last), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "cancelled");
}

/* SIGTERM and SIGHUP end the turn as Ctrl+C does, with 128 + the signal. */
static void
test_sigterm_sighup (void)
{
  static const int term[] = { SIGTERM, 0 };
  static const int hup[] = { SIGHUP, 0 };
  CliRun run = { 0 };
  pid_t child;

  g_assert_cmpint (run_and_signal (term, &run, &child), ==, 143);
  check_cancelled_run (&run, child);
  cli_run_clear (&run);

  g_assert_cmpint (run_and_signal (hup, &run, &child), ==, 129);
  check_cancelled_run (&run, child);
  cli_run_clear (&run);
}

/* A second Ctrl+C while the first is handled does not skip the tool
 * result and the turn's end. */
static void
test_double_sigint (void)
{
  static const int twice[] = { SIGINT, SIGINT, 0 };
  CliRun run = { 0 };
  pid_t child;

  g_assert_cmpint (run_and_signal (twice, &run, &child), ==, 130);
  check_cancelled_run (&run, child);
  cli_run_clear (&run);
}

/* The card reader's stdin stream is freed (valgrind found it lost). Runs
 * only where valgrind is installed and the build is not instrumented. */
static void
test_stdin_reader_no_leak (void)
{
#if defined(__SANITIZE_ADDRESS__)
  g_test_skip ("valgrind cannot run an AddressSanitizer build");
#else
  g_autofree char *valgrind = g_find_program_in_path ("valgrind");
  g_autoptr(TallyTestMock) mock = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *store = NULL;
  g_autofree char *base_url = NULL;
  CliRun run = { 0 };

  if (valgrind == NULL)
    {
      g_test_skip ("valgrind is not installed");
      return;
    }

  mock = start_bash_mock ("echo hello");
  workspace = g_dir_make_tmp ("tally-cli-leak-XXXXXX", NULL);
  store = g_build_filename (workspace, "store.db", NULL);
  base_url = g_strdup (tally_test_mock_get_base_url (mock));
  {
    const char *args[] = { "--leak-check=full", "--show-leak-kinds=definite", "--quiet",
                           TALLY_TEST_CLI,
                           "--base-url", base_url, "--workspace", workspace, "--store", store,
                           "--json", "Say hello", NULL };
    g_autoptr(GSubprocessLauncher) launcher = make_launcher (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                             G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                             G_SUBPROCESS_FLAGS_STDERR_PIPE);
    g_autoptr(GPtrArray) argv = g_ptr_array_new ();
    g_autoptr(GSubprocess) process = NULL;
    g_autoptr(GError) error = NULL;

    g_ptr_array_add (argv, valgrind);
    for (guint i = 0; args[i] != NULL; i++)
      g_ptr_array_add (argv, (gpointer) args[i]);
    g_ptr_array_add (argv, NULL);
    process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
    g_assert_no_error (error);
    g_subprocess_communicate_utf8 (process, "y\n", NULL, &run.out, &run.err, &error);
    g_assert_no_error (error);
    /* Only the card reader is checked here: GLib's own thread caches
     * show up as lost too. */
    if (strstr (run.err, "read_card_line") != NULL)
      g_printerr ("%s", run.err);
    g_assert_null (strstr (run.err, "read_card_line"));
    g_assert_true (g_subprocess_get_if_exited (process));
    g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  }
  parse_events (&run);
  g_assert_nonnull (strstr (json_object_get_string_member (nth_event (&run, "tool_result", 0), "content"),
                            "hello"));
  cli_run_clear (&run);
  g_unlink (store);
  rm_files_in (workspace);
  g_rmdir (workspace);
#endif
}

/* HTTP 401 and 403: the error says the key was refused, and tally-cli says
 * how to change it (ANTHROPIC_API_KEY). */
static void
test_key_refused (void)
{
  static const char *const statuses[][3] = {
    { "401", "authentication_error", "invalid x-api-key" },
    { "403", "permission_error", "Your API key does not have permission to use the specified resource." },
  };

  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *scenario = g_strdup_printf (
        "{\"responses\":[{\"error\":{\"type\":\"%s\",\"message\":\"%s\"}},"
        "{\"error\":{\"type\":\"%s\",\"message\":\"%s\"}}]}",
        statuses[i][1], statuses[i][2], statuses[i][1], statuses[i][2]);
      g_autoptr(TallyTestMock) mock = tally_test_mock_start (scenario, &error);
      g_autofree char *expected = g_strdup_printf ("The Messages API refused the API key (HTTP %s): %s",
                                                   statuses[i][0], statuses[i][2]);
      const char *json_args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--json", "Hello", NULL };
      const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "Hello", NULL };
      CliRun run = { 0 };
      JsonObject *error_event;

      g_assert_no_error (error);
      run_cli (&run, json_args);
      g_assert_cmpint (run.exit_status, ==, 1);
      error_event = find_event (&run, "error");
      g_assert_nonnull (error_event);
      g_assert_cmpstr (json_object_get_string_member (error_event, "kind"), ==, "http");
      g_assert_cmpstr (json_object_get_string_member (error_event, "message"), ==, expected);
      g_assert_cmpint (json_object_get_int_member (error_event, "status"), ==, atoi (statuses[i][0]));
      cli_run_clear (&run);

      run_cli (&run, args);
      g_assert_cmpint (run.exit_status, ==, 1);
      g_assert_nonnull (strstr (run.err, expected));
      g_assert_nonnull (strstr (run.err, "The API key was refused. Set ANTHROPIC_API_KEY to a valid key"));
      cli_run_clear (&run);
    }
}

/* --max-cost: before each API call the session's cost so far is compared
 * with the cap; once reached, the turn stops without sending (every
 * tool_use already answered), with an error of kind budget, status failed
 * and exit 1. The cost of earlier turns counts on --resume. */
static void
test_max_cost (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_B1\",\"name\":\"get_schema\",\"input\":{}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":10000,\"output_tokens\":100}}},"
    "{\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_B2\",\"name\":\"get_schema\",\"input\":{\"table\":\"Genre\"}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":10000,\"output_tokens\":100}}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Within budget again.\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":100,\"output_tokens\":10}}}]}", &error);
  g_autofree char *chinook = chinook_path ();
  g_autofree char *dir = g_dir_make_tmp ("tally-cli-cost-XXXXXX", NULL);
  g_autofree char *store = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *id = NULL;
  CliRun run = { 0 };
  JsonObject *error_event;
  JsonObject *last;

  g_assert_no_error (error);

  /* Each call costs 10,000 × $3 + 100 × $15 per million = $0.0315: the
   * second call is sent ($0.0315 < $0.05), the third is not ($0.063). */
  {
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--store", store, "--db", chinook,
                           "--max-cost", "0.05", "--json", "Describe the schema", NULL };

    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 1);
    g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);
    id = g_strdup (json_object_get_string_member (find_event (&run, "session_created"), "session_id"));
    error_event = find_event (&run, "error");
    g_assert_nonnull (error_event);
    g_assert_cmpstr (json_object_get_string_member (error_event, "kind"), ==, "budget");
    g_assert_cmpfloat_with_epsilon (json_object_get_double_member (error_event, "spent_usd"), 0.063, 1e-9);
    g_assert_cmpfloat_with_epsilon (json_object_get_double_member (error_event, "max_cost_usd"), 0.05, 1e-9);
    g_assert_cmpstr (json_object_get_string_member (error_event, "message"), ==,
                     "This session has cost $0.0630, which reached its spend cap of $0.0500, so Tally stopped "
                     "before the next API call. Nothing more was sent.");
    g_assert_false (json_object_get_boolean_member (error_event, "retryable"));
    last = g_ptr_array_index (run.events, run.events->len - 1);
    g_assert_cmpstr (event_type (last), ==, "turn_finished");
    g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "failed");
    g_assert_cmpint (json_object_get_int_member (last, "api_calls"), ==, 2);
    /* Both tool calls ran and were answered before the stop. */
    {
      guint results = 0;

      for (guint i = 0; i < run.events->len; i++)
        if (g_str_equal (event_type (g_ptr_array_index (run.events, i)), "tool_result"))
          {
            g_assert_false (json_object_get_boolean_member (g_ptr_array_index (run.events, i), "is_error"));
            results++;
          }
      g_assert_cmpuint (results, ==, 2);
    }
    cli_run_clear (&run);
  }

  /* Resumed under the same cap: the earlier turn's cost counts, nothing is
   * sent; the readable form says how to go on. */
  {
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--store", store,
                           "--resume", id, "--max-cost", "0.05", "Go on", NULL };

    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 1);
    g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);
    g_assert_nonnull (strstr (run.err, "Error (budget): This session has cost $0.0630"));
    g_assert_nonnull (strstr (run.err, "--max-cost"));
    cli_run_clear (&run);
  }

  /* A higher cap goes on, and the history it sends is valid. */
  {
    const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--store", store,
                           "--resume", id, "--max-cost", "1", "--json", "Go on now", NULL };

    run_cli (&run, args);
    g_assert_cmpint (run.exit_status, ==, 0);
    g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 3);
    g_assert_cmpstr (json_object_get_string_member (g_ptr_array_index (run.events, run.events->len - 1), "status"),
                     ==, "done");
    cli_run_clear (&run);
  }

  {
    g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;

    while (d != NULL && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        g_unlink (path);
      }
    g_rmdir (dir);
  }
}

/* Data files (docs/data-files.md): --db FILE.csv and --data import before
 * the turn, one line per table on stderr, and query_database reads the
 * table; an unchanged file is not imported again; bad input fails. */
static void
test_data_files (void)
{
  static const char scenario[] =
    "{\"responses\": ["
    " {\"message\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"toolu_01\", "
    "   \"name\": \"query_database\", \"input\": {\"sql\": "
    "   \"SELECT s.region, e.kind FROM sales s JOIN events e ON e.id = s.id ORDER BY s.id\"}}],"
    "  \"stop_reason\": \"tool_use\", \"usage\": {\"input_tokens\": 10, \"output_tokens\": 5}}},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Done.\"}],"
    "  \"stop_reason\": \"end_turn\", \"usage\": {\"input_tokens\": 10, \"output_tokens\": 5}}}]}";
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (scenario, &error);
  g_autofree char *workspace = g_dir_make_tmp ("tally-cli-data-XXXXXX", &error);
  g_autofree char *sales = g_build_filename (tally_test_data_dir (), "data", "import", "sales.csv", NULL);
  g_autofree char *events = g_build_filename (tally_test_data_dir (), "data", "import", "events.jsonl", NULL);
  g_autofree char *ragged = g_build_filename (tally_test_data_dir (), "data", "import", "ragged.csv", NULL);
  g_autofree char *chinook = chinook_path ();
  g_autofree char *database = NULL;
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--workspace", workspace,
                         "--db", sales, "--data", events, "--json", "Which regions bought?", NULL };
  const char *bad_args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--workspace", workspace,
                             "--data", ragged, "Which regions bought?", NULL };
  const char *mixed_args[] = { "--db", chinook, "--data", sales, "Which regions bought?", NULL };
  CliRun run = { 0 };
  CliRun again = { 0 };
  CliRun bad = { 0 };
  CliRun mixed = { 0 };
  JsonObject *result;

  g_assert_no_error (error);
  run_cli (&run, args);
  g_assert_cmpint (run.exit_status, ==, 0);
  g_assert_nonnull (strstr (run.err, "sales.csv: table sales, 4 rows, 7 columns\n"));
  g_assert_nonnull (strstr (run.err, "events.jsonl: table events, 3 rows, 7 columns\n"));
  result = nth_event (&run, "tool_result", 0);
  g_assert_nonnull (result);
  g_assert_false (json_object_get_boolean_member (result, "is_error"));
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==,
                   "region | kind\nNorth | view\nSouth | buy\nEast, upper | view\n(3 rows)");
  database = g_build_filename (workspace, ".tally", "data.db", NULL);
  g_assert_true (g_file_test (database, G_FILE_TEST_IS_REGULAR));

  /* The mock has no responses left: the turn fails, after the import. */
  run_cli (&again, args);
  g_assert_nonnull (strstr (again.err, "sales.csv: table sales, 4 rows, 7 columns (unchanged, not imported again)\n"));

  run_cli (&bad, bad_args);
  g_assert_cmpint (bad.exit_status, ==, 1);
  g_assert_nonnull (strstr (bad.err, "tally-cli: cannot import the data files: ragged.csv: line 3 has 2 fields "
                                     "but line 1 has 3"));
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2 + 1);

  run_cli (&mixed, mixed_args);
  g_assert_cmpint (mixed.exit_status, ==, 2);
  g_assert_nonnull (strstr (mixed.err, "--data imports into a database of its own"));

  cli_run_clear (&run);
  cli_run_clear (&again);
  cli_run_clear (&bad);
  cli_run_clear (&mixed);
  tally_test_rm_rf (workspace);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/cli/approval-shows-what-runs", test_approval_shows_what_runs);
  g_test_add_func ("/tally/cli/refusal-not-echoed", test_refusal_not_echoed);
  g_test_add_func ("/tally/cli/empty-tool-id", test_empty_tool_id);
  g_test_add_func ("/tally/cli/tool-input-nul-not-run", test_tool_input_nul_not_run);
  g_test_add_func ("/tally/cli/tool-use-stop-without-block", test_tool_use_stop_without_block);
  g_test_add_func ("/tally/cli/json-tool-loop", test_json_tool_loop);
  g_test_add_func ("/tally/cli/readable-output", test_readable_output);
  g_test_add_func ("/tally/cli/failed-exit", test_failed_exit);
  g_test_add_func ("/tally/cli/key-refused", test_key_refused);
  g_test_add_func ("/tally/cli/max-cost", test_max_cost);
  g_test_add_func ("/tally/cli/usage-exit", test_usage_exit);
  g_test_add_func ("/tally/cli/thinking-optional-budget", test_thinking_optional_budget);
  g_test_add_func ("/tally/cli/leave-plan-mode-on-resume", test_leave_plan_mode_on_resume);
  g_test_add_func ("/tally/cli/sigint-exit", test_sigint_exit);
  g_test_add_func ("/tally/cli/idle-timeout", test_idle_timeout);
  g_test_add_func ("/tally/cli/list-models", test_list_models);
  g_test_add_func ("/tally/cli/output-full", test_output_full);
  g_test_add_func ("/tally/cli/db-locked-briefly", test_db_locked_briefly);
  g_test_add_func ("/tally/cli/stdin-approvals", test_stdin_approvals);
  g_test_add_func ("/tally/cli/stdin-always-and-questions", test_stdin_always_and_questions);
  g_test_add_func ("/tally/cli/key-out-of-reach", test_key_out_of_reach);
  g_test_add_func ("/tally/cli/sigterm-sighup", test_sigterm_sighup);
  g_test_add_func ("/tally/cli/double-sigint", test_double_sigint);
  g_test_add_func ("/tally/cli/stdin-reader-no-leak", test_stdin_reader_no_leak);
  g_test_add_func ("/tally/cli/store-write-failure", test_store_write_failure);
  g_test_add_func ("/tally/cli/resume-read-only-store", test_resume_read_only_store);
  g_test_add_func ("/tally/cli/data-files", test_data_files);

  return g_test_run ();
}
