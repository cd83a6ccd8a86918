/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

char *tally_card_diff_lines (const char  *old_text,
                             const char  *new_text,
                             guint        context);
void  tally_card_diff_show  (GtkTextView *view,
                             const char  *diff);

G_END_DECLS
