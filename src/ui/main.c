/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally: the GTK face of Tally (docs/architecture.md §11.1). */

#define G_LOG_DOMAIN "tally"

#include "config.h"

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <stdio.h>

#include "tally-application.h"
#include "tally-secret-env.h"

/* Benchmark hook (tests/bench/bench-app-open.c): with TALLY_BENCH_FIRST_FRAME
 * set, print the time from process start to the first frame painted by the
 * first window, then quit. Nothing else changes. */

static gint64 process_start_us;

static void
first_frame_cb (GdkFrameClock *clock,
                GApplication  *app)
{
  g_assert (GDK_IS_FRAME_CLOCK (clock));
  g_assert (G_IS_APPLICATION (app));

  g_signal_handlers_disconnect_by_func (clock, first_frame_cb, app);
  printf ("first-frame-ms %.1f\n", (g_get_monotonic_time () - process_start_us) / 1000.0);
  fflush (stdout);
  g_application_quit (app);
}

static void
window_mapped_cb (GtkWidget    *window,
                  GApplication *app)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (window);

  g_assert (GTK_IS_WIDGET (window));
  g_assert (G_IS_APPLICATION (app));

  if (clock != NULL)
    g_signal_connect (clock, "after-paint", G_CALLBACK (first_frame_cb), app);
}

static void
window_added_cb (GtkApplication *app,
                 GtkWindow      *window)
{
  g_assert (GTK_IS_APPLICATION (app));
  g_assert (GTK_IS_WINDOW (window));

  g_signal_connect_after (window, "map", G_CALLBACK (window_mapped_cb), app);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(TallyApplication) app = NULL;
  g_autoptr(TallySecret) api_key = NULL;

  process_start_us = g_get_monotonic_time ();

  /* The key leaves the environment first, before any thread starts and
   * before anything could run a command that reads /proc/PID/environ
   * (docs/security.md, "Processes and secrets"). */
  api_key = tally_secret_env_take ("ANTHROPIC_API_KEY");

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  g_set_application_name (_("Tally"));

  /* Without its settings schema GSettings would abort; say why instead. */
  {
    g_autoptr(GSettingsSchema) schema = NULL;
    g_autoptr(GError) error = NULL;

    schema = tally_application_lookup_settings_schema (&error);
    if (schema == NULL)
      {
        g_printerr ("tally: %s\n", error->message);
        return 1;
      }
  }

  app = tally_application_new ();
  tally_application_set_environment_api_key (app, api_key);
  if (g_getenv ("TALLY_BENCH_FIRST_FRAME") != NULL)
    g_signal_connect (app, "window-added", G_CALLBACK (window_added_cb), NULL);

  return g_application_run (G_APPLICATION (app), argc, argv);
}
