/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "bench-chart"

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <adwaita.h>
#include <cairo.h>
#include <gtk/gtk.h>
#include <json-glib/json-glib.h>

#include "tally-chart-render.h"
#include "tally-chart.h"
#include "tally-transcript-view.h"
#include "tally-transcript.h"
#include "tally-ui.h"

/*
 * Charts in the transcript (issue 12, benchmarks): a 5,000-point line
 * chart and a 50-bar chart.
 *
 * 1. Draw time per chart: tally_chart_render() of each onto a 760 × 418
 *    image surface (the transcript's usual size), and
 *    tally_chart_hit_test() (what a tooltip costs), medians of 25 runs.
 * 2. Scrolling: a transcript of 12 turns, each with one of the charts (or,
 *    as the baseline, 96 turns of the same text and no chart), in a mapped
 *    840 × 800 window. A tick callback moves the view's vertical
 *    adjustment by 60 px a frame, down to the end and back up, for 300
 *    frames. Per frame: the work (from the frame clock's "update" to its
 *    "after-paint", where layout and paint happen) and the interval
 *    between the frame clock's frame times; median and 95th percentile.
 *
 * Needs a display: run it under xvfb-run. It prints figures and asserts
 * nothing about speed.
 */

#define N_TURNS       12
#define N_FRAMES      300
#define SCROLL_STEP   60.0
#define DRAW_RUNS     25
#define DRAW_W        760
#define DRAW_H        418

typedef enum {
  SCENE_TEXT,
  SCENE_LINE,
  SCENE_BARS,
} Scene;

static const char * const scene_names[] = { "text only (baseline)", "5,000-point line chart", "50-bar chart" };

/* Specs */

static char *
line_spec (void)
{
  GString *spec = g_string_new ("{\"title\":\"Daily sessions, 5,000 days\",\"mark\":\"line\","
                                "\"encoding\":{\"x\":{\"field\":\"day\",\"type\":\"quantitative\",\"title\":\"Day\"},"
                                "\"y\":{\"field\":\"sessions\",\"type\":\"quantitative\",\"title\":\"Sessions\"}},"
                                "\"data\":{\"values\":[");
  g_autoptr(GRand) rand = g_rand_new_with_seed (12);

  for (guint i = 0; i < 5000; i++)
    g_string_append_printf (spec, "%s{\"day\":%u,\"sessions\":%.1f}", i > 0 ? "," : "", i,
                            1000 + 400 * sin (i / 180.0) + g_rand_double_range (rand, -120, 120));
  g_string_append (spec, "]}}");
  return g_string_free (spec, FALSE);
}

static char *
bars_spec (void)
{
  GString *spec = g_string_new ("{\"title\":\"Revenue by month, 50 months\",\"mark\":\"bar\","
                                "\"encoding\":{\"x\":{\"field\":\"month\",\"type\":\"temporal\",\"title\":\"Month\"},"
                                "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\",\"format\":\"$,.0f\"}},"
                                "\"data\":{\"values\":[");

  for (guint i = 0; i < 50; i++)
    g_string_append_printf (spec, "%s{\"month\":\"%04u-%02u\",\"revenue\":%u}", i > 0 ? "," : "",
                            2020 + i / 12, 1 + i % 12, 30000 + (i * 7919) % 20000);
  g_string_append (spec, "]}}");
  return g_string_free (spec, FALSE);
}

static TallyChart *
chart_from (const char *spec)
{
  g_autoptr(JsonNode) node = json_from_string (spec, NULL);
  g_autoptr(GError) error = NULL;
  TallyChart *chart = tally_chart_new_from_json (json_node_get_object (node), &error);

  g_assert_no_error (error);
  return chart;
}

/* Medians */

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
percentile (GArray *values,
            double  p)
{
  if (values->len == 0)
    return 0;
  g_array_sort (values, compare_double);
  return g_array_index (values, double, MIN (values->len - 1, (guint) (p * values->len)));
}

/* 1. Draw time */

static void
bench_draw (const char *name,
            const char *spec)
{
  g_autoptr(TallyChart) chart = chart_from (spec);
  g_autoptr(GArray) draw = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) hit = g_array_new (FALSE, FALSE, sizeof (double));
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, DRAW_W, DRAW_H);

  for (guint i = 0; i < DRAW_RUNS; i++)
    {
      cairo_t *cr = cairo_create (surface);
      gint64 start = g_get_monotonic_time ();
      double ms;
      g_autofree char *label = NULL;

      tally_chart_render (chart, cr, DRAW_W, DRAW_H, NULL);
      cairo_surface_flush (surface);
      ms = (g_get_monotonic_time () - start) / 1000.0;
      g_array_append_val (draw, ms);
      cairo_destroy (cr);

      start = g_get_monotonic_time ();
      label = tally_chart_hit_test (chart, DRAW_W, DRAW_H, DRAW_W / 2.0, DRAW_H * 0.6, NULL);
      ms = (g_get_monotonic_time () - start) / 1000.0;
      g_array_append_val (hit, ms);
    }
  cairo_surface_destroy (surface);

  printf ("  %-26s draw %7.2f ms   hit test %6.2f ms   (medians of %u, %d x %d)\n",
          name, percentile (draw, 0.5), percentile (hit, 0.5), DRAW_RUNS, DRAW_W, DRAW_H);
}

/* 2. Scrolling */

static void G_GNUC_PRINTF (2, 3)
applyf (TallyTranscript *transcript,
        const char      *format,
        ...)
{
  g_autofree char *json = NULL;
  g_autoptr(JsonNode) node = NULL;
  va_list args;

  va_start (args, format);
  json = g_strdup_vprintf (format, args);
  va_end (args);

  node = json_from_string (json, NULL);
  g_assert_nonnull (node);
  tally_transcript_apply (transcript, json_node_get_object (node));
}

static void
add_turn (TallyTranscript *transcript,
          guint            n,
          const char      *spec)
{
  applyf (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"c%u\",\"mode\":\"ask\","
                      "\"text\":\"How did it go? Chart it.\"}", n);
  if (spec != NULL)
    {
      applyf (transcript, "{\"type\":\"tool_use_start\",\"turn_id\":\"c%u\",\"tool_id\":\"ct%u\","
                          "\"tool_name\":\"create_chart\",\"tool_input\":{\"title\":\"t\"}}", n, n);
      applyf (transcript, "{\"type\":\"tool_result\",\"turn_id\":\"c%u\",\"tool_id\":\"ct%u\","
                          "\"content\":\"Drew it.\",\"is_error\":false,\"duration_ms\":31}", n, n);
      applyf (transcript, "{\"type\":\"chart_created\",\"turn_id\":\"c%u\",\"chart_id\":\"chart%u\",\"tool_id\":\"ct%u\","
                          "\"title\":\"Chart %u\",\"spec\":%s,\"files\":[],\"rows\":5000}", n, n, n, n, spec);
    }
  applyf (transcript, "{\"type\":\"text_delta\",\"turn_id\":\"c%u\",\"call\":1,\"block\":0,"
                      "\"text\":\"The trend rises through the first half and settles after; the peak is "
                      "about a fifth above the mean, and the last quarter is the steadiest.\"}", n);
  applyf (transcript, "{\"type\":\"block_done\",\"turn_id\":\"c%u\",\"call\":1,\"block\":0,\"kind\":\"text\"}", n);
  applyf (transcript, "{\"type\":\"turn_finished\",\"turn_id\":\"c%u\",\"status\":\"done\",\"cost_usd\":0.01,"
                      "\"duration_ms\":5200,\"api_calls\":2,\"usage\":{\"input_tokens\":4100,\"output_tokens\":260}}", n);
}

typedef struct {
  GtkAdjustment *adjustment;
  double         direction;
  guint          frames;
  gint64         update_start;
  gint64         last_frame_time;
  GArray        *work;      /* double, ms */
  GArray        *interval;  /* double, ms */
} Scroll;

static gboolean
scroll_tick_cb (GtkWidget     *widget,
                GdkFrameClock *clock,
                gpointer       user_data)
{
  Scroll *scroll = user_data;
  double value = gtk_adjustment_get_value (scroll->adjustment);
  double end = gtk_adjustment_get_upper (scroll->adjustment) - gtk_adjustment_get_page_size (scroll->adjustment);

  if ((scroll->direction > 0 && value >= end) || (scroll->direction < 0 && value <= 0))
    scroll->direction = -scroll->direction;
  gtk_adjustment_set_value (scroll->adjustment, CLAMP (value + scroll->direction * SCROLL_STEP, 0, end));
  scroll->frames++;
  return scroll->frames < N_FRAMES ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
update_cb (GdkFrameClock *clock,
           Scroll        *scroll)
{
  scroll->update_start = g_get_monotonic_time ();
}

static void
after_paint_cb (GdkFrameClock *clock,
                Scroll        *scroll)
{
  gint64 frame_time = gdk_frame_clock_get_frame_time (clock);

  if (scroll->update_start != 0)
    {
      double ms = (g_get_monotonic_time () - scroll->update_start) / 1000.0;

      g_array_append_val (scroll->work, ms);
    }
  if (scroll->last_frame_time != 0)
    {
      double ms = (frame_time - scroll->last_frame_time) / 1000.0;

      g_array_append_val (scroll->interval, ms);
    }
  scroll->last_frame_time = frame_time;
  scroll->update_start = 0;
}

static GtkWidget *
find_scroller (GtkWidget *widget)
{
  if (GTK_IS_SCROLLED_WINDOW (widget))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_scroller (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
settle (guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < end)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (1000);
    }
}

static void
bench_scroll (Scene       scene,
              const char *spec)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  Scroll scroll = { 0 };
  GdkFrameClock *clock;
  gulong update_id, paint_id;
  gint64 start;

  /* The baseline has eight times the turns, for about as much to scroll. */
  for (guint i = 0; i < (scene == SCENE_TEXT ? 8 * N_TURNS : N_TURNS); i++)
    add_turn (transcript, i + 1, scene == SCENE_TEXT ? NULL : spec);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  gtk_window_set_default_size (window, 840, 800);
  gtk_window_set_child (window, view);
  gtk_window_present (window);
  settle (800);

  scroll.adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (find_scroller (view)));
  scroll.direction = -1;  /* the view opens at the end */
  scroll.work = g_array_new (FALSE, FALSE, sizeof (double));
  scroll.interval = g_array_new (FALSE, FALSE, sizeof (double));
  clock = gtk_widget_get_frame_clock (view);
  update_id = g_signal_connect (clock, "update", G_CALLBACK (update_cb), &scroll);
  paint_id = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &scroll);

  start = g_get_monotonic_time ();
  gtk_widget_add_tick_callback (view, scroll_tick_cb, &scroll, NULL);
  while (scroll.frames < N_FRAMES && g_get_monotonic_time () - start < 120 * G_USEC_PER_SEC)
    g_main_context_iteration (NULL, TRUE);

  g_signal_handler_disconnect (clock, update_id);
  g_signal_handler_disconnect (clock, paint_id);

  printf ("  %-26s work/frame median %6.2f ms  p95 %6.2f ms   frame interval median %6.2f ms  p95 %6.2f ms"
          "   (%u frames, %.0f px scrolled range)\n",
          scene_names[scene], percentile (scroll.work, 0.5), percentile (scroll.work, 0.95),
          percentile (scroll.interval, 0.5), percentile (scroll.interval, 0.95), scroll.work->len,
          gtk_adjustment_get_upper (scroll.adjustment) - gtk_adjustment_get_page_size (scroll.adjustment));

  g_array_unref (scroll.work);
  g_array_unref (scroll.interval);
  gtk_window_destroy (window);
  settle (100);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *line = NULL;
  g_autofree char *bars = NULL;

  gtk_init ();
  adw_init ();
  tally_ui_init ();

  line = line_spec ();
  bars = bars_spec ();

  printf ("Chart draw time (tally_chart_render onto an image surface):\n");
  bench_draw (scene_names[SCENE_LINE], line);
  bench_draw (scene_names[SCENE_BARS], bars);

  printf ("Scrolling a transcript of %u chart turns, %.0f px a frame, renderer %s:\n", N_TURNS, SCROLL_STEP,
          g_getenv ("GSK_RENDERER") != NULL ? g_getenv ("GSK_RENDERER") : "default");
  bench_scroll (SCENE_TEXT, NULL);
  bench_scroll (SCENE_LINE, line);
  bench_scroll (SCENE_BARS, bars);

  return 0;
}
