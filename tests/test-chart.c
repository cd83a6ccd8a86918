/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <cairo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tally-chart.h"
#include "tally-chart-render.h"
#include "tally-chart-scale.h"
#include "tally-test-util.h"

/*
 * The chart engine (docs/charts.md): ticks, formats, spec errors, data
 * resolution and every mark drawn to PNG against golden images in
 * tests/golden/charts/. TALLY_UPDATE_GOLDEN=1 rewrites the goldens; look
 * at them before committing.
 */

#define GOLDEN_W 480
#define GOLDEN_H 300

static TallyChart *
chart_from (const char  *json,
            GError     **error)
{
  g_autoptr(JsonObject) object = tally_test_parse_object (json);

  return tally_chart_new_from_json (object, error);
}

static void
assert_ticks (double        lo,
              double        hi,
              guint         max,
              const double *expected,
              guint         n)
{
  g_autoptr(GArray) ticks = tally_chart_nice_ticks (lo, hi, max, NULL);

  g_assert_cmpuint (ticks->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (g_array_index (ticks, double, i), expected[i], 1e-9);
}

static void
test_ticks (void)
{
  const double a[] = { 0, 20, 40, 60, 80, 100 };
  const double b[] = { 0, 0.1, 0.2, 0.3 };
  const double c[] = { -50, 0, 50, 100, 150 };
  const double d[] = { 0, 0.2, 0.4, 0.6, 0.8, 1 };

  assert_ticks (0, 97, 5, a, G_N_ELEMENTS (a));
  assert_ticks (0, 0.3, 5, b, G_N_ELEMENTS (b));
  assert_ticks (-37, 120, 5, c, G_N_ELEMENTS (c));
  assert_ticks (0, 0, 5, d, G_N_ELEMENTS (d));

  g_assert_cmpfloat (tally_chart_nice_step (97, 5), ==, 20);
  g_assert_cmpfloat (tally_chart_nice_step (1000, 10), ==, 100);
  g_assert_cmpfloat (tally_chart_nice_step (7, 10), ==, 1);
  g_assert_cmpfloat (tally_chart_nice_step (3, 10), ==, 0.5);
  g_assert_cmpfloat (tally_chart_nice_step (0, 10), ==, 0);
}

static void
assert_format (double      v,
               const char *format,
               const char *expected)
{
  TallyChartNumberLocale en = { ".", "," };
  g_autofree char *text = tally_chart_format_number_with_locale (v, format, 0, &en);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_formats (void)
{
  TallyChartNumberLocale de = { ",", "." };
  g_autoptr(GError) error = NULL;
  g_autofree char *german = NULL;
  g_autofree char *tick = NULL;

  assert_format (1234567, ",", "1,234,567");
  assert_format (1234.5678, ",", "1,234.5678");
  assert_format (3.14159, ".1f", "3.1");
  assert_format (0.256, ".0%", "26%");
  assert_format (0.256, ".1%", "25.6%");
  assert_format (1234.5, "$,.2f", "$1,234.50");
  assert_format (-1234.5, "$,.2f", "\xe2\x88\x92$1,234.50");
  assert_format (1500, "~s", "1.5k");
  assert_format (2000000, "~s", "2M");
  assert_format (0.0012, "~s", "1.2m");
  assert_format (42, "d", "42");
  assert_format (42.6, ",d", "43");
  assert_format (-0.0001, ".1f", "0.0");
  assert_format (5, "+", "+5");
  assert_format (-5, "(", "(5)");
  assert_format (7, "04d", "0007");
  assert_format (1234.5, NULL, "1,234.5");
  /* From 1e21 on, fixed types write the exponent form, as toFixed() does;
   * no label is 300 digits long or cut short. */
  assert_format (1.5e300, NULL, "1.5e+300");
  assert_format (-1e21, ",.2f", "\xe2\x88\x92" "1e+21");
  assert_format (2e20, ".0%", "2e+22%");
  assert_format (9.5e22, "d", "9.5e+22");
  assert_format (9.99e20, ",d", "999,000,000,000,000,000,000");
  /* Past the largest SI prefix (Y, 1e24) the coefficient itself is huge. */
  assert_format (1e300, "~s", "1e+276Y");
  assert_format (-2.5e25, "~s", "\xe2\x88\x92" "25Y");

  german = tally_chart_format_number_with_locale (1234567.891, ",.2f", 0, &de);
  g_assert_cmpstr (german, ==, "1.234.567,89");
  tick = tally_chart_format_number_with_locale (0.2, NULL, 0.1, &de);
  g_assert_cmpstr (tick, ==, "0,2");

  g_assert_true (tally_chart_format_validate (",.2f", NULL));
  g_assert_false (tally_chart_format_validate (".2q", &error));
  g_assert_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "~s"));

  {
    g_autofree char *grouped = tally_chart_group_digits ("1234567", " ");

    g_assert_cmpstr (grouped, ==, "1 234 567");
  }
}

static void
test_time_ticks (void)
{
  double t0, t1;
  TallyChartTimeUnit unit;
  g_autoptr(GArray) months = NULL;
  g_autoptr(GArray) years = NULL;
  g_autoptr(GArray) hours = NULL;
  g_autofree char *label = NULL;

  g_assert_true (tally_chart_parse_time ("2024-01-01", &t0));
  g_assert_true (tally_chart_parse_time ("2024-12-31", &t1));
  g_assert_cmpfloat (t0, ==, 1704067200);
  months = tally_chart_time_ticks (t0, t1, 12, &unit);
  g_assert_cmpint (unit, ==, TALLY_CHART_TIME_MONTH);
  g_assert_cmpuint (months->len, ==, 12);
  label = tally_chart_format_time (g_array_index (months, double, 3), unit, "%Y-%m");
  g_assert_cmpstr (label, ==, "2024-04");

  g_assert_true (tally_chart_parse_time ("1990", &t0));
  g_assert_true (tally_chart_parse_time ("2024-06-30T12:00:00Z", &t1));
  years = tally_chart_time_ticks (t0, t1, 8, &unit);
  g_assert_cmpint (unit, ==, TALLY_CHART_TIME_YEAR);
  g_assert_cmpuint (years->len, ==, 7); /* 1990, 1995, … 2020 */

  g_assert_true (tally_chart_parse_time ("2024-03-01 00:00:00", &t0));
  g_assert_true (tally_chart_parse_time ("2024-03-01T23:00:00+00:00", &t1));
  hours = tally_chart_time_ticks (t0, t1, 10, &unit);
  g_assert_cmpint (unit, ==, TALLY_CHART_TIME_HOUR);
  g_assert_cmpuint (hours->len, ==, 8); /* every 3 hours */

  /* A time may stop at the minute, with or without an offset. */
  g_assert_true (tally_chart_parse_time ("2024-03-01 09:30", &t0));
  g_assert_cmpfloat (t0, ==, 1709285400);
  g_assert_true (tally_chart_parse_time ("2024-03-01T09:30+01:00", &t1));
  g_assert_cmpfloat (t1, ==, 1709285400 - 3600);
  g_assert_true (tally_chart_parse_time ("2024-03-01T09:30Z", &t1));
  g_assert_cmpfloat (t1, ==, 1709285400);

  g_assert_false (tally_chart_parse_time ("March", &t0));
  g_assert_false (tally_chart_parse_time ("2024-13-01", &t0));
  g_assert_false (tally_chart_parse_time ("2024-03-01 09", &t0));
  g_assert_false (tally_chart_parse_time ("2024-03-01 09:3", &t0));
}

static void
assert_spec_error (const char *json,
                   int         code,
                   const char *needle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (json, &error);

  g_assert_null (chart);
  g_assert_error (error, TALLY_CHART_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("\"%s\" not in \"%s\"", needle, error->message);
}

static void
test_spec_errors (void)
{
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"pie\",\"encoding\":{}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "supported marks: bar, line, area, point, arc");
  assert_spec_error ("{\"mark\":\"bar\",\"encoding\":{}}",
                     TALLY_CHART_ERROR_INVALID_SPEC, "`title` is required");
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"config\":{},\"encoding\":{}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "supported top-level members");
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"encoding\":{\"size\":{\"field\":\"a\",\"type\":\"quantitative\"}}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "supported channels: x, y, color, theta, xOffset");
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"a\",\"type\":\"nominal\",\"bin\":true},"
                     "\"y\":{\"field\":\"b\",\"type\":\"quantitative\"}}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "supported channel members");
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"a\",\"type\":\"nominal\"},"
                     "\"y\":{\"field\":\"b\",\"type\":\"quantitative\",\"aggregate\":\"median\"}}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "supported aggregates: sum, mean, count, min, max");
  assert_spec_error ("{\"title\":\"t\",\"mark\":{\"type\":\"bar\",\"cornerRadius\":3},\"encoding\":{}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "mark property `cornerRadius`");
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"a\",\"type\":\"nominal\"},"
                     "\"y\":{\"field\":\"b\",\"type\":\"quantitative\",\"format\":\".2q\"}}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "d3-format subset");
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"data\":{\"url\":\"x.csv\"},\"encoding\":{\"x\":{\"field\":\"a\",\"type\":\"nominal\"},"
                     "\"y\":{\"field\":\"b\",\"type\":\"quantitative\"}}}",
                     TALLY_CHART_ERROR_UNSUPPORTED, "`data.url` is not supported");
  /* A missing field names the available columns. */
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"store\",\"type\":\"nominal\"},"
                     "\"y\":{\"field\":\"revnue\",\"type\":\"quantitative\"}},"
                     "\"data\":{\"values\":[{\"store\":\"A\",\"revenue\":1}]}}",
                     TALLY_CHART_ERROR_MISSING_FIELD,
                     "field \"revnue\" (encoding.y) is not in the data; available columns: \"store\", \"revenue\"");
  /* Text on a quantitative axis. */
  assert_spec_error ("{\"title\":\"t\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"store\",\"type\":\"nominal\"},"
                     "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\"}},"
                     "\"data\":{\"values\":[{\"store\":\"A\",\"revenue\":1},{\"store\":\"B\",\"revenue\":\"lots\"}]}}",
                     TALLY_CHART_ERROR_NOT_NUMERIC, "row 2: \"lots\" in column \"revenue\" (encoding.y, quantitative) is not a number");
}

static void
test_too_many_rows (void)
{
  g_autoptr(JsonObject) spec = tally_test_parse_object ("{\"title\":\"t\",\"mark\":\"point\",\"encoding\":{"
                                             "\"x\":{\"field\":\"a\",\"type\":\"quantitative\"},"
                                             "\"y\":{\"field\":\"b\",\"type\":\"quantitative\"}}}");
  g_autoptr(JsonObject) data = json_object_new ();
  JsonArray *values = json_array_sized_new (1000000);
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = NULL;
  g_autoptr(TallyChartData) table = NULL;
  const char *names[] = { "a", "b", NULL };

  for (guint i = 0; i < 1000000; i++)
    {
      JsonObject *row = json_object_new ();

      json_object_set_int_member (row, "a", i);
      json_object_set_int_member (row, "b", i % 7);
      json_array_add_object_element (values, row);
    }
  json_object_set_array_member (data, "values", values);
  json_object_set_object_member (spec, "data", json_object_ref (data));

  chart = tally_chart_new_from_json (spec, &error);
  g_assert_null (chart);
  g_assert_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_TOO_MANY_ROWS);
  g_assert_nonnull (strstr (error->message, "1000000 rows; at most 5000"));
  g_clear_error (&error);

  /* The query path has the same cap. */
  table = tally_chart_data_new (names);
  for (guint i = 0; i < TALLY_CHART_MAX_ROWS; i++)
    {
      const char *cells[] = { "1", "2" };

      g_assert_true (tally_chart_data_append_strings (table, cells, 2, NULL));
    }
  {
    const char *cells[] = { "1", "2" };

    g_assert_false (tally_chart_data_append_strings (table, cells, 2, &error));
    g_assert_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_TOO_MANY_ROWS);
  }
}

static void
test_nulls_skipped (void)
{
  const char *names[] = { "month", "revenue", NULL };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonObject) object = tally_test_parse_object ("{\"title\":\"Revenue\",\"mark\":\"line\",\"encoding\":{"
                                               "\"x\":{\"field\":\"month\",\"type\":\"temporal\"},"
                                               "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\"}}}");
  g_autoptr(TallyChartSpec) spec = tally_chart_spec_new_from_json (object, NULL);
  g_autoptr(TallyChartData) data = NULL;
  g_autoptr(TallyChart) chart = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = NULL;

  g_assert_nonnull (spec);
  json_parser_load_from_data (parser,
                              "[[\"2024-01-01\", 10], [\"2024-02-01\", null], [null, 5],"
                              " [\"2024-03-01\", \"NaN\"], [\"2024-04-01\", \"12.5\"], [\"2024-05-01\", 7]]",
                              -1, &error);
  g_assert_no_error (error);
  data = tally_chart_data_new_from_columns (names, json_node_get_array (json_parser_get_root (parser)), &error);
  g_assert_no_error (error);
  chart = tally_chart_new (spec, data, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (tally_chart_get_n_rows_plotted (chart), ==, 3);
  g_assert_cmpuint (tally_chart_get_n_rows_skipped (chart), ==, 3);
  summary = tally_chart_dup_summary (chart);
  g_assert_nonnull (strstr (summary, "Drew a line chart titled \"Revenue\". 3 of 6 rows plotted; "
                                     "3 rows skipped for a NULL, NaN or infinite value."));
  g_assert_nonnull (strstr (summary, "from 2024-01-01 to 2024-05-01"));

  /* Within a day, the summary says the times. */
  {
    g_autoptr(JsonParser) hours_parser = json_parser_new ();
    g_autoptr(TallyChartData) hours_data = NULL;
    g_autoptr(TallyChart) hours = NULL;
    g_autofree char *hours_summary = NULL;

    json_parser_load_from_data (hours_parser, "[[\"2025-03-01 09:00\", 4], [\"2025-03-01 17:30\", 6]]", -1, &error);
    g_assert_no_error (error);
    hours_data = tally_chart_data_new_from_columns (names, json_node_get_array (json_parser_get_root (hours_parser)), &error);
    g_assert_no_error (error);
    hours = tally_chart_new (spec, hours_data, &error);
    g_assert_no_error (error);
    hours_summary = tally_chart_dup_summary (hours);
    g_assert_nonnull (strstr (hours_summary, "from 2025-03-01 09:00 to 2025-03-01 17:30"));
  }
  g_assert_nonnull (strstr (summary, "y axis: revenue, from 7 to 12.5."));
}

/* The summary's counts agree with their nouns. */
static void
test_summary_singular (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) bar = chart_from ("{\"title\":\"One\",\"mark\":\"bar\",\"encoding\":{"
                                          "\"x\":{\"field\":\"k\",\"type\":\"nominal\"},"
                                          "\"y\":{\"field\":\"v\",\"type\":\"quantitative\"}},"
                                          "\"data\":{\"values\":[{\"k\":\"Leeds\",\"v\":4},"
                                          "{\"k\":\"York\",\"v\":\"1e999\"}]}}", &error);
  g_autoptr(TallyChart) pie = NULL;
  g_autofree char *bar_summary = NULL;
  g_autofree char *pie_summary = NULL;

  g_assert_no_error (error);
  bar_summary = tally_chart_dup_summary (bar);
  g_assert_nonnull (strstr (bar_summary, "1 of 2 rows plotted; 1 row skipped for a NULL, NaN or infinite value."));
  g_assert_nonnull (strstr (bar_summary, "1 category: Leeds"));

  pie = chart_from ("{\"title\":\"Share\",\"mark\":\"arc\",\"encoding\":{"
                    "\"theta\":{\"field\":\"v\",\"type\":\"quantitative\"},"
                    "\"color\":{\"field\":\"k\",\"type\":\"nominal\"}},"
                    "\"data\":{\"values\":[{\"k\":\"Leeds\",\"v\":4}]}}", &error);
  g_assert_no_error (error);
  pie_summary = tally_chart_dup_summary (pie);
  g_assert_nonnull (strstr (pie_summary, "1 of 1 row plotted."));
  g_assert_nonnull (strstr (pie_summary, "1 slice by k: Leeds."));
}

/* The summary keeps a value's digits when the chart names no format. */
static void
test_summary_digits (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from ("{\"title\":\"Spread\",\"mark\":\"point\",\"encoding\":{"
                                            "\"x\":{\"field\":\"x\",\"type\":\"quantitative\"},"
                                            "\"y\":{\"field\":\"v\",\"type\":\"quantitative\"}},"
                                            "\"data\":{\"values\":[{\"x\":1e-20,\"v\":0.004},"
                                            "{\"x\":2e-20,\"v\":1234567.891}]}}", &error);
  g_autofree char *summary = NULL;

  g_assert_no_error (error);
  summary = tally_chart_dup_summary (chart);
  g_test_message ("%s", summary);
  g_assert_nonnull (strstr (summary, "x axis: x (quantitative), from 0 to 2e-20."));
  g_assert_nonnull (strstr (summary, "y axis: v, from 0.004 to 1,234,567.891."));
}

static void
test_categories_capped (void)
{
  GString *json = g_string_new ("{\"title\":\"Many\",\"mark\":\"bar\",\"encoding\":{"
                                "\"x\":{\"field\":\"k\",\"type\":\"nominal\",\"sort\":\"-y\"},"
                                "\"y\":{\"field\":\"v\",\"type\":\"quantitative\"}},\"data\":{\"values\":[");
  g_autoptr(TallyChart) chart = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *path = NULL;

  for (guint i = 0; i < 500; i++)
    g_string_append_printf (json, "%s{\"k\":\"item %03u\",\"v\":%u}", i ? "," : "", i, i + 1);
  g_string_append (json, "]}}");
  chart = chart_from (json->str, &error);
  g_string_free (json, TRUE);
  g_assert_no_error (error);

  summary = tally_chart_dup_summary (chart);
  g_assert_nonnull (strstr (summary, "500 of 500 rows plotted"));
  g_assert_nonnull (strstr (summary, "30 categories: item 499, item 498, item 497, item 496, item 495, … (25 more)"));
  g_assert_nonnull (strstr (summary, "The 471 smallest categories are merged into \"Other\"."));

  /* And it draws. */
  path = g_build_filename (g_get_tmp_dir (), "tally-chart-many.png", NULL);
  g_assert_true (tally_chart_write_png (chart, path, 480, 300, FALSE, &error));
  g_assert_no_error (error);
  g_unlink (path);
}

static void
test_stacking (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (
    "{\"title\":\"Share\",\"mark\":\"bar\",\"encoding\":{"
    "\"x\":{\"field\":\"q\",\"type\":\"ordinal\"},"
    "\"y\":{\"field\":\"v\",\"type\":\"quantitative\",\"aggregate\":\"sum\",\"stack\":\"normalize\"},"
    "\"color\":{\"field\":\"s\",\"type\":\"nominal\"}},"
    "\"data\":{\"values\":[{\"q\":\"Q1\",\"s\":\"a\",\"v\":1},{\"q\":\"Q1\",\"s\":\"a\",\"v\":2},"
    "{\"q\":\"Q1\",\"s\":\"b\",\"v\":1},{\"q\":\"Q2\",\"s\":\"b\",\"v\":5}]}}", &error);
  g_autofree char *summary = NULL;

  g_assert_no_error (error);
  summary = tally_chart_dup_summary (chart);
  g_assert_nonnull (strstr (summary, "Drew a 100% stacked bar chart"));
  g_assert_nonnull (strstr (summary, "2 series by s: a, b."));
  g_assert_nonnull (strstr (summary, "values from 0% to 100% (stacked totals)"));
}

/* Golden images. */

typedef struct {
  const char *name;
  const char *spec;
} Golden;

#define SALES_VALUES \
  "\"data\":{\"values\":[" \
  "{\"store\":\"Alder Street\",\"quarter\":\"Q1\",\"revenue\":42100}," \
  "{\"store\":\"Alder Street\",\"quarter\":\"Q2\",\"revenue\":51800}," \
  "{\"store\":\"Birch Road\",\"quarter\":\"Q1\",\"revenue\":38250}," \
  "{\"store\":\"Birch Road\",\"quarter\":\"Q2\",\"revenue\":30400}," \
  "{\"store\":\"Cedar Mall\",\"quarter\":\"Q1\",\"revenue\":61000}," \
  "{\"store\":\"Cedar Mall\",\"quarter\":\"Q2\",\"revenue\":66900}," \
  "{\"store\":\"Dock Kiosk\",\"quarter\":\"Q1\",\"revenue\":12900}," \
  "{\"store\":\"Dock Kiosk\",\"quarter\":\"Q2\",\"revenue\":null}]}"

#define MONTHLY_VALUES \
  "\"data\":{\"values\":[" \
  "{\"month\":\"2024-01-01\",\"kind\":\"Espresso\",\"cups\":1200}," \
  "{\"month\":\"2024-02-01\",\"kind\":\"Espresso\",\"cups\":1350}," \
  "{\"month\":\"2024-03-01\",\"kind\":\"Espresso\",\"cups\":1600}," \
  "{\"month\":\"2024-04-01\",\"kind\":\"Espresso\",\"cups\":1550}," \
  "{\"month\":\"2024-05-01\",\"kind\":\"Espresso\",\"cups\":1800}," \
  "{\"month\":\"2024-06-01\",\"kind\":\"Espresso\",\"cups\":2100}," \
  "{\"month\":\"2024-01-01\",\"kind\":\"Filter\",\"cups\":900}," \
  "{\"month\":\"2024-02-01\",\"kind\":\"Filter\",\"cups\":870}," \
  "{\"month\":\"2024-03-01\",\"kind\":\"Filter\",\"cups\":1010}," \
  "{\"month\":\"2024-04-01\",\"kind\":\"Filter\",\"cups\":1120}," \
  "{\"month\":\"2024-05-01\",\"kind\":\"Filter\",\"cups\":980}," \
  "{\"month\":\"2024-06-01\",\"kind\":\"Filter\",\"cups\":1300}]}"

static const Golden goldens[] = {
  { "bar-stacked",
    "{\"title\":\"Revenue by store and quarter\",\"mark\":\"bar\",\"encoding\":{"
    "\"x\":{\"field\":\"store\",\"type\":\"nominal\",\"title\":\"Store\"},"
    "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\",\"title\":\"Revenue\",\"format\":\"$,.0f\"},"
    "\"color\":{\"field\":\"quarter\",\"type\":\"nominal\",\"title\":\"Quarter\"}}," SALES_VALUES "}" },
  { "bar-grouped",
    "{\"title\":\"Revenue by store, Q1 and Q2 side by side\",\"mark\":{\"type\":\"bar\"},\"encoding\":{"
    "\"x\":{\"field\":\"store\",\"type\":\"nominal\"},"
    "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\",\"format\":\"~s\"},"
    "\"xOffset\":{\"field\":\"quarter\",\"type\":\"nominal\"},"
    "\"color\":{\"field\":\"quarter\",\"type\":\"nominal\"}}," SALES_VALUES "}" },
  { "line-temporal",
    "{\"title\":\"Cups sold per month\",\"mark\":{\"type\":\"line\",\"point\":true},\"encoding\":{"
    "\"x\":{\"field\":\"month\",\"type\":\"temporal\",\"title\":\"Month\"},"
    "\"y\":{\"field\":\"cups\",\"type\":\"quantitative\",\"title\":\"Cups\"},"
    "\"color\":{\"field\":\"kind\",\"type\":\"nominal\"}}," MONTHLY_VALUES "}" },
  { "area-stacked",
    "{\"title\":\"Cups sold per month, stacked\",\"mark\":\"area\",\"encoding\":{"
    "\"x\":{\"field\":\"month\",\"type\":\"temporal\"},"
    "\"y\":{\"field\":\"cups\",\"type\":\"quantitative\"},"
    "\"color\":{\"field\":\"kind\",\"type\":\"nominal\"}}," MONTHLY_VALUES "}" },
  { "point",
    "{\"title\":\"Price against cups sold\",\"mark\":\"point\",\"encoding\":{"
    "\"x\":{\"field\":\"price\",\"type\":\"quantitative\",\"title\":\"Price (EUR)\",\"format\":\".2f\"},"
    "\"y\":{\"field\":\"cups\",\"type\":\"quantitative\"}},"
    "\"data\":{\"values\":[{\"price\":2.1,\"cups\":340},{\"price\":2.4,\"cups\":310},{\"price\":2.9,\"cups\":260},"
    "{\"price\":3.2,\"cups\":255},{\"price\":3.5,\"cups\":190},{\"price\":3.9,\"cups\":170},"
    "{\"price\":4.4,\"cups\":120},{\"price\":4.8,\"cups\":95}]}}" },
  { "arc-donut",
    "{\"title\":\"Share of Q2 revenue\",\"mark\":{\"type\":\"arc\",\"innerRadius\":50},\"encoding\":{"
    "\"theta\":{\"field\":\"revenue\",\"type\":\"quantitative\"},"
    "\"color\":{\"field\":\"store\",\"type\":\"nominal\",\"title\":\"Store\"}},"
    "\"data\":{\"values\":[{\"store\":\"Alder Street\",\"revenue\":51800},{\"store\":\"Birch Road\",\"revenue\":30400},"
    "{\"store\":\"Cedar Mall\",\"revenue\":66900},{\"store\":\"Dock Kiosk\",\"revenue\":9000}]}}" },
  { "empty",
    "{\"title\":\"Refunds in March\",\"mark\":\"bar\",\"encoding\":{"
    "\"x\":{\"field\":\"day\",\"type\":\"ordinal\"},"
    "\"y\":{\"field\":\"refunds\",\"type\":\"quantitative\"}},\"data\":{\"values\":[]}}" },
};

/* Fraction of pixels whose channels differ by more than @threshold. */
static double
image_difference (cairo_surface_t *a,
                  cairo_surface_t *b,
                  int              threshold)
{
  int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
  const guchar *da, *db;
  int sa, sb;
  guint differ = 0;

  if (w != cairo_image_surface_get_width (b) || h != cairo_image_surface_get_height (b))
    return 1;
  cairo_surface_flush (a);
  cairo_surface_flush (b);
  da = cairo_image_surface_get_data (a);
  db = cairo_image_surface_get_data (b);
  sa = cairo_image_surface_get_stride (a);
  sb = cairo_image_surface_get_stride (b);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int ch = 0; ch < 4; ch++)
        if (abs ((int) da[y * sa + x * 4 + ch] - (int) db[y * sb + x * 4 + ch]) > threshold)
          {
            differ++;
            break;
          }
  return (double) differ / (w * h);
}

static void
test_golden (gconstpointer user_data)
{
  const Golden *golden = user_data;

  for (int dark = 0; dark <= 1; dark++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TallyChart) chart = chart_from (golden->spec, &error);
      g_autofree char *name = g_strdup_printf ("%s-%s.png", golden->name, dark ? "dark" : "light");
      g_autofree char *expected_path = g_test_build_filename (G_TEST_DIST, "golden", "charts", name, NULL);
      g_autofree char *actual_path = g_build_filename (g_get_tmp_dir (), name, NULL);
      cairo_surface_t *expected, *actual;
      double diff;

      g_assert_no_error (error);
      g_assert_true (tally_chart_write_png (chart, actual_path, GOLDEN_W, GOLDEN_H, dark, &error));
      g_assert_no_error (error);

      if (g_getenv ("TALLY_UPDATE_GOLDEN"))
        {
          g_autofree char *contents = NULL;
          gsize len;

          g_assert_true (g_file_get_contents (actual_path, &contents, &len, NULL));
          g_assert_true (g_file_set_contents (expected_path, contents, len, NULL));
        }

      expected = cairo_image_surface_create_from_png (expected_path);
      actual = cairo_image_surface_create_from_png (actual_path);
      g_assert_cmpint (cairo_surface_status (expected), ==, CAIRO_STATUS_SUCCESS);
      g_assert_cmpint (cairo_surface_status (actual), ==, CAIRO_STATUS_SUCCESS);
      /* Anti-aliasing may differ a little between Cairo and FreeType
       * builds: at most 0.5% of pixels may differ by more than 48 levels. */
      diff = image_difference (expected, actual, 48);
      if (diff > 0.005)
        g_error ("%s differs from %s in %.2f%% of pixels", actual_path, expected_path, diff * 100);
      cairo_surface_destroy (expected);
      cairo_surface_destroy (actual);
      g_unlink (actual_path);
    }
}

static void
test_svg_pdf (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (goldens[0].spec, &error);
  g_autofree char *svg = g_build_filename (g_get_tmp_dir (), "tally-chart-test.svg", NULL);
  g_autofree char *pdf = g_build_filename (g_get_tmp_dir (), "tally-chart-test.pdf", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GMarkupParseContext) markup = NULL;
  GMarkupParser parser = { 0 };
  gsize len;

  g_assert_no_error (error);
  g_assert_true (tally_chart_write_svg (chart, svg, 480, 300, FALSE, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (svg, &contents, &len, NULL));
  g_assert_nonnull (strstr (contents, "<svg"));
  markup = g_markup_parse_context_new (&parser, 0, NULL, NULL);
  g_assert_true (g_markup_parse_context_parse (markup, contents, len, &error));
  g_assert_true (g_markup_parse_context_end_parse (markup, &error));
  g_assert_no_error (error);
  g_free (g_steal_pointer (&contents));

  g_assert_true (tally_chart_write_pdf (chart, pdf, 480, 300, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (pdf, &contents, &len, NULL));
  g_assert_true (g_str_has_prefix (contents, "%PDF-"));

  g_assert_false (tally_chart_write_png (chart, "/nonexistent-dir/x.png", 10, 10, FALSE, &error));
  g_assert_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_WRITE);

  g_unlink (svg);
  g_unlink (pdf);
}

/* The label at every pixel of row @y, collapsed into runs: the distinct
 * labels in order, and each run's middle x in @middles. */
static GPtrArray *
hit_runs (TallyChart *chart,
          double      y,
          GArray     *middles)
{
  GPtrArray *runs = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *current = NULL;
  double start = 0;

  for (int x = 0; x <= GOLDEN_W; x++)
    {
      g_autofree char *label = x < GOLDEN_W ? tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, x, y, NULL) : NULL;

      if (g_strcmp0 (label, current) == 0)
        continue;
      if (current != NULL)
        {
          double middle = (start + x - 1) / 2;

          g_ptr_array_add (runs, g_steal_pointer (&current));
          g_array_append_val (middles, middle);
        }
      current = g_steal_pointer (&label);
      start = x;
    }
  return runs;
}

/* The colour of the pixel at (@x, @y) of @chart drawn light, 0xRRGGBB. */
static guint32
pixel_at (TallyChart *chart,
          int         x,
          int         y)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, GOLDEN_W, GOLDEN_H);
  cairo_t *cr = cairo_create (surface);
  guint32 pixel;

  tally_chart_render (chart, cr, GOLDEN_W, GOLDEN_H, NULL);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  pixel = *(guint32 *) (cairo_image_surface_get_data (surface) + y * cairo_image_surface_get_stride (surface) + x * 4);
  cairo_surface_destroy (surface);
  return pixel & 0xFFFFFF;
}

static void
test_hit_test_bars (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (
    "{\"title\":\"Sales\",\"mark\":\"bar\","
    "\"encoding\":{\"x\":{\"field\":\"shop\",\"type\":\"nominal\",\"sort\":null},"
    "\"y\":{\"field\":\"sales\",\"type\":\"quantitative\",\"format\":\",.1f\"}},"
    "\"data\":{\"values\":[{\"shop\":\"North\",\"sales\":1000},{\"shop\":\"South\",\"sales\":2000.26},"
    "{\"shop\":\"West\",\"sales\":3000}]}}", &error);
  g_autoptr(GArray) middles = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GPtrArray) runs = NULL;

  g_assert_no_error (error);

  /* A row through the bottom of the plot crosses the three bars, in
   * order, each labelled with its axis titles and the axis's format. */
  runs = hit_runs (chart, GOLDEN_H - 60, middles);
  g_assert_cmpuint (runs->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (runs, 0), ==, "shop: North\nsales: 1,000.0");
  g_assert_cmpstr (g_ptr_array_index (runs, 1), ==, "shop: South\nsales: 2,000.3");
  g_assert_cmpstr (g_ptr_array_index (runs, 2), ==, "shop: West\nsales: 3,000.0");

  /* The hit test uses the drawing's layout: the middle of each run is
   * painted in the first colour of the palette. */
  for (guint i = 0; i < middles->len; i++)
    g_assert_cmphex (pixel_at (chart, (int) g_array_index (middles, double, i), GOLDEN_H - 60), ==, 0x0072B2);

  /* Above the shortest bar, in the title and outside the chart: nothing. */
  g_assert_null (tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, g_array_index (middles, double, 0), 60, NULL));
  g_assert_null (tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, 20, 10, NULL));
  g_assert_null (tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, -5, GOLDEN_H - 60, NULL));
  g_assert_null (tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, GOLDEN_W + 50, GOLDEN_H + 50, NULL));
}

static void
test_hit_test_lines (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (
    "{\"title\":\"Visits\",\"mark\":\"line\","
    "\"encoding\":{\"x\":{\"field\":\"day\",\"type\":\"temporal\",\"title\":\"Day\"},"
    "\"y\":{\"field\":\"n\",\"type\":\"quantitative\",\"title\":\"Visits\"},"
    "\"color\":{\"field\":\"site\",\"type\":\"nominal\"}},"
    "\"data\":{\"values\":[{\"day\":\"2024-03-01\",\"n\":10,\"site\":\"a\"},{\"day\":\"2024-03-02\",\"n\":40,\"site\":\"a\"},"
    "{\"day\":\"2024-03-03\",\"n\":20,\"site\":\"a\"},{\"day\":\"2024-03-01\",\"n\":35,\"site\":\"b\"},"
    "{\"day\":\"2024-03-02\",\"n\":5,\"site\":\"b\"},{\"day\":\"2024-03-03\",\"n\":30,\"site\":\"b\"}]}}", &error);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint misses = 0;

  g_assert_no_error (error);

  /* Every point can be pointed at, and nothing else. */
  for (int y = 0; y < GOLDEN_H; y += 2)
    for (int x = 0; x < GOLDEN_W; x += 2)
      {
        char *label = tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, x, y, NULL);

        if (label != NULL)
          g_hash_table_add (seen, label);
        else
          misses++;
      }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 6);
  g_assert_true (g_hash_table_contains (seen, "a\nDay: 2024-03-02\nVisits: 40"));
  g_assert_true (g_hash_table_contains (seen, "b\nDay: 2024-03-02\nVisits: 5"));
  g_assert_true (g_hash_table_contains (seen, "b\nDay: 2024-03-03\nVisits: 30"));
  /* Points are small: most of the chart is not on one. */
  g_assert_cmpuint (misses, >, (GOLDEN_W / 2) * (GOLDEN_H / 2) * 9 / 10);
}

static void
test_hit_test_arc (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (
    "{\"title\":\"Share\",\"mark\":\"arc\","
    "\"encoding\":{\"theta\":{\"field\":\"v\",\"type\":\"quantitative\"},"
    "\"color\":{\"field\":\"k\",\"type\":\"nominal\"}},"
    "\"data\":{\"values\":[{\"k\":\"big\",\"v\":75},{\"k\":\"small\",\"v\":25}]}}", &error);
  g_autoptr(GHashTable) counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint big, small;

  g_assert_no_error (error);
  for (int y = 0; y < GOLDEN_H; y += 2)
    for (int x = 0; x < GOLDEN_W; x += 2)
      {
        char *label = tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, x, y, NULL);

        if (label != NULL)
          g_hash_table_replace (counts, label, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (counts, label)) + 1));
      }
  g_assert_cmpuint (g_hash_table_size (counts), ==, 2);
  big = GPOINTER_TO_UINT (g_hash_table_lookup (counts, "big\n75 (75.0%)"));
  small = GPOINTER_TO_UINT (g_hash_table_lookup (counts, "small\n25 (25.0%)"));
  /* The slices' areas are as their shares, 3 : 1. */
  g_assert_cmpfloat ((double) big / small, >, 2.8);
  g_assert_cmpfloat ((double) big / small, <, 3.2);
}

static gboolean
disc_holds (TallyChart *chart,
            int         x,
            int         y)
{
  g_autofree char *label = tally_chart_hit_test (chart, GOLDEN_W, GOLDEN_H, x, y, NULL);

  return label != NULL;
}

/* A pie of one slice is a whole disc: no slice edge runs from its centre
 * to the top. */
static void
test_whole_pie (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) chart = chart_from (
    "{\"title\":\"All\",\"mark\":\"arc\","
    "\"encoding\":{\"theta\":{\"field\":\"v\",\"type\":\"quantitative\"},"
    "\"color\":{\"field\":\"k\",\"type\":\"nominal\"}},"
    "\"data\":{\"values\":[{\"k\":\"Leeds\",\"v\":4}]}}", &error);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, GOLDEN_W, GOLDEN_H);
  cairo_t *cr = cairo_create (surface);
  int left = GOLDEN_W, right = -1, top = GOLDEN_H, bottom = -1;
  int cx, cy, stride;
  const guint8 *data;

  g_assert_no_error (error);
  tally_chart_render (chart, cr, GOLDEN_W, GOLDEN_H, NULL);
  cairo_surface_flush (surface);

  /* The disc's box, from the hit test: roughly on a grid, then exactly
   * along the row and the column through its middle. */
  for (int y = 0; y < GOLDEN_H; y += 4)
    for (int x = 0; x < GOLDEN_W; x += 4)
      if (disc_holds (chart, x, y))
        {
          top = MIN (top, y);
          bottom = MAX (bottom, y);
        }
  g_assert_cmpint (bottom - top, >, 40);
  cy = (top + bottom) / 2;
  for (int x = 0; x < GOLDEN_W; x++)
    if (disc_holds (chart, x, cy))
      {
        left = MIN (left, x);
        right = MAX (right, x);
      }
  cx = (left + right) / 2;
  top = GOLDEN_H;
  bottom = -1;
  for (int y = 0; y < GOLDEN_H; y++)
    if (disc_holds (chart, cx, y))
      {
        top = MIN (top, y);
        bottom = MAX (bottom, y);
      }
  cy = (top + bottom) / 2;

  /* Above the centre (the percentage is drawn below it), the pixels on
   * the vertical through the centre are the slice's, as beside it. */
  data = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  for (int y = top + 4; y < cy - 4; y++)
    for (int dx = -1; dx <= 1; dx++)
      {
        guint32 on = *(const guint32 *) (data + y * stride + (cx + dx) * 4) & 0xffffff;
        guint32 beside = *(const guint32 *) (data + y * stride + (cx + 8) * 4) & 0xffffff;

        if (on != beside)
          g_error ("pixel (%d, %d) is %06x, beside it %06x", cx + dx, y, on, beside);
      }

  cairo_destroy (cr);
  cairo_surface_destroy (surface);
}

static void
test_description (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyChart) bars = chart_from (
    "{\"title\":\"Sales\",\"mark\":\"bar\","
    "\"encoding\":{\"x\":{\"field\":\"shop\",\"type\":\"nominal\",\"sort\":null},"
    "\"y\":{\"field\":\"sales\",\"type\":\"quantitative\"},\"color\":{\"field\":\"year\",\"type\":\"ordinal\"}},"
    "\"data\":{\"values\":[{\"shop\":\"North\",\"sales\":1000,\"year\":\"2023\"},{\"shop\":\"South\",\"sales\":2000,\"year\":\"2024\"},"
    "{\"shop\":\"West\",\"sales\":3000,\"year\":\"2024\"}]}}", &error);
  g_autoptr(TallyChart) pie = chart_from (
    "{\"title\":\"Share\",\"mark\":{\"type\":\"arc\",\"innerRadius\":40},"
    "\"encoding\":{\"theta\":{\"field\":\"v\",\"type\":\"quantitative\"},\"color\":{\"field\":\"k\",\"type\":\"nominal\"}},"
    "\"data\":{\"values\":[{\"k\":\"big\",\"v\":75},{\"k\":\"small\",\"v\":25}]}}", &error);
  g_autoptr(TallyChart) described = chart_from (
    "{\"title\":\"Sales\",\"description\":\"Sales rise every year.\",\"mark\":\"line\","
    "\"encoding\":{\"x\":{\"field\":\"y\",\"type\":\"quantitative\"},\"y\":{\"field\":\"s\",\"type\":\"quantitative\"}},"
    "\"data\":{\"values\":[{\"y\":1,\"s\":2}]}}", &error);
  g_autoptr(TallyChart) empty = chart_from (
    "{\"title\":\"Nothing\",\"mark\":\"point\","
    "\"encoding\":{\"x\":{\"field\":\"a\",\"type\":\"quantitative\"},\"y\":{\"field\":\"b\",\"type\":\"quantitative\"}},"
    "\"data\":{\"values\":[{\"a\":null,\"b\":1}]}}", &error);
  g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

  g_assert_no_error (error);
  a = tally_chart_dup_description (bars);
  b = tally_chart_dup_description (pie);
  c = tally_chart_dup_description (described);
  d = tally_chart_dup_description (empty);
  g_assert_cmpstr (a, ==, "Bar chart “Sales”, 2 series. x: shop, 3 categories, North to West. y: sales, 0 to 3,000.");
  g_assert_cmpstr (b, ==, "Donut chart “Share”, 2 slices: big, small.");
  g_assert_cmpstr (c, ==, "Sales rise every year.");
  g_assert_cmpstr (d, ==, "Scatter plot “Nothing”, no data.");
}

int
main (int   argc,
      char *argv[])
{
  /* Goldens and messages in the C locale, whatever the machine's. */
  setlocale (LC_ALL, "C");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/chart/ticks", test_ticks);
  g_test_add_func ("/tally/chart/formats", test_formats);
  g_test_add_func ("/tally/chart/time-ticks", test_time_ticks);
  g_test_add_func ("/tally/chart/spec-errors", test_spec_errors);
  g_test_add_func ("/tally/chart/too-many-rows", test_too_many_rows);
  g_test_add_func ("/tally/chart/nulls-skipped", test_nulls_skipped);
  g_test_add_func ("/tally/chart/categories-capped", test_categories_capped);
  g_test_add_func ("/tally/chart/summary-singular", test_summary_singular);
  g_test_add_func ("/tally/chart/summary-digits", test_summary_digits);
  g_test_add_func ("/tally/chart/stacking", test_stacking);
  g_test_add_func ("/tally/chart/svg-pdf", test_svg_pdf);
  g_test_add_func ("/tally/chart/hit-test/bars", test_hit_test_bars);
  g_test_add_func ("/tally/chart/hit-test/lines", test_hit_test_lines);
  g_test_add_func ("/tally/chart/hit-test/arc", test_hit_test_arc);
  g_test_add_func ("/tally/chart/whole-pie", test_whole_pie);
  g_test_add_func ("/tally/chart/description", test_description);
  for (guint i = 0; i < G_N_ELEMENTS (goldens); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tally/chart/golden/%s", goldens[i].name);

      g_test_add_data_func (path, &goldens[i], test_golden);
    }

  return g_test_run ();
}
