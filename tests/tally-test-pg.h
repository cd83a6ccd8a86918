/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* A throwaway PostgreSQL cluster for tests and benchmarks
 * (docs/postgresql.md, "Tests"): initdb and pg_ctl from the newest
 * /usr/lib/postgresql/N/bin, in a temporary folder, on a Unix socket in
 * that folder only, run as `nobody` when the test runs as root. The
 * Beanline sample is loaded into the database `beanline`. */

typedef struct _TallyTestPg TallyTestPg;

/* The read-only role's password, for the tests that check it is never
 * stored. */
#define TALLY_TEST_PG_PASSWORD "bean-secret-7f3c"

TallyTestPg *tally_test_pg_start             (char        **skip_reason,
                                              GError      **error);
const char  *tally_test_pg_get_socket_dir    (TallyTestPg  *self);
const char  *tally_test_pg_get_bindir        (TallyTestPg  *self);
char        *tally_test_pg_dup_conninfo      (TallyTestPg  *self,
                                              const char   *role);
gboolean     tally_test_pg_exec              (TallyTestPg  *self,
                                              const char   *sql,
                                              GError      **error);
void         tally_test_pg_stop              (TallyTestPg  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyTestPg, tally_test_pg_stop)

G_END_DECLS
