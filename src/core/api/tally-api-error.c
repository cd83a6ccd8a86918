/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-api-error.h"

#include <gio/gio.h>

/**
 * tally_api_error_quark:
 *
 * Returns the quark of the %TALLY_API_ERROR domain, registered under the
 * name "tally-api-error-quark".
 *
 * Returns: the error domain quark
 */
G_DEFINE_QUARK (tally-api-error-quark, tally_api_error)

typedef struct {
  const char    *type;
  TallyApiError  code;
} TypeMapping;

/* The `error.type` strings of the API's JSON error body (docs/protocol.md
 * §12.1). The set may grow; anything not listed here falls back to the HTTP
 * status. */
static const TypeMapping type_mappings[] = {
  { "invalid_request_error", TALLY_API_ERROR_INVALID_REQUEST },
  { "authentication_error",  TALLY_API_ERROR_AUTHENTICATION },
  { "billing_error",         TALLY_API_ERROR_BILLING },
  { "permission_error",      TALLY_API_ERROR_PERMISSION },
  { "not_found_error",       TALLY_API_ERROR_NOT_FOUND },
  { "conflict_error",        TALLY_API_ERROR_CONFLICT },
  { "request_too_large",     TALLY_API_ERROR_REQUEST_TOO_LARGE },
  { "rate_limit_error",      TALLY_API_ERROR_RATE_LIMIT },
  { "api_error",             TALLY_API_ERROR_API },
  { "timeout_error",         TALLY_API_ERROR_TIMEOUT },
  { "overloaded_error",      TALLY_API_ERROR_OVERLOADED },
};

static TallyApiError
error_from_status (guint http_status)
{
  switch (http_status)
    {
    case 400: return TALLY_API_ERROR_INVALID_REQUEST;
    case 401: return TALLY_API_ERROR_AUTHENTICATION;
    case 402: return TALLY_API_ERROR_BILLING;
    case 403: return TALLY_API_ERROR_PERMISSION;
    case 404: return TALLY_API_ERROR_NOT_FOUND;
    case 408: return TALLY_API_ERROR_REQUEST_TIMEOUT;
    case 409: return TALLY_API_ERROR_CONFLICT;
    case 413: return TALLY_API_ERROR_REQUEST_TOO_LARGE;
    case 429: return TALLY_API_ERROR_RATE_LIMIT;
    case 504: return TALLY_API_ERROR_TIMEOUT;
    case 529: return TALLY_API_ERROR_OVERLOADED;
    default:
      break;
    }

  if (http_status >= 400 && http_status < 500)
    return TALLY_API_ERROR_INVALID_REQUEST;

  /* 5xx, and anything odd (0 for an error event inside a 200 stream, 2xx,
   * 3xx) whose type we do not know either: a generic server-side error. */
  return TALLY_API_ERROR_API;
}

/**
 * tally_api_error_from_type:
 * @error_type: (nullable): the `error.type` string of an API error body or
 *   of a stream `error` event, e.g. "overloaded_error"
 * @http_status: the HTTP status of the response, or 0 when there is none
 *   (an `error` event inside a 200 stream may pass 200 or 0)
 *
 * Maps an API error to a #TallyApiError code, following the status/type
 * table of the Messages API "Errors" page (docs/protocol.md §12.1).
 *
 * A known @error_type wins. When @error_type is %NULL or unknown (the list
 * may grow over time), the code comes from @http_status: 400 and unlisted
 * 4xx → %TALLY_API_ERROR_INVALID_REQUEST, 401, 402, 403, 404, 408, 409, 413,
 * 429 → their own codes, 504 → %TALLY_API_ERROR_TIMEOUT, 529 →
 * %TALLY_API_ERROR_OVERLOADED, other 5xx (and any other status) →
 * %TALLY_API_ERROR_API.
 *
 * Returns: the matching error code
 */
TallyApiError
tally_api_error_from_type (const char *error_type,
                           guint       http_status)
{
  if (error_type != NULL)
    {
      for (guint i = 0; i < G_N_ELEMENTS (type_mappings); i++)
        {
          if (g_str_equal (error_type, type_mappings[i].type))
            return type_mappings[i].code;
        }
    }

  return error_from_status (http_status);
}

/**
 * tally_api_error_is_retryable:
 * @error: (nullable): an error, of any domain
 *
 * Whether the request that failed with @error may be sent again unchanged,
 * following Tally's retry rule (docs/protocol.md §11.1, §12.3):
 * %TRUE for %TALLY_API_ERROR_REQUEST_TIMEOUT, %TALLY_API_ERROR_CONFLICT,
 * %TALLY_API_ERROR_RATE_LIMIT, %TALLY_API_ERROR_API,
 * %TALLY_API_ERROR_TIMEOUT, %TALLY_API_ERROR_OVERLOADED,
 * %TALLY_API_ERROR_NETWORK and %TALLY_API_ERROR_STALLED; %FALSE for every
 * other code, for other domains (cancellation included) and for %NULL.
 *
 * The caller must additionally check that no content had arrived yet; this
 * function only looks at the error.
 *
 * Returns: %TRUE when a retry is allowed
 */
gboolean
tally_api_error_is_retryable (const GError *error)
{
  if (error == NULL || error->domain != TALLY_API_ERROR)
    return FALSE;

  switch ((TallyApiError) error->code)
    {
    case TALLY_API_ERROR_REQUEST_TIMEOUT:
    case TALLY_API_ERROR_CONFLICT:
    case TALLY_API_ERROR_RATE_LIMIT:
    case TALLY_API_ERROR_API:
    case TALLY_API_ERROR_TIMEOUT:
    case TALLY_API_ERROR_OVERLOADED:
    case TALLY_API_ERROR_NETWORK:
    case TALLY_API_ERROR_STALLED:
      return TRUE;

    case TALLY_API_ERROR_INVALID_REQUEST:
    case TALLY_API_ERROR_AUTHENTICATION:
    case TALLY_API_ERROR_BILLING:
    case TALLY_API_ERROR_PERMISSION:
    case TALLY_API_ERROR_NOT_FOUND:
    case TALLY_API_ERROR_REQUEST_TOO_LARGE:
    case TALLY_API_ERROR_STREAM:
    case TALLY_API_ERROR_INCOMPLETE:
    case TALLY_API_ERROR_PROTOCOL:
    case TALLY_API_ERROR_BUDGET:
    default:
      return FALSE;
    }
}

/**
 * tally_api_error_get_kind:
 * @error: an error, of any domain
 *
 * Returns the `error.kind` string of the event log for @error
 * (docs/protocol.md §12.2):
 * "http" for the HTTP status codes (%TALLY_API_ERROR_INVALID_REQUEST …
 * %TALLY_API_ERROR_OVERLOADED), "stream" for %TALLY_API_ERROR_STREAM and
 * %TALLY_API_ERROR_PROTOCOL, "network" for %TALLY_API_ERROR_NETWORK and
 * %TALLY_API_ERROR_INCOMPLETE (a cut connection), "stalled" for
 * %TALLY_API_ERROR_STALLED, "budget" for %TALLY_API_ERROR_BUDGET,
 * "cancelled" for %G_IO_ERROR_CANCELLED, and
 * "network" for any other error of another domain.
 *
 * Returns: (transfer none): a static string
 */
const char *
tally_api_error_get_kind (const GError *error)
{
  g_return_val_if_fail (error != NULL, "network");

  if (error->domain != TALLY_API_ERROR)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return "cancelled";
      return "network";
    }

  switch ((TallyApiError) error->code)
    {
    case TALLY_API_ERROR_INVALID_REQUEST:
    case TALLY_API_ERROR_AUTHENTICATION:
    case TALLY_API_ERROR_BILLING:
    case TALLY_API_ERROR_PERMISSION:
    case TALLY_API_ERROR_NOT_FOUND:
    case TALLY_API_ERROR_REQUEST_TIMEOUT:
    case TALLY_API_ERROR_CONFLICT:
    case TALLY_API_ERROR_REQUEST_TOO_LARGE:
    case TALLY_API_ERROR_RATE_LIMIT:
    case TALLY_API_ERROR_API:
    case TALLY_API_ERROR_TIMEOUT:
    case TALLY_API_ERROR_OVERLOADED:
      return "http";

    case TALLY_API_ERROR_STREAM:
    case TALLY_API_ERROR_PROTOCOL:
      return "stream";

    case TALLY_API_ERROR_STALLED:
      return "stalled";

    case TALLY_API_ERROR_BUDGET:
      return "budget";

    case TALLY_API_ERROR_NETWORK:
    case TALLY_API_ERROR_INCOMPLETE:
    default:
      return "network";
    }
}
