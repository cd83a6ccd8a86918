/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The flight recorder through tally-cli: --list, --replay, --search,
 * --export, a process killed mid-stream and resumed, a cancelled or killed
 * tool run resumed, and the history echoed byte-exact on --resume. */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tally-store.h"
#include "tally-test-mock.h"
#include "tally-test-util.h"

typedef struct {
  char *dir;
  char *store;
} Env;

static void
env_init (Env *env)
{
  env->dir = g_dir_make_tmp ("tally-resume-XXXXXX", NULL);
  g_assert_nonnull (env->dir);
  env->store = g_build_filename (env->dir, "tally.db", NULL);
}

static void
env_clear (Env *env)
{
  g_autoptr(GDir) dir = g_dir_open (env->dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (env->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (env->dir);
  g_free (env->dir);
  g_free (env->store);
}

static GSubprocessLauncher *
launcher_new (GSubprocessFlags flags)
{
  GSubprocessLauncher *launcher = g_subprocess_launcher_new (flags);

  g_subprocess_launcher_setenv (launcher, "ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "ANTHROPIC_BASE_URL");
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  return launcher;
}

/* Runs tally-cli to completion; returns its exit status and stdout. */
static int
cli (char       **out,
     const char  *first_arg,
     ...)
{
  g_autoptr(GSubprocessLauncher) launcher = launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *stdout_text = NULL;
  const char *arg;
  va_list args;

  g_ptr_array_add (argv, (gpointer)TALLY_TEST_CLI);
  va_start (args, first_arg);
  for (arg = first_arg; arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer)arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_launcher_spawnv (launcher, (const char * const *)argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &stdout_text, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));

  if (out != NULL)
    *out = g_steal_pointer (&stdout_text);
  return g_subprocess_get_exit_status (process);
}

static char *
session_id_of (const char *json_lines)
{
  g_autofree char *first = g_strndup (json_lines, strcspn (json_lines, "\n"));
  g_autoptr(JsonObject) event = tally_test_parse_object (first);

  return g_strdup (json_object_get_string_member (event, "session_id"));
}

/* The answer text of JSON event lines: their text_delta texts joined. */
static char *
streamed_text (const char *json_lines)
{
  g_auto(GStrv) lines = g_strsplit (json_lines, "\n", -1);
  GString *text = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonObject) event = NULL;

      if (lines[i][0] == '\0')
        continue;
      event = tally_test_parse_object (lines[i]);
      if (g_str_equal (json_object_get_string_member (event, "type"), "text_delta"))
        g_string_append (text, json_object_get_string_member (event, "text"));
    }
  return g_string_free (text, FALSE);
}

static JsonObject *
request_body (TallyTestMock *mock,
              guint          n)
{
  g_autoptr(JsonArray) requests = tally_test_mock_dup_requests (mock);
  JsonObject *request;

  g_assert_cmpuint (json_array_get_length (requests), >, n);
  request = json_array_get_object_element (requests, n);
  g_assert_cmpint (json_object_get_int_member (request, "status"), ==, 200);
  return json_object_ref (json_object_get_object_member (request, "body"));
}

/* --list, --replay (verbatim), --search and --export after a normal turn. */
static void
test_list_replay_export (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Four stores: two in Leeds, two in York.\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":2000,\"output_tokens\":100}}}]}", &error);
  Env env;
  g_autofree char *live = NULL;
  g_autofree char *list = NULL;
  g_autofree char *replay = NULL;
  g_autofree char *search = NULL;
  g_autofree char *no_match = NULL;
  g_autofree char *markdown = NULL;
  g_autofree char *jsonl = NULL;
  g_autofree char *id = NULL;
  g_autofree char *expected_list_prefix = NULL;
  g_auto(GStrv) fields = NULL;

  g_assert_no_error (error);
  env_init (&env);

  g_assert_cmpint (cli (&live, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--json", "How many stores does Beanline have?", NULL), ==, 0);
  id = session_id_of (live);

  g_assert_cmpint (cli (&list, "--store", env.store, "--list", NULL), ==, 0);
  fields = g_strsplit (g_strchomp (list), "\t", -1);
  g_assert_cmpuint (g_strv_length (fields), ==, 4);
  g_assert_cmpstr (fields[0], ==, id);
  g_assert_true (g_regex_match_simple ("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$", fields[1], 0, 0));
  g_assert_cmpstr (fields[2], ==, "How many stores does Beanline have?");
  /* 2000 in at $3/M and 100 out at $15/M on Sonnet 5. */
  g_assert_cmpstr (fields[3], ==, "0.0075");

  /* --replay --json prints exactly what the live run printed. */
  g_assert_cmpint (cli (&replay, "--store", env.store, "--replay", id, "--json", NULL), ==, 0);
  g_assert_cmpstr (replay, ==, live);

  /* The readable replay shows the prompt, the answer and the receipt. */
  {
    g_autofree char *readable = NULL;
    g_assert_cmpint (cli (&readable, "--store", env.store, "--replay", id, NULL), ==, 0);
    g_assert_nonnull (strstr (readable, "> How many stores does Beanline have?"));
    g_assert_nonnull (strstr (readable, "Four stores: two in Leeds, two in York."));
    g_assert_nonnull (strstr (readable, "— done · $0.0075"));
  }

  g_assert_cmpint (cli (&search, "--store", env.store, "--search", "Leeds", NULL), ==, 0);
  g_assert_true (g_str_has_prefix (search, id));
  g_assert_cmpint (cli (&no_match, "--store", env.store, "--search", "espresso \"AND (", NULL), ==, 0);
  g_assert_cmpstr (no_match, ==, "");

  g_assert_cmpint (cli (&markdown, "--store", env.store, "--export", id, "--format", "md", NULL), ==, 0);
  g_assert_nonnull (strstr (markdown, "How many stores does Beanline have?"));
  g_assert_nonnull (strstr (markdown, "Four stores: two in Leeds, two in York."));
  g_assert_nonnull (strstr (markdown, "0.0075"));

  g_assert_cmpint (cli (&jsonl, "--store", env.store, "--export", id, "--format", "jsonl", NULL), ==, 0);
  g_assert_cmpstr (jsonl, ==, live);

  /* An unknown id fails cleanly; a bad format is a usage error. */
  g_assert_cmpint (cli (NULL, "--store", env.store, "--replay", "nonexistent-session", NULL), ==, 1);
  g_assert_cmpint (cli (NULL, "--store", env.store, "--export", id, "--format", "pdf", NULL), ==, 2);

  env_clear (&env);
}

typedef struct {
  GMainLoop        *loop;
  GSubprocess      *process;
  GDataInputStream *lines;
  GPtrArray        *received;   /* lines read, in order */
  const char       *kill_after; /* substring of the line after which to kill */
  int               signal;
  guint             kill_delay_ms;
  guint             stable_count;
  gboolean          killed;
} Kill;

static void kill_read_cb (GObject *object, GAsyncResult *result, gpointer user_data);

static gboolean
kill_now_cb (gpointer user_data)
{
  Kill *k = user_data;

  /* Everything received until now was printed at least kill_delay_ms ago
   * or just now; the store must hold at least what came before the delay. */
  g_subprocess_send_signal (k->process, k->signal);
  return G_SOURCE_REMOVE;
}

static void
kill_read_next (Kill *k)
{
  g_data_input_stream_read_line_async (k->lines, G_PRIORITY_DEFAULT, NULL, kill_read_cb, k);
}

static void
kill_read_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Kill *k = user_data;
  char *line;

  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result, NULL, NULL);
  if (line == NULL)
    {
      g_main_loop_quit (k->loop);
      return;
    }

  g_ptr_array_add (k->received, line);
  if (!k->killed && strstr (line, k->kill_after) != NULL)
    {
      k->killed = TRUE;
      k->stable_count = k->received->len;
      g_timeout_add (k->kill_delay_ms, kill_now_cb, k);
    }
  kill_read_next (k);
}

static void
run_and_kill (Kill       *k,
              const char *base_url,
              const char *store,
              const char *db,
              const char *prompt)
{
  g_autoptr(GSubprocessLauncher) launcher = launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GError) error = NULL;

  k->loop = g_main_loop_new (NULL, FALSE);
  k->received = g_ptr_array_new_with_free_func (g_free);
  if (db != NULL)
    k->process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI, "--base-url", base_url,
                                              "--store", store, "--db", db, "--json", prompt, NULL);
  else
    k->process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI, "--base-url", base_url,
                                              "--store", store, "--json", prompt, NULL);
  g_assert_no_error (error);
  k->lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (k->process));
  kill_read_next (k);
  g_main_loop_run (k->loop);
  g_subprocess_wait (k->process, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (k->killed);
}

static void
kill_clear (Kill *k)
{
  g_clear_pointer (&k->loop, g_main_loop_unref);
  g_clear_object (&k->lines);
  g_clear_object (&k->process);
  g_clear_pointer (&k->received, g_ptr_array_unref);
}

/* kill -9 in the middle of a streamed reply, then --resume. */
static void
test_crash_mid_stream_then_resume (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"A long and careful answer that streams slowly, one small piece at a time, "
    "so that the process can be killed while it is still being written.\"}],\"stop_reason\":\"end_turn\",\"chunk\":3},"
    "\"drip_ms\":40,\"drip_bytes\":120},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Picking up again.\"}],\"stop_reason\":\"end_turn\"}}"
    "]}", &error);
  Env env;
  Kill k = { 0 };
  g_autofree char *replay = NULL;
  g_autofree char *id = NULL;
  g_autofree char *resumed = NULL;
  g_auto(GStrv) stored = NULL;
  g_autoptr(JsonObject) body = NULL;
  JsonArray *messages;
  JsonArray *content;
  guint n_stored;

  g_assert_no_error (error);
  env_init (&env);

  k.kill_after = "\"type\":\"text_delta\"";
  k.signal = SIGKILL;
  k.kill_delay_ms = 400;
  run_and_kill (&k, tally_test_mock_get_base_url (mock), env.store, NULL, "Tell me a long story");
  g_assert_true (g_subprocess_get_if_signaled (k.process));
  g_assert_cmpint (g_subprocess_get_term_sig (k.process), ==, SIGKILL);

  id = session_id_of (g_ptr_array_index (k.received, 0));
  g_assert_cmpint (cli (&replay, "--store", env.store, "--replay", id, "--json", NULL), ==, 0);
  stored = g_strsplit (g_strchomp (replay), "\n", -1);
  n_stored = g_strv_length (stored);

  /* Every event printed before the cut (at least 400 ms before the kill)
   * is stored, byte for byte, and the store holds nothing the CLI did not
   * print. */
  g_assert_cmpuint (n_stored, >=, k.stable_count);
  g_assert_cmpuint (n_stored, <=, k.received->len);
  for (guint i = 0; i < n_stored; i++)
    g_assert_cmpstr (stored[i], ==, g_ptr_array_index (k.received, i));
  g_assert_null (strstr (replay, "turn_finished"));
  /* Read as text, the log says that its turn did not finish. */
  {
    g_autofree char *text = NULL;

    g_assert_cmpint (cli (&text, "--store", env.store, "--replay", id, NULL), ==, 0);
    g_assert_true (g_str_has_prefix (text, "\n> Tell me a long story\n"));
    g_assert_true (g_str_has_suffix (text, "\n(The last turn did not finish: Tally stopped during it. "
                                           "It is closed when the session is next opened or resumed.)\n"));
  }

  /* Resume: the interrupted turn is closed in the log, the cut reply stays
   * out of the history, and the mock (which checks pairing) accepts. */
  g_assert_cmpint (cli (&resumed, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--resume", id, "--json", "Please go on", NULL), ==, 0);
  g_assert_nonnull (strstr (resumed, "\"type\":\"turn_finished\""));
  {
    g_autofree char *text = streamed_text (resumed);
    g_assert_cmpstr (text, ==, "Picking up again.");
  }

  body = request_body (mock, 1);
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 1);
  content = json_object_get_array_member (json_array_get_object_element (messages, 0), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==,
                   "Tell me a long story");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"), ==,
                   "Please go on");

  /* The replayed log now says the first turn failed, and continues seq. */
  g_clear_pointer (&replay, g_free);
  g_assert_cmpint (cli (&replay, "--store", env.store, "--replay", id, "--json", NULL), ==, 0);
  g_assert_nonnull (strstr (replay, "\"kind\":\"store\""));
  g_assert_nonnull (strstr (replay, "\"status\":\"failed\""));
  {
    g_autofree char *text = NULL;

    g_assert_cmpint (cli (&text, "--store", env.store, "--replay", id, NULL), ==, 0);
    g_assert_null (strstr (text, "did not finish"));
  }
  {
    g_auto(GStrv) lines = g_strsplit (g_strchomp (replay), "\n", -1);

    for (guint i = 0; lines[i] != NULL; i++)
      {
        g_autoptr(JsonObject) event = tally_test_parse_object (lines[i]);
        g_assert_cmpint (json_object_get_int_member (event, "seq"), ==, i + 1);
      }
  }

  kill_clear (&k);
  env_clear (&env);
}

/* A tool run interrupted, by Ctrl+C or by kill -9, then --resume: the
 * orphan gets an is_error result and the mock accepts the request. */
static void
check_tool_interruption (int         sig,
                         const char *expected_words)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *chinook = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"Count everything.\",\"signature\":\"c2lnLXNsb3c=\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_Slow\",\"name\":\"query_database\",\"input\":{\"sql\":"
    "\"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c\"}}"
    "],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Stopped as asked.\"}],\"stop_reason\":\"end_turn\"}}"
    "]}", &error);
  Env env;
  Kill k = { 0 };
  g_autofree char *id = NULL;
  g_autofree char *resumed = NULL;
  g_autoptr(JsonObject) body = NULL;
  JsonArray *messages;
  JsonArray *assistant;
  JsonArray *content;
  JsonObject *result;

  g_assert_no_error (error);
  env_init (&env);

  k.kill_after = "\"type\":\"approval_resolved\"";
  k.signal = sig;
  k.kill_delay_ms = 300;
  run_and_kill (&k, tally_test_mock_get_base_url (mock), env.store, chinook, "Count to two billion");
  if (sig == SIGINT)
    {
      g_assert_true (g_subprocess_get_if_exited (k.process));
      g_assert_cmpint (g_subprocess_get_exit_status (k.process), ==, 130);
    }
  id = session_id_of (g_ptr_array_index (k.received, 0));

  g_assert_cmpint (cli (&resumed, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--resume", id, "--json", "Never mind", NULL), ==, 0);
  {
    g_autofree char *text = streamed_text (resumed);
    g_assert_cmpstr (text, ==, "Stopped as asked.");
  }

  body = request_body (mock, 1);
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 3);

  /* The assistant turn goes back byte-exact, thinking and signature too. */
  assistant = json_object_get_array_member (json_array_get_object_element (messages, 1), "content");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 0), "signature"), ==,
                   "c2lnLXNsb3c=");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 0), "thinking"), ==,
                   "Count everything.");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 1), "id"), ==, "toolu_Slow");

  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  result = json_array_get_object_element (content, 0);
  g_assert_cmpstr (json_object_get_string_member (result, "tool_use_id"), ==, "toolu_Slow");
  g_assert_true (json_object_get_boolean_member (result, "is_error"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "content"), expected_words));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "text"), ==, "Never mind");

  kill_clear (&k);
  env_clear (&env);
}

static void
test_cancel_tool_then_resume (void)
{
  check_tool_interruption (SIGINT, "interrupted");
}

static void
test_kill_tool_then_resume (void)
{
  check_tool_interruption (SIGKILL, "interrupted");
}

/* redacted_thinking and thinking come back byte-exact on --resume. */
static void
test_resume_echoes_byte_exact (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"Ünïcödé \\\"quoted\\\" \\\\ thoughts\\nline two\",\"signature\":\"RXJyb3JTaWduYXR1cmU+PD4=\"},"
    "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP\"},"
    "{\"type\":\"text\",\"text\":\"Done thinking.\"}"
    "],\"stop_reason\":\"end_turn\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Again.\"}],\"stop_reason\":\"end_turn\"}}"
    "]}", &error);
  Env env;
  g_autofree char *first = NULL;
  g_autofree char *id = NULL;
  g_autoptr(JsonObject) body = NULL;
  JsonArray *messages;
  JsonArray *assistant;

  g_assert_no_error (error);
  env_init (&env);

  g_assert_cmpint (cli (&first, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--model", "claude-sonnet-4-5", "--thinking", "--json", "Think hard", NULL), ==, 0);
  id = session_id_of (first);
  g_assert_cmpint (cli (NULL, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--resume", id, "--thinking", "--json", "Once more", NULL), ==, 0);

  body = request_body (mock, 1);
  /* --resume keeps the session's model. */
  g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "claude-sonnet-4-5");
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 3);
  assistant = json_object_get_array_member (json_array_get_object_element (messages, 1), "content");
  g_assert_cmpuint (json_array_get_length (assistant), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 0), "thinking"), ==,
                   "Ünïcödé \"quoted\" \\ thoughts\nline two");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 0), "signature"), ==,
                   "RXJyb3JTaWduYXR1cmU+PD4=");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 1), "type"), ==,
                   "redacted_thinking");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (assistant, 1), "data"), ==,
                   "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP");

  env_clear (&env);
}

static GPtrArray *
blocks_of (const char *first,
           ...)
{
  GPtrArray *blocks = g_ptr_array_new_with_free_func (g_free);
  va_list args;

  va_start (args, first);
  for (const char *b = first; b != NULL; b = va_arg (args, const char *))
    g_ptr_array_add (blocks, g_strdup (b));
  va_end (args);
  return blocks;
}

/* A session stored by a Tally that ran calls with a repeated tool_use id
 * (twice in one message, once more in a later one): every request with that
 * history is refused. --resume repairs it, keeps the repair, and the
 * session goes on. */
static void
test_resume_repairs_duplicate_ids (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Hello.\"}],\"stop_reason\":\"end_turn\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Repaired.\"}],\"stop_reason\":\"end_turn\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Still fine.\"}],\"stop_reason\":\"end_turn\"}}"
    "]}", &error);
  Env env;
  g_autofree char *first = NULL;
  g_autofree char *id = NULL;
  g_autoptr(JsonObject) body = NULL;
  g_autoptr(JsonObject) body2 = NULL;
  JsonArray *messages;
  JsonArray *content;
  const char *tool_use = "{\"type\":\"tool_use\",\"id\":\"toolu_R\",\"name\":\"get_schema\",\"input\":{}}";
  const char *result = "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_R\",\"content\":\"Genre(GenreId, Name)\"}";

  g_assert_no_error (error);
  env_init (&env);

  g_assert_cmpint (cli (&first, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--json", "Hi", NULL), ==, 0);
  id = session_id_of (first);

  /* Write the broken history the old code left behind. */
  {
    g_autoptr(TallyStore) store = tally_store_open (env.store, &error);
    g_autoptr(GPtrArray) m1 = blocks_of (tool_use, tool_use, NULL);
    g_autoptr(GPtrArray) m2 = blocks_of (result, result, NULL);
    g_autoptr(GPtrArray) m3 = blocks_of (tool_use, NULL);
    g_autoptr(GPtrArray) m4 = blocks_of (result, "{\"type\":\"text\",\"text\":\"Go on\"}", NULL);

    g_assert_no_error (error);
    g_assert_true (tally_store_save_message (store, id, 1, "assistant", m1, &error));
    g_assert_true (tally_store_save_message (store, id, 2, "user", m2, &error));
    g_assert_true (tally_store_save_message (store, id, 3, "assistant", m3, &error));
    g_assert_true (tally_store_save_message (store, id, 4, "user", m4, &error));
    g_assert_true (tally_store_flush (store, &error));
    g_assert_no_error (error);
  }

  g_assert_cmpint (cli (NULL, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--resume", id, "--json", "Once more", NULL), ==, 0);
  body = request_body (mock, 1);
  messages = json_object_get_array_member (body, "messages");
  g_assert_cmpuint (json_array_get_length (messages), ==, 5);
  content = json_object_get_array_member (json_array_get_object_element (messages, 1), "content");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "id"), ==, "toolu_R");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "id"), ==, "toolu_R_dup1");
  content = json_object_get_array_member (json_array_get_object_element (messages, 2), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "tool_use_id"), ==, "toolu_R");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 1), "tool_use_id"), ==, "toolu_R_dup1");
  content = json_object_get_array_member (json_array_get_object_element (messages, 3), "content");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "id"), ==, "toolu_R_dup2");
  content = json_object_get_array_member (json_array_get_object_element (messages, 4), "content");
  g_assert_cmpuint (json_array_get_length (content), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "tool_use_id"), ==, "toolu_R_dup2");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 2), "text"), ==, "Once more");

  /* The repair was kept: the next resume sends the same history. */
  g_assert_cmpint (cli (NULL, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--resume", id, "--json", "And again", NULL), ==, 0);
  body2 = request_body (mock, 2);
  content = json_object_get_array_member (json_array_get_object_element (json_object_get_array_member (body2, "messages"), 3),
                                          "content");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "id"), ==, "toolu_R_dup2");

  env_clear (&env);
}

/* Item 10 of issue 10: one writer per session. A tally-cli that resumed a
 * session and waits on an approval card holds the session; a second
 * --resume of it is refused (exit 1, nothing sent), while --replay and
 * --list still work; once the first ends, resuming works again and the
 * log has one turn after the other, no "repair" of a live turn. */
static void
test_one_writer_per_session (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) first = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Six cafés.\"}],"
    "\"stop_reason\":\"end_turn\"}}]}", &error);
  g_autoptr(TallyTestMock) holder_mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\","
    "\"input\":{\"command\":\"echo held\"}}],\"stop_reason\":\"tool_use\"}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Not run.\"}],\"stop_reason\":\"end_turn\"}}]}",
    &error);
  g_autoptr(TallyTestMock) second_mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Again.\"}],"
    "\"stop_reason\":\"end_turn\"}}]}", &error);
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) refused = NULL;
  g_autoptr(GDataInputStream) holder_out = NULL;
  g_autofree char *live = NULL;
  g_autofree char *id = NULL;
  g_autofree char *refused_out = NULL;
  g_autofree char *refused_err = NULL;
  g_autofree char *replay = NULL;
  g_autofree char *list = NULL;
  g_autofree char *holder_rest = NULL;
  g_autofree char *workspace = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean card = FALSE;
  gint64 seq = 0;
  Env env;

  g_assert_no_error (error);
  env_init (&env);
  workspace = g_strdup (env.dir);

  g_assert_cmpint (cli (&live, "--base-url", tally_test_mock_get_base_url (first), "--store", env.store,
                        "--workspace", workspace, "--json", "How many cafés?", NULL), ==, 0);
  id = session_id_of (live);

  /* The holder: resumed, waiting on its card (stdin stays open) */
  launcher = launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  holder = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI,
                                        "--base-url", tally_test_mock_get_base_url (holder_mock),
                                        "--store", env.store, "--resume", id, "--json",
                                        "Run something", NULL);
  g_assert_no_error (error);
  holder_out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (holder));
  while (!card)
    {
      g_autofree char *line = g_data_input_stream_read_line_utf8 (holder_out, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_nonnull (line);
      card = strstr (line, "\"type\":\"approval_request\"") != NULL;
    }

  /* A second writer is refused before anything is sent or repaired */
  g_clear_object (&launcher);
  launcher = launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  refused = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI,
                                         "--base-url", tally_test_mock_get_base_url (second_mock),
                                         "--store", env.store, "--resume", id, "--json", "Me too", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (refused, NULL, NULL, &refused_out, &refused_err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (refused));
  g_assert_cmpint (g_subprocess_get_exit_status (refused), ==, 1);
  g_assert_nonnull (strstr (refused_err, "This session is open in another Tally window or process"));
  g_assert_cmpuint (tally_test_mock_get_n_requests (second_mock), ==, 0);
  /* … and with --json says so as one `error` event of kind `store`, which
   * is not in the log (seq 0): the log is the holder's */
  g_assert_cmpuint (strlen (refused_out), >, 0);
  /* one line: its only newline ends it */
  g_assert_true (strchr (refused_out, '\n') == refused_out + strlen (refused_out) - 1);
  {
    g_autoptr(JsonObject) event = tally_test_parse_object (refused_out);

    g_assert_cmpstr (json_object_get_string_member (event, "type"), ==, "error");
    g_assert_cmpint (json_object_get_int_member (event, "seq"), ==, 0);
    g_assert_cmpstr (json_object_get_string_member (event, "session_id"), ==, id);
    g_assert_cmpstr (json_object_get_string_member (event, "kind"), ==, "store");
    g_assert_false (json_object_get_boolean_member (event, "retryable"));
    g_assert_nonnull (strstr (json_object_get_string_member (event, "message"),
                              "This session is open in another Tally window or process"));
  }

  /* Reading needs no lock */
  g_assert_cmpint (cli (&replay, "--store", env.store, "--replay", id, "--json", NULL), ==, 0);
  g_assert_true (g_str_has_prefix (replay, live));
  g_assert_cmpint (cli (&list, "--store", env.store, "--list", NULL), ==, 0);
  g_assert_true (g_str_has_prefix (list, id));
  /* Read as text while the holder's turn waits on its card, the log ends
   * inside that turn, and says it is under way elsewhere. */
  {
    g_autofree char *text = NULL;

    g_assert_cmpint (cli (&text, "--store", env.store, "--replay", id, NULL), ==, 0);
    g_assert_true (g_str_has_suffix (text, "\n(The last turn has not finished yet: the session is open "
                                           "in another Tally.)\n"));
  }

  /* End of input denies the card; the holder ends and lets go */
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error);
  g_assert_no_error (error);
  holder_rest = g_data_input_stream_read_upto (holder_out, "", 0, NULL, NULL, &error);
  g_assert_no_error (error);
  g_subprocess_wait (holder, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (holder), ==, 0);

  g_clear_pointer (&refused_out, g_free);
  g_assert_cmpint (cli (&refused_out, "--base-url", tally_test_mock_get_base_url (second_mock),
                        "--store", env.store, "--resume", id, "--json", "Now me", NULL), ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (second_mock), ==, 1);

  /* Three turns, one after the other, none closed as interrupted */
  g_clear_pointer (&replay, g_free);
  g_assert_cmpint (cli (&replay, "--store", env.store, "--replay", id, "--json", NULL), ==, 0);
  g_assert_null (strstr (replay, "Tally stopped before this turn finished"));
  lines = g_strsplit (g_strchomp (replay), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonObject) event = tally_test_parse_object (lines[i]);

      g_assert_cmpint (json_object_get_int_member (event, "seq"), ==, ++seq);
      if (g_str_equal (json_object_get_string_member (event, "type"), "turn_finished"))
        g_assert_cmpstr (json_object_get_string_member (event, "status"), ==, "done");
    }
  g_assert_cmpuint (g_strv_length (lines), >, 10);

  env_clear (&env);
}

/* A readable --replay of events whose members have the wrong kinds (as a
 * damaged or foreign store holds them) prints what it can, without a
 * critical and without "(null)". */
static void
test_replay_odd_members (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Six cafés.\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}]}", &error);
  static const char *odd[] = {
    "{\"type\":\"text_delta\",\"text\":42,\"call\":0,\"block\":0}",
    "{\"type\":\"tool_started\",\"tool_name\":[1],\"tool_input\":\"x\"}",
    "{\"type\":\"tool_result\",\"content\":{\"a\":1},\"is_error\":\"yes\",\"duration_ms\":\"slow\"}",
    "{\"type\":\"retry\",\"delay_ms\":null,\"status\":\"x\"}",
    "{\"type\":\"error\",\"kind\":7,\"message\":false}",
    "{\"type\":\"plan_proposed\",\"version\":\"two\",\"markdown\":1}",
  };
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *live = NULL;
  g_autofree char *id = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  Env env;

  g_assert_no_error (error);
  env_init (&env);
  g_assert_cmpint (cli (&live, "--base-url", tally_test_mock_get_base_url (mock), "--store", env.store,
                        "--json", "How many cafés?", NULL), ==, 0);
  id = session_id_of (live);

  {
    g_autoptr(TallyStore) store = tally_store_open (env.store, &error);
    gint64 seq = 1;

    g_assert_no_error (error);
    for (const char *p = live; (p = strchr (p, '\n')) != NULL; p++)
      seq++;
    for (guint i = 0; i < G_N_ELEMENTS (odd); i++)
      {
        g_autoptr(JsonObject) event = tally_test_parse_object (odd[i]);

        json_object_set_int_member (event, "seq", seq++);
        json_object_set_int_member (event, "ts", 1);
        json_object_set_string_member (event, "session_id", id);
        json_object_set_string_member (event, "turn_id", "t-odd");
        g_assert_true (tally_store_append_event (store, event, &error));
        g_assert_no_error (error);
      }
    g_assert_true (tally_store_flush (store, &error));
    g_assert_no_error (error);
  }

  launcher = launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "G_DEBUG", "fatal-criticals", TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, TALLY_TEST_CLI, "--store", env.store,
                                         "--replay", id, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpstr (err != NULL && strstr (err, "CRITICAL") != NULL ? err : "", ==, "");
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  g_assert_nonnull (strstr (out, "Six cafés."));
  g_assert_null (strstr (out, "(null)"));
  g_assert_null (strstr (err, "(null)"));

  env_clear (&env);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/resume/list-replay-export", test_list_replay_export);
  g_test_add_func ("/tally/resume/crash-mid-stream", test_crash_mid_stream_then_resume);
  g_test_add_func ("/tally/resume/cancel-tool", test_cancel_tool_then_resume);
  g_test_add_func ("/tally/resume/kill-tool", test_kill_tool_then_resume);
  g_test_add_func ("/tally/resume/byte-exact-echo", test_resume_echoes_byte_exact);
  g_test_add_func ("/tally/resume/repairs-duplicate-ids", test_resume_repairs_duplicate_ids);
  g_test_add_func ("/tally/resume/one-writer-per-session", test_one_writer_per_session);
  g_test_add_func ("/tally/resume/replay-odd-members", test_replay_odd_members);

  return g_test_run ();
}
