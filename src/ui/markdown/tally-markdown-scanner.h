/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyMarkdownScanner:
 * @line_start: byte offset of the first line not yet fully examined
 * @commit: byte offset of the latest safe split point (0 when none)
 * @prev_boundary: whether the line before @line_start closed every
 *   top-level block (a blank line, or the closing fence of a code block)
 * @in_fence: whether @line_start lies inside a top-level fenced code block
 * @fence_char: the fence character (`` ` `` or `~`) while @in_fence
 * @fence_len: the length of the opening fence while @in_fence
 *
 * Incremental line scanner that finds where a growing markdown text can be
 * split into a *committed* prefix, whose rendering can no longer change
 * whatever text is appended, and an open tail that is re-rendered.
 *
 * A split point is the start of a line L such that
 *
 * - the line before L is blank (spaces and tabs only) or is the closing
 *   fence of a top-level fenced code block, and is not inside a fence;
 * - L starts in column 0 with a non-blank character (an indented line may
 *   continue a list item or an indented code block), and
 * - L does not start with a list marker (`-`, `+`, `*` followed by a space
 *   or the line end, or 1–9 digits followed by `.` or `)` and a space or the
 *   line end), which could continue a list across the blank line.
 *
 * Everything before such a line is closed in CommonMark's block structure
 * (a blank line ends paragraphs, tables, block quotes and indented code;
 * a list only survives a blank line through an indented line or a new item;
 * fenced code is tracked explicitly). Link reference definitions, which
 * act on the whole document, are not taken into account here: the view
 * checks the final render against a fresh one and falls back when needed.
 *
 * Lines end with LF, CR or CR LF, as in CommonMark (a lone CR ends a line
 * for md4c too, so it can open a fence).
 *
 * The scanner only reads each complete line once, so feeding a text that
 * grows by small deltas costs time linear in its length.
 */
typedef struct
{
  gsize    line_start;
  gsize    commit;
  gboolean prev_boundary;
  gboolean in_fence;
  char     fence_char;
  guint    fence_len;
} TallyMarkdownScanner;

void  tally_markdown_scanner_init (TallyMarkdownScanner *scanner);
gsize tally_markdown_scanner_feed (TallyMarkdownScanner *scanner,
                                   const char           *text,
                                   gsize                 length);

G_END_DECLS
