/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-api-error.h"
#include "tally-message-stream.h"
#include "tally-test-mock.h"
#include "tally-test-util.h"

/* Helpers */

static const char *
error_code_name (const GError *error)
{
  static const char * const names[] = {
    "INVALID_REQUEST", "AUTHENTICATION", "BILLING", "PERMISSION", "NOT_FOUND",
    "REQUEST_TIMEOUT", "CONFLICT", "REQUEST_TOO_LARGE", "RATE_LIMIT", "API",
    "TIMEOUT", "OVERLOADED", "STREAM", "NETWORK", "STALLED", "INCOMPLETE", "PROTOCOL",
  };

  g_assert_true (error->domain == TALLY_API_ERROR);
  g_assert_cmpint (error->code, >=, 0);
  g_assert_cmpint (error->code, <, (int) G_N_ELEMENTS (names));

  return names[error->code];
}

static void
feed_string (TallyMessageStream *stream,
             const char         *text)
{
  tally_message_stream_feed (stream, (const guint8 *) text, strlen (text));
}

static void
apply_ok (TallyMessageStream *stream,
          const char         *event_name,
          const char         *data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (tally_message_stream_apply_event (stream, event_name, data, &error));
  g_assert_no_error (error);
}

static void
apply_fails (TallyMessageStream *stream,
             const char         *event_name,
             const char         *data,
             TallyApiError       code,
             const char         *message_prefix)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (tally_message_stream_apply_event (stream, event_name, data, &error));
  g_assert_error (error, TALLY_API_ERROR, (int) code);
  if (message_prefix != NULL && !g_str_has_prefix (error->message, message_prefix))
    g_error ("error message \"%s\" does not start with \"%s\"", error->message, message_prefix);

  /* The first failure is stored. */
  g_assert_nonnull (tally_message_stream_get_error (stream));
  g_assert_cmpstr (tally_message_stream_get_error (stream)->message, ==, error->message);
}

static void
assert_content (TallyMessageStream *stream,
                const char * const *expected)
{
  g_autoptr(GPtrArray) content = tally_message_stream_dup_content (stream);
  guint n_expected = g_strv_length ((char **) expected);

  for (guint i = 0; i < MIN (content->len, n_expected); i++)
    g_assert_cmpstr (g_ptr_array_index (content, i), ==, expected[i]);
  g_assert_cmpuint (content->len, ==, n_expected);

  /* Whatever we echo must be a JSON object. */
  for (guint i = 0; i < content->len; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;

      json_parser_load_from_data (parser, g_ptr_array_index (content, i), -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
    }
}

static const char *message_start_json =
  "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
  "\"content\":[],\"model\":\"claude-test\",\"stop_reason\":null,\"stop_sequence\":null,"
  "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}";

static TallyMessageStream *
started_stream (void)
{
  TallyMessageStream *stream = tally_message_stream_new ();

  tally_message_stream_begin_attempt (stream, 1);
  apply_ok (stream, "message_start", message_start_json);
  return stream;
}

static void
start_block (TallyMessageStream *stream,
             guint               index,
             const char         *block_json)
{
  g_autofree char *data = g_strdup_printf ("{\"type\":\"content_block_start\",\"index\":%u,\"content_block\":%s}",
                                           index, block_json);

  apply_ok (stream, "content_block_start", data);
}

static void
delta_block (TallyMessageStream *stream,
             guint               index,
             const char         *delta_json)
{
  g_autofree char *data = g_strdup_printf ("{\"type\":\"content_block_delta\",\"index\":%u,\"delta\":%s}",
                                           index, delta_json);

  apply_ok (stream, "content_block_delta", data);
}

static void
stop_block (TallyMessageStream *stream,
            guint               index)
{
  g_autofree char *data = g_strdup_printf ("{\"type\":\"content_block_stop\",\"index\":%u}", index);

  apply_ok (stream, "content_block_stop", data);
}

static void
finish_ok (TallyMessageStream *stream)
{
  g_autoptr(GError) error = NULL;

  apply_ok (stream, "message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
            "\"usage\":{\"output_tokens\":5}}");
  apply_ok (stream, "message_stop", "{\"type\":\"message_stop\"}");
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);
}

/* Fixtures and golden results */

/* The .message format of tests/golden/README.md. */
static char *
format_result (TallyMessageStream *stream,
               const GError       *error)
{
  const TallyUsage *usage = tally_message_stream_get_usage (stream);
  g_autoptr(GPtrArray) content = tally_message_stream_dup_content (stream);
  const char *stop_reason = tally_message_stream_get_stop_reason (stream);
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, "complete: %s\n", tally_message_stream_is_complete (stream) ? "yes" : "no");
  g_string_append_printf (out, "stop_reason: %s\n", stop_reason ? stop_reason : "(null)");
  g_string_append_printf (out,
                          "usage: input_tokens=%" G_GINT64_FORMAT " output_tokens=%" G_GINT64_FORMAT
                          " cache_creation_input_tokens=%" G_GINT64_FORMAT
                          " cache_read_input_tokens=%" G_GINT64_FORMAT
                          " cache_creation_5m=%" G_GINT64_FORMAT " cache_creation_1h=%" G_GINT64_FORMAT
                          " reported=%s\n",
                          usage->input_tokens, usage->output_tokens,
                          usage->cache_creation_input_tokens, usage->cache_read_input_tokens,
                          usage->cache_creation_5m, usage->cache_creation_1h,
                          usage->reported ? "yes" : "no");

  if (error == NULL)
    g_string_append (out, "error: none\n");
  else if (error->code == TALLY_API_ERROR_STREAM)
    g_string_append_printf (out, "error: %s [%s]: %s\n", error_code_name (error),
                            tally_message_stream_get_error_type (stream), error->message);
  else
    g_string_append_printf (out, "error: %s: %s\n", error_code_name (error), error->message);

  g_string_append_printf (out, "blocks: %u\n", tally_message_stream_get_n_blocks (stream));
  for (guint i = 0; i < content->len; i++)
    {
      const char *text = g_ptr_array_index (content, i);

      g_assert_null (strchr (text, '\n'));
      g_string_append_printf (out, "content: %s\n", text);
    }

  return g_string_free (out, FALSE);
}

/* Feeds @data in pieces of @chunk bytes (0: whole) to a fresh attempt. */
static char *
accumulate (TallyMessageStream *stream,
            const guint8       *data,
            gsize               len,
            gsize               chunk)
{
  g_autoptr(GError) error = NULL;
  gboolean ok;

  tally_message_stream_begin_attempt (stream, 1);

  if (chunk == 0)
    chunk = MAX (len, 1);
  for (gsize offset = 0; offset < len; offset += chunk)
    tally_message_stream_feed (stream, data + offset, MIN (chunk, len - offset));

  ok = tally_message_stream_end_of_input (stream, &error);
  g_assert_true (ok == (error == NULL));
  if (!ok)
    g_assert_true (tally_message_stream_get_error (stream) != NULL);

  return format_result (stream, error);
}

static void
test_fixture_golden (void)
{
  g_autoptr(GPtrArray) names = tally_test_list_sse_fixtures ();
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  gboolean update = g_getenv ("TALLY_UPDATE_GOLDEN") != NULL;

  g_assert_cmpuint (names->len, >, 0);

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autoptr(GBytes) bytes = tally_test_load_sse_fixture (name);
      g_autofree char *golden_name = g_strconcat (name, ".message", NULL);
      g_autofree char *golden_path = g_test_build_filename (G_TEST_DIST, "golden", golden_name, NULL);
      g_autofree char *whole = NULL;
      g_autofree char *bytewise = NULL;
      g_autofree char *chunked = NULL;
      g_autofree char *expected = NULL;
      g_autoptr(GError) error = NULL;
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);

      whole = accumulate (stream, data, len, 0);
      bytewise = accumulate (stream, data, len, 1);
      chunked = accumulate (stream, data, len, 7);
      g_assert_cmpstr (bytewise, ==, whole);
      g_assert_cmpstr (chunked, ==, whole);

      if (update)
        {
          g_file_set_contents (golden_path, whole, -1, &error);
          g_assert_no_error (error);
          continue;
        }

      g_test_message ("golden %s", golden_name);
      g_file_get_contents (golden_path, &expected, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (whole, ==, expected);
    }
}

/* The values tests/fixtures/sse/README.md states for the fixtures, checked
 * through the API rather than through the golden text. */
static void
test_fixture_docs_basic_text (void)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture ("docs_basic_text");
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;
  const TallyUsage *usage;

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);

  g_assert_cmpstr (tally_message_stream_get_message_id (stream), ==, "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY");
  g_assert_cmpstr (tally_message_stream_get_model (stream), ==, "claude-sonnet-4-5-20250929");
  g_assert_cmpstr (tally_message_stream_get_stop_reason (stream), ==, "end_turn");
  g_assert_null (tally_message_stream_get_stop_sequence (stream));
  usage = tally_message_stream_get_usage (stream);
  g_assert_cmpint (usage->input_tokens, ==, 25);
  g_assert_cmpint (usage->output_tokens, ==, 15);
  g_assert_true (usage->reported);
  g_assert_cmpuint (tally_message_stream_get_n_blocks (stream), ==, 1);
  g_assert_cmpstr (tally_message_stream_get_block_type (stream, 0), ==, "text");
  assert_content (stream, (const char * const[]) { "{\"type\":\"text\",\"text\":\"Hello!\"}", NULL });
}

static void
test_fixture_tool_use_no_trailing_blank_line (void)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture ("docs_tool_use");
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));

  /* message_stop has no blank line after it: only end_of_input delivers it. */
  g_assert_false (tally_message_stream_is_complete (stream));
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);
  g_assert_true (tally_message_stream_is_complete (stream));

  g_assert_cmpstr (tally_message_stream_get_stop_reason (stream), ==, "tool_use");
  assert_content (stream, (const char * const[]) {
    "{\"type\":\"text\",\"text\":\"Okay, let's check the weather for San Francisco, CA:\"}",
    "{\"type\":\"tool_use\",\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":\"get_weather\","
    "\"input\":{\"location\": \"San Francisco, CA\", \"unit\": \"fahrenheit\"}}",
    NULL });
}

/* The max_tokens fixture: the cut tool block is never echoed. */
static void
test_fixture_incomplete_partial_json (void)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture ("sdk_py_incomplete_partial_json");
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *block = NULL;

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);

  g_assert_cmpstr (tally_message_stream_get_stop_reason (stream), ==, "max_tokens");
  g_assert_cmpuint (tally_message_stream_get_n_blocks (stream), ==, 2);
  g_assert_true (tally_message_stream_block_is_stopped (stream, 0));
  g_assert_false (tally_message_stream_block_is_stopped (stream, 1));
  g_assert_cmpstr (tally_message_stream_get_block_type (stream, 1), ==, "tool_use");
  assert_content (stream, (const char * const[]) {
    "{\"type\":\"text\",\"text\":\"I'll create a comprehensive tax guide for someone with multiple W2s and "
    "save it in a file called taxes.txt. Let me do that for you now.\"}",
    NULL });

  /* The unstopped block is still visible for debugging, as valid JSON. */
  block = tally_message_stream_dup_block_json (stream, 1);
  g_assert_cmpstr (block, ==,
                   "{\"type\":\"tool_use\",\"id\":\"toolu_01EKqbqmZrGRXy18eN7m9kvY\",\"name\":\"make_file\","
                   "\"input\":{},\"partial_json\":\"{\\\"filename\\\": \\\"taxes.txt\\\", \\\"lines_of_text\\\": "
                   "[\\n\\\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\\\",\\n\\\"\\\",\\n"
                   "\\\"## INTRODUCTION\\\",\\n\\\"\\\",\\n\\\"Filing taxes\"}");
  g_assert_null (tally_message_stream_dup_block_json (stream, 2));
}

/* The documentation's web search example contains "..." elisions: a clean
 * PROTOCOL error at the first unparsable event, never a crash. */
static void
test_fixture_unparsable (void)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture ("docs_web_search_server_tool_use");
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_assert_nonnull (tally_message_stream_get_error (stream));
  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL);
  g_assert_true (g_str_has_prefix (error->message, "invalid JSON in content_block_start event"));
  g_assert_null (tally_message_stream_get_error_type (stream));
  g_assert_false (tally_message_stream_is_complete (stream));
  /* Blocks 0 and 1 were complete before the bad event. */
  g_assert_cmpuint (tally_message_stream_get_n_blocks (stream), ==, 2);
  g_assert_true (tally_message_stream_block_is_stopped (stream, 1));
}

/* Cutting a stream anywhere gives a clean error (or success once
 * message_stop is in), never a crash. A cut is a cut connection, error kind
 * "network" (TALLY_API_ERROR_INCOMPLETE), wherever it falls, even in the
 * middle of an event's JSON; only an `error` event already received keeps
 * its own error (kind "stream"). Every fixture, every byte offset. */
/* Under AddressSanitizer (with the full allocation stacks tests/run-all.sh
 * asks for) every offset of every fixture takes minutes; the sanitized run
 * cuts at every 11th offset, and at the offsets just before and after each
 * line end, where the interesting cases are. The plain run takes them all. */
#if defined(__SANITIZE_ADDRESS__)
# define CUT_STRIDE 11
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define CUT_STRIDE 11
# endif
#endif
#ifndef CUT_STRIDE
# define CUT_STRIDE 1
#endif

static gboolean
cut_is_tried (const guint8 *data,
              gsize         len,
              gsize         cut)
{
  if (CUT_STRIDE == 1 || cut % CUT_STRIDE == 0 || cut == len)
    return TRUE;
  /* Next to a line end: just before, on, or just after it. */
  for (gsize k = cut > 2 ? cut - 2 : 0; k <= cut + 1 && k < len; k++)
    if (data[k] == '\n' || data[k] == '\r')
      return TRUE;
  return FALSE;
}

static void
check_truncated_everywhere (const char *name)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture (name);
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);
  const char *stop = g_strstr_len ((const char *) data, len, "message_stop");
  const char *error_event = g_strstr_len ((const char *) data, len, "event: error");
  gsize complete_from = G_MAXSIZE;
  gsize error_from = G_MAXSIZE;

  /* With the JSON's closing brace present, finish() can deliver it. */
  if (stop != NULL)
    complete_from = strchr (stop, '}') + 1 - (const char *) data;
  if (error_event != NULL)
    error_from = strchr (strstr (error_event, "data:"), '\n') - (const char *) data;

  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) before_end = NULL;
      gboolean ok;

      if (!cut_is_tried (data, len, cut))
        continue;

      tally_message_stream_begin_attempt (stream, 1);
      tally_message_stream_feed (stream, data, cut);
      if (tally_message_stream_get_error (stream) != NULL)
        before_end = g_error_copy (tally_message_stream_get_error (stream));
      ok = tally_message_stream_end_of_input (stream, &error);

      if (before_end != NULL)
        {
          /* A complete event already failed (an `error` event, or a
           * fixture's own invalid event): that error stands. */
          g_assert_false (ok);
          g_assert_error (error, before_end->domain, before_end->code);
          continue;
        }

      if (ok)
        {
          if (cut < complete_from)
            g_error ("%s cut at byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " was accepted as complete",
                     name, cut, len);
          continue;
        }

      g_assert_nonnull (error);
      if (cut >= error_from && g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM))
        {
          /* The `error` event, complete but for its blank line. */
          g_assert_cmpstr (tally_api_error_get_kind (error), ==, "stream");
          continue;
        }
      if (!g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE))
        g_error ("%s cut at byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT ": %s",
                 name, cut, len, error->message);
      g_assert_cmpstr (tally_api_error_get_kind (error), ==, "network");
    }
}

static void
test_fixture_truncated_everywhere (void)
{
  g_autoptr(GDir) dir = NULL;
  g_autofree char *folder = g_build_filename (tally_test_data_dir (), "fixtures", "sse", NULL);
  const char *entry;
  guint n = 0;

  dir = g_dir_open (folder, 0, NULL);
  g_assert_nonnull (dir);
  while ((entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *name = NULL;

      if (!g_str_has_suffix (entry, ".sse"))
        continue;
      name = g_strndup (entry, strlen (entry) - strlen (".sse"));
      check_truncated_everywhere (name);
      n++;
    }
  g_assert_cmpuint (n, >=, 15);
}

/* Random byte damage must never crash. */
static void
test_fixture_corrupted (void)
{
  g_autoptr(GPtrArray) names = tally_test_list_sse_fixtures ();
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (4242);
  guint n_failures = 0;

  for (guint i = 0; i < names->len; i++)
    {
      g_autoptr(GBytes) bytes = tally_test_load_sse_fixture (g_ptr_array_index (names, i));
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);

      for (guint round = 0; round < 200; round++)
        {
          g_autofree guint8 *copy = g_memdup2 (data, len);
          g_autoptr(GError) error = NULL;
          g_autofree char *result = NULL;

          for (guint k = 0; k < 3; k++)
            copy[g_rand_int_range (rand, 0, len)] = (guint8) g_rand_int_range (rand, 0, 256);

          result = accumulate (stream, copy, len, g_rand_int_range (rand, 1, 64));
          if (!g_str_has_prefix (strstr (result, "error: "), "error: none"))
            n_failures++;
        }
    }

  /* Three random bytes in a JSON stream usually break something. */
  g_assert_cmpuint (n_failures, >, 0);
}

/* Blocks */

static void
test_interleaved_blocks (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"Let me \"}");
  start_block (stream, 1, "{\"type\":\"tool_use\",\"id\":\"toolu_A\",\"name\":\"Read\",\"input\":{}}");
  delta_block (stream, 1, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\"}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"look.\"}");
  start_block (stream, 2, "{\"type\":\"tool_use\",\"id\":\"toolu_B\",\"name\":\"Glob\",\"input\":{}}");
  delta_block (stream, 2, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"pattern\\\":\\\"*.c\\\"}\"}");
  delta_block (stream, 1, "{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"a.txt\\\"}\"}");
  stop_block (stream, 2);

  g_assert_false (tally_message_stream_block_is_stopped (stream, 0));
  g_assert_false (tally_message_stream_block_is_stopped (stream, 1));
  g_assert_true (tally_message_stream_block_is_stopped (stream, 2));
  /* Only stopped blocks are content. */
  assert_content (stream, (const char * const[]) {
    "{\"type\":\"tool_use\",\"id\":\"toolu_B\",\"name\":\"Glob\",\"input\":{\"pattern\":\"*.c\"}}",
    NULL });

  stop_block (stream, 0);
  stop_block (stream, 1);
  finish_ok (stream);

  assert_content (stream, (const char * const[]) {
    "{\"type\":\"text\",\"text\":\"Let me look.\"}",
    "{\"type\":\"tool_use\",\"id\":\"toolu_A\",\"name\":\"Read\",\"input\":{\"path\": \"a.txt\"}}",
    "{\"type\":\"tool_use\",\"id\":\"toolu_B\",\"name\":\"Glob\",\"input\":{\"pattern\":\"*.c\"}}",
    NULL });
}

static void
test_block_index_errors (void)
{
  g_autoptr(TallyMessageStream) stream = NULL;

  /* A gap in the start indexes. */
  stream = started_stream ();
  apply_fails (stream, "content_block_start",
               "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
               TALLY_API_ERROR_PROTOCOL, "content_block_start event has index 1, expected 0");
  g_clear_object (&stream);

  /* A delta for a block that never started. */
  stream = started_stream ();
  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  apply_fails (stream, "content_block_delta",
               "{\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}",
               TALLY_API_ERROR_PROTOCOL, "content_block_delta event for unknown content block 3");
  g_clear_object (&stream);

  /* A stop for a block that never started. */
  stream = started_stream ();
  apply_fails (stream, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}",
               TALLY_API_ERROR_PROTOCOL, "content_block_stop event for unknown content block 0");
  g_clear_object (&stream);

  /* Stopping twice. */
  stream = started_stream ();
  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  stop_block (stream, 0);
  apply_fails (stream, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}",
               TALLY_API_ERROR_PROTOCOL, "content_block_stop event for content block 0 after its content_block_stop");
  g_clear_object (&stream);

  /* An index that is not a number. */
  stream = started_stream ();
  apply_fails (stream, "content_block_start",
               "{\"type\":\"content_block_start\",\"index\":\"0\",\"content_block\":{\"type\":\"text\"}}",
               TALLY_API_ERROR_PROTOCOL, "content_block_start event without a valid index");
  g_clear_object (&stream);

  /* A block without a type. */
  stream = started_stream ();
  apply_fails (stream, "content_block_start",
               "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"text\":\"\"}}",
               TALLY_API_ERROR_PROTOCOL, "content block 0 has no type");
}

static void
test_tool_input_empty (void)
{
  static const struct {
    const char *fragments[3];
    const char *input;
  } cases[] = {
    { { "\"\"" }, "{}" },                      /* one empty delta only */
    { { "\"\"", "\"{}\"" }, "{}" },            /* the "{}" form */
    { { NULL }, "{}" },                        /* no delta at all */
    { { "\"\"", "\"  \"" }, "{}" },            /* white space only */
    { { "\"{ }\"" }, "{ }" },                  /* kept byte for byte */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TallyMessageStream) stream = started_stream ();
      g_autofree char *expected = g_strdup_printf ("{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Now\",\"input\":%s}",
                                                   cases[i].input);

      start_block (stream, 0, "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Now\",\"input\":{}}");
      for (guint j = 0; j < G_N_ELEMENTS (cases[i].fragments) && cases[i].fragments[j] != NULL; j++)
        {
          g_autofree char *delta = g_strdup_printf ("{\"type\":\"input_json_delta\",\"partial_json\":%s}",
                                                    cases[i].fragments[j]);
          delta_block (stream, 0, delta);
        }
      stop_block (stream, 0);
      finish_ok (stream);

      assert_content (stream, (const char * const[]) { expected, NULL });
    }
}

static void
test_tool_input_verbatim (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  /* Escapes and spacing are kept exactly; "caller" is kept too. */
  start_block (stream, 0, "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Grep\",\"caller\":{\"type\":\"direct\"},\"input\":{}}");
  delta_block (stream, 0, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"pattern\\\": \\\"a\\\\\\\\/b\\\\u00e9\\\",\"}");
  delta_block (stream, 0, "{\"type\":\"input_json_delta\",\"partial_json\":\"  \\\"n\\\":[1, 2.50]}\"}");
  stop_block (stream, 0);
  finish_ok (stream);

  assert_content (stream, (const char * const[]) {
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Grep\","
    "\"input\":{\"pattern\": \"a\\\\/b\\u00e9\",  \"n\":[1, 2.50]},\"caller\":{\"type\":\"direct\"}}",
    NULL });
}

static void
test_tool_input_invalid (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(GError) error = NULL;

  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  stop_block (stream, 0);
  start_block (stream, 1, "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Read\",\"input\":{}}");
  delta_block (stream, 1, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \"}");
  apply_fails (stream, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}",
               TALLY_API_ERROR_PROTOCOL, "tool_use block 1 has invalid input JSON: ");
  g_assert_false (tally_message_stream_block_is_stopped (stream, 1));

  /* Later input is ignored and end_of_input reports the stored error. */
  apply_fails (stream, "message_stop", "{\"type\":\"message_stop\"}",
               TALLY_API_ERROR_PROTOCOL, "tool_use block 1 has invalid input JSON: ");
  feed_string (stream, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  g_assert_false (tally_message_stream_is_complete (stream));
  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL);
  g_clear_object (&stream);

  /* Valid JSON that is not an object. */
  stream = started_stream ();
  start_block (stream, 0, "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}");
  delta_block (stream, 0, "{\"type\":\"input_json_delta\",\"partial_json\":\"[1,2]\"}");
  apply_fails (stream, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}",
               TALLY_API_ERROR_PROTOCOL, "server_tool_use block 0 has invalid input JSON: not a JSON object");
}

/* A NUL character (\u0000) cannot be kept in a NUL-terminated string:
 * json-glib would cut the text there, and a signed thinking block echoed
 * shorter than it was signed makes every later request of the session
 * fail. The event fails the stream instead; an escaped backslash before
 * "u0000" is text and is kept; a tool input holding one is echoed as sent
 * and flagged, not run (found by a reviewer). */
static void
test_nul_character (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  start_block (stream, 0, "{\"type\":\"thinking\",\"thinking\":\"\"}");
  apply_fails (stream, "content_block_delta",
               "{\"type\":\"content_block_delta\",\"index\":0,"
               "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"think A\\u0000 think B\"}}",
               TALLY_API_ERROR_PROTOCOL, "the content_block_delta event holds a NUL character");
  g_clear_object (&stream);

  stream = started_stream ();
  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"a \\\\u0000 b\"}");
  stop_block (stream, 0);
  start_block (stream, 1, "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"query_database\",\"input\":{}}");
  delta_block (stream, 1, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"sql\\\":\\\"select 'x\\\\u0000'\\\"}\"}");
  stop_block (stream, 1);
  finish_ok (stream);

  assert_content (stream, (const char * const[]) {
    "{\"type\":\"text\",\"text\":\"a \\\\u0000 b\"}",
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"query_database\","
    "\"input\":{\"sql\":\"select 'x\\u0000'\"}}",
    NULL });
  g_assert_null (tally_message_stream_get_block_invalid_input (stream, 0));
  g_assert_cmpstr (tally_message_stream_get_block_invalid_input (stream, 1), ==,
                   "{\"sql\":\"select 'x\\u0000'\"}");
}

static void
test_thinking_blocks (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  /* Missing signature defaults to "". */
  start_block (stream, 0, "{\"type\":\"thinking\",\"thinking\":\"\"}");
  delta_block (stream, 0, "{\"type\":\"thinking_delta\",\"thinking\":\"Step \\\"1\\\"\\n\"}");
  delta_block (stream, 0, "{\"type\":\"thinking_delta\",\"thinking\":\"\"}");
  delta_block (stream, 0, "{\"type\":\"thinking_delta\",\"thinking\":\"Step 2 \\u2014 done\"}");
  /* A text_delta does not fit a thinking block: ignored. */
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"nope\"}");
  stop_block (stream, 0);

  /* Omitted display: no thinking, just a signature, which is assigned. */
  start_block (stream, 1, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}");
  delta_block (stream, 1, "{\"type\":\"signature_delta\",\"signature\":\"first\"}");
  delta_block (stream, 1, "{\"type\":\"signature_delta\",\"signature\":\"EqQB+/=sig\"}");
  stop_block (stream, 1);
  finish_ok (stream);

  assert_content (stream, (const char * const[]) {
    "{\"type\":\"thinking\",\"thinking\":\"Step \\\"1\\\"\\nStep 2 \xE2\x80\x94 done\",\"signature\":\"\"}",
    "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"EqQB+/=sig\"}",
    NULL });
}

static void
test_text_escaping_round_trip (void)
{
  static const char *text = "quote \" backslash \\ tab \t cr \r nl \n ctl \x01\x1f del \x7f "
                            "utf8 \xC3\xA9\xE2\x80\xA8\xF0\x9F\x98\x80 slash /";
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) delta = NULL;
  g_autoptr(GPtrArray) content = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *delta_json = NULL;
  JsonObject *block;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text_delta");
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  delta = json_builder_get_root (builder);
  delta_json = json_to_string (delta, FALSE);

  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  delta_block (stream, 0, delta_json);
  stop_block (stream, 0);
  finish_ok (stream);

  content = tally_message_stream_dup_content (stream);
  g_assert_cmpuint (content->len, ==, 1);
  json_parser_load_from_data (parser, g_ptr_array_index (content, 0), -1, &error);
  g_assert_no_error (error);
  block = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (block, "type"), ==, "text");
  g_assert_cmpstr (json_object_get_string_member (block, "text"), ==, text);
  g_assert_cmpuint (json_object_get_size (block), ==, 2);
}

static void
test_empty_text_left_out (void)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture ("sdk_py_refusal_response");
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GPtrArray) content = NULL;
  g_autofree char *block = NULL;

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_assert_true (tally_message_stream_end_of_input (stream, NULL));

  g_assert_cmpstr (tally_message_stream_get_stop_reason (stream), ==, "refusal");
  g_assert_cmpuint (tally_message_stream_get_n_blocks (stream), ==, 1);
  g_assert_true (tally_message_stream_block_is_stopped (stream, 0));
  content = tally_message_stream_dup_content (stream);
  g_assert_cmpuint (content->len, ==, 0);
  block = tally_message_stream_dup_block_json (stream, 0);
  g_assert_cmpstr (block, ==, "{\"type\":\"text\",\"text\":\"\"}");
}

static void
test_citations (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\",\"citations\":null}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"Per the doc\"}");
  delta_block (stream, 0, "{\"type\":\"citations_delta\",\"citation\":{\"type\":\"char_location\",\"cited_text\":\"x\", \"start_char_index\":0}}");
  delta_block (stream, 0, "{\"type\":\"citations_delta\",\"citation\":{\"type\":\"page_location\",\"start_page_number\":2}}");
  stop_block (stream, 0);
  finish_ok (stream);

  assert_content (stream, (const char * const[]) {
    "{\"type\":\"text\",\"text\":\"Per the doc\",\"citations\":["
    "{\"type\":\"char_location\",\"cited_text\":\"x\", \"start_char_index\":0},"
    "{\"type\":\"page_location\",\"start_page_number\":2}]}",
    NULL });
}

static void
test_unknown_types_tolerated (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(GPtrArray) unknown = NULL;

  apply_ok (stream, "future_event", "{\"type\":\"future_event\",\"n\": 1}");
  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  /* An unknown delta type on a known block is ignored. */
  delta_block (stream, 0, "{\"type\":\"sparkle_delta\",\"text\":\"ignored\"}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"ok\"}");
  stop_block (stream, 0);
  /* Unknown block types are kept verbatim, spacing included. */
  start_block (stream, 1, "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\", \"content\":[{\"type\":\"web_search_result\",\"url\":\"https://example.com/?q=\\\"}\\\"\"}]}");
  stop_block (stream, 1);
  start_block (stream, 2, "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgB\"}");
  /* Deltas do not apply to redacted thinking. */
  delta_block (stream, 2, "{\"type\":\"text_delta\",\"text\":\"nope\"}");
  stop_block (stream, 2);
  /* An unknown block with an unknown delta: fields are assigned. */
  start_block (stream, 3, "{\"type\":\"gizmo\",\"state\":null,\"keep\":[1]}");
  delta_block (stream, 3, "{\"type\":\"gizmo_delta\",\"state\":\"on\"}");
  delta_block (stream, 3, "{\"type\":\"text_delta\",\"text\":\"not for gizmos\"}");
  stop_block (stream, 3);
  apply_ok (stream, NULL, "{\"type\":\"another_future_event\"}");
  finish_ok (stream);

  g_assert_cmpstr (tally_message_stream_get_block_type (stream, 1), ==, "web_search_tool_result");
  assert_content (stream, (const char * const[]) {
    "{\"type\":\"text\",\"text\":\"ok\"}",
    "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\", \"content\":[{\"type\":\"web_search_result\",\"url\":\"https://example.com/?q=\\\"}\\\"\"}]}",
    "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgB\"}",
    "{\"type\":\"gizmo\",\"state\":\"on\",\"keep\":[1]}",
    NULL });

  unknown = tally_message_stream_dup_unknown_events (stream);
  g_assert_cmpuint (unknown->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (unknown, 0), ==, "{\"type\":\"future_event\",\"n\": 1}");
  g_assert_cmpstr (g_ptr_array_index (unknown, 1), ==, "{\"type\":\"another_future_event\"}");
}

static void
test_compaction (void)
{
  g_autoptr(GBytes) bytes = tally_test_load_sse_fixture ("sdk_py_compaction_response");
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_assert_true (tally_message_stream_end_of_input (stream, NULL));

  assert_content (stream, (const char * const[]) {
    "{\"type\":\"compaction\",\"content\":\"Earlier conversation summarized.\","
    "\"encrypted_content\":\"EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload\"}",
    "{\"type\":\"text\",\"text\":\"Hello there!\"}",
    NULL });
}

/* Event order */

static void
test_events_before_message_start (void)
{
  static const struct {
    const char *name;
    const char *data;
  } cases[] = {
    { "content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}" },
    { "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}" },
    { "message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}" },
    { "message_stop", "{\"type\":\"message_stop\"}" },
    { "future_event", "{\"type\":\"future_event\"}" },
    { NULL, "{\"type\":\"message_stop\"}" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
      g_autofree char *prefix = g_strdup_printf ("unexpected %s event before message_start",
                                                 cases[i].name ? cases[i].name : "message_stop");

      tally_message_stream_begin_attempt (stream, 1);
      /* Pings are fine anywhere. */
      apply_ok (stream, "ping", "{\"type\": \"ping\"}");
      apply_ok (stream, NULL, "{\"type\": \"ping\"}");
      apply_fails (stream, cases[i].name, cases[i].data, TALLY_API_ERROR_PROTOCOL, prefix);
      g_assert_false (tally_message_stream_has_content (stream));
    }
}

static void
test_second_message_start (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  apply_fails (stream, "message_start", message_start_json,
               TALLY_API_ERROR_PROTOCOL, "second message_start event");
}

static void
test_events_after_message_stop (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();

  apply_ok (stream, "message_stop", "{\"type\":\"message_stop\"}");
  apply_ok (stream, "ping", "{\"type\":\"ping\"}");
  apply_fails (stream, "content_block_start",
               "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
               TALLY_API_ERROR_PROTOCOL, "unexpected content_block_start event after message_stop");
}

static void
test_bad_json (void)
{
  static const struct {
    const char *name;
    const char *data;
    const char *prefix;
  } cases[] = {
    { "message_start", "{\"type\":\"message_start\",", "invalid JSON in message_start event: " },
    { "message_start", "", "" },
    { "message_start", "[1,2]", "the data of message_start event is not a JSON object" },
    { "message_start", "{\"type\":\"message_start\"}", "message_start event without a message object" },
    { NULL, "{\"no_type\":true}", "event without a name or a JSON type" },
    { "error", "not json", "invalid JSON in error event: " },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();

      tally_message_stream_begin_attempt (stream, 1);
      apply_fails (stream, cases[i].name, cases[i].data, TALLY_API_ERROR_PROTOCOL, cases[i].prefix);
    }
}

static void
test_route_by_json_type (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;

  /* Events without an `event:` line are routed by their JSON type. */
  tally_message_stream_begin_attempt (stream, 1);
  feed_string (stream,
               "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_x\"}}\n\n"
               "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
               "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
               "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
               "data: {\"type\":\"message_stop\"}\n\n");
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (tally_message_stream_get_message_id (stream), ==, "msg_x");
  g_assert_false (tally_message_stream_get_usage (stream)->reported);
  assert_content (stream, (const char * const[]) { "{\"type\":\"text\",\"text\":\"hi\"}", NULL });
}

/* Errors */

static void
test_error_event_before_content (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;
  const GError *stored;

  tally_message_stream_begin_attempt (stream, 1);
  feed_string (stream,
               "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n"
               "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");

  stored = tally_message_stream_get_error (stream);
  g_assert_error (stored, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  g_assert_cmpstr (stored->message, ==, "Overloaded");
  g_assert_cmpstr (tally_message_stream_get_error_type (stream), ==, "overloaded_error");
  /* The block after the error was ignored. */
  g_assert_false (tally_message_stream_has_content (stream));
  g_assert_cmpstr (tally_api_error_get_kind (stored), ==, "stream");
  /* The client classifies a stream error by its type. */
  g_assert_cmpint (tally_api_error_from_type (tally_message_stream_get_error_type (stream), 200), ==,
                   TALLY_API_ERROR_OVERLOADED);

  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
  g_assert_cmpstr (error->message, ==, "Overloaded");
}

static void
test_error_event_after_content (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(GError) error = NULL;

  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"Part\"}");
  apply_fails (stream, "error",
               "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}",
               TALLY_API_ERROR_STREAM, "Internal server error");
  g_assert_true (tally_message_stream_has_content (stream));
  g_assert_cmpstr (tally_message_stream_get_error_type (stream), ==, "api_error");

  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM);
}

static void
test_error_event_without_details (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();

  tally_message_stream_begin_attempt (stream, 1);
  apply_fails (stream, "error", "{\"type\":\"error\"}", TALLY_API_ERROR_STREAM,
               "the API sent an error event without details");
  g_assert_null (tally_message_stream_get_error_type (stream));
}

static void
test_incomplete_after_message_delta (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(GError) error = NULL;

  start_block (stream, 0, "{\"type\":\"text\",\"text\":\"\"}");
  delta_block (stream, 0, "{\"type\":\"text_delta\",\"text\":\"All\"}");
  stop_block (stream, 0);
  apply_ok (stream, "message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}");

  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE);
  g_assert_cmpstr (error->message, ==, "the stream ended before message_stop");
  g_assert_error (tally_message_stream_get_error (stream), TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE);
  g_assert_cmpstr (tally_api_error_get_kind (error), ==, "network");
  g_assert_false (tally_message_stream_is_complete (stream));
  /* What arrived stays readable. */
  g_assert_cmpstr (tally_message_stream_get_stop_reason (stream), ==, "end_turn");
  g_assert_cmpint (tally_message_stream_get_usage (stream)->output_tokens, ==, 3);
}

static void
test_empty_body (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;

  tally_message_stream_begin_attempt (stream, 1);
  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE);
  g_assert_false (tally_message_stream_get_usage (stream)->reported);
}

/* Usage */

/* A block still open at message_stop fails the stream, but for the one
 * max_tokens cut off (the sdk_py_incomplete_partial_json fixture). */
static void
test_unstopped_block (void)
{
  static const char *const stop_reasons[] = { "tool_use", "end_turn", NULL };

  for (guint i = 0; i < G_N_ELEMENTS (stop_reasons); i++)
    {
      g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
      g_autofree char *delta = g_strdup_printf ("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":%s%s%s},"
                                                "\"usage\":{\"output_tokens\":5}}",
                                                stop_reasons[i] != NULL ? "\"" : "",
                                                stop_reasons[i] != NULL ? stop_reasons[i] : "null",
                                                stop_reasons[i] != NULL ? "\"" : "");

      tally_message_stream_begin_attempt (stream, 1);
      apply_ok (stream, "message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":10}}}");
      apply_ok (stream, "content_block_start",
                "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
      apply_ok (stream, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
      apply_ok (stream, "content_block_start",
                "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_n1\","
                "\"name\":\"get_schema\",\"input\":{}}}");
      apply_ok (stream, "content_block_delta",
                "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}");
      apply_ok (stream, "message_delta", delta);
      apply_fails (stream, "message_stop", "{\"type\":\"message_stop\"}", TALLY_API_ERROR_PROTOCOL,
                   "message_stop event while content block 1 has had no content_block_stop");
      g_assert_false (tally_message_stream_is_complete (stream));
    }

  /* A truncation: the open block is dropped, the message is complete. */
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
      g_autofree char *delta = g_strdup_printf ("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\"}}",
                                                i == 0 ? "max_tokens" : "model_context_window_exceeded");

      tally_message_stream_begin_attempt (stream, 1);
      apply_ok (stream, "message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":10}}}");
      apply_ok (stream, "content_block_start",
                "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_n1\","
                "\"name\":\"get_schema\",\"input\":{}}}");
      apply_ok (stream, "message_delta", delta);
      apply_ok (stream, "message_stop", "{\"type\":\"message_stop\"}");
      g_assert_true (tally_message_stream_is_complete (stream));
    }
}

/* A usage member that is not a token count fails the stream: a negative
 * or absurd count would make the receipt and the spend cap wrong. */
static void
test_usage_invalid (void)
{
  static const struct {
    const char *event_name;
    const char *data;
    const char *message;
  } cases[] = {
    { "message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":-2000000}}",
      "message_delta event whose usage output_tokens is not a token count (a whole number from 0 to 1000000000000): -2000000" },
    /* json-glib reads an integer beyond 64 bits as -1 */
    { "message_delta", "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"output_tokens\":99999999999999999999}}",
      "message_delta event whose usage output_tokens is not a token count (a whole number from 0 to 1000000000000): -1" },
    { "message_delta", "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"input_tokens\":1e300}}",
      "message_delta event whose usage input_tokens is not a token count (a whole number from 0 to 1000000000000): 1e+300" },
    { "message_delta", "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"cache_read_input_tokens\":2.5}}",
      "message_delta event whose usage cache_read_input_tokens is not a token count (a whole number from 0 to 1000000000000): 2.5" },
    { "message_delta", "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"output_tokens\":\"12\"}}",
      "message_delta event whose usage output_tokens is not a token count (a whole number from 0 to 1000000000000): a string" },
    { "message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":5,"
      "\"cache_creation\":{\"ephemeral_5m_input_tokens\":-1}}}}",
      "message_start event whose usage ephemeral_5m_input_tokens is not a token count (a whole number from 0 to 1000000000000): -1" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
      const TallyUsage *usage;

      tally_message_stream_begin_attempt (stream, 1);
      if (g_str_equal (cases[i].event_name, "message_delta"))
        apply_ok (stream, "message_start",
                  "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}");
      apply_fails (stream, cases[i].event_name, cases[i].data, TALLY_API_ERROR_PROTOCOL, cases[i].message);
      g_assert_cmpstr (tally_message_stream_get_error (stream)->message, ==, cases[i].message);

      /* Nothing of the bad event was merged. */
      usage = tally_message_stream_get_usage (stream);
      g_assert_cmpint (usage->output_tokens, ==, g_str_equal (cases[i].event_name, "message_delta") ? 1 : 0);
      g_assert_cmpint (usage->input_tokens, ==, g_str_equal (cases[i].event_name, "message_delta") ? 30 : 0);
      g_assert_null (tally_message_stream_get_stop_reason (stream));
    }
}

static void
test_usage_merge (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  const TallyUsage *usage;

  tally_message_stream_begin_attempt (stream, 1);
  usage = tally_message_stream_get_usage (stream);
  g_assert_false (usage->reported);
  g_assert_cmpint (usage->input_tokens, ==, 0);
  g_assert_cmpint (usage->cache_creation_5m, ==, -1);
  g_assert_cmpint (usage->cache_creation_1h, ==, -1);

  apply_ok (stream, "message_start",
            "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":394,"
            "\"cache_creation_input_tokens\":120,\"cache_read_input_tokens\":7,"
            "\"cache_creation\":{\"ephemeral_5m_input_tokens\":100,\"ephemeral_1h_input_tokens\":20},"
            "\"output_tokens\":1,\"service_tier\":\"standard\"}}}");
  usage = tally_message_stream_get_usage (stream);
  g_assert_true (usage->reported);
  g_assert_cmpint (usage->input_tokens, ==, 394);
  g_assert_cmpint (usage->output_tokens, ==, 1);
  g_assert_cmpint (usage->cache_creation_input_tokens, ==, 120);
  g_assert_cmpint (usage->cache_read_input_tokens, ==, 7);
  g_assert_cmpint (usage->cache_creation_5m, ==, 100);
  g_assert_cmpint (usage->cache_creation_1h, ==, 20);

  /* Only output_tokens: the rest stays. */
  apply_ok (stream, "message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":{\"output_tokens\":40}}");
  g_assert_cmpint (usage->input_tokens, ==, 394);
  g_assert_cmpint (usage->output_tokens, ==, 40);
  g_assert_cmpint (usage->cache_creation_input_tokens, ==, 120);

  /* Cumulative: overwrite, never add; null counts as absent; the
   * cache_creation breakdown of message_start is kept. */
  apply_ok (stream, "message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"stop_sequence\",\"stop_sequence\":\"END\"},"
            "\"usage\":{\"input_tokens\":400,\"cache_read_input_tokens\":null,\"output_tokens\":79,"
            "\"server_tool_use\":{\"web_search_requests\":1}}}");
  g_assert_cmpint (usage->input_tokens, ==, 400);
  g_assert_cmpint (usage->output_tokens, ==, 79);
  g_assert_cmpint (usage->cache_creation_input_tokens, ==, 120);
  g_assert_cmpint (usage->cache_read_input_tokens, ==, 7);
  g_assert_cmpint (usage->cache_creation_5m, ==, 100);
  g_assert_cmpint (usage->cache_creation_1h, ==, 20);
  g_assert_cmpstr (tally_message_stream_get_stop_reason (stream), ==, "stop_sequence");
  g_assert_cmpstr (tally_message_stream_get_stop_sequence (stream), ==, "END");
}

static void
test_usage_add (void)
{
  TallyUsage total = { 0, 0, 0, 0, -1, -1, FALSE };
  TallyUsage a = { 10, 20, 30, 40, -1, -1, TRUE };
  TallyUsage b = { 1, 2, 3, 4, 3, -1, TRUE };
  TallyUsage c = { 100, 200, 300, 400, 5, 6, FALSE };

  tally_usage_add (&total, &a);
  g_assert_cmpint (total.input_tokens, ==, 10);
  g_assert_cmpint (total.output_tokens, ==, 20);
  g_assert_cmpint (total.cache_creation_input_tokens, ==, 30);
  g_assert_cmpint (total.cache_read_input_tokens, ==, 40);
  g_assert_cmpint (total.cache_creation_5m, ==, -1);
  g_assert_cmpint (total.cache_creation_1h, ==, -1);
  g_assert_true (total.reported);

  tally_usage_add (&total, &b);
  g_assert_cmpint (total.input_tokens, ==, 11);
  g_assert_cmpint (total.output_tokens, ==, 22);
  g_assert_cmpint (total.cache_creation_input_tokens, ==, 33);
  g_assert_cmpint (total.cache_read_input_tokens, ==, 44);
  g_assert_cmpint (total.cache_creation_5m, ==, 3);
  g_assert_cmpint (total.cache_creation_1h, ==, -1);

  tally_usage_add (&total, &c);
  g_assert_cmpint (total.input_tokens, ==, 111);
  g_assert_cmpint (total.cache_creation_5m, ==, 8);
  g_assert_cmpint (total.cache_creation_1h, ==, 6);
  g_assert_true (total.reported);
}

/* Signals */

static void
message_started_cb (TallyMessageStream *stream,
                    GString            *log)
{
  g_string_append (log, "message-started\n");
}

static void
block_started_cb (TallyMessageStream *stream,
                  guint               index,
                  const char         *type,
                  GString            *log)
{
  g_string_append_printf (log, "block-started %u %s\n", index, type);
}

static void
text_delta_cb (TallyMessageStream *stream,
               guint               index,
               const char         *text,
               GString            *log)
{
  g_string_append_printf (log, "text-delta %u [%s]\n", index, text);
}

static void
thinking_delta_cb (TallyMessageStream *stream,
                   guint               index,
                   const char         *text,
                   GString            *log)
{
  g_string_append_printf (log, "thinking-delta %u [%s]\n", index, text);
}

static void
block_stopped_cb (TallyMessageStream *stream,
                  guint               index,
                  const char         *type,
                  GString            *log)
{
  g_string_append_printf (log, "block-stopped %u %s\n", index, type);
}

static void
message_stopped_cb (TallyMessageStream *stream,
                    GString            *log)
{
  g_string_append (log, "message-stopped\n");
}

static void
retry_cb (TallyMessageStream *stream,
          guint               attempt,
          guint               delay_ms,
          guint               status,
          const char         *error_type,
          GString            *log)
{
  g_string_append_printf (log, "retry %u %u %u %s\n", attempt, delay_ms, status,
                          error_type ? error_type : "(null)");
}

static void
attempt_finished_cb (TallyMessageStream *stream,
                     guint               attempt,
                     guint               status,
                     const char         *request_id,
                     gint64              duration_ms,
                     const GError       *error,
                     GString            *log)
{
  g_string_append_printf (log, "attempt-finished %u %u %s %" G_GINT64_FORMAT " %s\n",
                          attempt, status, request_id ? request_id : "(null)", duration_ms,
                          error ? error->message : "(null)");
}

static void
connect_all (TallyMessageStream *stream,
             GString            *log)
{
  g_signal_connect (stream, "message-started", G_CALLBACK (message_started_cb), log);
  g_signal_connect (stream, "block-started", G_CALLBACK (block_started_cb), log);
  g_signal_connect (stream, "text-delta", G_CALLBACK (text_delta_cb), log);
  g_signal_connect (stream, "thinking-delta", G_CALLBACK (thinking_delta_cb), log);
  g_signal_connect (stream, "block-stopped", G_CALLBACK (block_stopped_cb), log);
  g_signal_connect (stream, "message-stopped", G_CALLBACK (message_stopped_cb), log);
  g_signal_connect (stream, "retry", G_CALLBACK (retry_cb), log);
  g_signal_connect (stream, "attempt-finished", G_CALLBACK (attempt_finished_cb), log);
}

static void
test_signals (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GString) log = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  connect_all (stream, log);

  tally_message_stream_begin_attempt (stream, 1);
  feed_string (stream, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n");
  g_assert_cmpstr (log->str, ==, "message-started\n");

  /* Delta signals are synchronous: they fire within the feed call. */
  feed_string (stream,
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \\u00e9\"}}\n\n"
               "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"there\"}}\n\n"
               "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
               "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
               "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n"
               "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);

  tally_message_stream_notify_attempt_finished (stream, 200, "req_1", 1234, NULL);

  g_assert_cmpstr (log->str, ==,
                   "message-started\n"
                   "block-started 0 thinking\n"
                   "thinking-delta 0 [hmm]\n"
                   "block-started 1 text\n"
                   "text-delta 1 [Hi \xC3\xA9]\n"
                   "block-stopped 0 thinking\n"
                   "block-started 2 tool_use\n"
                   "text-delta 1 [there]\n"
                   "block-stopped 2 tool_use\n"
                   "block-stopped 1 text\n"
                   "message-stopped\n"
                   "attempt-finished 1 200 req_1 1234 (null)\n");
}

static void
collect_delta_cb (TallyMessageStream *stream,
                  guint               index,
                  const char         *text,
                  GString            *out)
{
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_string_append (out, text);
}

/* A lone UTF-16 surrogate escape is valid JSON, but json-glib 1.6 decodes
 * it into bytes that are not UTF-8; the stream hands on U+FFFD instead
 * (found by tests/fuzz/fuzz-message-stream). A json-glib that refuses such
 * an escape makes it a protocol error, which is fine too. */
static void
test_lone_surrogate (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(GString) deltas = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *text_json = NULL;
  g_autofree char *thinking_json = NULL;
  gboolean ok;

  g_signal_connect (stream, "text-delta", G_CALLBACK (collect_delta_cb), deltas);
  g_signal_connect (stream, "thinking-delta", G_CALLBACK (collect_delta_cb), deltas);

  start_block (stream, 0, "{\"type\":\"thinking\",\"thinking\":\"\"}");
  start_block (stream, 1, "{\"type\":\"text\",\"text\":\"\"}");
  ok = tally_message_stream_apply_event (stream, "content_block_delta",
                                         "{\"type\":\"content_block_delta\",\"index\":0,"
                                         "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"a\\udc00 b\"}}",
                                         &error);
  if (!ok)
    {
      g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL);
      g_test_message ("this json-glib refuses lone surrogates: %s", error->message);
      return;
    }
  apply_ok (stream, "content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":1,"
            "\"delta\":{\"type\":\"text_delta\",\"text\":\"c\\uD83D !\"}}");

  /* Each delta arrived, as valid UTF-8 with U+FFFD for what was lost
   * (json-glib 1.6 also drops the character after a lone surrogate). */
  g_assert_true (g_str_has_prefix (deltas->str, "a\xef\xbf\xbd"));
  g_assert_nonnull (strstr (deltas->str, "c\xef\xbf\xbd"));
  g_assert_true (g_str_has_suffix (deltas->str, "!"));
  thinking_json = tally_message_stream_dup_block_json (stream, 0);
  text_json = tally_message_stream_dup_block_json (stream, 1);
  g_assert_true (g_utf8_validate (thinking_json, -1, NULL));
  g_assert_true (g_utf8_validate (text_json, -1, NULL));
  g_assert_nonnull (strstr (text_json, "c\xef\xbf\xbd"));

  /* The error event's message reaches the analyst. */
  apply_fails (stream, "error",
               "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\\udfff y\"}}",
               TALLY_API_ERROR_STREAM, "x\xef\xbf\xbd");
  g_assert_true (g_utf8_validate (tally_message_stream_get_error (stream)->message, -1, NULL));
}

/* json-glib 1.6 also takes a member name whose lone surrogate escape is
 * followed by other characters, and gives a name that is not UTF-8. A block
 * the stream does not know keeps its members and is sent back to the API as
 * they are, so such a name must come out as UTF-8 too. */
static void
test_lone_surrogate_name (void)
{
  g_autoptr(TallyMessageStream) stream = started_stream ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  JsonObject *block;
  gboolean ok;

  start_block (stream, 0, "{\"type\":\"future_block\",\"data\":\"\"}");
  ok = tally_message_stream_apply_event (stream, "content_block_delta",
                                         "{\"type\":\"content_block_delta\",\"index\":0,"
                                         "\"delta\":{\"type\":\"future_delta\",\"k\\ud800ab\":1,"
                                         "\"inner\":{\"j\\udc00xy\":\"v\"}}}",
                                         &error);
  if (!ok)
    {
      g_assert_error (error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL);
      g_test_message ("this json-glib refuses lone surrogates in names: %s", error->message);
      return;
    }

  json = tally_message_stream_dup_block_json (stream, 0);
  g_assert_nonnull (json);
  g_assert_true (g_utf8_validate (json, -1, NULL));
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  block = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (block, "type"), ==, "future_block");
  /* Both names are still there, with U+FFFD for what could not be decoded. */
  g_assert_cmpuint (json_object_get_size (block), ==, 4);
  g_assert_true (json_object_has_member (block, "inner"));
  g_assert_cmpuint (json_object_get_size (json_object_get_object_member (block, "inner")), ==, 1);
}

static void
test_retry_signals (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GString) log = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  connect_all (stream, log);

  tally_message_stream_begin_attempt (stream, 1);
  feed_string (stream, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
  g_assert_false (tally_message_stream_end_of_input (stream, &error));
  tally_message_stream_notify_attempt_finished (stream, 200, NULL, 50, error);
  tally_message_stream_notify_retry (stream, 2, 500, 200, tally_message_stream_get_error_type (stream));
  tally_message_stream_begin_attempt (stream, 2);
  g_assert_cmpuint (tally_message_stream_get_attempt (stream), ==, 2);
  tally_message_stream_notify_attempt_finished (stream, 529, "req_2", 7, NULL);
  tally_message_stream_notify_retry (stream, 3, 1000, 0, NULL);

  g_assert_cmpstr (log->str, ==,
                   "attempt-finished 1 200 (null) 50 Overloaded\n"
                   "retry 2 500 200 overloaded_error\n"
                   "attempt-finished 2 529 req_2 7 (null)\n"
                   "retry 3 1000 0 (null)\n");
}

static void
restart_in_handler_cb (TallyMessageStream *stream,
                       guint               index,
                       const char         *text,
                       gpointer            user_data)
{
  guint *calls = user_data;

  if ((*calls)++ == 0)
    tally_message_stream_begin_attempt (stream, 2);
}

/* A handler that starts a new attempt from inside feed() must not leave the
 * rest of the old body to be applied to the new attempt. */
static void
test_begin_attempt_from_handler (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  guint calls = 0;

  g_signal_connect (stream, "text-delta", G_CALLBACK (restart_in_handler_cb), &calls);
  tally_message_stream_begin_attempt (stream, 1);
  feed_string (stream,
               "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"b\"}}\n\n");

  g_assert_cmpuint (calls, ==, 1);
  g_assert_cmpuint (tally_message_stream_get_attempt (stream), ==, 2);
  g_assert_cmpuint (tally_message_stream_get_n_blocks (stream), ==, 0);
  g_assert_null (tally_message_stream_get_error (stream));
}

static void
test_begin_attempt_resets (void)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GPtrArray) unknown = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpuint (tally_message_stream_get_attempt (stream), ==, 0);
  tally_message_stream_begin_attempt (stream, 1);
  g_assert_cmpuint (tally_message_stream_get_attempt (stream), ==, 1);

  feed_string (stream,
               "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_old\",\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1}}}}\n\n"
               "event: odd\ndata: {\"type\":\"odd\"}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
               "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\n"
               "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n"
               /* An unfinished event must not leak into the next attempt. */
               "event: content_block_delta\ndata: {\"type\":\"content_");
  g_assert_true (tally_message_stream_has_content (stream));
  g_assert_nonnull (tally_message_stream_get_error (stream));

  tally_message_stream_begin_attempt (stream, 2);
  g_assert_cmpuint (tally_message_stream_get_attempt (stream), ==, 2);
  g_assert_null (tally_message_stream_get_error (stream));
  g_assert_null (tally_message_stream_get_error_type (stream));
  g_assert_null (tally_message_stream_get_message_id (stream));
  g_assert_null (tally_message_stream_get_model (stream));
  g_assert_null (tally_message_stream_get_stop_reason (stream));
  g_assert_false (tally_message_stream_has_content (stream));
  g_assert_false (tally_message_stream_is_complete (stream));
  g_assert_cmpuint (tally_message_stream_get_n_blocks (stream), ==, 0);
  g_assert_false (tally_message_stream_get_usage (stream)->reported);
  g_assert_cmpint (tally_message_stream_get_usage (stream)->input_tokens, ==, 0);
  g_assert_cmpint (tally_message_stream_get_usage (stream)->cache_creation_5m, ==, -1);
  unknown = tally_message_stream_dup_unknown_events (stream);
  g_assert_cmpuint (unknown->len, ==, 0);

  feed_string (stream,
               "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_new\"}}\n\n"
               "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
               "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"fresh\"}}\n\n"
               "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
               "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  g_assert_true (tally_message_stream_end_of_input (stream, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (tally_message_stream_get_message_id (stream), ==, "msg_new");
  assert_content (stream, (const char * const[]) { "{\"type\":\"text\",\"text\":\"fresh\"}", NULL });
}

/* TallyApiError */

static void
test_api_error_from_type (void)
{
  static const struct {
    const char    *type;
    guint          status;
    TallyApiError  code;
  } cases[] = {
    { "invalid_request_error", 400, TALLY_API_ERROR_INVALID_REQUEST },
    { "authentication_error", 401, TALLY_API_ERROR_AUTHENTICATION },
    { "billing_error", 402, TALLY_API_ERROR_BILLING },
    { "permission_error", 403, TALLY_API_ERROR_PERMISSION },
    { "not_found_error", 404, TALLY_API_ERROR_NOT_FOUND },
    { "conflict_error", 409, TALLY_API_ERROR_CONFLICT },
    { "request_too_large", 413, TALLY_API_ERROR_REQUEST_TOO_LARGE },
    { "rate_limit_error", 429, TALLY_API_ERROR_RATE_LIMIT },
    { "api_error", 500, TALLY_API_ERROR_API },
    { "timeout_error", 504, TALLY_API_ERROR_TIMEOUT },
    { "overloaded_error", 529, TALLY_API_ERROR_OVERLOADED },
    /* The type wins over the status. */
    { "overloaded_error", 200, TALLY_API_ERROR_OVERLOADED },
    { "rate_limit_error", 500, TALLY_API_ERROR_RATE_LIMIT },
    /* Unknown or missing type: the status decides. */
    { NULL, 400, TALLY_API_ERROR_INVALID_REQUEST },
    { NULL, 401, TALLY_API_ERROR_AUTHENTICATION },
    { NULL, 402, TALLY_API_ERROR_BILLING },
    { NULL, 403, TALLY_API_ERROR_PERMISSION },
    { NULL, 404, TALLY_API_ERROR_NOT_FOUND },
    { NULL, 408, TALLY_API_ERROR_REQUEST_TIMEOUT },
    { NULL, 409, TALLY_API_ERROR_CONFLICT },
    { NULL, 413, TALLY_API_ERROR_REQUEST_TOO_LARGE },
    { NULL, 429, TALLY_API_ERROR_RATE_LIMIT },
    { NULL, 500, TALLY_API_ERROR_API },
    { NULL, 502, TALLY_API_ERROR_API },
    { NULL, 503, TALLY_API_ERROR_API },
    { NULL, 504, TALLY_API_ERROR_TIMEOUT },
    { NULL, 529, TALLY_API_ERROR_OVERLOADED },
    { NULL, 418, TALLY_API_ERROR_INVALID_REQUEST },
    { NULL, 422, TALLY_API_ERROR_INVALID_REQUEST },
    { "brand_new_error", 413, TALLY_API_ERROR_REQUEST_TOO_LARGE },
    { "brand_new_error", 503, TALLY_API_ERROR_API },
  };

  g_assert_cmpstr (g_quark_to_string (TALLY_API_ERROR), ==, "tally-api-error-quark");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s %u", cases[i].type ? cases[i].type : "(null)", cases[i].status);
      g_assert_cmpint (tally_api_error_from_type (cases[i].type, cases[i].status), ==, cases[i].code);
    }
}

static void
test_api_error_retryable_and_kind (void)
{
  static const struct {
    TallyApiError  code;
    gboolean       retryable;
    const char    *kind;
  } cases[] = {
    { TALLY_API_ERROR_INVALID_REQUEST, FALSE, "http" },
    { TALLY_API_ERROR_AUTHENTICATION, FALSE, "http" },
    { TALLY_API_ERROR_BILLING, FALSE, "http" },
    { TALLY_API_ERROR_PERMISSION, FALSE, "http" },
    { TALLY_API_ERROR_NOT_FOUND, FALSE, "http" },
    { TALLY_API_ERROR_REQUEST_TIMEOUT, TRUE, "http" },
    { TALLY_API_ERROR_CONFLICT, TRUE, "http" },
    { TALLY_API_ERROR_REQUEST_TOO_LARGE, FALSE, "http" },
    { TALLY_API_ERROR_RATE_LIMIT, TRUE, "http" },
    { TALLY_API_ERROR_API, TRUE, "http" },
    { TALLY_API_ERROR_TIMEOUT, TRUE, "http" },
    { TALLY_API_ERROR_OVERLOADED, TRUE, "http" },
    { TALLY_API_ERROR_STREAM, FALSE, "stream" },
    { TALLY_API_ERROR_NETWORK, TRUE, "network" },
    { TALLY_API_ERROR_STALLED, TRUE, "stalled" },
    { TALLY_API_ERROR_INCOMPLETE, FALSE, "network" },
    { TALLY_API_ERROR_PROTOCOL, FALSE, "stream" },
  };
  g_autoptr(GError) cancelled = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "Operation was cancelled");
  g_autoptr(GError) refused = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED, "refused");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = g_error_new_literal (TALLY_API_ERROR, cases[i].code, "x");

      g_test_message ("code %d", cases[i].code);
      g_assert_true (tally_api_error_is_retryable (error) == cases[i].retryable);
      g_assert_cmpstr (tally_api_error_get_kind (error), ==, cases[i].kind);
    }

  g_assert_false (tally_api_error_is_retryable (NULL));
  g_assert_false (tally_api_error_is_retryable (cancelled));
  g_assert_false (tally_api_error_is_retryable (refused));
  g_assert_cmpstr (tally_api_error_get_kind (cancelled), ==, "cancelled");
  g_assert_cmpstr (tally_api_error_get_kind (refused), ==, "network");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/message-stream/nul-character", test_nul_character);
  g_test_add_func ("/tally/message-stream/fixtures/golden", test_fixture_golden);
  g_test_add_func ("/tally/message-stream/fixtures/docs-basic-text", test_fixture_docs_basic_text);
  g_test_add_func ("/tally/message-stream/fixtures/no-trailing-blank-line", test_fixture_tool_use_no_trailing_blank_line);
  g_test_add_func ("/tally/message-stream/fixtures/max-tokens-cut-tool", test_fixture_incomplete_partial_json);
  g_test_add_func ("/tally/message-stream/fixtures/unparsable", test_fixture_unparsable);
  g_test_add_func ("/tally/message-stream/fixtures/truncated-everywhere", test_fixture_truncated_everywhere);
  g_test_add_func ("/tally/message-stream/fixtures/corrupted", test_fixture_corrupted);
  g_test_add_func ("/tally/message-stream/blocks/interleaved", test_interleaved_blocks);
  g_test_add_func ("/tally/message-stream/blocks/index-errors", test_block_index_errors);
  g_test_add_func ("/tally/message-stream/blocks/tool-input-empty", test_tool_input_empty);
  g_test_add_func ("/tally/message-stream/blocks/tool-input-verbatim", test_tool_input_verbatim);
  g_test_add_func ("/tally/message-stream/blocks/tool-input-invalid", test_tool_input_invalid);
  g_test_add_func ("/tally/message-stream/blocks/thinking", test_thinking_blocks);
  g_test_add_func ("/tally/message-stream/blocks/text-escaping", test_text_escaping_round_trip);
  g_test_add_func ("/tally/message-stream/blocks/empty-text-left-out", test_empty_text_left_out);
  g_test_add_func ("/tally/message-stream/blocks/citations", test_citations);
  g_test_add_func ("/tally/message-stream/blocks/unknown-types", test_unknown_types_tolerated);
  g_test_add_func ("/tally/message-stream/blocks/compaction", test_compaction);
  g_test_add_func ("/tally/message-stream/order/before-message-start", test_events_before_message_start);
  g_test_add_func ("/tally/message-stream/order/second-message-start", test_second_message_start);
  g_test_add_func ("/tally/message-stream/order/after-message-stop", test_events_after_message_stop);
  g_test_add_func ("/tally/message-stream/order/bad-json", test_bad_json);
  g_test_add_func ("/tally/message-stream/order/route-by-json-type", test_route_by_json_type);
  g_test_add_func ("/tally/message-stream/errors/error-event-before-content", test_error_event_before_content);
  g_test_add_func ("/tally/message-stream/errors/error-event-after-content", test_error_event_after_content);
  g_test_add_func ("/tally/message-stream/errors/error-event-without-details", test_error_event_without_details);
  g_test_add_func ("/tally/message-stream/errors/incomplete-after-message-delta", test_incomplete_after_message_delta);
  g_test_add_func ("/tally/message-stream/errors/empty-body", test_empty_body);
  g_test_add_func ("/tally/message-stream/usage/merge", test_usage_merge);
  g_test_add_func ("/tally/message-stream/usage-invalid", test_usage_invalid);
  g_test_add_func ("/tally/message-stream/unstopped-block", test_unstopped_block);
  g_test_add_func ("/tally/message-stream/usage/add", test_usage_add);
  g_test_add_func ("/tally/message-stream/signals/order", test_signals);
  g_test_add_func ("/tally/message-stream/signals/retry-and-attempts", test_retry_signals);
  g_test_add_func ("/tally/message-stream/lone-surrogate", test_lone_surrogate);
  g_test_add_func ("/tally/message-stream/lone-surrogate-name", test_lone_surrogate_name);
  g_test_add_func ("/tally/message-stream/attempts/reset", test_begin_attempt_resets);
  g_test_add_func ("/tally/message-stream/attempts/restart-from-handler", test_begin_attempt_from_handler);
  g_test_add_func ("/tally/api-error/from-type", test_api_error_from_type);
  g_test_add_func ("/tally/api-error/retryable-and-kind", test_api_error_retryable_and_kind);

  return g_test_run ();
}
