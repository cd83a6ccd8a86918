/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_PLAN_CARD (tally_plan_card_get_type ())

G_DECLARE_FINAL_TYPE (TallyPlanCard, tally_plan_card, TALLY, PLAN_CARD, TallyBlockWidget)

GtkWidget  *tally_plan_card_new        (void);
gboolean    tally_plan_card_get_active (TallyPlanCard *self);

G_END_DECLS
