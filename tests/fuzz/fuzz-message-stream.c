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
 * must be a JSON object with a "type" (tests/tally-test-stream.c records
 * and checks all that).
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tally-fuzz.h"
#include "tally-test-stream.h"

static char *
run (const guint8 *data,
     gsize         size,
     int           mode)
{
  g_autofree gsize *chunks = tally_fuzz_dup_chunks (data, size, mode, 0x3e55, 61);

  return tally_test_stream_run (data, size, chunks, TRUE);
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
