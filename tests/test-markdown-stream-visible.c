/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "test-markdown-stream-visible"

#include "config.h"

#include <string.h>

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-markdown-view-private.h"
#include "tally-test-ui.h"

/*
 * TallyMarkdownView gives its text view only the band of its height that
 * is on screen, so that a long answer does not lay out and draw all of its
 * lines in every frame while it streams (issue 15, "stream without a
 * stall"). What must not change: the view's height, and where each line
 * of the text is in the view, wherever the band is; and a line scrolled
 * into sight is in the band in the next frame.
 */

typedef struct
{
  GtkWidget         *window;
  GtkWidget         *scroller;   /* NULL: the view is the window's child */
  TallyMarkdownView *view;
} Shown;

static Shown
show_view (gboolean in_scroller,
           int      height)
{
  Shown shown = { gtk_window_new (), NULL, TALLY_MARKDOWN_VIEW (tally_markdown_view_new ()) };

  if (in_scroller)
    {
      shown.scroller = gtk_scrolled_window_new ();
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (shown.scroller), GTK_WIDGET (shown.view));
      gtk_window_set_child (GTK_WINDOW (shown.window), shown.scroller);
    }
  else
    {
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);

      gtk_box_append (GTK_BOX (box), GTK_WIDGET (shown.view));
      gtk_window_set_child (GTK_WINDOW (shown.window), box);
    }
  gtk_window_set_default_size (GTK_WINDOW (shown.window), 600, height);
  gtk_window_present (GTK_WINDOW (shown.window));
  SPIN_UNTIL (gtk_widget_get_mapped (GTK_WIDGET (shown.view)));
  return shown;
}

static void
close_view (Shown *shown)
{
  gtk_window_destroy (GTK_WINDOW (shown->window));
  tally_test_spin_idle ();
}

/* Paragraphs, a list and a code block per section: some thousands of
 * pixels at 600 px wide. */
static char *
make_text (guint sections)
{
  GString *md = g_string_new ("# Visible band\n\n");

  for (guint i = 0; i < sections; i++)
    g_string_append_printf (md,
                            "## Section %u\n\n"
                            "Paragraph %u has enough words to wrap over two or three lines in a "
                            "window six hundred pixels wide, with **bold**, `code` and a "
                            "[link](https://example.com/%u) in it.\n\n"
                            "- first item of %u\n- second item\n\n"
                            "```sql\nSELECT %u;\n```\n\n",
                            i, i, i, i, i);
  return g_string_free (md, FALSE);
}

/* The layout has settled: no resize or frame work pending, and the
 * view's and its text view's heights the same over two rounds of idles
 * and frames (GtkTextView measures lines outside its band in idles; on a
 * loaded machine that can take more frames than usual). */
static void
settle (Shown *shown)
{
  GtkWidget *text_view = GTK_WIDGET (tally_markdown_view_get_text_view (shown->view));
  gint64 deadline = g_get_monotonic_time () + TALLY_TEST_WAIT_SECONDS * G_USEC_PER_SEC;
  int height = -1, text_height = -1;
  guint same = 0;

  while (same < 2)
    {
      tally_test_spin_idle ();
      tally_test_wait_frames (shown->window, 2);
      if (gtk_widget_get_height (GTK_WIDGET (shown->view)) == height &&
          gtk_widget_get_height (text_view) == text_height)
        same++;
      else
        same = 0;
      height = gtk_widget_get_height (GTK_WIDGET (shown->view));
      text_height = gtk_widget_get_height (text_view);
      g_assert_false (tally_test_deadline_passed (deadline));
    }
}

/* The y of the start of @line in the view's coordinates. */
static int
line_y_in_view (Shown *shown,
                int    line)
{
  GtkTextView *text_view = tally_markdown_view_get_text_view (shown->view);
  GtkTextIter iter;
  GdkRectangle rect;
  graphene_point_t point;
  int wx, wy;

  gtk_text_buffer_get_iter_at_line (gtk_text_view_get_buffer (text_view), &iter, line);
  gtk_text_view_get_iter_location (text_view, &iter, &rect);
  gtk_text_view_buffer_to_window_coords (text_view, GTK_TEXT_WINDOW_WIDGET, rect.x, rect.y, &wx, &wy);
  g_assert_true (gtk_widget_compute_point (GTK_WIDGET (text_view), GTK_WIDGET (shown->view),
                                           &GRAPHENE_POINT_INIT (wx, wy), &point));
  return (int)point.y;
}

static int
text_view_height (Shown *shown)
{
  return gtk_widget_get_height (GTK_WIDGET (tally_markdown_view_get_text_view (shown->view)));
}

static void
scroll_to (Shown  *shown,
           double  value)
{
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (shown->scroller));

  gtk_adjustment_set_value (adjustment, value);
  g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, value);
  settle (shown);
}

/* In a scrolled window: the text view gets a band of about the scroller's
 * height; the view's height is the one it has when all of it is shown; and
 * a line is at the same place in the view wherever it is scrolled. */
static void
test_band_follows_scrolling (void)
{
  g_autofree char *markdown = make_text (40);
  g_autofree char *short_text = make_text (12);
  Shown tall = show_view (FALSE, 4000);
  Shown shown = show_view (TRUE, 400);
  GtkTextBuffer *buffer;
  int full_height, height, n_lines, middle;
  int y_top[3];

  /* A text that fits in the tall window: the band is all of it, and the
   * rest of the window below it with the margin (see
   * test_band_below_the_end()). */
  tally_markdown_view_set_markdown (tall.view, short_text);
  settle (&tall);
  g_assert_cmpint (text_view_height (&tall), >=, gtk_widget_get_height (GTK_WIDGET (tall.view)));
  g_assert_cmpint (text_view_height (&tall), <=, gtk_widget_get_height (tall.window) + 2 * 64);

  /* The reference for the long text: the tall window's band (its first
   * 4,000 px) is another than the scroller's. */
  tally_markdown_view_set_markdown (shown.view, markdown);
  tally_markdown_view_set_markdown (tall.view, markdown);
  settle (&shown);
  settle (&tall);

  height = gtk_widget_get_height (GTK_WIDGET (shown.view));
  full_height = gtk_widget_get_height (GTK_WIDGET (tall.view));
  g_assert_cmpint (height, >, 4000);
  g_assert_cmpint (height, ==, full_height);

  /* Scrolled to the top: a band from the top, of the scroller's height
   * and a margin. */
  g_assert_cmpint (text_view_height (&shown), >=, gtk_widget_get_height (shown.scroller));
  g_assert_cmpint (text_view_height (&shown), <=, gtk_widget_get_height (shown.scroller) + 2 * 64);

  buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (shown.view));
  n_lines = gtk_text_buffer_get_line_count (buffer);
  middle = n_lines / 2;
  y_top[0] = line_y_in_view (&shown, middle);
  g_assert_cmpint (y_top[0], ==, line_y_in_view (&tall, middle));

  /* The middle line scrolled to the top of the scroller: it is in the
   * band, and still at the same y in the view. */
  scroll_to (&shown, y_top[0]);
  g_assert_cmpint (text_view_height (&shown), <=, gtk_widget_get_height (shown.scroller) + 2 * 64);
  {
    GtkWidget *text_view = GTK_WIDGET (tally_markdown_view_get_text_view (shown.view));
    graphene_point_t origin;

    g_assert_true (gtk_widget_compute_point (text_view, GTK_WIDGET (shown.view),
                                             &GRAPHENE_POINT_INIT (0, 0), &origin));
    g_assert_cmpint ((int)origin.y, <=, y_top[0]);
    g_assert_cmpint ((int)origin.y + text_view_height (&shown), >=,
                     y_top[0] + gtk_widget_get_height (shown.scroller));
  }
  y_top[1] = line_y_in_view (&shown, middle);
  g_assert_cmpint (y_top[1], ==, y_top[0]);

  /* And at the end. */
  scroll_to (&shown, height - gtk_widget_get_height (shown.scroller));
  y_top[2] = line_y_in_view (&shown, n_lines - 1);
  g_assert_cmpint (y_top[2], ==, line_y_in_view (&tall, n_lines - 1));
  g_assert_cmpint (y_top[2], >, height - gtk_widget_get_height (shown.scroller));

  /* The text view scrolling itself (to keep a mark in sight, or while a
   * selection is dragged) is undone: the view is what scrolls. */
  {
    GtkTextView *text_view = tally_markdown_view_get_text_view (shown.view);
    GtkAdjustment *own = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (text_view));
    double before = gtk_adjustment_get_value (own);

    g_assert_cmpfloat (before, >, 0);
    gtk_adjustment_set_value (own, 0);
    g_assert_cmpfloat (gtk_adjustment_get_value (own), ==, before);
    settle (&shown);
    g_assert_cmpint (line_y_in_view (&shown, n_lines - 1), ==, y_top[2]);
  }

  close_view (&shown);
  close_view (&tall);
}

/* An answer growing down the screen: its text view keeps one allocation,
 * from the view's top, as tall as the scroller and the margins, so that
 * its clip stays the same and a new line repaints that line only (a clip
 * that changes makes GSK repaint all of it); scrolling a little keeps it
 * too. The part below the view's end takes no pointer: what is drawn
 * there gets it. */
static void
test_band_below_the_end (void)
{
  Shown shown = show_view (TRUE, 400);
  Shown boxed = show_view (FALSE, 1000);
  g_autofree char *short_text = make_text (1);
  GtkWidget *text_view = GTK_WIDGET (tally_markdown_view_get_text_view (shown.view));
  GtkWidget *boxed_text_view = GTK_WIDGET (tally_markdown_view_get_text_view (boxed.view));
  GString *md = g_string_new ("# Growing\n\n");
  int band = -1, view_height;
  guint n_grew = 0;
  GtkWidget *picked;

  settle (&shown);
  for (guint i = 0; i < 40; i++)
    {
      graphene_point_t origin;

      g_string_append_printf (md, "Line %u of an answer that grows down the screen.\n\n", i);
      tally_markdown_view_set_markdown (shown.view, md->str);
      settle (&shown);

      g_assert_true (gtk_widget_compute_point (text_view, GTK_WIDGET (shown.view),
                                               &GRAPHENE_POINT_INIT (0, 0), &origin));
      g_assert_cmpfloat (origin.y, ==, 0);
      if (band < 0)
        band = text_view_height (&shown);
      g_assert_cmpint (text_view_height (&shown), ==, band);
      if (gtk_widget_get_height (GTK_WIDGET (shown.view)) > gtk_widget_get_height (shown.scroller))
        n_grew++;
    }
  /* The scroller's height and the margins; and the text did outgrow it. */
  g_assert_cmpint (band, ==, gtk_widget_get_height (shown.scroller) + 2 * 64);
  g_assert_cmpuint (n_grew, >, 0);

  /* A short text in a taller window: the text view reaches below the
   * view, but a point there is not the text view's. */
  tally_markdown_view_set_markdown (boxed.view, short_text);
  settle (&boxed);
  view_height = gtk_widget_get_height (GTK_WIDGET (boxed.view));
  g_assert_cmpint (gtk_widget_get_height (boxed_text_view), >, view_height + 100);
  g_assert_false (gtk_widget_contains (boxed_text_view, 10, view_height + 20));
  g_assert_true (gtk_widget_contains (boxed_text_view, 10, view_height / 2));
  g_assert_null (gtk_widget_pick (GTK_WIDGET (boxed.view), 10, view_height + 20, GTK_PICK_DEFAULT));
  picked = gtk_widget_pick (GTK_WIDGET (boxed.view), 10, view_height / 2, GTK_PICK_DEFAULT);
  g_assert_true (picked == boxed_text_view || gtk_widget_is_ancestor (picked, boxed_text_view));

  /* A short answer with more below it in the scroller, scrolled a few
   * pixels at a time: the text view keeps its allocation. */
  {
    GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *below = gtk_label_new ("Below");
    GtkWidget *view = tally_markdown_view_new ();
    GtkWidget *inner = GTK_WIDGET (tally_markdown_view_get_text_view (TALLY_MARKDOWN_VIEW (view)));
    GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (shown.scroller));
    int inner_height;

    gtk_widget_set_size_request (below, -1, 2000);
    gtk_box_append (GTK_BOX (box), view);
    gtk_box_append (GTK_BOX (box), below);
    gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (shown.scroller), box);
    tally_markdown_view_set_markdown (TALLY_MARKDOWN_VIEW (view), short_text);
    shown.view = TALLY_MARKDOWN_VIEW (view);
    settle (&shown);
    inner_height = gtk_widget_get_height (inner);
    g_assert_cmpint (inner_height, ==, gtk_widget_get_height (shown.scroller) + 2 * 64);
    for (guint i = 1; i <= 10; i++)
      {
        gtk_adjustment_set_value (adjustment, 4 * i);
        settle (&shown);
        g_assert_cmpint (gtk_widget_get_height (inner), ==, inner_height);
      }
  }

  g_string_free (md, TRUE);
  close_view (&shown);
  close_view (&boxed);
}

/* Streaming into a view scrolled to its end (as the transcript follows an
 * answer): after finish() the text, the height and the lines' places
 * equal those of the text set at once. */
static void
test_stream_at_the_end (void)
{
  g_autofree char *markdown = make_text (30);
  g_autofree char *expected = NULL;
  g_autofree char *actual = NULL;
  Shown shown = show_view (TRUE, 400);
  Shown ref = show_view (TRUE, 400);
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (shown.scroller));
  gsize len = strlen (markdown);
  int n_lines;

  for (gsize pos = 0; pos < len; pos += 700)
    {
      g_autofree char *delta = g_strndup (markdown + pos, MIN (700, len - pos));

      tally_markdown_view_append (shown.view, delta);
      tally_test_wait_frames (shown.window, 1);
      gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment));
    }
  tally_markdown_view_finish (shown.view);
  settle (&shown);
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment));
  settle (&shown);

  tally_markdown_view_set_markdown (ref.view, markdown);
  settle (&ref);

  expected = tally_markdown_view_dup_full_structure (ref.view);
  actual = tally_markdown_view_dup_full_structure (shown.view);
  g_assert_cmpstr (actual, ==, expected);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (shown.view)), ==,
                   gtk_widget_get_height (GTK_WIDGET (ref.view)));
  g_assert_cmpint (text_view_height (&shown), <, gtk_widget_get_height (GTK_WIDGET (shown.view)) / 2);

  n_lines = gtk_text_buffer_get_line_count (gtk_text_view_get_buffer (tally_markdown_view_get_text_view (ref.view)));
  g_assert_cmpint (line_y_in_view (&shown, n_lines - 1), ==, line_y_in_view (&ref, n_lines - 1));

  close_view (&shown);
  close_view (&ref);
}

int
main (int   argc,
      char *argv[])
{
  tally_test_init_ui (&argc, &argv);

  g_test_add_func ("/tally/markdown-stream/band-follows-scrolling", test_band_follows_scrolling);
  g_test_add_func ("/tally/markdown-stream/band-below-the-end", test_band_below_the_end);
  g_test_add_func ("/tally/markdown-stream/stream-at-the-end", test_stream_at_the_end);

  return g_test_run ();
}
