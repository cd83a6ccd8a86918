/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Throughput of the SSE decoder and of the message accumulator on a
 * generated, realistic stream of about 50 MB: many messages with thinking,
 * text (JSON escapes, non-ASCII) and tool_use blocks, pings and usage. The
 * stream is fed in 16 KiB reads, as the HTTP client would. Prints figures
 * only; it asserts correctness of the result, never speed. */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "tally-message-stream.h"
#include "tally-sse-decoder.h"
#include "tally-test-stream.h"

#define TARGET_BYTES (50 * 1024 * 1024)
#define CHUNK_SIZE   (16 * 1024)

static const char * const words[] = {
  "the", "query", "returns", "rows", "from", "the", "invoice", "table", "and",
  "joins", "customers", "on", "CustomerId", "so", "we", "can", "see", "totals",
  "per", "country:", "\"quoted\"", "back\\slash", "tab\there", "new\nline",
  "café", "naïve", "日本語", "Ünïcödé", "—", "😀", "€12.50", "<tag>", "{json}",
  "a/b", "100%", "SELECT", "GROUP BY", "ORDER BY", "LIMIT 10;",
};

typedef struct {
  GString *out;
  GRand   *rand;
  guint64  n_events;
  guint64  n_text_chars;
} Generator;

static void
append_json_escaped (GString    *out,
                     const char *str)
{
  for (const char *p = str; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\t': g_string_append (out, "\\t"); break;
        default: g_string_append_c (out, *p); break;
        }
    }
}

static void
event_begin (Generator  *gen,
             const char *name)
{
  g_string_append_printf (gen->out, "event: %s\ndata: ", name);
  gen->n_events++;
}

static void
event_end (Generator *gen)
{
  g_string_append (gen->out, "\n\n");
}

static void
maybe_ping (Generator *gen)
{
  if (g_rand_int_range (gen->rand, 0, 50) == 0)
    {
      event_begin (gen, "ping");
      g_string_append (gen->out, "{\"type\": \"ping\"}");
      event_end (gen);
    }
}

/* A piece of prose of 5–40 bytes (before escaping). */
static void
random_text (Generator *gen,
             GString   *text)
{
  guint target = g_rand_int_range (gen->rand, 5, 41);

  g_string_truncate (text, 0);
  while (text->len < target)
    {
      g_string_append (text, words[g_rand_int_range (gen->rand, 0, G_N_ELEMENTS (words))]);
      g_string_append_c (text, ' ');
    }
}

static void
generate_delta_block (Generator  *gen,
                      guint       index,
                      const char *start_json,
                      const char *delta_type,
                      const char *field,
                      guint       n_deltas)
{
  g_autoptr(GString) text = g_string_new (NULL);

  event_begin (gen, "content_block_start");
  g_string_append_printf (gen->out, "{\"type\":\"content_block_start\",\"index\":%u,\"content_block\":%s}",
                          index, start_json);
  event_end (gen);

  for (guint i = 0; i < n_deltas; i++)
    {
      random_text (gen, text);
      gen->n_text_chars += text->len;

      event_begin (gen, "content_block_delta");
      g_string_append_printf (gen->out,
                              "{\"type\":\"content_block_delta\",\"index\":%u,\"delta\":{\"type\":\"%s\",\"%s\":\"",
                              index, delta_type, field);
      append_json_escaped (gen->out, text->str);
      g_string_append (gen->out, "\"}}");
      event_end (gen);
      maybe_ping (gen);
    }
}

static void
generate_stop (Generator *gen,
               guint      index)
{
  event_begin (gen, "content_block_stop");
  g_string_append_printf (gen->out, "{\"type\":\"content_block_stop\",\"index\":%u}", index);
  event_end (gen);
}

static void
generate_tool_block (Generator *gen,
                     guint      index,
                     guint      message)
{
  g_autoptr(GString) input = g_string_new ("{\"sql\": \"SELECT c.Country, SUM(i.Total) AS total FROM invoices i "
                                           "JOIN customers c ON c.CustomerId = i.CustomerId GROUP BY c.Country "
                                           "ORDER BY total DESC LIMIT 10\", \"note\": \"café — 日本\", \"limit\": 10}");
  gsize offset = 0;

  event_begin (gen, "content_block_start");
  g_string_append_printf (gen->out,
                          "{\"type\":\"content_block_start\",\"index\":%u,\"content_block\":"
                          "{\"type\":\"tool_use\",\"id\":\"toolu_%08u\",\"name\":\"QueryDatabase\",\"input\":{}}}",
                          index, message);
  event_end (gen);

  event_begin (gen, "content_block_delta");
  g_string_append_printf (gen->out,
                          "{\"type\":\"content_block_delta\",\"index\":%u,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}",
                          index);
  event_end (gen);

  while (offset < input->len)
    {
      g_autofree char *piece = NULL;
      gsize len = MIN ((gsize) g_rand_int_range (gen->rand, 3, 20), input->len - offset);

      /* Do not cut a UTF-8 sequence: the API sends whole characters. */
      while (offset + len < input->len && (input->str[offset + len] & 0xC0) == 0x80)
        len++;
      piece = g_strndup (input->str + offset, len);
      offset += len;

      event_begin (gen, "content_block_delta");
      g_string_append_printf (gen->out,
                              "{\"type\":\"content_block_delta\",\"index\":%u,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"",
                              index);
      append_json_escaped (gen->out, piece);
      g_string_append (gen->out, "\"}}");
      event_end (gen);
    }

  generate_stop (gen, index);
}

static void
generate_message (Generator *gen,
                  guint      message)
{
  gboolean with_tool = g_rand_boolean (gen->rand);

  event_begin (gen, "message_start");
  g_string_append_printf (gen->out,
                          "{\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_%08u\","
                          "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,"
                          "\"stop_sequence\":null,\"usage\":{\"input_tokens\":%d,\"cache_creation_input_tokens\":0,"
                          "\"cache_read_input_tokens\":%d,\"cache_creation\":{\"ephemeral_5m_input_tokens\":0,"
                          "\"ephemeral_1h_input_tokens\":0},\"output_tokens\":1,\"service_tier\":\"standard\"}}}",
                          message, g_rand_int_range (gen->rand, 100, 5000), g_rand_int_range (gen->rand, 0, 20000));
  event_end (gen);

  generate_delta_block (gen, 0, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}",
                        "thinking_delta", "thinking", g_rand_int_range (gen->rand, 20, 120));
  event_begin (gen, "content_block_delta");
  g_string_append (gen->out,
                   "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\","
                   "\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYdsQ+/=\"}}");
  event_end (gen);
  generate_stop (gen, 0);

  generate_delta_block (gen, 1, "{\"type\":\"text\",\"text\":\"\"}",
                        "text_delta", "text", g_rand_int_range (gen->rand, 30, 300));
  generate_stop (gen, 1);

  if (with_tool)
    generate_tool_block (gen, 2, message);

  event_begin (gen, "message_delta");
  g_string_append_printf (gen->out,
                          "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\",\"stop_sequence\":null},"
                          "\"usage\":{\"output_tokens\":%d}}",
                          with_tool ? "tool_use" : "end_turn", g_rand_int_range (gen->rand, 50, 2000));
  event_end (gen);

  event_begin (gen, "message_stop");
  g_string_append (gen->out, "{\"type\":\"message_stop\"}");
  event_end (gen);
}

static void
count_event_cb (const TallySseEvent *event,
                gpointer             user_data)
{
  guint64 *count = user_data;

  (*count)++;
}

static double
seconds_since (gint64 start)
{
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GArray) message_ends = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(TallySseDecoder) decoder = NULL;
  Generator gen = { 0 };
  guint64 decoded_events = 0;
  guint64 blocks = 0;
  guint64 text_bytes = 0;
  double megabytes;
  double elapsed;
  gsize start = 0;
  gint64 t0;

  gen.out = g_string_sized_new (TARGET_BYTES + 1024 * 1024);
  gen.rand = g_rand_new_with_seed (20250101);

  t0 = g_get_monotonic_time ();
  for (guint message = 0; gen.out->len < TARGET_BYTES; message++)
    {
      generate_message (&gen, message);
      g_array_append_val (message_ends, gen.out->len);
    }
  megabytes = gen.out->len / (1024.0 * 1024.0);
  g_print ("generated %.1f MB: %u messages, %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
           " text bytes in deltas (%.2f s)\n",
           megabytes, message_ends->len, gen.n_events, gen.n_text_chars, seconds_since (t0));

  /* The bare decoder over the whole stream. */
  decoder = tally_sse_decoder_new (count_event_cb, &decoded_events);
  t0 = g_get_monotonic_time ();
  for (gsize offset = 0; offset < gen.out->len; offset += CHUNK_SIZE)
    tally_sse_decoder_feed (decoder, (const guint8 *) gen.out->str + offset,
                            MIN (CHUNK_SIZE, gen.out->len - offset));
  tally_sse_decoder_finish (decoder);
  elapsed = seconds_since (t0);
  g_assert_cmpuint (decoded_events, ==, gen.n_events);
  g_print ("decoder:        %8.1f MB/s  %10.0f events/s  (%.2f s)\n",
           megabytes / elapsed, decoded_events / elapsed, elapsed);

  /* The accumulator, one attempt per message, as the client uses it. */
  /* A listener, as the agent has one, so signal emission is measured too. */
  tally_test_stream_count_delta_bytes (stream, &text_bytes);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < message_ends->len; i++)
    {
      gsize end = g_array_index (message_ends, gsize, i);
      g_autoptr(GError) error = NULL;

      tally_message_stream_begin_attempt (stream, 1);
      for (gsize offset = start; offset < end; offset += CHUNK_SIZE)
        tally_message_stream_feed (stream, (const guint8 *) gen.out->str + offset,
                                   MIN (CHUNK_SIZE, end - offset));
      if (!tally_message_stream_end_of_input (stream, &error))
        g_error ("message %u failed: %s", i, error->message);

      blocks += tally_message_stream_get_n_blocks (stream);
      start = end;
    }
  elapsed = seconds_since (t0);
  g_print ("message stream: %8.1f MB/s  %10.0f events/s  (%.2f s, %u messages, %" G_GUINT64_FORMAT " blocks)\n",
           megabytes / elapsed, gen.n_events / elapsed, elapsed, message_ends->len, blocks);
  /* Every generated text and thinking byte reached a delta signal. */
  g_assert_cmpuint (text_bytes, ==, gen.n_text_chars);

  g_rand_free (gen.rand);
  g_string_free (gen.out, TRUE);

  return 0;
}
