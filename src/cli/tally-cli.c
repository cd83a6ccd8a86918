/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally-cli: the Tally core in a terminal, for scripting and tests.
 *
 * The contract (flags, event lines, exit status) is docs/architecture.md
 * §11.2 (events: §4); tools outside the project rely on it, so it changes only
 * by extension. */

#define G_LOG_DOMAIN "tally-cli"

#include "config.h"

#include <gio/gunixinputstream.h>
#include <glib/gi18n.h>
#include <errno.h>
#include <glib-unix.h>
#include <locale.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tally-agent.h"
#include "tally-api-error.h"
#include "tally-client.h"
#include "tally-data-import.h"
#include "tally-event.h"
#include "tally-export.h"
#include "tally-format.h"
#include "tally-json.h"
#include "tally-ledger.h"
#include "tally-model-table.h"
#include "tally-pg-source.h"
#include "tally-pricing.h"
#include "tally-questions.h"
#include "tally-receipt.h"
#include "tally-report.h"
#include "tally-secret-env.h"
#include "tally-sensitive-columns.h"
#include "tally-session.h"
#include "tally-session-load.h"
#include "tally-store.h"
#include "tally-tool-bash.h"
#include "tally-tool-query-database.h"
#include "tally-tool-registry.h"

#include "tally-cli-private.h"

/* Options */

static char *opt_base_url;
static char *opt_model;
static char *opt_mode;
static gboolean opt_thinking;
static gint64 opt_thinking_budget = -1;
static char *opt_db;
static char **opt_data;
static char *opt_workspace;
static char *opt_store;
static char *opt_resume;
static char *opt_replay;
static char *opt_ledger;
static char **opt_sensitive;
static gboolean opt_json;
static gboolean opt_list;
static char *opt_search;
static char *opt_export;
static char *opt_format;
static char *opt_output;
static char *opt_report;
static gboolean opt_include_thinking;
static char *opt_salvage;
static gboolean opt_list_models;
static gboolean opt_notes;
static char *opt_edit_notes;
static gboolean opt_version;
static double opt_idle_timeout = NAN;
static char **opt_pass_env;
static double opt_query_timeout = NAN;
static double opt_max_cost = NAN;

/* --max-cost USD: a number from 0 to 1,000,000. Parsed here because
 * GOption's double takes "nan", which the spend cap would read as no cap. */
static gboolean
parse_max_cost_cb (const char  *option_name,
                   const char  *value,
                   gpointer     data,
                   GError     **error)
{
  char *end = NULL;
  double amount = g_ascii_strtod (value, &end);

  /* NaN fails both comparisons */
  if (end == value || *end != '\0' || !(amount >= 0 && amount <= 1e6))
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           _("--max-cost takes an amount in US dollars from 0 to 1000000"));
      return FALSE;
    }
  opt_max_cost = amount;
  return TRUE;
}

static gboolean
parse_thinking_cb (const char  *option_name,
                   const char  *value,
                   gpointer     data,
                   GError     **error)
{
  char *end = NULL;
  gint64 budget;

  opt_thinking = TRUE;
  if (value == NULL)
    return TRUE;

  budget = g_ascii_strtoll (value, &end, 10);
  if (end == value || *end != '\0' || budget < 1024)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--thinking takes a budget of at least 1024 tokens, not “%s”"), value);
      return FALSE;
    }

  opt_thinking_budget = budget;
  return TRUE;
}

static gboolean
thinking_default_cb (const char  *option_name,
                     const char  *value,
                     gpointer     data,
                     GError     **error)
{
  opt_thinking = TRUE;
  return TRUE;
}

/* `--thinking[=BUDGET]` follows the GNU rule for optional arguments: the
 * budget is taken only after `=`. GOption would take the next word as the
 * value of a bare `--thinking` (so `--thinking "Which album…"` ate the
 * prompt); a bare `--thinking` before the `--` terminator is therefore
 * renamed to the hidden `--thinking-default` first. Returns a new argument
 * vector (transfer full). */
static char **
rename_bare_thinking (int    argc,
                      char **argv)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  gboolean options_ended = FALSE;

  for (int i = 0; i < argc; i++)
    {
      if (!options_ended && g_str_equal (argv[i], "--"))
        options_ended = TRUE;
      if (!options_ended && i > 0 && g_str_equal (argv[i], "--thinking"))
        g_strv_builder_add (builder, "--thinking-default");
      else
        g_strv_builder_add (builder, argv[i]);
    }

  return g_strv_builder_end (builder);
}

static const GOptionEntry entries[] = {
  { "base-url", 0, 0, G_OPTION_ARG_STRING, &opt_base_url,
    N_("Messages API origin without /v1 (default: $ANTHROPIC_BASE_URL, else the public API)"), N_("URL") },
  { "model", 0, 0, G_OPTION_ARG_STRING, &opt_model,
    N_("Model id or alias (default: claude-sonnet-5)"), N_("MODEL") },
  { "mode", 0, 0, G_OPTION_ARG_STRING, &opt_mode,
    N_("Permission mode: ask, plan or auto (default: ask)"), N_("MODE") },
  { "thinking", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, parse_thinking_cb,
    N_("Let the model think, with an optional budget in tokens (default 8000)"), N_("BUDGET") },
  { "thinking-default", 0, G_OPTION_FLAG_HIDDEN | G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK,
    thinking_default_cb, NULL, NULL },
  { "db", 0, 0, G_OPTION_ARG_FILENAME, &opt_db,
    N_("SQLite database, CSV, TSV or JSON Lines file or folder of them, or PostgreSQL connection string or URI, "
       "to analyse (default: the Beanline sample)"), N_("PATH") },
  { "data", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_data,
    N_("Import a CSV, TSV or JSON Lines file, or a folder of them, as a table of the workspace's "
       ".tally/data.db and analyse that (repeatable)"), N_("FILE") },
  { "workspace", 0, 0, G_OPTION_ARG_FILENAME, &opt_workspace,
    N_("Workspace folder for the file tools (default: the current folder)"), N_("DIR") },
  { "store", 0, 0, G_OPTION_ARG_FILENAME, &opt_store,
    N_("Session store file (default: under the user data folder)"), N_("PATH") },
  { "resume", 0, 0, G_OPTION_ARG_STRING, &opt_resume,
    N_("Continue a saved session"), N_("SESSION_ID") },
  { "replay", 0, 0, G_OPTION_ARG_STRING, &opt_replay,
    N_("Print a saved session's events (offline)"), N_("SESSION_ID") },
  { "ledger", 0, 0, G_OPTION_ARG_STRING, &opt_ledger,
    N_("Print what a saved session sent to the API, per turn and request (offline)"), N_("SESSION_ID") },
  { "sensitive", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_sensitive,
    N_("Never send the values of this column to the model, for this run, besides the "
       "database's own list (repeatable)"), N_("TABLE.COLUMN") },
  { "list", 0, 0, G_OPTION_ARG_NONE, &opt_list,
    N_("List saved sessions"), NULL },
  { "search", 0, 0, G_OPTION_ARG_STRING, &opt_search,
    N_("Search saved sessions' titles and transcripts"), N_("TEXT") },
  { "export", 0, 0, G_OPTION_ARG_STRING, &opt_export,
    N_("Export a saved session (offline; see --format and --output)"), N_("SESSION_ID") },
  { "report", 0, 0, G_OPTION_ARG_FILENAME, &opt_report,
    N_("Render a Markdown report, its charts included, as HTML or PDF (needs --format and --output)"), N_("FILE.md") },
  { "format", 0, 0, G_OPTION_ARG_STRING, &opt_format,
    N_("Export format: md (the conversation, the default), html, pdf, or jsonl (its event log); "
       "--report takes html or pdf"), N_("md|html|pdf|jsonl") },
  { "output", 0, 0, G_OPTION_ARG_FILENAME, &opt_output,
    N_("Write the export to FILE, whole or not at all (needed for html and pdf; md and jsonl go to stdout without it)"),
    N_("FILE") },
  { "include-thinking", 0, 0, G_OPTION_ARG_NONE, &opt_include_thinking,
    N_("Let --export write the model's thinking out (by default only its length)"), NULL },
  { "salvage", 0, 0, G_OPTION_ARG_FILENAME, &opt_salvage,
    N_("Copy every readable session of a damaged --store into a new store"), N_("OUT") },
  { "notes", 0, 0, G_OPTION_ARG_NONE, &opt_notes,
    N_("Print the path and the text of the analyst's notes about --db (offline)"), NULL },
  { "edit-notes", 0, 0, G_OPTION_ARG_FILENAME, &opt_edit_notes,
    N_("Replace the notes about --db with the text of FILE (- for stdin; an empty file removes them)"),
    N_("FILE") },
  { "list-models", 0, 0, G_OPTION_ARG_NONE, &opt_list_models,
    N_("List the models the API offers"), NULL },
  { "json", 0, 0, G_OPTION_ARG_NONE, &opt_json,
    N_("Print one JSON event per line on stdout and nothing else"), NULL },
  { "idle-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_idle_timeout,
    N_("Abort a stream after this many seconds without data (default 90)"), N_("SECONDS") },
  { "max-cost", 0, 0, G_OPTION_ARG_CALLBACK, parse_max_cost_cb,
    N_("Stop before an API call once the session has cost this many US dollars (0: no cap)"), N_("USD") },
  { "pass-env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_pass_env,
    N_("Pass this environment variable to Bash commands too (repeatable)"), N_("NAME") },
  { "query-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_query_timeout,
    N_("Stop a database query after this many seconds (default 30)"), N_("SECONDS") },
  { "version", 0, 0, G_OPTION_ARG_NONE, &opt_version,
    N_("Print the version and exit"), NULL },
  { NULL }
};

/* Output */

static void
agent_event_cb (TallyAgent *agent,
                JsonObject *event,
                Cli        *cli)
{
  TallyEventType type = tally_event_get_event_type (event);

  if (type == TALLY_EVENT_TURN_STARTED)
    cli->attempts = 0;
  else if (type == TALLY_EVENT_API_CALL)
    cli->attempts++;

  if (cli->json)
    {
      g_autofree char *line = tally_event_to_json (event);

      /* One event per line, flushed, so a reader sees each as it happens. */
      fputs (line, stdout);
      fputc ('\n', stdout);
      tally_cli_out_flush ();
    }
  else
    tally_cli_print_event (cli, event);

  if (type == TALLY_EVENT_APPROVAL_REQUEST || type == TALLY_EVENT_QUESTION_REQUEST)
    tally_cli_start_card (cli, event);
}

static void
send_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Cli *cli = user_data;
  g_autoptr(GError) error = NULL;
  TallyTurnStatus status;

  status = tally_session_send_finish (TALLY_SESSION (object), result, &error);
  switch (status)
    {
    case TALLY_TURN_DONE:
      cli->exit_status = EXIT_DONE;
      break;
    case TALLY_TURN_CANCELLED:
      cli->exit_status = cli->stop_signal == SIGTERM ? EXIT_TERMINATED
                       : cli->stop_signal == SIGHUP ? EXIT_HANGUP
                       : EXIT_CANCELLED;
      break;
    case TALLY_TURN_FAILED:
    default:
      cli->exit_status = EXIT_FAILED;
      /* A turn refused before it started (its notes or sensitive columns
       * cannot be read) has no error event to print. */
      if (error != NULL && (error->domain == G_IO_ERROR || error->domain == G_FILE_ERROR))
        g_printerr ("tally-cli: %s\n", error->message);
      break;
    }

  g_main_loop_quit (cli->loop);
}

/* SIGINT, SIGTERM and SIGHUP all end the turn the same way: the
 * cancellable stops the stream and kills running commands, and the turn
 * still records its tool results and ends `cancelled` with its receipt.
 * Further signals while that happens change nothing: leaving at once would
 * skip writing what the turn did. */
static void
stop_on_signal (Cli *cli,
                int  signum)
{
  if (++cli->sigint_count > 1)
    {
      g_printerr ("%s\n", _("tally-cli: still stopping; the turn is being recorded…"));
      return;
    }

  cli->stop_signal = signum;
  g_cancellable_cancel (cli->cancellable);
}

static gboolean
sigint_cb (gpointer user_data)
{
  stop_on_signal (user_data, SIGINT);
  return G_SOURCE_CONTINUE;
}

static gboolean
sigterm_cb (gpointer user_data)
{
  stop_on_signal (user_data, SIGTERM);
  return G_SOURCE_CONTINUE;
}

static gboolean
sighup_cb (gpointer user_data)
{
  stop_on_signal (user_data, SIGHUP);
  return G_SOURCE_CONTINUE;
}

static const char *
default_database (void)
{
  const char *env = g_getenv ("TALLY_SAMPLE_DB");
  static char *installed;

  if (env != NULL && *env != '\0')
    return env;

  if (installed == NULL)
    installed = g_build_filename (PKGDATADIR, "beanline.db", NULL);
  if (g_file_test (TALLY_BUILD_SAMPLE_DB, G_FILE_TEST_IS_REGULAR))
    return TALLY_BUILD_SAMPLE_DB;

  return installed;
}

static char *
resolve_base_url (void)
{
  const char *env;

  if (opt_base_url != NULL)
    return g_strdup (opt_base_url);

  env = g_getenv ("ANTHROPIC_BASE_URL");
  if (env != NULL && *env != '\0')
    return g_strdup (env);

  return g_strdup (TALLY_DEFAULT_BASE_URL);
}

static int
usage_error (const char *message)
{
  g_printerr ("tally-cli: %s\n", message);
  g_printerr ("%s\n", _("Try “tally-cli --help” for more information."));
  return EXIT_USAGE;
}

/* The exit for a --db that check_database() refused: a lock that stayed
 * is a failure (1), anything else a usage error (2). */
static int
database_error_exit (const GError *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BUSY))
    {
      g_printerr ("tally-cli: %s\n", error->message);
      return EXIT_FAILED;
    }
  return usage_error (error->message);
}

static void
list_models_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  Cli *cli = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonArray *data;

  root = tally_client_list_models_finish (TALLY_CLIENT (object), result, &error);
  if (root == NULL)
    {
      g_printerr (_("tally-cli: cannot list models: %s\n"), error->message);
      cli->exit_status = EXIT_FAILED;
      g_main_loop_quit (cli->loop);
      return;
    }

  if (!JSON_NODE_HOLDS_OBJECT (root) ||
      (data = tally_json_object_get_array (json_node_get_object (root), "data")) == NULL)
    {
      g_printerr ("%s\n", _("tally-cli: the model list has no “data” array"));
      cli->exit_status = EXIT_FAILED;
      g_main_loop_quit (cli->loop);
      return;
    }

  for (guint i = 0; i < json_array_get_length (data); i++)
    {
      JsonNode *element = json_array_get_element (data, i);
      JsonObject *model;

      if (!JSON_NODE_HOLDS_OBJECT (element))
        continue;
      model = json_node_get_object (element);
      if (cli->json)
        tally_cli_print_json_line (model);
      else
        g_print ("%s\t%s\n",
                 json_object_get_string_member_with_default (model, "id", "?"),
                 json_object_get_string_member_with_default (model, "display_name", ""));
    }
  tally_cli_out_flush ();

  cli->exit_status = EXIT_DONE;
  g_main_loop_quit (cli->loop);
}

typedef struct {
  gboolean  done;
  GError   *error;
} PgConnect;

static void
pg_connected_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  PgConnect *wait = user_data;

  tally_pg_source_connect_finish (TALLY_PG_SOURCE (source), result, &wait->error);
  wait->done = TRUE;
}

/* A PostgreSQL --db (docs/postgresql.md): connects once before the turn,
 * in a worker thread, so that a wrong connection string fails at once,
 * the model is told the server's version, and a role that could write is
 * reported here, once. */
static gboolean
check_pg_database (const char    *conninfo,
                   GCancellable  *cancellable,
                   GError       **error)
{
  g_autoptr(TallyPgSource) source = tally_pg_source_get_shared (conninfo, error);
  g_autofree char *warning = NULL;
  PgConnect wait = { FALSE, NULL };

  if (source == NULL)
    return FALSE;

  if (!isnan (opt_query_timeout))
    tally_pg_source_set_statement_timeout_ms (source, (guint) MAX (opt_query_timeout * 1000, 1));

  tally_pg_source_connect_async (source, cancellable, pg_connected_cb, &wait);
  while (!wait.done)
    g_main_context_iteration (NULL, TRUE);
  if (wait.error != NULL)
    {
      g_propagate_error (error, wait.error);
      return FALSE;
    }

  warning = tally_pg_source_dup_warning (source);
  if (warning != NULL)
    g_printerr (_("tally-cli: warning: %s\n"), warning);
  return TRUE;
}

/* How long the start-up check of --db waits for another program's lock */
#define CHECK_BUSY_TIMEOUT_MS 10000

static gboolean
check_database (const char  *path,
                GError     **error)
{
  sqlite3 *db = NULL;
  int rc;

  rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL);
  /* Another program's write lock: wait for it as queries do */
  if (rc == SQLITE_OK)
    sqlite3_busy_timeout (db, CHECK_BUSY_TIMEOUT_MS);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
  if ((rc & 0xff) == SQLITE_BUSY)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                 _("%s is locked by another program; try again when it is done"), path);
  else if (rc != SQLITE_OK)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 _("%s is not a readable SQLite database (%s)"), path,
                 db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
  sqlite3_close (db);

  return rc == SQLITE_OK;
}

typedef struct {
  Cli       *cli;
  GPtrArray *tables;
  GError    *error;
} DataImport;

static void
data_import_done_cb (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  DataImport *import = user_data;

  import->tables = tally_data_import_finish (result, &import->error);
  g_main_loop_quit (import->cli->loop);
}

/* Imports the data files (docs/data-files.md) into the workspace's data
 * database before the turn, in a worker thread so that Ctrl+C cancels it,
 * and prints one line per table. Returns the database's path, or %NULL
 * with the exit status set. */
static char *
import_data_files (Cli                *cli,
                   const char         *workspace,
                   const char * const *paths)
{
  g_autofree char *database = tally_data_import_dup_database_path (workspace);
  DataImport import = { cli, NULL, NULL };

  tally_data_import_async (database, paths, NULL, NULL, NULL, cli->cancellable,
                           data_import_done_cb, &import);
  g_main_loop_run (cli->loop);

  if (import.tables == NULL)
    {
      gboolean cancelled = g_error_matches (import.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);

      g_printerr (_("tally-cli: cannot import the data files: %s\n"), import.error->message);
      cli->exit_status = cancelled ? EXIT_CANCELLED : EXIT_FAILED;
      g_error_free (import.error);
      return NULL;
    }

  for (guint i = 0; i < import.tables->len; i++)
    {
      TallyDataTable *table = g_ptr_array_index (import.tables, i);
      g_autofree char *name = g_filename_display_basename (table->path);
      g_autofree char *count = tally_format_count (table->n_rows, TALLY_GROUPING_COMMA);
      /* TRANSLATORS: %s is a number of rows, with its thousands separators */
      g_autofree char *rows = g_strdup_printf (ngettext ("%s row", "%s rows", (gulong) MAX (table->n_rows, (gint64) 0)),
                                               count);
      /* TRANSLATORS: %u is a number of columns */
      g_autofree char *columns = g_strdup_printf (ngettext ("%u column", "%u columns", table->n_columns),
                                                  table->n_columns);

      /* TRANSLATORS: the file, the table, "4 rows", "7 columns" */
      if (table->reused)
        g_printerr (_("tally-cli: %s: table %s, %s, %s (unchanged, not imported again)\n"),
                    name, table->table, rows, columns);
      else
        g_printerr (_("tally-cli: %s: table %s, %s, %s\n"), name, table->table, rows, columns);
    }
  g_ptr_array_unref (import.tables);

  return g_steal_pointer (&database);
}

static TallyStore *
open_store (gboolean required)
{
  g_autofree char *path = opt_store != NULL ? g_strdup (opt_store) : tally_store_get_default_path ();
  g_autoptr(GError) error = NULL;
  TallyStore *store;

  store = tally_store_open (path, &error);
  if (store == NULL)
    {
      if (required)
        g_printerr (_("tally-cli: cannot open the session store %s: %s\n"), path, error->message);
      else
        g_printerr (_("tally-cli: warning: the session store %s cannot be opened (%s); "
                      "this session will not be saved\n"), path, error->message);
      return NULL;
    }

  if (tally_store_is_read_only (store))
    g_printerr ("tally-cli: %s\n", tally_store_get_read_only_reason (store));

  return store;
}

static int
run_list (gboolean search)
{
  g_autoptr(TallyStore) store = open_store (TRUE);
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;

  if (store == NULL)
    return EXIT_FAILED;

  sessions = search ? tally_store_search (store, opt_search, &error)
                    : tally_store_list_sessions (store, &error);
  if (sessions == NULL)
    {
      g_printerr ("tally-cli: %s\n", error->message);
      return EXIT_FAILED;
    }

  for (guint i = 0; i < sessions->len; i++)
    tally_cli_print_session_line (g_ptr_array_index (sessions, i), search);
  tally_cli_out_flush ();

  return EXIT_DONE;
}

/* The stored lines of the session @id names (a full id or a unique
 * prefix), or %NULL after saying why on stderr. With @open_elsewhere, also
 * whether another holder has the session's writer lock
 * (tally_store_session_is_open_elsewhere()), asked of the same store. */
static GPtrArray *
load_session_lines (const char *id,
                    gboolean   *open_elsewhere)
{
  g_autoptr(TallyStore) store = open_store (TRUE);
  g_autoptr(TallySessionInfo) info = NULL;
  g_autoptr(GPtrArray) lines = NULL;
  g_autoptr(GError) error = NULL;

  if (store == NULL)
    return NULL;

  info = tally_store_find_session (store, id, &error);
  if (info != NULL)
    lines = tally_store_load_event_lines (store, info->id, &error);
  if (lines == NULL)
    g_printerr ("tally-cli: %s\n", error->message);
  else if (open_elsewhere != NULL)
    *open_elsewhere = tally_store_session_is_open_elsewhere (store, info->id);

  return g_steal_pointer (&lines);
}

static int
run_replay (Cli *cli)
{
  gboolean open_elsewhere = FALSE;
  g_autoptr(GPtrArray) lines = load_session_lines (opt_replay, &open_elsewhere);

  if (lines == NULL)
    return EXIT_FAILED;

  /* A log that ends inside a turn: the turn is under way in another
   * Tally, or Tally stopped during it (killed, the machine went down),
   * and opening the session closes it in the log (tally-session.c). The
   * session's writer lock tells which. */
  if (tally_cli_print_event_lines (cli, lines))
    {
      if (open_elsewhere)
        g_print ("\n%s\n", _("(The last turn has not finished yet: the session is open in another Tally.)"));
      else
        g_print ("\n%s\n", _("(The last turn did not finish: Tally stopped during it. "
                              "It is closed when the session is next opened or resumed.)"));
      tally_cli_out_flush ();
    }

  return EXIT_DONE;
}

/* --ledger ID: what the session sent to the API (docs/ledger.md §4): the
 * `request_sent` events as stored with --json, else per turn and request. */
static int
run_ledger (Cli *cli)
{
  g_autoptr(GPtrArray) lines = load_session_lines (opt_ledger, NULL);
  g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_autofree char *text = NULL;

  if (lines == NULL)
    return EXIT_FAILED;

  for (guint i = 0; i < lines->len; i++)
    {
      const char *line = g_ptr_array_index (lines, i);
      JsonObject *event = tally_event_from_json (line, NULL);

      if (event == NULL)
        {
          g_printerr (_("(event %u of the log is damaged and was skipped)\n"), i + 1);
          continue;
        }
      if (cli->json && tally_event_get_event_type (event) == TALLY_EVENT_REQUEST_SENT)
        {
          fputs (line, stdout);
          fputc ('\n', stdout);
        }
      g_ptr_array_add (events, event);
    }

  if (!cli->json)
    {
      text = tally_ledger_dup_text (events);
      fputs (text, stdout);
    }
  tally_cli_out_flush ();

  return EXIT_DONE;
}

/* --export ID [--format md|html|pdf|jsonl] [--output FILE]: every format
 * through libtally-report, as the window exports (docs/reports.md) */
static int
run_export (void)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallySessionInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) output = opt_output != NULL ? g_file_new_for_commandline_arg (opt_output) : NULL;
  g_autofree char *text = NULL;
  TallyReportFormat format = TALLY_REPORT_FORMAT_MD;
  gboolean done = FALSE;

  if (opt_format != NULL && !tally_report_format_from_string (opt_format, &format))
    return usage_error (_("--format must be md, html, pdf or jsonl"));
  /* HTML and PDF are files, never a terminal's text. */
  if (tally_report_format_is_rendered (format) && output == NULL)
    return usage_error (_("--format html and pdf need --output FILE"));
  if (opt_include_thinking && format == TALLY_REPORT_FORMAT_JSONL)
    return usage_error (_("--include-thinking does not apply to jsonl, which holds every event"));

  store = open_store (TRUE);
  if (store == NULL)
    return EXIT_FAILED;

  info = tally_store_find_session (store, opt_export, &error);
  if (info != NULL && output != NULL)
    done = tally_report_export_session (store, info->id, format, opt_include_thinking, output, NULL, &error);
  else if (info != NULL)
    {
      text = tally_report_dup_session_text (store, info->id, format, opt_include_thinking, &error);
      done = text != NULL;
    }
  if (!done)
    {
      g_printerr ("tally-cli: %s\n", error->message);
      return EXIT_FAILED;
    }
  if (text != NULL)
    {
      fputs (text, stdout);
      tally_cli_out_flush ();
    }
  return EXIT_DONE;
}

/* --report FILE.md --format html|pdf --output FILE (docs/reports.md) */
static int
run_report (void)
{
  g_autoptr(GFile) input = g_file_new_for_commandline_arg (opt_report);
  g_autoptr(GFile) output = NULL;
  g_autoptr(GError) error = NULL;
  TallyReportFormat format;

  if (opt_format == NULL || !tally_report_format_from_string (opt_format, &format) ||
      !tally_report_format_is_rendered (format))
    return usage_error (_("--report needs --format html or pdf"));
  if (opt_output == NULL)
    return usage_error (_("--report needs --output FILE"));
  if (opt_include_thinking)
    return usage_error (_("--include-thinking applies to --export only"));

  output = g_file_new_for_commandline_arg (opt_output);
  if (!tally_report_export_file (input, format, output, NULL, &error))
    {
      g_printerr ("tally-cli: %s\n", error->message);
      return EXIT_FAILED;
    }
  return EXIT_DONE;
}

/* --salvage OUT: the damaged store is only read (docs/architecture.md §10.9) */
static int
run_salvage (void)
{
  g_autofree char *path = opt_store != NULL ? g_strdup (opt_store) : tally_store_get_default_path ();
  g_autoptr(GError) error = NULL;
  TallySalvageReport report = { 0 };

  if (!tally_store_salvage (path, opt_salvage, &report, &error))
    {
      g_printerr (_("tally-cli: cannot salvage %s: %s\n"), path, error->message);
      return EXIT_FAILED;
    }

  if (opt_json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "out", opt_salvage);
      json_object_set_int_member (object, "sessions_salvaged", report.sessions_salvaged);
      json_object_set_int_member (object, "sessions_rebuilt", report.sessions_rebuilt);
      json_object_set_int_member (object, "sessions_lost", report.sessions_lost);
      json_object_set_int_member (object, "events_salvaged", (gint64)report.events_salvaged);
      json_object_set_int_member (object, "events_lost", (gint64)report.events_lost);
      json_object_set_int_member (object, "messages_lost", (gint64)report.messages_lost);
      json_object_set_int_member (object, "messages_dropped", (gint64)report.messages_dropped);
      json_object_set_int_member (object, "conversations_cut", report.conversations_cut);
      json_object_set_int_member (object, "rules_salvaged", report.rules_salvaged);
      json_object_set_int_member (object, "plans_salvaged", report.plans_salvaged);
      json_object_set_int_member (object, "damaged_regions", report.damaged_regions);
      tally_cli_print_json_line (object);
    }
  else
    {
      g_autofree char *events = g_strdup_printf ("%" G_GUINT64_FORMAT, report.events_salvaged);
      g_autofree char *events_lost = g_strdup_printf ("%" G_GUINT64_FORMAT, report.events_lost);
      g_autofree char *dropped = g_strdup_printf ("%" G_GUINT64_FORMAT, report.messages_dropped);
      g_autofree char *blocks_lost = g_strdup_printf ("%" G_GUINT64_FORMAT, report.messages_lost);

      /* TRANSLATORS: the report of --salvage; the first %s is the new store */
      g_print (_("Salvaged into %s: %u sessions (%u rebuilt from their events), %s events, "
                 "%u rules, %u plans.\n"),
               opt_salvage, report.sessions_salvaged, report.sessions_rebuilt, events,
               report.rules_salvaged, report.plans_salvaged);
      /* TRANSLATORS: the second line of --salvage's report: sessions,
       * events, conversation blocks that could not be read, blocks left
       * out after them, damaged places */
      g_print (_("Lost: %u sessions, %s events, %s conversation blocks (%s more left out after them); "
                 "%u damaged places skipped.\n"),
               report.sessions_lost, events_lost, blocks_lost, dropped, report.damaged_regions);
      if (report.conversations_cut > 0)
        /* TRANSLATORS: %u counts sessions */
        g_print (_("The model no longer sees all of the transcript of %u sessions: part of their "
                   "conversation with it was lost. Each log ends with an error saying so.\n"),
                 report.conversations_cut);
      g_print (_("%s was only read. Open the new store with --store.\n"), path);
    }
  tally_cli_out_flush ();
  return EXIT_DONE;
}

static int
run_cli (int    argc,
         char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_auto(GStrv) args = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyClient) client = NULL;
  g_autoptr(TallyToolRegistry) tools = NULL;
  g_autoptr(TallyAgent) agent = NULL;
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(TallySession) session = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GCancellable) cancellable = NULL;
  g_autofree char *base_url = NULL;
  g_autofree char *prompt = NULL;
  g_autoptr(GPtrArray) data_paths = NULL;
  g_autoptr(TallySecret) api_key = NULL;
  g_autofree char *description = NULL;
  TallyMode mode = TALLY_MODE_ASK;
  Cli cli = { 0 };

  /* The key leaves the environment at once, before any thread or command
   * could read it (docs/security.md, "Processes and secrets"). */
  api_key = tally_secret_env_take ("ANTHROPIC_API_KEY");

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  context = g_option_context_new (_("PROMPT — ask Tally a question about your data"));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  description = g_strdup_printf ("%s\n\n%s",
    _("Exports: --export SESSION_ID writes md (the default) or jsonl to stdout, or to --output FILE; "
      "html and pdf need --output. --report FILE.md --format html|pdf --output FILE renders a report "
      "with its charts. An export replaces FILE whole or not at all. See docs/reports.md."),
    _("Exit status: 0 done, 1 failed, 2 usage error, 130 cancelled (Ctrl+C), "
      "143 and 129 cancelled by SIGTERM and SIGHUP.\n"
      "The API key comes from ANTHROPIC_API_KEY."));
  g_option_context_set_description (context, description);
  args = rename_bare_thinking (argc, argv);
  if (!g_option_context_parse_strv (context, &args, &error))
    return usage_error (error->message);
  /* GOption leaves the `--` that ended the options in place. */
  if (args[0] != NULL && args[1] != NULL && g_str_equal (args[1], "--"))
    {
      g_free (args[1]);
      for (guint i = 1; args[i] != NULL; i++)
        args[i] = args[i + 1];
    }
  argc = (int) g_strv_length (args);
  argv = args;

  if (opt_version)
    {
      g_print ("tally-cli %s\n", PACKAGE_VERSION);
      return EXIT_DONE;
    }

  if (opt_store != NULL)
    {
      g_autofree char *parent = g_path_get_dirname (opt_store);

      if (!g_file_test (parent, G_FILE_TEST_IS_DIR))
        {
          g_autofree char *message = g_strdup_printf (_("the folder of --store, %s, does not exist"), parent);
          return usage_error (message);
        }
      if (g_file_test (opt_store, G_FILE_TEST_IS_DIR))
        {
          g_autofree char *message = g_strdup_printf (_("--store %s is a folder, not a file"), opt_store);
          return usage_error (message);
        }
    }

  if (opt_mode != NULL && !tally_mode_from_string (opt_mode, &mode))
    return usage_error (_("--mode must be ask, plan or auto"));

  if (!isnan (opt_idle_timeout) && !(opt_idle_timeout >= 0 && opt_idle_timeout <= 86400))
    return usage_error (_("--idle-timeout takes a number of seconds from 0 to 86400"));

  if (!isnan (opt_query_timeout) && !(opt_query_timeout > 0 && opt_query_timeout <= 86400))
    return usage_error (_("--query-timeout takes a number of seconds above 0, at most 86400"));

  if (opt_model != NULL && *g_strstrip (opt_model) == '\0')
    return usage_error (_("--model needs a model id or alias"));

  if ((opt_list ? 1 : 0) + (opt_replay != NULL) + (opt_search != NULL) + (opt_export != NULL) +
      (opt_report != NULL) + (opt_list_models ? 1 : 0) + (opt_salvage != NULL) + (opt_ledger != NULL) +
      (opt_notes || opt_edit_notes != NULL) > 1)
    return usage_error (_("--list, --replay, --search, --export, --report and --list-models go one at a time"));
  if (opt_notes && opt_edit_notes != NULL)
    return usage_error (_("--notes prints the notes and --edit-notes replaces them: give one"));

  for (guint i = 0; opt_sensitive != NULL && opt_sensitive[i] != NULL; i++)
    {
      g_autoptr(GError) entry_error = NULL;

      if (!tally_sensitive_columns_check_entry (g_strstrip (opt_sensitive[i]), &entry_error))
        {
          g_autofree char *message = g_strdup_printf (_("--sensitive: %s"), entry_error->message);

          return usage_error (message);
        }
    }
  if ((opt_output != NULL || opt_include_thinking || opt_format != NULL) && opt_export == NULL &&
      opt_report == NULL)
    return usage_error (_("--format, --output and --include-thinking go with --export or --report"));

  cli.json = opt_json;
  cli.color = !opt_json && isatty (STDERR_FILENO) && g_getenv ("NO_COLOR") == NULL;

  if (opt_ledger != NULL)
    {
      if (argc > 1)
        return usage_error (_("these commands take no prompt"));
      return run_ledger (&cli);
    }

  if (opt_list || opt_search != NULL || opt_replay != NULL || opt_export != NULL || opt_report != NULL)
    {
      if (argc > 1)
        return usage_error (_("these commands take no prompt"));
      if (opt_report != NULL)
        return run_report ();
      if (opt_list || opt_search != NULL)
        return run_list (opt_search != NULL);
      if (opt_replay != NULL)
        return run_replay (&cli);
      return run_export ();
    }

  if (opt_salvage != NULL)
    {
      if (argc > 1)
        return usage_error (_("these commands take no prompt"));
      return run_salvage ();
    }

  if (opt_notes || opt_edit_notes != NULL)
    {
      g_autofree char *store_path = opt_store != NULL ? g_strdup (opt_store) : tally_store_get_default_path ();
      const char *database = opt_db != NULL ? opt_db : default_database ();

      if (argc > 1)
        return usage_error (_("these commands take no prompt"));
      if (!tally_pg_conninfo_is (database) && !g_file_test (database, G_FILE_TEST_IS_REGULAR))
        {
          g_autofree char *message = g_strdup_printf (_("no database at %s"), database);
          return usage_error (message);
        }
      if (!tally_pg_conninfo_is (database) && !check_database (database, &error))
        return database_error_exit (error);
      return tally_cli_run_notes (store_path, database, opt_edit_notes, opt_json);
    }

  if (!opt_list_models)
    {
      if (argc < 2)
        return usage_error (_("no prompt given"));
      prompt = g_strjoinv (" ", argv + 1);
      if (!g_utf8_validate (prompt, -1, NULL) || *g_strstrip (prompt) == '\0')
        return usage_error (_("the prompt is empty or not valid UTF-8"));
    }
  else if (argc > 1)
    return usage_error (_("--list-models takes no prompt"));

  if (api_key == NULL)
    return usage_error (_("no API key: set ANTHROPIC_API_KEY"));

  base_url = resolve_base_url ();
  if (!g_str_has_prefix (base_url, "http://") && !g_str_has_prefix (base_url, "https://"))
    return usage_error (_("--base-url must start with http:// or https://"));

  client = tally_client_new (base_url, api_key);
  if (!isnan (opt_idle_timeout))
    tally_client_set_idle_timeout_ms (client, (guint)(opt_idle_timeout * 1000));

  loop = g_main_loop_new (NULL, FALSE);
  cancellable = g_cancellable_new ();
  cli.loop = loop;
  cli.cancellable = cancellable;
  cli.exit_status = EXIT_FAILED;
  cli.interactive = isatty (STDIN_FILENO);

  g_unix_signal_add (SIGINT, sigint_cb, &cli);
  g_unix_signal_add (SIGTERM, sigterm_cb, &cli);
  g_unix_signal_add (SIGHUP, sighup_cb, &cli);

  if (opt_list_models)
    {
      tally_client_list_models_async (client, cancellable, list_models_cb, &cli);
      g_main_loop_run (loop);
      return cli.exit_status;
    }

  /* Data files are imported into a database of their own (docs/data-files.md). */
  if (opt_db != NULL && !tally_pg_conninfo_is (opt_db) && tally_data_import_is_data_path (opt_db))
    {
      data_paths = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (data_paths, g_steal_pointer (&opt_db));
    }
  else if (opt_data != NULL && opt_db != NULL)
    return usage_error (_("--data imports into a database of its own: it does not go with a SQLite or "
                          "PostgreSQL --db"));
  for (guint i = 0; opt_data != NULL && opt_data[i] != NULL; i++)
    {
      if (data_paths == NULL)
        data_paths = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (data_paths, g_strdup (opt_data[i]));
    }
  if (data_paths != NULL)
    g_ptr_array_add (data_paths, NULL);

  if (opt_db == NULL && opt_resume == NULL && data_paths == NULL)
    opt_db = g_strdup (default_database ());
  if (opt_db != NULL && tally_pg_conninfo_is (opt_db))
    {
      g_autoptr(GError) db_error = NULL;

      if (!check_pg_database (opt_db, cancellable, &db_error))
        return usage_error (db_error->message);
    }
  else if (opt_db != NULL && !g_file_test (opt_db, G_FILE_TEST_IS_REGULAR))
    {
      g_autofree char *message = g_strdup_printf (_("no database at %s"), opt_db);
      return usage_error (message);
    }
  else if (opt_db != NULL)
    {
      g_autoptr(GError) db_error = NULL;

      if (!check_database (opt_db, &db_error))
        return database_error_exit (db_error);
    }
  if (opt_workspace == NULL && opt_resume == NULL)
    opt_workspace = g_get_current_dir ();
  if (opt_workspace != NULL && !g_file_test (opt_workspace, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *message = g_strdup_printf (_("the workspace %s is not a folder"), opt_workspace);
      return usage_error (message);
    }

  tools = tally_tool_registry_new_default ();
  tally_tool_bash_set_extra_env (TALLY_TOOL_BASH (tally_tool_registry_lookup (tools, "Bash")),
                                 (const char * const *) opt_pass_env);
  if (!isnan (opt_query_timeout))
    tally_tool_query_database_set_timeout_ms (
      TALLY_TOOL_QUERY_DATABASE (tally_tool_registry_lookup (tools, "query_database")),
      (guint) MAX (opt_query_timeout * 1000, 1));
  /* Nothing is spent on a turn that could not be kept. */
  store = open_store (TRUE);
  if (store == NULL)
    return EXIT_FAILED;
  /* A store that cannot be written could keep nothing of the turn: a
   * resumed session is refused before anything is sent, as a new one is. */
  if (opt_resume != NULL && tally_store_is_read_only (store))
    g_set_error (&error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                 /* TRANSLATORS: %s is the store's file; then why it is read-only */
                 _("Nothing was sent: the session store “%s” cannot keep this turn. %s"),
                 tally_store_get_path (store), tally_store_get_read_only_reason (store));
  else if (opt_resume != NULL)
    session = tally_session_open (store, opt_resume, client, tools, &error);
  if (opt_resume != NULL)
    {
      if (session == NULL)
        {
          g_printerr (_("tally-cli: cannot resume %s: %s\n"), opt_resume, error->message);
          /* With --json, a session another process writes, or a store
           * that cannot be written, is also an `error` event of kind
           * `store` on stdout. It is not in the session's log (that is
           * the other process's, or cannot be written), so its seq is 0. */
          if (cli.json && (g_error_matches (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED) ||
                           g_error_matches (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY)))
            {
              g_autoptr(JsonObject) fields = tally_event_new_error ("store", error->message, FALSE, NULL);
              g_autoptr(JsonObject) event = tally_event_stamp (fields, 0, g_get_real_time (), opt_resume, NULL);

              tally_cli_print_json_line (event);
            }
          return EXIT_FAILED;
        }
      /* A salvaged session whose conversation lost a part: the model
       * will not see all that its transcript shows (§10.9). */
      if (tally_session_get_lost_context (session) != NULL)
        g_printerr (_("tally-cli: warning: the model no longer sees all of this session’s transcript: %s\n"),
                    tally_session_get_lost_context (session));
      /* A session keeps its mode unless --mode says otherwise. */
      if (opt_mode == NULL)
        mode = tally_session_get_mode (session);
    }
  else if (tally_store_is_read_only (store))
    {
      g_printerr (_("tally-cli: the session store is read-only, so a new session could not be kept\n"));
      return EXIT_FAILED;
    }
  else
    session = tally_session_new (store, client, tools);

  agent = g_object_ref (tally_session_get_agent (session));
  cli.agent = agent;
  if (opt_db != NULL)
    tally_agent_set_database (agent, opt_db);
  /* A resumed PostgreSQL session connects first too, with the stored
   * string, whose password was never kept (docs/postgresql.md). */
  if (opt_db == NULL && data_paths == NULL && tally_pg_conninfo_is (tally_agent_get_database (agent)))
    {
      g_autoptr(GError) db_error = NULL;

      if (!check_pg_database (tally_agent_get_database (agent), cancellable, &db_error))
        {
          g_printerr (_("tally-cli: cannot resume %s: %s\n"), opt_resume, db_error->message);
          return EXIT_FAILED;
        }
    }
  if (opt_workspace != NULL)
    tally_agent_set_workspace (agent, opt_workspace);
  if (data_paths != NULL)
    {
      g_autofree char *database = import_data_files (&cli, tally_agent_get_workspace (agent),
                                                     (const char * const *) data_paths->pdata);

      if (database == NULL)
        return cli.exit_status;
      tally_agent_set_database (agent, database);
    }
  if (opt_model != NULL)
    tally_agent_set_model (agent, opt_model);
  if (opt_thinking_budget > 0)
    tally_agent_set_thinking_budget (agent, opt_thinking_budget);
  if (!isnan (opt_max_cost))
    tally_agent_set_max_cost (agent, opt_max_cost);
  /* Added to the database's own list for this run only; the file is
   * changed in the window (docs/ledger.md §2). */
  if (opt_sensitive != NULL)
    {
      g_auto(GStrv) columns = tally_sensitive_columns_merge (tally_agent_get_sensitive_columns (agent),
                                                             (const char * const *) opt_sensitive);

      tally_agent_set_sensitive_columns (agent, (const char * const *) columns);
    }

  g_signal_connect (agent, "event", G_CALLBACK (agent_event_cb), &cli);

  tally_session_send_async (session, &(TallyTurnRequest) { .text = prompt, .mode = mode, .thinking = opt_thinking },
                            cancellable, send_done_cb, &cli);
  g_main_loop_run (loop);

  tally_cli_stop_reading_stdin (&cli);
  tally_cli_close_open_text (&cli);
  /* The settled turn's snapshot is built in a worker thread (docs/
   * architecture.md §3.3); let it reach the store before the store
   * closes. */
  tally_session_wait_snapshots ();
  return cli.exit_status;
}

/* Output that could not be written (a full disk, a device that refuses
 * it) fails the command, whatever the command did: a script must not take
 * a cut export, list or event stream for a whole one. */
int
main (int    argc,
      char **argv)
{
  int status = run_cli (argc, argv);
  int out_errno = tally_cli_out_finish ();

  if (out_errno != 0)
    {
      /* TRANSLATORS: %s says why, e.g. "No space left on device" */
      g_printerr (_("tally-cli: the output could not be written: %s\n"),
                  out_errno > 0 ? g_strerror (out_errno) : _("write error"));
      if (status == EXIT_DONE)
        status = EXIT_FAILED;
    }
  return status;
}
