/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-message-stream.h"

#include <string.h>

#include "tally-api-error.h"
#include "tally-json-raw.h"
#include "tally-sse-decoder.h"

/**
 * TallyMessageStream:
 *
 * Accumulates one streamed Messages API response (docs/protocol.md §9: the
 * event grammar, block and delta types and their handling; usage merging
 * in §10.1).
 *
 * One object stands for one logical API call across its HTTP attempts:
 * tally_message_stream_begin_attempt() starts afresh for each attempt,
 * tally_message_stream_feed() takes the body bytes as they arrive (it runs a
 * #TallySseDecoder and applies every event), and
 * tally_message_stream_end_of_input() tells whether a complete message
 * (ending with `message_stop`) arrived. The first failure is stored and ends
 * the attempt; later input is ignored.
 *
 * Content blocks are addressed by their `index`, so several may be open at
 * once and their deltas may interleave. The result is available through
 * tally_message_stream_dup_content(), which gives the blocks exactly as they
 * must be echoed to the API in the next request (docs/protocol.md §4).
 *
 * Signals report progress synchronously while events are applied.
 */

typedef enum {
  BLOCK_TEXT,
  BLOCK_THINKING,
  BLOCK_REDACTED_THINKING,
  BLOCK_TOOL_USE,
  BLOCK_OTHER,
} BlockKind;

typedef struct {
  BlockKind   kind;
  char       *type;
  /* The `content_block` object of content_block_start, as received. */
  char       *raw_start;
  /* Its parsed form; for BLOCK_OTHER it takes the fields of deltas. */
  JsonObject *start;
  /* text, thinking, or the concatenated partial_json of a tool block. */
  GString    *text;
  /* thinking: the signature, byte-exact. */
  char       *signature;
  /* text: JSON texts of the citations. */
  GPtrArray  *citations;
  /* tool blocks: the checked input JSON text, set at content_block_stop. */
  char       *input;
  /* tool_use: the input as received when it was JSON but not an object
   * (@input is then "{}"); the model's mistake, answered by the agent. */
  char       *invalid_input;
  /* BLOCK_OTHER: @start was changed by a delta, @raw_start is stale. */
  gboolean    modified;
  gboolean    stopped;
} Block;

struct _TallyMessageStream
{
  GObject          parent_instance;

  TallySseDecoder *decoder;
  /* Holds the tree of the event being applied. */
  JsonParser      *parser;
  /* Checks tool input at content_block_stop, while @parser's tree is in use. */
  JsonParser      *input_parser;

  guint            attempt;

  /* The first failure of this attempt, and the API's error.type if the
   * failure was an `error` event. */
  GError          *error;
  char            *error_type;

  char            *message_id;
  char            *model;
  char            *stop_reason;
  char            *stop_sequence;
  TallyUsage       usage;

  GPtrArray       *blocks;
  GPtrArray       *unknown_events;

  guint            started : 1;
  guint            complete : 1;
};

G_DEFINE_FINAL_TYPE (TallyMessageStream, tally_message_stream, G_TYPE_OBJECT)

enum {
  MESSAGE_STARTED,
  BLOCK_STARTED,
  TEXT_DELTA,
  THINKING_DELTA,
  BLOCK_STOPPED,
  MESSAGE_STOPPED,
  RETRY,
  ATTEMPT_FINISHED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

#define STATIC_STRING (G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE)

/* Usage */

/**
 * tally_usage_add:
 * @total: the running total to add to
 * @usage: the usage of one response
 *
 * Adds @usage to @total field by field (token counts are summed). The
 * cache_creation_5m and cache_creation_1h breakdowns stay -1 only when both
 * sides are -1; otherwise -1 counts as 0. @reported becomes %TRUE when
 * either side was reported.
 */
void
tally_usage_add (TallyUsage       *total,
                 const TallyUsage *usage)
{
  g_return_if_fail (total != NULL);
  g_return_if_fail (usage != NULL);

  total->input_tokens += usage->input_tokens;
  total->output_tokens += usage->output_tokens;
  total->cache_creation_input_tokens += usage->cache_creation_input_tokens;
  total->cache_read_input_tokens += usage->cache_read_input_tokens;

  if (total->cache_creation_5m >= 0 || usage->cache_creation_5m >= 0)
    total->cache_creation_5m = MAX (total->cache_creation_5m, 0) + MAX (usage->cache_creation_5m, 0);
  if (total->cache_creation_1h >= 0 || usage->cache_creation_1h >= 0)
    total->cache_creation_1h = MAX (total->cache_creation_1h, 0) + MAX (usage->cache_creation_1h, 0);

  total->reported = total->reported || usage->reported;
}

static void
usage_init (TallyUsage *usage)
{
  memset (usage, 0, sizeof *usage);
  usage->cache_creation_5m = -1;
  usage->cache_creation_1h = -1;
}

/* JSON helpers */

/* JSON's grammar allows a lone UTF-16 surrogate escape such as "\ud800",
 * and json-glib decodes it into bytes that are not UTF-8 (ED A0 80). Every
 * string the stream hands on (deltas, ids, error messages) must be UTF-8,
 * so such strings get U+FFFD in place of what cannot be decoded. Only data
 * with a "\u" escape can hold one; the caller checks that first. */
static void
make_strings_valid (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        /* Member names need no care: json-glib refuses a name that does
         * not decode to UTF-8. */
        json_object_iter_init (&iter, json_node_get_object (node));
        while (json_object_iter_next (&iter, &name, &member))
          make_strings_valid (member);
      }
      break;

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);

        for (guint i = 0; i < json_array_get_length (array); i++)
          make_strings_valid (json_array_get_element (array, i));
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

static const char *
get_string (JsonObject *object,
            const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

static JsonObject *
get_object (JsonObject *object,
            const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;

  return json_node_get_object (node);
}

static gboolean
get_int (JsonObject *object,
         const char *name,
         gint64     *value)
{
  JsonNode *node = json_object_get_member (object, name);
  GType type;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;

  type = json_node_get_value_type (node);
  if (type == G_TYPE_INT64)
    {
      *value = json_node_get_int (node);
      return TRUE;
    }
  if (type == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);

      if (d >= (double) G_MININT64 && d < (double) G_MAXINT64 && d == (double) (gint64) d)
        {
          *value = (gint64) d;
          return TRUE;
        }
    }

  return FALSE;
}

static gboolean
get_index (JsonObject *object,
           guint      *index)
{
  gint64 value;

  if (!get_int (object, "index", &value) || value < 0 || value > G_MAXUINT)
    return FALSE;

  *index = (guint) value;
  return TRUE;
}

static char *
dup_raw_member (const char *json,
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

/* Blocks */

static void
block_free (gpointer data)
{
  Block *block = data;

  g_free (block->type);
  g_free (block->raw_start);
  g_clear_pointer (&block->start, json_object_unref);
  if (block->text != NULL)
    g_string_free (block->text, TRUE);
  g_free (block->signature);
  g_clear_pointer (&block->citations, g_ptr_array_unref);
  g_free (block->input);
  g_free (block->invalid_input);
  g_free (block);
}

static BlockKind
block_kind_for_type (const char *type)
{
  if (g_str_equal (type, "text"))
    return BLOCK_TEXT;
  if (g_str_equal (type, "thinking"))
    return BLOCK_THINKING;
  if (g_str_equal (type, "redacted_thinking"))
    return BLOCK_REDACTED_THINKING;
  if (g_str_equal (type, "tool_use") || g_str_equal (type, "server_tool_use"))
    return BLOCK_TOOL_USE;
  return BLOCK_OTHER;
}

static void
append_tool_block_json (GString *out,
                        Block   *block)
{
  const char *id = get_string (block->start, "id");
  const char *name = get_string (block->start, "name");
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

static char *
block_to_json (Block *block)
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

/* Errors */

static gboolean G_GNUC_PRINTF (2, 3)
protocol_error (GError     **error,
                const char  *format,
                ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL, format, args));
  va_end (args);

  return FALSE;
}

static Block *
lookup_block (TallyMessageStream  *self,
              JsonObject          *object,
              const char          *event_name,
              guint               *index,
              GError             **error)
{
  Block *block;

  if (!get_index (object, index))
    {
      protocol_error (error, "%s event without a valid index", event_name);
      return NULL;
    }

  if (*index >= self->blocks->len)
    {
      protocol_error (error, "%s event for unknown content block %u", event_name, *index);
      return NULL;
    }

  block = g_ptr_array_index (self->blocks, *index);
  if (block->stopped)
    {
      protocol_error (error, "%s event for content block %u after its content_block_stop",
                      event_name, *index);
      return NULL;
    }

  return block;
}

/* Event handlers. Signals are emitted last, after all state changes, so a
 * handler that starts a new attempt cannot leave a half-applied event. */

static void
merge_usage (TallyUsage *usage,
             JsonObject *object)
{
  JsonObject *cache_creation;

  usage->reported = TRUE;

  get_int (object, "input_tokens", &usage->input_tokens);
  get_int (object, "output_tokens", &usage->output_tokens);
  get_int (object, "cache_creation_input_tokens", &usage->cache_creation_input_tokens);
  get_int (object, "cache_read_input_tokens", &usage->cache_read_input_tokens);

  cache_creation = get_object (object, "cache_creation");
  if (cache_creation != NULL)
    {
      get_int (cache_creation, "ephemeral_5m_input_tokens", &usage->cache_creation_5m);
      get_int (cache_creation, "ephemeral_1h_input_tokens", &usage->cache_creation_1h);
    }
}

static gboolean
handle_message_start (TallyMessageStream  *self,
                      JsonObject          *object,
                      GError             **error)
{
  JsonObject *message;
  JsonObject *usage;

  if (self->started)
    return protocol_error (error, "second message_start event in one stream");

  message = get_object (object, "message");
  if (message == NULL)
    return protocol_error (error, "message_start event without a message object");

  g_free (self->message_id);
  self->message_id = g_strdup (get_string (message, "id"));
  g_free (self->model);
  self->model = g_strdup (get_string (message, "model"));

  usage = get_object (message, "usage");
  if (usage != NULL)
    merge_usage (&self->usage, usage);

  self->started = TRUE;

  g_signal_emit (self, signals[MESSAGE_STARTED], 0);
  return TRUE;
}

static gboolean
handle_block_start (TallyMessageStream  *self,
                    JsonObject          *object,
                    const char          *data,
                    GError             **error)
{
  g_autofree char *type_copy = NULL;
  JsonNode *start_node;
  JsonObject *start;
  const char *type;
  const char *str;
  Block *block;
  guint index;

  if (!get_index (object, &index))
    return protocol_error (error, "content_block_start event without a valid index");

  if (index != self->blocks->len)
    return protocol_error (error, "content_block_start event has index %u, expected %u",
                           index, self->blocks->len);

  start_node = json_object_get_member (object, "content_block");
  if (start_node == NULL || !JSON_NODE_HOLDS_OBJECT (start_node))
    return protocol_error (error, "content_block_start event %u without a content_block object", index);

  start = json_node_get_object (start_node);
  type = get_string (start, "type");
  if (type == NULL)
    return protocol_error (error, "content block %u has no type", index);

  block = g_new0 (Block, 1);
  block->type = g_strdup (type);
  block->kind = block_kind_for_type (type);
  block->start = json_object_ref (start);
  block->raw_start = dup_raw_member (data, "content_block", start_node);
  block->text = g_string_new (NULL);

  switch (block->kind)
    {
    case BLOCK_TEXT:
      {
        JsonNode *citations;

        block->citations = g_ptr_array_new_with_free_func (g_free);
        if ((str = get_string (start, "text")) != NULL)
          g_string_append (block->text, str);

        citations = json_object_get_member (start, "citations");
        if (citations != NULL && JSON_NODE_HOLDS_ARRAY (citations))
          {
            JsonArray *array = json_node_get_array (citations);

            for (guint i = 0; i < json_array_get_length (array); i++)
              g_ptr_array_add (block->citations,
                               json_to_string (json_array_get_element (array, i), FALSE));
          }
      }
      break;

    case BLOCK_THINKING:
      if ((str = get_string (start, "thinking")) != NULL)
        g_string_append (block->text, str);
      str = get_string (start, "signature");
      block->signature = g_strdup (str ? str : "");
      break;

    case BLOCK_TOOL_USE:
    case BLOCK_REDACTED_THINKING:
    case BLOCK_OTHER:
    default:
      break;
    }

  g_ptr_array_add (self->blocks, block);

  type_copy = g_strdup (type);
  g_signal_emit (self, signals[BLOCK_STARTED], 0, index, type_copy);
  return TRUE;
}

static gboolean
is_known_delta_type (const char *type)
{
  static const char * const known[] = {
    "text_delta", "thinking_delta", "signature_delta", "input_json_delta", "citations_delta",
  };

  for (guint i = 0; i < G_N_ELEMENTS (known); i++)
    {
      if (g_str_equal (type, known[i]))
        return TRUE;
    }

  return FALSE;
}

/* For block types we do not know, a delta of a type we do not know either
 * is applied the way compaction_delta is defined: its fields (other than
 * "type") replace those of the block. */
static void
assign_delta_fields (Block      *block,
                     JsonObject *delta)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *node;

  json_object_iter_init (&iter, delta);
  while (json_object_iter_next (&iter, &name, &node))
    {
      if (g_str_equal (name, "type"))
        continue;
      json_object_set_member (block->start, name, json_node_copy (node));
    }

  block->modified = TRUE;
}

static gboolean
handle_block_delta (TallyMessageStream  *self,
                    JsonObject          *object,
                    const char          *data,
                    GError             **error)
{
  JsonObject *delta;
  const char *type;
  const char *str;
  Block *block;
  guint index;

  block = lookup_block (self, object, "content_block_delta", &index, error);
  if (block == NULL)
    return FALSE;

  delta = get_object (object, "delta");
  if (delta == NULL)
    return protocol_error (error, "content_block_delta event for block %u without a delta object", index);

  type = get_string (delta, "type");
  if (type == NULL)
    return protocol_error (error, "content_block_delta event for block %u without a delta type", index);

  /* Deltas that do not fit the block are ignored, as the SDKs do. */
  switch (block->kind)
    {
    case BLOCK_TEXT:
      if (g_str_equal (type, "text_delta"))
        {
          if ((str = get_string (delta, "text")) == NULL)
            return protocol_error (error, "text_delta for block %u without text", index);
          g_string_append (block->text, str);
          g_signal_emit (self, signals[TEXT_DELTA], 0, index, str);
        }
      else if (g_str_equal (type, "citations_delta"))
        {
          JsonNode *citation = json_object_get_member (delta, "citation");
          const char *raw_delta;
          const char *raw;
          gsize raw_delta_len;
          gsize raw_len;

          if (citation == NULL || !JSON_NODE_HOLDS_OBJECT (citation))
            return protocol_error (error, "citations_delta for block %u without a citation object", index);

          if (tally_json_raw_find_member (data, "delta", &raw_delta, &raw_delta_len) &&
              tally_json_raw_find_member (raw_delta, "citation", &raw, &raw_len))
            g_ptr_array_add (block->citations, g_strndup (raw, raw_len));
          else
            g_ptr_array_add (block->citations, json_to_string (citation, FALSE));
        }
      break;

    case BLOCK_THINKING:
      if (g_str_equal (type, "thinking_delta"))
        {
          if ((str = get_string (delta, "thinking")) == NULL)
            return protocol_error (error, "thinking_delta for block %u without thinking", index);
          g_string_append (block->text, str);
          g_signal_emit (self, signals[THINKING_DELTA], 0, index, str);
        }
      else if (g_str_equal (type, "signature_delta"))
        {
          if ((str = get_string (delta, "signature")) == NULL)
            return protocol_error (error, "signature_delta for block %u without signature", index);
          g_free (block->signature);
          block->signature = g_strdup (str);
        }
      break;

    case BLOCK_TOOL_USE:
      if (g_str_equal (type, "input_json_delta"))
        {
          if ((str = get_string (delta, "partial_json")) == NULL)
            return protocol_error (error, "input_json_delta for block %u without partial_json", index);
          g_string_append (block->text, str);
        }
      break;

    case BLOCK_OTHER:
      if (!is_known_delta_type (type))
        assign_delta_fields (block, delta);
      break;

    case BLOCK_REDACTED_THINKING:
    default:
      break;
    }

  return TRUE;
}

static gboolean
is_json_space_only (const GString *str)
{
  for (gsize i = 0; i < str->len; i++)
    {
      char c = str->str[i];

      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return FALSE;
    }

  return TRUE;
}

static gboolean
finish_tool_input (TallyMessageStream  *self,
                   Block               *block,
                   guint                index,
                   GError             **error)
{
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;

  if (is_json_space_only (block->text))
    {
      const char *raw;
      gsize raw_len;

      /* No input_json_delta carried anything: the input is the one of the
       * start event, which is {} in practice. */
      if (tally_json_raw_find_member (block->raw_start, "input", &raw, &raw_len) && raw[0] == '{')
        block->input = g_strndup (raw, raw_len);
      else
        block->input = g_strdup ("{}");
      return TRUE;
    }

  if (!json_parser_load_from_data (self->input_parser, block->text->str, block->text->len, &local_error))
    return protocol_error (error, "%s block %u has invalid input JSON: %s",
                           block->type, index, local_error->message);

  root = json_parser_get_root (self->input_parser);
  if (root != NULL && !JSON_NODE_HOLDS_OBJECT (root) && g_str_equal (block->type, "tool_use"))
    {
      /* Valid JSON that is not an object (an array, a string, null): the
       * model's mistake, not the server's. The message stays usable: the
       * input is echoed as {} (the API accepts only objects) and the agent
       * answers the call with an error saying what arrived
       * (docs/protocol.md §9.2). */
      block->invalid_input = g_strndup (block->text->str, block->text->len);
      block->input = g_strdup ("{}");
      return TRUE;
    }
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return protocol_error (error, "%s block %u has invalid input JSON: not a JSON object",
                           block->type, index);

  /* Keep the bytes exactly as the API sent them. */
  block->input = g_strndup (block->text->str, block->text->len);
  return TRUE;
}

static gboolean
handle_block_stop (TallyMessageStream  *self,
                   JsonObject          *object,
                   GError             **error)
{
  g_autofree char *type_copy = NULL;
  Block *block;
  guint index;

  block = lookup_block (self, object, "content_block_stop", &index, error);
  if (block == NULL)
    return FALSE;

  if (block->kind == BLOCK_TOOL_USE && !finish_tool_input (self, block, index, error))
    return FALSE;

  block->stopped = TRUE;

  type_copy = g_strdup (block->type);
  g_signal_emit (self, signals[BLOCK_STOPPED], 0, index, type_copy);
  return TRUE;
}

static void
set_nullable_string (char       **field,
                     JsonObject  *object,
                     const char  *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL)
    return;

  g_free (*field);
  *field = g_strdup (get_string (object, name));
}

static gboolean
handle_message_delta (TallyMessageStream  *self,
                      JsonObject          *object,
                      GError             **error)
{
  JsonObject *delta = get_object (object, "delta");
  JsonObject *usage = get_object (object, "usage");

  if (delta != NULL)
    {
      set_nullable_string (&self->stop_reason, delta, "stop_reason");
      set_nullable_string (&self->stop_sequence, delta, "stop_sequence");
    }

  if (usage != NULL)
    merge_usage (&self->usage, usage);

  return TRUE;
}

static gboolean
handle_error_event (TallyMessageStream  *self,
                    JsonObject          *object,
                    GError             **error)
{
  JsonObject *api_error = get_object (object, "error");
  const char *type = NULL;
  const char *message = NULL;

  if (api_error != NULL)
    {
      type = get_string (api_error, "type");
      message = get_string (api_error, "message");
    }

  g_free (self->error_type);
  self->error_type = g_strdup (type);

  g_set_error_literal (error, TALLY_API_ERROR, TALLY_API_ERROR_STREAM,
                       message != NULL ? message :
                       type != NULL ? type : "the API sent an error event without details");
  return FALSE;
}

static gboolean
apply_event_internal (TallyMessageStream  *self,
                      const char          *event_name,
                      const char          *data,
                      GError             **error)
{
  g_autoptr(GError) parse_error = NULL;
  JsonObject *object;
  JsonNode *root;
  const char *name;

  /* A keep-alive whose data does not matter. */
  if (g_strcmp0 (event_name, "ping") == 0)
    return TRUE;

  if (!json_parser_load_from_data (self->parser, data, -1, &parse_error))
    return protocol_error (error, "invalid JSON in %s event: %s",
                           event_name ? event_name : "unnamed", parse_error->message);

  root = json_parser_get_root (self->parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return protocol_error (error, "the data of %s event is not a JSON object",
                           event_name ? event_name : "an unnamed");
  if (strstr (data, "\\u") != NULL)
    make_strings_valid (root);

  object = json_node_get_object (root);
  name = event_name;
  if (name == NULL)
    name = get_string (object, "type");
  if (name == NULL)
    return protocol_error (error, "event without a name or a JSON type");

  if (g_str_equal (name, "ping"))
    return TRUE;

  if (g_str_equal (name, "error"))
    return handle_error_event (self, object, error);

  if (!self->started && !g_str_equal (name, "message_start"))
    return protocol_error (error, "unexpected %s event before message_start", name);

  if (g_str_equal (name, "message_start"))
    return handle_message_start (self, object, error);

  if (self->complete &&
      (g_str_equal (name, "content_block_start") ||
       g_str_equal (name, "content_block_delta") ||
       g_str_equal (name, "content_block_stop") ||
       g_str_equal (name, "message_delta") ||
       g_str_equal (name, "message_stop")))
    return protocol_error (error, "unexpected %s event after message_stop", name);

  if (g_str_equal (name, "content_block_delta"))
    return handle_block_delta (self, object, data, error);

  if (g_str_equal (name, "content_block_start"))
    return handle_block_start (self, object, data, error);

  if (g_str_equal (name, "content_block_stop"))
    return handle_block_stop (self, object, error);

  if (g_str_equal (name, "message_delta"))
    return handle_message_delta (self, object, error);

  if (g_str_equal (name, "message_stop"))
    {
      self->complete = TRUE;
      g_signal_emit (self, signals[MESSAGE_STOPPED], 0);
      return TRUE;
    }

  /* Unknown event types are ignored by the API's versioning policy; keep
   * them for inspection. */
  g_ptr_array_add (self->unknown_events, g_strdup (data));
  return TRUE;
}

static void
store_error (TallyMessageStream *self,
             const GError       *error)
{
  if (self->error == NULL)
    self->error = g_error_copy (error);
}

/**
 * tally_message_stream_apply_event:
 * @self: a #TallyMessageStream
 * @event_name: (nullable): the SSE `event:` name; when %NULL the `type` of
 *   the JSON data routes the event
 * @data: the event's data, one JSON object (trailing white space allowed)
 * @error: return location for a #GError
 *
 * Applies one server-sent event of a Messages API stream (docs/protocol.md
 * §9).
 * `ping` is ignored; unknown event types are kept (see
 * tally_message_stream_dup_unknown_events()); unknown block and delta types
 * are tolerated.
 *
 * The first failure is stored (tally_message_stream_get_error()); once there
 * is one, every later call fails with a copy of it.
 *
 * Returns: %TRUE on success. %FALSE with %TALLY_API_ERROR_STREAM for an
 *   `error` event (the message is the API's `error.message`, its
 *   `error.type` is available from tally_message_stream_get_error_type()),
 *   or %TALLY_API_ERROR_PROTOCOL for data that is not a JSON object, events
 *   before `message_start` or after `message_stop`, a second
 *   `message_start`, a `content_block_start` whose index is not the number
 *   of blocks so far, deltas or stops for unknown or stopped blocks, a
 *   tool block whose input is not valid JSON, or a `server_tool_use` block
 *   whose input is not an object. (A `tool_use` input that is valid JSON
 *   but not an object is the model's mistake and does not fail the stream;
 *   see tally_message_stream_get_block_invalid_input().)
 */
gboolean
tally_message_stream_apply_event (TallyMessageStream  *self,
                                  const char          *event_name,
                                  const char          *data,
                                  GError             **error)
{
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->error));
      return FALSE;
    }

  if (!apply_event_internal (self, event_name, data, &local_error))
    {
      store_error (self, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  return TRUE;
}

static void
decoder_event_cb (const TallySseEvent *event,
                  gpointer             user_data)
{
  TallyMessageStream *self = user_data;

  g_assert (TALLY_IS_MESSAGE_STREAM (self));

  if (self->error != NULL)
    return;

  tally_message_stream_apply_event (self, event->event, event->data, NULL);
}

/* Object */

static void
tally_message_stream_reset (TallyMessageStream *self)
{
  tally_sse_decoder_reset (self->decoder);
  g_clear_error (&self->error);
  g_clear_pointer (&self->error_type, g_free);
  g_clear_pointer (&self->message_id, g_free);
  g_clear_pointer (&self->model, g_free);
  g_clear_pointer (&self->stop_reason, g_free);
  g_clear_pointer (&self->stop_sequence, g_free);
  usage_init (&self->usage);
  g_ptr_array_set_size (self->blocks, 0);
  g_ptr_array_set_size (self->unknown_events, 0);
  self->started = FALSE;
  self->complete = FALSE;
}

static void
tally_message_stream_finalize (GObject *object)
{
  TallyMessageStream *self = (TallyMessageStream *)object;

  g_clear_pointer (&self->decoder, tally_sse_decoder_free);
  g_clear_object (&self->parser);
  g_clear_object (&self->input_parser);
  g_clear_error (&self->error);
  g_clear_pointer (&self->error_type, g_free);
  g_clear_pointer (&self->message_id, g_free);
  g_clear_pointer (&self->model, g_free);
  g_clear_pointer (&self->stop_reason, g_free);
  g_clear_pointer (&self->stop_sequence, g_free);
  g_clear_pointer (&self->blocks, g_ptr_array_unref);
  g_clear_pointer (&self->unknown_events, g_ptr_array_unref);

  G_OBJECT_CLASS (tally_message_stream_parent_class)->finalize (object);
}

static void
tally_message_stream_class_init (TallyMessageStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_message_stream_finalize;

  /**
   * TallyMessageStream::message-started:
   * @self: the #TallyMessageStream
   *
   * Emitted when the `message_start` event has been applied; the message id,
   * model and initial usage are then available.
   */
  signals[MESSAGE_STARTED] =
    g_signal_new ("message-started",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);

  /**
   * TallyMessageStream::block-started:
   * @self: the #TallyMessageStream
   * @index: the API's content block index (0-based)
   * @type: the block's `type`, e.g. "text", "thinking", "tool_use"
   *
   * Emitted when a `content_block_start` event has been applied.
   */
  signals[BLOCK_STARTED] =
    g_signal_new ("block-started",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::text-delta:
   * @self: the #TallyMessageStream
   * @index: the content block index of the text block
   * @text: the text appended by this `text_delta` (UTF-8, valid only
   *   during the emission)
   *
   * Emitted for every `text_delta`, after the text has been appended.
   */
  signals[TEXT_DELTA] =
    g_signal_new ("text-delta",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::thinking-delta:
   * @self: the #TallyMessageStream
   * @index: the content block index of the thinking block
   * @text: the `thinking` text appended by this `thinking_delta` (may be
   *   empty; valid only during the emission)
   *
   * Emitted for every `thinking_delta`, after the text has been appended.
   */
  signals[THINKING_DELTA] =
    g_signal_new ("thinking-delta",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::block-stopped:
   * @self: the #TallyMessageStream
   * @index: the content block index
   * @type: the block's `type`
   *
   * Emitted when a `content_block_stop` event has been applied; for tool
   * blocks the input has then been checked to be a JSON object.
   */
  signals[BLOCK_STOPPED] =
    g_signal_new ("block-stopped",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::message-stopped:
   * @self: the #TallyMessageStream
   *
   * Emitted when the `message_stop` event has been applied: the message is
   * complete.
   */
  signals[MESSAGE_STOPPED] =
    g_signal_new ("message-stopped",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);

  /**
   * TallyMessageStream::retry:
   * @self: the #TallyMessageStream
   * @attempt: the 1-based number of the attempt about to start (2 is the
   *   first retry)
   * @delay_ms: the wait before that attempt, in milliseconds
   * @status: the HTTP status of the failed attempt (200 for an `error`
   *   event inside a stream, 0 when no response arrived)
   * @error_type: (nullable): the API's `error.type` of the failure, if any
   *
   * Emitted by tally_message_stream_notify_retry() when the client decided
   * to retry the call.
   */
  signals[RETRY] =
    g_signal_new ("retry",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 4, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, STATIC_STRING);

  /**
   * TallyMessageStream::attempt-finished:
   * @self: the #TallyMessageStream
   * @attempt: the 1-based number of the attempt that finished
   * @status: its HTTP status (0 when no response arrived)
   * @request_id: (nullable): the `request-id` response header
   * @duration_ms: the wall-clock time of the attempt in milliseconds
   * @error: (nullable): why the attempt failed, or %NULL when it succeeded
   *
   * Emitted by tally_message_stream_notify_attempt_finished() once per HTTP
   * attempt.
   */
  signals[ATTEMPT_FINISHED] =
    g_signal_new ("attempt-finished",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_UINT, STATIC_STRING, G_TYPE_INT64,
                  G_TYPE_ERROR | G_SIGNAL_TYPE_STATIC_SCOPE);
}

static void
tally_message_stream_init (TallyMessageStream *self)
{
  self->decoder = tally_sse_decoder_new (decoder_event_cb, self);
  self->parser = json_parser_new ();
  self->input_parser = json_parser_new ();
  self->blocks = g_ptr_array_new_with_free_func (block_free);
  self->unknown_events = g_ptr_array_new_with_free_func (g_free);
  usage_init (&self->usage);
}

/**
 * tally_message_stream_new:
 *
 * Creates an accumulator for one logical API call. Call
 * tally_message_stream_begin_attempt() before feeding each HTTP attempt.
 *
 * Returns: (transfer full): a new #TallyMessageStream
 */
TallyMessageStream *
tally_message_stream_new (void)
{
  return g_object_new (TALLY_TYPE_MESSAGE_STREAM, NULL);
}

/**
 * tally_message_stream_begin_attempt:
 * @self: a #TallyMessageStream
 * @attempt: the 1-based number of the HTTP attempt that starts
 *
 * Forgets everything of the previous attempt — decoder state, message,
 * blocks, usage, stored error — and records @attempt.
 */
void
tally_message_stream_begin_attempt (TallyMessageStream *self,
                                    guint               attempt)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  tally_message_stream_reset (self);
  self->attempt = attempt;
}

/**
 * tally_message_stream_feed:
 * @self: a #TallyMessageStream
 * @data: (array length=len): the next bytes of a `text/event-stream` body
 * @len: the number of bytes
 *
 * Decodes @data and applies every complete event with
 * tally_message_stream_apply_event(). Signals are emitted synchronously.
 * After the first failure (see tally_message_stream_get_error()) the input
 * is ignored.
 */
void
tally_message_stream_feed (TallyMessageStream *self,
                           const guint8       *data,
                           gsize               len)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));
  g_return_if_fail (data != NULL || len == 0);

  if (self->error != NULL)
    return;

  tally_sse_decoder_feed (self->decoder, data, len);
}

/**
 * tally_message_stream_end_of_input:
 * @self: a #TallyMessageStream
 * @error: return location for a #GError
 *
 * Tells the accumulator that the body has ended. A last event that lacks
 * its terminating blank line is still applied (see tally_sse_decoder_finish());
 * when it cannot be applied, the body was cut inside that event and the
 * error is %TALLY_API_ERROR_INCOMPLETE, never %TALLY_API_ERROR_PROTOCOL.
 *
 * Returns: %TRUE when a complete message arrived (`message_stop` was
 *   applied) without error. Otherwise %FALSE with the stored error, or with
 *   %TALLY_API_ERROR_INCOMPLETE ("the stream ended before message_stop"),
 *   which is then stored, even when `message_delta` had arrived.
 */
gboolean
tally_message_stream_end_of_input (TallyMessageStream  *self,
                                   GError             **error)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->error == NULL)
    {
      tally_sse_decoder_finish (self->decoder);

      /* The last event had no terminating blank line. When it could not be
       * applied (typically JSON cut off in the middle), the connection was
       * cut inside an event: that is a cut stream, not a protocol
       * violation by the server (docs/protocol.md §9.2, §12.2). */
      if (g_error_matches (self->error, TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL))
        {
          g_autoptr(GError) cut = g_steal_pointer (&self->error);

          self->error = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE,
                                     "the stream ended in the middle of an event (%s)",
                                     cut->message);
        }
    }

  if (self->error == NULL && !self->complete)
    self->error = g_error_new_literal (TALLY_API_ERROR, TALLY_API_ERROR_INCOMPLETE,
                                       "the stream ended before message_stop");

  if (self->error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->error));
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_message_stream_get_error:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the first failure of the current
 *   attempt (domain %TALLY_API_ERROR), or %NULL
 */
const GError *
tally_message_stream_get_error (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->error;
}

/**
 * tally_message_stream_get_error_type:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the API's `error.type` of a stored
 *   %TALLY_API_ERROR_STREAM error (e.g. "overloaded_error"), or %NULL
 */
const char *
tally_message_stream_get_error_type (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->error_type;
}

/**
 * tally_message_stream_get_attempt:
 * @self: a #TallyMessageStream
 *
 * Returns: the 1-based attempt number given to
 *   tally_message_stream_begin_attempt(), or 0 before the first one
 */
guint
tally_message_stream_get_attempt (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), 0);

  return self->attempt;
}

/**
 * tally_message_stream_has_content:
 * @self: a #TallyMessageStream
 *
 * Whether any `content_block_start` arrived in this attempt. A failure
 * after content must not be retried silently.
 *
 * Returns: %TRUE once a content block has started
 */
gboolean
tally_message_stream_has_content (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);

  return self->blocks->len > 0;
}

/**
 * tally_message_stream_is_complete:
 * @self: a #TallyMessageStream
 *
 * Returns: %TRUE when `message_stop` was applied in this attempt
 */
gboolean
tally_message_stream_is_complete (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);

  return self->complete;
}

/**
 * tally_message_stream_get_message_id:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `id` of `message_start`
 *   ("msg_…"), or %NULL
 */
const char *
tally_message_stream_get_message_id (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->message_id;
}

/**
 * tally_message_stream_get_model:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `model` of `message_start`, or
 *   %NULL
 */
const char *
tally_message_stream_get_model (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->model;
}

/**
 * tally_message_stream_get_stop_reason:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `stop_reason` of `message_delta`
 *   (e.g. "end_turn", "tool_use", "max_tokens", "refusal"; docs/protocol.md
 *   §9.3),
 *   or %NULL while none arrived
 */
const char *
tally_message_stream_get_stop_reason (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->stop_reason;
}

/**
 * tally_message_stream_get_stop_sequence:
 * @self: a #TallyMessageStream
 *
 * Returns: (nullable) (transfer none): the `stop_sequence` of
 *   `message_delta` when the stop reason is "stop_sequence", else %NULL
 */
const char *
tally_message_stream_get_stop_sequence (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return self->stop_sequence;
}

/**
 * tally_message_stream_get_usage:
 * @self: a #TallyMessageStream
 *
 * Returns the token usage of this attempt: the `message_start` usage with
 * every field that `message_delta` carried overwritten (docs/protocol.md
 * §10.1).
 * Fields never reported are 0 (the cache_creation breakdown -1); @reported
 * says whether any usage object arrived.
 *
 * Returns: (transfer none): the usage, owned by @self
 */
const TallyUsage *
tally_message_stream_get_usage (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  return &self->usage;
}

/**
 * tally_message_stream_get_n_blocks:
 * @self: a #TallyMessageStream
 *
 * Returns: the number of content blocks started, stopped or not
 */
guint
tally_message_stream_get_n_blocks (TallyMessageStream *self)
{
  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), 0);

  return self->blocks->len;
}

static Block *
get_block (TallyMessageStream *self,
           guint               index)
{
  if (index >= self->blocks->len)
    return NULL;

  return g_ptr_array_index (self->blocks, index);
}

/**
 * tally_message_stream_get_block_type:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * Returns: (nullable) (transfer none): the block's `type`, or %NULL when
 *   there is no block @index
 */
const char *
tally_message_stream_get_block_type (TallyMessageStream *self,
                                     guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  block = get_block (self, index);
  return block ? block->type : NULL;
}

/**
 * tally_message_stream_block_is_stopped:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * Returns: %TRUE when block @index exists and its `content_block_stop`
 *   was applied
 */
gboolean
tally_message_stream_block_is_stopped (TallyMessageStream *self,
                                       guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), FALSE);

  block = get_block (self, index);
  return block != NULL && block->stopped;
}

/**
 * tally_message_stream_dup_block_json:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * Returns one block as JSON text, in the form described for
 * tally_message_stream_dup_content(), also for blocks that have not
 * stopped yet (a debugging aid): an unstopped tool block shows `"input":{}`
 * and its raw input so far as a `"partial_json"` string.
 *
 * Returns: (nullable) (transfer full): the JSON text, or %NULL when there
 *   is no block @index
 */
char *
tally_message_stream_dup_block_json (TallyMessageStream *self,
                                     guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  block = get_block (self, index);
  return block ? block_to_json (block) : NULL;
}

/**
 * tally_message_stream_get_block_invalid_input:
 * @self: a #TallyMessageStream
 * @index: a content block index
 *
 * A stopped `tool_use` block whose input was valid JSON but not an object
 * (an array, a string, a number, `null`) does not fail the stream: its input
 * is echoed as `{}` and the text that arrived is kept here, so the agent can
 * answer the call with an error that says what was wrong.
 *
 * Returns: (transfer none) (nullable): the input JSON text as received, or
 *   %NULL when the block's input was an object (or @index is not a stopped
 *   `tool_use` block)
 */
const char *
tally_message_stream_get_block_invalid_input (TallyMessageStream *self,
                                              guint               index)
{
  Block *block;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  block = get_block (self, index);
  return block != NULL ? block->invalid_input : NULL;
}

/**
 * tally_message_stream_dup_content:
 * @self: a #TallyMessageStream
 *
 * Returns the message content exactly as it must be echoed to the API as
 * the assistant turn of the next request (docs/protocol.md §4): one JSON
 * object text per stopped block, in index order. Blocks that never got their
 * `content_block_stop` (a cut stream, a `max_tokens` tool call) are left
 * out, and so are empty text blocks, which the API rejects.
 *
 * - text: `{"type":"text","text":…}`, plus `"citations":[…]` when any;
 * - thinking: `{"type":"thinking","thinking":…,"signature":…}`, the strings
 *   byte-exact (also when `thinking` is "");
 * - tool_use and server_tool_use: `{"type":…,"id":…,"name":…,"input":…}`
 *   where input is the concatenated `partial_json` exactly as received (or
 *   the start event's input, `{}`, when there was none), plus the start
 *   block's `"caller"` when it had one;
 * - redacted_thinking and every other block type: the `content_block` of
 *   the start event verbatim, or re-serialised with the fields of its
 *   deltas (e.g. `compaction_delta`) assigned.
 *
 * Returns: (transfer full) (element-type utf8): the block JSON texts; free
 *   with g_ptr_array_unref()
 */
GPtrArray *
tally_message_stream_dup_content (TallyMessageStream *self)
{
  GPtrArray *content;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  content = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);

      if (!block->stopped)
        continue;
      if (block->kind == BLOCK_TEXT && block->text->len == 0)
        continue;

      g_ptr_array_add (content, block_to_json (block));
    }

  return content;
}

/**
 * tally_message_stream_dup_unknown_events:
 * @self: a #TallyMessageStream
 *
 * Returns the data of the events of this attempt whose type is unknown,
 * in stream order, verbatim.
 *
 * Returns: (transfer full) (element-type utf8): JSON texts; free with
 *   g_ptr_array_unref()
 */
GPtrArray *
tally_message_stream_dup_unknown_events (TallyMessageStream *self)
{
  GPtrArray *events;

  g_return_val_if_fail (TALLY_IS_MESSAGE_STREAM (self), NULL);

  events = g_ptr_array_new_full (self->unknown_events->len, g_free);
  for (guint i = 0; i < self->unknown_events->len; i++)
    g_ptr_array_add (events, g_strdup (g_ptr_array_index (self->unknown_events, i)));

  return events;
}

/**
 * tally_message_stream_notify_retry:
 * @self: a #TallyMessageStream
 * @attempt: the 1-based number of the attempt about to start
 * @delay_ms: the wait before it, in milliseconds
 * @status: the HTTP status of the failed attempt (200 for an `error` event
 *   inside a stream, 0 when no response arrived)
 * @error_type: (nullable): the API's `error.type` of the failure
 *
 * Emits #TallyMessageStream::retry. Called by the client.
 */
void
tally_message_stream_notify_retry (TallyMessageStream *self,
                                   guint               attempt,
                                   guint               delay_ms,
                                   guint               status,
                                   const char         *error_type)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  g_signal_emit (self, signals[RETRY], 0, attempt, delay_ms, status, error_type);
}

/**
 * tally_message_stream_notify_attempt_finished:
 * @self: a #TallyMessageStream
 * @status: the HTTP status of the attempt (0 when no response arrived)
 * @request_id: (nullable): its `request-id` response header
 * @duration_ms: its wall-clock duration in milliseconds
 * @error: (nullable): why it failed, or %NULL on success
 *
 * Emits #TallyMessageStream::attempt-finished with the current attempt
 * number. Called by the client once per HTTP attempt.
 */
void
tally_message_stream_notify_attempt_finished (TallyMessageStream *self,
                                              guint               status,
                                              const char         *request_id,
                                              gint64              duration_ms,
                                              const GError       *error)
{
  g_return_if_fail (TALLY_IS_MESSAGE_STREAM (self));

  g_signal_emit (self, signals[ATTEMPT_FINISHED], 0,
                 self->attempt, status, request_id, duration_ms, error);
}
