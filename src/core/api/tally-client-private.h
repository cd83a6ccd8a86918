/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <libsoup/soup.h>

#include "tally-client.h"

G_BEGIN_DECLS

/*
 * The client's private parts, shared by its files: tally-client.c (the
 * object, its properties and the public API), tally-client-request.c (one
 * request and its attempts: sending, reading, the idle watchdog, the
 * back-off) and tally-client-retry.c (the retry policy of docs/protocol.md
 * §11: what is retried, after how long, and the errors of failed answers).
 */

struct _TallyClient
{
  GObject      parent_instance;

  /* Settings, as the properties hold them */
  char        *base_url;
  char        *api_key;
  char        *api_version;
  guint        idle_timeout_ms;
  guint        max_retries;
  gboolean     reachable;   /* FALSE since an attempt failed to connect */

  SoupSession *session;
};

void tally_client_set_reachable (TallyClient *self,
                                 gboolean     reachable);

/* One request (all its attempts) of tally_client_stream_async() or
 * tally_client_list_models_async(). A model list has no @stream and
 * collects the whole 2xx body instead of feeding it. */
typedef struct {
  TallyClient        *client;
  TallyMessageStream *stream;
  GBytes             *body;
  const char         *method;
  GUri               *uri;
  GCancellable       *cancellable;
  GMainContext       *context;
  guint               max_retries;
  guint               idle_timeout_ms;

  /* The current attempt: tally_client_request_start() resets these
   * fields and end_attempt() releases its resources. */
  guint               attempt;
  GCancellable       *attempt_cancellable;
  gulong              chain_id;
  SoupMessage        *message;
  GInputStream       *input;
  gboolean            got_response;
  gboolean            at_eof;
  guint               status;
  char               *request_id;
  gint64              started_us;
  GByteArray         *collected;
  gsize               collect_limit;

  /* Idle watchdog of the current attempt */
  gint64              last_byte_us;
  GSource            *watchdog;
  gboolean            stalled;

  /* Back-off between attempts */
  GSource            *backoff;
  GSource            *backoff_cancel;
} TallyClientRequest;

/* tally-client-request.c */
GTask    *tally_client_request_task_new   (TallyClient         *self,
                                           const char          *method,
                                           const char          *path_and_query,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data,
                                           gpointer             source_tag);
void      tally_client_request_start      (GTask               *task);

/* tally-client-retry.c */
GError   *tally_client_error_from_response     (guint                status,
                                                const char          *reason,
                                                const guint8        *data,
                                                gsize                len,
                                                char               **error_type,
                                                char               **request_id);
gboolean  tally_client_http_is_retryable       (guint                status,
                                                SoupMessageHeaders  *headers);
gboolean  tally_client_stream_error_is_retryable (const char        *error_type);
gint64    tally_client_server_delay_ms         (SoupMessageHeaders  *headers);
guint     tally_client_retry_delay_ms          (gint64               server_delay_ms,
                                                guint                retries_done);

G_END_DECLS
