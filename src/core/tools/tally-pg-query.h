/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "tally-pg-source.h"
#include "tally-query-rows.h"
#include "tally-result-origin.h"

G_BEGIN_DECLS

/**
 * TallyPgStatement:
 * @conninfo: the analyst's connection string
 * @sql: one read-only statement
 * @max_rows: the most rows to show or return
 * @timeout_ms: the statement's time limit in milliseconds (0: the
 *   source's default)
 * @marked: (array zero-terminated=1) (nullable): the sensitive columns,
 *   whose values (and those derived from them) come back as `[redacted]`
 *   (docs/ledger.md §2)
 *
 * One statement to run on PostgreSQL with its limits, as
 * tally_pg_query_text_full() and tally_pg_query_fetch_rows() take it. The
 * caller keeps the struct and its strings.
 */
typedef struct {
  const char         *conninfo;
  const char         *sql;
  guint               max_rows;
  guint               timeout_ms;
  const char * const *marked;
} TallyPgStatement;

char      *tally_pg_query_text          (const char    *conninfo,
                                         const char    *sql,
                                         guint          max_rows,
                                         guint          timeout_ms,
                                         GCancellable  *cancellable,
                                         GError       **error);
char      *tally_pg_query_text_full     (const TallyPgStatement *statement,
                                         GCancellable        *cancellable,
                                         TallyResultOrigin  **origin,
                                         GError             **error);
TallyQueryRows *tally_pg_query_fetch_rows (const TallyPgStatement *statement,
                                           GCancellable           *cancellable,
                                           GError                **error);
char      *tally_pg_describe_schema     (const char    *conninfo,
                                         const char    *table,
                                         GCancellable  *cancellable,
                                         GError       **error);
char      *tally_pg_dup_prompt_section  (const char    *conninfo);

G_END_DECLS
