/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-schema.h"
#include "tally-tool-private.h"

#include <stdarg.h>

/* Comments are cut at this many characters, as result cells are
 * (docs/architecture.md §8). */
#define MAX_COMMENT_CHARS 200

static void
column_free (gpointer data)
{
  TallySchemaColumn *column = data;

  g_free (column->name);
  g_free (column->type);
  g_free (column->reference);
  g_free (column->comment);
  g_free (column);
}

/**
 * tally_schema_table_new:
 * @name: the name the text shows
 * @kind: table or view
 *
 * Creates the description of one table or view, with no columns yet.
 *
 * Returns: (transfer full): a new #TallySchemaTable; free it with
 *   tally_schema_table_free()
 */
TallySchemaTable *
tally_schema_table_new (const char      *name,
                        TallySchemaKind  kind)
{
  TallySchemaTable *table;

  g_return_val_if_fail (name != NULL, NULL);

  table = g_new0 (TallySchemaTable, 1);
  table->name = g_strdup (name);
  table->kind = kind;
  table->columns = g_ptr_array_new_with_free_func (column_free);
  table->lines = g_ptr_array_new_with_free_func (g_free);
  return table;
}

/**
 * tally_schema_table_free:
 * @table: (nullable) (transfer full): a #TallySchemaTable
 *
 * Frees @table with its columns and lines.
 */
void
tally_schema_table_free (TallySchemaTable *table)
{
  if (table == NULL)
    return;

  g_free (table->name);
  g_strfreev (table->aliases);
  g_free (table->rows);
  g_free (table->comment);
  g_ptr_array_unref (table->columns);
  g_ptr_array_unref (table->lines);
  g_free (table);
}

/**
 * tally_schema_table_add_column:
 * @table: a #TallySchemaTable
 * @name: the column's name
 * @type: (nullable): its declared type (%NULL: none)
 * @not_null: whether it is NOT NULL
 *
 * Appends a column to @table; the caller may then set its key, reference
 * and comment.
 *
 * Returns: (transfer none): the new column, owned by @table
 */
TallySchemaColumn *
tally_schema_table_add_column (TallySchemaTable *table,
                               const char       *name,
                               const char       *type,
                               gboolean          not_null)
{
  TallySchemaColumn *column = g_new0 (TallySchemaColumn, 1);

  column->name = g_strdup (name ? name : "");
  column->type = g_strdup (type ? type : "");
  column->not_null = not_null;
  g_ptr_array_add (table->columns, column);
  return column;
}

/**
 * tally_schema_table_find_column:
 * @table: a #TallySchemaTable
 * @name: a column name
 * @ignore_case: whether to compare ignoring ASCII case (SQLite's names are
 *   case-insensitive, PostgreSQL's quoted ones are not)
 *
 * Returns: (transfer none) (nullable): the first column of @table named
 *   @name, or %NULL
 */
TallySchemaColumn *
tally_schema_table_find_column (TallySchemaTable *table,
                                const char       *name,
                                gboolean          ignore_case)
{
  for (guint i = 0; i < table->columns->len; i++)
    {
      TallySchemaColumn *column = g_ptr_array_index (table->columns, i);

      if (ignore_case ? g_ascii_strcasecmp (column->name, name) == 0
                      : g_strcmp0 (column->name, name) == 0)
        return column;
    }

  return NULL;
}

/**
 * tally_schema_table_add_line:
 * @table: a #TallySchemaTable
 * @format: printf() format of the line, without indent or newline
 * @...: the arguments of @format
 *
 * Appends a line that the text shows after the columns, such as
 * `primary key (a, b)` or `index by_day (day)`.
 */
void
tally_schema_table_add_line (TallySchemaTable *table,
                             const char       *format,
                             ...)
{
  va_list args;

  va_start (args, format);
  g_ptr_array_add (table->lines, g_strdup_vprintf (format, args));
  va_end (args);
}

static void
append_comment (GString    *out,
                const char *comment)
{
  g_autofree char *flat = NULL;

  if (comment == NULL || comment[0] == '\0')
    return;

  flat = g_strdup (comment);
  g_strdelimit (flat, "\r\n\t", ' ');
  g_string_append (out, " -- ");
  tally_tool_append_clipped (out, flat, -1, MAX_COMMENT_CHARS);
}

/**
 * tally_schema_table_write:
 * @table: a #TallySchemaTable
 * @out: the text to append to
 *
 * Appends @table as `get_schema` shows it: a line `TABLE name (rows)`,
 * `VIEW name` or `MATERIALIZED VIEW name`, then one indented line per
 * column (`name type PK NOT NULL -> table(column)`), then the table's
 * other lines; comments follow ` -- ` on one line, cut at 200 characters.
 */
void
tally_schema_table_write (TallySchemaTable *table,
                          GString          *out)
{
  switch (table->kind)
    {
    case TALLY_SCHEMA_VIEW:
      g_string_append_printf (out, "VIEW %s", table->name);
      break;

    case TALLY_SCHEMA_MATERIALIZED_VIEW:
      g_string_append_printf (out, "MATERIALIZED VIEW %s", table->name);
      break;

    case TALLY_SCHEMA_TABLE:
    default:
      g_string_append_printf (out, "TABLE %s", table->name);
      if (table->rows != NULL)
        g_string_append_printf (out, " (%s)", table->rows);
      break;
    }
  append_comment (out, table->comment);
  g_string_append_c (out, '\n');

  for (guint i = 0; i < table->columns->len; i++)
    {
      TallySchemaColumn *column = g_ptr_array_index (table->columns, i);

      g_string_append_printf (out, "  %s", column->name);
      if (column->type[0] != '\0')
        g_string_append_printf (out, " %s", column->type);
      if (column->primary)
        g_string_append (out, " PK");
      if (column->not_null)
        g_string_append (out, " NOT NULL");
      if (column->reference != NULL)
        g_string_append_printf (out, " -> %s", column->reference);
      append_comment (out, column->comment);
      g_string_append_c (out, '\n');
    }

  for (guint i = 0; i < table->lines->len; i++)
    g_string_append_printf (out, "  %s\n", (const char *) g_ptr_array_index (table->lines, i));
}

static gboolean
table_is_named (TallySchemaTable *table,
                const char       *name,
                int             (*compare) (const char *, const char *))
{
  if (compare (table->name, name) == 0)
    return TRUE;

  for (guint i = 0; table->aliases != NULL && table->aliases[i] != NULL; i++)
    if (compare (table->aliases[i], name) == 0)
      return TRUE;

  return FALSE;
}

/* Finds a table by its name or one of its aliases: exactly first, then
 * ignoring ASCII case (SQLite's names are case-insensitive; PostgreSQL's
 * are case-sensitive once quoted, so an exact match wins). */
static TallySchemaTable *
find_table (GPtrArray  *tables,
            const char *name)
{
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < tables->len; i++)
      {
        TallySchemaTable *table = g_ptr_array_index (tables, i);

        if (table_is_named (table, name, pass == 0 ? g_strcmp0 : g_ascii_strcasecmp))
          return table;
      }

  return NULL;
}

/* The message lists the names there are for the model. */
static void
set_not_found (GPtrArray   *tables,
               const char  *name,
               GError     **error)
{
  g_autoptr(GString) message = g_string_new (NULL);

  g_string_append_printf (message, "The database has no table or view named %s. It has: ", name);
  for (guint i = 0; i < tables->len; i++)
    g_string_append_printf (message, "%s%s", i > 0 ? ", " : "",
                            ((TallySchemaTable *) g_ptr_array_index (tables, i))->name);
  if (tables->len == 0)
    g_string_append (message, "no tables at all");

  g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_NOT_FOUND, message->str);
}

/* The first line counts materialized views as views. */
static void
write_all (GPtrArray  *tables,
           const char *database,
           const char *note,
           GString    *out)
{
  guint n_tables = 0;
  guint n_views = 0;

  for (guint i = 0; i < tables->len; i++)
    {
      TallySchemaTable *table = g_ptr_array_index (tables, i);

      if (table->kind == TALLY_SCHEMA_TABLE)
        n_tables++;
      else
        n_views++;
    }

  g_string_append_printf (out, "Database %s: %u %s, %u %s%s\n", database,
                          n_tables, n_tables == 1 ? "table" : "tables",
                          n_views, n_views == 1 ? "view" : "views", note);

  for (guint i = 0; i < tables->len; i++)
    {
      g_string_append_c (out, '\n');
      tally_schema_table_write (g_ptr_array_index (tables, i), out);
    }
}

/**
 * TallySchemaFillFunc:
 * @table: a table about to be written
 * @user_data: the data given to tally_schema_dup_text()
 * @error: return location for a #GError
 *
 * Reads what the engine knows about @table (columns, keys, rows) into it,
 * for an engine that reads only the tables it writes.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */

/**
 * tally_schema_dup_text:
 * @tables: (element-type TallySchemaTable): the database's tables and
 *   views in the order to write them
 * @name: (nullable): the one table or view to describe (by name or alias,
 *   exactly, else ignoring ASCII case), or %NULL for all
 * @database: how the first line names the database
 * @note: text that ends the first line ("" for none)
 * @fill: (nullable) (scope call): called on each table before it is
 *   written, or %NULL when @tables are complete
 * @user_data: data for @fill
 * @error: return location for a #GError
 *
 * The text of `get_schema`. For one table: that table as
 * tally_schema_table_write() writes it. For all: a line `Database NAME: N
 * tables, M views` and @note, then each table after a blank line.
 *
 * Errors: %TALLY_TOOL_ERROR_NOT_FOUND when @name matches nothing (the
 * message lists the names there are, or says there are no tables at
 * all); otherwise those of @fill.
 *
 * Returns: (transfer full): the text, or %NULL with @error set
 */
char *
tally_schema_dup_text (GPtrArray            *tables,
                       const char           *name,
                       const char           *database,
                       const char           *note,
                       TallySchemaFillFunc   fill,
                       gpointer              user_data,
                       GError              **error)
{
  g_autoptr(GString) out = g_string_new (NULL);

  if (name != NULL)
    {
      TallySchemaTable *found = find_table (tables, name);

      if (found == NULL)
        {
          set_not_found (tables, name, error);
          return NULL;
        }

      if (fill != NULL && !fill (found, user_data, error))
        return NULL;
      tally_schema_table_write (found, out);
      return g_string_free (g_steal_pointer (&out), FALSE);
    }

  for (guint i = 0; fill != NULL && i < tables->len; i++)
    if (!fill (g_ptr_array_index (tables, i), user_data, error))
      return NULL;

  write_all (tables, database, note, out);
  return g_string_free (g_steal_pointer (&out), FALSE);
}
