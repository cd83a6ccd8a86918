/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "tally-pg-conninfo.h"

G_BEGIN_DECLS

/**
 * TALLY_PG_SOURCE_DEFAULT_TIMEOUT_MS:
 *
 * The `statement_timeout` a connection is opened with unless
 * tally_pg_source_set_statement_timeout_ms() says otherwise: 30 s, the
 * same as `query_database` on SQLite.
 */
#define TALLY_PG_SOURCE_DEFAULT_TIMEOUT_MS 30000

/**
 * TallyPgColumns:
 * @n_columns: how many columns the result has
 * @names: (array length=n_columns): the column names, UTF-8
 * @types: (array length=n_columns): the type OID of each column (`int4`
 *   is 23, `text` 25, … as in `pg_type`)
 * @table_oids: (array length=n_columns): the OID of the table each column
 *   is a plain copy of (PQftable()), 0 for a computed column
 * @table_columns: (array length=n_columns): the column number in that
 *   table (PQftablecol(), `pg_attribute.attnum`), 0 for none
 *
 * The shape of a result, handed to a #TallyPgRowFunc with every row.
 */
typedef struct
{
  guint               n_columns;
  const char * const *names;
  const guint32      *types;
  const guint32      *table_oids;
  const int          *table_columns;
} TallyPgColumns;

/**
 * TallyPgRowFunc:
 * @columns: the result's columns
 * @values: (array length=columns->n_columns) (nullable): the row in
 *   PostgreSQL's text format, %NULL for an SQL NULL; %NULL itself for the
 *   one call made when the result has no rows (so that the caller learns
 *   the columns)
 * @lengths: (array length=columns->n_columns) (nullable): the byte length
 *   of each value
 * @user_data: closure
 *
 * Called once per row by tally_pg_source_query(), in the thread that runs
 * the query. The arrays are valid during the call only.
 *
 * Returns: %TRUE to go on, %FALSE to stop reading: the rest of the result
 *   is cancelled on the server and never reaches memory
 */
typedef gboolean (*TallyPgRowFunc) (const TallyPgColumns *columns,
                                    const char * const   *values,
                                    const int            *lengths,
                                    gpointer              user_data);

#define TALLY_TYPE_PG_SOURCE (tally_pg_source_get_type ())

G_DECLARE_FINAL_TYPE (TallyPgSource, tally_pg_source, TALLY, PG_SOURCE, GObject)

TallyPgSource *tally_pg_source_new                      (const char           *conninfo,
                                                         GError              **error);
TallyPgSource *tally_pg_source_get_shared               (const char           *conninfo,
                                                         GError              **error);
const char    *tally_pg_source_get_redacted             (TallyPgSource        *self);
char          *tally_pg_source_dup_database_name        (TallyPgSource        *self);
void           tally_pg_source_set_statement_timeout_ms (TallyPgSource        *self,
                                                         guint                 timeout_ms);

gboolean       tally_pg_source_connect                  (TallyPgSource        *self,
                                                         GCancellable         *cancellable,
                                                         GError              **error);
void           tally_pg_source_connect_async            (TallyPgSource        *self,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
gboolean       tally_pg_source_connect_finish           (TallyPgSource        *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);

char          *tally_pg_source_dup_server_version       (TallyPgSource        *self);
char          *tally_pg_source_dup_engine               (TallyPgSource        *self);
char          *tally_pg_source_dup_warning              (TallyPgSource        *self);
guint          tally_pg_source_get_n_connections        (TallyPgSource        *self);

gboolean       tally_pg_source_query                    (TallyPgSource        *self,
                                                         const char           *sql,
                                                         guint                 timeout_ms,
                                                         TallyPgRowFunc        func,
                                                         gpointer              user_data,
                                                         GCancellable         *cancellable,
                                                         GError              **error);

G_END_DECLS
