/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-chart"

#include "config.h"

#include "tally-chart-data.h"
#include "tally-chart-spec.h"

/*
 * The rows a chart is drawn from: named columns and rows of JSON scalars
 * (a missing cell and JSON null are both NULL). It comes either from a
 * spec's `data.values` (row objects) or from a query (column names, then
 * rows as arrays or as strings). Interpreting cells (numbers, dates,
 * categories) is tally_chart_new()'s job, which knows the encoding.
 */

struct _TallyChartData
{
  GObject    parent_instance;

  GPtrArray *names;  /* char* */
  GPtrArray *rows;   /* GPtrArray of JsonNode* (NULL for NULL) */
};

G_DEFINE_FINAL_TYPE (TallyChartData, tally_chart_data, G_TYPE_OBJECT)

static void
tally_chart_data_finalize (GObject *object)
{
  TallyChartData *self = (TallyChartData *) object;

  g_clear_pointer (&self->names, g_ptr_array_unref);
  g_clear_pointer (&self->rows, g_ptr_array_unref);

  G_OBJECT_CLASS (tally_chart_data_parent_class)->finalize (object);
}

static void
tally_chart_data_class_init (TallyChartDataClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tally_chart_data_finalize;
}

static void
tally_chart_data_init (TallyChartData *self)
{
  self->names = g_ptr_array_new_with_free_func (g_free);
  self->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
}

static void
clear_node (gpointer data)
{
  if (data != NULL)
    json_node_unref (data);
}

static GPtrArray *
new_row (guint n)
{
  GPtrArray *row = g_ptr_array_new_full (n, clear_node);

  g_ptr_array_set_size (row, n);
  return row;
}

/* Keeps scalars only; objects and arrays are not values a chart can show. */
static gboolean
take_cell (GPtrArray  *row,
           guint       column,
           JsonNode   *node,
           guint       row_index,
           const char *name,
           GError    **error)
{
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node))
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "row %u, column \"%s\": a cell must be a string, number, boolean or "
                   "null, not an object or array", row_index + 1, name);
      return FALSE;
    }
  g_ptr_array_index (row, column) = json_node_ref (node);
  return TRUE;
}

static gboolean
check_row_count (guint    n,
                 GError **error)
{
  if (n > TALLY_CHART_MAX_ROWS)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_TOO_MANY_ROWS,
                   "the data has %u rows; at most %d are supported: aggregate the data "
                   "first (GROUP BY in SQL)", n, TALLY_CHART_MAX_ROWS);
      return FALSE;
    }
  return TRUE;
}

/**
 * tally_chart_data_new:
 * @names: (array zero-terminated=1): the column names, in order
 *
 * An empty table; add rows with tally_chart_data_append_strings().
 *
 * Returns: (transfer full): the table
 */
TallyChartData *
tally_chart_data_new (const char * const *names)
{
  TallyChartData *self;

  g_return_val_if_fail (names != NULL, NULL);

  self = g_object_new (TALLY_TYPE_CHART_DATA, NULL);
  for (guint i = 0; names[i] != NULL; i++)
    g_ptr_array_add (self->names, g_strdup (names[i]));
  return self;
}

/**
 * tally_chart_data_new_from_columns:
 * @names: (array zero-terminated=1): the column names, in order
 * @rows: rows, each a JSON array of scalars in column order (shorter rows
 *   are padded with NULL) or an object keyed by column name
 * @error: return location for a %TALLY_CHART_ERROR error
 *
 * The table a query returns. Fails with %TALLY_CHART_ERROR_TOO_MANY_ROWS
 * beyond %TALLY_CHART_MAX_ROWS rows and with
 * %TALLY_CHART_ERROR_INVALID_SPEC for a row that is not an array or object,
 * a row longer than @names, or a cell that is an object or array.
 *
 * Returns: (transfer full) (nullable): the table, or %NULL on error
 */
TallyChartData *
tally_chart_data_new_from_columns (const char * const  *names,
                                   JsonArray           *rows,
                                   GError             **error)
{
  g_autoptr(TallyChartData) self = NULL;
  guint n_rows;

  g_return_val_if_fail (names != NULL, NULL);
  g_return_val_if_fail (rows != NULL, NULL);

  n_rows = json_array_get_length (rows);
  if (!check_row_count (n_rows, error))
    return NULL;

  self = tally_chart_data_new (names);
  for (guint r = 0; r < n_rows; r++)
    {
      JsonNode *node = json_array_get_element (rows, r);
      g_autoptr(GPtrArray) row = new_row (self->names->len);

      if (JSON_NODE_HOLDS_ARRAY (node))
        {
          JsonArray *cells = json_node_get_array (node);

          if (json_array_get_length (cells) > self->names->len)
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                           "row %u has %u cells for %u columns", r + 1,
                           json_array_get_length (cells), self->names->len);
              return NULL;
            }
          for (guint c = 0; c < json_array_get_length (cells); c++)
            if (!take_cell (row, c, json_array_get_element (cells, c), r,
                            g_ptr_array_index (self->names, c), error))
              return NULL;
        }
      else if (JSON_NODE_HOLDS_OBJECT (node))
        {
          JsonObject *object = json_node_get_object (node);

          for (guint c = 0; c < self->names->len; c++)
            {
              const char *name = g_ptr_array_index (self->names, c);

              if (!take_cell (row, c, json_object_get_member (object, name), r, name, error))
                return NULL;
            }
        }
      else
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "row %u is neither an array nor an object", r + 1);
          return NULL;
        }
      g_ptr_array_add (self->rows, g_steal_pointer (&row));
    }

  return g_steal_pointer (&self);
}

/**
 * tally_chart_data_new_from_values:
 * @values: a spec's `data.values`: an array of row objects
 * @error: return location for a %TALLY_CHART_ERROR error
 *
 * The columns are the members of the rows, in the order they first appear.
 * Fails like tally_chart_data_new_from_columns(), and for a row that is
 * not an object.
 *
 * Returns: (transfer full) (nullable): the table, or %NULL on error
 */
TallyChartData *
tally_chart_data_new_from_values (JsonArray  *values,
                                  GError    **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint n;

  g_return_val_if_fail (values != NULL, NULL);

  n = json_array_get_length (values);
  if (!check_row_count (n, error))
    return NULL;

  for (guint r = 0; r < n; r++)
    {
      JsonNode *node = json_array_get_element (values, r);
      g_autoptr(GList) members = NULL;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "`data.values` row %u is not an object", r + 1);
          return NULL;
        }
      members = json_object_get_members (json_node_get_object (node));
      for (GList *l = members; l; l = l->next)
        if (g_hash_table_add (seen, l->data))
          g_ptr_array_add (names, l->data);
    }
  g_ptr_array_add (names, NULL);

  return tally_chart_data_new_from_columns ((const char * const *) names->pdata, values, error);
}

/**
 * tally_chart_data_append_strings:
 * @self: a #TallyChartData
 * @cells: (array length=n_cells) (nullable): the row's cells as text, as a
 *   query returns them; a %NULL cell is SQL NULL
 * @n_cells: the number of cells, at most the number of columns
 * @error: return location for a %TALLY_CHART_ERROR error
 *
 * Appends one row. Text cells are read as numbers or dates later, when an
 * encoding needs them to be.
 *
 * Returns: %FALSE with %TALLY_CHART_ERROR_TOO_MANY_ROWS past
 *   %TALLY_CHART_MAX_ROWS rows, or %TALLY_CHART_ERROR_INVALID_SPEC for too
 *   many cells
 */
gboolean
tally_chart_data_append_strings (TallyChartData      *self,
                                 const char * const  *cells,
                                 guint                n_cells,
                                 GError             **error)
{
  GPtrArray *row;

  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), FALSE);
  g_return_val_if_fail (cells != NULL || n_cells == 0, FALSE);

  if (!check_row_count (self->rows->len + 1, error))
    return FALSE;
  if (n_cells > self->names->len)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "row %u has %u cells for %u columns", self->rows->len + 1, n_cells,
                   self->names->len);
      return FALSE;
    }

  row = new_row (self->names->len);
  for (guint c = 0; c < n_cells; c++)
    if (cells[c] != NULL)
      {
        JsonNode *node = json_node_new (JSON_NODE_VALUE);

        json_node_set_string (node, cells[c]);
        g_ptr_array_index (row, c) = node;
      }
  g_ptr_array_add (self->rows, row);
  return TRUE;
}

/**
 * tally_chart_data_get_n_columns:
 * @self: a #TallyChartData
 *
 * Returns: the number of columns
 */
guint
tally_chart_data_get_n_columns (TallyChartData *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), 0);
  return self->names->len;
}

/**
 * tally_chart_data_get_n_rows:
 * @self: a #TallyChartData
 *
 * Returns: the number of rows
 */
guint
tally_chart_data_get_n_rows (TallyChartData *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), 0);
  return self->rows->len;
}

/**
 * tally_chart_data_get_column_name:
 * @self: a #TallyChartData
 * @column: a column index
 *
 * Returns: (transfer none): the column's name
 */
const char *
tally_chart_data_get_column_name (TallyChartData *self,
                                  guint           column)
{
  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), NULL);
  g_return_val_if_fail (column < self->names->len, NULL);
  return g_ptr_array_index (self->names, column);
}

/**
 * tally_chart_data_find_column:
 * @self: a #TallyChartData
 * @name: a column name (compared exactly)
 *
 * Returns: the column's index, or -1 when there is none
 */
int
tally_chart_data_find_column (TallyChartData *self,
                              const char     *name)
{
  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), -1);
  g_return_val_if_fail (name != NULL, -1);

  for (guint i = 0; i < self->names->len; i++)
    if (g_str_equal (g_ptr_array_index (self->names, i), name))
      return (int) i;
  return -1;
}

/**
 * tally_chart_data_dup_column_list:
 * @self: a #TallyChartData
 *
 * Returns: (transfer full): the column names quoted and separated by
 *   commas, for error messages, or "(none)"
 */
char *
tally_chart_data_dup_column_list (TallyChartData *self)
{
  GString *out;

  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), NULL);

  if (self->names->len == 0)
    return g_strdup ("(none)");
  out = g_string_new (NULL);
  for (guint i = 0; i < self->names->len; i++)
    g_string_append_printf (out, "%s\"%s\"", i ? ", " : "",
                            (const char *) g_ptr_array_index (self->names, i));
  return g_string_free (out, FALSE);
}

/**
 * tally_chart_data_get_cell:
 * @self: a #TallyChartData
 * @row: a row index
 * @column: a column index
 *
 * Returns: (transfer none) (nullable): the cell, a JSON scalar, or %NULL
 *   for NULL
 */
JsonNode *
tally_chart_data_get_cell (TallyChartData *self,
                           guint           row,
                           guint           column)
{
  g_return_val_if_fail (TALLY_IS_CHART_DATA (self), NULL);
  g_return_val_if_fail (row < self->rows->len, NULL);
  g_return_val_if_fail (column < self->names->len, NULL);
  return g_ptr_array_index ((GPtrArray *) g_ptr_array_index (self->rows, row), column);
}
