/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-composer"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-composer.h"
#include "tally-composer-private.h"

/**
 * TallyComposer:
 *
 * Where the analyst writes. A multi-line text view in a rounded frame,
 * with a placeholder drawn over it while it is empty, and one round
 * button: Send, or Stop while a turn runs (#TallyComposer:busy).
 *
 * Keys. Enter (or Ctrl+Enter) sends; Shift+Enter is left to the text
 * view, which inserts a line break. The key controller runs in the
 * capture phase so it sees Enter before the text view does; but while an
 * input method is composing (it has preedit text, e.g. while typing
 * Japanese), Enter belongs to the input method, which commits the
 * composition with it, and is never taken to mean "send". The preedit is
 * tracked from the text view's preedit-changed signal.
 *
 * The button is driven by two actions, composer.send (enabled when the
 * text is not blank and no turn runs) and composer.stop (enabled while a
 * turn runs), so it is insensitive exactly when pressing it would do
 * nothing.
 */

struct _TallyComposer
{
  GtkWidget      parent_instance;

  /* Template */
  GtkOverlay        *frame;
  GtkScrolledWindow *scroller;
  GtkTextView       *text_view;
  GtkLabel          *placeholder;
  GtkLabel          *status_label;
  GtkButton         *button;

  GtkTextBuffer     *buffer;
  guint              policy_idle_id;
  guint              busy : 1;
  guint              preedit_active : 1;
};

G_DEFINE_FINAL_TYPE (TallyComposer, tally_composer, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_BUSY,
  N_PROPS
};

enum {
  SEND,
  STOP,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static gboolean
text_is_blank (TallyComposer *self)
{
  GtkTextIter iter;

  gtk_text_buffer_get_start_iter (self->buffer, &iter);
  for (; !gtk_text_iter_is_end (&iter); gtk_text_iter_forward_char (&iter))
    if (!g_unichar_isspace (gtk_text_iter_get_char (&iter)))
      return FALSE;
  return TRUE;
}

static void
update_state (TallyComposer *self)
{
  gboolean empty = gtk_text_buffer_get_char_count (self->buffer) == 0;

  gtk_widget_set_visible (GTK_WIDGET (self->placeholder), empty && !self->preedit_active);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.send",
                                 !self->busy && !text_is_blank (self));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.stop", self->busy);
}

static void
update_button (TallyComposer *self)
{
  if (self->busy)
    {
      gtk_button_set_icon_name (self->button, "media-playback-stop-symbolic");
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->button), "composer.stop");
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->button), _("Stop"));
      gtk_widget_remove_css_class (GTK_WIDGET (self->button), "suggested-action");
      gtk_widget_add_css_class (GTK_WIDGET (self->button), "destructive-action");
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->button),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, _("Stop"),
                                      -1);
    }
  else
    {
      gtk_button_set_icon_name (self->button, "go-up-symbolic");
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->button), "composer.send");
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->button), _("Send (Enter)"));
      gtk_widget_remove_css_class (GTK_WIDGET (self->button), "destructive-action");
      gtk_widget_add_css_class (GTK_WIDGET (self->button), "suggested-action");
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->button),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, _("Send"),
                                      -1);
    }
}

/* A shown scroll bar asks for more height than one line of text, so the
 * frame would open tall. It is only shown once the text overflows the
 * frame's greatest height; until then scrolling needs none. The range
 * changes while the text view is being allocated, so the policy is
 * changed afterwards, from an idle. */
static gboolean
update_scroll_policy_cb (gpointer user_data)
{
  TallyComposer *self = user_data;
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (self->scroller);
  GtkPolicyType policy;
  GtkPolicyType current;

  g_assert (TALLY_IS_COMPOSER (self));

  self->policy_idle_id = 0;

  policy = gtk_adjustment_get_upper (adjustment) > gtk_adjustment_get_page_size (adjustment) + 1
           ? GTK_POLICY_AUTOMATIC : GTK_POLICY_EXTERNAL;
  gtk_scrolled_window_get_policy (self->scroller, NULL, &current);
  if (current != policy)
    gtk_scrolled_window_set_policy (self->scroller, GTK_POLICY_NEVER, policy);

  return G_SOURCE_REMOVE;
}

static void
scroll_range_changed_cb (TallyComposer *self,
                         GtkAdjustment *adjustment)
{
  g_assert (TALLY_IS_COMPOSER (self));

  /* Not yet allocated: nothing to go by. */
  if (gtk_adjustment_get_page_size (adjustment) <= 0)
    return;

  if (self->policy_idle_id == 0)
    self->policy_idle_id = g_idle_add (update_scroll_policy_cb, self);
}

static void
preedit_changed_cb (TallyComposer *self,
                    const char    *preedit,
                    GtkTextView   *text_view)
{
  g_assert (TALLY_IS_COMPOSER (self));

  self->preedit_active = preedit != NULL && preedit[0] != '\0';
  update_state (self);
}

static gboolean
key_pressed_cb (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                TallyComposer         *self)
{
  g_assert (TALLY_IS_COMPOSER (self));

  return tally_composer_handle_key (self, keyval, state);
}

static void
send_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  g_assert (TALLY_IS_COMPOSER (widget));

  tally_composer_send (TALLY_COMPOSER (widget));
}

static void
stop_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TallyComposer *self = TALLY_COMPOSER (widget);

  g_assert (TALLY_IS_COMPOSER (self));

  if (self->busy)
    g_signal_emit (self, signals[STOP], 0);
}

static gboolean
tally_composer_grab_focus (GtkWidget *widget)
{
  return gtk_widget_grab_focus (GTK_WIDGET (TALLY_COMPOSER (widget)->text_view));
}

static void
tally_composer_dispose (GObject *object)
{
  TallyComposer *self = (TallyComposer *)object;

  g_clear_handle_id (&self->policy_idle_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_COMPOSER);

  G_OBJECT_CLASS (tally_composer_parent_class)->dispose (object);
}

static void
tally_composer_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  TallyComposer *self = TALLY_COMPOSER (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_composer_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  TallyComposer *self = TALLY_COMPOSER (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      tally_composer_set_busy (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_composer_class_init (TallyComposerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_composer_dispose;
  object_class->get_property = tally_composer_get_property;
  object_class->set_property = tally_composer_set_property;
  widget_class->grab_focus = tally_composer_grab_focus;


  /**
   * TallyComposer:busy:
   *
   * Whether a turn runs. While busy the button is Stop (accessible name
   * "Stop") and nothing can be sent; otherwise it is Send.
   */
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * TallyComposer::send:
   * @self: the composer
   * @text: what the analyst wrote, without leading and trailing white
   *   space; never blank; valid only during the emission (copy it to
   *   keep it)
   *
   * Emitted when the analyst sends (Enter, Ctrl+Enter or the Send
   * button). The composer has been emptied by the time handlers run, so
   * a handler may put a draft back with tally_composer_set_text().
   */
  signals[SEND] =
    g_signal_new ("send", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                  G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE);

  /**
   * TallyComposer::stop:
   * @self: the composer
   *
   * Emitted, at once, when the analyst presses Stop while busy.
   */
  signals[STOP] =
    g_signal_new ("stop", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_install_action (widget_class, "composer.send", NULL, send_action);
  gtk_widget_class_install_action (widget_class, "composer.stop", NULL, stop_action);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-composer.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyComposer, frame);
  gtk_widget_class_bind_template_child (widget_class, TallyComposer, scroller);
  gtk_widget_class_bind_template_child (widget_class, TallyComposer, text_view);
  gtk_widget_class_bind_template_child (widget_class, TallyComposer, placeholder);
  gtk_widget_class_bind_template_child (widget_class, TallyComposer, status_label);
  gtk_widget_class_bind_template_child (widget_class, TallyComposer, button);
  gtk_widget_class_bind_template_callback (widget_class, preedit_changed_cb);
  gtk_widget_class_set_css_name (widget_class, "tallycomposer");
}

static void
tally_composer_init (TallyComposer *self)
{
  GtkEventController *keys;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->buffer = gtk_text_view_get_buffer (self->text_view);
  g_signal_connect_object (gtk_scrolled_window_get_vadjustment (self->scroller), "changed",
                           G_CALLBACK (scroll_range_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->buffer, "changed", G_CALLBACK (update_state),
                           self, G_CONNECT_SWAPPED);

  keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect_object (keys, "key-pressed", G_CALLBACK (key_pressed_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self->text_view), keys);

  update_button (self);
  update_state (self);
}

/**
 * tally_composer_new:
 *
 * Creates an empty composer.
 *
 * Returns: (transfer floating): a new #TallyComposer
 */
GtkWidget *
tally_composer_new (void)
{
  return g_object_new (TALLY_TYPE_COMPOSER, NULL);
}

/**
 * tally_composer_dup_text:
 * @self: a #TallyComposer
 *
 * Gets the text as written (the draft), white space included.
 *
 * Returns: (transfer full): the text, possibly empty
 */
char *
tally_composer_dup_text (TallyComposer *self)
{
  GtkTextIter start, end;

  g_return_val_if_fail (TALLY_IS_COMPOSER (self), NULL);

  gtk_text_buffer_get_bounds (self->buffer, &start, &end);
  return gtk_text_buffer_get_text (self->buffer, &start, &end, FALSE);
}

/**
 * tally_composer_set_text:
 * @self: a #TallyComposer
 * @text: (nullable): the text to put in the composer (a saved draft), or
 *   %NULL to empty it
 *
 * Replaces the text and puts the cursor at its end. Used to switch
 * per-session drafts and to pre-fill the composer (a plan's Refine).
 */
void
tally_composer_set_text (TallyComposer *self,
                         const char    *text)
{
  GtkTextIter end;

  g_return_if_fail (TALLY_IS_COMPOSER (self));

  gtk_text_buffer_set_text (self->buffer, text != NULL ? text : "", -1);
  gtk_text_buffer_get_end_iter (self->buffer, &end);
  gtk_text_buffer_place_cursor (self->buffer, &end);
}

/**
 * tally_composer_get_busy:
 * @self: a #TallyComposer
 *
 * Returns: whether a turn runs (see #TallyComposer:busy)
 */
gboolean
tally_composer_get_busy (TallyComposer *self)
{
  g_return_val_if_fail (TALLY_IS_COMPOSER (self), FALSE);
  return self->busy;
}

/**
 * tally_composer_set_busy:
 * @self: a #TallyComposer
 * @busy: whether a turn runs
 *
 * Turns the button into Stop (@busy) or back into Send. The text stays
 * editable either way, so the next message can be written meanwhile.
 */
void
tally_composer_set_busy (TallyComposer *self,
                         gboolean       busy)
{
  g_return_if_fail (TALLY_IS_COMPOSER (self));

  busy = !!busy;
  if (self->busy == (guint) busy)
    return;

  self->busy = busy;
  update_button (self);
  update_state (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/**
 * tally_composer_set_status:
 * @self: a #TallyComposer
 * @status: (nullable): what the running turn waits for, e.g. "Retrying in
 *   3 s… (attempt 2 of 5)", or %NULL to show nothing
 *
 * Shows @status beside the Stop button, so a turn that waits says why
 * (docs/architecture.md §3.4). Screen readers hear it as the button's
 * description.
 */
void
tally_composer_set_status (TallyComposer *self,
                           const char    *status)
{
  g_return_if_fail (TALLY_IS_COMPOSER (self));

  gtk_label_set_text (self->status_label, status != NULL ? status : "");
  gtk_widget_set_visible (GTK_WIDGET (self->status_label), status != NULL && *status != '\0');
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->button),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, status != NULL ? status : "",
                                  -1);
}

/**
 * tally_composer_get_status:
 * @self: a #TallyComposer
 *
 * Returns: (transfer none): the status shown beside the button; empty when
 *   none is
 */
const char *
tally_composer_get_status (TallyComposer *self)
{
  g_return_val_if_fail (TALLY_IS_COMPOSER (self), NULL);

  return gtk_label_get_text (self->status_label);
}

/**
 * tally_composer_send:
 * @self: a #TallyComposer
 *
 * Does what the Send button does: when the text is not blank and no turn
 * runs, emits #TallyComposer::send with the text trimmed of leading and
 * trailing white space and empties the composer.
 *
 * Returns: whether the text was sent
 */
gboolean
tally_composer_send (TallyComposer *self)
{
  g_autofree char *text = NULL;

  g_return_val_if_fail (TALLY_IS_COMPOSER (self), FALSE);

  if (self->busy || text_is_blank (self))
    return FALSE;

  text = tally_composer_dup_text (self);
  g_strstrip (text);

  /* Empty first, so a handler sees a clean composer and may set a new
   * draft without it being cleared behind its back. */
  tally_composer_set_text (self, NULL);
  g_signal_emit (self, signals[SEND], 0, text);

  return TRUE;
}

/**
 * tally_composer_handle_key: (skip)
 * @self: a #TallyComposer
 * @keyval: the key pressed, a GDK keyval
 * @state: the modifiers held
 *
 * The text view's key handler (capture phase), reachable from tests:
 * Enter and Ctrl+Enter send (and are taken even when there is nothing to
 * send, so Enter never adds a line to a message that could not be sent);
 * Shift+Enter, any other key, and every key while an input method has
 * preedit text are left to the text view.
 *
 * Returns: %TRUE if the key was handled here
 */
gboolean
tally_composer_handle_key (TallyComposer   *self,
                           guint            keyval,
                           GdkModifierType  state)
{
  GdkModifierType mods;

  g_return_val_if_fail (TALLY_IS_COMPOSER (self), FALSE);

  if (keyval != GDK_KEY_Return && keyval != GDK_KEY_KP_Enter && keyval != GDK_KEY_ISO_Enter)
    return FALSE;

  if (self->preedit_active)
    return FALSE;

  mods = state & gtk_accelerator_get_default_mod_mask ();
  if (mods != 0 && mods != GDK_CONTROL_MASK)
    return FALSE;

  tally_composer_send (self);
  return TRUE;
}

/**
 * tally_composer_get_text_view: (skip)
 * @self: a #TallyComposer
 *
 * Returns: (transfer none): the text view
 */
GtkTextView *
tally_composer_get_text_view (TallyComposer *self)
{
  g_return_val_if_fail (TALLY_IS_COMPOSER (self), NULL);
  return self->text_view;
}

/**
 * tally_composer_get_button: (skip)
 * @self: a #TallyComposer
 *
 * Returns: (transfer none): the Send/Stop button
 */
GtkButton *
tally_composer_get_button (TallyComposer *self)
{
  g_return_val_if_fail (TALLY_IS_COMPOSER (self), NULL);
  return self->button;
}

/**
 * tally_composer_get_placeholder: (skip)
 * @self: a #TallyComposer
 *
 * Returns: (transfer none): the placeholder label drawn over the empty
 *   text view
 */
GtkWidget *
tally_composer_get_placeholder (TallyComposer *self)
{
  g_return_val_if_fail (TALLY_IS_COMPOSER (self), NULL);
  return GTK_WIDGET (self->placeholder);
}

/**
 * tally_composer_get_preedit_active: (skip)
 * @self: a #TallyComposer
 *
 * Returns: whether an input method is composing (has preedit text)
 */
gboolean
tally_composer_get_preedit_active (TallyComposer *self)
{
  g_return_val_if_fail (TALLY_IS_COMPOSER (self), FALSE);
  return self->preedit_active;
}
