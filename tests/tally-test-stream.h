/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tally-message-stream.h"

G_BEGIN_DECLS

/*
 * A text record of everything a #TallyMessageStream did with an input —
 * its signals in order, then its end state — so that two runs (another
 * split of the input, the fast path or the json-glib path) can be compared
 * as two strings. Shared by tests/test-message-stream-fast.c and the
 * fuzz targets fuzz-message-stream and fuzz-message-stream-diff.
 */

void   tally_test_stream_log_signals (TallyMessageStream *stream,
                                      GString            *log);
void   tally_test_stream_describe    (TallyMessageStream *stream,
                                      gboolean            ok,
                                      const GError       *error,
                                      GString            *out);
void   tally_test_stream_count_delta_bytes
                                     (TallyMessageStream *stream,
                                      guint64            *bytes);
char  *tally_test_stream_run         (const guint8       *data,
                                      gsize               size,
                                      const gsize        *chunks,
                                      gboolean            fast_path);

G_END_DECLS
