/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-pg-query.h"
#include "tally-query-text.h"
#include "tally-result-origin.h"
#include "tally-schema.h"
#include "tally-sensitive-columns.h"
#include "tally-sql-select.h"
#include "tally-tool-private.h"
#include "tally-tool-query-database.h"

#include <string.h>

/* `query_database`, `create_chart` and `get_schema` on PostgreSQL
 * (docs/postgresql.md): the same caps, table text and messages as on
 * SQLite (docs/architecture.md §8), the rows coming from a #TallyPgSource. */

/* Type OIDs (pg_type.dat in PostgreSQL's sources; fixed since 7.x). */
#define OID_BOOL    16
#define OID_BYTEA   17
#define OID_INT8    20
#define OID_INT2    21
#define OID_INT4    23
#define OID_OID     26
#define OID_FLOAT4  700
#define OID_FLOAT8  701
#define OID_NUMERIC 1700

static TallyPgSource *
get_source (const char  *conninfo,
            GError     **error)
{
  if (conninfo == NULL || conninfo[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                           "No database is configured for this session");
      return NULL;
    }

  return tally_pg_source_get_shared (conninfo, error);
}

/* Column origins (docs/ledger.md §1) {{{1 */

/* The names of every table column of a server, by (table OID, attnum):
 * read once per shared source, again when a result names a table it does
 * not know. */
typedef struct
{
  GMutex      lock;
  GHashTable *names;     /* gint64 (oid << 16 | attnum) → char * "schema\ttable\tcolumn" */
  gboolean    loaded;
  gint64      loaded_at; /* monotonic µs of the last attempt */
} ColumnNames;

/* A result naming a table the names do not know reads them again, but not
 * more often than this: a table the role cannot see in the catalog must
 * not cost a catalog query per query. */
#define COLUMN_NAMES_RELOAD_US (10 * G_USEC_PER_SEC)

static void
column_names_free (gpointer data)
{
  ColumnNames *cache = data;

  g_mutex_clear (&cache->lock);
  g_clear_pointer (&cache->names, g_hash_table_unref);
  g_free (cache);
}

static gint64
column_key (guint32 oid,
            int     attnum)
{
  return ((gint64) oid << 16) | (attnum & 0xffff);
}

static gboolean
column_name_row_cb (const TallyPgColumns *columns,
                    const char * const   *values,
                    const int            *lengths,
                    gpointer              user_data)
{
  GHashTable *names = user_data;
  gint64 *key;

  (void) lengths;
  if (values == NULL || columns->n_columns < 5 || values[0] == NULL || values[1] == NULL)
    return TRUE;

  key = g_new (gint64, 1);
  *key = column_key ((guint32) g_ascii_strtoull (values[0], NULL, 10),
                     (int) g_ascii_strtoll (values[1], NULL, 10));
  g_hash_table_replace (names, key, g_strdup_printf ("%s\t%s\t%s", values[2], values[3], values[4]));
  return TRUE;
}

static GMutex column_names_lock;

/* Loads the names of @source's columns unless they are loaded (or @reload).
 * Blocking; call it before the query whose result it explains. */
static ColumnNames *
get_column_names (TallyPgSource *source,
                  gboolean       reload,
                  GCancellable  *cancellable)
{
  ColumnNames *cache;

  g_mutex_lock (&column_names_lock);
  cache = g_object_get_data (G_OBJECT (source), "tally-pg-column-names");
  if (cache == NULL)
    {
      cache = g_new0 (ColumnNames, 1);
      g_mutex_init (&cache->lock);
      g_object_set_data_full (G_OBJECT (source), "tally-pg-column-names", cache, column_names_free);
    }
  g_mutex_unlock (&column_names_lock);

  g_mutex_lock (&cache->lock);
  if (!cache->loaded ||
      (reload && g_get_monotonic_time () - cache->loaded_at >= COLUMN_NAMES_RELOAD_US))
    {
      g_autoptr(GHashTable) names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
      g_autoptr(GError) error = NULL;

      if (tally_pg_source_query (source,
                                 "SELECT a.attrelid::bigint, a.attnum, n.nspname, c.relname, a.attname "
                                 "FROM pg_catalog.pg_attribute a "
                                 "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
                                 "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                                 "WHERE a.attnum > 0 AND NOT a.attisdropped",
                                 0, column_name_row_cb, names, cancellable, &error))
        {
          g_clear_pointer (&cache->names, g_hash_table_unref);
          cache->names = g_steal_pointer (&names);
        }
      else
        g_debug ("The column names could not be read: %s", error->message);
      /* Tried: until a reload, columns without a name count as derived. */
      cache->loaded = TRUE;
      cache->loaded_at = g_get_monotonic_time ();
    }
  g_mutex_unlock (&cache->lock);

  return cache;
}

/* Whether @sql holds the name of a marked table or column anywhere, as a
 * substring (ignoring ASCII case): the crude check for what cannot be
 * split, on the side of finding too much. A Unicode-escaped identifier
 * (U&"…") can spell any name, and the functions that run query text or
 * dump tables (query_to_xml(), ts_stat(), …) and the statistics views
 * (pg_stats) read what the text does not name, so with marked columns
 * they count as a mention. */
static gboolean
mentions_marked (const char         *sql,
                 const char * const *marked)
{
  g_autofree char *lower = g_ascii_strdown (sql, -1);

  if (marked != NULL && marked[0] != NULL &&
      (strstr (lower, "u&\"") != NULL || strstr (lower, "_to_xml") != NULL ||
       strstr (lower, "ts_stat") != NULL || strstr (lower, "ts_rewrite") != NULL ||
       strstr (lower, "crosstab") != NULL || strstr (lower, "dblink") != NULL ||
       strstr (lower, "pg_stat") != NULL))
    return TRUE;

  for (guint i = 0; marked != NULL && marked[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (marked[i], ".", 3);
      guint n = g_strv_length (parts);
      g_autofree char *table = g_ascii_strdown (parts[n - 2], -1);
      g_autofree char *name = g_ascii_strdown (parts[n - 1], -1);

      if (strstr (lower, table) != NULL || strstr (lower, name) != NULL)
        return TRUE;
    }

  return FALSE;
}

/* The origin of each column of a result: direct origins by name, derived
 * columns by the text rule (docs/ledger.md §3). Sets *@unknown when a
 * column names a table the cache does not know. */
static TallyResultOrigin *
pg_origin (ColumnNames          *cache,
           const TallyPgColumns *columns,
           const char           *sql,
           const char * const   *marked,
           gboolean             *unknown)
{
  g_autoptr(TallyResultOrigin) origin = tally_result_origin_new ();
  g_autoptr(TallySqlSelect) select = NULL;
  g_autofree gboolean *flags = NULL;
  gboolean touches = FALSE;
  gboolean in_doubt;

  g_mutex_lock (&cache->lock);
  for (guint i = 0; i < columns->n_columns; i++)
    {
      TallyOriginColumn *column = tally_result_origin_add_column (origin, columns->names[i]);
      gint64 key;
      const char *name;

      if (columns->table_oids == NULL || columns->table_oids[i] == 0 || columns->table_columns[i] <= 0)
        continue;

      key = column_key (columns->table_oids[i], columns->table_columns[i]);
      name = cache->names != NULL ? g_hash_table_lookup (cache->names, &key) : NULL;
      if (name == NULL)
        {
          /* Fail closed: an unknown table's column counts as derived. */
          *unknown = TRUE;
          continue;
        }

      {
        g_auto(GStrv) parts = g_strsplit (name, "\t", 3);

        tally_origin_column_set_direct (column, parts[0], parts[1], parts[2]);
        column->redacted = tally_sensitive_columns_match (marked, parts[0], parts[1], parts[2]);
        tally_result_origin_add_read (origin, g_ptr_array_index (column->sources, 0));
      }
    }
  g_mutex_unlock (&cache->lock);

  if (marked == NULL || marked[0] == NULL)
    return g_steal_pointer (&origin);

  select = tally_sql_select_parse (sql, NULL);
  if (select != NULL)
    flags = tally_sql_select_text_taint (select, marked, &touches);
  else
    /* Not a SELECT we can split (VALUES, TABLE, EXPLAIN, SHOW): any
     * mention of a marked name taints every derived column. */
    touches = mentions_marked (sql, marked);

  in_doubt = select == NULL || select->compound || select->items->len != columns->n_columns;
  for (guint i = 0; !in_doubt && i < select->items->len; i++)
    in_doubt = ((TallySqlItem *) g_ptr_array_index (select->items, i))->star;

  for (guint i = 0; touches && i < columns->n_columns; i++)
    {
      TallyOriginColumn *column = g_ptr_array_index (origin->columns, i);

      if (column->derived)
        column->redacted = in_doubt || flags[i];
    }

  return g_steal_pointer (&origin);
}

/* One redacted query {{{1 */

/* What a row callback needs to redact a result (docs/ledger.md §2); the
 * first member of the text table's and the rows' state. */
typedef struct
{
  ColumnNames        *names;
  const char         *sql;
  const char * const *marked;
  TallyResultOrigin  *origin;
  gboolean            unknown;
} Redaction;

/* Called by a row callback on the result's columns, before any row. */
static void
redaction_begin (Redaction            *redaction,
                 const TallyPgColumns *columns)
{
  redaction->origin = pg_origin (redaction->names, columns, redaction->sql,
                                 redaction->marked, &redaction->unknown);
}

/* Runs @statement (its limit of rows is @row_func's) on the shared source
 * of its connection string with @row_func, whose state @redaction is: connects, redacts a failed statement's message, gives the
 * result's origin to @origin (also on failure, %NULL when no row callback
 * ran) and reloads the column names when the result named columns it did
 * not know. Blocking. */
static gboolean
run_redacted (const TallyPgStatement  *statement,
              TallyPgRowFunc           row_func,
              Redaction               *redaction,
              GCancellable            *cancellable,
              TallyResultOrigin      **origin,
              GError                 **error)
{
  const char *sql = statement->sql;
  const char * const *marked = statement->marked;
  g_autoptr(TallyPgSource) source = get_source (statement->conninfo, error);
  gboolean ok;

  if (source == NULL || !tally_pg_source_connect (source, cancellable, error))
    return FALSE;

  redaction->names = get_column_names (source, FALSE, cancellable);
  redaction->sql = sql;
  redaction->marked = marked;
  ok = tally_pg_source_query (source, sql, statement->timeout_ms, row_func, redaction, cancellable, error);
  /* A server error can quote a value ("invalid input syntax for type
   * integer: \"…\""): when the statement touches a marked name, every
   * double-quoted run of the message is replaced (docs/ledger.md §5). */
  if (!ok && error != NULL && mentions_marked (sql, marked))
    tally_query_text_redact_error (*error, '"');
  *origin = g_steal_pointer (&redaction->origin);
  if (redaction->unknown)
    get_column_names (source, TRUE, cancellable);
  return ok;
}

/* The text table {{{1 */

typedef struct
{
  Redaction       redaction;   /* first: run_redacted() hands it to the callback */
  TallyQueryText  text;
  gboolean        header_done;
} Table;

static void
append_value (GString    *out,
              guint32     type,
              const char *value,
              int         length)
{
  if (value == NULL)
    {
      g_string_append (out, "NULL");
      return;
    }

  switch (type)
    {
    case OID_FLOAT4:
    case OID_FLOAT8:
      {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        char *end = NULL;
        double number = g_ascii_strtod (value, &end);

        /* As on SQLite: %.15g drops the binary noise (0.1 + 0.2 shows as
         * 0.3); NaN and Infinity stay as the server wrote them. */
        if (end != NULL && *end == '\0' && g_ascii_isdigit (value[value[0] == '-' ? 1 : 0]))
          {
            g_ascii_formatd (buf, sizeof buf, "%.15g", number);
            g_string_append (out, buf);
            return;
          }
      }
      break;

    case OID_BOOL:
      g_string_append (out, value[0] == 't' ? "true" : "false");
      return;

    case OID_BYTEA:
      if (length >= 2 && value[0] == '\\' && value[1] == 'x')
        {
          g_autofree char *count = tally_format_count ((length - 2) / 2, TALLY_GROUPING_COMMA);

          g_string_append_printf (out, "<bytea %s bytes>", count);
          return;
        }
      break;

    default:
      break;
    }

  tally_query_text_append_value (out, value, (gsize) length);
}

static gboolean
table_row_cb (const TallyPgColumns *columns,
              const char * const   *values,
              const int            *lengths,
              gpointer              user_data)
{
  Table *table = user_data;

  if (!table->header_done)
    {
      redaction_begin (&table->redaction, columns);
      for (guint i = 0; i < columns->n_columns; i++)
        tally_query_text_add_column (&table->text, columns->names[i]);
      tally_query_text_end_header (&table->text);
      table->header_done = TRUE;
    }

  if (values == NULL)
    return TRUE;

  if (!tally_query_text_begin_row (&table->text))
    return !table->text.count_capped;

  for (guint i = 0; i < columns->n_columns; i++)
    {
      if (tally_result_origin_is_redacted (table->redaction.origin, i))
        tally_query_text_add_redacted (&table->text);
      else
        append_value (tally_query_text_next_cell (&table->text), columns->types[i], values[i], lengths[i]);
    }
  tally_query_text_end_row (&table->text);
  return TRUE;
}

/**
 * tally_pg_query_text:
 * @conninfo: the analyst's connection string
 * @sql: one read-only statement
 * @max_rows: the most rows to show
 * @timeout_ms: the statement's time limit in milliseconds (0: the
 *   source's default)
 * @cancellable: (nullable): sends a cancel request when it fires
 * @error: return location for a #GError
 *
 * `query_database` on PostgreSQL: runs @sql through the shared
 * #TallyPgSource of @conninfo and writes the result as the SQLite path
 * does (a header, one line per row with " | " between values, NULL, the
 * row count), within %TALLY_TOOL_QUERY_DATABASE_MAX_BYTES of text. Rows
 * past the caps are counted up to 100,000 more, then the query is
 * cancelled. Blocking: call it from a worker thread.
 *
 * Errors: as tally_pg_source_query().
 *
 * Returns: (transfer full): the table text, or %NULL with @error set
 */
char *
tally_pg_query_text (const char    *conninfo,
                     const char    *sql,
                     guint          max_rows,
                     guint          timeout_ms,
                     GCancellable  *cancellable,
                     GError       **error)
{
  TallyPgStatement statement = {
    .conninfo = conninfo, .sql = sql, .max_rows = max_rows, .timeout_ms = timeout_ms,
  };

  return tally_pg_query_text_full (&statement, cancellable, NULL, error);
}

/**
 * tally_pg_query_text_full:
 * @statement: the statement, its limits and the sensitive columns
 * @cancellable: (nullable): sends a cancel request when it fires
 * @origin: (out) (optional) (transfer full): where the result's columns
 *   came from, with its rows and redactions
 * @error: return location for a #GError
 *
 * tally_pg_query_text() with the sensitive columns: the values of a marked
 * column, and of a derived column the text rule taints, are written as
 * `[redacted]` (docs/ledger.md §2, §3). Column origins come from
 * PQftable()/PQftablecol() and the catalog, read once per connection
 * string. Blocking.
 *
 * Errors: as tally_pg_source_query().
 *
 * Returns: (transfer full): the table text, or %NULL with @error set
 */
char *
tally_pg_query_text_full (const TallyPgStatement  *statement,
                          GCancellable            *cancellable,
                          TallyResultOrigin      **origin,
                          GError                 **error)
{
  g_autoptr(TallyResultOrigin) made = NULL;
  Table table = { 0 };
  char *text;

  g_return_val_if_fail (statement != NULL, NULL);

  tally_query_text_init (&table.text, statement->max_rows);
  if (!run_redacted (statement, table_row_cb, &table.redaction, cancellable, &made, error))
    {
      tally_query_text_clear (&table.text);
      return NULL;
    }

  text = tally_query_text_finish (&table.text);
  if (made != NULL)
    {
      made->rows = (gint64) table.text.shown;
      made->redactions = table.text.redactions;
    }
  if (origin != NULL)
    *origin = g_steal_pointer (&made);

  return text;
}

/* Rows as data {{{1 */

typedef struct
{
  Redaction     redaction;   /* first: run_redacted() hands it to the callback */
  JsonArray    *rows;
  GStrvBuilder *names;
  guint         max_rows;
  gboolean      more;
  gboolean      have_names;
} Fetch;

static JsonNode *
value_to_node (guint32     type,
               const char *value)
{
  JsonNode *node = json_node_alloc ();

  if (value == NULL)
    return json_node_init_null (node);

  switch (type)
    {
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
    case OID_OID:
      return json_node_init_int (node, g_ascii_strtoll (value, NULL, 10));

    case OID_FLOAT4:
    case OID_FLOAT8:
    case OID_NUMERIC:
      {
        char *end = NULL;
        double number = g_ascii_strtod (value, &end);

        /* NaN and Infinity have no JSON form: they stay text. */
        if (end != NULL && *end == '\0' && g_ascii_isdigit (value[value[0] == '-' ? 1 : 0]))
          return json_node_init_double (node, number);
      }
      break;

    case OID_BOOL:
      return json_node_init_boolean (node, value[0] == 't');

    default:
      break;
    }

  return json_node_init_string (node, value);
}

static gboolean
fetch_row_cb (const TallyPgColumns *columns,
              const char * const   *values,
              const int            *lengths,
              gpointer              user_data)
{
  Fetch *fetch = user_data;
  JsonArray *row;

  (void) lengths;
  if (!fetch->have_names)
    {
      for (guint i = 0; i < columns->n_columns; i++)
        g_strv_builder_add (fetch->names, columns->names[i]);
      redaction_begin (&fetch->redaction, columns);
      fetch->have_names = TRUE;
    }

  if (values == NULL)
    return TRUE;

  if (json_array_get_length (fetch->rows) >= fetch->max_rows)
    {
      fetch->more = TRUE;
      return FALSE;
    }

  row = json_array_sized_new (columns->n_columns);
  for (guint i = 0; i < columns->n_columns; i++)
    {
      if (tally_result_origin_is_redacted (fetch->redaction.origin, i))
        json_array_add_string_element (row, TALLY_SENSITIVE_REDACTED);
      else
        json_array_add_element (row, value_to_node (columns->types[i], values[i]));
    }
  json_array_add_array_element (fetch->rows, row);
  return TRUE;
}

/**
 * tally_pg_query_fetch_rows:
 * @statement: the statement, its limits and the sensitive columns
 * @cancellable: (nullable): sends a cancel request when it fires
 * @error: return location for a #GError
 *
 * tally_tool_query_database_fetch_rows() on PostgreSQL, for
 * `create_chart`: integers, floating-point and numeric values become JSON
 * numbers, booleans booleans, everything else text. Past `max_rows` the
 * statement is cancelled, not read, and the result's `more` is set.
 * Blocking.
 *
 * Errors: as tally_pg_source_query().
 *
 * Returns: (transfer full) (nullable): the rows and column names, or %NULL
 *   with @error set
 */
TallyQueryRows *
tally_pg_query_fetch_rows (const TallyPgStatement  *statement,
                           GCancellable            *cancellable,
                           GError                 **error)
{
  g_autoptr(TallyQueryRows) result = NULL;
  g_autoptr(GStrvBuilder) names = NULL;
  g_autoptr(TallyResultOrigin) origin = NULL;
  Fetch fetch = { 0 };

  g_return_val_if_fail (statement != NULL, NULL);

  result = tally_query_rows_new ();
  names = g_strv_builder_new ();
  fetch.rows = result->rows;
  fetch.names = names;
  fetch.max_rows = statement->max_rows;
  if (!run_redacted (statement, fetch_row_cb, &fetch.redaction, cancellable, &origin, error))
    return NULL;

  result->more = fetch.more;
  result->column_names = g_strv_builder_end (names);
  return g_steal_pointer (&result);
}

/* The schema {{{1 */

/* Relations the analyst sees: not the catalogs, not partitions. */
#define VISIBLE_RELATIONS \
  "c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition " \
  "AND n.nspname NOT IN ('pg_catalog', 'information_schema') " \
  "AND n.nspname NOT LIKE 'pg\\_%' "

static const char objects_sql[] =
  "SELECT c.oid, n.nspname, c.relname, c.relkind, c.reltuples::bigint, "
  "       pg_catalog.obj_description (c.oid, 'pg_class') "
  "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
  "WHERE " VISIBLE_RELATIONS
  "ORDER BY c.relkind IN ('v', 'm'), n.nspname <> 'public', n.nspname, c.relname";

static const char columns_sql[] =
  "SELECT a.attrelid, a.attname, pg_catalog.format_type (a.atttypid, a.atttypmod), "
  "       a.attnotnull, pg_catalog.col_description (a.attrelid, a.attnum) "
  "FROM pg_catalog.pg_attribute a "
  "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
  "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
  "WHERE a.attnum > 0 AND NOT a.attisdropped AND " VISIBLE_RELATIONS
  "ORDER BY a.attrelid, a.attnum";

static const char constraints_sql[] =
  "SELECT k.conrelid, k.contype, "
  "  (SELECT string_agg (a.attname, ', ' ORDER BY u.ord) "
  "   FROM unnest (k.conkey) WITH ORDINALITY AS u (num, ord) "
  "   JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.num), "
  "  CASE WHEN k.contype = 'f' THEN k.confrelid::pg_catalog.regclass::text END, "
  "  (SELECT string_agg (a.attname, ', ' ORDER BY u.ord) "
  "   FROM unnest (k.confkey) WITH ORDINALITY AS u (num, ord) "
  "   JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.num) "
  "FROM pg_catalog.pg_constraint k "
  "JOIN pg_catalog.pg_class c ON c.oid = k.conrelid "
  "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
  "WHERE k.contype IN ('p', 'f', 'u') AND " VISIBLE_RELATIONS
  "ORDER BY k.conrelid, k.contype, k.conname";

typedef struct _Schema Schema;

/* Takes one catalog row about the relation whose oid is its first value;
 * @table is that relation, %NULL while it is not known yet. */
typedef void (*RelationRowFunc) (Schema             *schema,
                                 TallySchemaTable   *table,
                                 const char * const *values);

struct _Schema
{
  GPtrArray       *tables;  /* of TallySchemaTable, in order */
  GHashTable      *by_oid;  /* oid text → TallySchemaTable (borrowed) */
  RelationRowFunc  add;     /* what the current query's rows are */
};

static gboolean
relation_row_cb (const TallyPgColumns *columns,
                 const char * const   *values,
                 const int            *lengths,
                 gpointer              user_data)
{
  Schema *schema = user_data;

  (void) columns;
  (void) lengths;
  if (values != NULL)
    schema->add (schema, g_hash_table_lookup (schema->by_oid, values[0]), values);
  return TRUE;
}

static void
add_relation (Schema             *schema,
              TallySchemaTable   *table,
              const char * const *values)
{
  g_autofree char *qualified = g_strdup_printf ("%s.%s", values[1], values[2]);
  char kind = values[3] ? values[3][0] : 'r';
  /* pg_class.reltuples: the planner's estimate, -1 when never analysed. */
  gint64 estimate = values[4] ? g_ascii_strtoll (values[4], NULL, 10) : -1;
  g_autofree char *count = tally_format_count (estimate, TALLY_GROUPING_COMMA);

  /* Names outside public are schema-qualified; both forms find it. */
  table = tally_schema_table_new (g_strcmp0 (values[1], "public") == 0 ? values[2] : qualified,
                                  kind == 'v' ? TALLY_SCHEMA_VIEW :
                                  kind == 'm' ? TALLY_SCHEMA_MATERIALIZED_VIEW :
                                  TALLY_SCHEMA_TABLE);
  table->aliases = g_new0 (char *, 3);
  table->aliases[0] = g_steal_pointer (&qualified);
  table->aliases[1] = g_strdup (values[2]);
  table->comment = g_strdup (values[5]);
  table->rows = estimate < 0 ?
                g_strdup ("rows not estimated yet: the table was never analysed") :
                g_strdup_printf ("about %s %s", count, estimate == 1 ? "row" : "rows");

  g_ptr_array_add (schema->tables, table);
  g_hash_table_insert (schema->by_oid, g_strdup (values[0]), table);
}

static void
add_column (Schema             *schema,
            TallySchemaTable   *table,
            const char * const *values)
{
  TallySchemaColumn *column;

  if (table == NULL)
    return;

  column = tally_schema_table_add_column (table, values[1], values[2],
                                          g_strcmp0 (values[3], "t") == 0);
  column->comment = g_strdup (values[4]);
}

static void
add_constraint (Schema             *schema,
                TallySchemaTable   *table,
                const char * const *values)
{
  TallySchemaColumn *column;

  if (table == NULL || values[2] == NULL)
    return;

  /* A key on one column is shown on the column, as on SQLite. */
  column = strchr (values[2], ',') == NULL ?
           tally_schema_table_find_column (table, values[2], FALSE) : NULL;

  switch (values[1][0])
    {
    case 'p':
      if (column != NULL)
        column->primary = TRUE;
      else
        tally_schema_table_add_line (table, "primary key (%s)", values[2]);
      break;

    case 'f':
      if (column != NULL && column->reference == NULL)
        column->reference = g_strdup_printf ("%s(%s)", values[3], values[4]);
      else
        tally_schema_table_add_line (table, "foreign key (%s) -> %s(%s)",
                                     values[2], values[3], values[4]);
      break;

    case 'u':
    default:
      tally_schema_table_add_line (table, "unique (%s)", values[2]);
      break;
    }
}

static gboolean
read_catalog (TallyPgSource    *source,
              Schema           *schema,
              GCancellable     *cancellable,
              GError          **error)
{
  const struct {
    const char      *sql;
    RelationRowFunc  add;
  } queries[] = {
    { objects_sql, add_relation },
    { columns_sql, add_column },
    { constraints_sql, add_constraint },
  };

  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      schema->add = queries[i].add;
      if (!tally_pg_source_query (source, queries[i].sql, 0, relation_row_cb, schema,
                                  cancellable, error))
        return FALSE;
    }

  return TRUE;
}

/**
 * tally_pg_describe_schema:
 * @conninfo: the analyst's connection string
 * @table: (nullable): one table or view to describe (`name` or
 *   `schema.name`), or %NULL for all
 * @cancellable: (nullable): sends a cancel request when it fires
 * @error: return location for a #GError
 *
 * `get_schema` on PostgreSQL, from the catalog: every table, view and
 * materialized view outside `pg_catalog`, `information_schema` and the
 * `pg_*` schemas (names outside `public` are schema-qualified), with its
 * columns (type as format_type() writes it, PK, NOT NULL, `-> table(column)`
 * for a foreign key), keys that span several columns, unique constraints,
 * comments after ` -- `, and the planner's estimated row count
 * (`pg_class.reltuples`), which the text calls "about N rows". Blocking.
 *
 * Errors: %TALLY_TOOL_ERROR_NOT_FOUND when @table names nothing (the
 * message lists what there is); otherwise as tally_pg_source_query().
 *
 * Returns: (transfer full): the description, or %NULL with @error set
 */
char *
tally_pg_describe_schema (const char    *conninfo,
                          const char    *table,
                          GCancellable  *cancellable,
                          GError       **error)
{
  g_autoptr(TallyPgSource) source = get_source (conninfo, error);
  g_autoptr(GPtrArray) tables = NULL;
  g_autoptr(GHashTable) by_oid = NULL;
  g_autofree char *name = NULL;
  g_autofree char *engine = NULL;
  g_autofree char *database = NULL;
  Schema schema = { 0 };

  if (source == NULL || !tally_pg_source_connect (source, cancellable, error))
    return NULL;

  tables = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_schema_table_free);
  by_oid = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  schema.tables = tables;
  schema.by_oid = by_oid;
  if (!read_catalog (source, &schema, cancellable, error))
    return NULL;

  name = tally_pg_source_dup_database_name (source);
  engine = tally_pg_source_dup_engine (source);
  database = g_strdup_printf ("%s (%s)", name ? name : "(default)", engine);
  return tally_schema_dup_text (tables, table, database, "; row counts are the planner's estimates",
                                NULL, NULL, error);
}

/**
 * tally_pg_dup_prompt_section:
 * @conninfo: the analyst's connection string
 *
 * The "# Data" part of the analyst's instructions (docs/protocol.md §2.1)
 * for a PostgreSQL database: it names the engine and its major version
 * (tally_pg_source_dup_engine(), known once a connection was made; the
 * CLI and the window connect before the first turn) so that the model
 * writes PostgreSQL SQL. Does not connect; the text is the same on every
 * turn once the version is known, so the prompt cache keeps hitting.
 *
 * Returns: (transfer full): the section, ending in a blank line
 */
char *
tally_pg_dup_prompt_section (const char *conninfo)
{
  g_autoptr(TallyPgSource) source = tally_pg_source_get_shared (conninfo, NULL);
  g_autofree char *engine = source ? tally_pg_source_dup_engine (source) : g_strdup ("PostgreSQL");
  g_autofree char *name = source ? tally_pg_source_dup_database_name (source) : NULL;
  g_autofree char *quoted = name ? g_strdup_printf (" \"%s\"", name) : g_strdup ("");

  return g_strdup_printf (
    "# Data\nThe analyst's database is the %s database%s on a server. Write SQL for %s "
    "(its functions, casts and date arithmetic, e.g. date_trunc, ::numeric, "
    "interval '1 day'), not SQLite. Call get_schema to learn its tables, columns and estimated "
    "row counts before writing SQL, and use query_database to run one read-only SELECT at a "
    "time. Prefer aggregates over dumping rows; results are capped.\n\n",
    engine, quoted, engine);
}
