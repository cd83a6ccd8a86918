/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-export-dialog.h"

G_BEGIN_DECLS

#define TALLY_TYPE_REPORT_WINDOW (tally_report_window_get_type ())

G_DECLARE_FINAL_TYPE (TallyReportWindow, tally_report_window, TALLY, REPORT_WINDOW, AdwWindow)

GtkWidget  *tally_report_window_new       (GtkWindow         *parent,
                                           GFile             *file);
GFile      *tally_report_window_get_file  (TallyReportWindow *self);
void        tally_report_window_reload    (TallyReportWindow *self);
void        tally_report_window_export    (TallyReportWindow *self,
                                           TallyExportFormat  format,
                                           GFile             *output);

/* For tests */
const char *_tally_report_window_get_state (TallyReportWindow *self);
const char *_tally_report_window_get_html  (TallyReportWindow *self);
GtkWidget  *_tally_report_window_get_web_view (TallyReportWindow *self);
guint       _tally_report_window_get_n_exports (TallyReportWindow *self);
guint       _tally_report_window_get_n_loads   (TallyReportWindow *self);
gboolean    _tally_report_window_get_changed (TallyReportWindow *self);

G_END_DECLS
