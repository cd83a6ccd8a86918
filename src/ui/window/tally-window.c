/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gi18n.h>

#include "tally-application-private.h"
#include "tally-centring-layout.h"
#include "tally-composer.h"
#include "tally-model-cache.h"
#include "tally-mode-menu.h"
#include "tally-model-table.h"
#include "tally-pg-source.h"
#include "tally-session-row.h"
#include "tally-transcript-view.h"
#include "tally-ui.h"
#include "tally-window-private.h"

/*
 * The main window: saved sessions in a sidebar (an AdwFlap, so a narrow
 * window folds it away), and the session itself — transcript above,
 * composer below — under a header bar with the model picker, the mode
 * selector and the thinking toggle. The title opens a popover with the
 * session's database and workspace.
 *
 * A window shows one session at a time. A new session is only an idea
 * until its first message is sent: then tally_session_new() gives it an id,
 * a workspace folder, and a place in the store. Switching sessions, like
 * closing the window, cancels a running turn (docs/architecture.md §5.2).
 */


/**
 * TallyWindow:
 *
 * The main window: saved sessions in a sidebar, the session shown
 * (transcript and composer) and its header bar pickers.
 */
G_DEFINE_FINAL_TYPE (TallyWindow, tally_window, ADW_TYPE_APPLICATION_WINDOW)

static const char *const beanline_suggestions[] = {
  N_("Which store sold the most in March?"),
  N_("How did iced drinks sell from January to June?"),
  N_("Is anything odd in the sales data?"),
};

static void start_turn        (TallyWindow *self,
                               const char  *text);

/* Small helpers */

static const char *
current_key (TallyWindow *self)
{
  return self->session != NULL ? tally_session_get_id (self->session) : "";
}

/**
 * tally_window_add_toast:
 * @self: a #TallyWindow
 * @title: the message (plain text)
 *
 * Shows a short confirmation or error at the bottom of the window.
 */
void
tally_window_add_toast (TallyWindow *self,
                        const char  *title)
{
  g_autofree char *escaped = NULL;
  AdwToast *toast;

  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (title != NULL);

  escaped = g_markup_escape_text (title, -1);
  toast = adw_toast_new (escaped);
  g_free (self->last_toast_title);
  self->last_toast_title = g_strdup (title);
  g_set_weak_pointer (&self->last_toast, toast);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

static void
add_toast_with_action (TallyWindow *self,
                       const char  *title,
                       const char  *button_label,
                       const char  *action_name)
{
  g_autofree char *escaped = g_markup_escape_text (title, -1);
  AdwToast *toast = adw_toast_new (escaped);

  g_assert (TALLY_IS_WINDOW (self));

  adw_toast_set_button_label (toast, button_label);
  adw_toast_set_action_name (toast, action_name);
  g_free (self->last_toast_title);
  self->last_toast_title = g_strdup (title);
  g_set_weak_pointer (&self->last_toast, toast);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

/* The model, mode and thinking pickers only matter for a turn, and a turn
 * needs a key: without one they are shown but insensitive, in the header
 * and in the title's popover alike (issue 14 §10). */
static void
update_pickers (TallyWindow *self)
{
  gboolean has_key = tally_application_has_api_key (self->app);
  GtkWidget *pickers[] = {
    GTK_WIDGET (self->model_dropdown), GTK_WIDGET (self->mode_dropdown),
    GTK_WIDGET (self->thinking_button), GTK_WIDGET (self->compact_list),
  };

  /* (The title's popover, and its list, once built.) */
  for (guint i = 0; i < G_N_ELEMENTS (pickers); i++)
    if (pickers[i] != NULL)
      gtk_widget_set_sensitive (pickers[i], has_key);
}

static void welcome_key_apply_cb (TallyWindow *self);

/* The first-launch page is built the first time it is shown
 * (docs/architecture.md §11.1): most windows have a key and never show
 * it, and its wrapped text, key row and application icon would otherwise
 * be built, styled and measured before every first frame. */
static void
ensure_welcome_page (TallyWindow *self)
{
  g_autoptr(GtkBuilder) builder = NULL;

  if (self->welcome_page != NULL)
    return;

  builder = gtk_builder_new_from_resource ("/io/github/tallyapp/Tally/window/tally-welcome-page.ui");
  self->welcome_page = ADW_STATUS_PAGE (gtk_builder_get_object (builder, "welcome_page"));
  self->welcome_key_row = ADW_PASSWORD_ENTRY_ROW (gtk_builder_get_object (builder, "welcome_key_row"));
  adw_status_page_set_icon_name (self->welcome_page, APPLICATION_ID);
  g_signal_connect_object (self->welcome_key_row, "apply", G_CALLBACK (welcome_key_apply_cb), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->welcome_key_row, "entry-activated", G_CALLBACK (welcome_key_apply_cb), self,
                           G_CONNECT_SWAPPED);
  /* The bin owns the page from here on (the builder's reference goes
   * with the builder). */
  adw_bin_set_child (self->welcome_bin, GTK_WIDGET (self->welcome_page));
}

static void
update_page (TallyWindow *self)
{
  TallyApiKeySource source = tally_application_get_api_key_source (self->app);
  const char *page;

  if (self->session != NULL)
    page = "transcript";
  else if (source == TALLY_API_KEY_SOURCE_NONE)
    page = "welcome";
  else
    page = "empty";

  if (g_str_equal (page, "welcome"))
    ensure_welcome_page (self);

  gtk_stack_set_visible_child_name (self->session_stack, page);
  gtk_widget_set_visible (GTK_WIDGET (self->composer), !g_str_equal (page, "welcome"));
  update_pickers (self);
}

/* A banner's revealer is hidden while it is folded away: GtkRevealer
 * measures its child even when nothing of it shows, and the banners'
 * wrapping labels were laid out again and again for every layout of the
 * window, the first frame's included (docs/architecture.md §11.1). It is
 * shown before it unfolds and hidden once it has folded. */
static void
banner_child_revealed_cb (GtkRevealer *revealer,
                          GParamSpec  *pspec G_GNUC_UNUSED,
                          gpointer     user_data G_GNUC_UNUSED)
{
  g_assert (GTK_IS_REVEALER (revealer));

  if (!gtk_revealer_get_reveal_child (revealer) && !gtk_revealer_get_child_revealed (revealer))
    gtk_widget_set_visible (GTK_WIDGET (revealer), FALSE);
}

/**
 * _tally_window_reveal_banner:
 * @revealer: one of the window's banner revealers
 * @reveal: whether the banner should show
 *
 * Unfolds or folds a banner, showing its revealer first and hiding it
 * once folded (see banner_child_revealed_cb()).
 */
void
_tally_window_reveal_banner (GtkRevealer *revealer,
                             gboolean     reveal)
{
  if (reveal)
    gtk_widget_set_visible (GTK_WIDGET (revealer), TRUE);
  gtk_revealer_set_reveal_child (revealer, reveal);
  banner_child_revealed_cb (revealer, NULL, NULL);
}

static void
set_busy (TallyWindow  *self,
          TallySession *session,
          GCancellable *cancellable)
{
  g_set_object (&self->busy_session, session);
  g_set_object (&self->turn_cancellable, cancellable);
  tally_composer_set_busy (self->composer, session != NULL);
  _tally_window_watch_turn (self, session);
  _tally_window_update_actions (self);
}

static void
cancel_turn (TallyWindow *self)
{
  if (self->turn_cancellable != NULL)
    g_cancellable_cancel (self->turn_cancellable);
  set_busy (self, NULL, NULL);
}

/* Sessions */

static void
save_draft (TallyWindow *self)
{
  g_autofree char *text = tally_composer_dup_text (self->composer);

  if (text != NULL && *text != '\0')
    g_hash_table_insert (self->drafts, g_strdup (current_key (self)), g_steal_pointer (&text));
  else
    g_hash_table_remove (self->drafts, current_key (self));
}

static void
restore_draft (TallyWindow *self)
{
  const char *text = g_hash_table_lookup (self->drafts, current_key (self));

  tally_composer_set_text (self->composer, text != NULL ? text : "");
}

static void
transcript_items_changed_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  _tally_window_update_title (self);
}

/* The preferences that apply to every session follow the settings while
 * the agent lives: a change in the preferences reaches a running turn at
 * its next card or API call. Binding again replaces the binding, so a
 * session shown twice (or in two windows) is bound once. */
static void
bind_agent_settings (TallyWindow *self,
                     TallyAgent  *agent)
{
  static const struct {
    const char *key;
    const char *property;
  } bindings[] = {
    { "thinking-budget", "thinking-budget" },
    { "approval-timeout", "approval-timeout" },
    { "question-timeout", "question-timeout" },
    { "max-session-cost", "max-cost" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bindings); i++)
    g_settings_bind (self->settings, bindings[i].key, agent, bindings[i].property,
                     G_SETTINGS_BIND_GET | G_SETTINGS_BIND_NO_SENSITIVITY);
}

/* Shows @session (transfer full), or a new session when NULL. */
static void
show_session (TallyWindow  *self,
              TallySession *session)
{
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_func (tally_session_get_transcript (self->session),
                                          transcript_items_changed_cb, self);
  g_clear_object (&self->session);
  self->session = session;

  if (session != NULL)
    {
      TallyAgent *agent = tally_session_get_agent (session);
      TallyTranscript *transcript = tally_session_get_transcript (session);

      bind_agent_settings (self, agent);

      g_free (self->database);
      self->database = g_strdup (tally_agent_get_database (agent));
      g_free (self->workspace);
      self->workspace = g_strdup (tally_agent_get_workspace (agent));
      if (self->database == NULL)
        self->database = g_strdup (tally_application_get_default_database ());
      /* A PostgreSQL session's password, from the keyring. */
      _tally_window_restore_pg_password (self);

      /* The workspace first: rows hand it to the cards when they bind. */
      tally_transcript_view_set_workspace (self->transcript_view, self->workspace);
      tally_transcript_view_set_model (self->transcript_view, G_LIST_MODEL (transcript));
      g_signal_connect_object (transcript, "items-changed",
                               G_CALLBACK (transcript_items_changed_cb), self, G_CONNECT_SWAPPED);

      _tally_window_select_model (self, tally_agent_get_model (agent));
      gtk_drop_down_set_selected (self->mode_dropdown, tally_session_get_mode (session));
      _tally_window_select_row_for (self, tally_session_get_id (session));
    }
  else
    {
      g_autofree char *model = g_settings_get_string (self->settings, "default-model");

      g_free (self->database);
      self->database = g_strdup (tally_application_get_default_database ());
      g_clear_pointer (&self->workspace, g_free);

      tally_transcript_view_set_workspace (self->transcript_view, NULL);
      tally_transcript_view_set_model (self->transcript_view, G_LIST_MODEL (self->empty_transcript));
      _tally_window_select_model (self, model);
      gtk_drop_down_set_selected (self->mode_dropdown, g_settings_get_enum (self->settings, "default-mode"));
      gtk_toggle_button_set_active (self->thinking_button,
                                    g_settings_get_boolean (self->settings, "thinking-enabled"));
      gtk_list_box_unselect_all (self->session_list);
    }

  update_page (self);
  _tally_window_update_context (self);
}

static void
leave_current (TallyWindow *self)
{
  if (self->busy_session != NULL)
    cancel_turn (self);
  save_draft (self);
}

/**
 * tally_window_new_session:
 * @self: a #TallyWindow
 *
 * Shows a new, empty session with the default database, model, mode and
 * thinking setting. It is created (and saved) when its first message is
 * sent. A turn running in the session shown before is cancelled.
 */
void
tally_window_new_session (TallyWindow *self)
{
  g_return_if_fail (TALLY_IS_WINDOW (self));

  _tally_window_cancel_open (self);
  leave_current (self);
  g_clear_pointer (&self->deleted_current, g_free);
  show_session (self, NULL);
  restore_draft (self);
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}

/**
 * _tally_window_show_opened:
 * @self: a #TallyWindow
 * @session: (transfer full): a session just opened from the store
 * @reopen: whether it is the session shown, opened again
 *
 * Shows a session tally-window-open.c opened: the draft of the session
 * shown before is kept, a turn running in it is cancelled (unless
 * @reopen, where no turn runs), and the sidebar closes in a folded
 * window.
 */
void
_tally_window_show_opened (TallyWindow  *self,
                           TallySession *session,
                           gboolean      reopen)
{
  g_assert (TALLY_IS_WINDOW (self));
  g_assert (TALLY_IS_SESSION (session));

  if (reopen)
    {
      /* A turn started while it was read: keep the session it runs in. */
      if (self->busy_session != NULL)
        {
          g_object_unref (session);
          return;
        }
      save_draft (self);
      show_session (self, session);
      restore_draft (self);
      return;
    }

  leave_current (self);
  g_clear_pointer (&self->deleted_current, g_free);
  show_session (self, session);
  restore_draft (self);

  if (adw_flap_get_folded (self->flap))
    adw_flap_set_reveal_flap (self->flap, FALSE);
}

/**
 * tally_window_get_session:
 * @self: a #TallyWindow
 *
 * Returns: (transfer none) (nullable): the session shown, or %NULL while a
 *   new session waits for its first message
 */
TallySession *
tally_window_get_session (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), NULL);
  return self->session;
}

/**
 * tally_window_is_busy:
 * @self: a #TallyWindow
 *
 * Returns: %TRUE while a turn runs in the session shown
 */
gboolean
tally_window_is_busy (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), FALSE);
  return self->busy_session != NULL;
}

/* Sending */

/* A long turn that ends while the analyst is in another window gets a
 * desktop notification, so they need not keep watching. */
#define NOTIFY_AFTER_MS 10000

static void
notify_turn_finished (TallyWindow  *self,
                      TallySession *session)
{
  GListModel *blocks = G_LIST_MODEL (tally_session_get_transcript (session));
  guint n = g_list_model_get_n_items (blocks);
  g_autoptr(TallyBlock) last = n > 0 ? g_list_model_get_item (blocks, n - 1) : NULL;
  g_autoptr(GNotification) notification = NULL;
  g_autofree char *body = NULL;
  const char *title = session == self->session
                      ? _tally_window_get_session_title (self)
                      : tally_transcript_get_title (tally_session_get_transcript (session));
  const char *status;
  JsonObject *details;
  GApplication *app;

  if (gtk_window_is_active (GTK_WINDOW (self)) || last == NULL ||
      tally_block_get_kind (last) != TALLY_BLOCK_RECEIPT)
    return;

  details = tally_block_get_details (last);
  if (details == NULL || json_object_get_int_member_with_default (details, "duration_ms", 0) < NOTIFY_AFTER_MS)
    return;

  /* Notifications travel over the session bus: without one (no desktop
   * session) GLib's notification backend has no connection to use and
   * fails with a critical, so there is nothing to send. */
  app = G_APPLICATION (gtk_window_get_application (GTK_WINDOW (self)));
  if (app == NULL || g_application_get_dbus_connection (app) == NULL)
    return;

  status = tally_block_get_state (last);
  if (g_strcmp0 (status, "done") == 0)
    notification = g_notification_new (_("Tally finished a reply"));
  else if (g_strcmp0 (status, "cancelled") == 0)
    notification = g_notification_new (_("Tally stopped a reply"));
  else
    notification = g_notification_new (_("Tally could not finish a reply"));

  body = g_strdup_printf (_("In “%s”"), title != NULL ? title : _("Untitled session"));
  g_notification_set_body (notification, body);
  g_application_send_notification (app, "turn-finished", notification);
}

static void
send_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(TallyWindow) self = user_data;
  TallySession *session = TALLY_SESSION (object);
  g_autoptr(GError) error = NULL;

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (TALLY_IS_SESSION (object));

  tally_session_send_finish (session, result, &error);

  /* The window may have been closed while the turn ran. */
  if (self->closed)
    return;

  if (session == self->busy_session)
    set_busy (self, NULL, NULL);

  notify_turn_finished (self, session);
  /* A PostgreSQL session first connected by a query: its role, checked
   * then, may want the card (docs/postgresql.md, "A read-only role"). */
  if (session == self->session)
    _tally_window_check_role (self);

  if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
      session == self->session)
    {
      GListModel *blocks = G_LIST_MODEL (tally_session_get_transcript (session));
      guint n = g_list_model_get_n_items (blocks);
      g_autoptr(TallyBlock) last = n > 0 ? g_list_model_get_item (blocks, n - 1) : NULL;
      gboolean shown = FALSE;

      /* The transcript's error banner says it already, with Retry; a toast
       * is only for failures the log does not show. */
      for (guint i = n; i > 0 && !shown; i--)
        {
          g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i - 1);

          if (tally_block_get_kind (block) == TALLY_BLOCK_USER)
            break;
          shown = tally_block_get_kind (block) == TALLY_BLOCK_ERROR;
        }
      if (!shown)
        tally_window_add_toast (self, error->message);
    }

  _tally_window_update_context (self);
  _tally_window_refresh_sessions (self);
}


static gboolean
ensure_folder (TallyWindow *self,
               const char  *path)
{
  if (g_mkdir_with_parents (path, 0700) != 0)
    {
      int saved_errno = errno;
      g_autofree char *message = g_strdup_printf (_("Could not create the workspace %s: %s"),
                                                  path, g_strerror (saved_errno));
      tally_window_add_toast (self, message);
      return FALSE;
    }
  return TRUE;
}

static void
start_turn (TallyWindow *self,
            const char  *text)
{
  g_autoptr(GCancellable) cancellable = NULL;
  g_autofree char *prompt = NULL;
  TallyAgent *agent;
  gboolean is_new = FALSE;
  TallyMode mode;

  if (text == NULL || self->busy_session != NULL)
    return;

  prompt = g_strstrip (g_strdup (text));
  if (*prompt == '\0')
    return;

  /* The keyring is asked after the first frame; until it answers the
   * text stays in the composer (docs/architecture.md §11.1). */
  if (tally_application_get_api_key_source (self->app) == TALLY_API_KEY_SOURCE_LOOKING_UP)
    {
      tally_composer_set_text (self->composer, text);
      tally_window_add_toast (self, _("Still reading the API key from your keyring — send again in a moment"));
      return;
    }

  if (!tally_application_has_api_key (self->app))
    {
      tally_composer_set_text (self->composer, text);
      add_toast_with_action (self, _("Add an Anthropic API key to send messages"),
                             _("_Preferences"), "app.preferences");
      return;
    }

  if (_tally_window_offline_blocks_send (self))
    {
      tally_composer_set_text (self->composer, text);
      tally_window_add_toast (self, _("You’re offline — saved sessions still open; sending needs a connection"));
      return;
    }

  if (self->database == NULL ||
      (!tally_pg_conninfo_is (self->database) && !g_file_test (self->database, G_FILE_TEST_IS_REGULAR)))
    {
      g_autofree char *message = g_strdup_printf (_("The database %s cannot be found; choose another one"),
                                                  self->database != NULL ? self->database : "");
      tally_composer_set_text (self->composer, text);
      tally_window_add_toast (self, message);
      return;
    }

  if (self->session == NULL)
    {
      TallySession *session = tally_session_new (tally_application_get_store (self->app),
                                                 tally_application_get_client (self->app),
                                                 tally_application_get_tools (self->app));
      const char *id = tally_session_get_id (session);

      if (self->workspace == NULL)
        self->workspace = tally_application_dup_workspace_for (id);
      if (!ensure_folder (self, self->workspace))
        {
          g_object_unref (session);
          g_clear_pointer (&self->workspace, g_free);
          tally_composer_set_text (self->composer, text);
          return;
        }

      agent = tally_session_get_agent (session);
      tally_agent_set_database (agent, self->database);
      tally_agent_set_workspace (agent, self->workspace);
      tally_agent_set_model (agent, self->model);

      g_hash_table_remove (self->drafts, "");
      /* Showing the new session resets the mode selector to the session's
       * default; the first message goes in the mode the analyst picked. */
      mode = (TallyMode)gtk_drop_down_get_selected (self->mode_dropdown);
      show_session (self, session);
      gtk_drop_down_set_selected (self->mode_dropdown, mode);
      is_new = TRUE;
    }
  else if (self->workspace != NULL && !ensure_folder (self, self->workspace))
    {
      tally_composer_set_text (self->composer, text);
      return;
    }

  agent = tally_session_get_agent (self->session);
  tally_agent_set_model (agent, self->model);

  mode = (TallyMode)gtk_drop_down_get_selected (self->mode_dropdown);
  if (mode > TALLY_MODE_AUTO)
    mode = TALLY_MODE_ASK;

  g_hash_table_remove (self->drafts, current_key (self));

  if (is_new && tally_application_get_store (self->app) != NULL)
    _tally_window_add_provisional_row (self, tally_session_get_id (self->session), prompt);

  cancellable = g_cancellable_new ();
  set_busy (self, self->session, cancellable);
  tally_session_send_async (self->session,
                            &(TallyTurnRequest) { .text = prompt, .mode = mode,
                                                  .thinking = gtk_toggle_button_get_active (self->thinking_button) },
                            cancellable, send_cb, g_object_ref (self));
  _tally_window_update_context (self);
}

/* Retry in place (tally-window-errors.c): the session shown runs its
 * failed turn @turn_id again, as a turn of its own with the same end. */
void
_tally_window_run_retry (TallyWindow *self,
                         const char  *turn_id,
                         const char  *prompt,
                         TallyMode    mode,
                         gboolean     thinking)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();

  set_busy (self, self->session, cancellable);
  tally_session_send_async (self->session,
                            &(TallyTurnRequest) { .text = prompt, .retry_of = turn_id, .mode = mode,
                                                  .thinking = thinking },
                            cancellable, send_cb, g_object_ref (self));
  _tally_window_update_context (self);
}

/**
 * tally_window_send:
 * @self: a #TallyWindow
 * @text: the analyst's message
 *
 * Sends @text in the session shown (starting a new session when none is),
 * with the selected model, mode and thinking switch — what the composer's
 * Send does. Without an API key or a network, a toast says so and nothing
 * is sent.
 */
void
tally_window_send (TallyWindow *self,
                   const char  *text)
{
  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (text != NULL);

  start_turn (self, text);
}

static void
composer_send_cb (TallyWindow   *self,
                  const char    *text,
                  TallyComposer *composer)
{
  g_assert (TALLY_IS_WINDOW (self));

  start_turn (self, text);
}

/* Stop: the composer's button and win.stop (Escape). */
void
_tally_window_stop_turn (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  if (self->turn_cancellable != NULL)
    g_cancellable_cancel (self->turn_cancellable);
}


/* The key on the first-launch page */

static void
key_saved_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(TallyWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  TallyApiKeySource source;

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (TALLY_IS_APPLICATION (object));

  source = tally_application_set_api_key_finish (TALLY_APPLICATION (object), result, &error);
  if (self->closed || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (error != NULL)
    tally_window_add_toast (self, error->message);
  else if (source == TALLY_API_KEY_SOURCE_MEMORY)
    tally_window_add_toast (self, _("No keyring available: the key is kept for this session only"));
  else
    tally_window_add_toast (self, _("API key saved in your keyring"));

  /* The welcome page gives way to the session's; the next thing to do is
   * to ask (issue 14 §10). */
  if (error == NULL)
    {
      update_page (self);
      gtk_widget_grab_focus (GTK_WIDGET (self->composer));
    }
}

static void
welcome_key_apply_cb (TallyWindow *self)
{
  g_autofree char *key = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->welcome_key_row)));

  g_assert (TALLY_IS_WINDOW (self));

  g_strstrip (key);
  if (*key == '\0')
    return;

  tally_application_set_api_key_async (self->app, key, self->cancellable, key_saved_cb, g_object_ref (self));
  gtk_editable_set_text (GTK_EDITABLE (self->welcome_key_row), "");
  memset (key, 0, strlen (key));
}

static void
suggestion_activated_cb (TallyWindow   *self,
                         GtkListBoxRow *row)
{
  const char *text = g_object_get_data (G_OBJECT (row), "tally-suggestion");

  g_assert (TALLY_IS_WINDOW (self));

  if (text == NULL)
    return;

  tally_composer_set_text (self->composer, text);
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}


/* Application state */

static void
store_write_failed_cb (TallyWindow  *self,
                       const GError *error,
                       TallyStore   *store)
{
  g_autofree char *message = g_strdup_printf (_("Could not save the session: %s"), error->message);

  g_assert (TALLY_IS_WINDOW (self));

  tally_window_add_toast (self, message);
}

static void
api_key_source_changed_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  update_page (self);
  _tally_window_maybe_fetch_models (self);
}

static void
online_changed_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  _tally_window_update_banners (self);
  _tally_window_maybe_fetch_models (self);
}

/* A new base URL means a new client; the session shown picks it up by
 * being reopened from the store (unless a turn is running in it). */
static void
client_changed_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  _tally_window_maybe_fetch_models (self);

  if (self->session != NULL && self->busy_session == NULL)
    _tally_window_reopen_session (self);
}

static void
reveal_flap_changed_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  /* Folding hides the sidebar by itself; remember only the analyst's own
   * choice in a wide window. */
  if (!adw_flap_get_folded (self->flap))
    g_settings_set_boolean (self->settings, "sidebar-visible", adw_flap_get_reveal_flap (self->flap));
}

/* Narrow windows: the model, mode and thinking pickers leave the header
 * bar for the title's popover, so the session fits a phone-sized window.
 * An AdwSqueezer holds them and shows them only while they fit at their
 * natural width; it shows nothing otherwise, so the pickers never set the
 * window's minimum width (issue 14 §6: the window went no narrower than
 * 613–743 px while the header decided by a fixed window width). */

static void
apply_compact (TallyWindow *self)
{
  if (self->compact_list != NULL)
    gtk_widget_set_visible (GTK_WIDGET (self->compact_list), self->compact);
}

static gboolean
apply_compact_idle (gpointer user_data)
{
  TallyWindow *self = user_data;

  self->compact_idle = 0;
  apply_compact (self);
  return G_SOURCE_REMOVE;
}

static void
picker_squeezer_changed_cb (TallyWindow *self)
{
  gboolean compact = adw_squeezer_get_visible_child (self->picker_squeezer) == NULL;

  g_assert (TALLY_IS_WINDOW (self));

  /* The squeezer decides during an allocation, when visibility cannot
   * change. */
  if (compact != self->compact)
    {
      self->compact = compact;
      if (self->compact_idle == 0 && !self->closed)
        self->compact_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, apply_compact_idle, self, NULL);
    }
}

static void
shut_down (TallyWindow *self)
{
  if (self->closed)
    return;

  self->closed = TRUE;
  g_clear_handle_id (&self->compact_idle, g_source_remove);
  g_clear_handle_id (&self->dates_timeout, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_cancellable_cancel (self->list_cancellable);
  g_cancellable_cancel (self->search_cancellable);
  if (self->turn_cancellable != NULL)
    g_cancellable_cancel (self->turn_cancellable);
  _tally_window_cancel_open (self);
  _tally_window_commit_pending_deletes (self);
}

static gboolean
tally_window_close_request (GtkWindow *window)
{
  TallyWindow *self = TALLY_WINDOW (window);

  /* Closing cancels the running turn (its events are still stored) and
   * carries out deletions whose undo toast is still up. */
  shut_down (self);

  return GTK_WINDOW_CLASS (tally_window_parent_class)->close_request (window);
}

/* Start-up (docs/architecture.md §11.1, "Start-up and WebKit"): what the
 * first frame does not show waits until it is painted — the store (opened
 * by the first call that needs it), the saved sessions, the store's
 * banner, the network monitor and the model list. Until then the window
 * counts as refreshing its list (_tally_window_is_refreshing()). */

static gboolean
after_first_frame_idle (gpointer user_data)
{
  TallyWindow *self = user_data;
  TallyStore *store;

  g_assert (TALLY_IS_WINDOW (self));

  self->refreshing--;
  if (self->closed)
    return G_SOURCE_REMOVE;

  _tally_application_after_first_frame (self->app);

  store = tally_application_get_store (self->app);
  if (store != NULL)
    g_signal_connect_object (store, "write-failed", G_CALLBACK (store_write_failed_cb), self, G_CONNECT_SWAPPED);
  _tally_window_update_actions (self);
  _tally_window_update_banners (self);
  _tally_window_refresh_sessions (self);
  _tally_window_maybe_fetch_models (self);
  return G_SOURCE_REMOVE;
}

/* The first frame's tick: the idle runs once that frame is painted (the
 * frame clock paints in the same dispatch, at a higher priority). */
static gboolean
first_tick_cb (GtkWidget     *widget,
               GdkFrameClock *clock,
               gpointer       user_data)
{
  g_assert (TALLY_IS_WINDOW (widget));

  g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, after_first_frame_idle, g_object_ref (widget), g_object_unref);
  return G_SOURCE_REMOVE;
}

/* The shortcuts window (win.show-help-overlay, Ctrl+?) is built the first
 * time it is asked for (docs/architecture.md §11.1, "Start-up and WebKit"):
 * at GtkApplication's gtk/help-overlay.ui it would be built with every
 * window, before its first frame. It is then handed to
 * gtk_application_window_set_help_overlay(), which makes it modal, hides
 * it on close, destroys it with the window and, above all, tells it which
 * window's application to ask for the accelerators of its shortcuts'
 * actions: without that, every shortcut given by an action name shows no
 * keys. */
static void
show_help_overlay_action (GtkWidget  *widget,
                          const char *action_name,
                          GVariant   *parameter)
{
  GtkApplicationWindow *window = GTK_APPLICATION_WINDOW (widget);
  GtkShortcutsWindow *overlay = gtk_application_window_get_help_overlay (window);

  if (overlay == NULL)
    {
      g_autoptr(GtkBuilder) builder =
        gtk_builder_new_from_resource ("/io/github/tallyapp/Tally/window/tally-shortcuts-window.ui");

      overlay = GTK_SHORTCUTS_WINDOW (gtk_builder_get_object (builder, "help_overlay"));
      gtk_application_window_set_help_overlay (window, overlay);
    }
  gtk_window_present (GTK_WINDOW (overlay));
}

/* The main menu's popover is made the first time it opens (F10 or a
 * click), not with every window: GtkMenuButton builds a GtkPopoverMenu
 * with all its items as soon as it is given a model. GTK calls this at
 * every opening; the model is given once. */
static void
create_main_menu_cb (GtkMenuButton *button,
                     gpointer       user_data)
{
  TallyWindow *self = user_data;

  g_assert (TALLY_IS_WINDOW (self));

  if (gtk_menu_button_get_menu_model (button) == NULL)
    gtk_menu_button_set_menu_model (button, self->main_menu);
}

/**
 * _tally_window_ensure_context_popover:
 * @self: a #TallyWindow
 *
 * Builds the title's popover (the session's database and workspace, and
 * in a narrow window the model, mode and thinking pickers, tied to the
 * header's) unless it is built already. It is built the first time it
 * opens, not with the window: its combo rows, action rows and switch were
 * 2 % of the empty window's first frame (docs/architecture.md §11.1).
 */
void
_tally_window_ensure_context_popover (TallyWindow *self)
{
  g_autoptr(GtkBuilder) builder = NULL;
  g_autoptr(GtkListItemFactory) factory = NULL;
  g_autoptr(GtkListItemFactory) list_factory = NULL;
  TallyModelCache *cache;

  g_return_if_fail (TALLY_IS_WINDOW (self));

  if (self->context_popover != NULL)
    return;

  builder = gtk_builder_new_from_resource ("/io/github/tallyapp/Tally/window/tally-context-popover.ui");
  self->context_popover = GTK_POPOVER (gtk_builder_get_object (builder, "context_popover"));
  self->compact_list = GTK_LIST_BOX (gtk_builder_get_object (builder, "compact_list"));
  self->model_row = ADW_COMBO_ROW (gtk_builder_get_object (builder, "model_row"));
  self->mode_row = ADW_COMBO_ROW (gtk_builder_get_object (builder, "mode_row"));
  self->thinking_switch = GTK_SWITCH (gtk_builder_get_object (builder, "thinking_switch"));
  self->database_row = ADW_ACTION_ROW (gtk_builder_get_object (builder, "database_row"));
  self->workspace_row = ADW_ACTION_ROW (gtk_builder_get_object (builder, "workspace_row"));
  /* The button holds the popover from here on, as the template did. */
  gtk_menu_button_set_popover (self->title_button, GTK_WIDGET (self->context_popover));

  cache = tally_application_get_model_cache (self->app);
  factory = tally_model_cache_create_factory (cache, FALSE);
  list_factory = tally_model_cache_create_factory (cache, TRUE);
  adw_combo_row_set_factory (self->model_row, factory);
  adw_combo_row_set_list_factory (self->model_row, list_factory);
  adw_combo_row_set_model (self->model_row, tally_model_cache_get_models (cache));
  g_object_bind_property (self->model_dropdown, "selected", self->model_row, "selected",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->mode_dropdown, "selected", self->mode_row, "selected",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  tally_mode_menu_set_up_row (self->mode_row);
  g_object_bind_property (self->thinking_button, "active", self->thinking_switch, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);

  _tally_window_update_context_rows (self);
  update_pickers (self);
  apply_compact (self);
}

/* GtkMenuButton calls this each time the title's popover is about to
 * open; it is built the first time. */
static void
create_context_popover_cb (GtkMenuButton *button,
                           gpointer       user_data)
{
  TallyWindow *self = user_data;

  g_assert (GTK_IS_MENU_BUTTON (button));
  g_assert (TALLY_IS_WINDOW (self));

  _tally_window_ensure_context_popover (self);
}

/* GObject */

/* Connects the window to its application (set after construction). */
static void
tally_window_setup (TallyWindow      *self,
                    TallyApplication *app)
{
  TallyModelCache *cache;
  g_autoptr(GtkListItemFactory) factory = NULL;
  g_autoptr(GtkListItemFactory) list_factory = NULL;

  /* Held until finalize: answers that arrive after the window closed may
   * still look at the application before they notice. */
  self->app = g_object_ref (app);
  self->settings = g_object_ref (tally_application_get_settings (self->app));
  cache = tally_application_get_model_cache (self->app);

  /* Window size and sidebar */
  g_settings_bind (self->settings, "window-width", self, "default-width", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-height", self, "default-height", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-maximized", self, "maximized", G_SETTINGS_BIND_DEFAULT);
  adw_flap_set_reveal_flap (self->flap, g_settings_get_boolean (self->settings, "sidebar-visible"));
  g_object_bind_property (self->flap, "reveal-flap", self->sidebar_button, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_signal_connect_object (self->flap, "notify::reveal-flap", G_CALLBACK (reveal_flap_changed_cb),
                           self, G_CONNECT_SWAPPED);

  /* The model picker: display names on the button, names and ids in the
   * list (tally-window-models.c). */
  factory = tally_model_cache_create_factory (cache, FALSE);
  list_factory = tally_model_cache_create_factory (cache, TRUE);
  gtk_drop_down_set_factory (self->model_dropdown, factory);
  gtk_drop_down_set_list_factory (self->model_dropdown, list_factory);
  _tally_window_connect_model_picker (self);

  /* Each mode says what runs without asking (issue 14 §9). The same
   * pickers in the title's popover, for narrow windows, are set up when
   * it is built (_tally_window_ensure_context_popover()). */
  tally_mode_menu_set_up (self->mode_dropdown);
  g_signal_connect_object (self->picker_squeezer, "notify::visible-child",
                           G_CALLBACK (picker_squeezer_changed_cb), self, G_CONNECT_SWAPPED);

  /* The application's state */
  g_signal_connect_object (self->app, "notify::api-key-source",
                           G_CALLBACK (api_key_source_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->app, "notify::online",
                           G_CALLBACK (online_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->app, "notify::client",
                           G_CALLBACK (client_changed_cb), self, G_CONNECT_SWAPPED);

  show_session (self, NULL);
  _tally_window_update_offline (self);

  /* The rest after the first frame (above). */
  self->refreshing++;
  gtk_widget_add_tick_callback (GTK_WIDGET (self), first_tick_cb, NULL, NULL);
}

static void
tally_window_dispose (GObject *object)
{
  TallyWindow *self = (TallyWindow *)object;

  shut_down (self);

  if (self->session != NULL)
    g_signal_handlers_disconnect_by_func (tally_session_get_transcript (self->session),
                                          transcript_items_changed_cb, self);
  g_clear_object (&self->session);
  g_clear_object (&self->busy_session);
  g_clear_object (&self->turn_cancellable);
  g_clear_weak_pointer (&self->last_toast);
  _tally_window_watch_turn (self, NULL);

  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_WINDOW);
  /* The title's popover went with its button. */
  self->context_popover = NULL;
  self->compact_list = NULL;
  self->model_row = NULL;
  self->mode_row = NULL;
  self->thinking_switch = NULL;
  self->database_row = NULL;
  self->workspace_row = NULL;

  G_OBJECT_CLASS (tally_window_parent_class)->dispose (object);
}

static void
tally_window_finalize (GObject *object)
{
  TallyWindow *self = (TallyWindow *)object;

  g_clear_object (&self->cancellable);
  g_clear_object (&self->list_cancellable);
  g_clear_object (&self->search_cancellable);
  g_clear_object (&self->settings);
  g_clear_object (&self->app);
  g_clear_object (&self->empty_transcript);
  g_clear_pointer (&self->drafts, g_hash_table_unref);
  g_clear_pointer (&self->rows, g_hash_table_unref);
  g_clear_pointer (&self->pending_deletes, g_hash_table_unref);
  g_clear_pointer (&self->search_hits, g_hash_table_unref);
  g_free (self->search_text);
  g_free (self->database);
  g_free (self->workspace);
  g_free (self->model);
  g_free (self->deleted_current);
  g_free (self->last_toast_title);
  g_free (self->salvage_result);

  G_OBJECT_CLASS (tally_window_parent_class)->finalize (object);
}

static void
tally_window_class_init (TallyWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = tally_window_dispose;
  object_class->finalize = tally_window_finalize;
  window_class->close_request = tally_window_close_request;

  g_type_ensure (TALLY_TYPE_TRANSCRIPT_VIEW);
  g_type_ensure (TALLY_TYPE_COMPOSER);
  g_type_ensure (TALLY_TYPE_CENTRING_LAYOUT);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/tallyapp/Tally/window/tally-window.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, flap);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, search_entry);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, sidebar_stack);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, session_list);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, store_status_label);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, sidebar_button);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, title_button);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, thinking_button);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, mode_dropdown);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, model_dropdown);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, offline_revealer);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, offline_label);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, store_revealer);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, store_label);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, salvage_button);
  gtk_widget_class_bind_template_callback (widget_class, banner_child_revealed_cb);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, session_stack);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, welcome_bin);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, empty_page);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, empty_bin);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, role_text_bin);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, empty_description);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, suggestions_box);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, suggestion_list);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, transcript_view);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, composer);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, main_menu_button);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, main_menu);
  gtk_widget_class_bind_template_child (widget_class, TallyWindow, picker_squeezer);
  _tally_window_sidebar_class_init (widget_class);
  tally_ui_init ();

  _tally_window_actions_class_init (widget_class);
  _tally_window_errors_class_init (widget_class);
  gtk_widget_class_bind_template_callback (widget_class, suggestion_activated_cb);
  gtk_widget_class_install_action (widget_class, "win.show-help-overlay", NULL, show_help_overlay_action);

}

static void
tally_window_init (TallyWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* A style class, not a CSS name: Adwaita styles toplevels as "window". */
  gtk_widget_add_css_class (GTK_WIDGET (self), "tally-window");

  self->cancellable = g_cancellable_new ();
  self->empty_transcript = g_list_store_new (TALLY_TYPE_BLOCK);
  self->drafts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->rows = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->pending_deletes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                 (GDestroyNotify)tally_session_info_unref);

  _tally_window_sidebar_init (self);

  /* Each suggestion is a row whose child is its wrapping label, the
   * chevron drawn by the stylesheet behind the label's end padding
   * (style.css, "label.tally-suggestion"). Not an AdwActionRow: its title
   * sits in a horizontal box, and GTK 4.8's box asks a child for its
   * width at the box's height on every allocation, which a wrapping
   * label answers by laying its text out at a dozen widths; the three
   * titles took 264 layouts before the first frame, 27 without the box
   * (docs/architecture.md §11.1). */
  for (guint i = 0; i < G_N_ELEMENTS (beanline_suggestions); i++)
    {
      GtkWidget *row = gtk_list_box_row_new ();
      GtkWidget *label = gtk_label_new (_(beanline_suggestions[i]));

      gtk_label_set_wrap (GTK_LABEL (label), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
      gtk_label_set_xalign (GTK_LABEL (label), 0.0);
      gtk_widget_add_css_class (label, "tally-suggestion");
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), label);
      /* Named by its label, as an AdwActionRow is by its title: GTK 4.8
       * does not name a row after the text of its children. */
      gtk_accessible_update_relation (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_RELATION_LABELLED_BY, label, NULL, -1);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      g_object_set_data (G_OBJECT (row), "tally-suggestion", (gpointer)_(beanline_suggestions[i]));
      gtk_list_box_append (self->suggestion_list, row);
    }

  gtk_menu_button_set_create_popup_func (self->main_menu_button, create_main_menu_cb, self, NULL);
  gtk_menu_button_set_create_popup_func (self->title_button, create_context_popover_cb, self, NULL);

  g_signal_connect_object (self->composer, "send", G_CALLBACK (composer_send_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->composer, "stop", G_CALLBACK (_tally_window_stop_turn), self, G_CONNECT_SWAPPED);

  if (DEVELOPMENT)
    gtk_widget_add_css_class (GTK_WIDGET (self), "devel");
}

/**
 * tally_window_new:
 * @application: the application
 *
 * Creates a window showing a new session, with the saved sessions in the
 * sidebar.
 *
 * Returns: (transfer none): a new window, owned by @application
 */
TallyWindow *
tally_window_new (TallyApplication *application)
{
  TallyWindow *self;

  g_return_val_if_fail (TALLY_IS_APPLICATION (application), NULL);

  self = g_object_new (TALLY_TYPE_WINDOW, "application", application, NULL);
  tally_window_setup (self, application);
  return self;
}
