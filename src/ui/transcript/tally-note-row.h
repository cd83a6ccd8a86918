/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_NOTE_ROW (tally_note_row_get_type ())

G_DECLARE_FINAL_TYPE (TallyNoteRow, tally_note_row, TALLY, NOTE_ROW, TallyBlockWidget)

GtkWidget  *tally_note_row_new        (void);
const char *tally_note_row_get_text   (TallyNoteRow *self);

G_END_DECLS
