/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-block"

#include "config.h"

#include "tally-block.h"

#include "tally-format.h"
#include "tally-json.h"
#include "tally-properties.h"

/*
 * One block of the transcript. Blocks are made and changed only by the
 * reducer (TallyTranscript); views bind to their properties and redraw on
 * notify. Text grows in place while a reply streams, so a block is one
 * object from its first delta to its last.
 */

struct _TallyBlock
{
  GObject         parent_instance;

  TallyBlockKind  kind;
  char           *turn_id;
  GString        *text;
  char           *state;
  char           *tool_id;
  char           *tool_name;
  char           *tool_input;
  char           *result;
  gint64          duration_ms;
  JsonObject     *details;
  gboolean        finished;
  gboolean        incomplete;
  gboolean        is_error;
};

G_DEFINE_FINAL_TYPE (TallyBlock, tally_block, G_TYPE_OBJECT)

G_DEFINE_QUARK (tally-snapshot-error-quark, tally_snapshot_error)

enum {
  PROP_0,
  PROP_KIND,
  PROP_TURN_ID,
  PROP_TEXT,
  PROP_FINISHED,
  PROP_INCOMPLETE,
  PROP_STATE,
  PROP_TOOL_NAME,
  PROP_RESULT,
  PROP_IS_ERROR,
  PROP_WORD_COUNT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define FIELD(member) G_STRUCT_OFFSET (TallyBlock, member)
#define NOTIFY (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY)

/* In the order of the PROP_ ids above. */
static const TallyPropertyEntry property_table[N_PROPS - 1] = {
  /**
   * TallyBlock:kind:
   *
   * What the block shows.
   */
  { "kind", G_TYPE_ENUM, FIELD (kind), NULL, TALLY_BLOCK_TEXT, G_PARAM_READABLE,
    tally_block_kind_get_type },
  /**
   * TallyBlock:turn-id:
   *
   * The id of the turn the block belongs to, %NULL for notices.
   */
  { "turn-id", G_TYPE_STRING, FIELD (turn_id), NULL, 0, G_PARAM_READABLE },
  /**
   * TallyBlock:text:
   *
   * The block's text: the prompt, the streamed reply or thinking, an error
   * message, a plan's markdown. Grows while a reply streams.
   */
  { "text", G_TYPE_STRING, TALLY_PROPERTY_COMPUTED, "", 0, NOTIFY },
  /**
   * TallyBlock:finished:
   *
   * %TRUE once the block is complete: its content block stopped, its tool
   * answered, its card settled.
   */
  { "finished", G_TYPE_BOOLEAN, FIELD (finished), NULL, FALSE, NOTIFY },
  /**
   * TallyBlock:incomplete:
   *
   * %TRUE when the reply holding the block was cut before it completed;
   * such a block was never sent back to the API.
   */
  { "incomplete", G_TYPE_BOOLEAN, FIELD (incomplete), NULL, FALSE, NOTIFY },
  /**
   * TallyBlock:state:
   *
   * A short state word: for tool calls `pending`, `running`, `done`,
   * `error`, `denied`; for cards `pending` or the decision; for receipts
   * the turn status.
   */
  { "state", G_TYPE_STRING, FIELD (state), NULL, 0, NOTIFY },
  /**
   * TallyBlock:tool-name:
   *
   * The tool of a tool call or approval card.
   */
  { "tool-name", G_TYPE_STRING, FIELD (tool_name), NULL, 0, NOTIFY },
  /**
   * TallyBlock:result:
   *
   * The text of a tool call's result.
   */
  { "result", G_TYPE_STRING, FIELD (result), NULL, 0, NOTIFY },
  /**
   * TallyBlock:is-error:
   *
   * %TRUE when a tool call's result is an error.
   */
  { "is-error", G_TYPE_BOOLEAN, FIELD (is_error), NULL, FALSE, NOTIFY },
  /**
   * TallyBlock:word-count:
   *
   * The number of words of the text, for the thinking drawer's label.
   */
  { "word-count", G_TYPE_UINT, TALLY_PROPERTY_COMPUTED, NULL, 0, G_PARAM_READABLE },
};

#undef FIELD
#undef NOTIFY

static void
tally_block_finalize (GObject *object)
{
  TallyBlock *self = (TallyBlock *)object;

  g_free (self->turn_id);
  g_string_free (self->text, TRUE);
  g_free (self->state);
  g_free (self->tool_id);
  g_free (self->tool_name);
  g_free (self->tool_input);
  g_free (self->result);
  g_clear_pointer (&self->details, json_object_unref);

  G_OBJECT_CLASS (tally_block_parent_class)->finalize (object);
}

static void
tally_block_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  TallyBlock *self = TALLY_BLOCK (object);

  if (tally_properties_get (object, property_table, G_N_ELEMENTS (property_table), prop_id, value))
    return;

  switch (prop_id)
    {
    case PROP_TEXT:
      g_value_set_string (value, self->text->str);
      break;
    case PROP_WORD_COUNT:
      g_value_set_uint (value, tally_block_get_word_count (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_block_class_init (TallyBlockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_block_finalize;
  object_class->get_property = tally_block_get_property;

  tally_properties_install (object_class, property_table, G_N_ELEMENTS (property_table), properties);
}

static void
tally_block_init (TallyBlock *self)
{
  self->text = g_string_new (NULL);
}

/**
 * tally_block_new:
 * @kind: what the block shows
 * @turn_id: (nullable): the turn it belongs to
 *
 * Returns: (transfer full): a new, empty #TallyBlock
 */
TallyBlock *
tally_block_new (TallyBlockKind  kind,
                 const char     *turn_id)
{
  TallyBlock *self = g_object_new (TALLY_TYPE_BLOCK, NULL);

  self->kind = kind;
  self->turn_id = g_strdup (turn_id);

  return self;
}

/**
 * tally_block_get_kind:
 * @self: a #TallyBlock
 *
 * Returns: the block's kind
 */
TallyBlockKind
tally_block_get_kind (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), TALLY_BLOCK_TEXT);
  return self->kind;
}

/**
 * tally_block_get_turn_id:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none) (nullable): the turn id
 */
const char *
tally_block_get_turn_id (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->turn_id;
}

/**
 * tally_block_get_text:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none): the text, never %NULL
 */
const char *
tally_block_get_text (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->text->str;
}

/**
 * tally_block_set_text:
 * @self: a #TallyBlock
 * @text: the new text
 *
 * Replaces the text.
 */
void
tally_block_set_text (TallyBlock *self,
                      const char *text)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  g_string_assign (self->text, text != NULL ? text : "");
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TEXT]);
}

/**
 * tally_block_append_text:
 * @self: a #TallyBlock
 * @text: text to add at the end
 *
 * Appends streamed text. Views coalesce the notifications per frame.
 */
void
tally_block_append_text (TallyBlock *self,
                         const char *text)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  if (text == NULL || *text == '\0')
    return;

  g_string_append (self->text, text);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TEXT]);
}

/**
 * tally_block_get_finished:
 * @self: a #TallyBlock
 *
 * Returns: whether the block is complete
 */
gboolean
tally_block_get_finished (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), FALSE);
  return self->finished;
}

/**
 * tally_block_set_finished:
 * @self: a #TallyBlock
 * @finished: whether the block is complete
 *
 * Sets #TallyBlock:finished.
 */
void
tally_block_set_finished (TallyBlock *self,
                          gboolean    finished)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  tally_properties_set_boolean (G_OBJECT (self), &self->finished, finished, properties[PROP_FINISHED]);
}

/**
 * tally_block_get_incomplete:
 * @self: a #TallyBlock
 *
 * Returns: whether the reply holding the block was cut
 */
gboolean
tally_block_get_incomplete (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), FALSE);
  return self->incomplete;
}

/**
 * tally_block_set_incomplete:
 * @self: a #TallyBlock
 * @incomplete: whether the reply was cut
 *
 * Sets #TallyBlock:incomplete.
 */
void
tally_block_set_incomplete (TallyBlock *self,
                            gboolean    incomplete)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  tally_properties_set_boolean (G_OBJECT (self), &self->incomplete, incomplete, properties[PROP_INCOMPLETE]);
}

/**
 * tally_block_get_state:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none) (nullable): the state word
 */
const char *
tally_block_get_state (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->state;
}

/**
 * tally_block_set_state:
 * @self: a #TallyBlock
 * @state: (nullable): the state word
 *
 * Sets #TallyBlock:state.
 */
void
tally_block_set_state (TallyBlock *self,
                       const char *state)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  tally_properties_set_string (G_OBJECT (self), &self->state, state, properties[PROP_STATE]);
}

/**
 * tally_block_get_tool_id:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none) (nullable): the `tool_use` id
 */
const char *
tally_block_get_tool_id (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->tool_id;
}

/**
 * tally_block_get_tool_name:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none) (nullable): the tool name
 */
const char *
tally_block_get_tool_name (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->tool_name;
}

/**
 * tally_block_get_tool_input:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none) (nullable): the tool input as JSON text
 */
const char *
tally_block_get_tool_input (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->tool_input;
}

/**
 * tally_block_set_tool:
 * @self: a #TallyBlock
 * @tool_id: the `tool_use` id
 * @tool_name: the tool name
 * @tool_input: the input as JSON text
 *
 * Sets what a tool call or approval card is about.
 */
void
tally_block_set_tool (TallyBlock *self,
                      const char *tool_id,
                      const char *tool_name,
                      const char *tool_input)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  g_free (self->tool_id);
  self->tool_id = g_strdup (tool_id);
  g_free (self->tool_name);
  self->tool_name = g_strdup (tool_name);
  g_free (self->tool_input);
  self->tool_input = g_strdup (tool_input);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOOL_NAME]);
}

/**
 * tally_block_get_result:
 * @self: a #TallyBlock
 *
 * Returns: (transfer none) (nullable): a tool call's result text
 */
const char *
tally_block_get_result (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->result;
}

/**
 * tally_block_get_is_error:
 * @self: a #TallyBlock
 *
 * Returns: whether a tool call's result is an error
 */
gboolean
tally_block_get_is_error (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), FALSE);
  return self->is_error;
}

/**
 * tally_block_get_duration_ms:
 * @self: a #TallyBlock
 *
 * Returns: how long a tool ran, in milliseconds
 */
gint64
tally_block_get_duration_ms (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), 0);
  return self->duration_ms;
}

/**
 * tally_block_set_result:
 * @self: a #TallyBlock
 * @result: the result text
 * @is_error: whether it is an error
 * @duration_ms: how long the tool ran, in milliseconds
 *
 * Sets a tool call's result.
 */
void
tally_block_set_result (TallyBlock *self,
                        const char *result,
                        gboolean    is_error,
                        gint64      duration_ms)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  g_free (self->result);
  self->result = g_strdup (result);
  self->is_error = !!is_error;
  self->duration_ms = duration_ms;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESULT]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IS_ERROR]);
}

/**
 * tally_block_get_details:
 * @self: a #TallyBlock
 *
 * The event fields a card or receipt shows (usage and cost of a receipt,
 * the questions of a question card, the decision of a settled approval).
 *
 * Returns: (transfer none) (nullable): the details object
 */
JsonObject *
tally_block_get_details (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);
  return self->details;
}

/**
 * tally_block_set_details:
 * @self: a #TallyBlock
 * @details: (nullable) (transfer none): the details object
 *
 * Replaces the details object (a reference is taken).
 */
void
tally_block_set_details (TallyBlock *self,
                         JsonObject *details)
{
  g_return_if_fail (TALLY_IS_BLOCK (self));

  if (details != NULL)
    json_object_ref (details);
  g_clear_pointer (&self->details, json_object_unref);
  self->details = details;
}

/**
 * tally_block_get_word_count:
 * @self: a #TallyBlock
 *
 * Counts the words of the whole text with tally_count_words(), so a word
 * split across two deltas is one word. The thinking drawer says "Thought
 * for N words" with it, and so does the Markdown export.
 *
 * Returns: the number of words
 */
guint
tally_block_get_word_count (TallyBlock *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (self), 0);

  return tally_count_words (self->text->str);
}

static void
append_escaped (GString    *out,
                const char *text)
{
  if (text == NULL)
    {
      g_string_append (out, "-");
      return;
    }

  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '\n')
        g_string_append (out, "\\n");
      else if (*p == '\t')
        g_string_append (out, "\\t");
      else if (*p == '\\')
        g_string_append (out, "\\\\");
      else
        g_string_append_c (out, *p);
    }
}

/**
 * tally_block_dup_trace:
 * @self: a #TallyBlock
 *
 * Describes the block on one line, tab-separated: kind, state, finished,
 * incomplete, tool name, is-error, text, result (newlines and tabs escaped).
 * Golden tests compare transcripts with these lines.
 *
 * Returns: (transfer full): the line, without a newline
 */
char *
tally_block_dup_trace (TallyBlock *self)
{
  GString *out;

  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);

  out = g_string_new (tally_block_kind_to_string (self->kind));
  g_string_append_c (out, '\t');
  append_escaped (out, self->state);
  g_string_append_printf (out, "\t%s\t%s\t",
                          self->finished ? "finished" : "open",
                          self->incomplete ? "incomplete" : "whole");
  append_escaped (out, self->tool_name);
  g_string_append_printf (out, "\t%s\t", self->is_error ? "error" : "ok");
  append_escaped (out, self->text->str);
  g_string_append_c (out, '\t');
  append_escaped (out, self->result);

  return g_string_free (out, FALSE);
}

/**
 * tally_block_to_json:
 * @self: a #TallyBlock
 *
 * The block's JSON form, which tally_block_new_from_json() reads back into
 * an equal block (docs/architecture.md §10.2, `snapshots`): `kind` (the
 * kind's nick), `text`, `finished`, `incomplete`, `is_error`,
 * `duration_ms`, and when set `turn_id`, `state`, `tool_id`, `tool_name`,
 * `tool_input`, `result` (strings) and `details` (an object, shared with
 * the block: do not change it).
 *
 * Returns: (transfer full): a new object
 */
JsonObject *
tally_block_to_json (TallyBlock *self)
{
  JsonObject *object;

  g_return_val_if_fail (TALLY_IS_BLOCK (self), NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "kind", tally_block_kind_to_string (self->kind));
  tally_json_object_set_string_unless_null (object, "turn_id", self->turn_id);
  json_object_set_string_member (object, "text", self->text->str);
  json_object_set_boolean_member (object, "finished", self->finished);
  json_object_set_boolean_member (object, "incomplete", self->incomplete);
  tally_json_object_set_string_unless_null (object, "state", self->state);
  tally_json_object_set_string_unless_null (object, "tool_id", self->tool_id);
  tally_json_object_set_string_unless_null (object, "tool_name", self->tool_name);
  tally_json_object_set_string_unless_null (object, "tool_input", self->tool_input);
  tally_json_object_set_string_unless_null (object, "result", self->result);
  json_object_set_boolean_member (object, "is_error", self->is_error);
  json_object_set_int_member (object, "duration_ms", self->duration_ms);
  if (self->details != NULL)
    json_object_set_object_member (object, "details", json_object_ref (self->details));

  return object;
}

/* The member's string, NULL when absent; FALSE (with @error) when it is
 * there but not a string. */
static gboolean
read_string (JsonObject  *object,
             const char  *member,
             gboolean     required,
             char       **out,
             GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL && !required)
    return TRUE;
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                   "The block's “%s” is %s", member, node == NULL ? "missing" : "not a string");
      return FALSE;
    }
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

static gboolean
read_boolean (JsonObject  *object,
              const char  *member,
              gboolean    *out,
              GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                   "The block's “%s” is not true or false", member);
      return FALSE;
    }
  *out = json_node_get_boolean (node);
  return TRUE;
}

/**
 * tally_block_new_from_json:
 * @object: (transfer none): a block's JSON form (tally_block_to_json())
 * @error: return location for a #GError
 *
 * Makes the block @object describes; its `details`, when present, is
 * shared with @object, not copied. Members other than those
 * tally_block_to_json() writes are ignored.
 *
 * Returns: (transfer full) (nullable): the block; %NULL with
 *   %TALLY_SNAPSHOT_ERROR_INVALID when `kind` is missing or unknown, `text`
 *   is missing, or a member has the wrong type
 */
TallyBlock *
tally_block_new_from_json (JsonObject  *object,
                           GError     **error)
{
  g_autoptr(TallyBlock) self = NULL;
  g_autofree char *kind_nick = NULL;
  g_autofree char *text = NULL;
  JsonNode *node;
  int kind;

  g_return_val_if_fail (object != NULL, NULL);

  if (!read_string (object, "kind", TRUE, &kind_nick, error))
    return NULL;
  if (!tally_enum_from_nick (TALLY_TYPE_BLOCK_KIND, kind_nick, &kind))
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                   "“%s” is not a kind of block", kind_nick);
      return NULL;
    }

  self = g_object_new (TALLY_TYPE_BLOCK, NULL);
  self->kind = kind;
  if (!read_string (object, "turn_id", FALSE, &self->turn_id, error) ||
      !read_string (object, "text", TRUE, &text, error) ||
      !read_string (object, "state", FALSE, &self->state, error) ||
      !read_string (object, "tool_id", FALSE, &self->tool_id, error) ||
      !read_string (object, "tool_name", FALSE, &self->tool_name, error) ||
      !read_string (object, "tool_input", FALSE, &self->tool_input, error) ||
      !read_string (object, "result", FALSE, &self->result, error) ||
      !read_boolean (object, "finished", &self->finished, error) ||
      !read_boolean (object, "incomplete", &self->incomplete, error) ||
      !read_boolean (object, "is_error", &self->is_error, error))
    return NULL;
  g_string_assign (self->text, text);

  node = json_object_get_member (object, "duration_ms");
  if (node != NULL)
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
        {
          g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                       "The block's “duration_ms” is not a whole number");
          return NULL;
        }
      self->duration_ms = json_node_get_int (node);
    }

  node = json_object_get_member (object, "details");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                       "The block's “details” is not an object");
          return NULL;
        }
      self->details = json_object_ref (json_node_get_object (node));
    }

  return g_steal_pointer (&self);
}
