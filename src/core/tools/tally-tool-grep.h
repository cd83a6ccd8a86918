/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

/**
 * TALLY_TOOL_GREP_DEFAULT_TIMEOUT:
 *
 * Seconds one `Grep` search may run unless tally_tool_grep_set_timeout_ms()
 * says otherwise, as long as a query may (%TALLY_TOOL_QUERY_DATABASE_DEFAULT_TIMEOUT).
 */
#define TALLY_TOOL_GREP_DEFAULT_TIMEOUT 30

#define TALLY_TYPE_TOOL_GREP (tally_tool_grep_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolGrep, tally_tool_grep, TALLY, TOOL_GREP, TallyTool)

TallyTool *tally_tool_grep_new            (void);
void       tally_tool_grep_set_timeout_ms (TallyToolGrep *self,
                                           guint          timeout_ms);

G_END_DECLS
