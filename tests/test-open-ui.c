/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Opening a long stored session (issue 15, "Open at once"): the session
 * opens from its snapshot, the transcript view shows its last block at
 * once with only the newest blocks bound, and older rows come in at the
 * top without moving the row the analyst looks at. */

#include "config.h"

#include <glib/gstdio.h>

#include "tally-block-row.h"
#include "tally-event.h"
#include "tally-session.h"
#include "tally-session-load.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-tool-registry.h"
#include "tally-test-app.h"
#include "tally-transcript-view.h"
#include "tally-ui.h"
#include "tally-window-private.h"

#define SESSION_ID "0be11e55-0000-4000-8000-0000000000aa"
#define TURNS 1500
#define SHORT_ID "0be11e55-0000-4000-8000-0000000000bb"
#define SHORT_TURNS 3

static void
append_to (TallyStore *store,
           const char *session_id,
           gint64     *seq,
           const char *turn_id,
           const char *json)
{
  g_autoptr(JsonObject) fields = tally_test_parse_object (json);
  g_autoptr(JsonObject) event = NULL;
  g_autoptr(GError) error = NULL;

  (*seq)++;
  event = tally_event_stamp (fields, *seq, 1796200000000000 + *seq, session_id, turn_id);
  g_assert_true (tally_store_append_event (store, event, &error));
  g_assert_no_error (error);
}

#define append(store, seq, turn_id, json) append_to (store, session_id, seq, turn_id, json)

/* A session of @turns turns (four events each) in the store at @path. */
static void
fill_session (const char *path,
              const char *session_id,
              guint       turns)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (path, &error);
  gint64 seq = 0;

  g_assert_no_error (error);
  append (store, &seq, NULL, "{\"type\":\"session_created\",\"title\":\"Long\",\"model\":\"claude-sonnet-5\","
                             "\"workspace\":null,\"database\":null}");
  for (guint t = 0; t < turns; t++)
    {
      g_autofree char *turn = g_strdup_printf ("t%u", t);
      g_autofree char *prompt = g_strdup_printf ("{\"type\":\"turn_started\",\"mode\":\"ask\",\"text\":\"Question %u\"}", t);
      g_autofree char *answer = g_strdup_printf ("{\"type\":\"text_delta\",\"call\":0,\"block\":0,\"text\":\"Answer %u\"}", t);

      append (store, &seq, turn, prompt);
      append (store, &seq, turn, answer);
      append (store, &seq, turn, "{\"type\":\"block_done\",\"call\":0,\"block\":0,\"kind\":\"text\"}");
      append (store, &seq, turn, "{\"type\":\"turn_finished\",\"status\":\"done\",\"cost_usd\":0.001,"
                                 "\"duration_ms\":100,\"api_calls\":1,\"usage\":{}}");
    }
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);
}

#undef append

static void
fill_store (const char *path)
{
  fill_session (path, SESSION_ID, TURNS);
}

static TallySession *
open_session (const char *path,
              gboolean    expect_snapshot)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (path, &error);
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();
  TallySessionLoad load;
  TallySession *session;

  g_assert_no_error (error);
  g_assert_true (tally_session_load (store, SESSION_ID, &load, &error));
  g_assert_cmpint (load.from_snapshot, ==, expect_snapshot);
  tally_session_load_clear (&load);

  session = tally_session_open (store, SESSION_ID, NULL, tools, &error);
  g_assert_no_error (error);
  g_assert_true (tally_store_flush (store, &error));
  return session;
}

/* The mapped row nearest the top of the list view's viewport: its block's
 * index in @blocks and its top in the view's coordinates. */
static gboolean
top_row (GtkWidget  *list_view,
         GListModel *blocks,
         guint      *index,
         double     *y)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (list_view, TALLY_TYPE_BLOCK_ROW);
  gboolean found = FALSE;

  for (guint i = 0; i < rows->len; i++)
    {
      GtkWidget *row = g_ptr_array_index (rows, i);
      graphene_point_t point;

      if (!gtk_widget_get_mapped (row) || tally_block_row_get_block (TALLY_BLOCK_ROW (row)) == NULL ||
          !gtk_widget_compute_point (row, list_view, &GRAPHENE_POINT_INIT (0, 0), &point) ||
          point.y + gtk_widget_get_height (row) <= 0)
        continue;
      if (!found || point.y < *y)
        {
          *y = point.y;
          *index = tally_test_block_index (blocks, tally_block_row_get_block (TALLY_BLOCK_ROW (row)));
          found = TRUE;
        }
    }
  return found;
}

static gboolean
block_shown (GtkWidget  *list_view,
             TallyBlock *block)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (list_view, TALLY_TYPE_BLOCK_ROW);
  int height = gtk_widget_get_height (list_view);

  for (guint i = 0; i < rows->len; i++)
    {
      GtkWidget *row = g_ptr_array_index (rows, i);
      graphene_point_t point;

      if (gtk_widget_get_mapped (row) && tally_block_row_get_block (TALLY_BLOCK_ROW (row)) == block &&
          gtk_widget_compute_point (row, list_view, &GRAPHENE_POINT_INIT (0, 0), &point) &&
          point.y >= 0 && point.y < height)
        return TRUE;
    }
  return FALSE;
}

/* What each drawn frame showed. */
typedef struct {
  guint  bound;     /* blocks bound in the list */
  guint  top;       /* index of the block at the top of the viewport */
  double top_y;     /* its top in the list view */
  guint  scrolled;  /* how many times the test had scrolled before */
} Frame;

typedef struct {
  GtkWidget     *list_view;
  GListModel    *blocks;
  GListModel    *bound;
  GtkAdjustment *adjustment;
  TallyBlock    *last;
  GArray        *frames;
  guint          scrolled;
  guint          first_last_shown;   /* bound blocks when the last block first showed */
} Watch;

/* After each paint: note what the frame showed; once the last block has
 * shown, scroll to the top of what is bound, as an analyst would. */
static void
after_paint_cb (GdkFrameClock *clock,
                Watch         *w)
{
  Frame frame = { g_list_model_get_n_items (w->bound), 0, 0, w->scrolled };

  if (!top_row (w->list_view, w->blocks, &frame.top, &frame.top_y))
    return;
  g_array_append_val (w->frames, frame);

  if (w->scrolled == 0 && block_shown (w->list_view, w->last))
    {
      g_autoptr(GPtrArray) rows = tally_test_find_all (w->list_view, TALLY_TYPE_BLOCK_ROW);

      g_test_message ("the last block shows with %u blocks bound, %u rows made", frame.bound, rows->len);
      w->first_last_shown = frame.bound;
      gtk_adjustment_set_value (w->adjustment, gtk_adjustment_get_lower (w->adjustment));
      w->scrolled++;
    }
}

static void
test_open_long_session (void)
{
  g_autofree char *dir = g_dir_make_tmp ("tally-test-open-ui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "tally.db", NULL);
  g_autoptr(TallySession) session = NULL;
  g_autoptr(TallyBlock) last = NULL;
  g_autoptr(GArray) frames = g_array_new (FALSE, FALSE, sizeof (Frame));
  GtkWidget *view = tally_transcript_view_new ();
  Watch w = { 0 };
  GtkWindow *window;
  gulong paint_id;
  guint n, growth_seen = 0;

  fill_store (path);
  /* The first open replays the log and writes the snapshot; the second
   * opens from it. */
  session = open_session (path, FALSE);
  g_clear_object (&session);
  session = open_session (path, TRUE);

  w.blocks = G_LIST_MODEL (tally_session_get_transcript (session));
  n = g_list_model_get_n_items (w.blocks);
  g_assert_cmpuint (n, ==, TURNS * 3);
  last = g_list_model_get_item (w.blocks, n - 1);
  g_assert_cmpint (tally_block_get_kind (last), ==, TALLY_BLOCK_RECEIPT);
  w.last = last;
  w.frames = frames;

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), w.blocks);
  w.list_view = tally_test_find_first (view, GTK_TYPE_LIST_VIEW);
  w.bound = G_LIST_MODEL (gtk_list_view_get_model (GTK_LIST_VIEW (w.list_view)));
  w.adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (tally_test_find_first (view, GTK_TYPE_SCROLLED_WINDOW)));
  /* Only the newest blocks are bound at first. */
  g_assert_cmpuint (g_list_model_get_n_items (w.bound), >, 0);
  g_assert_cmpuint (g_list_model_get_n_items (w.bound), <, n / 100);

  window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (window, 640, 480);
  gtk_window_set_child (window, view);
  gtk_window_present (window);
  paint_id = g_signal_connect_after (gtk_widget_get_frame_clock (view), "after-paint",
                                     G_CALLBACK (after_paint_cb), &w);

  /* The last block shows while only the newest blocks are bound; then
   * the analyst goes up and the older ones come in above. */
  SPIN_UNTIL (w.scrolled > 0 && g_list_model_get_n_items (w.bound) == n);
  tally_test_wait_frames (view, 3);
  g_signal_handler_disconnect (gtk_widget_get_frame_clock (view), paint_id);
  g_assert_cmpuint (w.first_last_shown, <, n);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));

  /* Between two frames with no scrolling in between, blocks arriving
   * above leave the top row where it was. */
  for (guint i = 1; i < frames->len; i++)
    {
      Frame *before = &g_array_index (frames, Frame, i - 1);
      Frame *after = &g_array_index (frames, Frame, i);

      if (after->bound == before->bound || after->scrolled != before->scrolled)
        continue;
      g_test_message ("bound %u -> %u: top block %u at %.1f -> %u at %.1f",
                      before->bound, after->bound, before->top, before->top_y, after->top, after->top_y);
      g_assert_cmpuint (after->top, ==, before->top);
      g_assert_cmpfloat_with_epsilon (after->top_y, before->top_y, 1.0);
      if (after->scrolled > 0)
        growth_seen++;
    }
  /* Seen after the analyst went up, not only while at the end. */
  g_assert_cmpuint (growth_seen, >, 0);

  /* Going on up shows the older blocks, down to the session's first. */
  {
    g_autoptr(TallyBlock) first = g_list_model_get_item (w.blocks, 0);
    Frame *end = &g_array_index (frames, Frame, frames->len - 1);
    guint top;
    double y;

    gtk_adjustment_set_value (w.adjustment, gtk_adjustment_get_value (w.adjustment) -
                                            gtk_adjustment_get_page_size (w.adjustment));
    tally_test_wait_frames (view, 3);
    g_assert_true (top_row (w.list_view, w.blocks, &top, &y));
    g_assert_cmpuint (top, <, end->top);

    gtk_adjustment_set_value (w.adjustment, gtk_adjustment_get_lower (w.adjustment));
    SPIN_UNTIL (block_shown (w.list_view, first));
  }

  gtk_window_destroy (window);
  g_clear_object (&session);
  tally_test_rm_rf (dir);
}

/* /tally/open-ui/window: the window opens a saved session off the main
 * loop (tally_window_open_session_async()): a heartbeat keeps firing
 * while the long session's log is replayed, a second open cancels the
 * first, a missing session gets the usual toast and leaves the window as
 * it was, and closing the window cancels an open under way. */

typedef struct {
  gboolean  done;
  GError   *error;
} OpenResult;

static void
window_opened_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  OpenResult *r = user_data;

  g_assert_false (r->done);
  tally_window_open_session_finish (TALLY_WINDOW (object), result, &r->error);
  r->done = TRUE;
}

typedef struct {
  gint64 last_us;
  gint64 max_gap_us;
  guint  beats;
} Beat;

static gboolean
beat_cb (gpointer data)
{
  Beat *b = data;
  gint64 now = g_get_monotonic_time ();

  b->max_gap_us = MAX (b->max_gap_us, now - b->last_us);
  b->last_us = now;
  b->beats++;
  return G_SOURCE_CONTINUE;
}

static const char *
shown_id (TallyWindow *window)
{
  TallySession *session = tally_window_get_session (window);

  return session != NULL ? tally_session_get_id (session) : NULL;
}

static guint
shown_blocks (TallyWindow *window)
{
  return g_list_model_get_n_items (G_LIST_MODEL (tally_session_get_transcript (tally_window_get_session (window))));
}

/* Completed after the window is gone (static: the body has returned). */
static OpenResult closing;

static void
window_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          data)
{
  OpenResult big = { 0 }, first = { 0 }, second = { 0 }, missing = { 0 };
  Beat beat = { 0 };
  gint64 started;
  guint beat_id;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);

  /* The long session, its whole log replayed (it has no snapshot yet),
   * while a 5 ms heartbeat runs on the main loop. */
  beat.last_us = started = g_get_monotonic_time ();
  beat_id = g_timeout_add (5, beat_cb, &beat);
  tally_window_open_session_async (window, SESSION_ID, window_opened_cb, &big);
  /* Nothing was read on the caller's stack: the open is under way and the
   * window still shows the new session it had. */
  g_assert_true (_tally_window_is_opening (window));
  g_assert_false (big.done);
  g_assert_null (tally_window_get_session (window));
  SPIN_UNTIL (big.done);
  tally_test_wait_frames (GTK_WIDGET (window), 1);
  g_source_remove (beat_id);
  g_assert_no_error (big.error);
  g_assert_false (_tally_window_is_opening (window));
  g_assert_cmpstr (shown_id (window), ==, SESSION_ID);
  g_assert_cmpuint (shown_blocks (window), ==, TURNS * 3);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");
  g_assert_cmpuint (beat.beats, >, 0);
  g_print ("# open of %u events (whole log replayed) to its first frame: %.1f ms; "
           "the 5 ms heartbeat fired %u times, longest gap between beats %.1f ms\n",
           1 + TURNS * 4, (g_get_monotonic_time () - started) / 1000.0, beat.beats, beat.max_gap_us / 1000.0);

  /* A second open cancels the first: the long session is not shown
   * again, the short one is. */
  tally_window_new_session (window);
  tally_window_open_session_async (window, SESSION_ID, window_opened_cb, &first);
  g_assert_true (_tally_window_is_opening (window));
  tally_window_open_session_async (window, SHORT_ID, window_opened_cb, &second);
  SPIN_UNTIL (first.done && second.done);
  g_assert_error (first.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_no_error (second.error);
  g_assert_cmpstr (shown_id (window), ==, SHORT_ID);
  g_assert_cmpuint (shown_blocks (window), ==, SHORT_TURNS * 3);

  /* A session that is not there: the usual toast, and the window keeps
   * the session it showed. */
  tally_window_open_session_async (window, "0be11e55-dead", window_opened_cb, &missing);
  SPIN_UNTIL (missing.done);
  g_assert_error (missing.error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==, "No saved session matches “0be11e55-dead”");
  g_assert_cmpstr (shown_id (window), ==, SHORT_ID);
  g_assert_cmpuint (shown_blocks (window), ==, SHORT_TURNS * 3);

  /* Asking for the session shown completes at once. */
  {
    OpenResult again = { 0 };

    tally_window_open_session_async (window, SHORT_ID, window_opened_cb, &again);
    g_assert_false (_tally_window_is_opening (window));
    SPIN_UNTIL (again.done);
    g_assert_no_error (again.error);
  }

  /* A read started before there was a window to show it (tally
   * --session, _tally_window_prefetch_session()): the window that takes
   * it shows the session once it is read, and is opening until then. */
  {
    OpenResult taken = { 0 }, cancelled = { 0 }, after = { 0 };

    tally_window_new_session (window);
    _tally_window_open_prefetched_async (window, _tally_window_prefetch_session (app, SHORT_ID),
                                         window_opened_cb, &taken);
    g_assert_true (_tally_window_is_opening (window));
    g_assert_null (tally_window_get_session (window));
    SPIN_UNTIL (taken.done);
    g_assert_no_error (taken.error);
    g_assert_false (_tally_window_is_opening (window));
    g_assert_cmpstr (shown_id (window), ==, SHORT_ID);
    g_assert_cmpuint (shown_blocks (window), ==, SHORT_TURNS * 3);

    /* A new session cancels it as any open; the session read is let go
     * (its writer lock too: it opens again). */
    _tally_window_open_prefetched_async (window, _tally_window_prefetch_session (app, SESSION_ID),
                                         window_opened_cb, &cancelled);
    tally_window_new_session (window);
    SPIN_UNTIL (cancelled.done);
    g_assert_error (cancelled.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_assert_null (tally_window_get_session (window));
    tally_window_open_session_async (window, SESSION_ID, window_opened_cb, &after);
    SPIN_UNTIL (after.done);
    g_assert_no_error (after.error);
    g_assert_cmpstr (shown_id (window), ==, SESSION_ID);
    tally_window_new_session (window);
    g_clear_error (&cancelled.error);
  }

  /* The harness closes the window next, with this open under way. */
  tally_window_open_session_async (window, SESSION_ID, window_opened_cb, &closing);
  g_clear_error (&first.error);
  g_clear_error (&missing.error);
}

static void
test_window_open (TallyTestAppFixture *fixture,
                  gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  fill_session (fixture->store_path, SESSION_ID, TURNS);
  fill_session (fixture->store_path, SHORT_ID, SHORT_TURNS);

  g_assert_cmpint (tally_test_app_run (args, window_body, NULL), ==, 0);
  /* Closing the window cancelled the open; the session it read is
   * dropped without being shown anywhere. */
  SPIN_UNTIL (closing.done);
  g_assert_error (closing.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&closing.error);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  tally_ui_init ();

  g_test_add_func ("/tally/open-ui/long-session", test_open_long_session);
  g_test_add ("/tally/open-ui/window", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_window_open, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
