/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-report.h"

G_BEGIN_DECLS

/**
 * TallyExportFormat:
 * @TALLY_EXPORT_MARKDOWN: Markdown (`.md`), the transcript export
 * @TALLY_EXPORT_HTML: one self-contained HTML file (`.html`)
 * @TALLY_EXPORT_PDF: a PDF (`.pdf`)
 * @TALLY_EXPORT_JSONL: the session's events, one JSON object a line
 *   (`.jsonl`)
 *
 * What a session or report is exported as from the window.
 */
typedef enum {
  TALLY_EXPORT_MARKDOWN,
  TALLY_EXPORT_HTML,
  TALLY_EXPORT_PDF,
  TALLY_EXPORT_JSONL,
} TallyExportFormat;

const char           *tally_export_format_get_id        (TallyExportFormat   format);
TallyReportFormat     tally_export_format_to_report     (TallyExportFormat   format);
gboolean              tally_export_format_from_id       (const char         *id,
                                                         TallyExportFormat  *format);
GFile                *tally_export_file_with_suffix     (GFile              *file,
                                                         TallyExportFormat   format);

GtkFileChooserNative *tally_export_dialog_new_chooser   (GtkWidget          *owner,
                                                         const char         *title,
                                                         const char         *base_name,
                                                         TallyExportFormat   format,
                                                         gboolean            session,
                                                         GFile              *folder);
TallyExportFormat     tally_export_dialog_get_format    (GtkFileChooser     *chooser,
                                                         TallyExportFormat   fallback);
gboolean              tally_export_dialog_get_include_thinking (GtkFileChooser *chooser);
GFile                *tally_export_dialog_dup_output    (GtkNativeDialog    *chooser,
                                                         int                 response,
                                                         TallyExportFormat   fallback,
                                                         TallyExportFormat  *format,
                                                         gboolean           *unasked);

/**
 * TallyExportReplaceFunc:
 * @owner: the widget that asked, still alive
 * @user_data: the data given to tally_export_dialog_ask_replace()
 *
 * Writes the export, once the analyst has chosen to replace the file.
 */
typedef void (*TallyExportReplaceFunc) (GtkWidget *owner,
                                        gpointer   user_data);

void                  tally_export_dialog_ask_replace   (GtkWidget              *owner,
                                                         GFile                  *output,
                                                         TallyExportReplaceFunc  replace,
                                                         gpointer                user_data,
                                                         GDestroyNotify          destroy);

AdwToast             *tally_export_dialog_new_done_toast (GFile             *output,
                                                          const char        *open_action);

/**
 * TallyExportJob:
 * @owner: (type GObject): the window that asked, a strong reference
 * @output: the file being written, a strong reference
 *
 * What an export callback needs: made with tally_export_job_new(), freed
 * with tally_export_job_free().
 */
typedef struct {
  gpointer  owner;
  GFile    *output;
} TallyExportJob;

TallyExportJob       *tally_export_job_new              (gpointer            owner,
                                                         GFile              *output);
void                  tally_export_job_free             (TallyExportJob     *job);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyExportJob, tally_export_job_free)

G_END_DECLS
