/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The window down to 360 px (issue 14 §6) under Xvfb, in the real
 * application against the mock Messages API: nothing in the window's
 * content asks for more than 360 px (welcome page, empty session, the
 * sample session, a pending approval card); at 360 px the header's pickers
 * move into the title popover, the sidebar folds and overlays the session
 * instead of squeezing it and closes with Escape (or the back swipe), and
 * an approval card's buttons wrap inside the window. Screenshots at 360 px
 * and at full width, light and dark, go to $G_TEST_BUILDDIR/artifacts/. */

#define G_LOG_DOMAIN "test-adaptive-ui"

#include "config.h"

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-application-private.h"
#include "tally-approval-card.h"
#include "tally-test-app.h"
#include "tally-test-mock.h"
#include "tally-test-ui.h"
#include "tally-window-private.h"

#define NARROW_PX 360

/* One turn that wants to write a file in ask mode: an approval card. */
static const char write_scenario[] =
  "{\"responses\": ["
  " {\"message\": {\"content\": ["
  "   {\"type\": \"text\", \"text\": \"I'll write the summary to a file.\"},"
  "   {\"type\": \"tool_use\", \"id\": \"toolu_01Write\", \"name\": \"Write\","
  "    \"input\": {\"file_path\": \"summary.md\", \"content\": \"# March\\n\\nMinster Yard sold the most.\\n\"}}]}},"
  " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Nothing was written.\"}]}}"
  "]}";

static GtkWidget *
content_of (TallyWindow *window)
{
  return adw_application_window_get_content (ADW_APPLICATION_WINDOW (window));
}

/* The smallest width the window's content accepts. */
static int
minimum_width (TallyWindow *window)
{
  int minimum = 0;

  gtk_widget_measure (content_of (window), GTK_ORIENTATION_HORIZONTAL, -1, &minimum, NULL, NULL, NULL);
  return minimum;
}

static void
check_minimum_width (GtkWidget *view,
                     gpointer   data)
{
  g_assert_cmpint (minimum_width (TALLY_WINDOW (data)), <=, NARROW_PX);
}

/* Asks for @width and waits until the content has about that (the
 * decorations take a few pixels of a default size; the window's own
 * width-request keeps it at 360 or more). */
static void
resize (TallyWindow *window,
        int          width)
{
  gtk_window_set_default_size (GTK_WINDOW (window), width, 760);
  SPIN_UNTIL (ABS (gtk_widget_get_width (content_of (window)) - width) <= 16);
  tally_test_wait_frames (GTK_WIDGET (window), 3);
}

/* The Escape shortcut of @widget's own controllers, activated as a key
 * press would; FALSE when it has none. */
static gboolean
activate_escape (GtkWidget *widget)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);
  g_autoptr(GtkShortcutTrigger) escape = gtk_keyval_trigger_new (GDK_KEY_Escape, 0);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (controller)); j++)
        {
          g_autoptr(GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), j);

          if (gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), escape))
            return gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0, widget, NULL);
        }
    }
  return FALSE;
}

/* /tally/adaptive/welcome-and-sample: no key, so no network either. */

static void
welcome_and_sample_body (TallyApplication *app,
                         TallyWindow      *window,
                         gpointer          user_data)
{
  AdwFlap *flap = _tally_window_get_flap (window);

  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");
  g_assert_cmpint (minimum_width (window), <=, NARROW_PX);
  resize (window, NARROW_PX);
  g_assert_cmpint (gtk_widget_get_width (content_of (window)), ==, NARROW_PX);
  g_assert_true (adw_flap_get_folded (flap));
  /* The sample session is offered without scrolling, even at 360 px. */
  {
    GtkWidget *sample = tally_test_find_action_button (GTK_WIDGET (window), "win.open-sample-session");
    graphene_rect_t bounds;

    g_assert_nonnull (sample);
    g_assert_true (gtk_widget_compute_bounds (sample, content_of (window), &bounds));
    g_assert_cmpfloat (bounds.origin.x, >=, 0);
    g_assert_cmpfloat (bounds.origin.x + bounds.size.width, <=, NARROW_PX);
    g_assert_cmpfloat (bounds.origin.y + bounds.size.height, <=, gtk_widget_get_height (content_of (window)));
  }
  tally_test_app_save_light_dark (GTK_WIDGET (window), "adaptive-welcome-360");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-sample-session", NULL));
  /* Read in the background (docs/architecture.md §11.1). */
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  /* Every row of the sample (question and plan cards, thinking, tool
   * chips, the chart, tables, receipts) fits 360 px. */
  tally_test_app_scroll_through (GTK_WIDGET (_tally_window_get_transcript_view (window)),
                                 check_minimum_width, window);
  g_assert_cmpint (gtk_widget_get_width (content_of (window)), ==, NARROW_PX);
  tally_test_app_save_light_dark (GTK_WIDGET (window), "adaptive-sample-360");

  resize (window, 1200);
  g_assert_false (adw_flap_get_folded (flap));
  g_assert_cmpint (minimum_width (window), <=, NARROW_PX);
  tally_test_app_save_light_dark (GTK_WIDGET (window), "adaptive-sample-wide");
}

/* /tally/adaptive/approval-at-360 */

static void
approval_body (TallyApplication *app,
               TallyWindow      *window,
               gpointer          user_data)
{
  AdwFlap *flap = _tally_window_get_flap (window);
  GtkWidget *view = GTK_WIDGET (_tally_window_get_transcript_view (window));
  GtkWidget *header_picker = GTK_WIDGET (_tally_window_get_model_dropdown (window));
  GtkWidget *card = NULL;
  g_autoptr(GPtrArray) buttons = NULL;
  int content_width, window_width;
  double first_y = -1;
  gboolean wrapped = FALSE;

  /* Wide: the pickers are in the header, the sidebar beside the session. */
  resize (window, 1200);
  g_assert_false (adw_flap_get_folded (flap));
  g_assert_false (_tally_window_get_compact (window));
  g_assert_true (gtk_widget_get_mapped (header_picker));
  g_assert_cmpint (minimum_width (window), <=, NARROW_PX);

  /* At 360 px: the pickers leave the header for the title popover. */
  resize (window, NARROW_PX);
  SPIN_UNTIL (_tally_window_get_compact (window));
  g_assert_false (gtk_widget_get_mapped (header_picker));
  g_assert_true (adw_flap_get_folded (flap));
  g_assert_false (adw_flap_get_reveal_flap (flap));

  /* The sidebar overlays the session (which keeps its width), can be
   * swiped away, and Escape closes it. */
  content_width = gtk_widget_get_width (GTK_WIDGET (_tally_window_get_composer (window)));
  adw_flap_set_reveal_flap (flap, TRUE);
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  g_assert_true (adw_flap_get_modal (flap));
  g_assert_true (adw_flap_get_swipe_to_close (flap));
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (_tally_window_get_composer (window))), ==, content_width);
  g_assert_true (gtk_widget_get_mapped (adw_flap_get_flap (flap)));
  g_assert_true (activate_escape (GTK_WIDGET (flap)));
  g_assert_false (adw_flap_get_reveal_flap (flap));

  /* A turn that asks before writing: the card's buttons wrap onto more
   * than one line and all stay inside the window. */
  tally_window_send (window, "Write the March summary to a file");
  SPIN_UNTIL ((card = tally_test_find_first (view, TALLY_TYPE_APPROVAL_CARD)) != NULL &&
              gtk_widget_get_mapped (card));
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  g_assert_cmpint (minimum_width (window), <=, NARROW_PX);

  window_width = gtk_widget_get_width (content_of (window));
  g_assert_cmpint (window_width, ==, NARROW_PX);
  buttons = tally_test_find_all (card, GTK_TYPE_BUTTON);
  g_assert_cmpuint (buttons->len, >=, 4);
  for (guint i = 0; i < buttons->len; i++)
    {
      GtkWidget *button = g_ptr_array_index (buttons, i);
      graphene_rect_t bounds;

      if (!gtk_widget_get_mapped (button))
        continue;
      g_assert_true (gtk_widget_compute_bounds (button, content_of (window), &bounds));
      g_test_message ("%s at x %.0f–%.0f, y %.0f",
                      gtk_button_get_label (GTK_BUTTON (button)) != NULL ? gtk_button_get_label (GTK_BUTTON (button)) : "(icon)",
                      bounds.origin.x, bounds.origin.x + bounds.size.width, bounds.origin.y);
      g_assert_cmpfloat (bounds.origin.x, >=, 0);
      g_assert_cmpfloat (bounds.origin.x + bounds.size.width, <=, window_width);
      if (first_y < 0)
        first_y = bounds.origin.y;
      else if (bounds.origin.y > first_y + 1)
        wrapped = TRUE;
    }
  g_assert_true (wrapped);
  tally_test_app_save_light_dark (GTK_WIDGET (window), "adaptive-approval-360");

  resize (window, 1200);
  SPIN_UNTIL (!_tally_window_get_compact (window));
  g_assert_true (gtk_widget_get_mapped (header_picker));
  tally_test_app_save_light_dark (GTK_WIDGET (window), "adaptive-approval-wide");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.stop", NULL));
  SPIN_UNTIL (!tally_window_is_busy (window));
}


static void
test_welcome_and_sample (TallyTestAppFixture *fixture,
                         gconstpointer        unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_unsetenv ("ANTHROPIC_API_KEY");
  g_assert_cmpint (tally_test_app_run (args, welcome_and_sample_body, NULL), ==, 0);
}

static void
test_approval (TallyTestAppFixture *fixture,
               gconstpointer        unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (write_scenario, &error);
  const char *args[] = { "--store", fixture->store_path, "--base-url", NULL, NULL };

  g_assert_no_error (error);
  args[3] = tally_test_mock_get_base_url (mock);
  g_setenv ("ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  g_assert_cmpint (tally_test_app_run (args, approval_body, NULL), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/adaptive/welcome-and-sample", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_welcome_and_sample, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/adaptive/approval-at-360", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_approval, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
