/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-application.h"
#include "tally-notes-window.h"
#include "tally-store.h"
#include "tally-window-private.h"

/* win.database-notes: the editor of the analyst's notes about the
 * database the window has open (docs/notes.md). */

static void
notes_saved_cb (TallyNotesWindow *notes,
                TallyWindow      *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  tally_window_add_toast (self, self->session != NULL ?
                          _("Notes saved. The model gets them with your next message.") :
                          _("Notes saved. The model gets them with your first message."));
}

/**
 * _tally_window_dup_profile_store_dir:
 * @self: a #TallyWindow
 * @missing: the toast shown when the window has no database or the
 *   application no session store (plain text)
 *
 * The folder of the session store, where the profile folders of the
 * databases are (tally_database_profile_dir()): what the editors of a
 * database's profile files, the notes and the sensitive columns, are
 * opened with.
 *
 * Returns: (transfer full) (nullable) (type filename): the folder, or
 *   %NULL after showing @missing
 */
char *
_tally_window_dup_profile_store_dir (TallyWindow *self,
                                     const char  *missing)
{
  TallyStore *store = tally_application_get_store (self->app);

  g_assert (TALLY_IS_WINDOW (self));

  if (store == NULL || self->database == NULL)
    {
      tally_window_add_toast (self, missing);
      return NULL;
    }

  return g_path_get_dirname (tally_store_get_path (store));
}

/**
 * _tally_window_database_notes_activate:
 * @self: a #TallyWindow
 * @parameter: unused
 *
 * Opens the notes editor for the window's database, whose file lives in
 * the database's folder next to the session store.
 */
void
_tally_window_database_notes_activate (TallyWindow *self,
                                       GVariant    *parameter)
{
  g_autofree char *store_dir = NULL;
  TallyNotesWindow *notes;

  g_assert (TALLY_IS_WINDOW (self));

  store_dir = _tally_window_dup_profile_store_dir (self, _("The notes need a database and a session store."));
  if (store_dir == NULL)
    return;

  notes = tally_notes_window_new (GTK_WINDOW (self), store_dir, self->database);
  g_signal_connect_object (notes, "saved", G_CALLBACK (notes_saved_cb), self, 0);
  gtk_window_present (GTK_WINDOW (notes));
}
