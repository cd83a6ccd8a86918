/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Benchmark: open a stored 10,000-event session in the `tally` window.
 * Builds a store holding one session of 10,000 events (530 turns with
 * streamed text, a tool call and a receipt each) and an empty store, then
 * starts the app on each, alternately, in pairs: with --session on the
 * first, with nothing to show on the second. Prints the time from process
 * start to the first painted frame (reported by the app's
 * TALLY_BENCH_FIRST_FRAME hook) and the peak RSS of each run, the ratio of
 * each pair and the medians (issue 15: the goal is at most 1.3 times the
 * empty window, in time and in RSS). The very first open replays the log
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

/* One run of the app; returns the first frame in ms, sets *rss_kib and
 * *cpu_ms (user and system time until it quit, just after that frame). */
static double
run_app (const char *store_path,
         const char *session_id,
         long       *rss_kib,
         double     *cpu_ms)
{
  int pipefd[2];
  struct rusage usage;
  char buf[256] = { 0 };
  ssize_t len;
  int status;
  double first_frame;
  pid_t pid;

  g_assert_cmpint (pipe (pipefd), ==, 0);
  pid = fork ();
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_WRONLY);

      dup2 (pipefd[1], STDOUT_FILENO);
      dup2 (devnull, STDERR_FILENO);
      close (pipefd[0]);
      g_setenv ("TALLY_BENCH_FIRST_FRAME", "1", TRUE);
      /* The figures are with the cairo renderer. */
      g_setenv ("GSK_RENDERER", "cairo", FALSE);
      if (session_id != NULL)
        execl (TALLY_TEST_APP, TALLY_TEST_APP, "--store", store_path, "--session", session_id, (char *)NULL);
      else
        execl (TALLY_TEST_APP, TALLY_TEST_APP, "--store", store_path, (char *)NULL);
      _exit (127);
    }
  close (pipefd[1]);
  len = read (pipefd[0], buf, sizeof buf - 1);
  close (pipefd[0]);
  g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
  if (len <= 0 || sscanf (buf, "first-frame-ms %lf", &first_frame) != 1)
    g_error ("the app reported no first frame (exit status %d); is a display available?", status);
  *rss_kib = usage.ru_maxrss;
  *cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000.0 +
            (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000.0;
  return first_frame;
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

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = g_dir_make_tmp ("tally-bench-open-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *empty_path = g_build_filename (dir, "empty.db", NULL);
  const char *session_id = "b3c1d2e4-0000-4000-8000-000000010000";
  double open_ms[RUNS], empty_ms[RUNS], ratio[RUNS], open_rss[RUNS], empty_rss[RUNS];
  double open_cpu[RUNS], empty_cpu[RUNS];
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

  /* The log alone, as a store from before snapshots: the first open
   * replays it and writes the snapshot the later opens use (a live
   * session writes it when each turn settles). */
  rebuild_ms = run_app (path, session_id, &rss, &rebuild_cpu);

  for (guint i = 0; i < RUNS; i++)
    {
      empty_ms[i] = run_app (empty_path, NULL, &rss, &empty_cpu[i]);
      empty_rss[i] = rss / 1024.0;
      open_ms[i] = run_app (path, session_id, &rss, &open_cpu[i]);
      open_rss[i] = rss / 1024.0;
      ratio[i] = open_ms[i] / empty_ms[i];
    }

  g_print ("Open a stored session of %" G_GINT64_FORMAT " events in tally vs an empty store, "
           "first frame after process start (%d pairs, run alternately; GSK_RENDERER=%s):\n",
           seq, RUNS, g_getenv ("GSK_RENDERER") != NULL ? g_getenv ("GSK_RENDERER") : "cairo");
  g_print ("  first open, log only (replays it, writes the snapshot): %.1f ms (CPU %.1f ms)\n",
           rebuild_ms, rebuild_cpu);
  for (guint i = 0; i < RUNS; i++)
    g_print ("  pair %u: session %.1f ms, empty %.1f ms, ratio %.2f; CPU %.1f vs %.1f ms (%.2f); "
             "peak RSS %.1f vs %.1f MiB\n",
             i + 1, open_ms[i], empty_ms[i], ratio[i], open_cpu[i], empty_cpu[i], open_cpu[i] / empty_cpu[i],
             open_rss[i], empty_rss[i]);
  g_print ("  median: session %.1f ms, empty %.1f ms, ratio %.2f (median of the pairs' ratios %.2f)\n",
           tally_test_median (open_ms, RUNS), tally_test_median (empty_ms, RUNS),
           tally_test_median (open_ms, RUNS) / tally_test_median (empty_ms, RUNS), tally_test_median (ratio, RUNS));
  g_print ("  CPU time until exit, median: session %.1f ms, empty %.1f ms, ratio %.2f "
           "(less sensitive than wall time to a loaded machine)\n",
           tally_test_median (open_cpu, RUNS), tally_test_median (empty_cpu, RUNS),
           tally_test_median (open_cpu, RUNS) / tally_test_median (empty_cpu, RUNS));
  g_print ("  peak RSS, median: session %.1f MiB, empty %.1f MiB, ratio %.2f\n",
           tally_test_median (open_rss, RUNS), tally_test_median (empty_rss, RUNS),
           tally_test_median (open_rss, RUNS) / tally_test_median (empty_rss, RUNS));

  remove_store (path);
  remove_store (empty_path);
  g_rmdir (dir);
  return 0;
}
