/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-client-private.h"
#include "tally-properties.h"

#include <string.h>

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

G_DEFINE_FINAL_TYPE (TallyClient, tally_client, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_BASE_URL,
  PROP_API_KEY,
  PROP_API_VERSION,
  PROP_IDLE_TIMEOUT,
  PROP_MAX_RETRIES,
  PROP_REACHABLE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define FIELD(member) G_STRUCT_OFFSET (TallyClient, member)
#define NOTIFY (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY)

/* In the order of the PROP_ ids above. */
static const TallyPropertyEntry property_table[N_PROPS - 1] = {
  /**
   * TallyClient:base-url:
   *
   * The origin of the API without `/v1`, e.g. "https://api.anthropic.com"
   * or "http://127.0.0.1:8080". Trailing slashes are removed; %NULL or ""
   * gives %TALLY_DEFAULT_BASE_URL.
   */
  { "base-url", G_TYPE_STRING, FIELD (base_url), TALLY_DEFAULT_BASE_URL, 0,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY },
  /**
   * TallyClient:api-key:
   *
   * The key sent as `x-api-key`, or %NULL to send none. It is never logged.
   */
  { "api-key", G_TYPE_STRING, FIELD (api_key), NULL, 0, NOTIFY },
  /**
   * TallyClient:api-version:
   *
   * The `anthropic-version` header value; %NULL resets it to
   * %TALLY_DEFAULT_API_VERSION.
   */
  { "api-version", G_TYPE_STRING, FIELD (api_version), TALLY_DEFAULT_API_VERSION, 0, NOTIFY },
  /**
   * TallyClient:idle-timeout:
   *
   * Seconds without a received byte after which an attempt is aborted
   * with %TALLY_API_ERROR_STALLED; 0 disables the watchdog. Rounded up
   * when tally_client_set_idle_timeout_ms() set a fraction of a second.
   * Requests already running keep the value they started with.
   */
  { "idle-timeout", G_TYPE_UINT, TALLY_PROPERTY_COMPUTED, NULL, 90, NOTIFY | G_PARAM_CONSTRUCT,
    NULL, G_MAXUINT / 1000 },
  /**
   * TallyClient:max-retries:
   *
   * How many times a failed request may be sent again after its first
   * attempt (so at most max-retries + 1 attempts).
   */
  { "max-retries", G_TYPE_UINT, FIELD (max_retries), NULL, 4, NOTIFY | G_PARAM_CONSTRUCT,
    NULL, 100 },
  /**
   * TallyClient:reachable:
   *
   * %FALSE from an attempt that could not reach the server at all (the
   * connection was refused, the host or network unreachable, the name
   * not resolved) until the next attempt that gets an HTTP response; the
   * window shows itself offline meanwhile (docs/architecture.md §3.4).
   */
  { "reachable", G_TYPE_BOOLEAN, FIELD (reachable), NULL, 1, G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY },
};

#undef FIELD
#undef NOTIFY

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

  if (tally_properties_get (object, property_table, G_N_ELEMENTS (property_table), prop_id, value))
    return;

  switch (prop_id)
    {
    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, tally_client_get_idle_timeout (self));
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

  tally_properties_install (object_class, property_table, G_N_ELEMENTS (property_table), properties);
}

static void
tally_client_init (TallyClient *self)
{
  self->api_version = g_strdup (TALLY_DEFAULT_API_VERSION);
  self->idle_timeout_ms = 90 * 1000;
  self->max_retries = 4;
  self->reachable = TRUE;

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

  tally_properties_set_string (G_OBJECT (self), &self->api_key, api_key, properties[PROP_API_KEY]);
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

  tally_properties_set_string (G_OBJECT (self), &self->api_version, api_version,
                               properties[PROP_API_VERSION]);
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

  tally_properties_set_uint (G_OBJECT (self), &self->idle_timeout_ms, milliseconds,
                             properties[PROP_IDLE_TIMEOUT]);
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

  tally_properties_set_uint (G_OBJECT (self), &self->max_retries, MIN (max_retries, 100),
                             properties[PROP_MAX_RETRIES]);
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
 * tally_client_get_reachable:
 * @self: a #TallyClient
 *
 * Returns: the #TallyClient:reachable property: %FALSE while the last
 *   attempt could not reach the server
 */
gboolean
tally_client_get_reachable (TallyClient *self)
{
  g_return_val_if_fail (TALLY_IS_CLIENT (self), TRUE);

  return self->reachable;
}

/* Called by the requests: whether the attempt that just ended reached
 * the server (an HTTP response) or could not (a failed connection). */
void
tally_client_set_reachable (TallyClient *self,
                            gboolean     reachable)
{
  g_return_if_fail (TALLY_IS_CLIENT (self));

  tally_properties_set_boolean (G_OBJECT (self), &self->reachable, reachable, properties[PROP_REACHABLE]);
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
  TallyClientRequest *req;

  g_return_if_fail (TALLY_IS_CLIENT (self));
  g_return_if_fail (body != NULL);
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = tally_client_request_task_new (self, SOUP_METHOD_POST, "/v1/messages",
                                        cancellable, callback, user_data,
                                        tally_client_stream_async);
  if (task == NULL)
    return;

  req = g_task_get_task_data (task);
  req->stream = g_object_ref (stream);
  req->body = g_bytes_ref (body);

  tally_client_request_start (task);
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

  task = tally_client_request_task_new (self, SOUP_METHOD_GET, "/v1/models?limit=1000",
                                        cancellable, callback, user_data,
                                        tally_client_list_models_async);
  if (task == NULL)
    return;

  tally_client_request_start (task);
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
