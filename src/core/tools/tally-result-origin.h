/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TallyOriginColumn:
 * @name: the result column's name
 * @schema: (nullable): the schema of the direct origin (PostgreSQL)
 * @table: (nullable): the table the column is a plain copy of, or %NULL
 *   when it is derived (an expression, an aggregate, a derived table)
 * @column: (nullable): the origin's column, with @table
 * @sources: (element-type utf8): the `table.column` names the column's
 *   values come from: the direct origin, or for a derived column the columns
 *   its expression was seen to read (may be empty)
 * @derived: %TRUE when the column has no direct origin
 * @redacted: %TRUE when every value of the column is replaced by
 *   %TALLY_SENSITIVE_REDACTED in the tool result
 *
 * Where one result column came from (docs/ledger.md §1).
 */
typedef struct
{
  char      *name;
  char      *schema;
  char      *table;
  char      *column;
  GPtrArray *sources;
  gboolean   derived;
  gboolean   redacted;
} TallyOriginColumn;

/**
 * TallyResultOrigin:
 * @columns: (element-type TallyOriginColumn): one per result column
 * @rows: the rows the tool result shows
 * @redactions: the values replaced by %TALLY_SENSITIVE_REDACTED
 * @reads: (element-type utf8): every `table.column` the statement read
 *   (SQLite: the authorizer's read callbacks; PostgreSQL: the direct
 *   origins), each once
 *
 * The origins of a query result and what was redacted in it.
 */
typedef struct
{
  GPtrArray *columns;
  gint64     rows;
  gint64     redactions;
  GPtrArray *reads;
} TallyResultOrigin;

TallyResultOrigin *tally_result_origin_new          (void);
TallyOriginColumn *tally_result_origin_add_column   (TallyResultOrigin *self,
                                                     const char        *name);
void               tally_origin_column_set_direct   (TallyOriginColumn *column,
                                                     const char        *schema,
                                                     const char        *table,
                                                     const char        *name);
void               tally_origin_column_add_source   (TallyOriginColumn *column,
                                                     const char        *source);
void               tally_result_origin_add_read     (TallyResultOrigin *self,
                                                     const char        *read);
gboolean           tally_result_origin_is_redacted  (TallyResultOrigin *self,
                                                     guint              index);
JsonObject        *tally_result_origin_to_json      (TallyResultOrigin *self);
void               tally_result_origin_free         (TallyResultOrigin *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyResultOrigin, tally_result_origin_free)

G_END_DECLS
