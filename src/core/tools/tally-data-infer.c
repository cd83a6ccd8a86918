/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-data-infer.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>

/*
 * The names and types tally_data_import() gives the tables and columns of
 * a data file, found from its values alone (docs/data-files.md §1 and §3;
 * the section numbers below are that file's).
 */

/* Names (§1) */

/**
 * tally_data_sanitize_identifier:
 * @text: a header's text, a JSON key or a file's stem; invalid UTF-8 is
 *   repaired first
 * @fallback: the name when nothing of @text is left, a valid identifier
 *   such as "data" or "column_3"
 *
 * An SQL identifier that needs no quoting: letters, digits and
 * underscores, not starting with a digit, not a keyword of SQLite's and
 * not in SQLite's own `sqlite_` name space. Letters of any script are
 * kept; each run of anything else becomes one underscore, and underscores
 * at the end are dropped (docs/data-files.md §1).
 *
 * Returns: (transfer full): the identifier, never empty
 */
char *
tally_data_sanitize_identifier (const char *text,
                                const char *fallback)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *valid = g_utf8_make_valid (text, -1);

  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_isalnum (c))
        g_string_append_unichar (out, c);
      else if (out->len > 0 && out->str[out->len - 1] != '_')
        g_string_append_c (out, '_');
    }
  while (out->len > 0 && out->str[out->len - 1] == '_')
    g_string_truncate (out, out->len - 1);

  if (out->len == 0)
    g_string_assign (out, fallback);
  if (g_ascii_isdigit (out->str[0]))
    g_string_prepend_c (out, '_');
  if (g_ascii_strncasecmp (out->str, "sqlite_", 7) == 0)
    g_string_prepend (out, "t_");
  if (sqlite3_keyword_check (out->str, (int) out->len))
    g_string_append_c (out, '_');

  return g_string_free (g_steal_pointer (&out), FALSE);
}

/**
 * tally_data_unique_name:
 * @base: an identifier, as from tally_data_sanitize_identifier()
 * @taken: (element-type utf8 utf8): a set (g_hash_table_add()) of the
 *   names already used, lower-case, owning its keys (g_free())
 *
 * @base, or @base_2, @base_3, …: the first whose lower-case form @taken
 * does not hold; that form is added to @taken.
 *
 * Returns: (transfer full): the name
 */
char *
tally_data_unique_name (const char *base,
                        GHashTable *taken)
{
  char *name = g_strdup (base);

  for (guint n = 2;; n++)
    {
      char *key = g_ascii_strdown (name, -1);

      if (!g_hash_table_contains (taken, key))
        {
          g_hash_table_add (taken, key);
          return name;
        }
      g_free (key);
      g_free (name);
      name = g_strdup_printf ("%s_%u", base, n);
    }
}

/* Types (§3) */

static gboolean
all_digits (const char *p,
            const char *end)
{
  if (p == end)
    return FALSE;
  for (; p < end; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

/**
 * tally_data_parse_integer:
 * @text: the value, not necessarily nul-terminated
 * @length: its length in bytes
 * @value: (out) (optional): where to put the integer
 *
 * Whether @text is an integer: an optional minus, then 0 or digits not
 * starting with 0 (so a code such as 007 stays text), fitting 64 bits.
 * Nothing else may come before or after it, not even a space. The byte
 * after @text must be readable, and not a digit: @text is a field of a
 * record, followed by its delimiter or its nul.
 *
 * Returns: %TRUE, with @value set, if it is one
 */
gboolean
tally_data_parse_integer (const char *text,
                          gsize       length,
                          gint64     *value)
{
  const char *p = text;
  const char *end = text + length;
  char *stop = NULL;
  gint64 parsed;

  if (p < end && *p == '-')
    p++;
  if (!all_digits (p, end) || (*p == '0' && end - p > 1))
    return FALSE;

  errno = 0;
  parsed = g_ascii_strtoll (text, &stop, 10);
  if (errno != 0 || stop != end)
    return FALSE;
  if (value != NULL)
    *value = parsed;
  return TRUE;
}

/**
 * tally_data_parse_real:
 * @text: the value, not necessarily nul-terminated
 * @length: its length in bytes
 * @value: (out) (optional): where to put the number
 *
 * Whether @text is a decimal number with a fraction or an exponent:
 * `[-](0|[1-9][0-9]*)[.digits][(e|E)[+|-]digits]`, finite. No thousands
 * separators, no currency signs, no hexadecimal, no infinity; an integer
 * without either is not one (tally_data_parse_integer()). As there, the
 * byte after @text must be readable and not part of a number.
 *
 * Returns: %TRUE, with @value set, if it is one
 */
gboolean
tally_data_parse_real (const char *text,
                       gsize       length,
                       double     *value)
{
  const char *p = text;
  const char *end = text + length;
  const char *digits;
  gboolean fraction = FALSE;
  gboolean exponent = FALSE;
  char *stop = NULL;
  double parsed;

  if (p < end && *p == '-')
    p++;
  digits = p;
  while (p < end && g_ascii_isdigit (*p))
    p++;
  if (p == digits || (*digits == '0' && p - digits > 1))
    return FALSE;
  if (p < end && *p == '.')
    {
      const char *start = ++p;

      while (p < end && g_ascii_isdigit (*p))
        p++;
      if (p == start)
        return FALSE;
      fraction = TRUE;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      p++;
      if (p < end && (*p == '+' || *p == '-'))
        p++;
      if (!all_digits (p, end))
        return FALSE;
      p = end;
      exponent = TRUE;
    }
  if (p != end || !(fraction || exponent))
    return FALSE;

  parsed = g_ascii_strtod (text, &stop);
  if (stop != end || !isfinite (parsed))
    return FALSE;
  if (value != NULL)
    *value = parsed;
  return TRUE;
}

/**
 * tally_data_is_date:
 * @text: the value, not necessarily nul-terminated
 * @length: its length in bytes
 *
 * Whether @text is a date, YYYY-MM-DD, a real day of the Gregorian
 * calendar from the year 1.
 *
 * Returns: %TRUE if it is one
 */
gboolean
tally_data_is_date (const char *text,
                    gsize       length)
{
  guint year, month, day;

  if (length != 10 || text[4] != '-' || text[7] != '-' ||
      !all_digits (text, text + 4) || !all_digits (text + 5, text + 7) ||
      !all_digits (text + 8, text + 10))
    return FALSE;

  year = (guint) g_ascii_strtoull (text, NULL, 10);
  month = (guint) g_ascii_strtoull (text + 5, NULL, 10);
  day = (guint) g_ascii_strtoull (text + 8, NULL, 10);

  return year >= 1 && g_date_valid_dmy (day, month, year);
}

/* Two digits at @p, at most @max. */
static gboolean
two_digits (const char *p,
            guint       max)
{
  return g_ascii_isdigit (p[0]) && g_ascii_isdigit (p[1]) &&
         (guint) ((p[0] - '0') * 10 + (p[1] - '0')) <= max;
}

/**
 * tally_data_is_datetime:
 * @text: the value, not necessarily nul-terminated
 * @length: its length in bytes
 *
 * Whether @text is a date, `T` or a space, then a time as ISO 8601 writes
 * it: HH:MM, then optionally :SS (up to 60, a leap second) and a
 * fraction, then optionally Z or an offset ±HH:MM, ±HHMM or ±HH.
 *
 * Returns: %TRUE if it is one
 */
gboolean
tally_data_is_datetime (const char *text,
                        gsize       length)
{
  const char *p = text + 16;
  const char *end = text + length;

  if (length < 16 || !tally_data_is_date (text, 10) ||
      (text[10] != 'T' && text[10] != ' ') ||
      !two_digits (text + 11, 23) || text[13] != ':' || !two_digits (text + 14, 59))
    return FALSE;

  if (end - p >= 3 && p[0] == ':')
    {
      if (!two_digits (p + 1, 60))
        return FALSE;
      p += 3;
      if (p < end && p[0] == '.')
        {
          const char *digits = ++p;

          while (p < end && g_ascii_isdigit (*p))
            p++;
          if (p == digits)
            return FALSE;
        }
    }

  if (p == end)
    return TRUE;
  if (*p == 'Z')
    return p + 1 == end;
  if (*p != '+' && *p != '-')
    return FALSE;
  p++;
  if (end - p == 5 && p[2] == ':')
    return two_digits (p, 23) && two_digits (p + 3, 59);
  if (end - p == 4)
    return two_digits (p, 23) && two_digits (p + 2, 59);
  if (end - p == 2)
    return two_digits (p, 23);
  return FALSE;
}

/**
 * tally_data_classify_text:
 * @text: a value, not necessarily nul-terminated
 * @length: its length in bytes
 * @numbers: whether @text may be a number: %TRUE for a CSV or TSV field,
 *   %FALSE for a JSON string, whose numbers are JSON numbers
 *
 * What @text looks like: an integer, a real, a date, a date-time or text,
 * the first that fits (docs/data-files.md §3).
 *
 * Returns: one of the #TallyDataKind flags, never %TALLY_DATA_KIND_BOOL
 */
TallyDataKind
tally_data_classify_text (const char *text,
                          gsize       length,
                          gboolean    numbers)
{
  if (numbers && tally_data_parse_integer (text, length, NULL))
    return TALLY_DATA_KIND_INTEGER;
  if (numbers && tally_data_parse_real (text, length, NULL))
    return TALLY_DATA_KIND_REAL;
  if (tally_data_is_date (text, length))
    return TALLY_DATA_KIND_DATE;
  if (tally_data_is_datetime (text, length))
    return TALLY_DATA_KIND_DATETIME;
  return TALLY_DATA_KIND_TEXT;
}

/**
 * tally_data_column_type:
 * @kinds: the union of a column's #TallyDataKind flags; 0 when it holds
 *   no value but empty ones and nulls
 *
 * The column's type: INTEGER when all are integers or booleans, REAL when
 * all are numbers, DATE when all are dates, DATETIME when all are dates
 * or date-times, else TEXT (and TEXT for no values).
 *
 * Returns: the type
 */
TallyDataType
tally_data_column_type (guint kinds)
{
  if (kinds == 0)
    return TALLY_DATA_TYPE_TEXT;
  if ((kinds & ~(TALLY_DATA_KIND_INTEGER | TALLY_DATA_KIND_BOOL)) == 0)
    return TALLY_DATA_TYPE_INTEGER;
  if ((kinds & ~(TALLY_DATA_KIND_INTEGER | TALLY_DATA_KIND_REAL)) == 0)
    return TALLY_DATA_TYPE_REAL;
  if (kinds == TALLY_DATA_KIND_DATE)
    return TALLY_DATA_TYPE_DATE;
  if ((kinds & ~(TALLY_DATA_KIND_DATE | TALLY_DATA_KIND_DATETIME)) == 0)
    return TALLY_DATA_TYPE_DATETIME;
  return TALLY_DATA_TYPE_TEXT;
}

static const char * const declarations[] = {
  [TALLY_DATA_TYPE_INTEGER] = "INTEGER",
  [TALLY_DATA_TYPE_REAL] = "REAL",
  [TALLY_DATA_TYPE_DATE] = "DATE TEXT",
  [TALLY_DATA_TYPE_DATETIME] = "DATETIME TEXT",
  [TALLY_DATA_TYPE_TEXT] = "TEXT",
};

/**
 * tally_data_type_get_declaration:
 * @type: a column's type
 *
 * The type @type's column is declared with in CREATE TABLE. A date
 * column's TEXT affinity comes from "TEXT" in it, and "DATE" tells the
 * reader of the schema.
 *
 * Returns: (transfer none): the declared type, a static string
 */
const char *
tally_data_type_get_declaration (TallyDataType type)
{
  g_return_val_if_fail ((guint) type < G_N_ELEMENTS (declarations), "TEXT");

  return declarations[type];
}
