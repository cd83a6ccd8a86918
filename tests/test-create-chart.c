/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The create_chart tool (issue 12 §1, docs/charts.md) against the Beanline
 * sample database: the files it writes and never overwrites, the summary
 * the model reads, the artifact that becomes the chart_created event, and
 * the errors for input outside the subset. */

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "tally-tool.h"
#include "tally-tool-registry.h"
#include "tally-test-util.h"

typedef struct {
  char              *root;
  TallyToolContext   context;
  TallyToolRegistry *registry;
  TallyTool         *tool;
} Fixture;

#define STORE_SQL \
  "SELECT st.name AS store, ROUND(SUM(s.quantity * s.unit_price_gbp), 2) AS revenue " \
  "FROM sales s JOIN stores st USING (store_id) GROUP BY st.name ORDER BY st.name"

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("tally-chart-tool-XXXXXX", &error);

  g_assert_no_error (error);
  fixture->root = realpath (tmp, NULL);
  fixture->context.workspace = fixture->root;
  fixture->context.database_path = (char *) g_getenv ("TALLY_SAMPLE_DB");
  g_assert_nonnull (fixture->context.database_path);
  fixture->registry = tally_tool_registry_new_default ();
  fixture->tool = tally_tool_registry_lookup (fixture->registry, "create_chart");
  g_assert_nonnull (fixture->tool);
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  tally_test_rm_rf (fixture->root);
  g_free (fixture->root);
  g_clear_object (&fixture->registry);
}

static gboolean
ws_has (Fixture    *fixture,
        const char *relpath)
{
  g_autofree char *path = g_build_filename (fixture->root, relpath, NULL);

  return g_file_test (path, G_FILE_TEST_IS_REGULAR);
}

static char *
run_chart (Fixture     *fixture,
           const char  *json,
           JsonObject **artifact,
           GError     **error)
{
  g_autoptr(JsonObject) input = tally_test_parse_object (json);

  return tally_tool_run_full (fixture->tool, &fixture->context, input, NULL, artifact, error);
}

static const char store_input[] =
  "{\"spec\":{\"title\":\"Revenue by store\",\"mark\":\"bar\","
  "\"encoding\":{\"x\":{\"field\":\"store\",\"type\":\"nominal\"},"
  "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\",\"format\":\"$,.0f\"}}},"
  "\"sql\":\"" STORE_SQL "\"}";

static void
test_sql_files (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) artifact = NULL;
  g_autofree char *text = NULL;
  g_autofree char *png = NULL;
  gsize png_len = 0;
  JsonObject *spec;
  JsonArray *files;
  JsonArray *values;

  text = run_chart (fixture, store_input, &artifact, &error);
  g_assert_no_error (error);

  g_assert_true (ws_has (fixture, "charts/revenue-by-store.svg"));
  g_assert_true (ws_has (fixture, "charts/revenue-by-store.png"));
  g_assert_true (g_str_has_suffix (text, "\nSaved as charts/revenue-by-store.svg and "
                                         "charts/revenue-by-store.png (in the workspace)."));
  g_assert_nonnull (strstr (text, "Revenue by store"));
  g_assert_nonnull (strstr (text, "6 rows"));

  /* A real PNG. */
  {
    g_autofree char *path = g_build_filename (fixture->root, "charts/revenue-by-store.png", NULL);

    g_file_get_contents (path, &png, &png_len, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (png_len, >, 1000);
    g_assert_cmpmem (png, 8, "\x89PNG\r\n\x1a\n", 8);
  }

  /* The artifact: the chart_created fields, the rows inline. */
  g_assert_nonnull (artifact);
  g_assert_cmpstr (json_object_get_string_member (artifact, "title"), ==, "Revenue by store");
  g_assert_cmpint (json_object_get_int_member (artifact, "rows"), ==, 6);
  g_assert_false (json_object_has_member (artifact, "capped"));
  g_assert_cmpstr (json_object_get_string_member (artifact, "sql"), ==, STORE_SQL);
  files = json_object_get_array_member (artifact, "files");
  g_assert_cmpuint (json_array_get_length (files), ==, 2);
  g_assert_cmpstr (json_array_get_string_element (files, 0), ==, "charts/revenue-by-store.svg");
  g_assert_cmpstr (json_array_get_string_element (files, 1), ==, "charts/revenue-by-store.png");
  spec = json_object_get_object_member (artifact, "spec");
  g_assert_cmpstr (json_object_get_string_member (spec, "mark"), ==, "bar");
  values = json_object_get_array_member (json_object_get_object_member (spec, "data"), "values");
  g_assert_cmpuint (json_array_get_length (values), ==, 6);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (values, 0), "store"),
                   ==, "Briggate");
  g_assert_cmpfloat (json_object_get_double_member (json_array_get_object_element (values, 0), "revenue"),
                     >, 0.0);
}

static void
test_never_overwrites (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  g_autofree char *named = NULL;

  first = run_chart (fixture, store_input, NULL, &error);
  g_assert_no_error (error);
  second = run_chart (fixture, store_input, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ws_has (fixture, "charts/revenue-by-store-2.svg"));
  g_assert_true (ws_has (fixture, "charts/revenue-by-store-2.png"));
  g_assert_nonnull (strstr (second, "charts/revenue-by-store-2.svg"));

  /* Only a PNG left under the next name still moves the chart on. */
  tally_test_write_file (fixture->root, "charts/revenue-by-store-3.png", "keep me", -1);
  third = run_chart (fixture, store_input, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (third, "charts/revenue-by-store-4.svg"));
  {
    g_autofree char *path = g_build_filename (fixture->root, "charts/revenue-by-store-3.png", NULL);
    g_autofree char *kept = NULL;

    g_file_get_contents (path, &kept, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (kept, ==, "keep me");
  }

  /* A dangling symbolic link under the next name is taken too: writing
   * through it would create its target outside the workspace. */
  {
    g_autofree char *outside = g_dir_make_tmp ("tally-chart-outside-XXXXXX", &error);
    g_autofree char *target = g_build_filename (outside, "pwned.svg", NULL);
    g_autofree char *link = g_build_filename (fixture->root, "charts/revenue-by-store-5.svg", NULL);
    g_autofree char *fourth = NULL;

    g_assert_no_error (error);
    g_assert_cmpint (symlink (target, link), ==, 0);
    fourth = run_chart (fixture, store_input, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (strstr (fourth, "charts/revenue-by-store-6.svg"));
    g_assert_false (g_file_test (target, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
    tally_test_rm_rf (outside);
  }

  /* file_name picks the stem; a folder or suffix in it is dropped. */
  named = run_chart (fixture,
                     "{\"file_name\":\"../Q2 Sales.png\",\"spec\":{\"title\":\"Q\",\"mark\":\"line\","
                     "\"encoding\":{\"x\":{\"field\":\"m\",\"type\":\"ordinal\"},"
                     "\"y\":{\"field\":\"v\",\"type\":\"quantitative\"}},"
                     "\"data\":{\"values\":[{\"m\":\"Apr\",\"v\":1},{\"m\":\"May\",\"v\":3}]}}}",
                     NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ws_has (fixture, "charts/q2-sales.svg"));
  g_assert_true (ws_has (fixture, "charts/q2-sales.png"));
}

static void
test_errors (Fixture       *fixture,
             gconstpointer  data)
{
  static const struct { const char *input; const char *needle; } cases[] = {
    { "{\"spec\":{\"title\":\"T\",\"mark\":\"boxplot\",\"encoding\":{}}}", "Supported" },
    { "{\"spec\":{\"title\":\"T\",\"mark\":\"boxplot\",\"encoding\":{}}}", "bar" },
    { "{\"spec\":\"bar chart\"}", "`spec` is required" },
    { "{\"spec\":{\"title\":\"T\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"nope\",\"type\":\"nominal\"},"
      "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\"}}},\"sql\":\"" STORE_SQL "\"}", "nope" },
    { "{\"spec\":{\"title\":\"T\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"a\",\"type\":\"nominal\"},"
      "\"y\":{\"field\":\"b\",\"type\":\"quantitative\"}}},\"sql\":\"DELETE FROM sales\"}", "read-only" },
    { "{\"spec\":{\"title\":\"T\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"sale_id\",\"type\":\"nominal\"},"
      "\"y\":{\"field\":\"quantity\",\"type\":\"quantitative\"}}},\"sql\":\"SELECT sale_id, quantity FROM sales\"}",
      "more than 5000 rows" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonObject) artifact = NULL;
      g_autofree char *text = run_chart (fixture, cases[i].input, &artifact, &error);

      g_assert_null (text);
      g_assert_null (artifact);
      g_assert_nonnull (error);
      g_assert_true (error->domain == TALLY_TOOL_ERROR);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("case %u: “%s” lacks “%s”", i, error->message, cases[i].needle);
    }

  /* Nothing was written for a refused chart. */
  g_assert_false (ws_has (fixture, "charts/t.svg"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("/tally/tools/create-chart/sql-files", test_sql_files);
  ADD ("/tally/tools/create-chart/never-overwrites", test_never_overwrites);
  ADD ("/tally/tools/create-chart/errors", test_errors);
#undef ADD

  return g_test_run ();
}
