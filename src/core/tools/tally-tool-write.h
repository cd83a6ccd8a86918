/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_WRITE (tally_tool_write_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolWrite, tally_tool_write, TALLY, TOOL_WRITE, TallyTool)

TallyTool *tally_tool_write_new      (void);
char      *tally_tool_write_dup_diff (const TallyToolContext  *context,
                                      JsonObject              *input,
                                      GError                 **error);

G_END_DECLS
