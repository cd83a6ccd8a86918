/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallySseEvent:
 * @event: (nullable): the value of the last `event` field, or %NULL when the
 *   event had none (the HTML standard's default type "message")
 * @data: the data buffer: every `data` field of the event joined with "\n",
 *   never %NULL, valid UTF-8
 * @id: (nullable): the last event ID string, which persists across events
 *   as the HTML standard says
 * @data_len: the length of @data in bytes, without the terminating NUL
 *
 * One dispatched server-sent event. The strings belong to the decoder and are
 * valid only during the #TallySseEventFunc call.
 */
typedef struct {
  const char *event;
  const char *data;
  const char *id;
  gsize       data_len;
} TallySseEvent;

/**
 * TallySseEventFunc:
 * @event: the dispatched event (transfer none)
 * @user_data: the data given to tally_sse_decoder_new()
 *
 * Called once per dispatched event, in stream order.
 */
typedef void (*TallySseEventFunc) (const TallySseEvent *event,
                                   gpointer             user_data);

typedef struct _TallySseDecoder TallySseDecoder;

TallySseDecoder *tally_sse_decoder_new       (TallySseEventFunc  func,
                                              gpointer           user_data);
void             tally_sse_decoder_free      (TallySseDecoder   *self);
void             tally_sse_decoder_feed      (TallySseDecoder   *self,
                                              const guint8      *data,
                                              gsize              len);
void             tally_sse_decoder_finish    (TallySseDecoder   *self);
void             tally_sse_decoder_reset     (TallySseDecoder   *self);
gint64           tally_sse_decoder_get_retry (TallySseDecoder   *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallySseDecoder, tally_sse_decoder_free)

G_END_DECLS
