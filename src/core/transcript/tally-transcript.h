/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-block.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TRANSCRIPT (tally_transcript_get_type ())

G_DECLARE_FINAL_TYPE (TallyTranscript, tally_transcript, TALLY, TRANSCRIPT, GObject)

TallyTranscript *tally_transcript_new        (void);
void             tally_transcript_apply      (TallyTranscript *self,
                                              JsonObject      *event);
void             tally_transcript_add_notice (TallyTranscript *self,
                                              const char      *text);
const char      *tally_transcript_get_title  (TallyTranscript *self);
gint64           tally_transcript_get_last_seq (TallyTranscript *self);
char            *tally_transcript_dup_trace  (TallyTranscript *self);
JsonNode        *tally_transcript_to_snapshot (TallyTranscript *self);
TallyTranscript *tally_transcript_new_from_snapshot (JsonNode   *blocks,
                                                     const char *title,
                                                     gint64      last_seq,
                                                     GError    **error);

G_END_DECLS
