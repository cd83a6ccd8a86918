/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: the markdown renderer's parser
 * (src/ui/markdown/tally-markdown-renderer.h, tally-markdown-scanner.h).
 *
 * tally_markdown_doc_parse() (md4c → TallyMarkdownDoc) needs no display,
 * and neither does a GtkTextBuffer: the target inserts docs into a buffer
 * without gtk_init(), so no widget is ever made.
 *
 * The raw input (any bytes, NULs included) is parsed on its own. Its text up
 * to the first NUL — what the view is given — then goes through the whole
 * path the view takes, and these must hold:
 *
 * - the doc's structure equals that of a buffer it was inserted into, and
 *   the buffer has the doc's number of characters;
 * - the streaming scanner gives the same split point whether the text
 *   arrives at once, a byte at a time or in random chunks; split points only
 *   grow, lie within the text and start a line;
 * - with TALLY_FUZZ_STRICT=1 (docs/testing.md): rendering the committed
 *   part and then the tail into one buffer, as the view does while
 *   streaming, gives the structure of a fresh render. The view's
 *   tally_markdown_view_finish() repairs any difference with a fresh render,
 *   so this is about streaming quality, not correctness; known differences
 *   remain (a message that ends with a unit that shows nothing, such as an
 *   empty heading, keeps the separator before it). Three kinds of text are
 *   left out even then:
 *   link reference definitions (the exception the scanner documents); list
 *   items and block quotes, where md4c 0.4.8 lets a fence opened inside the
 *   container close at an unindented line after a blank one
 *   ("1. ```\n\n```" is one code block for md4c, two for CommonMark); and
 *   tables, whose rows md4c lets look like fences ("a\n-|\n```\n```\nb"
 *   is one table for md4c, while the scanner splits after the "fence").
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tally-fuzz.h"
#include "tally-markdown-renderer.h"
#include "tally-markdown-scanner.h"

static gboolean strict;

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  tally_fuzz_quiet_logs ();
  strict = g_strcmp0 (g_getenv ("TALLY_FUZZ_STRICT"), "1") == 0;
  return 0;
}

static G_NORETURN void
fail (const char *what,
      const char *text,
      const char *expected,
      const char *actual)
{
  g_autofree char *escaped = g_strescape (text, NULL);

  g_printerr ("%s\n  markdown: \"%s\"\n--- expected\n%s\n--- actual\n%s\n", what, escaped,
              expected != NULL ? expected : "", actual != NULL ? actual : "");
  abort ();
}

static gsize
scan (const char *text,
      gsize       len,
      int         mode,
      const guint8 *seed,
      gsize       seed_len)
{
  TallyMarkdownScanner scanner;
  TallyFuzzSplitter splitter;
  gsize commit = 0;
  gsize fed = 0;

  tally_markdown_scanner_init (&scanner);
  tally_fuzz_splitter_init (&splitter, seed, seed_len, 0x3d);

  if (mode == 0)
    return tally_markdown_scanner_feed (&scanner, text, len);

  while (fed < len)
    {
      gsize next;

      fed += tally_fuzz_chunk (&splitter, mode, len - fed, 40);
      next = tally_markdown_scanner_feed (&scanner, text, fed);
      if (next < commit || next > fed)
        fail ("the scanner's split point went back or past the text", text, NULL, NULL);
      commit = next;
    }

  return commit;
}

/* Whether a line of @text starts a block quote or a list item (after up
 * to three spaces), or @text has a "[" that may define a link reference or
 * a "|" that may make a table. */
static gboolean
has_container_or_reference (const char *text)
{
  const char *line = text;

  if (strpbrk (text, "[|") != NULL)
    return TRUE;

  while (*line != '\0')
    {
      const char *p = line;
      const char *next;
      int spaces = 0;

      while (*p == ' ' && spaces < 3)
        {
          p++;
          spaces++;
        }
      if (*p == '>')
        return TRUE;
      if ((*p == '-' || *p == '+' || *p == '*') && strchr (" \t\r\n", p[1]) != NULL)
        return TRUE;
      if (g_ascii_isdigit (*p))
        {
          while (g_ascii_isdigit (*p))
            p++;
          if ((*p == '.' || *p == ')') && strchr (" \t\r\n", p[1]) != NULL)
            return TRUE;
        }

      next = strpbrk (line, "\r\n");
      if (next == NULL)
        break;
      line = next + 1;
    }

  return FALSE;
}

/* Renders @text in one buffer the way the view streams it: the committed
 * part first, then (after the separating newline) the open tail. */
static char *
streamed_structure (const char *text,
                    gsize       len,
                    gsize       commit)
{
  g_autoptr(GtkTextBuffer) buffer = gtk_text_buffer_new (NULL);
  g_autoptr(TallyMarkdownDoc) head = NULL;
  g_autoptr(TallyMarkdownDoc) tail = NULL;
  TallyMarkdownPosition position = TALLY_MARKDOWN_AT_START;
  GtkTextIter end;

  head = tally_markdown_doc_parse (text, commit, TALLY_MARKDOWN_AT_START);
  tally_markdown_doc_insert (head, buffer, NULL);

  gtk_text_buffer_get_end_iter (buffer, &end);
  if (gtk_text_buffer_get_char_count (buffer) > 0)
    {
      GtkTextIter last = end;

      if (gtk_text_iter_backward_char (&last) && gtk_text_iter_get_char (&last) != '\n')
        gtk_text_buffer_insert (buffer, &end, "\n", 1);
      position = TALLY_MARKDOWN_AFTER_NEWLINE;
    }

  tail = tally_markdown_doc_parse (text + commit, len - commit, position);
  tally_markdown_doc_insert (tail, buffer, NULL);

  return tally_markdown_buffer_dup_structure (buffer, TRUE);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(TallyMarkdownDoc) raw = NULL;
  g_autoptr(TallyMarkdownDoc) doc = NULL;
  g_autoptr(GtkTextBuffer) buffer = NULL;
  g_autofree char *text = NULL;
  g_autofree char *plain = NULL;
  g_autofree char *from_doc = NULL;
  g_autofree char *from_buffer = NULL;
  gsize len;
  gsize commit;

  /* Any bytes: the parser alone. */
  raw = tally_markdown_doc_parse ((const char *) data, size, TALLY_MARKDOWN_AFTER_TEXT);
  plain = tally_markdown_doc_dup_structure (raw, FALSE);

  /* The view's path, with what the view is given: a C string. */
  text = g_strndup ((const char *) data, size);
  len = strlen (text);

  doc = tally_markdown_doc_parse (text, len, TALLY_MARKDOWN_AT_START);
  buffer = gtk_text_buffer_new (NULL);
  tally_markdown_doc_insert (doc, buffer, NULL);
  from_doc = tally_markdown_doc_dup_structure (doc, TRUE);
  from_buffer = tally_markdown_buffer_dup_structure (buffer, TRUE);
  if (!g_str_equal (from_doc, from_buffer))
    fail ("the buffer's structure differs from the doc's", text, from_doc, from_buffer);
  if ((guint) gtk_text_buffer_get_char_count (buffer) != tally_markdown_doc_get_n_chars (doc))
    fail ("the buffer's length differs from the doc's", text, NULL, NULL);

  commit = scan (text, len, 0, data, size);
  if (commit > len || (commit > 0 && text[commit - 1] != '\n' && text[commit - 1] != '\r'))
    fail ("the scanner split the text inside a line", text, NULL, NULL);
  for (int mode = 1; mode < 3; mode++)
    if (scan (text, len, mode, data, size) != commit)
      fail ("the scanner's split point depends on how the text arrived", text, NULL, NULL);

  if (strict && commit > 0 && !has_container_or_reference (text))
    {
      g_autofree char *streamed = streamed_structure (text, len, commit);

      if (!g_str_equal (streamed, from_doc))
        fail ("rendering the committed part and the tail differs from a fresh render", text, from_doc, streamed);
    }

  return 0;
}
