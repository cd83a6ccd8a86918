/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-client.h"

#include <math.h>
#include <string.h>

#include <libsoup/soup.h>

#include "tally-api-error.h"

/**
 * TallyClient:
 *
 * A client of the Anthropic Messages API over libsoup 3.
 *
 * One #TallyClient owns one #SoupSession, so consecutive requests reuse
 * their connection. It sends `POST /v1/messages` with the headers of
 * docs/protocol.md §1 (`x-api-key`, `anthropic-version`, `content-type` and
 * `accept: application/json`) and feeds the event stream of the answer into
 * a #TallyMessageStream, which decodes and accumulates it.
 *
 * The client is the only retry layer of Tally (docs/protocol.md §11): it
 * retries HTTP 408, 409, 429, 5xx and 529, connection failures and stalls
 * before any content arrived, and `error` events of the retryable types
 * before any content arrived; it honours `x-should-retry`, `retry-after-ms`
 * and `retry-after` and otherwise backs off exponentially with jitter. An
 * idle watchdog aborts an attempt that receives no byte for
 * #TallyClient:idle-timeout seconds; the total time of a stream is not
 * capped.
 *
 * The API key is sent in the `x-api-key` header only; it is never logged.
 */

#define READ_CHUNK_SIZE      (16 * 1024)
#define MAX_ERROR_BODY_SIZE  (1024 * 1024)
#define MAX_MODELS_BODY_SIZE (16 * 1024 * 1024)
#define MAX_SERVER_DELAY_MS  60000
#define MAX_BACKOFF_MS       8000
#define FIRST_BACKOFF_MS     500

struct _TallyClient
{
  GObject      parent_instance;

  char        *base_url;
  char        *api_key;
  char        *api_version;
  guint        idle_timeout_ms;
  guint        max_retries;

  SoupSession *session;
};

G_DEFINE_FINAL_TYPE (TallyClient, tally_client, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_BASE_URL,
  PROP_API_KEY,
  PROP_API_VERSION,
  PROP_IDLE_TIMEOUT,
  PROP_MAX_RETRIES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

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

  /* The current attempt: start_attempt() resets these fields and
   * end_attempt() releases its resources. */
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
} Request;

static void start_attempt (GTask *task);

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

/* Error helpers */

static const char *
type_for_code (TallyApiError code)
{
  switch (code)
    {
    case TALLY_API_ERROR_INVALID_REQUEST:   return "invalid_request_error";
    case TALLY_API_ERROR_AUTHENTICATION:    return "authentication_error";
    case TALLY_API_ERROR_BILLING:           return "billing_error";
    case TALLY_API_ERROR_PERMISSION:        return "permission_error";
    case TALLY_API_ERROR_NOT_FOUND:         return "not_found_error";
    case TALLY_API_ERROR_REQUEST_TIMEOUT:   return "request_timeout";
    case TALLY_API_ERROR_CONFLICT:          return "conflict_error";
    case TALLY_API_ERROR_REQUEST_TOO_LARGE: return "request_too_large";
    case TALLY_API_ERROR_RATE_LIMIT:        return "rate_limit_error";
    case TALLY_API_ERROR_API:               return "api_error";
    case TALLY_API_ERROR_TIMEOUT:           return "timeout_error";
    case TALLY_API_ERROR_OVERLOADED:        return "overloaded_error";
    case TALLY_API_ERROR_STREAM:
    case TALLY_API_ERROR_NETWORK:
    case TALLY_API_ERROR_STALLED:
    case TALLY_API_ERROR_INCOMPLETE:
    case TALLY_API_ERROR_PROTOCOL:
    default:
      return "api_error";
    }
}

static gboolean
status_is_retryable (guint status)
{
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

/* The `error` event types worth sending the request again for
 * (docs/protocol.md §11.1). */
static gboolean
stream_error_type_is_retryable (const char *error_type)
{
  static const char * const retryable[] = {
    "overloaded_error", "api_error", "rate_limit_error", "timeout_error",
  };

  if (error_type == NULL)
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (retryable); i++)
    {
      if (g_str_equal (error_type, retryable[i]))
        return TRUE;
    }

  return FALSE;
}

static char *
format_seconds (guint ms)
{
  if (ms % 1000 == 0)
    return g_strdup_printf ("%u s", ms / 1000);
  return g_strdup_printf ("%.1f s", ms / 1000.0);
}

/* Parses a header value that must be a plain number (surrounding blanks
 * allowed). Returns FALSE for anything else. */
static gboolean
parse_number (const char *text,
              double     *out)
{
  g_autofree char *copy = NULL;
  char *end = NULL;
  double value;

  if (text == NULL)
    return FALSE;

  copy = g_strstrip (g_strdup (text));
  if (*copy == '\0')
    return FALSE;

  value = g_ascii_strtod (copy, &end);
  if (end == copy || *end != '\0' || !isfinite (value))
    return FALSE;

  *out = value;
  return TRUE;
}

/* The delay the server asks for, in milliseconds, or -1 when it asks for
 * none: `retry-after-ms` first, then `retry-after` as (fractional) seconds
 * or as an HTTP-date (docs/protocol.md §11.2). */
static gint64
server_delay_ms (SoupMessageHeaders *headers)
{
  const char *value;
  double number;

  if (headers == NULL)
    return -1;

  value = soup_message_headers_get_one (headers, "retry-after-ms");
  if (parse_number (value, &number))
    return (gint64) ceil (number);

  value = soup_message_headers_get_one (headers, "retry-after");
  if (parse_number (value, &number))
    return (gint64) ceil (number * 1000.0);

  if (value != NULL)
    {
      g_autoptr (GDateTime) date = soup_date_time_new_from_http_string (value);

      if (date != NULL)
        {
          g_autoptr (GDateTime) now = g_date_time_new_now_utc ();

          return g_date_time_difference (date, now) / 1000;
        }
    }

  return -1;
}

/* min(0.5 · 2^n, 8) s × (1 − 0.25 · random), n = retries done so far
 * (docs/protocol.md §11.2). */
static guint
backoff_ms (guint retries_done)
{
  double delay = FIRST_BACKOFF_MS;

  for (guint i = 0; i < retries_done && delay < MAX_BACKOFF_MS; i++)
    delay *= 2;
  delay = MIN (delay, MAX_BACKOFF_MS);

  return (guint) (delay * (1.0 - 0.25 * g_random_double ()));
}

/* Builds the error of a non-2xx answer from its (possibly truncated)
 * body: the API's JSON error body when it is one (docs/protocol.md §12.1),
 * otherwise an error naming the status. Sets @error_type to the API's
 * `error.type`, or to the canonical type of the mapped code, and
 * @request_id to the body's `request_id` when it has one. */
static GError *
error_from_response (guint         status,
                     const char   *reason,
                     const guint8 *data,
                     gsize         len,
                     char        **error_type,
                     char        **request_id)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  const char *type = NULL;
  const char *message = NULL;
  TallyApiError code;
  GError *error;

  if (len > 0 && json_parser_load_from_data (parser, (const char *) data, len, NULL))
    {
      JsonNode *root = json_parser_get_root (parser);

      if (JSON_NODE_HOLDS_OBJECT (root))
        {
          JsonObject *object = json_node_get_object (root);
          JsonNode *error_node = json_object_get_member (object, "error");
          JsonNode *id_node = json_object_get_member (object, "request_id");

          if (id_node != NULL && JSON_NODE_HOLDS_VALUE (id_node) &&
              json_node_get_value_type (id_node) == G_TYPE_STRING)
            *request_id = g_strdup (json_node_get_string (id_node));

          if (error_node != NULL && JSON_NODE_HOLDS_OBJECT (error_node))
            {
              JsonObject *error_object = json_node_get_object (error_node);
              JsonNode *node;

              node = json_object_get_member (error_object, "type");
              if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
                  json_node_get_value_type (node) == G_TYPE_STRING)
                type = json_node_get_string (node);

              node = json_object_get_member (error_object, "message");
              if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
                  json_node_get_value_type (node) == G_TYPE_STRING)
                message = json_node_get_string (node);
            }
        }
    }

  code = tally_api_error_from_type (type, status);
  *error_type = g_strdup (type != NULL ? type : type_for_code (code));

  if (message != NULL && *message != '\0')
    error = g_error_new_literal (TALLY_API_ERROR, code, message);
  else if (type != NULL)
    error = g_error_new (TALLY_API_ERROR, code,
                         "The server answered HTTP %u (%s)", status, type);
  else
    error = g_error_new (TALLY_API_ERROR, code,
                         "The server answered HTTP %u %s without an API error body",
                         status, reason != NULL ? reason : "");

  return error;
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
  start_attempt (task);

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

  if (server_delay_ms > 0 && server_delay_ms <= MAX_SERVER_DELAY_MS)
    delay_ms = (guint) server_delay_ms;
  else
    delay_ms = backoff_ms (retries_done);

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

static void
http_failed (GTask *task)
{
  Request *req = g_task_get_task_data (task);
  SoupMessageHeaders *headers = soup_message_get_response_headers (req->message);
  const char *should_retry;
  g_autofree char *type = NULL;
  g_autofree char *body_request_id = NULL;
  gboolean retryable;
  GError *error;

  error = error_from_response (req->status,
                               soup_message_get_reason_phrase (req->message),
                               req->collected->data, req->collected->len,
                               &type, &body_request_id);

  /* The header is the primary source; a proxy may have dropped it. */
  if (req->request_id == NULL)
    req->request_id = g_steal_pointer (&body_request_id);

  retryable = status_is_retryable (req->status);
  should_retry = soup_message_headers_get_one (headers, "x-should-retry");
  if (g_strcmp0 (should_retry, "true") == 0)
    retryable = TRUE;
  else if (g_strcmp0 (should_retry, "false") == 0)
    retryable = FALSE;

  attempt_failed (task, error, retryable, req->status, type,
                  server_delay_ms (headers));
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

/* Reading a whole body (an error body or a model list) */

static void collect_cb (GObject      *object,
                        GAsyncResult *result,
                        gpointer      user_data);

static void
collect_next (GTask *task)
{
  Request *req = g_task_get_task_data (task);

  g_input_stream_read_bytes_async (req->input, READ_CHUNK_SIZE, G_PRIORITY_DEFAULT,
                                   req->attempt_cancellable, collect_cb,
                                   g_object_ref (task));
}

static void
collect_done (GTask *task)
{
  Request *req = g_task_get_task_data (task);

  if (!SOUP_STATUS_IS_SUCCESSFUL (req->status))
    http_failed (task);
  else
    models_received (task);
}

static void
collect_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr (GTask) task = user_data;
  Request *req = g_task_get_task_data (task);
  g_autoptr (GBytes) bytes = NULL;
  GError *error = NULL;
  gsize len;

  bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error);
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

  collect_next (task);
}

static void
collect_start (GTask *task,
               gsize  limit)
{
  Request *req = g_task_get_task_data (task);

  req->collected = g_byte_array_new ();
  req->collect_limit = limit;
  collect_next (task);
}

/* Reading an event stream */

static void stream_read_cb (GObject      *object,
                            GAsyncResult *result,
                            gpointer      user_data);

static void
stream_read_next (GTask *task)
{
  Request *req = g_task_get_task_data (task);

  g_input_stream_read_bytes_async (req->input, READ_CHUNK_SIZE, G_PRIORITY_DEFAULT,
                                   req->attempt_cancellable, stream_read_cb,
                                   g_object_ref (task));
}

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
              stream_error_type_is_retryable (type);

  attempt_failed (task, g_error_copy (stream_error), retryable, 200, type, -1);
}

static void
stream_read_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr (GTask) task = user_data;
  Request *req = g_task_get_task_data (task);
  g_autoptr (GBytes) bytes = NULL;
  GError *error = NULL;
  gsize len;
  const guint8 *data;

  bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error);
  if (bytes == NULL)
    {
      transport_failed (task, error);
      return;
    }

  watchdog_touch (req);

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

  stream_read_next (task);
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
  if (input == NULL)
    {
      transport_failed (task, error);
      return;
    }

  watchdog_touch (req);

  req->input = input;
  req->got_response = TRUE;
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

  stream_read_next (task);
}

static void
start_attempt (GTask *task)
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
 * or returns the task already finished with an error. */
static GTask *
request_task_new (TallyClient         *self,
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

/* GObject */

static void
tally_client_set_base_url (TallyClient *self,
                           const char  *base_url)
{
  gsize len;

  if (base_url == NULL || *base_url == '\0')
    base_url = TALLY_DEFAULT_BASE_URL;

  self->base_url = g_strstrip (g_strdup (base_url));
  len = strlen (self->base_url);
  while (len > 0 && self->base_url[len - 1] == '/')
    self->base_url[--len] = '\0';
}

static void
tally_client_dispose (GObject *object)
{
  TallyClient *self = TALLY_CLIENT (object);

  if (self->session != NULL)
    soup_session_abort (self->session);
  g_clear_object (&self->session);

  G_OBJECT_CLASS (tally_client_parent_class)->dispose (object);
}

static void
tally_client_finalize (GObject *object)
{
  TallyClient *self = TALLY_CLIENT (object);

  g_clear_pointer (&self->base_url, g_free);
  g_clear_pointer (&self->api_key, g_free);
  g_clear_pointer (&self->api_version, g_free);

  G_OBJECT_CLASS (tally_client_parent_class)->finalize (object);
}

static void
tally_client_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  TallyClient *self = TALLY_CLIENT (object);

  switch (prop_id)
    {
    case PROP_BASE_URL:
      g_value_set_string (value, self->base_url);
      break;

    case PROP_API_KEY:
      g_value_set_string (value, self->api_key);
      break;

    case PROP_API_VERSION:
      g_value_set_string (value, self->api_version);
      break;

    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, tally_client_get_idle_timeout (self));
      break;

    case PROP_MAX_RETRIES:
      g_value_set_uint (value, self->max_retries);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_client_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  TallyClient *self = TALLY_CLIENT (object);

  switch (prop_id)
    {
    case PROP_BASE_URL:
      tally_client_set_base_url (self, g_value_get_string (value));
      break;

    case PROP_API_KEY:
      tally_client_set_api_key (self, g_value_get_string (value));
      break;

    case PROP_API_VERSION:
      tally_client_set_api_version (self, g_value_get_string (value));
      break;

    case PROP_IDLE_TIMEOUT:
      tally_client_set_idle_timeout (self, g_value_get_uint (value));
      break;

    case PROP_MAX_RETRIES:
      tally_client_set_max_retries (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_client_class_init (TallyClientClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_client_dispose;
  object_class->finalize = tally_client_finalize;
  object_class->get_property = tally_client_get_property;
  object_class->set_property = tally_client_set_property;

  /**
   * TallyClient:base-url:
   *
   * The origin of the API without `/v1`, e.g. "https://api.anthropic.com"
   * or "http://127.0.0.1:8080". Trailing slashes are removed; %NULL or ""
   * gives %TALLY_DEFAULT_BASE_URL.
   */
  properties[PROP_BASE_URL] =
    g_param_spec_string ("base-url", NULL, NULL,
                         TALLY_DEFAULT_BASE_URL,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyClient:api-key:
   *
   * The key sent as `x-api-key`, or %NULL to send none. It is never logged.
   */
  properties[PROP_API_KEY] =
    g_param_spec_string ("api-key", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyClient:api-version:
   *
   * The `anthropic-version` header value; %NULL resets it to
   * %TALLY_DEFAULT_API_VERSION.
   */
  properties[PROP_API_VERSION] =
    g_param_spec_string ("api-version", NULL, NULL,
                         TALLY_DEFAULT_API_VERSION,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyClient:idle-timeout:
   *
   * Seconds without a received byte after which an attempt is aborted
   * with %TALLY_API_ERROR_STALLED; 0 disables the watchdog. Rounded up
   * when tally_client_set_idle_timeout_ms() set a fraction of a second.
   * Requests already running keep the value they started with.
   */
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_uint ("idle-timeout", NULL, NULL,
                       0, G_MAXUINT / 1000, 90,
                       (G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyClient:max-retries:
   *
   * How many times a failed request may be sent again after its first
   * attempt (so at most max-retries + 1 attempts).
   */
  properties[PROP_MAX_RETRIES] =
    g_param_spec_uint ("max-retries", NULL, NULL,
                       0, 100, 4,
                       (G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
tally_client_init (TallyClient *self)
{
  self->api_version = g_strdup (TALLY_DEFAULT_API_VERSION);
  self->idle_timeout_ms = 90 * 1000;
  self->max_retries = 4;

  /* No session timeout: a long answer may stream for many minutes, and the
   * idle watchdog catches a dead connection instead. */
  self->session = soup_session_new_with_options ("user-agent", "Tally/" PACKAGE_VERSION,
                                                 "timeout", 0,
                                                 NULL);
}

/* Public API */

/**
 * tally_client_new:
 * @base_url: (nullable): the origin of the API without `/v1`, e.g.
 *   "https://api.anthropic.com"; %NULL for %TALLY_DEFAULT_BASE_URL
 * @api_key: (nullable): the key sent as `x-api-key`
 *
 * Creates a client with its own #SoupSession. A trailing slash of
 * @base_url is removed. An invalid @base_url is reported by the first
 * request (%G_IO_ERROR_INVALID_ARGUMENT).
 *
 * Returns: (transfer full): a new #TallyClient
 */
TallyClient *
tally_client_new (const char *base_url,
                  const char *api_key)
{
  return g_object_new (TALLY_TYPE_CLIENT,
                       "base-url", base_url,
                       "api-key", api_key,
                       NULL);
}

/**
 * tally_client_get_base_url:
 * @self: a #TallyClient
 *
 * Returns: (transfer none): the base URL, without a trailing slash
 */
const char *
tally_client_get_base_url (TallyClient *self)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), NULL);

  return self->base_url;
}

/**
 * tally_client_set_api_key:
 * @self: a #TallyClient
 * @api_key: (nullable): the key sent as `x-api-key`, or %NULL for none
 *
 * Sets #TallyClient:api-key for the requests started from now on.
 */
void
tally_client_set_api_key (TallyClient *self,
                          const char  *api_key)
{
  g_return_if_fail (TALLY_IS_CLIENT (self));

  if (g_strcmp0 (self->api_key, api_key) == 0)
    return;

  g_free (self->api_key);
  self->api_key = g_strdup (api_key);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_API_KEY]);
}

/**
 * tally_client_get_api_version:
 * @self: a #TallyClient
 *
 * Returns: (transfer none): the `anthropic-version` header value
 */
const char *
tally_client_get_api_version (TallyClient *self)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), NULL);

  return self->api_version;
}

/**
 * tally_client_set_api_version:
 * @self: a #TallyClient
 * @api_version: (nullable): the `anthropic-version` header value, e.g.
 *   "2023-06-01"; %NULL or "" for %TALLY_DEFAULT_API_VERSION
 *
 * Sets #TallyClient:api-version for the requests started from now on.
 */
void
tally_client_set_api_version (TallyClient *self,
                              const char  *api_version)
{
  g_return_if_fail (TALLY_IS_CLIENT (self));

  if (api_version == NULL || *api_version == '\0')
    api_version = TALLY_DEFAULT_API_VERSION;

  if (g_strcmp0 (self->api_version, api_version) == 0)
    return;

  g_free (self->api_version);
  self->api_version = g_strdup (api_version);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_API_VERSION]);
}

/**
 * tally_client_set_idle_timeout:
 * @self: a #TallyClient
 * @seconds: seconds without a received byte before an attempt is aborted,
 *   or 0 for no watchdog (at most %G_MAXUINT / 1000)
 *
 * Sets #TallyClient:idle-timeout for the requests started from now on.
 */
void
tally_client_set_idle_timeout (TallyClient *self,
                               guint        seconds)
{
  g_return_if_fail (TALLY_IS_CLIENT (self));

  tally_client_set_idle_timeout_ms (self, MIN (seconds, G_MAXUINT / 1000) * 1000);
}

/**
 * tally_client_get_idle_timeout:
 * @self: a #TallyClient
 *
 * Returns: the idle timeout in seconds, rounded up; 0 when there is none
 */
guint
tally_client_get_idle_timeout (TallyClient *self)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), 0);

  return self->idle_timeout_ms / 1000 + (self->idle_timeout_ms % 1000 != 0);
}

/**
 * tally_client_set_idle_timeout_ms:
 * @self: a #TallyClient
 * @milliseconds: milliseconds without a received byte before an attempt is
 *   aborted, or 0 for no watchdog
 *
 * Like tally_client_set_idle_timeout() with a finer unit, for tests and
 * short-lived requests.
 */
void
tally_client_set_idle_timeout_ms (TallyClient *self,
                                  guint        milliseconds)
{
  g_return_if_fail (TALLY_IS_CLIENT (self));

  if (self->idle_timeout_ms == milliseconds)
    return;

  self->idle_timeout_ms = milliseconds;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IDLE_TIMEOUT]);
}

/**
 * tally_client_get_idle_timeout_ms:
 * @self: a #TallyClient
 *
 * Returns: the idle timeout in milliseconds; 0 when there is none
 */
guint
tally_client_get_idle_timeout_ms (TallyClient *self)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), 0);

  return self->idle_timeout_ms;
}

/**
 * tally_client_set_max_retries:
 * @self: a #TallyClient
 * @max_retries: retries allowed after the first attempt (0 … 100)
 *
 * Sets #TallyClient:max-retries for the requests started from now on.
 */
void
tally_client_set_max_retries (TallyClient *self,
                              guint        max_retries)
{
  g_return_if_fail (TALLY_IS_CLIENT (self));

  max_retries = MIN (max_retries, 100);
  if (self->max_retries == max_retries)
    return;

  self->max_retries = max_retries;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_RETRIES]);
}

/**
 * tally_client_get_max_retries:
 * @self: a #TallyClient
 *
 * Returns: the retries allowed after the first attempt
 */
guint
tally_client_get_max_retries (TallyClient *self)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), 0);

  return self->max_retries;
}

/**
 * tally_client_stream_async:
 * @self: a #TallyClient
 * @body: the JSON request body (`MessageCreateParams`, docs/protocol.md §2),
 *   sent unchanged; the caller puts `"stream": true` in it
 * @stream: the #TallyMessageStream that decodes and accumulates the answer
 * @cancellable: (nullable): a #GCancellable
 * @callback: called once when the request has completed, failed or been
 *   cancelled
 * @user_data: data for @callback
 *
 * Sends `POST {base-url}/v1/messages` with `x-api-key`,
 * `anthropic-version`, `content-type: application/json` and
 * `accept: application/json` (docs/protocol.md §1), and feeds the event stream
 * of a 2xx answer into @stream as it arrives.
 *
 * Each attempt calls tally_message_stream_begin_attempt() (1 for the
 * first), then, once it got an HTTP status,
 * tally_message_stream_notify_attempt_finished() with the status, the
 * `request-id` header, its duration and its error (%NULL on success).
 * Before a retry it calls tally_message_stream_notify_retry() with the
 * attempt about to start (2 = first retry), the delay in milliseconds, the
 * HTTP status (200 for an `error` event inside a stream, 0 for a
 * connection failure or a stall) and the error type (the API's
 * `error.type`, "connection_error" or "stalled"). Retries follow the class
 * documentation; cancelling @cancellable ends the request promptly in any
 * phase, back-off included.
 */
void
tally_client_stream_async (TallyClient         *self,
                           GBytes              *body,
                           TallyMessageStream  *stream,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr (GTask) task = NULL;
  Request *req;

  g_return_if_fail (TALLY_IS_CLIENT (self));
  g_return_if_fail (body != NULL);
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = request_task_new (self, SOUP_METHOD_POST, "/v1/messages",
                           cancellable, callback, user_data,
                           tally_client_stream_async);
  if (task == NULL)
    return;

  req = g_task_get_task_data (task);
  req->stream = g_object_ref (stream);
  req->body = g_bytes_ref (body);

  start_attempt (task);
}

/**
 * tally_client_stream_finish:
 * @self: a #TallyClient
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes tally_client_stream_async(). The message itself (content,
 * stop reason, usage) is read from the #TallyMessageStream, also after a
 * failure, when it holds what arrived before the failure.
 *
 * Errors: %G_IO_ERROR_CANCELLED when cancelled before the body ended (even
 * if `message_stop` had just been applied: tally_message_stream_is_complete()
 * tells); %G_IO_ERROR_INVALID_ARGUMENT
 * for a base URL that is not http(s); otherwise %TALLY_API_ERROR: the code
 * mapped from the HTTP error (message = the API's `error.message`, or one
 * naming the status when the body is not an API error), the stream's own
 * error (%TALLY_API_ERROR_STREAM for an `error` event,
 * %TALLY_API_ERROR_PROTOCOL, %TALLY_API_ERROR_INCOMPLETE when the body
 * ended before `message_stop`), %TALLY_API_ERROR_NETWORK or
 * %TALLY_API_ERROR_STALLED. After the retries ran out, the last attempt's
 * error.
 *
 * Returns: %TRUE when the message completed (`message_stop` arrived)
 */
gboolean
tally_client_stream_finish (TallyClient   *self,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_client_stream_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * tally_client_list_models_async:
 * @self: a #TallyClient
 * @cancellable: (nullable): a #GCancellable
 * @callback: called once when the list has arrived or the request failed
 * @user_data: data for @callback
 *
 * Sends `GET {base-url}/v1/models?limit=1000` (docs/protocol.md §1) with the
 * same headers as tally_client_stream_async(), with the same retry policy
 * and idle watchdog.
 */
void
tally_client_list_models_async (TallyClient         *self,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (TALLY_IS_CLIENT (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = request_task_new (self, SOUP_METHOD_GET, "/v1/models?limit=1000",
                           cancellable, callback, user_data,
                           tally_client_list_models_async);
  if (task == NULL)
    return;

  start_attempt (task);
}

/**
 * tally_client_list_models_finish:
 * @self: a #TallyClient
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes tally_client_list_models_async().
 *
 * Errors: as tally_client_stream_finish(); %TALLY_API_ERROR_PROTOCOL when
 * the answer is not a JSON object or is larger than 16 MiB.
 *
 * Returns: (transfer full) (nullable): the parsed answer, a JSON object
 *   `{"data": [ModelInfo…], "has_more", "first_id", "last_id"}` as the
 *   server sent it, or %NULL on error
 */
JsonNode *
tally_client_list_models_finish (TallyClient   *self,
                                 GAsyncResult  *result,
                                 GError       **error)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_client_list_models_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
