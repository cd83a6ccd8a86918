/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-json"

#include "config.h"

#include <string.h>

#include "tally-json.h"
#include "tally-json-raw.h"

/*
 * member_of_type:
 * @object: (nullable): a JSON object
 * @member: (nullable): the member's name
 * @type: the kind of node wanted: %JSON_NODE_VALUE, %JSON_NODE_OBJECT or
 *   %JSON_NODE_ARRAY
 *
 * The one lookup behind every getter of this file: a missing object or
 * name, a missing member and a member of another kind (JSON null
 * included) all read as absent.
 *
 * Returns: (transfer none) (nullable): the member's node, owned by
 *   @object, or %NULL
 */
static JsonNode *
member_of_type (JsonObject   *object,
                const char   *member,
                JsonNodeType  type)
{
  JsonNode *node;

  if (object == NULL || member == NULL)
    return NULL;

  node = json_object_get_member (object, member);
  if (node == NULL || JSON_NODE_TYPE (node) != type)
    return NULL;

  return node;
}

/* A number or a boolean: what json_node_get_int() and friends convert. */
static gboolean
is_scalar (JsonNode *node)
{
  GType type = json_node_get_value_type (node);

  return type == G_TYPE_INT64 || type == G_TYPE_DOUBLE || type == G_TYPE_BOOLEAN;
}

/**
 * tally_json_node_describe:
 * @node: (nullable): a JSON node, %NULL for a missing member
 *
 * Names the kind of @node in words, for messages that tell the model or
 * the analyst what arrived where something else was expected: "missing",
 * "null", "an object", "an array", "a string", "true or false" or "a
 * number".
 *
 * Returns: (transfer none): a static English string (these messages go
 *   to the model, so they are not translated)
 */
const char *
tally_json_node_describe (JsonNode *node)
{
  if (node == NULL)
    return "missing";

  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      return "an object";
    case JSON_NODE_ARRAY:
      return "an array";
    case JSON_NODE_NULL:
      return "null";
    case JSON_NODE_VALUE:
    default:
      break;
    }

  switch (json_node_get_value_type (node))
    {
    case G_TYPE_STRING:
      return "a string";
    case G_TYPE_BOOLEAN:
      return "true or false";
    default:
      return "a number";
    }
}

/**
 * tally_json_object_get_string:
 * @object: (nullable): a JSON object
 * @member: the member's name
 * @default_value: (nullable): returned when the member is not a string
 *
 * Returns: (transfer none) (nullable): the member's string, owned by
 *   @object, or @default_value
 */
const char *
tally_json_object_get_string (JsonObject *object,
                              const char *member,
                              const char *default_value)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_VALUE);

  if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
    return default_value;

  return json_node_get_string (node);
}

/**
 * tally_json_object_get_int:
 * @object: (nullable): a JSON object
 * @member: the member's name
 * @default_value: returned when the member is not a number or boolean
 *
 * Reads an integer. A floating-point member is truncated towards zero and
 * a boolean reads as 0 or 1, as json_node_get_int() does.
 *
 * Returns: the member's value, or @default_value
 */
gint64
tally_json_object_get_int (JsonObject *object,
                           const char *member,
                           gint64      default_value)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_VALUE);

  if (node == NULL || !is_scalar (node))
    return default_value;

  return json_node_get_int (node);
}

/**
 * tally_json_object_get_double:
 * @object: (nullable): a JSON object
 * @member: the member's name
 * @default_value: returned when the member is not a number or boolean
 *
 * Returns: the member's value, or @default_value
 */
double
tally_json_object_get_double (JsonObject *object,
                              const char *member,
                              double      default_value)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_VALUE);

  if (node == NULL || !is_scalar (node))
    return default_value;

  return json_node_get_double (node);
}

/**
 * tally_json_object_get_bool:
 * @object: (nullable): a JSON object
 * @member: the member's name
 * @default_value: returned when the member is not a boolean or number
 *
 * Reads a boolean; a number reads as %TRUE when it is not zero, as
 * json_node_get_boolean() does.
 *
 * Returns: the member's value, or @default_value
 */
gboolean
tally_json_object_get_bool (JsonObject *object,
                            const char *member,
                            gboolean    default_value)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_VALUE);

  if (node == NULL || !is_scalar (node))
    return default_value;

  return json_node_get_boolean (node);
}

/**
 * tally_json_object_lookup_int:
 * @object: (nullable): a JSON object
 * @member: the member's name
 * @value: (out): the member's value
 *
 * The strict form of tally_json_object_get_int(), for data that must be an
 * integer (a `seq`, a stored timestamp): a floating-point or boolean
 * member does not count.
 *
 * Returns: %TRUE when the member is an integer; @value is left untouched
 *   otherwise
 */
gboolean
tally_json_object_lookup_int (JsonObject *object,
                              const char *member,
                              gint64     *value)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_VALUE);

  g_return_val_if_fail (value != NULL, FALSE);

  if (node == NULL || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;

  *value = json_node_get_int (node);
  return TRUE;
}

/**
 * tally_json_object_lookup_double:
 * @object: (nullable): a JSON object
 * @member: the member's name
 * @value: (out): the member's value
 *
 * Reads a number, integer or floating-point, telling a missing or
 * non-numeric member (`"cost_usd": null`) apart from zero.
 *
 * Returns: %TRUE when the member is a number; @value is left untouched
 *   otherwise
 */
gboolean
tally_json_object_lookup_double (JsonObject *object,
                                 const char *member,
                                 double     *value)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_VALUE);
  GType type;

  g_return_val_if_fail (value != NULL, FALSE);

  if (node == NULL)
    return FALSE;

  type = json_node_get_value_type (node);
  if (type == G_TYPE_DOUBLE)
    *value = json_node_get_double (node);
  else if (type == G_TYPE_INT64)
    *value = (double)json_node_get_int (node);
  else
    return FALSE;

  return TRUE;
}

/**
 * tally_json_object_get_object:
 * @object: (nullable): a JSON object
 * @member: the member's name
 *
 * Returns: (transfer none) (nullable): the member when it is an object,
 *   else %NULL
 */
JsonObject *
tally_json_object_get_object (JsonObject *object,
                              const char *member)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_OBJECT);

  return node != NULL ? json_node_get_object (node) : NULL;
}

/**
 * tally_json_object_get_array:
 * @object: (nullable): a JSON object
 * @member: the member's name
 *
 * Returns: (transfer none) (nullable): the member when it is an array,
 *   else %NULL
 */
JsonArray *
tally_json_object_get_array (JsonObject *object,
                             const char *member)
{
  JsonNode *node = member_of_type (object, member, JSON_NODE_ARRAY);

  return node != NULL ? json_node_get_array (node) : NULL;
}

/**
 * tally_json_object_set_string_or_null:
 * @object: a JSON object
 * @member: the member's name
 * @value: (nullable): the string, copied
 *
 * Sets @member to @value, or to JSON null when @value is %NULL: the shape
 * of the events' optional string members (docs/architecture.md §4), which
 * are written as null rather than left out.
 */
void
tally_json_object_set_string_or_null (JsonObject *object,
                                      const char *member,
                                      const char *value)
{
  if (value != NULL)
    tally_json_object_set_string_unless_null (object, member, value);
  else
    {
      g_return_if_fail (object != NULL);
      g_return_if_fail (member != NULL);
      json_object_set_null_member (object, member);
    }
}

/**
 * tally_json_object_set_string_unless_null:
 * @object: a JSON object
 * @member: the member's name
 * @value: (nullable): the string, copied
 *
 * Sets @member to @value, and leaves @object as it is when @value is
 * %NULL: for members that are left out rather than written as null
 * (compare tally_json_object_set_string_or_null()).
 */
void
tally_json_object_set_string_unless_null (JsonObject *object,
                                          const char *member,
                                          const char *value)
{
  g_return_if_fail (object != NULL);
  g_return_if_fail (member != NULL);

  if (value != NULL)
    json_object_set_string_member (object, member, value);
}

/**
 * tally_json_to_string:
 * @node: (nullable): a JSON node; %NULL gives `null`
 * @pretty: whether to indent, as json_to_string() does
 *
 * json_to_string(), with its output made valid: the json-glib of Debian 12
 * writes 1e20 as `1e+20.0`, which no parser (json-glib's own included)
 * reads back, so a tool input or an event holding such a number would be
 * lost (tally_json_raw_repair_exponents()). Text from a json-glib without
 * the fault passes through unchanged.
 *
 * Returns: (transfer full): the JSON text
 */
char *
tally_json_to_string (JsonNode *node,
                      gboolean  pretty)
{
  g_autoptr(JsonNode) null_node = NULL;
  g_autofree char *text = NULL;

  if (node == NULL)
    node = null_node = json_node_new (JSON_NODE_NULL);

  text = json_to_string (node, pretty);
  if (strstr (text, ".0") == NULL)
    return g_steal_pointer (&text);
  return tally_json_raw_repair_exponents (text);
}
