/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-json.h"
#include "tally-message-stream.h"
#include "tally-sse-decoder.h"

G_BEGIN_DECLS

/*
 * The message stream's private parts, shared by its files:
 * tally-message-stream.c (the object, its signals and the public reads),
 * tally-message-stream-events.c (applying events: block accumulation and
 * usage merging, docs/protocol.md §9 and §10.1) and
 * tally-message-stream-json.c (JSON in and out: cleaning decoded strings,
 * and each block as the JSON text echoed to the API, docs/protocol.md §4)
 * and tally-message-stream-scan.c (the fast path: a validating scanner for
 * the hot delta events, with the json-glib path as its fallback).
 */

typedef enum {
  BLOCK_TEXT,
  BLOCK_THINKING,
  BLOCK_REDACTED_THINKING,
  BLOCK_TOOL_USE,
  BLOCK_OTHER,
} BlockKind;

typedef struct {
  BlockKind   kind;
  char       *type;
  /* The `content_block` object of content_block_start, as received. */
  char       *raw_start;
  /* Its parsed form; for BLOCK_OTHER it takes the fields of deltas. */
  JsonObject *start;
  /* text, thinking, or the concatenated partial_json of a tool block. */
  GString    *text;
  /* thinking: the signature, byte-exact. */
  char       *signature;
  /* text: JSON texts of the citations. */
  GPtrArray  *citations;
  /* tool blocks: the checked input JSON text, set at content_block_stop. */
  char       *input;
  /* tool_use: the input as received when it was JSON but not an object
   * (@input is then "{}"); the model's mistake, answered by the agent. */
  char       *invalid_input;
  /* BLOCK_OTHER: @start was changed by a delta, @raw_start is stale. */
  gboolean    modified;
  gboolean    stopped;
} Block;

struct _TallyMessageStream
{
  GObject          parent_instance;

  TallySseDecoder *decoder;
  /* Holds the tree of the event being applied. */
  JsonParser      *parser;
  /* Checks tool input at content_block_stop, while @parser's tree is in use. */
  JsonParser      *input_parser;

  guint            attempt;

  /* The first failure of this attempt, and the API's error.type if the
   * failure was an `error` event. */
  GError          *error;
  char            *error_type;

  char            *message_id;
  char            *model;
  char            *stop_reason;
  char            *stop_sequence;
  TallyUsage       usage;

  GPtrArray       *blocks;
  GPtrArray       *unknown_events;

  /* The fast path's buffer for a decoded delta string (NULL while an
   * emission holds it). */
  GString         *scan_buffer;
  /* Events the fast path applied, over the object's life (for tests). */
  guint64          n_fast_events;

  guint            started : 1;
  guint            complete : 1;
  /* Decoded events are offered to tally_message_stream_apply_fast()
   * first (on unless a test turns it off). */
  guint            fast_path : 1;
};

enum {
  MESSAGE_STARTED,
  BLOCK_STARTED,
  TEXT_DELTA,
  THINKING_DELTA,
  BLOCK_STOPPED,
  MESSAGE_STOPPED,
  RETRY,
  ATTEMPT_FINISHED,
  N_SIGNALS
};

/* The signal ids, set in class_init (tally-message-stream.c). */
extern guint tally_message_stream_signals[N_SIGNALS];

/* tally-message-stream-events.c */
void   tally_message_stream_usage_init         (TallyUsage  *usage);
void   tally_message_stream_block_free         (gpointer     data);

/* tally-message-stream-json.c */
void   tally_message_stream_make_strings_valid (JsonNode    *node);
char  *tally_message_stream_dup_raw_member     (const char  *json,
                                                const char  *key,
                                                JsonNode    *fallback);
char  *tally_message_stream_block_to_json      (Block       *block);

/* tally-message-stream-scan.c */
gboolean tally_message_stream_apply_fast       (TallyMessageStream *self,
                                                const char         *event_name,
                                                const char         *data,
                                                gsize               len);

/* tally-message-stream.c: for the tests that compare both paths. */
void     _tally_message_stream_set_fast_path   (TallyMessageStream *self,
                                                gboolean            enabled);
guint64  _tally_message_stream_get_n_fast_events (TallyMessageStream *self);

G_END_DECLS
