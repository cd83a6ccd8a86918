/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "tally-bench-first-frame.h"

#include <glib-unix.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* The benchmarks' first-frame report, shared by `tally` (src/ui/main.c)
 * and the GTK hello world it is compared with (tests/bench/hello-gtk.c),
 * so that both are measured the same way. It needs GTK only. */

static gint64 start_us;

/* The CPU time of the whole process (every thread, from exec), in ms. */
static double
process_cpu_ms (void)
{
  struct timespec cpu;

  if (clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &cpu) != 0)
    return 0;
  return cpu.tv_sec * 1000.0 + cpu.tv_nsec / 1000000.0;
}

static gboolean
stdin_cb (int           fd,
          GIOCondition  condition,
          gpointer      user_data)
{
  char buf[64];

  if ((condition & G_IO_IN) != 0 && read (fd, buf, sizeof buf) > 0)
    return G_SOURCE_CONTINUE;
  g_application_quit (G_APPLICATION (user_data));
  return G_SOURCE_REMOVE;
}

static void
first_frame_cb (GdkFrameClock *clock,
                GApplication  *app)
{
  gint64 now = g_get_monotonic_time ();

  g_assert (GDK_IS_FRAME_CLOCK (clock));
  g_assert (G_IS_APPLICATION (app));

  g_signal_handlers_disconnect_by_func (clock, first_frame_cb, app);
  tally_bench_first_frame_mark ("first frame");
  /* The CPU time first: a reader may stop at first-frame-at-us. */
  printf ("first-frame-cpu-ms %.1f\nfirst-frame-ms %.1f\nfirst-frame-at-us %" G_GINT64_FORMAT "\n",
          process_cpu_ms (), (now - start_us) / 1000.0, now);
  fflush (stdout);

  if (g_strcmp0 (g_getenv ("TALLY_BENCH_FIRST_FRAME"), "stay") == 0)
    g_unix_fd_add (STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR, stdin_cb, app);
  else
    g_application_quit (app);
}

/* The frame clock's phases of the first frame, for the trace. */
static void
first_layout_cb (GdkFrameClock *clock)
{
  g_signal_handlers_disconnect_by_func (clock, first_layout_cb, NULL);
  tally_bench_first_frame_mark ("first layout");
}

static void
first_paint_cb (GdkFrameClock *clock)
{
  g_signal_handlers_disconnect_by_func (clock, first_paint_cb, NULL);
  tally_bench_first_frame_mark ("first paint");
}

static void
window_mapped_cb (GtkWidget    *window,
                  GApplication *app)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (window);

  g_assert (GTK_IS_WIDGET (window));
  g_assert (G_IS_APPLICATION (app));

  g_signal_handlers_disconnect_by_func (window, window_mapped_cb, app);
  tally_bench_first_frame_mark ("window mapped");
  if (clock != NULL)
    {
      g_signal_connect (clock, "layout", G_CALLBACK (first_layout_cb), NULL);
      g_signal_connect (clock, "paint", G_CALLBACK (first_paint_cb), NULL);
      g_signal_connect (clock, "after-paint", G_CALLBACK (first_frame_cb), app);
    }
}

static void
window_added_cb (GtkApplication *app,
                 GtkWindow      *window)
{
  g_assert (GTK_IS_APPLICATION (app));
  g_assert (GTK_IS_WINDOW (window));

  g_signal_handlers_disconnect_by_func (app, window_added_cb, NULL);
  tally_bench_first_frame_mark ("window made");
  g_signal_connect_after (window, "map", G_CALLBACK (window_mapped_cb), app);
}

static void
startup_done_cb (GApplication *app)
{
  tally_bench_first_frame_mark ("application started");
}

/**
 * tally_bench_first_frame_watch:
 * @app: the application, before it runs
 * @process_start_us: g_get_monotonic_time() when main() began
 *
 * With `TALLY_BENCH_FIRST_FRAME` set (to anything), waits for the first
 * window @app gets, and on the first frame painted after it is mapped
 * (its frame clock's "after-paint") prints two lines to stdout:
 *
 * |[
 * first-frame-cpu-ms MS      (CPU time of the process so far, all its
 *                             threads, from exec, in milliseconds)
 * first-frame-ms MS          (milliseconds since @process_start_us)
 * first-frame-at-us US       (g_get_monotonic_time() then, in µs; the
 *                             clock is the system's, so a benchmark can
 *                             measure from the moment it spawned us)
 * ]|
 *
 * Then it quits @app, or with `TALLY_BENCH_FIRST_FRAME=stay` keeps
 * running until stdin closes, so a benchmark can read its memory first
 * (tests/bench/bench-startup.c). Without the variable it does nothing.
 *
 * Returns: %TRUE when the variable is set and the watch is in place
 */
gboolean
tally_bench_first_frame_watch (GtkApplication *app,
                               gint64          process_start_us)
{
  g_return_val_if_fail (GTK_IS_APPLICATION (app), FALSE);

  if (g_getenv ("TALLY_BENCH_FIRST_FRAME") == NULL)
    return FALSE;

  start_us = process_start_us;
  tally_bench_first_frame_mark ("main");
  g_signal_connect (app, "startup", G_CALLBACK (startup_done_cb), NULL);
  g_signal_connect (app, "window-added", G_CALLBACK (window_added_cb), NULL);
  return TRUE;
}

/**
 * tally_bench_first_frame_mark:
 * @step: (not nullable): what start-up has just done, for people
 *
 * With `TALLY_BENCH_FIRST_FRAME_TRACE` set (to anything) and the watch in
 * place (tally_bench_first_frame_watch()), prints to stderr
 *
 * |[
 * startup-step STEP  wall MS  cpu MS
 * ]|
 *
 * where wall is the milliseconds since main() began and cpu the process's
 * CPU time so far (all threads, from exec), so a run shows where the time
 * to the first frame goes. Does nothing otherwise.
 */
void
tally_bench_first_frame_mark (const char *step)
{
  static int trace = -1;

  g_return_if_fail (step != NULL);

  if (trace < 0)
    trace = g_getenv ("TALLY_BENCH_FIRST_FRAME_TRACE") != NULL;
  if (!trace || start_us == 0)
    return;
  fprintf (stderr, "startup-step %-28s wall %8.1f ms  cpu %8.1f ms\n", step,
           (g_get_monotonic_time () - start_us) / 1000.0, process_cpu_ms ());
}
