/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-user-bubble.h"

/**
 * TallyUserBubble:
 *
 * The analyst's message: a right-aligned bubble of selectable text, with a
 * small caption when the turn ran in plan or auto mode.
 */

struct _TallyUserBubble
{
  TallyBlockWidget parent_instance;

  GtkLabel   *mode_label;
  GtkLabel   *label;

};

G_DEFINE_FINAL_TYPE (TallyUserBubble, tally_user_bubble, TALLY_TYPE_BLOCK_WIDGET)

static void
sync_bubble (TallyUserBubble *self)
{
  TallyMode mode = TALLY_MODE_ASK;
  const char *caption = NULL;

  gtk_label_set_text (self->label, TALLY_BLOCK_WIDGET_BLOCK (self) != NULL ? tally_block_get_text (TALLY_BLOCK_WIDGET_BLOCK (self)) : "");

  /* The block's state is the turn's mode (tally_mode_to_string()); the
   * default mode says nothing. */
  if (TALLY_BLOCK_WIDGET_BLOCK (self) != NULL)
    tally_mode_from_string (tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self)), &mode);
  switch (mode)
    {
    case TALLY_MODE_PLAN:
      caption = _("Plan mode");
      break;
    case TALLY_MODE_AUTO:
      caption = _("Auto mode");
      break;
    case TALLY_MODE_ASK:
    default:
      break;
    }

  gtk_label_set_text (self->mode_label, caption != NULL ? caption : "");
  gtk_widget_set_visible (GTK_WIDGET (self->mode_label), caption != NULL);
}

/* Binding and unbinding both show the current block. */
static void
tally_user_bubble_bind (TallyBlockWidget *widget,
                        TallyBlock       *previous)
{
  TallyUserBubble *self = TALLY_USER_BUBBLE (widget);

  sync_bubble (self);
}

static void
tally_user_bubble_dispose (GObject *object)
{
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (object), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_USER_BUBBLE);

  G_OBJECT_CLASS (tally_user_bubble_parent_class)->dispose (object);
}

static void
tally_user_bubble_class_init (TallyUserBubbleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_user_bubble_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_user_bubble_bind;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-user-bubble.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyUserBubble, mode_label);
  gtk_widget_class_bind_template_child (widget_class, TallyUserBubble, label);
  gtk_widget_class_set_css_name (widget_class, "tallyuserbubble");
}

static void
tally_user_bubble_init (TallyUserBubble *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify", G_CALLBACK (sync_bubble), self);
}

/**
 * tally_user_bubble_new:
 *
 * Creates an empty bubble for a %TALLY_BLOCK_USER block.
 *
 * Returns: (transfer floating): a new #TallyUserBubble
 */
GtkWidget *
tally_user_bubble_new (void)
{
  return g_object_new (TALLY_TYPE_USER_BUBBLE, NULL);
}


/**
 * tally_user_bubble_get_text:
 * @self: a #TallyUserBubble
 *
 * Returns: (transfer none): the text shown in the bubble
 */
const char *
tally_user_bubble_get_text (TallyUserBubble *self)
{
  g_return_val_if_fail (TALLY_IS_USER_BUBBLE (self), NULL);
  return gtk_label_get_text (self->label);
}
