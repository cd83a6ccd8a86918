/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-composer.h"
#include "tally-transcript-view.h"
#include "tally-window.h"

G_BEGIN_DECLS

/*
 * Accessors for the end-to-end test (tests/test-app.c): the widgets it
 * drives and the state it checks. Not for the application's own code.
 */
TallyComposer       *_tally_window_get_composer        (TallyWindow *self);
TallyTranscriptView *_tally_window_get_transcript_view (TallyWindow *self);
GtkListBox          *_tally_window_get_session_list    (TallyWindow *self);
GtkDropDown         *_tally_window_get_model_dropdown  (TallyWindow *self);
const char          *_tally_window_get_page            (TallyWindow *self);
const char          *_tally_window_get_sidebar_page    (TallyWindow *self);
AdwToast            *_tally_window_get_last_toast      (TallyWindow *self);
const char          *_tally_window_get_last_toast_title (TallyWindow *self);
GtkSearchEntry      *_tally_window_get_search_entry    (TallyWindow *self);
gboolean             _tally_window_is_refreshing       (TallyWindow *self);
AdwFlap             *_tally_window_get_flap            (TallyWindow *self);
GtkToggleButton     *_tally_window_get_thinking_button (TallyWindow *self);
GtkDropDown         *_tally_window_get_mode_dropdown   (TallyWindow *self);
gboolean             _tally_window_get_compact         (TallyWindow *self);

G_END_DECLS
