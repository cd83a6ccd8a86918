/* SPDX-License-Identifier: GPL-3.0-or-later */

/* First launch (issue 14 §10) under Xvfb, in the real application: with
 * no key the welcome page links the page where keys are made and offers
 * the bundled sample session; opening it copies the recorded Beanline
 * conversation into the store and replays it with no server to talk to
 * (a question card, a plan card, thinking, a chart and receipts); the
 * header pickers are insensitive until a key is saved, and then the
 * composer has the focus. Screenshots of the welcome page and the sample,
 * light and dark, go to $G_TEST_BUILDDIR/artifacts/. */

#define G_LOG_DOMAIN "test-first-launch"

#include "config.h"

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-application-private.h"
#include "tally-chart-row.h"
#include "tally-composer.h"
#include "tally-plan-card.h"
#include "tally-question-card.h"
#include "tally-receipt-row.h"
#include "tally-sample-session.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-thinking-drawer.h"
#include "tally-window-private.h"


static gboolean
pickers_sensitive (TallyWindow *window)
{
  gboolean model = gtk_widget_get_sensitive (GTK_WIDGET (_tally_window_get_model_dropdown (window)));
  gboolean mode = gtk_widget_get_sensitive (GTK_WIDGET (_tally_window_get_mode_dropdown (window)));
  gboolean thinking = gtk_widget_get_sensitive (GTK_WIDGET (_tally_window_get_thinking_button (window)));

  /* All three follow the key together. */
  g_assert_cmpint (model, ==, mode);
  g_assert_cmpint (model, ==, thinking);
  return model;
}

static guint
count_kind (GListModel     *blocks,
            TallyBlockKind  kind)
{
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (blocks); i++)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i);

      n += tally_block_get_kind (block) == kind;
    }
  return n;
}

/* The kinds of rows drawn while the transcript is scrolled through. */
typedef struct {
  gboolean question, plan, thinking, chart, receipt;
} SeenRows;

static void
look_at_rows (GtkWidget *view,
              gpointer   data)
{
  SeenRows *seen = data;

  seen->question |= tally_test_find_first (view, TALLY_TYPE_QUESTION_CARD) != NULL;
  seen->plan |= tally_test_find_first (view, TALLY_TYPE_PLAN_CARD) != NULL;
  seen->thinking |= tally_test_find_first (view, TALLY_TYPE_THINKING_DRAWER) != NULL;
  seen->chart |= tally_test_find_first (view, TALLY_TYPE_CHART_ROW) != NULL;
  seen->receipt |= tally_test_find_first (view, TALLY_TYPE_RECEIPT_ROW) != NULL;
}

/* /tally/first-launch/sample-and-key */

static void
sample_and_key_body (TallyApplication *app,
                     TallyWindow      *window,
                     gpointer          user_data)
{
  const char *store_path = user_data;
  GtkWidget *view = GTK_WIDGET (_tally_window_get_transcript_view (window));
  GtkWidget *sample_button;
  GtkLinkButton *link;
  TallySession *session;
  GListModel *blocks;
  SeenRows seen = { 0 };
  GtkWidget *focus;

  g_assert_false (tally_application_has_api_key (app));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");

  /* The page where keys are made, and the sample session. */
  link = GTK_LINK_BUTTON (tally_test_find_first (GTK_WIDGET (window), GTK_TYPE_LINK_BUTTON));
  g_assert_nonnull (link);
  g_assert_cmpstr (gtk_link_button_get_uri (link), ==, "https://console.anthropic.com/settings/keys");
  g_assert_true (gtk_widget_is_drawable (GTK_WIDGET (link)));
  sample_button = tally_test_find_action_button (GTK_WIDGET (window), "win.open-sample-session");
  g_assert_nonnull (sample_button);
  g_assert_true (gtk_widget_is_drawable (sample_button));
  g_assert_cmpstr (gtk_button_get_label (GTK_BUTTON (sample_button)), ==, "Open the _Sample Session");

  /* No key: the pickers are there but cannot be used. */
  g_assert_false (pickers_sensitive (window));

  tally_test_app_save_light_dark (GTK_WIDGET (window), "first-launch-welcome");

  /* The sample opens offline: nothing listens at the base URL. */
  g_signal_emit_by_name (sample_button, "clicked");
  /* Read in the background (docs/architecture.md §11.1). */
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");
  session = tally_window_get_session (window);
  g_assert_nonnull (session);
  g_assert_cmpstr (tally_session_get_id (session), ==, TALLY_SAMPLE_SESSION_ID);
  g_assert_false (tally_session_is_busy (session));

  /* What the recorded log holds: two turns with their receipts, one
   * question card, one plan card, thinking, one chart. */
  blocks = G_LIST_MODEL (tally_session_get_transcript (session));
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_USER), ==, 2);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_RECEIPT), ==, 2);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_QUESTION), ==, 1);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_PLAN), ==, 1);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_CHART), ==, 1);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_THINKING), >=, 3);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_ERROR), ==, 0);
  g_assert_cmpuint (count_kind (blocks, TALLY_BLOCK_NOTICE), ==, 0);

  /* And the window draws each of them. */
  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 900);
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  tally_test_app_scroll_through (view, look_at_rows, &seen);
  g_assert_true (seen.question);
  g_assert_true (seen.plan);
  g_assert_true (seen.thinking);
  g_assert_true (seen.chart);
  g_assert_true (seen.receipt);

  tally_test_app_save_light_dark (GTK_WIDGET (window), "first-launch-sample");

  /* The copy names this machine's sample database and its own workspace. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TallyStore) store = tally_store_open (store_path, &error);
    g_autoptr(TallySessionInfo) info = NULL;
    g_autoptr(GPtrArray) sessions = NULL;
    g_autofree char *workspace = tally_application_dup_workspace_for (TALLY_SAMPLE_SESSION_ID);

    g_assert_no_error (error);
    info = tally_store_find_session (store, TALLY_SAMPLE_SESSION_ID, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (info->database, ==, tally_application_get_default_database ());
    g_assert_cmpstr (info->workspace, ==, workspace);
    g_assert_cmpstr (info->title, ==, "Sample: Two Beanline Stores by Month");
    g_assert_cmpint (info->turns, ==, 2);
    {
      g_autofree char *svg = g_build_filename (workspace, "charts", "minster-yard-leeds-station-monthly.svg", NULL);
      g_autofree char *png = g_build_filename (workspace, "charts", "minster-yard-leeds-station-monthly.png", NULL);

      g_assert_true (g_file_test (svg, G_FILE_TEST_IS_REGULAR));
      g_assert_true (g_file_test (png, G_FILE_TEST_IS_REGULAR));
    }
    sessions = tally_store_list_sessions (store, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (sessions->len, ==, 1);
  }

  /* Opening it again opens the same copy: no second session. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.new-session", NULL);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-sample-session", NULL));
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_cmpstr (tally_session_get_id (tally_window_get_session (window)), ==, TALLY_SAMPLE_SESSION_ID);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TallyStore) store = tally_store_open (store_path, &error);
    g_autoptr(GPtrArray) sessions = tally_store_list_sessions (store, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (sessions->len, ==, 1);
  }

  /* A key typed on the welcome page: the pickers wake up and the composer
   * has the focus. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.new-session", NULL);
  gtk_widget_grab_focus (GTK_WIDGET (_tally_window_get_search_entry (window)));
  {
    g_autoptr(GPtrArray) entries = tally_test_find_all (GTK_WIDGET (window), ADW_TYPE_PASSWORD_ENTRY_ROW);

    g_assert_cmpuint (entries->len, ==, 1);
    gtk_editable_set_text (GTK_EDITABLE (g_ptr_array_index (entries, 0)), "sk-first-launch-key");
    g_signal_emit_by_name (g_ptr_array_index (entries, 0), "apply");
  }
  SPIN_UNTIL (tally_application_has_api_key (app) &&
              g_strcmp0 (_tally_window_get_page (window), "empty") == 0 &&
              (focus = gtk_root_get_focus (GTK_ROOT (window))) != NULL &&
              gtk_widget_is_ancestor (focus, GTK_WIDGET (_tally_window_get_composer (window))));
  g_assert_true (pickers_sensitive (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (_tally_window_get_composer (window))));
}

static void
test_sample_and_key (TallyTestAppFixture *fixture,
                     gconstpointer        unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_unsetenv ("ANTHROPIC_API_KEY");
  g_assert_cmpint (tally_test_app_run (args, sample_and_key_body, fixture->store_path), ==, 0);
}

/* /tally/first-launch/key-from-environment: a key from the environment
 * makes the pickers sensitive from the start, and there is no welcome
 * page. */

static void
key_from_environment_body (TallyApplication *app,
                           TallyWindow      *window,
                           gpointer          user_data)
{
  g_assert_true (tally_application_has_api_key (app));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");
  g_assert_true (pickers_sensitive (window));
}

static void
test_key_from_environment (TallyTestAppFixture *fixture,
                           gconstpointer        unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_setenv ("ANTHROPIC_API_KEY", "sk-from-the-environment", TRUE);
  g_assert_cmpint (tally_test_app_run (args, key_from_environment_body, NULL), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/first-launch/sample-and-key", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_sample_and_key, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/first-launch/key-from-environment", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_key_from_environment, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
