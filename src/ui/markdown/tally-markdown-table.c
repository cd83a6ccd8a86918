/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <adwaita.h>
#include <gtksourceview/gtksource.h>

#include <glib/gi18n.h>
#include <string.h>

#include "tally-markdown-table.h"
#include "tally-scroll-forward.h"
#include "tally-csv-dialog.h"

/*
 * A GFM table as widgets: a GtkGrid of labels (the header row bold, each
 * column aligned as its delimiter row says) inside a scrolled window that
 * scrolls sideways when the columns do not fit. Cells keep to one line:
 * a wrapping label's height is measured for its narrowest width inside a
 * horizontally scrolling parent, which would leave tall empty rows.
 *
 * The grid sits in a #TallyMarkdownTableWidget under two buttons for its
 * actions (tally-csv-dialog.c, shared with the query result's table):
 * `table.copy` puts the cells' plain text on the clipboard as
 * tab-separated text and `table.save-csv` saves them as an RFC 4180 file
 * (both written by src/core/util/tally-csv.c), the header row first.
 */

/**
 * TallyMarkdownTableWidget:
 *
 * A markdown table in a message, with the actions `table.copy` and
 * `table.save-csv`.
 */
struct _TallyMarkdownTableWidget
{
  GtkWidget             parent_instance;

  GtkWidget            *header;
  GtkWidget            *scroller;

  /* The plain cells, row-major, the header row first. */
  GStrv                 plain;
  guint                 n_columns;
  guint                 n_rows;
};

G_DEFINE_FINAL_TYPE (TallyMarkdownTableWidget, tally_markdown_table_widget, GTK_TYPE_WIDGET)

static char *
dup_text (GtkWidget      *widget,
          TallyCsvFormat  format)
{
  return tally_markdown_table_widget_dup_text (TALLY_MARKDOWN_TABLE_WIDGET (widget), format);
}

static void
tally_markdown_table_widget_dispose (GObject *object)
{
  TallyMarkdownTableWidget *self = (TallyMarkdownTableWidget *)object;

  g_clear_pointer (&self->header, gtk_widget_unparent);
  g_clear_pointer (&self->scroller, gtk_widget_unparent);

  G_OBJECT_CLASS (tally_markdown_table_widget_parent_class)->dispose (object);
}

static void
tally_markdown_table_widget_finalize (GObject *object)
{
  TallyMarkdownTableWidget *self = (TallyMarkdownTableWidget *)object;

  g_clear_pointer (&self->plain, g_strfreev);

  G_OBJECT_CLASS (tally_markdown_table_widget_parent_class)->finalize (object);
}

static void
tally_markdown_table_widget_class_init (TallyMarkdownTableWidgetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_markdown_table_widget_dispose;
  object_class->finalize = tally_markdown_table_widget_finalize;

  /* Translators: the file name offered when a table in a message is saved. */
  tally_csv_dialog_install_actions (widget_class, dup_text, N_("table.csv"));

  gtk_widget_class_set_css_name (widget_class, "tallymarkdowntable");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_markdown_table_widget_init (TallyMarkdownTableWidget *self)
{
  GtkLayoutManager *layout = gtk_box_layout_new (GTK_ORIENTATION_VERTICAL);

  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 2);
  gtk_widget_set_layout_manager (GTK_WIDGET (self), layout);

  self->header = tally_csv_dialog_new_header ();
  gtk_widget_set_parent (self->header, GTK_WIDGET (self));
}

/**
 * tally_markdown_table_widget_dup_text:
 * @self: a #TallyMarkdownTableWidget
 * @format: %TALLY_CSV_FORMAT_TSV for the clipboard or
 *   %TALLY_CSV_FORMAT_CSV for a file
 *
 * Writes the table's plain cells (markup left out, links as their text)
 * with tally_csv_format_table(), the header row first.
 *
 * Returns: (transfer full): the text
 */
char *
tally_markdown_table_widget_dup_text (TallyMarkdownTableWidget *self,
                                      TallyCsvFormat            format)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_TABLE_WIDGET (self), NULL);

  return tally_csv_format_table (format, (const char * const *) self->plain, self->n_columns, self->n_rows);
}

/* Keeps a copy of @table's plain cells for the actions: the anchor owns
 * @table and may go before the widget. */
static void
keep_plain (TallyMarkdownTableWidget *self,
            const TallyMarkdownTable *table)
{
  gsize n = (gsize) table->n_rows * table->n_columns;

  g_clear_pointer (&self->plain, g_strfreev);
  self->plain = g_new0 (char *, n + 1);
  for (gsize i = 0; i < n; i++)
    self->plain[i] = g_strdup (table->plain[i] != NULL ? table->plain[i] : "");
  self->n_columns = table->n_columns;
  self->n_rows = table->n_rows;
}

typedef struct
{
  TallyMarkdownLinkFunc func;
  gpointer              user_data;
} LinkHandler;

static gboolean
label_activate_link_cb (GtkLabel   *label,
                        const char *uri,
                        gpointer    user_data)
{
  LinkHandler *handler = user_data;

  if (handler->func == NULL)
    return FALSE;
  handler->func (uri, handler->user_data);
  return TRUE;
}

static float
align_to_xalign (TallyMarkdownAlign align)
{
  switch (align)
    {
    case TALLY_MARKDOWN_ALIGN_CENTER: return 0.5f;
    case TALLY_MARKDOWN_ALIGN_RIGHT: return 1.0f;
    case TALLY_MARKDOWN_ALIGN_LEFT:
    case TALLY_MARKDOWN_ALIGN_DEFAULT:
    default: return 0.0f;
    }
}

static GtkJustification
align_to_justify (TallyMarkdownAlign align)
{
  switch (align)
    {
    case TALLY_MARKDOWN_ALIGN_CENTER: return GTK_JUSTIFY_CENTER;
    case TALLY_MARKDOWN_ALIGN_RIGHT: return GTK_JUSTIFY_RIGHT;
    case TALLY_MARKDOWN_ALIGN_LEFT:
    case TALLY_MARKDOWN_ALIGN_DEFAULT:
    default: return GTK_JUSTIFY_LEFT;
    }
}

static void
set_class (GtkWidget  *widget,
           const char *name,
           gboolean    on)
{
  if (on)
    gtk_widget_add_css_class (widget, name);
  else
    gtk_widget_remove_css_class (widget, name);
}

/* Gives the label at (@r, @c) the cell's text, alignment and classes. */
static void
cell_sync (GtkWidget                *label,
           const TallyMarkdownTable *table,
           guint                     r,
           guint                     c)
{
  guint idx = r * table->n_columns + c;
  TallyMarkdownAlign align = table->aligns[c];

  /* The renderer escapes all cell text, so this markup is well formed. */
  if (g_strcmp0 (gtk_label_get_label (GTK_LABEL (label)), table->markup[idx]) != 0)
    gtk_label_set_markup (GTK_LABEL (label), table->markup[idx]);

  gtk_label_set_xalign (GTK_LABEL (label), align_to_xalign (align));
  gtk_label_set_justify (GTK_LABEL (label), align_to_justify (align));
  set_class (label, "header", r == 0);
  set_class (label, "odd", r > 0 && r % 2 == 0);
  set_class (label, "last-column", c == table->n_columns - 1);
  set_class (label, "last-row", r == table->n_rows - 1);
}

static GtkWidget *
cell_new (LinkHandler *handler)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_use_markup (GTK_LABEL (label), TRUE);
  gtk_label_set_yalign (GTK_LABEL (label), 0.0f);
  gtk_widget_set_hexpand (label, TRUE);
  gtk_widget_add_css_class (label, "cell");
  g_signal_connect (label, "activate-link", G_CALLBACK (label_activate_link_cb), handler);

  return label;
}

static void
grid_sync (GtkWidget                *scroller,
           const TallyMarkdownTable *table)
{
  GtkGrid *grid = g_object_get_data (G_OBJECT (scroller), "tally-markdown-grid");
  LinkHandler *handler = g_object_get_data (G_OBJECT (scroller), "tally-markdown-link-handler");
  guint old_rows = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (scroller), "tally-markdown-rows"));
  g_autofree char *description = NULL;

  for (guint r = 0; r < MAX (old_rows, table->n_rows); r++)
    for (guint c = 0; c < table->n_columns; c++)
      {
        GtkWidget *label = gtk_grid_get_child_at (grid, (int)c, (int)r);

        if (r >= table->n_rows)
          {
            if (label != NULL)
              gtk_grid_remove (grid, label);
            continue;
          }

        if (label == NULL)
          {
            label = cell_new (handler);
            gtk_grid_attach (grid, label, (int)c, (int)r, 1, 1);
          }
        cell_sync (label, table, r, c);
      }

  g_object_set_data (G_OBJECT (scroller), "tally-markdown-rows", GUINT_TO_POINTER (table->n_rows));

  /* Translators: an accessible description of a table in a message. */
  description = g_strdup_printf (_("Table, %u columns, %u rows"), table->n_columns, table->n_rows);
  gtk_accessible_update_property (GTK_ACCESSIBLE (grid),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, description,
                                  -1);
}

/**
 * tally_markdown_table_widget_new:
 * @table: the parsed table
 * @link_func: (scope notified) (nullable): called when a link in a cell is
 *   activated; links are inert when %NULL
 * @user_data: data for @link_func; it must outlive the widget
 *
 * Builds the widget for @table, a #TallyMarkdownTableWidget. The grid gets
 * the style class `md-table`,
 * its labels `cell`, plus `header` for the header row, `odd` for every
 * other body row, `last-row` and `last-column`; the outer scrolled window
 * gets `md-table-frame`.
 *
 * Returns: (transfer floating): the table widget
 */
GtkWidget *
tally_markdown_table_widget_new (const TallyMarkdownTable *table,
                                 TallyMarkdownLinkFunc     link_func,
                                 gpointer                  user_data)
{
  TallyMarkdownTableWidget *self;
  GtkWidget *scroller;
  GtkWidget *grid;
  LinkHandler *handler;

  g_return_val_if_fail (table != NULL, NULL);

  gtk_source_init ();

  scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller),
                                  GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_widget_add_css_class (scroller, "md-table-frame");
  /* A table wider than the text shows its scroll bar, and only a sideways
   * scroll moves it: the wheel scrolls the conversation (issue 14 §3). */
  tally_scroll_forward_vertical (GTK_SCROLLED_WINDOW (scroller));

  handler = g_new0 (LinkHandler, 1);
  handler->func = link_func;
  handler->user_data = user_data;
  g_object_set_data_full (G_OBJECT (scroller), "tally-markdown-link-handler", handler, g_free);

  grid = gtk_grid_new ();
  gtk_widget_set_halign (grid, GTK_ALIGN_START);
  gtk_widget_set_valign (grid, GTK_ALIGN_START);
  gtk_widget_set_overflow (grid, GTK_OVERFLOW_HIDDEN);
  gtk_widget_add_css_class (grid, "md-table");
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), grid);

  g_object_set_data (G_OBJECT (scroller), "tally-markdown-grid", grid);
  g_object_set_data (G_OBJECT (scroller), "tally-markdown-columns", GUINT_TO_POINTER (table->n_columns));
  grid_sync (scroller, table);

  self = g_object_new (TALLY_TYPE_MARKDOWN_TABLE_WIDGET, NULL);
  self->scroller = scroller;
  gtk_widget_set_parent (scroller, GTK_WIDGET (self));
  keep_plain (self, table);

  return GTK_WIDGET (self);
}

/**
 * tally_markdown_table_widget_update:
 * @widget: a widget made by tally_markdown_table_widget_new()
 * @table: the table to show instead
 *
 * Shows @table in @widget, reusing its cells, when the column counts
 * agree: a table that is still streaming only gains rows.
 *
 * Returns: %TRUE if @widget now shows @table, %FALSE if it cannot (the
 *   column counts differ) and a new widget is needed
 */
gboolean
tally_markdown_table_widget_update (GtkWidget                *widget,
                                    const TallyMarkdownTable *table)
{
  TallyMarkdownTableWidget *self;

  g_return_val_if_fail (GTK_IS_WIDGET (widget), FALSE);
  g_return_val_if_fail (table != NULL, FALSE);

  if (!TALLY_IS_MARKDOWN_TABLE_WIDGET (widget))
    return FALSE;
  self = TALLY_MARKDOWN_TABLE_WIDGET (widget);
  if (GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (self->scroller), "tally-markdown-columns")) != table->n_columns)
    return FALSE;

  grid_sync (self->scroller, table);
  keep_plain (self, table);
  return TRUE;
}

/**
 * tally_markdown_table_widget_is_table:
 * @widget: a widget
 *
 * Returns: whether @widget was made by tally_markdown_table_widget_new()
 */
gboolean
tally_markdown_table_widget_is_table (GtkWidget *widget)
{
  g_return_val_if_fail (GTK_IS_WIDGET (widget), FALSE);

  return TALLY_IS_MARKDOWN_TABLE_WIDGET (widget);
}
