/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-test-stream.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "tally-message-stream-private.h"

/* The checks here abort() instead of using g_assert(): the fuzz targets
 * need a crash that libFuzzer catches whatever G_DEBUG says. */

/* block-started and block-stopped: the signal's name, index and type. */
static void
on_block_signal (TallyMessageStream *stream,
                 guint               index,
                 const char         *type,
                 GString            *log)
{
  GSignalInvocationHint *hint = g_signal_get_invocation_hint (stream);

  g_string_append_printf (log, "%s %u %s\n", g_signal_name (hint->signal_id), index,
                          type != NULL ? type : "(null)");
}

static void
on_delta (TallyMessageStream *stream,
          guint               index,
          const char         *text,
          GString            *log)
{
  if (text == NULL || !g_utf8_validate (text, -1, NULL))
    {
      g_printerr ("a delta signal carried no text or text that is not UTF-8\n");
      abort ();
    }
  g_string_append_printf (log, "delta %u %s\n", index, text);
}

static void
on_message_signal (TallyMessageStream *stream,
                   GString            *log)
{
  GSignalInvocationHint *hint = g_signal_get_invocation_hint (stream);

  g_string_append_printf (log, "%s\n", g_signal_name (hint->signal_id));
}

/**
 * tally_test_stream_log_signals:
 * @stream: a stream
 * @log: where to append one line per signal
 *
 * Connects to the signals the stream emits while it is fed (block-started,
 * text-delta, thinking-delta, block-stopped, message-started and
 * message-stopped). Disconnect with g_signal_handlers_disconnect_by_data()
 * before @log goes away. Aborts when a delta carries text that is not UTF-8.
 */
void
tally_test_stream_log_signals (TallyMessageStream *stream,
                               GString            *log)
{
  g_signal_connect (stream, "block-started", G_CALLBACK (on_block_signal), log);
  g_signal_connect (stream, "text-delta", G_CALLBACK (on_delta), log);
  g_signal_connect (stream, "thinking-delta", G_CALLBACK (on_delta), log);
  g_signal_connect (stream, "block-stopped", G_CALLBACK (on_block_signal), log);
  g_signal_connect (stream, "message-started", G_CALLBACK (on_message_signal), log);
  g_signal_connect (stream, "message-stopped", G_CALLBACK (on_message_signal), log);
}

static void
check_block_json (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  /* The API takes UTF-8 only; json-glib would read these bytes anyway. */
  if (!g_utf8_validate (json, -1, NULL))
    {
      g_printerr ("content block is not UTF-8: %s\n", json);
      abort ();
    }
  if (!json_parser_load_from_data (parser, json, -1, &error))
    {
      g_printerr ("content block is not JSON (%s): %s\n", error->message, json);
      abort ();
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
      json_object_get_string_member_with_default (json_node_get_object (root), "type", NULL) == NULL)
    {
      g_printerr ("content block is not an object with a type: %s\n", json);
      abort ();
    }
}

/**
 * tally_test_stream_describe:
 * @stream: a stream after tally_message_stream_end_of_input()
 * @ok: what tally_message_stream_end_of_input() returned
 * @error: (nullable): the error it gave
 * @out: where to append the description
 *
 * Appends the stream's end state: the result and error (domain, code,
 * message, the API's error type), message id, model, stop reason and
 * sequence, usage, every block as JSON, the content echoed to the API and
 * the unknown events. Aborts when a block is not a UTF-8 JSON object with a
 * "type".
 */
void
tally_test_stream_describe (TallyMessageStream *stream,
                            gboolean            ok,
                            const GError       *error,
                            GString            *out)
{
  const TallyUsage *usage = tally_message_stream_get_usage (stream);
  g_autoptr(GPtrArray) unknown = tally_message_stream_dup_unknown_events (stream);
  guint n_blocks = tally_message_stream_get_n_blocks (stream);

  g_string_append_printf (out, "ok %d complete %d content %d\n", ok,
                          tally_message_stream_is_complete (stream),
                          tally_message_stream_has_content (stream));
  if (error != NULL)
    g_string_append_printf (out, "error %s %d %s [%s]\n", g_quark_to_string (error->domain), error->code,
                            error->message, tally_message_stream_get_error_type (stream) ?: "");
  g_string_append_printf (out, "id %s model %s stop %s seq %s\n",
                          tally_message_stream_get_message_id (stream) ?: "-",
                          tally_message_stream_get_model (stream) ?: "-",
                          tally_message_stream_get_stop_reason (stream) ?: "-",
                          tally_message_stream_get_stop_sequence (stream) ?: "-");
  g_string_append_printf (out, "usage %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                          " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %d\n",
                          usage->input_tokens, usage->output_tokens, usage->cache_creation_input_tokens,
                          usage->cache_read_input_tokens, usage->cache_creation_5m, usage->cache_creation_1h,
                          usage->reported);

  for (guint i = 0; i < n_blocks; i++)
    {
      g_autofree char *json = tally_message_stream_dup_block_json (stream, i);

      g_string_append_printf (out, "block %u %s %d %s\n", i,
                              tally_message_stream_get_block_type (stream, i) ?: "-",
                              tally_message_stream_block_is_stopped (stream, i),
                              json != NULL ? json : "-");
      if (json != NULL)
        check_block_json (json);
    }

  /* What goes back to the API in the next request. */
  if (ok)
    {
      g_autoptr(GPtrArray) content = tally_message_stream_dup_content (stream);

      for (guint i = 0; i < content->len; i++)
        {
          check_block_json (g_ptr_array_index (content, i));
          g_string_append_printf (out, "content %s\n", (const char *) g_ptr_array_index (content, i));
        }
    }

  for (guint i = 0; i < unknown->len; i++)
    g_string_append_printf (out, "unknown %s\n", (const char *) g_ptr_array_index (unknown, i));
}

static void
add_length (TallyMessageStream *stream,
            guint               index,
            const char         *text,
            guint64            *bytes)
{
  *bytes += strlen (text);
}

/**
 * tally_test_stream_count_delta_bytes:
 * @stream: a stream
 * @bytes: a counter that outlives @stream's feeding
 *
 * Adds the length in bytes of every text-delta and thinking-delta text to
 * @bytes: a listener like the agent's, for the benchmarks.
 */
void
tally_test_stream_count_delta_bytes (TallyMessageStream *stream,
                                     guint64            *bytes)
{
  g_signal_connect (stream, "text-delta", G_CALLBACK (add_length), bytes);
  g_signal_connect (stream, "thinking-delta", G_CALLBACK (add_length), bytes);
}

/**
 * tally_test_stream_run:
 * @data: (array length=size): a `text/event-stream` body
 * @size: its length in bytes
 * @chunks: (nullable) (array zero-terminated=1): the lengths of the pieces
 *   to feed, used in turn and again from the start, or %NULL for one piece
 * @fast_path: whether the stream may use its fast path
 *
 * Feeds @data to a new stream (one attempt) and ends the input.
 *
 * Returns: (transfer full): the signal log followed by
 *   tally_test_stream_describe()
 */
char *
tally_test_stream_run (const guint8 *data,
                       gsize         size,
                       const gsize  *chunks,
                       gboolean      fast_path)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;
  GString *log = g_string_new (NULL);
  gsize offset = 0;
  guint next = 0;
  gboolean ok;

  _tally_message_stream_set_fast_path (stream, fast_path);
  tally_test_stream_log_signals (stream, log);
  tally_message_stream_begin_attempt (stream, 1);

  while (offset < size)
    {
      gsize chunk = size - offset;

      if (chunks != NULL && chunks[0] != 0)
        {
          if (chunks[next] == 0)
            next = 0;
          chunk = MIN (chunks[next], size - offset);
          next++;
        }
      tally_message_stream_feed (stream, data + offset, chunk);
      offset += chunk;
    }

  ok = tally_message_stream_end_of_input (stream, &error);
  if (ok != (error == NULL) || ok != (tally_message_stream_get_error (stream) == NULL))
    {
      g_printerr ("end_of_input returned %d with error %p and stored error %p\n",
                  ok, (void *) error, (void *) tally_message_stream_get_error (stream));
      abort ();
    }

  tally_test_stream_describe (stream, ok, error, log);
  g_signal_handlers_disconnect_by_data (stream, log);

  return g_string_free (log, FALSE);
}
