/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/**
 * TallyCsvDialogSaveFunc:
 * @owner: the table widget that asked
 * @file: the file the analyst chose
 *
 * Writes the table to @file; see tally_csv_dialog_save().
 */
typedef void (*TallyCsvDialogSaveFunc) (GtkWidget *owner,
                                        GFile     *file);

void tally_csv_dialog_save       (GtkWidget              *owner,
                                  const char             *suggested_name,
                                  TallyCsvDialogSaveFunc  save);
void tally_csv_dialog_show_error (GtkWidget              *owner,
                                  const GError           *error);

G_END_DECLS
