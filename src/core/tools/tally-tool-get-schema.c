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

typedef struct {
  int        id;
  char      *table;
  GPtrArray *from;
  GPtrArray *to;
} ForeignKey;

static void
foreign_key_free (gpointer data)
{
  ForeignKey *fk = data;

  g_free (fk->table);
  g_ptr_array_unref (fk->from);
  g_ptr_array_unref (fk->to);
  g_free (fk);
}

static gboolean
collect_foreign_key (sqlite3_stmt  *stmt,
                     gpointer       user_data,
                     GError       **error)
{
  GPtrArray *keys = user_data;
  ForeignKey *fk = NULL;
  int id = sqlite3_column_int (stmt, 0);

  /* PRAGMA foreign_key_list: id, seq, table, from, to, on_update,
   * on_delete, match; the columns of one key share an id. */
  if (keys->len > 0 && ((ForeignKey *) g_ptr_array_index (keys, keys->len - 1))->id == id)
    fk = g_ptr_array_index (keys, keys->len - 1);
  else
    {
      fk = g_new0 (ForeignKey, 1);
      fk->id = id;
      fk->table = g_strdup (column_text (stmt, 2));
      fk->from = g_ptr_array_new_with_free_func (g_free);
      fk->to = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (keys, fk);
    }

  g_ptr_array_add (fk->from, g_strdup (column_text (stmt, 3)));
  if (sqlite3_column_type (stmt, 4) != SQLITE_NULL)
    g_ptr_array_add (fk->to, g_strdup (column_text (stmt, 4)));

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

static char *
describe_reference (ForeignKey *fk)
{
  g_autofree char *to = NULL;

  if (fk->to->len == 0)
    return g_strdup (fk->table);

  to = join_names (fk->to);
  return g_strdup_printf ("%s(%s)", fk->table, to);
}

typedef struct {
  char    *name;
  gboolean unique;
  char    *origin;
} Index;

static void
index_free (gpointer data)
{
  Index *index = data;

  g_free (index->name);
  g_free (index->origin);
  g_free (index);
}

static gboolean
collect_index (sqlite3_stmt  *stmt,
               gpointer       user_data,
               GError       **error)
{
  GPtrArray *indexes = user_data;
  Index *index = g_new0 (Index, 1);

  /* PRAGMA index_list: seq, name, unique, origin, partial */
  index->name = g_strdup (column_text (stmt, 1));
  index->unique = sqlite3_column_int (stmt, 2);
  index->origin = g_strdup (column_text (stmt, 3));
  g_ptr_array_add (indexes, index);

  return TRUE;
}

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

typedef struct {
  TallyToolDatabase *database;
  GCancellable      *cancellable;
} Describe;

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
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (foreign_key_free);
  g_autoptr(GPtrArray) indexes = g_ptr_array_new_with_free_func (index_free);
  g_autoptr(GError) count_error = NULL;
  gint64 count = 0;

  if (g_cancellable_set_error_if_cancelled (describe->cancellable, error))
    return FALSE;

  if (!for_each_row (database, collect_column, table, error, "PRAGMA table_info(%s)", quoted))
    return FALSE;
  move_composite_key (table);

  if (table->kind != TALLY_SCHEMA_TABLE)
    return TRUE;

  if (!for_each_row (database, collect_foreign_key, keys, error,
                     "PRAGMA foreign_key_list(%s)", quoted) ||
      !for_each_row (database, collect_index, indexes, error, "PRAGMA index_list(%s)", quoted))
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

  for (guint k = 0; k < keys->len; k++)
    {
      ForeignKey *fk = g_ptr_array_index (keys, k);
      g_autofree char *reference = describe_reference (fk);
      g_autofree char *from = NULL;
      TallySchemaColumn *column;

      /* A single-column foreign key is shown on its column. */
      if (fk->from->len == 1)
        {
          column = tally_schema_table_find_column (table, g_ptr_array_index (fk->from, 0), TRUE);
          if (column != NULL && column->reference == NULL)
            column->reference = g_steal_pointer (&reference);
          continue;
        }

      from = join_names (fk->from);
      tally_schema_table_add_line (table, "foreign key (%s) -> %s", from, reference);
    }

  for (guint x = 0; x < indexes->len; x++)
    {
      Index *index = g_ptr_array_index (indexes, x);
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      g_autofree char *index_quoted = NULL;
      g_autofree char *joined = NULL;

      /* The primary key's own index says nothing new. */
      if (g_strcmp0 (index->origin, "pk") == 0)
        continue;

      index_quoted = quote_identifier (index->name);
      if (!for_each_row (database, collect_name, names, error, "PRAGMA index_info(%s)", index_quoted))
        return FALSE;

      joined = join_names (names);
      /* A UNIQUE constraint's automatic index is named by SQLite, not by
       * the schema's author: show it as the constraint. */
      if (g_strcmp0 (index->origin, "u") == 0)
        tally_schema_table_add_line (table, "unique (%s)", joined);
      else
        tally_schema_table_add_line (table, "%sindex %s (%s)",
                                     index->unique ? "unique " : "", index->name, joined);
    }

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
