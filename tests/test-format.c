/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <json-glib/json-glib.h>

#include <locale.h>
#include <string.h>

#include "tally-csv.h"
#include "tally-format.h"
#include "tally-line-diff.h"
#include "tally-receipt.h"
#include "tally-test-util.h"

/* The shared formatting of src/core/util: grouped counts, word counts,
 * the line diff, the receipt and TSV/CSV text, each checked against known
 * values. */

static void
test_count_grouping (void)
{
  static const struct {
    gint64      value;
    const char *text;
  } cases[] = {
    { 0, "0" },
    { 7, "7" },
    { 999, "999" },
    { 1000, "1,000" },
    { 1200, "1,200" },
    { 123456, "123,456" },
    { 1234567, "1,234,567" },
    { -1, "-1" },
    { -999, "-999" },
    { -1000, "-1,000" },
    { -123456, "-123,456" },
    { -1234567, "-1,234,567" },
    { G_MAXINT64, "9,223,372,036,854,775,807" },
    { G_MININT64, "-9,223,372,036,854,775,808" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *comma = tally_format_count (cases[i].value, TALLY_GROUPING_COMMA);
      /* The tests run in the C locale, which has no separator of its own. */
      g_autofree char *locale = tally_format_count (cases[i].value, TALLY_GROUPING_LOCALE);

      g_assert_cmpstr (comma, ==, cases[i].text);
      g_assert_cmpstr (locale, ==, cases[i].text);
    }
}

/* A locale with its own separator groups with it; the comma style does
 * not follow the locale. Skipped where no German locale is installed. */
static void
test_count_grouping_locale (void)
{
  g_autofree char *saved = g_strdup (setlocale (LC_NUMERIC, NULL));

  if (setlocale (LC_NUMERIC, "de_DE.UTF-8") == NULL)
    {
      g_test_skip ("no de_DE.UTF-8 locale");
      return;
    }

  {
    g_autofree char *grouped = tally_format_count (-1234567, TALLY_GROUPING_LOCALE);
    g_autofree char *comma = tally_format_count (-1234567, TALLY_GROUPING_COMMA);

    g_assert_cmpstr (grouped, ==, "-1.234.567");
    g_assert_cmpstr (comma, ==, "-1,234,567");
  }

  setlocale (LC_NUMERIC, saved);
}

static void
test_words (void)
{
  g_assert_cmpuint (tally_count_words (NULL), ==, 0);
  g_assert_cmpuint (tally_count_words (""), ==, 0);
  g_assert_cmpuint (tally_count_words ("  \n\t "), ==, 0);
  g_assert_cmpuint (tally_count_words ("one"), ==, 1);
  g_assert_cmpuint (tally_count_words (" two  words\n"), ==, 2);
  /* A no-break space (U+00A0) is white space too; "é" is a letter. */
  g_assert_cmpuint (tally_count_words ("caf\xc3\xa9\xc2\xa0ol\xc3\xa9 three"), ==, 3);
  /* Counting pieces overcounts a word split across them; count the whole. */
  g_assert_cmpuint (tally_count_words ("The quar") + tally_count_words ("terly sum"), ==, 4);
  g_assert_cmpuint (tally_count_words ("The quarterly sum"), ==, 3);
}

static char *
script_text (GByteArray *ops)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < ops->len; i++)
    g_string_append_c (out, ops->data[i] == TALLY_DIFF_EQUAL ? '=' :
                            ops->data[i] == TALLY_DIFF_DELETE ? '-' : '+');
  return g_string_free (out, FALSE);
}

static void
test_line_diff (void)
{
  static const struct {
    const char *old_text;
    const char *new_text;
    const char *script;
  } cases[] = {
    { "", "", "" },
    { "a b c", "a b c", "===" },
    { "", "a b", "++" },
    { "a b", "", "--" },
    { "a b c", "a x c", "=-+=" },
    { "a b c d", "a c d", "=-==" },
    { "a c", "a b c", "=+=" },
    /* The textbook example of Myers' paper: ABCABBA → CBABAC, 5 edits. */
    { "A B C A B B A", "C B A B A C", "--=+==-=+" },
    /* Removals come before additions within a run of changes. */
    { "x a y", "x b c y", "=-++=" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(GStrv) a = g_strsplit (cases[i].old_text, " ", -1);
      g_auto(GStrv) b = g_strsplit (cases[i].new_text, " ", -1);
      g_autoptr(GByteArray) ops = NULL;
      g_autofree char *script = NULL;

      /* g_strsplit of "" gives no lines. */
      ops = tally_line_diff_strv ((const char * const *) a, (const char * const *) b);
      script = script_text (ops);
      g_assert_cmpstr (script, ==, cases[i].script);
    }
}

/* Ids stand for lines: the same script whatever the lines are. */
static void
test_line_diff_ids (void)
{
  const guint old_ids[] = { 1, 2, 3, 4, 5 };
  const guint new_ids[] = { 1, 3, 4, 6, 5 };
  g_autoptr(GByteArray) ops = tally_line_diff (old_ids, G_N_ELEMENTS (old_ids),
                                               new_ids, G_N_ELEMENTS (new_ids));
  g_autofree char *script = script_text (ops);

  g_assert_cmpstr (script, ==, "=-==+=");
}

static void
test_receipt (void)
{
  g_autoptr(JsonObject) event = tally_test_parse_object (
    "{\"type\":\"turn_finished\",\"status\":\"done\",\"cost_usd\":0.0123,\"duration_ms\":3400,"
    "\"api_calls\":2,\"usage\":{\"input_tokens\":1200,\"output_tokens\":340,"
    "\"cache_read_input_tokens\":800,\"cache_creation_input_tokens\":120}}");
  g_autoptr(JsonObject) failed = tally_test_parse_object (
    "{\"type\":\"turn_finished\",\"status\":\"failed\",\"cost_usd\":null,\"duration_ms\":125000,"
    "\"api_calls\":1,\"usage\":{\"input_tokens\":-5,\"output_tokens\":0,"
    "\"cache_read_input_tokens\":0,\"cache_creation_input_tokens\":0}}");
  TallyReceipt receipt;
  g_autofree char *window = NULL;
  g_autofree char *terminal = NULL;
  g_autofree char *markdown = NULL;
  g_autofree char *failed_window = NULL;
  g_autofree char *failed_terminal = NULL;
  g_autofree char *failed_markdown = NULL;

  tally_receipt_init (&receipt, event);
  g_assert_true (receipt.has_cost);
  g_assert_cmpint (receipt.input_tokens, ==, 1200);
  g_assert_cmpint (receipt.cache_write_tokens, ==, 120);
  window = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_WINDOW);
  terminal = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_TERMINAL);
  markdown = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_MARKDOWN);
  g_assert_cmpstr (window, ==,
                   "Done · $0.0123 · 1,200 in · 340 out · cache 800 read, 120 written · 2 API calls · 3.4 s");
  g_assert_cmpstr (terminal, ==,
                   "— done · $0.0123 · 1,200 in · 340 out · cache 800 read, 120 written · 2 API calls · 3.4 s");
  g_assert_cmpstr (markdown, ==,
                   "*Receipt: $0.0123 · 1,200 input + 340 output tokens (cache: 800 read, 120 written) · 3.4 s*");

  tally_receipt_init (&receipt, failed);
  g_assert_false (receipt.has_cost);
  failed_window = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_WINDOW);
  failed_terminal = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_TERMINAL);
  failed_markdown = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_MARKDOWN);
  g_assert_cmpstr (failed_window, ==, "Failed · price unknown · -5 in · 0 out · 1 API call · 2 min 5 s");
  g_assert_cmpstr (failed_terminal, ==,
                   "— failed · price unknown · -5 in · 0 out · cache 0 read, 0 written · 1 API call · 2 min 5 s");
  g_assert_cmpstr (failed_markdown, ==, "*Receipt: price unknown · -5 input + 0 output tokens · 2 min 5 s · failed*");

  /* No event at all: zeros, price unknown. */
  tally_receipt_init (&receipt, NULL);
  g_assert_false (receipt.has_cost);
  g_assert_cmpint (receipt.api_calls, ==, 0);
}

/* A table with every case a cell can hold: a comma, a double quote, a
 * tab, LF, CRLF, an empty cell, a NULL cell and non-ASCII text. */
static const char * const awkward_table[] = {
  "store", "note", "revenue £",
  "Leeds, Briggate", "say \"hi\"", "1234.5",
  "Köln\tAltstadt", "two\nlines", "",
  "Zürich", "crlf\r\nend", NULL,
};

static void
test_csv_tsv (void)
{
  g_autofree char *tsv = tally_csv_format_table (TALLY_CSV_FORMAT_TSV, awkward_table, 3, 4);

  g_assert_cmpstr (tsv, ==,
                   "store\tnote\trevenue £\n"
                   "Leeds, Briggate\tsay \"hi\"\t1234.5\n"
                   "Köln Altstadt\ttwo lines\t\n"
                   "Zürich\tcrlf  end\t\n");
}

static void
test_csv_rfc4180 (void)
{
  g_autofree char *csv = tally_csv_format_table (TALLY_CSV_FORMAT_CSV, awkward_table, 3, 4);
  static const char expected[] =
    "store,note,revenue \xc2\xa3\r\n"
    "\"Leeds, Briggate\",\"say \"\"hi\"\"\",1234.5\r\n"
    "K\xc3\xb6ln\tAltstadt,\"two\nlines\",\r\n"
    "Z\xc3\xbcrich,\"crlf\r\nend\",\r\n";

  /* Byte for byte: UTF-8 kept as it is, no byte order mark. */
  g_assert_cmpuint (strlen (csv), ==, sizeof expected - 1);
  g_assert_cmpmem (csv, strlen (csv), expected, sizeof expected - 1);
}

static void
test_csv_edges (void)
{
  static const char * const one_column[] = { "n", "", NULL, "\"" };
  g_autofree char *csv = tally_csv_format_table (TALLY_CSV_FORMAT_CSV, one_column, 1, 4);
  g_autofree char *tsv = tally_csv_format_table (TALLY_CSV_FORMAT_TSV, one_column, 1, 4);
  g_autofree char *none = tally_csv_format_table (TALLY_CSV_FORMAT_CSV, NULL, 3, 0);
  g_autoptr(GString) row = g_string_new ("x");

  /* A record of one empty field is quoted, so it is not a blank line. */
  g_assert_cmpstr (csv, ==, "n\r\n\"\"\r\n\"\"\r\n\"\"\"\"\r\n");
  g_assert_cmpstr (tsv, ==, "n\n\n\n\"\n");
  g_assert_cmpstr (none, ==, "");

  /* Rows append to what is there. */
  tally_csv_append_row (row, TALLY_CSV_FORMAT_CSV, (const char * const[]) { "a", " b " }, 2);
  g_assert_cmpstr (row->str, ==, "xa, b \r\n");
}

/* /tally/format/json-shown-as-is: the escapes are JSON's, so the text
 * parses to the same value. */
static void
test_json_shown_as_is (void)
{
  static const char *const values[] = {
    "ls \xe2\x80\xae\xe2\x81\xa6 ; rm -rf x \xe2\x81\xa9\xe2\x80\xac",
    "tag\xf3\xa0\x81\x81 del\x7f c1\xc2\x85 zw\xe2\x80\x8b sep\xe2\x80\xa8",
    "plain, with \"quotes\", a \\ and\na newline",
  };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr(JsonNode) node = json_node_alloc ();
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autofree char *json = NULL;
      g_autofree char *shown = NULL;
      g_autoptr(GError) error = NULL;

      json_node_init_string (node, values[i]);
      json = json_to_string (node, TRUE);
      shown = tally_format_json_shown_as_is (json);
      g_assert_true (json_parser_load_from_data (parser, shown, -1, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (json_node_get_string (json_parser_get_root (parser)), ==, values[i]);
      for (const char *p = shown; *p != '\0'; p = g_utf8_next_char (p))
        g_assert_true (g_unichar_type (g_utf8_get_char (p)) != G_UNICODE_FORMAT);
    }
  {
    g_autofree char *shown = tally_format_json_shown_as_is ("\"\xf3\xa0\x81\x81\xe2\x80\xae\"");

    g_assert_cmpstr (shown, ==, "\"\\udb40\\udc41\\u202e\"");
  }
}

/* /tally/format/shown-as-is */
static void
test_shown_as_is (void)
{
  static const struct {
    const char *text;
    const char *shown;
  } cases[] = {
    /* Plain text, accents, emoji, tabs and newlines stay. */
    { "SELECT café FROM t;\n\tok 🙂", "SELECT café FROM t;\n\tok 🙂" },
    /* Bidirectional overrides, embeddings, isolates and marks. */
    { "ls \xe2\x80\xae\xe2\x81\xa6 ; rm -rf x \xe2\x81\xa9\xe2\x80\xac",
      "ls \\u202e\\u2066 ; rm -rf x \\u2069\\u202c" },
    { "a\xe2\x80\x8e" "b\xe2\x80\x8f" "c\xd8\x9c", "a\\u200eb\\u200fc\\u061c" },
    /* Zero-width space and joiner, soft hyphen, byte-order mark. */
    { "rm\xe2\x80\x8b" "a\xe2\x80\x8d" "b\xc2\xad" "c\xef\xbb\xbf", "rm\\u200ba\\u200db\\u00adc\\ufeff" },
    /* Default-ignorable marks and fillers: grapheme joiner, Hangul
     * filler, variation selector. */
    { "r\xcd\x8fm a\xe3\x85\xa4" "b a\xef\xb8\x8f" "b", "r\\u034fm a\\u3164b a\\ufe0fb" },
    /* A tag character, beyond the Basic Multilingual Plane. */
    { "x\xf3\xa0\x81\x81", "x\\U000e0041" },
    /* C0 controls but newline and tab, DEL, C1; line and paragraph
     * separators. */
    { "a\x1b[2Jb\x7f" "c\xc2\x85" "d\xe2\x80\xa8" "e\xe2\x80\xa9", "a\\x1b[2Jb\\x7fc\\u0085d\\u2028e\\u2029" },
    /* A carriage return is dropped before a newline only. */
    { "a\r\nb\rc", "a\nb\\x0dc" },
    /* Invalid UTF-8 becomes U+FFFD; a backslash is left alone. */
    { "a\xff" "b\\u202e", "a\xef\xbf\xbd" "b\\u202e" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *shown = tally_format_shown_as_is (cases[i].text);

      g_assert_cmpstr (shown, ==, cases[i].shown);
    }
  {
    g_autofree char *none = tally_format_shown_as_is (NULL);

    g_assert_cmpstr (none, ==, "");
  }
}

/* /tally/format/terminal-safe: what tally-cli escapes. Only what moves,
 * rewrites or reorders a terminal: an emoji sequence prints whole. */
static void
test_terminal_safe (void)
{
  g_autofree char *shown = tally_format_terminal_safe ("\x1b]52;c;eA==\x07 ls \xe2\x80\xae; rm\xc2\x9b\r\n"
                                                       "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb \xe2\x9d\xa4\xef\xb8\x8f\tok\xff");
  g_autofree char *none = tally_format_terminal_safe (NULL);

  g_assert_cmpstr (shown, ==, "\\x1b]52;c;eA==\\x07 ls \\u202e; rm\\u009b\n"
                              "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb \xe2\x9d\xa4\xef\xb8\x8f\tok\xef\xbf\xbd");
  g_assert_cmpstr (none, ==, "");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/format/count-grouping", test_count_grouping);
  g_test_add_func ("/tally/format/count-grouping-locale", test_count_grouping_locale);
  g_test_add_func ("/tally/format/words", test_words);
  g_test_add_func ("/tally/format/shown-as-is", test_shown_as_is);
  g_test_add_func ("/tally/format/json-shown-as-is", test_json_shown_as_is);
  g_test_add_func ("/tally/format/terminal-safe", test_terminal_safe);
  g_test_add_func ("/tally/format/line-diff", test_line_diff);
  g_test_add_func ("/tally/format/line-diff-ids", test_line_diff_ids);
  g_test_add_func ("/tally/format/receipt", test_receipt);
  g_test_add_func ("/tally/format/csv/tsv", test_csv_tsv);
  g_test_add_func ("/tally/format/csv/rfc4180", test_csv_rfc4180);
  g_test_add_func ("/tally/format/csv/edges", test_csv_edges);

  return g_test_run ();
}
