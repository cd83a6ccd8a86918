/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <math.h>

#include "tally-scroll-forward.h"

/*
 * Wide content that scrolls sideways (code blocks, tables) sits inside a
 * conversation that scrolls up and down. A GtkScrolledWindow takes every
 * scroll event over it, even a vertical one it cannot use, so without help
 * the mouse wheel stops scrolling the conversation whenever the pointer
 * passes over a code block (issue 14 §3). The controller here sees the
 * event first (capture phase) and hands a vertical one to the nearest
 * scrolled window around: only Shift with the wheel, or a sideways swipe,
 * scrolls the block itself.
 *
 * That the content goes on past an edge is shown by the style sheet: a
 * fade on the scrolled window's undershoot at that edge.
 */

#define CONTROLLER_NAME "tally-scroll-forward"

/**
 * tally_scroll_forward_is_vertical:
 * @dx: the horizontal scroll delta (wheel steps or pixels)
 * @dy: the vertical scroll delta, in the same unit
 * @state: the modifiers held during the scroll
 *
 * Tells whether a scroll is meant for the conversation rather than for
 * the wide content under the pointer: it moves more up or down than
 * sideways, and Shift (which turns a wheel sideways) is not held.
 *
 * Returns: %TRUE when the scroll should move the enclosing view
 */
gboolean
tally_scroll_forward_is_vertical (double          dx,
                                  double          dy,
                                  GdkModifierType state)
{
  if ((state & GDK_SHIFT_MASK) != 0)
    return FALSE;
  return fabs (dy) > fabs (dx);
}

static GtkScrolledWindow *
outer_scroller (GtkWidget *scroller)
{
  GtkWidget *parent = gtk_widget_get_parent (scroller);

  return parent != NULL ? GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (parent, GTK_TYPE_SCROLLED_WINDOW)) : NULL;
}

static gboolean
scroll_cb (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           gpointer                  user_data)
{
  GtkWidget *scroller = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  GtkScrolledWindow *outer;
  GtkAdjustment *adjustment;
  double step, value;

  if (!tally_scroll_forward_is_vertical (dx, dy, state))
    return GDK_EVENT_PROPAGATE;

  outer = outer_scroller (scroller);
  if (outer == NULL)
    return GDK_EVENT_PROPAGATE;

  /* A wheel step moves as far as GtkScrolledWindow moves for one (the
   * page size to the power ⅔); a touchpad gives pixels. */
  adjustment = gtk_scrolled_window_get_vadjustment (outer);
  if (gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_WHEEL)
    step = pow (gtk_adjustment_get_page_size (adjustment), 2.0 / 3.0);
  else
    step = 1.0;
  value = gtk_adjustment_get_value (adjustment) + dy * step;
  gtk_adjustment_set_value (adjustment,
                            CLAMP (value, gtk_adjustment_get_lower (adjustment),
                                   gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment)));
  return GDK_EVENT_STOP;
}

/**
 * tally_scroll_forward_vertical:
 * @scroller: a scrolled window that scrolls its content sideways only
 *
 * Lets a vertical wheel or touchpad scroll over @scroller move the nearest
 * scrolled window that contains it (the conversation), while Shift with
 * the wheel or a sideways swipe still scrolls @scroller's content. Adds a
 * #GtkEventControllerScroll named "tally-scroll-forward" to @scroller, in
 * the capture phase.
 */
void
tally_scroll_forward_vertical (GtkScrolledWindow *scroller)
{
  GtkEventController *controller;

  g_return_if_fail (GTK_IS_SCROLLED_WINDOW (scroller));

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  gtk_event_controller_set_name (controller, CONTROLLER_NAME);
  gtk_event_controller_set_propagation_phase (controller, GTK_PHASE_CAPTURE);
  g_signal_connect (controller, "scroll", G_CALLBACK (scroll_cb), NULL);
  gtk_widget_add_controller (GTK_WIDGET (scroller), controller);
}
