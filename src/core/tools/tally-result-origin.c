/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-result-origin.h"

/* The origins of a query result (docs/ledger.md §1): what each column
 * came from and whether its values were redacted. The query tools fill it
 * in; tally_result_origin_to_json() is the `origin` member of the
 * `tool_result` event (docs/architecture.md §4.4). */

static void
column_free (gpointer data)
{
  TallyOriginColumn *column = data;

  g_free (column->name);
  g_free (column->schema);
  g_free (column->table);
  g_free (column->column);
  g_ptr_array_unref (column->sources);
  g_free (column);
}

/**
 * tally_result_origin_new:
 *
 * Returns: (transfer full): an origin without columns
 */
TallyResultOrigin *
tally_result_origin_new (void)
{
  TallyResultOrigin *self = g_new0 (TallyResultOrigin, 1);

  self->columns = g_ptr_array_new_with_free_func (column_free);
  self->reads = g_ptr_array_new_with_free_func (g_free);
  return self;
}

/**
 * tally_result_origin_free:
 * @self: (transfer full) (nullable): an origin
 *
 * Frees @self.
 */
void
tally_result_origin_free (TallyResultOrigin *self)
{
  if (self == NULL)
    return;

  g_ptr_array_unref (self->columns);
  g_ptr_array_unref (self->reads);
  g_free (self);
}

/**
 * tally_result_origin_add_column:
 * @self: an origin
 * @name: (nullable): the result column's name
 *
 * Adds the next result column, derived and not redacted until told
 * otherwise.
 *
 * Returns: (transfer none): the column, owned by @self
 */
TallyOriginColumn *
tally_result_origin_add_column (TallyResultOrigin *self,
                                const char        *name)
{
  TallyOriginColumn *column = g_new0 (TallyOriginColumn, 1);

  column->name = g_strdup (name ? name : "?");
  column->sources = g_ptr_array_new_with_free_func (g_free);
  column->derived = TRUE;
  g_ptr_array_add (self->columns, column);
  return column;
}

static void
add_unique (GPtrArray  *list,
            const char *name)
{
  for (guint i = 0; i < list->len; i++)
    if (g_ascii_strcasecmp (g_ptr_array_index (list, i), name) == 0)
      return;

  g_ptr_array_add (list, g_strdup (name));
}

/**
 * tally_origin_column_add_source:
 * @column: a result column
 * @source: a `table.column` name the column's values come from
 *
 * Adds @source unless the column has it already (ignoring ASCII case).
 */
void
tally_origin_column_add_source (TallyOriginColumn *column,
                                const char        *source)
{
  add_unique (column->sources, source);
}

/**
 * tally_result_origin_add_read:
 * @self: an origin
 * @read: a `table.column` the statement read
 *
 * Adds @read to @self->reads unless it is there already (ignoring ASCII
 * case).
 */
void
tally_result_origin_add_read (TallyResultOrigin *self,
                              const char        *read)
{
  add_unique (self->reads, read);
}

/**
 * tally_origin_column_set_direct:
 * @column: a result column
 * @schema: (nullable): the origin's schema
 * @table: the origin's table
 * @name: the origin's column
 *
 * Records that the column is a plain copy of @table.@name.
 */
void
tally_origin_column_set_direct (TallyOriginColumn *column,
                                const char        *schema,
                                const char        *table,
                                const char        *name)
{
  g_autofree char *source = NULL;

  g_return_if_fail (table != NULL && name != NULL);

  g_free (column->schema);
  g_free (column->table);
  g_free (column->column);
  column->schema = g_strdup (schema);
  column->table = g_strdup (table);
  column->column = g_strdup (name);
  column->derived = FALSE;

  source = g_strdup_printf ("%s.%s", table, name);
  tally_origin_column_add_source (column, source);
}

/**
 * tally_result_origin_is_redacted:
 * @self: (nullable): an origin
 * @index: a column index
 *
 * Returns: %TRUE when the values of column @index are redacted
 */
gboolean
tally_result_origin_is_redacted (TallyResultOrigin *self,
                                 guint              index)
{
  if (self == NULL || index >= self->columns->len)
    return FALSE;

  return ((TallyOriginColumn *) g_ptr_array_index (self->columns, index))->redacted;
}

/**
 * tally_result_origin_to_json:
 * @self: an origin
 *
 * The `origin` member of a `tool_result` event (docs/architecture.md
 * §4.4): `{"rows", "redactions", "reads", "columns": [{"name",
 * "sources", "derived", "redacted"}]}`.
 *
 * Returns: (transfer full): a new object
 */
JsonObject *
tally_result_origin_to_json (TallyResultOrigin *self)
{
  JsonObject *object = json_object_new ();
  JsonArray *columns = json_array_new ();

  json_object_set_int_member (object, "rows", self->rows);
  json_object_set_int_member (object, "redactions", self->redactions);
  {
    JsonArray *reads = json_array_new ();

    for (guint i = 0; i < self->reads->len; i++)
      json_array_add_string_element (reads, g_ptr_array_index (self->reads, i));
    json_object_set_array_member (object, "reads", reads);
  }

  for (guint i = 0; i < self->columns->len; i++)
    {
      TallyOriginColumn *column = g_ptr_array_index (self->columns, i);
      JsonObject *entry = json_object_new ();
      JsonArray *sources = json_array_new ();

      for (guint j = 0; j < column->sources->len; j++)
        json_array_add_string_element (sources, g_ptr_array_index (column->sources, j));

      json_object_set_string_member (entry, "name", column->name);
      json_object_set_array_member (entry, "sources", sources);
      json_object_set_boolean_member (entry, "derived", column->derived);
      json_object_set_boolean_member (entry, "redacted", column->redacted);
      json_array_add_object_element (columns, entry);
    }
  json_object_set_array_member (object, "columns", columns);

  return object;
}
