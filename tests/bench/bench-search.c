/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Benchmark: search across 1,000 saved sessions of 1,000 events each
 * (issue 15: keystroke to results at most 50 ms p95, the main loop never
 * blocked).
 *
 * Generates, with a seeded PRNG and through the store's own writer (so the
 * full-text index is filled the way the app fills it), 1,000 sessions of
 * 1,000 events: prompts, streamed assistant text, query_database calls and
 * their results. The store is kept in the build folder between runs
 * (bench-search-v3/tally.db; delete it to regenerate); the time to make it
 * is printed.
 *
 * Then it runs the real window on that store (TallyApplication and
 * TallyWindow in this process, under Xvfb) and types queries into the
 * sidebar's search entry one character at a time, a key every 150 ms: a
 * word in most sessions, a rare word, a prefix, two words, a word in no
 * session, and text full of FTS5 syntax. For each key it times from the
 * entry's text change to the sidebar showing that text's final results:
 * the window's search has answered and been applied (it no longer counts
 * as refreshing) and the frame after that has been painted. A key whose
 * results are not shown before the next key is counted as superseded, at
 * the time to the next key (a lower bound). It prints count, median, p95
 * and max per kind of query and overall, and the longest gap between two
 * beats of a 1 ms main-loop heartbeat while typing (the longest stall;
 * the frame budget is 16.7 ms). The same typing on an empty store is the
 * baseline. For the keys shown it also prints the medians of where the
 * time went: the keystroke's own work (the entry and the title filter, up
 * to the end of search-changed), the store's search of the same texts
 * timed on its own afterwards (the part spent in the search thread), the
 * key to the window having applied the store's answer (the end of the
 * search task, seen through its cancellable), and the layout and paint of
 * the frame after it (between an emission hook, which runs before the
 * window's own handler, and a handler of ours, which runs after it).
 * Last, it lists the sessions again as the window does after a turn, a
 * rename, a pin or a deletion, and prints the time until the list is
 * shown and the longest stall meanwhile.
 * Prints figures only; asserts nothing about speed. With BENCH_SEARCH_KEYS
 * set in the environment it also prints a line per key shown: the text
 * typed so far, its time and the parts above.
 *
 * Run under Xvfb: xvfb-run -a meson test -C build --benchmark bench-search
 */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally-event.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-window-private.h"

#define N_SESSIONS          1000
#define EVENTS_PER_SESSION  1000
#define KEY_INTERVAL_US     (150 * 1000)
#define RESULT_TIMEOUT_US   (10 * G_USEC_PER_SEC)
#define STORE_VERSION       "bench-search-v3"
/* The window never calls the real API (nothing listens on the discard
 * port); without --base-url it looked up the public endpoint. */
#define NO_API              "http://127.0.0.1:9"

/* {{{ The generated store */

static const char *cities[] = {
  "York", "Leeds", "Bristol", "Manchester", "Glasgow", "Cardiff", "Norwich", "Brighton",
};
static const char *products[] = {
  "flat white", "latte", "cappuccino", "cold brew", "croissant", "banana bread",
  "oat milk", "espresso", "chai", "sourdough toast", "mocha", "americano",
};
static const char *metrics[] = {
  "revenue", "margin", "waste", "footfall", "basket size", "refunds", "wastage", "units sold",
};
static const char *periods[] = {
  "last week", "in March", "this quarter", "since January", "over the summer", "per weekday",
};
static const char *
pick (GRand        *rand,
      const char  **words,
      guint         n)
{
  return words[g_rand_int_range (rand, 0, n)];
}

#define PICK(rand, words) pick (rand, words, G_N_ELEMENTS (words))

typedef struct {
  TallyStore *store;
  const char *session_id;
  gint64      seq;
  gint64      ts;
} Writer;

static void
append (Writer     *w,
        const char *turn_id,
        JsonObject *fields)
{
  g_autoptr(JsonObject) event = NULL;
  g_autoptr(GError) error = NULL;

  w->ts += 1500;
  event = tally_event_stamp (fields, ++w->seq, w->ts, w->session_id, turn_id);
  json_object_unref (fields);
  if (!tally_store_append_event (w->store, event, &error))
    g_error ("append: %s", error->message);
}

static char *
make_sentence (GRand *rand)
{
  guint n = g_rand_int_range (rand, 2, 400);

  switch (g_rand_int_range (rand, 0, 6))
    {
    case 0:
      return g_strdup_printf ("%s sold %u more %s than %s %s. ", PICK (rand, cities), n,
                              PICK (rand, products), PICK (rand, cities), PICK (rand, periods));
    case 1:
      return g_strdup_printf ("The %s of %s rose %u%% %s, mostly from %s. ", PICK (rand, metrics),
                              PICK (rand, cities), n, PICK (rand, periods), PICK (rand, products));
    case 2:
      return g_strdup_printf ("Against %s, %s fell by %u units %s; %s held steady. ", PICK (rand, cities),
                              PICK (rand, products), n, PICK (rand, periods), PICK (rand, products));
    case 3:
      return g_strdup_printf ("I queried the sales table for %s and %s: %u rows came back %s, %s included. ",
                              PICK (rand, cities), PICK (rand, metrics), n, PICK (rand, periods),
                              PICK (rand, products));
    case 4:
      return g_strdup_printf ("A forecast for %s puts %s about %u%% higher %s than %s. ", PICK (rand, cities),
                              PICK (rand, products), n, PICK (rand, periods), PICK (rand, cities));
    default:
      return g_strdup_printf ("| %s | %s | %u | %s |\n", PICK (rand, cities), PICK (rand, products), n,
                              PICK (rand, periods));
    }
}

static char *
make_prompt (GRand *rand)
{
  switch (g_rand_int_range (rand, 0, 5))
    {
    case 0:
      return g_strdup_printf ("How did %s %s compare with %s %s?", PICK (rand, cities), PICK (rand, metrics),
                              PICK (rand, cities), PICK (rand, periods));
    case 1:
      return g_strdup_printf ("Show me %s for %s in %s %s.", PICK (rand, metrics), PICK (rand, products),
                              PICK (rand, cities), PICK (rand, periods));
    case 2:
      return g_strdup_printf ("Which stores beat %s on %s %s? Break it down by %s.", PICK (rand, cities),
                              PICK (rand, metrics), PICK (rand, periods), PICK (rand, products));
    case 3:
      return g_strdup_printf ("Plot %s against %s for %s, %s.", PICK (rand, metrics), PICK (rand, metrics),
                              PICK (rand, products), PICK (rand, periods));
    default:
      return g_strdup_printf ("Why did %s drop in %s %s, and was %s involved?", PICK (rand, metrics),
                              PICK (rand, cities), PICK (rand, periods), PICK (rand, products));
    }
}

/* One session of exactly EVENTS_PER_SESSION events: turns of a prompt, a
 * query_database call and its result, 40 text deltas and the finish. Three
 * sessions in a thousand mention a pistachio pastry (the rare word). */
static void
build_session (TallyStore *store,
               GRand      *rand,
               guint       index,
               gint64      start_us)
{
  g_autofree char *session_id = g_strdup_printf ("5e55%04x-0000-4000-8000-%012x", index, index);
  g_autofree char *title = make_prompt (rand);
  Writer w = { store, session_id, 0, start_us };
  JsonObject *f;

  f = tally_event_new (TALLY_EVENT_SESSION_CREATED);
  title[MIN (strlen (title), 60)] = '\0';
  json_object_set_string_member (f, "title", title);
  json_object_set_string_member (f, "model", "claude-sonnet-5");
  json_object_set_null_member (f, "workspace");
  json_object_set_null_member (f, "database");
  append (&w, NULL, f);

  for (guint t = 0; w.seq < EVENTS_PER_SESSION; t++)
    {
      g_autofree char *turn_id = g_strdup_printf ("turn-%u", t);
      g_autofree char *tool_id = g_strdup_printf ("toolu_%04u_%u", index, t);
      g_autofree char *prompt = make_prompt (rand);
      g_autofree char *sql = NULL;
      g_autofree char *rows = NULL;
      JsonObject *input;
      guint deltas;

      /* Leave room for the finish of the last turn. */
      deltas = MIN (40, (guint)(EVENTS_PER_SESSION - w.seq - 4));

      f = tally_event_new (TALLY_EVENT_TURN_STARTED);
      json_object_set_string_member (f, "mode", "ask");
      json_object_set_boolean_member (f, "thinking", FALSE);
      json_object_set_int_member (f, "budget_tokens", 0);
      json_object_set_string_member (f, "model", "claude-sonnet-5");
      json_object_set_string_member (f, "text", prompt);
      append (&w, turn_id, f);

      sql = g_strdup_printf ("SELECT store, SUM(amount) AS revenue_gbp FROM sales WHERE city = '%s' "
                             "GROUP BY store ORDER BY 2 DESC", PICK (rand, cities));
      input = json_object_new ();
      json_object_set_string_member (input, "sql", sql);
      f = tally_event_new (TALLY_EVENT_TOOL_USE_START);
      json_object_set_string_member (f, "tool_id", tool_id);
      json_object_set_string_member (f, "tool_name", "query_database");
      json_object_set_object_member (f, "tool_input", input);
      append (&w, turn_id, f);

      rows = g_strdup_printf ("store | revenue_gbp\n%s Station | %u.50\n%s Market | %u.25\n(2 rows)",
                              PICK (rand, cities), g_rand_int_range (rand, 1000, 20000),
                              PICK (rand, cities), g_rand_int_range (rand, 1000, 20000));
      f = tally_event_new (TALLY_EVENT_TOOL_RESULT);
      json_object_set_string_member (f, "tool_id", tool_id);
      json_object_set_string_member (f, "content", rows);
      json_object_set_boolean_member (f, "is_error", FALSE);
      json_object_set_int_member (f, "duration_ms", g_rand_int_range (rand, 2, 90));
      append (&w, turn_id, f);

      for (guint d = 0; d < deltas; d++)
        {
          g_autofree char *text = NULL;

          if (d == 0)
            text = g_strdup ("## Summary\n\n");
          else if (d == deltas / 2 && t == 3 && index % 333 == 7)
            text = g_strdup ("The new pistachio croissant sold out by noon in every store. ");
          else
            text = make_sentence (rand);
          f = tally_event_new (TALLY_EVENT_TEXT_DELTA);
          json_object_set_int_member (f, "call", 1);
          json_object_set_int_member (f, "block", 0);
          json_object_set_string_member (f, "text", text);
          append (&w, turn_id, f);
        }

      f = tally_event_new (TALLY_EVENT_TURN_FINISHED);
      json_object_set_string_member (f, "status", "done");
      json_object_set_double_member (f, "cost_usd", g_rand_double_range (rand, 0.002, 0.09));
      json_object_set_int_member (f, "duration_ms", g_rand_int_range (rand, 900, 30000));
      json_object_set_int_member (f, "api_calls", g_rand_int_range (rand, 1, 4));
      tally_event_set_usage (f, "usage", g_rand_int_range (rand, 900, 9000), g_rand_int_range (rand, 80, 900), 0, 0);
      append (&w, turn_id, f);
    }
}

static void
generate_store (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (path, &error);
  g_autoptr(GRand) rand = g_rand_new_with_seed (15);
  gint64 now = g_get_real_time ();
  gint64 start = g_get_monotonic_time ();

  if (store == NULL)
    g_error ("%s", error->message);
  for (guint i = 0; i < N_SESSIONS; i++)
    {
      /* One session every two hours or so, the newest a minute ago. */
      build_session (store, rand, i, now - (gint64)(N_SESSIONS - i) * 2 * 3600 * G_USEC_PER_SEC);
      if (i % 50 == 49 && !tally_store_flush (store, &error))
        g_error ("%s", error->message);
    }
  if (!tally_store_flush (store, &error))
    g_error ("%s", error->message);
  printf ("generated %u sessions x %u events in %.1f s\n", N_SESSIONS, EVENTS_PER_SESSION,
          (g_get_monotonic_time () - start) / 1e6);
}

/* }}} */

/* {{{ Typing into the window */

typedef struct {
  const char *kind;
  const char *text;
} Query;

static const Query queries[] = {
  { "common word", "revenue" },
  { "rare word", "pistachio" },
  { "prefix", "wast" },
  { "two words", "york latte" },
  { "no match", "zanzibar" },
  { "fts syntax", "\"oat\" NEAR(-milk* (" },
};

/* Where the time of the keys shown went (ms, one value per key whose
 * results were shown): the keystroke's own work (the entry and the title
 * filter, up to the end of search-changed), the store's search of that
 * text timed on its own, the key to the window having applied the
 * store's answer, and the layout and paint of the frame after it. */
enum {
  PART_KEY,
  PART_STORE,
  PART_APPLIED,
  PART_LAYOUT,
  PART_PAINT,
  N_PARTS
};

static const char *part_names[N_PARTS] = {
  "keystroke+title filter", "store search (alone)", "key to answer applied", "frame layout", "frame paint",
};

typedef struct {
  GArray *per_kind[G_N_ELEMENTS (queries)];  /* double, ms */
  GArray *parts[G_N_ELEMENTS (queries)][N_PARTS];  /* double, ms */
  guint   superseded[G_N_ELEMENTS (queries)];
  guint   hits[G_N_ELEMENTS (queries)];      /* rows shown for the whole text */
  double  cpu_ms[G_N_ELEMENTS (queries)];    /* the main thread's, while typing */
  gint64  longest_stall;
  gboolean search_changed;
  gboolean painted;
  gint64   changed_at;   /* µs, the end of the key's search-changed */
  gint64   applied_at;   /* µs, the window's answer applied (its task gone) */
  gpointer watched;      /* the window's search cancellable of this key */
  gint64   phase_start;  /* µs, a frame phase began (emission hook) */
  gint64   layout_us;    /* the frame's layout phase, µs */
  gint64   paint_us;     /* the frame's paint phase, µs */
  gboolean print_keys;   /* BENCH_SEARCH_KEYS set: a line per key */
} Run;

/* One run at a time, and a search task of a key that was not waited for
 * may end after its run's figures are printed. */
static Run the_run;

/* CPU time of the calling thread, ms */
static double
thread_cpu_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void
search_changed_cb (GtkSearchEntry *entry,
                   Run            *run)
{
  run->search_changed = TRUE;
  run->changed_at = g_get_monotonic_time ();
}

/* The window's search task holds the last reference to its cancellable
 * and drops it just after the window applied the answer. */
static void
search_done_cb (gpointer  data,
                GObject  *cancellable)
{
  Run *run = data;

  if ((gpointer)cancellable == run->watched)
    {
      run->applied_at = g_get_monotonic_time ();
      run->watched = NULL;
    }
}

/* Emission hooks run before every handler, the window's own included. */
static gboolean
phase_start_hook (GSignalInvocationHint *hint,
                  guint                  n_params,
                  const GValue          *params,
                  gpointer               data)
{
  Run *run = data;

  run->phase_start = g_get_monotonic_time ();
  return TRUE;
}

static void
layout_cb (GdkFrameClock *clock,
           Run           *run)
{
  run->layout_us += g_get_monotonic_time () - run->phase_start;
}

static void
paint_cb (GdkFrameClock *clock,
          Run           *run)
{
  run->paint_us += g_get_monotonic_time () - run->phase_start;
}

static void
after_paint_cb (GdkFrameClock *clock,
                Run           *run)
{
  run->painted = TRUE;
}

static guint
count_shown_rows (TallyWindow *window)
{
  GtkListBox *list = _tally_window_get_session_list (window);
  guint shown = 0;
  GtkListBoxRow *row;

  if (g_strcmp0 (_tally_window_get_sidebar_page (window), "list") != 0)
    return 0;
  for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    if (gtk_widget_get_child_visible (GTK_WIDGET (row)))
      shown++;
  return shown;
}

static gboolean
wake_cb (gpointer data)
{
  *(guint *)data = 0;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until @deadline (monotonic µs); a timeout wakes it
 * then even when nothing else is due. */
static void
spin_until_time (gint64 deadline)
{
  gint64 left = deadline - g_get_monotonic_time ();
  guint wake = left > 0 ? g_timeout_add ((left + 999) / 1000, wake_cb, &wake) : 0;

  while (g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_clear_handle_id (&wake, g_source_remove);
}

/* Types @query one character at a time into the search entry, a key every
 * KEY_INTERVAL_US, and adds each key's time to results to @times. */
static void
type_query (TallyWindow *window,
            Run         *run,
            guint        q)
{
  GtkEditable *entry = GTK_EDITABLE (_tally_window_get_search_entry (window));
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  const char *text = queries[q].text;
  TallyTestStallMeter meter = { 0 };
  gint64 stall;

  /* Start from an empty entry with nothing pending. */
  gtk_editable_set_text (entry, "");
  while (_tally_window_is_refreshing (window))
    g_main_context_iteration (NULL, TRUE);
  spin_until_time (g_get_monotonic_time () + 300 * 1000);

  tally_test_stall_meter_start (&meter);
  run->cpu_ms[q] = thread_cpu_ms ();
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gint64 key_time, next_key, applied_deadline;
      gboolean last = *g_utf8_next_char (p) == '\0';
      int position = g_utf8_strlen (gtk_editable_get_text (entry), -1);
      gboolean shown = FALSE;

      run->search_changed = FALSE;
      run->applied_at = 0;
      run->watched = NULL;
      key_time = g_get_monotonic_time ();
      next_key = key_time + KEY_INTERVAL_US;
      applied_deadline = last ? key_time + RESULT_TIMEOUT_US : next_key;
      gtk_editable_insert_text (entry, p, g_utf8_next_char (p) - p, &position);
      gtk_editable_set_position (entry, position);
      while (!run->search_changed && g_get_monotonic_time () < applied_deadline)
        g_main_context_iteration (NULL, TRUE);
      if (window->search_cancellable != NULL)
        {
          run->watched = window->search_cancellable;
          g_object_weak_ref (G_OBJECT (window->search_cancellable), search_done_cb, run);
        }

      /* The search for this text has been applied … */
      while (g_get_monotonic_time () < applied_deadline &&
             !(run->search_changed && !_tally_window_is_refreshing (window)))
        g_main_context_iteration (NULL, TRUE);
      if (run->search_changed && !_tally_window_is_refreshing (window))
        {
          /* … and the next frame is painted. */
          run->painted = FALSE;
          run->layout_us = run->paint_us = 0;
          gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_PAINT);
          while (!run->painted && g_get_monotonic_time () < applied_deadline)
            g_main_context_iteration (NULL, TRUE);
          shown = run->painted;
        }
      if (shown)
        {
          double ms = (g_get_monotonic_time () - key_time) / 1000.0;
          double parts[N_PARTS] = {
            (run->changed_at - key_time) / 1000.0,
            0,  /* timed on its own afterwards: time_store_searches() */
            /* An empty text or one without a word needs no store. */
            run->applied_at > 0 ? (run->applied_at - key_time) / 1000.0 : (run->changed_at - key_time) / 1000.0,
            run->layout_us / 1000.0,
            run->paint_us / 1000.0,
          };

          g_array_append_val (run->per_kind[q], ms);
          for (guint i = 0; i < N_PARTS; i++)
            if (i != PART_STORE)
              g_array_append_val (run->parts[q][i], parts[i]);
          if (run->print_keys)
            printf ("key %-22.*s %7.1f ms  keystroke %5.1f  applied %5.1f  layout %5.1f  paint %5.1f\n",
                    (int)(g_utf8_next_char (p) - text), text, ms, parts[PART_KEY], parts[PART_APPLIED],
                    parts[PART_LAYOUT], parts[PART_PAINT]);
        }
      else
        {
          double ms = KEY_INTERVAL_US / 1000.0;

          if (last)
            g_error ("no results for “%s” within %d s", text, (int)(RESULT_TIMEOUT_US / G_USEC_PER_SEC));
          g_array_append_val (run->per_kind[q], ms);
          run->superseded[q]++;
        }
      if (!last)
        spin_until_time (next_key);
    }
  stall = tally_test_stall_meter_stop (&meter);
  run->cpu_ms[q] = thread_cpu_ms () - run->cpu_ms[q];
  run->longest_stall = MAX (run->longest_stall, stall);
  run->hits[q] = count_shown_rows (window);
}

/* }}} */

/* {{{ Figures */

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static double
median_of (GArray *values)
{
  g_autofree double *sorted = NULL;
  guint n = values->len;

  if (n == 0)
    return 0;
  sorted = g_memdup2 (values->data, n * sizeof (double));
  qsort (sorted, n, sizeof (double), compare_doubles);
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* Times the store's search of every text typed for @q (each prefix of
 * its query), in this thread with nothing else running: the part of a
 * key's time spent in the search thread. */
static void
time_store_searches (TallyStore *store,
                     Run        *run,
                     guint       q)
{
  const char *text = queries[q].text;

  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      g_autofree char *typed = g_strndup (text, g_utf8_next_char (p) - text);
      g_autoptr(GPtrArray) hits = NULL;
      g_autoptr(GError) error = NULL;
      gint64 start = g_get_monotonic_time ();
      double ms;

      hits = tally_store_search (store, typed, &error);
      g_assert_no_error (error);
      ms = (g_get_monotonic_time () - start) / 1000.0;
      g_array_append_val (run->parts[q][PART_STORE], ms);
    }
}

/* The medians of where the time of @kind's keys went */
static void
print_parts (const char  *store_name,
             const char  *kind,
             GArray     **parts)
{
  printf ("%-6s %-12s medians:", store_name, kind);
  for (guint i = 0; i < N_PARTS; i++)
    printf ("  %s %.1f ms", part_names[i], median_of (parts[i]));
  printf ("\n");
}

static void
print_stats (const char *store_name,
             const char *kind,
             GArray     *times,
             guint       superseded,
             double      cpu_ms,
             int         hits)
{
  g_autofree double *sorted = g_memdup2 (times->data, times->len * sizeof (double));
  guint n = times->len;
  double median, p95;

  qsort (sorted, n, sizeof (double), compare_doubles);
  median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  /* The nearest-rank p95. */
  p95 = sorted[MAX ((guint)((0.95 * n) + 0.999999), 1) - 1];
  printf ("%-6s %-12s keys %3u  median %7.1f ms  p95 %7.1f ms  max %7.1f ms  superseded %2u  "
          "main-thread CPU %5.1f ms/key",
          store_name, kind, n, median, p95, sorted[n - 1], superseded, cpu_ms / n);
  if (hits >= 0)
    printf ("  rows shown %d", hits);
  printf ("\n");
}

typedef struct {
  const char *name;
  gint64      longest_stall;
} BodyData;

/* Lists the sessions again, as the window does after each finished turn,
 * rename, pin or deletion, and prints how long until the sidebar shows
 * the list and the longest main-loop stall meanwhile. */
static void
time_refresh (TallyWindow *window,
              const char  *name)
{
  TallyTestStallMeter meter = { 0 };
  gint64 start, stall;
  double cpu;

  tally_test_stall_meter_start (&meter);
  cpu = thread_cpu_ms ();
  start = g_get_monotonic_time ();
  _tally_window_refresh_sessions (window);
  while (_tally_window_is_refreshing (window))
    g_main_context_iteration (NULL, TRUE);
  tally_test_wait_frames (GTK_WIDGET (window), 1);
  stall = tally_test_stall_meter_stop (&meter);
  printf ("%-6s refresh of the list: %.1f ms to shown, main-thread CPU %.1f ms, longest stall %.1f ms\n",
          name, (g_get_monotonic_time () - start) / 1000.0, thread_cpu_ms () - cpu, stall / 1000.0);
}

static void
bench_body (TallyApplication *app,
            TallyWindow      *window,
            gpointer          user_data)
{
  BodyData *data = user_data;
  GtkSearchEntry *entry = _tally_window_get_search_entry (window);
  GdkFrameClock *clock;
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *all_parts[N_PARTS];
  Run *run = &the_run;
  guint superseded = 0;
  guint layout_hook, paint_hook;
  double cpu_ms = 0;
  double listing_cpu = thread_cpu_ms ();
  gint64 start = g_get_monotonic_time ();
  TallyTestStallMeter listing = { 0 };

  tally_test_stall_meter_start (&listing);
  while (_tally_window_is_refreshing (window) && g_get_monotonic_time () - start < 120 * G_USEC_PER_SEC)
    g_main_context_iteration (NULL, TRUE);
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  printf ("%-6s window listed %u rows after %.1f ms (main-thread CPU %.1f ms, longest stall %.1f ms)\n",
          data->name, count_shown_rows (window), (g_get_monotonic_time () - start) / 1000.0,
          thread_cpu_ms () - listing_cpu, tally_test_stall_meter_stop (&listing) / 1000.0);

  memset (run, 0, sizeof *run);
  run->print_keys = g_getenv ("BENCH_SEARCH_KEYS") != NULL;
  g_signal_connect_after (entry, "search-changed", G_CALLBACK (search_changed_cb), run);
  g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), run);
  g_signal_connect (clock, "layout", G_CALLBACK (layout_cb), run);
  g_signal_connect (clock, "paint", G_CALLBACK (paint_cb), run);
  layout_hook = g_signal_add_emission_hook (g_signal_lookup ("layout", GDK_TYPE_FRAME_CLOCK), 0,
                                            phase_start_hook, run, NULL);
  paint_hook = g_signal_add_emission_hook (g_signal_lookup ("paint", GDK_TYPE_FRAME_CLOCK), 0,
                                           phase_start_hook, run, NULL);

  for (guint q = 0; q < G_N_ELEMENTS (queries); q++)
    {
      run->per_kind[q] = g_array_new (FALSE, FALSE, sizeof (double));
      for (guint i = 0; i < N_PARTS; i++)
        run->parts[q][i] = g_array_new (FALSE, FALSE, sizeof (double));
      type_query (window, run, q);
    }

  g_signal_remove_emission_hook (g_signal_lookup ("layout", GDK_TYPE_FRAME_CLOCK), layout_hook);
  g_signal_remove_emission_hook (g_signal_lookup ("paint", GDK_TYPE_FRAME_CLOCK), paint_hook);
  g_signal_handlers_disconnect_by_data (entry, run);
  g_signal_handlers_disconnect_by_data (clock, run);
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  while (_tally_window_is_refreshing (window))
    g_main_context_iteration (NULL, TRUE);
  for (guint q = 0; q < G_N_ELEMENTS (queries); q++)
    time_store_searches (tally_application_get_store (app), run, q);

  for (guint i = 0; i < N_PARTS; i++)
    all_parts[i] = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint q = 0; q < G_N_ELEMENTS (queries); q++)
    {
      print_stats (data->name, queries[q].kind, run->per_kind[q], run->superseded[q], run->cpu_ms[q], run->hits[q]);
      print_parts (data->name, queries[q].kind, run->parts[q]);
      cpu_ms += run->cpu_ms[q];
      g_array_append_vals (all, run->per_kind[q]->data, run->per_kind[q]->len);
      superseded += run->superseded[q];
      g_array_unref (run->per_kind[q]);
      for (guint i = 0; i < N_PARTS; i++)
        {
          g_array_append_vals (all_parts[i], run->parts[q][i]->data, run->parts[q][i]->len);
          g_array_unref (run->parts[q][i]);
        }
    }
  print_stats (data->name, "overall", all, superseded, cpu_ms, -1);
  print_parts (data->name, "overall", all_parts);
  for (guint i = 0; i < N_PARTS; i++)
    g_array_unref (all_parts[i]);
  printf ("%-6s longest main-loop stall while typing: %.1f ms (frame budget 16.7 ms)\n",
          data->name, run->longest_stall / 1000.0);
  data->longest_stall = run->longest_stall;
  time_refresh (window, data->name);
}

/* }}} */

int
main (int    argc,
      char **argv)
{
  g_autofree char *home = NULL;
  const char *builddir = g_getenv ("G_TEST_BUILDDIR");
  g_autofree char *cache = g_build_filename (builddir != NULL ? builddir : ".", STORE_VERSION, NULL);
  g_autofree char *path = g_build_filename (cache, "tally.db", NULL);
  g_autofree char *done = g_build_filename (cache, "complete", NULL);
  g_autofree char *empty_dir = NULL;
  g_autofree char *empty_path = NULL;
  BodyData full = { "1000s", 0 }, empty = { "empty", 0 };

  /* The figures are with the cairo renderer. */
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  home = tally_test_app_init (&argc, &argv);
  empty_dir = g_dir_make_tmp ("tally-bench-search-XXXXXX", NULL);
  empty_path = g_build_filename (empty_dir, "tally.db", NULL);

  if (!g_file_test (done, G_FILE_TEST_EXISTS))
    {
      tally_test_remove_tree (cache);
      g_assert_cmpint (g_mkdir_with_parents (cache, 0700), ==, 0);
      generate_store (path);
      g_assert_true (g_file_set_contents (done, "", 0, NULL));
    }
  else
    printf ("using the store generated before in %s\n", cache);

  {
    const char *args[] = { "--store", empty_path, "--base-url", NO_API, NULL };

    g_assert_cmpint (tally_test_app_run (args, bench_body, &empty), ==, 0);
  }
  {
    const char *args[] = { "--store", path, "--base-url", NO_API, NULL };

    g_assert_cmpint (tally_test_app_run (args, bench_body, &full), ==, 0);
  }

  tally_test_remove_tree (empty_dir);
  tally_test_remove_tree (home);
  return 0;
}
