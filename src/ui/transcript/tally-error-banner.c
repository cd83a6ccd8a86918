/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "tally-centring-layout.h"
#include "tally-error-banner.h"
#include "tally-json.h"

/**
 * TallyErrorBanner:
 *
 * An error in the transcript, in the analyst's words (docs/architecture.md
 * §4.2): a heading that says what happened ("Could not reach the server",
 * "Your API key was refused"), a line that says what to do, and a way to
 * do it. The error's own text and the request id (which the analyst can
 * copy into a support request) sit in a collapsed Details expander and the
 * heading's tooltip.
 *
 * *Retry* activates `session.retry` with the turn id of the failed turn,
 * which the window installs (docs/architecture.md §3.2) and which runs that
 * turn again in place. It is offered for failures that may pass (the
 * connection, a stalled or cut reply, a busy or failing server, a refused
 * key once it is changed) and only once: when the turn has been retried
 * (`retried` in the block's details) the button is gone.
 *
 * Two errors offer a way out through an action button: a key the API
 * refused (kind `http`, status 401 or 403) offers *Change Key…*
 * (`win.change-key`: the preferences, key field focused), and a reached
 * spend cap (kind `budget`) says what the session cost and raises the cap
 * for this session (`win.raise-cost-cap` with the new cap in US dollars,
 * docs/protocol.md §12.4).
 */

struct _TallyErrorBanner
{
  TallyBlockWidget parent_instance;

  GtkLabel    *message_label;
  GtkLabel    *meta_label;
  GtkExpander *details_expander;
  GtkLabel    *details_label;
  GtkButton   *retry_button;
  GtkButton   *action_button;
};

G_DEFINE_FINAL_TYPE (TallyErrorBanner, tally_error_banner, TALLY_TYPE_BLOCK_WIDGET)

/* What to do about a busy or failing server, after @attempts requests
 * (the error event's `attempts`, docs/architecture.md §4.6; 0 when a log
 * of an older build has none). Retries are claimed only when there were
 * some: `x-should-retry: false` forbids them (docs/protocol.md §11.1). */
static char *
dup_server_advice (guint attempts)
{
  if (attempts > 1)
    /* Translators: %u is how many times Tally sent the request, always
     * more than one */
    return g_strdup_printf (ngettext ("Tally tried %u time. Wait a moment, then retry.",
                                      "Tally tried %u times. Wait a moment, then retry.",
                                      attempts),
                            attempts);
  return g_strdup (_("Wait a moment, then retry."));
}

/* What the analyst reads: a heading and what to do about it, for an
 * error of @kind (and its HTTP @status, 0 when none) after @attempts
 * requests. Advice made for this error alone is also returned in
 * @owned, for the caller to free. */
static void
describe (const char  *kind,
          guint        status,
          gboolean     connected,
          guint        attempts,
          const char **heading,
          const char **advice,
          char       **owned)
{
  *heading = NULL;
  *advice = NULL;
  *owned = NULL;

  if (g_strcmp0 (kind, "http") == 0)
    {
      if (status == 401 || status == 403)
        {
          *heading = _("Your API key was refused");
          *advice = _("The server did not accept the key. Change it, then retry.");
        }
      else if (status == 429)
        {
          *heading = _("Too many requests right now");
          *advice = _("The API limits how much can be sent per minute. Wait a moment, then retry.");
        }
      else if (status == 529)
        {
          *heading = _("The server is overloaded");
          *advice = *owned = dup_server_advice (attempts);
        }
      else if (status >= 500)
        {
          *heading = _("The server had a problem");
          *advice = *owned = dup_server_advice (attempts);
        }
      else
        {
          *heading = _("The server turned the request down");
          *advice = _("The details below say why.");
        }
    }
  else if (g_strcmp0 (kind, "network") == 0)
    {
      if (connected)
        {
          *heading = _("The connection was lost during the reply");
          *advice = _("The unfinished reply is kept here. Retry to ask again.");
        }
      else
        {
          *heading = _("Could not reach the server");
          *advice = _("Check your connection, then retry.");
        }
    }
  else if (g_strcmp0 (kind, "stalled") == 0)
    {
      *heading = _("The reply stalled");
      *advice = _("Nothing arrived for a while, so Tally stopped waiting. Retry to ask again.");
    }
  else if (g_strcmp0 (kind, "stream") == 0)
    {
      *heading = _("The reply broke off");
      *advice = _("The server reported an error during the reply. Retry to ask again.");
    }
  else if (g_strcmp0 (kind, "tool") == 0)
    *heading = _("A tool failed");
  else if (g_strcmp0 (kind, "input") == 0)
    *heading = _("The message could not be sent");
  else if (g_strcmp0 (kind, "budget") == 0)
    *heading = _("Spend cap reached");
}

/* Whether Retry may run the failed turn again: failures that may pass. */
static gboolean
can_retry (const char *kind,
           guint       status,
           JsonObject *details)
{
  if (tally_json_object_get_bool (details, "retried", FALSE))
    return FALSE;
  if (tally_json_object_get_bool (details, "retryable", FALSE))
    return TRUE;
  if (g_strcmp0 (kind, "network") == 0 || g_strcmp0 (kind, "stalled") == 0 || g_strcmp0 (kind, "stream") == 0)
    return TRUE;
  return g_strcmp0 (kind, "http") == 0 &&
         (status == 401 || status == 403 || status == 408 || status == 409 || status == 429 || status >= 500);
}

static void
retry_clicked_cb (TallyErrorBanner *self)
{
  TallyBlock *block;
  const char *turn_id;

  g_assert (TALLY_IS_ERROR_BANNER (self));

  block = TALLY_BLOCK_WIDGET_BLOCK (self);
  if (block == NULL)
    return;

  /* Once: the button goes before the retry has even started. */
  gtk_widget_set_visible (GTK_WIDGET (self->retry_button), FALSE);
  turn_id = tally_block_get_turn_id (block);
  gtk_widget_activate_action (GTK_WIDGET (self), "session.retry", "s", turn_id != NULL ? turn_id : "");
}

static void
sync_banner (TallyErrorBanner *self)
{
  g_autoptr(GString) technical = NULL;
  g_autofree char *accessible = NULL;
  g_autofree char *budget_message = NULL;
  g_autofree char *server_advice = NULL;
  JsonObject *details = NULL;
  const char *message = NULL;
  const char *kind = NULL;
  const char *request_id;
  const char *heading;
  const char *advice;
  guint status;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) != NULL)
    {
      details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));
      message = tally_block_get_text (TALLY_BLOCK_WIDGET_BLOCK (self));
      kind = tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self));
    }
  if (message != NULL && message[0] == '\0')
    message = NULL;

  status = (guint) tally_json_object_get_int (details, "status", 0);
  describe (kind, status, tally_json_object_get_bool (details, "connected", FALSE),
            (guint) CLAMP (tally_json_object_get_int (details, "attempts", 0), 0, G_MAXUINT),
            &heading, &advice, &server_advice);

  /* The error's own words and the request id, for the curious and for
   * support. */
  technical = g_string_new (message);
  request_id = tally_json_object_get_string (details, "request_id", NULL);
  if (request_id != NULL && request_id[0] != '\0')
    {
      if (technical->len > 0)
        g_string_append_c (technical, '\n');
      /* Translators: the API's id for the failed request */
      g_string_append_printf (technical, _("Request ID %s"), request_id);
    }

  /* The way out of a refused key or a reached spend cap. */
  gtk_widget_set_visible (GTK_WIDGET (self->action_button), FALSE);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->action_button), NULL);
  if (g_strcmp0 (kind, "budget") == 0)
    {
      double spent = tally_json_object_get_double (details, "spent_usd", 0);
      double cap = tally_json_object_get_double (details, "max_cost_usd", 0);

      if (cap > 0)
        {
          g_autofree char *label = NULL;

          /* Translators: amounts in US dollars */
          budget_message = g_strdup_printf (_("This session has cost $%.4f, which reached its spend cap of "
                                              "$%.2f. Nothing more was sent."), spent, cap);
          advice = budget_message;
          /* Translators: %.2f is the new cap in US dollars */
          label = g_strdup_printf (_("_Raise Cap to $%.2f"), spent + cap);
          gtk_button_set_label (self->action_button, label);
          gtk_actionable_set_action_target_value (GTK_ACTIONABLE (self->action_button),
                                                  g_variant_new_double (spent + cap));
          gtk_actionable_set_action_name (GTK_ACTIONABLE (self->action_button), "win.raise-cost-cap");
          gtk_widget_set_visible (GTK_WIDGET (self->action_button), TRUE);
        }
    }
  else if (g_strcmp0 (kind, "http") == 0 && (status == 401 || status == 403))
    {
      gtk_button_set_label (self->action_button, _("Change _Key…"));
      gtk_actionable_set_action_target_value (GTK_ACTIONABLE (self->action_button), NULL);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->action_button), "win.change-key");
      gtk_widget_set_visible (GTK_WIDGET (self->action_button), TRUE);
    }

  /* An error Tally has no words of its own for says what it says. */
  if (heading == NULL)
    {
      heading = message != NULL ? message : _("Something went wrong");
      g_string_truncate (technical, 0);
      if (request_id != NULL && request_id[0] != '\0')
        g_string_append_printf (technical, _("Request ID %s"), request_id);
    }

  gtk_label_set_text (self->message_label, heading);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->message_label), technical->len > 0 ? technical->str : NULL);
  gtk_label_set_text (self->meta_label, advice != NULL ? advice : "");
  gtk_widget_set_visible (GTK_WIDGET (self->meta_label), advice != NULL);
  gtk_label_set_text (self->details_label, technical->str);
  gtk_widget_set_visible (GTK_WIDGET (self->details_expander), technical->len > 0);
  gtk_widget_set_visible (GTK_WIDGET (self->retry_button), can_retry (kind, status, details));

  /* Translators: an error in the transcript, for screen readers */
  accessible = g_strdup_printf (_("Error: %s"), heading);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, advice != NULL ? advice : "",
                                  -1);
}

/* Binding and unbinding both show the current block. */
static void
tally_error_banner_bind (TallyBlockWidget *widget,
                         TallyBlock       *previous)
{
  TallyErrorBanner *self = TALLY_ERROR_BANNER (widget);

  sync_banner (self);
}

static void
tally_error_banner_dispose (GObject *object)
{
  TallyErrorBanner *self = (TallyErrorBanner *)object;
  GtkWidget *child;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_ERROR_BANNER);

  /* The icon and the text box are not bound, so not unparented above. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);

  G_OBJECT_CLASS (tally_error_banner_parent_class)->dispose (object);
}

static void
tally_error_banner_class_init (TallyErrorBannerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_error_banner_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_error_banner_bind;

  g_type_ensure (TALLY_TYPE_CENTRING_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-error-banner.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, message_label);
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, meta_label);
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, details_expander);
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, details_label);
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, retry_button);
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, action_button);
  gtk_widget_class_bind_template_callback (widget_class, retry_clicked_cb);
  gtk_widget_class_set_css_name (widget_class, "tallyerrorbanner");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_ALERT);
}

static void
tally_error_banner_init (TallyErrorBanner *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify", G_CALLBACK (sync_banner), self);
}

/**
 * tally_error_banner_new:
 *
 * Creates an empty banner for a %TALLY_BLOCK_ERROR block.
 *
 * Returns: (transfer floating): a new #TallyErrorBanner
 */
GtkWidget *
tally_error_banner_new (void)
{
  return g_object_new (TALLY_TYPE_ERROR_BANNER, NULL);
}


/**
 * tally_error_banner_get_message:
 * @self: a #TallyErrorBanner
 *
 * Returns: (transfer none): the heading shown: what happened, in the
 *   analyst's words (e.g. "Could not reach the server"), or the error's
 *   own message when Tally has no words for its kind
 */
const char *
tally_error_banner_get_message (TallyErrorBanner *self)
{
  g_return_val_if_fail (TALLY_IS_ERROR_BANNER (self), NULL);
  return gtk_label_get_text (self->message_label);
}

/**
 * tally_error_banner_get_meta:
 * @self: a #TallyErrorBanner
 *
 * Returns: (transfer none): the line under the heading: what to do, e.g.
 *   "Check your connection, then retry."; empty when there is no advice
 */
const char *
tally_error_banner_get_meta (TallyErrorBanner *self)
{
  g_return_val_if_fail (TALLY_IS_ERROR_BANNER (self), NULL);
  return gtk_label_get_text (self->meta_label);
}

/**
 * tally_error_banner_get_retry_button:
 * @self: a #TallyErrorBanner
 *
 * Returns: (transfer none): the Retry button (visible only for a
 *   retryable error)
 */
GtkButton *
tally_error_banner_get_retry_button (TallyErrorBanner *self)
{
  g_return_val_if_fail (TALLY_IS_ERROR_BANNER (self), NULL);
  return self->retry_button;
}

/**
 * tally_error_banner_get_action_button:
 * @self: a #TallyErrorBanner
 *
 * Returns: (transfer none): the button that offers a way out of the error:
 *   "Change Key…" (action `win.change-key`) for a refused key, "Raise
 *   Cap to $…" (action `win.raise-cost-cap`) for a reached spend cap;
 *   hidden for other errors
 */
GtkButton *
tally_error_banner_get_action_button (TallyErrorBanner *self)
{
  g_return_val_if_fail (TALLY_IS_ERROR_BANNER (self), NULL);
  return self->action_button;
}

/**
 * tally_error_banner_get_details:
 * @self: a #TallyErrorBanner
 *
 * Returns: (transfer none): the technical text in the Details expander:
 *   the error's own message and "Request ID …", one per line; empty when
 *   there is none
 */
const char *
tally_error_banner_get_details (TallyErrorBanner *self)
{
  g_return_val_if_fail (TALLY_IS_ERROR_BANNER (self), NULL);
  return gtk_label_get_text (self->details_label);
}
