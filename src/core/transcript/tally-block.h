/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

#include "tally-types.h"

G_BEGIN_DECLS

#define TALLY_SNAPSHOT_ERROR (tally_snapshot_error_quark ())

/**
 * TallySnapshotError:
 * @TALLY_SNAPSHOT_ERROR_INVALID: a block's or a snapshot's JSON form does not
 *   have the expected shape (a member of the wrong type, an unknown kind)
 * @TALLY_SNAPSHOT_ERROR_FORMAT: a snapshot was written in another format
 *   version than this build's
 * @TALLY_SNAPSHOT_ERROR_STALE: a snapshot is older than the log's last
 *   settled turn
 *
 * Errors of tally_block_new_from_json() and of restoring a transcript
 * from a snapshot of settled blocks (tally_transcript_new_from_snapshot(),
 * docs/architecture.md §10.2). None of them loses data: the session
 * replays its event log instead.
 */
typedef enum {
  TALLY_SNAPSHOT_ERROR_INVALID,
  TALLY_SNAPSHOT_ERROR_FORMAT,
  TALLY_SNAPSHOT_ERROR_STALE,
} TallySnapshotError;

GQuark tally_snapshot_error_quark (void);

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
JsonObject     *tally_block_to_json        (TallyBlock     *self);
TallyBlock     *tally_block_new_from_json  (JsonObject     *object,
                                            GError        **error);

G_END_DECLS
