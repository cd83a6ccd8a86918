/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "tally-cli-private.h"
#include "tally-database-profile.h"
#include "tally-format.h"
#include "tally-json.h"
#include "tally-pg-source.h"

/* --notes and --edit-notes FILE: the analyst's notes about --db, kept in
 * the database's folder next to the store (docs/notes.md). */

/* Reads the new notes: a file, or stdin for "-". */
static char *
read_new_notes (const char  *file,
                GError     **error)
{
  const char *path = g_str_equal (file, "-") ? "/dev/stdin" : file;
  g_autofree char *text = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &text, &length, error))
    return NULL;

  if (!g_utf8_validate_len (text, length, NULL) || strlen (text) != length)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("%s is not UTF-8 text"), file);
      return NULL;
    }
  if (length > TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES)
    {
      g_autofree char *size = tally_format_count (length, TALLY_GROUPING_LOCALE);
      g_autofree char *limit = tally_format_count (TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES, TALLY_GROUPING_LOCALE);

      /* TRANSLATORS: the first %s is a file, then two numbers of bytes */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("%s holds %s bytes; notes may hold at most %s"), file, size, limit);
      return NULL;
    }

  return g_steal_pointer (&text);
}

static int
edit_notes (const char *store_dir,
            const char *key,
            const char *file)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *notes = read_new_notes (file, &error);
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;

  if (notes == NULL)
    {
      g_printerr (_("tally-cli: cannot read the new notes: %s\n"), error->message);
      return EXIT_FAILED;
    }

  dir = tally_database_profile_ensure_dir (store_dir, key, &error);
  if (dir == NULL || !tally_database_profile_write (dir, TALLY_DATABASE_PROFILE_NOTES, notes, &error))
    {
      g_printerr (_("tally-cli: cannot save the notes: %s\n"), error->message);
      return EXIT_FAILED;
    }

  path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  /* TRANSLATORS: %s is the notes file */
  g_printerr (_("Saved the notes in %s. Sessions that are open get them with their next message.\n"), path);
  return EXIT_DONE;
}

static int
print_notes (const char *store_dir,
             const char *key,
             gboolean    json)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tally_database_profile_dir (store_dir, key);
  g_autofree char *path = g_build_filename (dir, TALLY_DATABASE_PROFILE_NOTES, NULL);
  g_autofree char *notes = tally_database_profile_read (dir, TALLY_DATABASE_PROFILE_NOTES, &error);

  if (error != NULL)
    {
      g_printerr (_("tally-cli: cannot read the notes: %s\n"), error->message);
      return EXIT_FAILED;
    }

  if (json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "database", key);
      json_object_set_string_member (object, "path", path);
      tally_json_object_set_string_or_null (object, "notes", notes);
      tally_cli_print_json_line (object);
    }
  else
    {
      g_print ("%s\n", path);
      if (notes != NULL && notes[0] != '\0')
        g_print ("\n%s%s", notes, g_str_has_suffix (notes, "\n") ? "" : "\n");
      else
        g_printerr (_("No notes about this database yet: write them with --edit-notes FILE, or with "
                      "Database Notes… in the window.\n"));
    }
  tally_cli_out_flush ();
  return EXIT_DONE;
}

/**
 * tally_cli_run_notes:
 * @store_path: (type filename): the session store file (`--store` or the
 *   default); the notes live in the folder beside it
 * @database: the database (`--db`): a SQLite path or a PostgreSQL
 *   connection string, already checked by the caller
 * @edit_file: (nullable) (type filename): with `--edit-notes`, the file
 *   whose text replaces the notes (`-` for stdin); %NULL prints them
 * @json: with `--json`, print one JSON object instead of the text
 *
 * Runs `--notes` (the notes file's path, a blank line and the notes on
 * stdout) or `--edit-notes FILE` (a line on stderr saying where they went).
 * Needs no network; PostgreSQL is not connected to.
 *
 * Returns: the exit status: 0 done, 1 when the notes or @edit_file cannot
 *   be read or written (the message on stderr)
 */
int
tally_cli_run_notes (const char *store_path,
                     const char *database,
                     const char *edit_file,
                     gboolean    json)
{
  g_autofree char *store_dir = g_path_get_dirname (store_path);
  g_autofree char *key = tally_pg_database_key (database);

  if (edit_file != NULL)
    return edit_notes (store_dir, key, edit_file);
  return print_notes (store_dir, key, json);
}
