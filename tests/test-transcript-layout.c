/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The transcript's geometry under Xvfb (issue 14 §1–§3): rows keep their
 * height after a turn settles, a resize and a context menu; an answer's
 * receipt sits one row spacing under its last line; what the analyst
 * clicks stays where it was clicked, and the view stops following the
 * output until they scroll back to the end or send a message; every row's
 * content shares one left and one right edge; a vertical wheel over a
 * code block, a wide table or a query's result scrolls the conversation;
 * a card that arrives while the view follows is drawn at the end.
 *
 * GTK 4.8 has no public way to synthesize input events, so a click or a
 * wheel step is delivered by emitting the controller's own signal (the
 * click gesture's "pressed", the scroll controller's "scroll") on the
 * controller the widget installed, which runs the same handler a real
 * event would. */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "tally-approval-card.h"
#include "tally-assistant-text.h"
#include "tally-block-row.h"
#include "tally-markdown-code-block.h"
#include "tally-markdown-table.h"
#include "tally-markdown-view-private.h"
#include "tally-markdown-view.h"
#include "tally-receipt-row.h"
#include "tally-result-table.h"
#include "tally-scroll-forward.h"
#include "tally-test-ui.h"
#include "tally-thinking-drawer.h"
#include "tally-tool-chip.h"
#include "tally-transcript-view.h"
#include "tally-transcript.h"
#include "tally-ui.h"

/* The largest gap the style sheet puts between an answer's last line and
 * its receipt: the rows' padding (4 px under the text row, 2 px over the
 * receipt) and the text view's bottom margin, with a pixel to spare. */
#define MAX_RECEIPT_GAP 12.0

static const char *const turn_events[] = {
  "{\"type\":\"turn_started\",\"turn_id\":\"t{n}\",\"mode\":\"ask\",\"text\":\"Which product earned the most in March? ({n})\"}",
  "{\"type\":\"thinking_delta\",\"turn_id\":\"t{n}\",\"call\":0,\"block\":0,\"text\":\"Sum the sales by product for March and sort them ({n}).\"}",
  "{\"type\":\"block_done\",\"turn_id\":\"t{n}\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}",
  "{\"type\":\"text_delta\",\"turn_id\":\"t{n}\",\"call\":0,\"block\":1,\"text\":\"I'll add up March sales per product ({n}).\"}",
  "{\"type\":\"block_done\",\"turn_id\":\"t{n}\",\"call\":0,\"block\":1,\"kind\":\"text\"}",
  "{\"type\":\"tool_use_start\",\"turn_id\":\"t{n}\",\"tool_id\":\"tu{n}\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT p.name AS product, SUM(s.total) AS revenue FROM sales s JOIN products p ON p.id = s.product_id GROUP BY p.name\"}}",
  "{\"type\":\"approval_resolved\",\"turn_id\":\"t{n}\",\"tool_id\":\"tu{n}\",\"decision\":\"allow\",\"reason\":\"mode\"}",
  "{\"type\":\"tool_result\",\"turn_id\":\"t{n}\",\"tool_id\":\"tu{n}\",\"content\":\"product | revenue\\nFlat white | 4821.5\\nEspresso | 3990.25\\n(2 rows)\",\"is_error\":false,\"duration_ms\":14}",
  NULL
};

/* The answer: prose, a wide code block, a table and a closing line. */
static const char *const answer_parts[] = {
  "**Flat white** led March with **$4,821.50**, about 21% ahead of espresso. ",
  "The espresso bar led every week of the month, and oat milk drinks grew fastest.\n\n",
  "```sql\nSELECT p.name AS product, ROUND(SUM(s.total), 2) AS revenue, COUNT(*) AS orders, AVG(s.total) AS basket FROM sales s JOIN products p ON p.id = s.product_id WHERE s.sold_at BETWEEN '2024-03-01' AND '2024-03-31' GROUP BY p.name ORDER BY revenue DESC\n",
  "SELECT 1;\n```\n\n",
  "| product | revenue | orders | basket | store with the most orders | note from the manager |\n",
  "|---|---:|---:|---:|---|---|\n",
  "| Flat white | 4,821.50 | 1,204 | 4.00 | Briggate | steady all month, no promotion ran |\n",
  "| Espresso | 3,990.25 | 1,630 | 2.45 | Harbour | the morning rush at the station kiosk |\n\n",
  "Revenue rose by a tenth over February.",
  NULL
};

static const char *const finish_events[] = {
  "{\"type\":\"block_done\",\"turn_id\":\"t{n}\",\"call\":1,\"block\":0,\"kind\":\"text\"}",
  "{\"type\":\"turn_finished\",\"turn_id\":\"t{n}\",\"status\":\"done\",\"cost_usd\":0.0123,\"duration_ms\":6400,\"api_calls\":2,\"usage\":{\"input_tokens\":5210,\"output_tokens\":388}}",
  NULL
};

static void
apply_events (TallyTranscript   *transcript,
              const char *const *events,
              guint              n)
{
  g_autofree char *number = g_strdup_printf ("%u", n);

  /* "{n}" in an event stands for the turn's number. */
  for (guint i = 0; events[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (events[i], "{n}", -1);
      g_autofree char *json = g_strjoinv (number, parts);

      tally_test_apply_event (transcript, json);
    }
}

static void
apply_answer_delta (TallyTranscript *transcript,
                    guint            n,
                    const char      *text)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *turn = g_strdup_printf ("t%u", n);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text_delta");
  json_builder_set_member_name (builder, "turn_id");
  json_builder_add_string_value (builder, turn);
  json_builder_set_member_name (builder, "call");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "block");
  json_builder_add_int_value (builder, 0);
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  tally_transcript_apply (transcript, json_node_get_object (node));
}

/* A whole turn: question, thinking, preamble, a query, the answer and its
 * receipt. */
static void
add_turn (TallyTranscript *transcript,
          guint            n)
{
  apply_events (transcript, turn_events, n);
  for (guint i = 0; answer_parts[i] != NULL; i++)
    apply_answer_delta (transcript, n, answer_parts[i]);
  apply_events (transcript, finish_events, n);
}

/* Widgets */

typedef struct {
  GtkWindow *window;
  GtkWidget *frame;    /* sets the view's width */
  GtkWidget *view;
} Fixture;

static void
fixture_show (Fixture         *fixture,
              TallyTranscript *transcript,
              int              width,
              int              height)
{
  fixture->window = GTK_WINDOW (gtk_window_new ());
  fixture->frame = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  fixture->view = tally_transcript_view_new ();
  gtk_widget_set_vexpand (fixture->view, TRUE);
  gtk_widget_set_halign (fixture->frame, GTK_ALIGN_START);
  gtk_widget_set_size_request (fixture->frame, width, height);
  gtk_box_append (GTK_BOX (fixture->frame), fixture->view);
  gtk_window_set_child (fixture->window, fixture->frame);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (fixture->view), G_LIST_MODEL (transcript));
  gtk_window_present (fixture->window);
  tally_test_wait_frames (fixture->view, 6);
}

static void
fixture_resize (Fixture *fixture,
                int      width)
{
  int height;

  gtk_widget_get_size_request (fixture->frame, NULL, &height);
  gtk_widget_set_size_request (fixture->frame, width, height);
  tally_test_wait_frames (fixture->view, 8);
  g_assert_cmpint (gtk_widget_get_width (fixture->view), ==, width);
}

static GtkAdjustment *
view_vadjustment (GtkWidget *view)
{
  GtkWidget *scroller = tally_test_find_first (view, GTK_TYPE_SCROLLED_WINDOW);

  g_assert_nonnull (scroller);
  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
}

static double
distance_from_end (GtkWidget *view)
{
  GtkAdjustment *adjustment = view_vadjustment (view);

  return gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment) -
         gtk_adjustment_get_value (adjustment);
}

static gboolean
following (GtkWidget *view)
{
  return tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view));
}

/* Waits until the view has sat still at its end for a few frames. */
static void
wait_at_end (GtkWidget *view)
{
  gint64 deadline = g_get_monotonic_time () + TALLY_TEST_WAIT_SECONDS * G_USEC_PER_SEC;
  guint still = 0;

  while (still < 4)
    {
      if (tally_test_deadline_passed (deadline))
        g_error ("Timed out waiting for the view to settle at its end");
      tally_test_wait_frames (view, 1);
      still = fabs (distance_from_end (view)) < 0.5 ? still + 1 : 0;
    }
}

/* The row showing @block, or NULL. */
static TallyBlockRow *
row_for (GtkWidget  *view,
         TallyBlock *block)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (view, TALLY_TYPE_BLOCK_ROW);

  for (guint i = 0; i < rows->len; i++)
    if (tally_block_row_get_block (g_ptr_array_index (rows, i)) == block)
      return g_ptr_array_index (rows, i);
  return NULL;
}

static TallyBlock *
block_at (TallyTranscript *transcript,
          guint            position)
{
  g_autoptr(TallyBlock) block = g_list_model_get_item (G_LIST_MODEL (transcript), position);

  g_assert_nonnull (block);
  return block;   /* the transcript keeps it */
}

/* The last block of @kind at or before @before (G_MAXUINT: the end). */
static guint
last_of_kind (TallyTranscript *transcript,
              TallyBlockKind   kind,
              guint            before)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (transcript));

  for (guint i = MIN (n, before == G_MAXUINT ? n : before + 1); i > 0; i--)
    if (tally_block_get_kind (block_at (transcript, i - 1)) == kind)
      return i - 1;
  g_assert_not_reached ();
  return 0;
}

static graphene_rect_t
bounds_in_window (GtkWidget *widget)
{
  graphene_rect_t bounds;

  g_assert_true (gtk_widget_compute_bounds (widget, GTK_WIDGET (gtk_widget_get_root (widget)), &bounds));
  return bounds;
}

/* The heights of the rows on screen, by block. */
static GHashTable *
row_heights (GtkWidget *view)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (view, TALLY_TYPE_BLOCK_ROW);
  GHashTable *heights = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < rows->len; i++)
    {
      TallyBlockRow *row = g_ptr_array_index (rows, i);

      if (tally_block_row_get_block (row) != NULL && gtk_widget_get_mapped (GTK_WIDGET (row)))
        g_hash_table_insert (heights, tally_block_row_get_block (row),
                             GINT_TO_POINTER (gtk_widget_get_height (GTK_WIDGET (row))));
    }
  return heights;
}

/* Every row in both tables has the same height in each; returns how many
 * rows were compared. */
static guint
assert_same_heights (GHashTable *before,
                     GHashTable *after,
                     const char *what)
{
  GHashTableIter iter;
  gpointer block, height;
  guint compared = 0;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &block, &height))
    {
      gpointer other;

      if (!g_hash_table_lookup_extended (after, block, NULL, &other))
        continue;
      if (GPOINTER_TO_INT (other) != GPOINTER_TO_INT (height))
        g_error ("%s: a %s row was %d px high and is %d px now", what,
                 tally_block_kind_to_string (tally_block_get_kind (block)),
                 GPOINTER_TO_INT (height), GPOINTER_TO_INT (other));
      compared++;
    }
  return compared;
}

static GtkTextView *
answer_text_view (GtkWidget  *view,
                  TallyBlock *block)
{
  TallyBlockRow *row = row_for (view, block);

  g_assert_nonnull (row);
  g_assert_true (TALLY_IS_ASSISTANT_TEXT (tally_block_row_get_child (row)));
  return tally_markdown_view_get_text_view (TALLY_MARKDOWN_VIEW (
           tally_assistant_text_get_view (TALLY_ASSISTANT_TEXT (tally_block_row_get_child (row)))));
}

/* The y (window coordinates) under the last line of an answer. */
static double
answer_text_bottom (GtkWidget  *view,
                    TallyBlock *block)
{
  GtkTextView *text_view = answer_text_view (view, block);
  GtkTextIter end;
  graphene_point_t point;
  int y, height, wx, wy;

  gtk_text_buffer_get_end_iter (gtk_text_view_get_buffer (text_view), &end);
  gtk_text_view_get_line_yrange (text_view, &end, &y, &height);
  gtk_text_view_buffer_to_window_coords (text_view, GTK_TEXT_WINDOW_WIDGET, 0, y + height, &wx, &wy);
  g_assert_true (gtk_widget_compute_point (GTK_WIDGET (text_view), GTK_WIDGET (gtk_widget_get_root (view)),
                                           &GRAPHENE_POINT_INIT (wx, wy), &point));
  return point.y;
}

/* The gap between an answer's last line and the top of its receipt's
 * text. */
static double
receipt_gap (GtkWidget       *view,
             TallyTranscript *transcript,
             guint            receipt)
{
  TallyBlock *answer = block_at (transcript, last_of_kind (transcript, TALLY_BLOCK_TEXT, receipt));
  TallyBlockRow *row = row_for (view, block_at (transcript, receipt));
  GtkWidget *label;

  g_assert_nonnull (row);
  label = tally_test_find_first (tally_block_row_get_child (row), GTK_TYPE_LABEL);
  g_assert_nonnull (label);
  return bounds_in_window (label).origin.y - answer_text_bottom (view, answer);
}

/* §1: heights after a settle, a resize and a context menu */

static void
check_receipts (GtkWidget       *view,
                TallyTranscript *transcript,
                const char      *when)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (transcript));
  guint checked = 0;

  for (guint i = 0; i < n; i++)
    {
      double gap;

      if (tally_block_get_kind (block_at (transcript, i)) != TALLY_BLOCK_RECEIPT ||
          row_for (view, block_at (transcript, i)) == NULL)
        continue;
      gap = receipt_gap (view, transcript, i);
      g_test_message ("%s: receipt %u sits %.1f px under its answer", when, i, gap);
      g_assert_cmpfloat (gap, >=, 4.0);
      g_assert_cmpfloat (gap, <=, MAX_RECEIPT_GAP);
      checked++;
    }
  g_assert_cmpuint (checked, >, 0);
}

static void
test_heights (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(GHashTable) settled = NULL;
  g_autoptr(GHashTable) resized = NULL;
  g_autoptr(GHashTable) reopened = NULL;
  g_autoptr(GHashTable) menu = NULL;
  Fixture fixture = { 0 };
  TallyBlock *answer;
  guint compared;

  add_turn (transcript, 1);
  fixture_show (&fixture, transcript, 760, 1400);

  /* A live turn, streamed a part per frame, then settled. */
  apply_events (transcript, turn_events, 2);
  tally_test_wait_frames (fixture.view, 2);
  for (guint i = 0; answer_parts[i] != NULL; i++)
    {
      apply_answer_delta (transcript, 2, answer_parts[i]);
      tally_test_wait_frames (fixture.view, 1);
    }
  apply_events (transcript, finish_events, 2);
  wait_at_end (fixture.view);
  tally_test_wait_frames (fixture.view, 6);
  settled = row_heights (fixture.view);
  check_receipts (fixture.view, transcript, "settled");

  /* Narrower and back: the same heights at the same width. */
  fixture_resize (&fixture, 480);
  check_receipts (fixture.view, transcript, "narrow");
  fixture_resize (&fixture, 760);
  resized = row_heights (fixture.view);
  compared = assert_same_heights (settled, resized, "after a resize");
  g_assert_cmpuint (compared, >=, 8);
  check_receipts (fixture.view, transcript, "resized");

  /* The settled live turn has the heights a freshly opened one has. */
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (fixture.view), NULL);
  tally_test_wait_frames (fixture.view, 2);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (fixture.view), G_LIST_MODEL (transcript));
  wait_at_end (fixture.view);
  tally_test_wait_frames (fixture.view, 6);
  reopened = row_heights (fixture.view);
  compared = assert_same_heights (settled, reopened, "after reopening");
  g_assert_cmpuint (compared, >=, 8);

  /* A right-click's menu on the answer changes nothing. */
  answer = block_at (transcript, last_of_kind (transcript, TALLY_BLOCK_TEXT, G_MAXUINT));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (answer_text_view (fixture.view, answer)), "menu.popup", NULL));
  tally_test_wait_frames (fixture.view, 6);
  menu = row_heights (fixture.view);
  compared = assert_same_heights (settled, menu, "after the context menu");
  g_assert_cmpuint (compared, >=, 8);
  check_receipts (fixture.view, transcript, "menu");

  /* Closed again before the window goes. */
  {
    g_autoptr(GPtrArray) popovers = tally_test_find_all (GTK_WIDGET (answer_text_view (fixture.view, answer)), GTK_TYPE_POPOVER);

    g_assert_cmpuint (popovers->len, >, 0);
    for (guint i = 0; i < popovers->len; i++)
      gtk_popover_popdown (g_ptr_array_index (popovers, i));
    tally_test_wait_frames (fixture.view, 4);
  }

  gtk_window_destroy (fixture.window);
}

/* §1: what the analyst touches stays where it was touched */

static GtkEventController *
find_controller (GtkWidget  *widget,
                 const char *name)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GtkEventController) controller = g_list_model_get_item (controllers, i);

      if (g_strcmp0 (gtk_event_controller_get_name (controller), name) == 0)
        return controller;   /* the widget keeps it */
    }
  return NULL;
}

/* Delivers a press at the middle of @target to the transcript's click
 * gesture, as a real click there would. */
static void
press_on (GtkWidget *view,
          GtkWidget *target)
{
  GtkWidget *list = tally_test_find_first (view, GTK_TYPE_LIST_VIEW);
  GtkEventController *gesture;
  graphene_point_t point;

  g_assert_nonnull (list);
  gesture = find_controller (list, "tally-transcript-hold");
  g_assert_nonnull (gesture);
  g_assert_true (gtk_widget_compute_point (target, list,
                                           &GRAPHENE_POINT_INIT (gtk_widget_get_width (target) / 2.0,
                                                                 gtk_widget_get_height (target) / 2.0),
                                           &point));
  g_assert_true (gtk_widget_pick (list, point.x, point.y, GTK_PICK_DEFAULT) == target ||
                 gtk_widget_is_ancestor (gtk_widget_pick (list, point.x, point.y, GTK_PICK_DEFAULT), target));
  g_signal_emit_by_name (gesture, "pressed", 1, point.x, point.y);
}

/* A turn still running: its question, thinking, preamble and a finished
 * query, with nothing under the query yet. */
static void
start_live_turn (TallyTranscript *transcript,
                 guint            n)
{
  apply_events (transcript, turn_events, n);
}

/* Clicks @expander's header and opens it, as the analyst would; returns
 * how far the header moved (window coordinates, pixels, + is down). */
static double
expand_by_click (GtkWidget   *view,
                 GtkExpander *expander,
                 const char  *what)
{
  GtkWidget *header = gtk_expander_get_label_widget (expander);
  graphene_rect_t before, after;

  before = bounds_in_window (header);
  press_on (view, header);
  gtk_expander_set_expanded (expander, TRUE);
  tally_test_wait_frames (view, 8);
  after = bounds_in_window (header);
  g_test_message ("%s header at y %.1f before the click, %.1f after", what, before.origin.y, after.origin.y);
  return after.origin.y - before.origin.y;
}

static void
test_hold (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Fixture fixture = { 0 };
  TallyToolChip *chip;
  TallyThinkingDrawer *drawer;
  GtkWidget *header;
  GtkAdjustment *adjustment;
  graphene_rect_t before, after;
  double value;

  for (guint i = 1; i <= 3; i++)
    add_turn (transcript, i);
  start_live_turn (transcript, 4);
  fixture_show (&fixture, transcript, 760, 640);
  adjustment = view_vadjustment (fixture.view);
  wait_at_end (fixture.view);
  g_assert_true (following (fixture.view));

  /* Opening the query's chip at the bottom: its header stays put, although
   * the row grows past the end the view was pinned to. */
  chip = TALLY_TOOL_CHIP (tally_block_row_get_child (row_for (fixture.view, block_at (transcript, last_of_kind (transcript, TALLY_BLOCK_TOOL_CALL, G_MAXUINT)))));
  header = gtk_expander_get_label_widget (tally_tool_chip_get_expander (chip));
  before = bounds_in_window (header);
  g_assert_cmpfloat (fabs (expand_by_click (fixture.view, tally_tool_chip_get_expander (chip), "tool chip")), <=, 1.0);
  g_assert_false (following (fixture.view));
  g_assert_cmpfloat (distance_from_end (fixture.view), >, 100.0);

  /* More output under it moves nothing either. */
  apply_answer_delta (transcript, 4, "Flat white led March.\n\nEspresso came second.\n\nOat latte third.");
  tally_test_wait_frames (fixture.view, 8);
  after = bounds_in_window (header);
  g_assert_cmpfloat (fabs (after.origin.y - before.origin.y), <=, 1.0);
  g_assert_false (following (fixture.view));

  /* The thinking drawer above it, the same. */
  drawer = TALLY_THINKING_DRAWER (tally_block_row_get_child (row_for (fixture.view, block_at (transcript, last_of_kind (transcript, TALLY_BLOCK_THINKING, G_MAXUINT)))));
  g_assert_cmpfloat (fabs (expand_by_click (fixture.view, tally_thinking_drawer_get_expander (drawer), "thinking")), <=, 1.0);

  /* Scrolling back to the end by hand resumes following. */
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment));
  g_assert_true (following (fixture.view));
  apply_answer_delta (transcript, 4, "\n\nCold brew sold out twice.");
  wait_at_end (fixture.view);
  g_assert_true (following (fixture.view));

  /* Scrolling up stops it: output arrives, the view stays. */
  value = gtk_adjustment_get_value (adjustment) - 300;
  gtk_adjustment_set_value (adjustment, value);
  g_assert_false (following (fixture.view));
  apply_answer_delta (transcript, 4, "\n\nThe kiosk at the station opened in March.");
  apply_events (transcript, finish_events, 4);
  tally_test_wait_frames (fixture.view, 8);
  g_assert_false (following (fixture.view));
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (adjustment) - value), <, 1.0);

  /* A card settled after the analyst scrolled away to read does not
   * bring the view back. */
  tally_transcript_view_resume_following (TALLY_TRANSCRIPT_VIEW (fixture.view));
  tally_test_wait_frames (fixture.view, 8);
  g_assert_false (following (fixture.view));
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (adjustment) - value), <, 1.0);

  /* Sending a message resumes it. */
  start_live_turn (transcript, 5);
  g_assert_true (following (fixture.view));
  wait_at_end (fixture.view);

  gtk_window_destroy (fixture.window);
}

/* Picking chips on a question card at the end of a live turn: the card
 * grows (the picked option's preview shows), and neither the chip clicked
 * nor the one clicked next moves. */
static void
test_question_chips (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(GPtrArray) chips = NULL;
  Fixture fixture = { 0 };
  GtkWidget *both = NULL, *leeds = NULL, *card;
  graphene_rect_t both_before, leeds_before;
  int card_height;

  for (guint i = 1; i <= 2; i++)
    add_turn (transcript, i);
  start_live_turn (transcript, 3);
  tally_test_apply_event (transcript,
    "{\"type\":\"question_request\",\"turn_id\":\"t3\",\"question_id\":\"q1\",\"tool_id\":\"toolu_q\","
    "\"questions\":["
    " {\"question\":\"Which stores should the report compare?\",\"header\":\"Stores\",\"multiSelect\":true,\"options\":["
    "   {\"label\":\"Leeds\",\"description\":\"Park Square, Leeds Station and Briggate\"},"
    "   {\"label\":\"York\",\"description\":\"Minster Yard, The Shambles and Heslington Hall\"}]},"
    " {\"question\":\"Which period should it cover?\",\"header\":\"Period\",\"options\":["
    "   {\"label\":\"Q1 2025\",\"description\":\"January to March\"},"
    "   {\"label\":\"Both quarters\",\"description\":\"The whole half year\","
    "    \"preview\":\"| Month | Revenue |\\n|---|---|\\n| Jan 2025 | 61,372 |\\n| Feb 2025 | 58,120 |\\n| Mar 2025 | 64,015 |\"}]}]}");
  fixture_show (&fixture, transcript, 760, 700);
  wait_at_end (fixture.view);

  card = tally_block_row_get_child (row_for (fixture.view, block_at (transcript, g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 1)));
  g_assert_nonnull (card);
  chips = tally_test_find_all (card, GTK_TYPE_TOGGLE_BUTTON);
  for (guint i = 0; i < chips->len; i++)
    {
      if (both == NULL && tally_test_has_accessible_label (g_ptr_array_index (chips, i), "Both quarters"))
        both = g_ptr_array_index (chips, i);
      if (leeds == NULL && tally_test_has_accessible_label (g_ptr_array_index (chips, i), "Leeds"))
        leeds = g_ptr_array_index (chips, i);
    }
  g_assert_nonnull (both);
  g_assert_nonnull (leeds);

  card_height = gtk_widget_get_height (card);
  both_before = bounds_in_window (both);
  leeds_before = bounds_in_window (leeds);
  press_on (fixture.view, both);
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (both), TRUE);
  tally_test_wait_frames (fixture.view, 8);
  g_test_message ("card %d px high before the pick, %d after; chip at y %.1f before, %.1f after",
                  card_height, gtk_widget_get_height (card),
                  both_before.origin.y, bounds_in_window (both).origin.y);
  g_assert_cmpint (gtk_widget_get_height (card), >, card_height);
  g_assert_cmpfloat (fabs (bounds_in_window (both).origin.y - both_before.origin.y), <=, 1.0);
  g_assert_cmpfloat (fabs (bounds_in_window (leeds).origin.y - leeds_before.origin.y), <=, 1.0);
  g_assert_false (following (fixture.view));

  /* Sending the answers (the window tells the view once the agent took
   * them): the view was following before the first pick and was not
   * scrolled since, so it goes back to the end and follows the turn. */
  tally_test_apply_event (transcript,
    "{\"type\":\"question_resolved\",\"turn_id\":\"t3\",\"question_id\":\"q1\",\"tool_id\":\"toolu_q\","
    "\"reason\":\"user\",\"answers\":{\"Which stores should the report compare?\":\"Leeds\","
    "\"Which period should it cover?\":\"Both quarters\"}}");
  tally_transcript_view_resume_following (TALLY_TRANSCRIPT_VIEW (fixture.view));
  g_assert_true (following (fixture.view));
  apply_answer_delta (transcript, 3, "Comparing Leeds across both quarters.");
  wait_at_end (fixture.view);
  g_assert_true (following (fixture.view));

  gtk_window_destroy (fixture.window);
}

/* §2: one column */

static void
assert_one_column (GtkWidget       *view,
                   TallyTranscript *transcript,
                   const char      *when)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (view, TALLY_TYPE_BLOCK_ROW);
  g_autoptr(GPtrArray) blocks = NULL;
  double left = -1, right = -1;
  guint kinds = 0, checked = 0;

  for (guint i = 0; i < rows->len; i++)
    {
      TallyBlockRow *row = g_ptr_array_index (rows, i);
      TallyBlock *block = tally_block_row_get_block (row);
      graphene_rect_t bounds;

      if (block == NULL || !gtk_widget_get_mapped (GTK_WIDGET (row)))
        continue;
      bounds = bounds_in_window (tally_block_row_get_child (row));
      if (left < 0)
        {
          left = bounds.origin.x;
          right = bounds.origin.x + bounds.size.width;
        }
      g_test_message ("%s: %s from x %.1f to %.1f", when,
                      tally_block_kind_to_string (tally_block_get_kind (block)),
                      bounds.origin.x, bounds.origin.x + bounds.size.width);
      g_assert_cmpfloat (fabs (bounds.origin.x + bounds.size.width - right), <=, 1.0);
      if (tally_block_get_kind (block) != TALLY_BLOCK_USER)
        g_assert_cmpfloat (fabs (bounds.origin.x - left), <=, 1.0);
      kinds |= 1u << tally_block_get_kind (block);
      checked++;
    }
  /* Thinking, text, a tool call and a receipt at least were compared. */
  g_assert_cmpuint (checked, >=, 5);
  g_assert_true (kinds & (1u << TALLY_BLOCK_THINKING));
  g_assert_true (kinds & (1u << TALLY_BLOCK_TOOL_CALL));
  g_assert_true (kinds & (1u << TALLY_BLOCK_RECEIPT));

  /* Code blocks end at the column's right edge; tables start at its left. */
  blocks = tally_test_find_all (view, TALLY_TYPE_MARKDOWN_CODE_BLOCK);
  g_assert_cmpuint (blocks->len, >, 0);
  for (guint i = 0; i < blocks->len; i++)
    {
      graphene_rect_t bounds;

      if (!gtk_widget_get_mapped (g_ptr_array_index (blocks, i)))
        continue;
      bounds = bounds_in_window (g_ptr_array_index (blocks, i));
      g_assert_cmpfloat (fabs (bounds.origin.x - left), <=, 1.0);
      g_assert_cmpfloat (fabs (bounds.origin.x + bounds.size.width - right), <=, 1.0);
    }
  g_clear_pointer (&blocks, g_ptr_array_unref);
  blocks = tally_test_find_all (view, TALLY_TYPE_MARKDOWN_TABLE_WIDGET);
  g_assert_cmpuint (blocks->len, >, 0);
  for (guint i = 0; i < blocks->len; i++)
    if (gtk_widget_get_mapped (g_ptr_array_index (blocks, i)))
      g_assert_cmpfloat (fabs (bounds_in_window (g_ptr_array_index (blocks, i)).origin.x - left), <=, 1.0);
}

static void
test_column (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Fixture fixture = { 0 };

  add_turn (transcript, 1);
  tally_transcript_add_notice (transcript, "This session was restored from the flight recorder.");
  fixture_show (&fixture, transcript, 1100, 1500);
  assert_one_column (fixture.view, transcript, "wide");

  /* Narrower than the rows' readable width, and back. */
  fixture_resize (&fixture, 620);
  assert_one_column (fixture.view, transcript, "narrow");
  fixture_resize (&fixture, 900);
  assert_one_column (fixture.view, transcript, "medium");

  gtk_window_destroy (fixture.window);
}

/* §3: the wheel over wide content scrolls the conversation */

static void
check_wheel (GtkWidget  *view,
             GtkWidget  *wide,
             const char *what)
{
  GtkWidget *inner = tally_test_find_first (wide, GTK_TYPE_SCROLLED_WINDOW);
  GtkAdjustment *outer = view_vadjustment (view);
  GtkAdjustment *sideways;
  GtkEventController *controller;
  double value, offset;
  gboolean handled = FALSE;

  g_assert_nonnull (inner);
  sideways = gtk_scrolled_window_get_hadjustment (GTK_SCROLLED_WINDOW (inner));
  controller = find_controller (inner, "tally-scroll-forward");
  g_assert_nonnull (controller);

  /* It is wider than its column. */
  g_assert_cmpfloat (gtk_adjustment_get_upper (sideways), >, gtk_adjustment_get_page_size (sideways));

  /* One wheel step up: the conversation moves, the block does not. */
  value = gtk_adjustment_get_value (outer);
  offset = gtk_adjustment_get_value (sideways);
  g_signal_emit_by_name (controller, "scroll", 0.0, -1.0, &handled);
  g_assert_true (handled);
  g_test_message ("%s: a wheel step moved the conversation from %.0f to %.0f", what,
                  value, gtk_adjustment_get_value (outer));
  g_assert_cmpfloat (gtk_adjustment_get_value (outer), <, value - 10.0);
  g_assert_cmpfloat (gtk_adjustment_get_value (sideways), ==, offset);
  g_assert_false (following (view));

  /* A sideways swipe is left to the block. */
  value = gtk_adjustment_get_value (outer);
  handled = TRUE;
  g_signal_emit_by_name (controller, "scroll", 3.0, 0.5, &handled);
  g_assert_false (handled);
  g_assert_cmpfloat (gtk_adjustment_get_value (outer), ==, value);
}

static void
test_wheel (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Fixture fixture = { 0 };
  GtkWidget *code, *table;

  g_assert_true (tally_scroll_forward_is_vertical (0.0, 1.0, 0));
  g_assert_true (tally_scroll_forward_is_vertical (0.5, -2.0, 0));
  g_assert_false (tally_scroll_forward_is_vertical (0.0, 1.0, GDK_SHIFT_MASK));
  g_assert_false (tally_scroll_forward_is_vertical (2.0, 1.0, 0));

  for (guint i = 1; i <= 2; i++)
    add_turn (transcript, i);
  fixture_show (&fixture, transcript, 560, 900);
  wait_at_end (fixture.view);

  code = tally_test_find_first (fixture.view, TALLY_TYPE_MARKDOWN_CODE_BLOCK);
  g_assert_nonnull (code);
  check_wheel (fixture.view, code, "code block");

  tally_transcript_view_scroll_to_end (TALLY_TRANSCRIPT_VIEW (fixture.view), FALSE);
  wait_at_end (fixture.view);
  table = tally_test_find_first (fixture.view, TALLY_TYPE_MARKDOWN_TABLE_WIDGET);
  g_assert_nonnull (table);
  check_wheel (fixture.view, table, "table");

  gtk_window_destroy (fixture.window);
}

/* A query's result: more rows than fit a tool chip's old bounded height,
 * wider than the column. */
static char *
wide_result (guint n_rows)
{
  GString *out = g_string_new ("product | revenue | store with the most orders | note from the manager\n");

  for (guint i = 0; i < n_rows; i++)
    g_string_append_printf (out, "Blend %u | %u.50 | The station kiosk by the north entrance | "
                            "steady all month, no promotion ran in week %u\n", i, 100 + i, i);
  g_string_append_printf (out, "(%u rows)", n_rows);
  return g_string_free (out, FALSE);
}

static void
test_result_wheel (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autofree char *result = wide_result (40);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GPtrArray) chips = NULL;
  TallyToolChip *chip = NULL;
  GtkWidget *table, *inner;
  GtkAdjustment *rows;
  Fixture fixture = { 0 };

  add_turn (transcript, 1);
  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t2\",\"mode\":\"ask\",\"text\":\"Every blend?\"}");
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"turn_id\":\"t2\",\"tool_id\":\"tw\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT * FROM blends\"}}");
  tally_test_apply_event (transcript, "{\"type\":\"approval_resolved\",\"turn_id\":\"t2\",\"tool_id\":\"tw\",\"decision\":\"allow\",\"reason\":\"mode\"}");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "tool_result");
  json_builder_set_member_name (builder, "turn_id");
  json_builder_add_string_value (builder, "t2");
  json_builder_set_member_name (builder, "tool_id");
  json_builder_add_string_value (builder, "tw");
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, result);
  json_builder_set_member_name (builder, "is_error");
  json_builder_add_boolean_value (builder, FALSE);
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  tally_transcript_apply (transcript, json_node_get_object (node));
  tally_test_apply_event (transcript, "{\"type\":\"turn_finished\",\"turn_id\":\"t2\",\"status\":\"done\"}");

  fixture_show (&fixture, transcript, 560, 900);
  wait_at_end (fixture.view);

  /* Open the chips; the wide result's table is the one with 40 rows. */
  chips = tally_test_find_all (fixture.view, TALLY_TYPE_TOOL_CHIP);
  for (guint i = 0; i < chips->len; i++)
    {
      TallyToolChip *candidate = g_ptr_array_index (chips, i);

      gtk_expander_set_expanded (tally_tool_chip_get_expander (candidate), TRUE);
      if (tally_result_table_get_n_rows (tally_tool_chip_get_table (candidate)) == 40)
        chip = candidate;
    }
  g_assert_nonnull (chip);
  tally_transcript_view_scroll_to_end (TALLY_TRANSCRIPT_VIEW (fixture.view), FALSE);
  wait_at_end (fixture.view);

  table = GTK_WIDGET (tally_tool_chip_get_table (chip));
  g_assert_true (gtk_widget_get_mapped (table));

  /* The table has its natural height: nothing in it scrolls up and down. */
  inner = tally_test_find_first (table, GTK_TYPE_SCROLLED_WINDOW);
  rows = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (inner));
  g_test_message ("result table: %.0f px of rows in %.0f px", gtk_adjustment_get_upper (rows),
                  gtk_adjustment_get_page_size (rows));
  g_assert_cmpfloat (gtk_adjustment_get_page_size (rows), >, 40 * 10.0);
  g_assert_cmpfloat (gtk_adjustment_get_upper (rows), <=, gtk_adjustment_get_page_size (rows) + 1.0);

  check_wheel (fixture.view, table, "result table");

  gtk_window_destroy (fixture.window);
}

/* A card that arrives at the end is drawn there */

/* The request to write a new Markdown file of headings only: its card's
 * preview is a markdown view whose lines are taller once laid out than
 * GtkTextView estimates them before. */
static char *
headings_request (void)
{
  g_autoptr(GString) content = g_string_new (NULL);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  for (guint i = 1; i <= 30; i++)
    g_string_append_printf (content, "## Section %u\n", i);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "approval_request");
  json_builder_set_member_name (builder, "turn_id");
  json_builder_add_string_value (builder, "t1");
  json_builder_set_member_name (builder, "approval_id");
  json_builder_add_string_value (builder, "a1");
  json_builder_set_member_name (builder, "tool_id");
  json_builder_add_string_value (builder, "toolu_2");
  json_builder_set_member_name (builder, "tool_name");
  json_builder_add_string_value (builder, "Write");
  json_builder_set_member_name (builder, "tool_input");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "file_path");
  json_builder_add_string_value (builder, "outline.md");
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, content->str);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "suggestions");
  json_builder_begin_array (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* How many different colours the view, drawn as it is now, shows inside
 * @area (the view's coordinates). */
static guint
colours_in (GtkWidget             *view,
            const graphene_rect_t *area)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (view);
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GHashTable) colours = g_hash_table_new (NULL, NULL);
  g_autofree guchar *pixels = NULL;
  int width = gtk_widget_get_width (view);
  int height = gtk_widget_get_height (view);
  int x0 = MAX (0, (int) ceil (area->origin.x));
  int y0 = MAX (0, (int) ceil (area->origin.y));
  int x1 = MIN (width, (int) floor (area->origin.x + area->size.width));
  int y1 = MIN (height, (int) floor (area->origin.y + area->size.height));

  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (view)),
                                         node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  pixels = g_malloc ((gsize) width * height * 4);
  gdk_texture_download (texture, pixels, (gsize) width * 4);

  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        guint32 pixel;

        memcpy (&pixel, pixels + ((gsize) y * width + x) * 4, sizeof pixel);
        g_hash_table_add (colours, GUINT_TO_POINTER (pixel));
      }
  return g_hash_table_size (colours);
}

/* An approval card whose preview is a markdown view taller than the
 * viewport, arriving while the view follows: the view scrolls to the end
 * and the card is drawn there, its buttons at the bottom of the viewport.
 * Scrolling moves the preview's band onto lines the text view had not
 * laid out yet; before the markdown view asked for its new band through
 * its ancestors' allocations (see _tally_markdown_view_queue_band()), the
 * card's list row was left needing an allocation no layout gave it, and
 * the whole transcript stayed blank until a wheel scroll. */
static void
test_card_at_end (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autofree char *workspace = g_dir_make_tmp ("tally-layout-XXXXXX", NULL);
  g_autofree char *request = headings_request ();
  g_autoptr(GPtrArray) buttons = NULL;
  Fixture fixture = { 0 };
  GtkWidget *card, *scroller, *allow = NULL;
  graphene_rect_t viewport, card_bounds, allow_bounds, shown;

  g_assert_nonnull (workspace);
  fixture_show (&fixture, transcript, 730, 620);
  tally_transcript_view_set_workspace (TALLY_TRANSCRIPT_VIEW (fixture.view), workspace);
  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"Write the outline\"}");
  tally_test_wait_frames (fixture.view, 2);
  tally_test_apply_event (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"Writing.\"}");
  tally_test_apply_event (transcript, "{\"type\":\"block_done\",\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"kind\":\"text\"}");
  tally_test_apply_event (transcript, request);
  wait_at_end (fixture.view);
  tally_test_wait_frames (fixture.view, 4);
  g_assert_true (following (fixture.view));

  card = tally_test_find_first (fixture.view, TALLY_TYPE_APPROVAL_CARD);
  g_assert_nonnull (card);
  g_assert_nonnull (tally_test_find_first (card, TALLY_TYPE_MARKDOWN_VIEW));
  buttons = tally_test_find_all (card, GTK_TYPE_BUTTON);
  for (guint i = 0; i < buttons->len && allow == NULL; i++)
    if (g_strcmp0 (gtk_button_get_label (g_ptr_array_index (buttons, i)), "Allow Once") == 0)
      allow = g_ptr_array_index (buttons, i);
  g_assert_nonnull (allow);

  /* The card is taller than the viewport and the view is at its end: the
   * card covers the viewport and its buttons are inside it. */
  scroller = tally_test_find_first (fixture.view, GTK_TYPE_SCROLLED_WINDOW);
  g_assert_true (gtk_widget_compute_bounds (scroller, fixture.view, &viewport));
  g_assert_true (gtk_widget_compute_bounds (card, fixture.view, &card_bounds));
  g_assert_true (gtk_widget_compute_bounds (allow, fixture.view, &allow_bounds));
  g_test_message ("viewport %.0f..%.0f, card %.0f..%.0f, Allow Once %.0f..%.0f",
                  viewport.origin.y, viewport.origin.y + viewport.size.height,
                  card_bounds.origin.y, card_bounds.origin.y + card_bounds.size.height,
                  allow_bounds.origin.y, allow_bounds.origin.y + allow_bounds.size.height);
  g_assert_cmpfloat (card_bounds.size.height, >, viewport.size.height);
  g_assert_cmpfloat (card_bounds.origin.y, <, viewport.origin.y);
  g_assert_cmpfloat (allow_bounds.origin.y, >=, viewport.origin.y);
  g_assert_cmpfloat (allow_bounds.origin.y + allow_bounds.size.height, <=,
                     viewport.origin.y + viewport.size.height);

  /* And it is drawn there: the part of the card on screen shows its
   * headings and the button's label and frame, not one blank colour. */
  g_assert_true (graphene_rect_intersection (&card_bounds, &viewport, &shown));
  g_assert_cmpuint (colours_in (fixture.view, &shown), >=, 8);
  g_assert_cmpuint (colours_in (fixture.view, &allow_bounds), >=, 4);

  gtk_window_destroy (fixture.window);
  g_rmdir (workspace);
}

/* Screenshots, light and dark, for looking at */

static void
test_screenshots (void)
{
  static const char *const schemes[] = { "light", "dark" };

  for (guint s = 0; s < G_N_ELEMENTS (schemes); s++)
    {
      g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
      g_autofree char *name = g_strdup_printf ("transcript-layout-%s.png", schemes[s]);
      g_autofree char *narrow = g_strdup_printf ("transcript-layout-narrow-%s.png", schemes[s]);
      Fixture fixture = { 0 };

      adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                          s == 0 ? ADW_COLOR_SCHEME_FORCE_LIGHT : ADW_COLOR_SCHEME_FORCE_DARK);
      add_turn (transcript, 1);
      fixture_show (&fixture, transcript, 900, 1000);
      wait_at_end (fixture.view);
      tally_test_save_png (fixture.view, name);
      fixture_resize (&fixture, 480);
      wait_at_end (fixture.view);
      tally_test_save_png (fixture.view, narrow);
      gtk_window_destroy (fixture.window);
    }
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

int
main (int    argc,
      char **argv)
{
  tally_test_init_ui (&argc, &argv);

  g_test_add_func ("/tally/transcript-layout/heights", test_heights);
  g_test_add_func ("/tally/transcript-layout/hold", test_hold);
  g_test_add_func ("/tally/transcript-layout/question-chips", test_question_chips);
  g_test_add_func ("/tally/transcript-layout/column", test_column);
  g_test_add_func ("/tally/transcript-layout/wheel", test_wheel);
  g_test_add_func ("/tally/transcript-layout/result-wheel", test_result_wheel);
  g_test_add_func ("/tally/transcript-layout/card-at-end", test_card_at_end);
  g_test_add_func ("/tally/transcript-layout/screenshots", test_screenshots);

  return g_test_run ();
}
