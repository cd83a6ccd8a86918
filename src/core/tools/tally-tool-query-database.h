/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

/**
 * TALLY_TOOL_QUERY_DATABASE_DEFAULT_ROWS:
 *
 * Rows `query_database` returns when the input has no `max_rows`.
 */
#define TALLY_TOOL_QUERY_DATABASE_DEFAULT_ROWS 200

/**
 * TALLY_TOOL_QUERY_DATABASE_MAX_ROWS:
 *
 * The hard cap on `max_rows`; larger requests are lowered to it.
 */
#define TALLY_TOOL_QUERY_DATABASE_MAX_ROWS 1000

/**
 * TALLY_TOOL_QUERY_DATABASE_MAX_BYTES:
 *
 * About how many bytes of table text one result may hold; rows past it
 * are counted but not shown.
 */
#define TALLY_TOOL_QUERY_DATABASE_MAX_BYTES (32 * 1024)

/**
 * TALLY_TOOL_QUERY_DATABASE_DEFAULT_TIMEOUT:
 *
 * Seconds one query may run unless tally_tool_query_database_set_timeout_ms()
 * says otherwise.
 */
#define TALLY_TOOL_QUERY_DATABASE_DEFAULT_TIMEOUT 30

#define TALLY_TYPE_TOOL_QUERY_DATABASE (tally_tool_query_database_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolQueryDatabase, tally_tool_query_database, TALLY, TOOL_QUERY_DATABASE, TallyTool)

TallyTool *tally_tool_query_database_new            (void);
void       tally_tool_query_database_set_timeout_ms (TallyToolQueryDatabase *self,
                                                     guint                   timeout_ms);
void       tally_tool_query_database_set_max_memory (TallyToolQueryDatabase *self,
                                                     gint64                  bytes);

G_END_DECLS
