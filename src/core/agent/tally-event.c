/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-event"

#include "config.h"

#include "tally-event.h"

/**
 * tally_event_new:
 * @type: the event type, e.g. `"text_delta"`
 *
 * Starts the fields of an event: an object holding only `type`. Add the
 * type's fields, then give it to tally_event_stamp() (the agent does that).
 *
 * Returns: (transfer full): a new #JsonObject
 */
JsonObject *
tally_event_new (const char *type)
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
  if (session_id != NULL)
    json_object_set_string_member (event, "session_id", session_id);
  else
    json_object_set_null_member (event, "session_id");
  if (turn_id != NULL)
    json_object_set_string_member (event, "turn_id", turn_id);
  else
    json_object_set_null_member (event, "turn_id");

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

  return json_to_string (node, FALSE);
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
  if (json_object_get_string_member_with_default (object, "type", NULL) == NULL)
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
 * Returns: (transfer none): the event's `type`, or "unknown"
 */
const char *
tally_event_get_event_type (JsonObject *event)
{
  g_return_val_if_fail (event != NULL, NULL);

  return json_object_get_string_member_with_default (event, "type", "unknown");
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
