/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define TALLY_TYPE_SESSION_INFO (tally_session_info_get_type ())

/**
 * TallySessionInfo:
 * @id: the session's id
 * @title: the session's title (empty when the session never had one)
 * @created_us: when the session was created, µs since the Unix epoch (UTC)
 * @updated_us: the time of the session's newest stored event, µs since the
 *   Unix epoch
 * @model: (nullable): the model of the session's newest turn
 * @workspace: (nullable): the workspace folder the session was created with
 * @database: (nullable): the database file the session was created with
 * @cost_usd: the summed cost of the finished turns in US dollars, or NAN
 *   when it is unknown (a turn ran on a model without a known price); use
 *   tally_session_info_has_cost()
 * @input_tokens: summed uncached input tokens of the finished turns
 * @output_tokens: summed output tokens of the finished turns
 * @cache_read_tokens: summed `cache_read_input_tokens`
 * @cache_write_tokens: summed `cache_creation_input_tokens`
 * @turns: how many turns were started in the session
 * @last_mode: (nullable): the mode of the newest turn (`ask`, `plan`, `auto`)
 * @snippet: (nullable): for a search result, a short excerpt of the matching
 *   text with each match wrapped in `«` and `»`; %NULL otherwise
 * @pinned: whether the analyst pinned the session to the top of the
 *   sidebar (tally_store_set_session_pinned())
 *
 * One row of the store's `sessions` table, as listed by
 * tally_store_list_sessions() or found by tally_store_search(). A
 * reference-counted boxed record; its fields are read-only for callers.
 */
typedef struct _TallySessionInfo TallySessionInfo;

struct _TallySessionInfo
{
  char   *id;
  char   *title;
  gint64  created_us;
  gint64  updated_us;
  char   *model;
  char   *workspace;
  char   *database;
  double  cost_usd;
  gint64  input_tokens;
  gint64  output_tokens;
  gint64  cache_read_tokens;
  gint64  cache_write_tokens;
  gint64  turns;
  char   *last_mode;
  char   *snippet;
  gboolean pinned;

  /*< private >*/
  gatomicrefcount ref_count;
};

GType             tally_session_info_get_type (void) G_GNUC_CONST;
TallySessionInfo *tally_session_info_new      (const char             *id);
TallySessionInfo *tally_session_info_ref      (TallySessionInfo       *self);
void              tally_session_info_unref    (TallySessionInfo       *self);
gboolean          tally_session_info_has_cost (const TallySessionInfo *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallySessionInfo, tally_session_info_unref)

G_END_DECLS
