/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "bench-markdown"

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-markdown-view-private.h"

/*
 * Streams ~40 KB of markdown (headings, paragraphs, lists, 20 code fences,
 * a 30-row table) as 5,000 deltas into a TallyMarkdownView inside a mapped
 * window, and the same deltas into a bare GtkTextView (plain insert at the
 * end) as the baseline. Two pacings: a burst (the next delta after each
 * main-loop iteration, as fast as possible: the whole text arrives as one
 * flood) and a stream (one delta per millisecond, about what a fast model
 * sends).
 *
 * Figures: the longest main-loop stall (the longest single main-context
 * iteration, which is where a frame's update, layout and paint happen,
 * less the time that iteration sat in poll() waiting for an event or the
 * next frame: a loop waiting is not stalled, and a wait counted as work
 * made the markdown view's wait for its last frames after finish(), one
 * blocking iteration of 13-17 ms, its longest "stall" under cairo, while
 * the bare view's idles cut its wait into short iterations),
 * the longest gap between two painted frames while text was arriving, the
 * number of frames painted, the time until the final text was painted
 * (finish() called, the view has nothing pending, and the frame after
 * that painted), finish() itself, the longest frame-clock phases
 * (update: tick callbacks, the view's own update among them; layout; paint:
 * snapshot and render), and for the markdown view the longest and the
 * summed time of its per-frame updates (parse, buffer and block widgets).
 *
 * Each pacing runs as 5 pairs, the markdown view and the bare text view
 * one after the other (the order alternating from pair to pair), and the
 * ratio of their longest stalls is printed per pair with the median of
 * the 5 (issue 15's goal: at most 1.5 paced, at most 2 for the burst).
 *
 * What it compares: both widgets are the only child of a GtkScrolledWindow
 * in the same 800x600 window, with the theme's default font, and get the
 * same deltas. The bare GtkTextView scrolls itself (GtkScrollable), so it
 * lays out and draws only its visible lines; TallyMarkdownView goes through
 * the GtkViewport GTK adds for a widget that does not scroll itself, as in
 * the transcript's rows, and gives its own text view only the band of its
 * height that is on screen (the "Drawing" section of its documentation). The
 * markdown view shows less text (markup becomes tags, fences and the table
 * become widgets); the bare view shows the source as it is.
 *
 * Runs once under the renderer GTK picks and once more with
 * GSK_RENDERER=cairo (it re-executes itself). Needs a display: run it
 * under xvfb-run. It prints figures and asserts nothing about speed.
 *
 * The median of each frame phase is printed beside its longest, so that
 * a run shows where a typical frame goes, not only the worst one.
 * TALLY_BENCH_MARKDOWN_TRACE=MS prints every main-loop iteration that
 * took MS or longer (with its frame's phases, or finish(), and its start
 * and end in g_get_monotonic_time () µs, to be matched with the samples of
 * `perf record -k CLOCK_MONOTONIC`), and
 * TALLY_BENCH_MARKDOWN_ONLY=burst (or 1/ms) runs one pacing only.
 * TALLY_BENCH_MARKDOWN_PROFILE=1 makes one paced run of the markdown view
 * alone, under the renderer from the environment, for a profiler (perf
 * record, sysprof-cli); it also prints how many of the view's updates
 * left a streaming fence or table in place. TALLY_BENCH_MARKDOWN_PROFILE=burst
 * makes TALLY_BENCH_MARKDOWN_PAIRS burst runs of it instead.
 */

#define N_DELTAS   5000
#define N_FENCES   20
#define N_PAIRS    5

typedef struct
{
  gint64   last_paint;
  gint64   max_paint_gap;
  gint64   frame_start;
  gint64   update_end;
  gint64   layout_end;
  GArray  *work;          /* gint64: µs from "update" to "after-paint" */
  GArray  *updates;       /* gint64: µs of each phase, per frame */
  GArray  *layouts;
  GArray  *paints;
  gint64   update_max;    /* µs, longest phase of each kind */
  gint64   layout_max;
  gint64   paint_max;
  guint    frames;
  gboolean counting;
  gint64   last_update;   /* µs, the phases of the last frame */
  gint64   last_layout;
  gint64   last_paint_phase;
} FrameStats;

typedef struct
{
  double max_stall_ms;
  double max_frame_gap_ms;
  double frame_p50_ms;
  double frame_p95_ms;
  guint  frames;
  guint  updates;         /* the markdown view's updates, and those that */
  guint  tails_in_place;  /* left the tail's blocks in place */
  double total_ms;
  double finish_ms;
  double update_max_ms;
  double update_total_ms;
  double parse_ms;
  double insert_ms;
  double blocks_ms;
  double phase_update_ms;
  double phase_layout_ms;
  double phase_paint_ms;
  double update_p50_ms;   /* medians of the phases over the frames */
  double layout_p50_ms;
  double paint_p50_ms;
  const char *renderer;
} Result;

static char *
make_markdown (void)
{
  GString *md = g_string_new ("# Quarterly revenue analysis\n\n");

  for (guint i = 0; i < N_FENCES; i++)
    {
      g_string_append_printf (md, "## Section %u: revenue by genre and country\n\n", i + 1);
      g_string_append_printf (md,
                              "The query below groups invoice lines by **genre** and *country*, "
                              "joining `InvoiceLine`, `Track` and `Genre`. Section %u looks at the "
                              "months with the largest change; see [the schema notes](https://example.com/schema/%u) "
                              "for how prices are stored. Figures are in USD and rounded to cents, "
                              "and refunds are not recorded in this database, so every total is gross. "
                              "Where a genre has fewer than ten sales the share is shown but not ranked, "
                              "because a handful of invoices can swing it by several points. The "
                              "query runs in well under a second on the sample database, so it is "
                              "cheap to repeat with other filters, such as a single country, a single "
                              "media type or one sales agent's customers.\n\n",
                              i + 1, i);
      g_string_append (md,
                       "Compared with the previous quarter, the ranking barely moved: the first "
                       "three genres keep their places and together still make up more than half "
                       "of the revenue. The long tail is where the changes are. Several genres "
                       "with only a few dozen sales rose or fell by more than twenty percent, which "
                       "says more about the small numbers than about any trend, so the notes below "
                       "only comment on genres with at least fifty sales in both quarters. Where a "
                       "country has a single customer, its figures are that customer's purchases "
                       "and should be read as such rather than as a market.\n\n");
      g_string_append (md,
                       "- Tracks without a genre are left out.\n"
                       "- Shares are of the section's total, with `ROUND(…, 1)`:\n"
                       "  1. per genre;\n"
                       "  2. per country.\n\n");
      g_string_append_printf (md,
                              "```sql\n"
                              "SELECT g.Name AS genre,\n"
                              "       c.Country AS country,\n"
                              "       ROUND(SUM(il.UnitPrice * il.Quantity), 2) AS revenue\n"
                              "FROM InvoiceLine il\n"
                              "JOIN Invoice i ON i.InvoiceId = il.InvoiceId\n"
                              "JOIN Customer c ON c.CustomerId = i.CustomerId\n"
                              "JOIN Track t ON t.TrackId = il.TrackId\n"
                              "JOIN Genre g ON g.GenreId = t.GenreId\n"
                              "WHERE strftime('%%Y', i.InvoiceDate) = '20%02u'\n"
                              "GROUP BY g.Name, c.Country\n"
                              "ORDER BY revenue DESC\n"
                              "LIMIT 10;\n"
                              "```\n\n", 10 + i % 10);

      if (i == N_FENCES / 2)
        {
          g_string_append (md, "| Genre | Country | Revenue (USD) | Share |\n|:------|:--------|--------------:|------:|\n");
          for (guint r = 0; r < 30; r++)
            g_string_append_printf (md, "| Genre %u | Country %u | %u.%02u | %u.%u%% |\n",
                                    r, r % 7, 900 - r * 17, r * 3 % 100, 30 - r, r % 10);
          g_string_append (md, "\n");
        }

      g_string_append (md, "> Note: the totals above include taxes as recorded on each invoice.\n\n");
    }

  g_string_append (md, "That is all for this quarter.\n");
  return g_string_free (md, FALSE);
}

static GPtrArray *
split_deltas (const char *markdown)
{
  GPtrArray *deltas = g_ptr_array_new_with_free_func (g_free);
  gsize len = strlen (markdown);
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  gsize pos = 0;

  for (guint i = 0; i < N_DELTAS; i++)
    {
      /* Even cuts with some jitter; the text is ASCII apart from "…",
       * so keep cuts on character boundaries. */
      gsize target = (len * (i + 1)) / N_DELTAS;
      gsize end;

      if (i + 1 < N_DELTAS)
        target = MIN (len, target + (gsize)g_rand_int_range (rand, 0, 4));
      end = MAX (target, pos + 1);
      end = MIN (end, len);
      while (end < len && (markdown[end] & 0xc0) == 0x80)
        end++;
      if (end <= pos)
        break;
      g_ptr_array_add (deltas, g_strndup (markdown + pos, end - pos));
      pos = end;
    }

  if (pos < len)
    g_ptr_array_add (deltas, g_strdup (markdown + pos));

  return deltas;
}

/* Phase marks. The bench's "update" handler is connected before any tick
 * callback of the views, and its after-handler runs after all of them; the
 * "layout" and "paint" handlers run after GTK's own (connected at realize),
 * so each mark is the end of that phase. */
static void
frame_update_cb (GdkFrameClock *clock,
                 FrameStats    *stats)
{
  stats->frame_start = g_get_monotonic_time ();
  stats->update_end = stats->layout_end = 0;
}

static void
frame_update_after_cb (GdkFrameClock *clock,
                       FrameStats    *stats)
{
  stats->update_end = g_get_monotonic_time ();
  if (stats->counting && stats->frame_start != 0)
    {
      gint64 update = stats->update_end - stats->frame_start;

      stats->update_max = MAX (stats->update_max, update);
      g_array_append_val (stats->updates, update);
      stats->last_update = update;
    }
}

static void
frame_layout_cb (GdkFrameClock *clock,
                 FrameStats    *stats)
{
  gint64 now = g_get_monotonic_time ();

  if (stats->counting && stats->update_end != 0)
    {
      gint64 layout = now - stats->update_end;

      stats->layout_max = MAX (stats->layout_max, layout);
      g_array_append_val (stats->layouts, layout);
      stats->last_layout = layout;
    }
  stats->layout_end = now;
}

static void
frame_paint_cb (GdkFrameClock *clock,
                FrameStats    *stats)
{
  gint64 now = g_get_monotonic_time ();

  if (stats->counting && stats->layout_end != 0)
    {
      gint64 paint = now - stats->layout_end;

      stats->paint_max = MAX (stats->paint_max, paint);
      g_array_append_val (stats->paints, paint);
      stats->last_paint_phase = paint;
    }
}

static void
after_paint_cb (GdkFrameClock *clock,
                FrameStats    *stats)
{
  gint64 now = g_get_monotonic_time ();

  if (stats->counting)
    {
      if (stats->last_paint != 0)
        stats->max_paint_gap = MAX (stats->max_paint_gap, now - stats->last_paint);
      if (stats->frame_start != 0)
        {
          gint64 work = now - stats->frame_start;

          g_array_append_val (stats->work, work);
        }
      stats->frames++;
    }
  stats->frame_start = 0;
  stats->last_paint = now;
}

static int
compare_int64 (gconstpointer a,
               gconstpointer b)
{
  gint64 x = *(const gint64 *)a;
  gint64 y = *(const gint64 *)b;

  return x < y ? -1 : x > y;
}

static double
percentile_ms (GArray *values,
               double  p)
{
  guint idx;

  if (values->len == 0)
    return 0.0;
  g_array_sort (values, compare_int64);
  idx = MIN (values->len - 1, (guint)(p * values->len));
  return g_array_index (values, gint64, idx) / 1000.0;
}

static void
append_int64 (GArray *values,
              double  value)
{
  gint64 v = (gint64)(value + 0.5);

  g_array_append_val (values, v);
}

/* TALLY_BENCH_MARKDOWN_TRACE=MS: each iteration longer than MS is
 * printed, with the phases of the frame painted in it (if one was) and
 * how much of the text the widget had been given. */
static gint64      trace_us;
static FrameStats *trace_frames;
static guint       trace_delta;
static gint64      trace_start;

/* The time the default main context spent in poll() since this was last
 * reset (timed_poll(), its poll function). */
static gint64 polled_us;

static int
timed_poll (GPollFD *fds,
            guint    n_fds,
            int      timeout)
{
  gint64 start = g_get_monotonic_time ();
  int ready = g_poll (fds, n_fds, timeout);

  polled_us += g_get_monotonic_time () - start;
  return ready;
}

/* One main-loop iteration, timed without the time it waited in poll(). */
static void
iterate (gboolean  may_block,
         gint64   *max_stall)
{
  gint64 start = g_get_monotonic_time ();
  guint frames = trace_frames != NULL ? trace_frames->frames : 0;
  gint64 took;

  polled_us = 0;
  g_main_context_iteration (NULL, may_block);
  took = g_get_monotonic_time () - start - polled_us;
  *max_stall = MAX (*max_stall, took);
  if (trace_us > 0 && took >= trace_us && trace_frames != NULL)
    {
      if (trace_frames->frames != frames)
        g_print ("  %7.1f ms: iteration %5.1f ms at delta %4u, frame update %5.1f layout %5.1f paint %5.1f [%" G_GINT64_FORMAT " %" G_GINT64_FORMAT "]\n",
                 (start - trace_start) / 1000.0, took / 1000.0, trace_delta,
                 trace_frames->last_update / 1000.0, trace_frames->last_layout / 1000.0,
                 trace_frames->last_paint_phase / 1000.0, start, start + took);
      else
        g_print ("  %7.1f ms: iteration %5.1f ms at delta %4u, no frame painted\n",
                 (start - trace_start) / 1000.0, took / 1000.0, trace_delta);
    }
}

static void
spin_ms (guint    ms,
         gint64  *max_stall)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < end)
    {
      iterate (FALSE, max_stall);
      g_usleep (200);
    }
}

static gboolean
view_busy (TallyMarkdownView *view)
{
  TallyMarkdownViewStats stats;

  tally_markdown_view_get_stats (view, &stats);
  return tally_markdown_view_get_pending (view) || stats.lazy_pending > 0;
}

static Result
run (GPtrArray *deltas,
     gboolean   markdown,
     gboolean   paced)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *view;
  GtkTextBuffer *plain_buffer = NULL;
  GdkFrameClock *clock;
  FrameStats frames = { 0 };
  gulong phase_handlers[4];
  gint64 max_stall = 0;
  gint64 start, finish_start, finish_end;
  guint frames_at_finish;
  gulong handler;
  Result result;

  if (markdown)
    view = tally_markdown_view_new ();
  else
    {
      view = gtk_text_view_new ();
      gtk_text_view_set_wrap_mode (GTK_TEXT_VIEW (view), GTK_WRAP_WORD_CHAR);
      gtk_text_view_set_editable (GTK_TEXT_VIEW (view), FALSE);
      plain_buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (view));
      gtk_text_buffer_set_enable_undo (plain_buffer, FALSE);
    }

  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), view);
  gtk_window_set_child (GTK_WINDOW (window), scroller);
  gtk_window_set_default_size (GTK_WINDOW (window), 800, 600);
  gtk_window_present (GTK_WINDOW (window));
  while (!gtk_widget_get_mapped (view))
    g_main_context_iteration (NULL, TRUE);
  spin_ms (200, &max_stall);

  result.renderer = g_intern_string (G_OBJECT_TYPE_NAME (gtk_native_get_renderer (GTK_NATIVE (window))));
  clock = gtk_widget_get_frame_clock (window);
  frames.work = g_array_new (FALSE, FALSE, sizeof (gint64));
  frames.updates = g_array_new (FALSE, FALSE, sizeof (gint64));
  frames.layouts = g_array_new (FALSE, FALSE, sizeof (gint64));
  frames.paints = g_array_new (FALSE, FALSE, sizeof (gint64));
  phase_handlers[0] = g_signal_connect (clock, "update", G_CALLBACK (frame_update_cb), &frames);
  phase_handlers[1] = g_signal_connect_after (clock, "update", G_CALLBACK (frame_update_after_cb), &frames);
  phase_handlers[2] = g_signal_connect (clock, "layout", G_CALLBACK (frame_layout_cb), &frames);
  phase_handlers[3] = g_signal_connect (clock, "paint", G_CALLBACK (frame_paint_cb), &frames);
  handler = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &frames);

  max_stall = 0;
  frames.counting = TRUE;
  frames.last_paint = g_get_monotonic_time ();
  start = g_get_monotonic_time ();
  trace_frames = &frames;
  trace_start = start;
  if (trace_us > 0)
    g_print ("%s, %s:\n", markdown ? "TallyMarkdownView" : "GtkTextView", paced ? "1/ms" : "burst");

  for (guint i = 0; i < deltas->len; i++)
    {
      const char *delta = g_ptr_array_index (deltas, i);

      trace_delta = i;

      if (markdown)
        tally_markdown_view_append (TALLY_MARKDOWN_VIEW (view), delta);
      else
        {
          GtkTextIter end;

          gtk_text_buffer_get_end_iter (plain_buffer, &end);
          gtk_text_buffer_insert (plain_buffer, &end, delta, -1);
        }

      if (paced)
        {
          gint64 due = start + (gint64)(i + 1) * 1000;

          do
            iterate (FALSE, &max_stall);
          while (g_get_monotonic_time () < due);
        }
      else
        iterate (FALSE, &max_stall);
    }

  finish_start = g_get_monotonic_time ();
  if (markdown)
    tally_markdown_view_finish (TALLY_MARKDOWN_VIEW (view));
  finish_end = g_get_monotonic_time ();
  max_stall = MAX (max_stall, finish_end - finish_start);
  trace_delta = deltas->len;
  if (trace_us > 0 && finish_end - finish_start >= trace_us)
    g_print ("  %7.1f ms: finish() %5.1f ms\n", (finish_start - start) / 1000.0,
             (finish_end - finish_start) / 1000.0);

  /* Until the view has nothing left for its frames (placeholders, a
   * finish() that its frames complete). */
  if (markdown)
    while (view_busy (TALLY_MARKDOWN_VIEW (view)))
      iterate (TRUE, &max_stall);

  /* Until the final text has been laid out and painted: one frame is
   * requested for sure; wait for it and for pending layout idles. */
  frames_at_finish = frames.frames;
  gtk_widget_queue_draw (view);
  while (frames.frames < frames_at_finish + 1)
    iterate (TRUE, &max_stall);
  while (g_main_context_pending (NULL))
    iterate (FALSE, &max_stall);

  result.max_stall_ms = max_stall / 1000.0;
  result.max_frame_gap_ms = frames.max_paint_gap / 1000.0;
  result.frames = frames.frames;
  result.total_ms = (g_get_monotonic_time () - start) / 1000.0;
  result.finish_ms = (finish_end - finish_start) / 1000.0;
  result.update_max_ms = 0;
  result.update_total_ms = 0;
  result.parse_ms = result.insert_ms = result.blocks_ms = 0;
  result.updates = result.tails_in_place = 0;
  if (markdown)
    {
      TallyMarkdownViewStats stats;

      tally_markdown_view_get_stats (TALLY_MARKDOWN_VIEW (view), &stats);
      result.update_max_ms = stats.update_us_max / 1000.0;
      result.update_total_ms = stats.update_us_total / 1000.0;
      result.parse_ms = stats.parse_us_max / 1000.0;
      result.insert_ms = stats.insert_us_max / 1000.0;
      result.blocks_ms = stats.blocks_us_max / 1000.0;
      result.updates = stats.updates;
      result.tails_in_place = stats.tails_in_place;
    }

  result.phase_update_ms = frames.update_max / 1000.0;
  result.phase_layout_ms = frames.layout_max / 1000.0;
  result.phase_paint_ms = frames.paint_max / 1000.0;
  result.frame_p50_ms = percentile_ms (frames.work, 0.5);
  result.frame_p95_ms = percentile_ms (frames.work, 0.95);
  result.update_p50_ms = percentile_ms (frames.updates, 0.5);
  result.layout_p50_ms = percentile_ms (frames.layouts, 0.5);
  result.paint_p50_ms = percentile_ms (frames.paints, 0.5);
  g_array_unref (frames.work);
  g_array_unref (frames.updates);
  g_array_unref (frames.layouts);
  g_array_unref (frames.paints);

  trace_frames = NULL;
  g_signal_handler_disconnect (clock, handler);
  for (guint i = 0; i < G_N_ELEMENTS (phase_handlers); i++)
    g_signal_handler_disconnect (clock, phase_handlers[i]);
  gtk_window_destroy (GTK_WINDOW (window));
  spin_ms (50, &max_stall);

  return result;
}

static void
print_row (const char   *renderer,
           const char   *widget,
           const char   *pacing,
           guint         pair,
           const Result *r)
{
  g_print ("%-16s %-17s %-5s %4u %6.1f %6.1f %6.1f %6.1f %6u %7.0f %6.1f %6.1f %6.1f %6.1f %5.1f %5.1f %5.1f %6.1f %6.0f %6.1f %6.1f %6.1f\n",
           renderer, widget, pacing, pair, r->max_stall_ms, r->max_frame_gap_ms,
           r->frame_p50_ms, r->frame_p95_ms,
           r->frames, r->total_ms, r->finish_ms,
           r->phase_update_ms, r->phase_layout_ms, r->phase_paint_ms,
           r->update_p50_ms, r->layout_p50_ms, r->paint_p50_ms,
           r->update_max_ms, r->update_total_ms,
           r->parse_ms, r->insert_ms, r->blocks_ms);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *markdown = NULL;
  g_autoptr(GPtrArray) deltas = NULL;
  gboolean child = g_getenv ("TALLY_BENCH_MARKDOWN_CHILD") != NULL;
  const char *renderer = NULL;
  const char *pairs_env = g_getenv ("TALLY_BENCH_MARKDOWN_PAIRS");
  guint n_pairs = N_PAIRS;
  GString *summary = g_string_new (NULL);

  /* Mesa keeps compiled shaders in the user's cache folder, as it does
   * for the app; the test environment points it at a folder in the build
   * tree that may not exist yet (Mesa then compiles every shader again in
   * every process, and says so). */
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);

  if (!gtk_init_check ())
    {
      g_printerr ("bench-markdown: no display; run it under xvfb-run\n");
      return 77;
    }
  adw_init ();
  g_main_context_set_poll_func (NULL, timed_poll);

  if (g_getenv ("TALLY_BENCH_MARKDOWN_TRACE") != NULL)
    trace_us = (gint64)(g_ascii_strtod (g_getenv ("TALLY_BENCH_MARKDOWN_TRACE"), NULL) * 1000);

  /* A quicker look while profiling: TALLY_BENCH_MARKDOWN_PAIRS=1. */
  if (pairs_env != NULL)
    n_pairs = CLAMP ((guint)g_ascii_strtoull (pairs_env, NULL, 10), 1, N_PAIRS);

  markdown = make_markdown ();
  deltas = split_deltas (markdown);

  /* For a profiler (perf record, sysprof-cli): one paced run of the
   * markdown view only, under the renderer from the environment. */
  if (g_getenv ("TALLY_BENCH_MARKDOWN_PROFILE") != NULL)
    {
      gboolean burst = g_strcmp0 (g_getenv ("TALLY_BENCH_MARKDOWN_PROFILE"), "burst") == 0;

      for (guint i = 0; i < (burst ? n_pairs : 1); i++)
        {
          Result md = run (deltas, TRUE, !burst);

          print_row (md.renderer, "TallyMarkdownView", burst ? "burst" : "1/ms", i + 1, &md);
          g_print ("updates %u, tails updated in place %u\n", md.updates, md.tails_in_place);
        }
      g_string_free (summary, TRUE);
      return 0;
    }

  if (!child)
    {
      g_print ("bench-markdown: %" G_GSIZE_FORMAT " bytes of markdown in %u deltas, %u code fences, a 30-row table\n",
               strlen (markdown), deltas->len, N_FENCES);
      g_print ("stall: longest main-loop iteration less its wait in poll(); gap: longest time between painted frames;\n"
               "frame p50/p95: work per frame (update to after-paint); total: until the final\n"
               "text was painted; finish: tally_markdown_view_finish(); ph/upd, ph/lay, ph/pnt:\n"
               "the longest update (tick callbacks), layout and paint phase of a frame;\n"
               "u/50, l/50, p/50: the median update, layout and paint phase;\n"
               "upd/mx, upd/sum: the view's own per-frame updates (parse, buffer, block\n"
               "widgets); parse, insert, blocks: the most one frame's update spent parsing,\n"
               "writing into the buffer and making block widgets. Times in ms. Each pair:\n"
               "the markdown view and the bare view, in alternating order.\n\n");
      g_print ("%-16s %-17s %-5s %4s %6s %6s %6s %6s %6s %7s %6s %6s %6s %6s %5s %5s %5s %6s %6s %6s %6s %6s\n",
               "renderer", "widget", "pace", "pair", "stall", "gap", "p50", "p95", "frames", "total",
               "finish", "ph/upd", "ph/lay", "ph/pnt", "u/50", "l/50", "p/50", "upd/mx", "upd/sum", "parse", "insert", "blocks");
    }

  for (guint p = 0; p < 2; p++)
    {
      gboolean paced = p == 1;
      const char *pacing = paced ? "1/ms" : "burst";
      /* µs, and ratios in thousandths, for percentile_ms () */
      g_autoptr(GArray) md_stalls = g_array_new (FALSE, FALSE, sizeof (gint64));
      g_autoptr(GArray) plain_stalls = g_array_new (FALSE, FALSE, sizeof (gint64));
      g_autoptr(GArray) ratios = g_array_new (FALSE, FALSE, sizeof (gint64));

      g_autoptr(GString) per_pair = g_string_new (NULL);

      /* TALLY_BENCH_MARKDOWN_ONLY=burst or =1/ms runs one pacing only. */
      if (g_getenv ("TALLY_BENCH_MARKDOWN_ONLY") != NULL &&
          g_strcmp0 (g_getenv ("TALLY_BENCH_MARKDOWN_ONLY"), pacing) != 0)
        continue;

      for (guint pair = 0; pair < n_pairs; pair++)
        {
          Result md, plain;
          double ratio;

          /* Alternate which goes first, so neither always runs on a
           * warmer cache or right after the other's clean-up. */
          if (pair % 2 == 0)
            {
              md = run (deltas, TRUE, paced);
              plain = run (deltas, FALSE, paced);
            }
          else
            {
              plain = run (deltas, FALSE, paced);
              md = run (deltas, TRUE, paced);
            }
          print_row (md.renderer, "TallyMarkdownView", pacing, pair + 1, &md);
          print_row (plain.renderer, "GtkTextView", pacing, pair + 1, &plain);
          renderer = md.renderer;
          ratio = plain.max_stall_ms > 0 ? md.max_stall_ms / plain.max_stall_ms : 0.0;
          g_string_append_printf (per_pair, " %.2f", ratio);
          append_int64 (md_stalls, md.max_stall_ms * 1000);
          append_int64 (plain_stalls, plain.max_stall_ms * 1000);
          append_int64 (ratios, ratio * 1000);
        }

      /* percentile_ms () divides by 1000: the median ratio comes back
       * as a ratio, the stalls in ms. */
      g_string_append_printf (summary,
                              "%-16s %-5s stall ratio per pair:%s; median %.2f (goal <= %.1f); "
                              "median stall %.1f vs %.1f ms, ratio of the medians %.2f\n",
                              renderer, pacing, per_pair->str,
                              percentile_ms (ratios, 0.5), paced ? 1.5 : 2.0,
                              percentile_ms (md_stalls, 0.5), percentile_ms (plain_stalls, 0.5),
                              percentile_ms (plain_stalls, 0.5) > 0
                              ? percentile_ms (md_stalls, 0.5) / percentile_ms (plain_stalls, 0.5) : 0.0);
    }

  g_print ("\n%s", summary->str);
  g_string_free (summary, TRUE);

  /* Once more with the cairo renderer, unless that is what ran. */
  if (!child && g_strcmp0 (g_getenv ("GSK_RENDERER"), "cairo") != 0)
    {
      g_auto(GStrv) env = g_get_environ ();
      g_autoptr(GError) error = NULL;
      const char *child_argv[] = { argv[0], NULL };
      int status = 0;

      g_print ("\n");
      fflush (stdout);
      env = g_environ_setenv (env, "GSK_RENDERER", "cairo", TRUE);
      env = g_environ_setenv (env, "TALLY_BENCH_MARKDOWN_CHILD", "1", TRUE);
      if (!g_spawn_sync (NULL, (char **)child_argv, env, G_SPAWN_CHILD_INHERITS_STDIN,
                         NULL, NULL, NULL, NULL, &status, &error))
        g_printerr ("bench-markdown: could not run the cairo pass: %s\n", error->message);
    }

  return 0;
}
