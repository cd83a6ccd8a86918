/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_CENTRING_LAYOUT (tally_centring_layout_get_type ())

G_DECLARE_FINAL_TYPE (TallyCentringLayout, tally_centring_layout, TALLY, CENTRING_LAYOUT, GtkLayoutManager)

G_END_DECLS
