/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TALLY_API_ERROR:
 *
 * Error domain for failures talking to the Anthropic Messages API: HTTP
 * errors (mapped from the `error.type` of the JSON error body, see the API's
 * "Errors" page), `error` events inside a stream, network failures, stalls
 * and protocol violations. Errors in this domain use #TallyApiError codes.
 * Cancellation is reported as %G_IO_ERROR_CANCELLED instead.
 */
#define TALLY_API_ERROR (tally_api_error_quark ())

/**
 * TallyApiError:
 * @TALLY_API_ERROR_INVALID_REQUEST: HTTP 400 (and unlisted 4xx), `invalid_request_error`
 * @TALLY_API_ERROR_AUTHENTICATION: HTTP 401, `authentication_error`
 * @TALLY_API_ERROR_BILLING: HTTP 402, `billing_error`
 * @TALLY_API_ERROR_PERMISSION: HTTP 403, `permission_error`
 * @TALLY_API_ERROR_NOT_FOUND: HTTP 404, `not_found_error`
 * @TALLY_API_ERROR_REQUEST_TIMEOUT: HTTP 408
 * @TALLY_API_ERROR_CONFLICT: HTTP 409
 * @TALLY_API_ERROR_REQUEST_TOO_LARGE: HTTP 413, `request_too_large`
 * @TALLY_API_ERROR_RATE_LIMIT: HTTP 429, `rate_limit_error`
 * @TALLY_API_ERROR_API: HTTP 500 and other 5xx, `api_error`
 * @TALLY_API_ERROR_TIMEOUT: HTTP 504, `timeout_error`
 * @TALLY_API_ERROR_OVERLOADED: HTTP 529, `overloaded_error`
 * @TALLY_API_ERROR_STREAM: an `error` event arrived inside a 200 stream
 * @TALLY_API_ERROR_NETWORK: the connection failed, was refused or was cut
 * @TALLY_API_ERROR_STALLED: the idle watchdog saw no byte for too long
 * @TALLY_API_ERROR_INCOMPLETE: the stream ended before `message_stop`
 * @TALLY_API_ERROR_PROTOCOL: the server sent something that is not a valid
 *   Messages API stream (bad JSON, events out of order)
 * @TALLY_API_ERROR_BUDGET: nothing was sent: the session's cost had reached
 *   its spend cap (docs/protocol.md §12.2)
 *
 * Error codes of %TALLY_API_ERROR.
 */
typedef enum {
  TALLY_API_ERROR_INVALID_REQUEST,
  TALLY_API_ERROR_AUTHENTICATION,
  TALLY_API_ERROR_BILLING,
  TALLY_API_ERROR_PERMISSION,
  TALLY_API_ERROR_NOT_FOUND,
  TALLY_API_ERROR_REQUEST_TIMEOUT,
  TALLY_API_ERROR_CONFLICT,
  TALLY_API_ERROR_REQUEST_TOO_LARGE,
  TALLY_API_ERROR_RATE_LIMIT,
  TALLY_API_ERROR_API,
  TALLY_API_ERROR_TIMEOUT,
  TALLY_API_ERROR_OVERLOADED,
  TALLY_API_ERROR_STREAM,
  TALLY_API_ERROR_NETWORK,
  TALLY_API_ERROR_STALLED,
  TALLY_API_ERROR_INCOMPLETE,
  TALLY_API_ERROR_PROTOCOL,
  TALLY_API_ERROR_BUDGET,
} TallyApiError;

GQuark        tally_api_error_quark            (void);
TallyApiError tally_api_error_from_type        (const char *error_type,
                                                guint       http_status);
gboolean      tally_api_error_is_retryable     (const GError *error);
const char   *tally_api_error_get_kind         (const GError *error);

G_END_DECLS
