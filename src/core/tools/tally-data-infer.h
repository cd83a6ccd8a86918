/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/* What tally_data_import() infers from a data file's values: the SQL
 * names of its tables and columns (docs/data-files.md §1) and the
 * columns' types (§3). Private to src/core/tools; tally-data-infer.c. */

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyDataKind:
 * @TALLY_DATA_KIND_INTEGER: an integer that fits 64 bits
 * @TALLY_DATA_KIND_REAL: a finite decimal number with a fraction or an
 *   exponent
 * @TALLY_DATA_KIND_DATE: a date, YYYY-MM-DD
 * @TALLY_DATA_KIND_DATETIME: a date and a time as ISO 8601 writes them
 * @TALLY_DATA_KIND_TEXT: anything else
 * @TALLY_DATA_KIND_BOOL: JSON true or false
 *
 * What one value looks like (docs/data-files.md §3). These are flags: a
 * column keeps the union of its values' kinds and
 * tally_data_column_type() turns it into the column's type.
 */
typedef enum {
  TALLY_DATA_KIND_INTEGER  = 1 << 0,
  TALLY_DATA_KIND_REAL     = 1 << 1,
  TALLY_DATA_KIND_DATE     = 1 << 2,
  TALLY_DATA_KIND_DATETIME = 1 << 3,
  TALLY_DATA_KIND_TEXT     = 1 << 4,
  TALLY_DATA_KIND_BOOL     = 1 << 5,
} TallyDataKind;

/**
 * TallyDataType:
 * @TALLY_DATA_TYPE_INTEGER: INTEGER
 * @TALLY_DATA_TYPE_REAL: REAL
 * @TALLY_DATA_TYPE_DATE: dates kept as text, declared DATE TEXT
 * @TALLY_DATA_TYPE_DATETIME: date-times kept as text, declared
 *   DATETIME TEXT
 * @TALLY_DATA_TYPE_TEXT: TEXT
 *
 * An imported column's type (docs/data-files.md §3).
 */
typedef enum {
  TALLY_DATA_TYPE_INTEGER,
  TALLY_DATA_TYPE_REAL,
  TALLY_DATA_TYPE_DATE,
  TALLY_DATA_TYPE_DATETIME,
  TALLY_DATA_TYPE_TEXT,
} TallyDataType;

char          *tally_data_sanitize_identifier  (const char    *text,
                                                const char    *fallback);
char          *tally_data_unique_name          (const char    *base,
                                                GHashTable    *taken);

gboolean       tally_data_parse_integer        (const char    *text,
                                                gsize          length,
                                                gint64        *value);
gboolean       tally_data_parse_real           (const char    *text,
                                                gsize          length,
                                                double        *value);
gboolean       tally_data_is_date              (const char    *text,
                                                gsize          length);
gboolean       tally_data_is_datetime          (const char    *text,
                                                gsize          length);

TallyDataKind  tally_data_classify_text        (const char    *text,
                                                gsize          length,
                                                gboolean       numbers);
TallyDataType  tally_data_column_type          (guint          kinds);
const char    *tally_data_type_get_declaration (TallyDataType  type);

G_END_DECLS
