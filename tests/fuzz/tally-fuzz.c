/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "tally-fuzz.h"

#include <stdlib.h>

/**
 * tally_fuzz_splitter_init:
 * @splitter: the splitter to set up
 * @data: the fuzz input
 * @size: its length in bytes
 * @salt: mixed into the seed, so that one input can be split in several
 *   unrelated ways
 *
 * Seeds @splitter with an FNV-1a hash of @data and @salt.
 */
void
tally_fuzz_splitter_init (TallyFuzzSplitter *splitter,
                          const guint8      *data,
                          gsize              size,
                          guint64            salt)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325) ^ salt;

  for (gsize i = 0; i < size; i++)
    {
      h ^= data[i];
      h *= G_GUINT64_CONSTANT (0x100000001b3);
    }
  splitter->state = h != 0 ? h : 1;
}

/**
 * tally_fuzz_chunk:
 * @splitter: a seeded splitter
 * @mode: 0 for everything at once, 1 for one byte at a time, anything else
 *   for lengths from tally_fuzz_splitter_next()
 * @remaining: bytes left to feed (more than 0)
 * @max_chunk: the largest chunk in the third mode (more than 0)
 *
 * Returns: the length of the next chunk to feed, 1 to @remaining
 */
gsize
tally_fuzz_chunk (TallyFuzzSplitter *splitter,
                  int                mode,
                  gsize              remaining,
                  gsize              max_chunk)
{
  if (mode == 0)
    return remaining;
  if (mode == 1)
    return 1;
  return tally_fuzz_splitter_next (splitter, remaining, max_chunk);
}

/**
 * tally_fuzz_dup_chunks:
 * @data: (array length=size): the input, which seeds the splitter
 * @size: its length
 * @mode: as for tally_fuzz_chunk()
 * @salt: as for tally_fuzz_splitter_init()
 * @max_chunk: as for tally_fuzz_chunk()
 *
 * The whole sequence of chunk lengths tally_fuzz_chunk() gives for @data,
 * for feeding helpers that take a list (tests/tally-test-stream.h).
 *
 * Returns: (transfer full) (array zero-terminated=1): the lengths, which
 *   add up to @size, followed by 0; free with g_free()
 */
gsize *
tally_fuzz_dup_chunks (const guint8 *data,
                       gsize         size,
                       int           mode,
                       guint64       salt,
                       gsize         max_chunk)
{
  g_autoptr(GArray) chunks = g_array_new (TRUE, FALSE, sizeof (gsize));
  TallyFuzzSplitter splitter;
  gsize offset = 0;

  tally_fuzz_splitter_init (&splitter, data, size, salt);
  while (offset < size)
    {
      gsize chunk = tally_fuzz_chunk (&splitter, mode, size - offset, max_chunk);

      g_array_append_val (chunks, chunk);
      offset += chunk;
    }

  return (gsize *) (void *) g_array_free (g_steal_pointer (&chunks), FALSE);
}

/**
 * tally_fuzz_splitter_next:
 * @splitter: a seeded splitter
 * @remaining: bytes left to feed (more than 0)
 * @max_chunk: the largest chunk to return (more than 0)
 *
 * Returns: the length of the next chunk, between 1 and
 *   MIN (@remaining, @max_chunk); short chunks are the most likely
 */
gsize
tally_fuzz_splitter_next (TallyFuzzSplitter *splitter,
                          gsize              remaining,
                          gsize              max_chunk)
{
  guint64 x = splitter->state;
  gsize len;

  /* xorshift64 */
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  splitter->state = x;

  /* Half of the chunks are 1–4 bytes long, the rest up to max_chunk. */
  if (x & 1)
    len = 1 + (gsize) ((x >> 1) % 4);
  else
    len = 1 + (gsize) ((x >> 1) % max_chunk);

  return MIN (len, remaining);
}

static void
discard_log (const gchar    *log_domain,
             GLogLevelFlags  log_level,
             const gchar    *message,
             gpointer        user_data)
{
  if (log_level & (G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_LEVEL_ERROR))
    {
      g_printerr ("%s: %s\n", log_domain != NULL ? log_domain : "", message);
      abort ();
    }
}

static GLogWriterOutput
discard_structured_log (GLogLevelFlags   log_level,
                        const GLogField *fields,
                        gsize            n_fields,
                        gpointer         user_data)
{
  /* Criticals abort: a g_return_if_fail () that fires on fuzz input is a
   * bug worth a report. */
  if (log_level & (G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_LEVEL_ERROR))
    {
      g_log_writer_standard_streams (log_level, fields, n_fields, user_data);
      abort ();
    }
  return G_LOG_WRITER_HANDLED;
}

/**
 * tally_fuzz_quiet_logs:
 *
 * Drops debug, info, message and warning output, which the code under test
 * may print for every malformed input, and makes criticals fatal. Call once,
 * from LLVMFuzzerInitialize() or the first input.
 */
void
tally_fuzz_quiet_logs (void)
{
  g_log_set_default_handler (discard_log, NULL);
  g_log_set_writer_func (discard_structured_log, NULL, NULL);
}

/**
 * tally_fuzz_dup_text:
 * @data: the fuzz input
 * @size: its length in bytes
 *
 * Turns fuzz bytes into text as a JSON string member reaches the code
 * under test: valid UTF-8 (invalid sequences become U+FFFD) and ending at
 * the first NUL, as json-glib hands strings over.
 *
 * Returns: (transfer full): the text
 */
char *
tally_fuzz_dup_text (const guint8 *data,
                     gsize         size)
{
  /* A NUL that g_utf8_make_valid() keeps ends the C string, as in
   * json-glib. */
  return g_utf8_make_valid ((const char *) data, size);
}
