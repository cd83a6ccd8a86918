/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: the fast path of TallyMessageStream
 * (src/core/api/tally-message-stream-scan.c) against its json-glib path.
 *
 * Every input is fed to a stream with the fast path and to one without it,
 * and the two must give the same signals, error (domain, code, message),
 * blocks and content (tests/tally-test-stream.c records them). The fast
 * path is also fed in generated chunk splits.
 *
 * An input is used in one of two ways:
 *
 * - as it is, as the body of a response (the seeds are recorded streams,
 *   and the mutations make them invalid in every way);
 * - when it starts with "GEN\n", as a program for a generator that writes
 *   a stream which is mostly valid — a message_start, blocks of every kind,
 *   many deltas — whose delta strings are encoded from the input bytes in
 *   many ways: raw UTF-8 (or not UTF-8), every JSON escape, \u escapes of
 *   either case, surrogate pairs, lone and swapped surrogates, control
 *   characters, plus deltas with white space, extra or reordered members,
 *   wrong indexes and event names. So the fuzzer reaches deep into the hot
 *   shapes instead of stopping at the first broken brace.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tally-fuzz.h"
#include "tally-test-stream.h"

static const char gen_magic[] = "GEN\n";

typedef struct {
  const guint8 *data;
  gsize         size;
  gsize         pos;
} Program;

static guint
next_byte (Program *prog)
{
  if (prog->pos >= prog->size)
    return 0;
  return prog->data[prog->pos++];
}

static const char * const block_starts[] = {
  "{\"type\":\"text\",\"text\":\"\"}",
  "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}",
  "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"run_sql\",\"input\":{}}",
  "{\"type\":\"redacted_thinking\",\"data\":\"abc\"}",
  "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}",
};

static const char * const delta_shapes[][2] = {
  { "text_delta", "text" },
  { "thinking_delta", "thinking" },
  { "input_json_delta", "partial_json" },
  { "signature_delta", "signature" },
  { "citations_delta", "citation" },
  { "text_delta", "thinking" },
  { "mystery_delta", "text" },
};

/* Appends one character (or byte) of a delta string, encoded as @how says. */
static void
append_encoded (GString *out,
                guint    byte,
                guint    how)
{
  static const char * const escapes[] = {
    "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u00C9",
    "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud800", "\\udc00", "\\ude00\\ud83d", "\\ud800\\u0041",
    "\\u0000", "\\u001f", "\\u20ac", "\\uFFFF", "\\x", "\\u12", "\\", "\"", "é", "😀", "\t", "\x01",
  };

  char ascii = (char) (0x20 + byte % 0x5f);

  switch (how % 8)
    {
    case 0:
    case 1:
    case 2:
      /* Printable ASCII, most of what the API sends. */
      g_string_append_c (out, ascii == '"' || ascii == '\\' ? 'q' : ascii);
      break;
    case 3:
      /* One of the escapes and special characters above. */
      g_string_append (out, escapes[byte % G_N_ELEMENTS (escapes)]);
      break;
    case 4:
      /* Any \u escape. */
      g_string_append_printf (out, (byte & 1) ? "\\u%02X%02x" : "\\u%02x%02X", byte, (byte * 37) & 0xff);
      break;
    case 5:
      /* A raw byte, possibly not UTF-8 (the decoder repairs it). */
      g_string_append_c (out, (char) byte);
      break;
    default:
      g_string_append_unichar (out, 0xa0 + byte * 7);
      break;
    }
}

static void
append_event (GString    *out,
              const char *name,
              const char *data)
{
  if (name != NULL)
    g_string_append_printf (out, "event: %s\n", name);
  g_string_append_printf (out, "data: %s\n\n", data);
}

static void
generate_delta (Program *prog,
                GString *out,
                guint    n_blocks)
{
  g_autoptr(GString) data = g_string_new (NULL);
  guint shape = next_byte (prog) % G_N_ELEMENTS (delta_shapes);
  guint variant = next_byte (prog);
  guint length = next_byte (prog) % 24;
  guint index = n_blocks > 0 ? next_byte (prog) % n_blocks : 0;
  const char *name = "content_block_delta";

  /* Mostly the exact compact form; sometimes a variation of it. */
  switch (variant % 16)
    {
    case 0: index = n_blocks + variant % 3; break;
    case 1: name = NULL; break;
    case 2: name = "message_delta"; break;
    default: break;
    }

  if (variant % 16 == 3)
    g_string_append_printf (data, "{\"index\":%u,\"type\":\"content_block_delta\",", index);
  else if (variant % 16 == 4)
    g_string_append_printf (data, "{\"type\": \"content_block_delta\", \"index\": %u, ", index);
  else if (variant % 16 == 5)
    g_string_append_printf (data, "{\"type\":\"content_block_delta\",\"index\":0%u,", index);
  else if (variant % 16 == 6)
    g_string_append_printf (data, "{\"type\":\"content_block_delta\",\"index\":%u.0,", index);
  else
    g_string_append_printf (data, "{\"type\":\"content_block_delta\",\"index\":%u,", index);

  g_string_append_printf (data, "\"delta\":{\"type\":\"%s\",\"%s\":\"",
                          delta_shapes[shape][0], delta_shapes[shape][1]);
  for (guint i = 0; i < length; i++)
    {
      guint how = next_byte (prog);

      append_encoded (data, next_byte (prog), how);
    }
  g_string_append_c (data, '"');

  if (variant % 16 == 7)
    g_string_append (data, ",\"extra\":1");
  g_string_append (data, "}}");
  if (variant % 16 == 8)
    g_string_append (data, " ");
  else if (variant % 16 == 9)
    g_string_truncate (data, data->len - 1);

  append_event (out, name, data->str);
}

static GString *
generate (const guint8 *data,
          gsize         size)
{
  Program prog = { data, size, 0 };
  GString *out = g_string_new (NULL);
  guint n_blocks = 0;
  guint first = next_byte (&prog);

  if (first % 8 != 0)
    append_event (out, "message_start",
                  "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
                  "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"
                  "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}");

  while (prog.pos < prog.size)
    {
      guint op = next_byte (&prog) % 16;
      g_autofree char *json = NULL;

      switch (op)
        {
        case 0:
        case 1:
          json = g_strdup_printf ("{\"type\":\"content_block_start\",\"index\":%u,\"content_block\":%s}",
                                  n_blocks, block_starts[next_byte (&prog) % G_N_ELEMENTS (block_starts)]);
          append_event (out, "content_block_start", json);
          n_blocks++;
          break;
        case 2:
          json = g_strdup_printf ("{\"type\":\"content_block_stop\",\"index\":%u}",
                                  n_blocks > 0 ? next_byte (&prog) % n_blocks : 0);
          append_event (out, "content_block_stop", json);
          break;
        case 3:
          append_event (out, (next_byte (&prog) & 1) ? "ping" : NULL, "{\"type\":\"ping\"}");
          break;
        case 4:
          append_event (out, "message_delta",
                        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                        "\"usage\":{\"output_tokens\":7}}");
          break;
        case 5:
          if (next_byte (&prog) % 4 == 0)
            append_event (out, "message_stop", "{\"type\":\"message_stop\"}");
          break;
        default:
          generate_delta (&prog, out, n_blocks);
          break;
        }
    }

  return out;
}

static void
compare (const char *what,
         const char *json_glib,
         const char *fast)
{
  if (!g_str_equal (json_glib, fast))
    {
      g_printerr ("the fast path (%s) differs from the json-glib path:\n--- json-glib\n%s--- fast\n%s",
                  what, json_glib, fast);
      abort ();
    }
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
  g_autoptr(GString) generated = NULL;
  g_autofree char *json_glib = NULL;
  g_autofree char *fast = NULL;
  g_autofree char *split = NULL;
  g_autofree gsize *chunks = NULL;

  if (size >= sizeof gen_magic - 1 && memcmp (data, gen_magic, sizeof gen_magic - 1) == 0)
    {
      generated = generate (data + sizeof gen_magic - 1, size - (sizeof gen_magic - 1));
      data = (const uint8_t *) generated->str;
      size = generated->len;
    }

  json_glib = tally_test_stream_run (data, size, NULL, FALSE);
  fast = tally_test_stream_run (data, size, NULL, TRUE);
  compare ("whole", json_glib, fast);

  chunks = tally_fuzz_dup_chunks (data, size, 2, 0xd1ff, 97);
  split = tally_test_stream_run (data, size, chunks, TRUE);
  compare ("split", json_glib, split);

  return 0;
}
