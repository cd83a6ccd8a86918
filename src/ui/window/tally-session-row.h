/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-session-info.h"

G_BEGIN_DECLS

/**
 * TallySessionGroup:
 * @TALLY_SESSION_GROUP_PINNED: pinned by the analyst, listed first
 * @TALLY_SESSION_GROUP_TODAY: last used today (local time)
 * @TALLY_SESSION_GROUP_YESTERDAY: last used yesterday
 * @TALLY_SESSION_GROUP_EARLIER: last used before yesterday
 *
 * The sections of the sessions sidebar, in the order they are listed.
 */
typedef enum {
  TALLY_SESSION_GROUP_PINNED,
  TALLY_SESSION_GROUP_TODAY,
  TALLY_SESSION_GROUP_YESTERDAY,
  TALLY_SESSION_GROUP_EARLIER,
} TallySessionGroup;

const char *tally_session_group_get_title (TallySessionGroup group);

#define TALLY_TYPE_SESSION_ROW (tally_session_row_get_type ())

G_DECLARE_FINAL_TYPE (TallySessionRow, tally_session_row, TALLY, SESSION_ROW, GtkListBoxRow)

GtkWidget        *tally_session_row_new          (TallySessionInfo *info);
TallySessionInfo *tally_session_row_get_info     (TallySessionRow  *self);
void              tally_session_row_set_info     (TallySessionRow  *self,
                                                  TallySessionInfo *info);
const char       *tally_session_row_get_id       (TallySessionRow  *self);
const char       *tally_session_row_get_title    (TallySessionRow  *self);
const char       *tally_session_row_get_folded_title (TallySessionRow *self);
void              tally_session_row_set_snippet  (TallySessionRow  *self,
                                                  const char       *snippet);
void              tally_session_row_start_rename (TallySessionRow  *self);
char             *tally_session_row_format_date  (gint64            time_us,
                                                  gint64            now_us);
char             *tally_session_row_format_cost  (const TallySessionInfo *info);
char             *tally_session_row_snippet_to_plain (const char   *snippet);
gint64            tally_session_row_get_when     (TallySessionRow  *self);
TallySessionGroup tally_session_row_get_group    (TallySessionRow  *self,
                                                  gint64            now_us);

G_END_DECLS
