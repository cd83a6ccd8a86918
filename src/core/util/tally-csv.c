/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-util"

#include "config.h"

#include <string.h>

#include "tally-csv.h"

/*
 * Tables leave the window in two shapes: tab-separated text on the
 * clipboard, which spreadsheets split into cells when it is pasted, and
 * CSV files as RFC 4180 describes them. Both are written here, apart from
 * any widget, so the window, the CLI and the tests share one writer.
 */

static void
append_tsv_cell (GString    *out,
                 const char *cell)
{
  /* TSV has no quoting that every spreadsheet understands, so the
   * characters that would end a cell or a row become spaces. */
  for (const char *p = cell; *p != '\0'; p++)
    {
      if (*p == '\t' || *p == '\n' || *p == '\r')
        g_string_append_c (out, ' ');
      else
        g_string_append_c (out, *p);
    }
}

static void
append_csv_field (GString    *out,
                  const char *field,
                  gboolean    alone)
{
  /* RFC 4180, section 2, rule 6: fields containing line breaks, double
   * quotes or commas are enclosed in double quotes. A record of one empty
   * field is quoted too, so that it is not read as a blank line. */
  if (strpbrk (field, ",\"\r\n") == NULL && !(alone && field[0] == '\0'))
    {
      g_string_append (out, field);
      return;
    }

  g_string_append_c (out, '"');
  for (const char *p = field; *p != '\0'; p++)
    {
      /* Rule 7: a double quote inside a quoted field is doubled. */
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

/**
 * tally_csv_append_row:
 * @out: the text to append to
 * @format: TSV or CSV
 * @cells: (array length=n_cells) (nullable): the row's cells in UTF-8; a
 *   %NULL cell (an SQL `NULL`) is written as an empty one
 * @n_cells: the number of cells
 *
 * Appends one row to @out, its line end included: LF for
 * %TALLY_CSV_FORMAT_TSV, CRLF for %TALLY_CSV_FORMAT_CSV (RFC 4180,
 * section 2, rule 1).
 */
void
tally_csv_append_row (GString            *out,
                      TallyCsvFormat      format,
                      const char * const *cells,
                      gsize               n_cells)
{
  g_return_if_fail (out != NULL);
  g_return_if_fail (cells != NULL || n_cells == 0);

  for (gsize i = 0; i < n_cells; i++)
    {
      const char *cell = cells[i] != NULL ? cells[i] : "";

      if (format == TALLY_CSV_FORMAT_TSV)
        {
          if (i > 0)
            g_string_append_c (out, '\t');
          append_tsv_cell (out, cell);
        }
      else
        {
          if (i > 0)
            g_string_append_c (out, ',');
          append_csv_field (out, cell, n_cells == 1);
        }
    }

  g_string_append (out, format == TALLY_CSV_FORMAT_TSV ? "\n" : "\r\n");
}

/**
 * tally_csv_format_table:
 * @format: TSV or CSV
 * @cells: (array) (nullable): @n_rows × @n_columns cells, row-major, the
 *   header row first; %NULL cells are written empty
 * @n_columns: the number of columns, at least 1
 * @n_rows: the number of rows, the header included
 *
 * Writes a whole table with tally_csv_append_row(), every row with its
 * line end. For %TALLY_CSV_FORMAT_CSV the result is an RFC 4180 file with
 * a header record, in UTF-8 without a byte order mark.
 *
 * Returns: (transfer full): the text; empty when @n_rows is 0
 */
char *
tally_csv_format_table (TallyCsvFormat      format,
                        const char * const *cells,
                        gsize               n_columns,
                        gsize               n_rows)
{
  GString *out;

  g_return_val_if_fail (n_columns > 0 || n_rows == 0, NULL);
  g_return_val_if_fail (cells != NULL || n_rows == 0, NULL);

  out = g_string_new (NULL);
  for (gsize r = 0; r < n_rows; r++)
    tally_csv_append_row (out, format, cells + r * n_columns, n_columns);

  return g_string_free (out, FALSE);
}
