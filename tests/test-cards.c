/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The negotiation cards under Xvfb: the question card's chips, answers and
 * keys; the approval card's decisions and panels; the plan card in WebKit
 * (sized to its page, script off, navigation blocked) and natively; settled
 * cards from stored resolutions. The last test drives the whole window
 * through the walkthrough of docs/architecture.md §7.3 on the Beanline
 * sample against the mock API (question, plan, Implement, approval of a
 * Write) and saves screenshots of the three cards under
 * $G_TEST_BUILDDIR/artifacts/. */

#define G_LOG_DOMAIN "test-cards"

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tally-cards-config.h"
#if TALLY_HAVE_WEBKIT
#include <webkit/webkit.h>
#endif

#include "tally-agent.h"
#include "tally-application.h"
#include "tally-approval-card-private.h"
#include "tally-gate.h"
#include "tally-block-row.h"
#include "tally-markdown-view.h"
#include "tally-plan-card-private.h"
#include "tally-question-card.h"
#include "tally-test-mock.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-transcript-view.h"
#include "tally-transcript.h"
#include "tally-ui.h"
#include "tally-window-private.h"


/* Harness */



static GtkWindow *
show_in_window (GtkWidget *child,
                int        width,
                int        height)
{
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);

  gtk_widget_set_margin_top (box, 18);
  gtk_widget_set_margin_bottom (box, 18);
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  gtk_box_append (GTK_BOX (box), child);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), box);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_window_set_child (window, scroller);
  gtk_window_set_default_size (window, width, height);
  /* Shown, not presented: presenting takes the X keyboard focus, which
   * other UI tests on the same display may be using. */
  gtk_widget_set_visible (GTK_WIDGET (window), TRUE);
  SPIN_UNTIL (gtk_widget_get_mapped (child));
  tally_test_wait_frames (child, 2);
  return window;
}

/* The window installs the cards' actions (docs/architecture.md §3.2);
 * a card shown alone gets them from an action group named "session". */
static void
install_session_action (GtkWidget  *widget,
                        const char *name,
                        const char *parameter_type,
                        GCallback   activate,
                        gpointer    data)
{
  GActionGroup *group = g_object_get_data (G_OBJECT (widget), "test-session-actions");
  g_autoptr(GSimpleAction) action = g_simple_action_new (name, G_VARIANT_TYPE (parameter_type));

  if (group == NULL)
    {
      group = G_ACTION_GROUP (g_simple_action_group_new ());
      g_object_set_data_full (G_OBJECT (widget), "test-session-actions", group, g_object_unref);
      gtk_widget_insert_action_group (widget, "session", group);
    }
  g_signal_connect (action, "activate", activate, data);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (action));
}

static JsonObject *
parse_object (const char *json)
{
  g_autoptr(JsonNode) node = json != NULL ? json_from_string (json, NULL) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_object_ref (json_node_get_object (node)) : NULL;
}

static void
apply (TallyTranscript *transcript,
       const char      *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (json, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  tally_transcript_apply (transcript, json_node_get_object (node));
}

static TallyBlock *
last_block (TallyTranscript *transcript)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (transcript));
  TallyBlock *block;

  g_assert_cmpuint (n, >, 0);
  block = g_list_model_get_item (G_LIST_MODEL (transcript), n - 1);
  g_object_unref (block);   /* the transcript keeps it */
  return block;
}

static void
collect (GtkWidget *widget,
         GType      type,
         GPtrArray *found)
{
  if (g_type_is_a (G_OBJECT_TYPE (widget), type))
    g_ptr_array_add (found, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect (child, type, found);
}

static GPtrArray *
find_all (GtkWidget *root,
          GType      type)
{
  GPtrArray *found = g_ptr_array_new ();

  collect (root, type, found);
  return found;
}

static gboolean
has_accessible_label (GtkWidget  *widget,
                      const char *label)
{
  g_autofree char *mismatch = NULL;

  if (!gtk_test_accessible_has_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL))
    return FALSE;
  mismatch = gtk_test_accessible_check_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label);
  return mismatch == NULL;
}

/* The one widget of @type named @label for assistive technology. */
static GtkWidget *
find_named (GtkWidget  *root,
            GType       type,
            const char *label)
{
  g_autoptr(GPtrArray) all = find_all (root, type);
  GtkWidget *found = NULL;

  for (guint i = 0; i < all->len; i++)
    if (has_accessible_label (g_ptr_array_index (all, i), label))
      {
        g_assert_null (found);
        found = g_ptr_array_index (all, i);
      }
  return found;
}

static gboolean
is_usable (GtkWidget *widget)
{
  return gtk_widget_is_drawable (widget) && gtk_widget_is_sensitive (widget);
}

/* How many buttons the analyst could press now. */
static guint
count_usable_buttons (GtkWidget *root)
{
  g_autoptr(GPtrArray) buttons = find_all (root, GTK_TYPE_BUTTON);
  guint n = 0;

  for (guint i = 0; i < buttons->len; i++)
    if (is_usable (g_ptr_array_index (buttons, i)))
      n++;
  return n;
}

static void
count_click_cb (GtkButton *button,
                guint     *clicks)
{
  (*clicks)++;
}

/* Activates @button as Enter or Space would, and waits for the click (a
 * button shows itself pressed for a moment before it clicks). */
static void
click (GtkWidget *button)
{
  guint clicks = 0;
  gulong id;

  g_assert_true (GTK_IS_BUTTON (button));
  id = g_signal_connect (button, "clicked", G_CALLBACK (count_click_cb), &clicks);
  g_assert_true (gtk_widget_activate (button));
  SPIN_UNTIL (clicks > 0);
  g_signal_handler_disconnect (button, id);
  tally_test_spin_idle ();
}

static void
press (GtkWidget *root,
       GType      type,
       const char *label)
{
  GtkWidget *button = find_named (root, type, label);

  g_assert_nonnull (button);
  g_assert_true (is_usable (button));
  click (button);
}

/* The first label under @root with the style class "card-title". */
static GtkWidget *
card_title (GtkWidget *root)
{
  g_autoptr(GPtrArray) labels = find_all (root, GTK_TYPE_LABEL);

  for (guint i = 0; i < labels->len; i++)
    if (gtk_widget_has_css_class (g_ptr_array_index (labels, i), "card-title"))
      return g_ptr_array_index (labels, i);
  g_assert_not_reached ();
}

static gboolean
label_shows (GtkWidget  *root,
             const char *text)
{
  g_autoptr(GPtrArray) labels = find_all (root, GTK_TYPE_LABEL);

  for (guint i = 0; i < labels->len; i++)
    {
      GtkWidget *label = g_ptr_array_index (labels, i);

      if (gtk_widget_is_drawable (label) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (label)), text) == 0)
        return TRUE;
    }
  return FALSE;
}

static char *
text_view_text (GtkTextView *view)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

static gboolean
tally_test_dark (void)
{
  return adw_style_manager_get_dark (adw_style_manager_get_default ());
}

/* Renders @widget as the window shows it, on the window's background,
 * with a margin of @margin pixels. */
static GdkTexture *
render_widget (GtkWidget *widget,
               int        margin)
{
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  GtkWidget *parent = gtk_widget_get_parent (widget);
  graphene_rect_t bounds;
  int width, height;

  g_assert_nonnull (parent);
  g_assert_true (gtk_widget_compute_bounds (widget, parent, &bounds));
  width = (int) ceilf (bounds.size.width) + 2 * margin;
  height = (int) ceilf (bounds.size.height) + 2 * margin;
  g_assert_cmpint (width, >, 2 * margin);
  g_assert_cmpint (height, >, 2 * margin);

  gtk_snapshot_append_color (snapshot,
                             tally_test_dark () ? &(GdkRGBA) { 0.14f, 0.14f, 0.14f, 1 }
                                                : &(GdkRGBA) { 0.98f, 0.98f, 0.98f, 1 },
                             &GRAPHENE_RECT_INIT (0, 0, width, height));
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (margin - bounds.origin.x, margin - bounds.origin.y));
  gtk_widget_snapshot_child (parent, widget, snapshot);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);
  return gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
}

/* Whether @widget shows anything but its background: some pixel differs
 * clearly from the top left one. */
static gboolean
widget_has_ink (GtkWidget *widget)
{
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree guchar *pixels = NULL;
  int width, height;
  gsize stride;

  if (!gtk_widget_is_drawable (widget) || gtk_widget_get_height (widget) < 2)
    return FALSE;

  texture = render_widget (widget, 0);
  width = gdk_texture_get_width (texture);
  height = gdk_texture_get_height (texture);
  stride = (gsize) width * 4;
  pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        const guchar *p = pixels + y * stride + x * 4;
        int diff = ABS (p[0] - pixels[0]) + ABS (p[1] - pixels[1]) + ABS (p[2] - pixels[2]);

        if (diff > 120)
          return TRUE;
      }
  return FALSE;
}

typedef struct {
  GtkWidget *widget;
  gboolean   inked;
} InkCheck;

static void
after_paint_cb (GdkFrameClock *clock,
                InkCheck      *check)
{
  /* After the frame is painted everything is laid out. */
  if (!check->inked)
    check->inked = widget_has_ink (check->widget);
}

/* Waits until @widget has drawn something: a web view paints from its own
 * process a little after it is laid out. */
static void
wait_for_ink (GtkWidget *widget)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  InkCheck check = { widget, FALSE };
  gulong id;

  g_assert_nonnull (clock);
  id = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &check);
  while (!check.inked)
    {
      gtk_widget_queue_draw (widget);
      SPIN_UNTIL (check.inked || g_main_context_pending (NULL));
      g_main_context_iteration (NULL, FALSE);
    }
  g_signal_handler_disconnect (clock, id);
}

typedef struct {
  GtkWidget  *widget;
  GdkTexture *texture;
} PaintedRender;

static void
render_after_paint_cb (GdkFrameClock *clock,
                       gpointer       user_data)
{
  PaintedRender *render = user_data;

  if (render->texture == NULL)
    render->texture = render_widget (render->widget, 12);
}

/* Renders @widget right after a frame is painted, when everything is laid
 * out: between frames a countdown label or rows added to the list may
 * have queued a new allocation, and GTK will not snapshot a widget
 * waiting for one. */
static GdkTexture *
render_painted (GtkWidget *widget)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  PaintedRender render = { widget, NULL };
  gulong id;

  g_assert_nonnull (clock);
  id = g_signal_connect (clock, "after-paint", G_CALLBACK (render_after_paint_cb), &render);
  gtk_widget_queue_draw (widget);
  SPIN_UNTIL (render.texture != NULL);
  g_signal_handler_disconnect (clock, id);
  return render.texture;
}

static void
save_png (GtkWidget  *widget,
          const char *name)
{
  g_autoptr(GdkTexture) texture = render_painted (widget);
  g_autofree char *dir = g_build_filename (g_getenv ("G_TEST_BUILDDIR") != NULL ? g_getenv ("G_TEST_BUILDDIR") : ".",
                                           "artifacts", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("Screenshot: %s", path);
}

/* Question card */

#define STORES_Q "Which stores should the report compare?"
#define PERIOD_Q "Which period should it cover?"

static const char question_request[] =
  "{\"type\":\"question_request\",\"turn_id\":\"t1\",\"question_id\":\"q1\",\"tool_id\":\"toolu_q\","
  "\"questions\":["
  " {\"question\":\"" STORES_Q "\",\"header\":\"Stores\",\"multiSelect\":true,\"options\":["
  "   {\"label\":\"Leeds\",\"description\":\"Park Square, Leeds Station and Briggate\"},"
  "   {\"label\":\"York\",\"description\":\"Minster Yard, The Shambles and Heslington Hall\"},"
  "   {\"label\":\"Minster Yard only\",\"description\":\"The busiest store on its own\"}]},"
  " {\"question\":\"" PERIOD_Q "\",\"header\":\"Period\",\"options\":["
  "   {\"label\":\"Q1 2025\",\"description\":\"January to March\"},"
  "   {\"label\":\"Q2 2025\",\"description\":\"April to June\"},"
  "   {\"label\":\"Both quarters\",\"description\":\"The whole half year\","
  "    \"preview\":\"| Month | Revenue (£) |\\n| Jan 2025 | … |\"}]}]}";

typedef struct {
  guint       calls;
  gboolean    dismissed;
  JsonObject *answers;
} Answered;

static void
answered_cb (GSimpleAction *action,
             GVariant      *parameter,
             Answered      *out)
{
  const char *id, *json;
  g_autoptr(JsonObject) answers = NULL;

  g_variant_get (parameter, "(&sm&s)", &id, &json);
  g_assert_cmpstr (id, ==, "q1");
  answers = parse_object (json);
  out->calls++;
  out->dismissed = answers == NULL;
  g_clear_pointer (&out->answers, json_object_unref);
  if (answers != NULL)
    out->answers = json_object_ref (answers);
}

static GtkWidget *
new_question_card (TallyTranscript *transcript,
                   Answered        *out)
{
  GtkWidget *card = tally_question_card_new ();

  apply (transcript, question_request);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), last_block (transcript));
  install_session_action (card, "answer", "(sms)", G_CALLBACK (answered_cb), out);
  return card;
}

static GtkToggleButton *
chip (GtkWidget  *card,
      const char *label)
{
  GtkWidget *found = find_named (card, GTK_TYPE_TOGGLE_BUTTON, label);

  g_assert_nonnull (found);
  return GTK_TOGGLE_BUTTON (found);
}

static GtkEditable *
other_entry (GtkWidget  *card,
             const char *question)
{
  g_autofree char *name = g_strdup_printf ("Other answer to: %s", question);
  GtkWidget *entry = find_named (card, GTK_TYPE_ENTRY, name);

  g_assert_nonnull (entry);
  return GTK_EDITABLE (entry);
}

static GtkWidget *
send_button (GtkWidget *card)
{
  GtkWidget *button = find_named (card, GTK_TYPE_BUTTON, "Send answers");

  g_assert_nonnull (button);
  return button;
}

static void
test_question_chips (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Answered out = { 0 };
  GtkWidget *card = new_question_card (transcript, &out);
  GtkWindow *window = show_in_window (card, 640, 700);
  GtkToggleButton *leeds = chip (card, "Leeds");
  GtkToggleButton *york = chip (card, "York");
  GtkToggleButton *q1 = chip (card, "Q1 2025");
  GtkToggleButton *q2 = chip (card, "Q2 2025");
  GtkToggleButton *both = chip (card, "Both quarters");
  g_autofree char *mismatch = NULL;
  const char *tooltip = NULL;

  /* Chips are named by their label and described by the option. */
  tooltip = gtk_widget_get_tooltip_text (GTK_WIDGET (york));
  g_assert_cmpstr (tooltip, ==, "Minster Yard, The Shambles and Heslington Hall");
  mismatch = gtk_test_accessible_check_property (GTK_ACCESSIBLE (york), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                                 "Minster Yard, The Shambles and Heslington Hall");
  g_assert_null (mismatch);
  g_assert_true (label_shows (card, "Stores"));
  g_assert_true (label_shows (card, STORES_Q));
  tally_test_assert_centring_bin (gtk_widget_get_parent (card_title (card)));
  g_assert_nonnull (find_named (card, GTK_TYPE_BUTTON, "Dismiss"));
  g_assert_cmpstr (gtk_entry_get_placeholder_text (GTK_ENTRY (other_entry (card, STORES_Q))), ==, "Other…");

  /* Nothing answered yet. */
  g_assert_false (gtk_widget_get_sensitive (send_button (card)));
  g_assert_false (tally_question_card_can_send (TALLY_QUESTION_CARD (card)));

  /* Single select: a group, one at a time. */
  click (GTK_WIDGET (q1));
  g_assert_true (gtk_toggle_button_get_active (q1));
  click (GTK_WIDGET (q2));
  g_assert_true (gtk_toggle_button_get_active (q2));
  g_assert_false (gtk_toggle_button_get_active (q1));
  g_assert_false (gtk_toggle_button_get_active (both));
  /* The chosen option's description shows on its chip, and only there:
   * not repeated under the chips. */
  g_assert_true (label_shows (card, "April to June"));
  g_assert_false (label_shows (card, "Q2 2025 — April to June"));

  /* One question answered is not enough. */
  g_assert_false (gtk_widget_get_sensitive (send_button (card)));

  /* Multi select: chips toggle freely. */
  click (GTK_WIDGET (leeds));
  click (GTK_WIDGET (york));
  g_assert_true (gtk_toggle_button_get_active (leeds));
  g_assert_true (gtk_toggle_button_get_active (york));
  g_assert_true (gtk_toggle_button_get_active (q2));
  g_assert_true (gtk_widget_get_sensitive (send_button (card)));
  click (GTK_WIDGET (leeds));
  g_assert_false (gtk_toggle_button_get_active (leeds));
  g_assert_true (gtk_toggle_button_get_active (york));
  click (GTK_WIDGET (leeds));

  /* A preview shows for the option that has one, in monospace. */
  click (GTK_WIDGET (both));
  g_assert_false (gtk_toggle_button_get_active (q2));
  g_assert_true (label_shows (card, "| Month | Revenue (£) |\n| Jan 2025 | … |"));

  /* Free text joins the chips, as typed. */
  gtk_editable_set_text (other_entry (card, STORES_Q), "the new store");
  g_assert_true (gtk_widget_get_sensitive (send_button (card)));
  tally_test_wait_frames (card, 2);
  save_png (card, "question-card-unit.png");

  press (card, GTK_TYPE_BUTTON, "Send answers");
  g_assert_cmpuint (out.calls, ==, 1);
  g_assert_false (out.dismissed);
  g_assert_nonnull (out.answers);
  g_assert_cmpuint (json_object_get_size (out.answers), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (out.answers, STORES_Q), ==, "Leeds, York, the new store");
  g_assert_cmpstr (json_object_get_string_member (out.answers, PERIOD_Q), ==, "Both quarters");

  /* Sent: nothing more to press. */
  g_assert_cmpuint (count_usable_buttons (card), ==, 0);

  g_clear_pointer (&out.answers, json_object_unref);
  gtk_window_destroy (window);
}

static void
test_question_free_text_only (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Answered out = { 0 };
  GtkWidget *card = new_question_card (transcript, &out);
  GtkWindow *window = show_in_window (card, 640, 700);
  g_autoptr(JsonObject) answers = NULL;

  /* Free text alone answers a question; blank text does not. */
  gtk_editable_set_text (other_entry (card, PERIOD_Q), "   ");
  gtk_editable_set_text (other_entry (card, STORES_Q), "Briggate");
  g_assert_false (gtk_widget_get_sensitive (send_button (card)));
  gtk_editable_set_text (other_entry (card, PERIOD_Q), "March and April, week by week");
  g_assert_true (gtk_widget_get_sensitive (send_button (card)));

  answers = tally_question_card_dup_answers (TALLY_QUESTION_CARD (card));
  g_assert_cmpstr (json_object_get_string_member (answers, STORES_Q), ==, "Briggate");
  g_assert_cmpstr (json_object_get_string_member (answers, PERIOD_Q), ==, "March and April, week by week");

  /* Clearing the text takes the answer away again. */
  gtk_editable_set_text (other_entry (card, STORES_Q), "");
  g_assert_false (gtk_widget_get_sensitive (send_button (card)));

  gtk_window_destroy (window);
}

static GtkEventController *
key_controller_of (GtkWidget *widget)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GtkEventController) controller = g_list_model_get_item (controllers, i);

      if (GTK_IS_EVENT_CONTROLLER_KEY (controller))
        return controller;
    }
  return NULL;
}

/* Delivers a key press the way GTK does when the focus is inside
 * @focus's question: to the question's key controller. */
static gboolean
press_key (GtkWidget *focus,
           guint      keyval)
{
  GtkWidget *question = focus;
  GtkEventController *controller;
  gboolean handled = FALSE;

  while (question != NULL && !gtk_widget_has_css_class (question, "question"))
    question = gtk_widget_get_parent (question);
  g_assert_nonnull (question);
  controller = key_controller_of (question);
  g_assert_nonnull (controller);

  g_assert_true (gtk_widget_grab_focus (focus));
  g_assert_true (gtk_root_get_focus (gtk_widget_get_root (focus)) == focus ||
                 gtk_widget_is_ancestor (gtk_root_get_focus (gtk_widget_get_root (focus)), focus));
  g_signal_emit_by_name (controller, "key-pressed", keyval, 0, 0, &handled);
  tally_test_spin_idle ();
  return handled;
}

static void
test_question_number_keys (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Answered out = { 0 };
  GtkWidget *card = new_question_card (transcript, &out);
  GtkWindow *window = show_in_window (card, 640, 700);
  GtkToggleButton *leeds = chip (card, "Leeds");
  GtkToggleButton *york = chip (card, "York");
  GtkToggleButton *q1 = chip (card, "Q1 2025");
  GtkToggleButton *both = chip (card, "Both quarters");

  /* Multi select: 2 toggles York on and off again. */
  g_assert_true (press_key (GTK_WIDGET (leeds), GDK_KEY_2));
  g_assert_true (gtk_toggle_button_get_active (york));
  g_assert_false (gtk_toggle_button_get_active (leeds));
  g_assert_true (press_key (GTK_WIDGET (york), GDK_KEY_2));
  g_assert_false (gtk_toggle_button_get_active (york));
  g_assert_true (press_key (GTK_WIDGET (york), GDK_KEY_KP_1));
  g_assert_true (gtk_toggle_button_get_active (leeds));

  /* Only the focused question's options. */
  g_assert_false (gtk_toggle_button_get_active (q1));

  /* Single select: 3 then 1 moves the choice. */
  g_assert_true (press_key (GTK_WIDGET (q1), GDK_KEY_3));
  g_assert_true (gtk_toggle_button_get_active (both));
  g_assert_true (press_key (GTK_WIDGET (q1), GDK_KEY_1));
  g_assert_true (gtk_toggle_button_get_active (q1));
  g_assert_false (gtk_toggle_button_get_active (both));

  /* A number past the options does nothing. */
  g_assert_false (press_key (GTK_WIDGET (q1), GDK_KEY_4));
  g_assert_true (gtk_toggle_button_get_active (q1));

  /* In the free-text entry, digits are text. */
  g_assert_false (press_key (GTK_WIDGET (other_entry (card, STORES_Q)), GDK_KEY_2));
  g_assert_false (gtk_toggle_button_get_active (york));

  g_assert_true (gtk_widget_get_sensitive (send_button (card)));
  gtk_window_destroy (window);
}

static void
test_question_dismiss (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Answered out = { 0 };
  GtkWidget *card = new_question_card (transcript, &out);
  GtkWindow *window = show_in_window (card, 640, 700);

  /* Dismiss works whatever was chosen, and sends no answers. */
  click (GTK_WIDGET (chip (card, "York")));
  press (card, GTK_TYPE_BUTTON, "Dismiss");
  g_assert_cmpuint (out.calls, ==, 1);
  g_assert_true (out.dismissed);
  g_assert_null (out.answers);

  /* Only once. */
  g_assert_cmpuint (count_usable_buttons (card), ==, 0);
  g_assert_false (gtk_widget_is_sensitive (send_button (card)));
  g_signal_emit_by_name (send_button (card), "clicked");
  g_assert_cmpuint (out.calls, ==, 1);

  gtk_window_destroy (window);
}

static void
test_question_settled (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  Answered out = { 0 };
  GtkWidget *card = new_question_card (transcript, &out);
  GtkWindow *window = show_in_window (card, 640, 700);
  TallyBlock *block = last_block (transcript);
  GtkWidget *other;

  /* A choice survives the card being rebound (a recycled row). */
  click (GTK_WIDGET (chip (card, "York")));
  gtk_editable_set_text (other_entry (card, STORES_Q), "the new store");
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), NULL);
  other = tally_question_card_new ();
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (other), block);
  g_object_ref_sink (other);
  g_assert_true (gtk_toggle_button_get_active (chip (other, "York")));
  g_assert_false (gtk_toggle_button_get_active (chip (other, "Leeds")));
  g_assert_cmpstr (gtk_editable_get_text (other_entry (other, STORES_Q)), ==, "the new store");
  g_object_unref (other);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), block);

  /* The resolution arrives (live, or replayed from the store). */
  apply (transcript, "{\"type\":\"question_resolved\",\"turn_id\":\"t1\",\"question_id\":\"q1\",\"reason\":\"user\","
                     "\"answers\":{\"" STORES_Q "\":\"Leeds, York, the new store\",\"" PERIOD_Q "\":\"Q1 2025\"}}");
  tally_test_wait_frames (card, 2);
  g_assert_true (label_shows (card, "Answer: Leeds, York, the new store"));
  g_assert_true (label_shows (card, "Answer: Q1 2025"));
  g_assert_true (label_shows (card, "Answered"));
  g_assert_true (label_shows (card, STORES_Q));
  g_assert_cmpuint (count_usable_buttons (card), ==, 0);
  g_assert_false (gtk_widget_is_drawable (GTK_WIDGET (other_entry (card, STORES_Q))));
  g_assert_true (has_accessible_label (card, "Questions: Answered"));
  g_assert_cmpuint (out.calls, ==, 0);

  /* Cards that were not answered say why. */
  {
    const char *reasons[][2] = { { "dismissed", "Dismissed" }, { "timeout", "Timed out" }, { "cancel", "Cancelled" } };

    for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
      {
        g_autofree char *resolved = g_strdup_printf ("{\"type\":\"question_resolved\",\"turn_id\":\"t1\","
                                                     "\"question_id\":\"q1\",\"reason\":\"%s\",\"answers\":null}",
                                                     reasons[i][0]);
        g_autoptr(TallyTranscript) other_transcript = tally_transcript_new ();

        apply (other_transcript, question_request);
        apply (other_transcript, resolved);
        tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), last_block (other_transcript));
        tally_test_wait_frames (card, 1);
        g_assert_true (label_shows (card, reasons[i][1]));
        g_assert_false (label_shows (card, "Answer: Q1 2025"));
        g_assert_cmpuint (count_usable_buttons (card), ==, 0);
        tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), NULL);
      }
  }

  gtk_window_destroy (window);
}

/* Approval card */

#define WRITE_REQUEST \
  "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\"," \
  "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"report.md\",\"content\":\"# Report\\nnew line\\n\"}," \
  "\"suggestions\":[{\"rule\":\"Write(report.md)\",\"scope\":\"workspace\",\"label\":\"Always allow writing report.md in this workspace\"}," \
  "{\"rule\":\"Write(**)\",\"scope\":\"session\",\"label\":\"Always allow Write in this session\"}]}"

typedef struct {
  guint  calls;
  int    decision;
  char  *input;
  char  *rule;
  char  *scope;
  char  *message;
} Decided;

static void
decided_clear (Decided *out)
{
  g_clear_pointer (&out->input, g_free);
  g_clear_pointer (&out->rule, g_free);
  g_clear_pointer (&out->scope, g_free);
  g_clear_pointer (&out->message, g_free);
  out->calls = 0;
  out->decision = -1;
}

static void
decided_cb (GSimpleAction *action,
            GVariant      *parameter,
            Decided       *out)
{
  const char *id, *json, *rule, *scope, *message;
  g_autoptr(JsonObject) input = NULL;
  int decision;

  g_variant_get (parameter, "(&sim&sm&sm&sm&s)", &id, &decision, &json, &rule, &scope, &message);
  g_assert_cmpstr (id, ==, "a1");
  input = parse_object (json);
  decided_clear (out);
  out->calls = 1;
  out->decision = decision;
  if (input != NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      json_node_set_object (node, input);
      out->input = json_to_string (node, FALSE);
    }
  out->rule = g_strdup (rule);
  out->scope = g_strdup (scope);
  out->message = g_strdup (message);
}

typedef struct {
  char            *workspace;
  TallyTranscript *transcript;
  GtkWidget       *card;
  GtkWindow       *window;
  Decided          out;
} ApprovalFixture;

static void
approval_setup (ApprovalFixture *fixture,
                const char      *request)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;

  fixture->workspace = g_dir_make_tmp ("tally-cards-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (fixture->workspace, "report.md", NULL);
  g_assert_true (g_file_set_contents (path, "# Report\nold line\n", -1, &error));

  fixture->transcript = tally_transcript_new ();
  apply (fixture->transcript, request);
  fixture->card = tally_approval_card_new ();
  tally_block_widget_set_workspace (TALLY_BLOCK_WIDGET (fixture->card), fixture->workspace);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (fixture->card), last_block (fixture->transcript));
  fixture->out.decision = -1;
  install_session_action (fixture->card, "approve", "(simsmsmsms)", G_CALLBACK (decided_cb), &fixture->out);
  fixture->window = show_in_window (fixture->card, 720, 700);
}

static void
approval_teardown (ApprovalFixture *fixture)
{
  g_autofree char *path = g_build_filename (fixture->workspace, "report.md", NULL);

  gtk_window_destroy (fixture->window);
  g_clear_object (&fixture->transcript);
  decided_clear (&fixture->out);
  g_unlink (path);
  g_rmdir (fixture->workspace);
  g_free (fixture->workspace);
}

/* Whether line @line (0-based) of @view carries the tag @name. */
static gboolean
line_has_tag (GtkTextView *view,
              int          line,
              const char  *name)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), name);
  GtkTextIter iter;

  g_assert_nonnull (tag);
  g_assert_true (gtk_text_buffer_get_iter_at_line (buffer, &iter, line));
  while (!gtk_text_iter_ends_line (&iter))
    {
      if (gtk_text_iter_has_tag (&iter, tag))
        return TRUE;
      gtk_text_iter_forward_char (&iter);
    }
  return FALSE;
}

static GtkTextView *
diff_view (GtkWidget *card)
{
  GtkWidget *view = find_named (card, GTK_TYPE_TEXT_VIEW, "Changes to the file");

  g_assert_nonnull (view);
  return GTK_TEXT_VIEW (view);
}

static void
test_approval_allow_once (void)
{
  ApprovalFixture f = { 0 };
  g_autofree char *diff = NULL;

  approval_setup (&f, WRITE_REQUEST);

  /* In the analyst's words, and a diff against the file as it is: line
   * numbers and signs, no unified-diff headers, the changed lines tinted. */
  SPIN_UNTIL (gtk_widget_is_drawable (GTK_WIDGET (diff_view (f.card))));
  g_assert_true (label_shows (f.card, "Allow Tally to change report.md?"));
  /* The title beside the icon sits in a centring bin, so the header's
   * box does not have it search widths (src/ui/block/tally-centring-layout.c) */
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (card_title (f.card))), ==, "Allow Tally to change report.md?");
  tally_test_assert_centring_bin (gtk_widget_get_parent (card_title (f.card)));
  diff = text_view_text (diff_view (f.card));
  g_assert_cmpstr (diff, ==, "1   # Report\n2 − old line\n2 + new line");
  g_assert_null (strstr (diff, "@@"));
  g_assert_null (strstr (diff, "+++"));
  g_assert_null (strstr (diff, "---"));
  g_assert_true (line_has_tag (diff_view (f.card), 1, "removed"));
  g_assert_true (line_has_tag (diff_view (f.card), 2, "added"));
  g_assert_false (line_has_tag (diff_view (f.card), 0, "added"));
  g_assert_false (line_has_tag (diff_view (f.card), 0, "removed"));
  g_assert_true (label_shows (f.card, "1 line added, 1 removed"));
  g_assert_true (has_accessible_label (f.card, "Approval for Write, waiting for your decision"));

  /* The four named buttons, and the menu beside Deny. */
  g_assert_nonnull (find_named (f.card, GTK_TYPE_BUTTON, "Allow once"));
  g_assert_nonnull (find_named (f.card, GTK_TYPE_BUTTON, "Allow with changes"));
  g_assert_nonnull (find_named (f.card, GTK_TYPE_BUTTON, "Always allow"));
  g_assert_nonnull (find_named (f.card, GTK_TYPE_BUTTON, "Deny"));
  g_assert_nonnull (find_named (f.card, GTK_TYPE_MENU_BUTTON, "More ways to deny"));
  tally_test_wait_frames (f.card, 2);
  save_png (f.card, "approval-card-unit.png");

  /* Keyboard: the buttons take the focus; Enter activates the focused one. */
  g_assert_true (gtk_widget_get_focusable (find_named (f.card, GTK_TYPE_BUTTON, "Allow once")));
  press (f.card, GTK_TYPE_BUTTON, "Allow once");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_ALLOW);
  g_assert_null (f.out.input);
  g_assert_null (f.out.rule);
  g_assert_null (f.out.message);
  g_assert_cmpuint (count_usable_buttons (f.card), ==, 0);

  approval_teardown (&f);
}

static void
set_editor_text (GtkWidget  *card,
                 const char *text)
{
  GtkWidget *editor = find_named (card, GTK_TYPE_TEXT_VIEW, "Edited input");

  g_assert_nonnull (editor);
  g_assert_true (gtk_widget_is_drawable (editor));
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (editor)), text, -1);
}

static void
test_approval_allow_edited (void)
{
  ApprovalFixture f = { 0 };
  GtkWidget *editor;
  g_autofree char *content = NULL;
  g_autofree char *pretty = NULL;

  /* A Write: the editor holds the file's content, not an escaped JSON
   * string, and the edit becomes the content the tool writes. */
  approval_setup (&f, WRITE_REQUEST);
  SPIN_UNTIL (_tally_approval_card_get_preview (TALLY_APPROVAL_CARD (f.card)) != NULL);
  press (f.card, GTK_TYPE_BUTTON, "Allow with changes");
  editor = find_named (f.card, GTK_TYPE_TEXT_VIEW, "Edited input");
  g_assert_true (gtk_widget_is_drawable (editor));
  g_assert_true (gtk_widget_is_ancestor (gtk_root_get_focus (gtk_widget_get_root (editor)), editor) ||
                 gtk_root_get_focus (gtk_widget_get_root (editor)) == editor);
  content = text_view_text (GTK_TEXT_VIEW (editor));
  g_assert_cmpstr (content, ==, "# Report\nnew line\n");
  g_assert_true (label_shows (f.card, "Edit the file as it should be after the change:"));
  set_editor_text (f.card, "# Report\nedited line\n");
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_ALLOW_EDITED);
  g_assert_cmpstr (f.out.input, ==, "{\"file_path\":\"report.md\",\"content\":\"# Report\\nedited line\\n\"}");
  approval_teardown (&f);

  /* A tool with no content to edit: the input as JSON. */
  approval_setup (&f, "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_g\","
                      "\"tool_name\":\"get_schema\",\"tool_input\":{\"table\":\"sales\"},\"suggestions\":[]}");
  SPIN_UNTIL (_tally_approval_card_get_preview (TALLY_APPROVAL_CARD (f.card)) != NULL);
  g_assert_true (label_shows (f.card, "Allow Tally to use get_schema?"));
  press (f.card, GTK_TYPE_BUTTON, "Allow with changes");
  editor = find_named (f.card, GTK_TYPE_TEXT_VIEW, "Edited input");
  pretty = text_view_text (GTK_TEXT_VIEW (editor));
  g_assert_cmpstr (pretty, ==, "{\n  \"table\" : \"sales\"\n}");

  /* Not JSON: the editor stays, with an error. */
  set_editor_text (f.card, "{ \"table\": ");
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 0);
  g_assert_true (gtk_widget_is_drawable (editor));
  {
    g_autoptr(GPtrArray) labels = find_all (f.card, GTK_TYPE_LABEL);
    gboolean error_shown = FALSE;

    for (guint i = 0; i < labels->len; i++)
      {
        GtkWidget *label = g_ptr_array_index (labels, i);

        if (gtk_widget_is_drawable (label) && gtk_widget_has_css_class (label, "error"))
          error_shown = g_str_has_prefix (gtk_label_get_text (GTK_LABEL (label)), "This is not valid JSON: ");
      }
    g_assert_true (error_shown);
  }

  /* JSON, but not an object. */
  set_editor_text (f.card, "[\"sales\"]");
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 0);
  g_assert_true (label_shows (f.card, "The input must be a JSON object, in braces: { … }"));

  /* An object: allowed with exactly that input. */
  set_editor_text (f.card, "{\"table\": \"stores\"}");
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_ALLOW_EDITED);
  g_assert_cmpstr (f.out.input, ==, "{\"table\":\"stores\"}");

  approval_teardown (&f);
}

static void
test_approval_always (void)
{
  ApprovalFixture f = { 0 };
  GtkDropDown *dropdown;

  approval_setup (&f, WRITE_REQUEST);

  /* The first suggestion, in words and exactly, before anything is kept. */
  press (f.card, GTK_TYPE_BUTTON, "Always allow");
  g_assert_cmpuint (f.out.calls, ==, 0);
  g_assert_true (label_shows (f.card, "Always allow writing report.md in this workspace"));
  g_assert_true (label_shows (f.card, "Write(report.md)"));
  g_assert_true (label_shows (f.card, "in this workspace"));
  dropdown = GTK_DROP_DOWN (find_named (f.card, GTK_TYPE_DROP_DOWN, "Rule to keep"));
  g_assert_true (gtk_widget_is_drawable (GTK_WIDGET (dropdown)));

  /* Cancel (Escape) goes back to the buttons; then Escape is not the
   * card's any more. */
  g_assert_true (gtk_widget_activate_action (f.card, "card.cancel", NULL));
  {
    g_autoptr(GPtrArray) buttons = find_all (f.card, GTK_TYPE_BUTTON);

    for (guint i = 0; i < buttons->len; i++)
      if (g_strcmp0 (gtk_actionable_get_action_name (g_ptr_array_index (buttons, i)), "card.cancel") == 0)
        g_assert_false (gtk_widget_get_sensitive (g_ptr_array_index (buttons, i)));
  }
  g_assert_false (label_shows (f.card, "Write(report.md)"));
  g_assert_true (is_usable (find_named (f.card, GTK_TYPE_BUTTON, "Allow once")));

  /* The other suggestion. */
  press (f.card, GTK_TYPE_BUTTON, "Always allow");
  gtk_drop_down_set_selected (dropdown, 1);
  g_assert_true (label_shows (f.card, "Write(**)"));
  g_assert_true (label_shows (f.card, "for this session"));
  press (f.card, GTK_TYPE_BUTTON, "Keep rule and allow");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_ALLOW_ALWAYS);
  g_assert_cmpstr (f.out.rule, ==, "Write(**)");
  g_assert_cmpstr (f.out.scope, ==, "session");

  approval_teardown (&f);
}

static void
test_approval_deny (void)
{
  ApprovalFixture f = { 0 };
  GtkWidget *entry;
  const char *message = "  Don't overwrite it; write reports/march.md instead.  ";

  approval_setup (&f, WRITE_REQUEST);

  press (f.card, GTK_TYPE_BUTTON, "Deny");
  g_assert_cmpuint (f.out.calls, ==, 0);
  entry = find_named (f.card, GTK_TYPE_ENTRY, "Tell the model what to do instead");
  g_assert_true (gtk_widget_is_drawable (entry));
  g_assert_cmpstr (gtk_entry_get_placeholder_text (GTK_ENTRY (entry)), ==, "Tell the model what to do instead");
  gtk_editable_set_text (GTK_EDITABLE (entry), message);
  press (f.card, GTK_TYPE_BUTTON, "Confirm denial");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_DENY);
  g_assert_cmpstr (f.out.message, ==, message);

  approval_teardown (&f);

  /* Deny and stop, from the menu, with no message. */
  approval_setup (&f, WRITE_REQUEST);
  g_assert_true (gtk_widget_activate_action (f.card, "card.deny-stop", NULL));
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_DENY_STOP);
  g_assert_null (f.out.message);
  gtk_widget_activate_action (f.card, "card.deny-stop", NULL);
  g_assert_cmpuint (f.out.calls, ==, 1);
  approval_teardown (&f);
}

static void
test_approval_bash_outside (void)
{
  ApprovalFixture f = { 0 };

  approval_setup (&f,
                  "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a2\",\"tool_id\":\"toolu_b\","
                  "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"cp report.md /tmp/elsewhere/\"},"
                  "\"suggestions\":[],\"outside_workspace\":true}");

  /* The command in monospace, a warning, no diff; no rule to keep. */
  g_assert_true (label_shows (f.card, "cp report.md /tmp/elsewhere/"));
  g_assert_true (label_shows (f.card, "This touches a path outside the session’s workspace."));
  g_assert_false (gtk_widget_is_drawable (GTK_WIDGET (diff_view (f.card))));
  g_assert_false (is_usable (find_named (f.card, GTK_TYPE_BUTTON, "Always allow")));
  g_assert_true (is_usable (find_named (f.card, GTK_TYPE_BUTTON, "Allow once")));

  approval_teardown (&f);
}

/* A command that bidirectional controls would make read as another
 * ("Trojan Source"): the card shows each control as an escape, and the
 * command's label never adds a hyphen where it wraps. */
static gboolean
never_hyphenates (GtkLabel *label)
{
  PangoAttrList *attributes = gtk_label_get_attributes (label);
  GSList *all = attributes != NULL ? pango_attr_list_get_attributes (attributes) : NULL;
  gboolean found = FALSE;

  for (GSList *l = all; l != NULL; l = l->next)
    {
      PangoAttribute *attribute = l->data;

      if (attribute->klass->type == PANGO_ATTR_INSERT_HYPHENS)
        found = ((PangoAttrInt *) attribute)->value == 0;
    }
  g_slist_free_full (all, (GDestroyNotify) pango_attribute_destroy);
  return found;
}

static void
test_approval_bidi_command (void)
{
  ApprovalFixture f = { 0 };
  g_autoptr(GPtrArray) labels = NULL;
  g_autofree char *edited = NULL;
  GtkLabel *command = NULL;

  approval_setup (&f,
                  "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_t\","
                  "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
                  "\"ls \\u202e\\u2066 ; rm -rf victimdir \\u2069 \\u2066 # \\u2069\\u202c\\u200b\"},"
                  "\"suggestions\":[]}");

  /* What runs, character for character; the raw form is nowhere. */
  g_assert_true (label_shows (f.card, "ls \\u202e\\u2066 ; rm -rf victimdir \\u2069 \\u2066 # \\u2069\\u202c\\u200b"));
  labels = find_all (f.card, GTK_TYPE_LABEL);
  for (guint i = 0; i < labels->len; i++)
    {
      GtkLabel *label = g_ptr_array_index (labels, i);
      const char *text = gtk_label_get_text (label);

      g_assert_null (strstr (text, "\xe2\x80\xae"));
      g_assert_null (strstr (text, "\xe2\x81\xa6"));
      if (strstr (text, "rm -rf victimdir") != NULL)
        command = label;
    }
  g_assert_nonnull (command);
  g_assert_true (never_hyphenates (command));
  g_assert_true (is_usable (find_named (f.card, GTK_TYPE_BUTTON, "Allow once")));

  /* The editor shows the escapes too, and the input it gives back
   * unchanged is the model's, controls and all. */
  press (f.card, GTK_TYPE_BUTTON, "Allow with changes");
  edited = text_view_text (GTK_TEXT_VIEW (find_named (f.card, GTK_TYPE_TEXT_VIEW, "Edited input")));
  g_assert_null (strstr (edited, "\xe2\x80\xae"));
  g_assert_nonnull (strstr (edited, "ls \\u202e\\u2066 ; rm -rf victimdir"));
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpstr (f.out.input, ==,
                   "{\"command\":\"ls \xe2\x80\xae\xe2\x81\xa6 ; rm -rf victimdir \xe2\x81\xa9 \xe2\x81\xa6 # "
                   "\xe2\x81\xa9\xe2\x80\xac\xe2\x80\x8b\"}");

  approval_teardown (&f);
}

static void
test_approval_settled (void)
{
  ApprovalFixture f = { 0 };

  approval_setup (&f, WRITE_REQUEST);

  /* A denial with a message, as the store replays it. */
  apply (f.transcript, "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                       "\"decision\":\"deny\",\"reason\":\"user\",\"message\":\"Write it under reports/ instead\"}");
  tally_test_wait_frames (f.card, 2);
  g_assert_true (label_shows (f.card, "Denied"));
  g_assert_true (label_shows (f.card, "Told the model: “Write it under reports/ instead”"));
  g_assert_cmpuint (count_usable_buttons (f.card), ==, 0);
  g_assert_true (has_accessible_label (f.card, "Approval for Write: Denied"));
  g_assert_cmpuint (f.out.calls, ==, 0);
  approval_teardown (&f);

  /* Always allowed, bound after it settled (no diff then). */
  approval_setup (&f, WRITE_REQUEST);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (f.card), NULL);
  apply (f.transcript, "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                       "\"decision\":\"allow_always\",\"rule\":\"Write(report.md)\",\"scope\":\"workspace\",\"reason\":\"user\"}");
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (f.card), last_block (f.transcript));
  tally_test_wait_frames (f.card, 2);
  g_assert_true (label_shows (f.card, "Always allowed"));
  g_assert_true (label_shows (f.card, "Rule kept in this workspace: Write(report.md)"));
  g_assert_false (gtk_widget_is_drawable (GTK_WIDGET (diff_view (f.card))));
  g_assert_cmpuint (count_usable_buttons (f.card), ==, 0);
  approval_teardown (&f);

  /* Timed out. */
  approval_setup (&f, WRITE_REQUEST);
  apply (f.transcript, "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                       "\"decision\":\"deny\",\"reason\":\"timeout\",\"message\":\"No answer came in time.\"}");
  tally_test_wait_frames (f.card, 1);
  g_assert_true (label_shows (f.card, "Denied: no answer in time"));
  g_assert_false (label_shows (f.card, "Told the model: “No answer came in time.”"));
  g_assert_cmpuint (count_usable_buttons (f.card), ==, 0);
  approval_teardown (&f);
}

/* Approvals in the analyst's words (issue 14 §5) */

static GtkWidget *
first_of (GtkWidget *root,
          GType      type)
{
  g_autoptr(GPtrArray) found = find_all (root, type);

  return found->len > 0 ? g_ptr_array_index (found, 0) : NULL;
}

static char *
first_text_view_text (GtkWidget *root)
{
  g_autoptr(GPtrArray) views = find_all (root, GTK_TYPE_TEXT_VIEW);

  g_assert_cmpuint (views->len, >, 0);
  return text_view_text (g_ptr_array_index (views, 0));
}

static GtkWidget *
content_box (GtkWidget *card)
{
  GtkWidget *box = find_named (card, GTK_TYPE_BOX, "Content of the new file");

  g_assert_nonnull (box);
  return box;
}

static void
test_approval_new_file (void)
{
  ApprovalFixture f = { 0 };
  g_autofree char *text = NULL;
  GtkWidget *box;

  /* A new Markdown file: its content, rendered; no JSON, no escapes. */
  approval_setup (&f, "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                      "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"reports/march.md\","
                      "\"content\":\"# March\\n\\n**Revenue** grew by 12%.\\n\\n- Leeds \\\"Station\\\" led\\n\"},"
                      "\"suggestions\":[]}");
  box = content_box (f.card);
  SPIN_UNTIL (gtk_widget_is_drawable (box));
  g_assert_true (label_shows (f.card, "Allow Tally to create march.md?"));
  g_assert_true (label_shows (f.card, "reports/march.md"));
  g_assert_nonnull (first_of (box, TALLY_TYPE_MARKDOWN_VIEW));
  text = first_text_view_text (box);
  g_assert_nonnull (strstr (text, "March"));
  g_assert_nonnull (strstr (text, "Revenue grew by 12%."));
  g_assert_nonnull (strstr (text, "Leeds \"Station\" led"));
  g_assert_null (strstr (text, "\\n"));
  g_assert_null (strstr (text, "\\\""));
  g_assert_null (strstr (text, "**"));
  g_assert_null (strstr (text, "content"));
  g_assert_false (gtk_widget_is_drawable (GTK_WIDGET (diff_view (f.card))));
  tally_test_wait_frames (f.card, 2);
  save_png (f.card, tally_test_dark () ? "approval-new-file-dark.png" : "approval-new-file.png");
  approval_teardown (&f);

  /* Other text: monospace, as it is. */
  approval_setup (&f, "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                      "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"totals.csv\","
                      "\"content\":\"store,total\\nLeeds,120\\n\"},\"suggestions\":[]}");
  box = content_box (f.card);
  SPIN_UNTIL (gtk_widget_is_drawable (box));
  g_assert_true (label_shows (f.card, "Allow Tally to create totals.csv?"));
  g_assert_null (first_of (box, TALLY_TYPE_MARKDOWN_VIEW));
  g_clear_pointer (&text, g_free);
  text = first_text_view_text (box);
  g_assert_cmpstr (text, ==, "store,total\nLeeds,120\n");
  g_assert_true (gtk_text_view_get_monospace (GTK_TEXT_VIEW (first_of (box, GTK_TYPE_TEXT_VIEW))));
  approval_teardown (&f);

  /* A script with bidirectional controls: shown with its escapes. */
  approval_setup (&f, "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                      "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"cleanup.sh\","
                      "\"content\":\"ls \\u202e\\u2066; rm -rf data\\u2069\\u2066#\\u2069\\u202c\\n\"},\"suggestions\":[]}");
  box = content_box (f.card);
  SPIN_UNTIL (gtk_widget_is_drawable (box));
  g_clear_pointer (&text, g_free);
  text = first_text_view_text (box);
  g_assert_cmpstr (text, ==, "ls \\u202e\\u2066; rm -rf data\\u2069\\u2066#\\u2069\\u202c\n");
  approval_teardown (&f);
}

#define EDIT_REQUEST \
  "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_e\"," \
  "\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"report.md\",\"old_string\":\"old line\"," \
  "\"new_string\":\"better line\\nand one more\"}," \
  "\"suggestions\":[{\"rule\":\"Edit(**)\",\"scope\":\"session\",\"label\":\"Allow changes to any file in this workspace for this session\"}," \
  "{\"rule\":\"Edit(report.md)\",\"scope\":\"workspace\",\"label\":\"Always allow changes to report.md\"}]}"

static void
test_approval_edit_change (void)
{
  ApprovalFixture f = { 0 };
  g_autofree char *diff = NULL;
  g_autofree char *content = NULL;

  approval_setup (&f, EDIT_REQUEST);
  g_assert_true (label_shows (f.card, "Allow Tally to change report.md?"));
  SPIN_UNTIL (gtk_widget_is_drawable (GTK_WIDGET (diff_view (f.card))));
  diff = text_view_text (diff_view (f.card));
  g_assert_cmpstr (diff, ==, "1   # Report\n2 − old line\n2 + better line\n3 + and one more");
  g_assert_null (strstr (diff, "@@"));
  g_assert_true (line_has_tag (diff_view (f.card), 1, "removed"));
  g_assert_true (line_has_tag (diff_view (f.card), 2, "added"));
  g_assert_true (line_has_tag (diff_view (f.card), 3, "added"));
  g_assert_true (label_shows (f.card, "2 lines added, 1 removed"));
  tally_test_wait_frames (f.card, 2);
  save_png (f.card, tally_test_dark () ? "approval-edit-dark.png" : "approval-edit.png");

  /* Always allow: the catch-all is offered but not selected. */
  press (f.card, GTK_TYPE_BUTTON, "Always allow");
  g_assert_cmpuint (gtk_drop_down_get_selected (GTK_DROP_DOWN (find_named (f.card, GTK_TYPE_DROP_DOWN, "Rule to keep"))),
                    ==, 1);
  g_assert_true (label_shows (f.card, "Always allow changes to report.md"));
  g_assert_true (label_shows (f.card, "Edit(report.md)"));
  g_assert_false (label_shows (f.card, "Edit(**)"));
  g_assert_true (gtk_widget_activate_action (f.card, "card.cancel", NULL));

  /* Allow with changes: the whole file as the edit leaves it. */
  press (f.card, GTK_TYPE_BUTTON, "Allow with changes");
  content = text_view_text (GTK_TEXT_VIEW (find_named (f.card, GTK_TYPE_TEXT_VIEW, "Edited input")));
  g_assert_cmpstr (content, ==, "# Report\nbetter line\nand one more\n");
  g_assert_true (label_shows (f.card, "Edit the file as it should be after the change:"));
  set_editor_text (f.card, "# Report\nthe analyst's line\n");
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpint (f.out.decision, ==, TALLY_DECISION_ALLOW_EDITED);
  g_assert_cmpstr (f.out.input, ==,
                   "{\"file_path\":\"report.md\",\"old_string\":\"# Report\\nold line\\n\","
                   "\"new_string\":\"# Report\\nthe analyst's line\\n\"}");
  approval_teardown (&f);
}

/* A file too long to compare on the main thread gets a note, no diff. */
static void
test_approval_long_file (void)
{
  ApprovalFixture f = { 0 };
  g_autoptr(GString) old_text = g_string_new (NULL);
  g_autoptr(GString) new_text = g_string_new (NULL);
  g_autoptr(JsonObject) event = json_object_new ();
  g_autoptr(JsonObject) input = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *request = NULL;
  g_autofree char *path = NULL;

  for (guint i = 0; i < 50001; i++)
    {
      g_string_append_printf (old_text, "row %u\n", i);
      g_string_append_printf (new_text, "other %u\n", i);
    }
  json_object_set_string_member (input, "file_path", "long.txt");
  json_object_set_string_member (input, "content", new_text->str);
  json_object_set_string_member (event, "type", "approval_request");
  json_object_set_string_member (event, "turn_id", "t1");
  json_object_set_string_member (event, "approval_id", "a1");
  json_object_set_string_member (event, "tool_id", "toolu_w");
  json_object_set_string_member (event, "tool_name", "Write");
  json_object_set_object_member (event, "tool_input", json_object_ref (input));
  json_node_set_object (node, event);
  request = json_to_string (node, FALSE);

  approval_setup (&f, request);
  path = g_build_filename (f.workspace, "long.txt", NULL);
  g_assert_true (g_file_set_contents (path, old_text->str, -1, NULL));
  /* The file was written after the card was bound: read again. */
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (f.card), NULL);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (f.card), last_block (f.transcript));
  SPIN_UNTIL (label_shows (f.card, "The file is too long to show its changes here."));
  g_assert_true (label_shows (f.card, "Allow Tally to change long.txt?"));
  g_assert_false (gtk_widget_is_drawable (GTK_WIDGET (diff_view (f.card))));
  g_unlink (path);
  approval_teardown (&f);
}

static void
test_approval_query (void)
{
  ApprovalFixture f = { 0 };
  g_autofree char *content = NULL;

  approval_setup (&f, "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_q\","
                      "\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT store, SUM(total) FROM sales GROUP BY store\"},"
                      "\"suggestions\":[{\"rule\":\"query_database\",\"scope\":\"workspace\","
                      "\"label\":\"Always allow queries on this database in this workspace\"}]}");
  g_assert_true (label_shows (f.card, "Allow Tally to run this query?"));
  g_assert_true (label_shows (f.card, "SELECT store, SUM(total) FROM sales GROUP BY store"));
  g_assert_true (has_accessible_label (f.card, "Approval for query_database, waiting for your decision"));

  press (f.card, GTK_TYPE_BUTTON, "Always allow");
  g_assert_true (label_shows (f.card, "Always allow queries on this database in this workspace"));
  g_assert_true (gtk_widget_activate_action (f.card, "card.cancel", NULL));

  /* The query is edited as SQL text, and runs as edited. */
  press (f.card, GTK_TYPE_BUTTON, "Allow with changes");
  content = text_view_text (GTK_TEXT_VIEW (find_named (f.card, GTK_TYPE_TEXT_VIEW, "Edited input")));
  g_assert_cmpstr (content, ==, "SELECT store, SUM(total) FROM sales GROUP BY store");
  set_editor_text (f.card, "SELECT store FROM sales LIMIT 5");
  press (f.card, GTK_TYPE_BUTTON, "Run with these changes");
  g_assert_cmpuint (f.out.calls, ==, 1);
  g_assert_cmpstr (f.out.input, ==, "{\"sql\":\"SELECT store FROM sales LIMIT 5\"}");
  approval_teardown (&f);

  /* A command. */
  approval_setup (&f, "{\"type\":\"approval_request\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_b\","
                      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"wc -l report.md\"},\"suggestions\":[]}");
  g_assert_true (label_shows (f.card, "Allow Tally to run this command?"));
  g_assert_true (label_shows (f.card, "wc -l report.md"));
  approval_teardown (&f);
}

/* The gate's offers read as rules a person can check, and the first is
 * never every file. */
static void
test_approval_rule_words (void)
{
  g_autofree char *workspace = g_dir_make_tmp ("tally-rules-XXXXXX", NULL);
  TallyToolContext context = { NULL, workspace, FALSE, NULL };
  static const struct { const char *tool; const char *path; const char *rule; const char *label; } cases[] = {
    { "Edit", "report.md", "Edit(report.md)", "Always allow changes to report.md" },
    { "Write", "report.md", "Edit(report.md)", "Always allow changes to report.md" },
    { "Write", "reports/march.md", "Edit(reports/**)", "Always allow changes to files under reports/" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonObject) input = json_object_new ();
      g_autoptr(JsonArray) suggestions = NULL;
      JsonObject *first;

      json_object_set_string_member (input, "file_path", cases[i].path);
      json_object_set_string_member (input, "content", "x");
      json_object_set_string_member (input, "old_string", "a");
      json_object_set_string_member (input, "new_string", "b");
      suggestions = tally_gate_dup_suggestions (cases[i].tool, input, &context);
      g_assert_cmpuint (json_array_get_length (suggestions), ==, 2);
      first = json_array_get_object_element (suggestions, 0);
      g_assert_cmpstr (json_object_get_string_member (first, "rule"), ==, cases[i].rule);
      g_assert_cmpstr (json_object_get_string_member (first, "label"), ==, cases[i].label);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 1), "rule"),
                       ==, "Edit(**)");
    }

  {
    g_autoptr(JsonObject) input = json_object_new ();
    g_autoptr(JsonArray) suggestions = NULL;

    json_object_set_string_member (input, "sql", "SELECT 1");
    suggestions = tally_gate_dup_suggestions ("query_database", input, &context);
    g_assert_cmpuint (json_array_get_length (suggestions), ==, 1);
    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 0), "label"),
                     ==, "Always allow queries on this database in this workspace");
  }
  g_rmdir (workspace);
}

static gint64 fake_now;

static gint64
fake_clock (void)
{
  return fake_now;
}

static void
test_approval_countdown (void)
{
  ApprovalFixture f = { 0 };
  GtkWidget *countdown;
  const gint64 ts = G_GINT64_CONSTANT (1767225600000000);

  _tally_approval_card_set_clock (fake_clock);
  fake_now = ts + 15 * G_USEC_PER_SEC;
  approval_setup (&f, "{\"type\":\"approval_request\",\"ts\":1767225600000000,\"turn_id\":\"t1\",\"approval_id\":\"a1\","
                      "\"tool_id\":\"toolu_b\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},"
                      "\"suggestions\":[],\"timeout_s\":120}");
  g_assert_true (label_shows (f.card, "Denies in 1:45"));
  countdown = NULL;
  {
    g_autoptr(GPtrArray) labels = find_all (f.card, GTK_TYPE_LABEL);

    for (guint i = 0; i < labels->len; i++)
      if (g_strcmp0 (gtk_label_get_text (g_ptr_array_index (labels, i)), "Denies in 1:45") == 0)
        countdown = g_ptr_array_index (labels, i);
  }
  g_assert_nonnull (countdown);
  tally_test_wait_frames (f.card, 2);
  save_png (f.card, tally_test_dark () ? "approval-countdown-dark.png" : "approval-countdown.png");

  fake_now = ts + 61 * G_USEC_PER_SEC;
  _tally_approval_card_tick (TALLY_APPROVAL_CARD (f.card));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (countdown)), ==, "Denies in 0:59");
  fake_now = ts + 119 * G_USEC_PER_SEC + G_USEC_PER_SEC / 2;
  _tally_approval_card_tick (TALLY_APPROVAL_CARD (f.card));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (countdown)), ==, "Denies in 0:01");
  fake_now = ts + 121 * G_USEC_PER_SEC;
  _tally_approval_card_tick (TALLY_APPROVAL_CARD (f.card));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (countdown)), ==, "Denying…");

  /* Decided: the countdown goes. */
  press (f.card, GTK_TYPE_BUTTON, "Allow once");
  g_assert_false (gtk_widget_is_drawable (countdown));
  approval_teardown (&f);

  /* No timeout: no countdown. */
  approval_setup (&f, WRITE_REQUEST);
  {
    g_autoptr(GPtrArray) labels = find_all (f.card, GTK_TYPE_LABEL);

    for (guint i = 0; i < labels->len; i++)
      if (gtk_widget_is_drawable (g_ptr_array_index (labels, i)))
        g_assert_false (g_str_has_prefix (gtk_label_get_text (g_ptr_array_index (labels, i)), "Denies in"));
  }
  approval_teardown (&f);
  _tally_approval_card_set_clock (NULL);
}

typedef struct {
  guint  sent;
  guint  withdrawn;
  char  *id;
  char  *title;
  char  *body;
} Notified;

static Notified notified;

static void
record_notification (GtkWidget     *card,
                     const char    *id,
                     GNotification *notification,
                     const char    *title,
                     const char    *body)
{
  g_assert_true (TALLY_IS_APPROVAL_CARD (card));
  g_free (notified.id);
  notified.id = g_strdup (id);
  if (notification == NULL)
    {
      notified.withdrawn++;
      return;
    }
  notified.sent++;
  g_assert_true (G_IS_NOTIFICATION (notification));
  g_free (notified.title);
  g_free (notified.body);
  notified.title = g_strdup (title);
  notified.body = g_strdup (body);
}

static void
test_approval_notification (void)
{
  ApprovalFixture f = { 0 };

  _tally_approval_card_set_notify_func (record_notification);

  /* The test windows are shown, not presented: none is the active one. */
  approval_setup (&f, WRITE_REQUEST);
  g_assert_false (gtk_window_is_active (f.window));
  g_assert_cmpuint (notified.sent, ==, 1);
  g_assert_cmpstr (notified.id, ==, "approval-a1");
  g_assert_cmpstr (notified.title, ==, "Tally is waiting for your approval");
  g_assert_nonnull (notified.body);
  g_assert_true (g_str_has_prefix (notified.body, "Allow Tally to "));

  /* Once only, and withdrawn when decided. */
  g_object_notify (G_OBJECT (f.window), "is-active");
  g_assert_cmpuint (notified.sent, ==, 1);
  press (f.card, GTK_TYPE_BUTTON, "Allow once");
  g_assert_cmpuint (notified.withdrawn, ==, 1);
  approval_teardown (&f);

  /* A settled card sends none. */
  notified.sent = 0;
  approval_setup (&f, WRITE_REQUEST);
  g_assert_cmpuint (notified.sent, ==, 1);
  apply (f.transcript, "{\"type\":\"approval_resolved\",\"turn_id\":\"t1\",\"approval_id\":\"a1\",\"tool_id\":\"toolu_w\","
                       "\"decision\":\"deny\",\"reason\":\"timeout\"}");
  g_assert_cmpuint (notified.withdrawn, ==, 2);
  approval_teardown (&f);

  _tally_approval_card_set_notify_func (NULL);
  g_clear_pointer (&notified.id, g_free);
  g_clear_pointer (&notified.title, g_free);
  g_clear_pointer (&notified.body, g_free);
}

/* Plan card */

#define PLAN_MARKDOWN \
  "# Compare Minster Yard and Leeds Station\n\n" \
  "1. Query **monthly revenue** for both stores, January to June 2025\n" \
  "2. Write `report.md` with a table and three findings\n\n" \
  "<script>document.title='pwned'</script>\n\n" \
  "See [the Beanline notes](https://example.com/beanline).\n\n" \
  "| Store | City |\n|---|---|\n| Minster Yard | York |\n| Leeds Station | Leeds |\n"

static TallyBlock *
plan_block (TallyTranscript *transcript,
            const char      *markdown,
            int              version)
{
  g_autoptr(JsonObject) event = json_object_new ();

  json_object_set_string_member (event, "type", "plan_proposed");
  json_object_set_string_member (event, "turn_id", "t1");
  json_object_set_string_member (event, "plan_id", "plan_1");
  json_object_set_string_member (event, "markdown", markdown);
  json_object_set_int_member (event, "version", version);
  tally_transcript_apply (transcript, event);
  return last_block (transcript);
}

static void
test_plan_navigation_rule (void)
{
  g_assert_cmpint (_tally_plan_card_classify_navigation ("about:blank", FALSE, TRUE), ==, TALLY_PLAN_NAVIGATION_ALLOW);
  g_assert_cmpint (_tally_plan_card_classify_navigation ("about:blank", FALSE, FALSE), ==, TALLY_PLAN_NAVIGATION_IGNORE);
  g_assert_cmpint (_tally_plan_card_classify_navigation ("https://example.com/", FALSE, TRUE), ==, TALLY_PLAN_NAVIGATION_IGNORE);
  g_assert_cmpint (_tally_plan_card_classify_navigation ("https://example.com/", TRUE, FALSE), ==, TALLY_PLAN_NAVIGATION_OPEN);
  g_assert_cmpint (_tally_plan_card_classify_navigation ("mailto:ops@beanline.example", TRUE, FALSE), ==, TALLY_PLAN_NAVIGATION_OPEN);
  g_assert_cmpint (_tally_plan_card_classify_navigation ("javascript:alert(1)", TRUE, FALSE), ==, TALLY_PLAN_NAVIGATION_IGNORE);
  g_assert_cmpint (_tally_plan_card_classify_navigation ("file:///etc/passwd", TRUE, FALSE), ==, TALLY_PLAN_NAVIGATION_IGNORE);
  g_assert_cmpint (_tally_plan_card_classify_navigation (NULL, TRUE, TRUE), ==, TALLY_PLAN_NAVIGATION_IGNORE);
}

static void
test_plan_page (void)
{
  TallyPlanPageStyle dark = { TRUE, "Cantarell\"; } body { color: red", 12 };
  g_autofree char *page = _tally_plan_card_build_page (PLAN_MARKDOWN, NULL);
  g_autofree char *dark_page = _tally_plan_card_build_page ("*x*", &dark);

  /* Raw HTML is text; nothing can load. */
  g_assert_null (strstr (page, "<script>"));
  g_assert_nonnull (strstr (page, "&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
  g_assert_nonnull (strstr (page, "<meta http-equiv=\"Content-Security-Policy\" "
                                  "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"));
  g_assert_nonnull (strstr (page, "<strong>monthly revenue</strong>"));
  g_assert_nonnull (strstr (page, "<table>"));
  g_assert_nonnull (strstr (page, "<a href=\"https://example.com/beanline\">"));
  g_assert_nonnull (strstr (page, "color-scheme: light"));

  /* Dark colours; a font name cannot break out of the style sheet. */
  g_assert_nonnull (strstr (dark_page, "color-scheme: dark"));
  g_assert_nonnull (strstr (dark_page, "font-family: \"Cantarell  body  color red\", sans-serif"));
  g_assert_nonnull (strstr (dark_page, "font-size: 12.0pt"));
}

#if TALLY_HAVE_WEBKIT
typedef struct {
  gboolean  done;
  char     *text;
} Evaluated;

static void
evaluated_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Evaluated *out = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (object), result, &error);

  g_assert_no_error (error);
  out->text = jsc_value_is_undefined (value) ? g_strdup ("undefined") : jsc_value_to_string (value);
  out->done = TRUE;
}

static char *
evaluate (GtkWidget  *web_view,
          const char *script)
{
  Evaluated out = { FALSE, NULL };

  webkit_web_view_evaluate_javascript (WEBKIT_WEB_VIEW (web_view), script, -1, NULL, NULL, NULL,
                                       evaluated_cb, &out);
  SPIN_UNTIL (out.done);
  return out.text;
}
#endif

static char *launched_uri;

/* How many WebKit web processes run below this one (through the sandbox's
 * helpers): read from /proc. */
static guint
count_web_processes (void)
{
  g_autoptr(GHashTable) parents = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) web = g_ptr_array_new ();
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint n = 0;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *stat = NULL;
      const char *close_paren;
      int pid = atoi (name);
      int ppid = 0;

      if (pid <= 0)
        continue;
      path = g_strdup_printf ("/proc/%d/stat", pid);
      if (!g_file_get_contents (path, &stat, NULL, NULL))
        continue;
      /* "PID (COMM) STATE PPID …"; COMM may hold spaces. */
      close_paren = strrchr (stat, ')');
      if (close_paren == NULL || sscanf (close_paren + 2, "%*c %d", &ppid) != 1)
        continue;
      g_hash_table_insert (parents, GINT_TO_POINTER (pid), GINT_TO_POINTER (ppid));
      if (strstr (stat, "(WebKitWebProces") != NULL)
        g_ptr_array_add (web, GINT_TO_POINTER (pid));
    }

  for (guint i = 0; i < web->len; i++)
    {
      int pid = GPOINTER_TO_INT (g_ptr_array_index (web, i));

      for (guint depth = 0; pid > 1 && depth < 16; depth++)
        {
          pid = GPOINTER_TO_INT (g_hash_table_lookup (parents, GINT_TO_POINTER (pid)));
          if (pid == getpid ())
            {
              n++;
              break;
            }
        }
    }
  return n;
}

static void
capture_uri (GtkWidget  *card,
             const char *uri)
{
  g_free (launched_uri);
  launched_uri = g_strdup (uri);
}

static void
test_plan_webkit (void)
{
#if TALLY_HAVE_WEBKIT
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *card;
  GtkWindow *window;
  GtkWidget *web_view;
  g_autofree char *title = NULL;
  g_autofree char *scripts = NULL;
  g_autofree char *location = NULL;
  int height;

  g_unsetenv ("TALLY_NO_WEBKIT");

  /* No WebKit before a plan is shown: the other cards and an empty plan
   * card never start it. */
  card = tally_plan_card_new ();
  g_assert_false (_tally_plan_card_webkit_started ());
  g_assert_null (_tally_plan_card_get_web_view (TALLY_PLAN_CARD (card)));

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), plan_block (transcript, PLAN_MARKDOWN, 1));
  g_assert_true (_tally_plan_card_webkit_started ());
  window = show_in_window (card, 720, 800);

  /* Loaded and measured — or, where the web process cannot start (some
   * CI sandboxes), shown natively instead. */
  SPIN_UNTIL (_tally_plan_card_get_content_height (TALLY_PLAN_CARD (card)) > 0 ||
              _tally_plan_card_get_native_view (TALLY_PLAN_CARD (card)) != NULL);
  web_view = _tally_plan_card_get_web_view (TALLY_PLAN_CARD (card));
  if (web_view == NULL)
    {
      g_test_message ("WebKit could not render here; checking the native fallback");
      g_assert_cmpstr (tally_markdown_view_get_markdown (TALLY_MARKDOWN_VIEW (_tally_plan_card_get_native_view (TALLY_PLAN_CARD (card)))),
                       ==, PLAN_MARKDOWN);
      gtk_window_destroy (window);
      return;
    }

  height = _tally_plan_card_get_content_height (TALLY_PLAN_CARD (card));
  g_assert_cmpint (height, >, 100);
  tally_test_wait_frames (card, 3);
  g_assert_cmpint (gtk_widget_get_height (web_view), ==, height);
  g_assert_true (has_accessible_label (card, "Plan, version 1"));
  g_assert_nonnull (find_named (card, GTK_TYPE_BUTTON, "Implement"));
  g_assert_nonnull (find_named (card, GTK_TYPE_BUTTON, "Refine"));
  g_assert_true (label_shows (card, "Version 1"));

  /* The script in the plan never ran: it is text, and no title was set. */
  title = evaluate (web_view, "document.title");
  g_assert_cmpstr (title, ==, "");
  g_assert_true (webkit_web_view_get_title (WEBKIT_WEB_VIEW (web_view)) == NULL ||
                 *webkit_web_view_get_title (WEBKIT_WEB_VIEW (web_view)) == '\0');
  scripts = evaluate (web_view, "document.scripts.length + ':' + document.body.textContent.includes(\"document.title='pwned'\")");
  g_assert_cmpstr (scripts, ==, "0:true");
  g_assert_nonnull (strstr (_tally_plan_card_get_page (TALLY_PLAN_CARD (card)), "&lt;script&gt;"));

  wait_for_ink (web_view);
  save_png (card, "plan-card-unit.png");

  /* A clicked link goes to the browser, not into the card. */
  _tally_plan_card_set_uri_launcher (capture_uri);
  g_free (evaluate (web_view, "document.querySelector('a').click(); 'clicked'"));
  SPIN_UNTIL (launched_uri != NULL);
  g_assert_cmpstr (launched_uri, ==, "https://example.com/beanline");
  g_clear_pointer (&launched_uri, g_free);

  /* Any other navigation is refused. */
  g_free (evaluate (web_view, "window.location.href = 'https://example.com/elsewhere'; 'moved'"));
  location = evaluate (web_view, "window.location.href");
  g_assert_cmpstr (location, ==, "about:blank");
  g_assert_cmpstr (webkit_web_view_get_uri (WEBKIT_WEB_VIEW (web_view)), ==, "about:blank");
  g_assert_null (launched_uri);
  _tally_plan_card_set_uri_launcher (NULL);

  /* Dark: the page is built again with dark colours and measured again. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_FORCE_DARK);
  SPIN_UNTIL (strstr (_tally_plan_card_get_page (TALLY_PLAN_CARD (card)), "color-scheme: dark") != NULL);
  SPIN_UNTIL (!webkit_web_view_is_loading (WEBKIT_WEB_VIEW (web_view)) &&
              _tally_plan_card_get_content_height (TALLY_PLAN_CARD (card)) > 0);
  tally_test_wait_frames (card, 3);
  wait_for_ink (web_view);
  save_png (card, "plan-card-unit-dark.png");
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);

  /* A second plan card shares the first one's web process. */
  {
    GtkWidget *other = tally_plan_card_new ();
    GtkWindow *other_window;

    tally_block_widget_set_block (TALLY_BLOCK_WIDGET (other), plan_block (transcript, "# Another plan\n\nOne step.\n", 2));
    other_window = show_in_window (other, 600, 400);
    SPIN_UNTIL (_tally_plan_card_get_content_height (TALLY_PLAN_CARD (other)) > 0);
    g_assert_nonnull (_tally_plan_card_get_web_view (TALLY_PLAN_CARD (other)));
    /* WebKit may start a process for a new view and hand it over; once
     * that settles, one web process serves both cards. */
    SPIN_UNTIL (count_web_processes () == 1);
    gtk_window_destroy (other_window);
  }

  /* A narrower card reflows the page and grows taller. */
  gtk_widget_set_size_request (card, -1, -1);
  gtk_window_set_default_size (window, 360, 800);
  SPIN_UNTIL (_tally_plan_card_get_content_height (TALLY_PLAN_CARD (card)) > height);

  gtk_window_destroy (window);
#else
  g_test_skip ("Built without WebKitGTK");
#endif
}

static void
test_plan_native (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *card;
  GtkWindow *window;
  GtkWidget *native;

  g_setenv ("TALLY_NO_WEBKIT", "1", TRUE);
  card = tally_plan_card_new ();
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), plan_block (transcript, PLAN_MARKDOWN, 1));
  window = show_in_window (card, 720, 800);

  g_assert_null (_tally_plan_card_get_web_view (TALLY_PLAN_CARD (card)));
  native = _tally_plan_card_get_native_view (TALLY_PLAN_CARD (card));
  g_assert_true (TALLY_IS_MARKDOWN_VIEW (native));
  g_assert_true (gtk_widget_is_drawable (native));
  g_assert_cmpstr (tally_markdown_view_get_markdown (TALLY_MARKDOWN_VIEW (native)), ==, PLAN_MARKDOWN);
  g_assert_cmpint (gtk_widget_get_height (native), >, 60);
  wait_for_ink (native);
  g_assert_true (is_usable (find_named (card, GTK_TYPE_BUTTON, "Implement")));
  tally_test_wait_frames (card, 2);
  save_png (card, "plan-card-native.png");

  gtk_window_destroy (window);
  g_unsetenv ("TALLY_NO_WEBKIT");
}

typedef struct {
  guint       implement;
  guint       refine;
  TallyBlock *block;
  TallyBlock *first;    /* versions 1 and 2 of plan_1 */
  TallyBlock *second;
} PlanSignals;

/* The plan's id and version, as the actions carry them. */
static void
plan_action_block (GVariant    *parameter,
                   PlanSignals *out)
{
  const char *id;
  gint64 version;

  g_variant_get (parameter, "(&sx)", &id, &version);
  g_assert_cmpstr (id, ==, "plan_1");
  out->block = version == 1 ? out->first : version == 2 ? out->second : NULL;
}

static void
view_implement_cb (GSimpleAction *action,
                   GVariant      *parameter,
                   PlanSignals   *out)
{
  out->implement++;
  plan_action_block (parameter, out);
}

static void
view_refine_cb (GSimpleAction *action,
                GVariant      *parameter,
                PlanSignals   *out)
{
  out->refine++;
  plan_action_block (parameter, out);
}

static TallyPlanCard *
card_for (GtkWidget  *view,
          TallyBlock *block)
{
  g_autoptr(GPtrArray) cards = find_all (view, TALLY_TYPE_PLAN_CARD);

  for (guint i = 0; i < cards->len; i++)
    if (TALLY_BLOCK_WIDGET_BLOCK (g_ptr_array_index (cards, i)) == block)
      return g_ptr_array_index (cards, i);
  return NULL;
}

static void
test_plan_versions (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *view = tally_transcript_view_new ();
  PlanSignals out = { 0 };
  TallyBlock *first, *second;
  TallyPlanCard *card1, *card2;
  GtkWindow *window;
  g_autofree char *changes = NULL;

  g_setenv ("TALLY_NO_WEBKIT", "1", TRUE);

  apply (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t1\",\"mode\":\"plan\",\"text\":\"Plan a report\"}");
  first = plan_block (transcript, "# Plan\n\n1. Query revenue by month\n2. Check the stores table\n3. Write report.md\n", 1);
  apply (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t2\",\"mode\":\"plan\",\"text\":\"Change the plan: add a chart\"}");
  second = plan_block (transcript, "# Plan\n\n1. Query revenue by month\n2. Draw a bar chart\n3. Write report.md\n", 2);

  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  gtk_widget_set_vexpand (view, TRUE);
  window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_child (window, view);
  gtk_window_set_default_size (window, 720, 900);
  gtk_widget_set_visible (GTK_WIDGET (window), TRUE);
  out.first = first;
  out.second = second;
  install_session_action (GTK_WIDGET (window), "implement-plan", "(sx)", G_CALLBACK (view_implement_cb), &out);
  install_session_action (GTK_WIDGET (window), "refine-plan", "(sx)", G_CALLBACK (view_refine_cb), &out);

  SPIN_UNTIL (card_for (view, first) != NULL && card_for (view, second) != NULL);
  tally_test_wait_frames (view, 3);
  card1 = card_for (view, first);
  card2 = card_for (view, second);

  /* The older version cannot be acted on; the newer one says what
   * changed, open: the step added and the step removed are marked and
   * tinted, a step that only got a new number is not. */
  g_assert_false (tally_plan_card_get_active (card1));
  g_assert_false (is_usable (find_named (GTK_WIDGET (card1), GTK_TYPE_BUTTON, "Implement")));
  g_assert_true (tally_plan_card_get_active (card2));
  g_assert_true (label_shows (GTK_WIDGET (card2), "Version 2 of 2"));
  g_assert_true (label_shows (GTK_WIDGET (card1), "Version 1 of 2"));
  g_assert_true (gtk_widget_is_drawable (_tally_plan_card_get_changes (card2)));
  g_assert_false (gtk_widget_is_drawable (_tally_plan_card_get_changes (card1)));
  g_assert_true (gtk_expander_get_expanded (GTK_EXPANDER (_tally_plan_card_get_changes (card2))));
  g_assert_cmpstr (gtk_expander_get_label (GTK_EXPANDER (_tally_plan_card_get_changes (card2))), ==,
                   "Changes since version 1: 1 line added, 1 removed");
  {
    GtkTextView *changes_view = GTK_TEXT_VIEW (gtk_scrolled_window_get_child (
      GTK_SCROLLED_WINDOW (gtk_expander_get_child (GTK_EXPANDER (_tally_plan_card_get_changes (card2))))));

    changes = text_view_text (changes_view);
    g_assert_cmpstr (changes, ==,
                     "  # Plan\n  \n  1. Query revenue by month\n− 2. Check the stores table\n"
                     "+ 2. Draw a bar chart\n  3. Write report.md");
    g_assert_true (line_has_tag (changes_view, 3, "removed"));
    g_assert_true (line_has_tag (changes_view, 4, "added"));
    g_assert_false (line_has_tag (changes_view, 5, "added"));
    g_assert_false (line_has_tag (changes_view, 5, "removed"));
  }
  tally_test_wait_frames (GTK_WIDGET (card2), 2);
  save_png (GTK_WIDGET (card2), tally_test_dark () ? "plan-versions-dark.png" : "plan-versions.png");

  /* Version 1 is reachable from the newer card, in place, and back. */
  g_assert_false (is_usable (find_named (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Next version")));
  press (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Previous version");
  g_assert_true (label_shows (GTK_WIDGET (card2), "Version 1 of 2"));
  g_assert_false (gtk_widget_is_drawable (_tally_plan_card_get_changes (card2)));
  g_assert_false (is_usable (find_named (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Implement")));
  g_assert_false (is_usable (find_named (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Previous version")));
  g_assert_cmpstr (tally_markdown_view_get_markdown (TALLY_MARKDOWN_VIEW (_tally_plan_card_get_native_view (card2))),
                   ==, "# Plan\n\n1. Query revenue by month\n2. Check the stores table\n3. Write report.md\n");
  press (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Next version");
  g_assert_true (label_shows (GTK_WIDGET (card2), "Version 2 of 2"));
  g_assert_true (is_usable (find_named (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Implement")));
  g_assert_true (gtk_widget_is_drawable (_tally_plan_card_get_changes (card2)));

  /* Refine leaves the plan open; Implement closes it. */
  press (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Refine");
  g_assert_cmpuint (out.refine, ==, 1);
  g_assert_true (out.block == second);
  g_assert_true (tally_plan_card_get_active (card2));
  press (GTK_WIDGET (card2), GTK_TYPE_BUTTON, "Implement");
  g_assert_cmpuint (out.implement, ==, 1);
  g_assert_true (out.block == second);
  g_assert_false (tally_plan_card_get_active (card2));

  /* The next user message keeps it closed when the card is shown again. */
  apply (transcript, "{\"type\":\"turn_started\",\"turn_id\":\"t3\",\"mode\":\"ask\",\"text\":\"Implement the plan.\"}");
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card2), NULL);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card2), second);
  g_assert_false (tally_plan_card_get_active (card2));

  gtk_window_destroy (window);
  g_unsetenv ("TALLY_NO_WEBKIT");
}


/* End to end: the walkthrough (docs/architecture.md §7.3) in the window */

#define REPORT_PROMPT "Write a short report comparing two of our stores."

/* The card of @type showing a block of @kind that is still pending (for a
 * plan: one that can be acted on), or NULL. */
static GtkWidget *
find_open_card (GtkWidget *root,
                GType      type)
{
  g_autoptr(GPtrArray) cards = find_all (root, type);

  for (guint i = 0; i < cards->len; i++)
    {
      GtkWidget *card = g_ptr_array_index (cards, i);
      TallyBlock *block = NULL;

      if (!gtk_widget_get_mapped (card))
        continue;
      if (TALLY_IS_PLAN_CARD (card))
        {
          if (tally_plan_card_get_active (TALLY_PLAN_CARD (card)))
            return card;
          continue;
        }
      g_object_get (card, "block", &block, NULL);
      if (block != NULL && !tally_block_get_finished (block))
        {
          g_object_unref (block);
          return card;
        }
      g_clear_object (&block);
    }
  return NULL;
}

static void
save_window_png (GtkWidget  *window,
                 const char *name)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (window);
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *dir = g_build_filename (g_getenv ("G_TEST_BUILDDIR") != NULL ? g_getenv ("G_TEST_BUILDDIR") : ".",
                                           "artifacts", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  int width = gtk_widget_get_width (window);
  int height = gtk_widget_get_height (window);

  tally_test_wait_frames (window, 2);
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("Screenshot: %s", path);
}

/* Brings @card fully into view, for the screenshot. */
static void
show_card (GtkWidget *card)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (card, GTK_TYPE_SCROLLED_WINDOW);
  GtkAdjustment *adjustment;
  graphene_rect_t bounds;

  g_assert_nonnull (scroller);
  tally_test_wait_frames (card, 2);
  adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  g_assert_true (gtk_widget_compute_bounds (card, scroller, &bounds));
  if (bounds.origin.y < 0 || bounds.origin.y + bounds.size.height > gtk_widget_get_height (scroller))
    gtk_adjustment_set_value (adjustment, gtk_adjustment_get_value (adjustment) + bounds.origin.y - 24);
  tally_test_wait_frames (card, 2);
}

typedef struct {
  TallyTestMock *mock;
  char          *workspace;
} ReportData;

static void
store_report_body (TallyApplication *app,
                   TallyWindow      *window,
                   gpointer          user_data)
{
  ReportData *data = user_data;
  GtkWidget *root = GTK_WIDGET (window);
  GtkDropDown *mode = _tally_window_get_mode_dropdown (window);
  TallySession *session;
  GListModel *blocks;
  GtkWidget *question, *plan, *approval;
  g_autofree char *report = NULL;
  g_autofree char *report_path = NULL;
  g_autoptr(GError) error = NULL;
  GtkWidget *web_view;
  TallyBlock *user = NULL;
  guint turns = 0, receipts = 0;

  gtk_window_set_default_size (GTK_WINDOW (window), 1120, 900);
  SPIN_UNTIL (tally_application_has_api_key (app));
  tally_test_wait_frames (root, 2);

  /* Turn 1: plan mode, with thinking. */
  gtk_drop_down_set_selected (mode, TALLY_MODE_PLAN);
  gtk_toggle_button_set_active (_tally_window_get_thinking_button (window), TRUE);
  tally_window_send (window, REPORT_PROMPT);
  g_assert_true (tally_window_is_busy (window));

  /* The question card: the real store names as chips. */
  SPIN_UNTIL ((question = find_open_card (root, TALLY_TYPE_QUESTION_CARD)) != NULL);
  g_assert_nonnull (find_named (question, GTK_TYPE_TOGGLE_BUTTON, "Park Square"));
  g_assert_nonnull (find_named (question, GTK_TYPE_TOGGLE_BUTTON, "The Shambles"));
  click (GTK_WIDGET (chip (question, "Minster Yard")));
  click (GTK_WIDGET (chip (question, "Leeds Station")));
  g_assert_false (gtk_widget_get_sensitive (send_button (question)));
  click (GTK_WIDGET (chip (question, "January to June 2025")));
  g_assert_true (gtk_widget_get_sensitive (send_button (question)));
  show_card (question);
  save_png (question, "e2e-question-card.png");
  save_window_png (root, "e2e-question-window.png");
  press (question, GTK_TYPE_BUTTON, "Send answers");

  /* The plan card, once the turn is over. */
  SPIN_UNTIL (!tally_window_is_busy (window));
  session = tally_window_get_session (window);
  g_assert_nonnull (session);
  blocks = G_LIST_MODEL (tally_session_get_transcript (session));
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_THINKING), >=, 1);
  {
    g_autoptr(TallyBlock) first = g_list_model_get_item (blocks, 0);

    /* The first message of a new session went in the mode picked. */
    g_assert_cmpint (tally_block_get_kind (first), ==, TALLY_BLOCK_USER);
    g_assert_cmpstr (tally_block_get_state (first), ==, "plan");
  }
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_PLAN), ==, 1);
  SPIN_UNTIL ((plan = find_open_card (root, TALLY_TYPE_PLAN_CARD)) != NULL);
  SPIN_UNTIL (_tally_plan_card_get_content_height (TALLY_PLAN_CARD (plan)) > 0 ||
              _tally_plan_card_get_native_view (TALLY_PLAN_CARD (plan)) != NULL);
  web_view = _tally_plan_card_get_web_view (TALLY_PLAN_CARD (plan));
  if (web_view == NULL)
    web_view = _tally_plan_card_get_native_view (TALLY_PLAN_CARD (plan));
  show_card (plan);
  wait_for_ink (web_view);
  save_png (plan, "e2e-plan-card.png");
  save_window_png (root, "e2e-plan-window.png");

  /* Implement: a follow-up in ask mode. */
  press (plan, GTK_TYPE_BUTTON, "Implement");
  g_assert_cmpuint (gtk_drop_down_get_selected (mode), ==, TALLY_MODE_ASK);
  g_assert_true (tally_window_is_busy (window));
  g_assert_false (tally_plan_card_get_active (TALLY_PLAN_CARD (plan)));

  /* The Write of a new report waits on an approval card that shows the
   * report, rendered. */
  SPIN_UNTIL ((approval = find_open_card (root, TALLY_TYPE_APPROVAL_CARD)) != NULL);
  SPIN_UNTIL (gtk_widget_is_drawable (content_box (approval)));
  g_assert_true (label_shows (approval, "Allow Tally to create report.md?"));
  g_assert_nonnull (first_of (content_box (approval), TALLY_TYPE_MARKDOWN_VIEW));
  {
    g_autofree char *markdown = g_strdup (tally_markdown_view_get_markdown (
      TALLY_MARKDOWN_VIEW (first_of (content_box (approval), TALLY_TYPE_MARKDOWN_VIEW))));

    g_assert_nonnull (strstr (markdown, "| **Total** | **371,428.70** | **237,010.40** |"));
  }
  show_card (approval);
  save_png (approval, "e2e-approval-card.png");
  save_window_png (root, "e2e-approval-window.png");
  press (approval, GTK_TYPE_BUTTON, "Allow once");
  SPIN_UNTIL (!tally_window_is_busy (window));

  {
    g_autoptr(TallyBlock) second = NULL;

    for (guint i = g_list_model_get_n_items (blocks); i > 0 && second == NULL; i--)
      {
        g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i - 1);

        if (tally_block_get_kind (block) == TALLY_BLOCK_USER)
          second = g_steal_pointer (&block);
      }
    g_assert_cmpstr (tally_block_get_text (second), ==, "Implement the plan.");
    g_assert_cmpstr (tally_block_get_state (second), ==, "ask");
  }

  /* The report is in the workspace. */
  data->workspace = g_strdup (tally_agent_get_workspace (tally_session_get_agent (session)));
  report_path = g_build_filename (data->workspace, "report.md", NULL);
  g_assert_true (g_file_get_contents (report_path, &report, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (report, "# Minster Yard and Leeds Station, January to June 2025\n"));
  g_assert_nonnull (strstr (report, "| June | 74,934.10 | 44,909.90 |"));

  /* Every turn ended with a receipt: after each user message, a receipt
   * before the next one. */
  for (guint i = 0; i < g_list_model_get_n_items (blocks); i++)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i);

      if (tally_block_get_kind (block) == TALLY_BLOCK_USER)
        {
          g_assert_null (user);
          user = block;
          turns++;
        }
      else if (tally_block_get_kind (block) == TALLY_BLOCK_RECEIPT)
        {
          g_assert_nonnull (user);
          g_assert_cmpstr (tally_block_get_state (block), ==, "done");
          user = NULL;
          receipts++;
        }
    }
  g_assert_null (user);
  g_assert_cmpuint (turns, ==, 2);
  g_assert_cmpuint (receipts, ==, 2);

  /* The cards are settled: what was answered, decided and planned. */
  tally_test_wait_frames (root, 2);
  g_assert_null (find_open_card (root, TALLY_TYPE_APPROVAL_CARD));
  g_assert_null (find_open_card (root, TALLY_TYPE_PLAN_CARD));
  g_assert_true (label_shows (approval, "Allowed once"));
  g_assert_cmpuint (count_usable_buttons (approval), ==, 0);
  g_assert_cmpuint (tally_test_mock_get_n_requests (data->mock), >=, 7);
  save_window_png (root, "e2e-done-window.png");
}

static void
test_store_report (void)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "scenarios", "store-report.json", NULL);
  g_autofree char *dir = g_dir_make_tmp ("tally-cards-e2e-XXXXXX", &error);
  g_autofree char *store = NULL;
  g_autoptr(JsonArray) requests = NULL;
  ReportData data = { 0 };
  gboolean asked_in_plan = FALSE;

  g_assert_no_error (error);
  store = g_build_filename (dir, "tally.db", NULL);
  mock = tally_test_mock_start_file (scenario, &error);
  g_assert_no_error (error);
  data.mock = mock;

  {
    const char *args[] = { "--store", store, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, store_report_body, &data), ==, 0);
  }

  /* Every scripted answer was used, the question's answers went back as
   * the model must read them, and turn 1 asked for thinking. */
  requests = tally_test_mock_dup_requests (mock);
  for (guint i = 0; i < json_array_get_length (requests); i++)
    {
      JsonObject *request = json_array_get_object_element (requests, i);
      g_autofree char *body = NULL;

      if (!g_str_has_prefix (json_object_get_string_member_with_default (request, "path", ""), "/v1/messages"))
        continue;
      g_assert_cmpint (json_object_get_int_member (request, "status"), ==, 200);
      body = json_to_string (json_object_get_member (request, "body"), FALSE);
      if (strstr (body, "toolu_02Ask") != NULL && strstr (body, "Minster Yard, Leeds Station") != NULL &&
          strstr (body, "January to June 2025") != NULL && strstr (body, "\"thinking\"") != NULL)
        asked_in_plan = TRUE;
    }
  g_assert_true (asked_in_plan);

  if (data.workspace != NULL)
    {
      g_autofree char *report = g_build_filename (data.workspace, "report.md", NULL);

      g_unlink (report);
      g_rmdir (data.workspace);
    }
  g_free (data.workspace);
  tally_test_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  static const char *xdg[] = { "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME" };
  g_autofree char *home = g_dir_make_tmp ("tally-test-cards-home-XXXXXX", NULL);
  int status;

  /* The application keeps workspaces and caches under a home of its own,
   * and finds no keyring or session bus (none at all: WebKit's sandbox
   * cannot start with a bus address that leads nowhere). */
  g_assert_nonnull (home);
  for (guint i = 0; i < G_N_ELEMENTS (xdg); i++)
    {
      g_autofree char *dir = g_build_filename (home, xdg[i], NULL);

      g_mkdir_with_parents (dir, 0700);
      g_setenv (xdg[i], dir, TRUE);
    }
  g_unsetenv ("DBUS_SESSION_BUS_ADDRESS");
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  if (g_getenv ("ANTHROPIC_API_KEY") == NULL)
    g_setenv ("ANTHROPIC_API_KEY", "sk-test-key", TRUE);

  /* The test AT context, so accessible names can be checked. */
  g_setenv ("GTK_A11Y", "test", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();
  /* Screenshots show settled states, not transitions. */
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);

  g_test_add_func ("/tally/cards/question/chips", test_question_chips);
  g_test_add_func ("/tally/cards/question/free-text-only", test_question_free_text_only);
  g_test_add_func ("/tally/cards/question/number-keys", test_question_number_keys);
  g_test_add_func ("/tally/cards/question/dismiss", test_question_dismiss);
  g_test_add_func ("/tally/cards/question/settled", test_question_settled);
  g_test_add_func ("/tally/cards/approval/allow-once", test_approval_allow_once);
  g_test_add_func ("/tally/cards/approval/allow-edited", test_approval_allow_edited);
  g_test_add_func ("/tally/cards/approval/always", test_approval_always);
  g_test_add_func ("/tally/cards/approval/deny", test_approval_deny);
  g_test_add_func ("/tally/cards/approval/bash-outside", test_approval_bash_outside);
  g_test_add_func ("/tally/cards/approval/bidi-command", test_approval_bidi_command);
  g_test_add_func ("/tally/cards/approval/settled", test_approval_settled);
  g_test_add_func ("/tally/cards/approval/new-file", test_approval_new_file);
  g_test_add_func ("/tally/cards/approval/edit-change", test_approval_edit_change);
  g_test_add_func ("/tally/cards/approval/long-file", test_approval_long_file);
  g_test_add_func ("/tally/cards/approval/query", test_approval_query);
  g_test_add_func ("/tally/cards/approval/rule-words", test_approval_rule_words);
  g_test_add_func ("/tally/cards/approval/countdown", test_approval_countdown);
  g_test_add_func ("/tally/cards/approval/notification", test_approval_notification);
  g_test_add_func ("/tally/cards/plan/navigation-rule", test_plan_navigation_rule);
  g_test_add_func ("/tally/cards/plan/page", test_plan_page);
  g_test_add_func ("/tally/cards/plan/webkit", test_plan_webkit);
  g_test_add_func ("/tally/cards/plan/native", test_plan_native);
  g_test_add_func ("/tally/cards/plan/versions", test_plan_versions);
  g_test_add_func ("/tally/cards/e2e/store-report", test_store_report);

  status = g_test_run ();
  tally_test_remove_tree (home);

  /* Let idle worker threads (the diffs run in GTask's pool) end before
   * the leak check, so what they keep per thread is freed. */
  g_thread_pool_set_max_unused_threads (0);
  g_thread_pool_stop_unused_threads ();
  return status;
}
