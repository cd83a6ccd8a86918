/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Data file import (docs/data-files.md §7): writes a CSV file of about
 * 100 MB, then imports it with tally_data_import() and with the sqlite3
 * shell's `.import --csv` into `:memory:`, alternately, three rounds each,
 * and prints MB/s of both, their ratio and the peak memory of this
 * process. Prints figures; asserts nothing about speed. */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tally-data-import.h"
#include "tally-test-util.h"

#define TARGET_BYTES (100 * 1000 * 1000)
#define ROUNDS       3

/* Orders: integers, decimals, dates, text with a quoted comma now and
 * then; about 100 bytes a row. */
static guint64
write_csv (const char *path)
{
  FILE *out = fopen (path, "w");
  guint64 rows = 0;
  long size = 0;

  g_assert_nonnull (out);
  fputs ("order_id,customer,store,amount,sold_on,channel,note\n", out);
  while (ftell (out) < TARGET_BYTES)
    {
      guint64 i = rows++;

      fprintf (out, "%" G_GUINT64_FORMAT ",customer-%05u,%u,%u.%02u,2024-%02u-%02u,%s,%s\n",
               i, (guint) (i * 7919 % 50000), (guint) (i % 40) + 1,
               (guint) (i * 31 % 9000), (guint) (i % 100),
               (guint) (i % 12) + 1, (guint) (i % 28) + 1,
               i % 3 == 0 ? "web" : i % 3 == 1 ? "store" : "phone",
               i % 10 == 0 ? "\"gift, wrapped\"" : "none");
    }
  size = ftell (out);
  g_assert_cmpint (fclose (out), ==, 0);
  g_assert_cmpint (size, >, 0);

  return rows;
}

static double
median (double *values,
        guint   n)
{
  double sorted[ROUNDS];

  memcpy (sorted, values, n * sizeof (double));
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && sorted[j - 1] > sorted[j]; j--)
      {
        double t = sorted[j];

        sorted[j] = sorted[j - 1];
        sorted[j - 1] = t;
      }
  return sorted[n / 2];
}

static double
time_tally (const char *dir,
            const char *csv,
            guint64     rows)
{
  g_autofree char *database = g_build_filename (dir, "data.db", NULL);
  const char *paths[] = { csv, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) tables = NULL;
  gint64 start;
  gint64 elapsed;

  /* A fresh database each round: an unchanged file is not imported twice. */
  g_unlink (database);
  start = g_get_monotonic_time ();
  tables = tally_data_import (database, paths, NULL, NULL, NULL, &error);
  elapsed = g_get_monotonic_time () - start;
  g_assert_no_error (error);
  g_assert_cmpint (((TallyDataTable *) g_ptr_array_index (tables, 0))->n_rows, ==, (gint64) rows);

  return elapsed / (double) G_USEC_PER_SEC;
}

static double
time_sqlite3 (const char *sqlite3,
              const char *csv)
{
  g_autofree char *command = g_strdup_printf (".import --csv %s orders", csv);
  const char *argv[] = { sqlite3, ":memory:", command, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;
  gint64 start;
  gint64 elapsed;

  start = g_get_monotonic_time ();
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                NULL, &err, &status, &error);
  elapsed = g_get_monotonic_time () - start;
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (err, ==, "");

  return elapsed / (double) G_USEC_PER_SEC;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-bench-import-XXXXXX", &error);
  g_autofree char *csv = NULL;
  g_autofree char *sqlite3 = g_find_program_in_path ("sqlite3");
  double tally_s[ROUNDS];
  double shell_s[ROUNDS];
  double megabytes;
  double tally_rate;
  guint64 rows;
  GStatBuf st;

  g_assert_no_error (error);
  csv = g_build_filename (dir, "orders.csv", NULL);
  rows = write_csv (csv);
  g_assert_cmpint (g_stat (csv, &st), ==, 0);
  megabytes = st.st_size / 1e6;
  printf ("bench-import: %.1f MB, %" G_GUINT64_FORMAT " rows, 7 columns\n", megabytes, rows);

  for (guint r = 0; r < ROUNDS; r++)
    {
      tally_s[r] = time_tally (dir, csv, rows);
      printf ("  round %u: Tally %.2f s (%.1f MB/s)", r + 1, tally_s[r], megabytes / tally_s[r]);
      if (sqlite3 != NULL)
        {
          shell_s[r] = time_sqlite3 (sqlite3, csv);
          printf (", sqlite3 .import %.2f s (%.1f MB/s)", shell_s[r], megabytes / shell_s[r]);
        }
      printf ("\n");
    }

  tally_rate = megabytes / median (tally_s, ROUNDS);
  printf ("bench-import: Tally %.1f MB/s (median of %d; checks and types every value, reads the "
          "file twice, writes a database file)\n", tally_rate, ROUNDS);
  if (sqlite3 != NULL)
    {
      double shell_rate = megabytes / median (shell_s, ROUNDS);

      printf ("bench-import: sqlite3 .import --csv into :memory: %.1f MB/s (median of %d; all text)\n",
              shell_rate, ROUNDS);
      printf ("bench-import: ratio Tally / sqlite3 = %.2f\n", tally_rate / shell_rate);
    }
  else
    printf ("bench-import: no sqlite3 shell in PATH, so no comparison (build-aux/install-deps.sh installs it)\n");
  printf ("bench-import: peak memory of this process %" G_GINT64_FORMAT " KiB\n", tally_test_peak_rss_kib ());

  tally_test_rm_rf (dir);
  return 0;
}
