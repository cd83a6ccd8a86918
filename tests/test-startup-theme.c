/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * Start-up (issue 15, "Start like a hello world"):
 * tally_application_skip_gtk_stylesheet() makes the display's GtkSettings
 * with libadwaita's empty theme instead of parsing GTK's own stylesheet,
 * which libadwaita replaces as soon as it starts (docs/architecture.md
 * §11.1, "Start-up"). What must hold:
 *
 * - after the start-up, GTK_THEME is no longer in the environment, so
 *   nothing the application spawns inherits it, and libadwaita's
 *   stylesheet is in force (a "title-1" label is larger than a plain one);
 * - a GTK_THEME the user set is left as it was, for GTK and for what
 *   the application spawns.
 *
 * Each case runs in a process of its own, since GTK opens its display and
 * makes its settings once a process. The saving itself is measured by
 * tests/bench/bench-startup.c, never here.
 */

#include "config.h"

#include <adwaita.h>

#include "tally-application.h"
#include "tally-test-app.h"
#include "tally-test-util.h"

/* The natural height of a label reading "Tally", with @css_class. */
static int
label_height (const char *css_class)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *label = gtk_label_new ("Tally");
  int height;

  if (css_class != NULL)
    gtk_widget_add_css_class (label, css_class);
  gtk_window_set_child (GTK_WINDOW (window), label);
  gtk_widget_measure (label, GTK_ORIENTATION_VERTICAL, -1, NULL, &height, NULL, NULL);
  gtk_window_destroy (GTK_WINDOW (window));
  return height;
}

/* Registers (and so starts) a Tally application that is not the unique
 * instance, after tally_application_skip_gtk_stylesheet(). */
static TallyApplication *
start_application (void)
{
  g_autoptr(TallyApplication) app = tally_application_new ();
  g_autoptr(GError) error = NULL;

  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  tally_application_skip_gtk_stylesheet (app);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&app);
}

/* /tally/startup-theme/empty-theme-first */
static void
test_empty_theme_first (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(TallyApplication) app = NULL;
      g_autofree char *theme = NULL;

      g_unsetenv ("GTK_THEME");
      app = tally_application_new ();
      tally_application_skip_gtk_stylesheet (app);
      g_assert_cmpstr (g_getenv ("GTK_THEME"), ==, "Adwaita-empty");
      g_clear_object (&app);
      /* Never started: a second call sees the variable as the user's. */
      g_unsetenv ("GTK_THEME");

      app = start_application ();
      g_assert_null (g_getenv ("GTK_THEME"));
      g_object_get (gtk_settings_get_default (), "gtk-theme-name", &theme, NULL);
      g_assert_cmpstr (theme, ==, "Adwaita-empty");
      g_assert_cmpint (label_height ("title-1"), >, label_height (NULL));
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* /tally/startup-theme/user-theme-kept */
static void
test_user_theme_kept (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(TallyApplication) app = NULL;

      g_setenv ("GTK_THEME", "Default", TRUE);
      app = start_application ();
      g_assert_cmpstr (g_getenv ("GTK_THEME"), ==, "Default");
      g_assert_cmpint (label_height ("title-1"), >, label_height (NULL));
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int   argc,
      char *argv[])
{
  static const char *xdg[] = { "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME" };
  g_autofree char *home = g_dir_make_tmp ("tally-test-home-XXXXXX", NULL);
  int status;

  /* As tally_test_app_init(), without starting GTK: each case's process
   * starts it through the application. */
  g_assert_nonnull (home);
  g_setenv ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/tally-test-bus", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (xdg); i++)
    {
      g_autofree char *dir = g_build_filename (home, xdg[i], NULL);

      g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
      g_setenv (xdg[i], dir, TRUE);
    }

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tally/startup-theme/empty-theme-first", test_empty_theme_first);
  g_test_add_func ("/tally/startup-theme/user-theme-kept", test_user_theme_kept);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
