/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-sensitive-dialog"

#include "config.h"

#include "tally-sensitive-dialog.h"

#include <glib/gi18n.h>

#include "tally-database-profile.h"
#include "tally-pg-source.h"
#include "tally-sensitive-columns.h"

/**
 * TallySensitiveDialog:
 *
 * "Sensitive Columns": edits the `sensitive-columns` file of the window
 * database's profile, one `table.column` per line (docs/ledger.md §2).
 * Saving checks every line first; a line that is not a column is named
 * and nothing is written. The list applies from the next message.
 */
struct _TallySensitiveDialog
{
  AdwWindow    parent_instance;

  /* Template widgets */
  GtkRevealer *error_revealer;
  GtkLabel    *error_label;
  GtkTextView *view;

  char        *store_dir;
  char        *key;          /* the database's key (tally_pg_database_key()) */
};

G_DEFINE_FINAL_TYPE (TallySensitiveDialog, tally_sensitive_dialog, ADW_TYPE_WINDOW)

enum {
  SAVED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
show_error (TallySensitiveDialog *self,
            const char           *message)
{
  gtk_label_set_text (self->error_label, message != NULL ? message : "");
  gtk_revealer_set_reveal_child (self->error_revealer, message != NULL);
}

static void
save_activated (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  TallySensitiveDialog *self = TALLY_SENSITIVE_DIALOG (widget);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->view);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) columns = NULL;
  g_autofree char *text = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *dir = NULL;
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  text = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);

  columns = tally_sensitive_columns_parse (text, &error);
  if (columns != NULL)
    {
      contents = tally_sensitive_columns_format ((const char * const *) columns);
      dir = tally_database_profile_ensure_dir (self->store_dir, self->key, &error);
    }
  if (dir == NULL || !tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS, contents, &error))
    {
      show_error (self, error->message);
      return;
    }

  g_signal_emit (self, signals[SAVED], 0);
  gtk_window_close (GTK_WINDOW (self));
}

static void
tally_sensitive_dialog_finalize (GObject *object)
{
  TallySensitiveDialog *self = TALLY_SENSITIVE_DIALOG (object);

  g_free (self->store_dir);
  g_free (self->key);

  G_OBJECT_CLASS (tally_sensitive_dialog_parent_class)->finalize (object);
}

static void
tally_sensitive_dialog_class_init (TallySensitiveDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = tally_sensitive_dialog_finalize;

  /**
   * TallySensitiveDialog::saved:
   * @self: the dialog
   *
   * The list was written; the dialog closes right after.
   */
  signals[SAVED] = g_signal_new ("saved", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/window/tally-sensitive-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, TallySensitiveDialog, error_revealer);
  gtk_widget_class_bind_template_child (widget_class, TallySensitiveDialog, error_label);
  gtk_widget_class_bind_template_child (widget_class, TallySensitiveDialog, view);
  gtk_widget_class_install_action (widget_class, "sensitive.save", NULL, save_activated);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK, "sensitive.save", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
tally_sensitive_dialog_init (TallySensitiveDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * tally_sensitive_dialog_new:
 * @parent: (nullable): the window it belongs to
 * @store_dir: (type filename): the folder of the session store, where the
 *   databases' profile folders are
 * @database: the database: a file path or a PostgreSQL connection string
 *
 * Creates the editor of @database's sensitive columns, filled with the
 * file's list (a file that cannot be read shows why, and an empty list).
 *
 * Returns: (transfer none): the new dialog; present it with
 *   gtk_window_present()
 */
TallySensitiveDialog *
tally_sensitive_dialog_new (GtkWindow  *parent,
                            const char *store_dir,
                            const char *database)
{
  TallySensitiveDialog *self;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *text = NULL;

  g_return_val_if_fail (store_dir != NULL && database != NULL, NULL);

  self = g_object_new (TALLY_TYPE_SENSITIVE_DIALOG, "transient-for", parent, NULL);
  self->store_dir = g_strdup (store_dir);
  self->key = tally_pg_database_key (database);

  /* A few lines in a local file: read here. */
  dir = tally_database_profile_dir (store_dir, self->key);
  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS, &error);
  if (error != NULL)
    show_error (self, error->message);
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->view), text != NULL ? text : "", -1);

  return self;
}
