/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "tally-pg-source.h"
#include "tally-query-rows.h"
#include "tally-result-origin.h"

G_BEGIN_DECLS

char      *tally_pg_query_text          (const char    *conninfo,
                                         const char    *sql,
                                         guint          max_rows,
                                         guint          timeout_ms,
                                         GCancellable  *cancellable,
                                         GError       **error);
char      *tally_pg_query_text_full     (const char          *conninfo,
                                         const char          *sql,
                                         guint                max_rows,
                                         guint                timeout_ms,
                                         const char * const  *marked,
                                         GCancellable        *cancellable,
                                         TallyResultOrigin  **origin,
                                         GError             **error);
TallyQueryRows *tally_pg_query_fetch_rows (const char          *conninfo,
                                           const char          *sql,
                                           guint                max_rows,
                                           guint                timeout_ms,
                                           const char * const  *marked,
                                           GCancellable        *cancellable,
                                           GError             **error);
char      *tally_pg_describe_schema     (const char    *conninfo,
                                         const char    *table,
                                         GCancellable  *cancellable,
                                         GError       **error);
char      *tally_pg_dup_prompt_section  (const char    *conninfo);

G_END_DECLS
