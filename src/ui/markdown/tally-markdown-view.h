/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_MARKDOWN_VIEW (tally_markdown_view_get_type ())

G_DECLARE_FINAL_TYPE (TallyMarkdownView, tally_markdown_view, TALLY, MARKDOWN_VIEW, GtkWidget)

GtkWidget  *tally_markdown_view_new             (void);
const char *tally_markdown_view_get_markdown    (TallyMarkdownView *self);
void        tally_markdown_view_set_markdown    (TallyMarkdownView *self,
                                                 const char        *markdown);
void        tally_markdown_view_append          (TallyMarkdownView *self,
                                                 const char        *delta);
void        tally_markdown_view_finish          (TallyMarkdownView *self);
char       *tally_markdown_view_dup_structure   (TallyMarkdownView *self);

G_END_DECLS
