/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void tally_error_dialog_show (GtkWidget  *owner,
                              const char *heading,
                              const char *message);

G_END_DECLS
