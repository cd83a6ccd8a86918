/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include <string.h>

#include "tally-agent-private.h"
#include "tally-api-error.h"
#include "tally-enums.h"
#include "tally-json.h"
#include "tally-model-table.h"
#include "tally-pg-source.h"
#include "tally-pricing.h"

/* The turn loop (docs/architecture.md §5): sending, streaming each API call,
 * and ending the turn. Tool calls are in tally-agent-tools.c. */

static void
turn_free (gpointer data)
{
  Turn *turn = data;

  g_free (turn->turn_id);
  g_free (turn->thinking_json);
  g_free (turn->system_prompt);
  g_free (turn->tools_json);
  g_free (turn->context.database_path);
  g_free (turn->context.workspace);
  g_strfreev (turn->context.sensitive_columns);
  g_free (turn->last_request_id);
  g_clear_handle_id (&turn->pending_timeout, g_source_remove);
  g_free (turn->pending_id);
  g_clear_pointer (&turn->pending_suggestions, json_array_unref);
  if (turn->redirect != NULL)
    g_string_free (turn->redirect, TRUE);
  g_clear_object (&turn->cancellable);
  g_clear_object (&turn->stream);
  g_clear_pointer (&turn->tool_uses, g_ptr_array_unref);
  g_clear_pointer (&turn->answered, g_hash_table_unref);
  g_clear_pointer (&turn->orphans, g_hash_table_unref);
  g_clear_pointer (&turn->refusals, g_hash_table_unref);
  g_clear_pointer (&turn->duplicates, g_hash_table_unref);
  g_free (turn);
}
/* Events */

/**
 * tally_agent_emit_event:
 * @self: a #TallyAgent
 * @turn_id: (nullable): the UUID of the turn the event belongs to; %NULL
 *   only for an event outside any turn (docs/architecture.md §4.1)
 * @fields: (transfer full): the event's type and fields, from
 *   tally_event_new() or one of the event constructors
 *
 * Numbers (the session's next `seq`), stamps (time, session and turn,
 * tally_event_stamp()) and emits an event through #TallyAgent::event,
 * which the session records in its log and the transcript folds. Every
 * event of a session goes this way: the turn's own, and those written
 * outside a turn, such as the repairs of a turn Tally stopped in the
 * middle of (tally-session.c). Main thread only.
 */
void
tally_agent_emit_event (TallyAgent *self,
                        const char *turn_id,
                        JsonObject *fields)
{
  g_autoptr(JsonObject) event = NULL;

  event = tally_event_stamp (fields, self->next_seq++, g_get_real_time (),
                             self->session_id, turn_id);
  json_object_unref (fields);

  g_signal_emit (self, tally_agent_signals[EVENT], 0, event);
}

static void
set_usage_member (JsonObject       *event,
                  const TallyUsage *usage)
{
  tally_event_set_usage (event, "usage",
                         usage->input_tokens, usage->output_tokens,
                         usage->cache_creation_input_tokens,
                         usage->cache_read_input_tokens);
}

static void
emit_last_message_changed (TallyAgent *self)
{
  guint n = tally_conversation_get_n_messages (self->conversation);

  if (n > 0)
    g_signal_emit (self, tally_agent_signals[MESSAGE_CHANGED], 0, n - 1);
}

/* Turn end */

/* @origin (nullable): where a query result's columns came from
 * (docs/ledger.md §1), kept in the event and for the ledger. */
void
tally_agent_emit_tool_result (GTask      *task,
                  const char *tool_id,
                  const char *content,
                  gboolean    is_error,
                  gint64      duration_ms,
                  JsonObject *origin)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_TOOL_RESULT);

  json_object_set_string_member (event, "tool_id", tool_id);
  json_object_set_string_member (event, "content", content);
  json_object_set_boolean_member (event, "is_error", is_error);
  json_object_set_int_member (event, "duration_ms", duration_ms);
  if (origin != NULL)
    {
      json_object_set_object_member (event, "origin", json_object_ref (origin));
      tally_agent_ledger_note_origin (turn_agent (task), tool_id, origin);
    }
  turn_emit (task, event);

  g_hash_table_add (turn->answered, g_strdup (tool_id));
}

void
tally_agent_finish_turn (GTask           *task,
             TallyTurnStatus  status,
             GError          *error)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GPtrArray) pending = NULL;
  g_autoptr(GError) owned_error = error;
  JsonObject *event;
  double cost = 0;
  gboolean priced;

  /* Leave the conversation valid: every tool_use of the last message gets a
   * result now, in the log as in the history, saying what happened. */
  pending = tally_conversation_dup_pending_tool_uses (self->conversation);
  for (guint i = 0; i < pending->len; i++)
    {
      JsonObject *block = g_ptr_array_index (pending, i);
      const char *id = json_object_get_string_member_with_default (block, "id", "");
      TallyOrphanReason reason = GPOINTER_TO_INT (g_hash_table_lookup (turn->orphans, id));
      g_autofree char *message = tally_conversation_orphan_message (reason);

      tally_conversation_add_tool_result (self->conversation, id, message, TRUE);
      if (!g_hash_table_contains (turn->answered, id))
        tally_agent_emit_tool_result (task, id, message, TRUE, 0, NULL);
    }
  if (pending->len > 0)
    emit_last_message_changed (self);

  if (turn->stream != NULL)
    g_signal_handlers_disconnect_matched (turn->stream, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, task);
  if (turn->cancelled_handler != 0)
    g_cancellable_disconnect (turn->cancellable, turn->cancelled_handler);
  turn->cancelled_handler = 0;
  g_clear_handle_id (&turn->pending_timeout, g_source_remove);
  turn->pending_kind = PENDING_NONE;

  /* Text typed during the turn that never went out with tool results is
   * handed back for the next prompt. */
  if (turn->redirect != NULL && turn->redirect->len > 0)
    {
      g_free (self->pending_redirect);
      self->pending_redirect = g_string_free (g_steal_pointer (&turn->redirect), FALSE);
    }

  /* A failure reported from outside the loop (the store could not keep
   * the turn) ends it failed, with its own error event. */
  g_signal_emit (self, tally_agent_signals[TURN_ENDING], 0);
  if (self->failure != NULL)
    {
      event = tally_event_new_error (self->failure_kind, self->failure->message, FALSE, NULL);
      turn_emit (task, event);

      if (status != TALLY_TURN_FAILED || owned_error == NULL)
        {
          g_clear_error (&owned_error);
          owned_error = g_error_copy (self->failure);
        }
      status = TALLY_TURN_FAILED;
      g_clear_error (&self->failure);
      g_clear_pointer (&self->failure_kind, g_free);
    }

  priced = tally_pricing_compute_cost (self->model, &turn->usage, &cost);

  event = tally_event_new_turn_finished (status, priced, cost,
                                         (g_get_monotonic_time () - turn->started_us) / 1000,
                                         turn->api_calls);
  json_object_set_int_member (event, "failed_calls", turn->failed_calls);
  set_usage_member (event, &turn->usage);
  turn_emit (task, event);

  if (priced)
    self->spent_usd += cost;
  self->turn_task = NULL;
  /* The running turn's cost moved into spent_usd: "spent" is unchanged. */
  tally_agent_set_last_mode (self, turn->mode);
  g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_BUSY]);

  if (status == TALLY_TURN_FAILED)
    {
      if (owned_error == NULL)
        owned_error = g_error_new_literal (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL, "The turn failed");
      g_task_return_error (task, g_steal_pointer (&owned_error));
    }
  else
    g_task_return_int (task, status);
}

static void
fail_turn (GTask        *task,
           const char   *kind,
           const GError *error,
           gboolean      retryable,
           const char   *request_id)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event;
  g_autofree char *message = NULL;

  /* A refused key says so plainly (docs/protocol.md §12.2); the faces add
   * how to change it. */
  if (g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_AUTHENTICATION) ||
      g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_PERMISSION))
    message = g_strdup_printf ("The Messages API refused the API key (HTTP %u): %s",
                               turn->last_status != 0 ? turn->last_status
                               : error->code == TALLY_API_ERROR_AUTHENTICATION ? 401 : 403,
                               error->message);

  event = tally_event_new_error (kind, message != NULL ? message : error->message, retryable, request_id);
  if (g_str_equal (kind, "http") && turn->last_status != 0)
    json_object_set_int_member (event, "status", turn->last_status);
  /* Whether the server answered at all: a cut reply, or no way through. */
  if (g_str_equal (kind, "network"))
    json_object_set_boolean_member (event, "connected", turn->call_answered);
  /* How many times the failed request was sent (docs/protocol.md §11.4):
   * the faces say "tried N times" only when it was retried. Only a failed
   * API request ends here, so at least one attempt began. */
  json_object_set_int_member (event, "attempts", MAX (turn->call_attempts, 1));
  turn_emit (task, event);

  tally_agent_finish_turn (task, TALLY_TURN_FAILED, g_error_copy (error));
}
/**
 * tally_agent_fail_turn:
 * @self: a #TallyAgent
 * @kind: the `kind` of the `error` event, such as `store`
 * @error: what went wrong; its message becomes the event's `message`
 *
 * Ends the running turn as failed, at its next step: before the next tool
 * call or API request, or in place of ending it `done` or `cancelled`. A
 * stream is never cut and every `tool_use` still gets its result; the turn
 * then emits an `error` event of @kind and `turn_finished` with the status
 * `failed`, and tally_agent_send_finish() returns a copy of @error. Used by
 * the session when the store cannot keep the turn (docs/architecture.md
 * §10.7). The first failure reported for a turn is the one kept.
 *
 * Returns: %TRUE when a turn was running; %FALSE (and nothing recorded)
 *   otherwise
 */
gboolean
tally_agent_fail_turn (TallyAgent   *self,
                       const char   *kind,
                       const GError *error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);
  g_return_val_if_fail (kind != NULL, FALSE);
  g_return_val_if_fail (error != NULL, FALSE);

  if (self->turn_task == NULL)
    return FALSE;

  if (self->failure == NULL)
    {
      self->failure = g_error_copy (error);
      self->failure_kind = g_strdup (kind);
    }
  return TRUE;
}

static gboolean
cancel_pending_idle_cb (gpointer user_data)
{
  g_autoptr(TallyAgent) self = user_data;

  tally_agent_cancel_pending (self);
  return G_SOURCE_REMOVE;
}

static void
turn_cancelled_cb (GCancellable *cancellable,
                   TallyAgent   *self)
{
  /* Cancellation may be signalled from inside another callback; settle
   * the card from the main loop instead. */
  g_idle_add (cancel_pending_idle_cb, g_object_ref (self));
}
/* Streaming */

/* Emits a streaming event of @type for content block @index of the current
 * call, with @member set to @value (a delta's text, a finished block's kind). */
static void
emit_block_event (GTask          *task,
                  TallyEventType  type,
                  guint           index,
                  const char     *member,
                  const char     *value)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (type);

  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "block", index);
  json_object_set_string_member (event, member, value);
  turn_emit (task, event);
}

static void
stream_text_delta_cb (TallyMessageStream *stream,
                      guint               index,
                      const char         *text,
                      GTask              *task)
{
  emit_block_event (task, TALLY_EVENT_TEXT_DELTA, index, "text", text);
}

static void
stream_thinking_delta_cb (TallyMessageStream *stream,
                          guint               index,
                          const char         *text,
                          GTask              *task)
{
  emit_block_event (task, TALLY_EVENT_THINKING_DELTA, index, "text", text);
}

static void
emit_block_done (GTask      *task,
                 guint       index,
                 const char *kind)
{
  emit_block_event (task, TALLY_EVENT_BLOCK_DONE, index, "kind", kind);
}

static void
stream_block_stopped_cb (TallyMessageStream *stream,
                         guint               index,
                         const char         *type,
                         GTask              *task)
{
  /* A tool_use block is announced only once its message completed: a reply
   * cut later must leave no trace of a tool call beyond its deltas. */
  if (g_str_equal (type, "tool_use") || g_str_equal (type, "server_tool_use"))
    return;

  emit_block_done (task, index, type);
}

static void
stream_retry_cb (TallyMessageStream *stream,
                 guint               attempt,
                 guint               delay_ms,
                 guint               status,
                 const char         *error_type,
                 GTask              *task)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_RETRY);

  /* An attempt that gets no response reports no attempt-finished; the
   * retry that starts it is how the turn learns of it. */
  turn->call_attempts = MAX (turn->call_attempts, attempt);

  json_object_set_int_member (event, "attempt", attempt);
  json_object_set_int_member (event, "delay_ms", delay_ms);
  json_object_set_int_member (event, "status", status);
  tally_json_object_set_string_or_null (event, "error_type", error_type);
  turn_emit (task, event);
}

static void
stream_attempt_finished_cb (TallyMessageStream *stream,
                            guint               attempt,
                            guint               status,
                            const char         *request_id,
                            gint64              duration_ms,
                            GError             *error,
                            GTask              *task)
{
  Turn *turn = g_task_get_task_data (task);
  const TallyUsage *usage = tally_message_stream_get_usage (stream);
  const char *stop_reason = tally_message_stream_get_stop_reason (stream);
  const char *model = tally_message_stream_get_model (stream);
  JsonObject *event = tally_event_new (TALLY_EVENT_API_CALL);

  if (usage->reported)
    {
      TallyAgent *self = g_task_get_source_object (task);
      double spent = tally_agent_get_spent (self);

      tally_usage_add (&turn->usage, usage);
      if (tally_agent_get_spent (self) != spent)
        g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_SPENT]);
    }
  g_free (turn->last_request_id);
  turn->last_request_id = g_strdup (request_id);
  turn->last_status = status;
  turn->call_attempts = MAX (turn->call_attempts, attempt);
  if (status != 0)
    turn->call_answered = TRUE;

  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "attempt", attempt);
  tally_json_object_set_string_or_null (event, "request_id", request_id);
  json_object_set_string_member (event, "model",
                                 model != NULL ? model : turn_agent (task)->model);
  json_object_set_int_member (event, "status", status);
  set_usage_member (event, usage);
  tally_json_object_set_string_or_null (event, "stop_reason", stop_reason);
  json_object_set_int_member (event, "duration_ms", duration_ms);
  turn_emit (task, event);
}

/* Words for the model about a tool input that was JSON but not an object. */
static char *
invalid_input_message (const char *name,
                       const char *raw)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *excerpt = NULL;
  g_autofree char *head = NULL;
  const char *what = "not an object";

  if (json_parser_load_from_data (parser, raw, -1, NULL) && json_parser_get_root (parser) != NULL)
    {
      JsonNode *root = json_parser_get_root (parser);

      /* An object is refused for a NUL character in one of its strings
       * (tally_message_stream_get_block_invalid_input()). */
      if (JSON_NODE_HOLDS_OBJECT (root))
        return g_strdup_printf ("The input of %s holds a NUL character (\\u0000) in a string, which "
                                "Tally's tools cannot take without cutting the string there. The call "
                                "did not run; call the tool again without it.", name);
      if (JSON_NODE_HOLDS_ARRAY (root))
        what = "an array";
      else if (JSON_NODE_HOLDS_NULL (root))
        what = "null";
      else if (json_node_get_value_type (root) == G_TYPE_STRING)
        what = "a string";
      else if (json_node_get_value_type (root) == G_TYPE_BOOLEAN)
        what = "a boolean";
      else
        what = "a number";
    }

  if (g_utf8_strlen (raw, -1) > 200)
    {
      head = g_utf8_substring (raw, 0, 200);
      excerpt = g_strconcat (head, "…", NULL);
    }
  else
    excerpt = g_strdup (raw);
  g_strstrip (excerpt);

  return g_strdup_printf ("The input of %s must be a JSON object with named arguments, but it was %s: %s. "
                          "The call did not run; call the tool again with an object as its input.",
                          name, what, excerpt);
}

/* Looks at the tool_use blocks of a completed message before it enters the
 * conversation (docs/protocol.md §5.4): a call whose id the conversation
 * already has gets a fresh id, and such calls and calls whose input was not
 * a JSON object are noted in turn->refusals, to be answered with an error
 * instead of run. @content is changed in place. */
static void
check_tool_uses (GTask     *task,
                 GPtrArray *content)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GArray) stream_blocks = g_array_new (FALSE, FALSE, sizeof (guint));
  guint nth = 0;

  g_hash_table_remove_all (turn->refusals);
  g_clear_pointer (&turn->duplicates, g_hash_table_unref);

  /* dup_content keeps stopped blocks in order, so the Nth tool_use in
   * @content is the Nth stopped tool_use block of the stream. */
  for (guint i = 0; i < tally_message_stream_get_n_blocks (turn->stream); i++)
    if (g_strcmp0 (tally_message_stream_get_block_type (turn->stream, i), "tool_use") == 0 &&
        tally_message_stream_block_is_stopped (turn->stream, i))
      g_array_append_val (stream_blocks, i);

  turn->duplicates = tally_conversation_dedup_new_tool_uses (self->conversation, content);

  for (guint i = 0; i < content->len; i++)
    {
      g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (content, i));
      const char *invalid = NULL;
      const char *original;
      const char *id;
      const char *name;

      if (block == NULL)
        continue;

      if (nth < stream_blocks->len)
        invalid = tally_message_stream_get_block_invalid_input (turn->stream,
                                                                g_array_index (stream_blocks, guint, nth));
      nth++;

      id = json_object_get_string_member_with_default (block, "id", "");
      name = json_object_get_string_member_with_default (block, "name", "");
      original = g_hash_table_lookup (turn->duplicates, id);
      if (original != NULL && *original == '\0')
        g_hash_table_insert (turn->refusals, g_strdup (id),
                             g_strdup_printf ("This call had an empty id. Tool call ids must be unique and "
                                              "not empty, so Tally gave it the id “%s” and did not run it. "
                                              "Make the call again if you still need its result.", id));
      else if (original != NULL)
        g_hash_table_insert (turn->refusals, g_strdup (id),
                             g_strdup_printf ("This call reused the id “%s” of an earlier tool call. Tool "
                                              "call ids must be unique, so Tally renamed this one “%s” and "
                                              "did not run it. Make the call again if you still need its "
                                              "result.", original, id));
      else if (invalid != NULL)
        g_hash_table_insert (turn->refusals, g_strdup (id), invalid_input_message (name, invalid));
    }
}

static void
stream_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) content = NULL;
  const char *stop_reason;
  gboolean has_tool_use = FALSE;

  if (!tally_client_stream_finish (TALLY_CLIENT (object), result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          tally_agent_finish_turn (task, TALLY_TURN_CANCELLED, NULL);
          return;
        }

      /* The partial reply is never echoed: only a message that reached
       * message_stop enters the conversation. A call the server answered
       * still counts on the receipt. */
      if (turn->call_answered)
        turn->failed_calls = 1;
      fail_turn (task, tally_api_error_get_kind (error), error,
                 tally_api_error_is_retryable (error), turn->last_request_id);
      return;
    }

  turn->api_calls++;
  stop_reason = tally_message_stream_get_stop_reason (turn->stream);
  content = tally_message_stream_dup_content (turn->stream);
  check_tool_uses (task, content);
  /* A refusal's partial output is shown and kept in the log, but never
   * echoed to the API (docs/protocol.md §9.3): the next prompt joins the
   * refused one, and the history is otherwise replayed as it is. */
  if (g_strcmp0 (stop_reason, "refusal") != 0)
    {
      tally_conversation_append_assistant (self->conversation, content);
      if (content->len > 0)
        emit_last_message_changed (self);
    }

  for (guint i = 0; i < tally_message_stream_get_n_blocks (turn->stream); i++)
    {
      const char *type = tally_message_stream_get_block_type (turn->stream, i);

      if ((g_strcmp0 (type, "tool_use") == 0 || g_strcmp0 (type, "server_tool_use") == 0) &&
          tally_message_stream_block_is_stopped (turn->stream, i))
        {
          emit_block_done (task, i, type);
          if (g_str_equal (type, "tool_use"))
            has_tool_use = TRUE;
        }
    }

  /* `tool_use` without a tool_use block to answer has nothing to run: a
   * further call would end the request with the assistant's message, a
   * prefill the API refuses. It ends the turn as any other stop does. */
  if (g_strcmp0 (stop_reason, "tool_use") == 0 && has_tool_use)
    {
      tally_agent_start_tools (g_steal_pointer (&task), content);
      return;
    }

  tally_agent_finish_turn (task, TALLY_TURN_DONE, NULL);
}

/* Ends the turn before a call because the session reached its spend cap. */
static void
stop_for_budget (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  double spent = tally_agent_get_spent (self);
  double cap = tally_agent_get_max_cost (self);
  g_autoptr(GError) error = NULL;
  JsonObject *event;

  error = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_BUDGET,
                       "This session has cost $%.4f, which reached its spend cap of $%.4f, so Tally "
                       "stopped before the next API call. Nothing more was sent.", spent, cap);

  event = tally_event_new_error ("budget", error->message, FALSE, NULL);
  json_object_set_double_member (event, "spent_usd", spent);
  json_object_set_double_member (event, "max_cost_usd", cap);
  turn_emit (task, event);

  tally_agent_finish_turn (task, TALLY_TURN_FAILED, g_steal_pointer (&error));
}

void
tally_agent_start_call (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GBytes) body = NULL;

  if (turn->stream != NULL)
    g_signal_handlers_disconnect_matched (turn->stream, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, task);
  g_clear_object (&turn->stream);
  turn->call_answered = FALSE;
  turn->call_attempts = 0;

  turn->stream = tally_message_stream_new ();
  g_signal_connect (turn->stream, "text-delta", G_CALLBACK (stream_text_delta_cb), task);
  g_signal_connect (turn->stream, "thinking-delta", G_CALLBACK (stream_thinking_delta_cb), task);
  g_signal_connect (turn->stream, "block-stopped", G_CALLBACK (stream_block_stopped_cb), task);
  g_signal_connect (turn->stream, "retry", G_CALLBACK (stream_retry_cb), task);
  g_signal_connect (turn->stream, "attempt-finished", G_CALLBACK (stream_attempt_finished_cb), task);

  emit_last_message_changed (self);

  /* A failure reported from outside (the store cannot keep the turn,
   * tally_agent_fail_turn()) ends the turn before its next request: nothing
   * is sent, and paid for, that could not be kept. */
  if (self->failure != NULL)
    {
      tally_agent_finish_turn (task, TALLY_TURN_FAILED, NULL);
      return;
    }

  /* The spend cap is checked before each call, never during one: a stream
   * is never cut for it, and every tool_use is answered by now. */
  if (tally_agent_get_max_cost (self) > 0 && tally_agent_get_spent (self) >= tally_agent_get_max_cost (self))
    {
      stop_for_budget (task);
      return;
    }

  body = tally_conversation_build_request (self->conversation, self->model, self->max_tokens,
                                           turn->system_prompt, turn->tools_json,
                                           turn->thinking_json);
  tally_agent_ledger_emit (task, body);

  tally_client_stream_async (self->client, body, turn->stream,
                             g_task_get_cancellable (task),
                             stream_done_cb, task);
}

/* Sending */

static char *
make_title (const char *text)
{
  g_autofree char *first_line = NULL;
  const char *newline = strchr (text, '\n');
  glong len;

  first_line = newline != NULL ? g_strndup (text, newline - text) : g_strdup (text);
  g_strstrip (first_line);
  len = g_utf8_strlen (first_line, -1);
  if (len <= 60)
    return g_steal_pointer (&first_line);

  {
    const char *cut = g_utf8_offset_to_pointer (first_line, 59);
    g_autofree char *head = g_strndup (first_line, cut - first_line);
    char *space = strrchr (head, ' ');

    if (space != NULL && space - head > 30)
      *space = '\0';
    return g_strconcat (head, "…", NULL);
  }
}
/* Whether the history ends with the analyst's message, so it can be sent
 * again as it is. */
static gboolean
can_retry (TallyAgent *self)
{
  guint n = tally_conversation_get_n_messages (self->conversation);

  return n > 0 && g_strcmp0 (tally_conversation_get_role (self->conversation, n - 1), "user") == 0;
}

/**
 * tally_agent_send_async:
 * @self: a #TallyAgent
 * @request: the turn's message, mode and thinking, and the failed turn it
 *   runs again, if any (see #TallyTurnRequest; thinking is sent in the form
 *   the model takes, see tally_model_table_dup_thinking_json())
 * @cancellable: (nullable): cancels the turn at any phase
 * @callback: called when the turn has ended
 * @user_data: data for @callback
 *
 * Runs one turn: emits `turn_started` (and `session_created` on the first
 * turn of a new session), then the API calls and tool runs of the agent loop,
 * and ends with `turn_finished`. Only one turn runs at a time.
 *
 * With a `retry_of`, the failed turn runs again in place
 * (docs/architecture.md §4.2): the new turn's `turn_started` carries
 * `retry_of`, and the conversation is sent as the failed turn left it (its
 * prompt and any tool results) without a new user message. Finish with
 * tally_agent_send_finish(); it fails with %G_IO_ERROR_BUSY while a turn
 * runs and, for a retry, with %G_IO_ERROR_INVALID_ARGUMENT when the
 * conversation does not end with the analyst's message (nothing failed, or
 * the reply was complete).
 */
void
tally_agent_send_async (TallyAgent             *self,
                        const TallyTurnRequest *request,
                        GCancellable           *cancellable,
                        GAsyncReadyCallback     callback,
                        gpointer                user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *reminder = NULL;
  g_autofree char *notes_reminder = NULL;
  g_auto(GStrv) sensitive = NULL;
  GError *notes_error = NULL;
  JsonObject *event;
  Turn *turn;

  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (request != NULL && request->text != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_agent_send_async);
  /* A cancelled turn still ends normally, with its receipt and status
   * "cancelled", so the task must not turn its result into an error. */
  g_task_set_check_cancellable (task, FALSE);

  if (self->turn_task != NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_BUSY,
                               "A turn is already running in this session");
      return;
    }

  if (request->retry_of != NULL && !can_retry (self))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               "There is no failed turn to retry in this session");
      return;
    }

  if (g_utf8_strlen (request->text, -1) == 0 || !g_utf8_validate (request->text, -1, NULL))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               "The message is empty or not valid UTF-8");
      return;
    }

  /* The analyst's notes: fixed in the system prompt when the session
   * starts, a reminder with this message when they changed since
   * (docs/notes.md). */
  if (!tally_agent_check_notes (self, &notes_reminder, &notes_error))
    {
      g_task_return_error (task, notes_error);
      return;
    }

  /* The columns whose values never reach the model (docs/ledger.md §2). */
  if (!tally_agent_dup_turn_sensitive (self, &sensitive, &notes_error))
    {
      g_task_return_error (task, notes_error);
      return;
    }

  turn = g_new0 (Turn, 1);
  turn->turn_id = g_uuid_string_random ();
  turn->mode = request->mode;
  turn->thinking = request->thinking;
  turn->thinking_json = tally_model_table_dup_thinking_json (self->model, request->thinking,
                                                             self->thinking_budget,
                                                             self->max_tokens,
                                                             &turn->budget_used);
  turn->system_prompt = tally_agent_dup_system_prompt (self);
  turn->tools_json = tally_tool_registry_dup_tools_json (self->tools);
  turn->context.database_path = g_strdup (self->database);
  turn->context.workspace = g_strdup (self->workspace);
  turn->context.sensitive_columns = g_steal_pointer (&sensitive);
  turn->started_us = g_get_monotonic_time ();
  turn->usage.cache_creation_5m = -1;
  turn->usage.cache_creation_1h = -1;
  turn->answered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  turn->orphans = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  turn->refusals = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_task_set_task_data (task, turn, turn_free);

  self->turn_task = task;
  g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_BUSY]);
  g_clear_pointer (&self->pending_redirect, g_free);
  if (cancellable != NULL)
    {
      turn->cancellable = g_object_ref (cancellable);
      turn->cancelled_handler = g_cancellable_connect (cancellable, G_CALLBACK (turn_cancelled_cb),
                                                       self, NULL);
    }

  if (!self->session_announced)
    {
      g_autofree char *title = make_title (request->text);

      self->session_announced = TRUE;
      event = tally_event_new (TALLY_EVENT_SESSION_CREATED);
      json_object_set_string_member (event, "title", title);
      json_object_set_string_member (event, "model", self->model);
      tally_json_object_set_string_or_null (event, "notes", self->notes_prompt);
      tally_json_object_set_string_or_null (event, "workspace", self->workspace);
      if (self->database != NULL)
        {
          /* The session never keeps a password (docs/postgresql.md). */
          g_autofree char *stored = tally_pg_database_key (self->database);

          json_object_set_string_member (event, "database", stored);
        }
      else
        json_object_set_null_member (event, "database");
      tally_agent_emit_event (self, NULL, event);
    }

  event = tally_event_new (TALLY_EVENT_TURN_STARTED);
  json_object_set_string_member (event, "mode", tally_mode_to_string (request->mode));
  json_object_set_boolean_member (event, "thinking", request->thinking);
  json_object_set_int_member (event, "budget_tokens", turn->budget_used);
  json_object_set_string_member (event, "model", self->model);
  json_object_set_string_member (event, "text", request->text);
  tally_json_object_set_string_unless_null (event, "retry_of", request->retry_of);
  if (notes_reminder != NULL)
    json_object_set_string_member (event, "notes", self->notes_told != NULL ? self->notes_told : "");
  turn_emit (task, event);

  /* A previous turn that was cancelled or crashed may have left tool calls
   * unanswered; answer them before anything else is sent. */
  tally_conversation_repair (self->conversation, NULL);

  /* A retry sends the failed turn's prompt again, which the history still
   * ends with (an incomplete reply is never echoed). */
  if (request->retry_of == NULL)
    tally_conversation_add_user_text (self->conversation, request->text);
  reminder = tally_agent_mode_reminder (request->mode, self->last_mode);
  if (reminder != NULL)
    tally_conversation_add_user_text (self->conversation, reminder);
  if (notes_reminder != NULL)
    tally_conversation_add_user_text (self->conversation, notes_reminder);

  tally_agent_start_call (g_steal_pointer (&task));
}

/**
 * tally_agent_send_finish:
 * @self: a #TallyAgent
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes a turn started with tally_agent_send_async().
 *
 * Returns: %TALLY_TURN_DONE or %TALLY_TURN_CANCELLED; %TALLY_TURN_FAILED
 *   with @error set (a %TALLY_API_ERROR for API failures, %G_IO_ERROR_BUSY
 *   when a turn was already running, %G_IO_ERROR_INVALID_ARGUMENT for an
 *   empty message)
 */
TallyTurnStatus
tally_agent_send_finish (TallyAgent    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), TALLY_TURN_FAILED);
  g_return_val_if_fail (g_task_is_valid (result, self), TALLY_TURN_FAILED);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_agent_send_async,
                        TALLY_TURN_FAILED);

  return tally_turn_status_propagate (G_TASK (result), error);
}
