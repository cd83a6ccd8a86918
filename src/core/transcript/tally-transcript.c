/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript"

#include "config.h"

#include "tally-transcript.h"

#include <glib/gi18n-lib.h>

#include "tally-event.h"
#include "tally-json.h"
#include "tally-properties.h"

/*
 * The reducer: the transcript is a pure function of the event log. Live
 * sessions and sessions replayed from the store go through the same
 * tally_transcript_apply(), one event at a time, so what a restarted app
 * shows is what the live run showed, cards and incomplete replies included.
 *
 * Streaming blocks are found by (turn, call, content-block index), tool
 * calls by tool id, cards by their ids, written files by (turn, path).
 * Blocks are only ever appended, so a
 * view sees one items-changed per new block and property notifications for
 * everything else.
 */

struct _TallyTranscript
{
  GObject     parent_instance;

  GPtrArray  *blocks;        /* TallyBlock* */
  GHashTable *streaming;     /* "turn/call/index" → TallyBlock* (borrowed) */
  GHashTable *tools;         /* tool id → TallyBlock* (borrowed) */
  GHashTable *cards;         /* approval or question id → TallyBlock* */
  GHashTable *files;         /* "turn\npath" → FILE TallyBlock* (borrowed) */
  GPtrArray  *open_call;     /* blocks of the current call's reply (borrowed) */
  GHashTable *notices;       /* blocks of tally_transcript_add_notice() (borrowed) */
  char       *title;
  gint64      last_seq;
};

static void tally_transcript_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TallyTranscript, tally_transcript, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      tally_transcript_list_model_init))

enum {
  PROP_0,
  PROP_TITLE,
  PROP_N_ITEMS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define READ_NOTIFY (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY)
#define FIELD(member) G_STRUCT_OFFSET (TallyTranscript, member)

/* In the order of the PROP_ ids above. */
static const TallyPropertyEntry property_table[N_PROPS - 1] = {
  /**
   * TallyTranscript:title:
   *
   * The session title from `session_created`.
   */
  { "title", G_TYPE_STRING, FIELD (title), NULL, 0, READ_NOTIFY },
  /**
   * TallyTranscript:n-items:
   *
   * The number of blocks.
   */
  { "n-items", G_TYPE_UINT, TALLY_PROPERTY_COMPUTED, NULL, 0, READ_NOTIFY },
};

#undef FIELD
#undef READ_NOTIFY

static GType
tally_transcript_get_item_type (GListModel *model)
{
  return TALLY_TYPE_BLOCK;
}

static guint
tally_transcript_get_n_items (GListModel *model)
{
  return TALLY_TRANSCRIPT (model)->blocks->len;
}

static gpointer
tally_transcript_get_item (GListModel *model,
                           guint       position)
{
  TallyTranscript *self = TALLY_TRANSCRIPT (model);

  if (position >= self->blocks->len)
    return NULL;
  return g_object_ref (g_ptr_array_index (self->blocks, position));
}

static void
tally_transcript_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = tally_transcript_get_item_type;
  iface->get_n_items = tally_transcript_get_n_items;
  iface->get_item = tally_transcript_get_item;
}

static void
tally_transcript_finalize (GObject *object)
{
  TallyTranscript *self = (TallyTranscript *)object;

  g_clear_pointer (&self->streaming, g_hash_table_unref);
  g_clear_pointer (&self->tools, g_hash_table_unref);
  g_clear_pointer (&self->cards, g_hash_table_unref);
  g_clear_pointer (&self->files, g_hash_table_unref);
  g_clear_pointer (&self->open_call, g_ptr_array_unref);
  g_clear_pointer (&self->notices, g_hash_table_unref);
  g_clear_pointer (&self->blocks, g_ptr_array_unref);
  g_free (self->title);

  G_OBJECT_CLASS (tally_transcript_parent_class)->finalize (object);
}

static void
tally_transcript_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  TallyTranscript *self = TALLY_TRANSCRIPT (object);

  if (tally_properties_get (object, property_table, G_N_ELEMENTS (property_table), prop_id, value))
    return;

  switch (prop_id)
    {
    case PROP_N_ITEMS:
      g_value_set_uint (value, self->blocks->len);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_transcript_class_init (TallyTranscriptClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_transcript_finalize;
  object_class->get_property = tally_transcript_get_property;

  tally_properties_install (object_class, property_table, G_N_ELEMENTS (property_table), properties);
}

static void
tally_transcript_init (TallyTranscript *self)
{
  self->blocks = g_ptr_array_new_with_free_func (g_object_unref);
  self->streaming = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->tools = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->cards = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->open_call = g_ptr_array_new ();
  self->notices = g_hash_table_new (NULL, NULL);
}

/**
 * tally_transcript_new:
 *
 * Creates an empty transcript. Feed it events with tally_transcript_apply().
 *
 * Returns: (transfer full): a new #TallyTranscript, a #GListModel of
 *   #TallyBlock
 */
TallyTranscript *
tally_transcript_new (void)
{
  return g_object_new (TALLY_TYPE_TRANSCRIPT, NULL);
}

static TallyBlock *
add_block (TallyTranscript *self,
           TallyBlockKind   kind,
           const char      *turn_id)
{
  TallyBlock *block = tally_block_new (kind, turn_id);

  g_ptr_array_add (self->blocks, block);
  g_list_model_items_changed (G_LIST_MODEL (self), self->blocks->len - 1, 0, 1);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);

  return block;
}

static TallyBlock *
streaming_block (TallyTranscript *self,
                 JsonObject      *event,
                 TallyBlockKind   kind)
{
  const char *turn_id = tally_json_object_get_string (event, "turn_id", NULL);
  g_autofree char *key = g_strdup_printf ("%s/%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                          turn_id ? turn_id : "-",
                                          tally_json_object_get_int (event, "call", 0),
                                          tally_json_object_get_int (event, "block", 0));
  TallyBlock *block = g_hash_table_lookup (self->streaming, key);

  if (block == NULL)
    {
      block = add_block (self, kind, turn_id);
      g_hash_table_insert (self->streaming, g_steal_pointer (&key), block);
      g_ptr_array_add (self->open_call, block);
    }

  return block;
}

static void
close_call (TallyTranscript *self)
{
  /* The reply the open blocks belong to has completed. */
  g_ptr_array_set_size (self->open_call, 0);
}

static void
mark_open_call_incomplete (TallyTranscript *self,
                           const char      *turn_id)
{
  if (self->open_call->len == 0)
    return;

  for (guint i = 0; i < self->open_call->len; i++)
    tally_block_set_incomplete (g_ptr_array_index (self->open_call, i), TRUE);
  g_ptr_array_set_size (self->open_call, 0);

  add_block (self, TALLY_BLOCK_INCOMPLETE, turn_id);
}

static char *
node_to_json (JsonNode *node)
{
  if (node == NULL)
    return g_strdup ("{}");
  return json_to_string (node, FALSE);
}

static void
apply_tool_use_start (TallyTranscript *self,
                      JsonObject      *event)
{
  const char *tool_id = tally_json_object_get_string (event, "tool_id", NULL);
  const char *tool_name = tally_json_object_get_string (event, "tool_name", NULL);
  g_autofree char *input = node_to_json (json_object_get_member (event, "tool_input"));
  TallyBlock *block;

  /* A tool_use_start means the reply that asked for it completed. */
  close_call (self);

  /* Card-backed tools show their cards, not a chip. */
  if (g_strcmp0 (tool_name, "AskUserQuestion") == 0 || g_strcmp0 (tool_name, "ExitPlanMode") == 0)
    return;

  block = add_block (self, TALLY_BLOCK_TOOL_CALL, tally_json_object_get_string (event, "turn_id", NULL));
  tally_block_set_tool (block, tool_id, tool_name, input);
  tally_block_set_state (block, "pending");
  if (tool_id != NULL)
    g_hash_table_insert (self->tools, g_strdup (tool_id), block);
}

/* A settled card keeps its request (the questions, the suggestions) and
 * gets the resolution event as its "resolution" member. */
static void
settle_card (TallyBlock *card,
             JsonObject *resolution,
             const char *state)
{
  JsonObject *request = tally_block_get_details (card);
  g_autoptr(JsonObject) details = json_object_new ();

  if (request != NULL)
    {
      GList *members = json_object_get_members (request);

      for (const GList *l = members; l != NULL; l = l->next)
        if (!g_str_equal (l->data, "resolution"))
          json_object_set_member (details, l->data, json_node_copy (json_object_get_member (request, l->data)));
      g_list_free (members);
    }
  json_object_set_object_member (details, "resolution", json_object_ref (resolution));

  tally_block_set_details (card, details);
  tally_block_set_state (card, state);
  tally_block_set_finished (card, TRUE);
}

static void
apply_approval_resolved (TallyTranscript *self,
                         JsonObject      *event)
{
  const char *approval_id = tally_json_object_get_string (event, "approval_id", NULL);
  const char *decision = tally_json_object_get_string (event, "decision", NULL);
  TallyBlock *card = approval_id != NULL ? g_hash_table_lookup (self->cards, approval_id) : NULL;
  TallyBlock *tool = NULL;
  const char *tool_id = tally_json_object_get_string (event, "tool_id", NULL);

  if (card != NULL)
    settle_card (card, event, decision);

  if (tool_id != NULL)
    tool = g_hash_table_lookup (self->tools, tool_id);
  if (tool != NULL)
    tally_block_set_state (tool, g_strcmp0 (decision, "deny") == 0 ? "denied" : "running");
}

/* A file a tool wrote: one FILE block per path and turn (a report the
 * model writes and then edits is one chip), after what wrote it first.
 * The path stays as the tool named it; the window resolves it against
 * the workspace (docs/architecture.md §8.2). */
static void
add_file (TallyTranscript *self,
          const char      *turn_id,
          const char      *path,
          const char      *tool_id,
          const char      *tool_name)
{
  g_autofree char *key = NULL;
  g_autoptr(JsonObject) details = NULL;
  TallyBlock *block;

  if (path == NULL || *path == '\0')
    return;

  key = g_strdup_printf ("%s\n%s", turn_id != NULL ? turn_id : "-", path);
  if (g_hash_table_contains (self->files, key))
    return;

  details = json_object_new ();
  json_object_set_string_member (details, "path", path);
  tally_json_object_set_string_unless_null (details, "tool_id", tool_id);
  json_object_set_string_member (details, "tool_name", tool_name);

  block = add_block (self, TALLY_BLOCK_FILE, turn_id);
  tally_block_set_text (block, path);
  tally_block_set_tool (block, tool_id, tool_name, NULL);
  tally_block_set_details (block, details);
  tally_block_set_finished (block, TRUE);
  g_hash_table_insert (self->files, g_steal_pointer (&key), block);
}

/* Write and Edit name the file they wrote in their input's `file_path`;
 * a call that failed or was denied wrote nothing. Bash is not followed:
 * its events do not say which files a command wrote. */
static void
add_written_file (TallyTranscript *self,
                  TallyBlock      *tool)
{
  const char *name = tally_block_get_tool_name (tool);
  const char *input = tally_block_get_tool_input (tool);
  g_autoptr(JsonNode) node = NULL;

  if ((g_strcmp0 (name, "Write") != 0 && g_strcmp0 (name, "Edit") != 0) || input == NULL)
    return;

  node = json_from_string (input, NULL);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;

  add_file (self, tally_block_get_turn_id (tool),
            tally_json_object_get_string (json_node_get_object (node), "file_path", NULL),
            tally_block_get_tool_id (tool), name);
}

static void
apply_tool_result (TallyTranscript *self,
                   JsonObject      *event)
{
  const char *tool_id = tally_json_object_get_string (event, "tool_id", NULL);
  TallyBlock *tool = tool_id != NULL ? g_hash_table_lookup (self->tools, tool_id) : NULL;
  gboolean is_error = tally_json_object_get_bool (event, "is_error", FALSE);

  if (tool == NULL)
    return;

  tally_block_set_result (tool, tally_json_object_get_string (event, "content", NULL), is_error,
                          tally_json_object_get_int (event, "duration_ms", 0));
  if (g_strcmp0 (tally_block_get_state (tool), "denied") != 0)
    tally_block_set_state (tool, is_error ? "error" : "done");
  tally_block_set_finished (tool, TRUE);

  if (g_strcmp0 (tally_block_get_state (tool), "done") == 0)
    add_written_file (self, tool);
}

/* The chart's files follow its block, one FILE block each. */
static void
add_chart_files (TallyTranscript *self,
                 JsonObject      *event,
                 const char      *turn_id)
{
  JsonNode *node = json_object_get_member (event, "files");
  JsonArray *files;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return;

  files = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (files); i++)
    {
      JsonNode *file = json_array_get_element (files, i);

      if (JSON_NODE_HOLDS_VALUE (file) && json_node_get_value_type (file) == G_TYPE_STRING)
        add_file (self, turn_id, json_node_get_string (file),
                  tally_json_object_get_string (event, "tool_id", NULL), "create_chart");
    }
}

static void
apply_card_request (TallyTranscript *self,
                    JsonObject      *event,
                    TallyBlockKind   kind,
                    const char      *id_member)
{
  const char *id = tally_json_object_get_string (event, id_member, NULL);
  TallyBlock *block = add_block (self, kind, tally_json_object_get_string (event, "turn_id", NULL));

  tally_block_set_details (block, event);
  tally_block_set_state (block, "pending");
  if (kind == TALLY_BLOCK_APPROVAL)
    {
      g_autofree char *input = node_to_json (json_object_get_member (event, "tool_input"));
      tally_block_set_tool (block, tally_json_object_get_string (event, "tool_id", NULL),
                            tally_json_object_get_string (event, "tool_name", NULL), input);
    }
  if (id != NULL)
    g_hash_table_insert (self->cards, g_strdup (id), block);
}

static void
apply_question_resolved (TallyTranscript *self,
                         JsonObject      *event)
{
  const char *id = tally_json_object_get_string (event, "question_id", NULL);
  TallyBlock *card = id != NULL ? g_hash_table_lookup (self->cards, id) : NULL;

  if (card == NULL)
    return;

  settle_card (card, event, tally_json_object_get_string (event, "reason", NULL));
}

/* The error blocks of @turn_id get `retried: true` in their details (a
 * copy of their `error` event), which the error banner reads. */
static void
mark_retried (TallyTranscript *self,
              const char      *turn_id)
{
  for (guint i = 0; i < self->blocks->len; i++)
    {
      TallyBlock *b = g_ptr_array_index (self->blocks, i);
      g_autoptr(JsonNode) node = NULL;
      g_autoptr(JsonNode) copy = NULL;
      JsonObject *details;

      if (tally_block_get_kind (b) != TALLY_BLOCK_ERROR || g_strcmp0 (tally_block_get_turn_id (b), turn_id) != 0)
        continue;

      details = tally_block_get_details (b);
      if (details == NULL || tally_json_object_get_bool (details, "retried", FALSE))
        continue;
      /* Events are shared with the store and other listeners: change a copy. */
      node = json_node_init_object (json_node_alloc (), details);
      copy = json_node_copy (node);
      json_object_set_boolean_member (json_node_get_object (copy), "retried", TRUE);
      tally_block_set_details (b, json_node_get_object (copy));
      /* The details have no property of their own; the rows follow "state". */
      g_object_notify (G_OBJECT (b), "state");
    }
}

static void
apply_turn_finished (TallyTranscript *self,
                     JsonObject      *event,
                     const char      *turn_id)
{
  const char *status = tally_json_object_get_string (event, "status", NULL);
  TallyBlock *block;

  if (g_strcmp0 (status, tally_turn_status_to_string (TALLY_TURN_DONE)) != 0)
    mark_open_call_incomplete (self, turn_id);
  close_call (self);

  /* No tool of a finished turn is still waiting or running. */
  for (guint i = 0; i < self->blocks->len; i++)
    {
      TallyBlock *b = g_ptr_array_index (self->blocks, i);

      if (tally_block_get_kind (b) == TALLY_BLOCK_TOOL_CALL && !tally_block_get_finished (b) &&
          g_strcmp0 (tally_block_get_turn_id (b), turn_id) == 0)
        {
          tally_block_set_state (b, "interrupted");
          tally_block_set_finished (b, TRUE);
        }
    }

  block = add_block (self, TALLY_BLOCK_RECEIPT, turn_id);
  tally_block_set_state (block, status);
  tally_block_set_details (block, event);
  tally_block_set_finished (block, TRUE);
}

/**
 * tally_transcript_apply:
 * @self: a #TallyTranscript
 * @event: (transfer none): one event (docs/architecture.md §4)
 *
 * Applies one event. Unknown event types are ignored (the vocabulary may
 * grow); events are expected in `seq` order.
 */
void
tally_transcript_apply (TallyTranscript *self,
                        JsonObject      *event)
{
  const char *turn_id;
  TallyBlock *block;

  g_return_if_fail (TALLY_IS_TRANSCRIPT (self));
  g_return_if_fail (event != NULL);

  if (tally_json_object_get_string (event, "type", NULL) == NULL)
    return;
  turn_id = tally_event_get_turn_id (event);

  if (json_object_has_member (event, "seq"))
    self->last_seq = MAX (self->last_seq, tally_event_get_seq (event));

  switch (tally_event_get_event_type (event))
    {
    case TALLY_EVENT_SESSION_CREATED:
      g_free (self->title);
      self->title = g_strdup (tally_json_object_get_string (event, "title", NULL));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
      break;

    case TALLY_EVENT_TURN_STARTED:
      close_call (self);
      /* The message carried the analyst's changed notes (docs/notes.md). */
      if (tally_json_object_get_string (event, "notes", NULL) != NULL)
        {
          block = add_block (self, TALLY_BLOCK_NOTICE, turn_id);
          tally_block_set_text (block, _("Notes changed: the new notes go with your next message"));
          tally_block_set_state (block, "notes-changed");
          tally_block_set_finished (block, TRUE);
        }
      /* A retry runs the failed turn again in place: no new bubble, and
       * the failed turn's error no longer offers Retry. */
      if (tally_json_object_get_string (event, "retry_of", NULL) != NULL)
        {
          mark_retried (self, tally_json_object_get_string (event, "retry_of", NULL));
          break;
        }
      block = add_block (self, TALLY_BLOCK_USER, turn_id);
      tally_block_set_text (block, tally_event_get_text (event));
      tally_block_set_state (block, tally_json_object_get_string (event, "mode", NULL));
      tally_block_set_details (block, event);
      tally_block_set_finished (block, TRUE);
      break;

    case TALLY_EVENT_REDIRECT:
      /* The analyst's words delivered mid-turn with tool results. */
      block = add_block (self, TALLY_BLOCK_USER, turn_id);
      tally_block_set_text (block, tally_event_get_text (event));
      tally_block_set_state (block, "redirect");
      tally_block_set_details (block, event);
      tally_block_set_finished (block, TRUE);
      break;

    case TALLY_EVENT_TEXT_DELTA:
      tally_block_append_text (streaming_block (self, event, TALLY_BLOCK_TEXT),
                               tally_event_get_text (event));
      break;

    case TALLY_EVENT_THINKING_DELTA:
      tally_block_append_text (streaming_block (self, event, TALLY_BLOCK_THINKING),
                               tally_event_get_text (event));
      break;

    case TALLY_EVENT_BLOCK_DONE:
      {
        const char *kind = tally_json_object_get_string (event, "kind", NULL);

        if (g_strcmp0 (kind, "text") == 0 || g_strcmp0 (kind, "thinking") == 0)
          tally_block_set_finished (streaming_block (self, event,
                                                     g_str_equal (kind, "text") ? TALLY_BLOCK_TEXT
                                                                                : TALLY_BLOCK_THINKING),
                                    TRUE);
      }
      break;

    case TALLY_EVENT_TOOL_USE_START:
      apply_tool_use_start (self, event);
      break;

    case TALLY_EVENT_APPROVAL_REQUEST:
      apply_card_request (self, event, TALLY_BLOCK_APPROVAL, "approval_id");
      break;

    case TALLY_EVENT_APPROVAL_RESOLVED:
      apply_approval_resolved (self, event);
      break;

    case TALLY_EVENT_TOOL_RESULT:
      apply_tool_result (self, event);
      break;

    case TALLY_EVENT_QUESTION_REQUEST:
      apply_card_request (self, event, TALLY_BLOCK_QUESTION, "question_id");
      break;

    case TALLY_EVENT_QUESTION_RESOLVED:
      apply_question_resolved (self, event);
      break;

    case TALLY_EVENT_PLAN_PROPOSED:
      block = add_block (self, TALLY_BLOCK_PLAN, turn_id);
      tally_block_set_text (block, tally_json_object_get_string (event, "markdown", NULL));
      tally_block_set_details (block, event);
      tally_block_set_finished (block, TRUE);
      break;

    case TALLY_EVENT_CHART_CREATED:
      /* Drawn again from the event's inline spec and rows, so replay
       * needs neither the database nor the files (issue 12 §1). */
      block = add_block (self, TALLY_BLOCK_CHART, turn_id);
      tally_block_set_text (block, tally_json_object_get_string (event, "title", NULL));
      tally_block_set_tool (block, tally_json_object_get_string (event, "tool_id", NULL),
                            "create_chart", NULL);
      tally_block_set_details (block, event);
      tally_block_set_finished (block, TRUE);
      add_chart_files (self, event, turn_id);
      break;

    case TALLY_EVENT_ERROR:
      mark_open_call_incomplete (self, turn_id);
      block = add_block (self, TALLY_BLOCK_ERROR, turn_id);
      tally_block_set_text (block, tally_json_object_get_string (event, "message", NULL));
      tally_block_set_state (block, tally_json_object_get_string (event, "kind", NULL));
      tally_block_set_details (block, event);
      tally_block_set_finished (block, TRUE);
      break;

    case TALLY_EVENT_TURN_FINISHED:
      apply_turn_finished (self, event, turn_id);
      break;

    case TALLY_EVENT_API_CALL:
    case TALLY_EVENT_RETRY:
      /* The receipt sums attempts from turn_finished; nothing to show. */
      break;

    case TALLY_EVENT_REQUEST_SENT:
      /* The ledger has its own view ("Sent to the API", docs/ledger.md). */
      break;

    case TALLY_EVENT_UNKNOWN:
      /* A type from a newer build: the vocabulary may grow. */
      break;
    }
}

/**
 * tally_transcript_add_notice:
 * @self: a #TallyTranscript
 * @text: what Tally has to say (e.g. that part of a stored session is
 *   damaged)
 *
 * Appends a notice block that is not part of the event log.
 */
void
tally_transcript_add_notice (TallyTranscript *self,
                             const char      *text)
{
  TallyBlock *block;

  g_return_if_fail (TALLY_IS_TRANSCRIPT (self));

  block = add_block (self, TALLY_BLOCK_NOTICE, NULL);
  tally_block_set_text (block, text);
  tally_block_set_finished (block, TRUE);
  g_hash_table_add (self->notices, block);
}

/**
 * tally_transcript_get_title:
 * @self: a #TallyTranscript
 *
 * Returns: (transfer none) (nullable): the session title
 */
const char *
tally_transcript_get_title (TallyTranscript *self)
{
  g_return_val_if_fail (TALLY_IS_TRANSCRIPT (self), NULL);
  return self->title;
}

/**
 * tally_transcript_get_last_seq:
 * @self: a #TallyTranscript
 *
 * Returns: the highest `seq` applied, 0 when none
 */
gint64
tally_transcript_get_last_seq (TallyTranscript *self)
{
  g_return_val_if_fail (TALLY_IS_TRANSCRIPT (self), 0);
  return self->last_seq;
}

/**
 * tally_transcript_dup_trace:
 * @self: a #TallyTranscript
 *
 * Describes every block, one line each (see tally_block_dup_trace()), for
 * golden tests: two transcripts are the same when their traces are.
 *
 * Returns: (transfer full): the trace, each line ending in a newline
 */
char *
tally_transcript_dup_trace (TallyTranscript *self)
{
  GString *out;

  g_return_val_if_fail (TALLY_IS_TRANSCRIPT (self), NULL);

  out = g_string_new (NULL);
  for (guint i = 0; i < self->blocks->len; i++)
    {
      g_autofree char *line = tally_block_dup_trace (g_ptr_array_index (self->blocks, i));

      g_string_append (out, line);
      g_string_append_c (out, '\n');
    }

  return g_string_free (out, FALSE);
}

/* The member of a snapshot entry that names a streamed block's key
 * ("turn/call/index"), so deltas after the snapshot find their block. */
#define STREAM_KEY "stream_key"

/**
 * tally_transcript_to_snapshot:
 * @self: a #TallyTranscript
 *
 * The transcript's blocks as one JSON array, each block in its JSON form
 * (tally_block_to_json()) with, for a streamed block, its key under
 * `stream_key`. Notices that are not part of the event log
 * (tally_transcript_add_notice()) are left out: the snapshot holds what
 * the events made (docs/architecture.md §10.2, `snapshots`). Meant to be
 * taken when a turn has settled, with no reply open; the details objects
 * are shared with the blocks, so serialise the result before the
 * transcript changes again.
 *
 * Returns: (transfer full): a #JsonNode holding the array
 */
JsonNode *
tally_transcript_to_snapshot (TallyTranscript *self)
{
  g_autoptr(GHashTable) keys = g_hash_table_new (NULL, NULL);
  JsonArray *array;
  GHashTableIter iter;
  gpointer key, value;

  g_return_val_if_fail (TALLY_IS_TRANSCRIPT (self), NULL);

  g_hash_table_iter_init (&iter, self->streaming);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_hash_table_insert (keys, value, key);

  array = json_array_sized_new (self->blocks->len);
  for (guint i = 0; i < self->blocks->len; i++)
    {
      TallyBlock *block = g_ptr_array_index (self->blocks, i);
      JsonObject *object;
      const char *stream_key;

      if (g_hash_table_contains (self->notices, block))
        continue;
      object = tally_block_to_json (block);
      stream_key = g_hash_table_lookup (keys, block);
      if (stream_key != NULL)
        json_object_set_string_member (object, STREAM_KEY, stream_key);
      json_array_add_object_element (array, object);
    }

  return json_node_init_array (json_node_alloc (), array);
}

/* Fills the look-up tables the reducer keeps for a restored block, as
 * applying its events would have. */
static void
index_restored_block (TallyTranscript *self,
                      TallyBlock      *block,
                      JsonObject      *entry)
{
  const char *stream_key = tally_json_object_get_string (entry, STREAM_KEY, NULL);
  JsonObject *details = tally_block_get_details (block);
  const char *id = NULL;

  if (stream_key != NULL)
    g_hash_table_insert (self->streaming, g_strdup (stream_key), block);

  switch (tally_block_get_kind (block))
    {
    case TALLY_BLOCK_TOOL_CALL:
      if (tally_block_get_tool_id (block) != NULL)
        g_hash_table_insert (self->tools, g_strdup (tally_block_get_tool_id (block)), block);
      break;
    case TALLY_BLOCK_APPROVAL:
    case TALLY_BLOCK_QUESTION:
      if (details != NULL)
        id = tally_json_object_get_string (details, tally_block_get_kind (block) == TALLY_BLOCK_APPROVAL
                                                    ? "approval_id" : "question_id", NULL);
      if (id != NULL)
        g_hash_table_insert (self->cards, g_strdup (id), block);
      break;
    case TALLY_BLOCK_FILE:
      g_hash_table_insert (self->files,
                           g_strdup_printf ("%s\n%s", tally_block_get_turn_id (block) != NULL
                                                      ? tally_block_get_turn_id (block) : "-",
                                            tally_block_get_text (block)),
                           block);
      break;
    case TALLY_BLOCK_USER:
    case TALLY_BLOCK_TEXT:
    case TALLY_BLOCK_THINKING:
    case TALLY_BLOCK_PLAN:
    case TALLY_BLOCK_RECEIPT:
    case TALLY_BLOCK_ERROR:
    case TALLY_BLOCK_INCOMPLETE:
    case TALLY_BLOCK_NOTICE:
    case TALLY_BLOCK_CHART:
      break;
    }
}

/**
 * tally_transcript_new_from_snapshot:
 * @blocks: (transfer none): the array tally_transcript_to_snapshot() made
 * @title: (nullable): the title from the session's `session_created`
 * @last_seq: the `seq` of the last event the snapshot covers
 * @error: return location for a #GError
 *
 * Makes the transcript that applying the snapshot's events would have
 * made: the same blocks, and the reducer's look-ups (streamed blocks by
 * key, tool calls by id, cards by id, written files) filled in, so the
 * events after @last_seq apply as they would have to the live transcript.
 * No items-changed is emitted while it is built.
 *
 * Returns: (transfer full) (nullable): the transcript; %NULL with
 *   %TALLY_SNAPSHOT_ERROR_INVALID when @blocks is not an array of objects or
 *   one of them is not a block's JSON form (the message names its index)
 */
TallyTranscript *
tally_transcript_new_from_snapshot (JsonNode    *blocks,
                                    const char  *title,
                                    gint64       last_seq,
                                    GError     **error)
{
  g_autoptr(TallyTranscript) self = NULL;
  JsonArray *array;

  g_return_val_if_fail (blocks != NULL, NULL);

  if (!JSON_NODE_HOLDS_ARRAY (blocks))
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                   "The snapshot is not an array of blocks");
      return NULL;
    }

  self = tally_transcript_new ();
  self->title = g_strdup (title);
  self->last_seq = MAX (0, last_seq);

  array = json_node_get_array (blocks);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      g_autoptr(GError) local_error = NULL;
      TallyBlock *block;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                       "Block %u of the snapshot is not an object", i);
          return NULL;
        }
      block = tally_block_new_from_json (json_node_get_object (node), &local_error);
      if (block == NULL)
        {
          g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                       "Block %u of the snapshot: %s", i, local_error->message);
          return NULL;
        }
      g_ptr_array_add (self->blocks, block);
      index_restored_block (self, block, json_node_get_object (node));
    }

  return g_steal_pointer (&self);
}
