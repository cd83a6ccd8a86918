/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

G_BEGIN_DECLS

/*
 * Helpers shared by the libFuzzer targets under tests/fuzz/. See
 * docs/testing.md for how the targets are built and run.
 */

int LLVMFuzzerInitialize   (int           *argc,
                            char        ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

/**
 * TallyFuzzSplitter:
 * @state: the generator's state
 *
 * A small deterministic generator of chunk lengths. It is seeded from the
 * input itself, so a crash reproduces from the saved input alone, and
 * different inputs are cut at different places.
 */
typedef struct {
  guint64 state;
} TallyFuzzSplitter;

void    tally_fuzz_splitter_init (TallyFuzzSplitter *splitter,
                                  const guint8      *data,
                                  gsize              size,
                                  guint64            salt);
gsize   tally_fuzz_splitter_next (TallyFuzzSplitter *splitter,
                                  gsize              remaining,
                                  gsize              max_chunk);
gsize   tally_fuzz_chunk         (TallyFuzzSplitter *splitter,
                                  int                mode,
                                  gsize              remaining,
                                  gsize              max_chunk);

gsize  *tally_fuzz_dup_chunks    (const guint8      *data,
                                  gsize              size,
                                  int                mode,
                                  guint64            salt,
                                  gsize              max_chunk);

void    tally_fuzz_quiet_logs    (void);
char   *tally_fuzz_dup_text      (const guint8      *data,
                                  gsize              size);

G_END_DECLS
