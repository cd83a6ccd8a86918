/* SPDX-License-Identifier: GPL-3.0-or-later */

/* What a long session's first screen leaves for later (issue 15, "Open at
 * once"; docs/architecture.md §11.1): the transcript view binds only the
 * newest blocks that fill it, and its first frame is full; a tool chip
 * makes its details (the SQL view, the result table) when it is first
 * opened, and they then show what eagerly made ones show. */

#include "config.h"

#include <gtksourceview/gtksource.h>
#include <math.h>

#include "tally-result-table.h"
#include "tally-test-ui.h"
#include "tally-tool-chip.h"
#include "tally-transcript-view.h"
#include "tally-transcript.h"
#include "tally-ui.h"

#define RESULT "product | revenue\nEspresso | 1234.5\nLatte | 987\nMocha | NULL\n(3 rows)"

static TallyBlock *
last_block (TallyTranscript *transcript)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (transcript));

  g_assert_cmpuint (n, >, 0);
  return g_list_model_get_item (G_LIST_MODEL (transcript), n - 1);
}

/* A turn with one query_database call and its result; returns the call's
 * block (transfer full). */
static TallyBlock *
add_query (TallyTranscript *transcript,
           guint            turn,
           const char      *result)
{
  g_autofree char *started = g_strdup_printf ("{\"type\":\"turn_started\",\"seq\":%u,\"turn_id\":\"t%u\","
                                              "\"mode\":\"ask\",\"text\":\"Sales?\"}", turn * 10 + 1, turn);
  g_autofree char *call = g_strdup_printf ("{\"type\":\"tool_use_start\",\"seq\":%u,\"turn_id\":\"t%u\","
                                           "\"tool_id\":\"tu%u\",\"tool_name\":\"query_database\",\"tool_input\":"
                                           "{\"sql\":\"SELECT product, SUM(total) AS revenue\\n  FROM sales\\n"
                                           "  GROUP BY product\",\"max_rows\":50}}", turn * 10 + 2, turn, turn);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *result_json = NULL;
  g_autofree char *turn_id = g_strdup_printf ("t%u", turn);
  g_autofree char *tool_id = g_strdup_printf ("tu%u", turn);
  TallyBlock *block;

  tally_test_apply_event (transcript, started);
  tally_test_apply_event (transcript, call);
  block = last_block (transcript);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "tool_result");
  json_builder_set_member_name (builder, "seq");
  json_builder_add_int_value (builder, turn * 10 + 3);
  json_builder_set_member_name (builder, "turn_id");
  json_builder_add_string_value (builder, turn_id);
  json_builder_set_member_name (builder, "tool_id");
  json_builder_add_string_value (builder, tool_id);
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, result);
  json_builder_set_member_name (builder, "is_error");
  json_builder_add_boolean_value (builder, FALSE);
  json_builder_set_member_name (builder, "duration_ms");
  json_builder_add_int_value (builder, 12);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  result_json = json_generator_to_data (generator, NULL);
  tally_test_apply_event (transcript, result_json);

  return block;
}

/* @table shows what @eager shows: columns, rows, cells as shown, footer. */
static void
assert_same_table (TallyResultTable *table,
                   TallyResultTable *eager)
{
  guint rows = tally_result_table_get_n_rows (eager);
  guint columns = tally_result_table_get_n_columns (eager);

  g_assert_cmpuint (rows, >, 0);
  g_assert_cmpuint (columns, >, 0);
  g_assert_cmpuint (tally_result_table_get_n_rows (table), ==, rows);
  g_assert_cmpuint (tally_result_table_get_n_columns (table), ==, columns);
  g_assert_cmpstr (tally_result_table_get_footer (table), ==, tally_result_table_get_footer (eager));
  g_assert_cmpuint (g_list_model_get_n_items (gtk_column_view_get_columns (tally_result_table_get_column_view (table))),
                    ==, columns);
  for (guint c = 0; c < columns; c++)
    {
      g_assert_cmpstr (tally_result_table_get_column_title (table, c), ==,
                       tally_result_table_get_column_title (eager, c));
      g_assert_cmpint (tally_result_table_get_column_is_numeric (table, c), ==,
                       tally_result_table_get_column_is_numeric (eager, c));
      for (guint r = 0; r < rows; r++)
        {
          g_assert_cmpstr (tally_result_table_get_cell (table, r, c), ==, tally_result_table_get_cell (eager, r, c));
          g_assert_cmpstr (tally_result_table_get_shown_text (table, r, c), ==,
                           tally_result_table_get_shown_text (eager, r, c));
        }
    }
}

static char *
buffer_text (GtkWidget *view)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (view));
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

/* A chip makes its details when first opened, and they equal eager ones. */
static void
test_tool_chip_details (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(TallyBlock) first = add_query (transcript, 1, RESULT);
  g_autoptr(TallyBlock) second = add_query (transcript, 2, "n\n7\n(1 row)");
  g_autoptr(GtkWidget) eager = g_object_ref_sink (tally_result_table_new ());
  GtkWidget *window = gtk_window_new ();
  GtkWidget *chip = tally_tool_chip_new ();
  GtkExpander *expander = tally_tool_chip_get_expander (TALLY_TOOL_CHIP (chip));
  GtkWidget *details, *sql_view;
  TallyResultTable *table;
  g_autofree char *sql = NULL;

  gtk_window_set_child (GTK_WINDOW (window), chip);
  gtk_window_present (GTK_WINDOW (window));
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (chip), first);

  /* Bound and shown, closed: only the title row exists. */
  SPIN_UNTIL (gtk_widget_get_mapped (chip));
  g_assert_cmpstr (tally_tool_chip_get_name (TALLY_TOOL_CHIP (chip)), ==, "query_database");
  g_assert_cmpstr (tally_tool_chip_get_summary (TALLY_TOOL_CHIP (chip)), ==,
                   "SELECT product, SUM(total) AS revenue FROM sales GROUP BY product");
  g_assert_cmpstr (tally_tool_chip_get_state (TALLY_TOOL_CHIP (chip)), ==, "done");
  g_assert_null (gtk_expander_get_child (expander));
  g_assert_null (tally_test_find_first (chip, TALLY_TYPE_RESULT_TABLE));
  g_assert_null (tally_test_find_first (chip, GTK_SOURCE_TYPE_VIEW));
  g_assert_cmpstr (tally_tool_chip_get_input_text (TALLY_TOOL_CHIP (chip)), ==, "");
  g_assert_cmpstr (tally_tool_chip_get_result_text (TALLY_TOOL_CHIP (chip)), ==, "");
  g_assert_null (tally_tool_chip_get_sql_text (TALLY_TOOL_CHIP (chip)));

  /* Opened: the details exist, filled as the eager table is. */
  gtk_expander_set_expanded (expander, TRUE);
  details = gtk_expander_get_child (expander);
  g_assert_nonnull (details);
  table = tally_tool_chip_get_table (TALLY_TOOL_CHIP (chip));
  g_assert_true (gtk_widget_is_ancestor (GTK_WIDGET (table), details));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (table)));
  g_assert_true (tally_result_table_set_result (TALLY_RESULT_TABLE (eager), RESULT));
  assert_same_table (table, TALLY_RESULT_TABLE (eager));
  g_assert_cmpstr (tally_result_table_get_shown_text (table, 0, 1), ==, "1,234.5");

  sql_view = tally_tool_chip_get_sql_view (TALLY_TOOL_CHIP (chip));
  g_assert_true (gtk_widget_is_ancestor (sql_view, details));
  g_assert_true (gtk_widget_get_visible (sql_view));
  g_assert_cmpstr (tally_tool_chip_get_sql_text (TALLY_TOOL_CHIP (chip)), ==,
                   "SELECT product, SUM(total) AS revenue\n  FROM sales\n  GROUP BY product\n-- max_rows: 50");
  g_assert_cmpstr (tally_tool_chip_get_input_text (TALLY_TOOL_CHIP (chip)), ==,
                   tally_tool_chip_get_sql_text (TALLY_TOOL_CHIP (chip)));
  sql = buffer_text (sql_view);
  g_assert_cmpstr (sql, ==, tally_tool_chip_get_sql_text (TALLY_TOOL_CHIP (chip)));
  g_assert_cmpstr (gtk_source_language_get_id (gtk_source_buffer_get_language (
                     GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (sql_view))))), ==, "sql");
  g_assert_false (gtk_text_view_get_editable (GTK_TEXT_VIEW (sql_view)));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (tally_test_find_first (details, GTK_TYPE_LABEL))), ==, "SQL");
  g_assert_true (tally_block_widget_get_expanded (TALLY_BLOCK_WIDGET (chip)));
  tally_test_wait_frames (chip, 2);

  /* Recycled for a closed call: the same details, emptied and hidden. */
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (chip), second);
  g_assert_false (gtk_expander_get_expanded (expander));
  g_assert_true (gtk_expander_get_child (expander) == details);
  g_assert_cmpuint (tally_result_table_get_n_rows (table), ==, 0);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (table)));
  g_assert_cmpstr (tally_tool_chip_get_result_text (TALLY_TOOL_CHIP (chip)), ==, "");
  g_assert_null (tally_tool_chip_get_sql_text (TALLY_TOOL_CHIP (chip)));

  /* Back to the first call, which was left open: shown open at once. */
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (chip), first);
  g_assert_true (gtk_expander_get_expanded (expander));
  assert_same_table (table, TALLY_RESULT_TABLE (eager));
  tally_test_wait_frames (chip, 2);

  gtk_window_destroy (GTK_WINDOW (window));
}

/* A fresh chip bound to a call that was left open makes its details at
 * once (a row recycled or made while scrolling). */
static void
test_tool_chip_bound_open (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(TallyBlock) block = add_query (transcript, 1, RESULT);
  g_autoptr(GtkWidget) eager = g_object_ref_sink (tally_result_table_new ());
  g_autoptr(GtkWidget) first = g_object_ref_sink (tally_tool_chip_new ());
  g_autoptr(GtkWidget) chip = g_object_ref_sink (tally_tool_chip_new ());

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (first), block);
  g_assert_null (gtk_expander_get_child (tally_tool_chip_get_expander (TALLY_TOOL_CHIP (first))));
  tally_block_widget_set_expanded (TALLY_BLOCK_WIDGET (first), TRUE);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (first), NULL);

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (chip), block);
  g_assert_true (gtk_expander_get_expanded (tally_tool_chip_get_expander (TALLY_TOOL_CHIP (chip))));
  g_assert_nonnull (gtk_expander_get_child (tally_tool_chip_get_expander (TALLY_TOOL_CHIP (chip))));
  g_assert_true (tally_result_table_set_result (TALLY_RESULT_TABLE (eager), RESULT));
  assert_same_table (tally_tool_chip_get_table (TALLY_TOOL_CHIP (chip)), TALLY_RESULT_TABLE (eager));
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (chip), NULL);
}

/* What the view's first painted frame showed. */
typedef struct {
  GtkWidget     *list_view;
  GtkAdjustment *adjustment;
  guint          painted;
  guint          bound;
  double         upper, page, value;
  guint          last_mapped;
  TallyBlock    *last;
} FirstFrame;

static void
first_paint_cb (GdkFrameClock *clock,
                FirstFrame    *f)
{
  GListModel *bound = G_LIST_MODEL (gtk_list_view_get_model (GTK_LIST_VIEW (f->list_view)));
  g_autoptr(TallyBlock) last = NULL;
  guint n = g_list_model_get_n_items (bound);

  /* A frame before the list has laid the rows out shows nothing yet. */
  if (f->painted > 0 || gtk_adjustment_get_upper (f->adjustment) <= 0)
    return;
  f->painted++;
  f->bound = n;
  f->upper = gtk_adjustment_get_upper (f->adjustment);
  f->page = gtk_adjustment_get_page_size (f->adjustment);
  f->value = gtk_adjustment_get_value (f->adjustment);
  last = n > 0 ? g_list_model_get_item (bound, n - 1) : NULL;
  f->last_mapped = last == f->last;
}

/* A long session in a shown window: only the blocks that fill the view
 * are bound at first, fewer than a tall screenful, and the first frame
 * shows the end with the rows filling the view. */
static void
test_first_screen (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *window = gtk_window_new ();
  GtkWidget *view = tally_transcript_view_new ();
  FirstFrame f = { 0 };
  gulong paint_id;
  guint n;

  for (guint t = 1; t <= 500; t++)
    {
      g_autofree char *prompt = g_strdup_printf ("{\"type\":\"turn_started\",\"seq\":%u,\"turn_id\":\"t%u\","
                                                 "\"mode\":\"ask\",\"text\":\"Question %u\"}", t * 10 + 1, t, t);
      g_autofree char *answer = g_strdup_printf ("{\"type\":\"text_delta\",\"seq\":%u,\"turn_id\":\"t%u\","
                                                 "\"call\":0,\"block\":0,\"text\":\"Answer %u: York sold a "
                                                 "little more coffee than Leeds.\"}", t * 10 + 2, t, t);
      g_autofree char *done = g_strdup_printf ("{\"type\":\"block_done\",\"seq\":%u,\"turn_id\":\"t%u\","
                                               "\"call\":0,\"block\":0,\"kind\":\"text\"}", t * 10 + 3, t);
      g_autofree char *finished = g_strdup_printf ("{\"type\":\"turn_finished\",\"seq\":%u,\"turn_id\":\"t%u\","
                                                   "\"status\":\"done\",\"cost_usd\":0.001,\"duration_ms\":100,"
                                                   "\"api_calls\":1,\"usage\":{}}", t * 10 + 4, t);

      tally_test_apply_event (transcript, prompt);
      tally_test_apply_event (transcript, answer);
      tally_test_apply_event (transcript, done);
      tally_test_apply_event (transcript, finished);
    }
  n = g_list_model_get_n_items (G_LIST_MODEL (transcript));
  g_assert_cmpuint (n, ==, 1500);
  f.last = last_block (transcript);

  gtk_window_set_default_size (GTK_WINDOW (window), 640, 480);
  gtk_window_set_child (GTK_WINDOW (window), view);
  gtk_window_present (GTK_WINDOW (window));
  SPIN_UNTIL (gtk_widget_get_mapped (view) && gtk_widget_get_height (view) > 0);

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  f.list_view = tally_test_find_first (view, GTK_TYPE_LIST_VIEW);
  f.adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (tally_test_find_first (view, GTK_TYPE_SCROLLED_WINDOW)));
  /* Bound now: the view's height of short rows and two more, fewer than
   * the 24 of a tall window; the rows are made as they are bound. */
  {
    GListModel *bound = G_LIST_MODEL (gtk_list_view_get_model (GTK_LIST_VIEW (f.list_view)));
    g_autoptr(GPtrArray) rows = tally_test_find_all (view, TALLY_TYPE_BLOCK_WIDGET);

    g_test_message ("%u of %u blocks bound at first in a view %d px high, %u block widgets",
                    g_list_model_get_n_items (bound), n, gtk_widget_get_height (view), rows->len);
    g_assert_cmpuint (g_list_model_get_n_items (bound), >=, 6);
    g_assert_cmpuint (g_list_model_get_n_items (bound), <, 24);
  }

  paint_id = g_signal_connect_after (gtk_widget_get_frame_clock (view), "after-paint",
                                     G_CALLBACK (first_paint_cb), &f);
  SPIN_UNTIL (f.painted > 0);
  g_signal_handler_disconnect (gtk_widget_get_frame_clock (view), paint_id);
  g_test_message ("first frame: %u blocks bound, content %.0f px in a page of %.0f px, at %.0f",
                  f.bound, f.upper, f.page, f.value);
  g_assert_true (f.last_mapped);
  g_assert_cmpuint (f.bound, <, 24);
  /* Full: the rows are taller than the view, and it shows their end. */
  g_assert_cmpfloat (f.page, >, 0);
  g_assert_cmpfloat (f.upper, >, f.page);
  g_assert_cmpfloat (fabs (f.value + f.page - f.upper), <=, 1.0);

  /* The older blocks follow. */
  SPIN_UNTIL (g_list_model_get_n_items (G_LIST_MODEL (gtk_list_view_get_model (GTK_LIST_VIEW (f.list_view)))) == n);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  tally_test_init_ui (&argc, &argv);

  g_test_add_func ("/tally/open-lazy/first-screen", test_first_screen);
  g_test_add_func ("/tally/open-lazy/tool-chip-details", test_tool_chip_details);
  g_test_add_func ("/tally/open-lazy/tool-chip-bound-open", test_tool_chip_bound_open);

  return g_test_run ();
}
