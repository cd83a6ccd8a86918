/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Integration tests of TallyClient against the mock Messages API
 * (tests/mock-api): what the client sends, how it reads streams, maps
 * errors, retries, watches for stalls and honours cancellation. */

#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "tally-api-error.h"
#include "tally-client.h"
#include "tally-message-stream.h"
#include "tally-test-mock.h"

/* The request body sent by every stream test; non-ASCII on purpose, so a
 * re-encoding would show. */
#define REQUEST_BODY \
  "{\"model\":\"claude-sonnet-5\",\"max_tokens\":1024,\"stream\":true," \
  "\"messages\":[{\"role\":\"user\",\"content\":\"Combien de caf\xc3\xa9s ? \xe2\x98\x95\"}]}"

/* A test that waits longer than this is hung, not slow. */
#define HANG_TIMEOUT_S 20

typedef struct {
  guint   attempt;
  guint   delay_ms;
  guint   status;
  char   *error_type;
  gint64  real_time_us;
} RetryRecord;

typedef struct {
  guint    attempt;
  guint    status;
  char    *request_id;
  gint64   duration_ms;
  GError  *error;
} AttemptRecord;

typedef struct {
  GMainLoop          *loop;
  TallyClient        *client;
  TallyMessageStream *stream;
  GCancellable       *cancellable;
  guint               n_callbacks;
  gboolean            ok;
  GError             *error;
  GArray             *retries;
  GArray             *attempts;
  GString            *text;
  gint64              started_us;
  gint64              finished_us;
  /* Cancel after this many ms (0: never) or once this much text arrived */
  guint               cancel_after_ms;
  gboolean            cancel_after_retry;   /* 20 ms after the first retry */
  gsize               cancel_after_text;
  gboolean            cancel_synchronously;
} Run;

static void
retry_record_clear (gpointer data)
{
  RetryRecord *record = data;

  g_free (record->error_type);
}

static void
attempt_record_clear (gpointer data)
{
  AttemptRecord *record = data;

  g_free (record->request_id);
  g_clear_error (&record->error);
}

static gboolean cancel_now_cb (gpointer user_data);

static void
retry_cb (TallyMessageStream *stream,
          guint               attempt,
          guint               delay_ms,
          guint               status,
          const char         *error_type,
          Run                *run)
{
  RetryRecord record = { attempt, delay_ms, status, g_strdup (error_type), g_get_real_time () };

  g_array_append_val (run->retries, record);
  if (run->cancel_after_retry && run->retries->len == 1)
    g_timeout_add (20, cancel_now_cb, run);
}

static void
attempt_finished_cb (TallyMessageStream *stream,
                     guint               attempt,
                     guint               status,
                     const char         *request_id,
                     gint64              duration_ms,
                     const GError       *error,
                     Run                *run)
{
  AttemptRecord record = {
    attempt, status, g_strdup (request_id), duration_ms,
    error != NULL ? g_error_copy (error) : NULL,
  };

  g_array_append_val (run->attempts, record);
}

static gboolean
cancel_now_cb (gpointer user_data)
{
  Run *run = user_data;

  g_cancellable_cancel (run->cancellable);
  return G_SOURCE_REMOVE;
}

static void
text_delta_cb (TallyMessageStream *stream,
               guint               index,
               const char         *text,
               Run                *run)
{
  g_string_append (run->text, text);

  if (run->cancel_after_text > 0 && run->text->len >= run->cancel_after_text)
    {
      run->cancel_after_text = 0;
      /* From an idle, as a Stop button would, or right inside the
       * emission, as an agent reacting to a delta might. */
      if (run->cancel_synchronously)
        g_cancellable_cancel (run->cancellable);
      else
        g_idle_add (cancel_now_cb, run);
    }
}

static Run *
run_new (TallyClient *client)
{
  Run *run = g_new0 (Run, 1);

  run->loop = g_main_loop_new (NULL, FALSE);
  run->client = g_object_ref (client);
  run->stream = tally_message_stream_new ();
  run->cancellable = g_cancellable_new ();
  run->retries = g_array_new (FALSE, TRUE, sizeof (RetryRecord));
  g_array_set_clear_func (run->retries, retry_record_clear);
  run->attempts = g_array_new (FALSE, TRUE, sizeof (AttemptRecord));
  g_array_set_clear_func (run->attempts, attempt_record_clear);
  run->text = g_string_new (NULL);

  g_signal_connect (run->stream, "retry", G_CALLBACK (retry_cb), run);
  g_signal_connect (run->stream, "attempt-finished", G_CALLBACK (attempt_finished_cb), run);
  g_signal_connect (run->stream, "text-delta", G_CALLBACK (text_delta_cb), run);

  return run;
}

static void
run_free (Run *run)
{
  g_signal_handlers_disconnect_by_data (run->stream, run);
  g_clear_pointer (&run->loop, g_main_loop_unref);
  g_clear_object (&run->client);
  g_clear_object (&run->stream);
  g_clear_object (&run->cancellable);
  g_clear_error (&run->error);
  g_clear_pointer (&run->retries, g_array_unref);
  g_clear_pointer (&run->attempts, g_array_unref);
  g_string_free (run->text, TRUE);
  g_free (run);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Run, run_free)

static gboolean
hang_cb (gpointer user_data)
{
  g_error ("The request did not finish within %d s", HANG_TIMEOUT_S);
  return G_SOURCE_REMOVE;
}

static void
stream_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  Run *run = user_data;

  run->n_callbacks++;
  run->finished_us = g_get_monotonic_time ();
  run->ok = tally_client_stream_finish (TALLY_CLIENT (object), result, &run->error);
  g_main_loop_quit (run->loop);
}

/* Yields to the main loop for @ms, so that a second callback would show. */
static void
spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE);
}

static void
run_stream (Run        *run,
            const char *body)
{
  g_autoptr (GBytes) bytes = g_bytes_new (body, strlen (body));
  guint hang_id, cancel_id = 0;

  hang_id = g_timeout_add_seconds (HANG_TIMEOUT_S, hang_cb, NULL);
  if (run->cancel_after_ms > 0)
    cancel_id = g_timeout_add (run->cancel_after_ms, cancel_now_cb, run);

  run->started_us = g_get_monotonic_time ();
  tally_client_stream_async (run->client, bytes, run->stream, run->cancellable,
                             stream_done_cb, run);
  g_main_loop_run (run->loop);

  g_source_remove (hang_id);
  if (cancel_id != 0 && run->finished_us - run->started_us < run->cancel_after_ms * 1000)
    g_source_remove (cancel_id);

  /* The callback must run exactly once, also after a while. */
  spin (50);
  g_assert_cmpuint (run->n_callbacks, ==, 1);
}

static gint64
run_elapsed_ms (Run *run)
{
  return (run->finished_us - run->started_us) / 1000;
}

static TallyTestMock *
mock_start (const char *scenario)
{
  g_autoptr (GError) error = NULL;
  TallyTestMock *mock;

  mock = tally_test_mock_start (scenario, &error);
  g_assert_no_error (error);
  g_assert_nonnull (mock);

  return mock;
}

static TallyClient *
client_for (TallyTestMock *mock)
{
  TallyClient *client = tally_client_new (tally_test_mock_get_base_url (mock), "sk-test-key");

  /* Keep the tests independent of the exponential back-off's length. */
  tally_client_set_idle_timeout (client, 10);
  return client;
}

static JsonObject *
request_at (JsonArray *requests,
            guint      index)
{
  g_assert_cmpuint (json_array_get_length (requests), >, index);
  return json_array_get_object_element (requests, index);
}

/* Finds a request header by name, case-insensitively, whether the mock
 * records headers as an object or as [name, value] pairs. */
static const char *
request_header (JsonObject *request,
                const char *name)
{
  JsonNode *headers = json_object_get_member (request, "headers");

  g_assert_nonnull (headers);

  if (JSON_NODE_HOLDS_OBJECT (headers))
    {
      JsonObject *object = json_node_get_object (headers);
      g_autoptr (GList) members = json_object_get_members (object);

      for (GList *l = members; l != NULL; l = l->next)
        {
          if (g_ascii_strcasecmp (l->data, name) == 0)
            return json_object_get_string_member (object, l->data);
        }
    }
  else if (JSON_NODE_HOLDS_ARRAY (headers))
    {
      JsonArray *array = json_node_get_array (headers);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonArray *pair = json_array_get_array_element (array, i);

          if (g_ascii_strcasecmp (json_array_get_string_element (pair, 0), name) == 0)
            return json_array_get_string_element (pair, 1);
        }
    }

  return NULL;
}

static void
assert_retry (Run        *run,
              guint       index,
              guint       attempt,
              guint       status,
              const char *error_type)
{
  RetryRecord *record;

  g_assert_cmpuint (run->retries->len, >, index);
  record = &g_array_index (run->retries, RetryRecord, index);
  g_assert_cmpuint (record->attempt, ==, attempt);
  g_assert_cmpuint (record->status, ==, status);
  g_assert_cmpstr (record->error_type, ==, error_type);
}

/* The mock records the body it parsed; the same JSON as REQUEST_BODY,
 * strings compared byte for byte, shows that it was sent unchanged. */
static void
assert_body_is_request (JsonObject *request)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonNode *body = json_object_get_member (request, "body");
  JsonObject *message;

  json_parser_load_from_data (parser, REQUEST_BODY, -1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (body);
  g_assert_true (json_node_equal (body, json_parser_get_root (parser)));

  message = json_array_get_object_element (json_object_get_array_member (json_node_get_object (body),
                                                                         "messages"), 0);
  g_assert_cmpstr (json_object_get_string_member (message, "content"), ==,
                   "Combien de caf\xc3\xa9s ? \xe2\x98\x95");
}

/* Asks a mock for the stream of @scenario directly, without the client,
 * so that a test can find where in those bytes to cut or stall. */
static GBytes *
fetch_stream (const char *scenario)
{
  g_autoptr (TallyTestMock) mock = mock_start (scenario);
  g_autoptr (SoupSession) session = soup_session_new ();
  g_autoptr (SoupMessage) message = NULL;
  g_autoptr (GBytes) body = g_bytes_new_static (REQUEST_BODY, strlen (REQUEST_BODY));
  g_autoptr (GError) error = NULL;
  g_autofree char *url = g_strconcat (tally_test_mock_get_base_url (mock), "/v1/messages", NULL);
  GBytes *answer;

  message = soup_message_new ("POST", url);
  soup_message_headers_replace (soup_message_get_request_headers (message), "x-api-key", "k");
  soup_message_headers_replace (soup_message_get_request_headers (message),
                                "anthropic-version", "2023-06-01");
  soup_message_set_request_body_from_bytes (message, "application/json", body);
  answer = soup_session_send_and_read (session, message, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (soup_message_get_status (message), ==, 200);

  return answer;
}

static char *
block_text (const char *block_json)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *object;

  json_parser_load_from_data (parser, block_json, -1, &error);
  g_assert_no_error (error);
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (object, "type"), ==, "text");

  return g_strdup (json_object_get_string_member (object, "text"));
}

/* Tests */

static void
test_text_reply (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (JsonArray) requests = NULL;
  g_autoptr (GPtrArray) content = NULL;
  g_autofree char *text = NULL;
  const TallyUsage *usage;
  AttemptRecord *attempt;
  JsonObject *request;

  mock = mock_start ("{\"responses\":[{\"message\":{"
                     "\"content\":[{\"type\":\"text\",\"text\":\"Bonjour, voici 42 caf\xc3\xa9s.\"}],"
                     "\"stop_reason\":\"end_turn\","
                     "\"usage\":{\"input_tokens\":31,\"output_tokens\":12,"
                     "\"cache_creation_input_tokens\":5,\"cache_read_input_tokens\":7},"
                     "\"chunk\":3}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_true (run->ok);
  g_assert_true (tally_message_stream_is_complete (run->stream));
  g_assert_cmpstr (run->text->str, ==, "Bonjour, voici 42 caf\xc3\xa9s.");
  g_assert_cmpstr (tally_message_stream_get_stop_reason (run->stream), ==, "end_turn");

  content = tally_message_stream_dup_content (run->stream);
  g_assert_cmpuint (content->len, ==, 1);
  text = block_text (g_ptr_array_index (content, 0));
  g_assert_cmpstr (text, ==, "Bonjour, voici 42 caf\xc3\xa9s.");

  usage = tally_message_stream_get_usage (run->stream);
  g_assert_true (usage->reported);
  g_assert_cmpint (usage->input_tokens, ==, 31);
  g_assert_cmpint (usage->output_tokens, ==, 12);
  g_assert_cmpint (usage->cache_creation_input_tokens, ==, 5);
  g_assert_cmpint (usage->cache_read_input_tokens, ==, 7);

  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (run->attempts->len, ==, 1);
  attempt = &g_array_index (run->attempts, AttemptRecord, 0);
  g_assert_cmpuint (attempt->attempt, ==, 1);
  g_assert_cmpuint (attempt->status, ==, 200);
  g_assert_cmpstr (attempt->request_id, ==, "req_mock_1");
  g_assert_no_error (attempt->error);
  g_assert_cmpint (attempt->duration_ms, >=, 0);

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 1);
  request = request_at (requests, 0);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, "POST");
  g_assert_cmpstr (json_object_get_string_member (request, "path"), ==, "/v1/messages");
  g_assert_cmpstr (request_header (request, "x-api-key"), ==, "sk-test-key");
  g_assert_cmpstr (request_header (request, "anthropic-version"), ==, "2023-06-01");
  g_assert_cmpstr (request_header (request, "content-type"), ==, "application/json");
  g_assert_cmpstr (request_header (request, "accept"), ==, "application/json");
  g_assert_cmpstr (request_header (request, "user-agent"), ==, "Tally/" PACKAGE_VERSION);
  assert_body_is_request (request);
}

static void
test_headers_follow_settings (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (JsonArray) requests = NULL;
  g_autofree char *url = NULL;
  JsonObject *request;

  mock = mock_start ("{\"responses\":[{\"message\":{"
                     "\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],"
                     "\"stop_reason\":\"end_turn\"}}]}");

  /* A trailing slash on the base URL must not give "//v1/messages". */
  url = g_strconcat (tally_test_mock_get_base_url (mock), "/", NULL);
  client = tally_client_new (url, "sk-other");
  g_assert_cmpstr (tally_client_get_base_url (client), ==, tally_test_mock_get_base_url (mock));
  tally_client_set_api_version (client, "2099-01-01");

  run = run_new (client);
  run_stream (run, REQUEST_BODY);
  g_assert_no_error (run->error);

  requests = tally_test_mock_dup_requests (mock);
  request = request_at (requests, 0);
  g_assert_cmpstr (json_object_get_string_member (request, "path"), ==, "/v1/messages");
  g_assert_cmpstr (request_header (request, "x-api-key"), ==, "sk-other");
  g_assert_cmpstr (request_header (request, "anthropic-version"), ==, "2099-01-01");
}

static void
test_defaults (void)
{
  g_autoptr (TallyClient) client = tally_client_new (NULL, NULL);
  g_autoptr (TallyClient) other = tally_client_new ("http://127.0.0.1:9///", "k");
  g_autofree char *version = NULL;
  guint max_retries, idle_timeout;

  g_assert_cmpstr (tally_client_get_base_url (client), ==, "https://api.anthropic.com");
  g_assert_cmpstr (tally_client_get_base_url (other), ==, "http://127.0.0.1:9");
  g_assert_cmpuint (tally_client_get_idle_timeout (client), ==, 90);
  g_assert_cmpuint (tally_client_get_idle_timeout_ms (client), ==, 90000);
  g_assert_cmpuint (tally_client_get_max_retries (client), ==, 4);
  g_assert_cmpstr (tally_client_get_api_version (client), ==, "2023-06-01");

  g_object_get (client,
                "api-version", &version,
                "max-retries", &max_retries,
                "idle-timeout", &idle_timeout,
                NULL);
  g_assert_cmpstr (version, ==, "2023-06-01");
  g_assert_cmpuint (max_retries, ==, 4);
  g_assert_cmpuint (idle_timeout, ==, 90);

  /* A fraction of a second reads back rounded up, never as "none". */
  tally_client_set_idle_timeout_ms (client, 300);
  g_assert_cmpuint (tally_client_get_idle_timeout (client), ==, 1);
  g_assert_cmpuint (tally_client_get_idle_timeout_ms (client), ==, 300);
  tally_client_set_idle_timeout (client, 0);
  g_assert_cmpuint (tally_client_get_idle_timeout_ms (client), ==, 0);
}

static void
test_invalid_base_url (void)
{
  g_autoptr (TallyClient) client = tally_client_new ("ftp://example.invalid", "k");
  g_autoptr (Run) run = run_new (client);

  run_stream (run, REQUEST_BODY);
  g_assert_error (run->error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (run->error->message, "ftp://example.invalid"));
  g_assert_false (run->ok);
  g_assert_cmpuint (run->attempts->len, ==, 0);
}

static void
test_retry_429_retry_after (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (JsonArray) requests = NULL;
  RetryRecord *retry;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":429,\"headers\":{\"retry-after\":\"1\"},"
                     " \"error\":{\"type\":\"rate_limit_error\",\"message\":\"Slow down\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"after the wait\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_true (run->ok);
  g_assert_cmpstr (run->text->str, ==, "after the wait");

  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 429, "rate_limit_error");
  retry = &g_array_index (run->retries, RetryRecord, 0);
  g_assert_cmpuint (retry->delay_ms, ==, 1000);
  /* The wait really happened. */
  g_assert_cmpint (run_elapsed_ms (run), >=, 1000);

  g_assert_cmpuint (run->attempts->len, ==, 2);
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 0).status, ==, 429);
  g_assert_error (g_array_index (run->attempts, AttemptRecord, 0).error,
                  TALLY_API_ERROR, TALLY_API_ERROR_RATE_LIMIT);
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 1).status, ==, 200);

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);
  /* The retry sends the very same body. */
  assert_body_is_request (request_at (requests, 0));
  assert_body_is_request (request_at (requests, 1));
}

static void
test_retry_529_twice (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":529,\"headers\":{\"retry-after-ms\":\"20\"},"
                     " \"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}},"
                     "{\"status\":529,\"headers\":{\"retry-after-ms\":\"20\"},"
                     " \"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"third time\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_true (run->ok);
  g_assert_cmpstr (run->text->str, ==, "third time");
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 3);
  g_assert_cmpuint (run->retries->len, ==, 2);
  assert_retry (run, 0, 2, 529, "overloaded_error");
  assert_retry (run, 1, 3, 529, "overloaded_error");
  g_assert_cmpuint (tally_message_stream_get_attempt (run->stream), ==, 3);
}

static void
test_retry_after_ms (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  /* retry-after-ms wins over retry-after. */
  mock = mock_start ("{\"responses\":["
                     "{\"status\":500,\"headers\":{\"retry-after-ms\":\"50\",\"retry-after\":\"30\"},"
                     " \"error\":{\"type\":\"api_error\",\"message\":\"Internal error\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"fine\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 500, "api_error");
  g_assert_cmpuint (g_array_index (run->retries, RetryRecord, 0).delay_ms, ==, 50);
  g_assert_cmpint (run_elapsed_ms (run), >=, 50);
}

static void
test_retry_after_out_of_range (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  guint delay;

  /* A server delay above 60 s is ignored in favour of the back-off:
   * 0.5 s × (1 − 0.25·random) for the first retry. */
  mock = mock_start ("{\"responses\":["
                     "{\"status\":503,\"headers\":{\"retry-after\":\"3600\"},"
                     " \"error\":{\"type\":\"api_error\",\"message\":\"Unavailable\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"back\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_cmpuint (run->retries->len, ==, 1);
  delay = g_array_index (run->retries, RetryRecord, 0).delay_ms;
  g_assert_cmpuint (delay, >=, 375);
  g_assert_cmpuint (delay, <=, 500);
}

static void
test_retry_after_http_date (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autoptr (GDateTime) later = g_date_time_add_seconds (now, 3);
  g_autofree char *date = soup_date_time_to_string (later, SOUP_DATE_HTTP);
  g_autofree char *scenario = NULL;
  RetryRecord *retry;
  gint64 expected_ms;

  /* An HTTP-date three seconds ahead; the wait is the time left until
   * that (whole) second when the answer arrived. */
  scenario = g_strdup_printf ("{\"responses\":["
                              "{\"status\":503,\"headers\":{\"retry-after\":\"%s\"},"
                              " \"error\":{\"type\":\"api_error\",\"message\":\"Unavailable\"}},"
                              "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"back\"}],"
                              " \"stop_reason\":\"end_turn\"}}]}", date);
  mock = mock_start (scenario);
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 503, "api_error");
  retry = &g_array_index (run->retries, RetryRecord, 0);

  expected_ms = g_date_time_to_unix (later) * 1000 - retry->real_time_us / 1000;
  if (expected_ms < 600)
    {
      /* So slow a machine that the date passed before the answer came; the
       * back-off applied instead and there is nothing to compare. */
      g_test_incomplete ("the machine was too slow to check an HTTP-date delay");
      return;
    }
  g_assert_cmpint ((gint64) retry->delay_ms, >=, expected_ms - 150);
  g_assert_cmpint ((gint64) retry->delay_ms, <=, expected_ms + 150);
}

static void
test_should_retry_false (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":500,\"headers\":{\"x-should-retry\":\"false\"},"
                     " \"error\":{\"type\":\"api_error\",\"message\":\"Do not come back\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_API);
  g_assert_cmpstr (run->error->message, ==, "Do not come back");
  g_assert_false (run->ok);
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
}

static void
test_should_retry_true (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  /* The header wins over the status, in this direction too. */
  mock = mock_start ("{\"responses\":["
                     "{\"status\":400,\"headers\":{\"x-should-retry\":\"true\",\"retry-after-ms\":\"10\"},"
                     " \"error\":{\"type\":\"invalid_request_error\",\"message\":\"Try again\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"accepted\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_cmpstr (run->text->str, ==, "accepted");
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 400, "invalid_request_error");
}

static void
test_error_400 (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  AttemptRecord *attempt;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":400,"
                     " \"error\":{\"type\":\"invalid_request_error\","
                     "            \"message\":\"max_tokens: 0 is below the minimum of 1\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_INVALID_REQUEST);
  g_assert_cmpstr (run->error->message, ==, "max_tokens: 0 is below the minimum of 1");
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);

  /* The failed attempt is reported with its status and request id. */
  g_assert_cmpuint (run->attempts->len, ==, 1);
  attempt = &g_array_index (run->attempts, AttemptRecord, 0);
  g_assert_cmpuint (attempt->status, ==, 400);
  g_assert_cmpstr (attempt->request_id, ==, "req_mock_1");
  g_assert_error (attempt->error, TALLY_API_ERROR, TALLY_API_ERROR_INVALID_REQUEST);
}

static void
test_error_401 (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":401,"
                     " \"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_AUTHENTICATION);
  g_assert_cmpstr (run->error->message, ==, "invalid x-api-key");
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
}

static void
test_error_413_not_json (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":413,\"headers\":{\"content-type\":\"text/html\"},"
                     " \"body_text\":\"<html><body><h1>413 Request Entity Too Large</h1></body></html>\"}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_REQUEST_TOO_LARGE);
  g_assert_nonnull (strstr (run->error->message, "413"));
  g_assert_null (strstr (run->error->message, "<html>"));
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (run->attempts->len, ==, 1);
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 0).status, ==, 413);
}

/* A redirect is not followed: libsoup would send the request again, the
 * key included, to the origin the location names (docs/protocol.md §1). */
static void
test_error_redirect (void)
{
  g_autoptr (TallyTestMock) other = NULL;
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autofree char *scenario = NULL;
  g_autofree char *location = NULL;

  other = mock_start ("{\"responses\":["
                      "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"stolen\"}],"
                      " \"stop_reason\":\"end_turn\"}}]}");
  location = g_strdup_printf ("%s/steal", tally_test_mock_get_base_url (other));
  /* x-should-retry would make any other status retryable. */
  scenario = g_strdup_printf ("{\"responses\":["
                              "{\"status\":302,\"body_text\":\"moved\","
                              " \"headers\":{\"location\":\"%s\",\"x-should-retry\":\"true\"}}]}",
                              location);
  mock = mock_start (scenario);
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL);
  g_assert_nonnull (strstr (run->error->message, "302"));
  g_assert_nonnull (strstr (run->error->message, location));
  g_assert_cmpstr (run->text->str, ==, "");
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  g_assert_cmpuint (tally_test_mock_get_n_requests (other), ==, 0);
}

static void
test_overloaded_event_before_content (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"lost\"}],"
                     " \"stop_reason\":\"end_turn\"},"
                     " \"error_event\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
                     " \"error_after_blocks\":0},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"second try\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_true (run->ok);
  g_assert_cmpstr (run->text->str, ==, "second try");
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 200, "overloaded_error");

  g_assert_cmpuint (run->attempts->len, ==, 2);
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 0).status, ==, 200);
  g_assert_error (g_array_index (run->attempts, AttemptRecord, 0).error,
                  TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  g_assert_cmpstr (g_array_index (run->attempts, AttemptRecord, 0).request_id, ==, "req_mock_1");
  g_assert_cmpstr (g_array_index (run->attempts, AttemptRecord, 1).request_id, ==, "req_mock_2");
  g_assert_no_error (g_array_index (run->attempts, AttemptRecord, 1).error);
}

static void
test_overloaded_event_after_content (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (GPtrArray) content = NULL;
  g_autofree char *text = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"partial answer\"},"
                     "                          {\"type\":\"text\",\"text\":\"never seen\"}],"
                     " \"stop_reason\":\"end_turn\"},"
                     " \"error_event\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
                     " \"error_after_blocks\":1},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  g_assert_false (run->ok);
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  g_assert_cmpstr (tally_message_stream_get_error_type (run->stream), ==, "overloaded_error");

  /* What arrived stays readable, marked incomplete. */
  g_assert_false (tally_message_stream_is_complete (run->stream));
  g_assert_cmpstr (run->text->str, ==, "partial answer");
  content = tally_message_stream_dup_content (run->stream);
  g_assert_cmpuint (content->len, ==, 1);
  text = block_text (g_ptr_array_index (content, 0));
  g_assert_cmpstr (text, ==, "partial answer");

  g_assert_cmpuint (run->attempts->len, ==, 1);
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 0).status, ==, 200);
  g_assert_error (g_array_index (run->attempts, AttemptRecord, 0).error,
                  TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
}

static void
test_non_retryable_event (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  /* An error event of a type that asking again does not cure. */
  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],"
                     " \"stop_reason\":\"end_turn\"},"
                     " \"error_event\":{\"type\":\"invalid_request_error\",\"message\":\"Bad thing\"},"
                     " \"error_after_blocks\":0},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
}

/* A long tool input, so that a cut lands inside its input_json deltas. */
#define TOOL_USE_MESSAGE \
  "{\"content\":[{\"type\":\"text\",\"text\":\"Let me query.\"}," \
  "              {\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"query_database\"," \
  "               \"input\":{\"sql\":\"SELECT name, SUM(total) AS revenue FROM stores JOIN sales USING (store_id) " \
  "GROUP BY name ORDER BY revenue DESC LIMIT 10\",\"max_rows\":10}}]," \
  " \"stop_reason\":\"tool_use\",\"chunk\":4}"

static void
test_cut_inside_tool_use (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (GPtrArray) content = NULL;
  g_autoptr (GBytes) full = NULL;
  g_autofree char *scenario = NULL;
  g_autofree char *full_scenario = NULL;
  g_autofree char *full_body = NULL;
  const char *json_delta;
  gsize cut;

  /* Find where the tool input's deltas are in the full stream, then cut
   * a little past the first of them. */
  full_scenario = g_strdup_printf ("{\"responses\":[{\"message\":%s}]}", TOOL_USE_MESSAGE);
  full = fetch_stream (full_scenario);
  full_body = g_strndup (g_bytes_get_data (full, NULL), g_bytes_get_size (full));
  json_delta = strstr (full_body, "input_json_delta");
  g_assert_nonnull (json_delta);
  cut = (json_delta - full_body) + 40;
  g_assert_cmpuint (cut, <, strlen (full_body) - 200);

  scenario = g_strdup_printf ("{\"responses\":[{\"message\":%s,\"cut_after_bytes\":%" G_GSIZE_FORMAT "},"
                              "{\"message\":%s}]}",
                              TOOL_USE_MESSAGE, cut, TOOL_USE_MESSAGE);
  mock = mock_start (scenario);
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_false (run->ok);
  g_assert_nonnull (run->error);
  g_assert_true (g_error_matches (run->error, TALLY_API_ERROR, TALLY_API_ERROR_NETWORK) ||
                 g_error_matches (run->error, TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE));

  /* Content had arrived: no retry. */
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);

  /* The text survived; the half tool call is not part of the content. */
  g_assert_false (tally_message_stream_is_complete (run->stream));
  g_assert_cmpstr (run->text->str, ==, "Let me query.");
  content = tally_message_stream_dup_content (run->stream);
  for (guint i = 0; i < content->len; i++)
    g_assert_null (strstr (g_ptr_array_index (content, i), "tool_use"));
  g_assert_cmpuint (tally_message_stream_get_n_blocks (run->stream), ==, 2);
  g_assert_false (tally_message_stream_block_is_stopped (run->stream, 1));

  g_assert_cmpuint (run->attempts->len, ==, 1);
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 0).status, ==, 200);
}

static void
test_cut_before_content (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  /* 20 bytes: inside the message_start event. */
  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"lost\"}],"
                     " \"stop_reason\":\"end_turn\"},\"cut_after_bytes\":20},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"whole\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_true (run->ok);
  g_assert_cmpstr (run->text->str, ==, "whole");
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 0, "connection_error");
}

static void
test_connection_refused (void)
{
  g_autoptr (GSocketListener) listener = g_socket_listener_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autofree char *url = NULL;
  guint16 port;

  /* A port that was free a moment ago: nothing listens there. */
  port = g_socket_listener_add_any_inet_port (listener, NULL, &error);
  g_assert_no_error (error);
  g_socket_listener_close (listener);
  url = g_strdup_printf ("http://127.0.0.1:%u", port);

  client = tally_client_new (url, "k");
  tally_client_set_max_retries (client, 1);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_NETWORK);
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 0, "connection_error");
  /* No response, so no attempt-finished. */
  g_assert_cmpuint (run->attempts->len, ==, 0);
}

static void
test_stall_after_content (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  g_autoptr (GBytes) full = NULL;
  g_autofree char *scenario = NULL;
  g_autofree char *full_body = NULL;
  const char *delta;
  gsize stall_at;

  /* Stall right after the first text delta. */
  full = fetch_stream ("{\"responses\":[{\"message\":{"
                       "\"content\":[{\"type\":\"text\",\"text\":\"first half, second half\"}],"
                       "\"stop_reason\":\"end_turn\",\"chunk\":10}}]}");
  full_body = g_strndup (g_bytes_get_data (full, NULL), g_bytes_get_size (full));
  delta = strstr (full_body, "first half");
  g_assert_nonnull (delta);
  delta = strstr (delta, "\n\n");
  g_assert_nonnull (delta);
  stall_at = delta + 2 - full_body;

  scenario = g_strdup_printf ("{\"responses\":[{\"message\":{"
                              "\"content\":[{\"type\":\"text\",\"text\":\"first half, second half\"}],"
                              "\"stop_reason\":\"end_turn\",\"chunk\":10},"
                              "\"stall_after_bytes\":%" G_GSIZE_FORMAT "}]}", stall_at);
  mock = mock_start (scenario);
  client = client_for (mock);
  tally_client_set_idle_timeout_ms (client, 300);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_STALLED);
  g_assert_false (run->ok);
  g_assert_cmpstr (run->text->str, ==, "first half");
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
  g_assert_cmpstr (run->error->message, ==, "No data from the server for 0.3 s");
  /* The watchdog did not fire early. */
  g_assert_cmpint (run_elapsed_ms (run), >=, 300);

  g_assert_cmpuint (run->attempts->len, ==, 1);
  g_assert_error (g_array_index (run->attempts, AttemptRecord, 0).error,
                  TALLY_API_ERROR, TALLY_API_ERROR_STALLED);
}

static void
test_stall_before_content (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  /* Headers but no body, then a healthy answer: retried as "stalled". */
  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"lost\"}],"
                     " \"stop_reason\":\"end_turn\"},\"stall_after_bytes\":0},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"awake\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  tally_client_set_idle_timeout_ms (client, 300);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_no_error (run->error);
  g_assert_cmpstr (run->text->str, ==, "awake");
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 0, "stalled");
}

static void
test_cancel_before_headers (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"late\"}],"
                     " \"stop_reason\":\"end_turn\"},\"delay_headers_ms\":5000}]}");
  client = client_for (mock);
  run = run_new (client);
  run->cancel_after_ms = 100;
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (run->ok);
  /* It did not wait for the headers, due only after 5 s. */
  g_assert_cmpint (run_elapsed_ms (run), <, 4000);
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (run->attempts->len, ==, 0);
  g_assert_cmpuint (run->n_callbacks, ==, 1);
}

static void
test_cancel_mid_stream (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;
  AttemptRecord *attempt;

  /* A slow drip of a long text; cancel once some of it arrived. */
  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":"
                     "\"One two three four five six seven eight nine ten eleven twelve\"}],"
                     " \"stop_reason\":\"end_turn\",\"chunk\":4},"
                     " \"drip_ms\":20,\"drip_bytes\":16}]}");
  client = client_for (mock);
  run = run_new (client);
  run->cancel_after_text = 4;
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (run->ok);
  g_assert_false (tally_message_stream_is_complete (run->stream));
  g_assert_true (g_str_has_prefix (run->text->str, "One "));
  g_assert_cmpuint (run->text->len, <, strlen ("One two three four five six seven eight nine ten eleven twelve"));
  g_assert_cmpuint (run->retries->len, ==, 0);

  /* The attempt had a response: it is reported, as cancelled. */
  g_assert_cmpuint (run->attempts->len, ==, 1);
  attempt = &g_array_index (run->attempts, AttemptRecord, 0);
  g_assert_cmpuint (attempt->status, ==, 200);
  g_assert_error (attempt->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
test_cancel_inside_handler (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  /* The cancel lands while the client is feeding the piece that carried
   * the delta. */
  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":"
                     "\"One two three four five six seven eight nine ten eleven twelve\"}],"
                     " \"stop_reason\":\"end_turn\",\"chunk\":4},"
                     " \"drip_ms\":5,\"drip_bytes\":64}]}");
  client = client_for (mock);
  run = run_new (client);
  run->cancel_after_text = 4;
  run->cancel_synchronously = TRUE;
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (tally_message_stream_is_complete (run->stream));
  g_assert_cmpuint (run->attempts->len, ==, 1);
  g_assert_error (g_array_index (run->attempts, AttemptRecord, 0).error,
                  G_IO_ERROR, G_IO_ERROR_CANCELLED);

  /* The client is still usable afterwards, with a new cancellable. */
  {
    g_autoptr (TallyTestMock) mock2 = mock_start ("{\"responses\":[{\"message\":{"
                                                  "\"content\":[{\"type\":\"text\",\"text\":\"again\"}],"
                                                  "\"stop_reason\":\"end_turn\"}}]}");
    g_autoptr (TallyClient) client2 = client_for (mock2);
    g_autoptr (Run) run2 = run_new (client2);

    run_stream (run2, REQUEST_BODY);
    g_assert_no_error (run2->error);
    g_assert_cmpstr (run2->text->str, ==, "again");
  }
}

static void
test_cancel_during_backoff (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":429,\"headers\":{\"retry-after\":\"30\"},"
                     " \"error\":{\"type\":\"rate_limit_error\",\"message\":\"Slow down\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  /* Cancelled once the back-off has begun, however slow the machine. */
  run->cancel_after_retry = TRUE;
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* The 30 s back-off was interrupted, not waited out. */
  g_assert_cmpint (run_elapsed_ms (run), <, 10000);
  g_assert_cmpuint (run->retries->len, ==, 1);
  assert_retry (run, 0, 2, 429, "rate_limit_error");
  g_assert_cmpuint (g_array_index (run->retries, RetryRecord, 0).delay_ms, ==, 30000);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
}

static void
test_cancel_before_start (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  run = run_new (client);
  g_cancellable_cancel (run->cancellable);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 0);
}

static void
test_retries_exhausted (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":529,\"headers\":{\"retry-after-ms\":\"10\"},"
                     " \"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded 1\"}},"
                     "{\"status\":500,\"headers\":{\"retry-after-ms\":\"10\"},"
                     " \"error\":{\"type\":\"api_error\",\"message\":\"Internal 2\"}},"
                     "{\"status\":529,\"headers\":{\"retry-after-ms\":\"10\"},"
                     " \"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded 3\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  tally_client_set_max_retries (client, 2);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  /* Three attempts, two retries, then the last error. */
  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_OVERLOADED);
  g_assert_cmpstr (run->error->message, ==, "Overloaded 3");
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 3);
  g_assert_cmpuint (run->retries->len, ==, 2);
  assert_retry (run, 0, 2, 529, "overloaded_error");
  assert_retry (run, 1, 3, 500, "api_error");

  g_assert_cmpuint (run->attempts->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      AttemptRecord *attempt = &g_array_index (run->attempts, AttemptRecord, i);
      g_autofree char *id = g_strdup_printf ("req_mock_%u", i + 1);

      g_assert_cmpuint (attempt->attempt, ==, i + 1);
      g_assert_cmpstr (attempt->request_id, ==, id);
      g_assert_nonnull (attempt->error);
    }
  g_assert_cmpuint (g_array_index (run->attempts, AttemptRecord, 1).status, ==, 500);
}

static void
test_no_retries (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (Run) run = NULL;

  mock = mock_start ("{\"responses\":["
                     "{\"status\":529,\"error\":{\"type\":\"overloaded_error\",\"message\":\"Busy\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"never sent\"}],"
                     " \"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);
  tally_client_set_max_retries (client, 0);
  run = run_new (client);
  run_stream (run, REQUEST_BODY);

  g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_OVERLOADED);
  g_assert_cmpuint (run->retries->len, ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);
}

static void
test_connection_reuse (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;

  /* Three calls in a row on one client, after an aborted one: each
   * completes (a half-read body must not poison the next request). */
  mock = mock_start ("{\"responses\":["
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"aa\"}],"
                     " \"stop_reason\":\"end_turn\"},"
                     " \"error_event\":{\"type\":\"invalid_request_error\",\"message\":\"stop\"},"
                     " \"error_after_blocks\":1},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"one\"}],\"stop_reason\":\"end_turn\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"two\"}],\"stop_reason\":\"end_turn\"}},"
                     "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"three\"}],\"stop_reason\":\"end_turn\"}}]}");
  client = client_for (mock);

  {
    g_autoptr (Run) run = run_new (client);

    run_stream (run, REQUEST_BODY);
    g_assert_error (run->error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  }

  for (guint i = 0; i < 3; i++)
    {
      static const char * const expected[] = { "one", "two", "three" };
      g_autoptr (Run) run = run_new (client);
      g_autofree char *id = g_strdup_printf ("req_mock_%u", i + 2);

      run_stream (run, REQUEST_BODY);
      g_assert_no_error (run->error);
      g_assert_cmpstr (run->text->str, ==, expected[i]);
      g_assert_cmpstr (g_array_index (run->attempts, AttemptRecord, 0).request_id, ==, id);
    }

  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 4);
}

typedef struct {
  GMainLoop *loop;
  JsonNode  *node;
  GError    *error;
  guint      n_callbacks;
} ModelsRun;

static void
models_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  ModelsRun *run = user_data;

  run->n_callbacks++;
  run->node = tally_client_list_models_finish (TALLY_CLIENT (object), result, &run->error);
  g_main_loop_quit (run->loop);
}

static void
run_models (TallyClient *client,
            ModelsRun   *run)
{
  guint hang_id = g_timeout_add_seconds (HANG_TIMEOUT_S, hang_cb, NULL);

  run->loop = g_main_loop_new (NULL, FALSE);
  tally_client_list_models_async (client, NULL, models_done_cb, run);
  g_main_loop_run (run->loop);
  g_source_remove (hang_id);
  g_clear_pointer (&run->loop, g_main_loop_unref);
  spin (20);
  g_assert_cmpuint (run->n_callbacks, ==, 1);
}

static void
test_list_models (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (JsonArray) requests = NULL;
  ModelsRun run = { 0 };
  JsonObject *object;
  JsonArray *data;
  JsonObject *request;

  mock = mock_start ("{\"responses\":[],\"models\":["
                     "{\"type\":\"model\",\"id\":\"claude-sonnet-5\",\"display_name\":\"Claude Sonnet 5\"},"
                     "{\"type\":\"model\",\"id\":\"claude-haiku-5\",\"display_name\":\"Claude Haiku 5\"}]}");
  client = client_for (mock);
  run_models (client, &run);

  g_assert_no_error (run.error);
  g_assert_nonnull (run.node);
  object = json_node_get_object (run.node);
  data = json_object_get_array_member (object, "data");
  g_assert_cmpuint (json_array_get_length (data), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (data, 1), "id"), ==,
                   "claude-haiku-5");
  g_assert_false (json_object_get_boolean_member (object, "has_more"));
  json_node_unref (run.node);

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 1);
  request = request_at (requests, 0);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, "GET");
  g_assert_cmpstr (json_object_get_string_member (request, "path"), ==, "/v1/models");
  g_assert_cmpstr (json_object_get_string_member (request, "query"), ==, "limit=1000");
  g_assert_cmpstr (request_header (request, "x-api-key"), ==, "sk-test-key");
  g_assert_cmpstr (request_header (request, "anthropic-version"), ==, "2023-06-01");
}

static void
test_list_models_error (void)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  ModelsRun run = { 0 };

  /* Without a "models" list the mock answers 404 not_found_error. */
  mock = mock_start ("{\"responses\":[]}");
  client = client_for (mock);
  run_models (client, &run);

  g_assert_error (run.error, TALLY_API_ERROR, TALLY_API_ERROR_NOT_FOUND);
  g_assert_cmpstr (run.error->message, ==, "mock: the scenario has no \"models\" list");
  g_assert_null (run.node);
  g_clear_error (&run.error);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/client/defaults", test_defaults);
  g_test_add_func ("/tally/client/invalid-base-url", test_invalid_base_url);
  g_test_add_func ("/tally/client/text-reply", test_text_reply);
  g_test_add_func ("/tally/client/headers-follow-settings", test_headers_follow_settings);
  g_test_add_func ("/tally/client/connection-reuse", test_connection_reuse);
  g_test_add_func ("/tally/client/retry/429-retry-after", test_retry_429_retry_after);
  g_test_add_func ("/tally/client/retry/529-twice", test_retry_529_twice);
  g_test_add_func ("/tally/client/retry/retry-after-ms", test_retry_after_ms);
  g_test_add_func ("/tally/client/retry/retry-after-out-of-range", test_retry_after_out_of_range);
  g_test_add_func ("/tally/client/retry/retry-after-http-date", test_retry_after_http_date);
  g_test_add_func ("/tally/client/retry/should-retry-false", test_should_retry_false);
  g_test_add_func ("/tally/client/retry/should-retry-true", test_should_retry_true);
  g_test_add_func ("/tally/client/retry/overloaded-event-before-content", test_overloaded_event_before_content);
  g_test_add_func ("/tally/client/retry/cut-before-content", test_cut_before_content);
  g_test_add_func ("/tally/client/retry/stall-before-content", test_stall_before_content);
  g_test_add_func ("/tally/client/retry/connection-refused", test_connection_refused);
  g_test_add_func ("/tally/client/retry/exhausted", test_retries_exhausted);
  g_test_add_func ("/tally/client/retry/none", test_no_retries);
  g_test_add_func ("/tally/client/error/400", test_error_400);
  g_test_add_func ("/tally/client/error/401", test_error_401);
  g_test_add_func ("/tally/client/error/413-not-json", test_error_413_not_json);
  g_test_add_func ("/tally/client/error/redirect", test_error_redirect);
  g_test_add_func ("/tally/client/error/overloaded-event-after-content", test_overloaded_event_after_content);
  g_test_add_func ("/tally/client/error/non-retryable-event", test_non_retryable_event);
  g_test_add_func ("/tally/client/error/cut-inside-tool-use", test_cut_inside_tool_use);
  g_test_add_func ("/tally/client/error/stall-after-content", test_stall_after_content);
  g_test_add_func ("/tally/client/cancel/before-start", test_cancel_before_start);
  g_test_add_func ("/tally/client/cancel/before-headers", test_cancel_before_headers);
  g_test_add_func ("/tally/client/cancel/mid-stream", test_cancel_mid_stream);
  g_test_add_func ("/tally/client/cancel/inside-handler", test_cancel_inside_handler);
  g_test_add_func ("/tally/client/cancel/during-backoff", test_cancel_during_backoff);
  g_test_add_func ("/tally/client/list-models", test_list_models);
  g_test_add_func ("/tally/client/list-models-error", test_list_models_error);

  return g_test_run ();
}
