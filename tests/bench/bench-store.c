/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Store figures: append throughput under the durability rule (everything
 * committed when flush returns), and the time and peak memory to open and
 * load a long session. Prints figures; asserts nothing about speed. */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tally-event.h"
#include "tally-store.h"
#include "tally-test-util.h"

#define APPEND_EVENTS 100000
#define LOAD_EVENTS   10000

/* A realistic stream: mostly ~80-byte text deltas, a tool call with a
 * 2 KB result every 50 events, a turn boundary every 400 */
static JsonObject *
make_event (const char *session_id,
            gint64      seq,
            const char *big_result)
{
  g_autoptr(JsonObject) fields = NULL;
  g_autofree char *turn_id = g_strdup_printf ("turn-%" G_GINT64_FORMAT, seq / 400);

  if (seq == 1)
    {
      fields = tally_event_new (TALLY_EVENT_SESSION_CREATED);
      json_object_set_string_member (fields, "title", "Benchmark session");
      json_object_set_string_member (fields, "model", "claude-sonnet-5");
      json_object_set_string_member (fields, "workspace", "/tmp/bench");
      json_object_set_string_member (fields, "database", "/tmp/bench/beanline.sqlite");
    }
  else if (seq % 400 == 0)
    {
      fields = tally_event_new (TALLY_EVENT_TURN_STARTED);
      json_object_set_string_member (fields, "mode", "ask");
      json_object_set_boolean_member (fields, "thinking", FALSE);
      json_object_set_int_member (fields, "budget_tokens", 0);
      json_object_set_string_member (fields, "model", "claude-sonnet-5");
      json_object_set_string_member (fields, "text", "Which store sold the most oat-milk lattes last quarter?");
    }
  else if (seq % 400 == 399)
    {
      fields = tally_event_new (TALLY_EVENT_TURN_FINISHED);
      json_object_set_string_member (fields, "status", "done");
      json_object_set_double_member (fields, "cost_usd", 0.0123);
      json_object_set_int_member (fields, "duration_ms", 4200);
      json_object_set_int_member (fields, "api_calls", 3);
      tally_event_set_usage (fields, "usage", 5000, 800, 1200, 4000);
    }
  else if (seq % 50 == 0)
    {
      fields = tally_event_new (TALLY_EVENT_TOOL_RESULT);
      json_object_set_string_member (fields, "tool_id", "toolu_01ABCDEF");
      json_object_set_string_member (fields, "content", big_result);
      json_object_set_boolean_member (fields, "is_error", FALSE);
      json_object_set_int_member (fields, "duration_ms", 15);
    }
  else
    {
      fields = tally_event_new (TALLY_EVENT_TEXT_DELTA);
      json_object_set_int_member (fields, "call", 0);
      json_object_set_int_member (fields, "block", 1);
      json_object_set_string_member (fields, "text", " the Harbor store led with 1,204 lattes, ahead of Midtown ");
    }

  return tally_event_stamp (fields, seq, g_get_real_time (), session_id, turn_id);
}

static char *
make_big_result (void)
{
  GString *out = g_string_new ("store | lattes | revenue\n");

  while (out->len < 2000)
    g_string_append_printf (out, "Store %u | %u | %u.50\n", (guint)out->len, (guint)out->len * 3, (guint)out->len * 11);
  return g_string_free (out, FALSE);
}

static void
bench_load (const char *dir,
            const char *big_result)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  g_autofree char *path = g_build_filename (dir, "load.db", NULL);
  TallyStore *store;
  gint64 hwm_before, t0, t_open, t_events, t_lines;
  GStatBuf st;

  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  for (gint64 seq = 1; seq <= LOAD_EVENTS; seq++)
    {
      g_autoptr(JsonObject) event = make_event ("load-session", seq, big_result);

      tally_store_append_event (store, event, &error);
      g_assert_no_error (error);
    }
  tally_store_flush (store, &error);
  g_assert_no_error (error);
  g_object_unref (store);

  hwm_before = tally_test_peak_rss_kib ();
  t0 = g_get_monotonic_time ();
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  t_open = g_get_monotonic_time ();
  events = tally_store_load_events (store, "load-session", &warnings, &error);
  g_assert_no_error (error);
  t_events = g_get_monotonic_time ();
  lines = tally_store_load_event_lines (store, "load-session", &error);
  g_assert_no_error (error);
  t_lines = g_get_monotonic_time ();
  g_assert_cmpuint (events->len, ==, LOAD_EVENTS);

  g_stat (path, &st);
  printf ("store load: %d-event session (%.1f MB file): open %.1f ms, load_events %.1f ms "
          "(%.1f µs/event), load_event_lines %.1f ms\n",
          LOAD_EVENTS, st.st_size / 1e6,
          (t_open - t0) / 1000.0, (t_events - t_open) / 1000.0,
          (double)(t_events - t_open) / LOAD_EVENTS, (t_lines - t_events) / 1000.0);
  printf ("store load: peak RSS (VmHWM) %" G_GINT64_FORMAT " KiB before open, %" G_GINT64_FORMAT
          " KiB after loading\n", hwm_before, tally_test_peak_rss_kib ());

  g_object_unref (store);
}

static gint64
payload_bytes (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 bytes = 0;

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2 (db, "SELECT sum (length (CAST (payload AS BLOB))) FROM events", -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    bytes = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return bytes;
}

static void
bench_append (const char *dir,
              const char *big_result)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, "append.db", NULL);
  TallyStore *store;
  gint64 t0, t_appended, t_flushed;
  gint64 in_append = 0, max_append = 0;
  gint64 bytes;
  GStatBuf st;

  store = tally_store_open (path, &error);
  g_assert_no_error (error);

  t0 = g_get_monotonic_time ();
  for (gint64 seq = 1; seq <= APPEND_EVENTS; seq++)
    {
      g_autoptr(JsonObject) event = make_event ("append-session", seq, big_result);
      gint64 before = g_get_monotonic_time ();
      gint64 spent;

      tally_store_append_event (store, event, &error);
      spent = g_get_monotonic_time () - before;
      in_append += spent;
      max_append = MAX (max_append, spent);
      g_assert_no_error (error);
    }
  t_appended = g_get_monotonic_time ();
  tally_store_flush (store, &error);
  g_assert_no_error (error);
  t_flushed = g_get_monotonic_time ();

  g_stat (path, &st);
  bytes = payload_bytes (path);
  printf ("store append: %d events (%.1f MB of JSON) committed in %.2f s: %.0f events/s, %.1f MB/s\n",
          APPEND_EVENTS, bytes / 1e6, (t_flushed - t0) / 1e6,
          APPEND_EVENTS / ((t_flushed - t0) / 1e6), bytes / 1e6 / ((t_flushed - t0) / 1e6));
  printf ("store append: caller time in append %.2f µs/event (max %" G_GINT64_FORMAT " µs); "
          "flush waited %.1f ms after the last append; file %.1f MB\n",
          (double)in_append / APPEND_EVENTS, max_append, (t_flushed - t_appended) / 1000.0,
          st.st_size / 1e6);

  g_object_unref (store);

  /* Opening checks the file (PRAGMA quick_check), which grows with its size */
  t0 = g_get_monotonic_time ();
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  printf ("store append: reopening the %.1f MB store took %.1f ms\n",
          st.st_size / 1e6, (g_get_monotonic_time () - t0) / 1000.0);
  g_object_unref (store);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *big_result = make_big_result ();

  dir = g_dir_make_tmp ("tally-bench-store-XXXXXX", &error);
  g_assert_no_error (error);

  /* Load first, so the peak memory is the loading's and not the append's */
  bench_load (dir, big_result);
  bench_append (dir, big_result);

  tally_test_rm_rf (dir);
  return 0;
}
