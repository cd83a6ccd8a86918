/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-message-stream-private.h"

#include "tally-api-error.h"

/**
 * TallyMessageStream:
 *
 * Accumulates one streamed Messages API response (docs/protocol.md §9: the
 * event grammar, block and delta types and their handling; usage merging
 * in §10.1).
 *
 * One object stands for one logical API call across its HTTP attempts:
 * tally_message_stream_begin_attempt() starts afresh for each attempt,
 * tally_message_stream_feed() takes the body bytes as they arrive (it runs a
 * #TallySseDecoder and applies every event), and
 * tally_message_stream_end_of_input() tells whether a complete message
 * (ending with `message_stop`) arrived. The first failure is stored and ends
 * the attempt; later input is ignored.
 *
 * Content blocks are addressed by their `index`, so several may be open at
 * once and their deltas may interleave. The result is available through
 * tally_message_stream_dup_content(), which gives the blocks exactly as they
 * must be echoed to the API in the next request (docs/protocol.md §4).
 *
 * Signals report progress synchronously while events are applied.
 */

G_DEFINE_FINAL_TYPE (TallyMessageStream, tally_message_stream, G_TYPE_OBJECT)

guint tally_message_stream_signals[N_SIGNALS];

#define STATIC_STRING (G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE)

static void
decoder_event_cb (const TallySseEvent *event,
                  gpointer             user_data)
{
  TallyMessageStream *self = user_data;

  g_assert (TALLY_IS_MESSAGE_STREAM (self));

  if (self->error != NULL)
    return;

  /* The decoder hands on valid UTF-8 without NUL bytes, which the fast
   * path relies on. */
  if (self->fast_path &&
      tally_message_stream_apply_fast (self, event->event, event->data, event->data_len))
    return;

  tally_message_stream_apply_event (self, event->event, event->data, NULL);
}

/**
 * _tally_message_stream_set_fast_path:
 * @self: a #TallyMessageStream
 * @enabled: whether fed events are offered to the fast scanner first
 *
 * Turns the fast path (tally-message-stream-scan.c) on or off, so tests
 * and benchmarks can compare it with the json-glib path on the same input.
 * It is on by default. Private: the result must not depend on it.
 */
void
_tally_message_stream_set_fast_path (TallyMessageStream *self,
                                     gboolean            enabled)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  self->fast_path = !!enabled;
}

/**
 * _tally_message_stream_get_n_fast_events:
 * @self: a #TallyMessageStream
 *
 * Returns: the number of events the fast path applied (pings included)
 *   since @self was created, across attempts; lets a test check which
 *   path an input took
 */
guint64
_tally_message_stream_get_n_fast_events (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), 0);

  return self->n_fast_events;
}

/* Object */

static void
tally_message_stream_reset (TallyMessageStream *self)
{
  tally_sse_decoder_reset (self->decoder);
  g_clear_error (&self->error);
  g_clear_pointer (&self->error_type, g_free);
  g_clear_pointer (&self->message_id, g_free);
  g_clear_pointer (&self->model, g_free);
  g_clear_pointer (&self->stop_reason, g_free);
  g_clear_pointer (&self->stop_sequence, g_free);
  tally_message_stream_usage_init (&self->usage);
  g_ptr_array_set_size (self->blocks, 0);
  g_ptr_array_set_size (self->unknown_events, 0);
  self->started = FALSE;
  self->complete = FALSE;
}

static void
tally_message_stream_finalize (GObject *object)
{
  TallyMessageStream *self = (TallyMessageStream *)object;

  g_clear_pointer (&self->decoder, tally_sse_decoder_free);
  g_clear_object (&self->parser);
  g_clear_object (&self->input_parser);
  g_clear_error (&self->error);
  g_clear_pointer (&self->error_type, g_free);
  g_clear_pointer (&self->message_id, g_free);
  g_clear_pointer (&self->model, g_free);
  g_clear_pointer (&self->stop_reason, g_free);
  g_clear_pointer (&self->stop_sequence, g_free);
  g_clear_pointer (&self->blocks, g_ptr_array_unref);
  g_clear_pointer (&self->unknown_events, g_ptr_array_unref);
  if (self->scan_buffer != NULL)
    g_string_free (g_steal_pointer (&self->scan_buffer), TRUE);

  G_OBJECT_CLASS (tally_message_stream_parent_class)->finalize (object);
}

/* Every signal of the stream runs last, has no class handler and returns
 * nothing; they differ in name and parameters only. */
static guint
new_signal (TallyMessageStreamClass *klass,
            const char              *name,
            guint                    n_params,
            ...)
{
  va_list args;
  guint id;

  va_start (args, n_params);
  id = g_signal_new_valist (name, G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                            NULL, NULL, NULL, NULL, G_TYPE_NONE, n_params, args);
  va_end (args);

  return id;
}

static void
tally_message_stream_class_init (TallyMessageStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_message_stream_finalize;

  /**
   * TallyMessageStream::message-started:
   * @self: the #TallyMessageStream
   *
   * Emitted when the `message_start` event has been applied; the message id,
   * model and initial usage are then available.
   */
  tally_message_stream_signals[MESSAGE_STARTED] =
    new_signal (klass, "message-started", 0);

  /**
   * TallyMessageStream::block-started:
   * @self: the #TallyMessageStream
   * @index: the API's content block index (0-based)
   * @type: the block's `type`, e.g. "text", "thinking", "tool_use"
   *
   * Emitted when a `content_block_start` event has been applied.
   */
  tally_message_stream_signals[BLOCK_STARTED] =
    new_signal (klass, "block-started", 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::text-delta:
   * @self: the #TallyMessageStream
   * @index: the content block index of the text block
   * @text: the text appended by this `text_delta` (UTF-8, valid only
   *   during the emission)
   *
   * Emitted for every `text_delta`, after the text has been appended.
   */
  tally_message_stream_signals[TEXT_DELTA] =
    new_signal (klass, "text-delta", 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::thinking-delta:
   * @self: the #TallyMessageStream
   * @index: the content block index of the thinking block
   * @text: the `thinking` text appended by this `thinking_delta` (may be
   *   empty; valid only during the emission)
   *
   * Emitted for every `thinking_delta`, after the text has been appended.
   */
  tally_message_stream_signals[THINKING_DELTA] =
    new_signal (klass, "thinking-delta", 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::block-stopped:
   * @self: the #TallyMessageStream
   * @index: the content block index
   * @type: the block's `type`
   *
   * Emitted when a `content_block_stop` event has been applied; for tool
   * blocks the input has then been checked to be a JSON object.
   */
  tally_message_stream_signals[BLOCK_STOPPED] =
    new_signal (klass, "block-stopped", 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::message-stopped:
   * @self: the #TallyMessageStream
   *
   * Emitted when the `message_stop` event has been applied: the message is
   * complete.
   */
  tally_message_stream_signals[MESSAGE_STOPPED] =
    new_signal (klass, "message-stopped", 0);

  /**
   * TallyMessageStream::retry:
   * @self: the #TallyMessageStream
   * @attempt: the 1-based number of the attempt about to start (2 is the
   *   first retry)
   * @delay_ms: the wait before that attempt, in milliseconds
   * @status: the HTTP status of the failed attempt (200 for an `error`
   *   event inside a stream, 0 when no response arrived)
   * @error_type: (nullable): the API's `error.type` of the failure, if any
   *
   * Emitted by tally_message_stream_notify_retry() when the client decided
   * to retry the call.
   */
  tally_message_stream_signals[RETRY] =
    new_signal (klass, "retry", 4, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::attempt-finished:
   * @self: the #TallyMessageStream
   * @attempt: the 1-based number of the attempt that finished
   * @status: its HTTP status (0 when no response arrived)
   * @request_id: (nullable): the `request-id` response header
   * @duration_ms: the wall-clock time of the attempt in milliseconds
   * @error: (nullable): why the attempt failed, or %NULL when it succeeded
   *
   * Emitted by tally_message_stream_notify_attempt_finished() once per HTTP
   * attempt.
   */
  tally_message_stream_signals[ATTEMPT_FINISHED] =
    new_signal (klass, "attempt-finished", 5, G_TYPE_UINT, G_TYPE_UINT, STATIC_STRING,
                G_TYPE_INT64, G_TYPE_ERROR | G_SIGNAL_TYPE_STATIC_SCOPE);
}

static void
tally_message_stream_init (TallyMessageStream *self)
{
  self->decoder = tally_sse_decoder_new (decoder_event_cb, self);
  self->parser = json_parser_new ();
  self->input_parser = json_parser_new ();
  self->blocks = g_ptr_array_new_with_free_func (tally_message_stream_block_free);
  self->unknown_events = g_ptr_array_new_with_free_func (g_free);
  tally_message_stream_usage_init (&self->usage);
  self->fast_path = TRUE;
}

/**
 * tally_message_stream_new:
 *
 * Creates an accumulator for one logical API call. Call
 * tally_message_stream_begin_attempt() before feeding each HTTP attempt.
 *
 * Returns: (transfer full): a new #TallyMessageStream
 */
TallyMessageStream *
tally_message_stream_new (void)
{
  return g_object_new (TALLY_TYPE_MESSAGE_STREAM, NULL);
}

/**
 * tally_message_stream_begin_attempt:
 * @self: a #TallyMessageStream
 * @attempt: the 1-based number of the HTTP attempt that starts
 *
 * Forgets everything of the previous attempt — decoder state, message,
 * blocks, usage, stored error — and records @attempt.
 */
void
tally_message_stream_begin_attempt (TallyMessageStream *self,
                                    guint               attempt)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  tally_message_stream_reset (self);
  self->attempt = attempt;
}

/**
 * tally_message_stream_feed:
 * @self: a #TallyMessageStream
 * @data: (array length=len): the next bytes of a `text/event-stream` body
 * @len: the number of bytes
 *
 * Decodes @data and applies every complete event with
 * tally_message_stream_apply_event(). Signals are emitted synchronously.
 * After the first failure (see tally_message_stream_get_error()) the input
 * is ignored.
 */
void
tally_message_stream_feed (TallyMessageStream *self,
                           const guint8       *data,
                           gsize               len)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));
  g_return_if_fail (data != NULL || len == 0);

  if (self->error != NULL)
    return;

  tally_sse_decoder_feed (self->decoder, data, len);
}

/**
 * tally_message_stream_end_of_input:
 * @self: a #TallyMessageStream
 * @error: return location for a #GError
 *
 * Tells the accumulator that the body has ended. A last event that lacks
 * its terminating blank line is still applied (see tally_sse_decoder_finish());
 * when it cannot be applied, the body was cut inside that event and the
 * error is %TALLY_API_ERROR_INCOMPLETE, never %TALLY_API_ERROR_PROTOCOL.
 *
 * Returns: %TRUE when a complete message arrived (`message_stop` was
 *   applied) without error. Otherwise %FALSE with the stored error, or with
 *   %TALLY_API_ERROR_INCOMPLETE ("the stream ended before message_stop"),
 *   which is then stored, even when `message_delta` had arrived.
 */
gboolean
tally_message_stream_end_of_input (TallyMessageStream  *self,
                                   GError             **error)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->error == NULL)
    {
      tally_sse_decoder_finish (self->decoder);

      /* The last event had no terminating blank line. When it could not be
       * applied (typically JSON cut off in the middle), the connection was
       * cut inside an event: that is a cut stream, not a protocol
       * violation by the server (docs/protocol.md §9.2, §12.2). */
      if (g_error_matches (self->error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL))
        {
          g_autoptr(GError) cut = g_steal_pointer (&self->error);

          self->error = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE,
                                     "the stream ended in the middle of an event (%s)",
                                     cut->message);
        }
    }

  if (self->error == NULL && !self->complete)
    self->error = g_error_new_literal (TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE,
                                       "the stream ended before message_stop");

  if (self->error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->error));
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_message_stream_get_error:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the first failure of the current
 *   attempt (domain %TALLY_API_ERROR), or %NULL
 */
const GError *
tally_message_stream_get_error (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->error;
}

/**
 * tally_message_stream_get_error_type:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the API's `error.type` of a stored
 *   %TALLY_API_ERROR_STREAM error (e.g. "overloaded_error"), or %NULL
 */
const char *
tally_message_stream_get_error_type (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->error_type;
}

/**
 * tally_message_stream_get_attempt:
 * @self: a #TallyMessageStream
 *
 * Returns: the 1-based attempt number given to
 *   tally_message_stream_begin_attempt(), or 0 before the first one
 */
guint
tally_message_stream_get_attempt (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), 0);

  return self->attempt;
}

/**
 * tally_message_stream_has_content:
 * @self: a #TallyMessageStream
 *
 * Whether any `content_block_start` arrived in this attempt. A failure
 * after content must not be retried silently.
 *
 * Returns: %TRUE once a content block has started
 */
gboolean
tally_message_stream_has_content (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);

  return self->blocks->len > 0;
}

/**
 * tally_message_stream_is_complete:
 * @self: a #TallyMessageStream
 *
 * Returns: %TRUE when `message_stop` was applied in this attempt
 */
gboolean
tally_message_stream_is_complete (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);

  return self->complete;
}

/**
 * tally_message_stream_get_message_id:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `id` of `message_start`
 *   ("msg_…"), or %NULL
 */
const char *
tally_message_stream_get_message_id (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->message_id;
}

/**
 * tally_message_stream_get_model:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `model` of `message_start`, or
 *   %NULL
 */
const char *
tally_message_stream_get_model (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->model;
}

/**
 * tally_message_stream_get_stop_reason:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `stop_reason` of `message_delta`
 *   (e.g. "end_turn", "tool_use", "max_tokens", "refusal"; docs/protocol.md
 *   §9.3),
 *   or %NULL while none arrived
 */
const char *
tally_message_stream_get_stop_reason (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->stop_reason;
}

/**
 * tally_message_stream_get_stop_sequence:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `stop_sequence` of
 *   `message_delta` when the stop reason is "stop_sequence", else %NULL
 */
const char *
tally_message_stream_get_stop_sequence (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->stop_sequence;
}

/**
 * tally_message_stream_get_usage:
 * @self: a #TallyMessageStream
 *
 * Returns the token usage of this attempt: the `message_start` usage with
 * every field that `message_delta` carried overwritten (docs/protocol.md
 * §10.1).
 * Fields never reported are 0 (the cache_creation breakdown -1); @reported
 * says whether any usage object arrived.
 *
 * Returns: (transfer none): the usage, owned by @self
 */
const TallyUsage *
tally_message_stream_get_usage (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return &self->usage;
}

/**
 * tally_message_stream_get_n_blocks:
 * @self: a #TallyMessageStream
 *
 * Returns: the number of content blocks started, stopped or not
 */
guint
tally_message_stream_get_n_blocks (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), 0);

  return self->blocks->len;
}

static Block *
get_block (TallyMessageStream *self,
           guint               index)
{
  if (index >= self->blocks->len)
    return NULL;

  return g_ptr_array_index (self->blocks, index);
}

/**
 * tally_message_stream_get_block_type:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * Returns: (nullable) (transfer none): the block's `type`, or %NULL when
 *   there is no block @index
 */
const char *
tally_message_stream_get_block_type (TallyMessageStream *self,
                                     guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  block = get_block (self, index);
  return block ? block->type : NULL;
}

/**
 * tally_message_stream_block_is_stopped:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * Returns: %TRUE when block @index exists and its `content_block_stop`
 *   was applied
 */
gboolean
tally_message_stream_block_is_stopped (TallyMessageStream *self,
                                       guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);

  block = get_block (self, index);
  return block != NULL && block->stopped;
}

/**
 * tally_message_stream_dup_block_json:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * Returns one block as JSON text, in the form described for
 * tally_message_stream_dup_content(), also for blocks that have not
 * stopped yet (a debugging aid): an unstopped tool block shows `"input":{}`
 * and its raw input so far as a `"partial_json"` string.
 *
 * Returns: (nullable) (transfer full): the JSON text, or %NULL when there
 *   is no block @index
 */
char *
tally_message_stream_dup_block_json (TallyMessageStream *self,
                                     guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  block = get_block (self, index);
  return block ? tally_message_stream_block_to_json (block) : NULL;
}

/**
 * tally_message_stream_get_block_invalid_input:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * A stopped `tool_use` block whose input was valid JSON but not an object
 * (an array, a string, a number, `null`) does not fail the stream: its input
 * is echoed as `{}` and the text that arrived is kept here, so the agent can
 * answer the call with an error that says what was wrong. An object whose
 * strings hold a NUL character (`\u0000`), which a tool would read cut at
 * the NUL, is echoed as it arrived and kept here too.
 *
 * Returns: (transfer none) (nullable): the input JSON text as received, or
 *   %NULL when the block's input was a usable object (or @index is not a
 *   stopped `tool_use` block)
 */
const char *
tally_message_stream_get_block_invalid_input (TallyMessageStream *self,
                                              guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  block = get_block (self, index);
  return block != NULL ? block->invalid_input : NULL;
}

/**
 * tally_message_stream_dup_content:
 * @self: a #TallyMessageStream
 *
 * Returns the message content exactly as it must be echoed to the API as
 * the assistant turn of the next request (docs/protocol.md §4): one JSON
 * object text per stopped block, in index order. Blocks that never got their
 * `content_block_stop` (a cut stream, a `max_tokens` tool call) are left
 * out, and so are empty text blocks, which the API rejects.
 *
 * - text: `{"type":"text","text":…}`, plus `"citations":[…]` when any;
 * - thinking: `{"type":"thinking","thinking":…,"signature":…}`, the strings
 *   byte-exact (also when `thinking` is "");
 * - tool_use and server_tool_use: `{"type":…,"id":…,"name":…,"input":…}`
 *   where input is the concatenated `partial_json` exactly as received (or
 *   the start event's input, `{}`, when there was none), plus the start
 *   block's `"caller"` when it had one;
 * - redacted_thinking and every other block type: the `content_block` of
 *   the start event verbatim, or re-serialised with the fields of its
 *   deltas (e.g. `compaction_delta`) assigned.
 *
 * Returns: (transfer full) (element-type utf8): the block JSON texts; free
 *   with g_ptr_array_unref()
 */
GPtrArray *
tally_message_stream_dup_content (TallyMessageStream *self)
{
  GPtrArray *content;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  content = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);

      if (!block->stopped)
        continue;
      if (block->kind == BLOCK_TEXT && block->text->len == 0)
        continue;

      g_ptr_array_add (content, tally_message_stream_block_to_json (block));
    }

  return content;
}

/**
 * tally_message_stream_dup_unknown_events:
 * @self: a #TallyMessageStream
 *
 * Returns the data of the events of this attempt whose type is unknown,
 * in stream order, verbatim.
 *
 * Returns: (transfer full) (element-type utf8): JSON texts; free with
 *   g_ptr_array_unref()
 */
GPtrArray *
tally_message_stream_dup_unknown_events (TallyMessageStream *self)
{
  GPtrArray *events;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  events = g_ptr_array_new_full (self->unknown_events->len, g_free);
  for (guint i = 0; i < self->unknown_events->len; i++)
    g_ptr_array_add (events, g_strdup (g_ptr_array_index (self->unknown_events, i)));

  return events;
}

/**
 * tally_message_stream_notify_retry:
 * @self: a #TallyMessageStream
 * @attempt: the 1-based number of the attempt about to start
 * @delay_ms: the wait before it, in milliseconds
 * @status: the HTTP status of the failed attempt (200 for an `error` event
 *   inside a stream, 0 when no response arrived)
 * @error_type: (nullable): the API's `error.type` of the failure
 *
 * Emits #TallyMessageStream::retry. Called by the client.
 */
void
tally_message_stream_notify_retry (TallyMessageStream *self,
                                   guint               attempt,
                                   guint               delay_ms,
                                   guint               status,
                                   const char         *error_type)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  g_signal_emit (self, tally_message_stream_signals[RETRY], 0, attempt, delay_ms, status, error_type);
}

/**
 * tally_message_stream_notify_attempt_finished:
 * @self: a #TallyMessageStream
 * @status: the HTTP status of the attempt (0 when no response arrived)
 * @request_id: (nullable): its `request-id` response header
 * @duration_ms: its wall-clock duration in milliseconds
 * @error: (nullable): why it failed, or %NULL on success
 *
 * Emits #TallyMessageStream::attempt-finished with the current attempt
 * number. Called by the client once per HTTP attempt.
 */
void
tally_message_stream_notify_attempt_finished (TallyMessageStream *self,
                                              guint               status,
                                              const char         *request_id,
                                              gint64              duration_ms,
                                              const GError       *error)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  g_signal_emit (self, tally_message_stream_signals[ATTEMPT_FINISHED], 0,
                 self->attempt, status, request_id, duration_ms, error);
}
