/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-export-dialog.h"

G_BEGIN_DECLS

#define TALLY_TYPE_REPORT_WINDOW (tally_report_window_get_type ())

G_DECLARE_FINAL_TYPE (TallyReportWindow, tally_report_window, TALLY, REPORT_WINDOW, AdwWindow)

/**
 * TallyReportNavigation:
 * @TALLY_REPORT_NAVIGATION_ALLOW: the report's own page, or an anchor on it
 * @TALLY_REPORT_NAVIGATION_OPEN: a clicked link that opens outside: an
 *   http, https or mailto link, or a regular file in the report's folder
 *   or below it
 * @TALLY_REPORT_NAVIGATION_REFUSE: a clicked link that does not open; the
 *   window says so
 * @TALLY_REPORT_NAVIGATION_IGNORE: any other navigation (a form, a
 *   redirect, a frame): refused without a word
 *
 * What the report preview's web view does with a navigation.
 */
typedef enum {
  TALLY_REPORT_NAVIGATION_ALLOW,
  TALLY_REPORT_NAVIGATION_OPEN,
  TALLY_REPORT_NAVIGATION_REFUSE,
  TALLY_REPORT_NAVIGATION_IGNORE,
} TallyReportNavigation;

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
GtkNativeDialog *_tally_report_window_get_chooser (TallyReportWindow *self);
guint       _tally_report_window_get_n_loads   (TallyReportWindow *self);
gboolean    _tally_report_window_get_changed (TallyReportWindow *self);
TallyReportNavigation _tally_report_window_classify_navigation (GFile      *report,
                                                                const char *uri,
                                                                gboolean    link_clicked,
                                                                gboolean    form_submitted);

G_END_DECLS
