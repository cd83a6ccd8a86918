/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-application.h"
#include "tally-ledger-dialog.h"
#include "tally-sensitive-dialog.h"
#include "tally-store.h"
#include "tally-window-private.h"

/* What leaves the machine (docs/ledger.md): win.sent-to-api shows the
 * session's ledger, win.sensitive-columns edits the database's list of
 * columns whose values are never sent. */

/**
 * _tally_window_sent_to_api_activate:
 * @self: a #TallyWindow
 * @parameter: unused
 *
 * Opens the "Sent to the API" dialog of the session shown.
 */
void
_tally_window_sent_to_api_activate (TallyWindow *self,
                                    GVariant    *parameter)
{
  TallyStore *store = tally_application_get_store (self->app);

  g_assert (TALLY_IS_WINDOW (self));

  if (store == NULL || self->session == NULL)
    return;

  gtk_window_present (GTK_WINDOW (tally_ledger_dialog_new (GTK_WINDOW (self), store,
                                                           tally_session_get_id (self->session))));
}

static void
sensitive_saved_cb (TallySensitiveDialog *dialog,
                    TallyWindow          *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  tally_window_add_toast (self, _("Sensitive columns saved. They apply from your next message."));
}

/**
 * _tally_window_sensitive_columns_activate:
 * @self: a #TallyWindow
 * @parameter: unused
 *
 * Opens the editor of the sensitive columns of the window's database,
 * whose file lives in the database's folder next to the session store.
 */
void
_tally_window_sensitive_columns_activate (TallyWindow *self,
                                          GVariant    *parameter)
{
  g_autofree char *store_dir = NULL;
  TallySensitiveDialog *dialog;

  g_assert (TALLY_IS_WINDOW (self));

  store_dir = _tally_window_dup_profile_store_dir (self, _("Sensitive columns need a database and a session store."));
  if (store_dir == NULL)
    return;

  dialog = tally_sensitive_dialog_new (GTK_WINDOW (self), store_dir, self->database);
  g_signal_connect_object (dialog, "saved", G_CALLBACK (sensitive_saved_cb), self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
}
