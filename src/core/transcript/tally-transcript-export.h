/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tally-transcript.h"

G_BEGIN_DECLS

/**
 * TallyTranscriptExportHeader:
 * @title: (nullable): the session's title; %NULL or empty for "Untitled
 *   session"
 * @created_us: when the session was created, µs since the Unix epoch (UTC)
 * @model: (nullable): the model of the session's newest turn
 * @database: (nullable): the database file (only its base name is written)
 * @turns: how many turns the session has; the turns-and-cost line is left
 *   out when 0
 * @has_cost: whether @cost_usd is known
 * @cost_usd: the session's summed cost in US dollars
 * @damaged_events: how many stored events were damaged and could not be
 *   replayed; said at the end of the export when not 0
 * @include_thinking: whether thinking is written out in full (as a quote
 *   under "*Thinking:*") rather than as its word count
 *
 * What the Markdown export says about the session above its turns. The
 * strings are borrowed for the call.
 */
typedef struct {
  const char *title;
  gint64      created_us;
  const char *model;
  const char *database;
  gint64      turns;
  gboolean    has_cost;
  double      cost_usd;
  guint       damaged_events;
  gboolean    include_thinking;
} TallyTranscriptExportHeader;

char *tally_transcript_export_markdown (TallyTranscript                   *transcript,
                                        const TallyTranscriptExportHeader *header);

G_END_DECLS
