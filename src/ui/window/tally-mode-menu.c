/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-mode-menu"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-mode-menu.h"

/*
 * The mode pickers (the header's drop-down, the compact popover's row and
 * the preferences' default) list each mode with one line saying what runs
 * without asking (issue 14 §9; the gate is docs/architecture.md §6). The
 * pickers' models are string lists in mode order (ask, plan, auto); the
 * closed picker shows the title only.
 */

#define TITLE_KEY "tally-mode-title"
#define DESCRIPTION_KEY "tally-mode-description"

/**
 * tally_mode_get_title:
 * @mode: a #TallyMode
 *
 * Returns: (transfer none): the mode's name, translated: "Ask", "Plan" or
 *   "Auto-accept edits"
 */
const char *
tally_mode_get_title (TallyMode mode)
{
  switch (mode)
    {
    case TALLY_MODE_PLAN:
      return _("Plan");
    case TALLY_MODE_AUTO:
      return _("Auto-accept edits");
    case TALLY_MODE_ASK:
    default:
      return _("Ask");
    }
}

/**
 * tally_mode_get_description:
 * @mode: a #TallyMode
 *
 * Returns: (transfer none): one translated line saying what runs without
 *   asking in @mode
 */
const char *
tally_mode_get_description (TallyMode mode)
{
  switch (mode)
    {
    case TALLY_MODE_PLAN:
      return _("Only reads, then proposes a plan; nothing changes until you approve it");
    case TALLY_MODE_AUTO:
      return _("Queries, reads and edits files in the workspace without asking");
    case TALLY_MODE_ASK:
    default:
      return _("Queries and reads without asking; asks before any change");
    }
}

static void
setup_cb (GtkSignalListItemFactory *factory,
          GtkListItem              *item)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *title = gtk_label_new (NULL);
  GtkWidget *description = gtk_label_new (NULL);
  GtkWidget *check = gtk_image_new_from_icon_name ("object-select-symbolic");

  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_xalign (GTK_LABEL (description), 0);
  gtk_label_set_wrap (GTK_LABEL (description), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (description), 34);
  gtk_label_set_width_chars (GTK_LABEL (description), 34);
  gtk_widget_add_css_class (description, "caption");
  gtk_widget_add_css_class (description, "dim-label");
  gtk_box_append (GTK_BOX (box), title);
  gtk_box_append (GTK_BOX (box), description);
  gtk_widget_set_hexpand (box, TRUE);

  /* The mode in use carries a check mark, as in GTK's own drop-downs. */
  gtk_widget_set_valign (check, GTK_ALIGN_START);
  g_object_bind_property (item, "selected", check, "visible", G_BINDING_SYNC_CREATE);

  gtk_box_append (GTK_BOX (row), box);
  gtk_box_append (GTK_BOX (row), check);
  gtk_widget_add_css_class (row, "mode-menu-item");
  g_object_set_data (G_OBJECT (row), TITLE_KEY, title);
  g_object_set_data (G_OBJECT (row), DESCRIPTION_KEY, description);
  gtk_list_item_set_child (item, row);
}

static void
bind_cb (GtkSignalListItemFactory *factory,
         GtkListItem              *item)
{
  GtkWidget *box = gtk_list_item_get_child (item);
  GtkLabel *title = g_object_get_data (G_OBJECT (box), TITLE_KEY);
  GtkLabel *description = g_object_get_data (G_OBJECT (box), DESCRIPTION_KEY);
  TallyMode mode = (TallyMode)gtk_list_item_get_position (item);

  gtk_label_set_label (title, tally_mode_get_title (mode));
  gtk_label_set_label (description, tally_mode_get_description (mode));
  gtk_accessible_update_property (GTK_ACCESSIBLE (box),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, tally_mode_get_description (mode),
                                  -1);
}

static GtkListItemFactory *
new_list_factory (void)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();

  g_signal_connect (factory, "setup", G_CALLBACK (setup_cb), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cb), NULL);
  return factory;
}

/**
 * tally_mode_menu_set_up:
 * @dropdown: a drop-down whose model lists the modes in #TallyMode order
 *
 * Makes the open list show each mode's title with its description below;
 * the button keeps showing the title only.
 */
void
tally_mode_menu_set_up (GtkDropDown *dropdown)
{
  g_autoptr(GtkListItemFactory) factory = new_list_factory ();

  g_return_if_fail (GTK_IS_DROP_DOWN (dropdown));

  gtk_drop_down_set_list_factory (dropdown, factory);
}

static void
row_selected_cb (AdwComboRow *row)
{
  guint selected = adw_combo_row_get_selected (row);

  if (selected <= TALLY_MODE_AUTO)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), tally_mode_get_description ((TallyMode)selected));
}

/**
 * tally_mode_menu_set_up_row:
 * @row: a combo row whose model lists the modes in #TallyMode order
 *
 * As tally_mode_menu_set_up(), for an #AdwComboRow; its subtitle shows
 * the selected mode's description.
 */
void
tally_mode_menu_set_up_row (AdwComboRow *row)
{
  g_autoptr(GtkListItemFactory) factory = new_list_factory ();

  g_return_if_fail (ADW_IS_COMBO_ROW (row));

  adw_combo_row_set_list_factory (row, factory);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 2);
  g_signal_connect (row, "notify::selected", G_CALLBACK (row_selected_cb), NULL);
  row_selected_cb (row);
}
