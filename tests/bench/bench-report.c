/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Report and chart file figures (issue 12, benchmarks): the time to write
 * a 5,000-point line chart and a 50-bar chart as PNG, SVG and PDF, and to
 * export a 20-page report as PDF (and the same report as HTML). Medians of
 * five runs, printed; nothing about speed is asserted. */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tally-chart-render.h"
#include "tally-chart.h"
#include "tally-report.h"
#include "tally-test-util.h"

#define RUNS 5

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (double *values)
{
  qsort (values, RUNS, sizeof (double), compare_doubles);
  return values[RUNS / 2];
}

static TallyChart *
make_chart (const char *spec_json)
{
  g_autoptr(JsonObject) spec = tally_test_parse_object (spec_json);
  g_autoptr(GError) error = NULL;
  TallyChart *chart = tally_chart_new_from_json (spec, &error);

  g_assert_no_error (error);
  return chart;
}

static char *
line_spec (void)
{
  g_autoptr(GString) spec = g_string_new ("{\"title\":\"Daily orders, 5,000 days\",\"mark\":\"line\","
                                          "\"encoding\":{\"x\":{\"field\":\"day\",\"type\":\"temporal\"},"
                                          "\"y\":{\"field\":\"orders\",\"type\":\"quantitative\"}},"
                                          "\"data\":{\"values\":[");
  g_autoptr(GDateTime) start = g_date_time_new_utc (2010, 1, 1, 0, 0, 0);

  for (int i = 0; i < 5000; i++)
    {
      g_autoptr(GDateTime) day = g_date_time_add_days (start, i);
      g_autofree char *iso = g_date_time_format (day, "%Y-%m-%d");

      g_string_append_printf (spec, "%s{\"day\":\"%s\",\"orders\":%d}", i > 0 ? "," : "", iso,
                              400 + (i * 37) % 211 + (i / 50));
    }
  g_string_append (spec, "]}}");
  return g_string_free (g_steal_pointer (&spec), FALSE);
}

static char *
bar_spec (void)
{
  g_autoptr(GString) spec = g_string_new ("{\"title\":\"Revenue by day, 50 days\",\"mark\":\"bar\","
                                          "\"encoding\":{\"x\":{\"field\":\"day\",\"type\":\"temporal\"},"
                                          "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\",\"format\":\",.0f\"}},"
                                          "\"data\":{\"values\":[");

  for (int i = 0; i < 50; i++)
    g_string_append_printf (spec, "%s{\"day\":\"2025-%02d-%02d\",\"revenue\":%d}", i > 0 ? "," : "",
                            1 + i / 28, 1 + i % 28, 1000 + (i * 97) % 800);
  g_string_append (spec, "]}}");
  return g_string_free (g_steal_pointer (&spec), FALSE);
}

static void
time_chart (const char *name,
            TallyChart *chart,
            const char *dir)
{
  static const char * const formats[] = { "png", "svg", "pdf" };

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    {
      g_autofree char *path = g_strdup_printf ("%s/chart.%s", dir, formats[f]);
      GStatBuf st;
      double ms[RUNS];

      for (int run = 0; run < RUNS; run++)
        {
          g_autoptr(GError) error = NULL;
          gint64 start = g_get_monotonic_time ();
          gboolean ok = f == 0 ? tally_chart_write_png (chart, path, 960, 528, FALSE, &error)
                      : f == 1 ? tally_chart_write_svg (chart, path, 960, 528, FALSE, &error)
                               : tally_chart_write_pdf (chart, path, 960, 528, FALSE, &error);

          g_assert_no_error (error);
          g_assert_true (ok);
          ms[run] = (g_get_monotonic_time () - start) / 1000.0;
        }
      g_assert_cmpint (g_stat (path, &st), ==, 0);
      printf ("%-22s %-3s  %8.1f ms  (%" G_GINT64_FORMAT " KiB)\n", name, formats[f], median (ms),
              (gint64) st.st_size / 1024);
    }
}

/* About 20 pages: sections of text, a 40-row table and a code block each */
static char *
long_report (void)
{
  g_autoptr(GString) md = g_string_new ("# A long report\n\n");

  for (int section = 0; section < 14; section++)
    {
      g_string_append_printf (md, "## Section %d\n\n", section + 1);
      for (int p = 0; p < 3; p++)
        g_string_append (md, "Revenue rose in every store but one, **Heslington Hall**, whose campus trade "
                             "falls away when term ends; the *office* stores kept a steady weekday rhythm, "
                             "and the station kiosk carried the mornings. See `sales` and `stores`.\n\n");
      g_string_append (md, "| Store | Day | Orders | Revenue (£) |\n|---|---|--:|--:|\n");
      for (int row = 0; row < 40; row++)
        g_string_append_printf (md, "| Store %d | 2025-04-%02d | %d | %d.%02d |\n", row % 6, 1 + row % 30,
                                100 + row * 7, 1000 + row * 13, row % 100);
      g_string_append (md, "\n```sql\nSELECT store_id, sold_on, COUNT(*), SUM(quantity * unit_price_gbp)\n"
                           "  FROM sales GROUP BY store_id, sold_on;\n```\n\n");
    }
  return g_string_free (g_steal_pointer (&md), FALSE);
}

static void
time_report (const char *dir)
{
  g_autofree char *markdown = long_report ();
  g_autofree char *md_path = g_build_filename (dir, "long.md", NULL);
  g_autofree char *pdf_path = g_build_filename (dir, "long.pdf", NULL);
  g_autofree char *html_path = g_build_filename (dir, "long.html", NULL);
  g_autoptr(GFile) md = g_file_new_for_path (md_path);
  g_autoptr(GFile) pdf = g_file_new_for_path (pdf_path);
  g_autoptr(GFile) html = g_file_new_for_path (html_path);
  g_autofree char *info = NULL;
  const char *argv[] = { "pdfinfo", pdf_path, NULL };
  const char *pages = NULL;
  double pdf_ms[RUNS], html_ms[RUNS];

  g_assert_true (g_file_set_contents (md_path, markdown, -1, NULL));
  for (int run = 0; run < RUNS; run++)
    {
      g_autoptr(GError) error = NULL;
      gint64 start = g_get_monotonic_time ();

      g_assert_true (tally_report_export_file (md, TALLY_REPORT_FORMAT_PDF, pdf, NULL, &error));
      pdf_ms[run] = (g_get_monotonic_time () - start) / 1000.0;
      start = g_get_monotonic_time ();
      g_assert_true (tally_report_export_file (md, TALLY_REPORT_FORMAT_HTML, html, NULL, &error));
      html_ms[run] = (g_get_monotonic_time () - start) / 1000.0;
      g_assert_no_error (error);
    }
  if (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                    &info, NULL, NULL, NULL))
    pages = strstr (info, "Pages:");
  printf ("report PDF export      %8.1f ms  (%d pages)\n", median (pdf_ms),
          pages != NULL ? atoi (pages + strlen ("Pages:")) : -1);
  printf ("report HTML export     %8.1f ms\n", median (html_ms));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-bench-report-XXXXXX", &error);
  g_autofree char *line = line_spec ();
  g_autofree char *bars = bar_spec ();
  g_autoptr(TallyChart) line_chart = NULL;
  g_autoptr(TallyChart) bar_chart = NULL;

  g_assert_no_error (error);
  line_chart = make_chart (line);
  bar_chart = make_chart (bars);
  g_assert_cmpuint (tally_chart_get_n_rows_plotted (line_chart), ==, 5000);
  g_assert_cmpuint (tally_chart_get_n_rows_plotted (bar_chart), ==, 50);

  printf ("medians of %d runs, 960 x 528\n", RUNS);
  time_chart ("line, 5,000 points", line_chart, dir);
  time_chart ("bar, 50 bars", bar_chart, dir);
  time_report (dir);

  tally_test_rm_rf (dir);
  return 0;
}
