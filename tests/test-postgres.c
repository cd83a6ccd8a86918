/* SPDX-License-Identifier: GPL-3.0-or-later */

/* PostgreSQL as the analyst's database (docs/postgresql.md): the
 * connection string, the read-only guards, the caps, cancelling, the
 * schema, the role warning, and a tally-cli turn against the mock. A
 * throwaway cluster (tests/tally-test-pg.c) holds the Beanline sample;
 * without a server binary every test that needs it is skipped. */

#include "config.h"

#include <sqlite3.h>
#include <string.h>

#include "tally-pg-query.h"
#include "tally-pg-source.h"
#include "tally-test-mock.h"
#include "tally-test-pg.h"
#include "tally-test-util.h"
#include "tally-tool-query-database.h"
#include "tally-tool.h"

static TallyTestPg *cluster;
static char *skip_reason;

static gboolean
need_cluster (void)
{
  if (cluster != NULL)
    return TRUE;

  g_test_skip (skip_reason ? skip_reason : "no PostgreSQL cluster");
  return FALSE;
}

static char *
analyst (void)
{
  return tally_test_pg_dup_conninfo (cluster, "analyst");
}

static gint64
sample_count (const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 count = -1;

  g_assert_cmpint (sqlite3_open_v2 (g_getenv ("TALLY_SAMPLE_DB"), &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    count = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return count;
}

static void
test_conninfo (void)
{
  static const struct { const char *in; const char *out; } cases[] = {
    { "host=db dbname=sales user=ann password=s3cret", "host=db dbname=sales user=ann" },
    { "password = 's3 cr\\'et' host=db", "host=db" },
    { "host=db sslpassword=k3y sslmode=require", "host=db sslmode=require" },
    { "service=sales", "service=sales" },
    { "postgresql://ann:s3cret@db.example:5433/sales?sslmode=require",
      "postgresql://ann@db.example:5433/sales?sslmode=require" },
    { "postgres://ann@db/sales?password=s3cret&application_name=x",
      "postgres://ann@db/sales?application_name=x" },
    { "postgresql:///sales?host=/tmp&password=s3cret", "postgresql:///sales?host=/tmp" },
    { "postgresql://db", "postgresql://db" },
    /* libpq decodes a parameter's keyword, and a password may hold ? or #
     * (libpq's user info ends only at @ or /). */
    { "postgresql://db/sales?%70assword=s3cret&user=ann", "postgresql://db/sales?user=ann" },
    { "postgresql://db/sales?pass%77ord=s3cret", "postgresql://db/sales" },
    { "postgresql://ann:s3?cret@db/sales", "postgresql://ann@db/sales" },
    { "postgresql://ann:s3#cret@db:5433", "postgresql://ann@db:5433" },
    { "postgresql://ann:s3?c#r=et@db/sales?sslmode=require", "postgresql://ann@db/sales?sslmode=require" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *redacted = tally_pg_conninfo_redact (cases[i].in);

      g_assert_cmpstr (redacted, ==, cases[i].out);
    }

  g_assert_true (tally_pg_conninfo_is ("postgresql://analyst@db.example/sales"));
  g_assert_true (tally_pg_conninfo_is ("postgres://db/sales"));
  g_assert_true (tally_pg_conninfo_is ("service=sales"));
  g_assert_true (tally_pg_conninfo_is ("host=db dbname=sales"));
  g_assert_false (tally_pg_conninfo_is ("/data/sales.db"));
  g_assert_false (tally_pg_conninfo_is ("sales.sqlite"));
  g_assert_false (tally_pg_conninfo_is (""));
  g_assert_false (tally_pg_conninfo_is (NULL));

  /* A string libpq cannot read is refused at once, without its password. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TallyPgSource) source = tally_pg_source_new ("host=db password=hunter2 nonsense", &error);

    g_assert_null (source);
    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
    g_assert_null (strstr (error->message, "hunter2"));
  }
}

static void
assert_refused (const char *conninfo,
                const char *sql,
                const char *expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = tally_pg_query_text (conninfo, sql, 10, 0, NULL, &error);

  g_test_message ("%s -> %s", sql, error ? error->message : text);
  g_assert_null (text);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED);
  g_assert_nonnull (strstr (error->message, expected));
}

static void
test_refusals (void)
{
  g_autofree char *conninfo = NULL;
  g_autofree char *super = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  if (!need_cluster ())
    return;

  conninfo = analyst ();
  super = tally_test_pg_dup_conninfo (cluster, "tally");

  assert_refused (conninfo, "INSERT INTO stores VALUES (7, 'x', 'y', 'z', '2025-01-01', 1)", "INSERT statements are refused");
  assert_refused (conninfo, "update stores set seats = 0", "UPDATE statements are refused");
  assert_refused (conninfo, "  -- a comment\n/* and /* nested */ */ CREATE TABLE t (a int)", "CREATE statements");
  assert_refused (conninfo, "SET ROLE tally", "SET statements");
  assert_refused (conninfo, "SET default_transaction_read_only = off", "SET statements");
  assert_refused (conninfo, "COPY stores TO STDOUT", "COPY statements");
  assert_refused (conninfo, "COPY stores TO '/tmp/stores.csv'", "COPY statements");
  assert_refused (conninfo, "-- only a comment", "must start with SELECT");
  /* A second statement after a query: the extended protocol refuses it. */
  assert_refused (conninfo, "SELECT 1; DELETE FROM sales", "exactly one statement");
  /* A write hidden in a query reaches the server, whose read-only
   * transaction refuses it, even for the superuser. */
  assert_refused (super, "WITH d AS (DELETE FROM sales RETURNING 1) SELECT count(*) FROM d",
                  "read-only transaction");

  /* A setting changed inside a query ends with its transaction. */
  text = tally_pg_query_text (conninfo, "SELECT set_config('default_transaction_read_only', 'off', false)",
                              10, 0, NULL, &error);
  g_assert_no_error (error);
  g_clear_pointer (&text, g_free);
  text = tally_pg_query_text (conninfo, "SHOW default_transaction_read_only", 10, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "default_transaction_read_only\non\n(1 row)");
  g_clear_pointer (&text, g_free);

  /* Nothing changed. */
  text = tally_pg_query_text (super, "SELECT count(*), sum(seats) FROM stores", 10, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "count | sum\n6 | 196\n(1 row)");
}

static void
test_timeout (void)
{
  g_autofree char *conninfo = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  if (!need_cluster ())
    return;

  conninfo = analyst ();
  text = tally_pg_query_text (conninfo, "SELECT pg_sleep(60)", 10, 300, NULL, &error);
  g_assert_null (text);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "stopped after 0.300 s"));
  g_clear_error (&error);

  /* The connection is fine afterwards. */
  text = tally_pg_query_text (conninfo, "SELECT 40 + 2 AS answer", 10, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "answer\n42\n(1 row)");
}

static void
test_row_cap (void)
{
  g_autofree char *conninfo = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *wide = NULL;
  g_autoptr(TallyQueryRows) rows = NULL;
  gint64 before;

  if (!need_cluster ())
    return;

  conninfo = analyst ();
  before = tally_test_peak_rss_kib ();
  text = tally_pg_query_text (conninfo, "SELECT n, n * 2 AS twice FROM generate_series(1, 10000000) AS n",
                              200, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (text, "n | twice\n1 | 2\n2 | 4\n"));
  g_assert_nonnull (strstr (text, "\n200 | 400\n… at least 100,000 more rows not shown (cap 200 rows)\n"
                                  "(200 of at least 100,200 rows shown)"));
  g_assert_null (strstr (text, "\n201 | 402\n"));
  /* Rows arrive one by one: ten million of them never sit in memory
   * (they would take several hundred MiB). Under AddressSanitizer freed
   * memory stays in its quarantine (256 MiB), so the peak says nothing
   * there. */
  g_test_message ("peak RSS grew by %" G_GINT64_FORMAT " KiB", tally_test_peak_rss_kib () - before);
#ifndef __SANITIZE_ADDRESS__
  g_assert_cmpint (tally_test_peak_rss_kib () - before, <, 64 * 1024);
#endif

  /* The byte cap: 300 rows of 200 shown characters do not fit in 32 KiB. */
  wide = tally_pg_query_text (conninfo, "SELECT repeat('x', 1000) AS wide FROM generate_series(1, 300)",
                              1000, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (wide, "(output cap 32 KiB)"));
  g_assert_cmpuint (strlen (wide), <=, TALLY_TOOL_QUERY_DATABASE_MAX_BYTES + 200);

  /* Rows as data for a chart: numbers stay numbers; the rest is not read. */
  rows = tally_pg_query_fetch_rows (&(TallyPgStatement) {
                                      .conninfo = conninfo,
                                      .sql = "SELECT n, n / 2.0 AS half, n % 2 = 0 AS even, 'r' || n AS label, "
                                             "NULL::text AS nothing FROM generate_series(1, 10000000) AS n",
                                      .max_rows = 3,
                                    }, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (rows->more);
  g_assert_cmpuint (json_array_get_length (rows->rows), ==, 3);
  g_assert_cmpstr (rows->column_names[0], ==, "n");
  g_assert_cmpstr (rows->column_names[3], ==, "label");
  {
    JsonArray *second = json_array_get_array_element (rows->rows, 1);

    g_assert_cmpint (json_array_get_int_element (second, 0), ==, 2);
    g_assert_cmpfloat (json_array_get_double_element (second, 1), ==, 1.0);
    g_assert_true (json_array_get_boolean_element (second, 2));
    g_assert_cmpstr (json_array_get_string_element (second, 3), ==, "r2");
    g_assert_true (json_array_get_null_element (second, 4));
  }
}

typedef struct
{
  char         *conninfo;
  GCancellable *cancellable;
  GError       *error;
  char         *text;
  gboolean      done;
} CancelRun;

static gpointer
cancel_thread (gpointer data)
{
  CancelRun *run = data;

  run->text = tally_pg_query_text (run->conninfo, "SELECT pg_sleep(60)", 10, 120000,
                                   run->cancellable, &run->error);
  g_atomic_int_set (&run->done, TRUE);
  return NULL;
}

static gboolean
cancel_cb (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

static void
test_cancel (void)
{
  CancelRun run = { 0 };
  g_autoptr(GThread) thread = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gint64 cancelled_at;
  gint64 ended_at;

  if (!need_cluster ())
    return;

  run.conninfo = analyst ();
  run.cancellable = g_cancellable_new ();
  thread = g_thread_new ("pg-cancel", cancel_thread, &run);

  /* Let the query reach the server, then stop it. */
  g_usleep (500 * G_TIME_SPAN_MILLISECOND);
  g_assert_false (g_atomic_int_get (&run.done));
  g_idle_add (cancel_cb, run.cancellable);
  g_main_context_iteration (NULL, TRUE);
  cancelled_at = g_get_monotonic_time ();
  g_thread_join (g_steal_pointer (&thread));
  ended_at = g_get_monotonic_time ();

  g_assert_null (run.text);
  g_assert_error (run.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_test_message ("the cancelled query ended %.0f ms after the cancel",
                  (ended_at - cancelled_at) / 1000.0);
  /* A generous bound: the query would otherwise run 60 s. */
  g_assert_cmpint (ended_at - cancelled_at, <, 10 * G_TIME_SPAN_SECOND);

  /* The pool still works. */
  text = tally_pg_query_text (run.conninfo, "SELECT 'still here' AS status", 10, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "status\nstill here\n(1 row)");

  g_clear_error (&run.error);
  g_free (run.conninfo);
  g_object_unref (run.cancellable);
}

static void
test_reconnect (void)
{
  g_autofree char *conninfo = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autoptr(TallyPgSource) source = NULL;

  if (!need_cluster ())
    return;

  conninfo = analyst ();
  text = tally_pg_query_text (conninfo, "SELECT 1 AS one", 10, 0, NULL, &error);
  g_assert_no_error (error);
  g_clear_pointer (&text, g_free);

  /* The server drops every connection of the role… */
  g_assert_true (tally_test_pg_exec (cluster, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                              "WHERE usename = 'analyst'", &error));
  g_assert_no_error (error);
  g_usleep (200 * G_TIME_SPAN_MILLISECOND);

  /* …and the next query opens one again. */
  text = tally_pg_query_text (conninfo, "SELECT 2 AS two", 10, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "two\n2\n(1 row)");

  source = tally_pg_source_get_shared (conninfo, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tally_pg_source_get_n_connections (source), >=, 1);

  /* A server that is not there: a tool error with libpq's message. */
  {
    g_autofree char *missing = g_strdup_printf ("host=%s/nowhere dbname=beanline user=analyst",
                                                tally_test_pg_get_socket_dir (cluster));
    g_autofree char *none = tally_pg_query_text (missing, "SELECT 1", 10, 0, NULL, &error);

    g_assert_null (none);
    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
    g_assert_nonnull (strstr (error->message, "Cannot connect to the PostgreSQL server"));
    g_assert_nonnull (strstr (error->message, "nowhere"));
  }
}

static void
test_schema (void)
{
  g_autofree char *conninfo = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *sales_line = NULL;
  g_autofree char *one = NULL;

  if (!need_cluster ())
    return;

  conninfo = analyst ();
  text = tally_pg_describe_schema (conninfo, NULL, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s", text);

  g_assert_true (g_str_has_prefix (text, "Database beanline (PostgreSQL 1"));
  g_assert_nonnull (strstr (text, "): 8 tables, 2 views; row counts are the planner's estimates\n"));
  sales_line = g_strdup_printf ("\nTABLE sales (about %s rows) -- One row per store, day and product\n"
                                "  sale_id integer PK NOT NULL\n"
                                "  sold_on text NOT NULL\n"
                                "  store_id integer NOT NULL -> stores(store_id)\n"
                                "  product_id integer NOT NULL -> products(product_id)\n"
                                "  quantity integer NOT NULL\n"
                                "  unit_price_gbp numeric(12,2) NOT NULL -- Price charged, pounds\n",
                                "22,489");
  g_assert_nonnull (strstr (text, sales_line));
  g_assert_cmpint (sample_count ("SELECT count(*) FROM sales"), ==, 22489);
  g_assert_nonnull (strstr (text, "\nTABLE stores (about 6 rows)\n  store_id integer PK NOT NULL\n"));
  g_assert_nonnull (strstr (text, "  unique (name)\n"));
  g_assert_nonnull (strstr (text, "\nTABLE price_history (about "));
  g_assert_nonnull (strstr (text, "  product_id integer NOT NULL -> products(product_id)\n"
                                  "  valid_from text NOT NULL\n"
                                  "  valid_to text\n"
                                  "  unit_price_gbp numeric(12,2) NOT NULL\n"
                                  "  primary key (product_id, valid_from)\n"));
  g_assert_nonnull (strstr (text, "\nVIEW daily_store_revenue\n  day text\n"));
  g_assert_nonnull (strstr (text, "\nVIEW sales_detail\n"));
  /* Tables before views. */
  g_assert_true (strstr (text, "TABLE store_days") < strstr (text, "VIEW daily_store_revenue"));

  one = tally_pg_describe_schema (conninfo, "public.STORES", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (one, "TABLE stores (about 6 rows)\n"));

  g_assert_null (tally_pg_describe_schema (conninfo, "nope", NULL, &error));
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "no table or view named nope. It has: "));
  g_assert_nonnull (strstr (error->message, "sales_detail"));
}

static void
warning_cb (TallyPgSource *source,
            const char    *message,
            gpointer       user_data)
{
  char **out = user_data;

  (void) source;
  g_free (*out);
  *out = g_strdup (message);
}

static void
test_warning (void)
{
  static const struct { const char *role; const char *expected; } cases[] = {
    { "tally", "Connected to PostgreSQL as tally, a superuser." },
    { "writer", "Connected to PostgreSQL as writer, a role that may change tables" },
    { "analyst", NULL },
  };

  if (!need_cluster ())
    return;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *conninfo = tally_test_pg_dup_conninfo (cluster, cases[i].role);
      g_autoptr(GError) error = NULL;
      g_autoptr(TallyPgSource) source = tally_pg_source_new (conninfo, &error);
      g_autofree char *signalled = NULL;
      g_autofree char *warning = NULL;
      g_autofree char *engine = NULL;

      g_assert_no_error (error);
      g_signal_connect (source, "warning", G_CALLBACK (warning_cb), &signalled);
      g_assert_true (tally_pg_source_connect (source, NULL, &error));
      g_assert_no_error (error);
      /* Once per source: a second connect says nothing new. */
      g_assert_true (tally_pg_source_connect (source, NULL, &error));
      while (g_main_context_iteration (NULL, FALSE))
        ;

      warning = tally_pg_source_dup_warning (source);
      if (cases[i].expected == NULL)
        {
          g_assert_null (warning);
          g_assert_null (signalled);
        }
      else
        {
          g_assert_nonnull (warning);
          g_assert_true (g_str_has_prefix (warning, cases[i].expected));
          g_assert_cmpstr (signalled, ==, warning);
        }

      engine = tally_pg_source_dup_engine (source);
      g_assert_true (g_str_has_prefix (engine, "PostgreSQL 1"));
    }

  /* The model is told the engine. */
  {
    g_autofree char *conninfo = analyst ();
    g_autofree char *section = tally_pg_dup_prompt_section (conninfo);

    g_assert_nonnull (strstr (section, "the PostgreSQL 1"));
    g_assert_nonnull (strstr (section, " database \"beanline\" on a server. Write SQL for PostgreSQL 1"));
  }
}

static char *
read_file_or_empty (const char *path)
{
  char *contents = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &contents, &length, NULL))
    return g_strdup ("");
  /* SQLite files hold NULs: make them searchable with strstr(). */
  for (gsize i = 0; i < length; i++)
    if (contents[i] == '\0')
      contents[i] = ' ';
  return contents;
}

static int
run_cli_argv (const char * const *argv,
              const char         *password,
              char              **out,
              char              **err)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "ANTHROPIC_BASE_URL");
  if (password != NULL)
    g_subprocess_launcher_setenv (launcher, "PGPASSWORD", password, TRUE);
  else
    g_subprocess_launcher_unsetenv (launcher, "PGPASSWORD");
  process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, out, err, &error);
  g_assert_no_error (error);
  g_test_message ("stderr: %s", *err);
  g_assert_true (g_subprocess_get_if_exited (process));
  return g_subprocess_get_exit_status (process);
}

/* Runs tally-cli with --db @conninfo, a store and workspace in @dir,
 * against @mock; returns the exit status. */
static int
run_cli (TallyTestMock  *mock,
         const char     *conninfo,
         const char     *dir,
         gboolean        json,
         const char     *prompt,
         char          **out,
         char          **err)
{
  g_autofree char *store = g_build_filename (dir, "sessions.db", NULL);
  const char *argv[] = { TALLY_TEST_CLI, "--base-url", tally_test_mock_get_base_url (mock),
                         "--db", conninfo, "--store", store, "--workspace", dir,
                         json ? "--json" : "--", prompt, NULL };

  return run_cli_argv (argv, NULL, out, err);
}

/* Resumes @session_id of the store in @dir, with PGPASSWORD set to
 * @password when not %NULL. */
static int
resume_cli (TallyTestMock  *mock,
            const char     *dir,
            const char     *session_id,
            const char     *password,
            const char     *prompt,
            char          **out,
            char          **err)
{
  g_autofree char *store = g_build_filename (dir, "sessions.db", NULL);
  const char *argv[] = { TALLY_TEST_CLI, "--base-url", tally_test_mock_get_base_url (mock),
                         "--store", store, "--resume", session_id, "--json", prompt, NULL };

  return run_cli_argv (argv, password, out, err);
}

/* One turn of tally-cli against the mock: the model asks query_database
 * for a count on the PostgreSQL sample and quotes the result. */
static void
test_cli_turn (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = NULL;
  g_autofree char *conninfo = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *store = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *stored = NULL;
  g_autofree char *wal = NULL;
  g_autofree char *wal_path = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *redacted = NULL;

  if (!need_cluster ())
    return;

  mock = tally_test_mock_start (
    "{\"responses\": ["
    " {\"match\": {\"last_user_text_contains\": \"How many sales\"},"
    "  \"message\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"toolu_pg1\", \"name\": \"query_database\","
    "   \"input\": {\"sql\": \"SELECT count(*) AS lines, sum(quantity) AS items FROM sales\"}}]}},"
    " {\"match\": {\"contains\": \"toolu_pg1\"},"
    "  \"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Counted:\\n{{last_tool_result}}\"}]}},"
    " {\"match\": {\"last_user_text_contains\": \"And again\"},"
    "  \"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Resumed.\"}]}}"
    "]}", &error);
  g_assert_no_error (error);
  dir = g_dir_make_tmp ("tally-pg-cli-XXXXXX", &error);
  g_assert_no_error (error);
  store = g_build_filename (dir, "sessions.db", NULL);
  conninfo = analyst ();

  g_assert_cmpint (run_cli (mock, conninfo, dir, TRUE, "How many sales lines and items?", &out, &err), ==, 0);

  expected = g_strdup_printf ("lines | items\\n%" G_GINT64_FORMAT " | %" G_GINT64_FORMAT "\\n(1 row)",
                              sample_count ("SELECT count(*) FROM sales"),
                              sample_count ("SELECT sum(quantity) FROM sales"));
  g_assert_nonnull (strstr (out, "\"type\":\"tool_result\""));
  g_assert_nonnull (strstr (out, expected));
  g_assert_null (strstr (out, "\"is_error\":true"));

  /* The session keeps the connection, but never the password. */
  redacted = tally_pg_conninfo_redact (conninfo);
  g_assert_null (strstr (redacted, TALLY_TEST_PG_PASSWORD));
  {
    g_autofree char *member = g_strdup_printf ("\"database\":\"%s\"", redacted);

    g_assert_nonnull (strstr (out, member));
  }
  g_assert_null (strstr (out, TALLY_TEST_PG_PASSWORD));
  g_assert_null (strstr (err, TALLY_TEST_PG_PASSWORD));
  stored = read_file_or_empty (store);
  wal_path = g_strconcat (store, "-wal", NULL);
  wal = read_file_or_empty (wal_path);
  g_assert_cmpuint (strlen (stored), >, 0);
  g_assert_null (strstr (stored, TALLY_TEST_PG_PASSWORD));
  g_assert_null (strstr (wal, TALLY_TEST_PG_PASSWORD));
  g_assert_true (strstr (stored, redacted) != NULL || strstr (wal, redacted) != NULL);
  /* Nor does the request sent to the model hold it; it names the engine. */
  {
    g_autoptr(JsonArray) requests = tally_test_mock_dup_requests (mock);
    g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), requests);
    g_autofree char *recorded = json_to_string (node, FALSE);

    g_assert_cmpuint (json_array_get_length (requests), ==, 2);
    g_assert_null (strstr (recorded, TALLY_TEST_PG_PASSWORD));
    g_assert_nonnull (strstr (recorded, "PostgreSQL 1"));
  }

  /* Resuming connects with the stored string: without the password (not
   * kept) the server refuses, before any request; with PGPASSWORD, as for
   * psql, the turn runs and the model is told the engine again. */
  {
    g_autofree char *first_line = g_strndup (out, strcspn (out, "\n"));
    g_autoptr(JsonObject) first = tally_test_parse_object (first_line);
    const char *session_id = json_object_get_string_member (first, "session_id");
    g_autofree char *out2 = NULL;
    g_autofree char *err2 = NULL;
    g_autofree char *out3 = NULL;
    g_autofree char *err3 = NULL;
    g_autoptr(JsonArray) requests = NULL;
    g_autoptr(JsonNode) last = NULL;
    g_autofree char *recorded = NULL;

    g_assert_cmpint (resume_cli (mock, dir, session_id, NULL, "And again?", &out2, &err2), ==, 1);
    g_assert_nonnull (strstr (err2, "cannot resume"));
    g_assert_nonnull (strstr (err2, "password"));
    g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 2);

    g_assert_cmpint (resume_cli (mock, dir, session_id, TALLY_TEST_PG_PASSWORD, "And again?", &out3, &err3), ==, 0);
    g_assert_nonnull (strstr (out3, "Resumed."));
    requests = tally_test_mock_dup_requests (mock);
    g_assert_cmpuint (json_array_get_length (requests), ==, 3);
    last = json_node_copy (json_array_get_element (requests, 2));
    recorded = json_to_string (last, FALSE);
    g_assert_nonnull (strstr (recorded, "Write SQL for PostgreSQL 1"));
  }

  tally_test_rm_rf (dir);
}

/* As a superuser the CLI says so once, on stderr; a server that is not
 * there is a clear usage error, and no turn starts. */
static void
test_cli_warning (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = NULL;
  g_autofree char *conninfo = NULL;
  g_autofree char *missing = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *out2 = NULL;
  g_autofree char *err2 = NULL;
  const char *first;

  if (!need_cluster ())
    return;

  mock = tally_test_mock_start ("{\"responses\": [{\"message\": {\"content\": "
                                "[{\"type\": \"text\", \"text\": \"Hello\"}]}}]}", &error);
  g_assert_no_error (error);
  dir = g_dir_make_tmp ("tally-pg-cli-XXXXXX", &error);
  g_assert_no_error (error);

  conninfo = tally_test_pg_dup_conninfo (cluster, "tally");
  g_assert_cmpint (run_cli (mock, conninfo, dir, FALSE, "Hi", &out, &err), ==, 0);
  first = strstr (err, "tally-cli: warning: Connected to PostgreSQL as tally, a superuser.");
  g_assert_nonnull (first);
  g_assert_null (strstr (first + strlen ("tally-cli: warning: Connected"), "Connected"));

  missing = g_strdup_printf ("host=%s/nowhere dbname=beanline", dir);
  g_assert_cmpint (run_cli (mock, missing, dir, FALSE, "Hi", &out2, &err2), ==, 2);
  g_assert_nonnull (strstr (err2, "Cannot connect to the PostgreSQL server"));
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 1);

  tally_test_rm_rf (dir);
}

/* Sensitive columns on PostgreSQL (docs/ledger.md): stores.name is marked;
 * its values, and values derived from it, never appear in a result. */
static gboolean
holds_store_name (const char *text)
{
  static const char * const names[] = { "Park Square", "Leeds Station", "Briggate", "Minster Yard",
                                        "The Shambles", "Heslington Hall", "PARK SQUARE", "park square" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (strstr (text, names[i]) != NULL)
      return TRUE;
  return FALSE;
}

static void
assert_pg_redaction (const char *sql,
                     const char *expected,
                     gint64      rows)
{
  const char * const marked[] = { "stores.name", NULL };
  g_autofree char *conninfo = analyst ();
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyResultOrigin) origin = NULL;
  g_autofree char *text = tally_pg_query_text_full (&(TallyPgStatement) { .conninfo = conninfo, .sql = sql,
                                                                          .max_rows = 10, .marked = marked },
                                                    NULL, &origin, &error);
  g_autoptr(GString) got = g_string_new (NULL);
  gint64 redacted_columns = 0;

  g_assert_no_error (error);
  g_assert_nonnull (origin);
  for (guint i = 0; i < origin->columns->len; i++)
    {
      gboolean redacted = ((TallyOriginColumn *) g_ptr_array_index (origin->columns, i))->redacted;

      g_string_append_c (got, redacted ? 'T' : '.');
      redacted_columns += redacted;
    }
  if (!g_str_equal (got->str, expected))
    g_test_message ("%s\n%s", sql, text);
  g_assert_cmpstr (got->str, ==, expected);
  g_assert_false (holds_store_name (text));
  g_assert_cmpint (origin->rows, ==, rows);
  g_assert_cmpint (origin->redactions, ==, rows * redacted_columns);
}

static void
test_redaction (void)
{
  g_autofree char *conninfo = NULL;
  g_autoptr(TallyResultOrigin) origin = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  TallyOriginColumn *city;

  if (!need_cluster ())
    return;

  assert_pg_redaction ("SELECT store_id, name, city FROM stores ORDER BY store_id", ".T.", 6);
  assert_pg_redaction ("SELECT upper(name) AS n, count(*) AS c FROM stores GROUP BY 1", "T.", 6);
  assert_pg_redaction ("SELECT x FROM (SELECT name AS x FROM stores) s", "T", 6);
  assert_pg_redaction ("WITH l AS (SELECT lower(name) AS ln, city FROM stores) "
                       "SELECT ln, length(ln), city FROM l", "TT.", 6);
  assert_pg_redaction ("SELECT row_to_json(s) FROM stores s", "T", 6);
  assert_pg_redaction ("SELECT split_part(name, ' ', 1) || '!' AS first_word, seats FROM stores", "T.", 6);
  assert_pg_redaction ("SELECT city, count(*) AS n FROM stores WHERE name LIKE '%a%' GROUP BY city", "..", 2);
  assert_pg_redaction ("SELECT * FROM stores ORDER BY store_id", ".T....", 6);
  /* PostgreSQL's functions that run query text or dump tables: the
   * marked name may not be in the statement at all. */
  assert_pg_redaction ("SELECT query_to_xml('SELECT na' || 'me FROM sto' || 'res', true, false, '')", "T", 1);
  assert_pg_redaction ("SELECT schema_to_xml('public', true, false, '')::text AS x", "T", 1);
  assert_pg_redaction ("SELECT word FROM ts_stat('SELECT to_tsvector(''simple'', na' || 'me) FROM sto' || 'res') "
                       "ORDER BY word LIMIT 1", "T", 1);

  /* An error that would quote a marked value quotes [redacted] instead. */
  {
    const char * const marked[] = { "stores.name", NULL };
    g_autofree char *failing = analyst ();
    g_autoptr(GError) cast_error = NULL;
    g_autofree char *none = tally_pg_query_text_full (&(TallyPgStatement) {
                                                        .conninfo = failing, .sql = "SELECT name::int FROM stores",
                                                        .max_rows = 10, .marked = marked,
                                                      }, NULL, NULL, &cast_error);

    g_assert_null (none);
    g_assert_error (cast_error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
    g_assert_false (holds_store_name (cast_error->message));
    g_assert_nonnull (strstr (cast_error->message, "invalid input syntax for type integer: \"[redacted]\""));
  }

  /* A Unicode-escaped name does not name the column in the text, but the
   * error still quotes its value. */
  {
    const char * const marked[] = { "stores.name", NULL };
    g_autofree char *failing = analyst ();
    g_autoptr(GError) cast_error = NULL;
    g_autofree char *none = tally_pg_query_text_full (&(TallyPgStatement) {
                                                        .conninfo = failing,
                                                        .sql = "SELECT U&\"n\\0061me\"::int FROM U&\"st\\006Fres\"",
                                                        .max_rows = 10, .marked = marked,
                                                      }, NULL, NULL, &cast_error);

    g_assert_null (none);
    g_assert_error (cast_error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
    g_assert_false (holds_store_name (cast_error->message));
  }

  /* The origins name the schema, table and column. */
  conninfo = analyst ();
  text = tally_pg_query_text_full (&(TallyPgStatement) {
                                     .conninfo = conninfo,
                                     .sql = "SELECT city, seats * 2 AS double_seats FROM stores",
                                     .max_rows = 10,
                                   }, NULL, &origin, &error);
  g_assert_no_error (error);
  city = g_ptr_array_index (origin->columns, 0);
  g_assert_false (city->derived);
  g_assert_cmpstr (city->schema, ==, "public");
  g_assert_cmpstr (city->table, ==, "stores");
  g_assert_cmpstr (city->column, ==, "city");
  g_assert_true (((TallyOriginColumn *) g_ptr_array_index (origin->columns, 1))->derived);
  g_assert_cmpuint (origin->reads->len, ==, 1);
  g_assert_nonnull (strstr (text, "Leeds"));
}

/* The same end to end: tally-cli --sensitive against the mock; the
 * recorded requests hold no store name and the ledger counts what went. */
static void
test_cli_redaction (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = NULL;
  g_autofree char *conninfo = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *store = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *ledger = NULL;
  g_autofree char *ledger_err = NULL;
  const char *session_id = NULL;
  g_autoptr(JsonArray) requests = NULL;
  g_auto(GStrv) lines = NULL;
  JsonObject *sent = NULL;

  if (!need_cluster ())
    return;

  mock = tally_test_mock_start (
    "{\"responses\": ["
    " {\"message\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"toolu_pgname\", \"name\": \"query_database\","
    "   \"input\": {\"sql\": \"SELECT name, upper(name) AS loud, city FROM stores ORDER BY store_id\"}}]}},"
    " {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Stores:\\n{{last_tool_result}}\"}]}}"
    "]}", &error);
  g_assert_no_error (error);
  dir = g_dir_make_tmp ("tally-pg-ledger-XXXXXX", &error);
  g_assert_no_error (error);
  store = g_build_filename (dir, "sessions.db", NULL);
  conninfo = analyst ();

  {
    const char *argv[] = { TALLY_TEST_CLI, "--base-url", tally_test_mock_get_base_url (mock),
                           "--db", conninfo, "--store", store, "--workspace", dir,
                           "--sensitive", "stores.name", "--json", "Which stores?", NULL };

    g_assert_cmpint (run_cli_argv (argv, NULL, &out, &err), ==, 0);
  }

  requests = tally_test_mock_dup_requests (mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);
  for (guint r = 0; r < 2; r++)
    {
      g_autofree char *raw = json_to_string (json_object_get_member (json_array_get_object_element (requests, r), "body"), FALSE);

      g_assert_false (holds_store_name (raw));
    }
  g_assert_nonnull (strstr (out, "[redacted] | [redacted] | Leeds"));

  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_autoptr(JsonObject) event = tally_test_parse_object (lines[i]);

      if (session_id == NULL)
        session_id = g_intern_string (json_object_get_string_member (event, "session_id"));
      if (g_str_equal (json_object_get_string_member (event, "type"), "request_sent") &&
          json_object_get_int_member (event, "call") == 1)
        sent = json_object_ref (json_array_get_object_element (json_object_get_array_member (event, "results"), 0));
    }
  g_assert_nonnull (sent);
  g_assert_cmpint (json_object_get_int_member (sent, "rows"), ==, 6);
  g_assert_cmpint (json_object_get_int_member (sent, "redactions"), ==, 12);
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (sent, "columns"), 0), ==,
                   "stores.name");
  json_object_unref (sent);

  {
    const char *argv[] = { TALLY_TEST_CLI, "--store", store, "--ledger", session_id, NULL };

    g_assert_cmpint (run_cli_argv (argv, NULL, &ledger, &ledger_err), ==, 0);
    g_assert_nonnull (strstr (ledger, "query_database toolu_pgname · 6 rows · "));
    g_assert_nonnull (strstr (ledger, "from stores.name, stores.city · 12 values redacted"));
  }

  tally_test_rm_rf (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);

  cluster = tally_test_pg_start (&skip_reason, &error);
  g_assert_no_error (error);

  g_test_add_func ("/postgres/conninfo", test_conninfo);
  g_test_add_func ("/postgres/refusals", test_refusals);
  g_test_add_func ("/postgres/timeout", test_timeout);
  g_test_add_func ("/postgres/row-cap", test_row_cap);
  g_test_add_func ("/postgres/cancel", test_cancel);
  g_test_add_func ("/postgres/reconnect", test_reconnect);
  g_test_add_func ("/postgres/schema", test_schema);
  g_test_add_func ("/postgres/warning", test_warning);
  g_test_add_func ("/postgres/cli-turn", test_cli_turn);
  g_test_add_func ("/postgres/cli-warning", test_cli_warning);
  g_test_add_func ("/postgres/redaction", test_redaction);
  g_test_add_func ("/postgres/cli-redaction", test_cli_redaction);

  status = g_test_run ();
  g_clear_pointer (&cluster, tally_test_pg_stop);
  g_free (skip_reason);
  return status;
}
