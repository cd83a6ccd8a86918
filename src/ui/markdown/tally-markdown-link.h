/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

char     *tally_markdown_link_normalize (const char *url);
gboolean  tally_markdown_link_is_safe   (const char *url);
void      tally_markdown_link_open      (GtkWidget  *widget,
                                         const char *url);

G_END_DECLS
