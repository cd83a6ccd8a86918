/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-client.h"
#include "tally-conversation.h"
#include "tally-tool-registry.h"

G_BEGIN_DECLS

/**
 * TallyMode:
 * @TALLY_MODE_ASK: read-only tools run, everything else asks (the default)
 * @TALLY_MODE_PLAN: explore read-only, then propose a plan; nothing mutates
 * @TALLY_MODE_AUTO: like ask, and edits inside the workspace run too
 *
 * The permission mode of a turn (DESIGN "The gate").
 */
typedef enum {
  TALLY_MODE_ASK,
  TALLY_MODE_PLAN,
  TALLY_MODE_AUTO,
} TallyMode;

/**
 * TallyTurnStatus:
 * @TALLY_TURN_DONE: the model finished (`end_turn`, `max_tokens`, …)
 * @TALLY_TURN_CANCELLED: the turn was cancelled
 * @TALLY_TURN_FAILED: an error ended the turn
 *
 * How a turn ended; the `status` of the `turn_finished` event.
 */
typedef enum {
  TALLY_TURN_DONE,
  TALLY_TURN_CANCELLED,
  TALLY_TURN_FAILED,
} TallyTurnStatus;

const char *tally_mode_to_string        (TallyMode        mode);
gboolean    tally_mode_from_string      (const char      *text,
                                         TallyMode       *mode);
const char *tally_turn_status_to_string (TallyTurnStatus  status);

#define TALLY_TYPE_AGENT (tally_agent_get_type ())

G_DECLARE_FINAL_TYPE (TallyAgent, tally_agent, TALLY, AGENT, GObject)

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
void               tally_agent_set_next_seq       (TallyAgent         *self,
                                                   gint64              seq);
gint64             tally_agent_get_next_seq       (TallyAgent         *self);
void               tally_agent_set_last_mode      (TallyAgent         *self,
                                                   TallyMode           mode);
gboolean           tally_agent_is_busy            (TallyAgent         *self);
char              *tally_agent_dup_system_prompt  (TallyAgent         *self);

void               tally_agent_send_async         (TallyAgent         *self,
                                                   const char         *text,
                                                   TallyMode           mode,
                                                   gboolean            thinking,
                                                   GCancellable       *cancellable,
                                                   GAsyncReadyCallback callback,
                                                   gpointer            user_data);
TallyTurnStatus    tally_agent_send_finish        (TallyAgent         *self,
                                                   GAsyncResult       *result,
                                                   GError            **error);

G_END_DECLS
