/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include "tally-assistant-text.h"
#include "tally-markdown-view.h"

/**
 * TallyAssistantText:
 *
 * Assistant text, rendered as markdown. On bind the whole text is set once;
 * while the block streams, only what was added since is handed to the
 * markdown view (which coalesces appends to one update per frame), and the
 * view is told when the block is finished so it can close open constructs.
 *
 * The block's text only ever grows while it streams; a shorter text (a
 * replaced block) is set again from scratch.
 *
 * Height for width. The markdown view is a GtkTextView, which knows its
 * height only for the width it was last allocated: measured before that
 * (as GtkListView measures every row it binds, most of them never
 * allocated because they are off screen) it reports the height of its
 * text laid out one character per line, thousands of pixels, and the
 * list's scroll range would swing wildly as rows come and go. So for any
 * other width this widget answers with an estimate: each paragraph of the
 * text wrapped at that width by the font's average character width, in
 * lines of the font's height (no text is shaped for it, so a long
 * session's rows cost little to bind); once allocated at a width, the
 * view's own height for it is used.
 *
 * An estimate is wrong by up to a code block's or a table's height, and
 * nothing else tells the list that the row's height changed once the view
 * knows better: a row kept its estimate, a blank band under the text or
 * the next row drawn over its last line (issue 14 §1). So when the view is
 * allocated a height other than its own, the row asks to be measured again
 * — on the next main loop turn, since a resize asked for from inside the
 * list's allocation is dropped when that allocation ends.
 *
 * The last estimate is kept with its width, the text's length (the text
 * only grows while it streams; a bind forgets it) and the font, so
 * measuring the row again at the same width (each layout of a frame)
 * does not lay the text out again.
 */

struct _TallyAssistantText
{
  TallyBlockWidget parent_instance;

  GtkWidget  *view;
  gsize       shown_len;    /* bytes of the block's text the view has */
  int         allocated_width;   /* -1 until the view has been allocated */
  int         corrected_height;  /* the height the last correction asked for */
  int         estimate_width;    /* the last estimate's width, -1 for none */
  gsize       estimate_len;      /* and the text's length then */
  guint       estimate_font;     /* and the font's hash */
  int         estimate;
  guint       resize_idle_id;
};

G_DEFINE_FINAL_TYPE (TallyAssistantText, tally_assistant_text, TALLY_TYPE_BLOCK_WIDGET)

static void
view_set (TallyAssistantText *self,
          const char         *text)
{
  tally_markdown_view_set_markdown (TALLY_MARKDOWN_VIEW (self->view), text);
}

static void
view_append (TallyAssistantText *self,
             const char         *delta)
{
  tally_markdown_view_append (TALLY_MARKDOWN_VIEW (self->view), delta);
}

static void
view_finish (TallyAssistantText *self)
{
  tally_markdown_view_finish (TALLY_MARKDOWN_VIEW (self->view));
}

static void
update_incomplete (TallyAssistantText *self)
{
  if (TALLY_BLOCK_WIDGET_BLOCK (self) != NULL && tally_block_get_incomplete (TALLY_BLOCK_WIDGET_BLOCK (self)))
    gtk_widget_add_css_class (GTK_WIDGET (self), "incomplete");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self), "incomplete");
}

/* A reply that was cut streams no more: close what the text left open. */
static void
block_incomplete_cb (TallyAssistantText *self)
{
  g_assert (TALLY_IS_ASSISTANT_TEXT (self));

  update_incomplete (self);
  if (tally_block_get_incomplete (TALLY_BLOCK_WIDGET_BLOCK (self)) && !tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    view_finish (self);
}

static void
block_text_changed_cb (TallyAssistantText *self)
{
  const char *text = tally_block_get_text (TALLY_BLOCK_WIDGET_BLOCK (self));
  gsize len = strlen (text);

  g_assert (TALLY_IS_ASSISTANT_TEXT (self));

  if (len < self->shown_len)
    view_set (self, text);
  else if (len > self->shown_len)
    view_append (self, text + self->shown_len);
  self->shown_len = len;
}

static void
block_finished_cb (TallyAssistantText *self)
{
  g_assert (TALLY_IS_ASSISTANT_TEXT (self));

  if (tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    view_finish (self);
}

/* Lines wrapped at a word lose part of a word's width on average. */
#define WRAP_LOSS_CHARS 4
#define LINE_SPACING 2

static int
estimate_height (TallyAssistantText *self,
                 int                 width)
{
  const char *text = TALLY_BLOCK_WIDGET_BLOCK (self) != NULL ? tally_block_get_text (TALLY_BLOCK_WIDGET_BLOCK (self)) : "";
  PangoContext *context = gtk_widget_get_pango_context (self->view);
  PangoFontMetrics *metrics;
  int height = 0, char_width, line_height;
  glong per_line, lines = 0;
  guint font;

  if (text[0] == '\0')
    return 0;
  font = pango_font_description_hash (pango_context_get_font_description (context));
  if (width == self->estimate_width && strlen (text) == self->estimate_len && font == self->estimate_font)
    return self->estimate;

  metrics = pango_context_get_metrics (context, NULL, NULL);
  char_width = MAX (pango_font_metrics_get_approximate_char_width (metrics), 1);
  line_height = PANGO_PIXELS_CEIL (pango_font_metrics_get_height (metrics)) + LINE_SPACING;
  pango_font_metrics_unref (metrics);
  per_line = MAX ((glong) MAX (width, 1) * PANGO_SCALE / char_width - WRAP_LOSS_CHARS, 1);
  for (const char *p = text;;)
    {
      const char *end = strchr (p, '\n');
      glong chars = g_utf8_strlen (p, end != NULL ? end - p : -1);

      lines += MAX ((chars + per_line - 1) / per_line, 1);
      if (end == NULL)
        break;
      p = end + 1;
    }
  /* The spacing is between lines. */
  height = (int) MIN (lines * line_height - LINE_SPACING, G_MAXINT / 2);

  self->estimate_width = width;
  self->estimate_len = strlen (text);
  self->estimate_font = font;
  self->estimate = height;
  /* A new guess may be wrong again: let the allocation correct it. */
  self->corrected_height = -1;
  return height;
}

static gboolean
resize_idle_cb (gpointer user_data)
{
  TallyAssistantText *self = user_data;

  self->resize_idle_id = 0;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  return G_SOURCE_REMOVE;
}

static GtkSizeRequestMode
tally_assistant_text_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
tally_assistant_text_measure (GtkWidget      *widget,
                              GtkOrientation  orientation,
                              int             for_size,
                              int            *minimum,
                              int            *natural,
                              int            *minimum_baseline,
                              int            *natural_baseline)
{
  TallyAssistantText *self = TALLY_ASSISTANT_TEXT (widget);

  if (orientation == GTK_ORIENTATION_VERTICAL && for_size >= 0 &&
      for_size != self->allocated_width)
    {
      *minimum = *natural = estimate_height (self, for_size);
      *minimum_baseline = *natural_baseline = -1;
      return;
    }

  gtk_widget_measure (self->view, orientation, for_size,
                      minimum, natural, minimum_baseline, natural_baseline);
}

static void
tally_assistant_text_size_allocate (GtkWidget *widget,
                                    int        width,
                                    int        height,
                                    int        baseline)
{
  TallyAssistantText *self = TALLY_ASSISTANT_TEXT (widget);
  int minimum;

  /* Measure first: the height may be an estimate the view never gave. */
  gtk_widget_measure (self->view, GTK_ORIENTATION_VERTICAL, width, &minimum, NULL, NULL, NULL);
  self->allocated_width = width;
  if (height != minimum && minimum != self->corrected_height)
    {
      self->corrected_height = minimum;
      if (self->resize_idle_id == 0)
        self->resize_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE, resize_idle_cb, self, NULL);
    }
  gtk_widget_size_allocate (self->view,
                            &(GtkAllocation) { 0, 0, width, MAX (height, minimum) },
                            baseline);
}

/* Binding and unbinding both show the current block. */
static void
tally_assistant_text_bind (TallyBlockWidget *widget,
                           TallyBlock       *previous)
{
  TallyAssistantText *self = TALLY_ASSISTANT_TEXT (widget);
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);   /* NULL when unbinding */

  self->shown_len = 0;
  self->estimate_width = -1;

  if (block == NULL)
    {
      view_set (self, "");
      update_incomplete (self);
      return;
    }

  view_set (self, tally_block_get_text (block));
  self->shown_len = strlen (tally_block_get_text (block));
  if (tally_block_get_finished (block) || tally_block_get_incomplete (block))
    view_finish (self);
  update_incomplete (self);
}

static void
tally_assistant_text_dispose (GObject *object)
{
  TallyAssistantText *self = (TallyAssistantText *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  g_clear_handle_id (&self->resize_idle_id, g_source_remove);
  g_clear_pointer (&self->view, gtk_widget_unparent);

  G_OBJECT_CLASS (tally_assistant_text_parent_class)->dispose (object);
}

static void
tally_assistant_text_class_init (TallyAssistantTextClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_assistant_text_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_assistant_text_bind;

  widget_class->get_request_mode = tally_assistant_text_get_request_mode;
  widget_class->measure = tally_assistant_text_measure;
  widget_class->size_allocate = tally_assistant_text_size_allocate;

  gtk_widget_class_set_css_name (widget_class, "tallyassistanttext");
}

static void
tally_assistant_text_init (TallyAssistantText *self)
{
  self->allocated_width = -1;
  self->corrected_height = -1;
  self->estimate_width = -1;
  self->view = tally_markdown_view_new ();
  gtk_widget_set_parent (self->view, GTK_WIDGET (self));

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::text", G_CALLBACK (block_text_changed_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::finished", G_CALLBACK (block_finished_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::incomplete", G_CALLBACK (block_incomplete_cb), self);
}

/**
 * tally_assistant_text_new:
 *
 * Creates an empty view for a %TALLY_BLOCK_TEXT block.
 *
 * Returns: (transfer floating): a new #TallyAssistantText
 */
GtkWidget *
tally_assistant_text_new (void)
{
  return g_object_new (TALLY_TYPE_ASSISTANT_TEXT, NULL);
}


/**
 * tally_assistant_text_get_view:
 * @self: a #TallyAssistantText
 *
 * Returns: (transfer none): the widget that renders the text (a
 *   #TallyMarkdownView)
 */
GtkWidget *
tally_assistant_text_get_view (TallyAssistantText *self)
{
  g_return_val_if_fail (TALLY_IS_ASSISTANT_TEXT (self), NULL);
  return self->view;
}
