/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The store's full-text search (issue 15, search across 1,000 sessions):
 * the ranking read followed by snippets of only the sessions listed gives
 * the same sessions, order and snippets as the one-statement query it
 * replaced (kept here as the reference) while at most 1,000 transcript
 * rows match, and the sessions of the newest matching rows, newest first,
 * each with its newest row's snippet, when more match (docs/architecture.md
 * §10.2); a cancelled search answers
 * G_IO_ERROR_CANCELLED and a newer one its own results; FTS5 syntax typed
 * into the search gives results or nothing, never an error. */

#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "tally-event.h"
#include "tally-store.h"
#include "tally-test-util.h"

#define N_SESSIONS 150

static const char *words[] = {
  "revenue", "margin", "waste", "York", "Leeds", "latte", "croissant", "oat", "milk", "forecast",
  "Bristol", "flat", "white", "store", "week", "refunds", "footfall", "basket",
};

typedef struct {
  char       *dir;
  char       *path;
  TallyStore *store;
} Fixture;

static void
append (TallyStore *store,
        const char *session_id,
        gint64     *seq,
        const char *turn_id,
        JsonObject *fields)
{
  g_autoptr(JsonObject) event = NULL;
  g_autoptr(GError) error = NULL;

  *seq += 1;
  event = tally_event_stamp (fields, *seq, 1700000000000000 + *seq, session_id, turn_id);
  json_object_unref (fields);
  g_assert_true (tally_store_append_event (store, event, &error));
  g_assert_no_error (error);
}

static char *
random_text (GRand *rand,
             guint  n_words)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < n_words; i++)
    g_string_append_printf (text, "%s%s", i > 0 ? " " : "", words[g_rand_int_range (rand, 0, G_N_ELEMENTS (words))]);
  return g_string_free (text, FALSE);
}

/* Sessions of a few turns of random words: many sessions match a common
 * word several times, with bm25 ranks that differ. @data is the number of
 * sessions (GUINT_TO_POINTER), or %NULL for N_SESSIONS (seven transcript
 * rows each: 1,050 rows, so no query of the reference case matches more
 * than 1,000). */
static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  guint n_sessions = data != NULL ? GPOINTER_TO_UINT (data) : N_SESSIONS;

  fixture->dir = g_dir_make_tmp ("tally-test-search-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->path = g_build_filename (fixture->dir, "tally.db", NULL);
  fixture->store = tally_store_open (fixture->path, &error);
  g_assert_no_error (error);

  for (guint s = 0; s < n_sessions; s++)
    {
      g_autofree char *id = g_strdup_printf ("5ea2c400-0000-4000-8000-%012u", s);
      g_autofree char *title = random_text (rand, 3);
      gint64 seq = 0;
      JsonObject *f = tally_event_new (TALLY_EVENT_SESSION_CREATED);

      json_object_set_string_member (f, "title", title);
      json_object_set_string_member (f, "model", "claude-sonnet-5");
      append (fixture->store, id, &seq, NULL, f);

      for (guint t = 0; t < 3; t++)
        {
          g_autofree char *turn = g_strdup_printf ("t%u", t);
          g_autofree char *prompt = random_text (rand, g_rand_int_range (rand, 3, 12));

          f = tally_event_new (TALLY_EVENT_TURN_STARTED);
          json_object_set_string_member (f, "mode", "ask");
          json_object_set_string_member (f, "text", prompt);
          append (fixture->store, id, &seq, turn, f);
          for (guint d = 0; d < 4; d++)
            {
              g_autofree char *text = random_text (rand, g_rand_int_range (rand, 5, 40));
              g_autofree char *delta = g_strconcat (text, ". ", NULL);

              f = tally_event_new (TALLY_EVENT_TEXT_DELTA);
              json_object_set_int_member (f, "call", 1);
              json_object_set_int_member (f, "block", 0);
              json_object_set_string_member (f, "text", s == 77 && d == 2 ? "A pistachio croissant. " : delta);
              append (fixture->store, id, &seq, turn, f);
            }
          f = tally_event_new (TALLY_EVENT_TURN_FINISHED);
          json_object_set_string_member (f, "status", "done");
          append (fixture->store, id, &seq, turn, f);
        }
    }
  g_assert_true (tally_store_flush (fixture->store, &error));
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->store);
  tally_test_rm_rf (fixture->dir);
  g_free (fixture->dir);
  g_free (fixture->path);
}

/* The query tally_store_search() ran before issue 15, in one statement:
 * snippets of up to 1,000 ranked rows, the first row of each session kept.
 * Returns "id\tsnippet" lines, best first. */
static GPtrArray *
reference_query (const char *path,
                 const char *sql,
                 const char *match)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  int rc;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_text (stmt, 1, match, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW && lines->len < 100)
    {
      const char *id = (const char *)sqlite3_column_text (stmt, 0);
      char *line;

      if (g_hash_table_contains (seen, id))
        continue;
      line = g_strdup_printf ("%s\t%s", id, (const char *)sqlite3_column_text (stmt, 1));
      g_ptr_array_add (lines, line);
      g_hash_table_add (seen, g_strdup (id));
    }
  g_assert_true (rc == SQLITE_ROW || rc == SQLITE_DONE);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return g_steal_pointer (&lines);
}

static GPtrArray *
reference_search (const char *path,
                  const char *match)
{
  return reference_query (path,
                          "SELECT s.id, snippet (transcript_fts, 0, '«', '»', '…', 12) "
                          "FROM transcript_fts "
                          "JOIN transcript t ON t.id = transcript_fts.rowid "
                          "JOIN sessions s ON s.id = t.session_id "
                          "WHERE transcript_fts MATCH ?1 ORDER BY rank LIMIT 1000",
                          match);
}

/* More than 1,000 matching rows: the sessions of the newest rows (the
 * highest rowids), each with the snippet of its newest matching row. */
static GPtrArray *
reference_newest (const char *path,
                  const char *match)
{
  return reference_query (path,
                          "SELECT t.session_id, snippet (transcript_fts, 0, '«', '»', '…', 12) "
                          "FROM transcript_fts "
                          "JOIN transcript t ON t.id = transcript_fts.rowid "
                          "WHERE transcript_fts MATCH ?1 ORDER BY transcript_fts.rowid DESC",
                          match);
}

/* How many transcript rows match @match */
static guint
count_matching_rows (const char *path,
                     const char *match)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  guint n;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count(*) FROM transcript_fts WHERE transcript_fts MATCH ?1",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_text (stmt, 1, match, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  n = sqlite3_column_int (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

static GPtrArray *
search_lines (TallyStore *store,
              const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) hits = tally_store_search (store, text, &error);
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  g_assert_no_error (error);
  g_assert_nonnull (hits);
  for (guint i = 0; i < hits->len; i++)
    {
      TallySessionInfo *info = g_ptr_array_index (hits, i);

      g_assert_nonnull (info->snippet);
      g_ptr_array_add (lines, g_strdup_printf ("%s\t%s", info->id, info->snippet));
    }
  return lines;
}

/* /tally/search-store/same-as-reference */
static void
test_same_as_reference (Fixture       *fixture,
                        gconstpointer  data)
{
  /* What the user types, and the FTS5 query the store makes of it. */
  static const char *cases[][2] = {
    { "revenue", "\"revenue\"*" },
    { "re", "\"re\"*" },
    /* A one-letter prefix: its snippets come from one statement over
     * every matching row (tally-store-read.c, search_snippets()). */
    { "w", "\"w\"*" },
    { "york latte", "\"york\" \"latte\"*" },
    { "Leeds oat mi", "\"Leeds\" \"oat\" \"mi\"*" },
    { "pistachio", "\"pistachio\"*" },
    { "zanzibar", "\"zanzibar\"*" },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GPtrArray) want = reference_search (fixture->path, cases[c][1]);
      g_autoptr(GPtrArray) got = search_lines (fixture->store, cases[c][0]);

      g_test_message ("“%s”: %u sessions", cases[c][0], got->len);
      g_assert_cmpuint (got->len, ==, want->len);
      for (guint i = 0; i < got->len; i++)
        g_assert_cmpstr (g_ptr_array_index (got, i), ==, g_ptr_array_index (want, i));
    }

  /* The fixture holds real numbers of hits: the cap, and the rare word. */
  {
    g_autoptr(GPtrArray) many = search_lines (fixture->store, "re");
    g_autoptr(GPtrArray) one = search_lines (fixture->store, "pistachio");

    g_assert_cmpuint (many->len, ==, 100);
    g_assert_cmpuint (one->len, ==, 1);
    g_assert_true (g_str_has_prefix (g_ptr_array_index (one, 0), "5ea2c400-0000-4000-8000-000000000077\t"));
    g_assert_nonnull (strstr (g_ptr_array_index (one, 0), "«pistachio»"));
    for (guint i = 0; i < many->len; i++)
      g_assert_nonnull (strstr (g_ptr_array_index (many, i), "«"));
  }
}

/* /tally/search-store/newest-when-common: 400 sessions (2,800 rows). A
 * text that matches more than 1,000 rows gives the sessions of the newest
 * matching rows, newest first, each with its newest row's snippet; one
 * that matches fewer is still ranked by bm25 as before. */
static void
test_newest_when_common (Fixture       *fixture,
                         gconstpointer  data)
{
  static const char *cases[][2] = {
    { "revenue", "\"revenue\"*" },
    { "re", "\"re\"*" },
    { "w", "\"w\"*" },
    { "york latte", "\"york\" \"latte\"*" },
    { "Leeds oat mi", "\"Leeds\" \"oat\" \"mi\"*" },
    { "basket footfall refunds", "\"basket\" \"footfall\" \"refunds\"*" },
    { "york leeds latte oat", "\"york\" \"leeds\" \"latte\" \"oat\"*" },
    { "margin waste basket footfall ref", "\"margin\" \"waste\" \"basket\" \"footfall\" \"ref\"*" },
    { "pistachio", "\"pistachio\"*" },
  };
  guint n_newest = 0, n_ranked = 0;

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      guint n_rows = count_matching_rows (fixture->path, cases[c][1]);
      g_autoptr(GPtrArray) want = n_rows > 1000 ? reference_newest (fixture->path, cases[c][1])
                                                : reference_search (fixture->path, cases[c][1]);
      g_autoptr(GPtrArray) got = search_lines (fixture->store, cases[c][0]);

      g_test_message ("“%s”: %u rows, %u sessions", cases[c][0], n_rows, got->len);
      if (n_rows > 1000)
        n_newest++;
      else
        n_ranked++;
      g_assert_cmpuint (got->len, ==, want->len);
      for (guint i = 0; i < got->len; i++)
        g_assert_cmpstr (g_ptr_array_index (got, i), ==, g_ptr_array_index (want, i));
    }
  /* Every multi-word text here matches most assistant rows; the ranked
   * path with a hundred sessions is /tally/search-store/same-as-reference. */
  g_assert_cmpuint (n_newest, >=, 3);
  g_assert_cmpuint (n_ranked, >=, 1);

  /* The newest hits are the newest sessions here (each session's rows are
   * written after the previous session's): "revenue" is in most. */
  {
    g_autoptr(GPtrArray) newest = search_lines (fixture->store, "revenue");

    g_assert_cmpuint (newest->len, ==, 100);
    g_assert_true (g_str_has_prefix (g_ptr_array_index (newest, 0), "5ea2c400-0000-4000-8000-000000000399\t"));
    for (guint i = 0; i < newest->len; i++)
      g_assert_nonnull (strstr (g_ptr_array_index (newest, i), "«revenue»"));
  }
}

typedef struct {
  GMainLoop *loop;
  GPtrArray *hits;
  GError    *error;
} Answer;

static void
answer_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  Answer *answer = user_data;

  answer->hits = tally_store_search_finish (TALLY_STORE (object), result, &answer->error);
  g_main_loop_quit (answer->loop);
}

/* /tally/search-store/cancel */
static void
test_cancel (Fixture       *fixture,
             gconstpointer  data)
{
  g_autoptr(GCancellable) cancelled = g_cancellable_new ();
  g_autoptr(GCancellable) older = g_cancellable_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) hits = NULL;
  Answer first = { loop, NULL, NULL }, second = { loop, NULL, NULL };

  /* Cancelled before it starts: no rows, the cancellation as the error. */
  g_cancellable_cancel (cancelled);
  hits = tally_store_search_cancellable (fixture->store, "revenue", cancelled, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (hits);
  g_clear_error (&error);

  /* Not cancelled: the same as tally_store_search(). */
  hits = tally_store_search_cancellable (fixture->store, "pistachio", older, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_clear_pointer (&hits, g_ptr_array_unref);

  /* The sidebar's pattern: each keystroke cancels the search before it.
   * The older one answers cancelled, the newer with its own hits. */
  g_clear_object (&older);
  older = g_cancellable_new ();
  tally_store_search_async (fixture->store, "revenue", older, answer_cb, &first);
  g_cancellable_cancel (older);
  tally_store_search_async (fixture->store, "pistachio", NULL, answer_cb, &second);
  while (first.hits == NULL && first.error == NULL)
    g_main_loop_run (loop);
  while (second.hits == NULL && second.error == NULL)
    g_main_loop_run (loop);

  g_assert_error (first.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (first.hits);
  g_assert_no_error (second.error);
  g_assert_cmpuint (second.hits->len, ==, 1);
  g_assert_cmpstr (((TallySessionInfo *)g_ptr_array_index (second.hits, 0))->id, ==,
                   "5ea2c400-0000-4000-8000-000000000077");
  g_clear_error (&first.error);
  g_ptr_array_unref (second.hits);

  /* The read connection is usable after a cancelled search. */
  hits = tally_store_search (fixture->store, "revenue", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, >, 0);
}

/* /tally/search-store/fts-syntax */
static void
test_fts_syntax (Fixture       *fixture,
                 gconstpointer  data)
{
  /* FTS5 syntax typed by the analyst, with how many sessions it must
   * find (-1: any number, as long as there is no error). Every word is
   * taken literally. */
  static const struct {
    const char *text;
    int         n_hits;
  } cases[] = {
    { "\"", 0 },
    { "*", 0 },
    { "-", 0 },
    { "(", 0 },
    { ")", 0 },
    { "\"\"\"", 0 },
    { "NEAR(", 0 },
    { "NEAR(york", 0 },
    { "york NEAR latte", 0 },
    { "AND OR NOT", 0 },
    { "-milk", -1 },
    { "york*", -1 },
    { "\"pistachio", 1 },
    { "pistachio\"", 1 },
    { "(pistachio", 1 },
    { "pistachio)", 1 },
    { "pistachio*", 1 },
    { "text:pistachio", 0 },
    { "pis tachio", 0 },
    { "^pistachio", 1 },
    { "\"oat\" NEAR(-milk* (", 0 },
    { "\xff\xfe", 0 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) hits = tally_store_search (fixture->store, cases[c].text, &error);
      g_autofree char *shown = g_strescape (cases[c].text, NULL);

      g_test_message ("%s", shown);
      g_assert_no_error (error);
      g_assert_nonnull (hits);
      if (cases[c].n_hits >= 0)
        g_assert_cmpint (hits->len, ==, cases[c].n_hits);
      else
        g_assert_cmpuint (hits->len, >, 0);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/tally/search-store/same-as-reference", Fixture, NULL,
              fixture_set_up, test_same_as_reference, fixture_tear_down);
  g_test_add ("/tally/search-store/newest-when-common", Fixture, GUINT_TO_POINTER (400),
              fixture_set_up, test_newest_when_common, fixture_tear_down);
  g_test_add ("/tally/search-store/cancel", Fixture, NULL,
              fixture_set_up, test_cancel, fixture_tear_down);
  g_test_add ("/tally/search-store/fts-syntax", Fixture, NULL,
              fixture_set_up, test_fts_syntax, fixture_tear_down);

  return g_test_run ();
}
