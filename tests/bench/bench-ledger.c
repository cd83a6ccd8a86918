/* SPDX-License-Identifier: GPL-3.0-or-later */

/* What the taint check costs (docs/ledger.md §3): query_database on the
 * Chinook database with and without a sensitive column, for a query of
 * direct columns (no probe is prepared) and one of derived columns over
 * a marked column (a baseline and one probe per derived column are
 * prepared). Prints medians of 7 runs of 50 queries each; asserts only
 * that the results are what they should be. */

#include "config.h"

#include <string.h>

#include "tally-tool-query-database.h"
#include "tally-tool.h"
#include "tally-test-mock.h"

#define RUNS    7
#define QUERIES 50

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Median milliseconds per query. */
static double
measure (const char *sql,
         char      **marked,
         gboolean    expect_redacted)
{
  g_autoptr(TallyTool) tool = tally_tool_query_database_new ();
  g_autofree char *db = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  TallyToolContext context = { db, NULL, FALSE, marked };
  g_autoptr(JsonObject) input = json_object_new ();
  double times[RUNS];

  json_object_set_string_member (input, "sql", sql);
  for (guint run = 0; run < RUNS; run++)
    {
      gint64 start = g_get_monotonic_time ();

      for (guint q = 0; q < QUERIES; q++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(JsonObject) artifact = NULL;
          g_autofree char *text = tally_tool_run_full (tool, &context, input, NULL, &artifact, &error);

          g_assert_no_error (error);
          g_assert_cmpint (strstr (text, "[redacted]") != NULL, ==, expect_redacted);
        }
      times[run] = (g_get_monotonic_time () - start) / 1000.0 / QUERIES;
    }

  qsort (times, RUNS, sizeof times[0], compare_doubles);
  return times[RUNS / 2];
}

int
main (int   argc,
      char *argv[])
{
  static const char direct[] = "SELECT FirstName, LastName, Email, City FROM Customer ORDER BY CustomerId";
  static const char derived[] = "SELECT substr(Email, instr(Email, '@') + 1) AS domain, count(*) AS n, "
                                "max(length(FirstName)) AS longest, group_concat(DISTINCT Country) AS countries "
                                "FROM Customer GROUP BY domain ORDER BY n DESC";
  char *marked[] = { (char *) "Customer.Email", NULL };
  double plain, redacted;

  g_test_init (&argc, &argv, NULL);

  plain = measure (direct, NULL, FALSE);
  redacted = measure (direct, marked, TRUE);
  g_print ("direct columns, 59 rows:   %.3f ms per query without a sensitive column, %.3f ms with one\n",
           plain, redacted);

  plain = measure (derived, NULL, FALSE);
  redacted = measure (derived, marked, TRUE);
  g_print ("4 derived columns, grouped: %.3f ms per query without a sensitive column, %.3f ms with one "
           "(a baseline and 4 probes prepared)\n", plain, redacted);

  return 0;
}
