/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-registry.h"

#include "tally-tool-ask-user-question.h"
#include "tally-tool-bash.h"
#include "tally-tool-create-chart.h"
#include "tally-tool-exit-plan-mode.h"
#include "tally-tool-edit.h"
#include "tally-tool-get-schema.h"
#include "tally-tool-glob.h"
#include "tally-tool-grep.h"
#include "tally-tool-query-database.h"
#include "tally-tool-read.h"
#include "tally-tool-write.h"

/**
 * TallyToolRegistry:
 *
 * The ordered list of tools offered to the model. The order is the order
 * of the request's `tools` array, which is part of the prompt-cache
 * prefix, so it never changes between requests (nor between modes).
 */
struct _TallyToolRegistry
{
  GObject    parent_instance;

  GPtrArray *tools;
  /* The `tools` JSON text, built on first use and dropped when a tool is
   * added. */
  char      *tools_json;
};

G_DEFINE_FINAL_TYPE (TallyToolRegistry, tally_tool_registry, G_TYPE_OBJECT)

static void
tally_tool_registry_finalize (GObject *object)
{
  TallyToolRegistry *self = (TallyToolRegistry *) object;

  g_clear_pointer (&self->tools, g_ptr_array_unref);
  g_clear_pointer (&self->tools_json, g_free);

  G_OBJECT_CLASS (tally_tool_registry_parent_class)->finalize (object);
}

static void
tally_tool_registry_class_init (TallyToolRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_tool_registry_finalize;
}

static void
tally_tool_registry_init (TallyToolRegistry *self)
{
  self->tools = g_ptr_array_new_with_free_func (g_object_unref);
}

/**
 * tally_tool_registry_new:
 *
 * Creates an empty registry.
 *
 * Returns: (transfer full): a new #TallyToolRegistry
 */
TallyToolRegistry *
tally_tool_registry_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_REGISTRY, NULL);
}

/**
 * tally_tool_registry_new_default:
 *
 * Creates a registry holding the analyst's tools, in this order:
 * `query_database`, `get_schema`, `Read`, `Glob`, `Grep`, then the tools
 * that change things: `Write`, `Edit`, `Bash`, and the card-backed
 * `AskUserQuestion` and `ExitPlanMode` (the agent answers those itself).
 *
 * Returns: (transfer full): a new #TallyToolRegistry
 */
TallyToolRegistry *
tally_tool_registry_new_default (void)
{
  TallyToolRegistry *self = tally_tool_registry_new ();
  TallyTool *(*constructors[]) (void) = {
    tally_tool_query_database_new,
    tally_tool_get_schema_new,
    tally_tool_read_new,
    tally_tool_glob_new,
    tally_tool_grep_new,
    tally_tool_write_new,
    tally_tool_edit_new,
    tally_tool_bash_new,
    tally_tool_ask_user_question_new,
    tally_tool_exit_plan_mode_new,
  };

  for (guint i = 0; i < G_N_ELEMENTS (constructors); i++)
    {
      g_autoptr(TallyTool) tool = constructors[i] ();

      tally_tool_registry_add (self, tool);
    }

  /* create_chart runs its `sql` under query_database's limits. */
  {
    g_autoptr(TallyTool) chart = tally_tool_create_chart_new (tally_tool_registry_lookup (self, "query_database"));

    tally_tool_registry_add (self, chart);
  }

  return self;
}

/**
 * tally_tool_registry_add:
 * @self: a #TallyToolRegistry
 * @tool: (transfer none): a tool whose name is not in the registry yet
 *
 * Appends @tool (taking a reference). A tool whose name is already
 * registered is not added (a programming error, logged as a critical).
 */
void
tally_tool_registry_add (TallyToolRegistry *self,
                         TallyTool         *tool)
{
  g_return_if_fail (TALLY_IS_TOOL_REGISTRY (self));
  g_return_if_fail (TALLY_IS_TOOL (tool));
  g_return_if_fail (tally_tool_get_name (tool) != NULL);
  g_return_if_fail (tally_tool_registry_lookup (self, tally_tool_get_name (tool)) == NULL);

  g_ptr_array_add (self->tools, g_object_ref (tool));
  g_clear_pointer (&self->tools_json, g_free);
}

/**
 * tally_tool_registry_lookup:
 * @self: a #TallyToolRegistry
 * @name: a tool name as the model writes it (case matters)
 *
 * Returns: (transfer none) (nullable): the tool, or %NULL when there is
 *   none by that name
 */
TallyTool *
tally_tool_registry_lookup (TallyToolRegistry *self,
                            const char        *name)
{
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (self), NULL);

  if (name == NULL)
    return NULL;

  for (guint i = 0; i < self->tools->len; i++)
    {
      TallyTool *tool = g_ptr_array_index (self->tools, i);

      if (g_strcmp0 (tally_tool_get_name (tool), name) == 0)
        return tool;
    }

  return NULL;
}

/**
 * tally_tool_registry_get_n_tools:
 * @self: a #TallyToolRegistry
 *
 * Returns: the number of tools
 */
guint
tally_tool_registry_get_n_tools (TallyToolRegistry *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (self), 0);

  return self->tools->len;
}

/**
 * tally_tool_registry_get_tool:
 * @self: a #TallyToolRegistry
 * @position: index, below tally_tool_registry_get_n_tools()
 *
 * Returns: (transfer none) (nullable): the tool at @position, or %NULL
 *   when out of range
 */
TallyTool *
tally_tool_registry_get_tool (TallyToolRegistry *self,
                              guint              position)
{
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (self), NULL);

  if (position >= self->tools->len)
    return NULL;

  return g_ptr_array_index (self->tools, position);
}

static char *
build_tools_json (TallyToolRegistry *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_array (builder);

  for (guint i = 0; i < self->tools->len; i++)
    {
      TallyTool *tool = g_ptr_array_index (self->tools, i);
      g_autoptr(GError) error = NULL;
      JsonNode *schema;

      schema = json_from_string (tally_tool_get_input_schema (tool), &error);
      if (schema == NULL || !JSON_NODE_HOLDS_OBJECT (schema))
        {
          /* A broken schema is a bug in the tool; an empty object schema
           * keeps the request valid meanwhile. */
          g_critical ("Tool %s has an invalid input schema: %s",
                      tally_tool_get_name (tool), error ? error->message : "not an object");
          g_clear_pointer (&schema, json_node_unref);
          schema = json_from_string ("{\"type\":\"object\"}", NULL);
        }

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, tally_tool_get_name (tool));
      json_builder_set_member_name (builder, "description");
      json_builder_add_string_value (builder, tally_tool_get_description (tool));
      json_builder_set_member_name (builder, "input_schema");
      json_builder_add_value (builder, schema);
      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);

  return json_generator_to_data (generator, NULL);
}

/**
 * tally_tool_registry_dup_tools_json:
 * @self: a #TallyToolRegistry
 *
 * Returns the request's `tools` array as compact JSON text:
 * `[{"name": …, "description": …, "input_schema": {…}}, …]`, in registry
 * order (Messages API, "tools" parameter). The text is byte-identical on
 * every call as long as no tool is added, because it is part of the prompt
 * cache prefix.
 *
 * Returns: (transfer full): the JSON text
 */
char *
tally_tool_registry_dup_tools_json (TallyToolRegistry *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (self), NULL);

  if (self->tools_json == NULL)
    self->tools_json = build_tools_json (self);

  return g_strdup (self->tools_json);
}
