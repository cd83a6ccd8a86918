/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <glib/gstdio.h>

#include "tally-database-profile.h"
#include "tally-pg-source.h"
#include "tally-test-util.h"

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

  return g_test_run ();
}
