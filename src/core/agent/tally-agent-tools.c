/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include "tally-agent-private.h"
#include "tally-enums.h"
#include "tally-gate.h"
#include "tally-json.h"
#include "tally-questions.h"

/* Tool calls of a turn (docs/architecture.md §5, §6): each tool_use goes
 * through the gate, runs, or waits on an approval or question card. */

/* Tools */

/* The tools Tally answers itself, on a card of their own, with checks of
 * their own: no approval decision is recorded for them. */
static gboolean
answers_itself (const char *name)
{
  return g_str_equal (name, "AskUserQuestion") || g_str_equal (name, "ExitPlanMode");
}

static void run_next_tool (GTask *task);
static void deliver_redirect (GTask *task);

static void
emit_approval_resolved (GTask         *task,
                        const char    *approval_id,
                        const char    *tool_id,
                        TallyDecision  decision,
                        const char    *reason,
                        const char    *message,
                        JsonObject    *extra)
{
  JsonObject *event = tally_event_new (TALLY_EVENT_APPROVAL_RESOLVED);

  tally_json_object_set_string_or_null (event, "approval_id", approval_id);
  json_object_set_string_member (event, "tool_id", tool_id);
  json_object_set_string_member (event, "decision", tally_decision_to_string (decision));
  if (extra != NULL)
    {
      GList *members = json_object_get_members (extra);

      for (const GList *l = members; l != NULL; l = l->next)
        json_object_set_member (event, l->data, json_node_copy (json_object_get_member (extra, l->data)));
      g_list_free (members);
    }
  tally_json_object_set_string_unless_null (event, "message", message);
  json_object_set_string_member (event, "reason", reason);
  turn_emit (task, event);
}

static void
tool_answered_full (GTask      *task,
                    const char *tool_id,
                    const char *content,
                    gboolean    is_error,
                    JsonObject *origin)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  gint64 duration_ms = 0;

  if (turn->tool_started_us > 0)
    duration_ms = (g_get_monotonic_time () - turn->tool_started_us) / 1000;
  turn->tool_started_us = 0;

  tally_conversation_add_tool_result (self->conversation, tool_id, content, is_error);
  tally_agent_emit_tool_result (task, tool_id, content, is_error, duration_ms, origin);
}

static void
tool_answered (GTask      *task,
               const char *tool_id,
               const char *content,
               gboolean    is_error)
{
  tool_answered_full (task, tool_id, content, is_error, NULL);
}

static JsonObject *
current_tool_use (Turn *turn)
{
  return g_ptr_array_index (turn->tool_uses, turn->tool_index);
}

static const char *
current_tool_id (Turn *turn)
{
  return json_object_get_string_member_with_default (current_tool_use (turn), "id", "");
}

/* Answers the current call without running it, and moves on. */
static void
refuse_current (GTask      *task,
                const char *message)
{
  Turn *turn = g_task_get_task_data (task);

  tool_answered (task, current_tool_id (turn), message, TRUE);
  turn->tool_index++;
  run_next_tool (task);
}

static void
tool_run_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Turn *turn = g_task_get_task_data (task);
  const char *id = current_tool_id (turn);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) artifact = NULL;
  g_autoptr(JsonObject) origin = NULL;
  g_autofree char *content = NULL;

  content = tally_tool_run_finish_full (TALLY_TOOL (object), result, &artifact, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_hash_table_insert (turn->orphans, g_strdup (id), GINT_TO_POINTER (TALLY_ORPHAN_INTERRUPTED));
      tally_agent_finish_turn (task, TALLY_TURN_CANCELLED, NULL);
      return;
    }

  /* A query's origin goes into its tool_result event (docs/ledger.md §1). */
  if (artifact != NULL && tally_json_object_get_object (artifact, "origin") != NULL)
    {
      origin = json_object_ref (tally_json_object_get_object (artifact, "origin"));
      json_object_remove_member (artifact, "origin");
    }

  if (content != NULL)
    tool_answered_full (task, id, content, FALSE, origin);
  else
    tool_answered (task, id, error->message, TRUE);

  /* A chart create_chart drew follows its tool_result (§4.4). */
  if (content != NULL && artifact != NULL && json_object_get_size (artifact) > 0)
    {
      g_autofree char *chart_id = g_uuid_string_random ();

      turn_emit (task, tally_event_new_chart_created (chart_id, id, artifact));
    }

  turn->tool_index++;
  run_next_tool (g_steal_pointer (&task));
}

static void
run_current (GTask      *task,
             TallyTool  *tool,
             JsonObject *input,
             gboolean    allow_outside)
{
  Turn *turn = g_task_get_task_data (task);
  TallyToolContext context = turn->context;

  context.allow_outside_workspace = allow_outside;
  turn->tool_started_us = g_get_monotonic_time ();
  g_hash_table_insert (turn->orphans, g_strdup (current_tool_id (turn)),
                       GINT_TO_POINTER (TALLY_ORPHAN_INTERRUPTED));
  tally_tool_run_async (tool, &context, input, g_task_get_cancellable (task), tool_run_cb, task);
}

/* Pending cards: the turn parks until the analyst decides, a timeout
 * denies, or a cancel resolves it. Nothing streams meanwhile. */

static void
pending_clear (Turn *turn)
{
  g_clear_handle_id (&turn->pending_timeout, g_source_remove);
  g_clear_pointer (&turn->pending_id, g_free);
  g_clear_pointer (&turn->pending_suggestions, json_array_unref);
  turn->pending_kind = PENDING_NONE;
  turn->pending_outside = FALSE;
}

static void approval_settle (GTask *task, const TallyApprovalAnswer *answer, const char *reason);
static void approval_deny (GTask *task, const char *message, const char *reason);
static void question_settle (GTask *task, JsonObject *answers, const char *reason);

static gboolean
pending_timeout_cb (gpointer user_data)
{
  GTask *task = user_data;
  Turn *turn = g_task_get_task_data (task);

  turn->pending_timeout = 0;
  if (turn->pending_kind == PENDING_APPROVAL)
    approval_deny (task,
                   "The analyst did not decide in time, so this call was denied and did not run. "
                   "Do not guess what they would have wanted; ask or stop.", "timeout");
  else if (turn->pending_kind == PENDING_QUESTION)
    question_settle (task, NULL, "timeout");

  return G_SOURCE_REMOVE;
}

static void
park (GTask       *task,
      PendingKind  kind,
      const char  *id,
      guint        timeout_s)
{
  Turn *turn = g_task_get_task_data (task);

  turn->pending_kind = kind;
  turn->pending_id = g_strdup (id);
  if (timeout_s > 0)
    turn->pending_timeout = g_timeout_add_seconds (timeout_s, pending_timeout_cb, task);
}

/* Called right after the card's request event: the card is pending before
 * its event goes out, so a handler may settle it at once; a cancel that
 * arrived earlier settles it now. */
static void
parked (GTask *task)
{
  TallyAgent *self = turn_agent (task);

  if (self->turn_task == task && g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    tally_agent_cancel_pending (self);
}

/* Settles the pending approval with @answer; @reason is the event's
 * `reason` (`user`, `timeout`, `dismissed`, `cancel`). */
static void
approval_settle (GTask                     *task,
                 const TallyApprovalAnswer *answer,
                 const char                *reason)
{
  TallyAgent *self = turn_agent (task);
  TallyDecision decision = answer->decision;
  JsonObject *updated_input = answer->updated_input;
  const char *rule = answer->rule;
  const char *message = answer->message;
  Turn *turn = g_task_get_task_data (task);
  g_autofree char *approval_id = g_strdup (turn->pending_id);
  g_autoptr(JsonObject) extra = json_object_new ();
  JsonObject *tool_use = current_tool_use (turn);
  const char *tool_id = current_tool_id (turn);
  const char *name = json_object_get_string_member_with_default (tool_use, "name", "");
  TallyTool *tool = tally_tool_registry_lookup (self->tools, name);
  gboolean outside = turn->pending_outside;
  gboolean denied = TRUE;

  pending_clear (turn);

  switch (decision)
    {
    case TALLY_DECISION_ALLOW:
      denied = FALSE;
      break;
    case TALLY_DECISION_ALLOW_EDITED:
      denied = FALSE;
      json_object_set_object_member (extra, "updated_input", json_object_ref (updated_input));
      break;
    case TALLY_DECISION_ALLOW_ALWAYS:
      denied = FALSE;
      if (rule != NULL)
        {
          json_object_set_string_member (extra, "rule", rule);
          json_object_set_string_member (extra, "scope", answer->scope != NULL ? answer->scope : "workspace");
          tally_agent_add_rule (self, rule, TRUE);
        }
      break;
    case TALLY_DECISION_DENY_STOP:
      json_object_set_boolean_member (extra, "stop", TRUE);
      G_GNUC_FALLTHROUGH;
    case TALLY_DECISION_DENY:
      break;
    }

  /* A decision out of range denies, like every other doubt (§6.4). */
  if (denied)
    {
      decision = decision == TALLY_DECISION_DENY_STOP ? decision : TALLY_DECISION_DENY;
      if (message == NULL || *message == '\0')
        message = "The analyst declined this tool call, so it did not run. Do not try it again "
                  "another way; ask what they would like instead.";
    }

  emit_approval_resolved (task, approval_id, tool_id, decision, reason,
                          denied ? message : NULL, extra);

  if (!denied)
    {
      JsonObject *input = decision == TALLY_DECISION_ALLOW_EDITED
        ? updated_input : json_object_get_object_member (tool_use, "input");

      run_current (task, tool, input, outside);
      return;
    }

  tool_answered (task, tool_id, message, TRUE);
  turn->tool_index++;

  if (decision == TALLY_DECISION_DENY_STOP)
    {
      /* Answer every call still waiting, then end the turn. */
      for (; turn->tool_index < turn->tool_uses->len; turn->tool_index++)
        {
          const char *next_id = current_tool_id (turn);
          const char *next_name = json_object_get_string_member_with_default (current_tool_use (turn), "name", "");
          const char *stopped = "The analyst stopped the turn before this call; it did not run.";

          if (!answers_itself (next_name))
            emit_approval_resolved (task, NULL, next_id, TALLY_DECISION_DENY, "user", stopped, NULL);
          tool_answered (task, next_id, stopped, TRUE);
        }
      tally_agent_finish_turn (task, TALLY_TURN_CANCELLED, NULL);
      return;
    }

  run_next_tool (task);
}

/* Denies the pending approval with @message for the model. */
static void
approval_deny (GTask      *task,
               const char *message,
               const char *reason)
{
  approval_settle (task, &(TallyApprovalAnswer) { .decision = TALLY_DECISION_DENY, .message = message }, reason);
}

static void
question_settle (GTask      *task,
                 JsonObject *answers,
                 const char *reason)
{
  Turn *turn = g_task_get_task_data (task);
  g_autofree char *question_id = g_strdup (turn->pending_id);
  JsonObject *input = json_object_get_object_member (current_tool_use (turn), "input");
  JsonObject *event = tally_event_new (TALLY_EVENT_QUESTION_RESOLVED);
  g_autofree char *text = NULL;

  pending_clear (turn);

  json_object_set_string_member (event, "question_id", question_id);
  if (answers != NULL)
    json_object_set_object_member (event, "answers", json_object_ref (answers));
  else
    json_object_set_null_member (event, "answers");
  json_object_set_string_member (event, "reason", reason);
  turn_emit (task, event);

  if (answers != NULL)
    {
      text = tally_questions_format_answers (json_object_get_array_member (input, "questions"), answers);
      tool_answered (task, current_tool_id (turn), text, FALSE);
    }
  else
    {
      text = tally_questions_not_answered (reason);
      tool_answered (task, current_tool_id (turn), text, TRUE);
    }

  turn->tool_index++;
  run_next_tool (task);
}

static void
handle_question (GTask      *task,
                 JsonObject *input)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *question_id = NULL;
  JsonObject *event;

  if (!tally_questions_validate (input, &error))
    {
      refuse_current (task, error->message);
      return;
    }

  question_id = g_uuid_string_random ();
  event = tally_event_new (TALLY_EVENT_QUESTION_REQUEST);
  json_object_set_string_member (event, "question_id", question_id);
  json_object_set_string_member (event, "tool_id", current_tool_id (turn));
  json_object_set_member (event, "questions",
                          json_node_copy (json_object_get_member (input, "questions")));

  park (task, PENDING_QUESTION, question_id, self->question_timeout_s);
  turn_emit (task, event);
  parked (task);
}

static void
handle_plan (GTask      *task,
             JsonObject *input)
{
  TallyAgent *self = turn_agent (task);
  /* The model's input: "plan" may be anything, or missing. */
  const char *plan = tally_json_object_get_string (input, "plan", NULL);
  g_autofree char *trimmed = plan != NULL ? g_strstrip (g_strdup (plan)) : NULL;
  g_autofree char *receipt = NULL;
  JsonObject *event;

  if (trimmed == NULL || *trimmed == '\0')
    {
      JsonNode *node = json_object_get_member (input, "plan");
      g_autofree char *message =
        g_strdup_printf ("ExitPlanMode needs “plan”: the plan as Markdown, a string that is not blank "
                         "(it was %s). Nothing was shown to the analyst.",
                         plan != NULL ? "blank" : tally_json_node_describe (node));

      refuse_current (task, message);
      return;
    }

  /* Refinements are new versions of the session's plan. */
  if (self->plan_id == NULL)
    self->plan_id = g_uuid_string_random ();
  self->plan_version++;

  event = tally_event_new (TALLY_EVENT_PLAN_PROPOSED);
  json_object_set_string_member (event, "plan_id", self->plan_id);
  json_object_set_string_member (event, "markdown", plan);
  json_object_set_int_member (event, "version", self->plan_version);
  turn_emit (task, event);

  receipt = tally_questions_plan_receipt (self->plan_version);
  refuse_current (task, receipt);
}

static void
run_next_tool (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  TallyGateVerdict verdict;
  JsonObject *tool_use;
  const char *id;
  const char *name;
  JsonNode *input_node;
  JsonObject *input;
  TallyTool *tool;
  g_autoptr(GError) schema_error = NULL;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)) || self->failure != NULL)
    {
      tally_agent_finish_turn (task, self->failure != NULL ? TALLY_TURN_FAILED : TALLY_TURN_CANCELLED, NULL);
      return;
    }

  if (turn->tool_index >= turn->tool_uses->len)
    {
      deliver_redirect (task);
      turn->call++;
      tally_agent_start_call (task);
      return;
    }

  tool_use = current_tool_use (turn);
  id = json_object_get_string_member_with_default (tool_use, "id", "");
  name = json_object_get_string_member_with_default (tool_use, "name", "");
  input_node = json_object_get_member (tool_use, "input");
  tool = tally_tool_registry_lookup (self->tools, name);

  if (g_hash_table_contains (turn->refusals, id))
    {
      /* A repeated id or an input that was not an object: answered, never
       * run (docs/protocol.md §5.4). */
      g_autofree char *message = g_strdup (g_hash_table_lookup (turn->refusals, id));

      if (!answers_itself (name))
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }

  if (tool == NULL)
    {
      g_autofree char *message =
        g_strdup_printf ("There is no tool named “%s” in Tally. Use one of the tools listed in this "
                         "conversation.", name);

      emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }

  if (input_node == NULL || !JSON_NODE_HOLDS_OBJECT (input_node))
    {
      g_autofree char *message =
        g_strdup_printf ("The input of %s must be a JSON object; the call did not run.", name);

      if (!answers_itself (name))
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }
  input = json_node_get_object (input_node);

  /* An input that breaks the tool's schema is answered at once, before
   * the gate: a card would ask about a call that cannot run, and a rule
   * offered on it could not name what it allows (docs/security.md, "Tool
   * input"). The card-backed tools check their own inputs, with messages
   * of their own (handle_question(), handle_plan()). */
  if (!answers_itself (name) && !tally_tool_check_input_schema (tool, input, &schema_error))
    {
      const char *help = TALLY_TOOL_GET_CLASS (tool)->input_help;
      g_autofree char *message =
        g_strdup_printf ("The input of %s does not match the tool's input schema: %s. The call did not "
                         "run; call %s again with an input that matches the schema.%s%s",
                         name, schema_error->message, name, help != NULL ? " " : "", help != NULL ? help : "");

      emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }

  tally_gate_evaluate (self->rules, name, tool, input, turn->mode, &turn->context, &verdict);

  switch (verdict.action)
    {
    case TALLY_GATE_QUESTION:
      handle_question (task, input);
      break;

    case TALLY_GATE_PLAN:
      handle_plan (task, input);
      break;

    case TALLY_GATE_DENY:
      {
        JsonObject *extra = json_object_new ();

        tally_json_object_set_string_unless_null (extra, "rule", verdict.rule);
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, verdict.reason, verdict.message, extra);
        json_object_unref (extra);
        refuse_current (task, verdict.message);
      }
      break;

    case TALLY_GATE_ALLOW:
      {
        JsonObject *extra = json_object_new ();

        tally_json_object_set_string_unless_null (extra, "rule", verdict.rule);
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_ALLOW, verdict.reason, NULL, extra);
        json_object_unref (extra);
        run_current (task, tool, input, FALSE);
      }
      break;

    case TALLY_GATE_ASK:
    default:
      {
        g_autofree char *approval_id = g_uuid_string_random ();
        JsonArray *suggestions = tally_gate_dup_suggestions (name, input, &turn->context);
        JsonObject *event = tally_event_new (TALLY_EVENT_APPROVAL_REQUEST);

        json_object_set_string_member (event, "approval_id", approval_id);
        json_object_set_string_member (event, "tool_id", id);
        json_object_set_string_member (event, "tool_name", name);
        json_object_set_object_member (event, "tool_input", json_object_ref (input));
        json_object_set_array_member (event, "suggestions", json_array_ref (suggestions));
        if (verdict.outside)
          json_object_set_boolean_member (event, "outside_workspace", TRUE);
        /* The card counts down to the moment the gate denies
         * (docs/architecture.md §6.4). */
        if (self->approval_timeout_s > 0)
          json_object_set_int_member (event, "timeout_s", self->approval_timeout_s);

        park (task, PENDING_APPROVAL, approval_id, self->approval_timeout_s);
        turn->pending_suggestions = suggestions;
        turn->pending_outside = verdict.outside;
        tally_gate_verdict_clear (&verdict);
        turn_emit (task, event);
        parked (task);
        return;
      }
      break;
    }

  tally_gate_verdict_clear (&verdict);
}

void
tally_agent_start_tools (GTask     *task,
             GPtrArray *content)
{
  Turn *turn = g_task_get_task_data (task);

  g_clear_pointer (&turn->tool_uses, g_ptr_array_unref);
  turn->tool_uses = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  turn->tool_index = 0;

  for (guint i = 0; i < content->len; i++)
    {
      g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (content, i));
      JsonObject *event;

      if (block == NULL)
        continue;

      g_ptr_array_add (turn->tool_uses, json_object_ref (block));

      event = tally_event_new (TALLY_EVENT_TOOL_USE_START);
      json_object_set_string_member (event, "tool_id",
                                     json_object_get_string_member_with_default (block, "id", ""));
      json_object_set_string_member (event, "tool_name",
                                     json_object_get_string_member_with_default (block, "name", ""));
      if (turn->duplicates != NULL &&
          g_hash_table_contains (turn->duplicates, json_object_get_string_member_with_default (block, "id", "")))
        json_object_set_string_member (event, "duplicate_of",
                                       g_hash_table_lookup (turn->duplicates,
                                                            json_object_get_string_member_with_default (block, "id", "")));
      if (json_object_has_member (block, "input"))
        json_object_set_member (event, "tool_input",
                                json_node_copy (json_object_get_member (block, "input")));
      else
        json_object_set_object_member (event, "tool_input", json_object_new ());
      turn_emit (task, event);
    }

  run_next_tool (task);
}


static void
deliver_redirect (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event;

  if (turn->redirect == NULL || turn->redirect->len == 0)
    return;

  /* After the tool results, in the same user message (docs/protocol.md
   * §5.1). */
  tally_conversation_add_user_text (self->conversation, turn->redirect->str);

  event = tally_event_new (TALLY_EVENT_REDIRECT);
  json_object_set_string_member (event, "text", turn->redirect->str);
  turn_emit (task, event);

  g_string_truncate (turn->redirect, 0);
}

static Turn *
pending_turn (TallyAgent  *self,
              PendingKind  kind,
              const char  *id,
              GError     **error)
{
  Turn *turn;

  if (self->turn_task == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "No turn is running");
      return NULL;
    }

  turn = g_task_get_task_data (self->turn_task);
  if (turn->pending_kind != kind || g_strcmp0 (turn->pending_id, id) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "No pending %s with id %s", kind == PENDING_APPROVAL ? "approval" : "question",
                   id != NULL ? id : "(null)");
      return NULL;
    }

  return turn;
}

/**
 * tally_agent_resolve_approval:
 * @self: a #TallyAgent
 * @approval_id: the `approval_id` of the pending `approval_request`
 * @answer: the analyst's decision and its details (see
 *   #TallyApprovalAnswer)
 * @error: return location for a #GError
 *
 * Settles a pending approval card and lets the turn go on.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_NOT_FOUND when no such
 *   approval is pending, %G_IO_ERROR_INVALID_ARGUMENT for an edited input
 *   that is missing or not an object, or an "always" without a valid rule
 */
gboolean
tally_agent_resolve_approval (TallyAgent                 *self,
                              const char                 *approval_id,
                              const TallyApprovalAnswer  *answer,
                              GError                    **error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);
  g_return_val_if_fail (answer != NULL, FALSE);

  if (pending_turn (self, PENDING_APPROVAL, approval_id, error) == NULL)
    return FALSE;

  if (answer->decision == TALLY_DECISION_ALLOW_EDITED && answer->updated_input == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "Allow with changes needs the edited input as a JSON object");
      return FALSE;
    }
  if (answer->decision == TALLY_DECISION_ALLOW_ALWAYS && answer->rule != NULL &&
      !tally_gate_pattern_is_valid (answer->rule))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "“%s” is not a rule pattern", answer->rule);
      return FALSE;
    }

  approval_settle (self->turn_task, answer, "user");
  return TRUE;
}

/**
 * tally_agent_dismiss_approval:
 * @self: a #TallyAgent
 * @approval_id: the pending approval
 * @error: return location for a #GError
 *
 * Dismisses a card without a decision (end of input in tally-cli, a closed
 * card): the call is denied with reason `dismissed`, never allowed.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_NOT_FOUND
 */
gboolean
tally_agent_dismiss_approval (TallyAgent  *self,
                              const char  *approval_id,
                              GError     **error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);

  if (pending_turn (self, PENDING_APPROVAL, approval_id, error) == NULL)
    return FALSE;

  approval_deny (self->turn_task,
                 "The approval card was dismissed without a decision, so this call did not run. "
                 "Do not assume it would have been allowed.", "dismissed");
  return TRUE;
}

/**
 * tally_agent_answer_question:
 * @self: a #TallyAgent
 * @question_id: the `question_id` of the pending `question_request`
 * @answers: (nullable): question text → answer string (chosen labels
 *   joined by ", ", then free text), covering every question; %NULL
 *   dismisses the card
 * @error: return location for a #GError
 *
 * Answers or dismisses a pending question card.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_NOT_FOUND when no such
 *   question is pending, or %G_IO_ERROR_INVALID_ARGUMENT when a question has
 *   no answer
 */
gboolean
tally_agent_answer_question (TallyAgent  *self,
                             const char  *question_id,
                             JsonObject  *answers,
                             GError     **error)
{
  Turn *turn;

  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);

  turn = pending_turn (self, PENDING_QUESTION, question_id, error);
  if (turn == NULL)
    return FALSE;

  if (answers != NULL)
    {
      JsonObject *input = json_object_get_object_member (current_tool_use (turn), "input");
      JsonArray *questions = json_object_get_array_member (input, "questions");

      for (guint i = 0; i < json_array_get_length (questions); i++)
        {
          const char *q = json_object_get_string_member (json_array_get_object_element (questions, i),
                                                         "question");
          const char *a = json_object_get_string_member_with_default (answers, q, NULL);

          if (a == NULL || *a == '\0')
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "The question “%s” has no answer", q);
              return FALSE;
            }
        }
    }

  question_settle (self->turn_task, answers, answers != NULL ? "user" : "dismissed");
  return TRUE;
}

/**
 * tally_agent_cancel_pending:
 * @self: a #TallyAgent
 *
 * Resolves a pending card as `cancel` (a cancel resolves every pending
 * decision at once; at most one card is pending at a time). Called when the
 * turn's cancellable fires.
 */
void
tally_agent_cancel_pending (TallyAgent *self)
{
  Turn *turn;

  g_return_if_fail (TALLY_IS_AGENT (self));

  if (self->turn_task == NULL)
    return;

  turn = g_task_get_task_data (self->turn_task);
  if (turn->pending_kind == PENDING_APPROVAL)
    approval_deny (self->turn_task,
                   "The analyst stopped the turn before deciding, so this call did not run.", "cancel");
  else if (turn->pending_kind == PENDING_QUESTION)
    question_settle (self->turn_task, NULL, "cancel");
}
/**
 * tally_agent_redirect:
 * @self: a #TallyAgent
 * @text: what the analyst typed while the turn runs
 *
 * Delivers a message in the middle of a turn: it goes to the model with
 * the next tool results instead of waiting for the turn to end, and a
 * pending approval is denied with it as the message (a pending question is
 * left unanswered). When the turn ends before any tool result, the text is
 * kept for tally_agent_take_redirect().
 *
 * Returns: %TRUE when a turn was running and took the text; %FALSE when no
 *   turn runs (send it as a normal message)
 */
gboolean
tally_agent_redirect (TallyAgent *self,
                      const char *text)
{
  Turn *turn;

  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);

  if (self->turn_task == NULL || *text == '\0')
    return FALSE;

  turn = g_task_get_task_data (self->turn_task);
  if (turn->redirect == NULL)
    turn->redirect = g_string_new (NULL);
  if (turn->redirect->len > 0)
    g_string_append (turn->redirect, "\n\n");
  g_string_append (turn->redirect, text);

  if (turn->pending_kind == PENDING_APPROVAL)
    approval_deny (self->turn_task, text, "user");
  else if (turn->pending_kind == PENDING_QUESTION)
    question_settle (self->turn_task, NULL, "dismissed");

  return TRUE;
}
