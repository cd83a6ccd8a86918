/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tally-markdown-renderer.h"
#include "tally-markdown-renderer-private.h"

/*
 * The renderer's second step (see tally-markdown-renderer.c): a parsed
 * TallyMarkdownDoc goes into a GtkTextBuffer — the tags, their colours,
 * the text with one child anchor per block — and what the views read back
 * from such a buffer (links, quote depth, the anchors' data).
 */

/* ---------------------------------------------------------------------- */
/* Tags                                                                     */

typedef struct
{
  const char *name;
  const char *first_property;
  int         value;
  double      scale;
} FixedTag;

static GtkTextTag *
create_tag (GtkTextTagTable *table,
            const char      *name)
{
  GtkTextTag *tag = gtk_text_tag_new (name);

  gtk_text_tag_table_add (table, tag);
  g_object_unref (tag);
  return tag;
}

/**
 * tally_markdown_buffer_ensure_tags:
 * @buffer: a text buffer
 *
 * Creates the renderer's fixed tags in @buffer's tag table, in their
 * priority order, unless they exist. Safe to call repeatedly.
 */
void
tally_markdown_buffer_ensure_tags (GtkTextBuffer *buffer)
{
  static const struct { const char *name; int above; } gaps[] = {
    { "gap-tight", 3 }, { "gap-loose", 6 }, { "gap-block", 10 },
    { "gap-h", 16 }, { "gap-h1", 20 },
  };
  static const struct { const char *name; int weight; double scale; } headings[] = {
    { "h1", 800, 1.6 }, { "h2", 700, 1.35 }, { "h3", 700, 1.17 },
    { "h4", 700, 1.05 }, { "h5", 700, 1.0 }, { "h6", 700, 0.92 },
  };
  GtkTextTagTable *table;
  GtkTextTag *tag;

  g_return_if_fail (GTK_IS_TEXT_BUFFER (buffer));

  table = gtk_text_buffer_get_tag_table (buffer);
  if (gtk_text_tag_table_lookup (table, "link") != NULL)
    return;

  for (guint i = 0; i < G_N_ELEMENTS (gaps); i++)
    {
      tag = create_tag (table, gaps[i].name);
      g_object_set (tag, "pixels-above-lines", gaps[i].above, NULL);
    }

  create_tag (table, "p");

  for (guint i = 0; i < G_N_ELEMENTS (headings); i++)
    {
      tag = create_tag (table, headings[i].name);
      g_object_set (tag,
                    "weight", headings[i].weight,
                    "scale", headings[i].scale,
                    "pixels-below-lines", 2,
                    NULL);
    }

  create_tag (table, "quote");
  create_tag (table, "marker");

  tag = create_tag (table, "em");
  g_object_set (tag, "style", PANGO_STYLE_ITALIC, NULL);

  tag = create_tag (table, "strong");
  g_object_set (tag, "weight", PANGO_WEIGHT_BOLD, NULL);

  /* Strikethrough and the link underline are drawn by the text view (see
   * TallyMarkdownTextView), not by Pango. */
  create_tag (table, "del");

  tag = create_tag (table, "code");
  g_object_set (tag, "family", "monospace", "fallback", TRUE, NULL);

  create_tag (table, "link");
}

/* Creates a tag named by the renderer on demand, at the lowest priority:
 * these only carry margins or data, never anything the fixed tags set. */
static GtkTextTag *
ensure_named_tag (GtkTextBuffer *buffer,
                  const char    *name)
{
  GtkTextTagTable *table = gtk_text_buffer_get_tag_table (buffer);
  GtkTextTag *tag = gtk_text_tag_table_lookup (table, name);
  guint quote = 0, depth = 0, bullet = 0;

  if (tag != NULL)
    return tag;

  tag = create_tag (table, name);

  if (sscanf (name, "margin-%u-%u-%u", &quote, &depth, &bullet) == 3)
    {
      int content = (int)(quote * TALLY_MARKDOWN_QUOTE_STEP + depth * LIST_STEP);

      g_object_set_data (G_OBJECT (tag), "tally-markdown-quote-depth", GUINT_TO_POINTER (quote));
      if (bullet)
        {
          PangoTabArray *tabs = pango_tab_array_new_with_positions (1, TRUE, PANGO_TAB_LEFT, BULLET_HANG);

          g_object_set (tag,
                        "left-margin", MAX (content - BULLET_HANG, 0),
                        "indent", -BULLET_HANG,
                        "tabs", tabs,
                        NULL);
          pango_tab_array_free (tabs);
        }
      else
        g_object_set (tag, "left-margin", content, NULL);
    }
  else if (g_str_has_prefix (name, HREF_PREFIX))
    g_object_set_data_full (G_OBJECT (tag), "tally-markdown-url",
                            g_strdup (name + strlen (HREF_PREFIX)), g_free);

  gtk_text_tag_set_priority (tag, 0);
  return tag;
}

static GdkRGBA
with_alpha (const GdkRGBA *color,
            float          alpha)
{
  GdkRGBA out = *color;

  out.alpha = color->alpha * alpha;
  return out;
}

/**
 * tally_markdown_buffer_set_colors:
 * @buffer: a text buffer with the renderer's tags
 * @foreground: the text colour of the view
 * @accent: the accent colour for links (`@accent_color` in libadwaita)
 *
 * Sets the colour-dependent tag properties: links in @accent, quotes and
 * list markers in a dimmed @foreground, inline code on a faint tint of
 * @foreground (legible on light and dark backgrounds alike).
 */
void
tally_markdown_buffer_set_colors (GtkTextBuffer *buffer,
                                  const GdkRGBA *foreground,
                                  const GdkRGBA *accent)
{
  GtkTextTagTable *table;
  GdkRGBA dim, faint, tint;

  g_return_if_fail (GTK_IS_TEXT_BUFFER (buffer));
  g_return_if_fail (foreground != NULL && accent != NULL);

  tally_markdown_buffer_ensure_tags (buffer);
  table = gtk_text_buffer_get_tag_table (buffer);

  dim = with_alpha (foreground, 0.72f);
  faint = with_alpha (foreground, 0.6f);
  tint = with_alpha (foreground, 0.09f);

  g_object_set (gtk_text_tag_table_lookup (table, "link"), "foreground-rgba", accent, NULL);
  g_object_set (gtk_text_tag_table_lookup (table, "quote"), "foreground-rgba", &dim, NULL);
  g_object_set (gtk_text_tag_table_lookup (table, "marker"), "foreground-rgba", &faint, NULL);
  g_object_set (gtk_text_tag_table_lookup (table, "h6"), "foreground-rgba", &dim, NULL);
  g_object_set (gtk_text_tag_table_lookup (table, "code"), "background-rgba", &tint, NULL);
}

/**
 * tally_markdown_doc_insert:
 * @doc: a doc
 * @buffer: the buffer to append to
 * @anchors: (element-type GtkTextChildAnchor) (nullable): array that
 *   receives a reference to each child anchor created, in buffer order
 *
 * Appends @doc at the end of @buffer: its text, a #GtkTextChildAnchor
 * carrying the block's data (see tally_markdown_anchor_get_kind()) for
 * each placeholder, and its tags. The caller attaches widgets to the
 * anchors.
 */
void
tally_markdown_doc_insert (TallyMarkdownDoc *doc,
                           GtkTextBuffer    *buffer,
                           GPtrArray        *anchors)
{
  GtkTextIter iter, end;
  gsize pos = 0;
  int base;

  g_return_if_fail (doc != NULL);
  g_return_if_fail (GTK_IS_TEXT_BUFFER (buffer));

  tally_markdown_buffer_ensure_tags (buffer);

  gtk_text_buffer_get_end_iter (buffer, &iter);
  base = gtk_text_iter_get_offset (&iter);

  for (guint i = 0; i < doc->anchors->len; i++)
    {
      AnchorData *data = g_ptr_array_index (doc->anchors, i);
      GtkTextChildAnchor *anchor;

      if (data->byte_offset > pos)
        {
          gtk_text_buffer_get_end_iter (buffer, &iter);
          gtk_text_buffer_insert (buffer, &iter, doc->text->str + pos, (int)(data->byte_offset - pos));
        }
      gtk_text_buffer_get_end_iter (buffer, &iter);
      anchor = gtk_text_buffer_create_child_anchor (buffer, &iter);
      g_object_set_data_full (G_OBJECT (anchor), ANCHOR_DATA_KEY,
                              g_atomic_rc_box_acquire (data), _tally_markdown_anchor_data_release);
      if (anchors != NULL)
        g_ptr_array_add (anchors, g_object_ref (anchor));
      pos = data->byte_offset + strlen (PLACEHOLDER);
    }

  if (doc->text->len > pos)
    {
      gtk_text_buffer_get_end_iter (buffer, &iter);
      gtk_text_buffer_insert (buffer, &iter, doc->text->str + pos, (int)(doc->text->len - pos));
    }

  for (guint i = 0; i < doc->spans->len; i++)
    {
      Span *span = &g_array_index (doc->spans, Span, i);
      GtkTextTag *tag = ensure_named_tag (buffer, span->name);

      gtk_text_buffer_get_iter_at_offset (buffer, &iter, base + (int)span->start);
      gtk_text_buffer_get_iter_at_offset (buffer, &end, base + (int)span->end);
      gtk_text_buffer_apply_tag (buffer, tag, &iter, &end);
    }
}

/* Whether two anchors show the same kind of block in the same place, so
 * that a widget showing one can show the other: the same kind, offset and
 * indent, the same language for code, the same columns for a table. */
static gboolean
anchor_data_same_shape (const AnchorData *a,
                        const AnchorData *b)
{
  if (a->kind != b->kind || a->offset != b->offset ||
      a->byte_offset != b->byte_offset || a->indent != b->indent)
    return FALSE;
  if (a->kind == TALLY_MARKDOWN_ANCHOR_CODE)
    return g_strcmp0 (a->language, b->language) == 0;
  if (a->kind == TALLY_MARKDOWN_ANCHOR_TABLE)
    return a->table->n_columns == b->table->n_columns &&
           memcmp (a->table->aligns, b->table->aligns, a->table->n_columns * sizeof (TallyMarkdownAlign)) == 0;
  return TRUE;
}

/* Whether inserting @a and @b gives the same text and tags, with anchors
 * of the same shape. */
static gboolean
doc_same_shape (TallyMarkdownDoc *a,
                TallyMarkdownDoc *b)
{
  if (a->n_chars != b->n_chars || !g_string_equal (a->text, b->text) ||
      a->spans->len != b->spans->len || a->anchors->len != b->anchors->len)
    return FALSE;

  for (guint i = 0; i < a->spans->len; i++)
    {
      const Span *x = &g_array_index (a->spans, Span, i);
      const Span *y = &g_array_index (b->spans, Span, i);

      if (x->start != y->start || x->end != y->end || strcmp (x->name, y->name) != 0)
        return FALSE;
    }

  for (guint i = 0; i < a->anchors->len; i++)
    if (!anchor_data_same_shape (g_ptr_array_index (a->anchors, i), g_ptr_array_index (b->anchors, i)))
      return FALSE;

  return TRUE;
}

/**
 * tally_markdown_doc_update_in_place:
 * @doc: a doc
 * @previous: the doc inserted last with tally_markdown_doc_insert() at
 *   @start, which the buffer still holds from there to its end
 * @buffer: the buffer
 * @start: where @previous starts in @buffer
 * @anchors: (element-type GtkTextChildAnchor): array that receives a
 *   reference to each code or table anchor of @buffer whose block data
 *   was replaced, in buffer order
 *
 * Makes the end of @buffer show @doc without deleting and inserting it
 * again, when that would insert the same text and tags as @previous and
 * anchors of the same shape (a code block of the same language, a table
 * with the same columns) in the same places, as while a fence or a table
 * streams: only the anchors' block data (the code, the rows) is replaced.
 * The widgets shown at the anchors stay attached; the caller brings those
 * in @anchors up to date. The buffer is then what deleting @previous and
 * inserting @doc would give.
 *
 * Returns: %TRUE if @buffer now holds @doc; %FALSE if the shapes differ,
 *   and nothing was changed
 */
gboolean
tally_markdown_doc_update_in_place (TallyMarkdownDoc  *doc,
                                    TallyMarkdownDoc  *previous,
                                    GtkTextBuffer     *buffer,
                                    const GtkTextIter *start,
                                    GPtrArray         *anchors)
{
  g_autoptr(GPtrArray) found = NULL;
  int base;

  g_return_val_if_fail (doc != NULL, FALSE);
  g_return_val_if_fail (previous != NULL, FALSE);
  g_return_val_if_fail (GTK_IS_TEXT_BUFFER (buffer), FALSE);
  g_return_val_if_fail (start != NULL, FALSE);
  g_return_val_if_fail (anchors != NULL, FALSE);

  if (doc == previous || !doc_same_shape (doc, previous))
    return FALSE;
  base = gtk_text_iter_get_offset (start);
  if (gtk_text_buffer_get_char_count (buffer) - base != (int)doc->n_chars)
    return FALSE;

  /* Every anchor first, so that nothing changes unless all are there. */
  found = g_ptr_array_new ();
  for (guint i = 0; i < doc->anchors->len; i++)
    {
      AnchorData *data = g_ptr_array_index (doc->anchors, i);
      GtkTextChildAnchor *anchor;
      GtkTextIter iter;

      gtk_text_buffer_get_iter_at_offset (buffer, &iter, base + (int)data->offset);
      anchor = gtk_text_iter_get_child_anchor (&iter);
      if (_tally_markdown_anchor_get_data (anchor) == NULL)
        return FALSE;
      g_ptr_array_add (found, anchor);
    }

  for (guint i = 0; i < found->len; i++)
    {
      GtkTextChildAnchor *anchor = g_ptr_array_index (found, i);
      AnchorData *data = g_ptr_array_index (doc->anchors, i);

      if (data->kind != TALLY_MARKDOWN_ANCHOR_CODE && data->kind != TALLY_MARKDOWN_ANCHOR_TABLE)
        continue;
      g_object_set_data_full (G_OBJECT (anchor), ANCHOR_DATA_KEY,
                              g_atomic_rc_box_acquire (data), _tally_markdown_anchor_data_release);
      g_ptr_array_add (anchors, g_object_ref (anchor));
    }

  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* Reading a rendered buffer                                                */

/* The data the renderer set on @anchor, or NULL for another anchor. */
AnchorData *
_tally_markdown_anchor_get_data (GtkTextChildAnchor *anchor)
{
  if (anchor == NULL)
    return NULL;
  return g_object_get_data (G_OBJECT (anchor), ANCHOR_DATA_KEY);
}

/**
 * tally_markdown_iter_get_link:
 * @iter: a position in a buffer filled by the renderer
 *
 * Returns: (nullable) (transfer none): the URL of the link at @iter, owned
 *   by the buffer's tag table, or %NULL
 */
const char *
tally_markdown_iter_get_link (const GtkTextIter *iter)
{
  GSList *tags;
  const char *url = NULL;

  g_return_val_if_fail (iter != NULL, NULL);

  tags = gtk_text_iter_get_tags (iter);
  for (GSList *l = tags; l != NULL && url == NULL; l = l->next)
    url = g_object_get_data (l->data, "tally-markdown-url");
  g_slist_free (tags);

  return url;
}

/**
 * tally_markdown_iter_get_quote_depth:
 * @iter: a position in a buffer filled by the renderer
 *
 * Returns: how many block quotes the line at @iter is nested in (0 when it
 *   is not in a quote)
 */
int
tally_markdown_iter_get_quote_depth (const GtkTextIter *iter)
{
  GSList *tags;
  int depth = 0;

  g_return_val_if_fail (iter != NULL, 0);

  tags = gtk_text_iter_get_tags (iter);
  for (GSList *l = tags; l != NULL; l = l->next)
    depth = MAX (depth, GPOINTER_TO_INT (g_object_get_data (l->data, "tally-markdown-quote-depth")));
  g_slist_free (tags);

  return depth;
}

/**
 * tally_markdown_anchor_get_kind:
 * @anchor: a child anchor
 *
 * Returns: the kind of block @anchor was created for, or
 *   %TALLY_MARKDOWN_ANCHOR_NONE if the renderer did not create it
 */
TallyMarkdownAnchorKind
tally_markdown_anchor_get_kind (GtkTextChildAnchor *anchor)
{
  AnchorData *data = _tally_markdown_anchor_get_data (anchor);

  return data != NULL ? data->kind : TALLY_MARKDOWN_ANCHOR_NONE;
}

/**
 * tally_markdown_anchor_get_code:
 * @anchor: a child anchor of kind %TALLY_MARKDOWN_ANCHOR_CODE
 *
 * Returns: (nullable) (transfer none): the code, without the final newline,
 *   or %NULL for other anchors
 */
const char *
tally_markdown_anchor_get_code (GtkTextChildAnchor *anchor)
{
  AnchorData *data = _tally_markdown_anchor_get_data (anchor);

  return data != NULL ? data->code : NULL;
}

/**
 * tally_markdown_anchor_get_language:
 * @anchor: a child anchor of kind %TALLY_MARKDOWN_ANCHOR_CODE
 *
 * Returns: (nullable) (transfer none): the first word of the fence's info
 *   string (e.g. "sql"), empty when the fence has none, %NULL for other
 *   anchors
 */
const char *
tally_markdown_anchor_get_language (GtkTextChildAnchor *anchor)
{
  AnchorData *data = _tally_markdown_anchor_get_data (anchor);

  return data != NULL ? data->language : NULL;
}

/**
 * tally_markdown_anchor_get_table:
 * @anchor: a child anchor of kind %TALLY_MARKDOWN_ANCHOR_TABLE
 *
 * Returns: (nullable) (transfer none): the table, owned by @anchor, or
 *   %NULL for other anchors
 */
const TallyMarkdownTable *
tally_markdown_anchor_get_table (GtkTextChildAnchor *anchor)
{
  AnchorData *data = _tally_markdown_anchor_get_data (anchor);

  return data != NULL ? data->table : NULL;
}

/**
 * tally_markdown_anchor_get_indent:
 * @anchor: a child anchor made by the renderer
 *
 * Returns: the left margin of the anchor's line in pixels (block quote and
 *   list nesting), which the block's width must leave free
 */
int
tally_markdown_anchor_get_indent (GtkTextChildAnchor *anchor)
{
  AnchorData *data = _tally_markdown_anchor_get_data (anchor);

  return data != NULL ? data->indent : 0;
}
