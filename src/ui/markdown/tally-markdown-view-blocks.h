/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-markdown-text-view.h"

G_BEGIN_DECLS

/* The block widgets of a TallyMarkdownView (code, tables, rules,
 * placeholders): children of the view, drawn over the lines of its text
 * view's anchors. Private to the view; see tally-markdown-view-blocks.c. */
typedef struct _TallyMarkdownBlocks TallyMarkdownBlocks;

TallyMarkdownBlocks *tally_markdown_blocks_new                (GtkWidget             *parent,
                                                               TallyMarkdownTextView *text_view);
void                 tally_markdown_blocks_free               (TallyMarkdownBlocks   *self);
GtkWidget           *tally_markdown_blocks_make_placeholder   (GtkTextChildAnchor    *anchor);
void                 tally_markdown_blocks_set                (TallyMarkdownBlocks   *self,
                                                               GtkTextChildAnchor    *anchor,
                                                               GtkWidget             *widget);
GtkWidget           *tally_markdown_blocks_lookup             (TallyMarkdownBlocks   *self,
                                                               GtkTextChildAnchor    *anchor);
GtkWidget           *tally_markdown_blocks_steal              (TallyMarkdownBlocks   *self,
                                                               GtkTextChildAnchor    *anchor);
void                 tally_markdown_blocks_release            (TallyMarkdownBlocks   *self,
                                                               GtkWidget             *widget);
void                 tally_markdown_blocks_prune              (TallyMarkdownBlocks   *self);
void                 tally_markdown_blocks_reserve            (TallyMarkdownBlocks   *self,
                                                               int                    width);
int                  tally_markdown_blocks_get_pending_height (TallyMarkdownBlocks   *self);
void                 tally_markdown_blocks_allocate           (TallyMarkdownBlocks   *self,
                                                               int                    text_view_y);
void                 tally_markdown_blocks_snapshot           (TallyMarkdownBlocks   *self,
                                                               GtkSnapshot           *snapshot,
                                                               int                    top,
                                                               int                    bottom);

G_END_DECLS
