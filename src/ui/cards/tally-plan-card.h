/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block.h"

G_BEGIN_DECLS

#define TALLY_TYPE_PLAN_CARD (tally_plan_card_get_type ())

G_DECLARE_FINAL_TYPE (TallyPlanCard, tally_plan_card, TALLY, PLAN_CARD, GtkWidget)

GtkWidget  *tally_plan_card_new        (void);
TallyBlock *tally_plan_card_get_block  (TallyPlanCard *self);
void        tally_plan_card_set_block  (TallyPlanCard *self,
                                        TallyBlock    *block);
gboolean    tally_plan_card_get_active (TallyPlanCard *self);

G_END_DECLS
