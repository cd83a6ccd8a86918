/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-markdown-renderer.h"

G_BEGIN_DECLS

/*
 * What the renderer's three files share: tally-markdown-renderer.c builds
 * a TallyMarkdownDoc from markdown, tally-markdown-renderer-buffer.c puts
 * one into a text buffer and reads it back, and
 * tally-markdown-renderer-structure.c describes either for tests.
 */

#define LIST_STEP    28
#define BULLET_HANG  22

#define PLACEHOLDER      "\xef\xbf\xbc"   /* U+FFFC */
#define ANCHOR_DATA_KEY  "tally-markdown-anchor"
#define HREF_PREFIX      "href:"

typedef struct
{
  const char *name;      /* in the doc's string chunk */
  guint       start;
  guint       end;
} Span;

typedef struct
{
  TallyMarkdownAnchorKind  kind;
  guint                    offset;       /* in characters */
  gsize                    byte_offset;
  int                      indent;
  char                    *code;
  char                    *language;
  TallyMarkdownTable      *table;
} AnchorData;

struct _TallyMarkdownDoc
{
  GString      *text;
  guint         n_chars;
  GArray       *spans;       /* Span */
  GPtrArray    *anchors;     /* AnchorData, atomic rc boxes */
  GStringChunk *names;
  guint         n_blocks;
};

void        _tally_markdown_anchor_data_release (gpointer            data);
AnchorData *_tally_markdown_anchor_get_data     (GtkTextChildAnchor *anchor);

G_END_DECLS
