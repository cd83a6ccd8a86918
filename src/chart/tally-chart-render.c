/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-chart"

#include "config.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>
#include <pango/pangocairo.h>

#include "tally-chart-private.h"
#include "tally-chart-render.h"
#include "tally-chart-scale.h"

/*
 * One Cairo drawing of a chart for every output: the widget, PNG, SVG and
 * PDF (docs/charts.md §6). Text goes through PangoCairo with hinting off,
 * so that the layout is the same at every scale and on every machine with
 * the same font.
 */

#define PAD 12.0

/* Okabe and Ito's colour-blind-safe palette, blue first; black is swapped
 * for a grey, and the dark variants are lighter for a dark background. */
static const guint32 palette_light[] = {
  0x0072B2, 0xE69F00, 0x009E73, 0xD55E00, 0x56B4E9, 0xCC79A7, 0xF0E442, 0x7F7F7F,
};
static const guint32 palette_dark[] = {
  0x3A9BDB, 0xF0B030, 0x2BB58C, 0xF07A3A, 0x8FD0F5, 0xE08FC0, 0xF0E442, 0xB0B0B0,
};

/* @rgba: (out caller-allocates) (array fixed-size=4): @c, a 0xRRGGBB
 * colour, as red, green and blue from 0 to 1, opaque. */
static void
set_rgb (double  rgba[4],
         guint32 c)
{
  rgba[0] = ((c >> 16) & 0xff) / 255.0;
  rgba[1] = ((c >> 8) & 0xff) / 255.0;
  rgba[2] = (c & 0xff) / 255.0;
  rgba[3] = 1;
}

/**
 * tally_chart_palette_color:
 * @index: the series or slice index; the palette repeats after 8
 * @dark: whether the colour is for a dark background
 * @rgba: (out caller-allocates) (array fixed-size=4): red, green, blue and
 *   alpha, each 0–1
 *
 * The colour of series @index: Okabe–Ito, colour-blind safe.
 */
void
tally_chart_palette_color (guint    index,
                           gboolean dark,
                           double   rgba[4])
{
  set_rgb (rgba, (dark ? palette_dark : palette_light)[index % G_N_ELEMENTS (palette_light)]);
}

/**
 * tally_chart_style_init:
 * @style: (out caller-allocates): the style to fill in
 * @dark: whether to use dark colours
 *
 * The default style: "DejaVu Sans" at 11 device units, white or
 * near-black background, painted.
 */
void
tally_chart_style_init (TallyChartStyle *style,
                        gboolean         dark)
{
  g_return_if_fail (style != NULL);

  style->dark = dark;
  style->font_family = "DejaVu Sans";
  style->font_size = 11;
  style->fill_background = TRUE;
  set_rgb (style->background, dark ? 0x1E1E1E : 0xFFFFFF);
  set_rgb (style->foreground, dark ? 0xEEEEEE : 0x1E1E1E);
  set_rgb (style->muted, dark ? 0xA8A8A8 : 0x5E5E5E);
  set_rgb (style->grid, dark ? 0x3A3A3A : 0xE4E4E4);
}

typedef struct {
  TallyChart            *chart;
  cairo_t               *cr;
  const TallyChartStyle *style;
  PangoLayout           *layout;
  PangoFontDescription  *font;
  PangoFontDescription  *bold;
  double                 width, height;
  /* The plot area. */
  double                 left, right, top, bottom;
} Ctx;

static void
source (Ctx          *c,
        const double  rgba[4])
{
  cairo_set_source_rgba (c->cr, rgba[0], rgba[1], rgba[2], rgba[3]);
}

static void
set_text (Ctx        *c,
          const char *text,
          gboolean    bold,
          double      scale,
          double      max_width)
{
  PangoFontDescription *desc = pango_font_description_copy (bold ? c->bold : c->font);

  pango_font_description_set_absolute_size (desc, c->style->font_size * scale * PANGO_SCALE);
  pango_layout_set_font_description (c->layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_text (c->layout, text, -1);
  if (max_width > 0)
    {
      pango_layout_set_width (c->layout, (int) (max_width * PANGO_SCALE));
      pango_layout_set_ellipsize (c->layout, PANGO_ELLIPSIZE_END);
    }
  else
    {
      pango_layout_set_width (c->layout, -1);
      pango_layout_set_ellipsize (c->layout, PANGO_ELLIPSIZE_NONE);
    }
}

static void
measure (Ctx        *c,
         const char *text,
         gboolean    bold,
         double      scale,
         double      max_width,
         double     *w,
         double     *h)
{
  PangoRectangle logical;

  set_text (c, text, bold, scale, max_width);
  pango_layout_get_pixel_extents (c->layout, NULL, &logical);
  if (w)
    *w = logical.width;
  if (h)
    *h = logical.height;
}

/* Draws @text with its anchor point (@ax, @ay as fractions of its box) at
 * (@x, @y), rotated by @angle radians around that point. */
static void
draw_text (Ctx          *c,
           const char   *text,
           double        x,
           double        y,
           double        ax,
           double        ay,
           gboolean      bold,
           double        scale,
           double        max_width,
           double        angle,
           const double  rgba[4])
{
  PangoRectangle logical;

  set_text (c, text, bold, scale, max_width);
  pango_layout_get_pixel_extents (c->layout, NULL, &logical);
  cairo_save (c->cr);
  cairo_translate (c->cr, x, y);
  if (angle != 0)
    cairo_rotate (c->cr, angle);
  cairo_move_to (c->cr, -logical.width * ax - logical.x, -logical.height * ay);
  source (c, rgba);
  pango_cairo_update_layout (c->cr, c->layout);
  pango_cairo_show_layout (c->cr, c->layout);
  cairo_restore (c->cr);
  pango_cairo_update_layout (c->cr, c->layout);
}

static double
line_height (Ctx *c)
{
  double h;

  measure (c, "Ag", FALSE, 1, -1, NULL, &h);
  return h;
}

/* y scale. */
static double
map_y (Ctx    *c,
       double  lo,
       double  hi,
       double  v)
{
  if (hi == lo)
    return c->bottom;
  return c->bottom - (v - lo) / (hi - lo) * (c->bottom - c->top);
}

static double
map_x_cont (Ctx    *c,
            double  lo,
            double  hi,
            double  v)
{
  if (hi == lo)
    return (c->left + c->right) / 2;
  return c->left + (v - lo) / (hi - lo) * (c->right - c->left);
}

static char *
y_label (TallyChart *chart,
         double      v,
         double      step)
{
  if (chart->normalized)
    return tally_chart_format_number (v, ".0%", 0);
  return tally_chart_format_number (v, chart->y_format, chart->y_format ? 0 : step);
}

static void
draw_no_data (Ctx *c)
{
  double cx = c->width / 2, cy = (c->top + c->height - PAD) / 2;

  cairo_set_line_width (c->cr, 1);
  source (c, c->style->grid);
  cairo_rectangle (c->cr, PAD + 0.5, c->top + 0.5, c->width - 2 * PAD - 1, c->height - PAD - c->top - 1);
  cairo_stroke (c->cr);
  draw_text (c, _("No data"), cx, cy, 0.5, 0.5, TRUE, 1.3, c->width - 4 * PAD, 0, c->style->muted);
}

static void
legend_entries (Ctx        *c,
                GPtrArray  *labels)
{
  TallyChart *chart = c->chart;

  if (chart->mark == TALLY_CHART_MARK_ARC)
    {
      TallyChartSeries *series = g_ptr_array_index (chart->series, 0);
      double total = 0;

      for (guint i = 0; i < series->points->len; i++)
        total += g_array_index (series->points, TallyChartPoint, i).y;
      for (guint k = 0; k < chart->categories->len; k++)
        {
          double v = 0;
          g_autofree char *pct = NULL;

          for (guint i = 0; i < series->points->len; i++)
            if ((guint) g_array_index (series->points, TallyChartPoint, i).x == k)
              v = g_array_index (series->points, TallyChartPoint, i).y;
          pct = tally_chart_format_number (total > 0 ? v / total : 0, ".1%", 0);
          g_ptr_array_add (labels, g_strdup_printf ("%s (%s)",
                                                    (const char *) g_ptr_array_index (chart->categories, k),
                                                    pct));
        }
    }
  else if (chart->has_series)
    for (guint s = 0; s < chart->series->len; s++)
      g_ptr_array_add (labels, g_strdup (((TallyChartSeries *) g_ptr_array_index (chart->series, s))->name));
}

/* Lays out and draws the legend at the right; returns its width. */
static double
legend (Ctx      *c,
        gboolean  draw)
{
  TallyChart *chart = c->chart;
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  double max_w = 0, title_w = 0, lh = line_height (c), swatch = c->style->font_size * 0.9;
  double cap = MAX (60, c->width * 0.28);
  double x, y;

  legend_entries (c, labels);
  if (labels->len == 0)
    return 0;

  for (guint i = 0; i < labels->len; i++)
    {
      double w;

      measure (c, g_ptr_array_index (labels, i), FALSE, 1, cap, &w, NULL);
      max_w = MAX (max_w, w);
    }
  if (chart->color_title && *chart->color_title)
    measure (c, chart->color_title, TRUE, 1, cap + swatch + 6, &title_w, NULL);
  max_w = MAX (max_w + swatch + 6, title_w);

  if (!draw)
    return max_w + PAD;

  x = c->width - PAD - max_w;
  y = c->top;
  if (chart->color_title && *chart->color_title)
    {
      draw_text (c, chart->color_title, x, y, 0, 0, TRUE, 1, cap + swatch + 6, 0, c->style->foreground);
      y += lh * 1.3;
    }
  for (guint i = 0; i < labels->len && y + lh <= c->height - PAD; i++)
    {
      double rgba[4];

      tally_chart_palette_color (i, c->style->dark, rgba);
      source (c, rgba);
      cairo_rectangle (c->cr, x, y + (lh - swatch) / 2, swatch, swatch);
      cairo_fill (c->cr);
      draw_text (c, g_ptr_array_index (labels, i), x + swatch + 6, y, 0, 0, FALSE, 1, cap, 0,
                 c->style->foreground);
      y += lh * 1.25;
    }
  return max_w + PAD;
}

/* An arc's centre, outer and inner radius and the sum of its slices. */
static double
arc_geometry (Ctx    *c,
              double *cx,
              double *cy,
              double *r,
              double *inner)
{
  TallyChartSeries *series = g_ptr_array_index (c->chart->series, 0);
  double total = 0;

  *cx = (c->left + c->right) / 2;
  *cy = (c->top + c->bottom) / 2;
  *r = MAX (4, MIN (c->right - c->left, c->bottom - c->top) / 2);
  *inner = MIN (tally_chart_spec_get_inner_radius (c->chart->spec), *r * 0.8);
  for (guint i = 0; i < series->points->len; i++)
    total += g_array_index (series->points, TallyChartPoint, i).y;
  return total;
}

static void
draw_arc (Ctx *c)
{
  TallyChart *chart = c->chart;
  TallyChartSeries *series = g_ptr_array_index (chart->series, 0);
  double cx, cy, r, inner;
  double total = arc_geometry (c, &cx, &cy, &r, &inner);
  double angle = -G_PI / 2;

  if (total <= 0)
    return;

  for (guint i = 0; i < series->points->len; i++)
    {
      TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
      double sweep = p->y / total * 2 * G_PI;
      double rgba[4];

      tally_chart_palette_color ((guint) p->x, c->style->dark, rgba);
      source (c, rgba);
      cairo_new_path (c->cr);
      if (sweep >= 2 * G_PI - 1e-9)
        {
          /* The only slice: a disc (or ring) with no edge from the centre,
           * which the outline below would draw as a line. */
          cairo_new_sub_path (c->cr);
          cairo_arc (c->cr, cx, cy, r, 0, 2 * G_PI);
          cairo_close_path (c->cr);
          if (inner > 0)
            {
              cairo_new_sub_path (c->cr);
              cairo_arc_negative (c->cr, cx, cy, inner, 2 * G_PI, 0);
            }
        }
      else if (inner > 0)
        {
          cairo_arc (c->cr, cx, cy, r, angle, angle + sweep);
          cairo_arc_negative (c->cr, cx, cy, inner, angle + sweep, angle);
        }
      else
        {
          cairo_move_to (c->cr, cx, cy);
          cairo_arc (c->cr, cx, cy, r, angle, angle + sweep);
        }
      cairo_close_path (c->cr);
      cairo_fill_preserve (c->cr);
      source (c, c->style->background);
      cairo_set_line_width (c->cr, 1.5);
      cairo_stroke (c->cr);

      /* The percentage on the slice, when it fits. */
      if (sweep > 0.3)
        {
          double mid = angle + sweep / 2;
          double rr = inner > 0 ? (r + inner) / 2 : r * 0.62;
          g_autofree char *pct = tally_chart_format_number (p->y / total, ".0%", 0);
          double luminance = 0.2126 * rgba[0] + 0.7152 * rgba[1] + 0.0722 * rgba[2];
          double text[4] = { 0, 0, 0, 1 };

          if (luminance < 0.5)
            text[0] = text[1] = text[2] = 1;
          draw_text (c, pct, cx + cos (mid) * rr, cy + sin (mid) * rr, 0.5, 0.5, TRUE, 1, -1, 0, text);
        }
      angle += sweep;
    }
}

/* The axes of a cartesian chart as laid out for a size: the same for the
 * drawing and for tally_chart_hit_test(). */
typedef struct {
  GArray             *yticks;
  GArray             *xticks;       /* continuous x only */
  TallyChartTimeUnit  unit;
  double              ystep, xstep, ylo, yhi, xlo, xhi;
  double              band;         /* categorical x: the width of a category */
  double              lh, title_h, x_label_h;
  gboolean            rotate;
  guint               thin;
} Axes;

static void
axes_clear (Axes *a)
{
  g_clear_pointer (&a->yticks, g_array_unref);
  g_clear_pointer (&a->xticks, g_array_unref);
}

/* Chooses the ticks and label placement and sets the plot area (@c's
 * left, right and bottom; top is set by the caller). */
static void
layout_cartesian (Ctx  *c,
                  Axes *a)
{
  TallyChart *chart = c->chart;
  double y_label_w = 0, max_xlabel_w = 0;
  double legend_w = legend (c, FALSE);
  guint n_cat = chart->categories->len;
  guint max_yticks;

  memset (a, 0, sizeof *a);
  a->unit = TALLY_CHART_TIME_DAY;
  a->xhi = 1;
  a->thin = 1;
  a->lh = line_height (c);

  /* y ticks for a first guess of the plot height. */
  max_yticks = (guint) CLAMP ((c->height - c->top - 3 * a->lh - PAD) / (a->lh * 2.5), 2, 10);
  a->yticks = tally_chart_nice_ticks (chart->y_min, chart->y_max, max_yticks, &a->ystep);
  a->ylo = g_array_index (a->yticks, double, 0);
  a->yhi = g_array_index (a->yticks, double, a->yticks->len - 1);
  for (guint i = 0; i < a->yticks->len; i++)
    {
      g_autofree char *t = y_label (chart, g_array_index (a->yticks, double, i), a->ystep);
      double w;

      measure (c, t, FALSE, 1, -1, &w, NULL);
      y_label_w = MAX (y_label_w, w);
    }
  if (chart->y_title && *chart->y_title)
    a->title_h = a->lh;

  c->left = PAD + (a->title_h > 0 ? a->title_h + 6 : 0) + y_label_w + 6;
  c->right = c->width - PAD - legend_w;
  if (c->right - c->left < 40)
    c->right = c->left + 40;

  /* x labels: horizontal when they fit, else at 45°, thinned until they
   * no longer overlap. */
  if (chart->x_categorical)
    {
      a->band = (c->right - c->left) / MAX (1, n_cat);
      for (guint i = 0; i < n_cat; i++)
        {
          double w;

          measure (c, g_ptr_array_index (chart->categories, i), FALSE, 1, -1, &w, NULL);
          max_xlabel_w = MAX (max_xlabel_w, w);
        }
      max_xlabel_w = MIN (max_xlabel_w, 140);
      if (max_xlabel_w + 6 <= a->band)
        a->x_label_h = a->lh;
      else
        {
          double spacing = a->lh * 1.1 / sin (G_PI / 4);

          a->rotate = TRUE;
          a->thin = (guint) MAX (1, ceil (spacing / MAX (a->band, 0.01)));
          a->x_label_h = max_xlabel_w * sin (G_PI / 4) + a->lh;
        }
    }
  else
    {
      double span = c->right - c->left;

      a->x_label_h = a->lh;
      if (chart->x_type == TALLY_CHART_FIELD_TEMPORAL)
        {
          a->xlo = chart->x_min;
          a->xhi = chart->x_max > chart->x_min ? chart->x_max : chart->x_min + 86400;
          a->xticks = tally_chart_time_ticks (a->xlo, a->xhi, (guint) MAX (2, span / 60), &a->unit);
        }
      else
        {
          a->xticks = tally_chart_nice_ticks (chart->x_min, chart->x_max, (guint) MAX (2, span / 80), &a->xstep);
          a->xlo = g_array_index (a->xticks, double, 0);
          a->xhi = g_array_index (a->xticks, double, a->xticks->len - 1);
        }
    }

  c->bottom = c->height - PAD - a->x_label_h - 6 - (chart->x_title && *chart->x_title ? a->lh + 4 : 0);
  if (c->bottom - c->top < 30)
    c->bottom = c->top + 30;
}

/* Where a point of a line, area or point mark is drawn. */
static double
point_x (Ctx                   *c,
         const Axes            *a,
         const TallyChartPoint *p)
{
  if (c->chart->x_categorical)
    return c->left + a->band * (p->x + 0.5);
  return map_x_cont (c, a->xlo, a->xhi, p->x);
}

static double
point_y (Ctx                   *c,
         const Axes            *a,
         const TallyChartPoint *p)
{
  return map_y (c, a->ylo, a->yhi, c->chart->stacked ? p->y1 : p->y);
}

/* The rectangle of a bar of series @s: left @x0, width @w, and the ends
 * @ya (base) and @yb (top) in device units. */
static void
bar_rect (Ctx                   *c,
          const Axes            *a,
          guint                  s,
          const TallyChartPoint *p,
          double                *x0,
          double                *w,
          double                *ya,
          double                *yb)
{
  TallyChart *chart = c->chart;
  double inner = a->band * 0.8;

  *x0 = c->left + a->band * p->x + (a->band - inner) / 2;
  *w = inner;
  *ya = map_y (c, a->ylo, a->yhi, chart->stacked ? p->y0 : 0);
  *yb = map_y (c, a->ylo, a->yhi, chart->stacked ? p->y1 : p->y);
  if (chart->grouped)
    {
      *w = inner / chart->series->len;
      *x0 += *w * s;
    }
  *w = MAX (1, *w - (chart->grouped ? 1 : 0));
}

/* The y of a point of a line or area: its top, or with @base the bottom
 * of its area. */
static double
trace_y (Ctx                   *c,
         const Axes            *a,
         const TallyChartPoint *p,
         gboolean               base)
{
  if (base)
    return map_y (c, a->ylo, a->yhi, c->chart->stacked ? p->y0 : 0);
  return point_y (c, a, p);
}

/* Adds the points @group (indices, in the order traced) to the path,
 * each once. */
static void
trace_group (Ctx                   *c,
             const Axes            *a,
             const TallyChartSeries *series,
             gboolean               base,
             const guint            group[4],
             gboolean               reverse)
{
  guint order[4] = { group[0], group[1], group[2], group[3] };

  /* The lowest and highest in the order they come. */
  if (reverse ? order[1] < order[2] : order[1] > order[2])
    {
      guint t = order[1];

      order[1] = order[2];
      order[2] = t;
    }
  for (guint k = 0; k < 4; k++)
    {
      const TallyChartPoint *p;

      if (k > 0 && order[k] == order[k - 1])
        continue;
      if (k == 3 && (order[3] == order[1] || order[3] == order[0]))
        continue;
      p = &g_array_index (series->points, TallyChartPoint, order[k]);
      cairo_line_to (c->cr, point_x (c, a, p), trace_y (c, a, p, base));
    }
}

/* Adds the line through the points of @series to the current path,
 * forwards or (@reverse) backwards. Where many points fall in one device
 * pixel column (5,000 days on 700 pixels), only the first, lowest,
 * highest and last of the column are kept: the stroke looks the same and
 * costs a fraction. */
static void
trace_series (Ctx                    *c,
              const Axes             *a,
              const TallyChartSeries *series,
              gboolean                base,
              gboolean                reverse)
{
  guint n = series->points->len;
  guint group[4] = { 0 };
  double lo = 0, hi = 0, column = 0, scale_x = 1, scale_y = 0;
  gboolean open = FALSE;

  /* Columns of device pixels, whatever the scale of the context. */
  cairo_user_to_device_distance (c->cr, &scale_x, &scale_y);
  scale_x = MAX (fabs (scale_x), 1e-6);

  for (guint k = 0; k < n; k++)
    {
      guint i = reverse ? n - 1 - k : k;
      const TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
      double x = floor (point_x (c, a, p) * scale_x), y = trace_y (c, a, p, base);

      if (open && x == column)
        {
          if (y < lo)
            {
              lo = y;
              group[1] = i;
            }
          if (y > hi)
            {
              hi = y;
              group[2] = i;
            }
          group[3] = i;
          continue;
        }
      if (open)
        trace_group (c, a, series, base, group, reverse);
      open = TRUE;
      column = x;
      lo = hi = y;
      group[0] = group[1] = group[2] = group[3] = i;
    }
  if (open)
    trace_group (c, a, series, base, group, reverse);
}

/* Strokes the line of @series (2 units wide, round joins), or, when it
 * has more than two points per device pixel column, fills the band it
 * covers instead: the lowest and highest y of each column, widened by
 * half the line width. A dense zigzag stroked looks like that band, and
 * Cairo strokes 5,000 overlapping segments some thirty times slower than
 * it fills the band. */
static void
draw_series_line (Ctx                    *c,
                  const Axes             *a,
                  const TallyChartSeries *series)
{
  double scale_x = 1, scale_y = 0, half = 1.0;
  guint n = series->points->len;
  guint n_columns;
  g_autofree double *lo = NULL;
  g_autofree double *hi = NULL;
  double prev_y = 0;
  int prev_col = -1;

  cairo_user_to_device_distance (c->cr, &scale_x, &scale_y);
  scale_x = MAX (fabs (scale_x), 1e-6);
  n_columns = (guint) MAX (1, ceil ((c->right - c->left) * scale_x)) + 1;

  cairo_new_path (c->cr);
  if (n <= 2 * n_columns)
    {
      trace_series (c, a, series, FALSE, FALSE);
      cairo_set_line_width (c->cr, 2 * half);
      cairo_set_line_join (c->cr, CAIRO_LINE_JOIN_ROUND);
      cairo_stroke (c->cr);
      return;
    }

  lo = g_new (double, n_columns);
  hi = g_new (double, n_columns);
  for (guint i = 0; i < n_columns; i++)
    lo[i] = hi[i] = NAN;
  for (guint i = 0; i < n; i++)
    {
      const TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
      double y = point_y (c, a, p);
      int col = (int) CLAMP (floor ((point_x (c, a, p) - c->left) * scale_x), 0, n_columns - 1);

      /* The segment from the previous point crosses the columns between. */
      for (int k = prev_col < 0 ? col : MIN (prev_col + 1, col); k <= col; k++)
        {
          double t = col > prev_col && prev_col >= 0 ? (double) (k - prev_col) / (col - prev_col) : 1;
          double v = prev_col >= 0 ? prev_y + (y - prev_y) * t : y;

          lo[k] = isnan (lo[k]) ? MIN (v, prev_col >= 0 ? prev_y : v) : MIN (lo[k], v);
          hi[k] = isnan (hi[k]) ? MAX (v, prev_col >= 0 ? prev_y : v) : MAX (hi[k], v);
        }
      prev_y = y;
      prev_col = col;
    }

  for (guint k = 0; k < n_columns; k++)
    if (!isnan (lo[k]))
      cairo_line_to (c->cr, c->left + (k + 0.5) / scale_x, lo[k] - half);
  for (guint k = n_columns; k > 0; k--)
    if (!isnan (hi[k - 1]))
      cairo_line_to (c->cr, c->left + (k - 0.5) / scale_x, hi[k - 1] + half);
  cairo_close_path (c->cr);
  cairo_fill (c->cr);
}

static void
draw_cartesian (Ctx *c)
{
  TallyChart *chart = c->chart;
  cairo_t *cr = c->cr;
  Axes a;
  guint n_cat = chart->categories->len;

  layout_cartesian (c, &a);

  /* Grid and y axis labels. */
  cairo_set_line_width (cr, 1);
  for (guint i = 0; i < a.yticks->len; i++)
    {
      double v = g_array_index (a.yticks, double, i);
      double y = round (map_y (c, a.ylo, a.yhi, v)) + 0.5;
      g_autofree char *t = y_label (chart, v, a.ystep);

      source (c, c->style->grid);
      cairo_move_to (cr, c->left, y);
      cairo_line_to (cr, c->right, y);
      cairo_stroke (cr);
      draw_text (c, t, c->left - 6, y, 1, 0.5, FALSE, 1, -1, 0, c->style->muted);
    }
  if (a.title_h > 0)
    draw_text (c, chart->y_title, PAD, (c->top + c->bottom) / 2, 0.5, 0, TRUE, 1,
               c->bottom - c->top, -G_PI / 2, c->style->foreground);

  /* x axis labels. */
  if (chart->x_categorical)
    {
      for (guint i = 0; i < n_cat; i += a.thin)
        {
          double x = c->left + a.band * (i + 0.5);
          const char *label = g_ptr_array_index (chart->categories, i);

          source (c, c->style->foreground);
          cairo_move_to (cr, round (x) + 0.5, c->bottom);
          cairo_line_to (cr, round (x) + 0.5, c->bottom + 4);
          cairo_stroke (cr);
          if (a.rotate)
            draw_text (c, label, x + a.lh * 0.3, c->bottom + 6, 1, 0, FALSE, 1, 140, -G_PI / 4, c->style->muted);
          else
            draw_text (c, label, x, c->bottom + 6, 0.5, 0, FALSE, 1, a.band, 0, c->style->muted);
        }
    }
  else
    {
      double last_right = -G_MAXDOUBLE;

      for (guint i = 0; i < a.xticks->len; i++)
        {
          double v = g_array_index (a.xticks, double, i);
          double x = round (map_x_cont (c, a.xlo, a.xhi, v)) + 0.5;
          g_autofree char *t = NULL;
          double w;

          /* Months name the year only on the first tick and in January. */
          if (chart->x_type == TALLY_CHART_FIELD_TEMPORAL && chart->x_format == NULL
              && a.unit == TALLY_CHART_TIME_MONTH && i > 0)
            {
              g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc ((gint64) v);

              t = tally_chart_format_time (v, a.unit, dt && g_date_time_get_month (dt) == 1 ? "%b %Y" : "%b");
            }
          else if (chart->x_type == TALLY_CHART_FIELD_TEMPORAL)
            t = tally_chart_format_time (v, a.unit, chart->x_format);
          else
            t = tally_chart_format_number (v, chart->x_format, chart->x_format ? 0 : a.xstep);
          source (c, c->style->grid);
          cairo_move_to (cr, x, c->top);
          cairo_line_to (cr, x, c->bottom);
          cairo_stroke (cr);
          measure (c, t, FALSE, 1, -1, &w, NULL);
          if (x - w / 2 < last_right + 8 || x + w / 2 > c->width)
            continue;
          draw_text (c, t, x, c->bottom + 6, 0.5, 0, FALSE, 1, -1, 0, c->style->muted);
          last_right = x + w / 2;
        }
    }
  if (chart->x_title && *chart->x_title)
    draw_text (c, chart->x_title, (c->left + c->right) / 2, c->height - PAD, 0.5, 1, TRUE, 1,
               c->right - c->left, 0, c->style->foreground);

  /* Baseline. */
  source (c, c->style->foreground);
  {
    double y0 = round (map_y (c, a.ylo, a.yhi, MAX (a.ylo, MIN (0, a.yhi)))) + 0.5;

    cairo_move_to (cr, c->left, y0);
    cairo_line_to (cr, c->right, y0);
    cairo_stroke (cr);
  }

  /* The marks, clipped to the plot. */
  cairo_save (cr);
  cairo_rectangle (cr, c->left - 4, c->top - 4, c->right - c->left + 8, c->bottom - c->top + 8);
  cairo_clip (cr);
  for (guint s = 0; s < chart->series->len; s++)
    {
      TallyChartSeries *series = g_ptr_array_index (chart->series, s);
      double rgba[4];
      gboolean markers;

      tally_chart_palette_color (s, c->style->dark, rgba);

      switch (chart->mark)
        {
        case TALLY_CHART_MARK_BAR:
          for (guint i = 0; i < series->points->len; i++)
            {
              TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
              double x0, w, ya, yb;

              bar_rect (c, &a, s, p, &x0, &w, &ya, &yb);
              source (c, rgba);
              cairo_rectangle (cr, x0, MIN (ya, yb), w, fabs (ya - yb));
              cairo_fill (cr);
              /* A hairline between stacked segments, not above the top one. */
              if (chart->stacked && p->y0 != 0 && w > 4 && fabs (ya - yb) > 2)
                {
                  source (c, c->style->background);
                  cairo_set_line_width (cr, 1);
                  cairo_move_to (cr, x0, round (ya) - 0.5);
                  cairo_line_to (cr, x0 + w, round (ya) - 0.5);
                  cairo_stroke (cr);
                }
            }
          break;

        case TALLY_CHART_MARK_AREA:
          if (series->points->len > 0)
            {
              cairo_new_path (cr);
              trace_series (c, &a, series, FALSE, FALSE);
              trace_series (c, &a, series, TRUE, TRUE);
              cairo_close_path (cr);
              cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], chart->stacked ? 0.85 : 0.55);
              cairo_fill (cr);
            }
          G_GNUC_FALLTHROUGH;

        case TALLY_CHART_MARK_LINE:
          markers = tally_chart_spec_get_show_points (chart->spec)
                    || (chart->mark == TALLY_CHART_MARK_LINE && series->points->len <= 1);
          source (c, rgba);
          draw_series_line (c, &a, series);
          if (markers)
            for (guint i = 0; i < series->points->len; i++)
              {
                TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);

                cairo_new_path (cr);
                cairo_arc (cr, point_x (c, &a, p), point_y (c, &a, p), 3, 0, 2 * G_PI);
                cairo_fill (cr);
              }
          break;

        case TALLY_CHART_MARK_POINT:
          for (guint i = 0; i < series->points->len; i++)
            {
              TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);

              cairo_new_path (cr);
              cairo_arc (cr, point_x (c, &a, p), point_y (c, &a, p), 3.5, 0, 2 * G_PI);
              cairo_set_source_rgba (cr, rgba[0], rgba[1], rgba[2], 0.35);
              cairo_fill_preserve (cr);
              source (c, rgba);
              cairo_set_line_width (cr, 1.5);
              cairo_stroke (cr);
            }
          break;

        case TALLY_CHART_MARK_ARC:
        default:
          break;
        }
    }
  cairo_restore (cr);

  legend (c, TRUE);
  axes_clear (&a);
}

/* Sets up @c to lay out @chart at @width × @height on @cr: the fonts, a
 * PangoLayout without hinting, and the top of the plot under the title.
 * Free with ctx_end(). */
static void
ctx_begin (Ctx                   *c,
           TallyChart            *chart,
           cairo_t               *cr,
           double                 width,
           double                 height,
           const TallyChartStyle *style)
{
  cairo_font_options_t *options;
  double title_h;

  memset (c, 0, sizeof *c);
  c->chart = chart;
  c->cr = cr;
  c->style = style;
  c->width = width;
  c->height = height;
  c->layout = pango_cairo_create_layout (cr);
  c->font = pango_font_description_new ();
  pango_font_description_set_family (c->font, style->font_family ? style->font_family : "Sans");
  c->bold = pango_font_description_copy (c->font);
  pango_font_description_set_weight (c->bold, PANGO_WEIGHT_BOLD);

  /* No hinting: the same layout at every scale and in every format. */
  options = cairo_font_options_create ();
  cairo_font_options_set_hint_style (options, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics (options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias (options, CAIRO_ANTIALIAS_GRAY);
  pango_cairo_context_set_font_options (pango_layout_get_context (c->layout), options);
  pango_layout_context_changed (c->layout);
  cairo_font_options_destroy (options);

  measure (c, tally_chart_spec_get_title (chart->spec), TRUE, 1.3, width - 2 * PAD, NULL, &title_h);
  c->top = PAD + title_h + 10;
}

static void
ctx_end (Ctx *c)
{
  pango_font_description_free (c->font);
  pango_font_description_free (c->bold);
  g_object_unref (c->layout);
}

/* An arc's plot area: what the legend leaves. */
static void
layout_arc (Ctx *c)
{
  double legend_w = legend (c, FALSE);

  c->left = PAD;
  c->right = MAX (PAD + 20, c->width - PAD - legend_w - PAD);
  c->bottom = c->height - PAD;
}

/**
 * tally_chart_render:
 * @chart: a #TallyChart
 * @cr: the Cairo context to draw on, its origin at the chart's top left
 * @width: the width in device units (pixels at scale 1, points for PDF)
 * @height: the height in device units
 * @style: (nullable): the style, or %NULL for tally_chart_style_init()'s
 *   light one
 *
 * Draws the chart (docs/charts.md §6): its title, axes, grid, marks and
 * legend, or "No data" when nothing is plotted. The same function draws
 * the widget and the PNG, SVG and PDF files. The state of @cr is saved and
 * restored.
 */
void
tally_chart_render (TallyChart            *chart,
                    cairo_t               *cr,
                    double                 width,
                    double                 height,
                    const TallyChartStyle *style)
{
  TallyChartStyle fallback;
  Ctx c;

  g_return_if_fail (TALLY_IS_CHART (chart));
  g_return_if_fail (cr != NULL);

  if (style == NULL)
    {
      tally_chart_style_init (&fallback, FALSE);
      style = &fallback;
    }

  cairo_save (cr);
  ctx_begin (&c, chart, cr, width, height, style);

  if (style->fill_background)
    {
      source (&c, style->background);
      cairo_paint (cr);
    }

  draw_text (&c, tally_chart_spec_get_title (chart->spec), PAD, PAD, 0, 0, TRUE, 1.3,
             width - 2 * PAD, 0, style->foreground);

  if (tally_chart_is_empty (chart))
    draw_no_data (&c);
  else if (chart->mark == TALLY_CHART_MARK_ARC)
    {
      layout_arc (&c);
      draw_arc (&c);
      legend (&c, TRUE);
    }
  else
    draw_cartesian (&c);

  ctx_end (&c);
  cairo_restore (cr);
}

/* What the tooltip of a mark says: the series (when there are several),
 * then x and y, each after its axis title and in the axis's format (a
 * value on its own gets up to two decimals; a time is named as precisely
 * as the series' times need, as temporal categories are). */
static char *
dup_mark_label (TallyChart            *chart,
                guint                  s,
                const TallyChartPoint *p)
{
  GString *out = g_string_new (NULL);
  g_autofree char *x = NULL;
  g_autofree char *y = NULL;

  if (chart->x_categorical)
    x = g_strdup (g_ptr_array_index (chart->categories, (guint) p->x));
  else if (chart->x_type == TALLY_CHART_FIELD_TEMPORAL)
    {
      /* Named as precisely as the series' times need. */
      TallyChartSeries *series = g_ptr_array_index (chart->series, s);
      g_autofree double *times = g_new (double, MAX (1, series->points->len));

      for (guint i = 0; i < series->points->len; i++)
        times[i] = g_array_index (series->points, TallyChartPoint, i).x;
      x = tally_chart_format_time_label (p->x, tally_chart_time_unit_of (times, series->points->len),
                                         chart->x_format);
    }
  else
    x = tally_chart_format_number (p->x, chart->x_format, 0);
  y = tally_chart_format_number (p->y, chart->normalized ? ".1%" : chart->y_format, 0);

  if (chart->has_series)
    g_string_append_printf (out, "%s\n", ((TallyChartSeries *) g_ptr_array_index (chart->series, s))->name);
  if (chart->x_title && *chart->x_title)
    g_string_append_printf (out, "%s: ", chart->x_title);
  g_string_append_printf (out, "%s\n", x);
  if (chart->y_title && *chart->y_title)
    g_string_append_printf (out, "%s: ", chart->y_title);
  g_string_append (out, y);
  return g_string_free (out, FALSE);
}

/* Within this distance of a point of a line, area or point mark, in
 * device units, the pointer is on it. */
#define HIT_RADIUS 10.0

static char *
hit_cartesian (Ctx    *c,
               double  x,
               double  y)
{
  TallyChart *chart = c->chart;
  Axes a;
  const TallyChartPoint *best = NULL;
  guint best_series = 0;
  double best_d = HIT_RADIUS * HIT_RADIUS;
  char *label = NULL;

  layout_cartesian (c, &a);
  if (x >= c->left - HIT_RADIUS && x <= c->right + HIT_RADIUS &&
      y >= c->top - HIT_RADIUS && y <= c->bottom + HIT_RADIUS)
    for (guint s = 0; s < chart->series->len; s++)
      {
        TallyChartSeries *series = g_ptr_array_index (chart->series, s);

        for (guint i = 0; i < series->points->len; i++)
          {
            const TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);

            if (chart->mark == TALLY_CHART_MARK_BAR)
              {
                double x0, w, ya, yb, top, bottom;

                bar_rect (c, &a, s, p, &x0, &w, &ya, &yb);
                /* A short bar is still easy to point at. */
                top = MIN (ya, yb);
                bottom = MAX (ya, yb);
                if (bottom - top < 4)
                  {
                    top = (top + bottom) / 2 - 2;
                    bottom = top + 4;
                  }
                if (x >= x0 && x <= x0 + w && y >= top && y <= bottom)
                  {
                    best = p;
                    best_series = s;
                  }
              }
            else
              {
                double dx = point_x (c, &a, p) - x, dy = point_y (c, &a, p) - y;

                if (dx * dx + dy * dy <= best_d)
                  {
                    best_d = dx * dx + dy * dy;
                    best = p;
                    best_series = s;
                  }
              }
          }
      }

  if (best != NULL)
    label = dup_mark_label (chart, best_series, best);
  axes_clear (&a);
  return label;
}

static char *
hit_arc (Ctx    *c,
         double  x,
         double  y)
{
  TallyChart *chart = c->chart;
  TallyChartSeries *series = g_ptr_array_index (chart->series, 0);
  double cx, cy, r, inner, angle = -G_PI / 2, at, d;
  double total;

  layout_arc (c);
  total = arc_geometry (c, &cx, &cy, &r, &inner);
  d = hypot (x - cx, y - cy);
  if (total <= 0 || d > r || d < inner)
    return NULL;

  /* The pointer's angle, clockwise from 12 o'clock as the slices go. */
  at = atan2 (y - cy, x - cx);
  while (at < angle)
    at += 2 * G_PI;
  for (guint i = 0; i < series->points->len; i++)
    {
      const TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
      double sweep = p->y / total * 2 * G_PI;

      if (at <= angle + sweep)
        {
          g_autofree char *value = tally_chart_format_number (p->y, chart->y_format, 0);
          g_autofree char *pct = tally_chart_format_number (p->y / total, ".1%", 0);

          return g_strdup_printf ("%s\n%s (%s)", (const char *) g_ptr_array_index (chart->categories, (guint) p->x),
                                  value, pct);
        }
      angle += sweep;
    }
  return NULL;
}

/**
 * tally_chart_hit_test:
 * @chart: a #TallyChart
 * @width: the width the chart is drawn at, in device units
 * @height: the height it is drawn at, in device units
 * @x: the pointer's x, in device units from the chart's left edge
 * @y: the pointer's y, in device units from the chart's top edge
 * @style: (nullable): the style it is drawn with (its font and size
 *   decide the layout), or %NULL for tally_chart_style_init()'s
 *
 * Finds the mark under (@x, @y) with the layout tally_chart_render() uses
 * for the same size and style: the bar that contains the point, the
 * point of a line, area or point mark within 10 device units (the
 * nearest one), or the slice of an arc.
 *
 * Returns: (transfer full) (nullable): what the mark shows, in lines: the
 *   series (when the chart has several), then the x value and the y
 *   value, each after its axis title when the axis has one and formatted
 *   as on the axis, e.g. "Latte\nmonth: Mar 2024\nrevenue: 1,234.5"; for
 *   a slice its category, value and share, e.g. "North\n120 (40%)";
 *   %NULL when no mark is there
 */
char *
tally_chart_hit_test (TallyChart            *chart,
                      double                 width,
                      double                 height,
                      double                 x,
                      double                 y,
                      const TallyChartStyle *style)
{
  TallyChartStyle fallback;
  cairo_surface_t *surface;
  cairo_t *cr;
  Ctx c;
  char *label = NULL;

  g_return_val_if_fail (TALLY_IS_CHART (chart), NULL);

  if (tally_chart_is_empty (chart) || width <= 0 || height <= 0)
    return NULL;
  if (style == NULL)
    {
      tally_chart_style_init (&fallback, FALSE);
      style = &fallback;
    }

  /* Text is measured on a Cairo context, as when drawing. */
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  ctx_begin (&c, chart, cr, width, height, style);
  if (chart->mark == TALLY_CHART_MARK_ARC)
    label = hit_arc (&c, x, y);
  else
    label = hit_cartesian (&c, x, y);
  ctx_end (&c);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  return label;
}

/* Turns a Cairo status after writing @path into a TALLY_CHART_ERROR_WRITE */
static gboolean
check_status (cairo_status_t   status,
              const char      *path,
              GError         **error)
{
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_WRITE,
                   "cannot write %s: %s", path, cairo_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

/* Draws @chart onto a one-page vector document, SVG or PDF (@pdf),
 * writing @path. */
static gboolean
write_vector (TallyChart  *chart,
              const char  *path,
              gboolean     pdf,
              double       width,
              double       height,
              gboolean     dark,
              GError     **error)
{
  TallyChartStyle style;
  cairo_surface_t *surface;
  cairo_t *cr;
  gboolean ok = FALSE;

  g_return_val_if_fail (TALLY_IS_CHART (chart), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  surface = pdf ? cairo_pdf_surface_create (path, width, height) : cairo_svg_surface_create (path, width, height);
  if (check_status (cairo_surface_status (surface), path, error))
    {
      tally_chart_style_init (&style, dark);
      cr = cairo_create (surface);
      tally_chart_render (chart, cr, width, height, &style);
      if (pdf)
        cairo_show_page (cr);
      cairo_destroy (cr);
      cairo_surface_finish (surface);
      ok = check_status (cairo_surface_status (surface), path, error);
    }
  cairo_surface_destroy (surface);
  return ok;
}

/**
 * tally_chart_write_png:
 * @chart: a #TallyChart
 * @path: the file to write (replaced if it exists)
 * @width: the width in pixels
 * @height: the height in pixels
 * @dark: whether to use the dark style
 * @error: return location for a %TALLY_CHART_ERROR_WRITE error
 *
 * Draws @chart with tally_chart_render() into a PNG of @width × @height
 * pixels.
 *
 * Returns: %TRUE when the file was written
 */
gboolean
tally_chart_write_png (TallyChart  *chart,
                       const char  *path,
                       int          width,
                       int          height,
                       gboolean     dark,
                       GError     **error)
{
  cairo_surface_t *surface;
  cairo_t *cr;
  TallyChartStyle style;
  cairo_status_t status;

  g_return_val_if_fail (TALLY_IS_CHART (chart), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (width > 0 && height > 0, FALSE);

  tally_chart_style_init (&style, dark);
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  tally_chart_render (chart, cr, width, height, &style);
  cairo_destroy (cr);
  status = cairo_surface_write_to_png (surface, path);
  cairo_surface_destroy (surface);
  return check_status (status, path, error);
}

/**
 * tally_chart_write_svg:
 * @chart: a #TallyChart
 * @path: the file to write (replaced if it exists)
 * @width: the width in points
 * @height: the height in points
 * @dark: whether to use the dark style
 * @error: return location for a %TALLY_CHART_ERROR_WRITE error
 *
 * Draws @chart with tally_chart_render() into an SVG document (vectors,
 * text as glyph outlines as Cairo writes it).
 *
 * Returns: %TRUE when the file was written
 */
gboolean
tally_chart_write_svg (TallyChart  *chart,
                       const char  *path,
                       double       width,
                       double       height,
                       gboolean     dark,
                       GError     **error)
{
  return write_vector (chart, path, FALSE, width, height, dark, error);
}

/**
 * tally_chart_write_pdf:
 * @chart: a #TallyChart
 * @path: the file to write (replaced if it exists)
 * @width: the page width in points
 * @height: the page height in points
 * @dark: whether to use the dark style
 * @error: return location for a %TALLY_CHART_ERROR_WRITE error
 *
 * Draws @chart with tally_chart_render() onto a one-page PDF of that size
 * (vectors, real text that pdftotext extracts).
 *
 * Returns: %TRUE when the file was written
 */
gboolean
tally_chart_write_pdf (TallyChart  *chart,
                       const char  *path,
                       double       width,
                       double       height,
                       gboolean     dark,
                       GError     **error)
{
  return write_vector (chart, path, TRUE, width, height, dark, error);
}
