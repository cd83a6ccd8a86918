/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <sqlite3.h>

#include "tally-store.h"

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

/* Shared by tally-store.c and tally-store-migrations.c */
void      tally_store_set_sqlite_error    (GError     **error,
                                           sqlite3     *db,
                                           int          rc,
                                           const char  *path,
                                           const char  *what);
gboolean  tally_store_exec                (sqlite3     *db,
                                           const char  *path,
                                           const char  *sql,
                                           GError     **error);
gboolean  tally_store_backup              (sqlite3     *db,
                                           const char  *path,
                                           int          from_version,
                                           char       **backup_path,
                                           GError     **error);
gboolean  tally_store_migrate             (sqlite3     *db,
                                           const char  *path,
                                           int          from_version,
                                           GError     **error);

gboolean  tally_store_fill_transcript     (sqlite3     *db,
                                           const char  *path,
                                           GError     **error);

/* Test hooks (tests/test-store.c); not for the application */
gboolean  tally_store_set_max_page_count_for_testing (TallyStore  *self,
                                                      gint64       max_pages,
                                                      gint64      *result,
                                                      GError     **error);

G_END_DECLS
