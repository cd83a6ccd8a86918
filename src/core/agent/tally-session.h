/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "tally-agent.h"
#include "tally-store.h"
#include "tally-transcript.h"

G_BEGIN_DECLS

#define TALLY_TYPE_SESSION (tally_session_get_type ())

G_DECLARE_FINAL_TYPE (TallySession, tally_session, TALLY, SESSION, GObject)

TallySession    *tally_session_new            (TallyStore         *store,
                                               TallyClient        *client,
                                               TallyToolRegistry  *tools);
TallySession    *tally_session_open           (TallyStore         *store,
                                               const char         *session_id,
                                               TallyClient        *client,
                                               TallyToolRegistry  *tools,
                                               GError            **error);
void             tally_session_open_async     (TallyStore          *store,
                                               const char          *session_id,
                                               TallyClient         *client,
                                               TallyToolRegistry   *tools,
                                               GCancellable        *cancellable,
                                               GAsyncReadyCallback  callback,
                                               gpointer             user_data);
TallySession    *tally_session_open_finish    (GAsyncResult        *result,
                                               GError             **error);
const char      *tally_session_get_id         (TallySession       *self);
TallyAgent      *tally_session_get_agent      (TallySession       *self);
TallyTranscript *tally_session_get_transcript (TallySession       *self);
TallyMode        tally_session_get_mode       (TallySession       *self);
gboolean         tally_session_is_busy        (TallySession       *self);
const char      *tally_session_get_lost_context (TallySession     *self);
void             tally_session_send_async     (TallySession       *self,
                                               const TallyTurnRequest *request,
                                               GCancellable       *cancellable,
                                               GAsyncReadyCallback callback,
                                               gpointer            user_data);
TallyTurnStatus  tally_session_send_finish    (TallySession       *self,
                                               GAsyncResult       *result,
                                               GError            **error);

G_END_DECLS
