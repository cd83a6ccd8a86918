/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-approval-card.h"
#include "tally-tool.h"

G_BEGIN_DECLS

/*
 * For the tests (tests/test-cards-review.c): the countdown's clock, the
 * notifications and the preview a card read. Not for the application's
 * own code.
 */

/**
 * TallyApprovalNotifyFunc:
 * @card: the approval card
 * @id: the notification's id ("approval-" and the approval id)
 * @notification: (nullable): the notification to send, or %NULL to
 *   withdraw the one sent with @id
 * @title: (nullable): the notification's title (%NULL to withdraw)
 * @body: (nullable): its body (%NULL to withdraw)
 *
 * Sends or withdraws the desktop notification of a waiting card.
 */
typedef void (*TallyApprovalNotifyFunc) (GtkWidget     *card,
                                         const char    *id,
                                         GNotification *notification,
                                         const char    *title,
                                         const char    *body);

void                    _tally_approval_card_set_clock       (gint64                 (*now) (void));
void                    _tally_approval_card_tick            (TallyApprovalCard      *self);
void                    _tally_approval_card_set_notify_func (TallyApprovalNotifyFunc func);
const TallyToolPreview *_tally_approval_card_get_preview     (TallyApprovalCard      *self);

G_END_DECLS
