/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-session-row"

#include "config.h"

#include "tally-session-rename-popover.h"

/*
 * A sidebar row's Rename popover: the session's name in an entry, and
 * Rename. The row makes it the first time the analyst renames the
 * session (docs/architecture.md §2.2): with its entry and button it was
 * about a fifth of making each of the sidebar's rows.
 */

/**
 * TallySessionRenamePopover:
 *
 * A #GtkPopover that asks for a session's new name.
 */
struct _TallySessionRenamePopover
{
  GtkPopover  parent_instance;

  GtkEntry   *entry;
  GtkButton  *rename_button;
};

G_DEFINE_FINAL_TYPE (TallySessionRenamePopover, tally_session_rename_popover, GTK_TYPE_POPOVER)

enum {
  SIGNAL_RENAME,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The entry's text, trimmed */
static char *
dup_name (TallySessionRenamePopover *self)
{
  return g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->entry))));
}

static void
entry_changed_cb (TallySessionRenamePopover *self)
{
  g_autofree char *name = dup_name (self);

  g_assert (TALLY_IS_SESSION_RENAME_POPOVER (self));

  gtk_widget_set_sensitive (GTK_WIDGET (self->rename_button), *name != '\0');
}

static void
entry_activate_cb (TallySessionRenamePopover *self)
{
  g_autofree char *name = dup_name (self);

  g_assert (TALLY_IS_SESSION_RENAME_POPOVER (self));

  if (*name == '\0')
    return;

  gtk_popover_popdown (GTK_POPOVER (self));
  g_signal_emit (self, signals[SIGNAL_RENAME], 0, name);
}

static void
tally_session_rename_popover_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_SESSION_RENAME_POPOVER);

  G_OBJECT_CLASS (tally_session_rename_popover_parent_class)->dispose (object);
}

static void
tally_session_rename_popover_class_init (TallySessionRenamePopoverClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_session_rename_popover_dispose;

  /**
   * TallySessionRenamePopover::rename:
   * @self: the popover
   * @name: the name typed, trimmed and not empty
   *
   * Emitted when the analyst presses Enter or Rename; the popover has
   * closed.
   */
  signals[SIGNAL_RENAME] =
    g_signal_new ("rename", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/window/tally-session-rename-popover.ui");
  gtk_widget_class_bind_template_child (widget_class, TallySessionRenamePopover, entry);
  gtk_widget_class_bind_template_child (widget_class, TallySessionRenamePopover, rename_button);
  gtk_widget_class_bind_template_callback (widget_class, entry_activate_cb);
  gtk_widget_class_bind_template_callback (widget_class, entry_changed_cb);
}

static void
tally_session_rename_popover_init (TallySessionRenamePopover *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * tally_session_rename_popover_new:
 *
 * Returns: (transfer floating): a new popover, to be parented to the row
 *   it renames
 */
GtkWidget *
tally_session_rename_popover_new (void)
{
  return g_object_new (TALLY_TYPE_SESSION_RENAME_POPOVER, NULL);
}

/**
 * tally_session_rename_popover_start:
 * @self: a #TallySessionRenamePopover
 * @title: the session's name now
 *
 * Opens the popover with @title in the entry, selected.
 */
void
tally_session_rename_popover_start (TallySessionRenamePopover *self,
                                    const char                *title)
{
  g_return_if_fail (TALLY_IS_SESSION_RENAME_POPOVER (self));
  g_return_if_fail (title != NULL);

  gtk_editable_set_text (GTK_EDITABLE (self->entry), title);
  gtk_popover_popup (GTK_POPOVER (self));
  gtk_widget_grab_focus (GTK_WIDGET (self->entry));
  gtk_editable_select_region (GTK_EDITABLE (self->entry), 0, -1);
}
