/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Benchmark: open a stored 10,000-event session in the `tally` window.
 * Builds a store holding one session of 10,000 events (530 turns with
 * streamed text, a tool call and a receipt each) and an empty store, then
 * starts the app on each, alternately, in pairs: with --session on the
 * first, with nothing to show on the second. Prints the time from main()
 * to the first painted frame that shows the session (the window opens it
 * in the background; the app's TALLY_BENCH_FIRST_FRAME hook and
 * tally-window-open.c report the frames) or, for the empty store, the
 * window's first frame; the peak RSS of each run, the ratio of each pair,
 * the median of the ratios and the ratio of the medians, under the cairo
 * and GL renderers (issue 15: the goal is at most 1.3 times the empty
 * window, in time and in RSS). The very first open replays the log
 * and writes the session's snapshot (docs/architecture.md §10.2); it is
 * printed on its own. Prints figures only; asserts nothing about speed.
 * Run under Xvfb: xvfb-run -a meson test -C build --benchmark bench-app-open */

#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tally-event.h"
#include "tally-store.h"
#include "tally-test-util.h"

#define TURNS 530
#define RUNS 5

static gint64 seq;

static void
append (TallyStore *store,
        const char *session_id,
        const char *turn_id,
        JsonObject *fields)
{
  g_autoptr(JsonObject) event = tally_event_stamp (fields, ++seq, g_get_real_time (), session_id, turn_id);
  g_autoptr(GError) error = NULL;

  json_object_unref (fields);
  if (!tally_store_append_event (store, event, &error))
    g_error ("append: %s", error->message);
}

static void
build_session (TallyStore *store,
               const char *session_id)
{
  JsonObject *f = tally_event_new (TALLY_EVENT_SESSION_CREATED);

  json_object_set_string_member (f, "title", "Ten thousand events");
  json_object_set_string_member (f, "model", "claude-sonnet-5");
  json_object_set_null_member (f, "workspace");
  json_object_set_null_member (f, "database");
  append (store, session_id, NULL, f);

  for (guint t = 0; t < TURNS && seq < 10000; t++)
    {
      g_autofree char *turn_id = g_strdup_printf ("turn-%u", t);
      g_autofree char *tool_id = g_strdup_printf ("toolu_%u", t);

      f = tally_event_new (TALLY_EVENT_TURN_STARTED);
      json_object_set_string_member (f, "mode", "ask");
      json_object_set_boolean_member (f, "thinking", FALSE);
      json_object_set_int_member (f, "budget_tokens", 0);
      json_object_set_string_member (f, "model", "claude-sonnet-5");
      json_object_set_string_member (f, "text", "How did the York stores do last week compared with Leeds?");
      append (store, session_id, turn_id, f);

      f = tally_event_new (TALLY_EVENT_TOOL_USE_START);
      json_object_set_string_member (f, "tool_id", tool_id);
      json_object_set_string_member (f, "tool_name", "query_database");
      json_object_set_object_member (f, "tool_input", json_object_new ());
      append (store, session_id, turn_id, f);

      f = tally_event_new (TALLY_EVENT_TOOL_RESULT);
      json_object_set_string_member (f, "tool_id", tool_id);
      json_object_set_string_member (f, "content", "city | revenue_gbp\nLeeds | 10234.5\nYork | 11873.25\n(2 rows)");
      json_object_set_boolean_member (f, "is_error", FALSE);
      json_object_set_int_member (f, "duration_ms", 4);
      append (store, session_id, turn_id, f);

      for (guint d = 0; d < 15; d++)
        {
          f = tally_event_new (TALLY_EVENT_TEXT_DELTA);
          json_object_set_int_member (f, "call", 1);
          json_object_set_int_member (f, "block", 0);
          json_object_set_string_member (f, "text", d == 0 ? "## Week summary\n\n" : "York sold a little more **coffee** than Leeds. ");
          append (store, session_id, turn_id, f);
        }

      f = tally_event_new (TALLY_EVENT_TURN_FINISHED);
      json_object_set_string_member (f, "status", "done");
      json_object_set_double_member (f, "cost_usd", 0.0123);
      json_object_set_int_member (f, "duration_ms", 4200);
      json_object_set_int_member (f, "api_calls", 2);
      tally_event_set_usage (f, "usage", 3000, 200, 0, 0);
      append (store, session_id, turn_id, f);
    }
}

/* One run of the app under @renderer; returns its first frame in ms
 * from main(): the window's first frame for an empty store, the first
 * frame that shows the session (the window prints "session-frame-at-us"
 * then, tally-window-open.c) with one. Sets *rss_kib (peak RSS) and
 * *cpu_ms (user and system time until it quit, just after that frame).
 * With @marks set, prints the app's TALLY_BENCH_OPEN_TRACE lines. */
static double
run_app (const char *store_path,
         const char *session_id,
         const char *renderer,
         gboolean    marks,
         long       *rss_kib,
         double     *cpu_ms)
{
  int out[2], in[2];
  struct rusage usage;
  g_autoptr(GString) text = g_string_new (NULL);
  char buf[512];
  ssize_t len;
  int status;
  double first_frame = -1;
  gint64 first_at = -1, session_at = -1;
  pid_t pid;

  g_assert_cmpint (pipe (out), ==, 0);
  g_assert_cmpint (pipe (in), ==, 0);
  pid = fork ();
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_WRONLY);

      dup2 (out[1], STDOUT_FILENO);
      dup2 (in[0], STDIN_FILENO);
      if (!marks)
        dup2 (devnull, STDERR_FILENO);
      close (out[0]);
      close (in[1]);
      /* Stays up after its first frame until stdin closes, so the
       * session's own frame can follow. */
      g_setenv ("TALLY_BENCH_FIRST_FRAME", "stay", TRUE);
      g_setenv ("GSK_RENDERER", renderer, TRUE);
      if (marks)
        g_setenv ("TALLY_BENCH_OPEN_TRACE", "1", TRUE);
      if (session_id != NULL)
        execl (TALLY_TEST_APP, TALLY_TEST_APP, "--store", store_path, "--session", session_id, (char *)NULL);
      else
        execl (TALLY_TEST_APP, TALLY_TEST_APP, "--store", store_path, (char *)NULL);
      _exit (127);
    }
  close (out[1]);
  close (in[0]);
  while ((first_at < 0 || (session_id != NULL && session_at < 0)) &&
         (len = read (out[0], buf, sizeof buf - 1)) > 0)
    {
      g_auto(GStrv) lines = NULL;

      buf[len] = '\0';
      g_string_append (text, buf);
      lines = g_strsplit (text->str, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          sscanf (lines[i], "first-frame-ms %lf", &first_frame);
          sscanf (lines[i], "first-frame-at-us %" G_GINT64_FORMAT, &first_at);
          sscanf (lines[i], "session-frame-at-us %" G_GINT64_FORMAT, &session_at);
        }
    }
  close (in[1]);
  close (out[0]);
  g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
  if (first_frame < 0 || first_at < 0 || (session_id != NULL && session_at < 0))
    g_error ("the app reported no first frame (exit status %d); is a display available?", status);
  *rss_kib = usage.ru_maxrss;
  *cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000.0 +
            (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000.0;
  if (session_id == NULL)
    return first_frame;
  /* The session's frame, from main(): the window's first frame is
   * first_frame ms after main() began, at first_at. */
  return first_frame + (session_at - first_at) / 1000.0;
}

static void
remove_store (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);
  g_autofree char *lock = g_strconcat (path, "-lock", NULL);

  g_unlink (path);
  g_unlink (wal);
  g_unlink (shm);
  g_unlink (lock);
}

static void
measure (const char *path,
         const char *empty_path,
         const char *session_id,
         const char *renderer)
{
  double open_ms[RUNS], empty_ms[RUNS], ratio[RUNS], open_rss[RUNS], empty_rss[RUNS];
  double open_cpu[RUNS], empty_cpu[RUNS];
  long rss;

  /* One run of each first, not counted: the files and the libraries in
   * the page cache. */
  run_app (empty_path, NULL, renderer, FALSE, &rss, &open_cpu[0]);
  run_app (path, session_id, renderer, FALSE, &rss, &open_cpu[0]);

  for (guint i = 0; i < RUNS; i++)
    {
      empty_ms[i] = run_app (empty_path, NULL, renderer, FALSE, &rss, &empty_cpu[i]);
      empty_rss[i] = rss / 1024.0;
      open_ms[i] = run_app (path, session_id, renderer, FALSE, &rss, &open_cpu[i]);
      open_rss[i] = rss / 1024.0;
      ratio[i] = open_ms[i] / empty_ms[i];
    }

  g_print ("GSK_RENDERER=%s (%d pairs, run alternately; first frame after main(): for the session, the first "
           "frame that shows it):\n", renderer, RUNS);
  for (guint i = 0; i < RUNS; i++)
    g_print ("  pair %u: session %.1f ms, empty %.1f ms, ratio %.2f; CPU %.1f vs %.1f ms (%.2f); "
             "peak RSS %.1f vs %.1f MiB (%.2f)\n",
             i + 1, open_ms[i], empty_ms[i], ratio[i], open_cpu[i], empty_cpu[i], open_cpu[i] / empty_cpu[i],
             open_rss[i], empty_rss[i], open_rss[i] / empty_rss[i]);
  g_print ("  first frame, median: session %.1f ms, empty %.1f ms; ratio of the medians %.2f, "
           "median of the pairs' ratios %.2f (goal: both at most 1.3)\n",
           tally_test_median (open_ms, RUNS), tally_test_median (empty_ms, RUNS),
           tally_test_median (open_ms, RUNS) / tally_test_median (empty_ms, RUNS), tally_test_median (ratio, RUNS));
  g_print ("  CPU time until exit, median: session %.1f ms, empty %.1f ms, ratio %.2f "
           "(less sensitive than wall time to a loaded machine)\n",
           tally_test_median (open_cpu, RUNS), tally_test_median (empty_cpu, RUNS),
           tally_test_median (open_cpu, RUNS) / tally_test_median (empty_cpu, RUNS));
  g_print ("  peak RSS, median: session %.1f MiB, empty %.1f MiB, ratio %.2f (goal: at most 1.3)\n",
           tally_test_median (open_rss, RUNS), tally_test_median (empty_rss, RUNS),
           tally_test_median (open_rss, RUNS) / tally_test_median (empty_rss, RUNS));
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = g_dir_make_tmp ("tally-bench-open-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *empty_path = g_build_filename (dir, "empty.db", NULL);
  const char *session_id = "b3c1d2e4-0000-4000-8000-000000010000";
  /* The figures are with cairo; GL too (software GL under Xvfb).
   * GSK_RENDERER in the environment picks one. */
  const char *renderers[] = { "cairo", "gl" };
  double rebuild_ms, rebuild_cpu;
  long rss;

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TallyStore) store = tally_store_open (path, &error);
    g_autoptr(TallyStore) empty = tally_store_open (empty_path, &error);

    if (store == NULL || empty == NULL)
      g_error ("%s", error->message);
    build_session (store, session_id);
    if (!tally_store_flush (store, &error))
      g_error ("%s", error->message);
  }

  g_print ("Open a stored session of %" G_GINT64_FORMAT " events in tally vs an empty store:\n", seq);

  /* The log alone, as a store from before snapshots: the first open
   * replays it and writes the snapshot the later opens use (a live
   * session writes it when each turn settles). */
  rebuild_ms = run_app (path, session_id, "cairo", FALSE, &rss, &rebuild_cpu);
  g_print ("  first open, log only (replays it, writes the snapshot): %.1f ms (CPU %.1f ms)\n",
           rebuild_ms, rebuild_cpu);

  /* TALLY_BENCH_OPEN_TRACE: one traced open, its marks on stderr. */
  if (g_getenv ("TALLY_BENCH_OPEN_TRACE") != NULL)
    run_app (path, session_id, "cairo", TRUE, &rss, &rebuild_cpu);

  if (g_getenv ("GSK_RENDERER") != NULL)
    measure (path, empty_path, session_id, g_getenv ("GSK_RENDERER"));
  else
    for (guint r = 0; r < G_N_ELEMENTS (renderers); r++)
      measure (path, empty_path, session_id, renderers[r]);

  remove_store (path);
  remove_store (empty_path);
  g_rmdir (dir);
  return 0;
}
