/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "bench-startup"

#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <adwaita.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "tally-event.h"
#include "tally-plan-card-private.h"
#include "tally-store.h"
#include "tally-test-util.h"
#include "tally-transcript.h"
#include "tally-ui.h"

/*
 * Start-up and memory (issue 15, "Start like a hello world" and "Memory").
 *
 * Time: the first painted frame of an empty Tally window (a store with no
 * session) against a GTK 4 hello world (tests/bench/hello-gtk.c, a window
 * of the same size with one label), measured from just before the process
 * is spawned to the first "after-paint" of the window's frame clock, which
 * both report the same way (TALLY_BENCH_FIRST_FRAME, src/ui/main.c). Under
 * GSK_RENDERER=cairo and GSK_RENDERER=gl (Mesa's software renderer under
 * Xvfb), one uncounted warm-up round, then PAIRS rounds, each running the
 * GTK hello world, the libadwaita hello world (hello-gtk.c built as
 * hello-adw) and Tally one after the other; prints each round, the medians
 * and the ratios to the GTK hello world. The goal is Tally's; the
 * libadwaita hello world's CPU ratio is printed beside it as the part of
 * the budget that libadwaita's own start-up takes.
 *
 * Memory: RSS and PSS (/proc/PID/smaps_rollup) of the process and, summed,
 * of every process below it (WebKit's web and network processes, and the
 * bwrap and xdg-dbus-proxy of its sandbox), sampled every 100 ms while the
 * program runs on after its first frame; the largest sum is printed, with
 * the peak RSS of the process itself (VmHWM) and the web processes seen.
 * Scenarios: the hello world; Tally's empty window; Tally showing a session
 * without plan cards; Tally showing a session of twenty plans (the cards
 * its window shows); and twenty plan cards shown at once in one window
 * (this program run again with --plan-cards).
 *
 * Figures only; nothing about speed is asserted. Run under Xvfb:
 *   xvfb-run -a -s "-screen 0 1400x1000x24" \
 *     meson test -C build --benchmark --verbose bench-startup
 */

#define PAIRS          5
#define PLANS          20
#define SETTLE_US      (4 * G_USEC_PER_SEC)
#define SAMPLE_US      (100 * 1000)

typedef struct
{
  double exec_ms;        /* spawn to first frame */
  double main_ms;        /* main() to first frame, as the program says */
  double cpu_ms;         /* CPU time (all threads, from exec) to first frame */
  long   hwm_kb;         /* the process's peak RSS at the end */
  long   rss_kb;         /* largest RSS of the process seen */
  long   pss_kb;
  long   helper_rss_kb;  /* largest summed RSS of the processes below it */
  long   helper_pss_kb;
  guint  helpers;        /* most processes below it at once */
  guint  web_processes;  /* most WebKitWebProcess below it at once */
  guint  network_processes;
  guint  web_views;      /* --plan-cards: the cards that made a web view */
} Run;

/* /proc */

static long
read_kb_field (const char *path,
               const char *field)
{
  g_autofree char *text = NULL;
  const char *at;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  at = strstr (text, field);
  return at != NULL ? strtol (at + strlen (field), NULL, 10) : 0;
}

/* The parent of @pid from /proc/PID/stat ("PID (COMM) STATE PPID …"). */
static int
parent_of (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *after_comm;
  int ppid = 0;

  if (!g_file_get_contents (path, &stat, NULL, NULL) ||
      (after_comm = strrchr (stat, ')')) == NULL ||
      sscanf (after_comm + 1, " %*c %d", &ppid) != 1)
    return 0;
  return ppid;
}

/* Every process below @root (children, grandchildren, …). */
static GArray *
descendants_of (int root)
{
  g_autoptr(GHashTable) parent = g_hash_table_new (NULL, NULL);
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (int));
  GHashTableIter iter;
  gpointer key, value;
  const char *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      int pid = atoi (name);

      if (pid > 0)
        g_hash_table_insert (parent, GINT_TO_POINTER (pid), GINT_TO_POINTER (parent_of (pid)));
    }

  g_hash_table_iter_init (&iter, parent);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      int up = GPOINTER_TO_INT (value);

      for (guint depth = 0; up > 1 && up != root && depth < 32; depth++)
        up = GPOINTER_TO_INT (g_hash_table_lookup (parent, GINT_TO_POINTER (up)));
      if (up == root)
        {
          int pid = GPOINTER_TO_INT (key);
          g_array_append_val (out, pid);
        }
    }
  return out;
}

static void
sample (int  pid,
        Run *run)
{
  g_autofree char *rollup = g_strdup_printf ("/proc/%d/smaps_rollup", pid);
  g_autoptr(GArray) below = descendants_of (pid);
  long rss = 0, pss = 0;
  guint web = 0, network = 0;

  run->rss_kb = MAX (run->rss_kb, read_kb_field (rollup, "\nRss:"));
  run->pss_kb = MAX (run->pss_kb, read_kb_field (rollup, "\nPss:"));

  for (guint i = 0; i < below->len; i++)
    {
      int child = g_array_index (below, int, i);
      g_autofree char *path = g_strdup_printf ("/proc/%d/smaps_rollup", child);
      g_autofree char *comm_path = g_strdup_printf ("/proc/%d/comm", child);
      g_autofree char *comm = NULL;

      rss += read_kb_field (path, "\nRss:");
      pss += read_kb_field (path, "\nPss:");
      if (g_file_get_contents (comm_path, &comm, NULL, NULL))
        {
          /* comm is cut to 15 characters */
          web += g_str_has_prefix (comm, "WebKitWebProces");
          network += g_str_has_prefix (comm, "WebKitNetworkPr");
        }
    }

  run->helper_rss_kb = MAX (run->helper_rss_kb, rss);
  run->helper_pss_kb = MAX (run->helper_pss_kb, pss);
  run->helpers = MAX (run->helpers, below->len);
  run->web_processes = MAX (run->web_processes, web);
  run->network_processes = MAX (run->network_processes, network);
}

/* Running a program */

/* Spawns @argv with TALLY_BENCH_FIRST_FRAME=stay (it stays after its
 * first frame until its stdin closes), waits for its report, samples its
 * memory for @settle_us, then lets it go. With @ready_line, waits for a
 * line starting so after the first frame before settling. */
static void
run_program (const char * const *argv,
             const char         *renderer,
             const char         *ready_line,
             gint64              settle_us,
             Run                *run)
{
  GSubprocessFlags flags = G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                           G_SUBPROCESS_FLAGS_STDERR_SILENCE;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *status_path = NULL;
  gint64 frame_at = 0;
  gint64 start;
  int pid;

  memset (run, 0, sizeof *run);
  g_subprocess_launcher_setenv (launcher, "TALLY_BENCH_FIRST_FRAME", "stay", TRUE);
  if (renderer != NULL)
    g_subprocess_launcher_setenv (launcher, "GSK_RENDERER", renderer, TRUE);

  start = g_get_monotonic_time ();
  process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  if (process == NULL)
    g_error ("%s: %s", argv[0], error->message);
  pid = atoi (g_subprocess_get_identifier (process));
  status_path = g_strdup_printf ("/proc/%d/status", pid);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (process));

  for (;;)
    {
      g_autofree char *line = g_data_input_stream_read_line (out, NULL, NULL, &error);

      if (line == NULL)
        g_error ("%s stopped before its first frame (%s); is a display available?",
                 argv[0], error != NULL ? error->message : "end of output");
      if (sscanf (line, "first-frame-ms %lf", &run->main_ms) == 1 ||
          sscanf (line, "first-frame-cpu-ms %lf", &run->cpu_ms) == 1)
        continue;
      if (sscanf (line, "first-frame-at-us %" G_GINT64_FORMAT, &frame_at) == 1 && ready_line == NULL)
        break;
      if (ready_line != NULL && g_str_has_prefix (line, ready_line))
        {
          sscanf (line + strlen (ready_line), " %*u %u", &run->web_views);
          break;
        }
    }
  run->exec_ms = frame_at > 0 ? (frame_at - start) / 1000.0 : 0;

  for (gint64 end = g_get_monotonic_time () + settle_us;;)
    {
      sample (pid, run);
      if (g_get_monotonic_time () >= end)
        break;
      g_usleep (SAMPLE_US);
    }
  run->hwm_kb = read_kb_field (status_path, "VmHWM:");

  g_output_stream_close (g_subprocess_get_stdin_pipe (process), NULL, NULL);
  if (!g_subprocess_wait (process, NULL, &error))
    g_error ("%s", error->message);
}

/* --plan-cards: twenty plan cards at once */

static gboolean
all_cards_rendered (GPtrArray *cards)
{
  for (guint i = 0; i < cards->len; i++)
    {
      TallyPlanCard *card = g_ptr_array_index (cards, i);

      if (_tally_plan_card_get_content_height (card) == 0 &&
          _tally_plan_card_get_native_view (card) == NULL)
        return FALSE;
    }
  return TRUE;
}

static int
show_plan_cards (guint n)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(GPtrArray) cards = g_ptr_array_new ();
  GtkWidget *window, *scrolled, *box;
  gint64 deadline;
  guint web_views = 0;

  adw_init ();
  tally_ui_init ();

  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 900, 980);
  scrolled = gtk_scrolled_window_new ();
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), box);
  gtk_window_set_child (GTK_WINDOW (window), scrolled);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(JsonObject) event = tally_event_new (TALLY_EVENT_PLAN_PROPOSED);
      g_autofree char *plan_id = g_strdup_printf ("plan_%u", i + 1);
      g_autofree char *markdown = g_strdup_printf ("# Plan %u\n\n1. Query **monthly revenue** per store\n"
                                                   "2. Compare York with Leeds\n3. Write `report.md`\n", i + 1);
      g_autoptr(TallyBlock) block = NULL;
      GtkWidget *card = tally_plan_card_new ();

      json_object_set_string_member (event, "turn_id", "turn-1");
      json_object_set_string_member (event, "plan_id", plan_id);
      json_object_set_string_member (event, "markdown", markdown);
      json_object_set_int_member (event, "version", 1);
      tally_transcript_apply (transcript, event);
      block = g_list_model_get_item (G_LIST_MODEL (transcript),
                                     g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 1);
      tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), block);
      gtk_box_append (GTK_BOX (box), card);
      g_ptr_array_add (cards, card);
    }

  gtk_window_present (GTK_WINDOW (window));
  printf ("first-frame-ms 0\n");

  /* Every card has measured its page (or fallen back to the native view). */
  deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (!all_cards_rendered (cards) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < cards->len; i++)
    web_views += _tally_plan_card_get_web_view (g_ptr_array_index (cards, i)) != NULL;
  printf ("ready %u %u\n", all_cards_rendered (cards), web_views);
  fflush (stdout);

  /* The web processes live on by themselves while this one waits for
   * the benchmark to close stdin. */
  {
    char buf[64];

    while (read (STDIN_FILENO, buf, sizeof buf) > 0)
      ;
  }
  gtk_window_destroy (GTK_WINDOW (window));
  return 0;
}

/* The stores */

/* Appends one event, given as the JSON of its own fields (a printf
 * format), with the next seq and the time now. */
static void G_GNUC_PRINTF (4, 5)
add_event (TallyStore *store,
           const char *session_id,
           const char *turn_id,
           const char *format,
           ...)
{
  static gint64 seq;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) fields = NULL;
  g_autoptr(JsonObject) event = NULL;
  g_autofree char *json = NULL;
  va_list args;

  va_start (args, format);
  json = g_strdup_vprintf (format, args);
  va_end (args);
  fields = tally_test_parse_object (json);
  event = tally_event_stamp (fields, ++seq, g_get_real_time (), session_id, turn_id);
  if (!tally_store_append_event (store, event, &error))
    g_error ("%s", error->message);
}

/* A session of @turns turns, each a question and an answer, and with
 * @with_plans a plan card after each answer. */
static void
add_session (TallyStore *store,
             const char *session_id,
             guint       turns,
             gboolean    with_plans)
{
  add_event (store, session_id, NULL,
             "{\"type\": \"session_created\", \"title\": \"%s\", \"model\": \"claude-sonnet-5\", "
             "\"workspace\": null, \"database\": null}",
             with_plans ? "Twenty plans" : "Twenty answers");

  for (guint t = 0; t < turns; t++)
    {
      g_autofree char *turn_id = g_strdup_printf ("turn-%u", t + 1);

      add_event (store, session_id, turn_id,
                 "{\"type\": \"turn_started\", \"mode\": \"%s\", \"thinking\": false, \"budget_tokens\": 0, "
                 "\"model\": \"claude-sonnet-5\", \"text\": \"Which store sold the most in March?\"}",
                 with_plans ? "plan" : "ask");
      add_event (store, session_id, turn_id,
                 "{\"type\": \"text_delta\", \"call\": 1, \"block\": 0, "
                 "\"text\": \"Minster Yard in York sold the most: **£11,873**.\"}");
      if (with_plans)
        add_event (store, session_id, turn_id,
                   "{\"type\": \"plan_proposed\", \"plan_id\": \"plan_%u\", \"version\": 1, "
                   "\"markdown\": \"# Compare the stores\\n\\n1. Query March revenue\\n2. Rank the stores\\n\"}",
                   t + 1);
      add_event (store, session_id, turn_id,
                 "{\"type\": \"turn_finished\", \"status\": \"done\", \"cost_usd\": 0.01, "
                 "\"duration_ms\": 3000, \"api_calls\": 1}");
    }
}

static void
make_store (const char *path,
            gboolean    with_sessions)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (path, &error);

  if (store == NULL)
    g_error ("%s", error->message);
  if (with_sessions)
    {
      add_session (store, "b3c1d2e4-0000-4000-8000-00000000a001", PLANS, FALSE);
      add_session (store, "b3c1d2e4-0000-4000-8000-00000000a002", PLANS, TRUE);
    }
  if (!tally_store_flush (store, &error))
    g_error ("%s", error->message);
}

/* Printing */

static void
print_memory (const char *what,
              const Run  *run)
{
  g_print ("  %-44s %7.1f %7.1f %7.1f %5u %8.1f %8.1f %4u %4u\n", what,
           run->rss_kb / 1024.0, run->pss_kb / 1024.0, run->hwm_kb / 1024.0, run->helpers,
           run->helper_rss_kb / 1024.0, run->helper_pss_kb / 1024.0,
           run->web_processes, run->network_processes);
}

int
main (int    argc,
      char **argv)
{
  static const char *renderers[] = { "cairo", "gl" };
  g_autofree char *dir = NULL;
  g_autofree char *empty_store = NULL;
  g_autofree char *sessions_store = NULL;
  g_autofree char *self_exe = NULL;
  double median_ratio[G_N_ELEMENTS (renderers)];

  if (argc == 3 && g_str_equal (argv[1], "--plan-cards"))
    return show_plan_cards ((guint) atoi (argv[2]));

  dir = g_dir_make_tmp ("tally-bench-startup-XXXXXX", NULL);
  empty_store = g_build_filename (dir, "empty.db", NULL);
  sessions_store = g_build_filename (dir, "sessions.db", NULL);
  self_exe = g_file_read_link ("/proc/self/exe", NULL);
  /* Mesa keeps compiled shaders under the cache folder, as it does for an
   * analyst; without the folder every GL run would compile them anew. */
  g_mkdir_with_parents (g_get_user_cache_dir (), 0700);
  make_store (empty_store, FALSE);
  make_store (sessions_store, TRUE);

  {
    const char *hello[] = { HELLO_GTK, NULL };
    const char *adw[] = { HELLO_ADW, NULL };
    const char *tally[] = { TALLY_TEST_APP, "--store", empty_store, NULL };

    g_print ("First frame of an empty window, from spawn (ms): GTK 4 hello world vs tally with an empty store,\n"
             "%d rounds after one warm-up round, each running the hello world, the libadwaita hello world\n"
             "(tests/bench/hello-gtk.c built as hello-adw: the part of the budget libadwaita takes by itself)\n"
             "and tally, one after the other; \"main\" is from main() as the program says; \"cpu\" is the CPU\n"
             "time of the process (all its threads, from exec) at its first frame, which a loaded machine\n"
             "changes less than the wall clock\n",
             PAIRS);
    for (guint r = 0; r < G_N_ELEMENTS (renderers); r++)
      {
        double h[PAIRS], t[PAIRS], ratio[PAIRS], hm[PAIRS], tm[PAIRS], hc[PAIRS], tc[PAIRS], cpu_ratio[PAIRS];
        double a[PAIRS], ac[PAIRS], adw_ratio[PAIRS];
        Run run;

        run_program (hello, renderers[r], NULL, 0, &run);
        run_program (adw, renderers[r], NULL, 0, &run);
        run_program (tally, renderers[r], NULL, 0, &run);

        g_print ("  %-6s %-6s %9s %9s %9s %7s %11s %11s %9s %9s %9s %7s %7s\n", "render", "round", "hello", "adw",
                 "tally", "ratio", "hello main", "tally main", "hello cpu", "adw cpu", "tally cpu", "ratio",
                 "adw");
        for (guint i = 0; i < PAIRS; i++)
          {
            run_program (hello, renderers[r], NULL, 0, &run);
            h[i] = run.exec_ms;
            hm[i] = run.main_ms;
            hc[i] = run.cpu_ms;
            run_program (adw, renderers[r], NULL, 0, &run);
            a[i] = run.exec_ms;
            ac[i] = run.cpu_ms;
            run_program (tally, renderers[r], NULL, 0, &run);
            t[i] = run.exec_ms;
            tm[i] = run.main_ms;
            tc[i] = run.cpu_ms;
            ratio[i] = t[i] / h[i];
            cpu_ratio[i] = hc[i] > 0 ? tc[i] / hc[i] : 0;
            adw_ratio[i] = hc[i] > 0 ? ac[i] / hc[i] : 0;
            g_print ("  %-6s %-6u %9.1f %9.1f %9.1f %6.2fx %11.1f %11.1f %9.1f %9.1f %9.1f %6.2fx %6.2fx\n",
                     renderers[r], i + 1, h[i], a[i], t[i], ratio[i], hm[i], tm[i], hc[i], ac[i], tc[i],
                     cpu_ratio[i], adw_ratio[i]);
          }
        median_ratio[r] = tally_test_median (ratio, PAIRS);
        {
          double mh = tally_test_median (h, PAIRS), mt = tally_test_median (t, PAIRS);
          double mhc = tally_test_median (hc, PAIRS), mtc = tally_test_median (tc, PAIRS);
          double mac = tally_test_median (ac, PAIRS);

          g_print ("  %-6s %-6s %9.1f %9.1f %9.1f %6.2fx %11.1f %11.1f %9.1f %9.1f %9.1f %6.2fx %6.2fx\n",
                   renderers[r], "median", mh, tally_test_median (a, PAIRS), mt, mt / mh,
                   tally_test_median (hm, PAIRS), tally_test_median (tm, PAIRS), mhc, mac, mtc,
                   mhc > 0 ? mtc / mhc : 0, mhc > 0 ? mac / mhc : 0);
          g_print ("  %-6s median of the round ratios to the GTK hello world: tally time %.2fx, tally cpu %.2fx,"
                   " libadwaita hello world cpu %.2fx\n", renderers[r], median_ratio[r],
                   tally_test_median (cpu_ratio, PAIRS), tally_test_median (adw_ratio, PAIRS));
        }
      }
    g_print ("  goal: at most 1.3x the hello world under both renderers: cairo %.2fx, gl %.2fx\n\n",
             median_ratio[0], median_ratio[1]);
  }

  {
    const char *hello[] = { HELLO_GTK, NULL };
    const char *empty[] = { TALLY_TEST_APP, "--store", empty_store, NULL };
    const char *answers[] = { TALLY_TEST_APP, "--store", sessions_store,
                              "--session", "b3c1d2e4-0000-4000-8000-00000000a001", NULL };
    const char *plans[] = { TALLY_TEST_APP, "--store", sessions_store,
                            "--session", "b3c1d2e4-0000-4000-8000-00000000a002", NULL };
    g_autofree char *count = g_strdup_printf ("%d", PLANS);
    const char *cards[] = { self_exe, "--plan-cards", count, NULL };
    g_autofree char *cards_label = g_strdup_printf ("%d plan cards shown at once (one window)", PLANS);
    Run run;

    g_print ("Memory (MiB), the largest seen from the first frame to %d s after it (cairo):\n"
             "  \"below\" sums every process under the program (WebKit's web and network processes, bwrap, "
             "xdg-dbus-proxy)\n", (int) (SETTLE_US / G_USEC_PER_SEC));
    g_print ("  %-44s %7s %7s %7s %5s %8s %8s %4s %4s\n", "program", "RSS", "PSS", "peak", "below",
             "RSS", "PSS", "web", "net");
    run_program (hello, "cairo", NULL, SETTLE_US, &run);
    print_memory ("GTK 4 hello world", &run);
    run_program (empty, "cairo", NULL, SETTLE_US, &run);
    print_memory ("tally, empty window", &run);
    run_program (answers, "cairo", NULL, SETTLE_US, &run);
    print_memory ("tally, a session of 20 answers, no plan", &run);
    run_program (plans, "cairo", NULL, SETTLE_US, &run);
    print_memory ("tally, a session of 20 answers with plans", &run);
    run_program (cards, "cairo", "ready", SETTLE_US, &run);
    print_memory (cards_label, &run);
    g_print ("  (%u of the %d plan cards show their plan in a web view)\n", run.web_views, PLANS);
  }

  {
    const char *names[] = { "empty.db", "sessions.db" };

    for (guint i = 0; i < G_N_ELEMENTS (names); i++)
      for (const char *suffix = ""; suffix != NULL;
           suffix = g_str_equal (suffix, "") ? "-wal" : g_str_equal (suffix, "-wal") ? "-shm" : NULL)
        {
          g_autofree char *path = g_strconcat (dir, G_DIR_SEPARATOR_S, names[i], suffix, NULL);
          g_unlink (path);
        }
    g_rmdir (dir);
  }
  return 0;
}
