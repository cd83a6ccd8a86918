/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TALLY_TYPE_SENSITIVE_DIALOG (tally_sensitive_dialog_get_type ())

G_DECLARE_FINAL_TYPE (TallySensitiveDialog, tally_sensitive_dialog, TALLY, SENSITIVE_DIALOG, AdwWindow)

TallySensitiveDialog *tally_sensitive_dialog_new (GtkWindow  *parent,
                                                  const char *store_dir,
                                                  const char *database);

G_END_DECLS
