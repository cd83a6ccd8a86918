/* SPDX-License-Identifier: GPL-3.0-or-later */

/* File names that could forge tool output (issue 10, item 12): Glob and
 * Grep print a name with a line break, another control character, bytes
 * that are not UTF-8 (and, for Grep, a colon) in a quoted, escaped form, so
 * every result line is one file; and Read opens each name exactly as it was
 * listed. See docs/security.md, "Tool input". */

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "tally-tool.h"
#include "tally-tool-glob.h"
#include "tally-tool-grep.h"
#include "tally-tool-read.h"
#include "tally-test-util.h"

/* name on disk → how Glob lists it (Grep lists the same, except where a
 * colon forces quotes; in sub/ the quotes move to the front of the whole
 * path, and a name that needed them only for its first character needs
 * none there). The contents of each file are "secret N". */
static const struct { const char *name; const char *listed; const char *grep_listed; const char *sub_listed; } files[] = {
  { "plain.csv", "plain.csv", NULL },
  { "line\nbreak.csv", "\"line\\nbreak.csv\"", NULL },
  { "forged.csv\nq1.csv", "\"forged.csv\\nq1.csv\"", NULL },
  { "bad\xff\xfe.csv", "\"bad\\xFF\\xFE.csv\"", NULL },
  { "tab\there.csv", "\"tab\\there.csv\"", NULL },
  { "esc\x1b[31mred.csv", "\"esc\\x1B[31mred.csv\"", NULL },
  { "cr\rreturn.csv", "\"cr\\rreturn.csv\"", NULL },
  { "\"quoted\".csv", "\"\\\"quoted\\\".csv\"", NULL, "sub/\"quoted\".csv" },
  { "back\\slash.csv", "back\\slash.csv", NULL },
  { "colon:7:x.csv", "colon:7:x.csv", "\"colon:7:x.csv\"" },
  { " lead.csv", "\" lead.csv\"", NULL, "sub/ lead.csv" },
  { "na\xc3\xafve \xe2\x82\xac.csv", "na\xc3\xafve \xe2\x82\xac.csv", NULL },
  { "bidi\xe2\x80\xaegpj.csv", "\"bidi\\u202Egpj.csv\"", NULL },
  { "sep\xe2\x80\xa8line.csv", "\"sep\\u2028line.csv\"", NULL },
};

typedef struct {
  char             *root;
  char             *ws;
  TallyToolContext  context;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("tally-names-XXXXXX", &error);
  g_autofree char *sub = NULL;

  g_assert_no_error (error);
  f->root = realpath (tmp, NULL);
  g_assert_nonnull (f->root);
  f->ws = g_build_filename (f->root, "ws", NULL);
  sub = g_build_filename (f->ws, "sub", NULL);
  g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);

  /* Files in the workspace and, with the same names, in sub/. */
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    for (guint d = 0; d < 2; d++)
      {
        g_autofree char *path = g_build_filename (d == 0 ? f->ws : sub, files[i].name, NULL);
        g_autofree char *contents = g_strdup_printf ("header\nsecret %u\n", i);

        g_file_set_contents (path, contents, -1, &error);
        g_assert_no_error (error);
      }

  f->context.workspace = f->ws;
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tally_test_rm_rf (f->root);
  g_free (f->root);
  g_free (f->ws);
}

static char *
run (TallyTool        *tool,
     Fixture          *f,
     JsonObject       *input,
     GError          **error)
{
  return tally_tool_run (tool, &f->context, input, NULL, error);
}

static char *
read_listed (Fixture    *f,
             const char *listed)
{
  g_autoptr(TallyTool) read = tally_tool_read_new ();
  g_autoptr(JsonObject) input = json_object_new ();
  g_autoptr(GError) error = NULL;
  char *text;

  json_object_set_string_member (input, "file_path", listed);
  text = run (read, f, input, &error);
  if (text == NULL)
    g_error ("Read “%s”: %s", listed, error->message);
  return text;
}

static guint
file_index (const char *listed,
            gboolean    grep,
            const char *prefix)
{
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      const char *want = grep && files[i].grep_listed != NULL ? files[i].grep_listed : files[i].listed;
      g_autofree char *full = NULL;

      if (prefix == NULL)
        full = g_strdup (want);
      else if (files[i].sub_listed != NULL)
        full = g_strdup (files[i].sub_listed);
      else if (want[0] == '"')
        full = g_strdup_printf ("\"%s/%s", prefix, want + 1);
      else
        full = g_strdup_printf ("%s/%s", prefix, want);

      if (g_str_equal (full, listed))
        return i;
    }

  return G_MAXUINT;
}

/* Glob: one line per file, each in the expected form, each readable. */
static void
test_glob (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(TallyTool) glob = tally_tool_glob_new ();
  g_autoptr(JsonObject) input = json_object_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree guint *seen = g_new0 (guint, G_N_ELEMENTS (files));
  guint n_lines;

  json_object_set_string_member (input, "pattern", "**/*.csv");
  text = run (glob, f, input, &error);
  g_assert_no_error (error);
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_true (g_str_has_suffix (text, "\n"));

  lines = g_strsplit (text, "\n", -1);
  n_lines = g_strv_length (lines) - 1;
  if (n_lines != 2 * G_N_ELEMENTS (files))
    g_error ("%u lines for %u files:\n%s", n_lines, (guint) (2 * G_N_ELEMENTS (files)), text);

  for (guint l = 0; l < n_lines; l++)
    {
      const char *line = lines[l];
      gboolean in_sub = g_str_has_prefix (line, "sub/") || g_str_has_prefix (line, "\"sub/");
      guint i = file_index (line, FALSE, in_sub ? "sub" : NULL);
      g_autofree char *contents = NULL;
      g_autofree char *expected = NULL;

      if (i == G_MAXUINT)
        g_error ("Glob listed “%s”, which is no file's expected form", line);
      seen[i]++;

      /* No line can pass for another file's path. */
      g_assert_false (g_str_has_prefix (line, "q1.csv"));

      contents = read_listed (f, line);
      expected = g_strdup_printf ("     1\theader\n     2\tsecret %u\n", i);
      g_assert_cmpstr (contents, ==, expected);
    }

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    g_assert_cmpuint (seen[i], ==, 2);
}

/* Glob still finds a name that is not UTF-8 by its pattern, and a folder
 * given in the quoted form is searched. */
static void
test_glob_patterns (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(TallyTool) glob = tally_tool_glob_new ();
  g_autoptr(JsonObject) input = json_object_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *odd_dir = g_build_filename (f->ws, "odd\ndir", NULL);
  g_autofree char *odd_file = g_build_filename (odd_dir, "in.txt", NULL);

  json_object_set_string_member (input, "pattern", "bad*.csv");
  text = run (glob, f, input, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "\"bad\\xFF\\xFE.csv\"\n");
  g_clear_pointer (&text, g_free);

  g_assert_cmpint (g_mkdir (odd_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (odd_file, "x\n", -1, NULL));
  json_object_set_string_member (input, "pattern", "*.txt");
  json_object_set_string_member (input, "path", "\"odd\\ndir\"");
  text = run (glob, f, input, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "\"odd\\ndir/in.txt\"\n");
}

/* Grep: `path:line:text` lines whose path is one file, quoted when it
 * holds a colon, each readable. */
static void
test_grep (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(TallyTool) grep = tally_tool_grep_new ();
  g_autoptr(JsonObject) input = json_object_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint n_lines;

  json_object_set_string_member (input, "pattern", "^secret");
  text = run (grep, f, input, &error);
  g_assert_no_error (error);
  g_assert_true (g_utf8_validate (text, -1, NULL));

  lines = g_strsplit (text, "\n", -1);
  n_lines = g_strv_length (lines) - 1;
  if (n_lines != 2 * G_N_ELEMENTS (files))
    g_error ("%u lines for %u files:\n%s", n_lines, (guint) (2 * G_N_ELEMENTS (files)), text);

  for (guint l = 0; l < n_lines; l++)
    {
      const char *line = lines[l];
      g_autofree char *tail = NULL;
      g_autofree char *path = NULL;
      g_autofree char *contents = NULL;
      g_autofree char *expected = NULL;
      const char *end;
      gboolean in_sub;
      guint i;

      /* The path is the quoted string, or everything up to the first
       * colon: a name with a colon is always quoted. */
      if (line[0] == '"')
        {
          end = line + 1;
          while (*end != '"')
            {
              g_assert_cmpint (*end, !=, '\0');
              end += end[0] == '\\' ? 2 : 1;
            }
          end++;
        }
      else
        end = strchr (line, ':');
      g_assert_nonnull (end);
      path = g_strndup (line, end - line);
      tail = g_strdup (end);

      in_sub = g_str_has_prefix (path, "sub/") || g_str_has_prefix (path, "\"sub/");
      i = file_index (path, TRUE, in_sub ? "sub" : NULL);
      if (i == G_MAXUINT)
        g_error ("Grep printed the path “%s” (line “%s”), which is no file's expected form", path, line);

      expected = g_strdup_printf (":2:secret %u", i);
      g_assert_cmpstr (tail, ==, expected);
      g_clear_pointer (&expected, g_free);

      contents = read_listed (f, path);
      expected = g_strdup_printf ("     1\theader\n     2\tsecret %u\n", i);
      g_assert_cmpstr (contents, ==, expected);
    }
}

/* The escaped form, both ways. */
static void
test_escape (void)
{
  static const char *const round_trip[] = {
    "plain.csv", "a\nb", "\xff", "\x01\x02\x7f", "\"", "\\\"", "a\"b", "\xc2\x85", "\xe2\x80\xa9",
    "x\xe2\x80", "dir/\xc3\x28.txt", "\t", " ", "colon:1:", "€", "",
  };
  static const char *const invalid[] = {
    "\"open", "\"a\"b\"", "\"\\q\"", "\"\\x0\"", "\"\\x00\"", "\"\\u0000\"", "\"\\uD800\"", "\"\\u12\"", "\"a\\\"",
    "\"",
  };

  for (guint i = 0; i < G_N_ELEMENTS (round_trip); i++)
    {
      g_autofree char *escaped = tally_tool_escape_path (round_trip[i], TRUE);
      g_autofree char *back = NULL;
      g_autoptr(GError) error = NULL;

      g_assert_true (g_utf8_validate (escaped, -1, NULL));
      g_assert_null (strpbrk (escaped, "\n\r"));
      back = tally_tool_unescape_path (escaped, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (back, ==, round_trip[i]);
    }

  {
    g_autofree char *unquoted = tally_tool_escape_path ("a:b", FALSE);
    g_autofree char *quoted = tally_tool_escape_path ("a:b", TRUE);
    g_autofree char *plain = tally_tool_unescape_path ("reports/q1.csv", NULL);

    g_assert_cmpstr (unquoted, ==, "a:b");
    g_assert_cmpstr (quoted, ==, "\"a:b\"");
    g_assert_cmpstr (plain, ==, "reports/q1.csv");
  }

  for (guint i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *back = tally_tool_unescape_path (invalid[i], &error);

      if (back != NULL)
        g_error ("“%s” unquoted to “%s”", invalid[i], back);
      g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/tally/tools/names/glob", Fixture, NULL, fixture_setup, test_glob, fixture_teardown);
  g_test_add ("/tally/tools/names/glob-patterns", Fixture, NULL, fixture_setup, test_glob_patterns, fixture_teardown);
  g_test_add ("/tally/tools/names/grep", Fixture, NULL, fixture_setup, test_grep, fixture_teardown);
  g_test_add_func ("/tally/tools/names/escape", test_escape);

  return g_test_run ();
}
