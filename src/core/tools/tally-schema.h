/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallySchemaKind:
 * @TALLY_SCHEMA_TABLE: a table (its text names its row count)
 * @TALLY_SCHEMA_VIEW: a view
 * @TALLY_SCHEMA_MATERIALIZED_VIEW: a materialized view (PostgreSQL)
 *
 * What a #TallySchemaTable describes.
 */
typedef enum {
  TALLY_SCHEMA_TABLE,
  TALLY_SCHEMA_VIEW,
  TALLY_SCHEMA_MATERIALIZED_VIEW,
} TallySchemaKind;

/**
 * TallySchemaColumn:
 * @name: the column's name
 * @type: the declared type, "" when none was declared (SQLite allows that)
 * @primary: whether the column alone is the primary key (shown as `PK`; a
 *   key over several columns is a line of its table instead)
 * @not_null: whether the column is NOT NULL
 * @reference: (nullable): `table(column)` when the column alone is a
 *   foreign key
 * @comment: (nullable): the column's comment
 *
 * One column of a #TallySchemaTable; all strings are owned by it.
 */
typedef struct
{
  char     *name;
  char     *type;
  gboolean  primary;
  gboolean  not_null;
  char     *reference;
  char     *comment;
} TallySchemaColumn;

/**
 * TallySchemaTable:
 * @name: the name the text shows
 * @aliases: (nullable) (array zero-terminated=1): other names that
 *   tally_schema_dup_text() finds it by (PostgreSQL: `schema.name` and the bare
 *   name)
 * @kind: table or view
 * @rows: (nullable): for a table, what the text says about its rows in
 *   parentheses ("347 rows", "about 6 rows", …)
 * @comment: (nullable): the table's comment
 * @columns: (element-type TallySchemaColumn): the columns in order
 * @lines: (element-type utf8): lines after the columns, without indent
 *   or newline: keys over several columns, unique constraints, indexes
 *
 * The engine-neutral description of one table or view that `get_schema`
 * writes for SQLite (tally-tool-get-schema.c) and PostgreSQL
 * (tally-pg-query.c), docs/architecture.md §8.1.
 */
typedef struct
{
  char             *name;
  char            **aliases;
  TallySchemaKind   kind;
  char             *rows;
  char             *comment;
  GPtrArray        *columns;
  GPtrArray        *lines;
} TallySchemaTable;

TallySchemaTable  *tally_schema_table_new          (const char        *name,
                                                    TallySchemaKind    kind);
void               tally_schema_table_free         (TallySchemaTable  *table);
TallySchemaColumn *tally_schema_table_add_column   (TallySchemaTable  *table,
                                                    const char        *name,
                                                    const char        *type,
                                                    gboolean           not_null);
TallySchemaColumn *tally_schema_table_find_column  (TallySchemaTable  *table,
                                                    const char        *name,
                                                    gboolean           ignore_case);
void               tally_schema_table_add_line     (TallySchemaTable  *table,
                                                    const char        *format,
                                                    ...) G_GNUC_PRINTF (2, 3);
void               tally_schema_table_write        (TallySchemaTable  *table,
                                                    GString           *out);

typedef gboolean (*TallySchemaFillFunc) (TallySchemaTable  *table,
                                         gpointer           user_data,
                                         GError           **error);

char              *tally_schema_dup_text           (GPtrArray            *tables,
                                                    const char           *name,
                                                    const char           *database,
                                                    const char           *note,
                                                    TallySchemaFillFunc   fill,
                                                    gpointer              user_data,
                                                    GError              **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallySchemaTable, tally_schema_table_free)

G_END_DECLS
