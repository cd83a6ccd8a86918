/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "tally-types.h"

G_BEGIN_DECLS

/**
 * TallyEventType:
 * @TALLY_EVENT_UNKNOWN: a type this build does not know (readers skip it,
 *   so the vocabulary can grow)
 * @TALLY_EVENT_SESSION_CREATED: `session_created`, a new session (§4.2)
 * @TALLY_EVENT_TURN_STARTED: `turn_started`, the analyst's message (§4.2)
 * @TALLY_EVENT_REDIRECT: `redirect`, words typed during a turn (§4.2)
 * @TALLY_EVENT_TURN_FINISHED: `turn_finished`, the turn's receipt (§4.2)
 * @TALLY_EVENT_TEXT_DELTA: `text_delta`, streamed answer text (§4.3)
 * @TALLY_EVENT_THINKING_DELTA: `thinking_delta`, streamed thinking (§4.3)
 * @TALLY_EVENT_BLOCK_DONE: `block_done`, a content block ended (§4.3)
 * @TALLY_EVENT_TOOL_USE_START: `tool_use_start`, a tool call announced (§4.4)
 * @TALLY_EVENT_TOOL_RESULT: `tool_result`, a tool call answered (§4.4)
 * @TALLY_EVENT_APPROVAL_REQUEST: `approval_request`, an approval card (§4.5)
 * @TALLY_EVENT_APPROVAL_RESOLVED: `approval_resolved`, a call decided (§4.5)
 * @TALLY_EVENT_QUESTION_REQUEST: `question_request`, a question card (§4.5)
 * @TALLY_EVENT_QUESTION_RESOLVED: `question_resolved`, a card settled (§4.5)
 * @TALLY_EVENT_PLAN_PROPOSED: `plan_proposed`, a plan card (§4.5)
 * @TALLY_EVENT_API_CALL: `api_call`, one HTTP attempt (§4.6)
 * @TALLY_EVENT_RETRY: `retry`, an attempt about to be retried (§4.6)
 * @TALLY_EVENT_ERROR: `error`, what ended a turn (§4.6)
 * @TALLY_EVENT_CHART_CREATED: `chart_created`, a chart `create_chart` drew,
 *   with its spec and rows inline (§4.4)
 * @TALLY_EVENT_REQUEST_SENT: `request_sent`, the ledger entry of one API
 *   request: the tool results it sent for the first time, with their rows,
 *   bytes, columns and redactions (§4.6, docs/ledger.md)
 *
 * The type of an event, docs/architecture.md §4. Each value's nick is its
 * wire name, the `type` member of the event; tally_event_type_to_name()
 * and tally_event_type_from_name() convert, and nothing outside this
 * module spells a wire name. Adding a type: docs/architecture.md §4.8.
 */
typedef enum {
  TALLY_EVENT_UNKNOWN,                       /*< nick=unknown >*/
  TALLY_EVENT_SESSION_CREATED,               /*< nick=session_created >*/
  TALLY_EVENT_TURN_STARTED,                  /*< nick=turn_started >*/
  TALLY_EVENT_REDIRECT,                      /*< nick=redirect >*/
  TALLY_EVENT_TURN_FINISHED,                 /*< nick=turn_finished >*/
  TALLY_EVENT_TEXT_DELTA,                    /*< nick=text_delta >*/
  TALLY_EVENT_THINKING_DELTA,                /*< nick=thinking_delta >*/
  TALLY_EVENT_BLOCK_DONE,                    /*< nick=block_done >*/
  TALLY_EVENT_TOOL_USE_START,                /*< nick=tool_use_start >*/
  TALLY_EVENT_TOOL_RESULT,                   /*< nick=tool_result >*/
  TALLY_EVENT_APPROVAL_REQUEST,              /*< nick=approval_request >*/
  TALLY_EVENT_APPROVAL_RESOLVED,             /*< nick=approval_resolved >*/
  TALLY_EVENT_QUESTION_REQUEST,              /*< nick=question_request >*/
  TALLY_EVENT_QUESTION_RESOLVED,             /*< nick=question_resolved >*/
  TALLY_EVENT_PLAN_PROPOSED,                 /*< nick=plan_proposed >*/
  TALLY_EVENT_API_CALL,                      /*< nick=api_call >*/
  TALLY_EVENT_RETRY,                         /*< nick=retry >*/
  TALLY_EVENT_ERROR,                         /*< nick=error >*/
  TALLY_EVENT_CHART_CREATED,                 /*< nick=chart_created >*/
  TALLY_EVENT_REQUEST_SENT,                  /*< nick=request_sent >*/
} TallyEventType;

const char     *tally_event_type_to_name   (TallyEventType  type);
TallyEventType  tally_event_type_from_name (const char     *name);

/*
 * A TallyEvent is a JSON object (a #JsonObject) with the members `type`,
 * `seq`, `ts` (µs since the Unix epoch), `session_id`, `turn_id` and the
 * members of its type, as listed in docs/architecture.md §4. It is
 * the one vocabulary between the core and its faces: the store persists it
 * verbatim, the transcript applies it and `tally-cli --json` prints it.
 */

JsonObject *tally_event_new             (TallyEventType type);
JsonObject *tally_event_new_named       (const char *type);
JsonObject *tally_event_new_chart_created (const char *chart_id,
                                           const char *tool_id,
                                           JsonObject *artifact);
JsonObject *tally_event_new_error       (const char *kind,
                                         const char *message,
                                         gboolean    retryable,
                                         const char *request_id);
JsonObject *tally_event_new_turn_finished (TallyTurnStatus status,
                                           gboolean        priced,
                                           double          cost_usd,
                                           gint64          duration_ms,
                                           gint64          api_calls);
JsonObject *tally_event_stamp           (JsonObject *fields,
                                         gint64      seq,
                                         gint64      ts,
                                         const char *session_id,
                                         const char *turn_id);
char       *tally_event_to_json         (JsonObject *event);
JsonObject *tally_event_from_json       (const char *text,
                                         GError    **error);
TallyEventType tally_event_get_event_type (JsonObject *event);
const char *tally_event_get_type_name   (JsonObject *event);
gint64      tally_event_get_seq         (JsonObject *event);
gint64      tally_event_get_ts          (JsonObject *event);
const char *tally_event_get_session_id  (JsonObject *event);
const char *tally_event_get_turn_id     (JsonObject *event);
gint64      tally_event_get_call        (JsonObject *event);
gint64      tally_event_get_block       (JsonObject *event);
const char *tally_event_get_text        (JsonObject *event);
const char *tally_event_get_tool_id     (JsonObject *event);

void        tally_event_set_usage       (JsonObject *event,
                                         const char *member,
                                         gint64      input_tokens,
                                         gint64      output_tokens,
                                         gint64      cache_creation_input_tokens,
                                         gint64      cache_read_input_tokens);

G_END_DECLS
