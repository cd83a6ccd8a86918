/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-pg-source.h"
#include "tally-pq-loader.h"
#include "tally-tool.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

/* How long a cancel request may take to end a query before the connection
 * is simply closed, so that Stop ends the call within a second. */
#define CANCEL_GRACE_US   (800 * G_TIME_SPAN_MILLISECOND)
/* Longest single wait in poll(), so deadlines are looked at often. */
#define POLL_SLICE_MS     200
/* The client-side backstop past the server's statement_timeout. */
#define DEADLINE_SLACK_MS 2000
/* A session that sits in a transaction this long is ended by the server
 * (a crashed or hung Tally never holds a snapshot for long). */
#define IDLE_IN_TRANSACTION_MS 60000
#define DEFAULT_CONNECT_TIMEOUT "10"

/* SQLSTATEs (PostgreSQL documentation, appendix "PostgreSQL Error Codes"). */
#define SQLSTATE_READ_ONLY_TRANSACTION "25006"
#define SQLSTATE_QUERY_CANCELED        "57014"
#define SQLSTATE_SYNTAX_ERROR          "42601"

/**
 * TallyPgSource:
 *
 * A PostgreSQL database reached through libpq, read-only by construction
 * (docs/postgresql.md):
 *
 * - every connection is opened with `default_transaction_read_only=on`,
 *   `statement_timeout` and `idle_in_transaction_session_timeout`;
 * - every query runs inside `BEGIN READ ONLY` … `ROLLBACK`, so even a
 *   `set_config()` inside a SELECT is undone;
 * - a statement is sent with the extended protocol (PQsendQueryParams()),
 *   which refuses more than one statement, and only statements that start
 *   with SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN are sent at all;
 * - rows arrive in single-row mode and are handed on one by one, so a
 *   20-million-row result never sits in memory.
 *
 * All calls that talk to the server block: run them in a worker thread
 * (the tools already run in one; tally_pg_source_connect_async() is the
 * same for the main loop). A #GCancellable given to a call sends a cancel
 * request (PQcancel()) and the call returns %G_IO_ERROR_CANCELLED within
 * about a second. Connections are pooled per source; one that was lost is
 * opened again once before the call fails.
 *
 * Errors are in the %TALLY_TOOL_ERROR domain: %TALLY_TOOL_ERROR_INVALID_INPUT
 * for an unreadable connection string or empty SQL,
 * %TALLY_TOOL_ERROR_REFUSED for anything that would write or is not one
 * query, %TALLY_TOOL_ERROR_FAILED for connection failures, timeouts and
 * SQL errors (with libpq's message).
 */
struct _TallyPgSource
{
  GObject       parent_instance;

  char         *conninfo;
  char         *redacted;
  GMainContext *context;          /* where ::warning is emitted */

  GMutex        lock;             /* guards the members below */
  GQueue        idle;             /* PGconn *, not in use */
  guint         n_open;           /* idle + in use */
  guint         timeout_ms;
  char         *server_version;
  char         *warning;
  gboolean      checked_role;
};

G_DEFINE_FINAL_TYPE (TallyPgSource, tally_pg_source, G_TYPE_OBJECT)

enum {
  SIGNAL_WARNING,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* Connections {{{1 */

static void
set_conn_error (GError     **error,
                const char  *what,
                PGconn      *conn)
{
  g_autofree char *message = g_strdup (conn ? PQerrorMessage (conn) : "out of memory");

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED, "%s: %s", what,
               g_strstrip (message));
}

/* Waits until @conn's socket is ready for @events, the cancellable fires
 * or POLL_SLICE_MS pass. Returns FALSE on a poll() failure. */
static gboolean
wait_socket (PGconn       *conn,
             short         events,
             GCancellable *cancellable)
{
  struct pollfd fds[2] = { { PQsocket (conn), events, 0 }, { -1, POLLIN, 0 } };
  GPollFD cancel_fd = { -1, 0, 0 };
  gboolean have_cancel_fd = FALSE;
  int rc;

  if (cancellable != NULL && g_cancellable_make_pollfd (cancellable, &cancel_fd))
    {
      fds[1].fd = cancel_fd.fd;
      have_cancel_fd = TRUE;
    }

  do
    rc = poll (fds, have_cancel_fd ? 2 : 1, POLL_SLICE_MS);
  while (rc < 0 && errno == EINTR);

  if (have_cancel_fd)
    g_cancellable_release_fd (cancellable);

  return rc >= 0;
}

static char *
build_options (const char *user_options,
               guint       timeout_ms)
{
  return g_strdup_printf ("%s%s-c default_transaction_read_only=on "
                          "-c statement_timeout=%u "
                          "-c idle_in_transaction_session_timeout=%u",
                          user_options ? user_options : "",
                          user_options && user_options[0] ? " " : "",
                          timeout_ms, (guint) IDLE_IN_TRANSACTION_MS);
}

/* Opens one connection: the analyst's connection string with Tally's
 * options added (and theirs kept), PQconnectStartParams() so that the
 * service file, ~/.pgpass and the PG* variables apply as for psql. */
static PGconn *
open_connection (TallyPgSource  *self,
                 GCancellable   *cancellable,
                 GError        **error)
{
  g_autoptr(GPtrArray) keywords = g_ptr_array_new ();
  g_autoptr(GPtrArray) values = g_ptr_array_new ();
  g_autofree char *options = NULL;
  PQconninfoOption *parsed;
  char *parse_error = NULL;
  const char *user_options = NULL;
  gboolean have_timeout = FALSE;
  gboolean have_app = FALSE;
  PostgresPollingStatusType status;
  PGconn *conn;

  parsed = PQconninfoParse (self->conninfo, &parse_error);
  if (parsed == NULL)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "The PostgreSQL connection string cannot be read: %s",
                   parse_error ? g_strstrip (parse_error) : "out of memory");
      PQfreemem (parse_error);
      return NULL;
    }

  for (PQconninfoOption *o = parsed; o->keyword != NULL; o++)
    {
      if (o->val == NULL)
        continue;
      if (strcmp (o->keyword, "options") == 0)
        {
          user_options = o->val;
          continue;
        }
      have_timeout |= strcmp (o->keyword, "connect_timeout") == 0;
      have_app |= strcmp (o->keyword, "application_name") == 0;
      g_ptr_array_add (keywords, o->keyword);
      g_ptr_array_add (values, o->val);
    }

  g_mutex_lock (&self->lock);
  options = build_options (user_options, self->timeout_ms);
  g_mutex_unlock (&self->lock);
  g_ptr_array_add (keywords, (char *) "options");
  g_ptr_array_add (values, options);
  if (!have_timeout)
    {
      g_ptr_array_add (keywords, (char *) "connect_timeout");
      g_ptr_array_add (values, (char *) DEFAULT_CONNECT_TIMEOUT);
    }
  if (!have_app)
    {
      g_ptr_array_add (keywords, (char *) "application_name");
      g_ptr_array_add (values, (char *) "Tally");
    }
  g_ptr_array_add (keywords, NULL);
  g_ptr_array_add (values, NULL);

  conn = PQconnectStartParams ((const char * const *) keywords->pdata,
                               (const char * const *) values->pdata, 0);
  PQconninfoFree (parsed);

  if (conn == NULL || PQstatus (conn) == CONNECTION_BAD)
    {
      set_conn_error (error, "Cannot connect to the PostgreSQL server", conn);
      PQfinish (conn);
      return NULL;
    }

  status = PGRES_POLLING_WRITING;
  while (status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          PQfinish (conn);
          return NULL;
        }

      if (!wait_socket (conn, status == PGRES_POLLING_READING ? POLLIN : POLLOUT, cancellable))
        break;
      if (g_cancellable_is_cancelled (cancellable))
        continue;

      status = PQconnectPoll (conn);
    }

  if (status != PGRES_POLLING_OK)
    {
      set_conn_error (error, "Cannot connect to the PostgreSQL server", conn);
      PQfinish (conn);
      return NULL;
    }

  return conn;
}

/* Query state {{{1 */

typedef struct
{
  PGconn       *conn;
  PGcancel     *cancel;
  GCancellable *cancellable;
  gint64        deadline;        /* monotonic µs; 0 for none */
  gint64        cancel_sent;     /* monotonic µs of the cancel request */
  gboolean      stop_requested;  /* the row function had enough */
  gboolean      timed_out;       /* the client-side deadline passed */
  gboolean      abandoned;       /* the cancel did not help: conn closed */
} Run;

static void
run_send_cancel (Run *run)
{
  char message[256];

  if (run->cancel_sent != 0)
    return;

  run->cancel_sent = g_get_monotonic_time ();
  if (run->cancel == NULL)
    run->cancel = PQgetCancel (run->conn);
  /* A failure here only means the query goes on until the grace period
   * ends and the connection is closed instead. */
  if (run->cancel != NULL && !PQcancel (run->cancel, message, sizeof message))
    g_debug ("PostgreSQL cancel request failed: %s", message);
}

/* Reads until a result is complete, sending a cancel request when the
 * cancellable fires or the deadline passes. Returns the next result,
 * NULL at the end of the results, or NULL with run->abandoned set when the
 * server did not stop in time (the connection is then useless). */
static PGresult *
run_get_result (Run *run)
{
  while (PQisBusy (run->conn))
    {
      gint64 now = g_get_monotonic_time ();

      if (run->cancel_sent == 0)
        {
          if (g_cancellable_is_cancelled (run->cancellable) || run->stop_requested)
            run_send_cancel (run);
          else if (run->deadline != 0 && now >= run->deadline)
            {
              run->timed_out = TRUE;
              run_send_cancel (run);
            }
        }
      else if (now - run->cancel_sent > CANCEL_GRACE_US)
        {
          run->abandoned = TRUE;
          return NULL;
        }

      if (!wait_socket (run->conn, POLLIN,
                        run->cancel_sent == 0 ? run->cancellable : NULL) ||
          !PQconsumeInput (run->conn))
        return PQgetResult (run->conn);
    }

  return PQgetResult (run->conn);
}

/* Runs Tally's own statements (never the model's) with the simple
 * protocol and drops the results; FALSE with @error on the first error. */
static gboolean
run_exec (Run         *run,
          const char  *sql,
          GError     **error)
{
  PGresult *result;
  gboolean ok = TRUE;

  if (!PQsendQuery (run->conn, sql))
    {
      set_conn_error (error, "The PostgreSQL server cannot be reached", run->conn);
      return FALSE;
    }

  while ((result = run_get_result (run)) != NULL)
    {
      ExecStatusType status = PQresultStatus (result);

      if (ok && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        {
          g_autofree char *message = g_strdup (PQresultErrorMessage (result));

          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                       "PostgreSQL: %s", g_strstrip (message));
          ok = FALSE;
        }
      PQclear (result);
    }

  if (run->abandoned)
    {
      g_clear_error (error);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
      return FALSE;
    }

  return ok;
}

/* The pool {{{1 */

static PGconn *
acquire (TallyPgSource  *self,
         gboolean        fresh,
         GCancellable   *cancellable,
         GError        **error)
{
  PGconn *conn = NULL;

  g_mutex_lock (&self->lock);
  if (!fresh)
    conn = g_queue_pop_head (&self->idle);
  g_mutex_unlock (&self->lock);

  if (conn != NULL)
    return conn;

  conn = open_connection (self, cancellable, error);
  if (conn != NULL)
    {
      g_mutex_lock (&self->lock);
      self->n_open++;
      g_mutex_unlock (&self->lock);
    }

  return conn;
}

static void
release (TallyPgSource *self,
         PGconn        *conn,
         gboolean       reusable)
{
  if (conn == NULL)
    return;

  reusable = reusable && PQstatus (conn) == CONNECTION_OK &&
             PQtransactionStatus (conn) == PQTRANS_IDLE;

  g_mutex_lock (&self->lock);
  if (reusable)
    g_queue_push_head (&self->idle, conn);
  else
    self->n_open--;
  g_mutex_unlock (&self->lock);

  if (!reusable)
    PQfinish (conn);
}

/* Role check {{{1 */

typedef struct
{
  TallyPgSource *self;
  char          *message;
} Warning;

static gboolean
emit_warning_cb (gpointer data)
{
  Warning *warning = data;

  g_signal_emit (warning->self, signals[SIGNAL_WARNING], 0, warning->message);
  g_object_unref (warning->self);
  g_free (warning->message);
  g_free (warning);
  return G_SOURCE_REMOVE;
}

typedef struct
{
  gboolean superuser;
  gboolean can_write;
  char    *role;
  char    *version;
} RoleFacts;

static gboolean
collect_role_cb (const TallyPgColumns *columns,
                 const char * const   *values,
                 const int            *lengths,
                 gpointer              user_data)
{
  RoleFacts *facts = user_data;

  (void) lengths;
  if (values == NULL || columns->n_columns != 5)
    return TRUE;

  facts->superuser = g_strcmp0 (values[0], "t") == 0;
  facts->can_write = g_strcmp0 (values[1], "t") == 0 || g_strcmp0 (values[2], "t") == 0;
  g_free (facts->role);
  facts->role = g_strdup (values[3]);
  g_free (facts->version);
  facts->version = g_strdup (values[4]);
  return TRUE;
}

/* What the role may do: a superuser, or one that may change a table or
 * create in a schema outside the system catalogs. */
static const char role_sql[] =
  "SELECT r.rolsuper, "
  "  EXISTS (SELECT 1 FROM pg_catalog.pg_class c "
  "          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
  "          WHERE c.relkind IN ('r', 'p') "
  "            AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
  "            AND n.nspname NOT LIKE 'pg\\_%' "
  "            AND pg_catalog.has_table_privilege (c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')), "
  "  EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n "
  "          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
  "            AND n.nspname NOT LIKE 'pg\\_%' "
  "            AND pg_catalog.has_schema_privilege (n.oid, 'CREATE')), "
  "  current_user, "
  "  pg_catalog.current_setting ('server_version') "
  "FROM pg_catalog.pg_roles r WHERE r.rolname = current_user";

/* Once per source: learns the server version and warns when the role
 * could write. */
static gboolean
check_role (TallyPgSource  *self,
            GCancellable   *cancellable,
            GError        **error)
{
  RoleFacts facts = { FALSE, FALSE, NULL, NULL };
  char *message = NULL;
  gboolean checked;

  g_mutex_lock (&self->lock);
  checked = self->checked_role;
  g_mutex_unlock (&self->lock);
  if (checked)
    return TRUE;

  if (!tally_pg_source_query (self, role_sql, 0, collect_role_cb, &facts, cancellable, error))
    return FALSE;

  if (facts.superuser)
    message = g_strdup_printf ("Connected to PostgreSQL as %s, a superuser. Tally only reads, "
                               "but a read-only role is safer (docs/postgresql.md).",
                               facts.role ? facts.role : "?");
  else if (facts.can_write)
    message = g_strdup_printf ("Connected to PostgreSQL as %s, a role that may change tables "
                               "or create objects. Tally only reads, but a read-only role is "
                               "safer (docs/postgresql.md).",
                               facts.role ? facts.role : "?");

  g_mutex_lock (&self->lock);
  if (!self->checked_role)
    {
      self->checked_role = TRUE;
      g_free (self->server_version);
      self->server_version = g_strdup (facts.version);
      g_free (self->warning);
      self->warning = g_strdup (message);
    }
  else
    g_clear_pointer (&message, g_free);
  g_mutex_unlock (&self->lock);

  if (message != NULL)
    {
      Warning *warning = g_new0 (Warning, 1);

      warning->self = g_object_ref (self);
      warning->message = message;
      g_main_context_invoke (self->context, emit_warning_cb, warning);
    }

  g_free (facts.role);
  g_free (facts.version);
  return TRUE;
}

/* Queries {{{1 */

/* Skips blanks and comments (-- … and nested slash-star comments) and
 * opening parentheses; returns the first keyword's length. */
static gsize
first_keyword (const char  *sql,
               const char **start)
{
  const char *p = sql;

  for (;;)
    {
      while (g_ascii_isspace (*p) || *p == '(')
        p++;
      if (p[0] == '-' && p[1] == '-')
        {
          p += strcspn (p, "\n");
          continue;
        }
      if (p[0] == '/' && p[1] == '*')
        {
          int depth = 0;

          while (*p != '\0')
            {
              if (p[0] == '/' && p[1] == '*')
                depth++, p += 2;
              else if (p[0] == '*' && p[1] == '/')
                {
                  p += 2;
                  if (--depth == 0)
                    break;
                }
              else
                p++;
            }
          continue;
        }
      break;
    }

  *start = p;
  while (g_ascii_isalpha (p[0]))
    p++;
  return p - *start;
}

static gboolean
check_statement_kind (const char  *sql,
                      GError     **error)
{
  static const char * const allowed[] = { "SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN" };
  const char *word;
  gsize length = first_keyword (sql, &word);
  g_autofree char *shown = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (allowed); i++)
    if (length == strlen (allowed[i]) && g_ascii_strncasecmp (word, allowed[i], length) == 0)
      return TRUE;

  if (length == 0)
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                           "query_database is read-only and runs one query: the statement must "
                           "start with SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN");
      return FALSE;
    }

  shown = g_ascii_strup (word, (gssize) MIN (length, 40));
  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
               "query_database is read-only: %s statements are refused. Send one query "
               "that starts with SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN", shown);
  return FALSE;
}

static void
set_result_error (Run         *run,
                  PGresult    *result,
                  guint        timeout_ms,
                  GError     **error)
{
  const char *state = PQresultErrorField (result, PG_DIAG_SQLSTATE);
  const char *primary = PQresultErrorField (result, PG_DIAG_MESSAGE_PRIMARY);
  const char *hint = PQresultErrorField (result, PG_DIAG_MESSAGE_HINT);
  const char *position = PQresultErrorField (result, PG_DIAG_STATEMENT_POSITION);
  g_autofree char *fallback = g_strdup (PQresultErrorMessage (result));
  g_autoptr(GString) message = g_string_new (primary ? primary : g_strstrip (fallback));

  if (position != NULL)
    g_string_append_printf (message, " (at character %s)", position);
  if (hint != NULL)
    g_string_append_printf (message, ". Hint: %s", hint);

  if (g_strcmp0 (state, SQLSTATE_READ_ONLY_TRANSACTION) == 0)
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                 "query_database is read-only: the server refused this statement: %s",
                 message->str);
  else if (g_strcmp0 (state, SQLSTATE_SYNTAX_ERROR) == 0 && primary != NULL &&
           strstr (primary, "multiple commands") != NULL)
    g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                         "query_database runs exactly one statement per call: send the "
                         "statements one at a time, without a second one after a semicolon");
  else if (g_strcmp0 (state, SQLSTATE_QUERY_CANCELED) == 0 &&
           g_cancellable_is_cancelled (run->cancellable))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
  else if (g_strcmp0 (state, SQLSTATE_QUERY_CANCELED) == 0 &&
           (run->timed_out || (primary != NULL && strstr (primary, "timeout") != NULL)))
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                 "The query was stopped after %u.%03u s, the time limit for one query. Make "
                 "it cheaper: add a LIMIT, filter earlier, or aggregate instead of listing rows",
                 timeout_ms / 1000, timeout_ms % 1000);
  else
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED, "PostgreSQL: %s",
                 message->str);
}

typedef enum {
  ATTEMPT_OK,
  ATTEMPT_FAILED,     /* error set; do not retry */
  ATTEMPT_LOST,       /* the connection was lost before any row: retry */
} Attempt;

static Attempt
run_attempt (Run            *run,
             const char     *sql,
             guint           timeout_ms,
             TallyPgRowFunc  func,
             gpointer        user_data,
             GError        **error)
{
  g_autofree char *begin = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree const char **values = NULL;
  g_autofree int *lengths = NULL;
  g_autofree guint32 *types = NULL;
  g_autofree guint32 *table_oids = NULL;
  g_autofree int *table_columns = NULL;
  TallyPgColumns columns = { 0, NULL, NULL, NULL, NULL };
  gboolean have_columns = FALSE;
  gboolean any_row = FALSE;
  g_autoptr(GError) query_error = NULL;
  PGresult *result;

  begin = g_strdup_printf ("BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = %u",
                           timeout_ms);
  if (!run_exec (run, begin, error))
    return PQstatus (run->conn) == CONNECTION_BAD && !run->abandoned ? ATTEMPT_LOST : ATTEMPT_FAILED;

  if (!PQsendQueryParams (run->conn, sql, 0, NULL, NULL, NULL, NULL, 0))
    {
      set_conn_error (error, "The PostgreSQL server cannot be reached", run->conn);
      return PQstatus (run->conn) == CONNECTION_BAD ? ATTEMPT_LOST : ATTEMPT_FAILED;
    }
  PQsetSingleRowMode (run->conn);

  while ((result = run_get_result (run)) != NULL)
    {
      ExecStatusType status = PQresultStatus (result);

      if ((status == PGRES_SINGLE_TUPLE || status == PGRES_TUPLES_OK) && !have_columns)
        {
          columns.n_columns = (guint) PQnfields (result);
          names = g_new0 (char *, columns.n_columns + 1);
          types = g_new0 (guint32, columns.n_columns + 1);
          table_oids = g_new0 (guint32, columns.n_columns + 1);
          table_columns = g_new0 (int, columns.n_columns + 1);
          for (guint i = 0; i < columns.n_columns; i++)
            {
              names[i] = g_strdup (PQfname (result, (int) i));
              types[i] = PQftype (result, (int) i);
              /* Where the column came from (docs/ledger.md §1). */
              table_oids[i] = PQftable (result, (int) i);
              table_columns[i] = PQftablecol (result, (int) i);
            }
          values = g_new0 (const char *, columns.n_columns + 1);
          lengths = g_new0 (int, columns.n_columns + 1);
          columns.names = (const char * const *) names;
          columns.types = types;
          columns.table_oids = table_oids;
          columns.table_columns = table_columns;
          have_columns = TRUE;
        }

      if (status == PGRES_SINGLE_TUPLE && !run->stop_requested)
        {
          for (guint i = 0; i < columns.n_columns; i++)
            {
              values[i] = PQgetisnull (result, 0, (int) i) ? NULL : PQgetvalue (result, 0, (int) i);
              lengths[i] = PQgetlength (result, 0, (int) i);
            }
          any_row = TRUE;
          if (!func (&columns, values, lengths, user_data))
            run->stop_requested = TRUE;
        }
      else if (status == PGRES_TUPLES_OK && !any_row && !run->stop_requested)
        {
          func (&columns, NULL, NULL, user_data);
        }
      else if (status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY)
        {
          /* SHOW and EXPLAIN give rows; nothing else gets this far. */
        }
      else if (status != PGRES_SINGLE_TUPLE && status != PGRES_TUPLES_OK &&
               query_error == NULL && !run->stop_requested)
        {
          set_result_error (run, result, timeout_ms, &query_error);
        }

      PQclear (result);
    }

  if (run->abandoned)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
      return ATTEMPT_FAILED;
    }

  if (query_error == NULL && PQstatus (run->conn) == CONNECTION_BAD)
    {
      set_conn_error (&query_error, "The connection to the PostgreSQL server was lost", run->conn);
      if (!any_row)
        {
          g_propagate_error (error, g_steal_pointer (&query_error));
          return ATTEMPT_LOST;
        }
    }

  if (query_error == NULL && g_cancellable_is_cancelled (run->cancellable))
    g_set_error_literal (&query_error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");

  /* The transaction is always rolled back, also after an error. Should
   * that fail, the connection is left out of the pool (release() sees it
   * is not idle) and the query's own outcome stands. */
  if (PQstatus (run->conn) == CONNECTION_OK)
    {
      g_autoptr(GError) rollback_error = NULL;

      run->cancel_sent = 0;
      run->deadline = 0;
      run->stop_requested = FALSE;
      if (!run_exec (run, "ROLLBACK", &rollback_error))
        g_debug ("PostgreSQL ROLLBACK failed: %s", rollback_error->message);
    }

  if (query_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&query_error));
      return ATTEMPT_FAILED;
    }

  return ATTEMPT_OK;
}

/**
 * tally_pg_source_query:
 * @self: a #TallyPgSource
 * @sql: one read-only statement
 * @timeout_ms: the statement's time limit in milliseconds, or 0 for the
 *   source's (tally_pg_source_set_statement_timeout_ms())
 * @func: (scope call): called with every row
 * @user_data: passed to @func
 * @cancellable: (nullable): sends a cancel request when it fires
 * @error: return location for a #GError
 *
 * Runs @sql in a `READ ONLY` transaction that is rolled back afterwards,
 * on a pooled connection, and hands the rows one by one to @func. When
 * @func returns %FALSE the rest is cancelled on the server. A connection
 * that turns out to be lost before the first row is opened again once and
 * the statement sent again. Blocking: call it from a worker thread.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT for empty SQL or a bad
 * connection string; %TALLY_TOOL_ERROR_REFUSED for a statement that is not
 * one query or that the read-only transaction refused;
 * %TALLY_TOOL_ERROR_FAILED for SQL errors, the time limit and connection
 * failures (libpq's message); %G_IO_ERROR_CANCELLED.
 *
 * Returns: %TRUE when the statement ran (or @func stopped it)
 */
gboolean
tally_pg_source_query (TallyPgSource   *self,
                       const char      *sql,
                       guint            timeout_ms,
                       TallyPgRowFunc   func,
                       gpointer         user_data,
                       GCancellable    *cancellable,
                       GError         **error)
{
  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), FALSE);
  g_return_val_if_fail (func != NULL, FALSE);

  if (sql == NULL || sql[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`sql` is required and must not be empty");
      return FALSE;
    }

  if (!check_statement_kind (sql, error))
    return FALSE;

  if (timeout_ms == 0)
    {
      g_mutex_lock (&self->lock);
      timeout_ms = self->timeout_ms;
      g_mutex_unlock (&self->lock);
    }

  for (int attempt = 0; attempt < 2; attempt++)
    {
      g_autoptr(GError) attempt_error = NULL;
      Run run = { 0 };
      Attempt outcome;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;

      run.conn = acquire (self, attempt > 0, cancellable, error);
      if (run.conn == NULL)
        {
          if (attempt > 0 && error != NULL && *error != NULL &&
              (*error)->domain == TALLY_TOOL_ERROR)
            g_prefix_error (error, "The connection to the PostgreSQL server was lost and could "
                                   "not be opened again. ");
          return FALSE;
        }
      run.cancellable = cancellable;
      run.deadline = g_get_monotonic_time () +
                     ((gint64) timeout_ms + DEADLINE_SLACK_MS) * G_TIME_SPAN_MILLISECOND;

      outcome = run_attempt (&run, sql, timeout_ms, func, user_data, &attempt_error);
      g_clear_pointer (&run.cancel, PQfreeCancel);
      release (self, run.conn, outcome != ATTEMPT_LOST && !run.abandoned);

      if (outcome == ATTEMPT_OK)
        return TRUE;
      if (outcome == ATTEMPT_FAILED || attempt > 0)
        {
          g_propagate_error (error, g_steal_pointer (&attempt_error));
          return FALSE;
        }
      /* Lost: the pool's other idle connections are likely gone too. */
      g_debug ("PostgreSQL connection lost, opening it again: %s", attempt_error->message);
    }

  g_assert_not_reached ();
}

/* The object {{{1 */

static void
tally_pg_source_finalize (GObject *object)
{
  TallyPgSource *self = TALLY_PG_SOURCE (object);
  PGconn *conn;

  while ((conn = g_queue_pop_head (&self->idle)) != NULL)
    PQfinish (conn);

  g_free (self->conninfo);
  g_free (self->redacted);
  g_free (self->server_version);
  g_free (self->warning);
  g_main_context_unref (self->context);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (tally_pg_source_parent_class)->finalize (object);
}

static void
tally_pg_source_class_init (TallyPgSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tally_pg_source_finalize;

  /**
   * TallyPgSource::warning:
   * @self: the source
   * @message: what is wrong, in words for the analyst
   *
   * Emitted once per source, in the main context that was the thread's
   * default when the source was made, when the role connected could
   * write (a superuser, or one with INSERT, UPDATE, DELETE or TRUNCATE on
   * a table or CREATE on a schema). Tally still only reads.
   */
  signals[SIGNAL_WARNING] =
    g_signal_new ("warning", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
tally_pg_source_init (TallyPgSource *self)
{
  g_mutex_init (&self->lock);
  g_queue_init (&self->idle);
  self->timeout_ms = TALLY_PG_SOURCE_DEFAULT_TIMEOUT_MS;
  self->context = g_main_context_ref_thread_default ();
}

/**
 * tally_pg_source_new:
 * @conninfo: a libpq connection string (`host=db dbname=sales`,
 *   `service=sales`) or URI (`postgresql://analyst@db/sales`)
 * @error: return location for a #GError
 *
 * Makes a source for @conninfo. Nothing is sent to a server yet; the
 * string is only checked with PQconninfoParse(). The first source loads
 * libpq (tally_pq_loader_load()).
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT when libpq cannot read
 * @conninfo (the message is libpq's); %TALLY_TOOL_ERROR_FAILED when
 * libpq cannot be loaded (the message names the library).
 *
 * Returns: (transfer full): a new source, or %NULL with @error set
 */
TallyPgSource *
tally_pg_source_new (const char  *conninfo,
                     GError     **error)
{
  TallyPgSource *self;
  g_autoptr(GError) load_error = NULL;
  PQconninfoOption *parsed;
  char *parse_error = NULL;

  g_return_val_if_fail (conninfo != NULL, NULL);

  if (!tally_pq_loader_load (&load_error))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "PostgreSQL cannot be reached: %s", load_error->message);
      return NULL;
    }

  parsed = PQconninfoParse (conninfo, &parse_error);
  if (parsed == NULL)
    {
      g_autofree char *redacted = tally_pg_conninfo_redact (conninfo);

      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "The PostgreSQL connection string “%s” cannot be read: %s", redacted,
                   parse_error ? g_strstrip (parse_error) : "out of memory");
      PQfreemem (parse_error);
      return NULL;
    }
  PQconninfoFree (parsed);

  self = g_object_new (TALLY_TYPE_PG_SOURCE, NULL);
  self->conninfo = g_strdup (conninfo);
  self->redacted = tally_pg_conninfo_redact (conninfo);
  return self;
}

G_LOCK_DEFINE_STATIC (shared);
static GHashTable *shared_sources;

/**
 * tally_pg_source_get_shared:
 * @conninfo: a libpq connection string or URI
 * @error: return location for a #GError
 *
 * Returns the process's source for @conninfo, making it the first time,
 * so that the tools of every turn share its connections, its server
 * version and its once-only warning. Thread-safe. Sources made here live
 * as long as the process.
 *
 * Errors: as tally_pg_source_new().
 *
 * Returns: (transfer full): the source, or %NULL with @error set
 */
TallyPgSource *
tally_pg_source_get_shared (const char  *conninfo,
                            GError     **error)
{
  TallyPgSource *source;

  g_return_val_if_fail (conninfo != NULL, NULL);

  G_LOCK (shared);
  if (shared_sources == NULL)
    shared_sources = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  source = g_hash_table_lookup (shared_sources, conninfo);
  if (source == NULL)
    {
      source = tally_pg_source_new (conninfo, error);
      if (source != NULL)
        g_hash_table_insert (shared_sources, g_strdup (conninfo), source);
    }
  if (source != NULL)
    g_object_ref (source);
  G_UNLOCK (shared);

  return source;
}

/**
 * tally_pg_source_get_redacted:
 * @self: a #TallyPgSource
 *
 * Returns: (transfer none): the connection string without its password
 *   (tally_pg_conninfo_redact()), safe to store and show
 */
const char *
tally_pg_source_get_redacted (TallyPgSource *self)
{
  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), NULL);
  return self->redacted;
}

/**
 * tally_pg_source_dup_database_name:
 * @self: a #TallyPgSource
 *
 * The database's name as written in the connection string (`dbname`, the
 * URI's path), without asking the server.
 *
 * Returns: (transfer full) (nullable): the name, or %NULL when the string
 *   names none (libpq then uses a service file, PGDATABASE or the user)
 */
char *
tally_pg_source_dup_database_name (TallyPgSource *self)
{
  PQconninfoOption *parsed;
  char *name = NULL;

  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), NULL);

  parsed = PQconninfoParse (self->conninfo, NULL);
  for (PQconninfoOption *o = parsed; o != NULL && o->keyword != NULL; o++)
    if (strcmp (o->keyword, "dbname") == 0 && o->val != NULL && o->val[0] != '\0')
      name = g_strdup (o->val);
  PQconninfoFree (parsed);

  return name;
}

/**
 * tally_pg_source_set_statement_timeout_ms:
 * @self: a #TallyPgSource
 * @timeout_ms: milliseconds a statement may run; at least 1
 *
 * Sets the `statement_timeout` that connections opened from now on get,
 * and the limit of a query run with a @timeout_ms of 0. Thread-safe.
 */
void
tally_pg_source_set_statement_timeout_ms (TallyPgSource *self,
                                          guint          timeout_ms)
{
  g_return_if_fail (TALLY_IS_PG_SOURCE (self));

  g_mutex_lock (&self->lock);
  self->timeout_ms = MAX (timeout_ms, 1);
  g_mutex_unlock (&self->lock);
}

/**
 * tally_pg_source_connect:
 * @self: a #TallyPgSource
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes sure one connection can be opened, and the first time learns the
 * server's version and checks the role (see #TallyPgSource::warning).
 * Blocking: call it from a worker thread, or use
 * tally_pg_source_connect_async().
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT, %TALLY_TOOL_ERROR_FAILED with
 * libpq's message, %G_IO_ERROR_CANCELLED.
 *
 * Returns: %TRUE when connected
 */
gboolean
tally_pg_source_connect (TallyPgSource  *self,
                         GCancellable   *cancellable,
                         GError        **error)
{
  PGconn *conn;

  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), FALSE);

  conn = acquire (self, FALSE, cancellable, error);
  if (conn == NULL)
    return FALSE;
  release (self, conn, TRUE);

  return check_role (self, cancellable, error);
}

static void
connect_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  GError *error = NULL;

  (void) task_data;
  if (tally_pg_source_connect (source_object, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * tally_pg_source_connect_async:
 * @self: a #TallyPgSource
 * @cancellable: (nullable): a #GCancellable
 * @callback: called in the thread-default main context when done
 * @user_data: passed to @callback
 *
 * tally_pg_source_connect() in a worker thread.
 */
void
tally_pg_source_connect_async (TallyPgSource       *self,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TALLY_IS_PG_SOURCE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_pg_source_connect_async);
  g_task_run_in_thread (task, connect_thread);
}

/**
 * tally_pg_source_connect_finish:
 * @self: a #TallyPgSource
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Errors: as tally_pg_source_connect().
 *
 * Returns: %TRUE when connected
 */
gboolean
tally_pg_source_connect_finish (TallyPgSource  *self,
                                GAsyncResult   *result,
                                GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * tally_pg_source_dup_server_version:
 * @self: a #TallyPgSource
 *
 * Returns: (transfer full) (nullable): the server's `server_version`
 *   ("15.5 (Debian 15.5-0+deb12u1)"), or %NULL before the first connection
 */
char *
tally_pg_source_dup_server_version (TallyPgSource *self)
{
  char *version;

  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), NULL);

  g_mutex_lock (&self->lock);
  version = g_strdup (self->server_version);
  g_mutex_unlock (&self->lock);
  return version;
}

/**
 * tally_pg_source_dup_engine:
 * @self: a #TallyPgSource
 *
 * The engine's name for the model: "PostgreSQL 15" (the major version of
 * `server_version`; "PostgreSQL 9.6" before version 10), or "PostgreSQL"
 * before the first connection. Does not connect.
 *
 * Returns: (transfer full): the name
 */
char *
tally_pg_source_dup_engine (TallyPgSource *self)
{
  g_autofree char *version = tally_pg_source_dup_server_version (self);
  g_auto(GStrv) parts = NULL;
  guint64 major;

  if (version == NULL || !g_ascii_isdigit (version[0]))
    return g_strdup ("PostgreSQL");

  version[strspn (version, "0123456789.")] = '\0';
  parts = g_strsplit (version, ".", 3);
  major = g_ascii_strtoull (parts[0], NULL, 10);
  if (major < 10 && parts[1] != NULL)
    return g_strdup_printf ("PostgreSQL %s.%s", parts[0], parts[1]);
  return g_strdup_printf ("PostgreSQL %s", parts[0]);
}

/**
 * tally_pg_source_dup_warning:
 * @self: a #TallyPgSource
 *
 * Returns: (transfer full) (nullable): the #TallyPgSource::warning message
 *   of this source, or %NULL when the role is read-only or was not checked
 *   yet
 */
char *
tally_pg_source_dup_warning (TallyPgSource *self)
{
  char *warning;

  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), NULL);

  g_mutex_lock (&self->lock);
  warning = g_strdup (self->warning);
  g_mutex_unlock (&self->lock);
  return warning;
}

/**
 * tally_pg_source_get_n_connections:
 * @self: a #TallyPgSource
 *
 * Returns: how many connections are open (idle or in use); for tests
 */
guint
tally_pg_source_get_n_connections (TallyPgSource *self)
{
  guint n;

  g_return_val_if_fail (TALLY_IS_PG_SOURCE (self), 0);

  g_mutex_lock (&self->lock);
  n = self->n_open;
  g_mutex_unlock (&self->lock);
  return n;
}
