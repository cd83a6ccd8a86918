/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Pinned sessions (schema version 4): the flag is stored, listed and
 * searched with the session, survives closing and reopening the store, and
 * a store of version 3 gains the column with every session unpinned. */

#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tally-event.h"
#include "tally-store.h"
#include "tally-test-util.h"

static void
add_session (TallyStore *store,
             const char *id,
             const char *title)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line =
    g_strdup_printf ("{\"type\":\"session_created\",\"seq\":1,\"ts\":1000,\"session_id\":\"%s\","
                     "\"turn_id\":null,\"title\":\"%s\",\"model\":\"claude-sonnet-5\","
                     "\"workspace\":null,\"database\":null}", id, title);
  g_autoptr(JsonObject) event = tally_event_from_json (line, &error);

  g_assert_no_error (error);
  g_assert_true (tally_store_append_event (store, event, &error));
  g_assert_no_error (error);
}

static TallySessionInfo *
find (GPtrArray  *sessions,
      const char *id)
{
  for (guint i = 0; i < sessions->len; i++)
    {
      TallySessionInfo *info = g_ptr_array_index (sessions, i);

      if (g_str_equal (info->id, id))
        return info;
    }
  g_assert_not_reached ();
}

static gboolean
listed_pinned (TallyStore *store,
               const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sessions = tally_store_list_sessions (store, &error);

  g_assert_no_error (error);
  return find (sessions, id)->pinned;
}

static void
test_pin_persists (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-store-pin-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "sessions.db", NULL);
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(TallySessionInfo) found = NULL;

  g_assert_no_error (error);
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  add_session (store, "pin-a", "Cold brew margins");
  add_session (store, "pin-b", "Croissant waste");
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);

  g_assert_false (listed_pinned (store, "pin-a"));
  g_assert_false (listed_pinned (store, "pin-b"));

  g_assert_true (tally_store_set_session_pinned (store, "pin-b", TRUE, &error));
  g_assert_no_error (error);
  g_assert_false (listed_pinned (store, "pin-a"));
  g_assert_true (listed_pinned (store, "pin-b"));

  /* Search and lookup carry the flag too. */
  hits = tally_store_search (store, "croissant", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_assert_true (((TallySessionInfo *)g_ptr_array_index (hits, 0))->pinned);
  found = tally_store_find_session (store, "pin-b", &error);
  g_assert_no_error (error);
  g_assert_true (found->pinned);

  /* An unknown session is an error, not a silent no-op. */
  g_assert_false (tally_store_set_session_pinned (store, "no-such-session", TRUE, &error));
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Reopened: still pinned; then unpinned. */
  g_clear_object (&store);
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (listed_pinned (store, "pin-b"));
  g_assert_true (tally_store_set_session_pinned (store, "pin-b", FALSE, &error));
  g_assert_no_error (error);
  g_assert_false (listed_pinned (store, "pin-b"));

  g_clear_object (&store);
  tally_test_rm_rf (dir);
}

static void
test_pin_migration (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-store-pin-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "sessions.db", NULL);
  g_autoptr(TallyStore) store = NULL;
  sqlite3 *db = NULL;

  g_assert_no_error (error);
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  add_session (store, "old", "From version 3");
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);
  g_clear_object (&store);

  /* Make it a version 3 file: no pinned column. */
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "ALTER TABLE sessions DROP COLUMN pinned; PRAGMA user_version = 3;",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  /* Opening upgrades it (listing reads the column, so it would fail
   * without it), with the session unpinned and pinnable. */
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_false (tally_store_is_read_only (store));
  g_assert_false (listed_pinned (store, "old"));
  g_assert_true (tally_store_set_session_pinned (store, "old", TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (listed_pinned (store, "old"));

  g_clear_object (&store);
  tally_test_rm_rf (dir);
}

/* Salvage copies the pins (docs/architecture.md §10.9). */
static void
test_pin_salvage (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-store-pin-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "sessions.db", NULL);
  g_autofree char *out = g_build_filename (dir, "salvaged.db", NULL);
  g_autoptr(TallyStore) store = NULL;
  TallySalvageReport report = { 0 };

  g_assert_no_error (error);
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  add_session (store, "kept-pin", "Pinned before the damage");
  add_session (store, "no-pin", "Never pinned");
  g_assert_true (tally_store_set_session_pinned (store, "kept-pin", TRUE, &error));
  g_assert_no_error (error);
  g_clear_object (&store);

  g_assert_true (tally_store_salvage (path, out, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (report.sessions_salvaged, ==, 2);

  store = tally_store_open (out, &error);
  g_assert_no_error (error);
  g_assert_true (listed_pinned (store, "kept-pin"));
  g_assert_false (listed_pinned (store, "no-pin"));
  g_clear_object (&store);

  /* A version 3 file has no pins to copy, and salvages all the same. */
  {
    g_autofree char *out3 = g_build_filename (dir, "salvaged-3.db", NULL);
    sqlite3 *db = NULL;

    g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_exec (db, "ALTER TABLE sessions DROP COLUMN pinned; PRAGMA user_version = 3;",
                                   NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close (db);
    report = (TallySalvageReport) { 0 };
    g_assert_true (tally_store_salvage (path, out3, &report, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (report.sessions_salvaged, ==, 2);
    g_assert_cmpuint (report.damaged_regions, ==, 0);
    store = tally_store_open (out3, &error);
    g_assert_no_error (error);
    g_assert_false (listed_pinned (store, "kept-pin"));
    g_clear_object (&store);
  }

  tally_test_rm_rf (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/store/pin/persists", test_pin_persists);
  g_test_add_func ("/tally/store/pin/migration", test_pin_migration);
  g_test_add_func ("/tally/store/pin/salvage", test_pin_salvage);

  return g_test_run ();
}
