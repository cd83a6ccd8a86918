/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-util"

#include "config.h"

#include "tally-database-profile.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

/*
 * A database's profile: a folder next to the session store, one per
 * database, holding what the analyst says about that database (the notes
 * of docs/notes.md, the sensitive columns). The folder is named by a hash
 * of the database's key, so a connection string with slashes or a long
 * path still makes one short, safe file name.
 */

/* How many hex digits of the key's SHA-256 name the folder: 64 bits, so
 * two databases of one analyst do not meet by chance. */
#define KEY_HASH_DIGITS 16

/**
 * tally_database_profile_dir:
 * @store_dir: (type filename): the folder of the session store file that
 *   is open (for the default store `$XDG_DATA_HOME/tally`)
 * @database_key: the database as its sessions record it:
 *   tally_pg_database_key() of what the analyst opened (an absolute
 *   SQLite path, or a PostgreSQL connection string without its password)
 *
 * Computes the profile folder of a database:
 * `<store_dir>/databases/<the first 16 hex digits of the SHA-256 of
 * @database_key>`. The same key always gives the same folder; nothing is
 * created or read.
 *
 * Returns: (transfer full) (type filename): the folder's path
 */
char *
tally_database_profile_dir (const char *store_dir,
                            const char *database_key)
{
  g_autofree char *digest = NULL;

  g_return_val_if_fail (store_dir != NULL, NULL);
  g_return_val_if_fail (database_key != NULL, NULL);

  digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, database_key, -1);
  digest[KEY_HASH_DIGITS] = '\0';
  return g_build_filename (store_dir, "databases", digest, NULL);
}

/* Makes a profile folder and its parents, private to the analyst. */
static gboolean
make_dir (const char  *dir,
          GError     **error)
{
  int saved_errno;

  if (g_mkdir_with_parents (dir, 0700) == 0)
    return TRUE;

  saved_errno = errno;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
               "Cannot make the database's folder %s: %s", dir, g_strerror (saved_errno));
  return FALSE;
}

/**
 * tally_database_profile_ensure_dir:
 * @store_dir: (type filename): the folder of the session store file
 * @database_key: the database's key, as for tally_database_profile_dir()
 * @error: return location for a #GError
 *
 * Makes the profile folder of a database (mode 0700, its parents as
 * needed) and writes its %TALLY_DATABASE_PROFILE_KEY_FILE, which holds
 * @database_key followed by a newline, when it is missing or different.
 * Call it to get the folder before tally_database_profile_write().
 *
 * Returns: (transfer full) (type filename) (nullable): the folder's path;
 *   %NULL with @error set (%G_FILE_ERROR) when the folder or its key file
 *   cannot be written
 */
char *
tally_database_profile_ensure_dir (const char  *store_dir,
                                   const char  *database_key,
                                   GError     **error)
{
  g_autofree char *dir = NULL;
  g_autofree char *key_path = NULL;
  g_autofree char *wanted = NULL;
  g_autofree char *stored = NULL;

  g_return_val_if_fail (store_dir != NULL, NULL);
  g_return_val_if_fail (database_key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  dir = tally_database_profile_dir (store_dir, database_key);
  if (!make_dir (dir, error))
    return NULL;

  key_path = g_build_filename (dir, TALLY_DATABASE_PROFILE_KEY_FILE, NULL);
  wanted = g_strconcat (database_key, "\n", NULL);
  if (g_file_get_contents (key_path, &stored, NULL, NULL) && g_strcmp0 (stored, wanted) == 0)
    return g_steal_pointer (&dir);

  if (!g_file_set_contents_full (key_path, wanted, -1,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0600, error))
    return NULL;

  return g_steal_pointer (&dir);
}

/* A profile file's name is one plain component of letters, digits, '.',
 * '-' and '_', not hidden, and not the key file. */
static gboolean
check_name (const char  *name,
            GError     **error)
{
  gboolean ok = name[0] != '\0' && name[0] != '.' &&
                strcmp (name, TALLY_DATABASE_PROFILE_KEY_FILE) != 0;

  for (const char *p = name; ok && *p != '\0'; p++)
    ok = g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '_';

  if (!ok)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                 "“%s” is not the name of a database profile file", name);
  return ok;
}

/**
 * tally_database_profile_read:
 * @dir: (type filename): a profile folder (tally_database_profile_dir())
 * @name: the file's name in it, such as %TALLY_DATABASE_PROFILE_NOTES
 * @error: return location for a #GError
 *
 * Reads one file of a database's profile. A missing file (or folder) is
 * not an error: the analyst has not written it yet.
 *
 * Returns: (transfer full) (nullable): the file's text, UTF-8; %NULL
 *   without an error when the file does not exist; %NULL with @error set
 *   when it cannot be read (%G_FILE_ERROR), is not valid UTF-8
 *   (%G_IO_ERROR_INVALID_DATA) or @name is not a profile file's name
 *   (%G_IO_ERROR_INVALID_ARGUMENT)
 */
char *
tally_database_profile_read (const char  *dir,
                             const char  *name,
                             GError     **error)
{
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize length = 0;

  g_return_val_if_fail (dir != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_name (name, error))
    return NULL;

  path = g_build_filename (dir, name, NULL);
  if (!g_file_get_contents (path, &contents, &length, &local_error))
    {
      if (!g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  if (!g_utf8_validate_len (contents, length, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s is not UTF-8 text", path);
      return NULL;
    }

  return g_steal_pointer (&contents);
}

/**
 * tally_database_profile_write:
 * @dir: (type filename): a profile folder, best from
 *   tally_database_profile_ensure_dir() so that it carries its key file
 * @name: the file's name in it, such as %TALLY_DATABASE_PROFILE_NOTES
 * @contents: the new text, UTF-8
 * @error: return location for a #GError
 *
 * Replaces one file of a database's profile atomically (a reader sees the
 * old text or the new, never a part): the text goes to a temporary file
 * that is renamed over the old one. The folder is made (mode 0700) when
 * missing; the file gets mode 0600. On failure the old file is unchanged.
 *
 * Returns: %TRUE when written; %FALSE with @error set when @contents is
 *   not UTF-8 or @name is not a profile file's name
 *   (%G_IO_ERROR_INVALID_DATA, %G_IO_ERROR_INVALID_ARGUMENT), or the
 *   folder or file cannot be written (%G_FILE_ERROR)
 */
gboolean
tally_database_profile_write (const char  *dir,
                              const char  *name,
                              const char  *contents,
                              GError     **error)
{
  g_autofree char *path = NULL;

  g_return_val_if_fail (dir != NULL, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_name (name, error))
    return FALSE;

  if (!g_utf8_validate (contents, -1, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "The new text of %s is not UTF-8", name);
      return FALSE;
    }

  if (!make_dir (dir, error))
    return FALSE;

  path = g_build_filename (dir, name, NULL);
  return g_file_set_contents_full (path, contents, -1,
                                   G_FILE_SET_CONTENTS_CONSISTENT, 0600, error);
}
