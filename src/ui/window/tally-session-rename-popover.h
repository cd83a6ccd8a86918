/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_SESSION_RENAME_POPOVER (tally_session_rename_popover_get_type ())

G_DECLARE_FINAL_TYPE (TallySessionRenamePopover, tally_session_rename_popover, TALLY, SESSION_RENAME_POPOVER, GtkPopover)

GtkWidget *tally_session_rename_popover_new   (void);
void       tally_session_rename_popover_start (TallySessionRenamePopover *self,
                                               const char                *title);

G_END_DECLS
