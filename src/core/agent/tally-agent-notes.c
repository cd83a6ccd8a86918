/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include "tally-agent-private.h"
#include "tally-database-profile.h"
#include "tally-format.h"
#include "tally-pg-source.h"

#include <string.h>

/*
 * The analyst's notes about the database (docs/notes.md): what the data
 * does not say ("revenue excludes refunds"). They are read once, when the
 * session's first turn starts, and go into the system prompt, which must
 * stay byte-identical for the whole session so that the prompt cache keeps
 * hitting (docs/protocol.md §2.1). A later change of the notes file is
 * told to the model as a reminder with the next message instead, and the
 * `turn_started` event of that message records the text sent. A resumed
 * session takes both from its log (tally_agent_restore_notes()), never
 * from the file as it is now.
 */

/**
 * tally_agent_set_store_dir:
 * @self: a #TallyAgent
 * @store_dir: (nullable) (type filename): the folder of the session store
 *   that is open, or %NULL for none
 *
 * Says where the databases' profile folders are
 * (tally_database_profile_dir()), so the agent can read the analyst's
 * notes about the database. Without a store folder there are no notes.
 */
void
tally_agent_set_store_dir (TallyAgent *self,
                           const char *store_dir)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  g_free (self->store_dir);
  self->store_dir = g_strdup (store_dir);
}

/**
 * tally_agent_dup_profile_dir:
 * @self: a #TallyAgent
 *
 * The profile folder of the agent's database in the store folder, which
 * need not exist yet.
 *
 * Returns: (transfer full) (nullable) (type filename): the folder, or
 *   %NULL when no database or no store folder is set
 */
char *
tally_agent_dup_profile_dir (TallyAgent *self)
{
  g_autofree char *key = NULL;

  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);

  if (self->store_dir == NULL || self->database == NULL)
    return NULL;

  key = tally_pg_database_key (self->database);
  return tally_database_profile_dir (self->store_dir, key);
}

/**
 * tally_agent_get_notes:
 * @self: a #TallyAgent
 *
 * The notes that the session's system prompt holds: fixed when the first
 * turn started, or restored from the session's log.
 *
 * Returns: (transfer none) (nullable): the notes, or %NULL when the prompt
 *   holds none (or the session has not started)
 */
const char *
tally_agent_get_notes (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);

  return self->notes_prompt;
}

/* The notes as the model gets them: without trailing blank space; a file
 * of only blank space is no notes. Takes @text (transfer full). */
static char *
normalize_notes (char *text)
{
  if (text == NULL)
    return NULL;

  g_strchomp (text);
  if (text[0] == '\0')
    g_clear_pointer (&text, g_free);
  return text;
}

/**
 * tally_agent_restore_notes:
 * @self: a #TallyAgent
 * @in_prompt: (nullable): the notes of the session's system prompt, as its
 *   `session_created` event recorded them
 * @told: (nullable): the notes the model heard of last: the `notes` of the
 *   last `turn_started` event that has one, else @in_prompt
 *
 * Continues a resumed session's notes: the system prompt is rebuilt with
 * @in_prompt, and only a notes file that differs from @told is sent as a
 * reminder. Empty strings mean no notes.
 */
void
tally_agent_restore_notes (TallyAgent *self,
                           const char *in_prompt,
                           const char *told)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  self->notes_fixed = TRUE;
  g_free (self->notes_prompt);
  self->notes_prompt = normalize_notes (g_strdup (in_prompt));
  g_free (self->notes_told);
  self->notes_told = normalize_notes (g_strdup (told));
}

/* Reads the notes file of the agent's database; NULL without an error
 * when there is none. */
static char *
read_notes (TallyAgent  *self,
            GError     **error)
{
  g_autofree char *dir = tally_agent_dup_profile_dir (self);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = NULL;

  if (dir == NULL)
    return NULL;

  text = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &local_error);
  if (local_error != NULL)
    {
      g_set_error (error, local_error->domain, local_error->code,
                   "The notes about this database cannot be read: %s", local_error->message);
      return NULL;
    }

  text = normalize_notes (g_steal_pointer (&text));
  if (text != NULL && strlen (text) > TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES)
    {
      g_autofree char *size = tally_format_count (strlen (text), TALLY_GROUPING_COMMA);
      g_autofree char *limit = tally_format_count (TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES, TALLY_GROUPING_COMMA);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "The notes about this database are %s bytes long; at most %s bytes go to "
                   "the model. Shorten them (Database Notes… in the window, or tally-cli "
                   "--edit-notes).", size, limit);
      return NULL;
    }

  return g_steal_pointer (&text);
}

/* tally_agent_check_notes:
 * @self: a #TallyAgent
 * @reminder: (out) (transfer full) (optional) (nullable): the reminder to
 *   add to the next user message, or %NULL when the model needs none
 * @error: return location for a #GError
 *
 * Reads the notes file before a turn. Before the session's first turn the
 * notes become the system prompt's (for good); later, notes that differ
 * from the ones the model heard of last give a reminder, and are what the
 * model has heard of from then on.
 *
 * Returns: %TRUE when the turn can go on; %FALSE with @error set when the
 *   notes file cannot be read, is not UTF-8 or is longer than
 *   %TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES
 */
gboolean
tally_agent_check_notes (TallyAgent  *self,
                         char       **reminder,
                         GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *notes = read_notes (self, &local_error);

  if (reminder != NULL)
    *reminder = NULL;

  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (!self->notes_fixed && !self->session_announced)
    {
      self->notes_fixed = TRUE;
      self->notes_prompt = g_strdup (notes);
      self->notes_told = g_steal_pointer (&notes);
      return TRUE;
    }

  /* A resumed session whose notes were not restored from its log: its
   * prompt is taken to hold none, and the file's go as a reminder. */
  self->notes_fixed = TRUE;

  if (g_strcmp0 (notes, self->notes_told) == 0)
    return TRUE;

  if (reminder != NULL)
    *reminder = notes == NULL ?
      g_strdup ("<system-reminder>The analyst has removed their notes about this database. "
                "Disregard the notes in your instructions from now on.</system-reminder>") :
      g_strdup_printf ("<system-reminder>The analyst has changed their notes about this database. "
                       "From now on these notes replace the ones in your instructions:\n"
                       "<notes>\n%s\n</notes></system-reminder>", notes);
  g_free (self->notes_told);
  self->notes_told = g_steal_pointer (&notes);
  return TRUE;
}
