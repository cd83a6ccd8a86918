/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-application-private.h"
#include "tally-pg-source.h"
#include "tally-session-row.h"
#include "tally-window-private.h"

/*
 * What the window says about the session it shows: the title in the
 * header bar (and the window's title), the database under it, the title
 * popover's database and workspace rows, and the empty page's description.
 * Part of TallyWindow (tally-window.c), split from it by job.
 */

static char *
display_path (const char *path)
{
  const char *home = g_get_home_dir ();

  if (path == NULL)
    return g_strdup ("");
  if (home != NULL && g_str_has_prefix (path, home) && path[strlen (home)] == G_DIR_SEPARATOR)
    return g_strconcat ("~", path + strlen (home), NULL);
  return g_strdup (path);
}

/* What the header and the popover call the database: a file's name, or
 * for a PostgreSQL connection its database's name (else the string
 * without its password). Never a password. */
static char *
dup_database_name (const char *database)
{
  g_autoptr(TallyPgSource) source = NULL;
  char *name = NULL;

  if (!tally_pg_conninfo_is (database))
    return g_path_get_basename (database != NULL ? database : "");

  source = tally_pg_source_get_shared (database, NULL);
  if (source != NULL)
    name = tally_pg_source_dup_database_name (source);
  return name != NULL ? name : tally_pg_conninfo_redact (database);
}

/* The popover's line: a file's path, or a connection without its
 * password. */
static char *
dup_database_display (const char *database)
{
  if (tally_pg_conninfo_is (database))
    return tally_pg_conninfo_redact (database);
  return display_path (database);
}

static gboolean
is_default_database (const char *path)
{
  return g_strcmp0 (path, tally_application_get_default_database ()) == 0;
}

#define TITLE_CHARS 20

/**
 * _tally_window_get_session_title:
 * @self: a #TallyWindow
 *
 * The shown session's title as the analyst last named it: the store's
 * title once the sidebar lists the session (a rename changes only that
 * one), else the title of its `session_created` event, else the
 * provisional row's question.
 *
 * Returns: (transfer none) (nullable): the title, %NULL or empty when
 *   there is none
 */
const char *
_tally_window_get_session_title (TallyWindow *self)
{
  TallySessionRow *row;
  const char *title;

  if (self->session == NULL)
    return NULL;

  row = _tally_window_find_row (self, tally_session_get_id (self->session));
  /* A provisional row (_tally_window_add_provisional_row()) has no turns
   * yet and holds the whole question, not the session's title. */
  if (row != NULL && tally_session_row_get_info (row)->turns > 0 &&
      tally_session_row_get_title (row) != NULL && *tally_session_row_get_title (row) != '\0')
    return tally_session_row_get_title (row);
  title = tally_transcript_get_title (tally_session_get_transcript (self->session));
  if ((title == NULL || *title == '\0') && row != NULL)
    title = tally_session_row_get_title (row);
  return title;
}


/**
 * _tally_window_update_title:
 * @self: a #TallyWindow
 *
 * Shows the session's title (at most TITLE_CHARS characters in the
 * header, the whole of it in the tooltip and the window's title) and the
 * database's name under it.
 */
void
_tally_window_update_title (TallyWindow *self)
{
  const char *title = _tally_window_get_session_title (self);
  g_autofree char *database = dup_database_name (self->database);

  if (title == NULL || *title == '\0')
    title = self->session != NULL ? _("Untitled Session") : _("New Session");

  /* The header shows at most TITLE_CHARS characters: the title's natural
   * width decides how much room the header's middle leaves for the pickers
   * beside it, and a long question would push them out of a window of an
   * ordinary width (issue 14 §6). The whole title is in the tooltip. */
  if (g_utf8_strlen (title, -1) > TITLE_CHARS)
    {
      g_autofree char *head = g_utf8_substring (title, 0, TITLE_CHARS - 1);
      g_autofree char *shown = g_strconcat (g_strchomp (head), "…", NULL);

      adw_window_title_set_title (self->window_title, shown);
    }
  else
    {
      adw_window_title_set_title (self->window_title, title);
    }
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->title_button), title);
  /* What window lists and screen readers announce. */
  gtk_window_set_title (GTK_WINDOW (self), title);
  adw_window_title_set_subtitle (self->window_title, database);
}

/**
 * _tally_window_update_context_rows:
 * @self: a #TallyWindow
 *
 * Says the session's database and workspace in the title popover's rows,
 * once the popover is built (_tally_window_ensure_context_popover()).
 */
void
_tally_window_update_context_rows (TallyWindow *self)
{
  g_autofree char *database = NULL;
  g_autofree char *workspace = NULL;

  if (self->context_popover == NULL)
    return;

  database = dup_database_display (self->database);
  if (self->workspace != NULL)
    workspace = display_path (self->workspace);
  else
    {
      g_autofree char *parent = g_build_filename (g_get_user_data_dir (), "tally", "workspaces", NULL);
      g_autofree char *shown = display_path (parent);

      /* TRANSLATORS: %s is a folder such as ~/.local/share/tally/workspaces */
      workspace = g_strdup_printf (_("A new folder in %s, made when the session starts"), shown);
    }

  adw_action_row_set_subtitle (self->database_row, database);
  adw_action_row_set_subtitle (self->workspace_row, workspace);
}

/**
 * _tally_window_update_context:
 * @self: a #TallyWindow
 *
 * Shows the session's database and workspace where the window says them:
 * the title, the popover's rows, the empty page's description and
 * suggestions (only for the Beanline sample), and the actions that depend
 * on them.
 */
void
_tally_window_update_context (TallyWindow *self)
{
  g_autofree char *empty_description = NULL;
  g_autofree char *database_name = dup_database_name (self->database);

  _tally_window_update_context_rows (self);

  /* TRANSLATORS: %s is a database file name such as beanline.db */
  empty_description = g_strdup_printf (_("Tally queries %s read-only and shows every step it takes. "
                                         "Type a question below, or start with one of these."),
                                       database_name);
  if (!is_default_database (self->database))
    {
      g_free (empty_description);
      empty_description = g_strdup_printf (_("Tally queries %s read-only and shows every step it takes. "
                                             "Type a question below."), database_name);
    }
  gtk_label_set_text (self->empty_description, empty_description);
  gtk_widget_set_visible (GTK_WIDGET (self->suggestions_box), is_default_database (self->database));

  _tally_window_update_title (self);
  _tally_window_update_actions (self);
}
