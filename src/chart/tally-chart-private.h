/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include "tally-chart.h"
#include "tally-chart-scale.h"

G_BEGIN_DECLS

/* The most nominal categories on x, slices of an arc and series before
 * the smallest are merged into "Other" (docs/charts.md §4.3). */
#define TALLY_CHART_MAX_NOMINAL 30
#define TALLY_CHART_MAX_SLICES  8
#define TALLY_CHART_MAX_SERIES  8

typedef struct {
  double x;   /* category index, or the value (seconds for temporal) */
  double y;   /* the value, normalised to 0–1 when stacked to 100% */
  double y0;  /* stacked base (0 when not stacked) */
  double y1;  /* stacked top (y when not stacked) */
} TallyChartPoint;

typedef struct {
  char   *name;
  GArray *points; /* TallyChartPoint, ordered by x */
} TallyChartSeries;

struct _TallyChart
{
  GObject             parent_instance;

  TallyChartSpec     *spec;
  TallyChartData     *data;
  TallyChartMark      mark;

  /* The x axis: categories (bars, arcs' slices, nominal lines) or
   * continuous numbers or times. */
  gboolean            x_categorical;
  TallyChartFieldType x_type;
  GPtrArray          *categories;   /* char*, labels in axis order */
  GArray             *category_keys; /* double, the time or number of each
                                        temporal/quantitative category */
  double              x_min, x_max; /* continuous x */

  /* The values. */
  GPtrArray          *series;       /* TallyChartSeries*; at least one */
  gboolean            has_series;   /* a color/xOffset channel splits them */
  gboolean            stacked;
  gboolean            normalized;
  gboolean            grouped;
  double              y_min, y_max;

  /* What happened to the rows. */
  guint               rows_total;
  guint               rows_plotted;
  guint               rows_skipped;  /* NULL, NaN or infinite in an encoded field */
  guint               rows_negative; /* negative arc values, not drawn */
  guint               categories_merged;
  guint               categories_dropped;
  guint               series_merged;

  char               *x_title;
  char               *y_title;
  char               *color_title;
  const char         *x_format;
  const char         *y_format;
};

TallyChartTimeUnit tally_chart_time_unit_of      (const double       *times,
                                                guint               n);
char              *tally_chart_format_time_label (double              t,
                                                TallyChartTimeUnit  unit,
                                                const char         *format);

G_END_DECLS
