/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-ledger-dialog"

#include "config.h"

#include "tally-ledger-dialog.h"

#include <glib/gi18n.h>

#include "tally-event.h"
#include "tally-format.h"
#include "tally-json.h"
#include "tally-ledger.h"

/**
 * TallyLedgerDialog:
 *
 * "Sent to the API": what a session sent to the model, per turn and
 * request, read from the session's `request_sent` events (docs/ledger.md
 * §4): each request with its size, and under it each tool result it sent
 * for the first time with its rows, bytes, columns and redactions. The
 * events are read in a worker thread (tally_store_load_events_async()).
 */
struct _TallyLedgerDialog
{
  AdwWindow     parent_instance;

  /* Template widgets */
  GtkBox       *box;
  GtkLabel     *summary;

  AdwPreferencesGroup *group;   /* the turn being filled in */
  GCancellable *cancellable;
};

G_DEFINE_FINAL_TYPE (TallyLedgerDialog, tally_ledger_dialog, ADW_TYPE_WINDOW)

/* One expander per request, one row per tool result under it. */
static GtkWidget *
request_row (JsonObject *event,
             guint       number)
{
  JsonArray *results = tally_json_object_get_array (event, "results");
  guint n = results != NULL ? json_array_get_length (results) : 0;
  g_autofree char *bytes = tally_format_count (tally_json_object_get_int (event, "bytes", 0), TALLY_GROUPING_LOCALE);
  /* TRANSLATORS: a request to the API, its number in the turn and its size */
  g_autofree char *title = g_strdup_printf (_("Request %u · %s bytes"), number, bytes);
  GtkWidget *row;

  if (n == 0)
    {
      row = adw_action_row_new ();
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), _("No new tool results"));
    }
  else
    {
      g_autofree char *count = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u tool result",
                                                             "%u tool results", n), n);

      row = adw_expander_row_new ();
      adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), count);
    }
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);

  for (guint i = 0; i < n; i++)
    {
      JsonObject *result = json_array_get_object_element (results, i);
      g_autofree char *line = tally_ledger_dup_result_line (result);
      GtkWidget *child = adw_action_row_new ();

      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (child),
                                     tally_json_object_get_string (result, "tool_name", "?"));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (child), line);
      adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (child), 0);
      if (tally_json_object_get_int (result, "redactions", 0) > 0)
        adw_action_row_add_prefix (ADW_ACTION_ROW (child), gtk_image_new_from_icon_name ("changes-prevent-symbolic"));
      adw_expander_row_add_row (ADW_EXPANDER_ROW (row), child);
    }

  return row;
}

/* A group per turn, the turn's requests in it. */
static void
add_row_cb (JsonObject *event,
            guint       turn,
            guint       request,
            gpointer    user_data)
{
  TallyLedgerDialog *self = user_data;

  if (request == 0)
    {
      g_autofree char *title = g_strdup_printf (_("Turn %u"), turn);

      self->group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
      adw_preferences_group_set_title (self->group, title);
      adw_preferences_group_set_description (self->group, tally_event_get_text (event));
      gtk_box_append (self->box, GTK_WIDGET (self->group));
    }
  else if (self->group != NULL)
    adw_preferences_group_add (self->group, request_row (event, request));
}

static void
show_events (TallyLedgerDialog *self,
             GPtrArray         *events)
{
  TallyLedgerTotals totals;

  tally_ledger_get_totals (events, &totals);
  if (totals.requests == 0)
    {
      gtk_label_set_text (self->summary, _("This session sent nothing to the API."));
      return;
    }

  {
    g_autofree char *requests = tally_format_count (totals.requests, TALLY_GROUPING_LOCALE);
    g_autofree char *results = tally_format_count (totals.results, TALLY_GROUPING_LOCALE);
    g_autofree char *rows = tally_format_count (totals.rows, TALLY_GROUPING_LOCALE);
    g_autofree char *bytes = tally_format_count (totals.bytes, TALLY_GROUPING_LOCALE);
    g_autofree char *redactions = tally_format_count (totals.redactions, TALLY_GROUPING_LOCALE);
    /* TRANSLATORS: requests, tool results, rows, bytes and redacted values of a session */
    g_autofree char *text = g_strdup_printf (_("Requests: %s. Tool results sent: %s, with %s rows and %s bytes; "
                                               "%s values redacted."),
                                             requests, results, rows, bytes, redactions);

    gtk_label_set_text (self->summary, text);
  }

  tally_ledger_foreach (events, add_row_cb, self);
}

static void
events_loaded_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(TallyLedgerDialog) self = user_data;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;

  events = tally_store_load_events_finish (TALLY_STORE (object), result, NULL, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (events == NULL)
    {
      gtk_label_set_text (self->summary, error->message);
      return;
    }

  show_events (self, events);
}

static void
tally_ledger_dialog_dispose (GObject *object)
{
  TallyLedgerDialog *self = TALLY_LEDGER_DIALOG (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);

  G_OBJECT_CLASS (tally_ledger_dialog_parent_class)->dispose (object);
}

static void
tally_ledger_dialog_class_init (TallyLedgerDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_ledger_dialog_dispose;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/tallyapp/Tally/window/tally-ledger-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyLedgerDialog, box);
  gtk_widget_class_bind_template_child (widget_class, TallyLedgerDialog, summary);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
tally_ledger_dialog_init (TallyLedgerDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
}

/**
 * tally_ledger_dialog_new:
 * @parent: (nullable): the window it belongs to
 * @store: the session store
 * @session_id: the session whose ledger to show
 *
 * Creates the "Sent to the API" dialog of a session; it reads the
 * session's events in a worker thread and fills in when they arrive.
 *
 * Returns: (transfer none): the new dialog (owned by GTK's window list);
 *   present it with gtk_window_present()
 */
TallyLedgerDialog *
tally_ledger_dialog_new (GtkWindow  *parent,
                         TallyStore *store,
                         const char *session_id)
{
  TallyLedgerDialog *self;

  g_return_val_if_fail (TALLY_IS_STORE (store), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  self = g_object_new (TALLY_TYPE_LEDGER_DIALOG, "transient-for", parent, NULL);
  tally_store_load_events_async (store, session_id, self->cancellable, events_loaded_cb, g_object_ref (self));
  return self;
}
