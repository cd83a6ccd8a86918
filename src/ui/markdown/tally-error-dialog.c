/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The error dialog every widget that saves, opens or exports a file shows
 * when that fails: the tables' CSV, the chart row, the file chip, the
 * window's and the report preview's exports.
 */

#include "config.h"

#include "tally-error-dialog.h"

#include <adwaita.h>
#include <glib/gi18n.h>

/**
 * tally_error_dialog_show:
 * @owner: (nullable): the widget that failed, or its window; the dialog is
 *   modal over that window when @owner is in one, else it has no parent
 * @heading: what failed, already translated, e.g. "Could Not Save the
 *   Chart"
 * @message: why, e.g. a #GError's message
 *
 * Presents an #AdwMessageDialog with @heading, @message and one *Close*
 * response; it closes itself when answered.
 */
void
tally_error_dialog_show (GtkWidget  *owner,
                         const char *heading,
                         const char *message)
{
  GtkRoot *root = owner != NULL ? gtk_widget_get_root (owner) : NULL;
  GtkWidget *dialog;

  g_return_if_fail (owner == NULL || GTK_IS_WIDGET (owner));
  g_return_if_fail (heading != NULL);
  g_return_if_fail (message != NULL);

  dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading, message);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  gtk_window_present (GTK_WINDOW (dialog));
}
