/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <adwaita.h>
#include <locale.h>
#include <math.h>

#include <glib/gi18n.h>

#include "tally-format.h"
#include "tally-result-table.h"
#include "tally-scroll-forward.h"
#include "tally-sensitive-columns.h"
#include "tally-csv-dialog.h"

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
 *
 * The rows are a #GtkColumnView at its natural height (the tool caps
 * the rows it returns) inside a scrolled window that scrolls sideways
 * only: a vertical wheel over the table scrolls the conversation, as over
 * a code block (issue 14 §3), and Shift with the wheel scrolls a wide
 * table. A click on a title sorts by that column (numerically when every
 * value in it is a number). Numeric columns are right-aligned, grouped as
 * the locale groups digits and padded so their decimal points line up.
 * The actions `table.copy` (tab-separated text with a header row, for a
 * spreadsheet) and `table.save-csv` (an RFC 4180 file, see
 * src/core/util/tally-csv.h) take the table out of the window as it is
 * sorted, with the values as the tool wrote them.
 */

#define SEPARATOR " | "
#define NOTE_PREFIX "… "
#define NULL_VALUE "NULL"
#define MAX_CELL_WIDTH_CHARS 40
/* The bound of the least height an owner may ask for */
#define MAX_VISIBLE_HEIGHT 360
/* What a row adds to a line of text: its cells' padding and separator */
#define ROW_PADDING 8
/* What the theme adds around a cell's text, and a title's sort arrow. */
#define CELL_EXTRA_WIDTH 28
#define TITLE_EXTRA_WIDTH 44
#define FIGURE_SPACE "\u2007"
#define PUNCTUATION_SPACE "\u2008"

/* One result row: the values as the tool wrote them and as shown. */
#define TALLY_TYPE_RESULT_ROW (tally_result_row_get_type ())
G_DECLARE_FINAL_TYPE (TallyResultRow, tally_result_row, TALLY, RESULT_ROW, GObject)

struct _TallyResultRow
{
  GObject parent_instance;

  GStrv   cells;
  GStrv   shown;
};

G_DEFINE_FINAL_TYPE (TallyResultRow, tally_result_row, G_TYPE_OBJECT)

static void
tally_result_row_finalize (GObject *object)
{
  TallyResultRow *row = (TallyResultRow *)object;

  g_strfreev (row->cells);
  g_strfreev (row->shown);

  G_OBJECT_CLASS (tally_result_row_parent_class)->finalize (object);
}

static void
tally_result_row_class_init (TallyResultRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tally_result_row_finalize;
}

static void
tally_result_row_init (TallyResultRow *row)
{
}

struct _TallyResultTable
{
  GtkWidget           parent_instance;

  /* Widgets */
  GtkWidget          *header;
  GtkScrolledWindow  *scroller;
  int                 min_rows_height;  /* -1, or what the owner asked for */
  double              grown_for_page;   /* the adjustment the table last grew for */
  double              grown_for_upper;
  int                 rows_height;      /* what the rows took once laid out, or 0 */
  GtkColumnView      *view;
  GtkLabel           *footer;

  /* The result */
  GStrv               columns;
  GArray             *numeric;      /* gboolean per column */
  GListStore         *rows;         /* TallyResultRow, in the tool's order */
  GtkSortListModel   *sorted;       /* @rows as the column view sorts them */
};

G_DEFINE_FINAL_TYPE (TallyResultTable, tally_result_table, GTK_TYPE_WIDGET)

/* Numbers */

/* Splits @value into sign, integer and fraction digits when it is a plain
 * decimal ("-12", "1234.5"); FALSE for anything else. */
static gboolean
split_decimal (const char  *value,
               gboolean    *negative,
               const char **digits,
               gsize       *n_digits,
               const char **fraction,
               gsize       *n_fraction)
{
  const char *p = value;

  *negative = *p == '-';
  if (*p == '-')
    p++;
  *digits = p;
  while (g_ascii_isdigit (*p))
    p++;
  *n_digits = p - *digits;
  *fraction = NULL;
  *n_fraction = 0;
  if (*p == '.')
    {
      *fraction = ++p;
      while (g_ascii_isdigit (*p))
        p++;
      *n_fraction = p - *fraction;
      if (*n_fraction == 0)
        return FALSE;
    }
  return *n_digits > 0 && *p == '\0';
}

/* Whether @value is a number as SQLite prints one: a plain decimal or one
 * with an exponent ("1.5e-05"). Not "inf", "nan" or hexadecimal, which
 * g_ascii_strtod() would take. */
static gboolean
is_number (const char *value)
{
  const char *p = value;
  gboolean digits = FALSE;

  if (*p == '-' || *p == '+')
    p++;
  for (; g_ascii_isdigit (*p); p++)
    digits = TRUE;
  if (*p == '.')
    for (p++; g_ascii_isdigit (*p); p++)
      digits = TRUE;
  if (!digits)
    return FALSE;
  if (*p == 'e' || *p == 'E')
    {
      p++;
      if (*p == '-' || *p == '+')
        p++;
      if (!g_ascii_isdigit (*p))
        return FALSE;
      while (g_ascii_isdigit (*p))
        p++;
    }
  return *p == '\0';
}

static gboolean
is_missing (const char *value)
{
  return value[0] == '\0' || g_str_equal (value, NULL_VALUE);
}

/* @value as shown in a numeric column: the integer digits grouped as the
 * locale groups them, the locale's decimal point, and the fraction padded
 * with figure spaces to @n_decimals digits so that the points line up in a
 * right-aligned column of tabular digits. Values that are not plain
 * decimals are shown as they are. */
static char *
format_number (const char *value,
               gsize       n_decimals)
{
  const char *digits, *fraction;
  gsize n_digits, n_fraction;
  gboolean negative;
  GString *out;

  if (!split_decimal (value, &negative, &digits, &n_digits, &fraction, &n_fraction) ||
      n_digits > 18)
    return g_strdup (value);

  out = g_string_new (negative ? "-" : NULL);
  {
    g_autofree char *grouped = tally_format_count (g_ascii_strtoll (digits, NULL, 10),
                                                   TALLY_GROUPING_LOCALE);
    g_string_append (out, grouped);
  }

  if (n_fraction > 0)
    {
      const char *point = localeconv ()->decimal_point;

      g_string_append (out, point != NULL && point[0] != '\0' ? point : ".");
      g_string_append_len (out, fraction, n_fraction);
    }
  else if (n_decimals > 0)
    g_string_append (out, PUNCTUATION_SPACE);
  for (gsize i = n_fraction; i < n_decimals; i++)
    g_string_append (out, FIGURE_SPACE);

  return g_string_free (out, FALSE);
}

/* Sorting */

static int
compare_rows_cb (gconstpointer a,
                 gconstpointer b,
                 gpointer      user_data)
{
  const TallyResultRow *row_a = a;
  const TallyResultRow *row_b = b;
  guint column = GPOINTER_TO_UINT (user_data) >> 1;
  gboolean numeric = GPOINTER_TO_UINT (user_data) & 1;
  const char *x = row_a->cells[column];
  const char *y = row_b->cells[column];
  gboolean x_missing = is_missing (x);
  gboolean y_missing = is_missing (y);

  /* Missing values first, as SQLite orders NULL. */
  if (x_missing || y_missing)
    return (int) y_missing - (int) x_missing;

  if (numeric)
    {
      double dx = g_ascii_strtod (x, NULL);
      double dy = g_ascii_strtod (y, NULL);

      return (dx > dy) - (dx < dy);
    }

  return g_utf8_collate (x, y);
}

/* Cells */

/* A cell's whole value in its tooltip, when it does not fit its column
 * (the column is at most about %MAX_CELL_WIDTH_CHARS wide, and the analyst
 * may narrow it). */
static gboolean
cell_query_tooltip_cb (GtkLabel   *label,
                       int         x,
                       int         y,
                       gboolean    keyboard_mode,
                       GtkTooltip *tooltip)
{
  if (!pango_layout_is_ellipsized (gtk_label_get_layout (label)))
    return FALSE;
  gtk_tooltip_set_text (tooltip, gtk_label_get_text (label));
  return TRUE;
}

static void
setup_cell_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *item,
               gpointer                  user_data)
{
  gboolean numeric = GPOINTER_TO_UINT (user_data) & 1;
  GtkWidget *label = gtk_label_new (NULL);

  /* One line per cell; a long value is ellipsized, whole in the tooltip. */
  gtk_label_set_single_line_mode (GTK_LABEL (label), TRUE);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (label), numeric ? 1.0 : 0.0);
  gtk_widget_add_css_class (label, "cell");
  gtk_widget_set_has_tooltip (label, TRUE);
  g_signal_connect (label, "query-tooltip", G_CALLBACK (cell_query_tooltip_cb), NULL);
  if (numeric)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_cell_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *item,
              gpointer                  user_data)
{
  guint column = GPOINTER_TO_UINT (user_data) >> 1;
  TallyResultRow *row = gtk_list_item_get_item (item);
  GtkWidget *label = gtk_list_item_get_child (item);
  const char *value = row->cells[column];

  gtk_label_set_text (GTK_LABEL (label), row->shown[column]);
  if (g_str_equal (value, NULL_VALUE))
    gtk_widget_add_css_class (label, "null");
  else
    gtk_widget_remove_css_class (label, "null");
}

/* The width a column needs for its title and its widest values, at most
 * about %MAX_CELL_WIDTH_CHARS characters: the column view itself sizes
 * columns by the rows it has built, which would change as it scrolls. */
static int
measure_column (TallyResultTable *self,
                guint             column)
{
  g_autoptr(PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self->view), NULL);
  guint n_rows = g_list_model_get_n_items (G_LIST_MODEL (self->rows));
  guint widest[3] = { G_MAXUINT, G_MAXUINT, G_MAXUINT };
  glong widest_chars[3] = { -1, -1, -1 };
  int width, title_width;

  /* Digits are tabular, so the longest values are the widest; lay out
   * the three longest rather than every value. */
  for (guint r = 0; r < n_rows; r++)
    {
      g_autoptr(TallyResultRow) row = g_list_model_get_item (G_LIST_MODEL (self->rows), r);
      glong chars = g_utf8_strlen (row->shown[column], -1);

      for (guint i = 0; i < G_N_ELEMENTS (widest); i++)
        if (chars > widest_chars[i])
          {
            memmove (&widest[i + 1], &widest[i], (G_N_ELEMENTS (widest) - i - 1) * sizeof widest[0]);
            memmove (&widest_chars[i + 1], &widest_chars[i], (G_N_ELEMENTS (widest) - i - 1) * sizeof widest_chars[0]);
            widest[i] = r;
            widest_chars[i] = chars;
            break;
          }
    }

  width = 0;
  for (guint i = 0; i < G_N_ELEMENTS (widest) && widest[i] != G_MAXUINT; i++)
    {
      g_autoptr(TallyResultRow) row = g_list_model_get_item (G_LIST_MODEL (self->rows), widest[i]);
      const char *text = row->shown[column];
      const char *end = g_utf8_offset_to_pointer (text, MIN (widest_chars[i], MAX_CELL_WIDTH_CHARS));
      int w;

      pango_layout_set_text (layout, text, end - text);
      pango_layout_get_pixel_size (layout, &w, NULL);
      width = MAX (width, w + CELL_EXTRA_WIDTH);
    }

  pango_layout_set_markup (layout, "", 0);
  {
    g_autofree char *markup = g_markup_printf_escaped ("<b>%s</b>", self->columns[column]);
    const char *title = self->columns[column];

    if (g_utf8_strlen (title, -1) > MAX_CELL_WIDTH_CHARS)
      {
        g_autofree char *cut = g_utf8_substring (title, 0, MAX_CELL_WIDTH_CHARS);

        g_free (markup);
        markup = g_markup_printf_escaped ("<b>%s</b>", cut);
      }
    pango_layout_set_markup (layout, markup, -1);
  }
  pango_layout_get_pixel_size (layout, &title_width, NULL);

  return MAX (width, title_width + TITLE_EXTRA_WIDTH);
}

static TallyResultRow *peek_row (GListModel *model,
                                 guint       position);

/* TRUE when every value of @column was withheld from the model: a
 * sensitive column, or one derived from it (docs/ledger.md §2). */
static gboolean
column_is_redacted (TallyResultTable *self,
                    guint             column)
{
  guint n_rows = g_list_model_get_n_items (G_LIST_MODEL (self->rows));

  for (guint row = 0; row < n_rows; row++)
    if (g_strcmp0 (peek_row (G_LIST_MODEL (self->rows), row)->cells[column], TALLY_SENSITIVE_REDACTED) != 0)
      return FALSE;

  return n_rows > 0;
}

static void
add_column (TallyResultTable *self,
            guint             column)
{
  gboolean numeric = g_array_index (self->numeric, gboolean, column);
  gpointer data = GUINT_TO_POINTER ((column << 1) | (numeric ? 1 : 0));
  g_autoptr(GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();
  g_autoptr(GtkColumnViewColumn) view_column = NULL;
  g_autoptr(GtkSorter) sorter = NULL;

  g_signal_connect (factory, "setup", G_CALLBACK (setup_cell_cb), data);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cell_cb), data);
  sorter = GTK_SORTER (gtk_custom_sorter_new (compare_rows_cb, data, NULL));

  /* A lock before the title of a redacted column; the title itself (for
   * copying and saving) stays as the tool wrote it. */
  if (column_is_redacted (self, column))
    {
      g_autofree char *title = g_strdup_printf ("🔒 %s", self->columns[column]);

      view_column = gtk_column_view_column_new (title, g_object_ref (factory));
    }
  else
    view_column = gtk_column_view_column_new (self->columns[column], g_object_ref (factory));
  gtk_column_view_column_set_sorter (view_column, sorter);
  gtk_column_view_column_set_resizable (view_column, TRUE);
  gtk_column_view_column_set_fixed_width (view_column, measure_column (self, column));
  gtk_column_view_append_column (self->view, view_column);
}

static void
clear (TallyResultTable *self)
{
  GListModel *columns = gtk_column_view_get_columns (self->view);

  while (g_list_model_get_n_items (columns) > 0)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, 0);

      gtk_column_view_remove_column (self->view, column);
    }
  g_clear_pointer (&self->columns, g_strfreev);
  g_array_set_size (self->numeric, 0);
  g_list_store_remove_all (self->rows);
  self->rows_height = 0;
  self->grown_for_page = self->grown_for_upper = 0;
  gtk_label_set_text (self->footer, "");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "table.copy", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "table.save-csv", FALSE);
}

static void update_min_height (TallyResultTable *self);

/* The rows' real height is known once the column view has laid them out
 * in sight. When the table is first shown it takes the column view's
 * natural height instead of the estimate; the list view's estimate for
 * rows it has not built yet may still fall short, so the table also grows
 * by whatever its rows' area lacks, then and afterwards. No row is left
 * below the table's edge (nothing scrolls it up and down), and growing
 * only, it settles.
 *
 * The adjustment may change while the table is out of sight (the
 * transcript unmaps rows scrolled away); that change is looked at again
 * when the table is mapped, or a table shown again with the same
 * allocation would keep a row hidden. */
static void
fit_rows (TallyResultTable *self)
{
  GtkAdjustment *rows = gtk_scrolled_window_get_vadjustment (self->scroller);
  double page = gtk_adjustment_get_page_size (rows);
  double shortfall = gtk_adjustment_get_upper (rows) - page;
  int natural = 0;

  if (page <= 0 || !gtk_widget_get_mapped (GTK_WIDGET (self->scroller)))
    return;
  if (self->rows_height == 0)
    {
      gtk_widget_measure (GTK_WIDGET (self->view), GTK_ORIENTATION_VERTICAL,
                          gtk_widget_get_width (GTK_WIDGET (self->view)), NULL, &natural, NULL, NULL);
      self->rows_height = MAX (natural, 1);
    }
  else if (shortfall < 1.0)
    return;
  /* A second look at the same allocation (the table mapped again before
   * the next one) must not add the same shortfall twice. */
  if (shortfall >= 1.0 &&
      (page != self->grown_for_page || gtk_adjustment_get_upper (rows) != self->grown_for_upper))
    {
      self->grown_for_page = page;
      self->grown_for_upper = gtk_adjustment_get_upper (rows);
      self->rows_height = MAX (self->rows_height,
                               gtk_scrolled_window_get_min_content_height (self->scroller) + (int) ceil (shortfall));
    }
  update_min_height (self);
}

/* Actions (tally-csv-dialog.c) */

static char *
dup_text (GtkWidget      *widget,
          TallyCsvFormat  format)
{
  return tally_result_table_dup_text (TALLY_RESULT_TABLE (widget), format);
}

/* Object */

static void
tally_result_table_dispose (GObject *object)
{
  TallyResultTable *self = (TallyResultTable *)object;

  g_clear_pointer (&self->header, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->scroller, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->footer, gtk_widget_unparent);
  self->view = NULL;
  g_clear_object (&self->sorted);

  G_OBJECT_CLASS (tally_result_table_parent_class)->dispose (object);
}

static void
tally_result_table_finalize (GObject *object)
{
  TallyResultTable *self = (TallyResultTable *)object;

  g_clear_pointer (&self->columns, g_strfreev);
  g_clear_pointer (&self->numeric, g_array_unref);
  g_clear_object (&self->rows);

  G_OBJECT_CLASS (tally_result_table_parent_class)->finalize (object);
}

static void
tally_result_table_class_init (TallyResultTableClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_result_table_dispose;
  object_class->finalize = tally_result_table_finalize;

  /**
   * TallyResultTable|table.copy:
   *
   * Puts the table on the clipboard as tab-separated text with a header
   * row, in the order shown.
   */
  /**
   * TallyResultTable|table.save-csv:
   *
   * Asks for a file and saves the table there as CSV (RFC 4180, UTF-8),
   * with tally_csv_dialog_save_async().
   */
  /* Translators: the file name offered when a query result is saved. */
  tally_csv_dialog_install_actions (widget_class, dup_text, N_("query-result.csv"));

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK, "table.copy", NULL);

  gtk_widget_class_set_css_name (widget_class, "tallyresulttable");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_result_table_init (TallyResultTable *self)
{
  GtkLayoutManager *layout;
  g_autoptr(GtkNoSelection) selection = NULL;

  self->min_rows_height = -1;
  layout = gtk_box_layout_new (GTK_ORIENTATION_VERTICAL);
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 4);
  gtk_widget_set_layout_manager (GTK_WIDGET (self), layout);

  self->header = tally_csv_dialog_new_header ();
  gtk_widget_set_parent (self->header, GTK_WIDGET (self));

  /* Every row is in the conversation's own height, so nothing but the
   * conversation scrolls up and down (issue 14 §3); a table wider than
   * the transcript scrolls sideways, with Shift and the wheel or a
   * sideways swipe. The scroll bar is not overlaid: a wide table shows at
   * once that it scrolls sideways. */
  self->scroller = GTK_SCROLLED_WINDOW (gtk_scrolled_window_new ());
  gtk_scrolled_window_set_policy (self->scroller, GTK_POLICY_AUTOMATIC, GTK_POLICY_EXTERNAL);
  gtk_scrolled_window_set_overlay_scrolling (self->scroller, FALSE);
  gtk_scrolled_window_set_propagate_natural_width (self->scroller, TRUE);
  gtk_scrolled_window_set_propagate_natural_height (self->scroller, TRUE);
  tally_scroll_forward_vertical (self->scroller);
  g_signal_connect_object (gtk_scrolled_window_get_vadjustment (self->scroller), "changed",
                           G_CALLBACK (fit_rows), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->scroller, "map", G_CALLBACK (fit_rows), self, G_CONNECT_SWAPPED);
  gtk_widget_add_css_class (GTK_WIDGET (self->scroller), "frame");
  gtk_widget_set_halign (GTK_WIDGET (self->scroller), GTK_ALIGN_START);
  gtk_widget_set_parent (GTK_WIDGET (self->scroller), GTK_WIDGET (self));

  self->rows = g_list_store_new (TALLY_TYPE_RESULT_ROW);
  self->view = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
  self->sorted = gtk_sort_list_model_new (g_object_ref (G_LIST_MODEL (self->rows)),
                                          g_object_ref (gtk_column_view_get_sorter (self->view)));
  selection = gtk_no_selection_new (g_object_ref (G_LIST_MODEL (self->sorted)));
  gtk_column_view_set_model (self->view, GTK_SELECTION_MODEL (selection));
  gtk_column_view_set_show_row_separators (self->view, TRUE);
  gtk_column_view_set_show_column_separators (self->view, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->view), "data-table");
  gtk_scrolled_window_set_child (self->scroller, GTK_WIDGET (self->view));

  self->footer = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->footer, 0.0);
  gtk_label_set_wrap (self->footer, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->footer), "caption");
  gtk_widget_add_css_class (GTK_WIDGET (self->footer), "dim-label");
  gtk_widget_set_parent (GTK_WIDGET (self->footer), GTK_WIDGET (self));

  self->numeric = g_array_new (FALSE, TRUE, sizeof (gboolean));

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "table.copy", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "table.save-csv", FALSE);
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

/* Parses @text into columns, rows and the two closing lines. */
static gboolean
parse (TallyResultTable  *self,
       const char        *text,
       GPtrArray         *rows,
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
      g_ptr_array_add (rows, cells);
    }

  return TRUE;
}

/* Fills the store with @rows, each with its cells as shown: numeric
 * columns (every value a number or missing, at least one number) are
 * formatted with format_number(), the others shown as written. */
static void
fill (TallyResultTable *self,
      GPtrArray        *rows)
{
  guint n_columns = g_strv_length (self->columns);
  g_autofree gsize *decimals = g_new0 (gsize, n_columns);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  g_array_set_size (self->numeric, n_columns);
  for (guint c = 0; c < n_columns; c++)
    {
      gboolean numeric = FALSE;

      for (guint r = 0; r < rows->len; r++)
        {
          const char *value = ((GStrv) g_ptr_array_index (rows, r))[c];
          const char *point;

          if (is_missing (value))
            continue;
          if (!is_number (value))
            {
              numeric = FALSE;
              break;
            }
          numeric = TRUE;
          if ((point = strchr (value, '.')) != NULL && strpbrk (value, "eE") == NULL)
            decimals[c] = MAX (decimals[c], strlen (point + 1));
        }
      g_array_index (self->numeric, gboolean, c) = numeric;
    }

  for (guint r = 0; r < rows->len; r++)
    {
      TallyResultRow *row = g_object_new (TALLY_TYPE_RESULT_ROW, NULL);

      row->cells = g_steal_pointer (&g_ptr_array_index (rows, r));
      row->shown = g_new0 (char *, n_columns + 1);
      for (guint c = 0; c < n_columns; c++)
        row->shown[c] = g_array_index (self->numeric, gboolean, c) && !is_missing (row->cells[c])
                        ? format_number (row->cells[c], decimals[c])
                        : g_strdup (row->cells[c]);
      g_ptr_array_add (items, row);
    }
  g_list_store_splice (self->rows, 0, 0, items->pdata, items->len);
}

/* A column view measured while it is hidden (in a folded tool chip, behind
 * a chart) has laid out no rows and asks for little more than its titles,
 * and it keeps that height once shown. The rows' area therefore asks for
 * the height all its rows will take, from the font's line height until
 * they have been laid out and from their real height after, and at least
 * what the owner asked for. */
static void
update_min_height (TallyResultTable *self)
{
  g_autoptr(PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), "Xg");
  guint n_rows = g_list_model_get_n_items (G_LIST_MODEL (self->rows));
  int line_height = 0;
  int wanted;

  pango_layout_get_pixel_size (layout, NULL, &line_height);
  /* Each row and the titles add their cell padding (style.css) to a line. */
  wanted = (int) MIN ((guint64) (n_rows + 1) * (guint64) (line_height + ROW_PADDING), (guint64) G_MAXINT);
  gtk_scrolled_window_set_min_content_height (self->scroller,
                                              MAX (self->rows_height > 0 ? self->rows_height : wanted,
                                                   self->min_rows_height));
}

/**
 * tally_result_table_set_result:
 * @self: a #TallyResultTable
 * @text: (nullable): a `query_database` result: a header line of column
 *   names, one line per row with values separated by " | ", an optional
 *   note line starting with "… " and a closing line "(N rows)"
 *
 * Shows @text as a table with its row count (and note) underneath. Every
 * row is shown; the column view builds widgets only for those in sight.
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
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_autofree char *note = NULL;
  g_autofree char *count = NULL;
  g_autoptr(GString) footer = NULL;
  g_autofree char *description = NULL;

  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), FALSE);

  clear (self);
  if (text == NULL || !parse (self, text, rows, &note, &count))
    {
      clear (self);
      return FALSE;
    }

  fill (self, rows);
  for (guint c = 0; self->columns[c] != NULL; c++)
    add_column (self, c);
  update_min_height (self);

  footer = g_string_new (count);
  if (note != NULL)
    {
      g_string_append (footer, " · ");
      g_string_append (footer, note);
    }
  gtk_label_set_text (self->footer, footer->str);

  /* Translators: an accessible description of a query result. */
  description = g_strdup_printf (_("Query result, %u columns, %s"),
                                 g_strv_length (self->columns), count);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, description,
                                  -1);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "table.copy", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "table.save-csv", TRUE);

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
 * Returns: the number of rows in the result, the header not counted
 */
guint
tally_result_table_get_n_rows (TallyResultTable *self)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->rows));
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
 * tally_result_table_get_column_is_numeric:
 * @self: a #TallyResultTable
 * @column: a column index, from 0
 *
 * A column is numeric when each of its values is a number or missing
 * (empty or `NULL`) and at least one is a number. Numeric columns are
 * right-aligned, grouped, and sort by value.
 *
 * Returns: whether @column is numeric; %FALSE when out of range
 */
gboolean
tally_result_table_get_column_is_numeric (TallyResultTable *self,
                                          guint             column)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), FALSE);

  if (column >= self->numeric->len)
    return FALSE;
  return g_array_index (self->numeric, gboolean, column);
}

static TallyResultRow *
peek_row (GListModel *model,
          guint       position)
{
  g_autoptr(TallyResultRow) row = g_list_model_get_item (model, position);

  /* The store holds a reference for as long as the row is in it. */
  return row;
}

/**
 * tally_result_table_get_cell:
 * @self: a #TallyResultTable
 * @row: a row index in the tool's order, from 0 (the header not counted)
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
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);

  if (row >= tally_result_table_get_n_rows (self) || column >= tally_result_table_get_n_columns (self))
    return NULL;
  return peek_row (G_LIST_MODEL (self->rows), row)->cells[column];
}

/**
 * tally_result_table_get_shown_text:
 * @self: a #TallyResultTable
 * @position: a row's position as the table is sorted now, from 0
 * @column: a column index, from 0
 *
 * Returns: (transfer none) (nullable): the text the cell shows (a number
 *   grouped and padded to line up, see #TallyResultTable), %NULL when out
 *   of range
 */
const char *
tally_result_table_get_shown_text (TallyResultTable *self,
                                   guint             position,
                                   guint             column)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);

  if (position >= tally_result_table_get_n_rows (self) || column >= tally_result_table_get_n_columns (self))
    return NULL;
  return peek_row (G_LIST_MODEL (self->sorted), position)->shown[column];
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
 * tally_result_table_set_min_rows_height:
 * @self: a #TallyResultTable
 * @height: the least height of the scrolled rows in logical pixels, or
 *   -1 for none; at most 360 px is used
 *
 * Keeps the rows' area at least @height tall. A table that takes the place
 * of another widget (the chart row's *Show Data*) uses it to keep the
 * row's size; a list view measured before its rows are laid out would
 * otherwise ask for little more than its column titles.
 */
void
tally_result_table_set_min_rows_height (TallyResultTable *self,
                                        int               height)
{
  g_return_if_fail (TALLY_IS_RESULT_TABLE (self));

  self->min_rows_height = height < 0 ? -1 : MIN (height, MAX_VISIBLE_HEIGHT);
  update_min_height (self);
}

/**
 * tally_result_table_get_column_view:
 * @self: a #TallyResultTable
 *
 * Returns: (transfer none): the column view showing the rows; its sorter
 *   (gtk_column_view_get_sorter()) orders them
 */
GtkColumnView *
tally_result_table_get_column_view (TallyResultTable *self)
{
  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);
  return self->view;
}

/**
 * tally_result_table_dup_text:
 * @self: a #TallyResultTable
 * @format: %TALLY_CSV_FORMAT_TSV for the clipboard or
 *   %TALLY_CSV_FORMAT_CSV for a file
 *
 * Writes the table with tally_csv_format_table(): a header row of column
 * names, then the rows in the order shown, each value as the tool wrote
 * it (not grouped) and `NULL` as an empty cell.
 *
 * Returns: (transfer full): the text; empty when no table is shown
 */
char *
tally_result_table_dup_text (TallyResultTable *self,
                             TallyCsvFormat    format)
{
  guint n_columns, n_rows;
  g_autoptr(GString) out = NULL;
  g_autofree const char **cells = NULL;

  g_return_val_if_fail (TALLY_IS_RESULT_TABLE (self), NULL);

  out = g_string_new (NULL);
  n_columns = tally_result_table_get_n_columns (self);
  if (n_columns == 0)
    return g_string_free (g_steal_pointer (&out), FALSE);

  tally_csv_append_row (out, format, (const char * const *) self->columns, n_columns);
  cells = g_new0 (const char *, n_columns);
  n_rows = tally_result_table_get_n_rows (self);
  for (guint r = 0; r < n_rows; r++)
    {
      TallyResultRow *row = peek_row (G_LIST_MODEL (self->sorted), r);

      for (guint c = 0; c < n_columns; c++)
        cells[c] = g_str_equal (row->cells[c], NULL_VALUE) ? NULL : row->cells[c];
      tally_csv_append_row (out, format, cells, n_columns);
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}
