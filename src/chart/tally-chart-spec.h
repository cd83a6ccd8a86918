/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TALLY_CHART_ERROR:
 *
 * The error domain of the chart engine (`src/chart/`). Its codes are the
 * #TallyChartError values; every message says what went wrong and, when
 * the input was outside the supported subset, what is supported
 * (docs/charts.md §3).
 */
#define TALLY_CHART_ERROR (tally_chart_error_quark ())

/**
 * TallyChartError:
 * @TALLY_CHART_ERROR_INVALID_SPEC: the spec is not shaped as Vega-Lite v5
 *   says (a member of the wrong JSON type, a required member missing).
 * @TALLY_CHART_ERROR_UNSUPPORTED: the spec is valid Vega-Lite but uses a
 *   mark, channel, key or value outside Tally's subset.
 * @TALLY_CHART_ERROR_MISSING_FIELD: an encoded field is not a column of the
 *   data; the message names the available columns.
 * @TALLY_CHART_ERROR_NOT_NUMERIC: a value on a quantitative channel is not
 *   a number (nor NULL/NaN, which are skipped), or a temporal value is not
 *   an ISO 8601 date.
 * @TALLY_CHART_ERROR_TOO_MANY_ROWS: more rows than
 *   %TALLY_CHART_MAX_ROWS.
 * @TALLY_CHART_ERROR_WRITE: writing an image file failed.
 *
 * Error codes in %TALLY_CHART_ERROR.
 */
typedef enum {
  TALLY_CHART_ERROR_INVALID_SPEC,
  TALLY_CHART_ERROR_UNSUPPORTED,
  TALLY_CHART_ERROR_MISSING_FIELD,
  TALLY_CHART_ERROR_NOT_NUMERIC,
  TALLY_CHART_ERROR_TOO_MANY_ROWS,
  TALLY_CHART_ERROR_WRITE,
} TallyChartError;

/**
 * TALLY_CHART_MAX_ROWS:
 *
 * The most data rows a chart takes, inline (`data.values`) or from a
 * query. More is refused with %TALLY_CHART_ERROR_TOO_MANY_ROWS: a chart of
 * more rows than this should aggregate in SQL first.
 */
#define TALLY_CHART_MAX_ROWS 5000

/**
 * TallyChartMark:
 * @TALLY_CHART_MARK_BAR: bars, stacked or grouped by series
 * @TALLY_CHART_MARK_LINE: one line per series
 * @TALLY_CHART_MARK_AREA: filled areas, stacked by series
 * @TALLY_CHART_MARK_POINT: a scatter of points
 * @TALLY_CHART_MARK_ARC: a pie, or a donut with an inner radius
 *
 * The marks of the subset (Vega-Lite v5 "mark").
 */
typedef enum {
  TALLY_CHART_MARK_BAR,
  TALLY_CHART_MARK_LINE,
  TALLY_CHART_MARK_AREA,
  TALLY_CHART_MARK_POINT,
  TALLY_CHART_MARK_ARC,
} TallyChartMark;

/**
 * TallyChartChannel:
 * @TALLY_CHART_CHANNEL_X: the horizontal position
 * @TALLY_CHART_CHANNEL_Y: the vertical position (a quantity)
 * @TALLY_CHART_CHANNEL_COLOR: the series (or, for arcs, the slices)
 * @TALLY_CHART_CHANNEL_THETA: the angle of an arc (a quantity)
 * @TALLY_CHART_CHANNEL_X_OFFSET: groups bars side by side by series
 * @TALLY_CHART_N_CHANNELS: the number of channels
 *
 * The encoding channels of the subset (Vega-Lite v5 "encoding").
 */
typedef enum {
  TALLY_CHART_CHANNEL_X,
  TALLY_CHART_CHANNEL_Y,
  TALLY_CHART_CHANNEL_COLOR,
  TALLY_CHART_CHANNEL_THETA,
  TALLY_CHART_CHANNEL_X_OFFSET,
  TALLY_CHART_N_CHANNELS,
} TallyChartChannel;

/**
 * TallyChartFieldType:
 * @TALLY_CHART_FIELD_QUANTITATIVE: numbers
 * @TALLY_CHART_FIELD_NOMINAL: unordered categories
 * @TALLY_CHART_FIELD_ORDINAL: ordered categories
 * @TALLY_CHART_FIELD_TEMPORAL: ISO 8601 dates and date-times
 *
 * The measurement types of Vega-Lite v5 ("type").
 */
typedef enum {
  TALLY_CHART_FIELD_QUANTITATIVE,
  TALLY_CHART_FIELD_NOMINAL,
  TALLY_CHART_FIELD_ORDINAL,
  TALLY_CHART_FIELD_TEMPORAL,
} TallyChartFieldType;

/**
 * TallyChartStack:
 * @TALLY_CHART_STACK_DEFAULT: not given: bars and areas with series stack
 *   from zero, lines and points do not stack
 * @TALLY_CHART_STACK_ZERO: stack from zero
 * @TALLY_CHART_STACK_NORMALIZE: stack to 100% of each x
 * @TALLY_CHART_STACK_NONE: `null`: do not stack (bars are then grouped
 *   side by side, see docs/charts.md §4)
 *
 * The `stack` property of a quantitative channel.
 */
typedef enum {
  TALLY_CHART_STACK_DEFAULT,
  TALLY_CHART_STACK_ZERO,
  TALLY_CHART_STACK_NORMALIZE,
  TALLY_CHART_STACK_NONE,
} TallyChartStack;

/**
 * TallyChartAggregate:
 * @TALLY_CHART_AGGREGATE_NONE: not given
 * @TALLY_CHART_AGGREGATE_SUM: the sum
 * @TALLY_CHART_AGGREGATE_MEAN: the arithmetic mean
 * @TALLY_CHART_AGGREGATE_COUNT: the number of rows (no field needed)
 * @TALLY_CHART_AGGREGATE_MIN: the smallest value
 * @TALLY_CHART_AGGREGATE_MAX: the largest value
 *
 * The `aggregate` property of a quantitative channel.
 */
typedef enum {
  TALLY_CHART_AGGREGATE_NONE,
  TALLY_CHART_AGGREGATE_SUM,
  TALLY_CHART_AGGREGATE_MEAN,
  TALLY_CHART_AGGREGATE_COUNT,
  TALLY_CHART_AGGREGATE_MIN,
  TALLY_CHART_AGGREGATE_MAX,
} TallyChartAggregate;

/**
 * TallyChartSort:
 * @TALLY_CHART_SORT_DEFAULT: not given: nominal and ordinal categories
 *   ascending, temporal and quantitative ones in their natural order
 * @TALLY_CHART_SORT_ASCENDING: `"ascending"` (or `"x"`)
 * @TALLY_CHART_SORT_DESCENDING: `"descending"` (or `"-x"`)
 * @TALLY_CHART_SORT_BY_VALUE: `"y"` or `"theta"`: by the total value
 * @TALLY_CHART_SORT_BY_VALUE_DESCENDING: `"-y"` or `"-theta"`
 * @TALLY_CHART_SORT_NONE: `null`: the order of the data
 * @TALLY_CHART_SORT_LIST: an array of values: that order first
 *
 * The `sort` property of a categorical channel.
 */
typedef enum {
  TALLY_CHART_SORT_DEFAULT,
  TALLY_CHART_SORT_ASCENDING,
  TALLY_CHART_SORT_DESCENDING,
  TALLY_CHART_SORT_BY_VALUE,
  TALLY_CHART_SORT_BY_VALUE_DESCENDING,
  TALLY_CHART_SORT_NONE,
  TALLY_CHART_SORT_LIST,
} TallyChartSort;

/**
 * TallyChartEncoding:
 * @present: whether the spec has this channel
 * @field: (nullable): the data column, %NULL only for a `count` aggregate
 * @type: the measurement type
 * @title: (nullable): the axis or legend title, %NULL for the default
 * @format: (nullable): a d3-format string for quantitative channels, a
 *   d3-time-format string (`%Y`, `%b` …) for temporal ones
 * @stack: the stack property
 * @aggregate: the aggregate property
 * @sort: the sort property
 * @sort_values: (nullable) (array zero-terminated=1): the order for
 *   %TALLY_CHART_SORT_LIST, as text
 *
 * One channel of a parsed spec. Owned by its #TallyChartSpec; read-only.
 */
typedef struct {
  gboolean             present;
  char                *field;
  TallyChartFieldType  type;
  char                *title;
  char                *format;
  TallyChartStack      stack;
  TallyChartAggregate  aggregate;
  TallyChartSort       sort;
  char               **sort_values;
} TallyChartEncoding;

#define TALLY_TYPE_CHART_SPEC (tally_chart_spec_get_type ())

G_DECLARE_FINAL_TYPE (TallyChartSpec, tally_chart_spec, TALLY, CHART_SPEC, GObject)

GQuark                    tally_chart_error_quark          (void);

TallyChartSpec           *tally_chart_spec_new_from_json   (JsonObject         *object,
                                                            GError            **error);
const char               *tally_chart_spec_get_title       (TallyChartSpec     *self);
const char               *tally_chart_spec_get_description (TallyChartSpec     *self);
TallyChartMark            tally_chart_spec_get_mark        (TallyChartSpec     *self);
double                    tally_chart_spec_get_inner_radius (TallyChartSpec    *self);
gboolean                  tally_chart_spec_get_show_points (TallyChartSpec     *self);
const TallyChartEncoding *tally_chart_spec_get_encoding    (TallyChartSpec     *self,
                                                            TallyChartChannel   channel);
JsonArray                *tally_chart_spec_get_values      (TallyChartSpec     *self);
JsonObject               *tally_chart_spec_get_json        (TallyChartSpec     *self);

const char               *tally_chart_mark_to_string       (TallyChartMark      mark);
const char               *tally_chart_channel_to_string    (TallyChartChannel   channel);
const char               *tally_chart_field_type_to_string (TallyChartFieldType type);
const char               *tally_chart_aggregate_to_string  (TallyChartAggregate aggregate);

G_END_DECLS
