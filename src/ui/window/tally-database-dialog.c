/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-data-import.h"
#include "tally-database-dialog.h"
#include "tally-pg-source.h"
#include "tally-secret.h"

/**
 * TallyDatabaseDialog:
 *
 * The window's database chooser (`win.choose-database`; issue 13 §1,
 * docs/postgresql.md): two pages under a view switcher.
 *
 * - *File*: a SQLite file, picked with the desktop's file chooser (the
 *   portal under Flatpak) and checked for SQLite's header. A CSV, TSV or
 *   JSON Lines file (tally_data_import_is_data_path()) is handed on with
 *   #TallyDatabaseDialog::data-file-chosen instead, for the window to
 *   import as *Open Data Files…* does (docs/data-files.md).
 * - *Server*: a PostgreSQL connection string or URI, a name and a
 *   password, and the saved connections listed by name. *Connect* opens a
 *   connection in a worker thread (tally_pg_source_connect_async()) and
 *   shows libpq's message when that fails. On success the connection is
 *   saved in the `pg-connections` key (name and the string without its
 *   password, tally_pg_conninfo_redact()) and a typed password goes to the
 *   keyring (tally_secret_store_pg_password_async()). Picking a saved
 *   connection looks its password up in the keyring and connects with it.
 *
 * Either way the dialog emits #TallyDatabaseDialog::chosen and closes. For
 * a server the database handed on carries the password (as a `password`
 * keyword or URI parameter) in memory only: the agent stores the
 * connection without it (docs/postgresql.md, "Connection strings").
 */

struct _TallyDatabaseDialog
{
  AdwWindow             parent_instance;

  /* Template */
  AdwViewStack         *stack;
  AdwStatusPage        *file_page;
  AdwPreferencesGroup  *saved_group;
  GtkListBox           *saved_list;
  AdwEntryRow          *name_row;
  AdwEntryRow          *conninfo_row;
  AdwPasswordEntryRow  *password_row;
  GtkLabel             *error_label;
  GtkSpinner           *spinner;
  GtkButton            *connect_button;

  GSettings            *settings;
  GCancellable         *cancellable;
  GtkFileChooserNative *chooser;
  char                 *error;
  gboolean              busy;
};

G_DEFINE_FINAL_TYPE (TallyDatabaseDialog, tally_database_dialog, ADW_TYPE_WINDOW)

enum {
  SIGNAL_CHOSEN,
  SIGNAL_DATA_FILE_CHOSEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

#define ROW_NAME_KEY "tally-connection-name"
#define ROW_CONNECTION_KEY "tally-connection"

/* Errors and the busy state {{{1 */

static void
set_error (TallyDatabaseDialog *self,
           const char          *message)
{
  g_free (self->error);
  self->error = g_strdup (message);
  gtk_label_set_text (self->error_label, message != NULL ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), message != NULL);
}

static void
set_busy (TallyDatabaseDialog *self,
          gboolean             busy)
{
  self->busy = busy;
  gtk_spinner_set_spinning (self->spinner, busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->connect_button), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->saved_list), !busy);
  if (busy)
    set_error (self, NULL);
}

static void
emit_chosen (TallyDatabaseDialog *self,
             const char          *database,
             const char          *name)
{
  g_signal_emit (self, signals[SIGNAL_CHOSEN], 0, database, name);
  gtk_window_close (GTK_WINDOW (self));
}

/* File {{{1 */

static gboolean
looks_like_sqlite (const char  *path,
                   GError     **error)
{
  static const char magic[16] = "SQLite format 3";
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) stream = NULL;
  char header[16] = { 0 };
  gsize read = 0;

  stream = g_file_read (file, NULL, error);
  if (stream == NULL ||
      !g_input_stream_read_all (G_INPUT_STREAM (stream), header, sizeof header, &read, NULL, error))
    return FALSE;

  if (read < sizeof header || memcmp (header, magic, sizeof magic) != 0)
    {
      g_autofree char *name = g_path_get_basename (path);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("“%s” is not a SQLite database"), name);
      return FALSE;
    }
  return TRUE;
}

static void
file_chosen_cb (GtkNativeDialog     *chooser,
                int                  response,
                TallyDatabaseDialog *self)
{
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;

  g_assert (TALLY_IS_DATABASE_DIALOG (self));

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  g_clear_object (&self->chooser);
  if (file == NULL)
    return;

  path = g_file_get_path (file);
  if (path == NULL)
    {
      adw_status_page_set_description (self->file_page, _("Only a file on this computer can be opened"));
      return;
    }
  _tally_database_dialog_choose_file (self, path);
}

/**
 * _tally_database_dialog_choose_file:
 * @self: a #TallyDatabaseDialog
 * @path: a local file's path, as the File page's chooser gives it
 *
 * What the File page does with a picked file: a data file
 * (tally_data_import_is_data_path()) goes out with
 * #TallyDatabaseDialog::data-file-chosen, a SQLite file with
 * #TallyDatabaseDialog::chosen, and either closes the dialog; anything
 * else is refused on the page ("… is not a SQLite database"). The tests
 * call it in place of the native chooser.
 */
void
_tally_database_dialog_choose_file (TallyDatabaseDialog *self,
                                    const char          *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;

  g_return_if_fail (TALLY_IS_DATABASE_DIALOG (self));
  g_return_if_fail (path != NULL);

  if (tally_data_import_is_data_path (path))
    {
      g_signal_emit (self, signals[SIGNAL_DATA_FILE_CHOSEN], 0, path);
      gtk_window_close (GTK_WINDOW (self));
      return;
    }
  if (!looks_like_sqlite (path, &error))
    {
      adw_status_page_set_description (self->file_page, error->message);
      return;
    }

  name = g_path_get_basename (path);
  emit_chosen (self, path, name);
}

static void
choose_file_cb (TallyDatabaseDialog *self)
{
  g_autoptr(GtkFileFilter) sqlite = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();

  g_assert (TALLY_IS_DATABASE_DIALOG (self));

  if (self->chooser != NULL)
    return;

  gtk_file_filter_set_name (sqlite, _("SQLite Databases"));
  gtk_file_filter_add_mime_type (sqlite, "application/vnd.sqlite3");
  gtk_file_filter_add_mime_type (sqlite, "application/x-sqlite3");
  gtk_file_filter_add_suffix (sqlite, "db");
  gtk_file_filter_add_suffix (sqlite, "sqlite");
  gtk_file_filter_add_suffix (sqlite, "sqlite3");
  gtk_file_filter_set_name (all, _("All Files"));
  gtk_file_filter_add_pattern (all, "*");

  self->chooser = gtk_file_chooser_native_new (_("Choose a Database"), GTK_WINDOW (self),
                                               GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), sqlite);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), all);
  gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (self->chooser), sqlite);
  g_signal_connect_object (self->chooser, "response", G_CALLBACK (file_chosen_cb), self, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* Saved connections {{{1 */

/* Keeps (name, connection) first in the `pg-connections` key, dropping an
 * older entry with the same name or the same connection. */
static void
save_connection (TallyDatabaseDialog *self,
                 const char          *name,
                 const char          *connection)
{
  g_autoptr(GVariant) saved = g_settings_get_value (self->settings, "pg-connections");
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(ss)"));
  GVariantIter iter;
  const char *old_name;
  const char *old_connection;

  g_variant_builder_add (&builder, "(ss)", name, connection);
  g_variant_iter_init (&iter, saved);
  while (g_variant_iter_next (&iter, "(&s&s)", &old_name, &old_connection))
    if (!g_str_equal (old_name, name) && !g_str_equal (old_connection, connection))
      g_variant_builder_add (&builder, "(ss)", old_name, old_connection);

  g_settings_set_value (self->settings, "pg-connections", g_variant_builder_end (&builder));
}

static void
forgotten_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(TallyDatabaseDialog) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!tally_secret_clear_finish (result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* TRANSLATORS: %s is the keyring's error message */
      g_autofree char *message = g_strdup_printf (_("The password could not be removed from the keyring: %s"),
                                                  error->message);
      set_error (self, message);
    }
}

static void
forget_clicked_cb (GtkButton           *button,
                   TallyDatabaseDialog *self)
{
  GtkWidget *row = gtk_widget_get_ancestor (GTK_WIDGET (button), ADW_TYPE_ACTION_ROW);
  const char *connection = g_object_get_data (G_OBJECT (row), ROW_CONNECTION_KEY);
  g_autoptr(GVariant) saved = g_settings_get_value (self->settings, "pg-connections");
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(ss)"));
  g_autofree char *key = g_strdup (connection);
  GVariantIter iter;
  const char *old_name;
  const char *old_connection;

  g_assert (TALLY_IS_DATABASE_DIALOG (self));

  g_variant_iter_init (&iter, saved);
  while (g_variant_iter_next (&iter, "(&s&s)", &old_name, &old_connection))
    if (!g_str_equal (old_connection, key))
      g_variant_builder_add (&builder, "(ss)", old_name, old_connection);
  /* Rebuilds the list, so @row and its data go. */
  g_settings_set_value (self->settings, "pg-connections", g_variant_builder_end (&builder));

  tally_secret_clear_pg_password_async (key, self->cancellable, forgotten_cb, g_object_ref (self));
}

static void
fill_saved_list (TallyDatabaseDialog *self)
{
  g_autoptr(GVariant) saved = g_settings_get_value (self->settings, "pg-connections");
  GtkWidget *child;
  GVariantIter iter;
  const char *name;
  const char *connection;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->saved_list))) != NULL)
    gtk_list_box_remove (self->saved_list, child);

  g_variant_iter_init (&iter, saved);
  while (g_variant_iter_next (&iter, "(&s&s)", &name, &connection))
    {
      GtkWidget *row = adw_action_row_new ();
      GtkWidget *forget = gtk_button_new_from_icon_name ("user-trash-symbolic");

      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), name);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), connection);
      adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 2);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      g_object_set_data_full (G_OBJECT (row), ROW_NAME_KEY, g_strdup (name), g_free);
      g_object_set_data_full (G_OBJECT (row), ROW_CONNECTION_KEY, g_strdup (connection), g_free);

      gtk_widget_set_valign (forget, GTK_ALIGN_CENTER);
      gtk_widget_add_css_class (forget, "flat");
      gtk_widget_set_tooltip_text (forget, _("Forget This Connection"));
      g_signal_connect_object (forget, "clicked", G_CALLBACK (forget_clicked_cb), self, 0);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), forget);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));

      gtk_list_box_append (self->saved_list, row);
    }

  gtk_widget_set_visible (GTK_WIDGET (self->saved_group),
                          gtk_widget_get_first_child (GTK_WIDGET (self->saved_list)) != NULL);
}

/* Connecting {{{1 */

typedef struct
{
  TallyDatabaseDialog *self;
  char                *name;
  char                *connection;   /* without the password: stored, shown */
  char                *conninfo;     /* with it: memory only */
  char                *password;     /* typed, for the keyring; NULL when none */
  char                *keyring_error;
  gboolean             saved;        /* picked from the saved connections */
} Connect;

static void
connect_free (Connect *job)
{
  g_object_unref (job->self);
  g_free (job->name);
  g_free (job->connection);
  tally_secret_free (job->conninfo);
  tally_secret_free (job->password);
  g_free (job->keyring_error);
  g_free (job);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Connect, connect_free)

/* Saves the connection, hands it on and closes; frees @job. */
static void
finish_connect (Connect *job)
{
  g_autoptr(Connect) done = job;
  TallyDatabaseDialog *self = done->self;

  set_busy (self, FALSE);
  save_connection (self, done->name, done->connection);
  gtk_editable_set_text (GTK_EDITABLE (self->password_row), "");
  emit_chosen (self, done->conninfo, done->name);
}

static void
password_stored_cb (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(Connect) job = user_data;
  g_autoptr(GError) error = NULL;

  if (!tally_secret_store_finish (result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      /* The connection is still used; the password only for now. */
      g_message ("The keyring did not keep the password of %s: %s", job->connection, error->message);
    }
  finish_connect (g_steal_pointer (&job));
}

static void
connected_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(Connect) job = user_data;
  TallyDatabaseDialog *self = job->self;
  g_autoptr(GError) error = NULL;

  if (!tally_pg_source_connect_finish (TALLY_PG_SOURCE (object), result, &error))
    {
      g_autoptr(GString) message = g_string_new (NULL);

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      set_busy (self, FALSE);
      /* libpq's message, after "Cannot connect to the PostgreSQL server". */
      g_string_append (message, error->message);
      if (job->keyring_error != NULL)
        /* TRANSLATORS: %s is the keyring's error message */
        g_string_append_printf (message, _(" (The keyring could not be read: %s)"), job->keyring_error);
      set_error (self, message->str);

      /* A saved connection that failed (a changed password) is put in the
       * form, so the analyst can type the password and try again. */
      if (job->saved)
        {
          gtk_editable_set_text (GTK_EDITABLE (self->name_row), job->name);
          gtk_editable_set_text (GTK_EDITABLE (self->conninfo_row), job->connection);
          gtk_widget_grab_focus (GTK_WIDGET (self->password_row));
        }
      return;
    }

  if (job->password != NULL)
    {
      Connect *storing = g_steal_pointer (&job);

      tally_secret_store_pg_password_async (storing->name, storing->connection, storing->password,
                                            self->cancellable, password_stored_cb, storing);
      return;
    }
  finish_connect (g_steal_pointer (&job));
}

/* Opens a connection for @job (transfer full) in a worker thread, with
 * @password (nullable) added to the connection string in memory. */
static void
start_connect (Connect    *job,
               const char *password)
{
  TallyDatabaseDialog *self = job->self;
  g_autoptr(TallyPgSource) source = NULL;
  g_autoptr(GError) error = NULL;

  job->conninfo = tally_pg_conninfo_add_password (job->connection, password);
  source = tally_pg_source_get_shared (job->conninfo, &error);
  if (source == NULL)
    {
      set_busy (self, FALSE);
      set_error (self, error->message);
      connect_free (job);
      return;
    }
  tally_pg_source_connect_async (source, self->cancellable, connected_cb, job);
}

static void
connect_cb (TallyDatabaseDialog *self)
{
  g_autofree char *conninfo = NULL;
  g_autofree char *redacted = NULL;
  g_autofree char *name = NULL;
  const char *password;
  Connect *job;

  g_assert (TALLY_IS_DATABASE_DIALOG (self));

  if (self->busy)
    return;

  conninfo = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->conninfo_row))));
  if (conninfo[0] == '\0')
    {
      set_error (self, _("Type a connection string or URI"));
      gtk_widget_grab_focus (GTK_WIDGET (self->conninfo_row));
      return;
    }
  if (!tally_pg_conninfo_is (conninfo))
    {
      set_error (self, _("This is not a PostgreSQL connection string: write keyword=value pairs such as "
                         "“host=db.example dbname=sales”, or a URI that starts with postgresql://"));
      return;
    }
  redacted = tally_pg_conninfo_redact (conninfo);
  if (!g_str_equal (redacted, conninfo))
    {
      set_error (self, _("Type the password in the Password field rather than in the connection string, "
                         "so that it is kept in the keyring and never in Tally’s settings"));
      return;
    }

  name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->name_row))));
  if (name[0] == '\0')
    {
      /* The database's name, else the whole string. */
      g_autoptr(TallyPgSource) source = tally_pg_source_get_shared (redacted, NULL);

      g_free (name);
      name = source != NULL ? tally_pg_source_dup_database_name (source) : NULL;
      if (name == NULL)
        name = g_strdup (redacted);
    }

  job = g_new0 (Connect, 1);
  job->self = g_object_ref (self);
  job->name = g_steal_pointer (&name);
  job->connection = g_steal_pointer (&redacted);
  password = gtk_editable_get_text (GTK_EDITABLE (self->password_row));
  job->password = password[0] != '\0' ? g_strdup (password) : NULL;

  set_busy (self, TRUE);
  start_connect (job, job->password);
}

static void
password_found_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Connect *job = user_data;
  g_autoptr(GError) error = NULL;
  char *password;

  password = tally_secret_lookup_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      connect_free (job);
      return;
    }
  /* Without a keyring libpq may still find a password elsewhere
   * (~/.pgpass outside Flatpak); its error says when it did not. */
  if (error != NULL)
    job->keyring_error = g_strdup (error->message);

  /* The password came from the keyring, so it is not stored again. */
  start_connect (job, password);
  tally_secret_free (password);
}

static void
saved_row_activated_cb (TallyDatabaseDialog *self,
                        GtkListBoxRow       *row)
{
  Connect *job;

  g_assert (TALLY_IS_DATABASE_DIALOG (self));

  if (self->busy)
    return;

  job = g_new0 (Connect, 1);
  job->self = g_object_ref (self);
  job->name = g_strdup (g_object_get_data (G_OBJECT (row), ROW_NAME_KEY));
  job->connection = g_strdup (g_object_get_data (G_OBJECT (row), ROW_CONNECTION_KEY));
  job->saved = TRUE;

  set_busy (self, TRUE);
  tally_secret_lookup_pg_password_async (job->connection, self->cancellable, password_found_cb, job);
}

/* GObject {{{1 */

static void
tally_database_dialog_dispose (GObject *object)
{
  TallyDatabaseDialog *self = TALLY_DATABASE_DIALOG (object);

  g_cancellable_cancel (self->cancellable);
  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);

  G_OBJECT_CLASS (tally_database_dialog_parent_class)->dispose (object);
}

static void
tally_database_dialog_finalize (GObject *object)
{
  TallyDatabaseDialog *self = TALLY_DATABASE_DIALOG (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->cancellable);
  g_free (self->error);

  G_OBJECT_CLASS (tally_database_dialog_parent_class)->finalize (object);
}

static void
tally_database_dialog_class_init (TallyDatabaseDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_database_dialog_dispose;
  object_class->finalize = tally_database_dialog_finalize;

  /**
   * TallyDatabaseDialog::chosen:
   * @self: the dialog
   * @database: a SQLite file's path, or a PostgreSQL connection string
   *   that may carry the password (keep it in memory only)
   * @name: what to call the database: the file's name or the
   *   connection's name
   *
   * Emitted when the analyst picked a file that looks like SQLite, or
   * when a connection to a server was opened; the dialog then closes.
   */
  signals[SIGNAL_CHOSEN] =
    g_signal_new ("chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);

  /**
   * TallyDatabaseDialog::data-file-chosen:
   * @self: the dialog
   * @path: the path of a CSV, TSV or JSON Lines file
   *   (tally_data_import_is_data_path()), not yet read
   *
   * Emitted instead of #TallyDatabaseDialog::chosen when the analyst
   * picked a data file on the File page, for the window to import it
   * (docs/data-files.md); the dialog then closes.
   */
  signals[SIGNAL_DATA_FILE_CHOSEN] =
    g_signal_new ("data-file-chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/tallyapp/Tally/window/tally-database-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, stack);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, file_page);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, saved_group);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, saved_list);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, name_row);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, conninfo_row);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, password_row);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, error_label);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, spinner);
  gtk_widget_class_bind_template_child (widget_class, TallyDatabaseDialog, connect_button);
  gtk_widget_class_bind_template_callback (widget_class, choose_file_cb);
  gtk_widget_class_bind_template_callback (widget_class, connect_cb);
  gtk_widget_class_bind_template_callback (widget_class, saved_row_activated_cb);
}

static void
tally_database_dialog_init (TallyDatabaseDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
}

/* API {{{1 */

/**
 * tally_database_dialog_new:
 * @parent: (nullable): the window the dialog belongs to
 * @settings: the application's settings (`pg-connections`)
 *
 * Makes the chooser; show it with gtk_window_present(). It opens on the
 * *Server* page when connections are saved, else on *File*.
 *
 * Returns: (transfer none): the dialog, owned by GTK's toplevel list
 *   until it closes (destroy-with-parent)
 */
TallyDatabaseDialog *
tally_database_dialog_new (GtkWindow *parent,
                           GSettings *settings)
{
  TallyDatabaseDialog *self;

  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);

  self = g_object_new (TALLY_TYPE_DATABASE_DIALOG,
                       "transient-for", parent,
                       "destroy-with-parent", TRUE,
                       NULL);
  self->settings = g_object_ref (settings);
  g_signal_connect_object (settings, "changed::pg-connections", G_CALLBACK (fill_saved_list),
                           self, G_CONNECT_SWAPPED);
  fill_saved_list (self);
  if (gtk_widget_get_visible (GTK_WIDGET (self->saved_group)))
    tally_database_dialog_set_page (self, "server");

  return self;
}

/**
 * tally_database_dialog_set_page:
 * @self: a #TallyDatabaseDialog
 * @page: `file` or `server`
 *
 * Shows one of the two pages.
 */
void
tally_database_dialog_set_page (TallyDatabaseDialog *self,
                                const char          *page)
{
  g_return_if_fail (TALLY_IS_DATABASE_DIALOG (self));
  g_return_if_fail (g_strcmp0 (page, "file") == 0 || g_strcmp0 (page, "server") == 0);

  adw_view_stack_set_visible_child_name (self->stack, page);
}

/**
 * tally_database_dialog_get_error:
 * @self: a #TallyDatabaseDialog
 *
 * Returns: (transfer none) (nullable): the message shown on the *Server*
 *   page (libpq's error of the last attempt, or what is wrong with the
 *   form), %NULL when none is shown
 */
const char *
tally_database_dialog_get_error (TallyDatabaseDialog *self)
{
  g_return_val_if_fail (TALLY_IS_DATABASE_DIALOG (self), NULL);
  return self->error;
}

/**
 * tally_database_dialog_get_busy:
 * @self: a #TallyDatabaseDialog
 *
 * Returns: %TRUE while a connection is being opened (or its password
 *   looked up or stored)
 */
gboolean
tally_database_dialog_get_busy (TallyDatabaseDialog *self)
{
  g_return_val_if_fail (TALLY_IS_DATABASE_DIALOG (self), FALSE);
  return self->busy;
}

GtkEditable *
_tally_database_dialog_get_name_entry (TallyDatabaseDialog *self)
{
  return GTK_EDITABLE (self->name_row);
}

GtkEditable *
_tally_database_dialog_get_conninfo_entry (TallyDatabaseDialog *self)
{
  return GTK_EDITABLE (self->conninfo_row);
}

GtkEditable *
_tally_database_dialog_get_password_entry (TallyDatabaseDialog *self)
{
  return GTK_EDITABLE (self->password_row);
}

GtkButton *
_tally_database_dialog_get_connect_button (TallyDatabaseDialog *self)
{
  return self->connect_button;
}

GtkListBox *
_tally_database_dialog_get_saved_list (TallyDatabaseDialog *self)
{
  return self->saved_list;
}
