/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "tally-sse-decoder.h"
#include "tally-test-util.h"

/* Events are compared as text lines in the golden trace format (see
 * tests/golden/README.md): the event name, a tab, the data, and when an
 * event ID is set a tab and the ID; backslash, newline, carriage return and
 * tab are escaped as \\ \n \r \t. A missing event name is an empty field. */

static void
append_escaped (GString    *out,
                const char *str)
{
  for (const char *p = str; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        default: g_string_append_c (out, *p); break;
        }
    }
}

static char *
format_event (const TallySseEvent *event)
{
  GString *out = g_string_new (NULL);

  if (event->event != NULL)
    append_escaped (out, event->event);
  g_string_append_c (out, '\t');
  append_escaped (out, event->data);
  if (event->id != NULL)
    {
      g_string_append_c (out, '\t');
      append_escaped (out, event->id);
    }

  return g_string_free (out, FALSE);
}

typedef struct {
  GPtrArray       *lines;
  TallySseDecoder *decoder;
  /* Reset the decoder from the callback once this many events arrived. */
  guint            reset_after;
} Collector;

static void
collect_cb (const TallySseEvent *event,
            gpointer             user_data)
{
  Collector *collector = user_data;

  g_assert_nonnull (event->data);
  g_assert_true (g_utf8_validate (event->data, -1, NULL));
  g_assert_true (event->event == NULL || g_utf8_validate (event->event, -1, NULL));
  g_assert_true (event->id == NULL || g_utf8_validate (event->id, -1, NULL));

  g_ptr_array_add (collector->lines, format_event (event));

  if (collector->reset_after > 0 && collector->lines->len == collector->reset_after)
    tally_sse_decoder_reset (collector->decoder);
}

static void
collector_init (Collector *collector)
{
  collector->lines = g_ptr_array_new_with_free_func (g_free);
  collector->decoder = tally_sse_decoder_new (collect_cb, collector);
  collector->reset_after = 0;
}

static void
collector_clear (Collector *collector)
{
  g_clear_pointer (&collector->decoder, tally_sse_decoder_free);
  g_clear_pointer (&collector->lines, g_ptr_array_unref);
}

static void
feed_string (Collector  *collector,
             const char *str)
{
  tally_sse_decoder_feed (collector->decoder, (const guint8 *) str, strlen (str));
}

/* Compares the collected lines with a NULL-terminated list. */
static void
assert_lines (GPtrArray          *lines,
              const char * const *expected)
{
  guint n_expected = expected ? g_strv_length ((char **) expected) : 0;

  for (guint i = 0; i < MIN (lines->len, n_expected); i++)
    g_assert_cmpstr (g_ptr_array_index (lines, i), ==, expected[i]);
  g_assert_cmpuint (lines->len, ==, n_expected);
}

static void
assert_same_lines (GPtrArray *a,
                   GPtrArray *b)
{
  for (guint i = 0; i < MIN (a->len, b->len); i++)
    g_assert_cmpstr (g_ptr_array_index (a, i), ==, g_ptr_array_index (b, i));
  g_assert_cmpuint (a->len, ==, b->len);
}

/* Decodes @data split into the given pieces, then finishes. Returns the
 * events, and in @n_before_finish how many came before finish(). */
static GPtrArray *
decode_split (const guint8 *data,
              gsize         len,
              const gsize  *cuts,
              guint         n_cuts,
              guint        *n_before_finish)
{
  Collector collector;
  gsize offset = 0;

  collector_init (&collector);

  for (guint i = 0; i <= n_cuts; i++)
    {
      gsize end = i < n_cuts ? cuts[i] : len;

      tally_sse_decoder_feed (collector.decoder, data + offset, end - offset);
      offset = end;
    }

  *n_before_finish = collector.lines->len;
  tally_sse_decoder_finish (collector.decoder);

  tally_sse_decoder_free (g_steal_pointer (&collector.decoder));
  return g_steal_pointer (&collector.lines);
}

/* The generic chunking check: splitting @data at every byte offset into two
 * pieces, and feeding it one byte at a time, gives exactly the events of
 * one whole feed, both before and after finish(). */
static void
assert_split_invariant (const guint8 *data,
                        gsize         len)
{
  g_autoptr(GPtrArray) whole = NULL;
  g_autoptr(GPtrArray) bytes = NULL;
  g_autofree gsize *all_cuts = NULL;
  guint whole_before;
  guint before;

  whole = decode_split (data, len, NULL, 0, &whole_before);

  for (gsize cut = 0; cut <= len; cut++)
    {
      g_autoptr(GPtrArray) split = decode_split (data, len, &cut, 1, &before);

      g_assert_cmpuint (before, ==, whole_before);
      assert_same_lines (split, whole);
    }

  if (len > 1)
    {
      all_cuts = g_new (gsize, len - 1);
      for (gsize i = 0; i < len - 1; i++)
        all_cuts[i] = i + 1;
    }
  bytes = decode_split (data, len, all_cuts, len > 1 ? len - 1 : 0, &before);
  g_assert_cmpuint (before, ==, whole_before);
  assert_same_lines (bytes, whole);
}

/* The edge cases of docs/protocol.md §8.2, one test per case (the number
 * is part of the path), with the results of the HTML standard's event-stream
 * interpretation
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
 * and the one deviation of docs/protocol.md §8.1. Each case lists its
 * chunks explicitly. */

typedef struct {
  const char         *path;
  const char * const  chunks[8];
  /* Events after feeding all chunks, before finish(). */
  const char * const  before_finish[6];
  /* Events after finish(); NULL[0] means "same as before_finish". */
  const char * const  after_finish[6];
  gint64              retry;
} SpecCase;

static const SpecCase spec_cases[] = {
  { "/tally/sse/spec/01-lf",
    { "event: a\ndata: 1\n\n" }, { "a\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/02-crlf",
    { "event: a\r\ndata: 1\r\n\r\n" }, { "a\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/03-cr-only",
    { "event: a\rdata: 1\r\r" }, { "a\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/04-crlf-split",
    { "event: a\r", "\ndata: 1\r", "\n\r", "\n" }, { "a\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/05-cr-at-chunk-end-then-cr",
    { "data: 1\r", "\r" }, { "\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/06-multi-line-data",
    { "data: a\ndata: b\n\n" }, { "\ta\\nb" }, { NULL }, -1 },
  { "/tally/sse/spec/07-multi-line-with-empty-lines",
    { "event: ping\ndata: {\ndata: \"foo\":\ndata: \ndata:\ndata: true}\n\n\n" },
    { "ping\t{\\n\"foo\":\\n\\n\\ntrue}" }, { NULL }, -1 },
  { "/tally/sse/spec/08-no-space-after-colon",
    { "data:x\n\n" }, { "\tx" }, { NULL }, -1 },
  { "/tally/sse/spec/09-one-space-stripped",
    { "data:  x\n\n" }, { "\t x" }, { NULL }, -1 },
  { "/tally/sse/spec/10-space-before-colon",
    { "event : x\ndata: 1\n\n" }, { "\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/11-comment-line",
    { ": keepalive\n\ndata: 1\n\n" }, { "\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/12-comment-only",
    { ": hi\n\n" }, { NULL }, { NULL }, -1 },
  /* The spec dispatches nothing when the data buffer is empty. */
  { "/tally/sse/spec/13-event-without-data",
    { "event: ping\n\n" }, { NULL }, { NULL }, -1 },
  /* ...and the blank line also resets the event type. */
  { "/tally/sse/spec/13-event-type-reset-without-dispatch",
    { "event: ping\n\ndata: 1\n\n" }, { "\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/14-data-without-event",
    { "data: {\"foo\":true}\n\n" }, { "\t{\"foo\":true}" }, { NULL }, -1 },
  { "/tally/sse/spec/15-field-without-colon",
    { "data\n\n" }, { "\t" }, { NULL }, -1 },
  { "/tally/sse/spec/16-id-and-retry",
    { "id: 7\nretry: 3000\ndata: x\n\n" }, { "\tx\t7" }, { NULL }, 3000 },
  { "/tally/sse/spec/17-unknown-field",
    { "foo: bar\ndata: x\n\n" }, { "\tx" }, { NULL }, -1 },
  { "/tally/sse/spec/18-leading-blank-lines",
    { "\n\n\ndata: x\n\n" }, { "\tx" }, { NULL }, -1 },
  { "/tally/sse/spec/19-event-name-resets",
    { "event: a\ndata: 1\n\ndata: 2\n\n" }, { "a\t1", "\t2" }, { NULL }, -1 },
  /* Our deliberate deviation: finish() delivers the unterminated event. */
  { "/tally/sse/spec/20-final-event-without-blank-line",
    { "event: a\ndata: 1\n" }, { NULL }, { "a\t1" }, -1 },
  { "/tally/sse/spec/21-stream-ends-mid-line",
    { "event: a\ndata: 1" }, { NULL }, { "a\t1" }, -1 },
  { "/tally/sse/spec/22-utf8-split",
    { "data: {\"content\":\"", "\xD0", "\xB8\xD0\xB7\xD0", "\xB2\xD0\xB5\xD1\x81\xD1\x82\xD0\xBD\xD0\xB8", "\"}\n", "\n" },
    { "\t{\"content\":\"известни\"}" }, { NULL }, -1 },
  { "/tally/sse/spec/23-u2028-in-data",
    { "data: {\"content\":\" \xE2\x80\xA8\"}\n\n" },
    { "\t{\"content\":\" \xE2\x80\xA8\"}" }, { NULL }, -1 },
  { "/tally/sse/spec/24-escaped-newlines-in-json",
    { "data: {\"foo\": \"my long\\n\\ncontent\"}", "\n\n" },
    { "\t{\"foo\": \"my long\\\\n\\\\ncontent\"}" }, { NULL }, -1 },
  { "/tally/sse/spec/25-one-byte-chunks",
    { "e", "v", "e", "n", "t", ": a\n", "d", "ata: 1\n\n" }, { "a\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/26-lf-then-crlf",
    { "data: 1\n\r\n" }, { "\t1" }, { NULL }, -1 },
  { "/tally/sse/spec/27-trailing-spaces-kept",
    { "data: {\"type\":\"message_stop\"}       \n\n" },
    { "\t{\"type\":\"message_stop\"}       " }, { NULL }, -1 },
  { "/tally/sse/spec/29-error-event",
    { "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n" },
    { "error\t{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}" },
    { NULL }, -1 },
  { "/tally/sse/spec/30-bom-stripped",
    { "\xEF\xBB\xBF" "event: a\ndata: 1\n\n" }, { "a\t1" }, { NULL }, -1 },
  /* Spec behaviour: the persisting id does not make blank lines dispatch. */
  { "/tally/sse/spec/31-id-persists-no-empty-events",
    { "id: 7\ndata: a\n\n\n\ndata: b\n\n" }, { "\ta\t7", "\tb\t7" }, { NULL }, -1 },

  /* Further cases beyond the list of docs/protocol.md §8.2. */
  /* Every kind of line ending in one read: the decoder keeps the next LF
   * and the next CR it found across lines, which must not skip one. */
  { "/tally/sse/mixed-endings-in-one-read",
    { "data: a\rdata: b\ndata: c\r\ndata: d\r\r\ndata: e\n\n\rdata: f\r\n\r\n" },
    { "\ta\\nb\\nc\\nd", "\te", "\tf" }, { NULL }, -1 },
  { "/tally/sse/crlf-split-across-reads",
    { "data: 1\r", "\ndata: 2\r", "\n\r", "\n" }, { "\t1\\n2" }, { NULL }, -1 },
  { "/tally/sse/cr-then-data-across-reads",
    { "data: 1\r", "data: 2\r", "\r" }, { "\t1\\n2" }, { NULL }, -1 },
  { "/tally/sse/bom-only-at-stream-start",
    { "data: 1\n\n\xEF\xBB\xBF" "event: a\ndata: 2\n\n" }, { "\t1", "\t2" }, { NULL }, -1 },
  { "/tally/sse/bom-split-across-reads",
    { "\xEF", "\xBB", "\xBF" "event: a\ndata: 1\n\n" }, { "a\t1" }, { NULL }, -1 },
  { "/tally/sse/partial-bom-is-data",
    { "\xEF\xBB" "data: 1\n\ndata: 2\n\n" }, { "\t2" }, { NULL }, -1 },
  { "/tally/sse/invalid-utf8-replaced",
    { "event: \xC3\n", "data: a\xFF" "b\xE2\x82\n\n" },
    { "\xEF\xBF\xBD\ta\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD" }, { NULL }, -1 },
  { "/tally/sse/utf8-split-before-line-end",
    { "data: \xE2", "\x82", "\xAC\n\n" }, { "\t\xE2\x82\xAC" }, { NULL }, -1 },
  { "/tally/sse/id-persists-across-events",
    { "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n" }, { "\ta\t1", "\tb\t1", "\tc" }, { NULL }, -1 },
  { "/tally/sse/retry-digits-only",
    { "retry: 1500\nretry: 15a\nretry:\nretry: -3\nretry:  20\ndata: x\n\n" }, { "\tx" }, { NULL }, 1500 },
  { "/tally/sse/retry-last-valid-wins",
    { "retry: 1500\n", "retry: 0042\n" }, { NULL }, { NULL }, 42 },
  { "/tally/sse/retry-overflow-ignored",
    { "retry: 7\nretry: 99999999999999999999999\n" }, { NULL }, { NULL }, 7 },
  { "/tally/sse/finish-ignores-comment-and-empty-data",
    { "data: 1\n\n: trailing comment" }, { "\t1" }, { NULL }, -1 },
  { "/tally/sse/finish-after-cr",
    { "data: 1\r" }, { NULL }, { "\t1" }, -1 },
};

static void
concat_chunks (const SpecCase *spec,
               GByteArray     *bytes)
{
  for (guint i = 0; i < G_N_ELEMENTS (spec->chunks) && spec->chunks[i] != NULL; i++)
    g_byte_array_append (bytes, (const guint8 *) spec->chunks[i], strlen (spec->chunks[i]));
}

static void
test_spec_case (gconstpointer user_data)
{
  const SpecCase *spec = user_data;
  g_autoptr(GByteArray) bytes = g_byte_array_new ();
  Collector collector;

  collector_init (&collector);

  for (guint i = 0; i < G_N_ELEMENTS (spec->chunks) && spec->chunks[i] != NULL; i++)
    feed_string (&collector, spec->chunks[i]);

  assert_lines (collector.lines, spec->before_finish);
  g_assert_cmpint (tally_sse_decoder_get_retry (collector.decoder), ==, spec->retry);

  tally_sse_decoder_finish (collector.decoder);
  assert_lines (collector.lines, spec->after_finish[0] != NULL ? spec->after_finish : spec->before_finish);

  collector_clear (&collector);

  concat_chunks (spec, bytes);
  assert_split_invariant (bytes->data, bytes->len);
}

/* The NUL byte is inside the string literal, so this case needs an explicit
 * length. */
static void
test_id_with_nul (void)
{
  static const char input[] = "id: 5\n\ndata: x\nid: 6\0x\n\n";
  Collector collector;

  collector_init (&collector);
  tally_sse_decoder_feed (collector.decoder, (const guint8 *) input, sizeof input - 1);

  /* "id: 6\0x" is ignored, the id stays 5. */
  assert_lines (collector.lines, (const char * const[]) { "\tx\t5", NULL });
  collector_clear (&collector);

  assert_split_invariant ((const guint8 *) input, sizeof input - 1);
}

static void
test_nul_in_data (void)
{
  static const char input[] = "data: a\0b\n\n";
  Collector collector;

  collector_init (&collector);
  tally_sse_decoder_feed (collector.decoder, (const guint8 *) input, sizeof input - 1);
  assert_lines (collector.lines, (const char * const[]) { "\ta\xEF\xBF\xBD" "b", NULL });
  collector_clear (&collector);
}

/* docs/protocol.md §8.2 case 28: a 5 MB line is one event, whole or in
 * chunks. */
static void
test_huge_line (void)
{
  const gsize payload_len = 5 * 1024 * 1024;
  g_autoptr(GString) input = g_string_sized_new (payload_len + 64);
  Collector collector;
  const char *data;
  gsize offset;

  g_string_append (input, "event: content_block_start\ndata: ");
  for (gsize i = 0; i < payload_len; i++)
    g_string_append_c (input, 'a' + (i % 26));
  g_string_append (input, "\n\n");

  for (guint pass = 0; pass < 2; pass++)
    {
      gsize chunk = pass == 0 ? input->len : 16 * 1024;

      collector_init (&collector);
      for (offset = 0; offset < input->len; offset += chunk)
        tally_sse_decoder_feed (collector.decoder, (const guint8 *) input->str + offset,
                                MIN (chunk, input->len - offset));

      g_assert_cmpuint (collector.lines->len, ==, 1);
      data = g_ptr_array_index (collector.lines, 0);
      g_assert_true (g_str_has_prefix (data, "content_block_start\tabcdefghijklmnopqrstuvwxyzabc"));
      g_assert_cmpuint (strlen (data), ==, strlen ("content_block_start\t") + payload_len);
      g_assert_cmpint (data[strlen (data) - 1], ==, 'a' + ((payload_len - 1) % 26));
      collector_clear (&collector);
    }
}

static void
test_reset (void)
{
  Collector collector;

  collector_init (&collector);

  feed_string (&collector, "id: 3\nretry: 100\nevent: a\ndata: partial\ndata: line with no end");
  g_assert_cmpint (tally_sse_decoder_get_retry (collector.decoder), ==, 100);

  tally_sse_decoder_reset (collector.decoder);
  g_assert_cmpint (tally_sse_decoder_get_retry (collector.decoder), ==, -1);

  /* No id, no event type, no data of before the reset, and a BOM is
   * stripped again at the start of the new stream. */
  feed_string (&collector, "\xEF\xBB\xBF" "data: x\n\n");
  tally_sse_decoder_finish (collector.decoder);
  assert_lines (collector.lines, (const char * const[]) { "\tx", NULL });

  collector_clear (&collector);
}

static void
test_reset_after_cr (void)
{
  Collector collector;

  collector_init (&collector);

  /* The pending "is the next byte an LF?" decision belongs to the old
   * stream: after a reset a leading LF is a blank line, not skipped. */
  feed_string (&collector, "data: old\r");
  tally_sse_decoder_reset (collector.decoder);
  feed_string (&collector, "\ndata: new\n\n");
  assert_lines (collector.lines, (const char * const[]) { "\tnew", NULL });

  collector_clear (&collector);
}

static void
test_reset_from_callback (void)
{
  Collector collector;

  collector_init (&collector);
  collector.reset_after = 1;

  /* The rest of the chunk after the reset belongs to the old stream. */
  feed_string (&collector, "id: 1\ndata: a\n\ndata: b\n\n");
  assert_lines (collector.lines, (const char * const[]) { "\ta\t1", NULL });

  feed_string (&collector, "data: c\n\n");
  tally_sse_decoder_finish (collector.decoder);
  assert_lines (collector.lines, (const char * const[]) { "\ta\t1", "\tc", NULL });

  collector_clear (&collector);
}

static void
test_empty_feed (void)
{
  Collector collector;

  collector_init (&collector);
  tally_sse_decoder_feed (collector.decoder, NULL, 0);
  tally_sse_decoder_finish (collector.decoder);
  assert_lines (collector.lines, NULL);
  g_assert_cmpint (tally_sse_decoder_get_retry (collector.decoder), ==, -1);
  collector_clear (&collector);
}

/* Fixtures */

static void
test_fixture_splits (void)
{
  g_autoptr(GPtrArray) names = tally_test_list_sse_fixtures ();

  g_assert_cmpuint (names->len, >, 0);

  for (guint i = 0; i < names->len; i++)
    {
      g_autoptr(GBytes) bytes = tally_test_load_sse_fixture (g_ptr_array_index (names, i));
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);

      assert_split_invariant (data, len);
    }
}

static void
test_fixture_golden (void)
{
  g_autoptr(GPtrArray) names = tally_test_list_sse_fixtures ();
  gboolean update = g_getenv ("TALLY_UPDATE_GOLDEN") != NULL;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autoptr(GBytes) bytes = tally_test_load_sse_fixture (name);
      g_autoptr(GPtrArray) events = NULL;
      g_autoptr(GString) trace = g_string_new (NULL);
      g_autofree char *golden_name = g_strconcat (name, ".events", NULL);
      g_autofree char *golden_path = g_test_build_filename (G_TEST_DIST, "golden", golden_name, NULL);
      g_autofree char *expected = NULL;
      g_autoptr(GError) error = NULL;
      gsize len;
      const guint8 *data = g_bytes_get_data (bytes, &len);
      guint before;

      events = decode_split (data, len, NULL, 0, &before);
      for (guint j = 0; j < events->len; j++)
        g_string_append_printf (trace, "%s\n", (char *) g_ptr_array_index (events, j));

      if (update)
        {
          g_file_set_contents (golden_path, trace->str, trace->len, &error);
          g_assert_no_error (error);
          continue;
        }

      g_test_message ("golden %s", golden_name);
      g_file_get_contents (golden_path, &expected, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (trace->str, ==, expected);
    }
}

/* A golden file without a fixture would silently test nothing. */
static void
test_golden_files_match_fixtures (void)
{
  g_autoptr(GPtrArray) names = tally_test_list_sse_fixtures ();
  g_autofree char *golden_dir = g_test_build_filename (G_TEST_DIST, "golden", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = g_dir_open (golden_dir, 0, &error);
  const char *file;
  guint n_events = 0;

  g_assert_no_error (error);

  while ((file = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *stem = NULL;
      guint index;

      if (g_str_has_suffix (file, ".events"))
        {
          stem = g_strndup (file, strlen (file) - strlen (".events"));
          n_events++;
        }
      else if (g_str_has_suffix (file, ".message"))
        stem = g_strndup (file, strlen (file) - strlen (".message"));
      else
        continue;

      if (!g_ptr_array_find_with_equal_func (names, stem, g_str_equal, &index))
        g_error ("golden file %s has no fixture", file);
    }

  g_assert_cmpuint (n_events, ==, names->len);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (spec_cases); i++)
    g_test_add_data_func (spec_cases[i].path, &spec_cases[i], test_spec_case);

  g_test_add_func ("/tally/sse/id-with-nul", test_id_with_nul);
  g_test_add_func ("/tally/sse/nul-in-data", test_nul_in_data);
  g_test_add_func ("/tally/sse/spec/28-huge-line", test_huge_line);
  g_test_add_func ("/tally/sse/reset", test_reset);
  g_test_add_func ("/tally/sse/reset-after-cr", test_reset_after_cr);
  g_test_add_func ("/tally/sse/reset-from-callback", test_reset_from_callback);
  g_test_add_func ("/tally/sse/empty-feed", test_empty_feed);
  g_test_add_func ("/tally/sse/fixtures/splits", test_fixture_splits);
  g_test_add_func ("/tally/sse/fixtures/golden", test_fixture_golden);
  g_test_add_func ("/tally/sse/fixtures/golden-complete", test_golden_files_match_fixtures);

  return g_test_run ();
}
