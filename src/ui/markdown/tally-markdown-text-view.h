/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_MARKDOWN_TEXT_VIEW (tally_markdown_text_view_get_type ())

G_DECLARE_FINAL_TYPE (TallyMarkdownTextView, tally_markdown_text_view, TALLY, MARKDOWN_TEXT_VIEW, GtkTextView)

GtkWidget *tally_markdown_text_view_new              (void);
int        tally_markdown_text_view_get_block_width (TallyMarkdownTextView *self,
                                                     int                    width,
                                                     GtkTextChildAnchor    *anchor);

G_END_DECLS
