/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_THINKING_DRAWER (tally_thinking_drawer_get_type ())

G_DECLARE_FINAL_TYPE (TallyThinkingDrawer, tally_thinking_drawer, TALLY, THINKING_DRAWER, TallyBlockWidget)

GtkWidget  *tally_thinking_drawer_new        (void);
const char *tally_thinking_drawer_get_title  (TallyThinkingDrawer *self);
GtkExpander *tally_thinking_drawer_get_expander (TallyThinkingDrawer *self);
const char *tally_thinking_drawer_get_text   (TallyThinkingDrawer *self);

G_END_DECLS
