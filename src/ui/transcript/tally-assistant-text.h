/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_ASSISTANT_TEXT (tally_assistant_text_get_type ())

G_DECLARE_FINAL_TYPE (TallyAssistantText, tally_assistant_text, TALLY, ASSISTANT_TEXT, TallyBlockWidget)

GtkWidget  *tally_assistant_text_new        (void);
GtkWidget  *tally_assistant_text_get_view   (TallyAssistantText *self);

G_END_DECLS
