/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <gtksourceview/gtksource.h>

#include <glib/gi18n.h>

#include "tally-markdown-table.h"

/*
 * A GFM table as widgets: a GtkGrid of labels (the header row bold, each
 * column aligned as its delimiter row says) inside a scrolled window that
 * scrolls sideways when the columns do not fit. Cells keep to one line:
 * a wrapping label's height is measured for its narrowest width inside a
 * horizontally scrolling parent, which would leave tall empty rows.
 */

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
 * Builds the widget for @table. The grid gets the style class `md-table`,
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

  return scroller;
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
  g_return_val_if_fail (GTK_IS_WIDGET (widget), FALSE);
  g_return_val_if_fail (table != NULL, FALSE);

  if (g_object_get_data (G_OBJECT (widget), "tally-markdown-grid") == NULL ||
      GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (widget), "tally-markdown-columns")) != table->n_columns)
    return FALSE;

  grid_sync (widget, table);
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

  return g_object_get_data (G_OBJECT (widget), "tally-markdown-grid") != NULL;
}
