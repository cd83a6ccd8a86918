/* SPDX-License-Identifier: GPL-3.0-or-later */

/* CSV, TSV and JSON Lines import (docs/data-files.md): names, types, every
 * kind of bad input, the transaction, re-import, cancel, progress, and the
 * imported tables read through the real query_database and get_schema. */

#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tally-data-import.h"
#include "tally-data-reader.h"
#include "tally-test-util.h"
#include "tally-tool-get-schema.h"
#include "tally-tool-query-database.h"
#include "tally-tool.h"

typedef struct {
  char *root;
  char *db;
} Fixture;

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->root = g_dir_make_tmp ("tally-import-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->db = tally_data_import_dup_database_path (fixture->root);
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  tally_test_rm_rf (fixture->root);
  g_free (fixture->root);
  g_free (fixture->db);
}

static char *
data_file (const char *name)
{
  return g_build_filename (g_getenv ("TALLY_TEST_DATA_DIR"), "data", "import", name, NULL);
}

/* Writes @contents to @name in the fixture's folder; returns its path. */
static char *
write_file (Fixture    *fixture,
            const char *name,
            const char *contents,
            gssize      length)
{
  tally_test_write_file (fixture->root, name, contents, length);
  return g_build_filename (fixture->root, name, NULL);
}

static GPtrArray *
import_paths (Fixture            *fixture,
              const char * const *paths,
              GError            **error)
{
  return tally_data_import (fixture->db, paths, NULL, NULL, NULL, error);
}

static TallyDataTable *
import_one (Fixture    *fixture,
            const char *path)
{
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = import_paths (fixture, paths, &error);
  TallyDataTable *table;

  g_assert_no_error (error);
  g_assert_nonnull (tables);
  g_assert_cmpuint (tables->len, ==, 1);
  table = g_ptr_array_steal_index (tables, 0);
  return table;
}

/* Imports @path, which must fail with @code; returns the message. */
static char *
import_fails (Fixture    *fixture,
              const char *path,
              int         code)
{
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = import_paths (fixture, paths, &error);

  g_assert_null (tables);
  g_assert_error (error, TALLY_DATA_IMPORT_ERROR, code);
  return g_strdup (error->message);
}

/* The first column of every row of @sql, each as text ("NULL" for NULL),
 * joined by '|'. */
static char *
query (Fixture    *fixture,
       const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  g_autoptr(GString) out = g_string_new (NULL);

  g_assert_cmpint (sqlite3_open_v2 (fixture->db, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *text = (const char *) sqlite3_column_text (stmt, 0);

      if (out->len > 0)
        g_string_append_c (out, '|');
      g_string_append (out, text != NULL ? text : "NULL");
    }
  sqlite3_finalize (stmt);
  sqlite3_close (db);

  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The user tables of the database, by name, joined by '|'. */
static char *
list_tables (Fixture *fixture)
{
  if (!g_file_test (fixture->db, G_FILE_TEST_EXISTS))
    return g_strdup ("");
  return query (fixture, "SELECT name FROM sqlite_master WHERE type = 'table' "
                         "AND name <> '_tally_imports' ORDER BY name");
}

/* "name TYPE" for each column of @table, joined by ", ". */
static char *
describe_columns (Fixture    *fixture,
                  const char *table)
{
  g_autofree char *sql = g_strdup_printf ("SELECT name || ' ' || type FROM pragma_table_info('%s')",
                                          table);
  g_autofree char *columns = query (fixture, sql);
  g_auto(GStrv) parts = g_strsplit (columns, "|", -1);

  return g_strjoinv (", ", parts);
}

/* Names and types */

static void
test_types (Fixture       *fixture,
            gconstpointer  data)
{
  g_autofree char *path = data_file ("sales.csv");
  g_autoptr(TallyDataTable) table = import_one (fixture, path);
  g_autofree char *columns = describe_columns (fixture, "sales");
  g_autofree char *ids = query (fixture, "SELECT typeof (id) || ':' || id FROM sales");
  g_autofree char *amounts = query (fixture, "SELECT typeof (amount) || ':' || "
                                             "coalesce (amount, 'NULL') FROM sales");
  g_autofree char *codes = query (fixture, "SELECT typeof (code) || ':' || "
                                           "coalesce (code, 'NULL') FROM sales");
  g_autofree char *regions = query (fixture, "SELECT region FROM sales");
  g_autofree char *notes = query (fixture, "SELECT quote (note) FROM sales");
  g_autofree char *days = query (fixture, "SELECT strftime ('%j', sold_on) FROM sales");

  g_assert_cmpstr (table->table, ==, "sales");
  g_assert_cmpint (table->n_rows, ==, 4);
  g_assert_cmpuint (table->n_columns, ==, 7);
  g_assert_false (table->reused);
  g_assert_true (g_path_is_absolute (table->path));

  g_assert_cmpstr (columns, ==,
                   "id INTEGER, region TEXT, amount REAL, sold_on DATE TEXT, code TEXT, "
                   "note TEXT, sold_at DATETIME TEXT");
  g_assert_cmpstr (ids, ==, "integer:1|integer:2|integer:3|integer:4");
  g_assert_cmpstr (amounts, ==, "real:12.5|real:3.0|real:-0.25|null:NULL");
  /* A mixed column keeps the original text: 007 stays 007. */
  g_assert_cmpstr (codes, ==, "text:007|text:12|text:x9|null:NULL");
  g_assert_cmpstr (regions, ==, "North|South|East, upper|West");
  /* A quoted newline and doubled quotes; an empty field is NULL. */
  g_assert_cmpstr (notes, ==, "'plain'|'two\nlines'|'she said \"hi\"'|NULL");
  /* Dates are text SQLite's date functions read. */
  g_assert_cmpstr (days, ==, "005|060|061|366");
}

static void
test_semicolon_bom_crlf (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *path = data_file ("semicolon-bom.csv");
  g_autoptr(TallyDataTable) table = import_one (fixture, path);
  g_autofree char *columns = describe_columns (fixture, "semicolon_bom");
  g_autofree char *cities = query (fixture, "SELECT city FROM semicolon_bom WHERE population > 1100000");
  g_autofree char *shares = query (fixture, "SELECT share FROM semicolon_bom");

  g_assert_cmpstr (table->table, ==, "semicolon_bom");
  g_assert_cmpint (table->n_rows, ==, 2);
  /* The byte order mark is not part of the first name; a decimal comma
   * is text (docs/data-files.md §3). */
  g_assert_cmpstr (columns, ==, "city TEXT, population INTEGER, share TEXT");
  g_assert_cmpstr (cities, ==, "München");
  g_assert_cmpstr (shares, ==, "0,5|0,7");
}

static void
test_numeric_header (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *path = data_file ("numbers.csv");
  g_autoptr(TallyDataTable) table = import_one (fixture, path);
  g_autofree char *columns = describe_columns (fixture, "numbers");
  g_autofree char *first = query (fixture, "SELECT column_1 FROM numbers");

  /* The first row is data. */
  g_assert_cmpint (table->n_rows, ==, 3);
  g_assert_cmpstr (columns, ==, "column_1 INTEGER, column_2 REAL, column_3 INTEGER");
  g_assert_cmpstr (first, ==, "2019|2020|2021");
}

static void
test_duplicate_names (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *path = data_file ("duplicates.csv");
  g_autoptr(TallyDataTable) table = import_one (fixture, path);
  g_autofree char *columns = describe_columns (fixture, "duplicates");

  g_assert_cmpint (table->n_rows, ==, 1);
  /* Names compare without case, as SQLite's do; an empty one is
   * column_N, one starting with a digit gets an underscore, a keyword a
   * trailing one. */
  g_assert_cmpstr (columns, ==,
                   "name TEXT, Name_2 TEXT, name_2_2 TEXT, column_4 TEXT, "
                   "_2nd_total INTEGER, order_ TEXT");
}

static void
test_delimiters (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autofree char *pipes = data_file ("pipes.csv");
  g_autofree char *tabs = data_file ("tabs.tsv");
  g_autoptr(TallyDataTable) pipe_table = import_one (fixture, pipes);
  g_autoptr(TallyDataTable) tab_table = import_one (fixture, tabs);
  g_autofree char *pipe_columns = describe_columns (fixture, "pipes");
  g_autofree char *tab_columns = describe_columns (fixture, "tabs");
  static const char quoted[] = "a;b\n\"x;y\";1\n\"p\nq\";2\n";

  g_assert_cmpstr (pipe_columns, ==, "a INTEGER, b INTEGER, c INTEGER");
  g_assert_cmpstr (tab_columns, ==, "a INTEGER, b TEXT");

  /* Quoted delimiters and newlines do not fool the detection. */
  g_assert_cmpint (tally_data_detect_delimiter (quoted, strlen (quoted), TRUE), ==, ';');
  g_assert_cmpint (tally_data_detect_delimiter ("a,b;c\n1,2;3\n", 12, TRUE), ==, ',');
  g_assert_cmpint (tally_data_detect_delimiter ("one\ntwo\n", 8, TRUE), ==, ',');
}

static void
test_json_lines (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autofree char *path = data_file ("events.jsonl");
  g_autoptr(TallyDataTable) table = import_one (fixture, path);
  g_autofree char *columns = describe_columns (fixture, "events");
  g_autofree char *tags = query (fixture, "SELECT coalesce (tags, 'NULL') FROM events");
  g_autofree char *flags = query (fixture, "SELECT typeof (ok) || ':' || coalesce (ok, 'NULL') FROM events");
  g_autofree char *prices = query (fixture, "SELECT typeof (price) FROM events");
  g_autofree char *sources = query (fixture, "SELECT json_extract (meta, '$.src') FROM events WHERE id = 2");

  /* The union of the keys in first-seen order; the blank line is skipped. */
  g_assert_cmpint (table->n_rows, ==, 3);
  g_assert_cmpstr (columns, ==,
                   "id INTEGER, kind TEXT, price REAL, tags TEXT, ok INTEGER, meta TEXT, "
                   "extra DATE TEXT");
  g_assert_cmpstr (tags, ==, "[\"a\",\"b\"]|NULL|NULL");
  g_assert_cmpstr (flags, ==, "integer:1|integer:0|null:NULL");
  g_assert_cmpstr (prices, ==, "real|real|null");
  g_assert_cmpstr (sources, ==, "ad");
}

static void
test_json_lines_errors (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autofree char *array = write_file (fixture, "array.jsonl", "{\"a\": 1}\n[1, 2]\n", -1);
  g_autofree char *broken = write_file (fixture, "broken.ndjson", "{\"a\": 1}\n\n{\"a\": \n", -1);
  g_autofree char *mixed = write_file (fixture, "mixed.jsonl",
                                       "{\"v\": 1}\n{\"v\": \"one\"}\n{\"v\": {\"n\": 1}}\n", -1);
  g_autofree char *message = import_fails (fixture, array, TALLY_DATA_IMPORT_ERROR_JSON);
  g_autofree char *broken_message = import_fails (fixture, broken, TALLY_DATA_IMPORT_ERROR_JSON);
  g_autoptr(TallyDataTable) table = import_one (fixture, mixed);
  g_autofree char *values = query (fixture, "SELECT typeof (v) || ':' || v FROM mixed");

  g_assert_cmpstr (message, ==,
                   "array.jsonl: line 2: not a JSON object; "
                   "each line of a JSON Lines file must hold one object");
  g_assert_true (g_str_has_prefix (broken_message, "broken.ndjson: line 3: not JSON ("));
  /* A mixed column keeps each value as its JSON text. */
  g_assert_cmpstr (values, ==, "text:1|text:one|text:{\"n\":1}");
}

/* A JSON number out of range of a 64-bit integer or a double: the parser
 * wraps 99999999999999999999 to -1 and reads 1e400 as infinity, so the
 * line is an error, not a wrong value; the edges still import. */
static void
test_json_lines_range (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autofree char *big = write_file (fixture, "big.jsonl",
                                     "{\"n\": 1}\n{\"n\": 99999999999999999999}\n", -1);
  g_autofree char *nested = write_file (fixture, "nested.jsonl",
                                        "{\"n\": [1, -9223372036854775809], \"s\": \"99999999999999999999\"}\n", -1);
  g_autofree char *huge = write_file (fixture, "huge.jsonl", "{\"x\": 2.5}\n{\"x\": 1e400}\n", -1);
  g_autofree char *edges = write_file (fixture, "edges.jsonl",
                                       "{\"n\": 9223372036854775807, \"s\": \"1e400\"}\n"
                                       "{\"n\": -9223372036854775808, \"s\": \"x\"}\n", -1);
  g_autofree char *big_message = import_fails (fixture, big, TALLY_DATA_IMPORT_ERROR_JSON);
  g_autofree char *nested_message = import_fails (fixture, nested, TALLY_DATA_IMPORT_ERROR_JSON);
  g_autofree char *huge_message = import_fails (fixture, huge, TALLY_DATA_IMPORT_ERROR_JSON);
  g_autoptr(TallyDataTable) table = import_one (fixture, edges);
  g_autofree char *values = query (fixture, "SELECT n || ':' || s FROM edges");

  g_assert_cmpstr (big_message, ==,
                   "big.jsonl: line 2: the number 99999999999999999999 is out of range");
  g_assert_cmpstr (nested_message, ==,
                   "nested.jsonl: line 1: the number -9223372036854775809 is out of range");
  g_assert_cmpstr (huge_message, ==, "huge.jsonl: line 2: the number 1e400 is out of range");
  g_assert_cmpstr (values, ==, "9223372036854775807:1e400|-9223372036854775808:x");
}

/* Bad input: a clear error and no table */

static void
test_ragged (Fixture       *fixture,
             gconstpointer  data)
{
  g_autofree char *path = data_file ("ragged.csv");
  g_autofree char *message = import_fails (fixture, path, TALLY_DATA_IMPORT_ERROR_RAGGED);
  g_autofree char *tables = list_tables (fixture);
  /* A quoted newline counts as a line: the short row is on line 4. */
  g_autofree char *multiline = write_file (fixture, "multi.csv", "a,b\n\"x\ny\",1\n2\n", -1);
  g_autofree char *multiline_message = import_fails (fixture, multiline, TALLY_DATA_IMPORT_ERROR_RAGGED);

  g_assert_cmpstr (message, ==,
                   "ragged.csv: line 3 has 2 fields but line 1 has 3; "
                   "every row needs the same number of fields");
  g_assert_cmpstr (tables, ==, "");
  g_assert_cmpstr (multiline_message, ==,
                   "multi.csv: line 4 has 1 field but line 1 has 2; "
                   "every row needs the same number of fields");
}

static void
test_empty (Fixture       *fixture,
            gconstpointer  data)
{
  g_autofree char *path = data_file ("empty.csv");
  g_autofree char *message = import_fails (fixture, path, TALLY_DATA_IMPORT_ERROR_EMPTY);
  g_autofree char *blank = write_file (fixture, "blank.csv", "\xef\xbb\xbf\r\n\n\r\n", -1);
  g_autofree char *blank_message = import_fails (fixture, blank, TALLY_DATA_IMPORT_ERROR_EMPTY);
  g_autofree char *header = write_file (fixture, "header.csv", "a,b\n", -1);
  g_autoptr(TallyDataTable) table = import_one (fixture, header);

  g_assert_cmpstr (message, ==, "empty.csv is empty: it holds no rows and no header");
  g_assert_cmpstr (blank_message, ==, "blank.csv is empty: it holds no rows and no header");
  /* A header alone is a table without rows. */
  g_assert_cmpint (table->n_rows, ==, 0);
  g_assert_cmpuint (table->n_columns, ==, 2);
}

static void
test_binary (Fixture       *fixture,
             gconstpointer  data)
{
  static const char bytes[] = "a,b\n1,2\n\x89PNG\0\0\x01";
  g_autofree char *path = write_file (fixture, "image.csv", bytes, sizeof bytes);
  g_autofree char *message = import_fails (fixture, path, TALLY_DATA_IMPORT_ERROR_BINARY);
  g_autofree char *utf16 = write_file (fixture, "wide.csv", "\xff\xfe" "a\0,\0b\0", 8);
  g_autofree char *utf16_message = import_fails (fixture, utf16, TALLY_DATA_IMPORT_ERROR_ENCODING);

  g_assert_cmpstr (message, ==,
                   "image.csv: line 3: a NUL byte; this is a binary file, not CSV, TSV or JSON Lines text");
  g_assert_cmpstr (utf16_message, ==, "wide.csv: line 1: the file is UTF-16, not UTF-8; save it as UTF-8");
}

static void
test_not_utf8 (Fixture       *fixture,
               gconstpointer  data)
{
  g_autofree char *path = data_file ("latin1.csv");
  g_autofree char *message = import_fails (fixture, path, TALLY_DATA_IMPORT_ERROR_ENCODING);
  g_autofree char *tables = list_tables (fixture);

  g_assert_cmpstr (message, ==,
                   "latin1.csv: line 2: byte 0xF6 is not UTF-8; "
                   "save the file as UTF-8 (the importer reads no other encoding)");
  g_assert_cmpstr (tables, ==, "");
}

static void
test_unclosed_quote (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *path = write_file (fixture, "open.csv", "a,b\n1,\"never\nclosed\n2,3\n", -1);
  g_autofree char *message = import_fails (fixture, path, TALLY_DATA_IMPORT_ERROR_QUOTE);

  g_assert_cmpstr (message, ==, "open.csv: line 2: a quoted field is never closed (a double quote is missing)");
}

/* A quote left open in a large file stops at the record limit rather
 * than reading the rest of the file into one field. */
static void
test_record_too_long (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fixture->root, "runaway.csv", NULL);
  g_autofree char *chunk = g_malloc (1024 * 1024);
  g_autofree char *message = NULL;
  g_autofree char *expected = NULL;
  FILE *out = fopen (path, "w");

  g_assert_nonnull (out);
  memset (chunk, 'x', 1024 * 1024);
  fputs ("a,b\n1,\"", out);
  for (guint i = 0; i < TALLY_DATA_IMPORT_MAX_RECORD / (1024 * 1024) + 2; i++)
    g_assert_cmpuint (fwrite (chunk, 1, 1024 * 1024, out), ==, 1024 * 1024);
  g_assert_cmpint (fclose (out), ==, 0);

  message = import_fails (fixture, path, TALLY_DATA_IMPORT_ERROR_TOO_LONG);
  expected = g_strdup_printf ("runaway.csv: line 2: the record is longer than %d MiB; "
                              "is a closing double quote missing?",
                              TALLY_DATA_IMPORT_MAX_RECORD / (1024 * 1024));
  g_assert_cmpstr (message, ==, expected);
}

static void
test_unsupported (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *text = write_file (fixture, "notes.txt", "hello\n", -1);
  g_autofree char *folder = g_build_filename (fixture->root, "nothing", NULL);
  g_autofree char *missing = g_build_filename (fixture->root, "missing.csv", NULL);
  g_autofree char *message = import_fails (fixture, text, TALLY_DATA_IMPORT_ERROR_UNSUPPORTED);
  g_autofree char *folder_message = NULL;
  const char *paths[] = { missing, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = NULL;

  g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
  folder_message = import_fails (fixture, folder, TALLY_DATA_IMPORT_ERROR_UNSUPPORTED);
  tables = import_paths (fixture, paths, &error);

  g_assert_cmpstr (message, ==,
                   "notes.txt is not a data file: Tally imports .csv, .tsv, .jsonl and .ndjson files");
  g_assert_true (g_str_has_suffix (folder_message, "nothing holds no .csv, .tsv, .jsonl or .ndjson file"));
  g_assert_null (tables);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A FIFO named like a data file is refused before anything opens it
   * (opening it would wait for a writer for good). */
  {
    g_autofree char *fifo = g_build_filename (fixture->root, "pipe.csv", NULL);
    const char *fifo_paths[] = { fifo, NULL };
    g_autoptr(GPtrArray) none = NULL;

    g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
    none = import_paths (fixture, fifo_paths, &error);
    g_assert_null (none);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
    g_assert_nonnull (strstr (error->message, "pipe.csv: not a regular file"));
  }
  g_assert_true (tally_data_import_is_data_path ("x/Sales.CSV"));
  g_assert_true (tally_data_import_is_data_path ("events.ndjson"));
  g_assert_false (tally_data_import_is_data_path ("chinook.sqlite"));
}

/* The transaction: a bad second file leaves not even the good first one. */
static void
test_all_or_nothing (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *good = data_file ("sales.csv");
  g_autofree char *bad = data_file ("ragged.csv");
  const char *paths[] = { good, bad, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = import_paths (fixture, paths, &error);
  g_autofree char *names = list_tables (fixture);
  g_autofree char *ledger = query (fixture, "SELECT count(*) FROM _tally_imports");

  g_assert_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_RAGGED);
  g_assert_null (tables);
  g_assert_cmpstr (names, ==, "");
  g_assert_cmpstr (ledger, ==, "0");
}

/* Names of tables: from the file, made unique; a folder's files by name. */
static void
test_table_names (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *folder = g_build_filename (fixture->root, "exports", NULL);
  g_autofree char *other = g_build_filename (fixture->root, "other", NULL);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  const char *paths[] = { folder, NULL, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = NULL;
  g_autofree char *names = NULL;

  g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (other, 0700), ==, 0);
  first = write_file (fixture, "exports/Q2 Sales (final).csv", "a\n1\n", -1);
  second = write_file (fixture, "exports/2024-orders.tsv", "a\tb\n1\t2\n", -1);
  tally_test_write_file (fixture->root, "exports/.hidden.csv", "a\n1\n", -1);
  tally_test_write_file (fixture->root, "exports/readme.md", "not data", -1);
  third = write_file (fixture, "other/q2_sales_final.csv", "a\n1\n", -1);
  paths[1] = third;

  tables = import_paths (fixture, paths, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tables->len, ==, 3);
  g_assert_cmpstr (((TallyDataTable *) tables->pdata[0])->table, ==, "_2024_orders");
  g_assert_cmpstr (((TallyDataTable *) tables->pdata[1])->table, ==, "Q2_Sales_final");
  g_assert_cmpstr (((TallyDataTable *) tables->pdata[2])->table, ==, "q2_sales_final_2");

  names = list_tables (fixture);
  g_assert_cmpstr (names, ==, "Q2_Sales_final|_2024_orders|q2_sales_final_2");
}

/* A link is named and read by its own name, not its target's. */
static void
test_symlink (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *target = write_file (fixture, "blob-0001", "a\tb\n1\t2\n", -1);
  g_autofree char *link = g_build_filename (fixture->root, "Regions.tsv", NULL);
  g_autoptr(TallyDataTable) table = NULL;
  g_autofree char *columns = NULL;

  g_assert_cmpint (symlink (target, link), ==, 0);
  table = import_one (fixture, link);
  columns = describe_columns (fixture, "Regions");

  g_assert_cmpstr (table->table, ==, "Regions");
  g_assert_cmpstr (table->path, ==, target);
  g_assert_cmpstr (columns, ==, "a INTEGER, b INTEGER");
}

/* Re-import: unchanged is not read again, changed is replaced. */
static void
test_reimport (Fixture       *fixture,
               gconstpointer  data)
{
  g_autofree char *path = write_file (fixture, "orders.csv", "id,total\n1,10\n2,20\n", -1);
  g_autoptr(TallyDataTable) first = import_one (fixture, path);
  g_autoptr(TallyDataTable) again = import_one (fixture, path);
  g_autoptr(TallyDataTable) changed = NULL;
  g_autofree char *stamp = NULL;
  g_autofree char *stamp_again = NULL;
  g_autofree char *totals = NULL;
  g_autofree char *names = NULL;

  g_assert_false (first->reused);
  g_assert_true (again->reused);
  g_assert_cmpstr (again->table, ==, "orders");
  g_assert_cmpint (again->n_rows, ==, 2);
  g_assert_cmpuint (again->n_columns, ==, 2);

  /* The ledger row was not rewritten. */
  stamp = query (fixture, "SELECT imported_at FROM _tally_imports");
  g_clear_pointer (&again, tally_data_table_free);
  again = import_one (fixture, path);
  stamp_again = query (fixture, "SELECT imported_at FROM _tally_imports");
  g_assert_true (again->reused);
  g_assert_cmpstr (stamp, ==, stamp_again);

  /* A changed file (another size) replaces its table, under its name. */
  tally_test_write_file (fixture->root, "orders.csv", "id,total,note\n1,10,a\n2,20,b\n3,35,c\n", -1);
  changed = import_one (fixture, path);
  g_assert_false (changed->reused);
  g_assert_cmpstr (changed->table, ==, "orders");
  g_assert_cmpint (changed->n_rows, ==, 3);
  g_assert_cmpuint (changed->n_columns, ==, 3);
  totals = query (fixture, "SELECT sum (total) FROM orders");
  g_assert_cmpstr (totals, ==, "65");
  names = list_tables (fixture);
  g_assert_cmpstr (names, ==, "orders");
}

static void
test_reimport_same_size (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *path = write_file (fixture, "same.csv", "v\n1\n", -1);
  g_autoptr(TallyDataTable) first = import_one (fixture, path);
  g_autoptr(TallyDataTable) changed = NULL;
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *values = NULL;

  /* Same size, another modification time. */
  tally_test_write_file (fixture->root, "same.csv", "v\n2\n", -1);
  g_file_set_attribute_uint64 (file, G_FILE_ATTRIBUTE_TIME_MODIFIED, 1000000000,
                               G_FILE_QUERY_INFO_NONE, NULL, &error);
  g_assert_no_error (error);
  changed = import_one (fixture, path);
  values = query (fixture, "SELECT v FROM same");

  g_assert_false (changed->reused);
  g_assert_cmpstr (values, ==, "2");
}

/* Cancel and progress */

typedef struct {
  GCancellable *cancellable;
  guint64       last_done;
  guint64       total;
  guint         calls;
  gboolean      cancel;
} ProgressLog;

static void
progress_cb (guint64  done,
             guint64  total,
             gpointer user_data)
{
  ProgressLog *log = user_data;

  g_assert_cmpuint (done, >=, log->last_done);
  g_assert_cmpuint (done, <=, total);
  log->last_done = done;
  log->total = total;
  log->calls++;
  if (log->cancel && done > 0)
    g_cancellable_cancel (log->cancellable);
}

/* About 4 MB of rows: several chunks of the reader. */
static char *
write_big_file (Fixture    *fixture,
                const char *name)
{
  g_autoptr(GString) text = g_string_new ("id,name,amount,day\n");

  for (guint i = 0; i < 100000; i++)
    g_string_append_printf (text, "%u,customer %u with a longer name,%u.%02u,2024-%02u-%02u\n",
                            i, i % 977, i % 5000, i % 100, i % 12 + 1, i % 28 + 1);
  return write_file (fixture, name, text->str, (gssize) text->len);
}

static void
test_cancel_mid_import (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autofree char *good = data_file ("sales.csv");
  g_autofree char *big = write_big_file (fixture, "big.csv");
  const char *paths[] = { good, big, NULL };
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  ProgressLog log = { cancellable, 0, 0, 0, TRUE };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = NULL;
  g_autofree char *names = NULL;

  tables = tally_data_import (fixture->db, paths, progress_cb, &log, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (tables);
  /* Cancelled after the first report of the big file, well before its end. */
  g_assert_cmpuint (log.last_done, <, log.total);
  names = list_tables (fixture);
  g_assert_cmpstr (names, ==, "");
}

typedef struct {
  GMainLoop *loop;
  GPtrArray *tables;
  GError    *error;
} AsyncResult;

static void
import_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  AsyncResult *async = user_data;

  g_assert_null (object);
  async->tables = tally_data_import_finish (result, &async->error);
  g_main_loop_quit (async->loop);
}

static void
progress_data_free (gpointer data)
{
  ProgressLog *log = data;

  log->cancel = TRUE;  /* marks the destroy notify as called */
}

static void
test_async_progress (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *big = write_big_file (fixture, "big.csv");
  const char *paths[] = { big, NULL };
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  AsyncResult async = { loop, NULL, NULL };
  ProgressLog log = { NULL, 0, 0, 0, FALSE };
  g_autofree char *count = NULL;
  g_autofree char *columns = NULL;
  TallyDataTable *table;
  GStatBuf st;

  tally_data_import_async (fixture->db, paths, progress_cb, &log, progress_data_free, NULL,
                           import_done_cb, &async);
  g_main_loop_run (loop);
  /* The closure is freed in this context once the task is gone. */
  while (!log.cancel)
    g_main_context_iteration (NULL, TRUE);

  g_assert_no_error (async.error);
  g_assert_nonnull (async.tables);
  table = g_ptr_array_index (async.tables, 0);
  g_assert_cmpint (table->n_rows, ==, 100000);
  g_assert_cmpint (g_stat (big, &st), ==, 0);
  g_assert_cmpuint (log.total, ==, 2 * (guint64) st.st_size);
  g_assert_cmpuint (log.last_done, ==, log.total);
  g_assert_cmpuint (log.calls, >=, 2);

  /* amount is (i % 5000).(i % 100): above 4000 for 4001…4999 in each of
   * the 20 rounds of 5000, 999 rows each. */
  count = query (fixture, "SELECT count (*) || ' ' || sum (amount > 4000) FROM big");
  g_assert_cmpstr (count, ==, "100000 19980");
  columns = describe_columns (fixture, "big");
  g_assert_cmpstr (columns, ==, "id INTEGER, name TEXT, amount REAL, day DATE TEXT");
  g_ptr_array_unref (async.tables);
}

/* The tools read the imported tables unchanged. */
static void
test_tools_read_import (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autofree char *sales = data_file ("sales.csv");
  g_autofree char *events = data_file ("events.jsonl");
  const char *paths[] = { sales, events, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = import_paths (fixture, paths, &error);
  TallyToolContext context = { fixture->db, fixture->root };
  g_autoptr(TallyTool) schema = tally_tool_get_schema_new ();
  g_autoptr(TallyTool) query_tool = tally_tool_query_database_new ();
  g_autoptr(JsonObject) schema_input = tally_test_parse_object ("{}");
  g_autoptr(JsonObject) query_input = tally_test_parse_object (
    "{\"sql\": \"SELECT region, amount FROM sales WHERE sold_on < '2024-03-01' ORDER BY amount DESC\"}");
  g_autofree char *schema_text = NULL;
  g_autofree char *result = NULL;

  g_assert_no_error (error);
  schema_text = tally_tool_run (schema, &context, schema_input, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (schema_text, "Database data.db: 2 tables, 0 views\n"));
  g_assert_nonnull (strstr (schema_text, "sold_on DATE TEXT"));
  g_assert_nonnull (strstr (schema_text, "meta TEXT"));
  g_assert_null (strstr (schema_text, TALLY_DATA_IMPORT_LEDGER));

  result = tally_tool_run (query_tool, &context, query_input, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "region | amount\nNorth | 12.5\nSouth | 3\n(2 rows)");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("/tally/data-import/types", test_types);
  ADD ("/tally/data-import/semicolon-bom-crlf", test_semicolon_bom_crlf);
  ADD ("/tally/data-import/numeric-header", test_numeric_header);
  ADD ("/tally/data-import/duplicate-names", test_duplicate_names);
  ADD ("/tally/data-import/delimiters", test_delimiters);
  ADD ("/tally/data-import/json-lines", test_json_lines);
  ADD ("/tally/data-import/json-lines-errors", test_json_lines_errors);
  ADD ("/tally/data-import/json-lines-range", test_json_lines_range);
  ADD ("/tally/data-import/ragged", test_ragged);
  ADD ("/tally/data-import/empty", test_empty);
  ADD ("/tally/data-import/binary", test_binary);
  ADD ("/tally/data-import/not-utf8", test_not_utf8);
  ADD ("/tally/data-import/unclosed-quote", test_unclosed_quote);
  ADD ("/tally/data-import/record-too-long", test_record_too_long);
  ADD ("/tally/data-import/unsupported", test_unsupported);
  ADD ("/tally/data-import/all-or-nothing", test_all_or_nothing);
  ADD ("/tally/data-import/table-names", test_table_names);
  ADD ("/tally/data-import/symlink", test_symlink);
  ADD ("/tally/data-import/reimport", test_reimport);
  ADD ("/tally/data-import/reimport-same-size", test_reimport_same_size);
  ADD ("/tally/data-import/cancel-mid-import", test_cancel_mid_import);
  ADD ("/tally/data-import/async-progress", test_async_progress);
  ADD ("/tally/data-import/tools-read-import", test_tools_read_import);

  return g_test_run ();
}
