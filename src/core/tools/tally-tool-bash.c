/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-bash.h"
#include "tally-tool-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib-unix.h>
#include <gio/gunixinputstream.h>

#define DEFAULT_TIMEOUT_MS 120000
#define MAX_TIMEOUT_MS 600000
/* The most output the model gets; longer output keeps its first and last
 * halves around a marker saying how much was left out. */
#define MAX_OUTPUT_BYTES 30000
#define HEAD_BYTES (MAX_OUTPUT_BYTES / 2)
#define TAIL_BYTES (MAX_OUTPUT_BYTES - HEAD_BYTES)
/* When cutting, the head ends at a line break and the tail starts after
 * one if there is one this close to the cut. */
#define LINE_SNAP_BYTES 2000
#define READ_CHUNK 8192
/* After the shell exits, processes it left in the background may still
 * hold the output open; they get this long to finish before they are
 * killed. */
#define LINGER_MS 1000
/* After a kill, how long to wait for the process to be reaped and the
 * output to close before giving up on them (a process that left the
 * process group can keep the pipe open forever). */
#define DRAIN_MS 3000
/* The descriptor on which the reaper reports to Tally (see reaper_main()). */
#define REPORT_FD 3

/**
 * TallyToolBash:
 *
 * The `Bash` tool: runs a shell command in the workspace folder.
 *
 * Input (docs/architecture.md §8.1): `{command, timeout_ms?}`. The command
 * runs as `/bin/sh -c COMMAND` with the workspace as its working folder,
 * standard input from `/dev/null` and standard error merged into standard
 * output. Its environment is built from an allow-list, never from
 * Tally's whole environment: `PATH`, `HOME`, `LANG`, `LC_*`, `TERM`, `TZ`,
 * `USER`, `SHELL` and `TMPDIR` when set, `PWD` (the workspace), and the
 * variables named by tally_tool_bash_set_extra_env() (the `bash-extra-env`
 * setting, `tally-cli --pass-env`). Connection strings, proxy credentials,
 * tokens and keys therefore never reach a command unless the analyst
 * names them (docs/security.md, "Processes and secrets").
 *
 * The shell runs under a small reaper, a forked copy of Tally that is a
 * child subreaper (PR_SET_CHILD_SUBREAPER) and leads the process group
 * the shell runs in. Every process the command starts stays below the
 * reaper, even one that leaves the group (`setsid`) or whose parent exits
 * (`nohup cmd &`). When the shell exits, or on timeout or cancellation,
 * the reaper kills (SIGKILL) every process still below it, level by level,
 * until none is left, and only then exits: no command leaves an orphan.
 * The reaper's parent-death signal (PR_SET_PDEATHSIG) is SIGTERM, so the
 * same happens when Tally itself dies, even by SIGKILL.
 * `timeout_ms` defaults to 120000 (also when 0) and is capped at 600000.
 *
 * The result is the output (at most 30,000 bytes: the first and last
 * 15,000 around a "[… N bytes omitted …]" line; invalid UTF-8 replaced),
 * then a line "Exit status: N", or "Terminated by signal N (NAME)", or
 * "The command timed out after N s …". A failing command is a normal
 * result, not an error: only a command that cannot start (or no
 * workspace) fails the tool, with %TALLY_TOOL_ERROR_FAILED; a cancelled
 * run fails with %G_IO_ERROR_CANCELLED.
 */
struct _TallyToolBash
{
  TallyTool parent_instance;

  GMutex    lock;        /* guards extra_env: runs read it in workers */
  char    **extra_env;   /* names passed besides the allow-list */
};

G_DEFINE_FINAL_TYPE (TallyToolBash, tally_tool_bash, TALLY_TYPE_TOOL)

/* The captured output: everything while it fits, then the head and a ring
 * buffer holding the latest TAIL_BYTES. */
typedef struct {
  GByteArray *head;
  guint8      tail[TAIL_BYTES];
  gsize       tail_start;
  gsize       tail_len;
  guint64     total;
  gboolean    overflow;
} Capture;

static void
ring_append (Capture      *capture,
             const guint8 *data,
             gsize         len)
{
  if (len >= TAIL_BYTES)
    {
      memcpy (capture->tail, data + len - TAIL_BYTES, TAIL_BYTES);
      capture->tail_start = 0;
      capture->tail_len = TAIL_BYTES;
      return;
    }

  for (gsize done = 0; done < len;)
    {
      gsize end = (capture->tail_start + capture->tail_len) % TAIL_BYTES;
      gsize room = (capture->tail_len < TAIL_BYTES) ? TAIL_BYTES - capture->tail_len : 0;
      gsize piece = MIN (len - done, TAIL_BYTES - end);

      memcpy (capture->tail + end, data + done, piece);
      done += piece;

      if (piece <= room)
        capture->tail_len += piece;
      else
        {
          /* Overwrote the oldest bytes. */
          capture->tail_len = TAIL_BYTES;
          capture->tail_start = (capture->tail_start + piece - room) % TAIL_BYTES;
        }
    }
}

static void
capture_append (Capture      *capture,
                const guint8 *data,
                gsize         len)
{
  capture->total += len;

  if (!capture->overflow)
    {
      g_byte_array_append (capture->head, data, len);
      if (capture->head->len <= MAX_OUTPUT_BYTES)
        return;

      capture->overflow = TRUE;
      ring_append (capture, capture->head->data + HEAD_BYTES, capture->head->len - HEAD_BYTES);
      g_byte_array_set_size (capture->head, HEAD_BYTES);
      return;
    }

  ring_append (capture, data, len);
}

/* How many bytes at the end of @data form an incomplete UTF-8 sequence. */
static gsize
incomplete_tail (const guint8 *data,
                 gsize         len)
{
  for (gsize back = 1; back <= MIN (len, 4); back++)
    {
      guint8 c = data[len - back];
      gsize need;

      if ((c & 0xC0) == 0x80)
        continue;
      if (c < 0x80)
        return 0;
      need = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : (c >= 0xC0) ? 2 : 1;
      return need > back ? back : 0;
    }

  return 0;
}

static void
append_valid (GString      *out,
              const guint8 *data,
              gsize         len)
{
  g_autofree char *valid = NULL;

  if (len == 0)
    return;

  valid = g_utf8_make_valid ((const char *) data, len);
  g_string_append (out, valid);
}

/* Appends the output as the model reads it: valid UTF-8, cut in the middle
 * when it is longer than MAX_OUTPUT_BYTES. */
static void
capture_print (Capture *capture,
               GString *out)
{
  g_autofree guint8 *tail = NULL;
  const guint8 *head;
  gsize head_len, tail_skip = 0;
  guint64 omitted;

  if (!capture->overflow)
    {
      append_valid (out, capture->head->data, capture->head->len);
      return;
    }

  head = capture->head->data;
  head_len = capture->head->len;
  tail = g_malloc (TAIL_BYTES);
  for (gsize i = 0; i < capture->tail_len; i++)
    tail[i] = capture->tail[(capture->tail_start + i) % TAIL_BYTES];

  /* Cut at line breaks when one is near, else at least between whole
   * characters. */
  for (gsize i = head_len; i > 0 && head_len - i < LINE_SNAP_BYTES; i--)
    if (head[i - 1] == '\n')
      {
        head_len = i;
        break;
      }
  if (head_len == capture->head->len)
    head_len -= incomplete_tail (head, head_len);

  for (gsize i = 0; i < capture->tail_len && i < LINE_SNAP_BYTES; i++)
    if (tail[i] == '\n')
      {
        tail_skip = i + 1;
        break;
      }
  if (tail_skip == 0)
    while (tail_skip < MIN (capture->tail_len, 3) && (tail[tail_skip] & 0xC0) == 0x80)
      tail_skip++;

  omitted = capture->total - head_len - (capture->tail_len - tail_skip);

  append_valid (out, head, head_len);
  if (out->len > 0 && out->str[out->len - 1] != '\n')
    g_string_append_c (out, '\n');
  g_string_append_printf (out, "[… %" G_GUINT64_FORMAT " bytes omitted …]\n", omitted);
  append_valid (out, tail + tail_skip, capture->tail_len - tail_skip);
}

typedef struct {
  GMainContext *context;
  GPid          pid;
  GInputStream *output;
  /* Cancelled only to give up on a read that will not end. */
  GCancellable *give_up;
  Capture       capture;
  guint8        buffer[READ_CHUNK];

  GSource      *child_source;
  GSource      *timeout_source;
  GSource      *linger_source;
  GSource      *drain_source;

  gboolean      reading;
  gboolean      waiting;
  gboolean      reaped;
  int           wait_status;
  gboolean      timed_out;
  /* Set by cancelled_cb() in the thread that cancels (atomic). */
  gint          cancel_requested;
  gboolean      cancelled;
  gboolean      lingered;   /* background processes were killed at exit */
  gboolean      given_up;   /* the output was still open after the reaper ended */
  GError       *read_error;
} Run;

static void
clear_source (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

static gboolean
drain_cb (gpointer user_data)
{
  Run *run = user_data;

  g_cancellable_cancel (run->give_up);
  clear_source (&run->drain_source);

  /* The reaper ends long before this; should it not, kill its whole
   * group and stop waiting rather than hang the tool. */
  if (run->waiting)
    {
      g_warning ("The reaper of shell process group %d did not end", (int) run->pid);
      kill (-run->pid, SIGKILL);
      clear_source (&run->child_source);
      run->waiting = FALSE;
    }

  return G_SOURCE_REMOVE;
}

/* Kills the command and everything it started: SIGTERM asks the reaper
 * to kill every process below it and exit. The reaper is only reaped by
 * child_exited_cb(), so until then its pid cannot have been reused. */
static void
kill_group (Run *run)
{
  if (run->waiting)
    kill (run->pid, SIGTERM);

  if (run->drain_source == NULL)
    {
      run->drain_source = g_timeout_source_new (DRAIN_MS);
      g_source_set_callback (run->drain_source, drain_cb, run, NULL);
      g_source_attach (run->drain_source, run->context);
    }
}

static gboolean
timeout_cb (gpointer user_data)
{
  Run *run = user_data;

  run->timed_out = TRUE;
  kill_group (run);
  clear_source (&run->timeout_source);

  return G_SOURCE_REMOVE;
}

/* Runs in the thread that cancels, so it only flags the run and wakes the
 * worker's main context, which kills the group. A handler rather than a
 * GCancellableSource: GLib 2.74 leaks a GCancellableSource that is
 * destroyed while g_cancellable_cancel() is still emitting in another
 * thread, whereas g_cancellable_disconnect() waits for that emission. */
static void
cancelled_cb (GCancellable *cancellable,
              gpointer      user_data)
{
  Run *run = user_data;

  g_atomic_int_set (&run->cancel_requested, TRUE);
  g_main_context_wakeup (run->context);
}

/* The reaper killed everything below it, so the output closes at once;
 * only a process that escaped it (one traced by another process, say) can
 * still hold it open. Stop reading then rather than wait for it. */
static gboolean
linger_cb (gpointer user_data)
{
  Run *run = user_data;

  if (run->reading)
    {
      run->given_up = TRUE;
      g_cancellable_cancel (run->give_up);
    }
  clear_source (&run->linger_source);

  return G_SOURCE_REMOVE;
}

static void read_next (Run *run);

static void
read_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Run *run = user_data;
  GError *error = NULL;
  gssize n;

  n = g_input_stream_read_finish (G_INPUT_STREAM (object), result, &error);

  if (n > 0)
    {
      capture_append (&run->capture, run->buffer, n);
      read_next (run);
      return;
    }

  run->reading = FALSE;
  if (n < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (&run->read_error, error);
  else
    g_clear_error (&error);
}

static void
read_next (Run *run)
{
  run->reading = TRUE;
  g_input_stream_read_async (run->output, run->buffer, sizeof run->buffer,
                             G_PRIORITY_DEFAULT, run->give_up, read_cb, run);
}

static void
child_exited_cb (GPid     pid,
                 int      wait_status,
                 gpointer user_data)
{
  Run *run = user_data;

  run->waiting = FALSE;
  run->reaped = TRUE;
  run->wait_status = wait_status;
  g_spawn_close_pid (pid);
  clear_source (&run->child_source);
  clear_source (&run->timeout_source);

  if (run->reading && run->linger_source == NULL && run->drain_source == NULL)
    {
      run->linger_source = g_timeout_source_new (LINGER_MS);
      g_source_set_callback (run->linger_source, linger_cb, run, NULL);
      g_source_attach (run->linger_source, run->context);
    }
}

/* The reaper. Everything from here to child_setup() runs in a child
 * forked from a threaded process, before or instead of exec: only
 * async-signal-safe calls (no malloc, no stdio, no GLib). */

struct reaper_dirent {
  guint64        d_ino;
  gint64         d_off;
  unsigned short d_reclen;
  unsigned char  d_type;
  char           d_name[];
};

/* Sends SIGKILL to every process whose parent is @self, found in /proc.
 * Returns how many were found, not counting @skip. */
static int
reaper_kill_children (pid_t self,
                      pid_t skip)
{
  char buf[4096];
  long n;
  int found = 0;
  int dir = open ("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (dir < 0)
    return 0;

  while ((n = syscall (SYS_getdents64, dir, buf, sizeof buf)) > 0)
    for (long off = 0; off < n;)
      {
        struct reaper_dirent *entry = (struct reaper_dirent *) (buf + off);
        char path[64] = "/proc/";
        char stat[512];
        const char *p;
        pid_t pid = 0, ppid = 0;
        gsize len = 6;
        ssize_t got;
        int fd;

        off += entry->d_reclen;
        for (p = entry->d_name; *p >= '0' && *p <= '9' && len < 40; p++)
          {
            pid = pid * 10 + (*p - '0');
            path[len++] = *p;
          }
        if (*p != '\0' || pid <= 0)
          continue;
        memcpy (path + len, "/stat", 6);

        fd = open (path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
          continue;
        got = read (fd, stat, sizeof stat - 1);
        close (fd);
        if (got <= 0)
          continue;
        stat[got] = '\0';

        /* "PID (COMM) STATE PPID …"; COMM may hold spaces and parentheses. */
        p = NULL;
        for (ssize_t i = got - 1; i >= 0; i--)
          if (stat[i] == ')')
            {
              p = stat + i;
              break;
            }
        if (p == NULL || p[1] != ' ' || p[2] == '\0' || p[3] != ' ')
          continue;
        for (p += 4; *p >= '0' && *p <= '9'; p++)
          ppid = ppid * 10 + (*p - '0');

        if (ppid == self)
          {
            kill (pid, SIGKILL);
            if (pid != skip)
              found++;
          }
      }

  close (dir);
  return found;
}

static void
reaper_close_fds (void)
{
  struct rlimit limit;
  int max_fd = 4096;

  close (STDIN_FILENO);
  close (STDOUT_FILENO);
  close (STDERR_FILENO);
#ifdef SYS_close_range
  if (syscall (SYS_close_range, REPORT_FD + 1, ~0U, 0) == 0)
    return;
#endif
  if (getrlimit (RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    max_fd = (int) MIN (limit.rlim_cur, 65536);
  for (int fd = REPORT_FD + 1; fd < max_fd; fd++)
    close (fd);
}

/* The reaper: waits for the shell, or for SIGTERM from Tally; then kills
 * every process still below it, reaps them, reports on REPORT_FD (the
 * shell's wait status and whether anything else had to be killed) and
 * exits. It holds no descriptor but REPORT_FD, so the output pipe closes
 * when the last process of the command ends, and GLib's exec check sees
 * the shell's exec. */
static void G_GNUC_NORETURN
reaper_main (pid_t shell)
{
  struct sigaction dfl = { 0 };
  sigset_t wait_set, block_set;
  siginfo_t info;
  pid_t self = getpid ();
  int report[2] = { 0, 0 };
  gboolean shell_done = FALSE;
  gboolean stopping = FALSE;

  /* A SIGCHLD that Tally ignores would make waitpid() useless. */
  dfl.sa_handler = SIG_DFL;
  sigaction (SIGCHLD, &dfl, NULL);

  sigemptyset (&wait_set);
  sigaddset (&wait_set, SIGCHLD);
  sigaddset (&wait_set, SIGTERM);
  sigfillset (&block_set);
  sigprocmask (SIG_BLOCK, &block_set, NULL);

  reaper_close_fds ();

  while (!shell_done && !stopping)
    {
      int status;
      pid_t pid;

      while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
        if (pid == shell)
          {
            report[0] = status;
            shell_done = TRUE;
          }
      if (shell_done)
        break;
      if (pid < 0 && errno == ECHILD)
        break;

      if (sigwaitinfo (&wait_set, &info) == SIGTERM)
        stopping = TRUE;
    }

  /* Kill what is left, one level at a time: a killed process's children
   * become the reaper's before waitpid() reports it. */
  for (;;)
    {
      int status;
      pid_t pid;

      if (reaper_kill_children (self, shell_done ? 0 : shell) > 0)
        report[1] = 1;

      pid = waitpid (-1, &status, 0);
      if (pid < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (pid == shell)
        {
          report[0] = status;
          shell_done = TRUE;
        }
    }

  if (write (REPORT_FD, report, sizeof report) < 0)
    _exit (1);
  _exit (0);
}

/* Runs in the child between fork and exec: only async-signal-safe calls.
 * The child becomes the reaper and leads a new process group; it forks
 * the process that returns here and execs the shell. @user_data is
 * Tally's pid. */
static void
child_setup (gpointer user_data)
{
  pid_t tally = (pid_t) GPOINTER_TO_INT (user_data);
  sigset_t all, before;
  pid_t shell;

  /* From here on a signal can only reach the reaper through
   * sigwaitinfo() in reaper_main(): a SIGTERM that came before it waits
   * there would kill the reaper and leave the shell running. The shell
   * gets the mask back. */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &before);

  setpgid (0, 0);
  prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  /* Should Tally die, even by SIGKILL, the reaper gets SIGTERM and stops
   * the command as on a cancel. (The signal comes when the thread that
   * forked the reaper ends; that thread waits in bash_run() until the
   * reaper is reaped.) Had Tally died before this line, the reaper has a
   * new parent already and starts nothing. */
  prctl (PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
  if (getppid () != tally)
    _exit (127);

  shell = fork ();
  if (shell < 0)
    _exit (127);
  if (shell == 0)
    {
      /* A fork clears the death signal: the shell has none. */
      sigprocmask (SIG_SETMASK, &before, NULL);
      close (REPORT_FD);
      return;
    }

  reaper_main (shell);
}

static gboolean
is_allowed_name (const char  *name,
                 char       **extra)
{
  static const char * const allowed[] = {
    "PATH", "HOME", "LANG", "TERM", "TZ", "USER", "SHELL", "TMPDIR",
  };

  for (guint i = 0; i < G_N_ELEMENTS (allowed); i++)
    if (g_str_equal (name, allowed[i]))
      return TRUE;

  if (g_str_has_prefix (name, "LC_"))
    return TRUE;

  return extra != NULL && g_strv_contains ((const char * const *) extra, name);
}

static char **
child_environment (TallyToolBash *self,
                   const char    *workspace)
{
  g_auto(GStrv) current = g_get_environ ();
  g_auto(GStrv) extra = NULL;
  GPtrArray *kept = g_ptr_array_new ();
  char **env;

  g_mutex_lock (&self->lock);
  extra = g_strdupv (self->extra_env);
  g_mutex_unlock (&self->lock);

  for (guint i = 0; current[i] != NULL; i++)
    {
      const char *eq = strchr (current[i], '=');
      g_autofree char *name = eq ? g_strndup (current[i], eq - current[i]) : NULL;

      if (name != NULL && is_allowed_name (name, extra))
        g_ptr_array_add (kept, g_strdup (current[i]));
    }
  g_ptr_array_add (kept, NULL);

  env = (char **) g_ptr_array_free (kept, FALSE);

  return g_environ_setenv (env, "PWD", workspace, TRUE);
}

static char *
bash_run (TallyTool               *tool,
          const TallyToolContext  *context,
          JsonObject              *input,
          GCancellable            *cancellable,
          GError                 **error)
{
  g_autoptr(GMainContext) main_context = NULL;
  g_autoptr(GCancellable) give_up = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) out = NULL;
  g_autofree char *workspace = NULL;
  g_auto(GStrv) env = NULL;
  const char *argv[4] = { "/bin/sh", "-c", NULL, NULL };
  int pipe_fds[2];
  int report_fds[2];
  int report_target = REPORT_FD;
  int report[2];
  gboolean have_report = FALSE;
  GPid pid = 0;
  const char *command;
  gboolean has_timeout;
  guint64 timeout_ms;
  gulong cancelled_handler = 0;
  Run *run;

  if (!tally_tool_input_get_string (input, "command", TRUE, &command, error) ||
      !tally_tool_input_get_uint (input, "timeout_ms", &has_timeout, &timeout_ms, error))
    return NULL;

  {
    g_autofree char *stripped = g_strstrip (g_strdup (command));

    if (stripped[0] == '\0')
      {
        g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                             "`command` must not be empty");
        return NULL;
      }
  }

  if (timeout_ms == 0)
    timeout_ms = DEFAULT_TIMEOUT_MS;
  timeout_ms = MIN (timeout_ms, MAX_TIMEOUT_MS);

  workspace = tally_tool_resolve_inside (context, "command", NULL, error);
  if (workspace == NULL)
    return NULL;

  if (!g_file_test (workspace, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The workspace folder %s does not exist", workspace);
      return NULL;
    }

  env = child_environment (TALLY_TOOL_BASH (tool), workspace);

  /* Standard output and standard error share one pipe, so they arrive
   * interleaved as written. */
  if (!g_unix_open_pipe (pipe_fds, FD_CLOEXEC, &local_error))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot start the command: %s", local_error->message);
      return NULL;
    }

  /* The reaper reports the shell's status on a pipe of its own. */
  if (!g_unix_open_pipe (report_fds, FD_CLOEXEC, &local_error))
    {
      close (pipe_fds[0]);
      close (pipe_fds[1]);
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot start the command: %s", local_error->message);
      return NULL;
    }

  /* g_spawn rather than GSubprocess: GSubprocess reaps its child on its
   * own and forgets its pid, while signalling the reaper needs that pid
   * for as long as it lives. Here the reaper (the process g_spawn starts,
   * see child_setup()) stays unreaped until child_exited_cb(). */
  argv[2] = command;
  if (!g_spawn_async_with_pipes_and_fds (workspace, argv, (const char * const *) env,
                                         G_SPAWN_DO_NOT_REAP_CHILD |
                                         G_SPAWN_STDIN_FROM_DEV_NULL,
                                         child_setup, GINT_TO_POINTER ((int) getpid ()),
                                         -1, pipe_fds[1], pipe_fds[1],
                                         &report_fds[1], &report_target, 1,
                                         &pid, NULL, NULL, NULL, &local_error))
    {
      close (pipe_fds[0]);
      close (pipe_fds[1]);
      close (report_fds[0]);
      close (report_fds[1]);
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot start the command: %s", local_error->message);
      return NULL;
    }
  close (pipe_fds[1]);
  close (report_fds[1]);

  /* The waits below run on a main context of this worker thread's own. */
  main_context = g_main_context_new ();
  give_up = g_cancellable_new ();
  g_main_context_push_thread_default (main_context);

  run = g_new0 (Run, 1);
  run->context = main_context;
  run->pid = pid;
  run->output = g_unix_input_stream_new (pipe_fds[0], TRUE);
  run->give_up = give_up;
  run->capture.head = g_byte_array_new ();
  run->waiting = TRUE;

  run->timeout_source = g_timeout_source_new (timeout_ms);
  g_source_set_callback (run->timeout_source, timeout_cb, run, NULL);
  g_source_attach (run->timeout_source, main_context);

  if (cancellable != NULL)
    cancelled_handler = g_cancellable_connect (cancellable, G_CALLBACK (cancelled_cb), run, NULL);

  run->child_source = g_child_watch_source_new (pid);
  g_source_set_callback (run->child_source, (GSourceFunc) (void (*) (void)) child_exited_cb,
                         run, NULL);
  g_source_attach (run->child_source, main_context);

  read_next (run);

  /* Every pending operation ends: the process is reaped after a kill, and
   * the drain timer gives up on anything that still hangs. */
  while (run->reading || run->waiting)
    {
      if (g_atomic_int_get (&run->cancel_requested) && !run->cancelled)
        {
          run->cancelled = TRUE;
          kill_group (run);
        }
      g_main_context_iteration (main_context, TRUE);
    }

  /* Waits for a cancelled_cb() running in another thread to return. */
  g_cancellable_disconnect (cancellable, cancelled_handler);
  clear_source (&run->child_source);
  clear_source (&run->timeout_source);
  clear_source (&run->linger_source);
  clear_source (&run->drain_source);
  g_clear_object (&run->output);
  g_main_context_pop_thread_default (main_context);

  /* The reaper has exited (or was given up on), so its write end is
   * closed and this read does not block. */
  if (run->reaped)
    {
      ssize_t got;

      do
        got = read (report_fds[0], report, sizeof report);
      while (got < 0 && errno == EINTR);
      have_report = got == (ssize_t) sizeof report;
    }
  close (report_fds[0]);
  if (have_report)
    {
      run->wait_status = report[0];
      run->lingered = report[1] != 0;
    }

  out = g_string_new (NULL);
  capture_print (&run->capture, out);
  if (out->len > 0 && out->str[out->len - 1] != '\n')
    g_string_append_c (out, '\n');

  if (run->cancelled)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                           "The command was cancelled and stopped");
      g_string_free (g_steal_pointer (&out), TRUE);
    }
  else
    {
      if (out->len == 0)
        g_string_append (out, "(no output)\n");

      if (run->read_error != NULL)
        g_string_append_printf (out, "(reading the output failed: %s)\n",
                                run->read_error->message);

      if (run->timed_out)
        {
          g_autofree char *seconds = tally_tool_format_seconds (timeout_ms);

          g_string_append_printf (out, "The command timed out after %s; it was stopped, "
                                  "with every process it started.", seconds);
        }
      else if (!run->reaped || !have_report)
        g_string_append (out, "Exit status: unknown");
      else if (WIFEXITED (run->wait_status))
        g_string_append_printf (out, "Exit status: %d", WEXITSTATUS (run->wait_status));
      else if (WIFSIGNALED (run->wait_status))
        g_string_append_printf (out, "Terminated by signal %d (%s)",
                                WTERMSIG (run->wait_status),
                                g_strsignal (WTERMSIG (run->wait_status)));
      else
        g_string_append (out, "Exit status: unknown");

      if (run->lingered)
        g_string_append (out, "\n(Background processes the command left running were "
                         "stopped when it ended.)");
      if (run->given_up)
        g_string_append (out, "\n(Something outside the command still held its output "
                         "open; reading stopped.)");
    }

  g_byte_array_unref (run->capture.head);
  g_clear_error (&run->read_error);
  g_free (run);

  if (out == NULL)
    return NULL;

  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void tally_tool_bash_finalize (GObject *object);

static void
tally_tool_bash_class_init (TallyToolBashClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_tool_bash_finalize;

  tool_class->name = "Bash";
  tool_class->description =
    "Run a shell command (/bin/sh -c) in the workspace folder and get its "
    "output: standard output and standard error together, then the exit "
    "status. A non-zero exit status is reported, not raised; read it. The "
    "command gets no input (stdin is empty) and runs for at most `timeout_ms` "
    "milliseconds (default 120000, at most 600000), after which it and every "
    "process it started are stopped. Output longer than 30,000 bytes keeps its "
    "beginning and end. API keys and other secrets are not in the environment. "
    "Prefer query_database for the database and Read, Glob, Grep, Write and "
    "Edit for files; use Bash for what they cannot do.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"command\":{\"type\":\"string\","
    "\"description\":\"The shell command to run.\"},"
    "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000,"
    "\"description\":\"Time limit in milliseconds (default 120000).\"}"
    "},"
    "\"required\":[\"command\"]}";
  tool_class->read_only = FALSE;
  tool_class->summary_member = "command";
  tool_class->preview_kind = TALLY_TOOL_PREVIEW_COMMAND;
  tool_class->content_member = "command";
  tool_class->run = bash_run;
}

static void
tally_tool_bash_finalize (GObject *object)
{
  TallyToolBash *self = TALLY_TOOL_BASH (object);

  g_strfreev (self->extra_env);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (tally_tool_bash_parent_class)->finalize (object);
}

static void
tally_tool_bash_init (TallyToolBash *self)
{
  g_mutex_init (&self->lock);
}

/**
 * tally_tool_bash_set_extra_env:
 * @self: the `Bash` tool
 * @names: (nullable) (array zero-terminated=1): names of environment
 *   variables that commands get besides the allow-list, or %NULL for none
 *
 * Sets which further variables of Tally's environment reach the commands
 * (the `bash-extra-env` setting, `tally-cli --pass-env`). Names must be
 * exact; names that are not valid variable names, and
 * `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN`, are ignored. Takes
 * effect for the next command; safe to call while commands run.
 */
void
tally_tool_bash_set_extra_env (TallyToolBash      *self,
                               const char * const *names)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  g_return_if_fail (TALLY_IS_TOOL_BASH (self));

  for (guint i = 0; names != NULL && names[i] != NULL; i++)
    {
      const char *name = names[i];
      gboolean valid = name[0] != '\0' && !g_ascii_isdigit (name[0]);

      for (const char *p = name; valid && *p != '\0'; p++)
        valid = g_ascii_isalnum (*p) || *p == '_';
      if (!valid || g_str_equal (name, "ANTHROPIC_API_KEY") ||
          g_str_equal (name, "ANTHROPIC_AUTH_TOKEN"))
        continue;
      g_strv_builder_add (builder, name);
    }

  g_mutex_lock (&self->lock);
  g_strfreev (self->extra_env);
  self->extra_env = g_strv_builder_end (builder);
  g_mutex_unlock (&self->lock);
}

/**
 * tally_tool_bash_new:
 *
 * Creates the `Bash` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_bash_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_BASH, NULL);
}
