/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

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
 *
 * What a transcript block shows.
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
} TallyBlockKind;

#define TALLY_TYPE_BLOCK_KIND (tally_block_kind_get_type ())
GType tally_block_kind_get_type (void);

const char *tally_block_kind_to_string (TallyBlockKind kind);

#define TALLY_TYPE_BLOCK (tally_block_get_type ())

G_DECLARE_FINAL_TYPE (TallyBlock, tally_block, TALLY, BLOCK, GObject)

TallyBlock     *tally_block_new            (TallyBlockKind  kind,
                                            const char     *turn_id);
TallyBlockKind  tally_block_get_kind       (TallyBlock     *self);
const char     *tally_block_get_turn_id    (TallyBlock     *self);
const char     *tally_block_get_text       (TallyBlock     *self);
void            tally_block_set_text       (TallyBlock     *self,
                                            const char     *text);
void            tally_block_append_text    (TallyBlock     *self,
                                            const char     *text);
gboolean        tally_block_get_finished   (TallyBlock     *self);
void            tally_block_set_finished   (TallyBlock     *self,
                                            gboolean        finished);
gboolean        tally_block_get_incomplete (TallyBlock     *self);
void            tally_block_set_incomplete (TallyBlock     *self,
                                            gboolean        incomplete);
const char     *tally_block_get_state      (TallyBlock     *self);
void            tally_block_set_state      (TallyBlock     *self,
                                            const char     *state);
const char     *tally_block_get_tool_id    (TallyBlock     *self);
const char     *tally_block_get_tool_name  (TallyBlock     *self);
const char     *tally_block_get_tool_input (TallyBlock     *self);
void            tally_block_set_tool       (TallyBlock     *self,
                                            const char     *tool_id,
                                            const char     *tool_name,
                                            const char     *tool_input);
const char     *tally_block_get_result     (TallyBlock     *self);
gboolean        tally_block_get_is_error   (TallyBlock     *self);
gint64          tally_block_get_duration_ms (TallyBlock    *self);
void            tally_block_set_result     (TallyBlock     *self,
                                            const char     *result,
                                            gboolean        is_error,
                                            gint64          duration_ms);
JsonObject     *tally_block_get_details    (TallyBlock     *self);
void            tally_block_set_details    (TallyBlock     *self,
                                            JsonObject     *details);
guint           tally_block_get_word_count (TallyBlock     *self);
char           *tally_block_dup_trace      (TallyBlock     *self);

G_END_DECLS
