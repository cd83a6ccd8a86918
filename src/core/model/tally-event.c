/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-event"

#include "config.h"

#include "tally-event.h"
#include "tally-json.h"

/**
 * tally_event_type_to_name:
 * @type: a #TallyEventType
 *
 * Returns: (transfer none): the type's wire name, e.g. `"text_delta"`
 *   (the value's nick); `"unknown"` for a value out of range
 */
const char *
tally_event_type_to_name (TallyEventType type)
{
  return tally_enum_to_nick_or (TALLY_TYPE_EVENT_TYPE, type, TALLY_EVENT_UNKNOWN);
}

/**
 * tally_event_type_from_name:
 * @name: (nullable): a wire name, e.g. `"tool_result"`
 *
 * Returns: the type @name names, %TALLY_EVENT_UNKNOWN for %NULL and for
 *   names this build does not know
 */
TallyEventType
tally_event_type_from_name (const char *name)
{
  int value;

  if (!tally_enum_from_nick (TALLY_TYPE_EVENT_TYPE, name, &value))
    return TALLY_EVENT_UNKNOWN;

  return value;
}

/**
 * tally_event_new:
 * @type: the event type, not %TALLY_EVENT_UNKNOWN
 *
 * Starts the fields of an event: an object holding only `type`. Add the
 * type's fields, then give it to tally_event_stamp() (the agent does that).
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_new (TallyEventType type)
{
  g_return_val_if_fail (type != TALLY_EVENT_UNKNOWN, NULL);

  return tally_event_new_named (tally_event_type_to_name (type));
}

/**
 * tally_event_new_chart_created:
 * @chart_id: a new UUID for the chart
 * @tool_id: the `create_chart` call that drew it
 * @artifact: the call's artifact (tally_tool_run_full()): `title`
 *   (string), `spec` (object: the resolved spec with its rows inline as
 *   `data.values`), `files` (array of workspace-relative paths), `rows`
 *   (integer), and optionally `capped` (true when the inline rows were cut
 *   at %TALLY_CHART_MAX_ROWS) and `sql` (the statement the rows came from)
 *
 * Builds the fields of a `chart_created` event (docs/architecture.md
 * §4.4) in their documented order: `chart_id`, `tool_id`, `title`, `spec`,
 * `files`, `rows`, then `capped` and `sql` when present. Members of
 * @artifact with the wrong JSON type are written as empty values.
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_new_chart_created (const char *chart_id,
                               const char *tool_id,
                               JsonObject *artifact)
{
  JsonObject *event;
  JsonObject *spec;
  JsonArray *files;

  g_return_val_if_fail (chart_id != NULL, NULL);
  g_return_val_if_fail (tool_id != NULL, NULL);
  g_return_val_if_fail (artifact != NULL, NULL);

  spec = tally_json_object_get_object (artifact, "spec");
  files = tally_json_object_get_array (artifact, "files");

  event = tally_event_new (TALLY_EVENT_CHART_CREATED);
  json_object_set_string_member (event, "chart_id", chart_id);
  json_object_set_string_member (event, "tool_id", tool_id);
  json_object_set_string_member (event, "title", tally_json_object_get_string (artifact, "title", ""));
  json_object_set_object_member (event, "spec", spec ? json_object_ref (spec) : json_object_new ());
  json_object_set_array_member (event, "files", files ? json_array_ref (files) : json_array_new ());
  json_object_set_int_member (event, "rows", tally_json_object_get_int (artifact, "rows", 0));
  if (tally_json_object_get_bool (artifact, "capped", FALSE))
    json_object_set_boolean_member (event, "capped", TRUE);
  if (tally_json_object_get_string (artifact, "sql", NULL) != NULL)
    json_object_set_string_member (event, "sql", tally_json_object_get_string (artifact, "sql", NULL));

  return event;
}

/**
 * tally_event_new_error:
 * @kind: what failed: `http`, `stream`, `network`, `stalled`, `store`,
 *   `budget`, … (docs/protocol.md §12.2)
 * @message: a sentence for people
 * @retryable: whether the same request could be sent again
 * @request_id: (nullable): the last attempt's `request-id`, %NULL when
 *   there was none (written as JSON null)
 *
 * Builds the fields every `error` event has (docs/architecture.md §4.6)
 * in their documented order: `kind`, `message`, `retryable`,
 * `request_id`. The caller adds the optional ones its kind has (`status`,
 * `connected`, `attempts` for a failed API request, `spent_usd` and
 * `max_cost_usd`).
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_new_error (const char *kind,
                       const char *message,
                       gboolean    retryable,
                       const char *request_id)
{
  JsonObject *event;

  g_return_val_if_fail (kind != NULL, NULL);
  g_return_val_if_fail (message != NULL, NULL);

  event = tally_event_new (TALLY_EVENT_ERROR);
  json_object_set_string_member (event, "kind", kind);
  json_object_set_string_member (event, "message", message);
  json_object_set_boolean_member (event, "retryable", retryable);
  tally_json_object_set_string_or_null (event, "request_id", request_id);

  return event;
}

/**
 * tally_event_new_turn_finished:
 * @status: how the turn ended
 * @priced: whether the turn's cost is known (the model has a price)
 * @cost_usd: the turn's cost in US dollars; ignored unless @priced
 * @duration_ms: how long the turn took, in milliseconds
 * @api_calls: the API calls the turn made
 *
 * Builds the first fields of a `turn_finished` event
 * (docs/architecture.md §4.2) in their documented order: `status` (its
 * wire name), `cost_usd` (JSON null when not @priced), `duration_ms`,
 * `api_calls`. The caller adds `failed_calls` when it counts them, then
 * the `usage` (tally_event_set_usage()).
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_new_turn_finished (TallyTurnStatus status,
                               gboolean        priced,
                               double          cost_usd,
                               gint64          duration_ms,
                               gint64          api_calls)
{
  JsonObject *event = tally_event_new (TALLY_EVENT_TURN_FINISHED);

  json_object_set_string_member (event, "status", tally_turn_status_to_string (status));
  if (priced)
    json_object_set_double_member (event, "cost_usd", cost_usd);
  else
    json_object_set_null_member (event, "cost_usd");
  json_object_set_int_member (event, "duration_ms", duration_ms);
  json_object_set_int_member (event, "api_calls", api_calls);

  return event;
}

/**
 * tally_event_new_named:
 * @type: the event's wire name, known to this build or not
 *
 * Like tally_event_new() for a type given by name, for tests and tools
 * that write a log by hand (a type a newer build added, say).
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_new_named (const char *type)
{
  JsonObject *object;

  g_return_val_if_fail (type != NULL, NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "type", type);

  return object;
}

/**
 * tally_event_stamp:
 * @fields: an object made by tally_event_new() with its type's fields
 * @seq: the sequence number, strictly increasing per session, from 1
 * @ts: the time of the event in µs since the Unix epoch
 * @session_id: (nullable): the session's id
 * @turn_id: (nullable): the turn's id, %NULL outside a turn
 *
 * Builds the complete event in the member order every face prints:
 * `type`, `seq`, `ts`, `session_id`, `turn_id`, then the fields in the order
 * they were added.
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_stamp (JsonObject *fields,
                   gint64      seq,
                   gint64      ts,
                   const char *session_id,
                   const char *turn_id)
{
  JsonObject *event;
  GList *members;

  g_return_val_if_fail (fields != NULL, NULL);

  event = json_object_new ();
  json_object_set_string_member (event, "type",
                                 json_object_get_string_member_with_default (fields, "type", "unknown"));
  json_object_set_int_member (event, "seq", seq);
  json_object_set_int_member (event, "ts", ts);
  tally_json_object_set_string_or_null (event, "session_id", session_id);
  tally_json_object_set_string_or_null (event, "turn_id", turn_id);

  members = json_object_get_members (fields);
  for (const GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;

      if (g_str_equal (name, "type"))
        continue;
      json_object_set_member (event, name,
                              json_node_copy (json_object_get_member (fields, name)));
    }
  g_list_free (members);

  return event;
}

/**
 * tally_event_to_json:
 * @event: an event
 *
 * Serialises @event as compact JSON on one line (json-glib escapes newlines
 * inside strings), the form of `tally-cli --json` and of the store.
 *
 * Returns: (transfer full): the JSON text, without a trailing newline
 */
char *
tally_event_to_json (JsonObject *event)
{
  g_autoptr(JsonNode) node = NULL;

  g_return_val_if_fail (event != NULL, NULL);

  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, event);

  return tally_json_to_string (node, FALSE);
}

/**
 * tally_event_from_json:
 * @text: one event as JSON text
 * @error: return location for a #GError
 *
 * Parses an event. Fails with %JSON_PARSER_ERROR for invalid JSON and with
 * %G_IO_ERROR_INVALID_DATA when the text is not an object with a string
 * `type`.
 *
 * Returns: (transfer full) (nullable): the event, or %NULL with @error set
 */
JsonObject *
tally_event_from_json (const char  *text,
                       GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonObject *object;

  if (!json_parser_load_from_data (parser, text, -1, error))
    return NULL;

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "An event must be a JSON object");
      return NULL;
    }

  object = json_node_get_object (root);
  if (tally_json_object_get_string (object, "type", NULL) == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "An event must have a string member “type”");
      return NULL;
    }

  return json_object_ref (object);
}

/**
 * tally_event_get_event_type:
 * @event: an event
 *
 * Returns: the event's type; %TALLY_EVENT_UNKNOWN when its `type` is
 *   missing, not a string or not known to this build
 */
TallyEventType
tally_event_get_event_type (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, TALLY_EVENT_UNKNOWN);

  return tally_event_type_from_name (tally_json_object_get_string (event, "type", NULL));
}

/**
 * tally_event_get_type_name:
 * @event: an event
 *
 * Returns: (transfer none): the event's `type` as written, also for a type
 *   this build does not know; `"unknown"` when it is missing or not a string
 */
const char *
tally_event_get_type_name (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, NULL);

  return tally_json_object_get_string (event, "type",
                                       tally_event_type_to_name (TALLY_EVENT_UNKNOWN));
}

/**
 * tally_event_get_seq:
 * @event: an event
 *
 * Returns: the event's `seq` (1, 2, 3, … per session), 0 when absent
 */
gint64
tally_event_get_seq (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, 0);

  return tally_json_object_get_int (event, "seq", 0);
}

/**
 * tally_event_get_ts:
 * @event: an event
 *
 * Returns: the event's `ts` in µs since the Unix epoch, 0 when absent
 */
gint64
tally_event_get_ts (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, 0);

  return tally_json_object_get_int (event, "ts", 0);
}

/**
 * tally_event_get_session_id:
 * @event: an event
 *
 * Returns: (transfer none) (nullable): the event's `session_id`
 */
const char *
tally_event_get_session_id (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, NULL);

  return tally_json_object_get_string (event, "session_id", NULL);
}

/**
 * tally_event_get_turn_id:
 * @event: an event
 *
 * Returns: (transfer none) (nullable): the event's `turn_id`, %NULL for
 *   `session_created` and events outside a turn
 */
const char *
tally_event_get_turn_id (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, NULL);

  return tally_json_object_get_string (event, "turn_id", NULL);
}

/**
 * tally_event_get_call:
 * @event: a streaming or `api_call` event
 *
 * Returns: the `call` within the turn, from 0; 0 when absent
 */
gint64
tally_event_get_call (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, 0);

  return tally_json_object_get_int (event, "call", 0);
}

/**
 * tally_event_get_block:
 * @event: a streaming event (`text_delta`, `thinking_delta`, `block_done`)
 *
 * Returns: the API's content-block index within the call; 0 when absent
 */
gint64
tally_event_get_block (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, 0);

  return tally_json_object_get_int (event, "block", 0);
}

/**
 * tally_event_get_text:
 * @event: an event with a `text` (deltas, `turn_started`, `redirect`)
 *
 * Returns: (transfer none) (nullable): the `text`, %NULL when absent
 */
const char *
tally_event_get_text (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, NULL);

  return tally_json_object_get_string (event, "text", NULL);
}

/**
 * tally_event_get_tool_id:
 * @event: a tool or approval event
 *
 * Returns: (transfer none) (nullable): the `tool_id`, %NULL when absent
 */
const char *
tally_event_get_tool_id (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, NULL);

  return tally_json_object_get_string (event, "tool_id", NULL);
}

/**
 * tally_event_set_usage:
 * @event: an event under construction
 * @member: the member name, usually `"usage"`
 * @input_tokens: uncached input tokens
 * @output_tokens: output tokens
 * @cache_creation_input_tokens: tokens written to the prompt cache
 * @cache_read_input_tokens: tokens read from the prompt cache
 *
 * Sets @member to a usage object with the API's field names.
 */
void
tally_event_set_usage (JsonObject *event,
                       const char *member,
                       gint64      input_tokens,
                       gint64      output_tokens,
                       gint64      cache_creation_input_tokens,
                       gint64      cache_read_input_tokens)
{
  JsonObject *usage = json_object_new ();

  json_object_set_int_member (usage, "input_tokens", input_tokens);
  json_object_set_int_member (usage, "output_tokens", output_tokens);
  json_object_set_int_member (usage, "cache_creation_input_tokens", cache_creation_input_tokens);
  json_object_set_int_member (usage, "cache_read_input_tokens", cache_read_input_tokens);
  json_object_set_object_member (event, member, usage);
}
