/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-application.h"

G_BEGIN_DECLS

#define TALLY_TYPE_PREFERENCES_WINDOW (tally_preferences_window_get_type ())

G_DECLARE_FINAL_TYPE (TallyPreferencesWindow, tally_preferences_window, TALLY, PREFERENCES_WINDOW, AdwPreferencesWindow)

GtkWidget  *tally_preferences_window_new            (TallyApplication       *application);
const char *tally_preferences_window_get_key_status (TallyPreferencesWindow *self);
const char *tally_preferences_window_get_key_detail (TallyPreferencesWindow *self);
const char *tally_preferences_window_get_address_status (TallyPreferencesWindow *self);
void        tally_preferences_window_test_connection (TallyPreferencesWindow *self);
const char *tally_preferences_window_get_connection_result (TallyPreferencesWindow *self);
AdwMessageDialog *tally_preferences_window_get_forget_dialog (TallyPreferencesWindow *self);

G_END_DECLS
