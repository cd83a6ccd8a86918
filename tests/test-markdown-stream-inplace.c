/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "test-markdown-stream-inplace"

#include "config.h"

#include <string.h>

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-markdown-code-block.h"
#include "tally-markdown-renderer.h"
#include "tally-markdown-table.h"
#include "tally-markdown-view-private.h"
#include "tally-test-ui.h"

/*
 * TallyMarkdownView while a fence or a table streams in its open tail
 * (issue 15, "stream without a stall"): an update that gives the tail the
 * same text and tags, with a block of the same kind in the same place,
 * leaves the buffer's anchor and the widget at it where they are and only
 * gives the widget the new code or rows. Anything else renders the tail
 * again. Either way the result equals the same text set at once.
 *
 * Each step calls tally_markdown_view_flush(), which does what the next
 * frames would, so nothing here waits for a frame.
 */

static GtkWidget *
show_view (TallyMarkdownView **view)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *scroller = gtk_scrolled_window_new ();

  *view = TALLY_MARKDOWN_VIEW (tally_markdown_view_new ());
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), GTK_WIDGET (*view));
  gtk_window_set_child (GTK_WINDOW (window), scroller);
  gtk_window_set_default_size (GTK_WINDOW (window), 600, 400);
  gtk_window_present (GTK_WINDOW (window));
  SPIN_UNTIL (gtk_widget_get_mapped (GTK_WIDGET (*view)));
  return window;
}

/* The last anchor of the view's buffer, and the one widget shown at it. */
static GtkWidget *
last_block (TallyMarkdownView   *view,
            GtkTextChildAnchor **anchor_out)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (view));
  GtkTextChildAnchor *last = NULL;
  GtkWidget *block;
  GtkTextIter iter;

  gtk_text_buffer_get_start_iter (buffer, &iter);
  do
    {
      GtkTextChildAnchor *anchor = gtk_text_iter_get_child_anchor (&iter);

      if (anchor != NULL)
        last = anchor;
    }
  while (gtk_text_iter_forward_char (&iter));

  g_assert_nonnull (last);
  block = tally_markdown_view_get_block (view, last);
  g_assert_nonnull (block);
  *anchor_out = last;
  return block;
}

static TallyMarkdownViewStats
stats_of (TallyMarkdownView *view)
{
  TallyMarkdownViewStats stats;

  tally_markdown_view_get_stats (view, &stats);
  return stats;
}

static void
count_cb (guint *count)
{
  (*count)++;
}

/* finish() gives what setting the whole text at once gives. */
static void
assert_equals_set_at_once (TallyMarkdownView *view)
{
  TallyMarkdownView *ref;
  GtkWidget *ref_window = show_view (&ref);
  g_autofree char *expected = NULL;
  g_autofree char *actual = NULL;

  tally_markdown_view_finish (view);
  tally_markdown_view_set_markdown (ref, tally_markdown_view_get_markdown (view));
  expected = tally_markdown_view_dup_full_structure (ref);
  actual = tally_markdown_view_dup_full_structure (view);
  g_assert_cmpstr (actual, ==, expected);

  gtk_window_destroy (GTK_WINDOW (ref_window));
  tally_test_spin_idle ();
}

/* A fence streaming line by line keeps its anchor and its code block; the
 * block shows the code so far after each step. */
static void
test_fence (void)
{
  TallyMarkdownView *view;
  GtkWidget *window = show_view (&view);
  GtkTextChildAnchor *anchor, *first_anchor;
  GtkWidget *block, *first_block;
  g_autoptr(GString) code = g_string_new (NULL);
  guint unmapped = 0, unrealized = 0;
  guint before;

  tally_markdown_view_append (view, "Intro paragraph.\n\n```sql\nSELECT 1");
  tally_markdown_view_flush (view);
  first_block = last_block (view, &first_anchor);
  g_assert_true (TALLY_IS_MARKDOWN_CODE_BLOCK (first_block));
  g_assert_cmpstr (tally_markdown_code_block_get_code (TALLY_MARKDOWN_CODE_BLOCK (first_block)), ==, "SELECT 1");
  g_string_append (code, "SELECT 1");

  before = stats_of (view).tails_in_place;
  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *line = g_strdup_printf (",\n       col_%u", i);

      tally_markdown_view_append (view, line);
      g_string_append (code, line);
      tally_markdown_view_flush (view);

      block = last_block (view, &anchor);
      g_assert_true (anchor == first_anchor);
      g_assert_true (block == first_block);
      g_assert_cmpstr (tally_markdown_code_block_get_code (TALLY_MARKDOWN_CODE_BLOCK (block)), ==, code->str);
      g_assert_cmpstr (tally_markdown_anchor_get_code (anchor), ==, code->str);
      g_assert_cmpuint (stats_of (view).tails_in_place, ==, before + i + 1);
    }

  /* The closing fence commits the block; the widget goes with it, and
   * stays in the view meanwhile: it is neither unmapped nor unrealized,
   * which would make its CSS and its code's layout again. */
  g_assert_true (gtk_widget_get_realized (first_block));
  g_signal_connect_swapped (first_block, "unmap", G_CALLBACK (count_cb), &unmapped);
  g_signal_connect_swapped (first_block, "unrealize", G_CALLBACK (count_cb), &unrealized);
  tally_markdown_view_append (view, "\n```\n\nAfter the query.\n");
  tally_markdown_view_flush (view);
  g_assert_true (last_block (view, &anchor) == first_block);
  g_assert_cmpuint (unmapped, ==, 0);
  g_assert_cmpuint (unrealized, ==, 0);
  g_signal_handlers_disconnect_by_func (first_block, count_cb, &unmapped);
  g_signal_handlers_disconnect_by_func (first_block, count_cb, &unrealized);

  assert_equals_set_at_once (view);
  gtk_window_destroy (GTK_WINDOW (window));
  tally_test_spin_idle ();
}

/* While an answer streams, the view makes a code block ahead in an idle
 * and the next fence takes it: with that fence's language and code, as
 * if made for it; another is made for the fence after. finish() and
 * set_markdown() drop the one left. */
static void
test_spare_code_block (void)
{
  TallyMarkdownView *view;
  GtkWidget *window = show_view (&view);
  GtkTextChildAnchor *anchor;
  GtkWidget *first, *second;

  tally_markdown_view_append (view, "Intro paragraph.\n\n");
  tally_markdown_view_flush (view);
  SPIN_UNTIL (view->spare_code != NULL);
  g_assert_cmpuint (stats_of (view).spare_code_blocks, ==, 0);

  tally_markdown_view_append (view, "```sql\nSELECT 1;\n```\n\n");
  tally_markdown_view_flush (view);
  first = last_block (view, &anchor);
  g_assert_true (TALLY_IS_MARKDOWN_CODE_BLOCK (first));
  g_assert_cmpuint (stats_of (view).spare_code_blocks, ==, 1);
  g_assert_cmpstr (tally_markdown_code_block_get_code (TALLY_MARKDOWN_CODE_BLOCK (first)), ==, "SELECT 1;");
  g_assert_cmpstr (tally_markdown_code_block_get_language (TALLY_MARKDOWN_CODE_BLOCK (first)), ==, "sql");
  g_assert_cmpstr (tally_markdown_code_block_get_language_name (TALLY_MARKDOWN_CODE_BLOCK (first)), ==, "SQL");
  g_assert_true (gtk_widget_get_parent (first) == GTK_WIDGET (view));
  /* The view holds the one reference: a floating one would have leaked. */
  g_assert_false (g_object_is_floating (first));

  /* A second fence, without a language, takes the next spare. */
  SPIN_UNTIL (view->spare_code != NULL);
  tally_markdown_view_append (view, "Then:\n\n```\nplain text\n```\n\n");
  tally_markdown_view_flush (view);
  second = last_block (view, &anchor);
  g_assert_true (second != first);
  g_assert_cmpuint (stats_of (view).spare_code_blocks, ==, 2);
  g_assert_cmpstr (tally_markdown_code_block_get_code (TALLY_MARKDOWN_CODE_BLOCK (second)), ==, "plain text");
  g_assert_cmpstr (tally_markdown_code_block_get_language (TALLY_MARKDOWN_CODE_BLOCK (second)), ==, "");
  g_assert_cmpstr (tally_markdown_code_block_get_language_name (TALLY_MARKDOWN_CODE_BLOCK (second)), ==, "Code");

  SPIN_UNTIL (view->spare_code != NULL);
  assert_equals_set_at_once (view);
  g_assert_null (view->spare_code);
  g_assert_cmpuint (view->spare_idle_id, ==, 0);

  /* set_markdown() is not streaming: no spare is made for it. */
  tally_markdown_view_set_markdown (view, "Text set at once.\n\n```sql\nSELECT 2;\n```\n");
  tally_test_spin_idle ();
  g_assert_null (view->spare_code);
  g_assert_cmpuint (stats_of (view).spare_code_blocks, ==, 2);

  gtk_window_destroy (GTK_WINDOW (window));
  tally_test_spin_idle ();
}

/* A table gaining rows keeps its widget; the anchor has every row. */
static void
test_table (void)
{
  TallyMarkdownView *view;
  GtkWidget *window = show_view (&view);
  GtkTextChildAnchor *anchor, *first_anchor;
  GtkWidget *first_table;
  guint before;

  tally_markdown_view_append (view, "Rows:\n\n| genre | revenue |\n|:--|--:|\n| Rock | 826.65 |\n");
  tally_markdown_view_flush (view);
  first_table = last_block (view, &first_anchor);
  g_assert_true (tally_markdown_table_widget_is_table (first_table));
  g_assert_cmpuint (tally_markdown_anchor_get_table (first_anchor)->n_rows, ==, 2);

  before = stats_of (view).tails_in_place;
  for (guint r = 0; r < 6; r++)
    {
      g_autofree char *row = g_strdup_printf ("| Genre %u | %u.00 |\n", r, 100 - r);

      tally_markdown_view_append (view, row);
      tally_markdown_view_flush (view);
      g_assert_true (last_block (view, &anchor) == first_table);
      g_assert_true (anchor == first_anchor);
      g_assert_cmpuint (tally_markdown_anchor_get_table (anchor)->n_rows, ==, 3 + r);
    }
  g_assert_cmpuint (stats_of (view).tails_in_place, ==, before + 6);

  tally_markdown_view_append (view, "\nThat is all.");
  assert_equals_set_at_once (view);
  gtk_window_destroy (GTK_WINDOW (window));
  tally_test_spin_idle ();
}

/* Tails whose text or blocks change shape are rendered again: a paragraph
 * that grows, an info string still arriving (the language changes), a
 * tail right after a commit. A table row with more cells than the header
 * (the extra cells are dropped) keeps the table's shape. The result is
 * still the text set at once. */
static void
test_shape_changes (void)
{
  static const char *steps[] = {
    "Some text",
    " that grows",
    "\n\n```py",
    "thon\nprint(1)",
    "\nprint(2)\n```\n\n| a |\n|---|\n| 1 |\n",
    "| 2 | 3 |\n",
    "| 4 |\n",
  };
  /* Whether each step may be done in place. */
  static const gboolean in_place[] = { FALSE, FALSE, FALSE, FALSE, FALSE, TRUE, TRUE };
  TallyMarkdownView *view;
  GtkWidget *window = show_view (&view);

  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      guint before = stats_of (view).tails_in_place;

      tally_markdown_view_append (view, steps[i]);
      tally_markdown_view_flush (view);
      g_assert_cmpuint (stats_of (view).tails_in_place, ==, before + (in_place[i] ? 1 : 0));
    }

  assert_equals_set_at_once (view);
  gtk_window_destroy (GTK_WINDOW (window));
  tally_test_spin_idle ();
}

/* Blocks leaving the tail (a fence rendered again while its info string
 * arrives, a fence or table committed when it closes) give their line's
 * reserve tag back without taking it off the tag table: removing a tag
 * from the table removes it from the whole buffer, and GtkTextView then
 * lays out and draws every line again, not only the tail's. The tags
 * are reused, so the table does not grow with each render either. */
static void
test_tags_kept (void)
{
  static const char *steps[] = {
    "Intro paragraph.\n\n```py",
    "thon\nprint(1)",
    "\nprint(2)\n```\n\nMiddle.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "| 3 | 4 |\n",
    "\nText.\n\n```sql\nSELECT 1",
    ";\n```\n\n---\n\nThe end",
  };
  TallyMarkdownView *view;
  GtkWidget *window = show_view (&view);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (view));
  GtkTextTagTable *table = gtk_text_buffer_get_tag_table (buffer);
  guint removed = 0;
  int size;

  g_signal_connect_swapped (table, "tag-removed", G_CALLBACK (count_cb), &removed);
  /* The first block's render: a reserve tag made for it. */
  tally_markdown_view_append (view, steps[0]);
  tally_markdown_view_flush (view);
  size = gtk_text_tag_table_get_size (table);

  for (guint i = 1; i < G_N_ELEMENTS (steps); i++)
    {
      tally_markdown_view_append (view, steps[i]);
      tally_markdown_view_flush (view);
    }
  tally_markdown_view_finish (view);
  tally_markdown_view_flush (view);

  g_assert_cmpuint (removed, ==, 0);
  /* Four blocks at most at once (two fences, the table, the rule). */
  g_assert_cmpint (gtk_text_tag_table_get_size (table), <=, size + 3);

  assert_equals_set_at_once (view);
  gtk_window_destroy (GTK_WINDOW (window));
  tally_test_spin_idle ();
}

int
main (int   argc,
      char *argv[])
{
  tally_test_init_ui (&argc, &argv);

  g_test_add_func ("/tally/markdown-stream-inplace/fence", test_fence);
  g_test_add_func ("/tally/markdown-stream-inplace/spare-code-block", test_spare_code_block);
  g_test_add_func ("/tally/markdown-stream-inplace/table", test_table);
  g_test_add_func ("/tally/markdown-stream-inplace/shape-changes", test_shape_changes);
  g_test_add_func ("/tally/markdown-stream-inplace/tags-kept", test_tags_kept);

  return g_test_run ();
}
