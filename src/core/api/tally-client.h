/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-message-stream.h"

G_BEGIN_DECLS

/**
 * TALLY_DEFAULT_BASE_URL:
 *
 * The origin of the public Messages API, without `/v1`.
 */
#define TALLY_DEFAULT_BASE_URL "https://api.anthropic.com"

/**
 * TALLY_DEFAULT_API_VERSION:
 *
 * The `anthropic-version` header value Tally sends.
 */
#define TALLY_DEFAULT_API_VERSION "2023-06-01"

#define TALLY_TYPE_CLIENT (tally_client_get_type ())

G_DECLARE_FINAL_TYPE (TallyClient, tally_client, TALLY, CLIENT, GObject)

TallyClient *tally_client_new                (const char          *base_url,
                                              const char          *api_key);
const char  *tally_client_get_base_url       (TallyClient         *self);
void         tally_client_set_api_key        (TallyClient         *self,
                                              const char          *api_key);
const char  *tally_client_get_api_version    (TallyClient         *self);
void         tally_client_set_api_version    (TallyClient         *self,
                                              const char          *api_version);
void         tally_client_set_idle_timeout   (TallyClient         *self,
                                              guint                seconds);
guint        tally_client_get_idle_timeout   (TallyClient         *self);
void         tally_client_set_idle_timeout_ms (TallyClient        *self,
                                              guint                milliseconds);
guint        tally_client_get_idle_timeout_ms (TallyClient        *self);
void         tally_client_set_max_retries    (TallyClient         *self,
                                              guint                max_retries);
guint        tally_client_get_max_retries    (TallyClient         *self);
gboolean     tally_client_get_reachable      (TallyClient         *self);

void         tally_client_stream_async       (TallyClient         *self,
                                              GBytes              *body,
                                              TallyMessageStream  *stream,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean     tally_client_stream_finish      (TallyClient         *self,
                                              GAsyncResult        *result,
                                              GError             **error);

void         tally_client_list_models_async  (TallyClient         *self,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
JsonNode    *tally_client_list_models_finish (TallyClient         *self,
                                              GAsyncResult        *result,
                                              GError             **error);

G_END_DECLS
