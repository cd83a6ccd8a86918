/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-session-info.h"

G_BEGIN_DECLS

#define TALLY_TYPE_SESSION_ROW (tally_session_row_get_type ())

G_DECLARE_FINAL_TYPE (TallySessionRow, tally_session_row, TALLY, SESSION_ROW, GtkListBoxRow)

GtkWidget        *tally_session_row_new          (TallySessionInfo *info);
TallySessionInfo *tally_session_row_get_info     (TallySessionRow  *self);
void              tally_session_row_set_info     (TallySessionRow  *self,
                                                  TallySessionInfo *info);
const char       *tally_session_row_get_id       (TallySessionRow  *self);
const char       *tally_session_row_get_title    (TallySessionRow  *self);
void              tally_session_row_set_snippet  (TallySessionRow  *self,
                                                  const char       *snippet);
void              tally_session_row_start_rename (TallySessionRow  *self);
char             *tally_session_row_format_date  (gint64            time_us,
                                                  gint64            now_us);
char             *tally_session_row_format_cost  (const TallySessionInfo *info);

G_END_DECLS
