/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyCsvFormat:
 * @TALLY_CSV_FORMAT_TSV: tab-separated values for the clipboard: one line
 *   per row ending in LF, cells separated by a tab; a tab, CR or LF inside a
 *   cell becomes a space, nothing is quoted (a spreadsheet takes a paste of
 *   this as rows and columns)
 * @TALLY_CSV_FORMAT_CSV: comma-separated values as RFC 4180 defines them:
 *   records end in CRLF, a field holding a comma, a double quote, CR or LF
 *   is enclosed in double quotes and each double quote inside it doubled
 *
 * The text tally_csv_append_row() and tally_csv_format_table() write. Both
 * keep the cells' UTF-8 as it is and write no byte order mark.
 */
typedef enum {
  TALLY_CSV_FORMAT_TSV,
  TALLY_CSV_FORMAT_CSV,
} TallyCsvFormat;

void  tally_csv_append_row   (GString            *out,
                              TallyCsvFormat      format,
                              const char * const *cells,
                              gsize               n_cells);
char *tally_csv_format_table (TallyCsvFormat      format,
                              const char * const *cells,
                              gsize               n_columns,
                              gsize               n_rows);

G_END_DECLS
