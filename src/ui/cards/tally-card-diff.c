/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <string.h>

#include "tally-card-diff.h"

#include "tally-line-diff.h"

/*
 * Line diffs for the cards: the plan card compares two versions of a plan
 * (tally_card_diff_lines()), and both the plan card and the approval card
 * show a diff with coloured lines (tally_card_diff_show()).
 *
 * The comparison is the core's line diff (tally_line_diff_strv(), the
 * one the Write and Edit tools print their unified diffs with).
 */

typedef struct {
  char        op;     /* ' ', '-' or '+' */
  const char *line;
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

/**
 * tally_card_diff_lines:
 * @old_text: (nullable): the earlier text
 * @new_text: (nullable): the later text
 * @context: how many unchanged lines to keep around each change
 *
 * Compares two texts line by line for people to read. Each line of the
 * result starts with one character: a space for an unchanged line, `-` for
 * a line only in @old_text, `+` for a line only in @new_text; a line `⋯`
 * stands for unchanged lines left out. Lines end with `\n`.
 *
 * Returns: (transfer full): the diff; empty when the texts have the same
 *   lines
 */
char *
tally_card_diff_lines (const char *old_text,
                       const char *new_text,
                       guint       context)
{
  g_auto(GStrv) a = split_lines (old_text);
  g_auto(GStrv) b = split_lines (new_text);
  g_autoptr(GArray) lines = g_array_new (FALSE, FALSE, sizeof (DiffLine));
  g_autofree gboolean *keep = NULL;
  GString *out = g_string_new (NULL);
  g_autoptr(GByteArray) ops = tally_line_diff_strv ((const char * const *) a, (const char * const *) b);
  guint i_old = 0, i_new = 0;
  gboolean changed = FALSE;
  gboolean skipped = FALSE;

  for (guint i = 0; i < ops->len; i++)
    switch ((TallyDiffOp) ops->data[i])
      {
      case TALLY_DIFF_EQUAL:
        g_array_append_val (lines, ((DiffLine) { ' ', a[i_old] }));
        i_old++, i_new++;
        break;
      case TALLY_DIFF_DELETE:
        g_array_append_val (lines, ((DiffLine) { '-', a[i_old++] }));
        break;
      case TALLY_DIFF_INSERT:
        g_array_append_val (lines, ((DiffLine) { '+', b[i_new++] }));
        break;
      default:
        g_assert_not_reached ();
      }

  /* Keep the changed lines and @context lines on either side of each. */
  keep = g_new0 (gboolean, lines->len + 1);
  for (guint i = 0; i < lines->len; i++)
    {
      if (g_array_index (lines, DiffLine, i).op == ' ')
        continue;
      changed = TRUE;
      for (guint k = i >= context ? i - context : 0; k <= i + context && k < lines->len; k++)
        keep[k] = TRUE;
    }

  if (!changed)
    return g_string_free (out, FALSE);

  /* A "⋯" that would stand for one line shows the line instead. */
  for (guint i = 0; i < lines->len; i++)
    if (!keep[i] && (i == 0 || keep[i - 1]) && (i + 1 >= lines->len || keep[i + 1]))
      keep[i] = TRUE;

  for (guint i = 0; i < lines->len; i++)
    {
      const DiffLine *line = &g_array_index (lines, DiffLine, i);

      if (!keep[i])
        {
          if (!skipped)
            g_string_append (out, "⋯\n");
          skipped = TRUE;
          continue;
        }
      skipped = FALSE;
      g_string_append_c (out, line->op);
      g_string_append (out, line->line);
      g_string_append_c (out, '\n');
    }

  return g_string_free (out, FALSE);
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

/**
 * tally_card_diff_show:
 * @view: a text view (read-only, monospace: the caller styles it)
 * @diff: (nullable): a unified diff (as from tally_tool_write_dup_diff())
 *   or the result of tally_card_diff_lines()
 *
 * Replaces the text of @view with @diff and colours its lines: added lines
 * (`+`) on a green tint, removed lines (`-`) on a red tint, file headers
 * (`---`, `+++`) in bold, and hunk headers (`@@`, `⋯`) dimmed. The tints
 * are translucent, so they read on light and dark backgrounds alike. The
 * trailing newline is dropped so the view ends with the last line.
 */
void
tally_card_diff_show (GtkTextView *view,
                      const char  *diff)
{
  GtkTextBuffer *buffer;
  GtkTextTag *added, *removed, *header, *hunk;
  GtkTextIter end;
  g_auto(GStrv) lines = NULL;
  guint n;

  g_return_if_fail (GTK_IS_TEXT_VIEW (view));

  buffer = gtk_text_view_get_buffer (view);
  added = ensure_tag (buffer, "added",
                      "paragraph-background-rgba", &(GdkRGBA) { 0.15f, 0.64f, 0.41f, 0.20f },
                      NULL);
  removed = ensure_tag (buffer, "removed",
                        "paragraph-background-rgba", &(GdkRGBA) { 0.88f, 0.11f, 0.14f, 0.18f },
                        NULL);
  header = ensure_tag (buffer, "header", "weight", 700, NULL);
  hunk = ensure_tag (buffer, "hunk",
                     "foreground-rgba", &(GdkRGBA) { 0.5f, 0.5f, 0.5f, 1.0f },
                     NULL);

  gtk_text_buffer_set_text (buffer, "", 0);
  lines = split_lines (diff);
  n = g_strv_length (lines);
  for (guint i = 0; i < n; i++)
    {
      const char *line = lines[i];
      GtkTextTag *tag = NULL;

      if (g_str_has_prefix (line, "+++") || g_str_has_prefix (line, "---"))
        tag = header;
      else if (line[0] == '+')
        tag = added;
      else if (line[0] == '-')
        tag = removed;
      else if (g_str_has_prefix (line, "@@") || g_str_has_prefix (line, "⋯"))
        tag = hunk;

      gtk_text_buffer_get_end_iter (buffer, &end);
      if (i + 1 < n)
        {
          g_autofree char *with_newline = g_strconcat (line, "\n", NULL);
          gtk_text_buffer_insert_with_tags (buffer, &end, with_newline, -1, tag, NULL);
        }
      else
        gtk_text_buffer_insert_with_tags (buffer, &end, line, -1, tag, NULL);
    }
}
