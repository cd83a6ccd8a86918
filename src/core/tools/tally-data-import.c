/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-data-import.h"
#include "tally-data-infer.h"
#include "tally-data-reader.h"

#include <errno.h>
#include <math.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/*
 * CSV, TSV and JSON Lines files become tables of one SQLite database in
 * the workspace's `.tally/` folder, so that `query_database` and
 * `get_schema` read them like any other SQLite database. The rules (names,
 * types, errors, re-import) are docs/data-files.md; the section numbers
 * below are that file's.
 *
 * Each file is read twice, streaming: the first pass checks every record
 * and infers the columns' types, the second inserts the rows. So every
 * error in the data is found before a table exists, and all the tables of
 * one call are created and filled in one transaction, which a failure or
 * a cancel rolls back.
 */

/* Bytes read between two progress reports. */
#define PROGRESS_STEP (1024 * 1024)
/* Bytes looked at to detect the delimiter. */
#define SAMPLE_SIZE   (64 * 1024)

G_DEFINE_QUARK (tally-data-import-error-quark, tally_data_import_error)

typedef struct {
  char          *source_name;  /* the header's text or the JSON key */
  char          *name;         /* the SQL identifier */
  guint          kinds;        /* TallyDataKind flags */
  TallyDataType  type;
} Column;

typedef struct {
  char       *path;         /* absolute, resolved */
  char       *display;      /* the file's name, UTF-8, for messages */
  gboolean    json;
  gboolean    tabs;         /* a .tsv or .tab file */
  char        delimiter;
  guint64     size;
  gint64      mtime_us;
  gboolean    has_header;
  GPtrArray  *columns;      /* of Column */
  GHashTable *keys;         /* JSON key -> index + 1 */
  gint64      n_rows;
  char       *table;
  gboolean    reused;
} Source;

typedef struct {
  sqlite3                     *db;
  TallyDataImportProgressFunc  progress;
  gpointer                     progress_data;
  GCancellable                *cancellable;
  guint64                      done;
  guint64                      total;
  guint64                      reported;
  GHashTable                  *taken;   /* lower-case table names of this call */
} Import;

static void
column_free (gpointer data)
{
  Column *column = data;

  g_free (column->source_name);
  g_free (column->name);
  g_free (column);
}

static void
source_free (gpointer data)
{
  Source *source = data;

  g_free (source->path);
  g_free (source->display);
  g_clear_pointer (&source->columns, g_ptr_array_unref);
  g_clear_pointer (&source->keys, g_hash_table_unref);
  g_free (source->table);
  g_free (source);
}

/**
 * tally_data_table_free:
 * @table: (transfer full) (nullable): an imported file's description
 *
 * Frees @table.
 */
void
tally_data_table_free (TallyDataTable *table)
{
  if (table == NULL)
    return;

  g_free (table->path);
  g_free (table->table);
  g_free (table);
}

/* File names */

static const char *
data_extension (const char *path)
{
  static const char * const extensions[] = { ".csv", ".tsv", ".tab", ".jsonl", ".ndjson" };
  const char *dot = strrchr (path, '.');

  if (dot == NULL || strchr (dot, G_DIR_SEPARATOR) != NULL)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (extensions); i++)
    if (g_ascii_strcasecmp (dot, extensions[i]) == 0)
      return extensions[i];
  return NULL;
}

/**
 * tally_data_import_is_data_path:
 * @path: a file name, in the GLib file name encoding
 *
 * Whether @path names a data file by its extension (`.csv`, `.tsv`,
 * `.tab`, `.jsonl`, `.ndjson`, in any case) or is an existing folder, the
 * things `--db`, `--data` and *Open Data Files…* import rather than open
 * as a database. The file itself is not read.
 *
 * Returns: %TRUE for a data file or a folder
 */
gboolean
tally_data_import_is_data_path (const char *path)
{
  g_return_val_if_fail (path != NULL, FALSE);

  return data_extension (path) != NULL || g_file_test (path, G_FILE_TEST_IS_DIR);
}

/**
 * tally_data_import_dup_database_path:
 * @workspace: the agent's workspace folder
 *
 * The database imported files go to: `.tally/data.db` in @workspace. It is
 * created by the first import.
 *
 * Returns: (transfer full): the path
 */
char *
tally_data_import_dup_database_path (const char *workspace)
{
  g_return_val_if_fail (workspace != NULL, NULL);

  return g_build_filename (workspace, ".tally", "data.db", NULL);
}

/* Progress and errors */

static void
report_progress (Import  *import,
                 guint64  done,
                 gboolean force)
{
  if (import->progress == NULL)
    return;
  if (!force && done < import->reported + PROGRESS_STEP)
    return;

  import->reported = done;
  import->progress (MIN (done, import->total), import->total, import->progress_data);
}

/* Puts the file's name in front of an error of the reader or the parser;
 * a cancel stays as it is. */
static gboolean
fail_in (const Source  *source,
         GError       **error,
         GError        *cause)
{
  if (g_error_matches (cause, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (error, cause);
  else
    {
      g_propagate_prefixed_error (error, cause, "%s: ", source->display);
    }
  return FALSE;
}

static gboolean
fail_sqlite (sqlite3  *db,
             GError  **error)
{
  g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_DATABASE,
               "the data database refused the import: %s", sqlite3_errmsg (db));
  return FALSE;
}

static gboolean
exec (sqlite3     *db,
      const char  *sql,
      GError     **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return fail_sqlite (db, error);
  return TRUE;
}

static GInputStream *
open_source (const Source  *source,
             GCancellable  *cancellable,
             GError       **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (source->path);

  return G_INPUT_STREAM (g_file_read (file, cancellable, error));
}

/* A pass over @source, from its start: a reader of its records (with the
 * delimiter already picked) and, for JSON Lines, a parser for them. */
static TallyDataReader *
open_reader (const Source   *source,
             GCancellable   *cancellable,
             JsonParser    **parser,
             GError        **error)
{
  g_autoptr(GInputStream) stream = open_source (source, cancellable, error);

  if (stream == NULL)
    return NULL;
  if (source->json)
    *parser = json_parser_new_immutable ();
  return tally_data_reader_new (stream, source->delimiter);
}

/* Collecting the files */

static gboolean
add_source (GPtrArray   *sources,
            GHashTable  *seen,
            const char  *path,
            GError     **error)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autofree char *resolved = realpath (path, NULL);
  Source *source;

  if (resolved == NULL)
    {
      int saved = errno;
      g_autofree char *display = g_filename_display_name (path);

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cannot open %s: %s", display, g_strerror (saved));
      return FALSE;
    }
  if (g_hash_table_contains (seen, resolved))
    return TRUE;

  file = g_file_new_for_path (resolved);
  info = g_file_query_info (file,
                            G_FILE_ATTRIBUTE_STANDARD_SIZE ","
                            G_FILE_ATTRIBUTE_STANDARD_TYPE ","
                            G_FILE_ATTRIBUTE_TIME_MODIFIED ","
                            G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC,
                            G_FILE_QUERY_INFO_NONE, NULL, error);
  if (info == NULL)
    return FALSE;
  /* A FIFO or a device would block the import thread in open() or
   * read() for good, where nothing can cancel it. */
  if (g_file_info_get_file_type (info) != G_FILE_TYPE_REGULAR)
    {
      g_autofree char *display = g_filename_display_name (path);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "cannot open %s: not a regular file", display);
      return FALSE;
    }

  source = g_new0 (Source, 1);
  source->path = g_strdup (resolved);
  /* The name and the kind come from the path as given: a link named
   * sales.csv may point at a file named otherwise. */
  source->display = g_filename_display_basename (path);
  source->json = strstr (data_extension (path), "json") != NULL;
  source->tabs = g_str_equal (data_extension (path), ".tsv") || g_str_equal (data_extension (path), ".tab");
  source->size = (guint64) g_file_info_get_size (info);
  source->mtime_us =
    (gint64) g_file_info_get_attribute_uint64 (info, G_FILE_ATTRIBUTE_TIME_MODIFIED) * G_USEC_PER_SEC +
    g_file_info_get_attribute_uint32 (info, G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC);
  source->columns = g_ptr_array_new_with_free_func (column_free);
  g_hash_table_add (seen, g_steal_pointer (&resolved));
  g_ptr_array_add (sources, source);

  return TRUE;
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The data files of a folder, not its subfolders', by name; hidden files
 * are left out. */
static gboolean
add_folder (GPtrArray   *sources,
            GHashTable  *seen,
            const char  *folder,
            GError     **error)
{
  g_autoptr(GDir) dir = g_dir_open (folder, 0, error);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (dir == NULL)
    return FALSE;

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (folder, name, NULL);

      if (name[0] != '.' && data_extension (name) != NULL &&
          g_file_test (path, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (names, g_steal_pointer (&path));
    }

  if (names->len == 0)
    {
      g_autofree char *display = g_filename_display_name (folder);

      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_UNSUPPORTED,
                   "the folder %s holds no .csv, .tsv, .jsonl or .ndjson file", display);
      return FALSE;
    }

  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    if (!add_source (sources, seen, g_ptr_array_index (names, i), error))
      return FALSE;

  return TRUE;
}

static GPtrArray *
collect_sources (const char * const  *paths,
                 GError             **error)
{
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func (source_free);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; paths[i] != NULL; i++)
    {
      gboolean ok;

      if (g_file_test (paths[i], G_FILE_TEST_IS_DIR))
        ok = add_folder (sources, seen, paths[i], error);
      else if (data_extension (paths[i]) == NULL)
        {
          g_autofree char *display = g_filename_display_basename (paths[i]);

          g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_UNSUPPORTED,
                       "%s is not a data file: Tally imports .csv, .tsv, .jsonl and .ndjson files",
                       display);
          ok = FALSE;
        }
      else
        ok = add_source (sources, seen, paths[i], error);
      if (!ok)
        return NULL;
    }

  if (sources->len == 0)
    {
      g_set_error_literal (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_UNSUPPORTED,
                           "no data file was given");
      return NULL;
    }

  return g_steal_pointer (&sources);
}

/* The first pass (§2, §3, §4): checks every record and infers the
 * columns. */

static void
add_column (Source     *source,
            const char *source_name)
{
  Column *column = g_new0 (Column, 1);

  column->source_name = g_strdup (source_name);
  g_ptr_array_add (source->columns, column);
}

/* A first record is a header unless one of its fields is a number or a
 * date: such a row is data, and the columns are named column_1, …. */
static gboolean
looks_like_header (TallyDataReader *reader)
{
  for (guint i = 0; i < tally_data_reader_get_n_fields (reader); i++)
    {
      gsize length;
      const char *field = tally_data_reader_get_field (reader, i, &length);

      if (length > 0 && tally_data_classify_text (field, length, TRUE) != TALLY_DATA_KIND_TEXT)
        return FALSE;
    }
  return TRUE;
}

static void
classify_record (Source          *source,
                 TallyDataReader *reader)
{
  for (guint i = 0; i < source->columns->len; i++)
    {
      Column *column = g_ptr_array_index (source->columns, i);
      gsize length;
      const char *field = tally_data_reader_get_field (reader, i, &length);

      if (length > 0)
        column->kinds |= tally_data_classify_text (field, length, TRUE);
    }
}

static gboolean
ragged_error (Source          *source,
              TallyDataReader *reader,
              guint64          first_line,
              GError         **error)
{
  guint n_fields = tally_data_reader_get_n_fields (reader);

  g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_RAGGED,
               "%s: line %" G_GUINT64_FORMAT " has %u %s but line %" G_GUINT64_FORMAT
               " has %u; every row needs the same number of fields",
               source->display, tally_data_reader_get_line (reader),
               n_fields, n_fields == 1 ? "field" : "fields",
               first_line, source->columns->len);
  return FALSE;
}

static char
pick_delimiter (Source        *source,
                GCancellable  *cancellable,
                GError       **error)
{
  g_autoptr(GInputStream) stream = NULL;
  g_autofree char *sample = NULL;
  gsize length = 0;

  if (source->tabs)
    return '\t';

  stream = open_source (source, cancellable, error);
  if (stream == NULL)
    return '\0';
  sample = g_malloc (SAMPLE_SIZE);
  if (!g_input_stream_read_all (stream, sample, SAMPLE_SIZE, &length, cancellable, error))
    return '\0';

  return tally_data_detect_delimiter (sample, length, length < SAMPLE_SIZE);
}

/* The first number of a JSON text that neither a 64-bit integer nor a
 * finite double holds (json-glib wraps 99999999999999999999 to -1 and reads
 * 1e400 as infinity), as a new string, or NULL. Strings are skipped. */
static char *
json_dup_number_out_of_range (const char *line,
                              gsize       length)
{
  const char *end = line + length;

  for (const char *p = line; p < end; p++)
    {
      const char *start = p;
      gboolean fraction = FALSE;
      g_autofree char *text = NULL;
      gboolean in_range;

      if (*p == '"')
        {
          for (p++; p < end && *p != '"'; p++)
            if (*p == '\\' && p + 1 < end)
              p++;
          continue;
        }
      if (*p != '-' && !g_ascii_isdigit (*p))
        continue;

      while (p < end && (g_ascii_isdigit (*p) || *p == '-' || *p == '+' ||
                         *p == '.' || *p == 'e' || *p == 'E'))
        {
          fraction |= *p == '.' || *p == 'e' || *p == 'E';
          p++;
        }
      text = g_strndup (start, p - start);
      errno = 0;
      if (fraction)
        in_range = isfinite (g_ascii_strtod (text, NULL));
      else
        {
          g_ascii_strtoll (text, NULL, 10);
          in_range = errno != ERANGE;
        }
      if (!in_range)
        return g_steal_pointer (&text);
      p--;
    }

  return NULL;
}

/* Reads @reader's next record that is not blank, reporting the bytes read
 * (after @base, the sources before this one) as progress: FALSE with
 * @error, prefixed with the source's name, when it cannot be read; TRUE
 * with *@has_record FALSE at its end. */
static gboolean
next_record (Import           *import,
             Source           *source,
             TallyDataReader  *reader,
             guint64           base,
             gboolean         *has_record,
             GError          **error)
{
  GError *local_error = NULL;

  do
    {
      if (!tally_data_reader_next (reader, has_record, import->cancellable, &local_error))
        return fail_in (source, error, local_error);
      if (!*has_record)
        return TRUE;
      report_progress (import, base + tally_data_reader_get_bytes_read (reader), FALSE);
    }
  while (tally_data_reader_is_blank (reader));

  return TRUE;
}

/* The reader's record, a line of a JSON Lines source, as its object (owned
 * by @parser): %NULL with %TALLY_DATA_IMPORT_ERROR_JSON naming the line
 * when it is not JSON, not an object, or holds a number out of range. */
static JsonObject *
parse_json_line (Source           *source,
                 JsonParser       *parser,
                 TallyDataReader  *reader,
                 GError          **error)
{
  g_autoptr(GError) parse_error = NULL;
  g_autofree char *out_of_range = NULL;
  guint64 number = tally_data_reader_get_line (reader);
  gsize length;
  const char *line = tally_data_reader_get_field (reader, 0, &length);
  JsonNode *root;

  if (!json_parser_load_from_data (parser, line, (gssize) length, &parse_error))
    {
      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_JSON,
                   "%s: line %" G_GUINT64_FORMAT ": not JSON (%s)",
                   source->display, number, parse_error->message);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_JSON,
                   "%s: line %" G_GUINT64_FORMAT ": not a JSON object; "
                   "each line of a JSON Lines file must hold one object",
                   source->display, number);
      return NULL;
    }
  out_of_range = json_dup_number_out_of_range (line, length);
  if (out_of_range != NULL)
    {
      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_JSON,
                   "%s: line %" G_GUINT64_FORMAT ": the number %s is out of range",
                   source->display, number, out_of_range);
      return NULL;
    }

  return json_node_get_object (root);
}

/* The column of a JSON Lines source that @key fills, and its 1-based
 * @index (the statement's parameter); a key seen for the first time gets
 * a new column when @add, else the result is %NULL. */
static Column *
json_key_column (Source     *source,
                 const char *key,
                 gboolean    add,
                 guint      *index)
{
  guint found = GPOINTER_TO_UINT (g_hash_table_lookup (source->keys, key));

  if (found == 0)
    {
      if (!add)
        return NULL;
      add_column (source, key);
      found = source->columns->len;
      g_hash_table_insert (source->keys, g_strdup (key), GUINT_TO_POINTER (found));
    }
  if (index != NULL)
    *index = found;
  return g_ptr_array_index (source->columns, found - 1);
}

/* JSON Lines: the union of the keys in first-seen order. */
static gboolean
scan_json_line (Source           *source,
                JsonParser       *parser,
                TallyDataReader  *reader,
                GError          **error)
{
  JsonObject *object = parse_json_line (source, parser, reader, error);
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  if (object == NULL)
    return FALSE;

  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &key, &value))
    {
      Column *column = json_key_column (source, key, TRUE, NULL);

      if (JSON_NODE_HOLDS_NULL (value))
        continue;
      if (JSON_NODE_HOLDS_VALUE (value))
        {
          GType type = json_node_get_value_type (value);

          if (type == G_TYPE_INT64)
            column->kinds |= TALLY_DATA_KIND_INTEGER;
          else if (type == G_TYPE_DOUBLE)
            column->kinds |= TALLY_DATA_KIND_REAL;
          else if (type == G_TYPE_BOOLEAN)
            column->kinds |= TALLY_DATA_KIND_BOOL;
          else
            {
              const char *text = json_node_get_string (value);

              column->kinds |= tally_data_classify_text (text, strlen (text), FALSE);
            }
        }
      else
        column->kinds |= TALLY_DATA_KIND_TEXT;
    }

  return TRUE;
}

static gboolean
scan_source (Import  *import,
             Source  *source,
             GError **error)
{
  g_autoptr(TallyDataReader) reader = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GHashTable) taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GError *local_error = NULL;
  guint64 base = import->done;
  guint64 first_line = 0;
  gboolean first = TRUE;

  if (source->json)
    {
      source->delimiter = '\0';
      source->keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    }
  else
    {
      source->delimiter = pick_delimiter (source, import->cancellable, &local_error);
      if (local_error != NULL)
        return fail_in (source, error, local_error);
    }

  reader = open_reader (source, import->cancellable, &parser, error);
  if (reader == NULL)
    return FALSE;

  for (;;)
    {
      gboolean has_record;

      if (!next_record (import, source, reader, base, &has_record, error))
        return FALSE;
      if (!has_record)
        break;

      if (source->json)
        {
          if (!scan_json_line (source, parser, reader, error))
            return FALSE;
          source->n_rows++;
          continue;
        }

      if (first)
        {
          guint n_fields = tally_data_reader_get_n_fields (reader);

          first = FALSE;
          first_line = tally_data_reader_get_line (reader);
          source->has_header = looks_like_header (reader);
          for (guint i = 0; i < n_fields; i++)
            add_column (source, source->has_header
                                  ? tally_data_reader_get_field (reader, i, NULL)
                                  : "");
          if (source->has_header)
            continue;
        }
      else if (tally_data_reader_get_n_fields (reader) != source->columns->len)
        return ragged_error (source, reader, first_line, error);

      classify_record (source, reader);
      source->n_rows++;
    }

  if (source->columns->len == 0)
    {
      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_EMPTY,
                   source->json && source->n_rows > 0
                     ? "%s: every object is empty, so there are no columns"
                     : "%s is empty: it holds no rows and no header",
                   source->display);
      return FALSE;
    }

  /* Column names (§1): the header's or JSON keys as identifiers, empty
   * ones column_N, repeated ones name_2, name_3, … */
  for (guint i = 0; i < source->columns->len; i++)
    {
      Column *column = g_ptr_array_index (source->columns, i);
      g_autofree char *fallback = g_strdup_printf ("column_%u", i + 1);
      g_autofree char *identifier = tally_data_sanitize_identifier (column->source_name, fallback);

      column->name = tally_data_unique_name (identifier, taken);
      column->type = tally_data_column_type (column->kinds);
    }

  import->done = base + source->size;
  return TRUE;
}

/* The database (§5) */

static sqlite3 *
open_database (const char  *path,
               GError     **error)
{
  g_autofree char *folder = g_path_get_dirname (path);
  sqlite3 *db = NULL;

  if (g_mkdir_with_parents (folder, 0700) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cannot create the folder %s: %s", folder, g_strerror (saved));
      return NULL;
    }

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                       NULL) != SQLITE_OK)
    {
      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_DATABASE,
                   "cannot open the data database %s: %s", path,
                   db != NULL ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return NULL;
    }

  sqlite3_busy_timeout (db, 10000);
  if (!exec (db,
             "PRAGMA cache_size = -65536;"
             "CREATE TABLE IF NOT EXISTS " TALLY_DATA_IMPORT_LEDGER " ("
             "  path TEXT PRIMARY KEY,"
             "  size INTEGER NOT NULL,"
             "  mtime_us INTEGER NOT NULL,"
             "  table_name TEXT NOT NULL,"
             "  n_rows INTEGER NOT NULL,"
             "  n_columns INTEGER NOT NULL,"
             "  imported_at TEXT NOT NULL)",
             error))
    {
      sqlite3_close (db);
      return NULL;
    }

  return db;
}

static gboolean
table_exists (sqlite3    *db,
              const char *name)
{
  sqlite3_stmt *stmt = NULL;
  gboolean exists = FALSE;

  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 "
                              "COLLATE NOCASE", -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
      exists = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);

  return exists;
}

/* Re-import (§6): an unchanged file that still has its table is reused;
 * a changed one gets its old table's name back. Sets @old_table to that
 * name, or to %NULL for a file never imported. */
static gboolean
look_up_ledger (Import  *import,
                Source  *source,
                char   **old_table,
                GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  *old_table = NULL;
  if (sqlite3_prepare_v2 (import->db,
                          "SELECT size, mtime_us, table_name, n_rows, n_columns FROM "
                          TALLY_DATA_IMPORT_LEDGER " WHERE path = ?1",
                          -1, &stmt, NULL) != SQLITE_OK)
    return fail_sqlite (import->db, error);

  sqlite3_bind_text (stmt, 1, source->path, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      const char *table = (const char *) sqlite3_column_text (stmt, 2);

      if (table != NULL && table_exists (import->db, table))
        {
          *old_table = g_strdup (table);
          if ((guint64) sqlite3_column_int64 (stmt, 0) == source->size &&
              sqlite3_column_int64 (stmt, 1) == source->mtime_us)
            {
              source->reused = TRUE;
              source->table = g_strdup (table);
              source->n_rows = sqlite3_column_int64 (stmt, 3);
              for (int i = sqlite3_column_int (stmt, 4); i > 0; i--)
                add_column (source, "");
            }
        }
    }
  sqlite3_finalize (stmt);

  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return fail_sqlite (import->db, error);
  return TRUE;
}

static gboolean
create_table (Import      *import,
              Source      *source,
              const char  *old_table,
              GError     **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);

  if (old_table != NULL)
    {
      char *drop = sqlite3_mprintf ("DROP TABLE \"%w\"", old_table);
      gboolean ok = exec (import->db, drop, error);

      sqlite3_free (drop);
      if (!ok)
        return FALSE;
      source->table = g_strdup (old_table);
    }
  else
    {
      g_autofree char *stem = g_strdup (source->display);
      g_autofree char *stem_name = NULL;
      char *dot = strrchr (stem, '.');

      if (dot != NULL)
        *dot = '\0';
      stem_name = tally_data_sanitize_identifier (stem, "data");
      /* Names other tables of the database hold are taken too. */
      for (guint n = 0;; n++)
        {
          g_autofree char *candidate = tally_data_unique_name (stem_name, import->taken);

          if (!table_exists (import->db, candidate))
            {
              source->table = g_steal_pointer (&candidate);
              break;
            }
          g_assert (n < G_MAXUINT);
        }
    }

  g_string_append_printf (sql, "CREATE TABLE \"%s\" (", source->table);
  for (guint i = 0; i < source->columns->len; i++)
    {
      Column *column = g_ptr_array_index (source->columns, i);

      g_string_append_printf (sql, "%s\"%s\" %s", i > 0 ? ", " : "",
                              column->name, tally_data_type_get_declaration (column->type));
    }
  g_string_append_c (sql, ')');

  return exec (import->db, sql->str, error);
}

/* The second pass: the rows. */

static void
bind_text_value (sqlite3_stmt  *stmt,
                 int            index,
                 TallyDataType  type,
                 const char    *text,
                 gsize          length)
{
  gint64 integer;
  double real;

  if (length == 0)
    sqlite3_bind_null (stmt, index);
  else if (type == TALLY_DATA_TYPE_INTEGER && tally_data_parse_integer (text, length, &integer))
    sqlite3_bind_int64 (stmt, index, integer);
  else if (type == TALLY_DATA_TYPE_REAL &&
           (tally_data_parse_real (text, length, &real) ||
            tally_data_parse_integer (text, length, NULL)))
    sqlite3_bind_double (stmt, index, g_ascii_strtod (text, NULL));
  else
    sqlite3_bind_text (stmt, index, text, (int) length, SQLITE_STATIC);
}

static void
bind_json_value (sqlite3_stmt  *stmt,
                 int            index,
                 TallyDataType  type,
                 JsonNode      *value)
{
  GType value_type = JSON_NODE_HOLDS_VALUE (value) ? json_node_get_value_type (value) : G_TYPE_INVALID;

  if (JSON_NODE_HOLDS_NULL (value))
    sqlite3_bind_null (stmt, index);
  else if (type == TALLY_DATA_TYPE_INTEGER && value_type == G_TYPE_BOOLEAN)
    sqlite3_bind_int64 (stmt, index, json_node_get_boolean (value) ? 1 : 0);
  else if (type == TALLY_DATA_TYPE_INTEGER)
    sqlite3_bind_int64 (stmt, index, json_node_get_int (value));
  else if (type == TALLY_DATA_TYPE_REAL)
    sqlite3_bind_double (stmt, index, json_node_get_double (value));
  else if (value_type == G_TYPE_STRING)
    sqlite3_bind_text (stmt, index, json_node_get_string (value), -1, SQLITE_TRANSIENT);
  else
    {
      /* A mixed column keeps each value as its JSON text; nested objects
       * and arrays are stored as JSON text too (§3). */
      char *text = json_to_string (value, FALSE);

      sqlite3_bind_text (stmt, index, text, -1, g_free);
    }
}

static gboolean
changed_error (Source  *source,
               GError **error)
{
  g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_CHANGED,
               "%s changed while it was imported; import it again", source->display);
  return FALSE;
}

static gboolean
insert_rows (Import  *import,
             Source  *source,
             GError **error)
{
  g_autoptr(TallyDataReader) reader = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GString) sql = g_string_new (NULL);
  sqlite3_stmt *stmt = NULL;
  guint64 base = import->done;
  gboolean skip_header = source->has_header;
  gint64 rows = 0;
  gboolean ok = FALSE;

  g_string_append_printf (sql, "INSERT INTO \"%s\" VALUES (", source->table);
  for (guint i = 0; i < source->columns->len; i++)
    g_string_append (sql, i > 0 ? ", ?" : "?");
  g_string_append_c (sql, ')');
  if (sqlite3_prepare_v2 (import->db, sql->str, -1, &stmt, NULL) != SQLITE_OK)
    return fail_sqlite (import->db, error);

  reader = open_reader (source, import->cancellable, &parser, error);
  if (reader == NULL)
    goto out;

  for (;;)
    {
      gboolean has_record;

      if (!next_record (import, source, reader, base, &has_record, error))
        goto out;
      if (!has_record)
        break;
      if (skip_header)
        {
          skip_header = FALSE;
          continue;
        }

      sqlite3_clear_bindings (stmt);
      if (source->json)
        {
          /* The scan took every line; one that fails now was changed. */
          JsonObject *object = parse_json_line (source, parser, reader, NULL);
          JsonObjectIter iter;
          const char *key;
          JsonNode *value;

          if (object == NULL)
            {
              changed_error (source, error);
              goto out;
            }
          json_object_iter_init_ordered (&iter, object);
          while (json_object_iter_next_ordered (&iter, &key, &value))
            {
              guint index;
              Column *column = json_key_column (source, key, FALSE, &index);

              if (column == NULL)
                {
                  changed_error (source, error);
                  goto out;
                }
              bind_json_value (stmt, (int) index, column->type, value);
            }
        }
      else
        {
          if (tally_data_reader_get_n_fields (reader) != source->columns->len)
            {
              changed_error (source, error);
              goto out;
            }
          for (guint i = 0; i < source->columns->len; i++)
            {
              Column *column = g_ptr_array_index (source->columns, i);
              gsize length;
              const char *field = tally_data_reader_get_field (reader, i, &length);

              bind_text_value (stmt, (int) i + 1, column->type, field, length);
            }
        }

      if (sqlite3_step (stmt) != SQLITE_DONE)
        {
          fail_sqlite (import->db, error);
          goto out;
        }
      sqlite3_reset (stmt);
      rows++;
    }

  if (rows != source->n_rows)
    {
      changed_error (source, error);
      goto out;
    }

  import->done = base + source->size;
  ok = TRUE;

out:
  sqlite3_finalize (stmt);
  return ok;
}

static gboolean
record_import (Import  *import,
               Source  *source,
               GError **error)
{
  sqlite3_stmt *stmt = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *stamp = g_date_time_format_iso8601 (now);
  gboolean ok;

  if (sqlite3_prepare_v2 (import->db,
                          "INSERT OR REPLACE INTO " TALLY_DATA_IMPORT_LEDGER
                          " (path, size, mtime_us, table_name, n_rows, n_columns, imported_at)"
                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                          -1, &stmt, NULL) != SQLITE_OK)
    return fail_sqlite (import->db, error);

  sqlite3_bind_text (stmt, 1, source->path, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 2, (sqlite3_int64) source->size);
  sqlite3_bind_int64 (stmt, 3, source->mtime_us);
  sqlite3_bind_text (stmt, 4, source->table, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 5, source->n_rows);
  sqlite3_bind_int64 (stmt, 6, source->columns->len);
  sqlite3_bind_text (stmt, 7, stamp, -1, SQLITE_STATIC);
  ok = sqlite3_step (stmt) == SQLITE_DONE;
  sqlite3_finalize (stmt);

  return ok ? TRUE : fail_sqlite (import->db, error);
}

static gboolean
import_sources (Import    *import,
                GPtrArray *sources,
                GError   **error)
{
  g_autoptr(GPtrArray) old_tables = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < sources->len; i++)
    {
      Source *source = g_ptr_array_index (sources, i);
      char *old_table = NULL;

      if (!look_up_ledger (import, source, &old_table, error))
        return FALSE;
      g_ptr_array_add (old_tables, old_table);
      if (source->reused)
        g_hash_table_add (import->taken, g_ascii_strdown (source->table, -1));
      else
        import->total += 2 * source->size;
    }
  /* A changed file keeps its old table's name. */
  for (guint i = 0; i < sources->len; i++)
    if (g_ptr_array_index (old_tables, i) != NULL)
      g_hash_table_add (import->taken, g_ascii_strdown (g_ptr_array_index (old_tables, i), -1));

  report_progress (import, 0, TRUE);
  for (guint i = 0; i < sources->len; i++)
    {
      Source *source = g_ptr_array_index (sources, i);

      if (source->reused)
        continue;
      if (!scan_source (import, source, error) ||
          !create_table (import, source, g_ptr_array_index (old_tables, i), error) ||
          !insert_rows (import, source, error) ||
          !record_import (import, source, error))
        return FALSE;
      report_progress (import, import->done, TRUE);
    }

  return TRUE;
}

/**
 * tally_data_import:
 * @database_path: the SQLite database to import into, usually
 *   tally_data_import_dup_database_path(); it and its folder are created
 *   when missing
 * @paths: (array zero-terminated=1): data files (`.csv`, `.tsv`, `.tab`,
 *   `.jsonl`, `.ndjson`) and folders of them, in the GLib file name
 *   encoding
 * @progress: (nullable) (scope call): called with the bytes read so far,
 *   in this thread
 * @progress_data: closure of @progress
 * @cancellable: (nullable): a #GCancellable, looked at between chunks of
 *   256 KiB
 * @error: return location for a #TALLY_DATA_IMPORT_ERROR, a #GIOErrorEnum
 *   error (a file that cannot be read) or %G_IO_ERROR_CANCELLED
 *
 * Imports each file into a table of @database_path (docs/data-files.md):
 * the table is named after the file, its columns after the header or the
 * JSON keys, their types inferred from the values. A file imported before
 * and unchanged since (same size and modification time) is not read
 * again. All the tables are created in one transaction: on any error or a
 * cancel, none is, and the database is as it was. Blocks; see
 * tally_data_import_async() for the main loop.
 *
 * Returns: (transfer full) (element-type TallyDataTable): one
 *   #TallyDataTable per file, in the order of @paths (a folder's files by
 *   name), or %NULL on error
 */
GPtrArray *
tally_data_import (const char                  *database_path,
                   const char * const          *paths,
                   TallyDataImportProgressFunc  progress,
                   gpointer                     progress_data,
                   GCancellable                *cancellable,
                   GError                     **error)
{
  g_autoptr(GPtrArray) sources = NULL;
  g_autoptr(GPtrArray) tables = NULL;
  g_autoptr(GHashTable) taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  Import import = { 0 };
  gboolean ok;

  g_return_val_if_fail (database_path != NULL, NULL);
  g_return_val_if_fail (paths != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  sources = collect_sources (paths, error);
  if (sources == NULL)
    return NULL;

  import.db = open_database (database_path, error);
  if (import.db == NULL)
    return NULL;
  import.progress = progress;
  import.progress_data = progress_data;
  import.cancellable = cancellable;
  import.taken = taken;

  ok = exec (import.db, "BEGIN IMMEDIATE", error);
  if (ok)
    {
      ok = import_sources (&import, sources, error) && exec (import.db, "COMMIT", error);
      if (!ok)
        sqlite3_exec (import.db, "ROLLBACK", NULL, NULL, NULL);
    }
  sqlite3_close (import.db);
  if (!ok)
    return NULL;

  tables = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_data_table_free);
  for (guint i = 0; i < sources->len; i++)
    {
      Source *source = g_ptr_array_index (sources, i);
      TallyDataTable *table = g_new0 (TallyDataTable, 1);

      table->path = g_strdup (source->path);
      table->table = g_strdup (source->table);
      table->n_rows = source->n_rows;
      table->n_columns = source->columns->len;
      table->reused = source->reused;
      g_ptr_array_add (tables, table);
    }

  return g_steal_pointer (&tables);
}

/* The async variant: progress crosses to the caller's main context,
 * coalesced so that a fast import does not flood it. */

typedef struct {
  GMutex                       lock;
  GMainContext                *context;
  TallyDataImportProgressFunc  func;
  gpointer                     data;
  GDestroyNotify               destroy;
  guint64                      done;
  guint64                      total;
  gboolean                     pending;
} Progress;

typedef struct {
  GDestroyNotify destroy;
  gpointer       data;
} DestroyCall;

static gboolean
destroy_call_cb (gpointer data)
{
  DestroyCall *call = data;

  call->destroy (call->data);
  g_free (call);
  return G_SOURCE_REMOVE;
}

/* The last reference may be dropped in the worker thread (GTask's own
 * reference); the closure, often a widget, is freed in the caller's
 * context all the same. */
static void
progress_clear (gpointer data)
{
  Progress *progress = data;

  if (progress->destroy != NULL)
    {
      DestroyCall *call = g_new (DestroyCall, 1);

      call->destroy = progress->destroy;
      call->data = progress->data;
      g_main_context_invoke (progress->context, destroy_call_cb, call);
    }
  g_main_context_unref (progress->context);
  g_mutex_clear (&progress->lock);
}

static void
progress_unref (gpointer data)
{
  g_atomic_rc_box_release_full (data, progress_clear);
}

static gboolean
progress_dispatch_cb (gpointer data)
{
  Progress *progress = data;
  guint64 done, total;

  g_mutex_lock (&progress->lock);
  done = progress->done;
  total = progress->total;
  progress->pending = FALSE;
  g_mutex_unlock (&progress->lock);

  progress->func (done, total, progress->data);
  return G_SOURCE_REMOVE;
}

static void
progress_from_thread (guint64  done,
                      guint64  total,
                      gpointer data)
{
  Progress *progress = data;
  gboolean schedule;

  g_mutex_lock (&progress->lock);
  progress->done = done;
  progress->total = total;
  schedule = !progress->pending;
  progress->pending = TRUE;
  g_mutex_unlock (&progress->lock);

  if (schedule)
    g_main_context_invoke_full (progress->context, G_PRIORITY_DEFAULT, progress_dispatch_cb,
                                g_atomic_rc_box_acquire (progress), progress_unref);
}

typedef struct {
  char     *database_path;
  GStrv     paths;
  Progress *progress;
} ImportJob;

static void
import_job_free (gpointer data)
{
  ImportJob *job = data;

  g_free (job->database_path);
  g_strfreev (job->paths);
  g_clear_pointer (&job->progress, progress_unref);
  g_free (job);
}

static void
import_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  ImportJob *job = task_data;
  GError *error = NULL;
  GPtrArray *tables;

  tables = tally_data_import (job->database_path, (const char * const *) job->paths,
                              job->progress != NULL ? progress_from_thread : NULL,
                              job->progress, cancellable, &error);
  if (tables == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, tables, (GDestroyNotify) g_ptr_array_unref);
}

/**
 * tally_data_import_async:
 * @database_path: as for tally_data_import()
 * @paths: (array zero-terminated=1): as for tally_data_import(); copied
 * @progress: (nullable) (scope notified): called in the thread-default
 *   main context of the caller as the import goes on
 * @progress_data: closure of @progress
 * @progress_destroy: (nullable): frees @progress_data once the import is
 *   over and no progress call is pending, in the caller's main context
 * @cancellable: (nullable): a #GCancellable; cancelling rolls the import
 *   back and the callback gets %G_IO_ERROR_CANCELLED
 * @callback: called when the import is over
 * @user_data: closure of @callback
 *
 * Runs tally_data_import() in a worker thread.
 */
void
tally_data_import_async (const char                  *database_path,
                         const char * const          *paths,
                         TallyDataImportProgressFunc  progress,
                         gpointer                     progress_data,
                         GDestroyNotify               progress_destroy,
                         GCancellable                *cancellable,
                         GAsyncReadyCallback          callback,
                         gpointer                     user_data)
{
  g_autoptr(GTask) task = NULL;
  ImportJob *job;

  g_return_if_fail (database_path != NULL);
  g_return_if_fail (paths != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  job = g_new0 (ImportJob, 1);
  job->database_path = g_strdup (database_path);
  job->paths = g_strdupv ((char **) paths);
  if (progress != NULL)
    {
      job->progress = g_atomic_rc_box_new0 (Progress);
      g_mutex_init (&job->progress->lock);
      job->progress->context = g_main_context_ref_thread_default ();
      job->progress->func = progress;
      job->progress->data = progress_data;
      job->progress->destroy = progress_destroy;
    }
  else if (progress_destroy != NULL)
    progress_destroy (progress_data);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_data_import_async);
  g_task_set_task_data (task, job, import_job_free);
  g_task_run_in_thread (task, import_thread);
}

/**
 * tally_data_import_finish:
 * @result: the #GAsyncResult of tally_data_import_async()
 * @error: return location for the errors of tally_data_import()
 *
 * Returns: (transfer full) (element-type TallyDataTable): one
 *   #TallyDataTable per file, or %NULL on error
 */
GPtrArray *
tally_data_import_finish (GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_data_import_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
