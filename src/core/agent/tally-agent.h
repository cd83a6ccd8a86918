/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-client.h"
#include "tally-conversation.h"
#include "tally-tool-registry.h"
#include "tally-types.h"

G_BEGIN_DECLS

#define TALLY_TYPE_AGENT (tally_agent_get_type ())

G_DECLARE_FINAL_TYPE (TallyAgent, tally_agent, TALLY, AGENT, GObject)

/**
 * TallyTurnRequest:
 * @text: the analyst's message (UTF-8, not empty); for a retry, the failed
 *   turn's prompt (for the `turn_started` event; it is not added to the
 *   conversation again)
 * @retry_of: (nullable): the id of a failed turn (its `turn_started` event)
 *   to run again in place, or %NULL for a new turn
 * @mode: the turn's permission mode
 * @thinking: whether the model should think
 *
 * What one turn is asked to do, as tally_agent_send_async() and
 * tally_session_send_async() take it. The caller keeps the struct and its
 * strings (usually a compound literal on the stack): the send functions copy
 * what they keep before they return.
 */
typedef struct {
  const char *text;
  const char *retry_of;
  TallyMode   mode;
  gboolean    thinking;
} TallyTurnRequest;

/**
 * TallyApprovalAnswer:
 * @decision: the analyst's decision
 * @updated_input: (nullable): for %TALLY_DECISION_ALLOW_EDITED, the input
 *   to run instead (must be an object)
 * @rule: (nullable): for %TALLY_DECISION_ALLOW_ALWAYS, the rule the card
 *   showed, kept exactly (one of the request's `suggestions`)
 * @scope: (nullable): the rule's scope: `session`, `workspace` or `global`
 *   (`workspace` when %NULL)
 * @message: (nullable): for a denial, the analyst's words for the model,
 *   sent verbatim; a default text is used when empty
 *
 * The analyst's answer to an approval card, as
 * tally_agent_resolve_approval() takes it. The caller keeps the struct and
 * what it points to; the agent copies (or references) what it keeps.
 */
typedef struct {
  TallyDecision  decision;
  JsonObject    *updated_input;
  const char    *rule;
  const char    *scope;
  const char    *message;
} TallyApprovalAnswer;

TallyAgent        *tally_agent_new                (TallyClient        *client,
                                                   TallyToolRegistry  *tools);
TallyClient       *tally_agent_get_client         (TallyAgent         *self);
TallyConversation *tally_agent_get_conversation   (TallyAgent         *self);
const char        *tally_agent_get_session_id     (TallyAgent         *self);
void               tally_agent_set_session_id     (TallyAgent         *self,
                                                   const char         *session_id);
const char        *tally_agent_get_model          (TallyAgent         *self);
void               tally_agent_set_model          (TallyAgent         *self,
                                                   const char         *model);
const char        *tally_agent_get_database       (TallyAgent         *self);
void               tally_agent_set_database       (TallyAgent         *self,
                                                   const char         *path);
const char        *tally_agent_get_workspace      (TallyAgent         *self);
void               tally_agent_set_workspace      (TallyAgent         *self,
                                                   const char         *path);
void               tally_agent_set_max_tokens     (TallyAgent         *self,
                                                   gint64              max_tokens);
void               tally_agent_set_thinking_budget (TallyAgent        *self,
                                                   gint64              budget_tokens);
void               tally_agent_set_max_cost       (TallyAgent         *self,
                                                   double              max_cost_usd);
void               tally_agent_raise_max_cost     (TallyAgent         *self,
                                                   double              max_cost_usd);
double             tally_agent_get_max_cost       (TallyAgent         *self);
void               tally_agent_set_spent          (TallyAgent         *self,
                                                   double              spent_usd);
double             tally_agent_get_spent          (TallyAgent         *self);
void               tally_agent_set_next_seq       (TallyAgent         *self,
                                                   gint64              seq);
gint64             tally_agent_get_next_seq       (TallyAgent         *self);
void               tally_agent_emit_event         (TallyAgent         *self,
                                                   const char         *turn_id,
                                                   JsonObject         *fields);
void               tally_agent_set_last_mode      (TallyAgent         *self,
                                                   TallyMode           mode);
gboolean           tally_agent_is_busy            (TallyAgent         *self);
void               tally_agent_set_sensitive_columns (TallyAgent         *self,
                                                      const char * const *columns);
const char * const *tally_agent_get_sensitive_columns (TallyAgent        *self);
char              *tally_agent_dup_system_prompt  (TallyAgent         *self);
void               tally_agent_set_store_dir      (TallyAgent         *self,
                                                   const char         *store_dir);
char              *tally_agent_dup_profile_dir    (TallyAgent         *self);
const char        *tally_agent_get_notes          (TallyAgent         *self);
void               tally_agent_restore_notes      (TallyAgent         *self,
                                                   const char         *in_prompt,
                                                   const char         *told);

void               tally_agent_set_timeouts       (TallyAgent         *self,
                                                   guint               approval_timeout_s,
                                                   guint               question_timeout_s);
void               tally_agent_set_rules          (TallyAgent         *self,
                                                   GPtrArray          *rules);
void               tally_agent_add_rule           (TallyAgent         *self,
                                                   const char         *pattern,
                                                   gboolean            allow);
void               tally_agent_set_plan           (TallyAgent         *self,
                                                   const char         *plan_id,
                                                   gint64              version);
gboolean           tally_agent_resolve_approval   (TallyAgent         *self,
                                                   const char         *approval_id,
                                                   const TallyApprovalAnswer *answer,
                                                   GError            **error);
gboolean           tally_agent_dismiss_approval   (TallyAgent         *self,
                                                   const char         *approval_id,
                                                   GError            **error);
gboolean           tally_agent_answer_question    (TallyAgent         *self,
                                                   const char         *question_id,
                                                   JsonObject         *answers,
                                                   GError            **error);
void               tally_agent_cancel_pending     (TallyAgent         *self);
gboolean           tally_agent_fail_turn          (TallyAgent         *self,
                                                   const char         *kind,
                                                   const GError       *error);
gboolean           tally_agent_redirect           (TallyAgent         *self,
                                                   const char         *text);
char              *tally_agent_take_redirect      (TallyAgent         *self);

void               tally_agent_send_async         (TallyAgent         *self,
                                                   const TallyTurnRequest *request,
                                                   GCancellable       *cancellable,
                                                   GAsyncReadyCallback callback,
                                                   gpointer            user_data);
TallyTurnStatus    tally_agent_send_finish        (TallyAgent         *self,
                                                   GAsyncResult       *result,
                                                   GError            **error);

G_END_DECLS
