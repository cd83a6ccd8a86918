/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-thinking-drawer.h"

/**
 * TallyThinkingDrawer:
 *
 * The model's thinking in a collapsed drawer. The title says "Thinking…"
 * while the block streams and "Thought for N words" once it is finished
 * (or cut: a reply that was interrupted streams no more).
 * The text inside is only kept current while the drawer is open, and then
 * at most once per frame: thinking streams many small deltas.
 *
 * Whether a drawer is open is remembered on the block, so a row that
 * scrolls away and is recycled comes back as the analyst left it.
 */

struct _TallyThinkingDrawer
{
  TallyBlockWidget parent_instance;

  GtkExpander *expander;
  GtkSpinner  *spinner;
  GtkLabel    *title_label;
  GtkLabel    *text_label;

  guint        tick_id;
};

G_DEFINE_FINAL_TYPE (TallyThinkingDrawer, tally_thinking_drawer, TALLY_TYPE_BLOCK_WIDGET)

static void
sync_text (TallyThinkingDrawer *self)
{
  gtk_label_set_text (self->text_label, TALLY_BLOCK_WIDGET_BLOCK (self) != NULL ? tally_block_get_text (TALLY_BLOCK_WIDGET_BLOCK (self)) : "");
}

static gboolean
sync_text_tick_cb (GtkWidget     *widget,
                   GdkFrameClock *clock,
                   gpointer       user_data)
{
  TallyThinkingDrawer *self = TALLY_THINKING_DRAWER (widget);

  g_assert (TALLY_IS_THINKING_DRAWER (self));

  self->tick_id = 0;
  sync_text (self);
  return G_SOURCE_REMOVE;
}

static void
sync_title (TallyThinkingDrawer *self)
{
  g_autofree char *title = NULL;
  gboolean streaming = TALLY_BLOCK_WIDGET_BLOCK (self) != NULL &&
                       !tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)) &&
                       !tally_block_get_incomplete (TALLY_BLOCK_WIDGET_BLOCK (self));

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    title = g_strdup ("");
  else if (streaming)
    title = g_strdup (_("Thinking…"));
  else
    {
      guint words = tally_block_get_word_count (TALLY_BLOCK_WIDGET_BLOCK (self));

      title = g_strdup_printf (ngettext ("Thought for %u word", "Thought for %u words", words), words);
    }

  gtk_label_set_text (self->title_label, title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->expander),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, title,
                                  -1);

  gtk_widget_set_visible (GTK_WIDGET (self->spinner), streaming);
  gtk_spinner_set_spinning (self->spinner, streaming);
}

static void
block_text_changed_cb (TallyThinkingDrawer *self)
{
  g_assert (TALLY_IS_THINKING_DRAWER (self));

  if (!gtk_expander_get_expanded (self->expander) || self->tick_id != 0)
    return;

  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), sync_text_tick_cb, NULL, NULL);
  else
    sync_text (self);
}

static void
expanded_changed_cb (TallyThinkingDrawer *self)
{
  gboolean expanded = gtk_expander_get_expanded (self->expander);

  g_assert (TALLY_IS_THINKING_DRAWER (self));

  tally_block_widget_set_expanded (TALLY_BLOCK_WIDGET (self), expanded);
  if (expanded)
    sync_text (self);
}

/* Binding and unbinding both show the current block. */
static void
tally_thinking_drawer_bind (TallyBlockWidget *widget,
                            TallyBlock       *previous)
{
  TallyThinkingDrawer *self = TALLY_THINKING_DRAWER (widget);
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);   /* NULL when unbinding */

  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }

  /* Writes the block's own state back to it (or nothing when unbinding). */
  gtk_expander_set_expanded (self->expander, tally_block_widget_get_expanded (widget));

  sync_title (self);
  if (block == NULL || gtk_expander_get_expanded (self->expander))
    sync_text (self);
}

static void
tally_thinking_drawer_dispose (GObject *object)
{
  TallyThinkingDrawer *self = (TallyThinkingDrawer *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_THINKING_DRAWER);

  G_OBJECT_CLASS (tally_thinking_drawer_parent_class)->dispose (object);
}

static void
tally_thinking_drawer_class_init (TallyThinkingDrawerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_thinking_drawer_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_thinking_drawer_bind;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-thinking-drawer.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyThinkingDrawer, expander);
  gtk_widget_class_bind_template_child (widget_class, TallyThinkingDrawer, spinner);
  gtk_widget_class_bind_template_child (widget_class, TallyThinkingDrawer, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallyThinkingDrawer, text_label);
  gtk_widget_class_set_css_name (widget_class, "tallythinkingdrawer");
}

static void
tally_thinking_drawer_init (TallyThinkingDrawer *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_connect_object (self->expander, "notify::expanded",
                           G_CALLBACK (expanded_changed_cb), self, G_CONNECT_SWAPPED);

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::text", G_CALLBACK (block_text_changed_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::finished", G_CALLBACK (sync_title), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::incomplete", G_CALLBACK (sync_title), self);
}

/**
 * tally_thinking_drawer_new:
 *
 * Creates an empty drawer for a %TALLY_BLOCK_THINKING block.
 *
 * Returns: (transfer floating): a new #TallyThinkingDrawer
 */
GtkWidget *
tally_thinking_drawer_new (void)
{
  return g_object_new (TALLY_TYPE_THINKING_DRAWER, NULL);
}


/**
 * tally_thinking_drawer_get_title:
 * @self: a #TallyThinkingDrawer
 *
 * Returns: (transfer none): the drawer's title, e.g. "Thinking…" or
 *   "Thought for 12 words"
 */
const char *
tally_thinking_drawer_get_title (TallyThinkingDrawer *self)
{
  g_return_val_if_fail (TALLY_IS_THINKING_DRAWER (self), NULL);
  return gtk_label_get_text (self->title_label);
}

/**
 * tally_thinking_drawer_get_expander:
 * @self: a #TallyThinkingDrawer
 *
 * Returns: (transfer none): the drawer's expander
 */
GtkExpander *
tally_thinking_drawer_get_expander (TallyThinkingDrawer *self)
{
  g_return_val_if_fail (TALLY_IS_THINKING_DRAWER (self), NULL);
  return self->expander;
}

/**
 * tally_thinking_drawer_get_text:
 * @self: a #TallyThinkingDrawer
 *
 * Returns: (transfer none): the thinking text the drawer shows (kept
 *   current only while it is open)
 */
const char *
tally_thinking_drawer_get_text (TallyThinkingDrawer *self)
{
  g_return_val_if_fail (TALLY_IS_THINKING_DRAWER (self), NULL);
  return gtk_label_get_text (self->text_label);
}
