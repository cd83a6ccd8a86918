/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-receipt-row.h"

/**
 * TallyReceiptRow:
 *
 * A turn's receipt: one small, dim line with what the turn cost in money,
 * tokens, calls and time. Its accessible label is a sentence ("Reply
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

static gint64
member_int (JsonObject *object,
            const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return 0;
  if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    return (gint64) json_node_get_double (node);
  return json_node_get_int (node);
}

static char *
format_count (gint64 n)
{
  /* The ' flag groups thousands the way the locale does. */
  return g_strdup_printf ("%'" G_GINT64_FORMAT, n);
}

static char *
format_duration (gint64 ms)
{
  char number[G_ASCII_DTOSTR_BUF_SIZE];

  if (ms < 0)
    ms = 0;
  if (ms < 60 * 1000)
    /* Translators: a duration in seconds, e.g. "3.4 s" */
    return g_strdup_printf (_("%s s"), g_ascii_formatd (number, sizeof number, "%.1f", ms / 1000.0));

  /* Translators: a duration in minutes and seconds, e.g. "2 min 5 s" */
  return g_strdup_printf (_("%d min %d s"), (int) (ms / 60000), (int) ((ms / 1000) % 60));
}

/**
 * tally_receipt_format:
 * @status: (nullable): the turn's status: `done`, `cancelled` or `failed`
 * @details: (nullable): the `turn_finished` event: `cost_usd` (dollars, a
 *   number, or null when the price is unknown), `duration_ms`, `api_calls`
 *   and `usage` with the API's token fields
 *
 * Writes a receipt line, e.g. "Done · $0.0123 · 1,200 tokens in, 340 out
 * · cache 800 read, 120 written · 2 API calls · 3.4 s". The cost keeps
 * four decimals (as `tally-cli --list` does); the cache part is left out
 * when nothing was read from or written to the cache.
 *
 * Returns: (transfer full): the line
 */
char *
tally_receipt_format (const char *status,
                      JsonObject *details)
{
  GString *out = g_string_new (NULL);
  JsonObject *usage = NULL;
  JsonNode *node;
  gint64 cache_read;
  gint64 cache_written;
  gint64 calls;

  if (g_strcmp0 (status, "cancelled") == 0)
    g_string_append (out, _("Stopped"));
  else if (g_strcmp0 (status, "failed") == 0)
    g_string_append (out, _("Failed"));
  else
    g_string_append (out, _("Done"));

  node = details != NULL ? json_object_get_member (details, "cost_usd") : NULL;
  g_string_append (out, " · ");
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      (json_node_get_value_type (node) == G_TYPE_DOUBLE || json_node_get_value_type (node) == G_TYPE_INT64))
    {
      char number[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (out, "$%s",
                              g_ascii_formatd (number, sizeof number, "%.4f", json_node_get_double (node)));
    }
  else
    g_string_append (out, _("price unknown"));

  node = details != NULL ? json_object_get_member (details, "usage") : NULL;
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    usage = json_node_get_object (node);

  {
    g_autofree char *in = format_count (member_int (usage, "input_tokens"));
    g_autofree char *out_tokens = format_count (member_int (usage, "output_tokens"));

    g_string_append (out, " · ");
    /* Translators: input and output tokens, e.g. "1,200 tokens in, 340 out" */
    g_string_append_printf (out, _("%s tokens in, %s out"), in, out_tokens);
  }

  cache_read = member_int (usage, "cache_read_input_tokens");
  cache_written = member_int (usage, "cache_creation_input_tokens");
  if (cache_read > 0 || cache_written > 0)
    {
      g_autofree char *read = format_count (cache_read);
      g_autofree char *written = format_count (cache_written);

      g_string_append (out, " · ");
      /* Translators: prompt-cache tokens, e.g. "cache 800 read, 120 written" */
      g_string_append_printf (out, _("cache %s read, %s written"), read, written);
    }

  calls = member_int (details, "api_calls");
  g_string_append (out, " · ");
  g_string_append_printf (out, ngettext ("%u API call", "%u API calls", (gulong) calls),
                          (guint) calls);

  {
    g_autofree char *duration = format_duration (member_int (details, "duration_ms"));

    g_string_append (out, " · ");
    g_string_append (out, duration);
  }

  return g_string_free (out, FALSE);
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
  TALLY_BLOCK_WIDGET_CLASS (klass)->unbind = tally_receipt_row_bind;


  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "tallyreceiptrow");
}

static void
tally_receipt_row_init (TallyReceiptRow *self)
{
  GtkLayoutManager *layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));

  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 6);

  self->icon = GTK_IMAGE (gtk_image_new_from_icon_name ("emblem-ok-symbolic"));
  gtk_widget_set_valign (GTK_WIDGET (self->icon), GTK_ALIGN_START);
  gtk_widget_add_css_class (GTK_WIDGET (self->icon), "dim-label");
  gtk_widget_set_parent (GTK_WIDGET (self->icon), GTK_WIDGET (self));

  self->label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->label, 0.0);
  gtk_label_set_wrap (self->label, TRUE);
  gtk_label_set_selectable (self->label, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->label), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->label), "caption");
  gtk_widget_add_css_class (GTK_WIDGET (self->label), "dim-label");
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
