/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <math.h>

#include "tally-markdown-view-private.h"

/*
 * The band of a TallyMarkdownView's height that its text view is given:
 * measuring, allocating and drawing the view, and following the enclosing
 * scroller. Part of TallyMarkdownView (tally-markdown-view.c).
 */

/* A GtkTextView that does not scroll itself (it is as tall as its text,
 * inside a list or a viewport that scrolls) draws all of its lines in every
 * frame in which anything in it changed: while an answer streams, each
 * frame would paint the whole answer, where a GtkTextView in a scrolled
 * window of its own paints one screenful. So the view gives its text view
 * only the band of its height that is on screen (inside the nearest
 * enclosing GtkScrolledWindow and the window), and scrolls the text view to
 * that band with an adjustment of its own (GtkScrollable): GtkTextView then
 * lays out and draws the lines in the band only. The view still measures
 * the whole text's height, and the band follows the view: scrolling the
 * enclosing scroller re-allocates it, and a snapshot that finds the view
 * moved without a new allocation (a row above it in a list grew) queues
 * one for the next frame.
 *
 * What the band alone did not help with (GTK 4.8): a GtkTextView with a
 * child widget anchored on a line on screen pays for it in every frame in
 * which its buffer changed, even where the change is off screen. Measured
 * with software GL under Xvfb, 800x600, a line appended per frame to a bare
 * GtkTextView: 1-2 ms a frame; with one 700x200 label anchored on screen
 * 12-18 ms (36-40 ms when the text view is also reallocated each frame, as
 * this one is while its text grows), 4 ms with the label off screen; under
 * cairo 2 and 4.7 ms. So the blocks are this view's children instead
 * (tally-markdown-view-blocks.c): the text view keeps an empty line as tall
 * as each block, a hidden anchor on it, and this view allocates the block
 * over that line after the text view has laid out its band, and draws the
 * blocks that reach into the band after the text. The text view then
 * draws text only, and a block's own render node is reused from frame to
 * frame while it does not change. */

/* Extra pixels above and below what is on screen, so that a few pixels of
 * movement before the band catches up do not show a gap. */
#define BAND_MARGIN 64

static void
visible_band (TallyMarkdownView *self,
              int                height,
              int               *top,
              int               *bottom)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkWidget *clips[2] = { NULL, GTK_WIDGET (gtk_widget_get_root (widget)) };
  /* what of the view's coordinates is on screen, before it is cut to the
   * view's own height */
  double clip_top = -G_MAXINT, clip_bottom = G_MAXINT;
  gboolean clipped = FALSE;

  if (self->scroll_adjustment != NULL)
    clips[0] = gtk_widget_get_ancestor (widget, GTK_TYPE_SCROLLED_WINDOW);

  for (guint i = 0; i < G_N_ELEMENTS (clips); i++)
    {
      graphene_rect_t bounds;

      if (clips[i] == NULL || clips[i] == widget ||
          !gtk_widget_compute_bounds (clips[i], widget, &bounds))
        continue;
      clip_top = MAX (clip_top, bounds.origin.y);
      clip_bottom = MIN (clip_bottom, bounds.origin.y + bounds.size.height);
      clipped = TRUE;
    }
  if (!clipped)
    {
      clip_top = 0;
      clip_bottom = height;
    }

  *top = CLAMP ((int)floor (MAX (0, clip_top)) - BAND_MARGIN, 0, height);
  /* A view whose top is in the band gives its text view a band as tall
   * as the screen and the margins, reaching below the view's end while
   * the answer does not fill the screen: then the text view's allocation,
   * and so its clip, stay the same while the answer grows down the screen
   * and past its end, and while the view scrolls a little. A
   * clip that changes cannot be diffed (GSK damages all of both clips'
   * bounds): a text view as tall as its text was repainted whole at each
   * new line, 800x600 at the end of a screenful. The band covers what is
   * on screen: the view's top is at most a margin above the screen's, so
   * the screen's bottom is at most the screen's height and a margin below
   * the view's top. (A view below the screen keeps the line's worth
   * below.) Its text has no background (style.css), and
   * tally_markdown_text_view_contains() leaves the part below the view to
   * whatever is there. Only from the top: a text view scrolled to a value
   * would have it clamped to its text's height less the band. */
  if (*top == 0 && clip_bottom > clip_top && clip_bottom + BAND_MARGIN > 0)
    *bottom = (int)ceil (clip_bottom - clip_top) + 2 * BAND_MARGIN;
  else
    *bottom = CLAMP ((int)ceil (clip_bottom) + BAND_MARGIN, *top, height);
  /* A view scrolled out of sight keeps a line's worth, so that its text
   * view is never allocated no height at all. */
  if (*bottom - *top < 1 && height > 0)
    {
      *top = MIN (*top, height - 1);
      *bottom = *top + 1;
    }
}

static void
tally_markdown_view_measure (GtkWidget      *widget,
                             GtkOrientation  orientation,
                             int             for_size,
                             int            *minimum,
                             int            *natural,
                             int            *minimum_baseline,
                             int            *natural_baseline)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);

  /* The text view's height is for its width, which the blocks' lines
   * follow (a view not allocated yet measures them at their natural
   * width); lines whose height changed count with the new one. */
  if (orientation == GTK_ORIENTATION_VERTICAL)
    tally_markdown_blocks_reserve (self->blocks, gtk_widget_get_width (GTK_WIDGET (self->text_view)));
  gtk_widget_measure (GTK_WIDGET (self->text_view), orientation, for_size,
                      minimum, natural, minimum_baseline, natural_baseline);
  if (orientation == GTK_ORIENTATION_VERTICAL)
    {
      int pending = tally_markdown_blocks_get_pending_height (self->blocks);

      *minimum = MAX (0, *minimum + pending);
      *natural = MAX (0, *natural + pending);
    }
}

static void
tally_markdown_view_size_allocate (GtkWidget *widget,
                                   int        width,
                                   int        height,
                                   int        baseline)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);
  int top, bottom;

  visible_band (self, height, &top, &bottom);
  self->band_top = top;
  self->band_bottom = bottom;

  /* The blocks' lines get their heights before the text view lays them
   * out, and the blocks go where the text view put their lines. */
  tally_markdown_blocks_reserve (self->blocks, width);

  /* The value first, so that the text view lays out from the band's top. */
  gtk_adjustment_configure (self->vadjustment, top, 0, MAX (height, bottom), 16, bottom - top, bottom - top);
  gtk_widget_size_allocate (GTK_WIDGET (self->text_view),
                            &(GtkAllocation) { 0, top, width, bottom - top }, -1);
  if (gtk_adjustment_get_value (self->vadjustment) != top)
    gtk_adjustment_set_value (self->vadjustment, top);

  tally_markdown_blocks_allocate (self->blocks, top);
}

/**
 * _tally_markdown_view_band_value_changed:
 * @self: a markdown view
 *
 * Connected after the text view's own adjustment's #GtkAdjustment::value-changed.
 * The text view scrolls that adjustment itself at times (keeping a mark on
 * screen, or while a selection is dragged past an edge); the view, not the
 * text view, is what scrolls, so the band's top is put back.
 */
void
_tally_markdown_view_band_value_changed (TallyMarkdownView *self)
{
  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  if (gtk_adjustment_get_value (self->vadjustment) != self->band_top)
    gtk_adjustment_set_value (self->vadjustment, self->band_top);
}

/**
 * _tally_markdown_view_queue_band:
 * @self: a markdown view
 *
 * Asks for the view to be allocated again, so that its band follows what
 * is on screen now, without measuring it again.
 *
 * Moving the band makes the text view lay out the lines that came into
 * it, and lines laid out for the first time may get another height (a
 * heading is taller than the estimate of an unlaid line): GtkTextView
 * then asks for a resize from inside this view's allocation. GTK 4.8
 * drops such a resize when the allocation ends, but only if every
 * ancestor is being allocated too (gtk_widget_allocate() clears their
 * flags afterwards). A gtk_widget_queue_allocate() on this view alone
 * leaves its ancestors' allocations as they were, and GTK re-allocates
 * the view in place, walking down from ancestors whose flags it cleared
 * before the walk: the resize then marks them as needing an allocation
 * that no layout ever gives them (the mark stops where the walk started,
 * so the window is not told). A list row left so is not drawn ("Trying
 * to snapshot GtkListItemWidget without a current allocation") and nor is
 * anything in it after that, until the list is scrolled: an approval card
 * with a new Markdown file of headings left the transcript blank. So each
 * ancestor up to the enclosing scroller's content is queued for an
 * allocation of its own; none is measured again. */
void
_tally_markdown_view_queue_band (TallyMarkdownView *self)
{
  GtkWidget *scroller;

  g_return_if_fail (TALLY_IS_MARKDOWN_VIEW (self));

  scroller = gtk_widget_get_ancestor (GTK_WIDGET (self), GTK_TYPE_SCROLLED_WINDOW);
  for (GtkWidget *widget = GTK_WIDGET (self);
       widget != NULL && widget != scroller;
       widget = gtk_widget_get_parent (widget))
    gtk_widget_queue_allocate (widget);
}

static gboolean
band_tick_cb (GtkWidget     *widget,
              GdkFrameClock *frame_clock,
              gpointer       user_data)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);

  self->band_tick_id = 0;
  _tally_markdown_view_queue_band (self);
  return G_SOURCE_REMOVE;
}

static void
tally_markdown_view_snapshot (GtkWidget   *widget,
                              GtkSnapshot *snapshot)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);
  int height = gtk_widget_get_height (widget);
  int top, bottom;

  visible_band (self, height, &top, &bottom);
  if ((top < self->band_top || bottom > self->band_bottom) && self->band_tick_id == 0)
    self->band_tick_id = gtk_widget_add_tick_callback (widget, band_tick_cb, NULL, NULL);

  gtk_widget_snapshot_child (widget, GTK_WIDGET (self->text_view), snapshot);
  tally_markdown_blocks_snapshot (self->blocks, snapshot, self->band_top, self->band_bottom);
}

static void
scroll_value_changed_cb (TallyMarkdownView *self)
{
  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  _tally_markdown_view_queue_band (self);
}

/**
 * _tally_markdown_view_untrack_scroller:
 * @self: a markdown view
 *
 * Stops following the enclosing scroller's adjustment (on unmap and
 * dispose).
 */
void
_tally_markdown_view_untrack_scroller (TallyMarkdownView *self)
{
  if (self->scroll_adjustment != NULL)
    g_clear_signal_handler (&self->scroll_handler, self->scroll_adjustment);
  g_clear_object (&self->scroll_adjustment);
}

/**
 * _tally_markdown_view_track_scroller:
 * @self: a markdown view, mapped
 *
 * Follows the nearest enclosing #GtkScrolledWindow's vertical adjustment,
 * if any: scrolling it re-allocates the view, so that the band follows
 * what is on screen.
 */
void
_tally_markdown_view_track_scroller (TallyMarkdownView *self)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (self), GTK_TYPE_SCROLLED_WINDOW);

  _tally_markdown_view_untrack_scroller (self);
  if (scroller == NULL)
    return;

  self->scroll_adjustment = g_object_ref (gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller)));
  self->scroll_handler = g_signal_connect_object (self->scroll_adjustment, "value-changed",
                                                  G_CALLBACK (scroll_value_changed_cb), self,
                                                  G_CONNECT_SWAPPED);
}

/**
 * _tally_markdown_view_bind_band:
 * @widget_class: TallyMarkdownView's class, in its class_init
 *
 * Installs the view's measure, size_allocate and snapshot, which this
 * file implements.
 */
void
_tally_markdown_view_bind_band (GtkWidgetClass *widget_class)
{
  widget_class->measure = tally_markdown_view_measure;
  widget_class->size_allocate = tally_markdown_view_size_allocate;
  widget_class->snapshot = tally_markdown_view_snapshot;
}
