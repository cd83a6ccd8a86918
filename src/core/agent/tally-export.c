/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * A stored session as Markdown: the store's events, replayed through the
 * transcript reducer, written by tally_transcript_export_markdown(). It
 * sits in the agent layer because it needs both the store and the
 * transcript (docs/architecture.md §2).
 */

#define G_LOG_DOMAIN "tally-export"

#include "config.h"

#include "tally-event.h"
#include "tally-export.h"
#include "tally-transcript-export.h"

/**
 * tally_export_session_markdown:
 * @store: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * tally_export_session_markdown_full() without thinking and charts.
 *
 * Returns: (transfer full) (nullable): the Markdown text; %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND when there is no such session, or another
 *   %TALLY_STORE_ERROR when the store cannot be read
 */
char *
tally_export_session_markdown (TallyStore  *store,
                               const char  *session_id,
                               GError     **error)
{
  return tally_export_session_markdown_full (store, session_id, FALSE, NULL, error);
}

/**
 * tally_export_session_markdown_full:
 * @store: a #TallyStore
 * @session_id: the session's full id
 * @include_thinking: whether thinking is written out in full rather than
 *   as its word count
 * @charts: (out) (optional) (transfer container) (element-type JsonObject):
 *   the session's `chart_created` events in order, so a renderer can draw
 *   each chart from its spec (docs/reports.md §3)
 * @error: return location for a #GError
 *
 * Loads the session's events from @store, replays them through a
 * #TallyTranscript and writes the result as Markdown (see
 * tally_transcript_export_markdown()), so any stored session can be
 * exported, also offline. Damaged events are skipped by the load and
 * counted at the end of the export.
 *
 * Returns: (transfer full) (nullable): the Markdown text; %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND when there is no such session, or another
 *   %TALLY_STORE_ERROR when the store cannot be read
 */
char *
tally_export_session_markdown_full (TallyStore  *store,
                                    const char  *session_id,
                                    gboolean     include_thinking,
                                    GPtrArray  **charts,
                                    GError     **error)
{
  g_autoptr(TallySessionInfo) info = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(TallyTranscript) transcript = NULL;
  TallyTranscriptExportHeader header = { 0 };

  g_return_val_if_fail (TALLY_IS_STORE (store), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  events = tally_store_load_events (store, session_id, &warnings, error);
  if (events == NULL)
    return NULL;
  info = tally_store_find_session (store, session_id, error);
  if (info == NULL)
    return NULL;

  transcript = tally_transcript_new ();
  if (charts != NULL)
    *charts = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);

      tally_transcript_apply (transcript, event);
      if (charts != NULL && tally_event_get_event_type (event) == TALLY_EVENT_CHART_CREATED)
        g_ptr_array_add (*charts, json_object_ref (event));
    }

  header.title = info->title;
  header.created_us = info->created_us;
  header.model = info->model;
  header.database = info->database;
  header.turns = info->turns;
  header.has_cost = tally_session_info_has_cost (info);
  header.cost_usd = info->cost_usd;
  header.damaged_events = warnings != NULL ? warnings->len : 0;
  header.include_thinking = include_thinking;

  return tally_transcript_export_markdown (transcript, &header);
}
