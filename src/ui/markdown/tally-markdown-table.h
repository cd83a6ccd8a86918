/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-csv.h"
#include "tally-markdown-renderer.h"

G_BEGIN_DECLS

/**
 * TallyMarkdownLinkFunc:
 * @url: the link's target
 * @user_data: the data given with the function
 *
 * Called when a link inside a table cell is activated.
 */
typedef void (*TallyMarkdownLinkFunc) (const char *url,
                                       gpointer    user_data);

#define TALLY_TYPE_MARKDOWN_TABLE_WIDGET (tally_markdown_table_widget_get_type ())

G_DECLARE_FINAL_TYPE (TallyMarkdownTableWidget, tally_markdown_table_widget, TALLY, MARKDOWN_TABLE_WIDGET, GtkWidget)

char      *tally_markdown_table_widget_dup_text (TallyMarkdownTableWidget *self,
                                                 TallyCsvFormat            format);

GtkWidget *tally_markdown_table_widget_new      (const TallyMarkdownTable *table,
                                                 TallyMarkdownLinkFunc     link_func,
                                                 gpointer                  user_data);
gboolean   tally_markdown_table_widget_update   (GtkWidget                *widget,
                                                 const TallyMarkdownTable *table);
gboolean   tally_markdown_table_widget_is_table (GtkWidget                *widget);

G_END_DECLS
