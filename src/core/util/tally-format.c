/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-util"

#include "config.h"

#include "tally-format.h"

#include <glib/gi18n.h>
#include <langinfo.h>
#include <limits.h>
#include <string.h>

/*
 * Numbers, durations, costs and word counts as Tally shows them. The
 * window, tally-cli, the Markdown export and the tools all format through
 * these, so a count reads the same everywhere (docs/architecture.md §2.1).
 */

/* Where separators go in @len digits: sep_after[i] is TRUE when a
 * separator follows the i-th digit from the left. @sizes is a group-size
 * string in the form of `struct lconv.grouping`: each byte the size of
 * the next group from the right, the last one repeated, CHAR_MAX (or a
 * negative value) ending the grouping. */
static void
mark_groups (gboolean   *sep_after,
             gsize       len,
             const char *sizes)
{
  gsize from_right = 0;
  int size = 0;

  for (const char *g = sizes;;)
    {
      if (*g == '\0')
        {
          /* The last size repeats; an empty string means no grouping. */
          if (size == 0)
            return;
        }
      else if (*g == CHAR_MAX || *g < 0)
        return;
      else
        size = *g++;

      from_right += size;
      if (from_right >= len)
        return;
      sep_after[len - from_right - 1] = TRUE;
    }
}

/**
 * tally_format_count:
 * @value: a count; negative values keep their sign in front
 * @grouping: how to group the digits
 *
 * Writes @value with its digits grouped, e.g. `1,234,567` or `-1,234`
 * (%TALLY_GROUPING_COMMA, and %TALLY_GROUPING_LOCALE in an English or C
 * locale), `1.234.567` in a German locale. The sign is never grouped with
 * the digits. Safe to call from any thread.
 *
 * Returns: (transfer full): the text
 */
char *
tally_format_count (gint64        value,
                    TallyGrouping grouping)
{
  char digits[32];
  const char *separator = ",";
  const char *sizes = "\3";
  g_autofree gboolean *sep_after = NULL;
  const char *first;
  GString *out;
  gsize len;

  g_snprintf (digits, sizeof digits, "%" G_GINT64_FORMAT, value);
  first = digits[0] == '-' ? digits + 1 : digits;
  len = strlen (first);

  if (grouping == TALLY_GROUPING_LOCALE)
    {
      const char *locale_separator = nl_langinfo (THOUSEP);
#ifdef GROUPING
      const char *locale_sizes = nl_langinfo (GROUPING);
#else
      const char *locale_sizes = "\3";
#endif

      if (locale_separator != NULL && *locale_separator != '\0' &&
          locale_sizes != NULL && *locale_sizes != '\0')
        {
          separator = locale_separator;
          sizes = locale_sizes;
        }
    }

  sep_after = g_new0 (gboolean, len);
  mark_groups (sep_after, len, sizes);

  out = g_string_new (first != digits ? "-" : NULL);
  for (gsize i = 0; i < len; i++)
    {
      g_string_append_c (out, first[i]);
      if (sep_after[i])
        g_string_append (out, separator);
    }

  return g_string_free (out, FALSE);
}

/**
 * tally_format_time_utc:
 * @time_us: a time in µs since the Unix epoch
 * @format: a g_date_time_format() format, such as `"%Y-%m-%d %H:%M UTC"`
 * @fallback: the text for a time #GDateTime cannot hold (before year 1 or
 *   after year 9999)
 *
 * Writes a stored time (a session's `created_us`, say) in UTC, whole
 * seconds (the fraction is dropped).
 *
 * Returns: (transfer full): @time_us in @format, or a copy of @fallback
 */
char *
tally_format_time_utc (gint64      time_us,
                       const char *format,
                       const char *fallback)
{
  g_autoptr(GDateTime) time = NULL;

  g_return_val_if_fail (format != NULL, NULL);
  g_return_val_if_fail (fallback != NULL, NULL);

  time = g_date_time_new_from_unix_utc (time_us / G_USEC_PER_SEC);
  if (time == NULL)
    return g_strdup (fallback);
  return g_date_time_format (time, format);
}

/**
 * tally_format_duration:
 * @duration_ms: a duration in milliseconds; negative counts as 0
 *
 * Writes a duration for people: seconds with one decimal under a minute
 * ("3.4 s"), minutes and whole seconds from there on ("2 min 5 s"). The
 * decimal point is always a point, as in the cost.
 *
 * Returns: (transfer full): the translated text
 */
char *
tally_format_duration (gint64 duration_ms)
{
  char number[G_ASCII_DTOSTR_BUF_SIZE];

  if (duration_ms < 0)
    duration_ms = 0;
  if (duration_ms < 60 * 1000)
    /* Translators: a duration in seconds, e.g. "3.4 s" */
    return g_strdup_printf (_("%s s"),
                            g_ascii_formatd (number, sizeof number, "%.1f", duration_ms / 1000.0));

  /* Translators: a duration in minutes and seconds, e.g. "2 min 5 s" */
  return g_strdup_printf (_("%d min %d s"), (int) (duration_ms / 60000), (int) ((duration_ms / 1000) % 60));
}

/**
 * tally_format_cost:
 * @known: whether the price was known (`cost_usd` was not null)
 * @cost_usd: the cost in US dollars
 *
 * Writes a cost with four decimals and a point, e.g. "$0.0123", as
 * `tally-cli --list` prints it; "price unknown" (translated) when the
 * model has no price (protocol.md §10.2).
 *
 * Returns: (transfer full): the text
 */
char *
tally_format_cost (gboolean known,
                   double   cost_usd)
{
  char number[G_ASCII_DTOSTR_BUF_SIZE];

  if (!known)
    return g_strdup (_("price unknown"));
  return g_strdup_printf ("$%s", g_ascii_formatd (number, sizeof number, "%.4f", cost_usd));
}

/**
 * tally_count_words:
 * @text: (nullable): UTF-8 text
 *
 * Counts words: runs of characters that are not white space
 * (g_unichar_isspace()). Count the whole text, never pieces of it: a word
 * split across two streamed deltas is one word.
 *
 * Returns: the number of words, 0 for %NULL
 */
guint
tally_count_words (const char *text)
{
  guint words = 0;
  gboolean in_word = FALSE;

  if (text == NULL)
    return 0;

  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gboolean space = g_unichar_isspace (g_utf8_get_char (p));

      if (!space && !in_word)
        words++;
      in_word = !space;
    }

  return words;
}

/* A character that a label would not show as itself: a control character
 * but for a newline and a tab (C0, DEL, C1), a line or paragraph separator,
 * or a format character (Unicode category Cf: the bidirectional controls
 * that reorder what follows, zero-width spaces and joiners, the soft
 * hyphen, the byte-order mark, tag characters). */
static gboolean
is_unseen (gunichar c)
{
  GUnicodeType type = g_unichar_type (c);

  if (type == G_UNICODE_CONTROL)
    return c != '\n' && c != '\t';
  if (type == G_UNICODE_FORMAT || type == G_UNICODE_LINE_SEPARATOR ||
      type == G_UNICODE_PARAGRAPH_SEPARATOR)
    return TRUE;

  /* The rest of Unicode's default-ignorable code points (the
   * Default_Ignorable_Code_Point property): marks and fillers that draw
   * nothing, so `report\u034f.md` would look like report.md. */
  return c == 0x034f || c == 0x115f || c == 0x1160 || c == 0x17b4 || c == 0x17b5 ||
         (c >= 0x180b && c <= 0x180f) || c == 0x3164 || (c >= 0xfe00 && c <= 0xfe0f) ||
         c == 0xffa0 || (c >= 0xe0000 && c <= 0xe0fff);
}

/* Writes @text with each character @unsafe picks as an escape: in
 * @json form as a JSON escape (`\u202e`, a surrogate pair beyond U+FFFF),
 * carriage returns kept; otherwise as `\x1b`, `\u202e` or `\U000e0041`,
 * with a carriage return before a newline dropped. Invalid UTF-8 becomes
 * U+FFFD. */
static char *
escape (const char *text,
        gboolean  (*unsafe) (gunichar c),
        gboolean    json)
{
  g_autofree char *valid = NULL;
  GString *out;

  if (text == NULL)
    return g_strdup ("");

  valid = g_utf8_make_valid (text, -1);
  out = g_string_sized_new (strlen (valid));
  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == '\r' && (json || p[1] == '\n'))
        {
          if (json)
            g_string_append_c (out, '\r');
          continue;
        }
      if (!unsafe (c))
        g_string_append_unichar (out, c);
      else if (json && c > 0xffff)
        g_string_append_printf (out, "\\u%04x\\u%04x",
                                0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
      else if (c < 0x80 && !json)
        g_string_append_printf (out, "\\x%02x", c);
      else if (c <= 0xffff)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_printf (out, "\\U%08x", c);
    }
  return g_string_free (out, FALSE);
}

/* A character that must not reach a terminal as it is: C0 controls but a
 * newline and a tab (ESC starts the sequences that move the cursor, erase
 * lines or write the clipboard), DEL, the C1 controls, and the
 * bidirectional embeddings, overrides and isolates that reorder text on
 * screen. */
static gboolean
is_unsafe_on_terminal (gunichar c)
{
  return (c < 0x20 && c != '\n' && c != '\t') ||
         (c >= 0x7f && c <= 0x9f) ||
         (c >= 0x202a && c <= 0x202e) ||
         (c >= 0x2066 && c <= 0x2069);
}

/**
 * tally_format_terminal_safe:
 * @text: (nullable): text from the model, the API, a tool or the store
 *
 * Makes @text safe to print on a terminal (tally-cli's readable output):
 * each character that could move the cursor, rewrite what is shown or
 * reorder it (C0 controls but a newline and a tab, DEL, C1 controls, the
 * bidirectional embeddings, overrides and isolates) is written as an
 * escape, `\x1b`, `\u202e`, as tally_format_shown_as_is() writes it. Other
 * characters stay, so an answer's emoji sequences print whole. A carriage
 * return before a newline is dropped; invalid UTF-8 is replaced with
 * U+FFFD.
 *
 * Returns: (transfer full): the escaped text; "" for %NULL
 */
char *
tally_format_terminal_safe (const char *text)
{
  return escape (text, is_unsafe_on_terminal, FALSE);
}

/**
 * tally_format_shown_as_is:
 * @text: (nullable): text from the model, such as a command or a path a
 *   tool call names
 *
 * Makes @text show exactly what it holds, for the places where what the
 * analyst reads must be what runs: an approval card's command, query or
 * path, and a tool call's input in the transcript. Every character a label
 * would not show as itself is written as an escape: `\u202e` for a
 * bidirectional override (which would make `ls ; rm -rf data` read as
 * something else), `\u200b` for a zero-width space, `\x1b` for a control
 * character below U+0080 (see docs/security.md, "What the analyst
 * approves"). The escaped classes are the Unicode general categories Cc
 * (but for a newline and a tab), Cf, Zl and Zp, and the other
 * default-ignorable code points (the combining grapheme joiner, the
 * Hangul fillers, variation selectors). A carriage return before a
 * newline is dropped; invalid UTF-8 is replaced with U+FFFD. A backslash
 * is left as it is, so an escape that the text itself holds reads the same
 * as one this adds: only the categories above are ever changed.
 *
 * Returns: (transfer full): the text to show; "" for %NULL
 */
char *
tally_format_shown_as_is (const char *text)
{
  return escape (text, is_unseen, FALSE);
}

/**
 * tally_format_json_shown_as_is:
 * @json: (nullable): JSON text, as json_to_string() writes it
 *
 * The form of tally_format_shown_as_is() for JSON text that the analyst may
 * edit and that is parsed again: every character it would escape is
 * written as a JSON escape instead (`\u202e`; a character beyond U+FFFF as
 * its surrogate pair, `\udb40\udc41`, RFC 8259 §7). Such characters can
 * only stand inside strings in JSON text (between tokens only blanks are
 * allowed), so the text parses to the same value. Newlines, tabs and
 * carriage returns are left as they are: json_to_string() escapes them
 * inside strings, so those left stand between tokens.
 *
 * Returns: (transfer full): the JSON text to show; "" for %NULL
 */
char *
tally_format_json_shown_as_is (const char *json)
{
  return escape (json, is_unseen, TRUE);
}
