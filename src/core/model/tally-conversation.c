/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-conversation"

#include "config.h"

#include <string.h>

#include "tally-conversation.h"
#include "tally-json.h"
#include "tally-json-raw.h"

/*
 * The conversation is the `messages` array sent to the API. Each content
 * block is kept as the JSON text it had when it was received or made, and
 * the request body is assembled from those texts by concatenation, so an
 * assistant turn goes back to the API exactly as it came (thinking text and
 * signatures, redacted thinking, tool inputs): nothing is re-serialised on
 * the way.
 */

typedef struct {
  char      *role;
  GPtrArray *blocks;   /* JSON texts */
} Message;

struct _TallyConversation
{
  GObject    parent_instance;

  GPtrArray *messages; /* Message* */
};

G_DEFINE_FINAL_TYPE (TallyConversation, tally_conversation, G_TYPE_OBJECT)

static void
message_free (gpointer data)
{
  Message *message = data;

  g_free (message->role);
  g_ptr_array_unref (message->blocks);
  g_free (message);
}

static Message *
message_new (const char *role)
{
  Message *message = g_new0 (Message, 1);

  message->role = g_strdup (role);
  message->blocks = g_ptr_array_new_with_free_func (g_free);

  return message;
}

static void
tally_conversation_finalize (GObject *object)
{
  TallyConversation *self = (TallyConversation *)object;

  g_clear_pointer (&self->messages, g_ptr_array_unref);

  G_OBJECT_CLASS (tally_conversation_parent_class)->finalize (object);
}

static void
tally_conversation_class_init (TallyConversationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tally_conversation_finalize;
}

static void
tally_conversation_init (TallyConversation *self)
{
  self->messages = g_ptr_array_new_with_free_func (message_free);
}

/**
 * tally_conversation_new:
 *
 * Creates an empty conversation.
 *
 * Returns: (transfer full): a new #TallyConversation
 */
TallyConversation *
tally_conversation_new (void)
{
  return g_object_new (TALLY_TYPE_CONVERSATION, NULL);
}

/**
 * tally_conversation_get_n_messages:
 * @self: a #TallyConversation
 *
 * Returns: the number of messages
 */
guint
tally_conversation_get_n_messages (TallyConversation *self)
{
  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), 0);

  return self->messages->len;
}

/**
 * tally_conversation_get_role:
 * @self: a #TallyConversation
 * @index: a message index
 *
 * Returns: (transfer none): `"user"` or `"assistant"`
 */
const char *
tally_conversation_get_role (TallyConversation *self,
                             guint              index)
{
  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), NULL);
  g_return_val_if_fail (index < self->messages->len, NULL);

  return ((Message *)g_ptr_array_index (self->messages, index))->role;
}

/**
 * tally_conversation_get_blocks:
 * @self: a #TallyConversation
 * @index: a message index
 *
 * Returns: (transfer none) (element-type utf8): the message's content
 *   blocks as JSON texts
 */
GPtrArray *
tally_conversation_get_blocks (TallyConversation *self,
                               guint              index)
{
  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), NULL);
  g_return_val_if_fail (index < self->messages->len, NULL);

  return ((Message *)g_ptr_array_index (self->messages, index))->blocks;
}

static void
append_message_json (GString *out,
                     Message *message)
{
  g_autofree char *role = NULL;
  JsonNode *node = json_node_alloc ();

  json_node_init_string (node, message->role);
  role = tally_json_to_string (node, FALSE);
  json_node_unref (node);

  g_string_append (out, "{\"role\":");
  g_string_append (out, role);
  g_string_append (out, ",\"content\":[");
  for (guint i = 0; i < message->blocks->len; i++)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append (out, g_ptr_array_index (message->blocks, i));
    }
  g_string_append (out, "]}");
}

/**
 * tally_conversation_dup_message_json:
 * @self: a #TallyConversation
 * @index: a message index
 *
 * Returns: (transfer full): the message as `{"role":…,"content":[…]}`,
 *   its blocks byte-identical to how they are stored
 */
char *
tally_conversation_dup_message_json (TallyConversation *self,
                                     guint              index)
{
  GString *out;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), NULL);
  g_return_val_if_fail (index < self->messages->len, NULL);

  out = g_string_new (NULL);
  append_message_json (out, g_ptr_array_index (self->messages, index));
  return g_string_free (out, FALSE);
}

/**
 * tally_conversation_dup_messages_json:
 * @self: a #TallyConversation
 *
 * Returns: (transfer full): the whole `messages` array as JSON text
 */
char *
tally_conversation_dup_messages_json (TallyConversation *self)
{
  GString *out;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), NULL);

  out = g_string_new ("[");
  for (guint i = 0; i < self->messages->len; i++)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      append_message_json (out, g_ptr_array_index (self->messages, i));
    }
  g_string_append_c (out, ']');

  return g_string_free (out, FALSE);
}

static Message *
last_message (TallyConversation *self)
{
  if (self->messages->len == 0)
    return NULL;
  return g_ptr_array_index (self->messages, self->messages->len - 1);
}

/* The user message at the end, which user content goes into: the last
 * message when it is the user's, else a new one appended after it (the
 * assistant's, or none), so that roles keep alternating. */
static Message *
ensure_user_message (TallyConversation *self)
{
  Message *message = last_message (self);

  if (message == NULL || !g_str_equal (message->role, "user"))
    {
      message = message_new ("user");
      g_ptr_array_add (self->messages, message);
    }

  return message;
}

/**
 * tally_conversation_append_assistant:
 * @self: a #TallyConversation
 * @blocks: (element-type utf8): the completed message's content blocks as
 *   JSON texts, e.g. from tally_message_stream_dup_content()
 *
 * Appends an assistant message holding copies of @blocks, in order. An empty
 * @blocks adds nothing: the API accepts no empty assistant message, and the
 * next user text then joins the previous user message so roles alternate.
 */
void
tally_conversation_append_assistant (TallyConversation *self,
                                     GPtrArray         *blocks)
{
  Message *message;

  g_return_if_fail (TALLY_IS_CONVERSATION (self));
  g_return_if_fail (blocks != NULL);

  if (blocks->len == 0)
    return;

  message = message_new ("assistant");
  for (guint i = 0; i < blocks->len; i++)
    g_ptr_array_add (message->blocks, g_strdup (g_ptr_array_index (blocks, i)));
  g_ptr_array_add (self->messages, message);
}

/**
 * tally_conversation_append_message_json:
 * @self: a #TallyConversation
 * @role: `"user"` or `"assistant"`
 * @content_json: the message's content as a JSON array text
 * @error: return location for a #GError
 *
 * Appends a stored message (used when a session is resumed). Each element of
 * the array is kept as the exact slice of @content_json that holds it, so a
 * stored assistant turn is echoed byte for byte.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_INVALID_DATA when
 *   @content_json is not a JSON array of objects or @role is unknown
 */
gboolean
tally_conversation_append_message_json (TallyConversation  *self,
                                        const char         *role,
                                        const char         *content_json,
                                        GError            **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  Message *message;
  const char *p;
  JsonNode *root;
  JsonArray *array;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), FALSE);

  if (g_strcmp0 (role, "user") != 0 && g_strcmp0 (role, "assistant") != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "Unknown message role “%s”", role ? role : "(null)");
      return FALSE;
    }

  if (!json_parser_load_from_data (parser, content_json, -1, error))
    return FALSE;
  root = json_parser_get_root (parser);
  if (!JSON_NODE_HOLDS_ARRAY (root))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "Message content must be a JSON array");
      return FALSE;
    }
  array = json_node_get_array (root);

  /* Split the array text into its top-level elements by scanning for
   * object boundaries outside strings. The parse above guarantees the text
   * is valid JSON, so the scan only has to track nesting and strings. */
  message = message_new (role);
  p = strchr (content_json, '[');
  if (p != NULL)
    p++;
  while (p != NULL && *p != '\0')
    {
      const char *start;
      int depth = 0;
      gboolean in_string = FALSE;

      while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
        p++;
      if (*p != '{')
        break;

      start = p;
      for (; *p != '\0'; p++)
        {
          if (in_string)
            {
              if (*p == '\\' && p[1] != '\0')
                p++;
              else if (*p == '"')
                in_string = FALSE;
            }
          else if (*p == '"')
            in_string = TRUE;
          else if (*p == '{' || *p == '[')
            depth++;
          else if (*p == '}' || *p == ']')
            {
              depth--;
              if (depth == 0)
                {
                  p++;
                  break;
                }
            }
        }
      g_ptr_array_add (message->blocks, g_strndup (start, p - start));
    }

  if (message->blocks->len != json_array_get_length (array))
    {
      message_free (message);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "Message content must be an array of content block objects");
      return FALSE;
    }

  g_ptr_array_add (self->messages, message);
  return TRUE;
}

static gboolean
block_is_tool_result (const char *block_json)
{
  return strstr (block_json, "\"type\":\"tool_result\"") != NULL &&
         g_str_has_prefix (block_json, "{\"type\":\"tool_result\"");
}

/**
 * tally_conversation_add_user_block:
 * @self: a #TallyConversation
 * @block_json: a content block as JSON text
 *
 * Adds a block to the user message at the end of the conversation, starting
 * a new user message when the last message is the assistant's (or there is
 * none). Consecutive user content thus stays in one message, so roles keep
 * alternating even after a failed turn.
 */
void
tally_conversation_add_user_block (TallyConversation *self,
                                   const char        *block_json)
{
  Message *message;

  g_return_if_fail (TALLY_IS_CONVERSATION (self));
  g_return_if_fail (block_json != NULL);

  message = ensure_user_message (self);

  g_ptr_array_add (message->blocks, g_strdup (block_json));
}

static char *
text_block_json (const char *text)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text");
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);

  return tally_json_to_string (node, FALSE);
}

/**
 * tally_conversation_add_user_text:
 * @self: a #TallyConversation
 * @text: the text; an empty text adds nothing (the API rejects empty text
 *   blocks)
 *
 * Adds a `text` block to the user message at the end (see
 * tally_conversation_add_user_block()).
 */
void
tally_conversation_add_user_text (TallyConversation *self,
                                  const char        *text)
{
  g_autofree char *json = NULL;

  g_return_if_fail (TALLY_IS_CONVERSATION (self));
  g_return_if_fail (text != NULL);

  if (*text == '\0')
    return;

  json = text_block_json (text);
  tally_conversation_add_user_block (self, json);
}

/**
 * tally_conversation_add_tool_result:
 * @self: a #TallyConversation
 * @tool_use_id: the `id` of the `tool_use` block answered
 * @content: the result text; for an error, a non-empty message
 * @is_error: whether the tool failed or was refused
 *
 * Adds a `tool_result` block to the user message that follows the assistant
 * message holding the `tool_use`. Tool results are kept in front of any other
 * block of that message, as the API requires (docs/protocol.md §5.1).
 */
void
tally_conversation_add_tool_result (TallyConversation *self,
                                    const char        *tool_use_id,
                                    const char        *content,
                                    gboolean           is_error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *json = NULL;
  Message *message;
  guint position = 0;

  g_return_if_fail (TALLY_IS_CONVERSATION (self));
  g_return_if_fail (tool_use_id != NULL);

  if (is_error && (content == NULL || *content == '\0'))
    content = "The tool failed without a message.";

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "tool_result");
  json_builder_set_member_name (builder, "tool_use_id");
  json_builder_add_string_value (builder, tool_use_id);
  if (content != NULL && *content != '\0')
    {
      json_builder_set_member_name (builder, "content");
      json_builder_add_string_value (builder, content);
    }
  if (is_error)
    {
      json_builder_set_member_name (builder, "is_error");
      json_builder_add_boolean_value (builder, TRUE);
    }
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  json = tally_json_to_string (node, FALSE);

  message = ensure_user_message (self);

  while (position < message->blocks->len &&
         block_is_tool_result (g_ptr_array_index (message->blocks, position)))
    position++;
  g_ptr_array_insert (message->blocks, position, g_steal_pointer (&json));
}

static JsonObject *
parse_block (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;

  if (!json_parser_load_from_data (parser, json, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return json_object_ref (json_node_get_object (root));
}

/**
 * tally_conversation_dup_pending_tool_uses:
 * @self: a #TallyConversation
 *
 * Finds the `tool_use` blocks of the latest assistant message that have no
 * `tool_result` yet in the user message after it.
 *
 * Returns: (transfer full) (element-type JsonObject): the parsed `tool_use`
 *   blocks in order (members `id`, `name`, `input`)
 */
GPtrArray *
tally_conversation_dup_pending_tool_uses (TallyConversation *self)
{
  GPtrArray *pending = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  g_autoptr(GHashTable) answered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  Message *assistant = NULL;
  Message *user = NULL;
  gint last;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), pending);

  last = (gint)self->messages->len - 1;
  if (last < 0)
    return pending;

  if (g_str_equal (((Message *)g_ptr_array_index (self->messages, last))->role, "assistant"))
    assistant = g_ptr_array_index (self->messages, last);
  else if (last >= 1)
    {
      user = g_ptr_array_index (self->messages, last);
      assistant = g_ptr_array_index (self->messages, last - 1);
    }

  if (assistant == NULL)
    return pending;

  for (guint i = 0; user != NULL && i < user->blocks->len; i++)
    {
      g_autoptr(JsonObject) block = parse_block (g_ptr_array_index (user->blocks, i));

      if (block != NULL &&
          g_strcmp0 (json_object_get_string_member_with_default (block, "type", NULL), "tool_result") == 0)
        g_hash_table_add (answered,
                          g_strdup (json_object_get_string_member_with_default (block, "tool_use_id", "")));
    }

  for (guint i = 0; i < assistant->blocks->len; i++)
    {
      g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (assistant->blocks, i));
      const char *id;

      if (block == NULL)
        continue;

      id = json_object_get_string_member_with_default (block, "id", "");
      if (!g_hash_table_contains (answered, id))
        g_ptr_array_add (pending, g_steal_pointer (&block));
    }

  return pending;
}

/**
 * tally_conversation_orphan_message:
 * @reason: why the tool call went unanswered
 *
 * Returns: (transfer full): the `is_error` text Tally sends for a `tool_use`
 *   left without a result by a cancel or a crash (words the model reads)
 */
char *
tally_conversation_orphan_message (TallyOrphanReason reason)
{
  if (reason == TALLY_ORPHAN_INTERRUPTED)
    return g_strdup ("This tool call was interrupted while it was running, because the analyst "
                     "stopped the turn or Tally closed. Its result is unknown and any effect may be "
                     "partial. Do not assume a result; check before relying on it.");

  return g_strdup ("This tool call never ran: the turn was stopped before the tool started. "
                   "Nothing was executed. Do not assume a result.");
}

/**
 * tally_conversation_repair:
 * @self: a #TallyConversation
 * @reasons: (nullable) (element-type utf8 gint): maps a `tool_use` id to a
 *   #TallyOrphanReason (stored with GINT_TO_POINTER); ids not in it count as
 *   %TALLY_ORPHAN_NEVER_STARTED
 *
 * Answers every `tool_use` of the latest assistant message that has no
 * result with an `is_error` result saying what happened, so the next request
 * satisfies the API's pairing rule (docs/protocol.md §5.2).
 *
 * Returns: the number of results added
 */
guint
tally_conversation_repair (TallyConversation *self,
                           GHashTable        *reasons)
{
  g_autoptr(GPtrArray) pending = NULL;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), 0);

  pending = tally_conversation_dup_pending_tool_uses (self);
  for (guint i = 0; i < pending->len; i++)
    {
      JsonObject *block = g_ptr_array_index (pending, i);
      const char *id = json_object_get_string_member_with_default (block, "id", "");
      TallyOrphanReason reason = TALLY_ORPHAN_NEVER_STARTED;
      g_autofree char *message = NULL;

      if (reasons != NULL)
        reason = GPOINTER_TO_INT (g_hash_table_lookup (reasons, id));
      message = tally_conversation_orphan_message (reason);
      tally_conversation_add_tool_result (self, id, message, TRUE);
    }

  return pending->len;
}

/* Tool use ids (docs/protocol.md §5.3): the API refuses a conversation in
 * which two tool_use blocks share an id, so Tally never lets one in. */

/**
 * tally_conversation_parse_tool_use:
 * @block_json: a content block as JSON text, as the conversation and
 *   tally_message_stream_dup_content() hold them
 *
 * Reads a content block when it is a `tool_use`: the one test of the
 * conversation, the agent's tool runs and its duplicate-id check for what
 * counts as a tool call.
 *
 * Returns: (transfer full) (nullable): the parsed block (members `id`,
 *   `name`, `input`), or %NULL when @block_json is not a JSON object whose
 *   `type` is the string `"tool_use"`
 */
JsonObject *
tally_conversation_parse_tool_use (const char *block_json)
{
  g_autoptr(JsonObject) block = NULL;

  g_return_val_if_fail (block_json != NULL, NULL);

  block = parse_block (block_json);
  if (block == NULL ||
      g_strcmp0 (json_object_get_string_member_with_default (block, "type", NULL), "tool_use") != 0)
    return NULL;

  return g_steal_pointer (&block);
}

static const char *
block_id (JsonObject *block,
          const char *member)
{
  JsonNode *node = json_object_get_member (block, member);

  if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
    return "";
  return json_node_get_string (node);
}

/* A new id for a call that repeated @id: "<id>_dup<N>" with the smallest N
 * not in @taken (ids keep to the API's letters, digits, _ and -). */
static char *
make_unique_id (GHashTable *taken,
                const char *id)
{
  for (guint n = 1; ; n++)
    {
      char *candidate = *id != '\0' ? g_strdup_printf ("%s_dup%u", id, n)
                                     : g_strdup_printf ("toolu_tally_dup%u", n);

      if (!g_hash_table_contains (taken, candidate))
        return candidate;
      g_free (candidate);
    }
}

/* Returns @block_json with member @member set to the string @value, every
 * other byte kept. */
static char *
with_string_member (const char *block_json,
                    const char *member,
                    const char *value)
{
  g_autoptr(JsonNode) string = json_node_init_string (json_node_alloc (), value);
  g_autofree char *quoted = tally_json_to_string (string, FALSE);
  char *replaced = tally_json_raw_replace_member (block_json, member, quoted);
  g_autoptr(JsonObject) block = NULL;
  g_autoptr(JsonNode) node = NULL;

  if (replaced != NULL)
    return replaced;

  /* A member written with escapes: re-serialise (never assistant thinking,
   * only tool_use and tool_result blocks come here). */
  block = parse_block (block_json);
  if (block == NULL)
    return g_strdup (block_json);
  json_object_set_string_member (block, member, value);
  node = json_node_init_object (json_node_alloc (), block);
  return tally_json_to_string (node, FALSE);
}

/**
 * tally_conversation_dup_tool_use_ids:
 * @self: a #TallyConversation
 *
 * Returns: (transfer full) (element-type utf8 utf8): the set of the `id`s
 *   of every `tool_use` block in the conversation
 */
GHashTable *
tally_conversation_dup_tool_use_ids (TallyConversation *self)
{
  GHashTable *ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), ids);

  for (guint i = 0; i < self->messages->len; i++)
    {
      Message *message = g_ptr_array_index (self->messages, i);

      if (!g_str_equal (message->role, "assistant"))
        continue;

      for (guint j = 0; j < message->blocks->len; j++)
        {
          g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (message->blocks, j));

          if (block != NULL)
            g_hash_table_add (ids, g_strdup (block_id (block, "id")));
        }
    }

  return ids;
}

/**
 * tally_conversation_dedup_new_tool_uses:
 * @self: a #TallyConversation
 * @blocks: (element-type utf8): the content of a completed assistant message
 *   that is about to be appended, as JSON texts; changed in place
 *
 * Gives every `tool_use` block of @blocks whose `id` is already used, in the
 * conversation or earlier in @blocks (or is empty), a fresh id
 * (`<id>_dup<N>`), changing only that member's bytes. The API refuses a
 * history with repeated ids (docs/protocol.md §5.4); the agent answers the
 * renamed calls with an error instead of running them.
 *
 * Returns: (transfer full) (element-type utf8 utf8): fresh id → the id the
 *   model repeated, empty when nothing was renamed
 */
GHashTable *
tally_conversation_dedup_new_tool_uses (TallyConversation *self,
                                        GPtrArray         *blocks)
{
  GHashTable *renamed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) taken = NULL;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), renamed);
  g_return_val_if_fail (blocks != NULL, renamed);

  taken = tally_conversation_dup_tool_use_ids (self);
  for (guint i = 0; i < blocks->len; i++)
    {
      g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (blocks, i));
      const char *id;
      char *fresh;
      char *old;

      if (block == NULL)
        continue;

      id = block_id (block, "id");
      if (*id != '\0' && !g_hash_table_contains (taken, id))
        {
          g_hash_table_add (taken, g_strdup (id));
          continue;
        }

      fresh = make_unique_id (taken, id);
      old = g_ptr_array_index (blocks, i);
      g_ptr_array_index (blocks, i) = with_string_member (old, "id", fresh);
      g_free (old);
      g_hash_table_insert (renamed, g_strdup (fresh), g_strdup (id));
      g_hash_table_add (taken, fresh);
    }

  return renamed;
}

/**
 * tally_conversation_repair_duplicate_ids:
 * @self: a #TallyConversation
 * @changed: (element-type guint): receives the index of every message that
 *   was changed, in increasing order
 *
 * Repairs a stored history in which `tool_use` ids repeat (written by a
 * Tally that ran such calls; every request with it is refused). Walking the
 * conversation in order, each `tool_use` whose id was already used gets a
 * fresh id as in tally_conversation_dedup_new_tool_uses(), and in the user
 * message right after it the tool results for that id are matched in
 * order: the Nth result for an id answers the Nth call that had it and
 * takes that call's id. A result with no call left to answer is dropped.
 * Calls still without a result are left to tally_conversation_repair().
 *
 * Returns: the number of `tool_use` blocks renamed
 */
guint
tally_conversation_repair_duplicate_ids (TallyConversation *self,
                                         GArray            *changed)
{
  g_autoptr(GHashTable) taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n_renamed = 0;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), 0);
  g_return_val_if_fail (changed != NULL, 0);

  /* Every id as written first, so a fresh id never takes one that a later
   * message uses. */
  {
    g_autoptr(GHashTable) all = tally_conversation_dup_tool_use_ids (self);
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, all);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      g_hash_table_add (taken, g_strdup (key));
  }
  {
    g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

    for (guint i = 0; i < self->messages->len; i++)
      {
        Message *message = g_ptr_array_index (self->messages, i);
        Message *next = i + 1 < self->messages->len ? g_ptr_array_index (self->messages, i + 1) : NULL;
        /* original id → GPtrArray of the ids its calls now have, in order */
        g_autoptr(GHashTable) calls = NULL;
        gboolean message_changed = FALSE;
        gboolean next_changed = FALSE;

        if (!g_str_equal (message->role, "assistant"))
          continue;

        calls = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
        for (guint j = 0; j < message->blocks->len; j++)
          {
            g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (message->blocks, j));
            g_autofree char *id = NULL;
            GPtrArray *ids;

            if (block == NULL)
              continue;

            id = g_strdup (block_id (block, "id"));
            ids = g_hash_table_lookup (calls, id);
            if (ids == NULL)
              {
                ids = g_ptr_array_new_with_free_func (g_free);
                g_hash_table_insert (calls, g_strdup (id), ids);
              }

            if (*id != '\0' && !g_hash_table_contains (seen, id))
              {
                g_hash_table_add (seen, g_strdup (id));
                g_ptr_array_add (ids, g_strdup (id));
                continue;
              }

            {
              char *fresh = make_unique_id (taken, id);
              char *old = g_ptr_array_index (message->blocks, j);

              g_hash_table_add (taken, g_strdup (fresh));
              g_hash_table_add (seen, g_strdup (fresh));
              g_ptr_array_index (message->blocks, j) = with_string_member (old, "id", fresh);
              g_free (old);
              g_ptr_array_add (ids, fresh);
              message_changed = TRUE;
              n_renamed++;
            }
          }

        if (next != NULL && g_str_equal (next->role, "user"))
          {
            g_autoptr(GHashTable) used = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

            for (guint j = 0; j < next->blocks->len; )
              {
                g_autoptr(JsonObject) block = parse_block (g_ptr_array_index (next->blocks, j));
                const char *id;
                GPtrArray *ids;
                guint nth;

                if (block == NULL ||
                    g_strcmp0 (json_object_get_string_member_with_default (block, "type", NULL), "tool_result") != 0)
                  {
                    j++;
                    continue;
                  }

                id = block_id (block, "tool_use_id");
                ids = g_hash_table_lookup (calls, id);
                if (ids == NULL)
                  {
                    j++;
                    continue;
                  }

                nth = GPOINTER_TO_UINT (g_hash_table_lookup (used, id));
                g_hash_table_insert (used, g_strdup (id), GUINT_TO_POINTER (nth + 1));
                if (nth >= ids->len)
                  {
                    /* A second result for one call: the API takes one. */
                    g_ptr_array_remove_index (next->blocks, j);
                    next_changed = TRUE;
                    continue;
                  }

                if (!g_str_equal (g_ptr_array_index (ids, nth), id))
                  {
                    char *old = g_ptr_array_index (next->blocks, j);

                    g_ptr_array_index (next->blocks, j) =
                      with_string_member (old, "tool_use_id", g_ptr_array_index (ids, nth));
                    g_free (old);
                    next_changed = TRUE;
                  }
                j++;
              }
          }

        if (message_changed)
          g_array_append_val (changed, i);
        if (next_changed)
          {
            guint index = i + 1;
            g_array_append_val (changed, index);
          }
      }
  }

  return n_renamed;
}

static char *
with_cache_control (const char *block_json)
{
  g_autoptr(JsonObject) block = parse_block (block_json);
  g_autoptr(JsonNode) node = NULL;
  JsonObject *cache_control;

  if (block == NULL)
    return g_strdup (block_json);

  cache_control = json_object_new ();
  json_object_set_string_member (cache_control, "type", "ephemeral");
  json_object_set_object_member (block, "cache_control", cache_control);

  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, block);
  return tally_json_to_string (node, FALSE);
}

/**
 * tally_conversation_build_request:
 * @self: a #TallyConversation
 * @model: the model id
 * @max_tokens: the request's `max_tokens`
 * @system_prompt: the system prompt text
 * @tools_json: the `tools` array as JSON text (the same in every mode)
 * @thinking_json: (nullable): the `thinking` object as JSON text, or %NULL
 *   to leave the field out
 *
 * Builds the body of a streaming `POST /v1/messages`. Cache breakpoints go on
 * the system prompt block and on the last block of the newest message, as
 * docs/protocol.md §7 says (two of the API's four). Stored blocks
 * are copied byte for byte; only the newest block is re-serialised to carry
 * its `cache_control`, and that block is always one Tally made itself (user
 * text or a tool result).
 *
 * Returns: (transfer full): the JSON body
 */
GBytes *
tally_conversation_build_request (TallyConversation *self,
                                  const char        *model,
                                  gint64             max_tokens,
                                  const char        *system_prompt,
                                  const char        *tools_json,
                                  const char        *thinking_json)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) head = NULL;
  g_autofree char *head_json = NULL;
  GString *out;

  g_return_val_if_fail (TALLY_IS_CONVERSATION (self), NULL);
  g_return_val_if_fail (model != NULL, NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, model);
  json_builder_set_member_name (builder, "max_tokens");
  json_builder_add_int_value (builder, max_tokens);
  json_builder_set_member_name (builder, "stream");
  json_builder_add_boolean_value (builder, TRUE);
  if (system_prompt != NULL)
    {
      json_builder_set_member_name (builder, "system");
      json_builder_begin_array (builder);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "text");
      json_builder_set_member_name (builder, "text");
      json_builder_add_string_value (builder, system_prompt);
      json_builder_set_member_name (builder, "cache_control");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "ephemeral");
      json_builder_end_object (builder);
      json_builder_end_object (builder);
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);
  head = json_builder_get_root (builder);
  head_json = tally_json_to_string (head, FALSE);

  /* head_json is "{…}"; drop its closing brace and append the rest. */
  out = g_string_new_len (head_json, strlen (head_json) - 1);
  if (tools_json != NULL)
    {
      g_string_append (out, ",\"tools\":");
      g_string_append (out, tools_json);
    }
  if (thinking_json != NULL)
    {
      g_string_append (out, ",\"thinking\":");
      g_string_append (out, thinking_json);
    }
  g_string_append (out, ",\"messages\":[");
  for (guint i = 0; i < self->messages->len; i++)
    {
      Message *message = g_ptr_array_index (self->messages, i);
      gboolean newest = i + 1 == self->messages->len;

      if (i > 0)
        g_string_append_c (out, ',');

      if (newest && message->blocks->len > 0 && g_str_equal (message->role, "user"))
        {
          Message tmp = { message->role, g_ptr_array_new_with_free_func (g_free) };

          for (guint j = 0; j < message->blocks->len; j++)
            {
              const char *block = g_ptr_array_index (message->blocks, j);

              if (j + 1 == message->blocks->len)
                g_ptr_array_add (tmp.blocks, with_cache_control (block));
              else
                g_ptr_array_add (tmp.blocks, g_strdup (block));
            }
          append_message_json (out, &tmp);
          g_ptr_array_unref (tmp.blocks);
        }
      else
        append_message_json (out, message);
    }
  g_string_append (out, "]}");

  return g_string_free_to_bytes (out);
}
