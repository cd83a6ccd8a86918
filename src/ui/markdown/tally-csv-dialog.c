/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The actions of the tables that can leave the window, markdown tables and
 * query results: `table.copy` (tab-separated text on the clipboard) and
 * `table.save-csv` (a save chooser, then an RFC 4180 file, or a dialog
 * saying why not), and the two header buttons that activate them. A table
 * class installs them with its text function; the chooser and the pending
 * writes' cancellable are kept on the table widget (object data), so
 * neither table keeps its own.
 */

#include "config.h"

#include "tally-csv-dialog.h"
#include "tally-error-dialog.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <string.h>

#define CHOOSER_KEY "tally-csv-dialog-chooser"
#define CANCELLABLE_KEY "tally-csv-dialog-cancellable"

/* What a table class installed: its text function and the file name its
 * chooser offers (untranslated). */
typedef struct
{
  TallyCsvDialogTextFunc  text_func;
  const char             *suggested_name;
} TableClassData;

static GQuark
class_data_quark (void)
{
  static GQuark quark;

  if (quark == 0)
    quark = g_quark_from_static_string ("tally-csv-dialog-class-data");
  return quark;
}

/* The class data of @owner's type or the nearest ancestor with one. */
static const TableClassData *
lookup_class_data (GtkWidget *owner)
{
  for (GType type = G_OBJECT_TYPE (owner); type != 0; type = g_type_parent (type))
    {
      const TableClassData *data = g_type_get_qdata (type, class_data_quark ());

      if (data != NULL)
        return data;
    }
  g_return_val_if_reached (NULL);
}

/* The owner's cancellable for writes, cancelled when the owner is
 * destroyed. */
static GCancellable *
owner_cancellable (GtkWidget *owner)
{
  GCancellable *cancellable = g_object_get_data (G_OBJECT (owner), CANCELLABLE_KEY);

  if (cancellable == NULL)
    {
      cancellable = g_cancellable_new ();
      g_object_set_data_full (G_OBJECT (owner), CANCELLABLE_KEY, cancellable, g_object_unref);
      g_signal_connect_object (owner, "destroy", G_CALLBACK (g_cancellable_cancel), cancellable,
                               G_CONNECT_SWAPPED);
    }
  return cancellable;
}

/* Tells the analyst, in a dialog over @owner's window, that the table
 * could not be saved; a cancelled save says nothing. */
static void
show_error (GtkWidget    *owner,
            const GError *error)
{
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    tally_error_dialog_show (owner, _("Could Not Save the Table"), error->message);
}

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
saved_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GtkWidget) owner = user_data;
  g_autoptr(GError) error = NULL;

  if (!tally_csv_dialog_save_finish (G_FILE (object), result, &error))
    show_error (owner, error);
}

static void
chooser_response_cb (GtkNativeDialog *chooser,
                     int              response,
                     GtkWidget       *owner)
{
  g_autoptr(GFile) file = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  /* The chooser is done: the next Save opens a new one. */
  g_object_set_data (G_OBJECT (owner), CHOOSER_KEY, NULL);
  if (file != NULL)
    tally_csv_dialog_save_async (owner, file, owner_cancellable (owner), saved_cb, g_object_ref (owner));
}

/* `table.save-csv`: asks where to save. While the chooser is open, the
 * action does nothing; the chooser closes if the table is finalized
 * first. */
static void
save_csv_action (GtkWidget  *owner,
                 const char *action_name,
                 GVariant   *parameter)
{
  const TableClassData *data = lookup_class_data (owner);
  GtkFileChooserNative *chooser;

  if (g_object_get_data (G_OBJECT (owner), CHOOSER_KEY) != NULL)
    return;

  chooser = new_chooser (owner, _(data->suggested_name));
  g_object_set_data_full (G_OBJECT (owner), CHOOSER_KEY, chooser, chooser_free);
  g_signal_connect_object (chooser, "response", G_CALLBACK (chooser_response_cb), owner, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* `table.copy`: the table as tab-separated text on the clipboard. */
static void
copy_action (GtkWidget  *owner,
             const char *action_name,
             GVariant   *parameter)
{
  g_autofree char *text = lookup_class_data (owner)->text_func (owner, TALLY_CSV_FORMAT_TSV);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (owner), text);
}

/**
 * tally_csv_dialog_install_actions:
 * @widget_class: a table widget's class, in its class_init
 * @text_func: (scope forever): writes an instance's table as text
 * @suggested_name: (not nullable): the file name the save chooser offers,
 *   untranslated (marked with N_()); it is translated when the chooser
 *   opens and must stay valid for the life of the program
 *
 * Installs the class's `table.copy` action (@text_func's
 * %TALLY_CSV_FORMAT_TSV text on the clipboard) and `table.save-csv`
 * action: a modal save chooser titled "Save Table as CSV" with a filter for
 * CSV files, then tally_csv_dialog_save_async(), and a dialog over the
 * table's window when that fails (not when it is cancelled, which happens
 * when the table is destroyed first). While its chooser is open, another
 * `table.save-csv` on the same table does nothing; the chooser closes if
 * the table is finalized first.
 */
void
tally_csv_dialog_install_actions (GtkWidgetClass         *widget_class,
                                  TallyCsvDialogTextFunc  text_func,
                                  const char             *suggested_name)
{
  TableClassData *data;

  g_return_if_fail (GTK_IS_WIDGET_CLASS (widget_class));
  g_return_if_fail (text_func != NULL);
  g_return_if_fail (suggested_name != NULL);

  /* Lives as long as the class, that is, as long as the program. */
  data = g_new0 (TableClassData, 1);
  data->text_func = text_func;
  data->suggested_name = suggested_name;
  g_type_set_qdata (G_TYPE_FROM_CLASS (widget_class), class_data_quark (), data);

  gtk_widget_class_install_action (widget_class, "table.copy", NULL, copy_action);
  gtk_widget_class_install_action (widget_class, "table.save-csv", NULL, save_csv_action);
}

static GtkWidget *
header_button (const char *icon_name,
               const char *action_name,
               const char *tooltip)
{
  /* Hidden while its tooltip is set: GTK 4.8's gtk_widget_set_tooltip_text()
   * on a visible widget asks the display where the pointer is (a round
   * trip to the X server), and a streamed answer makes its tables in the
   * frames that show it. */
  GtkWidget *button = g_object_new (GTK_TYPE_BUTTON,
                                    "icon-name", icon_name,
                                    "action-name", action_name,
                                    "visible", FALSE,
                                    "tooltip-text", tooltip,
                                    "valign", GTK_ALIGN_CENTER,
                                    NULL);

  gtk_widget_set_visible (button, TRUE);
  gtk_widget_add_css_class (button, "flat");
  gtk_accessible_update_property (GTK_ACCESSIBLE (button),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, tooltip,
                                  -1);
  return button;
}

/**
 * tally_csv_dialog_new_header:
 *
 * The row of buttons over a table: flat icon buttons *Copy Table*
 * (`table.copy`) and *Save Table as CSV…* (`table.save-csv`), their
 * tooltips also their accessible labels, in a horizontal box aligned to the
 * end with the style class `table-header`.
 *
 * Returns: (transfer floating): the box; the table sets it as its child
 */
GtkWidget *
tally_csv_dialog_new_header (void)
{
  GtkWidget *header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);

  gtk_widget_set_halign (header, GTK_ALIGN_END);
  gtk_widget_add_css_class (header, "table-header");
  gtk_box_append (GTK_BOX (header), header_button ("edit-copy-symbolic", "table.copy",
                                                   _("Copy Table")));
  gtk_box_append (GTK_BOX (header), header_button ("document-save-symbolic", "table.save-csv",
                                                   _("Save Table as CSV…")));
  return header;
}

/**
 * tally_csv_dialog_save_async:
 * @owner: a table whose class called tally_csv_dialog_install_actions()
 * @file: where to write
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the file is written, with @file as its source
 *   object
 * @user_data: data for @callback
 *
 * Writes the table's %TALLY_CSV_FORMAT_CSV text (its text function's) to
 * @file: RFC 4180, UTF-8 without a byte order mark, replacing the file if
 * it exists. The `table.save-csv` action calls this with the file the
 * analyst chose.
 */
void
tally_csv_dialog_save_async (GtkWidget           *owner,
                             GFile               *file,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GBytes) bytes = NULL;
  char *text;

  g_return_if_fail (GTK_IS_WIDGET (owner));
  g_return_if_fail (G_IS_FILE (file));

  text = lookup_class_data (owner)->text_func (owner, TALLY_CSV_FORMAT_CSV);
  bytes = g_bytes_new_take (text, strlen (text));
  g_file_replace_contents_bytes_async (file, bytes, NULL, FALSE, G_FILE_CREATE_REPLACE_DESTINATION,
                                       cancellable, callback, user_data);
}

/**
 * tally_csv_dialog_save_finish:
 * @file: the file given to tally_csv_dialog_save_async(), the callback's
 *   source object
 * @result: the result given to the callback
 * @error: return location for an error
 *
 * Returns: %TRUE when the file was written; %FALSE with @error set (a
 *   #GIOError, %G_IO_ERROR_CANCELLED when cancelled) otherwise
 */
gboolean
tally_csv_dialog_save_finish (GFile         *file,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  return g_file_replace_contents_finish (file, result, NULL, error);
}
