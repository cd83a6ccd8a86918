/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "tally-error-banner.h"
#include "tally-json.h"

/**
 * TallyErrorBanner:
 *
 * An error in the transcript, styled like a banner: what went wrong, the
 * kind of failure and the request id (which the analyst can copy into a
 * support request), and a Retry button when the same request may be sent
 * again (`retryable` in the `error` event). Retry activates
 * `session.retry` with the turn id of the failed turn, which the window
 * installs (docs/architecture.md §3.2); nothing is relayed through the
 * rows above the banner.
 *
 * Two errors offer a way out through an action button instead: a key the
 * API refused (kind `http`, status 401 or 403) opens the preferences, where
 * the key is kept (`app.preferences`), and a reached spend cap (kind
 * `budget`) says what the session cost and raises the cap for this session
 * (`win.raise-cost-cap` with the new cap in US dollars, docs/protocol.md
 * §12.4).
 */

struct _TallyErrorBanner
{
  TallyBlockWidget parent_instance;

  GtkLabel   *message_label;
  GtkLabel   *meta_label;
  GtkButton  *retry_button;
  GtkButton  *action_button;

};

G_DEFINE_FINAL_TYPE (TallyErrorBanner, tally_error_banner, TALLY_TYPE_BLOCK_WIDGET)

static const char *
kind_title (const char *kind)
{
  if (g_strcmp0 (kind, "http") == 0)
    return _("Server error");
  if (g_strcmp0 (kind, "stream") == 0)
    return _("Error during the reply");
  if (g_strcmp0 (kind, "network") == 0)
    return _("Network error");
  if (g_strcmp0 (kind, "stalled") == 0)
    return _("The reply stalled");
  if (g_strcmp0 (kind, "tool") == 0)
    return _("Tool error");
  if (g_strcmp0 (kind, "input") == 0)
    return _("Input error");
  if (g_strcmp0 (kind, "store") == 0)
    return _("Storage error");
  if (g_strcmp0 (kind, "budget") == 0)
    return _("Spend cap reached");
  return NULL;
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

  turn_id = tally_block_get_turn_id (block);
  gtk_widget_activate_action (GTK_WIDGET (self), "session.retry", "s", turn_id != NULL ? turn_id : "");
}

static void
sync_banner (TallyErrorBanner *self)
{
  g_autoptr(GString) meta = NULL;
  g_autofree char *accessible = NULL;
  g_autofree char *budget_message = NULL;
  JsonObject *details = NULL;
  const char *message = NULL;
  const char *kind = NULL;
  const char *request_id;
  const char *title;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) != NULL)
    {
      details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));
      message = tally_block_get_text (TALLY_BLOCK_WIDGET_BLOCK (self));
      kind = tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self));
    }
  if (message == NULL || message[0] == '\0')
    message = _("Something went wrong");

  meta = g_string_new (NULL);
  title = kind_title (kind);
  if (title != NULL)
    g_string_append (meta, title);
  else if (kind != NULL)
    g_string_append (meta, kind);

  request_id = tally_json_object_get_string (details, "request_id", NULL);
  if (request_id != NULL && request_id[0] != '\0')
    {
      if (meta->len > 0)
        g_string_append (meta, " · ");
      /* Translators: the API's id for the failed request */
      g_string_append_printf (meta, _("Request ID %s"), request_id);
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
          message = budget_message;
          /* Translators: %.2f is the new cap in US dollars */
          label = g_strdup_printf (_("_Raise Cap to $%.2f"), spent + cap);
          gtk_button_set_label (self->action_button, label);
          gtk_actionable_set_action_target_value (GTK_ACTIONABLE (self->action_button),
                                                  g_variant_new_double (spent + cap));
          gtk_actionable_set_action_name (GTK_ACTIONABLE (self->action_button), "win.raise-cost-cap");
          gtk_widget_set_visible (GTK_WIDGET (self->action_button), TRUE);
        }
    }
  else if (g_strcmp0 (kind, "http") == 0 &&
           (tally_json_object_get_double (details, "status", 0) == 401 || tally_json_object_get_double (details, "status", 0) == 403))
    {
      g_string_prepend (meta, " · ");
      g_string_prepend (meta, _("The API key was refused"));
      gtk_button_set_label (self->action_button, _("Change API _Key…"));
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->action_button), "app.preferences");
      gtk_widget_set_visible (GTK_WIDGET (self->action_button), TRUE);
    }

  gtk_label_set_text (self->message_label, message);
  gtk_label_set_text (self->meta_label, meta->str);
  gtk_widget_set_visible (GTK_WIDGET (self->meta_label), meta->len > 0);
  gtk_widget_set_visible (GTK_WIDGET (self->retry_button), tally_json_object_get_bool (details, "retryable", FALSE));

  /* Translators: an error in the transcript, for screen readers */
  accessible = g_strdup_printf (_("Error: %s"), message);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, meta->str,
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

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-error-banner.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, message_label);
  gtk_widget_class_bind_template_child (widget_class, TallyErrorBanner, meta_label);
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
 * Returns: (transfer none): the message shown
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
 * Returns: (transfer none): the line under the message: the kind of error
 *   and the request id, e.g. "Network error · Request ID req_01"
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
 *   "Change API Key…" (action `app.preferences`) for a refused key, "Raise
 *   Cap to $…" (action `win.raise-cost-cap`) for a reached spend cap;
 *   hidden for other errors
 */
GtkButton *
tally_error_banner_get_action_button (TallyErrorBanner *self)
{
  g_return_val_if_fail (TALLY_IS_ERROR_BANNER (self), NULL);
  return self->action_button;
}
