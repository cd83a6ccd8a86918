/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Forward declarations of the core's objects, so that a header can name a
 * type of another layer without including it (docs/architecture.md §2.1),
 * and the enums that travel between layers. Their GTypes come from
 * gnome.mkenums_simple (tally-enums.h); a value's nick is its persisted or
 * wire spelling wherever it has one, so the names are looked up with
 * GEnumClass rather than kept in hand-written tables.
 */

typedef struct _TallyAgent        TallyAgent;
typedef struct _TallyBlock        TallyBlock;
typedef struct _TallyClient       TallyClient;
typedef struct _TallyConversation TallyConversation;
typedef struct _TallySession      TallySession;
typedef struct _TallyStore        TallyStore;
typedef struct _TallyTool         TallyTool;
typedef struct _TallyToolRegistry TallyToolRegistry;
typedef struct _TallyTranscript   TallyTranscript;

/**
 * TallyMode:
 * @TALLY_MODE_ASK: read-only tools run, everything else asks (the default)
 * @TALLY_MODE_PLAN: explore read-only, then propose a plan; nothing mutates
 * @TALLY_MODE_AUTO: like ask, and edits inside the workspace run too
 *
 * The permission mode of a turn (docs/architecture.md §6). The nicks
 * (`ask`, `plan`, `auto`) are the `mode` of the `turn_started` event.
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
 * How a turn ended. The nicks (`done`, `cancelled`, `failed`) are the
 * `status` of the `turn_finished` event.
 */
typedef enum {
  TALLY_TURN_DONE,
  TALLY_TURN_CANCELLED,
  TALLY_TURN_FAILED,
} TallyTurnStatus;

/**
 * TallyDecision:
 * @TALLY_DECISION_ALLOW: allow this call once
 * @TALLY_DECISION_ALLOW_EDITED: run the call with an edited input (the
 *   history keeps the model's input)
 * @TALLY_DECISION_ALLOW_ALWAYS: allow it and keep the rule the card showed
 * @TALLY_DECISION_DENY: refuse it, optionally with a message for the model
 * @TALLY_DECISION_DENY_STOP: refuse it and end the turn once every pending
 *   call is answered
 *
 * The analyst's answer to an approval card. The nicks of the first four
 * are the `decision` of the `approval_resolved` event; "deny and stop" is
 * logged as `deny` with `stop: true` (docs/architecture.md §4.5).
 */
typedef enum {
  TALLY_DECISION_ALLOW,                      /*< nick=allow >*/
  TALLY_DECISION_ALLOW_EDITED,               /*< nick=allow_edited >*/
  TALLY_DECISION_ALLOW_ALWAYS,               /*< nick=allow_always >*/
  TALLY_DECISION_DENY,                       /*< nick=deny >*/
  TALLY_DECISION_DENY_STOP,                  /*< nick=deny_stop >*/
} TallyDecision;

/**
 * TallyBlockKind:
 * @TALLY_BLOCK_USER: the analyst's message (`turn_started.text`)
 * @TALLY_BLOCK_TEXT: assistant text, streamed from `text_delta`
 * @TALLY_BLOCK_THINKING: the model's thinking, streamed from `thinking_delta`
 * @TALLY_BLOCK_TOOL_CALL: one tool call with its input and result
 * @TALLY_BLOCK_APPROVAL: an approval card (`approval_request`)
 * @TALLY_BLOCK_QUESTION: a question card (`question_request`)
 * @TALLY_BLOCK_PLAN: a plan card (`plan_proposed`)
 * @TALLY_BLOCK_RECEIPT: a turn's receipt (`turn_finished`)
 * @TALLY_BLOCK_ERROR: an error banner (`error`)
 * @TALLY_BLOCK_INCOMPLETE: marks a reply cut before it completed
 * @TALLY_BLOCK_NOTICE: a note from Tally itself (e.g. damaged history)
 * @TALLY_BLOCK_CHART: a chart `create_chart` drew (`chart_created`); its
 *   details are the event, with the spec and rows inline
 * @TALLY_BLOCK_FILE: a file a tool wrote in the turn (`Write`, `Edit`, or
 *   one of `chart_created.files`); its text is the path as the tool named
 *   it, absolute or relative to the workspace
 *
 * What a transcript block shows (docs/architecture.md §9). The nicks
 * (`user`, `tool-call`, …) name the kind in traces and CSS classes.
 */
typedef enum {
  TALLY_BLOCK_USER,
  TALLY_BLOCK_TEXT,
  TALLY_BLOCK_THINKING,
  TALLY_BLOCK_TOOL_CALL,
  TALLY_BLOCK_APPROVAL,
  TALLY_BLOCK_QUESTION,
  TALLY_BLOCK_PLAN,
  TALLY_BLOCK_RECEIPT,
  TALLY_BLOCK_ERROR,
  TALLY_BLOCK_INCOMPLETE,
  TALLY_BLOCK_NOTICE,
  TALLY_BLOCK_CHART,
  TALLY_BLOCK_FILE,
} TallyBlockKind;

const char *tally_enum_to_nick          (GType            enum_type,
                                         int              value);
const char *tally_enum_to_nick_or       (GType            enum_type,
                                         int              value,
                                         int              fallback);
gboolean    tally_enum_from_nick        (GType            enum_type,
                                         const char      *nick,
                                         int             *value);

const char *tally_mode_to_string        (TallyMode        mode);
gboolean    tally_mode_from_string      (const char      *text,
                                         TallyMode       *mode);
const char *tally_turn_status_to_string (TallyTurnStatus  status);
TallyTurnStatus tally_turn_status_propagate (GTask     *task,
                                             GError   **error);
const char *tally_decision_to_string    (TallyDecision    decision);
const char *tally_block_kind_to_string  (TallyBlockKind   kind);

G_END_DECLS

#include "tally-enums.h"
