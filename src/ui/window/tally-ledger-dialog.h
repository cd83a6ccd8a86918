/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-store.h"

G_BEGIN_DECLS

#define TALLY_TYPE_LEDGER_DIALOG (tally_ledger_dialog_get_type ())

G_DECLARE_FINAL_TYPE (TallyLedgerDialog, tally_ledger_dialog, TALLY, LEDGER_DIALOG, AdwWindow)

TallyLedgerDialog *tally_ledger_dialog_new (GtkWindow  *parent,
                                            TallyStore *store,
                                            const char *session_id);

G_END_DECLS
