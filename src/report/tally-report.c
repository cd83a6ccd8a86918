/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libtally-report's entry points (docs/reports.md): a Markdown report file
 * or a saved session to HTML or PDF, written to a temporary file next to
 * the output and renamed over it, so a failed export leaves no half file.
 */

#define G_LOG_DOMAIN "tally-report"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tally-export.h"
#include "tally-json.h"
#include "tally-report-private.h"

/* Larger Markdown files are refused rather than read into memory. */
#define MARKDOWN_MAX_BYTES (64 * 1024 * 1024)

/**
 * tally_report_error_quark:
 *
 * Returns: the #GQuark of %TALLY_REPORT_ERROR
 */
G_DEFINE_QUARK (tally-report-error-quark, tally_report_error)

/**
 * tally_report_format_from_string:
 * @name: (nullable): `html`, `pdf`, `md` or `jsonl` (the nicks of
 *   #TallyReportFormat)
 * @format: (out): the format
 *
 * Returns: whether @name names a format
 */
gboolean
tally_report_format_from_string (const char        *name,
                                 TallyReportFormat *format)
{
  g_autoptr(GEnumClass) formats = NULL;
  GEnumValue *value;

  g_return_val_if_fail (format != NULL, FALSE);

  if (name == NULL)
    return FALSE;
  formats = g_type_class_ref (TALLY_TYPE_REPORT_FORMAT);
  value = g_enum_get_value_by_nick (formats, name);
  if (value == NULL)
    return FALSE;
  *format = value->value;
  return TRUE;
}

/**
 * tally_report_format_is_rendered:
 * @format: a format
 *
 * Returns: whether @format is drawn from Markdown (HTML, PDF): a file,
 *   never a terminal's text, and the only formats a report file has
 */
gboolean
tally_report_format_is_rendered (TallyReportFormat format)
{
  return format == TALLY_REPORT_FORMAT_HTML || format == TALLY_REPORT_FORMAT_PDF;
}

/**
 * tally_report_dup_session_text:
 * @store: the session store
 * @session_id: the session's full id
 * @format: %TALLY_REPORT_FORMAT_MD or %TALLY_REPORT_FORMAT_JSONL
 * @include_thinking: whether the Markdown writes the model's thinking out
 *   (else only its length); JSON Lines holds every event anyway
 * @error: return location for a #GError
 *
 * A saved session's export as text, read on the calling thread: what
 * tally_report_export_session() writes for these two formats, and what
 * tally-cli prints without `--output`.
 *
 * Returns: (transfer full) (nullable): the text, UTF-8; %NULL with the
 *   store's error (no such session, an unreadable store) or
 *   %TALLY_REPORT_ERROR_INVALID when @format is not one of the two
 */
char *
tally_report_dup_session_text (TallyStore         *store,
                               const char         *session_id,
                               TallyReportFormat   format,
                               gboolean            include_thinking,
                               GError            **error)
{
  g_return_val_if_fail (TALLY_IS_STORE (store), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  if (format == TALLY_REPORT_FORMAT_MD)
    return tally_export_session_markdown_full (store, session_id, include_thinking, NULL, error);
  if (format == TALLY_REPORT_FORMAT_JSONL)
    return tally_store_export_jsonl (store, session_id, error);
  g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
               _("Unknown report format %d"), (int) format);
  return NULL;
}

/**
 * tally_report_dup_title:
 * @markdown: a report
 * @fallback: the title when it has no level-1 ATX heading
 *
 * Returns: (transfer full): the text of the first `# ` heading, else
 *   @fallback
 */
char *
tally_report_dup_title (const char *markdown,
                        const char *fallback)
{
  const char *line = markdown;

  while (line != NULL && *line != '\0')
    {
      const char *end = strchr (line, '\n');

      if (g_str_has_prefix (line, "# "))
        {
          g_autofree char *title = g_strndup (line + 2, end != NULL ? (gsize)(end - line - 2) : strlen (line + 2));

          g_strstrip (title);
          if (*title != '\0')
            return g_steal_pointer (&title);
        }
      line = end != NULL ? end + 1 : NULL;
    }
  return g_strdup (fallback);
}

/**
 * tally_report_check_utf8:
 * @markdown: a report about to be rendered
 * @error: return location for a #GError
 *
 * The check both renderers make before md4c reads @markdown.
 *
 * Returns: whether @markdown is UTF-8; %FALSE with
 *   %TALLY_REPORT_ERROR_INVALID
 */
gboolean
tally_report_check_utf8 (const char  *markdown,
                         GError     **error)
{
  if (g_utf8_validate (markdown, -1, NULL))
    return TRUE;
  g_set_error_literal (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
                       _("The report is not UTF-8 text"));
  return FALSE;
}

/*
 * set_write_error:
 * @error: return location for a #GError
 * @path: (type filename): the file that could not be written
 * @saved_errno: the errno of the call that failed
 *
 * The error of every system call that fails while a report or an export
 * is written: the file and the system's reason, one translated sentence.
 *
 * Returns: %FALSE, with %TALLY_REPORT_ERROR_WRITE set, for a caller to
 *   return
 */
static gboolean
set_write_error (GError     **error,
                 const char  *path,
                 int          saved_errno)
{
  g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_WRITE,
               _("Could not write %s: %s"), path, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
write_all (int          fd,
           const char  *data,
           gsize        length,
           int         *saved_errno)
{
  while (length > 0)
    {
      gssize written = write (fd, data, MIN (length, (gsize) G_MAXSSIZE));

      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        {
          *saved_errno = written < 0 ? errno : ENOSPC;
          return FALSE;
        }
      data += written;
      length -= written;
    }
  return TRUE;
}

/* Writes @data into @path as it is, for an @output that is not a regular
 * file (a FIFO, a terminal, /dev/stdout's pipe): such a file cannot be
 * replaced, only written to. */
static gboolean
write_in_place (const char  *path,
                const char  *data,
                gsize        length,
                GError     **error)
{
  int saved_errno = 0;
  int fd = g_open (path, O_WRONLY | O_CLOEXEC | O_NOCTTY, 0);
  gboolean written;

  if (fd < 0)
    saved_errno = errno;
  written = fd >= 0 && write_all (fd, data, length, &saved_errno);
  /* closed once, whether the write went through or not */
  if (fd >= 0 && close (fd) != 0 && written)
    {
      saved_errno = errno;
      written = FALSE;
    }
  if (!written)
    return set_write_error (error, path, saved_errno);
  return TRUE;
}

/**
 * tally_report_write_atomic:
 * @output: the file to write; a local path
 * @data: (array length=length): the bytes
 * @length: how many
 * @cancellable: (nullable): a #GCancellable, checked before the rename
 * @error: return location for a #GError
 *
 * Writes @data to a temporary file in @output's folder, flushes it to
 * disk and renames it over @output (mode 0644), so @output is either the
 * old file or the whole new one. On any failure the temporary is removed.
 * A symbolic link is followed (the file it points to is replaced, the link
 * stays); an @output that exists and is neither a regular file nor a
 * folder (a FIFO, a device such as /dev/stdout's) is written to as it is.
 *
 * Returns: whether @output was written; %FALSE with
 *   %TALLY_REPORT_ERROR_WRITE (the message names the file and the system's
 *   reason: no such folder, permission denied, no space left …) or
 *   %G_IO_ERROR_CANCELLED
 */
gboolean
tally_report_write_atomic (GFile         *output,
                           const char    *data,
                           gsize          length,
                           GCancellable  *cancellable,
                           GError       **error)
{
  g_autofree char *path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  g_autofree char *temp = NULL;
  GStatBuf st;
  int fd, saved_errno = 0;

  g_return_val_if_fail (G_IS_FILE (output), FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  path = g_file_get_path (output);
  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (output);

      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_WRITE,
                   _("Could not write %s: only local files can be written"), uri);
      return FALSE;
    }
  /* One look at what is there, through any symbolic link */
  if (g_stat (path, &st) == 0)
    {
      char *real;

      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_WRITE,
                       _("Could not write %s: it is a folder"), path);
          return FALSE;
        }
      if (!S_ISREG (st.st_mode))
        return write_in_place (path, data, length, error);
      /* The file a link points to is replaced, and the link stays (a
       * dangling link, which g_stat() does not get past, is replaced). */
      real = realpath (path, NULL);
      if (real != NULL)
        {
          g_free (path);
          path = real;
        }
    }
  dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  temp = g_strdup_printf ("%s/.%s.XXXXXX", dir, base);

  fd = g_mkstemp_full (temp, O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return set_write_error (error, path, errno);

  if (!write_all (fd, data, length, &saved_errno) || fsync (fd) != 0 || fchmod (fd, 0644) != 0)
    {
      if (saved_errno == 0)
        saved_errno = errno;
      close (fd);
      g_unlink (temp);
      return set_write_error (error, path, saved_errno);
    }
  if (close (fd) != 0)
    {
      saved_errno = errno;
      g_unlink (temp);
      return set_write_error (error, path, saved_errno);
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      g_unlink (temp);
      return FALSE;
    }
  if (g_rename (temp, path) != 0)
    {
      saved_errno = errno;
      g_unlink (temp);
      return set_write_error (error, path, saved_errno);
    }
  return TRUE;
}

/* Renders @markdown in @format and writes it to @output. */
static gboolean
render_and_write (const char               *markdown,
                  const char               *title,
                  const TallyReportSource  *source,
                  TallyReportFormat         format,
                  GFile                    *output,
                  GCancellable             *cancellable,
                  GError                  **error)
{
  if (format == TALLY_REPORT_FORMAT_HTML)
    {
      g_autofree char *html = tally_report_markdown_to_html (markdown, title, source, cancellable, error);

      return html != NULL && tally_report_write_atomic (output, html, strlen (html), cancellable, error);
    }
  else
    {
      g_autoptr(GBytes) pdf = tally_report_markdown_to_pdf (markdown, title, source, cancellable, error);
      gsize length = 0;
      const char *data;

      if (pdf == NULL)
        return FALSE;
      data = g_bytes_get_data (pdf, &length);
      return tally_report_write_atomic (output, data, length, cancellable, error);
    }
}

static char *
read_markdown (GFile         *file,
               GCancellable  *cancellable,
               GError       **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *name = g_file_get_parse_name (file);
  g_autoptr(GFileInfo) info = NULL;
  char *contents = NULL;
  gsize length = 0;

  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_SIZE "," G_FILE_ATTRIBUTE_STANDARD_TYPE,
                            G_FILE_QUERY_INFO_NONE, cancellable, &local_error);
  if (info != NULL && g_file_info_get_file_type (info) == G_FILE_TYPE_DIRECTORY)
    {
      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_READ,
                   _("Could not read %s: it is a folder"), name);
      return NULL;
    }
  if (info != NULL && g_file_info_get_size (info) > MARKDOWN_MAX_BYTES)
    {
      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_READ,
                   _("Could not read %s: the file is larger than 64 MB"), name);
      return NULL;
    }
  if (info == NULL || !g_file_load_contents (file, cancellable, &contents, &length, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_READ,
                     _("Could not read %s: %s"), name, local_error->message);
      return NULL;
    }
  if (memchr (contents, '\0', length) != NULL || !g_utf8_validate (contents, length, NULL))
    {
      g_free (contents);
      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
                   _("Could not read %s: it is not UTF-8 text"), name);
      return NULL;
    }
  return contents;
}

/* One export, of a report file or of a saved session: what to write,
 * where, and the Markdown and images to render it from. */
typedef struct {
  GFile             *markdown_file;  /* a report file's export, else %NULL */
  GFile             *output;         /* %NULL for tally_report_file_to_html() */
  TallyReportFormat  format;
  char              *markdown;       /* MD, JSONL: the whole text to write */
  char              *title;
  GFile             *base_dir;       /* a report file's folder */
  GHashTable        *charts;         /* a session's charts by SVG path */
} ExportJob;

static ExportJob *
export_job_new (GFile             *markdown_file,
                TallyReportFormat  format,
                GFile             *output)
{
  ExportJob *job = g_new0 (ExportJob, 1);

  g_set_object (&job->markdown_file, markdown_file);
  g_set_object (&job->output, output);
  job->format = format;
  return job;
}

static void
export_job_free (ExportJob *job)
{
  g_clear_object (&job->markdown_file);
  g_clear_object (&job->output);
  g_free (job->markdown);
  g_free (job->title);
  g_clear_object (&job->base_dir);
  g_clear_pointer (&job->charts, g_hash_table_unref);
  g_free (job);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ExportJob, export_job_free)

/* Reads @job's report file: its Markdown, its title (the first `# `
 * heading, else the file's name) and its folder, which relative images
 * are read from (docs/reports.md §2). */
static gboolean
read_report_file (ExportJob     *job,
                  GCancellable  *cancellable,
                  GError       **error)
{
  g_autofree char *base = NULL;

  job->markdown = read_markdown (job->markdown_file, cancellable, error);
  if (job->markdown == NULL)
    return FALSE;
  base = g_file_get_basename (job->markdown_file);
  job->title = tally_report_dup_title (job->markdown, base);
  job->base_dir = g_file_get_parent (job->markdown_file);
  return TRUE;
}

/* Renders @job and writes its output; a report file is read first. The
 * body of both exports, blocking or in their worker thread. */
static gboolean
run_export_job (ExportJob     *job,
                GCancellable  *cancellable,
                GError       **error)
{
  TallyReportSource source = { 0 };

  if ((guint) job->format > TALLY_REPORT_FORMAT_JSONL)
    {
      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
                   _("Unknown report format %d"), (int) job->format);
      return FALSE;
    }
  if (job->markdown_file != NULL && !tally_report_format_is_rendered (job->format))
    {
      g_autoptr(GEnumClass) formats = g_type_class_ref (TALLY_TYPE_REPORT_FORMAT);

      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
                   _("A report file is exported as HTML or PDF, not as %s"),
                   g_enum_get_value (formats, job->format)->value_nick);
      return FALSE;
    }
  if (job->markdown == NULL && !read_report_file (job, cancellable, error))
    return FALSE;
  if (!tally_report_format_is_rendered (job->format))
    return tally_report_write_atomic (job->output, job->markdown, strlen (job->markdown), cancellable, error);
  source.base_dir = job->base_dir;
  source.charts = job->charts;
  return render_and_write (job->markdown, job->title, &source, job->format, job->output, cancellable, error);
}

/* A task for either export's async function @tag, owning @job */
static GTask *
export_task_new (ExportJob           *job,
                 gpointer             tag,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, job, (GDestroyNotify) export_job_free);
  return task;
}

static void
export_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  GError *error = NULL;

  if (run_export_job (task_data, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* The end of either export's task, started by the function @tag */
static gboolean
finish_task (GAsyncResult  *result,
             gpointer       tag,
             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tag, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * tally_report_file_to_html:
 * @markdown_file: a Markdown report; its images (`![…](charts/x.svg)`)
 *   are read relative to its folder, never outside it
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Renders a report as one self-contained HTML document (docs/reports.md
 * §1): CSS inline, SVG charts inline (re-drawn, so no script of theirs
 * survives), PNG images as `data:` URIs, no script, nothing to fetch; raw
 * HTML in the Markdown is shown as text; a missing chart shows a
 * placeholder. Blocking: call it from a worker thread in a window.
 *
 * Returns: (transfer full) (nullable): the HTML, UTF-8; %NULL with
 *   %TALLY_REPORT_ERROR_READ, %TALLY_REPORT_ERROR_INVALID (not UTF-8) or
 *   %G_IO_ERROR_CANCELLED
 */
char *
tally_report_file_to_html (GFile         *markdown_file,
                           GCancellable  *cancellable,
                           GError       **error)
{
  g_autoptr(ExportJob) job = NULL;
  TallyReportSource source = { 0 };

  g_return_val_if_fail (G_IS_FILE (markdown_file), NULL);

  job = export_job_new (markdown_file, TALLY_REPORT_FORMAT_HTML, NULL);
  if (!read_report_file (job, cancellable, error))
    return NULL;
  source.base_dir = job->base_dir;
  return tally_report_markdown_to_html (job->markdown, job->title, &source, cancellable, error);
}

/**
 * tally_report_export_file:
 * @markdown_file: a Markdown report (see tally_report_file_to_html())
 * @format: the output's format, %TALLY_REPORT_FORMAT_HTML or
 *   %TALLY_REPORT_FORMAT_PDF (else %TALLY_REPORT_ERROR_INVALID)
 * @output: the file to write, replaced as a whole or not at all
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Renders a report as HTML or PDF (docs/reports.md) and writes it.
 * Blocking; tally_report_export_file_async() runs it in a thread.
 *
 * Returns: whether @output was written; %FALSE with
 *   %TALLY_REPORT_ERROR_READ, %TALLY_REPORT_ERROR_INVALID,
 *   %TALLY_REPORT_ERROR_WRITE or %G_IO_ERROR_CANCELLED
 */
gboolean
tally_report_export_file (GFile              *markdown_file,
                          TallyReportFormat   format,
                          GFile              *output,
                          GCancellable       *cancellable,
                          GError            **error)
{
  g_autoptr(ExportJob) job = NULL;

  g_return_val_if_fail (G_IS_FILE (markdown_file), FALSE);
  g_return_val_if_fail (G_IS_FILE (output), FALSE);

  job = export_job_new (markdown_file, format, output);
  return run_export_job (job, cancellable, error);
}

/**
 * tally_report_export_file_async:
 * @markdown_file: a Markdown report
 * @format: the output's format, %TALLY_REPORT_FORMAT_HTML or
 *   %TALLY_REPORT_FORMAT_PDF (else %TALLY_REPORT_ERROR_INVALID)
 * @output: the file to write
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the caller's thread-default main context when done
 * @user_data: for @callback
 *
 * tally_report_export_file() in a worker thread.
 */
void
tally_report_export_file_async (GFile               *markdown_file,
                                TallyReportFormat    format,
                                GFile               *output,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (G_IS_FILE (markdown_file));
  g_return_if_fail (G_IS_FILE (output));

  task = export_task_new (export_job_new (markdown_file, format, output),
                          tally_report_export_file_async, cancellable, callback, user_data);
  g_task_run_in_thread (task, export_thread);
}

/**
 * tally_report_export_file_finish:
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: whether the file was written; the errors of
 *   tally_report_export_file()
 */
gboolean
tally_report_export_file_finish (GAsyncResult  *result,
                                 GError       **error)
{
  return finish_task (result, tally_report_export_file_async, error);
}

/* The session's Markdown and a map from each chart's SVG path to its
 * chart_created event, read from @store on the calling thread; for MD
 * and JSONL the text to write. */
static gboolean
read_session (TallyStore    *store,
              const char    *session_id,
              gboolean       include_thinking,
              ExportJob     *job,
              GError       **error)
{
  g_autoptr(GPtrArray) charts = NULL;
  g_autoptr(GError) local_error = NULL;

  if (!tally_report_format_is_rendered (job->format))
    {
      job->markdown = tally_report_dup_session_text (store, session_id, job->format, include_thinking, error);
      return job->markdown != NULL;
    }
  job->markdown = tally_export_session_markdown_full (store, session_id, include_thinking, &charts, &local_error);
  if (job->markdown == NULL)
    {
      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_READ,
                   _("Could not read session %s: %s"), session_id, local_error->message);
      return FALSE;
    }
  job->title = tally_report_dup_title (job->markdown, session_id);
  job->charts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) json_object_unref);
  for (guint i = 0; i < charts->len; i++)
    {
      JsonObject *event = g_ptr_array_index (charts, i);
      JsonArray *files = tally_json_object_get_array (event, "files");

      for (guint j = 0; files != NULL && j < json_array_get_length (files); j++)
        {
          const char *file = json_array_get_string_element (files, j);

          if (file != NULL && g_str_has_suffix (file, ".svg"))
            g_hash_table_replace (job->charts, g_strdup (file), json_object_ref (event));
        }
    }
  return TRUE;
}

/**
 * tally_report_export_session:
 * @store: the session store
 * @session_id: the session's full id
 * @format: the output's format
 * @include_thinking: whether the model's thinking is written out (else
 *   only its length); JSON Lines holds every event anyway
 * @output: the file to write, replaced as a whole or not at all
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Exports a saved session. As HTML or PDF: its Markdown export
 * (tally_export_session_markdown_full(), with the numbered notes that
 * name each chart's and result's query) rendered like a report, every
 * chart drawn from its `chart_created` event, so the files in `charts/`
 * are not needed. As Markdown or JSON Lines: the text of
 * tally_report_dup_session_text(). Blocking.
 *
 * Returns: whether @output was written; %FALSE with
 *   %TALLY_REPORT_ERROR_READ (HTML, PDF: no such session, an unreadable
 *   store), the store's error (MD, JSONL: the same),
 *   %TALLY_REPORT_ERROR_INVALID (an unknown @format),
 *   %TALLY_REPORT_ERROR_WRITE or %G_IO_ERROR_CANCELLED
 */
gboolean
tally_report_export_session (TallyStore         *store,
                             const char         *session_id,
                             TallyReportFormat   format,
                             gboolean            include_thinking,
                             GFile              *output,
                             GCancellable       *cancellable,
                             GError            **error)
{
  g_autoptr(ExportJob) job = NULL;

  g_return_val_if_fail (TALLY_IS_STORE (store), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (G_IS_FILE (output), FALSE);

  job = export_job_new (NULL, format, output);
  if (!read_session (store, session_id, include_thinking, job, error))
    return FALSE;
  return run_export_job (job, cancellable, error);
}

/**
 * tally_report_export_session_async:
 * @store: the session store
 * @session_id: the session's full id
 * @format: the output's format
 * @include_thinking: whether the model's thinking is written out
 * @output: the file to write
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the caller's thread-default main context when done
 * @user_data: for @callback
 *
 * tally_report_export_session() with the store read on the calling
 * thread and the file drawn and written in a worker thread. A session
 * that cannot be read fails through @callback too.
 */
void
tally_report_export_session_async (TallyStore          *store,
                                   const char          *session_id,
                                   TallyReportFormat    format,
                                   gboolean             include_thinking,
                                   GFile               *output,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;
  ExportJob *job;

  g_return_if_fail (TALLY_IS_STORE (store));
  g_return_if_fail (session_id != NULL);
  g_return_if_fail (G_IS_FILE (output));

  job = export_job_new (NULL, format, output);
  task = export_task_new (job, tally_report_export_session_async, cancellable, callback, user_data);
  if (!read_session (store, session_id, include_thinking, job, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_run_in_thread (task, export_thread);
}

/**
 * tally_report_export_session_finish:
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: whether the file was written; the errors of
 *   tally_report_export_session()
 */
gboolean
tally_report_export_session_finish (GAsyncResult  *result,
                                    GError       **error)
{
  return finish_task (result, tally_report_export_session_async, error);
}
