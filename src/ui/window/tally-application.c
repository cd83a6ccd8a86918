/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-application"

#include "config.h"

#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>

#include "tally-application-private.h"
#include "tally-preferences-window.h"
#include "tally-secret.h"
#include "tally-tool-bash.h"
#include "tally-tool-query-database.h"
#include "tally-window.h"

/*
 * The application owns what all windows share: the settings, the session
 * store, the tool registry, the model list, the API client with its key,
 * and whether the network is there. Windows follow it through property
 * notifications (`client`, `api-key-source`, `online`).
 *
 * Command line (docs/architecture.md §11.1): `--base-url URL`,
 * `--store PATH`, `--session ID`. `--version` is answered locally;
 * everything else goes to the primary instance's `command-line` handler,
 * so `tally --session ID` while Tally runs opens that session in a new
 * window of the running instance.
 */

/**
 * TallyApplication:
 *
 * The `tally` application (an #AdwApplication, id %APPLICATION_ID): it
 * parses `--base-url`, `--store` and `--session`, and holds what its
 * windows share — settings, session store, tools, model list, API client
 * and key, network state.
 */
struct _TallyApplication
{
  AdwApplication     parent_instance;

  GSettings         *settings;
  TallyToolRegistry *tools;
  TallyModelCache   *model_cache;

  /* The session store, opened by the first window */
  TallyStore        *store;
  char              *store_path;
  char              *store_problem;
  char              *damaged_store;   /* the store refused as damaged, for salvage */
  gboolean           store_tried;

  /* The API */
  TallyClient       *client;
  char              *base_url;
  char              *base_url_option;
  char              *api_key;            /* wiped on free */
  char              *env_api_key;        /* from main(), wiped on free */
  TallyApiKeySource  key_source;
  GCancellable      *cancellable;

  /* The network */
  GNetworkMonitor   *network_monitor;
  int                network_override;
  gboolean           online;
};

G_DEFINE_FINAL_TYPE (TallyApplication, tally_application, ADW_TYPE_APPLICATION)

G_DEFINE_ENUM_TYPE (TallyApiKeySource, tally_api_key_source,
  G_DEFINE_ENUM_VALUE (TALLY_API_KEY_SOURCE_NONE, "none"),
  G_DEFINE_ENUM_VALUE (TALLY_API_KEY_SOURCE_LOOKING_UP, "looking-up"),
  G_DEFINE_ENUM_VALUE (TALLY_API_KEY_SOURCE_ENVIRONMENT, "environment"),
  G_DEFINE_ENUM_VALUE (TALLY_API_KEY_SOURCE_KEYRING, "keyring"),
  G_DEFINE_ENUM_VALUE (TALLY_API_KEY_SOURCE_MEMORY, "memory"))

enum {
  PROP_0,
  PROP_API_KEY_SOURCE,
  PROP_BASE_URL,
  PROP_CLIENT,
  PROP_ONLINE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const GOptionEntry option_entries[] = {
  { "base-url", 0, 0, G_OPTION_ARG_STRING, NULL,
    N_("Messages API origin without /v1 (default: $ANTHROPIC_BASE_URL, else the setting, else the public API)"),
    N_("URL") },
  { "store", 0, 0, G_OPTION_ARG_FILENAME, NULL,
    N_("Session store file (default: under the user data folder)"), N_("PATH") },
  { "session", 0, 0, G_OPTION_ARG_STRING, NULL,
    N_("Open a saved session"), N_("ID") },
  { "version", 0, 0, G_OPTION_ARG_NONE, NULL,
    N_("Print the version and exit"), NULL },
  { NULL }
};

/* Helpers */

static const char *
env_nonempty (const char *name)
{
  const char *value = g_getenv (name);

  return value != NULL && *value != '\0' ? value : NULL;
}

static gboolean
is_http_url (const char *url)
{
  return url != NULL && (g_str_has_prefix (url, "http://") || g_str_has_prefix (url, "https://"));
}

/* A Messages API on this machine (a local proxy, the test mock) answers
 * without a network; everything else needs one. */
static gboolean
is_loopback_url (const char *url)
{
  g_autoptr(GUri) uri = NULL;
  g_autoptr(GInetAddress) address = NULL;
  const char *host;

  uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || (host = g_uri_get_host (uri)) == NULL)
    return FALSE;

  if (g_ascii_strcasecmp (host, "localhost") == 0)
    return TRUE;

  address = g_inet_address_new_from_string (host);
  return address != NULL && g_inet_address_get_is_loopback (address);
}

static void
update_online (TallyApplication *self)
{
  gboolean online;

  if (self->network_override >= 0)
    online = self->network_override > 0;
  else if (self->network_monitor == NULL)
    online = TRUE;      /* until the monitor starts, after the first frame */
  else
    online = g_network_monitor_get_network_available (self->network_monitor) ||
             is_loopback_url (self->base_url);
  /* A failed connection says more than the monitor: offline until the
   * next request gets an answer (docs/architecture.md §3.4). */
  if (self->client != NULL && !tally_client_get_reachable (self->client))
    online = FALSE;

  if (online != self->online)
    {
      self->online = online;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ONLINE]);
    }
}

static char *
resolve_base_url (TallyApplication *self)
{
  const char *env = env_nonempty ("ANTHROPIC_BASE_URL");
  g_autofree char *setting = NULL;

  if (self->base_url_option != NULL)
    return g_strdup (self->base_url_option);
  if (env != NULL)
    return g_strdup (env);

  setting = g_settings_get_string (self->settings, "base-url");
  g_strstrip (setting);
  if (is_http_url (setting))
    return g_steal_pointer (&setting);

  return g_strdup (TALLY_DEFAULT_BASE_URL);
}

/* Builds the client for the current base URL and key. Sessions hold the
 * client they were opened with; windows reopen theirs on notify::client. */
static void
rebuild_client (TallyApplication *self)
{
  g_autofree char *base_url = resolve_base_url (self);

  if (self->client != NULL && g_strcmp0 (base_url, self->base_url) == 0)
    return;

  g_free (self->base_url);
  self->base_url = g_steal_pointer (&base_url);

  g_clear_object (&self->client);
  self->client = tally_client_new (self->base_url, self->api_key != NULL ? self->api_key : "");
  tally_client_set_idle_timeout (self->client, g_settings_get_uint (self->settings, "idle-timeout"));
  g_signal_connect_object (self->client, "notify::reachable", G_CALLBACK (update_online), self,
                           G_CONNECT_SWAPPED);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BASE_URL]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CLIENT]);
  update_online (self);
}

static void
set_key (TallyApplication  *self,
         const char        *api_key,
         TallyApiKeySource  source)
{
  tally_secret_free (g_steal_pointer (&self->api_key));
  self->api_key = api_key != NULL && *api_key != '\0' ? g_strdup (api_key) : NULL;

  if (self->client != NULL)
    tally_client_set_api_key (self->client, self->api_key != NULL ? self->api_key : "");

  if (self->key_source != source)
    {
      self->key_source = source;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_API_KEY_SOURCE]);
    }
}

static void
lookup_key_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(TallyApplication) self = user_data;
  g_autoptr(GError) error = NULL;
  char *key;

  g_assert (TALLY_IS_APPLICATION (self));
  g_assert (G_IS_ASYNC_RESULT (result));

  key = tally_secret_lookup_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  /* A key typed in meanwhile wins over whatever the keyring said. */
  if (self->key_source != TALLY_API_KEY_SOURCE_LOOKING_UP)
    {
      tally_secret_free (key);
      return;
    }

  if (error != NULL)
    g_debug ("No keyring: %s", error->message);

  set_key (self, key, key != NULL ? TALLY_API_KEY_SOURCE_KEYRING : TALLY_API_KEY_SOURCE_NONE);
  tally_secret_free (key);
}

/* The tools' limits follow the settings (docs/security.md). */
static void
apply_tool_settings (TallyApplication *self)
{
  g_auto(GStrv) extra_env = g_settings_get_strv (self->settings, "bash-extra-env");

  tally_tool_bash_set_extra_env (TALLY_TOOL_BASH (tally_tool_registry_lookup (self->tools, "Bash")),
                                 (const char * const *) extra_env);
  tally_tool_query_database_set_timeout_ms (
    TALLY_TOOL_QUERY_DATABASE (tally_tool_registry_lookup (self->tools, "query_database")),
    g_settings_get_uint (self->settings, "query-timeout") * 1000);
}

static void
settings_changed_cb (TallyApplication *self,
                     const char       *key,
                     GSettings        *settings)
{
  g_assert (TALLY_IS_APPLICATION (self));

  if ((g_str_equal (key, "bash-extra-env") || g_str_equal (key, "query-timeout")) &&
      self->tools != NULL)
    apply_tool_settings (self);
  else if (g_str_equal (key, "base-url"))
    rebuild_client (self);
  else if (g_str_equal (key, "idle-timeout") && self->client != NULL)
    tally_client_set_idle_timeout (self->client, g_settings_get_uint (settings, "idle-timeout"));
}

static void
network_changed_cb (TallyApplication *self,
                    gboolean          available,
                    GNetworkMonitor  *monitor)
{
  g_assert (TALLY_IS_APPLICATION (self));

  update_online (self);
}

/* Opens the store the first time a window needs it. A store that cannot be
 * opened leaves the application usable: sessions run but are not saved,
 * and every window says so. */
static void
ensure_store (TallyApplication *self)
{
  g_autofree char *path = NULL;
  g_autofree char *dir = NULL;
  g_autoptr(GError) error = NULL;

  if (self->store_tried)
    return;
  self->store_tried = TRUE;

  path = self->store_path != NULL ? g_strdup (self->store_path) : tally_store_get_default_path ();
  dir = g_path_get_dirname (path);
  g_mkdir_with_parents (dir, 0700);

  self->store = tally_store_open (path, &error);
  if (self->store == NULL)
    {
      self->store_problem = g_strdup_printf (_("Sessions cannot be saved: %s"), error->message);
      if (g_error_matches (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_CORRUPT))
        self->damaged_store = g_strdup (path);
      g_warning ("Could not open the session store %s: %s", path, error->message);
    }
  else if (tally_store_is_read_only (self->store))
    {
      const char *reason = tally_store_get_read_only_reason (self->store);

      self->store_problem = g_strdup_printf (_("Saved sessions open read-only: %s"),
                                             reason != NULL ? reason : _("the store cannot be written"));
    }
}

/* The store opens when something first asks for it: for a new window,
 * after its first frame (tally-window.c); for --session, at once. */
static TallyWindow *
new_window (TallyApplication *self)
{
  return tally_window_new (self);
}

/* Actions */

static void
preferences_action (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       user_data)
{
  TallyApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));
  GtkWindow *preferences = GTK_WINDOW (tally_preferences_window_new (self));

  g_assert (TALLY_IS_APPLICATION (self));

  gtk_window_set_transient_for (preferences, parent);
  gtk_window_present (preferences);
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  TallyApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));
  static const char *developers[] = { "The Tally developers", NULL };

  g_assert (TALLY_IS_APPLICATION (self));

  adw_show_about_window (parent,
                         "application-name", _("Tally"),
                         "application-icon", APPLICATION_ID,
                         "version", PACKAGE_VERSION,
                         "developer-name", _("The Tally developers"),
                         "developers", developers,
                         "comments", _("Question your data with an agent that plans before it spends, "
                                       "asks before it guesses, and shows what every answer cost."),
                         "license-type", GTK_LICENSE_GPL_3_0,
                         "copyright", "© 2026 The Tally developers",
                         NULL);
}

static void
new_window_action (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       user_data)
{
  TallyApplication *self = user_data;

  g_assert (TALLY_IS_APPLICATION (self));

  gtk_window_present (GTK_WINDOW (new_window (self)));
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  TallyApplication *self = user_data;
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (self));

  g_assert (TALLY_IS_APPLICATION (self));

  /* Closing each window runs its close handler (cancel running turns,
   * carry out pending deletions) before the application ends. */
  for (GList *l = g_list_copy (windows), *iter = l; iter != NULL; iter = iter->next)
    {
      gtk_window_close (GTK_WINDOW (iter->data));
      if (iter->next == NULL)
        g_list_free (l);
    }
}

static const GActionEntry app_actions[] = {
  { "preferences", preferences_action },
  { "about", about_action },
  { "new-window", new_window_action },
  { "quit", quit_action },
};

/* GApplication */

static int
tally_application_handle_local_options (GApplication *application,
                                        GVariantDict *options)
{
  const char *base_url = NULL;

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("tally %s\n", PACKAGE_VERSION);
      return 0;
    }

  if (g_variant_dict_lookup (options, "base-url", "&s", &base_url) && !is_http_url (base_url))
    {
      g_printerr ("tally: %s\n", _("--base-url must start with http:// or https://"));
      return 2;
    }

  return -1;
}

/* --session: tells the command line when its session could not be
 * opened (a toast in the window says why). */
static void
session_opened_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GApplicationCommandLine) command_line = user_data;
  g_autoptr(GError) error = NULL;

  if (!tally_window_open_session_finish (TALLY_WINDOW (object), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autoptr(GVariant) id = g_variant_dict_lookup_value (g_application_command_line_get_options_dict (command_line),
                                                             "session", G_VARIANT_TYPE_STRING);

      g_application_command_line_printerr (command_line, _("tally: no saved session “%s” could be opened\n"),
                                           id != NULL ? g_variant_get_string (id, NULL) : "");
    }
}

static int
tally_application_command_line (GApplication            *application,
                                 GApplicationCommandLine *command_line)
{
  TallyApplication *self = TALLY_APPLICATION (application);
  GVariantDict *options = g_application_command_line_get_options_dict (command_line);
  const char *base_url = NULL;
  const char *session_id = NULL;
  g_autofree char *store = NULL;
  TallyWindow *window;

  if (g_variant_dict_lookup (options, "base-url", "&s", &base_url) &&
      g_strcmp0 (base_url, self->base_url_option) != 0)
    {
      if (gtk_application_get_windows (GTK_APPLICATION (self)) != NULL)
        g_application_command_line_printerr (command_line, "tally: %s\n",
                                             _("Tally is already running; --base-url applies when it starts"));
      else
        {
          g_free (self->base_url_option);
          self->base_url_option = g_strdup (base_url);
          rebuild_client (self);
        }
    }

  if (g_variant_dict_lookup (options, "store", "^ay", &store))
    {
      g_autoptr(GFile) file = g_application_command_line_create_file_for_arg (command_line, store);
      g_autofree char *path = g_file_get_path (file);

      if (!self->store_tried)
        {
          g_free (self->store_path);
          self->store_path = g_steal_pointer (&path);
        }
      else if (self->store == NULL || g_strcmp0 (tally_store_get_path (self->store), path) != 0)
        g_application_command_line_printerr (command_line, "tally: %s\n",
                                             _("Tally is already running with another store; --store applies when it starts"));
    }

  if (g_variant_dict_lookup (options, "session", "&s", &session_id))
    {
      /* Read in the background (docs/architecture.md §11.1), from before
       * the window is built, so that a session read by the window's first
       * frame is shown in it; the command line is held until then, so a
       * failure reaches its stderr. */
      TallyWindowPrefetch *prefetch = _tally_window_prefetch_session (self, session_id);

      window = new_window (self);
      if (prefetch != NULL)
        _tally_window_open_prefetched_async (window, prefetch, session_opened_cb, g_object_ref (command_line));
      else
        tally_window_open_session_async (window, session_id, session_opened_cb, g_object_ref (command_line));
      gtk_window_present (GTK_WINDOW (window));
      return 0;
    }

  g_application_activate (application);
  return 0;
}

static void
tally_application_activate (GApplication *application)
{
  TallyApplication *self = TALLY_APPLICATION (application);
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  if (window == NULL)
    window = GTK_WINDOW (new_window (self));

  gtk_window_present (window);
}

/* The icon theme, loaded again off the main thread (below). The lookup
 * loads it under the theme's lock, as GTK's own early load does; a
 * lookup on the main thread meanwhile waits for it instead of loading
 * the theme a second time. */
static void
load_icon_theme_thread (GTask        *task,
                        gpointer      source_object,
                        gpointer      task_data,
                        GCancellable *cancellable)
{
  g_assert (GTK_IS_ICON_THEME (source_object));

  gtk_icon_theme_has_icon (GTK_ICON_THEME (source_object), "tally-thinking-symbolic");
  g_task_return_boolean (task, TRUE);
}

static void
tally_application_startup (GApplication *application)
{
  TallyApplication *self = TALLY_APPLICATION (application);
  static const char *preferences_accels[] = { "<Control>comma", NULL };
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *new_window_accels[] = { "<Control><Shift>n", NULL };
  static const char *new_session_accels[] = { "<Control>n", NULL };
  static const char *search_accels[] = { "<Control>f", NULL };
  static const char *sidebar_accels[] = { "F9", NULL };
  static const char *rename_accels[] = { "F2", NULL };
  static const char *close_accels[] = { "<Control>w", NULL };
  static const char *shortcuts_accels[] = { "<Control>question", NULL };

  G_APPLICATION_CLASS (tally_application_parent_class)->startup (application);

  /* GtkSourceView's initialisation adds its icon folder to the display's
   * icon theme and its stylesheets to the display. Done when the first
   * markdown view or tool chip class was made, it threw that theme away
   * after the window's first frame, and the next frame (the one that
   * first showed a saved session or an answer) loaded the whole theme
   * again on the main thread, about a quarter of that frame's
   * instructions, and styled every widget again (docs/architecture.md
   * §11.1, "Opening a long session"). Done here, the thread below loads
   * the theme with it. */
  gtk_source_init ();

  /* GTK loads the display's icon theme in a thread as the display opens;
   * GtkApplication's start-up then adds the application's own icons
   * (resources under icons/), which throws that theme away, and the
   * window's first icon loaded it again on the main thread, between
   * building the window and mapping it (docs/architecture.md §11.1). It
   * is loaded again in a thread now, while the window is built. */
  if (gdk_display_get_default () != NULL)
    {
      g_autoptr(GTask) task = g_task_new (gtk_icon_theme_get_for_display (gdk_display_get_default ()),
                                          NULL, NULL, NULL);

      g_task_set_source_tag (task, tally_application_startup);
      g_task_run_in_thread (task, load_icon_theme_thread);
    }

  /* Dark mode follows the system. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_actions, G_N_ELEMENTS (app_actions), self);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.preferences", preferences_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.new-window", new_window_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.new-session", new_session_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.search", search_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.toggle-sidebar", sidebar_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.rename-session", rename_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "window.close", close_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.show-help-overlay", shortcuts_accels);

  {
    g_autoptr(GSettingsSchema) schema = NULL;
    g_autoptr(GError) error = NULL;

    /* main() checked this already; a schema that vanished since is fatal. */
    schema = tally_application_lookup_settings_schema (&error);
    if (schema == NULL)
      g_error ("%s", error->message);
    self->settings = g_settings_new_full (schema, NULL, NULL);
  }
  g_signal_connect_object (self->settings, "changed", G_CALLBACK (settings_changed_cb),
                           self, G_CONNECT_SWAPPED);

  self->tools = tally_tool_registry_new_default ();
  apply_tool_settings (self);
  self->model_cache = tally_model_cache_new (NULL);

  /* The network monitor starts after the first frame
   * (_tally_application_after_first_frame()); until then the network
   * counts as there. */
  rebuild_client (self);

  /* ANTHROPIC_API_KEY overrides everything; otherwise the keyring is
   * asked after the first frame (_tally_application_after_first_frame()):
   * until it answers the key counts as being looked up, and nothing is
   * sent. main() took the variable out of the environment already; an
   * application made without main() (the tests) reads it here. */
  if (self->env_api_key != NULL)
    set_key (self, self->env_api_key, TALLY_API_KEY_SOURCE_ENVIRONMENT);
  else if (env_nonempty ("ANTHROPIC_API_KEY") != NULL)
    set_key (self, env_nonempty ("ANTHROPIC_API_KEY"), TALLY_API_KEY_SOURCE_ENVIRONMENT);
  else
    set_key (self, NULL, TALLY_API_KEY_SOURCE_LOOKING_UP);

  update_online (self);
}

static void
tally_application_shutdown (GApplication *application)
{
  TallyApplication *self = TALLY_APPLICATION (application);

  g_cancellable_cancel (self->cancellable);

  if (self->store != NULL && !tally_store_is_read_only (self->store))
    {
      g_autoptr(GError) error = NULL;

      if (!tally_store_flush (self->store, &error))
        g_warning ("The session store could not write everything: %s", error->message);
    }

  G_APPLICATION_CLASS (tally_application_parent_class)->shutdown (application);
}

/* GObject */

static void
tally_application_dispose (GObject *object)
{
  TallyApplication *self = (TallyApplication *)object;

  g_cancellable_cancel (self->cancellable);
  if (self->network_monitor != NULL)
    g_signal_handlers_disconnect_by_data (self->network_monitor, self);
  g_clear_object (&self->network_monitor);
  g_clear_object (&self->client);
  g_clear_object (&self->store);
  g_clear_object (&self->model_cache);
  g_clear_object (&self->tools);
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (tally_application_parent_class)->dispose (object);
}

static void
tally_application_finalize (GObject *object)
{
  TallyApplication *self = (TallyApplication *)object;

  tally_secret_free (g_steal_pointer (&self->api_key));
  tally_secret_free (g_steal_pointer (&self->env_api_key));
  g_clear_object (&self->cancellable);
  g_free (self->store_path);
  g_free (self->store_problem);
  g_free (self->damaged_store);
  g_free (self->base_url);
  g_free (self->base_url_option);

  G_OBJECT_CLASS (tally_application_parent_class)->finalize (object);
}

static void
tally_application_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  TallyApplication *self = TALLY_APPLICATION (object);

  switch (prop_id)
    {
    case PROP_API_KEY_SOURCE:
      g_value_set_enum (value, self->key_source);
      break;
    case PROP_BASE_URL:
      g_value_set_string (value, self->base_url);
      break;
    case PROP_CLIENT:
      g_value_set_object (value, self->client);
      break;
    case PROP_ONLINE:
      g_value_set_boolean (value, self->online);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_application_class_init (TallyApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = tally_application_dispose;
  object_class->finalize = tally_application_finalize;
  object_class->get_property = tally_application_get_property;

  app_class->handle_local_options = tally_application_handle_local_options;
  app_class->command_line = tally_application_command_line;
  app_class->activate = tally_application_activate;
  app_class->startup = tally_application_startup;
  app_class->shutdown = tally_application_shutdown;

  /**
   * TallyApplication:api-key-source:
   *
   * Where the API key comes from; %TALLY_API_KEY_SOURCE_NONE until one is
   * given (the windows then show the first-launch page).
   */
  properties[PROP_API_KEY_SOURCE] =
    g_param_spec_enum ("api-key-source", NULL, NULL,
                       TALLY_TYPE_API_KEY_SOURCE, TALLY_API_KEY_SOURCE_NONE,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * TallyApplication:base-url:
   *
   * The Messages API origin in use (without `/v1`).
   */
  properties[PROP_BASE_URL] =
    g_param_spec_string ("base-url", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * TallyApplication:client:
   *
   * The #TallyClient for new turns. It is replaced (and notified) when the
   * base URL changes; a key change updates the same client.
   */
  properties[PROP_CLIENT] =
    g_param_spec_object ("client", NULL, NULL, TALLY_TYPE_CLIENT,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * TallyApplication:online:
   *
   * Whether a turn can reach the API: the network is available, or the API
   * is on this machine, and the client's last attempt did not fail to
   * connect (#TallyClient:reachable; an answer clears that again).
   */
  properties[PROP_ONLINE] =
    g_param_spec_boolean ("online", NULL, NULL, TRUE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

}

static void
tally_application_init (TallyApplication *self)
{
  self->cancellable = g_cancellable_new ();
  self->network_override = -1;
  self->online = TRUE;

  g_application_add_main_option_entries (G_APPLICATION (self), option_entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), NULL);
  g_application_set_option_context_summary (G_APPLICATION (self),
                                            _("Ask Tally about your data."));
}

/**
 * tally_application_new:
 *
 * Creates the application with id %APPLICATION_ID (`io.github.tallyapp.Tally`,
 * `.Devel` for development builds). Run it with g_application_run().
 *
 * Returns: (transfer full): a new #TallyApplication
 */
TallyApplication *
tally_application_new (void)
{
  return g_object_new (TALLY_TYPE_APPLICATION,
                       "application-id", APPLICATION_ID,
                       "flags", G_APPLICATION_HANDLES_COMMAND_LINE,
                       /* style.css and icons/ live here */
                       "resource-base-path", "/io/github/tallyapp/Tally",
                       NULL);
}

static gboolean
running_from_build_tree (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *root = g_strconcat (TALLY_BUILD_ROOT, G_DIR_SEPARATOR_S, NULL);

  return exe != NULL && g_str_has_prefix (exe, root);
}

/**
 * tally_application_lookup_settings_schema:
 * @error: return location for a #GError, or %NULL
 *
 * Finds the application's GSettings schema (%TALLY_SETTINGS_SCHEMA_ID) the
 * way an uninstalled development build needs it: when the running
 * executable lies inside the build tree it was configured for, the schema
 * compiled into that tree's `data/` folder is preferred (so the README's
 * `build/src/ui/tally` works without `GSETTINGS_SCHEMA_DIR` and without an
 * older schema installed system-wide getting in the way); otherwise, and as
 * a fallback, the default schema source is used (`XDG_DATA_DIRS`,
 * `GSETTINGS_SCHEMA_DIR`), which is where an installed Tally finds the
 * schema that `meson install` put under `$prefix/share/glib-2.0/schemas`.
 *
 * Returns: (transfer full) (nullable): the schema, or %NULL with @error set
 *   to %G_IO_ERROR_NOT_FOUND (naming the places looked in) or to the error
 *   of reading the build tree's compiled schemas
 */
GSettingsSchema *
tally_application_lookup_settings_schema (GError **error)
{
  GSettingsSchemaSource *system = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchemaSource) build = NULL;
  g_autofree char *compiled = g_build_filename (TALLY_BUILD_SCHEMA_DIR, "gschemas.compiled", NULL);
  GSettingsSchema *schema = NULL;
  gboolean in_build_tree = running_from_build_tree ();

  if (g_file_test (compiled, G_FILE_TEST_IS_REGULAR))
    {
      g_autoptr(GError) local_error = NULL;

      build = g_settings_schema_source_new_from_directory (TALLY_BUILD_SCHEMA_DIR, system,
                                                           FALSE, &local_error);
      if (build == NULL && in_build_tree)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
    }

  if (build != NULL && in_build_tree)
    schema = g_settings_schema_source_lookup (build, TALLY_SETTINGS_SCHEMA_ID, FALSE);
  if (schema == NULL && system != NULL)
    schema = g_settings_schema_source_lookup (system, TALLY_SETTINGS_SCHEMA_ID, TRUE);
  if (schema == NULL && build != NULL)
    schema = g_settings_schema_source_lookup (build, TALLY_SETTINGS_SCHEMA_ID, FALSE);

  if (schema == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                 _("The settings schema “%s” is not installed (looked in the data folders "
                   "of XDG_DATA_DIRS and in %s). Install Tally with “meson install” or run "
                   "it from its build folder."),
                 TALLY_SETTINGS_SCHEMA_ID, TALLY_BUILD_SCHEMA_DIR);

  return schema;
}

/**
 * tally_application_get_settings:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none): the application's settings (schema
 *   %TALLY_SETTINGS_SCHEMA_ID); valid after startup
 */
GSettings *
tally_application_get_settings (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  return self->settings;
}

/**
 * tally_application_get_store:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none) (nullable): the session store, or %NULL when it
 *   could not be opened (see tally_application_get_store_problem())
 */
TallyStore *
tally_application_get_store (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  ensure_store (self);
  return self->store;
}

/**
 * _tally_application_peek_store:
 * @self: a #TallyApplication
 *
 * The store if something has opened it already, without opening it: a
 * new window's first frame does not wait for the store (it opens after
 * that frame, docs/architecture.md §11.1), so what the window works out
 * before then (which of its actions are enabled) asks here and asks
 * again once the store is open.
 *
 * Returns: (transfer none) (nullable): the session store, or %NULL when
 *   it has not been opened yet or could not be opened
 */
TallyStore *
_tally_application_peek_store (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  return self->store;
}

/**
 * _tally_application_store_tried:
 * @self: a #TallyApplication
 *
 * Whether the store has been opened, or its opening has failed: until
 * then _tally_application_peek_store() returns %NULL because nothing has
 * asked for it yet, not because it could not be opened.
 *
 * Returns: %TRUE once the store's opening was tried
 */
gboolean
_tally_application_store_tried (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), FALSE);
  return self->store_tried;
}

/**
 * tally_application_get_store_problem:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none) (nullable): a sentence for the analyst when the
 *   store could not be opened or opened read-only, else %NULL
 */
const char *
tally_application_get_store_problem (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  ensure_store (self);
  return self->store_problem;
}

/**
 * tally_application_get_damaged_store:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none) (nullable) (type filename): the store file that
 *   was refused as damaged (%TALLY_STORE_ERROR_CORRUPT), which the window
 *   offers to salvage (docs/architecture.md §10.9); %NULL otherwise
 */
const char *
tally_application_get_damaged_store (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  ensure_store (self);
  return self->damaged_store;
}

/**
 * tally_application_get_tools:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none): the tools every session offers the model
 */
TallyToolRegistry *
tally_application_get_tools (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  return self->tools;
}

/**
 * tally_application_get_model_cache:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none): the model list shared by the windows' pickers
 */
TallyModelCache *
tally_application_get_model_cache (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  return self->model_cache;
}

/**
 * tally_application_get_client:
 * @self: a #TallyApplication
 *
 * Returns: (transfer none): the client for new turns (always set after
 *   startup; its key is empty while tally_application_has_api_key() is
 *   %FALSE)
 */
TallyClient *
tally_application_get_client (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  return self->client;
}

/**
 * tally_application_get_base_url:
 * @self: a #TallyApplication
 *
 * The origin resolved in this order: `--base-url`, `ANTHROPIC_BASE_URL`,
 * the `base-url` setting, %TALLY_DEFAULT_BASE_URL.
 *
 * Returns: (transfer none): the Messages API origin, without `/v1`
 */
const char *
tally_application_get_base_url (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);
  return self->base_url;
}

/**
 * tally_application_get_base_url_locked:
 * @self: a #TallyApplication
 *
 * Returns: %TRUE when `--base-url` or `ANTHROPIC_BASE_URL` decides the
 *   origin, so the setting has no effect
 */
gboolean
tally_application_get_base_url_locked (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), FALSE);
  return self->base_url_option != NULL || env_nonempty ("ANTHROPIC_BASE_URL") != NULL;
}

/**
 * tally_application_get_api_key_source:
 * @self: a #TallyApplication
 *
 * Returns: where the key comes from
 */
TallyApiKeySource
tally_application_get_api_key_source (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), TALLY_API_KEY_SOURCE_NONE);
  return self->key_source;
}

/**
 * tally_application_set_environment_api_key:
 * @self: a #TallyApplication
 * @api_key: (nullable): the value `ANTHROPIC_API_KEY` had, or %NULL
 *
 * Hands over the key that main() took out of the process environment
 * (tally_secret_env_take()), so that `/proc/PID/environ` no longer shows
 * it. Call before the application starts; the key then counts as set by
 * the environment (%TALLY_API_KEY_SOURCE_ENVIRONMENT) and overrides the
 * keyring, exactly as the variable does.
 */
void
tally_application_set_environment_api_key (TallyApplication *self,
                                           const char       *api_key)
{
  g_return_if_fail (TALLY_IS_APPLICATION (self));

  tally_secret_free (g_steal_pointer (&self->env_api_key));
  self->env_api_key = api_key != NULL && *api_key != '\0' ? g_strdup (api_key) : NULL;
}

/**
 * tally_application_has_api_key:
 * @self: a #TallyApplication
 *
 * Returns: %TRUE when a key is known (environment, keyring or memory)
 */
gboolean
tally_application_has_api_key (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), FALSE);
  return self->api_key != NULL;
}

/**
 * tally_application_dup_api_key_hint:
 * @self: a #TallyApplication
 *
 * What the preferences show of the key in use, so that the analyst can
 * tell keys apart without the key being shown: its last four characters
 * after an ellipsis ("…x7Qa"), or only the ellipsis for a key of eight
 * characters or fewer.
 *
 * Returns: (transfer full) (nullable): the hint, or %NULL without a key
 */
char *
tally_application_dup_api_key_hint (TallyApplication *self)
{
  glong length;

  g_return_val_if_fail (TALLY_IS_APPLICATION (self), NULL);

  if (self->api_key == NULL)
    return NULL;
  length = g_utf8_strlen (self->api_key, -1);
  if (length <= 8)
    return g_strdup ("…");
  return g_strconcat ("…", g_utf8_offset_to_pointer (self->api_key, length - 4), NULL);
}

/**
 * tally_application_get_online:
 * @self: a #TallyApplication
 *
 * Returns: the #TallyApplication:online property
 */
gboolean
tally_application_get_online (TallyApplication *self)
{
  g_return_val_if_fail (TALLY_IS_APPLICATION (self), FALSE);
  return self->online;
}

/**
 * tally_application_get_default_database:
 *
 * The database new sessions analyse: `TALLY_SAMPLE_DB` when set, else the
 * Beanline sample in the build folder when it exists (an uninstalled run),
 * else the installed `PKGDATADIR/beanline.db`. Found the way tally-cli
 * finds it.
 *
 * Returns: (transfer none): a path (it may not exist on a broken install)
 */
const char *
tally_application_get_default_database (void)
{
  static char *installed;
  const char *env = env_nonempty ("TALLY_SAMPLE_DB");

  if (env != NULL)
    return env;
  if (g_file_test (TALLY_BUILD_SAMPLE_DB, G_FILE_TEST_IS_REGULAR))
    return TALLY_BUILD_SAMPLE_DB;
  if (installed == NULL)
    installed = g_build_filename (PKGDATADIR, "beanline.db", NULL);
  return installed;
}

/**
 * tally_application_dup_workspace_for:
 * @session_id: a session id
 *
 * The default workspace of a session, a folder of its own under the user
 * data folder. It is not created here (the window creates it on first use).
 *
 * Returns: (transfer full): `$XDG_DATA_HOME/tally/workspaces/<session_id>`
 */
char *
tally_application_dup_workspace_for (const char *session_id)
{
  g_return_val_if_fail (session_id != NULL, NULL);
  return g_build_filename (g_get_user_data_dir (), "tally", "workspaces", session_id, NULL);
}

typedef struct {
  char *api_key;
} SetKeyData;

static void
set_key_data_free (SetKeyData *data)
{
  tally_secret_free (data->api_key);
  g_free (data);
}

static void
store_key_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TallyApplication *self = g_task_get_source_object (task);
  SetKeyData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  g_assert (TALLY_IS_APPLICATION (self));
  g_assert (G_IS_ASYNC_RESULT (result));

  if (tally_secret_store_finish (result, &error))
    {
      if (g_strcmp0 (self->api_key, data->api_key) == 0)
        set_key (self, data->api_key, TALLY_API_KEY_SOURCE_KEYRING);
      g_task_return_int (task, TALLY_API_KEY_SOURCE_KEYRING);
      return;
    }

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* No keyring (no Secret Service, no portal): keep the key for this run
   * only. It is never written anywhere in plain text. */
  g_debug ("Keeping the API key in memory only: %s", error->message);
  g_task_return_int (task, TALLY_API_KEY_SOURCE_MEMORY);
}

/**
 * tally_application_set_api_key_async:
 * @self: a #TallyApplication
 * @api_key: the new key (leading and trailing white space is ignored)
 * @cancellable: (nullable): a #GCancellable
 * @callback: called once the keyring has answered
 * @user_data: data for @callback
 *
 * Uses @api_key at once (in memory) and stores it in the keyring. When no
 * keyring can be reached, the key stays in memory for this run only.
 */
void
tally_application_set_api_key_async (TallyApplication    *self,
                                     const char          *api_key,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *key = NULL;
  SetKeyData *data;

  g_return_if_fail (TALLY_IS_APPLICATION (self));
  g_return_if_fail (api_key != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_application_set_api_key_async);

  if (self->key_source == TALLY_API_KEY_SOURCE_ENVIRONMENT)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                               _("The ANTHROPIC_API_KEY environment variable sets the key"));
      return;
    }

  key = g_strstrip (g_strdup (api_key));
  if (*key == '\0' || !g_utf8_validate (key, -1, NULL))
    {
      tally_secret_free (g_steal_pointer (&key));
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               _("The key is empty"));
      return;
    }

  set_key (self, key, TALLY_API_KEY_SOURCE_MEMORY);

  data = g_new0 (SetKeyData, 1);
  data->api_key = g_steal_pointer (&key);
  g_task_set_task_data (task, data, (GDestroyNotify)set_key_data_free);
  tally_secret_store_async (data->api_key, cancellable, store_key_cb, g_steal_pointer (&task));
}

/**
 * tally_application_set_api_key_finish:
 * @self: a #TallyApplication
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Errors: %G_IO_ERROR_PERMISSION_DENIED when `ANTHROPIC_API_KEY` is set,
 * %G_IO_ERROR_INVALID_ARGUMENT for an empty key, %G_IO_ERROR_CANCELLED.
 * A missing keyring is not an error (see the return value).
 *
 * Returns: %TALLY_API_KEY_SOURCE_KEYRING when the keyring holds the key,
 *   %TALLY_API_KEY_SOURCE_MEMORY when it is kept for this run only, or
 *   %TALLY_API_KEY_SOURCE_NONE with @error set
 */
TallyApiKeySource
tally_application_set_api_key_finish (TallyApplication  *self,
                                      GAsyncResult      *result,
                                      GError           **error)
{
  GError *local_error = NULL;
  gssize source;

  g_return_val_if_fail (TALLY_IS_APPLICATION (self), TALLY_API_KEY_SOURCE_NONE);
  g_return_val_if_fail (g_task_is_valid (result, self), TALLY_API_KEY_SOURCE_NONE);

  source = g_task_propagate_int (G_TASK (result), &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return TALLY_API_KEY_SOURCE_NONE;
    }

  return (TallyApiKeySource)source;
}

static void
clear_key_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert (G_IS_ASYNC_RESULT (result));

  if (!tally_secret_clear_finish (result, &error))
    g_debug ("Could not remove the key from the keyring: %s", error->message);
}

/**
 * tally_application_forget_api_key:
 * @self: a #TallyApplication
 *
 * Drops the key from memory and removes it from the keyring. Does nothing
 * when `ANTHROPIC_API_KEY` sets the key.
 */
void
tally_application_forget_api_key (TallyApplication *self)
{
  g_return_if_fail (TALLY_IS_APPLICATION (self));

  if (self->key_source == TALLY_API_KEY_SOURCE_ENVIRONMENT)
    return;

  set_key (self, NULL, TALLY_API_KEY_SOURCE_NONE);
  tally_secret_clear_async (NULL, clear_key_cb, NULL);
}

void
_tally_application_set_network_override (TallyApplication *self,
                                         int               state)
{
  g_return_if_fail (TALLY_IS_APPLICATION (self));

  self->network_override = CLAMP (state, -1, 1);
  if (self->settings != NULL)
    update_online (self);
}

/**
 * _tally_application_after_first_frame:
 * @self: a #TallyApplication
 *
 * What start-up leaves until a window has painted its first frame
 * (docs/architecture.md §11.1, "Start-up and WebKit"): the keyring lookup
 * of the API key (libsecret connects to the Secret Service over D-Bus;
 * until it answers, #TallyApplication:api-key-source is
 * %TALLY_API_KEY_SOURCE_LOOKING_UP) and the network monitor
 * (GNetworkMonitor asks NetworkManager over D-Bus or reads the routing
 * table). Windows call it after their first frame; later calls do nothing.
 */
void
_tally_application_after_first_frame (TallyApplication *self)
{
  g_return_if_fail (TALLY_IS_APPLICATION (self));

  if (self->network_monitor != NULL || self->settings == NULL)
    return;

  /* Unless a key came meanwhile (the environment, or typed in). */
  if (self->key_source == TALLY_API_KEY_SOURCE_LOOKING_UP)
    tally_secret_lookup_async (self->cancellable, lookup_key_cb, g_object_ref (self));

  self->network_monitor = g_object_ref (g_network_monitor_get_default ());
  g_signal_connect_object (self->network_monitor, "network-changed",
                           G_CALLBACK (network_changed_cb), self, G_CONNECT_SWAPPED);
  update_online (self);
}
