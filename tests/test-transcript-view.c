/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The transcript view under Xvfb: events applied to a real TallyTranscript
 * make the right row widgets (found by walking the widget tree), rows
 * follow their blocks live, Retry is reported, and the view follows new
 * output until the user scrolls up. */

#include "config.h"

#include <adwaita.h>
#include <gtksourceview/gtksource.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "tally-approval-card.h"
#include "tally-assistant-text.h"
#include "tally-block-row.h"
#include "tally-chart-row.h"
#include "tally-chart.h"
#include "tally-composer.h"
#include "tally-csv-dialog.h"
#include "tally-error-banner.h"
#include "tally-file-chip.h"
#include "tally-note-row.h"
#include "tally-receipt-row.h"
#include "tally-result-table.h"
#include "tally-sql-format.h"
#include "tally-test-ui.h"
#include "tally-thinking-drawer.h"
#include "tally-markdown-view.h"
#include "tally-tool-chip.h"
#include "tally-transcript-view.h"
#include "tally-transcript.h"
#include "tally-ui.h"
#include "tally-user-bubble.h"

#define WAIT_TIMEOUT_MS (20 * 1000)

/* Events */


static void G_GNUC_PRINTF (2, 3)
applyf (TallyTranscript *transcript,
        const char      *format,
        ...)
{
  g_autofree char *json = NULL;
  va_list args;

  va_start (args, format);
  json = g_strdup_vprintf (format, args);
  va_end (args);

  tally_test_apply_event (transcript, json);
}

static TallyBlock *
block_at (TallyTranscript *transcript,
          guint            position)
{
  TallyBlock *block = g_list_model_get_item (G_LIST_MODEL (transcript), position);

  g_assert_nonnull (block);
  g_object_unref (block);   /* the transcript keeps it */
  return block;
}

static TallyBlock *
last_block (TallyTranscript *transcript)
{
  return block_at (transcript, g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 1);
}

/* A turn with text long enough to take several lines. */
static void
add_turn (TallyTranscript *transcript,
          guint            n)
{
  applyf (transcript,
          "{\"type\":\"turn_started\",\"turn_id\":\"t%u\",\"mode\":\"ask\",\"text\":\"Question number %u\"}",
          n, n);
  applyf (transcript,
          "{\"type\":\"text_delta\",\"turn_id\":\"t%u\",\"call\":0,\"block\":0,"
          "\"text\":\"Answer %u. The stores sold more coffee in March than in February, "
          "and the espresso bar led every week. Revenue rose by a tenth.\"}",
          n, n);
  applyf (transcript,
          "{\"type\":\"block_done\",\"turn_id\":\"t%u\",\"call\":0,\"block\":0,\"kind\":\"text\"}", n);
}

/* Main loop helpers */

static void
iterate_pending (void)
{
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

typedef gboolean (*Condition) (gpointer data);

static gboolean
timed_out_cb (gpointer user_data)
{
  gboolean *timed_out = user_data;

  *timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until @condition holds; a guard fails the test if it
 * never does. */
static void
wait_for (Condition   condition,
          gpointer    data,
          const char *what)
{
  gboolean timed_out = FALSE;
  guint guard = g_timeout_add (WAIT_TIMEOUT_MS, timed_out_cb, &timed_out);

  while (!condition (data))
    {
      if (timed_out)
        g_error ("timed out waiting for %s", what);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (guard);
}

static gboolean
frame_tick_cb (GtkWidget     *widget,
               GdkFrameClock *clock,
               gpointer       user_data)
{
  guint *frames = user_data;

  (*frames)++;
  return G_SOURCE_CONTINUE;
}

static gboolean
frames_reached (gpointer data)
{
  guint *counts = data;

  return counts[0] >= counts[1];
}

static void
wait_frames (GtkWidget *widget,
             guint      n)
{
  guint counts[2] = { 0, n };
  guint id = gtk_widget_add_tick_callback (widget, frame_tick_cb, &counts[0], NULL);

  wait_for (frames_reached, counts, "frames");
  gtk_widget_remove_tick_callback (widget, id);
}

static GtkWindow *
show_in_window (GtkWidget *child,
                int        width,
                int        height)
{
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());

  gtk_window_set_default_size (window, width, height);
  gtk_window_set_child (window, child);
  gtk_window_present (window);
  wait_frames (child, 3);

  return window;
}

/* Widget tree helpers */





static GtkWidget *
find_by_accessible_label (GtkWidget  *root,
                          GType       type,
                          const char *label)
{
  g_autoptr(GPtrArray) found = tally_test_find_all (root, type);

  for (guint i = 0; i < found->len; i++)
    if (tally_test_has_accessible_label (g_ptr_array_index (found, i), label))
      return g_ptr_array_index (found, i);
  return NULL;
}

/* The child widget showing @block, or NULL when no row shows it. */
static GtkWidget *
row_child_for (GtkWidget  *root,
               TallyBlock *block)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (root, TALLY_TYPE_BLOCK_ROW);

  for (guint i = 0; i < rows->len; i++)
    {
      TallyBlockRow *row = g_ptr_array_index (rows, i);

      if (tally_block_row_get_block (row) == block)
        return tally_block_row_get_child (row);
    }
  return NULL;
}

typedef struct {
  GtkWidget  *root;
  TallyBlock *block;
} RowWait;

static gboolean
row_exists (gpointer data)
{
  RowWait *wait = data;

  return row_child_for (wait->root, wait->block) != NULL;
}

static GtkWidget *
wait_for_row (GtkWidget  *root,
              TallyBlock *block)
{
  RowWait wait = { root, block };

  wait_for (row_exists, &wait, "a row for the block");
  return row_child_for (root, block);
}

static GtkAdjustment *
view_vadjustment (GtkWidget *view)
{
  GtkWidget *scroller = tally_test_find_first (view, GTK_TYPE_SCROLLED_WINDOW);

  g_assert_nonnull (scroller);
  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
}

static GtkWidget *
jump_button (GtkWidget *view)
{
  GtkWidget *button = find_by_accessible_label (view, GTK_TYPE_BUTTON, "Jump to latest");

  g_assert_nonnull (button);
  return button;
}

static double
distance_from_end (GtkAdjustment *adjustment)
{
  return gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment) -
         gtk_adjustment_get_value (adjustment);
}

typedef struct {
  GtkWidget     *view;
  GtkAdjustment *adjustment;
  guint          settled_frames;
  guint          frames;
} EndWait;

static gboolean
end_tick_cb (GtkWidget     *widget,
             GdkFrameClock *clock,
             gpointer       user_data)
{
  EndWait *wait = user_data;

  wait->frames++;
  if (fabs (distance_from_end (wait->adjustment)) < 0.5)
    wait->settled_frames++;
  else
    wait->settled_frames = 0;
  return G_SOURCE_CONTINUE;
}

static gboolean
settled_at_end (gpointer data)
{
  EndWait *wait = data;

  return wait->settled_frames >= 4;
}

/* Waits until the view has sat at the very end for a few frames. */
static void
wait_settled_at_end (GtkWidget *view)
{
  EndWait wait = { view, view_vadjustment (view), 0, 0 };
  guint id = gtk_widget_add_tick_callback (view, end_tick_cb, &wait, NULL);

  wait_for (settled_at_end, &wait, "the view to settle at the end");
  gtk_widget_remove_tick_callback (view, id);
  g_assert_cmpfloat_with_epsilon (gtk_adjustment_get_value (wait.adjustment),
                                  gtk_adjustment_get_upper (wait.adjustment) -
                                  gtk_adjustment_get_page_size (wait.adjustment),
                                  0.5);
}

/* Rows */

static gboolean
drawer_says_thought (gpointer data)
{
  return g_str_has_prefix (tally_thinking_drawer_get_title (data), "Thought for");
}

static void
test_rows (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  GtkWindow *window;
  TallyBlock *user, *thinking, *text, *tool, *receipt;
  GtkWidget *child;
  GtkWidget *list;
  TallyThinkingDrawer *drawer;
  TallyToolChip *chip;
  TallyResultTable *table;
  g_autofree char *mismatch = NULL;

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 720, 1400);

  list = tally_test_find_first (view, GTK_TYPE_LIST_VIEW);
  g_assert_nonnull (list);
  g_assert_true (tally_test_has_accessible_label (list, "Transcript"));
  g_assert_cmpstr (gtk_widget_get_css_name (view), ==, "tallytranscriptview");

  tally_test_apply_event (transcript, "{\"type\":\"session_created\",\"seq\":1,\"title\":\"Revenue\"}");
  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"seq\":2,\"turn_id\":\"t1\",\"mode\":\"plan\","
                     "\"text\":\"Which product sold best in March?\"}");
  user = last_block (transcript);
  child = wait_for_row (view, user);
  g_assert_true (TALLY_IS_USER_BUBBLE (child));
  g_assert_cmpstr (tally_user_bubble_get_text (TALLY_USER_BUBBLE (child)), ==,
                   "Which product sold best in March?");

  /* Thinking streams: "Thinking…" until block_done, then the word count. */
  tally_test_apply_event (transcript, "{\"type\":\"thinking_delta\",\"seq\":3,\"turn_id\":\"t1\",\"call\":0,\"block\":0,"
                     "\"text\":\"Group the sales \"}");
  thinking = last_block (transcript);
  child = wait_for_row (view, thinking);
  g_assert_true (TALLY_IS_THINKING_DRAWER (child));
  drawer = TALLY_THINKING_DRAWER (child);
  g_assert_cmpstr (tally_thinking_drawer_get_title (drawer), ==, "Thinking…");
  g_assert_false (gtk_expander_get_expanded (tally_thinking_drawer_get_expander (drawer)));
  g_assert_true (tally_test_has_accessible_label (GTK_WIDGET (tally_thinking_drawer_get_expander (drawer)), "Thinking…"));

  tally_test_apply_event (transcript, "{\"type\":\"thinking_delta\",\"seq\":4,\"turn_id\":\"t1\",\"call\":0,\"block\":0,"
                     "\"text\":\"by product for March.\"}");
  g_assert_cmpstr (tally_thinking_drawer_get_title (drawer), ==, "Thinking…");
  tally_test_apply_event (transcript, "{\"type\":\"block_done\",\"seq\":5,\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}");
  wait_for (drawer_says_thought, drawer, "the drawer title");
  g_assert_cmpstr (tally_thinking_drawer_get_title (drawer), ==, "Thought for 7 words");
  g_assert_true (tally_test_has_accessible_label (GTK_WIDGET (tally_thinking_drawer_get_expander (drawer)),
                                      "Thought for 7 words"));
  gtk_expander_set_expanded (tally_thinking_drawer_get_expander (drawer), TRUE);
  g_assert_cmpstr (tally_thinking_drawer_get_text (drawer), ==,
                   "Group the sales by product for March.");

  /* Assistant text goes to a markdown view and grows live. */
  tally_test_apply_event (transcript, "{\"type\":\"text_delta\",\"seq\":6,\"turn_id\":\"t1\",\"call\":0,\"block\":1,"
                     "\"text\":\"Let me **query** \"}");
  text = last_block (transcript);
  child = wait_for_row (view, text);
  g_assert_true (TALLY_IS_ASSISTANT_TEXT (child));
  tally_test_apply_event (transcript, "{\"type\":\"text_delta\",\"seq\":7,\"turn_id\":\"t1\",\"call\":0,\"block\":1,"
                     "\"text\":\"the sales.\"}");
  tally_test_apply_event (transcript, "{\"type\":\"block_done\",\"seq\":8,\"turn_id\":\"t1\",\"call\":0,\"block\":1,\"kind\":\"text\"}");
  iterate_pending ();
  wait_frames (view, 2);
  {
    GtkWidget *markdown = tally_assistant_text_get_view (TALLY_ASSISTANT_TEXT (child));

    g_assert_true (TALLY_IS_MARKDOWN_VIEW (markdown));
    g_assert_cmpstr (tally_markdown_view_get_markdown (TALLY_MARKDOWN_VIEW (markdown)), ==,
                     "Let me **query** the sales.");
  }

  /* A query_database call: name, SQL summary, state, then a table. */
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"seq\":9,\"turn_id\":\"t1\",\"tool_id\":\"tu1\","
                     "\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT product, SUM(total) AS revenue\\n"
                     "  FROM sales\\n  GROUP BY product\"}}");
  tool = last_block (transcript);
  child = wait_for_row (view, tool);
  g_assert_true (TALLY_IS_TOOL_CHIP (child));
  chip = TALLY_TOOL_CHIP (child);
  g_assert_cmpstr (tally_tool_chip_get_name (chip), ==, "query_database");
  g_assert_cmpstr (tally_tool_chip_get_summary (chip), ==,
                   "SELECT product, SUM(total) AS revenue FROM sales GROUP BY product");
  g_assert_cmpstr (tally_tool_chip_get_state (chip), ==, "pending");
  g_assert_false (gtk_expander_get_expanded (tally_tool_chip_get_expander (chip)));

  tally_test_apply_event (transcript, "{\"type\":\"approval_resolved\",\"seq\":10,\"turn_id\":\"t1\",\"tool_id\":\"tu1\","
                     "\"decision\":\"allow\",\"reason\":\"mode\"}");
  g_assert_cmpstr (tally_tool_chip_get_state (chip), ==, "running");
  g_assert_nonnull (tally_test_find_first (child, GTK_TYPE_SPINNER));
  g_assert_true (gtk_spinner_get_spinning (GTK_SPINNER (tally_test_find_first (child, GTK_TYPE_SPINNER))));

  tally_test_apply_event (transcript, "{\"type\":\"tool_result\",\"seq\":11,\"turn_id\":\"t1\",\"tool_id\":\"tu1\","
                     "\"content\":\"product | revenue\\nEspresso | 1234.5\\nLatte | 987\\nMocha | NULL\\n(3 rows)\","
                     "\"is_error\":false,\"duration_ms\":12}");
  g_assert_cmpstr (tally_tool_chip_get_state (chip), ==, "done");
  g_assert_false (gtk_spinner_get_spinning (GTK_SPINNER (tally_test_find_first (child, GTK_TYPE_SPINNER))));
  g_assert_true (tally_test_has_accessible_label (GTK_WIDGET (tally_tool_chip_get_expander (chip)),
                                      "query_database: SELECT product, SUM(total) AS revenue FROM sales GROUP BY product, Done"));

  gtk_expander_set_expanded (tally_tool_chip_get_expander (chip), TRUE);
  g_assert_cmpstr (tally_tool_chip_get_input_text (chip), ==,
                   "SELECT product, SUM(total) AS revenue\n  FROM sales\n  GROUP BY product");
  table = tally_tool_chip_get_table (chip);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (table)));
  g_assert_cmpuint (tally_result_table_get_n_columns (table), ==, 2);
  g_assert_cmpuint (tally_result_table_get_n_rows (table), ==, 3);
  g_assert_cmpstr (tally_result_table_get_footer (table), ==, "3 rows");
  g_assert_cmpuint (g_list_model_get_n_items (gtk_column_view_get_columns (tally_result_table_get_column_view (table))), ==, 2);
  g_assert_cmpstr (tally_result_table_get_column_title (table, 0), ==, "product");
  g_assert_cmpstr (tally_result_table_get_column_title (table, 1), ==, "revenue");
  g_assert_cmpstr (tally_result_table_get_shown_text (table, 0, 0), ==, "Espresso");
  g_assert_cmpstr (tally_result_table_get_shown_text (table, 0, 1), ==, "1,234.5");
  /* 987 is padded by a punctuation and a figure space to line up. */
  g_assert_cmpstr (tally_result_table_get_shown_text (table, 1, 1), ==, "987\u2008\u2007");
  g_assert_cmpstr (tally_result_table_get_shown_text (table, 2, 0), ==, "Mocha");
  g_assert_cmpstr (tally_result_table_get_shown_text (table, 2, 1), ==, "NULL");
  g_assert_null (tally_result_table_get_shown_text (table, 3, 0));
  g_assert_true (tally_result_table_get_column_is_numeric (table, 1));
  g_assert_false (tally_result_table_get_column_is_numeric (table, 0));

  /* A failing tool shows its error text in the error style. */
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"seq\":12,\"turn_id\":\"t1\",\"tool_id\":\"tu2\","
                     "\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"reports/march.csv\"}}");
  tally_test_apply_event (transcript, "{\"type\":\"approval_resolved\",\"seq\":13,\"turn_id\":\"t1\",\"tool_id\":\"tu2\","
                     "\"decision\":\"allow\",\"reason\":\"mode\"}");
  tally_test_apply_event (transcript, "{\"type\":\"tool_result\",\"seq\":14,\"turn_id\":\"t1\",\"tool_id\":\"tu2\","
                     "\"content\":\"No such file: reports/march.csv\",\"is_error\":true,\"duration_ms\":1}");
  child = wait_for_row (view, last_block (transcript));
  chip = TALLY_TOOL_CHIP (child);
  g_assert_cmpstr (tally_tool_chip_get_summary (chip), ==, "reports/march.csv");
  g_assert_cmpstr (tally_tool_chip_get_state (chip), ==, "error");
  gtk_expander_set_expanded (tally_tool_chip_get_expander (chip), TRUE);
  g_assert_cmpstr (tally_tool_chip_get_result_text (chip), ==, "No such file: reports/march.csv");
  g_assert_cmpstr (tally_tool_chip_get_input_text (chip), ==, "{\n  \"file_path\" : \"reports/march.csv\"\n}");
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (tally_tool_chip_get_table (chip))));
  {
    g_autoptr(GPtrArray) labels = tally_test_find_all (child, GTK_TYPE_LABEL);
    gboolean error_styled = FALSE;

    for (guint i = 0; i < labels->len; i++)
      if (g_strcmp0 (gtk_label_get_text (g_ptr_array_index (labels, i)), "No such file: reports/march.csv") == 0)
        error_styled = gtk_widget_has_css_class (g_ptr_array_index (labels, i), "error");
    g_assert_true (error_styled);
  }

  /* The receipt, and the list's description announcing it. */
  tally_test_apply_event (transcript, "{\"type\":\"turn_finished\",\"seq\":15,\"turn_id\":\"t1\",\"status\":\"done\","
                     "\"cost_usd\":0.0123,\"duration_ms\":3400,\"api_calls\":2,"
                     "\"usage\":{\"input_tokens\":1200,\"output_tokens\":340,"
                     "\"cache_creation_input_tokens\":120,\"cache_read_input_tokens\":800}}");
  receipt = last_block (transcript);
  child = wait_for_row (view, receipt);
  g_assert_true (TALLY_IS_RECEIPT_ROW (child));
  g_assert_nonnull (strstr (tally_receipt_row_get_text (TALLY_RECEIPT_ROW (child)), "$0.0123"));
  g_assert_cmpstr (tally_receipt_row_get_text (TALLY_RECEIPT_ROW (child)), ==,
                   "Done · $0.0123 · 1,200 in · 340 out · cache 800 read, 120 written · 2 API calls · 3.4 s");
  g_assert_true (tally_test_has_accessible_label (child,
                                      "Reply finished: Done · $0.0123 · 1,200 in · 340 out · "
                                      "cache 800 read, 120 written · 2 API calls · 3.4 s"));
  mismatch = gtk_test_accessible_check_property (GTK_ACCESSIBLE (list), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                                 "Reply finished: Done · $0.0123 · 1,200 in · 340 out · "
                                                 "cache 800 read, 120 written · 2 API calls · 3.4 s");
  g_assert_null (mismatch);

  /* Its icon, then the line wrapping in the rest of the width, 6 px
   * apart: the row is as tall as the taller of the icon and the line for
   * that width (measured without a box layout, docs/architecture.md
   * §11.1). */
  {
    GtkWidget *icon = gtk_widget_get_first_child (child);
    GtkWidget *line = gtk_widget_get_last_child (child);
    int icon_width, icon_height, narrow, wide, line_narrow, line_wide;

    g_assert_true (GTK_IS_IMAGE (icon));
    g_assert_true (GTK_IS_LABEL (line));
    gtk_widget_measure (icon, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &icon_width, NULL, NULL);
    gtk_widget_measure (icon, GTK_ORIENTATION_VERTICAL, -1, &icon_height, NULL, NULL, NULL);
    gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, 160, &narrow, NULL, NULL, NULL);
    gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, 1000, &wide, NULL, NULL, NULL);
    gtk_widget_measure (line, GTK_ORIENTATION_VERTICAL, 160 - icon_width - 6, &line_narrow, NULL, NULL, NULL);
    gtk_widget_measure (line, GTK_ORIENTATION_VERTICAL, 1000 - icon_width - 6, &line_wide, NULL, NULL, NULL);
    g_assert_cmpint (narrow, ==, MAX (icon_height, line_narrow));
    g_assert_cmpint (wide, ==, MAX (icon_height, line_wide));
    g_assert_cmpint (narrow, >, wide);
    tally_test_wait_frames (view, 1);
    g_assert_cmpint (gtk_widget_get_width (line), ==, gtk_widget_get_width (child) - icon_width - 6);
    {
      graphene_point_t origin;

      g_assert_true (gtk_widget_compute_point (line, child, &GRAPHENE_POINT_INIT (0, 0), &origin));
      g_assert_cmpfloat (origin.x, ==, icon_width + 6);
    }
  }

  /* A notice row and an approval card. */
  tally_transcript_add_notice (transcript, "Part of this session could not be read.");
  child = wait_for_row (view, last_block (transcript));
  g_assert_true (TALLY_IS_NOTE_ROW (child));
  g_assert_true (gtk_widget_has_css_class (child, "notice"));
  g_assert_cmpstr (tally_note_row_get_text (TALLY_NOTE_ROW (child)), ==, "Part of this session could not be read.");

  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"seq\":16,\"turn_id\":\"t2\",\"mode\":\"ask\",\"text\":\"Delete it\"}");
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"seq\":17,\"turn_id\":\"t2\",\"tool_id\":\"tu3\","
                     "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm report.csv\"}}");
  tally_test_apply_event (transcript, "{\"type\":\"approval_request\",\"seq\":18,\"turn_id\":\"t2\",\"approval_id\":\"a1\","
                     "\"tool_id\":\"tu3\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm report.csv\"},"
                     "\"suggestions\":[]}");
  child = wait_for_row (view, last_block (transcript));
  g_assert_true (TALLY_IS_APPROVAL_CARD (child));
  g_assert_true (tally_test_has_accessible_label (child, "Approval for Bash, waiting for your decision"));
  tally_test_apply_event (transcript, "{\"type\":\"approval_resolved\",\"seq\":19,\"turn_id\":\"t2\",\"approval_id\":\"a1\","
                     "\"tool_id\":\"tu3\",\"decision\":\"deny\",\"reason\":\"user\"}");
  g_assert_true (tally_test_has_accessible_label (child, "Approval for Bash: Denied"));
  chip = TALLY_TOOL_CHIP (wait_for_row (view, block_at (transcript, g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 2)));
  g_assert_cmpstr (tally_tool_chip_get_state (chip), ==, "denied");
  g_assert_cmpstr (tally_tool_chip_get_summary (chip), ==, "rm report.csv");

  /* A reply cut by an error: the incomplete marker, then the banner; the
   * cut thinking no longer says "Thinking…". */
  tally_test_apply_event (transcript, "{\"type\":\"thinking_delta\",\"seq\":20,\"turn_id\":\"t2\",\"call\":1,\"block\":0,\"text\":\"No.\"}");
  drawer = TALLY_THINKING_DRAWER (wait_for_row (view, last_block (transcript)));
  g_assert_cmpstr (tally_thinking_drawer_get_title (drawer), ==, "Thinking…");
  tally_test_apply_event (transcript, "{\"type\":\"text_delta\",\"seq\":20,\"turn_id\":\"t2\",\"call\":1,\"block\":1,\"text\":\"I will not\"}");
  tally_test_apply_event (transcript, "{\"type\":\"error\",\"seq\":21,\"turn_id\":\"t2\",\"kind\":\"network\","
                     "\"message\":\"The connection was lost\",\"retryable\":true,\"request_id\":\"req_01\"}");
  child = wait_for_row (view, block_at (transcript, g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 2));
  g_assert_true (TALLY_IS_NOTE_ROW (child));
  g_assert_true (gtk_widget_has_css_class (child, "incomplete"));
  g_assert_cmpstr (tally_note_row_get_text (TALLY_NOTE_ROW (child)), ==,
                   "Reply interrupted before it finished");
  child = wait_for_row (view, block_at (transcript, g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 3));
  g_assert_true (TALLY_IS_ASSISTANT_TEXT (child));
  g_assert_true (gtk_widget_has_css_class (child, "incomplete"));
  g_assert_cmpstr (tally_thinking_drawer_get_title (drawer), ==, "Thought for 1 word");

  child = wait_for_row (view, last_block (transcript));
  g_assert_true (TALLY_IS_ERROR_BANNER (child));
  /* No answer had come in this call ("connected" is absent): the
   * server's words go to the details. */
  g_assert_cmpstr (tally_error_banner_get_message (TALLY_ERROR_BANNER (child)), ==, "Could not reach the server");
  g_assert_cmpstr (tally_error_banner_get_meta (TALLY_ERROR_BANNER (child)), ==, "Check your connection, then retry.");
  g_assert_cmpstr (tally_error_banner_get_details (TALLY_ERROR_BANNER (child)), ==,
                   "The connection was lost\nRequest ID req_01");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (TALLY_ERROR_BANNER (child)))));

  /* Its texts sit in a bin that answers a width for a height with their
   * width for any height (so the banner's box does not have the wrapping
   * labels search widths) and centres them, not valign */
  {
    GtkWidget *message = tally_test_find_first (child, GTK_TYPE_LABEL);
    GtkWidget *bin = gtk_widget_get_parent (gtk_widget_get_parent (message));

    g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (message)), ==, "Could not reach the server");
    g_assert_true (gtk_widget_get_hexpand (bin));
    tally_test_assert_centring_bin (bin);
  }

  gtk_window_destroy (window);
}

/* Retry */

/* The window installs session.retry (docs/architecture.md §3.2); a view
 * shown alone gets it from an action group named "session". @out gets
 * the turn id of the banner whose Retry was pressed. */
static void
retry_activated_cb (GSimpleAction  *action,
                    GVariant       *parameter,
                    char          **out)
{
  g_free (*out);
  *out = g_variant_dup_string (parameter, NULL);
}

static void
install_retry_action (GtkWidget  *view,
                      char      **out)
{
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();
  g_autoptr(GSimpleAction) action = g_simple_action_new ("retry", G_VARIANT_TYPE_STRING);

  g_signal_connect (action, "activate", G_CALLBACK (retry_activated_cb), out);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (action));
  gtk_widget_insert_action_group (view, "session", G_ACTION_GROUP (group));
}

static gboolean
pointer_set (gpointer data)
{
  return *(gpointer *) data != NULL;
}

static void
test_retry (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  g_autofree char *retried = NULL;
  TallyBlock *fatal, *retryable;
  GtkWidget *banner;
  GtkWidget *button;
  GtkWindow *window;

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  install_retry_action (view, &retried);
  window = show_in_window (view, 600, 600);

  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"Hi\"}");
  tally_test_apply_event (transcript, "{\"type\":\"error\",\"turn_id\":\"t1\",\"kind\":\"http\",\"message\":\"Invalid API key\","
                     "\"retryable\":false,\"request_id\":\"req_9\"}");
  fatal = last_block (transcript);
  tally_test_apply_event (transcript, "{\"type\":\"turn_finished\",\"turn_id\":\"t1\",\"status\":\"failed\",\"cost_usd\":null,"
                     "\"duration_ms\":80,\"api_calls\":0,\"usage\":{}}");
  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t2\",\"mode\":\"ask\",\"text\":\"Again\"}");
  tally_test_apply_event (transcript, "{\"type\":\"error\",\"turn_id\":\"t2\",\"kind\":\"stalled\",\"message\":\"No data for 90 s\","
                     "\"retryable\":true,\"request_id\":\"\"}");
  retryable = last_block (transcript);

  /* Not retryable: no button. */
  banner = wait_for_row (view, fatal);
  g_assert_true (TALLY_IS_ERROR_BANNER (banner));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (TALLY_ERROR_BANNER (banner)))));
  g_assert_cmpstr (tally_error_banner_get_message (TALLY_ERROR_BANNER (banner)), ==, "The server turned the request down");
  g_assert_cmpstr (tally_error_banner_get_details (TALLY_ERROR_BANNER (banner)), ==, "Invalid API key\nRequest ID req_9");

  /* The price-unknown receipt of a failed turn. */
  g_assert_cmpstr (tally_receipt_row_get_text (TALLY_RECEIPT_ROW (wait_for_row (view, block_at (transcript, 2)))), ==,
                   "Failed · price unknown · 0 in · 0 out · 0 API calls · 0.1 s");

  banner = wait_for_row (view, retryable);
  g_assert_cmpstr (tally_error_banner_get_message (TALLY_ERROR_BANNER (banner)), ==, "The reply stalled");
  button = find_by_accessible_label (banner, GTK_TYPE_BUTTON, "Retry");
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_get_visible (button));
  g_assert_true (button == GTK_WIDGET (tally_error_banner_get_retry_button (TALLY_ERROR_BANNER (banner))));

  /* Keyboard activation shows the press, then clicks. */
  g_assert_true (gtk_widget_activate (button));
  wait_for (pointer_set, &retried, "session.retry");
  g_assert_cmpstr (retried, ==, tally_block_get_turn_id (retryable));

  gtk_window_destroy (window);
}

/* Following the output */

/* Samples the adjustment after every frame drawn: what the user saw. */
typedef struct {
  GtkAdjustment *adjustment;
  guint          off_end;     /* frames drawn away from the end */
  guint          frames;
} PaintWatch;

static void
after_paint_cb (GdkFrameClock *clock,
                PaintWatch    *watch)
{
  GtkAdjustment *adjustment = watch->adjustment;

  watch->frames++;
  if (distance_from_end (adjustment) > 0.5 &&
      gtk_adjustment_get_upper (adjustment) > gtk_adjustment_get_page_size (adjustment))
    watch->off_end++;
}

static gboolean
is_following (gpointer data)
{
  return tally_transcript_view_get_following (data);
}

static void
test_follow (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  GtkAdjustment *adjustment;
  GtkWindow *window;
  GtkWidget *button;
  double value = 0.0;

  for (guint i = 0; i < 40; i++)
    add_turn (transcript, i);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 480, 360);
  adjustment = view_vadjustment (view);
  button = jump_button (view);

  wait_settled_at_end (view);
  g_assert_true (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_false (gtk_widget_get_visible (button));
  g_assert_cmpfloat (gtk_adjustment_get_upper (adjustment), >, 3 * gtk_adjustment_get_page_size (adjustment));

  /* Growth of the last row and new rows: still at the end. */
  applyf (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"live\",\"mode\":\"ask\",\"text\":\"And April?\"}");
  for (guint i = 0; i < 12; i++)
    {
      applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"live\",\"call\":0,\"block\":0,"
                          "\"text\":\"April looked much like March for the espresso bar, line %u. \\n\\n\"}", i);
      wait_frames (view, 1);
    }
  wait_settled_at_end (view);
  g_assert_true (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_false (gtk_widget_get_visible (button));

  /* Scrolling up in the middle of a stream stops following too: new
   * text keeps arriving every frame, yet the view stays where the user
   * put it. */
  for (guint i = 0; i < 8; i++)
    {
      applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"live\",\"call\":0,\"block\":0,"
                          "\"text\":\"Streaming on, line %u.\\n\\n\"}", i);
      if (i == 3)
        {
          gtk_adjustment_set_value (adjustment, gtk_adjustment_get_value (adjustment) - 300);
          g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
          value = gtk_adjustment_get_value (adjustment);
        }
      wait_frames (view, 1);
    }
  wait_frames (view, 3);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_true (gtk_widget_get_visible (button));
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (adjustment) - value), <, 1.0);
  g_assert_cmpfloat (distance_from_end (adjustment), >, 300);

  /* Back to the end without animation (as on opening a session). */
  tally_transcript_view_scroll_to_end (TALLY_TRANSCRIPT_VIEW (view), FALSE);
  g_assert_true (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  wait_settled_at_end (view);

  /* The user scrolls up: following stops and the button shows. */
  value = gtk_adjustment_get_value (adjustment) - 400;
  gtk_adjustment_set_value (adjustment, value);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_true (gtk_widget_get_visible (button));
  wait_frames (view, 3);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));

  /* New output no longer moves the view. */
  value = gtk_adjustment_get_value (adjustment);
  for (guint i = 0; i < 6; i++)
    {
      applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"live\",\"call\":0,\"block\":0,"
                          "\"text\":\"More text while the user reads, part %u.\\n\\n\"}", i);
      wait_frames (view, 1);
    }
  applyf (transcript, "{\"type\":\"block_done\",\"turn_id\":\"live\",\"call\":0,\"block\":0,\"kind\":\"text\"}");
  applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"live\",\"call\":1,\"block\":0,"
                      "\"text\":\"A second reply block arrives as well.\"}");
  wait_frames (view, 4);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_true (gtk_widget_get_visible (button));
  g_assert_cmpfloat (distance_from_end (adjustment), >, 300);
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (adjustment) - value), <, 1.0);

  /* The button brings the view back and resumes following. Keyboard
   * activation shows the press before it clicks. */
  g_assert_true (gtk_widget_activate (button));
  wait_for (is_following, view, "following after Jump to latest");
  g_assert_true (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_false (gtk_widget_get_visible (button));
  wait_settled_at_end (view);
  add_turn (transcript, 101);
  wait_settled_at_end (view);
  g_assert_true (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));

  /* Scrolling back down to the end by hand resumes following too. */
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_value (adjustment) - 250);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment));
  wait_for (is_following, view, "following after scrolling to the end");
  g_assert_false (gtk_widget_get_visible (button));

  gtk_window_destroy (window);
}

static gboolean
list_is_long (gpointer data)
{
  GtkAdjustment *adjustment = data;

  return gtk_adjustment_get_upper (adjustment) > 20 * gtk_adjustment_get_page_size (adjustment);
}

static void
test_open_at_end (void)
{
  g_autoptr(TallyTranscript) first = tally_transcript_new ();
  g_autoptr(TallyTranscript) second = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  GtkAdjustment *adjustment;
  PaintWatch watch = { 0 };
  GdkFrameClock *clock;
  gulong paint_id;
  GtkWindow *window;

  for (guint i = 0; i < 10; i++)
    add_turn (first, i);
  for (guint i = 0; i < 300; i++)
    add_turn (second, i);

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (first));
  window = show_in_window (view, 480, 360);
  adjustment = view_vadjustment (view);
  wait_settled_at_end (view);

  /* Leave the end, then open another session: it opens at its end, and
   * every frame drawn on the way shows the end (no animation passes
   * through the middle). */
  gtk_adjustment_set_value (adjustment, 0);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  wait_frames (view, 2);

  watch.adjustment = adjustment;
  clock = gtk_widget_get_frame_clock (view);
  paint_id = g_signal_connect_after (clock, "after-paint", G_CALLBACK (after_paint_cb), &watch);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (second));
  g_assert_true (tally_transcript_view_get_model (TALLY_TRANSCRIPT_VIEW (view)) == G_LIST_MODEL (second));
  g_assert_true (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  g_assert_false (gtk_widget_get_visible (jump_button (view)));
  wait_settled_at_end (view);
  /* The newest blocks come first; the older ones arrive above them while
   * the view stays at the end. */
  wait_for (list_is_long, adjustment, "the older rows");
  wait_settled_at_end (view);
  g_signal_handler_disconnect (clock, paint_id);

  g_test_message ("%u frames drawn while opening, %u away from the end", watch.frames, watch.off_end);
  g_assert_cmpuint (watch.frames, >, 0);
  g_assert_cmpuint (watch.off_end, ==, 0);
  g_assert_cmpfloat (gtk_adjustment_get_upper (adjustment), >, 20 * gtk_adjustment_get_page_size (adjustment));

  /* The last block's row is on screen. */
  g_assert_nonnull (row_child_for (view, last_block (second)));

  gtk_window_destroy (window);
}

/* Ten thousand blocks of every kind. */

static void
add_mixed_turn (TallyTranscript *transcript,
                guint            n)
{
  applyf (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t%u\",\"mode\":\"ask\",\"text\":\"Question %u\"}", n, n);
  applyf (transcript, "{\"type\":\"thinking_delta\",\"turn_id\":\"t%u\",\"call\":0,\"block\":0,\"text\":\"Think %u\"}", n, n);
  applyf (transcript, "{\"type\":\"block_done\",\"turn_id\":\"t%u\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}", n);
  applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"t%u\",\"call\":0,\"block\":1,\"text\":\"Answer **%u**\"}", n, n);
  applyf (transcript, "{\"type\":\"block_done\",\"turn_id\":\"t%u\",\"call\":0,\"block\":1,\"kind\":\"text\"}", n);
  applyf (transcript, "{\"type\":\"tool_use_start\",\"turn_id\":\"t%u\",\"tool_id\":\"tu%u\",\"tool_name\":\"query_database\","
                      "\"tool_input\":{\"sql\":\"SELECT %u\"}}", n, n, n);
  applyf (transcript, "{\"type\":\"tool_result\",\"turn_id\":\"t%u\",\"tool_id\":\"tu%u\",\"content\":\"x\\n%u\\n(1 row)\","
                      "\"is_error\":false,\"duration_ms\":2}", n, n, n);
  if (n % 7 == 0)
    applyf (transcript, "{\"type\":\"error\",\"turn_id\":\"t%u\",\"kind\":\"network\",\"message\":\"Lost\",\"retryable\":true}", n);
  applyf (transcript, "{\"type\":\"turn_finished\",\"turn_id\":\"t%u\",\"status\":\"done\",\"cost_usd\":0.001,"
                      "\"duration_ms\":100,\"api_calls\":1,\"usage\":{}}", n);
}

static void
check_rows_match_blocks (GtkWidget *view,
                         guint     *min_index,
                         guint     *max_index,
                         GListModel *model)
{
  g_autoptr(GPtrArray) rows = tally_test_find_all (view, TALLY_TYPE_BLOCK_ROW);
  guint bound = 0;

  *min_index = G_MAXUINT;
  *max_index = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      TallyBlockRow *row = g_ptr_array_index (rows, i);
      TallyBlock *block = tally_block_row_get_block (row);
      GtkWidget *child = tally_block_row_get_child (row);
      guint index;

      if (block == NULL)
        continue;
      index = tally_test_block_index (model, block);
      g_assert_cmpuint (index, !=, G_MAXUINT);

      /* The list keeps a few rows it does not show (around the focus, for
       * instance); only the rows on screen count for the range. */
      if (gtk_widget_get_mapped (GTK_WIDGET (row)))
        {
          bound++;
          *min_index = MIN (*min_index, index);
          *max_index = MAX (*max_index, index);
        }

      /* A recycled row shows the widget for its block's kind. */
      switch (tally_block_get_kind (block))
        {
        case TALLY_BLOCK_USER: g_assert_true (TALLY_IS_USER_BUBBLE (child)); break;
        case TALLY_BLOCK_TEXT: g_assert_true (TALLY_IS_ASSISTANT_TEXT (child)); break;
        case TALLY_BLOCK_THINKING: g_assert_true (TALLY_IS_THINKING_DRAWER (child)); break;
        case TALLY_BLOCK_TOOL_CALL: g_assert_true (TALLY_IS_TOOL_CHIP (child)); break;
        case TALLY_BLOCK_RECEIPT: g_assert_true (TALLY_IS_RECEIPT_ROW (child)); break;
        case TALLY_BLOCK_ERROR: g_assert_true (TALLY_IS_ERROR_BANNER (child)); break;
        case TALLY_BLOCK_APPROVAL: g_assert_true (TALLY_IS_APPROVAL_CARD (child)); break;
        case TALLY_BLOCK_CHART: g_assert_true (TALLY_IS_CHART_ROW (child)); break;
        case TALLY_BLOCK_FILE: g_assert_true (TALLY_IS_FILE_CHIP (child)); break;
        case TALLY_BLOCK_QUESTION:
        case TALLY_BLOCK_PLAN: g_assert_false (TALLY_IS_NOTE_ROW (child)); break;
        case TALLY_BLOCK_INCOMPLETE:
        case TALLY_BLOCK_NOTICE:
        default: g_assert_true (TALLY_IS_NOTE_ROW (child)); break;
        }
    }
  g_assert_cmpuint (bound, >, 0);
}

static gboolean
all_bound (gpointer data)
{
  GtkWidget *list_view = tally_test_find_first (data, GTK_TYPE_LIST_VIEW);
  GListModel *bound = G_LIST_MODEL (gtk_list_view_get_model (GTK_LIST_VIEW (list_view)));
  GListModel *blocks = tally_transcript_view_get_model (data);

  return g_list_model_get_n_items (bound) == g_list_model_get_n_items (blocks);
}

static void
test_ten_thousand (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  GtkAdjustment *adjustment;
  GtkWindow *window;
  guint n_blocks;
  guint min_index, max_index;
  guint turn = 0;
  gint64 start;
  g_autofree char *retried = NULL;

  while (g_list_model_get_n_items (G_LIST_MODEL (transcript)) < 10000)
    add_mixed_turn (transcript, turn++);
  n_blocks = g_list_model_get_n_items (G_LIST_MODEL (transcript));
  g_assert_cmpuint (n_blocks, >=, 10000);

  start = g_get_monotonic_time ();
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  install_retry_action (view, &retried);
  window = show_in_window (view, 640, 480);
  adjustment = view_vadjustment (view);
  wait_settled_at_end (view);
  /* A figure for the log, not a check: timing depends on the machine. */
  g_test_message ("%u blocks: shown and settled at the end in %.0f ms (including 4 settled frames)",
                  n_blocks, (g_get_monotonic_time () - start) / 1000.0);
  check_rows_match_blocks (view, &min_index, &max_index, G_LIST_MODEL (transcript));
  g_assert_cmpuint (max_index, ==, n_blocks - 1);

  /* Page by page through a stretch, then to the middle, the way a
   * dragged scroll bar would. */
  start = g_get_monotonic_time ();
  for (guint i = 0; i < 60; i++)
    {
      gtk_adjustment_set_value (adjustment, gtk_adjustment_get_value (adjustment) -
                                            gtk_adjustment_get_page_size (adjustment));
      wait_frames (view, 1);
    }
  g_test_message ("60 pages scrolled up in %.0f ms (one frame each)",
                  (g_get_monotonic_time () - start) / 1000.0);
  /* The view binds the newest blocks first and the older ones as it goes
   * (docs/architecture.md §11.1); the middle of the scroll bar is the
   * middle of the session once all are bound. */
  wait_for (all_bound, view, "every block bound");
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment) / 2);
  g_assert_false (tally_transcript_view_get_following (TALLY_TRANSCRIPT_VIEW (view)));
  wait_frames (view, 6);
  check_rows_match_blocks (view, &min_index, &max_index, G_LIST_MODEL (transcript));
  g_test_message ("rows on screen around the middle: blocks %u to %u of %u", min_index, max_index, n_blocks);
  g_assert_cmpuint (min_index, >, n_blocks / 5);
  g_assert_cmpuint (max_index, <, n_blocks - n_blocks / 5);
  g_assert_true (gtk_widget_get_visible (jump_button (view)));

  /* Retry still reaches session.retry from banners that went through the
   * pool of recycled children. */
  {
    g_autoptr(GPtrArray) banners = tally_test_find_all (view, TALLY_TYPE_ERROR_BANNER);
    guint checked = 0;

    for (guint i = 0; i < banners->len; i++)
      {
        TallyErrorBanner *banner = g_ptr_array_index (banners, i);

        if (TALLY_BLOCK_WIDGET_BLOCK (banner) == NULL)
          continue;
        g_clear_pointer (&retried, g_free);
        g_signal_emit_by_name (tally_error_banner_get_retry_button (banner), "clicked");
        g_assert_cmpstr (retried, ==, tally_block_get_turn_id (TALLY_BLOCK_WIDGET_BLOCK (banner)));
        checked++;
      }
    g_assert_cmpuint (checked, >, 0);
  }

  /* And to the top. The rows above fill in over frames; on a loaded
   * machine six frames were not always enough, so wait for them (a view
   * that never got there fails, after 120 frames). */
  gtk_adjustment_set_value (adjustment, 0);
  for (guint i = 0; i < 60; i++)
    {
      wait_frames (view, 2);
      check_rows_match_blocks (view, &min_index, &max_index, G_LIST_MODEL (transcript));
      if (min_index == 0)
        break;
    }
  g_assert_cmpuint (min_index, ==, 0);

  gtk_window_destroy (window);
}

/* Pieces */

static void
test_result_table (void)
{
  GtkWidget *table = g_object_ref_sink (tally_result_table_new ());
  TallyResultTable *self = TALLY_RESULT_TABLE (table);

  /* Cut rows: the note and the "of" count. */
  g_assert_true (tally_result_table_set_result (self,
                                                "store | sales\nCentral | 1,200\nHarbour | \n"
                                                "… 3 more rows not shown (cap 2 rows)\n(2 of 5 rows shown)"));
  g_assert_cmpuint (tally_result_table_get_n_columns (self), ==, 2);
  g_assert_cmpuint (tally_result_table_get_n_rows (self), ==, 2);
  g_assert_cmpstr (tally_result_table_get_column_title (self, 1), ==, "sales");
  g_assert_cmpstr (tally_result_table_get_cell (self, 0, 1), ==, "1,200");
  g_assert_cmpstr (tally_result_table_get_cell (self, 1, 1), ==, "");
  g_assert_null (tally_result_table_get_cell (self, 2, 0));
  g_assert_cmpstr (tally_result_table_get_footer (self), ==,
                   "2 of 5 rows shown · … 3 more rows not shown (cap 2 rows)");

  /* One column, one row. */
  g_assert_true (tally_result_table_set_result (self, "count(*)\n4\n(1 row)"));
  g_assert_cmpuint (tally_result_table_get_n_columns (self), ==, 1);
  g_assert_cmpstr (tally_result_table_get_cell (self, 0, 0), ==, "4");
  g_assert_cmpstr (tally_result_table_get_footer (self), ==, "1 row");

  /* No rows. */
  g_assert_true (tally_result_table_set_result (self, "a | b\n(0 rows)"));
  g_assert_cmpuint (tally_result_table_get_n_rows (self), ==, 0);
  g_assert_cmpuint (tally_result_table_get_n_columns (self), ==, 2);

  /* Not tables: left empty so the text is shown instead. */
  g_assert_false (tally_result_table_set_result (self, "a | b\nx | y | z\n(1 row)"));
  g_assert_cmpuint (tally_result_table_get_n_columns (self), ==, 0);
  g_assert_null (tally_result_table_get_shown_text (self, 0, 0));
  g_assert_cmpuint (g_list_model_get_n_items (gtk_column_view_get_columns (tally_result_table_get_column_view (self))), ==, 0);
  g_assert_false (tally_result_table_set_result (self, "no such table: sales"));
  g_assert_false (tally_result_table_set_result (self, "(0 rows)"));
  g_assert_false (tally_result_table_set_result (self, ""));
  g_assert_false (tally_result_table_set_result (self, NULL));
  g_assert_false (tally_result_table_set_result (self, "a\nb\nc"));

  g_object_unref (table);
}

static void
read_text_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  char **text = user_data;

  *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (object), result, NULL);
  if (*text == NULL)
    *text = g_strdup ("(nothing)");
}

static void
save_csv_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  gboolean *saved = user_data;
  g_autoptr(GError) error = NULL;

  *saved = tally_csv_dialog_save_finish (G_FILE (object), result, &error);
  g_assert_no_error (error);
}

static void
test_result_table_out (void)
{
  GtkWidget *table = g_object_ref_sink (tally_result_table_new ());
  TallyResultTable *self = TALLY_RESULT_TABLE (table);
  GtkColumnView *view = tally_result_table_get_column_view (self);
  g_autoptr(GtkColumnViewColumn) revenue = NULL;
  g_autoptr(GtkColumnViewColumn) store = NULL;
  g_autofree char *copied = NULL;
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "tally-test-result-XXXXXX.csv", NULL);
  g_autoptr(GFile) file = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;
  gboolean saved = FALSE;
  int fd;
  static const char expected_csv[] =
    "store,revenue,note\r\n"
    "York,1000.25,\r\n"
    "Leeds,200,\"a, \"\"b\"\"\"\r\n"
    "Bath,30,Z\xc3\xbcrich\tx\r\n";

  GtkWindow *window = show_in_window (table, 700, 400);

  /* Before a result the actions are off, and their buttons with them. */
  g_assert_false (gtk_widget_is_sensitive (tally_test_find_first (table, GTK_TYPE_BUTTON)));

  g_assert_true (tally_result_table_set_result (self,
                                                "store | revenue | note\n"
                                                "Leeds | 200 | a, \"b\"\n"
                                                "York | 1000.25 | NULL\n"
                                                "Bath | 30 | Zürich\tx\n"
                                                "(3 rows)"));
  g_assert_true (tally_result_table_get_column_is_numeric (self, 1));
  g_assert_false (tally_result_table_get_column_is_numeric (self, 2));
  wait_frames (table, 2);
  g_assert_true (gtk_widget_is_sensitive (tally_test_find_first (table, GTK_TYPE_BUTTON)));

  /* Numbers: grouped, decimal points lined up with figure spaces. */
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 0, 1), ==, "200\u2008\u2007\u2007");
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 1, 1), ==, "1,000.25");

  /* A click on "revenue" sorts numerically: 30 < 200 < 1000.25, where
   * text order would put 1000.25 first. */
  revenue = g_list_model_get_item (gtk_column_view_get_columns (view), 1);
  store = g_list_model_get_item (gtk_column_view_get_columns (view), 0);
  g_assert_nonnull (gtk_column_view_column_get_sorter (revenue));
  gtk_column_view_sort_by_column (view, revenue, GTK_SORT_ASCENDING);
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 0, 0), ==, "Bath");
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 1, 0), ==, "Leeds");
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 2, 0), ==, "York");
  /* The tool's order is kept for get_cell(). */
  g_assert_cmpstr (tally_result_table_get_cell (self, 0, 0), ==, "Leeds");

  /* Copy: TSV with a header, in the order shown, raw values, NULL empty,
   * the tab inside a value a space. */
  g_assert_true (gtk_widget_activate_action (table, "table.copy", NULL));
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (table), NULL, read_text_cb, &copied);
  while (copied == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (copied, ==,
                   "store\trevenue\tnote\n"
                   "Bath\t30\tZürich x\n"
                   "Leeds\t200\ta, \"b\"\n"
                   "York\t1000.25\t\n");

  /* Text columns sort by collation. */
  gtk_column_view_sort_by_column (view, store, GTK_SORT_DESCENDING);
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 0, 0), ==, "York");
  g_assert_cmpstr (tally_result_table_get_shown_text (self, 2, 0), ==, "Bath");

  /* Save as CSV: RFC 4180 bytes, no byte order mark. */
  gtk_column_view_sort_by_column (view, revenue, GTK_SORT_DESCENDING);
  fd = g_mkstemp (path);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  file = g_file_new_for_path (path);
  tally_csv_dialog_save_async (table, file, NULL, save_csv_cb, &saved);
  while (!saved)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  g_assert_cmpmem (contents, length, expected_csv, sizeof expected_csv - 1);
  g_unlink (path);

  /* Refused text turns the actions off again. */
  g_assert_false (tally_result_table_set_result (self, "not a table"));
  g_assert_false (gtk_widget_is_sensitive (tally_test_find_first (table, GTK_TYPE_BUTTON)));

  gtk_window_destroy (window);
  g_object_unref (table);
}

static void
test_summaries (void)
{
  static const struct {
    const char *tool;
    const char *input;
    const char *summary;
  } cases[] = {
    { "query_database", "{\"sql\":\"  SELECT *\\n\\tFROM   sales \"}", "SELECT * FROM sales" },
    { "Read", "{\"file_path\":\"notes/q1.md\",\"limit\":10}", "notes/q1.md" },
    { "Glob", "{\"pattern\":\"**/*.csv\"}", "**/*.csv" },
    { "Glob", "{\"pattern\":\"*.csv\",\"path\":\"reports\"}", "*.csv in reports" },
    { "Grep", "{\"pattern\":\"revenue\",\"path\":\"reports\",\"glob\":\"*.md\"}", "revenue in reports (*.md)" },
    { "Grep", "{\"pattern\":\"revenue\",\"glob\":\"*.md\"}", "revenue (*.md)" },
    { "get_schema", "{}", "all tables" },
    { "get_schema", "{\"table\":\"stores\"}", "stores" },
    { "Bash", "{\"command\":\"ls -l\"}", "ls -l" },
    { "create_chart", "{\"kind\":3,\"title\":\"Revenue\"}", "Revenue" },
    { "query_database", "not json", "" },
    { "query_database", "[1,2]", "" },
    { "Read", NULL, "" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *summary = tally_tool_summarize_input (cases[i].tool, cases[i].input);

      g_assert_cmpstr (summary, ==, cases[i].summary);
    }
}

/* Charts */

#define CHART_SPEC \
  "{\"title\":\"Revenue by store, Q2 2024\",\"mark\":\"bar\"," \
  "\"encoding\":{\"x\":{\"field\":\"store\",\"type\":\"nominal\",\"sort\":\"-y\",\"title\":\"Store\"}," \
  "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\",\"format\":\"$,.0f\",\"title\":\"Revenue\"}}," \
  "\"data\":{\"values\":[{\"store\":\"Briggate\",\"revenue\":48210.5},{\"store\":\"Harbour\",\"revenue\":39902.25}," \
  "{\"store\":\"Central\",\"revenue\":33120},{\"store\":\"Northgate\",\"revenue\":27455.75}," \
  "{\"store\":\"Riverside\",\"revenue\":21980},{\"store\":\"Old Town\",\"revenue\":15340.5}]}}"

/* A turn that charts: the question, the create_chart chip, the chart
 * (with @spec) and a short answer. */
static void
add_chart_turn (TallyTranscript *transcript,
                guint            n,
                const char      *title,
                const char      *spec)
{
  applyf (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"c%u\",\"mode\":\"ask\","
                      "\"text\":\"Which store earned the most in Q2? Chart it.\"}", n);
  applyf (transcript, "{\"type\":\"tool_use_start\",\"turn_id\":\"c%u\",\"tool_id\":\"ct%u\",\"tool_name\":\"create_chart\","
                      "\"tool_input\":{\"title\":\"%s\"}}", n, n, title);
  applyf (transcript, "{\"type\":\"approval_resolved\",\"turn_id\":\"c%u\",\"tool_id\":\"ct%u\",\"decision\":\"allow\",\"reason\":\"mode\"}", n, n);
  applyf (transcript, "{\"type\":\"tool_result\",\"turn_id\":\"c%u\",\"tool_id\":\"ct%u\",\"content\":\"A bar chart of 6 stores.\","
                      "\"is_error\":false,\"duration_ms\":31}", n, n);
  applyf (transcript, "{\"type\":\"chart_created\",\"turn_id\":\"c%u\",\"chart_id\":\"chart%u\",\"tool_id\":\"ct%u\",\"title\":\"%s\","
                      "\"spec\":%s,\"files\":[\"charts/revenue-%u.svg\",\"charts/revenue-%u.png\"],\"rows\":6,"
                      "\"sql\":\"SELECT store, SUM(total) AS revenue FROM sales GROUP BY store\"}",
          n, n, n, title, spec, n, n);
  applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"c%u\",\"call\":1,\"block\":0,"
                      "\"text\":\"**Briggate** earned the most in Q2: $48,210, ahead of Harbour by a fifth.\"}", n);
  applyf (transcript, "{\"type\":\"block_done\",\"turn_id\":\"c%u\",\"call\":1,\"block\":0,\"kind\":\"text\"}", n);
  applyf (transcript, "{\"type\":\"turn_finished\",\"turn_id\":\"c%u\",\"status\":\"done\",\"cost_usd\":0.0088,"
                      "\"duration_ms\":5200,\"api_calls\":2,\"usage\":{\"input_tokens\":4100,\"output_tokens\":260}}", n);
}

static void
read_texture_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  GdkTexture **texture = user_data;
  g_autoptr(GError) error = NULL;

  *texture = gdk_clipboard_read_texture_finish (GDK_CLIPBOARD (source), result, &error);
  g_assert_no_error (error);
}

static GtkWidget *
find_label (GtkWidget  *root,
            const char *text)
{
  g_autoptr(GPtrArray) labels = tally_test_find_all (root, GTK_TYPE_LABEL);

  for (guint i = 0; i < labels->len; i++)
    if (g_strcmp0 (gtk_label_get_text (g_ptr_array_index (labels, i)), text) == 0)
      return g_ptr_array_index (labels, i);
  return NULL;
}

static void
test_chart (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autofree char *workspace = g_dir_make_tmp ("tally-chart-XXXXXX", NULL);
  g_autofree char *charts = g_build_filename (workspace, "charts", NULL);
  g_autofree char *png = g_build_filename (charts, "revenue-1.png", NULL);
  g_autoptr(JsonNode) spec = json_from_string (CHART_SPEC, NULL);
  g_autoptr(TallyChart) expected = tally_chart_new_from_json (json_node_get_object (spec), NULL);
  g_autofree char *description = tally_chart_dup_description (expected);
  g_autofree char *mismatch = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  TallyChartRow *chart = NULL, *broken = NULL;
  GtkWidget *view = tally_transcript_view_new ();
  GtkWidget *drawing, *table, *error_label = NULL;
  GtkWindow *window;
  int min, nat;

  g_assert_nonnull (expected);
  g_assert_cmpint (g_mkdir_with_parents (charts, 0700), ==, 0);
  g_assert_true (g_file_set_contents (png, "not really a PNG", -1, NULL));

  add_chart_turn (transcript, 1, "Revenue by store, Q2 2024", CHART_SPEC);
  add_chart_turn (transcript, 2, "A heatmap",
                  "{\"title\":\"A heatmap\",\"mark\":\"rect\",\"encoding\":{},\"data\":{\"values\":[]}}");
  tally_transcript_view_set_workspace (TALLY_TRANSCRIPT_VIEW (view), workspace);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 760, 2000);
  wait_frames (view, 4);

  rows = tally_test_find_all (view, TALLY_TYPE_CHART_ROW);
  g_assert_cmpuint (rows->len, ==, 2);
  for (guint i = 0; i < rows->len; i++)
    {
      TallyChartRow *row = g_ptr_array_index (rows, i);

      if (tally_chart_row_has_chart (row))
        chart = row;
      else
        broken = row;
    }
  g_assert_nonnull (chart);
  g_assert_nonnull (broken);

  /* The title line sits in a centring bin beside the header's buttons, so the
   * header's box does not have it search widths */
  {
    GtkWidget *title = tally_test_find_first (GTK_WIDGET (chart), GTK_TYPE_LABEL);

    g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (title)), ==, "Chart · 6 rows");
    tally_test_assert_centring_bin (gtk_widget_get_parent (title));
  }

  /* The drawing: focusable, named by the title, described by the chart. */
  drawing = tally_chart_row_get_drawing (chart);
  g_assert_true (gtk_widget_get_focusable (drawing));
  g_assert_true (gtk_widget_get_mapped (drawing));
  g_assert_true (tally_test_has_accessible_label (drawing, "Revenue by store, Q2 2024"));
  g_assert_true (tally_test_has_accessible_label (GTK_WIDGET (chart), "Chart: Revenue by store, Q2 2024"));
  /* No description in the spec: one made from the chart. */
  g_assert_cmpstr (description, ==,
                   "Bar chart “Revenue by store, Q2 2024”. x: Store, 6 categories, Briggate to Old Town. "
                   "y: Revenue, $0 to $48,210.");
  mismatch = gtk_test_accessible_check_property (GTK_ACCESSIBLE (drawing), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                                 description);
  g_assert_null (mismatch);

  /* The tooltip: on a bar (the tallest is the first, sorted by -y), not
   * over the title. */
  {
    g_autoptr(GtkTooltip) tooltip = g_object_new (GTK_TYPE_TOOLTIP, NULL);
    int h = gtk_widget_get_height (drawing);
    gboolean on_bar = FALSE, on_title = TRUE;

    for (int x = 0; x < gtk_widget_get_width (drawing) / 3 && !on_bar; x++)
      g_signal_emit_by_name (drawing, "query-tooltip", x, h - 60, FALSE, tooltip, &on_bar);
    g_assert_true (on_bar);
    g_signal_emit_by_name (drawing, "query-tooltip", 20, 8, FALSE, tooltip, &on_title);
    g_assert_false (on_title);
    g_assert_true (gtk_widget_get_has_tooltip (drawing));
  }

  /* The engine draws the title, so the header says what the chart is
   * drawn from; a chart that cannot be drawn is named there instead. */
  g_assert_nonnull (find_label (GTK_WIDGET (chart), "Chart · 6 rows"));
  g_assert_nonnull (find_label (GTK_WIDGET (broken), "A heatmap"));

  /* Height follows width: 0.55 ×, within 220–480. */
  gtk_widget_measure (drawing, GTK_ORIENTATION_VERTICAL, 700, &min, &nat, NULL, NULL);
  g_assert_cmpint (nat, ==, 385);
  g_assert_cmpint (min, >=, 220);
  g_assert_cmpint (nat, <=, 480);
  gtk_widget_measure (drawing, GTK_ORIENTATION_VERTICAL, 200, &min, &nat, NULL, NULL);
  g_assert_cmpint (nat, ==, 220);
  gtk_widget_measure (drawing, GTK_ORIENTATION_VERTICAL, 2000, &min, &nat, NULL, NULL);
  g_assert_cmpint (nat, ==, 480);
  g_assert_cmpint (gtk_widget_get_height (drawing), ==,
                   CLAMP ((int) (gtk_widget_get_width (drawing) * 0.55 + 0.5), 220, 480));

  /* Open is on while a file exists in the workspace. */
  g_assert_true (gtk_widget_is_sensitive (tally_test_find_action_button (GTK_WIDGET (chart), "chart.open")));
  g_assert_true (gtk_widget_is_sensitive (tally_test_find_action_button (GTK_WIDGET (chart), "chart.copy")));

  /* Copy: an image of the drawing's size on the clipboard. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (chart), "chart.copy", NULL));
  gdk_clipboard_read_texture_async (gtk_widget_get_clipboard (GTK_WIDGET (chart)), NULL, read_texture_cb, &texture);
  wait_for (pointer_set, &texture, "the copied chart");
  g_assert_cmpint (gdk_texture_get_width (texture), ==,
                   gtk_widget_get_width (drawing) * gtk_widget_get_scale_factor (drawing));
  g_assert_cmpint (gdk_texture_get_height (texture), ==,
                   gtk_widget_get_height (drawing) * gtk_widget_get_scale_factor (drawing));

  /* Show data: the rows as a table in place of the drawing, and back. */
  table = tally_chart_row_get_table (chart);
  g_assert_false (gtk_widget_get_mapped (table));
  {
    int drawing_height = gtk_widget_get_height (drawing);

    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (chart), "chart.show-data", NULL));
    wait_frames (view, 3);
    g_assert_true (gtk_widget_get_mapped (table));
    g_assert_false (gtk_widget_get_mapped (drawing));
    /* The table is drawn at about the drawing's height, not squashed to
     * its column titles. */
    g_assert_cmpint (gtk_widget_get_height (table), >=, MIN (drawing_height, 200));
  }
  g_assert_cmpuint (tally_result_table_get_n_rows (TALLY_RESULT_TABLE (table)), ==, 6);
  g_assert_cmpuint (tally_result_table_get_n_columns (TALLY_RESULT_TABLE (table)), ==, 2);
  g_assert_cmpstr (tally_result_table_get_column_title (TALLY_RESULT_TABLE (table), 0), ==, "store");
  g_assert_cmpstr (tally_result_table_get_cell (TALLY_RESULT_TABLE (table), 0, 1), ==, "48210.5");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (chart), "chart.show-data", NULL));
  wait_frames (view, 3);
  g_assert_true (gtk_widget_get_mapped (drawing));

  /* A spec the engine refuses: its message in place of the drawing, the
   * chart's own actions off. */
  {
    g_autoptr(GPtrArray) labels = tally_test_find_all (GTK_WIDGET (broken), GTK_TYPE_LABEL);

    for (guint i = 0; i < labels->len; i++)
      if (strstr (gtk_label_get_text (g_ptr_array_index (labels, i)), "cannot be drawn") != NULL)
        error_label = g_ptr_array_index (labels, i);
  }
  g_assert_nonnull (error_label);
  g_assert_true (gtk_widget_get_mapped (error_label));
  g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (error_label)), "rect"));
  g_assert_false (gtk_widget_get_mapped (tally_chart_row_get_drawing (broken)));
  g_assert_false (gtk_widget_is_sensitive (tally_test_find_action_button (GTK_WIDGET (broken), "chart.copy")));
  g_assert_false (gtk_widget_is_sensitive (tally_test_find_action_button (GTK_WIDGET (broken), "chart.open")));

  gtk_window_destroy (window);
  g_unlink (png);
  g_rmdir (charts);
  g_rmdir (workspace);
}

/* A chart made while the view shows the transcript: the row is made for
 * the chart's block as soon as the reducer adds it, before the block has
 * its title and spec, and must draw the chart once it has them. */
static void
test_chart_live (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(GPtrArray) rows = NULL;
  GtkWidget *view = tally_transcript_view_new ();
  TallyChartRow *row;
  GtkWindow *window;

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 760, 1200);
  wait_frames (view, 2);

  add_chart_turn (transcript, 1, "Revenue by store, Q2 2024", CHART_SPEC);
  wait_frames (view, 4);

  rows = tally_test_find_all (view, TALLY_TYPE_CHART_ROW);
  g_assert_cmpuint (rows->len, ==, 1);
  row = g_ptr_array_index (rows, 0);
  g_assert_true (tally_chart_row_has_chart (row));
  g_assert_true (gtk_widget_get_mapped (tally_chart_row_get_drawing (row)));
  g_assert_nonnull (find_label (GTK_WIDGET (row), "Chart · 6 rows"));
  g_assert_true (tally_test_has_accessible_label (GTK_WIDGET (row), "Chart: Revenue by store, Q2 2024"));
  g_assert_true (gtk_widget_is_sensitive (tally_test_find_action_button (GTK_WIDGET (row), "chart.copy")));

  gtk_window_destroy (window);
}

/* @text without its white space, to check that only white space moved. */
static char *
strip_spaces (const char *text)
{
  GString *out = g_string_new (NULL);

  for (const char *p = text; *p != '\0'; p++)
    if (!g_ascii_isspace (*p))
      g_string_append_c (out, *p);
  return g_string_free (out, FALSE);
}

static void
test_sql_format (void)
{
  static const struct { const char *sql; const char *expected; } cases[] = {
    /* Short or already laid out: unchanged. */
    { "SELECT store, SUM(total) FROM sales GROUP BY store", NULL },
    { "SELECT store, SUM(total) AS revenue\nFROM sales WHERE day >= '2024-04-01' AND day < '2024-07-01' GROUP BY store", NULL },
    /* Clauses on their lines, AND and OR indented. */
    { "SELECT store, SUM(total) AS revenue FROM sales WHERE day >= '2024-04-01' AND day < '2024-07-01' "
      "GROUP BY store ORDER BY revenue DESC LIMIT 5",
      "SELECT store, SUM(total) AS revenue\nFROM sales\nWHERE day >= '2024-04-01'\n  AND day < '2024-07-01'\n"
      "GROUP BY store\nORDER BY revenue DESC\nLIMIT 5" },
    /* Keywords inside literals and quoted identifiers are text; the AND
     * of a BETWEEN stays; a doubled quote does not end a literal. */
    { "select 'a FROM b WHERE c' as \"from where\", [group by], `order` from t where x = 'it''s AND' or y between 1 and 2",
      "select 'a FROM b WHERE c' as \"from where\", [group by], `order`\nfrom t\nwhere x = 'it''s AND'\n  or y between 1 and 2" },
    /* A CTE, a join and a subquery, indented; calls and OVER (…) stay. */
    { "WITH q AS (SELECT store, SUM(total) AS t FROM sales GROUP BY store) SELECT s.name, q.t, "
      "RANK() OVER (PARTITION BY s.region ORDER BY q.t DESC) AS r FROM q LEFT OUTER JOIN stores s ON s.id = q.store "
      "WHERE q.t > (SELECT AVG(t) FROM q) ORDER BY q.t DESC",
      "WITH q AS (\n  SELECT store, SUM(total) AS t\n  FROM sales\n  GROUP BY store\n)\n"
      "SELECT s.name, q.t, RANK() OVER (PARTITION BY s.region ORDER BY q.t DESC) AS r\nFROM q\n"
      "LEFT OUTER JOIN stores s ON s.id = q.store\nWHERE q.t > (\n  SELECT AVG(t)\n  FROM q\n)\nORDER BY q.t DESC" },
    /* UNION, a function named like a join word, a trailing comment. */
    { "SELECT left(name, 3) AS code FROM stores UNION ALL SELECT right(name, 3) FROM old_stores -- both",
      "SELECT left(name, 3) AS code\nFROM stores\nUNION ALL\nSELECT right(name, 3)\nFROM old_stores -- both" },
    /* Unbalanced and unterminated input is copied, never dropped. */
    { "SELECT a FROM t WHERE b = 'never closed FROM x WHERE y) AND (z GROUP BY q",
      "SELECT a\nFROM t\nWHERE b = 'never closed FROM x WHERE y) AND (z GROUP BY q" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *formatted = tally_sql_format (cases[i].sql);
      g_autofree char *a = strip_spaces (formatted);
      g_autofree char *b = strip_spaces (cases[i].sql);

      g_assert_cmpstr (formatted, ==, cases[i].expected != NULL ? cases[i].expected : cases[i].sql);
      g_assert_cmpstr (a, ==, b);
    }
}

/* The SQL of a call: laid out, highlighted as SQL in the scheme of the
 * style, light or dark. */
static void
test_tool_chip_sql (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  AdwStyleManager *style = adw_style_manager_get_default ();
  GtkSourceBuffer *buffer;
  TallyToolChip *chip;
  GtkWindow *window;
  GtkWidget *child;
  g_autofree char *text = NULL;
  GtkTextIter start, end;

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 760, 900);
  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"seq\":1,\"turn_id\":\"t1\",\"prompt\":\"Q2?\"}");
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"seq\":2,\"turn_id\":\"t1\",\"tool_id\":\"tu1\","
                     "\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT store, SUM(total) AS revenue "
                     "FROM sales WHERE quarter = 'Q2' GROUP BY store ORDER BY revenue DESC\",\"max_rows\":50}}");
  child = wait_for_row (view, last_block (transcript));
  chip = TALLY_TOOL_CHIP (child);
  g_assert_null (tally_tool_chip_get_sql_text (chip));
  g_assert_false (gtk_widget_get_visible (tally_tool_chip_get_sql_view (chip)));

  gtk_expander_set_expanded (tally_tool_chip_get_expander (chip), TRUE);
  g_assert_cmpstr (tally_tool_chip_get_sql_text (chip), ==,
                   "SELECT store, SUM(total) AS revenue\nFROM sales\nWHERE quarter = 'Q2'\nGROUP BY store\n"
                   "ORDER BY revenue DESC\n-- max_rows: 50");
  g_assert_cmpstr (tally_tool_chip_get_input_text (chip), ==, tally_tool_chip_get_sql_text (chip));
  g_assert_true (gtk_widget_get_visible (tally_tool_chip_get_sql_view (chip)));

  buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (tally_tool_chip_get_sql_view (chip))));
  gtk_text_buffer_get_bounds (GTK_TEXT_BUFFER (buffer), &start, &end);
  text = gtk_text_buffer_get_text (GTK_TEXT_BUFFER (buffer), &start, &end, FALSE);
  g_assert_cmpstr (text, ==, tally_tool_chip_get_sql_text (chip));
  g_assert_nonnull (gtk_source_buffer_get_language (buffer));
  g_assert_cmpstr (gtk_source_language_get_id (gtk_source_buffer_get_language (buffer)), ==, "sql");
  g_assert_true (gtk_text_view_get_monospace (GTK_TEXT_VIEW (tally_tool_chip_get_sql_view (chip))));
  g_assert_false (gtk_text_view_get_editable (GTK_TEXT_VIEW (tally_tool_chip_get_sql_view (chip))));

  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_LIGHT);
  g_assert_cmpstr (gtk_source_style_scheme_get_id (gtk_source_buffer_get_style_scheme (buffer)), ==, "Adwaita");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  g_assert_cmpstr (gtk_source_style_scheme_get_id (gtk_source_buffer_get_style_scheme (buffer)), ==, "Adwaita-dark");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);

  /* create_chart: its SQL apart, the rest of the input as JSON. */
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"seq\":3,\"turn_id\":\"t1\",\"tool_id\":\"tu2\","
                     "\"tool_name\":\"create_chart\",\"tool_input\":{\"spec\":{\"title\":\"Q2\"},"
                     "\"sql\":\"SELECT store, revenue FROM q2\"}}");
  chip = TALLY_TOOL_CHIP (wait_for_row (view, last_block (transcript)));
  gtk_expander_set_expanded (tally_tool_chip_get_expander (chip), TRUE);
  g_assert_cmpstr (tally_tool_chip_get_sql_text (chip), ==, "SELECT store, revenue FROM q2");
  g_assert_cmpstr (tally_tool_chip_get_input_text (chip), ==, "{\n  \"spec\" : {\n    \"title\" : \"Q2\"\n  }\n}");

  gtk_window_destroy (window);
}

/* A command with bidirectional controls: the row shows the escapes, in the
 * summary and in the details, never the controls themselves
 * (docs/security.md, "What the analyst approves"). */
static void
test_tool_chip_bidi (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  TallyToolChip *chip;
  GtkWindow *window;

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 760, 900);
  tally_test_apply_event (transcript, "{\"type\":\"turn_started\",\"seq\":1,\"turn_id\":\"t1\",\"prompt\":\"List\"}");
  tally_test_apply_event (transcript, "{\"type\":\"tool_use_start\",\"seq\":2,\"turn_id\":\"t1\",\"tool_id\":\"tu1\","
                          "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls \\u202e ; rm -rf x \\u202c\"}}");
  chip = TALLY_TOOL_CHIP (wait_for_row (view, last_block (transcript)));

  g_assert_nonnull (strstr (tally_tool_chip_get_summary (chip), "ls \\u202e ; rm -rf x \\u202c"));
  g_assert_null (strstr (tally_tool_chip_get_summary (chip), "\xe2\x80\xae"));
  gtk_expander_set_expanded (tally_tool_chip_get_expander (chip), TRUE);
  g_assert_nonnull (strstr (tally_tool_chip_get_input_text (chip), "ls \\u202e ; rm -rf x \\u202c"));
  g_assert_null (strstr (tally_tool_chip_get_input_text (chip), "\xe2\x80\xae"));

  gtk_window_destroy (window);
}

/* A cell cut short by its column shows its whole value in a tooltip. */
static void
test_result_table_tooltips (void)
{
  g_autofree char *long_value = g_strnfill (120, 'x');
  g_autofree char *text = g_strdup_printf ("name | note\nBriggate | short\nHarbour | %s\n(2 rows)", long_value);
  GtkWidget *table = tally_result_table_new ();
  g_autoptr(GtkTooltip) tooltip = g_object_new (GTK_TYPE_TOOLTIP, NULL);
  g_autoptr(GPtrArray) labels = NULL;
  GtkWidget *long_label = NULL, *short_label = NULL;
  GtkWindow *window;
  gboolean shown = FALSE;

  g_assert_true (tally_result_table_set_result (TALLY_RESULT_TABLE (table), text));
  window = show_in_window (table, 600, 400);
  wait_frames (table, 3);

  labels = tally_test_find_all (table, GTK_TYPE_LABEL);
  for (guint i = 0; i < labels->len; i++)
    {
      const char *t = gtk_label_get_text (g_ptr_array_index (labels, i));

      if (g_str_equal (t, long_value))
        long_label = g_ptr_array_index (labels, i);
      else if (g_str_equal (t, "short"))
        short_label = g_ptr_array_index (labels, i);
    }
  g_assert_nonnull (long_label);
  g_assert_nonnull (short_label);
  g_assert_true (gtk_widget_get_has_tooltip (long_label));

  g_signal_emit_by_name (long_label, "query-tooltip", 2, 2, FALSE, tooltip, &shown);
  g_assert_true (shown);
  shown = TRUE;
  g_signal_emit_by_name (short_label, "query-tooltip", 2, 2, FALSE, tooltip, &shown);
  g_assert_false (shown);

  gtk_window_destroy (window);
}

/* Screenshots: written only when TALLY_SCREENSHOT_DIR is set. */


static void
fill_showcase (TallyTranscript *transcript)
{
  static const char * const events[] = {
    "{\"type\":\"session_created\",\"title\":\"March revenue\"}",
    "{\"type\":\"turn_started\",\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"Which product earned the most in March, and by how much?\"}",
    "{\"type\":\"thinking_delta\",\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"The sales table has a product and a total per line. Sum by product for March and sort.\"}",
    "{\"type\":\"block_done\",\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}",
    "{\"type\":\"text_delta\",\"turn_id\":\"t1\",\"call\":0,\"block\":1,\"text\":\"I'll add up March sales per product.\"}",
    "{\"type\":\"block_done\",\"turn_id\":\"t1\",\"call\":0,\"block\":1,\"kind\":\"text\"}",
    "{\"type\":\"tool_use_start\",\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT p.name AS product, ROUND(SUM(s.total), 2) AS revenue\\nFROM sales s JOIN products p ON p.id = s.product_id\\nWHERE s.sold_at BETWEEN '2024-03-01' AND '2024-03-31'\\nGROUP BY p.name ORDER BY revenue DESC LIMIT 4\"}}",
    "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"decision\":\"allow\",\"reason\":\"mode\"}",
    "{\"type\":\"tool_result\",\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"product | revenue\\nFlat white | 4821.5\\nEspresso | 3990.25\\nOat latte | 3312\\nCold brew | NULL\\n(4 rows)\",\"is_error\":false,\"duration_ms\":14}",
    "{\"type\":\"tool_use_start\",\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"reports/targets-2024.csv\"}}",
    "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"decision\":\"allow\",\"reason\":\"mode\"}",
    "{\"type\":\"tool_result\",\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"content\":\"No such file: reports/targets-2024.csv\",\"is_error\":true,\"duration_ms\":1}",
    "{\"type\":\"tool_use_start\",\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf reports/old\"}}",
    "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"tu3\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf reports/old\"},\"suggestions\":[]}",
    "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"tu3\",\"decision\":\"deny\",\"reason\":\"user\"}",
    "{\"type\":\"tool_result\",\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"content\":\"Denied\",\"is_error\":true,\"duration_ms\":0}",
    "{\"type\":\"text_delta\",\"turn_id\":\"t1\",\"call\":1,\"block\":0,\"text\":\"**Flat white** led March with **$4,821.50**, about 21% ahead of espresso ($3,990.25).\"}",
    "{\"type\":\"block_done\",\"turn_id\":\"t1\",\"call\":1,\"block\":0,\"kind\":\"text\"}",
    "{\"type\":\"turn_finished\",\"turn_id\":\"t1\",\"status\":\"done\",\"cost_usd\":0.0123,\"duration_ms\":6400,\"api_calls\":2,\"usage\":{\"input_tokens\":5210,\"output_tokens\":388,\"cache_creation_input_tokens\":1800,\"cache_read_input_tokens\":3100}}",
    "{\"type\":\"turn_started\",\"turn_id\":\"t2\",\"mode\":\"plan\",\"text\":\"Plan a weekly report of the same numbers.\"}",
    "{\"type\":\"thinking_delta\",\"turn_id\":\"t2\",\"call\":0,\"block\":0,\"text\":\"A weekly grouping with strftime…\"}",
    "{\"type\":\"text_delta\",\"turn_id\":\"t2\",\"call\":0,\"block\":1,\"text\":\"Here is what I would do: group by week and\"}",
    "{\"type\":\"error\",\"turn_id\":\"t2\",\"kind\":\"network\",\"message\":\"The connection to the API was lost.\",\"retryable\":true,\"request_id\":\"req_011CXa7f\"}",
    "{\"type\":\"turn_finished\",\"turn_id\":\"t2\",\"status\":\"failed\",\"cost_usd\":null,\"duration_ms\":2100,\"api_calls\":0,\"usage\":{\"input_tokens\":5400,\"output_tokens\":41}}",
    NULL
  };

  for (guint i = 0; events[i] != NULL; i++)
    tally_test_apply_event (transcript, events[i]);
  tally_transcript_add_notice (transcript, "This session was restored from the flight recorder.");
}

static void
expand_all (GtkWidget *root)
{
  g_autoptr(GPtrArray) chips = tally_test_find_all (root, TALLY_TYPE_TOOL_CHIP);
  g_autoptr(GPtrArray) drawers = tally_test_find_all (root, TALLY_TYPE_THINKING_DRAWER);

  for (guint i = 0; i < chips->len; i++)
    {
      TallyToolChip *chip = g_ptr_array_index (chips, i);

      if (g_strcmp0 (tally_tool_chip_get_name (chip), "Bash") != 0)
        gtk_expander_set_expanded (tally_tool_chip_get_expander (chip), TRUE);
    }
  if (drawers->len > 0)
    gtk_expander_set_expanded (tally_thinking_drawer_get_expander (g_ptr_array_index (drawers, 0)), TRUE);
}

/* A query result in a tool chip that is opened after the transcript is
 * shown: the table shows its rows, not only its column titles (a column
 * view laid out while folded kept the height of its titles). */
static void
test_result_table_in_folded_chip (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  g_autoptr(GPtrArray) tables = NULL;
  GtkWindow *window;

  fill_showcase (transcript);
  gtk_widget_set_vexpand (view, TRUE);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  window = show_in_window (view, 760, 900);
  wait_frames (view, 4);
  expand_all (view);
  wait_frames (view, 6);

  tables = tally_test_find_all (view, TALLY_TYPE_RESULT_TABLE);
  g_assert_cmpuint (tables->len, >, 0);
  for (guint i = 0; i < tables->len; i++)
    {
      TallyResultTable *table = g_ptr_array_index (tables, i);
      GtkWidget *scroller;
      guint rows = tally_result_table_get_n_rows (table);

      if (!gtk_widget_get_mapped (GTK_WIDGET (table)) || rows == 0)
        continue;
      scroller = gtk_widget_get_ancestor (GTK_WIDGET (tally_result_table_get_column_view (table)),
                                          GTK_TYPE_SCROLLED_WINDOW);
      /* The titles and every row (up to the table's bound), each at least
       * a 12 px line */
      g_assert_cmpint (gtk_widget_get_height (scroller), >=, (int) MIN (rows + 1, 10) * 12);
    }

  gtk_window_destroy (window);
}

static void
test_screenshot (void)
{
  const char *dir = g_getenv ("TALLY_SCREENSHOT_DIR");
  static const char * const schemes[] = { "light", "dark" };

  if (dir == NULL)
    {
      g_test_skip ("set TALLY_SCREENSHOT_DIR to write screenshots");
      return;
    }

  for (guint s = 0; s < G_N_ELEMENTS (schemes); s++)
    {
      g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
      g_autofree char *path = g_strdup_printf ("%s/transcript-%s.png", dir, schemes[s]);
      g_autofree char *path_top = g_strdup_printf ("%s/transcript-%s-top.png", dir, schemes[s]);
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
      GtkWidget *view = tally_transcript_view_new ();
      GtkWidget *composer = tally_composer_new ();
      GtkWindow *window;

      adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                          s == 0 ? ADW_COLOR_SCHEME_FORCE_LIGHT : ADW_COLOR_SCHEME_FORCE_DARK);
      fill_showcase (transcript);
      gtk_widget_set_vexpand (view, TRUE);
      gtk_box_append (GTK_BOX (box), view);
      gtk_box_append (GTK_BOX (box), composer);
      tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
      window = show_in_window (box, 760, 900);
      gtk_widget_grab_focus (composer);
      wait_frames (box, 4);
      expand_all (view);
      wait_frames (box, 6);
      wait_settled_at_end (view);
      tally_test_save_png (box, path);

      gtk_adjustment_set_value (view_vadjustment (view), 0);
      wait_frames (box, 6);
      tally_test_save_png (box, path_top);
      gtk_window_destroy (window);
    }
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

/* A wide, long result as the analyst sees it, for looking at: written
 * only when TALLY_SCREENSHOT_DIR is set. */
static void
test_result_table_screenshot (void)
{
  const char *dir = g_getenv ("TALLY_SCREENSHOT_DIR");
  static const char * const schemes[] = { "light", "dark" };
  static const char * const stores[] = { "Briggate", "Harbour", "Central", "Northgate", "Riverside", "Old Town" };

  if (dir == NULL)
    {
      g_test_skip ("set TALLY_SCREENSHOT_DIR to write screenshots");
      return;
    }

  for (guint s = 0; s < G_N_ELEMENTS (schemes); s++)
    {
      g_autofree char *path = g_strdup_printf ("%s/result-table-%s.png", dir, schemes[s]);
      g_autoptr(GString) text = g_string_new ("store | month | orders | revenue_gbp | avg_basket_gbp | refunds | top_product | manager_note\n");
      GtkWidget *table = tally_result_table_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
      g_autoptr(GtkColumnViewColumn) revenue = NULL;
      GtkColumnView *view;
      GtkWindow *window;

      for (guint r = 0; r < 24; r++)
        g_string_append_printf (text, "%s | 2024-%02u | %u | %u.%u | %u.%02u | %s | %s | %s\n",
                                stores[r % G_N_ELEMENTS (stores)], 1 + r / 6, 800 + r * 137,
                                12000 + r * 4931, r % 10, 9 + r % 7, (r * 13) % 100,
                                r % 5 == 0 ? "NULL" : "3",
                                r % 2 ? "Flat white" : "Espresso",
                                r % 3 ? "" : "Closed for two days in the flood; revenue moved to Central and Harbour");
      g_string_append (text, "(24 rows)");

      adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                          s == 0 ? ADW_COLOR_SCHEME_FORCE_LIGHT : ADW_COLOR_SCHEME_FORCE_DARK);
      g_assert_true (tally_result_table_set_result (TALLY_RESULT_TABLE (table), text->str));
      gtk_widget_set_margin_start (box, 18);
      gtk_widget_set_margin_end (box, 18);
      gtk_widget_set_margin_top (box, 18);
      gtk_widget_set_margin_bottom (box, 18);
      gtk_box_append (GTK_BOX (box), table);
      window = show_in_window (box, 760, 480);
      view = tally_result_table_get_column_view (TALLY_RESULT_TABLE (table));
      revenue = g_list_model_get_item (gtk_column_view_get_columns (view), 3);
      gtk_column_view_sort_by_column (view, revenue, GTK_SORT_DESCENDING);
      wait_frames (box, 6);
      tally_test_save_png (gtk_widget_get_parent (box), path);
      gtk_window_destroy (window);
    }
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

/* A transcript with a chart, light and dark, for looking at: written
 * only when TALLY_SCREENSHOT_DIR is set. */
static void
test_chart_screenshot (void)
{
  const char *dir = g_getenv ("TALLY_SCREENSHOT_DIR");
  static const char * const schemes[] = { "light", "dark" };

  if (dir == NULL)
    {
      g_test_skip ("set TALLY_SCREENSHOT_DIR to write screenshots");
      return;
    }

  for (guint s = 0; s < G_N_ELEMENTS (schemes); s++)
    {
      g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
      g_autofree char *path = g_strdup_printf ("%s/chart-%s.png", dir, schemes[s]);
      g_autofree char *path_data = g_strdup_printf ("%s/chart-data-%s.png", dir, schemes[s]);
      GtkWidget *view = tally_transcript_view_new ();
      GtkWindow *window;

      adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                          s == 0 ? ADW_COLOR_SCHEME_FORCE_LIGHT : ADW_COLOR_SCHEME_FORCE_DARK);
      add_chart_turn (transcript, 1, "Revenue by store, Q2 2024", CHART_SPEC);
      tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
      window = show_in_window (view, 760, 720);
      wait_frames (view, 6);
      tally_test_save_png (view, path);

      /* The same chart with its rows shown. */
      g_assert_true (gtk_widget_activate_action (tally_test_find_first (view, TALLY_TYPE_CHART_ROW), "chart.show-data", NULL));
      wait_frames (view, 6);
      tally_test_save_png (view, path_data);
      gtk_window_destroy (window);
    }
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

int
main (int    argc,
      char **argv)
{
  tally_test_init_ui (&argc, &argv);

  g_test_add_func ("/tally/transcript-view/rows", test_rows);
  g_test_add_func ("/tally/transcript-view/retry", test_retry);
  g_test_add_func ("/tally/transcript-view/follow", test_follow);
  g_test_add_func ("/tally/transcript-view/open-at-end", test_open_at_end);
  g_test_add_func ("/tally/transcript-view/ten-thousand", test_ten_thousand);
  g_test_add_func ("/tally/transcript-view/result-table", test_result_table);
  g_test_add_func ("/tally/transcript-view/result-table-in-folded-chip", test_result_table_in_folded_chip);
  g_test_add_func ("/tally/transcript-view/result-table-out", test_result_table_out);
  g_test_add_func ("/tally/transcript-view/summaries", test_summaries);
  g_test_add_func ("/tally/transcript-view/chart", test_chart);
  g_test_add_func ("/tally/transcript-view/chart-live", test_chart_live);
  g_test_add_func ("/tally/transcript-view/sql-format", test_sql_format);
  g_test_add_func ("/tally/transcript-view/tool-chip-sql", test_tool_chip_sql);
  g_test_add_func ("/tally/transcript-view/tool-chip-bidi", test_tool_chip_bidi);
  g_test_add_func ("/tally/transcript-view/result-table-tooltips", test_result_table_tooltips);
  g_test_add_func ("/tally/transcript-view/screenshot", test_screenshot);
  g_test_add_func ("/tally/transcript-view/result-table-screenshot", test_result_table_screenshot);
  g_test_add_func ("/tally/transcript-view/chart-screenshot", test_chart_screenshot);

  return g_test_run ();
}
