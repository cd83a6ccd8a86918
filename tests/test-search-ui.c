/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The sidebar's search under Xvfb (issue 15, search across 1,000
 * sessions): titles filter in the same keystroke, before the store
 * answers; a newer text cancels the older search and only its own results
 * are shown; FTS5 syntax typed into the entry gives results or the empty
 * state, never an error or a critical (criticals are fatal here). */

#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "tally-event.h"
#include "tally-session-row.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-window-private.h"

/* One finished turn per session: its title, prompt and answer. */
static const char *sessions[][3] = {
  { "Croissant waste in York", "How much croissant waste in York?", "York threw away 40 croissants a day." },
  { "Cold brew margins", "What are the cold brew margins?", "The new pistachio latte beat cold brew on margin." },
  { "Leeds footfall", "Footfall in Leeds by weekday", "Saturdays bring twice the footfall of Mondays." },
};

static void
seed_store (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (path, &error);

  g_assert_no_error (error);
  for (guint s = 0; s < G_N_ELEMENTS (sessions); s++)
    {
      g_autofree char *id = g_strdup_printf ("5ea2c4e1-0000-4000-8000-%012u", s);
      JsonObject *fields[4] = {
        tally_event_new (TALLY_EVENT_SESSION_CREATED), tally_event_new (TALLY_EVENT_TURN_STARTED),
        tally_event_new (TALLY_EVENT_TEXT_DELTA), tally_event_new (TALLY_EVENT_TURN_FINISHED),
      };

      json_object_set_string_member (fields[0], "title", sessions[s][0]);
      json_object_set_string_member (fields[0], "model", "claude-sonnet-5");
      json_object_set_string_member (fields[1], "mode", "ask");
      json_object_set_string_member (fields[1], "text", sessions[s][1]);
      json_object_set_int_member (fields[2], "call", 1);
      json_object_set_int_member (fields[2], "block", 0);
      json_object_set_string_member (fields[2], "text", sessions[s][2]);
      json_object_set_string_member (fields[3], "status", "done");
      for (guint e = 0; e < G_N_ELEMENTS (fields); e++)
        {
          g_autoptr(JsonObject) event = tally_event_stamp (fields[e], e + 1, g_get_real_time () - (3 - s) * G_USEC_PER_SEC,
                                                           id, e == 0 ? NULL : "t1");

          json_object_unref (fields[e]);
          g_assert_true (tally_store_append_event (store, event, &error));
          g_assert_no_error (error);
        }
    }
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);
}

static TallySessionRow *
row_titled (TallyWindow *window,
            const char  *title)
{
  GtkListBox *list = _tally_window_get_session_list (window);
  GtkListBoxRow *row;

  for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    if (TALLY_IS_SESSION_ROW (row) && g_str_equal (tally_session_row_get_title (TALLY_SESSION_ROW (row)), title))
      return TALLY_SESSION_ROW (row);
  g_assert_not_reached ();
}

static gboolean
shown (TallyWindow *window,
       const char  *title)
{
  return gtk_widget_get_child_visible (GTK_WIDGET (row_titled (window, title)));
}

/* The text of the row's visible label that holds @needle, or NULL */
static const char *
visible_label_with (TallySessionRow *row,
                    const char      *needle)
{
  g_autoptr(GPtrArray) labels = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_LABEL);

  for (guint i = 0; i < labels->len; i++)
    {
      GtkLabel *label = g_ptr_array_index (labels, i);

      if (gtk_widget_get_visible (GTK_WIDGET (label)) && strstr (gtk_label_get_text (label), needle) != NULL)
        return gtk_label_get_text (label);
    }
  return NULL;
}

/* Puts @text in the entry and has the window search for it now (the
 * entry's own signal follows on the next main-loop turn, with the same
 * text). gtk_editable_set_text() deletes the old text before it inserts
 * the new one, so the entry may first say it was emptied. */
static void
set_search (TallyWindow *window,
            const char  *text)
{
  GtkSearchEntry *entry = _tally_window_get_search_entry (window);

  gtk_editable_set_text (GTK_EDITABLE (entry), text);
  g_signal_emit_by_name (entry, "search-changed");
}

static void
search_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          data)
{
  TallySessionRow *cold_brew;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");

  /* Titles first: the row whose title matches shows in the same
   * keystroke (the entry does not wait for a pause in typing), before the
   * store has answered; the others are hidden. */
  gtk_editable_set_text (GTK_EDITABLE (_tally_window_get_search_entry (window)), "croissant w");
  SPIN_UNTIL (_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Croissant waste in York"));
  g_assert_false (shown (window, "Cold brew margins"));
  g_assert_false (shown (window, "Leeds footfall"));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Croissant waste in York"));
  g_assert_false (shown (window, "Cold brew margins"));

  /* A newer text cancels the older search: only its results show, with
   * where it matched. "york" would show the croissant session. */
  set_search (window, "york");
  g_assert_true (_tally_window_is_refreshing (window));
  set_search (window, "pistachio");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_false (shown (window, "Croissant waste in York"));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_false (shown (window, "Leeds footfall"));
  cold_brew = row_titled (window, "Cold brew margins");
  g_assert_nonnull (visible_label_with (cold_brew, "pistachio latte"));
  /* The snippet's « » became markup, not text. */
  g_assert_null (visible_label_with (cold_brew, "«"));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");

  /* FTS5 syntax is taken literally: nothing, or the sessions it names. */
  set_search (window, "\"oat\" NEAR(-milk* (");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "no-results");
  set_search (window, "(pistachio");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_false (shown (window, "Leeds footfall"));
  set_search (window, "\"");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "no-results");
  g_assert_null (_tally_window_get_last_toast (window));

  /* Clearing the entry shows every session again, without snippets. */
  set_search (window, "");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Croissant waste in York"));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_true (shown (window, "Leeds footfall"));
  g_assert_null (visible_label_with (cold_brew, "pistachio"));
}

/* /tally/search-ui/window */
static void
test_search_window (TallyTestAppFixture *fixture,
                    gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };

  seed_store (fixture->store_path);
  g_assert_cmpint (tally_test_app_run (args, search_body, NULL), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/search-ui/window", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_search_window, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
