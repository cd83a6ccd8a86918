/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

#include "tally-types.h"

G_BEGIN_DECLS

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
