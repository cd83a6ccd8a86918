/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-client-private.h"

#include <math.h>

#include "tally-api-error.h"
#include "tally-json.h"

/*
 * The retry policy of #TallyClient (docs/protocol.md §11): which failures
 * are worth sending the request again for, how long to wait before the
 * next attempt, and the error a failed HTTP answer becomes
 * (docs/protocol.md §12.1). Nothing here holds state or touches the
 * network; tally-client-request.c asks and acts.
 */

#define MAX_SERVER_DELAY_MS  60000
#define MAX_BACKOFF_MS       8000
#define FIRST_BACKOFF_MS     500

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
    case TALLY_API_ERROR_BUDGET:
    default:
      return "api_error";
    }
}

/**
 * tally_client_error_from_response:
 * @status: the HTTP status of a non-2xx answer
 * @reason: (nullable): its reason phrase
 * @data: (array length=len): its body, possibly truncated
 * @len: the length of @data in bytes
 * @error_type: (out) (transfer full): the API's `error.type`, or the
 *   canonical type of the code the status maps to
 * @request_id: (out) (transfer full) (nullable): the body's `request_id`;
 *   left unchanged when the body has none
 *
 * Builds the error of a non-2xx answer: from the API's JSON error body when
 * it is one (docs/protocol.md §12.1), otherwise an error naming the status.
 *
 * Returns: (transfer full): a %TALLY_API_ERROR
 */
GError *
tally_client_error_from_response (guint         status,
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

  if (len > 0 && json_parser_load_from_data (parser, (const char *) data, len, NULL))
    {
      JsonNode *root = json_parser_get_root (parser);

      if (JSON_NODE_HOLDS_OBJECT (root))
        {
          JsonObject *object = json_node_get_object (root);
          JsonObject *error_object = tally_json_object_get_object (object, "error");
          const char *id = tally_json_object_get_string (object, "request_id", NULL);

          if (id != NULL)
            *request_id = g_strdup (id);

          type = tally_json_object_get_string (error_object, "type", NULL);
          message = tally_json_object_get_string (error_object, "message", NULL);
        }
    }

  code = tally_api_error_from_type (type, status);
  *error_type = g_strdup (type != NULL ? type : type_for_code (code));

  if (message != NULL && *message != '\0')
    return g_error_new_literal (TALLY_API_ERROR, code, message);
  if (type != NULL)
    return g_error_new (TALLY_API_ERROR, code,
                        "The server answered HTTP %u (%s)", status, type);
  return g_error_new (TALLY_API_ERROR, code,
                      "The server answered HTTP %u %s without an API error body",
                      status, reason != NULL ? reason : "");
}

/**
 * tally_client_http_is_retryable:
 * @status: the HTTP status of a non-2xx answer
 * @headers: (nullable): its response headers
 *
 * HTTP 408, 409, 429 and 5xx are retried unless the server says otherwise
 * in `x-should-retry`, which also makes any other status retryable
 * (docs/protocol.md §11.1).
 *
 * Returns: %TRUE when the request is worth sending again
 */
gboolean
tally_client_http_is_retryable (guint               status,
                                SoupMessageHeaders *headers)
{
  const char *should_retry = NULL;

  if (headers != NULL)
    should_retry = soup_message_headers_get_one (headers, "x-should-retry");

  if (g_strcmp0 (should_retry, "true") == 0)
    return TRUE;
  if (g_strcmp0 (should_retry, "false") == 0)
    return FALSE;

  return status == 408 || status == 409 || status == 429 || status >= 500;
}

/**
 * tally_client_stream_error_is_retryable:
 * @error_type: (nullable): the `error.type` of an `error` event
 *
 * Returns: %TRUE for the `error` event types worth sending the request
 *   again for (docs/protocol.md §11.1)
 */
gboolean
tally_client_stream_error_is_retryable (const char *error_type)
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

/**
 * tally_client_server_delay_ms:
 * @headers: (nullable): the response headers of a failed attempt
 *
 * The delay the server asks for: `retry-after-ms` first, then
 * `retry-after` as (fractional) seconds or as an HTTP-date
 * (docs/protocol.md §11.2).
 *
 * Returns: the delay in milliseconds, or -1 when the server asks for none
 */
gint64
tally_client_server_delay_ms (SoupMessageHeaders *headers)
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

/**
 * tally_client_retry_delay_ms:
 * @server_delay_ms: the delay the server asked for in milliseconds, or -1
 * @retries_done: how many retries of the request were made so far
 *
 * The wait before the next attempt (docs/protocol.md §11.2): the server's
 * delay when it asked for one of at most a minute; otherwise
 * min(0.5 · 2^n, 8) s × (1 − 0.25 · random), n = @retries_done.
 *
 * Returns: the delay in milliseconds
 */
guint
tally_client_retry_delay_ms (gint64 server_delay_ms,
                             guint  retries_done)
{
  double delay = FIRST_BACKOFF_MS;

  if (server_delay_ms > 0 && server_delay_ms <= MAX_SERVER_DELAY_MS)
    return (guint) server_delay_ms;

  for (guint i = 0; i < retries_done && delay < MAX_BACKOFF_MS; i++)
    delay *= 2;
  delay = MIN (delay, MAX_BACKOFF_MS);

  return (guint) (delay * (1.0 - 0.25 * g_random_double ()));
}
