/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Tests of the mock Messages API (tests/mock-api) and of the helper that
 * runs it, driven with a plain synchronous SoupSession. */

#define G_LOG_DOMAIN "test-mock-api"

#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "tally-test-mock.h"
#include "tally-test-util.h"

#define USER_HI \
  "{\"model\":\"claude-sonnet-5\",\"max_tokens\":1024,\"stream\":true," \
  "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"

typedef struct {
  guint               status;
  SoupMessageHeaders *headers;
  GBytes             *body;
  GError             *error;       /* sending or reading failed */
} Response;

static void
response_clear (Response *response)
{
  g_clear_pointer (&response->headers, soup_message_headers_unref);
  g_clear_pointer (&response->body, g_bytes_unref);
  g_clear_error (&response->error);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Response, response_clear)

enum {
  WITH_KEY     = 1 << 0,
  WITH_VERSION = 1 << 1,
  WITH_AUTH    = WITH_KEY | WITH_VERSION,
};

static SoupMessage *
new_message (TallyTestMock *mock,
             const char    *method,
             const char    *path,
             const char    *body,
             guint          flags)
{
  g_autofree char *url = g_strconcat (tally_test_mock_get_base_url (mock), path, NULL);
  SoupMessage *msg = soup_message_new (method, url);
  SoupMessageHeaders *headers = soup_message_get_request_headers (msg);

  g_assert_nonnull (msg);
  if (flags & WITH_KEY)
    soup_message_headers_append (headers, "x-api-key", "sk-test-key");
  if (flags & WITH_VERSION)
    soup_message_headers_append (headers, "anthropic-version", "2023-06-01");

  if (body != NULL)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));

      soup_message_set_request_body_from_bytes (msg, "application/json", bytes);
    }

  return msg;
}

/* Reads @stream to its end or first error; returns what arrived. */
static GBytes *
read_all (GInputStream  *stream,
          GError       **error)
{
  g_autoptr(GByteArray) data = g_byte_array_new ();
  guint8 buffer[4096];

  for (;;)
    {
      gssize n = g_input_stream_read (stream, buffer, sizeof buffer, NULL, error);

      if (n <= 0)
        break;
      g_byte_array_append (data, buffer, n);
    }

  return g_byte_array_free_to_bytes (g_steal_pointer (&data));
}

static void
do_request (SoupSession   *session,
            TallyTestMock *mock,
            const char    *method,
            const char    *path,
            const char    *body,
            guint          flags,
            Response      *out)
{
  g_autoptr(SoupMessage) msg = new_message (mock, method, path, body, flags);
  g_autoptr(GInputStream) stream = NULL;

  stream = soup_session_send (session, msg, NULL, &out->error);
  out->status = soup_message_get_status (msg);
  out->headers = soup_message_headers_ref (soup_message_get_response_headers (msg));
  if (stream == NULL)
    {
      out->body = g_bytes_new (NULL, 0);
      return;
    }
  out->body = read_all (stream, &out->error);
}

static void
post (TallyTestMock *mock,
      const char    *body,
      Response      *out)
{
  g_autoptr(SoupSession) session = soup_session_new ();

  do_request (session, mock, "POST", "/v1/messages", body, WITH_AUTH, out);
}

static TallyTestMock *
start_mock (const char *scenario)
{
  g_autoptr(GError) error = NULL;
  TallyTestMock *mock = tally_test_mock_start (scenario, &error);

  g_assert_no_error (error);
  g_assert_nonnull (mock);
  return mock;
}

static char *
body_text (Response *response)
{
  return g_strndup (g_bytes_get_data (response->body, NULL), g_bytes_get_size (response->body));
}

/* Checks an API-shaped error body and returns its error.message. */
static char *
check_error_body (Response   *response,
                  guint       status,
                  const char *type)
{
  g_autofree char *text = body_text (response);
  g_autoptr(JsonObject) object = NULL;
  JsonObject *error;

  g_assert_no_error (response->error);
  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (soup_message_headers_get_content_type (response->headers, NULL), ==,
                   "application/json");

  object = tally_test_parse_object (text);
  g_assert_cmpstr (json_object_get_string_member (object, "type"), ==, "error");
  g_assert_cmpstr (json_object_get_string_member (object, "request_id"), ==,
                   soup_message_headers_get_one (response->headers, "request-id"));
  error = json_object_get_object_member (object, "error");
  g_assert_cmpstr (json_object_get_string_member (error, "type"), ==, type);
  return g_strdup (json_object_get_string_member (error, "message"));
}

typedef struct {
  char     *name;
  JsonNode *data;
} SseEvent;

static void
sse_event_free (SseEvent *event)
{
  g_free (event->name);
  g_clear_pointer (&event->data, json_node_unref);
  g_free (event);
}

/* A small SSE reader for the mock's own output ("\n" line ends). */
static GPtrArray *
parse_sse (GBytes *body)
{
  GPtrArray *events = g_ptr_array_new_with_free_func ((GDestroyNotify) sse_event_free);
  g_autofree char *text = g_strndup (g_bytes_get_data (body, NULL), g_bytes_get_size (body));
  g_auto(GStrv) chunks = g_strsplit (text, "\n\n", -1);

  for (guint i = 0; chunks[i] != NULL; i++)
    {
      g_auto(GStrv) lines = g_strsplit (chunks[i], "\n", -1);
      SseEvent *event;

      if (*chunks[i] == '\0')
        continue;

      event = g_new0 (SseEvent, 1);
      for (guint j = 0; lines[j] != NULL; j++)
        {
          if (g_str_has_prefix (lines[j], "event: "))
            {
              event->name = g_strdup (lines[j] + strlen ("event: "));
            }
          else if (g_str_has_prefix (lines[j], "data: "))
            {
              g_autoptr(GError) error = NULL;

              event->data = json_from_string (lines[j] + strlen ("data: "), &error);
              g_assert_no_error (error);
            }
        }
      g_assert_nonnull (event->name);
      g_assert_nonnull (event->data);
      g_assert_cmpstr (json_object_get_string_member (json_node_get_object (event->data), "type"),
                       ==, event->name);
      g_ptr_array_add (events, event);
    }

  return events;
}

/* The event names joined with ",", each run of deltas written once as
 * "delta". */
static char *
event_outline (GPtrArray *events)
{
  GString *out = g_string_new (NULL);
  const char *previous = NULL;

  for (guint i = 0; i < events->len; i++)
    {
      SseEvent *event = g_ptr_array_index (events, i);
      const char *name = event->name;

      if (g_str_equal (name, "content_block_delta"))
        name = "delta";
      if (g_strcmp0 (previous, "delta") == 0 && g_str_equal (name, "delta"))
        continue;
      if (out->len > 0)
        g_string_append_c (out, ',');
      g_string_append (out, name);
      previous = name;
    }

  return g_string_free (out, FALSE);
}

/* Concatenates the @field of every delta of type @delta_type for block
 * @index, checking each piece is at most @max_chars characters. */
static char *
collect_deltas (GPtrArray  *events,
                guint       index,
                const char *delta_type,
                const char *field,
                glong       max_chars)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < events->len; i++)
    {
      SseEvent *event = g_ptr_array_index (events, i);
      JsonObject *data = json_node_get_object (event->data);
      JsonObject *delta;
      const char *piece;

      if (!g_str_equal (event->name, "content_block_delta") ||
          json_object_get_int_member (data, "index") != index)
        continue;
      delta = json_object_get_object_member (data, "delta");
      if (!g_str_equal (json_object_get_string_member (delta, "type"), delta_type))
        continue;
      piece = json_object_get_string_member (delta, field);
      if (max_chars > 0)
        g_assert_cmpint (g_utf8_strlen (piece, -1), <=, max_chars);
      g_string_append (out, piece);
    }

  return g_string_free (out, FALSE);
}

static JsonObject *
find_event (GPtrArray  *events,
            const char *name)
{
  for (guint i = 0; i < events->len; i++)
    {
      SseEvent *event = g_ptr_array_index (events, i);

      if (g_str_equal (event->name, name))
        return json_node_get_object (event->data);
    }

  return NULL;
}

/* The content_block of the content_block_start event of block @index. */
static JsonObject *
find_block_start (GPtrArray *events,
                  guint      index)
{
  for (guint i = 0; i < events->len; i++)
    {
      SseEvent *event = g_ptr_array_index (events, i);
      JsonObject *data = json_node_get_object (event->data);

      if (g_str_equal (event->name, "content_block_start") &&
          json_object_get_int_member (data, "index") == index)
        return json_object_get_object_member (data, "content_block");
    }

  g_assert_not_reached ();
}

/* ------------------------------------------------------------------------ */

static void
test_message_stream (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": [{\"message\": {\"id\": \"msg_01\", \"chunk\": 5,"
    " \"usage\": {\"input_tokens\": 321, \"cache_read_input_tokens\": 40, \"output_tokens\": 77},"
    " \"content\": ["
    "  {\"type\": \"thinking\", \"thinking\": \"Count the cafés per city.\", \"signature\": \"c2lnbmF0dXJl\"},"
    "  {\"type\": \"text\", \"text\": \"Beanline has 3 stores — all in Lyon.\"},"
    "  {\"type\": \"tool_use\", \"id\": \"toolu_01A\", \"name\": \"query_database\","
    "   \"input\": {\"sql\": \"SELECT city, count(*) FROM stores GROUP BY city\"}}"
    "]}}]}");
  g_auto(Response) response = { 0 };
  g_autoptr(GPtrArray) events = NULL;
  g_autofree char *outline = NULL;
  g_autofree char *thinking = NULL;
  g_autofree char *signature = NULL;
  g_autofree char *text = NULL;
  g_autofree char *input_json = NULL;
  g_autoptr(JsonObject) input = NULL;
  JsonObject *start, *delta, *usage;

  post (mock, USER_HI, &response);
  g_assert_no_error (response.error);
  g_assert_cmpuint (response.status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_one (response.headers, "Content-Type"), ==,
                   "text/event-stream; charset=utf-8");
  g_assert_cmpstr (soup_message_headers_get_one (response.headers, "request-id"), ==, "req_mock_1");

  events = parse_sse (response.body);
  outline = event_outline (events);
  g_assert_cmpstr (outline, ==,
                   "message_start,"
                   "content_block_start,ping,delta,content_block_stop,"
                   "content_block_start,delta,content_block_stop,"
                   "content_block_start,delta,content_block_stop,"
                   "message_delta,message_stop");

  start = json_object_get_object_member (find_event (events, "message_start"), "message");
  g_assert_cmpstr (json_object_get_string_member (start, "id"), ==, "msg_01");
  g_assert_cmpstr (json_object_get_string_member (start, "model"), ==, "claude-sonnet-5");
  g_assert_true (json_object_get_null_member (start, "stop_reason"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (start, "content")), ==, 0);
  usage = json_object_get_object_member (start, "usage");
  g_assert_cmpint (json_object_get_int_member (usage, "input_tokens"), ==, 321);
  g_assert_cmpint (json_object_get_int_member (usage, "cache_read_input_tokens"), ==, 40);
  g_assert_cmpint (json_object_get_int_member (usage, "cache_creation_input_tokens"), ==, 0);

  thinking = collect_deltas (events, 0, "thinking_delta", "thinking", 5);
  g_assert_cmpstr (thinking, ==, "Count the cafés per city.");
  signature = collect_deltas (events, 0, "signature_delta", "signature", 0);
  g_assert_cmpstr (signature, ==, "c2lnbmF0dXJl");
  text = collect_deltas (events, 1, "text_delta", "text", 5);
  g_assert_cmpstr (text, ==, "Beanline has 3 stores — all in Lyon.");
  input_json = collect_deltas (events, 2, "input_json_delta", "partial_json", 5);
  input = tally_test_parse_object (input_json);
  g_assert_cmpstr (json_object_get_string_member (input, "sql"), ==,
                   "SELECT city, count(*) FROM stores GROUP BY city");

  delta = find_event (events, "message_delta");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (delta, "delta"),
                                                  "stop_reason"), ==, "tool_use");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (delta, "usage"),
                                               "output_tokens"), ==, 77);
}

static void
test_message_defaults (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": [{\"message\": {\"content\": ["
    "  {\"type\": \"redacted_thinking\", \"data\": \"EmwKAhgBEgy3va\"},"
    "  {\"type\": \"text\", \"text\": \"Done.\"}]}}]}");
  g_auto(Response) response = { 0 };
  g_autoptr(GPtrArray) events = NULL;
  g_autofree char *outline = NULL;
  JsonObject *block, *delta;

  post (mock, USER_HI, &response);
  g_assert_cmpuint (response.status, ==, 200);
  events = parse_sse (response.body);
  outline = event_outline (events);
  /* A redacted_thinking block arrives whole: no deltas. */
  g_assert_cmpstr (outline, ==,
                   "message_start,content_block_start,ping,content_block_stop,"
                   "content_block_start,delta,content_block_stop,message_delta,message_stop");

  block = find_block_start (events, 0);
  g_assert_cmpstr (json_object_get_string_member (block, "data"), ==, "EmwKAhgBEgy3va");

  delta = find_event (events, "message_delta");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (delta, "delta"),
                                                  "stop_reason"), ==, "end_turn");
  g_assert_cmpstr (json_object_get_string_member (
                     json_object_get_object_member (find_event (events, "message_start"), "message"),
                     "id"), ==, "msg_mock_1");
}

static void
check_sse_file_identical (const char *fixture)
{
  g_autofree char *scenario =
    g_strdup_printf ("{\"responses\": [{\"sse_file\": \"${TESTDATA}/fixtures/sse/%s\"}]}", fixture);
  g_autoptr(TallyTestMock) mock = start_mock (scenario);
  g_autofree char *path = tally_test_fixture_path (fixture);
  g_autofree char *expected = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Response) response = { 0 };
  gsize expected_length = 0;

  g_file_get_contents (path, &expected, &expected_length, &error);
  g_assert_no_error (error);

  post (mock, USER_HI, &response);
  g_assert_no_error (response.error);
  g_assert_cmpuint (response.status, ==, 200);
  g_assert_cmpmem (g_bytes_get_data (response.body, NULL), g_bytes_get_size (response.body),
                   expected, expected_length);
}

static void
test_sse_file (void)
{
  check_sse_file_identical ("docs_basic_text.sse");
  /* Ends without a blank line and has padding spaces: still byte-exact. */
  check_sse_file_identical ("docs_tool_use.sse");
  check_sse_file_identical ("recorded_go_tool_use_stream.sse");
}

static void
test_rate_limit (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Number of requests has exceeded your rate limit\"},"
    "  \"headers\": {\"retry-after\": \"1\", \"retry-after-ms\": 50}},"
    " {\"status\": 529, \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"},"
    "  \"headers\": {\"x-should-retry\": \"false\"}}]}");
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_autofree char *message = NULL;
  g_autofree char *message2 = NULL;

  post (mock, USER_HI, &first);
  message = check_error_body (&first, 429, "rate_limit_error");
  g_assert_cmpstr (message, ==, "Number of requests has exceeded your rate limit");
  g_assert_cmpstr (soup_message_headers_get_one (first.headers, "retry-after"), ==, "1");
  g_assert_cmpstr (soup_message_headers_get_one (first.headers, "retry-after-ms"), ==, "50");

  post (mock, USER_HI, &second);
  message2 = check_error_body (&second, 529, "overloaded_error");
  g_assert_cmpstr (message2, ==, "Overloaded");
  g_assert_cmpstr (soup_message_headers_get_one (second.headers, "x-should-retry"), ==, "false");
  g_assert_cmpstr (soup_message_headers_get_one (second.headers, "request-id"), ==, "req_mock_2");
}

static void
test_auth (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"ok\"}]}}]}");
  g_autoptr(SoupSession) session = soup_session_new ();
  g_auto(Response) no_key = { 0 };
  g_auto(Response) no_version = { 0 };
  g_auto(Response) good = { 0 };
  g_autofree char *message = NULL;
  g_autofree char *message2 = NULL;
  g_autoptr(JsonArray) requests = NULL;

  do_request (session, mock, "POST", "/v1/messages", USER_HI, WITH_VERSION, &no_key);
  message = check_error_body (&no_key, 401, "authentication_error");
  g_assert_nonnull (strstr (message, "x-api-key"));

  do_request (session, mock, "POST", "/v1/messages", USER_HI, WITH_KEY, &no_version);
  message2 = check_error_body (&no_version, 401, "authentication_error");
  g_assert_nonnull (strstr (message2, "anthropic-version"));

  /* Refused requests do not use up a scripted response. */
  do_request (session, mock, "POST", "/v1/messages", USER_HI, WITH_AUTH, &good);
  g_assert_cmpuint (good.status, ==, 200);

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 3);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (requests, 0), "response"), ==, -1);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (requests, 0), "status"), ==, 401);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (requests, 2), "response"), ==, 0);
}

#define CUT_MESSAGE \
  "{\"id\": \"msg_cut\", \"content\": [{\"type\": \"text\", \"text\": \"A reply long enough to be cut.\"}]}"

static void
test_cut (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"message\": " CUT_MESSAGE ", \"cut_after_bytes\": 100},"
    " {\"message\": " CUT_MESSAGE "},"
    " {\"message\": " CUT_MESSAGE ", \"cut_after_bytes\": 0, \"drip_ms\": 1}]}");
  g_auto(Response) cut = { 0 };
  g_auto(Response) full = { 0 };
  g_auto(Response) at_once = { 0 };

  post (mock, USER_HI, &cut);
  post (mock, USER_HI, &full);

  /* Cut right after the headers. */
  post (mock, USER_HI, &at_once);
  g_assert_cmpuint (at_once.status, ==, 200);
  g_assert_cmpuint (g_bytes_get_size (at_once.body), ==, 0);
  g_assert_error (at_once.error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT);

  g_assert_cmpuint (cut.status, ==, 200);
  g_assert_cmpuint (full.status, ==, 200);
  g_assert_no_error (full.error);
  g_assert_cmpuint (g_bytes_get_size (full.body), >, 100);

  /* Exactly the first 100 bytes, then the connection went away (libsoup
   * reports the unfinished chunked body as an error). */
  g_assert_cmpuint (g_bytes_get_size (cut.body), ==, 100);
  g_assert_cmpmem (g_bytes_get_data (cut.body, NULL), 100, g_bytes_get_data (full.body, NULL), 100);
  g_assert_error (cut.error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT);
}

static void
test_stall (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"This reply stalls early.\"}]},"
    "  \"stall_after_bytes\": 50},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Still serving.\"}]}}]}");
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(SoupMessage) msg = NULL;
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Response) other = { 0 };
  guint8 buffer[256];
  gsize got = 0;
  gssize n;

  /* A read timeout, not a speed assertion: after the 50 bytes nothing may
   * arrive for 2 s. */
  soup_session_set_timeout (session, 2);
  msg = new_message (mock, "POST", "/v1/messages", USER_HI, WITH_AUTH);
  stream = soup_session_send (session, msg, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (soup_message_get_status (msg), ==, 200);

  while (got < 50)
    {
      n = g_input_stream_read (stream, buffer, sizeof buffer, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (n, >, 0);
      got += n;
    }
  g_assert_cmpuint (got, ==, 50);

  /* The stalled stream does not hold up other requests. */
  post (mock, USER_HI, &other);
  g_assert_no_error (other.error);
  g_assert_cmpuint (other.status, ==, 200);

  n = g_input_stream_read (stream, buffer, sizeof buffer, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
  g_assert_cmpint (n, ==, -1);
}

static void
test_error_event (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"First block.\"},"
    "                            {\"type\": \"text\", \"text\": \"Second block.\"}]},"
    "  \"error_event\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"},"
    "  \"error_after_blocks\": 1},"
    " {\"sse_file\": \"${TESTDATA}/fixtures/sse/docs_basic_text.sse\","
    "  \"error_event\": {\"type\": \"api_error\", \"message\": \"Internal\"}}]}");
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) events2 = NULL;
  g_autofree char *outline = NULL;
  g_autofree char *outline2 = NULL;
  JsonObject *error;

  post (mock, USER_HI, &first);
  g_assert_cmpuint (first.status, ==, 200);
  events = parse_sse (first.body);
  outline = event_outline (events);
  g_assert_cmpstr (outline, ==, "message_start,content_block_start,ping,delta,content_block_stop,error");
  error = json_object_get_object_member (find_event (events, "error"), "error");
  g_assert_cmpstr (json_object_get_string_member (error, "type"), ==, "overloaded_error");
  g_assert_cmpstr (json_object_get_string_member (error, "message"), ==, "Overloaded");

  /* K = 0 on a fixture: right after message_start. */
  post (mock, USER_HI, &second);
  events2 = parse_sse (second.body);
  outline2 = event_outline (events2);
  g_assert_cmpstr (outline2, ==, "message_start,error");
}

static void
test_drip (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"sse_file\": \"${TESTDATA}/fixtures/sse/docs_basic_text.sse\", \"drip_bytes\": 64, \"drip_ms\": 2}]}");
  g_autofree char *path = tally_test_fixture_path ("docs_basic_text.sse");
  g_autofree char *expected = NULL;
  g_auto(Response) response = { 0 };
  gsize length = 0;

  g_assert_true (g_file_get_contents (path, &expected, &length, NULL));
  post (mock, USER_HI, &response);
  g_assert_no_error (response.error);
  g_assert_cmpmem (g_bytes_get_data (response.body, NULL), g_bytes_get_size (response.body),
                   expected, length);
}

static void
test_delay_headers (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"late\"}]}, \"delay_headers_ms\": 4000},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"prompt\"}]}}]}");
  g_autoptr(SoupSession) session = soup_session_new ();
  g_auto(Response) late = { 0 };
  g_auto(Response) next = { 0 };

  /* The client gives up before the headers come; the request is recorded
   * anyway and the mock answers the next one. */
  soup_session_set_timeout (session, 1);
  do_request (session, mock, "POST", "/v1/messages", USER_HI, WITH_AUTH, &late);
  g_assert_error (late.error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);

  post (mock, USER_HI, &next);
  g_assert_no_error (next.error);
  g_assert_cmpuint (next.status, ==, 200);
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);
}

#define TOOL_TURN(ID) \
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Let me look.\"}," \
  "{\"type\":\"tool_use\",\"id\":\"" ID "\",\"name\":\"get_schema\",\"input\":{}}]}"

static void
test_history_unpaired (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"ok\"}]}}]}");
  g_auto(Response) bad = { 0 };
  g_auto(Response) good = { 0 };
  g_autofree char *message = NULL;

  post (mock,
        "{\"model\":\"claude-sonnet-5\",\"max_tokens\":1024,\"messages\":["
        "{\"role\":\"user\",\"content\":\"What tables are there?\"},"
        TOOL_TURN ("toolu_01XyZ") ","
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"never mind\"}]}]}",
        &bad);
  message = check_error_body (&bad, 400, "invalid_request_error");
  g_assert_cmpstr (message, ==,
                   "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
                   "after: toolu_01XyZ. Each `tool_use` block must have a corresponding "
                   "`tool_result` block in the next message.");

  post (mock,
        "{\"model\":\"claude-sonnet-5\",\"max_tokens\":1024,\"messages\":["
        "{\"role\":\"user\",\"content\":\"What tables are there?\"},"
        TOOL_TURN ("toolu_01XyZ") ","
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_01XyZ\","
        "\"content\":\"stores, products, sales\"},{\"type\":\"text\",\"text\":\"<system-reminder>ask mode</system-reminder>\"}]}]}",
        &good);
  g_assert_no_error (good.error);
  g_assert_cmpuint (good.status, ==, 200);
}

typedef struct {
  const char *body;
  const char *expected;   /* a substring of the 400 message */
} HistoryCase;

static void
test_history_rules (void)
{
  static const HistoryCase cases[] = {
    { "{not json", "error parsing the body" },
    { "{\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", "model: Field required" },
    { "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", "max_tokens: Field required" },
    { "{\"model\":\"m\",\"max_tokens\":10}", "messages: Field required" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[]}", "at least one message" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"assistant\",\"content\":\"x\"},"
      "{\"role\":\"user\",\"content\":\"y\"}]}", "first message must use the \"user\" role" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
      "{\"role\":\"user\",\"content\":\"y\"}]}", "messages.1: roles must alternate" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
      TOOL_TURN ("toolu_B") ",{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"first\"},"
      "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_B\",\"content\":\"r\"}]}]}",
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
      TOOL_TURN ("toolu_C") ",{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
      "\"tool_use_id\":\"toolu_C\",\"content\":\"r\"},{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_ZZ\"}]}]}",
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_ZZ" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
      "\"tool_use_id\":\"toolu_X\",\"content\":\"r\"}]}]}",
      "messages.0.content.0: unexpected `tool_use_id`" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
      TOOL_TURN ("toolu_D") ",{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_D\"}]},"
      TOOL_TURN ("toolu_D") ",{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_D\"}]}]}",
      "messages.3.content.1: `tool_use` ids must be unique" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\"}]}]}",
      "messages.0.content.0: text content blocks must be non-empty" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
      "{\"role\":\"assistant\",\"content\":\"The answer is\"}]}",
      "Prefilling assistant messages is not supported" },
    { "{\"model\":\"m\",\"max_tokens\":16000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":500},"
      "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
      "budget_tokens: Input should be greater than or equal to 1024" },
    { "{\"model\":\"m\",\"max_tokens\":8000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":8000},"
      "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
      "`max_tokens` must be greater than `thinking.budget_tokens`" },
    { "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"\"},{\"type\":\"text\",\"text\":\"a\"}]},"
      "{\"role\":\"user\",\"content\":\"y\"}]}",
      "messages.1.content.0.signature: Field required" },
  };
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"accepted\"}]}}]}");
  g_auto(Response) good = { 0 };
  g_autofree char *text = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(Response) response = { 0 };
      g_autofree char *message = NULL;

      post (mock, cases[i].body, &response);
      message = check_error_body (&response, 400, "invalid_request_error");
      g_test_message ("case %u: %s", i, message);
      if (strstr (message, cases[i].expected) == NULL)
        g_error ("case %u: expected \"%s\" in \"%s\"", i, cases[i].expected, message);
    }

  /* A valid request with manual thinking and a complete tool round trip
   * (omitted-display thinking with an empty text) still gets the scripted
   * answer, which none of the refusals used up. */
  post (mock,
        "{\"model\":\"m\",\"max_tokens\":16000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":8000},"
        "\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"s\"},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_E\",\"name\":\"get_schema\",\"input\":{}},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_F\",\"name\":\"get_schema\",\"input\":{\"table\":\"t\"}}]},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_F\",\"content\":\"b\"},"
        "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_E\",\"is_error\":true,\"content\":\"denied\"}]}]}",
        &good);
  g_assert_cmpuint (good.status, ==, 200);
  text = body_text (&good);
  g_assert_nonnull (strstr (text, "accepted"));
}

static void
test_history_off (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"check_history\": false,"
    " \"responses\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"whatever\"}]}}]}");
  g_auto(Response) response = { 0 };
  g_autoptr(JsonArray) requests = NULL;

  post (mock, "this is not json", &response);
  g_assert_cmpuint (response.status, ==, 200);

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (requests, 0), "body"),
                   ==, "this is not json");
}

static void
test_templates (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"message\": {\"content\": [{\"type\": \"text\","
    "   \"text\": \"You asked: {{last_user_text}}. The query said: {{last_tool_result}}\"}]}},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"[{{last_tool_result}}]\"}]}}]}");
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) events2 = NULL;
  g_autofree char *text = NULL;
  g_autofree char *text2 = NULL;

  post (mock,
        "{\"model\":\"m\",\"max_tokens\":100,\"messages\":["
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Which store sells most?\"},"
        "{\"type\":\"text\",\"text\":\"<system-reminder>plan mode</system-reminder>\"}]},"
        TOOL_TURN ("toolu_G") ","
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_G\","
        "\"content\":\"Lyon Part-Dieu | 1 234,50 €\"}]}]}",
        &first);
  g_assert_cmpuint (first.status, ==, 200);
  events = parse_sse (first.body);
  text = collect_deltas (events, 0, "text_delta", "text", 8);
  g_assert_cmpstr (text, ==,
                   "You asked: Which store sells most?. The query said: Lyon Part-Dieu | 1 234,50 €");

  /* Block-array content: the texts are concatenated. */
  post (mock,
        "{\"model\":\"m\",\"max_tokens\":100,\"messages\":["
        "{\"role\":\"user\",\"content\":\"go\"}," TOOL_TURN ("toolu_H") ","
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_H\","
        "\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}]}]}",
        &second);
  events2 = parse_sse (second.body);
  text2 = collect_deltas (events2, 0, "text_delta", "text", 8);
  g_assert_cmpstr (text2, ==, "[ab]");
}

static void
test_record (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"models\": [{\"type\": \"model\", \"id\": \"claude-sonnet-5\"}],"
    " \"responses\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"ok\"}]}}]}");
  g_autoptr(SoupSession) session = soup_session_new ();
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_autoptr(JsonArray) requests = NULL;
  JsonObject *request, *headers, *body, *message;

  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 0);
  do_request (session, mock, "POST", "/v1/messages", USER_HI, WITH_AUTH, &first);
  do_request (session, mock, "GET", "/v1/models", NULL, WITH_AUTH, &second);
  g_assert_cmpuint (first.status, ==, 200);
  g_assert_cmpuint (second.status, ==, 200);

  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);
  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);

  request = json_array_get_object_element (requests, 0);
  g_assert_cmpint (json_object_get_int_member (request, "n"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, "POST");
  g_assert_cmpstr (json_object_get_string_member (request, "path"), ==, "/v1/messages");
  g_assert_cmpint (json_object_get_int_member (request, "response"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (request, "status"), ==, 200);
  headers = json_object_get_object_member (request, "headers");
  g_assert_cmpstr (json_object_get_string_member (headers, "x-api-key"), ==, "sk-test-key");
  g_assert_cmpstr (json_object_get_string_member (headers, "anthropic-version"), ==, "2023-06-01");
  g_assert_cmpstr (json_object_get_string_member (headers, "content-type"), ==, "application/json");
  body = json_object_get_object_member (request, "body");
  g_assert_cmpint (json_object_get_int_member (body, "max_tokens"), ==, 1024);
  g_assert_true (json_object_get_boolean_member (body, "stream"));
  message = json_array_get_object_element (json_object_get_array_member (body, "messages"), 0);
  g_assert_cmpstr (json_object_get_string_member (message, "content"), ==, "hi");

  request = json_array_get_object_element (requests, 1);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, "GET");
  g_assert_cmpstr (json_object_get_string_member (request, "path"), ==, "/v1/models");
  g_assert_true (json_object_get_null_member (request, "body"));
  g_assert_cmpint (json_object_get_int_member (request, "response"), ==, -1);
}

static void
test_exhausted (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": [{\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"only one\"}]}}]}");
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_autofree char *message = NULL;

  post (mock, USER_HI, &first);
  g_assert_cmpuint (first.status, ==, 200);

  post (mock, USER_HI, &second);
  message = check_error_body (&second, 500, "api_error");
  g_assert_nonnull (strstr (message, "no scripted response left"));
  g_assert_cmpstr (soup_message_headers_get_one (second.headers, "x-should-retry"), ==, "false");
}

static void
test_match (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"responses\": ["
    " {\"match\": {\"last_user_text_contains\": \"revenue\"},"
    "  \"message\": {\"content\": [{\"type\": \"text\", \"text\": \"REVENUE\"}]}},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"DEFAULT-1\"}]}},"
    " {\"match\": {\"contains\": \"\\\"get_schema\\\"\"},"
    "  \"message\": {\"content\": [{\"type\": \"text\", \"text\": \"SCHEMA\"}]}},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"DEFAULT-2\"}]}}]}");
  static const struct { const char *prompt; const char *expected; } steps[] = {
    { "hello", "DEFAULT-1" },
    { "show revenue by store", "REVENUE" },
    { "revenue again", "DEFAULT-2" },  /* the matching one is used up */
  };
  g_auto(Response) schema = { 0 };
  g_autoptr(GPtrArray) schema_events = NULL;
  g_autofree char *schema_text = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_autofree char *body =
        g_strdup_printf ("{\"model\":\"m\",\"max_tokens\":100,\"messages\":"
                         "[{\"role\":\"user\",\"content\":\"%s\"}]}", steps[i].prompt);
      g_auto(Response) response = { 0 };
      g_autoptr(GPtrArray) events = NULL;
      g_autofree char *text = NULL;

      post (mock, body, &response);
      g_assert_cmpuint (response.status, ==, 200);
      events = parse_sse (response.body);
      text = collect_deltas (events, 0, "text_delta", "text", 0);
      g_assert_cmpstr (text, ==, steps[i].expected);
    }

  post (mock,
        "{\"model\":\"m\",\"max_tokens\":100,\"tools\":[{\"name\":\"get_schema\",\"input_schema\":{\"type\":\"object\"}}],"
        "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
        &schema);
  schema_events = parse_sse (schema.body);
  schema_text = collect_deltas (schema_events, 0, "text_delta", "text", 0);
  g_assert_cmpstr (schema_text, ==, "SCHEMA");
}

static void
test_models (void)
{
  g_autoptr(TallyTestMock) mock = start_mock (
    "{\"models\": ["
    " {\"type\": \"model\", \"id\": \"claude-opus-4-8\", \"display_name\": \"Claude Opus 4.8\"},"
    " {\"type\": \"model\", \"id\": \"claude-sonnet-5\", \"display_name\": \"Claude Sonnet 5\"},"
    " {\"type\": \"model\", \"id\": \"claude-haiku-4-5\", \"display_name\": \"Claude Haiku 4.5\"}],"
    " \"responses\": []}");
  g_autoptr(SoupSession) session = soup_session_new ();
  g_auto(Response) all = { 0 };
  g_auto(Response) page = { 0 };
  g_auto(Response) one = { 0 };
  g_autofree char *all_text = NULL;
  g_autofree char *page_text = NULL;
  g_autofree char *one_text = NULL;
  g_autoptr(JsonObject) all_object = NULL;
  g_autoptr(JsonObject) page_object = NULL;
  g_autoptr(JsonObject) one_object = NULL;

  do_request (session, mock, "GET", "/v1/models", NULL, WITH_AUTH, &all);
  g_assert_cmpuint (all.status, ==, 200);
  all_text = body_text (&all);
  all_object = tally_test_parse_object (all_text);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (all_object, "data")), ==, 3);
  g_assert_false (json_object_get_boolean_member (all_object, "has_more"));
  g_assert_cmpstr (json_object_get_string_member (all_object, "first_id"), ==, "claude-opus-4-8");
  g_assert_cmpstr (json_object_get_string_member (all_object, "last_id"), ==, "claude-haiku-4-5");

  do_request (session, mock, "GET", "/v1/models?limit=1&after_id=claude-opus-4-8", NULL, WITH_AUTH, &page);
  page_text = body_text (&page);
  page_object = tally_test_parse_object (page_text);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (page_object, "data")), ==, 1);
  g_assert_true (json_object_get_boolean_member (page_object, "has_more"));
  g_assert_cmpstr (json_object_get_string_member (page_object, "first_id"), ==, "claude-sonnet-5");

  do_request (session, mock, "GET", "/v1/models/claude-haiku-4-5", NULL, WITH_AUTH, &one);
  one_text = body_text (&one);
  one_object = tally_test_parse_object (one_text);
  g_assert_cmpstr (json_object_get_string_member (one_object, "display_name"), ==, "Claude Haiku 4.5");
}

static void
test_bad_scenario (void)
{
  static const char * const scenarios[] = {
    "{\"responses\": [{\"mesage\": {}}]}",
    "{\"responses\": [{\"sse_file\": \"does-not-exist.sse\"}]}",
    "{\"responses\": [{\"message\": {\"content\": [{\"type\": \"text\"}]}}]}",
    "{\"responses\": [{\"error\": {\"type\": \"api_error\", \"message\": \"x\"}, \"body_text\": \"y\"}]}",
    "[1, 2]",
  };

  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TallyTestMock) mock = tally_test_mock_start (scenarios[i], &error);

      g_assert_null (mock);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
    }
}

static TallyTestMock *
start_example (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "mock-api", "scenarios", name, NULL);
  g_autoptr(GError) error = NULL;
  TallyTestMock *mock = tally_test_mock_start_file (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (mock);
  return mock;
}

static void
test_example_retry (void)
{
  g_autoptr(TallyTestMock) mock = start_example ("retry-then-stream.json");
  g_autofree char *sse_path = g_test_build_filename (G_TEST_DIST, "mock-api", "scenarios", "hello.sse", NULL);
  g_autofree char *expected = NULL;
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_auto(Response) third = { 0 };
  g_autofree char *message = NULL;
  g_autofree char *message2 = NULL;
  gsize length = 0;

  g_assert_true (g_str_has_prefix (tally_test_mock_get_base_url (mock), "http://127.0.0.1:"));
  g_assert_cmpuint (tally_test_mock_get_port (mock), >, 0);

  post (mock, USER_HI, &first);
  message = check_error_body (&first, 429, "rate_limit_error");
  g_assert_cmpstr (soup_message_headers_get_one (first.headers, "retry-after-ms"), ==, "50");

  post (mock, USER_HI, &second);
  message2 = check_error_body (&second, 529, "overloaded_error");

  /* "sse_file" relative to the scenario's folder. */
  g_assert_true (g_file_get_contents (sse_path, &expected, &length, NULL));
  post (mock, USER_HI, &third);
  g_assert_no_error (third.error);
  g_assert_cmpuint (third.status, ==, 200);
  g_assert_cmpmem (g_bytes_get_data (third.body, NULL), g_bytes_get_size (third.body), expected, length);
}

static void
test_example_tool_round_trip (void)
{
  g_autoptr(TallyTestMock) mock = start_example ("tool-round-trip.json");
  g_auto(Response) first = { 0 };
  g_auto(Response) second = { 0 };
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) events2 = NULL;
  g_autofree char *signature = NULL;
  g_autofree char *answer = NULL;
  g_autofree char *body = NULL;
  JsonObject *tool;

  post (mock,
        "{\"model\":\"claude-sonnet-5\",\"max_tokens\":16000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":8000},"
        "\"messages\":[{\"role\":\"user\",\"content\":\"Which is our busiest store?\"}]}",
        &first);
  g_assert_cmpuint (first.status, ==, 200);
  events = parse_sse (first.body);
  signature = collect_deltas (events, 0, "signature_delta", "signature", 0);
  g_assert_cmpstr (signature, ==, "mock-sig-1");
  tool = find_block_start (events, 2);
  g_assert_cmpstr (json_object_get_string_member (tool, "id"), ==, "toolu_01Busiest");

  /* Echo the turn (as the client must) and answer the tool call. */
  body = g_strdup (
    "{\"model\":\"claude-sonnet-5\",\"max_tokens\":16000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":8000},"
    "\"messages\":[{\"role\":\"user\",\"content\":\"Which is our busiest store?\"},"
    "{\"role\":\"assistant\",\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"The sales table has store ids; count rows per store.\",\"signature\":\"mock-sig-1\"},"
    "{\"type\":\"text\",\"text\":\"Let me count the sales per store.\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_01Busiest\",\"name\":\"query_database\",\"input\":{\"sql\":\"SELECT 1\"}}]},"
    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_01Busiest\","
    "\"content\":\"store_id | n\\n3 | 1200\"}]}]}");
  post (mock, body, &second);
  g_assert_cmpuint (second.status, ==, 200);
  events2 = parse_sse (second.body);
  answer = collect_deltas (events2, 0, "text_delta", "text", 0);
  g_assert_cmpstr (answer, ==, "The busiest store is:\nstore_id | n\n3 | 1200");
}

static void
test_fixture_path (void)
{
  g_autofree char *path = tally_test_fixture_path ("docs_basic_text.sse");
  g_autofree char *expected = g_build_filename (tally_test_data_dir (), "fixtures", "sse",
                                                "docs_basic_text.sse", NULL);

  g_assert_cmpstr (path, ==, expected);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/mock-api/message/stream", test_message_stream);
  g_test_add_func ("/tally/mock-api/message/defaults", test_message_defaults);
  g_test_add_func ("/tally/mock-api/sse-file/byte-identical", test_sse_file);
  g_test_add_func ("/tally/mock-api/http/rate-limit", test_rate_limit);
  g_test_add_func ("/tally/mock-api/http/auth", test_auth);
  g_test_add_func ("/tally/mock-api/http/exhausted", test_exhausted);
  g_test_add_func ("/tally/mock-api/fault/cut", test_cut);
  g_test_add_func ("/tally/mock-api/fault/stall", test_stall);
  g_test_add_func ("/tally/mock-api/fault/error-event", test_error_event);
  g_test_add_func ("/tally/mock-api/fault/drip", test_drip);
  g_test_add_func ("/tally/mock-api/fault/delay-headers", test_delay_headers);
  g_test_add_func ("/tally/mock-api/history/unpaired-tool-use", test_history_unpaired);
  g_test_add_func ("/tally/mock-api/history/rules", test_history_rules);
  g_test_add_func ("/tally/mock-api/history/off", test_history_off);
  g_test_add_func ("/tally/mock-api/templates/last-tool-result", test_templates);
  g_test_add_func ("/tally/mock-api/select/match", test_match);
  g_test_add_func ("/tally/mock-api/models", test_models);
  g_test_add_func ("/tally/mock-api/record", test_record);
  g_test_add_func ("/tally/mock-api/helper/bad-scenario", test_bad_scenario);
  g_test_add_func ("/tally/mock-api/helper/fixture-path", test_fixture_path);
  g_test_add_func ("/tally/mock-api/examples/retry-then-stream", test_example_retry);
  g_test_add_func ("/tally/mock-api/examples/tool-round-trip", test_example_tool_round_trip);

  return g_test_run ();
}
