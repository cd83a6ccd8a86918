/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-test-mock"

#include "config.h"

#include "tally-test-mock.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gio/gunixinputstream.h>

#ifndef TALLY_TEST_MOCK_API
# error "TALLY_TEST_MOCK_API must be defined to the path of tally-mock-api"
#endif

/* How long the mock may take to report its port (it is slow to start under
 * sanitizers), and to exit after SIGTERM. */
#define PORT_TIMEOUT_MS  10000
#define EXIT_TIMEOUT_MS  5000

/**
 * TallyTestMock:
 *
 * A running `tally-mock-api` child process (tests/mock-api) listening on
 * 127.0.0.1, with its temporary folder (the scenario written by
 * tally_test_mock_start() and the `requests.jsonl` record). Create it with
 * tally_test_mock_start() or tally_test_mock_start_file(); free it with
 * tally_test_mock_free(), which stops the process and removes the folder.
 */
struct _TallyTestMock {
  GSubprocess *process;
  char        *tmpdir;
  char        *record_path;
  char        *base_url;
  guint16      port;
};

static void
remove_tmpdir (const char *path)
{
  g_autoptr(GDir) dir = NULL;
  const char *name;

  if (path == NULL)
    return;

  /* The folder holds only files this helper or the mock created. */
  dir = g_dir_open (path, 0, NULL);
  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);

          if (g_unlink (child) != 0)
            g_warning ("Cannot remove %s: %s", child, g_strerror (errno));
        }
    }

  if (g_rmdir (path) != 0)
    g_warning ("Cannot remove %s: %s", path, g_strerror (errno));
}

/* Reads one line from @fd, waiting at most @timeout_ms in total. Returns
 * NULL with @error set on timeout, end of file or a read error. */
static char *
read_line_with_timeout (int       fd,
                        gint64    timeout_ms,
                        GError  **error)
{
  g_autoptr(GString) line = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + timeout_ms * 1000;

  for (;;)
    {
      struct pollfd pfd = { fd, POLLIN, 0 };
      gint64 remaining = (deadline - g_get_monotonic_time ()) / 1000;
      char c;
      int r;
      gssize n;

      if (remaining <= 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                       "tally-mock-api did not report its port within %d ms",
                       (int) timeout_ms);
          return NULL;
        }

      r = poll (&pfd, 1, (int) remaining);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Waiting for tally-mock-api: %s", g_strerror (saved_errno));
          return NULL;
        }
      if (r == 0)
        continue;

      n = read (fd, &c, 1);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Reading from tally-mock-api: %s", g_strerror (saved_errno));
          return NULL;
        }
      if (n == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                               "tally-mock-api exited before reporting its port "
                               "(see its message on stderr; is the scenario valid?)");
          return NULL;
        }
      if (c == '\n')
        return g_string_free (g_steal_pointer (&line), FALSE);
      if (line->len > 64)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               "tally-mock-api printed something else than its port");
          return NULL;
        }
      g_string_append_c (line, c);
    }
}

typedef struct {
  gboolean done;
  gboolean timed_out;
} WaitData;

static void
wait_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  WaitData *data = user_data;

  g_subprocess_wait_finish (G_SUBPROCESS (object), result, NULL);
  data->done = TRUE;
}

static gboolean
wait_timeout_cb (gpointer user_data)
{
  WaitData *data = user_data;

  data->timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* Waits for @process to exit, at most @timeout_ms, on a private main
 * context so that no main loop of the caller is needed or disturbed.
 * Returns whether it exited. */
static gboolean
wait_with_timeout (GSubprocess *process,
                   guint        timeout_ms)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GSource) timeout = g_timeout_source_new (timeout_ms);
  WaitData data = { FALSE, FALSE };

  g_main_context_push_thread_default (context);
  g_subprocess_wait_async (process, cancellable, wait_done_cb, &data);
  g_source_set_callback (timeout, wait_timeout_cb, &data, NULL);
  g_source_attach (timeout, context);

  while (!data.done && !data.timed_out)
    g_main_context_iteration (context, TRUE);

  if (!data.done)
    {
      g_cancellable_cancel (cancellable);
      while (!data.done)
        g_main_context_iteration (context, TRUE);
    }

  g_source_destroy (timeout);
  g_main_context_pop_thread_default (context);

  return !data.timed_out || g_subprocess_get_identifier (process) == NULL;
}

static void
stop_process (GSubprocess *process)
{
  if (g_subprocess_get_identifier (process) == NULL)
    return;

  g_subprocess_send_signal (process, SIGTERM);
  if (!wait_with_timeout (process, EXIT_TIMEOUT_MS))
    {
      g_warning ("tally-mock-api did not exit after SIGTERM; killing it");
      g_subprocess_force_exit (process);
      wait_with_timeout (process, EXIT_TIMEOUT_MS);
    }
}

/* Starts the mock with @scenario_path, recording into @tmpdir, which the
 * returned object then owns (it is removed on failure too). */
static TallyTestMock *
start_in_dir (const char  *scenario_path,
              char        *tmpdir,
              GError     **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autofree char *line = NULL;
  TallyTestMock *self;
  GInputStream *stdout_pipe;
  guint64 port = 0;

  self = g_new0 (TallyTestMock, 1);
  self->tmpdir = tmpdir;
  self->record_path = g_build_filename (tmpdir, "requests.jsonl", NULL);

  /* stdin is a pipe that stays open while we live: the mock exits on its
   * end of file, so a crashed test leaves no server behind. */
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDIN_PIPE);
  self->process = g_subprocess_launcher_spawn (launcher, error,
                                               TALLY_TEST_MOCK_API,
                                               "--scenario", scenario_path,
                                               "--record", self->record_path,
                                               "--watch-stdin",
                                               NULL);
  if (self->process == NULL)
    goto fail;

  stdout_pipe = g_subprocess_get_stdout_pipe (self->process);
  g_assert (G_IS_UNIX_INPUT_STREAM (stdout_pipe));

  line = read_line_with_timeout (g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (stdout_pipe)),
                                 PORT_TIMEOUT_MS, error);
  if (line == NULL)
    goto fail;

  if (!g_ascii_string_to_unsigned (line, 10, 1, G_MAXUINT16, &port, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "tally-mock-api reported \"%s\" instead of a port", line);
      goto fail;
    }

  self->port = (guint16) port;
  self->base_url = g_strdup_printf ("http://127.0.0.1:%u", self->port);
  return self;

fail:
  tally_test_mock_free (self);
  return NULL;
}

/**
 * tally_test_mock_start:
 * @scenario_json: the scenario as JSON text (format in
 *   tests/mock-api/README.md); relative `sse_file` paths are taken from the
 *   temporary folder, so use `${TESTDATA}/…` or absolute paths
 * @error: return location for a #GError
 *
 * Writes @scenario_json to `scenario.json` in a new temporary folder and
 * starts the mock with it, as tally_test_mock_start_file() does.
 *
 * Returns: (transfer full) (nullable): the running mock, or %NULL with
 *   @error set (a %G_FILE_ERROR when the folder or file cannot be written,
 *   otherwise as for tally_test_mock_start_file())
 */
TallyTestMock *
tally_test_mock_start (const char  *scenario_json,
                       GError     **error)
{
  g_autofree char *path = NULL;
  char *tmpdir;

  g_return_val_if_fail (scenario_json != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  tmpdir = g_dir_make_tmp ("tally-mock-XXXXXX", error);
  if (tmpdir == NULL)
    return NULL;

  path = g_build_filename (tmpdir, "scenario.json", NULL);
  if (!g_file_set_contents (path, scenario_json, -1, error))
    {
      remove_tmpdir (tmpdir);
      g_free (tmpdir);
      return NULL;
    }

  return start_in_dir (path, tmpdir, error);
}

/**
 * tally_test_mock_start_file:
 * @scenario_path: path of a scenario file (format in tests/mock-api/README.md)
 * @error: return location for a #GError
 *
 * Spawns `tally-mock-api --scenario @scenario_path --record
 * TMPDIR/requests.jsonl` (the binary at %TALLY_TEST_MOCK_API, passed by
 * meson), with stderr inherited so the mock's log lines appear in the test
 * log, and waits at most 10 s for the port it prints. No main loop is
 * needed. The mock listens on 127.0.0.1 only.
 *
 * Returns: (transfer full) (nullable): the running mock, or %NULL with
 *   @error set: a %G_SPAWN_ERROR if it cannot be started,
 *   %G_IO_ERROR_TIMED_OUT if no port came in time, %G_IO_ERROR_FAILED if it
 *   exited first (an invalid scenario: the reason is on stderr),
 *   %G_IO_ERROR_INVALID_DATA if it printed something else
 */
TallyTestMock *
tally_test_mock_start_file (const char  *scenario_path,
                            GError     **error)
{
  char *tmpdir;

  g_return_val_if_fail (scenario_path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  tmpdir = g_dir_make_tmp ("tally-mock-XXXXXX", error);
  if (tmpdir == NULL)
    return NULL;

  return start_in_dir (scenario_path, tmpdir, error);
}

/**
 * tally_test_mock_get_base_url:
 * @self: a #TallyTestMock
 *
 * Returns the origin to give the client as its base URL, without `/v1`
 * and without a trailing slash, e.g. "http://127.0.0.1:41234".
 *
 * Returns: (transfer none): the base URL, valid while @self lives
 */
const char *
tally_test_mock_get_base_url (TallyTestMock *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->base_url;
}

/**
 * tally_test_mock_get_port:
 * @self: a #TallyTestMock
 *
 * Returns: the TCP port the mock listens on (on 127.0.0.1)
 */
guint16
tally_test_mock_get_port (TallyTestMock *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->port;
}

/* Returns the complete lines of the record file (a line is written in one
 * piece before the response body, but a reader could still catch the end
 * of a file mid-write: an unterminated last line is left out). */
static char **
read_record_lines (TallyTestMock *self)
{
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize length = 0;
  char *end;

  if (!g_file_get_contents (self->record_path, &contents, &length, &error))
    {
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_warning ("Cannot read %s: %s", self->record_path, error->message);
      return g_new0 (char *, 1);
    }

  end = strrchr (contents, '\n');
  if (end == NULL)
    return g_new0 (char *, 1);
  *end = '\0';

  return g_strsplit (contents, "\n", -1);
}

/**
 * tally_test_mock_dup_requests:
 * @self: a #TallyTestMock
 *
 * Reads back every request the mock has received so far, in order. Each
 * element is an object `{"n": 1-based request number, "method", "path",
 * "query"?, "headers": {lower-case name: value}, "body": parsed JSON (or
 * the raw text when it is not JSON, null when empty), "response": index of
 * the scripted response used or -1, "status": HTTP status sent}`. A
 * request is recorded before its response body is sent, so it is there
 * even when the client cancelled mid-stream.
 *
 * Returns: (transfer full): an array of request objects (empty when there
 *   were none); free with json_array_unref()
 */
JsonArray *
tally_test_mock_dup_requests (TallyTestMock *self)
{
  g_auto(GStrv) lines = NULL;
  JsonArray *requests;

  g_return_val_if_fail (self != NULL, NULL);

  requests = json_array_new ();
  lines = read_record_lines (self);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;

      if (*lines[i] == '\0')
        continue;
      if (!json_parser_load_from_data (parser, lines[i], -1, &error))
        {
          g_warning ("Bad line %u in %s: %s", i + 1, self->record_path, error->message);
          continue;
        }
      json_array_add_element (requests, json_parser_steal_root (parser));
    }

  return requests;
}

/**
 * tally_test_mock_dup_request_body:
 * @self: a running mock
 * @n: the request, from 0
 *
 * The parsed body of the @n-th request the mock received; fails the test
 * when there were not that many.
 *
 * Returns: (transfer full): the body object; free with json_object_unref()
 */
JsonObject *
tally_test_mock_dup_request_body (TallyTestMock *self,
                                  guint          n)
{
  g_autoptr(JsonArray) requests = tally_test_mock_dup_requests (self);
  JsonObject *request;

  g_assert_cmpuint (json_array_get_length (requests), >, n);
  request = json_array_get_object_element (requests, n);
  return json_object_ref (json_object_get_object_member (request, "body"));
}

/**
 * tally_test_mock_get_n_requests:
 * @self: a #TallyTestMock
 *
 * Returns: how many requests the mock has received and recorded so far
 *   (every method and path, including the ones it refused)
 */
guint
tally_test_mock_get_n_requests (TallyTestMock *self)
{
  g_auto(GStrv) lines = NULL;
  guint n = 0;

  g_return_val_if_fail (self != NULL, 0);

  lines = read_record_lines (self);
  for (guint i = 0; lines[i] != NULL; i++)
    if (*lines[i] != '\0')
      n++;

  return n;
}

/**
 * tally_test_mock_count_path:
 * @self: a #TallyTestMock
 * @path: a request path, e.g. "/v1/messages"
 *
 * Returns: how many of the recorded requests went to @path (the model
 *   list, `GET /v1/models`, is then left out of a count of messages)
 */
guint
tally_test_mock_count_path (TallyTestMock *self,
                            const char    *path)
{
  g_autoptr(JsonArray) requests = NULL;
  guint n = 0;

  g_return_val_if_fail (self != NULL, 0);

  requests = tally_test_mock_dup_requests (self);
  for (guint i = 0; i < json_array_get_length (requests); i++)
    n += g_strcmp0 (json_object_get_string_member_with_default (json_array_get_object_element (requests, i),
                                                                "path", NULL), path) == 0;
  return n;
}

/**
 * tally_test_mock_free:
 * @self: (transfer full) (nullable): a #TallyTestMock
 *
 * Stops the mock (SIGTERM, then SIGKILL if it has not exited after 5 s),
 * waits for it and removes its temporary folder.
 */
void
tally_test_mock_free (TallyTestMock *self)
{
  if (self == NULL)
    return;

  if (self->process != NULL)
    {
      stop_process (self->process);
      g_clear_object (&self->process);
    }

  remove_tmpdir (self->tmpdir);
  g_free (self->tmpdir);
  g_free (self->record_path);
  g_free (self->base_url);
  g_free (self);
}

/**
 * tally_test_data_dir:
 *
 * Returns the folder holding the tests' data, the repository's `tests/`
 * folder (with `fixtures/sse/` and `data/chinook.sqlite`), from the
 * `TALLY_TEST_DATA_DIR` environment variable, which `meson test` sets.
 * Aborts the test with a clear message when it is not set.
 *
 * Returns: (transfer none): the folder path
 */
const char *
tally_test_data_dir (void)
{
  const char *dir = g_getenv ("TALLY_TEST_DATA_DIR");

  if (dir == NULL || *dir == '\0')
    g_error ("TALLY_TEST_DATA_DIR is not set; run the tests with `meson test` "
             "or point it at the repository's tests/ folder");

  return dir;
}

/**
 * tally_test_fixture_path:
 * @name: a file name under `tests/fixtures/sse`, e.g. "docs_basic_text.sse"
 *
 * Builds the full path of an SSE fixture under tally_test_data_dir(). The
 * file is not checked.
 *
 * Returns: (transfer full): the path; free with g_free()
 */
char *
tally_test_fixture_path (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);

  return g_build_filename (tally_test_data_dir (), "fixtures", "sse", name, NULL);
}
