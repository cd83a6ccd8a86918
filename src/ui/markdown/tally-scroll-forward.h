/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void     tally_scroll_forward_vertical    (GtkScrolledWindow *scroller);
gboolean tally_scroll_forward_is_vertical (double             dx,
                                           double             dy,
                                           GdkModifierType    state);

G_END_DECLS
