/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * TALLY_DATABASE_PROFILE_NOTES:
 *
 * The file of a database's profile folder that holds the analyst's notes
 * about it (Markdown, UTF-8), given to the model with the database's
 * description (docs/notes.md).
 */
#define TALLY_DATABASE_PROFILE_NOTES "notes.md"

/**
 * TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES:
 *
 * The longest notes, in bytes of UTF-8, that go to the model: 64 KiB,
 * about 16,000 tokens of every request's system prompt. Longer notes are
 * refused with an error rather than cut.
 */
#define TALLY_DATABASE_PROFILE_NOTES_MAX_BYTES (64 * 1024)

/**
 * TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS:
 *
 * The file of a database's profile folder that lists the columns whose
 * values are never sent to the API.
 */
#define TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS "sensitive-columns"

/**
 * TALLY_DATABASE_PROFILE_KEY_FILE:
 *
 * The file of a database's profile folder that holds the database's key,
 * so that a person looking at the folders can tell them apart. It is
 * written by tally_database_profile_ensure_dir() and cannot be written
 * with tally_database_profile_write().
 */
#define TALLY_DATABASE_PROFILE_KEY_FILE "database"

char     *tally_database_profile_dir        (const char  *store_dir,
                                             const char  *database_key);
char     *tally_database_profile_ensure_dir (const char  *store_dir,
                                             const char  *database_key,
                                             GError     **error);
char     *tally_database_profile_read       (const char  *dir,
                                             const char  *name,
                                             GError     **error);
gboolean  tally_database_profile_write      (const char  *dir,
                                             const char  *name,
                                             const char  *contents,
                                             GError     **error);

G_END_DECLS
