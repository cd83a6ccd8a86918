/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-pricing"

#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-core-resources.h"

#include "tally-model-table.h"
#include "tally-pricing.h"

#define PRICING_RESOURCE "/io/github/tallyapp/Tally/core/pricing.json"

static JsonObject *
pricing_table_get (void)
{
  static gsize initialized;
  static JsonObject *models;

  if (g_once_init_enter (&initialized))
    {
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;

      bytes = g_resource_lookup_data (tally_core_get_resource (), PRICING_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
      if (bytes == NULL ||
          !json_parser_load_from_data (parser, g_bytes_get_data (bytes, NULL),
                                       g_bytes_get_size (bytes), &error))
        g_error ("The bundled price table is missing or broken: %s", error->message);

      models = json_object_ref (json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                                               "models"));
      g_once_init_leave (&initialized, 1);
    }

  return models;
}

/**
 * tally_pricing_compute_cost:
 * @model: a model id or alias
 * @usage: the token counts to price
 * @cost_usd: (out): the cost in US dollars
 *
 * Prices @usage with the bundled price table (USD per million tokens;
 * `resources/pricing.json`, a snapshot of the public price list) using the
 * formula of docs/protocol.md §10.2: input at the input price, cache writes
 * at the 5 minute or 1 hour write price (all writes at the 5 minute price
 * when the API gave no breakdown, since Tally asks for the default TTL),
 * cache reads at the read price, output at the output price.
 *
 * Returns: %TRUE when the model's price is known; %FALSE (and @cost_usd
 *   set to 0) otherwise — never a made-up figure
 */
gboolean
tally_pricing_compute_cost (const char       *model,
                            const TallyUsage *usage,
                            double           *cost_usd)
{
  JsonObject *table = pricing_table_get ();
  JsonObject *price;
  gint64 write_5m, write_1h;
  double total;

  g_return_val_if_fail (usage != NULL, FALSE);
  g_return_val_if_fail (cost_usd != NULL, FALSE);

  *cost_usd = 0;
  if (model == NULL)
    return FALSE;

  if (json_object_has_member (table, model))
    price = json_object_get_object_member (table, model);
  else if (json_object_has_member (table, tally_model_table_resolve (model)))
    price = json_object_get_object_member (table, tally_model_table_resolve (model));
  else
    return FALSE;

  if (usage->cache_creation_5m >= 0 || usage->cache_creation_1h >= 0)
    {
      write_5m = MAX (usage->cache_creation_5m, 0);
      write_1h = MAX (usage->cache_creation_1h, 0);
    }
  else
    {
      write_5m = usage->cache_creation_input_tokens;
      write_1h = 0;
    }

  total = usage->input_tokens * json_object_get_double_member (price, "input")
        + write_5m * json_object_get_double_member (price, "cache_write_5m")
        + write_1h * json_object_get_double_member (price, "cache_write_1h")
        + usage->cache_read_input_tokens * json_object_get_double_member (price, "cache_read")
        + usage->output_tokens * json_object_get_double_member (price, "output");

  *cost_usd = total / 1e6;
  return TRUE;
}
