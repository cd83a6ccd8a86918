/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include "tally-markdown-renderer.h"
#include "tally-markdown-view-blocks.h"

/*
 * The block widgets of a TallyMarkdownView — code blocks, tables, rules and
 * the placeholders shown until a code block or table is made — are children
 * of the view itself, not widgets anchored in its text view: GTK 4.8's
 * GtkTextView pays tens of milliseconds per frame under GL for an anchored
 * child on screen whenever its buffer changes (see the "Drawing" section of
 * tally-markdown-view.c).
 *
 * The buffer still holds the renderer's GtkTextChildAnchor for each block,
 * with no widget attached. Such an anchor would take a line's height of its
 * own, so it is hidden (an invisible tag) and the rest of its line (its
 * newline) gets a 1-point font: the line is then a pixel or two high. A
 * tag of the block's own (anonymous, so that the buffer's described
 * structure does not change) on the line's first character gives it the
 * block's height less that as pixels-below-lines, and the block is drawn
 * over the line, at the anchor's place: the line is as tall as the block,
 * as it was with the block anchored, and the text around it is where it
 * was.
 *
 * A block's line gets its height whenever the view is measured or
 * allocated: tally_markdown_blocks_reserve() measures each block at its
 * width (the text view's, or the block's natural one while the text view
 * has none) and changes a reserve only when the height changed. The text view lays out a changed line later (in its
 * allocation for the lines in its band, in idles for the others), so the
 * view adds tally_markdown_blocks_get_pending_height() to the height its
 * text view measures, and its own height is right at once. After its text
 * view is allocated, the view calls tally_markdown_blocks_allocate() to put
 * each block at its line (gtk_text_view_get_iter_location() of the anchor,
 * through the text view's coordinates), and draws the blocks that reach
 * into the band on screen with tally_markdown_blocks_snapshot().
 */

typedef struct
{
  GtkTextChildAnchor *anchor;
  GtkWidget          *widget;
  GtkTextTag         *reserve;   /* on the anchor's line: its pixels-below-lines */
  int                 below;     /* pixels-below-lines set on @reserve */
  int                 width;     /* the allocation last measured for */
  int                 height;
  int                 y;         /* the allocation's, in the view */
} Block;

struct _TallyMarkdownBlocks
{
  GtkWidget             *parent;     /* not owned: the view owns this */
  TallyMarkdownTextView *text_view;
  GtkTextBuffer         *buffer;
  GtkTextTag            *hidden;     /* on each anchor */
  GtkTextTag            *tiny;       /* from each anchor to the next line */
  GPtrArray             *blocks;     /* Block, in the order they were added */
  GHashTable            *by_anchor;  /* GtkTextChildAnchor → Block */
  GPtrArray             *spare;      /* reserve tags applied nowhere, for new blocks */
};

static void
block_free (gpointer data)
{
  Block *block = data;

  if (block->widget != NULL)
    gtk_widget_unparent (block->widget);
  g_clear_object (&block->reserve);
  g_clear_object (&block->anchor);
  g_free (block);
}

TallyMarkdownBlocks *
tally_markdown_blocks_new (GtkWidget             *parent,
                           TallyMarkdownTextView *text_view)
{
  TallyMarkdownBlocks *self = g_new0 (TallyMarkdownBlocks, 1);

  self->parent = parent;
  self->text_view = text_view;
  self->buffer = g_object_ref (gtk_text_view_get_buffer (GTK_TEXT_VIEW (text_view)));
  /* An anchor without a widget takes a line's height of its own; hidden,
   * with its newline in a 1-point font, it leaves the line a pixel or two
   * high, and the reserve makes up the rest. */
  self->hidden = g_object_ref (gtk_text_buffer_create_tag (self->buffer, NULL, "invisible", TRUE, NULL));
  self->tiny = g_object_ref (gtk_text_buffer_create_tag (self->buffer, NULL, "size-points", 1.0, NULL));
  self->blocks = g_ptr_array_new_with_free_func (block_free);
  self->by_anchor = g_hash_table_new (NULL, NULL);
  self->spare = g_ptr_array_new_with_free_func (g_object_unref);
  return self;
}

/* Whether @tag applies to no text of the buffer. */
static gboolean
tag_is_unused (GtkTextBuffer *buffer,
               GtkTextTag    *tag)
{
  GtkTextIter iter;

  gtk_text_buffer_get_start_iter (buffer, &iter);
  return !gtk_text_iter_has_tag (&iter, tag) && !gtk_text_iter_forward_to_tag_toggle (&iter, tag);
}

/* Takes the block off the view, and keeps its reserve tag for the next
 * block. Removing a tag from the table would remove it from the whole
 * buffer, which GtkTextView takes for a change of every line: it lays out
 * all the text again and redraws every line on screen, in a frame in
 * which only the tail changed. So the tag comes off the anchor's line
 * only (a deleted anchor took it along), and waits, with no reserve, in
 * the spare tags. */
static void
remove_block (TallyMarkdownBlocks *self,
              guint                index)
{
  Block *block = g_ptr_array_index (self->blocks, index);
  GtkTextTag *reserve = g_object_ref (block->reserve);

  g_hash_table_remove (self->by_anchor, block->anchor);
  if (!gtk_text_child_anchor_get_deleted (block->anchor))
    {
      GtkTextIter start, end;

      gtk_text_buffer_get_iter_at_child_anchor (self->buffer, &start, block->anchor);
      end = start;
      gtk_text_iter_set_line_offset (&start, 0);
      gtk_text_iter_forward_char (&end);
      gtk_text_buffer_remove_tag (self->buffer, reserve, &start, &end);
    }
  g_ptr_array_remove_index (self->blocks, index);

  /* Once the tag applies nowhere, changing it changes no line. */
  if (tag_is_unused (self->buffer, reserve))
    {
      g_object_set (reserve, "pixels-below-lines", 0, NULL);
      g_ptr_array_add (self->spare, reserve);
    }
  else
    {
      gtk_text_tag_table_remove (gtk_text_buffer_get_tag_table (self->buffer), reserve);
      g_object_unref (reserve);
    }
}

void
tally_markdown_blocks_free (TallyMarkdownBlocks *self)
{
  if (self == NULL)
    return;

  /* The view goes: its tags leave the table at once, with no tag taken
   * off a line first or kept for a next block (remove_block()). */
  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);

      gtk_text_tag_table_remove (gtk_text_buffer_get_tag_table (self->buffer), block->reserve);
    }
  g_ptr_array_unref (self->blocks);
  g_hash_table_unref (self->by_anchor);
  for (guint i = 0; i < self->spare->len; i++)
    gtk_text_tag_table_remove (gtk_text_buffer_get_tag_table (self->buffer),
                               g_ptr_array_index (self->spare, i));
  g_ptr_array_unref (self->spare);
  gtk_text_tag_table_remove (gtk_text_buffer_get_tag_table (self->buffer), self->hidden);
  gtk_text_tag_table_remove (gtk_text_buffer_get_tag_table (self->buffer), self->tiny);
  g_object_unref (self->hidden);
  g_object_unref (self->tiny);
  g_object_unref (self->buffer);
  g_free (self);
}

/* Tags the anchor's line with a reserve tag of its own (paragraph
 * properties are read from a line's first character), the anchor with the
 * hidden tag, and it and the rest of its line (its newline) with the tiny
 * tag. */
static GtkTextTag *
tag_line (TallyMarkdownBlocks *self,
          GtkTextChildAnchor  *anchor)
{
  g_autoptr(GtkTextTag) reserve = NULL;
  GtkTextIter start, at, end;

  if (self->spare->len > 0)
    reserve = g_ptr_array_steal_index (self->spare, self->spare->len - 1);
  else
    reserve = g_object_ref (gtk_text_buffer_create_tag (self->buffer, NULL, NULL));

  gtk_text_buffer_get_iter_at_child_anchor (self->buffer, &at, anchor);
  start = end = at;
  gtk_text_iter_set_line_offset (&start, 0);
  gtk_text_iter_forward_char (&end);
  gtk_text_buffer_apply_tag (self->buffer, reserve, &start, &end);
  gtk_text_buffer_apply_tag (self->buffer, self->hidden, &at, &end);
  gtk_text_iter_forward_line (&end);
  gtk_text_buffer_apply_tag (self->buffer, self->tiny, &at, &end);
  return g_steal_pointer (&reserve);
}

/**
 * tally_markdown_blocks_set:
 * @self: the blocks
 * @anchor: a live anchor of the text view's buffer
 * @widget: (transfer floating): the widget to show at @anchor
 *
 * Shows @widget at @anchor; a widget already shown there is unparented
 * and @widget takes its place among the view's children.
 */
void
tally_markdown_blocks_set (TallyMarkdownBlocks *self,
                           GtkTextChildAnchor  *anchor,
                           GtkWidget           *widget)
{
  Block *block = g_hash_table_lookup (self->by_anchor, anchor);

  g_return_if_fail (!gtk_text_child_anchor_get_deleted (anchor));

  if (block == NULL)
    {
      block = g_new0 (Block, 1);
      block->anchor = g_object_ref (anchor);
      block->reserve = tag_line (self, anchor);
      g_ptr_array_add (self->blocks, block);
      g_hash_table_insert (self->by_anchor, anchor, block);
      /* Last among the view's children, as the blocks' lines follow each
       * other; a stolen widget is still a child, and only moves. */
      if (gtk_widget_get_parent (widget) != self->parent || gtk_widget_get_next_sibling (widget) != NULL)
        gtk_widget_insert_before (widget, self->parent, NULL);
    }
  else
    {
      gtk_widget_insert_after (widget, self->parent, block->widget);
      gtk_widget_unparent (block->widget);
    }

  /* The line gets the block's height when the view is measured next (a
   * new child queues that), not here: measuring a code block lays out its
   * code, which the frame's layout does anyway. */
  block->widget = widget;
  block->width = -1;   /* not allocated yet */
}

/* Height of one row of a placeholder, in pixels. */
#define PLACEHOLDER_ROW_HEIGHT 20

/**
 * tally_markdown_blocks_make_placeholder:
 * @anchor: a code or table anchor made by the renderer
 *
 * Makes a stand-in of about the block's height, shown while the block's
 * widget is not made yet, so that the text below does not jump much when
 * the block replaces it: the code's lines plus the header, or the table's
 * rows, at a typical line height.
 *
 * Returns: (transfer floating): the placeholder, CSS class `md-placeholder`
 */
GtkWidget *
tally_markdown_blocks_make_placeholder (GtkTextChildAnchor *anchor)
{
  GtkWidget *placeholder = gtk_drawing_area_new ();
  int rows;

  if (tally_markdown_anchor_get_kind (anchor) == TALLY_MARKDOWN_ANCHOR_CODE)
    {
      const char *code = tally_markdown_anchor_get_code (anchor);

      rows = 2;   /* the header, and the code's margins */
      for (const char *p = code; p != NULL && *p != '\0'; p++)
        rows += *p == '\n';
      rows += code != NULL && code[0] != '\0' && !g_str_has_suffix (code, "\n");
    }
  else
    rows = (int)tally_markdown_anchor_get_table (anchor)->n_rows;

  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (placeholder), rows * PLACEHOLDER_ROW_HEIGHT);
  gtk_widget_add_css_class (placeholder, "md-placeholder");
  return placeholder;
}

/**
 * tally_markdown_blocks_lookup:
 * @self: the blocks
 * @anchor: an anchor
 *
 * Returns: (transfer none) (nullable): the widget shown at @anchor
 */
GtkWidget *
tally_markdown_blocks_lookup (TallyMarkdownBlocks *self,
                              GtkTextChildAnchor  *anchor)
{
  Block *block = g_hash_table_lookup (self->by_anchor, anchor);

  return block != NULL ? block->widget : NULL;
}

/**
 * tally_markdown_blocks_steal:
 * @self: the blocks
 * @anchor: an anchor
 *
 * Takes the widget at @anchor away from the anchor, to be shown at
 * another one with tally_markdown_blocks_set(). It stays a child of the
 * view meanwhile (neither allocated nor drawn): taken off the view, a
 * code block was unrealized, and made its CSS and its code's layout
 * anew when it was added back, at every fence the view committed. Give
 * it up with tally_markdown_blocks_release() if no anchor takes it.
 *
 * Returns: (transfer full) (nullable): the widget that was shown at @anchor
 */
GtkWidget *
tally_markdown_blocks_steal (TallyMarkdownBlocks *self,
                             GtkTextChildAnchor  *anchor)
{
  Block *block = g_hash_table_lookup (self->by_anchor, anchor);
  GtkWidget *widget;
  guint index;

  if (block == NULL || !g_ptr_array_find (self->blocks, block, &index))
    return NULL;

  /* Freeing the block would unparent its widget. */
  widget = g_object_ref (g_steal_pointer (&block->widget));
  remove_block (self, index);
  return widget;
}

/**
 * tally_markdown_blocks_release:
 * @self: the blocks
 * @widget: a widget from tally_markdown_blocks_steal()
 *
 * Takes @widget off the view if no anchor took it. The caller still
 * holds the reference it got from tally_markdown_blocks_steal().
 */
void
tally_markdown_blocks_release (TallyMarkdownBlocks *self,
                               GtkWidget           *widget)
{
  if (gtk_widget_get_parent (widget) == self->parent)
    gtk_widget_unparent (widget);
}

/* Drops the blocks whose anchors were deleted from the buffer. */
void
tally_markdown_blocks_prune (TallyMarkdownBlocks *self)
{
  for (guint i = self->blocks->len; i > 0; i--)
    {
      Block *block = g_ptr_array_index (self->blocks, i - 1);

      if (gtk_text_child_anchor_get_deleted (block->anchor))
        remove_block (self, i - 1);
    }
}

/* Measures @block at its width for a text view @width wide (the text
 * width minus its indent, or the block's minimum if that is more; its
 * natural width while @width is not known) and makes its anchor's line
 * that tall. */
static void
reserve_block (TallyMarkdownBlocks *self,
               Block               *block,
               int                  width)
{
  int request = tally_markdown_text_view_get_block_width (self->text_view, width, block->anchor);
  int current = -1, minimum, natural, below;
  GdkRectangle line;
  GtkTextIter iter;

  /* A width request, as an anchored child had, so that the block's own
   * minimum and its height are the ones for that width. */
  gtk_widget_get_size_request (block->widget, &current, NULL);
  if (current != request)
    gtk_widget_set_size_request (block->widget, request, -1);

  gtk_widget_measure (block->widget, GTK_ORIENTATION_HORIZONTAL, -1, &minimum, &natural, NULL, NULL);
  block->width = request >= 0 ? MAX (request, minimum) : natural;
  gtk_widget_measure (block->widget, GTK_ORIENTATION_VERTICAL, block->width,
                      &block->height, NULL, NULL, NULL);

  /* The line is made as tall as the block: below its own (tiny) text. */
  gtk_text_buffer_get_iter_at_child_anchor (self->buffer, &iter, block->anchor);
  gtk_text_view_get_iter_location (GTK_TEXT_VIEW (self->text_view), &iter, &line);
  below = MAX (0, block->height - line.height);
  if (below != block->below)
    {
      block->below = below;
      g_object_set (block->reserve, "pixels-below-lines", below, NULL);
    }
}

/**
 * tally_markdown_blocks_reserve:
 * @self: the blocks
 * @width: the width the text view has or is about to get, or 0 when it
 *   has none yet
 *
 * Makes each block's line as tall as the block is at that width (see
 * reserve_block ()). The view calls it when it is measured, so that the
 * text view's height already has the blocks' heights, and when it is
 * allocated, before its text view.
 */
void
tally_markdown_blocks_reserve (TallyMarkdownBlocks *self,
                               int                  width)
{
  for (guint i = 0; i < self->blocks->len; i++)
    reserve_block (self, g_ptr_array_index (self->blocks, i), width);
}

/**
 * tally_markdown_blocks_get_pending_height:
 * @self: the blocks
 *
 * A line whose reserve changed keeps its old height in the text view's
 * measure until the text view lays it out again (in its allocation for
 * the lines in its band, in idles for the others). This is what the
 * blocks' lines will add to that height: their new heights minus the
 * ones the text view still counts.
 *
 * Returns: the difference, in pixels (negative when lines shrink)
 */
int
tally_markdown_blocks_get_pending_height (TallyMarkdownBlocks *self)
{
  GtkTextView *text_view = GTK_TEXT_VIEW (self->text_view);
  int pending = 0;

  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);
      GdkRectangle line;
      GtkTextIter iter;
      int y, height;

      gtk_text_buffer_get_iter_at_child_anchor (self->buffer, &iter, block->anchor);
      gtk_text_view_get_line_yrange (text_view, &iter, &y, &height);
      gtk_text_view_get_iter_location (text_view, &iter, &line);
      /* The gap above, the line's own text, the reserve below. */
      pending += (line.y - y) + line.height + block->below - height;
    }

  return pending;
}

/**
 * tally_markdown_blocks_allocate:
 * @self: the blocks
 * @text_view_y: where the text view is, in the view
 *
 * Puts each block at its anchor's line, after the text view has been
 * allocated (and has laid out the lines on screen).
 */
void
tally_markdown_blocks_allocate (TallyMarkdownBlocks *self,
                                int                  text_view_y)
{
  GtkTextView *text_view = GTK_TEXT_VIEW (self->text_view);

  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);
      GdkRectangle line;
      GtkTextIter iter;
      int x, y;

      if (block->width < 0)
        continue;

      gtk_text_buffer_get_iter_at_child_anchor (self->buffer, &iter, block->anchor);
      gtk_text_view_get_iter_location (text_view, &iter, &line);
      gtk_text_view_buffer_to_window_coords (text_view, GTK_TEXT_WINDOW_WIDGET,
                                             line.x, line.y, &x, &y);
      block->y = y + text_view_y;
      gtk_widget_size_allocate (block->widget,
                                &(GtkAllocation) { x, block->y, block->width, block->height },
                                -1);
    }
}

/**
 * tally_markdown_blocks_snapshot:
 * @self: the blocks
 * @snapshot: the view's snapshot
 * @top: the top of the band drawn, in the view
 * @bottom: its bottom
 *
 * Draws the blocks that reach into the band from @top to @bottom.
 */
void
tally_markdown_blocks_snapshot (TallyMarkdownBlocks *self,
                                GtkSnapshot         *snapshot,
                                int                  top,
                                int                  bottom)
{
  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);

      if (block->width < 0 || block->y >= bottom || block->y + block->height <= top)
        continue;
      gtk_widget_snapshot_child (self->parent, block->widget, snapshot);
    }
}
