/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TallyUsage:
 * @input_tokens: uncached input tokens
 * @output_tokens: generated tokens, thinking included
 * @cache_creation_input_tokens: tokens written to the prompt cache
 * @cache_read_input_tokens: tokens read from the prompt cache
 * @cache_creation_5m: tokens of @cache_creation_input_tokens written with the
 *   5 minute TTL, or -1 when the API gave no `cache_creation` breakdown
 * @cache_creation_1h: likewise for the 1 hour TTL, or -1
 * @reported: %TRUE when the response carried any `usage` object
 *
 * Token counts of one Messages API response, merged as docs/protocol.md
 * §10.1 says: `message_delta` usage is cumulative and overwrites the
 * fields it carries, never adds.
 */
typedef struct {
  gint64   input_tokens;
  gint64   output_tokens;
  gint64   cache_creation_input_tokens;
  gint64   cache_read_input_tokens;
  gint64   cache_creation_5m;
  gint64   cache_creation_1h;
  gboolean reported;
} TallyUsage;

void tally_usage_add (TallyUsage       *total,
                      const TallyUsage *usage);

#define TALLY_TYPE_MESSAGE_STREAM (tally_message_stream_get_type ())

G_DECLARE_FINAL_TYPE (TallyMessageStream, tally_message_stream, TALLY, MESSAGE_STREAM, GObject)

TallyMessageStream *tally_message_stream_new               (void);

void                tally_message_stream_begin_attempt     (TallyMessageStream  *self,
                                                            guint                attempt);
void                tally_message_stream_feed              (TallyMessageStream  *self,
                                                            const guint8        *data,
                                                            gsize                len);
gboolean            tally_message_stream_end_of_input      (TallyMessageStream  *self,
                                                            GError             **error);
gboolean            tally_message_stream_apply_event       (TallyMessageStream  *self,
                                                            const char          *event_name,
                                                            const char          *data,
                                                            GError             **error);
const GError       *tally_message_stream_get_error         (TallyMessageStream  *self);
const char         *tally_message_stream_get_error_type    (TallyMessageStream  *self);

guint               tally_message_stream_get_attempt       (TallyMessageStream  *self);
gboolean            tally_message_stream_has_content       (TallyMessageStream  *self);
gboolean            tally_message_stream_is_complete       (TallyMessageStream  *self);
const char         *tally_message_stream_get_message_id    (TallyMessageStream  *self);
const char         *tally_message_stream_get_model         (TallyMessageStream  *self);
const char         *tally_message_stream_get_stop_reason   (TallyMessageStream  *self);
const char         *tally_message_stream_get_stop_sequence (TallyMessageStream  *self);
const TallyUsage   *tally_message_stream_get_usage         (TallyMessageStream  *self);

guint               tally_message_stream_get_n_blocks      (TallyMessageStream  *self);
const char         *tally_message_stream_get_block_type    (TallyMessageStream  *self,
                                                            guint                index);
gboolean            tally_message_stream_block_is_stopped  (TallyMessageStream  *self,
                                                            guint                index);
char               *tally_message_stream_dup_block_json    (TallyMessageStream  *self,
                                                            guint                index);
const char         *tally_message_stream_get_block_invalid_input
                                                           (TallyMessageStream  *self,
                                                            guint                index);
GPtrArray          *tally_message_stream_dup_content       (TallyMessageStream  *self);
GPtrArray          *tally_message_stream_dup_unknown_events (TallyMessageStream *self);

void                tally_message_stream_notify_retry      (TallyMessageStream  *self,
                                                            guint                attempt,
                                                            guint                delay_ms,
                                                            guint                status,
                                                            const char          *error_type);
void                tally_message_stream_notify_attempt_finished
                                                           (TallyMessageStream  *self,
                                                            guint                status,
                                                            const char          *request_id,
                                                            gint64               duration_ms,
                                                            const GError        *error);

G_END_DECLS
