/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-markdown-renderer.h"
#include "tally-markdown-scanner.h"
#include "tally-markdown-text-view.h"
#include "tally-markdown-view-blocks.h"
#include "tally-markdown-view.h"

G_BEGIN_DECLS

/**
 * TallyMarkdownViewStats:
 * @updates: renders of the open tail (one per frame with new text at most)
 * @commits: times the committed prefix grew
 * @blocks_committed: top-level blocks rendered into the committed prefix;
 *   each block is rendered there once
 * @blocks_rendered: top-level blocks rendered in all, tail renders included
 * @bytes_rendered: markdown bytes parsed in all
 * @committed_bytes: bytes of the markdown in the committed prefix now
 * @fallbacks: finishes whose incremental result differed from a fresh
 *   render and were redone in full (link reference definitions cause it)
 * @update_us_max: the longest update (commit and tail render), or the
 *   longest frame's work when it also made block widgets, in µs
 * @update_us_total: time spent in updates, in µs
 * @parse_us_max: the most one frame's update spent parsing markdown, in µs
 * @insert_us_max: the most one frame's update spent writing the parsed
 *   text into the buffer (tags, anchors, placeholders), in µs
 * @blocks_us_max: the most one frame spent making block widgets for
 *   placeholders, in µs
 * @deferred_updates: updates that committed only part of a burst (what
 *   the view measured it can parse and insert in 2.5 ms, 1 to 16 KB) and
 *   left the rest to the next frame
 * @lazy_blocks: code and table widgets made after their placeholder was
 *   shown (in a later frame, within its budget, or by finish())
 * @lazy_pending: placeholders still waiting for their widget now
 * @tails_in_place: tail renders that only replaced the block data of a
 *   fence or table still streaming, leaving the buffer and the widgets at
 *   its anchors in place
 * @finished_by_frames: finish() calls that the view's frames completed
 *   (the view was mapped), rather than finish() itself or a call that
 *   needed the final state at once
 * @spare_code_blocks: code blocks that were made ahead in an idle and
 *   taken by a fence, rather than made in a frame
 *
 * Counters for tests and benchmarks.
 */
typedef struct
{
  guint   updates;
  guint   commits;
  guint   blocks_committed;
  guint   blocks_rendered;
  guint64 bytes_rendered;
  gsize   committed_bytes;
  guint   fallbacks;
  gint64  update_us_max;
  gint64  update_us_total;
  gint64  parse_us_max;
  gint64  insert_us_max;
  gint64  blocks_us_max;
  guint   deferred_updates;
  guint   lazy_blocks;
  guint   lazy_pending;
  guint   tails_in_place;
  guint   finished_by_frames;
  guint   spare_code_blocks;
} TallyMarkdownViewStats;

void         tally_markdown_view_get_stats       (TallyMarkdownView      *self,
                                                  TallyMarkdownViewStats *stats);
void         tally_markdown_view_flush           (TallyMarkdownView      *self);
gboolean     tally_markdown_view_get_pending     (TallyMarkdownView      *self);
GtkTextView *tally_markdown_view_get_text_view   (TallyMarkdownView      *self);
GtkWidget   *tally_markdown_view_get_block       (TallyMarkdownView      *self,
                                                  GtkTextChildAnchor     *anchor);
char        *tally_markdown_view_dup_full_structure (TallyMarkdownView   *self);
gboolean     tally_markdown_view_click_at        (TallyMarkdownView      *self,
                                                  int                     buffer_x,
                                                  int                     buffer_y);

/* The instance, shared by the files of TallyMarkdownView: rendering and
 * streaming (tally-markdown-view.c), pointer and keyboard input on links
 * (tally-markdown-view-input.c), the first view's warm-up
 * (tally-markdown-view-warm-up.c). */
struct _TallyMarkdownView
{
  GtkWidget               parent_instance;

  /* template */
  TallyMarkdownTextView  *text_view;

  GtkTextBuffer          *buffer;
  GtkTextMark            *tail_mark;   /* start of the open tail, left gravity */

  /* the markdown and how much of it is settled */
  GString                *source;
  GPtrArray              *reusable;    /* block widgets taken from the tail */
  TallyMarkdownDoc       *tail_doc;    /* what the tail shows, NULL when not known */
  TallyMarkdownScanner    scanner;
  gsize                   committed;
  gboolean                dirty;
  gboolean                settled;     /* buffer known to equal a fresh render */
  gboolean                finishing;   /* finish() called, the ticks complete it */
  double                  commit_rate; /* bytes parsed and inserted per µs, measured */
  double                  block_us;    /* µs to make a block widget, measured */
  guint                   tick_id;

  /* the widgets shown at the buffer's anchors */
  TallyMarkdownBlocks    *blocks;

  /* anchors showing a placeholder until their block widget is made */
  GPtrArray              *lazy;
  gboolean                eager;       /* make block widgets at once (not streaming) */

  /* a code block made in an idle while an answer streams, for the next
   * fence to take (see take_spare_code_block ()) */
  GtkWidget              *spare_code;
  guint                   spare_idle_id;

  /* tag colours in use */
  GdkRGBA                 foreground;
  GdkRGBA                 accent;
  gboolean                have_colors;
  guint                   colors_idle_id;

  /* the band of the view's height its text view gets (see visible_band () in tally-markdown-view-band.c) */
  GtkAdjustment          *vadjustment;
  GtkAdjustment          *scroll_adjustment;  /* the enclosing scroller's */
  gulong                  scroll_handler;
  int                     band_top;
  int                     band_bottom;
  guint                   band_tick_id;

  TallyMarkdownViewStats  stats;
  gint64                  frame_parse_us;    /* this update's, for stats */
  gint64                  frame_insert_us;
};

void _tally_markdown_view_activate_link (TallyMarkdownView *self,
                                         const char        *url);

/* tally-markdown-view-band.c */
void _tally_markdown_view_bind_band          (GtkWidgetClass    *widget_class);
void _tally_markdown_view_band_value_changed (TallyMarkdownView *self);
void _tally_markdown_view_track_scroller     (TallyMarkdownView *self);
void _tally_markdown_view_untrack_scroller   (TallyMarkdownView *self);
void _tally_markdown_view_queue_band         (TallyMarkdownView *self);

/* tally-markdown-view-input.c */
void _tally_markdown_view_bind_input    (GtkWidgetClass    *widget_class);

/* tally-markdown-view-warm-up.c */
void _tally_markdown_view_warm_up       (TallyMarkdownView *self);

G_END_DECLS
