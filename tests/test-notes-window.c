/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The notes editor under Xvfb (docs/notes.md): it opens with the notes
 * file's text and a title naming the database, saves what was typed into
 * the file and closes, shows why a save failed and keeps the old file,
 * and closes without writing on Cancel. */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tally-application.h"
#include "tally-database-profile.h"
#include "tally-notes-window.h"
#include "tally-pg-source.h"
#include "tally-test-mock.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-ui.h"
#include "tally-window-private.h"

typedef struct {
  char             *store_dir;
  char             *database;
  TallyNotesWindow *window;     /* weak */
  guint             saved;
} Fixture;

static void
saved_cb (TallyNotesWindow *window,
          Fixture          *f)
{
  f->saved++;
}

static void
fixture_init (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  memset (f, 0, sizeof *f);
  f->store_dir = g_dir_make_tmp ("tally-notes-window-XXXXXX", &error);
  g_assert_no_error (error);
  f->database = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
}

static void
fixture_open (Fixture *f)
{
  TallyNotesWindow *window = tally_notes_window_new (NULL, f->store_dir, f->database);

  g_set_weak_pointer (&f->window, window);
  g_signal_connect (window, "saved", G_CALLBACK (saved_cb), f);
  gtk_window_present (GTK_WINDOW (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);
}

static void
fixture_clear (Fixture *f)
{
  if (f->window != NULL)
    gtk_window_destroy (GTK_WINDOW (f->window));
  SPIN_UNTIL (f->window == NULL);
  tally_test_rm_rf (f->store_dir);
  g_free (f->store_dir);
  g_free (f->database);
}

static char *
notes_dir (Fixture *f)
{
  g_autofree char *key = tally_pg_database_key (f->database);

  return tally_database_profile_dir (f->store_dir, key);
}

static char *
notes_dir_made (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = tally_pg_database_key (f->database);
  char *dir = tally_database_profile_ensure_dir (f->store_dir, key, &error);

  g_assert_no_error (error);
  return dir;
}

static char *
buffer_text (TallyNotesWindow *window)
{
  GtkTextBuffer *buffer = tally_notes_window_get_buffer (window);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

/* Types @text at the end of the buffer, as the keyboard would. */
static void
type_at_end (TallyNotesWindow *window,
             const char       *text)
{
  GtkTextBuffer *buffer = tally_notes_window_get_buffer (window);
  GtkTextIter end;

  gtk_text_buffer_get_end_iter (buffer, &end);
  gtk_text_buffer_place_cursor (buffer, &end);
  g_assert_true (gtk_text_buffer_insert_interactive_at_cursor (buffer, text, -1, TRUE));
}

static void
test_open_type_save (void)
{
  Fixture f;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *path = NULL;
  g_autofree char *saved = NULL;
  g_autofree char *key_file = NULL;
  g_autofree char *key_text = NULL;
  g_autofree char *expected_key = NULL;
  g_autofree char *key_text_want = NULL;

  fixture_init (&f);
  dir = notes_dir_made (&f);
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "Revenue excludes refunds.", &error));
  g_assert_no_error (error);

  fixture_open (&f);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (f.window)), ==, "Notes About chinook.sqlite");
  shown = buffer_text (f.window);
  g_assert_cmpstr (shown, ==, "Revenue excludes refunds.");
  g_assert_null (tally_notes_window_get_error (f.window));
  path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_assert_cmpstr (tally_notes_window_get_path (f.window), ==, path);

  type_at_end (f.window, "\nWeeks start on Monday — ISO 8601.\n");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "notes.save", NULL));
  SPIN_UNTIL (f.saved == 1);
  /* The window closes once the notes are written. */
  SPIN_UNTIL (f.window == NULL);

  g_assert_true (g_file_get_contents (path, &saved, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (saved, ==, "Revenue excludes refunds.\nWeeks start on Monday — ISO 8601.\n");

  key_file = g_build_filename (dir, TALLY_DATABASE_PROFILE_KEY_FILE, NULL);
  g_assert_true (g_file_get_contents (key_file, &key_text, NULL, &error));
  key_text_want = tally_pg_database_key (f.database);
  expected_key = g_strconcat (key_text_want, "\n", NULL);
  g_assert_cmpstr (key_text, ==, expected_key);

  fixture_clear (&f);
}

/* A first save makes the folder; a PostgreSQL title has no password. */
static void
test_new_notes_postgres (void)
{
  Fixture f;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *saved = NULL;
  g_autofree char *path = NULL;

  fixture_init (&f);
  g_free (f.database);
  f.database = g_strdup ("postgresql://ana:s3cret@db.example/sales");
  fixture_open (&f);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (f.window)), ==,
                   "Notes About postgresql://ana@db.example/sales");
  g_assert_null (strstr (gtk_window_get_title (GTK_WINDOW (f.window)), "s3cret"));

  type_at_end (f.window, "Store 7 closed in March.");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "notes.save", NULL));
  SPIN_UNTIL (f.saved == 1);

  dir = tally_database_profile_dir (f.store_dir, "postgresql://ana@db.example/sales");
  path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_assert_true (g_file_get_contents (path, &saved, NULL, &error));
  g_assert_cmpstr (saved, ==, "Store 7 closed in March.");

  fixture_clear (&f);
}

/* A save that fails says why, keeps the window open with the text, and
 * leaves the old file; notes over the limit are not written at all. */
static void
test_save_errors (void)
{
  Fixture f;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *text = NULL;
  g_autofree char *big = NULL;
  g_autofree char *blocker = NULL;
  g_autofree char *file_text = NULL;

  fixture_init (&f);
  dir = notes_dir_made (&f);
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "Old notes.", &error));

  /* Just over the limit, in short lines (a single 64 KiB word is slow to
   * lay out). */
  {
    GString *lines = g_string_new (NULL);

    while (lines->len <= TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES)
      g_string_append (lines, "Revenue excludes refunds.\n");
    big = g_string_free (lines, FALSE);
  }
  fixture_open (&f);
  type_at_end (f.window, big);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "notes.save", NULL));
  tally_test_spin_idle ();
  g_assert_nonnull (tally_notes_window_get_error (f.window));
  g_assert_nonnull (strstr (tally_notes_window_get_error (f.window), "at most"));
  g_assert_cmpuint (f.saved, ==, 0);
  g_assert_nonnull (f.window);

  /* A folder in place of the file: the rename over it fails. */
  gtk_text_buffer_set_text (tally_notes_window_get_buffer (f.window), "New notes.", -1);
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "Old notes.", &error));
  blocker = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_assert_cmpint (g_unlink (blocker), ==, 0);
  g_assert_cmpint (g_mkdir (blocker, 0700), ==, 0);
  tally_test_write_file (blocker, "keep", "x", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "notes.save", NULL));
  SPIN_UNTIL (tally_notes_window_get_error (f.window) != NULL &&
              strstr (tally_notes_window_get_error (f.window), "could not be saved") != NULL);
  g_assert_cmpuint (f.saved, ==, 0);
  g_assert_nonnull (f.window);
  text = buffer_text (f.window);
  g_assert_cmpstr (text, ==, "New notes.");
  g_assert_true (g_file_test (blocker, G_FILE_TEST_IS_DIR));

  /* Once the way is clear, Save works again. */
  tally_test_rm_rf (blocker);
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "Old notes.", &error));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "notes.save", NULL));
  SPIN_UNTIL (f.saved == 1);
  g_assert_true (g_file_get_contents (blocker, &file_text, NULL, &error));
  g_assert_cmpstr (file_text, ==, "New notes.");

  fixture_clear (&f);
}

/* Cancel closes without writing. */
static void
test_cancel (void)
{
  Fixture f;
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;

  fixture_init (&f);
  fixture_open (&f);
  type_at_end (f.window, "Never saved.");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "notes.cancel", NULL));
  SPIN_UNTIL (f.window == NULL);
  g_assert_cmpuint (f.saved, ==, 0);

  dir = notes_dir (&f);
  path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  fixture_clear (&f);
}

/* The window's menu item: win.database-notes opens the editor for the
 * window's database in the folder beside the store the app opened, and a
 * save says so in a toast. */

typedef struct {
  GApplication *app;
  char         *store_dir;
  char         *store_path;
  guint         saved;
  char         *written;
} AppRun;

static TallyNotesWindow *
find_notes_window (void)
{
  g_autoptr(GListModel) toplevels = g_object_ref (gtk_window_get_toplevels ());

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);

      if (TALLY_IS_NOTES_WINDOW (window))
        return TALLY_NOTES_WINDOW (window);
    }
  return NULL;
}

static void
app_saved_cb (TallyNotesWindow *notes,
              AppRun           *run)
{
  run->saved++;
}

static gboolean
app_body_idle (gpointer user_data)
{
  AppRun *run = user_data;
  TallyWindow *window = TALLY_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (run->app)));
  TallyNotesWindow *notes = NULL;
  g_autofree char *key = NULL;
  g_autofree char *name = NULL;
  g_autofree char *title = NULL;
  g_autofree char *dir = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (window);
  gtk_window_present (GTK_WINDOW (window));
  tally_test_spin_idle ();

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.database-notes", NULL));
  SPIN_UNTIL ((notes = find_notes_window ()) != NULL);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (notes)) == GTK_WINDOW (window));
  key = tally_pg_database_key (tally_application_get_default_database ());
  name = g_path_get_basename (key);
  title = g_strdup_printf ("Notes About %s", name);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (notes)), ==, title);

  g_signal_connect (notes, "saved", G_CALLBACK (app_saved_cb), run);
  type_at_end (notes, "Revenue excludes refunds.");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (notes), "notes.save", NULL));
  SPIN_UNTIL (run->saved == 1);
  SPIN_UNTIL (find_notes_window () == NULL);
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==,
                   "Notes saved. The model gets them with your first message.");

  dir = tally_database_profile_dir (run->store_dir, key);
  run->written = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_no_error (error);

  gtk_window_close (GTK_WINDOW (window));
  return G_SOURCE_REMOVE;
}

static void
app_activate_cb (GApplication *app,
                 AppRun       *run)
{
  if (run->app == NULL)
    {
      run->app = app;
      g_idle_add (app_body_idle, run);
    }
}

static void
test_window_menu (void)
{
  g_autoptr(TallyApplication) app = tally_application_new ();
  g_autoptr(GError) error = NULL;
  AppRun run = { 0 };
  const char *argv[] = { "tally", "--store", NULL, NULL };

  run.store_dir = g_dir_make_tmp ("tally-notes-app-XXXXXX", &error);
  g_assert_no_error (error);
  run.store_path = g_build_filename (run.store_dir, "tally.db", NULL);
  argv[2] = run.store_path;

  g_application_set_flags (G_APPLICATION (app),
                           G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_NON_UNIQUE);
  g_signal_connect_after (app, "activate", G_CALLBACK (app_activate_cb), &run);
  g_assert_cmpint (g_application_run (G_APPLICATION (app), 3, (char **)argv), ==, 0);
  g_clear_object (&app);
  tally_test_spin_idle ();

  g_assert_cmpstr (run.written, ==, "Revenue excludes refunds.");

  tally_test_rm_rf (run.store_dir);
  g_free (run.store_dir);
  g_free (run.store_path);
  g_free (run.written);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();

  g_test_add_func ("/tally/notes-window/open-type-save", test_open_type_save);
  g_test_add_func ("/tally/notes-window/new-notes-postgres", test_new_notes_postgres);
  g_test_add_func ("/tally/notes-window/save-errors", test_save_errors);
  g_test_add_func ("/tally/notes-window/cancel", test_cancel);
  g_test_add_func ("/tally/notes-window/window-menu", test_window_menu);

  return g_test_run ();
}
