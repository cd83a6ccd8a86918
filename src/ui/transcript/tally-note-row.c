/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-note-row.h"

/**
 * TallyNoteRow:
 *
 * One line with an icon, for the blocks that say something short: the
 * marker of a reply that was cut (%TALLY_BLOCK_INCOMPLETE) and Tally's own
 * notices (%TALLY_BLOCK_NOTICE), the two kinds tally_ui_init() registers
 * it for. The row carries a style class per kind ("incomplete",
 * "notice").
 */

struct _TallyNoteRow
{
  TallyBlockWidget parent_instance;

  GtkImage   *icon;
  GtkLabel   *label;

};

G_DEFINE_FINAL_TYPE (TallyNoteRow, tally_note_row, TALLY_TYPE_BLOCK_WIDGET)

static void
sync_row (TallyNoteRow *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);
  gboolean incomplete = block != NULL && tally_block_get_kind (block) == TALLY_BLOCK_INCOMPLETE;

  gtk_widget_remove_css_class (GTK_WIDGET (self), "incomplete");
  gtk_widget_remove_css_class (GTK_WIDGET (self), "notice");
  if (block == NULL)
    {
      gtk_label_set_text (self->label, "");
      return;
    }

  gtk_widget_add_css_class (GTK_WIDGET (self), incomplete ? "incomplete" : "notice");
  gtk_image_set_from_icon_name (self->icon, incomplete ? "media-playback-pause-symbolic"
                                                       : "dialog-information-symbolic");
  gtk_label_set_text (self->label, incomplete ? _("Reply interrupted before it finished")
                                              : tally_block_get_text (block));
}

/* Binding and unbinding both show the current block. */
static void
tally_note_row_bind (TallyBlockWidget *widget,
                     TallyBlock       *previous)
{
  TallyNoteRow *self = TALLY_NOTE_ROW (widget);

  sync_row (self);
}

static void
tally_note_row_dispose (GObject *object)
{
  TallyNoteRow *self = (TallyNoteRow *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  g_clear_pointer ((GtkWidget **) &self->icon, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->label, gtk_widget_unparent);

  G_OBJECT_CLASS (tally_note_row_parent_class)->dispose (object);
}

static void
tally_note_row_class_init (TallyNoteRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_note_row_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_note_row_bind;

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "tallynoterow");
}

static void
tally_note_row_init (TallyNoteRow *self)
{
  GtkLayoutManager *layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));

  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 8);

  self->icon = GTK_IMAGE (gtk_image_new ());
  gtk_widget_set_valign (GTK_WIDGET (self->icon), GTK_ALIGN_START);
  gtk_widget_set_parent (GTK_WIDGET (self->icon), GTK_WIDGET (self));

  self->label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->label, 0.0);
  gtk_label_set_wrap (self->label, TRUE);
  gtk_label_set_wrap_mode (self->label, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (self->label, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->label), TRUE);
  gtk_widget_set_parent (GTK_WIDGET (self->label), GTK_WIDGET (self));

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify", G_CALLBACK (sync_row), self);
}

/**
 * tally_note_row_new:
 *
 * Creates an empty one-line row.
 *
 * Returns: (transfer floating): a new #TallyNoteRow
 */
GtkWidget *
tally_note_row_new (void)
{
  return g_object_new (TALLY_TYPE_NOTE_ROW, NULL);
}


/**
 * tally_note_row_get_text:
 * @self: a #TallyNoteRow
 *
 * Returns: (transfer none): the line shown
 */
const char *
tally_note_row_get_text (TallyNoteRow *self)
{
  g_return_val_if_fail (TALLY_IS_NOTE_ROW (self), NULL);
  return gtk_label_get_text (self->label);
}
