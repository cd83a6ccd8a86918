/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-write.h"
#include "tally-tool-private.h"

#include "tally-line-diff.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

/* Lines of unchanged text around each change in a diff hunk, as in
 * `diff -u`. */
#define DIFF_CONTEXT 3
/* A diff longer than this is cut: it is for a person to glance at on an
 * approval card, not a patch to apply. */
#define MAX_DIFF_BYTES (256 * 1024)

/**
 * TallyToolWrite:
 *
 * The `Write` tool: writes a whole text file inside the workspace, creating
 * it (and any missing parent folders, mode 0755) or replacing it.
 *
 * Input (docs/architecture.md §8.1): `{file_path, content}`. The file is
 * written atomically (a temporary file renamed over the old one, see
 * g_file_set_contents_full()), so a reader never sees half a file; a
 * replaced file keeps its permission bits. A symbolic link is written
 * through to its target. Folders and paths outside the workspace are
 * refused, the latter unless #TallyToolContext.allow_outside_workspace is
 * set. The result reads "Wrote N bytes to PATH (new file)" or
 * "… (replaced)", PATH relative to the workspace.
 */
struct _TallyToolWrite
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolWrite, tally_tool_write, TALLY_TYPE_TOOL)

/**
 * tally_tool_resolve_for_change:
 * @context: the tool context; its workspace must be set
 * @member: the input member @path came from, for messages
 * @path: the path as the model wrote it
 * @check_outside: whether a path outside the workspace is refused (unless
 *   @context allows it); %FALSE for previews such as diffs
 * @display: (out) (transfer full): the path to show: relative to the
 *   workspace when inside it, absolute otherwise
 * @exists: (out): whether a regular file is there already
 * @error: return location for a #GError
 *
 * Resolves the path of a file a mutating tool is about to change (see
 * tally_tool_resolve_checked()) and checks what is there: nothing, or a
 * regular file.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT (empty path, no workspace),
 * %TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE, %TALLY_TOOL_ERROR_FAILED (link
 * loop), %TALLY_TOOL_ERROR_REFUSED (a folder or a special file).
 *
 * Returns: (transfer full): the canonical absolute path, or %NULL
 */
char *
tally_tool_resolve_for_change (const TallyToolContext  *context,
                               const char              *member,
                               const char              *path,
                               gboolean                 check_outside,
                               char                   **display,
                               gboolean                *exists,
                               GError                 **error)
{
  g_autofree char *workspace = NULL;
  g_autofree char *resolved = NULL;
  GStatBuf st;

  *display = NULL;
  *exists = FALSE;

  workspace = tally_tool_resolve_inside (context, member, NULL, error);
  if (workspace == NULL)
    return NULL;

  if (path == NULL)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "`%s` must not be empty", member);
      return NULL;
    }

  resolved = tally_tool_resolve_checked (context, member, path, check_outside,
                                         "change files inside the workspace instead", error);
  if (resolved == NULL)
    return NULL;

  if (g_stat (resolved, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                       "%s is a folder, not a file; give the path of a file", path);
          return NULL;
        }

      if (!S_ISREG (st.st_mode))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                       "%s is not a regular file", path);
          return NULL;
        }

      *exists = TRUE;
    }

  /* Relative when inside the workspace, unchanged (absolute) outside */
  *display = tally_tool_relative_path (workspace, resolved);

  return g_steal_pointer (&resolved);
}

/**
 * tally_tool_replace_file:
 * @path: canonical absolute path of a regular file, or of one to create
 *   (its folder must exist)
 * @display: the path for messages
 * @contents: the new contents
 * @length: length of @contents in bytes
 * @error: return location for a #GError
 *
 * Writes @contents atomically: into a temporary file beside @path, renamed
 * over it (%G_FILE_SET_CONTENTS_CONSISTENT). An existing file keeps its
 * permission bits (the umask does not narrow them); a new one gets 0666
 * less the umask. A file without write permission is not replaced.
 *
 * Returns: %FALSE with %TALLY_TOOL_ERROR_FAILED on failure
 */
gboolean
tally_tool_replace_file (const char  *path,
                         const char  *display,
                         const char  *contents,
                         gsize        length,
                         GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  gboolean existed;
  int mode = 0666;
  GStatBuf st;

  existed = g_stat (path, &st) == 0 && S_ISREG (st.st_mode);
  if (existed)
    {
      mode = st.st_mode & 07777;

      /* Renaming over a read-only file would succeed; respect it instead. */
      if (g_access (path, W_OK) != 0)
        {
          int saved_errno = errno;

          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                       "Cannot write %s: %s", display, g_strerror (saved_errno));
          return FALSE;
        }
    }

  if (!g_file_set_contents_full (path, contents, length,
                                 G_FILE_SET_CONTENTS_CONSISTENT, mode, &local_error))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot write %s: %s", display, local_error->message);
      return FALSE;
    }

  /* The temporary file was created with the old mode less the umask; put
   * back any bits the umask took away. */
  if (existed)
    {
      GStatBuf now;

      if (g_stat (path, &now) == 0 && (int) (now.st_mode & 07777) != mode)
        g_chmod (path, mode);
    }

  return TRUE;
}

/* Line diff ------------------------------------------------------------ */

typedef struct {
  const char *start;
  gsize       len;   /* including the '\n', when the line has one */
  guint       id;    /* equal lines have equal ids */
} Line;

static GArray *
split_lines (const char *text,
             gsize       length,
             GHashTable *ids)
{
  GArray *lines = g_array_new (FALSE, FALSE, sizeof (Line));
  gsize pos = 0;

  while (pos < length)
    {
      const char *newline = memchr (text + pos, '\n', length - pos);
      gsize end = newline ? (gsize) (newline - text) + 1 : length;
      g_autofree char *key = g_strndup (text + pos, end - pos);
      gpointer id;
      Line line;

      line.start = text + pos;
      line.len = end - pos;

      id = g_hash_table_lookup (ids, key);
      if (id == NULL)
        {
          id = GUINT_TO_POINTER (g_hash_table_size (ids) + 1);
          g_hash_table_insert (ids, g_steal_pointer (&key), id);
        }
      line.id = GPOINTER_TO_UINT (id);

      g_array_append_val (lines, line);
      pos = end;
    }

  return lines;
}

/* The edit script between two arrays of lines, by the core's one line
 * diff (tally_line_diff(): common head and tail, then Myers, removals
 * before additions). */
static GByteArray *
diff_lines (GArray *old_lines,
            GArray *new_lines)
{
  g_autofree guint *a = g_new (guint, old_lines->len + 1);
  g_autofree guint *b = g_new (guint, new_lines->len + 1);

  for (guint i = 0; i < old_lines->len; i++)
    a[i] = g_array_index (old_lines, Line, i).id;
  for (guint i = 0; i < new_lines->len; i++)
    b[i] = g_array_index (new_lines, Line, i).id;

  return tally_line_diff (a, old_lines->len, b, new_lines->len);
}

/* "start,count" of a hunk header, in the form `diff -u` prints: an empty
 * range names the line before it, a count of one is left out. */
static void
append_range (GString *out,
              gsize    start,
              gsize    count)
{
  if (count == 0)
    g_string_append_printf (out, "%" G_GSIZE_FORMAT ",0", start);
  else if (count == 1)
    g_string_append_printf (out, "%" G_GSIZE_FORMAT, start + 1);
  else
    g_string_append_printf (out, "%" G_GSIZE_FORMAT ",%" G_GSIZE_FORMAT, start + 1, count);
}

static void
append_line (GString    *out,
             char        prefix,
             const Line *line)
{
  gboolean has_newline = line->len > 0 && line->start[line->len - 1] == '\n';

  g_string_append_c (out, prefix);
  g_string_append_len (out, line->start, has_newline ? line->len - 1 : line->len);
  g_string_append_c (out, '\n');
  if (!has_newline)
    g_string_append (out, "\\ No newline at end of file\n");
}

/**
 * tally_tool_unified_diff:
 * @old_text: the text before (need not be nul-terminated)
 * @old_length: its length in bytes
 * @new_text: the text after
 * @new_length: its length in bytes
 * @old_label: the name on the `---` line, e.g. "a/report.md"
 * @new_label: the name on the `+++` line, e.g. "b/report.md"
 *
 * Compares two texts line by line and prints the differences in the
 * unified format of `diff -u` (POSIX.1-2017, "diff", and GNU diffutils):
 * `---`/`+++` headers, then `@@ -l,s +l,s @@` hunks with 3 lines of
 * context; a last line without a newline is followed by
 * "\ No newline at end of file". The edit script is a shortest one (Myers)
 * unless the texts differ in more than 1000 lines, when the changed middle
 * is shown removed and re-added whole. Output past 256 KiB is cut, ending
 * with a line that says so. Texts holding NUL bytes are not compared line
 * by line: the result is one "Binary files … differ" line.
 *
 * Returns: (transfer full): the diff, or "" when the texts are equal
 */
char *
tally_tool_unified_diff (const char *old_text,
                         gsize       old_length,
                         const char *new_text,
                         gsize       new_length,
                         const char *old_label,
                         const char *new_label)
{
  g_autoptr(GHashTable) ids = NULL;
  g_autoptr(GArray) old_lines = NULL;
  g_autoptr(GArray) new_lines = NULL;
  g_autoptr(GByteArray) ops = NULL;
  g_autofree gsize *old_pos = NULL;
  g_autofree gsize *new_pos = NULL;
  g_autoptr(GString) out = NULL;
  gsize a = 0, b = 0;
  guint i;

  if (old_length == new_length && memcmp (old_text, new_text, old_length) == 0)
    return g_strdup ("");

  if (memchr (old_text, '\0', old_length) != NULL ||
      memchr (new_text, '\0', new_length) != NULL)
    return g_strdup_printf ("Binary files %s and %s differ\n", old_label, new_label);

  ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  old_lines = split_lines (old_text, old_length, ids);
  new_lines = split_lines (new_text, new_length, ids);
  ops = diff_lines (old_lines, new_lines);

  /* Where each operation stands in the old and the new text. */
  old_pos = g_new (gsize, ops->len + 1);
  new_pos = g_new (gsize, ops->len + 1);
  for (i = 0; i < ops->len; i++)
    {
      old_pos[i] = a;
      new_pos[i] = b;
      if (ops->data[i] != TALLY_DIFF_INSERT)
        a++;
      if (ops->data[i] != TALLY_DIFF_DELETE)
        b++;
    }
  old_pos[i] = a;
  new_pos[i] = b;

  out = g_string_new (NULL);
  g_string_append_printf (out, "--- %s\n+++ %s\n", old_label, new_label);

  i = 0;
  while (i < ops->len)
    {
      guint change = i, last, j, start, end;
      gsize n_old = 0, n_new = 0;

      while (change < ops->len && ops->data[change] == TALLY_DIFF_EQUAL)
        change++;
      if (change == ops->len)
        break;

      /* Grow the hunk while the next change is close enough that the
       * two contexts would touch. */
      last = change;
      for (j = change + 1; j < ops->len; j++)
        {
          if (ops->data[j] != TALLY_DIFF_EQUAL)
            last = j;
          else if (j - last > 2 * DIFF_CONTEXT)
            break;
        }

      start = change > i + DIFF_CONTEXT ? change - DIFF_CONTEXT : i;
      end = MIN (last + 1 + DIFF_CONTEXT, ops->len);

      for (j = start; j < end; j++)
        {
          if (ops->data[j] != TALLY_DIFF_INSERT)
            n_old++;
          if (ops->data[j] != TALLY_DIFF_DELETE)
            n_new++;
        }

      g_string_append (out, "@@ -");
      append_range (out, old_pos[start], n_old);
      g_string_append (out, " +");
      append_range (out, new_pos[start], n_new);
      g_string_append (out, " @@\n");

      for (j = start; j < end; j++)
        {
          gsize before = out->len;

          switch (ops->data[j])
            {
            case TALLY_DIFF_EQUAL:
              append_line (out, ' ', &g_array_index (old_lines, Line, old_pos[j]));
              break;
            case TALLY_DIFF_DELETE:
              append_line (out, '-', &g_array_index (old_lines, Line, old_pos[j]));
              break;
            case TALLY_DIFF_INSERT:
            default:
              append_line (out, '+', &g_array_index (new_lines, Line, new_pos[j]));
              break;
            }

          if (out->len > MAX_DIFF_BYTES)
            {
              g_string_truncate (out, before);
              g_string_append_printf (out, "… the diff is longer than %d KiB; the rest "
                                      "is not shown\n", MAX_DIFF_BYTES / 1024);
              return g_string_free (g_steal_pointer (&out), FALSE);
            }
        }

      i = end;
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

/**
 * tally_tool_dup_file_diff:
 * @display: the file's path as shown: relative to the workspace, or
 *   absolute for a file outside it
 * @old_text: the file as it is
 * @old_length: its length in bytes
 * @new_text: the file as the change would leave it
 * @new_length: its length in bytes
 *
 * The approval cards' preview of a change to one file (`Write`, `Edit`):
 * tally_tool_unified_diff() with headers `--- a/PATH` and `+++ b/PATH`, or
 * the absolute path without the prefixes on both lines.
 *
 * Returns: (transfer full): the diff, or "" when the texts are equal
 */
char *
tally_tool_dup_file_diff (const char *display,
                          const char *old_text,
                          gsize       old_length,
                          const char *new_text,
                          gsize       new_length)
{
  g_autofree char *old_label = NULL;
  g_autofree char *new_label = NULL;

  old_label = g_path_is_absolute (display) ? g_strdup (display) : g_strconcat ("a/", display, NULL);
  new_label = g_path_is_absolute (display) ? g_strdup (display) : g_strconcat ("b/", display, NULL);

  return tally_tool_unified_diff (old_text, old_length, new_text, new_length, old_label, new_label);
}

/* The Write tool ------------------------------------------------------- */

/* A Write worked out short of writing: the file and the new content. */
typedef struct {
  char       *path;
  char       *display;   /* the path as shown to the model */
  const char *content;   /* owned by the input */
  gboolean    exists;    /* whether a regular file is there already */
} PreparedWrite;

static void
prepared_write_clear (PreparedWrite *prepared)
{
  g_free (prepared->path);
  g_free (prepared->display);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PreparedWrite, prepared_write_clear)

/* Checks the input and the target of a Write into @prepared (cleared by the
 * caller, also on failure). */
static gboolean
prepare_write (const TallyToolContext  *context,
               JsonObject              *input,
               gboolean                 check_outside,
               PreparedWrite           *prepared,
               GError                 **error)
{
  const char *file_path;

  if (!tally_tool_input_check (input, error) ||
      !tally_tool_input_get_string (input, "file_path", TRUE, &file_path, error) ||
      !tally_tool_input_get_string (input, "content", TRUE, &prepared->content, error))
    return FALSE;

  if (g_str_has_suffix (file_path, "/"))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                   "%s names a folder; give the path of a file", file_path);
      return FALSE;
    }

  prepared->path = tally_tool_resolve_for_change (context, "file_path", file_path, check_outside,
                                               &prepared->display, &prepared->exists, error);
  return prepared->path != NULL;
}

static char *
write_run (TallyTool               *tool,
           const TallyToolContext  *context,
           JsonObject              *input,
           GCancellable            *cancellable,
           GError                 **error)
{
  g_auto(PreparedWrite) prepared = { 0 };
  g_autofree char *folder = NULL;
  gsize length;

  if (!prepare_write (context, input, TRUE, &prepared, error))
    return NULL;

  folder = g_path_get_dirname (prepared.path);
  if (g_mkdir_with_parents (folder, 0755) != 0)
    {
      int saved_errno = errno;
      g_autofree char *folder_display = g_path_get_dirname (prepared.display);

      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot create the folder %s: %s", folder_display,
                   g_strerror (saved_errno));
      return NULL;
    }

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  length = strlen (prepared.content);
  if (!tally_tool_replace_file (prepared.path, prepared.display, prepared.content, length, error))
    return NULL;

  return g_strdup_printf ("Wrote %" G_GSIZE_FORMAT " %s to %s (%s)", length,
                          length == 1 ? "byte" : "bytes", prepared.display,
                          prepared.exists ? "replaced" : "new file");
}

/* The new file's content, or the file before and after for one that
 * exists; without a context, the path and the content. */
static TallyToolPreview *
write_dup_preview (TallyTool               *tool,
                   const TallyToolContext  *context,
                   JsonObject              *input,
                   GError                 **error)
{
  g_auto(PreparedWrite) prepared = { 0 };
  TallyToolPreview *preview;

  if (context == NULL)
    {
      const char *file_path, *content;

      if (!tally_tool_input_get_string (input, "file_path", TRUE, &file_path, error) ||
          !tally_tool_input_get_string (input, "content", TRUE, &content, error))
        return NULL;
      preview = tally_tool_preview_new (TALLY_TOOL_PREVIEW_WRITE_FILE, file_path);
      preview->new_text = g_strdup (content);
      preview->edits_content = TRUE;
      return preview;
    }

  if (!prepare_write (context, input, FALSE, &prepared, error))
    return NULL;

  preview = tally_tool_preview_new (prepared.exists ? TALLY_TOOL_PREVIEW_CHANGE_FILE : TALLY_TOOL_PREVIEW_CREATE_FILE,
                                    prepared.display);
  if (prepared.exists)
    {
      g_autoptr(GError) local_error = NULL;
      gsize length;

      if (!g_file_get_contents (prepared.path, &preview->old_text, &length, &local_error))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                       "Cannot read %s: %s", prepared.display, local_error->message);
          tally_tool_preview_free (preview);
          return NULL;
        }
    }
  preview->new_text = g_strdup (prepared.content);
  preview->edits_content = TRUE;
  return preview;
}

static void
tally_tool_write_class_init (TallyToolWriteClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "Write";
  tool_class->description =
    "Write a text file in the workspace folder: create it, or replace all of "
    "an existing file with `content`. Missing parent folders are created. "
    "`file_path` may be absolute or relative to the workspace. To change part "
    "of an existing file, prefer Edit, which sends only the change; read a "
    "file with Read before replacing it. Files outside the workspace are "
    "refused unless the analyst approves that call.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"file_path\":{\"type\":\"string\","
    "\"description\":\"The file to write, absolute or relative to the workspace.\"},"
    "\"content\":{\"type\":\"string\","
    "\"description\":\"The whole new content of the file.\"}"
    "},"
    "\"required\":[\"file_path\",\"content\"]}";
  tool_class->read_only = FALSE;
  tool_class->path_member = "file_path";
  tool_class->summary_member = "file_path";
  tool_class->run = write_run;
  tool_class->preview_kind = TALLY_TOOL_PREVIEW_WRITE_FILE;
  tool_class->content_member = "content";
  tool_class->dup_preview = write_dup_preview;
}

static void
tally_tool_write_init (TallyToolWrite *self)
{
}

/**
 * tally_tool_write_new:
 *
 * Creates the `Write` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_write_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_WRITE, NULL);
}

/**
 * tally_tool_write_dup_diff:
 * @context: the tool context (its workspace must be set)
 * @input: the `Write` input, `{file_path, content}`
 * @error: return location for a #GError
 *
 * Previews a `Write` call for its approval card: the unified diff (see
 * tally_tool_unified_diff()) from the file as it is now (empty when it
 * does not exist yet) to `content`, with headers `--- a/PATH` and
 * `+++ b/PATH`, PATH relative to the workspace (a path outside it is shown
 * absolute on both lines, without the prefixes). Nothing is written, and a
 * path outside the workspace is previewed, not refused: the card is where
 * the analyst decides about it. Reads the file, so call it off the main
 * thread for large files.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT (bad input, no workspace),
 * %TALLY_TOOL_ERROR_REFUSED (a folder or special file),
 * %TALLY_TOOL_ERROR_FAILED (the file cannot be read).
 *
 * Returns: (transfer full): the diff ("" when nothing would change), or
 *   %NULL with @error set
 */
char *
tally_tool_write_dup_diff (const TallyToolContext  *context,
                           JsonObject              *input,
                           GError                 **error)
{
  g_autoptr(TallyToolPreview) preview = NULL;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  preview = write_dup_preview (NULL, context, input, error);
  if (preview == NULL)
    return NULL;

  return tally_tool_dup_file_diff (preview->subject, preview->old_text ? preview->old_text : "",
                                   preview->old_text ? strlen (preview->old_text) : 0,
                                   preview->new_text, strlen (preview->new_text));
}
