/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "tally-tool.h"
#include "tally-tool-registry.h"
#include "tally-tool-query-database.h"
#include "tally-tool-get-schema.h"
#include "tally-tool-read.h"
#include "tally-tool-glob.h"
#include "tally-tool-grep.h"
#include "tally-test-util.h"

/* A scratch area under the temporary folder:
 *   ROOT/ws         the workspace
 *   ROOT/ws-evil    a sibling whose name starts like the workspace
 *   ROOT/outside    files the tools must never reach
 * All paths are canonical (realpath), as the tools report them. */
typedef struct {
  char *root;
  char *ws;
  char *ws_evil;
  char *outside;
  char *chinook;
  TallyToolContext context;
} Fixture;

static void
set_mtime (const char *dir,
           const char *relpath,
           gint64      seconds)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);
  struct utimbuf times = { seconds, seconds };

  g_assert_cmpint (g_utime (path, &times), ==, 0);
}

static void
make_symlink (const char *target,
              const char *dir,
              const char *relpath)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);

  g_assert_cmpint (symlink (target, path), ==, 0);
}

static char *
sha256_of_file (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);

  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) contents, length);
}

static const char *
chinook_path (void)
{
  static char *path = NULL;

  if (path == NULL)
    {
      const char *data_dir = g_getenv ("TALLY_TEST_DATA_DIR");

      g_assert_nonnull (data_dir);
      path = g_build_filename (data_dir, "data", "chinook.sqlite", NULL);
    }

  return path;
}

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("tally-tools-XXXXXX", &error);
  g_autofree char *contents = NULL;
  gsize length = 0;

  g_assert_no_error (error);

  fixture->root = realpath (tmp, NULL);
  g_assert_nonnull (fixture->root);
  fixture->ws = g_build_filename (fixture->root, "ws", NULL);
  fixture->ws_evil = g_build_filename (fixture->root, "ws-evil", NULL);
  fixture->outside = g_build_filename (fixture->root, "outside", NULL);
  g_assert_cmpint (g_mkdir (fixture->ws, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (fixture->ws_evil, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (fixture->outside, 0755), ==, 0);

  /* A private, writable copy of Chinook: were a write to get through, it
   * would land here, and the checksum test would see it. */
  fixture->chinook = g_build_filename (fixture->root, "chinook.sqlite", NULL);
  g_file_get_contents (chinook_path (), &contents, &length, &error);
  g_assert_no_error (error);
  g_file_set_contents (fixture->chinook, contents, length, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (fixture->chinook, 0644), ==, 0);

  fixture->context.database_path = fixture->chinook;
  fixture->context.workspace = fixture->ws;
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  tally_test_rm_rf (fixture->root);
  g_free (fixture->root);
  g_free (fixture->ws);
  g_free (fixture->ws_evil);
  g_free (fixture->outside);
  g_free (fixture->chinook);
}

static char *
run_tool (TallyTool              *tool,
          const TallyToolContext *context,
          const char             *json,
          GError                **error)
{
  g_autoptr(JsonObject) input = tally_test_parse_object (json);

  return tally_tool_run (tool, context, input, NULL, error);
}

/* Runs a tool that must succeed and returns its text. */
static char *
run_ok (TallyTool              *tool,
        const TallyToolContext *context,
        const char             *json)
{
  g_autoptr(GError) error = NULL;
  char *text = run_tool (tool, context, json, &error);

  g_assert_no_error (error);
  g_assert_nonnull (text);
  return text;
}

/* Runs a tool that must fail with @code and returns the message. */
static char *
run_fail (TallyTool              *tool,
          const TallyToolContext *context,
          const char             *json,
          int                     code)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = run_tool (tool, context, json, &error);

  g_assert_null (text);
  g_assert_error (error, TALLY_TOOL_ERROR, code);
  return g_strdup (error->message);
}

static char *
sql_input (const char *sql,
           int         max_rows)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "sql");
  json_builder_add_string_value (builder, sql);
  if (max_rows >= 0)
    {
      json_builder_set_member_name (builder, "max_rows");
      json_builder_add_int_value (builder, max_rows);
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);

  return json_to_string (root, FALSE);
}

static guint
count_lines (const char *text)
{
  guint n = 0;

  for (const char *p = text; *p != '\0'; p++)
    if (*p == '\n')
      n++;

  return n;
}

/* query_database */

static void
test_query_revenue_by_genre (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *input = sql_input (
    "SELECT g.Name, ROUND(SUM(il.UnitPrice * il.Quantity), 2) AS Revenue "
    "FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId "
    "JOIN Genre g ON g.GenreId = t.GenreId "
    "GROUP BY g.Name ORDER BY Revenue DESC LIMIT 3", -1);
  g_autofree char *text = run_ok (tool, &fixture->context, input);

  /* Figures from the sqlite3 shell on the same file. */
  g_assert_cmpstr (text, ==,
                   "Name | Revenue\n"
                   "Rock | 826.65\n"
                   "Latin | 382.14\n"
                   "Metal | 261.36\n"
                   "(3 rows)");
}

static void
test_query_refuses_writes (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *before = sha256_of_file (fixture->chinook);
  g_autofree char *after = NULL;
  g_autofree char *vacuum_target = g_build_filename (fixture->root, "copy.db", NULL);
  g_autofree char *attach_target = g_build_filename (fixture->root, "attached.db", NULL);
  g_autofree char *vacuum_into = g_strdup_printf ("VACUUM INTO '%s'", vacuum_target);
  g_autofree char *attach = g_strdup_printf ("ATTACH DATABASE '%s' AS other", attach_target);
  const struct {
    const char *sql;
    const char *expected;
  } cases[] = {
    { "INSERT INTO Genre (Name) VALUES ('Polka')", "query_database is read-only: INSERT is not allowed" },
    { "UPDATE Genre SET Name = 'Noise'", "query_database is read-only: UPDATE is not allowed" },
    { "DELETE FROM Genre", "query_database is read-only: DELETE is not allowed" },
    { "CREATE TABLE Notes (x)", "changing the schema" },
    { "CREATE TEMP TABLE Scratch (x)", "changing the schema" },
    { "CREATE INDEX GenreName ON Genre (Name)", "changing the schema" },
    { "DROP TABLE Genre", "changing the schema" },
    { "ALTER TABLE Genre ADD COLUMN Mood TEXT", "ALTER TABLE is not allowed" },
    { attach, "ATTACH" },
    { "DETACH main", "DETACH is not allowed" },
    { "PRAGMA writable_schema=1", "PRAGMA writable_schema = 1 is not allowed" },
    { "PRAGMA journal_mode=delete", "PRAGMA journal_mode = delete is not allowed" },
    { "PRAGMA query_only=0", "PRAGMA query_only = 0 is not allowed" },
    { "PRAGMA user_version", "PRAGMA user_version is not allowed" },
    { "SELECT 1; DELETE FROM Genre", "one statement at a time" },
    { "SELECT 1; SELECT 2", "one statement at a time" },
    { "BEGIN", "BEGIN (transactions) is not allowed" },
    { "SAVEPOINT s1", "SAVEPOINT is not allowed" },
    { "RELEASE s1", "RELEASE (of a savepoint) is not allowed" },
    { "ROLLBACK TO s1", "ROLLBACK TO (a savepoint) is not allowed" },
    { "VACUUM", "read-only" },
    { vacuum_into, "read-only" },
    { "REINDEX", "REINDEX is not allowed" },
    { "ANALYZE", "query_database is read-only:" },
    { "INSERT INTO Genre (Name) VALUES ('x') RETURNING GenreId", "INSERT is not allowed" },
    { "WITH n AS (SELECT 'x' AS v) INSERT INTO Genre (Name) SELECT v FROM n", "INSERT is not allowed" },
    { "SELECT load_extension('libfoo')", "load_extension() is not allowed" },
    { "SELECT hex(fts3_tokenizer('simple'))", "fts3_tokenizer() is not allowed" },
    { "SELECT fts3_tokenizer('mine', x'4141414141414141')", "fts3_tokenizer() is not allowed" },
    { "SELECT * FROM pragma_table_info('Album')", "PRAGMA table_info(name)" },
    /* json_each() and json_tree() are declared before the authorizer is
     * set; nothing else that looks like a write of the schema passes. */
    { "CREATE VIRTUAL TABLE j USING json_each", "query_database is read-only:" },
    { "SELECT * FROM dbstat", "a table-valued function other than json_each() and json_tree() (such as dbstat)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *input = sql_input (cases[i].sql, -1);
      g_autofree char *message = run_fail (tool, &fixture->context, input,
                                           TALLY_TOOL_ERROR_REFUSED);

      if (strstr (message, cases[i].expected) == NULL)
        g_error ("%s: unexpected message: %s", cases[i].sql, message);
    }

  /* Nothing changed: the file, its row counts, and no new files. */
  after = sha256_of_file (fixture->chinook);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (g_file_test (vacuum_target, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (attach_target, G_FILE_TEST_EXISTS));

  {
    g_autofree char *input = sql_input ("SELECT count(*) AS n FROM Genre", -1);
    g_autofree char *text = run_ok (tool, &fixture->context, input);

    g_assert_cmpstr (text, ==, "n\n25\n(1 row)");
  }
}

static void
test_query_allows_info_pragmas (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *text = run_ok (tool, &fixture->context,
                                  "{\"sql\": \"PRAGMA table_info(Album)\"}");
  g_autofree char *fks = run_ok (tool, &fixture->context,
                                 "{\"sql\": \"PRAGMA foreign_key_list('Track')\"}");

  g_assert_cmpstr (text, ==,
                   "cid | name | type | notnull | dflt_value | pk\n"
                   "0 | AlbumId | INTEGER | 1 | NULL | 1\n"
                   "1 | Title | NVARCHAR(160) | 1 | NULL | 0\n"
                   "2 | ArtistId | INTEGER | 1 | NULL | 0\n"
                   "(3 rows)");
  g_assert_true (g_str_has_suffix (fks, "(3 rows)"));
  g_assert_nonnull (strstr (fks, "| Genre | GenreId | GenreId |"));
}

/* The JSON table-valued functions work (docs/data-files.md stores nested
 * values as JSON text for them), over literals and over a column. */
static void
test_query_json_table_functions (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *each = run_ok (tool, &fixture->context,
                                  "{\"sql\": \"SELECT value FROM json_each('[1,2,3]')\"}");
  g_autofree char *tree = run_ok (tool, &fixture->context,
                                  "{\"sql\": \"SELECT fullkey, atom FROM json_tree('{\\\"a\\\": [1, 2]}') "
                                  "WHERE atom IS NOT NULL\"}");
  g_autofree char *column = run_ok (tool, &fixture->context,
                                    "{\"sql\": \"SELECT c.CustomerId, j.value FROM Customer c, "
                                    "json_each(json_array(c.Email)) j ORDER BY c.CustomerId LIMIT 2\"}");
  /* SQLite itself refuses these before the authorizer sees them. */
  g_autofree char *schema = run_fail (tool, &fixture->context,
                                      "{\"sql\": \"UPDATE sqlite_master SET sql = NULL\"}",
                                      TALLY_TOOL_ERROR_FAILED);
  g_autofree char *table = run_fail (tool, &fixture->context,
                                     "{\"sql\": \"DELETE FROM json_each\"}", TALLY_TOOL_ERROR_FAILED);

  g_assert_nonnull (strstr (schema, "table sqlite_master may not be modified"));
  g_assert_nonnull (strstr (table, "table json_each may not be modified"));
  g_assert_cmpstr (each, ==, "value\n1\n2\n3\n(3 rows)");
  g_assert_cmpstr (tree, ==, "fullkey | atom\n$.a[0] | 1\n$.a[1] | 2\n(2 rows)");
  g_assert_cmpstr (column, ==,
                   "CustomerId | value\n"
                   "1 | luisg@embraer.com.br\n"
                   "2 | leonekohler@surfeu.de\n"
                   "(2 rows)");
}

static void
test_query_row_caps (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  const char *sql = "SELECT TrackId FROM Track ORDER BY TrackId";
  g_autofree char *input_default = sql_input (sql, -1);
  g_autofree char *input_five = sql_input (sql, 5);
  g_autofree char *input_huge = sql_input (sql, 5000);
  g_autofree char *input_zero = sql_input (sql, 0);
  g_autofree char *text_default = run_ok (tool, &fixture->context, input_default);
  g_autofree char *text_five = run_ok (tool, &fixture->context, input_five);
  g_autofree char *text_huge = run_ok (tool, &fixture->context, input_huge);
  g_autofree char *text_zero = run_ok (tool, &fixture->context, input_zero);

  /* header + 200 rows + the note; the total line has no newline */
  g_assert_cmpuint (count_lines (text_default), ==, 1 + 200 + 1);
  g_assert_true (g_str_has_prefix (text_default, "TrackId\n1\n2\n3\n"));
  g_assert_true (g_str_has_suffix (text_default,
                                   "\n200\n… 3,303 more rows not shown (cap 200 rows)\n"
                                   "(200 of 3,503 rows shown)"));

  g_assert_cmpstr (text_five, ==,
                   "TrackId\n1\n2\n3\n4\n5\n"
                   "… 3,498 more rows not shown (cap 5 rows)\n"
                   "(5 of 3,503 rows shown)");

  g_assert_cmpuint (count_lines (text_huge), ==, 1 + 1000 + 1);
  g_assert_true (g_str_has_suffix (text_huge,
                                   "\n1000\n… 2,503 more rows not shown (cap 1000 rows)\n"
                                   "(1,000 of 3,503 rows shown)"));

  g_assert_cmpstr (text_zero, ==,
                   "TrackId\n… 3,503 more rows not shown (cap 0 rows)\n"
                   "(0 of 3,503 rows shown)");
}

static void
test_query_byte_cap (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *input = sql_input ("SELECT TrackId, printf('%.150c', 'x') AS filler "
                                      "FROM Track ORDER BY TrackId", 1000);
  g_autofree char *text = run_ok (tool, &fixture->context, input);
  const char *note = strstr (text, "more rows not shown (output cap 32 KiB)");

  /* Each row is about 155 bytes: some 210 fit in 32 KiB. */
  g_assert_nonnull (note);
  g_assert_cmpuint (note - text, <=, TALLY_TOOL_QUERY_DATABASE_MAX_BYTES);
  g_assert_cmpuint (note - text, >, TALLY_TOOL_QUERY_DATABASE_MAX_BYTES - 200);
  g_assert_nonnull (strstr (text, " of 3,503 rows shown)"));
}

static void
test_query_values (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *nulls = run_ok (tool, &fixture->context,
                                   "{\"sql\": \"SELECT CustomerId, Company FROM Customer "
                                   "ORDER BY CustomerId LIMIT 3\"}");
  g_autofree char *values = run_ok (tool, &fixture->context,
                                    "{\"sql\": \"SELECT 0.1 + 0.2 AS x, 1.0 / 3 AS y, "
                                    "2.5 AS z, x'00ff' AS b, 'a' || char(10) || 'b' AS t, "
                                    "-7 AS i\"}");
  g_autofree char *long_value = run_ok (tool, &fixture->context,
                                        "{\"sql\": \"SELECT printf('%.300c', 'y') AS v\"}");
  g_autofree char *expected_long = NULL;
  g_autofree char *ys = g_strnfill (200, 'y');
  g_autofree char *empty = run_ok (tool, &fixture->context,
                                   "{\"sql\": \"SELECT Name FROM Genre WHERE 0\"}");

  g_assert_cmpstr (nulls, ==,
                   "CustomerId | Company\n"
                   "1 | Embraer - Empresa Brasileira de Aeronáutica S.A.\n"
                   "2 | NULL\n"
                   "3 | NULL\n"
                   "(3 rows)");

  g_assert_cmpstr (values, ==,
                   "x | y | z | b | t | i\n"
                   "0.3 | 0.333333333333333 | 2.5 | <blob 2 bytes> | a\\nb | -7\n"
                   "(1 row)");

  expected_long = g_strdup_printf ("v\n%s…\n(1 row)", ys);
  g_assert_cmpstr (long_value, ==, expected_long);

  g_assert_cmpstr (empty, ==, "Name\n(0 rows)");
}

static void
test_query_invalid_input (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *missing = run_fail (tool, &fixture->context, "{}",
                                       TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *number = run_fail (tool, &fixture->context, "{\"sql\": 42}",
                                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *object = run_fail (tool, &fixture->context, "{\"sql\": {\"q\": 1}}",
                                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *negative = run_fail (tool, &fixture->context,
                                        "{\"sql\": \"SELECT 1\", \"max_rows\": -1}",
                                        TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *string_rows = run_fail (tool, &fixture->context,
                                           "{\"sql\": \"SELECT 1\", \"max_rows\": \"10\"}",
                                           TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *fraction = run_fail (tool, &fixture->context,
                                        "{\"sql\": \"SELECT 1\", \"max_rows\": 2.5}",
                                        TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *comment = run_fail (tool, &fixture->context,
                                       "{\"sql\": \"  -- nothing here\\n\"}",
                                       TALLY_TOOL_ERROR_INVALID_INPUT);
  g_autofree char *whole = run_ok (tool, &fixture->context,
                                   "{\"sql\": \"SELECT 7 AS n\", \"max_rows\": 3.0, "
                                   "\"unknown\": true}");

  g_assert_cmpstr (missing, ==, "`sql` is required and must be a string");
  g_assert_cmpstr (number, ==, "`sql` is required and must be a string");
  g_assert_cmpstr (object, ==, "`sql` is required and must be a string");
  g_assert_cmpstr (negative, ==, "`max_rows` must be a non-negative integer when given");
  g_assert_cmpstr (string_rows, ==, "`max_rows` must be a non-negative integer when given");
  g_assert_cmpstr (fraction, ==, "`max_rows` must be a non-negative integer when given");
  g_assert_nonnull (strstr (comment, "no SQL statement"));
  g_assert_cmpstr (whole, ==, "n\n7\n(1 row)");
}

static void
test_query_sql_error (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *column = run_fail (tool, &fixture->context,
                                      "{\"sql\": \"SELECT Foo FROM Album\"}",
                                      TALLY_TOOL_ERROR_FAILED);
  g_autofree char *table = run_fail (tool, &fixture->context,
                                     "{\"sql\": \"SELECT * FROM Albums\"}",
                                     TALLY_TOOL_ERROR_FAILED);
  g_autofree char *syntax = run_fail (tool, &fixture->context,
                                      "{\"sql\": \"SELEKT 1\"}",
                                      TALLY_TOOL_ERROR_FAILED);

  g_assert_cmpstr (column, ==, "SQL error: no such column: Foo");
  g_assert_cmpstr (table, ==, "SQL error: no such table: Albums");
  g_assert_nonnull (strstr (syntax, "syntax error"));
}

static void
test_query_bad_database (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autoptr(TallyTool) schema = tally_tool_get_schema_new ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (20250101);
  g_autofree char *corrupt = g_build_filename (fixture->root, "corrupt.db", NULL);
  g_autofree char *missing = g_build_filename (fixture->root, "missing.db", NULL);
  g_autofree char *garbage = g_malloc (16384);
  TallyToolContext context = { corrupt, fixture->ws };
  TallyToolContext no_db = { NULL, fixture->ws };
  TallyToolContext dir_db = { fixture->outside, fixture->ws };
  TallyToolContext missing_db = { missing, fixture->ws };
  g_autofree char *message = NULL;
  g_autofree char *schema_message = NULL;
  g_autofree char *none_message = NULL;
  g_autofree char *dir_message = NULL;
  g_autofree char *missing_message = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 16384; i++)
    garbage[i] = (char) g_rand_int_range (rand, 0, 256);
  g_file_set_contents (corrupt, garbage, 16384, &error);
  g_assert_no_error (error);

  message = run_fail (tool, &context, "{\"sql\": \"SELECT 1\"}", TALLY_TOOL_ERROR_FAILED);
  schema_message = run_fail (schema, &context, "{}", TALLY_TOOL_ERROR_FAILED);
  none_message = run_fail (tool, &no_db, "{\"sql\": \"SELECT 1\"}", TALLY_TOOL_ERROR_FAILED);
  dir_message = run_fail (tool, &dir_db, "{\"sql\": \"SELECT 1\"}", TALLY_TOOL_ERROR_FAILED);
  missing_message = run_fail (tool, &missing_db, "{\"sql\": \"SELECT 1\"}",
                              TALLY_TOOL_ERROR_FAILED);

  g_assert_nonnull (strstr (message, "cannot be read (file is not a database)"));
  g_assert_nonnull (strstr (schema_message, "cannot be read"));
  g_assert_cmpstr (none_message, ==, "No database is configured for this session");
  g_assert_nonnull (strstr (dir_message, "is not a file"));
  g_assert_nonnull (strstr (missing_message, "does not exist"));
  /* A read-only open never creates the file. */
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
}

static void
cancel_later_cb (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  GError **error = user_data;
  g_autofree char *text = tally_tool_run_finish (TALLY_TOOL (object), result, error);

  g_assert_null (text);
}

static gboolean
cancel_cb (gpointer user_data)
{
  g_cancellable_cancel (user_data);
  return G_SOURCE_REMOVE;
}

static void
test_query_cancel (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(JsonObject) input = tally_test_parse_object (
    "{\"sql\": \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT count(*) FROM c\"}");
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) early_error = NULL;
  g_autofree char *early = NULL;

  /* This query never ends by itself: only the progress handler stops it. */
  tally_tool_run_async (tool, &fixture->context, input, cancellable, cancel_later_cb, &error);
  g_timeout_add (50, cancel_cb, cancellable);

  while (error == NULL)
    g_main_context_iteration (NULL, TRUE);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);

  /* Already cancelled: nothing runs. */
  early = tally_tool_run (tool, &fixture->context, input, cancellable, &early_error);
  g_assert_null (early);
  g_assert_error (early_error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* get_schema */

static void
test_schema_chinook (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_get_schema_new ();
  g_autofree char *text = run_ok (tool, &fixture->context, "{}");
  g_autofree char *track = run_ok (tool, &fixture->context, "{\"table\": \"track\"}");
  g_autofree char *missing = run_fail (tool, &fixture->context, "{\"table\": \"Tracks\"}",
                                       TALLY_TOOL_ERROR_NOT_FOUND);
  g_autofree char *bad = run_fail (tool, &fixture->context, "{\"table\": 3}",
                                   TALLY_TOOL_ERROR_INVALID_INPUT);
  const char *tables[] = {
    "TABLE Album (347 rows)\n",
    "TABLE Artist (275 rows)\n",
    "TABLE Customer (59 rows)\n",
    "TABLE Employee (8 rows)\n",
    "TABLE Genre (25 rows)\n",
    "TABLE Invoice (412 rows)\n",
    "TABLE InvoiceLine (2,240 rows)\n",
    "TABLE MediaType (5 rows)\n",
    "TABLE Playlist (18 rows)\n",
    "TABLE PlaylistTrack (8,715 rows)\n",
    "TABLE Track (3,503 rows)\n",
  };
  const char *previous = text;

  g_assert_true (g_str_has_prefix (text, "Database chinook.sqlite: 11 tables, 0 views\n"));

  /* All eleven, in name order, with their row counts. */
  for (guint i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      const char *found = strstr (text, tables[i]);

      g_assert_nonnull (found);
      g_assert_true (found > previous);
      previous = found;
    }

  g_assert_nonnull (strstr (text,
                            "TABLE Album (347 rows)\n"
                            "  AlbumId INTEGER PK NOT NULL\n"
                            "  Title NVARCHAR(160) NOT NULL\n"
                            "  ArtistId INTEGER NOT NULL -> Artist(ArtistId)\n"
                            "  index IFK_AlbumArtistId (ArtistId)\n"));
  g_assert_nonnull (strstr (text,
                            "TABLE PlaylistTrack (8,715 rows)\n"
                            "  PlaylistId INTEGER NOT NULL -> Playlist(PlaylistId)\n"
                            "  TrackId INTEGER NOT NULL -> Track(TrackId)\n"
                            "  primary key (PlaylistId, TrackId)\n"));

  g_assert_true (g_str_has_prefix (track, "TABLE Track (3,503 rows)\n  TrackId INTEGER PK NOT NULL\n"));
  g_assert_null (strstr (track, "TABLE Album"));
  g_assert_nonnull (strstr (track, "  GenreId INTEGER -> Genre(GenreId)\n"));

  g_assert_nonnull (strstr (missing, "no table or view named Tracks"));
  g_assert_nonnull (strstr (missing, "Track"));
  g_assert_cmpstr (bad, ==, "`table` must be a string when given");
}

/* Paths */

static void
test_resolve_path (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *target_dir = g_build_filename (fixture->outside, "secrets", NULL);
  TallyToolContext no_ws = { NULL, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *evil_abs = g_build_filename (fixture->ws_evil, "file.txt", NULL);
  g_autofree char *outside_abs = g_build_filename (fixture->outside, "x.txt", NULL);
  const struct {
    const char *path;
    const char *expected_rel;  /* relative to ROOT */
    gboolean    outside;
  } cases[] = {
    { "data/x.csv",                 "ws/data/x.csv",          FALSE },
    { "./data/../notes.md",         "ws/notes.md",            FALSE },
    { ".",                          "ws",                     FALSE },
    { "new-folder/new-file.txt",    "ws/new-folder/new-file.txt", FALSE },
    { "../outside/x.txt",           "outside/x.txt",          TRUE },
    { "data/../../ws-evil/file.txt", "ws-evil/file.txt",      TRUE },
    { "..",                         "",                       TRUE },
    { "link/passwords.txt",         "outside/secrets/passwords.txt", TRUE },
    { "link/../x.txt",              "outside/x.txt",          TRUE },
    { "missing/../link/a",          "outside/secrets/a",      TRUE },
    { "inner-link/x.csv",           "ws/data/x.csv",          FALSE },
    { evil_abs,                     "ws-evil/file.txt",       TRUE },
    { outside_abs,                  "outside/x.txt",          TRUE },
  };

  g_assert_cmpint (g_mkdir (target_dir, 0755), ==, 0);
  tally_test_write_file (fixture->ws, "data/x.csv", "a,b\n", -1);
  make_symlink (target_dir, fixture->ws, "link");
  make_symlink ("data", fixture->ws, "inner-link");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gboolean outside = !cases[i].outside;
      g_autofree char *resolved = tally_tool_resolve_path (&fixture->context, cases[i].path,
                                                           &outside, &error);
      g_autofree char *expected = cases[i].expected_rel[0]
        ? g_build_filename (fixture->root, cases[i].expected_rel, NULL)
        : g_strdup (fixture->root);

      g_assert_no_error (error);
      g_assert_cmpstr (resolved, ==, expected);
      if (outside != cases[i].outside)
        g_error ("%s: outside should be %d", cases[i].path, cases[i].outside);
    }

  {
    g_autofree char *resolved = tally_tool_resolve_path (&fixture->context, "/etc/passwd",
                                                         NULL, &error);
    gboolean outside = FALSE;

    g_assert_no_error (error);
    g_clear_pointer (&resolved, g_free);
    resolved = tally_tool_resolve_path (&fixture->context, "/etc/passwd", &outside, &error);
    g_assert_no_error (error);
    g_assert_true (outside);
  }

  g_assert_null (tally_tool_resolve_path (&fixture->context, "", NULL, &error));
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_clear_error (&error);

  g_assert_null (tally_tool_resolve_path (&no_ws, "a.txt", NULL, &error));
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_clear_error (&error);

  /* A link loop is an error, not a hang. */
  make_symlink ("loop-b", fixture->ws, "loop-a");
  make_symlink ("loop-a", fixture->ws, "loop-b");
  g_assert_null (tally_tool_resolve_path (&fixture->context, "loop-a/x", NULL, &error));
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
}

/* Read */

static void
test_read_lines (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_read_new ();
  g_autofree char *all = NULL;
  g_autofree char *middle = NULL;
  g_autofree char *past = NULL;
  g_autofree char *crlf = NULL;
  g_autofree char *empty = NULL;
  g_autofree char *absolute = NULL;
  g_autofree char *absolute_input = NULL;
  g_autofree char *long_text = NULL;
  g_autofree char *long_line = g_strnfill (2500, 'z');
  g_autofree char *long_file = g_strdup_printf ("short\n%s\nend\n", long_line);
  g_autofree char *expected_long = g_strdup_printf ("     1\tshort\n     2\t%.2000s…\n     3\tend\n",
                                                    long_line);
  g_autoptr(GString) many = g_string_new (NULL);
  g_autofree char *many_text = NULL;

  tally_test_write_file (fixture->ws, "notes/plan.txt", "alpha\nbeta\ngamma\ndelta\nepsilon", -1);
  tally_test_write_file (fixture->ws, "crlf.txt", "one\r\ntwo\r\n", -1);
  tally_test_write_file (fixture->ws, "empty.txt", "", 0);
  tally_test_write_file (fixture->ws, "long.txt", long_file, -1);
  for (guint i = 1; i <= 2500; i++)
    g_string_append_printf (many, "row %u\n", i);
  tally_test_write_file (fixture->ws, "many.txt", many->str, many->len);

  all = run_ok (tool, &fixture->context, "{\"file_path\": \"notes/plan.txt\"}");
  g_assert_cmpstr (all, ==,
                   "     1\talpha\n"
                   "     2\tbeta\n"
                   "     3\tgamma\n"
                   "     4\tdelta\n"
                   "     5\tepsilon\n");

  middle = run_ok (tool, &fixture->context,
                   "{\"file_path\": \"notes/plan.txt\", \"offset\": 2, \"limit\": 2}");
  g_assert_cmpstr (middle, ==,
                   "     2\tbeta\n"
                   "     3\tgamma\n"
                   "… the file goes on; continue with offset=4\n");

  past = run_ok (tool, &fixture->context, "{\"file_path\": \"notes/plan.txt\", \"offset\": 9}");
  g_assert_cmpstr (past, ==, "(the file has 5 lines; offset 9 is past its end)");

  crlf = run_ok (tool, &fixture->context, "{\"file_path\": \"crlf.txt\"}");
  g_assert_cmpstr (crlf, ==, "     1\tone\n     2\ttwo\n");

  empty = run_ok (tool, &fixture->context, "{\"file_path\": \"empty.txt\"}");
  g_assert_cmpstr (empty, ==, "(the file is empty)");

  long_text = run_ok (tool, &fixture->context, "{\"file_path\": \"long.txt\"}");
  g_assert_cmpstr (long_text, ==, expected_long);

  /* An absolute path inside the workspace is fine. */
  absolute_input = g_strdup_printf ("{\"file_path\": \"%s/notes/plan.txt\", \"limit\": 1}",
                                    fixture->ws);
  absolute = run_ok (tool, &fixture->context, absolute_input);
  g_assert_cmpstr (absolute, ==, "     1\talpha\n… the file goes on; continue with offset=2\n");

  /* The default limit is 2000 lines. */
  many_text = run_ok (tool, &fixture->context, "{\"file_path\": \"many.txt\"}");
  g_assert_cmpuint (count_lines (many_text), ==, 2001);
  g_assert_true (g_str_has_suffix (many_text,
                                   "  2000\trow 2000\n… the file goes on; continue with offset=2001\n"));
}

static void
test_read_refusals (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_read_new ();
  g_autofree char *outside_file = g_build_filename (fixture->outside, "secret.txt", NULL);
  g_autofree char *evil_file = g_build_filename (fixture->ws_evil, "secret.txt", NULL);
  g_autofree char *input = NULL;
  g_autofree char *message = NULL;
  const char binary[] = { 'P', 'K', 3, 4, 0, 0, 'x', '\n' };

  tally_test_write_file (fixture->outside, "secret.txt", "top secret\n", -1);
  tally_test_write_file (fixture->ws_evil, "secret.txt", "evil secret\n", -1);
  tally_test_write_file (fixture->ws, "data.bin", binary, sizeof binary);
  tally_test_write_file (fixture->ws, "sub/readme.txt", "hi\n", -1);
  make_symlink (outside_file, fixture->ws, "innocent.txt");

  message = run_fail (tool, &fixture->context, "{\"file_path\": \"../outside/secret.txt\"}",
                      TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  g_assert_nonnull (strstr (message, "outside the workspace"));
  g_clear_pointer (&message, g_free);

  input = g_strdup_printf ("{\"file_path\": \"%s\"}", outside_file);
  g_free (run_fail (tool, &fixture->context, input, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE));
  g_clear_pointer (&input, g_free);

  input = g_strdup_printf ("{\"file_path\": \"%s\"}", evil_file);
  g_free (run_fail (tool, &fixture->context, input, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE));
  g_clear_pointer (&input, g_free);

  g_free (run_fail (tool, &fixture->context, "{\"file_path\": \"/etc/passwd\"}",
                    TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE));

  /* The link's name is inside; where it leads is not. */
  message = run_fail (tool, &fixture->context, "{\"file_path\": \"innocent.txt\"}",
                      TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  g_assert_nonnull (strstr (message, outside_file));
  g_clear_pointer (&message, g_free);

  message = run_fail (tool, &fixture->context, "{\"file_path\": \"data.bin\"}",
                      TALLY_TOOL_ERROR_REFUSED);
  g_assert_nonnull (strstr (message, "binary"));
  g_clear_pointer (&message, g_free);

  message = run_fail (tool, &fixture->context, "{\"file_path\": \"sub\"}",
                      TALLY_TOOL_ERROR_REFUSED);
  g_assert_nonnull (strstr (message, "folder"));
  g_clear_pointer (&message, g_free);

  g_free (run_fail (tool, &fixture->context, "{\"file_path\": \"nope.txt\"}",
                    TALLY_TOOL_ERROR_NOT_FOUND));

  message = run_fail (tool, &fixture->context, "{}", TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (message, ==, "`file_path` is required and must be a string");
  g_clear_pointer (&message, g_free);

  message = run_fail (tool, &fixture->context,
                      "{\"file_path\": \"sub/readme.txt\", \"offset\": -3}",
                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (message, ==, "`offset` must be a non-negative integer when given");
  g_clear_pointer (&message, g_free);

  message = run_fail (tool, &fixture->context,
                      "{\"file_path\": \"sub/readme.txt\", \"limit\": true}",
                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (message, ==, "`limit` must be a non-negative integer when given");
}

/* Glob */

static void
test_glob_ordering (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_glob_new ();
  g_autofree char *outside_csv = g_build_filename (fixture->outside, "leak.csv", NULL);
  g_autofree char *all = NULL;
  g_autofree char *top = NULL;
  g_autofree char *in_data = NULL;
  g_autofree char *braces = NULL;
  g_autofree char *none = NULL;
  g_autofree char *message = NULL;

  tally_test_write_file (fixture->ws, "a.csv", "1\n", -1);
  tally_test_write_file (fixture->ws, "d.csv", "1\n", -1);
  tally_test_write_file (fixture->ws, "data/b.csv", "1\n", -1);
  tally_test_write_file (fixture->ws, "data/deep/er/c.csv", "1\n", -1);
  tally_test_write_file (fixture->ws, "data/notes.txt", "1\n", -1);
  tally_test_write_file (fixture->ws, ".git/objects/x.csv", "1\n", -1);
  tally_test_write_file (fixture->outside, "leak.csv", "1\n", -1);
  tally_test_write_file (fixture->outside, "dir/leak2.csv", "1\n", -1);

  set_mtime (fixture->ws, "data/deep/er/c.csv", 1700000300);
  set_mtime (fixture->ws, "a.csv", 1700000200);
  set_mtime (fixture->ws, "d.csv", 1700000200);
  set_mtime (fixture->ws, "data/b.csv", 1700000100);

  make_symlink (outside_csv, fixture->ws, "link-out.csv");
  {
    g_autofree char *outside_dir = g_build_filename (fixture->outside, "dir", NULL);

    make_symlink (outside_dir, fixture->ws, "linked-dir");
  }

  /* Newest first; a.csv and d.csv tie and go by name; .git and the links
   * that lead outside are not listed. */
  all = run_ok (tool, &fixture->context, "{\"pattern\": \"**/*.csv\"}");
  g_assert_cmpstr (all, ==, "data/deep/er/c.csv\na.csv\nd.csv\ndata/b.csv\n");

  top = run_ok (tool, &fixture->context, "{\"pattern\": \"*.csv\"}");
  g_assert_cmpstr (top, ==, "a.csv\nd.csv\n");

  in_data = run_ok (tool, &fixture->context, "{\"pattern\": \"**/*.csv\", \"path\": \"data\"}");
  g_assert_cmpstr (in_data, ==, "data/deep/er/c.csv\ndata/b.csv\n");

  braces = run_ok (tool, &fixture->context, "{\"pattern\": \"{a,data/?}.csv\"}");
  g_assert_cmpstr (braces, ==, "a.csv\ndata/b.csv\n");

  none = run_ok (tool, &fixture->context, "{\"pattern\": \"**/*.parquet\"}");
  g_assert_cmpstr (none, ==, "No files match **/*.parquet in the workspace");

  message = run_fail (tool, &fixture->context, "{\"pattern\": \"*.csv\", \"path\": \"../outside\"}",
                      TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  g_clear_pointer (&message, g_free);
  message = run_fail (tool, &fixture->context, "{\"pattern\": \"*.csv\", \"path\": \"linked-dir\"}",
                      TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  g_clear_pointer (&message, g_free);
  message = run_fail (tool, &fixture->context, "{\"path\": \"data\"}",
                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (message, ==, "`pattern` is required and must be a string");
  g_clear_pointer (&message, g_free);
  message = run_fail (tool, &fixture->context, "{\"pattern\": \"{a,b.csv\"}",
                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_clear_pointer (&message, g_free);
}

static void
test_glob_cap (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_glob_new ();
  g_autofree char *text = NULL;

  for (guint i = 0; i < 520; i++)
    {
      g_autofree char *name = g_strdup_printf ("many/f%03u.txt", i);

      tally_test_write_file (fixture->ws, name, "", 0);
      set_mtime (fixture->ws, name, 1700000000 + i);
    }

  text = run_ok (tool, &fixture->context, "{\"pattern\": \"many/*.txt\"}");
  g_assert_cmpuint (count_lines (text), ==, 501);
  g_assert_true (g_str_has_prefix (text, "many/f519.txt\nmany/f518.txt\n"));
  g_assert_true (g_str_has_suffix (text, "many/f020.txt\n… 20 more files not shown (cap 500); "
                                         "use a narrower pattern or path\n"));
}

/* Grep */

static void
test_grep (Fixture       *fixture,
           gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_grep_new ();
  g_autofree char *outside_file = g_build_filename (fixture->outside, "leak.sql", NULL);
  g_autofree char *all = NULL;
  g_autofree char *sql_only = NULL;
  g_autofree char *in_path = NULL;
  g_autofree char *one_file = NULL;
  g_autofree char *caseless = NULL;
  g_autofree char *none = NULL;
  g_autofree char *message = NULL;
  const char binary[] = "revenue\0revenue\n";

  tally_test_write_file (fixture->ws, "queries/top.sql", "-- top stores\nSELECT revenue FROM sales;\n", -1);
  tally_test_write_file (fixture->ws, "notes.md", "Revenue grew.\nrevenue by store\n", -1);
  tally_test_write_file (fixture->ws, "reports/q1/summary.md", "no match here\nnet revenue: 12\n", -1);
  tally_test_write_file (fixture->ws, "blob.dat", binary, sizeof binary);
  tally_test_write_file (fixture->ws, ".git/config", "revenue\n", -1);
  tally_test_write_file (fixture->outside, "leak.sql", "revenue leak\n", -1);
  make_symlink (outside_file, fixture->ws, "queries/leak.sql");

  all = run_ok (tool, &fixture->context, "{\"pattern\": \"revenue\"}");
  g_assert_cmpstr (all, ==,
                   "notes.md:2:revenue by store\n"
                   "queries/top.sql:2:SELECT revenue FROM sales;\n"
                   "reports/q1/summary.md:2:net revenue: 12\n");

  sql_only = run_ok (tool, &fixture->context, "{\"pattern\": \"revenue\", \"glob\": \"*.sql\"}");
  g_assert_cmpstr (sql_only, ==, "queries/top.sql:2:SELECT revenue FROM sales;\n");

  in_path = run_ok (tool, &fixture->context,
                    "{\"pattern\": \"\\\\d+$\", \"path\": \"reports\", \"glob\": \"q1/**/*.md\"}");
  g_assert_cmpstr (in_path, ==, "reports/q1/summary.md:2:net revenue: 12\n");

  one_file = run_ok (tool, &fixture->context, "{\"pattern\": \"^--\", \"path\": \"queries/top.sql\"}");
  g_assert_cmpstr (one_file, ==, "queries/top.sql:1:-- top stores\n");

  caseless = run_ok (tool, &fixture->context, "{\"pattern\": \"(?i)^revenue\", \"glob\": \"*.md\"}");
  g_assert_cmpstr (caseless, ==, "notes.md:1:Revenue grew.\nnotes.md:2:revenue by store\n");

  none = run_ok (tool, &fixture->context, "{\"pattern\": \"profit\"}");
  g_assert_cmpstr (none, ==, "No matches for profit (3 text files searched)\n");

  message = run_fail (tool, &fixture->context, "{\"pattern\": \"(unclosed\"}",
                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_true (g_str_has_prefix (message, "`pattern` is not a valid regular expression: "));
  g_assert_cmpuint (strlen (message), >, strlen ("`pattern` is not a valid regular expression: "));
  g_clear_pointer (&message, g_free);

  message = run_fail (tool, &fixture->context, "{\"pattern\": \"x\", \"path\": \"../outside\"}",
                      TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  g_clear_pointer (&message, g_free);

  message = run_fail (tool, &fixture->context, "{\"pattern\": \"x\", \"glob\": 7}",
                      TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (message, ==, "`glob` must be a string when given");
}

static void
test_grep_cap (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_grep_new ();
  g_autoptr(GString) big = g_string_new (NULL);
  g_autofree char *text = NULL;

  for (guint i = 1; i <= 800; i++)
    g_string_append_printf (big, "hit %u\n", i);
  tally_test_write_file (fixture->ws, "big.log", big->str, big->len);

  text = run_ok (tool, &fixture->context, "{\"pattern\": \"hit\"}");
  g_assert_cmpuint (count_lines (text), ==, 501);
  g_assert_true (g_str_has_prefix (text, "big.log:1:hit 1\n"));
  g_assert_nonnull (strstr (text, "big.log:500:hit 500\n… output stopped after 500 matches"));
}

/* Writes 200 lines of 25 a's and a `!`: on each, (a|aa)+$ tries every
 * way to split the a's into ones and twos from every start (hundreds of
 * thousands of steps, tens of milliseconds) before it fails, so a search
 * of the whole file takes seconds. */
static void
write_slow_file (const char *dir,
                 const char *relpath)
{
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; i < 200; i++)
    g_string_append (text, "aaaaaaaaaaaaaaaaaaaaaaaaa!\n");
  tally_test_write_file (dir, relpath, text->str, text->len);
}

/* A search that passes its time limit stops at the next line and says
 * where, and what it had found by then. */
static void
test_grep_time_limit (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_grep_new ();
  g_autofree char *message = NULL;
  g_autofree char *text = NULL;

  tally_test_write_file (fixture->ws, "fast.txt", "aaaa\n", -1);
  write_slow_file (fixture->ws, "slow.txt");

  tally_tool_grep_set_timeout_ms (TALLY_TOOL_GREP (tool), 300);
  message = run_fail (tool, &fixture->context, "{\"pattern\": \"(a|aa)+$\"}",
                      TALLY_TOOL_ERROR_FAILED);
  g_assert_true (g_str_has_prefix (message, "Grep stopped after 0.3 s, the time limit for one "
                                            "search, at slow.txt:"));
  g_assert_nonnull (strstr (message, "; it had found 1 match in 2 files by then (not shown). "
                                     "Nested or overlapping repeats such as (a|aa)+ or (a+)+ "));
  g_assert_true (g_str_has_suffix (message, ", or narrow `path` or `glob`."));

  /* The limit is per search: the next one runs normally. */
  text = run_ok (tool, &fixture->context, "{\"pattern\": \"^a+$\"}");
  g_assert_cmpstr (text, ==, "fast.txt:1:aaaa\n");
}

/* A line on which PCRE2 gives up (its backtracking limit; GRegex reports
 * G_REGEX_ERROR_MATCH) is reported, not taken for a line that does not
 * match. */
static void
test_grep_match_limit (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_grep_new ();
  g_autofree char *a50 = g_strnfill (50, 'a');
  g_autofree char *hopeless = g_strconcat (a50, "!\n", NULL);
  g_autofree char *one = g_strconcat ("aaaa\n", hopeless, "aa\n", NULL);
  g_autofree char *two = g_strconcat ("b\n", hopeless, hopeless, NULL);
  g_autofree char *text = NULL;
  g_autofree char *none = NULL;

  tally_test_write_file (fixture->ws, "one.txt", one, -1);
  text = run_ok (tool, &fixture->context, "{\"pattern\": \"^(a|aa)+$\"}");
  g_assert_cmpstr (text, ==,
                   "one.txt:1:aaaa\n"
                   "one.txt:3:aa\n"
                   "(The regular-expression engine gave up on one.txt:2, which was not searched: "
                   "the pattern needs too much backtracking there. Nested or overlapping repeats "
                   "such as (a|aa)+ or (a+)+ try exponentially many ways on a line they do not "
                   "match: simplify the pattern to search that line.)\n");

  tally_test_write_file (fixture->ws, "two.txt", two, -1);
  none = run_ok (tool, &fixture->context, "{\"pattern\": \"^(a|aa)+$\", \"path\": \"two.txt\"}");
  g_assert_cmpstr (none, ==,
                   "No matches for ^(a|aa)+$ (1 text file searched)\n"
                   "(The regular-expression engine gave up on 2 lines, which were not searched, "
                   "the first at two.txt:2: the pattern needs too much backtracking there. "
                   "Nested or overlapping repeats such as (a|aa)+ or (a+)+ try exponentially many "
                   "ways on a line they do not match: simplify the pattern to search those "
                   "lines.)\n");
}

typedef struct {
  TallyTool              *tool;
  const TallyToolContext *context;
  JsonObject             *input;
  GCancellable           *cancellable;
  char                   *text;
  GError                 *error;
  gint                    done;   /* atomic */
} GrepRun;

/* Runs the search synchronously in a thread of its own: tally_tool_run()
 * returns what the tool returned, where a GTask would turn any late
 * result into G_IO_ERROR_CANCELLED. */
static gpointer
grep_thread (gpointer user_data)
{
  GrepRun *run = user_data;

  run->text = tally_tool_run (run->tool, run->context, run->input, run->cancellable, &run->error);
  g_atomic_int_set (&run->done, TRUE);
  g_main_context_wakeup (NULL);

  return NULL;
}

static gboolean
set_flag_cb (gpointer user_data)
{
  gboolean *flag = user_data;

  *flag = TRUE;
  return G_SOURCE_REMOVE;
}

/* Cancelling stops a search in the middle of a file, before its next
 * line: the run fails with G_IO_ERROR_CANCELLED (and a turn ends at once,
 * not once the file is done). */
static void
test_grep_cancel (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_grep_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(JsonObject) input = tally_test_parse_object ("{\"pattern\": \"(a|aa)+$\"}");
  GrepRun run = { tool, &fixture->context, input, cancellable, NULL, NULL, FALSE };
  gboolean gave_up = FALSE;
  GThread *thread;
  guint guard;

  write_slow_file (fixture->ws, "slow.txt");

  /* Cancels once the search is well into the file; the guard only keeps
   * a search that ignores the cancellable from hanging the test. */
  thread = g_thread_new ("grep", grep_thread, &run);
  g_timeout_add (300, cancel_cb, cancellable);
  guard = g_timeout_add_seconds (10, set_flag_cb, &gave_up);
  while (!g_atomic_int_get (&run.done) && !gave_up)
    g_main_context_iteration (NULL, TRUE);

  g_assert_true (g_atomic_int_get (&run.done));
  g_source_remove (guard);
  g_thread_join (thread);
  g_assert_null (run.text);
  g_assert_error (run.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&run.error);
}

/* The check the agent makes before the gate: the schema's required
 * members and types, and a usable path. */
static void
test_check_input_schema (void)
{
  g_autoptr(TallyToolRegistry) registry = tally_tool_registry_new_default ();
  static const struct { const char *tool; const char *input; const char *message; } cases[] = {
    { "Write", "{\"file_path\": [\"a\"], \"content\": \"x\"}", "`file_path` must be a string, not an array" },
    { "Write", "{\"file_path\": \"a.md\"}", "`content` is required" },
    { "Write", "{\"file_path\": \"a.md\", \"content\": null}", "`content` must be a string, not null" },
    { "Write", "{\"file_path\": \"\", \"content\": \"x\"}", "`file_path` must not be empty" },
    { "Edit", "{\"file_path\": 7, \"old_string\": \"a\", \"new_string\": \"b\"}",
      "`file_path` must be a string, not a number" },
    { "Read", "{\"file_path\": {\"p\": 1}}", "`file_path` must be a string, not an object" },
    { "query_database", "{\"sql\": \"SELECT 1\", \"max_rows\": \"10\"}", "`max_rows` must be an integer, not a string" },
    { "query_database", "{\"sql\": \"SELECT 1\", \"max_rows\": 2.5}", "`max_rows` must be a whole number, not 2.5" },
    { "Edit", "{\"file_path\": \"a.md\", \"old_string\": \"a\", \"new_string\": \"b\", \"replace_all\": \"yes\"}",
      "`replace_all` must be true or false, not a string" },
    { "create_chart", "{\"spec\": \"{\\\"mark\\\": \\\"bar\\\"}\"}", "`spec` must be an object, not a string" },
    { "query_database", "{\"sql\": true}", "`sql` must be a string, not true or false" },
    { "query_database", "{}", "`sql` is required" },
    { "Glob", "{\"pattern\": \"*.md\", \"path\": \"\"}", "`path` must not be empty" },
    /* What passes: whole numbers written with a fraction, optional members
     * given as null, members the schema does not name. */
    { "query_database", "{\"sql\": \"SELECT 1\", \"max_rows\": 3.0, \"unknown\": [1]}", NULL },
    { "Glob", "{\"pattern\": \"*.md\", \"path\": null}", NULL },
    { "Glob", "{\"pattern\": \"*.md\"}", NULL },
    { "Write", "{\"file_path\": \"a.md\", \"content\": \"\"}", NULL },
    { "get_schema", "{}", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      TallyTool *tool = tally_tool_registry_lookup (registry, cases[i].tool);
      g_autoptr(JsonNode) node = json_from_string (cases[i].input, NULL);
      g_autoptr(GError) error = NULL;
      gboolean ok;

      g_assert_nonnull (tool);
      g_assert_nonnull (node);
      ok = tally_tool_check_input_schema (tool, json_node_get_object (node), &error);
      if (cases[i].message == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        {
          g_assert_false (ok);
          g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
          g_assert_cmpstr (error->message, ==, cases[i].message);
        }
    }
}

/* Registry */

static void
test_registry_json (void)
{
  g_autoptr(TallyToolRegistry) registry = tally_tool_registry_new_default ();
  g_autoptr(TallyToolRegistry) other = tally_tool_registry_new_default ();
  g_autofree char *first = tally_tool_registry_dup_tools_json (registry);
  g_autofree char *second = tally_tool_registry_dup_tools_json (registry);
  g_autofree char *third = tally_tool_registry_dup_tools_json (other);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  const char *names[] = { "query_database", "get_schema", "Read", "Glob", "Grep" };
  const char *required[] = { "sql", NULL, "file_path", "pattern", "pattern" };
  JsonArray *array;

  g_assert_cmpstr (first, ==, second);
  g_assert_cmpstr (first, ==, third);

  root = json_from_string (first, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (root));
  array = json_node_get_array (root);
  /* The read-only tools first, then Write, Edit and Bash
   * (test-mutating-tools.c checks those), then the card-backed
   * AskUserQuestion and ExitPlanMode (test-negotiation.c), then
   * create_chart (test-create-chart.c). */
  g_assert_cmpuint (json_array_get_length (array), ==, 11);
  g_assert_cmpuint (tally_tool_registry_get_n_tools (registry), ==, 11);
  g_assert_cmpstr (tally_tool_get_name (tally_tool_registry_get_tool (registry, 8)), ==, "AskUserQuestion");
  g_assert_cmpstr (tally_tool_get_name (tally_tool_registry_get_tool (registry, 9)), ==, "ExitPlanMode");
  g_assert_cmpstr (tally_tool_get_name (tally_tool_registry_get_tool (registry, 10)), ==, "create_chart");

  for (guint i = 0; i < 5; i++)
    {
      JsonObject *tool = json_array_get_object_element (array, i);
      JsonObject *schema = json_object_get_object_member (tool, "input_schema");
      GList *members = json_object_get_members (tool);

      g_assert_cmpuint (g_list_length (members), ==, 3);
      g_list_free (members);
      g_assert_cmpstr (json_object_get_string_member (tool, "name"), ==, names[i]);
      g_assert_cmpuint (strlen (json_object_get_string_member (tool, "description")), >, 100);
      g_assert_nonnull (schema);
      g_assert_cmpstr (json_object_get_string_member (schema, "type"), ==, "object");
      g_assert_true (json_object_has_member (schema, "properties"));
      if (required[i] != NULL)
        {
          JsonArray *req = json_object_get_array_member (schema, "required");

          g_assert_cmpuint (json_array_get_length (req), ==, 1);
          g_assert_cmpstr (json_array_get_string_element (req, 0), ==, required[i]);
        }
      else
        g_assert_false (json_object_has_member (schema, "required"));

      g_assert_true (tally_tool_registry_get_tool (registry, i) ==
                     tally_tool_registry_lookup (registry, names[i]));
      g_assert_true (tally_tool_is_read_only (tally_tool_registry_get_tool (registry, i)));
    }

  g_assert_null (tally_tool_registry_lookup (registry, "read"));
  g_assert_null (tally_tool_registry_lookup (registry, "bash"));
  g_assert_null (tally_tool_registry_get_tool (registry, 11));

  /* The tools array is compact JSON and begins with the first tool. */
  g_assert_true (g_str_has_prefix (first, "[{\"name\":\"query_database\",\"description\":\""));
}

/* run_async */

static void
run_done_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  GMainLoop *loop = user_data;
  g_autoptr(GError) error = NULL;
  char *text = tally_tool_run_finish (TALLY_TOOL (object), result, &error);

  g_object_set_data_full (G_OBJECT (object), "result", text, g_free);
  if (error != NULL)
    g_object_set_data_full (G_OBJECT (object), "error", g_error_copy (error),
                            (GDestroyNotify) g_error_free);
  g_main_loop_quit (loop);
}

static void
test_run_async (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  const char *json = "{\"sql\": \"SELECT Name FROM Artist ORDER BY ArtistId LIMIT 4\"}";
  g_autofree char *sync_text = run_ok (tool, &fixture->context, json);
  g_autoptr(JsonObject) input = tally_test_parse_object (json);
  g_autoptr(JsonObject) bad_input = tally_test_parse_object ("{\"sql\": \"DELETE FROM Artist\"}");
  TallyToolContext context = { g_strdup (fixture->chinook), g_strdup (fixture->ws) };
  GError *error;

  tally_tool_run_async (tool, &context, input, NULL, run_done_cb, loop);
  /* The context is copied: the caller may free it at once. */
  g_free (context.database_path);
  g_free (context.workspace);
  g_main_loop_run (loop);

  g_assert_null (g_object_get_data (G_OBJECT (tool), "error"));
  g_assert_cmpstr (g_object_get_data (G_OBJECT (tool), "result"), ==, sync_text);
  g_assert_cmpstr (sync_text, ==,
                   "Name\nAC/DC\nAccept\nAerosmith\nAlanis Morissette\n(4 rows)");

  tally_tool_run_async (tool, &fixture->context, bad_input, NULL, run_done_cb, loop);
  g_main_loop_run (loop);
  g_assert_null (g_object_get_data (G_OBJECT (tool), "result"));
  error = g_object_get_data (G_OBJECT (tool), "error");
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED);
}

/* Query limits (docs/security.md, "Query limits") ----------------------- */

/* An endless recursive CTE is stopped at the deadline with a result that
 * says so, not left running forever. */
static void
test_query_deadline (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *input = sql_input ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                                      "SELECT count(*) FROM c", -1);
  g_autofree char *message = NULL;
  g_autofree char *text = NULL;

  tally_tool_query_database_set_timeout_ms (TALLY_TOOL_QUERY_DATABASE (tool), 300);
  message = run_fail (tool, &fixture->context, input, TALLY_TOOL_ERROR_FAILED);
  g_assert_true (g_str_has_prefix (message, "The query was stopped after 0.3 s, the time limit "
                                            "for one query."));

  /* The deadline is per query: the next one runs normally. */
  text = run_ok (tool, &fixture->context, "{\"sql\":\"SELECT count(*) AS n FROM Genre\"}");
  g_assert_cmpstr (text, ==, "n\n25\n(1 row)");
}

/* No value longer than the length limit can be built. */
static void
test_query_length_limit (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *input = sql_input ("SELECT length(zeroblob(40000000)) AS n", -1);
  g_autofree char *message = run_fail (tool, &fixture->context, input, TALLY_TOOL_ERROR_FAILED);

  g_assert_cmpstr (message, ==, "SQL error: string or blob too big");
}

/* Bytes this process has written so far (files and pipes alike). */
static guint64
written_bytes (void)
{
  g_autofree char *io = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/io", &io, NULL, NULL));
  line = strstr (io, "wchar: ");
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + 7, NULL, 10);
}

/* ORDER BY over a large CTE: the sort stays in memory, bounded by the
 * memory budget, and writes no temporary files at all. */
static void
test_query_sort_bounded (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *input = sql_input ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                      "LIMIT 1000000) "
                                      "SELECT x, printf('%.200c', 'y') AS pad FROM c ORDER BY x DESC",
                                      1);
  g_autofree char *message = NULL;
  guint64 before, after;

  tally_tool_query_database_set_max_memory (TALLY_TOOL_QUERY_DATABASE (tool), 32 * 1024 * 1024);

  before = written_bytes ();
  message = run_fail (tool, &fixture->context, input, TALLY_TOOL_ERROR_FAILED);
  after = written_bytes ();

  g_assert_true (g_str_has_prefix (message, "The query was stopped after using more than 32 MiB "
                                            "of memory, the limit for one query."));
  /* A spilled sort would have written about 200 MB. */
  g_assert_cmpuint (after - before, <, 1024 * 1024);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("/tally/tools/query/revenue-by-genre", test_query_revenue_by_genre);
  ADD ("/tally/tools/query/refuses-writes", test_query_refuses_writes);
  ADD ("/tally/tools/query/info-pragmas", test_query_allows_info_pragmas);
  ADD ("/tally/tools/query/json-table-functions", test_query_json_table_functions);
  ADD ("/tally/tools/query/row-caps", test_query_row_caps);
  ADD ("/tally/tools/query/byte-cap", test_query_byte_cap);
  ADD ("/tally/tools/query/deadline", test_query_deadline);
  ADD ("/tally/tools/query/length-limit", test_query_length_limit);
  ADD ("/tally/tools/query/sort-bounded", test_query_sort_bounded);
  ADD ("/tally/tools/query/values", test_query_values);
  ADD ("/tally/tools/query/invalid-input", test_query_invalid_input);
  ADD ("/tally/tools/query/sql-error", test_query_sql_error);
  ADD ("/tally/tools/query/bad-database", test_query_bad_database);
  ADD ("/tally/tools/query/cancel", test_query_cancel);
  ADD ("/tally/tools/schema/chinook", test_schema_chinook);
  ADD ("/tally/tools/resolve-path", test_resolve_path);
  ADD ("/tally/tools/read/lines", test_read_lines);
  ADD ("/tally/tools/read/refusals", test_read_refusals);
  ADD ("/tally/tools/glob/ordering", test_glob_ordering);
  ADD ("/tally/tools/glob/cap", test_glob_cap);
  ADD ("/tally/tools/grep/search", test_grep);
  ADD ("/tally/tools/grep/cap", test_grep_cap);
  ADD ("/tally/tools/grep/time-limit", test_grep_time_limit);
  ADD ("/tally/tools/grep/match-limit", test_grep_match_limit);
  ADD ("/tally/tools/grep/cancel", test_grep_cancel);
  ADD ("/tally/tools/run-async", test_run_async);
  g_test_add_func ("/tally/tools/registry/json", test_registry_json);
  g_test_add_func ("/tally/tools/check-input-schema", test_check_input_schema);

#undef ADD

  return g_test_run ();
}
