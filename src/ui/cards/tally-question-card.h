/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_QUESTION_CARD (tally_question_card_get_type ())

G_DECLARE_FINAL_TYPE (TallyQuestionCard, tally_question_card, TALLY, QUESTION_CARD, TallyBlockWidget)

GtkWidget  *tally_question_card_new           (void);
JsonObject *tally_question_card_dup_answers   (TallyQuestionCard *self);
gboolean    tally_question_card_can_send      (TallyQuestionCard *self);

G_END_DECLS
