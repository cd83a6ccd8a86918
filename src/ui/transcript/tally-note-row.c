/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "tally-note-row.h"

/**
 * TallyNoteRow:
 *
 * One line with an icon, for the blocks that say something short: the
 * marker of a reply that was cut (%TALLY_BLOCK_INCOMPLETE), Tally's own
 * notices (%TALLY_BLOCK_NOTICE), and for now the approval, question and
 * plan cards, which show where they are and how they were settled until
 * their real cards replace them. The row carries a style class per kind
 * ("incomplete", "notice", "card-placeholder").
 */

struct _TallyNoteRow
{
  TallyBlockWidget parent_instance;

  GtkImage   *icon;
  GtkLabel   *label;

};

G_DEFINE_FINAL_TYPE (TallyNoteRow, tally_note_row, TALLY_TYPE_BLOCK_WIDGET)

static const char * const kind_classes[] = { "incomplete", "notice", "card-placeholder", NULL };

static const char *
approval_state (const char *state)
{
  if (state == NULL || g_str_equal (state, "pending"))
    return _("pending");
  if (g_str_equal (state, "deny"))
    return _("denied");
  if (g_str_equal (state, "allow_always"))
    return _("always allowed");
  if (g_str_equal (state, "allow_edited"))
    return _("allowed with changes");
  return _("allowed");
}

static const char *
question_state (const char *state)
{
  if (state == NULL || g_str_equal (state, "pending"))
    return _("waiting for your answer");
  if (g_str_equal (state, "user"))
    return _("answered");
  if (g_str_equal (state, "timeout"))
    return _("timed out");
  if (g_str_equal (state, "cancel"))
    return _("cancelled");
  return _("dismissed");
}

static void
sync_row (TallyNoteRow *self)
{
  g_autofree char *text = NULL;
  const char *icon = "dialog-information-symbolic";
  const char *css = "notice";
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);
  JsonObject *details;
  JsonNode *node;

  for (guint i = 0; kind_classes[i] != NULL; i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self), kind_classes[i]);

  if (block == NULL)
    {
      gtk_label_set_text (self->label, "");
      return;
    }

  switch (tally_block_get_kind (block))
    {
    case TALLY_BLOCK_INCOMPLETE:
      text = g_strdup (_("Reply interrupted before it finished"));
      icon = "media-playback-pause-symbolic";
      css = "incomplete";
      break;

    case TALLY_BLOCK_APPROVAL:
      /* Translators: a settled or waiting approval, e.g.
       * "Approval for query_database — allowed" */
      text = g_strdup_printf (_("Approval for %s — %s"),
                              tally_block_get_tool_name (block) ? tally_block_get_tool_name (block) : "?",
                              approval_state (tally_block_get_state (block)));
      icon = "dialog-password-symbolic";
      css = "card-placeholder";
      break;

    case TALLY_BLOCK_QUESTION:
      /* Translators: e.g. "Question — answered" */
      text = g_strdup_printf (_("Question — %s"), question_state (tally_block_get_state (block)));
      icon = "dialog-question-symbolic";
      css = "card-placeholder";
      break;

    case TALLY_BLOCK_PLAN:
      details = tally_block_get_details (block);
      node = details != NULL ? json_object_get_member (details, "version") : NULL;
      if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64)
        /* Translators: a plan the model proposed, with its version */
        text = g_strdup_printf (_("Plan proposed — version %d"), (int) json_node_get_int (node));
      else
        text = g_strdup (_("Plan proposed"));
      icon = "view-list-bullet-symbolic";
      css = "card-placeholder";
      break;

    case TALLY_BLOCK_CHART:
      /* Translators: a chart the agent drew, with its title */
      text = g_strdup_printf (_("Chart — %s"), tally_block_get_text (block) ? tally_block_get_text (block) : "");
      icon = "image-x-generic-symbolic";
      css = "card-placeholder";
      break;

    case TALLY_BLOCK_NOTICE:
    case TALLY_BLOCK_FILE:
    case TALLY_BLOCK_USER:
    case TALLY_BLOCK_TEXT:
    case TALLY_BLOCK_THINKING:
    case TALLY_BLOCK_TOOL_CALL:
    case TALLY_BLOCK_RECEIPT:
    case TALLY_BLOCK_ERROR:
    default:
      text = g_strdup (tally_block_get_text (block));
      break;
    }

  gtk_widget_add_css_class (GTK_WIDGET (self), css);
  gtk_image_set_from_icon_name (self->icon, icon);
  gtk_label_set_text (self->label, text);
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
