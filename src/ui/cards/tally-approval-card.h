/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_APPROVAL_CARD (tally_approval_card_get_type ())

G_DECLARE_FINAL_TYPE (TallyApprovalCard, tally_approval_card, TALLY, APPROVAL_CARD, TallyBlockWidget)

GtkWidget  *tally_approval_card_new           (void);

G_END_DECLS
