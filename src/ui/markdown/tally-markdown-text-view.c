/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tally-markdown-renderer.h"
#include "tally-markdown-text-view.h"

/**
 * TallyMarkdownTextView:
 *
 * The text view inside #TallyMarkdownView. It adds three things to
 * #GtkTextView:
 *
 * - The width a block (code, table, rule) gets at an anchor: the text
 *   width minus the block's indent, so that long code scrolls inside its
 *   block instead of widening the message. The blocks themselves are not
 *   anchored children of this view but children of #TallyMarkdownView,
 *   drawn over their anchors' lines (see tally-markdown-view-blocks.c).
 * - Block quotes get a thin bar per nesting level in the left margin,
 *   drawn below the text.
 * - Link underlines and strikethrough are drawn here, as crisp one-pixel
 *   lines on the pixel grid, rather than by Pango: GTK 4.8's GL renderer
 *   drops Pango's thinner-than-a-pixel decoration rectangles on about
 *   every other line, so struck text would look like plain text.
 * - Its height is where its last line ends, at the width it was last
 *   allocated; an allocation that changes that height asks to be
 *   measured again, once the allocation is over (see
 *   tally_markdown_text_view_size_allocate()).
 */

#define BAR_WIDTH   3
#define BAR_OFFSET  3
#define MIN_BLOCK_WIDTH 16

struct _TallyMarkdownTextView
{
  GtkTextView  parent_instance;

  int          width;     /* the last allocation's */
  int          measured;  /* the height the last vertical measure gave */
  guint        resize_idle_id;

  /* PangoFontDescription → PangoFontMetrics; computing metrics shapes a
   * sample text, far too slow to do for every frame */
  GHashTable  *metrics;
};

G_DEFINE_FINAL_TYPE (TallyMarkdownTextView, tally_markdown_text_view, GTK_TYPE_TEXT_VIEW)

/**
 * tally_markdown_text_view_get_block_width:
 * @self: a markdown text view
 * @width: the text view's width
 * @anchor: an anchor made by the renderer
 *
 * Returns: the width in pixels a block at @anchor gets when the view is
 *   @width wide: the text width minus the anchor's indent, or -1 (no
 *   request) while @width is not known (0 or less)
 */
int
tally_markdown_text_view_get_block_width (TallyMarkdownTextView *self,
                                          int                    width,
                                          GtkTextChildAnchor    *anchor)
{
  GtkTextView *text_view = GTK_TEXT_VIEW (self);

  g_return_val_if_fail (TALLY_IS_MARKDOWN_TEXT_VIEW (self), -1);

  if (width <= 0)
    return -1;

  width -= gtk_text_view_get_left_margin (text_view)
           + gtk_text_view_get_right_margin (text_view)
           + tally_markdown_anchor_get_indent (anchor);
  return MAX (width, MIN_BLOCK_WIDTH);
}

/* The height the vertical measure gives: where the last line ends, at the
 * width of the last allocation. */
static int
text_height (TallyMarkdownTextView *self)
{
  GtkTextView *text_view = GTK_TEXT_VIEW (self);
  GtkTextIter end;
  int y, height;

  gtk_text_buffer_get_end_iter (gtk_text_view_get_buffer (text_view), &end);
  gtk_text_view_get_line_yrange (text_view, &end, &y, &height);
  return y + height + gtk_text_view_get_top_margin (text_view) + gtk_text_view_get_bottom_margin (text_view);
}

static gboolean
resize_idle_cb (gpointer user_data)
{
  TallyMarkdownTextView *self = user_data;

  g_assert (TALLY_IS_MARKDOWN_TEXT_VIEW (self));

  self->resize_idle_id = 0;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  return G_SOURCE_REMOVE;
}

/* The height measured before an allocation is the one for the width and
 * the lines of the allocation before it. The allocation lays out the lines
 * on screen at its width, and that may give another height: the first
 * allocation's measure had no width yet (it gave 0 px), and lines laid out
 * for the first time get their height. GtkTextView asks for a resize when
 * its lines' heights change, but one asked for during an allocation is
 * dropped when the allocation ends (gtk_widget_allocate() clears the flags
 * of the widget and of each ancestor being allocated), so the view kept
 * the height measured before: 0 px for a text set before the view was
 * first shown in a box. A longer text got its height from lines that a
 * later idle laid out, outside the allocation; one whose lines the first
 * allocation laid out all, a one-line answer in a plan or approval card,
 * never did. So the resize is asked for again on the next main loop turn,
 * as TallyAssistantText does for its estimates: the next frame has the
 * right height. (Asking from the frame clock's "layout" signal, after
 * GtkRoot's handler, would correct it in the same frame, but a list row
 * resized there was left unallocated when the frame was drawn.) */
static void
tally_markdown_text_view_size_allocate (GtkWidget *widget,
                                        int        width,
                                        int        height,
                                        int        baseline)
{
  TallyMarkdownTextView *self = TALLY_MARKDOWN_TEXT_VIEW (widget);

  self->width = width;
  GTK_WIDGET_CLASS (tally_markdown_text_view_parent_class)->size_allocate (widget, width, height, baseline);

  if (self->resize_idle_id == 0 && text_height (self) != self->measured)
    self->resize_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE, resize_idle_cb, self, NULL);
}

/* The markdown view may allocate this text view below its own end, where
 * the screen goes on (visible_band() in tally-markdown-view-band.c); a point
 * there belongs to what is drawn there (the next row of a list), not to
 * this text. */
static gboolean
tally_markdown_text_view_contains (GtkWidget *widget,
                                   double     x,
                                   double     y)
{
  GtkWidget *parent = gtk_widget_get_parent (widget);
  graphene_point_t point;

  if (parent != NULL &&
      gtk_widget_compute_point (widget, parent, &GRAPHENE_POINT_INIT (x, y), &point) &&
      point.y >= gtk_widget_get_height (parent))
    return FALSE;

  return GTK_WIDGET_CLASS (tally_markdown_text_view_parent_class)->contains (widget, x, y);
}

/* Width: text wraps and blocks scroll, so the view needs no more than its
 * margins and the narrowest block. (When the blocks were anchored children,
 * GtkTextView asked for the width of the widest, which followed the view's
 * last width and held a narrowed transcript row at its old width, issue 14
 * §2; the blocks are the markdown view's children now, and this stays as
 * the floor.) */
static void
tally_markdown_text_view_measure (GtkWidget      *widget,
                                  GtkOrientation  orientation,
                                  int             for_size,
                                  int            *minimum,
                                  int            *natural,
                                  int            *minimum_baseline,
                                  int            *natural_baseline)
{
  TallyMarkdownTextView *self = TALLY_MARKDOWN_TEXT_VIEW (widget);
  GtkTextView *text_view = GTK_TEXT_VIEW (widget);
  int least;

  GTK_WIDGET_CLASS (tally_markdown_text_view_parent_class)->measure (widget, orientation, for_size,
                                                                     minimum, natural,
                                                                     minimum_baseline, natural_baseline);
  if (orientation == GTK_ORIENTATION_VERTICAL)
    {
      /* The height is where the last line ends. GtkTextView answers with
       * its layout's running total instead, which after a line changes
       * height (an anchored table while it streamed, or at a new width)
       * could keep that height twice: a blank band of a table's height
       * under the text, issue 14 §1. The lines' own positions are right. */
      if (self->width <= 0)
        {
          self->measured = *minimum;
          return;
        }
      *minimum = *natural = self->measured = text_height (self);
      if (minimum_baseline != NULL)
        *minimum_baseline = -1;
      if (natural_baseline != NULL)
        *natural_baseline = -1;
      return;
    }

  least = gtk_text_view_get_left_margin (text_view) + gtk_text_view_get_right_margin (text_view) + MIN_BLOCK_WIDTH;
  *minimum = MIN (*minimum, least);
  *natural = MAX (*natural, *minimum);
}

/* The pixels-above-lines of the line at @iter, from the renderer's gap tags. */
static int
line_gap (const GtkTextIter *iter)
{
  GSList *tags = gtk_text_iter_get_tags (iter);
  int gap = 0;

  for (GSList *l = tags; l != NULL; l = l->next)
    {
      g_autofree char *name = NULL;
      int above = 0;

      g_object_get (l->data, "name", &name, "pixels-above-lines", &above, NULL);
      if (name != NULL && g_str_has_prefix (name, "gap-"))
        gap = MAX (gap, above);
    }
  g_slist_free (tags);

  return gap;
}

/* The font of the text at @iter: the view's, scaled by a heading tag,
 * monospace in inline code. */
static PangoFontMetrics *
metrics_at (GtkTextView       *text_view,
            const GtkTextIter *iter)
{
  TallyMarkdownTextView *self = TALLY_MARKDOWN_TEXT_VIEW (text_view);
  PangoContext *context = gtk_widget_get_pango_context (GTK_WIDGET (text_view));
  PangoFontDescription *desc = pango_font_description_copy (pango_context_get_font_description (context));
  GSList *tags = gtk_text_iter_get_tags (iter);
  PangoFontMetrics *metrics;
  double scale = 1.0;
  int priority = -1;

  for (GSList *l = tags; l != NULL; l = l->next)
    {
      GtkTextTag *tag = l->data;
      g_autofree char *name = NULL;
      gboolean scale_set = FALSE;
      double tag_scale = 1.0;

      g_object_get (tag, "name", &name, "scale-set", &scale_set, "scale", &tag_scale, NULL);
      if (scale_set && gtk_text_tag_get_priority (tag) > priority)
        {
          scale = tag_scale;
          priority = gtk_text_tag_get_priority (tag);
        }
      if (g_strcmp0 (name, "code") == 0)
        pango_font_description_set_family (desc, "monospace");
    }
  g_slist_free (tags);

  pango_font_description_set_size (desc, (int)(pango_font_description_get_size (desc) * scale));

  metrics = g_hash_table_lookup (self->metrics, desc);
  if (metrics == NULL)
    {
      metrics = pango_context_get_metrics (context, desc, NULL);
      g_hash_table_insert (self->metrics, desc, metrics);
    }
  else
    pango_font_description_free (desc);

  return pango_font_metrics_ref (metrics);
}

typedef struct
{
  gboolean  open;
  int       line_y;
  int       line_height;
  int       x0;
  int       x1;
  double    offset;      /* from the line's bottom to the decoration, px */
  int       thickness;
} Segment;

static void
segment_flush (Segment        *segment,
               GtkSnapshot    *snapshot,
               const GdkRGBA  *color)
{
  int y;

  if (!segment->open || segment->x1 <= segment->x0)
    {
      segment->open = FALSE;
      return;
    }

  y = (int)floor (segment->line_y + segment->line_height - segment->offset + 0.5);
  gtk_snapshot_append_color (snapshot, color,
                             &GRAPHENE_RECT_INIT (segment->x0, y,
                                                  segment->x1 - segment->x0,
                                                  segment->thickness));
  segment->open = FALSE;
}

/* Draws the decoration of [start, end), one segment per display line. */
static void
decorate_range (GtkTextView       *text_view,
                GtkSnapshot       *snapshot,
                const GtkTextIter *start,
                const GtkTextIter *end,
                gboolean           strike,
                const GdkRGBA     *color)
{
  Segment segment = { FALSE, 0, 0, 0, 0, 0.0, 1 };
  GtkTextIter iter = *start;

  while (gtk_text_iter_compare (&iter, end) < 0)
    {
      gunichar ch = gtk_text_iter_get_char (&iter);
      GdkRectangle rect;

      if (ch != '\n' && ch != 0xfffc && ch != 0x2028)
        {
          gtk_text_view_get_iter_location (text_view, &iter, &rect);
          if (!segment.open || rect.y != segment.line_y)
            {
              PangoFontMetrics *metrics;
              double descent, position, thickness;

              segment_flush (&segment, snapshot, color);
              metrics = metrics_at (text_view, &iter);
              descent = pango_font_metrics_get_descent (metrics) / (double)PANGO_SCALE;
              position = (strike ? pango_font_metrics_get_strikethrough_position (metrics)
                                 : pango_font_metrics_get_underline_position (metrics)) / (double)PANGO_SCALE;
              thickness = (strike ? pango_font_metrics_get_strikethrough_thickness (metrics)
                                  : pango_font_metrics_get_underline_thickness (metrics)) / (double)PANGO_SCALE;
              pango_font_metrics_unref (metrics);

              segment.open = TRUE;
              segment.line_y = rect.y;
              segment.line_height = rect.height;
              segment.x0 = rect.x;
              segment.x1 = rect.x + rect.width;
              /* The baseline sits `descent` above the line's bottom. */
              segment.offset = descent + position;
              segment.thickness = MAX (1, (int)(thickness + 0.5));
            }
          else
            {
              segment.x0 = MIN (segment.x0, rect.x);
              segment.x1 = MAX (segment.x1, rect.x + rect.width);
            }
        }

      gtk_text_iter_forward_char (&iter);
    }

  segment_flush (&segment, snapshot, color);
}

static void
decorate_tag (GtkTextView       *text_view,
              GtkSnapshot       *snapshot,
              const char        *tag_name,
              gboolean           strike,
              const GdkRGBA     *color,
              const GtkTextIter *visible_start,
              const GtkTextIter *visible_end)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (text_view);
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), tag_name);
  GtkTextIter iter = *visible_start;

  if (tag == NULL)
    return;

  if (!gtk_text_iter_has_tag (&iter, tag) && !gtk_text_iter_forward_to_tag_toggle (&iter, tag))
    return;

  while (gtk_text_iter_compare (&iter, visible_end) < 0)
    {
      GtkTextIter end = iter;

      gtk_text_iter_forward_to_tag_toggle (&end, tag);
      decorate_range (text_view, snapshot, &iter, &end, strike, color);
      iter = end;
      if (!gtk_text_iter_forward_to_tag_toggle (&iter, tag))
        break;
    }
}

static void
snapshot_decorations (GtkTextView *text_view,
                      GtkSnapshot *snapshot)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (text_view);
  GtkTextTag *link = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), "link");
  GdkRectangle visible;
  GtkTextIter start, end;
  GdkRGBA text_color;
  GdkRGBA *link_color = NULL;

  gtk_text_view_get_visible_rect (text_view, &visible);
  gtk_text_view_get_line_at_y (text_view, &start, visible.y, NULL);
  gtk_text_view_get_line_at_y (text_view, &end, visible.y + visible.height, NULL);
  gtk_text_iter_forward_to_line_end (&end);

  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (text_view)), &text_color);
  if (link != NULL)
    g_object_get (link, "foreground-rgba", &link_color, NULL);

  decorate_tag (text_view, snapshot, "link", FALSE,
                link_color != NULL ? link_color : &text_color, &start, &end);
  decorate_tag (text_view, snapshot, "del", TRUE, &text_color, &start, &end);

  if (link_color != NULL)
    gdk_rgba_free (link_color);
}

static void
tally_markdown_text_view_snapshot_layer (GtkTextView      *text_view,
                                         GtkTextViewLayer  layer,
                                         GtkSnapshot      *snapshot)
{
  GdkRectangle visible;
  GtkTextIter iter, prev;
  GdkRGBA color;
  int prev_depth = 0;

  if (layer == GTK_TEXT_VIEW_LAYER_ABOVE_TEXT)
    {
      snapshot_decorations (text_view, snapshot);
      return;
    }

  gtk_text_view_get_visible_rect (text_view, &visible);
  gtk_text_view_get_line_at_y (text_view, &iter, visible.y, NULL);
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (text_view)), &color);
  color.alpha *= 0.3f;

  prev = iter;
  if (gtk_text_iter_backward_line (&prev))
    prev_depth = tally_markdown_iter_get_quote_depth (&prev);

  for (;;)
    {
      int y, height, depth;

      gtk_text_view_get_line_yrange (text_view, &iter, &y, &height);
      if (y > visible.y + visible.height)
        break;

      depth = tally_markdown_iter_get_quote_depth (&iter);
      for (int k = 0; k < depth; k++)
        {
          /* A quote that starts on this line leaves its gap out. */
          int top = k >= prev_depth ? y + line_gap (&iter) : y;

          gtk_snapshot_append_color (snapshot, &color,
                                     &GRAPHENE_RECT_INIT (k * TALLY_MARKDOWN_QUOTE_STEP + BAR_OFFSET,
                                                          top, BAR_WIDTH, y + height - top));
        }
      prev_depth = depth;

      if (!gtk_text_iter_forward_line (&iter))
        break;
    }
}

/* GtkTextView's realize lays out the paragraph that holds the insert mark
 * (for the input method's cursor position), at its layout's width then:
 * before the view's first allocation that is 1 px, and breaking a
 * paragraph at each word there shapes it again for every line (about
 * 10 ms for 600 characters; the insert mark follows the text, so it is
 * in the last paragraph). A view realized before it has a width (a
 * transcript row mapped as it is bound) lays that paragraph out unwrapped
 * instead, which shapes it once; the wrap mode is back before anything
 * else lays the text out, and the first allocation lays it out again at
 * its width in any case (docs/architecture.md §11.1, "Opening a long
 * session"). */
static void
tally_markdown_text_view_realize (GtkWidget *widget)
{
  TallyMarkdownTextView *self = TALLY_MARKDOWN_TEXT_VIEW (widget);
  GtkTextView *text_view = GTK_TEXT_VIEW (widget);
  GtkWrapMode wrap_mode = gtk_text_view_get_wrap_mode (text_view);

  if (self->width > 0 || wrap_mode == GTK_WRAP_NONE)
    {
      GTK_WIDGET_CLASS (tally_markdown_text_view_parent_class)->realize (widget);
      return;
    }

  gtk_text_view_set_wrap_mode (text_view, GTK_WRAP_NONE);
  GTK_WIDGET_CLASS (tally_markdown_text_view_parent_class)->realize (widget);
  gtk_text_view_set_wrap_mode (text_view, wrap_mode);
}

static void
tally_markdown_text_view_dispose (GObject *object)
{
  TallyMarkdownTextView *self = (TallyMarkdownTextView *)object;

  g_clear_handle_id (&self->resize_idle_id, g_source_remove);

  G_OBJECT_CLASS (tally_markdown_text_view_parent_class)->dispose (object);
}

static void
tally_markdown_text_view_finalize (GObject *object)
{
  TallyMarkdownTextView *self = (TallyMarkdownTextView *)object;

  g_hash_table_unref (self->metrics);

  G_OBJECT_CLASS (tally_markdown_text_view_parent_class)->finalize (object);
}

static void
tally_markdown_text_view_class_init (TallyMarkdownTextViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkTextViewClass *text_view_class = GTK_TEXT_VIEW_CLASS (klass);

  object_class->dispose = tally_markdown_text_view_dispose;
  object_class->finalize = tally_markdown_text_view_finalize;
  widget_class->contains = tally_markdown_text_view_contains;
  widget_class->measure = tally_markdown_text_view_measure;
  widget_class->realize = tally_markdown_text_view_realize;
  widget_class->size_allocate = tally_markdown_text_view_size_allocate;
  text_view_class->snapshot_layer = tally_markdown_text_view_snapshot_layer;
}

static void
tally_markdown_text_view_init (TallyMarkdownTextView *self)
{
  self->measured = -1;
  self->metrics = g_hash_table_new_full ((GHashFunc)pango_font_description_hash,
                                         (GEqualFunc)pango_font_description_equal,
                                         (GDestroyNotify)pango_font_description_free,
                                         (GDestroyNotify)pango_font_metrics_unref);
}

/**
 * tally_markdown_text_view_new:
 *
 * Returns: (transfer floating): a new, empty markdown text view
 */
GtkWidget *
tally_markdown_text_view_new (void)
{
  return g_object_new (TALLY_TYPE_MARKDOWN_TEXT_VIEW, NULL);
}
