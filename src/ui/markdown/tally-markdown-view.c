/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <gtksourceview/gtksource.h>

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "tally-markdown-code-block.h"
#include "tally-markdown-link.h"
#include "tally-markdown-renderer.h"
#include "tally-markdown-scanner.h"
#include "tally-markdown-table.h"
#include "tally-markdown-text-view.h"
#include "tally-markdown-view-blocks.h"
#include "tally-markdown-view-private.h"

/**
 * TallyMarkdownView:
 *
 * An assistant's markdown, rendered natively into one read-only,
 * selectable #GtkTextView.
 *
 * Inline markup, headings, lists, block quotes and links are text tags;
 * fenced code blocks (a #GtkSourceView with the language's highlighting, a
 * language label and a Copy button), tables (a #GtkGrid of labels) and
 * horizontal rules are widgets, children of the view drawn over the lines
 * of their child anchors in the buffer, whose width follows the view's.
 * Links open in the default browser when clicked (see
 * #TallyMarkdownView::activate-link); the pointer becomes a hand over them.
 *
 * ## Streaming
 *
 * Call tally_markdown_view_append() with each text delta as it arrives, as
 * often as you like, then tally_markdown_view_finish() once the text is
 * complete:
 *
 * |[<!-- language="C" -->
 * tally_markdown_view_set_markdown (view, "");
 * for each delta:
 *   tally_markdown_view_append (view, delta);
 * tally_markdown_view_finish (view);
 * ]|
 *
 * Deltas are only collected by append(); the buffer is updated at most once
 * per frame, from a tick callback that is removed as soon as nothing is
 * pending (so an idle view costs nothing, and a view that is not realized
 * renders only when finished or realized). An update re-renders only the
 * open tail of the text: everything before the last point where all
 * top-level blocks are closed (see #TallyMarkdownScanner: a blank line
 * followed by a line that can only start a new block, or the closing fence
 * of a code block) is rendered once into the buffer and then left alone,
 * together with its code-block and table widgets and any selection in it.
 *
 * A frame does at most a frame's budget of the view's own work (4 ms): a
 * burst that brings more settled text than the view parses and inserts in
 * 2.5 ms (at the rate it measured for its earlier commits; 1 to 16 KB) is
 * committed over several frames (the tail waits until the view has caught
 * up), and code blocks and tables made while streaming first show a
 * placeholder of about their height and get their widget in the same or a
 * later frame, oldest first, while the frame is expected to stay within
 * its budget at the time the last blocks took (one at least, unless the
 * commit took half of it). A widget that already shows the block in the
 * tail is kept, as above; and while only a fence's code or a table's rows
 * grow in the tail, the tail's text and anchors stay in the buffer and the
 * block just gets the new code or rows.
 * finish() on a mapped view leaves the rest to the next frames too, as
 * they would have done it, and then checks the result (below) in a frame
 * of its own unless the one before did little: a burst that ended just
 * now may leave tens of kilobytes and a dozen blocks, which finish() alone
 * took 15 to 70 ms to render (bench-markdown, Mesa's software GL and
 * cairo under Xvfb). set_markdown(), finish() on a view that is not
 * mapped, and the private flush() do all of it at once, as do
 * tally_markdown_view_dup_structure() and flush() when a finish() is
 * under way.
 * The first view shown also warms GtkSourceView, the icon theme and the
 * fonts of the tags up at low priority, so the first frames of the first
 * answer do not pay for them (see warm_up_cb ()).
 *
 * The result after finish() is the same buffer tally_markdown_view_set_markdown()
 * gives for the whole text — whatever the deltas' sizes, and also for an
 * unclosed fence (rendered as a code block reaching the end). finish()
 * checks this against a fresh parse and re-renders in full in the rare
 * cases where it does not hold (link reference definitions defined after
 * their use).
 *
 * ## Drawing
 *
 * The view is as tall as its text, but its text view is given only the
 * band of that height that is on screen in the nearest enclosing
 * #GtkScrolledWindow (and the window), and scrolled to it: GtkTextView lays
 * out and draws only those lines, so a frame of a streaming answer paints
 * about a screenful, not the whole answer. The band follows scrolling.
 * While the view's top is on screen, the band is as tall as the screen
 * and its margins, from the view's top, and may reach below the view's
 * end, so that the text view's allocation, and with it its clip, does not
 * change as the answer grows: GSK repaints the whole of a clip that
 * changed. The text view takes no pointer below the view's end.
 *
 * The block widgets are not anchored in the text view: the buffer keeps a
 * #GtkTextChildAnchor per block, without a widget, and the anchor's line is
 * made as tall as the block (a tag of the block's own sets its
 * pixels-below-lines). The view measures each block at its width whenever
 * it is measured or allocated (its own height counts a line the text view
 * has not laid out again yet at its new height), allocates each block over
 * its line, at the anchor's place, after its text view, and draws the
 * blocks in the band only. So the text view never has a child widget on
 * screen, which in GTK 4.8 made every frame in which its buffer changed
 * cost tens of milliseconds under GL (see tally-markdown-view-band.c).
 *
 * ## CSS
 *
 * The CSS name is `tallymarkdownview`; code blocks are `tallycodeblock`,
 * tables `.md-table-frame > … > .md-table` with `label.cell` children,
 * rules `separator.md-rule`. Tag colours come from the text view's colour
 * and the theme's `@accent_color`, and follow light/dark changes.
 */


/* What one frame may spend on the view's own work (parse, buffer, block
 * widgets), in µs: a 60 Hz frame is 16.7 ms, and layout and paint need the
 * rest. */
#define FRAME_BUDGET_US        4000
/* What committing settled text may take of it, in µs, when a burst brings
 * more than that: the bytes committed per frame are this time at the rate
 * the view measured for its earlier commits (the rest follows in the next
 * frames). */
#define COMMIT_BUDGET_US       2500
/* The rate assumed before the first commit, in bytes per µs (a paragraph
 * of 1 KB parses and goes into the buffer in about a millisecond). */
#define COMMIT_RATE_INITIAL    1.0
/* The time to make a code block or table widget assumed before the first
 * (then the view measures it), in µs. */
#define BLOCK_US_INITIAL       1500
/* Bounds of one frame's commit, in bytes. */
#define COMMIT_MIN_BYTES       1024
#define COMMIT_MAX_BYTES       (16 * 1024)

G_DEFINE_FINAL_TYPE (TallyMarkdownView, tally_markdown_view, GTK_TYPE_WIDGET)

enum {
  ACTIVATE_LINK,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* ---------------------------------------------------------------------- */
/* Colours                                                                  */

static void
read_colors (TallyMarkdownView *self,
             GdkRGBA           *foreground,
             GdkRGBA           *accent)
{
  GtkStyleContext *context = gtk_widget_get_style_context (GTK_WIDGET (self->text_view));

  gtk_style_context_get_color (context, foreground);
  if (!gtk_style_context_lookup_color (context, "accent_color", accent))
    {
      /* Not under libadwaita's stylesheet: GTK's own name, then a blue
       * that reads on both backgrounds. */
      if (!gtk_style_context_lookup_color (context, "theme_selected_bg_color", accent))
        gdk_rgba_parse (accent, "#3584e4");
    }
}

static void
apply_colors (TallyMarkdownView *self)
{
  GdkRGBA foreground, accent;

  read_colors (self, &foreground, &accent);
  if (self->have_colors &&
      gdk_rgba_equal (&foreground, &self->foreground) &&
      gdk_rgba_equal (&accent, &self->accent))
    return;

  self->foreground = foreground;
  self->accent = accent;
  self->have_colors = TRUE;
  tally_markdown_buffer_set_colors (self->buffer, &foreground, &accent);
}

static gboolean
colors_idle_cb (gpointer user_data)
{
  TallyMarkdownView *self = user_data;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  self->colors_idle_id = 0;
  apply_colors (self);
  return G_SOURCE_REMOVE;
}

/* The style is only up to date once the theme change has been applied to
 * the widgets, so the check waits for the next frame's layout. */
static void
style_changed_cb (TallyMarkdownView *self)
{
  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  if (self->colors_idle_id == 0)
    self->colors_idle_id = g_idle_add_full (GDK_PRIORITY_REDRAW + 10, colors_idle_cb, self, NULL);
}

/* ---------------------------------------------------------------------- */
/* Links                                                                    */

/**
 * _tally_markdown_view_activate_link:
 * @self: a markdown view
 * @url: the link's target, as the markdown gives it
 *
 * Emits #TallyMarkdownView::activate-link with @url made whole
 * (tally_markdown_link_normalize()).
 */
void
_tally_markdown_view_activate_link (TallyMarkdownView *self,
                                    const char        *url)
{
  g_autofree char *normalized = tally_markdown_link_normalize (url);
  gboolean handled = FALSE;

  g_signal_emit (self, signals[ACTIVATE_LINK], 0, normalized, &handled);
}

static void
table_link_cb (const char *url,
               gpointer    user_data)
{
  g_assert (TALLY_IS_MARKDOWN_VIEW (user_data));

  _tally_markdown_view_activate_link (TALLY_MARKDOWN_VIEW (user_data), url);
}

static gboolean
tally_markdown_view_real_activate_link (TallyMarkdownView *self,
                                        const char        *url)
{
  if (!tally_markdown_link_is_safe (url))
    {
      g_message ("Not opening link with unsupported scheme: %s", url);
      return TRUE;
    }

  tally_markdown_link_open (GTK_WIDGET (self), url);
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* Rendering                                                                */

static gboolean
is_anchor_char (gunichar ch,
                gpointer user_data)
{
  return ch == 0xfffc;
}

/* Takes the code-block and table widgets out of the tail, so that the next
 * render of the tail can reuse them: a fence or table that is streaming
 * then keeps its widget (creating a code block costs about a millisecond
 * and its first layout several more) and only gets the new text. They stay
 * children of the view until drop_reusable (). */
static void
take_tail_blocks (TallyMarkdownView *self)
{
  GtkTextIter iter, end;

  gtk_text_buffer_get_iter_at_mark (self->buffer, &iter, self->tail_mark);
  gtk_text_buffer_get_end_iter (self->buffer, &end);

  if (gtk_text_iter_get_char (&iter) != 0xfffc &&
      !gtk_text_iter_forward_find_char (&iter, is_anchor_char, NULL, &end))
    return;

  do
    {
      GtkTextChildAnchor *anchor = gtk_text_iter_get_child_anchor (&iter);
      GtkWidget *widget = anchor != NULL ? tally_markdown_blocks_lookup (self->blocks, anchor) : NULL;

      if (widget != NULL &&
          (TALLY_IS_MARKDOWN_CODE_BLOCK (widget) || tally_markdown_table_widget_is_table (widget)))
        g_ptr_array_add (self->reusable, tally_markdown_blocks_steal (self->blocks, anchor));
    }
  while (gtk_text_iter_forward_find_char (&iter, is_anchor_char, NULL, &end));
}

/* Takes the widgets that no anchor took again off the view. */
static void
drop_reusable (TallyMarkdownView *self)
{
  for (guint i = 0; i < self->reusable->len; i++)
    tally_markdown_blocks_release (self->blocks, g_ptr_array_index (self->reusable, i));
  g_ptr_array_set_size (self->reusable, 0);
}

static GtkWidget *
reuse_code_block (TallyMarkdownView  *self,
                  GtkTextChildAnchor *anchor)
{
  const char *language = tally_markdown_anchor_get_language (anchor);

  for (guint i = 0; i < self->reusable->len; i++)
    {
      GtkWidget *widget = g_ptr_array_index (self->reusable, i);

      if (TALLY_IS_MARKDOWN_CODE_BLOCK (widget) &&
          g_strcmp0 (tally_markdown_code_block_get_language (TALLY_MARKDOWN_CODE_BLOCK (widget)), language) == 0)
        {
          g_object_ref (widget);
          g_ptr_array_remove_index (self->reusable, i);
          tally_markdown_code_block_set_code (TALLY_MARKDOWN_CODE_BLOCK (widget),
                                              tally_markdown_anchor_get_code (anchor));
          return widget;
        }
    }

  return NULL;
}

static GtkWidget *
reuse_table (TallyMarkdownView  *self,
             GtkTextChildAnchor *anchor)
{
  for (guint i = 0; i < self->reusable->len; i++)
    {
      GtkWidget *widget = g_ptr_array_index (self->reusable, i);

      if (tally_markdown_table_widget_is_table (widget) &&
          tally_markdown_table_widget_update (widget, tally_markdown_anchor_get_table (anchor)))
        {
          g_object_ref (widget);
          g_ptr_array_remove_index (self->reusable, i);
          return widget;
        }
    }

  return NULL;
}

/* A code block costs a millisecond or two to make (its template, a
 * GtkSourceView, their CSS nodes): the largest part of the frame in which a
 * streamed fence opens. So while an answer streams, one is made ahead in
 * an idle, between the frames, and the next fence takes it; then another
 * is made. The streaming ends (settle (), set_markdown ()) drop it. */
static gboolean
make_spare_code_block_cb (gpointer user_data)
{
  TallyMarkdownView *self = user_data;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  self->spare_idle_id = 0;
  if (self->spare_code == NULL)
    self->spare_code = g_object_ref_sink (tally_markdown_code_block_new ("", NULL));
  return G_SOURCE_REMOVE;
}

static void
ensure_spare_code_block (TallyMarkdownView *self)
{
  if (self->spare_code == NULL && self->spare_idle_id == 0)
    self->spare_idle_id = g_idle_add_full (G_PRIORITY_LOW, make_spare_code_block_cb, self, NULL);
}

static void
drop_spare_code_block (TallyMarkdownView *self)
{
  g_clear_handle_id (&self->spare_idle_id, g_source_remove);
  g_clear_object (&self->spare_code);
}

/* Returns: (transfer floating) (nullable): the spare code block showing
 * @anchor's code, or %NULL when none is ready */
static GtkWidget *
take_spare_code_block (TallyMarkdownView  *self,
                       GtkTextChildAnchor *anchor)
{
  TallyMarkdownCodeBlock *block;

  if (self->spare_code == NULL)
    return NULL;

  block = TALLY_MARKDOWN_CODE_BLOCK (g_steal_pointer (&self->spare_code));
  tally_markdown_code_block_set_language (block, tally_markdown_anchor_get_language (anchor));
  tally_markdown_code_block_set_code (block, tally_markdown_anchor_get_code (anchor));
  /* Our reference becomes the floating one a new widget has. */
  g_object_force_floating (G_OBJECT (block));
  ensure_spare_code_block (self);
  self->stats.spare_code_blocks++;
  return GTK_WIDGET (block);
}

/* Makes the widget for a code or table anchor. */
static GtkWidget *
make_block (TallyMarkdownView  *self,
            GtkTextChildAnchor *anchor)
{
  if (tally_markdown_anchor_get_kind (anchor) == TALLY_MARKDOWN_ANCHOR_CODE)
    {
      GtkWidget *spare = take_spare_code_block (self, anchor);

      if (spare != NULL)
        return spare;
      return tally_markdown_code_block_new (tally_markdown_anchor_get_code (anchor),
                                            tally_markdown_anchor_get_language (anchor));
    }

  return tally_markdown_table_widget_new (tally_markdown_anchor_get_table (anchor),
                                          table_link_cb, self);
}

static void
attach_blocks (TallyMarkdownView *self,
               GPtrArray         *anchors)
{
  for (guint i = 0; i < anchors->len; i++)
    {
      GtkTextChildAnchor *anchor = g_ptr_array_index (anchors, i);
      g_autoptr(GtkWidget) reused = NULL;
      GtkWidget *block = NULL;

      switch (tally_markdown_anchor_get_kind (anchor))
        {
        case TALLY_MARKDOWN_ANCHOR_CODE:
        case TALLY_MARKDOWN_ANCHOR_TABLE:
          reused = tally_markdown_anchor_get_kind (anchor) == TALLY_MARKDOWN_ANCHOR_CODE
                   ? reuse_code_block (self, anchor)
                   : reuse_table (self, anchor);
          if (reused != NULL)
            block = reused;
          else if (self->eager)
            block = make_block (self, anchor);
          else
            {
              /* Made later, a frame's budget at a time (make_lazy_blocks ()). */
              block = tally_markdown_blocks_make_placeholder (anchor);
              g_ptr_array_add (self->lazy, g_object_ref (anchor));
            }
          break;

        case TALLY_MARKDOWN_ANCHOR_RULE:
          block = gtk_separator_new (GTK_ORIENTATION_HORIZONTAL);
          gtk_widget_add_css_class (block, "md-rule");
          break;

        case TALLY_MARKDOWN_ANCHOR_NONE:
        default:
          break;
        }

      if (block != NULL)
        tally_markdown_blocks_set (self->blocks, anchor, block);
    }
}

/* Replaces placeholders by their block widgets, oldest first: all of them
 * when @budget_end is 0, else (one at least when @at_least_one) while the
 * frame's work (since @budget_end - FRAME_BUDGET_US) is expected to stay
 * within its budget with one block more, at the time the last blocks took.
 * Anchors that were deleted meanwhile (a tail rendered again) are dropped.
 * Returns: whether placeholders are left. */
static gboolean
make_lazy_blocks (TallyMarkdownView *self,
                  gint64             budget_end,
                  gboolean           at_least_one)
{
  guint done = 0;
  guint made = 0;

  while (done < self->lazy->len)
    {
      GtkTextChildAnchor *anchor = g_ptr_array_index (self->lazy, done);
      gint64 start = g_get_monotonic_time ();
      gboolean from_spare;

      if (budget_end != 0 && (made > 0 || !at_least_one) &&
          start + (gint64)self->block_us >= budget_end)
        break;
      done++;
      if (gtk_text_child_anchor_get_deleted (anchor))
        continue;

      /* A spare taken costs next to nothing and says nothing of the
       * next block made here. */
      from_spare = self->spare_code != NULL &&
                   tally_markdown_anchor_get_kind (anchor) == TALLY_MARKDOWN_ANCHOR_CODE;
      tally_markdown_blocks_set (self->blocks, anchor, make_block (self, anchor));
      if (!from_spare)
        self->block_us = 0.5 * self->block_us + 0.5 * (double)(g_get_monotonic_time () - start);
      self->stats.lazy_blocks++;
      made++;
    }

  g_ptr_array_remove_range (self->lazy, 0, done);
  return self->lazy->len > 0;
}

static void
insert_doc (TallyMarkdownView *self,
            TallyMarkdownDoc  *doc)
{
  g_autoptr(GPtrArray) anchors = g_ptr_array_new_with_free_func (g_object_unref);

  tally_markdown_doc_insert (doc, self->buffer, anchors);
  attach_blocks (self, anchors);
}

/* Where the tail starts: the committed part, when there is one, ends with
 * the newline that separates it from the tail (see update ()). Keeping that
 * newline out of the tail means re-rendering the tail never touches a
 * committed line, which GtkTextView would otherwise lay out and draw again
 * on every frame. */
static TallyMarkdownPosition
tail_position (TallyMarkdownView *self)
{
  GtkTextIter iter;

  gtk_text_buffer_get_iter_at_mark (self->buffer, &iter, self->tail_mark);
  return gtk_text_iter_is_start (&iter) ? TALLY_MARKDOWN_AT_START : TALLY_MARKDOWN_AFTER_NEWLINE;
}

/* Parses source[from, to) to be rendered at the tail mark. */
static TallyMarkdownDoc *
parse_range (TallyMarkdownView *self,
             gsize              from,
             gsize              to)
{
  TallyMarkdownDoc *doc;
  gint64 start = g_get_monotonic_time ();

  doc = tally_markdown_doc_parse (self->source->str + from, to - from, tail_position (self));
  self->frame_parse_us += g_get_monotonic_time () - start;
  self->stats.bytes_rendered += to - from;
  self->stats.blocks_rendered += tally_markdown_doc_get_n_blocks (doc);
  return doc;
}

/* Renders source[from, to) at the end of the buffer (the tail mark);
 * returns the number of top-level blocks rendered. */
static guint
render_range (TallyMarkdownView *self,
              gsize              from,
              gsize              to)
{
  g_autoptr(TallyMarkdownDoc) doc = parse_range (self, from, to);
  gint64 start = g_get_monotonic_time ();

  insert_doc (self, doc);
  self->frame_insert_us += g_get_monotonic_time () - start;
  return tally_markdown_doc_get_n_blocks (doc);
}

static void
delete_tail (TallyMarkdownView *self)
{
  GtkTextIter start, end;

  g_clear_pointer (&self->tail_doc, tally_markdown_doc_free);

  gtk_text_buffer_get_iter_at_mark (self->buffer, &start, self->tail_mark);
  gtk_text_buffer_get_end_iter (self->buffer, &end);
  if (!gtk_text_iter_equal (&start, &end))
    {
      GdkRectangle rect;

      /* GTK 4.8's text layout keeps a display (a PangoLayout) per line it
       * drew or was asked about, and an edit drops the displays of the
       * lines it spans; but when it has none for the edit's first line,
       * it drops from the first line it has, at the buffer's top. The
       * blocks ask about their anchors' lines, so a streaming fence's
       * line at the end often has one while the tail's first line does
       * not: every line on screen was laid out and shaped again in the
       * next snapshot. Asking about the first line makes the drop start
       * there (bench-markdown paced: 15 % fewer line layouts). */
      gtk_text_view_get_iter_location (GTK_TEXT_VIEW (self->text_view), &start, &rect);
      gtk_text_buffer_delete (self->buffer, &start, &end);
    }
  tally_markdown_blocks_prune (self->blocks);
}

/* Ends the committed part with the separator of the block to come, and
 * starts the tail after it. */
static void
start_tail_at_end (TallyMarkdownView *self)
{
  GtkTextIter end, last;

  gtk_text_buffer_get_end_iter (self->buffer, &end);
  last = end;
  if (gtk_text_iter_backward_char (&last) && gtk_text_iter_get_char (&last) != '\n')
    {
      gtk_text_buffer_insert (self->buffer, &end, "\n", 1);
      gtk_text_buffer_get_end_iter (self->buffer, &end);
    }
  gtk_text_buffer_move_mark (self->buffer, self->tail_mark, &end);
}

static void
clear_buffer (TallyMarkdownView *self)
{
  GtkTextIter start;

  gtk_text_buffer_set_text (self->buffer, "", 0);
  tally_markdown_blocks_prune (self->blocks);
  g_clear_pointer (&self->tail_doc, tally_markdown_doc_free);
  g_ptr_array_set_size (self->lazy, 0);
  gtk_text_buffer_get_start_iter (self->buffer, &start);
  gtk_text_buffer_move_mark (self->buffer, self->tail_mark, &start);
  tally_markdown_scanner_init (&self->scanner);
  self->committed = 0;
  self->stats.committed_bytes = 0;
}

static void
remove_tick (TallyMarkdownView *self)
{
  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
}

/* Shows the anchors' new block data (the code or rows of a fence or table
 * still streaming) in the widgets at them; a placeholder's widget reads
 * it when it is made. */
static void
refresh_blocks (TallyMarkdownView *self,
                GPtrArray         *anchors)
{
  for (guint i = 0; i < anchors->len; i++)
    {
      GtkTextChildAnchor *anchor = g_ptr_array_index (anchors, i);
      GtkWidget *widget = tally_markdown_blocks_lookup (self->blocks, anchor);

      if (widget == NULL)
        continue;
      if (TALLY_IS_MARKDOWN_CODE_BLOCK (widget))
        tally_markdown_code_block_set_code (TALLY_MARKDOWN_CODE_BLOCK (widget),
                                            tally_markdown_anchor_get_code (anchor));
      else if (tally_markdown_table_widget_is_table (widget) &&
               !tally_markdown_table_widget_update (widget, tally_markdown_anchor_get_table (anchor)))
        tally_markdown_blocks_set (self->blocks, anchor, make_block (self, anchor));
    }
}

/* Renders the open tail, source[committed, len). When it inserts the same
 * text and tags as the tail shown, with blocks of the same kind in the same
 * places (a fence or a table that gained a line), only those blocks' data
 * changes: the buffer and the widgets at its anchors stay as they are.
 * Otherwise the tail is deleted and inserted again, and its block widgets
 * move to the new anchors: taken off the text view (unmapped and
 * unrealized) and added back, re-styled and laid out again, every frame
 * while a fence streams. */
static void
render_tail (TallyMarkdownView *self)
{
  g_autoptr(TallyMarkdownDoc) doc = parse_range (self, self->committed, self->source->len);
  g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func (g_object_unref);
  gint64 start = g_get_monotonic_time ();
  GtkTextIter tail;

  gtk_text_buffer_get_iter_at_mark (self->buffer, &tail, self->tail_mark);
  if (self->tail_doc != NULL &&
      tally_markdown_doc_update_in_place (doc, self->tail_doc, self->buffer, &tail, changed))
    {
      refresh_blocks (self, changed);
      self->stats.tails_in_place++;
    }
  else
    {
      take_tail_blocks (self);
      delete_tail (self);
      insert_doc (self, doc);
    }
  self->frame_insert_us += g_get_monotonic_time () - start;

  g_clear_pointer (&self->tail_doc, tally_markdown_doc_free);
  self->tail_doc = g_steal_pointer (&doc);
}

/* How many bytes of settled text a frame commits when it cannot commit
 * all: what the measured rate gets through in COMMIT_BUDGET_US. */
static gsize
commit_budget (TallyMarkdownView *self)
{
  double bytes = self->commit_rate * COMMIT_BUDGET_US;

  return (gsize)CLAMP (bytes, COMMIT_MIN_BYTES, COMMIT_MAX_BYTES);
}

/* The last split point in source[0, committed + budget], or when there is
 * none after the committed part, the first one after it (the scanner reads
 * each line once, so this costs a pass over the text, no more). */
static gsize
find_partial_commit (TallyMarkdownView *self,
                     gsize              commit,
                     gsize              budget)
{
  TallyMarkdownScanner probe;
  gsize limit = self->committed + budget;
  gsize partial;

  tally_markdown_scanner_init (&probe);
  for (;;)
    {
      partial = tally_markdown_scanner_feed (&probe, self->source->str, MIN (limit, commit));
      if (partial > self->committed || limit >= commit)
        return MAX (partial, self->committed);
      limit += budget;
    }
}

/* Brings the buffer up to date with the source: commits the blocks that
 * are closed now (rendering them once), then re-renders the open tail.
 * When a burst brings more settled text than a frame commits in
 * COMMIT_BUDGET_US (commit_budget ()), only that much (up to a block
 * boundary) is committed, the tail waits, and the view stays dirty for the
 * next frame. */
static void
update (TallyMarkdownView *self)
{
  gint64 start = g_get_monotonic_time ();
  gint64 elapsed;
  gsize commit;
  gboolean behind = FALSE;

  self->frame_parse_us = self->frame_insert_us = 0;
  commit = tally_markdown_scanner_feed (&self->scanner, self->source->str, self->source->len);

  if (!self->eager && commit > self->committed)
    {
      gsize budget = commit_budget (self);

      if (commit - self->committed > budget)
        {
          gsize partial = find_partial_commit (self, commit, budget);

          if (partial > self->committed && partial < commit)
            {
              commit = partial;
              behind = TRUE;
            }
        }
    }

  if (commit > self->committed)
    {
      gint64 commit_start = g_get_monotonic_time ();
      gint64 took;

      take_tail_blocks (self);
      delete_tail (self);
      self->stats.blocks_committed += render_range (self, self->committed, commit);
      self->stats.commits++;
      start_tail_at_end (self);

      /* The rate of this commit (a tail deleted, the text parsed and
       * inserted), averaged with the earlier ones'. */
      took = MAX (1, g_get_monotonic_time () - commit_start);
      self->commit_rate = 0.5 * self->commit_rate + 0.5 * ((double)(commit - self->committed) / took);
      self->committed = commit;
      self->stats.committed_bytes = commit;
    }

  if (behind)
    delete_tail (self);
  else
    render_tail (self);
  drop_reusable (self);
  self->stats.updates++;
  self->dirty = behind;
  if (behind)
    self->stats.deferred_updates++;

  elapsed = g_get_monotonic_time () - start;
  self->stats.parse_us_max = MAX (self->stats.parse_us_max, self->frame_parse_us);
  self->stats.insert_us_max = MAX (self->stats.insert_us_max, self->frame_insert_us);
  self->stats.update_us_max = MAX (self->stats.update_us_max, elapsed);
  self->stats.update_us_total += elapsed;
}

/* Does everything still pending at once: the update, and every block
 * widget still shown as a placeholder. */
static void
update_all (TallyMarkdownView *self)
{
  gint64 start = g_get_monotonic_time ();

  self->eager = TRUE;
  if (self->dirty)
    update (self);
  make_lazy_blocks (self, 0, TRUE);
  self->eager = FALSE;
  self->stats.update_us_max = MAX (self->stats.update_us_max, g_get_monotonic_time () - start);
}

/* The last step of finish(), once the buffer shows the whole text and
 * every block has its widget: the buffer is checked against a fresh
 * render of the whole text, and rendered again in full in the rare cases
 * where they differ (link reference definitions defined after their use). */
static void
settle (TallyMarkdownView *self)
{
  g_autoptr(TallyMarkdownDoc) doc = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *actual = NULL;

  self->finishing = FALSE;
  self->settled = TRUE;
  drop_spare_code_block (self);

  /* Without a committed part the buffer is one render of the whole text. */
  if (self->committed == 0)
    return;

  doc = tally_markdown_doc_parse (self->source->str, self->source->len, TALLY_MARKDOWN_AT_START);
  expected = tally_markdown_doc_dup_structure (doc, TRUE);
  actual = tally_markdown_buffer_dup_structure (self->buffer, TRUE);
  if (strcmp (expected, actual) == 0)
    return;

  g_debug ("Incremental render differs from a fresh one; rendering %" G_GSIZE_FORMAT " bytes again",
           self->source->len);
  self->stats.fallbacks++;
  clear_buffer (self);
  self->eager = TRUE;
  insert_doc (self, doc);
  self->eager = FALSE;
  self->stats.bytes_rendered += self->source->len;
  self->stats.blocks_rendered += tally_markdown_doc_get_n_blocks (doc);
}

/* Completes a finish() at once: whatever the frames had left, then the
 * check. */
static void
finish_now (TallyMarkdownView *self)
{
  remove_tick (self);
  update_all (self);
  settle (self);
}

static gboolean tick_cb (GtkWidget     *widget,
                         GdkFrameClock *frame_clock,
                         gpointer       user_data);

static void
ensure_tick (TallyMarkdownView *self)
{
  if (self->tick_id == 0)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), tick_cb, NULL, NULL);
}

static gboolean
tick_cb (GtkWidget     *widget,
         GdkFrameClock *frame_clock,
         gpointer       user_data)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);
  gint64 start = g_get_monotonic_time ();
  gint64 blocks_start;
  gboolean more;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  if (self->dirty)
    update (self);

  /* Block widgets are the costly part of an update (a code view costs a
   * millisecond or more, its first layout more): a frame makes them while
   * it is within its budget, and one at least unless the update took half
   * of it (a burst being committed; the blocks follow once it is). */
  blocks_start = g_get_monotonic_time ();
  more = make_lazy_blocks (self, start + FRAME_BUDGET_US,
                           blocks_start - start < FRAME_BUDGET_US / 2);
  self->stats.blocks_us_max = MAX (self->stats.blocks_us_max, g_get_monotonic_time () - blocks_start);
  self->stats.update_us_max = MAX (self->stats.update_us_max, g_get_monotonic_time () - start);

  if (self->dirty || more)
    return G_SOURCE_CONTINUE;

  /* A finish() under way: the check of the whole text (a parse and two
   * descriptions, a few milliseconds for a long answer) gets a frame of
   * its own unless this one has done little. */
  if (self->finishing)
    {
      if (g_get_monotonic_time () - start > FRAME_BUDGET_US / 4)
        return G_SOURCE_CONTINUE;
      settle (self);
      self->stats.finished_by_frames++;
      self->stats.update_us_max = MAX (self->stats.update_us_max, g_get_monotonic_time () - start);
    }

  self->tick_id = 0;
  return G_SOURCE_REMOVE;
}

/* ---------------------------------------------------------------------- */
/* GObject                                                                  */

static void
tally_markdown_view_map (GtkWidget *widget)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);
  static gsize warm_up_scheduled = 0;

  GTK_WIDGET_CLASS (tally_markdown_view_parent_class)->map (widget);

  apply_colors (self);
  _tally_markdown_view_track_scroller (self);
  _tally_markdown_view_queue_band (self);

  if (g_once_init_enter (&warm_up_scheduled))
    {
      _tally_markdown_view_warm_up (self);
      g_once_init_leave (&warm_up_scheduled, 1);
    }
}

static void
tally_markdown_view_unmap (GtkWidget *widget)
{
  TallyMarkdownView *self = TALLY_MARKDOWN_VIEW (widget);

  _tally_markdown_view_untrack_scroller (self);
  if (self->band_tick_id != 0)
    {
      gtk_widget_remove_tick_callback (widget, self->band_tick_id);
      self->band_tick_id = 0;
    }

  GTK_WIDGET_CLASS (tally_markdown_view_parent_class)->unmap (widget);
}

static void
tally_markdown_view_dispose (GObject *object)
{
  TallyMarkdownView *self = (TallyMarkdownView *)object;

  remove_tick (self);
  _tally_markdown_view_untrack_scroller (self);
  g_clear_handle_id (&self->colors_idle_id, g_source_remove);
  drop_spare_code_block (self);
  if (self->blocks != NULL)
    drop_reusable (self);
  g_ptr_array_set_size (self->lazy, 0);
  g_clear_pointer (&self->blocks, tally_markdown_blocks_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_MARKDOWN_VIEW);
  g_clear_object (&self->buffer);
  g_clear_object (&self->vadjustment);

  G_OBJECT_CLASS (tally_markdown_view_parent_class)->dispose (object);
}

static void
tally_markdown_view_finalize (GObject *object)
{
  TallyMarkdownView *self = (TallyMarkdownView *)object;

  g_string_free (self->source, TRUE);
  g_clear_pointer (&self->tail_doc, tally_markdown_doc_free);
  g_ptr_array_unref (self->reusable);
  g_ptr_array_unref (self->lazy);

  G_OBJECT_CLASS (tally_markdown_view_parent_class)->finalize (object);
}

static void
tally_markdown_view_class_init (TallyMarkdownViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_markdown_view_dispose;
  object_class->finalize = tally_markdown_view_finalize;
  widget_class->map = tally_markdown_view_map;
  widget_class->unmap = tally_markdown_view_unmap;
  _tally_markdown_view_bind_band (widget_class);

  /**
   * TallyMarkdownView::activate-link:
   * @self: the view
   * @url: the link's target, with `http://` added to a bare `www.` address
   *   and `mailto:` to a bare e-mail address
   *
   * Emitted when the user clicks a link (or presses Enter on one), in the
   * text or in a table. The default handler opens http, https and mailto
   * links with the default application (gtk_show_uri_full()) and ignores
   * other schemes. Return %TRUE from a handler to stop it.
   *
   * Returns: %TRUE if the link was handled
   */
  signals[ACTIVATE_LINK] =
    g_signal_new_class_handler ("activate-link",
                                G_TYPE_FROM_CLASS (klass),
                                G_SIGNAL_RUN_LAST,
                                G_CALLBACK (tally_markdown_view_real_activate_link),
                                g_signal_accumulator_true_handled, NULL,
                                NULL,
                                G_TYPE_BOOLEAN, 1, G_TYPE_STRING);

  gtk_source_init ();
  g_type_ensure (TALLY_TYPE_MARKDOWN_TEXT_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/markdown/tally-markdown-view.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyMarkdownView, text_view);
  _tally_markdown_view_bind_input (widget_class);

  gtk_widget_class_set_css_name (widget_class, "tallymarkdownview");
}

static void
tally_markdown_view_init (TallyMarkdownView *self)
{
  GtkTextIter start;
  AdwStyleManager *style = adw_style_manager_get_default ();

  gtk_widget_init_template (GTK_WIDGET (self));

  self->source = g_string_new (NULL);
  self->reusable = g_ptr_array_new_with_free_func (g_object_unref);
  self->lazy = g_ptr_array_new_with_free_func (g_object_unref);
  tally_markdown_scanner_init (&self->scanner);
  self->commit_rate = COMMIT_RATE_INITIAL;
  self->block_us = BLOCK_US_INITIAL;

  self->vadjustment = g_object_ref_sink (gtk_adjustment_new (0, 0, 0, 0, 0, 0));
  gtk_scrollable_set_vadjustment (GTK_SCROLLABLE (self->text_view), self->vadjustment);
  g_signal_connect_object (self->vadjustment, "value-changed", G_CALLBACK (_tally_markdown_view_band_value_changed),
                           self, G_CONNECT_SWAPPED | G_CONNECT_AFTER);

  self->buffer = g_object_ref (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->text_view)));
  gtk_text_buffer_set_enable_undo (self->buffer, FALSE);
  tally_markdown_buffer_ensure_tags (self->buffer);
  self->blocks = tally_markdown_blocks_new (GTK_WIDGET (self), self->text_view);

  gtk_text_buffer_get_start_iter (self->buffer, &start);
  self->tail_mark = gtk_text_buffer_create_mark (self->buffer, "tally-markdown-tail", &start, TRUE);

  g_signal_connect_object (style, "notify::dark", G_CALLBACK (style_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (style, "notify::high-contrast", G_CALLBACK (style_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (gtk_settings_get_default (), "notify::gtk-theme-name",
                           G_CALLBACK (style_changed_cb), self, G_CONNECT_SWAPPED);
}

/* ---------------------------------------------------------------------- */
/* Public API                                                               */

/**
 * tally_markdown_view_new:
 *
 * Creates an empty markdown view.
 *
 * Returns: (transfer floating): a new #TallyMarkdownView
 */
GtkWidget *
tally_markdown_view_new (void)
{
  return g_object_new (TALLY_TYPE_MARKDOWN_VIEW, NULL);
}

/**
 * tally_markdown_view_get_markdown:
 * @self: a markdown view
 *
 * Returns the whole markdown text given so far, including deltas that are
 * not rendered yet.
 *
 * Returns: (transfer none): the markdown, owned by @self and valid until
 *   the next change
 */
const char *
tally_markdown_view_get_markdown (TallyMarkdownView *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), NULL);

  return self->source->str;
}

/**
 * tally_markdown_view_set_markdown:
 * @self: a markdown view
 * @markdown: (nullable): the new text (UTF-8; invalid bytes show as
 *   U+FFFD); %NULL clears the view
 *
 * Replaces the text and renders it at once, from scratch. Further
 * tally_markdown_view_append() calls continue from this text.
 */
void
tally_markdown_view_set_markdown (TallyMarkdownView *self,
                                  const char        *markdown)
{
  g_autoptr(TallyMarkdownDoc) doc = NULL;

  g_return_if_fail (TALLY_IS_MARKDOWN_VIEW (self));

  if (markdown == NULL)
    markdown = "";

  remove_tick (self);
  self->finishing = FALSE;
  drop_spare_code_block (self);

  /* Rebinding a finished message to the same text is common in lists. */
  if (!self->dirty && self->committed == 0 && self->lazy->len == 0 &&
      strcmp (markdown, self->source->str) == 0 &&
      (markdown[0] != '\0' || gtk_text_buffer_get_char_count (self->buffer) == 0))
    return;

  g_string_assign (self->source, markdown);
  clear_buffer (self);
  self->eager = TRUE;
  render_range (self, 0, self->source->len);
  self->eager = FALSE;
  self->dirty = FALSE;
  self->settled = TRUE;
}

/**
 * tally_markdown_view_append:
 * @self: a markdown view
 * @delta: (nullable): text to add at the end (UTF-8; may be a single
 *   character, or even part of a multi-byte character — the rest must
 *   follow in the next delta)
 *
 * Adds a streamed delta. The text is collected; the view re-renders the
 * open tail at the next frame at most (see the streaming section above).
 * Cheap enough to call thousands of times per second.
 */
void
tally_markdown_view_append (TallyMarkdownView *self,
                            const char        *delta)
{
  g_return_if_fail (TALLY_IS_MARKDOWN_VIEW (self));

  if (delta == NULL || delta[0] == '\0')
    return;

  g_string_append (self->source, delta);
  self->dirty = TRUE;
  self->settled = FALSE;
  ensure_tick (self);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    ensure_spare_code_block (self);
}

/**
 * tally_markdown_view_finish:
 * @self: a markdown view
 *
 * Says that the text is complete: pending deltas are applied, open
 * constructs are closed as a fresh parse closes them (an unclosed fence
 * becomes a code block to the end), and the buffer then equals what
 * tally_markdown_view_set_markdown() gives for the whole text. Call it
 * when the message is complete; appending afterwards is allowed and
 * streams on.
 *
 * A view that is mapped gets there over its next frames, each within its
 * budget as while streaming (a burst that ended just now may leave tens
 * of kilobytes to render, too much for one frame), and then checks the
 * result against a fresh parse, in a frame of its own when the one before
 * did much; tally_markdown_view_get_pending() is %TRUE until it is done.
 * A view that is not mapped gets no frames and renders it all at once, as
 * do tally_markdown_view_dup_structure() and the private
 * tally_markdown_view_flush() when a finish() is still under way.
 */
void
tally_markdown_view_finish (TallyMarkdownView *self)
{
  g_return_if_fail (TALLY_IS_MARKDOWN_VIEW (self));

  if (self->settled)
    {
      remove_tick (self);
      return;
    }

  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->finishing = TRUE;
      ensure_tick (self);
      return;
    }

  finish_now (self);
}

/**
 * tally_markdown_view_dup_structure:
 * @self: a markdown view
 *
 * Describes what the buffer holds now, deterministically, for tests: the
 * text with tag ranges marked (`[h1]Title[/h1]`, `[em]…[/em]`,
 * `[a href=URL]…[/a]`, `[li-2]` for a line in a nested list item,
 * `[quote-1]` for a line in a block quote, `[marker]` for bullets and
 * numbers, `[br]` for a hard line break) and the anchored blocks
 * written out (`[code-block lang=sql]SELECT 1[/code-block]`,
 * `[table 3x2 align=l|c|r: a|b|c / 1|2|3]`, `[hr]`). Two buffers with the
 * same description look the same. Pending deltas are not included; call
 * tally_markdown_view_finish() first (a finish() still under way in the
 * view's frames is completed at once here).
 *
 * Returns: (transfer full): the description
 */
char *
tally_markdown_view_dup_structure (TallyMarkdownView *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), NULL);

  if (self->finishing)
    finish_now (self);
  return tally_markdown_buffer_dup_structure (self->buffer, FALSE);
}

/* ---------------------------------------------------------------------- */
/* Private API (tests, benchmarks)                                          */

/**
 * tally_markdown_view_dup_full_structure:
 * @self: a markdown view
 *
 * Like tally_markdown_view_dup_structure(), with the spacing and margin
 * tags and the blocks' indents included (and a finish() still under way
 * completed first).
 *
 * Returns: (transfer full): the description
 */
char *
tally_markdown_view_dup_full_structure (TallyMarkdownView *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), NULL);

  if (self->finishing)
    finish_now (self);
  return tally_markdown_buffer_dup_structure (self->buffer, TRUE);
}

/**
 * tally_markdown_view_get_stats:
 * @self: a markdown view
 * @stats: (out caller-allocates): the counters
 *
 * Copies the view's counters (they only grow, except committed_bytes and
 * lazy_pending).
 */
void
tally_markdown_view_get_stats (TallyMarkdownView      *self,
                               TallyMarkdownViewStats *stats)
{
  g_return_if_fail (TALLY_IS_MARKDOWN_VIEW (self));
  g_return_if_fail (stats != NULL);

  *stats = self->stats;
  stats->lazy_pending = self->lazy->len;
}

/**
 * tally_markdown_view_flush:
 * @self: a markdown view
 *
 * Does now what the next frames' updates would do, if anything is
 * pending: renders the text and makes the block widgets still shown as
 * placeholders, without the per-frame budget. It does not verify the
 * result, unless a tally_markdown_view_finish() is under way: that is
 * then completed, check included.
 */
void
tally_markdown_view_flush (TallyMarkdownView *self)
{
  g_return_if_fail (TALLY_IS_MARKDOWN_VIEW (self));

  if (self->finishing)
    {
      finish_now (self);
      return;
    }
  remove_tick (self);
  update_all (self);
}

/**
 * tally_markdown_view_get_pending:
 * @self: a markdown view
 *
 * Returns: whether appended text waits for the next update, or a
 *   tally_markdown_view_finish() for the view's next frames
 */
gboolean
tally_markdown_view_get_pending (TallyMarkdownView *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), FALSE);

  return self->dirty || self->finishing;
}

/**
 * tally_markdown_view_get_text_view:
 * @self: a markdown view
 *
 * Returns: (transfer none): the text view showing the markdown
 */
GtkTextView *
tally_markdown_view_get_text_view (TallyMarkdownView *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), NULL);

  return GTK_TEXT_VIEW (self->text_view);
}

/**
 * tally_markdown_view_get_block:
 * @self: a markdown view
 * @anchor: an anchor of the view's buffer
 *
 * Returns: (transfer none) (nullable): the widget shown at @anchor (a
 *   child of @self drawn over the anchor's line), or %NULL
 */
GtkWidget *
tally_markdown_view_get_block (TallyMarkdownView  *self,
                               GtkTextChildAnchor *anchor)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), NULL);
  g_return_val_if_fail (GTK_IS_TEXT_CHILD_ANCHOR (anchor), NULL);

  return tally_markdown_blocks_lookup (self->blocks, anchor);
}
