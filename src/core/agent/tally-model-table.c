/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-models"

#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-core-resources.h"

#include "tally-model-table.h"

#define MODELS_RESOURCE "/io/github/tallyapp/Tally/core/models.json"

typedef struct {
  GPtrArray  *models;   /* TallyModelInfo* */
  GHashTable *names;    /* id or alias → TallyModelInfo* (borrowed) */
  char       *default_id;
} ModelTable;

static ModelTable *
model_table_load (void)
{
  ModelTable *table = g_new0 (ModelTable, 1);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *root;
  JsonArray *models;

  table->models = g_ptr_array_new ();
  table->names = g_hash_table_new (g_str_hash, g_str_equal);

  bytes = g_resource_lookup_data (tally_core_get_resource (), MODELS_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  if (bytes == NULL ||
      !json_parser_load_from_data (parser, g_bytes_get_data (bytes, NULL),
                                   g_bytes_get_size (bytes), &error))
    g_error ("The bundled model table is missing or broken: %s", error->message);

  root = json_node_get_object (json_parser_get_root (parser));
  table->default_id = g_strdup (json_object_get_string_member (root, "default"));
  models = json_object_get_array_member (root, "models");

  for (guint i = 0; i < json_array_get_length (models); i++)
    {
      JsonObject *m = json_array_get_object_element (models, i);
      TallyModelInfo *info = g_new0 (TallyModelInfo, 1);
      JsonArray *aliases;

      info->id = g_strdup (json_object_get_string_member (m, "id"));
      info->display_name = g_strdup (json_object_get_string_member (m, "display_name"));
      info->thinking = g_str_equal (json_object_get_string_member (m, "thinking"), "manual")
        ? TALLY_THINKING_MANUAL : TALLY_THINKING_ADAPTIVE;
      info->thinking_off_explicit = g_str_equal (json_object_get_string_member (m, "thinking_off"), "disabled");
      info->max_tokens = json_object_get_int_member (m, "max_tokens");

      g_ptr_array_add (table->models, info);
      g_hash_table_insert (table->names, info->id, info);

      aliases = json_object_get_array_member (m, "aliases");
      for (guint j = 0; aliases != NULL && j < json_array_get_length (aliases); j++)
        g_hash_table_insert (table->names,
                             g_strdup (json_array_get_string_element (aliases, j)),
                             info);
    }

  return table;
}

static ModelTable *
model_table_get (void)
{
  static gsize initialized;
  static ModelTable *table;

  if (g_once_init_enter (&initialized))
    {
      table = model_table_load ();
      g_once_init_leave (&initialized, 1);
    }

  return table;
}

/**
 * tally_model_table_lookup:
 * @name: a model id or one of its aliases
 *
 * Returns: (transfer none) (nullable): the model's row, or %NULL when the
 *   bundled table does not know @name
 */
const TallyModelInfo *
tally_model_table_lookup (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);

  return g_hash_table_lookup (model_table_get ()->names, name);
}

/**
 * tally_model_table_resolve:
 * @name: a model id or alias
 *
 * Maps an alias (e.g. `sonnet`) to its model id. Unknown names are returned
 * unchanged: the API may know models that this table does not.
 *
 * Returns: (transfer none): the model id
 */
const char *
tally_model_table_resolve (const char *name)
{
  const TallyModelInfo *info;

  g_return_val_if_fail (name != NULL, NULL);

  info = tally_model_table_lookup (name);
  return info != NULL ? info->id : name;
}

/**
 * tally_model_table_get_default:
 *
 * Returns: (transfer none): the default model id (`claude-sonnet-5`)
 */
const char *
tally_model_table_get_default (void)
{
  return model_table_get ()->default_id;
}

/**
 * tally_model_table_get_n_models:
 *
 * Returns: the number of models in the bundled table
 */
guint
tally_model_table_get_n_models (void)
{
  return model_table_get ()->models->len;
}

/**
 * tally_model_table_get_model:
 * @position: an index below tally_model_table_get_n_models()
 *
 * Returns: (transfer none): the model at @position, in the table's order
 */
const TallyModelInfo *
tally_model_table_get_model (guint position)
{
  ModelTable *table = model_table_get ();

  g_return_val_if_fail (position < table->models->len, NULL);

  return g_ptr_array_index (table->models, position);
}

/**
 * tally_model_table_dup_thinking_json:
 * @model: the model id (or alias) of the request
 * @enabled: whether the analyst asked for thinking
 * @budget_tokens: the thinking budget for manual thinking, in tokens
 * @max_tokens: the request's `max_tokens`
 * @budget_used: (out) (optional): the budget actually sent, 0 when none
 *
 * Builds the request's `thinking` field as docs/protocol.md §3 describes,
 * from the bundled model table (unknown models are treated like current
 * ones: adaptive, with an explicit `disabled`):
 *
 * - manual models: `{"type":"enabled","budget_tokens":N}` with N clamped to
 *   1024 ≤ N < @max_tokens (docs/protocol.md §3);
 * - adaptive models: `{"type":"adaptive","display":"summarized"}` so the
 *   thinking text streams instead of only a signature;
 * - off: `{"type":"disabled"}`, or %NULL (leave the field out) where the
 *   model rejects `disabled`.
 *
 * Returns: (transfer full) (nullable): the JSON text, or %NULL to omit it
 */
char *
tally_model_table_dup_thinking_json (const char *model,
                                     gboolean    enabled,
                                     gint64      budget_tokens,
                                     gint64      max_tokens,
                                     gint64     *budget_used)
{
  const TallyModelInfo *info = model != NULL ? tally_model_table_lookup (model) : NULL;
  TallyThinkingStyle style = info != NULL ? info->thinking : TALLY_THINKING_ADAPTIVE;
  gboolean off_explicit = info != NULL ? info->thinking_off_explicit : TRUE;

  if (budget_used != NULL)
    *budget_used = 0;

  if (!enabled)
    return off_explicit ? g_strdup ("{\"type\":\"disabled\"}") : NULL;

  if (style == TALLY_THINKING_ADAPTIVE)
    return g_strdup ("{\"type\":\"adaptive\",\"display\":\"summarized\"}");

  budget_tokens = MAX (budget_tokens, 1024);
  if (budget_tokens >= max_tokens)
    budget_tokens = max_tokens - 1;
  if (budget_used != NULL)
    *budget_used = budget_tokens;

  return g_strdup_printf ("{\"type\":\"enabled\",\"budget_tokens\":%" G_GINT64_FORMAT "}",
                          budget_tokens);
}
