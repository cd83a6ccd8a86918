/* SPDX-License-Identifier: GPL-3.0-or-later */

/* What leaves the machine (docs/ledger.md): the select-list splitter, the
 * taint rule on tricky SQL, the sensitive-columns file, and the ledger end
 * to end: tally-cli against the mock API with a marked column, checking
 * the recorded requests hold no marked value and the `request_sent` events
 * and `tally-cli --ledger` say exactly what was sent. */

#include "config.h"

#include <sqlite3.h>
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tally-database-profile.h"
#include "tally-pg-source.h"
#include "tally-sensitive-columns.h"
#include "tally-sql-select.h"
#include "tally-test-mock.h"
#include "tally-test-util.h"
#include "tally-tool-query-database.h"
#include "tally-tool.h"

static char *
chinook_path (void)
{
  return g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
}

/* The splitter {{{1 */

static TallySqlItem *
item (TallySqlSelect *select,
      guint           i)
{
  g_assert_cmpuint (i, <, select->items->len);
  return g_ptr_array_index (select->items, i);
}

static void
test_split_basic (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallySqlSelect) select =
    tally_sql_select_parse ("SELECT substr(email, instr(email,'@')+1) AS domain, count(*) AS n "
                            "FROM customers GROUP BY domain", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (select->items->len, ==, 2);
  g_assert_cmpstr (item (select, 0)->text, ==, "substr(email, instr(email,'@')+1) AS domain");
  g_assert_cmpstr (item (select, 0)->alias, ==, "domain");
  g_assert_cmpuint (item (select, 0)->n_references, ==, 2);
  g_assert_cmpstr (item (select, 0)->identifiers[0], ==, "email");
  g_assert_cmpstr (item (select, 1)->text, ==, "count(*) AS n");
  g_assert_cmpstr (item (select, 1)->alias, ==, "n");
  g_assert_cmpuint (item (select, 1)->n_references, ==, 0);
  g_assert_cmpstr (select->head, ==, "SELECT ");
  g_assert_cmpstr (select->rest, ==, "FROM customers GROUP BY domain");
  g_assert_false (select->compound);
  g_assert_false (select->derived);
}

static void
test_split_quotes_comments (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallySqlSelect) select =
    tally_sql_select_parse ("select 'a, b' AS \"x, y\", /* a, comment */ length(\"E,mail\") len -- , from\n"
                            ", [odd, name], e'it\\'s, here' s, $$ , $$ d, (a, b) FROM t", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (select->items->len, ==, 6);
  g_assert_cmpstr (item (select, 0)->alias, ==, "x, y");
  g_assert_cmpuint (item (select, 0)->n_references, ==, 0);
  g_assert_cmpstr (item (select, 1)->alias, ==, "len");
  g_assert_cmpstr (item (select, 1)->identifiers[0], ==, "E,mail");
  g_assert_cmpuint (item (select, 1)->n_references, ==, 1);
  g_assert_null (item (select, 2)->alias);
  g_assert_cmpstr (item (select, 2)->identifiers[0], ==, "odd, name");
  g_assert_cmpstr (item (select, 3)->alias, ==, "s");
  g_assert_cmpstr (item (select, 4)->alias, ==, "d");
  g_assert_cmpuint (item (select, 5)->n_references, ==, 2);
  g_assert_cmpstr (select->rest, ==, "FROM t");
}

static void
test_split_nested (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallySqlSelect) cte =
    tally_sql_select_parse ("WITH d AS (SELECT a, b FROM t), e (x) AS (SELECT 1) "
                            "SELECT DISTINCT d.a, (SELECT max(x) FROM e) AS m, CASE WHEN b > 1 THEN 'y' END flag "
                            "FROM d ORDER BY 1", &error);
  g_autoptr(TallySqlSelect) sub = NULL;
  g_autoptr(TallySqlSelect) compound = NULL;
  g_autoptr(TallySqlSelect) star = NULL;
  g_autoptr(TallySqlSelect) cast = NULL;

  g_assert_no_error (error);
  g_assert_true (cte->derived);
  g_assert_cmpstr (cte->head, ==, "WITH d AS (SELECT a, b FROM t), e (x) AS (SELECT 1) SELECT DISTINCT ");
  g_assert_cmpuint (cte->items->len, ==, 3);
  g_assert_cmpstr (item (cte, 0)->text, ==, "d.a");
  g_assert_null (item (cte, 0)->alias);
  g_assert_cmpuint (item (cte, 0)->n_references, ==, 1);
  g_assert_cmpstr (item (cte, 1)->alias, ==, "m");
  g_assert_cmpstr (item (cte, 2)->alias, ==, "flag");
  g_assert_cmpuint (item (cte, 2)->n_references, ==, 1);

  sub = tally_sql_select_parse ("SELECT email FROM (SELECT email FROM customers) s", &error);
  g_assert_no_error (error);
  g_assert_true (sub->derived);
  g_assert_cmpuint (sub->items->len, ==, 1);

  compound = tally_sql_select_parse ("SELECT a FROM t UNION ALL SELECT b FROM u", &error);
  g_assert_no_error (error);
  g_assert_true (compound->compound);

  star = tally_sql_select_parse ("SELECT *, t.* FROM t", &error);
  g_assert_no_error (error);
  g_assert_true (item (star, 0)->star);
  g_assert_true (item (star, 1)->star);

  cast = tally_sql_select_parse ("SELECT price::numeric(10, 2) AS p FROM t", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cast->items->len, ==, 1);
  g_assert_cmpuint (item (cast, 0)->n_references, ==, 1);

  g_assert_null (tally_sql_select_parse ("PRAGMA table_info(t)", &error));
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_clear_error (&error);
  g_assert_null (tally_sql_select_parse ("SELECT a, , b FROM t", &error));
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
}

static void
test_split_probe (void)
{
  g_autoptr(TallySqlSelect) select =
    tally_sql_select_parse ("SELECT substr(email, 5) AS domain, count(*) n, city FROM c GROUP BY domain", NULL);
  g_autofree char *baseline = tally_sql_select_dup_probe (select, -1);
  g_autofree char *second = tally_sql_select_dup_probe (select, 1);

  g_assert_cmpstr (baseline, ==, "SELECT NULL AS \"domain\", NULL AS \"n\", NULL FROM c GROUP BY domain");
  g_assert_cmpstr (second, ==, "SELECT NULL AS \"domain\", count(*) n, NULL FROM c GROUP BY domain");
}

/* The text rule (PostgreSQL) {{{1 */

static void
assert_text_taint (const char *sql,
                   const char *expected)
{
  const char * const marked[] = { "customers.email", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TallySqlSelect) select = tally_sql_select_parse (sql, &error);
  g_autofree gboolean *flags = NULL;
  g_autoptr(GString) got = g_string_new (NULL);
  gboolean touches = FALSE;

  g_assert_no_error (error);
  flags = tally_sql_select_text_taint (select, marked, &touches);
  for (guint i = 0; i < select->items->len; i++)
    g_string_append_c (got, flags[i] ? 'T' : '.');
  g_assert_cmpstr (got->str, ==, expected);
  g_assert_true (touches || strchr (expected, 'T') == NULL);
}

static void
test_text_taint (void)
{
  assert_text_taint ("SELECT substr(email, instr(email,'@')+1) AS domain, count(*) AS n "
                     "FROM customers GROUP BY domain", "T.");
  assert_text_taint ("SELECT city, upper(name) FROM customers", "..");
  assert_text_taint ("SELECT row_to_json(c), c.city FROM customers c", "TT");
  assert_text_taint ("SELECT d, count(*) FROM (SELECT lower(\"Email\") AS d FROM customers) s GROUP BY d", "T.");
  assert_text_taint ("WITH x AS (SELECT split_part(email, '@', 2) AS dom FROM customers) "
                     "SELECT dom, count(*), 1 + 1 FROM x GROUP BY dom", "T..");
  assert_text_taint ("WITH x AS (SELECT city FROM customers WHERE id > 3) SELECT upper(city) FROM x", "T");
  assert_text_taint ("SELECT upper(city), 'email' FROM stores", "..");
  assert_text_taint ("SELECT * FROM orders", ".");
  assert_text_taint ("SELECT * FROM (SELECT lower(email) AS e FROM customers) s", "T");
  /* A column alias list renames the marked column. */
  assert_text_taint ("SELECT upper(x), 1 FROM customers c(a, b, x)", "T.");
  assert_text_taint ("SELECT string_agg(e, ',') FROM customers AS c (i, n, e)", "T");
  assert_text_taint ("SELECT upper(e) FROM (TABLE customers) AS s(i, n, e)", "T");
  /* A function in FROM over the marked column, named by its alias. */
  assert_text_taint ("SELECT upper(e) FROM customers c, unnest(string_to_array(c.email, '@')) AS u(e)", "T");
  assert_text_taint ("SELECT lower(city) FROM customers WHERE lower(email) LIKE '%a%'", ".");
  /* PostgreSQL nests block comments (SQLite does not): the text after the
   * first close may still be a comment, so the split is in doubt. */
  assert_text_taint ("SELECT /* /* */ ' */ upper(email) AS x FROM customers -- '", "T");
  /* A Unicode-escaped identifier can spell any name. */
  assert_text_taint ("SELECT upper(U&\"\\0065mail\") FROM U&\"\\0063ustomers\"", "T");
  /* Functions that run query text or dump tables hide every name. */
  assert_text_taint ("SELECT query_to_xml('SELECT email FROM customers', true, false, ''), 1", "TT");
  assert_text_taint ("SELECT pg_catalog.\"table_to_xml\"('cust' || 'omers', true, false, '')", "T");
  assert_text_taint ("SELECT word FROM ts_stat('SELECT to_tsvector(email) FROM customers')", "T");
  /* The statistics views hold sampled values of every column. */
  assert_text_taint ("SELECT attname, histogram_bounds::text FROM pg_stats WHERE tablename = 'customers'", "TT");
}

/* Sensitive columns {{{1 */

static void
test_sensitive_file (void)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) columns = tally_sensitive_columns_parse ("# marked\ncustomers.email\n\n  sales.people.phone  \nCustomers.Email\n", &error);
  g_auto(GStrv) merged = NULL;
  g_autofree char *text = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (columns), ==, 2);
  g_assert_cmpstr (columns[1], ==, "sales.people.phone");
  g_assert_true (tally_sensitive_columns_match ((const char * const *) columns, NULL, "CUSTOMERS", "email"));
  /* No schema (SQLite, whose tables are all in "main"): a schema-qualified
   * entry still protects its table's column rather than nothing. */
  g_assert_true (tally_sensitive_columns_match ((const char * const *) columns, NULL, "people", "phone"));
  g_assert_false (tally_sensitive_columns_match ((const char * const *) columns, "public", "people", "phone"));
  g_assert_true (tally_sensitive_columns_match ((const char * const *) columns, "sales", "people", "phone"));
  g_assert_false (tally_sensitive_columns_match ((const char * const *) columns, NULL, "customers", "city"));

  merged = tally_sensitive_columns_merge ((const char * const *) columns,
                                          (const char * const []) { "customers.EMAIL", "t.c", NULL });
  g_assert_cmpuint (g_strv_length (merged), ==, 3);
  text = tally_sensitive_columns_format ((const char * const *) merged);
  g_assert_cmpstr (text, ==, "customers.email\nsales.people.phone\nt.c\n");

  g_assert_null (tally_sensitive_columns_parse ("customers.email\nemail\n", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "Line 2"));
  g_clear_error (&error);
  g_assert_false (tally_sensitive_columns_check_entry ("a b.c", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&error);
  g_assert_false (tally_sensitive_columns_check_entry ("a.b.c.d", NULL));
  g_assert_false (tally_sensitive_columns_check_entry ("a..c", NULL));
}

/* The taint rule on SQLite, through query_database {{{1 */

typedef struct {
  char       *text;
  JsonObject *origin;
} Query;

static void
query_clear (Query *query)
{
  g_free (query->text);
  g_clear_pointer (&query->origin, json_object_unref);
}

static void
run_query_on (const char *db,
              const char *sql,
              Query      *query)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  char *marked[] = { (char *) "Customer.Email", NULL };
  TallyToolContext context = { (char *) db, NULL, FALSE, marked };
  g_autoptr(JsonObject) input = json_object_new ();
  g_autoptr(JsonObject) artifact = NULL;
  g_autoptr(GError) error = NULL;

  json_object_set_string_member (input, "sql", sql);
  query->text = tally_tool_run_full (tool, &context, input, NULL, &artifact, &error);
  g_assert_no_error (error);
  g_assert_nonnull (artifact);
  query->origin = json_object_ref (json_object_get_object_member (artifact, "origin"));
}

static void
run_query (const char *sql,
           Query      *query)
{
  g_autofree char *db = chinook_path ();

  run_query_on (db, sql, query);
}

/* "T" for a redacted column, "." for a visible one, from the origin; the
 * text must agree: a redacted column shows [redacted] on every row. */
static char *
redacted_pattern (Query *query)
{
  JsonArray *columns = json_object_get_array_member (query->origin, "columns");
  g_auto(GStrv) lines = g_strsplit (query->text, "\n", -1);
  GString *pattern = g_string_new (NULL);
  guint n = json_array_get_length (columns);
  gint64 rows = json_object_get_int_member (query->origin, "rows");
  gint64 redactions = 0;

  for (guint i = 0; i < n; i++)
    {
      gboolean redacted = json_object_get_boolean_member (json_array_get_object_element (columns, i), "redacted");

      g_string_append_c (pattern, redacted ? 'T' : '.');
    }

  g_assert_cmpuint (g_strv_length (lines), >=, rows + 2);
  for (gint64 r = 1; r <= rows; r++)
    {
      g_auto(GStrv) cells = g_strsplit (lines[r], " | ", -1);

      g_assert_cmpuint (g_strv_length (cells), ==, n);
      for (guint i = 0; i < n; i++)
        {
          g_assert_cmpint (g_str_equal (cells[i], "[redacted]"), ==, pattern->str[i] == 'T');
          redactions += pattern->str[i] == 'T';
        }
    }
  g_assert_cmpint (json_object_get_int_member (query->origin, "redactions"), ==, redactions);

  return g_string_free (pattern, FALSE);
}

static void
assert_sqlite_taint_on (const char *db,
                        const char *sql,
                        const char *expected)
{
  Query query = { 0 };
  g_autofree char *pattern = NULL;

  run_query_on (db, sql, &query);
  pattern = redacted_pattern (&query);
  if (g_strcmp0 (pattern, expected) != 0)
    g_printerr ("%s\n%s\n", sql, query.text);
  g_assert_cmpstr (pattern, ==, expected);
  query_clear (&query);
}

static void
assert_sqlite_taint (const char *sql,
                     const char *expected)
{
  g_autofree char *db = chinook_path ();

  assert_sqlite_taint_on (db, sql, expected);
}

static void
test_sqlite_taint (void)
{
  /* The issue's example: the domain is redacted, the count is not. */
  assert_sqlite_taint ("SELECT substr(Email, instr(Email,'@')+1) AS domain, count(*) AS n "
                       "FROM Customer GROUP BY domain ORDER BY n DESC LIMIT 3", "T.");
  /* A direct column, also through a subquery and in a star. */
  assert_sqlite_taint ("SELECT Email FROM (SELECT Email FROM Customer) LIMIT 2", "T");
  assert_sqlite_taint ("SELECT CustomerId, FirstName, Email FROM Customer LIMIT 2", "..T");
  /* A derived table (CTE, FROM-subquery) that derives from the column. */
  assert_sqlite_taint ("WITH d AS (SELECT lower(Email) AS e, City FROM Customer) "
                       "SELECT e, City, length(City) FROM d LIMIT 2", "T.T");
  assert_sqlite_taint ("SELECT p, count(*) FROM (SELECT substr(Email, 1, 1) AS p FROM Customer) "
                       "GROUP BY p ORDER BY p LIMIT 2", "T.");
  /* The column read only to filter: the count is not its value. */
  assert_sqlite_taint ("SELECT count(*) AS n, max(City) FROM Customer WHERE Email LIKE '%gmail%'", "..");
  /* Quotes, comments and nested parentheses in the select list. */
  assert_sqlite_taint ("SELECT 'a, b' AS \"x, y\", /* , */ length(\"Email\") AS len -- , FROM\n"
                       ", upper(substr(FirstName, 1, (2))) FROM Customer LIMIT 2", ".T.");
  /* A compound or a star over a derived column: in doubt, redacted. */
  assert_sqlite_taint ("SELECT upper(FirstName) FROM Customer UNION SELECT lower(Email) FROM Customer LIMIT 2", "T");
  assert_sqlite_taint ("SELECT * FROM (SELECT lower(Email) AS e, City FROM Customer) LIMIT 2", "T.");
  /* A compound whose first arm is a plain unmarked column: SQLite names
   * that arm's column as the origin of every row, the marked ones too. */
  assert_sqlite_taint ("SELECT Name FROM Artist WHERE 0 UNION ALL SELECT Email FROM Customer LIMIT 3", "T");
  assert_sqlite_taint ("SELECT FirstName FROM Customer UNION SELECT Email FROM Customer LIMIT 2", "T");
  assert_sqlite_taint ("SELECT CustomerId, FirstName FROM Customer UNION ALL "
                       "SELECT CustomerId, Email FROM Customer LIMIT 2", "TT");
  /* Nothing marked is read: nothing is redacted. */
  assert_sqlite_taint ("SELECT upper(City), count(*) FROM Customer GROUP BY 1 LIMIT 2", "..");
  /* json_each() and json_tree() give out their arguments' values: their
   * columns look direct, but carry the marked column they are given. */
  assert_sqlite_taint ("SELECT c.CustomerId, j.value FROM Customer c, "
                       "json_each(json_array(c.Email)) j LIMIT 2", ".T");
  assert_sqlite_taint ("SELECT upper(j.value), j.key FROM Customer c, "
                       "json_each(json_object('e', c.Email)) j LIMIT 2", "TT");
  assert_sqlite_taint ("SELECT v FROM (SELECT j.atom AS v FROM Customer c, "
                       "json_tree(json_array(c.Email)) j) LIMIT 2", "T");
  assert_sqlite_taint ("SELECT * FROM Customer c, json_each(json_array(c.Email)) j "
                       "WHERE c.CustomerId = 1", "...........T.TTTTTTTT");
  assert_sqlite_taint ("SELECT count(*) FROM Customer c, json_each(json_array(c.Email)) j", ".");
  assert_sqlite_taint ("SELECT j.value FROM Customer c, json_each(json_array(c.City)) j LIMIT 2", ".");
}

/* A view's column is a read of the view (SQLITE_READ names the view), not
 * of the marked column it computes: a derived view column, or a derived
 * item over a view's plain copy of the column, must still be redacted. */
static void
test_sqlite_taint_view (void)
{
  g_autofree char *dir = g_dir_make_tmp ("tally-ledger-view-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "chinook.sqlite", NULL);
  g_autofree char *source = chinook_path ();
  g_autoptr(GFile) from = g_file_new_for_path (source);
  g_autoptr(GFile) to = g_file_new_for_path (db);
  g_autoptr(GError) error = NULL;
  sqlite3 *handle = NULL;

  g_file_copy (from, to, G_FILE_COPY_NONE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sqlite3_open (db, &handle), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (handle,
                                 "CREATE VIEW contact AS SELECT CustomerId AS id, Email AS mail, "
                                 "lower(Email) AS lmail, upper(City) AS city FROM Customer;"
                                 "CREATE VIEW contact2 AS SELECT id, mail AS m FROM contact;",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (handle);

  assert_sqlite_taint_on (db, "SELECT id, mail, lmail FROM contact LIMIT 2", ".TT");
  assert_sqlite_taint_on (db, "SELECT upper(mail), id + 1 FROM contact LIMIT 2", "T.");
  assert_sqlite_taint_on (db, "SELECT substr(m, 1, 3) FROM contact2 LIMIT 2", "T");
  assert_sqlite_taint_on (db, "SELECT lmail || '' FROM (SELECT lmail FROM contact) LIMIT 2", "T");

  tally_test_rm_rf (dir);
}

/* The error query_database gives for @sql on Chinook, Customer.Email marked. */
static GError *
run_query_error (const char *sql)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *db = chinook_path ();
  char *marked[] = { (char *) "Customer.Email", NULL };
  TallyToolContext context = { db, NULL, FALSE, marked };
  g_autoptr(JsonObject) input = json_object_new ();
  GError *error = NULL;
  g_autofree char *text = NULL;

  json_object_set_string_member (input, "sql", sql);
  text = tally_tool_run_full (tool, &context, input, NULL, NULL, &error);
  g_assert_null (text);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
  return error;
}

/* SQLite's JSON functions quote their argument in an error ("JSON path
 * error near '…'"): when the statement reads a marked column, quoted runs
 * of the message are not sent. */
static void
test_sqlite_error_redacted (void)
{
  const char * const queries[] = {
    "SELECT json_extract('{}', Email) FROM Customer",
    "SELECT count(*) FROM Customer WHERE json_set('{}', Email, 1) IS NULL",
  };
  g_autoptr(GError) plain = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      g_autoptr(GError) error = run_query_error (queries[i]);

      g_assert_null (strstr (error->message, "@"));
      g_assert_nonnull (strstr (error->message, "'[redacted]'"));
    }

  /* Nothing marked is read: the message stays as SQLite wrote it. */
  plain = run_query_error ("SELECT json_extract('{}', City) FROM Customer");
  g_assert_nonnull (strstr (plain->message, "'São José dos Campos'"));
}

static void
test_sqlite_origin (void)
{
  Query query = { 0 };
  JsonArray *columns;
  JsonObject *domain;
  JsonArray *reads;

  run_query ("SELECT substr(Email, instr(Email,'@')+1) AS domain, City FROM Customer LIMIT 1", &query);
  columns = json_object_get_array_member (query.origin, "columns");
  domain = json_array_get_object_element (columns, 0);
  g_assert_true (json_object_get_boolean_member (domain, "derived"));
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (domain, "sources"), 0), ==,
                   "Customer.Email");
  g_assert_false (json_object_get_boolean_member (json_array_get_object_element (columns, 1), "derived"));
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (json_array_get_object_element (columns, 1), "sources"), 0), ==,
                   "Customer.City");
  reads = json_object_get_array_member (query.origin, "reads");
  g_assert_cmpuint (json_array_get_length (reads), ==, 2);
  g_assert_cmpint (json_object_get_int_member (query.origin, "rows"), ==, 1);
  query_clear (&query);
}

/* End to end against the mock {{{1 */

static GPtrArray *
sqlite_strings (const char *sql)
{
  g_autofree char *db = chinook_path ();
  GPtrArray *values = g_ptr_array_new_with_free_func (g_free);
  sqlite3 *handle = NULL;
  sqlite3_stmt *stmt = NULL;

  g_assert_cmpint (sqlite3_open_v2 (db, &handle, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (handle, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    g_ptr_array_add (values, g_strdup ((const char *) sqlite3_column_text (stmt, 0)));
  sqlite3_finalize (stmt);
  sqlite3_close (handle);
  return values;
}

static char *
run_cli_full (const char * const *args,
              int                *status,
              char              **err)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       (err ? G_SUBPROCESS_FLAGS_STDERR_PIPE : 0));
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_subprocess_launcher_setenv (launcher, "ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "ANTHROPIC_BASE_URL");
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  g_ptr_array_add (argv, (gpointer) TALLY_TEST_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, err, &error);
  g_assert_no_error (error);
  *status = g_subprocess_get_exit_status (process);
  return out;
}

static char *
run_cli (const char * const *args,
         int                *status)
{
  return run_cli_full (args, status, NULL);
}

/* The tool_result block of @tool_id in a request body, as JSON text,
 * without the prompt-cache marker the request puts on its last block
 * (docs/ledger.md §4). */
static char *
dup_result_block (JsonObject *body,
                  const char *tool_id,
                  const char **content)
{
  JsonArray *messages = json_object_get_array_member (body, "messages");

  for (guint m = 0; m < json_array_get_length (messages); m++)
    {
      JsonNode *message_content = json_object_get_member (json_array_get_object_element (messages, m), "content");

      if (!JSON_NODE_HOLDS_ARRAY (message_content))
        continue;
      for (guint b = 0; b < json_array_get_length (json_node_get_array (message_content)); b++)
        {
          JsonNode *node = json_array_get_element (json_node_get_array (message_content), b);
          JsonObject *block = json_node_get_object (node);

          if (g_strcmp0 (json_object_get_string_member_with_default (block, "tool_use_id", NULL), tool_id) == 0)
            {
              *content = json_object_get_string_member (block, "content");
              if (json_object_has_member (block, "cache_control"))
                json_object_remove_member (block, "cache_control");
              return json_to_string (node, FALSE);
            }
        }
    }
  return NULL;
}

static void
test_end_to_end (void)
{
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "scenarios", "ledger-sensitive.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start_file (scenario, &error);
  g_autofree char *db = chinook_path ();
  g_autofree char *dir = g_dir_make_tmp ("tally-ledger-XXXXXX", &error);
  g_autofree char *store = g_build_filename (dir, "sessions.db", NULL);
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--db", db,
                         "--store", store, "--workspace", dir, "--sensitive", "Customer.Email",
                         "--json", "Which e-mail domains do our customers use?", NULL };
  g_autoptr(GPtrArray) emails = sqlite_strings ("SELECT Email FROM Customer");
  g_autoptr(GPtrArray) domains = sqlite_strings ("SELECT DISTINCT substr(Email, instr(Email, '@') + 1) FROM Customer");
  g_autoptr(GPtrArray) counts = sqlite_strings ("SELECT count(*) AS n FROM Customer GROUP BY substr(Email, instr(Email, '@') + 1) "
                                                "ORDER BY n DESC, substr(Email, instr(Email, '@') + 1) LIMIT 5");
  g_autoptr(GPtrArray) names = sqlite_strings ("SELECT FirstName || ' | [redacted] | ' || City FROM Customer ORDER BY CustomerId LIMIT 5");
  g_autoptr(JsonArray) requests = NULL;
  g_autoptr(GPtrArray) ledger = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_autofree char *out = NULL;
  g_autofree char *text = NULL;
  g_autofree char *jsonl = NULL;
  g_auto(GStrv) lines = NULL;
  const char *session_id = NULL;
  const char *ids[] = { "toolu_01Domains", "toolu_02Rows" };
  int status = -1;

  g_assert_no_error (error);
  out = run_cli (args, &status);
  g_assert_cmpint (status, ==, 0);

  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_autoptr(JsonObject) event = tally_test_parse_object (lines[i]);

      session_id = session_id ? session_id : g_intern_string (json_object_get_string_member (event, "session_id"));
      if (g_str_equal (json_object_get_string_member (event, "type"), "request_sent"))
        g_ptr_array_add (ledger, json_object_ref (event));
    }

  /* No value of the marked column, nor a domain cut from it, was sent. */
  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 3);
  g_assert_cmpuint (ledger->len, ==, 3);
  for (guint r = 0; r < json_array_get_length (requests); r++)
    {
      JsonNode *body = json_object_get_member (json_array_get_object_element (requests, r), "body");
      g_autofree char *raw = json_to_string (body, FALSE);

      for (guint i = 0; i < emails->len; i++)
        g_assert_null (strstr (raw, g_ptr_array_index (emails, i)));
      for (guint i = 0; i < domains->len; i++)
        g_assert_null (strstr (raw, g_ptr_array_index (domains, i)));
      g_assert_cmpint (json_object_get_int_member (g_ptr_array_index (ledger, r), "call"), ==, r);
      g_assert_cmpint (json_object_get_int_member (g_ptr_array_index (ledger, r), "bytes"), >, strlen (raw) / 2);
    }

  /* Request 0 sent no tool result; requests 1 and 2 one each, exactly as
   * the mock received it. */
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (g_ptr_array_index (ledger, 0), "results")), ==, 0);
  for (guint r = 1; r <= 2; r++)
    {
      JsonArray *results = json_object_get_array_member (g_ptr_array_index (ledger, r), "results");
      JsonObject *result;
      JsonObject *body = json_object_get_object_member (json_array_get_object_element (requests, r), "body");
      const char *content = NULL;
      g_autofree char *block = dup_result_block (body, ids[r - 1], &content);
      g_auto(GStrv) content_lines = NULL;
      JsonArray *columns;

      g_assert_cmpuint (json_array_get_length (results), ==, 1);
      result = json_array_get_object_element (results, 0);
      g_assert_nonnull (block);
      g_assert_cmpstr (json_object_get_string_member (result, "tool_id"), ==, ids[r - 1]);
      g_assert_cmpstr (json_object_get_string_member (result, "tool_name"), ==, "query_database");
      g_assert_cmpint (json_object_get_int_member (result, "bytes"), ==, strlen (block));
      g_assert_cmpint (json_object_get_int_member (result, "rows"), ==, 5);
      g_assert_cmpint (json_object_get_int_member (result, "redactions"), ==, 5);
      /* The columns the statement read: the marked one, and for the
       * second query the others it shows and sorts by. */
      columns = json_object_get_array_member (result, "columns");
      g_assert_cmpuint (json_array_get_length (columns), ==, r == 1 ? 1 : 4);
      g_assert_cmpstr (json_array_get_string_element (columns, r == 1 ? 0 : 1), ==, "Customer.Email");
      g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (result, "tables"), 0), ==, "Customer");

      /* Five rows, each with one [redacted]; the rest as in the database. */
      content_lines = g_strsplit (content, "\n", -1);
      g_assert_cmpuint (g_strv_length (content_lines), ==, 7);
      for (guint i = 0; i < 5; i++)
        {
          g_autofree char *expected = r == 1 ? g_strdup_printf ("[redacted] | %s", (char *) g_ptr_array_index (counts, i))
                                             : g_strdup (g_ptr_array_index (names, i));

          g_assert_cmpstr (content_lines[i + 1], ==, expected);
        }
    }

  /* tally-cli --ledger prints the same figures, readable and as JSON Lines. */
  {
    const char *ledger_args[] = { "--store", store, "--ledger", session_id, NULL };
    const char *json_args[] = { "--store", store, "--ledger", session_id, "--json", NULL };
    g_auto(GStrv) json_lines = NULL;

    text = run_cli (ledger_args, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (text, "Turn 1 · Which e-mail domains do our customers use?\n"));
    g_assert_nonnull (strstr (text, "  Request 1 · "));
    g_assert_nonnull (strstr (text, "no new tool results"));
    g_assert_nonnull (strstr (text, "    query_database toolu_01Domains · 5 rows · "));
    g_assert_nonnull (strstr (text, " · from Customer.Email · 5 values redacted\n"));
    g_assert_nonnull (strstr (text, "    query_database toolu_02Rows · 5 rows · "));
    g_assert_nonnull (strstr (text, "from Customer.FirstName, Customer.Email, Customer.City"));

    jsonl = run_cli (json_args, &status);
    g_assert_cmpint (status, ==, 0);
    json_lines = g_strsplit (g_strchomp (jsonl), "\n", -1);
    g_assert_cmpuint (g_strv_length (json_lines), ==, 3);
    for (guint i = 0; i < 3; i++)
      {
        g_autoptr(JsonObject) event = tally_test_parse_object (json_lines[i]);
        g_autoptr(JsonNode) a = json_node_init_object (json_node_alloc (), event);
        g_autoptr(JsonNode) b = json_node_init_object (json_node_alloc (), g_ptr_array_index (ledger, i));

        g_assert_true (json_node_equal (a, b));
      }
  }

  tally_test_rm_rf (dir);
}

/* The database's own list: the profile file marks the column without
 * --sensitive; a file that cannot be parsed stops the turn before anything
 * is sent. */
static void
test_profile_file (void)
{
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "scenarios", "ledger-sensitive.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start_file (scenario, &error);
  g_autofree char *db = chinook_path ();
  g_autofree char *dir = g_dir_make_tmp ("tally-ledger-XXXXXX", &error);
  g_autofree char *store = g_build_filename (dir, "sessions.db", NULL);
  g_autofree char *key = tally_pg_database_key (db);
  g_autofree char *profile = tally_database_profile_ensure_dir (dir, key, &error);
  const char *args[] = { "--base-url", tally_test_mock_get_base_url (mock), "--db", db,
                         "--store", store, "--workspace", dir, "--json", "Domains?", NULL };
  g_autoptr(GPtrArray) emails = sqlite_strings ("SELECT Email FROM Customer");
  g_autoptr(JsonArray) requests = NULL;
  g_autofree char *out = NULL;
  g_autofree char *bad = NULL;
  g_autofree char *bad_err = NULL;
  int status = -1;

  g_assert_no_error (error);
  g_assert_true (tally_database_profile_write (profile, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS,
                                               "# never sent\ncustomer.email\n", &error));
  g_assert_no_error (error);

  out = run_cli (args, &status);
  g_assert_cmpint (status, ==, 0);
  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 3);
  for (guint r = 0; r < json_array_get_length (requests); r++)
    {
      g_autofree char *raw = json_to_string (json_object_get_member (json_array_get_object_element (requests, r), "body"), FALSE);

      for (guint i = 0; i < emails->len; i++)
        g_assert_null (strstr (raw, g_ptr_array_index (emails, i)));
    }
  g_assert_nonnull (strstr (out, "Luís | [redacted] | São José dos Campos"));

  /* A line that is not a column: the turn fails, nothing more is sent. */
  g_assert_true (tally_database_profile_write (profile, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS,
                                               "customer.email\nemail\n", &error));
  bad = run_cli_full (args, &status, &bad_err);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (bad_err, "sensitive-columns) cannot be used: Line 2:"));
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 3);

  tally_test_rm_rf (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/ledger/split/basic", test_split_basic);
  g_test_add_func ("/tally/ledger/split/quotes-comments", test_split_quotes_comments);
  g_test_add_func ("/tally/ledger/split/nested", test_split_nested);
  g_test_add_func ("/tally/ledger/split/probe", test_split_probe);
  g_test_add_func ("/tally/ledger/taint/text", test_text_taint);
  g_test_add_func ("/tally/ledger/sensitive-file", test_sensitive_file);
  g_test_add_func ("/tally/ledger/taint/sqlite", test_sqlite_taint);
  g_test_add_func ("/tally/ledger/taint/sqlite-view", test_sqlite_taint_view);
  g_test_add_func ("/tally/ledger/taint/sqlite-error", test_sqlite_error_redacted);
  g_test_add_func ("/tally/ledger/origin/sqlite", test_sqlite_origin);
  g_test_add_func ("/tally/ledger/end-to-end", test_end_to_end);
  g_test_add_func ("/tally/ledger/profile-file", test_profile_file);

  return g_test_run ();
}
