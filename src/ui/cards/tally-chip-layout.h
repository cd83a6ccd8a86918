/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_CHIP_LAYOUT (tally_chip_layout_get_type ())

G_DECLARE_FINAL_TYPE (TallyChipLayout, tally_chip_layout, TALLY, CHIP_LAYOUT, GtkLayoutManager)

GtkLayoutManager *tally_chip_layout_new (int spacing);

G_END_DECLS
