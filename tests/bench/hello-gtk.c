/* SPDX-License-Identifier: GPL-3.0-or-later */

/* hello-gtk: the baseline of tests/bench/bench-startup.c, a GTK 4 hello
 * world — a GtkApplication with one window holding one label. It links
 * GTK only (that is the point of the comparison) and reports its first
 * painted frame with the same code as `tally` (src/ui/tally-bench-first-frame.c,
 * TALLY_BENCH_FIRST_FRAME). The window has the size Tally's window opens
 * at (1,100 × 740, the settings schema's default), so both paint as many
 * pixels. */

#include <gtk/gtk.h>

#include "tally-bench-first-frame.h"

static void
activate_cb (GtkApplication *app)
{
  GtkWidget *window = gtk_application_window_new (app);

  gtk_window_set_title (GTK_WINDOW (window), "Hello");
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 740);
  gtk_window_set_child (GTK_WINDOW (window), gtk_label_new ("Hello, world"));
  gtk_window_present (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  gint64 process_start_us = g_get_monotonic_time ();
  g_autoptr(GtkApplication) app = NULL;

  app = gtk_application_new ("io.github.tallyapp.HelloGtk", G_APPLICATION_DEFAULT_FLAGS);
  tally_bench_first_frame_watch (app, process_start_us);
  g_signal_connect (app, "activate", G_CALLBACK (activate_cb), NULL);
  return g_application_run (G_APPLICATION (app), argc, argv);
}
