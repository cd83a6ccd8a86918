/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>

#include "tally-application-private.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-window-private.h"

typedef struct {
  TallyTestAppBody  body;
  gpointer          data;
  int               network_override;
  TallyWindow      *window;
  gboolean          ran;
  TallyTestAppBody  before_frame;
  gboolean          ran_before_frame;
} RunCtx;

/* Sets up the process for the application: no keyring or session bus,
 * settings in memory, the XDG folders under a new temporary home, GTK and
 * libadwaita with animations off. Returns the home (remove it with
 * tally_test_remove_tree() after g_test_run()). */
char *
tally_test_app_init (int    *argc,
                     char ***argv)
{
  static const char *xdg[] = { "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME" };
  char *home;

  g_setenv ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/tally-test-bus", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

  home = g_dir_make_tmp ("tally-test-home-XXXXXX", NULL);
  g_assert_nonnull (home);
  for (guint i = 0; i < G_N_ELEMENTS (xdg); i++)
    {
      g_autofree char *dir = g_build_filename (home, xdg[i], NULL);

      g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
      g_setenv (xdg[i], dir, TRUE);
    }

  g_test_init (argc, argv, NULL);
  gtk_init ();
  tally_test_prepare_ui_process ();
  adw_init ();
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  return home;
}

static gboolean
run_body_idle (gpointer user_data)
{
  RunCtx *ctx = user_data;
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (ctx->window));
  g_autoptr(GList) windows = NULL;

  gtk_window_present (GTK_WINDOW (ctx->window));
  tally_test_spin_idle ();
  /* --session reads the session in the background (docs/architecture.md
   * §11.1): the body starts with it shown. */
  SPIN_UNTIL (!_tally_window_is_opening (ctx->window));
  /* The keyring is asked after the first frame (docs/architecture.md
   * §11.1): the body starts with its answer. */
  SPIN_UNTIL (tally_application_get_api_key_source (TALLY_APPLICATION (app)) != TALLY_API_KEY_SOURCE_LOOKING_UP);

  ctx->body (TALLY_APPLICATION (app), ctx->window, ctx->data);
  ctx->ran = TRUE;

  windows = g_list_copy (gtk_application_get_windows (app));
  for (GList *l = windows; l != NULL; l = l->next)
    gtk_window_close (GTK_WINDOW (l->data));
  return G_SOURCE_REMOVE;
}

/* At a high priority from "window-added": before the frame clock paints
 * anything (it runs at GDK_PRIORITY_REDRAW) and so before the window's
 * work after its first frame. */
static gboolean
run_before_frame_idle (gpointer user_data)
{
  RunCtx *ctx = user_data;
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (ctx->window));

  ctx->before_frame (TALLY_APPLICATION (app), ctx->window, ctx->data);
  ctx->ran_before_frame = TRUE;
  return G_SOURCE_REMOVE;
}

static void
window_added_cb (GtkApplication *app,
                 GtkWindow      *window,
                 RunCtx         *ctx)
{
  if (ctx->window != NULL || !TALLY_IS_WINDOW (window))
    return;
  ctx->window = TALLY_WINDOW (window);
  if (ctx->before_frame != NULL)
    g_idle_add_full (G_PRIORITY_HIGH, run_before_frame_idle, ctx, NULL);
  g_idle_add (run_body_idle, ctx);
}

static void
startup_cb (GApplication *app,
            RunCtx       *ctx)
{
  if (ctx->network_override >= 0)
    _tally_application_set_network_override (TALLY_APPLICATION (app), ctx->network_override);
}

/* Runs `tally ARGS…` in this process as its own primary instance and
 * @body once its first window is presented; returns the exit status.
 * @network_override: -1 leaves the network monitor alone; 0 or 1 says
 * offline or online from startup on. */
static int
run_app (const char * const *args,
         int                 network_override,
         TallyTestAppBody    before_frame,
         TallyTestAppBody    body,
         gpointer            data)
{
  g_autoptr(TallyApplication) app = tally_application_new ();
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  RunCtx ctx = { body, data, network_override, NULL, FALSE, before_frame, FALSE };
  int status;

  g_application_set_flags (G_APPLICATION (app),
                           G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_NON_UNIQUE);
  g_signal_connect_after (app, "startup", G_CALLBACK (startup_cb), &ctx);
  g_signal_connect (app, "window-added", G_CALLBACK (window_added_cb), &ctx);

  g_ptr_array_add (argv, (gpointer) "tally");
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  status = g_application_run (G_APPLICATION (app), argv->len - 1, (char **) argv->pdata);
  g_assert_true (ctx.ran);
  g_assert_true (ctx.ran_before_frame || before_frame == NULL);

  /* Let what the closed windows cancelled finish (their callbacks are
   * already queued), so nothing of this run is left for the next. */
  g_clear_object (&app);
  tally_test_spin_idle ();
  return status;
}

int
tally_test_app_run_with_network (const char * const *args,
                                 int                 network_override,
                                 TallyTestAppBody    body,
                                 gpointer            data)
{
  return run_app (args, network_override, NULL, body, data);
}

/* tally_test_app_run() that also runs @before_frame with the first
 * window, after it is presented and before its first frame is painted
 * (and so before what the window leaves until then: the store, the
 * session list, the keyring lookup). */
int
tally_test_app_run_before_frame (const char * const *args,
                                 TallyTestAppBody    before_frame,
                                 TallyTestAppBody    body,
                                 gpointer            data)
{
  return run_app (args, -1, before_frame, body, data);
}

/* tally_test_app_run_with_network() with the network monitor left alone. */
int
tally_test_app_run (const char * const *args,
                    TallyTestAppBody    body,
                    gpointer            data)
{
  return tally_test_app_run_with_network (args, -1, body, data);
}

/* A new temporary folder for the store of one test; ANTHROPIC_BASE_URL
 * is unset (each test passes --base-url). */
void
tally_test_app_fixture_set_up (TallyTestAppFixture *fixture,
                               gconstpointer        data)
{
  g_autoptr(GError) error = NULL;

  fixture->dir = g_dir_make_tmp ("tally-test-store-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->store_path = g_build_filename (fixture->dir, "tally.db", NULL);
  g_unsetenv ("ANTHROPIC_BASE_URL");
}

void
tally_test_app_fixture_tear_down (TallyTestAppFixture *fixture,
                                  gconstpointer        data)
{
  tally_test_remove_tree (fixture->dir);
  g_clear_pointer (&fixture->dir, g_free);
  g_clear_pointer (&fixture->store_path, g_free);
}

/* Screenshots of @widget in the light and in the dark style,
 * $G_TEST_BUILDDIR/artifacts/@stem-light.png and @stem-dark.png. */
void
tally_test_app_save_light_dark (GtkWidget  *widget,
                                const char *stem)
{
  AdwStyleManager *style = adw_style_manager_get_default ();
  g_autofree char *light = g_strdup_printf ("%s-light.png", stem);
  g_autofree char *dark = g_strdup_printf ("%s-dark.png", stem);

  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_LIGHT);
  tally_test_save_png (widget, light);
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  tally_test_save_png (widget, dark);
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
}

/* Scrolls the first scrolled window under @view from top to bottom, half
 * a page at a time, and calls @look at each stop once it has drawn (a
 * list view only makes the rows it shows). */
void
tally_test_app_scroll_through (GtkWidget             *view,
                               TallyTestAppLookFunc   look,
                               gpointer               data)
{
  GtkScrolledWindow *scroller = GTK_SCROLLED_WINDOW (tally_test_find_first (view, GTK_TYPE_SCROLLED_WINDOW));
  GtkAdjustment *adjustment;
  double value = 0;

  g_assert_nonnull (scroller);
  adjustment = gtk_scrolled_window_get_vadjustment (scroller);
  for (guint step = 0; step < 200; step++)
    {
      gtk_adjustment_set_value (adjustment, value);
      tally_test_wait_frames (view, 2);
      look (view, data);
      if (value >= gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment))
        break;
      value += MAX (gtk_adjustment_get_page_size (adjustment) / 2, 50);
    }
}

/* Removes @path and everything under it (symbolic links are not followed). */
void
tally_test_remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *child = g_build_filename (path, name, NULL);

        if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
          tally_test_remove_tree (child);
        else
          g_unlink (child);
      }
  g_rmdir (path);
}
