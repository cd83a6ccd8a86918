/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include "tally-markdown-link.h"
#include "tally-markdown-view-private.h"

/*
 * Links in a TallyMarkdownView's text, followed with the pointer (a click
 * that selected nothing) or the keyboard (Enter with the cursor on one),
 * and the pointer's shape over them. Part of TallyMarkdownView
 * (tally-markdown-view.c); the template's controllers call these.
 */

static const char *
link_at_buffer_coords (TallyMarkdownView *self,
                       int                x,
                       int                y)
{
  GtkTextIter iter;

  if (!gtk_text_view_get_iter_at_location (GTK_TEXT_VIEW (self->text_view), &iter, x, y))
    return NULL;
  return tally_markdown_iter_get_link (&iter);
}

/**
 * tally_markdown_view_click_at:
 * @self: a markdown view
 * @buffer_x: x in buffer coordinates
 * @buffer_y: y in buffer coordinates
 *
 * Does what a primary click (without a selection) at the given place
 * does: activates the link there, if any.
 *
 * Returns: whether there was a link
 */
gboolean
tally_markdown_view_click_at (TallyMarkdownView *self,
                              int                buffer_x,
                              int                buffer_y)
{
  const char *url;
  g_autofree char *copy = NULL;

  g_return_val_if_fail (TALLY_IS_MARKDOWN_VIEW (self), FALSE);

  url = link_at_buffer_coords (self, buffer_x, buffer_y);
  if (url == NULL)
    return FALSE;

  /* The tag (owner of the string) may go away while handlers run. */
  copy = g_strdup (url);
  _tally_markdown_view_activate_link (self, copy);
  return TRUE;
}

static void
click_released_cb (GtkGestureClick   *gesture,
                   int                n_press,
                   double             x,
                   double             y,
                   TallyMarkdownView *self)
{
  GtkTextIter start, end;
  int bx, by;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  if (n_press != 1)
    return;

  /* Releasing after a drag-select must not follow a link. */
  if (gtk_text_buffer_get_selection_bounds (self->buffer, &start, &end))
    return;

  gtk_text_view_window_to_buffer_coords (GTK_TEXT_VIEW (self->text_view),
                                         GTK_TEXT_WINDOW_WIDGET,
                                         (int)x, (int)y, &bx, &by);
  tally_markdown_view_click_at (self, bx, by);
}

static void
motion_cb (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           TallyMarkdownView        *self)
{
  int bx, by;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  gtk_text_view_window_to_buffer_coords (GTK_TEXT_VIEW (self->text_view),
                                         GTK_TEXT_WINDOW_WIDGET,
                                         (int)x, (int)y, &bx, &by);
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self->text_view),
                                   link_at_buffer_coords (self, bx, by) != NULL ? "pointer" : "text");
}

static void
leave_cb (GtkEventControllerMotion *controller,
          TallyMarkdownView        *self)
{
  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  gtk_widget_set_cursor_from_name (GTK_WIDGET (self->text_view), "text");
}

static gboolean
key_pressed_cb (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                TallyMarkdownView     *self)
{
  GtkTextIter iter;
  const char *url;
  g_autofree char *copy = NULL;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  if (keyval != GDK_KEY_Return && keyval != GDK_KEY_KP_Enter && keyval != GDK_KEY_ISO_Enter)
    return FALSE;

  gtk_text_buffer_get_iter_at_mark (self->buffer, &iter, gtk_text_buffer_get_insert (self->buffer));
  url = tally_markdown_iter_get_link (&iter);
  if (url == NULL)
    return FALSE;

  copy = g_strdup (url);
  _tally_markdown_view_activate_link (self, copy);
  return TRUE;
}

/**
 * _tally_markdown_view_bind_input:
 * @widget_class: TallyMarkdownView's class, in its class_init
 *
 * Binds the template's click, motion and key controllers to the handlers
 * of this file.
 */
void
_tally_markdown_view_bind_input (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_callback (widget_class, click_released_cb);
  gtk_widget_class_bind_template_callback (widget_class, motion_cb);
  gtk_widget_class_bind_template_callback (widget_class, leave_cb);
  gtk_widget_class_bind_template_callback (widget_class, key_pressed_cb);
}
