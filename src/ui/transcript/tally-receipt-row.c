/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-receipt-row.h"

#include "tally-receipt.h"

/**
 * TallyReceiptRow:
 *
 * A turn's receipt: one line with what the turn cost in money, tokens,
 * calls and time, with the figures and grouping tally-cli prints (the
 * core's formatter, tally_receipt_dup_line()), in a readable size and a
 * quieter colour that keeps its contrast (the stylesheet). Its
 * accessible label is a sentence ("Reply
 * finished: …") so a screen reader reading the list hears where a reply
 * ends.
 */

struct _TallyReceiptRow
{
  TallyBlockWidget parent_instance;

  GtkImage   *icon;
  GtkLabel   *label;

};

G_DEFINE_FINAL_TYPE (TallyReceiptRow, tally_receipt_row, TALLY_TYPE_BLOCK_WIDGET)

/**
 * tally_receipt_format:
 * @status: (nullable): the turn's status: `done`, `cancelled` or `failed`
 * @details: (nullable): the `turn_finished` event: `cost_usd` (dollars, a
 *   number, or null when the price is unknown), `duration_ms`, `api_calls`
 *   and `usage` with the API's token fields
 *
 * Writes the window's receipt line with the core's receipt formatter
 * (tally_receipt_dup_line(), %TALLY_RECEIPT_STYLE_WINDOW), e.g. "Done ·
 * $0.0123 · 1,200 in · 340 out · cache 800 read, 120 written · 2 API calls
 * · 3.4 s".
 *
 * Returns: (transfer full): the line
 */
char *
tally_receipt_format (const char *status,
                      JsonObject *details)
{
  TallyReceipt receipt;

  tally_receipt_init (&receipt, details);
  receipt.status = status;
  return tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_WINDOW);
}

static void
sync_receipt (TallyReceiptRow *self)
{
  g_autofree char *text = NULL;
  g_autofree char *accessible = NULL;
  const char *state;
  const char *icon = "emblem-ok-symbolic";

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    {
      gtk_label_set_text (self->label, "");
      return;
    }

  state = tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self));
  if (g_strcmp0 (state, "cancelled") == 0)
    icon = "media-playback-stop-symbolic";
  else if (g_strcmp0 (state, "failed") == 0)
    icon = "dialog-warning-symbolic";
  gtk_image_set_from_icon_name (self->icon, icon);
  if (g_strcmp0 (state, "failed") == 0)
    gtk_widget_add_css_class (GTK_WIDGET (self), "failed");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self), "failed");

  text = tally_receipt_format (state, tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self)));
  gtk_label_set_text (self->label, text);

  /* Translators: read by screen readers at the end of each reply */
  accessible = g_strdup_printf (_("Reply finished: %s"), text);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
                                  -1);
}

/* Binding and unbinding both show the current block. */
static void
tally_receipt_row_bind (TallyBlockWidget *widget,
                        TallyBlock       *previous)
{
  TallyReceiptRow *self = TALLY_RECEIPT_ROW (widget);

  sync_receipt (self);
}

/* Between the icon and the label, in px. */
#define SPACING 6

/* The icon at the start, the wrapping label in the rest of the width, as a
 * horizontal GtkBoxLayout placed them. GTK 4.8's box found its height for
 * a width by bisection over heights, asking the label its width for each
 * one, which GtkLabel answers by bisection over widths: the first frame of
 * a long session laid each receipt's line out about 40 times (190 layouts
 * for its rows; docs/architecture.md §11.1, "Opening a long session").
 * The icon's width is fixed, so the label's width is known at once. */
static void
tally_receipt_row_measure (GtkWidget      *widget,
                           GtkOrientation  orientation,
                           int             for_size,
                           int            *minimum,
                           int            *natural,
                           int            *minimum_baseline,
                           int            *natural_baseline)
{
  TallyReceiptRow *self = TALLY_RECEIPT_ROW (widget);
  int icon_min, icon_nat, label_min, label_nat;

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      gtk_widget_measure (GTK_WIDGET (self->icon), orientation, -1, &icon_min, &icon_nat, NULL, NULL);
      gtk_widget_measure (GTK_WIDGET (self->label), orientation, -1, &label_min, &label_nat, NULL, NULL);
      *minimum = icon_min + SPACING + label_min;
      *natural = icon_nat + SPACING + label_nat;
    }
  else
    {
      int label_width = -1;

      if (for_size >= 0)
        {
          int icon_width;

          gtk_widget_measure (GTK_WIDGET (self->icon), GTK_ORIENTATION_HORIZONTAL, -1, NULL, &icon_width, NULL, NULL);
          label_width = MAX (0, for_size - icon_width - SPACING);
        }
      gtk_widget_measure (GTK_WIDGET (self->icon), orientation, -1, &icon_min, &icon_nat, NULL, NULL);
      gtk_widget_measure (GTK_WIDGET (self->label), orientation, label_width, &label_min, &label_nat, NULL, NULL);
      *minimum = MAX (icon_min, label_min);
      *natural = MAX (icon_nat, label_nat);
    }
  *minimum_baseline = *natural_baseline = -1;
}

static void
tally_receipt_row_size_allocate (GtkWidget *widget,
                                 int        width,
                                 int        height,
                                 int        baseline)
{
  TallyReceiptRow *self = TALLY_RECEIPT_ROW (widget);
  int icon_width, label_width;
  gboolean rtl = gtk_widget_get_direction (widget) == GTK_TEXT_DIR_RTL;

  gtk_widget_measure (GTK_WIDGET (self->icon), GTK_ORIENTATION_HORIZONTAL, -1, NULL, &icon_width, NULL, NULL);
  icon_width = MIN (icon_width, width);
  label_width = MAX (0, width - icon_width - SPACING);
  gtk_widget_size_allocate (GTK_WIDGET (self->icon),
                            &(GtkAllocation) { rtl ? width - icon_width : 0, 0, icon_width, height }, -1);
  gtk_widget_size_allocate (GTK_WIDGET (self->label),
                            &(GtkAllocation) { rtl ? 0 : width - label_width, 0, label_width, height }, -1);
}

static GtkSizeRequestMode
tally_receipt_row_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
tally_receipt_row_dispose (GObject *object)
{
  TallyReceiptRow *self = (TallyReceiptRow *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);

  g_clear_pointer ((GtkWidget **) &self->icon, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->label, gtk_widget_unparent);

  G_OBJECT_CLASS (tally_receipt_row_parent_class)->dispose (object);
}

static void
tally_receipt_row_class_init (TallyReceiptRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_receipt_row_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_receipt_row_bind;

  widget_class->measure = tally_receipt_row_measure;
  widget_class->size_allocate = tally_receipt_row_size_allocate;
  widget_class->get_request_mode = tally_receipt_row_get_request_mode;
  gtk_widget_class_set_css_name (widget_class, "tallyreceiptrow");
}

static void
tally_receipt_row_init (TallyReceiptRow *self)
{
  self->icon = GTK_IMAGE (gtk_image_new_from_icon_name ("emblem-ok-symbolic"));
  gtk_widget_set_valign (GTK_WIDGET (self->icon), GTK_ALIGN_START);
  gtk_widget_set_parent (GTK_WIDGET (self->icon), GTK_WIDGET (self));

  self->label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->label, 0.0);
  gtk_label_set_wrap (self->label, TRUE);
  gtk_label_set_selectable (self->label, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->label), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->label), "numeric");
  gtk_widget_set_parent (GTK_WIDGET (self->label), GTK_WIDGET (self));

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify", G_CALLBACK (sync_receipt), self);
}

/**
 * tally_receipt_row_new:
 *
 * Creates an empty row for a %TALLY_BLOCK_RECEIPT block.
 *
 * Returns: (transfer floating): a new #TallyReceiptRow
 */
GtkWidget *
tally_receipt_row_new (void)
{
  return g_object_new (TALLY_TYPE_RECEIPT_ROW, NULL);
}


/**
 * tally_receipt_row_get_text:
 * @self: a #TallyReceiptRow
 *
 * Returns: (transfer none): the receipt line shown
 */
const char *
tally_receipt_row_get_text (TallyReceiptRow *self)
{
  g_return_val_if_fail (TALLY_IS_RECEIPT_ROW (self), NULL);
  return gtk_label_get_text (self->label);
}
