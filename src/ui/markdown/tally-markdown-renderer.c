/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <md4c.h>

#include "tally-markdown-renderer.h"
#include "tally-markdown-renderer-private.h"
#include "tally-html-entity.h"

/*
 * Markdown → text buffer, in two steps:
 *
 * 1. tally_markdown_doc_parse() runs md4c over the text and builds a
 *    TallyMarkdownDoc: the visible text (one U+FFFC per code block, table
 *    or rule), spans of named tags in character offsets, and the anchored
 *    blocks' data. No widget is involved, so this is cheap and pure.
 * 2. tally_markdown_doc_insert() appends the doc at the end of a buffer:
 *    a handful of inserts, one child anchor per block, then the tags
 *    (tally-markdown-renderer-buffer.c).
 *
 * This file is the first step; tally-markdown-renderer-structure.c
 * describes docs and buffers for tests, and the three share
 * tally-markdown-renderer-private.h.
 *
 * Layout in the buffer: every paragraph-like unit (paragraph, heading, list
 * item line, anchored block) is one buffer line. Units are separated by a
 * single "\n" written *before* a unit when anything precedes it in the
 * buffer, and vertical spacing is a pixels-above-lines "gap-*" tag on every
 * unit but the first. Both rules only depend on whether the buffer already
 * holds text (see TallyMarkdownPosition), so rendering a text in two parts
 * at a block boundary gives exactly the buffer of rendering it at once —
 * which is what streaming relies on (see TallyMarkdownScanner).
 *
 * Hard line breaks are U+2028 (a line break inside the paragraph), soft
 * breaks a space. Raw HTML is disabled in the parser, so it shows as text.
 *
 * Tags: fixed ones created in a fixed order (later = higher priority) —
 * gap-*, p, h1…h6, quote, marker, em, strong, del, code, link — and ones
 * created on demand at the lowest priority: "margin-Q-L-B" (left margin for
 * quote depth Q, list depth L, B = 1 on a bullet line with a hanging
 * indent), "li-L" (a line inside a list item at depth L), "quote-Q" (a line
 * inside Q block quotes, next to the styling "quote" tag) and "href:URL"
 * (the target of a link, next to the styling "link" tag).
 */

#define REPLACEMENT      "\xef\xbf\xbd"   /* U+FFFD */
#define LINE_SEPARATOR   "\xe2\x80\xa8"   /* U+2028 */

typedef struct
{
  gboolean ordered;
  gboolean tight;
  gboolean first;
  guint    number;
  char     delimiter;
} ListFrame;

typedef struct
{
  const char *name;
  guint       start;
  gboolean    link;
} OpenSpan;

typedef struct
{
  TallyMarkdownDoc *doc;
  TallyMarkdownPosition position;

  guint             depth;
  guint             quote_depth;
  GArray           *lists;          /* ListFrame */
  GArray           *inline_stack;   /* OpenSpan */
  GArray           *line_spans;     /* OpenSpan */
  gboolean          line_open;
  gboolean          li_pending;
  /* where the open line began: text length and characters before its
   * separator, characters after it (see end_line ()) */
  gsize             line_text_len;
  guint             line_n_chars;
  guint             line_content_start;

  /* code block */
  gboolean          in_code;
  GString          *code;
  char             *code_language;

  /* table */
  gboolean          in_table;
  gboolean          in_cell;
  gboolean          in_head;
  guint             n_columns;
  GArray           *aligns;         /* TallyMarkdownAlign */
  GPtrArray        *rows;           /* GPtrArray of cell pairs (plain, markup) */
  GPtrArray        *row;
  GString          *cell_plain;
  GString          *cell_markup;
  GArray           *cell_stack;     /* MD_SPANTYPE */
  /* The markdown md_parse() was given, to check its text spans against. */
  const char *source;
  gsize       source_len;
} Builder;

/* ---------------------------------------------------------------------- */
/* Anchor data                                                              */

static void
table_free (TallyMarkdownTable *table)
{
  guint n;

  if (table == NULL)
    return;

  n = table->n_rows * table->n_columns;
  for (guint i = 0; i < n; i++)
    {
      g_free (table->plain[i]);
      g_free (table->markup[i]);
    }
  g_free (table->plain);
  g_free (table->markup);
  g_free (table->aligns);
  g_free (table);
}

static void
anchor_data_clear (gpointer data)
{
  AnchorData *anchor = data;

  g_free (anchor->code);
  g_free (anchor->language);
  table_free (anchor->table);
}

/* Releases a reference to an anchor's data (the GDestroyNotify of the
 * doc's anchors and of the data set on a buffer's child anchors). */
void
_tally_markdown_anchor_data_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, anchor_data_clear);
}


/* ---------------------------------------------------------------------- */
/* Text helpers                                                             */

/* Decodes an md4c attribute (link destinations, the info string). */
static char *
attribute_dup (const MD_ATTRIBUTE *attr)
{
  GString *out = g_string_new (NULL);

  if (attr == NULL || attr->text == NULL || attr->size == 0)
    return g_string_free (out, FALSE);

  for (guint i = 0; attr->substr_offsets[i] < attr->size; i++)
    {
      MD_OFFSET off = attr->substr_offsets[i];
      MD_OFFSET end = attr->substr_offsets[i + 1];

      switch (attr->substr_types[i])
        {
        case MD_TEXT_ENTITY:
          tally_html_entity_append (out, attr->text + off, end - off);
          break;
        case MD_TEXT_NULLCHAR:
          g_string_append (out, REPLACEMENT);
          break;
        default:
          g_string_append_len (out, attr->text + off, (gssize)(end - off));
          break;
        }
    }

  if (!g_utf8_validate_len (out->str, out->len, NULL))
    {
      char *valid = g_utf8_make_valid (out->str, (gssize)out->len);

      g_string_free (out, TRUE);
      return valid;
    }

  return g_string_free (out, FALSE);
}

/* ---------------------------------------------------------------------- */
/* Building a doc                                                           */

static const char *
builder_name (Builder    *b,
              const char *name)
{
  return g_string_chunk_insert_const (b->doc->names, name);
}

/* Appends visible text: invalid UTF-8 becomes U+FFFD, and so does a literal
 * U+FFFC, which would be mistaken for an anchor. */
static void
doc_append (TallyMarkdownDoc *doc,
            const char       *text,
            gsize             len)
{
  g_autofree char *valid = NULL;
  gsize start = doc->text->len;

  if (len == 0)
    return;

  if (!g_utf8_validate_len (text, len, NULL))
    {
      valid = g_utf8_make_valid (text, (gssize)len);
      text = valid;
      len = strlen (valid);
    }

  for (;;)
    {
      const char *hit = len >= 3 ? g_strstr_len (text, (gssize)len, PLACEHOLDER) : NULL;
      gsize chunk = hit != NULL ? (gsize)(hit - text) : len;

      g_string_append_len (doc->text, text, (gssize)chunk);
      if (hit == NULL)
        break;
      g_string_append (doc->text, REPLACEMENT);
      text += chunk + 3;
      len -= chunk + 3;
    }

  doc->n_chars += (guint)g_utf8_strlen (doc->text->str + start, (gssize)(doc->text->len - start));
}

static void
add_span (Builder    *b,
          const char *name,
          guint       start,
          guint       end)
{
  Span span = { name, start, end };

  if (end > start)
    g_array_append_val (b->doc->spans, span);
}

static guint
list_depth (Builder *b)
{
  return b->lists->len;
}

static int
content_indent (Builder *b)
{
  return (int)(b->quote_depth * TALLY_MARKDOWN_QUOTE_STEP + list_depth (b) * LIST_STEP);
}

static void
push_line_span (Builder    *b,
                const char *name)
{
  OpenSpan span = { name, b->doc->n_chars, FALSE };

  g_array_append_val (b->line_spans, span);
}

static void
end_line (Builder *b)
{
  if (!b->line_open)
    return;

  /* A unit that shows nothing (a paragraph of an empty code span or image)
   * takes no line: otherwise it would separate its neighbours by an empty
   * line when rendered in one piece but not when it starts or ends a
   * streamed part (the separators only see whether characters precede). */
  if (b->doc->n_chars == b->line_content_start)
    {
      g_string_truncate (b->doc->text, b->line_text_len);
      b->doc->n_chars = b->line_n_chars;
      g_array_set_size (b->line_spans, 0);
      b->line_open = FALSE;
      return;
    }

  for (guint i = b->line_spans->len; i > 0; i--)
    {
      OpenSpan *span = &g_array_index (b->line_spans, OpenSpan, i - 1);

      add_span (b, span->name, span->start, b->doc->n_chars);
    }
  g_array_set_size (b->line_spans, 0);
  b->line_open = FALSE;
}

static void
begin_line (Builder    *b,
            const char *gap,
            gboolean    bullet)
{
  gboolean has_before;

  end_line (b);
  b->li_pending = FALSE;

  has_before = b->doc->n_chars > 0 || b->position != TALLY_MARKDOWN_AT_START;
  b->line_text_len = b->doc->text->len;
  b->line_n_chars = b->doc->n_chars;
  if (b->doc->n_chars > 0 || b->position == TALLY_MARKDOWN_AFTER_TEXT)
    doc_append (b->doc, "\n", 1);

  b->line_open = TRUE;
  b->line_content_start = b->doc->n_chars;

  if (has_before && gap != NULL)
    push_line_span (b, builder_name (b, gap));

  if (b->quote_depth > 0 || list_depth (b) > 0)
    {
      char name[64];

      g_snprintf (name, sizeof name, "margin-%u-%u-%u",
                  b->quote_depth, list_depth (b), bullet ? 1u : 0u);
      push_line_span (b, builder_name (b, name));
    }

  if (b->quote_depth > 0)
    {
      char name[32];

      g_snprintf (name, sizeof name, "quote-%u", b->quote_depth);
      push_line_span (b, builder_name (b, "quote"));
      push_line_span (b, builder_name (b, name));
    }

  if (list_depth (b) > 0)
    {
      char name[32];

      g_snprintf (name, sizeof name, "li-%u", list_depth (b));
      push_line_span (b, builder_name (b, name));
    }
}

/* Starts the line of a block; the first block of a list item shares the
 * line of its bullet. */
static void
begin_block_line (Builder    *b,
                  const char *gap)
{
  if (b->li_pending && b->line_open)
    {
      b->li_pending = FALSE;
      return;
    }
  begin_line (b, gap, FALSE);
}

static const char *
paragraph_gap (Builder *b)
{
  return list_depth (b) > 0 ? "gap-loose" : "gap-block";
}

/* Makes sure text lands on a line, for content md4c gives outside of any
 * paragraph (the text of tight list items). */
static void
ensure_line (Builder *b)
{
  if (b->li_pending && b->line_open)
    b->li_pending = FALSE;
  else if (!b->line_open)
    begin_line (b, "gap-tight", FALSE);
}

static void
add_anchor (Builder                 *b,
            TallyMarkdownAnchorKind  kind,
            char                    *code,
            char                    *language,
            TallyMarkdownTable      *table)
{
  AnchorData *anchor = g_atomic_rc_box_new0 (AnchorData);

  anchor->kind = kind;
  anchor->indent = content_indent (b);
  anchor->code = code;
  anchor->language = language;
  anchor->table = table;
  anchor->byte_offset = b->doc->text->len;
  anchor->offset = b->doc->n_chars;

  g_string_append (b->doc->text, PLACEHOLDER);
  b->doc->n_chars++;
  g_ptr_array_add (b->doc->anchors, anchor);
}

static void
enter_list_item (Builder              *b,
                 MD_BLOCK_LI_DETAIL   *detail)
{
  ListFrame *frame = &g_array_index (b->lists, ListFrame, b->lists->len - 1);
  const char *gap;
  guint start;
  char marker[32];

  if (frame->first)
    {
      if (list_depth (b) == 1)
        gap = "gap-block";
      else
        {
          ListFrame *parent = &g_array_index (b->lists, ListFrame, b->lists->len - 2);
          gap = parent->tight ? "gap-tight" : "gap-loose";
        }
    }
  else
    gap = frame->tight ? "gap-tight" : "gap-loose";

  begin_line (b, gap, TRUE);

  if (detail != NULL && detail->is_task)
    g_strlcpy (marker, (detail->task_mark == 'x' || detail->task_mark == 'X') ? "\xe2\x98\x91" : "\xe2\x98\x90",
               sizeof marker);
  else if (frame->ordered)
    g_snprintf (marker, sizeof marker, "%u%c", frame->number, frame->delimiter);
  else
    {
      static const char *bullets[] = { "\xe2\x80\xa2", "\xe2\x97\xa6", "\xe2\x96\xaa" };
      guint level = MIN (list_depth (b), G_N_ELEMENTS (bullets)) - 1;

      g_strlcpy (marker, bullets[level], sizeof marker);
    }

  start = b->doc->n_chars;
  doc_append (b->doc, marker, strlen (marker));
  add_span (b, builder_name (b, "marker"), start, b->doc->n_chars);
  doc_append (b->doc, "\t", 1);
  b->li_pending = TRUE;
}

static void
table_start (Builder *b,
             MD_BLOCK_TABLE_DETAIL *detail)
{
  b->in_table = TRUE;
  b->n_columns = detail != NULL ? MAX (detail->col_count, 1u) : 1;
  g_array_set_size (b->aligns, 0);
  g_ptr_array_set_size (b->rows, 0);
}

static void
table_finish (Builder *b)
{
  TallyMarkdownTable *table = g_new0 (TallyMarkdownTable, 1);
  guint n_rows = MAX (b->rows->len, 1u);

  table->n_columns = b->n_columns;
  table->n_rows = n_rows;
  table->aligns = g_new0 (TallyMarkdownAlign, table->n_columns);
  table->plain = g_new0 (char *, n_rows * table->n_columns);
  table->markup = g_new0 (char *, n_rows * table->n_columns);

  for (guint c = 0; c < table->n_columns && c < b->aligns->len; c++)
    table->aligns[c] = g_array_index (b->aligns, TallyMarkdownAlign, c);

  for (guint r = 0; r < n_rows; r++)
    {
      GPtrArray *row = r < b->rows->len ? g_ptr_array_index (b->rows, r) : NULL;

      for (guint c = 0; c < table->n_columns; c++)
        {
          guint idx = r * table->n_columns + c;

          if (row != NULL && 2 * c + 1 < row->len)
            {
              table->plain[idx] = g_strdup (g_ptr_array_index (row, 2 * c));
              table->markup[idx] = g_strdup (g_ptr_array_index (row, 2 * c + 1));
            }
          else
            {
              table->plain[idx] = g_strdup ("");
              table->markup[idx] = g_strdup ("");
            }
        }
    }

  g_ptr_array_set_size (b->rows, 0);
  b->in_table = FALSE;

  begin_block_line (b, "gap-block");
  add_anchor (b, TALLY_MARKDOWN_ANCHOR_TABLE, NULL, NULL, table);
  end_line (b);
}

static void
cell_append_text (Builder    *b,
                  const char *text,
                  gsize       len)
{
  g_autofree char *valid = NULL;
  g_autofree char *escaped = NULL;

  if (!g_utf8_validate_len (text, len, NULL))
    {
      valid = g_utf8_make_valid (text, (gssize)len);
      text = valid;
      len = strlen (valid);
    }

  g_string_append_len (b->cell_plain, text, (gssize)len);
  escaped = g_markup_escape_text (text, (gssize)len);
  g_string_append (b->cell_markup, escaped);
}

static int
enter_block_cb (MD_BLOCKTYPE  type,
                void         *detail,
                void         *user_data)
{
  Builder *b = user_data;

  g_assert (b != NULL);

  b->depth++;
  if (b->depth == 2)
    b->doc->n_blocks++;

  switch (type)
    {
    case MD_BLOCK_DOC:
      break;

    case MD_BLOCK_QUOTE:
      end_line (b);
      b->li_pending = FALSE;
      b->quote_depth++;
      break;

    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
      {
        ListFrame frame = { 0 };

        frame.first = TRUE;
        if (type == MD_BLOCK_OL)
          {
            MD_BLOCK_OL_DETAIL *ol = detail;

            frame.ordered = TRUE;
            frame.tight = ol->is_tight;
            frame.number = ol->start;
            frame.delimiter = ol->mark_delimiter != 0 ? ol->mark_delimiter : '.';
          }
        else
          {
            MD_BLOCK_UL_DETAIL *ul = detail;

            frame.tight = ul->is_tight;
          }
        g_array_append_val (b->lists, frame);
      }
      break;

    case MD_BLOCK_LI:
      enter_list_item (b, detail);
      break;

    case MD_BLOCK_HR:
      begin_block_line (b, "gap-block");
      add_anchor (b, TALLY_MARKDOWN_ANCHOR_RULE, NULL, NULL, NULL);
      end_line (b);
      break;

    case MD_BLOCK_H:
      {
        MD_BLOCK_H_DETAIL *h = detail;
        guint level = CLAMP (h->level, 1u, 6u);
        char name[8];

        begin_block_line (b, level <= 2 ? "gap-h1" : "gap-h");
        g_snprintf (name, sizeof name, "h%u", level);
        push_line_span (b, builder_name (b, name));
      }
      break;

    case MD_BLOCK_CODE:
      {
        MD_BLOCK_CODE_DETAIL *code = detail;

        b->in_code = TRUE;
        g_string_truncate (b->code, 0);
        g_clear_pointer (&b->code_language, g_free);
        b->code_language = attribute_dup (&code->lang);
      }
      break;

    case MD_BLOCK_HTML:
    case MD_BLOCK_P:
      begin_block_line (b, paragraph_gap (b));
      push_line_span (b, builder_name (b, "p"));
      break;

    case MD_BLOCK_TABLE:
      table_start (b, detail);
      break;

    case MD_BLOCK_THEAD:
      b->in_head = TRUE;
      break;

    case MD_BLOCK_TBODY:
      b->in_head = FALSE;
      break;

    case MD_BLOCK_TR:
      b->row = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (b->rows, b->row);
      break;

    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
      {
        MD_BLOCK_TD_DETAIL *td = detail;

        b->in_cell = TRUE;
        g_string_truncate (b->cell_plain, 0);
        g_string_truncate (b->cell_markup, 0);
        g_array_set_size (b->cell_stack, 0);
        if (b->in_head)
          {
            TallyMarkdownAlign align = TALLY_MARKDOWN_ALIGN_DEFAULT;

            switch (td->align)
              {
              case MD_ALIGN_LEFT: align = TALLY_MARKDOWN_ALIGN_LEFT; break;
              case MD_ALIGN_CENTER: align = TALLY_MARKDOWN_ALIGN_CENTER; break;
              case MD_ALIGN_RIGHT: align = TALLY_MARKDOWN_ALIGN_RIGHT; break;
              case MD_ALIGN_DEFAULT:
              default: break;
              }
            g_array_append_val (b->aligns, align);
          }
      }
      break;

    default:
      break;
    }

  return 0;
}

static int
leave_block_cb (MD_BLOCKTYPE  type,
                void         *detail,
                void         *user_data)
{
  Builder *b = user_data;

  g_assert (b != NULL);

  switch (type)
    {
    case MD_BLOCK_QUOTE:
      end_line (b);
      if (b->quote_depth > 0)
        b->quote_depth--;
      break;

    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
      end_line (b);
      if (b->lists->len > 0)
        g_array_set_size (b->lists, b->lists->len - 1);
      break;

    case MD_BLOCK_LI:
      end_line (b);
      b->li_pending = FALSE;
      if (b->lists->len > 0)
        {
          ListFrame *frame = &g_array_index (b->lists, ListFrame, b->lists->len - 1);

          frame->number++;
          frame->first = FALSE;
        }
      break;

    case MD_BLOCK_H:
    case MD_BLOCK_P:
    case MD_BLOCK_HTML:
      end_line (b);
      break;

    case MD_BLOCK_CODE:
      {
        char *code;

        b->in_code = FALSE;
        /* md4c ends every code line with '\n'; the last one is not part of
         * what is shown or copied. */
        if (b->code->len > 0 && b->code->str[b->code->len - 1] == '\n')
          g_string_truncate (b->code, b->code->len - 1);
        code = g_utf8_make_valid (b->code->str, (gssize)b->code->len);

        begin_block_line (b, "gap-block");
        add_anchor (b, TALLY_MARKDOWN_ANCHOR_CODE, code,
                    g_steal_pointer (&b->code_language), NULL);
        end_line (b);
      }
      break;

    case MD_BLOCK_TABLE:
      table_finish (b);
      break;

    case MD_BLOCK_TR:
      b->row = NULL;
      break;

    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
      if (b->row != NULL)
        {
          g_ptr_array_add (b->row, g_strdup (b->cell_plain->str));
          g_ptr_array_add (b->row, g_strdup (b->cell_markup->str));
        }
      b->in_cell = FALSE;
      break;

    default:
      break;
    }

  b->depth--;
  return 0;
}

/* The styled spans: the buffer tag that shows each in the text, and the
 * Pango markup element that shows it in a table cell. */
typedef struct
{
  MD_SPANTYPE type;
  const char *tag;
  const char *element;
} SpanStyle;

static const SpanStyle span_styles[] = {
  { MD_SPAN_EM, "em", "i" },
  { MD_SPAN_STRONG, "strong", "b" },
  { MD_SPAN_DEL, "del", "s" },
  { MD_SPAN_CODE, "code", "tt" },
};

static const SpanStyle *
span_style (MD_SPANTYPE type)
{
  for (guint i = 0; i < G_N_ELEMENTS (span_styles); i++)
    if (span_styles[i].type == type)
      return &span_styles[i];
  return NULL;
}

/* The target of a link or an image span (@detail as md4c gives it), or
 * %NULL for other spans. */
static char *
span_dup_target (MD_SPANTYPE  type,
                 void        *detail)
{
  if (type == MD_SPAN_A)
    return attribute_dup (&((MD_SPAN_A_DETAIL *)detail)->href);
  if (type == MD_SPAN_IMG)
    return attribute_dup (&((MD_SPAN_IMG_DETAIL *)detail)->src);
  return NULL;
}

static void
cell_enter_span (Builder     *b,
                 MD_SPANTYPE  type,
                 void        *detail)
{
  const SpanStyle *style = span_style (type);
  g_autofree char *target = span_dup_target (type, detail);

  if (style != NULL)
    g_string_append_printf (b->cell_markup, "<%s>", style->element);
  else if (target != NULL)
    {
      g_autofree char *escaped = g_markup_escape_text (target, -1);

      g_string_append_printf (b->cell_markup, "<a href=\"%s\">", escaped);
    }
  g_array_append_val (b->cell_stack, type);
}

static void
cell_leave_span (Builder *b)
{
  MD_SPANTYPE type;
  const SpanStyle *style;

  if (b->cell_stack->len == 0)
    return;

  type = g_array_index (b->cell_stack, MD_SPANTYPE, b->cell_stack->len - 1);
  g_array_set_size (b->cell_stack, b->cell_stack->len - 1);

  style = span_style (type);
  if (style != NULL)
    g_string_append_printf (b->cell_markup, "</%s>", style->element);
  else if (type == MD_SPAN_A || type == MD_SPAN_IMG)
    g_string_append (b->cell_markup, "</a>");
}

static int
enter_span_cb (MD_SPANTYPE  type,
               void        *detail,
               void        *user_data)
{
  Builder *b = user_data;
  OpenSpan span = { NULL, b->doc->n_chars, FALSE };
  const SpanStyle *style = span_style (type);
  g_autofree char *target = NULL;

  g_assert (b != NULL);

  if (b->in_cell)
    {
      cell_enter_span (b, type, detail);
      return 0;
    }

  target = span_dup_target (type, detail);
  if (style != NULL)
    {
      span.name = builder_name (b, style->tag);
    }
  else if (target != NULL)
    {
      g_autofree char *name = g_strconcat (HREF_PREFIX, target, NULL);

      span.link = TRUE;
      span.name = builder_name (b, name);
    }

  /* A NULL name keeps enter and leave paired for spans shown as text. */
  g_array_append_val (b->inline_stack, span);
  return 0;
}

static int
leave_span_cb (MD_SPANTYPE  type,
               void        *detail,
               void        *user_data)
{
  Builder *b = user_data;
  OpenSpan *span;

  g_assert (b != NULL);

  if (b->in_cell)
    {
      cell_leave_span (b);
      return 0;
    }

  if (b->inline_stack->len == 0)
    return 0;

  span = &g_array_index (b->inline_stack, OpenSpan, b->inline_stack->len - 1);
  if (span->name != NULL)
    {
      add_span (b, span->name, span->start, b->doc->n_chars);
      if (span->link)
        add_span (b, builder_name (b, "link"), span->start, b->doc->n_chars);
    }
  g_array_set_size (b->inline_stack, b->inline_stack->len - 1);
  return 0;
}

static int
text_cb (MD_TEXTTYPE    type,
         const MD_CHAR *text,
         MD_SIZE        size,
         void          *user_data)
{
  Builder *b = user_data;
  guintptr from = (guintptr) text;
  guintptr source_end = (guintptr) b->source + b->source_len;

  g_assert (b != NULL);

  /* A text span inside the source never runs past its end; md4c 0.4.8 can
   * report one that does for damaged input (found by fuzzing: a size near
   * 4 GiB). It is cut at the end of the source instead of being read. */
  if (from >= (guintptr) b->source && from <= source_end)
    {
      if (size > source_end - from)
        size = (MD_SIZE) (source_end - from);
    }
  else if (size > b->source_len)
    {
      /* Outside the source md4c only hands out its own short constants (a
       * newline, a run of indentation spaces). A longer span from elsewhere
       * is the same damage with a pointer that cannot be trusted at all
       * (found by fuzzing: sizes of 2 GiB and more), so it is not read. */
      return 0;
    }

  if (b->in_code)
    {
      if (type == MD_TEXT_NULLCHAR)
        g_string_append (b->code, REPLACEMENT);
      else
        g_string_append_len (b->code, text, (gssize)size);
      return 0;
    }

  if (b->in_cell)
    {
      switch (type)
        {
        case MD_TEXT_NULLCHAR:
          cell_append_text (b, REPLACEMENT, 3);
          break;
        case MD_TEXT_BR:
        case MD_TEXT_SOFTBR:
          cell_append_text (b, " ", 1);
          break;
        case MD_TEXT_ENTITY:
          {
            g_autoptr(GString) decoded = g_string_new (NULL);

            tally_html_entity_append (decoded, text, size);
            cell_append_text (b, decoded->str, decoded->len);
          }
          break;
        default:
          cell_append_text (b, text, size);
          break;
        }
      return 0;
    }

  if (b->in_table)
    return 0;

  ensure_line (b);

  switch (type)
    {
    case MD_TEXT_NULLCHAR:
      doc_append (b->doc, REPLACEMENT, 3);
      break;
    case MD_TEXT_BR:
      doc_append (b->doc, LINE_SEPARATOR, 3);
      break;
    case MD_TEXT_SOFTBR:
      doc_append (b->doc, " ", 1);
      break;
    case MD_TEXT_ENTITY:
      {
        g_autoptr(GString) decoded = g_string_new (NULL);

        tally_html_entity_append (decoded, text, size);
        doc_append (b->doc, decoded->str, decoded->len);
      }
      break;
    default:
      doc_append (b->doc, text, size);
      break;
    }

  return 0;
}

/**
 * tally_markdown_doc_parse:
 * @markdown: (array length=length): markdown text (UTF-8; invalid bytes are
 *   shown as U+FFFD)
 * @length: length of @markdown in bytes
 * @position: where the doc will be inserted: after existing text, its first
 *   block gets a gap above it, and a separating "\n" unless one is there
 *
 * Renders @markdown with md4c in the GitHub dialect (tables, strikethrough,
 * autolinks, task lists) with raw HTML disabled, following CommonMark 0.29
 * and GFM (https://spec.commonmark.org, https://github.github.com/gfm/).
 *
 * Returns: (transfer full): the rendered doc; never %NULL (a parser failure,
 *   which md4c only reports when out of memory, gives the text rendered so
 *   far).
 */
TallyMarkdownDoc *
tally_markdown_doc_parse (const char *markdown,
                          gsize       length,
                          TallyMarkdownPosition position)
{
  MD_PARSER parser = { 0 };
  TallyMarkdownDoc *doc;
  Builder b = { 0 };
  int ret;

  g_return_val_if_fail (markdown != NULL || length == 0, NULL);

  doc = g_new0 (TallyMarkdownDoc, 1);
  doc->text = g_string_sized_new (length + 16);
  doc->spans = g_array_new (FALSE, FALSE, sizeof (Span));
  doc->anchors = g_ptr_array_new_with_free_func (_tally_markdown_anchor_data_release);
  doc->names = g_string_chunk_new (256);

  b.doc = doc;
  b.position = position;
  b.lists = g_array_new (FALSE, FALSE, sizeof (ListFrame));
  b.inline_stack = g_array_new (FALSE, FALSE, sizeof (OpenSpan));
  b.line_spans = g_array_new (FALSE, FALSE, sizeof (OpenSpan));
  b.code = g_string_new (NULL);
  b.aligns = g_array_new (FALSE, FALSE, sizeof (TallyMarkdownAlign));
  b.rows = g_ptr_array_new_with_free_func ((GDestroyNotify)g_ptr_array_unref);
  b.cell_plain = g_string_new (NULL);
  b.cell_markup = g_string_new (NULL);
  b.cell_stack = g_array_new (FALSE, FALSE, sizeof (MD_SPANTYPE));

  parser.abi_version = 0;
  parser.flags = MD_DIALECT_GITHUB | MD_FLAG_NOHTML;
  parser.enter_block = enter_block_cb;
  parser.leave_block = leave_block_cb;
  parser.enter_span = enter_span_cb;
  parser.leave_span = leave_span_cb;
  parser.text = text_cb;

  b.source = markdown;
  b.source_len = length;

  if (length > 0)
    {
      ret = md_parse (markdown, (MD_SIZE)length, &parser, &b);
      if (ret != 0)
        g_warning ("md4c failed to parse %" G_GSIZE_FORMAT " bytes of markdown (%d)", length, ret);
    }

  end_line (&b);

  g_array_unref (b.lists);
  g_array_unref (b.inline_stack);
  g_array_unref (b.line_spans);
  g_string_free (b.code, TRUE);
  g_free (b.code_language);
  g_array_unref (b.aligns);
  g_ptr_array_unref (b.rows);
  g_string_free (b.cell_plain, TRUE);
  g_string_free (b.cell_markup, TRUE);
  g_array_unref (b.cell_stack);

  return doc;
}

/**
 * tally_markdown_doc_free:
 * @doc: (transfer full) (nullable): a doc
 *
 * Frees @doc.
 */
void
tally_markdown_doc_free (TallyMarkdownDoc *doc)
{
  if (doc == NULL)
    return;

  g_string_free (doc->text, TRUE);
  g_array_unref (doc->spans);
  g_ptr_array_unref (doc->anchors);
  g_string_chunk_free (doc->names);
  g_free (doc);
}

/**
 * tally_markdown_doc_get_n_blocks:
 * @doc: a doc
 *
 * Returns: the number of top-level markdown blocks md4c reported (each
 *   list, quote, paragraph, heading, code block, table or rule counts once)
 */
guint
tally_markdown_doc_get_n_blocks (TallyMarkdownDoc *doc)
{
  g_return_val_if_fail (doc != NULL, 0);

  return doc->n_blocks;
}

/**
 * tally_markdown_doc_get_n_chars:
 * @doc: a doc
 *
 * Returns: the number of characters the doc inserts into a buffer (each
 *   anchor counts as one)
 */
guint
tally_markdown_doc_get_n_chars (TallyMarkdownDoc *doc)
{
  g_return_val_if_fail (doc != NULL, 0);

  return doc->n_chars;
}
