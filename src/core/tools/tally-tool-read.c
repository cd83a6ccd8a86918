/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-read.h"
#include "tally-tool-private.h"

#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#define DEFAULT_LIMIT 2000
#define MAX_LINE_CHARS 2000
/* A line is kept up to this many bytes while reading; enough for
 * MAX_LINE_CHARS characters of UTF-8. */
#define MAX_LINE_BYTES (4 * MAX_LINE_CHARS + 4)
/* The result as a whole stays below this; the model is told where to go
 * on. */
#define MAX_OUTPUT_BYTES (256 * 1024)
#define CHUNK_SIZE (64 * 1024)

/**
 * TallyToolRead:
 *
 * The `Read` tool: returns a text file inside the workspace with numbered
 * lines, like `cat -n` (the number right-aligned in six columns, a tab,
 * the line).
 *
 * Input (docs/architecture.md §8.1): `{file_path, offset?, limit?}`.
 * `file_path` may be in the quoted form Glob and Grep print for unusual
 * names (tally_tool_escape_path()); it is unquoted when resolved.
 * `offset` is the 1-based number of the first line to return (0 is taken
 * as 1), `limit` the number of lines (default 2000; 0 means the default).
 * Lines longer than 2000 characters are cut. Folders and binary files
 * (those holding a NUL byte) are refused, and so are paths outside the
 * workspace unless the analyst approved this call on its card
 * (#TallyToolContext.allow_outside_workspace).
 */
struct _TallyToolRead
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolRead, tally_tool_read, TALLY_TYPE_TOOL)

typedef struct {
  GString *out;
  GString *line;
  guint64  first;
  guint64  last;
  guint64  line_no;
  gboolean output_full;
} Reader;

/* Ends the current line: prints it when it is in the wanted range. */
static void
finish_line (Reader *reader)
{
  if (reader->line_no >= reader->first && reader->line_no <= reader->last &&
      !reader->output_full)
    {
      gsize len = reader->line->len;

      if (len > 0 && reader->line->str[len - 1] == '\r')
        len--;

      g_string_append_printf (reader->out, "%6" G_GUINT64_FORMAT "\t", reader->line_no);
      /* A cut line kept MAX_LINE_BYTES bytes, which is always more than
       * MAX_LINE_CHARS characters, so the clip marks it with "…". */
      tally_tool_append_clipped (reader->out, reader->line->str, len, MAX_LINE_CHARS);
      g_string_append_c (reader->out, '\n');

      if (reader->out->len > MAX_OUTPUT_BYTES)
        reader->output_full = TRUE;
    }

  g_string_truncate (reader->line, 0);
  reader->line_no++;
}

/* A failure to open or read the file: a cancellation is passed on as it
 * is, anything else becomes %TALLY_TOOL_ERROR_FAILED naming @file_path.
 * Takes @local_error. */
static void
propagate_read_error (GError     **error,
                      GError      *local_error,
                      const char  *file_path)
{
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, local_error);
      return;
    }

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
               "Cannot read %s: %s", file_path, local_error->message);
  g_error_free (local_error);
}

static char *
read_run (TallyTool               *tool,
          const TallyToolContext  *context,
          JsonObject              *input,
          GCancellable            *cancellable,
          GError                 **error)
{
  g_autofree char *path = NULL;
  g_autofree char *buffer = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFileInputStream) stream = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) line = g_string_new (NULL);
  const char *file_path;
  gboolean has_offset, has_limit;
  guint64 offset, limit;
  gboolean more_after = FALSE;
  gboolean saw_bytes = FALSE;
  gboolean ends_with_newline = TRUE;
  Reader reader = { 0 };
  GStatBuf st;

  if (!tally_tool_input_get_string (input, "file_path", TRUE, &file_path, error) ||
      !tally_tool_input_get_uint (input, "offset", &has_offset, &offset, error) ||
      !tally_tool_input_get_uint (input, "limit", &has_limit, &limit, error))
    return NULL;

  if (offset == 0)
    offset = 1;
  if (limit == 0)
    limit = DEFAULT_LIMIT;

  path = tally_tool_resolve_inside (context, "file_path", file_path, error);
  if (path == NULL)
    return NULL;

  if (g_stat (path, &st) != 0)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_NOT_FOUND,
                   "The file %s does not exist", file_path);
      return NULL;
    }

  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                   "%s is a folder, not a file; use Glob to list the files in it",
                   file_path);
      return NULL;
    }

  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                   "%s is not a regular file", file_path);
      return NULL;
    }

  file = g_file_new_for_path (path);
  stream = g_file_read (file, cancellable, &local_error);
  if (stream == NULL)
    {
      propagate_read_error (error, g_steal_pointer (&local_error), file_path);
      return NULL;
    }

  reader.out = out;
  reader.line = line;
  reader.first = offset;
  reader.last = offset + limit - 1;
  reader.line_no = 1;

  buffer = g_malloc (CHUNK_SIZE);

  for (;;)
    {
      gssize n = g_input_stream_read (G_INPUT_STREAM (stream), buffer, CHUNK_SIZE,
                                      cancellable, &local_error);
      const char *p, *end;

      if (n < 0)
        {
          propagate_read_error (error, g_steal_pointer (&local_error), file_path);
          return NULL;
        }

      if (n == 0)
        break;

      if (memchr (buffer, '\0', n) != NULL)
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                       "%s is a binary file (it contains NUL bytes); Read shows text "
                       "files only", file_path);
          return NULL;
        }

      saw_bytes = TRUE;
      p = buffer;
      end = buffer + n;

      while (p < end)
        {
          const char *newline = memchr (p, '\n', end - p);
          const char *stop = newline ? newline : end;
          gsize take = stop - p;

          if (reader.line_no >= reader.first && reader.line_no <= reader.last)
            {
              gsize room = MAX_LINE_BYTES - MIN (reader.line->len, MAX_LINE_BYTES);

              g_string_append_len (reader.line, p, MIN (take, room));
            }

          if (newline == NULL)
            {
              ends_with_newline = FALSE;
              p = end;
              break;
            }

          ends_with_newline = TRUE;
          finish_line (&reader);
          p = newline + 1;

          if (reader.line_no > reader.last || reader.output_full)
            break;
        }

      if (reader.line_no > reader.last || reader.output_full)
        {
          /* Anything left, in this chunk or after it, is more text. */
          if (p < end)
            more_after = TRUE;
          else
            {
              gssize peek = g_input_stream_read (G_INPUT_STREAM (stream), buffer, 1,
                                                 cancellable, NULL);
              more_after = peek > 0;
            }
          break;
        }
    }

  /* A last line without a final newline is still a line. */
  if (!more_after && saw_bytes && !ends_with_newline)
    finish_line (&reader);

  if (!saw_bytes)
    return g_strdup ("(the file is empty)");

  if (out->len == 0)
    {
      guint64 n_lines = reader.line_no - 1;
      g_autofree char *lines_text = tally_format_count ((gint64) n_lines, TALLY_GROUPING_COMMA);

      return g_strdup_printf ("(the file has %s %s; offset %" G_GUINT64_FORMAT
                              " is past its end)", lines_text,
                              n_lines == 1 ? "line" : "lines", offset);
    }

  if (more_after || reader.output_full)
    {
      guint64 next = reader.line_no;

      if (reader.output_full)
        g_string_append_printf (out, "… output cap of %d KiB reached; continue with offset=%"
                                G_GUINT64_FORMAT "\n", MAX_OUTPUT_BYTES / 1024, next);
      else
        g_string_append_printf (out, "… the file goes on; continue with offset=%"
                                G_GUINT64_FORMAT "\n", next);
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
tally_tool_read_class_init (TallyToolReadClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "Read";
  tool_class->description =
    "Read a text file in the workspace folder. The lines come back numbered "
    "like `cat -n`: the line number, a tab, then the line. Up to 2000 lines are "
    "returned from the start of the file; for longer files pass `offset` (the "
    "1-based number of the first line you want) and `limit` (how many lines). "
    "Lines longer than 2000 characters are cut. `file_path` may be absolute or "
    "relative to the workspace; a name that Glob or Grep listed in double "
    "quotes is passed exactly as listed, quotes and escapes included. "
    "A file outside the workspace is read only "
    "after the analyst approves it; folders and binary files cannot be read. "
    "Use Glob to find files by name and Grep to find "
    "lines by content; use query_database, not Read, for the database.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"file_path\":{\"type\":\"string\","
    "\"description\":\"The file to read, absolute or relative to the workspace.\"},"
    "\"offset\":{\"type\":\"integer\",\"minimum\":0,"
    "\"description\":\"1-based line number to start at (default 1).\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":0,"
    "\"description\":\"How many lines to return (default 2000).\"}"
    "},"
    "\"required\":[\"file_path\"]}";
  tool_class->read_only = TRUE;
  tool_class->path_member = "file_path";
  tool_class->run = read_run;
}

static void
tally_tool_read_init (TallyToolRead *self)
{
}

/**
 * tally_tool_read_new:
 *
 * Creates the `Read` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_read_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_READ, NULL);
}
