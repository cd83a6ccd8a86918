/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-grep.h"
#include "tally-tool-private.h"

#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#define MAX_MATCHES 500
#define MAX_OUTPUT_BYTES (32 * 1024)
#define MAX_LINE_CHARS 300
/* Files larger than this are skipped (and counted in a note). */
#define MAX_FILE_BYTES (32 * 1024 * 1024)
/* What a slow or failing pattern's message tells the model to do. */
#define SLOW_PATTERN_ADVICE \
  "Nested or overlapping repeats such as (a|aa)+ or (a+)+ try exponentially many ways " \
  "on a line they do not match: simplify the pattern"

/**
 * TallyToolGrep:
 *
 * The `Grep` tool: searches text files in the workspace with a regular
 * expression (#GRegex, PCRE syntax) and returns `path:line:text` lines,
 * paths relative to the workspace, in path order.
 *
 * Input (docs/architecture.md §8.1): `{pattern, path?, glob?}`. `path` is a
 * folder or a file inside the workspace; `glob` keeps only matching files:
 * a pattern without `/` is matched against the file name, one with `/`
 * against the path relative to the search folder. Binary files (a NUL
 * byte) and `.git` folders are skipped; symbolic links never lead out of
 * the workspace. At most 500 matches or 32 KiB are returned. A path with a
 * `:`, a line break, another control character or bytes that are not UTF-8
 * is printed in the quoted form of tally_tool_escape_path() (which every
 * file tool accepts back), so a file name can neither add a line nor pose
 * as a line number.
 *
 * A search has a time limit, %TALLY_TOOL_GREP_DEFAULT_TIMEOUT seconds
 * unless tally_tool_grep_set_timeout_ms() says otherwise, and is cancelled
 * with its #GCancellable: both are checked before every file and every
 * line, so either takes effect once the line being matched is done. A run
 * that reaches the limit fails with %TALLY_TOOL_ERROR_FAILED and a message
 * that says where it stopped and what it had found; a cancelled one fails
 * with %G_IO_ERROR_CANCELLED. A line on which the regular-expression
 * engine gives up (PCRE2's backtracking, depth or heap limit:
 * g_regex_match_full() fails with %G_REGEX_ERROR_MATCH) is not taken for a
 * line that does not match: the result ends with a note that counts such
 * lines and names the first.
 */
struct _TallyToolGrep
{
  TallyTool parent_instance;

  gint      timeout_ms;   /* atomic: runs read it in workers */
};

G_DEFINE_FINAL_TYPE (TallyToolGrep, tally_tool_grep, TALLY_TYPE_TOOL)

typedef struct {
  const char *pattern;
  GRegex     *regex;
  GRegex     *raw_regex;
  GRegex     *filter;
  gboolean    filter_on_name;
  const char *prefix;
  const char *single_file;
  GString    *out;
  guint       n_matches;
  guint       n_files;
  guint       n_large;
  gboolean    truncated;

  GCancellable *cancellable;
  gint64        deadline;      /* monotonic time, µs; 0 for no limit */
  gboolean      cancelled;
  gboolean      timed_out;
  char         *stopped_at;    /* "path:line" the time limit stopped at */
  guint         n_failed;      /* lines the regex engine gave up on */
  char         *first_failed;  /* "path:line" of the first of them */
} GrepSearch;

/* Whether the search must end now: cancelled, or past its deadline. */
static gboolean
search_must_stop (GrepSearch *search)
{
  if (g_cancellable_is_cancelled (search->cancellable))
    search->cancelled = TRUE;
  else if (search->deadline != 0 && g_get_monotonic_time () >= search->deadline)
    search->timed_out = TRUE;

  return search->cancelled || search->timed_out;
}

static GRegex *
get_raw_regex (GrepSearch *search)
{
  /* Files that are not valid UTF-8 are searched byte by byte. */
  if (search->raw_regex == NULL)
    search->raw_regex = g_regex_new (search->pattern, G_REGEX_RAW, 0, NULL);

  return search->raw_regex;
}

/* The error of a search stopped by its time limit: where it stopped and
 * what it had found, which is not shown. */
static void
set_timeout_error (GrepSearch  *search,
                   guint        timeout_ms,
                   GError     **error)
{
  g_autofree char *seconds = tally_tool_format_seconds (timeout_ms);
  g_autofree char *where = search->stopped_at != NULL
                           ? g_strdup_printf (" at %s", search->stopped_at) : g_strdup ("");
  g_autofree char *failed = NULL;

  if (search->n_failed > 0)
    failed = g_strdup_printf (" The regular-expression engine had also given up on %u %s "
                              "(the first at %s).", search->n_failed,
                              search->n_failed == 1 ? "line" : "lines", search->first_failed);

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
               "Grep stopped after %s, the time limit for one search,%s; it had found "
               "%u %s in %u %s by then (not shown).%s " SLOW_PATTERN_ADVICE ", or narrow "
               "`path` or `glob`.",
               seconds, where,
               search->n_matches, search->n_matches == 1 ? "match" : "matches",
               search->n_files, search->n_files == 1 ? "file" : "files",
               failed != NULL ? failed : "");
}

static gboolean
grep_file_cb (const char     *path,
              const char     *relpath,
              const GStatBuf *st,
              gpointer        user_data)
{
  GrepSearch *search = user_data;
  g_autofree char *contents = NULL;
  g_autofree char *display = NULL;
  GRegex *regex;
  gsize length = 0;
  gsize start = 0;
  guint line_no = 1;

  g_assert (search != NULL);

  if (search_must_stop (search))
    return FALSE;

  if (search->filter != NULL)
    {
      const char *subject = relpath;
      g_autofree char *valid = NULL;

      if (search->filter_on_name)
        {
          const char *slash = strrchr (relpath, '/');

          subject = slash ? slash + 1 : relpath;
        }

      /* Bytes that are not UTF-8 are matched as U+FFFD. */
      if (!g_utf8_validate (subject, -1, NULL))
        subject = valid = g_utf8_make_valid (subject, -1);

      if (!g_regex_match (search->filter, subject, 0, NULL))
        return TRUE;
    }

  if (st->st_size > MAX_FILE_BYTES)
    {
      search->n_large++;
      return TRUE;
    }

  if (!g_file_get_contents (path, &contents, &length, NULL))
    return TRUE;

  if (memchr (contents, '\0', length) != NULL)
    return TRUE;

  search->n_files++;

  regex = g_utf8_validate_len (contents, length, NULL) ? search->regex : get_raw_regex (search);
  if (regex == NULL)
    return TRUE;

  if (search->single_file != NULL)
    display = tally_tool_escape_path (search->single_file, TRUE);
  else if (search->prefix != NULL)
    {
      g_autofree char *joined = g_strconcat (search->prefix, "/", relpath, NULL);

      display = tally_tool_escape_path (joined, TRUE);
    }
  else
    display = tally_tool_escape_path (relpath, TRUE);

  while (start < length)
    {
      const char *line = contents + start;
      const char *newline = memchr (line, '\n', length - start);
      gsize line_len = newline ? (gsize) (newline - line) : length - start;
      gsize text_len = line_len;
      g_autoptr(GError) match_error = NULL;

      if (text_len > 0 && line[text_len - 1] == '\r')
        text_len--;

      /* One line's match is the longest either check waits. */
      if (search_must_stop (search))
        {
          search->stopped_at = g_strdup_printf ("%s:%u", display, line_no);
          return FALSE;
        }

      if (!g_regex_match_full (regex, line, text_len, 0, 0, NULL, &match_error))
        {
          /* No match, or the engine gave up at one of PCRE2's limits
           * (G_REGEX_ERROR_MATCH, "backtracking limit reached"): that
           * line was not searched, which the result must say. */
          if (match_error != NULL && search->n_failed++ == 0)
            search->first_failed = g_strdup_printf ("%s:%u", display, line_no);
        }
      else
        {
          gsize before = search->out->len;

          g_string_append (search->out, display);
          g_string_append_printf (search->out, ":%u:", line_no);
          tally_tool_append_clipped (search->out, line, text_len, MAX_LINE_CHARS);
          g_string_append_c (search->out, '\n');

          if (search->out->len > MAX_OUTPUT_BYTES)
            {
              g_string_truncate (search->out, before);
              search->truncated = TRUE;
              return FALSE;
            }

          if (++search->n_matches >= MAX_MATCHES)
            {
              /* Stop here; whether more would follow is not worth a scan. */
              search->truncated = TRUE;
              return FALSE;
            }
        }

      start += line_len + 1;
      line_no++;
    }

  return TRUE;
}

static char *
grep_run (TallyTool               *tool,
          const TallyToolContext  *context,
          JsonObject              *input,
          GCancellable            *cancellable,
          GError                 **error)
{
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(GRegex) filter = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) regex_error = NULL;
  g_auto(TallyToolSearchRoot) where = { 0 };
  const char *pattern;
  const char *path;
  const char *glob;
  GrepSearch search = { 0 };
  guint timeout_ms;
  gboolean ok;

  g_assert (TALLY_IS_TOOL_GREP (tool));

  timeout_ms = (guint) g_atomic_int_get (&TALLY_TOOL_GREP (tool)->timeout_ms);

  if (!tally_tool_input_get_string (input, "pattern", TRUE, &pattern, error) ||
      !tally_tool_input_get_string (input, "path", FALSE, &path, error) ||
      !tally_tool_input_get_string (input, "glob", FALSE, &glob, error))
    return NULL;

  if (pattern[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`pattern` is required and must not be empty");
      return NULL;
    }

  regex = g_regex_new (pattern, G_REGEX_OPTIMIZE, 0, &regex_error);
  if (regex == NULL)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "`pattern` is not a valid regular expression: %s", regex_error->message);
      return NULL;
    }

  if (glob != NULL && glob[0] != '\0')
    {
      filter = tally_tool_glob_to_regex (glob, error);
      if (filter == NULL)
        return NULL;
      search.filter_on_name = strchr (glob, '/') == NULL;
    }

  if (!tally_tool_search_root_init (&where, context, path, FALSE, error))
    return NULL;

  search.pattern = pattern;
  search.cancellable = cancellable;
  if (timeout_ms > 0)
    search.deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  search.regex = regex;
  search.filter = filter;
  search.out = out;
  if (where.is_folder)
    search.prefix = where.prefix;
  else
    search.single_file = where.prefix;

  ok = tally_tool_walk_files (where.workspace, where.root, cancellable, grep_file_cb, &search, error);
  g_clear_pointer (&search.raw_regex, g_regex_unref);
  if (ok && search.cancelled)
    ok = !g_cancellable_set_error_if_cancelled (cancellable, error);
  if (ok && search.timed_out)
    {
      set_timeout_error (&search, timeout_ms, error);
      ok = FALSE;
    }
  if (!ok)
    {
      g_free (search.stopped_at);
      g_free (search.first_failed);
      return NULL;
    }

  if (search.n_matches == 0 && !search.truncated)
    {
      g_autofree char *files = tally_format_count ((gint64) search.n_files, TALLY_GROUPING_COMMA);

      g_string_append_printf (out, "No matches for %s (%s text %s searched)\n", pattern,
                              files, search.n_files == 1 ? "file" : "files");
    }

  if (search.truncated)
    g_string_append_printf (out, "… output stopped after %u matches (cap %d matches or "
                            "%d KiB); narrow the pattern, path or glob to see the rest\n",
                            search.n_matches, MAX_MATCHES, MAX_OUTPUT_BYTES / 1024);

  if (search.n_large > 0)
    g_string_append_printf (out, "(%u %s larger than %d MiB not searched)\n", search.n_large,
                            search.n_large == 1 ? "file" : "files",
                            MAX_FILE_BYTES / (1024 * 1024));

  if (search.n_failed == 1)
    g_string_append_printf (out, "(The regular-expression engine gave up on %s, which was "
                            "not searched: the pattern needs too much backtracking there. "
                            SLOW_PATTERN_ADVICE " to search that line.)\n",
                            search.first_failed);
  else if (search.n_failed > 1)
    g_string_append_printf (out, "(The regular-expression engine gave up on %u lines, which "
                            "were not searched, the first at %s: the pattern needs too much "
                            "backtracking there. " SLOW_PATTERN_ADVICE " to search those "
                            "lines.)\n", search.n_failed, search.first_failed);

  g_free (search.first_failed);

  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
tally_tool_grep_class_init (TallyToolGrepClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "Grep";
  tool_class->description =
    "Search the contents of text files in the workspace with a regular "
    "expression (PCRE syntax, e.g. `revenue|margin` or `\\bstore_id\\b`; "
    "start with `(?i)` to ignore case). Each matching line comes back as "
    "`path:line:text`, with the path relative to the workspace, at most 500 "
    "matches. `path` limits the search to a folder or one file inside the "
    "workspace. `glob` keeps only some files: a pattern without a slash such "
    "as `*.sql` is matched against file names at any depth, one with a slash "
    "such as `reports/**/*.md` against the path relative to the search folder. "
    "Binary files and `.git` folders are skipped. A path with a colon, a line "
    "break, another control character, bytes that are not UTF-8, a leading "
    "double quote or blanks at either end is printed in double quotes with "
    "backslash escapes (\\n, \\t, \\xHH, \\uHHHH, \\\\, \\\"), followed by "
    "`:line:text`; pass it to Read exactly as printed, quotes included. "
    "A search stops after 30 seconds; avoid nested repeats such as (a+)+.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"pattern\":{\"type\":\"string\","
    "\"description\":\"Regular expression (PCRE) to look for in each line.\"},"
    "\"path\":{\"type\":\"string\","
    "\"description\":\"Folder or file to search, absolute or relative to the workspace (default: the workspace).\"},"
    "\"glob\":{\"type\":\"string\","
    "\"description\":\"Only search files matching this glob, e.g. *.csv.\"}"
    "},"
    "\"required\":[\"pattern\"]}";
  tool_class->read_only = TRUE;
  tool_class->path_member = "path";
  tool_class->run = grep_run;
}

static void
tally_tool_grep_init (TallyToolGrep *self)
{
  self->timeout_ms = TALLY_TOOL_GREP_DEFAULT_TIMEOUT * 1000;
}

/**
 * tally_tool_grep_set_timeout_ms:
 * @self: the `Grep` tool
 * @timeout_ms: how long one search may run, in milliseconds (wall-clock
 *   time from the start of the run); 0 for no limit
 *
 * Sets the time limit of a search (default
 * %TALLY_TOOL_GREP_DEFAULT_TIMEOUT seconds). A search that runs longer is
 * stopped before its next line and fails with %TALLY_TOOL_ERROR_FAILED
 * ("Grep stopped after …"). For tests and embedders; takes effect for the
 * next search and is safe to call while searches run.
 */
void
tally_tool_grep_set_timeout_ms (TallyToolGrep *self,
                                guint          timeout_ms)
{
  g_return_if_fail (TALLY_IS_TOOL_GREP (self));

  g_atomic_int_set (&self->timeout_ms, (gint) MIN (timeout_ms, (guint) G_MAXINT));
}

/**
 * tally_tool_grep_new:
 *
 * Creates the `Grep` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_grep_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_GREP, NULL);
}
