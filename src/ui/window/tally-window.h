/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-application.h"
#include "tally-session.h"

G_BEGIN_DECLS

#define TALLY_TYPE_WINDOW (tally_window_get_type ())

G_DECLARE_FINAL_TYPE (TallyWindow, tally_window, TALLY, WINDOW, AdwApplicationWindow)

TallyWindow  *tally_window_new           (TallyApplication *application);
gboolean      tally_window_open_session  (TallyWindow      *self,
                                          const char       *session_id);
void          tally_window_open_session_async  (TallyWindow         *self,
                                                const char          *session_id,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
gboolean      tally_window_open_session_finish (TallyWindow         *self,
                                                GAsyncResult        *result,
                                                GError             **error);
void          tally_window_new_session   (TallyWindow      *self);

typedef struct _TallyWindowPrefetch TallyWindowPrefetch;

TallyWindowPrefetch *_tally_window_prefetch_session      (TallyApplication    *app,
                                                          const char          *session_id);
void                 _tally_window_open_prefetched_async (TallyWindow         *self,
                                                          TallyWindowPrefetch *prefetch,
                                                          GAsyncReadyCallback  callback,
                                                          gpointer             user_data);

TallySession *tally_window_get_session   (TallyWindow      *self);
gboolean      tally_window_is_busy       (TallyWindow      *self);
void          tally_window_send          (TallyWindow      *self,
                                          const char       *text);
void          tally_window_add_toast     (TallyWindow      *self,
                                          const char       *title);

G_END_DECLS
