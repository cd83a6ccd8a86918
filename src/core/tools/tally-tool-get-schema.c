/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-get-schema.h"
#include "tally-pg-query.h"
#include "tally-schema.h"
#include "tally-tool-private.h"

#include <stdarg.h>
#include <string.h>

/**
 * TallyToolGetSchema:
 *
 * The `get_schema` tool: describes the analyst's database — every table
 * and view with its columns (name, declared type, primary key, NOT NULL),
 * foreign keys, indexes and, for tables, the number of rows.
 *
 * Input (docs/architecture.md §8.1): `{table?}`. The database is opened
 * read-only exactly as for `query_database`.
 *
 * Output, one block per table:
 * |[
 * TABLE Album (347 rows)
 *   AlbumId INTEGER PK NOT NULL
 *   Title NVARCHAR(160) NOT NULL
 *   ArtistId INTEGER NOT NULL -> Artist(ArtistId)
 *   index IFK_AlbumArtistId (ArtistId)
 * ]|
 */
struct _TallyToolGetSchema
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolGetSchema, tally_tool_get_schema, TALLY_TYPE_TOOL)

static char *
quote_identifier (const char *name)
{
  g_autoptr(GString) quoted = g_string_new ("\"");

  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');

  return g_string_free (g_steal_pointer (&quoted), FALSE);
}

static const char *
column_text (sqlite3_stmt *stmt,
             int           column)
{
  const char *text = (const char *) sqlite3_column_text (stmt, column);

  return text ? text : "";
}

/* Runs a statement and hands every row to the caller; finalizes it. */
typedef gboolean (*RowFunc) (sqlite3_stmt *stmt,
                             gpointer      user_data,
                             GError      **error);

/* @format and its arguments make the SQL. */
static G_GNUC_PRINTF (5, 6) gboolean
for_each_row (TallyToolDatabase  *database,
              RowFunc             func,
              gpointer            user_data,
              GError            **error,
              const char         *format,
              ...)
{
  g_autofree char *sql = NULL;
  sqlite3_stmt *stmt;
  va_list args;
  int rc;

  va_start (args, format);
  sql = g_strdup_vprintf (format, args);
  va_end (args);

  stmt = tally_tool_database_prepare (database, sql, error);
  if (stmt == NULL)
    return FALSE;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      if (!func (stmt, user_data, error))
        {
          sqlite3_finalize (stmt);
          return FALSE;
        }
    }

  if (!tally_tool_database_set_step_error (database, rc, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  sqlite3_finalize (stmt);
  return TRUE;
}

static gboolean
collect_column (sqlite3_stmt  *stmt,
                gpointer       user_data,
                GError       **error)
{
  TallySchemaTable *table = user_data;
  TallySchemaColumn *column;

  /* PRAGMA table_info: cid, name, type, notnull, dflt_value, pk; a column
   * of the primary key is marked here and, for a key over several
   * columns, moved to a line of its own in describe_object(). */
  column = tally_schema_table_add_column (table, column_text (stmt, 1), column_text (stmt, 2),
                                          sqlite3_column_int (stmt, 3) != 0);
  column->primary = sqlite3_column_int (stmt, 5) > 0;

  return TRUE;
}

/* PRAGMA foreign_key_list: id, seq, table, from, to, on_update,
 * on_delete, match; one row per column of a key, whose first column has
 * seq 0. A key is collected as an array of the table it references, then
 * the from and to names of each column (to is %NULL when the key
 * references that table's primary key). */
static gboolean
collect_foreign_key (sqlite3_stmt  *stmt,
                     gpointer       user_data,
                     GError       **error)
{
  GPtrArray *keys = user_data;
  GPtrArray *key;

  if (keys->len == 0 || sqlite3_column_int (stmt, 1) == 0)
    {
      key = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (key, g_strdup (column_text (stmt, 2)));
      g_ptr_array_add (keys, key);
    }

  key = g_ptr_array_index (keys, keys->len - 1);
  g_ptr_array_add (key, g_strdup (column_text (stmt, 3)));
  g_ptr_array_add (key, sqlite3_column_type (stmt, 4) != SQLITE_NULL ?
                        g_strdup (column_text (stmt, 4)) : NULL);

  return TRUE;
}

static char *
join_names (GPtrArray *names)
{
  g_autoptr(GString) joined = g_string_new (NULL);

  for (guint i = 0; i < names->len; i++)
    {
      if (i > 0)
        g_string_append (joined, ", ");
      g_string_append (joined, g_ptr_array_index (names, i));
    }

  return g_string_free (g_steal_pointer (&joined), FALSE);
}

/* A key on one column is shown on its column, a key on several columns as
 * a line: `foreign key (a, b) -> Other(x, y)`. */
static void
add_foreign_key (TallySchemaTable *table,
                 GPtrArray        *key)
{
  const char *target = g_ptr_array_index (key, 0);
  guint n_columns = (key->len - 1) / 2;
  g_autoptr(GString) from = g_string_new (NULL);
  g_autoptr(GString) to = g_string_new (NULL);
  g_autofree char *reference = NULL;
  TallySchemaColumn *column;

  for (guint i = 0; i < n_columns; i++)
    {
      const char *to_name = g_ptr_array_index (key, 2 + 2 * i);

      g_string_append_printf (from, "%s%s", i > 0 ? ", " : "",
                              (const char *) g_ptr_array_index (key, 1 + 2 * i));
      if (to_name != NULL)
        g_string_append_printf (to, "%s%s", to->len > 0 ? ", " : "", to_name);
    }

  reference = to->len > 0 ? g_strdup_printf ("%s(%s)", target, to->str) : g_strdup (target);
  if (n_columns > 1)
    {
      tally_schema_table_add_line (table, "foreign key (%s) -> %s", from->str, reference);
      return;
    }

  column = tally_schema_table_find_column (table, from->str, TRUE);
  if (column != NULL && column->reference == NULL)
    column->reference = g_steal_pointer (&reference);
}

typedef struct {
  TallyToolDatabase *database;
  GCancellable      *cancellable;
  TallySchemaTable  *table;       /* the one being described */
} Describe;

static gboolean
collect_name (sqlite3_stmt  *stmt,
              gpointer       user_data,
              GError       **error)
{
  GPtrArray *names = user_data;

  /* PRAGMA index_info: seqno, cid, name (NULL for an expression) */
  if (sqlite3_column_type (stmt, 2) == SQLITE_NULL)
    g_ptr_array_add (names, g_strdup ("<expression>"));
  else
    g_ptr_array_add (names, g_strdup (column_text (stmt, 2)));

  return TRUE;
}

/* PRAGMA index_list: seq, name, unique, origin, partial; each index
 * becomes a line of the table, with its columns from PRAGMA index_info. */
static gboolean
add_index (sqlite3_stmt  *stmt,
           gpointer       user_data,
           GError       **error)
{
  Describe *describe = user_data;
  const char *name = column_text (stmt, 1);
  const char *origin = column_text (stmt, 3);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *quoted = NULL;
  g_autofree char *joined = NULL;

  /* The primary key's own index says nothing new. */
  if (g_strcmp0 (origin, "pk") == 0)
    return TRUE;

  quoted = quote_identifier (name);
  if (!for_each_row (describe->database, collect_name, names, error,
                     "PRAGMA index_info(%s)", quoted))
    return FALSE;

  joined = join_names (names);
  /* A UNIQUE constraint's automatic index is named by SQLite, not by
   * the schema's author: show it as the constraint. */
  if (g_strcmp0 (origin, "u") == 0)
    tally_schema_table_add_line (describe->table, "unique (%s)", joined);
  else
    tally_schema_table_add_line (describe->table, "%sindex %s (%s)",
                                 sqlite3_column_int (stmt, 2) ? "unique " : "", name, joined);

  return TRUE;
}

static gboolean
count_rows (TallyToolDatabase  *database,
            const char         *quoted,
            gint64             *count,
            GError            **error)
{
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s", quoted);
  sqlite3_stmt *stmt = tally_tool_database_prepare (database, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;

  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *count = sqlite3_column_int64 (stmt, 0);

  if (!tally_tool_database_set_step_error (database, rc, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  sqlite3_finalize (stmt);
  return TRUE;
}

/* The primary key over several columns is a line, not a mark on each of
 * its columns (in column order, as SQLite's PRAGMA lists them). */
static void
move_composite_key (TallySchemaTable *table)
{
  g_autoptr(GPtrArray) pk_names = g_ptr_array_new ();
  g_autofree char *joined = NULL;

  for (guint i = 0; i < table->columns->len; i++)
    {
      TallySchemaColumn *column = g_ptr_array_index (table->columns, i);

      if (column->primary)
        g_ptr_array_add (pk_names, column->name);
    }

  if (pk_names->len <= 1)
    return;

  for (guint i = 0; i < table->columns->len; i++)
    ((TallySchemaColumn *) g_ptr_array_index (table->columns, i))->primary = FALSE;

  joined = join_names (pk_names);
  tally_schema_table_add_line (table, "primary key (%s)", joined);
}

/* A TallySchemaFillFunc: SQLite's tables are read one by one, and only
 * those the text shows. */
static gboolean
describe_object (TallySchemaTable  *table,
                 gpointer           user_data,
                 GError           **error)
{
  Describe *describe = user_data;
  TallyToolDatabase *database = describe->database;
  g_autofree char *quoted = quote_identifier (table->name);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GError) count_error = NULL;
  gint64 count = 0;

  if (g_cancellable_set_error_if_cancelled (describe->cancellable, error))
    return FALSE;

  if (!for_each_row (database, collect_column, table, error, "PRAGMA table_info(%s)", quoted))
    return FALSE;
  move_composite_key (table);

  if (table->kind != TALLY_SCHEMA_TABLE)
    return TRUE;

  /* The table's lines: its keys, then its indexes. */
  if (!for_each_row (database, collect_foreign_key, keys, error,
                     "PRAGMA foreign_key_list(%s)", quoted))
    return FALSE;
  for (guint k = 0; k < keys->len; k++)
    add_foreign_key (table, g_ptr_array_index (keys, k));

  describe->table = table;
  if (!for_each_row (database, add_index, describe, error, "PRAGMA index_list(%s)", quoted))
    return FALSE;

  /* A table whose rows cannot be counted (say, a virtual table whose
   * module is missing) is still described. */
  if (count_rows (database, quoted, &count, &count_error))
    {
      g_autofree char *text = tally_format_count ((gint64) count, TALLY_GROUPING_COMMA);

      table->rows = g_strdup_printf ("%s %s", text, count == 1 ? "row" : "rows");
    }
  else if (g_error_matches (count_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, g_steal_pointer (&count_error));
      return FALSE;
    }
  else
    table->rows = g_strdup_printf ("rows not counted: %s", count_error->message);

  return TRUE;
}

static gboolean
collect_object (sqlite3_stmt  *stmt,
                gpointer       user_data,
                GError       **error)
{
  GPtrArray *tables = user_data;
  gboolean is_view = g_strcmp0 (column_text (stmt, 1), "view") == 0;

  g_ptr_array_add (tables, tally_schema_table_new (column_text (stmt, 0),
                                                   is_view ? TALLY_SCHEMA_VIEW : TALLY_SCHEMA_TABLE));

  return TRUE;
}

static char *
schema_run (TallyTool               *tool,
            const TallyToolContext  *context,
            JsonObject              *input,
            GCancellable            *cancellable,
            GError                 **error)
{
  g_autoptr(TallyToolDatabase) database = NULL;
  g_autoptr(GPtrArray) tables = NULL;
  g_autofree char *base = NULL;
  Describe describe;
  const char *table;

  if (!tally_tool_input_get_string (input, "table", FALSE, &table, error))
    return NULL;

  if (table != NULL && table[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`table` must not be empty when given");
      return NULL;
    }

  /* PostgreSQL: from the catalog (docs/postgresql.md). */
  if (tally_pg_conninfo_is (context ? context->database_path : NULL))
    return tally_pg_describe_schema (context->database_path, table, cancellable, error);

  database = tally_tool_database_open (context, cancellable, error);
  if (database == NULL)
    return NULL;

  /* Tables first, then views, each by name; SQLite's own tables
   * (sqlite_sequence, sqlite_stat1) and Tally's (the ledger of imported
   * data files, docs/data-files.md §6) are left out. */
  tables = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_schema_table_free);
  if (!for_each_row (database, collect_object, tables, error,
                     "SELECT name, type FROM sqlite_master "
                     "WHERE type IN ('table', 'view') "
                     "AND name NOT LIKE 'sqlite\\_%%' ESCAPE '\\' "
                     "AND name NOT LIKE '\\_tally\\_%%' ESCAPE '\\' "
                     "ORDER BY type, name"))
    return NULL;

  /* Names in SQLite are case-insensitive (for ASCII). */
  base = g_path_get_basename (context->database_path);
  describe.database = database;
  describe.cancellable = cancellable;
  describe.table = NULL;
  return tally_schema_dup_text (tables, table, base, "", describe_object, &describe, error);
}

static void
tally_tool_get_schema_class_init (TallyToolGetSchemaClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "get_schema";
  tool_class->description =
    "Describe the analyst's database: every table and view with its columns "
    "(name, declared type, PK for the primary key, NOT NULL), foreign keys "
    "(shown as `column -> OtherTable(column)`), indexes, and the number of rows "
    "in each table. Pass `table` to describe just one table or view. Call this "
    "before writing SQL for query_database so that table and column names are "
    "right the first time.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"table\":{\"type\":\"string\","
    "\"description\":\"Describe only this table or view (default: all of them).\"}"
    "}}";
  tool_class->read_only = TRUE;
  tool_class->run = schema_run;
}

static void
tally_tool_get_schema_init (TallyToolGetSchema *self)
{
}

/**
 * tally_tool_get_schema_new:
 *
 * Creates the `get_schema` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_get_schema_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_GET_SCHEMA, NULL);
}
