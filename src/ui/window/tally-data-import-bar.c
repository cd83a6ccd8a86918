/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-data-import-bar"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-data-import-bar.h"

/*
 * The bar the window shows while data files are imported
 * (docs/data-files.md): what is being imported, a progress bar of the
 * bytes read, and Cancel. The bar only shows and asks; the window runs the
 * import and answers #TallyDataImportBar::cancel.
 */

/**
 * TallyDataImportBar:
 *
 * A banner with the progress of a data file import and a Cancel button.
 */
struct _TallyDataImportBar
{
  GtkWidget       parent_instance;

  GtkLabel       *title_label;
  GtkProgressBar *progress_bar;
};

G_DEFINE_FINAL_TYPE (TallyDataImportBar, tally_data_import_bar, GTK_TYPE_WIDGET)

enum {
  CANCEL,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
cancel_activate (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  g_signal_emit (widget, signals[CANCEL], 0);
}

static void
tally_data_import_bar_dispose (GObject *object)
{
  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_DATA_IMPORT_BAR);
  /* GTK 4.8 unparents only the bound children; the icon and the button
   * go here. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (object))) != NULL)
    gtk_widget_unparent (child);

  G_OBJECT_CLASS (tally_data_import_bar_parent_class)->dispose (object);
}

static void
tally_data_import_bar_class_init (TallyDataImportBarClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_data_import_bar_dispose;

  /**
   * TallyDataImportBar::cancel:
   * @self: the bar
   *
   * Emitted when the analyst presses Cancel (the action
   * `import-bar.cancel`).
   */
  signals[CANCEL] = g_signal_new ("cancel", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_install_action (widget_class, "import-bar.cancel", NULL, cancel_activate);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/window/tally-data-import-bar.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyDataImportBar, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallyDataImportBar, progress_bar);
  gtk_widget_class_set_css_name (widget_class, "tally-data-import-bar");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_data_import_bar_init (TallyDataImportBar *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * tally_data_import_bar_new:
 *
 * Creates an import bar at 0 %.
 *
 * Returns: (transfer floating): a new #TallyDataImportBar
 */
GtkWidget *
tally_data_import_bar_new (void)
{
  return g_object_new (TALLY_TYPE_DATA_IMPORT_BAR, NULL);
}

/**
 * tally_data_import_bar_set_title:
 * @self: a #TallyDataImportBar
 * @title: what is imported, for example "Importing sales.csv…"
 *
 * Sets the bar's text, which is also its accessible label.
 */
void
tally_data_import_bar_set_title (TallyDataImportBar *self,
                                 const char         *title)
{
  g_return_if_fail (TALLY_IS_DATA_IMPORT_BAR (self));
  g_return_if_fail (title != NULL);

  gtk_label_set_label (self->title_label, title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, title, -1);
}

/**
 * tally_data_import_bar_get_title:
 * @self: a #TallyDataImportBar
 *
 * Returns: (transfer none): the bar's text
 */
const char *
tally_data_import_bar_get_title (TallyDataImportBar *self)
{
  g_return_val_if_fail (TALLY_IS_DATA_IMPORT_BAR (self), NULL);

  return gtk_label_get_label (self->title_label);
}

/**
 * tally_data_import_bar_set_progress:
 * @self: a #TallyDataImportBar
 * @done: bytes read so far
 * @total: bytes to read in all (0 shows 0 %)
 *
 * Moves the progress bar; its text is the percentage.
 */
void
tally_data_import_bar_set_progress (TallyDataImportBar *self,
                                    guint64             done,
                                    guint64             total)
{
  double fraction;
  g_autofree char *text = NULL;

  g_return_if_fail (TALLY_IS_DATA_IMPORT_BAR (self));

  fraction = total > 0 ? CLAMP ((double) done / (double) total, 0.0, 1.0) : 0.0;
  /* Translators: the progress of an import; %d is a whole percentage */
  text = g_strdup_printf (_("%d %%"), (int) (fraction * 100.0));
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_progress_bar_set_text (self->progress_bar, text);
}

/**
 * tally_data_import_bar_get_fraction:
 * @self: a #TallyDataImportBar
 *
 * Returns: the progress shown, from 0 to 1
 */
double
tally_data_import_bar_get_fraction (TallyDataImportBar *self)
{
  g_return_val_if_fail (TALLY_IS_DATA_IMPORT_BAR (self), 0.0);

  return gtk_progress_bar_get_fraction (self->progress_bar);
}
