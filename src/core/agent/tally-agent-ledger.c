/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include <string.h>

#include "tally-agent-private.h"
#include "tally-database-profile.h"
#include "tally-json.h"
#include "tally-sensitive-columns.h"

/* What leaves the machine (docs/ledger.md): the analyst's sensitive
 * columns, handed to the tools with every turn, and the `request_sent`
 * event that lists, for each request, the tool results it sends for the
 * first time. */

/**
 * tally_agent_set_sensitive_columns:
 * @self: a #TallyAgent
 * @columns: (array zero-terminated=1) (nullable): `table.column` entries
 *   (tally_sensitive_columns_parse())
 *
 * Sets the columns whose values never reach the model: `query_database`
 * and `create_chart` replace them, and the values derived from them, by
 * `[redacted]` (docs/ledger.md §2). Takes effect with the next turn.
 */
void
tally_agent_set_sensitive_columns (TallyAgent         *self,
                                   const char * const *columns)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  g_strfreev (self->sensitive_columns);
  self->sensitive_columns = g_strdupv ((char **) columns);
}

/**
 * tally_agent_get_sensitive_columns:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none) (array zero-terminated=1) (nullable): the
 *   sensitive columns, or %NULL for none
 */
const char * const *
tally_agent_get_sensitive_columns (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);

  return (const char * const *) self->sensitive_columns;
}

/* The sensitive columns of a turn: those set on the agent and those of the
 * database's profile file (docs/ledger.md §2), read afresh for every turn.
 * A file that cannot be read or parsed fails the turn: no query runs with
 * a list the analyst did not mean. */
gboolean
tally_agent_dup_turn_sensitive (TallyAgent   *self,
                                char       ***columns,
                                GError      **error)
{
  g_autofree char *dir = tally_agent_dup_profile_dir (self);
  g_autofree char *text = NULL;
  g_auto(GStrv) marked = NULL;
  g_autoptr(GError) local_error = NULL;

  *columns = NULL;
  if (dir != NULL)
    text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS, &local_error);

  if (local_error == NULL && text != NULL)
    marked = tally_sensitive_columns_parse (text, &local_error);

  if (local_error != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "The sensitive columns of this database (%s/%s) cannot be used: %s",
                   dir, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS, local_error->message);
      return FALSE;
    }

  *columns = tally_sensitive_columns_merge ((const char * const *) self->sensitive_columns,
                                            (const char * const *) marked);
  return TRUE;
}

/* Keeps a tool result's origin (the `origin` of its tool_result event)
 * until the request that sends it. */
void
tally_agent_ledger_note_origin (TallyAgent *self,
                                const char *tool_id,
                                JsonObject *origin)
{
  if (self->ledger_origins == NULL)
    self->ledger_origins = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                  (GDestroyNotify) json_object_unref);

  g_hash_table_insert (self->ledger_origins, g_strdup (tool_id), json_object_ref (origin));
}

/* The name of the tool a tool_use id called, from the conversation. */
static char *
dup_tool_name (TallyAgent *self,
               const char *tool_id)
{
  guint n = tally_conversation_get_n_messages (self->conversation);

  for (guint m = n; m-- > 0;)
    {
      GPtrArray *blocks;

      if (!g_str_equal (tally_conversation_get_role (self->conversation, m), "assistant"))
        continue;

      blocks = tally_conversation_get_blocks (self->conversation, m);
      for (guint b = 0; b < blocks->len; b++)
        {
          g_autoptr(JsonObject) block = tally_conversation_parse_tool_use (g_ptr_array_index (blocks, b));

          if (block != NULL && g_strcmp0 (tally_json_object_get_string (block, "id", NULL), tool_id) == 0)
            return g_strdup (tally_json_object_get_string (block, "name", NULL));
        }
    }

  return NULL;
}

static void
add_unique (JsonArray  *array,
            const char *text)
{
  for (guint i = 0; i < json_array_get_length (array); i++)
    if (g_strcmp0 (json_array_get_string_element (array, i), text) == 0)
      return;

  json_array_add_string_element (array, text);
}

/* One entry of `results`: rows, bytes, tables, columns, redactions. */
static JsonObject *
ledger_entry (TallyAgent *self,
              JsonObject *block,
              gsize       bytes)
{
  const char *tool_id = tally_json_object_get_string (block, "tool_use_id", "");
  g_autofree char *name = dup_tool_name (self, tool_id);
  JsonObject *origin = self->ledger_origins ? g_hash_table_lookup (self->ledger_origins, tool_id) : NULL;
  JsonObject *entry = json_object_new ();
  JsonArray *tables = json_array_new ();
  JsonArray *columns = json_array_new ();

  json_object_set_string_member (entry, "tool_id", tool_id);
  tally_json_object_set_string_or_null (entry, "tool_name", name);
  json_object_set_boolean_member (entry, "is_error", json_object_get_boolean_member_with_default (block, "is_error", FALSE));
  json_object_set_int_member (entry, "bytes", (gint64) bytes);

  if (origin != NULL)
    {
      JsonArray *reads = tally_json_object_get_array (origin, "reads");

      json_object_set_int_member (entry, "rows", json_object_get_int_member_with_default (origin, "rows", 0));
      for (guint i = 0; reads != NULL && i < json_array_get_length (reads); i++)
        {
          const char *read = json_array_get_string_element (reads, i);
          const char *dot = read ? strrchr (read, '.') : NULL;

          if (dot == NULL)
            continue;
          add_unique (columns, read);
          {
            g_autofree char *table = g_strndup (read, dot - read);

            add_unique (tables, table);
          }
        }
      json_object_set_int_member (entry, "redactions",
                                  json_object_get_int_member_with_default (origin, "redactions", 0));
    }
  else
    {
      json_object_set_null_member (entry, "rows");
      json_object_set_int_member (entry, "redactions", 0);
    }

  json_object_set_array_member (entry, "tables", tables);
  json_object_set_array_member (entry, "columns", columns);
  return entry;
}

/* Emits the `request_sent` event of the request @body about to go out:
 * the tool results of the last user message that no earlier request of
 * this agent carried. */
void
tally_agent_ledger_emit (GTask  *task,
                         GBytes *body)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  guint n = tally_conversation_get_n_messages (self->conversation);
  JsonArray *results = json_array_new ();
  JsonObject *event;

  if (self->ledger_sent == NULL)
    self->ledger_sent = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (n > 0 && g_str_equal (tally_conversation_get_role (self->conversation, n - 1), "user"))
    {
      GPtrArray *blocks = tally_conversation_get_blocks (self->conversation, n - 1);

      for (guint b = 0; b < blocks->len; b++)
        {
          const char *text = g_ptr_array_index (blocks, b);
          g_autoptr(JsonNode) node = json_from_string (text, NULL);
          JsonObject *block = node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
          const char *tool_id;

          if (block == NULL || g_strcmp0 (tally_json_object_get_string (block, "type", NULL), "tool_result") != 0)
            continue;

          tool_id = tally_json_object_get_string (block, "tool_use_id", "");
          if (g_hash_table_contains (self->ledger_sent, tool_id))
            continue;

          g_hash_table_add (self->ledger_sent, g_strdup (tool_id));
          json_array_add_object_element (results, ledger_entry (self, block, strlen (text)));
          if (self->ledger_origins != NULL)
            g_hash_table_remove (self->ledger_origins, tool_id);
        }
    }

  event = tally_event_new (TALLY_EVENT_REQUEST_SENT);
  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "bytes", (gint64) g_bytes_get_size (body));
  json_object_set_array_member (event, "results", results);
  turn_emit (task, event);
}
