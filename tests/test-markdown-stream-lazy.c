/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "test-markdown-stream-lazy"

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
 * TallyMarkdownView while streaming (issue 15, "stream without a stall"):
 * code blocks and tables first show a placeholder and get their widget in
 * a later frame, a frame's budget at a time; a burst commits at most a
 * frame's share of settled text per frame, and so do the frames that
 * complete a finish() on a shown view. Whatever the frames did, the text
 * and widgets after the frames (or after finish()) equal those of the
 * same text set at once.
 */

#define N_FENCES 24

typedef struct
{
  GtkWidget         *window;
  TallyMarkdownView *view;
} Shown;

/* A view in a mapped window, so that it gets frame-clock ticks. */
static Shown
show_view (void)
{
  Shown shown = { gtk_window_new (), TALLY_MARKDOWN_VIEW (tally_markdown_view_new ()) };
  GtkWidget *scroller = gtk_scrolled_window_new ();

  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), GTK_WIDGET (shown.view));
  gtk_window_set_child (GTK_WINDOW (shown.window), scroller);
  gtk_window_set_default_size (GTK_WINDOW (shown.window), 700, 500);
  gtk_window_present (GTK_WINDOW (shown.window));
  SPIN_UNTIL (gtk_widget_get_mapped (GTK_WIDGET (shown.view)));
  return shown;
}

/* More than one frame's share (16 KB at most) of settled text: paragraphs, SQL
 * fences, a table in the middle. */
static char *
make_burst (void)
{
  GString *md = g_string_new ("# Burst\n\n");

  for (guint i = 0; i < N_FENCES; i++)
    {
      g_string_append_printf (md, "Paragraph %u explains the query below in a few words, "
                                  "with **bold** and `code` and a [link](https://example.com/%u).", i, i);
      for (guint k = 0; k < 4; k++)
        g_string_append (md, " It goes on long enough to wrap once or twice in the view, "
                             "so that layout has some work to do as well, and a burst of such "
                             "paragraphs is more than one frame's share of text.");
      g_string_append (md, "\n\n");
      g_string_append_printf (md, "```sql\nSELECT %u AS n,\n       name\nFROM t%u\nWHERE n > %u;\n```\n\n",
                              i, i, i * 7);
      if (i == N_FENCES / 2)
        {
          g_string_append (md, "| a | b |\n|---|--:|\n");
          for (guint r = 0; r < 12; r++)
            g_string_append_printf (md, "| row %u | %u |\n", r, r * r);
          g_string_append (md, "\n");
        }
    }
  g_string_append (md, "The end, in an open paragraph");
  return g_string_free (md, FALSE);
}

/* The widget shown at each anchor (over its line), described: "code:<language>:<code>",
 * "table:<columns>x<rows>", "rule", or the widget's type for anything else
 * (a placeholder). */
static char *
describe_widgets (TallyMarkdownView *view)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (view));
  GString *out = g_string_new (NULL);
  GtkTextIter iter;

  gtk_text_buffer_get_start_iter (buffer, &iter);
  do
    {
      GtkTextChildAnchor *anchor = gtk_text_iter_get_child_anchor (&iter);
      GtkWidget *widgets[1];

      if (anchor == NULL)
        continue;
      widgets[0] = tally_markdown_view_get_block (view, anchor);
      g_assert_nonnull (widgets[0]);

      if (TALLY_IS_MARKDOWN_CODE_BLOCK (widgets[0]))
        g_string_append_printf (out, "code:%s:%s\n",
                                tally_markdown_code_block_get_language (TALLY_MARKDOWN_CODE_BLOCK (widgets[0])),
                                tally_markdown_code_block_get_code (TALLY_MARKDOWN_CODE_BLOCK (widgets[0])));
      else if (tally_markdown_table_widget_is_table (widgets[0]))
        {
          const TallyMarkdownTable *table = tally_markdown_anchor_get_table (anchor);

          g_string_append_printf (out, "table:%ux%u\n", table->n_columns, table->n_rows);
        }
      else if (GTK_IS_SEPARATOR (widgets[0]))
        g_string_append (out, "rule\n");
      else
        g_string_append_printf (out, "%s\n", G_OBJECT_TYPE_NAME (widgets[0]));
    }
  while (gtk_text_iter_forward_char (&iter));

  return g_string_free (out, FALSE);
}

static guint
count_lines_with (const char *text,
                  const char *prefix)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    n += g_str_has_prefix (lines[i], prefix);
  return n;
}

static gboolean
has_updated (TallyMarkdownView *view)
{
  TallyMarkdownViewStats stats;

  tally_markdown_view_get_stats (view, &stats);
  return stats.updates >= 1;
}

static gboolean
settled_by_frames (TallyMarkdownView *view)
{
  TallyMarkdownViewStats stats;

  tally_markdown_view_get_stats (view, &stats);
  return !tally_markdown_view_get_pending (view) && stats.lazy_pending == 0;
}

/* The same text set at once: its structure and widgets. */
static void
reference (const char  *markdown,
           char       **structure,
           char       **widgets)
{
  Shown ref = show_view ();

  tally_markdown_view_set_markdown (ref.view, markdown);
  *structure = tally_markdown_view_dup_full_structure (ref.view);
  *widgets = describe_widgets (ref.view);
  gtk_window_destroy (GTK_WINDOW (ref.window));
  tally_test_spin_idle ();
}

typedef struct
{
  Shown  shown;
  char  *expected;           /* the same text set at once: its structure */
  char  *expected_widgets;   /* and its widgets (describe_widgets ()) */
} Burst;

/* The whole burst appended at once to a shown view, and its first frame:
 * one frame's share of the settled text (at most 16 KB) is committed, the
 * rest and the tail wait. */
static void
burst_first_frame (Burst *burst)
{
  g_autofree char *markdown = make_burst ();
  TallyMarkdownViewStats stats;

  g_assert_cmpuint (strlen (markdown), >, 16 * 1024 + 2048);
  reference (markdown, &burst->expected, &burst->expected_widgets);
  g_assert_cmpuint (count_lines_with (burst->expected_widgets, "code:sql:SELECT"), ==, N_FENCES);
  g_assert_cmpuint (count_lines_with (burst->expected_widgets, "table:2x13"), ==, 1);

  burst->shown = show_view ();
  tally_markdown_view_append (burst->shown.view, markdown);
  SPIN_UNTIL (has_updated (burst->shown.view));

  tally_markdown_view_get_stats (burst->shown.view, &stats);
  g_assert_cmpuint (stats.deferred_updates, >=, 1);
  g_assert_cmpuint (stats.committed_bytes, >, 0);
  g_assert_cmpuint (stats.committed_bytes, <=, 16 * 1024);
  g_assert_true (tally_markdown_view_get_pending (burst->shown.view));
}

/* Text and widgets equal to the text set at once, no fallback render,
 * nothing left behind and no frame work scheduled. Closes the view. */
static void
burst_check_and_close (Burst *burst)
{
  g_autofree char *actual = NULL;
  g_autofree char *actual_widgets = NULL;
  TallyMarkdownViewStats stats;

  g_assert_false (tally_markdown_view_get_pending (burst->shown.view));
  tally_markdown_view_get_stats (burst->shown.view, &stats);
  g_assert_cmpuint (stats.lazy_pending, ==, 0);
  g_assert_cmpuint (stats.fallbacks, ==, 0);

  actual = tally_markdown_view_dup_full_structure (burst->shown.view);
  actual_widgets = describe_widgets (burst->shown.view);
  g_assert_cmpstr (actual, ==, burst->expected);
  g_assert_cmpstr (actual_widgets, ==, burst->expected_widgets);
  g_assert_null (strstr (actual_widgets, "GtkDrawingArea"));

  /* No frame work is left scheduled either. */
  tally_test_wait_frames (burst->shown.window, 2);
  tally_markdown_view_get_stats (burst->shown.view, &stats);
  g_assert_cmpuint (stats.lazy_pending, ==, 0);
  g_assert_false (tally_markdown_view_get_pending (burst->shown.view));

  gtk_window_destroy (GTK_WINDOW (burst->shown.window));
  tally_test_spin_idle ();
  g_free (burst->expected);
  g_free (burst->expected_widgets);
}

/* finish() on the shown view: it returns at once, pending, and the next
 * frames complete it (each within its budget), then the check. */
static void
burst_finish_and_check (Burst *burst)
{
  TallyMarkdownViewStats stats;

  tally_markdown_view_finish (burst->shown.view);
  g_assert_true (tally_markdown_view_get_pending (burst->shown.view));
  SPIN_UNTIL (settled_by_frames (burst->shown.view));
  tally_markdown_view_get_stats (burst->shown.view, &stats);
  g_assert_cmpuint (stats.finished_by_frames, ==, 1);

  burst_check_and_close (burst);
}

/* The burst, then frames only: later frames catch up with the text and
 * make the widgets, a frame's budget at a time. */
static void
test_burst_by_frames (void)
{
  TallyMarkdownViewStats stats;
  Burst burst;

  burst_first_frame (&burst);

  SPIN_UNTIL (settled_by_frames (burst.shown.view));
  tally_markdown_view_get_stats (burst.shown.view, &stats);
  g_assert_cmpuint (stats.commits, >=, 2);
  g_assert_cmpuint (stats.lazy_blocks, >=, N_FENCES);
  g_assert_cmpuint (stats.fallbacks, ==, 0);

  burst_finish_and_check (&burst);
}

/* The burst, one frame, then finish(): whatever the frame left (text past
 * its share, placeholders) is done by the frames after finish(). */
static void
test_finish_leaves_nothing (void)
{
  Burst burst;

  burst_first_frame (&burst);
  burst_finish_and_check (&burst);
}

/* The burst, one frame, finish(), and at once a description of the
 * buffer: that completes the finish() under way there and then, without
 * waiting for frames. */
static void
test_finish_then_describe (void)
{
  g_autofree char *structure = NULL;
  TallyMarkdownViewStats stats;
  Burst burst;

  burst_first_frame (&burst);
  tally_markdown_view_finish (burst.shown.view);
  structure = tally_markdown_view_dup_structure (burst.shown.view);
  g_assert_false (tally_markdown_view_get_pending (burst.shown.view));
  tally_markdown_view_get_stats (burst.shown.view, &stats);
  g_assert_cmpuint (stats.finished_by_frames, ==, 0);
  g_assert_cmpuint (stats.lazy_pending, ==, 0);

  burst_check_and_close (&burst);
}

/* A fence streamed in pieces: its block first shows a placeholder (made in
 * a frame that rendered the fence) or the block itself, and once settled
 * it is a code block with the fence's code and language. */
static void
test_lazy_code_block (void)
{
  static const char *pieces[] = {
    "Before the code.\n\n```py", "thon\nprint(1)\n", "for i in range(3):\n    print(i)\n```\n\nAfter",
  };
  TallyMarkdownViewStats stats;
  g_autofree char *widgets = NULL;
  g_autofree char *structure = NULL;
  GPtrArray *blocks;
  Shown shown = show_view ();

  for (guint i = 0; i < G_N_ELEMENTS (pieces); i++)
    {
      tally_markdown_view_append (shown.view, pieces[i]);
      SPIN_UNTIL (settled_by_frames (shown.view));
    }

  tally_markdown_view_get_stats (shown.view, &stats);
  g_assert_cmpuint (stats.lazy_blocks, >=, 1);
  g_assert_cmpuint (stats.lazy_pending, ==, 0);

  widgets = describe_widgets (shown.view);
  g_assert_cmpstr (widgets, ==, "code:python:print(1)\nfor i in range(3):\n    print(i)\n");

  blocks = tally_test_find_all (GTK_WIDGET (shown.view), TALLY_TYPE_MARKDOWN_CODE_BLOCK);
  g_assert_cmpuint (blocks->len, ==, 1);
  g_assert_cmpstr (tally_markdown_code_block_get_language_name (g_ptr_array_index (blocks, 0)), ==, "Python");
  g_ptr_array_unref (blocks);

  tally_markdown_view_finish (shown.view);
  structure = tally_markdown_view_dup_structure (shown.view);
  g_assert_nonnull (strstr (structure, "[code-block lang=python]"));
  g_assert_nonnull (strstr (structure, "After"));

  gtk_window_destroy (GTK_WINDOW (shown.window));
  tally_test_spin_idle ();
}

/* set_markdown() is not streaming: the widgets are there at once. */
static void
test_set_is_eager (void)
{
  g_autofree char *widgets = NULL;
  TallyMarkdownViewStats stats;
  Shown shown = show_view ();

  tally_markdown_view_set_markdown (shown.view, "```sql\nSELECT 1;\n```\n\n| x |\n|---|\n| 1 |\n");
  widgets = describe_widgets (shown.view);
  g_assert_cmpstr (widgets, ==, "code:sql:SELECT 1;\ntable:1x2\n");
  tally_markdown_view_get_stats (shown.view, &stats);
  g_assert_cmpuint (stats.lazy_blocks, ==, 0);
  g_assert_cmpuint (stats.lazy_pending, ==, 0);

  gtk_window_destroy (GTK_WINDOW (shown.window));
  tally_test_spin_idle ();
}

int
main (int   argc,
      char *argv[])
{
  tally_test_init_ui (&argc, &argv);

  g_test_add_func ("/tally/markdown-stream/burst-by-frames", test_burst_by_frames);
  g_test_add_func ("/tally/markdown-stream/finish-leaves-nothing", test_finish_leaves_nothing);
  g_test_add_func ("/tally/markdown-stream/finish-then-describe", test_finish_then_describe);
  g_test_add_func ("/tally/markdown-stream/lazy-code-block", test_lazy_code_block);
  g_test_add_func ("/tally/markdown-stream/set-is-eager", test_set_is_eager);

  return g_test_run ();
}
