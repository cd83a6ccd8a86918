/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: TallySseDecoder (src/core/api/tally-sse-decoder.h).
 *
 * The input is a byte stream as a server might send it. It is decoded three
 * times — in one piece, one byte at a time, and in chunks whose lengths
 * come from a generator seeded with the input — and the dispatched events
 * and the retry value must be the same every time. Every dispatched string
 * must be valid UTF-8, and a reset decoder must decode the stream again
 * exactly as a fresh one did.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tally-fuzz.h"
#include "tally-sse-decoder.h"

static void
record_event (const TallySseEvent *event,
              gpointer             user_data)
{
  GString *log = user_data;

  if (event->data == NULL ||
      !g_utf8_validate (event->data, -1, NULL) ||
      (event->event != NULL && !g_utf8_validate (event->event, -1, NULL)) ||
      (event->id != NULL && !g_utf8_validate (event->id, -1, NULL)))
    {
      g_printerr ("dispatched an event that is not valid UTF-8\n");
      abort ();
    }

  /* Lengths first, so that no content can imitate a separator. */
  g_string_append_printf (log, "event %" G_GSIZE_FORMAT ":%s|%" G_GSIZE_FORMAT ":%s|",
                          event->event != NULL ? strlen (event->event) : 0,
                          event->event != NULL ? event->event : "",
                          strlen (event->data), event->data);
  if (event->id != NULL)
    g_string_append_printf (log, "%" G_GSIZE_FORMAT ":%s\n", strlen (event->id), event->id);
  else
    g_string_append (log, "-\n");
}

static void
decode_chunked (TallySseDecoder *decoder,
                GString         *log,
                const guint8    *data,
                gsize            size,
                int              mode)
{
  TallyFuzzSplitter splitter;
  gsize offset = 0;

  tally_fuzz_splitter_init (&splitter, data, size, 0x55e);
  while (offset < size)
    {
      gsize chunk = tally_fuzz_chunk (&splitter, mode, size - offset, 97);

      tally_sse_decoder_feed (decoder, data + offset, chunk);
      offset += chunk;
    }
  tally_sse_decoder_finish (decoder);
  g_string_append_printf (log, "retry %" G_GINT64_FORMAT "\n", tally_sse_decoder_get_retry (decoder));
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
  g_autoptr(GString) first = g_string_new (NULL);

  for (int mode = 0; mode < 3; mode++)
    {
      g_autoptr(GString) log = mode == 0 ? NULL : g_string_new (NULL);
      GString *out = mode == 0 ? first : log;
      g_autoptr(TallySseDecoder) decoder = tally_sse_decoder_new (record_event, out);

      decode_chunked (decoder, out, data, size, mode);

      if (mode > 0 && !g_string_equal (first, log))
        {
          g_printerr ("split %d decoded differently:\n--- whole\n%s--- split\n%s", mode, first->str, log->str);
          abort ();
        }

      if (mode == 2)
        {
          /* Reset, then the same stream again: the same events. */
          g_string_truncate (log, 0);
          tally_sse_decoder_reset (decoder);
          decode_chunked (decoder, log, data, size, 0);
          if (!g_string_equal (first, log))
            {
              g_printerr ("a reset decoder decoded differently:\n--- fresh\n%s--- reset\n%s", first->str, log->str);
              abort ();
            }
        }
    }

  return 0;
}
