/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TALLY_TYPE_DATABASE_DIALOG (tally_database_dialog_get_type ())

G_DECLARE_FINAL_TYPE (TallyDatabaseDialog, tally_database_dialog, TALLY, DATABASE_DIALOG, AdwWindow)

TallyDatabaseDialog *tally_database_dialog_new         (GtkWindow           *parent,
                                                        GSettings           *settings);
void                 tally_database_dialog_set_page    (TallyDatabaseDialog *self,
                                                        const char          *page);
const char          *tally_database_dialog_get_error   (TallyDatabaseDialog *self);
gboolean             tally_database_dialog_get_busy    (TallyDatabaseDialog *self);

/*
 * For the UI tests only (tests/test-app.c): the widgets an analyst fills
 * and presses on the Server page.
 */
GtkEditable         *_tally_database_dialog_get_name_entry     (TallyDatabaseDialog *self);
GtkEditable         *_tally_database_dialog_get_conninfo_entry (TallyDatabaseDialog *self);
GtkEditable         *_tally_database_dialog_get_password_entry (TallyDatabaseDialog *self);
GtkButton           *_tally_database_dialog_get_connect_button (TallyDatabaseDialog *self);
GtkListBox          *_tally_database_dialog_get_saved_list     (TallyDatabaseDialog *self);

/* What the File page does with the chooser's file (the tests' way past
 * the native chooser). */
void                 _tally_database_dialog_choose_file        (TallyDatabaseDialog *self,
                                                                const char          *path);

G_END_DECLS
