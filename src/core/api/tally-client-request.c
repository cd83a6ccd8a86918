/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-client-private.h"

#include "tally-api-error.h"

/*
 * One request of #TallyClient and its attempts (docs/protocol.md §11):
 * each attempt sends the message, reads a 2xx event stream into the
 * #TallyMessageStream or collects a whole body (an error, a model list),
 * and ends in success or in a failure that tally-client-retry.c classifies.
 * An idle watchdog aborts an attempt that receives nothing; a back-off
 * source waits between attempts; the caller's cancellable ends the request
 * in any phase.
 */

#define READ_CHUNK_SIZE      (16 * 1024)
#define MAX_ERROR_BODY_SIZE  (1024 * 1024)
#define MAX_MODELS_BODY_SIZE (16 * 1024 * 1024)

typedef TallyClientRequest Request;

static void
request_free (gpointer data)
{
  Request *req = data;

  /* Every attempt has ended and every source is gone before the task is
   * finalized; the attempt fields are cleared here only as a safety net. */
  g_assert (req->watchdog == NULL);
  g_assert (req->backoff == NULL);
  g_assert (req->backoff_cancel == NULL);

  g_clear_object (&req->input);
  g_clear_object (&req->message);
  g_clear_object (&req->attempt_cancellable);
  g_clear_pointer (&req->collected, g_byte_array_unref);
  g_clear_pointer (&req->request_id, g_free);
  g_clear_object (&req->cancellable);
  g_clear_pointer (&req->uri, g_uri_unref);
  g_clear_pointer (&req->body, g_bytes_unref);
  g_clear_object (&req->stream);
  g_clear_object (&req->client);
  g_free (req);
}

static char *
format_seconds (guint ms)
{
  if (ms % 1000 == 0)
    return g_strdup_printf ("%u s", ms / 1000);
  return g_strdup_printf ("%.1f s", ms / 1000.0);
}

static void
source_clear (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

/* The idle watchdog. Receiving a byte only stores a timestamp; when the
 * timer fires early it is re-armed for the remaining time, so a busy stream
 * costs no source churn. */

static gboolean watchdog_cb (gpointer user_data);

static void
watchdog_arm (Request *req,
              guint    delay_ms)
{
  source_clear (&req->watchdog);
  req->watchdog = g_timeout_source_new (MAX (delay_ms, 1));
  g_source_set_static_name (req->watchdog, "[tally] idle watchdog");
  g_source_set_callback (req->watchdog, watchdog_cb, req, NULL);
  g_source_attach (req->watchdog, req->context);
}

static void
watchdog_touch (Request *req)
{
  req->last_byte_us = g_get_monotonic_time ();
}

static gboolean
watchdog_cb (gpointer user_data)
{
  Request *req = user_data;
  gint64 idle_ms = (g_get_monotonic_time () - req->last_byte_us) / 1000;

  if (idle_ms < req->idle_timeout_ms)
    {
      watchdog_arm (req, req->idle_timeout_ms - (guint) idle_ms);
      return G_SOURCE_REMOVE;
    }

  g_debug ("Attempt %u: no data for %" G_GINT64_FORMAT " ms, aborting it",
           req->attempt, idle_ms);

  /* Returning G_SOURCE_REMOVE destroys the source; drop our reference. */
  g_clear_pointer (&req->watchdog, g_source_unref);
  req->stalled = TRUE;
  g_cancellable_cancel (req->attempt_cancellable);

  return G_SOURCE_REMOVE;
}

static void
got_headers_cb (SoupMessage *message,
                gpointer     user_data)
{
  watchdog_touch (user_data);
}

/* Uploading a large body to a slow link receives nothing for a while;
 * progress in either direction shows that the connection is alive. */
static void
wrote_body_data_cb (SoupMessage *message,
                    guint        chunk_size,
                    gpointer     user_data)
{
  watchdog_touch (user_data);
}

/* The caller's cancellable cancels the attempt's own one; the watchdog
 * cancels only the latter, which tells the two apart. Runs in whatever
 * thread cancelled. */
static void
chain_cancelled_cb (GCancellable *cancellable,
                    gpointer      user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
}

typedef struct {
  GCancellable *cancellable;
  gulong        handler_id;
} Disconnect;

static gboolean
disconnect_idle_cb (gpointer user_data)
{
  Disconnect *disconnect = user_data;

  g_cancellable_disconnect (disconnect->cancellable, disconnect->handler_id);
  g_object_unref (disconnect->cancellable);
  g_free (disconnect);

  return G_SOURCE_REMOVE;
}

static void
chain_disconnect (Request *req)
{
  if (req->chain_id == 0)
    return;

  if (g_cancellable_is_cancelled (req->cancellable))
    {
      /* We may be running inside the caller's "cancelled" emission (a
       * completion that libsoup reported synchronously), where
       * g_cancellable_disconnect() would deadlock; do it once that is over. */
      Disconnect *disconnect = g_new0 (Disconnect, 1);
      GSource *source = g_idle_source_new ();

      disconnect->cancellable = g_object_ref (req->cancellable);
      disconnect->handler_id = req->chain_id;
      g_source_set_static_name (source, "[tally] cancellable disconnect");
      g_source_set_callback (source, disconnect_idle_cb, disconnect, NULL);
      g_source_attach (source, req->context);
      g_source_unref (source);
    }
  else
    {
      g_cancellable_disconnect (req->cancellable, req->chain_id);
    }

  req->chain_id = 0;
}

static void
end_attempt (Request *req)
{
  source_clear (&req->watchdog);
  chain_disconnect (req);

  if (req->message != NULL)
    g_signal_handlers_disconnect_by_data (req->message, req);

  /* Closing a body stream that was not read to its end would make libsoup
   * read (and block on) the rest; cancelling the exchange first makes it
   * drop the connection instead. */
  if (req->input != NULL && !req->at_eof && req->attempt_cancellable != NULL)
    g_cancellable_cancel (req->attempt_cancellable);

  g_clear_object (&req->input);
  g_clear_object (&req->message);
  g_clear_object (&req->attempt_cancellable);
  g_clear_pointer (&req->collected, g_byte_array_unref);
}

/* Back-off */

static void
backoff_clear (Request *req)
{
  source_clear (&req->backoff);
  source_clear (&req->backoff_cancel);
}

static gboolean
backoff_done_cb (gpointer user_data)
{
  GTask *task = user_data;
  Request *req = g_task_get_task_data (task);

  /* The source holds a task reference until this returns. */
  backoff_clear (req);
  tally_client_request_start (task);

  return G_SOURCE_REMOVE;
}

static gboolean
backoff_cancelled_cb (GCancellable *cancellable,
                      gpointer      user_data)
{
  GTask *task = user_data;
  Request *req = g_task_get_task_data (task);
  GError *error = NULL;

  backoff_clear (req);
  g_cancellable_set_error_if_cancelled (cancellable, &error);
  g_assert (error != NULL);
  g_debug ("Cancelled during the back-off before attempt %u", req->attempt + 1);
  g_task_return_error (task, error);

  return G_SOURCE_REMOVE;
}

static void
schedule_retry (GTask *task,
                guint  delay_ms)
{
  Request *req = g_task_get_task_data (task);

  req->backoff = g_timeout_source_new (delay_ms);
  g_source_set_static_name (req->backoff, "[tally] retry back-off");
  g_source_set_callback (req->backoff, backoff_done_cb,
                         g_object_ref (task), g_object_unref);
  g_source_attach (req->backoff, req->context);

  if (req->cancellable != NULL)
    {
      req->backoff_cancel = g_cancellable_source_new (req->cancellable);
      g_source_set_static_name (req->backoff_cancel, "[tally] retry back-off cancel");
      g_source_set_callback (req->backoff_cancel, G_SOURCE_FUNC (backoff_cancelled_cb),
                             g_object_ref (task), g_object_unref);
      g_source_attach (req->backoff_cancel, req->context);
    }
}

/* Outcome of an attempt */

/* Ends the current attempt with @error (transfer full) and either retries
 * or returns @error. @retry_status and @retry_type describe the failure
 * for the `retry` notification; @server_delay_ms is the delay the server
 * asked for, or -1. */
static void
attempt_failed (GTask      *task,
                GError     *error,
                gboolean    retryable,
                guint       retry_status,
                const char *retry_type,
                gint64      server_delay_ms)
{
  Request *req = g_task_get_task_data (task);
  gint64 duration_ms = (g_get_monotonic_time () - req->started_us) / 1000;
  guint retries_done = req->attempt - 1;
  g_autofree char *type = g_strdup (retry_type);
  guint delay_ms;

  if (g_cancellable_is_cancelled (req->cancellable))
    retryable = FALSE;

  g_debug ("Attempt %u failed after %" G_GINT64_FORMAT " ms (HTTP %u, request-id %s): %s",
           req->attempt, duration_ms, req->status,
           req->request_id != NULL ? req->request_id : "none", error->message);

  if (req->stream != NULL && req->got_response)
    tally_message_stream_notify_attempt_finished (req->stream, req->status,
                                                  req->request_id, duration_ms,
                                                  error);

  end_attempt (req);

  if (!retryable || retries_done >= req->max_retries)
    {
      g_task_return_error (task, error);
      return;
    }

  delay_ms = tally_client_retry_delay_ms (server_delay_ms, retries_done);

  g_debug ("Retrying in %u ms as attempt %u (%s)", delay_ms, req->attempt + 1,
           type != NULL ? type : "unknown");
  g_clear_error (&error);

  schedule_retry (task, delay_ms);

  /* Last, so that a handler may cancel right away. */
  if (req->stream != NULL)
    tally_message_stream_notify_retry (req->stream, req->attempt + 1, delay_ms,
                                       retry_status, type);
}

/* A failure of libsoup or of the connection: cancellation, the watchdog,
 * or a network error. Takes @error. */
/* Whether a transport error means the server could not be reached at
 * all, rather than a connection that broke. */
static gboolean
is_unreachable (const GError *error)
{
  static const GIOErrorEnum codes[] = {
    G_IO_ERROR_CONNECTION_REFUSED,
    G_IO_ERROR_HOST_UNREACHABLE,
    G_IO_ERROR_NETWORK_UNREACHABLE,
    G_IO_ERROR_HOST_NOT_FOUND,
    G_IO_ERROR_TIMED_OUT,
    G_IO_ERROR_PROXY_FAILED,
  };

  if (error == NULL)
    return FALSE;
  if (error->domain == G_RESOLVER_ERROR)
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (codes); i++)
    if (g_error_matches (error, G_IO_ERROR, codes[i]))
      return TRUE;
  return FALSE;
}

static void
transport_failed (GTask  *task,
                  GError *error)
{
  Request *req = g_task_get_task_data (task);
  gboolean has_content = req->stream != NULL && tally_message_stream_has_content (req->stream);
  GError *mapped;

  if (g_cancellable_is_cancelled (req->cancellable))
    {
      g_clear_error (&error);
      g_cancellable_set_error_if_cancelled (req->cancellable, &error);
      attempt_failed (task, error, FALSE, 0, NULL, -1);
      return;
    }

  if (req->stalled)
    {
      g_autofree char *seconds = format_seconds (req->idle_timeout_ms);

      g_clear_error (&error);
      mapped = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_STALLED,
                            "No data from the server for %s", seconds);
      attempt_failed (task, mapped, !has_content, 0, "stalled", -1);
      return;
    }

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* Nothing else cancels an attempt; keep the error as it is. */
      attempt_failed (task, error, FALSE, 0, NULL, -1);
      return;
    }

  /* No way through to the server: offline until an attempt gets an
   * answer (docs/architecture.md §3.4). */
  if (!req->got_response && is_unreachable (error))
    tally_client_set_reachable (req->client, FALSE);

  if (req->got_response)
    mapped = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_NETWORK,
                          "The connection to %s was lost: %s",
                          g_uri_get_host (req->uri), error->message);
  else
    mapped = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_NETWORK,
                          "Could not reach %s: %s",
                          g_uri_get_host (req->uri), error->message);

  /* A certificate problem does not go away by asking again. */
  attempt_failed (task, mapped, !has_content && error->domain != G_TLS_ERROR,
                  0, "connection_error", -1);
  g_clear_error (&error);
}

/* The response stream or bytes libsoup answered with: a %NULL @answer
 * fails the attempt (transport_failed() takes @error); anything else is a
 * sign of life for the idle watchdog. Returns whether @answer arrived.
 * (Reading an error body has a failure of its own, see collect_bytes().) */
static gboolean
answer_arrived (GTask    *task,
                gpointer  answer,
                GError   *error)
{
  if (answer == NULL)
    {
      transport_failed (task, error);
      return FALSE;
    }

  watchdog_touch (g_task_get_task_data (task));
  return TRUE;
}

static void
http_failed (GTask *task)
{
  Request *req = g_task_get_task_data (task);
  SoupMessageHeaders *headers = soup_message_get_response_headers (req->message);
  g_autofree char *type = NULL;
  g_autofree char *body_request_id = NULL;
  GError *error;

  /* A redirect is not followed (SOUP_MESSAGE_NO_REDIRECT, below) and not
   * retried: its body is no API error, its location is what to tell. */
  if (SOUP_STATUS_IS_REDIRECTION (req->status))
    {
      const char *location = soup_message_headers_get_one (headers, "location");

      error = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL,
                           "The server answered HTTP %u, a redirect to “%s”. Tally does not follow redirects, "
                           "so that the API key is never sent to another address; check the base URL.",
                           req->status, location != NULL ? location : "");
      attempt_failed (task, error, FALSE, req->status, "api_error", -1);
      return;
    }

  error = tally_client_error_from_response (req->status,
                                            soup_message_get_reason_phrase (req->message),
                                            req->collected->data, req->collected->len,
                                            &type, &body_request_id);

  /* The header is the primary source; a proxy may have dropped it. */
  if (req->request_id == NULL)
    req->request_id = g_steal_pointer (&body_request_id);

  attempt_failed (task, error,
                  tally_client_http_is_retryable (req->status, headers),
                  req->status, type, tally_client_server_delay_ms (headers));
}

static void
attempt_succeeded (GTask *task)
{
  Request *req = g_task_get_task_data (task);
  gint64 duration_ms = (g_get_monotonic_time () - req->started_us) / 1000;

  g_debug ("Attempt %u completed in %" G_GINT64_FORMAT " ms (request-id %s)",
           req->attempt, duration_ms,
           req->request_id != NULL ? req->request_id : "none");

  if (req->stream != NULL)
    tally_message_stream_notify_attempt_finished (req->stream, req->status,
                                                  req->request_id, duration_ms,
                                                  NULL);
  end_attempt (req);
  g_task_return_boolean (task, TRUE);
}

static void
models_received (GTask *task)
{
  Request *req = g_task_get_task_data (task);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) parse_error = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, (const char *) req->collected->data,
                                   req->collected->len, &parse_error))
    {
      attempt_failed (task,
                      g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL,
                                   "The model list is not valid JSON: %s",
                                   parse_error->message),
                      FALSE, req->status, NULL, -1);
      return;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      attempt_failed (task,
                      g_error_new_literal (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL,
                                           "The model list is not a JSON object"),
                      FALSE, req->status, NULL, -1);
      return;
    }

  end_attempt (req);
  g_task_return_pointer (task, json_node_copy (root), (GDestroyNotify) json_node_unref);
}

static void read_cb (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data);

/* Asks for the next chunk of the current attempt's body; read_cb() gets a
 * reference to @task. */
static void
read_next (GTask *task)
{
  Request *req = g_task_get_task_data (task);

  g_input_stream_read_bytes_async (req->input, READ_CHUNK_SIZE, G_PRIORITY_DEFAULT,
                                   req->attempt_cancellable, read_cb,
                                   g_object_ref (task));
}

/* Reading a whole body (an error body or a model list) */

static void
collect_done (GTask *task)
{
  Request *req = g_task_get_task_data (task);

  if (!SOUP_STATUS_IS_SUCCESSFUL (req->status))
    http_failed (task);
  else
    models_received (task);
}

/* A chunk of a body being collected (@bytes), or the failure to read it
 * (@bytes %NULL, @error taken). */
static void
collect_bytes (GTask  *task,
               GBytes *bytes,
               GError *error)
{
  Request *req = g_task_get_task_data (task);
  gsize len;

  if (bytes == NULL)
    {
      /* A cut error body still tells the status; a cut model list is a
       * failure. */
      if (!SOUP_STATUS_IS_SUCCESSFUL (req->status) &&
          !req->stalled && !g_cancellable_is_cancelled (req->cancellable))
        {
          g_debug ("Reading the error body failed: %s", error->message);
          g_clear_error (&error);
          collect_done (task);
        }
      else
        transport_failed (task, error);
      return;
    }

  watchdog_touch (req);

  len = g_bytes_get_size (bytes);
  if (len == 0)
    {
      req->at_eof = TRUE;
      collect_done (task);
      return;
    }

  g_byte_array_append (req->collected, g_bytes_get_data (bytes, NULL),
                       MIN (len, req->collect_limit - req->collected->len));

  if (req->collected->len >= req->collect_limit)
    {
      if (!SOUP_STATUS_IS_SUCCESSFUL (req->status))
        {
          /* Enough to tell what the error is. */
          collect_done (task);
        }
      else
        {
          attempt_failed (task,
                          g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL,
                                       "The server's answer is larger than %u MiB",
                                       (guint) (req->collect_limit / (1024 * 1024))),
                          FALSE, req->status, NULL, -1);
        }
      return;
    }

  read_next (task);
}

static void
collect_start (GTask *task,
               gsize  limit)
{
  Request *req = g_task_get_task_data (task);

  req->collected = g_byte_array_new ();
  req->collect_limit = limit;
  read_next (task);
}

/* Reading an event stream */

static void
stream_failed (GTask *task)
{
  Request *req = g_task_get_task_data (task);
  const GError *stream_error = tally_message_stream_get_error (req->stream);
  const char *type = tally_message_stream_get_error_type (req->stream);
  gboolean retryable;

  /* Only an `error` event of a transient type, before anything was shown,
   * is worth sending again; a protocol violation would just repeat. */
  retryable = !tally_message_stream_has_content (req->stream) &&
              g_error_matches (stream_error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM) &&
              tally_client_stream_error_is_retryable (type);

  attempt_failed (task, g_error_copy (stream_error), retryable, 200, type, -1);
}

/* A chunk of an event stream (@bytes), or the failure to read it (@bytes
 * %NULL, @error taken). */
static void
stream_bytes (GTask  *task,
              GBytes *bytes,
              GError *error)
{
  Request *req = g_task_get_task_data (task);
  gsize len;
  const guint8 *data;

  if (!answer_arrived (task, bytes, error))
    return;

  data = g_bytes_get_data (bytes, &len);
  if (len == 0)
    {
      req->at_eof = TRUE;

      if (tally_message_stream_end_of_input (req->stream, &error))
        {
          attempt_succeeded (task);
          return;
        }

      /* A stream cut before any content is retried like a refused
       * connection; anything else is final. */
      attempt_failed (task, error,
                      !tally_message_stream_has_content (req->stream) &&
                      g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE),
                      0, "connection_error", -1);
      return;
    }

  tally_message_stream_feed (req->stream, data, len);

  if (tally_message_stream_get_error (req->stream) != NULL)
    {
      stream_failed (task);
      return;
    }

  read_next (task);
}

/* Every read of a body ends here: a body being collected (an error body or
 * a model list) and an event stream each take the chunk their own way. */
static void
read_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr (GTask) task = user_data;
  Request *req = g_task_get_task_data (task);
  g_autoptr (GBytes) bytes = NULL;
  GError *error = NULL;

  bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error);
  if (req->collected != NULL)
    collect_bytes (task, bytes, error);
  else
    stream_bytes (task, bytes, error);
}

/* Sending */

static void
send_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr (GTask) task = user_data;
  Request *req = g_task_get_task_data (task);
  SoupMessageHeaders *headers;
  GInputStream *input;
  GError *error = NULL;
  const char *content_type;

  input = soup_session_send_finish (SOUP_SESSION (object), result, &error);
  if (!answer_arrived (task, input, error))
    return;

  req->input = input;
  req->got_response = TRUE;
  tally_client_set_reachable (req->client, TRUE);
  req->status = soup_message_get_status (req->message);
  headers = soup_message_get_response_headers (req->message);
  req->request_id = g_strdup (soup_message_headers_get_one (headers, "request-id"));

  g_debug ("Attempt %u: HTTP %u, request-id %s", req->attempt, req->status,
           req->request_id != NULL ? req->request_id : "none");

  if (!SOUP_STATUS_IS_SUCCESSFUL (req->status))
    {
      collect_start (task, MAX_ERROR_BODY_SIZE);
      return;
    }

  if (req->stream == NULL)
    {
      collect_start (task, MAX_MODELS_BODY_SIZE);
      return;
    }

  /* A 2xx JSON answer means the server ignored `"stream": true` (or a
   * proxy answered); it is not something the stream could decode. */
  content_type = soup_message_headers_get_content_type (headers, NULL);
  if (content_type != NULL && g_ascii_strcasecmp (content_type, "application/json") == 0)
    {
      attempt_failed (task,
                      g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL,
                                   "The server answered HTTP %u with %s instead of an event stream",
                                   req->status, content_type),
                      FALSE, req->status, NULL, -1);
      return;
    }

  read_next (task);
}

/* Starts the next attempt of the request in @task (the first when none has
 * run). The task returns when an attempt succeeds or the last one fails. */
void
tally_client_request_start (GTask *task)
{
  Request *req = g_task_get_task_data (task);
  TallyClient *self = req->client;
  SoupMessageHeaders *headers;
  GError *error = NULL;

  if (g_cancellable_set_error_if_cancelled (req->cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }

  req->attempt++;
  req->got_response = FALSE;
  req->at_eof = FALSE;
  req->stalled = FALSE;
  req->status = 0;
  g_clear_pointer (&req->request_id, g_free);

  if (req->stream != NULL)
    tally_message_stream_begin_attempt (req->stream, req->attempt);

  req->attempt_cancellable = g_cancellable_new ();
  if (req->cancellable != NULL)
    req->chain_id = g_cancellable_connect (req->cancellable,
                                           G_CALLBACK (chain_cancelled_cb),
                                           g_object_ref (req->attempt_cancellable),
                                           g_object_unref);

  req->message = soup_message_new_from_uri (req->method, req->uri);
  /* A redirect is never followed: libsoup would send the request again,
   * x-api-key included, to whatever origin the Location names (also from
   * https to http). A 3xx answer fails like any other non-2xx one
   * (docs/protocol.md §12.1). */
  soup_message_add_flags (req->message, SOUP_MESSAGE_NO_REDIRECT);
  headers = soup_message_get_request_headers (req->message);
  if (self->api_key != NULL && *self->api_key != '\0')
    soup_message_headers_replace (headers, "x-api-key", self->api_key);
  soup_message_headers_replace (headers, "anthropic-version", self->api_version);
  soup_message_headers_replace (headers, "accept", "application/json");
  if (req->body != NULL)
    soup_message_set_request_body_from_bytes (req->message, "application/json", req->body);

  g_signal_connect (req->message, "got-headers", G_CALLBACK (got_headers_cb), req);
  g_signal_connect (req->message, "wrote-body-data", G_CALLBACK (wrote_body_data_cb), req);

  req->started_us = g_get_monotonic_time ();
  watchdog_touch (req);
  if (req->idle_timeout_ms > 0)
    watchdog_arm (req, req->idle_timeout_ms);

  g_debug ("%s %s, attempt %u", req->method, g_uri_get_path (req->uri), req->attempt);

  soup_session_send_async (self->session, req->message, G_PRIORITY_DEFAULT,
                           req->attempt_cancellable, send_cb, g_object_ref (task));
}

/* Creates the task and its request for @path_and_query below the base URL,
 * with the client's current retry and watchdog settings, or returns NULL
 * after finishing the task with an error. */
GTask *
tally_client_request_task_new (TallyClient         *self,
                               const char          *method,
                               const char          *path_and_query,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data,
                               gpointer             source_tag)
{
  g_autoptr (GTask) task = NULL;
  g_autofree char *url = NULL;
  g_autoptr (GUri) uri = NULL;
  g_autoptr (GError) error = NULL;
  Request *req;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, source_tag);
  g_task_set_check_cancellable (task, FALSE);

  url = g_strconcat (self->base_url, path_and_query, NULL);
  uri = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, &error);
  if (uri == NULL ||
      (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0 &&
       g_strcmp0 (g_uri_get_scheme (uri), "https") != 0) ||
      g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               "The API base URL “%s” is not an http or https URL%s%s",
                               self->base_url,
                               error != NULL ? ": " : "",
                               error != NULL ? error->message : "");
      return NULL;
    }

  req = g_new0 (Request, 1);
  req->client = g_object_ref (self);
  req->method = method;
  req->uri = g_steal_pointer (&uri);
  req->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  req->context = g_task_get_context (task);
  req->max_retries = self->max_retries;
  req->idle_timeout_ms = self->idle_timeout_ms;
  g_task_set_task_data (task, req, request_free);

  return g_steal_pointer (&task);
}
