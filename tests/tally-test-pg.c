/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-test-pg.h"
#include "tally-test-util.h"

#include <glib/gstdio.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <grp.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct _TallyTestPg
{
  char   *bindir;
  char   *dir;        /* the temporary folder: data/, the socket, the log */
  char   *datadir;
  GPid    watcher;    /* stops the cluster when our end of its pipe closes */
  int     watcher_in;
  gboolean started;
};

/* The newest /usr/lib/postgresql/N/bin that has initdb, pg_ctl and
 * postgres (PGBINDIR overrides). */
static char *
find_bindir (void)
{
  const char *root = "/usr/lib/postgresql";
  const char *override = g_getenv ("PGBINDIR");
  g_autoptr(GDir) dir = NULL;
  const char *name;
  char *best = NULL;
  double best_version = -1;

  if (override != NULL && override[0] != '\0')
    {
      g_autofree char *initdb = g_build_filename (override, "initdb", NULL);

      return g_file_test (initdb, G_FILE_TEST_IS_EXECUTABLE) ? g_strdup (override) : NULL;
    }

  dir = g_dir_open (root, 0, NULL);
  if (dir == NULL)
    return NULL;

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *bindir = g_build_filename (root, name, "bin", NULL);
      g_autofree char *initdb = g_build_filename (bindir, "initdb", NULL);
      g_autofree char *pg_ctl = g_build_filename (bindir, "pg_ctl", NULL);
      g_autofree char *postgres = g_build_filename (bindir, "postgres", NULL);
      double version = g_ascii_strtod (name, NULL);

      if (g_file_test (initdb, G_FILE_TEST_IS_EXECUTABLE) &&
          g_file_test (pg_ctl, G_FILE_TEST_IS_EXECUTABLE) &&
          g_file_test (postgres, G_FILE_TEST_IS_EXECUTABLE) && version > best_version)
        {
          g_free (best);
          best = g_steal_pointer (&bindir);
          best_version = version;
        }
    }

  return best;
}

/* argv for a PostgreSQL program: as `nobody` when we are root (initdb and
 * postgres refuse to run as root). */
static GPtrArray *
server_argv (TallyTestPg *self,
             const char  *program)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);

  if (geteuid () == 0)
    {
      g_ptr_array_add (argv, g_strdup ("setpriv"));
      g_ptr_array_add (argv, g_strdup ("--reuid=nobody"));
      g_ptr_array_add (argv, g_strdup ("--regid=nogroup"));
      g_ptr_array_add (argv, g_strdup ("--clear-groups"));
      g_ptr_array_add (argv, g_strdup ("--"));
    }
  g_ptr_array_add (argv, g_build_filename (self->bindir, program, NULL));
  return argv;
}

/* Runs a server program in @workdir (the cluster's folder, which the
 * unprivileged user can enter, unlike perhaps the build folder). */
static gboolean
run_program (GPtrArray   *argv,
             const char  *workdir,
             GError     **error)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status;

  g_ptr_array_add (argv, NULL);
  if (!g_spawn_sync (workdir, (char **) argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                     &out, &err, &status, error))
    return FALSE;

  if (!g_spawn_check_wait_status (status, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s failed: %s%s",
                   (char *) argv->pdata[0], out, err);
      return FALSE;
    }

  return TRUE;
}

static PGconn *
connect_as (TallyTestPg  *self,
            const char   *role,
            const char   *dbname,
            GError      **error)
{
  g_autofree char *conninfo = g_strdup_printf ("host=%s dbname=%s user=%s", self->dir, dbname, role);
  PGconn *conn = PQconnectdb (conninfo);

  if (PQstatus (conn) != CONNECTION_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot connect: %s", PQerrorMessage (conn));
      PQfinish (conn);
      return NULL;
    }

  return conn;
}

static gboolean
exec_on (PGconn      *conn,
         const char  *sql,
         GError     **error)
{
  PGresult *result = PQexec (conn, sql);
  ExecStatusType status = PQresultStatus (result);
  gboolean ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;

  if (!ok)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", sql, PQresultErrorMessage (result));
  PQclear (result);
  return ok;
}

/* COPY text format: backslash, tab, newline and carriage return escaped,
 * \N for NULL. */
static void
append_copy_value (GString       *line,
                   sqlite3_stmt  *stmt,
                   int            column)
{
  const char *text;

  if (sqlite3_column_type (stmt, column) == SQLITE_NULL)
    {
      g_string_append (line, "\\N");
      return;
    }

  text = (const char *) sqlite3_column_text (stmt, column);
  for (const char *p = text; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '\\': g_string_append (line, "\\\\"); break;
        case '\t': g_string_append (line, "\\t"); break;
        case '\n': g_string_append (line, "\\n"); break;
        case '\r': g_string_append (line, "\\r"); break;
        default:   g_string_append_c (line, *p); break;
        }
    }
}

static gboolean
copy_table (PGconn      *conn,
            sqlite3     *db,
            const char  *table,
            GError     **error)
{
  g_autofree char *select = g_strdup_printf ("SELECT * FROM \"%s\"", table);
  g_autofree char *copy = g_strdup_printf ("COPY \"%s\" FROM STDIN", table);
  g_autoptr(GString) line = g_string_new (NULL);
  sqlite3_stmt *stmt = NULL;
  PGresult *result;
  gboolean ok;

  result = PQexec (conn, copy);
  ok = PQresultStatus (result) == PGRES_COPY_IN;
  PQclear (result);
  if (!ok || sqlite3_prepare_v2 (db, select, -1, &stmt, NULL) != SQLITE_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot copy %s: %s", table,
                   PQerrorMessage (conn));
      return FALSE;
    }

  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      g_string_truncate (line, 0);
      for (int i = 0; i < sqlite3_column_count (stmt); i++)
        {
          if (i > 0)
            g_string_append_c (line, '\t');
          append_copy_value (line, stmt, i);
        }
      g_string_append_c (line, '\n');
      if (PQputCopyData (conn, line->str, (int) line->len) != 1)
        break;
    }
  sqlite3_finalize (stmt);

  ok = PQputCopyEnd (conn, NULL) == 1;
  while ((result = PQgetResult (conn)) != NULL)
    {
      ok = ok && PQresultStatus (result) == PGRES_COMMAND_OK;
      PQclear (result);
    }
  if (!ok)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "COPY %s: %s", table, PQerrorMessage (conn));
  return ok;
}

/* The Beanline sample, from the SQLite file the build makes: the tables'
 * CREATE statements as SQLite keeps them (REAL money becomes
 * NUMERIC(12,2), so that round(x, 2) works as on SQLite), the rows through
 * COPY, then the indexes and views verbatim: data/beanline.sql writes SQL
 * both engines read. */
static gboolean
load_beanline (PGconn      *conn,
               GError     **error)
{
  const char *path = g_getenv ("TALLY_SAMPLE_DB");
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  g_autoptr(GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) later = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GRegex) real = g_regex_new ("\\bREAL\\b", 0, 0, NULL);
  gboolean ok = TRUE;

  if (path == NULL || sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no sample database (TALLY_SAMPLE_DB)");
      sqlite3_close (db);
      return FALSE;
    }

  sqlite3_prepare_v2 (db, "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                          "ORDER BY rowid", -1, &stmt, NULL);
  while (ok && sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *type = (const char *) sqlite3_column_text (stmt, 0);
      const char *name = (const char *) sqlite3_column_text (stmt, 1);
      const char *sql = (const char *) sqlite3_column_text (stmt, 2);

      if (g_str_equal (type, "table"))
        {
          g_autofree char *pg_sql = g_regex_replace_literal (real, sql, -1, 0, "NUMERIC(12,2)", 0, NULL);

          ok = exec_on (conn, pg_sql, error);
          g_ptr_array_add (tables, g_strdup (name));
        }
      else
        g_ptr_array_add (later, g_strdup (sql));
    }
  sqlite3_finalize (stmt);

  for (guint i = 0; ok && i < tables->len; i++)
    ok = copy_table (conn, db, g_ptr_array_index (tables, i), error);
  for (guint i = 0; ok && i < later->len; i++)
    ok = exec_on (conn, g_ptr_array_index (later, i), error);
  sqlite3_close (db);

  return ok &&
         exec_on (conn, "COMMENT ON TABLE sales IS 'One row per store, day and product'", error) &&
         exec_on (conn, "COMMENT ON COLUMN sales.unit_price_gbp IS 'Price charged, pounds'", error) &&
         exec_on (conn, "ANALYZE", error) &&
         exec_on (conn, "CREATE ROLE analyst LOGIN PASSWORD '" TALLY_TEST_PG_PASSWORD "'", error) &&
         exec_on (conn, "GRANT USAGE ON SCHEMA public TO analyst", error) &&
         exec_on (conn, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO analyst", error) &&
         exec_on (conn, "CREATE ROLE writer LOGIN PASSWORD 'w'", error) &&
         exec_on (conn, "GRANT SELECT, INSERT ON stores TO writer", error);
}

/* A shell that waits for its standard input to close (the test ended,
 * however it ended), then stops the cluster and removes the folder. */
static gboolean
start_watcher (TallyTestPg  *self,
               GError      **error)
{
  g_autoptr(GPtrArray) argv = server_argv (self, "pg_ctl");
  g_autoptr(GString) stop = g_string_new ("cat >/dev/null; ");
  g_autofree char *quoted_dir = g_shell_quote (self->dir);
  const char *sh_argv[4] = { "/bin/sh", "-c", NULL, NULL };

  for (guint i = 0; i < argv->len; i++)
    {
      g_autofree char *word = g_shell_quote (g_ptr_array_index (argv, i));

      g_string_append_printf (stop, "%s ", word);
    }
  g_string_append_printf (stop, "-D %s/data -m immediate stop >/dev/null 2>&1; rm -rf %s",
                          quoted_dir, quoted_dir);
  sh_argv[2] = stop->str;

  return g_spawn_async_with_pipes (self->dir, (char **) sh_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                   NULL, NULL, &self->watcher, &self->watcher_in, NULL, NULL,
                                   error);
}

/**
 * tally_test_pg_start:
 * @skip_reason: (out): why the tests cannot run (no server binaries);
 *   set with %NULL returned and no error
 * @error: return location for a #GError
 *
 * Starts the cluster and loads the sample. Stop it with
 * tally_test_pg_stop(); it is also stopped when the test process dies.
 *
 * Returns: (transfer full) (nullable): the cluster
 */
TallyTestPg *
tally_test_pg_start (char   **skip_reason,
                     GError **error)
{
  g_autoptr(TallyTestPg) self = g_new0 (TallyTestPg, 1);
  g_autoptr(GPtrArray) initdb = NULL;
  g_autoptr(GPtrArray) pg_ctl = NULL;
  g_autofree char *hba = NULL;
  g_autofree char *log = NULL;
  g_autofree char *options = NULL;
  PGconn *conn;
  gboolean ok;

  *skip_reason = NULL;
  self->watcher_in = -1;
  self->bindir = find_bindir ();
  if (self->bindir == NULL)
    {
      *skip_reason = g_strdup ("no PostgreSQL server: initdb, pg_ctl and postgres were not found "
                               "in /usr/lib/postgresql/*/bin or $PGBINDIR (install the postgresql "
                               "package)");
      return NULL;
    }

  self->dir = g_dir_make_tmp ("tally-pg-XXXXXX", error);
  if (self->dir == NULL)
    return NULL;
  self->datadir = g_build_filename (self->dir, "data", NULL);

  if (geteuid () == 0)
    {
      struct passwd *nobody = getpwnam ("nobody");
      struct group *nogroup = getgrnam ("nogroup");

      if (nobody == NULL || nogroup == NULL ||
          chown (self->dir, nobody->pw_uid, nogroup->gr_gid) != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "running as root, but cannot hand %s to nobody:nogroup", self->dir);
          return NULL;
        }
    }

  if (!start_watcher (self, error))
    return NULL;

  initdb = server_argv (self, "initdb");
  g_ptr_array_add (initdb, g_strdup ("-D"));
  g_ptr_array_add (initdb, g_strdup (self->datadir));
  g_ptr_array_add (initdb, g_strdup ("-U"));
  g_ptr_array_add (initdb, g_strdup ("tally"));
  g_ptr_array_add (initdb, g_strdup ("-A"));
  g_ptr_array_add (initdb, g_strdup ("trust"));
  g_ptr_array_add (initdb, g_strdup ("-E"));
  g_ptr_array_add (initdb, g_strdup ("UTF8"));
  g_ptr_array_add (initdb, g_strdup ("--locale=C"));
  g_ptr_array_add (initdb, g_strdup ("--no-sync"));
  if (!run_program (initdb, self->dir, error))
    return NULL;

  /* The superuser without a password; every other role with one, so
   * that the password in a connection string is really used. */
  hba = g_build_filename (self->datadir, "pg_hba.conf", NULL);
  if (!g_file_set_contents (hba, "local all tally trust\nlocal all all scram-sha-256\n", -1, error))
    return NULL;
  g_chmod (hba, 0644);

  log = g_build_filename (self->dir, "server.log", NULL);
  options = g_strdup_printf ("-c listen_addresses='' -c unix_socket_directories='%s' "
                             "-c fsync=off -c max_connections=40", self->dir);
  pg_ctl = server_argv (self, "pg_ctl");
  g_ptr_array_add (pg_ctl, g_strdup ("-D"));
  g_ptr_array_add (pg_ctl, g_strdup (self->datadir));
  g_ptr_array_add (pg_ctl, g_strdup ("-l"));
  g_ptr_array_add (pg_ctl, g_strdup (log));
  g_ptr_array_add (pg_ctl, g_strdup ("-o"));
  g_ptr_array_add (pg_ctl, g_strdup (options));
  g_ptr_array_add (pg_ctl, g_strdup ("-w"));
  g_ptr_array_add (pg_ctl, g_strdup ("start"));
  if (!run_program (pg_ctl, self->dir, error))
    return NULL;
  self->started = TRUE;

  conn = connect_as (self, "tally", "postgres", error);
  if (conn == NULL)
    return NULL;
  ok = exec_on (conn, "CREATE DATABASE beanline", error);
  PQfinish (conn);
  if (!ok)
    return NULL;

  conn = connect_as (self, "tally", "beanline", error);
  if (conn == NULL)
    return NULL;
  ok = load_beanline (conn, error);
  PQfinish (conn);
  if (!ok)
    return NULL;

  return g_steal_pointer (&self);
}

const char *
tally_test_pg_get_socket_dir (TallyTestPg *self)
{
  return self->dir;
}

const char *
tally_test_pg_get_bindir (TallyTestPg *self)
{
  return self->bindir;
}

/* A connection string for @role on the sample ("tally", the superuser,
 * or "analyst", read-only, with its password). */
char *
tally_test_pg_dup_conninfo (TallyTestPg *self,
                            const char  *role)
{
  if (g_str_equal (role, "analyst"))
    return g_strdup_printf ("host=%s dbname=beanline user=analyst password=%s", self->dir,
                            TALLY_TEST_PG_PASSWORD);
  if (g_str_equal (role, "writer"))
    return g_strdup_printf ("host=%s dbname=beanline user=writer password=w", self->dir);
  return g_strdup_printf ("host=%s dbname=beanline user=%s", self->dir, role);
}

/* Runs @sql on the sample as the superuser. */
gboolean
tally_test_pg_exec (TallyTestPg  *self,
                    const char   *sql,
                    GError      **error)
{
  PGconn *conn = connect_as (self, "tally", "beanline", error);
  gboolean ok;

  if (conn == NULL)
    return FALSE;
  ok = exec_on (conn, sql, error);
  PQfinish (conn);
  return ok;
}

void
tally_test_pg_stop (TallyTestPg *self)
{
  if (self == NULL)
    return;

  /* Closing the pipe lets the watcher stop the cluster and remove the
   * folder; wait for it so the next test starts clean. */
  if (self->watcher_in >= 0)
    close (self->watcher_in);
  if (self->watcher != 0)
    {
      waitpid (self->watcher, NULL, 0);
      g_spawn_close_pid (self->watcher);
    }
  else if (self->dir != NULL)
    tally_test_rm_rf (self->dir);

  g_free (self->bindir);
  g_free (self->dir);
  g_free (self->datadir);
  g_free (self);
}
