/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "tally-card-diff.h"

#include "tally-line-diff.h"

/*
 * Line diffs for people, in the cards: the approval card shows what a
 * `Write` or `Edit` would change in a file, the plan card what changed
 * since the previous version. No unified-diff headers: each line carries
 * its number (when asked), a sign (+ added, − removed) and a tinted
 * background; unchanged stretches left out read "⋯ N unchanged lines".
 *
 * The comparison is the core's line diff (tally_line_diff_strv(), the one
 * the Write and Edit tools print their unified diffs with).
 */

typedef struct {
  char        op;     /* ' ', '-' or '+' */
  const char *line;
  guint       number; /* 1-based, in the text the line comes from */
} DiffLine;

static char **
split_lines (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text != NULL ? text : "", "\n", -1);
  guint n = g_strv_length (lines);

  /* A final newline ends the last line; it does not start an empty one. */
  if (n > 0 && lines[n - 1][0] == '\0')
    {
      g_free (lines[n - 1]);
      lines[n - 1] = NULL;
    }
  return g_steal_pointer (&lines);
}

/* A list item without its number or bullet: "  2. Draw" → "  Draw". */
static char *
item_text (const char *line)
{
  const char *p = line;
  const char *start;

  while (*p == ' ' || *p == '\t')
    p++;
  start = p;
  while (g_ascii_isdigit (*p))
    p++;
  if (p > start && (*p == '.' || *p == ')') && (p[1] == ' ' || p[1] == '\0'))
    return g_strconcat ("\x01", p + 1, NULL);
  if ((*p == '-' || *p == '*' || *p == '+') && p[1] == ' ')
    return g_strconcat ("\x01", p + 1, NULL);
  return g_strdup (line);
}

static char **
item_keys (char **lines)
{
  guint n = g_strv_length (lines);
  char **keys = g_new0 (char *, n + 1);

  for (guint i = 0; i < n; i++)
    keys[i] = item_text (lines[i]);
  return keys;
}

static GtkTextTag *
ensure_tag (GtkTextBuffer *buffer,
            const char    *name,
            const char    *first_property,
            ...)
{
  GtkTextTagTable *table = gtk_text_buffer_get_tag_table (buffer);
  GtkTextTag *tag = gtk_text_tag_table_lookup (table, name);
  va_list args;

  if (tag != NULL)
    return tag;

  tag = gtk_text_tag_new (name);
  va_start (args, first_property);
  g_object_set_valist (G_OBJECT (tag), first_property, args);
  va_end (args);
  gtk_text_tag_table_add (table, tag);
  g_object_unref (tag);
  return tag;
}

static void
append (GtkTextBuffer *buffer,
        const char    *text,
        GtkTextTag    *tag,
        GtkTextTag    *line_tag)
{
  GtkTextIter end;

  gtk_text_buffer_get_end_iter (buffer, &end);
  gtk_text_buffer_insert_with_tags (buffer, &end, text, -1, tag, line_tag, NULL);
}

/**
 * tally_card_diff_dup_counts:
 * @added: the lines added, as tally_card_diff_show() counts them
 * @removed: the lines removed
 *
 * Says how much a diff changed, as the cards show it under the diff:
 * "2 lines added, 1 removed", translated, with the plurals of the
 * current language.
 *
 * Returns: (transfer full): the text
 */
char *
tally_card_diff_dup_counts (guint added,
                            guint removed)
{
  g_autofree char *added_text = g_strdup_printf (ngettext ("%u line added", "%u lines added", added), added);
  g_autofree char *removed_text = g_strdup_printf (ngettext ("%u removed", "%u removed", removed), removed);

  /* TRANSLATORS: "2 lines added, 1 removed" */
  return g_strdup_printf (_("%s, %s"), added_text, removed_text);
}

/**
 * tally_card_diff_show:
 * @view: a text view (read-only, monospace: the caller styles it)
 * @old_text: (nullable): the earlier text
 * @new_text: (nullable): the later text
 * @flags: how to compare and what to show
 * @context: how many unchanged lines to keep around each change
 *   (%G_MAXUINT for all of them)
 * @max_lines: how many lines to show at most (0 for no limit); a last line
 *   says how many more there are
 * @added: (out) (optional): the number of lines only in @new_text
 * @removed: (out) (optional): the number of lines only in @old_text
 *
 * Replaces the text of @view with a line diff of the two texts for people
 * to read: each line is a sign column (`+` added, `−` removed, a space
 * otherwise) and the line, optionally after its number; added lines carry
 * the text tag "added" (a green tint), removed ones "removed" (a red tint),
 * the numbers "gutter" and the lines standing for unchanged lines left out
 * ("⋯ 3 unchanged lines") "skipped" (dimmed). The tints are translucent, so
 * they read on light and dark backgrounds alike. When the texts have the
 * same lines the view shows them all, untinted.
 */
void
tally_card_diff_show (GtkTextView        *view,
                      const char         *old_text,
                      const char         *new_text,
                      TallyCardDiffFlags  flags,
                      guint               context,
                      guint               max_lines,
                      guint              *added,
                      guint              *removed)
{
  g_auto(GStrv) a = split_lines (old_text);
  g_auto(GStrv) b = split_lines (new_text);
  g_autoptr(GArray) lines = g_array_new (FALSE, FALSE, sizeof (DiffLine));
  g_autoptr(GByteArray) ops = NULL;
  g_autofree gboolean *keep = NULL;
  GtkTextBuffer *buffer;
  GtkTextTag *added_tag, *removed_tag, *gutter_tag, *skipped_tag;
  guint i_old = 0, i_new = 0;
  guint n_added = 0, n_removed = 0;
  guint shown = 0;
  guint skipped = 0;
  int width = 1;

  g_return_if_fail (GTK_IS_TEXT_VIEW (view));

  if (flags & TALLY_CARD_DIFF_IGNORE_NUMBERING)
    {
      g_auto(GStrv) ka = item_keys (a);
      g_auto(GStrv) kb = item_keys (b);

      ops = tally_line_diff_strv ((const char * const *) ka, (const char * const *) kb);
    }
  else
    ops = tally_line_diff_strv ((const char * const *) a, (const char * const *) b);

  for (guint i = 0; i < ops->len; i++)
    switch ((TallyDiffOp) ops->data[i])
      {
      case TALLY_DIFF_EQUAL:
        /* Shown as it is now. */
        g_array_append_val (lines, ((DiffLine) { ' ', b[i_new], i_new + 1 }));
        i_old++, i_new++;
        break;
      case TALLY_DIFF_DELETE:
        g_array_append_val (lines, ((DiffLine) { '-', a[i_old], i_old + 1 }));
        i_old++, n_removed++;
        break;
      case TALLY_DIFF_INSERT:
        g_array_append_val (lines, ((DiffLine) { '+', b[i_new], i_new + 1 }));
        i_new++, n_added++;
        break;
      default:
        g_assert_not_reached ();
      }

  /* Keep the changed lines and @context lines on either side of each;
   * with no change, keep everything. */
  keep = g_new0 (gboolean, lines->len + 1);
  for (guint i = 0; i < lines->len; i++)
    {
      if (n_added + n_removed == 0 || context == G_MAXUINT)
        {
          keep[i] = TRUE;
          continue;
        }
      if (g_array_index (lines, DiffLine, i).op == ' ')
        continue;
      for (guint k = i >= context ? i - context : 0; k <= i + context && k < lines->len; k++)
        keep[k] = TRUE;
    }
  /* A "⋯" that would stand for one line shows the line instead. */
  for (guint i = 0; i < lines->len; i++)
    if (!keep[i] && (i == 0 || keep[i - 1]) && (i + 1 >= lines->len || keep[i + 1]))
      keep[i] = TRUE;

  for (guint n = MAX (i_old, i_new); n >= 10; n /= 10)
    width++;

  buffer = gtk_text_view_get_buffer (view);
  added_tag = ensure_tag (buffer, "added",
                          "paragraph-background-rgba", &(GdkRGBA) { 0.15f, 0.64f, 0.41f, 0.22f },
                          NULL);
  removed_tag = ensure_tag (buffer, "removed",
                            "paragraph-background-rgba", &(GdkRGBA) { 0.88f, 0.11f, 0.14f, 0.20f },
                            NULL);
  gutter_tag = ensure_tag (buffer, "gutter",
                           "foreground-rgba", &(GdkRGBA) { 0.5f, 0.5f, 0.5f, 1.0f },
                           NULL);
  skipped_tag = ensure_tag (buffer, "skipped",
                            "foreground-rgba", &(GdkRGBA) { 0.5f, 0.5f, 0.5f, 1.0f },
                            "style", PANGO_STYLE_ITALIC,
                            NULL);
  gtk_text_buffer_set_text (buffer, "", 0);

  for (guint i = 0; i <= lines->len; i++)
    {
      const DiffLine *line;
      GtkTextTag *tag;
      const char *sign;

      if (i < lines->len && !keep[i])
        {
          skipped++;
          continue;
        }
      if (skipped > 0)
        {
          g_autofree char *text = NULL;

          if (shown > 0)
            append (buffer, "\n", NULL, NULL);
          text = g_strdup_printf (ngettext ("⋯ %u unchanged line", "⋯ %u unchanged lines", skipped), skipped);
          append (buffer, text, skipped_tag, NULL);
          shown++;
          skipped = 0;
        }
      if (i == lines->len)
        break;

      if (max_lines > 0 && shown >= max_lines)
        {
          guint more = 0;
          g_autofree char *text = NULL;

          for (guint k = i; k < lines->len; k++)
            more += keep[k];
          text = g_strdup_printf (ngettext ("⋯ %u more line", "⋯ %u more lines", more), more);
          append (buffer, "\n", NULL, NULL);
          append (buffer, text, skipped_tag, NULL);
          break;
        }

      line = &g_array_index (lines, DiffLine, i);
      tag = line->op == '+' ? added_tag : line->op == '-' ? removed_tag : NULL;
      sign = line->op == '+' ? "+ " : line->op == '-' ? "− " : "  ";

      if (shown > 0)
        append (buffer, "\n", NULL, NULL);
      if (flags & TALLY_CARD_DIFF_LINE_NUMBERS)
        {
          g_autofree char *number = g_strdup_printf ("%*u ", width, line->number);
          append (buffer, number, gutter_tag, tag);
        }
      append (buffer, sign, gutter_tag, tag);
      append (buffer, line->line, tag, NULL);
      shown++;
    }

  if (added != NULL)
    *added = n_added;
  if (removed != NULL)
    *removed = n_removed;
}
