/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-test-ui.h"

static gboolean
heartbeat_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* A 20 ms heartbeat keeps g_main_context_iteration() from blocking forever
 * while SPIN_UNTIL() re-checks its condition. */
void
tally_test_heartbeat_start (guint *id)
{
  *id = g_timeout_add (20, heartbeat_cb, NULL);
}

gboolean
tally_test_deadline_passed (gint64 deadline)
{
  return g_get_monotonic_time () > deadline;
}

/* Runs whatever is ready on the main loop, without blocking. */
void
tally_test_spin_idle (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static gboolean
tick_cb (GtkWidget     *widget,
         GdkFrameClock *clock,
         gpointer       data)
{
  (*(guint *)data)++;
  return G_SOURCE_CONTINUE;
}

/* Waits for @n frames of @widget, so styles and layout are up to date. */
void
tally_test_wait_frames (GtkWidget *widget,
                        guint      n)
{
  guint frames = 0;
  guint id = gtk_widget_add_tick_callback (widget, tick_cb, &frames, NULL);

  gtk_widget_queue_draw (widget);
  SPIN_UNTIL (frames >= n);
  gtk_widget_remove_tick_callback (widget, id);
  tally_test_spin_idle ();
}
