/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TALLY_TYPE_NOTES_WINDOW (tally_notes_window_get_type ())

G_DECLARE_FINAL_TYPE (TallyNotesWindow, tally_notes_window, TALLY, NOTES_WINDOW, AdwWindow)

TallyNotesWindow *tally_notes_window_new         (GtkWindow        *parent,
                                                  const char       *store_dir,
                                                  const char       *database);
const char       *tally_notes_window_get_path    (TallyNotesWindow *self);
GtkTextBuffer    *tally_notes_window_get_buffer  (TallyNotesWindow *self);
const char       *tally_notes_window_get_error   (TallyNotesWindow *self);

G_END_DECLS
