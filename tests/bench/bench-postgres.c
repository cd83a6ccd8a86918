/* SPDX-License-Identifier: GPL-3.0-or-later */

/* PostgreSQL figures (issue 13, benchmarks; docs/postgresql.md): a
 * one-million-row aggregate through Tally's path (query_database's text,
 * a pooled and a fresh connection) next to `psql -c` on the same query in
 * the same run, alternately, medians of 5; and rows per second through
 * the row cap and through single-row mode. Prints figures; asserts nothing
 * about speed. Needs a PostgreSQL server binary (skips without one). */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tally-pg-query.h"
#include "tally-pg-source.h"
#include "tally-test-pg.h"

#define RUNS 5
#define AGGREGATE "SELECT grp, count(*) AS n, sum(amount) AS total FROM big GROUP BY grp ORDER BY grp"

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (double *values)
{
  qsort (values, RUNS, sizeof (double), compare_doubles);
  return values[RUNS / 2];
}

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static double
run_psql (TallyTestPg *cluster,
          const char  *sql,
          char       **out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  double start = now_ms ();

  g_subprocess_launcher_setenv (launcher, "PGPASSWORD", TALLY_TEST_PG_PASSWORD, TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, "psql", "-X", "-q", "-A", "-t",
                                         "-h", tally_test_pg_get_socket_dir (cluster),
                                         "-U", "analyst", "-d", "beanline", "-c", sql, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  return now_ms () - start;
}

static gboolean
count_cb (const TallyPgColumns *columns,
          const char * const   *values,
          const int            *lengths,
          gpointer              user_data)
{
  (void) columns;
  (void) lengths;
  if (values != NULL)
    (*(guint64 *) user_data)++;
  return TRUE;
}

static double
run_fresh (const char *conninfo,
           const char *sql,
           guint64    *rows)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyPgSource) source = NULL;
  double start = now_ms ();

  source = tally_pg_source_new (conninfo, &error);
  g_assert_no_error (error);
  *rows = 0;
  g_assert_true (tally_pg_source_query (source, sql, 0, count_cb, rows, NULL, &error));
  g_assert_no_error (error);
  return now_ms () - start;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autofree char *skip = NULL;
  g_autoptr(TallyTestPg) cluster = NULL;
  g_autofree char *conninfo = NULL;
  g_autofree char *first = NULL;
  double tally_ms[RUNS], fresh_ms[RUNS], psql_ms[RUNS];
  guint64 rows = 0;

  (void) argc;
  (void) argv;

  cluster = tally_test_pg_start (&skip, &error);
  g_assert_no_error (error);
  if (cluster == NULL)
    {
      printf ("bench-postgres: skipped: %s\n", skip);
      return 0;
    }

  g_assert_true (tally_test_pg_exec (cluster,
    "CREATE TABLE big AS SELECT n, n % 100 AS grp, ((n::bigint * 7919) % 100000) / 100.0 AS amount "
    "FROM generate_series(1, 1000000) AS n; ANALYZE big; GRANT SELECT ON big TO analyst", &error));
  g_assert_no_error (error);
  conninfo = tally_test_pg_dup_conninfo (cluster, "analyst");

  /* Warm the pool and the server's cache once. */
  first = tally_pg_query_text (conninfo, AGGREGATE, 200, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (first, "(100 rows)"));

  for (int i = 0; i < RUNS; i++)
    {
      g_autofree char *text = NULL;
      g_autofree char *out = NULL;
      double start = now_ms ();

      text = tally_pg_query_text (conninfo, AGGREGATE, 200, 0, NULL, &error);
      g_assert_no_error (error);
      tally_ms[i] = now_ms () - start;

      fresh_ms[i] = run_fresh (conninfo, AGGREGATE, &rows);
      g_assert_cmpuint (rows, ==, 100);

      psql_ms[i] = run_psql (cluster, AGGREGATE, &out);
      g_assert_nonnull (strstr (out, "\n99|10000|"));
    }

  printf ("PostgreSQL aggregate over 1,000,000 rows (100 groups), median of %d, alternating:\n", RUNS);
  printf ("  Tally query_database text, pooled connection : %8.1f ms\n", median (tally_ms));
  printf ("  Tally, new connection each time              : %8.1f ms\n", median (fresh_ms));
  printf ("  psql -c (process start and connection)       : %8.1f ms\n", median (psql_ms));

  /* Through the row cap: 1,000 rows shown, 100,000 more counted, then the
   * rest cancelled. (A table, not generate_series(), which the server
   * materialises whole before the first row.) */
  for (int i = 0; i < RUNS; i++)
    {
      g_autofree char *text = NULL;
      double start = now_ms ();

      text = tally_pg_query_text (conninfo, "SELECT n, grp FROM big", 1000, 0, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (strstr (text, "(1,000 of at least 101,000 rows shown)"));
      tally_ms[i] = now_ms () - start;
    }
  printf ("Row cap (1,000 shown + 100,000 counted of 1,000,000, then cancelled): %.1f ms, %.0f rows/s\n",
          median (tally_ms), 101000 / (median (tally_ms) / 1000.0));

  /* Single-row mode end to end, no cap. */
  for (int i = 0; i < RUNS; i++)
    {
      fresh_ms[i] = run_fresh (conninfo, "SELECT n, grp, amount FROM big", &rows);
      g_assert_cmpuint (rows, ==, 1000000);
    }
  printf ("Single-row mode, 1,000,000 rows of 3 columns: %.1f ms, %.0f rows/s\n",
          median (fresh_ms), 1000000 / (median (fresh_ms) / 1000.0));

  return 0;
}
