/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <gio/gio.h>

#include "tally-store.h"

G_BEGIN_DECLS

/**
 * TallyReportFormat:
 * @TALLY_REPORT_FORMAT_HTML: one self-contained HTML file: CSS inline,
 *   charts as inline SVG, no script, nothing fetched
 * @TALLY_REPORT_FORMAT_PDF: a paginated PDF, A4 or Letter by the locale's
 *   `LC_PAPER`, charts as vectors
 * @TALLY_REPORT_FORMAT_MD: a saved session's Markdown export, as
 *   tally_export_session_markdown_full() writes it; sessions only
 * @TALLY_REPORT_FORMAT_JSONL: a saved session's events, one JSON object a
 *   line, as tally_store_export_jsonl() writes them; sessions only
 *
 * The formats a report or a session is exported to (docs/reports.md §1);
 * the nicks (`html`, `pdf`, `md`, `jsonl`) are the names
 * tally_report_format_from_string() reads. A Markdown report file is
 * rendered to HTML or PDF only.
 */
typedef enum {
  TALLY_REPORT_FORMAT_HTML,
  TALLY_REPORT_FORMAT_PDF,
  TALLY_REPORT_FORMAT_MD,
  TALLY_REPORT_FORMAT_JSONL,
} TallyReportFormat;

/**
 * TALLY_REPORT_ERROR:
 *
 * The error domain of the report exports; codes are #TallyReportError.
 */
#define TALLY_REPORT_ERROR (tally_report_error_quark ())

/**
 * TallyReportError:
 * @TALLY_REPORT_ERROR_READ: the Markdown file (or the session) could not
 *   be read
 * @TALLY_REPORT_ERROR_WRITE: the output could not be written (a folder
 *   that does not exist, no permission, a full disk); nothing is left at
 *   the output's path
 * @TALLY_REPORT_ERROR_INVALID: the input is not valid UTF-8 text, or an
 *   argument is out of range
 *
 * Error codes of %TALLY_REPORT_ERROR.
 */
typedef enum {
  TALLY_REPORT_ERROR_READ,
  TALLY_REPORT_ERROR_WRITE,
  TALLY_REPORT_ERROR_INVALID,
} TallyReportError;

GQuark   tally_report_error_quark            (void);

gboolean tally_report_format_from_string     (const char          *name,
                                              TallyReportFormat   *format);
gboolean tally_report_format_is_rendered     (TallyReportFormat    format);
char    *tally_report_dup_session_text       (TallyStore          *store,
                                              const char          *session_id,
                                              TallyReportFormat    format,
                                              gboolean             include_thinking,
                                              GError             **error);

char    *tally_report_file_to_html           (GFile               *markdown_file,
                                              GCancellable        *cancellable,
                                              GError             **error);

gboolean tally_report_export_file            (GFile               *markdown_file,
                                              TallyReportFormat    format,
                                              GFile               *output,
                                              GCancellable        *cancellable,
                                              GError             **error);
void     tally_report_export_file_async      (GFile               *markdown_file,
                                              TallyReportFormat    format,
                                              GFile               *output,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean tally_report_export_file_finish     (GAsyncResult        *result,
                                              GError             **error);

gboolean tally_report_export_session         (TallyStore          *store,
                                              const char          *session_id,
                                              TallyReportFormat    format,
                                              gboolean             include_thinking,
                                              GFile               *output,
                                              GCancellable        *cancellable,
                                              GError             **error);
void     tally_report_export_session_async   (TallyStore          *store,
                                              const char          *session_id,
                                              TallyReportFormat    format,
                                              gboolean             include_thinking,
                                              GFile               *output,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean tally_report_export_session_finish  (GAsyncResult        *result,
                                              GError             **error);

gboolean tally_report_file_resolves_inside   (GFile               *folder,
                                              GFile               *file);
gboolean tally_report_write_atomic           (GFile               *output,
                                              const char          *data,
                                              gsize                length,
                                              GCancellable        *cancellable,
                                              GError             **error);

G_END_DECLS

/* TALLY_TYPE_REPORT_FORMAT and TALLY_TYPE_REPORT_ERROR (glib-mkenums) */
#include "tally-report-enums.h"
