/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-query-text.h"
#include "tally-sensitive-columns.h"
#include "tally-tool-private.h"
#include "tally-tool-query-database.h"

/* The text table of `query_database` (docs/architecture.md §8), written
 * the same way by the SQLite path (tally-tool-query-database.c) and the
 * PostgreSQL one (tally-pg-query.c). */

/* Values longer than this many characters are cut in the table. */
#define MAX_CELL_CHARS 200

/* Rows past the cap are counted up to this many more, so the model learns
 * how much it did not see without an unbounded scan. */
#define MAX_COUNTED_ROWS 100000

/**
 * tally_query_text_init:
 * @text: a #TallyQueryText on the stack
 * @max_rows: the most rows to write
 *
 * Starts an empty table. Free it with tally_query_text_clear() unless
 * tally_query_text_finish() took its text.
 */
void
tally_query_text_init (TallyQueryText *text,
                       guint64         max_rows)
{
  g_return_if_fail (text != NULL);

  *text = (TallyQueryText) { .out = g_string_new (NULL), .max_rows = max_rows };
}

/**
 * tally_query_text_clear:
 * @text: a #TallyQueryText
 *
 * Frees the text of @text, if it still holds one.
 */
void
tally_query_text_clear (TallyQueryText *text)
{
  g_return_if_fail (text != NULL);

  if (text->out != NULL)
    g_string_free (g_steal_pointer (&text->out), TRUE);
}

/**
 * tally_query_text_add_column:
 * @text: a #TallyQueryText before its first row
 * @name: the next column's name, cut at 200 characters
 *
 * Writes one name of the header line.
 */
void
tally_query_text_add_column (TallyQueryText *text,
                             const char     *name)
{
  g_return_if_fail (text != NULL && name != NULL);

  if (text->n_cells++ > 0)
    g_string_append (text->out, " | ");
  tally_tool_append_clipped (text->out, name, -1, MAX_CELL_CHARS);
}

/**
 * tally_query_text_end_header:
 * @text: a #TallyQueryText
 *
 * Ends the header line (nothing is written for a result without columns).
 */
void
tally_query_text_end_header (TallyQueryText *text)
{
  g_return_if_fail (text != NULL);

  if (text->n_cells > 0)
    g_string_append_c (text->out, '\n');
}

/**
 * tally_query_text_begin_row:
 * @text: a #TallyQueryText
 *
 * Counts a row and says whether to write it: a row past @max_rows, or
 * after one that did not fit in the byte cap, is only counted. Once
 * 100,000 rows are hidden, @count_capped is set: read no more rows.
 *
 * Returns: %TRUE when the row's cells are to be written, then
 *   tally_query_text_end_row()
 */
gboolean
tally_query_text_begin_row (TallyQueryText *text)
{
  g_return_val_if_fail (text != NULL, FALSE);

  if (text->shown >= text->max_rows || text->byte_cap_hit)
    {
      if (++text->hidden >= MAX_COUNTED_ROWS)
        text->count_capped = TRUE;
      return FALSE;
    }

  text->n_cells = 0;
  text->row_start = text->out->len;
  text->row_redactions = 0;
  return TRUE;
}

/**
 * tally_query_text_next_cell:
 * @text: a #TallyQueryText in a row
 *
 * Starts the row's next cell: append its value to the returned string,
 * with tally_query_text_append_value() for text.
 *
 * Returns: (transfer none): @text's @out
 */
GString *
tally_query_text_next_cell (TallyQueryText *text)
{
  g_return_val_if_fail (text != NULL, NULL);

  if (text->n_cells++ > 0)
    g_string_append (text->out, " | ");
  return text->out;
}

/**
 * tally_query_text_add_redacted:
 * @text: a #TallyQueryText in a row
 *
 * Writes a cell whose value is withheld (%TALLY_SENSITIVE_REDACTED,
 * docs/ledger.md §2); it counts in @redactions when the row is kept.
 */
void
tally_query_text_add_redacted (TallyQueryText *text)
{
  g_return_if_fail (text != NULL);

  g_string_append (tally_query_text_next_cell (text), TALLY_SENSITIVE_REDACTED);
  text->row_redactions++;
}

/**
 * tally_query_text_end_row:
 * @text: a #TallyQueryText in a row
 *
 * Ends the row: it is kept when the text stays within
 * %TALLY_TOOL_QUERY_DATABASE_MAX_BYTES, else taken back, counted as
 * hidden, and every later row only counted.
 */
void
tally_query_text_end_row (TallyQueryText *text)
{
  g_return_if_fail (text != NULL);

  g_string_append_c (text->out, '\n');
  if (text->out->len > TALLY_TOOL_QUERY_DATABASE_MAX_BYTES)
    {
      g_string_truncate (text->out, text->row_start);
      text->byte_cap_hit = TRUE;
      text->hidden++;
      return;
    }

  text->shown++;
  text->redactions += text->row_redactions;
}

/**
 * tally_query_text_finish:
 * @text: a #TallyQueryText
 *
 * Adds the row count: "(3 rows)", or with hidden rows a line that says how
 * many and why, then "(200 of 1,234 rows shown)". The counts in @text stay
 * readable; its text is taken.
 *
 * Returns: (transfer full): the table text
 */
char *
tally_query_text_finish (TallyQueryText *text)
{
  g_autofree char *total = NULL;

  g_return_val_if_fail (text != NULL && text->out != NULL, NULL);

  total = tally_format_count ((gint64) (text->shown + text->hidden), TALLY_GROUPING_COMMA);
  if (text->hidden > 0)
    {
      g_autofree char *hidden_text = tally_format_count ((gint64) text->hidden, TALLY_GROUPING_COMMA);
      g_autofree char *shown_text = tally_format_count ((gint64) text->shown, TALLY_GROUPING_COMMA);
      g_autofree char *cap_note = NULL;
      const char *at_least = text->count_capped ? "at least " : "";

      if (text->byte_cap_hit)
        cap_note = g_strdup_printf ("output cap %d KiB", TALLY_TOOL_QUERY_DATABASE_MAX_BYTES / 1024);
      else
        cap_note = g_strdup_printf ("cap %" G_GUINT64_FORMAT " rows", text->max_rows);

      g_string_append_printf (text->out, "… %s%s more %s not shown (%s)\n(%s of %s%s rows shown)",
                              at_least, hidden_text, text->hidden == 1 ? "row" : "rows", cap_note,
                              shown_text, at_least, total);
    }
  else
    g_string_append_printf (text->out, "(%s %s)", total, text->shown == 1 ? "row" : "rows");

  return g_string_free (g_steal_pointer (&text->out), FALSE);
}

/**
 * tally_query_text_append_value:
 * @out: the text to append to
 * @value: a value as text, not necessarily nul-terminated
 * @length: its length in bytes
 *
 * Appends a text value as a cell shows it: on one line (newlines, carriage
 * returns, tabs and nuls written as `\n`, `\r`, `\t`, `\0`) and cut at 200
 * characters. Only the first part of @value can be shown, so only that
 * part is looked at: a multi-megabyte value costs no more than a short one.
 */
void
tally_query_text_append_value (GString    *out,
                               const char *value,
                               gsize       length)
{
  g_autoptr(GString) flat = g_string_sized_new (MIN (length, 4 * MAX_CELL_CHARS) + 8);

  g_return_if_fail (out != NULL && (value != NULL || length == 0));

  for (gsize i = 0; i < length && flat->len < 8 * MAX_CELL_CHARS; i++)
    {
      switch (value[i])
        {
        case '\n': g_string_append (flat, "\\n"); break;
        case '\r': g_string_append (flat, "\\r"); break;
        case '\t': g_string_append (flat, "\\t"); break;
        case '\0': g_string_append (flat, "\\0"); break;
        default:   g_string_append_c (flat, value[i]); break;
        }
    }
  if (flat->len < length && flat->len >= 8 * MAX_CELL_CHARS)
    g_string_append (flat, "…");

  tally_tool_append_clipped (out, flat->str, flat->len, MAX_CELL_CHARS);
}

/**
 * tally_query_text_redact_error:
 * @error: (nullable): a failed query's error
 * @quote: the quote character the engine's messages quote values with
 *   (`"` for PostgreSQL, `'` for SQLite)
 *
 * Replaces every @quote-quoted run of a %TALLY_TOOL_ERROR's message with
 * `[redacted]`, for a statement that read a marked column: the engine may
 * quote the value it failed on (docs/ledger.md §5). Other errors are left
 * as they are.
 */
void
tally_query_text_redact_error (GError *error,
                               char    quote)
{
  char *message;

  if (error == NULL || error->domain != TALLY_TOOL_ERROR || strchr (error->message, quote) == NULL)
    return;

  message = tally_sensitive_columns_redact_quoted (error->message, quote);
  g_free (error->message);
  error->message = message;
}
