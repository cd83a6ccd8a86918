/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-message-stream-private.h"

#include <string.h>

#include "tally-api-error.h"
#include "tally-json-raw.h"

/*
 * Applying the events of a Messages API stream to #TallyMessageStream
 * (docs/protocol.md §9): content blocks accumulate by index, usage merges
 * field by field (docs/protocol.md §10.1), and the first violation of the
 * event grammar becomes the stream's error.
 */

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

/* Usage before anything was reported: the cache breakdowns unknown. */
void
tally_message_stream_usage_init (TallyUsage *usage)
{
  memset (usage, 0, sizeof *usage);
  usage->cache_creation_5m = -1;
  usage->cache_creation_1h = -1;
}

/* Reading members of an event */

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

/* Blocks */

void
tally_message_stream_block_free (gpointer data)
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

/* Whether the JSON text @data holds the escape `\u0000` in a string.
 * json-glib keeps strings NUL-terminated, so such a string would come out
 * cut at the NUL: a thinking block echoed shorter than it was signed, a
 * tool input run cut short. An escaped backslash (`\\u0000`, text) is
 * not one. */
static gboolean
has_escaped_nul (const char *data)
{
  for (const char *p = strchr (data, '\\'); p != NULL; p = strchr (p, '\\'))
    {
      if (p[1] == 'u' && strncmp (p + 2, "0000", 4) == 0)
        return TRUE;
      if (p[1] == '\0')
        break;
      p += 2;
    }
  return FALSE;
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

/* The largest token count a usage member may hold: far above any context
 * window, far below where a cost in dollars loses precision. */
#define TOKEN_COUNT_MAX G_GINT64_CONSTANT (1000000000000)

/* Reads the token count @name of a usage object into @value. An absent or
 * null member leaves @value as it is; any other member must be a whole
 * number from 0 to TOKEN_COUNT_MAX. A negative or absurd count would make
 * the receipt and the spend cap wrong, so it fails the stream rather than
 * being ignored (docs/protocol.md §10.1). */
static gboolean
read_token_count (JsonObject  *object,
                  const char  *event_name,
                  const char  *name,
                  gint64      *value,
                  GError     **error)
{
  JsonNode *node = json_object_get_member (object, name);
  char number[G_ASCII_DTOSTR_BUF_SIZE];
  const char *described;
  gint64 count;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;

  if (get_int (object, name, &count) && count >= 0 && count <= TOKEN_COUNT_MAX)
    {
      *value = count;
      return TRUE;
    }

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64)
    described = g_ascii_formatd (number, sizeof number, "%.0f", (double) json_node_get_int (node));
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_DOUBLE)
    described = g_ascii_formatd (number, sizeof number, "%g", json_node_get_double (node));
  else
    described = tally_json_node_describe (node);
  return protocol_error (error, "%s event whose usage %s is not a token count (a whole number from 0 to "
                         "%" G_GINT64_FORMAT "): %s", event_name, name, TOKEN_COUNT_MAX, described);
}

/* Merges a usage object into @usage: every member given overwrites (the
 * counts are cumulative, docs/protocol.md §10.1). Nothing is merged when a
 * member is not a token count. */
static gboolean
merge_usage (TallyUsage  *usage,
             JsonObject  *object,
             const char  *event_name,
             GError     **error)
{
  TallyUsage merged = *usage;
  JsonObject *cache_creation;

  if (!read_token_count (object, event_name, "input_tokens", &merged.input_tokens, error) ||
      !read_token_count (object, event_name, "output_tokens", &merged.output_tokens, error) ||
      !read_token_count (object, event_name, "cache_creation_input_tokens", &merged.cache_creation_input_tokens, error) ||
      !read_token_count (object, event_name, "cache_read_input_tokens", &merged.cache_read_input_tokens, error))
    return FALSE;

  cache_creation = tally_json_object_get_object (object, "cache_creation");
  if (cache_creation != NULL &&
      (!read_token_count (cache_creation, event_name, "ephemeral_5m_input_tokens", &merged.cache_creation_5m, error) ||
       !read_token_count (cache_creation, event_name, "ephemeral_1h_input_tokens", &merged.cache_creation_1h, error)))
    return FALSE;

  merged.reported = TRUE;
  *usage = merged;
  return TRUE;
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

  message = tally_json_object_get_object (object, "message");
  if (message == NULL)
    return protocol_error (error, "message_start event without a message object");

  g_free (self->message_id);
  self->message_id = g_strdup (tally_json_object_get_string (message, "id", NULL));
  g_free (self->model);
  self->model = g_strdup (tally_json_object_get_string (message, "model", NULL));

  usage = tally_json_object_get_object (message, "usage");
  if (usage != NULL && !merge_usage (&self->usage, usage, "message_start", error))
    return FALSE;

  self->started = TRUE;

  g_signal_emit (self, tally_message_stream_signals[MESSAGE_STARTED], 0);
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
  type = tally_json_object_get_string (start, "type", NULL);
  if (type == NULL)
    return protocol_error (error, "content block %u has no type", index);

  block = g_new0 (Block, 1);
  block->type = g_strdup (type);
  block->kind = block_kind_for_type (type);
  block->start = json_object_ref (start);
  block->raw_start = tally_message_stream_dup_raw_member (data, "content_block", start_node);
  block->text = g_string_new (NULL);

  switch (block->kind)
    {
    case BLOCK_TEXT:
      {
        JsonNode *citations;

        block->citations = g_ptr_array_new_with_free_func (g_free);
        if ((str = tally_json_object_get_string (start, "text", NULL)) != NULL)
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
      if ((str = tally_json_object_get_string (start, "thinking", NULL)) != NULL)
        g_string_append (block->text, str);
      str = tally_json_object_get_string (start, "signature", NULL);
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
  g_signal_emit (self, tally_message_stream_signals[BLOCK_STARTED], 0, index, type_copy);
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

  delta = tally_json_object_get_object (object, "delta");
  if (delta == NULL)
    return protocol_error (error, "content_block_delta event for block %u without a delta object", index);

  type = tally_json_object_get_string (delta, "type", NULL);
  if (type == NULL)
    return protocol_error (error, "content_block_delta event for block %u without a delta type", index);

  /* Deltas that do not fit the block are ignored, as the SDKs do. */
  switch (block->kind)
    {
    case BLOCK_TEXT:
      if (g_str_equal (type, "text_delta"))
        {
          if ((str = tally_json_object_get_string (delta, "text", NULL)) == NULL)
            return protocol_error (error, "text_delta for block %u without text", index);
          g_string_append (block->text, str);
          g_signal_emit (self, tally_message_stream_signals[TEXT_DELTA], 0, index, str);
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
          if ((str = tally_json_object_get_string (delta, "thinking", NULL)) == NULL)
            return protocol_error (error, "thinking_delta for block %u without thinking", index);
          g_string_append (block->text, str);
          g_signal_emit (self, tally_message_stream_signals[THINKING_DELTA], 0, index, str);
        }
      else if (g_str_equal (type, "signature_delta"))
        {
          if ((str = tally_json_object_get_string (delta, "signature", NULL)) == NULL)
            return protocol_error (error, "signature_delta for block %u without signature", index);
          g_free (block->signature);
          block->signature = g_strdup (str);
        }
      break;

    case BLOCK_TOOL_USE:
      if (g_str_equal (type, "input_json_delta"))
        {
          if ((str = tally_json_object_get_string (delta, "partial_json", NULL)) == NULL)
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

  /* A string with a NUL would reach the tool cut at it (json-glib keeps
   * strings NUL-terminated): the call is echoed as sent but not run, and
   * the agent tells the model why (docs/protocol.md §9.2). */
  if (g_str_equal (block->type, "tool_use") && has_escaped_nul (block->input))
    block->invalid_input = g_strdup (block->input);
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
  g_signal_emit (self, tally_message_stream_signals[BLOCK_STOPPED], 0, index, type_copy);
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
  *field = g_strdup (tally_json_object_get_string (object, name, NULL));
}

static gboolean
handle_message_delta (TallyMessageStream  *self,
                      JsonObject          *object,
                      GError             **error)
{
  JsonObject *delta = tally_json_object_get_object (object, "delta");
  JsonObject *usage = tally_json_object_get_object (object, "usage");

  if (usage != NULL && !merge_usage (&self->usage, usage, "message_delta", error))
    return FALSE;

  if (delta != NULL)
    {
      set_nullable_string (&self->stop_reason, delta, "stop_reason");
      set_nullable_string (&self->stop_sequence, delta, "stop_sequence");
    }

  return TRUE;
}

static gboolean
handle_error_event (TallyMessageStream  *self,
                    JsonObject          *object,
                    GError             **error)
{
  JsonObject *api_error = tally_json_object_get_object (object, "error");
  const char *type = NULL;
  const char *message = NULL;

  if (api_error != NULL)
    {
      type = tally_json_object_get_string (api_error, "type", NULL);
      message = tally_json_object_get_string (api_error, "message", NULL);
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
  gboolean has_u_escape;

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
  /* Only a `\u` escape can make a string that is not valid UTF-8 or
   * that holds a NUL: most events have none, and skip both looks. */
  has_u_escape = strstr (data, "\\u") != NULL;
  if (has_u_escape)
    tally_message_stream_make_strings_valid (root);

  object = json_node_get_object (root);
  name = event_name;
  if (name == NULL)
    name = tally_json_object_get_string (object, "type", NULL);
  if (name == NULL)
    return protocol_error (error, "event without a name or a JSON type");

  if (g_str_equal (name, "ping"))
    return TRUE;

  if (g_str_equal (name, "error"))
    return handle_error_event (self, object, error);

  if (has_u_escape && has_escaped_nul (data))
    return protocol_error (error, "the %s event holds a NUL character (\\u0000), which Tally cannot keep "
                           "unchanged; the reply was not used", name);

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
      /* Every block ends with its content_block_stop before the message
       * does (docs/protocol.md §9.1), but for the block that max_tokens
       * or the context window cut off, which is dropped (the sdk_py_incomplete_partial_json
       * fixture). Any other open block fails the stream: a tool block
       * without its stop has no checked input, and its call would be lost
       * without a word. */
      for (guint i = 0; i < self->blocks->len; i++)
        {
          Block *block = g_ptr_array_index (self->blocks, i);

          if (!block->stopped && g_strcmp0 (self->stop_reason, "max_tokens") != 0 &&
              g_strcmp0 (self->stop_reason, "model_context_window_exceeded") != 0)
            return protocol_error (error, "message_stop event while content block %u has had no "
                                   "content_block_stop", i);
        }
      self->complete = TRUE;
      g_signal_emit (self, tally_message_stream_signals[MESSAGE_STOPPED], 0);
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
 *   of blocks so far, deltas or stops for unknown or stopped blocks,
 *   `message_stop` while a block has had no `content_block_stop` (but
 *   when the stop reason is `max_tokens` or
 *   `model_context_window_exceeded`), a
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

