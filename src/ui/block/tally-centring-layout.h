/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

GtkLayoutManager *tally_centring_layout_new (void);

G_END_DECLS
