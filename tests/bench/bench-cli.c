/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Benchmark: tally-cli end to end against the mock answering instantly.
 * Runs the 3-call tool loop (get_schema, query_database on Chinook, answer)
 * several times and prints the wall time per run and the CLI's peak RSS.
 * Prints figures only; asserts nothing about speed. */

#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "tally-test-mock.h"

#define RUNS 20

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *scenario = g_build_filename (g_getenv ("G_TEST_SRCDIR") ? g_getenv ("G_TEST_SRCDIR") : "tests",
                                                "scenarios", "genre-revenue.json", NULL);
  g_autofree char *db = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  double wall_ms[RUNS];
  long max_rss_kb = 0;

  for (guint i = 0; i < RUNS; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TallyTestMock) mock = tally_test_mock_start_file (scenario, &error);
      gint64 start;
      struct rusage usage;
      int status;
      pid_t pid;

      g_assert_no_error (error);
      start = g_get_monotonic_time ();
      pid = fork ();
      if (pid == 0)
        {
          int devnull = open ("/dev/null", O_WRONLY);

          dup2 (devnull, STDOUT_FILENO);
          dup2 (devnull, STDERR_FILENO);
          execl (TALLY_TEST_CLI, TALLY_TEST_CLI, "--base-url", tally_test_mock_get_base_url (mock),
                 "--db", db, "--json", "Which genre earned the most revenue?", (char *)NULL);
          _exit (127);
        }
      g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
      wall_ms[i] = (g_get_monotonic_time () - start) / 1000.0;
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
      max_rss_kb = MAX (max_rss_kb, usage.ru_maxrss);
    }

  qsort (wall_ms, RUNS, sizeof (double), compare_doubles);
  g_print ("tally-cli 3-call tool loop (get_schema, query_database on Chinook, answer), %d runs:\n", RUNS);
  g_print ("  wall time per run: median %.1f ms, min %.1f ms, max %.1f ms (process start to exit)\n",
           wall_ms[RUNS / 2], wall_ms[0], wall_ms[RUNS - 1]);
  g_print ("  peak RSS of tally-cli: %.1f MiB\n", max_rss_kb / 1024.0);

  return 0;
}
