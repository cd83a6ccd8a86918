/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-store.h"

G_BEGIN_DECLS

/**
 * TallyStoreSnapshot:
 * @seq: the `seq` of the last event the snapshot covers (a
 *   `turn_finished`)
 * @format: the format version its writer used; a reader that does not
 *   know it rebuilds the snapshot from the log
 * @state: the session's own state at @seq, a JSON object as text
 * @blocks: the settled blocks, one JSON array as text
 *
 * One row of the `snapshots` table (docs/architecture.md §10.2): what the
 * session's transcript held after a settled turn. The store keeps the
 * texts as given; what they mean is the session's business.
 */
typedef struct {
  gint64  seq;
  gint64  format;
  char   *state;
  char   *blocks;
} TallyStoreSnapshot;

void                tally_store_snapshot_free    (TallyStoreSnapshot  *snapshot);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyStoreSnapshot, tally_store_snapshot_free)

gboolean            tally_store_save_snapshot    (TallyStore          *self,
                                                  const char          *session_id,
                                                  gint64               seq,
                                                  gint64               format,
                                                  const char          *state,
                                                  const char          *blocks,
                                                  GError             **error);
gboolean            tally_store_load_snapshot    (TallyStore          *self,
                                                  const char          *session_id,
                                                  TallyStoreSnapshot **snapshot,
                                                  GError             **error);
GPtrArray          *tally_store_load_events_after (TallyStore         *self,
                                                  const char          *session_id,
                                                  gint64               after_seq,
                                                  GPtrArray          **warnings,
                                                  GError             **error);

G_END_DECLS
