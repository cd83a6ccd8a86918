/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <glib/gstdio.h>

#include "tally-agent.h"
#include "tally-block.h"
#include "tally-database-profile.h"
#include "tally-event.h"
#include "tally-pg-source.h"
#include "tally-session.h"
#include "tally-store.h"
#include "tally-test-mock.h"
#include "tally-test-util.h"
#include "tally-transcript.h"

/* A database's profile folder (src/core/util/tally-database-profile.c)
 * and the analyst's notes that the agent reads from it (docs/notes.md). */

static char *
make_tmp_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("tally-notes-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
test_profile_dir (void)
{
  g_autofree char *a1 = tally_database_profile_dir ("/data/tally", "/home/ana/sales.db");
  g_autofree char *a2 = tally_database_profile_dir ("/data/tally", "/home/ana/sales.db");
  g_autofree char *b = tally_database_profile_dir ("/data/tally", "/home/ana/stock.db");
  g_autofree char *pg = tally_database_profile_dir ("/data/tally", "postgresql://ana@db/sales");
  g_autofree char *other_store = tally_database_profile_dir ("/tmp/x", "/home/ana/sales.db");
  g_autofree char *expected_name = g_compute_checksum_for_string (G_CHECKSUM_SHA256,
                                                                   "/home/ana/sales.db", -1);
  g_autofree char *base = g_path_get_basename (a1);

  /* Stable per key, different per database, under the store's folder. */
  g_assert_cmpstr (a1, ==, a2);
  g_assert_cmpstr (a1, !=, b);
  g_assert_cmpstr (a1, !=, pg);
  g_assert_true (g_str_has_prefix (a1, "/data/tally/databases/"));
  g_assert_true (g_str_has_prefix (other_store, "/tmp/x/databases/"));
  expected_name[16] = '\0';
  g_assert_cmpstr (base, ==, expected_name);
  g_assert_cmpuint (strlen (base), ==, 16);
}

static void
test_database_key (void)
{
  g_autofree char *pg = tally_pg_database_key ("postgresql://ana:s3cret@db.example/sales");
  g_autofree char *kv = tally_pg_database_key ("host=db password=s3cret dbname=sales");
  g_autofree char *abs = tally_pg_database_key ("/srv/data/sales.db");
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *rel = tally_pg_database_key ("sales.db");
  g_autofree char *expected_rel = g_build_filename (cwd, "sales.db", NULL);
  g_autofree char *dotted = tally_pg_database_key ("/srv/data/../data/sales.db");

  /* The key never holds a password, and a path is absolute. */
  g_assert_cmpstr (pg, ==, "postgresql://ana@db.example/sales");
  g_assert_cmpstr (kv, ==, "host=db dbname=sales");
  g_assert_cmpstr (abs, ==, "/srv/data/sales.db");
  g_assert_cmpstr (rel, ==, expected_rel);
  g_assert_cmpstr (dotted, ==, "/srv/data/sales.db");
}

static void
test_profile_round_trip (void)
{
  g_autofree char *store_dir = make_tmp_dir ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *missing = NULL;
  g_autofree char *text = NULL;
  g_autofree char *key_text = NULL;
  g_autofree char *key_path = NULL;
  g_autofree char *notes_path = NULL;
  g_autofree char *again = NULL;
  GStatBuf st;

  dir = tally_database_profile_dir (store_dir, "/srv/sales.db");

  /* Nothing written yet: no text and no error, even without the folder. */
  missing = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_no_error (error);
  g_assert_null (missing);

  g_clear_pointer (&dir, g_free);
  dir = tally_database_profile_ensure_dir (store_dir, "/srv/sales.db", &error);
  g_assert_no_error (error);
  again = tally_database_profile_dir (store_dir, "/srv/sales.db");
  g_assert_cmpstr (dir, ==, again);
  g_assert_cmpint (g_stat (dir, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);

  key_path = g_build_filename (dir, TALLY_DATABASE_PROFILE_KEY_FILE, NULL);
  g_assert_true (g_file_get_contents (key_path, &key_text, NULL, NULL));
  g_assert_cmpstr (key_text, ==, "/srv/sales.db\n");

  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES,
                                               "Revenue excludes refunds.\nWeeks start on Monday — ISO.\n",
                                               &error));
  g_assert_no_error (error);
  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "Revenue excludes refunds.\nWeeks start on Monday — ISO.\n");
  notes_path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_assert_cmpint (g_stat (notes_path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  /* Overwriting replaces the whole text; an empty text is a text. */
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "", &error));
  g_assert_no_error (error);
  g_clear_pointer (&text, g_free);
  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "");

  tally_test_rm_rf (store_dir);
}

static void
test_profile_bad_input (void)
{
  g_autofree char *store_dir = make_tmp_dir ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tally_database_profile_dir (store_dir, "/srv/sales.db");
  g_autofree char *text = NULL;
  g_autofree char *blocker = NULL;
  g_autofree char *under_file = NULL;
  const char *bad_names[] = { "", ".hidden", "../notes.md", "a/b", TALLY_DATABASE_PROFILE_KEY_FILE };

  for (gsize i = 0; i < G_N_ELEMENTS (bad_names); i++)
    {
      g_assert_false (tally_database_profile_write (dir, bad_names[i], "x", &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (tally_database_profile_read (dir, bad_names[i], &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }

  /* Text that is not UTF-8 is refused both ways. */
  g_assert_false (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "caf\xe9", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&error);
  tally_test_write_file (dir, TALLY_DATABASE_PROFILE_NOTES, "caf\xe9", -1);
  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_null (text);
  g_clear_error (&error);

  /* A file that cannot be read (here: a folder in its place) is an error,
   * not a missing file. */
  tally_test_rm_rf (dir);
  blocker = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_assert_cmpint (g_mkdir_with_parents (blocker, 0700), ==, 0);
  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_nonnull (error);
  g_assert_true (error->domain == G_FILE_ERROR);
  g_assert_null (text);
  g_clear_error (&error);

  /* A folder that cannot be made (a file stands in the way). */
  tally_test_write_file (store_dir, "plain-file", "x", -1);
  under_file = g_build_filename (store_dir, "plain-file", NULL);
  g_assert_null (tally_database_profile_ensure_dir (under_file, "/srv/sales.db", &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR);
  g_clear_error (&error);

  tally_test_rm_rf (store_dir);
}

/* A write that fails leaves the old text. A read-only folder refuses the
 * write for a normal user; root writes anyway, so a file-size limit below
 * the new text's length makes the write fail for every user. */
static void
test_profile_write_error (void)
{
  g_autofree char *store_dir = make_tmp_dir ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *text = NULL;
  g_autofree char *big = g_strnfill (64 * 1024, 'n');
  g_autoptr(GDir) listing = NULL;
  struct rlimit saved;
  struct rlimit small;
  void (*saved_handler) (int);
  gboolean ok;
  guint n_files = 0;

  dir = tally_database_profile_ensure_dir (store_dir, "/srv/sales.db", &error);
  g_assert_no_error (error);
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, "old notes\n", &error));
  g_assert_no_error (error);

  g_assert_cmpint (g_chmod (dir, 0500), ==, 0);
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &saved), ==, 0);
  small = saved;
  small.rlim_cur = 1024;
  saved_handler = signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &small), ==, 0);
  ok = tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, big, &error);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &saved), ==, 0);
  signal (SIGXFSZ, saved_handler);
  g_assert_cmpint (g_chmod (dir, 0700), ==, 0);

  g_assert_false (ok);
  g_assert_nonnull (error);
  g_assert_true (error->domain == G_FILE_ERROR);
  g_clear_error (&error);

  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "old notes\n");

  /* No temporary file is left behind: the key file and the notes only. */
  listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  while (g_dir_read_name (listing) != NULL)
    n_files++;
  g_assert_cmpuint (n_files, ==, 2);

  tally_test_rm_rf (store_dir);
}

/* The notes in a session against the mock Messages API. */

typedef struct {
  char              *dir;          /* the store's folder */
  char              *store_path;
  char              *database;
  TallyTestMock     *mock;
  TallyClient       *client;
  TallyToolRegistry *tools;
  TallyStore        *store;
  TallySession      *session;
  GMainLoop         *loop;
  TallyTurnStatus    status;
  GError            *error;
} Fixture;

/* Five plain answers: enough for every test's turns. */
#define FIVE_ANSWERS \
  "{\"responses\":[" \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"One.\"}],\"stop_reason\":\"end_turn\"}}," \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Two.\"}],\"stop_reason\":\"end_turn\"}}," \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Three.\"}],\"stop_reason\":\"end_turn\"}}," \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Four.\"}],\"stop_reason\":\"end_turn\"}}," \
  "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Five.\"}],\"stop_reason\":\"end_turn\"}}" \
  "]}"

static void
fixture_open_store (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  f->store = tally_store_open (f->store_path, &error);
  g_assert_no_error (error);
}

static void
fixture_start (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  memset (f, 0, sizeof *f);
  f->dir = make_tmp_dir ();
  f->store_path = g_build_filename (f->dir, "tally.db", NULL);
  f->database = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  f->mock = tally_test_mock_start (FIVE_ANSWERS, &error);
  g_assert_no_error (error);
  f->client = tally_client_new (tally_test_mock_get_base_url (f->mock), "sk-test-key");
  f->tools = tally_tool_registry_new_default ();
  f->loop = g_main_loop_new (NULL, FALSE);
  fixture_open_store (f);
  f->session = tally_session_new (f->store, f->client, f->tools);
  tally_agent_set_database (tally_session_get_agent (f->session), f->database);
}

static void
fixture_stop (Fixture *f)
{
  g_clear_object (&f->session);
  g_clear_object (&f->store);
  tally_test_mock_free (f->mock);
  g_clear_object (&f->tools);
  g_clear_object (&f->client);
  g_clear_pointer (&f->loop, g_main_loop_unref);
  g_clear_error (&f->error);
  tally_test_rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->store_path);
  g_free (f->database);
}

/* Writes the notes of the fixture's database as the window does. */
static void
set_notes (Fixture    *f,
           const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = tally_pg_database_key (f->database);
  g_autofree char *dir = tally_database_profile_ensure_dir (f->dir, key, &error);

  g_assert_no_error (error);
  g_assert_true (tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, text, &error));
  g_assert_no_error (error);
}

static void
sent_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Fixture *f = user_data;

  g_clear_error (&f->error);
  f->status = tally_session_send_finish (TALLY_SESSION (object), result, &f->error);
  g_main_loop_quit (f->loop);
}

static void
run_turn (Fixture    *f,
          const char *text)
{
  tally_session_send_async (f->session, &(TallyTurnRequest) { .text = text, .mode = TALLY_MODE_ASK },
                            NULL, sent_cb, f);
  g_main_loop_run (f->loop);
}

/* The system prompt of the n-th request, as the bytes sent. */
static char *
request_system (Fixture *f,
                guint    n)
{
  g_autoptr(JsonObject) body = tally_test_mock_dup_request_body (f->mock, n);
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_root (generator, json_object_get_member (body, "system"));
  return json_generator_to_data (generator, NULL);
}

/* The text blocks of the last user message of the n-th request, joined
 * with "|". */
static char *
last_user_texts (Fixture *f,
                 guint    n)
{
  g_autoptr(JsonObject) body = tally_test_mock_dup_request_body (f->mock, n);
  JsonArray *messages = json_object_get_array_member (body, "messages");
  JsonObject *last = json_array_get_object_element (messages, json_array_get_length (messages) - 1);
  JsonArray *content = json_object_get_array_member (last, "content");
  GString *joined = g_string_new (NULL);

  g_assert_cmpstr (json_object_get_string_member (last, "role"), ==, "user");
  for (guint i = 0; i < json_array_get_length (content); i++)
    {
      JsonObject *block = json_array_get_object_element (content, i);

      if (i > 0)
        g_string_append_c (joined, '|');
      g_string_append (joined, json_object_get_string_member (block, "text"));
    }
  return g_string_free (joined, FALSE);
}

/* How many notice blocks say that the notes changed. */
static guint
count_notes_rows (TallySession *session)
{
  GListModel *blocks = G_LIST_MODEL (tally_session_get_transcript (session));
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (blocks); i++)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i);

      if (tally_block_get_kind (block) == TALLY_BLOCK_NOTICE &&
          g_strcmp0 (tally_block_get_state (block), "notes-changed") == 0)
        {
          g_assert_cmpstr (tally_block_get_text (block), ==,
                           "Notes changed: the new notes go with your next message");
          n++;
        }
    }
  return n;
}

static const char *
system_text (const char *system_json)
{
  return strstr (system_json, "\"text\"");
}

/* The notes go into the first request's system prompt; a change during the
 * session leaves the system prompt byte-identical and goes with the next
 * message as a reminder, with a note row; an unchanged file sends nothing
 * more. */
static void
test_notes_in_session (void)
{
  Fixture f;
  g_autofree char *system0 = NULL;
  g_autofree char *system1 = NULL;
  g_autofree char *system2 = NULL;
  g_autofree char *system3 = NULL;
  g_autofree char *texts0 = NULL;
  g_autofree char *texts1 = NULL;
  g_autofree char *texts2 = NULL;
  g_autofree char *texts3 = NULL;
  TallyAgent *agent;

  fixture_start (&f);
  agent = tally_session_get_agent (f.session);
  set_notes (&f, "Revenue excludes refunds.\nWeeks start on Monday.\n\n");

  run_turn (&f, "How much did we sell?");
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system0 = request_system (&f, 0);
  g_assert_nonnull (strstr (system_text (system0),
                            "<notes>\\nRevenue excludes refunds.\\nWeeks start on Monday.\\n</notes>"));
  g_assert_cmpstr (tally_agent_get_notes (agent), ==, "Revenue excludes refunds.\nWeeks start on Monday.");
  texts0 = last_user_texts (&f, 0);
  g_assert_cmpstr (texts0, ==, "How much did we sell?");
  g_assert_cmpuint (count_notes_rows (f.session), ==, 0);

  /* Unchanged notes: nothing more is sent. */
  run_turn (&f, "And last year?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system1 = request_system (&f, 1);
  g_assert_cmpstr (system1, ==, system0);
  texts1 = last_user_texts (&f, 1);
  g_assert_cmpstr (texts1, ==, "And last year?");

  /* Changed notes: the system prompt stays, the reminder goes along. */
  set_notes (&f, "Revenue excludes refunds and tax.\n");
  run_turn (&f, "Per week?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system2 = request_system (&f, 2);
  g_assert_cmpstr (system2, ==, system0);
  texts2 = last_user_texts (&f, 2);
  g_assert_cmpstr (texts2, ==,
                   "Per week?|<system-reminder>The analyst has changed their notes about this database. "
                   "From now on these notes replace the ones in your instructions:\n"
                   "<notes>\nRevenue excludes refunds and tax.\n</notes></system-reminder>");
  g_assert_cmpuint (count_notes_rows (f.session), ==, 1);
  g_assert_cmpstr (tally_agent_get_notes (agent), ==, "Revenue excludes refunds.\nWeeks start on Monday.");

  /* Removed notes are said to be removed, once. */
  set_notes (&f, "  \n");
  run_turn (&f, "Per store?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system3 = request_system (&f, 3);
  g_assert_cmpstr (system3, ==, system0);
  texts3 = last_user_texts (&f, 3);
  g_assert_true (g_str_has_prefix (texts3, "Per store?|<system-reminder>The analyst has removed their notes"));
  g_assert_cmpuint (count_notes_rows (f.session), ==, 2);

  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 4);
  fixture_stop (&f);
}

/* Without notes the system prompt has no notes section. */
static void
test_no_notes (void)
{
  Fixture f;
  g_autofree char *system0 = NULL;

  fixture_start (&f);
  run_turn (&f, "Hello");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system0 = request_system (&f, 0);
  g_assert_null (strstr (system0, "<notes>"));
  g_assert_null (strstr (system0, "notes about this database"));
  g_assert_null (tally_agent_get_notes (tally_session_get_agent (f.session)));
  fixture_stop (&f);
}

/* A resumed session rebuilds the system prompt from its log: the notes it
 * started with, not the file as it is now; the notes it has been told of
 * are not sent again, newer ones are. */
static void
test_notes_resume (void)
{
  Fixture f;
  g_autofree char *session_id = NULL;
  g_autofree char *system0 = NULL;
  g_autofree char *system2 = NULL;
  g_autofree char *system3 = NULL;
  g_autofree char *texts2 = NULL;
  g_autofree char *texts3 = NULL;
  g_autoptr(GError) error = NULL;

  fixture_start (&f);
  set_notes (&f, "Store 7 closed in March.");
  run_turn (&f, "Sales by store?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  set_notes (&f, "Store 7 closed in March and April.");
  run_turn (&f, "And in spring?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system0 = request_system (&f, 0);
  session_id = g_strdup (tally_session_get_id (f.session));
  g_assert_true (tally_store_flush (f.store, &error));
  g_assert_no_error (error);
  g_clear_object (&f.session);
  g_clear_object (&f.store);

  /* Resumed with the notes unchanged since the last reminder. */
  fixture_open_store (&f);
  f.session = tally_session_open (f.store, session_id, f.client, f.tools, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (tally_agent_get_notes (tally_session_get_agent (f.session)), ==, "Store 7 closed in March.");
  g_assert_cmpuint (count_notes_rows (f.session), ==, 1);
  run_turn (&f, "Per month?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system2 = request_system (&f, 2);
  g_assert_cmpstr (system2, ==, system0);
  texts2 = last_user_texts (&f, 2);
  g_assert_cmpstr (texts2, ==, "Per month?");
  g_assert_true (tally_store_flush (f.store, &error));
  g_clear_object (&f.session);
  g_clear_object (&f.store);

  /* Resumed after the notes changed while it was closed. */
  set_notes (&f, "Store 7 never reopened.");
  fixture_open_store (&f);
  f.session = tally_session_open (f.store, session_id, f.client, f.tools, &error);
  g_assert_no_error (error);
  run_turn (&f, "And now?");
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  system3 = request_system (&f, 3);
  g_assert_cmpstr (system3, ==, system0);
  texts3 = last_user_texts (&f, 3);
  g_assert_true (g_str_has_prefix (texts3, "And now?|<system-reminder>"));
  g_assert_nonnull (strstr (texts3, "<notes>\nStore 7 never reopened.\n</notes>"));
  g_assert_cmpuint (count_notes_rows (f.session), ==, 2);

  fixture_stop (&f);
}

/* Notes that cannot be sent fail the turn before any request, with a
 * message that says why. */
static void
test_notes_bad (void)
{
  Fixture f;
  g_autofree char *big = g_strnfill (TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES + 1, 'x');
  g_autofree char *key = NULL;
  g_autofree char *dir = NULL;

  fixture_start (&f);
  set_notes (&f, big);
  run_turn (&f, "Hello");
  g_assert_cmpint (f.status, ==, TALLY_TURN_FAILED);
  g_assert_error (f.error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (f.error->message, "65,537 bytes"));
  g_assert_nonnull (strstr (f.error->message, "65,536"));

  key = tally_pg_database_key (f.database);
  dir = tally_database_profile_dir (f.dir, key);
  tally_test_write_file (dir, TALLY_DATABASE_PROFILE_NOTES, "caf\xe9\n", -1);
  run_turn (&f, "Hello");
  g_assert_cmpint (f.status, ==, TALLY_TURN_FAILED);
  g_assert_error (f.error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (f.error->message, "notes about this database cannot be read"));

  /* Fixed notes let the session start. */
  set_notes (&f, "Fine now.");
  run_turn (&f, "Hello");
  g_assert_no_error (f.error);
  g_assert_cmpint (f.status, ==, TALLY_TURN_DONE);
  g_assert_cmpuint (tally_test_mock_get_n_requests (f.mock), ==, 1);
  fixture_stop (&f);
}

/* Runs tally-cli with @argv (NULL-terminated, without the program) and
 * @input on stdin; returns its exit status, stdout and stderr. */
static int
run_cli (const char * const  *args,
         const char          *input,
         char               **out,
         char               **err)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                      G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                      G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  g_ptr_array_add (argv, (gpointer)TALLY_TEST_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_launcher_spawnv (launcher, (const char * const *)argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, input != NULL ? input : "", NULL, out, err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  return g_subprocess_get_exit_status (process);
}

/* tally-cli --edit-notes and --notes: the same folder the agent reads. */
static void
test_cli_notes (void)
{
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *store = g_build_filename (dir, "tally.db", NULL);
  g_autofree char *database = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  g_autofree char *key = tally_pg_database_key (database);
  g_autofree char *profile = tally_database_profile_dir (dir, key);
  g_autofree char *notes_path = g_build_filename (profile, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_autofree char *rules = g_build_filename (dir, "rules.md", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.md", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *read_back = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = NULL;
  const char *print_args[] = { "--store", store, "--db", database, "--notes", NULL };
  const char *json_args[] = { "--store", store, "--db", database, "--notes", "--json", NULL };
  const char *edit_args[] = { "--store", store, "--db", database, "--edit-notes", rules, NULL };
  const char *stdin_args[] = { "--store", store, "--db", database, "--edit-notes", "-", NULL };
  const char *bad_args[] = { "--store", store, "--db", database, "--edit-notes", bad, NULL };
  const char *both_args[] = { "--store", store, "--db", database, "--notes", "--edit-notes", rules, NULL };
  const char *pg_args[] = { "--store", store, "--db", "postgresql://ana:s3cret@db.example/sales",
                            "--notes", "--json", NULL };

  /* None yet: the path, and a hint on stderr. */
  g_assert_cmpint (run_cli (print_args, NULL, &out, &err), ==, 0);
  expected = g_strconcat (notes_path, "\n", NULL);
  g_assert_cmpstr (out, ==, expected);
  g_assert_nonnull (strstr (err, "No notes about this database yet"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_true (g_file_set_contents (rules, "Revenue excludes refunds.\n", -1, &error));
  g_assert_cmpint (run_cli (edit_args, NULL, &out, &err), ==, 0);
  g_assert_nonnull (strstr (err, notes_path));
  read_back = tally_database_profile_read (profile, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (read_back, ==, "Revenue excludes refunds.\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&expected, g_free);

  g_assert_cmpint (run_cli (print_args, NULL, &out, &err), ==, 0);
  expected = g_strconcat (notes_path, "\n\nRevenue excludes refunds.\n", NULL);
  g_assert_cmpstr (out, ==, expected);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (stdin_args, "Weeks start on Monday.", &out, &err), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (json_args, NULL, &out, &err), ==, 0);
  object = tally_test_parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (object, "database"), ==, key);
  g_assert_cmpstr (json_object_get_string_member (object, "path"), ==, notes_path);
  g_assert_cmpstr (json_object_get_string_member (object, "notes"), ==, "Weeks start on Monday.");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&object, json_object_unref);

  /* Bad input: refused, the notes kept. */
  g_assert_true (g_file_set_contents (bad, "caf\xe9", -1, &error));
  g_assert_cmpint (run_cli (bad_args, NULL, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, "is not UTF-8 text"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&read_back, g_free);
  read_back = tally_database_profile_read (profile, TALLY_DATABASE_PROFILE_NOTES, &error);
  g_assert_cmpstr (read_back, ==, "Weeks start on Monday.");
  g_assert_cmpint (run_cli (both_args, NULL, &out, &err), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* PostgreSQL: the key without the password, no connection made. */
  g_assert_cmpint (run_cli (pg_args, NULL, &out, &err), ==, 0);
  object = tally_test_parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (object, "database"), ==, "postgresql://ana@db.example/sales");
  g_assert_true (json_object_get_null_member (object, "notes"));
  g_assert_null (strstr (out, "s3cret"));

  tally_test_rm_rf (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/notes/profile/dir", test_profile_dir);
  g_test_add_func ("/tally/notes/profile/key", test_database_key);
  g_test_add_func ("/tally/notes/profile/round-trip", test_profile_round_trip);
  g_test_add_func ("/tally/notes/profile/bad-input", test_profile_bad_input);
  g_test_add_func ("/tally/notes/profile/write-error", test_profile_write_error);
  g_test_add_func ("/tally/notes/session/prompt-and-reminder", test_notes_in_session);
  g_test_add_func ("/tally/notes/session/none", test_no_notes);
  g_test_add_func ("/tally/notes/session/resume", test_notes_resume);
  g_test_add_func ("/tally/notes/session/bad-notes", test_notes_bad);
  g_test_add_func ("/tally/notes/cli", test_cli_notes);

  return g_test_run ();
}
