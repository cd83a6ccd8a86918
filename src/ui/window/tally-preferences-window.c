/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-preferences"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-api-error.h"
#include "tally-application-private.h"
#include "tally-client.h"
#include "tally-json.h"
#include "tally-mode-menu.h"
#include "tally-model-cache.h"
#include "tally-preferences-window.h"

/*
 * Preferences: the API key (keyring, or memory for this run when there is
 * no keyring; `ANTHROPIC_API_KEY` overrides it), the API address, and the
 * defaults of new sessions and the timeouts, all bound to GSettings. The
 * page says where the key and the address in use come from, can test the
 * connection (the model list, GET /v1/models, with the key in use) and
 * forgets the key after asking (issue 14 §13). Every number has its unit.
 */

/**
 * TallyPreferencesWindow:
 *
 * The preferences: API key, API address, defaults for new sessions and
 * timeouts.
 */
struct _TallyPreferencesWindow
{
  AdwPreferencesWindow  parent_instance;

  TallyApplication     *app;
  GSettings            *settings;
  GCancellable         *cancellable;
  char                 *key_status;
  char                 *key_detail;
  char                 *address_status;
  char                 *connection_result;
  GCancellable         *test_cancellable;
  AdwMessageDialog     *forget_dialog;

  AdwPreferencesGroup  *key_group;
  AdwPasswordEntryRow  *key_row;
  AdwActionRow         *key_status_row;
  GtkImage             *key_status_icon;
  GtkButton            *forget_key_button;
  AdwPreferencesGroup  *connection_group;
  AdwEntryRow          *base_url_row;
  AdwActionRow         *address_row;
  AdwActionRow         *test_row;
  GtkSpinner           *test_spinner;
  GtkButton            *test_button;
  AdwComboRow          *default_model_row;
  AdwComboRow          *default_mode_row;
  GtkSwitch            *thinking_switch;
  GtkSpinButton        *budget_spin;
  GtkSpinButton        *approval_spin;
  GtkSpinButton        *question_spin;
  GtkSpinButton        *idle_spin;
  GtkSpinButton        *cost_spin;
};

G_DEFINE_FINAL_TYPE (TallyPreferencesWindow, tally_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

static void
toast (TallyPreferencesWindow *self,
       const char             *message)
{
  g_autofree char *escaped = g_markup_escape_text (message, -1);

  adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self), adw_toast_new (escaped));
}

/* What the preferences say about each key source, and whether the key can
 * be typed in or forgotten there. */
typedef struct {
  const char *title;
  const char *subtitle;
  const char *icon;
  gboolean can_edit;
  gboolean can_forget;
} KeyStatus;

static const KeyStatus key_statuses[] = {
  [TALLY_API_KEY_SOURCE_NONE] = {
    N_("No key yet"),
    N_("Paste a key from the Anthropic Console above. Saved sessions open without one."),
    "dialog-information-symbolic", TRUE, FALSE },
  [TALLY_API_KEY_SOURCE_LOOKING_UP] = {
    N_("Looking for a key in your keyring…"), NULL,
    "content-loading-symbolic", TRUE, FALSE },
  [TALLY_API_KEY_SOURCE_ENVIRONMENT] = {
    N_("Set by the environment"),
    N_("The ANTHROPIC_API_KEY variable overrides any key stored here."),
    "emblem-system-symbolic", FALSE, FALSE },
  [TALLY_API_KEY_SOURCE_KEYRING] = {
    N_("Stored in your keyring"),
    N_("Tally reads the key from the keyring at start; it is never written to a file."),
    "channel-secure-symbolic", TRUE, TRUE },
  [TALLY_API_KEY_SOURCE_MEMORY] = {
    N_("No keyring available: the key is kept for this session only"),
    N_("It is forgotten when Tally quits, and never written anywhere."),
    "dialog-warning-symbolic", TRUE, TRUE },
};

static void
update_key_status (TallyPreferencesWindow *self)
{
  TallyApiKeySource source = tally_application_get_api_key_source (self->app);
  const KeyStatus *status;
  g_autofree char *hint = NULL;

  g_assert ((guint) source < G_N_ELEMENTS (key_statuses));
  status = &key_statuses[source];

  g_free (self->key_status);
  self->key_status = g_strdup (_(status->title));

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->key_status_row), self->key_status);

  /* Which key: its last characters, never the key. */
  g_free (self->key_detail);
  hint = tally_application_dup_api_key_hint (self->app);
  /* A key of eight characters or fewer has no end to show (the hint is
   * the ellipsis alone). */
  if (g_strcmp0 (hint, "…") == 0)
    /* TRANSLATORS: then why the key comes from where it does */
    self->key_detail = g_strdup_printf (_("A short key, whose end is not shown. %s"),
                                        status->subtitle != NULL ? _(status->subtitle) : "");
  else if (hint != NULL)
    /* TRANSLATORS: %s is the end of the key, such as "…x7Qa"; then why
     * it comes from there */
    self->key_detail = g_strdup_printf (_("The key ending in %s. %s"), hint,
                                        status->subtitle != NULL ? _(status->subtitle) : "");
  else
    self->key_detail = g_strdup (status->subtitle != NULL ? _(status->subtitle) : "");
  g_strchomp (self->key_detail);
  adw_action_row_set_subtitle (self->key_status_row, self->key_detail);
  gtk_image_set_from_icon_name (self->key_status_icon, status->icon);
  gtk_widget_set_sensitive (GTK_WIDGET (self->key_row), status->can_edit);
  gtk_widget_set_visible (GTK_WIDGET (self->forget_key_button), status->can_forget);
}

static void
key_stored_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(TallyPreferencesWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  TallyApiKeySource source;

  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));
  g_assert (TALLY_IS_APPLICATION (object));

  source = tally_application_set_api_key_finish (TALLY_APPLICATION (object), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (error != NULL)
    toast (self, error->message);
  else if (source == TALLY_API_KEY_SOURCE_KEYRING)
    toast (self, _("API key saved in your keyring"));
  else
    toast (self, _("No keyring available: the key is kept for this session only"));
}

static void
key_apply_cb (TallyPreferencesWindow *self)
{
  g_autofree char *key = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->key_row)));

  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));

  g_strstrip (key);
  if (*key != '\0')
    tally_application_set_api_key_async (self->app, key, self->cancellable, key_stored_cb, g_object_ref (self));

  gtk_editable_set_text (GTK_EDITABLE (self->key_row), "");
  memset (key, 0, strlen (key));
}

static void
forget_response_cb (TallyPreferencesWindow *self,
                    const char             *response)
{
  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));

  self->forget_dialog = NULL;
  if (g_strcmp0 (response, "forget") != 0)
    return;

  tally_application_forget_api_key (self->app);
  toast (self, _("API key forgotten"));
}

static void
forget_key_cb (TallyPreferencesWindow *self)
{
  AdwMessageDialog *dialog;

  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));

  if (self->forget_dialog != NULL)
    return;

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self), _("Forget the API Key?"),
                                                       _("Tally removes the key from your keyring. Saved "
                                                         "sessions stay and still open; asking a new question "
                                                         "needs a key again.")));
  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    "forget", _("_Forget Key"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, "forget", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (dialog, "cancel");
  adw_message_dialog_set_close_response (dialog, "cancel");
  g_signal_connect_object (dialog, "response", G_CALLBACK (forget_response_cb), self, G_CONNECT_SWAPPED);
  self->forget_dialog = dialog;
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
base_url_apply_cb (TallyPreferencesWindow *self)
{
  g_autofree char *url = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->base_url_row)));

  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));

  g_strstrip (url);
  if (*url != '\0' && !g_str_has_prefix (url, "http://") && !g_str_has_prefix (url, "https://"))
    {
      toast (self, _("The address must start with http:// or https://"));
      return;
    }

  /* The origin is stored without a trailing slash or /v1. */
  while (g_str_has_suffix (url, "/"))
    url[strlen (url) - 1] = '\0';
  if (g_str_has_suffix (url, "/v1"))
    url[strlen (url) - 3] = '\0';

  g_settings_set_string (self->settings, "base-url", url);
  gtk_editable_set_text (GTK_EDITABLE (self->base_url_row), url);
}

/* Where the address in use comes from, in the order the application
 * resolves it (tally_application_get_base_url()). */
static const char *
address_source (TallyPreferencesWindow *self)
{
  const char *base_url = tally_application_get_base_url (self->app);
  const char *env = g_getenv ("ANTHROPIC_BASE_URL");
  g_autofree char *setting = NULL;

  if (tally_application_get_base_url_locked (self->app))
    {
      if (env != NULL && *env != '\0' && g_str_equal (env, base_url))
        return _("from the ANTHROPIC_BASE_URL environment variable");
      return _("from the --base-url option");
    }

  setting = g_strstrip (g_settings_get_string (self->settings, "base-url"));
  if (*setting != '\0' && g_str_equal (setting, base_url))
    return _("from the setting above");
  return _("the public Anthropic API (the default)");
}

static void
update_connection (TallyPreferencesWindow *self)
{
  /* The option and the variable win over the setting (the row below says
   * which one is in use). */
  gtk_widget_set_sensitive (GTK_WIDGET (self->base_url_row), !tally_application_get_base_url_locked (self->app));

  g_free (self->address_status);
  /* TRANSLATORS: the address in use, then where it comes from */
  self->address_status = g_strdup_printf (_("%s — %s"), tally_application_get_base_url (self->app),
                                          address_source (self));
  adw_action_row_set_subtitle (self->address_row, self->address_status);
}

static void
show_connection_result (TallyPreferencesWindow *self,
                        const char             *text,
                        gboolean                ok)
{
  g_free (self->connection_result);
  self->connection_result = g_strdup (text);
  adw_action_row_set_subtitle (self->test_row, text);
  gtk_widget_set_visible (GTK_WIDGET (self->test_spinner), FALSE);
  gtk_spinner_stop (self->test_spinner);
  gtk_widget_set_sensitive (GTK_WIDGET (self->test_button), TRUE);
  if (ok)
    {
      gtk_widget_remove_css_class (GTK_WIDGET (self->test_row), "connection-failed");
      gtk_widget_add_css_class (GTK_WIDGET (self->test_row), "connection-ok");
    }
  else
    {
      gtk_widget_remove_css_class (GTK_WIDGET (self->test_row), "connection-ok");
      gtk_widget_add_css_class (GTK_WIDGET (self->test_row), "connection-failed");
    }
}

static void
models_listed_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(TallyPreferencesWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) answer = NULL;
  g_autofree char *text = NULL;
  const char *address;

  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));

  answer = tally_client_list_models_finish (TALLY_CLIENT (object), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  address = tally_client_get_base_url (TALLY_CLIENT (object));
  if (answer != NULL)
    {
      JsonObject *root = JSON_NODE_HOLDS_OBJECT (answer) ? json_node_get_object (answer) : NULL;
      JsonArray *data = tally_json_object_get_array (root, "data");
      guint n = data != NULL ? json_array_get_length (data) : 0;

      text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                           "Connected: %s accepted the key and offers %u model",
                                           "Connected: %s accepted the key and offers %u models", n),
                              address, n);
      show_connection_result (self, text, TRUE);
      return;
    }

  if (g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_AUTHENTICATION) ||
      g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_PERMISSION))
    text = g_strdup_printf (_("%s refused the key: %s"), address, error->message);
  else if (g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_NETWORK))
    /* The client's message already says it could not reach the host. */
    text = g_strdup (error->message);
  else
    text = g_strdup_printf (_("%s answered with an error: %s"), address, error->message);
  show_connection_result (self, text, FALSE);
}

static void
test_connection_cb (TallyPreferencesWindow *self)
{
  TallyClient *client = tally_application_get_client (self->app);
  guint retries;

  g_assert (TALLY_IS_PREFERENCES_WINDOW (self));

  if (!tally_application_has_api_key (self->app))
    {
      show_connection_result (self, _("No key to test yet: paste one above first"), FALSE);
      return;
    }

  g_cancellable_cancel (self->test_cancellable);
  g_clear_object (&self->test_cancellable);
  self->test_cancellable = g_cancellable_new ();

  gtk_widget_set_sensitive (GTK_WIDGET (self->test_button), FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->test_spinner), TRUE);
  gtk_spinner_start (self->test_spinner);
  adw_action_row_set_subtitle (self->test_row, _("Testing…"));

  /* One attempt, not the turns' retries: the answer should come at once.
   * The client takes the count when the request starts. */
  retries = tally_client_get_max_retries (client);
  tally_client_set_max_retries (client, 0);
  tally_client_list_models_async (client, self->test_cancellable, models_listed_cb, g_object_ref (self));
  tally_client_set_max_retries (client, retries);
}

/* Settings mappings */

static gboolean
mode_get_mapping (GValue   *value,
                  GVariant *variant,
                  gpointer  user_data)
{
  TallyMode mode = TALLY_MODE_ASK;

  /* The key's enum uses the modes' nicks (tally_mode_to_string()); the
   * combo row lists them in #TallyMode order. */
  tally_mode_from_string (g_variant_get_string (variant, NULL), &mode);
  g_value_set_uint (value, mode);
  return TRUE;
}

static GVariant *
mode_set_mapping (const GValue       *value,
                  const GVariantType *expected_type,
                  gpointer            user_data)
{
  guint selected = g_value_get_uint (value);

  if (selected > TALLY_MODE_AUTO)
    return NULL;
  return g_variant_new_string (tally_mode_to_string ((TallyMode) selected));
}

static gboolean
model_get_mapping (GValue   *value,
                   GVariant *variant,
                   gpointer  user_data)
{
  TallyModelCache *cache = user_data;
  const char *id = g_variant_get_string (variant, NULL);

  if (*id == '\0')
    return FALSE;
  g_value_set_uint (value, tally_model_cache_ensure (cache, id));
  return TRUE;
}

static GVariant *
model_set_mapping (const GValue       *value,
                   const GVariantType *expected_type,
                   gpointer            user_data)
{
  TallyModelCache *cache = user_data;
  const char *id = tally_model_cache_get_id (cache, g_value_get_uint (value));

  return id != NULL ? g_variant_new_string (id) : NULL;
}

/* GObject */

static void
tally_preferences_window_dispose (GObject *object)
{
  TallyPreferencesWindow *self = (TallyPreferencesWindow *)object;

  g_cancellable_cancel (self->cancellable);
  g_cancellable_cancel (self->test_cancellable);
  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_PREFERENCES_WINDOW);

  G_OBJECT_CLASS (tally_preferences_window_parent_class)->dispose (object);
}

static void
tally_preferences_window_finalize (GObject *object)
{
  TallyPreferencesWindow *self = (TallyPreferencesWindow *)object;

  g_clear_object (&self->cancellable);
  g_clear_object (&self->test_cancellable);
  g_clear_object (&self->settings);
  g_clear_object (&self->app);
  g_free (self->key_status);
  g_free (self->key_detail);
  g_free (self->address_status);
  g_free (self->connection_result);

  G_OBJECT_CLASS (tally_preferences_window_parent_class)->finalize (object);
}

static void
tally_preferences_window_class_init (TallyPreferencesWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_preferences_window_dispose;
  object_class->finalize = tally_preferences_window_finalize;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/window/tally-preferences-window.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, key_group);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, key_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, key_status_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, key_status_icon);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, forget_key_button);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, connection_group);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, base_url_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, address_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, test_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, test_spinner);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, test_button);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, default_model_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, default_mode_row);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, thinking_switch);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, budget_spin);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, approval_spin);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, question_spin);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, idle_spin);
  gtk_widget_class_bind_template_child (widget_class, TallyPreferencesWindow, cost_spin);
  gtk_widget_class_bind_template_callback (widget_class, key_apply_cb);
  gtk_widget_class_bind_template_callback (widget_class, forget_key_cb);
  gtk_widget_class_bind_template_callback (widget_class, base_url_apply_cb);
  gtk_widget_class_bind_template_callback (widget_class, test_connection_cb);
}

static void
tally_preferences_window_init (TallyPreferencesWindow *self)
{
  self->cancellable = g_cancellable_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_widget_add_css_class (GTK_WIDGET (self), "tally-preferences");
}

/**
 * tally_preferences_window_new:
 * @application: the application whose settings and key are shown
 *
 * Returns: (transfer floating): a new preferences window; present it with
 *   gtk_window_present()
 */
GtkWidget *
tally_preferences_window_new (TallyApplication *application)
{
  TallyPreferencesWindow *self;
  TallyModelCache *cache;
  g_autoptr(GtkListItemFactory) factory = NULL;
  g_autofree char *base_url = NULL;

  g_return_val_if_fail (TALLY_IS_APPLICATION (application), NULL);

  self = g_object_new (TALLY_TYPE_PREFERENCES_WINDOW, "application", application, NULL);
  self->app = g_object_ref (application);
  self->settings = g_object_ref (tally_application_get_settings (application));
  cache = tally_application_get_model_cache (application);

  /* The key */
  g_signal_connect_object (application, "notify::api-key-source",
                           G_CALLBACK (update_key_status), self, G_CONNECT_SWAPPED);
  update_key_status (self);

  /* The connection */
  base_url = g_settings_get_string (self->settings, "base-url");
  gtk_editable_set_text (GTK_EDITABLE (self->base_url_row), base_url);
  g_signal_connect_object (application, "notify::base-url",
                           G_CALLBACK (update_connection), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->settings, "changed::base-url",
                           G_CALLBACK (update_connection), self, G_CONNECT_SWAPPED);
  update_connection (self);

  factory = tally_model_cache_create_factory (cache, FALSE);
  adw_combo_row_set_factory (self->default_model_row, factory);
  adw_combo_row_set_model (self->default_model_row, tally_model_cache_get_models (cache));
  g_settings_bind_with_mapping (self->settings, "default-model", self->default_model_row, "selected",
                                G_SETTINGS_BIND_DEFAULT, model_get_mapping, model_set_mapping,
                                g_object_ref (cache), g_object_unref);

  /* New sessions and timeouts */
  g_settings_bind_with_mapping (self->settings, "default-mode", self->default_mode_row, "selected",
                                G_SETTINGS_BIND_DEFAULT, mode_get_mapping, mode_set_mapping, NULL, NULL);
  tally_mode_menu_set_up_row (self->default_mode_row);
  g_settings_bind (self->settings, "thinking-enabled", self->thinking_switch, "active", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "thinking-budget", self->budget_spin, "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "approval-timeout", self->approval_spin, "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "question-timeout", self->question_spin, "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "idle-timeout", self->idle_spin, "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "max-session-cost", self->cost_spin, "value", G_SETTINGS_BIND_DEFAULT);

  return GTK_WIDGET (self);
}

/**
 * tally_preferences_window_get_key_status:
 * @self: a #TallyPreferencesWindow
 *
 * Returns: (transfer none): the sentence shown about the API key, such as
 *   "Stored in your keyring" or "No keyring available: the key is kept for
 *   this session only"
 */
const char *
tally_preferences_window_get_key_status (TallyPreferencesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_PREFERENCES_WINDOW (self), NULL);
  return self->key_status;
}

/**
 * tally_preferences_window_get_address_status:
 * @self: a #TallyPreferencesWindow
 *
 * Returns: (transfer none): the line shown about the API address in use:
 *   the address, then where it comes from, such as
 *   "http://127.0.0.1:8080 — from the --base-url option"
 */
const char *
tally_preferences_window_get_address_status (TallyPreferencesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_PREFERENCES_WINDOW (self), NULL);
  return self->address_status;
}

/**
 * tally_preferences_window_test_connection:
 * @self: a #TallyPreferencesWindow
 *
 * Does what *Test Connection* does: asks the address in use for its model
 * list (GET /v1/models) with the key in use, once, and shows the outcome
 * under the button (tally_preferences_window_get_connection_result()).
 */
void
tally_preferences_window_test_connection (TallyPreferencesWindow *self)
{
  g_return_if_fail (TALLY_IS_PREFERENCES_WINDOW (self));
  test_connection_cb (self);
}

/**
 * tally_preferences_window_get_connection_result:
 * @self: a #TallyPreferencesWindow
 *
 * Returns: (transfer none) (nullable): the outcome of the last finished
 *   connection test, such as "Connected: http://… accepted the key and
 *   offers 2 models" or "Could not reach http://…: …"; %NULL before the
 *   first test has finished
 */
const char *
tally_preferences_window_get_connection_result (TallyPreferencesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_PREFERENCES_WINDOW (self), NULL);
  return self->connection_result;
}

/**
 * tally_preferences_window_get_forget_dialog:
 * @self: a #TallyPreferencesWindow
 *
 * Returns: (transfer none) (nullable): the confirmation *Forget Key…*
 *   opened, while it is open
 */
AdwMessageDialog *
tally_preferences_window_get_forget_dialog (TallyPreferencesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_PREFERENCES_WINDOW (self), NULL);
  return self->forget_dialog;
}

/**
 * tally_preferences_window_get_key_detail:
 * @self: a #TallyPreferencesWindow
 *
 * Returns: (transfer none): the line under the key's source: which key
 *   (its last four characters) and why it comes from there, such as "The
 *   key ending in …ment. The ANTHROPIC_API_KEY variable overrides any key
 *   stored here."
 */
const char *
tally_preferences_window_get_key_detail (TallyPreferencesWindow *self)
{
  g_return_val_if_fail (TALLY_IS_PREFERENCES_WINDOW (self), NULL);
  return self->key_detail;
}
