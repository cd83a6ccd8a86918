/* SPDX-License-Identifier: GPL-3.0-or-later */

/* hello-gtk: the baseline of tests/bench/bench-startup.c, a GTK 4 hello
 * world — a GtkApplication with one window holding one label. It links
 * GTK only (that is the point of the comparison) and reports its first
 * painted frame with the same code as `tally` (src/ui/tally-bench-first-frame.c,
 * TALLY_BENCH_FIRST_FRAME). The window has the size Tally's window opens
 * at (1,100 × 740, the settings schema's default), so both paint as many
 * pixels.
 *
 * Built a second time with HELLO_ADW defined, as hello-adw: the same
 * window made with libadwaita (an AdwApplication, which loads libadwaita's
 * stylesheet and style manager at start-up as Tally's does, and an
 * AdwApplicationWindow). Issue 15's goal is against the GTK hello world;
 * hello-adw shows how much of that budget libadwaita takes before Tally
 * builds anything. */

#ifdef HELLO_ADW
#include <adwaita.h>
#define HELLO_ID  "io.github.tallyapp.HelloAdw"
#else
#include <gtk/gtk.h>
#define HELLO_ID  "io.github.tallyapp.HelloGtk"
#endif

#include "tally-bench-first-frame.h"

static void
activate_cb (GtkApplication *app)
{
  GtkWidget *label = gtk_label_new ("Hello, world");
#ifdef HELLO_ADW
  GtkWidget *window = adw_application_window_new (app);

  adw_application_window_set_content (ADW_APPLICATION_WINDOW (window), label);
#else
  GtkWidget *window = gtk_application_window_new (app);

  gtk_window_set_child (GTK_WINDOW (window), label);
#endif
  gtk_window_set_title (GTK_WINDOW (window), "Hello");
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 740);
  gtk_window_present (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  gint64 process_start_us = g_get_monotonic_time ();
  g_autoptr(GtkApplication) app = NULL;

#ifdef HELLO_ADW
  app = GTK_APPLICATION (adw_application_new (HELLO_ID, G_APPLICATION_DEFAULT_FLAGS));
#else
  app = gtk_application_new (HELLO_ID, G_APPLICATION_DEFAULT_FLAGS);
#endif
  tally_bench_first_frame_watch (app, process_start_us);
  g_signal_connect (app, "activate", G_CALLBACK (activate_cb), NULL);
  return g_application_run (G_APPLICATION (app), argc, argv);
}
