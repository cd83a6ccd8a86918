/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tally-markdown-renderer.h"
#include "tally-markdown-renderer-private.h"

/*
 * Structure descriptions of a parsed doc and of a rendered buffer: the
 * text with its tags written as open and close marks, so tests and the
 * fuzzers can compare what a doc and a buffer hold (see
 * tally_markdown_doc_dup_structure()).
 */

/* ---------------------------------------------------------------------- */
/* Structure descriptions                                                   */

typedef struct
{
  guint       offset;
  gboolean    open;
  const char *name;
} Event;

static int
tag_rank (const char *name)
{
  static const char *fixed[] = {
    "quote", NULL /* li- */, "p", "h1", "h2", "h3", "h4", "h5", "h6",
    "marker", "link", NULL /* href: */, "strong", "em", "del", "code",
  };

  if (g_str_has_prefix (name, "gap-"))
    return 0;
  if (g_str_has_prefix (name, "margin-"))
    return 1;
  if (g_str_has_prefix (name, "quote-"))
    return 2;
  if (g_str_has_prefix (name, "li-"))
    return 3;
  if (g_str_has_prefix (name, HREF_PREFIX))
    return 2 + 11;
  for (guint i = 0; i < G_N_ELEMENTS (fixed); i++)
    if (fixed[i] != NULL && strcmp (fixed[i], name) == 0)
      return 2 + (int)i;
  return 100;
}

static int
event_compare (gconstpointer a,
               gconstpointer b)
{
  const Event *ea = a;
  const Event *eb = b;
  int ra, rb, cmp;

  if (ea->offset != eb->offset)
    return ea->offset < eb->offset ? -1 : 1;
  if (ea->open != eb->open)
    return ea->open ? 1 : -1;

  ra = tag_rank (ea->name);
  rb = tag_rank (eb->name);
  cmp = ra != rb ? (ra < rb ? -1 : 1) : strcmp (ea->name, eb->name);

  /* Opening outermost first, closing innermost first. */
  return ea->open ? cmp : -cmp;
}

static gboolean
is_presentation_tag (const char *name)
{
  return g_str_has_prefix (name, "gap-") ||
         g_str_has_prefix (name, "margin-") ||
         strcmp (name, "link") == 0 ||
         strcmp (name, "quote") == 0;
}

static void
write_event (GString     *out,
             const Event *event,
             gboolean     presentation)
{
  if (!presentation && is_presentation_tag (event->name))
    return;

  if (g_str_has_prefix (event->name, HREF_PREFIX))
    {
      if (event->open)
        g_string_append_printf (out, "[a href=%s]", event->name + strlen (HREF_PREFIX));
      else
        g_string_append (out, "[/a]");
      return;
    }

  g_string_append_printf (out, event->open ? "[%s]" : "[/%s]", event->name);
}

static const char *
align_name (TallyMarkdownAlign align)
{
  switch (align)
    {
    case TALLY_MARKDOWN_ALIGN_LEFT: return "l";
    case TALLY_MARKDOWN_ALIGN_CENTER: return "c";
    case TALLY_MARKDOWN_ALIGN_RIGHT: return "r";
    case TALLY_MARKDOWN_ALIGN_DEFAULT:
    default: return "-";
    }
}

static void
write_anchor (GString          *out,
              const AnchorData *data,
              gboolean          presentation)
{
  g_autofree char *indent = NULL;

  if (data == NULL)
    {
      g_string_append (out, "[anchor]");
      return;
    }

  indent = presentation ? g_strdup_printf (" indent=%d", data->indent) : g_strdup ("");

  switch (data->kind)
    {
    case TALLY_MARKDOWN_ANCHOR_CODE:
      if (data->language != NULL && data->language[0] != '\0')
        g_string_append_printf (out, "[code-block lang=%s%s]", data->language, indent);
      else
        g_string_append_printf (out, "[code-block%s]", indent);
      g_string_append (out, data->code);
      g_string_append (out, "[/code-block]");
      break;

    case TALLY_MARKDOWN_ANCHOR_TABLE:
      {
        const TallyMarkdownTable *table = data->table;

        g_string_append_printf (out, "[table %ux%u align=", table->n_columns, table->n_rows);
        for (guint c = 0; c < table->n_columns; c++)
          g_string_append_printf (out, "%s%s", c > 0 ? "|" : "", align_name (table->aligns[c]));
        g_string_append_printf (out, "%s:", indent);
        for (guint r = 0; r < table->n_rows; r++)
          {
            g_string_append (out, r > 0 ? " / " : " ");
            for (guint c = 0; c < table->n_columns; c++)
              g_string_append_printf (out, "%s%s", c > 0 ? "|" : "",
                                      table->plain[r * table->n_columns + c]);
          }
        g_string_append (out, "]");
      }
      break;

    case TALLY_MARKDOWN_ANCHOR_RULE:
      g_string_append_printf (out, "[hr%s]", indent);
      break;

    case TALLY_MARKDOWN_ANCHOR_NONE:
    default:
      g_string_append (out, "[anchor]");
      break;
    }
}

typedef const AnchorData *(*AnchorLookup) (gpointer user_data,
                                          guint    offset);

/* Writes @text (with U+FFFC for anchors) interleaved with the sorted
 * @events; shared by the doc and the buffer descriptions so that equal
 * contents give equal strings. */
static char *
write_structure (const char   *text,
                 GArray       *events,
                 AnchorLookup  lookup,
                 gpointer      user_data,
                 gboolean      presentation)
{
  GString *out = g_string_sized_new (strlen (text) * 2 + 16);
  const char *p = text;
  guint offset = 0;
  guint e = 0;

  g_array_sort (events, event_compare);

  for (;;)
    {
      gunichar ch;
      const char *next;

      while (e < events->len && g_array_index (events, Event, e).offset == offset)
        write_event (out, &g_array_index (events, Event, e++), presentation);

      if (*p == '\0')
        break;

      ch = g_utf8_get_char (p);
      next = g_utf8_next_char (p);
      if (ch == 0xfffc)
        write_anchor (out, lookup (user_data, offset), presentation);
      else if (ch == 0x2028)
        g_string_append (out, "[br]");
      else
        g_string_append_len (out, p, next - p);
      p = next;
      offset++;
    }

  /* Events past the end cannot happen with consistent input; keep them
   * visible rather than dropping them. */
  while (e < events->len)
    write_event (out, &g_array_index (events, Event, e++), presentation);

  return g_string_free (out, FALSE);
}

static int
span_compare (gconstpointer a,
              gconstpointer b)
{
  const Span *sa = a;
  const Span *sb = b;
  int cmp = strcmp (sa->name, sb->name);

  if (cmp != 0)
    return cmp;
  if (sa->start != sb->start)
    return sa->start < sb->start ? -1 : 1;
  return 0;
}

static const AnchorData *
doc_lookup_anchor (gpointer user_data,
                   guint    offset)
{
  TallyMarkdownDoc *doc = user_data;

  for (guint i = 0; i < doc->anchors->len; i++)
    {
      AnchorData *data = g_ptr_array_index (doc->anchors, i);

      if (data->offset == offset)
        return data;
    }
  return NULL;
}

/**
 * tally_markdown_doc_dup_structure:
 * @doc: a doc
 * @presentation: whether to include the spacing and margin tags
 *
 * Describes @doc in the format of tally_markdown_buffer_dup_structure():
 * equal docs give equal strings, and inserting @doc into an empty buffer
 * gives a buffer with the same description. Spans of the same tag that
 * touch or overlap are merged, as a text buffer does.
 *
 * Returns: (transfer full): the description
 */
char *
tally_markdown_doc_dup_structure (TallyMarkdownDoc *doc,
                                  gboolean          presentation)
{
  g_autoptr(GArray) spans = NULL;
  g_autoptr(GArray) events = NULL;

  g_return_val_if_fail (doc != NULL, NULL);

  spans = g_array_copy (doc->spans);
  events = g_array_new (FALSE, FALSE, sizeof (Event));
  g_array_sort (spans, span_compare);

  for (guint i = 0; i < spans->len;)
    {
      Span merged = g_array_index (spans, Span, i);
      Event ev;

      for (i++; i < spans->len; i++)
        {
          Span *next = &g_array_index (spans, Span, i);

          if (strcmp (next->name, merged.name) != 0 || next->start > merged.end)
            break;
          merged.end = MAX (merged.end, next->end);
        }

      ev.name = merged.name;
      ev.open = TRUE;
      ev.offset = merged.start;
      g_array_append_val (events, ev);
      ev.open = FALSE;
      ev.offset = merged.end;
      g_array_append_val (events, ev);
    }

  return write_structure (doc->text->str, events, doc_lookup_anchor, doc, presentation);
}

static const AnchorData *
buffer_lookup_anchor (gpointer user_data,
                      guint    offset)
{
  GtkTextBuffer *buffer = user_data;
  GtkTextIter iter;

  gtk_text_buffer_get_iter_at_offset (buffer, &iter, (int)offset);
  return _tally_markdown_anchor_get_data (gtk_text_iter_get_child_anchor (&iter));
}

static void
add_toggles (GArray            *events,
             GStringChunk      *names,
             const GtkTextIter *iter,
             gboolean           open)
{
  GSList *tags = gtk_text_iter_get_toggled_tags (iter, open);

  for (GSList *l = tags; l != NULL; l = l->next)
    {
      Event ev;
      char *name = NULL;

      g_object_get (l->data, "name", &name, NULL);
      if (name == NULL)
        continue;

      ev.name = g_string_chunk_insert_const (names, name);
      ev.open = open;
      ev.offset = (guint)gtk_text_iter_get_offset (iter);
      g_array_append_val (events, ev);
      g_free (name);
    }
  g_slist_free (tags);
}

/**
 * tally_markdown_buffer_dup_structure:
 * @buffer: a text buffer
 * @presentation: whether to include the spacing and margin tags
 *
 * Describes @buffer deterministically for tests: its text with each named
 * tag's ranges marked as `[name]…[/name]` (link targets as
 * `[a href=URL]…[/a]`), hard line breaks (U+2028) as `[br]`, and each
 * anchored block written out —
 * `[code-block lang=sql]SELECT 1[/code-block]`,
 * `[table 3x2 align=l|c|r: a|b|c / 1|2|3]` (columns × rows including the
 * header), `[hr]`. With @presentation, the styling tags `link` and `quote`,
 * the `gap-*` and `margin-*` tags and the anchors' indents are included too.
 *
 * Returns: (transfer full): the description
 */
char *
tally_markdown_buffer_dup_structure (GtkTextBuffer *buffer,
                                     gboolean       presentation)
{
  g_autoptr(GArray) events = NULL;
  g_autofree char *text = NULL;
  GStringChunk *names;
  GtkTextIter start, end, iter;
  char *result;

  g_return_val_if_fail (GTK_IS_TEXT_BUFFER (buffer), NULL);

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  text = gtk_text_buffer_get_slice (buffer, &start, &end, TRUE);
  events = g_array_new (FALSE, FALSE, sizeof (Event));

  names = g_string_chunk_new (256);

  iter = start;
  add_toggles (events, names, &iter, TRUE);
  for (;;)
    {
      if (!gtk_text_iter_forward_to_tag_toggle (&iter, NULL))
        {
          /* Now at the end; tags that reach it close there. */
          add_toggles (events, names, &iter, FALSE);
          break;
        }
      add_toggles (events, names, &iter, FALSE);
      add_toggles (events, names, &iter, TRUE);
      if (gtk_text_iter_is_end (&iter))
        break;
    }

  result = write_structure (text, events, buffer_lookup_anchor, buffer, presentation);
  g_string_chunk_free (names);
  return result;
}
