/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include "tally-store-private.h"
#include "tally-store-snapshot.h"

/*
 * Snapshots of settled blocks (docs/architecture.md §10.2, `snapshots`).
 * The session writes one when a turn settles, through the writer's queue
 * right after the turn's last event, so the snapshot never runs ahead of
 * the log it was made from. Reading it back is in tally-store-read.c with
 * the other reads. The log stays the truth: a snapshot is only ever a
 * shortcut the session checks against it.
 */

/**
 * tally_store_snapshot_free:
 * @snapshot: (nullable): a snapshot from tally_store_load_snapshot()
 *
 * Frees @snapshot and its texts.
 */
void
tally_store_snapshot_free (TallyStoreSnapshot *snapshot)
{
  if (snapshot == NULL)
    return;
  g_free (snapshot->state);
  g_free (snapshot->blocks);
  g_free (snapshot);
}

/**
 * tally_store_save_snapshot:
 * @self: a #TallyStore
 * @session_id: the session
 * @seq: the `seq` of the last event the snapshot covers, > 0
 * @format: the snapshot's format version
 * @state: the session's state as JSON text
 * @blocks: the settled blocks as JSON text
 * @error: return location for a #GError
 *
 * Queues the replacement of the session's snapshot, in order with its
 * events: it is committed with, or after, the event @seq. A read-only
 * store keeps the snapshot it has (snapshots are derived data; nothing is
 * refused or lost).
 *
 * Returns: %TRUE when queued (or skipped on a read-only store); %FALSE
 *   with %TALLY_STORE_ERROR_INVALID when @seq is not positive. Write
 *   failures are reported as for tally_store_append_event().
 */
gboolean
tally_store_save_snapshot (TallyStore  *self,
                           const char  *session_id,
                           gint64       seq,
                           gint64       format,
                           const char  *state,
                           const char  *blocks,
                           GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (blocks != NULL, FALSE);

  if (seq <= 0)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                   "A snapshot must cover at least one event (seq %" G_GINT64_FORMAT ")", seq);
      return FALSE;
    }
  if (self->read_only)
    return TRUE;

  item = tally_store_item_new (ITEM_SNAPSHOT);
  item->session_id = g_strdup (session_id);
  item->seq = seq;
  item->number = format;
  item->text = g_strdup (state);
  item->payload = g_strdup (blocks);
  g_async_queue_push (self->queue, item);

  return TRUE;
}
