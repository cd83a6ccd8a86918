/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The save-as-CSV dialog and its error message, shared by the tables that
 * can leave the window: markdown tables and query results. The chooser
 * is kept on the table widget (object data), so neither keeps its own.
 */

#include "config.h"

#include "tally-csv-dialog.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#define CHOOSER_KEY "tally-csv-dialog-chooser"
#define SAVE_KEY "tally-csv-dialog-save"

/* A modal save chooser titled "Save Table as CSV" with a filter for CSV
 * files, over @owner's window. */
static GtkFileChooserNative *
new_chooser (GtkWidget  *owner,
             const char *suggested_name)
{
  GtkRoot *root = gtk_widget_get_root (owner);
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  GtkFileChooserNative *chooser;

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

/* Drops the owner's chooser, closing it when it is still open (the owner
 * went away first). */
static void
chooser_free (gpointer data)
{
  GtkNativeDialog *chooser = data;

  if (gtk_native_dialog_get_visible (chooser))
    gtk_native_dialog_destroy (chooser);
  g_object_unref (chooser);
}

static void
chooser_response_cb (GtkNativeDialog *chooser,
                     int              response,
                     GtkWidget       *owner)
{
  TallyCsvDialogSaveFunc save = g_object_get_data (G_OBJECT (chooser), SAVE_KEY);
  g_autoptr(GFile) file = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  /* The chooser is done: the next Save opens a new one. */
  g_object_set_data (G_OBJECT (owner), CHOOSER_KEY, NULL);
  if (file != NULL)
    save (owner, file);
}

/**
 * tally_csv_dialog_save:
 * @owner: the table widget that saves; its window becomes the parent
 * @suggested_name: the file name offered, already translated
 * @save: (scope forever): called with @owner and the chosen file when
 *   the analyst saves (not when they cancel); it writes the file and
 *   reports a failure, e.g. with tally_csv_dialog_show_error()
 *
 * Asks where to save a table as CSV: a modal save chooser titled "Save
 * Table as CSV" with a filter for CSV files. While it is open, another
 * call for the same @owner does nothing; the chooser closes if @owner is
 * finalized first.
 */
void
tally_csv_dialog_save (GtkWidget              *owner,
                       const char             *suggested_name,
                       TallyCsvDialogSaveFunc  save)
{
  GtkFileChooserNative *chooser;

  g_return_if_fail (GTK_IS_WIDGET (owner));
  g_return_if_fail (suggested_name != NULL);
  g_return_if_fail (save != NULL);

  if (g_object_get_data (G_OBJECT (owner), CHOOSER_KEY) != NULL)
    return;

  chooser = new_chooser (owner, suggested_name);
  g_object_set_data (G_OBJECT (chooser), SAVE_KEY, save);
  g_object_set_data_full (G_OBJECT (owner), CHOOSER_KEY, chooser, chooser_free);
  g_signal_connect_object (chooser, "response", G_CALLBACK (chooser_response_cb), owner, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
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
