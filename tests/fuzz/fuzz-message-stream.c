/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: TallyMessageStream, the message accumulator
 * (src/core/api/tally-message-stream.h).
 *
 * The input is the body of a streamed Messages API response. It is fed in
 * one piece, one byte at a time and in generated chunk splits, then the
 * stream is ended with tally_message_stream_end_of_input(). Whatever the
 * split, the signals, the error and the accumulated message must be the
 * same, and every content block the stream hands back for the next request
 * must be a JSON object with a "type".
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "tally-fuzz.h"
#include "tally-message-stream.h"

static void
on_block_started (TallyMessageStream *stream,
                  guint               index,
                  const char         *type,
                  GString            *log)
{
  g_string_append_printf (log, "start %u %s\n", index, type != NULL ? type : "(null)");
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
  /* Deltas are compared as the text they add up to, per block: the split
   * of the input must not change it. */
  g_string_append_printf (log, "delta %u %s\n", index, text);
}

static void
on_block_stopped (TallyMessageStream *stream,
                  guint               index,
                  const char         *type,
                  GString            *log)
{
  g_string_append_printf (log, "stop %u %s\n", index, type != NULL ? type : "(null)");
}

static void
on_message_signal (TallyMessageStream *stream,
                   GString            *log)
{
  g_string_append (log, "message signal\n");
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

static void
describe (TallyMessageStream *stream,
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

static char *
run (const guint8 *data,
     gsize         size,
     int           mode)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GError) error = NULL;
  GString *log = g_string_new (NULL);
  TallyFuzzSplitter splitter;
  gsize offset = 0;
  gboolean ok;

  g_signal_connect (stream, "block-started", G_CALLBACK (on_block_started), log);
  g_signal_connect (stream, "text-delta", G_CALLBACK (on_delta), log);
  g_signal_connect (stream, "thinking-delta", G_CALLBACK (on_delta), log);
  g_signal_connect (stream, "block-stopped", G_CALLBACK (on_block_stopped), log);
  g_signal_connect (stream, "message-started", G_CALLBACK (on_message_signal), log);
  g_signal_connect (stream, "message-stopped", G_CALLBACK (on_message_signal), log);

  tally_fuzz_splitter_init (&splitter, data, size, 0x3e55);
  tally_message_stream_begin_attempt (stream, 1);
  while (offset < size)
    {
      gsize chunk = tally_fuzz_chunk (&splitter, mode, size - offset, 61);

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

  describe (stream, ok, error, log);
  g_signal_handlers_disconnect_by_data (stream, log);

  return g_string_free (log, FALSE);
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  tally_fuzz_quiet_logs ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *whole = NULL;

  whole = run (data, size, 0);
  for (int mode = 1; mode < 3; mode++)
    {
      g_autofree char *split = run (data, size, mode);

      if (!g_str_equal (whole, split))
        {
          g_printerr ("split %d accumulated differently:\n--- whole\n%s--- split\n%s", mode, whole, split);
          abort ();
        }
    }

  return 0;
}
