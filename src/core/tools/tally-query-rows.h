/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TallyQueryRows:
 * @rows: (element-type JsonArray): the rows read, each a JSON array of
 *   scalars (integer, double, boolean, string or null) in column order
 * @column_names: (array zero-terminated=1) (nullable): the result's column
 *   names; %NULL until the statement ran
 * @more: %TRUE when the statement had more rows than were asked for (the
 *   rest is not read)
 *
 * A query's result as data rather than text, as `create_chart` takes it
 * (docs/charts.md): what tally_tool_query_database_fetch_rows() (SQLite)
 * and tally_pg_query_fetch_rows() (PostgreSQL) return. The struct owns its
 * members.
 */
typedef struct {
  JsonArray *rows;
  char     **column_names;
  gboolean   more;
} TallyQueryRows;

TallyQueryRows *tally_query_rows_new  (void);
void            tally_query_rows_free (TallyQueryRows *rows);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyQueryRows, tally_query_rows_free)

G_END_DECLS
