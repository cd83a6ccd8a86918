/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-create-chart.h"
#include "tally-tool-private.h"
#include "tally-tool-query-database.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#include "tally-chart-render.h"
#include "tally-chart.h"
#include "tally-json.h"

/* The longest file name stem made from a title or `file_name`. */
#define MAX_SLUG_CHARS 60

/* Suffixes tried before giving up (`-2` … `-999`). */
#define MAX_SUFFIX 999

/**
 * TallyToolCreateChart:
 *
 * The `create_chart` tool (issue 12 §1, docs/charts.md): draws a chart
 * from a Vega-Lite subset spec and either the spec's `data.values` or the
 * rows of one read-only `sql` statement, which runs exactly as
 * `query_database` runs it (tally_tool_query_database_fetch_rows()).
 *
 * Input: `{spec, sql?, file_name?}`. It writes `charts/<slug>.svg` and
 * `charts/<slug>.png` in the workspace, never replacing a file (`-2`,
 * `-3` … are added), and answers with the engine's summary and the file
 * names. Its artifact (tally_tool_run_full()) holds the fields of the
 * `chart_created` event: `title`, `spec` (resolved, with its rows inline),
 * `files`, `rows`, and `capped` when the rows were cut.
 *
 * It only adds files, so #TallyToolClass.adds_files_only is set.
 */
struct _TallyToolCreateChart
{
  TallyTool  parent_instance;

  /* The query_database tool whose limits the `sql` runs under. */
  TallyTool *query_database;
};

G_DEFINE_FINAL_TYPE (TallyToolCreateChart, tally_tool_create_chart, TALLY_TYPE_TOOL)

static const char supported_text[] =
  "Supported: mark bar, line, area, point or arc; encoding channels x, y, color, theta "
  "and xOffset, each {field, type (quantitative|nominal|ordinal|temporal), title, sort, "
  "format, stack (zero|normalize|null), aggregate (sum|mean|count|min|max)}; data.values "
  "(at most 5,000 rows) or sql.";

/* A file name stem: lower-case ASCII letters, digits and single dashes. */
static char *
make_slug (const char *text)
{
  g_autoptr(GString) slug = g_string_new (NULL);
  g_autofree char *ascii = NULL;

  if (text == NULL)
    return g_strdup ("chart");

  ascii = g_str_to_ascii (text, "C");
  for (const char *p = ascii; *p != '\0' && slug->len < MAX_SLUG_CHARS; p++)
    {
      if (g_ascii_isalnum (*p))
        g_string_append_c (slug, g_ascii_tolower (*p));
      else if (slug->len > 0 && slug->str[slug->len - 1] != '-')
        g_string_append_c (slug, '-');
    }

  while (slug->len > 0 && slug->str[slug->len - 1] == '-')
    g_string_truncate (slug, slug->len - 1);

  if (slug->len == 0)
    g_string_assign (slug, "chart");

  return g_string_free (g_steal_pointer (&slug), FALSE);
}

/* The stem given by `file_name`, without a folder or an image suffix. */
static char *
slug_from_file_name (const char *file_name)
{
  g_autofree char *base = g_path_get_basename (file_name);

  for (guint i = 0; i < 3; i++)
    {
      static const char * const suffixes[] = { ".svg", ".png", ".pdf" };

      if (g_str_has_suffix (base, suffixes[i]))
        base[strlen (base) - strlen (suffixes[i])] = '\0';
    }

  return make_slug (base);
}

/* The spec as it was drawn: the parsed spec with the rows inline as
 * `data.values` (at most TALLY_CHART_MAX_ROWS; *capped says when more were
 * cut), so the event can draw it again without the database or files. */
static JsonObject *
resolve_spec (TallyChart *chart,
              gboolean   *capped)
{
  TallyChartSpec *spec = tally_chart_get_spec (chart);
  TallyChartData *data = tally_chart_get_data (chart);
  g_autoptr(JsonNode) copy = NULL;
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  JsonObject *resolved;
  JsonObject *data_object;
  JsonArray *values;
  guint n_rows = data ? tally_chart_data_get_n_rows (data) : 0;
  guint n_columns = data ? tally_chart_data_get_n_columns (data) : 0;

  json_node_set_object (node, tally_chart_spec_get_json (spec));
  copy = json_node_copy (node);
  resolved = json_object_ref (json_node_get_object (copy));

  *capped = n_rows > TALLY_CHART_MAX_ROWS;
  n_rows = MIN (n_rows, TALLY_CHART_MAX_ROWS);

  values = json_array_sized_new (n_rows);
  for (guint r = 0; r < n_rows; r++)
    {
      JsonObject *row = json_object_new ();

      for (guint c = 0; c < n_columns; c++)
        {
          JsonNode *cell = tally_chart_data_get_cell (data, r, c);

          json_object_set_member (row, tally_chart_data_get_column_name (data, c),
                                  cell ? json_node_copy (cell) : json_node_new (JSON_NODE_NULL));
        }
      json_array_add_object_element (values, row);
    }

  data_object = json_object_new ();
  json_object_set_array_member (data_object, "values", values);
  json_object_set_object_member (resolved, "data", data_object);

  return resolved;
}

/* Whether @path names anything, a symbolic link included: a dangling link
 * does not "exist" for g_file_test(), but writing through it would create
 * its target, wherever that is (docs/security.md, "Tools that only add
 * files"). */
static gboolean
is_taken (const char *path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS) || g_file_test (path, G_FILE_TEST_IS_SYMLINK);
}

/* Picks `charts/<slug>[-n]` such that neither the .svg nor the .png
 * exists, not even as a dangling symbolic link; returns the stem path
 * (absolute, without suffix). */
static char *
pick_stem (const char  *charts_dir,
           const char  *slug,
           char       **relative_stem,
           GError     **error)
{
  for (guint n = 1; n <= MAX_SUFFIX; n++)
    {
      g_autofree char *name = n == 1 ? g_strdup (slug) : g_strdup_printf ("%s-%u", slug, n);
      g_autofree char *stem = g_build_filename (charts_dir, name, NULL);
      g_autofree char *svg = g_strconcat (stem, ".svg", NULL);
      g_autofree char *png = g_strconcat (stem, ".png", NULL);

      if (!is_taken (svg) && !is_taken (png))
        {
          *relative_stem = g_strconcat ("charts/", name, NULL);
          return g_steal_pointer (&stem);
        }
    }

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
               "charts/ already holds %d charts named %s; pass another file_name",
               MAX_SUFFIX, slug);
  return NULL;
}

static void
set_chart_error (GError **error,
                 GError  *chart_error)
{
  if (chart_error->domain == TALLY_CHART_ERROR &&
      (chart_error->code == TALLY_CHART_ERROR_UNSUPPORTED ||
       chart_error->code == TALLY_CHART_ERROR_INVALID_SPEC) &&
      strstr (chart_error->message, "Supported") == NULL)
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                 "The chart was not drawn: %s %s", chart_error->message, supported_text);
  else
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                 "The chart was not drawn: %s", chart_error->message);
}

static char *
create_chart_run (TallyTool               *tool,
                  const TallyToolContext  *context,
                  JsonObject              *input,
                  GCancellable            *cancellable,
                  JsonObject             **artifact,
                  GError                 **error)
{
  TallyToolCreateChart *self = TALLY_TOOL_CREATE_CHART (tool);
  g_autoptr(GError) chart_error = NULL;
  g_autoptr(TallyChartSpec) spec = NULL;
  g_autoptr(TallyChartData) data = NULL;
  g_autoptr(TallyChart) chart = NULL;
  g_autoptr(JsonObject) resolved = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *slug = NULL;
  g_autofree char *charts_dir = NULL;
  g_autofree char *stem = NULL;
  g_autofree char *relative_stem = NULL;
  g_autofree char *svg_path = NULL;
  g_autofree char *png_path = NULL;
  g_autofree char *svg_name = NULL;
  g_autofree char *png_name = NULL;
  JsonNode *spec_node;
  JsonArray *files;
  const char *sql;
  const char *file_name;
  gboolean capped = FALSE;
  int width = TALLY_TOOL_CREATE_CHART_WIDTH;
  int height = (int) (TALLY_TOOL_CREATE_CHART_WIDTH * 0.55);

  spec_node = json_object_get_member (input, "spec");
  if (spec_node == NULL || !JSON_NODE_HOLDS_OBJECT (spec_node))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "`spec` is required and must be a JSON object (a Vega-Lite v5 spec). %s",
                   supported_text);
      return NULL;
    }

  if (!tally_tool_input_get_string (input, "sql", FALSE, &sql, error) ||
      !tally_tool_input_get_string (input, "file_name", FALSE, &file_name, error))
    return NULL;

  if (context->workspace == NULL)
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                           "This session has no workspace folder, so there is nowhere to "
                           "save a chart");
      return NULL;
    }

  spec = tally_chart_spec_new_from_json (json_node_get_object (spec_node), &chart_error);
  if (spec == NULL)
    {
      set_chart_error (error, chart_error);
      return NULL;
    }

  if (sql != NULL)
    {
      g_autoptr(TallyQueryRows) rows = NULL;

      if (tally_chart_spec_get_values (spec) != NULL)
        {
          g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                               "Give either `sql` or `spec.data.values`, not both");
          return NULL;
        }

      rows = tally_tool_query_database_fetch_rows (self->query_database, context, sql,
                                                   TALLY_CHART_MAX_ROWS, cancellable, error);
      if (rows == NULL)
        return NULL;

      if (rows->more)
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "The chart was not drawn: the query returned more than %d rows. "
                       "Aggregate in SQL (GROUP BY) so that at most %d rows remain.",
                       TALLY_CHART_MAX_ROWS, TALLY_CHART_MAX_ROWS);
          return NULL;
        }

      data = tally_chart_data_new_from_columns ((const char * const *) rows->column_names, rows->rows,
                                                &chart_error);
      if (data == NULL)
        {
          set_chart_error (error, chart_error);
          return NULL;
        }
    }

  chart = tally_chart_new (spec, data, &chart_error);
  if (chart == NULL)
    {
      set_chart_error (error, chart_error);
      return NULL;
    }

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  slug = file_name != NULL ? slug_from_file_name (file_name)
                           : make_slug (tally_chart_spec_get_title (spec));

  charts_dir = tally_tool_resolve_inside (context, "file_name", "charts", error);
  if (charts_dir == NULL)
    return NULL;

  if (g_mkdir_with_parents (charts_dir, 0755) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Could not create the folder charts/: %s", g_strerror (saved_errno));
      return NULL;
    }

  stem = pick_stem (charts_dir, slug, &relative_stem, error);
  if (stem == NULL)
    return NULL;

  svg_path = g_strconcat (stem, ".svg", NULL);
  png_path = g_strconcat (stem, ".png", NULL);
  svg_name = g_strconcat (relative_stem, ".svg", NULL);
  png_name = g_strconcat (relative_stem, ".png", NULL);

  if (!tally_chart_write_svg (chart, svg_path, width, height, FALSE, &chart_error) ||
      !tally_chart_write_png (chart, png_path, width, height, FALSE, &chart_error))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The chart could not be saved: %s", chart_error->message);
      return NULL;
    }

  resolved = resolve_spec (chart, &capped);

  if (artifact != NULL)
    {
      JsonObject *fields = json_object_new ();

      files = json_array_new ();
      json_array_add_string_element (files, svg_name);
      json_array_add_string_element (files, png_name);

      json_object_set_string_member (fields, "title", tally_chart_spec_get_title (spec));
      json_object_set_object_member (fields, "spec", json_object_ref (resolved));
      json_object_set_array_member (fields, "files", files);
      json_object_set_int_member (fields, "rows",
                                  tally_chart_data_get_n_rows (tally_chart_get_data (chart)));
      if (capped)
        json_object_set_boolean_member (fields, "capped", TRUE);
      tally_json_object_set_string_unless_null (fields, "sql", sql);
      *artifact = fields;
    }

  summary = tally_chart_dup_summary (chart);

  return g_strdup_printf ("%s\nSaved as %s and %s (in the workspace).", summary, svg_name, png_name);
}

static char *
create_chart_dup_summary (TallyTool  *tool,
                          JsonObject *input)
{
  JsonNode *spec = json_object_get_member (input, "spec");

  if (spec != NULL && JSON_NODE_HOLDS_OBJECT (spec))
    {
      const char *title = json_object_get_string_member_with_default (json_node_get_object (spec),
                                                                      "title", NULL);

      if (title != NULL)
        return g_strdup (title);
    }

  return NULL;
}

static void
tally_tool_create_chart_dispose (GObject *object)
{
  TallyToolCreateChart *self = (TallyToolCreateChart *) object;

  g_clear_object (&self->query_database);

  G_OBJECT_CLASS (tally_tool_create_chart_parent_class)->dispose (object);
}

static void
tally_tool_create_chart_class_init (TallyToolCreateChartClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  object_class->dispose = tally_tool_create_chart_dispose;

  tool_class->name = "create_chart";
  tool_class->description =
    "Draw a chart for the analyst and save it as charts/<name>.svg and charts/<name>.png in "
    "the workspace (existing files are never replaced). The chart also appears in the "
    "conversation. `spec` is a subset of Vega-Lite v5: title (required), description (alt "
    "text), mark (bar, line, area, point or arc; {\"type\":\"arc\",\"innerRadius\":60} for a "
    "donut), and encoding channels x, y, color, theta and xOffset, each with field, type "
    "(quantitative, nominal, ordinal or temporal), and optionally title, sort, format "
    "(d3-format such as \",.0f\", \"$,.2f\", \".0%\"; d3-time-format such as \"%b %Y\" for "
    "dates), stack (\"zero\", \"normalize\" or null to group bars side by side) and aggregate "
    "(sum, mean, count, min, max). Bars, lines, areas and points need x and y with a "
    "quantitative y (categories go on x); arcs need theta and take color for the slices. "
    "The data is either `sql`, one read-only statement run exactly like query_database "
    "(its columns are the fields), or spec.data.values, inline rows; at most 5,000 rows, so "
    "aggregate in SQL. Anything outside this subset is refused with a message listing what "
    "is supported. The result describes what was drawn (rows, series, axis ranges) so you "
    "can describe the chart without seeing it.";
  tool_class->input_help = supported_text;
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"spec\":{\"type\":\"object\","
    "\"description\":\"The chart as a Vega-Lite v5 subset spec.\","
    "\"properties\":{"
    "\"title\":{\"type\":\"string\",\"description\":\"What the chart shows, in a few words.\"},"
    "\"description\":{\"type\":\"string\",\"description\":\"Alt text: the chart's message in one sentence.\"},"
    "\"mark\":{\"description\":\"bar, line, area, point or arc, or an object with type and innerRadius (arc) or point (line, area).\","
    "\"anyOf\":[{\"type\":\"string\",\"enum\":[\"bar\",\"line\",\"area\",\"point\",\"arc\"]},"
    "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"bar\",\"line\",\"area\",\"point\",\"arc\"]},"
    "\"innerRadius\":{\"type\":\"number\"},\"point\":{\"type\":\"boolean\"}},\"required\":[\"type\"]}]},"
    "\"encoding\":{\"type\":\"object\",\"properties\":{"
    "\"x\":{\"$ref\":\"#/$defs/channel\"},"
    "\"y\":{\"$ref\":\"#/$defs/channel\"},"
    "\"color\":{\"$ref\":\"#/$defs/channel\"},"
    "\"theta\":{\"$ref\":\"#/$defs/channel\"},"
    "\"xOffset\":{\"$ref\":\"#/$defs/channel\"}},"
    "\"additionalProperties\":false},"
    "\"data\":{\"type\":\"object\",\"properties\":{\"values\":{\"type\":\"array\",\"maxItems\":5000,"
    "\"items\":{\"type\":\"object\"},\"description\":\"Inline rows, when there is no sql.\"}}}"
    "},"
    "\"required\":[\"title\",\"mark\",\"encoding\"]},"
    "\"sql\":{\"type\":\"string\","
    "\"description\":\"One read-only SQL statement, in the database's dialect, whose rows are the chart's data (run like query_database).\"},"
    "\"file_name\":{\"type\":\"string\","
    "\"description\":\"The file name stem under charts/ (default: made from the title).\"}"
    "},"
    "\"required\":[\"spec\"],"
    "\"$defs\":{\"channel\":{\"type\":\"object\",\"properties\":{"
    "\"field\":{\"type\":\"string\"},"
    "\"type\":{\"type\":\"string\",\"enum\":[\"quantitative\",\"nominal\",\"ordinal\",\"temporal\"]},"
    "\"title\":{\"type\":[\"string\",\"null\"]},"
    "\"sort\":{\"description\":\"ascending, descending, x, -x, y, -y, theta, -theta, null or an array of values.\"},"
    "\"format\":{\"type\":\"string\"},"
    "\"stack\":{\"enum\":[\"zero\",\"normalize\",null]},"
    "\"aggregate\":{\"type\":\"string\",\"enum\":[\"sum\",\"mean\",\"count\",\"min\",\"max\"]}"
    "}}}}";
  tool_class->read_only = FALSE;
  tool_class->adds_files_only = TRUE;
  tool_class->run_with_artifact = create_chart_run;
  tool_class->dup_summary = create_chart_dup_summary;
}

static void
tally_tool_create_chart_init (TallyToolCreateChart *self)
{
}

/**
 * tally_tool_create_chart_new:
 * @query_database: the `query_database` tool (from the same registry),
 *   whose timeout and memory limits the `sql` of a chart runs under
 *
 * Creates the `create_chart` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_create_chart_new (TallyTool *query_database)
{
  TallyToolCreateChart *self;

  g_return_val_if_fail (TALLY_IS_TOOL_QUERY_DATABASE (query_database), NULL);

  self = g_object_new (TALLY_TYPE_TOOL_CREATE_CHART, NULL);
  self->query_database = g_object_ref (query_database);

  return TALLY_TOOL (self);
}
