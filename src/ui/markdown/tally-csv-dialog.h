/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-csv.h"

G_BEGIN_DECLS

/**
 * TallyCsvDialogTextFunc:
 * @owner: the table widget
 * @format: %TALLY_CSV_FORMAT_TSV for the clipboard or
 *   %TALLY_CSV_FORMAT_CSV for a file
 *
 * Writes the table's text with tally_csv_format_table() or
 * tally_csv_append_row(), the header row first.
 *
 * Returns: (transfer full): the text, UTF-8
 */
typedef char *(*TallyCsvDialogTextFunc) (GtkWidget      *owner,
                                         TallyCsvFormat  format);

void       tally_csv_dialog_install_actions (GtkWidgetClass         *widget_class,
                                             TallyCsvDialogTextFunc  text_func,
                                             const char             *suggested_name);
GtkWidget *tally_csv_dialog_new_header      (void);
void       tally_csv_dialog_save_async      (GtkWidget              *owner,
                                             GFile                  *file,
                                             GCancellable           *cancellable,
                                             GAsyncReadyCallback     callback,
                                             gpointer                user_data);
gboolean   tally_csv_dialog_save_finish     (GFile                  *file,
                                             GAsyncResult           *result,
                                             GError                **error);

G_END_DECLS
