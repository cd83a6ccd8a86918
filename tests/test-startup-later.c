/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * Start-up (issue 15, "Start like a hello world"): what waits until the
 * window's first frame, or until it is first used, and that the window
 * still does the right thing meanwhile and once it arrives. Structural
 * facts only, never times (those are in tests/bench/bench-startup.c).
 *
 * - The keyring is asked after the first frame: before it, the key is
 *   being looked up, nothing is sent (the text stays in the composer and
 *   a toast says why), and the first-launch page has not been built; once
 *   the keyring answers, the window shows what its answer means (a stored
 *   key: the empty page; none: the first-launch page, built then).
 * - The main menu's popover is made the first time it opens, once.
 * - The sidebar's filtering and the banners' update before the first
 *   frame do not open the store.
 */

#include "config.h"

#include <adwaita.h>

#include "tally-application-private.h"
#include "tally-composer.h"
#include "tally-secret.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-window-private.h"

#define QUESTION "Which store sold the most in March?"
#define LOOKING_UP_TOAST "Still reading the API key from your keyring — send again in a moment"

static guint
count_key_rows (TallyWindow *window)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (GTK_WIDGET (window), ADW_TYPE_PASSWORD_ENTRY_ROW);

  return rows->len;
}

/* /tally/startup-later/keyring-with-key, /tally/startup-later/keyring-without-key */

/* Before the first frame (tally_test_app_run_before_frame());
 * _tally_window_is_refreshing() says the work after it has not run. */
static void
before_first_frame (TallyApplication *app,
                    TallyWindow      *window,
                    gpointer          data)
{
  g_autofree char *kept = NULL;

  g_assert_true (_tally_window_is_refreshing (window));
  g_assert_cmpint (tally_application_get_api_key_source (app), ==, TALLY_API_KEY_SOURCE_LOOKING_UP);

  /* The store opens after the first frame: filtering the sidebar or
   * updating the banners before then does not open it (on the main thread, reading the whole file to
   * check it), and leaves the sidebar's page as it was. */
  {
    g_autofree char *page = g_strdup (_tally_window_get_sidebar_page (window));

    g_assert_false (_tally_application_store_tried (app));
    _tally_window_refilter (window);
    g_assert_false (_tally_application_store_tried (app));
    /* nor does the online state changing, which updates the banners */
    g_object_notify (G_OBJECT (app), "online");
    g_assert_false (_tally_application_store_tried (app));
    g_assert_null (_tally_application_peek_store (app));
    g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, page);
  }
  g_assert_false (tally_application_has_api_key (app));

  /* Meanwhile the window shows the empty page, without the first-launch
   * page built, and the main menu has no popover yet. */
  g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");
  g_assert_cmpuint (count_key_rows (window), ==, 0);
  g_assert_null (window->welcome_page);
  g_assert_null (gtk_menu_button_get_popover (window->main_menu_button));

  /* Sending waits for the key: nothing is sent, the text is kept. */
  tally_window_send (window, QUESTION);
  g_assert_false (tally_window_is_busy (window));
  g_assert_null (tally_window_get_session (window));
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==, LOOKING_UP_TOAST);
  kept = tally_composer_dup_text (_tally_window_get_composer (window));
  g_assert_cmpstr (kept, ==, QUESTION);
}

/* The harness starts the body once the keyring has answered. */
static void
keyring_answered (TallyApplication *app,
                  TallyWindow      *window,
                  gpointer          data)
{
  gboolean keyring_has_key = GPOINTER_TO_INT (data);
  AdwPasswordEntryRow *row;

  if (keyring_has_key)
    {
      /* The stored key: the empty page stays, the first-launch page is
       * never needed. */
      g_assert_cmpint (tally_application_get_api_key_source (app), ==, TALLY_API_KEY_SOURCE_KEYRING);
      g_assert_true (tally_application_has_api_key (app));
      g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");
      g_assert_true (gtk_widget_get_visible (GTK_WIDGET (_tally_window_get_composer (window))));
      g_assert_cmpuint (count_key_rows (window), ==, 0);
      g_assert_null (window->welcome_page);
      return;
    }

  /* No key anywhere: the first-launch page, built now, with the
   * application's icon; a key typed there is used. */
  g_assert_cmpint (tally_application_get_api_key_source (app), ==, TALLY_API_KEY_SOURCE_NONE);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (_tally_window_get_composer (window))));
  g_assert_cmpuint (count_key_rows (window), ==, 1);
  g_assert_cmpstr (adw_status_page_get_icon_name (window->welcome_page), ==, APPLICATION_ID);
  row = window->welcome_key_row;
  SPIN_UNTIL (gtk_widget_is_drawable (GTK_WIDGET (row)));

  gtk_editable_set_text (GTK_EDITABLE (row), "sk-typed-after-the-lookup");
  g_signal_emit_by_name (row, "apply");
  g_assert_true (tally_application_has_api_key (app));
  SPIN_UNTIL (g_strcmp0 (_tally_window_get_page (window), "empty") == 0 &&
              tally_application_get_api_key_source (app) == TALLY_API_KEY_SOURCE_KEYRING);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (row)), ==, "");

  /* Forgetting it shows the same page again, not a second one. */
  tally_application_forget_api_key (app);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");
  g_assert_cmpuint (count_key_rows (window), ==, 1);
  g_assert_true (window->welcome_key_row == row);
}

static void
run_keyring (const char *store_path,
             gboolean    keyring_has_key)
{
  g_autoptr(GHashTable) keyring = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const char *args[] = { "--store", store_path, "--base-url", "http://127.0.0.1:9", NULL };

  if (keyring_has_key)
    g_hash_table_insert (keyring, g_strdup (_tally_secret_get_test_key_slot ()), g_strdup ("sk-from-the-keyring"));
  _tally_secret_set_test_keyring (keyring);
  g_unsetenv ("ANTHROPIC_API_KEY");

  g_assert_cmpint (tally_test_app_run_before_frame (args, before_first_frame, keyring_answered,
                                                    GINT_TO_POINTER (keyring_has_key)), ==, 0);
  _tally_secret_set_test_keyring (NULL);
}

static void
test_keyring_with_key (TallyTestAppFixture *fixture,
                       gconstpointer        unused)
{
  run_keyring (fixture->store_path, TRUE);
}

static void
test_keyring_without_key (TallyTestAppFixture *fixture,
                          gconstpointer        unused)
{
  run_keyring (fixture->store_path, FALSE);
}

/* /tally/startup-later/main-menu-on-first-use */

static void
main_menu_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          data)
{
  GtkMenuButton *button = window->main_menu_button;
  GtkPopover *popover;
  GMenuModel *model;

  tally_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_null (gtk_menu_button_get_popover (button));
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (button)));

  gtk_menu_button_popup (button);
  popover = gtk_menu_button_get_popover (button);
  g_assert_true (GTK_IS_POPOVER_MENU (popover));
  model = gtk_popover_menu_get_menu_model (GTK_POPOVER_MENU (popover));
  g_assert_true (model == gtk_menu_button_get_menu_model (button));
  /* New, session, export and notes, application: four sections. */
  g_assert_cmpint (g_menu_model_get_n_items (model), ==, 4);
  SPIN_UNTIL (gtk_widget_get_mapped (GTK_WIDGET (popover)));
  gtk_menu_button_popdown (button);
  SPIN_UNTIL (!gtk_widget_get_mapped (GTK_WIDGET (popover)));

  /* Opened again: the same popover. */
  gtk_menu_button_popup (button);
  g_assert_true (gtk_menu_button_get_popover (button) == popover);
  gtk_menu_button_popdown (button);
}

static void
test_main_menu_on_first_use (TallyTestAppFixture *fixture,
                             gconstpointer        unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_setenv ("ANTHROPIC_API_KEY", "sk-test-startup-later", TRUE);
  g_assert_cmpint (tally_test_app_run (args, main_menu_body, NULL), ==, 0);
  g_unsetenv ("ANTHROPIC_API_KEY");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/startup-later/keyring-with-key", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_keyring_with_key, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/startup-later/keyring-without-key", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_keyring_without_key, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/startup-later/main-menu-on-first-use", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_main_menu_on_first_use, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
