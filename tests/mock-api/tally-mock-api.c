/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally-mock-api: a local imitation of the Anthropic Messages API for tests.
 *
 * It listens on 127.0.0.1 only, answers `POST /v1/messages` from a scenario
 * file (scripted SSE streams, HTTP errors, mid-stream error events, cuts,
 * stalls, slow drips), validates the conversation the client sends the way
 * the real API does, and records every request as one JSON line so a test
 * can assert on what the client sent. The scenario format is documented in
 * tests/mock-api/README.md; the protocol facts it imitates (stream grammar,
 * tool_result pairing rules and their messages, errors and headers) are
 * described in docs/protocol.md.
 *
 * Nothing here blocks the main loop: delays, drips and stalls are GLib
 * timeouts around soup_server_message_pause()/unpause(), so one stalled
 * stream never holds up another request.
 */

#define G_LOG_DOMAIN "tally-mock-api"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#define DEFAULT_CHUNK_CHARS   8
#define DEFAULT_MODEL         "claude-sonnet-5"
#define DEFAULT_INPUT_TOKENS  100
#define STALL_LIMIT_SECONDS   120
#define MAX_DELAY_MS          120000
#define MAX_DRIP_MS           10000
#define MAX_CHUNK_CHARS       1000000
#define REMINDER_PREFIX       "<system-reminder>"

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum {
  BODY_NONE,
  BODY_ERROR,
  BODY_TEXT,
  BODY_JSON,
  BODY_SSE_RAW,
  BODY_EVENTS,
  BODY_MESSAGE,
} BodyKind;

/* One entry of the scenario's "responses" array, checked and pre-loaded at
 * start-up so that a mistake in a scenario fails before the first request. */
typedef struct {
  guint       index;
  JsonObject *spec;               /* owned reference */
  JsonObject *match;              /* borrowed from @spec, or NULL */
  BodyKind    kind;
  guint       status;             /* 0: the default for @kind */
  GBytes     *sse_raw;            /* BODY_SSE_RAW: the bytes to send */
  JsonObject *error_event;        /* borrowed from @spec, or NULL */
  gint64      error_after_blocks;
  gint64      cut_after_bytes;    /* -1: no cut */
  gint64      stall_after_bytes;  /* -1: no stall */
  gint64      drip_ms;
  gint64      drip_bytes;         /* 0: no drip */
  gint64      delay_headers_ms;
  gboolean    used;
} MockResponse;

typedef struct _Sender Sender;

typedef struct {
  char       *scenario_dir;
  JsonNode   *root;               /* the scenario document */
  JsonArray  *models;             /* borrowed from @root, or NULL */
  gboolean    check_history;
  GPtrArray  *responses;          /* MockResponse* */
  guint       n_requests;
  int         record_fd;          /* -1 when not recording */
  SoupServer *server;
  GMainLoop  *loop;
  GList      *senders;            /* Sender*, responses still being written */
} MockServer;

/* What the handler decided to answer. */
typedef struct {
  guint         status;
  int           response_index;   /* -1: no scripted response was used */
  GBytes       *body;
  const char   *content_type;
  gboolean      is_stream;
  MockResponse *resp;             /* NULL for built-in answers */
  char         *summary;          /* for the log line */
} Reply;

typedef enum {
  SENDER_END_COMPLETE,
  SENDER_END_CUT,
  SENDER_END_STALL,
} SenderEnd;

/* Writes one response body piece by piece (drips, delays, cuts, stalls). */
struct _Sender {
  MockServer        *mock;
  SoupServerMessage *msg;         /* owned reference */
  GBytes            *body;
  gsize              offset;      /* bytes handed to libsoup so far */
  gsize              limit;       /* bytes to hand over before @end */
  SenderEnd          end;
  guint              drip_ms;
  gsize              drip_bytes;  /* 0: everything at once */
  guint              n_appended;
  guint              n_written;
  guint              timeout_id;
  guint              idle_id;
  GSource           *watch;
  gulong             finished_id;
  gulong             wrote_headers_id;
  gulong             wrote_chunk_id;
  gboolean           headers_written;
  gboolean           cutting;
};

static void mock_log (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
mock_log (const char *format,
          ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);

  g_printerr ("tally-mock-api: %s\n", text);
}

/* ------------------------------------------------------------------------ */
/* JSON helpers                                                             */
/* ------------------------------------------------------------------------ */

static char *
node_to_string (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_pretty (generator, FALSE);
  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

static char *
object_to_string (JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_set_object (node, object);
  return node_to_string (node);
}

static gboolean
node_is_string (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_STRING;
}

static gboolean
node_is_int (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_INT64;
}

static gboolean
node_is_bool (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_BOOLEAN;
}

/* Returns the string member @name, or NULL when it is missing or is not a
 * string. Safe on objects of unknown shape. */
static const char *
get_string (JsonObject *object,
            const char *name)
{
  JsonNode *node;

  if (object == NULL)
    return NULL;
  node = json_object_get_member (object, name);
  return node_is_string (node) ? json_node_get_string (node) : NULL;
}

static JsonObject *
get_object (JsonObject *object,
            const char *name)
{
  JsonNode *node;

  if (object == NULL)
    return NULL;
  node = json_object_get_member (object, name);
  return (node != NULL && JSON_NODE_HOLDS_OBJECT (node)) ? json_node_get_object (node) : NULL;
}

static JsonArray *
get_array (JsonObject *object,
           const char *name)
{
  JsonNode *node;

  if (object == NULL)
    return NULL;
  node = json_object_get_member (object, name);
  return (node != NULL && JSON_NODE_HOLDS_ARRAY (node)) ? json_node_get_array (node) : NULL;
}

static JsonObject *
array_get_object (JsonArray *array,
                  guint      i)
{
  JsonNode *node = json_array_get_element (array, i);

  return JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static gboolean
is_blank (const char *text)
{
  for (; *text != '\0'; text++)
    if (!g_ascii_isspace (*text))
      return FALSE;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Scenario loading                                                         */
/* ------------------------------------------------------------------------ */

static void
mock_response_free (MockResponse *resp)
{
  g_clear_pointer (&resp->spec, json_object_unref);
  g_clear_pointer (&resp->sse_raw, g_bytes_unref);
  g_free (resp);
}

/* Rejects keys a scenario author probably mistyped; keys starting with "_"
 * are comments. */
static gboolean
check_keys (JsonObject         *object,
            const char         *where,
            const char * const *allowed,
            GError            **error)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *key = l->data;

      if (key[0] == '_' || g_strv_contains (allowed, key))
        continue;

      {
        g_autofree char *list = g_strjoinv (", ", (char **) allowed);

        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                     "%s: unknown key \"%s\" (known keys: %s)", where, key, list);
      }
      return FALSE;
    }

  return TRUE;
}

static gboolean
load_int (JsonObject  *object,
          const char  *name,
          const char  *where,
          gint64       min,
          gint64       max,
          gint64      *value,
          GError     **error)
{
  JsonNode *node = json_object_get_member (object, name);
  gint64 v;

  if (node == NULL)
    return TRUE;

  if (!node_is_int (node))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s.%s: expected an integer", where, name);
      return FALSE;
    }

  v = json_node_get_int (node);
  if (v < min || v > max)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s.%s: %" G_GINT64_FORMAT " is out of range (%" G_GINT64_FORMAT
                   "…%" G_GINT64_FORMAT ")", where, name, v, min, max);
      return FALSE;
    }

  *value = v;
  return TRUE;
}

static gboolean
require_string (JsonObject  *object,
                const char  *name,
                const char  *where,
                gboolean     optional,
                GError     **error)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL && optional)
    return TRUE;

  if (!node_is_string (node))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s.%s: expected a string", where, name);
      return FALSE;
    }

  return TRUE;
}

static gboolean
load_match (JsonObject  *match,
            const char  *where,
            GError     **error)
{
  static const char * const keys[] = {
    "contains", "last_user_text_contains", "last_tool_result_contains", NULL
  };
  g_autofree char *here = g_strdup_printf ("%s.match", where);

  if (!check_keys (match, here, keys, error))
    return FALSE;

  for (guint i = 0; keys[i] != NULL; i++)
    if (!require_string (match, keys[i], here, TRUE, error))
      return FALSE;

  return TRUE;
}

static gboolean
load_block (JsonObject  *block,
            const char  *where,
            GError     **error)
{
  static const char * const text_keys[] = { "type", "text", "citations", NULL };
  static const char * const thinking_keys[] = { "type", "thinking", "signature", NULL };
  static const char * const redacted_keys[] = { "type", "data", NULL };
  static const char * const tool_keys[] = { "type", "id", "name", "input", "caller", NULL };
  const char *type = get_string (block, "type");

  if (type == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s.type: expected a string", where);
      return FALSE;
    }

  if (g_str_equal (type, "text"))
    return check_keys (block, where, text_keys, error) &&
           require_string (block, "text", where, FALSE, error);

  if (g_str_equal (type, "thinking"))
    return check_keys (block, where, thinking_keys, error) &&
           require_string (block, "thinking", where, FALSE, error) &&
           require_string (block, "signature", where, TRUE, error);

  if (g_str_equal (type, "redacted_thinking"))
    return check_keys (block, where, redacted_keys, error) &&
           require_string (block, "data", where, FALSE, error);

  if (g_str_equal (type, "tool_use"))
    {
      JsonNode *input = json_object_get_member (block, "input");

      if (!check_keys (block, where, tool_keys, error) ||
          !require_string (block, "id", where, TRUE, error) ||
          !require_string (block, "name", where, FALSE, error))
        return FALSE;

      if (input != NULL && !JSON_NODE_HOLDS_OBJECT (input))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s.input: expected an object", where);
          return FALSE;
        }
      return TRUE;
    }

  /* Any other block type (server_tool_use, web_search_tool_result, …) is
   * sent whole in its content_block_start, like the API does. */
  return TRUE;
}

static gboolean
load_message (JsonObject  *message,
              const char  *where,
              GError     **error)
{
  static const char * const keys[] = {
    "id", "model", "content", "stop_reason", "stop_sequence", "stop_details",
    "usage", "chunk", NULL
  };
  static const char * const usage_keys[] = {
    "input_tokens", "output_tokens", "cache_creation_input_tokens",
    "cache_read_input_tokens", NULL
  };
  g_autofree char *here = g_strdup_printf ("%s.message", where);
  JsonArray *content;
  JsonObject *usage;
  JsonNode *stop_reason;
  gint64 chunk = DEFAULT_CHUNK_CHARS;

  if (!check_keys (message, here, keys, error) ||
      !require_string (message, "id", here, TRUE, error) ||
      !require_string (message, "model", here, TRUE, error) ||
      !load_int (message, "chunk", here, 1, MAX_CHUNK_CHARS, &chunk, error))
    return FALSE;

  stop_reason = json_object_get_member (message, "stop_reason");
  if (stop_reason != NULL && !node_is_string (stop_reason) && !JSON_NODE_HOLDS_NULL (stop_reason))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s.stop_reason: expected a string or null", here);
      return FALSE;
    }

  content = get_array (message, "content");
  if (content == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s.content: expected an array of content blocks", here);
      return FALSE;
    }

  for (guint i = 0; i < json_array_get_length (content); i++)
    {
      g_autofree char *block_where = g_strdup_printf ("%s.content[%u]", here, i);
      JsonObject *block = array_get_object (content, i);

      if (block == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s: expected an object", block_where);
          return FALSE;
        }
      if (!load_block (block, block_where, error))
        return FALSE;
    }

  if (json_object_has_member (message, "usage"))
    {
      g_autofree char *usage_where = g_strdup_printf ("%s.usage", here);
      gint64 ignored = 0;

      usage = get_object (message, "usage");
      if (usage == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s: expected an object", usage_where);
          return FALSE;
        }
      if (!check_keys (usage, usage_where, usage_keys, error))
        return FALSE;
      for (guint i = 0; usage_keys[i] != NULL; i++)
        if (!load_int (usage, usage_keys[i], usage_where, 0, G_MAXINT32, &ignored, error))
          return FALSE;
    }

  return TRUE;
}

static gboolean
load_events (JsonArray   *events,
             const char  *where,
             GError     **error)
{
  static const char * const keys[] = { "event", "data", NULL };

  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      g_autofree char *here = g_strdup_printf ("%s.events[%u]", where, i);
      JsonObject *event = array_get_object (events, i);

      if (event == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s: expected an object {\"event\": NAME, \"data\": …}", here);
          return FALSE;
        }
      if (!check_keys (event, here, keys, error) ||
          !require_string (event, "event", here, TRUE, error))
        return FALSE;
      if (!json_object_has_member (event, "data"))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s.data: missing", here);
          return FALSE;
        }
    }

  return TRUE;
}

/* "${TESTDATA}/x" → $TALLY_TEST_DATA_DIR/x (the repository's tests/
 * folder); a relative path is taken from the scenario file's folder. */
static char *
resolve_path (MockServer  *mock,
              const char  *path,
              GError     **error)
{
  if (g_str_has_prefix (path, "${TESTDATA}"))
    {
      const char *data_dir = g_getenv ("TALLY_TEST_DATA_DIR");

      if (data_dir == NULL || *data_dir == '\0')
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                       "\"%s\" uses ${TESTDATA} but TALLY_TEST_DATA_DIR is not set", path);
          return NULL;
        }
      return g_strconcat (data_dir, path + strlen ("${TESTDATA}"), NULL);
    }

  if (g_path_is_absolute (path))
    return g_strdup (path);

  return g_build_filename (mock->scenario_dir, path, NULL);
}

static gboolean
load_response (MockServer   *mock,
               JsonNode     *node,
               guint         index,
               MockResponse **out,
               GError      **error)
{
  static const char * const keys[] = {
    "match", "status", "headers", "error", "body_text", "body_json", "sse_file",
    "sse_text", "events", "message", "error_event", "error_after_blocks",
    "cut_after_bytes", "stall_after_bytes", "drip_ms", "drip_bytes",
    "delay_headers_ms", "description", NULL
  };
  static const char * const body_keys[] = {
    "error", "body_text", "body_json", "sse_file", "sse_text", "events", "message", NULL
  };
  static const BodyKind body_kinds[] = {
    BODY_ERROR, BODY_TEXT, BODY_JSON, BODY_SSE_RAW, BODY_SSE_RAW, BODY_EVENTS, BODY_MESSAGE
  };
  g_autofree char *where = g_strdup_printf ("responses[%u]", index);
  g_autoptr(GError) local_error = NULL;
  MockResponse *resp;
  JsonObject *spec;
  JsonObject *headers;
  const char *body_key = NULL;
  gint64 status = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: expected an object", where);
      return FALSE;
    }
  spec = json_node_get_object (node);

  if (!check_keys (spec, where, keys, error))
    return FALSE;

  resp = g_new0 (MockResponse, 1);
  resp->index = index;
  resp->spec = json_object_ref (spec);
  resp->kind = BODY_NONE;
  resp->cut_after_bytes = -1;
  resp->stall_after_bytes = -1;

  for (guint i = 0; body_keys[i] != NULL; i++)
    {
      if (!json_object_has_member (spec, body_keys[i]))
        continue;
      if (body_key != NULL)
        {
          g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s: \"%s\" and \"%s\" cannot be combined; give one body",
                       where, body_key, body_keys[i]);
          goto fail;
        }
      body_key = body_keys[i];
      resp->kind = body_kinds[i];
    }

  if (json_object_has_member (spec, "match"))
    {
      resp->match = get_object (spec, "match");
      if (resp->match == NULL)
        {
          g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s.match: expected an object", where);
          goto fail;
        }
      if (!load_match (resp->match, where, &local_error))
        goto fail;
    }

  if (!load_int (spec, "status", where, 100, 599, &status, &local_error) ||
      !load_int (spec, "error_after_blocks", where, 0, G_MAXINT32, &resp->error_after_blocks, &local_error) ||
      !load_int (spec, "cut_after_bytes", where, 0, G_MAXINT32, &resp->cut_after_bytes, &local_error) ||
      !load_int (spec, "stall_after_bytes", where, 0, G_MAXINT32, &resp->stall_after_bytes, &local_error) ||
      !load_int (spec, "drip_ms", where, 0, MAX_DRIP_MS, &resp->drip_ms, &local_error) ||
      !load_int (spec, "drip_bytes", where, 1, G_MAXINT32, &resp->drip_bytes, &local_error) ||
      !load_int (spec, "delay_headers_ms", where, 0, MAX_DELAY_MS, &resp->delay_headers_ms, &local_error))
    goto fail;
  resp->status = (guint) status;

  if (resp->drip_ms > 0 && resp->drip_bytes == 0)
    resp->drip_bytes = 1;

  if (resp->cut_after_bytes >= 0 && resp->stall_after_bytes >= 0)
    {
      g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: \"cut_after_bytes\" and \"stall_after_bytes\" cannot be combined", where);
      goto fail;
    }

  if (json_object_has_member (spec, "headers"))
    {
      g_autoptr(GList) names = NULL;

      headers = get_object (spec, "headers");
      if (headers == NULL)
        {
          g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s.headers: expected an object of header names to strings", where);
          goto fail;
        }
      names = json_object_get_members (headers);
      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *value = json_object_get_member (headers, l->data);

          if (!node_is_string (value) && !node_is_int (value))
            {
              g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "%s.headers.%s: expected a string", where, (const char *) l->data);
              goto fail;
            }
        }
    }

  if (json_object_has_member (spec, "error_event"))
    {
      static const char * const error_keys[] = { "type", "message", NULL };
      g_autofree char *here = g_strdup_printf ("%s.error_event", where);

      resp->error_event = get_object (spec, "error_event");
      if (resp->error_event == NULL ||
          !check_keys (resp->error_event, here, error_keys, &local_error) ||
          !require_string (resp->error_event, "type", here, FALSE, &local_error) ||
          !require_string (resp->error_event, "message", here, FALSE, &local_error))
        {
          if (local_error == NULL)
            g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                         "%s: expected {\"type\": …, \"message\": …}", here);
          goto fail;
        }
    }

  switch (resp->kind)
    {
    case BODY_ERROR:
      {
        static const char * const error_keys[] = { "type", "message", NULL };
        g_autofree char *here = g_strdup_printf ("%s.error", where);
        JsonObject *err = get_object (spec, "error");

        if (err == NULL ||
            !check_keys (err, here, error_keys, &local_error) ||
            !require_string (err, "type", here, FALSE, &local_error) ||
            !require_string (err, "message", here, FALSE, &local_error))
          {
            if (local_error == NULL)
              g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "%s: expected {\"type\": …, \"message\": …}", here);
            goto fail;
          }
      }
      break;

    case BODY_TEXT:
      if (!require_string (spec, "body_text", where, FALSE, &local_error))
        goto fail;
      break;

    case BODY_SSE_RAW:
      if (json_object_has_member (spec, "sse_text"))
        {
          if (!require_string (spec, "sse_text", where, FALSE, &local_error))
            goto fail;
          resp->sse_raw = g_bytes_new (get_string (spec, "sse_text"),
                                       strlen (get_string (spec, "sse_text")));
        }
      else
        {
          g_autofree char *path = NULL;
          char *contents = NULL;
          gsize length = 0;

          if (!require_string (spec, "sse_file", where, FALSE, &local_error))
            goto fail;
          path = resolve_path (mock, get_string (spec, "sse_file"), &local_error);
          if (path == NULL)
            {
              g_prefix_error (&local_error, "%s.sse_file: ", where);
              goto fail;
            }
          if (!g_file_get_contents (path, &contents, &length, &local_error))
            {
              g_prefix_error (&local_error, "%s.sse_file: ", where);
              goto fail;
            }
          resp->sse_raw = g_bytes_new_take (contents, length);
        }
      break;

    case BODY_EVENTS:
      {
        JsonArray *events = get_array (spec, "events");

        if (events == NULL)
          {
            g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                         "%s.events: expected an array", where);
            goto fail;
          }
        if (!load_events (events, where, &local_error))
          goto fail;
      }
      break;

    case BODY_MESSAGE:
      {
        JsonObject *message = get_object (spec, "message");

        if (message == NULL)
          {
            g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                         "%s.message: expected an object", where);
            goto fail;
          }
        if (!load_message (message, where, &local_error))
          goto fail;
      }
      break;

    case BODY_NONE:
    case BODY_JSON:
    default:
      break;
    }

  if (resp->error_event != NULL &&
      resp->kind != BODY_SSE_RAW && resp->kind != BODY_EVENTS && resp->kind != BODY_MESSAGE)
    {
      g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: \"error_event\" needs a stream (\"message\", \"events\", \"sse_file\" or \"sse_text\")",
                   where);
      goto fail;
    }

  *out = resp;
  return TRUE;

fail:
  mock_response_free (resp);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

static gboolean
load_scenario (MockServer  *mock,
               const char  *path,
               GError     **error)
{
  static const char * const keys[] = {
    "models", "check_history", "responses", "description", NULL
  };
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root;
  JsonNode *node;
  JsonArray *responses;

  if (!json_parser_load_from_file (parser, path, error))
    return FALSE;

  mock->scenario_dir = g_path_get_dirname (path);
  mock->root = json_parser_steal_root (parser);

  if (mock->root == NULL || !JSON_NODE_HOLDS_OBJECT (mock->root))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "the scenario must be a JSON object");
      return FALSE;
    }
  root = json_node_get_object (mock->root);

  if (!check_keys (root, "scenario", keys, error))
    return FALSE;

  mock->check_history = TRUE;
  node = json_object_get_member (root, "check_history");
  if (node != NULL)
    {
      if (!node_is_bool (node))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "check_history: expected true or false");
          return FALSE;
        }
      mock->check_history = json_node_get_boolean (node);
    }

  if (json_object_has_member (root, "models"))
    {
      mock->models = get_array (root, "models");
      if (mock->models == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "models: expected an array of ModelInfo objects");
          return FALSE;
        }
      for (guint i = 0; i < json_array_get_length (mock->models); i++)
        {
          JsonObject *model = array_get_object (mock->models, i);

          if (model == NULL || get_string (model, "id") == NULL)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "models[%u]: expected an object with a string \"id\"", i);
              return FALSE;
            }
        }
    }

  if (json_object_has_member (root, "responses") && get_array (root, "responses") == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "responses: expected an array");
      return FALSE;
    }

  responses = get_array (root, "responses");
  for (guint i = 0; responses != NULL && i < json_array_get_length (responses); i++)
    {
      MockResponse *resp = NULL;

      if (!load_response (mock, json_array_get_element (responses, i), i, &resp, error))
        return FALSE;
      g_ptr_array_add (mock->responses, resp);
    }

  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Looking into a request (matching and templates)                          */
/* ------------------------------------------------------------------------ */

static JsonArray *
request_messages (JsonNode *request)
{
  if (request == NULL || !JSON_NODE_HOLDS_OBJECT (request))
    return NULL;
  return get_array (json_node_get_object (request), "messages");
}

/* Calls @func on every text of @message: its string content, or the text
 * of each of its text blocks, in order. */
static void
foreach_text (JsonObject *message,
              GFunc       func,
              gpointer    user_data)
{
  JsonNode *content = json_object_get_member (message, "content");
  JsonArray *blocks;

  if (node_is_string (content))
    {
      func ((gpointer) json_node_get_string (content), user_data);
      return;
    }

  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return;

  blocks = json_node_get_array (content);
  for (guint i = 0; i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = array_get_object (blocks, i);
      const char *text;

      if (g_strcmp0 (get_string (block, "type"), "text") != 0)
        continue;
      text = get_string (block, "text");
      if (text != NULL)
        func ((gpointer) text, user_data);
    }
}

static JsonObject *
last_message_with_role (JsonNode   *request,
                        const char *role)
{
  JsonArray *messages = request_messages (request);

  if (messages == NULL)
    return NULL;

  for (guint i = json_array_get_length (messages); i > 0; i--)
    {
      JsonObject *message = array_get_object (messages, i - 1);

      if (g_strcmp0 (get_string (message, "role"), role) == 0)
        return message;
    }

  return NULL;
}

static void
join_text_cb (gpointer data,
              gpointer user_data)
{
  GString *out = user_data;

  if (out->len > 0)
    g_string_append_c (out, '\n');
  g_string_append (out, data);
}

/* All texts of the last user message, joined with "\n" ("" when there are
 * none); what "last_user_text_contains" looks at. */
static char *
last_user_message_text (JsonNode *request)
{
  JsonObject *message = last_message_with_role (request, "user");
  GString *out = g_string_new (NULL);

  if (message != NULL)
    foreach_text (message, join_text_cb, out);

  return g_string_free (out, FALSE);
}

static void
keep_last_prompt_cb (gpointer data,
                     gpointer user_data)
{
  const char **last = user_data;
  const char *text = data;

  if (!g_str_has_prefix (text, REMINDER_PREFIX))
    *last = text;
}

/* The last user text that is not a "<system-reminder>" block, searching
 * back through the user messages; "" when there is none. */
static char *
last_user_text (JsonNode *request)
{
  JsonArray *messages = request_messages (request);

  if (messages == NULL)
    return g_strdup ("");

  for (guint i = json_array_get_length (messages); i > 0; i--)
    {
      JsonObject *message = array_get_object (messages, i - 1);
      const char *last = NULL;

      if (g_strcmp0 (get_string (message, "role"), "user") != 0)
        continue;
      foreach_text (message, keep_last_prompt_cb, &last);
      if (last != NULL)
        return g_strdup (last);
    }

  return g_strdup ("");
}

/* The content of the last tool_result block of the request: its string
 * content, or the concatenated text of its text blocks; "" when there is
 * none. */
static char *
last_tool_result_text (JsonNode *request)
{
  JsonArray *messages = request_messages (request);

  if (messages == NULL)
    return g_strdup ("");

  for (guint i = json_array_get_length (messages); i > 0; i--)
    {
      JsonObject *message = array_get_object (messages, i - 1);
      JsonArray *blocks = get_array (message, "content");

      for (guint j = blocks ? json_array_get_length (blocks) : 0; j > 0; j--)
        {
          JsonObject *block = array_get_object (blocks, j - 1);
          JsonNode *content;
          GString *out;

          if (g_strcmp0 (get_string (block, "type"), "tool_result") != 0)
            continue;

          content = json_object_get_member (block, "content");
          if (node_is_string (content))
            return g_strdup (json_node_get_string (content));

          out = g_string_new (NULL);
          if (content != NULL && JSON_NODE_HOLDS_ARRAY (content))
            {
              JsonArray *parts = json_node_get_array (content);

              for (guint k = 0; k < json_array_get_length (parts); k++)
                {
                  JsonObject *part = array_get_object (parts, k);

                  if (g_strcmp0 (get_string (part, "type"), "text") == 0 &&
                      get_string (part, "text") != NULL)
                    g_string_append (out, get_string (part, "text"));
                }
            }
          return g_string_free (out, FALSE);
        }
    }

  return g_strdup ("");
}

static gboolean
response_matches (MockResponse *resp,
                  const char   *raw_body,
                  JsonNode     *request)
{
  const char *needle;

  needle = get_string (resp->match, "contains");
  if (needle != NULL && strstr (raw_body, needle) == NULL)
    return FALSE;

  needle = get_string (resp->match, "last_user_text_contains");
  if (needle != NULL)
    {
      g_autofree char *text = last_user_message_text (request);

      if (strstr (text, needle) == NULL)
        return FALSE;
    }

  needle = get_string (resp->match, "last_tool_result_contains");
  if (needle != NULL)
    {
      g_autofree char *text = last_tool_result_text (request);

      if (strstr (text, needle) == NULL)
        return FALSE;
    }

  return TRUE;
}

/* The first unused response whose "match" fits, else the first unused one
 * without a "match"; NULL when none is left. */
static MockResponse *
pick_response (MockServer *mock,
               const char *raw_body,
               JsonNode   *request)
{
  for (guint i = 0; i < mock->responses->len; i++)
    {
      MockResponse *resp = g_ptr_array_index (mock->responses, i);

      if (!resp->used && resp->match != NULL && response_matches (resp, raw_body, request))
        return resp;
    }

  for (guint i = 0; i < mock->responses->len; i++)
    {
      MockResponse *resp = g_ptr_array_index (mock->responses, i);

      if (!resp->used && resp->match == NULL)
        return resp;
    }

  return NULL;
}

/* ------------------------------------------------------------------------ */
/* History validation (check_history)                                       */
/* ------------------------------------------------------------------------ */

/* The error messages follow the API's wording where it is known
 * (docs/protocol.md §5.3); the rest use the same "path: problem" style. */

static char *
validate_thinking (JsonObject *body,
                   gint64      max_tokens)
{
  JsonNode *node = json_object_get_member (body, "thinking");
  JsonObject *thinking;
  JsonNode *budget;
  const char *type;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return g_strdup ("thinking: Input should be a valid dictionary");

  thinking = json_node_get_object (node);
  type = get_string (thinking, "type");
  if (type == NULL)
    return g_strdup ("thinking.type: Field required");

  if (g_str_equal (type, "enabled"))
    {
      budget = json_object_get_member (thinking, "budget_tokens");
      if (budget == NULL)
        return g_strdup ("thinking.enabled.budget_tokens: Field required");
      if (!node_is_int (budget))
        return g_strdup ("thinking.enabled.budget_tokens: Input should be a valid integer");
      if (json_node_get_int (budget) < 1024)
        return g_strdup ("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
      if (json_node_get_int (budget) >= max_tokens)
        return g_strdup ("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                         "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking");
      return NULL;
    }

  if (g_str_equal (type, "disabled"))
    {
      if (json_object_has_member (thinking, "display"))
        return g_strdup ("thinking.disabled.display: Extra inputs are not permitted");
      return NULL;
    }

  if (g_str_equal (type, "adaptive"))
    return NULL;

  return g_strdup_printf ("thinking: Input tag '%s' found using 'type' does not match any of the "
                          "expected tags: 'enabled', 'disabled', 'adaptive'", type);
}

static char *
validate_block (JsonObject *block,
                guint       i,
                guint       j,
                gboolean    is_user,
                GHashTable *tool_use_ids)
{
  const char *type = get_string (block, "type");
  const char *text;
  JsonNode *node;

  if (type == NULL)
    return g_strdup_printf ("messages.%u.content.%u.type: Field required", i, j);

  if (g_str_equal (type, "text"))
    {
      text = get_string (block, "text");
      if (text == NULL)
        return g_strdup_printf ("messages.%u.content.%u.text: Field required", i, j);
      if (*text == '\0')
        return g_strdup_printf ("messages.%u.content.%u: text content blocks must be non-empty", i, j);
      if (is_blank (text))
        return g_strdup_printf ("messages.%u.content.%u: text content blocks must contain non-whitespace text", i, j);
      return NULL;
    }

  if (g_str_equal (type, "tool_use"))
    {
      const char *id = get_string (block, "id");

      if (is_user)
        return g_strdup_printf ("messages.%u.content.%u: `tool_use` blocks can only be in `assistant` messages", i, j);
      if (id == NULL || *id == '\0')
        return g_strdup_printf ("messages.%u.content.%u.id: Field required", i, j);
      if (get_string (block, "name") == NULL)
        return g_strdup_printf ("messages.%u.content.%u.name: Field required", i, j);
      node = json_object_get_member (block, "input");
      if (node == NULL)
        return g_strdup_printf ("messages.%u.content.%u.input: Field required", i, j);
      if (!JSON_NODE_HOLDS_OBJECT (node))
        return g_strdup_printf ("messages.%u.content.%u.input: Input should be a valid dictionary", i, j);
      if (!g_hash_table_add (tool_use_ids, (gpointer) id))
        return g_strdup_printf ("messages.%u.content.%u: `tool_use` ids must be unique", i, j);
      return NULL;
    }

  if (g_str_equal (type, "tool_result"))
    {
      if (!is_user)
        return g_strdup_printf ("messages.%u.content.%u: `tool_result` blocks can only be in `user` messages", i, j);
      if (get_string (block, "tool_use_id") == NULL)
        return g_strdup_printf ("messages.%u.content.%u.tool_use_id: Field required", i, j);
      node = json_object_get_member (block, "content");
      if (node != NULL && !node_is_string (node) && !JSON_NODE_HOLDS_ARRAY (node))
        return g_strdup_printf ("messages.%u.content.%u.content: Input should be a valid string or list", i, j);
      node = json_object_get_member (block, "is_error");
      if (node != NULL && !node_is_bool (node))
        return g_strdup_printf ("messages.%u.content.%u.is_error: Input should be a valid boolean", i, j);
      return NULL;
    }

  if (g_str_equal (type, "thinking") || g_str_equal (type, "redacted_thinking"))
    {
      if (is_user)
        return g_strdup_printf ("messages.%u.content.%u: `%s` blocks can only be in `assistant` messages",
                                i, j, type);
      if (g_str_equal (type, "thinking"))
        {
          if (get_string (block, "thinking") == NULL)
            return g_strdup_printf ("messages.%u.content.%u.thinking: Field required", i, j);
          if (get_string (block, "signature") == NULL)
            return g_strdup_printf ("messages.%u.content.%u.signature: Field required", i, j);
        }
      else if (get_string (block, "data") == NULL)
        {
          return g_strdup_printf ("messages.%u.content.%u.data: Field required", i, j);
        }
      return NULL;
    }

  /* image, document, search_result, server tool blocks, …: not checked. */
  return NULL;
}

/* Checks the tool_result blocks of user message @i against the tool_use ids
 * of the assistant message before it (@expected, in order; may be empty). */
static char *
validate_pairing (JsonArray *blocks,
                  guint      i,
                  GPtrArray *expected)
{
  g_autoptr(GHashTable) answered = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GString) missing = g_string_new (NULL);
  guint n_blocks = blocks ? json_array_get_length (blocks) : 0;

  /* Only the leading run of tool_result blocks answers the previous turn. */
  for (guint j = 0; j < n_blocks; j++)
    {
      JsonObject *block = array_get_object (blocks, j);

      if (g_strcmp0 (get_string (block, "type"), "tool_result") != 0)
        break;
      g_hash_table_add (answered, (gpointer) get_string (block, "tool_use_id"));
    }

  for (guint k = 0; expected != NULL && k < expected->len; k++)
    {
      const char *id = g_ptr_array_index (expected, k);

      if (g_hash_table_contains (answered, id))
        continue;
      if (missing->len > 0)
        g_string_append (missing, ", ");
      g_string_append (missing, id);
    }

  if (missing->len > 0)
    return g_strdup_printf ("messages.%u: `tool_use` ids were found without `tool_result` blocks "
                            "immediately after: %s. Each `tool_use` block must have a corresponding "
                            "`tool_result` block in the next message.", i - 1, missing->str);

  for (guint j = 0; j < n_blocks; j++)
    {
      JsonObject *block = array_get_object (blocks, j);
      const char *id;
      gboolean known = FALSE;

      if (g_strcmp0 (get_string (block, "type"), "tool_result") != 0)
        continue;

      id = get_string (block, "tool_use_id");
      for (guint k = 0; expected != NULL && k < expected->len; k++)
        if (g_str_equal (id, g_ptr_array_index (expected, k)))
          known = TRUE;

      if (!known)
        return g_strdup_printf ("messages.%u.content.%u: unexpected `tool_use_id` found in "
                                "`tool_result` blocks: %s. Each `tool_result` block must have a "
                                "corresponding `tool_use` block in the previous message.", i, j, id);

      if (!g_hash_table_add (seen, (gpointer) id))
        return g_strdup_printf ("messages.%u.content.%u: each tool_use must have a single result. "
                                "Found multiple `tool_result` blocks with id: %s", i, j, id);
    }

  return NULL;
}

/* Validates a POST /v1/messages body like the API would. Returns the
 * message of the 400 invalid_request_error to send, or NULL when the
 * request is acceptable. */
static char *
validate_request (JsonNode   *root,
                  const char *parse_error)
{
  g_autoptr(GHashTable) tool_use_ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) expected = NULL;
  JsonObject *body;
  JsonArray *messages;
  JsonNode *node;
  const char *prev_role = NULL;
  gint64 max_tokens;
  guint n_messages;
  char *problem;

  if (parse_error != NULL)
    return g_strdup_printf ("There was an error parsing the body of your request: %s", parse_error);

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return g_strdup ("The request body must be a JSON object.");
  body = json_node_get_object (root);

  node = json_object_get_member (body, "model");
  if (node == NULL)
    return g_strdup ("model: Field required");
  if (!node_is_string (node) || *json_node_get_string (node) == '\0')
    return g_strdup ("model: Input should be a valid string");

  node = json_object_get_member (body, "max_tokens");
  if (node == NULL)
    return g_strdup ("max_tokens: Field required");
  if (!node_is_int (node))
    return g_strdup ("max_tokens: Input should be a valid integer");
  max_tokens = json_node_get_int (node);
  if (max_tokens < 0)
    return g_strdup ("max_tokens: Input should be greater than or equal to 0");

  node = json_object_get_member (body, "messages");
  if (node == NULL)
    return g_strdup ("messages: Field required");
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return g_strdup ("messages: Input should be a valid list");
  messages = json_node_get_array (node);
  n_messages = json_array_get_length (messages);
  if (n_messages == 0)
    return g_strdup ("messages: at least one message is required");

  problem = validate_thinking (body, max_tokens);
  if (problem != NULL)
    return problem;

  for (guint i = 0; i < n_messages; i++)
    {
      JsonObject *message = array_get_object (messages, i);
      JsonArray *blocks = NULL;
      const char *role;
      gboolean is_user;

      if (message == NULL)
        return g_strdup_printf ("messages.%u: Input should be a valid dictionary", i);

      role = get_string (message, "role");
      if (role == NULL)
        return g_strdup_printf ("messages.%u.role: Field required", i);
      if (!g_str_equal (role, "user") && !g_str_equal (role, "assistant"))
        return g_strdup_printf ("messages.%u.role: Input should be 'user' or 'assistant'", i);
      is_user = g_str_equal (role, "user");

      if (i == 0 && !is_user)
        return g_strdup ("messages: first message must use the \"user\" role");
      if (prev_role != NULL && g_str_equal (prev_role, role))
        return g_strdup_printf ("messages.%u: roles must alternate between \"user\" and \"assistant\", "
                                "but found multiple \"%s\" roles in a row", i, role);
      prev_role = role;

      node = json_object_get_member (message, "content");
      if (node == NULL)
        return g_strdup_printf ("messages.%u.content: Field required", i);

      if (node_is_string (node))
        {
          const char *text = json_node_get_string (node);

          if (*text == '\0')
            return g_strdup_printf ("messages.%u: all messages must have non-empty content except for "
                                    "the optional final assistant message", i);
          if (is_blank (text))
            return g_strdup_printf ("messages.%u: text content blocks must contain non-whitespace text", i);
        }
      else if (JSON_NODE_HOLDS_ARRAY (node))
        {
          blocks = json_node_get_array (node);
          if (json_array_get_length (blocks) == 0)
            return g_strdup_printf ("messages.%u: all messages must have non-empty content except for "
                                    "the optional final assistant message", i);

          for (guint j = 0; j < json_array_get_length (blocks); j++)
            {
              JsonObject *block = array_get_object (blocks, j);

              if (block == NULL)
                return g_strdup_printf ("messages.%u.content.%u: Input should be a valid dictionary", i, j);
              problem = validate_block (block, i, j, is_user, tool_use_ids);
              if (problem != NULL)
                return problem;
            }
        }
      else
        {
          return g_strdup_printf ("messages.%u.content: Input should be a valid string or list", i);
        }

      if (is_user)
        {
          problem = validate_pairing (blocks, i, expected);
          if (problem != NULL)
            return problem;
          g_clear_pointer (&expected, g_ptr_array_unref);
        }
      else
        {
          expected = g_ptr_array_new ();
          for (guint j = 0; blocks != NULL && j < json_array_get_length (blocks); j++)
            {
              JsonObject *block = array_get_object (blocks, j);

              if (g_strcmp0 (get_string (block, "type"), "tool_use") == 0)
                g_ptr_array_add (expected, (gpointer) get_string (block, "id"));
            }
        }
    }

  if (g_str_equal (prev_role, "assistant"))
    return g_strdup ("Prefilling assistant messages is not supported for this model.");

  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Building stream bodies                                                   */
/* ------------------------------------------------------------------------ */

static void
append_event (GString    *out,
              const char *name,
              JsonNode   *data)
{
  g_autofree char *json = NULL;

  if (name != NULL)
    g_string_append_printf (out, "event: %s\n", name);

  if (node_is_string (data))
    {
      /* A string "data" is sent as it is, so that a scenario can send
       * malformed payloads. */
      g_string_append_printf (out, "data: %s\n\n", json_node_get_string (data));
      return;
    }

  json = node_to_string (data);
  g_string_append_printf (out, "data: %s\n\n", json);
}

/* Appends an event whose data is @object; takes ownership of @object. */
static void
append_event_take (GString    *out,
                   const char *name,
                   JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  append_event (out, name, node);
}

static JsonObject *
event_object (const char *type)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "type", type);
  return object;
}

/* Splits @text into pieces of at most @chunk characters, never inside a
 * UTF-8 sequence. */
static GPtrArray *
split_chars (const char *text,
             guint       chunk)
{
  GPtrArray *pieces = g_ptr_array_new_with_free_func (g_free);
  const char *p = text;

  while (*p != '\0')
    {
      const char *start = p;

      for (guint n = 0; n < chunk && *p != '\0'; n++)
        p = g_utf8_next_char (p);
      g_ptr_array_add (pieces, g_strndup (start, p - start));
    }

  return pieces;
}

typedef struct {
  char *last_tool_result;
  char *last_user_text;
} Templates;

static char *
expand_templates (const char *text,
                  Templates  *templates)
{
  GString *out = g_string_new (text);

  if (strstr (text, "{{") == NULL)
    return g_string_free (out, FALSE);

  g_string_replace (out, "{{last_tool_result}}", templates->last_tool_result, 0);
  g_string_replace (out, "{{last_user_text}}", templates->last_user_text, 0);
  return g_string_free (out, FALSE);
}

static void
append_delta (GString    *out,
              guint       index,
              const char *delta_type,
              const char *field,
              const char *value)
{
  JsonObject *event = event_object ("content_block_delta");
  JsonObject *delta = json_object_new ();

  json_object_set_int_member (event, "index", index);
  json_object_set_string_member (delta, "type", delta_type);
  json_object_set_string_member (delta, field, value);
  json_object_set_object_member (event, "delta", delta);
  append_event_take (out, "content_block_delta", event);
}

static void
append_deltas (GString    *out,
               guint       index,
               const char *delta_type,
               const char *field,
               const char *text,
               guint       chunk)
{
  g_autoptr(GPtrArray) pieces = split_chars (text, chunk);

  for (guint i = 0; i < pieces->len; i++)
    append_delta (out, index, delta_type, field, g_ptr_array_index (pieces, i));
}

/* Appends the content_block_start/delta…/stop group of one block and
 * returns the number of characters it generated (for the default
 * output_tokens). @ping is set after the first block start. */
static gsize
append_block (GString    *out,
              guint       index,
              guint       n_request,
              JsonObject *block,
              guint       chunk,
              Templates  *templates,
              gboolean   *ping_sent)
{
  const char *type = get_string (block, "type");
  JsonObject *start = event_object ("content_block_start");
  JsonObject *stop = event_object ("content_block_stop");
  JsonObject *content_block = json_object_new ();
  g_autofree char *text = NULL;
  g_autofree char *input_json = NULL;
  gsize n_chars = 0;

  json_object_set_int_member (start, "index", index);
  json_object_set_string_member (content_block, "type", type);

  if (g_str_equal (type, "text"))
    {
      text = expand_templates (get_string (block, "text"), templates);
      json_object_set_string_member (content_block, "text", "");
    }
  else if (g_str_equal (type, "thinking"))
    {
      json_object_set_string_member (content_block, "thinking", "");
      json_object_set_string_member (content_block, "signature", "");
    }
  else if (g_str_equal (type, "tool_use"))
    {
      JsonNode *input = json_object_get_member (block, "input");
      g_autofree char *id = g_strdup (get_string (block, "id"));

      if (id == NULL)
        id = g_strdup_printf ("toolu_mock_%u_%u", n_request, index);
      json_object_set_string_member (content_block, "id", id);
      json_object_set_string_member (content_block, "name", get_string (block, "name"));
      json_object_set_object_member (content_block, "input", json_object_new ());
      if (json_object_has_member (block, "caller"))
        json_object_set_member (content_block, "caller",
                                json_node_copy (json_object_get_member (block, "caller")));
      input_json = input ? node_to_string (input) : g_strdup ("{}");
    }
  else
    {
      /* redacted_thinking and any other type arrive whole in the start. */
      g_autoptr(GList) members = json_object_get_members (block);

      for (GList *l = members; l != NULL; l = l->next)
        if (!g_str_equal (l->data, "type"))
          json_object_set_member (content_block, l->data,
                                  json_node_copy (json_object_get_member (block, l->data)));
    }

  json_object_set_object_member (start, "content_block", content_block);
  append_event_take (out, "content_block_start", start);

  if (!*ping_sent)
    {
      append_event_take (out, "ping", event_object ("ping"));
      *ping_sent = TRUE;
    }

  if (text != NULL)
    {
      append_deltas (out, index, "text_delta", "text", text, chunk);
      n_chars = g_utf8_strlen (text, -1);
    }
  else if (g_str_equal (type, "thinking"))
    {
      const char *thinking = get_string (block, "thinking");
      const char *signature = get_string (block, "signature");
      g_autofree char *default_signature = NULL;

      if (signature == NULL)
        signature = default_signature = g_strdup_printf ("mock-signature-%u-%u", n_request, index);
      append_deltas (out, index, "thinking_delta", "thinking", thinking, chunk);
      append_delta (out, index, "signature_delta", "signature", signature);
      n_chars = g_utf8_strlen (thinking, -1);
    }
  else if (input_json != NULL)
    {
      append_delta (out, index, "input_json_delta", "partial_json", "");
      append_deltas (out, index, "input_json_delta", "partial_json", input_json, chunk);
      n_chars = g_utf8_strlen (input_json, -1);
    }

  json_object_set_int_member (stop, "index", index);
  append_event_take (out, "content_block_stop", stop);

  return n_chars;
}

static gint64
usage_value (JsonObject *usage,
             const char *name,
             gint64      fallback)
{
  JsonNode *node = usage ? json_object_get_member (usage, name) : NULL;

  return node_is_int (node) ? json_node_get_int (node) : fallback;
}

/* Generates a complete, well-formed stream for a "message" response, the
 * way the API sends one (docs/protocol.md §9.1). */
static GString *
build_message_stream (MockResponse *resp,
                      guint         n_request,
                      JsonNode     *request)
{
  JsonObject *spec = get_object (resp->spec, "message");
  JsonArray *content = get_array (spec, "content");
  JsonObject *usage_spec = get_object (spec, "usage");
  GString *out = g_string_new (NULL);
  Templates templates;
  JsonObject *event, *message, *usage, *cache_creation, *delta;
  g_autofree char *id = NULL;
  const char *model;
  gint64 chunk = DEFAULT_CHUNK_CHARS;
  gint64 input_tokens, cache_write, cache_read, output_tokens;
  gboolean ping_sent = FALSE;
  gboolean has_tool_use = FALSE;
  gsize n_chars = 0;

  templates.last_tool_result = last_tool_result_text (request);
  templates.last_user_text = last_user_text (request);

  if (json_object_has_member (spec, "chunk"))
    chunk = json_object_get_int_member (spec, "chunk");

  id = g_strdup (get_string (spec, "id"));
  if (id == NULL)
    id = g_strdup_printf ("msg_mock_%u", n_request);

  model = get_string (spec, "model");
  if (model == NULL && request != NULL && JSON_NODE_HOLDS_OBJECT (request))
    model = get_string (json_node_get_object (request), "model");
  if (model == NULL)
    model = DEFAULT_MODEL;

  input_tokens = usage_value (usage_spec, "input_tokens", DEFAULT_INPUT_TOKENS);
  cache_write = usage_value (usage_spec, "cache_creation_input_tokens", 0);
  cache_read = usage_value (usage_spec, "cache_read_input_tokens", 0);

  /* message_start: empty content, null stop_reason, usage with the cache
   * fields and breakdown as recorded from the real API. */
  usage = json_object_new ();
  json_object_set_int_member (usage, "input_tokens", input_tokens);
  json_object_set_int_member (usage, "cache_creation_input_tokens", cache_write);
  json_object_set_int_member (usage, "cache_read_input_tokens", cache_read);
  cache_creation = json_object_new ();
  json_object_set_int_member (cache_creation, "ephemeral_5m_input_tokens", cache_write);
  json_object_set_int_member (cache_creation, "ephemeral_1h_input_tokens", 0);
  json_object_set_object_member (usage, "cache_creation", cache_creation);
  json_object_set_int_member (usage, "output_tokens", 1);
  json_object_set_string_member (usage, "service_tier", "standard");

  message = json_object_new ();
  json_object_set_string_member (message, "id", id);
  json_object_set_string_member (message, "type", "message");
  json_object_set_string_member (message, "role", "assistant");
  json_object_set_string_member (message, "model", model);
  json_object_set_array_member (message, "content", json_array_new ());
  json_object_set_null_member (message, "stop_reason");
  json_object_set_null_member (message, "stop_sequence");
  json_object_set_object_member (message, "usage", usage);

  event = event_object ("message_start");
  json_object_set_object_member (event, "message", message);
  append_event_take (out, "message_start", event);

  for (guint i = 0; i < json_array_get_length (content); i++)
    {
      JsonObject *block = array_get_object (content, i);

      if (g_strcmp0 (get_string (block, "type"), "tool_use") == 0)
        has_tool_use = TRUE;
      n_chars += append_block (out, i, n_request, block, (guint) chunk, &templates, &ping_sent);
    }

  if (!ping_sent)
    append_event_take (out, "ping", event_object ("ping"));

  /* message_delta: stop_reason and cumulative usage. */
  output_tokens = usage_value (usage_spec, "output_tokens", MAX (1, (gint64) (n_chars + 3) / 4));

  delta = json_object_new ();
  if (json_object_has_member (spec, "stop_reason"))
    json_object_set_member (delta, "stop_reason",
                            json_node_copy (json_object_get_member (spec, "stop_reason")));
  else
    json_object_set_string_member (delta, "stop_reason", has_tool_use ? "tool_use" : "end_turn");
  if (json_object_has_member (spec, "stop_sequence"))
    json_object_set_member (delta, "stop_sequence",
                            json_node_copy (json_object_get_member (spec, "stop_sequence")));
  else
    json_object_set_null_member (delta, "stop_sequence");
  if (json_object_has_member (spec, "stop_details"))
    json_object_set_member (delta, "stop_details",
                            json_node_copy (json_object_get_member (spec, "stop_details")));

  usage = json_object_new ();
  json_object_set_int_member (usage, "input_tokens", input_tokens);
  json_object_set_int_member (usage, "cache_creation_input_tokens", cache_write);
  json_object_set_int_member (usage, "cache_read_input_tokens", cache_read);
  json_object_set_int_member (usage, "output_tokens", output_tokens);

  event = event_object ("message_delta");
  json_object_set_object_member (event, "delta", delta);
  json_object_set_object_member (event, "usage", usage);
  append_event_take (out, "message_delta", event);

  append_event_take (out, "message_stop", event_object ("message_stop"));

  g_free (templates.last_tool_result);
  g_free (templates.last_user_text);

  return out;
}

static GString *
build_events_stream (MockResponse *resp)
{
  JsonArray *events = get_array (resp->spec, "events");
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *event = array_get_object (events, i);

      append_event (out, get_string (event, "event"), json_object_get_member (event, "data"));
    }

  return out;
}

/* The name of an SSE event: its "event:" field, else the "type" of its
 * JSON data. */
static char *
event_name_of (const char *event_field,
               GString    *data)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonNode *root;

  if (event_field != NULL)
    return g_strdup (event_field);

  if (data->len == 0)
    return NULL;

  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, data->str, data->len, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return g_strdup (get_string (json_node_get_object (root), "type"));
}

/* Where to insert an `error` event into an SSE body: just after the
 * message_start event when @k is 0, else just after the @k-th
 * content_block_stop (or after the last one when there are fewer). Lines
 * may end in LF, CRLF or CR. */
static gsize
find_error_offset (const char *data,
                   gsize       length,
                   gint64      k)
{
  g_autofree char *event_field = NULL;
  g_autoptr(GString) event_data = g_string_new (NULL);
  gsize best = 0;
  gsize pos = 0;
  gint64 n_stops = 0;

  while (pos < length)
    {
      gsize line_start = pos;
      gsize line_end;

      while (pos < length && data[pos] != '\n' && data[pos] != '\r')
        pos++;
      line_end = pos;
      if (pos < length && data[pos] == '\r')
        pos++;
      if (pos < length && data[pos] == '\n' && (pos == line_end || data[pos - 1] == '\r'))
        pos++;

      if (line_end == line_start)
        {
          g_autofree char *name = event_name_of (event_field, event_data);

          if (g_strcmp0 (name, "message_start") == 0)
            {
              best = pos;
              if (k == 0)
                return pos;
            }
          else if (g_strcmp0 (name, "content_block_stop") == 0)
            {
              best = pos;
              n_stops++;
              if (n_stops == k)
                return pos;
            }

          g_clear_pointer (&event_field, g_free);
          g_string_truncate (event_data, 0);
        }
      else
        {
          g_autofree char *line = g_strndup (data + line_start, line_end - line_start);
          const char *value = strchr (line, ':');

          if (value == NULL)
            continue;
          value++;
          if (*value == ' ')
            value++;
          if (g_str_has_prefix (line, "event:"))
            {
              g_free (event_field);
              event_field = g_strdup (value);
            }
          else if (g_str_has_prefix (line, "data:"))
            {
              if (event_data->len > 0)
                g_string_append_c (event_data, '\n');
              g_string_append (event_data, value);
            }
        }
    }

  return best;
}

static void
insert_error_event (GString      *stream,
                    MockResponse *resp)
{
  JsonObject *event = event_object ("error");
  JsonObject *error = json_object_new ();
  gsize offset = find_error_offset (stream->str, stream->len, resp->error_after_blocks);

  g_string_truncate (stream, offset);
  json_object_set_string_member (error, "type", get_string (resp->error_event, "type"));
  json_object_set_string_member (error, "message", get_string (resp->error_event, "message"));
  json_object_set_object_member (event, "error", error);
  append_event_take (stream, "error", event);
}

/* ------------------------------------------------------------------------ */
/* Sending a body piece by piece                                            */
/* ------------------------------------------------------------------------ */

static void sender_pump (Sender *sender, gboolean in_handler);

static void
sender_free (Sender *sender)
{
  g_clear_handle_id (&sender->timeout_id, g_source_remove);
  g_clear_handle_id (&sender->idle_id, g_source_remove);
  if (sender->watch != NULL)
    {
      g_source_destroy (sender->watch);
      g_clear_pointer (&sender->watch, g_source_unref);
    }
  g_clear_signal_handler (&sender->finished_id, sender->msg);
  g_clear_signal_handler (&sender->wrote_headers_id, sender->msg);
  g_clear_signal_handler (&sender->wrote_chunk_id, sender->msg);
  sender->mock->senders = g_list_remove (sender->mock->senders, sender);
  g_clear_object (&sender->msg);
  g_clear_pointer (&sender->body, g_bytes_unref);
  g_free (sender);
}

static void
sender_finished_cb (SoupServerMessage *msg,
                    Sender            *sender)
{
  sender_free (sender);
}

/* Ends the connection before the body is complete: the client sees the
 * bytes sent so far and then the connection going away. After the socket
 * is shut down libsoup finds nothing more to write or read, cleans the
 * message up and emits "finished". */
static void
sender_cut (Sender *sender)
{
  GSocket *socket = soup_server_message_get_socket (sender->msg);

  if (sender->cutting)
    return;
  sender->cutting = TRUE;

  g_clear_handle_id (&sender->timeout_id, g_source_remove);
  if (sender->watch != NULL)
    {
      g_source_destroy (sender->watch);
      g_clear_pointer (&sender->watch, g_source_unref);
    }

  if (socket != NULL)
    g_socket_shutdown (socket, TRUE, TRUE, NULL);

  soup_message_body_complete (soup_server_message_get_response_body (sender->msg));
  soup_server_message_unpause (sender->msg);
}

static gboolean
sender_cut_idle_cb (gpointer user_data)
{
  Sender *sender = user_data;

  sender->idle_id = 0;
  sender_cut (sender);
  return G_SOURCE_REMOVE;
}

/* Cuts once the headers and every byte before the cut point are on the
 * wire; from an idle, never from inside libsoup's write loop. */
static void
sender_maybe_cut (Sender *sender)
{
  if (sender->end == SENDER_END_CUT && sender->headers_written &&
      sender->offset == sender->limit && sender->n_written == sender->n_appended &&
      sender->idle_id == 0 && !sender->cutting)
    sender->idle_id = g_idle_add (sender_cut_idle_cb, sender);
}

static void
sender_wrote_headers_cb (SoupServerMessage *msg,
                         Sender            *sender)
{
  sender->headers_written = TRUE;
  sender_maybe_cut (sender);
}

static void
sender_wrote_chunk_cb (SoupServerMessage *msg,
                       Sender            *sender)
{
  sender->n_written++;
  sender_maybe_cut (sender);
}

static gboolean
sender_timeout_cb (gpointer user_data)
{
  Sender *sender = user_data;

  sender->timeout_id = 0;
  sender_pump (sender, FALSE);
  return G_SOURCE_REMOVE;
}

static gboolean
sender_stall_timeout_cb (gpointer user_data)
{
  Sender *sender = user_data;

  sender->timeout_id = 0;
  mock_log ("stalled stream reached %d s; closing it", STALL_LIMIT_SECONDS);
  sender_cut (sender);
  return G_SOURCE_REMOVE;
}

/* While a stream stalls, watch the socket to notice the client leaving:
 * it becomes readable and a peek returns 0 (end of file). */
static gboolean
sender_socket_cb (GSocket      *socket,
                  GIOCondition  condition,
                  gpointer      user_data)
{
  Sender *sender = user_data;
  char byte;
  gssize n;

  if ((condition & (G_IO_HUP | G_IO_ERR)) == 0)
    {
      n = recv (g_socket_get_fd (socket), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return G_SOURCE_CONTINUE;
      if (n > 0)
        {
          /* The client sent something; stop watching (the 120 s bound
           * still ends the stall). */
          g_clear_pointer (&sender->watch, g_source_unref);
          return G_SOURCE_REMOVE;
        }
    }

  mock_log ("client left a stalled stream; closing it");
  g_clear_pointer (&sender->watch, g_source_unref);
  sender_cut (sender);
  return G_SOURCE_REMOVE;
}

static void
sender_stall (Sender *sender)
{
  GSocket *socket = soup_server_message_get_socket (sender->msg);

  sender->timeout_id = g_timeout_add_seconds (STALL_LIMIT_SECONDS, sender_stall_timeout_cb, sender);

  if (socket != NULL)
    {
      sender->watch = g_socket_create_source (socket, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
      g_source_set_callback (sender->watch, (GSourceFunc) (GCallback) sender_socket_cb, sender, NULL);
      g_source_attach (sender->watch, NULL);
    }
}

static void
sender_pump (Sender   *sender,
             gboolean  in_handler)
{
  SoupMessageBody *body = soup_server_message_get_response_body (sender->msg);
  gsize piece = sender->limit - sender->offset;

  if (sender->drip_bytes > 0)
    piece = MIN (piece, sender->drip_bytes);

  if (piece > 0)
    {
      g_autoptr(GBytes) bytes = g_bytes_new_from_bytes (sender->body, sender->offset, piece);

      soup_message_body_append_bytes (body, bytes);
      sender->offset += piece;
      sender->n_appended++;
    }

  if (sender->offset < sender->limit)
    {
      sender->timeout_id = g_timeout_add (sender->drip_ms, sender_timeout_cb, sender);
    }
  else
    {
      switch (sender->end)
        {
        case SENDER_END_COMPLETE:
          soup_message_body_complete (body);
          break;

        case SENDER_END_CUT:
          sender_maybe_cut (sender);
          break;

        case SENDER_END_STALL:
          sender_stall (sender);
          break;

        default:
          g_assert_not_reached ();
        }
    }

  /* Inside the handler libsoup has not started writing yet; afterwards it
   * pauses itself whenever it runs out of body, so wake it up. */
  if (!in_handler)
    soup_server_message_unpause (sender->msg);
}

static gboolean
sender_delay_cb (gpointer user_data)
{
  Sender *sender = user_data;

  sender->timeout_id = 0;
  sender_pump (sender, FALSE);
  return G_SOURCE_REMOVE;
}

/* Starts sending @body with chunked encoding, applying the response's
 * delay, drip, cut and stall settings. The status and headers must be set
 * already. Called from the request handler. */
static void
sender_start (MockServer        *mock,
              SoupServerMessage *msg,
              GBytes            *body,
              MockResponse      *resp)
{
  Sender *sender = g_new0 (Sender, 1);
  gsize length = g_bytes_get_size (body);

  sender->mock = mock;
  sender->msg = g_object_ref (msg);
  sender->body = g_bytes_ref (body);
  sender->limit = length;
  sender->end = SENDER_END_COMPLETE;

  if (resp != NULL)
    {
      if (resp->cut_after_bytes >= 0)
        {
          sender->end = SENDER_END_CUT;
          sender->limit = MIN (length, (gsize) resp->cut_after_bytes);
        }
      else if (resp->stall_after_bytes >= 0)
        {
          sender->end = SENDER_END_STALL;
          sender->limit = MIN (length, (gsize) resp->stall_after_bytes);
        }
      sender->drip_ms = (guint) resp->drip_ms;
      sender->drip_bytes = (gsize) resp->drip_bytes;
    }

  /* A cut response announces its full length, so that closing early is
   * unmistakably a connection lost mid-body (libsoup, for one, takes an
   * end of file between two chunks of a chunked body for a clean end).
   * Everything else streams with chunked encoding, like the API. */
  if (sender->end == SENDER_END_CUT)
    soup_message_headers_set_content_length (soup_server_message_get_response_headers (msg), length);
  else
    soup_message_headers_set_encoding (soup_server_message_get_response_headers (msg),
                                       SOUP_ENCODING_CHUNKED);

  sender->finished_id = g_signal_connect (msg, "finished", G_CALLBACK (sender_finished_cb), sender);
  sender->wrote_headers_id = g_signal_connect (msg, "wrote-headers", G_CALLBACK (sender_wrote_headers_cb), sender);
  sender->wrote_chunk_id = g_signal_connect (msg, "wrote-chunk", G_CALLBACK (sender_wrote_chunk_cb), sender);
  mock->senders = g_list_prepend (mock->senders, sender);

  if (resp != NULL && resp->delay_headers_ms > 0)
    {
      soup_server_message_pause (msg);
      sender->timeout_id = g_timeout_add ((guint) resp->delay_headers_ms, sender_delay_cb, sender);
      return;
    }

  sender_pump (sender, TRUE);
}

/* ------------------------------------------------------------------------ */
/* Recording                                                                */
/* ------------------------------------------------------------------------ */

static void
collect_header_cb (const char *name,
                   const char *value,
                   gpointer    user_data)
{
  JsonObject *headers = user_data;
  g_autofree char *key = g_ascii_strdown (name, -1);
  const char *previous = get_string (headers, key);

  if (previous != NULL)
    {
      g_autofree char *joined = g_strconcat (previous, ", ", value, NULL);

      json_object_set_string_member (headers, key, joined);
    }
  else
    {
      json_object_set_string_member (headers, key, value);
    }
}

static void
write_all (int         fd,
           const char *data,
           gsize       length)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          mock_log ("cannot write the record file: %s", g_strerror (errno));
          return;
        }
      data += n;
      length -= n;
    }
}

/* Appends one JSON line describing the request; called before any byte of
 * the response body is sent, so a test sees the request even when it
 * cancels mid-stream. */
static void
record_request (MockServer        *mock,
                guint              n,
                SoupServerMessage *msg,
                JsonNode          *body_json,
                GBytes            *raw_body,
                int                response_index,
                guint              status)
{
  g_autofree char *line = NULL;
  JsonObject *record;
  JsonObject *headers;
  GUri *uri = soup_server_message_get_uri (msg);
  gsize raw_length = 0;
  const char *raw = g_bytes_get_data (raw_body, &raw_length);

  if (mock->record_fd < 0)
    return;

  record = json_object_new ();
  json_object_set_int_member (record, "n", n);
  json_object_set_string_member (record, "method", soup_server_message_get_method (msg));
  json_object_set_string_member (record, "path", g_uri_get_path (uri));
  if (g_uri_get_query (uri) != NULL)
    json_object_set_string_member (record, "query", g_uri_get_query (uri));

  headers = json_object_new ();
  soup_message_headers_foreach (soup_server_message_get_request_headers (msg),
                                collect_header_cb, headers);
  json_object_set_object_member (record, "headers", headers);

  if (body_json != NULL)
    {
      json_object_set_member (record, "body", json_node_copy (body_json));
    }
  else if (raw_length > 0)
    {
      g_autofree char *text = g_utf8_make_valid (raw, raw_length);

      json_object_set_string_member (record, "body", text);
    }
  else
    {
      json_object_set_null_member (record, "body");
    }

  json_object_set_int_member (record, "response", response_index);
  json_object_set_int_member (record, "status", status);

  line = object_to_string (record);
  json_object_unref (record);

  {
    g_autofree char *with_newline = g_strconcat (line, "\n", NULL);

    write_all (mock->record_fd, with_newline, strlen (with_newline));
  }
}

/* ------------------------------------------------------------------------ */
/* Answering requests                                                       */
/* ------------------------------------------------------------------------ */

/* Reason phrases libsoup does not know. */
static const char *
reason_phrase (guint status)
{
  switch (status)
    {
    case 429: return "Too Many Requests";
    case 529: return "Overloaded";
    default: return NULL;
    }
}

static guint
status_for_error_type (const char *type)
{
  static const struct { const char *type; guint status; } table[] = {
    { "invalid_request_error", 400 },
    { "authentication_error", 401 },
    { "billing_error", 402 },
    { "permission_error", 403 },
    { "not_found_error", 404 },
    { "conflict_error", 409 },
    { "request_too_large", 413 },
    { "rate_limit_error", 429 },
    { "api_error", 500 },
    { "timeout_error", 504 },
    { "overloaded_error", 529 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (g_str_equal (table[i].type, type))
      return table[i].status;

  return 500;
}

/* The API's JSON error body (docs/protocol.md §12.1). */
static GBytes *
error_body (const char *type,
            const char *message,
            const char *request_id)
{
  JsonObject *object = json_object_new ();
  JsonObject *error = json_object_new ();
  char *text;

  json_object_set_string_member (object, "type", "error");
  json_object_set_string_member (error, "type", type);
  json_object_set_string_member (error, "message", message);
  json_object_set_object_member (object, "error", error);
  json_object_set_string_member (object, "request_id", request_id);
  text = object_to_string (object);
  json_object_unref (object);

  return g_bytes_new_take (text, strlen (text));
}

static void
reply_error (Reply      *reply,
             guint       status,
             const char *type,
             const char *message,
             const char *request_id)
{
  reply->status = status;
  reply->body = error_body (type, message, request_id);
  reply->content_type = "application/json";
  reply->summary = g_strdup_printf ("%s: %s", type, message);
}

static void
reply_json (Reply      *reply,
            JsonObject *object)
{
  char *text = object_to_string (object);

  reply->status = 200;
  reply->body = g_bytes_new_take (text, strlen (text));
  reply->content_type = "application/json";
}

static void
answer_models (MockServer *mock,
               const char *path,
               GHashTable *query,
               const char *request_id,
               Reply      *reply)
{
  JsonObject *page;
  JsonArray *data;
  const char *after_id = query ? g_hash_table_lookup (query, "after_id") : NULL;
  const char *limit_text = query ? g_hash_table_lookup (query, "limit") : NULL;
  guint n_models;
  guint first = 0;
  guint limit = 20;

  if (mock->models == NULL)
    {
      reply_error (reply, 404, "not_found_error",
                   "mock: the scenario has no \"models\" list", request_id);
      return;
    }
  n_models = json_array_get_length (mock->models);

  if (g_str_has_prefix (path, "/v1/models/"))
    {
      const char *id = path + strlen ("/v1/models/");

      for (guint i = 0; i < n_models; i++)
        {
          JsonObject *model = array_get_object (mock->models, i);

          if (g_strcmp0 (get_string (model, "id"), id) == 0)
            {
              reply_json (reply, model);
              reply->summary = g_strdup_printf ("model %s", id);
              return;
            }
        }

      {
        g_autofree char *message = g_strdup_printf ("model: %s", id);

        reply_error (reply, 404, "not_found_error", message, request_id);
      }
      return;
    }

  if (limit_text != NULL)
    {
      guint64 value = 0;

      if (!g_ascii_string_to_unsigned (limit_text, 10, 1, 1000, &value, NULL))
        {
          reply_error (reply, 400, "invalid_request_error",
                       "limit: Input should be an integer between 1 and 1000", request_id);
          return;
        }
      limit = (guint) value;
    }

  if (after_id != NULL)
    {
      for (guint i = 0; i < n_models; i++)
        if (g_strcmp0 (get_string (array_get_object (mock->models, i), "id"), after_id) == 0)
          first = i + 1;
    }

  page = json_object_new ();
  data = json_array_new ();
  for (guint i = first; i < n_models && i < first + limit; i++)
    json_array_add_element (data, json_node_copy (json_array_get_element (mock->models, i)));
  json_object_set_array_member (page, "data", data);
  json_object_set_boolean_member (page, "has_more", first + limit < n_models);

  if (json_array_get_length (data) > 0)
    {
      json_object_set_string_member (page, "first_id",
                                     get_string (array_get_object (data, 0), "id"));
      json_object_set_string_member (page, "last_id",
                                     get_string (array_get_object (data, json_array_get_length (data) - 1), "id"));
    }
  else
    {
      json_object_set_null_member (page, "first_id");
      json_object_set_null_member (page, "last_id");
    }

  reply_json (reply, page);
  reply->summary = g_strdup_printf ("models page of %u", json_array_get_length (data));
  json_object_unref (page);
}

static void
answer_messages (MockServer *mock,
                 guint       n,
                 GBytes     *raw_body,
                 JsonNode   *body_json,
                 const char *parse_error,
                 const char *request_id,
                 Reply      *reply)
{
  g_autofree char *raw_text = NULL;
  g_autofree char *problem = NULL;
  MockResponse *resp;
  GString *stream = NULL;

  if (mock->check_history)
    {
      problem = validate_request (body_json, parse_error);
      if (problem != NULL)
        {
          reply_error (reply, 400, "invalid_request_error", problem, request_id);
          return;
        }
    }

  raw_text = g_strndup (g_bytes_get_data (raw_body, NULL), g_bytes_get_size (raw_body));
  resp = pick_response (mock, raw_text, body_json);
  if (resp == NULL)
    {
      g_autofree char *message =
        g_strdup_printf ("mock: no scripted response left for request %u "
                         "(the scenario has %u responses)", n, mock->responses->len);

      reply_error (reply, 500, "api_error", message, request_id);
      return;
    }

  resp->used = TRUE;
  reply->resp = resp;
  reply->response_index = (int) resp->index;

  switch (resp->kind)
    {
    case BODY_ERROR:
      {
        JsonObject *err = get_object (resp->spec, "error");

        reply_error (reply, status_for_error_type (get_string (err, "type")),
                     get_string (err, "type"), get_string (err, "message"), request_id);
      }
      break;

    case BODY_TEXT:
      {
        const char *text = get_string (resp->spec, "body_text");

        reply->status = 200;
        reply->body = g_bytes_new (text, strlen (text));
        reply->content_type = "text/plain; charset=utf-8";
      }
      break;

    case BODY_JSON:
      {
        char *text = node_to_string (json_object_get_member (resp->spec, "body_json"));

        reply->status = 200;
        reply->body = g_bytes_new_take (text, strlen (text));
        reply->content_type = "application/json";
      }
      break;

    case BODY_SSE_RAW:
      stream = g_string_new_len (g_bytes_get_data (resp->sse_raw, NULL),
                                 g_bytes_get_size (resp->sse_raw));
      break;

    case BODY_EVENTS:
      stream = build_events_stream (resp);
      break;

    case BODY_MESSAGE:
      stream = build_message_stream (resp, n, body_json);
      break;

    case BODY_NONE:
    default:
      reply->status = 200;
      reply->body = g_bytes_new (NULL, 0);
      break;
    }

  if (stream != NULL)
    {
      if (resp->error_event != NULL)
        insert_error_event (stream, resp);
      reply->status = 200;
      reply->is_stream = TRUE;
      reply->content_type = "text/event-stream; charset=utf-8";
      reply->body = g_string_free_to_bytes (stream);
    }

  if (resp->status != 0)
    reply->status = resp->status;

  g_free (reply->summary);
  reply->summary = g_strdup_printf ("response %u", resp->index);
}

static void
apply_scripted_headers (SoupMessageHeaders *headers,
                        MockResponse       *resp)
{
  JsonObject *extra = get_object (resp->spec, "headers");
  g_autoptr(GList) names = NULL;

  if (extra == NULL)
    return;

  names = json_object_get_members (extra);
  for (GList *l = names; l != NULL; l = l->next)
    {
      JsonNode *value = json_object_get_member (extra, l->data);
      g_autofree char *text = NULL;

      if (node_is_int (value))
        text = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (value));
      else
        text = g_strdup (json_node_get_string (value));
      soup_message_headers_replace (headers, l->data, text);
    }
}

static void
server_callback (SoupServer        *server,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           user_data)
{
  MockServer *mock = user_data;
  SoupMessageHeaders *request_headers = soup_server_message_get_request_headers (msg);
  SoupMessageHeaders *response_headers = soup_server_message_get_response_headers (msg);
  const char *method = soup_server_message_get_method (msg);
  g_autoptr(GBytes) raw_body = NULL;
  g_autoptr(JsonNode) body_json = NULL;
  g_autoptr(GError) parse_error = NULL;
  g_autofree char *request_id = NULL;
  const char *api_key;
  const char *version;
  Reply reply = { 0, -1, NULL, NULL, FALSE, NULL, NULL };
  guint n;

  n = ++mock->n_requests;
  request_id = g_strdup_printf ("req_mock_%u", n);

  raw_body = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  if (g_bytes_get_size (raw_body) > 0)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();

      if (json_parser_load_from_data (parser, g_bytes_get_data (raw_body, NULL),
                                      g_bytes_get_size (raw_body), &parse_error))
        body_json = json_parser_steal_root (parser);
    }
  else
    {
      parse_error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the body is empty");
    }

  api_key = soup_message_headers_get_one (request_headers, "x-api-key");
  version = soup_message_headers_get_one (request_headers, "anthropic-version");

  if (api_key == NULL || *api_key == '\0')
    reply_error (&reply, 401, "authentication_error", "x-api-key header is required", request_id);
  else if (version == NULL || *version == '\0')
    reply_error (&reply, 401, "authentication_error", "anthropic-version header is required", request_id);
  else if (g_str_equal (method, "GET") && (g_str_equal (path, "/v1/models") ||
                                           g_str_has_prefix (path, "/v1/models/")))
    answer_models (mock, path, query, request_id, &reply);
  else if (g_str_equal (method, "POST") && g_str_equal (path, "/v1/messages"))
    answer_messages (mock, n, raw_body, body_json,
                     parse_error ? parse_error->message : NULL, request_id, &reply);
  else
    {
      g_autofree char *message = g_strdup_printf ("mock: no route for %s %s", method, path);

      reply_error (&reply, 404, "not_found_error", message, request_id);
    }

  mock_log ("#%u %s %s -> %u (%s)", n, method, path, reply.status,
            reply.summary ? reply.summary : "");
  record_request (mock, n, msg, body_json, raw_body, reply.response_index, reply.status);

  soup_server_message_set_status (msg, reply.status, reason_phrase (reply.status));
  soup_message_headers_replace (response_headers, "request-id", request_id);
  if (reply.content_type != NULL)
    soup_message_headers_replace (response_headers, "Content-Type", reply.content_type);
  if (reply.is_stream)
    soup_message_headers_replace (response_headers, "Cache-Control", "no-cache");
  if (reply.resp == NULL && reply.status == 500)
    soup_message_headers_replace (response_headers, "x-should-retry", "false");
  if (reply.resp != NULL)
    apply_scripted_headers (response_headers, reply.resp);

  if (reply.is_stream ||
      (reply.resp != NULL &&
       (reply.resp->cut_after_bytes >= 0 || reply.resp->stall_after_bytes >= 0 ||
        reply.resp->drip_bytes > 0 || reply.resp->delay_headers_ms > 0)))
    {
      sender_start (mock, msg, reply.body, reply.resp);
    }
  else
    {
      gsize length = 0;
      const char *data = g_bytes_get_data (reply.body, &length);

      soup_message_body_append (soup_server_message_get_response_body (msg),
                                SOUP_MEMORY_COPY, data, length);
    }

  g_clear_pointer (&reply.body, g_bytes_unref);
  g_free (reply.summary);
}

/* ------------------------------------------------------------------------ */
/* Main                                                                     */
/* ------------------------------------------------------------------------ */

static gboolean
quit_signal_cb (gpointer user_data)
{
  MockServer *mock = user_data;

  g_main_loop_quit (mock->loop);
  return G_SOURCE_CONTINUE;
}

static gboolean
stdin_cb (int          fd,
          GIOCondition condition,
          gpointer     user_data)
{
  MockServer *mock = user_data;
  char buffer[256];
  gssize n;

  n = read (fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n > 0)
    return G_SOURCE_CONTINUE;

  /* End of input: whoever started us is gone. */
  g_main_loop_quit (mock->loop);
  return G_SOURCE_REMOVE;
}

static void
mock_server_clear (MockServer *mock)
{
  while (mock->senders != NULL)
    sender_free (mock->senders->data);

  if (mock->server != NULL)
    {
      soup_server_disconnect (mock->server);
      g_clear_object (&mock->server);
    }

  if (mock->record_fd >= 0)
    close (mock->record_fd);
  mock->record_fd = -1;
  g_clear_pointer (&mock->responses, g_ptr_array_unref);
  g_clear_pointer (&mock->root, json_node_unref);
  g_clear_pointer (&mock->scenario_dir, g_free);
  g_clear_pointer (&mock->loop, g_main_loop_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (MockServer, mock_server_clear)

int
main (int    argc,
      char **argv)
{
  g_autofree char *scenario = NULL;
  g_autofree char *record = NULL;
  gboolean watch_stdin = FALSE;
  int port = 0;
  GOptionEntry entries[] = {
    { "scenario", 0, 0, G_OPTION_ARG_FILENAME, &scenario, "Scenario file (JSON)", "FILE" },
    { "port", 0, 0, G_OPTION_ARG_INT, &port, "Port to listen on (0 picks a free one)", "N" },
    { "record", 0, 0, G_OPTION_ARG_FILENAME, &record, "Append one JSON line per request to FILE", "FILE" },
    { "watch-stdin", 0, 0, G_OPTION_ARG_NONE, &watch_stdin, "Exit when standard input reaches end of file", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(MockServer) mock = { .record_fd = -1 };
  GSList *uris;
  guint port_found = 0;
  guint sigterm_id, sigint_id, stdin_id = 0;

  signal (SIGPIPE, SIG_IGN);
  g_log_writer_default_set_use_stderr (TRUE);

  context = g_option_context_new ("- imitate the Anthropic Messages API for tests");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      mock_log ("%s", error->message);
      return 2;
    }
  if (scenario == NULL)
    {
      mock_log ("--scenario FILE is required");
      return 2;
    }
  if (port < 0 || port > 65535)
    {
      mock_log ("--port must be between 0 and 65535");
      return 2;
    }

  mock.responses = g_ptr_array_new_with_free_func ((GDestroyNotify) mock_response_free);

  if (!load_scenario (&mock, scenario, &error))
    {
      mock_log ("scenario %s: %s", scenario, error->message);
      return 2;
    }

  if (record != NULL)
    {
      mock.record_fd = open (record, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
      if (mock.record_fd < 0)
        {
          mock_log ("cannot open %s: %s", record, g_strerror (errno));
          return 2;
        }
    }

  mock.server = soup_server_new ("server-header", "tally-mock-api", NULL);
  soup_server_add_handler (mock.server, NULL, server_callback, &mock, NULL);

  /* Loopback only: the mock must never be reachable from outside. */
  if (!soup_server_listen_local (mock.server, (guint) port, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    {
      mock_log ("cannot listen on 127.0.0.1:%d: %s", port, error->message);
      return 1;
    }

  uris = soup_server_get_uris (mock.server);
  if (uris != NULL)
    port_found = (guint) g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  printf ("%u\n", port_found);
  fflush (stdout);
  mock_log ("listening on http://127.0.0.1:%u with %u scripted responses",
            port_found, mock.responses->len);

  mock.loop = g_main_loop_new (NULL, FALSE);
  sigterm_id = g_unix_signal_add (SIGTERM, quit_signal_cb, &mock);
  sigint_id = g_unix_signal_add (SIGINT, quit_signal_cb, &mock);
  if (watch_stdin)
    stdin_id = g_unix_fd_add (STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR, stdin_cb, &mock);

  g_main_loop_run (mock.loop);

  g_source_remove (sigterm_id);
  g_source_remove (sigint_id);
  if (stdin_id != 0 && g_main_context_find_source_by_id (NULL, stdin_id) != NULL)
    g_source_remove (stdin_id);

  return 0;
}
