/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-glob.h"
#include "tally-tool-private.h"

#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#define MAX_RESULTS 500

/**
 * TallyToolGlob:
 *
 * The `Glob` tool: finds files in the workspace whose path matches a glob
 * pattern (see tally_tool_glob_to_regex() for the syntax).
 *
 * Input (docs/architecture.md §8.1): `{pattern, path?}`. The pattern is
 * matched against each file's path relative to the search folder (`path`,
 * or the workspace). The result lists paths relative to the workspace, one
 * per line, newest modification time first (ties by path), at most 500.
 * `.git` folders are skipped and symbolic links never lead out of the
 * workspace (see tally_tool_walk_files()). A path with a line break, another
 * control character or bytes that are not UTF-8 is listed in the quoted
 * form of tally_tool_escape_path(), which every file tool accepts back, so
 * no name can add a line to the result.
 */
struct _TallyToolGlob
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolGlob, tally_tool_glob, TALLY_TYPE_TOOL)

typedef struct {
  char   *path;
  gint64  mtime_sec;
  glong   mtime_nsec;
} Match;

static void
match_free (gpointer data)
{
  Match *match = data;

  g_free (match->path);
  g_free (match);
}

static int
compare_matches (gconstpointer a,
                 gconstpointer b)
{
  const Match *ma = *(const Match * const *) a;
  const Match *mb = *(const Match * const *) b;

  if (ma->mtime_sec != mb->mtime_sec)
    return ma->mtime_sec > mb->mtime_sec ? -1 : 1;
  if (ma->mtime_nsec != mb->mtime_nsec)
    return ma->mtime_nsec > mb->mtime_nsec ? -1 : 1;

  return strcmp (ma->path, mb->path);
}

typedef struct {
  GRegex     *regex;
  const char *prefix;
  GPtrArray  *matches;
} GlobSearch;

static gboolean
glob_file_cb (const char     *path,
              const char     *relpath,
              const GStatBuf *st,
              gpointer        user_data)
{
  GlobSearch *search = user_data;
  g_autofree char *valid = NULL;
  Match *match;

  /* A name that is not UTF-8 is matched with its bad bytes as U+FFFD, so
   * `*` and `?` still cover them; it is listed escaped. */
  if (!g_utf8_validate (relpath, -1, NULL))
    valid = g_utf8_make_valid (relpath, -1);

  if (!g_regex_match (search->regex, valid != NULL ? valid : relpath, 0, NULL))
    return TRUE;

  match = g_new0 (Match, 1);
  match->path = search->prefix ? g_strconcat (search->prefix, "/", relpath, NULL)
                               : g_strdup (relpath);
  match->mtime_sec = st->st_mtim.tv_sec;
  match->mtime_nsec = st->st_mtim.tv_nsec;
  g_ptr_array_add (search->matches, match);

  return TRUE;
}

static char *
glob_run (TallyTool               *tool,
          const TallyToolContext  *context,
          JsonObject              *input,
          GCancellable            *cancellable,
          GError                 **error)
{
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(GPtrArray) matches = g_ptr_array_new_with_free_func (match_free);
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(TallyToolSearchRoot) where = { 0 };
  const char *pattern;
  const char *path;
  GlobSearch search;

  if (!tally_tool_input_get_string (input, "pattern", TRUE, &pattern, error) ||
      !tally_tool_input_get_string (input, "path", FALSE, &path, error))
    return NULL;

  if (pattern[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`pattern` is required and must not be empty");
      return NULL;
    }

  if (pattern[0] == '/')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`pattern` must be relative (e.g. **/*.csv); give the "
                           "folder to search in `path`");
      return NULL;
    }

  if (!tally_tool_search_root_init (&where, context, path, TRUE, error))
    return NULL;

  regex = tally_tool_glob_to_regex (pattern, error);
  if (regex == NULL)
    return NULL;

  search.regex = regex;
  search.prefix = where.prefix;
  search.matches = matches;

  if (!tally_tool_walk_files (where.workspace, where.root, cancellable, glob_file_cb, &search, error))
    return NULL;

  if (matches->len == 0)
    return g_strdup_printf ("No files match %s in %s", pattern, path ? path : "the workspace");

  g_ptr_array_sort (matches, compare_matches);

  for (guint i = 0; i < matches->len && i < MAX_RESULTS; i++)
    {
      Match *match = g_ptr_array_index (matches, i);
      g_autofree char *escaped = tally_tool_escape_path (match->path, FALSE);

      g_string_append (out, escaped);
      g_string_append_c (out, '\n');
    }

  if (matches->len > MAX_RESULTS)
    {
      g_autofree char *more = tally_format_count ((gint64) (matches->len - MAX_RESULTS), TALLY_GROUPING_COMMA);

      g_string_append_printf (out, "… %s more files not shown (cap %d); use a narrower "
                              "pattern or path\n", more, MAX_RESULTS);
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
tally_tool_glob_class_init (TallyToolGlobClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "Glob";
  tool_class->description =
    "Find files in the workspace by name. The pattern is matched against each "
    "file's path relative to the search folder: `*` matches any characters "
    "within one folder level, `?` one character, `**` any number of folders, "
    "`{csv,tsv}` either alternative. So `**/*.csv` finds CSV files at any depth, "
    "while `*.csv` looks only directly in the search folder. The search folder "
    "is the workspace, or `path` inside it. Returns matching paths relative to "
    "the workspace, one per line, most recently modified first, at most 500. "
    "`.git` folders are skipped. A name with a line break, another control "
    "character, bytes that are not UTF-8, a leading double quote or blanks at "
    "either end is listed in double quotes with backslash escapes (\\n, \\t, "
    "\\xHH, \\uHHHH, \\\\, \\\"); pass it to Read, Grep or Glob exactly as "
    "listed, quotes included.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"pattern\":{\"type\":\"string\","
    "\"description\":\"Glob pattern such as **/*.csv or reports/*.md.\"},"
    "\"path\":{\"type\":\"string\","
    "\"description\":\"Folder to search in, absolute or relative to the workspace (default: the workspace).\"}"
    "},"
    "\"required\":[\"pattern\"]}";
  tool_class->read_only = TRUE;
  tool_class->path_member = "path";
  tool_class->run = glob_run;
}

static void
tally_tool_glob_init (TallyToolGlob *self)
{
}

/**
 * tally_tool_glob_new:
 *
 * Creates the `Glob` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_glob_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_GLOB, NULL);
}
