/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally: the GTK face of Tally (docs/architecture.md §11.1). */

#define G_LOG_DOMAIN "tally"

#include "config.h"

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <locale.h>

#include "tally-application.h"
#include "tally-bench-first-frame.h"
#include "tally-secret-env.h"

int
main (int    argc,
      char **argv)
{
  gint64 process_start_us = g_get_monotonic_time ();
  g_autoptr(TallyApplication) app = NULL;
  g_autoptr(TallySecret) api_key = NULL;

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
  /* Benchmarks (tests/bench/bench-app-open.c, bench-startup.c): with
   * TALLY_BENCH_FIRST_FRAME set, report the first frame painted by the
   * first window. Nothing else changes. */
  tally_bench_first_frame_watch (GTK_APPLICATION (app), process_start_us);

  return g_application_run (G_APPLICATION (app), argc, argv);
}
