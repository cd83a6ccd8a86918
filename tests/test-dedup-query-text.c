/* SPDX-License-Identifier: GPL-3.0-or-later */

/* TallyQueryText (src/core/tools/tally-query-text.c): the text table that
 * query_database writes for SQLite and PostgreSQL alike. The tools' tests
 * (test-tools.c, test-postgres.c) check it through the tool; these check
 * its counts and edges directly. */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "tally-query-text.h"
#include "tally-tool.h"
#include "tally-tool-query-database.h"

static void
add_row (TallyQueryText *text,
         const char     *first,
         const char     *second)
{
  GString *out;

  g_assert_true (tally_query_text_begin_row (text));
  out = tally_query_text_next_cell (text);
  tally_query_text_append_value (out, first, strlen (first));
  out = tally_query_text_next_cell (text);
  tally_query_text_append_value (out, second, strlen (second));
  tally_query_text_end_row (text);
}

static void
test_rows (void)
{
  TallyQueryText text;
  g_autofree char *table = NULL;

  tally_query_text_init (&text, 10);
  tally_query_text_add_column (&text, "id");
  tally_query_text_add_column (&text, "name");
  tally_query_text_end_header (&text);
  add_row (&text, "1", "Ada");
  g_assert_true (tally_query_text_begin_row (&text));
  g_string_append (tally_query_text_next_cell (&text), "2");
  tally_query_text_add_redacted (&text);
  tally_query_text_end_row (&text);
  table = tally_query_text_finish (&text);

  g_assert_cmpstr (table, ==, "id | name\n1 | Ada\n2 | [redacted]\n(2 rows)");
  g_assert_cmpuint (text.shown, ==, 2);
  g_assert_cmpuint (text.hidden, ==, 0);
  g_assert_cmpint (text.redactions, ==, 1);
  g_assert_null (text.out);
}

static void
test_one_row_no_columns (void)
{
  TallyQueryText text;
  g_autofree char *empty = NULL;
  g_autofree char *one = NULL;

  /* No columns: no header line at all. */
  tally_query_text_init (&text, 10);
  tally_query_text_end_header (&text);
  empty = tally_query_text_finish (&text);
  g_assert_cmpstr (empty, ==, "(0 rows)");

  tally_query_text_init (&text, 10);
  tally_query_text_add_column (&text, "n");
  tally_query_text_end_header (&text);
  g_assert_true (tally_query_text_begin_row (&text));
  g_string_append (tally_query_text_next_cell (&text), "42");
  tally_query_text_end_row (&text);
  one = tally_query_text_finish (&text);
  g_assert_cmpstr (one, ==, "n\n42\n(1 row)");
}

/* Rows past max_rows are counted, and a redaction in a row not shown does
 * not count. */
static void
test_row_cap (void)
{
  TallyQueryText text;
  g_autofree char *table = NULL;

  tally_query_text_init (&text, 2);
  tally_query_text_add_column (&text, "n");
  tally_query_text_end_header (&text);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_true (tally_query_text_begin_row (&text));
      g_string_append_printf (tally_query_text_next_cell (&text), "%u", i);
      tally_query_text_end_row (&text);
    }
  for (guint i = 0; i < 1233; i++)
    g_assert_false (tally_query_text_begin_row (&text));
  g_assert_false (text.count_capped);
  table = tally_query_text_finish (&text);

  g_assert_cmpstr (table, ==, "n\n0\n1\n… 1,233 more rows not shown (cap 2 rows)\n(2 of 1,235 rows shown)");
  g_assert_cmpint (text.redactions, ==, 0);
}

/* A row that would pass the byte cap is taken back and counted; every later
 * row is only counted. */
static void
test_byte_cap (void)
{
  TallyQueryText text;
  g_autofree char *table = NULL;
  g_autofree char *wide = g_strnfill (150, 'x');
  guint kept = 0;

  tally_query_text_init (&text, 1000);
  tally_query_text_add_column (&text, "a");
  tally_query_text_end_header (&text);
  while (tally_query_text_begin_row (&text))
    {
      tally_query_text_append_value (tally_query_text_next_cell (&text), wide, strlen (wide));
      tally_query_text_add_redacted (&text);
      tally_query_text_end_row (&text);
      if (!text.byte_cap_hit)
        kept++;
    }
  g_assert_true (text.byte_cap_hit);
  g_assert_cmpuint (text.shown, ==, kept);
  g_assert_cmpuint (text.hidden, ==, 2);   /* the row taken back and the one after */
  g_assert_cmpint (text.redactions, ==, (gint64) kept);
  g_assert_cmpuint (text.out->len, <=, TALLY_TOOL_QUERY_DATABASE_MAX_BYTES);
  /* Each row: 150 x, " | [redacted]" and a newline. */
  g_assert_cmpuint (kept, ==, (TALLY_TOOL_QUERY_DATABASE_MAX_BYTES - 2) / (150 + 13 + 1));

  table = tally_query_text_finish (&text);
  g_assert_nonnull (strstr (table, "… 2 more rows not shown (output cap 32 KiB)\n"));
  g_assert_true (g_str_has_suffix (table, "\n(199 of 201 rows shown)"));
}

/* Counting stops after 100,000 hidden rows. */
static void
test_count_cap (void)
{
  TallyQueryText text;
  g_autofree char *table = NULL;
  guint counted = 0;

  tally_query_text_init (&text, 0);
  tally_query_text_add_column (&text, "n");
  tally_query_text_end_header (&text);
  while (!tally_query_text_begin_row (&text) && !text.count_capped)
    counted++;
  g_assert_true (text.count_capped);
  g_assert_cmpuint (counted, ==, 99999);
  table = tally_query_text_finish (&text);

  g_assert_cmpstr (table, ==, "n\n… at least 100,000 more rows not shown (cap 0 rows)\n"
                              "(0 of at least 100,000 rows shown)");
}

static void
test_append_value (void)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *long_text = g_strnfill (5000, 'a');
  g_autofree char *kept = g_strnfill (200, 'a');
  g_autofree char *expected = g_strconcat (kept, "…", NULL);
  static const char controls[] = "a\nb\rc\td\0e";

  tally_query_text_append_value (out, controls, sizeof controls - 1);
  g_assert_cmpstr (out->str, ==, "a\\nb\\rc\\td\\0e");

  /* 200 characters, then the mark of the cut. */
  g_string_truncate (out, 0);
  tally_query_text_append_value (out, long_text, strlen (long_text));
  g_assert_cmpstr (out->str, ==, expected);

  /* Invalid UTF-8 comes out valid. */
  g_string_truncate (out, 0);
  tally_query_text_append_value (out, "ok\xff", 3);
  g_assert_true (g_utf8_validate (out->str, -1, NULL));
  g_assert_true (g_str_has_prefix (out->str, "ok"));

  g_string_truncate (out, 0);
  tally_query_text_append_value (out, NULL, 0);
  g_assert_cmpstr (out->str, ==, "");
}

static void
test_redact_error (void)
{
  g_autoptr(GError) tool_error = g_error_new (TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                                              "invalid input syntax for type integer: \"ada@example.com\"");
  g_autoptr(GError) sqlite_error = g_error_new (TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                                                "JSON path error near 'secret'");
  g_autoptr(GError) other = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "near \"kept\"");

  tally_query_text_redact_error (tool_error, '"');
  g_assert_null (strstr (tool_error->message, "ada@example.com"));
  g_assert_true (g_str_has_prefix (tool_error->message, "invalid input syntax for type integer: "));

  /* Only the given quote counts. */
  tally_query_text_redact_error (sqlite_error, '"');
  g_assert_cmpstr (sqlite_error->message, ==, "JSON path error near 'secret'");
  tally_query_text_redact_error (sqlite_error, '\'');
  g_assert_null (strstr (sqlite_error->message, "secret"));

  /* Not a tool's error: left as it is. */
  tally_query_text_redact_error (other, '"');
  g_assert_cmpstr (other->message, ==, "near \"kept\"");

  tally_query_text_redact_error (NULL, '"');
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/query-text/rows", test_rows);
  g_test_add_func ("/tally/query-text/one-row-no-columns", test_one_row_no_columns);
  g_test_add_func ("/tally/query-text/row-cap", test_row_cap);
  g_test_add_func ("/tally/query-text/byte-cap", test_byte_cap);
  g_test_add_func ("/tally/query-text/count-cap", test_count_cap);
  g_test_add_func ("/tally/query-text/append-value", test_append_value);
  g_test_add_func ("/tally/query-text/redact-error", test_redact_error);

  return g_test_run ();
}
