/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <string.h>

#include "tally-markdown-scanner.h"

/*
 * See the header for the rules. The scanner keeps its position at the start
 * of the first incomplete line; a split may still be decided at that line's
 * start from its first characters (e.g. "Th" can no longer become a list
 * item), which keeps the open tail short while a long paragraph streams.
 */

typedef enum
{
  DECISION_NO,
  DECISION_YES,
  DECISION_UNKNOWN,
} Decision;

/**
 * tally_markdown_scanner_init:
 * @scanner: (out caller-allocates): the scanner
 *
 * Resets @scanner to the start of an empty text.
 */
void
tally_markdown_scanner_init (TallyMarkdownScanner *scanner)
{
  g_return_if_fail (scanner != NULL);

  memset (scanner, 0, sizeof *scanner);
}

static gboolean
is_line_end (char c)
{
  return c == '\n' || c == '\r';
}

static gboolean
is_space_or_end (char c)
{
  return c == ' ' || c == '\t' || is_line_end (c);
}

/* Whether a line starting at @line (of @avail bytes, @complete when the
 * newline is among them) can start a committed block. */
static Decision
decide_line (const char *line,
             gsize       avail,
             gboolean    complete)
{
  gsize i;

  if (avail == 0)
    return complete ? DECISION_NO : DECISION_UNKNOWN;

  if (line[0] == ' ' || line[0] == '\t' || is_line_end (line[0]))
    return DECISION_NO;

  if (line[0] == '-' || line[0] == '+' || line[0] == '*')
    {
      if (avail < 2)
        return complete ? DECISION_NO : DECISION_UNKNOWN;
      return is_space_or_end (line[1]) ? DECISION_NO : DECISION_YES;
    }

  if (g_ascii_isdigit (line[0]))
    {
      for (i = 0; i < avail && i < 10 && g_ascii_isdigit (line[i]); i++)
        ;
      if (i == avail)
        return complete ? DECISION_NO : DECISION_UNKNOWN;
      if (i > 9 || (line[i] != '.' && line[i] != ')'))
        return DECISION_YES;
      if (i + 1 >= avail)
        return complete ? DECISION_NO : DECISION_UNKNOWN;
      return is_space_or_end (line[i + 1]) ? DECISION_NO : DECISION_YES;
    }

  return DECISION_YES;
}

static gboolean
line_is_blank (const char *line,
               gsize       len)
{
  gsize i;

  for (i = 0; i < len; i++)
    if (line[i] != ' ' && line[i] != '\t' && !is_line_end (line[i]))
      return FALSE;
  return TRUE;
}

/* Counts the fence run at the start of @line after up to three spaces;
 * returns 0 when the line is no fence line. */
static guint
fence_run (const char *line,
           gsize       len,
           char       *fence_char,
           gsize      *after)
{
  gsize i = 0;
  gsize start;
  char c;

  while (i < len && i < 3 && line[i] == ' ')
    i++;
  if (i >= len || (line[i] != '`' && line[i] != '~'))
    return 0;

  c = line[i];
  start = i;
  while (i < len && line[i] == c)
    i++;
  if (i - start < 3)
    return 0;

  *fence_char = c;
  *after = i;
  return (guint)(i - start);
}

static void
scan_line (TallyMarkdownScanner *scanner,
           const char           *line,
           gsize                 len)
{
  char c = 0;
  gsize after = 0;
  guint run = fence_run (line, len, &c, &after);

  if (scanner->in_fence)
    {
      if (run >= scanner->fence_len && c == scanner->fence_char &&
          line_is_blank (line + after, len - after))
        {
          scanner->in_fence = FALSE;
          scanner->prev_boundary = TRUE;
        }
      else
        scanner->prev_boundary = FALSE;
      return;
    }

  if (run > 0 && (c == '~' || memchr (line + after, '`', len - after) == NULL))
    {
      scanner->in_fence = TRUE;
      scanner->fence_char = c;
      scanner->fence_len = run;
      scanner->prev_boundary = FALSE;
      return;
    }

  scanner->prev_boundary = line_is_blank (line, len);
}

/* Finds the end of the line at @line: as in CommonMark, a line ends with
 * LF, CR or CR LF. Sets @line_len to the line's length with its ending (or
 * to @avail) and returns whether the line is complete. A CR that is the last
 * byte so far leaves the line incomplete: an LF may still follow it. */
static gboolean
line_end (const char *line,
          gsize       avail,
          gsize      *line_len)
{
  for (gsize i = 0; i < avail; i++)
    {
      if (line[i] == '\n')
        {
          *line_len = i + 1;
          return TRUE;
        }
      if (line[i] == '\r')
        {
          if (i + 1 == avail)
            break;
          *line_len = line[i + 1] == '\n' ? i + 2 : i + 1;
          return TRUE;
        }
    }

  *line_len = avail;
  return FALSE;
}

/**
 * tally_markdown_scanner_feed:
 * @scanner: a scanner
 * @text: the whole text so far (it may only grow between calls: the bytes
 *   already seen must not change)
 * @length: length of @text in bytes
 *
 * Examines the lines of @text completed since the last call and returns the
 * latest split point (see #TallyMarkdownScanner).
 *
 * Returns: a byte offset into @text at the start of a line, or 0 when the
 *   text has no split point yet; it never decreases between calls.
 */
gsize
tally_markdown_scanner_feed (TallyMarkdownScanner *scanner,
                             const char           *text,
                             gsize                 length)
{
  g_return_val_if_fail (scanner != NULL, 0);
  g_return_val_if_fail (text != NULL || length == 0, 0);

  while (scanner->line_start < length)
    {
      const char *line = text + scanner->line_start;
      gsize avail = length - scanner->line_start;
      gsize line_len;
      gboolean complete = line_end (line, avail, &line_len);

      if (scanner->line_start > 0 && scanner->prev_boundary && !scanner->in_fence &&
          scanner->commit < scanner->line_start &&
          decide_line (line, line_len, complete) == DECISION_YES)
        scanner->commit = scanner->line_start;

      if (!complete)
        break;

      scan_line (scanner, line, line_len);
      scanner->line_start += line_len;
    }

  return scanner->commit;
}
