/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block.h"

G_BEGIN_DECLS

#define TALLY_TYPE_APPROVAL_CARD (tally_approval_card_get_type ())

G_DECLARE_FINAL_TYPE (TallyApprovalCard, tally_approval_card, TALLY, APPROVAL_CARD, GtkWidget)

GtkWidget  *tally_approval_card_new           (void);
TallyBlock *tally_approval_card_get_block     (TallyApprovalCard *self);
void        tally_approval_card_set_block     (TallyApprovalCard *self,
                                               TallyBlock        *block);
const char *tally_approval_card_get_workspace (TallyApprovalCard *self);
void        tally_approval_card_set_workspace (TallyApprovalCard *self,
                                               const char        *workspace);

G_END_DECLS
