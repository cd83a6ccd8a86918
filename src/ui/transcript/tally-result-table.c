/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-result-table.h"

/**
 * TallyResultTable:
 *
 * A `query_database` result as a real table. The tool answers with text
 * (see its description in src/core/tools/tally-tool-query-database.c):
 *
 *   name | total
 *   Espresso | 1234.5
 *   Latte | 987
 *   … 3 more rows not shown (cap 200 rows)      (only when rows were cut)
 *   (2 of 5 rows shown)                          or "(2 rows)"
 *
 * Values are separated by " | " and are not escaped, so a value holding
 * " | " itself makes its line split into too many cells. Such a result is
 * ambiguous and is refused (set_result() returns %FALSE) rather than shown
 * with values in the wrong columns; the caller then shows the plain text.
 */

#define SEPARATOR " | "
#define NOTE_PREFIX "… "
#define MAX_CELL_WIDTH_CHARS 40

struct _TallyResultTable
{
  GtkWidget          parent_instance;

  GtkScrolledWindow *scroller;
  GtkGrid           *grid;
  GtkLabel          *footer;

  GStrv              columns;
  GPtrArray         *rows;      /* GStrv, each with as many cells as columns */
};

G_DEFINE_FINAL_TYPE (TallyResultTable, tally_result_table, GTK_TYPE_WIDGET)

static void
tally_result_table_dispose (GObject *object)
{
  TallyResultTable *self = (TallyResultTable *)object;

  g_clear_pointer ((GtkWidget **) &self->scroller, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->footer, gtk_widget_unparent);
  self->grid = NULL;

  G_OBJECT_CLASS (tally_result_table_parent_class)->dispose (object);
}

static void
tally_result_table_finalize (GObject *object)
{
  TallyResultTable *self = (TallyResultTable *)object;

  g_clear_pointer (&self->columns, g_strfreev);
  g_clear_pointer (&self->rows, g_ptr_array_unref);

  G_OBJECT_CLASS (tally_result_table_parent_class)->finalize (object);
}

static void
tally_result_table_class_init (TallyResultTableClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_result_table_dispose;
  object_class->finalize = tally_result_table_finalize;


  gtk_widget_class_set_css_name (widget_class, "tallyresulttable");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_TABLE);
}

static void
tally_result_table_init (TallyResultTable *self)
{
  GtkLayoutManager *layout;

  layout = gtk_box_layout_new (GTK_ORIENTATION_VERTICAL);
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 4);
  gtk_widget_set_layout_manager (GTK_WIDGET (self), layout);

  /* Wide tables scroll sideways; never up and down, which would trap the
   * wheel inside the transcript. */
  self->scroller = GTK_SCROLLED_WINDOW (gtk_scrolled_window_new ());
  gtk_scrolled_window_set_policy (self->scroller, GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
  gtk_scrolled_window_set_propagate_natural_width (self->scroller, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->scroller), "frame");
  gtk_widget_set_halign (GTK_WIDGET (self->scroller), GTK_ALIGN_START);
  gtk_widget_set_parent (GTK_WIDGET (self->scroller), GTK_WIDGET (self));

  self->grid = GTK_GRID (gtk_grid_new ());
  gtk_scrolled_window_set_child (self->scroller, GTK_WIDGET (self->grid));

  self->footer = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->footer, 0.0);
  gtk_label_set_wrap (self->footer, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->footer), "caption");
  gtk_widget_add_css_class (GTK_WIDGET (self->footer), "dim-label");
  gtk_widget_set_parent (GTK_WIDGET (self->footer), GTK_WIDGET (self));

  self->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
}

/**
 * tally_result_table_new:
 *
 * Creates an empty table. Give it a result with
 * tally_result_table_set_result().
 *
 * Returns: (transfer floating): a new #TallyResultTable
 */
GtkWidget *
tally_result_table_new (void)
{
  return g_object_new (TALLY_TYPE_RESULT_TABLE, NULL);
}

static gboolean
looks_numeric (const char *value)
{
  char *end = NULL;

  if (value[0] == '\0')
    return FALSE;
  g_ascii_strtod (value, &end);
  return end != NULL && *end == '\0';
}

static void
clear_grid (TallyResultTable *self)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->grid))) != NULL)
    gtk_grid_remove (self->grid, child);
}

static void
add_cell (TallyResultTable *self,
          const char       *value,
          guint             row,
          guint             column,
          gboolean          title)
{
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL,
                                   "label", value,
                                   "accessible-role", title ? GTK_ACCESSIBLE_ROLE_COLUMN_HEADER
                                                            : GTK_ACCESSIBLE_ROLE_CELL,
                                   NULL);

  /* One line per cell: wrapped cells would make the table's height
   * depend on widths the sideways scrolling leaves open. Long values
   * (the tool cuts them at 200 characters) are ellipsized, whole in
   * the tooltip. */
  gtk_label_set_single_line_mode (GTK_LABEL (label), TRUE);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_width_chars (GTK_LABEL (label), MIN ((int) g_utf8_strlen (value, -1), 6));
  gtk_label_set_max_width_chars (GTK_LABEL (label), MAX_CELL_WIDTH_CHARS);
  if (g_utf8_strlen (value, -1) > MAX_CELL_WIDTH_CHARS)
    gtk_widget_set_tooltip_text (label, value);
  gtk_label_set_xalign (GTK_LABEL (label), !title && looks_numeric (value) ? 1.0 : 0.0);
  gtk_widget_add_css_class (label, title ? "column-title" : "cell");
  if (!title && row % 2 == 0)
    gtk_widget_add_css_class (label, "even");
  if (!title && g_str_equal (value, "NULL"))
    gtk_widget_add_css_class (label, "null");
  if (column == 0)
    gtk_widget_add_css_class (label, "first");
  gtk_grid_attach (self->grid, label, column, row, 1, 1);
}

static void
clear (TallyResultTable *self)
{
  clear_grid (self);
  g_clear_pointer (&self->columns, g_strfreev);
  g_ptr_array_set_size (self->rows, 0);
  gtk_label_set_text (self->footer, "");
}

/* Parses @text into columns, rows and the two closing lines. */
static gboolean
parse (TallyResultTable  *self,
       const char        *text,
       char             **note,
       char             **count)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  guint n_lines = g_strv_length (lines);
  guint n_columns;
  guint last;
  gsize len;

  while (n_lines > 0 && lines[n_lines - 1][0] == '\0')
    n_lines--;
  if (n_lines < 2)
    return FALSE;

  /* "(N rows)", "(1 row)" or "(N of M rows shown)" closes every table. */
  last = n_lines - 1;
  len = strlen (lines[last]);
  if (len < 3 || lines[last][0] != '(' || lines[last][len - 1] != ')' ||
      strstr (lines[last], "row") == NULL)
    return FALSE;
  *count = g_strndup (lines[last] + 1, len - 2);

  if (last >= 2 && g_str_has_prefix (lines[last - 1], NOTE_PREFIX))
    *note = g_strdup (lines[--last]);

  self->columns = g_strsplit (lines[0], SEPARATOR, -1);
  n_columns = g_strv_length (self->columns);
  if (n_columns == 0)
    return FALSE;

  for (guint i = 1; i < last; i++)
    {
      GStrv cells = g_strsplit (lines[i], SEPARATOR, -1);

      if (g_strv_length (cells) != n_columns)
        {
          g_strfreev (cells);
          return FALSE;
        }
      g_ptr_array_add (self->rows, cells);
    }

  return TRUE;
}

/**
 * tally_result_table_set_result:
 * @self: a #TallyResultTable
 * @text: (nullable): a `query_database` result: a header line of column
 *   names, one line per row with values separated by " | ", an optional
 *   note line starting with "… " and a closing line "(N rows)"
 *
 * Shows @text as a table with its row count (and note) underneath. At
 * most %TALLY_RESULT_TABLE_MAX_SHOWN_ROWS rows are laid out.
 *
 * Returns: %TRUE if @text was a table; %FALSE (and the table is left
 *   empty) when it is not one, or when a line has a different number of
 *   values than the header (a value containing " | " makes the result
 *   ambiguous), so the caller can show the text as it is
 */
gboolean
tally_result_table_set_result (TallyResultTable *self,
                               const char       *text)
{
  g_autofree char *note = NULL;
  g_autofree char *count = NULL;
  g_autoptr(GString) footer = NULL;
  guint n_shown;

  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), FALSE);

  clear (self);
  if (text == NULL || !parse (self, text, &note, &count))
    {
      clear (self);
      return FALSE;
    }

  for (guint c = 0; self->columns[c] != NULL; c++)
    add_cell (self, self->columns[c], 0, c, TRUE);

  n_shown = MIN (self->rows->len, TALLY_RESULT_TABLE_MAX_SHOWN_ROWS);
  for (guint r = 0; r < n_shown; r++)
    {
      GStrv cells = g_ptr_array_index (self->rows, r);

      for (guint c = 0; cells[c] != NULL; c++)
        add_cell (self, cells[c], r + 1, c, FALSE);
    }

  footer = g_string_new (count);
  if (n_shown < self->rows->len)
    {
      g_string_append (footer, " · ");
      g_string_append_printf (footer,
                              ngettext ("the first %u is laid out here",
                                        "the first %u are laid out here", n_shown),
                              n_shown);
    }
  if (note != NULL)
    {
      g_string_append (footer, " · ");
      g_string_append (footer, note);
    }
  gtk_label_set_text (self->footer, footer->str);

  return TRUE;
}

/**
 * tally_result_table_get_n_columns:
 * @self: a #TallyResultTable
 *
 * Returns: the number of columns, 0 when no table is shown
 */
guint
tally_result_table_get_n_columns (TallyResultTable *self)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), 0);
  return self->columns != NULL ? g_strv_length (self->columns) : 0;
}

/**
 * tally_result_table_get_n_rows:
 * @self: a #TallyResultTable
 *
 * Returns: the number of rows in the result (the header not counted),
 *   including any beyond %TALLY_RESULT_TABLE_MAX_SHOWN_ROWS
 */
guint
tally_result_table_get_n_rows (TallyResultTable *self)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), 0);
  return self->rows->len;
}

/**
 * tally_result_table_get_column_title:
 * @self: a #TallyResultTable
 * @column: a column index, from 0
 *
 * Returns: (transfer none) (nullable): the column's name, %NULL when out
 *   of range
 */
const char *
tally_result_table_get_column_title (TallyResultTable *self,
                                     guint             column)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);

  if (column >= tally_result_table_get_n_columns (self))
    return NULL;
  return self->columns[column];
}

/**
 * tally_result_table_get_cell:
 * @self: a #TallyResultTable
 * @row: a row index, from 0 (the header not counted)
 * @column: a column index, from 0
 *
 * Returns: (transfer none) (nullable): the value as the tool wrote it
 *   (`NULL` for a missing value), %NULL when out of range
 */
const char *
tally_result_table_get_cell (TallyResultTable *self,
                             guint             row,
                             guint             column)
{
  GStrv cells;

  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);

  if (row >= self->rows->len || column >= tally_result_table_get_n_columns (self))
    return NULL;
  cells = g_ptr_array_index (self->rows, row);
  return cells[column];
}

/**
 * tally_result_table_get_footer:
 * @self: a #TallyResultTable
 *
 * Returns: (transfer none): the line under the table: the row count, then
 *   the tool's note when rows were cut, e.g. "2 of 5 rows shown · … 3 more
 *   rows not shown (cap 2 rows)"
 */
const char *
tally_result_table_get_footer (TallyResultTable *self)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);
  return gtk_label_get_text (self->footer);
}

/**
 * tally_result_table_get_grid:
 * @self: a #TallyResultTable
 *
 * Returns: (transfer none): the grid of labels: column titles on row 0,
 *   values from row 1
 */
GtkGrid *
tally_result_table_get_grid (TallyResultTable *self)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);
  return self->grid;
}
