/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-query-rows.h"

/**
 * tally_query_rows_new:
 *
 * Returns: (transfer full): an empty result: no rows, no column names, not
 *   @more; free with tally_query_rows_free()
 */
TallyQueryRows *
tally_query_rows_new (void)
{
  TallyQueryRows *rows = g_new0 (TallyQueryRows, 1);

  rows->rows = json_array_new ();
  return rows;
}

/**
 * tally_query_rows_free:
 * @rows: (nullable) (transfer full): a #TallyQueryRows
 *
 * Frees @rows and its members.
 */
void
tally_query_rows_free (TallyQueryRows *rows)
{
  if (rows == NULL)
    return;

  g_clear_pointer (&rows->rows, json_array_unref);
  g_strfreev (rows->column_names);
  g_free (rows);
}
