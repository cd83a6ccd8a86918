/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-query-database.h"
#include "tally-pg-query.h"
#include "tally-query-text.h"
#include "tally-result-origin.h"
#include "tally-sensitive-columns.h"
#include "tally-sql-select.h"
#include "tally-tool-private.h"

#include <string.h>

/* SQLite VM instructions between two looks at the GCancellable, the
 * clock and the memory in use. */
#define PROGRESS_STEPS 4096

/* Limits of one query connection (docs/security.md, "Query limits"). */
#define QUERY_MAX_LENGTH      (32 * 1024 * 1024)   /* a string, BLOB or row */
#define QUERY_MAX_SQL_LENGTH  (1024 * 1024)        /* the SQL text */
#define QUERY_MAX_MEMORY      ((gint64) 256 * 1024 * 1024)
/* Process-wide backstop for all of SQLite's memory, set once. */
#define SQLITE_HARD_HEAP_LIMIT ((gint64) 1024 * 1024 * 1024)

/**
 * TallyToolQueryDatabase:
 *
 * The `query_database` tool: runs one read-only SQL statement against the
 * analyst's SQLite database and returns the rows as a compact text table.
 *
 * Input (docs/architecture.md §8.1): `{sql, max_rows?}`.
 *
 * Reading only is enforced in three layers: the file is opened with
 * %SQLITE_OPEN_READONLY, `PRAGMA query_only` is on, and an authorizer
 * (sqlite3_set_authorizer()) admits only SELECT, reads, functions,
 * recursive CTEs and a short list of informational pragmas. Each run opens
 * its own connection, so runs never share state.
 */
struct _TallyToolQueryDatabase
{
  TallyTool parent_instance;

  /* Read by runs in worker threads. */
  gint      timeout_ms;
  gint64    max_memory;
};

G_DEFINE_FINAL_TYPE (TallyToolQueryDatabase, tally_tool_query_database, TALLY_TYPE_TOOL)

/**
 * TallyToolDatabase:
 *
 * A read-only connection to the analyst's database for the length of one
 * tool run (see tally_tool_database_open()). Used from one thread only.
 */
struct _TallyToolDatabase
{
  sqlite3      *db;
  GCancellable *cancellable;
  char         *path;
  /* What the authorizer refused first while preparing the last statement,
   * in words for the model ("INSERT"), or NULL. */
  char         *denied;

  /* Limits of the statements run (tally_tool_database_set_limits()). */
  gint64        deadline;        /* monotonic µs, 0 for none */
  guint         timeout_ms;
  gint64        memory_base;     /* sqlite3_memory_used() at the start */
  gint64        max_memory;      /* 0 for none */
  gboolean      timed_out;
  gboolean      out_of_memory;

  /* While not NULL, the authorizer adds the `table.column` of every
   * SQLITE_READ to it (the taint check, docs/ledger.md §3). */
  GPtrArray    *reads;
};

/* Pragmas that only describe the schema. Anything else (journal_mode,
 * writable_schema, query_only, user_version, ...) is refused, including in
 * its reading form, so that the list stays easy to audit. */
static const char * const allowed_pragmas[] = {
  "table_info",
  "table_xinfo",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "collation_list",
  "function_list",
};

static gboolean
pragma_is_allowed (const char *name)
{
  if (name == NULL)
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (allowed_pragmas); i++)
    {
      if (g_ascii_strcasecmp (name, allowed_pragmas[i]) == 0)
        return TRUE;
    }

  return FALSE;
}

/* Table-valued functions that are admitted although the authorizer never
 * sees them declared: tally_tool_database_open() uses each once before it
 * sets the authorizer (docs/security.md, "Table-valued functions"). */
static const char * const admitted_table_functions[] = {
  "json_each",
  "json_tree",
};

static gboolean
is_admitted_table_function (const char *name)
{
  if (name == NULL)
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (admitted_table_functions); i++)
    {
      if (g_ascii_strcasecmp (name, admitted_table_functions[i]) == 0)
        return TRUE;
    }

  return FALSE;
}

static gboolean
is_schema_table (const char *name)
{
  return name != NULL &&
         (g_ascii_strcasecmp (name, "sqlite_master") == 0 ||
          g_ascii_strcasecmp (name, "sqlite_temp_master") == 0 ||
          g_ascii_strcasecmp (name, "sqlite_schema") == 0 ||
          g_ascii_strcasecmp (name, "sqlite_temp_schema") == 0);
}

static char *
describe_action (int         action,
                 const char *arg1,
                 const char *arg2)
{
  /* Creating, dropping or altering anything first writes SQLite's own
   * schema table, and that is the action the authorizer sees first. */
  if ((action == SQLITE_INSERT || action == SQLITE_DELETE) && is_schema_table (arg1))
    return g_strdup ("changing the schema (CREATE, DROP, ALTER)");
  /* The first use of a table-valued function is seen as an UPDATE of the
   * schema table too (see tally_tool_database_open()), and that is the
   * likelier reason in a read-only tool: the model is told both. */
  if (action == SQLITE_UPDATE && is_schema_table (arg1))
    return g_strdup ("a table-valued function other than json_each() and json_tree() "
                     "(such as dbstat), or changing the schema");

  switch (action)
    {
    case SQLITE_INSERT:             return g_strdup ("INSERT");
    case SQLITE_UPDATE:             return g_strdup ("UPDATE");
    case SQLITE_DELETE:             return g_strdup ("DELETE");
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_TEMP_INDEX:  return g_strdup ("CREATE INDEX");
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_TEMP_TABLE:  return g_strdup ("CREATE TABLE");
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_CREATE_TEMP_TRIGGER: return g_strdup ("CREATE TRIGGER");
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_TEMP_VIEW:   return g_strdup ("CREATE VIEW");
    case SQLITE_CREATE_VTABLE:      return g_strdup ("CREATE VIRTUAL TABLE");
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX:    return g_strdup ("DROP INDEX");
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_TABLE:    return g_strdup ("DROP TABLE");
    case SQLITE_DROP_TRIGGER:
    case SQLITE_DROP_TEMP_TRIGGER:  return g_strdup ("DROP TRIGGER");
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_TEMP_VIEW:     return g_strdup ("DROP VIEW");
    case SQLITE_DROP_VTABLE:        return g_strdup ("DROP VIRTUAL TABLE");
    case SQLITE_ALTER_TABLE:        return g_strdup ("ALTER TABLE");
    case SQLITE_ATTACH:
      /* VACUUM attaches a temporary database without a name. */
      if (arg1 == NULL || arg1[0] == '\0')
        return g_strdup ("VACUUM");
      return g_strdup ("ATTACH (or VACUUM INTO)");
    case SQLITE_DETACH:             return g_strdup ("DETACH");
    case SQLITE_REINDEX:            return g_strdup ("REINDEX");
    case SQLITE_ANALYZE:            return g_strdup ("ANALYZE");
    case SQLITE_TRANSACTION:
      return g_strdup_printf ("%s (transactions)", arg1 ? arg1 : "BEGIN");
    case SQLITE_SAVEPOINT:
      /* arg1 is the operation: BEGIN (SAVEPOINT), RELEASE or ROLLBACK. */
      if (g_strcmp0 (arg1, "RELEASE") == 0)
        return g_strdup ("RELEASE (of a savepoint)");
      if (g_strcmp0 (arg1, "ROLLBACK") == 0)
        return g_strdup ("ROLLBACK TO (a savepoint)");
      return g_strdup ("SAVEPOINT");
    case SQLITE_PRAGMA:
      if (arg2 != NULL)
        return g_strdup_printf ("PRAGMA %s = %s", arg1 ? arg1 : "?", arg2);
      return g_strdup_printf ("PRAGMA %s", arg1 ? arg1 : "?");
    case SQLITE_FUNCTION:
      return g_strdup_printf ("the function %s()", arg2 ? arg2 : "?");
    default:
      return g_strdup_printf ("this statement (action %d)", action);
    }
}

static int
authorize_cb (void       *user_data,
              int         action,
              const char *arg1,
              const char *arg2,
              const char *db_name,
              const char *trigger)
{
  TallyToolDatabase *database = user_data;

  switch (action)
    {
    case SQLITE_READ:
      if (database->reads != NULL && arg1 != NULL && arg2 != NULL)
        g_ptr_array_add (database->reads, g_strdup_printf ("%s.%s", arg1, arg2));
      return SQLITE_OK;

    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;

    case SQLITE_FUNCTION:
      /* Extension loading is off on this connection anyway.
       * fts3_tokenizer() hands out (one argument) or takes (two, where
       * SQLite was built to allow it) a raw C pointer to a tokenizer:
       * nothing a query needs, and the second form could point SQLite at
       * any address. */
      if (arg2 == NULL ||
          (g_ascii_strcasecmp (arg2, "load_extension") != 0 && g_ascii_strcasecmp (arg2, "fts3_tokenizer") != 0))
        return SQLITE_OK;
      break;

    case SQLITE_PRAGMA:
      if (pragma_is_allowed (arg1))
        return SQLITE_OK;
      break;

    default:
      break;
    }

  /* SQLite stops at the first refusal, so the first one is what the model
   * is told about. */
  if (database->denied == NULL)
    database->denied = describe_action (action, arg1, arg2);

  return SQLITE_DENY;
}

static int
progress_cb (void *user_data)
{
  TallyToolDatabase *database = user_data;

  if (g_cancellable_is_cancelled (database->cancellable))
    return 1;

  if (database->deadline != 0 && g_get_monotonic_time () >= database->deadline)
    {
      database->timed_out = TRUE;
      return 1;
    }

  /* SQLite's memory is counted for the whole process; what grew since the
   * statement started is this query's (docs/security.md). */
  if (database->max_memory > 0 &&
      sqlite3_memory_used () - database->memory_base > database->max_memory)
    {
      database->out_of_memory = TRUE;
      return 1;
    }

  return 0;
}

/**
 * tally_tool_database_set_limits:
 * @database: an open database
 * @timeout_ms: wall-clock time the statements may take from now, or 0 for
 *   no deadline
 * @max_memory: bytes of SQLite memory the statements may add, or 0 for no
 *   limit
 *
 * Starts the deadline and the memory budget that the progress handler
 * enforces: a statement that passes either is stopped and fails with
 * %TALLY_TOOL_ERROR_FAILED and a message that says which limit it hit.
 */
void
tally_tool_database_set_limits (TallyToolDatabase *database,
                                guint              timeout_ms,
                                gint64             max_memory)
{
  database->timeout_ms = timeout_ms;
  database->deadline = timeout_ms > 0 ? g_get_monotonic_time () + (gint64) timeout_ms * 1000 : 0;
  database->max_memory = MAX (max_memory, 0);
  database->memory_base = sqlite3_memory_used ();
  database->timed_out = FALSE;
  database->out_of_memory = FALSE;
}

/* Sets the error for a statement the progress handler stopped at a limit;
 * FALSE when no limit was hit. */
static gboolean
set_limit_error (TallyToolDatabase  *database,
                 GError            **error)
{
  if (database->timed_out)
    {
      g_autofree char *seconds = tally_tool_format_seconds (database->timeout_ms);

      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The query was stopped after %s, the time limit for one query. "
                   "Make it cheaper: add a LIMIT, filter earlier, make sure a recursive "
                   "CTE ends, or aggregate instead of listing rows", seconds);
      return TRUE;
    }

  if (database->out_of_memory)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The query was stopped after using more than %" G_GINT64_FORMAT " MiB of "
                   "memory, the limit for one query. Sort or group fewer rows, add a LIMIT, "
                   "or make sure a recursive CTE ends",
                   database->max_memory / (1024 * 1024));
      return TRUE;
    }

  return FALSE;
}

/**
 * tally_tool_database_free:
 * @database: (transfer full): an open database
 *
 * Closes the connection.
 */
void
tally_tool_database_free (TallyToolDatabase *database)
{
  if (database == NULL)
    return;

  sqlite3_close_v2 (database->db);
  g_clear_object (&database->cancellable);
  g_free (database->path);
  g_free (database->denied);
  g_clear_pointer (&database->reads, g_ptr_array_unref);
  g_free (database);
}

static gboolean
is_unreadable_file_error (int rc)
{
  rc &= 0xff;
  return rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT || rc == SQLITE_CANTOPEN ||
         rc == SQLITE_IOERR;
}

/**
 * tally_tool_database_open:
 * @context: the tool context; its `database_path` is opened
 * @cancellable: (nullable): watched by a progress handler while statements
 *   run
 * @error: return location for a #GError
 *
 * Opens the context's database read-only for one tool run: the file is
 * opened with %SQLITE_OPEN_READONLY, `PRAGMA query_only` is set, defensive
 * mode is on, ATTACH is limited to zero databases, and an authorizer
 * refuses everything but reading. The schema is read once here, so a file
 * that is not a database fails now with a clear message.
 *
 * Errors: %TALLY_TOOL_ERROR_FAILED when no database is configured, the file
 * is missing, unreadable, or not a SQLite database.
 *
 * Returns: (transfer full): the database, or %NULL with @error set
 */
static gsize heap_limit_set;

TallyToolDatabase *
tally_tool_database_open (const TallyToolContext  *context,
                          GCancellable            *cancellable,
                          GError                 **error)
{
  g_autoptr(TallyToolDatabase) database = NULL;
  const char *path = context ? context->database_path : NULL;
  char *errmsg = NULL;
  int rc;

  if (path == NULL || path[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                           "No database is configured for this session");
      return NULL;
    }

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The database file %s does not exist", path);
      return NULL;
    }

  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The database path %s is not a file", path);
      return NULL;
    }

  /* The per-query budget is checked between VM steps; this process-wide
   * hard limit is the backstop for what happens inside one step, shared
   * with the session store's connections (docs/security.md). */
  if (g_once_init_enter (&heap_limit_set))
    {
      sqlite3_int64 current = sqlite3_hard_heap_limit64 (-1);

      if (current == 0 || current > SQLITE_HARD_HEAP_LIMIT)
        sqlite3_hard_heap_limit64 (SQLITE_HARD_HEAP_LIMIT);
      g_once_init_leave (&heap_limit_set, 1);
    }

  database = g_new0 (TallyToolDatabase, 1);
  database->path = g_strdup (path);
  database->cancellable = cancellable ? g_object_ref (cancellable) : NULL;

  rc = sqlite3_open_v2 (path, &database->db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot open the database %s: %s", path,
                   database->db ? sqlite3_errmsg (database->db) : sqlite3_errstr (rc));
      return NULL;
    }

  sqlite3_extended_result_codes (database->db, 1);
  sqlite3_busy_timeout (database->db, 5000);
  sqlite3_limit (database->db, SQLITE_LIMIT_ATTACHED, 0);
  /* A runaway statement must not build gigantic values, read a megabyte
   * of SQL or sort in helper threads that the memory budget cannot see. */
  sqlite3_limit (database->db, SQLITE_LIMIT_LENGTH, QUERY_MAX_LENGTH);
  sqlite3_limit (database->db, SQLITE_LIMIT_SQL_LENGTH, QUERY_MAX_SQL_LENGTH);
  sqlite3_limit (database->db, SQLITE_LIMIT_WORKER_THREADS, 0);
  sqlite3_db_config (database->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (database->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
  sqlite3_db_config (database->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);

  /* Reading sqlite_master loads the schema: a file that is not a
   * database, or is damaged, fails here rather than on the model's SQL. */
  /* Temporary tables, sorts and recursive CTE queues stay in memory,
   * where the memory budget (tally_tool_database_set_limits()) bounds
   * them, instead of temporary files that nothing bounds. */
  rc = sqlite3_exec (database->db,
                     "PRAGMA query_only = 1;"
                     "PRAGMA temp_store = MEMORY;"
                     "SELECT count(*) FROM sqlite_master;",
                     NULL, NULL, &errmsg);
  if (rc != SQLITE_OK)
    {
      if (is_unreadable_file_error (rc))
        g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                     "The database %s cannot be read (%s); it may be damaged or "
                     "not a SQLite database", path, errmsg ? errmsg : sqlite3_errstr (rc));
      else
        g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                     "Cannot open the database %s: %s", path,
                     errmsg ? errmsg : sqlite3_errstr (rc));
      sqlite3_free (errmsg);
      return NULL;
    }

  /* The first use of a table-valued function such as json_each() on a
   * connection declares its table, and SQLite shows that declaration to the
   * authorizer as an UPDATE of sqlite_master, which is refused as a schema
   * change. Nothing is written (the declaration lives in the connection's
   * memory and is kept until it closes), so the admitted functions are
   * declared here, before the authorizer is set, and the authorizer stays
   * as strict as it was: any other such function (pragma_table_info(),
   * dbstat, ...) is still refused (docs/security.md, "Table-valued
   * functions"). Where SQLite has no JSON functions the prepare fails and
   * the model's query later fails with "no such table". */
  for (guint i = 0; i < G_N_ELEMENTS (admitted_table_functions); i++)
    {
      g_autofree char *declare = g_strdup_printf ("SELECT * FROM %s", admitted_table_functions[i]);
      sqlite3_stmt *stmt = NULL;

      sqlite3_prepare_v2 (database->db, declare, -1, &stmt, NULL);
      sqlite3_finalize (stmt);
    }

  sqlite3_set_authorizer (database->db, authorize_cb, database);
  sqlite3_progress_handler (database->db, PROGRESS_STEPS, progress_cb, database);

  return g_steal_pointer (&database);
}

/**
 * tally_tool_database_get_db:
 * @database: an open database
 *
 * Returns: (transfer none): the SQLite connection
 */
sqlite3 *
tally_tool_database_get_db (TallyToolDatabase *database)
{
  return database->db;
}

static const char *
strstr_ascii_nocase (const char *haystack,
                     const char *needle)
{
  gsize n = strlen (needle);

  for (const char *p = haystack; *p != '\0'; p++)
    {
      if (g_ascii_strncasecmp (p, needle, n) == 0)
        return p;
    }

  return NULL;
}

/* TRUE when only whitespace, semicolons and comments follow the first
 * statement. An unterminated block comment runs to the end, as in SQLite. */
static gboolean
tail_is_empty (const char *p)
{
  while (*p != '\0')
    {
      if (g_ascii_isspace (*p) || *p == ';')
        p++;
      else if (p[0] == '-' && p[1] == '-')
        {
          while (*p != '\0' && *p != '\n')
            p++;
        }
      else if (p[0] == '/' && p[1] == '*')
        {
          const char *end = strstr (p + 2, "*/");

          if (end == NULL)
            return TRUE;
          p = end + 2;
        }
      else
        return FALSE;
    }

  return TRUE;
}

/**
 * tally_tool_database_set_step_error:
 * @database: an open database
 * @rc: what sqlite3_step() returned
 * @error: return location for a #GError
 *
 * Turns a failed step into a #GError: %G_IO_ERROR_CANCELLED when the
 * progress handler stopped it, %TALLY_TOOL_ERROR_FAILED with SQLite's
 * message otherwise.
 *
 * Returns: %FALSE when @rc is an error (and @error is set), %TRUE for
 *   %SQLITE_ROW and %SQLITE_DONE
 */
gboolean
tally_tool_database_set_step_error (TallyToolDatabase  *database,
                                    int                 rc,
                                    GError            **error)
{
  if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    return TRUE;

  if ((rc & 0xff) == SQLITE_INTERRUPT &&
      g_cancellable_set_error_if_cancelled (database->cancellable, error))
    return FALSE;

  if ((rc & 0xff) == SQLITE_INTERRUPT && set_limit_error (database, error))
    return FALSE;

  if ((rc & 0xff) == SQLITE_NOMEM && database->max_memory > 0)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "The query ran out of memory (SQLite: %s). Sort or group fewer rows, "
                   "add a LIMIT, or make sure a recursive CTE ends",
                   sqlite3_errmsg (database->db));
      return FALSE;
    }

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
               "SQL error: %s", sqlite3_errmsg (database->db));
  return FALSE;
}

/**
 * tally_tool_database_prepare:
 * @database: an open database
 * @sql: SQL text holding exactly one statement
 * @error: return location for a #GError
 *
 * Prepares one statement and checks that it only reads.
 *
 * Errors: %TALLY_TOOL_ERROR_REFUSED when the statement would write, is not
 * allowed by the authorizer, or is followed by another statement;
 * %TALLY_TOOL_ERROR_INVALID_INPUT when @sql holds no statement;
 * %TALLY_TOOL_ERROR_FAILED with SQLite's message for any other SQL error
 * (e.g. "no such column: Foo").
 *
 * Returns: (transfer full): the statement (finalize with
 *   sqlite3_finalize()), or %NULL with @error set
 */
sqlite3_stmt *
tally_tool_database_prepare (TallyToolDatabase  *database,
                             const char         *sql,
                             GError            **error)
{
  sqlite3_stmt *stmt = NULL;
  const char *tail = NULL;
  int rc;

  g_clear_pointer (&database->denied, g_free);

  rc = sqlite3_prepare_v2 (database->db, sql, -1, &stmt, &tail);

  if (rc != SQLITE_OK)
    {
      if (database->denied != NULL || (rc & 0xff) == SQLITE_AUTH)
        {
          if (database->denied != NULL && g_str_has_prefix (database->denied, "PRAGMA"))
            g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                         "query_database is read-only: %s is not allowed. Only the "
                         "informational pragmas table_info, table_xinfo, index_list, "
                         "index_info, index_xinfo, foreign_key_list, collation_list "
                         "and function_list can be used (as PRAGMA name(argument))",
                         database->denied);
          else if (strstr_ascii_nocase (sql, "pragma_") != NULL)
            /* A table-valued pragma function's first use declares its
             * table, which the authorizer sees as a write of the schema
             * table; only json_each() and json_tree() are declared ahead
             * (tally_tool_database_open()). */
            g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                                 "query_database is read-only and table-valued pragma "
                                 "functions such as pragma_table_info() are not available; "
                                 "use the statement form, e.g. PRAGMA table_info(name), "
                                 "or get_schema");
          else
            g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                         "query_database is read-only: %s is not allowed",
                         database->denied ? database->denied : "this statement");
        }
      else if ((rc & 0xff) == SQLITE_INTERRUPT &&
               g_cancellable_set_error_if_cancelled (database->cancellable, error))
        ;
      else
        g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                     "SQL error: %s", sqlite3_errmsg (database->db));

      sqlite3_finalize (stmt);
      return NULL;
    }

  if (stmt == NULL)
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`sql` holds no SQL statement (only whitespace or comments)");
      return NULL;
    }

  if (tail != NULL && !tail_is_empty (tail))
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                           "query_database runs one statement at a time; send each "
                           "statement in its own call");
      sqlite3_finalize (stmt);
      return NULL;
    }

  if (!sqlite3_stmt_readonly (stmt))
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                           "query_database is read-only: this statement would change "
                           "the database");
      sqlite3_finalize (stmt);
      return NULL;
    }

  return stmt;
}

/* Appends a cell: text as tally_query_text_append_value() writes it. */
static void
append_cell (GString      *out,
             sqlite3_stmt *stmt,
             int           column)
{
  switch (sqlite3_column_type (stmt, column))
    {
    case SQLITE_NULL:
      g_string_append (out, "NULL");
      break;

    case SQLITE_INTEGER:
      g_string_append_printf (out, "%lld", (long long) sqlite3_column_int64 (stmt, column));
      break;

    case SQLITE_FLOAT:
      {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];

        /* %.15g keeps what a double reliably holds and drops the binary
         * noise (0.1 + 0.2 shows as 0.3); g_ascii_formatd ignores the
         * locale, so the decimal point is always a dot. */
        g_ascii_formatd (buf, sizeof buf, "%.15g", sqlite3_column_double (stmt, column));
        g_string_append (out, buf);
      }
      break;

    case SQLITE_BLOB:
      {
        g_autofree char *count = tally_format_count ((gint64) (sqlite3_column_bytes (stmt, column)), TALLY_GROUPING_COMMA);

        g_string_append_printf (out, "<blob %s bytes>", count);
      }
      break;

    case SQLITE_TEXT:
    default:
      tally_query_text_append_value (out, (const char *) sqlite3_column_text (stmt, column),
                                     (gsize) sqlite3_column_bytes (stmt, column));
      break;
    }
}

/* The one way a statement of the model's reaches the database: checks the
 * text, opens a read-only connection with the tool's limits (timeout,
 * memory) and prepares the statement through the authorizer. Shared by
 * query_run() and tally_tool_query_database_fetch_rows(), so create_chart
 * runs its `sql` exactly as query_database does. */
static sqlite3_stmt *
query_prepare (TallyToolQueryDatabase  *self,
               const TallyToolContext  *context,
               const char              *sql,
               GCancellable            *cancellable,
               TallyToolDatabase      **out_database,
               GError                 **error)
{
  g_autoptr(TallyToolDatabase) database = NULL;
  sqlite3_stmt *stmt;

  if (sql == NULL || sql[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`sql` is required and must not be empty");
      return NULL;
    }

  database = tally_tool_database_open (context, cancellable, error);
  if (database == NULL)
    return NULL;

  tally_tool_database_set_limits (database,
                                  (guint) g_atomic_int_get (&self->timeout_ms),
                                  self->max_memory);

  /* What the statement reads, for query_origin(). */
  database->reads = g_ptr_array_new_with_free_func (g_free);
  stmt = tally_tool_database_prepare (database, sql, error);
  if (stmt == NULL)
    return NULL;

  *out_database = g_steal_pointer (&database);
  return stmt;
}

/* Origins and the taint check (docs/ledger.md §1, §3) {{{1 */

/* The reads of a probe statement, or NULL when it does not prepare. */
static GPtrArray *
probe_reads (TallyToolDatabase *database,
             const char        *sql)
{
  g_autoptr(GPtrArray) reads = g_ptr_array_new_with_free_func (g_free);
  sqlite3_stmt *stmt = NULL;
  int rc;

  g_clear_pointer (&database->reads, g_ptr_array_unref);
  database->reads = g_ptr_array_ref (reads);
  rc = sqlite3_prepare_v2 (database->db, sql, -1, &stmt, NULL);
  sqlite3_finalize (stmt);
  g_clear_pointer (&database->reads, g_ptr_array_unref);
  g_clear_pointer (&database->denied, g_free);

  return rc == SQLITE_OK ? g_steal_pointer (&reads) : NULL;
}

static gboolean
read_is_marked (const char         *read,
                const char * const *marked)
{
  const char *dot = strrchr (read, '.');
  g_autofree char *table = NULL;

  if (dot == NULL)
    return FALSE;
  table = g_strndup (read, dot - read);
  return tally_sensitive_columns_match (marked, NULL, table, dot + 1);
}

static gboolean
reads_marked (GPtrArray          *reads,
              const char * const *marked)
{
  for (guint i = 0; reads != NULL && i < reads->len; i++)
    if (read_is_marked (g_ptr_array_index (reads, i), marked))
      return TRUE;
  return FALSE;
}

/* Whether a read can carry a marked column's value. SQLITE_READ names a
 * view's column under the view's name, so a read is followed to its origin
 * (`SELECT "column" FROM "table"`): a table's own column or a view's plain
 * copy of a marked column is marked; a view column that computes its value
 * is in doubt, so it counts as marked (docs/ledger.md §3). */
static gboolean
read_carries_marked (TallyToolDatabase  *database,
                     const char         *read,
                     const char * const *marked)
{
  const char *dot = strrchr (read, '.');
  g_autofree char *table = NULL;
  sqlite3_stmt *stmt = NULL;
  char *sql;
  gboolean carries = TRUE;

  if (read_is_marked (read, marked))
    return TRUE;
  /* No column: a table read for its rows only (count(*)). */
  if (dot == NULL || dot[1] == '\0')
    return FALSE;

  table = g_strndup (read, dot - read);
  /* json_each() and json_tree() give out the values of their arguments,
   * which the statement may have read from a marked column: in doubt. */
  if (is_admitted_table_function (table))
    return TRUE;
  sql = sqlite3_mprintf ("SELECT \"%w\" FROM \"%w\"", dot + 1, table);
  if (sql != NULL &&
      sqlite3_prepare_v2 (database->db, sql, -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_column_count (stmt) == 1)
    {
      const char *origin_table = sqlite3_column_table_name (stmt, 0);
      const char *origin_name = sqlite3_column_origin_name (stmt, 0);

      if (origin_table != NULL && origin_name != NULL)
        carries = is_admitted_table_function (origin_table) ||
                  tally_sensitive_columns_match (marked, NULL, origin_table, origin_name);
    }
  sqlite3_finalize (stmt);
  sqlite3_free (sql);
  g_clear_pointer (&database->denied, g_free);

  return carries;
}

/* Marks a derived column from what its item reads beyond the baseline
 * probe (a multiset difference: an item that reads a column the WHERE
 * clause reads too still counts it). */
static void
taint_from_probe (TallyToolDatabase  *database,
                  TallyOriginColumn  *column,
                  TallySqlItem       *item,
                  GPtrArray          *reads,
                  GPtrArray          *baseline,
                  const char * const *marked)
{
  g_autoptr(GPtrArray) extra = g_ptr_array_new ();
  gboolean *used = g_new0 (gboolean, reads->len + 1);

  for (guint b = 0; b < baseline->len; b++)
    for (guint r = 0; r < reads->len; r++)
      if (!used[r] && g_ascii_strcasecmp (g_ptr_array_index (reads, r), g_ptr_array_index (baseline, b)) == 0)
        {
          used[r] = TRUE;
          break;
        }

  for (guint r = 0; r < reads->len; r++)
    if (!used[r])
      g_ptr_array_add (extra, g_ptr_array_index (reads, r));
  g_free (used);

  for (guint i = 0; i < extra->len; i++)
    {
      tally_origin_column_add_source (column, g_ptr_array_index (extra, i));
      if (read_carries_marked (database, g_ptr_array_index (extra, i), marked))
        column->redacted = TRUE;
    }

  /* A name the probe did not see as a table read (a column of a derived
   * table or view, an alias): it may carry the marked column the rest of
   * the statement reads. */
  if (item->n_references > extra->len)
    column->redacted = TRUE;
}

/* Where each column of @stmt came from and which must be redacted. The
 * statement's own reads are in database->reads (query_prepare()). */
static TallyResultOrigin *
query_origin (TallyToolDatabase  *database,
              sqlite3_stmt       *stmt,
              const char         *sql,
              const char * const *marked)
{
  g_autoptr(TallyResultOrigin) origin = tally_result_origin_new ();
  g_autoptr(GPtrArray) statement_reads = g_steal_pointer (&database->reads);
  g_autoptr(TallySqlSelect) select = NULL;
  g_autoptr(GPtrArray) baseline = NULL;
  int n_columns = sqlite3_column_count (stmt);
  gboolean in_doubt;

  for (int i = 0; i < n_columns; i++)
    {
      TallyOriginColumn *column = tally_result_origin_add_column (origin, sqlite3_column_name (stmt, i));
      const char *table = sqlite3_column_table_name (stmt, i);
      const char *name = sqlite3_column_origin_name (stmt, i);

      if (table != NULL && name != NULL)
        {
          tally_origin_column_set_direct (column, NULL, table, name);
          column->redacted = tally_sensitive_columns_match (marked, NULL, table, name);
        }
    }

  for (guint i = 0; statement_reads != NULL && i < statement_reads->len; i++)
    tally_result_origin_add_read (origin, g_ptr_array_index (statement_reads, i));
  for (guint i = 0; i < origin->columns->len; i++)
    {
      TallyOriginColumn *column = g_ptr_array_index (origin->columns, i);

      if (!column->derived)
        tally_result_origin_add_read (origin, g_ptr_array_index (column->sources, 0));
    }

  /* Derived columns can only carry a marked value the statement reads. */
  if (!reads_marked (statement_reads, marked))
    return g_steal_pointer (&origin);

  select = tally_sql_select_parse (sql, NULL);
  in_doubt = select == NULL || select->compound || select->items->len != (guint) n_columns;
  for (guint i = 0; !in_doubt && i < select->items->len; i++)
    in_doubt = ((TallySqlItem *) g_ptr_array_index (select->items, i))->star;
  if (!in_doubt)
    {
      g_autofree char *probe = tally_sql_select_dup_probe (select, -1);

      baseline = probe_reads (database, probe);
      in_doubt = baseline == NULL;
    }

  for (int i = 0; i < n_columns; i++)
    {
      TallyOriginColumn *column = g_ptr_array_index (origin->columns, i);
      g_autofree char *probe = NULL;
      g_autoptr(GPtrArray) reads = NULL;

      /* SQLite gives a compound's result column the origin of its first
       * arm only (the column of `SELECT Name FROM Artist UNION SELECT
       * Email FROM Customer` comes "from Artist.Name"), so in a compound,
       * or a statement that could not be split and may be one, no column
       * is known to be a plain copy of an unmarked column: each is
       * redacted (docs/ledger.md §3, rule 4). A column of json_each() or
       * json_tree() looks direct, but its values are those of the
       * function's arguments, which may come from the marked column the
       * statement reads (rule 1). */
      if (!column->derived)
        {
          if (select == NULL || select->compound || is_admitted_table_function (column->table))
            column->redacted = TRUE;
          continue;
        }

      if (in_doubt)
        {
          column->redacted = TRUE;
          continue;
        }

      probe = tally_sql_select_dup_probe (select, i);
      reads = probe_reads (database, probe);
      if (reads == NULL)
        column->redacted = TRUE;
      else
        taint_from_probe (database, column, g_ptr_array_index (select->items, i), reads, baseline, marked);
    }

  return g_steal_pointer (&origin);
}

/* Ends the steps of a statement from query_prepare(): finalizes @stmt
 * and, when the last step's @rc is an error, sets @error to it. SQLite's
 * JSON functions quote the argument that failed ("JSON path error near
 * '…'"): when the statement read a marked column, every single-quoted run
 * of the message is replaced (docs/ledger.md §5). */
static gboolean
finish_steps (TallyToolDatabase       *database,
              sqlite3_stmt            *stmt,
              int                      rc,
              TallyResultOrigin       *origin,
              const TallyToolContext  *context,
              GError                 **error)
{
  gboolean ok = tally_tool_database_set_step_error (database, rc, error);

  if (!ok && error != NULL && origin != NULL &&
      reads_marked (origin->reads, (const char * const *) context->sensitive_columns))
    tally_query_text_redact_error (*error, '\'');
  sqlite3_finalize (stmt);
  return ok;
}

/* A cell as a JSON scalar for a chart: numbers stay numbers, a BLOB is
 * described, text is kept whole (the chart engine reads it). */
static JsonNode *
cell_to_node (sqlite3_stmt *stmt,
              int           column)
{
  JsonNode *node = json_node_alloc ();

  switch (sqlite3_column_type (stmt, column))
    {
    case SQLITE_NULL:
      json_node_init_null (node);
      break;

    case SQLITE_INTEGER:
      json_node_init_int (node, sqlite3_column_int64 (stmt, column));
      break;

    case SQLITE_FLOAT:
      json_node_init_double (node, sqlite3_column_double (stmt, column));
      break;

    case SQLITE_BLOB:
      {
        g_autofree char *text = g_strdup_printf ("<blob %d bytes>", sqlite3_column_bytes (stmt, column));

        json_node_init_string (node, text);
      }
      break;

    case SQLITE_TEXT:
    default:
      json_node_init_string (node, (const char *) sqlite3_column_text (stmt, column));
      break;
    }

  return node;
}

/* @sql on the PostgreSQL database of @context, with the tool's time limit
 * and the context's sensitive columns. */
static TallyPgStatement
pg_statement (TallyToolQueryDatabase *self,
              const TallyToolContext *context,
              const char             *sql,
              guint                   max_rows)
{
  return (TallyPgStatement) {
    .conninfo = context->database_path,
    .sql = sql,
    .max_rows = max_rows,
    .timeout_ms = (guint) g_atomic_int_get (&self->timeout_ms),
    .marked = (const char * const *) context->sensitive_columns,
  };
}

/**
 * tally_tool_query_database_fetch_rows:
 * @tool: the `query_database` tool (its timeout and memory limits apply)
 * @context: the database to read
 * @sql: one read-only statement
 * @max_rows: the most rows to return
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a %TALLY_TOOL_ERROR error (the same messages
 *   as `query_database`), or %G_IO_ERROR_CANCELLED
 *
 * Runs @sql exactly as `query_database` does (the same read-only
 * connection, authorizer, limits and messages) and returns the rows as
 * data rather than text. For create_chart (docs/charts.md). Past
 * @max_rows the rest is not read and the result's `more` is set. Blocking:
 * call it from a worker thread.
 *
 * Returns: (transfer full) (nullable): the rows (JSON scalars: integer,
 *   double, string or null) and column names, or %NULL with @error set
 */
TallyQueryRows *
tally_tool_query_database_fetch_rows (TallyTool               *tool,
                                      const TallyToolContext  *context,
                                      const char              *sql,
                                      guint                    max_rows,
                                      GCancellable            *cancellable,
                                      GError                 **error)
{
  g_autoptr(TallyToolDatabase) database = NULL;
  g_autoptr(TallyResultOrigin) origin = NULL;
  g_autoptr(TallyQueryRows) result = NULL;
  g_autoptr(GStrvBuilder) names = NULL;
  sqlite3_stmt *stmt;
  int n_columns;
  int rc;

  g_return_val_if_fail (TALLY_IS_TOOL_QUERY_DATABASE (tool), NULL);

  if (tally_pg_conninfo_is (context ? context->database_path : NULL))
    {
      TallyPgStatement statement = pg_statement (TALLY_TOOL_QUERY_DATABASE (tool), context, sql, max_rows);

      return tally_pg_query_fetch_rows (&statement, cancellable, error);
    }

  stmt = query_prepare (TALLY_TOOL_QUERY_DATABASE (tool), context, sql, cancellable, &database, error);
  if (stmt == NULL)
    return NULL;

  /* The chart's summary goes to the model: marked values never reach it
   * (docs/ledger.md §2). */
  origin = query_origin (database, stmt, sql, (const char * const *) context->sensitive_columns);

  names = g_strv_builder_new ();
  n_columns = sqlite3_column_count (stmt);
  for (int i = 0; i < n_columns; i++)
    {
      const char *name = sqlite3_column_name (stmt, i);

      g_strv_builder_add (names, name ? name : "?");
    }

  result = tally_query_rows_new ();
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      JsonArray *row;

      if (json_array_get_length (result->rows) >= max_rows)
        {
          result->more = TRUE;
          rc = SQLITE_DONE;
          break;
        }

      row = json_array_sized_new ((guint) n_columns);
      for (int i = 0; i < n_columns; i++)
        {
          if (tally_result_origin_is_redacted (origin, (guint) i))
            json_array_add_string_element (row, TALLY_SENSITIVE_REDACTED);
          else
            json_array_add_element (row, cell_to_node (stmt, i));
        }
      json_array_add_array_element (result->rows, row);
    }

  if (!finish_steps (database, stmt, rc, origin, context, error))
    return NULL;

  result->column_names = g_strv_builder_end (names);
  return g_steal_pointer (&result);
}

/* The artifact of a query: its origin, for the `tool_result` event
 * (tally-agent-tools.c takes it out of the artifact). */
static void
set_origin_artifact (JsonObject        **artifact,
                     TallyResultOrigin  *origin)
{
  if (artifact == NULL || origin == NULL)
    return;

  *artifact = json_object_new ();
  json_object_set_object_member (*artifact, "origin", tally_result_origin_to_json (origin));
}

static char *
query_run (TallyTool               *tool,
           const TallyToolContext  *context,
           JsonObject              *input,
           GCancellable            *cancellable,
           JsonObject             **artifact,
           GError                 **error)
{
  g_autoptr(TallyToolDatabase) database = NULL;
  g_autoptr(TallyResultOrigin) origin = NULL;
  TallyQueryText table;
  sqlite3_stmt *stmt;
  const char *sql;
  gboolean has_max_rows;
  guint64 max_rows;
  int n_columns;
  int rc;

  if (!tally_tool_input_get_string (input, "sql", TRUE, &sql, error) ||
      !tally_tool_input_get_uint (input, "max_rows", &has_max_rows, &max_rows, error))
    return NULL;

  if (!has_max_rows)
    max_rows = TALLY_TOOL_QUERY_DATABASE_DEFAULT_ROWS;
  max_rows = MIN (max_rows, TALLY_TOOL_QUERY_DATABASE_MAX_ROWS);

  /* PostgreSQL: the same caps and text, read-only by construction
   * (docs/postgresql.md). */
  if (tally_pg_conninfo_is (context ? context->database_path : NULL))
    {
      TallyPgStatement statement = pg_statement (TALLY_TOOL_QUERY_DATABASE (tool), context, sql,
                                                 (guint) max_rows);
      char *text = tally_pg_query_text_full (&statement, cancellable, &origin, error);

      set_origin_artifact (artifact, origin);
      return text;
    }

  stmt = query_prepare (TALLY_TOOL_QUERY_DATABASE (tool), context, sql, cancellable, &database, error);
  if (stmt == NULL)
    return NULL;

  origin = query_origin (database, stmt, sql, (const char * const *) context->sensitive_columns);

  tally_query_text_init (&table, max_rows);
  n_columns = sqlite3_column_count (stmt);
  for (int i = 0; i < n_columns; i++)
    {
      const char *name = sqlite3_column_name (stmt, i);

      tally_query_text_add_column (&table, name ? name : "?");
    }
  tally_query_text_end_header (&table);

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      if (!tally_query_text_begin_row (&table))
        {
          if (table.count_capped)
            {
              rc = SQLITE_DONE;
              break;
            }
          continue;
        }

      for (int i = 0; i < n_columns; i++)
        {
          if (tally_result_origin_is_redacted (origin, (guint) i))
            tally_query_text_add_redacted (&table);
          else
            append_cell (tally_query_text_next_cell (&table), stmt, i);
        }
      tally_query_text_end_row (&table);
    }

  if (!finish_steps (database, stmt, rc, origin, context, error))
    {
      tally_query_text_clear (&table);
      return NULL;
    }

  origin->rows = (gint64) table.shown;
  origin->redactions = table.redactions;
  set_origin_artifact (artifact, origin);

  return tally_query_text_finish (&table);
}

static void
tally_tool_query_database_class_init (TallyToolQueryDatabaseClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "query_database";
  tool_class->description =
    "Run one read-only SQL statement against the analyst's database, in the "
    "dialect of its engine (SQLite or PostgreSQL, as the instructions say), and "
    "get the result back as a text table: a header line with the "
    "column names, one line per row with values separated by \" | \", NULL for "
    "missing values, and the row count at the end. Only reading is possible: "
    "SELECT (with WITH/CTEs, joins, window functions); on SQLite also the "
    "informational pragmas table_info, table_xinfo, index_list, index_info, "
    "index_xinfo, foreign_key_list, collation_list and function_list, on "
    "PostgreSQL also SHOW, VALUES, TABLE and EXPLAIN. Statements that would "
    "change the database, ATTACH, SET, transactions and all other pragmas are "
    "refused. Send exactly one statement per call. Results are capped at "
    "max_rows rows (default 200, at most 1000) and about 32 KiB of text, and "
    "values longer than 200 characters are shortened, so let the database do "
    "the work: aggregate with GROUP BY, sort with ORDER BY and use LIMIT rather "
    "than fetching raw rows to count or sum them yourself. If you do not know "
    "the tables and columns yet, call get_schema first instead of guessing.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"sql\":{\"type\":\"string\","
    "\"description\":\"Exactly one read-only statement in the database's SQL dialect, e.g. a SELECT.\"},"
    "\"max_rows\":{\"type\":\"integer\",\"minimum\":0,"
    "\"description\":\"Most rows to return (default 200; values above 1000 are lowered to 1000).\"}"
    "},"
    "\"required\":[\"sql\"]}";
  tool_class->read_only = TRUE;
  tool_class->run_with_artifact = query_run;
  tool_class->preview_kind = TALLY_TOOL_PREVIEW_QUERY;
  tool_class->content_member = "sql";
}

static void
tally_tool_query_database_init (TallyToolQueryDatabase *self)
{
  self->timeout_ms = TALLY_TOOL_QUERY_DATABASE_DEFAULT_TIMEOUT * 1000;
  self->max_memory = QUERY_MAX_MEMORY;
}

/**
 * tally_tool_query_database_set_timeout_ms:
 * @self: the `query_database` tool
 * @timeout_ms: how long one query may run, in milliseconds; 0 for no
 *   limit
 *
 * Sets the wall-clock limit of a query (the `query-timeout` setting,
 * `tally-cli --query-timeout`; default
 * %TALLY_TOOL_QUERY_DATABASE_DEFAULT_TIMEOUT seconds). A query that runs
 * longer is stopped and its result says so. Takes effect for the next
 * query; safe to call while queries run.
 */
void
tally_tool_query_database_set_timeout_ms (TallyToolQueryDatabase *self,
                                          guint                   timeout_ms)
{
  g_return_if_fail (TALLY_IS_TOOL_QUERY_DATABASE (self));

  g_atomic_int_set (&self->timeout_ms, (gint) MIN (timeout_ms, (guint) G_MAXINT));
}

/**
 * tally_tool_query_database_set_max_memory:
 * @self: the `query_database` tool
 * @bytes: how much SQLite memory one query may add, in bytes
 *
 * Sets the memory budget of a query (default 256 MiB). For tests and
 * embedders; call before the tool runs, not while it does.
 */
void
tally_tool_query_database_set_max_memory (TallyToolQueryDatabase *self,
                                          gint64                  bytes)
{
  g_return_if_fail (TALLY_IS_TOOL_QUERY_DATABASE (self));

  self->max_memory = MAX (bytes, 0);
}

/**
 * tally_tool_query_database_new:
 *
 * Creates the `query_database` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_query_database_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_QUERY_DATABASE, NULL);
}
