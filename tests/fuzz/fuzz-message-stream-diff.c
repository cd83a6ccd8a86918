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

/* The most events a generated stream has after its message_start. */
#define MAX_EVENTS 48

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
  { "signature_delta", "signature" },
  { "input_json_delta", "partial_json" },
  { "citations_delta", "citation" },
  { "text_delta", "thinking" },
  { "mystery_delta", "text" },
};

/* For each entry of block_starts, the delta shapes that fit it. */
static const guint fitting_shapes[][2] = {
  { 0, 0 },
  { 1, 2 },
  { 3, 3 },
  { 6, 6 },
  { 3, 3 },
};

/* How a delta string may be encoded. */
typedef enum {
  /* Clean, and it decodes to text that can stand inside a JSON string, so
   * a tool block's input stays valid JSON (see generate_block_start()). */
  ENCODE_IN_JSON_STRING,
  /* Any encoding the API could send. */
  ENCODE_CLEAN,
  /* Anything: escapes JSON lacks, lone surrogates, NUL, control
   * characters, bytes that are not UTF-8, quotes that end the string. */
  ENCODE_DIRTY,
} Encoding;

/* Appends one character of a delta string, encoded as @how says. */
static void
append_encoded (GString  *out,
                guint     byte,
                guint     how,
                Encoding  encoding)
{
  static const char * const escapes[] = {
    "\\/", "\\u00e9", "\\u00C9", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\u20ac", "\\uFFFF", "é", "😀",
    "\\\"", "\\\\", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u001f",
    "\\ud800", "\\udc00", "\\ude00\\ud83d", "\\ud800\\u0041", "\\ud83d", "\\u0000", "\\x",
    "\\u12", "\\U0041", "\\", "\"", "\t", "\x01",
  };
  /* How many of the escapes above each encoding may use. */
  static const guint n_escapes[] = { 9, 17, G_N_ELEMENTS (escapes) };
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
      g_string_append (out, escapes[byte % n_escapes[encoding]]);
      break;
    case 4:
      /* A \u escape; a clean one is a character from U+0020 below the
       * surrogates, never '"' or '\\'. */
      if (encoding != ENCODE_DIRTY)
        g_string_append_printf (out, (byte & 1) ? "\\u%04X" : "\\u%04x", 0x20 + byte * 211);
      else
        g_string_append_printf (out, (byte & 1) ? "\\u%02X%02x" : "\\u%02x%02X", byte, (byte * 37) & 0xff);
      break;
    case 5:
      /* A raw byte, possibly not UTF-8 (the decoder repairs it). */
      if (encoding != ENCODE_DIRTY)
        g_string_append_c (out, ascii == '"' || ascii == '\\' ? 'q' : ascii);
      else
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

/* The generated stream so far: its blocks' kinds (indexes into
 * block_starts) and which of them are stopped. */
typedef struct {
  Program  prog;
  GString *out;
  guint8   kinds[MAX_EVENTS];
  gboolean stopped[MAX_EVENTS];
  guint    n_blocks;
} Generator;

static gboolean
is_tool_block (Generator *gen,
               guint      index)
{
  return index < gen->n_blocks && fitting_shapes[gen->kinds[index]][0] == 3;
}

static void
append_input_delta (Generator  *gen,
                    guint       index,
                    const char *partial_json)
{
  g_autofree char *json = NULL;

  json = g_strdup_printf ("{\"type\":\"content_block_delta\",\"index\":%u,\"delta\":"
                          "{\"type\":\"input_json_delta\",\"partial_json\":\"%s\"}}",
                          index, partial_json);
  append_event (gen->out, "content_block_delta", json);
}

/* A tool block's input opens a JSON string right away and closes it before
 * its stop, so that its clean deltas add up to valid JSON and the stream
 * goes on after the stop. */
static void
generate_block_start (Generator *gen)
{
  g_autofree char *json = NULL;
  guint kind = next_byte (&gen->prog) % G_N_ELEMENTS (block_starts);

  json = g_strdup_printf ("{\"type\":\"content_block_start\",\"index\":%u,\"content_block\":%s}",
                          gen->n_blocks, block_starts[kind]);
  append_event (gen->out, "content_block_start", json);
  gen->kinds[gen->n_blocks] = kind;
  gen->stopped[gen->n_blocks] = FALSE;
  gen->n_blocks++;
  if (is_tool_block (gen, gen->n_blocks - 1))
    append_input_delta (gen, gen->n_blocks - 1, "{\\\"q\\\":\\\"");
}

/* A block that has not stopped, starting the search at @pick; or
 * G_MAXUINT when all have. */
static guint
find_open_block (Generator *gen,
                 guint      pick)
{
  for (guint i = 0; i < gen->n_blocks; i++)
    {
      guint index = (pick + i) % gen->n_blocks;

      if (!gen->stopped[index])
        return index;
    }

  return G_MAXUINT;
}

static void
generate_block_stop (Generator *gen)
{
  g_autofree char *json = NULL;
  guint pick = next_byte (&gen->prog);
  /* Mostly an open block; sometimes any index, which may fail. */
  guint index = pick % 16 != 0 ? find_open_block (gen, pick) : pick % (gen->n_blocks + 1);

  if (index == G_MAXUINT)
    return;
  if (index < gen->n_blocks && !gen->stopped[index] && is_tool_block (gen, index))
    append_input_delta (gen, index, "\\\"}");
  if (index < gen->n_blocks)
    gen->stopped[index] = TRUE;

  json = g_strdup_printf ("{\"type\":\"content_block_stop\",\"index\":%u}", index);
  append_event (gen->out, "content_block_stop", json);
}

/* Mostly a delta in the API's exact compact form for an open block of a
 * kind it fits, with a clean string; sometimes one of many ways to differ
 * from that: the form (variant < 12), the string (dirty), or the block. */
static void
generate_delta (Generator *gen)
{
  g_autoptr(GString) data = g_string_new (NULL);
  guint variant = next_byte (&gen->prog) % 256;
  gboolean dirty = next_byte (&gen->prog) % 32 == 0;
  guint length = next_byte (&gen->prog) % 24;
  guint pick = next_byte (&gen->prog);
  const char *name = "content_block_delta";
  guint index;
  guint shape;

  index = find_open_block (gen, pick);
  if (index == G_MAXUINT)
    {
      generate_block_start (gen);
      return;
    }

  if (variant == 10)
    shape = pick % G_N_ELEMENTS (delta_shapes);
  else
    shape = fitting_shapes[gen->kinds[index]][pick % 2];

  switch (variant)
    {
    case 0: index = gen->n_blocks + pick % 3; break;
    case 1: name = NULL; break;
    case 2: name = "message_delta"; break;
    case 11: index = pick % gen->n_blocks; break;
    default: break;
    }

  if (variant == 3)
    g_string_append_printf (data, "{\"index\":%u,\"type\":\"content_block_delta\",", index);
  else if (variant == 4)
    g_string_append_printf (data, "{\"type\": \"content_block_delta\", \"index\": %u, ", index);
  else if (variant == 5)
    g_string_append_printf (data, "{\"type\":\"content_block_delta\",\"index\":0%u,", index);
  else if (variant == 6)
    g_string_append_printf (data, "{\"type\":\"content_block_delta\",\"index\":%u.0,", index);
  else
    g_string_append_printf (data, "{\"type\":\"content_block_delta\",\"index\":%u,", index);

  g_string_append_printf (data, "\"delta\":{\"type\":\"%s\",\"%s\":\"",
                          delta_shapes[shape][0], delta_shapes[shape][1]);
  for (guint i = 0; i < length; i++)
    {
      guint how = next_byte (&gen->prog);

      append_encoded (data, next_byte (&gen->prog), how,
                      dirty ? ENCODE_DIRTY : shape == 3 ? ENCODE_IN_JSON_STRING : ENCODE_CLEAN);
    }
  g_string_append_c (data, '"');

  if (variant == 7)
    g_string_append (data, ",\"extra\":1");
  g_string_append (data, "}}");
  if (variant == 8)
    g_string_append (data, " ");
  else if (variant == 9)
    g_string_truncate (data, data->len - 1);

  append_event (gen->out, name, data->str);
}

static GString *
generate (const guint8 *data,
          gsize         size)
{
  Generator gen = { { data, size, 0 }, g_string_new (NULL), { 0 }, { 0 }, 0 };

  if (next_byte (&gen.prog) % 16 != 0)
    append_event (gen.out, "message_start",
                  "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
                  "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"
                  "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}");

  /* A few dozen events find what a long stream finds, many times faster. */
  for (guint n_events = 0; gen.prog.pos < gen.prog.size && n_events < MAX_EVENTS; n_events++)
    {
      switch (next_byte (&gen.prog) % 32)
        {
        case 0:
        case 1:
        case 2:
          generate_block_start (&gen);
          break;
        case 3:
        case 4:
          generate_block_stop (&gen);
          break;
        case 5:
          append_event (gen.out, (next_byte (&gen.prog) & 1) ? "ping" : NULL, "{\"type\":\"ping\"}");
          break;
        case 6:
          append_event (gen.out, "message_delta",
                        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                        "\"usage\":{\"output_tokens\":7}}");
          break;
        case 7:
          /* Events after message_stop fail: mostly it comes last. */
          if (n_events + 4 >= MAX_EVENTS || next_byte (&gen.prog) % 16 == 0)
            append_event (gen.out, "message_stop", "{\"type\":\"message_stop\"}");
          break;
        default:
          generate_delta (&gen);
          break;
        }
    }

  return gen.out;
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
