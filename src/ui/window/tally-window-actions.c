/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-application-private.h"
#include "tally-database-dialog.h"
#include "tally-error-dialog.h"
#include "tally-export-dialog.h"
#include "tally-file-chip.h"
#include "tally-pg-source.h"
#include "tally-report-window.h"
#include "tally-sample-session.h"
#include "tally-secret.h"
#include "tally-window-private.h"

/*
 * The window's actions, installed on the class with
 * gtk_widget_class_install_action() (docs/architecture.md §3.2, §11.1):
 *
 * - `win.*`: what the header, the menus, the shortcuts, the toasts and
 *   the sidebar's rows ask for (a new session, search, the sidebar, stop,
 *   rename, pin, delete and undo, the database and workspace of the
 *   session, a raised spend cap, exporting the session, opening a file
 *   and previewing a report);
 * - `session.*`: what the cards and the error banner in the transcript
 *   decide, with the ids the agent needs as parameters.
 *
 * GtkApplication's accelerators, GtkPopoverMenu and AdwToast find class
 * actions the way they find the window's action groups, so the names stay
 * `win.…` everywhere.
 */

/* Actions that only make sense in some states are disabled in the others,
 * so their buttons, menu items and shortcuts follow. The store's actions
 * wait until it is open: a new window opens it after its first frame and
 * calls this again then (tally-window.c, after_first_frame_idle()). */
void
_tally_window_update_actions (TallyWindow *self)
{
  TallyStore *store = _tally_application_peek_store (self->app);
  gboolean has_store = store != NULL && !tally_store_is_read_only (store);
  gboolean has_session = self->session != NULL;
  GtkWidget *widget = GTK_WIDGET (self);

  g_assert (TALLY_IS_WINDOW (self));

  gtk_widget_action_set_enabled (widget, "win.stop", self->busy_session != NULL);
  gtk_widget_action_set_enabled (widget, "win.rename-session", has_session && has_store);
  gtk_widget_action_set_enabled (widget, "win.delete-session", has_session && has_store);
  gtk_widget_action_set_enabled (widget, "win.export-session", has_session && store != NULL);
  gtk_widget_action_set_enabled (widget, "win.database-notes", store != NULL);
  gtk_widget_action_set_enabled (widget, "win.sensitive-columns", store != NULL);
  gtk_widget_action_set_enabled (widget, "win.sent-to-api", has_session && store != NULL);
  gtk_widget_action_set_enabled (widget, "win.open-workspace",
                                 has_session && self->workspace != NULL &&
                                 g_file_test (self->workspace, G_FILE_TEST_IS_DIR));
}

/* Database and workspace */

/* The local path the file chooser @dialog answered with, or %NULL when it
 * was cancelled; the dialog is released. */
static char *
dup_chosen_path (GtkNativeDialog *dialog,
                 int              response)
{
  g_autoptr(GFile) file = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
  g_object_unref (dialog);

  return file != NULL ? g_file_get_path (file) : NULL;
}

/* The database chooser's answer: a SQLite file's path, or a PostgreSQL
 * connection string that may carry a password in memory (the agent
 * stores it without; docs/postgresql.md). */
static void
database_chosen_cb (TallyDatabaseDialog *dialog,
                    const char          *database,
                    const char          *name,
                    TallyWindow         *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  g_free (self->database);
  self->database = g_strdup (database);
  if (self->session != NULL)
    tally_agent_set_database (tally_session_get_agent (self->session), self->database);
  _tally_window_update_context (self);
  _tally_window_check_role (self);
}

/* A data file picked on the chooser's File page is imported as
 * win.open-data-files imports it (docs/data-files.md). */
static void
data_file_chosen_cb (TallyDatabaseDialog *dialog,
                     const char          *path,
                     TallyWindow         *self)
{
  const char *paths[] = { path, NULL };

  g_assert (TALLY_IS_WINDOW (self));

  _tally_window_import_data_files (self, paths);
}

/* The role warning (docs/postgresql.md, "A read-only role") */

#define ROLE_WARNED_KEY "tally-role-warned"
#define ROLE_DOCS_URL "https://github.com/tallyapp/tally/blob/main/docs/postgresql.md#a-read-only-role"

/**
 * _tally_window_check_role:
 * @self: a #TallyWindow
 *
 * Shows the role card when the database is a PostgreSQL connection whose
 * role could write (a superuser, or a role that may change a table or
 * create in a schema: #TallyPgSource::warning), once per connection: the
 * same connection chosen again, or its card closed, does not bring it
 * back. Called when the chooser connected, and after each turn (a
 * session reopened from the store first connects in a query); before its
 * source connected, a connection shows nothing.
 */
void
_tally_window_check_role (TallyWindow *self)
{
  g_autoptr(TallyPgSource) source = NULL;
  g_autofree char *warning = NULL;
  GHashTable *warned;

  g_return_if_fail (TALLY_IS_WINDOW (self));

  if (!tally_pg_conninfo_is (self->database))
    return;
  source = tally_pg_source_get_shared (self->database, NULL);
  if (source != NULL)
    warning = tally_pg_source_dup_warning (source);
  if (warning == NULL)
    return;

  warned = g_object_get_data (G_OBJECT (self), ROLE_WARNED_KEY);
  if (warned == NULL)
    {
      warned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_object_set_data_full (G_OBJECT (self), ROLE_WARNED_KEY, warned, (GDestroyNotify)g_hash_table_unref);
    }
  /* Keyed by the string without its password: nothing secret is kept. */
  if (!g_hash_table_add (warned, g_strdup (tally_pg_source_get_redacted (source))))
    return;

  self->n_role_warnings++;
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->role_revealer), warning);
  _tally_window_reveal_banner (self->role_revealer, TRUE);
}

typedef struct
{
  TallyWindow  *self;
  TallySession *session;
  char         *connection;
} Restore;

static void
restore_free (Restore *restore)
{
  g_object_unref (restore->self);
  g_object_unref (restore->session);
  g_free (restore->connection);
  g_free (restore);
}

static void
password_restored_cb (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  Restore *restore = user_data;
  TallyWindow *self = restore->self;
  g_autoptr(GError) error = NULL;
  char *password = tally_secret_lookup_finish (result, &error);
  TallyAgent *agent = tally_session_get_agent (restore->session);

  /* No keyring, or no password kept: libpq looks elsewhere (~/.pgpass). */
  if (password != NULL && !self->closed && self->session == restore->session &&
      g_strcmp0 (tally_agent_get_database (agent), restore->connection) == 0)
    {
      g_free (self->database);
      self->database = tally_pg_conninfo_add_password (restore->connection, password);
      tally_agent_set_database (agent, self->database);
    }
  else if (error != NULL)
    g_debug ("No keyring password for %s: %s", restore->connection, error->message);

  tally_secret_free (password);
  restore_free (restore);
}

/**
 * _tally_window_restore_pg_password:
 * @self: a #TallyWindow
 *
 * When the session shown is a PostgreSQL one whose stored connection
 * string has no password (it never does: docs/postgresql.md), looks the
 * password of that connection up in the keyring and, when one is kept,
 * gives the session's agent the string with it, in memory only.
 */
void
_tally_window_restore_pg_password (TallyWindow *self)
{
  const char *database;
  g_autofree char *redacted = NULL;
  Restore *restore;

  g_return_if_fail (TALLY_IS_WINDOW (self));

  if (self->session == NULL)
    return;
  database = tally_agent_get_database (tally_session_get_agent (self->session));
  if (!tally_pg_conninfo_is (database))
    return;
  redacted = tally_pg_conninfo_redact (database);
  if (!g_str_equal (redacted, database))
    return;

  restore = g_new0 (Restore, 1);
  restore->self = g_object_ref (self);
  restore->session = g_object_ref (self->session);
  restore->connection = g_steal_pointer (&redacted);
  tally_secret_lookup_pg_password_async (restore->connection, self->cancellable,
                                         password_restored_cb, restore);
}

static void
role_docs_activate (TallyWindow *self,
                    GVariant    *parameter)
{
  gtk_show_uri (GTK_WINDOW (self), ROLE_DOCS_URL, GDK_CURRENT_TIME);
}

static void
dismiss_role_activate (TallyWindow *self,
                       GVariant    *parameter)
{
  _tally_window_reveal_banner (self->role_revealer, FALSE);
}

/**
 * _tally_window_get_n_role_warnings:
 * @self: a #TallyWindow
 *
 * Returns: how many times the role card was shown; for tests
 */
guint
_tally_window_get_n_role_warnings (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), 0);
  return self->n_role_warnings;
}

/**
 * _tally_window_get_role_warning_shown:
 * @self: a #TallyWindow
 *
 * Returns: %TRUE while the role card is shown; for tests
 */
gboolean
_tally_window_get_role_warning_shown (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), FALSE);
  return gtk_revealer_get_reveal_child (self->role_revealer);
}

static void
choose_database_activate (TallyWindow *self,
                          GVariant    *parameter)
{
  TallyDatabaseDialog *dialog;

  if (self->context_popover != NULL)
    gtk_popover_popdown (self->context_popover);

  dialog = tally_database_dialog_new (GTK_WINDOW (self), self->settings);
  g_signal_connect_object (dialog, "chosen", G_CALLBACK (database_chosen_cb), self, 0);
  g_signal_connect_object (dialog, "data-file-chosen", G_CALLBACK (data_file_chosen_cb), self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
workspace_chosen_cb (GtkNativeDialog *dialog,
                     int              response,
                     TallyWindow     *self)
{
  g_autofree char *path = dup_chosen_path (dialog, response);

  g_assert (TALLY_IS_WINDOW (self));

  if (path == NULL)
    return;

  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *message = g_strdup_printf (_("%s is not a folder"), path);
      tally_window_add_toast (self, message);
      return;
    }

  g_free (self->workspace);
  self->workspace = g_steal_pointer (&path);
  if (self->session != NULL)
    tally_agent_set_workspace (tally_session_get_agent (self->session), self->workspace);
  _tally_window_update_context (self);
}

static void
choose_workspace_activate (TallyWindow *self,
                           GVariant    *parameter)
{
  GtkFileChooserNative *native;

  if (self->context_popover != NULL)
    gtk_popover_popdown (self->context_popover);

  native = gtk_file_chooser_native_new (_("Choose a Workspace Folder"), GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Select"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  if (self->workspace != NULL && g_file_test (self->workspace, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GFile) current = g_file_new_for_path (self->workspace);
      gtk_file_chooser_set_file (GTK_FILE_CHOOSER (native), current, NULL);
    }
  g_signal_connect_object (native, "response", G_CALLBACK (workspace_chosen_cb), self, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
}

static void
open_workspace_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  g_autoptr(GFile) file = NULL;

  if (self->workspace == NULL)
    return;

  if (self->context_popover != NULL)
    gtk_popover_popdown (self->context_popover);
  file = g_file_new_for_path (self->workspace);
  tally_file_chip_open_with_system (GTK_WIDGET (self), file);
}

/* Files: exporting the session, opening a file, the report preview
 * (issue 12 §3) */

#define EXPORT_CHOOSER_KEY "tally-export-chooser"
#define EXPORTS_DONE_KEY "tally-exports-done"

static void
add_export_toast (TallyWindow *self,
                  AdwToast    *toast)
{
  g_free (self->last_toast_title);
  self->last_toast_title = g_strdup (adw_toast_get_title (toast));
  g_set_weak_pointer (&self->last_toast, toast);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

static void
session_exported_cb (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(TallyExportJob) job = user_data;
  TallyWindow *self = job->owner;
  g_autoptr(GError) error = NULL;
  guint done = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (self), EXPORTS_DONE_KEY));

  g_object_set_data (G_OBJECT (self), EXPORTS_DONE_KEY, GUINT_TO_POINTER (done + 1));

  if (!tally_report_export_session_finish (result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        tally_error_dialog_show (GTK_WIDGET (self), _("Could Not Export the Session"), error->message);
      return;
    }
  add_export_toast (self, tally_export_dialog_new_done_toast (job->output, "win.open-file"));
}

#define EXPORT_SESSION_ID_KEY "tally-export-session-id"

/**
 * _tally_window_export_session_id_to:
 * @self: a #TallyWindow
 * @session_id: the id of a saved session
 * @format: what to write
 * @include_thinking: whether the model's thinking goes in
 * @output: (transfer none): the file to write (its suffix is used as is)
 *
 * What the export chooser does once answered (also for a sidebar row's
 * session): exports without blocking the window
 * (tally_report_export_session_async()), then a toast with *Open*, or an
 * error dialog.
 */
void
_tally_window_export_session_id_to (TallyWindow       *self,
                                    const char        *session_id,
                                    TallyExportFormat  format,
                                    gboolean           include_thinking,
                                    GFile             *output)
{
  TallyStore *store = tally_application_get_store (self->app);

  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (output));

  if (session_id == NULL || store == NULL)
    return;

  tally_report_export_session_async (store, session_id,
                                     tally_export_format_to_report (format), include_thinking, output,
                                     NULL, session_exported_cb, tally_export_job_new (self, output));
}

/**
 * _tally_window_export_session_to:
 * @self: a #TallyWindow showing a session
 * @format: what to write
 * @include_thinking: whether the model's thinking goes in
 * @output: (transfer none): the file to write (its suffix is used as is)
 *
 * What `win.export-session` does once the chooser answered: exports the
 * shown session without blocking the window
 * (tally_report_export_session_async()),
 * then a toast with *Open*, or an error dialog.
 */
void
_tally_window_export_session_to (TallyWindow       *self,
                                 TallyExportFormat  format,
                                 gboolean           include_thinking,
                                 GFile             *output)
{
  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (output));

  if (self->session != NULL)
    _tally_window_export_session_id_to (self, tally_session_get_id (self->session), format, include_thinking, output);
}

/**
 * _tally_window_get_n_exports_done:
 * @self: a #TallyWindow
 *
 * Returns: how many session exports have finished, written or not
 */
guint
_tally_window_get_n_exports_done (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), 0);
  return GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (self), EXPORTS_DONE_KEY));
}

/* A session export waiting for the analyst to say whether to replace a
 * file. */
typedef struct {
  char              *session_id;
  TallyExportFormat  format;
  gboolean           include_thinking;
  GFile             *output;
} PendingExport;

static void
pending_export_free (gpointer data)
{
  PendingExport *pending = data;

  g_free (pending->session_id);
  g_object_unref (pending->output);
  g_free (pending);
}

static void
replace_confirmed (GtkWidget *owner,
                   gpointer   data)
{
  PendingExport *pending = data;

  _tally_window_export_session_id_to (TALLY_WINDOW (owner), pending->session_id, pending->format,
                                      pending->include_thinking, pending->output);
}

static void
export_chosen_cb (TallyWindow     *self,
                  int              response,
                  GtkNativeDialog *chooser)
{
  g_autofree char *session_id = g_strdup (g_object_get_data (G_OBJECT (chooser), EXPORT_SESSION_ID_KEY));
  TallyExportFormat format;
  gboolean unasked = FALSE;
  g_autoptr(GFile) output = tally_export_dialog_dup_output (chooser, response, TALLY_EXPORT_MARKDOWN,
                                                            &format, &unasked);
  gboolean include_thinking = tally_export_dialog_get_include_thinking (GTK_FILE_CHOOSER (chooser));
  PendingExport *pending;

  /* The window held the chooser's only reference: read it before this. */
  g_object_set_data (G_OBJECT (self), EXPORT_CHOOSER_KEY, NULL);
  if (output == NULL)
    return;
  if (!unasked)
    {
      _tally_window_export_session_id_to (self, session_id, format, include_thinking, output);
      return;
    }

  /* The name was given the format's suffix, and that file exists. */
  pending = g_new0 (PendingExport, 1);
  pending->session_id = g_steal_pointer (&session_id);
  pending->format = format;
  pending->include_thinking = include_thinking;
  pending->output = g_steal_pointer (&output);
  tally_export_dialog_ask_replace (GTK_WIDGET (self), pending->output, replace_confirmed, pending,
                                   pending_export_free);
}

/**
 * _tally_window_export_session:
 * @self: a #TallyWindow
 * @session_id: the id of a saved session (the one shown, or a sidebar row's)
 * @title: (nullable): its title, the suggested file name
 *
 * Asks where to write the session (format and thinking in the chooser),
 * then exports it as _tally_window_export_session_to() does. Does nothing
 * while a chooser is already open.
 */
void
_tally_window_export_session (TallyWindow *self,
                              const char  *session_id,
                              const char  *title)
{
  GtkFileChooserNative *chooser;
  g_autofree char *name = NULL;
  g_autoptr(GFile) folder = NULL;
  TallySessionRow *row;

  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (session_id != NULL);

  if (g_object_get_data (G_OBJECT (self), EXPORT_CHOOSER_KEY) != NULL)
    return;

  /* The chooser opens in the session's workspace, where its reports and
   * charts are. */
  row = _tally_window_find_row (self, session_id);
  if (row != NULL && tally_session_row_get_info (row)->workspace != NULL)
    folder = g_file_new_for_path (tally_session_row_get_info (row)->workspace);
  else if (self->session != NULL && g_strcmp0 (tally_session_get_id (self->session), session_id) == 0 &&
           self->workspace != NULL)
    folder = g_file_new_for_path (self->workspace);

  name = g_strdelimit (g_strdup (title != NULL && *title != '\0' ? title : _("Session")), "/\\", '-');
  chooser = tally_export_dialog_new_chooser (GTK_WIDGET (self), _("Export the Session"), name,
                                             TALLY_EXPORT_MARKDOWN, TRUE, folder);
  g_object_set_data_full (G_OBJECT (chooser), EXPORT_SESSION_ID_KEY, g_strdup (session_id), g_free);
  g_object_set_data_full (G_OBJECT (self), EXPORT_CHOOSER_KEY, chooser, g_object_unref);
  g_signal_connect_object (chooser, "response", G_CALLBACK (export_chosen_cb), self, G_CONNECT_SWAPPED);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
export_session_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  if (self->session == NULL)
    return;

  _tally_window_export_session (self, tally_session_get_id (self->session),
                                _tally_window_get_session_title (self));
}

/**
 * _tally_window_get_export_chooser:
 * @self: a #TallyWindow
 *
 * For the tests: the export chooser while it is open.
 *
 * Returns: (transfer none) (nullable): the chooser, or %NULL
 */
GtkFileChooser *
_tally_window_get_export_chooser (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), NULL);
  return g_object_get_data (G_OBJECT (self), EXPORT_CHOOSER_KEY);
}

/**
 * _tally_window_get_export_chooser_session:
 * @self: a #TallyWindow
 *
 * For the tests: which session the open export chooser is for.
 *
 * Returns: (transfer none) (nullable): its id, or %NULL when no chooser is
 *   open
 */
const char *
_tally_window_get_export_chooser_session (TallyWindow *self)
{
  GObject *chooser;

  g_return_val_if_fail (TALLY_IS_WINDOW (self), NULL);
  chooser = g_object_get_data (G_OBJECT (self), EXPORT_CHOOSER_KEY);
  return chooser != NULL ? g_object_get_data (chooser, EXPORT_SESSION_ID_KEY) : NULL;
}

static void
open_file_activate (TallyWindow *self,
                    GVariant    *parameter)
{
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  tally_file_chip_open_with_system (GTK_WIDGET (self), file);
}

static void
preview_report_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  g_autoptr(GFile) file = g_file_new_for_path (g_variant_get_string (parameter, NULL));
  GtkWidget *preview = tally_report_window_new (GTK_WINDOW (self), file);

  gtk_window_present (GTK_WINDOW (preview));
}

/* Window actions */

/* The sidebar row of the session shown, or %NULL. */
static TallySessionRow *
current_row (TallyWindow *self)
{
  if (self->session == NULL)
    return NULL;

  return _tally_window_find_row (self, tally_session_get_id (self->session));
}

static void
new_session_activate (TallyWindow *self,
                      GVariant    *parameter)
{
  tally_window_new_session (self);
}

/* The first-launch page's sample session (issue 14 §10): copied into the
 * store once, then opened like any saved session, offline. */
static void
open_sample_session_activate (TallyWindow *self,
                              GVariant    *parameter)
{
  TallyStore *store = tally_application_get_store (self->app);
  g_autofree char *workspace = tally_application_dup_workspace_for (TALLY_SAMPLE_SESSION_ID);
  g_autoptr(GError) error = NULL;

  if (store == NULL)
    {
      tally_window_add_toast (self, tally_application_get_store_problem (self->app));
      return;
    }

  if (!tally_sample_session_install (store, tally_application_get_default_database (), workspace, &error))
    {
      /* TRANSLATORS: %s says why, such as "The session store is read-only" */
      g_autofree char *message = g_strdup_printf (_("Could not open the sample session: %s"), error->message);

      tally_window_add_toast (self, message);
      return;
    }

  _tally_window_refresh_sessions (self);
  tally_window_open_session (self, TALLY_SAMPLE_SESSION_ID);
}

static void
search_activate (TallyWindow *self,
                 GVariant    *parameter)
{
  adw_flap_set_reveal_flap (self->flap, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
toggle_sidebar_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  adw_flap_set_reveal_flap (self->flap, !adw_flap_get_reveal_flap (self->flap));
}

static void
stop_activate (TallyWindow *self,
               GVariant    *parameter)
{
  _tally_window_stop_turn (self);
}

static void
rename_session_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  TallySessionRow *row = current_row (self);

  if (row == NULL)
    return;

  adw_flap_set_reveal_flap (self->flap, TRUE);
  tally_session_row_start_rename (row);
}

static void
delete_session_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  TallySessionRow *row = current_row (self);

  if (row != NULL)
    _tally_window_delete_with_undo (self, tally_session_row_get_info (row));
}

static void
undo_delete_activate (TallyWindow *self,
                      GVariant    *parameter)
{
  _tally_window_undo_delete (self, g_variant_get_string (parameter, NULL));
}

/* "Raise the cap" on a budget error block: the cap of the session shown
 * goes up to the amount in the parameter (USD) for this session only; the
 * setting stays as it was (docs/protocol.md §12.4). */
static void
raise_cost_cap_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  g_autofree char *message = NULL;
  double cap = g_variant_get_double (parameter);

  if (self->session == NULL || !(cap > 0))
    return;

  tally_agent_raise_max_cost (tally_session_get_agent (self->session), cap);
  /* Translators: %.2f is an amount in US dollars */
  message = g_strdup_printf (_("This session may now cost up to $%.2f. Send your message again to go on."), cap);
  tally_window_add_toast (self, message);
}

/* Retry on an error banner: the parameter is the failed turn's id, which
 * runs again in place (docs/architecture.md §3.2, tally-window-errors.c). */
static void
retry_activate (TallyWindow *self,
                GVariant    *parameter)
{
  g_assert (g_variant_is_of_type (parameter, G_VARIANT_TYPE_STRING));

  _tally_window_retry_turn (self, g_variant_get_string (parameter, NULL));
}

/* The cards: their decisions go to the agent of the session shown (a card
 * is only pending while its turn runs there). */

static void
card_failed (TallyWindow *self,
             GError      *error)
{
  if (error == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    tally_window_add_toast (self, _("This card is no longer waiting for an answer"));
  else
    tally_window_add_toast (self, error->message);
}

/* The cards' decisions: actions the cards activate with
 * gtk_widget_activate_action() (docs/architecture.md §3.2). */

static void
approve_activate (TallyWindow *self,
                  GVariant    *parameter)
{
  const char *id, *input, *rule, *scope, *message;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  int decision;

  g_assert (g_variant_is_of_type (parameter, G_VARIANT_TYPE ("(simsmsmsms)")));

  g_variant_get (parameter, "(&sim&sm&sm&sm&s)", &id, &decision, &input, &rule, &scope, &message);
  if (input != NULL)
    node = json_from_string (input, NULL);

  if (self->session == NULL || *id == '\0' ||
      !tally_agent_resolve_approval (tally_session_get_agent (self->session), id,
                                     &(TallyApprovalAnswer) {
                                       .decision = (TallyDecision) decision,
                                       .updated_input = node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                                                        ? json_node_get_object (node) : NULL,
                                       .rule = rule, .scope = scope, .message = message,
                                     },
                                     &error))
    card_failed (self, error);
  else
    tally_transcript_view_resume_following (self->transcript_view);
}

static void
answer_activate (TallyWindow *self,
                 GVariant    *parameter)
{
  const char *id, *answers;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;

  g_assert (g_variant_is_of_type (parameter, G_VARIANT_TYPE ("(sms)")));

  g_variant_get (parameter, "(&sm&s)", &id, &answers);
  if (answers != NULL)
    node = json_from_string (answers, NULL);

  if (self->session == NULL || *id == '\0' ||
      !tally_agent_answer_question (tally_session_get_agent (self->session), id,
                                    node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL,
                                    &error))
    card_failed (self, error);
  else
    tally_transcript_view_resume_following (self->transcript_view);
}

static void
implement_plan_activate (TallyWindow *self,
                         GVariant    *parameter)
{
  if (self->busy_session != NULL)
    {
      tally_window_add_toast (self, _("Wait for the current reply to finish, then implement the plan"));
      return;
    }

  /* Implement is the explicit choice that ends plan mode: the follow-up
   * runs in ask mode, so every change still asks (docs/architecture.md
   * §7.2). */
  gtk_drop_down_set_selected (self->mode_dropdown, TALLY_MODE_ASK);
  tally_window_send (self, _("Implement the plan."));
}

static void
refine_plan_activate (TallyWindow *self,
                      GVariant    *parameter)
{
  /* The analyst says what to change; the answer is a revised plan. */
  gtk_drop_down_set_selected (self->mode_dropdown, TALLY_MODE_PLAN);
  tally_composer_set_text (self->composer, _("Change the plan: "));
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}

/* One entry per action: its name, the type of its parameter and what it
 * does. Every action goes through window_action_cb(), which finds the
 * entry by name. */
static const struct {
  const char *name;
  const char *parameter_type;
  void (*activate) (TallyWindow *self,
                    GVariant    *parameter);
} window_actions[] = {
  { "win.new-session", NULL, new_session_activate },
  { "win.open-sample-session", NULL, open_sample_session_activate },
  { "win.raise-cost-cap", "d", raise_cost_cap_activate },
  { "win.search", NULL, search_activate },
  { "win.toggle-sidebar", NULL, toggle_sidebar_activate },
  { "win.stop", NULL, stop_activate },
  { "win.rename-session", NULL, rename_session_activate },
  { "win.delete-session", NULL, delete_session_activate },
  { "win.undo-delete", "s", undo_delete_activate },
  /* What a sidebar row asks for its own session (docs/architecture.md §11.1). */
  { "win.rename-saved-session", "(ss)", _tally_window_rename_saved_session_activate },
  { "win.pin-saved-session", "(sb)", _tally_window_pin_saved_session_activate },
  { "win.export-saved-session", "s", _tally_window_export_saved_session_activate },
  { "win.delete-saved-session", "s", _tally_window_delete_saved_session_activate },
  { "win.choose-database", NULL, choose_database_activate },
  { "win.choose-workspace", NULL, choose_workspace_activate },
  { "win.role-docs", NULL, role_docs_activate },
  { "win.dismiss-role-warning", NULL, dismiss_role_activate },
  { "win.open-data-files", NULL, _tally_window_open_data_files_activate },
  { "win.database-notes", NULL, _tally_window_database_notes_activate },
  { "win.open-workspace", NULL, open_workspace_activate },
  { "win.export-session", NULL, export_session_activate },
  { "win.sensitive-columns", NULL, _tally_window_sensitive_columns_activate },
  { "win.sent-to-api", NULL, _tally_window_sent_to_api_activate },
  { "win.open-file", "s", open_file_activate },
  { "win.preview-report", "s", preview_report_activate },

  /* What the cards decide (docs/architecture.md §3.2). */
  { "session.approve", "(simsmsmsms)", approve_activate },
  { "session.answer", "(sms)", answer_activate },
  { "session.implement-plan", "(sx)", implement_plan_activate },
  { "session.refine-plan", "(sx)", refine_plan_activate },
  { "session.retry", "s", retry_activate },
};

static void
window_action_cb (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  TallyWindow *self = TALLY_WINDOW (widget);

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (action_name != NULL);

  for (guint i = 0; i < G_N_ELEMENTS (window_actions); i++)
    {
      if (g_str_equal (window_actions[i].name, action_name))
        {
          window_actions[i].activate (self, parameter);
          return;
        }
    }

  g_assert_not_reached ();
}

/**
 * _tally_window_actions_class_init:
 * @widget_class: the #TallyWindow class
 *
 * Installs the `win.*` and `session.*` actions and the key binding of
 * `win.stop` on @widget_class.
 */
void
_tally_window_actions_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, role_revealer);

  for (guint i = 0; i < G_N_ELEMENTS (window_actions); i++)
    gtk_widget_class_install_action (widget_class, window_actions[i].name,
                                     window_actions[i].parameter_type, window_action_cb);

  /* Escape stops a running turn; a focused widget that uses Escape itself
   * (the search entry, a popover) gets it first. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.stop", NULL);
}
