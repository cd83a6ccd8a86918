/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The fast path of TallyMessageStream (src/core/api/tally-message-stream-scan.c)
 * against its json-glib path: every recorded stream of the repository and
 * hand-made edge cases go through both, which must agree on the signals,
 * the error (domain, code, message), the blocks and the echoed content
 * (tests/tally-test-stream.c records all that). Each case also states
 * whether the fast path took its delta, so a scanner that silently handed
 * everything back would fail, and the decoded text is checked against the
 * expected value.
 */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "tally-api-error.h"
#include "tally-message-stream-private.h"
#include "tally-test-stream.h"
#include "tally-test-util.h"

/* Feeds @data to both paths, whole and one byte at a time, and checks that
 * all four records are equal. Returns the json-glib path's record and the
 * number of events the fast path took (fed whole). */
static char *
run_both (const guint8 *data,
          gsize         size,
          guint64      *n_fast)
{
  static const gsize one_byte[] = { 1, 0 };
  g_autofree char *json_glib = tally_test_stream_run (data, size, NULL, FALSE);
  g_autofree char *fast = tally_test_stream_run (data, size, NULL, TRUE);
  g_autofree char *json_glib_bytes = tally_test_stream_run (data, size, one_byte, FALSE);
  g_autofree char *fast_bytes = tally_test_stream_run (data, size, one_byte, TRUE);
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();

  g_assert_cmpstr (fast, ==, json_glib);
  g_assert_cmpstr (fast_bytes, ==, json_glib);
  g_assert_cmpstr (json_glib_bytes, ==, json_glib);

  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, data, size);
  *n_fast = _tally_message_stream_get_n_fast_events (stream);

  return g_steal_pointer (&json_glib);
}

/* Every recorded stream: the SSE fixtures, the mock API's scenarios and
 * the fuzz seeds. */
static GPtrArray *
list_streams (void)
{
  static const char * const dirs[][3] = {
    { "fixtures", "sse", ".sse" },
    { "mock-api", "scenarios", ".sse" },
    { "fuzz", "corpus/message-stream", "" },
    { "fuzz", "corpus/message-stream-diff", "" },
  };
  const char *data_dir = g_getenv ("TALLY_TEST_DATA_DIR");
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);

  g_assert_nonnull (data_dir);

  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *dir_path = g_build_filename (data_dir, dirs[i][0], dirs[i][1], NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(GDir) dir = g_dir_open (dir_path, 0, &error);
      const char *name;

      g_assert_no_error (error);
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          if (g_str_has_suffix (name, dirs[i][2]))
            g_ptr_array_add (paths, g_build_filename (dir_path, name, NULL));
        }
    }

  return paths;
}

static void
test_recorded_streams (void)
{
  g_autoptr(GPtrArray) paths = list_streams ();
  guint64 total_fast = 0;
  guint n_streams = 0;

  for (guint i = 0; i < paths->len; i++)
    {
      const char *path = g_ptr_array_index (paths, i);
      g_autoptr(GError) error = NULL;
      g_autofree char *contents = NULL;
      g_autofree char *record = NULL;
      gsize len;
      guint64 n_fast;

      g_file_get_contents (path, &contents, &len, &error);
      g_assert_no_error (error);

      g_test_message ("%s", path);
      record = run_both ((const guint8 *) contents, len, &n_fast);
      total_fast += n_fast;
      n_streams++;
    }

  /* Fixtures, scenario and seeds: 15 + 1 + 5 + 3 at the time of writing;
   * the recorded API streams are compact JSON, so the fast path takes a
   * good share of their deltas. */
  g_test_message ("%u streams, %" G_GUINT64_FORMAT " events taken by the fast path", n_streams, total_fast);
  g_assert_cmpuint (n_streams, >=, 24);
  g_assert_cmpuint (total_fast, >=, 50);
}

/* A stream around @events: message_start; a text block 0, a thinking
 * block 1 and a tool_use block 2; @events; stops; message_stop. */
static GString *
wrap_events (const char *events)
{
  GString *out = g_string_new (
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
    "\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"thinking\","
    "\"thinking\":\"\",\"signature\":\"\"}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\","
    "\"id\":\"toolu_1\",\"name\":\"run_sql\",\"input\":{}}}\n\n");

  g_string_append (out, events);
  g_string_append (out,
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");

  return out;
}

typedef struct {
  const char *name;
  /* SSE events between the block starts and the stops. */
  const char *events;
  /* Events the fast path must take (pings included). */
  guint       n_fast;
  /* A line the record must hold, e.g. a block's JSON or the error. */
  const char *expect;
} EdgeCase;

#define TEXT_DELTA(json_string) \
  "event: content_block_delta\n" \
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":" json_string "}}\n\n"

static const EdgeCase edge_cases[] = {
  { "plain", TEXT_DELTA ("\"Hello, world\""), 1,
    "block 0 text 1 {\"type\":\"text\",\"text\":\"Hello, world\"}" },
  { "escapes", TEXT_DELTA ("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t.\""), 1,
    "delta 0 q\" b\\ s/ \b\f\n\r\t." },
  { "unicode-escapes", TEXT_DELTA ("\"caf\\u00e9 \\u20AC \\u00C9\""), 1, "delta 0 café € É" },
  { "surrogate-pair", TEXT_DELTA ("\"\\ud83d\\ude00 \\uD83D\\uDCCA\""), 1, "delta 0 😀 📊" },
  { "raw-utf8", TEXT_DELTA ("\"naïve — 日本 📊\""), 1, "delta 0 naïve — 日本 📊" },
  { "empty-string", TEXT_DELTA ("\"\""), 1, "delta 0 \n" },
  /* json-glib decodes a lone surrogate to bytes that are not UTF-8, which
   * the stream repairs: the fast path leaves all of these to it. */
  { "lone-high-surrogate", TEXT_DELTA ("\"a\\ud800b\""), 0, NULL },
  { "lone-low-surrogate", TEXT_DELTA ("\"a\\udc00b\""), 0, NULL },
  { "high-then-not-low", TEXT_DELTA ("\"\\ud800\\u0041\""), 0, NULL },
  { "swapped-pair", TEXT_DELTA ("\"\\ude00\\ud83d\""), 0, NULL },
  { "high-at-end", TEXT_DELTA ("\"\\ud83d\""), 0, NULL },
  /* json-glib 1.6 is lenient where RFC 8259 is not: it would end the
   * string at \u0000 (so the stream refuses such an event rather than keep
   * a cut text, docs/protocol.md §9.2), takes raw control characters, and
   * reads an unknown escape as the escaped character. The fast path leaves
   * all that to it. */
  { "nul-escape", TEXT_DELTA ("\"a\\u0000b\""), 0,
    "error tally-api-error-quark 16 the content_block_delta event holds a NUL character" },
  { "raw-control-character", TEXT_DELTA ("\"a\tb\""), 0, "delta 0 a\tb" },
  { "bad-escape", TEXT_DELTA ("\"a\\xb\""), 0, "delta 0 axb" },
  { "upper-u-escape", TEXT_DELTA ("\"\\U0041\""), 0, "delta 0 U0041" },
  { "short-unicode-escape", TEXT_DELTA ("\"\\u12\""), 0,
    "error tally-api-error-quark 16 invalid JSON in content_block_delta event" },
  { "unterminated-string", TEXT_DELTA ("\"abc"), 0, "error tally-api-error-quark 16" },
  { "trailing-garbage",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}x\n\n",
    0, "error tally-api-error-quark 16" },
  { "trailing-space",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}} \n\n",
    0, "delta 0 a" },
  { "white-space",
    "event: content_block_delta\n"
    "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"a\"}}\n\n",
    0, "delta 0 a" },
  { "split-data-lines",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\n"
    "data: \"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    0, "delta 0 a" },
  { "extra-member",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\",\"x\":1}}\n\n",
    0, "delta 0 a" },
  { "other-order",
    "event: content_block_delta\n"
    "data: {\"index\":0,\"type\":\"content_block_delta\",\"delta\":{\"text\":\"a\",\"type\":\"text_delta\"}}\n\n",
    0, "delta 0 a" },
  { "index-leading-zero",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":00,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    0, NULL },
  { "index-fraction",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0.0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    0, "delta 0 a" },
  { "index-huge",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":12345678901,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    0, "error tally-api-error-quark 16 content_block_delta event without a valid index" },
  { "unknown-block",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    0, "error tally-api-error-quark 16 content_block_delta event for unknown content block 7" },
  { "delta-after-stop",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    TEXT_DELTA ("\"late\""),
    0, "error tally-api-error-quark 16 content_block_delta event for content block 0 after its content_block_stop" },
  { "delta-not-for-block",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"ignored\"}}\n\n",
    0, "block 1 thinking 1 {\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}" },
  { "event-name-differs",
    "event: message_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    0, "block 0 text 1 {\"type\":\"text\",\"text\":\"\"}" },
  { "no-event-name",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n",
    1, "delta 0 a" },
  { "thinking-and-signature",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"I \\u2192 think\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"old\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"Eq\\/B+=\"}}\n\n",
    3, "block 1 thinking 1 {\"type\":\"thinking\",\"thinking\":\"I → think\",\"signature\":\"Eq/B+=\"}" },
  { "input-json",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"sql\\\":\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"SELECT 1\\\\n\\\"}\"}}\n\n",
    3, "block 2 tool_use 1 {\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"run_sql\",\"input\":{\"sql\":\"SELECT 1\\n\"}}" },
  { "input-json-invalid",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"sql\\\"\"}}\n\n",
    1, "error tally-api-error-quark 16 tool_use block 2 has invalid input JSON" },
  { "ping-unnamed", "data: {\"type\":\"ping\"}\n\n", 1, "ok 1 complete 1" },
  { "ping-named", "event: ping\ndata: {\"type\":\"ping\"}\n\n", 0, "ok 1 complete 1" },
  { "ping-extra-member", "data: {\"type\":\"ping\",\"x\":1}\n\n", 0, "ok 1 complete 1" },
  { "ping-as-delta", "event: content_block_delta\ndata: {\"type\":\"ping\"}\n\n", 0,
    "error tally-api-error-quark 16 content_block_delta event without a valid index" },
  { "unknown-delta-type",
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"mystery_delta\",\"text\":\"a\"}}\n\n",
    0, "block 0 text 1 {\"type\":\"text\",\"text\":\"\"}" },
  { "error-after-deltas",
    TEXT_DELTA ("\"partial\"")
    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    1, "error tally-api-error-quark 12 Overloaded [overloaded_error]" },
};

static void
test_edge_case (gconstpointer user_data)
{
  const EdgeCase *edge = user_data;
  g_autoptr(GString) stream = wrap_events (edge->events);
  g_autofree char *record = NULL;
  guint64 n_fast;

  record = run_both ((const guint8 *) stream->str, stream->len, &n_fast);
  g_test_message ("%s", record);

  g_assert_cmpuint (n_fast, ==, edge->n_fast);
  if (edge->expect != NULL)
    g_assert_nonnull (strstr (record, edge->expect));
}

/* Deltas before message_start and after message_stop are errors of the
 * full path, which the fast path must leave to it. */
static void
test_outside_message (void)
{
  static const char before[] =
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n";
  g_autoptr(GString) after = wrap_events ("");
  g_autofree char *before_record = NULL;
  g_autofree char *after_record = NULL;
  guint64 n_fast;

  before_record = run_both ((const guint8 *) before, strlen (before), &n_fast);
  g_assert_cmpuint (n_fast, ==, 0);
  g_assert_nonnull (strstr (before_record, "unexpected content_block_delta event before message_start"));

  g_string_append (after, before);
  after_record = run_both ((const guint8 *) after->str, after->len, &n_fast);
  g_assert_cmpuint (n_fast, ==, 0);
  g_assert_nonnull (strstr (after_record, "unexpected content_block_delta event after message_stop"));
}

/* A text-delta handler that starts a new attempt: the other handlers still
 * see the delta's text, in both paths. */
typedef struct {
  GString *log;
  gboolean restarted;
} Restart;

static void
restart_cb (TallyMessageStream *stream,
            guint               index,
            const char         *text,
            Restart            *restart)
{
  if (!restart->restarted)
    {
      restart->restarted = TRUE;
      tally_message_stream_begin_attempt (stream, 2);
    }
}

static void
log_cb (TallyMessageStream *stream,
        guint               index,
        const char         *text,
        Restart            *restart)
{
  g_string_append_printf (restart->log, "[%u %s]", index, text);
}

static char *
run_restart (gboolean fast_path)
{
  g_autoptr(GString) body = wrap_events (TEXT_DELTA ("\"first\"") TEXT_DELTA ("\"second\""));
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  Restart restart = { g_string_new (NULL), FALSE };

  _tally_message_stream_set_fast_path (stream, fast_path);
  g_signal_connect (stream, "text-delta", G_CALLBACK (restart_cb), &restart);
  g_signal_connect (stream, "text-delta", G_CALLBACK (log_cb), &restart);
  tally_message_stream_begin_attempt (stream, 1);
  tally_message_stream_feed (stream, (const guint8 *) body->str, body->len);
  g_string_append_printf (restart.log, " attempt %u blocks %u",
                          tally_message_stream_get_attempt (stream),
                          tally_message_stream_get_n_blocks (stream));

  return g_string_free (restart.log, FALSE);
}

static void
test_restart_in_handler (void)
{
  g_autofree char *json_glib = run_restart (FALSE);
  g_autofree char *fast = run_restart (TRUE);

  /* The new attempt drops the rest of the body (the decoder was reset). */
  g_assert_cmpstr (json_glib, ==, "[0 first] attempt 2 blocks 0");
  g_assert_cmpstr (fast, ==, json_glib);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/message-stream-fast/recorded-streams", test_recorded_streams);
  g_test_add_func ("/tally/message-stream-fast/outside-message", test_outside_message);
  g_test_add_func ("/tally/message-stream-fast/restart-in-handler", test_restart_in_handler);
  for (guint i = 0; i < G_N_ELEMENTS (edge_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tally/message-stream-fast/edge/%s", edge_cases[i].name);

      g_test_add_data_func (path, &edge_cases[i], test_edge_case);
    }

  return g_test_run ();
}
