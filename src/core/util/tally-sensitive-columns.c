/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-util"

#include "config.h"

#include "tally-sensitive-columns.h"

#include <string.h>

/* The analyst's sensitive columns (docs/ledger.md §2): a list of
 * `table.column` (or `schema.table.column`) entries, kept one per line in
 * the database profile's `sensitive-columns` file. Names compare without
 * regard to ASCII case, so a marking never misses a column because of how
 * the SQL spelled it: a false match only redacts more. */

static gboolean
part_is_valid (const char *part)
{
  if (part == NULL || part[0] == '\0')
    return FALSE;

  for (const char *p = part; *p != '\0'; p++)
    {
      if (g_ascii_isspace (*p) || *p == '"' || *p == '`')
        return FALSE;
    }

  return TRUE;
}

/**
 * tally_sensitive_columns_check_entry:
 * @entry: one marking, e.g. `customers.email` or `sales.customers.email`
 * @error: return location for a #GError
 *
 * Checks the shape of one marking: two or three non-empty names joined by
 * dots, without spaces or quotes.
 *
 * Errors: %G_IO_ERROR_INVALID_DATA with a sentence naming the entry.
 *
 * Returns: %TRUE when @entry can be used
 */
gboolean
tally_sensitive_columns_check_entry (const char  *entry,
                                     GError     **error)
{
  g_auto(GStrv) parts = NULL;
  guint n;

  g_return_val_if_fail (entry != NULL, FALSE);

  parts = g_strsplit (entry, ".", -1);
  n = g_strv_length (parts);
  for (guint i = 0; i < n; i++)
    {
      if (!part_is_valid (parts[i]))
        n = 0;
    }

  if (n != 2 && n != 3)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "“%s” is not a column: write table.column (or schema.table.column), "
                   "without spaces or quotes", entry);
      return FALSE;
    }

  return TRUE;
}

static gboolean
contains (GPtrArray  *list,
          const char *entry)
{
  for (guint i = 0; i < list->len; i++)
    {
      if (g_ascii_strcasecmp (g_ptr_array_index (list, i), entry) == 0)
        return TRUE;
    }

  return FALSE;
}

static char **
to_strv (GPtrArray *list)
{
  g_ptr_array_add (list, NULL);
  return (char **) g_ptr_array_free (list, FALSE);
}

/**
 * tally_sensitive_columns_parse:
 * @text: the contents of a `sensitive-columns` file: one entry per line;
 *   blank lines and lines starting with `#` are ignored
 * @error: return location for a #GError
 *
 * Reads a list of sensitive columns. Duplicates (ignoring ASCII case) are
 * kept once.
 *
 * Errors: %G_IO_ERROR_INVALID_DATA when a line is not an entry (see
 * tally_sensitive_columns_check_entry()); the message names the line.
 *
 * Returns: (transfer full) (array zero-terminated=1): the entries, trimmed,
 *   in file order (empty for an empty file), or %NULL with @error set
 */
char **
tally_sensitive_columns_parse (const char  *text,
                               GError     **error)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) lines = NULL;

  g_return_val_if_fail (text != NULL, NULL);

  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(GError) line_error = NULL;
      char *line = g_strstrip (lines[i]);

      if (line[0] == '\0' || line[0] == '#')
        continue;

      if (!tally_sensitive_columns_check_entry (line, &line_error))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "Line %u: %s", i + 1, line_error->message);
          return NULL;
        }

      if (!contains (list, line))
        g_ptr_array_add (list, g_strdup (line));
    }

  return to_strv (g_steal_pointer (&list));
}

/**
 * tally_sensitive_columns_format:
 * @columns: (array zero-terminated=1) (nullable): entries
 *
 * Writes entries as the `sensitive-columns` file holds them.
 *
 * Returns: (transfer full): one entry per line, each ending in a newline
 *   (an empty string for no entries)
 */
char *
tally_sensitive_columns_format (const char * const *columns)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; columns != NULL && columns[i] != NULL; i++)
    g_string_append_printf (out, "%s\n", columns[i]);

  return g_string_free (out, FALSE);
}

/**
 * tally_sensitive_columns_merge:
 * @columns: (array zero-terminated=1) (nullable): entries
 * @more: (array zero-terminated=1) (nullable): entries to add
 *
 * Returns: (transfer full) (array zero-terminated=1): @columns followed by
 *   the entries of @more they do not hold yet (ignoring ASCII case)
 */
char **
tally_sensitive_columns_merge (const char * const *columns,
                               const char * const *more)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; columns != NULL && columns[i] != NULL; i++)
    if (!contains (list, columns[i]))
      g_ptr_array_add (list, g_strdup (columns[i]));
  for (guint i = 0; more != NULL && more[i] != NULL; i++)
    if (!contains (list, more[i]))
      g_ptr_array_add (list, g_strdup (more[i]));

  return to_strv (list);
}

/**
 * tally_sensitive_columns_match:
 * @columns: (array zero-terminated=1) (nullable): entries
 * @schema: (nullable): the column's schema (PostgreSQL), or %NULL when
 *   the engine has none to give (SQLite)
 * @table: the column's table
 * @column: the column's name
 *
 * Whether a column of a table is marked. An entry `table.column` matches
 * that table in any schema; `schema.table.column` only in that schema, or
 * in any when @schema is %NULL (so `main.Customer.Email` on SQLite protects
 * the column rather than nothing, docs/ledger.md §2). Names compare
 * without regard to ASCII case.
 *
 * Returns: %TRUE when an entry names the column
 */
gboolean
tally_sensitive_columns_match (const char * const *columns,
                               const char         *schema,
                               const char         *table,
                               const char         *column)
{
  if (table == NULL || column == NULL)
    return FALSE;

  for (guint i = 0; columns != NULL && columns[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (columns[i], ".", 3);
      guint n = g_strv_length (parts);

      if (n == 2 &&
          g_ascii_strcasecmp (parts[0], table) == 0 &&
          g_ascii_strcasecmp (parts[1], column) == 0)
        return TRUE;

      if (n == 3 &&
          (schema == NULL || g_ascii_strcasecmp (parts[0], schema) == 0) &&
          g_ascii_strcasecmp (parts[1], table) == 0 &&
          g_ascii_strcasecmp (parts[2], column) == 0)
        return TRUE;
    }

  return FALSE;
}

/**
 * tally_sensitive_columns_names:
 * @columns: (array zero-terminated=1) (nullable): entries
 * @name: an identifier met in SQL text, unquoted
 *
 * Whether @name is the column or the table of an entry: the text rule of
 * the taint check (docs/ledger.md §3) treats an expression that mentions
 * either as depending on a marked column.
 *
 * Returns: %TRUE when @name matches the table or the column part of an
 *   entry (ignoring ASCII case)
 */
gboolean
tally_sensitive_columns_names (const char * const *columns,
                               const char         *name)
{
  if (name == NULL)
    return FALSE;

  for (guint i = 0; columns != NULL && columns[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (columns[i], ".", 3);
      guint n = g_strv_length (parts);

      if (n >= 2 &&
          (g_ascii_strcasecmp (parts[n - 1], name) == 0 ||
           g_ascii_strcasecmp (parts[n - 2], name) == 0))
        return TRUE;
    }

  return FALSE;
}

/**
 * tally_sensitive_columns_redact_quoted:
 * @message: a database's error message
 * @quote: the quote character the engine puts around values (`'` for
 *   SQLite, `"` for PostgreSQL)
 *
 * @message with every run between two @quote characters replaced by
 * [redacted] (kept in quotes): a database error can quote the value that
 * failed (docs/ledger.md §5). An unclosed quote hides the rest.
 *
 * Returns: (transfer full): the redacted message
 */
char *
tally_sensitive_columns_redact_quoted (const char *message,
                                       char        quote)
{
  GString *out;
  gboolean quoted = FALSE;

  g_return_val_if_fail (message != NULL, NULL);

  out = g_string_new (NULL);
  for (const char *p = message; *p != '\0'; p++)
    {
      if (*p == quote)
        {
          if (!quoted)
            g_string_append_printf (out, "%c" TALLY_SENSITIVE_REDACTED "%c", quote, quote);
          quoted = !quoted;
        }
      else if (!quoted)
        g_string_append_c (out, *p);
    }

  return g_string_free (out, FALSE);
}
