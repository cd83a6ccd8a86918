/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>
#include <json-glib/json-glib.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_RECEIPT_ROW (tally_receipt_row_get_type ())

G_DECLARE_FINAL_TYPE (TallyReceiptRow, tally_receipt_row, TALLY, RECEIPT_ROW, TallyBlockWidget)

GtkWidget  *tally_receipt_row_new        (void);
const char *tally_receipt_row_get_text   (TallyReceiptRow *self);

char       *tally_receipt_format         (const char      *status,
                                          JsonObject      *details);

G_END_DECLS
