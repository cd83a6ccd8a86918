/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

/* F_OFD_SETLK (open file description locks) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tally-event.h"
#include "tally-properties.h"
#include "tally-store-private.h"

/*
 * TallyStore is the flight recorder: one SQLite file in WAL mode holding
 * the sessions, their event logs, their API conversations, the permission
 * rules and the plans.
 *
 * Writes never block the caller. They are queued (a GAsyncQueue) to one
 * writer thread, which owns the read-write connection and commits whatever
 * arrived within BATCH_WINDOW_US of the first item as one transaction. With
 * `synchronous=NORMAL` a WAL commit is in the operating system's hands as
 * soon as it returns, so a killed process loses at most the events of the
 * batch being gathered. Operations whose caller needs an answer (rename,
 * delete, rules, plans, flush) travel the same queue, so they keep their
 * order relative to the events, and the caller waits for their commit.
 *
 * A batch that cannot be written (disk full, read-only file, damage) is
 * rolled back and its data stays queued in memory: the failure is reported
 * through the "write-failed" signal on the main context that opened the
 * store, and the writer tries again on the next flush or operation, or
 * after RETRY_INTERVAL_US. An item the database refuses on its own merits
 * (a seq that does not increase) is dropped and reported the same way.
 *
 * Reads run in the caller's thread on a second, read-only connection,
 * serialised by a mutex; the _async variants run the same code in a GTask
 * thread.
 *
 * This file holds the object, opening and closing, and the write API that
 * queues items; the writer thread is in tally-store-writer.c, the reads,
 * search and the boxed records they return in tally-store-read.c, their
 * _async variants in tally-store-async.c, schema
 * upgrades in tally-store-migrations.c and salvage in
 * tally-store-salvage.c (docs/architecture.md §10.10).
 */

#define BUSY_TIMEOUT_MS   5000

/* The read connection's page cache, KiB (SQLite's default is 2,000). A
 * search that matches a common word joins a few thousand of the newest
 * transcript rows, one page or more each, to their sessions: with the
 * default cache every keystroke read those pages from the file again
 * (3-8 ms of the search over the bench's 1,000 sessions), with this one
 * they stay cached while the store does not change. The cache only grows
 * as pages are read. */
#define READ_CACHE_KIB    32768

/**
 * tally_store_error_quark:
 *
 * Returns: the #GQuark of %TALLY_STORE_ERROR
 */
G_DEFINE_QUARK (tally-store-error-quark, tally_store_error)

/* {{{ Signal delivery */

enum {
  WRITE_FAILED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];


SignalTarget *
tally_store_target_ref (SignalTarget *target)
{
  g_atomic_ref_count_inc (&target->ref_count);
  return target;
}

void
tally_store_target_unref (SignalTarget *target)
{
  if (!g_atomic_ref_count_dec (&target->ref_count))
    return;
  g_mutex_clear (&target->lock);
  g_clear_error (&target->failure);
  g_main_context_unref (target->context);
  g_free (target);
}

typedef struct {
  SignalTarget *target;
  GError       *error;
} Report;

static void
report_free (gpointer data)
{
  Report *report = data;

  tally_store_target_unref (report->target);
  g_error_free (report->error);
  g_free (report);
}

static gboolean
report_dispatch_cb (gpointer data)
{
  Report *report = data;
  TallyStore *store = NULL;

  g_mutex_lock (&report->target->lock);
  if (report->target->store != NULL)
    store = g_object_ref (report->target->store);
  g_mutex_unlock (&report->target->lock);

  if (store != NULL)
    {
      g_signal_emit (store, signals[WRITE_FAILED], 0, report->error);
      g_object_unref (store);
    }

  return G_SOURCE_REMOVE;
}

/* Always deferred to an idle of the store's main context, also when called
 * on that context's thread, so the signal never runs inside the caller's
 * append. @error is copied. */
/* The failure tally_store_dup_write_error() tells; %NULL clears it */
void
tally_store_target_set_failure (SignalTarget *target,
                                const GError *error)
{
  g_mutex_lock (&target->lock);
  g_clear_error (&target->failure);
  if (error != NULL)
    target->failure = g_error_copy (error);
  g_mutex_unlock (&target->lock);
}

void
tally_store_target_report (SignalTarget *target,
                           const GError *error)
{
  g_autoptr(GSource) source = g_idle_source_new ();
  Report *report = g_new0 (Report, 1);

  report->target = tally_store_target_ref (target);
  report->error = g_error_copy (error);
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, report_dispatch_cb, report, report_free);
  g_source_set_static_name (source, "[tally] store write-failed");
  g_source_attach (source, target->context);
}

/* }}} */
/* {{{ TallyStore */

/**
 * TallyStore:
 *
 * The session store (docs/architecture.md §10): one SQLite file holding every
 * session's event log (append-only, one JSON line per event, `seq`
 * increasing), its API conversation block by block, permission rules and
 * plans, with a full-text index over titles, prompts and assistant text.
 *
 * Writes (tally_store_append_event(), tally_store_save_message()) return at
 * once and are committed by a writer thread within about 25 ms; failures
 * arrive through #TallyStore::write-failed and tally_store_flush(). Reads
 * run in the calling thread, or in a worker thread through the `_async`
 * variants, on a separate read-only connection.
 */

G_DEFINE_FINAL_TYPE (TallyStore, tally_store, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PATH,
  PROP_READ_ONLY,
  PROP_READ_ONLY_REASON,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define READ_NOTIFY (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY)
#define FIELD(member) G_STRUCT_OFFSET (TallyStore, member)

/* In the order of the PROP_ ids above. */
static const TallyPropertyEntry property_table[N_PROPS - 1] = {
  /**
   * TallyStore:path:
   *
   * The store's file (a file name in the GLib file name encoding), as
   * given to tally_store_open() or tally_store_get_default_path().
   */
  { "path", G_TYPE_STRING, FIELD (path), NULL, 0, READ_NOTIFY },
  /**
   * TallyStore:read-only:
   *
   * Whether the store was opened read-only: the file was written by a
   * newer Tally, or it cannot be written (docs/architecture.md §10). It is
   * decided by tally_store_open() and does not change afterwards; writes
   * then fail with %TALLY_STORE_ERROR_READ_ONLY.
   */
  { "read-only", G_TYPE_BOOLEAN, FIELD (read_only), NULL, FALSE, READ_NOTIFY },
  /**
   * TallyStore:read-only-reason:
   *
   * A sentence for the user saying why #TallyStore:read-only is set, or
   * %NULL while the store is writable.
   */
  { "read-only-reason", G_TYPE_STRING, FIELD (read_only_reason), NULL, 0, READ_NOTIFY },
};

#undef FIELD
#undef READ_NOTIFY

static void
tally_store_dispose (GObject *object)
{
  TallyStore *self = (TallyStore *)object;

  if (self->target != NULL)
    {
      g_mutex_lock (&self->target->lock);
      self->target->store = NULL;
      g_mutex_unlock (&self->target->lock);
    }

  if (self->writer != NULL)
    {
      g_autoptr(GError) error = NULL;

      if (!tally_store_run_operation (self, tally_store_item_new (ITEM_QUIT), NULL, &error))
        g_message ("Closing the session store: %s", error->message);
      g_thread_join (g_steal_pointer (&self->writer));
    }

  G_OBJECT_CLASS (tally_store_parent_class)->dispose (object);
}

static void
tally_store_finalize (GObject *object)
{
  TallyStore *self = (TallyStore *)object;

  g_clear_pointer (&self->read_db, sqlite3_close);
  g_clear_pointer (&self->write_db, sqlite3_close);
  g_clear_pointer (&self->queue, g_async_queue_unref);
  g_clear_pointer (&self->target, tally_store_target_unref);
  g_clear_pointer (&self->handed_seq, g_hash_table_unref);
  g_clear_pointer (&self->locked, g_hash_table_unref);
  if (self->lock_fd >= 0)
    close (self->lock_fd);     /* releases every lock this store held */
  g_mutex_clear (&self->read_lock);
  g_mutex_clear (&self->seq_lock);
  g_mutex_clear (&self->session_lock);
  g_free (self->path);
  g_free (self->read_only_reason);

  G_OBJECT_CLASS (tally_store_parent_class)->finalize (object);
}

static void
tally_store_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  if (!tally_properties_get (object, property_table, G_N_ELEMENTS (property_table), prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
tally_store_class_init (TallyStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_store_dispose;
  object_class->finalize = tally_store_finalize;
  object_class->get_property = tally_store_get_property;

  tally_properties_install (object_class, property_table, G_N_ELEMENTS (property_table), properties);

  /**
   * TallyStore::write-failed:
   * @self: the store
   * @error: the failure, in %TALLY_STORE_ERROR: %TALLY_STORE_ERROR_FULL,
   *   %TALLY_STORE_ERROR_READ_ONLY, %TALLY_STORE_ERROR_CORRUPT,
   *   %TALLY_STORE_ERROR_IO (the data stays queued in memory and is
   *   written by a later flush), or %TALLY_STORE_ERROR_INVALID (one item,
   *   such as an event whose seq does not increase, was refused and
   *   dropped)
   *
   * Emitted on the main context that opened the store (from an idle, never
   * inside the call that queued the write) whenever queued data could not
   * be written. A read-only store emits it once for the first refused
   * append after opening or after each tally_store_flush().
   */
  signals[WRITE_FAILED] =
    g_signal_new ("write-failed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
tally_store_init (TallyStore *self)
{
  g_mutex_init (&self->read_lock);
  g_mutex_init (&self->seq_lock);
  g_mutex_init (&self->session_lock);
  self->handed_seq = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->locked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->lock_fd = -1;
  self->queue = g_async_queue_new_full ((GDestroyNotify)tally_store_item_free);

  self->target = g_new0 (SignalTarget, 1);
  g_atomic_ref_count_init (&self->target->ref_count);
  g_mutex_init (&self->target->lock);
  self->target->store = self;
  self->target->context = g_main_context_ref_thread_default ();
}

/**
 * tally_store_get_default_path:
 *
 * The store used when no path is given: `tally/tally.db` under
 * g_get_user_data_dir() (`$XDG_DATA_HOME`, by default `~/.local/share`).
 *
 * Returns: (transfer full) (type filename): the default store path
 */
char *
tally_store_get_default_path (void)
{
  return g_build_filename (g_get_user_data_dir (), "tally", "tally.db", NULL);
}

static int
read_user_version (sqlite3 *db,
                   int     *version)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    return rc;
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    return rc;
  *version = sqlite3_column_int (stmt, 0);
  return SQLITE_OK;
}

static void
set_corrupt_error (GError     **error,
                   const char  *path,
                   const char  *detail)
{
  g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT,
               "The session store “%s” is not a SQLite database or is damaged (%s). "
               "Move it aside to start a new store, or open another one with --store.",
               path, detail);
}

/* PRAGMA quick_check(1): the first problem only, enough to refuse */
static gboolean
check_integrity (sqlite3     *db,
                 const char  *path,
                 GError     **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  const char *answer;
  int rc;

  rc = sqlite3_prepare_v2 (db, "PRAGMA quick_check (1)", -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        set_corrupt_error (error, path, sqlite3_errmsg (db));
      else
        tally_store_set_sqlite_error (error, db, rc, path, "check");
      return FALSE;
    }

  answer = (const char *)sqlite3_column_text (stmt, 0);
  if (g_strcmp0 (answer, "ok") != 0)
    {
      set_corrupt_error (error, path, answer ? answer : "quick_check failed");
      return FALSE;
    }

  return TRUE;
}

static gboolean
has_schema_objects (sqlite3 *db)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM sqlite_schema LIMIT 1", -1, &stmt, NULL) != SQLITE_OK)
    return TRUE;
  return sqlite3_step (stmt) == SQLITE_ROW;
}

static gboolean
pragma_text (sqlite3    *db,
             const char *sql,
             char      **out)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK || sqlite3_step (stmt) != SQLITE_ROW)
    return FALSE;
  *out = g_strdup ((const char *)sqlite3_column_text (stmt, 0));
  return TRUE;
}

static gboolean
open_connection (const char  *path,
                 int          flags,
                 sqlite3    **db,
                 GError     **error)
{
  int rc = sqlite3_open_v2 (path, db, flags | SQLITE_OPEN_FULLMUTEX, NULL);

  if (rc != SQLITE_OK)
    {
      tally_store_set_sqlite_error (error, *db, rc, path, "open");
      g_clear_pointer (db, sqlite3_close);
      return FALSE;
    }

  sqlite3_extended_result_codes (*db, 1);
  sqlite3_busy_timeout (*db, BUSY_TIMEOUT_MS);
  return TRUE;
}

/* Sets up @db as the store's read connection. */
static void
set_read_db (TallyStore *self,
             sqlite3    *db)
{
  sqlite3_exec (db, "PRAGMA cache_size = -" G_STRINGIFY (READ_CACHE_KIB), NULL, NULL, NULL);
  self->read_db = db;
}

/* A store that this build must not change: reads go through the one
 * connection, which refuses writes itself too. */
static void
become_read_only (TallyStore *self,
                  sqlite3    *db,
                  char       *reason)
{
  sqlite3_exec (db, "PRAGMA query_only = ON", NULL, NULL, NULL);
  set_read_db (self, db);
  self->read_only = TRUE;
  g_free (self->read_only_reason);
  self->read_only_reason = reason;
  g_message ("%s", reason);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READ_ONLY]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READ_ONLY_REASON]);
}

/**
 * tally_store_open:
 * @path: (nullable) (type filename): the store file, or %NULL for
 *   tally_store_get_default_path()
 * @error: return location for a #GError
 *
 * Opens the store at @path, creating it (and its folder) when missing, and
 * brings its schema up to %TALLY_STORE_SCHEMA_VERSION. Before upgrading an
 * existing file, a backup copy is written beside it as
 * `<path>.bak-v<old version>-<UTC timestamp>`.
 *
 * A file written by a newer Tally (a higher `user_version`), or one that
 * cannot be written, opens read-only: see tally_store_is_read_only() and
 * tally_store_get_read_only_reason(); such an open does not fail.
 *
 * The store's "write-failed" signal is delivered on the thread-default main
 * context of the calling thread.
 *
 * Returns: (transfer full) (nullable): the store, or %NULL with @error set
 *   in %TALLY_STORE_ERROR: %TALLY_STORE_ERROR_CORRUPT (not a SQLite
 *   database, damaged, or a database that is not a Tally store),
 *   %TALLY_STORE_ERROR_MIGRATION_FAILED (the upgrade was rolled back; the
 *   message names the backup), %TALLY_STORE_ERROR_READ_ONLY (an old schema
 *   in a file that cannot be written), %TALLY_STORE_ERROR_IO
 */
TallyStore *
tally_store_open (const char  *path,
                  GError     **error)
{
  g_autoptr(TallyStore) self = NULL;
  g_autofree char *default_path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *journal = NULL;
  g_autofree char *backup_path = NULL;
  sqlite3 *db = NULL;
  sqlite3 *read_db = NULL;
  GStatBuf st;
  gboolean existed;
  int version = 0;
  int rc;

  if (path == NULL)
    path = default_path = tally_store_get_default_path ();

  self = g_object_new (TALLY_TYPE_STORE, NULL);
  self->path = g_strdup (path);

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "The session store “%s” is a folder, not a file", path);
      return NULL;
    }

  dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                   "Could not create the folder “%s” for the session store: %s",
                   dir, g_strerror (saved_errno));
      return NULL;
    }

  existed = g_stat (path, &st) == 0 && st.st_size > 0;

  if (!open_connection (path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, error))
    return NULL;

  if (existed && !check_integrity (db, path, error))
    {
      sqlite3_close (db);
      return NULL;
    }

  rc = read_user_version (db, &version);
  if (rc != SQLITE_OK)
    {
      if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        set_corrupt_error (error, path, sqlite3_errmsg (db));
      else
        tally_store_set_sqlite_error (error, db, rc, path, "read");
      sqlite3_close (db);
      return NULL;
    }

  if (version > TALLY_STORE_SCHEMA_VERSION)
    {
      become_read_only (self, db,
                        g_strdup_printf ("This store was written by a newer version of Tally "
                                         "(schema %d; this build knows %d). It is open read-only.",
                                         version, TALLY_STORE_SCHEMA_VERSION));
      return g_steal_pointer (&self);
    }

  if (version == 0 && existed && has_schema_objects (db))
    {
      sqlite3_close (db);
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT,
                   "“%s” is a SQLite database but not a Tally session store; "
                   "it was left untouched", path);
      return NULL;
    }

  if (sqlite3_db_readonly (db, "main") == 1)
    {
      if (version < TALLY_STORE_SCHEMA_VERSION)
        {
          sqlite3_close (db);
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                       "The session store “%s” needs an upgrade to schema %d but the file "
                       "cannot be written", path, TALLY_STORE_SCHEMA_VERSION);
          return NULL;
        }
      become_read_only (self, db,
                        g_strdup_printf ("The session store “%s” cannot be written. It is open read-only.",
                                         path));
      return g_steal_pointer (&self);
    }

  if (version < TALLY_STORE_SCHEMA_VERSION)
    {
      g_autoptr(GError) local_error = NULL;

      if (existed && (version > 0 || has_schema_objects (db)) &&
          !tally_store_backup (db, path, version, &backup_path, &local_error))
        {
          sqlite3_close (db);
          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                       "The session store “%s” needs an upgrade from schema %d to %d, "
                       "but no backup copy could be made first, so it was left as it was: %s",
                       path, version, TALLY_STORE_SCHEMA_VERSION, local_error->message);
          return NULL;
        }

      if (!tally_store_migrate (db, path, version, &local_error))
        {
          sqlite3_close (db);
          if (backup_path != NULL)
            g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                         "Could not upgrade the session store “%s” from schema %d to %d (%s). "
                         "The file was left as it was; a backup copy is at “%s”.",
                         path, version, TALLY_STORE_SCHEMA_VERSION, local_error->message, backup_path);
          else
            g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_MIGRATION_FAILED,
                         "Could not create the session store “%s” (%s)",
                         path, local_error->message);
          return NULL;
        }

      if (backup_path != NULL)
        g_message ("Upgraded the session store %s from schema %d to %d; backup at %s",
                   path, version, TALLY_STORE_SCHEMA_VERSION, backup_path);
    }

  /* WAL: readers never block the writer, and with synchronous=NORMAL a
   * commit survives a crash of the process (not of the machine). */
  if (!pragma_text (db, "PRAGMA journal_mode = WAL", &journal) || g_ascii_strcasecmp (journal, "wal") != 0)
    g_warning ("The session store %s could not switch to WAL mode (journal mode %s)",
               path, journal ? journal : "unknown");
  if (!tally_store_exec (db, path, "PRAGMA synchronous = NORMAL", error) ||
      !tally_store_exec (db, path, "PRAGMA foreign_keys = ON", error))
    {
      sqlite3_close (db);
      return NULL;
    }

  if (!open_connection (path, SQLITE_OPEN_READONLY, &read_db, error))
    {
      sqlite3_close (db);
      return NULL;
    }
  set_read_db (self, read_db);

  self->writer = tally_store_writer_start (self, db);

  return g_steal_pointer (&self);
}

/**
 * tally_store_get_path:
 * @self: a #TallyStore
 *
 * Returns: (transfer none) (type filename): the store's file
 */
const char *
tally_store_get_path (TallyStore *self)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  return self->path;
}

/**
 * tally_store_dup_write_error:
 * @self: a #TallyStore
 *
 * The failure that keeps queued data from being written, as last reported
 * by #TallyStore::write-failed, for a UI that shows the state later (an
 * info bar after a window opens). It is cleared by the next successful
 * commit. Refused items (%TALLY_STORE_ERROR_INVALID) and the refusals of a
 * read-only store are not kept here (see tally_store_is_read_only()).
 *
 * Returns: (transfer full) (nullable): a copy of the failure, or %NULL
 *   when nothing is waiting to be written
 */
GError *
tally_store_dup_write_error (TallyStore *self)
{
  GError *error = NULL;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  g_mutex_lock (&self->target->lock);
  if (self->target->failure != NULL)
    error = g_error_copy (self->target->failure);
  g_mutex_unlock (&self->target->lock);

  return error;
}

/**
 * tally_store_is_read_only:
 * @self: a #TallyStore
 *
 * Returns: %TRUE when the store was opened read-only: it was written by a
 *   newer Tally, or its file cannot be written. Writes then fail with
 *   %TALLY_STORE_ERROR_READ_ONLY.
 */
gboolean
tally_store_is_read_only (TallyStore *self)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), TRUE);

  return self->read_only;
}

/**
 * tally_store_get_read_only_reason:
 * @self: a #TallyStore
 *
 * Returns: (transfer none) (nullable): a sentence for the user saying why
 *   the store is read-only, such as "This store was written by a newer
 *   version of Tally (schema 7; this build knows 3). It is open
 *   read-only."; %NULL when it is writable
 */
const char *
tally_store_get_read_only_reason (TallyStore *self)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);

  return self->read_only_reason;
}

static void
refuse_read_only (TallyStore *self)
{
  g_autoptr(GError) error = NULL;

  if (!g_atomic_int_compare_and_exchange (&self->refused, 0, 1))
    return;

  error = g_error_new_literal (TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY, self->read_only_reason);
  tally_store_target_report (self->target, error);
}

/**
 * tally_store_append_event:
 * @self: a #TallyStore
 * @event: a TallyEvent (see tally-event.h): a JSON object with a string
 *   `type`, a string `session_id`, an integer `seq` (≥ 1) and an integer
 *   `ts` (µs since the Unix epoch)
 * @error: return location for a #GError
 *
 * Queues @event for the writer thread and returns at once: the event is
 * serialised here (tally_event_to_json(), the text stored verbatim and
 * printed by `--replay`) and committed within about 25 ms, together with
 * whatever else arrived meanwhile. The writer also keeps the session's row
 * up to date: `session_created` sets its title, model, workspace and
 * database; `turn_started` counts a turn and sets the mode and model;
 * `turn_finished` adds the turn's cost and usage; every event moves
 * `updated_us`. Prompts, assistant text and titles go into the search
 * index.
 *
 * Failures of the file itself (full disk, read-only store) are not
 * returned here: they are reported by the "write-failed" signal and by
 * tally_store_flush(), and the event stays queued in memory.
 *
 * Returns: %TRUE when the event was queued; %FALSE with
 *   %TALLY_STORE_ERROR_INVALID when @event lacks a required member or its
 *   `seq` is not greater than the last one handed over for its session
 *   (a step back detected only against the file is reported through
 *   "write-failed" instead)
 */
gboolean
tally_store_append_event (TallyStore  *self,
                          JsonObject  *event,
                          GError     **error)
{
  const char *session_id;
  const char *type;
  gint64 seq, ts;
  gint64 *handed;
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (event != NULL, FALSE);

  session_id = tally_json_object_get_string (event, "session_id", NULL);
  type = tally_json_object_get_string (event, "type", NULL);
  if (session_id == NULL || *session_id == '\0' || type == NULL ||
      !tally_json_object_lookup_int (event, "seq", &seq) || seq < 1 || !tally_json_object_lookup_int (event, "ts", &ts))
    {
      g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                           "An event needs a string type and session_id, an integer seq of at "
                           "least 1 and an integer ts");
      return FALSE;
    }

  if (self->read_only)
    {
      refuse_read_only (self);
      return TRUE;
    }

  g_mutex_lock (&self->seq_lock);
  handed = g_hash_table_lookup (self->handed_seq, session_id);
  if (handed != NULL && seq <= *handed)
    {
      gint64 previous = *handed;

      g_mutex_unlock (&self->seq_lock);
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                   "Event %" G_GINT64_FORMAT " of session %s was refused: seq %" G_GINT64_FORMAT
                   " came before it (seq must increase)", seq, session_id, previous);
      return FALSE;
    }
  if (handed == NULL)
    {
      handed = g_new (gint64, 1);
      g_hash_table_insert (self->handed_seq, g_strdup (session_id), handed);
    }
  *handed = seq;
  g_mutex_unlock (&self->seq_lock);

  item = tally_store_item_new (ITEM_EVENT);
  item->session_id = g_strdup (session_id);
  item->seq = seq;
  item->ts = ts;
  item->type = g_strdup (type);
  item->payload = tally_event_to_json (event);
  item->turn_id = g_strdup (tally_json_object_get_string (event, "turn_id", NULL));

  /* The writer projects these into the sessions, turns and search tables
   * (docs/architecture.md §10); every event is kept in the log as is. */
  switch (tally_event_get_event_type (event))
    {
    case TALLY_EVENT_SESSION_CREATED:
      item->projection = PROJECT_SESSION_CREATED;
      item->text = g_strdup (tally_json_object_get_string (event, "title", NULL));
      item->model = g_strdup (tally_json_object_get_string (event, "model", NULL));
      item->workspace = g_strdup (tally_json_object_get_string (event, "workspace", NULL));
      item->database = g_strdup (tally_json_object_get_string (event, "database", NULL));
      break;

    case TALLY_EVENT_TURN_STARTED:
      item->projection = PROJECT_TURN_STARTED;
      item->text = g_strdup (tally_json_object_get_string (event, "text", NULL));
      item->mode = g_strdup (tally_json_object_get_string (event, "mode", NULL));
      item->model = g_strdup (tally_json_object_get_string (event, "model", NULL));
      break;

    case TALLY_EVENT_TEXT_DELTA:
      item->projection = PROJECT_TEXT_DELTA;
      item->text = g_strdup (tally_json_object_get_string (event, "text", NULL));
      break;

    case TALLY_EVENT_TURN_FINISHED:
      {
        JsonObject *usage = tally_json_object_get_object (event, "usage");

        item->projection = PROJECT_TURN_FINISHED;
        item->cost_known = tally_json_object_lookup_double (event, "cost_usd", &item->cost);
        if (usage != NULL)
          {
            item->usage[0] = json_int_or (usage, "input_tokens", 0);
            item->usage[1] = json_int_or (usage, "output_tokens", 0);
            item->usage[2] = json_int_or (usage, "cache_read_input_tokens", 0);
            item->usage[3] = json_int_or (usage, "cache_creation_input_tokens", 0);
          }
      }
      break;

    case TALLY_EVENT_REDIRECT:
    case TALLY_EVENT_THINKING_DELTA:
    case TALLY_EVENT_BLOCK_DONE:
    case TALLY_EVENT_TOOL_USE_START:
    case TALLY_EVENT_TOOL_RESULT:
    case TALLY_EVENT_APPROVAL_REQUEST:
    case TALLY_EVENT_APPROVAL_RESOLVED:
    case TALLY_EVENT_QUESTION_REQUEST:
    case TALLY_EVENT_QUESTION_RESOLVED:
    case TALLY_EVENT_PLAN_PROPOSED:
    case TALLY_EVENT_CHART_CREATED:
    case TALLY_EVENT_REQUEST_SENT:
    case TALLY_EVENT_API_CALL:
    case TALLY_EVENT_RETRY:
    case TALLY_EVENT_ERROR:
    case TALLY_EVENT_UNKNOWN:
      break;
    }

  g_async_queue_push (self->queue, item);
  return TRUE;
}

/**
 * tally_store_save_message:
 * @self: a #TallyStore
 * @session_id: the session
 * @msg_index: the message's 0-based index in the API conversation
 * @role: `"user"` or `"assistant"`
 * @blocks: (element-type utf8): the message's content blocks, each the
 *   exact JSON text of one block (as kept by #TallyConversation)
 * @error: return location for a #GError
 *
 * Queues the replacement of message @msg_index's stored blocks with
 * @blocks (an empty array removes them), in order with the events. The
 * texts are stored byte for byte; tally_store_load_conversation() gives
 * them back unchanged.
 *
 * Returns: %TRUE when queued; %FALSE with %TALLY_STORE_ERROR_INVALID for an
 *   unknown role or a %NULL block. Write failures are reported as for
 *   tally_store_append_event().
 */
gboolean
tally_store_save_message (TallyStore  *self,
                          const char  *session_id,
                          guint        msg_index,
                          const char  *role,
                          GPtrArray   *blocks,
                          GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (blocks != NULL, FALSE);

  if (g_strcmp0 (role, "user") != 0 && g_strcmp0 (role, "assistant") != 0)
    {
      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                   "Unknown message role “%s”", role ? role : "(null)");
      return FALSE;
    }

  for (guint i = 0; i < blocks->len; i++)
    if (g_ptr_array_index (blocks, i) == NULL)
      {
        g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                     "Block %u of message %u is missing", i, msg_index);
        return FALSE;
      }

  if (self->read_only)
    {
      refuse_read_only (self);
      return TRUE;
    }

  item = tally_store_item_new (ITEM_MESSAGE);
  item->session_id = g_strdup (session_id);
  item->number = msg_index;
  item->role = g_strdup (role);
  item->blocks = g_ptr_array_new_full (blocks->len, g_free);
  for (guint i = 0; i < blocks->len; i++)
    g_ptr_array_add (item->blocks, g_strdup (g_ptr_array_index (blocks, i)));
  g_async_queue_push (self->queue, item);

  return TRUE;
}

/**
 * tally_store_truncate_messages:
 * @self: a #TallyStore
 * @session_id: the session
 * @n_messages: how many messages to keep
 * @error: return location for a #GError
 *
 * Queues the removal of the session's stored messages from index
 * @n_messages on (for a conversation that dropped an incomplete message).
 *
 * Returns: %TRUE when queued. Write failures are reported as for
 *   tally_store_append_event().
 */
gboolean
tally_store_truncate_messages (TallyStore  *self,
                               const char  *session_id,
                               guint        n_messages,
                               GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  if (self->read_only)
    {
      refuse_read_only (self);
      return TRUE;
    }

  item = tally_store_item_new (ITEM_TRUNCATE);
  item->session_id = g_strdup (session_id);
  item->number = n_messages;
  g_async_queue_push (self->queue, item);

  return TRUE;
}

/**
 * tally_store_flush:
 * @self: a #TallyStore
 * @error: return location for a #GError
 *
 * Blocks until everything queued before the call is committed, also the
 * assistant text of running turns into the search index. After a write
 * failure this retries the kept data at once. Call it before exiting (the
 * store's dispose flushes too, but cannot report).
 *
 * Returns: %TRUE when everything queued is in the file; %FALSE when data is
 *   still unwritten (the failure's error: %TALLY_STORE_ERROR_FULL,
 *   %TALLY_STORE_ERROR_IO, …; the data stays queued), when an item was
 *   refused since the previous flush (%TALLY_STORE_ERROR_INVALID), or when
 *   appends were refused because the store is read-only
 *   (%TALLY_STORE_ERROR_READ_ONLY)
 */
gboolean
tally_store_flush (TallyStore  *self,
                   GError     **error)
{
  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  if (self->read_only)
    {
      if (g_atomic_int_compare_and_exchange (&self->refused, 1, 0))
        {
          g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                               self->read_only_reason);
          return FALSE;
        }
      return TRUE;
    }

  return tally_store_run_operation (self, tally_store_item_new (ITEM_FLUSH), NULL, error);
}

/**
 * tally_store_rename_session:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @title: the new title (may be empty)
 * @error: return location for a #GError
 *
 * Sets the session's title (in order with queued writes; waits for the
 * commit). The search index follows.
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error (%TALLY_STORE_ERROR_READ_ONLY, %TALLY_STORE_ERROR_FULL, …)
 */
gboolean
tally_store_rename_session (TallyStore  *self,
                            const char  *session_id,
                            const char  *title,
                            GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (title != NULL, FALSE);

  item = tally_store_item_new (ITEM_RENAME);
  item->session_id = g_strdup (session_id);
  item->payload = g_strdup (title);
  return tally_store_run_operation (self, item, NULL, error);
}

/**
 * tally_store_set_session_pinned:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @pinned: %TRUE to pin the session (the sidebar lists it on top), %FALSE
 *   to unpin it
 * @error: return location for a #GError
 *
 * Sets the session's `pinned` flag (in order with queued writes; waits for
 * the commit). Listing returns it in #TallySessionInfo.pinned.
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error (%TALLY_STORE_ERROR_READ_ONLY, %TALLY_STORE_ERROR_FULL, …)
 */
gboolean
tally_store_set_session_pinned (TallyStore  *self,
                                const char  *session_id,
                                gboolean     pinned,
                                GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  item = tally_store_item_new (ITEM_PIN);
  item->session_id = g_strdup (session_id);
  item->number = pinned ? 1 : 0;
  return tally_store_run_operation (self, item, NULL, error);
}

/**
 * tally_store_delete_session:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Deletes the session with its events, messages, plans and search text
 * (in order with queued writes; waits for the commit).
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error
 */
gboolean
tally_store_delete_session (TallyStore  *self,
                            const char  *session_id,
                            GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  item = tally_store_item_new (ITEM_DELETE);
  item->session_id = g_strdup (session_id);
  if (!tally_store_run_operation (self, item, NULL, error))
    return FALSE;

  g_mutex_lock (&self->seq_lock);
  g_hash_table_remove (self->handed_seq, session_id);
  g_mutex_unlock (&self->seq_lock);

  return TRUE;
}

/**
 * tally_store_add_rule:
 * @self: a #TallyStore
 * @pattern: the rule's pattern, e.g. `Bash(git status)` or `query_database`
 * @decision: `"allow"` or `"deny"`
 * @scope: `"global"` or `"workspace"`
 * @workspace: (nullable): the workspace folder; required for the
 *   `workspace` scope, ignored for `global`
 * @error: return location for a #GError
 *
 * Persists a permission rule (waits for the commit). Adding a rule equal to
 * an existing one returns the existing rule's id.
 *
 * Returns: the rule's id (> 0), or 0 with %TALLY_STORE_ERROR_INVALID for
 *   bad arguments or a write error
 */
gint64
tally_store_add_rule (TallyStore  *self,
                      const char  *pattern,
                      const char  *decision,
                      const char  *scope,
                      const char  *workspace,
                      GError     **error)
{
  Item *item;
  gint64 id = 0;

  g_return_val_if_fail (TALLY_IS_STORE (self), 0);

  if (pattern == NULL || *pattern == '\0' ||
      (g_strcmp0 (decision, "allow") != 0 && g_strcmp0 (decision, "deny") != 0) ||
      (g_strcmp0 (scope, "global") != 0 && g_strcmp0 (scope, "workspace") != 0) ||
      (g_str_equal (scope, "workspace") && (workspace == NULL || *workspace == '\0')))
    {
      g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                           "A rule needs a pattern, the decision allow or deny, and the scope "
                           "global or workspace (with a workspace folder)");
      return 0;
    }

  item = tally_store_item_new (ITEM_ADD_RULE);
  item->payload = g_strdup (pattern);
  item->mode = g_strdup (decision);
  item->scope = g_strdup (scope);
  item->workspace = g_str_equal (scope, "workspace") ? g_strdup (workspace) : NULL;
  if (!tally_store_run_operation (self, item, &id, error))
    return 0;

  return id;
}

/**
 * tally_store_remove_rule:
 * @self: a #TallyStore
 * @rule_id: a rule's id, from tally_store_add_rule() or
 *   tally_store_list_rules()
 * @error: return location for a #GError
 *
 * Removes a rule (waits for the commit).
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_NOT_FOUND, or a
 *   write error
 */
gboolean
tally_store_remove_rule (TallyStore  *self,
                         gint64       rule_id,
                         GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  item = tally_store_item_new (ITEM_REMOVE_RULE);
  item->number = rule_id;
  return tally_store_run_operation (self, item, NULL, error);
}

/**
 * tally_store_save_plan:
 * @self: a #TallyStore
 * @plan_id: the plan's id (kept across refinements)
 * @version: the version, ≥ 1
 * @session_id: (nullable): the session the plan belongs to; deleting the
 *   session deletes its plans
 * @markdown: the plan's text
 * @error: return location for a #GError
 *
 * Stores one version of a plan (in order with queued writes; waits for the
 * commit).
 *
 * Returns: %TRUE on success; %FALSE with %TALLY_STORE_ERROR_INVALID (bad
 *   arguments, or that version exists already) or a write error
 */
gboolean
tally_store_save_plan (TallyStore  *self,
                       const char  *plan_id,
                       gint64       version,
                       const char  *session_id,
                       const char  *markdown,
                       GError     **error)
{
  Item *item;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  if (plan_id == NULL || *plan_id == '\0' || version < 1 || markdown == NULL)
    {
      g_set_error_literal (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_INVALID,
                           "A plan needs an id, a version of at least 1 and its text");
      return FALSE;
    }

  item = tally_store_item_new (ITEM_PLAN);
  item->text = g_strdup (plan_id);
  item->number = version;
  item->session_id = g_strdup (session_id);
  item->payload = g_strdup (markdown);
  return tally_store_run_operation (self, item, NULL, error);
}

/* {{{ Session locks */

/*
 * One writer per session (docs/architecture.md §10.8). Each session has one
 * byte in the file `<path>-lock`, at an offset taken from a hash of its id,
 * and whoever writes to the session holds an open-file-description lock
 * (F_OFD_SETLK) on that byte. The kernel drops the lock when its holder
 * closes the file or dies, so a crash leaves nothing to clean up; the file
 * itself is never removed (removing a lock file races with the next
 * holder). Offsets are 62 bits of a SHA-256, so two sessions sharing a byte
 * is not a practical concern.
 */

static off_t
session_lock_offset (const char *session_id)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize length = sizeof digest;
  guint64 offset = 0;

  g_checksum_update (checksum, (const guchar *)session_id, -1);
  g_checksum_get_digest (checksum, digest, &length);
  for (guint i = 0; i < 8; i++)
    offset = (offset << 8) | digest[i];
  return (off_t)(offset & G_GUINT64_CONSTANT (0x3fffffffffffffff));
}

/* The lock of @session_id: its one byte, for a lock of @type. */
static struct flock
session_lock_region (const char *session_id,
                     short       type)
{
  struct flock lock = { 0 };

  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = session_lock_offset (session_id);
  lock.l_len = 1;
  return lock;
}

static int
session_lock_set (int         fd,
                  const char *session_id,
                  short       type)
{
  struct flock lock = session_lock_region (session_id, type);

  return fcntl (fd, F_OFD_SETLK, &lock);
}

/**
 * tally_store_lock_session:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Takes the session's writer lock, so that no other store object — in
 * another Tally window's process, another tally-cli, or this process —
 * appends to it meanwhile. Holders in the same store object share the
 * lock: each successful call needs one tally_store_unlock_session(). The
 * lock lives until then, or until the store is finalized or the process
 * ends (also by a crash). A read-only store takes no lock and succeeds.
 * Reading a session never needs its lock.
 *
 * Returns: %TRUE when the lock is held; %FALSE with
 *   %TALLY_STORE_ERROR_LOCKED when another holder has it, or
 *   %TALLY_STORE_ERROR_IO when the lock file cannot be opened or locked
 */
gboolean
tally_store_lock_session (TallyStore  *self,
                          const char  *session_id,
                          GError     **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  guint holders;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL && *session_id != '\0', FALSE);

  if (self->read_only)
    return TRUE;

  locker = g_mutex_locker_new (&self->session_lock);

  holders = GPOINTER_TO_UINT (g_hash_table_lookup (self->locked, session_id));
  if (holders > 0)
    {
      g_hash_table_insert (self->locked, g_strdup (session_id), GUINT_TO_POINTER (holders + 1));
      return TRUE;
    }

  if (self->lock_fd < 0)
    {
      g_autofree char *lock_path = g_strconcat (self->path, "-lock", NULL);

      self->lock_fd = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (self->lock_fd < 0)
        {
          int saved_errno = errno;

          g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                       "Could not open the lock file “%s” of the session store: %s",
                       lock_path, g_strerror (saved_errno));
          return FALSE;
        }
    }

  if (session_lock_set (self->lock_fd, session_id, F_WRLCK) != 0)
    {
      int saved_errno = errno;

      if (saved_errno == EAGAIN || saved_errno == EACCES)
        g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_LOCKED,
                     "This session is open in another Tally window or process (session %s in “%s”)",
                     session_id, self->path);
      else
        g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO,
                     "Could not lock session %s in the session store “%s”: %s",
                     session_id, self->path, g_strerror (saved_errno));
      return FALSE;
    }

  g_hash_table_insert (self->locked, g_strdup (session_id), GUINT_TO_POINTER (1));
  return TRUE;
}

/**
 * tally_store_unlock_session:
 * @self: a #TallyStore
 * @session_id: a session locked with tally_store_lock_session()
 *
 * Gives back one hold on the session's writer lock; the last one releases
 * it. Unlocking a session that is not locked does nothing.
 */
void
tally_store_unlock_session (TallyStore *self,
                            const char *session_id)
{
  g_autoptr(GMutexLocker) locker = NULL;
  guint holders;

  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  locker = g_mutex_locker_new (&self->session_lock);
  holders = GPOINTER_TO_UINT (g_hash_table_lookup (self->locked, session_id));
  if (holders == 0)
    return;
  if (holders > 1)
    {
      g_hash_table_insert (self->locked, g_strdup (session_id), GUINT_TO_POINTER (holders - 1));
      return;
    }

  g_hash_table_remove (self->locked, session_id);
  if (self->lock_fd >= 0 && session_lock_set (self->lock_fd, session_id, F_UNLCK) != 0)
    g_message ("Could not unlock session %s in %s: %s", session_id, self->path, g_strerror (errno));
}

/**
 * tally_store_session_is_open_elsewhere:
 * @self: a #TallyStore
 * @session_id: a session's full id
 *
 * Whether another holder (another Tally window's process, another
 * tally-cli, another store object) has the session's writer lock
 * (tally_store_lock_session()) now: a turn may be under way there. Only
 * asks the kernel (F_OFD_GETLK); takes no lock.
 *
 * Returns: %TRUE when another holder has the lock; %FALSE when none has,
 *   when this store holds it, or when it cannot be told (no lock file yet,
 *   an error)
 */
gboolean
tally_store_session_is_open_elsewhere (TallyStore *self,
                                       const char *session_id)
{
  g_autofree char *lock_path = NULL;
  struct flock lock = { 0 };
  int fd;
  int rc;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL && *session_id != '\0', FALSE);

  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->session_lock);

    if (g_hash_table_lookup (self->locked, session_id) != NULL)
      return FALSE;
  }

  lock_path = g_strconcat (self->path, "-lock", NULL);
  fd = g_open (lock_path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return FALSE;
  lock = session_lock_region (session_id, F_WRLCK);
  rc = fcntl (fd, F_OFD_GETLK, &lock);
  close (fd);
  return rc == 0 && lock.l_type != F_UNLCK;
}

/* }}} */

/**
 * tally_store_set_max_page_count_for_testing:
 * @self: a writable #TallyStore
 * @max_pages: the new `PRAGMA max_page_count` of the writer's connection
 * @result: (out) (optional): the limit in force afterwards (SQLite never
 *   sets it below the current size)
 * @error: return location for a #GError
 *
 * Test hook: limits the file's size so that writes fail with SQLITE_FULL.
 * Runs on the writer thread between batches, ahead of any retry.
 *
 * Returns: %TRUE on success
 */
gboolean
tally_store_set_max_page_count_for_testing (TallyStore  *self,
                                            gint64       max_pages,
                                            gint64      *result,
                                            GError     **error)
{
  Item *item;
  gint64 value = 0;

  g_return_val_if_fail (TALLY_IS_STORE (self), FALSE);

  item = tally_store_item_new (ITEM_HOOK_MAX_PAGES);
  item->number = max_pages;
  if (!tally_store_run_operation (self, item, &value, error))
    return FALSE;
  if (result != NULL)
    *result = value;
  return TRUE;
}

/* }}} */
