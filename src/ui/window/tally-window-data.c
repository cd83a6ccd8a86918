/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-application-private.h"
#include "tally-data-import.h"
#include "tally-data-import-bar.h"
#include "tally-format.h"
#include "tally-window-private.h"

/*
 * The window's data files (docs/data-files.md): `win.open-data-files` asks
 * for CSV, TSV and JSON Lines files, the import runs in a worker thread
 * with a progress bar under the header that can cancel it, and the
 * imported database, `.tally/data.db` in the workspace, becomes the
 * session's database.
 *
 * The state of a running import hangs on the window as object data, so
 * that the window's own struct does not change for it.
 */

#define IMPORT_KEY "tally-data-import"

typedef struct {
  TallyDataImportBar *bar;          /* in the window's banner box; a reference */
  GCancellable       *cancellable;  /* of the running import, or NULL */
  char               *database;
} ImportState;

static void
import_state_free (gpointer data)
{
  ImportState *state = data;

  if (state->cancellable != NULL)
    g_cancellable_cancel (state->cancellable);
  g_clear_object (&state->cancellable);
  g_clear_object (&state->bar);
  g_free (state->database);
  g_free (state);
}

/* A closed window stops its import (which rolls back). */
static void
window_destroy_cb (GtkWidget   *window,
                   ImportState *state)
{
  if (state->cancellable != NULL)
    g_cancellable_cancel (state->cancellable);
}

static void
bar_cancel_cb (TallyDataImportBar *bar,
               ImportState        *state)
{
  if (state->cancellable != NULL)
    g_cancellable_cancel (state->cancellable);
}

/* The bar goes right under the store banner, as the other banners do. */
static ImportState *
ensure_state (TallyWindow *self)
{
  ImportState *state = g_object_get_data (G_OBJECT (self), IMPORT_KEY);
  GtkWidget *anchor = GTK_WIDGET (self->store_revealer);

  if (state != NULL)
    return state;

  state = g_new0 (ImportState, 1);
  state->bar = g_object_ref_sink (TALLY_DATA_IMPORT_BAR (tally_data_import_bar_new ()));
  gtk_widget_set_visible (GTK_WIDGET (state->bar), FALSE);
  gtk_box_insert_child_after (GTK_BOX (gtk_widget_get_parent (anchor)), GTK_WIDGET (state->bar), anchor);
  g_signal_connect (state->bar, "cancel", G_CALLBACK (bar_cancel_cb), state);
  g_signal_connect (self, "destroy", G_CALLBACK (window_destroy_cb), state);
  g_object_set_data_full (G_OBJECT (self), IMPORT_KEY, state, import_state_free);

  return state;
}

static void
import_progress_cb (guint64  done,
                    guint64  total,
                    gpointer user_data)
{
  tally_data_import_bar_set_progress (TALLY_DATA_IMPORT_BAR (user_data), done, total);
}

static void
import_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(TallyWindow) self = user_data;
  g_autoptr(GPtrArray) tables = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  ImportState *state;

  tables = tally_data_import_finish (result, &error);

  state = g_object_get_data (G_OBJECT (self), IMPORT_KEY);
  g_assert (state != NULL);
  g_clear_object (&state->cancellable);
  /* A closed window cancelled its import and shows nothing more. */
  if (gtk_widget_in_destruction (GTK_WIDGET (self)))
    return;
  gtk_widget_set_visible (GTK_WIDGET (state->bar), FALSE);

  if (tables == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        message = g_strdup (_("Import cancelled: nothing was imported"));
      else
        message = g_strdup_printf (_("Nothing was imported: %s"), error->message);
      tally_window_add_toast (self, message);
      return;
    }

  g_free (self->database);
  self->database = g_strdup (state->database);
  if (self->session != NULL)
    tally_agent_set_database (tally_session_get_agent (self->session), self->database);
  _tally_window_update_context (self);

  if (tables->len == 1)
    {
      TallyDataTable *table = g_ptr_array_index (tables, 0);
      g_autofree char *name = g_filename_display_basename (table->path);
      g_autofree char *rows = tally_format_count (table->n_rows, TALLY_GROUPING_COMMA);

      message = g_strdup_printf (ngettext ("Imported “%s” as the table %s (%s row)",
                                           "Imported “%s” as the table %s (%s rows)",
                                           (gulong) MAX (table->n_rows, 0)),
                                 name, table->table, rows);
    }
  else
    {
      g_autoptr(GString) names = g_string_new (NULL);

      for (guint i = 0; i < tables->len; i++)
        g_string_append_printf (names, "%s%s", i > 0 ? ", " : "",
                                ((TallyDataTable *) g_ptr_array_index (tables, i))->table);
      message = g_strdup_printf (_("Imported %u files as the tables %s"), tables->len, names->str);
    }
  tally_window_add_toast (self, message);
}

/**
 * _tally_window_import_data_files:
 * @self: a #TallyWindow
 * @paths: (array zero-terminated=1): data files and folders of them
 *
 * Imports @paths into `.tally/data.db` of the window's workspace (a new
 * session's folder when the window has none yet) with
 * tally_data_import_async(), showing the progress bar, and makes that
 * database the session's when it worked; a failure or a cancel is a toast
 * and leaves the database as it was. One import at a time: a second
 * request while one runs is refused with a toast.
 */
void
_tally_window_import_data_files (TallyWindow        *self,
                                 const char * const *paths)
{
  ImportState *state;
  g_autofree char *title = NULL;
  guint n_paths;

  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (paths != NULL && paths[0] != NULL);

  /* A window without a session has no workspace yet: it gets the folder
   * a new session would get, which the session then keeps. */
  if (self->workspace == NULL)
    {
      g_autofree char *id = g_uuid_string_random ();

      self->workspace = tally_application_dup_workspace_for (id);
      _tally_window_update_context (self);
    }
  if (g_mkdir_with_parents (self->workspace, 0700) != 0)
    {
      g_autofree char *message = g_strdup_printf (_("The workspace folder %s cannot be created"),
                                                  self->workspace);
      tally_window_add_toast (self, message);
      return;
    }

  state = ensure_state (self);
  if (state->cancellable != NULL)
    {
      tally_window_add_toast (self, _("An import is already running"));
      return;
    }

  n_paths = g_strv_length ((char **) paths);
  if (n_paths == 1)
    {
      g_autofree char *name = g_filename_display_basename (paths[0]);

      title = g_strdup_printf (_("Importing “%s”…"), name);
    }
  else
    title = g_strdup_printf (ngettext ("Importing %u file…", "Importing %u files…", n_paths), n_paths);

  g_free (state->database);
  state->database = tally_data_import_dup_database_path (self->workspace);
  state->cancellable = g_cancellable_new ();
  tally_data_import_bar_set_title (state->bar, title);
  tally_data_import_bar_set_progress (state->bar, 0, 0);
  gtk_widget_set_visible (GTK_WIDGET (state->bar), TRUE);

  tally_data_import_async (state->database, paths,
                           import_progress_cb, g_object_ref (state->bar), g_object_unref,
                           state->cancellable, import_done_cb, g_object_ref (self));
}

/**
 * _tally_window_get_data_import_bar:
 * @self: a #TallyWindow
 *
 * Returns: (transfer none) (nullable): the import bar, once an import
 *   was started (tests)
 */
TallyDataImportBar *
_tally_window_get_data_import_bar (TallyWindow *self)
{
  ImportState *state;

  g_return_val_if_fail (TALLY_IS_WINDOW (self), NULL);

  state = g_object_get_data (G_OBJECT (self), IMPORT_KEY);
  return state != NULL ? state->bar : NULL;
}

/**
 * _tally_window_is_importing:
 * @self: a #TallyWindow
 *
 * Returns: %TRUE while a data import runs (tests)
 */
gboolean
_tally_window_is_importing (TallyWindow *self)
{
  ImportState *state;

  g_return_val_if_fail (TALLY_IS_WINDOW (self), FALSE);

  state = g_object_get_data (G_OBJECT (self), IMPORT_KEY);
  return state != NULL && state->cancellable != NULL;
}

static void
data_files_chosen_cb (GtkNativeDialog *dialog,
                      int              response,
                      TallyWindow     *self)
{
  g_autoptr(GListModel) files = NULL;
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

  g_assert (TALLY_IS_WINDOW (self));

  if (response == GTK_RESPONSE_ACCEPT)
    files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
  g_object_unref (dialog);
  if (files == NULL)
    return;

  for (guint i = 0; i < g_list_model_get_n_items (files); i++)
    {
      g_autoptr(GFile) file = g_list_model_get_item (files, i);
      char *path = g_file_get_path (file);

      if (path != NULL)
        g_ptr_array_add (paths, path);
    }
  if (paths->len == 0)
    {
      tally_window_add_toast (self, _("Only local files can be imported"));
      return;
    }
  g_ptr_array_add (paths, NULL);

  _tally_window_import_data_files (self, (const char * const *) paths->pdata);
}

static GtkFileFilter *
new_filter (const char         *name,
            const char * const *suffixes)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, name);
  for (guint i = 0; suffixes[i] != NULL; i++)
    gtk_file_filter_add_suffix (filter, suffixes[i]);
  return filter;
}

/**
 * _tally_window_open_data_files_activate:
 * @self: a #TallyWindow
 * @parameter: unused
 *
 * `win.open-data-files`: a file chooser for several CSV, TSV and JSON
 * Lines files, then _tally_window_import_data_files().
 */
void
_tally_window_open_data_files_activate (TallyWindow *self,
                                        GVariant    *parameter)
{
  static const char * const all_suffixes[] = { "csv", "tsv", "tab", "jsonl", "ndjson", NULL };
  static const char * const csv_suffixes[] = { "csv", NULL };
  static const char * const tsv_suffixes[] = { "tsv", "tab", NULL };
  static const char * const json_suffixes[] = { "jsonl", "ndjson", NULL };
  g_autoptr(GtkFileFilter) all = new_filter (_("Data Files"), all_suffixes);
  g_autoptr(GtkFileFilter) csv = new_filter (_("CSV Files"), csv_suffixes);
  g_autoptr(GtkFileFilter) tsv = new_filter (_("TSV Files"), tsv_suffixes);
  g_autoptr(GtkFileFilter) json = new_filter (_("JSON Lines Files"), json_suffixes);
  GtkFileChooserNative *native;

  if (self->context_popover != NULL)
    gtk_popover_popdown (self->context_popover);

  native = gtk_file_chooser_native_new (_("Open Data Files"), GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_OPEN, _("_Import"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (native), TRUE);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), all);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), csv);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), tsv);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), json);
  gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (native), all);
  g_signal_connect_object (native, "response", G_CALLBACK (data_files_chosen_cb), self, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
}
