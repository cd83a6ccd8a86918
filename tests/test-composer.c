/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The composer under Xvfb: Enter sends, Shift+Enter adds a line, Enter
 * never sends while an input method composes, blank text is never sent,
 * Send turns into Stop while busy, drafts round-trip. Keys go through the
 * composer's key handler directly, and again as real X key events
 * (XTest) through GDK, the input method and the text view. */

#include "config.h"

#include <adwaita.h>
#include <dlfcn.h>
#include <gdk/x11/gdkx.h>

#include "tally-composer.h"
#include "tally-composer-private.h"
#include "tally-test-ui.h"
#include "tally-ui.h"

#define WAIT_TIMEOUT_MS (20 * 1000)

typedef struct {
  GPtrArray *sent;
  guint      stops;
} Record;

static void
send_cb (TallyComposer *composer,
         const char    *text,
         Record        *record)
{
  g_autofree char *now = tally_composer_dup_text (composer);

  /* The composer is already empty when the signal runs. */
  g_assert_cmpstr (now, ==, "");
  g_ptr_array_add (record->sent, g_strdup (text));
}

static void
stop_cb (TallyComposer *composer,
         Record        *record)
{
  record->stops++;
}

static TallyComposer *
new_composer (Record *record)
{
  TallyComposer *composer = TALLY_COMPOSER (g_object_ref_sink (tally_composer_new ()));

  record->sent = g_ptr_array_new_with_free_func (g_free);
  record->stops = 0;
  g_signal_connect (composer, "send", G_CALLBACK (send_cb), record);
  g_signal_connect (composer, "stop", G_CALLBACK (stop_cb), record);
  return composer;
}

static void
record_clear (Record *record)
{
  g_clear_pointer (&record->sent, g_ptr_array_unref);
}


static char *
dup_text (TallyComposer *composer)
{
  return tally_composer_dup_text (composer);
}

static void
test_enter_sends (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  g_autofree char *text = NULL;

  tally_composer_set_text (composer, "Top stores in March?");
  g_assert_true (tally_composer_handle_key (composer, GDK_KEY_Return, 0));
  g_assert_cmpuint (record.sent->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (record.sent, 0), ==, "Top stores in March?");
  text = dup_text (composer);
  g_assert_cmpstr (text, ==, "");

  /* Keypad Enter and Ctrl+Enter send too; the text is trimmed. */
  tally_composer_set_text (composer, "  second\nline  \n");
  g_assert_true (tally_composer_handle_key (composer, GDK_KEY_KP_Enter, GDK_CONTROL_MASK));
  g_assert_cmpuint (record.sent->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (record.sent, 1), ==, "second\nline");

  /* Other keys are the text view's. */
  tally_composer_set_text (composer, "abc");
  g_assert_false (tally_composer_handle_key (composer, GDK_KEY_a, 0));
  g_assert_false (tally_composer_handle_key (composer, GDK_KEY_Return, GDK_ALT_MASK));
  g_assert_cmpuint (record.sent->len, ==, 2);

  record_clear (&record);
}

static void
test_shift_enter (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  g_autofree char *text = NULL;

  tally_composer_set_text (composer, "first line");
  g_assert_false (tally_composer_handle_key (composer, GDK_KEY_Return, GDK_SHIFT_MASK));
  g_assert_false (tally_composer_handle_key (composer, GDK_KEY_KP_Enter, GDK_SHIFT_MASK));
  g_assert_cmpuint (record.sent->len, ==, 0);
  text = dup_text (composer);
  g_assert_cmpstr (text, ==, "first line");

  record_clear (&record);
}

static void
test_preedit (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  GtkTextView *text_view = tally_composer_get_text_view (composer);
  g_autofree char *text = NULL;

  tally_composer_set_text (composer, "売上");
  g_signal_emit_by_name (text_view, "preedit-changed", "にほん");
  g_assert_true (tally_composer_get_preedit_active (composer));

  g_assert_false (tally_composer_handle_key (composer, GDK_KEY_Return, 0));
  g_assert_false (tally_composer_handle_key (composer, GDK_KEY_Return, GDK_CONTROL_MASK));
  g_assert_cmpuint (record.sent->len, ==, 0);
  text = dup_text (composer);
  g_assert_cmpstr (text, ==, "売上");

  /* The composition ends: Enter sends again. */
  g_signal_emit_by_name (text_view, "preedit-changed", "");
  g_assert_false (tally_composer_get_preedit_active (composer));
  g_assert_true (tally_composer_handle_key (composer, GDK_KEY_Return, 0));
  g_assert_cmpuint (record.sent->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (record.sent, 0), ==, "売上");

  /* Preedit over an empty composer hides the placeholder. */
  g_assert_true (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));
  g_signal_emit_by_name (text_view, "preedit-changed", "k");
  g_assert_false (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));
  g_signal_emit_by_name (text_view, "preedit-changed", "");
  g_assert_true (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));

  record_clear (&record);
}

static void
test_blank (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  GtkButton *button = tally_composer_get_button (composer);
  g_autofree char *text = NULL;

  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (button)));
  g_assert_false (tally_composer_send (composer));

  tally_composer_set_text (composer, " \n\t ");
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (button)));
  g_assert_false (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));
  /* Enter is taken (no stray line) but nothing is sent. */
  g_assert_true (tally_composer_handle_key (composer, GDK_KEY_Return, 0));
  g_signal_emit_by_name (button, "clicked");
  g_assert_cmpuint (record.sent->len, ==, 0);
  text = dup_text (composer);
  g_assert_cmpstr (text, ==, " \n\t ");

  tally_composer_set_text (composer, "x");
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (button)));
  g_signal_emit_by_name (button, "clicked");
  g_assert_cmpuint (record.sent->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (record.sent, 0), ==, "x");
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (button)));
  g_assert_true (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));

  record_clear (&record);
}

static void
test_busy (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  GtkButton *button = tally_composer_get_button (composer);
  g_autofree char *text = NULL;

  g_assert_true (tally_test_has_accessible_label (button, "Send"));
  g_assert_cmpstr (gtk_button_get_icon_name (button), ==, "go-up-symbolic");

  tally_composer_set_text (composer, "next question");
  tally_composer_set_busy (composer, TRUE);
  g_assert_true (tally_composer_get_busy (composer));
  g_assert_true (tally_test_has_accessible_label (button, "Stop"));
  g_assert_false (tally_test_has_accessible_label (button, "Send"));
  g_assert_cmpstr (gtk_button_get_icon_name (button), ==, "media-playback-stop-symbolic");
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (button)));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (button), "destructive-action"));

  /* Stop is emitted at once, with no main loop turn in between. */
  g_signal_emit_by_name (button, "clicked");
  g_assert_cmpuint (record.stops, ==, 1);
  g_assert_cmpuint (record.sent->len, ==, 0);

  /* Nothing is sent while busy; the draft stays. */
  g_assert_true (tally_composer_handle_key (composer, GDK_KEY_Return, 0));
  g_assert_false (tally_composer_send (composer));
  g_assert_cmpuint (record.sent->len, ==, 0);
  text = dup_text (composer);
  g_assert_cmpstr (text, ==, "next question");

  tally_composer_set_busy (composer, FALSE);
  g_assert_true (tally_test_has_accessible_label (button, "Send"));
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (button)));
  g_signal_emit_by_name (button, "clicked");
  g_assert_cmpuint (record.stops, ==, 1);
  g_assert_cmpuint (record.sent->len, ==, 1);

  record_clear (&record);
}

static void
test_drafts (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *c = NULL;

  tally_composer_set_text (composer, "Draft for session A\n  with a second line · ünïcode");
  a = dup_text (composer);
  g_assert_cmpstr (a, ==, "Draft for session A\n  with a second line · ünïcode");
  g_assert_false (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));

  tally_composer_set_text (composer, NULL);
  b = dup_text (composer);
  g_assert_cmpstr (b, ==, "");
  g_assert_true (gtk_widget_get_visible (tally_composer_get_placeholder (composer)));

  tally_composer_set_text (composer, a);
  c = dup_text (composer);
  g_assert_cmpstr (c, ==, a);
  g_assert_cmpuint (record.sent->len, ==, 0);

  record_clear (&record);
}

/* Real key events: XTest through the X server, GDK and the input method. */

typedef int (*XTestFakeKeyEventFunc) (Display *, unsigned int, int, unsigned long);
typedef KeyCode (*XKeysymToKeycodeFunc) (Display *, KeySym);
typedef int (*XSyncFunc) (Display *, int);
typedef int (*XSetInputFocusFunc) (Display *, Window, int, Time);

typedef struct {
  Display               *display;
  XTestFakeKeyEventFunc  fake_key;
  XKeysymToKeycodeFunc   keysym_to_keycode;
  XSyncFunc              sync;
} XKeys;

static gboolean
xkeys_init (XKeys *keys)
{
  GdkDisplay *display = gdk_display_get_default ();
  void *xtst;

  if (!GDK_IS_X11_DISPLAY (display))
    return FALSE;
  xtst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_GLOBAL);
  if (xtst == NULL)
    return FALSE;

  keys->display = gdk_x11_display_get_xdisplay (display);
  keys->fake_key = (XTestFakeKeyEventFunc) dlsym (xtst, "XTestFakeKeyEvent");
  keys->keysym_to_keycode = (XKeysymToKeycodeFunc) dlsym (RTLD_DEFAULT, "XKeysymToKeycode");
  keys->sync = (XSyncFunc) dlsym (RTLD_DEFAULT, "XSync");
  return keys->fake_key != NULL && keys->keysym_to_keycode != NULL && keys->sync != NULL;
}

static gboolean
timed_out_cb (gpointer user_data)
{
  gboolean *timed_out = user_data;

  *timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

typedef gboolean (*Condition) (gpointer data);

static void
wait_for (Condition   condition,
          gpointer    data,
          const char *what)
{
  gboolean timed_out = FALSE;
  guint guard = g_timeout_add (WAIT_TIMEOUT_MS, timed_out_cb, &timed_out);

  while (!condition (data))
    {
      if (timed_out)
        g_error ("timed out waiting for %s", what);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (guard);
}

static gboolean
window_active (gpointer data)
{
  return gtk_window_is_active (data) &&
         gtk_widget_has_focus (GTK_WIDGET (g_object_get_data (data, "text-view")));
}

/* Presses (and releases) @keysym with the modifier keysyms held, then
 * lets GTK handle every resulting event: an X round trip plus a main
 * loop turn per event, until a marker key release arrives. */
typedef struct {
  guint seen;
  guint expected;
} KeyCount;

static gboolean
key_released_cb (GtkEventControllerKey *controller,
                 guint                  keyval,
                 guint                  keycode,
                 GdkModifierType        state,
                 KeyCount              *count)
{
  count->seen++;
  return FALSE;
}

static gboolean
keys_seen (gpointer data)
{
  KeyCount *count = data;

  return count->seen >= count->expected;
}

static void
press (XKeys      *keys,
       GtkWidget  *target,
       KeySym      keysym,
       KeySym      modifier1,
       KeySym      modifier2)
{
  KeySym modifiers[] = { modifier1, modifier2 };
  KeyCode mod_codes[2] = { 0, 0 };
  KeyCount count = { 0, 1 };
  GtkEventController *watch = gtk_event_controller_key_new ();
  KeyCode code = keys->keysym_to_keycode (keys->display, keysym);

  g_assert_cmpuint (code, !=, 0);
  gtk_event_controller_set_propagation_phase (watch, GTK_PHASE_CAPTURE);
  g_signal_connect (watch, "key-released", G_CALLBACK (key_released_cb), &count);
  gtk_widget_add_controller (target, watch);

  for (guint i = 0; i < G_N_ELEMENTS (modifiers); i++)
    if (modifiers[i] != NoSymbol)
      {
        mod_codes[i] = keys->keysym_to_keycode (keys->display, modifiers[i]);
        g_assert_cmpuint (mod_codes[i], !=, 0);
        keys->fake_key (keys->display, mod_codes[i], True, CurrentTime);
        count.expected++;
      }
  keys->fake_key (keys->display, code, True, CurrentTime);
  keys->fake_key (keys->display, code, False, CurrentTime);
  for (guint i = G_N_ELEMENTS (modifiers); i > 0; i--)
    if (mod_codes[i - 1] != 0)
      keys->fake_key (keys->display, mod_codes[i - 1], False, CurrentTime);
  keys->sync (keys->display, False);

  wait_for (keys_seen, &count, "the key events");
  gtk_widget_remove_controller (target, watch);
}

static void
type_text (XKeys      *keys,
           GtkWidget  *target,
           const char *ascii)
{
  for (const char *p = ascii; *p != '\0'; p++)
    press (keys, target, *p == ' ' ? XK_space : (KeySym) *p, NoSymbol, NoSymbol);
}

/* The frame grows with the text up to a limit, then scrolls. */

typedef struct {
  GtkWidget *widget;
  guint      frames;
} FrameCount;

static gboolean
count_frame_cb (GtkWidget     *widget,
                GdkFrameClock *clock,
                gpointer       user_data)
{
  ((FrameCount *) user_data)->frames++;
  return G_SOURCE_CONTINUE;
}

static gboolean
enough_frames (gpointer data)
{
  return ((FrameCount *) data)->frames >= 4;
}

static void
settle (GtkWidget *widget)
{
  FrameCount count = { widget, 0 };
  guint id = gtk_widget_add_tick_callback (widget, count_frame_cb, &count, NULL);

  wait_for (enough_frames, &count, "a few frames");
  gtk_widget_remove_tick_callback (widget, id);
}

typedef struct {
  GtkScrolledWindow *scroller;
  GtkPolicyType      expected;
} PolicyWait;

static gboolean
policy_is (gpointer data)
{
  PolicyWait *wait = data;
  GtkPolicyType policy;

  gtk_scrolled_window_get_policy (wait->scroller, NULL, &policy);
  return policy == wait->expected;
}

/* The composer sets its scroll policy in an idle after the text view is
 * allocated. Under a sanitizer the frame clock can keep the main loop busy
 * for several frames before that idle runs, so the test waits for the
 * policy (failing after WAIT_TIMEOUT_MS) instead of counting frames. */
static void
wait_for_policy (GtkWidget     *scroller,
                 GtkPolicyType  expected)
{
  PolicyWait wait = { GTK_SCROLLED_WINDOW (scroller), expected };

  wait_for (policy_is, &wait, "the composer's scroll policy");
}

static void
test_grows (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  GtkWidget *text_view = GTK_WIDGET (tally_composer_get_text_view (composer));
  GtkWidget *scroller = gtk_widget_get_ancestor (text_view, GTK_TYPE_SCROLLED_WINDOW);
  g_autoptr(GString) long_text = g_string_new (NULL);
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkPolicyType policy;
  int one_line, three_lines, many_lines;

  /* The composer sits at the bottom of a tall window, as in the app. */
  gtk_box_append (GTK_BOX (box), g_object_new (GTK_TYPE_LABEL, "vexpand", TRUE, NULL));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (composer));
  gtk_window_set_child (window, box);
  gtk_window_set_default_size (window, 500, 700);
  gtk_window_present (window);

  tally_composer_set_text (composer, "one line");
  settle (GTK_WIDGET (composer));
  one_line = gtk_widget_get_height (scroller);
  gtk_scrolled_window_get_policy (GTK_SCROLLED_WINDOW (scroller), NULL, &policy);
  /* About one line of text, not the height of a scroll bar. */
  g_assert_cmpint (one_line, <, 48);

  tally_composer_set_text (composer, "one\ntwo\nthree");
  settle (GTK_WIDGET (composer));
  three_lines = gtk_widget_get_height (scroller);
  g_assert_cmpint (three_lines, >, one_line + 20);

  for (guint i = 0; i < 40; i++)
    g_string_append_printf (long_text, "line %u\n", i);
  tally_composer_set_text (composer, long_text->str);
  settle (GTK_WIDGET (composer));
  many_lines = gtk_widget_get_height (scroller);
  g_assert_cmpint (many_lines, <=, 200);
  g_assert_cmpint (many_lines, >, three_lines);
  wait_for_policy (scroller, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_get_policy (GTK_SCROLLED_WINDOW (scroller), NULL, &policy);
  g_assert_cmpint (policy, ==, GTK_POLICY_AUTOMATIC);

  tally_composer_set_text (composer, NULL);
  settle (GTK_WIDGET (composer));
  g_assert_cmpint (gtk_widget_get_height (scroller), ==, one_line);
  wait_for_policy (scroller, GTK_POLICY_EXTERNAL);
  gtk_scrolled_window_get_policy (GTK_SCROLLED_WINDOW (scroller), NULL, &policy);
  g_assert_cmpint (policy, ==, GTK_POLICY_EXTERNAL);

  gtk_window_destroy (window);
  record_clear (&record);
}

static void
test_real_keys (void)
{
  Record record;
  g_autoptr(TallyComposer) composer = new_composer (&record);
  GtkWidget *text_view = GTK_WIDGET (tally_composer_get_text_view (composer));
  GtkWindow *window;
  XKeys keys;
  g_autofree char *after_shift = NULL;
  g_autofree char *after_preedit = NULL;
  XSetInputFocusFunc set_focus;

  if (!xkeys_init (&keys))
    {
      g_test_skip ("needs an X11 display with the XTEST extension (libXtst)");
      record_clear (&record);
      return;
    }

  window = GTK_WINDOW (gtk_window_new ());
  g_object_set_data (G_OBJECT (window), "text-view", text_view);
  gtk_window_set_default_size (window, 500, 120);
  gtk_window_set_child (window, GTK_WIDGET (composer));
  gtk_window_present (window);
  gtk_widget_grab_focus (GTK_WIDGET (composer));

  /* No window manager runs under Xvfb: give the window the focus. */
  set_focus = (XSetInputFocusFunc) dlsym (RTLD_DEFAULT, "XSetInputFocus");
  g_assert_nonnull (set_focus);
  while (!gtk_widget_get_mapped (GTK_WIDGET (window)))
    g_main_context_iteration (NULL, TRUE);
  set_focus (keys.display, gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window))),
             RevertToParent, CurrentTime);
  keys.sync (keys.display, False);
  wait_for (window_active, window, "the window to take the focus");

  /* Typed text, Shift+Enter adds a line, Enter sends. */
  type_text (&keys, text_view, "sales");
  press (&keys, text_view, XK_Return, XK_Shift_L, NoSymbol);
  type_text (&keys, text_view, "by store");
  after_shift = dup_text (composer);
  g_assert_cmpstr (after_shift, ==, "sales\nby store");
  g_assert_cmpuint (record.sent->len, ==, 0);

  press (&keys, text_view, XK_Return, NoSymbol, NoSymbol);
  g_assert_cmpuint (record.sent->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (record.sent, 0), ==, "sales\nby store");

  /* A real composition: GTK's own input method enters Unicode by code
   * point after Ctrl+Shift+U, showing preedit text meanwhile. Enter
   * commits it and must not send. */
  type_text (&keys, text_view, "caf");
  press (&keys, text_view, XK_u, XK_Control_L, XK_Shift_L);
  type_text (&keys, text_view, "e9");
  g_assert_true (tally_composer_get_preedit_active (composer));

  press (&keys, text_view, XK_Return, NoSymbol, NoSymbol);
  g_assert_cmpuint (record.sent->len, ==, 1);
  g_assert_false (tally_composer_get_preedit_active (composer));
  after_preedit = dup_text (composer);
  g_assert_cmpstr (after_preedit, ==, "café");

  press (&keys, text_view, XK_Return, NoSymbol, NoSymbol);
  g_assert_cmpuint (record.sent->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (record.sent, 1), ==, "café");

  gtk_window_destroy (window);
  record_clear (&record);
}

int
main (int    argc,
      char **argv)
{
  /* The test AT context keeps accessible properties readable, and GTK's
   * own input method is the one driven by the real-key test. */
  g_setenv ("GTK_A11Y", "test", TRUE);
  g_setenv ("GTK_IM_MODULE", "gtk-im-context-simple", TRUE);

  gtk_test_init (&argc, &argv, NULL);
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();

  g_test_add_func ("/tally/composer/enter-sends", test_enter_sends);
  g_test_add_func ("/tally/composer/shift-enter", test_shift_enter);
  g_test_add_func ("/tally/composer/preedit", test_preedit);
  g_test_add_func ("/tally/composer/blank", test_blank);
  g_test_add_func ("/tally/composer/busy", test_busy);
  g_test_add_func ("/tally/composer/drafts", test_drafts);
  g_test_add_func ("/tally/composer/grows", test_grows);
  g_test_add_func ("/tally/composer/real-keys", test_real_keys);

  return g_test_run ();
}
