/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_USER_BUBBLE (tally_user_bubble_get_type ())

G_DECLARE_FINAL_TYPE (TallyUserBubble, tally_user_bubble, TALLY, USER_BUBBLE, TallyBlockWidget)

GtkWidget  *tally_user_bubble_new        (void);
const char *tally_user_bubble_get_text   (TallyUserBubble *self);

G_END_DECLS
