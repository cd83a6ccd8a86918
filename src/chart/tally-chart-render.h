/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <cairo.h>

#include "tally-chart.h"

G_BEGIN_DECLS

/**
 * TallyChartStyle:
 * @dark: whether to use the dark palette
 * @font_family: the font family for all text, e.g. "DejaVu Sans"
 * @font_size: the size of body text (labels, legend) in device units
 *   (points for PDF and SVG, pixels at scale 1 for PNG); titles are 1.3×
 * @background: RGBA of the background, each 0–1
 * @foreground: RGBA of text and axes
 * @muted: RGBA of tick labels and secondary text
 * @grid: RGBA of grid lines
 * @fill_background: whether tally_chart_render() paints @background first
 *   (a widget over its own background may leave it off)
 *
 * How a chart is drawn. Fill one in with tally_chart_style_init(), then
 * change what the caller needs (the widget takes its colours and font
 * from the theme).
 */
typedef struct {
  gboolean    dark;
  const char *font_family;
  double      font_size;
  double      background[4];
  double      foreground[4];
  double      muted[4];
  double      grid[4];
  gboolean    fill_background;
} TallyChartStyle;

void      tally_chart_style_init     (TallyChartStyle       *style,
                                      gboolean               dark);
void      tally_chart_palette_color  (guint                  index,
                                      gboolean               dark,
                                      double                 rgba[4]);

void      tally_chart_render         (TallyChart            *chart,
                                      cairo_t               *cr,
                                      double                 width,
                                      double                 height,
                                      const TallyChartStyle *style);

char     *tally_chart_hit_test       (TallyChart            *chart,
                                      double                 width,
                                      double                 height,
                                      double                 x,
                                      double                 y,
                                      const TallyChartStyle *style);

gboolean  tally_chart_write_png      (TallyChart            *chart,
                                      const char            *path,
                                      int                    width,
                                      int                    height,
                                      gboolean               dark,
                                      GError               **error);
gboolean  tally_chart_write_svg      (TallyChart            *chart,
                                      const char            *path,
                                      double                 width,
                                      double                 height,
                                      gboolean               dark,
                                      GError               **error);
gboolean  tally_chart_write_pdf      (TallyChart            *chart,
                                      const char            *path,
                                      double                 width,
                                      double                 height,
                                      gboolean               dark,
                                      GError               **error);

G_END_DECLS
