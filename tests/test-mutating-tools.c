/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "tally-tool.h"
#include "tally-tool-registry.h"
#include "tally-tool-bash.h"
#include "tally-tool-edit.h"
#include "tally-tool-glob.h"
#include "tally-tool-grep.h"
#include "tally-tool-query-database.h"
#include "tally-tool-read.h"
#include "tally-tool-write.h"
#include "tally-test-util.h"

/* A scratch area under the temporary folder:
 *   ROOT/ws         the workspace
 *   ROOT/outside    where the tools must not write unless allowed
 * All paths are canonical (realpath), as the tools report them. */
typedef struct {
  char *root;
  char *ws;
  char *outside;
  TallyToolContext context;
} Fixture;

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("tally-mtools-XXXXXX", &error);

  g_assert_no_error (error);

  fixture->root = realpath (tmp, NULL);
  g_assert_nonnull (fixture->root);
  fixture->ws = g_build_filename (fixture->root, "ws", NULL);
  fixture->outside = g_build_filename (fixture->root, "outside", NULL);
  g_assert_cmpint (g_mkdir (fixture->ws, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (fixture->outside, 0755), ==, 0);

  fixture->context.workspace = fixture->ws;
  fixture->context.allow_outside_workspace = FALSE;
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  tally_test_rm_rf (fixture->root);
  g_free (fixture->root);
  g_free (fixture->ws);
  g_free (fixture->outside);
}

static void
write_file (const char *dir,
            const char *relpath,
            const char *contents)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static char *
read_file (const char *dir,
           const char *relpath)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  return contents;
}

static gboolean
exists (const char *dir,
        const char *relpath)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);
  GStatBuf st;

  return g_lstat (path, &st) == 0;
}

static guint
file_mode (const char *dir,
           const char *relpath)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);

  return st.st_mode & 07777;
}

static guint
count_entries (const char *dir)
{
  g_autoptr(GDir) handle = g_dir_open (dir, 0, NULL);
  guint n = 0;

  g_assert_nonnull (handle);
  while (g_dir_read_name (handle) != NULL)
    n++;

  return n;
}

/* Builds an input object from NULL-terminated name/value string pairs, so
 * values need no JSON escaping in the tests. */
static JsonObject *
string_input (const char *first_name,
              ...)
{
  JsonObject *input = json_object_new ();
  const char *name;
  va_list args;

  va_start (args, first_name);
  for (name = first_name; name != NULL; name = va_arg (args, const char *))
    json_object_set_string_member (input, name, va_arg (args, const char *));
  va_end (args);

  return input;
}

static char *
run_tool (TallyTool              *tool,
          const TallyToolContext *context,
          JsonObject             *input,
          GError                **error)
{
  return tally_tool_run (tool, context, input, NULL, error);
}

static char *
run_json (TallyTool              *tool,
          const TallyToolContext *context,
          const char             *json,
          GError                **error)
{
  g_autoptr(JsonObject) input = tally_test_parse_object (json);

  return run_tool (tool, context, input, error);
}

/* Whether a process has ended: gone, or a zombie nobody reaped yet (in a
 * container the init process may not reap). */
static gboolean
process_gone (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return TRUE;

  paren = strrchr (stat, ')');
  g_assert_nonnull (paren);

  return paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Polls, with a generous bound, until @pid has ended. The bound only keeps
 * a broken build from hanging; nothing is timed. */
static gboolean
wait_process_gone (pid_t pid)
{
  for (guint i = 0; i < 200; i++)
    {
      if (process_gone (pid))
        return TRUE;
      g_usleep (50 * 1000);
    }

  return FALSE;
}

static pid_t
read_pid (const char *dir,
          const char *relpath)
{
  g_autofree char *text = read_file (dir, relpath);
  gint64 pid = g_ascii_strtoll (text, NULL, 10);

  g_assert_cmpint (pid, >, 1);

  return (pid_t) pid;
}

/* Write ---------------------------------------------------------------- */

static void
test_write_creates_parents (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autoptr(JsonObject) input = string_input ("file_path", "reports/2024/q1.md",
                                              "content", "# Q1\nRevenue up.\n", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *folder = g_build_filename (fixture->ws, "reports", "2024", NULL);

  result = run_tool (tool, &fixture->context, input, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Wrote 17 bytes to reports/2024/q1.md (new file)");

  contents = read_file (fixture->ws, "reports/2024/q1.md");
  g_assert_cmpstr (contents, ==, "# Q1\nRevenue up.\n");
  g_assert_true (g_file_test (folder, G_FILE_TEST_IS_DIR));
  /* 0755 less the umask main() set (022). */
  g_assert_cmpuint (file_mode (fixture->ws, "reports"), ==, 0755);
  g_assert_cmpuint (file_mode (fixture->ws, "reports/2024"), ==, 0755);
  g_assert_cmpuint (file_mode (fixture->ws, "reports/2024/q1.md"), ==, 0644);

  /* Absolute paths inside the workspace work too, and an empty file is a
   * file. */
  {
    g_autofree char *abs = g_build_filename (fixture->ws, "empty.txt", NULL);
    g_autoptr(JsonObject) input2 = string_input ("file_path", abs, "content", "", NULL);
    g_autofree char *result2 = run_tool (tool, &fixture->context, input2, &error);

    g_assert_no_error (error);
    g_assert_cmpstr (result2, ==, "Wrote 0 bytes to empty.txt (new file)");
    g_assert_true (exists (fixture->ws, "empty.txt"));
  }
}

static void
test_write_replaces_atomically (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autoptr(JsonObject) input = string_input ("file_path", "data/notes.txt",
                                              "content", "new text\n", NULL);
  g_autofree char *path = g_build_filename (fixture->ws, "data", "notes.txt", NULL);
  g_autofree char *folder = g_build_filename (fixture->ws, "data", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;
  GStatBuf before, after;

  write_file (fixture->ws, "data/notes.txt", "old text that is longer\n");
  g_assert_cmpint (g_chmod (path, 0640), ==, 0);
  g_assert_cmpint (g_stat (path, &before), ==, 0);

  result = run_tool (tool, &fixture->context, input, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Wrote 9 bytes to data/notes.txt (replaced)");

  contents = read_file (fixture->ws, "data/notes.txt");
  g_assert_cmpstr (contents, ==, "new text\n");

  /* A new file was renamed over the old one (a reader holding the old
   * file keeps it whole), no temporary file was left behind, and the mode
   * carried over. */
  g_assert_cmpint (g_stat (path, &after), ==, 0);
  g_assert_cmpuint (after.st_ino, !=, before.st_ino);
  g_assert_cmpuint (count_entries (folder), ==, 1);
  g_assert_cmpuint (after.st_mode & 07777, ==, 0640);
}

static void
test_write_preserves_mode (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autofree char *script = g_build_filename (fixture->ws, "run.sh", NULL);
  g_autofree char *shared = g_build_filename (fixture->ws, "shared.txt", NULL);
  g_autoptr(GError) error = NULL;

  write_file (fixture->ws, "run.sh", "#!/bin/sh\necho one\n");
  write_file (fixture->ws, "shared.txt", "x\n");
  g_assert_cmpint (g_chmod (script, 0750), ==, 0);
  /* Wider than the umask allows for new files: must still come back. */
  g_assert_cmpint (g_chmod (shared, 0666), ==, 0);

  {
    g_autoptr(JsonObject) input = string_input ("file_path", "run.sh",
                                                "content", "#!/bin/sh\necho two\n", NULL);
    g_autofree char *result = run_tool (tool, &fixture->context, input, &error);

    g_assert_no_error (error);
    g_assert_cmpstr (result, ==, "Wrote 19 bytes to run.sh (replaced)");
  }
  {
    g_autoptr(JsonObject) input = string_input ("file_path", "shared.txt",
                                                "content", "y\n", NULL);
    g_autofree char *result = run_tool (tool, &fixture->context, input, &error);

    g_assert_no_error (error);
    g_assert_cmpstr (result, ==, "Wrote 2 bytes to shared.txt (replaced)");
  }

  g_assert_cmpuint (file_mode (fixture->ws, "run.sh"), ==, 0750);
  g_assert_cmpuint (file_mode (fixture->ws, "shared.txt"), ==, 0666);
}

static void
assert_write_refused (Fixture    *fixture,
                      const char *file_path,
                      int         code)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autoptr(JsonObject) input = string_input ("file_path", file_path,
                                              "content", "should not land\n", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;

  result = run_tool (tool, &fixture->context, input, &error);
  g_assert_error (error, TALLY_TOOL_ERROR, code);
  g_assert_null (result);
}

static void
test_write_refuses_outside (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autofree char *elsewhere = g_build_filename (fixture->outside, "elsewhere.txt", NULL);
  g_autofree char *link = g_build_filename (fixture->ws, "linked", NULL);
  g_autofree char *dangling = g_build_filename (fixture->ws, "dangling.txt", NULL);
  g_autofree char *dangling_target = g_build_filename (fixture->outside, "via-link.txt", NULL);
  g_autofree char *sibling = g_strconcat (fixture->ws, "-evil/x.txt", NULL);

  g_assert_cmpint (symlink (fixture->outside, link), ==, 0);
  g_assert_cmpint (symlink (dangling_target, dangling), ==, 0);

  assert_write_refused (fixture, "../x.txt", TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  assert_write_refused (fixture, "sub/../../x.txt", TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  assert_write_refused (fixture, elsewhere, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  assert_write_refused (fixture, "linked/x.txt", TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  assert_write_refused (fixture, "linked/deep/er/x.txt", TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  assert_write_refused (fixture, "dangling.txt", TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
  assert_write_refused (fixture, sibling, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);

  /* Nothing was written anywhere outside, and no folder was made. */
  g_assert_cmpuint (count_entries (fixture->outside), ==, 0);
  g_assert_false (exists (fixture->root, "x.txt"));
  g_assert_false (exists (fixture->root, "ws-evil"));
  g_assert_false (exists (fixture->ws, "sub"));

  /* The message tells the model where the path went. */
  {
    g_autoptr(TallyTool) tool = tally_tool_write_new ();
    g_autoptr(JsonObject) input = string_input ("file_path", "linked/x.txt",
                                                "content", "x", NULL);
    g_autoptr(GError) error = NULL;
    g_autofree char *result = run_tool (tool, &fixture->context, input, &error);
    g_autofree char *target = g_build_filename (fixture->outside, "x.txt", NULL);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
    g_assert_nonnull (strstr (error->message, target));
    g_assert_nonnull (strstr (error->message, "outside the workspace"));
  }
}

static void
write_async_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  char *text = tally_tool_run_finish (TALLY_TOOL (object), result, &error);

  if (text != NULL)
    g_task_return_pointer (task, text, g_free);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

/* Runs @tool through tally_tool_run_async() and a main loop. */
static char *
run_async_and_wait (TallyTool              *tool,
                    const TallyToolContext *context,
                    JsonObject             *input,
                    GCancellable           *cancellable,
                    GError                **error)
{
  GTask *task = g_task_new (NULL, NULL, NULL, NULL);
  char *text;

  tally_tool_run_async (tool, context, input, cancellable, write_async_cb, g_object_ref (task));
  while (!g_task_get_completed (task))
    g_main_context_iteration (NULL, TRUE);

  text = g_task_propagate_pointer (task, error);
  g_object_unref (task);

  return text;
}

static void
test_write_allows_outside_when_approved (Fixture       *fixture,
                                         gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autofree char *target = g_build_filename (fixture->outside, "approved", "out.txt", NULL);
  g_autofree char *link = g_build_filename (fixture->ws, "linked", NULL);
  g_autofree char *expected = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  TallyToolContext allowed = fixture->context;

  allowed.allow_outside_workspace = TRUE;
  g_assert_cmpint (symlink (fixture->outside, link), ==, 0);

  {
    g_autoptr(JsonObject) input = string_input ("file_path", "../outside/approved/out.txt",
                                                "content", "ok\n", NULL);
    g_autofree char *result = run_tool (tool, &allowed, input, &error);

    g_assert_no_error (error);
    /* Outside the workspace the path is shown absolute. */
    expected = g_strdup_printf ("Wrote 3 bytes to %s (new file)", target);
    g_assert_cmpstr (result, ==, expected);
  }

  contents = read_file (fixture->outside, "approved/out.txt");
  g_assert_cmpstr (contents, ==, "ok\n");

  /* The flag survives the copy tally_tool_run_async() makes of the
   * context, through a symlinked folder too. */
  {
    g_autoptr(JsonObject) input = string_input ("file_path", "linked/async.txt",
                                                "content", "async\n", NULL);
    g_autofree char *result = run_async_and_wait (tool, &allowed, input, NULL, &error);
    g_autofree char *async_path = g_build_filename (fixture->outside, "async.txt", NULL);
    g_autofree char *async_expected = g_strdup_printf ("Wrote 6 bytes to %s (new file)",
                                                       async_path);

    g_assert_no_error (error);
    g_assert_cmpstr (result, ==, async_expected);
  }

  /* And without the flag the same async call is refused. */
  {
    g_autoptr(JsonObject) input = string_input ("file_path", "linked/async2.txt",
                                                "content", "no\n", NULL);
    g_autofree char *result = run_async_and_wait (tool, &fixture->context, input, NULL, &error);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
    g_assert_null (result);
    g_assert_false (exists (fixture->outside, "async2.txt"));
  }
}

static void
test_write_refuses_folders (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *blocker = NULL;

  write_file (fixture->ws, "reports/keep.txt", "keep\n");

  assert_write_refused (fixture, "reports", TALLY_TOOL_ERROR_REFUSED);
  assert_write_refused (fixture, "reports/", TALLY_TOOL_ERROR_REFUSED);
  assert_write_refused (fixture, "new-folder/", TALLY_TOOL_ERROR_REFUSED);
  assert_write_refused (fixture, ".", TALLY_TOOL_ERROR_REFUSED);
  g_assert_true (g_file_test (fixture->ws, G_FILE_TEST_IS_DIR));
  g_assert_false (exists (fixture->ws, "new-folder"));

  /* A file where a parent folder should be. */
  write_file (fixture->ws, "blocker", "file\n");
  result = run_json (tool, &fixture->context,
                     "{\"file_path\":\"blocker/x.txt\",\"content\":\"x\"}", &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
  g_assert_null (result);
  blocker = read_file (fixture->ws, "blocker");
  g_assert_cmpstr (blocker, ==, "file\n");
}

static void
test_write_invalid_input (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  TallyToolContext no_workspace = { NULL, NULL, FALSE };
  const char *inputs[] = {
    "{}",
    "{\"file_path\":\"a.txt\"}",
    "{\"content\":\"x\"}",
    "{\"file_path\":\"a.txt\",\"content\":42}",
    "{\"file_path\":7,\"content\":\"x\"}",
    "{\"file_path\":\"\",\"content\":\"x\"}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *result = run_json (tool, &fixture->context, inputs[i], &error);

      g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
      g_assert_null (result);
    }

  {
    g_autoptr(GError) error = NULL;
    g_autofree char *result = run_json (tool, &no_workspace,
                                        "{\"file_path\":\"a.txt\",\"content\":\"x\"}", &error);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
    g_assert_null (result);
  }

  g_assert_cmpuint (count_entries (fixture->ws), ==, 0);
}

static void
test_write_through_symlink (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_write_new ();
  g_autofree char *alias = g_build_filename (fixture->ws, "alias.txt", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;
  GStatBuf st;

  write_file (fixture->ws, "real.txt", "before\n");
  g_assert_cmpint (symlink ("real.txt", alias), ==, 0);

  result = run_json (tool, &fixture->context,
                     "{\"file_path\":\"alias.txt\",\"content\":\"after\\n\"}", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Wrote 6 bytes to real.txt (replaced)");

  contents = read_file (fixture->ws, "real.txt");
  g_assert_cmpstr (contents, ==, "after\n");
  g_assert_cmpint (g_lstat (alias, &st), ==, 0);
  g_assert_true (S_ISLNK (st.st_mode));
}

/* Diffs ---------------------------------------------------------------- */

static void
test_diff_new_file (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(JsonObject) input = string_input ("file_path", "notes/new.txt",
                                              "content", "one\ntwo\nthree", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *diff = tally_tool_write_dup_diff (&fixture->context, input, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (diff, ==,
                   "--- a/notes/new.txt\n"
                   "+++ b/notes/new.txt\n"
                   "@@ -0,0 +1,3 @@\n"
                   "+one\n"
                   "+two\n"
                   "+three\n"
                   "\\ No newline at end of file\n");

  /* A preview writes nothing. */
  g_assert_false (exists (fixture->ws, "notes"));
}

static GString *
numbered_lines (guint first,
                guint last)
{
  GString *text = g_string_new (NULL);

  for (guint i = first; i <= last; i++)
    g_string_append_printf (text, "l%u\n", i);

  return text;
}

static void
test_diff_changed_file (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(GString) old_text = numbered_lines (1, 20);
  g_autoptr(GString) new_text = g_string_new (NULL);
  g_autoptr(JsonObject) input = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *diff = NULL;
  g_autofree char *unchanged = NULL;

  write_file (fixture->ws, "data/lines.txt", old_text->str);

  /* Line 2 changed, line 15 removed, a last line without a newline added:
   * the second and third changes are close enough to share a hunk. */
  for (guint i = 1; i <= 20; i++)
    {
      if (i == 2)
        g_string_append (new_text, "L2\n");
      else if (i != 15)
        g_string_append_printf (new_text, "l%u\n", i);
    }
  g_string_append (new_text, "tail");

  input = string_input ("file_path", "data/lines.txt", "content", new_text->str, NULL);
  diff = tally_tool_write_dup_diff (&fixture->context, input, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (diff, ==,
                   "--- a/data/lines.txt\n"
                   "+++ b/data/lines.txt\n"
                   "@@ -1,5 +1,5 @@\n"
                   " l1\n"
                   "-l2\n"
                   "+L2\n"
                   " l3\n"
                   " l4\n"
                   " l5\n"
                   "@@ -12,9 +12,9 @@\n"
                   " l12\n"
                   " l13\n"
                   " l14\n"
                   "-l15\n"
                   " l16\n"
                   " l17\n"
                   " l18\n"
                   " l19\n"
                   " l20\n"
                   "+tail\n"
                   "\\ No newline at end of file\n");

  /* The file is untouched, and writing the same text again is no change. */
  unchanged = read_file (fixture->ws, "data/lines.txt");
  g_assert_cmpstr (unchanged, ==, old_text->str);
  {
    g_autoptr(JsonObject) same = string_input ("file_path", "data/lines.txt",
                                               "content", old_text->str, NULL);
    g_autofree char *empty = tally_tool_write_dup_diff (&fixture->context, same, &error);

    g_assert_no_error (error);
    g_assert_cmpstr (empty, ==, "");
  }
}

static void
test_diff_edit (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(JsonObject) input = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *diff = NULL;

  write_file (fixture->ws, "q.sql",
              "SELECT store_id,\n"
              "       SUM(amount)\n"
              "FROM sales\n"
              "GROUP BY store_id;\n");

  input = tally_test_parse_object ("{\"file_path\":\"q.sql\",\"old_string\":\"SUM(amount)\","
                       "\"new_string\":\"SUM(amount) AS revenue\\n  , COUNT(*) AS n\"}");
  diff = tally_tool_edit_dup_diff (&fixture->context, input, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (diff, ==,
                   "--- a/q.sql\n"
                   "+++ b/q.sql\n"
                   "@@ -1,4 +1,5 @@\n"
                   " SELECT store_id,\n"
                   "-       SUM(amount)\n"
                   "+       SUM(amount) AS revenue\n"
                   "+  , COUNT(*) AS n\n"
                   " FROM sales\n"
                   " GROUP BY store_id;\n");

  /* The preview meets the errors the edit would. */
  {
    g_autoptr(JsonObject) bad = tally_test_parse_object ("{\"file_path\":\"q.sql\",\"old_string\":\"nope\","
                                             "\"new_string\":\"x\"}");
    g_autoptr(GError) bad_error = NULL;
    g_autofree char *none = tally_tool_edit_dup_diff (&fixture->context, bad, &bad_error);

    g_assert_error (bad_error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
    g_assert_cmpstr (bad_error->message, ==, "old_string was not found in q.sql");
    g_assert_null (none);
  }
}

static void
test_diff_outside_and_errors (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autofree char *target = g_build_filename (fixture->outside, "o.txt", NULL);
  g_autofree char *expected = NULL;
  g_autoptr(GError) error = NULL;

  write_file (fixture->outside, "o.txt", "a\n");

  /* Previewed (the card is where the analyst decides), shown absolute. */
  {
    g_autoptr(JsonObject) input = string_input ("file_path", target, "content", "b\n", NULL);
    g_autofree char *diff = tally_tool_write_dup_diff (&fixture->context, input, &error);

    g_assert_no_error (error);
    expected = g_strdup_printf ("--- %s\n+++ %s\n@@ -1 +1 @@\n-a\n+b\n", target, target);
    g_assert_cmpstr (diff, ==, expected);
  }

  write_file (fixture->ws, "dir/file.txt", "x\n");
  {
    g_autoptr(JsonObject) input = string_input ("file_path", "dir", "content", "b\n", NULL);
    g_autofree char *diff = tally_tool_write_dup_diff (&fixture->context, input, &error);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED);
    g_assert_null (diff);
    g_clear_error (&error);
  }
  {
    g_autofree char *diff = tally_tool_write_dup_diff (&fixture->context, NULL, &error);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
    g_assert_null (diff);
    g_clear_error (&error);
  }
}

/* Applies a unified diff to @old_text the way patch(1) would, checking
 * every context and removed line against the text. */
static char *
apply_unified_diff (const char *old_text,
                    const char *diff)
{
  g_auto(GStrv) old_lines = NULL;
  g_auto(GStrv) diff_lines = NULL;
  GString *out = g_string_new (NULL);
  guint old_n, next_old = 0, i = 2;
  gboolean old_ends_open = FALSE;

  if (diff[0] == '\0')
    {
      g_string_append (out, old_text);
      return g_string_free (out, FALSE);
    }

  /* Split keeping track of a missing final newline. */
  old_lines = g_strsplit (old_text, "\n", -1);
  old_n = g_strv_length (old_lines);
  if (old_n > 0 && old_lines[old_n - 1][0] == '\0')
    old_n--;
  else if (old_n > 0)
    old_ends_open = TRUE;

  diff_lines = g_strsplit (diff, "\n", -1);
  g_assert_true (g_str_has_prefix (diff_lines[0], "--- "));
  g_assert_true (g_str_has_prefix (diff_lines[1], "+++ "));

  while (diff_lines[i] != NULL && diff_lines[i][0] != '\0')
    {
      guint old_start = 0, old_count = 1, new_start = 0, new_count = 1;
      const char *header = diff_lines[i];
      char *end;

      g_assert_true (g_str_has_prefix (header, "@@ -"));
      old_start = strtoul (header + 4, &end, 10);
      if (*end == ',')
        old_count = strtoul (end + 1, &end, 10);
      g_assert_true (g_str_has_prefix (end, " +"));
      new_start = strtoul (end + 2, &end, 10);
      if (*end == ',')
        new_count = strtoul (end + 1, &end, 10);
      g_assert_cmpstr (end, ==, " @@");
      (void) new_start;
      (void) new_count;

      /* Copy the untouched lines before the hunk. */
      {
        guint first = old_count == 0 ? old_start : old_start - 1;

        g_assert_cmpuint (first, >=, next_old);
        for (; next_old < first; next_old++)
          g_string_append_printf (out, "%s\n", old_lines[next_old]);
      }

      for (i++; diff_lines[i] != NULL && diff_lines[i][0] != '\0' && diff_lines[i][0] != '@'; i++)
        {
          const char *line = diff_lines[i];
          gboolean no_newline = diff_lines[i + 1] != NULL &&
                                g_str_has_prefix (diff_lines[i + 1], "\\ No newline");

          switch (line[0])
            {
            case ' ':
            case '-':
              g_assert_cmpuint (next_old, <, old_n);
              g_assert_cmpstr (line + 1, ==, old_lines[next_old]);
              g_assert_true (no_newline == (old_ends_open && next_old == old_n - 1));
              if (line[0] == ' ')
                g_string_append_printf (out, "%s%s", line + 1, no_newline ? "" : "\n");
              next_old++;
              break;
            case '+':
              g_string_append_printf (out, "%s%s", line + 1, no_newline ? "" : "\n");
              break;
            default:
              g_assert_not_reached ();
            }

          if (no_newline)
            i++;
        }
    }

  for (; next_old < old_n; next_old++)
    g_string_append_printf (out, "%s%s", old_lines[next_old],
                            (old_ends_open && next_old == old_n - 1) ? "" : "\n");

  return g_string_free (out, FALSE);
}

static char *
random_text (GRand *rand,
             guint  n_lines)
{
  static const char * const words[] = { "a", "b", "c", "d", "" };
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < n_lines; i++)
    {
      g_string_append (text, words[g_rand_int_range (rand, 0, G_N_ELEMENTS (words))]);
      if (i + 1 < n_lines || g_rand_boolean (rand))
        g_string_append_c (text, '\n');
    }

  return g_string_free (text, FALSE);
}

/* Mutates @text line by line: drops, changes and adds lines at random. */
static char *
mutate_text (GRand      *rand,
             const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GString *out = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      int what = g_rand_int_range (rand, 0, 10);

      if (what == 0)
        continue;
      if (what == 1)
        g_string_append (out, "new\n");
      g_string_append (out, what == 2 ? "changed" : lines[i]);
      if (lines[i + 1] != NULL)
        g_string_append_c (out, '\n');
    }

  return g_string_free (out, FALSE);
}

static void
test_diff_random_round_trip (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (20240501);
  g_autoptr(TallyTool) tool = tally_tool_write_new ();

  for (guint round = 0; round < 300; round++)
    {
      g_autofree char *old_text = random_text (rand, g_rand_int_range (rand, 0, 40));
      g_autofree char *new_text = (round % 3 == 0)
        ? random_text (rand, g_rand_int_range (rand, 0, 40))
        : mutate_text (rand, old_text);
      g_autoptr(JsonObject) input = string_input ("file_path", "r.txt",
                                                  "content", new_text, NULL);
      g_autoptr(GError) error = NULL;
      g_autofree char *diff = NULL;
      g_autofree char *patched = NULL;

      write_file (fixture->ws, "r.txt", old_text);
      diff = tally_tool_write_dup_diff (&fixture->context, input, &error);
      g_assert_no_error (error);

      if (strcmp (old_text, new_text) == 0)
        g_assert_cmpstr (diff, ==, "");
      else
        g_assert_true (g_str_has_prefix (diff, "--- a/r.txt\n+++ b/r.txt\n@@ -"));

      patched = apply_unified_diff (old_text, diff);
      g_assert_cmpstr (patched, ==, new_text);
    }

  /* A large file with few changes still gets small hunks, and a text past
   * the output cap is cut with a note. */
  {
    g_autoptr(GString) big = numbered_lines (1, 50000);
    g_autoptr(GString) edited = numbered_lines (1, 50000);
    g_autoptr(GString) replaced = g_string_new (NULL);
    g_autoptr(JsonObject) input = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *diff = NULL;
    g_autofree char *patched = NULL;
    char *mid = strstr (edited->str, "\nl25000\n");

    g_assert_nonnull (mid);
    mid[1] = 'L';
    write_file (fixture->ws, "big.txt", big->str);
    input = string_input ("file_path", "big.txt", "content", edited->str, NULL);
    diff = tally_tool_write_dup_diff (&fixture->context, input, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (diff, ==,
                     "--- a/big.txt\n+++ b/big.txt\n@@ -24997,7 +24997,7 @@\n"
                     " l24997\n l24998\n l24999\n-l25000\n+L25000\n l25001\n l25002\n l25003\n");
    patched = apply_unified_diff (big->str, diff);
    g_assert_cmpstr (patched, ==, edited->str);

    for (guint i = 0; i < 50000; i++)
      g_string_append_printf (replaced, "other %u\n", i);
    g_clear_pointer (&input, json_object_unref);
    g_clear_pointer (&diff, g_free);
    input = string_input ("file_path", "big.txt", "content", replaced->str, NULL);
    diff = tally_tool_write_dup_diff (&fixture->context, input, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (strlen (diff), <=, 256 * 1024 + 200);
    g_assert_true (g_str_has_suffix (diff, "… the diff is longer than 256 KiB; the rest is not shown\n"));
    g_assert_true (g_str_has_prefix (diff, "--- a/big.txt\n+++ b/big.txt\n@@ -1,50000 +1,50000 @@\n-l1\n"));
  }
}

/* Edit ----------------------------------------------------------------- */

static char *
run_edit (Fixture    *fixture,
          const char *old_string,
          const char *new_string,
          const char *replace_all,
          GError    **error)
{
  g_autoptr(TallyTool) tool = tally_tool_edit_new ();
  g_autoptr(JsonObject) input = string_input ("file_path", "f.txt",
                                              "old_string", old_string,
                                              "new_string", new_string, NULL);

  if (replace_all != NULL)
    {
      g_autoptr(JsonNode) node = json_from_string (replace_all, NULL);

      g_assert_nonnull (node);
      json_object_set_member (input, "replace_all", g_steal_pointer (&node));
    }

  return run_tool (tool, &fixture->context, input, error);
}

static void
test_edit_single (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fixture->ws, "f.txt", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;

  write_file (fixture->ws, "f.txt", "alpha beta gamma\r\nsecond line\n");
  g_assert_cmpint (g_chmod (path, 0600), ==, 0);

  result = run_edit (fixture, "beta gamma\r\n", "BETA\r\n", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Replaced 1 occurrence in f.txt");

  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "alpha BETA\r\nsecond line\n");
  g_assert_cmpuint (file_mode (fixture->ws, "f.txt"), ==, 0600);
  g_assert_cmpuint (count_entries (fixture->ws), ==, 1);
}

static void
test_edit_not_found (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;

  write_file (fixture->ws, "f.txt", "alpha beta\n");

  /* Exact match only: case and whitespace matter, no patterns. */
  result = run_edit (fixture, "Beta", "x", NULL, &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (error->message, ==, "old_string was not found in f.txt");
  g_assert_null (result);
  g_clear_error (&error);

  result = run_edit (fixture, "a.*a", "x", "true", &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_null (result);

  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "alpha beta\n");
}

static void
test_edit_multiple (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;

  write_file (fixture->ws, "f.txt", "total = a + a + a\n");

  result = run_edit (fixture, "a", "b", NULL, &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_cmpstr (error->message, ==,
                   "old_string occurs 4 times in f.txt; give more context or set replace_all");
  g_assert_null (result);
  g_clear_error (&error);

  result = run_edit (fixture, "a", "b", "false", &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_null (result);

  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "total = a + a + a\n");
}

static void
test_edit_replace_all (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *contents = NULL;

  write_file (fixture->ws, "f.txt", "x = a + a + a\n");
  result = run_edit (fixture, " a", " bb", "true", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Replaced 3 occurrences in f.txt");
  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "x = bb + bb + bb\n");
  g_clear_pointer (&result, g_free);
  g_clear_pointer (&contents, g_free);

  /* Occurrences do not overlap, and the replacement is not searched
   * again. */
  write_file (fixture->ws, "f.txt", "aaaaa");
  result = run_edit (fixture, "aa", "aab", "true", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Replaced 2 occurrences in f.txt");
  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "aabaaba");
  g_clear_pointer (&result, g_free);
  g_clear_pointer (&contents, g_free);

  /* replace_all with a single occurrence is fine too. */
  result = run_edit (fixture, "aabaaba", "", "true", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "Replaced 1 occurrence in f.txt");
  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "");
}

static void
test_edit_invalid (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_edit_new ();
  g_autofree char *elsewhere = g_build_filename (fixture->outside, "o.txt", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *outside_contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;

  write_file (fixture->ws, "f.txt", "same\n");
  write_file (fixture->outside, "o.txt", "same\n");
  write_file (fixture->ws, "bin.dat", "");
  {
    g_autofree char *bin = g_build_filename (fixture->ws, "bin.dat", NULL);

    g_file_set_contents (bin, "a\0same", 6, &error);
    g_assert_no_error (error);
  }

  result = run_edit (fixture, "", "x", NULL, &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_nonnull (strstr (error->message, "must not be empty"));
  g_clear_error (&error);

  result = run_edit (fixture, "same", "same", NULL, &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_assert_nonnull (strstr (error->message, "are the same"));
  g_clear_error (&error);

  result = run_edit (fixture, "same", "other", "\"yes\"", &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_clear_error (&error);

  result = run_json (tool, &fixture->context,
                     "{\"file_path\":\"missing.txt\",\"old_string\":\"a\",\"new_string\":\"b\"}",
                     &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_NOT_FOUND);
  g_assert_false (exists (fixture->ws, "missing.txt"));
  g_clear_error (&error);

  result = run_json (tool, &fixture->context,
                     "{\"file_path\":\".\",\"old_string\":\"a\",\"new_string\":\"b\"}", &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED);
  g_clear_error (&error);

  result = run_json (tool, &fixture->context,
                     "{\"file_path\":\"bin.dat\",\"old_string\":\"same\",\"new_string\":\"b\"}",
                     &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED);
  g_clear_error (&error);

  result = run_json (tool, &fixture->context,
                     "{\"file_path\":\"f.txt\",\"new_string\":\"b\"}", &error);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  g_clear_error (&error);

  {
    g_autoptr(JsonObject) input = string_input ("file_path", elsewhere, "old_string", "same",
                                                "new_string", "changed", NULL);
    TallyToolContext allowed = fixture->context;

    result = run_tool (tool, &fixture->context, input, &error);
    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE);
    g_assert_null (result);
    g_clear_error (&error);
    outside_contents = read_file (fixture->outside, "o.txt");
    g_assert_cmpstr (outside_contents, ==, "same\n");
    g_clear_pointer (&outside_contents, g_free);

    allowed.allow_outside_workspace = TRUE;
    result = run_tool (tool, &allowed, input, &error);
    g_assert_no_error (error);
    g_assert_nonnull (g_strrstr (result, elsewhere));
    outside_contents = read_file (fixture->outside, "o.txt");
    g_assert_cmpstr (outside_contents, ==, "changed\n");
  }

  contents = read_file (fixture->ws, "f.txt");
  g_assert_cmpstr (contents, ==, "same\n");
}

/* Bash ----------------------------------------------------------------- */

static char *
run_bash (Fixture    *fixture,
          const char *command,
          gint64      timeout_ms,
          GError    **error)
{
  g_autoptr(TallyTool) tool = tally_tool_bash_new ();
  g_autoptr(JsonObject) input = string_input ("command", command, NULL);

  if (timeout_ms >= 0)
    json_object_set_int_member (input, "timeout_ms", timeout_ms);

  return run_tool (tool, &fixture->context, input, error);
}

static void
test_bash_echo (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;

  result = run_bash (fixture, "echo hello; printf 'no newline'", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "hello\nno newline\nExit status: 0");
  g_clear_pointer (&result, g_free);

  /* Standard input is empty, so a reader ends at once. */
  result = run_bash (fixture, "cat", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "(no output)\nExit status: 0");
}

static void
test_bash_exit_status (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;

  /* Standard error is merged, in order; a failure is a result. */
  result = run_bash (fixture, "echo out; echo oops >&2; exit 3", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "out\noops\nExit status: 3");
  g_clear_pointer (&result, g_free);

  result = run_bash (fixture, "no-such-command-here", -1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (result, "not found"));
  g_assert_true (g_str_has_suffix (result, "\nExit status: 127"));
  g_clear_pointer (&result, g_free);

  result = run_bash (fixture, "kill -TERM $$", -1, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (result, "(no output)\nTerminated by signal 15 ("));
}

static void
test_bash_cwd (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *expected = g_strdup_printf ("%s\n%s\nExit status: 0", fixture->ws, fixture->ws);
  g_autofree char *made = NULL;

  result = run_bash (fixture, "pwd; /bin/pwd -P; echo made > made.txt", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, expected);

  made = read_file (fixture->ws, "made.txt");
  g_assert_cmpstr (made, ==, "made\n");
}

static void
test_bash_environment (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;

  /* Secrets under every kind of name: none is on the allow-list. */
  static const char * const secrets[][2] = {
    { "ANTHROPIC_API_KEY", "sk-ant-test-should-not-leak" },
    { "ANTHROPIC_AUTH_TOKEN", "token-should-not-leak" },
    { "DATABASE_URL", "postgres://analyst:hunter2-should-not-leak@db/sales" },
    { "HTTPS_PROXY", "http://user:proxypass-should-not-leak@proxy:3128" },
    { "GITHUB_TOKEN", "gh-should-not-leak" },
    { "X_PAT", "pat-should-not-leak" },
    { "PGPASSWORD", "pg-should-not-leak" },
    { "AWS_SECRET_ACCESS_KEY", "aws-should-not-leak" },
    { "SSH_AUTH_SOCK", "/tmp/ssh-should-not-leak/agent.1" },
    { "my_app_secret", "lower-should-not-leak" },
  };
  g_autoptr(TallyTool) tool = tally_tool_bash_new ();
  g_autoptr(JsonObject) input = string_input ("command", "env", NULL);
  const char *extra[] = { "TALLY_TEST_SHARED", "ANTHROPIC_API_KEY", "not a name", NULL };

  for (guint i = 0; i < G_N_ELEMENTS (secrets); i++)
    g_setenv (secrets[i][0], secrets[i][1], TRUE);
  g_setenv ("TALLY_TEST_SHARED", "shared-value", TRUE);
  g_setenv ("LC_TIME", "C", TRUE);

  result = run_tool (tool, &fixture->context, input, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (secrets); i++)
    {
      g_autofree char *line = g_strdup_printf ("%s=", secrets[i][0]);

      g_assert_null (strstr (result, line));
      g_assert_null (strstr (result, secrets[i][1]));
    }
  g_assert_null (strstr (result, "TALLY_TEST_SHARED"));
  /* The allow-list does pass. */
  g_assert_nonnull (strstr (result, "LC_TIME=C\n"));
  g_assert_nonnull (strstr (result, "PATH="));
  {
    g_autofree char *pwd = g_strdup_printf ("PWD=%s\n", fixture->ws);
    g_assert_nonnull (strstr (result, pwd));
  }
  g_assert_true (g_str_has_suffix (result, "\nExit status: 0"));
  g_clear_pointer (&result, g_free);

  /* A listed name passes; the key never does, listed or not. */
  tally_tool_bash_set_extra_env (TALLY_TOOL_BASH (tool), extra);
  result = run_tool (tool, &fixture->context, input, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (result, "TALLY_TEST_SHARED=shared-value\n"));
  g_assert_null (strstr (result, "sk-ant-test"));
  g_assert_null (strstr (result, "should-not-leak"));

  /* The tool's own process keeps its environment. */
  g_assert_cmpstr (g_getenv ("ANTHROPIC_API_KEY"), ==, "sk-ant-test-should-not-leak");

  for (guint i = 1; i < G_N_ELEMENTS (secrets); i++)
    g_unsetenv (secrets[i][0]);
  g_unsetenv ("TALLY_TEST_SHARED");
  g_unsetenv ("LC_TIME");
}

static void
test_bash_timeout (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  pid_t child;

  result = run_bash (fixture, "echo started; sleep 30", 1000, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (result, "started\nThe command timed out after 1 s"));
  g_clear_pointer (&result, g_free);

  /* The shell waits for a child of its own: the whole group goes. */
  result = run_bash (fixture, "sh -c 'sleep 30 & echo $! > child.pid; wait'", 1500, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (result, "(no output)\nThe command timed out after 1.5 s"));

  child = read_pid (fixture->ws, "child.pid");
  g_assert_true (wait_process_gone (child));
}

static void
test_bash_output_cap (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  const char *marker;
  gsize len;

  /* 50,000 lines "y": the first 15,000 bytes, then the last 15,000 less
   * the broken line they start with. */
  result = run_bash (fixture, "yes | head -c 100000", -1, &error);
  g_assert_no_error (error);

  len = strlen (result);
  marker = strstr (result, "[… 70002 bytes omitted …]\n");
  g_assert_nonnull (marker);
  g_assert_cmpuint (marker - result, ==, 15000);
  g_assert_true (g_str_has_prefix (result, "y\ny\ny\n"));
  g_assert_true (g_str_has_suffix (result, "y\ny\nExit status: 0"));
  g_assert_cmpuint (len, ==, 15000 + strlen ("[… 70002 bytes omitted …]\n") + 14998 +
                    strlen ("Exit status: 0"));
  g_clear_pointer (&result, g_free);

  /* Invalid UTF-8 comes back repaired. */
  result = run_bash (fixture, "printf 'caf\\351\\n'", -1, &error);
  g_assert_no_error (error);
  g_assert_true (g_utf8_validate (result, -1, NULL));
  g_assert_cmpstr (result, ==, "caf\xef\xbf\xbd\nExit status: 0");
}

/* Runs after the tool's own cancellation hook ("cancelled" is RUN_LAST and
 * this is connected after, so even a hook the worker connects in between
 * comes first), inside the same g_cancellable_cancel(), and keeps it going
 * until the tool has killed the shell, and a little longer. A tool that
 * drops its hook while the
 * emission still runs (GLib 2.74 then leaks a GCancellableSource) is caught
 * by LeakSanitizer every time rather than once in a while. */
static void
hold_cancellation_cb (GCancellable *cancellable,
                      gpointer      user_data)
{
  const char *ws = user_data;

  g_assert_true (wait_process_gone (read_pid (ws, "shell.pid")));
  g_usleep (200 * 1000);
}

static gboolean
cancel_when_pid_file_cb (gpointer user_data)
{
  gpointer *args = user_data;
  const char *ws = args[0];
  GCancellable *cancellable = args[1];
  g_autofree char *path = g_build_filename (ws, "child.pid", NULL);
  g_autofree char *text = NULL;

  if (g_file_get_contents (path, &text, NULL, NULL) && strchr (text, '\n') != NULL)
    {
      g_signal_connect_after (cancellable, "cancelled", G_CALLBACK (hold_cancellation_cb),
                              args[0]);
      g_cancellable_cancel (cancellable);
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

static void
test_bash_cancel (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_bash_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(JsonObject) input = string_input ("command",
                                              "echo $$ > shell.pid; "
                                              "sleep 30 & echo $! > child.pid; wait", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  gpointer args[2] = { fixture->ws, cancellable };
  pid_t child;

  /* Cancels once the command is surely running (the source removes
   * itself then). */
  g_timeout_add (20, cancel_when_pid_file_cb, args);
  result = run_async_and_wait (tool, &fixture->context, input, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_assert_true (g_cancellable_is_cancelled (cancellable));

  child = read_pid (fixture->ws, "child.pid");
  g_assert_true (wait_process_gone (child));
}

static void
test_bash_background (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  pid_t child;

  /* A background job holding the output open does not keep the call
   * waiting for the whole timeout: it is stopped soon after the shell
   * exits. */
  result = run_bash (fixture, "sleep 30 & echo $! > child.pid; echo done", 60000, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (result, "done\nExit status: 0\n(Background processes"));

  child = read_pid (fixture->ws, "child.pid");
  g_assert_true (wait_process_gone (child));
  g_clear_pointer (&result, g_free);

  /* One that lets go of the output is stopped too. */
  result = run_bash (fixture, "sleep 30 > /dev/null 2>&1 & echo $! > quiet.pid; echo quick", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "quick\nExit status: 0\n"
                   "(Background processes the command left running were stopped when it ended.)");
  g_assert_true (process_gone (read_pid (fixture->ws, "quiet.pid")));
  g_clear_pointer (&result, g_free);

  /* Nothing left behind: no note. */
  result = run_bash (fixture, "sleep 0 & wait; echo calm", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "calm\nExit status: 0");
}

/* Work put in the background (`&`, `nohup`, `setsid`, a double fork)
 * ends with the command, whether it ends on its own or times out; every
 * process is gone (reaped, not a zombie) by the time the tool returns. */
static void
test_bash_no_orphans (Fixture       *fixture,
                      gconstpointer  data)
{
  const char *background =
    "sleep 300 > /dev/null 2>&1 & echo $! > amp.pid; "
    "nohup sleep 301 > /dev/null 2>&1 & echo $! > nohup.pid; "
    "setsid sh -c 'echo $$ > setsid.pid; exec sleep 302' > /dev/null 2>&1 & "
    "(sh -c 'echo $$ > double.pid; exec sleep 303' > /dev/null 2>&1 &) ; "
    "while [ ! -s setsid.pid ] || [ ! -s double.pid ]; do sleep 0.05; done";
  static const char * const pid_files[] = { "amp.pid", "nohup.pid", "setsid.pid", "double.pid" };
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;
  g_autofree char *timing_out = NULL;

  result = run_bash (fixture, background, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (result, ==, "(no output)\nExit status: 0\n"
                   "(Background processes the command left running were stopped when it ended.)");
  for (guint i = 0; i < G_N_ELEMENTS (pid_files); i++)
    {
      g_autofree char *path = g_build_filename (fixture->ws, pid_files[i], NULL);
      pid_t pid = read_pid (fixture->ws, pid_files[i]);

      g_assert_cmpint (kill (pid, 0), ==, -1);
      g_assert_cmpint (errno, ==, ESRCH);
      g_unlink (path);
    }
  g_clear_pointer (&result, g_free);

  /* The same, ended by the timeout while the shell still waits. */
  timing_out = g_strconcat (background, "; sleep 300", NULL);
  result = run_bash (fixture, timing_out, 2000, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (result, "(no output)\nThe command timed out after 2 s"));
  for (guint i = 0; i < G_N_ELEMENTS (pid_files); i++)
    {
      pid_t pid = read_pid (fixture->ws, pid_files[i]);

      g_assert_cmpint (kill (pid, 0), ==, -1);
      g_assert_cmpint (errno, ==, ESRCH);
    }
}

/* Run by test_bash_tally_killed() in a process of its own, which stands
 * for Tally: the command kills that process with SIGKILL while the shell
 * and a child of it run. */
static void
test_bash_tally_killed_subprocess (void)
{
  const char *ws = g_getenv ("TALLY_TEST_KILLED_WORKSPACE");
  TallyToolContext context = { NULL, (char *) ws, FALSE };
  g_autoptr(TallyTool) tool = tally_tool_bash_new ();
  g_autoptr(JsonObject) input = NULL;
  g_autofree char *pid_text = g_strdup_printf ("%d\n", (int) getpid ());
  g_autoptr(GError) error = NULL;
  g_autofree char *result = NULL;

  if (ws == NULL)
    {
      g_test_skip ("Only run by /tally/mutating-tools/bash/tally-killed");
      return;
    }

  write_file (ws, "tally.pid", pid_text);
  input = string_input ("command",
                        "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; "
                        "kill -KILL \"$(cat tally.pid)\"; wait", NULL);
  json_object_set_int_member (input, "timeout_ms", 20000);

  result = tally_tool_run (tool, &context, input, NULL, &error);
  g_error ("Still alive after the command killed this process: %s",
           error != NULL ? error->message : result);
}

/* Tally killed with SIGKILL, which it cannot handle, while a command runs:
 * the reaper's parent-death signal stops the command, with every process
 * it started. */
static void
test_bash_tally_killed (Fixture       *fixture,
                        gconstpointer  data)
{
  g_setenv ("TALLY_TEST_KILLED_WORKSPACE", fixture->ws, TRUE);
  g_test_trap_subprocess ("/tally/mutating-tools/bash/subprocess/tally-killed",
                          60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_unsetenv ("TALLY_TEST_KILLED_WORKSPACE");

  /* The command ran and killed its "Tally"… */
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr_unmatched ("*Still alive*");
  /* …and neither the shell nor its child outlived it (each is polled
   * with a generous bound, against a hang only). */
  g_assert_true (wait_process_gone (read_pid (fixture->ws, "shell.pid")));
  g_assert_true (wait_process_gone (read_pid (fixture->ws, "child.pid")));
}

static void
test_bash_invalid (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(TallyTool) tool = tally_tool_bash_new ();
  TallyToolContext no_workspace = { NULL, NULL, FALSE };
  g_autofree char *missing = g_build_filename (fixture->root, "gone", NULL);
  TallyToolContext missing_workspace = { NULL, missing, FALSE };
  const char *inputs[] = {
    "{}",
    "{\"command\":\"\"}",
    "{\"command\":\"  \\n \"}",
    "{\"command\":42}",
    "{\"command\":\"echo\",\"timeout_ms\":-5}",
    "{\"command\":\"echo\",\"timeout_ms\":\"10\"}",
    "{\"command\":\"echo\",\"timeout_ms\":1.5}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *result = run_json (tool, &fixture->context, inputs[i], &error);

      g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
      g_assert_null (result);
    }

  {
    g_autoptr(GError) error = NULL;
    g_autofree char *result = run_json (tool, &no_workspace, "{\"command\":\"echo hi\"}", &error);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
    g_assert_null (result);
  }
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *result = run_json (tool, &missing_workspace, "{\"command\":\"echo hi\"}",
                                        &error);

    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
    g_assert_null (result);
  }

  /* 0 means the default, and a huge value is capped rather than refused. */
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *result = run_json (tool, &fixture->context,
                                        "{\"command\":\"echo hi\",\"timeout_ms\":0}", &error);

    g_assert_no_error (error);
    g_assert_cmpstr (result, ==, "hi\nExit status: 0");
  }
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *result = run_json (tool, &fixture->context,
                                        "{\"command\":\"echo hi\",\"timeout_ms\":99999999999}",
                                        &error);

    g_assert_no_error (error);
    g_assert_cmpstr (result, ==, "hi\nExit status: 0");
  }
}

/* Paths and summaries for the gate -------------------------------------- */

static void
assert_paths (TallyTool  *tool,
              const char *json,
              const char *expected)
{
  g_autoptr(JsonObject) input = tally_test_parse_object (json);
  g_auto(GStrv) paths = tally_tool_dup_paths (tool, input);

  if (expected == NULL)
    {
      g_assert_null (paths);
      return;
    }

  g_assert_nonnull (paths);
  g_assert_cmpuint (g_strv_length (paths), ==, 1);
  g_assert_cmpstr (paths[0], ==, expected);
}

static void
assert_summary (TallyTool  *tool,
                const char *json,
                const char *expected)
{
  g_autoptr(JsonObject) input = tally_test_parse_object (json);
  g_autofree char *summary = tally_tool_dup_summary (tool, input);

  g_assert_cmpstr (summary, ==, expected);
}

static void
test_dup_paths (void)
{
  g_autoptr(TallyTool) read = tally_tool_read_new ();
  g_autoptr(TallyTool) write = tally_tool_write_new ();
  g_autoptr(TallyTool) edit = tally_tool_edit_new ();
  g_autoptr(TallyTool) glob = tally_tool_glob_new ();
  g_autoptr(TallyTool) grep = tally_tool_grep_new ();
  g_autoptr(TallyTool) bash = tally_tool_bash_new ();
  g_autoptr(TallyTool) query = tally_tool_query_database_new ();

  /* As written, not resolved. */
  assert_paths (read, "{\"file_path\":\"../x.csv\",\"limit\":3}", "../x.csv");
  assert_paths (write, "{\"file_path\":\"/etc/passwd\",\"content\":\"\"}", "/etc/passwd");
  assert_paths (edit, "{\"file_path\":\"a/b.txt\",\"old_string\":\"x\",\"new_string\":\"y\"}",
                "a/b.txt");
  assert_paths (glob, "{\"pattern\":\"*.csv\",\"path\":\"data\"}", "data");
  assert_paths (grep, "{\"pattern\":\"x\",\"path\":\"/tmp\",\"glob\":\"*.md\"}", "/tmp");

  /* None named. */
  assert_paths (glob, "{\"pattern\":\"**/*.csv\"}", NULL);
  assert_paths (grep, "{\"pattern\":\"x\",\"glob\":\"*.md\"}", NULL);
  assert_paths (bash, "{\"command\":\"cat /etc/passwd\"}", NULL);
  assert_paths (query, "{\"sql\":\"SELECT 1\"}", NULL);
  assert_paths (read, "{\"file_path\":42}", NULL);
  assert_paths (write, "{\"file_path\":\"\",\"content\":\"x\"}", NULL);
  assert_paths (edit, "{}", NULL);
  g_assert_null (tally_tool_dup_paths (read, NULL));
}

static void
test_dup_summary (void)
{
  g_autoptr(TallyTool) read = tally_tool_read_new ();
  g_autoptr(TallyTool) write = tally_tool_write_new ();
  g_autoptr(TallyTool) edit = tally_tool_edit_new ();
  g_autoptr(TallyTool) glob = tally_tool_glob_new ();
  g_autoptr(TallyTool) bash = tally_tool_bash_new ();
  g_autoptr(TallyTool) query = tally_tool_query_database_new ();
  g_autofree char *empty = NULL;

  assert_summary (bash, "{\"command\":\"ls -la reports\",\"timeout_ms\":5000}", "ls -la reports");
  assert_summary (bash, "{\"command\":\"cd data &&\\nwc -l *.csv\\r\\n\"}",
                  "cd data &&⏎wc -l *.csv⏎");
  assert_summary (write, "{\"file_path\":\"reports/q1.md\",\"content\":\"# long text\"}",
                  "reports/q1.md");
  assert_summary (edit, "{\"file_path\":\"q.sql\",\"old_string\":\"a\",\"new_string\":\"b\"}",
                  "q.sql");

  /* The default: the input as compact JSON, on one line. */
  assert_summary (read, "{\"file_path\":\"a.txt\",\"limit\":10}",
                  "{\"file_path\":\"a.txt\",\"limit\":10}");
  assert_summary (glob, "{\"pattern\":\"**/*.csv\"}", "{\"pattern\":\"**/*.csv\"}");
  assert_summary (query, "{\"sql\":\"SELECT 1\\nFROM t\"}", "{\"sql\":\"SELECT 1\\nFROM t\"}");
  /* Without the member the tool's summary would use, the default again. */
  assert_summary (bash, "{\"cmd\":\"ls\"}", "{\"cmd\":\"ls\"}");
  assert_summary (write, "{\"file_path\":3}", "{\"file_path\":3}");

  empty = tally_tool_dup_summary (bash, NULL);
  g_assert_cmpstr (empty, ==, "{}");
}

static void
test_registry (void)
{
  g_autoptr(TallyToolRegistry) registry = tally_tool_registry_new_default ();
  g_autoptr(TallyToolRegistry) other = tally_tool_registry_new_default ();
  g_autofree char *first = tally_tool_registry_dup_tools_json (registry);
  g_autofree char *again = tally_tool_registry_dup_tools_json (other);
  g_autoptr(JsonNode) root = NULL;
  const char *names[] = { "Write", "Edit", "Bash" };
  const char *required[] = {
    "[\"file_path\",\"content\"]",
    "[\"file_path\",\"old_string\",\"new_string\"]",
    "[\"command\"]",
  };
  JsonArray *array;

  g_assert_cmpstr (first, ==, again);
  /* The five read-only tools, then these three; card-backed tools may
   * follow. */
  g_assert_cmpuint (tally_tool_registry_get_n_tools (registry), >=, 8);

  root = json_from_string (first, NULL);
  g_assert_nonnull (root);
  array = json_node_get_array (root);
  g_assert_cmpuint (json_array_get_length (array), ==, tally_tool_registry_get_n_tools (registry));

  for (guint i = 0; i < 5; i++)
    g_assert_true (tally_tool_is_read_only (tally_tool_registry_get_tool (registry, i)));

  for (guint i = 0; i < 3; i++)
    {
      TallyTool *tool = tally_tool_registry_get_tool (registry, 5 + i);
      JsonObject *entry = json_array_get_object_element (array, 5 + i);
      JsonObject *schema = json_object_get_object_member (entry, "input_schema");
      g_autoptr(JsonNode) req = json_node_new (JSON_NODE_ARRAY);
      g_autofree char *req_text = NULL;

      g_assert_cmpstr (tally_tool_get_name (tool), ==, names[i]);
      g_assert_true (tally_tool_registry_lookup (registry, names[i]) == tool);
      g_assert_false (tally_tool_is_read_only (tool));
      g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, names[i]);
      g_assert_cmpuint (strlen (json_object_get_string_member (entry, "description")), >, 100);
      g_assert_cmpstr (json_object_get_string_member (schema, "type"), ==, "object");

      json_node_set_array (req, json_object_get_array_member (schema, "required"));
      req_text = json_to_string (req, FALSE);
      g_assert_cmpstr (req_text, ==, required[i]);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  /* Modes asserted below assume the usual umask. */
  umask (022);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("/tally/mutating-tools/write/creates-parents", test_write_creates_parents);
  ADD ("/tally/mutating-tools/write/replaces-atomically", test_write_replaces_atomically);
  ADD ("/tally/mutating-tools/write/preserves-mode", test_write_preserves_mode);
  ADD ("/tally/mutating-tools/write/refuses-outside", test_write_refuses_outside);
  ADD ("/tally/mutating-tools/write/allows-outside-when-approved",
       test_write_allows_outside_when_approved);
  ADD ("/tally/mutating-tools/write/refuses-folders", test_write_refuses_folders);
  ADD ("/tally/mutating-tools/write/invalid-input", test_write_invalid_input);
  ADD ("/tally/mutating-tools/write/through-symlink", test_write_through_symlink);
  ADD ("/tally/mutating-tools/diff/new-file", test_diff_new_file);
  ADD ("/tally/mutating-tools/diff/changed-file", test_diff_changed_file);
  ADD ("/tally/mutating-tools/diff/edit", test_diff_edit);
  ADD ("/tally/mutating-tools/diff/outside-and-errors", test_diff_outside_and_errors);
  ADD ("/tally/mutating-tools/diff/random-round-trip", test_diff_random_round_trip);
  ADD ("/tally/mutating-tools/edit/single", test_edit_single);
  ADD ("/tally/mutating-tools/edit/not-found", test_edit_not_found);
  ADD ("/tally/mutating-tools/edit/multiple", test_edit_multiple);
  ADD ("/tally/mutating-tools/edit/replace-all", test_edit_replace_all);
  ADD ("/tally/mutating-tools/edit/invalid", test_edit_invalid);
  ADD ("/tally/mutating-tools/bash/echo", test_bash_echo);
  ADD ("/tally/mutating-tools/bash/exit-status", test_bash_exit_status);
  ADD ("/tally/mutating-tools/bash/cwd", test_bash_cwd);
  ADD ("/tally/mutating-tools/bash/environment", test_bash_environment);
  ADD ("/tally/mutating-tools/bash/timeout", test_bash_timeout);
  ADD ("/tally/mutating-tools/bash/output-cap", test_bash_output_cap);
  ADD ("/tally/mutating-tools/bash/cancel", test_bash_cancel);
  ADD ("/tally/mutating-tools/bash/background", test_bash_background);
  ADD ("/tally/mutating-tools/bash/no-orphans", test_bash_no_orphans);
  ADD ("/tally/mutating-tools/bash/tally-killed", test_bash_tally_killed);
  g_test_add_func ("/tally/mutating-tools/bash/subprocess/tally-killed",
                   test_bash_tally_killed_subprocess);
  ADD ("/tally/mutating-tools/bash/invalid", test_bash_invalid);

  g_test_add_func ("/tally/mutating-tools/dup-paths", test_dup_paths);
  g_test_add_func ("/tally/mutating-tools/dup-summary", test_dup_summary);
  g_test_add_func ("/tally/mutating-tools/registry", test_registry);

  return g_test_run ();
}
