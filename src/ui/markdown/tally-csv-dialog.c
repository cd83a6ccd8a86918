/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The save-as-CSV dialog and its error message, shared by the tables that
 * can leave the window: markdown tables and query results.
 */

#include "config.h"

#include "tally-csv-dialog.h"

#include <adwaita.h>
#include <glib/gi18n.h>

/**
 * tally_csv_dialog_new_chooser:
 * @owner: the table widget that saves; its window becomes the parent
 * @suggested_name: the file name offered, already translated
 *
 * Makes a modal save chooser titled "Save Table as CSV" with a filter for
 * CSV files. The caller connects to #GtkNativeDialog::response and shows
 * it.
 *
 * Returns: (transfer full): the chooser
 */
GtkFileChooserNative *
tally_csv_dialog_new_chooser (GtkWidget  *owner,
                              const char *suggested_name)
{
  GtkRoot *root = gtk_widget_get_root (owner);
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  GtkFileChooserNative *chooser;

  g_return_val_if_fail (GTK_IS_WIDGET (owner), NULL);

  chooser = gtk_file_chooser_native_new (_("Save Table as CSV"),
                                         GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                         GTK_FILE_CHOOSER_ACTION_SAVE,
                                         _("_Save"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), suggested_name);
  gtk_file_filter_set_name (filter, _("CSV Files"));
  gtk_file_filter_add_mime_type (filter, "text/csv");
  gtk_file_filter_add_suffix (filter, "csv");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);

  return chooser;
}

/**
 * tally_csv_dialog_show_error:
 * @owner: the table widget whose save failed
 * @error: why; a %G_IO_ERROR_CANCELLED is not shown
 *
 * Tells the analyst that the table could not be saved, in a dialog over
 * @owner's window.
 */
void
tally_csv_dialog_show_error (GtkWidget    *owner,
                             const GError *error)
{
  GtkRoot *root;
  GtkWidget *dialog;

  g_return_if_fail (GTK_IS_WIDGET (owner));
  g_return_if_fail (error != NULL);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  root = gtk_widget_get_root (owner);
  dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                   _("Could Not Save the Table"), error->message);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  gtk_window_present (GTK_WINDOW (dialog));
}
