/* SPDX-License-Identifier: GPL-3.0-or-later */

/* kill -9 soak (issue 10, "Keep them closed"): `tally-cli --json` is
 * killed with SIGKILL at random points of scripted turns, a hundred times,
 * on one store whose sessions are resumed again and again:
 *
 * - while a reply streams (a dripped stream, killed after its first delta),
 * - while the store's writer commits (a fast flood of small deltas),
 * - while a tool runs (Bash `sleep`, approved with `y` on stdin, or a
 *   query_database statement that runs until stopped),
 * - while an approval card waits (stdin held open, no answer),
 * - at any moment from the start (opening the store, repairing the turn a
 *   previous kill left open, sending the request).
 *
 * After each kill: the session's writer lock died with the process (this
 * process takes it at once; while a card waits it is refused, so the lock
 * is real); `--list`, `--replay ID --json` and `--resume ID "go on"` exit
 * 0; the replayed events are numbered 1..n without a gap; every event
 * replayed after an earlier kill is still replayed, byte for byte (nothing
 * committed is lost); every stored event the killed process printed is
 * stored as printed; and the resumed request passes the second mock's
 * history check (roles, tool_use/tool_result pairing), after which every
 * turn of the log is closed by a `turn_finished`.
 *
 * Reproducible: the random seed is printed; TALLY_SOAK_SEED=N replays a
 * run, TALLY_SOAK_KILLS=N changes the number of kills. 100 kills in the
 * plain build; 25 under AddressSanitizer (detected with
 * __SANITIZE_ADDRESS__ or __has_feature(address_sanitizer)), where every
 * tally-cli start is several times slower. */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tally-store.h"
#include "tally-test-mock.h"

#if defined(__SANITIZE_ADDRESS__)
# define SOAK_UNDER_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define SOAK_UNDER_ASAN 1
# endif
#endif
#ifndef SOAK_UNDER_ASAN
# define SOAK_UNDER_ASAN 0
#endif

#define DEFAULT_SEED 20251201
#define DEFAULT_KILLS (SOAK_UNDER_ASAN ? 25 : 100)

/* A victim that outlives every trigger is killed after this long anyway,
 * and the test then fails because its trigger never came. */
#define SAFETY_KILL_MS 60000

typedef enum {
  KIND_STREAM,   /* killed while a reply streams */
  KIND_FLOOD,    /* killed while many small events are committed */
  KIND_BASH,     /* killed while an approved `sleep` runs */
  KIND_QUERY,    /* killed while query_database runs */
  KIND_CARD,     /* killed while an approval card waits */
  KIND_START,    /* killed at any moment from the start */
  N_KINDS
} Kind;

static const char * const kind_names[N_KINDS] = {
  "stream", "flood", "bash", "query", "card", "start",
};

/* The event line after which the kill is scheduled, and the longest
 * random delay after it. */
static const struct {
  const char *trigger;   /* NULL: from the start */
  guint       max_delay_ms;
} kind_kill[N_KINDS] = {
  { "\"type\":\"text_delta\"", 400 },
  { "\"type\":\"turn_started\"", 700 },
  { "\"type\":\"approval_resolved\"", 400 },
  { "\"type\":\"approval_resolved\"", 400 },
  { "\"type\":\"approval_request\"", 250 },
  { NULL, 600 },
};

typedef struct {
  char      *id;
  GPtrArray *replay;   /* char*: the event lines of the last replay */
} Session;

static void
session_free (Session *session)
{
  g_free (session->id);
  g_ptr_array_unref (session->replay);
  g_free (session);
}

typedef struct {
  char          *dir;
  char          *store;
  char          *workspace;
  char          *db;
  TallyTestMock *victim_mock;   /* scripted turns for the killed runs */
  TallyTestMock *resume_mock;   /* plain answers for the resumes */
  GPtrArray     *sessions;      /* Session* */
  GRand         *rand;
  guint          resumes;       /* requests the resume mock has answered */
} Soak;

/* A killed run. */
typedef struct {
  Soak             *soak;
  Kind              kind;
  const char       *session_id;   /* for the lock check; NULL if new */
  GMainLoop        *loop;
  GSubprocess      *process;
  GDataInputStream *lines;
  GOutputStream    *stdin_pipe;
  GPtrArray        *printed;      /* char*: lines read, in order */
  guint             delay_ms;
  guint             kill_id;
  guint             safety_id;
  gboolean          triggered;
  gboolean          kill_sent;
  gboolean          lock_refused; /* the lock check while a card waits */
} Victim;

/* {{{ Helpers */

static GSubprocessLauncher *
launcher_new (GSubprocessFlags flags)
{
  GSubprocessLauncher *launcher = g_subprocess_launcher_new (flags);

  g_subprocess_launcher_setenv (launcher, "ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "ANTHROPIC_BASE_URL");
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  return launcher;
}

/* Runs tally-cli to its end; returns its exit status, with its stdout in
 * @out and its stderr in @err (both may be NULL). */
static int
cli (char       **out,
     char       **err,
     const char  *first_arg,
     ...)
{
  g_autoptr(GSubprocessLauncher) launcher =
    launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *stdout_text = NULL;
  g_autofree char *stderr_text = NULL;
  va_list args;

  g_ptr_array_add (argv, (gpointer) TALLY_TEST_CLI);
  va_start (args, first_arg);
  for (const char *arg = first_arg; arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &stdout_text, &stderr_text, &error);
  g_assert_no_error (error);
  if (!g_subprocess_get_if_exited (process))
    g_error ("tally-cli %s ended by signal %d; stderr:\n%s", first_arg,
             g_subprocess_get_term_sig (process), stderr_text);

  if (out != NULL)
    *out = g_steal_pointer (&stdout_text);
  if (err != NULL)
    *err = g_steal_pointer (&stderr_text);
  return g_subprocess_get_exit_status (process);
}

static JsonObject *
parse_event (const char *line)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, line, -1, &error))
    g_error ("not a JSON event line (%s): %s", error->message, line);
  root = json_parser_get_root (parser);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  return json_object_ref (json_node_get_object (root));
}

static GPtrArray *
split_lines (const char *text)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) parts = g_strsplit (text, "\n", -1);

  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0')
      g_ptr_array_add (lines, g_strdup (parts[i]));
  return lines;
}

static Session *
find_session (Soak       *soak,
              const char *id)
{
  for (guint i = 0; i < soak->sessions->len; i++)
    {
      Session *session = g_ptr_array_index (soak->sessions, i);

      if (g_str_equal (session->id, id))
        return session;
    }
  return NULL;
}

/* }}} */
/* {{{ The scripts */

/* The killed runs' mock: for each kill, one response matched by the
 * run's own tag ("[soak 17 stream]"), plus plain answers for a request
 * after a tool result. */
static char *
victim_scenario (guint n_kills)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GString) long_text = g_string_new (NULL);
  g_autoptr(GString) flood_text = g_string_new (NULL);

  for (guint i = 0; i < 12; i++)
    g_string_append (long_text, "Sales rose in every café, most of all in York, where the new oat latte sold well. ");
  for (guint i = 0; i < 50; i++)
    g_string_append (flood_text, "Leeds and York café takings, week by week, are within a few percent. ");

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "responses");
  json_builder_begin_array (b);

  /* A few more than the kills: a run killed before it sent its request
   * leaves its response unused, and the loop may try again. */
  for (guint i = 0; i < n_kills * 2 + 10; i++)
    for (guint k = 0; k < N_KINDS; k++)
      {
        g_autofree char *tag = g_strdup_printf ("[soak %u %s]", i, kind_names[k]);

        json_builder_begin_object (b);
        json_builder_set_member_name (b, "match");
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "last_user_text_contains");
        json_builder_add_string_value (b, tag);
        json_builder_end_object (b);

        json_builder_set_member_name (b, "message");
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "content");
        json_builder_begin_array (b);
        json_builder_begin_object (b);
        switch ((Kind) k)
          {
          case KIND_STREAM:
          case KIND_START:
            json_builder_set_member_name (b, "type");
            json_builder_add_string_value (b, "text");
            json_builder_set_member_name (b, "text");
            json_builder_add_string_value (b, long_text->str);
            break;

          case KIND_FLOOD:
            json_builder_set_member_name (b, "type");
            json_builder_add_string_value (b, "text");
            json_builder_set_member_name (b, "text");
            json_builder_add_string_value (b, flood_text->str);
            break;

          case KIND_BASH:
          case KIND_CARD:
            json_builder_set_member_name (b, "type");
            json_builder_add_string_value (b, "tool_use");
            json_builder_set_member_name (b, "name");
            json_builder_add_string_value (b, "Bash");
            json_builder_set_member_name (b, "input");
            json_builder_begin_object (b);
            json_builder_set_member_name (b, "command");
            json_builder_add_string_value (b, k == KIND_BASH ? "sleep 4" : "touch soak-card");
            json_builder_end_object (b);
            break;

          case KIND_QUERY:
            json_builder_set_member_name (b, "type");
            json_builder_add_string_value (b, "tool_use");
            json_builder_set_member_name (b, "name");
            json_builder_add_string_value (b, "query_database");
            json_builder_set_member_name (b, "input");
            json_builder_begin_object (b);
            json_builder_set_member_name (b, "sql");
            json_builder_add_string_value (b, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                              "WHERE x < 2000000000) SELECT count(*) FROM c");
            json_builder_end_object (b);
            break;

          case N_KINDS:
          default:
            g_assert_not_reached ();
          }
        json_builder_end_object (b);
        json_builder_end_array (b);

        if (k == KIND_STREAM || k == KIND_START || k == KIND_FLOOD)
          {
            json_builder_set_member_name (b, "chunk");
            json_builder_add_int_value (b, k == KIND_FLOOD ? 2 : 4);
          }
        json_builder_end_object (b);

        /* The stream drips for seconds; the flood sends ~1700 small
         * deltas in about a second, so the writer commits all along. */
        if (k == KIND_STREAM || k == KIND_START)
          {
            json_builder_set_member_name (b, "drip_ms");
            json_builder_add_int_value (b, 25);
            json_builder_set_member_name (b, "drip_bytes");
            json_builder_add_int_value (b, 80);
          }
        else if (k == KIND_FLOOD)
          {
            json_builder_set_member_name (b, "drip_ms");
            json_builder_add_int_value (b, 8);
            json_builder_set_member_name (b, "drip_bytes");
            json_builder_add_int_value (b, 2000);
          }
        json_builder_end_object (b);
      }

  for (guint i = 0; i < n_kills * 2 + 10; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "message");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "content");
      json_builder_begin_array (b);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "text");
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, "Done with the tool.");
      json_builder_end_object (b);
      json_builder_end_array (b);
      json_builder_end_object (b);
      json_builder_end_object (b);
    }

  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* The resumes' mock: plain answers, in order, each request's history
 * checked. */
static char *
resume_scenario (guint n_kills)
{
  GString *scenario = g_string_new ("{\"check_history\":true,\"responses\":[");

  for (guint i = 0; i < n_kills * 2 + 10; i++)
    g_string_append_printf (scenario, "%s{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Going on.\"}],"
                            "\"stop_reason\":\"end_turn\"}}", i > 0 ? "," : "");
  g_string_append (scenario, "]}");
  return g_string_free (scenario, FALSE);
}

/* }}} */
/* {{{ The killed run */

static void victim_read_cb (GObject *object, GAsyncResult *result, gpointer user_data);

static void
victim_read_next (Victim *v)
{
  g_data_input_stream_read_line_async (v->lines, G_PRIORITY_DEFAULT, NULL, victim_read_cb, v);
}

/* Whether another store object is refused the session's lock now. */
static gboolean
lock_is_refused (Soak       *soak,
                 const char *session_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (soak->store, &error);
  gboolean locked;

  g_assert_no_error (error);
  locked = tally_store_lock_session (store, session_id, &error);
  if (locked)
    {
      tally_store_unlock_session (store, session_id);
      return FALSE;
    }
  g_assert_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED);
  return TRUE;
}

static gboolean
victim_kill_cb (gpointer user_data)
{
  Victim *v = user_data;

  v->kill_id = 0;
  if (v->kind == KIND_CARD && v->session_id != NULL)
    v->lock_refused = lock_is_refused (v->soak, v->session_id);
  g_subprocess_send_signal (v->process, SIGKILL);
  v->kill_sent = TRUE;
  return G_SOURCE_REMOVE;
}

static gboolean
victim_safety_cb (gpointer user_data)
{
  Victim *v = user_data;

  v->safety_id = 0;
  if (!v->kill_sent)
    {
      g_subprocess_send_signal (v->process, SIGKILL);
      v->kill_sent = TRUE;
    }
  return G_SOURCE_REMOVE;
}

static void
victim_trigger (Victim *v)
{
  v->triggered = TRUE;
  v->kill_id = g_timeout_add (v->delay_ms, victim_kill_cb, v);
}

static void
victim_read_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  Victim *v = user_data;
  g_autoptr(GError) error = NULL;
  char *line;

  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result, NULL, &error);
  if (line == NULL)
    {
      g_main_loop_quit (v->loop);
      return;
    }
  g_ptr_array_add (v->printed, line);

  /* An approval card for the `sleep` is allowed once. */
  if (v->kind == KIND_BASH && strstr (line, "\"type\":\"approval_request\"") != NULL)
    {
      g_output_stream_write_all (v->stdin_pipe, "y\n", 2, NULL, NULL, &error);
      g_assert_no_error (error);
    }

  if (!v->triggered && kind_kill[v->kind].trigger != NULL &&
      strstr (line, kind_kill[v->kind].trigger) != NULL)
    victim_trigger (v);

  victim_read_next (v);
}

/* Starts tally-cli on the victim mock (resuming @session when given) and
 * kills it; returns the lines it printed. Returns whether it was killed
 * by the SIGKILL (it may have ended first). */
static gboolean
run_victim (Soak       *soak,
            guint       round,
            Kind        kind,
            Session    *session,
            GPtrArray **printed)
{
  g_autoptr(GSubprocessLauncher) launcher =
    launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                  G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *prompt = g_strdup_printf ("[soak %u %s] How did the cafés do this week?",
                                             round, kind_names[kind]);
  Victim v = { 0 };
  gboolean killed;

  v.soak = soak;
  v.kind = kind;
  v.session_id = session != NULL ? session->id : NULL;
  v.loop = g_main_loop_new (NULL, FALSE);
  v.printed = g_ptr_array_new_with_free_func (g_free);
  v.delay_ms = g_rand_int_range (soak->rand, 0, (gint32) kind_kill[kind].max_delay_ms + 1);

  g_ptr_array_add (argv, (gpointer) TALLY_TEST_CLI);
  g_ptr_array_add (argv, (gpointer) "--base-url");
  g_ptr_array_add (argv, (gpointer) tally_test_mock_get_base_url (soak->victim_mock));
  g_ptr_array_add (argv, (gpointer) "--store");
  g_ptr_array_add (argv, soak->store);
  g_ptr_array_add (argv, (gpointer) "--db");
  g_ptr_array_add (argv, soak->db);
  g_ptr_array_add (argv, (gpointer) "--workspace");
  g_ptr_array_add (argv, soak->workspace);
  g_ptr_array_add (argv, (gpointer) "--json");
  if (session != NULL)
    {
      g_ptr_array_add (argv, (gpointer) "--resume");
      g_ptr_array_add (argv, session->id);
    }
  g_ptr_array_add (argv, prompt);
  g_ptr_array_add (argv, NULL);

  v.process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  v.stdin_pipe = g_subprocess_get_stdin_pipe (v.process);
  v.lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (v.process));
  victim_read_next (&v);
  if (kind_kill[kind].trigger == NULL)
    victim_trigger (&v);
  v.safety_id = g_timeout_add (SAFETY_KILL_MS, victim_safety_cb, &v);

  g_main_loop_run (v.loop);
  g_subprocess_wait (v.process, NULL, &error);
  g_assert_no_error (error);

  g_clear_handle_id (&v.kill_id, g_source_remove);
  g_clear_handle_id (&v.safety_id, g_source_remove);

  /* Every kind has a point to be killed at, reached on every run. */
  if (!v.triggered)
    g_error ("round %u (%s): the run ended or hung without reaching its kill point; "
             "it printed %u lines", round, kind_names[kind], v.printed->len);
  killed = g_subprocess_get_if_signaled (v.process) &&
           g_subprocess_get_term_sig (v.process) == SIGKILL;
  if (killed && kind == KIND_CARD && v.session_id != NULL)
    g_assert_true (v.lock_refused);

  *printed = g_steal_pointer (&v.printed);
  g_main_loop_unref (v.loop);
  g_object_unref (v.lines);
  g_object_unref (v.process);
  return killed;
}

/* }}} */
/* {{{ The checks */

/* The ids `--list` prints. */
static GPtrArray *
list_ids (Soak *soak)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  GPtrArray *ids = g_ptr_array_new_with_free_func (g_free);
  int status;

  status = cli (&out, &err, "--store", soak->store, "--list", NULL);
  if (status != 0)
    g_error ("tally-cli --list exited %d: %s", status, err);
  lines = split_lines (out);
  for (guint i = 0; i < lines->len; i++)
    {
      g_auto(GStrv) fields = g_strsplit (g_ptr_array_index (lines, i), "\t", -1);

      g_assert_cmpuint (g_strv_length (fields), ==, 4);
      g_ptr_array_add (ids, g_strdup (fields[0]));
    }
  return ids;
}

/* `--replay ID --json`: exit 0, events numbered 1..n, all of @id. */
static GPtrArray *
replay (Soak       *soak,
        const char *id)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  GPtrArray *lines;
  int status;

  status = cli (&out, &err, "--store", soak->store, "--replay", id, "--json", NULL);
  if (status != 0)
    g_error ("tally-cli --replay %s exited %d: %s", id, status, err);
  lines = split_lines (out);
  g_assert_cmpuint (lines->len, >, 0);
  for (guint i = 0; i < lines->len; i++)
    {
      g_autoptr(JsonObject) event = parse_event (g_ptr_array_index (lines, i));

      if (json_object_get_int_member (event, "seq") != (gint64) i + 1)
        g_error ("session %s: replayed event %u has seq %" G_GINT64_FORMAT ": %s", id, i + 1,
                 json_object_get_int_member (event, "seq"), (char *) g_ptr_array_index (lines, i));
      g_assert_cmpstr (json_object_get_string_member (event, "session_id"), ==, id);
    }
  return lines;
}

/* Every line of @before is still the same line of @after. */
static void
assert_prefix (const char *id,
               const char *what,
               GPtrArray  *before,
               GPtrArray  *after)
{
  if (after->len < before->len)
    g_error ("session %s: %s: %u events replayed, %u before (committed events lost)",
             id, what, after->len, before->len);
  for (guint i = 0; i < before->len; i++)
    if (!g_str_equal (g_ptr_array_index (before, i), g_ptr_array_index (after, i)))
      g_error ("session %s: %s: event %u changed:\nbefore %s\nafter  %s", id, what, i + 1,
               (char *) g_ptr_array_index (before, i), (char *) g_ptr_array_index (after, i));
}

/* Every stored event the killed run printed is stored as it was printed. */
static void
assert_stored_as_printed (const char *id,
                          GPtrArray  *stored,
                          GPtrArray  *printed)
{
  for (guint i = 0; i < printed->len; i++)
    {
      const char *line = g_ptr_array_index (printed, i);
      g_autoptr(JsonObject) event = parse_event (line);
      gint64 seq = json_object_get_int_member (event, "seq");

      if (g_strcmp0 (json_object_get_string_member (event, "session_id"), id) != 0)
        continue;
      if (seq >= 1 && seq <= (gint64) stored->len)
        g_assert_cmpstr (g_ptr_array_index (stored, seq - 1), ==, line);
    }
}

/* Every turn_started of the log is followed by its turn_finished. */
static void
assert_turns_closed (const char *id,
                     GPtrArray  *lines)
{
  gboolean open = FALSE;

  for (guint i = 0; i < lines->len; i++)
    {
      g_autoptr(JsonObject) event = parse_event (g_ptr_array_index (lines, i));
      const char *type = json_object_get_string_member (event, "type");

      if (g_str_equal (type, "turn_started"))
        {
          if (open)
            g_error ("session %s: turn_started at seq %u while a turn is open", id, i + 1);
          open = TRUE;
        }
      else if (g_str_equal (type, "turn_finished"))
        open = FALSE;
    }
  if (open)
    g_error ("session %s: the last turn is not closed after --resume", id);
}

/* `--resume ID "go on"` on the resume mock: exit 0, its request accepted
 * (history checked) and the turn done. */
static void
resume (Soak       *soak,
        const char *id)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  g_autoptr(JsonArray) requests = NULL;
  g_autoptr(JsonObject) last = NULL;
  JsonObject *request;
  int status;

  status = cli (&out, &err, "--base-url", tally_test_mock_get_base_url (soak->resume_mock),
                "--store", soak->store, "--resume", id, "--json", "go on", NULL);
  if (status != 0)
    g_error ("tally-cli --resume %s \"go on\" exited %d: %s", id, status, err);

  lines = split_lines (out);
  g_assert_cmpuint (lines->len, >, 0);
  last = parse_event (g_ptr_array_index (lines, lines->len - 1));
  g_assert_cmpstr (json_object_get_string_member (last, "type"), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (last, "status"), ==, "done");

  requests = tally_test_mock_dup_requests (soak->resume_mock);
  g_assert_cmpuint (json_array_get_length (requests), ==, soak->resumes + 1);
  request = json_array_get_object_element (requests, soak->resumes);
  g_assert_cmpint (json_object_get_int_member (request, "status"), ==, 200);
  soak->resumes++;
}

/* }}} */

static guint
env_uint (const char *name,
          guint       fallback)
{
  const char *value = g_getenv (name);
  guint64 n;

  if (value == NULL || *value == '\0')
    return fallback;
  if (!g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT32, &n, NULL))
    g_error ("%s=%s: expected a number", name, value);
  return (guint) n;
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
test_kill_soak (void)
{
  guint seed = env_uint ("TALLY_SOAK_SEED", DEFAULT_SEED);
  guint n_kills = env_uint ("TALLY_SOAK_KILLS", DEFAULT_KILLS);
  g_autoptr(GError) error = NULL;
  g_autofree char *victim_json = victim_scenario (n_kills);
  g_autofree char *resume_json = resume_scenario (n_kills);
  guint kills = 0;
  guint by_kind[N_KINDS] = { 0 };
  gint64 started = g_get_monotonic_time ();
  Soak soak = { 0 };
  guint round;

  g_test_message ("kill -9 soak: seed %u (TALLY_SOAK_SEED), %u kills (TALLY_SOAK_KILLS)%s",
                  seed, n_kills, SOAK_UNDER_ASAN ? ", AddressSanitizer build" : "");
  g_printerr ("test-soak: seed %u, %u kills\n", seed, n_kills);

  soak.dir = g_dir_make_tmp ("tally-soak-XXXXXX", &error);
  g_assert_no_error (error);
  soak.store = g_build_filename (soak.dir, "tally.db", NULL);
  soak.workspace = g_build_filename (soak.dir, "workspace", NULL);
  g_assert_cmpint (g_mkdir (soak.workspace, 0700), ==, 0);
  soak.db = g_build_filename (tally_test_data_dir (), "data", "chinook.sqlite", NULL);
  soak.sessions = g_ptr_array_new_with_free_func ((GDestroyNotify) session_free);
  soak.rand = g_rand_new_with_seed (seed);
  soak.victim_mock = tally_test_mock_start (victim_json, &error);
  g_assert_no_error (error);
  soak.resume_mock = tally_test_mock_start (resume_json, &error);
  g_assert_no_error (error);

  for (round = 0; kills < n_kills; round++)
    {
      Kind kind = (Kind) g_rand_int_range (soak.rand, 0, N_KINDS);
      Session *session = NULL;
      g_autoptr(GPtrArray) printed = NULL;
      g_autoptr(GPtrArray) ids = NULL;
      g_autoptr(GPtrArray) after_kill = NULL;
      g_autoptr(GPtrArray) after_resume = NULL;
      gboolean killed;

      g_assert_cmpuint (round, <, n_kills * 2 + 10);

      /* Mostly resume a session that earlier kills left behind. */
      if (soak.sessions->len > 0 && g_rand_int_range (soak.rand, 0, 10) < 7)
        session = g_ptr_array_index (soak.sessions,
                                     g_rand_int_range (soak.rand, 0, (gint32) soak.sessions->len));

      killed = run_victim (&soak, round, kind, session, &printed);
      if (killed)
        {
          kills++;
          by_kind[kind]++;
        }

      /* A new session shows up in --list once it has committed anything;
       * at most one can have been made. */
      ids = list_ids (&soak);
      for (guint i = 0; i < soak.sessions->len; i++)
        {
          Session *known = g_ptr_array_index (soak.sessions, i);

          if (!g_ptr_array_find_with_equal_func (ids, known->id, g_str_equal, NULL))
            g_error ("round %u: session %s is no longer listed", round, known->id);
        }
      if (session == NULL)
        {
          for (guint i = 0; i < ids->len; i++)
            if (find_session (&soak, g_ptr_array_index (ids, i)) == NULL)
              {
                g_assert_null (session);
                session = g_new0 (Session, 1);
                session->id = g_strdup (g_ptr_array_index (ids, i));
                session->replay = g_ptr_array_new_with_free_func (g_free);
                g_ptr_array_add (soak.sessions, session);
              }
          if (session == NULL)
            continue;  /* killed before its first commit: nothing to check */
        }

      /* The lock died with the process. */
      g_assert_false (lock_is_refused (&soak, session->id));

      after_kill = replay (&soak, session->id);
      assert_prefix (session->id, "after the kill", session->replay, after_kill);
      assert_stored_as_printed (session->id, after_kill, printed);

      resume (&soak, session->id);
      after_resume = replay (&soak, session->id);
      assert_prefix (session->id, "after --resume", after_kill, after_resume);
      assert_turns_closed (session->id, after_resume);

      g_ptr_array_unref (session->replay);
      session->replay = g_steal_pointer (&after_resume);
    }

  g_test_message ("%u kills in %u rounds over %u sessions (stream %u, flood %u, bash %u, query %u, card %u, "
                  "start %u) in %.1f s", kills, round, soak.sessions->len,
                  by_kind[KIND_STREAM], by_kind[KIND_FLOOD], by_kind[KIND_BASH], by_kind[KIND_QUERY],
                  by_kind[KIND_CARD], by_kind[KIND_START], (g_get_monotonic_time () - started) / 1e6);

  g_clear_pointer (&soak.victim_mock, tally_test_mock_free);
  g_clear_pointer (&soak.resume_mock, tally_test_mock_free);
  g_ptr_array_unref (soak.sessions);
  g_rand_free (soak.rand);
  remove_tree (soak.dir);
  g_free (soak.dir);
  g_free (soak.store);
  g_free (soak.workspace);
  g_free (soak.db);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/soak/kill-9", test_kill_soak);

  return g_test_run ();
}
