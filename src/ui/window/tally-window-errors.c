/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-json.h"
#include "tally-application-private.h"
#include "tally-window-private.h"

#include "tally-event.h"
#include "tally-preferences-window.h"

/*
 * The window's side of failed turns (docs/architecture.md §3.4):
 *
 * - Retry on an error banner runs the failed turn again in place, once
 *   (tally_session_send_async() with the failed turn as retry_of: no new
 *   bubble; the banner's Retry goes).
 * - *Change Key…* opens the preferences with the key field focused.
 * - While the client waits to send a request again, the composer says
 *   "Retrying in N s… (attempt k of n)" beside Stop, counting down each
 *   second.
 * - The offline banner also follows the client: a connection that could
 *   not be made shows it (once) until a request gets an answer.
 * - The store banner says why sessions cannot be saved; for a damaged
 *   store it offers *Salvage…* (docs/architecture.md §10.9), whose result
 *   then stays in the banner.
 */

/* The countdown of an automatic retry */

static void
update_countdown (TallyWindow *self)
{
  g_autofree char *status = NULL;
  gint64 left_us = self->retry_deadline_us - g_get_monotonic_time ();
  guint seconds = left_us > 0 ? (guint) ((left_us + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC) : 0;

  if (seconds > 0)
    /* Translators: while an automatic retry waits; "Retrying in 3 s…
     * (attempt 2 of 5)" */
    status = g_strdup_printf (_("Retrying in %u s… (attempt %u of %u)"), seconds,
                              self->retry_attempt, self->retry_attempts);
  else
    /* Translators: an automatic retry is being sent; "Retrying… (attempt
     * 2 of 5)" */
    status = g_strdup_printf (_("Retrying… (attempt %u of %u)"), self->retry_attempt, self->retry_attempts);
  tally_composer_set_status (self->composer, status);
}

static gboolean
countdown_tick_cb (gpointer user_data)
{
  TallyWindow *self = user_data;

  update_countdown (self);
  if (self->retry_deadline_us <= g_get_monotonic_time ())
    {
      self->countdown_id = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static void
stop_countdown (TallyWindow *self)
{
  g_clear_handle_id (&self->countdown_id, g_source_remove);
  tally_composer_set_status (self->composer, NULL);
}

static void
agent_event_cb (TallyWindow *self,
                JsonObject  *event,
                TallyAgent  *agent)
{
  TallyEventType type;

  g_assert (TALLY_IS_WINDOW (self));

  type = tally_event_get_event_type (event);
  if (type == TALLY_EVENT_RETRY)
    {
      TallyClient *client = tally_agent_get_client (agent);
      gint64 delay_ms = tally_json_object_get_int (event, "delay_ms", 0);

      self->retry_attempt = (guint) tally_json_object_get_int (event, "attempt", 2);
      self->retry_attempts = tally_client_get_max_retries (client) + 1;
      self->retry_deadline_us = g_get_monotonic_time () + MAX (delay_ms, 0) * 1000;
      update_countdown (self);
      g_clear_handle_id (&self->countdown_id, g_source_remove);
      /* A quarter-second tick, so each whole second left shows on time. */
      self->countdown_id = g_timeout_add (250, countdown_tick_cb, self);
    }
  else if (type == TALLY_EVENT_API_CALL || type == TALLY_EVENT_TEXT_DELTA ||
           type == TALLY_EVENT_THINKING_DELTA || type == TALLY_EVENT_ERROR ||
           type == TALLY_EVENT_TURN_FINISHED)
    /* An answer (or the end): no longer waiting. */
    stop_countdown (self);
}

/**
 * _tally_window_watch_turn:
 * @self: a #TallyWindow
 * @session: (nullable): the session whose turn runs, or %NULL when none does
 *
 * Follows the running turn's events for the retry countdown; %NULL stops
 * and clears the composer's status.
 */
void
_tally_window_watch_turn (TallyWindow  *self,
                          TallySession *session)
{
  TallyAgent *agent = session != NULL ? tally_session_get_agent (session) : NULL;

  g_assert (TALLY_IS_WINDOW (self));

  if (agent != self->watched_agent)
    {
      if (self->watched_agent != NULL)
        g_signal_handlers_disconnect_by_func (self->watched_agent, agent_event_cb, self);
      g_set_object (&self->watched_agent, agent);
      if (agent != NULL)
        g_signal_connect_object (agent, "event", G_CALLBACK (agent_event_cb), self, G_CONNECT_SWAPPED);
    }
  if (self->composer != NULL)
    stop_countdown (self);
  else
    g_clear_handle_id (&self->countdown_id, g_source_remove);
}

/* Retry in place */

/* The prompt of the newest turn the analyst started (a retry runs it
 * again and starts no bubble of its own). */
static char *
dup_turn_prompt (GListModel *blocks)
{
  for (guint i = g_list_model_get_n_items (blocks); i > 0; i--)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i - 1);

      if (tally_block_get_kind (block) == TALLY_BLOCK_USER &&
          g_strcmp0 (tally_block_get_state (block), "redirect") != 0)
        return g_strdup (tally_block_get_text (block));
    }
  return NULL;
}

/* Whether @turn_id is the newest finished turn of @blocks and it failed. */
static gboolean
is_last_failed_turn (GListModel *blocks,
                     const char *turn_id)
{
  for (guint i = g_list_model_get_n_items (blocks); i > 0; i--)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i - 1);

      if (tally_block_get_kind (block) == TALLY_BLOCK_RECEIPT)
        return g_strcmp0 (tally_block_get_turn_id (block), turn_id) == 0 &&
               g_strcmp0 (tally_block_get_state (block), "failed") == 0;
    }
  return FALSE;
}

/**
 * _tally_window_retry_turn:
 * @self: a #TallyWindow
 * @turn_id: the failed turn's id (the error banner's `session.retry`)
 *
 * Runs the failed turn @turn_id of the session shown again, in place: no
 * new user bubble, with the mode and thinking switch the window shows. Only
 * the newest turn can be retried, and only once (a second Retry finds it
 * no longer the newest failed turn); without a key or a network a toast
 * says so, as Send does.
 *
 * Returns: %TRUE when the retry started
 */
gboolean
_tally_window_retry_turn (TallyWindow *self,
                          const char  *turn_id)
{
  g_autofree char *prompt = NULL;
  GListModel *blocks;
  TallyMode mode;

  g_assert (TALLY_IS_WINDOW (self));

  if (self->session == NULL || self->busy_session != NULL || turn_id == NULL)
    return FALSE;

  blocks = G_LIST_MODEL (tally_session_get_transcript (self->session));
  prompt = dup_turn_prompt (blocks);
  if (prompt == NULL || !is_last_failed_turn (blocks, turn_id))
    {
      tally_window_add_toast (self, _("Only the newest failed reply can be retried"));
      return FALSE;
    }

  if (!tally_application_has_api_key (self->app))
    {
      tally_window_add_toast (self, _("Add an Anthropic API key to send messages"));
      return FALSE;
    }

  if (_tally_window_offline_blocks_send (self))
    {
      tally_window_add_toast (self, _("You’re offline — saved sessions still open; sending needs a connection"));
      return FALSE;
    }

  mode = (TallyMode) gtk_drop_down_get_selected (self->mode_dropdown);
  if (mode > TALLY_MODE_AUTO)
    mode = TALLY_MODE_ASK;

  _tally_window_run_retry (self, turn_id, prompt, mode, gtk_toggle_button_get_active (self->thinking_button));
  return TRUE;
}

/* Change Key… */

static GtkWidget *
find_key_row (GtkWidget *widget)
{
  if (ADW_IS_PASSWORD_ENTRY_ROW (widget))
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_key_row (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* win.change-key: the preferences, with the key field focused when the
 * key can be typed in there (a key from the environment cannot; the
 * preferences say so). */
static void
change_key_activate (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  TallyWindow *self = TALLY_WINDOW (widget);
  GtkWidget *row;

  g_action_group_activate_action (G_ACTION_GROUP (self->app), "preferences", NULL);

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self->app)); l != NULL; l = l->next)
    {
      if (!TALLY_IS_PREFERENCES_WINDOW (l->data))
        continue;

      row = find_key_row (GTK_WIDGET (l->data));
      if (row != NULL && gtk_widget_get_sensitive (row))
        gtk_widget_grab_focus (row);
      break;
    }
}

/* Offline */

/**
 * _tally_window_update_offline:
 * @self: a #TallyWindow
 *
 * Shows the offline banner while the application is offline, saying why:
 * no network, or a connection to the server that could not be made (until
 * a request gets an answer).
 */
void
_tally_window_update_offline (TallyWindow *self)
{
  gboolean offline = !tally_application_get_online (self->app);

  g_assert (TALLY_IS_WINDOW (self));

  if (offline && !tally_client_get_reachable (tally_application_get_client (self->app)))
    gtk_label_set_label (self->offline_label,
                         _("You’re offline — Tally could not reach the server. The next message tries again."));
  else if (offline)
    gtk_label_set_label (self->offline_label,
                         _("You’re offline — saved sessions still open; sending needs a connection"));
  _tally_window_reveal_banner (self->offline_revealer, offline);
}

/**
 * _tally_window_offline_blocks_send:
 * @self: a #TallyWindow
 *
 * Offline by the network monitor, there is nothing to try; offline because
 * the last connection failed, trying is how Tally finds out it is back.
 *
 * Returns: %TRUE when a message must not be sent now
 */
gboolean
_tally_window_offline_blocks_send (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  return !tally_application_get_online (self->app) &&
         tally_client_get_reachable (tally_application_get_client (self->app));
}

/* The store banner and salvage (docs/architecture.md §10.9) */

/**
 * _tally_window_update_banners:
 * @self: a #TallyWindow
 *
 * Shows the offline banner and the store banner as the application's
 * state says: the store's problem with *Salvage…* for a damaged store,
 * or a salvage's result once one ran in this window.
 */
void
_tally_window_update_banners (TallyWindow *self)
{
  /* Before the store's opening was tried there is no problem to show:
   * asking for one would open the store here, on the main thread, maybe
   * before the first frame (the online state can change that early). A
   * salvage's result stays until the window closes: it names the new
   * store, which the damage message does not. */
  gboolean tried = _tally_application_store_tried (self->app);
  const char *problem = self->salvage_result != NULL ? self->salvage_result
                        : tried ? tally_application_get_store_problem (self->app)
                        : NULL;

  _tally_window_update_offline (self);

  if (problem != NULL)
    gtk_label_set_label (self->store_label, problem);
  _tally_window_reveal_banner (self->store_revealer, problem != NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->salvage_button),
                          self->salvage_result == NULL && tried &&
                          tally_application_get_damaged_store (self->app) != NULL);
}

/**
 * _tally_window_dup_salvage_message:
 * @report: what tally_store_salvage() copied and could not
 * @out_path: (type filename): the new store
 *
 * The store banner's text after a salvage: what was copied where, what
 * was lost, how to open the new store and, when some sessions lost part
 * of their conversation with the model (@report's `conversations_cut`),
 * that the model no longer sees all of their transcript.
 *
 * Returns: (transfer full): the text
 */
char *
_tally_window_dup_salvage_message (const TallySalvageReport *report,
                                   const char               *out_path)
{
  g_autofree char *events = NULL;
  g_autofree char *events_lost = NULL;
  GString *message;

  g_return_val_if_fail (report != NULL, NULL);
  g_return_val_if_fail (out_path != NULL, NULL);

  message = g_string_new (NULL);
  events = g_strdup_printf ("%" G_GUINT64_FORMAT, report->events_salvaged);
  events_lost = g_strdup_printf ("%" G_GUINT64_FORMAT, report->events_lost);
  /* How many events a damaged store held is not known: a session none of
   * whose events could be read, or the end of a session's log, leaves no
   * count. So the message says the events copied and, apart, those known
   * to be missing (gaps in a session's numbering), never "N of M". */
  if (report->events_lost > 0)
    /* TRANSLATORS: after salvaging a damaged session store: the new file,
     * the sessions copied of those the store named, the events copied and
     * the events known to be lost ("4 of 5 sessions, 120 events (at least
     * 7 lost)") */
    g_string_append_printf (message, _("Salvaged into %s: %u of %u sessions, %s events (at least %s lost)."),
                            out_path, report->sessions_salvaged,
                            report->sessions_salvaged + report->sessions_lost, events, events_lost);
  else
    /* TRANSLATORS: after salvaging a damaged session store: the new file,
     * the sessions copied of those the store named and the events copied
     * ("4 of 5 sessions, 120 events") */
    g_string_append_printf (message, _("Salvaged into %s: %u of %u sessions, %s events."),
                            out_path, report->sessions_salvaged,
                            report->sessions_salvaged + report->sessions_lost, events);
  g_string_append_c (message, ' ');
  /* TRANSLATORS: after "Salvaged into …" */
  g_string_append (message, _("Start Tally with --store and that file to use it."));
  if (report->conversations_cut > 0)
    {
      g_string_append_c (message, ' ');
      /* TRANSLATORS: after the salvage message; %u counts the salvaged
       * sessions whose conversation with the model lost a part */
      g_string_append_printf (message,
                              ngettext ("In %u session the model no longer sees the whole transcript: "
                                        "part of its conversation with the model was lost.",
                                        "In %u sessions the model no longer sees the whole transcript: "
                                        "part of their conversation with the model was lost.",
                                        report->conversations_cut),
                              report->conversations_cut);
    }
  return g_string_free (message, FALSE);
}

/* Salvage (docs/architecture.md §10.9): the readable sessions of the
 * damaged store go into a new file beside it; the damaged file is only
 * read, and the new store is opened by choice (--store). The application
 * is held while it runs, so closing the last window does not end the
 * process in the middle of it (which left a partial file and the
 * salvage's working copy behind).
 *
 * A salvage under way: the window that started it and the new store. */
typedef struct
{
  TallyWindow *window;
  char        *out_path;
} Salvage;

static void
salvage_free (Salvage *salvage)
{
  g_object_unref (salvage->window);
  g_free (salvage->out_path);
  g_free (salvage);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Salvage, salvage_free)

static void
salvage_done_cb (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(Salvage) salvage = user_data;
  TallyWindow *self = salvage->window;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  TallySalvageReport report = { 0 };

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (G_IS_ASYNC_RESULT (result));

  g_application_release (G_APPLICATION (self->app));
  gtk_widget_set_sensitive (GTK_WIDGET (self->salvage_button), TRUE);
  if (!tally_store_salvage_finish (result, &report, &error))
    {
      message = g_strdup_printf (_("Salvage failed: %s"), error->message);
      gtk_label_set_label (self->store_label, message);
      return;
    }
  g_free (self->salvage_result);
  self->salvage_result = _tally_window_dup_salvage_message (&report, salvage->out_path);
  _tally_window_update_banners (self);
}

static void
salvage_clicked_cb (TallyWindow *self)
{
  const char *damaged = tally_application_get_damaged_store (self->app);
  g_autofree char *dir = NULL;
  g_autofree char *name = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%dT%H%M%SZ");
  Salvage *salvage;

  g_assert (TALLY_IS_WINDOW (self));

  if (damaged == NULL)
    return;

  dir = g_path_get_dirname (damaged);
  name = g_strdup_printf ("tally-salvaged-%s.db", stamp);
  salvage = g_new0 (Salvage, 1);
  salvage->window = g_object_ref (self);
  salvage->out_path = g_build_filename (dir, name, NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->salvage_button), FALSE);
  g_application_hold (G_APPLICATION (self->app));
  tally_store_salvage_async (damaged, salvage->out_path, NULL, salvage_done_cb, salvage);
}

/**
 * _tally_window_errors_class_init:
 * @widget_class: the #TallyWindow class
 *
 * Installs `win.change-key` and the store banner's *Salvage…* handler.
 */
void
_tally_window_errors_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.change-key", NULL, change_key_activate);
  gtk_widget_class_bind_template_callback (widget_class, salvage_clicked_cb);
}
