/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

GtkFileChooserNative *tally_csv_dialog_new_chooser (GtkWidget    *owner,
                                                    const char   *suggested_name);
void                  tally_csv_dialog_show_error  (GtkWidget    *owner,
                                                    const GError *error);

G_END_DECLS
