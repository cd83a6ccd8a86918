/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * TALLY_DATA_IMPORT_ERROR:
 *
 * The error domain of tally_data_import() and the data file reader; the
 * codes are #TallyDataImportError. Cancelling gives %G_IO_ERROR_CANCELLED
 * instead, and a file that cannot be opened or read the #GIOErrorEnum code
 * GIO reported.
 */
#define TALLY_DATA_IMPORT_ERROR (tally_data_import_error_quark ())

/**
 * TallyDataImportError:
 * @TALLY_DATA_IMPORT_ERROR_UNSUPPORTED: the path is neither a `.csv`,
 *   `.tsv`, `.jsonl` or `.ndjson` file nor a folder holding such files
 * @TALLY_DATA_IMPORT_ERROR_EMPTY: the file holds no record at all
 * @TALLY_DATA_IMPORT_ERROR_BINARY: the file holds a NUL byte, so it is not
 *   text
 * @TALLY_DATA_IMPORT_ERROR_ENCODING: the file is not UTF-8 (the message
 *   names the line)
 * @TALLY_DATA_IMPORT_ERROR_RAGGED: a record has a different number of
 *   fields than the first one (the message names the line and both counts)
 * @TALLY_DATA_IMPORT_ERROR_QUOTE: a quoted field is never closed
 * @TALLY_DATA_IMPORT_ERROR_TOO_LONG: one record is longer than
 *   %TALLY_DATA_IMPORT_MAX_RECORD bytes
 * @TALLY_DATA_IMPORT_ERROR_JSON: a line of a JSON Lines file is not a JSON
 *   object
 * @TALLY_DATA_IMPORT_ERROR_CHANGED: the file changed while it was read
 * @TALLY_DATA_IMPORT_ERROR_DATABASE: SQLite refused to create or fill the
 *   database (the message is SQLite's)
 *
 * Why an import failed. Every failure leaves the database as it was
 * before the call (docs/data-files.md §5).
 */
typedef enum {
  TALLY_DATA_IMPORT_ERROR_UNSUPPORTED,
  TALLY_DATA_IMPORT_ERROR_EMPTY,
  TALLY_DATA_IMPORT_ERROR_BINARY,
  TALLY_DATA_IMPORT_ERROR_ENCODING,
  TALLY_DATA_IMPORT_ERROR_RAGGED,
  TALLY_DATA_IMPORT_ERROR_QUOTE,
  TALLY_DATA_IMPORT_ERROR_TOO_LONG,
  TALLY_DATA_IMPORT_ERROR_JSON,
  TALLY_DATA_IMPORT_ERROR_CHANGED,
  TALLY_DATA_IMPORT_ERROR_DATABASE,
} TallyDataImportError;

/**
 * TALLY_DATA_IMPORT_MAX_RECORD:
 *
 * The longest record (a CSV row with all its fields, or one line of JSON
 * Lines) the importer holds in memory, in bytes: 64 MiB. A longer one is
 * almost always a quote that was never closed.
 */
#define TALLY_DATA_IMPORT_MAX_RECORD (64 * 1024 * 1024)

/**
 * TALLY_DATA_IMPORT_LEDGER:
 *
 * The table of the data database that remembers which file became which
 * table (path, size, modification time, table, rows, columns), so that an
 * unchanged file is not imported twice. `get_schema` leaves it out.
 */
#define TALLY_DATA_IMPORT_LEDGER "_tally_imports"

/**
 * TallyDataTable:
 * @path: the absolute path of the file, in the GLib file name encoding
 * @table: the table it became, an SQL identifier (UTF-8)
 * @n_rows: rows in the table
 * @n_columns: columns in the table
 * @reused: %TRUE when the file was unchanged since an earlier import and
 *   was not read again
 *
 * One imported file, as tally_data_import() reports it.
 */
typedef struct {
  char    *path;
  char    *table;
  gint64   n_rows;
  guint    n_columns;
  gboolean reused;
} TallyDataTable;

/**
 * TallyDataImportProgressFunc:
 * @bytes_done: bytes read so far, over all files
 * @bytes_total: bytes to read in all, over all files (each file is read
 *   twice, once to check it and infer its types and once to insert it, so
 *   this is twice the files' size)
 * @user_data: closure
 *
 * Reports how far an import has got. tally_data_import() calls it in its
 * own thread; tally_data_import_async() in the thread-default main context
 * of its caller, at most a few times per second's worth of data.
 */
typedef void (*TallyDataImportProgressFunc) (guint64  bytes_done,
                                             guint64  bytes_total,
                                             gpointer user_data);

GQuark     tally_data_import_error_quark         (void);

void       tally_data_table_free                 (TallyDataTable              *table);

gboolean   tally_data_import_is_data_path        (const char                  *path);
char      *tally_data_import_dup_database_path   (const char                  *workspace);

GPtrArray *tally_data_import                     (const char                  *database_path,
                                                  const char * const          *paths,
                                                  TallyDataImportProgressFunc  progress,
                                                  gpointer                     progress_data,
                                                  GCancellable                *cancellable,
                                                  GError                     **error);
void       tally_data_import_async               (const char                  *database_path,
                                                  const char * const          *paths,
                                                  TallyDataImportProgressFunc  progress,
                                                  gpointer                     progress_data,
                                                  GDestroyNotify               progress_destroy,
                                                  GCancellable                *cancellable,
                                                  GAsyncReadyCallback          callback,
                                                  gpointer                     user_data);
GPtrArray *tally_data_import_finish              (GAsyncResult                *result,
                                                  GError                     **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyDataTable, tally_data_table_free)

G_END_DECLS
