/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * Start-up and WebKit (issue 15, "Start like a hello world" and "Memory"):
 * the structural facts, never times (those are in tests/bench/bench-startup.c).
 *
 * - An empty window, and a window showing a session without plans, have
 *   not loaded WebKit (the library is not even mapped into the process)
 *   and created no web view.
 * - The banners (offline, store, role) are hidden while folded away, so
 *   the first frame does not lay out their wrapping text, and unfold and
 *   fold again when asked; their text sits in a bin that answers a width
 *   for a height with its width for any height.
 * - The empty page's bin answers a width for a height with its width for
 *   any height (so the page's viewport does not search widths over its
 *   wrapping labels) and centres the page itself, and no box on the page
 *   or in the sidebar's placeholder is centred by valign; each suggestion
 *   is a row holding its wrapping label with no box around it, named by
 *   that label, and activating one puts its question into the composer.
 * - The store is open once the window has painted, and the actions that
 *   need it are enabled.
 * - The title's popover is built when it first opens, its pickers tied to
 *   the header's.
 * - Plan cards shown together load WebKit once and share one web context
 *   and one network session (so one web process serves them all; test-cards
 *   counts the processes).
 *
 * The WebKit tests come last: WebKit stays loaded once a card loaded it.
 */

#include "config.h"

#include <string.h>

#include <adwaita.h>

#include "tally-application-private.h"
#include "tally-cards-common.h"
#include "tally-event.h"
#include "tally-plan-card-private.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-transcript.h"
#include "tally-window-private.h"

#define SESSION_ID "3f1c2a4e-0000-4000-8000-00000000b001"

static gboolean
webkit_mapped (void)
{
  return tally_test_library_mapped ("libwebkitgtk-6.0");
}

/* The shortcuts windows of this process (GtkShortcutsWindow toplevels). */
static guint
count_shortcuts_windows (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);

      n += GTK_IS_SHORTCUTS_WINDOW (window);
    }
  return n;
}

static void
assert_no_webkit (TallyWindow *window)
{
  g_autoptr(GPtrArray) cards = tally_test_find_all (GTK_WIDGET (window), TALLY_TYPE_PLAN_CARD);

  g_assert_cmpuint (cards->len, ==, 0);
  g_assert_false (_tally_plan_card_webkit_started ());
#if TALLY_HAVE_WEBKIT
  g_assert_false (tally_webkit_loader_is_loaded ());
#endif
  g_assert_false (webkit_mapped ());
}

/* Whether a window action is enabled, read the way a button reads it (as
 * test-app.c does): a hidden button with that action name below the
 * window is insensitive while the action is disabled. */
static gboolean
window_action_enabled (TallyWindow *window,
                       const char  *name)
{
  GtkWidget *button = gtk_button_new ();
  gboolean enabled;

  gtk_widget_set_visible (button, FALSE);
  gtk_widget_set_parent (button, GTK_WIDGET (window));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), name);
  enabled = gtk_widget_get_sensitive (button);
  gtk_widget_unparent (button);
  return enabled;
}

static void
assert_none_valign_centred (GtkWidget *widget)
{
  if (GTK_IS_BOX (widget))
    g_assert_cmpint (gtk_widget_get_valign (widget), !=, GTK_ALIGN_CENTER);
  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    assert_none_valign_centred (child);
}

/* The empty window */

static void
empty_body (TallyApplication *app,
            TallyWindow      *window,
            gpointer          data)
{
  /* The session list has loaded and the window has painted. */
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);

  g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");
  assert_no_webkit (window);
  /* No PostgreSQL source was made: libpq is not loaded (the core does not
   * link it, tools/tally-pq-loader.c). */
  g_assert_false (tally_test_library_mapped ("libpq.so"));
  /* The shortcuts window waits until it is asked for. */
  g_assert_cmpuint (count_shortcuts_windows (), ==, 0);
  g_assert_null (gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (window)));
  /* The folded banners are hidden, so nothing measures their labels (the
   * offline one shows when the model list found no server, as it does
   * here, without a mock). */
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window->store_revealer)));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window->role_revealer)));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->offline_revealer)) ==
                 gtk_revealer_get_reveal_child (window->offline_revealer));

  /* The empty page's bin: a width for a height is the width for any
   * height; a height for a width is its child's, which it centres. */
  {
    GtkWidget *bin = GTK_WIDGET (window->empty_bin);
    GtkWidget *page = gtk_widget_get_first_child (bin);

    g_assert_true (gtk_widget_get_mapped (bin));
    tally_test_assert_centring_bin (bin);
    /* No box on the page is centred by valign, which would have
     * gtk_widget_allocate() ask it for a width at its height. */
    assert_none_valign_centred (page);
    /* Three rows, each as tall as its wrapped title needs. */
    g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (window->suggestion_list)), >=, 3 * 40);
  }

  /* The sidebar's placeholder is centred the same way. */
  {
    GtkWidget *bin = gtk_stack_get_child_by_name (window->sidebar_stack, "empty");

    g_assert_cmpstr (gtk_stack_get_visible_child_name (window->sidebar_stack), ==, "empty");
    tally_test_assert_centring_bin (bin);
    assert_none_valign_centred (gtk_widget_get_first_child (bin));
  }

  /* Each suggestion row's child is its wrapping label itself, with no
   * horizontal box around it that would ask the label for a width per
   * height at each allocation; the chevron comes from the stylesheet.
   * Activating a row puts its question into the composer. */
  {
    static const char *const questions[] = {
      "Which store sold the most in March?",
      "How did iced drinks sell from January to June?",
      "Is anything odd in the sales data?",
    };
    guint n = 0;

    for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (window->suggestion_list));
         row != NULL;
         row = gtk_widget_get_next_sibling (row), n++)
      {
        GtkWidget *label = gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (row));
        g_autofree char *text = NULL;

        g_assert_cmpuint (n, <, G_N_ELEMENTS (questions));
        g_assert_true (GTK_IS_LABEL (label));
        g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (label)), ==, questions[n]);
        g_assert_true (gtk_label_get_wrap (GTK_LABEL (label)));
        g_assert_true (gtk_widget_has_css_class (label, "tally-suggestion"));
        g_assert_true (gtk_list_box_row_get_activatable (GTK_LIST_BOX_ROW (row)));
        /* Named by its label, as an AdwActionRow is by its title */
        gtk_test_accessible_assert_relation (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_RELATION_LABELLED_BY, label, NULL);
        g_assert_cmpint (gtk_widget_get_height (row), >=, 50);

        g_signal_emit_by_name (window->suggestion_list, "row-activated", row);
        text = tally_composer_dup_text (window->composer);
        g_assert_cmpstr (text, ==, questions[n]);
      }
    g_assert_cmpuint (n, ==, G_N_ELEMENTS (questions));
    tally_composer_set_text (window->composer, "");
  }

  /* The title's popover is built when it first opens, with its pickers
   * tied to the header's and its rows saying the database and workspace. */
  g_assert_null (window->context_popover);
  g_assert_null (gtk_menu_button_get_popover (window->title_button));
  gtk_menu_button_popup (window->title_button);
  g_assert_nonnull (window->context_popover);
  g_assert_true (gtk_menu_button_get_popover (window->title_button) == window->context_popover);
  SPIN_UNTIL (gtk_widget_get_mapped (GTK_WIDGET (window->context_popover)));
  g_assert_cmpuint (adw_combo_row_get_selected (window->model_row), ==,
                    gtk_drop_down_get_selected (window->model_dropdown));
  g_assert_cmpuint (adw_combo_row_get_selected (window->mode_row), ==,
                    gtk_drop_down_get_selected (window->mode_dropdown));
  gtk_drop_down_set_selected (window->mode_dropdown, 1);
  g_assert_cmpuint (adw_combo_row_get_selected (window->mode_row), ==, 1);
  adw_combo_row_set_selected (window->mode_row, 0);
  g_assert_cmpuint (gtk_drop_down_get_selected (window->mode_dropdown), ==, 0);
  g_assert_true (gtk_switch_get_active (window->thinking_switch) ==
                 gtk_toggle_button_get_active (window->thinking_button));
  g_assert_cmpstr (adw_action_row_get_subtitle (window->database_row), !=, NULL);
  g_assert_cmpstr (adw_action_row_get_subtitle (window->database_row), !=, "");
  g_assert_cmpstr (adw_action_row_get_subtitle (window->workspace_row), !=, "");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->compact_list)) == _tally_window_get_compact (window));
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (window->compact_list)) ==
                 gtk_widget_get_sensitive (GTK_WIDGET (window->model_dropdown)));
  gtk_popover_popdown (window->context_popover);
  SPIN_UNTIL (!gtk_widget_get_mapped (GTK_WIDGET (window->context_popover)));
  /* Opened again, it is the same popover. */
  {
    GtkPopover *popover = window->context_popover;

    gtk_menu_button_popup (window->title_button);
    g_assert_true (window->context_popover == popover);
    gtk_popover_popdown (popover);
  }

  /* The store opened after the first frame, and the actions that need it
   * followed (_tally_window_update_actions() peeks until then). */
  g_assert_nonnull (_tally_application_peek_store (app));
  g_assert_true (window_action_enabled (window, "win.database-notes"));
  g_assert_true (window_action_enabled (window, "win.sensitive-columns"));
}

static void
test_empty_window (TallyTestAppFixture *fixture,
                   gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };

  g_assert_cmpint (tally_test_app_run (args, empty_body, NULL), ==, 0);
}

/* The banners: hidden while folded, unfolded and folded on demand */

static void
banners_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          data)
{
  /* The offline banner follows the network and the model list, so
   * test-errors-ui unfolds and folds it through them. */
  GtkRevealer *banners[] = { window->store_revealer, window->role_revealer };

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);

  /* The offline banner's text is in a bin like the others' (below) */
  g_assert_true (gtk_widget_get_hexpand (gtk_widget_get_parent (GTK_WIDGET (window->offline_label))));
  tally_test_assert_centring_bin (gtk_widget_get_parent (GTK_WIDGET (window->offline_label)));

  for (guint i = 0; i < G_N_ELEMENTS (banners); i++)
    {
      GtkWidget *child = gtk_revealer_get_child (banners[i]);

      g_assert_false (gtk_widget_get_visible (GTK_WIDGET (banners[i])));
      g_assert_false (gtk_revealer_get_reveal_child (banners[i]));

      _tally_window_reveal_banner (banners[i], TRUE);
      g_assert_true (gtk_widget_get_visible (GTK_WIDGET (banners[i])));
      g_assert_true (gtk_revealer_get_reveal_child (banners[i]));
      SPIN_UNTIL (gtk_revealer_get_child_revealed (banners[i]));
      SPIN_UNTIL (gtk_widget_get_mapped (child) && gtk_widget_get_height (child) > 0);
      g_assert_cmpint (gtk_widget_get_width (child), >, 0);
      /* The text sits in a bin that answers a width for a height with the
       * width for any height, so the banner's box does not have the
       * wrapping label search widths, and it is as tall as it needs */
      {
        GtkWidget *bin = i == 0 ? gtk_widget_get_parent (GTK_WIDGET (window->store_label))
                                : GTK_WIDGET (window->role_text_bin);

        g_assert_true (gtk_widget_get_hexpand (bin));
        tally_test_assert_centring_bin (bin);
      }

      _tally_window_reveal_banner (banners[i], FALSE);
      g_assert_false (gtk_revealer_get_reveal_child (banners[i]));
      SPIN_UNTIL (!gtk_widget_get_visible (GTK_WIDGET (banners[i])));
      g_assert_false (gtk_revealer_get_child_revealed (banners[i]));
    }
}

static void
test_banners (TallyTestAppFixture *fixture,
              gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };

  g_assert_cmpint (tally_test_app_run (args, banners_body, NULL), ==, 0);
}

/* The shortcuts window, built on first use */

static void
shortcuts_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          data)
{
  g_auto(GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app), "win.show-help-overlay");
  g_autoptr(GPtrArray) sections = NULL;
  g_autoptr(GPtrArray) shortcuts = NULL;
  GListModel *toplevels = gtk_window_get_toplevels ();
  GtkWindow *shortcuts_window = NULL;
  gboolean has_new_session = FALSE;
  guint with_keys = 0;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_cmpuint (count_shortcuts_windows (), ==, 0);

  /* Ctrl+? still opens it. */
  g_assert_nonnull (accels);
  g_assert_cmpstr (accels[0], ==, "<Control>question");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));
  g_assert_cmpuint (count_shortcuts_windows (), ==, 1);
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) toplevel = g_list_model_get_item (toplevels, i);

      if (GTK_IS_SHORTCUTS_WINDOW (toplevel))
        shortcuts_window = GTK_WINDOW (toplevel);
    }
  g_assert_nonnull (shortcuts_window);
  g_assert_true (gtk_window_get_transient_for (shortcuts_window) == GTK_WINDOW (window));
  SPIN_UNTIL (gtk_widget_get_mapped (GTK_WIDGET (shortcuts_window)));

  /* It has its sections and the window's shortcuts. */
  sections = tally_test_find_all (GTK_WIDGET (shortcuts_window), GTK_TYPE_SHORTCUTS_SECTION);
  g_assert_cmpuint (sections->len, >=, 1);
  shortcuts = tally_test_find_all (GTK_WIDGET (shortcuts_window), GTK_TYPE_SHORTCUTS_SHORTCUT);
  g_assert_cmpuint (shortcuts->len, >=, 8);
  /* A shortcut named by its action shows the keys the application set for
   * that action (the shortcuts window asks the application of the window
   * it helps: without that, the key column is empty). */
  for (guint i = 0; i < shortcuts->len; i++)
    {
      g_autofree char *action_name = NULL;
      g_autofree char *accelerator = NULL;

      g_object_get (g_ptr_array_index (shortcuts, i),
                    "action-name", &action_name, "accelerator", &accelerator, NULL);
      has_new_session |= g_strcmp0 (action_name, "win.new-session") == 0;
      if (action_name != NULL)
        {
          g_auto(GStrv) keys = gtk_application_get_accels_for_action (GTK_APPLICATION (app), action_name);
          g_autofree char *expected = g_strjoinv (" ", keys);

          g_test_message ("Shortcut %s: %s", action_name, accelerator);
          g_assert_cmpstr (expected, !=, "");
          g_assert_cmpstr (accelerator, ==, expected);
          with_keys++;
        }
    }
  g_assert_true (has_new_session);
  g_assert_cmpuint (with_keys, >=, 8);

  /* Closing hides it; asking again shows the same one. */
  gtk_window_close (shortcuts_window);
  SPIN_UNTIL (!gtk_widget_get_visible (GTK_WIDGET (shortcuts_window)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));
  g_assert_cmpuint (count_shortcuts_windows (), ==, 1);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (shortcuts_window)));
  gtk_window_close (shortcuts_window);
}

static void
test_shortcuts_on_first_use (TallyTestAppFixture *fixture,
                             gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };

  g_assert_cmpint (tally_test_app_run (args, shortcuts_body, NULL), ==, 0);
  /* Closing the window took its shortcuts window along. */
  g_assert_cmpuint (count_shortcuts_windows (), ==, 0);
}

/* A session without plans */

static void
add_event (TallyStore *store,
           const char *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) event = tally_event_from_json (json, &error);

  g_assert_no_error (error);
  g_assert_true (tally_store_append_event (store, event, &error));
  g_assert_no_error (error);
}

static void
text_session_body (TallyApplication *app,
                   TallyWindow      *window,
                   gpointer          data)
{
  TallySession *session;

  SPIN_UNTIL (tally_window_get_session (window) != NULL);
  session = tally_window_get_session (window);
  g_assert_cmpstr (tally_session_get_id (session), ==, SESSION_ID);
  SPIN_UNTIL (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_TEXT) == 1);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");
  tally_test_wait_frames (GTK_WIDGET (window), 2);

  assert_no_webkit (window);
}

static void
test_session_without_plans (TallyTestAppFixture *fixture,
                            gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, "--session", SESSION_ID, NULL };

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TallyStore) store = tally_store_open (fixture->store_path, &error);

    g_assert_no_error (error);
    add_event (store, "{\"type\":\"session_created\",\"seq\":1,\"ts\":1764000000000000,"
                      "\"session_id\":\"" SESSION_ID "\",\"turn_id\":null,\"title\":\"March\","
                      "\"model\":\"claude-sonnet-5\",\"workspace\":null,\"database\":null}");
    add_event (store, "{\"type\":\"turn_started\",\"seq\":2,\"ts\":1764000000000001,"
                      "\"session_id\":\"" SESSION_ID "\",\"turn_id\":\"t1\",\"mode\":\"ask\","
                      "\"thinking\":false,\"budget_tokens\":0,\"model\":\"claude-sonnet-5\","
                      "\"text\":\"Which store sold the most in March?\"}");
    add_event (store, "{\"type\":\"text_delta\",\"seq\":3,\"ts\":1764000000000002,"
                      "\"session_id\":\"" SESSION_ID "\",\"turn_id\":\"t1\",\"call\":1,\"block\":0,"
                      "\"text\":\"Minster Yard sold the most.\"}");
    add_event (store, "{\"type\":\"turn_finished\",\"seq\":4,\"ts\":1764000000000003,"
                      "\"session_id\":\"" SESSION_ID "\",\"turn_id\":\"t1\",\"status\":\"done\","
                      "\"cost_usd\":0.01,\"duration_ms\":900,\"api_calls\":1}");
    g_assert_true (tally_store_flush (store, &error));
    g_assert_no_error (error);
  }

  g_assert_cmpint (tally_test_app_run (args, text_session_body, NULL), ==, 0);
}

/* Plan cards share WebKit */

#define N_CARDS 4

static void
test_plan_cards_share (void)
{
#if TALLY_HAVE_WEBKIT
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(GPtrArray) cards = g_ptr_array_new ();
  g_autoptr(GObject) context = NULL;
  g_autoptr(GObject) network = NULL;
  GtkWidget *window = gtk_window_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);

  /* The application harness points the session bus at nothing, which
   * WebKit's sandbox cannot start with; this test runs no application, so
   * it uses no bus at all, as test-cards does. */
  g_unsetenv ("DBUS_SESSION_BUS_ADDRESS");
  if (!_tally_plan_card_webkit_allowed ())
    {
      g_test_skip ("WebKit cannot run here (no session bus, or TALLY_NO_WEBKIT)");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }

  gtk_window_set_default_size (GTK_WINDOW (window), 600, 900);
  gtk_window_set_child (GTK_WINDOW (window), box);

  /* A card without a block creates nothing. */
  g_ptr_array_add (cards, tally_plan_card_new ());
  gtk_box_append (GTK_BOX (box), g_ptr_array_index (cards, 0));
  g_assert_false (_tally_plan_card_webkit_started ());
  g_assert_null (_tally_plan_card_get_web_view (g_ptr_array_index (cards, 0)));

  for (guint i = 0; i < N_CARDS; i++)
    {
      g_autofree char *json = g_strdup_printf ("{\"type\":\"plan_proposed\",\"turn_id\":\"t1\","
                                               "\"plan_id\":\"plan_%u\",\"version\":1,"
                                               "\"markdown\":\"# Plan %u\\n\\n1. Query\\n2. Compare\\n\"}",
                                               i + 1, i + 1);
      g_autoptr(TallyBlock) block = NULL;
      GtkWidget *card = i == 0 ? g_ptr_array_index (cards, 0) : tally_plan_card_new ();

      tally_test_apply_event (transcript, json);
      block = g_list_model_get_item (G_LIST_MODEL (transcript), g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 1);
      tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), block);
      if (i > 0)
        {
          gtk_box_append (GTK_BOX (box), card);
          g_ptr_array_add (cards, card);
        }
    }
  gtk_window_present (GTK_WINDOW (window));

  /* Loaded with the first card that got a plan, and only then. */
  g_assert_true (_tally_plan_card_webkit_started ());
  g_assert_true (tally_webkit_loader_is_loaded ());
  g_assert_true (webkit_mapped ());

  for (guint i = 0; i < cards->len; i++)
    {
      TallyPlanCard *card = g_ptr_array_index (cards, i);
      GtkWidget *view = _tally_plan_card_get_web_view (card);
      g_autoptr(GObject) card_context = NULL;
      g_autoptr(GObject) card_network = NULL;

      SPIN_UNTIL (_tally_plan_card_get_content_height (card) > 0 ||
                  _tally_plan_card_get_native_view (card) != NULL);
      if (_tally_plan_card_get_native_view (card) != NULL)
        {
          /* The web process died under us: nothing to compare. */
          g_test_skip ("WebKit's web process did not stay up");
          gtk_window_destroy (GTK_WINDOW (window));
          return;
        }

      g_assert_nonnull (view);
      g_object_get (view, "web-context", &card_context, "network-session", &card_network, NULL);
      g_assert_nonnull (card_context);
      g_assert_nonnull (card_network);
      if (context == NULL)
        {
          context = g_steal_pointer (&card_context);
          network = g_steal_pointer (&card_network);
        }
      else
        {
          g_assert_true (card_context == context);
          g_assert_true (card_network == network);
        }
    }

  gtk_window_destroy (GTK_WINDOW (window));
#else
  g_test_skip ("Built without WebKitGTK");
#endif
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = NULL;
  int status;

  /* The test accessibility backend, so the rows' relations can be read */
  g_setenv ("GTK_A11Y", "test", TRUE);
  home = tally_test_app_init (&argc, &argv);

  g_test_add ("/tally/startup-ui/empty-window", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_empty_window, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/startup-ui/banners", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_banners, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/startup-ui/session-without-plans", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_session_without_plans, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/startup-ui/shortcuts-on-first-use", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_shortcuts_on_first_use, tally_test_app_fixture_tear_down);
  g_test_add_func ("/tally/startup-ui/plan-cards-share-webkit", test_plan_cards_share);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
