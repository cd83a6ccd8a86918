/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-notes-window"

#include "config.h"

#include "tally-notes-window.h"

#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>
#include <string.h>

#include "tally-database-profile.h"
#include "tally-format.h"
#include "tally-pg-source.h"
#include "tally-source-style.h"

/**
 * TallyNotesWindow:
 *
 * The editor of the analyst's notes about one database (docs/notes.md):
 * Markdown in a source view, Save and Cancel. Saving replaces the notes
 * file atomically in a worker thread; an error is shown in the window,
 * which stays open, and the old file is left as it was.
 */

struct _TallyNotesWindow
{
  AdwWindow       parent_instance;

  /* Template widgets */
  AdwWindowTitle *window_title;
  GtkRevealer    *error_revealer;
  GtkLabel       *error_label;
  GtkSourceView  *view;

  char           *store_dir;
  char           *key;          /* the database's key (tally_pg_database_key()) */
  char           *path;         /* the notes file */
  char           *error;        /* the error shown, NULL = none */
  GCancellable   *cancellable;
};

G_DEFINE_FINAL_TYPE (TallyNotesWindow, tally_notes_window, ADW_TYPE_WINDOW)

enum {
  SAVED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
show_error (TallyNotesWindow *self,
            const char       *message)
{
  g_free (self->error);
  self->error = g_strdup (message);
  gtk_label_set_text (self->error_label, message != NULL ? message : "");
  gtk_revealer_set_reveal_child (self->error_revealer, message != NULL);
}

typedef struct {
  char *store_dir;
  char *key;
  char *text;
} SaveJob;

static void
save_job_free (SaveJob *job)
{
  g_free (job->store_dir);
  g_free (job->key);
  g_free (job->text);
  g_free (job);
}

static void
save_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  SaveJob *job = task_data;
  g_autofree char *dir = NULL;
  GError *error = NULL;

  dir = tally_database_profile_ensure_dir (job->store_dir, job->key, &error);
  if (dir == NULL || !tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, job->text, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
save_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(TallyNotesWindow) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      /* TRANSLATORS: %s says why, e.g. "Permission denied" */
      message = g_strdup_printf (_("The notes could not be saved: %s"), error->message);
      show_error (self, message);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "notes.save", TRUE);
      return;
    }

  g_signal_emit (self, signals[SAVED], 0);
  gtk_window_close (GTK_WINDOW (self));
}

static void
save_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TallyNotesWindow *self = TALLY_NOTES_WINDOW (widget);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->view));
  g_autoptr(GTask) task = NULL;
  GtkTextIter start, end;
  SaveJob *job;
  char *text;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  text = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  if (strlen (text) > TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES)
    {
      g_autofree char *size = tally_format_count (strlen (text), TALLY_GROUPING_LOCALE);
      g_autofree char *limit = tally_format_count (TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES, TALLY_GROUPING_LOCALE);
      g_autofree char *message = NULL;

      /* TRANSLATORS: two numbers of bytes */
      message = g_strdup_printf (_("The notes are %s bytes long; they may be at most %s. Shorten them to save."),
                                 size, limit);
      show_error (self, message);
      g_free (text);
      return;
    }

  job = g_new0 (SaveJob, 1);
  job->store_dir = g_strdup (self->store_dir);
  job->key = g_strdup (self->key);
  job->text = text;

  gtk_widget_action_set_enabled (widget, "notes.save", FALSE);
  /* The window is the callback's data, released there on the main thread,
   * not the task's source object, which the worker thread could release
   * last (a window must not be disposed off the main thread). */
  task = g_task_new (NULL, self->cancellable, save_done_cb, g_object_ref (self));
  g_task_set_source_tag (task, save_action);
  g_task_set_task_data (task, job, (GDestroyNotify)save_job_free);
  g_task_run_in_thread (task, save_thread);
}

static void
cancel_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  gtk_window_close (GTK_WINDOW (widget));
}

static void
tally_notes_window_dispose (GObject *object)
{
  TallyNotesWindow *self = (TallyNotesWindow *)object;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);

  G_OBJECT_CLASS (tally_notes_window_parent_class)->dispose (object);
}

static void
tally_notes_window_finalize (GObject *object)
{
  TallyNotesWindow *self = (TallyNotesWindow *)object;

  g_free (self->store_dir);
  g_free (self->key);
  g_free (self->path);
  g_free (self->error);

  G_OBJECT_CLASS (tally_notes_window_parent_class)->finalize (object);
}

static void
tally_notes_window_class_init (TallyNotesWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_notes_window_dispose;
  object_class->finalize = tally_notes_window_finalize;

  /**
   * TallyNotesWindow::saved:
   * @self: the window
   *
   * The notes were written; the window closes right after.
   */
  signals[SAVED] = g_signal_new ("saved", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 0);

  g_type_ensure (GTK_SOURCE_TYPE_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/window/tally-notes-window.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyNotesWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, TallyNotesWindow, error_revealer);
  gtk_widget_class_bind_template_child (widget_class, TallyNotesWindow, error_label);
  gtk_widget_class_bind_template_child (widget_class, TallyNotesWindow, view);

  /**
   * TallyNotesWindow|notes.save:
   *
   * Writes the notes and closes the window, or shows why it cannot.
   */
  gtk_widget_class_install_action (widget_class, "notes.save", NULL, save_action);
  /**
   * TallyNotesWindow|notes.cancel:
   *
   * Closes the window without saving.
   */
  gtk_widget_class_install_action (widget_class, "notes.cancel", NULL, cancel_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK, "notes.save", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "notes.cancel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "notes.cancel", NULL);
}

static void
tally_notes_window_init (TallyNotesWindow *self)
{
  GtkSourceLanguageManager *languages = gtk_source_language_manager_get_default ();
  g_autoptr(GtkSourceBuffer) buffer = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();

  buffer = gtk_source_buffer_new_with_language (gtk_source_language_manager_get_language (languages, "markdown"));
  tally_source_style_follow (buffer);
  gtk_text_view_set_buffer (GTK_TEXT_VIEW (self->view), GTK_TEXT_BUFFER (buffer));
}

/* The database as the title names it: a SQLite file's name, or the
 * connection string without its password. */
static char *
dup_display_name (const char *key)
{
  if (tally_pg_conninfo_is (key))
    return g_strdup (key);
  return g_path_get_basename (key);
}

/**
 * tally_notes_window_new:
 * @parent: (nullable): the window it belongs to
 * @store_dir: (type filename): the folder of the session store that is open
 * @database: the database: a SQLite path or a PostgreSQL connection string
 *   (a password in it is neither shown nor used)
 *
 * Opens the editor of the notes about @database, with the notes file's
 * text, or with an error shown when it cannot be read. The window is
 * modal to @parent; present it with gtk_window_present().
 *
 * Returns: (transfer none): the new window, owned by GTK until closed
 */
TallyNotesWindow *
tally_notes_window_new (GtkWindow  *parent,
                        const char *store_dir,
                        const char *database)
{
  TallyNotesWindow *self;
  g_autofree char *dir = NULL;
  g_autofree char *name = NULL;
  g_autofree char *title = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (store_dir != NULL, NULL);
  g_return_val_if_fail (database != NULL, NULL);

  self = g_object_new (TALLY_TYPE_NOTES_WINDOW, "transient-for", parent, NULL);
  self->store_dir = g_strdup (store_dir);
  self->key = tally_pg_database_key (database);
  dir = tally_database_profile_dir (store_dir, self->key);
  self->path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);

  name = dup_display_name (self->key);
  /* TRANSLATORS: the editor's title; %s is the database, e.g. "sales.db" */
  title = g_strdup_printf (_("Notes About %s"), name);
  gtk_window_set_title (GTK_WINDOW (self), title);
  adw_window_title_set_title (self->window_title, _("Database Notes"));
  adw_window_title_set_subtitle (self->window_title, name);

  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  if (error != NULL)
    {
      g_autofree char *message = NULL;

      /* TRANSLATORS: %s says why; saving replaces the file */
      message = g_strdup_printf (_("The notes could not be read: %s. Saving replaces them."), error->message);
      show_error (self, message);
    }
  else if (text != NULL)
    {
      GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->view));

      /* Loading is not an edit the analyst could undo. */
      gtk_text_buffer_begin_irreversible_action (buffer);
      gtk_text_buffer_set_text (buffer, text, -1);
      gtk_text_buffer_end_irreversible_action (buffer);
    }

  gtk_widget_grab_focus (GTK_WIDGET (self->view));
  return self;
}

/**
 * tally_notes_window_get_path:
 * @self: a #TallyNotesWindow
 *
 * Returns: (transfer none) (type filename): the notes file that Save
 *   writes
 */
const char *
tally_notes_window_get_path (TallyNotesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_NOTES_WINDOW (self), NULL);
  return self->path;
}

/**
 * tally_notes_window_get_buffer:
 * @self: a #TallyNotesWindow
 *
 * Returns: (transfer none): the buffer the notes are edited in
 */
GtkTextBuffer *
tally_notes_window_get_buffer (TallyNotesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_NOTES_WINDOW (self), NULL);
  return gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->view));
}

/**
 * tally_notes_window_get_error:
 * @self: a #TallyNotesWindow
 *
 * Returns: (transfer none) (nullable): the error the window shows, or
 *   %NULL when it shows none
 */
const char *
tally_notes_window_get_error (TallyNotesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_NOTES_WINDOW (self), NULL);
  return self->error;
}
