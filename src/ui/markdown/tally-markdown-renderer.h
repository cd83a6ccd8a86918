/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/**
 * TallyMarkdownAnchorKind:
 * @TALLY_MARKDOWN_ANCHOR_NONE: not an anchor made by the renderer
 * @TALLY_MARKDOWN_ANCHOR_CODE: a fenced or indented code block
 * @TALLY_MARKDOWN_ANCHOR_TABLE: a GFM table
 * @TALLY_MARKDOWN_ANCHOR_RULE: a thematic break (horizontal rule)
 *
 * What a #GtkTextChildAnchor inserted by the renderer stands for; the view
 * puts the matching widget there.
 */
typedef enum
{
  TALLY_MARKDOWN_ANCHOR_NONE,
  TALLY_MARKDOWN_ANCHOR_CODE,
  TALLY_MARKDOWN_ANCHOR_TABLE,
  TALLY_MARKDOWN_ANCHOR_RULE,
} TallyMarkdownAnchorKind;

/**
 * TallyMarkdownAlign:
 * @TALLY_MARKDOWN_ALIGN_DEFAULT: no alignment given in the delimiter row
 * @TALLY_MARKDOWN_ALIGN_LEFT: `:--`
 * @TALLY_MARKDOWN_ALIGN_CENTER: `:-:`
 * @TALLY_MARKDOWN_ALIGN_RIGHT: `--:`
 *
 * Column alignment of a GFM table.
 */
typedef enum
{
  TALLY_MARKDOWN_ALIGN_DEFAULT,
  TALLY_MARKDOWN_ALIGN_LEFT,
  TALLY_MARKDOWN_ALIGN_CENTER,
  TALLY_MARKDOWN_ALIGN_RIGHT,
} TallyMarkdownAlign;

/**
 * TallyMarkdownPosition:
 * @TALLY_MARKDOWN_AT_START: the doc goes into an empty buffer
 * @TALLY_MARKDOWN_AFTER_TEXT: the doc goes after text that does not end
 *   with a line separator; its first block starts with "\n"
 * @TALLY_MARKDOWN_AFTER_NEWLINE: the doc goes after text and the "\n"
 *   that separates it from the doc's first block is already there
 *
 * Where a doc will be inserted; it decides the separator and the spacing
 * of the doc's first block.
 */
typedef enum
{
  TALLY_MARKDOWN_AT_START,
  TALLY_MARKDOWN_AFTER_TEXT,
  TALLY_MARKDOWN_AFTER_NEWLINE,
} TallyMarkdownPosition;

/**
 * TallyMarkdownTable:
 * @n_columns: number of columns (at least 1)
 * @n_rows: number of rows, the header row included (at least 1)
 * @aligns: (array length=n_columns): alignment of each column
 * @plain: (array): @n_rows × @n_columns cell texts, row-major, without
 *   markup (for copying and for tests)
 * @markup: (array): the same cells as Pango markup (bold, italic,
 *   strikethrough, monospace, `<a href>` links), escaped
 *
 * A table as parsed from markdown. Rows shorter than the header are padded
 * with empty cells. Owned by the anchor it is attached to.
 */
typedef struct
{
  guint               n_columns;
  guint               n_rows;
  TallyMarkdownAlign *aligns;
  char              **plain;
  char              **markup;
} TallyMarkdownTable;

/**
 * TallyMarkdownDoc:
 *
 * The result of rendering one markdown text: plain text with one U+FFFC
 * placeholder per anchored block, named tag spans in character offsets, and
 * the anchored blocks' data. It does not depend on any widget; insert it
 * into a buffer with tally_markdown_doc_insert().
 */
typedef struct _TallyMarkdownDoc TallyMarkdownDoc;

TallyMarkdownDoc        *tally_markdown_doc_parse           (const char       *markdown,
                                                             gsize             length,
                                                             TallyMarkdownPosition position);
void                     tally_markdown_doc_free            (TallyMarkdownDoc *doc);
guint                    tally_markdown_doc_get_n_blocks    (TallyMarkdownDoc *doc);
guint                    tally_markdown_doc_get_n_chars     (TallyMarkdownDoc *doc);
char                    *tally_markdown_doc_dup_structure   (TallyMarkdownDoc *doc,
                                                             gboolean          presentation);
void                     tally_markdown_doc_insert          (TallyMarkdownDoc *doc,
                                                             GtkTextBuffer    *buffer,
                                                             GPtrArray        *anchors);
gboolean                 tally_markdown_doc_update_in_place (TallyMarkdownDoc  *doc,
                                                             TallyMarkdownDoc  *previous,
                                                             GtkTextBuffer     *buffer,
                                                             const GtkTextIter *start,
                                                             GPtrArray         *anchors);

void                     tally_markdown_buffer_ensure_tags  (GtkTextBuffer    *buffer);
void                     tally_markdown_buffer_set_colors   (GtkTextBuffer    *buffer,
                                                             const GdkRGBA    *foreground,
                                                             const GdkRGBA    *accent);
char                    *tally_markdown_buffer_dup_structure (GtkTextBuffer   *buffer,
                                                              gboolean         presentation);
const char              *tally_markdown_iter_get_link       (const GtkTextIter *iter);
int                      tally_markdown_iter_get_quote_depth (const GtkTextIter *iter);

TallyMarkdownAnchorKind  tally_markdown_anchor_get_kind     (GtkTextChildAnchor *anchor);
const char              *tally_markdown_anchor_get_code     (GtkTextChildAnchor *anchor);
const char              *tally_markdown_anchor_get_language (GtkTextChildAnchor *anchor);
const TallyMarkdownTable *tally_markdown_anchor_get_table   (GtkTextChildAnchor *anchor);
int                      tally_markdown_anchor_get_indent   (GtkTextChildAnchor *anchor);

/**
 * TALLY_MARKDOWN_QUOTE_STEP:
 *
 * Left margin, in pixels, added per block quote level.
 */
#define TALLY_MARKDOWN_QUOTE_STEP 20

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyMarkdownDoc, tally_markdown_doc_free)

G_END_DECLS
