/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-message-stream-private.h"

#include <string.h>

#include "tally-json-raw.h"

/*
 * JSON in and out of #TallyMessageStream: decoded strings made valid UTF-8,
 * members copied byte-exact from an event's text, and each block written
 * as the JSON text echoed to the API in the next request
 * (docs/protocol.md §4).
 */

/* JSON's grammar allows a lone UTF-16 surrogate escape such as "\ud800",
 * and json-glib decodes it into bytes that are not UTF-8 (ED A0 80), in
 * string values and in member names alike (1.6 takes a name whose escape
 * is followed by other characters). Every string the stream hands on
 * (deltas, ids, error messages, the members of a block it sends back) must
 * be UTF-8, so such strings and names get U+FFFD in place of what cannot be
 * decoded. Only data with a "\u" escape can hold one; the caller checks
 * that first. */
void
tally_message_stream_make_strings_valid (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        g_autoptr(GPtrArray) bad_names = g_ptr_array_new_with_free_func (g_free);
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        json_object_iter_init (&iter, object);
        while (json_object_iter_next (&iter, &name, &member))
          {
            tally_message_stream_make_strings_valid (member);
            if (!g_utf8_validate (name, -1, NULL))
              g_ptr_array_add (bad_names, g_strdup (name));
          }

        /* Renamed after the walk: the iterator must not see the object
         * change. A repaired name that is already taken keeps the later
         * member, as json-glib does for a name given twice. */
        for (guint i = 0; i < bad_names->len; i++)
          {
            const char *bad = g_ptr_array_index (bad_names, i);
            g_autofree char *valid = g_utf8_make_valid (bad, -1);

            member = json_node_ref (json_object_get_member (object, bad));
            json_object_remove_member (object, bad);
            json_object_set_member (object, valid, member);
          }
      }
      break;

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);

        for (guint i = 0; i < json_array_get_length (array); i++)
          tally_message_stream_make_strings_valid (json_array_get_element (array, i));
      }
      break;

    case JSON_NODE_VALUE:
      if (json_node_get_value_type (node) == G_TYPE_STRING &&
          !g_utf8_validate (json_node_get_string (node), -1, NULL))
        {
          g_autofree char *valid = g_utf8_make_valid (json_node_get_string (node), -1);

          json_node_set_string (node, valid);
        }
      break;

    case JSON_NODE_NULL:
    default:
      break;
    }
}
/* The member @key of the JSON object text @json, byte-exact as received;
 * @fallback (its parsed form) serialised when it cannot be found. */
char *
tally_message_stream_dup_raw_member (const char *json,
                                     const char *key,
                                     JsonNode   *fallback)
{
  const char *value;
  gsize len;

  if (tally_json_raw_find_member (json, key, &value, &len))
    return g_strndup (value, len);

  return json_to_string (fallback, FALSE);
}

/* Appends @str as a JSON string literal. Non-ASCII text is kept as UTF-8;
 * quotes, backslashes and control characters are escaped. */
static void
append_json_string (GString    *out,
                    const char *str,
                    gsize       len)
{
  const char *p = str;
  const char *end = str + len;
  const char *run = str;

  g_string_append_c (out, '"');

  for (; p < end; p++)
    {
      guchar c = (guchar) *p;

      if (c >= 0x20 && c != '"' && c != '\\')
        continue;

      g_string_append_len (out, run, p - run);
      run = p + 1;

      switch (c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        default: g_string_append_printf (out, "\\u%04x", c); break;
        }
    }

  g_string_append_len (out, run, p - run);
  g_string_append_c (out, '"');
}


static void
append_tool_block_json (GString *out,
                        Block   *block)
{
  const char *id = tally_json_object_get_string (block->start, "id", NULL);
  const char *name = tally_json_object_get_string (block->start, "name", NULL);
  const char *caller;
  gsize caller_len;

  g_string_append (out, "{\"type\":");
  append_json_string (out, block->type, strlen (block->type));
  g_string_append (out, ",\"id\":");
  append_json_string (out, id ? id : "", id ? strlen (id) : 0);
  g_string_append (out, ",\"name\":");
  append_json_string (out, name ? name : "", name ? strlen (name) : 0);
  g_string_append (out, ",\"input\":");
  if (block->input != NULL)
    {
      g_string_append (out, block->input);
    }
  else
    {
      /* Not stopped yet: the input may be incomplete JSON, so show it as a
       * string (debugging aid only, never sent). */
      g_string_append (out, "{},\"partial_json\":");
      append_json_string (out, block->text->str, block->text->len);
    }

  if (json_object_has_member (block->start, "caller"))
    {
      g_string_append (out, ",\"caller\":");
      if (tally_json_raw_find_member (block->raw_start, "caller", &caller, &caller_len))
        {
          g_string_append_len (out, caller, caller_len);
        }
      else
        {
          g_autofree char *text = json_to_string (json_object_get_member (block->start, "caller"), FALSE);

          g_string_append (out, text);
        }
    }

  g_string_append_c (out, '}');
}

/* @block as the JSON text echoed to the API; the shapes are listed at
 * tally_message_stream_dup_content(). */
char *
tally_message_stream_block_to_json (Block *block)
{
  GString *out;

  switch (block->kind)
    {
    case BLOCK_TEXT:
      out = g_string_new ("{\"type\":\"text\",\"text\":");
      append_json_string (out, block->text->str, block->text->len);
      if (block->citations->len > 0)
        {
          g_string_append (out, ",\"citations\":[");
          for (guint i = 0; i < block->citations->len; i++)
            {
              if (i > 0)
                g_string_append_c (out, ',');
              g_string_append (out, g_ptr_array_index (block->citations, i));
            }
          g_string_append_c (out, ']');
        }
      g_string_append_c (out, '}');
      return g_string_free (out, FALSE);

    case BLOCK_THINKING:
      out = g_string_new ("{\"type\":\"thinking\",\"thinking\":");
      append_json_string (out, block->text->str, block->text->len);
      g_string_append (out, ",\"signature\":");
      append_json_string (out, block->signature, strlen (block->signature));
      g_string_append_c (out, '}');
      return g_string_free (out, FALSE);

    case BLOCK_TOOL_USE:
      out = g_string_new (NULL);
      append_tool_block_json (out, block);
      return g_string_free (out, FALSE);

    case BLOCK_REDACTED_THINKING:
    case BLOCK_OTHER:
    default:
      if (block->modified)
        {
          g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), block->start);

          return json_to_string (node, FALSE);
        }
      return g_strdup (block->raw_start);
    }
}

