/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The window's accessors for the UI tests (declared in
 * tally-window-private.h): they read its widgets and state, and change
 * nothing. They live apart from the window's own code in tally-window.c. */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include "tally-window-private.h"

TallyComposer *
_tally_window_get_composer (TallyWindow *self)
{
  return self->composer;
}

TallyTranscriptView *
_tally_window_get_transcript_view (TallyWindow *self)
{
  return self->transcript_view;
}

GtkListBox *
_tally_window_get_session_list (TallyWindow *self)
{
  return self->session_list;
}

GtkDropDown *
_tally_window_get_model_dropdown (TallyWindow *self)
{
  return self->model_dropdown;
}

const char *
_tally_window_get_page (TallyWindow *self)
{
  return gtk_stack_get_visible_child_name (self->session_stack);
}

const char *
_tally_window_get_sidebar_page (TallyWindow *self)
{
  return gtk_stack_get_visible_child_name (self->sidebar_stack);
}

AdwToast *
_tally_window_get_last_toast (TallyWindow *self)
{
  return self->last_toast;
}

const char *
_tally_window_get_last_toast_title (TallyWindow *self)
{
  return self->last_toast_title;
}

GtkSearchEntry *
_tally_window_get_search_entry (TallyWindow *self)
{
  return self->search_entry;
}

gboolean
_tally_window_is_refreshing (TallyWindow *self)
{
  return self->refreshing > 0 || self->search_cancellable != NULL;
}

AdwFlap *
_tally_window_get_flap (TallyWindow *self)
{
  return self->flap;
}

GtkToggleButton *
_tally_window_get_thinking_button (TallyWindow *self)
{
  return self->thinking_button;
}

GtkDropDown *
_tally_window_get_mode_dropdown (TallyWindow *self)
{
  return self->mode_dropdown;
}

gboolean
_tally_window_get_compact (TallyWindow *self)
{
  return self->compact && self->compact_idle == 0;
}
