/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-store.h"
#include "tally-transcript.h"
#include "tally-types.h"

G_BEGIN_DECLS

/* The format of the snapshots this build writes and reads
 * (docs/architecture.md §10.2, `snapshots`). A new member, block kind or
 * meaning gets a new number, so older snapshots are rebuilt from the log. */
#define TALLY_SNAPSHOT_FORMAT 1

/**
 * TallySessionState:
 * @max_seq: the highest `seq` seen
 * @has_mode: whether a `turn_started` set @mode
 * @mode: the mode of the last turn
 * @model: (nullable): the model of the last turn that named one
 * @notes_in_prompt: (nullable): the notes the system prompt was built with
 * @notes_told: (nullable): the notes the model was last told
 * @spent: the summed `cost_usd` of the finished turns, in US dollars
 * @plan_id: (nullable): the last proposed plan
 * @plan_version: its version
 *
 * What a session learns from its log besides the transcript, folded one
 * event at a time (tally_session_state_fold()) by the live session and by
 * a replay alike, and kept with each snapshot.
 */
typedef struct {
  gint64     max_seq;
  gboolean   has_mode;
  TallyMode  mode;
  char      *model;
  char      *notes_in_prompt;
  char      *notes_told;
  double     spent;
  char      *plan_id;
  gint64     plan_version;
} TallySessionState;

void        tally_session_state_clear   (TallySessionState       *state);
void        tally_session_state_fold    (TallySessionState       *state,
                                         JsonObject              *event);
JsonObject *tally_session_state_to_json (const TallySessionState *state,
                                         const char              *title);

/**
 * TallySessionLoad:
 * @transcript: the session's transcript, every event applied
 * @state: the state folded over every event
 * @tail: (element-type JsonObject): the events applied on top of the
 *   snapshot (all of them when the log was replayed whole), in `seq` order
 * @warnings: (element-type utf8): damaged event rows that were skipped
 * @from_snapshot: whether the snapshot was used
 * @snapshot_problem: (nullable): why a stored snapshot was not used (in
 *   %TALLY_SNAPSHOT_ERROR: damaged, another format, stale); %NULL when it
 *   was used or there was none
 *
 * What tally_session_load() found.
 */
typedef struct {
  TallyTranscript   *transcript;
  TallySessionState  state;
  GPtrArray         *tail;
  GPtrArray         *warnings;
  gboolean           from_snapshot;
  GError            *snapshot_problem;
} TallySessionLoad;

gboolean    tally_session_load          (TallyStore              *store,
                                         const char              *session_id,
                                         TallySessionLoad        *load,
                                         GError                 **error);
void        tally_session_load_clear    (TallySessionLoad        *load);
gboolean    tally_session_save_snapshot (TallyStore              *store,
                                         const char              *session_id,
                                         gint64                   seq,
                                         const TallySessionState *state,
                                         TallyTranscript         *transcript,
                                         GError                 **error);

/**
 * TallySnapshotWriter:
 *
 * Writes a live session's snapshots off the main loop
 * (docs/architecture.md §3.3): told that a turn settled, it builds the
 * snapshot in a worker thread of its own from the store — the last
 * snapshot it built (or the stored one) and the events after it — and
 * queues it behind the turn's events. Snapshots are built one at a time,
 * in order, and a settled turn that a later one overtakes is skipped.
 */
typedef struct _TallySnapshotWriter TallySnapshotWriter;

TallySnapshotWriter *tally_snapshot_writer_new     (TallyStore          *store,
                                                    const char          *session_id);
void                 tally_snapshot_writer_settled (TallySnapshotWriter *self,
                                                    gint64               seq);
void                 tally_snapshot_writer_close   (TallySnapshotWriter *self);
void                 tally_session_wait_snapshots  (void);

G_END_DECLS
