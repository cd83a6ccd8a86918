/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-test-ui.h"

#include <adwaita.h>
#include <json-glib/json-glib.h>

#include "tally-ui.h"

#ifdef TALLY_TEST_HAVE_X11
#include <gdk/x11/gdkx.h>
#endif

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

static gboolean
stall_meter_beat_cb (gpointer data)
{
  TallyTestStallMeter *meter = data;
  gint64 now = g_get_monotonic_time ();

  meter->longest_us = MAX (meter->longest_us, now - meter->last_us);
  meter->last_us = now;
  return G_SOURCE_CONTINUE;
}

/* Starts @meter's 1 ms heartbeat, from a longest stall of 0. */
void
tally_test_stall_meter_start (TallyTestStallMeter *meter)
{
  g_assert (meter->id == 0);
  meter->longest_us = 0;
  meter->last_us = g_get_monotonic_time ();
  meter->id = g_timeout_add (1, stall_meter_beat_cb, meter);
}

/* Stops @meter; returns the longest gap between two beats (or between
 * the start or the last beat and now), µs. */
gint64
tally_test_stall_meter_stop (TallyTestStallMeter *meter)
{
  g_assert (meter->id != 0);
  g_clear_handle_id (&meter->id, g_source_remove);
  stall_meter_beat_cb (meter);
  return meter->longest_us;
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

static void
collect (GtkWidget *widget,
         GType      type,
         GPtrArray *found)
{
  if (g_type_is_a (G_OBJECT_TYPE (widget), type))
    g_ptr_array_add (found, widget);

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect (child, type, found);
}

/* Every widget of @type in the tree under @root (@root included), in
 * depth-first order; the array holds no references. */
GPtrArray *
tally_test_find_all (GtkWidget *root,
                     GType      type)
{
  GPtrArray *found = g_ptr_array_new ();

  collect (root, type, found);
  return found;
}

/* The first widget of @type under @root, or NULL. */
GtkWidget *
tally_test_find_first (GtkWidget *root,
                       GType      type)
{
  g_autoptr(GPtrArray) found = tally_test_find_all (root, type);

  return found->len > 0 ? g_ptr_array_index (found, 0) : NULL;
}

/* The position of @block in @blocks (a #GListModel of #TallyBlock), or
 * G_MAXUINT when it is not there. */
guint
tally_test_block_index (GListModel *blocks,
                        TallyBlock *block)
{
  guint n = g_list_model_get_n_items (blocks);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(TallyBlock) item = g_list_model_get_item (blocks, i);

      if (item == block)
        return i;
    }
  return G_MAXUINT;
}

/* How many blocks of @kind @transcript holds. */
guint
tally_test_count_blocks (TallyTranscript *transcript,
                         TallyBlockKind   kind)
{
  GListModel *blocks = G_LIST_MODEL (transcript);
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (blocks); i++)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i);

      if (tally_block_get_kind (block) == kind)
        n++;
    }
  return n;
}

/* Applies one event, given as JSON text, to @transcript. */
void
tally_test_apply_event (TallyTranscript *transcript,
                        const char      *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (json, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  tally_transcript_apply (transcript, json_node_get_object (node));
}

/* Renders @widget as it is on screen into a PNG, for looking at: @name is
 * a file in $G_TEST_BUILDDIR/artifacts/, or an absolute path. */
void
tally_test_save_png (GtkWidget  *widget,
                     const char *name)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  int width;
  int height;

  /* A window that was just presented may not be mapped and given its size
   * yet (slow machines, sanitizer builds): wait for its first layout. */
  SPIN_UNTIL (gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 0
              && gtk_widget_get_height (widget) > 0);

  /* The paintable takes its picture when the widget next draws. */
  tally_test_wait_frames (widget, 2);
  width = gtk_widget_get_width (widget);
  height = gtk_widget_get_height (widget);
  g_assert_cmpint (width, >, 0);
  g_assert_cmpint (height, >, 0);
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (widget)),
                                         node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_nonnull (texture);

  if (g_path_is_absolute (name))
    path = g_strdup (name);
  else
    {
      dir = g_build_filename (g_getenv ("G_TEST_BUILDDIR") != NULL ? g_getenv ("G_TEST_BUILDDIR") : ".",
                              "artifacts", NULL);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      path = g_build_filename (dir, name, NULL);
    }
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("Screenshot: %s", path);
}

/* Moves the pointer of an X11 display (the tests' Xvfb) to the screen's
 * bottom-right pixel, away from where the tests' windows appear. Xvfb
 * starts with the pointer in the middle of the screen, so a new window
 * would map under it and get an enter event, which starts GTK's tooltip
 * delay (500 ms; see tally_test_log_is_tolerated() for what that delay
 * can do in GTK 4.8). A parked pointer also keeps tooltips out of the
 * screenshots. Does nothing on other displays. */
static void
park_pointer (void)
{
#ifdef TALLY_TEST_HAVE_X11
  GdkDisplay *display = gdk_display_get_default ();
  Display *xdisplay;
  int screen;

  if (display == NULL || !GDK_IS_X11_DISPLAY (display))
    return;
  xdisplay = gdk_x11_display_get_xdisplay (display);
  screen = DefaultScreen (xdisplay);
  XWarpPointer (xdisplay, None, RootWindow (xdisplay, screen), 0, 0, 0, 0,
                DisplayWidth (xdisplay, screen) - 1, DisplayHeight (xdisplay, screen) - 1);
  XSync (xdisplay, False);
#endif
}

/* Whether a critical that GTK itself logs on its own timer is one the UI
 * tests let through (printed, not fatal). There is one pair, from one call
 * of GTK 4.8's tooltip (gtk/gtktooltip.c, gtk_tooltip_show_tooltip()):
 * GDK's "gdk_surface_get_device_position: assertion 'GDK_IS_SURFACE
 * (surface)' failed" and, right after it from the same call, GTK's
 * "_gtk_widget_find_at_coords: assertion 'GDK_IS_SURFACE (surface)'
 * failed". An enter event on a popover or window
 * starts the tooltip delay (500 ms) for that native; on X11 a popover's
 * pointer grab sends the popover such an enter event wherever the pointer
 * is, so parking the pointer cannot prevent it. GTK 4.8 forgets the
 * native when a window is destroyed, not when a popover loses its
 * surface: if the popover's window closes before the delay ends, the
 * delay asks the popover's NULL surface for the pointer position. The
 * tooltip is then not shown and nothing else happens (for a user: one
 * critical in a terminal). Tally's code does not call
 * gdk_surface_get_device_position(), so the message cannot come from it.
 */
gboolean
tally_test_log_is_tolerated (const char *log_domain,
                             const char *message)
{
  return (g_strcmp0 (log_domain, "Gdk") == 0 &&
          g_strcmp0 (message, "gdk_surface_get_device_position: assertion 'GDK_IS_SURFACE (surface)' failed") == 0) ||
         (g_strcmp0 (log_domain, "Gtk") == 0 &&
          g_strcmp0 (message, "_gtk_widget_find_at_coords: assertion 'GDK_IS_SURFACE (surface)' failed") == 0);
}

static GLogFunc test_default_log_handler;

static gboolean
log_fatal_cb (const char     *log_domain,
              GLogLevelFlags  log_level,
              const char     *message,
              gpointer        user_data)
{
  return !tally_test_log_is_tolerated (log_domain, message);
}

/* GLib resets the test's fatal handler at the start of every test case
 * (gtestutils.c, test_case_run()) and asks it only after the message's
 * handler has run (gmessages.c, g_logv()), so the handler is put back
 * here, where each message arrives; the message then goes on to the
 * handler g_test_init() installed. */
static void
log_handler_cb (const char     *log_domain,
                GLogLevelFlags  log_level,
                const char     *message,
                gpointer        user_data)
{
  if (tally_test_log_is_tolerated (log_domain, message))
    {
      g_test_log_set_fatal_handler (log_fatal_cb, NULL);
      /* A test makes every critical fatal, so the message arrives with
       * G_LOG_FLAG_FATAL, and GLib's test handler would print it in the
       * TAP output as "Bail out!", which meson counts as the test failing
       * although it goes on and exits 0. Without the flag it is printed
       * as a comment. */
      log_level &= ~G_LOG_FLAG_FATAL;
    }
  test_default_log_handler (log_domain, log_level, message, NULL);
}

/* Prepares a UI test process once GTK is initialised: every GLib
 * warning and critical stays fatal except the one
 * tally_test_log_is_tolerated() names, and on X11 the pointer is moved
 * out of the tests' windows' way. Call it after g_test_init() or
 * gtk_test_init() and gtk_init(). */
void
tally_test_prepare_ui_process (void)
{
  test_default_log_handler = g_log_set_default_handler (log_handler_cb, NULL);
  park_pointer ();
}

/* Starts GTK, libadwaita and Tally's UI resources for a UI test, with the
 * test accessibility backend (accessible properties stay readable) and
 * the process prepared (tally_test_prepare_ui_process()). */
void
tally_test_init_ui (int    *argc,
                    char ***argv)
{
  g_setenv ("GTK_A11Y", "test", TRUE);
  gtk_test_init (argc, argv, NULL);
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();
}

/* Fails unless @bin has the centring layout (src/ui/block/
 * tally-centring-layout.c): height-for-width, its width for any height is
 * its child's width for any height (so no wrapping label below it is
 * asked for widths at heights), its height for a width its child's, and
 * once allocated its child, vertically
 * filled, spans its width at the child's natural height for it, centred,
 * or fills it when the bin is not taller (left to right; the child's
 * margins, which measuring includes, around it). */
void
tally_test_assert_centring_bin (GtkWidget *bin)
{
  GtkWidget *child = gtk_widget_get_first_child (bin);
  graphene_rect_t bounds;
  int width = gtk_widget_get_width (bin);
  int height = gtk_widget_get_height (bin);
  int child_min, child_nat, bin_min, bin_nat;
  int start, end, top, bottom, natural;

  g_assert_nonnull (child);
  g_assert_null (gtk_widget_get_next_sibling (child));
  g_assert_cmpint (gtk_widget_get_request_mode (bin), ==, GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH);
  g_assert_cmpint (gtk_widget_get_valign (child), ==, GTK_ALIGN_FILL);
  gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &child_min, &child_nat, NULL, NULL);
  for (int for_height = 10; for_height <= 1000; for_height *= 10)
    {
      gtk_widget_measure (bin, GTK_ORIENTATION_HORIZONTAL, for_height, &bin_min, &bin_nat, NULL, NULL);
      g_assert_cmpint (bin_min, ==, child_min);
      g_assert_cmpint (bin_nat, ==, child_nat);
    }
  for (int for_width = child_min; for_width <= child_min + 300; for_width += 100)
    {
      int height_min, height_nat;

      gtk_widget_measure (bin, GTK_ORIENTATION_VERTICAL, for_width, &bin_min, &bin_nat, NULL, NULL);
      gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, for_width, &height_min, &height_nat, NULL, NULL);
      g_assert_cmpint (bin_min, ==, height_min);
      g_assert_cmpint (bin_nat, ==, height_nat);
    }
  if (!gtk_widget_get_mapped (bin) || width == 0)
    return;

  g_assert_cmpint (gtk_widget_get_direction (child), ==, GTK_TEXT_DIR_LTR);
  start = gtk_widget_get_margin_start (child);
  end = gtk_widget_get_margin_end (child);
  top = gtk_widget_get_margin_top (child);
  bottom = gtk_widget_get_margin_bottom (child);
  g_assert_true (gtk_widget_compute_bounds (child, bin, &bounds));
  gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, width, NULL, &natural, NULL, NULL);
  g_assert_cmpfloat (bounds.origin.x, ==, start);
  g_assert_cmpfloat (bounds.size.width, ==, width - start - end);
  if (natural < height)
    {
      g_assert_cmpfloat (bounds.size.height, ==, natural - top - bottom);
      g_assert_cmpfloat (bounds.origin.y, ==, (height - natural) / 2 + top);
    }
  else
    {
      g_assert_cmpfloat (bounds.size.height, ==, height - top - bottom);
      g_assert_cmpfloat (bounds.origin.y, ==, top);
    }
}

/* Whether @widget's (a GtkWidget) accessible label is @label (needs
 * GTK_A11Y=test, as tally_test_init_ui() sets). */
gboolean
tally_test_has_accessible_label (gpointer    widget,
                                 const char *label)
{
  g_autofree char *mismatch = NULL;

  if (!gtk_test_accessible_has_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL))
    return FALSE;
  mismatch = gtk_test_accessible_check_property (GTK_ACCESSIBLE (widget),
                                                 GTK_ACCESSIBLE_PROPERTY_LABEL, label);
  return mismatch == NULL;
}

/* The first button under @root whose action is @action_name, or NULL. */
GtkWidget *
tally_test_find_action_button (GtkWidget  *root,
                               const char *action_name)
{
  g_autoptr(GPtrArray) buttons = tally_test_find_all (root, GTK_TYPE_BUTTON);

  for (guint i = 0; i < buttons->len; i++)
    if (g_strcmp0 (gtk_actionable_get_action_name (g_ptr_array_index (buttons, i)), action_name) == 0)
      return g_ptr_array_index (buttons, i);
  return NULL;
}

/* The AdwMessageDialog on screen (an AdwMessageDialog), or NULL. */
GtkWindow *
tally_test_find_message_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWindow) window = g_list_model_get_item (toplevels, i);

      if (ADW_IS_MESSAGE_DIALOG (window) && gtk_widget_get_visible (GTK_WIDGET (window)))
        return window;   /* GTK keeps it while it is a toplevel */
    }
  return NULL;
}

/* Whether @chooser names the file at @path; a save chooser does once it
 * has loaded its folder. */
gboolean
tally_test_chooser_names (GtkFileChooser *chooser,
                          const char     *path)
{
  g_autoptr(GFile) file = gtk_file_chooser_get_file (chooser);

  return file != NULL && g_strcmp0 (g_file_peek_path (file), path) == 0;
}
