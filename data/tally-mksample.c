/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Build-time helper: runs a SQL script against a new SQLite file.
 *
 * Usage: tally-mksample SCRIPT.sql OUTPUT.db
 *
 * The output is written to a temporary name and renamed into place only when
 * the whole script succeeded, so a failed build never leaves a half-made
 * database behind for a later step to pick up.
 */

#include "config.h"

#include <glib.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

int
main (int    argc,
      char **argv)
{
  g_autofree char *script = NULL;
  g_autofree char *tmp_path = NULL;
  g_autoptr(GError) error = NULL;
  sqlite3 *db = NULL;
  char *errmsg = NULL;
  int rc;

  if (argc != 3)
    {
      g_printerr ("usage: %s SCRIPT.sql OUTPUT.db\n", argv[0]);
      return 2;
    }

  if (!g_file_get_contents (argv[1], &script, NULL, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }

  tmp_path = g_strdup_printf ("%s.tmp", argv[2]);
  g_unlink (tmp_path);

  rc = sqlite3_open (tmp_path, &db);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, script, NULL, NULL, &errmsg);
  if (rc != SQLITE_OK)
    {
      g_printerr ("%s: %s\n", argv[1], errmsg ? errmsg : sqlite3_errmsg (db));
      sqlite3_free (errmsg);
      sqlite3_close (db);
      g_unlink (tmp_path);
      return 1;
    }

  sqlite3_close (db);

  if (g_rename (tmp_path, argv[2]) != 0)
    {
      g_printerr ("cannot rename %s: %s\n", tmp_path, g_strerror (errno));
      return 1;
    }

  return 0;
}
