/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "tally-transcript-view.h"
#include "tally-block-row.h"
#include "tally-block-tail.h"
#include "tally-receipt-row.h"

/**
 * TallyTranscriptView:
 *
 * The transcript: a GtkListView over the reducer's GListModel of
 * TallyBlock, one TallyBlockRow per visible block (rows are recycled; see
 * tally-block-row.c), inside a scrolled window under an overlay that holds
 * the "Jump to latest" button.
 *
 * Following the output. While the view is at the end it follows: whenever
 * the content grows (rows added, the last row taller) or the viewport
 * changes, it scrolls to the new end. The user stops it by scrolling up,
 * and also by clicking or pressing Enter or Space inside the transcript (a
 * chip picked on a question card, a tool chip or the thinking drawer
 * opened): whatever they touched must not move away under the pointer.
 * Scrolling back to the end, the button, or sending a message (a new
 * user block) resumes it; so does settling a card (Allow, Deny, Send
 * Answers…) that the analyst pressed while the view followed, as long as
 * they have not scrolled since (tally_transcript_view_resume_following()):
 * the turn they let go on is what they want to see.
 *
 * Holding what was touched. A click or key press notes the widget under
 * it and where it is in the viewport; until the user scrolls, every
 * layout puts it back there (see keep_held()). Without this the list,
 * which anchors its position to a row near the bottom when at the end,
 * would push an expanding tool chip's header up and out of view (issue
 * 14 §1). In the same way a view the user scrolled to the very top stays
 * there while rows measured late change height.
 *
 * The difficulty is telling the user's scrolling from the list's own
 * adjustments. Growth changes `upper` (and may move `value`, when the list
 * re-estimates the height of rows it has not measured). Scrolling by the
 * user — wheel, scroll bar, keys, kinetic motion — only ever moves `value`,
 * with the geometry unchanged since the last value the view saw. So a
 * value change counts as the user leaving the end only when it moves up
 * with `upper` and `page-size` as they were at the last value change, and
 * never while the view itself is setting the value (pinning to the end or
 * animating there). A change that arrives together with a geometry change
 * is the list's, and while following the view simply pins again — after
 * the frame's layout, where the list can see it (see request_pin()).
 *
 * Opening a long session. The list binds a TallyBlockTail: at first only
 * the newest blocks that fill the view (first_blocks(): their heights
 * guessed low from their text, so the guess errs towards a few rows too
 * many, never a blank band), so the first frame lays out little; older
 * blocks are added at the top after each frame is drawn, one
 * batch per frame (as many as are bound, at least GROW_BLOCKS: a
 * 10,000-block session is complete after seven frames), until all are
 * there. A frame always shows the rows before a batch arrives. GtkListView keeps its anchor row where
 * it is when items arrive above it, so nothing on screen moves; a view
 * held at the very top lets go of the top while the list grows (the rows
 * the analyst sees stay, the new ones come in above them).
 *
 * Accessibility: the list is labelled "Transcript". GTK 4.8 has no way to
 * announce, so when a reply finishes while the session is open the list's
 * accessible description becomes "Reply finished: …" with the receipt,
 * and the receipt row carries the same label.
 */

#define END_TOLERANCE 2.0
/* Blocks bound at first: GtkListView makes a row for each of them as
 * they are bound, so this is the first frame's work. As many as fill the
 * view (first_blocks()), and two more, within these bounds. */
#define FIRST_BLOCKS_MIN 6
#define FIRST_BLOCKS_MAX 24
/* The low guesses of first_blocks(), in pixels: a row without text, a
 * line of text, the width of a character. */
#define GUESS_ROW_HEIGHT 20
#define GUESS_LINE_HEIGHT 17
#define GUESS_CHAR_WIDTH 7
#define GROW_BLOCKS 128      /* older blocks added per idle moment, at least */
#define SCROLL_DURATION_US (250 * 1000)

struct _TallyTranscriptView
{
  GtkWidget           parent_instance;

  /* Template */
  GtkOverlay         *overlay;
  GtkScrolledWindow  *scroller;
  GtkListView        *list_view;
  GtkButton          *jump_button;

  /* Model */
  GListModel         *model;
  GtkNoSelection     *selection;
  TallyBlockTail     *tail;              /* the blocks bound so far */
  guint               grow_idle_id;
  TallyBlockRowPool  *row_pool;
  gulong              items_changed_id;
  TallyBlock         *pending_receipt;   /* a receipt to announce once filled in */
  char               *workspace;         /* for the cards' diffs */

  /* Following */
  GtkAdjustment      *vadjustment;
  double              last_value;
  double              last_upper;
  double              last_page_size;
  guint               following : 1;
  guint               setting_value : 1;
  guint               pin_pending : 1;
  GdkFrameClock      *frame_clock;
  gulong              after_layout_id;
  gint64              pin_frame;
  guint               pins_in_frame;
  guint               pin_idle_id;

  /* What the user last clicked, kept where it was (see keep_held()) */
  GtkWidget          *held;              /* weak pointer */
  double              held_y;            /* its top in the list's coordinates */
  guint               at_top : 1;        /* the user scrolled to the very top */
  guint               held_from_end : 1; /* a press stopped following, no scroll since */

  /* Animated scroll to the end */
  guint               scroll_tick_id;
  gint64              scroll_start_time;
  double              scroll_from;
};

G_DEFINE_FINAL_TYPE (TallyTranscriptView, tally_transcript_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_MODEL,
  PROP_FOLLOWING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static double
end_value (TallyTranscriptView *self)
{
  return MAX (gtk_adjustment_get_lower (self->vadjustment),
              gtk_adjustment_get_upper (self->vadjustment) -
              gtk_adjustment_get_page_size (self->vadjustment));
}

static gboolean
is_at_end (TallyTranscriptView *self)
{
  return gtk_adjustment_get_value (self->vadjustment) >= end_value (self) - END_TOLERANCE;
}

static void
remember_geometry (TallyTranscriptView *self)
{
  self->last_value = gtk_adjustment_get_value (self->vadjustment);
  self->last_upper = gtk_adjustment_get_upper (self->vadjustment);
  self->last_page_size = gtk_adjustment_get_page_size (self->vadjustment);
}

/* The button shows while the view neither follows nor shows the end. */
static void
update_jump_button (TallyTranscriptView *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->jump_button), !self->following && !is_at_end (self));
}

static void
set_following (TallyTranscriptView *self,
               gboolean             following)
{
  following = !!following;
  if (following)
    self->held_from_end = FALSE;
  if (self->following != (guint) following)
    {
      self->following = following;
      update_jump_button (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FOLLOWING]);
      return;
    }
  update_jump_button (self);
}

static void
release_held (TallyTranscriptView *self)
{
  if (self->held != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->held), (gpointer *) &self->held);
  self->held = NULL;
}

/* The top of @widget in the list's coordinates, or FALSE when it is no
 * longer shown in the list. */
static gboolean
held_position (TallyTranscriptView *self,
               GtkWidget           *widget,
               double              *y)
{
  graphene_point_t point;

  if (widget == NULL || !gtk_widget_get_mapped (widget) ||
      !gtk_widget_is_ancestor (widget, GTK_WIDGET (self->list_view)) ||
      !gtk_widget_compute_point (widget, GTK_WIDGET (self->list_view), &GRAPHENE_POINT_INIT (0, 0), &point))
    return FALSE;
  *y = point.y;
  return TRUE;
}

static void
stop_scroll_animation (TallyTranscriptView *self);

/* The user touched @widget: stop following and keep it where it is. */
static void
hold (TallyTranscriptView *self,
      GtkWidget           *widget)
{
  double y;

  release_held (self);
  if (!held_position (self, widget, &y))
    return;

  stop_scroll_animation (self);
  self->pin_pending = FALSE;
  if (self->following)
    self->held_from_end = TRUE;
  set_following (self, FALSE);
  self->held = widget;
  self->held_y = y;
  g_object_add_weak_pointer (G_OBJECT (widget), (gpointer *) &self->held);
}

static void
set_value (TallyTranscriptView *self,
           double               value)
{
  /* Whole pixels: the list keeps its position in whole pixels and would
   * otherwise round the value away again. */
  self->setting_value = TRUE;
  gtk_adjustment_set_value (self->vadjustment, round (value));
  self->setting_value = FALSE;
  remember_geometry (self);
}

static void
stop_scroll_animation (TallyTranscriptView *self)
{
  if (self->scroll_tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->scroll_tick_id);
      self->scroll_tick_id = 0;
    }
}

static void
pin_to_end (TallyTranscriptView *self)
{
  set_value (self, end_value (self));
}

/* The list sets its adjustment from inside its size allocation, with its
 * own value-changed handler blocked: a value set from the adjustment's
 * signals then would never reach the list, which would go on laying out
 * rows for its old position. So pinning to the end from there is only
 * noted, and done once the frame's layout is over (see after_layout_cb),
 * where the list sees it and lays itself out again before the frame is
 * drawn. */
static void
request_pin (TallyTranscriptView *self)
{
  self->pin_pending = TRUE;
}

/* The same from outside a layout: the list may not have laid out its
 * current model yet (a value it cannot place makes it warn), so the pin
 * waits for the next layout, which this asks for. */
static void
schedule_pin (TallyTranscriptView *self)
{
  self->pin_pending = TRUE;
  gtk_widget_queue_allocate (GTK_WIDGET (self->list_view));
}

static gboolean
pin_next_frame_cb (gpointer user_data)
{
  TallyTranscriptView *self = user_data;

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  self->pin_idle_id = 0;
  schedule_pin (self);
  return G_SOURCE_REMOVE;
}

/* Each value set after the layout (a pin, a held widget put back) makes
 * GTK lay the frame out again, which it does at most a few times per frame
 * before it warns. Rows measured on the way can move things once more;
 * after two sets in one frame the rest waits for the next. */
static gboolean
take_pin (TallyTranscriptView *self,
          gint64               frame)
{
  if (frame != self->pin_frame)
    {
      self->pin_frame = frame;
      self->pins_in_frame = 0;
    }
  if (self->pins_in_frame >= 2)
    {
      if (self->pin_idle_id == 0)
        self->pin_idle_id = g_idle_add (pin_next_frame_cb, self);
      return FALSE;
    }
  self->pins_in_frame++;
  return TRUE;
}

/* Puts the held widget back where the user touched it, if the layout moved
 * it: a row above it changed height, or the list re-anchored. A widget no
 * longer shown is let go. */
static void
keep_held (TallyTranscriptView *self,
           gint64               frame)
{
  double y, value;

  if (!held_position (self, self->held, &y))
    {
      release_held (self);
      return;
    }
  if (fabs (y - self->held_y) < 0.5)
    {
      remember_geometry (self);
      return;
    }

  if (!take_pin (self, frame))
    return;
  value = gtk_adjustment_get_value (self->vadjustment) + (y - self->held_y);
  set_value (self, CLAMP (value, gtk_adjustment_get_lower (self->vadjustment), end_value (self)));
  update_jump_button (self);
}

/* Keeps a view the user scrolled to the top at the top: rows measured
 * after the list placed them would otherwise push the first ones up. */
static void
keep_top (TallyTranscriptView *self,
          gint64               frame)
{
  if (gtk_adjustment_get_value (self->vadjustment) <= gtk_adjustment_get_lower (self->vadjustment))
    {
      remember_geometry (self);
      return;
    }
  if (!take_pin (self, frame))
    return;
  set_value (self, gtk_adjustment_get_lower (self->vadjustment));
}

/* Adds a batch of older blocks at the top of the list. */
static gboolean
grow_idle_cb (gpointer user_data)
{
  TallyTranscriptView *self = user_data;

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  if (self->tail == NULL || tally_block_tail_get_hidden (self->tail) == 0)
    {
      self->grow_idle_id = 0;
      return G_SOURCE_REMOVE;
    }

  /* The rows on screen stay; the top is no longer the top. */
  self->at_top = FALSE;
  tally_block_tail_grow (self->tail, MAX (GROW_BLOCKS, g_list_model_get_n_items (G_LIST_MODEL (self->tail))));
  self->grow_idle_id = 0;
  return G_SOURCE_REMOVE;
}

static void
after_layout_cb (GdkFrameClock       *clock,
                 TallyTranscriptView *self)
{
  gint64 frame = gdk_frame_clock_get_frame_counter (clock);

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  /* The next batch of older blocks once this frame is drawn. */
  if (self->tail != NULL && self->grow_idle_id == 0 && tally_block_tail_get_hidden (self->tail) > 0)
    self->grow_idle_id = g_idle_add_full (G_PRIORITY_LOW, grow_idle_cb, self, NULL);

  if (self->held != NULL)
    {
      keep_held (self, frame);
      return;
    }
  if (self->at_top && !self->following)
    {
      keep_top (self, frame);
      return;
    }

  if (!self->pin_pending)
    return;
  self->pin_pending = FALSE;

  if (!self->following || self->scroll_tick_id != 0 ||
      gtk_adjustment_get_value (self->vadjustment) == end_value (self))
    {
      remember_geometry (self);
      return;
    }

  if (!take_pin (self, frame))
    return;
  pin_to_end (self);
}

static void
adjustment_changed_cb (TallyTranscriptView *self,
                       GtkAdjustment       *adjustment)
{
  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  /* The content or the viewport changed size. While an animation runs it
   * aims at the new end by itself on its next frame. */
  if (self->following && self->scroll_tick_id == 0)
    request_pin (self);
  else
    update_jump_button (self);
}

static void
adjustment_value_changed_cb (TallyTranscriptView *self,
                             GtkAdjustment       *adjustment)
{
  double value = gtk_adjustment_get_value (adjustment);
  gboolean same_geometry;

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  if (self->setting_value)
    return;

  same_geometry = gtk_adjustment_get_upper (adjustment) == self->last_upper &&
                  gtk_adjustment_get_page_size (adjustment) == self->last_page_size;

  /* The user scrolled: what they touched may move with the rest, and a
   * decision made afterwards no longer brings the view back to the end. */
  if (same_geometry && fabs (value - self->last_value) >= 1.0)
    {
      release_held (self);
      self->at_top = FALSE;
      self->held_from_end = FALSE;
    }
  if (value <= gtk_adjustment_get_lower (adjustment) + 0.5)
    self->at_top = TRUE;

  if (self->held != NULL)
    update_jump_button (self);
  else if (is_at_end (self))
    set_following (self, TRUE);
  else if (same_geometry && value < self->last_value - 1.0)
    {
      /* The user scrolled up, away from the end. */
      stop_scroll_animation (self);
      set_following (self, FALSE);
    }
  else if (self->following && self->scroll_tick_id == 0)
    {
      /* The list moved the value while re-laying itself out. */
      request_pin (self);
    }
  else
    update_jump_button (self);

  remember_geometry (self);
}

static double
ease_out_cubic (double t)
{
  double p = t - 1.0;

  return p * p * p + 1.0;
}

static gboolean
scroll_tick_cb (GtkWidget     *widget,
                GdkFrameClock *clock,
                gpointer       user_data)
{
  TallyTranscriptView *self = TALLY_TRANSCRIPT_VIEW (widget);
  gint64 now = gdk_frame_clock_get_frame_time (clock);
  double t = (double) (now - self->scroll_start_time) / SCROLL_DURATION_US;

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  /* The end moves while rows are measured on the way, so the target is
   * read again on every frame. */
  if (t >= 1.0)
    {
      self->scroll_tick_id = 0;
      pin_to_end (self);
      return G_SOURCE_REMOVE;
    }

  set_value (self, self->scroll_from + (end_value (self) - self->scroll_from) * ease_out_cubic (CLAMP (t, 0.0, 1.0)));
  return G_SOURCE_CONTINUE;
}

static void
pressed_cb (GtkGestureClick     *gesture,
            int                  n_press,
            double               x,
            double               y,
            TallyTranscriptView *self)
{
  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  hold (self, gtk_widget_pick (GTK_WIDGET (self->list_view), x, y, GTK_PICK_DEFAULT));
}

static gboolean
key_pressed_cb (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                TallyTranscriptView   *self)
{
  GtkWidget *focus;

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  /* Enter and Space activate (expand a chip, pick an option) in place. */
  if (keyval != GDK_KEY_Return && keyval != GDK_KEY_KP_Enter &&
      keyval != GDK_KEY_space && keyval != GDK_KEY_KP_Space)
    return GDK_EVENT_PROPAGATE;

  focus = gtk_root_get_focus (gtk_widget_get_root (GTK_WIDGET (self)));
  if (focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (self->list_view)))
    hold (self, focus);
  return GDK_EVENT_PROPAGATE;
}

static void
jump_clicked_cb (TallyTranscriptView *self)
{
  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  tally_transcript_view_scroll_to_end (self, TRUE);
}

static void
setup_cb (GtkSignalListItemFactory *factory,
          GtkListItem              *item,
          TallyTranscriptView      *self)
{
  GtkWidget *row = tally_block_row_new ();

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  tally_block_row_set_pool (TALLY_BLOCK_ROW (row), self->row_pool);
  gtk_list_item_set_activatable (item, FALSE);
  gtk_list_item_set_selectable (item, FALSE);
  gtk_list_item_set_child (item, row);
}

static void
bind_cb (GtkSignalListItemFactory *factory,
         GtkListItem              *item,
         TallyTranscriptView      *self)
{
  TallyBlockRow *row = TALLY_BLOCK_ROW (gtk_list_item_get_child (item));

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  tally_block_row_set_context (row, self->model, self->workspace);
  tally_block_row_set_block (row, gtk_list_item_get_item (item));
}

static void
unbind_cb (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           TallyTranscriptView      *self)
{
  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  tally_block_row_set_block (TALLY_BLOCK_ROW (gtk_list_item_get_child (item)), NULL);
}

static void
announce_receipt (TallyTranscriptView *self,
                  TallyBlock          *block)
{
  g_autofree char *receipt = NULL;
  g_autofree char *announcement = NULL;

  receipt = tally_receipt_format (tally_block_get_state (block), tally_block_get_details (block));
  announcement = g_strdup_printf (_("Reply finished: %s"), receipt);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->list_view),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, announcement,
                                  -1);
}

static void
clear_pending_receipt (TallyTranscriptView *self)
{
  if (self->pending_receipt != NULL)
    g_signal_handlers_disconnect_by_data (self->pending_receipt, self);
  g_clear_object (&self->pending_receipt);
}

static void
pending_receipt_finished_cb (TallyTranscriptView *self)
{
  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  if (!tally_block_get_finished (self->pending_receipt))
    return;
  announce_receipt (self, self->pending_receipt);
  clear_pending_receipt (self);
}

static void
items_changed_cb (TallyTranscriptView *self,
                  guint                position,
                  guint                removed,
                  guint                added,
                  GListModel          *model)
{
  g_autoptr(TallyBlock) block = NULL;

  g_assert (TALLY_IS_TRANSCRIPT_VIEW (self));

  if (added == 0)
    return;

  /* A message sent: show it and follow the reply. */
  for (guint i = 0; i < added; i++)
    {
      g_autoptr(TallyBlock) item = g_list_model_get_item (model, position + i);

      if (item != NULL && tally_block_get_kind (item) == TALLY_BLOCK_USER)
        {
          tally_transcript_view_scroll_to_end (self, TRUE);
          break;
        }
    }

  /* GTK 4.8 cannot announce, so a reply that finishes while the session
   * is open is told through the list's accessible description, which
   * assistive technology reports when it changes; the receipt row itself
   * is labelled "Reply finished: …" as well. The reducer adds a receipt
   * before it fills it in, so the announcement waits for it to be
   * finished. */
  block = g_list_model_get_item (model, position + added - 1);
  if (block == NULL || tally_block_get_kind (block) != TALLY_BLOCK_RECEIPT)
    return;

  clear_pending_receipt (self);
  if (tally_block_get_finished (block))
    {
      announce_receipt (self, block);
      return;
    }
  self->pending_receipt = g_steal_pointer (&block);
  g_signal_connect_swapped (self->pending_receipt, "notify::finished",
                            G_CALLBACK (pending_receipt_finished_cb), self);
}

static void
tally_transcript_view_map (GtkWidget *widget)
{
  TallyTranscriptView *self = TALLY_TRANSCRIPT_VIEW (widget);

  GTK_WIDGET_CLASS (tally_transcript_view_parent_class)->map (widget);

  self->frame_clock = g_object_ref (gtk_widget_get_frame_clock (widget));
  self->after_layout_id = g_signal_connect_after (self->frame_clock, "layout",
                                                  G_CALLBACK (after_layout_cb), self);
  if (self->following)
    schedule_pin (self);
}

static void
tally_transcript_view_unmap (GtkWidget *widget)
{
  TallyTranscriptView *self = TALLY_TRANSCRIPT_VIEW (widget);

  stop_scroll_animation (self);
  g_clear_handle_id (&self->pin_idle_id, g_source_remove);
  g_clear_handle_id (&self->grow_idle_id, g_source_remove);
  if (self->frame_clock != NULL)
    g_clear_signal_handler (&self->after_layout_id, self->frame_clock);
  g_clear_object (&self->frame_clock);

  GTK_WIDGET_CLASS (tally_transcript_view_parent_class)->unmap (widget);
}

static void
tally_transcript_view_dispose (GObject *object)
{
  TallyTranscriptView *self = (TallyTranscriptView *)object;

  stop_scroll_animation (self);
  g_clear_handle_id (&self->pin_idle_id, g_source_remove);
  g_clear_handle_id (&self->grow_idle_id, g_source_remove);
  release_held (self);
  clear_pending_receipt (self);
  if (self->model != NULL)
    g_clear_signal_handler (&self->items_changed_id, self->model);
  if (self->vadjustment != NULL)
    g_signal_handlers_disconnect_by_data (self->vadjustment, self);
  g_clear_object (&self->vadjustment);

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_TRANSCRIPT_VIEW);

  g_clear_object (&self->selection);
  g_clear_object (&self->tail);
  g_clear_object (&self->model);
  g_clear_pointer (&self->row_pool, tally_block_row_pool_unref);
  g_clear_pointer (&self->workspace, g_free);

  G_OBJECT_CLASS (tally_transcript_view_parent_class)->dispose (object);
}

static void
tally_transcript_view_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  TallyTranscriptView *self = TALLY_TRANSCRIPT_VIEW (object);

  switch (prop_id)
    {
    case PROP_MODEL:
      g_value_set_object (value, self->model);
      break;
    case PROP_FOLLOWING:
      g_value_set_boolean (value, self->following);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_transcript_view_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  TallyTranscriptView *self = TALLY_TRANSCRIPT_VIEW (object);

  switch (prop_id)
    {
    case PROP_MODEL:
      tally_transcript_view_set_model (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_transcript_view_class_init (TallyTranscriptViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_transcript_view_dispose;
  object_class->get_property = tally_transcript_view_get_property;
  object_class->set_property = tally_transcript_view_set_property;
  widget_class->map = tally_transcript_view_map;
  widget_class->unmap = tally_transcript_view_unmap;


  /**
   * TallyTranscriptView:model:
   *
   * The blocks shown: a #GListModel of #TallyBlock (a #TallyTranscript),
   * or %NULL.
   */
  properties[PROP_MODEL] =
    g_param_spec_object ("model", NULL, NULL, G_TYPE_LIST_MODEL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * TallyTranscriptView:following:
   *
   * Whether the view keeps scrolling to the newest output. It is %TRUE
   * while the view is at the end, becomes %FALSE when the user scrolls
   * up, clicks inside the transcript or activates something in it with
   * Enter or Space (the "Jump to latest" button shows once the end is out
   * of view), and %TRUE again when the user scrolls back to the end, uses
   * the button, or a new user block (a message sent) arrives.
   */
  properties[PROP_FOLLOWING] =
    g_param_spec_boolean ("following", NULL, NULL, TRUE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);



  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-transcript-view.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyTranscriptView, overlay);
  gtk_widget_class_bind_template_child (widget_class, TallyTranscriptView, scroller);
  gtk_widget_class_bind_template_child (widget_class, TallyTranscriptView, list_view);
  gtk_widget_class_bind_template_child (widget_class, TallyTranscriptView, jump_button);
  gtk_widget_class_bind_template_callback (widget_class, jump_clicked_cb);
  gtk_widget_class_set_css_name (widget_class, "tallytranscriptview");
}

static void
tally_transcript_view_init (TallyTranscriptView *self)
{
  g_autoptr(GtkListItemFactory) factory = NULL;
  GtkGesture *gesture;
  GtkEventController *keys;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->row_pool = tally_block_row_pool_new ();
  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect_object (factory, "setup", G_CALLBACK (setup_cb), self, 0);
  g_signal_connect_object (factory, "bind", G_CALLBACK (bind_cb), self, 0);
  g_signal_connect_object (factory, "unbind", G_CALLBACK (unbind_cb), self, 0);
  gtk_list_view_set_factory (self->list_view, factory);

  self->selection = gtk_no_selection_new (NULL);
  gtk_list_view_set_model (self->list_view, GTK_SELECTION_MODEL (self->selection));

  /* Capture phase: the press is noted before the row's own widgets act on
   * it (an expander opening, a chip picked), and never claimed. */
  gesture = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), 0);
  gtk_event_controller_set_name (GTK_EVENT_CONTROLLER (gesture), "tally-transcript-hold");
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (gesture), GTK_PHASE_CAPTURE);
  g_signal_connect_object (gesture, "pressed", G_CALLBACK (pressed_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self->list_view), GTK_EVENT_CONTROLLER (gesture));

  keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_name (keys, "tally-transcript-hold-keys");
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect_object (keys, "key-pressed", G_CALLBACK (key_pressed_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self->list_view), keys);

  self->following = TRUE;
  self->vadjustment = g_object_ref (gtk_scrolled_window_get_vadjustment (self->scroller));
  g_signal_connect_object (self->vadjustment, "changed",
                           G_CALLBACK (adjustment_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->vadjustment, "value-changed",
                           G_CALLBACK (adjustment_value_changed_cb), self, G_CONNECT_SWAPPED);
  remember_geometry (self);
}

/**
 * tally_transcript_view_new:
 *
 * Creates an empty transcript view. Give it blocks with
 * tally_transcript_view_set_model().
 *
 * Returns: (transfer floating): a new #TallyTranscriptView
 */
GtkWidget *
tally_transcript_view_new (void)
{
  return g_object_new (TALLY_TYPE_TRANSCRIPT_VIEW, NULL);
}

/**
 * tally_transcript_view_get_model:
 * @self: a #TallyTranscriptView
 *
 * Returns: (transfer none) (nullable): the blocks shown
 */
GListModel *
tally_transcript_view_get_model (TallyTranscriptView *self)
{
  g_return_val_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self), NULL);
  return self->model;
}

/* A low guess of @block's row height at @width pixels: its text's
 * paragraphs wrapped at GUESS_CHAR_WIDTH a character. */
static int
guess_height (TallyBlock *block,
              int         width)
{
  TallyBlockKind kind = tally_block_get_kind (block);
  const char *text = kind == TALLY_BLOCK_TEXT || kind == TALLY_BLOCK_USER ? tally_block_get_text (block) : NULL;
  int per_line = MAX (width / GUESS_CHAR_WIDTH, 1);
  int lines = 0;

  if (text == NULL || text[0] == '\0')
    return GUESS_ROW_HEIGHT;
  for (const char *p = text; *p != '\0';)
    {
      const char *end = strchr (p, '\n');
      glong chars = g_utf8_strlen (p, end != NULL ? end - p : -1);

      lines += chars > 0 ? (int) ((chars + per_line - 1) / per_line) : 0;
      if (end == NULL)
        break;
      p = end + 1;
    }
  return GUESS_ROW_HEIGHT + lines * GUESS_LINE_HEIGHT;
}

/* How many of @blocks' newest blocks to bind at first: those that fill
 * the view's height, guessed low (the window's default size stands for a
 * view not allocated yet), and two more. */
static guint
first_blocks (TallyTranscriptView *self,
              GListModel          *blocks)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  guint n = g_list_model_get_n_items (blocks);
  guint count = 0;
  int filled = 0;

  if ((width <= 0 || height <= 0) && GTK_IS_WINDOW (root))
    gtk_window_get_default_size (GTK_WINDOW (root), &width, &height);
  /* Nothing to go by: a tall window. */
  if (width <= 0 || height <= 0)
    return FIRST_BLOCKS_MAX;

  while (count < n && count < FIRST_BLOCKS_MAX && filled < height)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, n - 1 - count);

      filled += guess_height (block, width);
      count++;
    }
  return CLAMP (count + 2, FIRST_BLOCKS_MIN, FIRST_BLOCKS_MAX);
}

/**
 * tally_transcript_view_set_model:
 * @self: a #TallyTranscriptView
 * @blocks: (nullable) (transfer none): a #GListModel of #TallyBlock (a
 *   #TallyTranscript), or %NULL to show nothing
 *
 * Shows @blocks, one row per block, and follows the model as it grows
 * and its blocks change. The view opens at the end of the transcript,
 * without an animation, and follows from there.
 */
void
tally_transcript_view_set_model (TallyTranscriptView *self,
                                 GListModel          *blocks)
{
  g_return_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self));
  g_return_if_fail (blocks == NULL || G_IS_LIST_MODEL (blocks));
  g_return_if_fail (blocks == NULL || g_type_is_a (g_list_model_get_item_type (blocks), TALLY_TYPE_BLOCK));

  if (self->model == blocks)
    return;

  clear_pending_receipt (self);
  if (self->model != NULL)
    g_clear_signal_handler (&self->items_changed_id, self->model);
  g_set_object (&self->model, blocks);
  if (blocks != NULL)
    self->items_changed_id = g_signal_connect_object (blocks, "items-changed",
                                                      G_CALLBACK (items_changed_cb),
                                                      self, G_CONNECT_SWAPPED);

  gtk_accessible_reset_property (GTK_ACCESSIBLE (self->list_view),
                                 GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);

  /* The newest blocks first; the rest follow at the top (see above). */
  g_clear_handle_id (&self->grow_idle_id, g_source_remove);
  g_clear_object (&self->tail);
  if (blocks != NULL)
    self->tail = tally_block_tail_new (blocks, first_blocks (self, blocks));
  gtk_no_selection_set_model (self->selection, G_LIST_MODEL (self->tail));

  /* Land at the end: pin now, and keep pinning while the list measures
   * the rows it shows (the adjustment's "changed"). */
  tally_transcript_view_scroll_to_end (self, FALSE);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODEL]);
}

/**
 * tally_transcript_view_get_following:
 * @self: a #TallyTranscriptView
 *
 * Returns: whether the view follows new output (see
 *   #TallyTranscriptView:following)
 */
gboolean
tally_transcript_view_get_following (TallyTranscriptView *self)
{
  g_return_val_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self), FALSE);
  return self->following;
}

/**
 * tally_transcript_view_resume_following:
 * @self: a #TallyTranscriptView
 *
 * Tells the view that the analyst settled a card (allowed or denied a
 * tool, answered or dismissed a question): the turn goes on below it. If
 * the view was following the output until the analyst pressed inside it
 * for that card, and they have not scrolled since, it glides back to the
 * end and follows again (tally_transcript_view_scroll_to_end()), so the
 * reply they let go on is in sight without "Jump to latest". Otherwise,
 * where they had scrolled to read, it stays.
 */
void
tally_transcript_view_resume_following (TallyTranscriptView *self)
{
  g_return_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self));

  if (self->held_from_end)
    tally_transcript_view_scroll_to_end (self, TRUE);
}

/**
 * tally_transcript_view_scroll_to_end:
 * @self: a #TallyTranscriptView
 * @animate: whether to glide there (about a quarter of a second, when
 *   animations are enabled and the view is on screen) or jump
 *
 * Scrolls to the newest output and follows it from then on; hides the
 * "Jump to latest" button.
 */
void
tally_transcript_view_scroll_to_end (TallyTranscriptView *self,
                                     gboolean             animate)
{
  gboolean animations = TRUE;

  g_return_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self));

  release_held (self);
  set_following (self, TRUE);
  stop_scroll_animation (self);

  g_object_get (gtk_widget_get_settings (GTK_WIDGET (self)),
                "gtk-enable-animations", &animations,
                NULL);

  if (!animate || !animations || !gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      schedule_pin (self);
      return;
    }

  self->scroll_from = gtk_adjustment_get_value (self->vadjustment);
  self->scroll_start_time = gdk_frame_clock_get_frame_time (gtk_widget_get_frame_clock (GTK_WIDGET (self)));
  self->scroll_tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), scroll_tick_cb, NULL, NULL);
}

/**
 * tally_transcript_view_get_workspace:
 * @self: a #TallyTranscriptView
 *
 * Returns: (transfer none) (nullable): the workspace folder set with
 *   tally_transcript_view_set_workspace()
 */
const char *
tally_transcript_view_get_workspace (TallyTranscriptView *self)
{
  g_return_val_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self), NULL);
  return self->workspace;
}

/**
 * tally_transcript_view_set_workspace:
 * @self: a #TallyTranscriptView
 * @workspace: (nullable): the shown session's workspace folder (absolute)
 *
 * Tells the block widgets which folder relative paths resolve against (an
 * approval card previews the diff of a `Write` or `Edit` from it). Each
 * row hands it over (#TallyBlockWidget:workspace) when it binds a block,
 * so set it before the model.
 */
void
tally_transcript_view_set_workspace (TallyTranscriptView *self,
                                     const char          *workspace)
{
  g_return_if_fail (TALLY_IS_TRANSCRIPT_VIEW (self));

  if (g_strcmp0 (self->workspace, workspace) == 0)
    return;
  g_free (self->workspace);
  self->workspace = g_strdup (workspace);
}
